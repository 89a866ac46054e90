"""Sampling-free approximate posterior distributions of ``amb`` and ``amb_modified``.

For ``q ~ Dirichlet(alpha)`` with any number of categories the exact law of a measure has no
closed form (``ambppl.maths.exact`` covers two classes), but its moments do
(:func:`ambppl.dirichlet_moments`). This module matches them with one of two families on the
measure's support ``[lo, hi]``:

* ``"beta"``: a Beta on the exact support (``[0, 1]``; ``[0, 1 - 1/C]`` for ``amb`` without
  can't-solve), matched to the mean and variance;
* ``"pearson"``: the four-parameter Beta (Pearson type I) matched to mean, variance, skewness
  and kurtosis, where those lie in type I's region; elsewhere the row falls back to
  ``"beta"``.

Which family to use and whether to trust it come from an accuracy map measured against
exact Dirichlet draws (``benchmarks/accuracy_map.py`` writes ``approx_accuracy.json`` next
to this file) and from a per-row check of the moments the fit does not match
(:func:`moment_mismatch`); the rule is in :func:`approximate_distribution`.

Where no single (four-parameter) Beta is right: near a two-way tie between the leading
classes with small minor or can't-solve concentrations the first-order fluctuation of
``sum_k p_k^2`` vanishes and the law becomes a chi-square-like part minus Gamma-like parts
with an interior spike (:errata:`E4`), at any alpha_0; these rows fail the moment check and are
left to sampling.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ambppl.internal.checks import (
    as_float_array,
    batch_labels,
    check_option,
    check_prob,
    points_aligned,
    resolve_cant_solve,
)
from ambppl.maths import _higher_moments as hm
from ambppl.maths._double_double import dd, dd_add
from ambppl.maths.exact import shared_sections

__all__ = ["ApproximateDistribution", "accuracy_map", "approximate_distribution"]

#: The accuracy map (package data).
MAP_FILE = Path(__file__).with_name("approx_accuracy.json")
#: Families; "auto" takes the one with the smaller mapped error.
METHODS: tuple[str, ...] = ("auto", "beta", "pearson")
#: Measures with moments (and hence an approximation).
APPROX_MEASURES: tuple[str, ...] = ("amb", "modified")
#: Default bound on the worst CDF error (KS distance) for ``accurate``.
DEFAULT_BOUND = 0.005
#: Per family: rows whose fitted law misses the exact standardized moments of orders 3-6 by
#: more than this (:func:`moment_mismatch`) are never trusted, and the map's worst case is
#: taken over the shapes that pass. Calibrated on the map and on a sweep across near-ties:
#: every case at or below these values had a CDF error below 0.0035 (Pearson's fifth and
#: sixth moments can be close while its CDF is 0.03 off, hence its much smaller value).
#: The Beta's was 0.05 until an audit (2026-12-02) found near-uniform alphas of K = 8
#: without can't-solve at mismatch 0.033-0.040 whose CDF was 0.0063-0.0069 off against a
#: mapped 0.003; over 1000 random alphas (K = 3-15, with and without can't-solve, 4 x 10^5
#: exact draws each) no row at or below 0.025 and 4 sds from the upper end
#: (:data:`EDGE_SD`) exceeded its mapped error.
MISMATCH_MAX: dict[str, float] = {"beta": 0.025, "pearson": 0.003}
#: Rows whose mean lies within this many sds of the measure's upper end are never trusted.
#: Near-uniform alphas put amb's mass against its maximum (``1 - 1/C`` without can't-solve,
#: where ``1 - 1/C - amb`` is a quadratic form in ``q``): there a moment-matched Beta missed
#: the CDF by up to 0.023 while the map, whose seven shapes miss this corner, promised 0.0035
#: and the moment check passed (400 random alphas, K = 3-8 without can't-solve, 4 x 10^5 exact
#: draws each: all 25 rows over their mapped error had the mean 1.1-2.7 sds from the end; an
#: audit of 2026-12-02). At 3.2 sds a K = 6 row was still 0.0034 off (4 x 10^6 draws) against
#: a mapped 0.0024; 4 sds leaves a margin.
EDGE_SD = 4.0
#: The smallest entry of the map's shapes (their prior-like minor classes hold
#: ``min(MIN_ENTRY, 0.1 alpha_0 / (K - 1))``); rows with a smaller entry are never trusted: a
#: Pearson fit of alpha (0.13, 54.1, 0.18) missed the CDF by 0.079 against a mapped 0.0036.
MIN_ENTRY = 0.5
#: Largest error (relative to ``var ** (r / 2)``) kept in the exact central moments ``mu_r``,
#: r = 0..6, before a row is recomputed in rational arithmetic (:func:`hm.moments_to`): the
#: full accuracy of :func:`ambppl.dirichlet_moments` up to the kurtosis (what the object
#: shows), 1e-9 for the fifth and sixth moments, which only enter :func:`moment_mismatch`
#: (compared with 0.003 and more there), so that concentrated rows stay on the fast route.
MOMENT_TOL = np.array([hm.DD_TOL] * 5 + [1e-9] * 2)
#: Golden-section iterations of the HDI search (interval 0.618^60 ~ 3e-13 of the tail mass).
_HDI_ITERATIONS = 60


# --------------------------------------------------------------------------- fitting
def support(measure: str, n_proper: int, has_cs: bool) -> tuple[float, float]:
    """The range of the measure: ``[0, 1 - 1/C]`` for amb without can't-solve, else [0, 1]."""
    if measure == "amb" and not has_cs:
        return 0.0, 1.0 - 1.0 / n_proper
    return 0.0, 1.0


