"""Monte Carlo means read against a gamma law whose moments are known, not estimated.

A check that compares the mean of a series over ``N`` draws with its exact expectation
needs that mean's spread. Estimated from the same draws it is correlated with the mean
itself wherever the series is skewed: the mean of ``(x - m)^2`` (a variance) is low exactly
where its estimated error is, and the z-scores get a heavy lower tail (``check_moments``
failed a correct posterior in 5-11 % of fits at ``alpha = 0.01`` on that error). Here the
variance and third central moment of the series come from the reference law instead, and
the standardized mean is read against the gamma law (Pearson type III) of that skewness.

- :func:`square_moments`: variance and third moment of ``(x - m)^2`` from ``x``'s central
  moments; :func:`dirichlet_square_moments` takes those in closed form
  (:func:`ambppl.dirichlet_moments`), :func:`pilot_central_moments` estimates them from
  independent draws of the reference law (measures without finite moment sums);
- :func:`mean_z`: the z-score of a series' mean given the series' variance and third
  moment; :func:`normal_score`: the normal score of a standardized statistic under a gamma
  law of given skewness.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from ambppl.maths import DirichletMoments
from ambppl.maths.draws import dirichlet_draws
from ambppl.maths.measures import evaluate
from ambppl.maths.moments import dirichlet_moments
from ambppl.validation._draws import effective_draws, series_mcse

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

#: Gamma shape ``k = 4 / skew^2`` above which :func:`normal_score` takes the Wilson-Hilferty
#: normal approximation of the gamma law instead of the incomplete gamma function (whose
#: tails scipy gets wrong by tens of per cent for ``k`` near 1e8; right to 1e-15 up to
#: 4e4 and to 2e-9 at 4.4e5; Wilson-Hilferty's tail probabilities at ``|t| <= 5`` are off by
#: 1.4e-4 at ``k = 4e4`` and 1.2e-5 at 4.4e5, against mpmath; 2026-12-07).
WILSON_HILFERTY_K = 1e5

#: Independent draws of the reference law from which :func:`pilot_central_moments`
#: estimates central moments. The fourth moment of a bounded measure is then known to
#: within a few per cent (its relative error is about ``sqrt(mu_8 / mu_4^2 / M)``), which
#: moves a z-score of 3 by less than 0.1.
PILOT_DRAWS = 200_000

#: Seed of the pilot draws: the same reference always gets the same error.
PILOT_SEED = 20261208


def square_moments(central: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Variance and third central moment of ``(x - m)^2``, ``m`` the exact mean of ``x``,
    from ``x``'s central moments ``mu_r`` (trailing axis, ``r = 0..6``)."""
    central = np.asarray(central, dtype=np.float64)
    var = central[..., 2]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _from_standardized(var, central[..., 4] / var**2, central[..., 6] / var**3)


