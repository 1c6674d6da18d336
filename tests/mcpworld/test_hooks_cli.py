"""`mcpworld hooks trace` on the real app, and `mcpworld hooks check`."""

import json
import subprocess
import sys

from mcpworld import paths


def mcpworld(*args):
    return subprocess.run([sys.executable, "-m", "mcpworld.cli", *args], cwd=paths.ROOT, capture_output=True,
                          text=True, timeout=300)


def test_trace_prints_and_saves_calls_of_the_running_app(tmp_path):
    out = tmp_path / "trace.jsonl"
    r = mcpworld("hooks", "trace", "--app", "anki", "--pattern", "clock_gettime", "--module", "libc.so*",
                 "--seconds", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "tracing 1 function(s)" in " ".join(r.stderr.split())
    calls = [json.loads(line) for line in out.read_text().splitlines()]
    assert calls and calls[0]["function"] == "clock_gettime" and calls[0]["module"].startswith("libc.so")
    assert calls[0]["backtrace"] and "clock_gettime(" in r.stderr


def test_check_shows_which_event_reached_each_key_step():
    r = mcpworld("hooks", "check", "anki/150")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    for step in ("deck_removed", "deletion_undone"):
        assert step in text
    assert "undo" in text and "pass" in text
