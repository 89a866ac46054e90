"""Tests for ambppl.analysis.planning: enumeration, limits, simulation, batches, bad input."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.stats import dirichlet_multinomial, norm

import ambppl
from ambppl import dirichlet_var
from ambppl.analysis.planning import (
    answers_needed,
    expected_posterior_sd,
    expected_posterior_var,
    next_batch,
    plan,
)
from ambppl.cli import main

ENUM_REL_TOL = 1e-12


def compositions(m: int, k: int) -> np.ndarray:
    """Every vector of ``k`` non-negative integers summing to ``m`` (rows)."""
    rows = [c for c in itertools.product(range(m + 1), repeat=k) if sum(c) == m]
    return np.array(rows, dtype=np.int64).reshape(-1, k)


def enumerated(alpha: np.ndarray, m: int, measure: str, cant_solve: int | None) -> float:
    """E_new[Var(measure | alpha + new)] by summing over every possible set of new answers.

    Reference: the definition itself. The predictive pmf is scipy.stats.dirichlet_multinomial
    (the Dirichlet-multinomial DM(m, alpha)); the posterior variance is
    ambppl.dirichlet_var (tested in tests/maths/test_moments.py against exact fractions).
    """
    new = compositions(m, alpha.size)
    pmf = dirichlet_multinomial.pmf(new, alpha, m) if m > 0 else np.ones(1)
    var = dirichlet_var(alpha + new, measure, cant_solve=cant_solve)
    return float(np.sum(pmf * var))


# ------------------------------------------------------------ 1. brute-force enumeration
# (K, cant_solve, measure): K = 3 with can't-solve (last or first), K = 4 without.
SETUPS = [
    (3, -1, "amb"),
    (3, -1, "modified"),
    (3, 0, "amb"),
    (4, None, "amb"),
    (4, None, "modified"),
    (4, 1, "modified"),
]
COUNTS = {
    3: [[0, 0, 0], [5, 2, 1], [0, 0, 4], [7, 0, 0], [1, 3, 6]],
    4: [[0, 0, 0, 0], [5, 2, 1, 0], [0, 0, 0, 4], [2, 2, 2, 2], [9, 0, 1, 0]],
}
PRIORS = {
    3: [1.0, 0.5, [0.3, 2.0, 0.7]],
    4: [1.0, 0.5, [0.5, 1.5, 2.5, 0.25]],
}


@pytest.mark.parametrize(("k", "cant_solve", "measure"), SETUPS)
def test_matches_enumeration(k, cant_solve, measure):
    counts = np.array(COUNTS[k])
    worst = 0.0
    for prior in PRIORS[k]:
        alpha = counts + np.broadcast_to(np.asarray(prior, dtype=float), (k,))
        for m in range(7):
            got = expected_posterior_var(
                counts, m, measure=measure, prior=prior, cant_solve=cant_solve
            )
            for i in range(len(counts)):
                ref = enumerated(alpha[i], m, measure, cant_solve)
                worst = max(worst, abs(got[i] - ref) / ref)
    assert worst < ENUM_REL_TOL


def test_item_answered_only_cant_solve_enumeration():
    # the brief's "item answered only can't-solve", with a tiny and a non-symmetric prior
    for prior in (0.5, [0.2, 1.0, 3.0]):
        alpha = np.array([0, 0, 9]) + np.asarray(prior)
        for m in range(7):
            got = expected_posterior_var([0, 0, 9], m, prior=prior)
            ref = enumerated(alpha, m, "amb", -1)
            assert got == pytest.approx(ref, rel=ENUM_REL_TOL)


def test_one_proper_category_is_the_beta_result():
    # With C = 1, amb = q_cs and the expected posterior variance of a Beta(x, y) after m
    # Bernoulli draws is Var(x, y) * (x + y) / (x + y + m) (standard conjugate result).
    x, y = 2.5, 4.0  # alpha_cs, b
    var0 = x * y / ((x + y) ** 2 * (x + y + 1.0))
    for m in (0, 1, 7, 1000):
        got = expected_posterior_var([3, 2], m, prior=[1.0, 0.5])
        assert got == pytest.approx(var0 * (x + y) / (x + y + m), rel=1e-13)


# ------------------------------------------------------------ 2. m = 0, monotonicity, 1/m
CASES = [  # (counts, prior, cant_solve, measure)
    ([3, 1, 0], 1.0, -1, "amb"),
    ([0, 0, 4], 0.5, -1, "amb"),
    ([20, 3, 1], [0.3, 2.0, 0.7], -1, "modified"),
    ([5, 5, 2, 0], 1.0, None, "amb"),
    ([0, 6, 1, 2], 0.5, 0, "modified"),
]


@pytest.mark.parametrize(("counts", "prior", "cant_solve", "measure"), CASES)
def test_zero_extra_is_the_current_posterior_variance(counts, prior, cant_solve, measure):
    alpha = np.asarray(counts) + np.asarray(prior, dtype=float)
    got = expected_posterior_var(counts, 0, measure=measure, prior=prior, cant_solve=cant_solve)
    assert got == pytest.approx(dirichlet_var(alpha, measure, cant_solve=cant_solve), rel=1e-14)


@pytest.mark.parametrize(("counts", "prior", "cant_solve", "measure"), CASES)
def test_decreasing_in_extra(counts, prior, cant_solve, measure):
    ms = np.r_[np.arange(60), np.geomspace(60, 10_000, 25).round()].astype(int)
    rows = np.tile(counts, (ms.size, 1))
    v = expected_posterior_var(rows, ms, measure=measure, prior=prior, cant_solve=cant_solve)
    assert np.all(np.isfinite(v)) and np.all(v > 0)
    assert np.all(np.diff(v) < 0)


def delta_method_limit(alpha, cant_solve, measure, draws, rng):
    """Monte Carlo mean and standard error of lim_m m * E_new[Var(measure | alpha + new)].

    Reference: for large data the posterior variance is the delta-method variance
    g(q)^T (diag(q) - q q^T) g(q) / m (asymptotic normality of the posterior), g the
    gradient of the measure; averaged over q ~ Dirichlet(alpha). Independent of the
    closed form in ambppl.analysis.planning.
    """
    q = rng.dirichlet(alpha, size=draws)
    k = alpha.size
    cs = None if cant_solve is None else cant_solve % k
    proper = [i for i in range(k) if i != cs]
    c = len(proper)
    qp = q[:, proper]
    b = qp.sum(axis=1, keepdims=True)
    s = (qp * qp).sum(axis=1, keepdims=True)
    grad = np.zeros_like(q)
    grad[:, proper] = -2.0 * qp / b + s / b**2  # d amb / d q_k, k proper; d amb / d q_cs = 0
    if measure == "modified":  # (C amb - q_cs) / (C - 1)
        grad *= c / (c - 1.0)
        if cs is not None:
            grad[:, cs] -= 1.0 / (c - 1.0)
    gq = (grad * grad * q).sum(axis=1) - (grad * q).sum(axis=1) ** 2
    return gq.mean(), gq.std(ddof=1) / np.sqrt(draws)


@pytest.mark.parametrize(("counts", "prior", "cant_solve", "measure"), CASES)
def test_falls_like_one_over_m(counts, prior, cant_solve, measure):
    ms = np.array([2500, 5000, 10_000])
    rows = np.tile(counts, (3, 1))
    mv = ms * expected_posterior_var(rows, ms, measure=measure, prior=prior, cant_solve=cant_solve)
    # m * value converges, with an O(1/m) remainder: the increments halve as m doubles
    d1, d2 = mv[1] - mv[0], mv[2] - mv[1]
    assert 0.4 < d2 / d1 < 0.6
    alpha = np.asarray(counts) + np.asarray(prior, dtype=float)
    limit, se = delta_method_limit(alpha, cant_solve, measure, 200_000, np.random.default_rng(7))
    assert abs(mv[2] - limit) < 5 * se + 2 * abs(d2)


def test_large_extra_finite_and_non_negative():
    counts = np.array([[0, 0, 0], [0, 0, 50], [10**6, 3, 0], [1, 1, 10**5], [40, 0, 2]])
    for prior in (0.05, 1.0, [2.0, 0.1, 0.5]):
        for measure in ("amb", "modified"):
            v = expected_posterior_var(counts, 10_000, measure=measure, prior=prior)
            assert np.all(np.isfinite(v)) and np.all(v >= 0)
            assert np.all(v <= dirichlet_var(counts + np.asarray(prior), measure))


def mp_cs_value(alpha, m):
    """The module's own can't-solve formula (Notes) in 40-digit mpmath.

    Checks the floating-point evaluation at m = 10^4 (weights from log ratios summed from
    the mode), not the derivation; that is checked by enumeration and simulation. The
    beta-binomial weights come from the exact recurrence w_{j+1} / w_j in 40 digits.
    """
    with mp.workdps(40):
        a = [mp.mpf(float(x)) for x in alpha[:-1]]
        a_cs = mp.mpf(float(alpha[-1]))
        pairs = [(x, y) for i, x in enumerate(a) for y in a[i + 1 :]]
        b = sum(a)
        a0 = b + a_cs
        s = a0 + m
        e2 = sum(x * y for x, y in pairs)
        t = sum(x * y * (x - y) ** 2 for x, y in pairs)
        p2 = sum(x * x for x in a)
        den = b * (b + 1) * (b + 2) * (b + 3)
        c0 = 4 * ((b + 1) * t + (p2 + b) * e2) / den
        delta = (t + sum(x * x * (b - x) for x in a) + 2 * e2) / den
        var_s2 = c0 / (b * (b + 1))
        mean_s2 = (p2 + b) / (b * (b + 1))
        w = mp.beta(a_cs, b + m) / mp.beta(a_cs, b)  # P(j = 0)
        total = mp.mpf(0)
        for j in range(m + 1):
            n = m - j
            total += w * (b + n) * (c0 + 4 * n * delta) / (b + n + 1)
            if j < m:
                w *= (m - j) * (a_cs + j) / ((j + 1) * (b + m - j - 1))
        result = total / s**2 + a_cs * b * (var_s2 + mean_s2**2) / (a0 * (a0 + 1) * s)
        return float(result)


@pytest.mark.parametrize("alpha", [[0.05, 0.02, 3.0], [0.2, 0.3, 0.1], [1.0, 0.5, 1e5]])
def test_large_extra_against_high_precision(alpha):
    got = expected_posterior_var([0, 0, 0], 10_000, prior=alpha)
    ref = mp_cs_value(alpha, 10_000)
    assert abs(got - ref) / ref < 1e-12


# ------------------------------------------------------------ 3. simulation
SIM_CASES = [  # (counts, prior, cant_solve, measure)
    ([3, 1, 0], 1.0, -1, "amb"),
    ([0, 0, 4], 0.5, -1, "amb"),
    ([2, 7, 1], [0.3, 2.0, 0.7], -1, "modified"),
    ([5, 5, 2, 0], 1.0, None, "modified"),
]


@pytest.mark.parametrize(("counts", "prior", "cant_solve", "measure"), SIM_CASES)
def test_matches_simulation(counts, prior, cant_solve, measure):
    # Reference: the preposterior process simulated directly: q ~ Dirichlet(a),
    # new ~ Multinomial(m, q), then the posterior variance dirichlet_var(a + new).
    m, draws = 200, 40_000
    rng = np.random.default_rng(20240611)
    alpha = np.asarray(counts) + np.asarray(prior, dtype=float)
    q = rng.dirichlet(alpha, size=draws)
    new = rng.multinomial(m, q)
    var = dirichlet_var(alpha + new, measure, cant_solve=cant_solve)
    mean, se = var.mean(), var.std(ddof=1) / np.sqrt(draws)
    got = expected_posterior_var(counts, m, measure=measure, prior=prior, cant_solve=cant_solve)
    assert abs(got - mean) < 5 * se


# ------------------------------------------------------------ 4. vectorization
def test_batch_equals_item_by_item():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 30, size=(300, 4))
    counts[:5] = [[0, 0, 0, 0], [0, 0, 0, 9], [12, 0, 0, 0], [0, 0, 0, 0], [3, 3, 3, 3]]
    extra = rng.integers(0, 2000, size=300)
    extra[:4] = [0, 5, 0, 1999]
    prior = [0.5, 1.0, 1.5, 0.25]
    for cant_solve, measure in [(-1, "amb"), (2, "modified"), (None, "modified")]:
        kw = {"measure": measure, "prior": prior, "cant_solve": cant_solve}
        batch = expected_posterior_var(counts, extra, **kw)
        assert batch.shape == (300,)
        one = [expected_posterior_var(c, int(m), **kw) for c, m in zip(counts, extra, strict=True)]
        np.testing.assert_allclose(batch, one, rtol=1e-13, atol=0)
        scalar = expected_posterior_var(counts[:20], 37, **kw)
        np.testing.assert_allclose(scalar, expected_posterior_var(counts[:20], [37] * 20, **kw))


def test_shapes_and_sd():
    single = expected_posterior_var([3, 1, 0], 10)
    assert isinstance(single, np.float64)
    assert np.ndim(expected_posterior_var([[3, 1, 0]], [10])) == 1
    assert expected_posterior_var(np.zeros((0, 3), dtype=int), 4).shape == (0,)
    assert expected_posterior_var(np.zeros((0, 3), dtype=int), []).shape == (0,)
    counts = [[3, 1, 0], [0, 0, 4]]
    np.testing.assert_allclose(
        expected_posterior_sd(counts, [10, 100], measure="modified"),
        np.sqrt(expected_posterior_var(counts, [10, 100], measure="modified")),
        rtol=0,
    )
    # whole-valued floats are accepted for counts and extra
    assert expected_posterior_var([3.0, 1.0, 0.0], 10.0) == single


# ------------------------------------------------------------ 5. errors
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"counts": [3, -1, 0]}, ValueError, r"counts must be non-negative"),
        ({"counts": [3, 1.5, 0]}, ValueError, r"counts must be whole numbers"),
        ({"counts": [3, np.nan, 0]}, ValueError, r"counts must be finite"),
        ({"counts": [[3]]}, ValueError, r"counts must have at least 2 categories"),
        ({"counts": 3}, ValueError, r"counts must be an array with a category axis"),
        ({"counts": np.zeros((2, 2, 3))}, ValueError, r"counts must have shape \(items, K\)"),
        ({"counts": ["a", "b", "c"]}, TypeError, r"counts must be array-like of numbers"),
        ({"extra": -1}, ValueError, r"extra must be a whole number >= 0.*-1"),
        ({"extra": 2.5}, ValueError, r"extra must be a whole number >= 0.*2\.5"),
        ({"extra": np.inf}, ValueError, r"extra must be a whole number >= 0.*NaN or inf"),
        ({"extra": True}, TypeError, r"extra must be a whole number >= 0.*True"),
        ({"extra": "3"}, TypeError, r"extra must be array-like of numbers"),
        ({"extra": [1, 2]}, ValueError, r"pass counts of shape \(items, K\)"),
        (
            {"counts": [[3, 1, 0], [0, 0, 4]], "extra": [1, 2, 3]},
            ValueError,
            r"or one per item \(shape \(2,\)\), but got shape \(3,\)",
        ),
        (
            {"counts": [[3, 1, 0], [0, 0, 4]], "extra": [1, -2]},
            ValueError,
            r"extra must be a whole number >= 0.*-2",
        ),
        ({"measure": "gini"}, ValueError, r"measure must be one of 'amb', 'modified'"),
        ({"measure": "old"}, NotImplementedError, r"measure='old' has no closed form"),
        ({"measure": "entropy"}, NotImplementedError, r"measure='entropy' has no closed form"),
        ({"prior": 0.0}, ValueError, r"prior must be strictly positive"),
        ({"prior": -1.0}, ValueError, r"prior must be strictly positive"),
        ({"prior": np.nan}, ValueError, r"prior must be strictly positive and finite"),
        ({"prior": [1.0, 1.0]}, ValueError, r"prior must be .* a vector of 3 positive"),
        ({"prior": "flat"}, TypeError, r"prior must be array-like of numbers"),
        ({"cant_solve": 3}, ValueError, r"cant_solve must be a position in \[-3, 2\]"),
        ({"cant_solve": "last"}, TypeError, r"cant_solve must be an integer position"),
        (
            {"counts": [3, 1], "measure": "modified"},
            ValueError,
            r"measure='modified' needs at least 2 proper categories",
        ),
    ],
)
@pytest.mark.parametrize("func", [expected_posterior_var, expected_posterior_sd])
def test_errors(func, kwargs, exc, match):
    args = {"counts": [3, 1, 0], "extra": 5, **kwargs}
    with pytest.raises(exc, match=match):
        func(args.pop("counts"), args.pop("extra"), **args)


# ------------------------------------------------------------ 6. answers_needed
NEED_SETUPS = [(-1, "amb"), (None, "modified"), (0, "modified"), (None, "amb")]


@pytest.mark.parametrize(("cant_solve", "measure"), NEED_SETUPS)
def test_answers_needed_is_the_smallest_m(cant_solve, measure):
    # reference: a plain linear scan of expected_posterior_sd over m = 0..max_extra
    rng = np.random.default_rng(11)
    counts = rng.integers(0, 12, size=(40, 4))
    counts[:3] = [[0, 0, 0, 0], [30, 0, 0, 0], [2, 2, 2, 2]]
    kw = {"measure": measure, "prior": [0.5, 1.0, 2.0, 0.3], "cant_solve": cant_solve}
    top = 150
    ms = np.arange(top + 1)
    for target in (0.02, 0.04, 0.08):
        got = answers_needed(counts, target_sd=target, max_extra=top, **kw)
        assert got.dtype == np.int64 and got.shape == (40,)
        for i, c in enumerate(counts):
            sd = expected_posterior_sd(np.tile(c, (ms.size, 1)), ms, **kw)
            hit = np.flatnonzero(sd <= target)
            assert got[i] == (hit[0] if hit.size else -1)


def test_answers_needed_edges():
    counts = [[3, 1, 0], [0, 0, 4], [40, 2, 1]]
    sd0 = expected_posterior_sd(counts, 0)
    # target already met: 0 (the boundary itself counts as met)
    assert answers_needed(counts, target_sd=float(sd0.max())).tolist() == [0, 0, 0]
    # unreachable within max_extra: the sentinel -1; max_extra=0 only tests m = 0
    assert answers_needed(counts, target_sd=1e-4, max_extra=50).tolist() == [-1, -1, -1]
    assert answers_needed(counts, target_sd=float(sd0[2]), max_extra=0).tolist() == [-1, -1, 0]
    # exactly reachable at max_extra
    sd_top = float(expected_posterior_sd([3, 1, 0], 77))
    assert answers_needed([3, 1, 0], target_sd=sd_top, max_extra=77) == 77
    assert answers_needed([3, 1, 0], target_sd=sd_top * 0.999, max_extra=77) == -1
    # one item (vector) gives a scalar; no items an empty array
    single = answers_needed([3, 1, 0], target_sd=0.05)
    assert isinstance(single, np.int64) and single == answers_needed([[3, 1, 0]], target_sd=0.05)[0]
    assert answers_needed(np.zeros((0, 3)), target_sd=0.05).shape == (0,)
    # more answers needed for a smaller target, never fewer
    a = answers_needed(counts, target_sd=0.05)
    b = answers_needed(counts, target_sd=0.04)
    assert np.all(b >= a)


def test_answers_needed_hdi_width_is_the_normal_approximation():
    counts = [[3, 1, 0], [0, 0, 4], [40, 2, 1], [0, 0, 0]]
    for prob in (0.5, 0.94, 0.99):
        z = norm.ppf(0.5 + prob / 2)
        for width in (0.1, 0.2):
            got = answers_needed(counts, target_hdi_width=width, hdi_prob=prob)
            ref = answers_needed(counts, target_sd=width / (2 * z))
            assert got.tolist() == ref.tolist()
    assert norm.ppf(0.97) == pytest.approx(1.8808, abs=1e-4)  # the docstring's z at 0.94


# ------------------------------------------------------------ 7. next_batch
def lower_hull_ref(values: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Lower convex hull of the points (m, values[m]), m = 0..len - 1, one item in plain
    Python (monotone chain): its values at every m (linear between breakpoints) and the
    breakpoints."""
    pts: list[int] = []
    for t in range(values.size):
        while len(pts) >= 2:
            i1, i2 = pts[-2], pts[-1]
            if (values[i2] - values[i1]) * (t - i1) >= (values[t] - values[i1]) * (i2 - i1):
                pts.pop()
            else:
                break
        pts.append(t)
    hull = np.interp(np.arange(values.size), pts, values[pts])
    return hull, pts


