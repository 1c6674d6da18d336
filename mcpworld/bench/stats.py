"""A figure: repeated samples summarized (min, median, p95, p99), with the baseline it is read against."""

from __future__ import annotations

import math
import statistics

from pydantic import BaseModel


class Stat(BaseModel):
    n: int
    min: float
    median: float
    p95: float
    p99: float
    max: float


class Figure(BaseModel):
    part: str           # reset, latency, screenshot, gateway, parallel
    name: str
    unit: str
    value: Stat
    baseline_name: str | None = None
    baseline: Stat | None = None
    target: str = ""     # the target, in words, where there is one
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """Median over the baseline's median."""
        if self.baseline is None or not self.baseline.median:
            return None
        return self.value.median / self.baseline.median


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sample."""
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))]


def stat(xs: list[float]) -> Stat:
    if not xs:
        raise ValueError("no samples")
    return Stat(n=len(xs), min=min(xs), median=statistics.median(xs), p95=percentile(xs, 95),
                p99=percentile(xs, 99), max=max(xs))