def fit_beta(mean: Any, var: Any, lo: float, hi: float) -> tuple[np.ndarray, ...]:
    """``(a, b, lo, hi)`` of the Beta on ``[lo, hi]`` with the given mean and variance."""
    width = hi - lo
    m = (np.asarray(mean, dtype=float) - lo) / width
    v = np.asarray(var, dtype=float) / width**2
    nu = m * (1.0 - m) / v - 1.0
    full = np.broadcast_to
    return m * nu, (1.0 - m) * nu, full(lo, m.shape) + 0.0, full(hi, m.shape) + 0.0


def fit_pearson(
    mean: Any, var: Any, skewness: Any, kurtosis: Any
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Four-parameter Beta (Pearson I) by the method of moments, and where it exists.

    With ``g1`` the skewness and ``g2`` the excess kurtosis, ``nu = a + b = 3 (g2 - g1^2 + 2)
    / (1.5 g1^2 - g2)`` must be positive; ``a, b = nu/2 (1 -+ 1/sqrt(1 + 16 (nu + 1) /
    ((nu + 2)^2 g1^2)))`` (the smaller one at the end the distribution is skewed away from)
    and the range is ``sd sqrt((nu + 2)^2 g1^2 + 16 (nu + 1)) / 2``.
    """
    mean, var, g1, g2 = (np.asarray(x, dtype=float) for x in (mean, var, skewness, kurtosis))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        nu = 3.0 * (g2 - g1 * g1 + 2.0) / (1.5 * g1 * g1 - g2)
        inv = 1.0 / np.sqrt(1.0 + 16.0 * (nu + 1.0) / ((nu + 2.0) ** 2 * g1 * g1))
        small, large = 0.5 * nu * (1.0 - inv), 0.5 * nu * (1.0 + inv)
        a = np.where(g1 > 0, small, large)
        b = np.where(g1 > 0, large, small)
        width = np.sqrt(var) * np.sqrt((nu + 2.0) ** 2 * g1 * g1 + 16.0 * (nu + 1.0)) / 2.0
        lo = mean - a / nu * width
    ok = np.isfinite(nu) & (nu > 0) & (a > 0) & (b > 0) & np.isfinite(width) & (width > 0)
    return (a, b, lo, lo + width), ok


def family_standardized(a: Any, b: Any, order: int = 6) -> np.ndarray:
    """Standardized central moments ``m_3..m_order`` of Beta(a, b) (any location/scale).

    Raw moments ``(a)_r / (a + b)_r`` and the binomial centring run in double-double
    arithmetic (:mod:`ambppl.maths._double_double`): for concentrated fits the centring cancels.
    Returns an array with a leading axis of length ``order - 2``.
    """

    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    raw = hm.raw_moments_beta(dd(a), dd_add(dd(a), dd(b)), order)
    central, _ = hm.central_from_raw(raw)
    mu = np.stack([c[0] + c[1] for c in central])
    return mu[3:] / mu[2] ** (np.arange(3, order + 1)[:, None] / 2.0)


def moment_mismatch(params: tuple[np.ndarray, ...], central: np.ndarray) -> np.ndarray:
    """How far a fitted law's standardized moments of orders 3-6 are from the exact ones.

    ``max_r |m_r(fit) - m_r(exact)| / s_r`` with ``s_r = m_r`` for even ``r`` and the
    Cauchy-Schwarz bound ``s_r = sqrt(m_{r-1} m_{r+1})`` for odd ``r`` (exact moments;
    ``central`` has the central moments ``mu_0..mu_6`` on its last axis). Zero for the
    moments a family matches; large where the law has a shape no (four-parameter) Beta has,
    such as the interior spike of amb near a two-way tie.
    """
    central = np.asarray(central, dtype=float)
    mu2 = central[..., 2]
    exact = [central[..., r] / mu2 ** (r / 2.0) for r in range(7)]
    scale = {
        3: np.sqrt(exact[4]),
        4: exact[4],
        5: np.sqrt(exact[4] * exact[6]),
        6: exact[6],
    }
    fit = family_standardized(params[0], params[1]).reshape(4, *np.shape(mu2))
    with np.errstate(invalid="ignore"):
        out = np.max(
            np.stack([np.abs(fit[r - 3] - exact[r]) / scale[r] for r in range(3, 7)]), axis=0
        )
    return np.where(np.isfinite(out), out, np.inf)


# --------------------------------------------------------------------------- the map
def worst_over_shapes(data: dict[str, Any], key: str, family: str, threshold: float) -> Any:
    """K x alpha0 table: worst KS distance over the shapes whose mismatch is <= threshold.

    A cell where no shape passes is ``inf`` (no evidence: never trusted).
    """
    per_shape = data["ks"][key][family]
    ks = np.array([per_shape[s] for s in per_shape], dtype=float)
    mm = np.array([data["mismatch"][key][family][s] for s in per_shape], dtype=float)
    passing = mm <= threshold
    worst = np.max(np.where(passing, ks, 0.0), axis=0)
    return np.where(np.any(passing, axis=0), worst, np.inf)


@functools.cache
def accuracy_map() -> dict[str, Any]:
    """The stored accuracy map (``approx_accuracy.json``) and the rule's error tables.

    Returns
    -------
    dict
        The JSON content plus ``"error"``: ``{(measure, has_cs, family): array (K, alpha0)}``,
        the KS distance maximized over the alpha shapes whose moment mismatch is at most
        the family's :data:`MISMATCH_MAX`, plus the reference's Monte Carlo allowance (what the rule
        compares with the bound).

    Examples
    --------
    >>> from ambppl.maths.approx import accuracy_map
    >>> m = accuracy_map()
    >>> m["K"][0], m["alpha0"][0], m["alpha0"][-1]
    (3, 1.0, 10000.0)
    """
    with MAP_FILE.open(encoding="utf-8") as fh:
        data = json.load(fh)
    error = {}
    for key, per_family in data["ks"].items():
        measure, cs = key.split("|")
        for family in per_family:
            worst = worst_over_shapes(data, key, family, MISMATCH_MAX[family])
            error[measure, cs == "cs", family] = worst + data["mc_allowance"]
    data["error"] = error
    return data


def _bracket(grid: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices ``i <= j`` of the grid values around ``x`` (``i == j`` on a grid value) and
    whether ``x`` is inside the grid."""
    inside = (x >= grid[0] * (1 - 1e-12)) & (x <= grid[-1] * (1 + 1e-12))
    i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, len(grid) - 1)
    on_grid = np.isclose(grid[i], x, rtol=1e-12, atol=0.0)
    j = np.where(on_grid, i, np.minimum(i + 1, len(grid) - 1))
    return i, j, inside