def hull_greedy_reference(table: np.ndarray, budget: int) -> np.ndarray:
    """Runs of the hulls of table[:, :budget + 1] taken whole by average gain (ties: lowest
    item), the last one partially; one run at a time in plain Python."""
    runs = []
    for i, row in enumerate(table[:, : budget + 1]):
        _, pts = lower_hull_ref(row)
        for a, b in itertools.pairwise(pts):
            runs.append(((row[a] - row[b]) / (b - a), i, a, b))
    runs.sort(key=lambda r: (-r[0], r[1], r[2]))
    m = np.zeros(table.shape[0], dtype=np.int64)
    left = budget
    for _, i, a, b in runs:
        if left == 0:
            break
        assert m[i] == a  # the runs of an item come in order
        m[i] += min(b - a, left)
        left -= min(b - a, left)
    return m


def f_table(counts, top, **kw):
    """f_i(m) = expected_posterior_var(counts_i, m) for m = 0..top, shape (items, top + 1)."""
    ms = np.arange(top + 1)
    return np.array([expected_posterior_var(np.tile(c, (ms.size, 1)), ms, **kw) for c in counts])


def brute_force(table: np.ndarray, budget: int) -> float:
    """The smallest total sum_i table[i, m_i] over every allocation of budget (3 items)."""
    best = np.inf
    for a in range(budget + 1):
        for b in range(budget - a + 1):
            best = min(best, table[0, a] + table[1, b] + table[2, budget - a - b])
    return float(best)


