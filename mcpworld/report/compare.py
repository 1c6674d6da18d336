"""Paired comparison of two conditions (two runs, or two modes of one run), as in the paper's Table 9.

Trials pair up on (task, trial number), and on the mode too when both sides cover the same modes
(bash vs no-bash over gui/mcp/hybrid). The difference in SR comes with the Agresti-Min paired interval.
"""

from __future__ import annotations

from pydantic import BaseModel

from mcpworld import metrics
from gateway.modes import MODES
from mcpworld.report.build import DIFFICULTIES
from mcpworld.results import TrialResult


class CompareRow(BaseModel):
    difficulty: str
    mode: str
    pairs: int
    sr_a: float
    sr_b: float
    difference: float
    low: float
    high: float
    both: int
    only_a: int
    only_b: int
    neither: int


class Comparison(BaseModel):
    a: str
    b: str
    paired_on: str
    rows: list[CompareRow]
    unpaired_a: int
    unpaired_b: int


def _side(rs: list[TrialResult], mode: str | None, label: str) -> list[TrialResult]:
    if mode is not None:
        picked = [r for r in rs if r.mode == mode]
        if not picked:
            raise ValueError(f"{label} has no trials in mode '{mode}' (it has: {', '.join(sorted({r.mode for r in rs}))})")
        return picked
    return rs


def compare(a: list[TrialResult], b: list[TrialResult], label_a: str, label_b: str,
            mode_a: str | None = None, mode_b: str | None = None) -> Comparison:
    a, b = _side(a, mode_a, label_a), _side(b, mode_b, label_b)
    modes_a, modes_b = {r.mode for r in a}, {r.mode for r in b}
    by_mode = modes_a == modes_b and mode_a is None and mode_b is None
    if not by_mode and (len(modes_a) > 1 or len(modes_b) > 1):
        raise ValueError(f"{label_a} has modes {sorted(modes_a)} and {label_b} {sorted(modes_b)}: "
                         "pick one mode per side (--mode-a, --mode-b)")

    def key(r: TrialResult) -> tuple:
        return (r.task, r.mode, r.trial) if by_mode else (r.task, r.trial)

    ia, ib = {key(r): r for r in a}, {key(r): r for r in b}
    common = [k for k in ia if k in ib]
    pairs = [(ia[k], ib[k]) for k in common]
    mode_label = lambda ra, rb: ra.mode if by_mode else (ra.mode if ra.mode == rb.mode else f"{ra.mode} vs {rb.mode}")  # noqa: E731

    cells: dict[tuple[str, str], list[tuple[TrialResult, TrialResult]]] = {}
    for ra, rb in pairs:
        cells.setdefault((ra.difficulty, mode_label(ra, rb)), []).append((ra, rb))
        cells.setdefault(("All", mode_label(ra, rb)), []).append((ra, rb))
    order = {d: i for i, d in enumerate((*DIFFICULTIES, "Unknown", "All"))}
    mode_order = {str(m): i for i, m in enumerate(MODES)}
    rows = []
    for (diff, mode), ps in sorted(cells.items(), key=lambda kv: (order.get(kv[0][0], 9), mode_order.get(kv[0][1], 9), kv[0][1])):
        both = sum(ra.success and rb.success for ra, rb in ps)
        only_a = sum(ra.success and not rb.success for ra, rb in ps)
        only_b = sum(rb.success and not ra.success for ra, rb in ps)
        neither = len(ps) - both - only_a - only_b
        d, lo, hi = metrics.paired_difference_interval(both, only_a, only_b, neither)
        rows.append(CompareRow(difficulty=diff, mode=mode, pairs=len(ps), sr_a=metrics.rate(both + only_a, len(ps)),
                               sr_b=metrics.rate(both + only_b, len(ps)), difference=d, low=lo, high=hi,
                               both=both, only_a=only_a, only_b=only_b, neither=neither))
    return Comparison(a=label_a, b=label_b, paired_on="task, mode, trial" if by_mode else "task, trial", rows=rows,
                      unpaired_a=len(ia) - len(common), unpaired_b=len(ib) - len(common))
