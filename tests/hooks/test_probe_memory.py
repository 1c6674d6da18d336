"""A process that reads a probe's run config holds the run's secret: it makes itself non-dumpable first, so a
program of the app's own user (one the app starts) cannot read that memory; only root can."""

import json
import subprocess
import sys
import textwrap

from mcpworld import paths

SCRIPT = textwrap.dedent('''
    import ctypes, json, os, sys
    sys.path.insert(0, REPO)
    from probe_runtime import client
    libc = ctypes.CDLL(None)
    before = libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
    cfg = client.read_config(CONFIG)
    print(json.dumps({"before": before, "after": libc.prctl(3, 0, 0, 0, 0), "token": cfg["token"],
                      "config_left": os.path.exists(CONFIG)}), flush=True)
''')


def test_reading_the_run_config_makes_the_process_non_dumpable(tmp_path):
    config = tmp_path / "probe.json"
    config.write_text(json.dumps({"token": "t" * 32}))
    script = f"REPO = {str(paths.ROOT)!r}\nCONFIG = {str(config)!r}\n" + SCRIPT
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out == {"before": 1, "after": 0, "token": "t" * 32, "config_left": False}
