"""Recorded trials judged again under the tasks as they are now."""

import json

from evaluator.events import Event
from mcpworld.config.load import load_apps, load_task
from mcpworld import paths
from mcpworld.rejudge import note_solution, rejudge, solution_of
from mcpworld.results import TrialResult

TASK = json.loads((paths.TASKS_DIR / "anki" / "161" / "task.json").read_text())
NOTE = {"id": 5, "notetype": "Basic", "fields": {"Front": TASK["params"]["front"], "Back": TASK["params"]["back"]},
        "tags": [], "deck": "Default", "cards": [{"id": 6, "deck": "Default", "queue": 0}]}


def trial(run, name, kind, notes, events=()):
    folder = run / "trials" / name
    folder.mkdir(parents=True)
    start = {"notes": [], "decks": [{"id": 1, "name": "Default"}], "tags": [], "read_from": "bridge"}
    log = [("query", "state", start), *events, ("query", "state", {**start, "notes": notes})]
    folder.joinpath("events.jsonl").write_text("".join(
        Event(run_id="r", source=src, app="anki", name=n, payload=p, seq=i, stream="s").model_dump_json() + "\n"
        for i, (src, n, p) in enumerate(log)))
    folder.joinpath("result.json").write_text(TrialResult(
        task="anki/161", template=161, app="anki", mode="mcp", agent="oracle", trial=0, run_id="r",
        difficulty="Easy", human_steps=8, success=True, kscr=1.0).model_dump_json())
    if kind:
        note_solution(folder, *kind)
    return folder


def test_trials_are_judged_again_and_what_is_now_wrong_is_named(tmp_path):
    tasks = {"anki/161": load_task(paths.TASKS_DIR / "anki" / "161" / "task.json", load_apps())}
    added = [("probe", "note_added", {"notetype": "Basic", "fields": NOTE["fields"], "deck": "Default"})]
    trial(tmp_path, "anki-161__mcp-oracle__0", ("oracle",), [NOTE], added)
    trial(tmp_path, "anki-161__mcp-repeat-0__0", ("mutant", "repeat@0"), [NOTE, {**NOTE, "id": 7}], added * 2)
    # one more note in another deck, and no solution note beside it: its kind comes from the folder
    other = {**NOTE, "id": 7, "deck": "Physics", "cards": [{"id": 8, "deck": "Physics", "queue": 0}]}
    trial(tmp_path, "anki-161__mcp-retarget-0.deck-Physics__0", None, [NOTE, other], added)
    judged = {j.trial.name: j for j in rejudge(tmp_path, tasks)}
    assert judged["anki-161__mcp-oracle__0"].verdict.success and not judged["anki-161__mcp-oracle__0"].wrong
    repeat = judged["anki-161__mcp-repeat-0__0"]
    assert repeat.kind == "mutant" and repeat.solution == "repeat@0" and not repeat.verdict.success and not repeat.wrong
    assert repeat.verdict.collateral == ["notes[id=7] added"]
    named = judged["anki-161__mcp-retarget-0.deck-Physics__0"]  # no note: its kind comes from the folder's name
    assert named.kind == "mutant" and not named.wrong


def test_the_kind_of_a_trial_from_its_folder():
    from pathlib import Path
    assert solution_of(Path("anki-161__mcp-null__0")) == ("null", "")
    assert solution_of(Path("anki-161__mcp-near_miss-twice__0")) == ("near_miss", "twice")
    assert solution_of(Path("anki-150__mcp-destroy-anki__delete_deck-Default__0")) == ("mutant", "destroy-anki__delete_deck-Default")