def brute_force_items(values: np.ndarray, n_items: int, budget: int) -> float:
    """The smallest sum_i values[m_i] over all allocations of budget to n identical items."""
    return float(
        min(
            values[list(a)].sum()
            for a in itertools.product(range(budget + 1), repeat=n_items)
            if sum(a) == budget
        )
    )


def random_planning_cases(n_cases, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        k = int(rng.choice([3, 4]))
        cant_solve = [None, -1][int(rng.integers(2))]
        measure = ["amb", "modified"][int(rng.integers(2))]
        if k - (cant_solve is not None) < 2:
            measure = "amb"
        prior = float(rng.choice([0.05, 0.3, 1.0, 2.0]))
        counts = rng.integers(0, 6, size=(3, k))
        counts[rng.random(3) < 0.3] = 0
        yield counts, {"measure": measure, "prior": prior, "cant_solve": cant_solve}


def brute_force_summary():
    """Hull greedy against brute force: the 120 random setups x budget 0..6 (840 cases)."""
    stats = {"cases": 0, "optimal": 0, "on_breakpoints": 0, "convex": 0, "worst_ratio": 1.0}
    for counts, kw in random_planning_cases(120, seed=5):
        table = f_table(counts, 7, **kw)
        second = table[:, :-2] - 2 * table[:, 1:-1] + table[:, 2:]
        for budget in range(7):
            got = next_batch(counts, budget, **kw)
            assert got.dtype == np.int64 and got.sum() == budget and np.all(got >= 0)
            rows = np.arange(3)
            total = float(table[rows, got].sum())
            best = brute_force(table, budget)
            hulls = np.array([lower_hull_ref(r)[0] for r in table[:, : budget + 1]])
            # the convex relaxation: got minimizes the sum of the hulls
            assert hulls[rows, got].sum() == pytest.approx(brute_force(hulls, budget), rel=1e-12)
            gap = float(np.sum(table[rows, got] - hulls[rows, got]))  # the stated bound
            assert np.count_nonzero(table[rows, got] - hulls[rows, got] > 1e-15 * best) <= 1
            assert best * (1 - 1e-14) <= total <= best + gap + 1e-13 * best
            on_breaks = gap <= 1e-15 * total
            convex = np.all(second[:, : max(budget - 1, 0)] >= 0)
            if on_breaks or convex:
                assert total == pytest.approx(best, rel=1e-13)
            stats["cases"] += 1
            stats["optimal"] += total <= best * (1 + 1e-13)
            stats["on_breakpoints"] += bool(on_breaks)
            stats["convex"] += bool(convex)
            stats["worst_ratio"] = max(stats["worst_ratio"], total / best)
    return stats


def test_next_batch_brute_force_hull_bound():
    """Hull greedy == brute-force optimum when the allocation ends on hull breakpoints (or
    every f_i is convex); otherwise within the gap of the one partially filled run."""
    stats = brute_force_summary()
    assert stats["cases"] == 840
    assert stats["on_breakpoints"] > 600 and stats["optimal"] > stats["on_breakpoints"]
    assert stats["optimal"] < stats["cases"]  # not optimal in general: the docstring says so


def test_next_batch_is_the_hull_greedy():
    # the vectorized rounds (doubling the evaluated range) give the allocation of the plain
    # run-at-a-time hull greedy on 0..budget
    rng = np.random.default_rng(8)
    for trial in range(16):
        counts = rng.integers(0, 8, size=(int(rng.integers(1, 9)), 3))
        counts[rng.random(counts.shape[0]) < 0.3] = 0
        prior = float(rng.choice([0.05, 0.3, 1.0, 2.0]))
        budget = int(rng.integers(0, 40))
        cant_solve = [None, -1][trial % 2]
        kw = {"prior": prior, "cant_solve": cant_solve, "measure": ["amb", "modified"][trial % 2]}
        table = f_table(counts, budget, **kw)
        got = next_batch(counts, budget, **kw)
        ref = hull_greedy_reference(table, budget)
        rows = np.arange(counts.shape[0])
        assert table[rows, got].sum() == pytest.approx(table[rows, ref].sum(), rel=1e-13)
        if cant_solve is None:  # elementwise closed form: equal items tie bit for bit
            assert got.tolist() == ref.tolist()


def test_convexity_counterexamples_in_the_docstring():
    # symmetric proper concentrations, no can't-solve: the first answer removes nothing
    for counts, prior in (([0, 0, 0], 1.0), ([3, 3, 3], 1.0), ([0, 0, 0, 0], 0.05)):
        f = expected_posterior_var(np.tile(counts, (3, 1)), [0, 1, 2], prior=prior, cant_solve=None)
        assert f[1] == pytest.approx(f[0], rel=1e-13) and f[2] < f[1]
    f = expected_posterior_var(np.tile([0, 0, 0], (3, 1)), [0, 1, 2], cant_solve=None)
    assert (f[0] - 2 * f[1] + f[2]) / f[0] == pytest.approx(-0.0667, abs=1e-4)
    f = expected_posterior_var(np.tile([0, 0, 0], (3, 1)), [0, 1, 2], prior=0.01, cant_solve=None)
    assert (f[0] - 2 * f[1] + f[2]) / f[0] == pytest.approx(-0.33, abs=0.01)
    f = expected_posterior_var(np.tile([0, 0, 0, 0], (3, 1)), [0, 1, 2], measure="modified")
    assert (f[0] - 2 * f[1] + f[2]) / f[0] == pytest.approx(-0.036, abs=1e-3)
    # 4 unanswered items, no can't-solve, budget 8: the hull of f runs straight from m = 0
    # to m = 6, so the hull greedy takes that run whole and 2 of the next item's equal run;
    # the optimum is (4, 4, 0, 0), within the gap of the partially filled run
    got = next_batch([[0, 0, 0]] * 4, 8, cant_solve=None)
    assert got.tolist() == [6, 2, 0, 0]
    f = expected_posterior_var(np.zeros((9, 3), dtype=int), np.arange(9), cant_solve=None)
    hull, pts = lower_hull_ref(f)
    assert pts[:2] == [0, 6]
    best = f[4] + f[4] + 2 * f[0]
    assert best == pytest.approx(brute_force_items(f, 4, 8), rel=1e-14)
    assert best < f[got].sum() <= best + (f[2] - hull[2]) * (1 + 1e-13)
    assert f[got].sum() / best == pytest.approx(1.008, abs=1e-3)


def test_next_batch_edges():
    counts = [[3, 1, 0], [0, 0, 4], [40, 2, 1], [5, 5, 0]]
    assert next_batch(counts, 0).tolist() == [0, 0, 0, 0]
    assert next_batch(counts, 0).dtype == np.int64
    assert next_batch([[3, 1, 0]], 17).tolist() == [17]
    assert next_batch([3, 1, 0], 17).tolist() == [17]  # a vector is one item
    assert next_batch(np.zeros((0, 3)), 0).shape == (0,)
    big = next_batch(counts, 500)
    assert big.sum() == 500 and big.dtype == np.int64
    assert next_batch(counts, 10.0).tolist() == next_batch(counts, np.int64(10)).tolist()
    # greedy allocations are nested: a larger budget only adds answers
    for budget in (1, 7, 60, 499):
        assert np.all(next_batch(counts, budget) <= big)


@pytest.mark.parametrize(
    ("func", "kwargs", "exc", "match"),
    [
        (
            next_batch,
            {"objective": "votes"},
            ValueError,
            r"objective must be one of 'variance', 'decision'",
        ),
        (
            next_batch,
            {"objective": None},
            ValueError,
            r"objective must be one of 'variance', 'decision'",
        ),
        (next_batch, {"budget": -1}, ValueError, r"budget must be a whole number >= 0"),
        (next_batch, {"budget": 2.5}, ValueError, r"budget must be a whole number >= 0"),
        (next_batch, {"budget": np.nan}, ValueError, r"budget must be a whole number >= 0"),
        (next_batch, {"budget": True}, TypeError, r"budget must be a whole number >= 0"),
        (next_batch, {"budget": "3"}, TypeError, r"budget must be a whole number >= 0"),
        (next_batch, {"counts": np.zeros((0, 3))}, ValueError, r"budget=5 cannot be allocated"),
        (next_batch, {"measure": "old"}, NotImplementedError, r"measure='old' has no closed"),
        (next_batch, {"counts": [3, -1, 0]}, ValueError, r"counts must be non-negative"),
        (next_batch, {"prior": 0.0}, ValueError, r"prior must be strictly positive"),
        (answers_needed, {}, ValueError, r"give exactly one of target_sd or target_hdi_width"),
        (
            answers_needed,
            {"target_sd": 0.1, "target_hdi_width": 0.3},
            ValueError,
            r"give exactly one of target_sd or target_hdi_width",
        ),
        (answers_needed, {"target_sd": 0.0}, ValueError, r"target_sd must be a positive"),
        (answers_needed, {"target_sd": np.inf}, ValueError, r"target_sd must be a positive"),
        (answers_needed, {"target_sd": "0.1"}, TypeError, r"target_sd must be a positive"),
        (
            answers_needed,
            {"target_hdi_width": -0.2},
            ValueError,
            r"target_hdi_width must be a positive",
        ),
        (
            answers_needed,
            {"target_sd": 0.1, "hdi_prob": 1.0},
            ValueError,
            r"hdi_prob must be in the open interval \(0, 1\)",
        ),
        (
            answers_needed,
            {"target_sd": 0.1, "max_extra": -1},
            ValueError,
            r"max_extra must be a whole number >= 0",
        ),
        (
            answers_needed,
            {"target_sd": 0.1, "max_extra": 1.5},
            ValueError,
            r"max_extra must be a whole number >= 0",
        ),
        (
            answers_needed,
            {"target_sd": 0.1, "measure": "entropy"},
            NotImplementedError,
            r"measure='entropy' has no closed form",
        ),
        (
            answers_needed,
            {"target_sd": 0.1, "cant_solve": 3},
            ValueError,
            r"cant_solve must be a position",
        ),
        # n_hyper matters for a fitted prior only, but a wrong one is never silently unused
        (
            answers_needed,
            {"target_sd": 0.1, "n_hyper": -5},
            ValueError,
            r"n_hyper must be a whole number >= 1",
        ),
    ],
)
def test_planning_errors(func, kwargs, exc, match):
    args = {"counts": [3, 1, 0], **kwargs}
    counts = args.pop("counts")
    if func is next_batch:
        args.setdefault("budget", 5)
        budget = args.pop("budget")
        with pytest.raises(exc, match=match):
            func(counts, budget, **args)
    else:
        with pytest.raises(exc, match=match):
            func(counts, **args)


# ------------------------------------------------------------ 8. learned (fitted) prior
def learned_tree(counts, n_chain=2, n_draw=150, k=3, seed=4, with_hyper=True):
    """A DataTree shaped like ambppl.fit(counts, "hierarchical_dirichlet"): posterior mu
    (chain, draw, category), kappa (chain, draw); observed_data counts (item, category)."""
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet([2.0, 1.0, 1.5, 1.0][:k], size=(n_chain, n_draw))
    kappa = rng.gamma(3.0, 1.5, size=(n_chain, n_draw))
    post = {"mu": (("chain", "draw", "category"), mu), "kappa": (("chain", "draw"), kappa)}
    if not with_hyper:
        post = {"q": (("chain", "draw", "category"), mu)}
    observed = xr.Dataset({"counts": (("item", "category"), np.asarray(counts))})
    return xr.DataTree.from_dict({"posterior": xr.Dataset(post), "observed_data": observed})


def thinned_priors(tree, n_hyper):
    """kappa * mu at n_hyper evenly spaced draws (of the flattened chain x draw)."""
    mu = tree.posterior["mu"].values.reshape(-1, tree.posterior["mu"].shape[-1])
    kappa = tree.posterior["kappa"].values.reshape(-1)
    keep = (np.arange(min(n_hyper, kappa.size)) * kappa.size) // min(n_hyper, kappa.size)
    return kappa[keep, None] * mu[keep]


LEARNED_COUNTS = np.array([[3, 1, 0], [0, 0, 4], [5, 2, 1], [0, 0, 0], [2, 2, 2]])


@pytest.mark.parametrize("n_hyper", [100, 7, 1000])
@pytest.mark.parametrize(("cant_solve", "measure"), [(-1, "amb"), (None, "modified")])
def test_learned_prior_is_the_average_over_thinned_draws(n_hyper, cant_solve, measure):
    tree = learned_tree(LEARNED_COUNTS)
    priors = thinned_priors(tree, n_hyper)
    assert priors.shape == (min(n_hyper, 300), 3)
    kw = {"measure": measure, "cant_solve": cant_solve}
    extra = [0, 3, 10, 1, 50]
    got = expected_posterior_var(LEARNED_COUNTS, extra, prior=tree, n_hyper=n_hyper, **kw)
    ref = np.mean(
        [expected_posterior_var(LEARNED_COUNTS, extra, prior=p, **kw) for p in priors], axis=0
    )
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)
    sd = expected_posterior_sd(LEARNED_COUNTS[2], 10, prior=tree, n_hyper=n_hyper, **kw)
    assert sd == pytest.approx(np.sqrt(ref[2]), rel=1e-12)
    # answers_needed: the smallest m by a linear scan of the averaged curve
    ms = np.arange(61)
    need = answers_needed(
        LEARNED_COUNTS, target_sd=0.06, max_extra=60, prior=tree, n_hyper=n_hyper, **kw
    )
    for i, c in enumerate(LEARNED_COUNTS):
        curve = np.mean(
            [expected_posterior_sd(np.tile(c, (61, 1)), ms, prior=p, **kw) ** 2 for p in priors],
            axis=0,
        )
        hit = np.flatnonzero(np.sqrt(curve) <= 0.06)
        assert need[i] == (hit[0] if hit.size else -1)


