"""One trial: environment up, snapshot restored, app ready, gateway, agent, state query, verdict, teardown.

Data flows one way: task config -> environment -> gateway/agent -> events -> evaluator -> result.
Whatever happens to the agent, the state query and the verdict still run, and every event
already recorded stays in events.jsonl.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import secrets
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evaluator import events as ev
from evaluator.fswatch import FileWatcher, Watch
from evaluator.server import Evaluator
from evaluator.verdict import Matcher
from gateway.base import ToolProvider
from gateway.mcp_provider import McpServerProvider
from gateway.net import free_port
from gateway.registry import CallLog, ToolFilter, ToolRegistry
from gateway.tools.bash import BashTool
from gateway.tools.computer import ComputerTool
from gateway.tools.edit import EditTool
from mcpworld import paths
from mcpworld.agents.base import Agent, AgentContext, AgentError, StepCapReached
from mcpworld.config.load import ResolvedTask
from mcpworld.config.templating import expand, expand_tree
from mcpworld.envs.base import Environment
from mcpworld.envs.local import LocalEnvironment
from mcpworld.errors import MCPWorldError
from mcpworld.results import Timings, TrialResult

PROBE_CONFIG_ENV = "MCPWORLD_PROBE_CONFIG"
FRIDA_FAILURES = (ev.HOOK_ERROR, ev.HOOK_MISSING)
# after the agent: wait for a pause this long in the event stream (at most QUIET_LIMIT) before the state query
QUIET_GAP, QUIET_LIMIT = 0.3, 3.0


@dataclass
class TrialOptions:
    mode: str = "hybrid"
    no_bash: bool = False
    tools: frozenset[str] | None = None
    timeout: float | None = None      # overrides the task's
    max_steps: int | None = None
    backend: str = "local"
    desktop: str = "xfce"             # docker: the desktop image
    gpu: str = "auto"                 # docker: auto, none or nvidia
    app_build: Path | None = None     # docker: a host folder with the app's build, mounted read-only
    view_file: Path | None = None     # where to note the live view's address (the run's view.json)
    on_view: Callable[[str], None] | None = None  # told the live view's address once the desktop is up


@dataclass
class QueryContext:
    """What an app's state query gets: where things are, and whether the app is still up."""

    values: dict[str, str]
    app_alive: bool
    timeout: float


