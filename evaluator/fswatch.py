"""File milestones: a pyinotify watcher that turns file events into `fs` events in the same pipeline."""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

import pyinotify

# a folder made and renamed away at once (an extension's temporary folder) cannot be watched any more: not an error
pyinotify.log.setLevel(logging.CRITICAL)

KIND_MASKS = {
    "create": pyinotify.IN_CREATE, "modify": pyinotify.IN_MODIFY, "close_write": pyinotify.IN_CLOSE_WRITE,
    "delete": pyinotify.IN_DELETE, "move_to": pyinotify.IN_MOVED_TO, "move_from": pyinotify.IN_MOVED_FROM,
    "attrib": pyinotify.IN_ATTRIB,
}
MASK_KINDS = {v: k for k, v in KIND_MASKS.items()}


@dataclass(frozen=True)
class Watch:
    event: str        # milestone event name
    pattern: str      # absolute path, may hold * ? [] globs
    kinds: tuple[str, ...]


def _existing_ancestor(pattern: str) -> str:
    path = pattern
    while any(c in path for c in "*?[") or not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


class FileWatcher:
    """Watches the nearest existing folder of each pattern (recursively, new folders too)."""

    def __init__(self, watches: list[Watch], emit: Callable[[str, dict], None]):
        self.watches, self.emit = watches, emit
        self._wm = pyinotify.WatchManager()
        self._notifier = pyinotify.ThreadedNotifier(self._wm, self._on_event)
        self._notifier.daemon = True

    def start(self) -> None:
        mask = pyinotify.IN_CREATE  # always, so that new subfolders get watched (auto_add)
        for w in self.watches:
            for k in w.kinds:
                mask |= KIND_MASKS[k]
        for root in sorted({_existing_ancestor(w.pattern) for w in self.watches}):
            self._wm.add_watch(root, mask, rec=True, auto_add=True, quiet=True)
        self._notifier.start()

    def stop(self) -> None:
        self._notifier.stop()

    def _on_event(self, e: pyinotify.Event) -> None:
        kind = next((k for m, k in MASK_KINDS.items() if e.mask & m), None)
        if kind is None:
            return
        for w in self.watches:
            if kind in w.kinds and fnmatch.fnmatchcase(e.pathname, w.pattern):
                try:
                    size = os.path.getsize(e.pathname) if kind not in ("delete", "move_from") else None
                except OSError:
                    size = None
                self.emit(w.event, {"path": e.pathname, "kind": kind, "size": size, "is_dir": bool(e.dir)})