def test_learned_prior_next_batch_brute_force():
    tree = learned_tree(LEARNED_COUNTS[:3])
    priors = thinned_priors(tree, 20)
    table = np.mean([f_table(LEARNED_COUNTS[:3], 6, prior=p) for p in priors], axis=0)
    for budget in range(7):
        got = next_batch(LEARNED_COUNTS[:3], budget, prior=tree, n_hyper=20)
        assert got.sum() == budget
        rows = np.arange(3)
        hulls = np.array([lower_hull_ref(r)[0] for r in table[:, : budget + 1]])
        total, best = table[rows, got].sum(), brute_force(table, budget)
        gap = np.sum(table[rows, got] - hulls[rows, got])
        assert best * (1 - 1e-13) <= total <= best + gap + 1e-13 * best


def test_empirical_bayes_fit_is_the_fixed_prior():
    from ambppl import fit

    counts = np.array([[3, 1, 0], [0, 0, 4], [5, 2, 1], [2, 2, 2]])
    tree = fit(counts, "hierarchical_dirichlet", method="empirical_bayes")
    prior = tree.posterior["kappa"].values[0, 0] * tree.posterior["mu"].values[0, 0]
    extra = [0, 5, 40, 7]
    assert np.array_equal(
        expected_posterior_var(counts, extra, prior=tree),
        expected_posterior_var(counts, extra, prior=prior),
    )
    assert np.array_equal(
        answers_needed(counts, target_sd=0.05, prior=tree),
        answers_needed(counts, target_sd=0.05, prior=prior),
    )
    assert np.array_equal(next_batch(counts, 25, prior=tree), next_batch(counts, 25, prior=prior))