def _load_query(rt: ResolvedTask):
    sq = rt.app.state_query
    path = rt.app.folder / sq.module
    spec = importlib.util.spec_from_file_location(f"mcpworld_app_query_{rt.app.id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.query


def make_environment(opts: TrialOptions, app_id: str) -> Environment:
    if opts.backend == "local":
        return LocalEnvironment()
    if opts.backend == "docker":
        from mcpworld.envs.docker import DockerEnvironment
        return DockerEnvironment(app_id, desktop=opts.desktop, gpu=opts.gpu, app_build=opts.app_build)
    raise MCPWorldError(f"unknown backend '{opts.backend}' (known: local, docker)")


class Trial:
    def __init__(self, rt: ResolvedTask, agent: Agent, opts: TrialOptions, trial_dir: Path, trial_no: int = 0):
        self.rt, self.agent, self.opts, self.dir, self.trial_no = rt, agent, opts, trial_dir, trial_no
        self.run_id = uuid.uuid4().hex
        self.timings = Timings()
        self._launched_at = 0.0
        self.failure: str | None = None
        self.failure_detail = ""
        self.app_proc = None
        self.values: dict[str, str] = {}
        self._probe_config_path: str | None = None
        self._tearing_down = False
        self.frida_proc = None
        self._verdict = None

    def _fail(self, category: str, detail: str) -> None:
        if self.failure is None:
            self.failure, self.failure_detail = category, detail

    # -- set-up --------------------------------------------------------------------
    async def _reset(self, env: Environment, evaluator: Evaluator) -> None:
        app = self.rt.app
        ports = {name: free_port() for name in app.ports}
        self.values = {"home": env.home, "env_dir": env.env_dir, "root": str(paths.ROOT), "python": env.python,
                       "bindir": os.path.dirname(env.python), "app_host": env.app_host,
                       **{f"port_{k}": str(v) for k, v in ports.items()},
                       **{f"secret_{k}": secrets.token_urlsafe(18) for k in app.secrets}}
        self.values.update({k: expand(v, self.values) for k, v in app.paths.items()})
        for cd in self.rt.task.context_data:
            await env.restore(paths.SNAPSHOTS_DIR / cd.from_, expand(cd.to, self.values))
        for pf in app.probe_files:
            await env.restore(paths.ROOT / pf.from_, expand(pf.to, self.values))
        for d in app.dirs:
            await env.make_dir(expand(d, self.values))
        for rf in app.rendered_files:
            await env.write_text(expand(rf.path, self.values), expand(rf.text, self.values))
        self._probe_config = {"url": evaluator.url, "token": evaluator.token, "run_id": self.run_id, "app": app.id,
                              "ports": ports, "bind_host": env.bind_host}
        if app.ready.probe:  # the in-app probe reads (and deletes) this file at start-up
            self._probe_config_path = await env.write_private("probe-run.json", json.dumps(self._probe_config))

    async def _launch(self, env: Environment, evaluator: Evaluator) -> None:
        app = self.rt.app
        argv = [expand(a, self.values) for a in app.launch.command]
        launch_env = {k: expand(v, self.values) for k, v in app.launch.env.items()}
        if self._probe_config_path:
            launch_env[PROBE_CONFIG_ENV] = self._probe_config_path
        self.app_proc = await env.spawn(argv, env=launch_env, log_name="app")
        if app.frida:
            await self._start_frida(env)
        ready = asyncio.ensure_future(self._ready(env, evaluator))
        died = asyncio.ensure_future(self.app_proc.wait())
        done, _ = await asyncio.wait({ready, died}, timeout=app.ready.timeout, return_when=asyncio.FIRST_COMPLETED)
        for f in (ready, died):
            if f not in done:
                f.cancel()
        if ready in done:
            ready.result()
        elif died in done:
            raise MCPWorldError(f"{app.name} exited with code {self.app_proc.returncode} before it was ready")
        else:
            what = "no window" if not evaluator.probe_connected.is_set() else "probe connected, but no window"
            raise MCPWorldError(f"{app.name} was not ready within {app.ready.timeout:.0f}s ({what})")
        if self._probe_config_path and await env.path_kind(self._probe_config_path) is not None:
            # the probe must have consumed (read and deleted) the secret before the agent starts
            raise MCPWorldError("the probe connected but did not delete its run config")

    async def _timed_launch(self, env: Environment, evaluator: Evaluator) -> None:
        self._launched_at = t = time.perf_counter()
        await self._launch(env, evaluator)
        self.timings.app_ready_s = time.perf_counter() - t

    def _phase(self, name: str) -> None:
        self.timings.ready_phases[name] = round(time.perf_counter() - self._launched_at, 4)

    async def _ready(self, env: Environment, evaluator: Evaluator) -> None:
        ready = self.rt.app.ready
        await env.wait_window(ready.window_name, ready.timeout)
        self._phase("window")
        if ready.port:
            await env.wait_port(int(self.values[f"port_{ready.port}"]), ready.timeout)
            self._phase("port")
        if self.rt.app.frida:
            await self._attach_frida(evaluator)
            self._phase("frida")
        if ready.probe:
            await evaluator.probe_connected.wait()
            self._phase("probe")
        if ready.event:
            await evaluator.wait_event(ready.event)
            self._phase("event")
        await env.settle(ready.window_name, ready.settle, timeout=10.0)
        self._phase("settled")

    async def _start_frida(self, env: Environment) -> None:
        """Start the Frida bridge next to the app as it launches; it attaches when told (_attach_frida)."""
        frida = self.rt.app.frida
        config = await env.write_private("frida-run.json", json.dumps(self._probe_config), privileged=True)
        scripts = [f"{env.src_root}/{s}" for s in frida.scripts]
        scripts += [await env.provide(self.rt.folder / s) for s in self.rt.task.frida_scripts]
        argv = [env.python, "-m", "hooks.frida_bridge", "--pid", str(self.app_proc.pid), "--attach-on-stdin"]
        for script in scripts:
            argv += ["--script", script]
        self.frida_proc = await env.spawn(argv, env={PROBE_CONFIG_ENV: config, "PYTHONPATH": env.src_root},
                                          cwd=env.src_root, log_name="frida", privileged=True,
                                          stdin=asyncio.subprocess.PIPE)

    async def _attach_frida(self, evaluator: Evaluator) -> None:
        """Attach the started bridge (the app has loaded what the hooks need); ready once every hook script
        is loaded without error."""
        self.frida_proc.stdin.write(b"attach\n")
        await self.frida_proc.stdin.drain()
        attached = asyncio.ensure_future(evaluator.wait_event(ev.FRIDA_ATTACHED, source="frida"))
        exited = asyncio.ensure_future(self.frida_proc.wait())
        done, _ = await asyncio.wait({attached, exited}, return_when=asyncio.FIRST_COMPLETED)
        for f in (attached, exited):
            f.cancel()
        problems = [e for e in evaluator.log.events if e.source == "frida" and e.name in FRIDA_FAILURES]
        if problems:
            raise MCPWorldError("Frida hooks failed: " + "; ".join(
                f"{e.name} {e.payload.get('script') or ''} {e.payload.get('description') or e.payload.get('function')}"
                for e in problems))
        if attached not in done:
            raise MCPWorldError(f"the Frida bridge exited with code {self.frida_proc.returncode} before attaching")

    async def _setup(self, registry: ToolRegistry) -> None:
        for i, step in enumerate(self.rt.task.setup):
            result = await registry.call_unlisted(step.tool, expand_tree(step.args, self.values))
            if result.is_error:
                raise MCPWorldError(f"set-up step {i} ({step.tool}) failed: {result.summary()}")
        # the set-up's own milestones (some asynchronous) land before counting starts
        for name in self.rt.task.setup_events:
            try:
                await asyncio.wait_for(self.evaluator.wait_event(name), 30)
            except asyncio.TimeoutError:
                raise MCPWorldError(f"the set-up did not lead to '{name}' within 30s") from None
        if self.rt.task.setup:
            await self.evaluator.quiet(QUIET_GAP, QUIET_LIMIT)

    def _providers(self, env: Environment) -> list[ToolProvider]:
        providers: list[ToolProvider] = [ComputerTool(env.display), BashTool(env), EditTool(env)]
        base = env.host_env()
        # MCP servers run on the host, with the host's Python, against the app's ports at env.app_host
        values = {**self.values, "python": sys.executable, "bindir": os.path.dirname(sys.executable)}
        for name, srv in self.rt.app.mcp_servers.items():
            cmd = [expand(a, values) for a in srv.command]
            server_env = {**base, "PYTHONPATH": str(paths.ROOT), **{k: expand(v, values) for k, v in srv.env.items()}}
            providers.append(McpServerProvider(name, cmd, server_env, cwd=str(paths.ROOT)))
        return providers

    # -- the trial -----------------------------------------------------------------
    async def run(self) -> TrialResult:
        rt, opts = self.rt, self.opts
        self.dir.mkdir(parents=True, exist_ok=True)
        t_start = time.perf_counter()
        started = time.time()
        evaluator = self.evaluator = Evaluator(self.run_id, rt.app.id, self.dir / "events.jsonl")
        matcher = Matcher(rt)
        self._agent_from = None  # index of the first event that counts (recorded once the agent may act)
        env = self.env = make_environment(opts, rt.app.id)
        await evaluator.start(env.evaluator_host)
        watcher = None
        registry = None
        ctx = AgentContext(instruction=rt.instruction, mode=opts.mode, no_bash=opts.no_bash, tools=None, task=rt,
                           max_steps=opts.max_steps or rt.task.max_steps, env=env)
        state = None
        ready = False
        try:
            t = time.perf_counter()
            await env.open()
            self.timings.open_s = time.perf_counter() - t
            self._announce_view(env)
            t = time.perf_counter()
            await self._reset(env, evaluator)
            self.timings.reset_s = time.perf_counter() - t
            if rt.task.file_milestones:
                loop = asyncio.get_running_loop()
                watcher = FileWatcher(
                    [Watch(fm.event, env.host_path(expand(fm.path, self.values)), tuple(fm.kinds))
                     for fm in rt.task.file_milestones],
                    lambda name, payload: loop.call_soon_threadsafe(evaluator.record_internal, "fs", name, payload))
                watcher.start()
            # The app launches while the tool providers (MCP servers) start: neither needs the other yet.
            launch = asyncio.create_task(self._timed_launch(env, evaluator))
            t = time.perf_counter()
            registry = ToolRegistry(self._providers(env), ToolFilter(opts.mode, opts.no_bash, opts.tools),
                                    CallLog(self.dir / "tool_calls.jsonl", self.dir / "shots"))
            try:
                await registry.start()  # in this task: MCP clients must close in the task that opened them
            except BaseException:
                launch.cancel()
                raise
            self.timings.gateway_s = time.perf_counter() - t
            await launch
            ready = True
            await self._setup(registry)
            # only what happens from here on counts: start-up and set-up milestones never reach a key step
            self._agent_from = len(evaluator.log.events)
            evaluator.subscribe(matcher.feed)
            # an app the agent restarts gets the run config again, so its probe can authenticate
            evaluator.subscribe(self._rearm_on_disconnect)
            ctx.tools = registry
            ctx.values = dict(self.values)
            (self.dir / "tools.json").write_text(json.dumps([s.name for s in registry.specs()], indent=1))
            t = time.perf_counter()
            timeout = opts.timeout or rt.task.timeout
            try:
                await asyncio.wait_for(self.agent.run(ctx), timeout)
            except asyncio.TimeoutError:
                self._fail("exec_timeout", f"the agent did not finish within {timeout:.0f}s")
            except StepCapReached as e:
                self._fail("step_cap", str(e))
            except AgentError as e:
                self._fail("agent_error", str(e))
            except Exception as e:  # an agent bug is the agent's failure, recorded; the trial goes on to evaluate
                self._fail("agent_error", f"{type(e).__name__}: {e}")
            self.timings.agent_s = time.perf_counter() - t
        except MCPWorldError as e:
            self._fail("setup_error", str(e))
        except Exception as e:
            self._fail("setup_error", f"{type(e).__name__}: {e}")
        finally:
            if ready and not self._app_running(env) and self.failure is None:
                self._fail("app_crash", f"the app exited with code {self.app_proc.returncode} during the trial")
            if ready:
                await evaluator.quiet(QUIET_GAP, QUIET_LIMIT)
            if ready and rt.app.state_query and rt.task.state_query:
                t = time.perf_counter()
                state = await self._query_state(env, evaluator)
                self.timings.query_s = time.perf_counter() - t
            if ready:
                await self._final_screenshot(env)
            # The verdict is on disk before the (slower) teardown: a runner killed now loses nothing.
            self.timings.total_s = time.perf_counter() - t_start
            self._result(evaluator, matcher, state, ctx, registry, started)
            t = time.perf_counter()
            if watcher:
                watcher.stop()
            if registry:
                try:
                    await registry.close()
                except Exception as e:
                    evaluator.record_internal("runner", ev.SOURCE_ERROR, {"error": str(e)})
            self._save_logs(env)
            self._tearing_down = True
            await env.close()
            await asyncio.sleep(0)  # let the probe's disconnect be recorded
            await evaluator.stop()
            self.timings.teardown_s = time.perf_counter() - t
        self.timings.total_s = time.perf_counter() - t_start
        return self._result(evaluator, matcher, state, ctx, registry, started)

    def _announce_view(self, env: Environment) -> None:
        if not env.view_url:
            return
        if self.opts.view_file:
            self.opts.view_file.write_text(json.dumps({"url": env.view_url, "env": env.id, "trial": self.dir.name,
                                                        "backend": self.opts.backend}))
        if self.opts.on_view:
            self.opts.on_view(env.view_url)

    def _app_running(self, env: Environment) -> bool:
        """The app we launched is up, or one the agent restarted has its probe connected."""
        launched = self.app_proc is not None and env.alive(self.app_proc)
        return launched or bool(self.evaluator.connected_streams)

    def _rearm_on_disconnect(self, event) -> None:
        if event.source == "runner" and event.name == ev.PROBE_DISCONNECTED and self._probe_config_path:
            if not self._tearing_down:
                self._rearm = asyncio.ensure_future(self.env.write_private("probe-run.json", json.dumps(self._probe_config)))

    async def _query_state(self, env: Environment, evaluator: Evaluator) -> dict | None:
        sq = self.rt.app.state_query
        alive = self._app_running(env)
        try:
            query = _load_query(self.rt)
            # the query runs on the host: paths as the host sees them
            values = {k: env.host_path(v) for k, v in self.values.items()}
            payload = await asyncio.wait_for(asyncio.to_thread(query, QueryContext(values, alive, sq.timeout)),
                                             sq.timeout + 5)
        except Exception as e:
            evaluator.record_internal("runner", ev.SOURCE_ERROR, {"source": "query", "error": f"{type(e).__name__}: {e}"})
            self._fail("probe_error", f"state query failed: {type(e).__name__}: {e}")
            return None
        evaluator.record_internal("query", sq.event, payload)
        return payload

    async def _final_screenshot(self, env) -> None:
        try:
            from gateway.screen import Screen
            screen = Screen(env.display)
            try:
                (self.dir / "final.png").write_bytes(await asyncio.to_thread(screen.png))
            finally:
                screen.close()
        except Exception as e:  # a missing final screenshot must not cost the verdict
            (self.dir / "final.png.error").write_text(repr(e))

    def _save_logs(self, env: Environment) -> None:
        logs = getattr(env, "logs_dir", None)
        if logs and Path(logs).is_dir():
            dest = self.dir / "logs"
            dest.mkdir(exist_ok=True)
            for f in Path(logs).iterdir():
                try:
                    data = f.read_bytes()
                    (dest / f.name).write_bytes(data[-200_000:])
                except OSError:
                    pass

    def _result(self, evaluator, matcher, state, ctx, registry, started) -> TrialResult:
        rt = self.rt
        events = evaluator.log.events
        # decided once, before teardown (a task check may read files the teardown deletes)
        if self._verdict is None:
            self._verdict = matcher.verdict(events[self._agent_from:] if self._agent_from is not None else [], state)
        verdict = self._verdict
        forgeries = sum(1 for e in events if e.name == ev.FORGERY)
        # Only the app's milestones and the final state decide; an agent that crashed or timed out
        # after doing the work still succeeds. A trial whose set-up failed never does.
        success = verdict.success and self.failure != "setup_error"
        failure = None if success else self.failure
        if not success and failure is None:
            failure = "suspected_forgery" if forgeries else "evaluated_failed"
            self.failure_detail = verdict.reason
        log = registry.log if registry else None
        result = TrialResult(
            task=rt.key, template=rt.task.template, app=rt.app.id, mode=self.opts.mode, no_bash=self.opts.no_bash,
            agent=self.agent.name, trial=self.trial_no, run_id=self.run_id, difficulty=rt.task.difficulty,
            human_steps=rt.task.human_step_count, success=success, kscr=verdict.kscr, verdict=verdict,
            failure=failure, failure_detail=self.failure_detail, forgeries=forgeries, steps=ctx.steps,
            tool_calls=log.count if log else 0, tool_calls_by_kind=dict(log.by_kind) if log else {},
            tool_calls_by_tool=dict(log.by_tool) if log else {}, max_steps=ctx.max_steps,
            grouped_human_steps=rt.task.grouped_human_steps, usage=ctx.usage, timings=self.timings, started=started)
        (self.dir / "result.json").write_text(result.model_dump_json(indent=2))
        return result
