"""The legitimate paths stay open: the agent and the app share HOME (files either writes, the other can
read and change), while the app's private data stays the app's, on both backends."""

import asyncio

import pytest


async def output(env, argv, **kw) -> tuple[int, str]:
    proc = await env.spawn(argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, **kw)
    out, err = await proc.communicate()
    return proc.returncode, out.decode() + err.decode()


async def test_agent_and_app_share_home_but_not_the_apps_private_data(any_env):
    env = any_env
    home, private = env.home, f"{env.home}/.config/theapp"
    await env.write_text(f"{private}/settings.ini", "password=hunter2\n")
    await env.write_text(f"{home}/Documents/given.txt", "from the task\n")
    await env.hand_over([private])

    _, app_id = await output(env, ["id", "-u"])
    _, agent_id = await output(env, ["id", "-u"], agent=True)
    assert app_id.strip() != agent_id.strip() and "0" not in (app_id.strip(), agent_id.strip())

    files = env.agent_files
    assert await files.read_text(f"{home}/Documents/given.txt") == "from the task\n"
    await files.write_text(f"{home}/Documents/by_agent.txt", "agent\n")
    code, text = await output(env, ["sh", "-c", f"cat {home}/Documents/by_agent.txt && echo app >> {home}/Documents/by_agent.txt"])
    assert code == 0 and text == "agent\n"
    code, _ = await output(env, ["sh", "-c", f"echo app > {home}/Documents/by_app.txt"])
    assert code == 0
    assert await files.read_text(f"{home}/Documents/by_app.txt") == "app\n"
    await files.write_text(f"{home}/Documents/by_app.txt", "changed by the agent\n")

    with pytest.raises(OSError):
        await files.read_text(f"{private}/settings.ini")
    code, text = await output(env, ["sh", "-c", f"cat {private}/settings.ini; ls {private}"], agent=True)
    assert code != 0 and "hunter2" not in text and "Permission denied" in text
    code, text = await output(env, ["cat", f"{private}/settings.ini"])  # the app reads its own
    assert code == 0 and "hunter2" in text
