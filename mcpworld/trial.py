"""One trial: environment up, snapshot restored, app ready, gateway, agent, state query, verdict, teardown.

Data flows one way: task config -> environment -> gateway/agent -> events -> evaluator -> result.
Whatever happens to the agent, the event sources' last word (the state query) and the verdict still
come, and every event already recorded stays in events.jsonl.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import shutil
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evaluator import events as ev
from evaluator.events import Source
from evaluator.server import Evaluator
from evaluator.verdict import Matcher
from gateway.modes import COMPUTER_TOOL, Mode
from gateway.net import free_port
from gateway.registry import CallLog, ToolFilter, ToolRegistry
from mcpworld import sources as event_sources
from mcpworld.agents.base import Agent, AgentContext, AgentError, StepCapReached
from mcpworld.config.load import ResolvedTask
from mcpworld.envs import LOCAL, EnvOptions, make_environment
from mcpworld.errors import AppExitedEarly, EnvironmentSetupError, MCPWorldError
from mcpworld.launch import Readiness, hand_over, launch, restore, tool_providers
from mcpworld.results import Failure, Timings, TrialResult
from mcpworld.rundir import TrialDir
from mcpworld.sources import SourceError, TrialContext
from mcpworld.values import RunValues
from probe_runtime.relay import RELAY_STREAM

# after the agent: wait for a pause this long in the event stream (at most QUIET_LIMIT) before the state query
QUIET_GAP, QUIET_LIMIT = 0.3, 3.0
AGENT_FAILURES = (Failure.AGENT_ERROR, Failure.EXEC_TIMEOUT, Failure.STEP_CAP)
# evidence of cheating: it names the trial's failure whatever else went wrong after the agent began
CHEATS = (Failure.SUSPECTED_FORGERY, Failure.IN_APP_CODE)
SETUP_EVENT_TIMEOUT = 30.0
TEARDOWN_STEP_LIMIT = 60.0  # each teardown step: a source, the tool providers, the environment


@dataclass
class TrialOptions:
    mode: Mode = Mode.HYBRID
    no_bash: bool = False
    tools: frozenset[str] | None = None
    count_api_in_gui: bool = False    # gui mode: count key steps done through the app's API (flagged) instead of not
    timeout: float | None = None      # overrides the task's
    max_steps: int | None = None
    backend: str = LOCAL
    desktop: str = "xfce"             # docker: the desktop image
    gpu: str = "auto"                 # docker: auto, none or nvidia
    app_build: Path | None = None     # a build folder (mcpworld apps build) in front of the packaged app
    view_file: Path | None = None     # where to note the live view's address (the run's view.json)
    on_view: Callable[[str], None] | None = None  # told the live view's address once the desktop is up

    def env_options(self) -> EnvOptions:
        return EnvOptions(desktop=self.desktop, gpu=self.gpu, app_build=self.app_build)


SETUP_ATTEMPTS = 2  # an app that crashes while starting (OBS, about once in 500 starts) gets one fresh start


async def run_trial(rt: ResolvedTask, agent: Agent, opts: TrialOptions, trial_dir: Path,
                    trial_no: int = 0) -> TrialResult:
    """A trial, started afresh (new run id, restore, launch) when the app crashed while starting, which
    is before the agent could act; the earlier attempt's records move to <trial>/setup-attempts/<n>/ and
    the result says how many starts it took."""
    trial_dir = Path(trial_dir)
    earlier: list[Path] = []
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        trial = Trial(rt, agent, opts, trial_dir, trial_no, setup_attempt=attempt)
        result = await trial.run()
        if not trial.app_exited_early or attempt == SETUP_ATTEMPTS:
            break
        kept = trial_dir.with_name(f".{trial_dir.name}.setup-{attempt}")
        shutil.rmtree(kept, ignore_errors=True)
        trial_dir.rename(kept)
        earlier.append(kept)
    if earlier:
        (trial_dir / "setup-attempts").mkdir(exist_ok=True)
    for n, kept in enumerate(earlier, 1):
        kept.rename(trial_dir / "setup-attempts" / str(n))
    return result


class Trial:
    def __init__(self, rt: ResolvedTask, agent: Agent, opts: TrialOptions, trial_dir: Path, trial_no: int = 0,
                 setup_attempt: int = 1):
        self.rt, self.agent, self.opts, self.trial_no, self.setup_attempt = rt, agent, opts, trial_no, setup_attempt
        self.app_exited_early = False  # the app crashed while starting: nothing of the agent's has happened
        self.dir = TrialDir(Path(trial_dir))
        self.run_id = uuid.uuid4().hex
        self.timings = Timings()
        self.failure: Failure | None = None
        self.failure_detail = ""
        self.app_proc = None
        self.env = None
        self.registry: ToolRegistry | None = None
        self._launching: asyncio.Task | None = None
        self.sources: list[event_sources.EventSource] = []
        self.ready = False
        self._tearing_down = False
        self._agent_from: int | None = None  # index of the first event that counts (once the agent may act)
        self._verdict = None
        self._agent_done: float | None = None  # wall-clock time the agent stopped
        self._oom_kills = oom_kills()  # the kernel's count of processes it killed for want of memory
        self._oom_killed = 0  # how many it killed while the trial ran (to the verdict; the teardown is not the trial)
        self.ctx = AgentContext(instruction=rt.instruction, mode=opts.mode, no_bash=opts.no_bash, tools=None, task=rt,
                                max_steps=opts.max_steps or rt.task.max_steps)

    def _build_folder(self) -> Path | None:
        """--app-build, or for a task whose hooks need internal functions, the newest source build."""
        from mcpworld import build

        app, task = self.rt.app, self.rt.task
        if self.opts.app_build is not None or task.app_build != "source":
            return self.opts.app_build
        found = build.newest(app.build.source) if app.build else None
        if found is None:
            raise EnvironmentSetupError(f"{self.rt.key} hooks {app.name}'s internal functions and needs its source "
                                        f"build: run `mcpworld apps build {app.id} --from-source` (or give --app-build)")
        return found

    @functools.cached_property
    def app_build(self) -> str | None:
        """Which build of the app ran: the source build's description, or the packaged version."""
        from mcpworld import build
        from mcpworld.install import app_version

        if self.opts.app_build:
            info = build.find(self.opts.app_build)
            return info.describe() if info else f"build folder {self.opts.app_build}"
        version = app_version(self.rt.app)
        return f"packaged {self.rt.app.install.package} {version}" if version else None

    def _fail(self, category: Failure, detail: str) -> None:
        if self.failure is None:
            self.failure, self.failure_detail = category, detail

    @contextmanager
    def _timed(self, field: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            setattr(self.timings, field, time.perf_counter() - t)

    # -- the trial -----------------------------------------------------------------
    async def run(self) -> TrialResult:
        """The pipeline; set-up problems and agent failures are recorded, never raised. A run stopped from
        outside (Ctrl-C, a caller's time limit) still tears the trial down and writes its result, then
        the cancellation goes on up."""
        self.dir.path.mkdir(parents=True, exist_ok=True)
        started, t0 = time.time(), time.perf_counter()
        self.evaluator = Evaluator(self.run_id, self.rt.app.id, self.dir.events)
        self.matcher = Matcher(self.rt, self.opts.mode, self.opts.count_api_in_gui)
        stopped = False
        try:
            await self._run()
        except asyncio.CancelledError:
            stopped = True
            self._fail(Failure.INTERRUPTED, "the run was stopped before the trial ended")
        except AppExitedEarly as e:
            self.app_exited_early = True
            self._fail(Failure.SETUP_ERROR, str(e))
        except MCPWorldError as e:
            self._fail(Failure.SETUP_ERROR, str(e))
        except Exception as e:
            self._fail(Failure.SETUP_ERROR, f"{type(e).__name__}: {e}")
        # the end runs in its own task, to completion, even when the run is stopped (again) meanwhile: a
        # teardown cut short leaves an app, a display and a container behind; each of its steps is bounded
        end = asyncio.create_task(self._end(started, t0, settle=not stopped), name=f"end of {self.dir.name}")
        while not end.done():
            try:
                await asyncio.shield(end)
            except asyncio.CancelledError:
                stopped = True
        result = end.result()
        if stopped:
            raise asyncio.CancelledError()
        return result

    async def _run(self) -> None:
        self.opts = dataclasses.replace(self.opts, app_build=self._build_folder())
        self.env = make_environment(self.opts.backend, self.rt.app, self.opts.env_options())
        await self.evaluator.start(self.env.evaluator_host)
        with self._timed("open_s"):
            await self.env.open()
        self._announce_view()
        with self._timed("reset_s"):
            launch_env = await self._reset()
        # the app launches while the MCP servers start: neither needs the other yet
        self._launching = asyncio.create_task(self._launch(launch_env))
        with self._timed("gateway_s"):
            try:
                await self._start_gateway()
            except Exception:
                self._raise_launch_crash()  # an MCP server may fail only because the app it talks to crashed
                raise
        await self._launching
        if self.registry.kind_of(COMPUTER_TOOL) is None:
            self.env.close_drawing()  # readiness is over and nothing else waits on drawing: no more wake-ups
        await self._setup()
        for source in self.sources:  # the state the agent starts from, recorded before anything counts
            await source.begin()
        # only what happens from here on counts: start-up and set-up milestones never reach a key step
        self._agent_from = len(self.evaluator.log.events)
        self.evaluator.subscribe(self.matcher.feed)
        with self._timed("agent_s"):
            await self._run_agent()

    async def _end(self, started: float, t0: float, settle: bool) -> TrialResult:
        await self._evaluate(settle)
        # the verdict is on disk before the (slower) teardown: a runner killed now loses nothing
        self.timings.total_s = time.perf_counter() - t0
        self._write_result(started)
        await self._teardown()
        self.timings.total_s = time.perf_counter() - t0
        return self._write_result(started)

    # -- set-up --------------------------------------------------------------------
    async def _reset(self) -> dict[str, str]:
        """Restore the app's files, then let each event source prepare; the launch's extra variables."""
        app, env = self.rt.app, self.env
        self.values = RunValues.draw(app, env, free_port)
        await restore(app, self.rt.task, env, self.values)
        self.source_ctx = TrialContext(app=app, task=self.rt.task, task_folder=self.rt.folder, env=env,
                                       evaluator=self.evaluator, values=self.values, run_id=self.run_id,
                                       app_alive=self._app_running, tearing_down=lambda: self._tearing_down)
        self.sources = event_sources.for_trial(self.source_ctx)
        launch_env: dict[str, str] = {}
        for source in self.sources:
            launch_env.update(await source.prepare())
        await hand_over(app, env, self.values)  # after the sources' files (the probe's) are in place too
        return launch_env

    async def _launch(self, launch_env: dict[str, str]) -> None:
        readiness = Readiness(self.rt.app, self.env, self.values, self.evaluator, self.sources)
        try:
            with self._timed("app_ready_s"):
                self.app_proc = await launch(self.rt.app, self.env, self.values, launch_env)
                for source in self.sources:
                    await source.launched(self.app_proc)
                await readiness.wait(self.app_proc)
        finally:
            self.timings.ready_phases = readiness.phases
        self.ready = True

    def _raise_launch_crash(self) -> None:
        launching = self._launching
        if launching is not None and launching.done() and not launching.cancelled():
            if isinstance(launching.exception(), AppExitedEarly):
                raise launching.exception() from None

    async def _start_gateway(self) -> None:
        opts = self.opts
        self.dir.logs.mkdir(parents=True, exist_ok=True)
        self.registry = ToolRegistry(tool_providers(self.rt.app, self.env, self.values, self.dir.logs),
                                     ToolFilter(opts.mode, opts.no_bash, opts.tools),
                                     CallLog(self.dir.tool_calls, self.dir.shots))
        await self.registry.start()

    async def _setup(self) -> None:
        """The task's set-up calls (a recording running, ...), off the agent's log; their events never count."""
        task = self.rt.task
        for i, step in enumerate(task.setup):
            result = await self.registry.call_unlisted(step.tool, self.values.expand_tree(step.args))
            if result.is_error:
                raise MCPWorldError(f"set-up step {i} ({step.tool}) failed: {result.summary()}")
        for name in task.setup_events:  # some of the set-up's milestones are asynchronous
            try:
                await asyncio.wait_for(self.evaluator.wait_event(name), SETUP_EVENT_TIMEOUT)
            except asyncio.TimeoutError:
                raise MCPWorldError(f"the set-up did not lead to '{name}' within {SETUP_EVENT_TIMEOUT:.0f}s") from None
        if task.setup:
            await self.evaluator.quiet(QUIET_GAP, QUIET_LIMIT)

    # -- the agent -----------------------------------------------------------------
    async def _run_agent(self) -> None:
        ctx = self.ctx
        ctx.tools, ctx.values, ctx.env, ctx.events = self.registry, self.values, self.env, self.evaluator
        # the tool list the agent was given: what a report shows and what mutants are derived from
        self.dir.tools.write_text(json.dumps([{"name": s.name, "kind": str(s.kind), "annotations": s.annotations,
                                               "input_schema": s.input_schema} for s in self.registry.specs()], indent=1))
        timeout = self.opts.timeout or self.rt.task.timeout
        try:
            await asyncio.wait_for(self.agent.run(ctx), timeout)
        except asyncio.TimeoutError:
            self._fail(Failure.EXEC_TIMEOUT, f"the agent did not finish within {timeout:.0f}s")
        except StepCapReached as e:
            self._fail(Failure.STEP_CAP, str(e))
        except AgentError as e:
            self._fail(Failure.AGENT_ERROR, str(e))
        except Exception as e:  # an agent bug is the agent's failure, recorded; the trial goes on to evaluate
            self._fail(Failure.AGENT_ERROR, f"{type(e).__name__}: {e}")
        finally:
            self._agent_done = time.time()

    def _app_running(self) -> bool:
        """The app we launched is up, or one the agent restarted has its probe connected (a probe relay's stream
        says nothing of the app: the relay stays connected whether or not the app is there)."""
        launched = self.app_proc is not None and self.env.alive(self.app_proc)
        return launched or any(not s.endswith(RELAY_STREAM) for s in self.evaluator.connected_streams)

    # -- the end -------------------------------------------------------------------
    async def _evaluate(self, settle: bool = True) -> None:
        """After the agent: the app's last milestones land, the sources collect (the final state), the screen
        is kept, and the verdict is decided once. A stopped run skips the waiting and the state query."""
        if self.ready and settle:
            if not self._app_running():
                code = self.app_proc.returncode
                if code == 0:  # a person's way to fail: it was quit (a signal or an error exit is a crash)
                    self._fail(Failure.APP_CLOSED, "the app exited normally during the trial: it was quit")
                else:
                    self._fail(Failure.APP_CRASH, f"the app exited with code {code} during the trial")
            await self.evaluator.quiet(QUIET_GAP, QUIET_LIMIT, since=self._agent_done)
            with self._timed("query_s"):
                for source in self.sources:
                    try:
                        await source.collect()
                    except SourceError as e:
                        self._fail(source.failure, str(e))
            await self._final_screenshot()
        self._oom_killed = oom_kills() - self._oom_kills
        events = self.evaluator.log.events
        counted = events[self._agent_from:] if self._agent_from is not None else []
        before = [e.payload for e in events[:self._agent_from or 0] if e.source == Source.QUERY]
        after = [e.payload for e in counted if e.source == Source.QUERY]
        # decided once, before teardown (a task check may read files the teardown deletes)
        self._verdict = self.matcher.verdict(counted, after[-1] if after else None, before[-1] if before else None)

    async def _teardown(self) -> None:
        """Every step bounded and on its own: a step that fails or hangs is recorded and the next one runs."""
        with self._timed("teardown_s"):
            self._tearing_down = True
            if self._launching is not None and not self._launching.done():
                self._launching.cancel()
                await self._bounded("launch", asyncio.wait({self._launching}), 10)
            if self._launching is not None and self._launching.done() and not self._launching.cancelled():
                self._launching.exception()  # retrieved: it was recorded, or a set-up error came first
            for source in self.sources:
                await self._bounded(f"source {source.key}", source.stop(), TEARDOWN_STEP_LIMIT)
            if self.registry:
                await self._bounded("tool providers", self.registry.close(), TEARDOWN_STEP_LIMIT)
            if self.env is not None:
                self._save_logs()
                await self._bounded("environment", self.env.close(), TEARDOWN_STEP_LIMIT)
            await asyncio.sleep(0)  # let the probe's disconnect be recorded
            await self.evaluator.stop()

    async def _bounded(self, step: str, aw, limit: float) -> None:
        try:
            await asyncio.wait_for(aw, limit)
        except asyncio.TimeoutError:
            self.evaluator.record_internal(Source.RUNNER, ev.SOURCE_ERROR,
                                           {"teardown": step, "error": f"did not end within {limit:.0f}s"})
        except Exception as e:
            self.evaluator.record_internal(Source.RUNNER, ev.SOURCE_ERROR, {"teardown": step, "error": repr(e)})

    def _announce_view(self) -> None:
        env = self.env
        if not env.view_url:
            return
        if self.opts.view_file:
            self.opts.view_file.write_text(json.dumps({"url": env.view_url, "env": env.id, "trial": self.dir.name,
                                                        "backend": self.opts.backend}))
        if self.opts.on_view:
            self.opts.on_view(env.view_url)

    async def _final_screenshot(self) -> None:
        try:
            from gateway.screen import Screen
            screen = Screen(self.env.display)
            try:
                self.dir.final_png.write_bytes(await asyncio.to_thread(screen.png))
            finally:
                screen.close()
        except Exception as e:  # a missing final screenshot must not cost the verdict
            self.dir.final_png.with_suffix(".png.error").write_text(repr(e))

    def _save_logs(self) -> None:
        logs = getattr(self.env, "logs_dir", None)
        if logs and Path(logs).is_dir():
            self.dir.logs.mkdir(exist_ok=True)
            for f in Path(logs).iterdir():
                try:
                    (self.dir.logs / f.name).write_bytes(f.read_bytes()[-200_000:])
                except OSError:
                    pass

    def _write_result(self, started: float) -> TrialResult:
        rt, verdict, log = self.rt, self._verdict, self.registry.log if self.registry else None
        forgeries = sum(1 for e in self.evaluator.log.events if e.name == ev.FORGERY)
        # Only the app's milestones and the final state decide; an agent that crashed or timed out
        # after doing the work still succeeds. A trial whose set-up failed, or that was stopped, never does.
        success = verdict.success and self.failure not in (Failure.SETUP_ERROR, Failure.INTERRUPTED)
        failure, detail = (None, self.failure_detail) if success else (self.failure, self.failure_detail)
        cheat = Failure.SUSPECTED_FORGERY if forgeries else Failure.IN_APP_CODE if verdict.in_app_code else None
        if not success and failure is None:
            failure = (cheat or (Failure.COLLATERAL if verdict.collateral
                                 else Failure.MODE_VIOLATION if verdict.mode_violation else Failure.EVALUATED_FAILED))
            detail = verdict.reason
        elif not success and cheat and failure not in (Failure.SETUP_ERROR, Failure.INTERRUPTED):
            # the agent cheated, then failed, ran out, or the app or a source failed after it: the cheat is what
            # the trial says (never a testbed failure that a rerun would give the agent another go at)
            failure, detail = cheat, f"{verdict.reason or cheat} (and then {self.failure}: {self.failure_detail})"
        killed = self._oom_killed
        if not success and killed > 0 and failure not in (Failure.INTERRUPTED, *CHEATS):
            # a machine out of memory fails whatever runs on it: this failure says nothing of the agent
            failure, detail = Failure.OUT_OF_MEMORY, (f"the kernel killed {killed} process(es) for want of memory "
                                                      f"while the trial ran (the trial's own failure: {failure}: {detail})")
        result = TrialResult(
            task=rt.key, template=rt.task.template, app=rt.app.id, mode=self.opts.mode, no_bash=self.opts.no_bash,
            agent=self.agent.name, app_build=self.app_build, isolation=self.env.isolation if self.env else None,
            trial=self.trial_no, run_id=self.run_id, difficulty=rt.task.difficulty,
            human_steps=rt.task.human_step_count, success=success, kscr=verdict.kscr, verdict=verdict,
            failure=failure, failure_detail=detail, forgeries=forgeries, setup_attempts=self.setup_attempt,
            steps=self.ctx.steps,
            agent_failure=self.failure if self.failure in AGENT_FAILURES else None,
            tool_calls=log.count if log else 0, tool_calls_by_kind=dict(log.by_kind) if log else {},
            tool_calls_by_tool=dict(log.by_tool) if log else {}, max_steps=self.ctx.max_steps,
            grouped_human_steps=rt.task.grouped_human_steps, usage=self.ctx.usage, timings=self.timings, started=started)
        self.dir.result.write_text(result.model_dump_json(indent=2))
        return result


def oom_kills() -> int:
    """How many processes the kernel has killed for want of memory since it started (a memory cgroup's limit
    included): /proc/vmstat's oom_kill; 0 where the kernel does not count them."""
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