def _lookup(measure: str, has_cs: bool, k: int, alpha0: np.ndarray) -> dict[str, np.ndarray]:
    """Mapped worst CDF error of each family for each row.

    Between grid values of K and of alpha_0 the largest of the (up to four) surrounding
    cells' errors is taken (on a grid value, that value's cells); outside the grid the
    error is ``inf``.
    """
    data = accuracy_map()
    ki, kj, k_inside = _bracket(np.asarray(data["K"], dtype=float), np.asarray(float(k)))
    i, j, inside = _bracket(np.asarray(data["alpha0"], dtype=float), alpha0)
    inside = inside & bool(k_inside)
    out = {}
    for family in ("beta", "pearson"):
        table = data["error"][measure, has_cs, family]
        rows = np.maximum(table[ki], table[kj])
        out[family] = np.where(inside, np.maximum(rows[i], rows[j]), np.inf)
    return out


# --------------------------------------------------------------------------- the object
class ApproximateDistribution:
    """A moment-matched (four-parameter) Beta per alpha row, in the scipy.stats style.

    Built by :func:`approximate_distribution`. Attributes (shape ``batch_shape``): ``mean``,
    ``var``, ``skewness``, ``excess_kurtosis`` (exact), ``a``, ``b``, ``lo``, ``hi`` (the
    fitted Beta on ``[lo, hi]``), ``family`` (``"beta"`` or ``"pearson"`` per row, a string
    array), ``mismatch`` (:func:`moment_mismatch` of the fitted law), ``max_error`` (the
    mapped worst CDF error; ``inf`` outside the map or where the mismatch is above
    :data:`MISMATCH_MAX`), ``bound`` and ``accurate`` (``max_error <= bound``). Where
    ``alpha`` came as an :class:`xarray.DataArray`, the names of its batch dimensions and
    their labels are kept in the object (:func:`ambppl.internal.checks.batch_labels`). Points
    broadcast against the batch shape by position, or are read by these labels where
    labelled by item (:meth:`cdf`); the results are numpy arrays in ``alpha``'s order.
    """

    def __init__(
        self,
        moments: Any,
        params: tuple[np.ndarray, ...],
        pearson: np.ndarray,
        support_: tuple[float, float],
        max_error: np.ndarray,
        bound: float,
        mismatch: np.ndarray,
        batch_dims: tuple[Any, ...] | None = None,
        batch_labels: dict[Any, list] | None = None,
    ) -> None:
        self._batch_dims = None if batch_dims is None else tuple(batch_dims)
        self._batch_labels = dict(batch_labels or {})
        self.mean = moments.mean
        self.var = moments.var
        self.skewness = moments.skewness
        self.excess_kurtosis = moments.excess_kurtosis
        self.a, self.b, self.lo, self.hi = (np.asarray(p, dtype=float) for p in params)
        self.batch_shape = self.a.shape
        self.family = np.where(pearson, "pearson", "beta")
        self.support = support_
        self.max_error = max_error
        self.bound = bound
        self.accurate = max_error <= bound
        self.mismatch = mismatch

    def trusted(self, bound: float) -> Any:
        """Where the mapped worst CDF error is at most ``bound`` (a bool array)."""
        return self.max_error <= check_prob(bound, "bound")

    def _broadcast(self, x: Any, name: str) -> tuple[np.ndarray, ...]:
        # a labelled x is read by its labels (or refused), not by position
        arr = as_float_array(points_aligned(x, self._batch_dims, self._batch_labels, name), name)
        try:
            shape = np.broadcast_shapes(arr.shape, self.batch_shape)
        except ValueError as err:
            raise ValueError(
                f"{name} must broadcast against the batch shape {self.batch_shape}, but got "
                f"shape {arr.shape}; add trailing axes, e.g. x[:, None]"
            ) from err
        return (np.broadcast_to(v, shape) for v in (arr, self.a, self.b, self.lo, self.hi))

    def _scaled(self, x: Any) -> tuple[np.ndarray, ...]:
        xb, a, b, lo, hi = self._broadcast(x, "x")
        return np.clip((xb - lo) / (hi - lo), 0.0, 1.0), a, b

    @shared_sections
    def cdf(self, x: Any) -> Any:
        """``P(measure <= x)``, ``x`` broadcast against the batch shape.

        {points}

        Examples
        --------
        >>> import pandas as pd, xarray as xr
        >>> from ambppl.maths.approx import approximate_distribution
        >>> alpha = xr.DataArray([[5.0, 4.0, 1.0], [2.0, 2.0, 6.0]], dims=("item", "category"),
        ...                      coords={"item": ["a", "b"]})
        >>> d = approximate_distribution(alpha)
        >>> bool((d.cdf(pd.Series({"b": 0.7, "a": 0.3})) == d.cdf([0.3, 0.7])).all())
        True
        """
        import scipy.special as sc

        z, a, b = self._scaled(x)
        return _scalar(sc.betainc(a, b, z))

    @shared_sections
    def sf(self, x: Any) -> Any:
        """``P(measure > x)``, without the cancellation of ``1 - cdf``.

        {points}
        """
        import scipy.special as sc

        z, a, b = self._scaled(x)
        return _scalar(sc.betaincc(a, b, z))

    def _probabilities(self, q: Any) -> tuple[np.ndarray, ...]:
        """``q`` broadcast with the parameters; NaN or values outside [0, 1] raise (as the
        exact posterior's :meth:`ambppl.maths.exact.AmbiguityPosterior.ppf`)."""
        qb, a, b, lo, hi = self._broadcast(q, "q")
        bad = np.isnan(qb) | (qb < 0) | (qb > 1)
        if np.any(bad):
            raise ValueError(
                f"q must be probabilities in [0, 1], but got {float(qb[bad].flat[0])!r}"
            )
        return qb, a, b, lo, hi

    @shared_sections
    def ppf(self, q: Any) -> Any:
        """Quantiles, clipped to the measure's support.

        {levels}
        """
        import scipy.special as sc

        qb, a, b, lo, hi = self._probabilities(q)
        x = lo + (hi - lo) * sc.betaincinv(a, b, qb)
        return _scalar(np.clip(x, *self.support))

    @shared_sections
    def isf(self, q: Any) -> Any:
        """Upper quantiles: ``sf(isf(q)) = q``, clipped to the measure's support.

        {levels}
        """
        import scipy.special as sc

        qb, a, b, lo, hi = self._probabilities(q)
        x = lo + (hi - lo) * sc.betainccinv(a, b, qb)
        return _scalar(np.clip(x, *self.support))

    def interval(self, confidence: float = 0.94) -> tuple[Any, Any]:
        """Equal-tailed interval with probability ``confidence``."""
        c = check_prob(confidence, "confidence")
        return self.ppf((1.0 - c) / 2.0), self.ppf((1.0 + c) / 2.0)

    def hdi(self, prob: float = 0.94) -> tuple[Any, Any]:
        """Shortest interval with probability ``prob`` (golden-section search on its tail)."""
        p = check_prob(prob, "prob")
        left = np.zeros(self.batch_shape)
        right = np.full(self.batch_shape, 1.0 - p)
        ratio = (math.sqrt(5.0) - 1.0) / 2.0

        def width(t: np.ndarray) -> np.ndarray:
            return np.asarray(self.ppf(t + p)) - np.asarray(self.ppf(t))

        c = right - ratio * (right - left)
        d = left + ratio * (right - left)
        fc, fd = width(c), width(d)
        for _ in range(_HDI_ITERATIONS):
            lower = fc < fd  # the minimum lies in [left, d]
            right = np.where(lower, d, right)
            left = np.where(lower, left, c)
            new_c = np.where(lower, right - ratio * (right - left), d)
            new_d = np.where(lower, c, left + ratio * (right - left))
            f_new = width(np.where(lower, new_c, new_d))
            fc, fd = np.where(lower, f_new, fd), np.where(lower, fc, f_new)
            c, d = new_c, new_d
        t = 0.5 * (left + right)
        return self.ppf(t), self.ppf(t + p)

    def __repr__(self) -> str:
        return (
            f"ApproximateDistribution(batch_shape={self.batch_shape}, "
            f"accurate={int(np.sum(self.accurate))}/{int(np.size(self.accurate))}, "
            f"bound={self.bound})"
        )


