"""`--parallel auto`: a new environment starts only while the machine has room for it.

The rule (`admit`): one environment always runs (a run must progress). Another starts when
  * the memory still available, less the peaks of the environments started in the last STARTUP seconds
    (an app does not hold its memory yet while it starts), covers MARGIN times the app's measured peak
    per environment (apps/<app>/measured.json, written by `mcpworld bench run --part memory`; DEFAULT_PEAK_MB
    for an app never measured), and
  * the CPU is not saturated: under BUSY of all cores over the last second.
The decision is re-taken every POLL seconds while trials wait, and each one is logged.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

MEASURED = "measured.json"   # kept with the app, beside NOTES.md; documentation to the proofs (no task hash covers it)
DEFAULT_PEAK_MB = 1500.0
MARGIN = 1.25
STARTUP = 10.0
BUSY = 0.90
POLL = 1.0


def app_peak_mb(app_folder: Path) -> float:
    """The app's measured peak memory per environment (MB), or the default for an app never measured."""
    try:
        return float(json.loads((app_folder / MEASURED).read_text())["peak_mb_per_env"])
    except (OSError, KeyError, ValueError, TypeError):
        return DEFAULT_PEAK_MB


def admit(available_mb: float, starting_mb: float, peak_mb: float, cpu_busy: float, running: int) -> bool:
    if running == 0:
        return True
    return available_mb - starting_mb >= MARGIN * peak_mb and cpu_busy < BUSY


@dataclass
class Admission:
    """Admits trials by the rule above; `log` keeps every decision that let one start."""
    log: list[dict] = field(default_factory=list)
    running: int = 0
    most: int = 0
    _started: list[tuple[float, float]] = field(default_factory=list)  # (when, its peak) of recent starts
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def acquire(self, peak_mb: float) -> None:
        async with self._lock:  # one decision at a time, in the order trials asked
            while True:
                now = time.monotonic()
                self._started = [(t, p) for t, p in self._started if now - t < STARTUP]
                starting = sum(p for _, p in self._started)
                available = psutil.virtual_memory().available / 2**20
                busy = psutil.cpu_percent(interval=None) / 100.0
                if admit(available, starting, peak_mb, busy, self.running):
                    break
                await asyncio.sleep(POLL)
            self.running += 1
            self.most = max(self.most, self.running)
            self._started.append((now, peak_mb))
            self.log.append({"at": time.time(), "running": self.running, "available_mb": round(available),
                             "starting_mb": round(starting), "peak_mb": peak_mb, "cpu_busy": round(busy, 2)})

    def release(self) -> None:
        self.running -= 1


def write_measured(app_folder: Path, peak_mb: float, host: dict) -> None:
    (app_folder / MEASURED).write_text(json.dumps({
        "peak_mb_per_env": round(peak_mb, 1), "measured_at": time.strftime("%Y-%m-%d"), "machine": host,
        "note": "written by `mcpworld bench run --part memory`; read by `mcpworld run --parallel auto`"}, indent=1) + "\n")
