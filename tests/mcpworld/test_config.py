"""Task and app validation: every problem names the file, the field and what is wrong."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpworld import paths
from mcpworld.config.load import load_tasks, load_apps, load_task
from mcpworld.errors import ConfigError, ConfigErrors

GOOD = json.loads((paths.TASKS_DIR / "anki" / "161" / "task.json").read_text())


def write_task(tmp_path, data, task_id="161"):
    folder = tmp_path / "anki" / task_id
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / "task.json"
    f.write_text(data if isinstance(data, str) else json.dumps(data))
    return f


def errors_of(tmp_path, data):
    f = write_task(tmp_path, data)
    with pytest.raises((ConfigError, ConfigErrors)) as e:
        load_task(f, load_apps())
    errs = e.value.errors if isinstance(e.value, ConfigErrors) else [e.value]
    assert all(x.file == str(f) for x in errs)
    return {(x.field, x.problem) for x in errs}


def mutate(**changes):
    data = json.loads(json.dumps(GOOD))
    for path, value in changes.items():
        cur = data
        keys = path.split("__")
        for k in keys[:-1]:
            cur = cur[int(k)] if k.isdigit() else cur[k]
        last = keys[-1]
        if value is ...:
            del cur[last]
        else:
            cur[int(last) if last.isdigit() else last] = value
    return data


def test_the_real_tasks_load():
    load_apps()
    assert load_task(paths.TASKS_DIR / "anki" / "161" / "task.json", load_apps()).instruction.startswith("Add a Q&A")


def test_every_real_task_states_its_paper_key_steps_and_has_a_near_miss():
    for key, rt in load_tasks().items():
        if rt.task.status == "ready":
            assert rt.task.paper_key_steps is not None, key
            assert rt.task.near_misses, f"{key} has no near miss"


@pytest.mark.parametrize("changes,field,problem", [
    ({"key_steps__0__event": "note_addd"}, "key_steps[0].event", "unknown 'note_addd'"),
    ({"instruction": "Add {frnt}"}, "instruction", "unknown placeholder '{frnt}'"),
    ({"context_data__0__from": "anki/nope"}, "context_data[0].from", "no snapshot at"),
    ({"context_data__0__to": "{hom}/x"}, "context_data[0].to", "unknown placeholder '{hom}'"),
    ({"difficulty": "Trivial"}, "difficulty", "Input should be"),
    ({"key_steps": []}, "key_steps", "at least 1"),
    ({"key_steps__0__where": {"fields.Front": {"$regx": "a"}}}, "key_steps[0].where.fields.Front.$regx", "unknown operator"),
    ({"key_steps__0__where": {"deck": "{dek}"}}, "key_steps[0].where", "unknown placeholder"),
    ({"success": {"key_steps": ["nope"]}}, "success.key_steps", "unknown key step 'nope'"),
    ({"oracle__gui__0__args": {"action": "fly"}}, "oracle.gui[0].args.action", "unknown 'fly'"),
    ({"oracle__mcp__0__tool": "zotero__add"}, "oracle.mcp[0].tool", "neither bash/edit nor a tool"),
    ({"app": "gimp"}, "app", "unknown app 'gimp'"),
    ({"timeout": -1}, "timeout", "greater than 0"),
    ({"surprise": 1}, "surprise", "Extra inputs are not permitted"),
    ({"oracle": {"gui": None, "mcp": None}}, "modes", "no oracle usable"),
    ({"key_steps__0__check": "checks.py:fn"}, "key_steps[0].check", "must be 'file.py:function'"),
    ({"key_steps__0__event": ["note_added", "nope"]}, "key_steps[0].event", "unknown 'nope'"),
    ({"key_steps__0__after": "later"}, "key_steps", "must name an earlier key step"),
    ({"frida_scripts": ["x.js"]}, "frida_scripts[0]", "has no [sources.frida]"),
    ({"setup_events": ["nope"]}, "setup_events[0]", "unknown 'nope'"),
    ({"setup": [{"tool": "zotero__add"}]}, "setup[0].tool", "neither bash/edit nor a tool"),
    ({"oracle__mcp__0__args": {"x": "{homme}"}}, "oracle.mcp[0].args", "unknown placeholder"),
    ({"paper_key_steps": 5}, "key_steps", "the paper's template has 5"),
])
def test_malformed_task_names_file_field_and_problem(tmp_path, changes, field, problem):
    found = errors_of(tmp_path, mutate(**changes))
    assert any(f == field and problem in p for f, p in found), found


def test_invalid_json_names_the_line(tmp_path):
    found = errors_of(tmp_path, '{"template": 161,\n  "app": }')
    assert any("line 2" in p for _, p in found)


def test_python_check_module_is_loaded_and_its_errors_reported(tmp_path):
    data = mutate(key_steps__0__check="checks.py:front_is_upper")
    f = write_task(tmp_path, data)
    (f.parent / "checks.py").write_text("def front_is_upper(payload, params):\n    return payload['fields']['Front'].isupper()\n")
    rt = load_task(f, load_apps())
    assert rt.steps[0].check({"fields": {"Front": "ABC"}}, {}) is True
    (f.parent / "checks.py").write_text("def front_is_upper(:\n")
    with pytest.raises(ConfigErrors) as e:
        load_task(f, load_apps())
    assert "cannot import" in str(e.value)


def test_validate_command_exits_nonzero_and_prints_every_problem(tmp_path):
    shutil.copytree(paths.TASKS_DIR / "anki" / "161", tmp_path / "anki" / "161")
    write_task(tmp_path, mutate(key_steps__0__event="bogus"), task_id="999")
    r = subprocess.run([sys.executable, "-m", "mcpworld.cli", "tasks", "validate", "--tasks-dir", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "anki/999/task.json: key_steps[0].event: unknown 'bogus'" in " ".join(r.stderr.split())
    ok = subprocess.run([sys.executable, "-m", "mcpworld.cli", "tasks", "validate"], capture_output=True, text=True)
    assert ok.returncode == 0 and "task(s)" in ok.stdout


def test_malformed_app_config(tmp_path):
    from mcpworld.config.app import load_app
    folder = tmp_path / "myapp"
    folder.mkdir()
    (folder / "app.toml").write_text('id = "myapp"\nname = "X"\n[launch]\ncommand = []\n[ready]\nwindow_name = "x"\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(folder / "app.toml")
    fields = {x.field for x in e.value.errors}
    assert {"launch.command", "events"} <= fields
    (folder / "app.toml").write_text("id = [")
    with pytest.raises(ConfigError, match="cannot read TOML"):
        load_app(folder / "app.toml")


def test_an_apps_system_files_exist_and_go_under_etc(tmp_path):
    from mcpworld.config.app import load_app
    folder = tmp_path / "myapp"
    folder.mkdir()
    base = 'id = "myapp"\nname = "X"\n[launch]\ncommand = ["x"]\n[ready]\nwindow_name = "x"\n[events]\nup = "up"\n'
    (folder / "app.toml").write_text(base + '[install]\nsystem_files = [{ from = "policy.json", to = "/etc/x/p.json" }]\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(folder / "app.toml")
    assert [(x.field, x.problem.split(" /")[0]) for x in e.value.errors] == [("install.system_files[0].from", "no such file")]
    (folder / "policy.json").write_text("{}")
    assert load_app(folder / "app.toml").install.system_files[0].to == "/etc/x/p.json"
    (folder / "app.toml").write_text(base + '[install]\nsystem_files = [{ from = "policy.json", to = "/usr/bin/x" }]\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(folder / "app.toml")
    assert [x.field for x in e.value.errors] == ["install.system_files[0].to"] and "/etc/" in e.value.errors[0].problem


def test_an_app_declared_unavailable_needs_no_launch_but_a_reason_and_its_tasks_cannot_be_ready(tmp_path):
    from mcpworld.config.app import load_app
    folder = tmp_path / "apps" / "gone"
    folder.mkdir(parents=True)
    toml = folder / "app.toml"
    toml.write_text('id = "gone"\nname = "Gone"\navailable = false\nunavailable_reason = "no package here"\n'
                    '[events]\nitem_added = "an item was added"\n')
    app = load_app(toml)
    assert not app.available and app.launch is None and app.ready is None
    assert app.unavailable_reason == "no package here"
    # without a reason it is refused, naming the field
    toml.write_text('id = "gone"\nname = "Gone"\navailable = false\n[events]\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(toml)
    assert [(x.file, x.field) for x in e.value.errors] == [(str(toml), "unavailable_reason")]
    # an available app still needs [launch] and [ready]: the error names the file and each field
    toml.write_text('id = "gone"\nname = "Gone"\n[ready]\nwindow_name = "x"\n[events]\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(toml)
    [err] = e.value.errors
    assert (err.file, err.field) == (str(toml), "launch") and "missing [launch]" in err.problem
    assert str(toml) in str(err) and ": launch: " in str(err)
    toml.write_text('id = "gone"\nname = "Gone"\n[events]\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(toml)
    assert {x.field for x in e.value.errors} == {"launch", "ready"}
    # its tasks are declared (unavailable), never ready
    toml.write_text('id = "gone"\nname = "Gone"\navailable = false\nunavailable_reason = "no package here"\n'
                    '[events]\nitem_added = "an item was added"\n')
    apps = {"gone": load_app(toml)}
    task = {"template": 1, "app": "gone", "status": "unavailable", "status_reason": "Gone: no package here",
            "instruction": "Add {item}", "params": {"item": "x"}, "difficulty": "Easy", "modes": [],
            "key_steps": [{"id": "added", "event": "item_added"}]}
    f = tmp_path / "tasks" / "gone" / "1" / "task.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps(task))
    assert load_task(f, apps).instruction == "Add x"
    f.write_text(json.dumps({**task, "status": "ready", "human_steps": 1}))
    with pytest.raises(ConfigErrors) as e:
        load_task(f, apps)
    assert ("status", "'ready', but app 'gone' is unavailable (no package here): declare the task \"unavailable\"") in \
        {(x.field, x.problem) for x in e.value.errors}


def test_the_unavailable_apps_tasks_are_declared_with_their_reason():
    """Every task of an app declared unavailable says so (not ready, no modes) and why."""
    apps = load_apps()
    tasks = load_tasks(apps=apps)
    for key, rt in tasks.items():
        if not rt.app.available:
            assert rt.task.status == "unavailable" and rt.task.modes == [] and rt.task.status_reason, key
            assert rt.app.unavailable_reason in rt.task.status_reason, key


def test_run_values_in_oracle_arguments_wait_for_the_run():
    from mcpworld.config.templating import expand, expand_tree
    later = frozenset({"home"})
    kept = expand_tree({"path": "{home}/x {{lit}} {p}"}, {"p": "a{b}"}, later)
    assert kept == {"path": "{home}/x {{lit}} a{{b}}"}
    assert expand_tree(kept, {"home": "/h"}) == {"path": "/h/x {lit} a{b}"}
    assert expand("{home}", {}, later) == "{home}"


def test_placeholder_escapes():
    from mcpworld.config.templating import expand, placeholders
    assert expand("{a} {{a}} \\{\\{c1::x\\}\\} x{2,3}", {"a": 1}) == "1 {a} \\{\\{c1::x\\}\\} x{2,3}"
    assert placeholders("{{Front}} {name} {{{{c1::B}}}}") == ["name"]
    assert expand("{{{{c1::B}}}}", {}) == "{{c1::B}}"


def test_each_event_source_checks_its_own_app_table(tmp_path):
    from mcpworld.config.app import load_app
    folder = tmp_path / "myapp"
    folder.mkdir()
    (folder / "app.toml").write_text(
        'id = "myapp"\nname = "X"\n[launch]\ncommand = ["x"]\n[ready]\nwindow_name = "x"\n[events]\nup = "up"\n'
        '[sources.nope]\nx = 1\n[sources.frida]\nscripts = []\n'
        '[[sources.probe.files]]\nfrom = "hooks/myapp/missing"\nto = "{home}/x"\n'
        '[sources.state_query]\nmodule = "missing.py"\n[sources.port_gate]\nport = "server"\n')
    with pytest.raises(ConfigErrors) as e:
        load_app(folder / "app.toml")
    found = {(x.field, x.problem.split(" (")[0]) for x in e.value.errors}
    assert ("sources.nope", "unknown event source") in found, found
    assert any(f == "sources.frida.scripts" and "at least 1" in p for f, p in found), found
    assert any(f == "sources.probe.files[0].from" and "no such file" in p for f, p in found), found
    assert any(f == "sources.state_query.module" and "no file" in p for f, p in found), found
    assert ("sources.port_gate.port", "'server' is not among the app's ports") in found, found


def expect_errors(tmp_path, success):
    return {field: problem for field, problem in errors_of(tmp_path, mutate(success=success))}


def test_an_expected_delta_names_real_collections_and_one_kind_of_change(tmp_path):
    errs = expect_errors(tmp_path, {"expect": {"cards": {"add": {}}, "notes[*].pages": {"add": {}},
                                               "note_count": {"change": {}, "to": {"value": 1}}}})
    assert "unknown collection 'cards'" in errs["success.expect.cards"]
    assert "not a keyed list or a set" in errs["success.expect.notes[*].pages"]
    assert "ignored" in errs["success.expect.note_count"]
    for bad, problem in [({"add": {}, "remove": {}}, "exactly one of add, remove or change"),
                         ({"change": {"id": 1}}, "says what it changes `to`"),
                         ({"add": {}, "to": {"x": 1}}, "belong to a change"),
                         ({"add": {}, "count": "all"}, "not an add"),
                         ({"add": {}, "count": "2..1"}, "upper bound")]:
        found = errors_of(tmp_path, mutate(success={"expect": {"notes": bad}}))
        assert any(problem in p for _, p in found), (bad, found)
    assert "names no field" in expect_errors(tmp_path, {"expect": {"notes": {"change": {"id": 1}, "to": {}}}})[
        "success.expect.notes.to"]


def test_a_tolerance_says_why_and_never_lets_the_asked_collection_change_freely(tmp_path):
    errs = expect_errors(tmp_path, {"expect": {"notes": {"add": {}}}, "tolerate": [{"collection": "notes", "why": "it moves"}]})
    assert "narrow it" in errs["success.tolerate[0]"]
    found = errors_of(tmp_path, mutate(success={"tolerate": [{"collection": "decks", "why": ""}]}))
    assert any("why" in f for f, _ in found)
    found = errors_of(tmp_path, mutate(success={"changes": {"notes": True}}))
    assert any(f == "success" and "no longer read" in p for f, p in found), found
    rt = load_task(write_task(tmp_path, mutate(success={"expect": {"notes": {"add": {}}}, "tolerate": [
        {"collection": "notes", "kinds": ["change"], "fields": ["mod"], "why": "Anki's own modification time"}]})), load_apps())
    assert rt.state_diff.tolerances[0].fields == ("mod",)


@pytest.mark.parametrize("field", ["shows", "unless"])
def test_the_event_a_solution_step_shows_is_checked_when_the_task_loads(tmp_path, field):
    """A step's `shows` (and `unless`) names an event of the app and a where that compiles, with the task's
    parameters filled in."""
    data = mutate()
    data["oracle"]["mcp"][0][field] = {"event": "bogus"}
    assert any(f == f"oracle.mcp[0].{field}.event" and "unknown 'bogus'" in problem
               for f, problem in errors_of(tmp_path, data))
    data["oracle"]["mcp"][0][field] = {"event": data["key_steps"][0]["event"], "where": {"x": {"$bogus": 1}}}
    assert any(f.startswith(f"oracle.mcp[0].{field}.where") for f, _ in errors_of(tmp_path, data))
    data["oracle"]["mcp"][0][field] = {"event": data["key_steps"][0]["event"], "where": {"x": "{nope}"}}
    assert (f"oracle.mcp[0].{field}.where", "unknown placeholder 'nope'") in errors_of(tmp_path, data)
