"""Tests for ambppl.analysis._decision: exact g(m), monotonicity, the approximations, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, stats

from ambppl import ambiguity_posterior
from ambppl.analysis._decision import (
    BETA_MONOTONE_SLACK,
    BETA_WORST_ERROR,
    NORMAL_WORST_ERROR,
    _g_enumerated,
    _g_normal,
    decision_gain,
    expected_correct_decision,
)

EXACT_TOL = 1e-12


def p_two_class(alpha: np.ndarray, t: float, measure: str, cant_solve: int | None) -> float:
    """P(measure > t | Dirichlet(alpha)) for two proper categories, independently computed.

    Reference: with can't-solve, ambppl.ambiguity_posterior(...).sf (tested against 50-digit
    mpmath in tests/maths/test_exact.py). Without it, q_1 ~ Beta(a_1, a_2) and the measure is
    2 q_1 (1 - q_1) (amb), 4 q_1 (1 - q_1) (modified) or 1 - |2 q_1 - 1| (old) (definitions
    in ambppl.maths.measures): the Beta density integrated by scipy.integrate.quad over the set
    where the measure exceeds t.
    """
    if cant_solve is not None:
        return float(ambiguity_posterior(alpha, measure, cant_solve=cant_solve).sf(t))
    fn = {
        "amb": lambda x: 2 * x * (1 - x),
        "modified": lambda x: 4 * x * (1 - x),
        "old": lambda x: 1 - abs(2 * x - 1),
    }[measure]
    # the set {x : fn(x) > t} is an interval symmetric about 1/2; find its ends by bisection
    if fn(0.5) <= t:
        return 0.0
    lo, hi = 0.0, 0.5
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if fn(mid) > t else (mid, hi)
    val, _ = integrate.quad(
        lambda x: stats.beta.pdf(x, alpha[0], alpha[1]), hi, 1 - hi, epsabs=1e-14, epsrel=1e-13
    )
    return val


def brute_force_g(
    alpha: np.ndarray, m: int, t: float, measure: str, cant_solve: int | None
) -> float:
    """E[max(p, 1 - p)] over all K^m answer *sequences*.

    Reference: the Polya urn. The probability of a sequence k_1..k_m is
    prod_s (alpha_{k_s} + seen_{k_s}) / (A + s - 1) with A = sum(alpha) and seen the counts
    among the earlier answers (the sequential form of the Dirichlet-multinomial).
    """
    k = alpha.size
    total, cache = 0.0, {}
    for seq in itertools.product(range(k), repeat=m):
        seen = np.zeros(k)
        prob = 1.0
        for s, cat in enumerate(seq):
            prob *= (alpha[cat] + seen[cat]) / (alpha.sum() + s)
            seen[cat] += 1
        key = tuple(seen)
        if key not in cache:
            p = p_two_class(alpha + seen, t, measure, cant_solve)
            cache[key] = max(p, 1 - p)
        total += prob * cache[key]
    return total


TWO_CLASS = [
    # counts, prior, cant_solve, threshold, measure
    ([3, 1, 0], 1.0, -1, 0.4, "amb"),
    ([0, 0, 0], 0.5, -1, 0.5, "amb"),
    ([2, 2, 3], 1.0, -1, 0.6, "modified"),
    ([1, 4, 1], 2.0, -1, 0.3, "old"),
    ([0, 2, 5], 1.0, 0, 0.45, "amb"),  # can't-solve first
    ([3, 1], 1.0, None, 0.4, "amb"),
    ([5, 4], 0.5, None, 0.45, "amb"),
    ([2, 0], 1.0, None, 0.7, "modified"),
    ([1, 3], 1.5, None, 0.5, "old"),
]


@pytest.mark.parametrize(("counts", "prior", "cs", "t", "measure"), TWO_CLASS)
def test_exact_m0_is_current_decision(counts, prior, cs, t, measure) -> None:
    alpha = np.array(counts, float) + prior
    p = p_two_class(alpha, t, measure, cs)
    got = expected_correct_decision(
        counts, 0, threshold=t, measure=measure, prior=prior, cant_solve=cs
    )
    assert abs(got - max(p, 1 - p)) < EXACT_TOL


@pytest.mark.parametrize(("counts", "prior", "cs", "t", "measure"), TWO_CLASS)
def test_exact_against_polya_sequences(counts, prior, cs, t, measure) -> None:
    alpha = np.array(counts, float) + prior
    for m in range(1, 5):
        got = expected_correct_decision(
            counts, m, threshold=t, measure=measure, prior=prior, cant_solve=cs, method="exact"
        )
        assert abs(got - brute_force_g(alpha, m, t, measure, cs)) < EXACT_TOL


def test_exact_vectorized_over_items_and_extra() -> None:
    counts = np.array([[3, 1, 0], [5, 5, 0], [0, 0, 4]])
    extra = np.array([2, 0, 5])
    together = expected_correct_decision(counts, extra)
    alone = [expected_correct_decision(c, int(m)) for c, m in zip(counts, extra, strict=True)]
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-15)
    gain = decision_gain(counts, extra)
    g0 = expected_correct_decision(counts, 0)
    np.testing.assert_allclose(gain, together - g0, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("counts", "cs", "method"),
    [
        ([[3, 1, 0], [2, 2, 0], [5, 1, 1], [0, 0, 0], [10, 2, 3]], -1, None),
        ([[3, 1], [2, 2], [6, 1], [0, 0]], None, None),
        ([[3, 1, 0, 0], [2, 2, 1, 0], [0, 0, 0, 0]], None, "beta"),
    ],
)
def test_non_decreasing_and_bounded(counts, cs, method) -> None:
    # Bayes decisions: more information never lowers the expected accuracy (exact route);
    # the Beta route is only nearly monotone (Notes: falls of up to 0.0062 measured).
    g = np.array(
        [expected_correct_decision(counts, m, cant_solve=cs, method=method) for m in range(21)]
    )
    assert np.all(g >= 0.5 - 1e-15) and np.all(g <= 1 + 1e-15)
    slack = BETA_MONOTONE_SLACK if method == "beta" else 1e-12
    assert np.all(np.diff(g, axis=0) >= -slack)


def test_beta_against_exact_two_class() -> None:
    # the worst case of the Notes' scan, and a sample of the scanned grid
    worst = 0.0
    for counts in ([2, 4, 0], [4, 2, 0], [0, 6, 2], [6, 6, 6]):
        for m in (0, 3, 6):
            kw = {"threshold": 0.4, "prior": 0.5}
            e = expected_correct_decision(counts, m, method="exact", **kw)
            b = expected_correct_decision(counts, m, method="beta", **kw)
            worst = max(worst, abs(e - b))
            ge = decision_gain(counts, m, method="exact", **kw)
            gb = decision_gain(counts, m, method="beta", **kw)
            worst = max(worst, abs(ge - gb))
    print(f"worst |g_beta - g_exact| and gain error on the sample: {worst:.4f}")
    assert worst < BETA_WORST_ERROR
    assert worst > 0.07  # the documented worst case is reached (0.077 / 0.078)


def test_normal_against_enumeration_k4() -> None:
    # K = 4 without can't-solve: the normal approximation of the expectation against the
    # exact enumeration of the new counts (both with the Beta p); Notes report 0.048.
    alpha = np.array([[0, 0, 0, 0], [4, 0, 0, 8], [8, 4, 4, 0], [4, 4, 4, 4]]) + 0.5
    worst = 0.0
    for t in (0.3, 0.6):
        for m in (5, 10):
            mm = np.full(len(alpha), m)
            e = _g_enumerated(alpha, mm, None, "amb", t, "beta")
            n = _g_normal(alpha, mm, None, "amb", t)
            worst = max(worst, float(np.max(np.abs(e - n))))
    print(f"worst |g_normal - g_enumerated| (K=4): {worst:.4f}")
    assert worst < NORMAL_WORST_ERROR


def test_method_none_switches_to_beta_beyond_limit() -> None:
    # m = 199 gives 20100 > ENUMERATION_LIMIT new vectors with can't-solve
    auto = expected_correct_decision([30, 10, 2], 199, cant_solve=-1)
    beta = expected_correct_decision([30, 10, 2], 199, method="beta")
    assert auto == beta
    assert decision_gain([30, 10, 2], 199) == beta - expected_correct_decision(
        [30, 10, 2], 0, method="beta"
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"counts": [1, -1, 0]}, ValueError, "counts must be non-negative"),
        ({"counts": [1.5, 1, 0]}, ValueError, "counts must be whole"),
        ({"counts": "abc"}, TypeError, "counts must be array-like"),
        ({"counts": [[[1, 1, 1]]]}, ValueError, "counts must have shape"),
        ({"extra": -1}, ValueError, "extra must be a whole number"),
        ({"extra": 1.5}, ValueError, "extra must be a whole number"),
        ({"extra": True}, TypeError, "extra must be a whole number"),
        ({"extra": [1, 2]}, ValueError, "extra must be a whole number"),
        ({"threshold": 1.2}, ValueError, "threshold must be strictly between 0 and 1"),
        ({"threshold": "0.4"}, TypeError, "threshold must be a number"),
        ({"measure": "foo"}, ValueError, "measure must be one of"),
        ({"measure": "entropy"}, ValueError, "measure='entropy' is not available"),
        ({"measure": "old", "method": "beta"}, ValueError, "measure='old' is not available"),
        ({"method": "mc"}, ValueError, "method must be one of"),
        (
            {"counts": [1, 1, 1, 1], "method": "exact"},
            ValueError,
            "method='exact' needs two proper categories",
        ),
        ({"counts": [1, 1], "cant_solve": -1}, ValueError, "at least 2 proper categories"),
        ({"cant_solve": 5}, ValueError, "cant_solve must be a position"),
        ({"cant_solve": "last"}, TypeError, "cant_solve must be an integer"),
        ({"prior": -1.0}, ValueError, "prior must be strictly positive"),
        ({"prior": [1.0, 1.0]}, ValueError, "prior must be a positive number"),
    ],
)
def test_bad_input(kwargs, error, match) -> None:
    args = {"counts": [3, 1, 0], "extra": 2} | kwargs
    counts, extra = args.pop("counts"), args.pop("extra")
    with pytest.raises(error, match=match):
        expected_correct_decision(counts, extra, **args)
    with pytest.raises(error, match=match):
        decision_gain(counts, extra, **args)


def test_no_items_give_an_empty_gain() -> None:
    # decision_gain raised "ufunc 'invert' not supported" where g itself is empty
    for counts in (np.zeros((0, 3), dtype=int), np.zeros((0, 2), dtype=int)):
        kw = {"cant_solve": None} if counts.shape[1] == 2 else {}
        for method in (None, "exact", "beta"):
            if method == "beta" and counts.shape[1] == 2:
                continue
            g = expected_correct_decision(counts, 2, method=method, **kw)
            gain = decision_gain(counts, 2, method=method, **kw)
            assert g.shape == gain.shape == (0,) and gain.dtype == np.float64


@pytest.mark.parametrize(
    ("counts", "extra", "kw", "words"),
    [
        # two proper classes and can't-solve, method "exact": 60 us per vector
        ([3, 1, 0], 2000, {"method": "exact"}, "about 60 us each on the exact route with a"),
        # five categories (can't-solve last): the Beta route, 15 us per vector; the message
        # said "200 us each on the exact route" for every route
        (
            np.arange(3000).reshape(600, 5) % 7,
            23,
            {},
            "about 15 us each on the Beta route\\)",
        ),
        # two categories without can't-solve, method "exact": 15 us per vector
        (
            np.arange(2000).reshape(1000, 2) % 9,
            6000,
            {"cant_solve": None, "method": "exact"},
            "about 15 us each on the exact route without a can't-solve category\\)",
        ),
    ],
)
def test_time_refusal_names_the_route_taken(counts, extra, kw, words) -> None:
    with pytest.raises(ValueError, match=r"^extra=\d+: .* new count vectors .*" + words):
        expected_correct_decision(counts, extra, **kw)


def test_method_exact_is_guarded_as_documented() -> None:
    """The docstring said "exact" enumerates "whatever the size"; the time and memory
    guards refuse large requests before any work, as it now says."""
    with pytest.raises(ValueError, match=r"^extra=2000: .* would take about .*limit is 60 s"):
        expected_correct_decision([3, 1, 0], 2000, method="exact")
    with pytest.raises(ValueError, match=r"would need about .* of memory"):
        expected_correct_decision([3, 1, 0], 10**5, method="exact")
    doc = " ".join(expected_correct_decision.__doc__.split())
    assert "whatever the size" not in doc
    assert "``extra=2000`` for one item, 2e6 vectors, is refused as too slow" in doc
    assert "``extra=10**5``, 5e9 vectors, as too large for memory" in doc
    raises = doc.split("Raises ------")[1].split("Notes ----")[0]
    assert "more memory than allowed (80% of the memory available" in raises
    assert "about a minute" in raises
