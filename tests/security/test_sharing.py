"""The legitimate paths stay open: the agent and the app share HOME (files either writes, the other can
read and change), while the app's private data stays the app's, on both backends."""

import asyncio
import os

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


async def test_the_agent_cannot_plant_what_the_app_reads_or_swap_its_folders(any_env):
    """The app opens links and files through handlers in ~/.config and ~/.local/share, and reads its private
    folder by path: the agent may read those roots but not write them, and may not rename the private folder
    (or a folder on the way to it) to put its own in its place. HOME itself stays shared for work files."""
    env = any_env
    home = env.home
    private = f"{home}/.local/share/theapp"
    await env.write_text(f"{private}/collection.db", "the app's\n")
    await env.write_text(f"{home}/.config/mimeapps.list", "[Default Applications]\n")
    await env.write_text(f"{home}/notes.txt", "a work file\n")
    await env.hand_over([private])
    attempts = {
        "handler": f"printf '[Desktop Entry]\\nExec=sh -c id\\n' > {home}/.local/share/applications/x.desktop",
        "apps_dir": f"mkdir -p {home}/.local/share/applications",
        "mimeapps": f"echo 'x-scheme-handler/https=x.desktop' >> {home}/.config/mimeapps.list",
        "autostart": f"mkdir {home}/.config/autostart",
        "rename_private": f"mv {private} {home}/.local/share/theapp.old",
        "rename_config": f"mv {home}/.config {home}/config.old",
        "rename_local": f"mv {home}/.local {home}/local.old",
    }
    for what, command in attempts.items():
        code, text = await output(env, ["sh", "-c", command], agent=True)
        assert code != 0, (what, text)
    code, text = await output(env, ["sh", "-c", f"cat {home}/.config/mimeapps.list; ls -a {home}/.local/share"], agent=True)
    assert code == 0 and "Default Applications" in text and "theapp" in text  # the agent still reads them
    # work files in HOME: the agent writes and removes its own, changes the app's
    code, text = await output(env, ["sh", "-c", f"echo mine > {home}/mine.txt && rm {home}/mine.txt && "
                                                f"echo more >> {home}/notes.txt && mkdir {home}/Work && rmdir {home}/Work"], agent=True)
    assert code == 0, text
    code, text = await output(env, ["cat", f"{private}/collection.db", f"{home}/notes.txt"])
    assert code == 0 and text == "the app's\na work file\nmore\n"


async def test_the_apps_etc_files_are_its_own_and_the_hosts_etc_is_untouched(env, tmp_path):
    """An app's `system_files` (VS Code's browser policy) are mounted for the app's processes alone on the
    local backend: there, read-only and root's; on the host, absent, so the machine's own browser keeps its
    settings."""
    policy = tmp_path / "policy.json"
    policy.write_text('{"DeveloperToolsAvailability": 2}\n')
    policy.chmod(0o644)
    tmp_path.chmod(0o755)
    target = "/etc/mcpworld-test-policy/managed/p.json"
    code, text = await output(env, ["sh", "-c", f"id -u; stat -c %U {target}; cat {target}; test -f /etc/passwd && "
                                    f"echo passwd; echo x > {target}"], etc=[(str(policy), target)])
    uid, owner, content, passwd, *error = text.splitlines()
    assert uid != "0" and owner == "root" and content == '{"DeveloperToolsAvailability": 2}'
    assert code != 0 and "Read-only" in " ".join(error), text
    assert passwd == "passwd", "the rest of /etc is the host's"
    assert not os.path.exists("/etc/mcpworld-test-policy"), "nothing is left in the host's /etc"
    _, others = await output(env, ["cat", target])  # the app's other processes: the host's /etc
    assert "No such file" in others


async def test_the_agent_uses_git_in_a_repository_of_the_apps_user(env):
    """HOME is shared, and its repositories are the app user's (a snapshot's, restored and handed over): the
    agent's git works in them (git would otherwise refuse a repository of another user). Locally: the bare
    desktop image has no git; in containers vscode/6's terminal commit (as the agent) proves it."""
    repo = f"{env.home}/project"
    code, text = await output(env, ["sh", "-c", f"mkdir -p {repo} && cd {repo} && git init -q && echo a > a.txt"])
    assert code == 0, text
    code, text = await output(env, ["sh", "-c", f"cd {repo} && git add a.txt && git -c user.name=a -c user.email=a@b "
                                    "commit -qm agent && git log --format=%s"], agent=True)
    assert code == 0 and text.strip() == "agent", text
