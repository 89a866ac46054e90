"""Numerical defects found by an audit of ambppl.maths (2026-12-07), one test each.

* dirichlet_moments: impossible skewness and kurtosis for large concentrations (the
  double-double centring cancelled every digit, and the error estimate that said so was
  ignored), NaN and RuntimeWarnings for tiny ones;
* the exact two-class posterior: HDI and equal-tailed interval of zero width where the mass
  sits within the last float below 1; unchecked ``rvs`` arguments; ``n_draws=1``;
* ApproximateDistribution.ppf / isf: NaN for NaN input, where the exact posterior raises.

Reference for the moments: exact rational arithmetic (Python's :mod:`fractions`) by
explicit multinomial enumeration (``enumerated_moments`` in ``tests/_exact_laws.py``),
independent of :mod:`ambppl.maths._higher_moments`: ``E[S^m]`` expands ``(sum_k p_k^2)^m``
over the compositions ``n`` of ``m`` with the Dirichlet moments
``E[prod_k p_k^(2 n_k)] = prod_k (a_k)_(2 n_k) / (A)_(2m)``,
``E[(1 - u)^m] = (A)_m / (alpha_0)_m``, and the measure ``1 - (1 - u) S`` (amb) or
``1 - (1 - u) (C S - 1) / (C - 1)`` (modified) is expanded and centred in fractions.
``Fraction(float)`` is exact, so these are the exact moments of the float inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from _exact_laws import enumerated_moments

import ambppl
from ambppl.maths import _higher_moments as hm
from ambppl.maths.approx import approximate_distribution

#: What the docstring of dirichlet_moments promises: every mu_r within this many
#: var^(r/2) of the exact value, or the exact value correctly rounded.
PROMISE = 1e-12


def _scaled_excess(got: float, exact: Fraction, var: Fraction, r: int) -> float:
    """|got - exact| beyond the correct rounding of ``exact``, over var^(r/2)."""
    err = abs(Fraction(float(got)) - exact)
    allowed = abs(exact) * Fraction(2) ** -53 + Fraction(2) ** -1075
    excess = max(Fraction(0), err - allowed)
    return math.sqrt(float(excess**2 / var**r)) if excess else 0.0


def _standardized(central, var):
    """Exact skewness and excess kurtosis as floats."""
    skew2 = central[3] ** 2 / var**3
    skew = math.copysign(math.sqrt(float(skew2)), 1.0 if central[3] >= 0 else -1.0)
    return skew, float((central[4] - 3 * var * var) / (var * var))


def _check_against_exact(alpha, measure, has_cs, order):
    got = ambppl.dirichlet_moments(alpha, measure, order=order, cant_solve=-1 if has_cs else None)
    mean, central = enumerated_moments(alpha, measure, has_cs, order)
    var = central[2]
    assert float(got.mean) == pytest.approx(float(mean), rel=1e-15)
    assert float(got.var) == pytest.approx(float(var), rel=1e-15)
    for r in range(2, order + 1):
        excess = _scaled_excess(got.central[r], central[r], var, r)
        assert excess <= PROMISE, (alpha, measure, r, excess)
    skew, kurt = _standardized(central, var)
    assert got.skewness == pytest.approx(skew, rel=1e-14, abs=PROMISE)
    assert got.excess_kurtosis == pytest.approx(kurt, rel=1e-14, abs=PROMISE)
    # rel_error bounds the actual error of mu_order against var^(order/2)
    err = abs(Fraction(float(got.central[order])) - central[order])
    actual = math.sqrt(float(err**2 / var**order))
    assert actual <= got.rel_error * (1 + 1e-9) + 1e-300, (actual, got.rel_error)
    return got, skew, kurt


# ----------------------------------------------------------------- 1: large concentrations
LARGE = [
    # (alpha, has_cs, exact skewness, exact excess kurtosis as the audit gave them)
    ((1e9, 1e9, 1.0), True, -1.1547, 6.0),  # the code gave -1.15482 and -197218
    ((1e8, 1e8), False, -2.8284, 12.0),  # the code gave -46.14 for the kurtosis
    ((1e20, 1e20, 1e20), True, 0.0, 0.0),  # the code gave 5.6e9
]


@pytest.mark.parametrize(("alpha", "has_cs", "skew", "kurt"), LARGE)
def test_large_concentrations_give_the_exact_skewness_and_kurtosis(alpha, has_cs, skew, kurt):
    got, exact_skew, exact_kurt = _check_against_exact(alpha, "amb", has_cs, 4)
    assert exact_skew == pytest.approx(skew, abs=1e-4)
    assert exact_kurt == pytest.approx(kurt, abs=1e-6)
    assert got.excess_kurtosis >= -2.0  # impossible below (kurtosis >= 1 + skewness^2)
    assert got.rel_error <= PROMISE


@pytest.mark.parametrize(
    ("alpha", "has_cs", "measure", "order"),
    [
        ((1e9, 1e9, 1.0), True, "modified", 6),
        ((1e5, 1e5), False, "amb", 6),  # a tie: mean / sd ~ alpha_0
        ((3e6, 1e6, 2e6, 0.5), True, "amb", 6),
        ((1e7, 2e7, 5.0, 1.0), True, "modified", 5),
        ((1e300, 1e300, 1.0), True, "amb", 4),  # alpha_0 beyond the double-double route
        ((2.5e15, 2.5e15 + 2.0, 1e3), False, "modified", 8),
    ],
)
def test_concentrated_rows_meet_the_promise(alpha, has_cs, measure, order):
    _check_against_exact(alpha, measure, has_cs, order)


def test_ordinary_rows_stay_on_the_vectorised_route(monkeypatch):
    """The exact route is only for rows the double-double route cannot hold: a batch of
    ordinary posteriors (alpha_0 up to 1e4) never reaches it, and its numbers are those of
    the double-double route (the mixed batch below agrees with them row by row)."""
    calls = []
    original = hm.exact_row_moments

    def counting(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(hm, "exact_row_moments", counting)
    rng = np.random.default_rng(7)
    ordinary = rng.gamma(1.0, 1.0, size=(500, 4)) * rng.uniform(1.0, 2500.0, size=(500, 1))
    plain = ambppl.dirichlet_moments(ordinary)
    assert calls == []
    assert np.all(plain.rel_error <= PROMISE)
    mixed = np.concatenate([ordinary, [[1e9, 1e9, 1.0, 1.0], [1e-300, 1e-300, 1e-300, 1.0]]])
    both = ambppl.dirichlet_moments(mixed)
    assert len(calls) == 2
    np.testing.assert_array_equal(both.central[:500], plain.central)
    np.testing.assert_array_equal(both.excess_kurtosis[:500], plain.excess_kurtosis)


def test_approximate_distribution_shows_the_exact_moments():
    """approximate_distribution computes its moments with a looser tolerance for orders 5-6
    only: the moments it shows (mean to kurtosis) are those of dirichlet_moments."""
    alpha = np.array([[1e9, 1e9, 1.0], [5e5, 3e5, 2.0], [30.0, 10.0, 2.0]])
    approx = approximate_distribution(alpha)
    moments = ambppl.dirichlet_moments(alpha)
    for name in ("mean", "var"):
        np.testing.assert_allclose(getattr(approx, name), getattr(moments, name), rtol=1e-14)
    for name in ("skewness", "excess_kurtosis"):  # each within 1e-12 of the exact value
        np.testing.assert_allclose(getattr(approx, name), getattr(moments, name), atol=2e-12)
    assert approx.excess_kurtosis[0] == pytest.approx(6.0, abs=1e-6)  # was -197218


# ----------------------------------------------------------------- 2: tiny concentrations
@pytest.mark.parametrize(
    ("alpha", "order"),
    [
        ((1e-50, 1e-50, 1e-50), 4),  # kurtosis was NaN
        ((1e-45, 1e-45, 1.0), 4),  # kurtosis was NaN; exact 5e44
        ((1e-300, 1e-300, 1e-300), 4),  # everything was NaN, with 62 RuntimeWarnings
        ((1e-14, 1e-14, 1e-14), 12),  # the scaled coefficients overflowed at order 12
        ((1e-320, 0.5, 2.0), 4),  # a subnormal entry
    ],
)
def test_tiny_concentrations_are_exact_and_silent(alpha, order):
    # pytest runs with warnings as errors: a RuntimeWarning fails this test
    got, _, _ = _check_against_exact(alpha, "amb", True, order)
    assert np.all(np.isfinite(got.central))
    assert np.isfinite(got.skewness) and np.isfinite(got.excess_kurtosis)


def test_tiny_concentrations_agree_with_dirichlet_var():
    alpha = np.array([[1e-50] * 3, [1e-45, 1e-45, 1.0], [1e-300] * 3])
    got = ambppl.dirichlet_moments(alpha)
    np.testing.assert_allclose(got.var, ambppl.dirichlet_var(alpha), rtol=1e-14)
    np.testing.assert_allclose(got.mean, ambppl.dirichlet_mean(alpha), rtol=1e-14)
    assert got.excess_kurtosis[0] == pytest.approx(-1.5, rel=1e-14)  # (1e-50,)*3: exact -3/2


# ----------------------------------------------------------------- 3: exact HDI / interval
@pytest.mark.parametrize(
    ("alpha", "measure"),
    [
        ((2.5555e-3, 2.7468e-3, 9.8307e5), "amb"),  # 0.888 of the mass in [1 - 1.1e-16, 1]
        ((0.0048, 0.0247, 0.0195), "modified"),
    ],
)
@pytest.mark.parametrize("prob", [0.3, 0.5, 0.9, 0.99])
def test_exact_hdi_and_interval_hold_their_mass(alpha, measure, prob):
    """The mass of [lo, hi] is cdf(hi) - cdf(lo) (docs/maths/two_class.md); before the fix
    hdi(0.5) and interval(0.3) of the first alpha were (1.0, 1.0), holding nothing, and
    hdi(0.9) held 0.89997."""
    post = ambppl.ambiguity_posterior(alpha, measure)
    assert post.method == "exact"
    for lo, hi in (post.hdi(prob), post.interval(prob)):
        assert 0.0 <= lo < hi <= 1.0, (lo, hi)
        assert post.cdf(hi) - post.cdf(lo) >= prob - 1e-12, (prob, lo, hi)


def test_exact_interval_is_unchanged_where_rounding_leaves_no_mass_out():
    post = ambppl.ambiguity_posterior([[6.0, 6.0, 6.0], [2.0, 30.0, 0.7]])
    lo, hi = post.interval(0.9)
    tail = (1.0 - 0.9) / 2.0  # 0.04999999999999999, as interval computes it
    np.testing.assert_array_equal(lo, post.ppf(tail))
    np.testing.assert_array_equal(hi, post.isf(tail))


# ----------------------------------------------------------------- 4: rvs arguments
@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((-1,), ValueError, r"^size must be non-negative .*but got -1"),
        (((3, -2),), ValueError, r"^size must be non-negative .*but got \(3, -2\)"),
        ((2.5,), TypeError, r"^size must be a non-negative int or a tuple of them .*but got 2.5"),
        ((True,), TypeError, r"^size must be a non-negative int .*but got True"),
        (((2, 2.0),), TypeError, r"^size must be .*but got \(2, 2.0\)"),
        ((2, "a"), TypeError, r"^random_state must be a non-negative int, a numpy.random"),
        ((2, -3), ValueError, r"^random_state must be a non-negative int .*but got -3"),
        ((2, 1.5), TypeError, r"^random_state must be"),
    ],
)
@pytest.mark.parametrize("alpha", [[2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 1.0]])
def test_rvs_checks_its_arguments(alpha, args, error, match):
    post = ambppl.ambiguity_posterior(alpha, n_draws=1000, random_seed=0)
    with pytest.raises(error, match=match):
        post.rvs(*args)


def test_rvs_takes_what_the_docstring_names():
    post = ambppl.ambiguity_posterior([[2.0, 3.0, 4.0]] * 2)
    assert post.rvs().shape == (2,)
    assert post.rvs(0).shape == (0, 2)
    assert post.rvs(np.int64(3), 5).shape == (3, 2)
    assert post.rvs([4, 1], np.random.default_rng(1)).shape == (4, 1, 2)
    np.testing.assert_array_equal(post.rvs(5, 11), post.rvs(5, 11))


# ----------------------------------------------------------------- 5: n_draws >= 2
def test_the_sampling_route_needs_two_draws():
    with pytest.raises(ValueError, match=r"^n_draws must be at least 2 .*but got 1"):
        ambppl.ambiguity_posterior([1.0, 1.0, 1.0, 1.0], n_draws=1)
    with pytest.raises(ValueError, match=r"^n_draws must be a positive integer, but got 0"):
        ambppl.ambiguity_posterior([1.0, 1.0, 1.0, 1.0], n_draws=0)
    # the exact route ignores n_draws, as documented
    assert ambppl.ambiguity_posterior([1.0, 1.0, 1.0], n_draws=1).method == "exact"
    post = ambppl.ambiguity_posterior([1.0, 1.0, 1.0, 1.0], n_draws=2, random_seed=3)
    assert np.isfinite(post.var()) and np.isfinite(post.mcse)


# ----------------------------------------------------------------- 6: approx ppf / isf NaN
@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_approximate_quantiles_refuse_nan_as_the_exact_posterior_does(method):
    alpha = [900.5, 60.5, 30.5]
    approx = approximate_distribution(alpha)
    exact = ambppl.ambiguity_posterior(alpha)
    match = r"^q must be probabilities in \[0, 1\], but got nan"
    for dist in (approx, exact):
        with pytest.raises(ValueError, match=match):
            getattr(dist, method)(np.nan)
        with pytest.raises(ValueError, match=match):
            getattr(dist, method)([0.5, np.nan])
    with pytest.raises(ValueError, match=r"^q must be probabilities in \[0, 1\], but got 1.5"):
        getattr(approx, method)(1.5)