def test_learned_prior_follows_the_counts_category_labels():
    """A learned prior is matched to labelled counts by category label, not position: the
    same counts with their columns in another order give the same curves (before, the fit's
    mu[can't-solve] became a proper category's concentration: about 3x the variance)."""
    from ambppl import fit

    labels = ["a", "b", "cs"]
    rng = np.random.default_rng(2)
    values = rng.multinomial(6, [0.5, 0.35, 0.15], size=40)
    counts = xr.DataArray(
        values, dims=("item", "category"), coords={"category": labels}, attrs={"cant_solve": "cs"}
    )
    tree = fit(counts, "hierarchical_dirichlet", method="empirical_bayes")
    prior = tree.posterior["kappa"].values[0, 0] * tree.posterior["mu"].values[0, 0]
    new = counts.isel(item=[0, 1, 2])
    want = expected_posterior_var(new.values, 10, prior=prior, cant_solve=2)
    moved = new.sel(category=["cs", "a", "b"])
    assert np.array_equal(expected_posterior_var(moved, 10, prior=tree), want)
    assert np.array_equal(
        answers_needed(moved, target_sd=0.05, prior=tree),
        answers_needed(new.values, target_sd=0.05, prior=prior, cant_solve=2),
    )
    other = new.assign_coords(category=["a", "c", "cs"])
    with pytest.raises(ValueError, match=r"categories \['a', 'c', 'cs'\] but the fitted prior"):
        expected_posterior_var(other, 10, prior=tree)


