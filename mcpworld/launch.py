"""The app's side of a trial: its files restored, its process launched, its readiness awaited, and the
tool providers (built-in tools and the app's MCP servers) that the gateway serves. Nothing here knows
which app it runs: everything comes from the app's config and the run's values."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path

from evaluator import events as ev
from evaluator.server import Evaluator
from gateway.base import ToolProvider
from gateway.mcp_provider import McpServerProvider
from gateway.tools.bash import BashTool
from gateway.tools.computer import ComputerTool
from gateway.tools.edit import EditTool
from mcpworld import paths
from mcpworld.config.app import AppConfig
from mcpworld.config.task import Task
from mcpworld.envs.base import AGENT_ENV, Environment
from mcpworld.errors import AppExitedEarly, EnvironmentSetupError, PrerequisiteError
from mcpworld.sources import EventSource
from mcpworld.values import RunValues

async def restore(app: AppConfig, task: Task, env: Environment, values: RunValues) -> None:
    """The task's snapshots, then the app's empty folders and rendered files (its per-run config)."""
    for cd in task.context_data:
        await env.restore(paths.SNAPSHOTS_DIR / cd.from_, values.expand(cd.to))
    for d in app.dirs:
        await env.make_dir(values.expand(d))
    for rf in app.rendered_files:
        text = values.expand(rf.text)
        if rf.through:
            text = await render_through([values.host_python().expand(a) for a in rf.through], text)
        await env.write_text(values.expand(rf.path), text)


async def render_through(argv: list[str], text: str) -> str:
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, cwd=str(paths.ROOT))
    out, err = await asyncio.wait_for(proc.communicate(text.encode()), 60)
    if proc.returncode != 0:
        raise EnvironmentSetupError(f"{' '.join(argv)} exited {proc.returncode} rendering a file: "
                                    f"{err.decode(errors='replace').strip()[-300:]}")
    return out.decode()


async def hand_over(app: AppConfig, env: Environment, values: RunValues) -> None:
    """Once every file is in place: HOME to the app's user, shared with the agent's; its private paths its alone."""
    await env.hand_over([values.expand(p) for p in app.private])


async def launch(app: AppConfig, env: Environment, values: RunValues, extra_env: dict[str, str]):
    """Start the app with its launch command; the process."""
    if app.launch is None:  # an app declared unavailable (its config has no launch)
        raise PrerequisiteError(f"{app.name} is unavailable: {app.unavailable_reason}")
    argv = [values.expand(a) for a in app.launch.command]
    launch_env = {k: values.expand(v) for k, v in app.launch.env.items()}
    etc = [(str(app.folder / f.from_), f.to) for f in app.install.system_files] if app.install else []
    if app.launch.shells_as_agent:
        launch_env.update(await start_shell_broker(env))
    if app.launch.confined_children_of:
        launch_env.update(await confined_children(app, env, values))
    return await env.spawn(argv, env={**launch_env, **extra_env}, log_name="app", etc=etc)


async def confined_children(app: AppConfig, env: Environment, values: RunValues) -> dict[str, str]:
    """The app's variables for the runtime's Node preload that starts each child of one of its processes
    (`[launch] confined_children_of`) confined by Landlock: HOME and /tmp less the app's private paths and the
    folder of the app user's runtime files (the relay's and the shell broker's sockets; the preload adds the
    process's own temporary folder), TCP left to it (a debuggee's inspector), and the runtime to read (a Node
    child gets the process's --require preloads)."""
    runtime = env.repo_path(paths.RUNTIME_DIR)
    hidden = [*(values.expand(p) for p in app.private), str(Path(await env.app_private_path("x")).parent)]
    prefix = [env.python, f"{runtime}/confine.py", "--tcp", "--read", runtime,
              "--write", values.expand("{home}"), "--write", "/tmp", *[a for p in hidden for a in ("--hide", p)]]
    return {"MCPWORLD_CONFINED_CHILDREN": json.dumps({"process": app.launch.confined_children_of, "prefix": prefix}),
            "MCPWORLD_NODE_CONFINED_CHILDREN": f"{runtime}/node_confined_children.js"}


async def start_shell_broker(env: Environment) -> dict[str, str]:
    """The runtime's shell broker (root) beside the app, and the app's variables for it: the argv its user puts
    before a shell to have the broker run it as the agent ($MCPWORLD_SHELL_CLIENT), and the runtime's preload
    that does so for node-pty's terminals ($MCPWORLD_NODE_PTY_SHELLS). The environment ends the broker."""
    socket_path = await env.app_private_path("shell-broker.sock")
    broker = await env.spawn_runtime("shell_broker", ["--socket", socket_path, "--sandbox",
                                                      json.dumps(env.agent_terminal_prefix())],
                                     env=AGENT_ENV, log_name="shell-broker", stdout=asyncio.subprocess.PIPE)
    line = await asyncio.wait_for(broker.stdout.readline(), 30)
    if line.strip() != b"listening":
        raise EnvironmentSetupError(f"the shell broker did not start (see its log): {line[:200]!r}")
    runtime = env.repo_path(paths.RUNTIME_DIR)
    return {"MCPWORLD_SHELL_CLIENT": json.dumps([env.python, f"{runtime}/shell_broker.py", "--connect",
                                                 "--socket", socket_path, "--"]),
            "MCPWORLD_NODE_PTY_SHELLS": f"{runtime}/node_pty_shells.js"}

class Readiness:
    """Waits until the app can take input: its window mapped, its port open, each event source ready (in
    order), its UI-ready event recorded, then its window focused and the screen still. Notes when each
    held, in seconds after launch (`phases`)."""

    def __init__(self, app: AppConfig, env: Environment, values: RunValues, evaluator: Evaluator,
                 sources: list[EventSource]):
        self.app, self.env, self.values, self.evaluator, self.sources = app, env, values, evaluator, sources
        self.phases: dict[str, float] = {}
        self._t0 = time.perf_counter()

    def _held(self, name: str) -> None:
        self.phases[name] = round(time.perf_counter() - self._t0, 4)

    async def wait(self, app_proc) -> None:
        """Ready, or AppExitedEarly (the app exited), or EnvironmentSetupError (the app's timeout passed)."""
        self._t0 = time.perf_counter()
        # watched from the launch on: the still-screen wait at the end then counts from the last drawing
        watch = self.env.drawing()
        with watch.waiting() if watch is not None else contextlib.nullcontext():
            await self._wait(app_proc)

    async def _wait(self, app_proc) -> None:
        ready = asyncio.ensure_future(self._conditions())
        died = asyncio.ensure_future(app_proc.wait())
        timeout = self.app.ready.timeout
        try:
            done, _ = await asyncio.wait({ready, died}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:  # on a timeout, and when the trial is stopped
            for f in (ready, died):
                if not f.done():
                    f.cancel()
        if ready in done:
            return ready.result()
        if died in done:
            raise AppExitedEarly(f"{self.app.name} exited with code {app_proc.returncode} before it was ready")
        held = ", ".join(self.phases) or "nothing"
        raise EnvironmentSetupError(f"{self.app.name} was not ready within {timeout:.0f}s (held: {held})"
                                    + self._errors_reported())

    async def _ready_event(self, name: str) -> None:
        """The app's ready event; or, at once, the error its probe reports when it could not start (an error
        "where": "start": its port taken, ...), rather than the whole timeout spent waiting."""
        waits = [asyncio.ensure_future(self.evaluator.wait_event(name)),
                 asyncio.ensure_future(self.evaluator.wait_event(ev.PROBE_ERROR, ev.Source.PROBE,
                                                                 where=lambda e: e.payload.get("where") == "start"))]
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        if waits[0] not in done:
            trace = _trace_of(waits[1].result().payload)
            raise EnvironmentSetupError(f"{self.app.name}'s probe could not start: {trace[-1] if trace else '?'}")

    def _errors_reported(self) -> str:
        """What the app's probe or hooks reported of their own errors while it started: most often why."""
        errors = [e for e in self.evaluator.log.events if e.name in (ev.PROBE_ERROR, ev.HOOK_ERROR)]
        if not errors:
            return ""
        last = errors[-1].payload
        trace = _trace_of(last)
        return (f"; its probe reported {len(errors)} error(s), the last at {last.get('where') or last.get('script')}: "
                f"{trace[-1] if trace else '?'}")

    async def _conditions(self) -> None:
        ready = self.app.ready
        await self.env.wait_window(ready.window_name, ready.timeout)
        self._held("window")
        if ready.port:
            await self.env.wait_port(self.values.port(ready.port), ready.timeout)
            self._held("port")
        for source in self.sources:
            await source.ready()
            self._held(source.key)
        if ready.event:
            await self._ready_event(ready.event)
            self._held("event")
        await self.env.settle(ready.window_name, ready.settle, timeout=10.0)
        self._held("settled")

def _trace_of(payload: dict) -> list[str]:
    """The lines of a probe's (trace) or JavaScript probe's (error) or Frida hook's (description) error."""
    return str(payload.get("trace") or payload.get("error") or payload.get("description") or "").strip().splitlines()


def tool_providers(app: AppConfig, env: Environment, values: RunValues,
                   log_dir: Path | None = None) -> list[ToolProvider]:
    """The computer, bash and edit tools, and one provider per MCP server of the app. The servers run on the
    host (the host's Python, the app's ports at env.app_host) and name paths as the app sees them; each
    one's stderr goes to log_dir/mcp-<server>.log."""
    providers: list[ToolProvider] = [ComputerTool(env.display, drawing=env.drawing), BashTool(env), EditTool(env)]
    host = values.host_python()
    base = {**env.host_env(), "PYTHONPATH": paths.python_path()}
    for name, srv in app.mcp_servers.items():
        cmd = [host.expand(a) for a in srv.command]
        server_env = {**base, **{k: host.expand(v) for k, v in srv.env.items()}}
        providers.append(McpServerProvider(name, cmd, server_env, cwd=str(paths.ROOT),
                                           log=log_dir / f"mcp-{name}.log" if log_dir else None))
    return providers
