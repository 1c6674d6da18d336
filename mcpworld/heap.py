"""The process's heap before a long event loop (a command's, a Ray worker's)."""

from __future__ import annotations


def keep_heap() -> None:
    """Before a long asyncio run: what is alive by now (modules, the MCP SDK's protocol types, the configs)
    lives as long as the process, so the collector's full passes stop walking it. Before, a full pass took
    50-80 ms in the gateway's process: one tools/list in 40 waited for it. Garbage goes first, so a process
    that runs trial after trial (a Ray worker) freezes no leftovers of the last one."""
    import gc

    import mcp  # noqa: F401  (its types are most of the heap: loaded before the freeze)

    gc.collect()
    gc.freeze()