@pytest.mark.parametrize(
    ("tree_kw", "counts", "kw", "exc", "match"),
    [
        ({}, [[3, 1, 0, 2]], {}, ValueError, r"counts have 4 categories but the fitted prior"),
        ({"with_hyper": False}, [[3, 1, 0]], {}, ValueError, r"without posterior mu and kappa"),
        ({}, [[3, 1, 0]], {"n_hyper": 0}, ValueError, r"n_hyper must be a whole number >= 1"),
        ({}, [[3, 1, 0]], {"n_hyper": 2.5}, ValueError, r"n_hyper must be a whole number"),
    ],
)
@pytest.mark.parametrize("func", [expected_posterior_var, answers_needed, next_batch])
def test_learned_prior_errors(func, tree_kw, counts, kw, exc, match):
    tree = learned_tree([[3, 1, 0]], **tree_kw)
    with pytest.raises(exc, match=match):
        if func is expected_posterior_var:
            func(counts, 3, prior=tree, **kw)
        elif func is answers_needed:
            func(counts, target_sd=0.1, prior=tree, **kw)
        else:
            func(counts, 3, prior=tree, **kw)


def test_next_batch_decision_objective_brute_force():
    """objective="decision": the expected number of wrong threshold decisions, sum of
    1 - g_i(m_i) (g from ambppl.analysis._decision, exact for two proper classes), against brute
    force over every allocation: the hull greedy's total lies within the gap of its one partially
    filled run, and it is optimal where that gap is 0."""
    from ambppl.analysis._decision import expected_correct_decision

    rng = np.random.default_rng(23)
    optimal = cases = 0
    for _ in range(12):
        counts = rng.integers(0, 7, size=(3, 3))  # two proper classes + can't-solve
        prior = float(rng.choice([0.5, 1.0]))
        threshold = float(rng.choice([0.3, 0.4]))
        kw = {"prior": prior, "threshold": threshold}
        table = np.array(
            [
                [1.0 - float(expected_correct_decision(c[None], [m], **kw)[0]) for m in range(5)]
                for c in counts
            ]
        )
        for budget in range(5):
            got = next_batch(counts, budget, objective="decision", **kw)
            assert got.sum() == budget and np.all(got >= 0)
            rows = np.arange(3)
            total, best = float(table[rows, got].sum()), brute_force(table, budget)
            hulls = np.array([lower_hull_ref(r)[0] for r in table[:, : budget + 1]])
            gap = float(np.sum(table[rows, got] - hulls[rows, got]))
            assert best - 1e-12 <= total <= best + gap + 1e-12
            cases += 1
            optimal += total <= best + 1e-12
    assert cases == 60 and optimal >= 50, optimal


