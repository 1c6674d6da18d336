"""Metric functions over trial outcomes: pure, so each can be checked against hand-computed cases.

- SR: trials whose goal was verified, over trials. KSCR: key steps reached over key steps annotated,
  per trial, then averaged (the paper, section 4.1); by progress: the reached prefix of the ordered steps.
- Difficulty from human GUI steps as in the paper: Easy 1-5, Medium 6-10, Hard more than 10.
- WES (OSWorld-Human): (1/n) * sum_t r_t * min(1, t_human / t_agent) * (1 - mean steps of failed tasks / S).
- IMPLEMENTED = passed / runnable tasks, STRICT = passed / all declared tasks (macbench), always together.
- pass@k (some of k trials succeed) and pass^k (all k succeed), with the unbiased estimators from n >= k
  trials, and the Wilson score interval for a proportion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def rate(successes: float, n: int) -> float:
    return successes / n if n else 0.0


def kscr(reached: Sequence[bool]) -> float:
    """One trial: the share of annotated key steps reached (1.0 for a task without key steps)."""
    return sum(reached) / len(reached) if reached else 1.0


def kscr_by_progress(reached: Sequence[bool]) -> float:
    """One trial: how far along the ordered key steps it got (the reached prefix), as a share."""
    if not reached:
        return 1.0
    prefix = 0
    for r in reached:
        if not r:
            break
        prefix += 1
    return prefix / len(reached)


def difficulty(human_steps: int | None) -> str:
    if human_steps is None:
        return "Unknown"
    if human_steps <= 5:
        return "Easy"
    if human_steps <= 10:
        return "Medium"
    return "Hard"


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval (95% by default) for successes out of n; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # p inside despite rounding


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k trials drawn from n (c of them successes) succeeds: 1 - C(n-c,k)/C(n,k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} trials, not {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all of k trials drawn from n (c of them successes) succeed: C(c,k)/C(n,k)."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} trials, not {n}")
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class EfficiencyCase:
    """One task's outcome for WES: reward r (1 success, 0 failure), human steps, agent steps."""

    reward: float
    human_steps: int
    agent_steps: int


def wes(cases: Sequence[EfficiencyCase], step_cap: int) -> float:
    """Weighted Efficiency Score: successes weighted by min(1, human/agent steps), times one global
    penalty for the mean step count of the failed tasks relative to the step cap S."""
    if not cases:
        return 0.0
    if step_cap <= 0:
        raise ValueError("the step cap must be positive")
    failed = [c.agent_steps for c in cases if c.reward == 0]
    penalty = 1 - (sum(failed) / len(failed)) / step_cap if failed else 1.0
    weighted = sum(c.reward * min(1.0, c.human_steps / c.agent_steps) if c.agent_steps else c.reward
                   for c in cases)
    return weighted / len(cases) * penalty


def implemented_strict(passed: float, runnable: int, declared: int) -> tuple[float, float]:
    """(IMPLEMENTED, STRICT): passed over runnable tasks, and passed over every declared task."""
    if runnable > declared:
        raise ValueError("more runnable tasks than declared ones")
    return rate(passed, runnable), rate(passed, declared)


def paired_difference_interval(a: int, b: int, c: int, d: int, z: float = 1.959964) -> tuple[float, float, float]:
    """Difference of two paired proportions, p_A - p_B, with the Agresti-Min (2005) interval.

    The pairs are counted as a (both succeed), b (only A), c (only B), d (neither). Agresti-Min adds
    1/2 to each cell and takes the Wald interval of the adjusted table; unlike Newcombe's score
    method it keeps a width when there are no discordant pairs. Returns (p_A - p_B, low, high); with
    no pairs, (0, -1, 1).
    """
    n = a + b + c + d
    if n == 0:
        return 0.0, -1.0, 1.0
    bs, cs, ns = b + 0.5, c + 0.5, n + 2.0
    centre = (bs - cs) / ns
    half = z * math.sqrt((bs + cs) - (bs - cs) ** 2 / ns) / ns
    return (b - c) / n, max(-1.0, centre - half), min(1.0, centre + half)
