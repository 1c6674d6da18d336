"""One conformance suite for every environment backend (local, and docker when the engine and images are
there): open, exec, read/write, restore, private files, spawn and window wait, screenshot, input, kill,
close. A new backend registers itself and must pass this file unchanged."""

import asyncio
from pathlib import Path

import pytest

from gateway.screen import Screen
from gateway.tools.computer import ComputerTool
from mcpworld import paths
from mcpworld.envs import BACKENDS, DOCKER, make_environment
from mcpworld.errors import EnvironmentSetupError

BACKEND_PARAMS = [pytest.param(b, marks=pytest.mark.docker) if b == DOCKER else b for b in BACKENDS]


@pytest.fixture(params=BACKEND_PARAMS)
async def env(request):
    e = make_environment(request.param)
    await e.open()
    yield e
    await e.close()


async def test_exec_runs_inside_as_the_environments_user(env):
    r = await env.exec(["sh", "-c", 'echo "$HOME"; echo "$DISPLAY"; exit 3'])
    assert r.returncode == 3 and not r.timed_out
    home, display = r.stdout.split()
    assert home == env.home and display == env.base_env()["DISPLAY"]
    slow = await env.exec(["sleep", "30"], timeout=1)
    assert slow.timed_out and slow.returncode is None


async def test_files_read_write_list_and_kinds(env):
    path = f"{env.home}/notes/a/b.txt"
    await env.write_text(path, "hello\nworld")
    assert await env.read_text(path) == "hello\nworld"
    assert await env.path_kind(path) == "file"
    assert await env.path_kind(f"{env.home}/notes") == "dir"
    assert await env.path_kind(f"{env.home}/nothing") is None
    await env.make_dir(f"{env.home}/empty/deeper")
    listed = await env.list_dir(f"{env.home}", depth=3)
    assert f"{env.home}/notes/a/b.txt" in listed and f"{env.home}/empty/deeper/" in listed
    with pytest.raises(OSError):
        await env.read_text(f"{env.home}/nothing")


async def test_restore_makes_an_exact_copy(env):
    source = paths.RUNTIME_DIR / "frida"  # a folder every backend can see
    target = f"{env.home}/restored"
    await env.write_text(f"{target}/stale.txt", "left over")
    await env.restore(source, target)
    listed = {Path(p).name for p in await env.list_dir(target)}
    assert listed == {f.name for f in source.iterdir()}, "restore must delete what the source does not have"
    assert await env.read_text(f"{target}/prelude.js") == (source / "prelude.js").read_text()
    with pytest.raises(EnvironmentSetupError):
        await env.restore(Path("/nonexistent/snapshot"), target)


async def test_private_files_are_for_their_reader_only(env):
    path = await env.write_private("secret.json", '{"token": "x"}')
    assert await env.read_text(path) == '{"token": "x"}'
    r = await env.exec(["stat", "-c", "%a", path])
    assert r.stdout.strip() == "600"
    assert not path.startswith(env.home), "run configs live outside the agent's home"


async def test_spawned_window_is_found_shot_driven_by_input_and_killed(env):
    watch = env.drawing()  # every backend's X server reports drawing (DAMAGE): waits need no capture polling
    assert watch is not None
    t0 = watch.mark()
    proc = await env.spawn(["xmessage", "-title", "Conformance", "-buttons", "okay:7", "-default", "okay",
                            "press return"], log_name="xmessage")
    await env.wait_window("^Conformance$", 20)
    await env.settle("^Conformance$", quiet=0.3, timeout=10)
    assert env.active_window_name() == "Conformance"
    assert watch.last_draw(t0) is not None  # its window's drawing was seen
    screen = Screen(env.display)
    try:
        assert (screen.width, screen.height) == (env.width, env.height)
        assert screen.png().startswith(b"\x89PNG")
    finally:
        screen.close()
    tool = ComputerTool(env.display)
    await tool.start()
    try:
        r = await tool.call("computer", {"action": "key", "text": "Return"})
        assert not r.is_error and r.meta["settled"] in ("quiet", "none")
    finally:
        await tool.close()
    assert await asyncio.wait_for(proc.wait(), 10) == 7  # the default button's exit code: the key arrived
    assert not env.alive(proc)
    sleeper = await env.spawn(["sh", "-c", "sleep 300 & sleep 300"])
    assert env.alive(sleeper)
    await env.kill_group(sleeper)
    assert not env.alive(sleeper)
    with pytest.raises(EnvironmentSetupError):
        await env.wait_window("^No such window$", 0.5)


async def test_settle_gives_the_focus_to_a_window_the_window_manager_left_without_it(env):
    """A window that is shown but not focused (here: another took the focus after it) gets it when the
    environment settles on it, as a person clicks a window before typing; keys then reach it."""
    first = await env.spawn(["xmessage", "-title", "First", "-buttons", "okay:7", "-default", "okay", "one"],
                            log_name="first")
    await env.wait_window("^First$", 20)
    await env.settle("^First$", quiet=0.3, timeout=10)
    second = await env.spawn(["xmessage", "-title", "Second", "two"], log_name="second")
    await env.wait_window("^Second$", 20)
    await env.settle("^Second$", quiet=0.3, timeout=10)
    assert env.active_window_name() == "Second"
    await env.settle("^First$", quiet=0.3, timeout=10)
    assert env.active_window_name() == "First"
    tool = ComputerTool(env.display)
    await tool.start()
    try:
        await tool.call("computer", {"action": "key", "text": "Return"})
    finally:
        await tool.close()
    assert await asyncio.wait_for(first.wait(), 10) == 7  # the key reached the first window
    await env.kill_group(second)


@pytest.mark.parametrize("backend", BACKEND_PARAMS)
async def test_close_ends_everything(backend):
    env = make_environment(backend)
    await env.open()
    proc = await env.spawn(["sleep", "300"])
    await env.close()
    with pytest.raises(EnvironmentSetupError):
        await env.spawn(["true"])
    if backend == DOCKER:
        from mcpworld.envs.docker import LABEL_ENV, wait_for_removals

        wait_for_removals()
        assert not env.client.containers.list(all=True, filters={"label": f"{LABEL_ENV}={env.id}"})
    else:
        assert not env.alive(proc) and not env.root.exists()


async def test_what_the_apps_leave_in_their_temporary_folder_goes_with_the_environment():
    """The app's processes get a TMPDIR inside the environment and its session bus listens there (the bus's
    default is a socket in /tmp per environment, left behind by a killed run); the agent keeps its own /tmp."""
    env = make_environment("local")
    await env.open()
    try:
        made = (await env.exec(["sh", "-c", "mktemp"])).stdout.strip()
        assert made.startswith(env.env_dir + "/"), made
        bus = env.base_env()["DBUS_SESSION_BUS_ADDRESS"]
        assert f"path={env.env_dir}/" in bus, bus
        code, out, _ = await env._run_as_agent(["sh", "-c", "mktemp"])
        assert code == 0 and out.decode().startswith("/tmp/") and env.env_dir not in out.decode()
    finally:
        await env.close()
    assert not Path(made).exists()
