"""The versioned result of one trial (result.json); the run's summary.json is mcpworld.report.build.Report."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from evaluator.verdict import Verdict
from mcpworld.agents.base import Usage

RESULT_VERSION = 1



class Failure(StrEnum):
    """Why a trial failed, one category each (the report counts them per mode)."""

    SETUP_ERROR = "setup_error"              # the environment, the app or the set-up never got ready
    APP_CRASH = "app_crash"                  # the app died during the trial (a signal, an error exit)
    APP_CLOSED = "app_closed"                # the app exited normally during the trial: someone quit it
    PROBE_ERROR = "probe_error"              # an event source (probe, hook, state query) failed
    AGENT_ERROR = "agent_error"              # the agent itself failed
    EXEC_TIMEOUT = "exec_timeout"            # the agent ran out of time
    STEP_CAP = "step_cap"                    # the agent ran out of steps
    EVALUATED_FAILED = "evaluated_failed"    # everything ran; the verdict is no
    COLLATERAL = "collateral"                # ... because the agent changed what the task did not ask for
    MODE_VIOLATION = "mode_violation"        # ... because in gui mode a key step was done through the app's API
    IN_APP_CODE = "in_app_code"              # ... because the agent entered code into the app (a console, a script)
    SUSPECTED_FORGERY = "suspected_forgery"  # ... and someone sent unauthenticated events
    INTERRUPTED = "interrupted"              # the run was stopped (Ctrl-C, a time limit) before the trial ended
    OUT_OF_MEMORY = "out_of_memory"          # the kernel killed a process for want of memory while the trial ran


# a trial that failed only because its verdict said so: the run itself worked (null-agent and bench runs)
VERDICT_FAILURES = (Failure.EVALUATED_FAILED, Failure.COLLATERAL, Failure.MODE_VIOLATION, Failure.IN_APP_CODE)
RAN = (None, *VERDICT_FAILURES)
# the testbed's own failures, not the agent's: the report keeps them out of SR, KSCR and WES and lists them
# apart, and `mcpworld run --resume RUN --rerun-testbed` runs them again. A closed app is the agent's (a
# person quit it); evidence of cheating (in-app code, forged events) outranks any of these (mcpworld.trial).
TESTBED_FAILURES = (Failure.SETUP_ERROR, Failure.APP_CRASH, Failure.PROBE_ERROR, Failure.OUT_OF_MEMORY)


def failed_on_testbed(result: TrialResult) -> bool:
    """The trial failed on the testbed's side: it says nothing of the agent."""
    return not result.success and result.failure in TESTBED_FAILURES


class Timings(BaseModel):
    open_s: float = 0.0        # the environment up: display and window manager (a container, for docker)
    reset_s: float = 0.0       # snapshot restore and the app's files
    app_ready_s: float = 0.0   # launch to window mapped and probe connected
    # seconds from launch at which each readiness condition held, in order (window, port, frida, probe,
    # event, settled): where a slow start goes
    ready_phases: dict[str, float] = {}
    gateway_s: float = 0.0     # tool providers started (MCP servers connected)
    agent_s: float = 0.0
    query_s: float = 0.0
    teardown_s: float = 0.0
    total_s: float = 0.0


class TrialResult(BaseModel):
    v: int = RESULT_VERSION
    task: str
    template: int
    app: str
    mode: str
    no_bash: bool = False
    agent: str
    app_build: str | None = None  # what ran: "packaged <package> <version>", or the source build's id
    isolation: str | None = None  # how the agent was kept from the app and the records (users+sandbox, users, none)
    trial: int
    run_id: str
    difficulty: str
    human_steps: int | None
    grouped_human_steps: int | None = None
    success: bool
    kscr: float
    verdict: Verdict | None = None
    failure: Failure | None = None
    failure_detail: str = ""
    # what went wrong with the agent itself (an error, a timeout), kept even when the verdict passed because
    # the work was done: an oracle must have none
    agent_failure: Failure | None = None
    forgeries: int = 0
    # 2 when the app crashed while starting and the trial was started afresh (the first kept in setup-attempts/)
    setup_attempts: int = 1
    steps: int = 0
    max_steps: int | None = None  # the step cap in effect
    tool_calls: int = 0
    tool_calls_by_kind: dict[str, int] = Field(default_factory=dict)
    tool_calls_by_tool: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    timings: Timings = Field(default_factory=Timings)
    started: float = 0.0
