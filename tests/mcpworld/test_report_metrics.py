"""The report's aggregation against hand-computed figures, on trial results written out by hand."""

from pathlib import Path

import pytest

from mcpworld.agents.base import Usage
from mcpworld.report.build import build
from mcpworld.report.compare import compare
from mcpworld.report.prices import Price, price_for
from mcpworld.results import TrialResult

DIFF = {"a/1": ("Easy", 4, 2), "a/2": ("Medium", 8, None), "a/3": ("Hard", 12, 6)}


def trial(task, mode, k, success, steps, kscr=None, failure=None, usage=None, by_kind=None):
    diff, human, grouped = DIFF[task]
    return TrialResult(task=task, template=int(task[-1]), app="a", mode=mode, agent="x", trial=k, run_id="r",
                       difficulty=diff, human_steps=human, grouped_human_steps=grouped, success=success,
                       kscr=kscr if kscr is not None else (1.0 if success else 0.0), steps=steps, max_steps=20,
                       failure=None if success else (failure or "evaluated_failed"),
                       tool_calls=sum((by_kind or {}).values()), tool_calls_by_kind=by_kind or {},
                       usage=usage or Usage())


DECLARED = {
    "a/1": {"status": "ready", "modes": ["gui", "mcp"]},
    "a/2": {"status": "ready", "modes": ["gui", "mcp"]},
    "a/3": {"status": "ready", "modes": ["gui", "mcp"]},
    "a/4": {"status": "stub", "reason": "needs an add-on", "modes": ["gui", "mcp", "hybrid"]},
}


@pytest.fixture
def report():
    sonnet = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_input_tokens=2_000_000,
                   model="claude-sonnet-4-5-20250929")
    rs = [
        # gui: a/1 passes twice in 4 and 2 steps, a/2 fails twice (10 and 20 steps), a/3 passes once of two
        trial("a/1", "gui", 0, True, 4, by_kind={"gui": 4}), trial("a/1", "gui", 1, True, 2, by_kind={"gui": 2}),
        trial("a/2", "gui", 0, False, 10, kscr=0.5, failure="step_cap"), trial("a/2", "gui", 1, False, 20, kscr=0.25),
        trial("a/3", "gui", 0, True, 24, by_kind={"gui": 20, "bash": 4}), trial("a/3", "gui", 1, False, 6, kscr=0.0,
                                                                               failure="app_closed"),
        # mcp: one trial each, with tokens priced as Sonnet 4.5
        trial("a/1", "mcp", 0, True, 1, usage=sonnet, by_kind={"mcp": 1}),
        trial("a/2", "mcp", 0, True, 2, by_kind={"mcp": 2}),
        trial("a/3", "mcp", 0, False, 3, kscr=1 / 3, by_kind={"mcp": 2, "bash": 1}),
    ]
    return build([("/runs/x", r) for r in rs], [{"declared": DECLARED, "_dir": "/runs/x"}])


def test_sr_kscr_and_intervals(report):
    g = report.per_mode["gui"]
    assert (g.trials, g.successes, g.tasks) == (6, 3, 3)
    assert g.sr == 0.5 and g.kscr == pytest.approx((1 + 1 + 0.5 + 0.25 + 1 + 0) / 6)
    assert (round(g.sr_low, 4), round(g.sr_high, 4)) == (0.1876, 0.8124)  # Wilson 3/6
    assert report.per_mode_difficulty["gui"]["Medium"].sr == 0.0
    assert report.per_difficulty["Easy"].trials == 3 and report.overall.trials == 9
    assert report.per_task["a/3:gui"].sr == 0.5


def test_wes_by_hand(report):
    w = report.wes["gui"]
    assert w.step_cap == 20 and w.step_cap_source == "the trials' step cap"
    # rewards: a/1 min(1, 4/4) = 1 and min(1, 4/2) = 1; a/3 12/24 = 0.5; failed steps 10, 20, 6 -> mean 12
    assert w.value == pytest.approx((1 + 1 + 0.5) / 6 * (1 - 12 / 20))
    # grouped: a/1 2/4 and 2/2 = 1; a/3 6/24 = 0.25 (a/2 declares no groups, and failed anyway)
    assert w.grouped == pytest.approx((0.5 + 1 + 0.25) / 6 * (1 - 12 / 20))
    assert w.grouped_tasks == 2
    # mcp: successes 4/1 and 8/2 capped at 1; one failure of 3 steps
    assert report.wes["mcp"].value == pytest.approx(2 / 3 * (1 - 3 / 20))