def test_next_batch_decision_goes_to_open_decisions():
    # clearly ambiguous (P(amb > 0.4) ~ 1) and clearly clear items get nothing when one item's
    # decision is open and can be settled
    counts = np.array([[10, 10, 2], [40, 0, 0], [9, 2, 0]])
    got = next_batch(counts, 6, objective="decision", threshold=0.4)
    assert got.tolist() == [0, 0, 6]
    with pytest.raises(ValueError, match=r"threshold"):
        next_batch(counts, 6, objective="decision", threshold=1.5)


def test_next_batch_decision_with_repeated_count_vectors():
    # equal rows share one memoized curve; the allocation is still the brute-force optimum
    from ambppl.analysis._decision import expected_correct_decision

    counts = np.array([[9, 2, 0], [40, 0, 0], [9, 2, 0]])
    table = np.array(
        [
            [1.0 - float(expected_correct_decision(c[None], [m])[0]) for m in range(7)]
            for c in counts
        ]
    )
    got = next_batch(counts, 6, objective="decision")
    rows = np.arange(3)
    hulls = np.array([lower_hull_ref(r)[0] for r in table])
    gap = float(np.sum(table[rows, got] - hulls[rows, got]))
    best = brute_force(table, 6)
    assert got.sum() == 6 and best - 1e-12 <= table[rows, got].sum() <= best + gap + 1e-12


@pytest.mark.parametrize("objective", ["variance", "decision"])
def test_plan_is_the_table_the_command_writes(tmp_path: Path, objective: str) -> None:
    """``plan`` returns the table ``ambppl plan`` writes: next_batch's allocation and the
    expected posterior sd now and after, most extra answers first."""
    rng = np.random.default_rng(8)
    counts = rng.multinomial(5, [0.5, 0.3, 0.2], size=30)
    source = tmp_path / "counts.npy"
    np.save(source, counts)
    out = tmp_path / "plan.csv"
    options = [
        "--budget",
        "40",
        "--objective",
        objective,
        "--prior",
        "0.5",
        "--measure",
        "modified",
    ]
    assert main(["plan", str(source), *options, "-q", "-o", str(out)]) == 0
    data = ambppl.read_annotations(source)
    seen: list[str] = []
    table = plan(data, 40, objective=objective, measure="modified", prior=0.5, progress=seen.append)
    written = pd.read_csv(out, index_col="item")
    pd.testing.assert_frame_equal(written, table, check_index_type=False, rtol=1e-12)
    assert list(table.columns) == ["n_answers", "extra", "sd_now", "sd_after"]
    assert table["extra"].sum() == 40 and table["extra"].is_monotonic_decreasing
    values = np.asarray(data.values)
    extra = next_batch(
        values, 40, objective=objective, measure="modified", prior=0.5, cant_solve=None
    )
    in_order = table["extra"].reindex(data["item"].values).to_numpy()
    np.testing.assert_array_equal(in_order, extra)
    assert seen == [f"allocating 40 answers over 30 items (objective {objective})"]


