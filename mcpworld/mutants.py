"""Near misses derived mechanically from a task's MCP reference solution, as mutation testing derives
wrong programs from a right one: each must fail the task's verdict, or be listed in the task as
`equivalent` with the reason (it does the asked thing another way).

The operators (a mutant's id names its operator, the step and the argument it changed):
  repeat@i          a step that changes the app (not read-only, not idempotent) done twice
  extra@i           one more call of that step's tool: its required arguments, strings altered, the rest left
                    to their defaults ("one more of the same kind")
  drop@i            a changing step left out (when the solution has more than one)
  default@i.ARG     an optional argument left to its default
  enum@i.ARG=V      an argument with allowed values set to another one (up to three, by a fixed seed; never to
                    the default the argument's absence means); a boolean flipped (flip@i.ARG)
  also@i.ARG=V      a step that sets something (idempotent) done as asked and once more with an argument with
                    allowed values set to another one (the right setting written at a wider scope as well)
  retarget@i.ARG=V  an argument naming something of the start state (a note, a layer, a file) pointed at
                    another thing of the same kind that the task does not name
  perturb@i.ARG     a number or a string altered (+1, x1.5; an "x" inserted before a file's extension)
  extend@i.ARG      a list of names with one value too many
  destroy@TOOL=V    a removing call (a tool annotated destructive whose name says delete, remove, close, ...,
                    and whose one required argument names a record) on something of the start state the task
                    does not name

Read-only steps are never mutated. Mutants that end up as the solution itself or as another mutant are
dropped. Everything is derived from the task, the tools' schemas and annotations, and the state the trial
starts from, so the same inputs give the same mutants.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from evaluator.delta import Shape

DESTROY_PER_TASK = 2     # destructive calls elsewhere, per task
RETARGETS = 2            # other targets per argument
ENUM_VALUES = 3          # other allowed values per argument
REMOVING_VERBS = {"delete", "remove", "close", "clear", "trash", "drop", "purge", "uninstall", "unlink"}
NAMING_FIELDS = ("name", "label", "title", "id", "key", "path", "file", "uuid", "hash")


@dataclass(frozen=True)
class Mutant:
    id: str
    family: str
    what: str
    steps: list[dict[str, Any]] = field(hash=False)  # [{"tool": ..., "args": ...}]


@dataclass
class ToolInfo:
    name: str
    schema: dict[str, Any]
    annotations: dict[str, Any]

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))

    @property
    def idempotent(self) -> bool:
        return bool(self.annotations.get("idempotentHint"))

    @property
    def destructive(self) -> bool:
        return not self.read_only and self.annotations.get("destructiveHint", True) is not False

    @property
    def required(self) -> list[str]:
        return list(self.schema.get("required", []))

    def prop(self, name: str) -> dict[str, Any]:
        return _resolve(self.schema, (self.schema.get("properties") or {}).get(name) or {})


def _resolve(schema: dict, prop: dict) -> dict:
    """A property's schema with a $ref followed and a nullable anyOf reduced to its non-null member."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        prop = {**(schema.get("$defs") or {}).get(name, {}), **{k: v for k, v in prop.items() if k != "$ref"}}
    options = [o for o in prop.get("anyOf", []) if o.get("type") != "null"]
    if len(options) == 1:
        prop = {**_resolve(schema, options[0]), **{k: v for k, v in prop.items() if k != "anyOf"}}
    return prop


def tool_infos(specs: list[dict[str, Any]]) -> dict[str, ToolInfo]:
    """From a trial's tools.json (name, input_schema, annotations of each tool it offered)."""
    return {s["name"]: ToolInfo(s["name"], s.get("input_schema") or {}, s.get("annotations") or {}) for s in specs}


# -- identifiers of the start state ---------------------------------------------------------------------------
def identifiers(start: dict, shape: Shape) -> dict[tuple[str, str], list[Any]]:
    """(collection, field) -> the values naming its records in the start state (keys, names, labels, ...)."""
    from evaluator.delta import records

    index: dict[tuple[str, str], list[Any]] = {}
    patterns = [k for k in start if k not in shape.ignore] + [p for p in [*shape.keys, *shape.sets] if "[*]" in p]
    for pattern in patterns:
        key = shape.keys.get(pattern)
        for rec in records(start, pattern, shape):
            if not isinstance(rec, dict):
                continue
            names = ("value",) if pattern in shape.sets else (*([key] if key else []), *NAMING_FIELDS)
            if pattern not in shape.sets and not key and set(rec) <= {"key", "value"}:
                continue  # a plain value, or a dict of plain values (its keys are field names), names nothing
            for f in dict.fromkeys(names):
                v = rec.get(f)
                if isinstance(v, (str, int)) and not isinstance(v, bool) and v != "":
                    index.setdefault((pattern, f), [])
                    if v not in index[(pattern, f)]:
                        index[(pattern, f)].append(v)
    return index


