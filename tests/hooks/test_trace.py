"""The tracer on a real process: calls of matching exports arrive with decoded arguments."""

import subprocess
import sys
import time

from probe_runtime.trace import Tracer, format_call

TARGET = ("import os, time\n"
          "for _ in range(600):\n"
          "    os.getenv('X'); os.access('/mcpworld-trace-probe', os.F_OK); time.sleep(0.02)\n")


def test_trace_reports_calls_with_string_arguments():
    target = subprocess.Popen([sys.executable, "-c", TARGET])
    calls = []
    tracer = Tracer(target.pid, "access", module="libc.so*")
    try:
        assert tracer.start(calls.append) == 1
        deadline = time.time() + 20
        while time.time() < deadline and len(calls) < 3:
            time.sleep(0.05)
    finally:
        tracer.stop()
        target.kill()
        target.wait()
    assert len(calls) >= 3
    c = calls[0]
    assert c["function"] == "access" and c["module"].startswith("libc.so")
    assert c["args"][0] == '"/mcpworld-trace-probe"'
    assert format_call(c).startswith('access("/mcpworld-trace-probe", ')