def test_plan_refuses_a_progress_that_is_not_callable():
    from ambppl.analysis.planning import plan

    with pytest.raises(TypeError, match=r"progress must be a callable .* but got 3"):
        plan(np.array([[3, 1, 0]]), 2, progress=3)


# ------------------------------------------------ threshold and n_hyper: checked always
@pytest.mark.parametrize(
    ("threshold", "exc"),
    [(2, ValueError), (0.0, ValueError), (np.nan, ValueError), ("0.4", TypeError)],
)
@pytest.mark.parametrize("objective", ["variance", "decision"])
def test_a_bad_threshold_is_refused_whatever_the_objective(threshold, objective, exc):
    counts = np.array([[3, 1, 0], [2, 2, 1]])
    with pytest.raises(exc, match=r"threshold must be .*strictly between 0 and 1"):
        next_batch(counts, 3, objective=objective, threshold=threshold)
    with pytest.raises(exc, match=r"threshold must be .*strictly between 0 and 1"):
        plan(
            ambppl.read_annotations(counts, cant_solve=2),
            3,
            objective=objective,
            threshold=threshold,
        )


def test_plan_documents_not_implemented_measures():
    counts = ambppl.read_annotations(np.array([[3, 1, 0], [2, 2, 1]]), cant_solve=2)
    with pytest.raises(NotImplementedError, match=r"measure='old' has no closed form"):
        plan(counts, 3, measure="old")
    raises = plan.__doc__.split("Raises")[1].split("Examples")[0]
    assert "NotImplementedError" in raises and '``measure="old"``' in raises


@pytest.mark.parametrize(
    ("n_hyper", "exc"), [(-1, ValueError), (0, ValueError), (2.5, ValueError), (True, TypeError)]
)
@pytest.mark.parametrize("prior", ["fixed", "learned"])
def test_n_hyper_has_one_message(n_hyper, exc, prior):
    prior = 1.0 if prior == "fixed" else learned_tree([[3, 1, 0]])
    match = (
        r"^n_hyper must be a whole number >= 1 \(the number of hyperparameter draws kept\), "
        rf"but got {re.escape(repr(n_hyper))}$"
    )
    for call in (
        lambda: expected_posterior_var([[3, 1, 0]], 3, prior=prior, n_hyper=n_hyper),
        lambda: answers_needed([[3, 1, 0]], target_sd=0.1, prior=prior, n_hyper=n_hyper),
        lambda: next_batch([[3, 1, 0]], 3, prior=prior, n_hyper=n_hyper),
    ):
        with pytest.raises(exc, match=match):
            call()


# ------------------------------------------------ max_extra, plan's counts, the Notes' numbers
@pytest.mark.parametrize("max_extra", [2**53, 2**62, 2**64, 1e300])
def test_answers_needed_refuses_max_extra_from_2_53(max_extra):
    # 2**64 raised an OverflowError from numpy; 2**62 returned 151360544217687057, a number of
    # answers that expected_posterior_sd then refuses (at least 2**53)
    with pytest.raises(ValueError, match=r"^max_extra must be below 2\*\*53 = 9\.0e15 .* but got"):
        answers_needed([[3, 1, 0]], target_sd=1e-9, max_extra=max_extra)
    # just below: taken (the answer is reachable and a valid number of answers)
    got = answers_needed([[3, 1, 0]], target_sd=1e-6, max_extra=2**53 - 1)
    assert 0 < got[0] < 2**53
    assert expected_posterior_sd([3, 1, 0], int(got[0])) <= 1e-6


def test_plan_takes_a_nested_list_of_counts():
    counts = [[3, 1, 0], [0, 0, 4]]
    expected = plan(np.array(counts), 5)
    pd.testing.assert_frame_equal(plan(counts, 5), expected)
    pd.testing.assert_frame_equal(plan(tuple(map(tuple, counts)), 5), expected)
    assert expected["extra"].sum() == 5


@pytest.mark.parametrize(
    ("counts", "got"),
    [
        ({"a": [1, 2]}, "but got dict$"),
        (3, "but got int$"),
        ([[1, 2], [3]], "but got a list that is not a table of numbers"),
        ([["yes", "no"]], "but got a list that is not a table of numbers"),
    ],
)
def test_plan_refuses_other_types_naming_counts(counts, got):
    with pytest.raises(TypeError, match=r"^counts must be counts of answers: .*" + got) as info:
        plan(counts, 5)
    assert "path" not in str(info.value)  # plan refuses paths: it does not suggest one
    with pytest.raises(TypeError, match=r"^counts must be annotations already read .* 'a\.csv'"):
        plan("a.csv", 5)


def _second_difference(counts, **kw):
    f = expected_posterior_var(np.tile(counts, (3, 1)), [0, 1, 2], **kw)
    return (f[0] - 2 * f[1] + f[2]) / f[0]


def test_the_notes_convexity_numbers_are_the_computed_ones():
    """next_batch's Notes give f(0) - 2 f(1) + f(2) for a can't-solve category and 3 proper
    categories at prior 1: convex (+0.0084 f(0)) for the default measure "amb", not convex
    (-0.036 f(0)) for "modified" (they said -0.036 for the default)."""
    amb = _second_difference([0, 0, 0, 0], cant_solve=3)
    modified = _second_difference([0, 0, 0, 0], cant_solve=3, measure="modified")
    assert amb == pytest.approx(0.0084, abs=5e-5) and modified == pytest.approx(-0.0356, abs=5e-5)
    notes = " ".join(next_batch.__doc__.split("Why not plain greedy")[1].split()[:200])
    assert "+0.0084 f(0)" in notes and '``measure="amb"`` is convex' in notes
    assert '``measure="modified"`` is not (``-0.036 f(0)``)' in notes
    # answers_needed's Notes: non-increasing, not strictly decreasing (f(1) = f(0) here)
    sd = expected_posterior_sd(np.zeros((2, 3), dtype=int), [0, 1], cant_solve=None)
    assert sd[1] == pytest.approx(sd[0], rel=1e-13)
    needed = " ".join(answers_needed.__doc__.split("Notes\n    -----")[1].split())
    assert "is non-increasing in ``m``" in needed and "decreases strictly" not in needed


def test_decision_budget_message_in_python_words():
    with pytest.raises(
        ValueError, match=r"pass a budget of at most 3e\+07, or objective='variance'$"
    ):
        next_batch([[3, 1], [0, 4], [2, 2]], 3 * 10**7 + 1, objective="decision", cant_solve=None)
