"""Append-only JSONL event log: each event hits the file (os-level write) before it is acknowledged."""

from __future__ import annotations

import json
import os
from pathlib import Path

from evaluator.events import Event


class EventLog:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # unbuffered at the Python level: once write() returns, the kernel has the line,
        # so a killed runner loses nothing already acknowledged.
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.events: list[Event] = []

    def append(self, event: Event) -> None:
        line = event.model_dump_json() + "\n"
        os.write(self._fd, line.encode())
        self.events.append(event)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @staticmethod
    def read(path: Path) -> list[Event]:
        """Read a log back; a torn last line (writer killed mid-line) is skipped."""
        out = []
        for line in path.read_text().splitlines():
            try:
                out.append(Event.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValueError):
                continue
        return out