# -- argument leaves ---------------------------------------------------------------------------------------
def _leaves(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """(path, value) of every scalar and every list in an argument tree (a list's first item stands for the rest)."""
    out: list[tuple[tuple, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(v, path + (k,))
    elif isinstance(value, list):
        out.append((path, value))
        if value and not isinstance(value[0], (dict, list)):
            out.append((path + (0,), value[0]))
        elif value:
            out += _leaves(value[0], path + (0,))
    else:
        out.append((path, value))
    return out


def _set(args: dict, path: tuple, value: Any) -> dict:
    new = copy.deepcopy(args)
    cur = new
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return new


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def perturbed(v: Any) -> Any:
    """A near value: a number +1 (x1.5 for a fraction), a string with an "x" (before a file's extension)."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 1
    if isinstance(v, float):
        return round(v * 1.5, 6) if v else 1.0
    if isinstance(v, str):
        slash, dot = v.rfind("/"), v.rfind(".")
        return v[:dot] + "x" + v[dot:] if dot > slash + 1 and len(v) - dot <= 6 else v + "x"
    return v


def _strings_altered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strings_altered(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings_altered(v) for v in value]
    return perturbed(value) if isinstance(value, str) else value


def _seeded(items: list, salt: str) -> list:
    return sorted(items, key=lambda x: hashlib.sha256(f"{salt}:{json.dumps(x, default=str)}".encode()).hexdigest())


def _named_values(steps: list[dict], params: dict) -> set:
    """Every scalar the solution or the task's parameters name: a mutant's other target is none of these."""
    named = {v for v in params.values()}
    for s in steps:
        named |= {v for _, v in _leaves(s["args"]) if not isinstance(v, list)}
    return {v for v in named if isinstance(v, (str, int)) and not isinstance(v, bool)}


# -- the mutants -------------------------------------------------------------------------------------------
def generate(steps: list[dict[str, Any]], tools: dict[str, ToolInfo], start: dict, shape: Shape,
             params: dict, salt: str) -> list[Mutant]:
    """Every mutant of a solution (steps as {"tool", "args"}), deduplicated, in a stable order."""
    index = identifiers(start, shape)
    named = _named_values(steps, params)
    out: list[Mutant] = []

    def add(mid: str, family: str, what: str, new_steps: list[dict]) -> None:
        out.append(Mutant(mid, family, what, new_steps))

    changing = [i for i, s in enumerate(steps) if s["tool"] in tools and not tools[s["tool"]].read_only]
    for i in changing:
        step, info = steps[i], tools[steps[i]["tool"]]
        tool, args = step["tool"], step["args"]
        if not info.idempotent:
            add(f"repeat@{i}", "repeat", f"step {i} ({tool}) done twice", [*steps[:i + 1], step, *steps[i + 1:]])
            required = {k: _strings_altered(v) for k, v in args.items() if k in info.required}
            add(f"extra@{i}", "extra", f"one more {tool} with its required arguments altered and the rest defaulted",
                [*steps[:i + 1], {"tool": tool, "args": required}, *steps[i + 1:]])
        if len(changing) > 1:
            add(f"drop@{i}", "drop", f"step {i} ({tool}) left out", [*steps[:i], *steps[i + 1:]])
        for name, value in args.items():
            prop = info.prop(name)
            if name not in info.required and "default" in prop and prop["default"] != value:
                add(f"default@{i}.{name}", "default", f"{tool}'s {name} left to its default ({json.dumps(prop['default'])})",
                    [*steps[:i], {"tool": tool, "args": {k: v for k, v in args.items() if k != name}}, *steps[i + 1:]])
        for path, value in _leaves(args):
            if not path:
                continue
            dotted = _dotted(path)
            prop = info.prop(path[0]) if len(path) == 1 else {}
            enum = prop.get("enum") or ([prop["const"]] if "const" in prop else None)

            def put(new_value: Any) -> list[dict]:
                return [*steps[:i], {"tool": tool, "args": _set(args, path, new_value)}, *steps[i + 1:]]

            if isinstance(value, list):
                if value and isinstance(value[-1], str):  # a list of names, not a vector of numbers
                    add(f"extend@{i}.{dotted}", "extend", f"{tool}'s {dotted} with one value too many",
                        put([*value, perturbed(value[-1])]))
                continue
            if isinstance(value, bool):
                add(f"flip@{i}.{dotted}", "enum", f"{tool}'s {dotted} set to {str(not value).lower()}", put(not value))
                continue
            if enum:
                others = [o for o in enum if o != value and not (len(path) == 1 and o == prop.get("default"))]
                for other in _seeded(others, f"{salt}:{i}:{dotted}")[:ENUM_VALUES]:
                    add(f"enum@{i}.{dotted}={other}", "enum", f"{tool}'s {dotted} set to {other!r}", put(other))
                if info.idempotent and others:  # the right call, and the same at another scope or kind as well
                    other = _seeded([o for o in enum if o != value], f"{salt}:also:{i}:{dotted}")[0]
                    add(f"also@{i}.{dotted}={other}", "also", f"{tool} as asked, and again with {dotted} {other!r}",
                        [*steps[:i + 1], {"tool": tool, "args": _set(args, path, other)}, *steps[i + 1:]])
                continue
            targets = [(k, vals) for k, vals in index.items() if value in vals]
            if targets and isinstance(value, (str, int)):
                others = [v for _, vals in targets for v in vals if v not in named and type(v) is type(value)]
                for other in _seeded(list(dict.fromkeys(others)), f"{salt}:{i}:{dotted}")[:RETARGETS]:
                    add(f"retarget@{i}.{dotted}={other}", "retarget", f"{tool}'s {dotted} pointed at {other!r} "
                        f"instead of {value!r}", put(other))
                continue
            if isinstance(value, (int, float, str)) and value != "":
                add(f"perturb@{i}.{dotted}", "perturb", f"{tool}'s {dotted} altered to {perturbed(value)!r}",
                    put(perturbed(value)))
    destroy = []
    for name, info in sorted(tools.items()):
        if not (info.destructive and len(info.required) == 1 and _removes(name) and name in _servers_tools(tools, steps)):
            continue
        param = info.required[0]
        kind = info.prop(param).get("type")
        for (pattern, f), vals in sorted(index.items()):
            fields = {g for (p, g) in index if p == pattern}
            # the argument names the record by the field of its name, else by the collection's key or name
            naming = param if param in fields else shape.keys.get(pattern) or ("key" if "key" in fields else "name")
            if not _names_kind(name, pattern) or f != naming:
                continue
            for v in vals:
                if v not in named and ((kind == "string" and isinstance(v, str)) or (kind == "integer" and isinstance(v, int))):
                    destroy.append((name, param, v))
    for name, param, v in _seeded(list(dict.fromkeys(destroy)), f"{salt}:destroy")[:DESTROY_PER_TASK]:
        add(f"destroy@{name}={v}", "destroy", f"{name}({param}={v!r}) on something the task does not name",
            [*steps, {"tool": name, "args": {param: v}}])
    seen = {json.dumps(steps, sort_keys=True)}
    unique = []
    for m in out:
        key = json.dumps(m.steps, sort_keys=True)
        if key not in seen:
            seen.add(key)
            unique.append(m)
    return unique


def _removes(tool: str) -> bool:
    """A tool whose name says it takes something away (the annotations alone do not tell a delete from a set)."""
    verb = tool.split("__", 1)[-1].split("_", 1)[0]
    return verb in REMOVING_VERBS


def _servers_tools(tools: dict[str, ToolInfo], steps: list[dict]) -> set[str]:
    """The tools of the MCP servers the solution uses (server__tool)."""
    servers = {s["tool"].split("__", 1)[0] for s in steps if "__" in s["tool"]}
    return {n for n in tools if n.split("__", 1)[0] in servers}


def _names_kind(tool: str, pattern: str) -> bool:
    """Whether a tool's name speaks of a collection's kind of record ("delete_deck" and "decks")."""
    last = pattern.split("[*]")[-1].lstrip(".") or pattern.split("[*]")[0]
    singular = last[:-1] if last.endswith("s") else last
    return len(singular) > 2 and singular in tool.split("__", 1)[-1]