def dirichlet_square_moments(
    alpha: np.ndarray, measure: str, cs: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`square_moments` of the measure of ``q ~ Dirichlet(alpha)`` (rows), with the
    closed-form central moments of :func:`ambppl.dirichlet_moments` (``amb``, ``modified``)."""
    return square_of(dirichlet_moments(alpha, measure, 6, cant_solve=cs))


def square_of(moments: DirichletMoments) -> tuple[np.ndarray, np.ndarray]:
    """:func:`square_moments` from :func:`ambppl.dirichlet_moments`' result (order 6 or
    more), with the kurtosis as it returns it: right where a central moment leaves float64."""
    var = np.asarray(moments.var, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        s4 = np.asarray(moments.excess_kurtosis, dtype=np.float64) + 3.0
        s6 = np.asarray(moments.central, dtype=np.float64)[..., 6] / var**3
        return _from_standardized(var, s4, s6)


def _from_standardized(
    var: np.ndarray, s4: np.ndarray, s6: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``mu_4 - mu_2^2`` and ``mu_6 - 3 mu_4 mu_2 + 2 mu_2^3`` from the variance and the
    standardized moments ``s_r = mu_r / mu_2^(r/2)`` (NaN or inf where they leave float64)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return var * var * (s4 - 1.0), var**3 * (s6 - 3.0 * s4 + 2.0)


def pilot_central_moments(
    alpha: np.ndarray, measure: str, cs: int | None, mean: np.ndarray
) -> np.ndarray:
    """Central moments ``mu_0..mu_6`` of the measure of ``q ~ Dirichlet(alpha)`` (rows),
    about the exact ``mean`` of each row, estimated from :data:`PILOT_DRAWS` independent
    draws of the law (seed :data:`PILOT_SEED`): for measures without finite moment sums
    (``old``, ``entropy``). The draws are the reference's, not the fit's, so the estimate is
    independent of the draws a check tests."""
    alpha = np.atleast_2d(np.asarray(alpha, dtype=np.float64))
    mean = np.broadcast_to(np.asarray(mean, dtype=np.float64), alpha.shape[:1])
    rows = [_pilot_row(tuple(a), measure, cs, float(m)) for a, m in zip(alpha, mean, strict=True)]
    return np.array(rows, dtype=np.float64).reshape(alpha.shape[0], 7)


@functools.lru_cache(maxsize=256)
def _pilot_row(alpha: tuple[float, ...], measure: str, cs: int | None, mean: float) -> tuple:
    """:func:`pilot_central_moments` of one row (cached: a check run again on the same
    reference draws no new pilot)."""
    rng = np.random.default_rng(PILOT_SEED)
    q = dirichlet_draws(rng, np.array([alpha]), PILOT_DRAWS)[:, 0, :]
    x = np.asarray(evaluate(measure, q, cant_solve=cs), dtype=np.float64) - mean
    return tuple(float(np.mean(x**r)) for r in range(7))


def mean_z(
    series: xr.DataArray,
    diff: np.ndarray,
    var_y: np.ndarray,
    third_y: np.ndarray,
    independent: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """z-scores and Monte Carlo standard errors of the means of ``series`` (dims chain,
    draw, ...), whose variance ``var_y`` and third central moment ``third_y`` are known.

    The mean over ``n`` effective draws (:func:`ambppl.validation._draws.effective_draws`)
    has variance ``var_y / n`` and skewness ``third_y / var_y^1.5 / sqrt(n)``; ``diff``
    (mean minus expectation) is read against the gamma law (Pearson type III) with these
    moments, and ``z`` is the normal score of its tail probability, so that ``2 *
    norm.sf(|z|)`` is the two-sided p-value. Where ``var_y`` is not a positive number (a
    variance below float64's range) the draws' own error and a normal tail are taken
    instead. Autocorrelated draws are given the skewness of ``n`` independent ones (an
    approximation)."""
    n_eff = effective_draws(series, independent)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        err = np.sqrt(var_y / n_eff)
        skew = third_y / var_y**1.5 / np.sqrt(n_eff)
        known = np.isfinite(err) & (err > 0)
        if not known.all():
            err = np.where(known, err, series_mcse(series, independent))
        skew = np.where(known & np.isfinite(skew), skew, 0.0)
        return normal_score(diff / err, skew), err


def normal_score(t: np.ndarray, skew: np.ndarray) -> np.ndarray:
    """Normal score ``Phi^-1(F(t))`` of a standardized statistic ``t`` whose law is taken
    as the gamma law (Pearson type III) of mean 0, variance 1 and skewness ``skew``: for
    ``skew > 0``, ``t = (G - k) / sqrt(k)`` with ``G ~ Gamma(k)``, ``k = 4 / skew^2`` (a
    negative skewness mirrors it; a zero one is the normal law, ``t`` itself). ``t`` below
    the law's lower end ``-2 / skew`` gets ``-inf``. Shapes above
    :data:`WILSON_HILFERTY_K` use ``(G / k)^(1/3) ~ N(1 - 1 / (9 k), 1 / (9 k))``."""
    from scipy import special
    from scipy.stats import norm

    t = np.array(t, dtype=np.float64)
    skew = np.broadcast_to(np.asarray(skew, dtype=np.float64), t.shape)
    skewed = np.isfinite(t) & np.isfinite(skew) & (skew != 0)
    if skewed.any():
        sign = np.sign(skew[skewed])
        k = 4.0 / skew[skewed] ** 2
        u = sign * t[skewed] * np.abs(skew[skewed]) / 2.0  # G / k - 1
        inside = u > -1.0
        score = np.full(u.shape, -np.inf)
        exact = inside & (k <= WILSON_HILFERTY_K)
        g = k[exact] * (1.0 + u[exact])
        lower, upper = special.gammainc(k[exact], g), special.gammaincc(k[exact], g)
        score[exact] = np.where(lower < upper, -norm.isf(lower), norm.isf(upper))
        wh = inside & (k > WILSON_HILFERTY_K)
        cube = np.expm1(np.log1p(u[wh]) / 3.0)  # (G / k)^(1/3) - 1 without cancellation
        score[wh] = (cube + 1.0 / (9.0 * k[wh])) * 3.0 * np.sqrt(k[wh])
        t[skewed] = sign * score
    return t