def _scalar(x: np.ndarray) -> Any:
    return x[()] if np.ndim(x) == 0 else x


def approximate_distribution(
    alpha: Any,
    measure: str = "amb",
    *,
    cant_solve: int | str | None = "auto",
    method: str = "auto",
    bound: float = DEFAULT_BOUND,
) -> ApproximateDistribution:
    r"""A sampling-free approximation of the law of a measure under ``q ~ Dirichlet(alpha)``.

    Parameters
    ----------
    alpha : array_like or xarray.DataArray
        Dirichlet concentrations (for a posterior ``counts + prior``), categories on the last
        axis, any batch shape before it; all finite and positive. A DataArray's batch
        dimensions and their labels (``item``) are kept in the object: points and levels
        labelled by item (a pandas Series, a DataArray with an item coordinate) are read by
        these labels; with a bare array they are refused (pass ``x.values`` in the items'
        order). The results are numpy arrays in ``alpha``'s order.
    measure : {"amb", "modified"}, default "amb"
        :func:`ambppl.amb` or :func:`ambppl.amb_modified`.
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    method : {"auto", "beta", "pearson"}, default "auto"
        The family: ``"beta"`` (mean and variance on the measure's support), ``"pearson"``
        (four-parameter Beta matched to four moments, falling back to ``"beta"`` for rows
        outside Pearson type I), or ``"auto"``: per row the one whose mapped error is smaller.
    bound : float, default 0.005
        Worst CDF error tolerated for ``accurate``.

    Returns
    -------
    ApproximateDistribution
        Vectorized over the batch: ``cdf``, ``sf``, ``ppf``, ``isf``, ``interval``, ``hdi``,
        the exact moments, ``max_error`` (mapped worst CDF error per row) and ``accurate``.

    Raises
    ------
    ValueError
        For an unknown ``measure`` or ``method``, ``bound`` outside (0, 1), or bad ``alpha``
        / ``cant_solve`` (as :func:`ambppl.dirichlet_moments`).
    NotImplementedError
        For ``measure="old"`` or ``"entropy"`` (no moments).

    Notes
    -----
    **The rule.** ``accurate`` is true for a row when ``max_error <= bound``; callers use the
    approximation there and Monte Carlo draws elsewhere. ``max_error`` is ``inf`` (never
    trusted) when

    * the row's **moment mismatch** (:func:`moment_mismatch`: how far the fitted law's
      standardized moments of orders 3-6 are from the exact ones) exceeds
      :data:`MISMATCH_MAX` (0.025 for ``"beta"``, 0.003 for ``"pearson"``) — this rejects
      shapes no Beta has, such as the interior spike of amb near a two-way tie with a rare
      can't-solve (:errata:`E4`), whatever K and alpha_0 are; or
    * an entry of the row is below the smallest the map's shapes hold at its alpha_0,
      ``min(0.5, 0.1 alpha_0 / (K - 1))`` (:data:`MIN_ENTRY`; a prior of 0.5 or more keeps
      every posterior above it); or
    * the row's mean lies within :data:`EDGE_SD` (4) standard deviations of the measure's
      upper end: near-uniform alphas put the mass against amb's maximum, a corner the map's
      shapes miss, where a Beta missed the CDF by up to 0.023 with the moment check passed;
      or
    * ``K`` (the length of the alpha vector, can't-solve counted when present) or
      ``alpha_0`` (its sum) lies outside the map: ``K < 3``, ``K > 20``, ``alpha_0 < 1`` or
      ``alpha_0 > 10^4``.

    Otherwise it is read from the accuracy map (``approx_accuracy.json``, made by
    ``python benchmarks/accuracy_map.py``), which holds the Kolmogorov-Smirnov distance
    :math:`\sup_x |F_{approx}(x) - F_n(x)|` against ``n = 10^6`` exact Dirichlet draws and
    the moment mismatch for ``K`` in {3, 4, 5, 6, 8, 10, 12, 15, 20}, ``alpha_0`` in
    {1, 3, 10, ..., 3000, 10^4} and seven alpha shapes (symmetric; all answers agree; heavy
    can't-solve; an exact two-way tie, a near tie and a 2 : 1 leader with prior-sized minor
    classes; graded), separately for each measure, with and without can't-solve:

    * per cell, the **worst over the shapes whose mismatch passes** (a cell where none passes
      is ``inf``),
    * plus the reference's Monte Carlo allowance ``1.63 / sqrt(n)`` = 0.0016 (the 99 %
      quantile of the KS distance of ``n`` exact draws from their own law), so that the
      number bounds the true error, not only the measured one;
    * between grid values of ``K`` and of ``alpha_0`` (log scale), the **largest** of the
      (up to four) surrounding cells (a grid value uses its own row or column).

    ``method="auto"`` takes per row the family with the smaller such error. The shapes are a
    sample, not every possible alpha: the mismatch test guards rows unlike all of them, but
    does not prove a bound for them. The moments are exact
    (:func:`ambppl.dirichlet_moments`); only the shape of the law is approximated.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.2.
    .. [2] N. L. Johnson, S. Kotz, N. Balakrishnan, *Continuous Univariate Distributions*,
       vol. 2, ch. 25 (four-parameter Beta by moments).

    Examples
    --------
    >>> import numpy as np
    >>> from ambppl.maths.approx import approximate_distribution
    >>> alpha = np.array([[900.5, 60.5, 30.5, 10.5, 2.5], [1.5, 0.5, 0.5, 0.5, 0.5]])
    >>> d = approximate_distribution(alpha)
    >>> d.accurate.tolist()
    [True, False]
    >>> bool(abs(d.cdf(d.ppf(0.9))[0] - 0.9) < 1e-9)
    True
    """

    check_option(method, METHODS, "method")
    bound = check_prob(bound, "bound")
    check_option(measure, ("amb", "modified", "old", "entropy"), "measure")
    # the position is resolved once, on the input: its attrs say which entry is can't-solve
    cant_solve = resolve_cant_solve(alpha, cant_solve, name="alpha")
    arr, idx, _ = hm.check_moments_args(alpha, measure, 6, cant_solve)
    moments = hm.moments_to(arr, idx, measure, 6, MOMENT_TOL)
    k = arr.shape[-1]
    has_cs = idx is not None
    lo, hi = support(measure, k - has_cs, has_cs)
    # rows whose variance underflows float64 (alpha_0 of 1e150 or more, far outside the
    # map: never trusted) give NaN and inf below, and so an error of inf, without warnings
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        beta = fit_beta(moments.mean, moments.var, lo, hi)
        pear, ok = fit_pearson(moments.mean, moments.var, moments.skewness, moments.excess_kurtosis)
        pear = tuple(np.where(ok, p, q) for p, q in zip(pear, beta, strict=True))
        mapped = _lookup(measure, has_cs, k, np.asarray(np.sum(arr, axis=-1), dtype=float))
        mismatch = {"beta": moment_mismatch(beta, moments.central)}
        mismatch["pearson"] = np.where(ok, moment_mismatch(pear, moments.central), mismatch["beta"])
        near_end = (hi - moments.mean) < EDGE_SD * np.sqrt(moments.var)
        # entries below the smallest the map's shapes hold at this alpha_0 (its prior-like
        # minor classes, min(0.5, 0.1 alpha_0 / (K - 1))): no evidence there
        total = np.sum(arr, axis=-1)
        unmapped = np.min(arr, axis=-1) < np.minimum(MIN_ENTRY, 0.1 * total / (k - 1))
        untrusted = near_end | unmapped
    # a family's error for a row: the mapped error where its mismatch passes, the mean is
    # not against the upper end and no entry is below the map's, else inf
    err = {
        family: np.where(
            (mismatch[family] <= MISMATCH_MAX[family]) & ~untrusted, mapped[family], np.inf
        )
        for family in mapped
    }
    if method == "auto":
        use_pearson = ok & (err["pearson"] < err["beta"])
    else:
        use_pearson = ok & (method == "pearson")
    params = tuple(np.where(use_pearson, p, q) for p, q in zip(pear, beta, strict=True))
    max_error = np.where(use_pearson, err["pearson"], err["beta"])
    row_mismatch = np.where(use_pearson, mismatch["pearson"], mismatch["beta"])
    dims, labels = batch_labels(alpha)  # labelled points are read by these labels
    return ApproximateDistribution(
        moments,
        params,
        use_pearson,
        (lo, hi),
        max_error,
        bound,
        row_mismatch,
        batch_dims=dims,
        batch_labels=labels,
    )
