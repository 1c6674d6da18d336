"""Load and resolve apps and tasks. Everything a task names is checked here, before any environment starts."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluator.predicates import Pred, PredicateError, compile_where
from gateway.actions import BUILTIN_TOOLS, COMPUTER_ACTIONS
from mcpworld import paths
from mcpworld.config.app import AppConfig, load_app
from mcpworld.config.errors import from_validation
from mcpworld.config.task import KeyStep, Task
from mcpworld.config.templating import expand, expand_tree, placeholders
from mcpworld.errors import ConfigError, ConfigErrors

ENV_PLACEHOLDERS = ("home", "env_dir", "root", "python", "bindir", "app_host")


def runtime_names(app: AppConfig) -> list[str]:
    """Placeholders a run fills in: its environment's paths, the app's paths, ports and secrets."""
    return [*ENV_PLACEHOLDERS, *app.paths, *(f"port_{p}" for p in app.ports), *(f"secret_{s}" for s in app.secrets)]


@dataclass
class ResolvedStep:
    step: KeyStep
    where: Pred
    check: Callable[..., bool] | None


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
    required_steps: list[str]
    key: str = ""  # "anki/161"
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.key


def load_apps(apps_dir: Path = paths.APPS_DIR) -> dict[str, AppConfig]:
    apps, errors = {}, []
    for f in sorted(apps_dir.glob("*/app.toml")):
        try:
            app = load_app(f)
            apps[app.id] = app
        except ConfigErrors as e:
            errors.extend(e.errors)
        except ConfigError as e:
            errors.append(e)
    if errors:
        raise ConfigErrors(errors)
    return apps


def _load_function(folder: Path, ref: str, file: Path, field_name: str) -> Callable[..., bool]:
    name, _, func = ref.partition(":")
    target = folder / name
    if not func or not target.is_file():
        raise ConfigError(file, field_name, f"'{ref}' must be 'file.py:function' naming a file in {folder}")
    spec = importlib.util.spec_from_file_location(f"mcpworld_task_check_{abs(hash(target))}", target)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # a broken check module is a config error, with its reason
        raise ConfigError(file, field_name, f"cannot import {target}: {e}") from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise ConfigError(file, field_name, f"{target} has no function '{func}'")
    return fn


def _check_placeholders(text: str, allowed: set[str], file: Path, field_name: str, what: str) -> list[ConfigError]:
    try:
        names = placeholders(text)
    except ValueError as e:
        return [ConfigError(file, field_name, f"bad braces: {e}")]
    return [ConfigError(file, field_name, f"unknown placeholder '{{{n}}}' (known {what}: {', '.join(sorted(allowed)) or 'none'})")
            for n in names if n not in allowed]


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

    params = {k: v for k, v in task.params.items()}
    errors += _check_placeholders(task.instruction, set(params), file, "instruction", "params")
    path_names = set(ENV_PLACEHOLDERS) | set(app.paths)
    for i, cd in enumerate(task.context_data):
        if not (snapshots_dir / cd.from_).exists():
            errors.append(ConfigError(file, f"context_data[{i}].from", f"no snapshot at {snapshots_dir / cd.from_}"))
        errors += _check_placeholders(cd.to, path_names, file, f"context_data[{i}].to", "paths")
    for i, fm in enumerate(task.file_milestones):
        errors += _check_placeholders(fm.path, path_names, file, f"file_milestones[{i}].path", "paths")

    for i, script in enumerate(task.frida_scripts):
        if not app.frida:
            errors.append(ConfigError(file, f"frida_scripts[{i}]", f"app '{app.id}' has no [frida] section to load it"))
        elif not (file.parent / script).is_file():
            errors.append(ConfigError(file, f"frida_scripts[{i}]", f"no file {file.parent / script}"))

    known: dict[str, str] = {name: "probe/frida" for name in app.events}
    known.update({fm.event: "fs" for fm in task.file_milestones})
    if app.state_event:
        known[app.state_event] = "query"
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
                check = _load_function(file.parent, ks.check, file, f"{where_field}.check")
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
        if not (app.state_query and task.state_query):
            errors.append(ConfigError(file, "success.state", f"needs a state query, but app '{app.id}' has none or the task disables it"))
        try:
            state_pred = compile_where(expand_tree(task.success.state, params), "success.state")
        except PredicateError as e:
            errors.append(ConfigError(file, e.path, e.problem))
        except (KeyError, ValueError) as e:
            errors.append(ConfigError(file, "success.state", f"unknown placeholder {e}"))
    success_check = None
    if task.success.check:
        try:
            success_check = _load_function(file.parent, task.success.check, file, "success.check")
        except ConfigError as e:
            errors.append(e)

    # oracle and set-up arguments may also name the run's values ({home}, {videos}, ...), filled in at run time
    later = frozenset(runtime_names(app))
    for kind in ("gui", "mcp"):
        seq = getattr(task.oracle, kind)
        for j, st in enumerate(seq or []):
            try:
                st.args = expand_tree(st.args, params, later)
            except (KeyError, ValueError) as e:
                errors.append(ConfigError(file, f"oracle.{kind}[{j}].args", f"unknown placeholder {e} (params: {', '.join(params)})"))
            if st.window is not None:
                where_field = f"oracle.{kind}[{j}].window"
                try:
                    st.window = expand(st.window, params, later)
                    re.compile(st.window)
                except (KeyError, ValueError) as e:
                    errors.append(ConfigError(file, where_field, f"unknown placeholder {e}"))
                except re.error as e:
                    errors.append(ConfigError(file, where_field, f"not a regular expression: {e}"))
    mcp_prefixes = tuple(f"{name}__" for name in app.mcp_servers)
    for j, st in enumerate(task.setup):
        try:
            st.args = expand_tree(st.args, params, later)
        except (KeyError, ValueError) as e:
            errors.append(ConfigError(file, f"setup[{j}].args", f"unknown placeholder {e}"))
        if not (st.tool in BUILTIN_TOOLS[1:] or st.tool.startswith(mcp_prefixes)):
            errors.append(ConfigError(file, f"setup[{j}].tool", f"'{st.tool}' is neither bash/edit nor a tool of {', '.join(app.mcp_servers) or 'no'} MCP server"))
    for kind, seq in (("gui", task.oracle.gui), ("mcp", task.oracle.mcp)):
        for j, st in enumerate(seq or []):
            where_field = f"oracle.{kind}[{j}].tool"
            if kind == "gui" and st.tool != "computer":
                errors.append(ConfigError(file, where_field, f"a GUI oracle uses only the computer tool, not '{st.tool}'"))
            elif st.tool == "computer" and st.args.get("action") not in COMPUTER_ACTIONS:
                errors.append(ConfigError(file, f"oracle.{kind}[{j}].args.action",
                                          f"unknown '{st.args.get('action')}' (known: {', '.join(COMPUTER_ACTIONS)})"))
            elif kind == "mcp" and not (st.tool in BUILTIN_TOOLS[1:] or st.tool.startswith(mcp_prefixes)):
                errors.append(ConfigError(file, where_field, f"'{st.tool}' is neither bash/edit nor a tool of {', '.join(app.mcp_servers) or 'no'} MCP server"))
    for mode in task.modes:
        if task.status == "ready" and task.oracle_for(mode) is None:
            errors.append(ConfigError(file, "modes", f"mode '{mode}' is declared but the task has no oracle usable in it"))
    if task.human_step_count is None and task.status == "ready":
        errors.append(ConfigError(file, "human_steps", "missing, and there is no GUI oracle to count it from"))
    elif task.grouped_human_steps is not None and task.human_step_count is not None and not 1 <= task.grouped_human_steps <= task.human_step_count:
        errors.append(ConfigError(file, "grouped_human_steps", f"{task.grouped_human_steps} groups for "
                                  f"{task.human_step_count} human steps (must be 1 to {task.human_step_count})"))
    if errors:
        raise ConfigErrors(errors)
    try:
        instruction = expand(task.instruction, params)
    except (KeyError, ValueError) as e:
        raise ConfigError(file, "instruction", str(e)) from None
    return ResolvedTask(task=task, app=app, folder=file.parent, instruction=instruction, steps=steps,
                        success_state=state_pred, success_check=success_check, required_steps=required,
                        key=f"{task.app}/{task.id}", raw=raw)


def task_files(tasks_dir: Path = paths.TASKS_DIR, app: str | None = None) -> list[Path]:
    pattern = f"{app}/*/task.json" if app else "*/*/task.json"
    return sorted(tasks_dir.glob(pattern), key=lambda p: (p.parent.parent.name, _num_key(p.parent.name)))


def _num_key(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 30, name)


def load_tasks(tasks_dir: Path = paths.TASKS_DIR, apps: dict[str, AppConfig] | None = None,
               app: str | None = None) -> dict[str, ResolvedTask]:
    """All tasks, or raise ConfigErrors listing every problem in every file."""
    apps = apps if apps is not None else load_apps()
    out, errors = {}, []
    for f in task_files(tasks_dir, app):
        try:
            t = load_task(f, apps)
            out[t.key] = t
        except ConfigErrors as e:
            errors.extend(e.errors)
        except ConfigError as e:
            errors.append(e)
    if errors:
        raise ConfigErrors(errors)
    return out