def test_implemented_and_strict_count_the_stub(report):
    i = report.implemented_strict["gui"]
    # per task SR: a/1 1.0, a/2 0.0, a/3 0.5 -> passed 1.5 of 3 runnable, of 4 declared
    assert (i.passed, i.runnable, i.declared) == (1.5, 3, 4)
    assert i.implemented == pytest.approx(0.5) and i.strict == pytest.approx(0.375)
    assert i.not_runnable == {"a/4": "stub: needs an add-on"}


def test_pass_k(report):
    k1, k2 = report.pass_k["gui"]
    assert (k1.k, k2.k) == (1, 2)
    assert k1.pass_at_k == pytest.approx(0.5)            # mean of 1, 0, 1/2
    assert k2.pass_at_k == pytest.approx(2 / 3)          # a/1 and a/3 pass in some of 2
    assert k2.pass_hat_k == pytest.approx(1 / 3)         # only a/1 passes in both


def test_cost_failures_and_prices(report):
    c = report.cost["gui"]
    assert c.tool_calls == 30 and c.tool_calls_by_kind == {"bash": 4, "gui": 26} and c.mcp_rate == 0
    assert c.dollars == 0.0  # no tokens: an oracle costs nothing
    m = report.cost["mcp"]
    assert m.mcp_rate == pytest.approx(5 / 6)
    # 1M input at $3, 100k output at $15, 2M cache reads at $0.30
    assert m.dollars == pytest.approx(3 + 1.5 + 0.6)
    assert report.failures_by_mode == {"gui": {"step_cap": 1, "evaluated_failed": 1, "app_closed": 1},
                                       "mcp": {"evaluated_failed": 1}}
    assert price_for({"claude-sonnet-4-5": Price(input=1, output=1, cache_write=1, cache_read=1)}, "claude-sonnet-4-5-2025") is not None
    assert price_for({}, "some-model") is None


def test_testbed_failures_are_in_no_figure_but_the_cost_and_their_own():
    rs = [trial("a/1", "gui", 0, True, 4, by_kind={"gui": 4}), trial("a/1", "gui", 1, False, 3, failure="app_crash"),
          trial("a/2", "gui", 0, False, 5, failure="setup_error"), trial("a/3", "gui", 0, False, 6, failure="app_closed"),
          trial("a/3", "gui", 1, False, 2, failure="out_of_memory"), trial("a/3", "gui", 2, False, 2, failure="probe_error")]
    rep = build([("/runs/x", r) for r in rs], [{"declared": DECLARED, "_dir": "/runs/x",
                                                "resumed": [{"rerun_testbed": ["a-2__gui__3"]}]}])
    g = rep.per_mode["gui"]
    # judged: a/1 #0 (pass) and a/3 #0 (the agent quit the app): the other four are the testbed's
    assert (g.trials, g.successes, g.tasks, g.sr) == (2, 1, 2, 0.5) and rep.overall.trials == 2
    assert rep.testbed_failures == {"app_crash": 1, "out_of_memory": 1, "probe_error": 1, "setup_error": 1}
    assert rep.testbed_trials == ["a/1:gui#1", "a/2:gui#0", "a/3:gui#1", "a/3:gui#2"] and rep.testbed_reruns == 1
    assert [r.testbed_failure for r in rep.trial_rows] == [False, True, True, False, True, True]
    assert rep.pass_k["gui"][0].tasks == 2 and rep.per_task.keys() == {"a/1:gui", "a/3:gui"}
    assert rep.cost["gui"].trials == 6 and rep.failures_by_mode["gui"]["app_crash"] == 1
    i = rep.implemented_strict["gui"]
    # a/2 had no judged trial: not measured, so not runnable here; STRICT counts it as a failure
    assert (i.passed, i.runnable, i.declared) == (1.0, 2, 4) and i.not_runnable["a/2"].startswith("testbed_failure: ")


def test_unknown_model_has_no_dollar_figure():
    r = trial("a/1", "mcp", 0, True, 1, usage=Usage(input_tokens=10, model="my-local-model"))
    assert build([("/r", r)], [{}]).cost["mcp"].dollars is None


