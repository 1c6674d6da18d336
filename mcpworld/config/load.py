"""Load and resolve apps and tasks. Everything a task names is checked here, before any environment starts."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluator.delta import KIND_OF, Expected, Shape, Tolerance, parse_count, where_fields
from evaluator.predicates import Pred, PredicateError, compile_where
from gateway.actions import COMPUTER_ACTIONS
from gateway.modes import COMPUTER_TOOL, SEP, SHELL_TOOLS, Mode
from mcpworld import paths, sources
from mcpworld.config.app import AppConfig, load_app
from mcpworld.config.errors import from_validation
from mcpworld.config.modules import load_ref
from mcpworld.config.task import KeyStep, OracleStep, Task
from mcpworld.config.templating import check_placeholders, expand, expand_tree
from mcpworld.errors import ConfigError, ConfigErrors
from mcpworld.sources.query import WORK_FILES, StateQuerySource
from mcpworld.values import ENV_PLACEHOLDERS, runtime_names


@dataclass
class ResolvedStep:
    step: KeyStep
    where: Pred
    check: Callable[..., bool] | None


@dataclass
class StateDiff:
    keys: dict[str, str]
    ignore: list[str]
    sets: list[str]
    expected: list[Expected] = field(default_factory=list)   # success.expect, compiled
    tolerances: list[Tolerance] = field(default_factory=list)

    @property
    def shape(self) -> Shape:
        return Shape(dict(self.keys), frozenset(self.sets), frozenset(self.ignore))


@dataclass
class ResolvedTask:
    """A task whose every reference was checked, with placeholders filled and predicates compiled."""

    task: Task
    app: AppConfig
    folder: Path
    instruction: str
    steps: list[ResolvedStep]
    success_state: Pred | None
    success_check: Callable[..., bool] | None
    state_diff: StateDiff | None  # how start and end states compare (None: the task has no state query)
    required_steps: list[str]
    key: str = ""  # "anki/161"
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.key


def load_apps(apps_dir: Path = paths.APPS_DIR) -> dict[str, AppConfig]:
    return {app.id: app for app in _every(sorted(apps_dir.glob("*/app.toml")), load_app)}


def _every(files: list[Path], load: Callable) -> list:
    """Load every file; raise ConfigErrors listing every problem of every file, not just the first."""
    loaded, errors = [], []
    for f in files:
        try:
            loaded.append(load(f))
        except ConfigErrors as e:
            errors.extend(e.errors)
        except ConfigError as e:
            errors.append(e)
    if errors:
        raise ConfigErrors(errors)
    return loaded


def load_task(file: Path, apps: dict[str, AppConfig], snapshots_dir: Path = paths.SNAPSHOTS_DIR) -> ResolvedTask:
    try:
        raw = json.loads(file.read_text())
    except json.JSONDecodeError as e:
        raise ConfigError(file, "", f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except OSError as e:
        raise ConfigError(file, "", f"cannot read: {e}") from None
    try:
        task = Task.model_validate(raw)
    except ValidationError as e:
        raise from_validation(file, e) from None
    task.id = file.parent.name
    errors: list[ConfigError] = []
    app = apps.get(task.app)
    if app is None:
        raise ConfigError(file, "app", f"unknown app '{task.app}' (known: {', '.join(sorted(apps))})")
    if file.parent.parent.name != task.app:
        errors.append(ConfigError(file, "app", f"'{task.app}' but the task sits in tasks/{file.parent.parent.name}/"))
    if not app.available and task.status == "ready":
        errors.append(ConfigError(file, "status", f"'ready', but app '{app.id}' is unavailable "
                                  f"({app.unavailable_reason}): declare the task \"unavailable\""))

    params = {k: v for k, v in task.params.items()}
    errors += check_placeholders(task.instruction, set(params), file, "instruction", "params")
    path_names = set(ENV_PLACEHOLDERS) | set(app.paths)
    for i, cd in enumerate(task.context_data):
        if not (snapshots_dir / cd.from_).exists():
            errors.append(ConfigError(file, f"context_data[{i}].from", f"no snapshot at {snapshots_dir / cd.from_}"))
        elif cd.from_.split("/", 1)[0] != app.id:  # a container mounts only the app's own snapshots
            errors.append(ConfigError(file, f"context_data[{i}].from", f"'{cd.from_}' is not under snapshots/{app.id}/"))
        errors += check_placeholders(cd.to, path_names, file, f"context_data[{i}].to", "paths")
    errors += sources.check_task(app, task, file)
    known = sources.task_events(app, task)
    for i, name in enumerate(task.setup_events):
        if name not in app.events:
            errors.append(ConfigError(file, f"setup_events[{i}]", f"unknown '{name}' (known: {', '.join(sorted(app.events))})"))
    steps: list[ResolvedStep] = []
    for i, ks in enumerate(task.key_steps):
        where_field = f"key_steps[{i}]"
        for name in ks.events:
            if name not in known:
                errors.append(ConfigError(file, f"{where_field}.event", f"unknown '{name}' (known: {', '.join(sorted(known))})"))
        try:
            pred = compile_where(expand_tree(ks.where, params), f"{where_field}.where")
        except PredicateError as e:
            errors.append(ConfigError(file, e.path, e.problem))
            continue
        except (KeyError, ValueError) as e:
            errors.append(ConfigError(file, f"{where_field}.where", f"unknown placeholder {e} (params: {', '.join(params)})"))
            continue
        check = None
        if ks.check:
            try:
                check = load_ref(file.parent, ks.check, file, f"{where_field}.check")
            except ConfigError as e:
                errors.append(e)
        steps.append(ResolvedStep(ks, pred, check))

    ids = [s.id for s in task.key_steps]
    required = ids if task.success.key_steps == "all" else task.success.key_steps
    for r in required:
        if r not in ids:
            errors.append(ConfigError(file, "success.key_steps", f"unknown key step '{r}' (known: {', '.join(ids)})"))
    state_pred = None
    if task.success.state:
        try:
            state_pred = compile_where(expand_tree(task.success.state, params), "success.state")
        except PredicateError as e:
            errors.append(ConfigError(file, e.path, e.problem))
        except (KeyError, ValueError) as e:
            errors.append(ConfigError(file, "success.state", f"unknown placeholder {e}"))
    state_diff = None
    query = app.sources.get(StateQuerySource.key)
    if StateQuerySource.wanted(query, task):
        keys = {**query.keys, **({WORK_FILES: "path"} if query.work_dirs else {})}
        state_diff = StateDiff(keys, list(query.ignore), list(query.sets))
        errors += _resolve_delta(task, query, params, state_diff, file)
    elif task.success.expect or task.success.tolerate:
        errors.append(ConfigError(file, "success.expect", f"needs a state query, but app '{app.id}' has none or the task disables it"))
    success_check = None
    if task.success.check:
        try:
            success_check = load_ref(file.parent, task.success.check, file, "success.check")
        except ConfigError as e:
            errors.append(e)

    # oracle and set-up arguments may also name the run's values ({home}, {videos}, ...), filled in at run time
    later = frozenset(runtime_names(app))
    servers = ", ".join(app.mcp_servers) or "no"

    def tools_of(mode: Mode | None, oracle: bool = False) -> Callable[[OracleStep], str | None]:
        """The tools a step may use in `mode` (a GUI oracle: the computer tool alone)."""
        def check(st: OracleStep) -> str | None:
            if oracle and mode == Mode.GUI and st.tool != COMPUTER_TOOL:
                return f"a GUI oracle uses only the computer tool, not '{st.tool}'"
            if st.tool == COMPUTER_TOOL and mode in (Mode.GUI, Mode.HYBRID):
                return None
            if not _shell_or_mcp(st, app) or (mode == Mode.GUI and st.tool not in SHELL_TOOLS):
                return f"'{st.tool}' is neither bash/edit nor a tool of {servers} MCP server"
            return None
        return check

    groups = [(f"oracle.{m}", getattr(task.oracle, m) or [], tools_of(m, oracle=True)) for m in (Mode.GUI, Mode.MCP)]
    groups.append(("setup", task.setup, tools_of(Mode.MCP)))
    for kind in ("near_misses", "alternatives"):
        groups += [(f"{kind}[{i}].steps", sol.steps, tools_of(sol.mode)) for i, sol in enumerate(getattr(task, kind))]
    for prefix, group, allowed in groups:
        errors += _check_steps(group, prefix, allowed, params, later, file, known)
    ids = [s.id for s in [*task.near_misses, *task.alternatives]]
    errors += [ConfigError(file, "near_misses", f"two solutions named '{i}'") for i in sorted({i for i in ids if ids.count(i) > 1})]
    for mode in task.modes:
        if task.status == "ready" and task.oracle_for(mode) is None:
            errors.append(ConfigError(file, "modes", f"mode '{mode}' is declared but the task has no oracle usable in it"))
    if task.human_step_count is None and task.status == "ready":
        errors.append(ConfigError(file, "human_steps", "missing, and there is no GUI oracle to count it from"))
    elif task.grouped_human_steps is not None and task.human_step_count is not None and not 1 <= task.grouped_human_steps <= task.human_step_count:
        errors.append(ConfigError(file, "grouped_human_steps", f"{task.grouped_human_steps} groups for "
                                  f"{task.human_step_count} human steps (must be 1 to {task.human_step_count})"))
    if task.paper_key_steps is not None and task.paper_key_steps != len(task.key_steps) and not task.notes:
        errors.append(ConfigError(file, "key_steps", f"{len(task.key_steps)} key steps where the paper's template has "
                                  f"{task.paper_key_steps}: mirror it, or say why not in notes"))
    if errors:
        raise ConfigErrors(errors)
    try:
        instruction = expand(task.instruction, params)
    except (KeyError, ValueError) as e:
        raise ConfigError(file, "instruction", str(e)) from None
    return ResolvedTask(task=task, app=app, folder=file.parent, instruction=instruction, steps=steps,
                        success_state=state_pred, success_check=success_check, state_diff=state_diff,
                        required_steps=required,
                        key=f"{task.app}/{task.id}", raw=raw)


def _resolve_delta(task: Task, query, params: dict, spec: StateDiff, file: Path) -> list[ConfigError]:
    """Compile success.expect and success.tolerate into the spec; every collection must be one the app's state
    has (its declared fields, and its keyed or set paths for nested ones)."""
    errors: list[ConfigError] = []
    shape = spec.shape

    def collection(name: str, where: str) -> bool:
        top = name.split("[*]", 1)[0]
        if top in shape.ignore:
            errors.append(ConfigError(file, where, f"'{top}' is ignored in the app's state comparison"))
            return False
        if query.fields and top not in query.fields and not (top == WORK_FILES and query.work_dirs):
            errors.append(ConfigError(file, where, f"unknown collection '{top}' (the state has: {', '.join(query.fields)})"))
            return False
        if "[*]" in name and not shape.nested(name):
            errors.append(ConfigError(file, where, f"'{name}' is not a keyed list or a set of the state (nested "
                                      f"ones: {', '.join(k for k in [*shape.keys, *shape.sets] if '[*]' in k) or 'none'})"))
            return False
        return True

    def compiled(where: dict, at: str) -> Pred | None:
        try:
            return compile_where(expand_tree(where, params), at)
        except PredicateError as e:
            errors.append(ConfigError(file, e.path, e.problem))
        except (KeyError, ValueError) as e:
            errors.append(ConfigError(file, at, f"unknown placeholder {e}"))
        return None

    counts: dict[str, int] = {}
    for name, exp in task.success.expectations():
        n = counts[name] = counts.get(name, -1) + 1
        at = f"success.expect.{name}" + (f"[{n}]" if isinstance(task.success.expect[name], list) else "")
        if not collection(name, at):
            continue
        where = compiled(exp.where, f"{at}.{exp.kind}")
        to = compiled(exp.to, f"{at}.to") if exp.to is not None else None
        if where is None or (exp.to is not None and to is None):
            continue
        low, high, every = parse_count(exp.count)
        fields = tuple(exp.fields) if exp.fields is not None else where_fields(exp.to) if exp.to is not None else None
        if exp.kind == "change" and not fields:
            errors.append(ConfigError(file, f"{at}.to", "names no field: a change says which fields it changes"))
        label = f"{name}: {exp.kind} {json.dumps(expand_tree(exp.where, params), ensure_ascii=False)}" + (
            f" to {json.dumps(expand_tree(exp.to, params), ensure_ascii=False)}" if exp.to is not None else "")
        spec.expected.append(Expected(name, KIND_OF[exp.kind], where, to, fields, low, high, every, label))
    expected_in = {name for name, _ in task.success.expectations()}
    for i, tol in enumerate(task.success.tolerate):
        at = f"success.tolerate[{i}]"
        if not collection(tol.collection, f"{at}.collection"):
            continue
        if tol.collection in expected_in and not tol.where and tol.fields is None:
            errors.append(ConfigError(file, at, f"tolerates every change to '{tol.collection}', which the task is "
                                      "about: narrow it to fields (and a where)"))
            continue
        where = compiled(tol.where, f"{at}.where") if tol.where else None
        if tol.where and where is None:
            continue
        kinds = frozenset(KIND_OF[k] for k in tol.kinds) if tol.kinds else frozenset(KIND_OF.values())
        spec.tolerances.append(Tolerance(tol.collection, tol.why, kinds, where,
                                         tuple(tol.fields) if tol.fields is not None else None))
    return errors


def _check_steps(steps: list[OracleStep], prefix: str, allowed: Callable[[OracleStep], str | None],
                 params: dict, later: frozenset[str], file: Path, known: set[str]) -> list[ConfigError]:
    """Fill the task's parameters into each step (the run's values wait for the run) and check its tool and
    the event that shows its effect."""
    errors = []
    for j, st in enumerate(steps):
        try:
            st.args = expand_tree(st.args, params, later)
        except (KeyError, ValueError) as e:
            errors.append(ConfigError(file, f"{prefix}[{j}].args", f"unknown placeholder {e} (params: {', '.join(params)})"))
        if st.window is not None:
            try:
                st.window = expand(st.window, params, later)
                re.compile(st.window)
            except (KeyError, ValueError) as e:
                errors.append(ConfigError(file, f"{prefix}[{j}].window", f"unknown placeholder {e}"))
            except re.error as e:
                errors.append(ConfigError(file, f"{prefix}[{j}].window", f"not a regular expression: {e}"))
        for field in ("shows", "unless"):
            shown = getattr(st, field)
            if shown is None:
                continue
            if shown.event not in known:
                errors.append(ConfigError(file, f"{prefix}[{j}].{field}.event",
                                          f"unknown '{shown.event}' (known: {', '.join(sorted(known))})"))
            try:
                shown.where = expand_tree(shown.where, params)
                compile_where(shown.where, f"{prefix}[{j}].{field}.where")
            except PredicateError as e:
                errors.append(ConfigError(file, e.path, e.problem))
            except (KeyError, ValueError) as e:
                errors.append(ConfigError(file, f"{prefix}[{j}].{field}.where", f"unknown placeholder {e}"))
        if st.tool == COMPUTER_TOOL and st.args.get("action") not in COMPUTER_ACTIONS:
            errors.append(ConfigError(file, f"{prefix}[{j}].args.action",
                                      f"unknown '{st.args.get('action')}' (known: {', '.join(COMPUTER_ACTIONS)})"))
        elif problem := allowed(st):
            errors.append(ConfigError(file, f"{prefix}[{j}].tool", problem))
    return errors


def _shell_or_mcp(step: OracleStep, app: AppConfig) -> bool:
    return step.tool in SHELL_TOOLS or step.tool.split(SEP, 1)[0] in app.mcp_servers and SEP in step.tool


def task_files(tasks_dir: Path = paths.TASKS_DIR, app: str | None = None) -> list[Path]:
    pattern = f"{app}/*/task.json" if app else "*/*/task.json"
    return sorted(tasks_dir.glob(pattern), key=lambda p: (p.parent.parent.name, _num_key(p.parent.name)))


def _num_key(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 30, name)


def load_tasks(tasks_dir: Path = paths.TASKS_DIR, apps: dict[str, AppConfig] | None = None,
               app: str | None = None) -> dict[str, ResolvedTask]:
    """All tasks, or raise ConfigErrors listing every problem in every file."""
    apps = apps if apps is not None else load_apps()
    return {t.key: t for t in _every(task_files(tasks_dir, app), lambda f: load_task(f, apps))}
