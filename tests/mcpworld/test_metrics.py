"""Metric functions against hand-computed cases."""

import math

import pytest

from mcpworld import metrics as m


def test_kscr_and_its_progress_variant():
    assert m.kscr([True, False, True]) == pytest.approx(2 / 3)
    assert m.kscr_by_progress([True, False, True]) == pytest.approx(1 / 3)  # stuck after the first step
    assert m.kscr_by_progress([True, True, True]) == 1.0
    assert m.kscr_by_progress([False, True]) == 0.0
    assert m.kscr([]) == m.kscr_by_progress([]) == 1.0


def test_difficulty_buckets_follow_the_paper():
    assert [m.difficulty(s) for s in (1, 5, 6, 10, 11, None)] == ["Easy", "Easy", "Medium", "Medium", "Hard", "Unknown"]


def test_wilson_interval():
    lo, hi = m.wilson_interval(8, 10)
    # p = 0.8, z = 1.96: centre (0.8 + 0.19208) / 1.38416 = 0.71674, half-width 0.22658
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
    lo, hi = m.wilson_interval(0, 5)
    assert lo == 0.0 and 0.4 < hi < 0.45
    assert m.wilson_interval(0, 0) == (0.0, 1.0)


def test_pass_at_k_and_pass_hat_k():
    # 5 trials, 2 successes, k = 2: C(3,2)/C(5,2) = 3/10 fail both; C(2,2)/C(5,2) = 1/10 pass both
    assert m.pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert m.pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert m.pass_at_k(3, 3, 3) == m.pass_hat_k(3, 3, 3) == 1.0
    assert m.pass_at_k(4, 0, 2) == m.pass_hat_k(4, 0, 2) == 0.0
    assert m.pass_at_k(1, 1, 1) == 1.0
    with pytest.raises(ValueError):
        m.pass_hat_k(2, 1, 3)


def test_wes_has_the_slides_structure():
    cases = [m.EfficiencyCase(1, 5, 10),   # success in twice the human steps: weight 0.5
             m.EfficiencyCase(1, 4, 2),    # success in fewer steps than a human: capped at 1
             m.EfficiencyCase(0, 6, 20),   # failures: their mean steps (25) against the cap (50)
             m.EfficiencyCase(0, 6, 30)]
    # (0.5 + 1 + 0 + 0) / 4 * (1 - 25 / 50)
    assert m.wes(cases, step_cap=50) == pytest.approx(0.1875)
    assert m.wes([m.EfficiencyCase(1, 3, 3)], step_cap=50) == 1.0  # no failures: no penalty
    assert m.wes([], 50) == 0.0
    with pytest.raises(ValueError):
        m.wes(cases, 0)


def test_implemented_and_strict_are_reported_together():
    implemented, strict = m.implemented_strict(passed=8, runnable=10, declared=12)
    assert implemented == 0.8 and math.isclose(strict, 8 / 12)
    with pytest.raises(ValueError):
        m.implemented_strict(1, 5, 4)


def test_paired_difference_interval_agresti_min():
    # 20 pairs: 10 both succeed, 6 only A, 1 only B, 3 neither. p_A = 0.8, p_B = 0.55, difference 0.25.
    d, lo, hi = m.paired_difference_interval(10, 6, 1, 3)
    assert d == pytest.approx(0.25)
    # By hand: add 1/2 to each cell: b* = 6.5, c* = 1.5, n* = 22; centre 5/22 = 0.22727;
    # variance ((6.5 + 1.5) - 5^2/22) / 22^2 = 6.86364 / 484 = 0.014181, se 0.119084, half 0.233400
    assert (round(lo, 4), round(hi, 4)) == (-0.0061, 0.4607)
    # swapping the sides mirrors the interval
    d2, lo2, hi2 = m.paired_difference_interval(10, 1, 6, 3)
    assert (d2, lo2, hi2) == pytest.approx((-d, -hi, -lo))
    assert m.paired_difference_interval(0, 0, 0, 0) == (0.0, -1.0, 1.0)
    # no discordant pairs: the difference is 0 and the interval still has width (1/2 * 1.96 / 12 each way)
    d, lo, hi = m.paired_difference_interval(5, 0, 0, 5)
    assert d == 0 and (lo, hi) == pytest.approx((-1.959964 / 12, 1.959964 / 12))
    # all pairs discordant one way: clipped to [-1, 1]
    assert m.paired_difference_interval(0, 8, 0, 0)[2] == 1.0