def test_compare_pairs_trials_per_difficulty():
    a = [trial("a/1", "hybrid", 0, True, 2), trial("a/2", "hybrid", 0, True, 2), trial("a/3", "hybrid", 0, False, 2)]
    b = [trial("a/1", "gui", 0, True, 2), trial("a/2", "gui", 0, False, 2), trial("a/3", "gui", 0, False, 2),
         trial("a/3", "gui", 1, True, 2)]
    cmp = compare(a, b, "A", "B")
    assert cmp.paired_on == "task, trial" and cmp.unpaired_b == 1
    overall = [r for r in cmp.rows if r.difficulty == "All"][0]
    assert (overall.pairs, overall.both, overall.only_a, overall.only_b, overall.neither) == (3, 1, 1, 0, 1)
    assert overall.sr_a == pytest.approx(2 / 3) and overall.difference == pytest.approx(1 / 3)
    assert overall.mode == "hybrid vs gui"
    assert [r.difficulty for r in cmp.rows] == ["Easy", "Medium", "Hard", "All"]
    with pytest.raises(ValueError, match="pick one mode"):
        compare(a + b, b[:1], "A", "B")
    same = compare(a, a, "A", "A2")
    assert same.paired_on == "task, mode, trial" and all(r.difference == 0 for r in same.rows)


def test_the_terminal_report_fits_80_columns(report):
    from rich.console import Console

    from mcpworld.report.text import print_report

    console = Console(width=80, record=True, color_system=None)
    print_report(report, console)
    text = console.export_text()
    assert "…" not in text, "a header or cell was cut short"
    assert max(len(line) for line in text.splitlines()) <= 80
    for header in ("IMPLEMENTED", "STRICT", "WES", "KSCR", "steps/trial", "MCP rate"):
        assert header in text


def test_strict_both_ways_and_difficulty_both_ways():
    # a/2 declares only gui; in mcp it is left out of STRICT and counted as a failure in STRICT all (the paper's)
    declared = {"a/1": {"status": "ready", "modes": ["gui", "mcp"]}, "a/2": {"status": "ready", "modes": ["gui"]},
                "a/3": {"status": "ready", "modes": ["gui", "mcp"]}}
    relabel = trial("a/3", "mcp", 0, True, 3).model_copy(update={"human_steps": 3})  # labelled Hard, 3 GUI steps
    rep = build([("/r", r) for r in (trial("a/1", "mcp", 0, True, 1), relabel, trial("a/1", "gui", 0, False, 9))],
                [{"declared": declared}])
    i = rep.implemented_strict["mcp"]
    assert (i.passed, i.runnable, i.declared, i.chosen) == (2, 2, 2, 3)
    assert i.strict == 1.0 and i.strict_all == pytest.approx(2 / 3) and i.not_declared == ["a/2"]
    g = rep.implemented_strict["gui"]
    assert (g.declared, g.chosen, g.strict, g.strict_all) == (3, 3, 0.0, 0.0)
    assert set(rep.per_mode_difficulty["mcp"]) == {"Easy", "Hard"}
    assert set(rep.per_mode_measured_difficulty["mcp"]) == {"Easy"}
    assert rep.per_mode_measured_difficulty["mcp"]["Easy"].trials == 2
    assert rep.relabelled == {"a/3": ["Hard", "Easy"]}
    assert [r.measured_difficulty for r in rep.trial_rows] == ["Easy", "Easy", "Easy"]


def test_tasks_that_cannot_run_take_a_line_per_reason():
    from mcpworld.report.build import not_runnable_lines

    why = {f"zotero/{n}": "declared: Zotero is not installed" for n in range(1, 17)}
    why["qbittorrent/173"] = "build_missing: its hooks need qBittorrent's source build"
    lines = not_runnable_lines(why)
    assert len(lines) == 2
    assert lines[0] == ("16 tasks (zotero/1, zotero/2, zotero/3, zotero/4 and 12 more): declared: Zotero is not "
                        "installed")
    assert lines[1] == "1 task (qbittorrent/173): build_missing: its hooks need qBittorrent's source build"


def test_a_task_whose_source_build_is_missing_is_declared_not_runnable():
    """Its set-up would fail for want of the build: a reason with the command that builds it, not a failure."""
    from mcpworld.config.load import load_tasks
    from mcpworld.runner import declared
    from mcpworld.verify import lacks_build

    tasks = load_tasks()
    source = [rt for rt in tasks.values() if rt.task.status == "ready" and rt.task.app_build == "source"]
    assert source, "no ready task needs a source build"
    runnable, info = declared(source, "docker")
    for rt in source:
        if lacks_build(rt):
            assert rt not in runnable and info[rt.key]["status"] == "build_missing"
            assert f"mcpworld apps build {rt.app.id} --from-source" in info[rt.key]["reason"]
        else:
            assert rt in runnable
    given = declared(source, "docker", app_build=Path("/some/build"))[0]  # the user names a build: theirs to judge
    assert given == source
