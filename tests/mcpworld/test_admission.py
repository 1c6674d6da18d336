"""`--parallel auto`: the admission rule, and a real run admitted by it."""

import json

from mcpworld.admission import DEFAULT_PEAK_MB, MARGIN, admit, app_peak_mb
from tests.mcpworld.test_fixture_app import mcpworld
from tests.mcpworld.test_resume import content_tree, lines


def test_the_rule_admits_by_memory_left_after_starting_environments_and_by_cpu():
    assert admit(available_mb=100, starting_mb=0, peak_mb=1000, cpu_busy=1.0, running=0)  # one always runs
    assert admit(available_mb=4000, starting_mb=0, peak_mb=1000, cpu_busy=0.5, running=3)
    assert not admit(available_mb=4000, starting_mb=3000, peak_mb=1000, cpu_busy=0.5, running=3)  # still starting
    assert not admit(available_mb=MARGIN * 1000 - 1, starting_mb=0, peak_mb=1000, cpu_busy=0.1, running=1)
    assert not admit(available_mb=64000, starting_mb=0, peak_mb=1000, cpu_busy=0.95, running=1)  # CPU saturated


def test_an_app_never_measured_gets_the_default_peak(tmp_path):
    assert app_peak_mb(tmp_path) == DEFAULT_PEAK_MB
    (tmp_path / "measured.json").write_text(json.dumps({"peak_mb_per_env": 321.5}))
    assert app_peak_mb(tmp_path) == 321.5


def test_a_run_with_parallel_auto_admits_every_trial_and_logs_why(tmp_path):
    root, run = content_tree(tmp_path), tmp_path / "run"
    r = mcpworld(root, "run", "--mode", "mcp", "--trials", "3", "--parallel", "auto", "--out", str(run))
    assert r.returncode == 0, r.stderr
    assert len(lines(run)) == 3 and all(x["success"] for x in lines(run))
    admission = json.loads((run / "admission.json").read_text())
    assert len(admission["decisions"]) == 3 and admission["most"] >= 1
    assert all(d["peak_mb"] == DEFAULT_PEAK_MB for d in admission["decisions"])  # the fixture app is not measured
    assert json.loads((run / "run.json").read_text())["parallel"] == "auto"
    r = mcpworld(root, "run", "--mode", "mcp", "--parallel", "0", "--out", str(tmp_path / "bad"))
    assert r.returncode == 2 and "--parallel" in r.stderr
