"""Trials on a Ray cluster (`mcpworld run --executor ray [--ray-address ADDR]`).

Each trial is one Ray task. It asks for one of a node's environment slots and for the app it needs (and
Docker, on the docker backend): resources each node declares when it joins (`mcpworld ray resources`
prints them for `ray start --resources`), so a trial only lands on a node that can run it. On the node
the trial runs as it does locally, into a temporary folder; the node sends the result and that folder
(packed) back, and the driver unpacks it into the run directory and appends the result line. The run
directory therefore lives on the driver alone and the nodes need no shared storage: a trial folder is a
few hundred kB (small JPEG screenshots), and a node that dies takes nothing of the run with it.

A node that dies during a trial: Ray runs the task again elsewhere (RETRIES times), and since only the
driver records, and only when a task's result arrives, each trial is recorded once. A trial that could
not run at all is not recorded; `mcpworld run --resume` runs it later.
"""

from __future__ import annotations

import asyncio
import io
import logging
import tarfile
import tempfile
import time
from pathlib import Path

from mcpworld.config.load import ResolvedTask
from mcpworld.errors import MCPWorldError
from mcpworld.results import TrialResult

ENV_SLOT = "mcpworld_env"        # environments a node holds at once
DOCKER = "mcpworld_docker"       # the node runs the docker backend
PRESENT = 1000                   # what a node declares of an app or of Docker it has (each trial asks for 1)
RETRIES = 3                      # a task whose node died runs again, up to this many times
OPTION_FIELDS = ("no_bash", "tools", "count_api_in_gui", "timeout", "max_steps", "backend", "desktop", "gpu",
                 "app_build")


def app_resource(app_id: str) -> str:
    return f"mcpworld_app_{app_id}"


def node_resources(apps, envs: int, docker: bool) -> dict[str, float]:
    """What this machine offers a cluster: `envs` environment slots, every installed app (none declared
    unavailable), Docker if it runs."""
    from mcpworld.install import is_installed

    out: dict[str, float] = {ENV_SLOT: float(envs)}
    for app in apps:
        if app.available and is_installed(app):  # an app declared unavailable has nothing to check
            out[app_resource(app.id)] = float(PRESENT)
    if docker:
        out[DOCKER] = float(PRESENT)
    return out


class TrialLost(MCPWorldError):
    """A trial no node could run to its end (its nodes died more often than Ray retries)."""


def _run_on_node(key: str, raw: dict, mode: str, k: int, options: dict, agent_name: str,
                 agent_options: dict) -> tuple[str, bytes, float, float]:
    """On a node: the trial run as locally, from this node's own copy of the task (which must be the
    driver's), into a temporary folder; its result, the folder packed, and when the node began and ended."""
    began = time.time()
    from mcpworld.agents import make_agent
    from mcpworld.config.load import load_tasks
    from mcpworld.heap import keep_heap
    from mcpworld.trial import TrialOptions, run_trial

    rt = load_tasks().get(key)
    if rt is None or rt.raw != raw:
        raise MCPWorldError(f"this node's {key} is not the driver's: bring its checkout to the same content")
    if options.get("tools") is not None:
        options["tools"] = frozenset(options["tools"])
    if options.get("app_build") is not None:
        options["app_build"] = Path(options["app_build"])
    with tempfile.TemporaryDirectory(prefix="mcpworld-ray-") as tmp:
        trial_dir = Path(tmp) / "trial"
        keep_heap()  # a worker runs trial after trial: what it loaded stays
        result = asyncio.run(run_trial(rt, make_agent(agent_name, **agent_options),
                                       TrialOptions(mode=mode, **options), trial_dir, k))
        packed = io.BytesIO()
        with tarfile.open(fileobj=packed, mode="w:gz") as tar:
            tar.add(trial_dir, arcname=".")
        return result.model_dump_json(), packed.getvalue(), began, time.time()


class RayExecutor:
    """Runs trials as Ray tasks on the cluster at `address` (default: the one this machine joined)."""

    def __init__(self, address: str | None = None):
        import ray

        self.ray = ray
        ray.init(address=address or "auto", ignore_reinit_error=True, log_to_driver=False,
                 logging_level=logging.WARNING, configure_logging=False)
        self.remote = ray.remote(num_cpus=0, max_retries=RETRIES)(_run_on_node)
        self.overheads: list[float] = []  # per trial: submit to the node's start, plus its end to the result here

    def check(self, tasks: list[ResolvedTask], backend: str) -> None:
        """Refuse at once a run that no node could take (its task would wait for resources forever)."""
        offered = self.ray.cluster_resources()
        wanted = {ENV_SLOT, *(app_resource(rt.app.id) for rt in tasks), *([DOCKER] if backend == "docker" else [])}
        missing = sorted(r for r in wanted if offered.get(r, 0) < 1)
        if missing:
            raise MCPWorldError(f"no node of the Ray cluster offers {', '.join(missing)}: start each node with "
                                "`ray start ... --resources \"$(mcpworld ray resources)\"` on a machine that has "
                                "them")

    async def __call__(self, rt: ResolvedTask, mode: str, k: int, opts, agent_name: str, agent_options: dict,
                       trial_dir: Path) -> TrialResult:
        options = {f: getattr(opts, f) for f in OPTION_FIELDS}
        options["tools"] = sorted(options["tools"]) if options["tools"] else None
        options["app_build"] = str(options["app_build"]) if options["app_build"] else None
        resources = {ENV_SLOT: 1, app_resource(rt.app.id): 1, **({DOCKER: 1} if opts.backend == "docker" else {})}
        submitted = time.time()
        ref = self.remote.options(resources=resources, name=f"{rt.key} {mode} #{k}").remote(
            rt.key, rt.raw, mode, k, options, agent_name, agent_options or {})
        try:
            result_json, packed, began, ended = await ref
        except self.ray.exceptions.RayError as e:
            raise TrialLost(f"{rt.key} {mode} #{k} did not run to its end on the cluster: "
                            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        trial_dir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
            tar.extractall(trial_dir, filter="data")
        self.overheads.append((began - submitted) + (time.time() - ended))  # the nodes' clocks agree (one machine, or NTP)
        return TrialResult.model_validate_json(result_json)


def local_resources_json(apps, envs: int) -> str:
    import json

    from mcpworld.images import docker_client

    try:
        docker = bool(docker_client().ping())
    except Exception:
        docker = False
    return json.dumps(node_resources(apps, envs, docker))
