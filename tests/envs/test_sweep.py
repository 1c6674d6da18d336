"""A runner killed before its teardown leaves nothing running: the next environment to open kills what the
dead runner's app started in the background (an app's own process dies with the runner; its children may
not: code-server's servers outlive it) and deletes the folder."""

import asyncio
import os
import subprocess
import sys

import psutil
from pathlib import Path

from mcpworld.envs import LOCAL, make_environment
from mcpworld.envs.local import sweep_stale


async def test_a_dead_runners_background_processes_are_killed_and_its_folder_deleted(tmp_path):
    env = make_environment(LOCAL)
    await env.open()
    try:
        # the app starts a server in the background and goes on (the shape of code-server under its window)
        pid_file = Path(env.home) / "bg.pid"  # the app user writes there
        proc = await env.spawn(["sh", "-c", f"setsid sleep 300 & echo $! > {pid_file}; exec sleep 300"], log_name="app")
        for _ in range(100):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.05)
        background = psutil.Process(int(pid_file.read_text()))
        root = env._root
        # the runner dies: its own child goes (pdeathsig), the background server stays
        proc.kill()
        await proc.wait()
        assert background.is_running()
        dead = subprocess.Popen(["true"])
        dead.wait()
        (root / "runner.pid").write_text(str(dead.pid))
        assert root in sweep_stale()
        background.wait(5)
        assert not background.is_running() and not root.exists()
    finally:
        (env._root / "runner.pid").write_text(str(os.getpid())) if env._root.exists() else None
        await env.close()


def test_a_runners_x_cookie_goes_with_it_and_a_killed_runners_with_the_next():
    """The X cookie a runner writes in /tmp: removed as it exits; one a killed runner left, by the next runner."""
    code = ("from mcpworld.envs import users as u; import sys, os; p = u.runner_xauthority(u.users()); "
            "print(p, flush=True); os.kill(os.getpid(), 9) if sys.argv[1] == 'killed' else None")
    run = lambda how: subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True)  # noqa: E731
    left = Path(run("killed").stdout.strip())
    assert left.name.startswith("mcpworld-xauth-") and left.exists(), "a killed runner leaves its cookie"
    own = Path(run("exits").stdout.strip())
    assert not own.exists(), "an exiting runner removes its own"
    assert not left.exists(), "and the one a killed runner left"
