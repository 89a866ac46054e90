"""Tests for ambppl.planning: enumeration, limits, simulation, batches, bad input."""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import dirichlet_multinomial, norm

from ambppl import dirichlet_var
from ambppl.planning import (
    answers_needed,
    expected_posterior_sd,
    expected_posterior_var,
    next_batch,
)

ENUM_REL_TOL = 1e-12


def compositions(m: int, k: int) -> np.ndarray:
    """Every vector of ``k`` non-negative integers summing to ``m`` (rows)."""
    rows = [c for c in itertools.product(range(m + 1), repeat=k) if sum(c) == m]
    return np.array(rows, dtype=np.int64).reshape(-1, k)


def enumerated(alpha: np.ndarray, m: int, measure: str, cant_solve: int | None) -> float:
    """E_new[Var(measure | alpha + new)] by summing over every possible set of new answers.

    Reference: the definition itself. The predictive pmf is scipy.stats.dirichlet_multinomial
    (the Dirichlet-multinomial DM(m, alpha)); the posterior variance is
    ambppl.dirichlet_var (tested in tests/test_moments.py against exact fractions).
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
    closed form in ambppl.planning.
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
def greedy_reference(table: np.ndarray, budget: int) -> np.ndarray:
    """One answer at a time to the largest gain table[i, m_i] - table[i, m_i + 1] (argmax:
    ties to the lowest index). table[i, m] = f_i(m) for m = 0..budget (+1)."""
    m = np.zeros(table.shape[0], dtype=np.int64)
    rows = np.arange(table.shape[0])
    for _ in range(budget):
        m[int(np.argmax(table[rows, m] - table[rows, m + 1]))] += 1
    return m


def f_table(counts, top, **kw):
    """f_i(m) = expected_posterior_var(counts_i, m) for m = 0..top, shape (items, top + 1)."""
    ms = np.arange(top + 1)
    return np.array([expected_posterior_var(np.tile(c, (ms.size, 1)), ms, **kw) for c in counts])


def brute_force(table: np.ndarray, budget: int) -> float:
    """The smallest total sum_i f_i(m_i) over every allocation of budget (3 items)."""
    best = np.inf
    for a in range(budget + 1):
        for b in range(budget - a + 1):
            best = min(best, table[0, a] + table[1, b] + table[2, budget - a - b])
    return float(best)


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


def test_next_batch_brute_force_and_convexity():
    """Greedy == brute-force optimum whenever every f_i is convex on 0..budget (the
    marginal-allocation theorem); when some f_i is not convex, greedy is only feasible."""
    n_convex = n_nonconvex = n_missed = 0
    for counts, kw in random_planning_cases(120, seed=5):
        table = f_table(counts, 7, **kw)
        second = table[:, :-2] - 2 * table[:, 1:-1] + table[:, 2:]
        for budget in range(7):
            got = next_batch(counts, budget, **kw)
            assert got.dtype == np.int64 and got.sum() == budget and np.all(got >= 0)
            total = float(table[np.arange(3), got].sum())
            best = brute_force(table, budget)
            assert total >= best * (1 - 1e-14)
            # convex on the part of the range this budget can reach
            if np.all(second[:, : max(budget - 1, 0)] >= 0):
                n_convex += 1
                assert total == pytest.approx(best, rel=1e-13)
            else:
                n_nonconvex += 1
                n_missed += total > best * (1 + 1e-13)
    assert n_convex > 200 and n_nonconvex > 100  # both kinds were exercised
    assert n_missed > 0  # greedy is not optimal in general: the docstring says so


def test_next_batch_is_the_one_at_a_time_greedy():
    # the vectorized rounds give exactly the allocation of one-answer-at-a-time greedy
    # (no can't-solve: the closed form is elementwise, so equal items tie bit for bit)
    rng = np.random.default_rng(8)
    for trial in range(12):
        counts = rng.integers(0, 8, size=(int(rng.integers(1, 9)), 3))
        counts[rng.random(counts.shape[0]) < 0.3] = 0
        prior = float(rng.choice([0.3, 1.0, 2.0]))
        budget = int(rng.integers(0, 40))
        kw = {"prior": prior, "cant_solve": None, "measure": ["amb", "modified"][trial % 2]}
        table = f_table(counts, budget + 1, **kw)
        assert next_batch(counts, budget, **kw).tolist() == greedy_reference(table, budget).tolist()
    # with a can't-solve category: the same total (ties may break by a rounding ulp)
    counts = rng.integers(0, 8, size=(6, 3))
    table = f_table(counts, 31)
    got = next_batch(counts, 30)
    ref = greedy_reference(table, 30)
    rows = np.arange(6)
    assert table[rows, got].sum() == pytest.approx(table[rows, ref].sum(), rel=1e-13)


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
    # the failure the docstring warns about: all items unanswered, no can't-solve
    assert next_batch([[0, 0, 0]] * 4, 8, cant_solve=None).tolist() == [8, 0, 0, 0]


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
        (next_batch, {"objective": "decision"}, ValueError, r"objective must be one of 'variance'"),
        (next_batch, {"objective": None}, ValueError, r"objective must be one of 'variance'"),
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
