"""keep_heap: what is alive is frozen, what is garbage is gone first (a Ray worker calls it before each trial)."""

import subprocess
import sys

from mcpworld import paths

SCRIPT = """
import gc, weakref
import mcp
from mcpworld.heap import keep_heap
gc.disable()  # only keep_heap may collect
class Node: pass
leftover = Node(); leftover.me = leftover  # a cycle the last trial left: garbage, not yet collected
gone = weakref.ref(leftover); del leftover
kept = Node(); kept.me = kept
keep_heap()
assert gone() is None, "a leftover cycle was frozen instead of collected"
assert gc.get_freeze_count() > 10000, gc.get_freeze_count()  # the modules and the MCP SDK's types
assert not any(o is kept for o in gc.get_objects()), "a live object is still walked by full passes"
print("ok")
"""


def test_keep_heap_collects_then_freezes():
    r = subprocess.run([sys.executable, "-c", SCRIPT], cwd=paths.ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
