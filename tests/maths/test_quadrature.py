"""Tests of ambppl.maths._quadrature: tanh-sinh with step halving on log-integrands.

Every integral here has a closed form, so the references are exact: Beta densities
integrate to 1 (normalizer from mpmath) and Gaussians to 1 (their mass beyond the
interval is below 1e-300).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from ambppl.maths import _quadrature as quad


def _log_beta_density(p, dl, dr):
    """log of the Beta(a, b) density on (0, 1) from the exact distances to both ends."""
    return (p["a"] - 1.0) * np.log(dl) + (p["b"] - 1.0) * np.log(dr) - p["lb"]


def _beta_params(pairs, shift=0.0):
    a = np.array([x for x, _ in pairs], dtype=float)
    b = np.array([y for _, y in pairs], dtype=float)
    with mp.workdps(40):  # log B(1e4, 1e4) ~ -13866 needs more than 15 digits
        lb = np.array([float(mp.log(mp.beta(x, y))) for x, y in pairs]) + shift
    return {"a": a, "b": b, "lb": lb}


def _log_gauss(p, dl, dr):
    return -0.5 * ((dl - p["mu"]) / p["sd"]) ** 2 - np.log(math.sqrt(2.0 * math.pi) * p["sd"])


PAIRS = [(0.2, 0.3), (0.5, 0.5), (1.0, 1.0), (3.5, 2.2), (0.2, 1e4), (150.5, 3.3), (1e4, 1e4)]


@pytest.mark.parametrize("split", [False, True])
def test_beta_densities_integrate_to_one(split):
    """End-point singularities down to x**-0.8 and peaks of width 0.004: exact to 1e-12,
    plus the rounding of the integrand itself, (a - 1) log x + (b - 1) log(1 - x) - log B
    cancels terms of size |log B| (13866 at a = b = 1e4) to ~4e-16 |log B|."""
    params = _beta_params(PAIRS)
    log_i, ok = quad.integrate_log(
        _log_beta_density, params, np.ones(len(PAIRS)), split=split, rtol=1e-11
    )
    assert ok.all()
    assert np.all(np.abs(log_i) <= 1e-12 + 4e-16 * np.abs(params["lb"]))


def test_integrals_far_below_the_float_range():
    """exp(log I) underflows (log I = -2000, -20000): relative accuracy is kept in log space,
    and convergence is not declared early (regression: an absolute test on exp(log I)
    compared 0 <= 0 and stopped every such integral after two levels)."""
    for shift in (2000.0, 20000.0):
        params = _beta_params(PAIRS, shift=shift)
        log_i, ok = quad.integrate_log(
            _log_beta_density, params, np.ones(len(PAIRS)), split=True, rtol=1e-11
        )
        assert ok.all()
        np.testing.assert_allclose(log_i, -shift, rtol=0, atol=1e-12 + 4e-16 * shift)


@pytest.mark.parametrize("flanks", [False, True])
def test_narrow_interior_peaks(flanks):
    """Gaussians of sd 3e-5..1e-2 at interior points of (0, 1): the peak search must find
    them (a peak missed by the first level's nodes would never be refined). Narrower ones
    are not exact in float64 themselves: x - mu carries ~1e-16 absolute error, so the
    density's relative error is ~1e-16 / sd."""
    rng = np.random.default_rng(7)
    sd = 10.0 ** rng.uniform(-4.5, -2, 40)
    mu = rng.uniform(0.05, 0.95, 40)
    log_i, ok = quad.integrate_log(
        _log_gauss, {"mu": mu, "sd": sd}, np.ones(40), split=True, flanks=flanks, rtol=1e-11
    )
    assert ok.all()
    np.testing.assert_allclose(log_i, 0.0, rtol=0, atol=1e-11)


def test_batch_equals_one_at_a_time():
    params = _beta_params(PAIRS)
    length = np.ones(len(PAIRS))
    batch, _ = quad.integrate_log(_log_beta_density, params, length, rtol=1e-11)
    for i in range(len(PAIRS)):
        one = {k: v[i : i + 1] for k, v in params.items()}
        single, _ = quad.integrate_log(_log_beta_density, one, length[:1], rtol=1e-11)
        assert abs(single[0] - batch[i]) <= 1e-13


def test_find_peak_width_is_the_gaussian_sd():
    sd = np.array([1e-4, 1e-3, 3e-2])
    mu = np.array([0.3, 0.6, 0.5])
    peak, width = quad.find_peak(_log_gauss, {"mu": mu, "sd": sd}, np.ones(3))
    assert np.all(np.abs(peak - mu) <= 0.5 * sd)  # inside the top of the peak
    np.testing.assert_allclose(width, sd, rtol=0.05)


def test_find_peak_reports_no_width_at_an_end_singularity():
    """A density rising to an end (x**-0.8) has no interior maximum to cut at."""
    params = _beta_params([(0.2, 3.0)])
    peak, width = quad.find_peak(_log_beta_density, params, np.ones(1))
    assert np.isnan(width[0]) and peak[0] < quad.EDGE


def test_not_converged_is_reported(monkeypatch):
    """With too few levels the flag says so instead of returning a silent wrong value."""
    monkeypatch.setattr(quad, "LEVEL_MAX", 2)
    params = _beta_params([(3.5, 2.2)])
    _, ok = quad.integrate_log(_log_beta_density, params, np.ones(1), split=False, rtol=1e-14)
    assert not ok[0]


def test_peaks_next_to_an_end_are_cut():
    """A Gaussian 20 sd from the lower end but only 3.6e-4 of the interval away: the peak
    search used to stop once its bracket lay within EDGE (1e-3) of the end, leaving no cut,
    and the first level's nodes missed the peak (the modified cdf of (459, 2.2e5, 9.2) at
    1 - 1e-10 came out as 1.7e-53). A well separated narrow peak is now cut wherever it lies
    (EDGE_PEAK); mirrored at the upper end too. Reference: the Gaussian's mass, 1."""
    sd = np.array([1.7e-5, 1.7e-5, 3e-6])
    mu = np.array([3.6e-4, 1.0 - 3.6e-4, 1e-4])
    log_i, ok = quad.integrate_log(
        _log_gauss, {"mu": mu, "sd": sd}, np.ones(3), split=True, rtol=1e-11
    )
    assert ok.all()
    np.testing.assert_allclose(log_i, 0.0, rtol=0, atol=1e-11)


def test_gaps_and_their_closed_form_mass():
    """Beta(1e-3, 2) holds 97% of its mass within 1e-30 of 0 (and half below the smallest
    double), out of every node's reach: with the gap [0, 1e-30] left out and its mass
    I_{1e-30}(1e-3, 2) (scipy.special.betainc) added, the density integrates to 1
    (reference: a density's mass). The stretch left out counts as settled mass."""
    import scipy.special as sc

    params = _beta_params([(1e-3, 2.0), (0.5, 0.5)])
    g = np.array([1e-30, 1e-30])
    extra = np.log(sc.betainc(params["a"], params["b"], g))
    log_i, ok = quad.integrate_log(
        _log_beta_density,
        params,
        np.ones(2),
        rtol=1e-11,
        gaps=(g, np.zeros(2)),
        log_extra=extra,
    )
    assert ok.all()
    np.testing.assert_allclose(log_i, 0.0, rtol=0, atol=1e-12)
    without, _ = quad.integrate_log(_log_beta_density, params, np.ones(2), rtol=1e-11)
    assert without[0] < math.log(0.7)  # the mass below the nodes is simply lost


def _log_step(p, dl, dr):
    """log of a logistic step from 0 to 1 of width p["w"] at p["at"] (on [0, 1])."""
    return -np.logaddexp(0.0, -(dl - p["at"]) / p["w"])


def test_extra_cuts_and_a_tolerance_per_integral():
    """A step of width 1e-7 at 0.3 (what a concentrated V's tail is in the cdf integrands)
    is resolved once the interval is cut at it (``cuts``); ``rtol`` may be one per
    integral. Reference: the step's integral over [0, 1], w log((1 + exp(0.7 / w)) /
    (1 + exp(-0.3 / w))) = 0.7 + O(w exp(-0.3 / w)), i.e. 0.7 in float64."""
    p = {"at": np.array([0.3, 0.3]), "w": np.array([1e-7, 1e-7])}
    cuts = np.array([[0.3 - 8e-7, 0.3, 0.3 + 8e-7], [np.nan, np.nan, np.nan]])
    log_i, ok = quad.integrate_log(
        _log_step,
        p,
        np.ones(2),
        split=False,
        rtol=np.array([1e-12, 1e-12]),
        atol=1e-16,
        cuts=cuts,
    )
    assert ok[0] and abs(math.exp(log_i[0]) - 0.7) <= 1e-12
    assert not ok[1]  # without the cuts (NaN) nine levels do not resolve it (3e-5 off)
