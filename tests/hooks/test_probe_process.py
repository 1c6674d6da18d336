"""What a probe does to the app's process as it starts: a process that reads a run config holds the run's
secret and makes itself non-dumpable first (a program of the app's own user cannot read its memory; only root
can); an in-app Python probe then closes the process to new programs (probe_runtime/inapp.py), on every
thread, for the app's C code as for its Python."""

import json
import subprocess
import sys
import textwrap

from mcpworld import paths


def _run(body: str, **values) -> dict:
    script = "".join(f"{k} = {v!r}\n" for k, v in {"REPO": str(paths.ROOT), **values}.items())
    p = subprocess.run([sys.executable, "-c", script + textwrap.dedent(body)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def test_reading_the_run_config_makes_the_process_non_dumpable(tmp_path):
    config = tmp_path / "probe.json"
    config.write_text(json.dumps({"token": "t" * 32}))
    out = _run('''
        import ctypes, json, os, sys
        sys.path.insert(0, REPO)
        from probe_runtime import client
        libc = ctypes.CDLL(None)
        before = libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
        cfg = client.read_config(CONFIG)
        print(json.dumps({"before": before, "after": libc.prctl(3, 0, 0, 0, 0), "token": cfg["token"],
                          "config_left": os.path.exists(CONFIG)}))
    ''', CONFIG=str(config))
    assert out == {"before": 1, "after": 0, "token": "t" * 32, "config_left": False}


def test_a_closed_process_starts_no_program_on_any_thread():
    out = _run('''
        import ctypes, json, os, subprocess, sys, threading
        sys.path.insert(0, REPO)
        from probe_runtime import inapp
        out, go, done = {}, threading.Event(), threading.Event()

        def attempt():
            try:
                return subprocess.run(["true"]).returncode
            except PermissionError:
                return "refused"

        def other_thread():  # started before the filter: it is closed too
            go.wait()
            out["thread"] = attempt()
            done.set()

        threading.Thread(target=other_thread).start()
        out["before"] = attempt()
        out["closed"] = inapp.close_programs()
        out["after"] = attempt()
        go.set(); done.wait()
        out["libc_system"] = ctypes.CDLL(None).system(b"true") >> 8  # C code: the shell cannot start
        pid = os.fork()  # the process itself goes on: a fork runs
        if pid == 0:
            os._exit(7)
        out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        print(json.dumps(out))
    ''')
    assert out == {"before": 0, "closed": None, "after": "refused", "thread": "refused", "libc_system": 127,
                   "fork": 7}
