"""Closed-form moments of the ambiguity measures when ``q ~ Dirichlet(alpha)``.

One small function per formula (``_mean_amb``, ``_var_amb``, ...), dispatched by ``measure``
through the dictionaries :data:`_MEANS` and :data:`_VARIANCES`, in the manner of PyMC's
``moments/means.py``. A moment without a closed form here is missing from the dictionary and
the public function raises :class:`NotImplementedError` for it instead of guessing.

Notation (paper section 3.2; the docs page maths/errata): ``alpha = (alpha_1..alpha_C, alpha_cs)``,
``b = sum_k alpha_k`` (proper categories only), ``alpha_0 = b + alpha_cs``. Under the
Dirichlet, ``u = q_cs ~ Beta(alpha_cs, b)`` is independent of ``p = q_proper / (1 - u) ~
Dir(alpha_1..alpha_C)``, and with ``S2 = sum_k p_k^2``

* ``amb = 1 - X * S2`` with ``X = 1 - u``,
* ``amb_modified = 1 - X * Y'`` with ``Y' = (C * S2 - 1) / (C - 1)``.

Numerical stability (:errata:`E5`). The paper's final forms subtract nearly equal numbers:
``Var(amb) = R + (S - 1)(1 - E)^2`` loses about 1e-3 relative accuracy at
``alpha = (1e7, 1, 1)`` and ``E(amb) = 1 - ...`` loses everything when one category
dominates. Every formula below is instead written as a sum of non-negative terms, each of
which is a product / quotient of non-negative quantities, so its relative error stays at a
few ulps for concentrations anywhere in ``[1e-3, 1e9]``; the sums over categories (``e2``,
``P2``, ``T``, ``Q``) are taken of the proportions ``alpha_k / b``, times ratios such as
``b / (b + 1)``, so that no product of concentrations overflows (it did, to NaN, from
1.3e154 on) and any concentrations with a finite sum give finite moments (a sum beyond
float64's 1.8e308 is refused):

* ``E(G) = 2 e2 / (b (b + 1))`` with ``G = 1 - S2`` and ``e2 = sum_{j<k} alpha_j alpha_k``
  accumulated as ``sum_k alpha_k * (alpha_1 + ... + alpha_{k-1})``;
* ``Var(X Y) = Var(X) Var(Y) + Var(X) E(Y)^2 + E(X)^2 Var(Y)`` for independent X, Y;
* ``Var(S2) = 4 [(b + 1) T + (P2 + b) e2] / (b^2 (b + 1)^2 (b + 2)(b + 3))`` where
  ``P2 = sum_k alpha_k^2`` and ``T = sum_{j<k} alpha_j alpha_k (alpha_j - alpha_k)^2``,
  computed as the corrected two-pass weighted spread ``b sum_k alpha_k d_k^2 -
  (sum_k alpha_k d_k)^2`` with ``d_k = alpha_k - P2 / b`` (the identity holds for any shift,
  and the correction term is second order);
* ``C E(S2) - 1 = [Q + (C - 1) b] / (b (b + 1))`` with
  ``Q = sum_{j<k} (alpha_j - alpha_k)^2 = C sum_k e_k^2 - (sum_k e_k)^2``,
  ``e_k = alpha_k - b / C``;
* the entropy mean as ``sum_k (alpha_k / alpha_0) [psi(alpha_0 + 1) - psi(alpha_k + 1)]`` with
  each digamma difference taken from its Taylor series (Hurwitz zeta) when the increment is
  small against the argument;
* the old measure's mean through the tent function
  ``1 - C/(2(C-1)) sum_k |p_k - 1/C| = (1/(C-1)) sum_k g(p_k)``,
  ``g(p) = (C-1) p`` for ``p <= 1/C`` and ``1 - p`` above, whose Beta expectation is two
  regularized incomplete beta functions with non-negative weights.

Large arrays are processed in blocks of rows that fit in the CPU cache, each transposed to
(categories, rows) so that every category is one contiguous vector: several times faster than
whole-array numpy expressions for ``10^7 x 6`` inputs, and the temporaries stay small.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sc

from ambppl.internal.checks import (
    as_float_array,
    check_alpha,
    check_cant_solve,
    check_n_proper,
    check_option,
    resolve_cant_solve,
)
from ambppl.internal.labels import (
    category_dim,
    is_dataarray,
    over_categories,
    refuse_array_dim,
)
from ambppl.maths._higher_moments import MAX_ORDER, DirichletMoments, dirichlet_moments
from ambppl.maths.measures import MEASURES, min_proper

__all__ = [
    "MAX_ORDER",
    "DirichletMoments",
    "dirichlet_mean",
    "dirichlet_moments",
    "dirichlet_var",
]

#: Rows per block: 8192 rows x 6 categories x 8 bytes = 384 KiB; the temporaries fit in L2.
_BLOCK_ROWS = 8192

#: Above this ratio increment / argument the digamma difference is taken directly.
_PSI_SERIES_MAX_RATIO = 0.125
#: Terms of the digamma-difference series: the tail is below 8**-(_PSI_TERMS - 1).
_PSI_TERMS = 20
#: From this argument on the digamma difference uses the asymptotic expansion.
_PSI_ASYMPTOTIC_MIN = 1e6


# --------------------------------------------------------------------------- building blocks
# Every kernel receives a block TRANSPOSED to (categories, rows), C-contiguous, so that each
# category is one contiguous vector and the sums over categories are a few vector additions.
def split_cant_solve(block: np.ndarray, idx: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Return (proper concentrations (C, n), alpha_cs (n,) or None) of a (K, n) block."""
    if idx is None:
        return block, None
    if idx == block.shape[0] - 1:
        return block[:-1], block[-1]
    return np.delete(block, idx, axis=0), block[idx]


def category_total(a: np.ndarray) -> np.ndarray:
    """Sum over the categories (axis 0) of a (C, n) array."""
    out = a[0].copy()
    for row in a[1:]:
        out += row
    return out


def pair_products(a: np.ndarray) -> np.ndarray:
    """``e2 = sum_{j<k} a_j a_k`` of a (C, n) array, as non-negative products (no subtraction)."""
    run = a[0].copy()
    e2 = np.zeros_like(run)
    for row in a[1:]:
        e2 += row * run
        run += row
    return e2


def others_total(a: np.ndarray) -> np.ndarray:
    """``sum_{j != k} a_j`` for every k of a (C, n) array, from prefix and suffix sums."""
    c = a.shape[0]
    out = np.zeros_like(a)
    for k in range(1, c):
        out[k] = out[k - 1] + a[k - 1]
    run = np.zeros_like(a[0])
    for k in range(c - 2, -1, -1):
        run += a[k + 1]
        out[k] += run
    return out


def weighted_spread(a: np.ndarray, b: np.ndarray, p2: np.ndarray) -> np.ndarray:
    """``T = sum_{j<k} a_j a_k (a_j - a_k)^2`` by the corrected two-pass formula."""
    shift = p2 / b
    s0 = np.zeros_like(b)
    s1 = np.zeros_like(b)
    for row in a:
        d = row - shift
        ad = row * d
        s0 += ad
        s1 += ad * d
    return np.maximum(b * s1 - s0 * s0, 0.0)


def spread_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``Q = sum_{j<k} (a_j - a_k)^2`` by the corrected two-pass formula."""
    c = a.shape[0]
    shift = b / c
    s0 = np.zeros_like(b)
    s1 = np.zeros_like(b)
    for row in a:
        e = row - shift
        s0 += e
        s1 += e * e
    return np.maximum(c * s1 - s0 * s0, 0.0)


def s2_mean_var(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(E(S2), Var(S2))`` for ``p ~ Dir(a)``, both as sums of non-negative terms.

    In the proportions ``r = a / b`` (``P2 = b^2 sum r^2``, ``e2 = b^2 e2(r)``,
    ``T = b^4 T(r)``): ``E S2 = (b sum r^2 + 1) / (b + 1)`` and
    ``Var S2 = 4 b / ((b + 1)(b + 2)(b + 3)) [b T(r) + (b sum r^2 + 1) e2(r) / (b + 1)]``,
    finite for every finite ``b`` (the products of concentrations overflowed from 1e154 on).
    """
    r = a / b
    r2 = np.zeros_like(b)
    for row in r:
        r2 += row * row
    e2 = pair_products(r)
    t = weighted_spread(r, np.ones_like(b), r2)
    b1 = b + 1.0
    br2 = b * r2 + 1.0
    mean = br2 / b1
    var = 4.0 * (b / b1) * (b * t + br2 * e2 / b1) / (b + 2.0) / (b + 3.0)
    return mean, var


def _var_product(
    a_cs: np.ndarray | None, b: np.ndarray, mean_y: np.ndarray, var_y: np.ndarray
) -> np.ndarray:
    """``Var(X Y)`` for independent ``X = 1 - q_cs ~ Beta(b, alpha_cs)`` and ``Y``."""
    if a_cs is None:  # X = 1
        return var_y
    a0 = b + a_cs
    mean_x = b / a0
    var_x = mean_x * (a_cs / a0) / (a0 + 1.0)  # b a_cs / (a0^2 (a0 + 1)) without overflow
    return var_x * var_y + var_x * mean_y * mean_y + mean_x * mean_x * var_y


def _digamma_diff(y: np.ndarray, d: np.ndarray, y_plus_d: np.ndarray) -> np.ndarray:
    """``psi(y + d) - psi(y)`` for ``y >= 1``, ``d >= 0`` without cancellation.

    * ``y >= 1e6``: the asymptotic expansion ``psi(x) = log x - 1/(2x) - 1/(12 x^2) + O(x^-4)``
      differenced term by term, ``log1p(d/y) + d/(2y(y+d)) + d(2y+d)/(12 y^2 (y+d)^2)``
      (all terms positive; the neglected terms are below 1e-24 relative);
    * ``d <= y / 8``: the Taylor series ``sum_n (-1)^(n+1) zeta(n+1, y) d^n`` (radius y);
    * otherwise the plain difference, which then loses at most a few ulps of the result.
    """
    out = sc.digamma(y_plus_d) - sc.digamma(y)
    large = y >= _PSI_ASYMPTOTIC_MIN
    if np.any(large):
        yl, dl, sl = y[large], d[large], y_plus_d[large]
        ds = dl / sl  # the products y (y + d) overflowed from 1e154 on
        # divided step by step: 12 y overflowed from 1.5e307 on
        out[large] = np.log1p(dl / yl) + ds / 2.0 / yl + ds * (1.0 / sl + 1.0 / yl) / 12.0 / yl
    small = ~large & (d <= _PSI_SERIES_MAX_RATIO * y)
    if np.any(small):
        ys, ds = y[small], d[small]
        total = np.zeros_like(ys)
        power = np.ones_like(ys)
        for n in range(1, _PSI_TERMS + 1):
            power = power * ds
            total += (-1.0) ** (n + 1) * sc.zeta(n + 1.0, ys) * power
        out[small] = total
    return out


# --------------------------------------------------------------------------- the formulas
def _mean_amb(block: np.ndarray, idx: int | None) -> np.ndarray:
    # eq. expr_amb_final, rewritten: E(amb) = alpha_cs/alpha_0 + 2 e2 / (alpha_0 (b + 1))
    # with e2 = b^2 e2(a / b): 2 e2 / (alpha_0 (b + 1)) = 2 e2(a / b) (b / alpha_0) b / (b + 1)
    a, a_cs = split_cant_solve(block, idx)
    b = category_total(a)
    flips = 2.0 * pair_products(a / b) * (b / (b + 1.0))
    if a_cs is None:
        return flips
    a0 = b + a_cs
    return a_cs / a0 + flips * (b / a0)


def _var_amb(block: np.ndarray, idx: int | None) -> np.ndarray:
    # eq. expr_amb_var_final, rewritten as Var(X S2) with X = 1 - q_cs independent of S2
    a, a_cs = split_cant_solve(block, idx)
    b = category_total(a)
    mean_s2, var_s2 = s2_mean_var(a, b)
    return _var_product(a_cs, b, mean_s2, var_s2)


def _mean_modified(block: np.ndarray, idx: int | None) -> np.ndarray:
    # eqs. expr_amb_final + rel_mod_unmod: alpha_cs/alpha_0 + C/(C-1) * 2 e2/(alpha_0 (b+1))
    a, a_cs = split_cant_solve(block, idx)
    c = a.shape[0]
    b = category_total(a)
    a0 = b if a_cs is None else b + a_cs
    # 2 e2 / (alpha_0 (b + 1)) in the proportions a / b, as in _mean_amb
    flips = (c / (c - 1.0)) * 2.0 * pair_products(a / b) * (b / (b + 1.0)) * (b / a0)
    return flips if a_cs is None else a_cs / a0 + flips


def _var_modified(block: np.ndarray, idx: int | None) -> np.ndarray:
    # eqs. var_amb_tilde + expr_amb_mod_var, rewritten as Var(X Y'), Y' = (C S2 - 1)/(C - 1)
    a, a_cs = split_cant_solve(block, idx)
    c = a.shape[0]
    b = category_total(a)
    _, var_s2 = s2_mean_var(a, b)
    # Q = b^2 Q(a / b): (Q + (C - 1) b) / ((C - 1) b (b + 1)) without overflow
    # as Q(a / b) b / (b + 1) + (C - 1) / (b + 1): b Q(a / b) overflowed from 9e307 on
    b1 = b + 1.0
    mean_y = (spread_sum(a / b, np.ones_like(b)) * (b / b1) + (c - 1.0) / b1) / (c - 1.0)
    var_y = (c / (c - 1.0)) ** 2 * var_s2
    return _var_product(a_cs, b, mean_y, var_y)


def _mean_entropy(block: np.ndarray, idx: int | None) -> np.ndarray:
    # section 3.1: (psi(alpha_0 + 1) - sum_k alpha_k/alpha_0 psi(alpha_k + 1)) / log K,
    # over all K entries (can't-solve is an ordinary category for the entropy)
    k = block.shape[0]
    a0 = category_total(block)
    others = others_total(block)
    a0_1 = np.broadcast_to(a0 + 1.0, block.shape)
    dpsi = _digamma_diff(block + 1.0, others, a0_1)
    # weights alpha_k / alpha_0 first: sum_k alpha_k dpsi_k overflowed for alpha_0 near 1e308
    return category_total((block / a0) * dpsi) / math.log(k)


def _mean_old(block: np.ndarray, idx: int | None) -> np.ndarray:
    # errata E7 through the tent function g: with o_k = b - alpha_k and c = 1/C,
    # E(amb0) = alpha_cs/alpha_0 + 1/(alpha_0 (C-1)) * sum_k [(C-1) alpha_k I_c(alpha_k+1, o_k)
    #                                                        + o_k (1 - I_c(alpha_k, o_k+1))]
    a, a_cs = split_cant_solve(block, idx)
    c = a.shape[0]
    o = others_total(a)
    x = 1.0 / c
    b = category_total(a)
    a0 = b if a_cs is None else b + a_cs
    # in the proportions alpha_k / alpha_0 and o_k / alpha_0: (C - 1) alpha_k overflowed
    # for alpha_k near 1e308
    terms = (c - 1.0) * (a / a0) * sc.betainc(a + 1.0, o, x) + (o / a0) * sc.betaincc(a, o + 1.0, x)
    tent = category_total(terms) / (c - 1.0)
    return tent if a_cs is None else a_cs / a0 + tent


Kernel = Callable[[np.ndarray, "int | None"], np.ndarray]

#: measure -> closed-form mean.
_MEANS: dict[str, Kernel] = {
    "amb": _mean_amb,
    "modified": _mean_modified,
    "old": _mean_old,
    "entropy": _mean_entropy,
}
#: measure -> closed-form variance (no closed form is implemented for "old" and "entropy").
_VARIANCES: dict[str, Kernel] = {
    "amb": _var_amb,
    "modified": _var_modified,
}


# --------------------------------------------------------------------------- dispatch
#: float64's largest number: a row of concentrations must sum to at most this.
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _check_finite_sums(block: np.ndarray, first_row: int) -> None:
    """Refuse a (K, n) block whose concentrations sum to more than float64 holds in a row
    (the closed forms add them up: the sum overflowed to inf and the moments to NaN)."""
    with np.errstate(over="ignore"):
        totals = category_total(block)
    bad = ~np.isfinite(totals)
    if np.any(bad):
        row = first_row + int(np.argmax(bad))
        raise ValueError(
            f"alpha must sum to at most {_FLOAT_MAX:.4g} (float64's largest number) over the "
            "categories (the closed forms add the concentrations up), but a row sums to inf "
            f"(row {row}); a Dirichlet that concentrated has q at its mean to float precision, "
            "so apply the measure to alpha divided by its sum (after dividing by its largest "
            "entry) instead"
        )


def _evaluate(
    alpha: Any, measure: str, cant_solve: int | str | None, table: dict[str, Kernel], what: str
) -> Any:
    check_option(measure, MEASURES, "measure")
    kernel = table.get(measure)
    if kernel is None:
        raise NotImplementedError(
            f"the {'variance' if what == 'var' else what} of measure={measure!r} under a "
            "Dirichlet has no closed form in "
            f"ambppl (available for: {', '.join(repr(m) for m in table)}); estimate it from "
            "draws, e.g. numpy.random.Generator.dirichlet and ambppl.maths.measures"
        )
    arr = as_float_array(alpha, "alpha")
    if arr.ndim == 0 or arr.shape[-1] < 2:
        check_alpha(arr)  # raises: too few categories
    k = arr.shape[-1]
    idx = check_cant_solve(resolve_cant_solve(alpha, cant_solve, name="alpha"), k)
    check_n_proper(
        k - (idx is not None), min_proper(measure), f"dirichlet_{what}({measure!r})", measure
    )
    batch = arr.shape[:-1]
    flat = arr.reshape(-1, k)
    n = flat.shape[0]
    out = np.empty(n)
    # The values are checked block by block while the block is in the cache (two cheap
    # reductions) instead of by whole-array passes; a failing block re-runs the full
    # check_alpha on the whole input, which raises the detailed message.
    for start in range(0, n, _BLOCK_ROWS):
        block = np.ascontiguousarray(flat[start : start + _BLOCK_ROWS].T)
        top = block.max()
        if not (block.min() > 0.0 and top < np.inf):
            check_alpha(arr)
        if top > _FLOAT_MAX / k:  # only then can a row's sum overflow
            _check_finite_sums(block, start)
        out[start : start + _BLOCK_ROWS] = kernel(block, idx)
    out = out.reshape(batch)
    return out[()] if out.ndim == 0 else out


def dirichlet_mean(
    alpha: Any,
    measure: str = "amb",
    *,
    cant_solve: int | str | None = "auto",
    dim: str | None = None,
) -> Any:
    r"""Exact mean of an ambiguity measure of ``q ~ Dirichlet(alpha)``.

    Parameters
    ----------
    alpha : array_like or xarray.DataArray
        Dirichlet concentrations, categories on the last axis (any batch shape before it),
        all finite and strictly positive; a DataArray has them on ``dim``.
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        Which measure of ``q``: :func:`ambppl.amb`, :func:`ambppl.amb_modified`,
        :func:`ambppl.amb_old` or :func:`ambppl.normalized_entropy`.
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    dim : str, optional
        For a DataArray: the dimension holding the categories (default ``"category"`` if
        present, else the last).

    Returns
    -------
    numpy.ndarray, numpy.float64 or xarray.DataArray
        ``E[measure(q)]`` with shape ``alpha.shape[:-1]`` (a scalar for a single vector).
        A DataArray gives a DataArray without ``dim``, its other coordinates (``item``)
        kept, lazy where ``alpha`` is dask-backed (one task per chunk of items).

    Raises
    ------
    ValueError
        If ``measure`` is unknown, ``alpha`` is not finite and positive, has fewer than 2
        categories or a row summing to more than float64 holds (1.8e308), ``cant_solve`` is
        out of range, a string other than ``"auto"`` or
        contradicts ``alpha.attrs["cant_solve"]``, or ``measure`` is "modified" or "old"
        with fewer than 2 proper categories.
    TypeError
        If ``alpha`` is not numeric or ``cant_solve`` is not an integer, None or a string,
        or ``dim`` is given with an array.

    Notes
    -----
    * ``"amb"``: paper eq. ``expr_amb_final``,
      :math:`1 - \sum_k \alpha_k(\alpha_k+1) / (\alpha_0 (b + 1))`, evaluated as
      :math:`\alpha_{cs}/\alpha_0 + 2 e_2 / (\alpha_0 (b+1))` with
      :math:`e_2 = \sum_{j<k}\alpha_j\alpha_k` (no cancellation; :errata:`E5`).
    * ``"modified"``: through eq. ``rel_mod_unmod``,
      :math:`\alpha_{cs}/\alpha_0 + \frac{C}{C-1}\, 2 e_2 / (\alpha_0 (b+1))`.
    * ``"entropy"``: section 3.1, :math:`(\psi(\alpha_0+1) - \sum_k \frac{\alpha_k}{\alpha_0}
      \psi(\alpha_k+1)) / \log K` over all ``K`` entries (can't-solve included).
    * ``"old"``: :errata:`E7` (Beta marginals and the regularized incomplete beta),
      rewritten with the tent function described in the module docstring; with
      ``cant_solve=None``, :math:`b = \alpha_0`.

    ``b`` is the sum of the proper concentrations and :math:`\alpha_0 = b + \alpha_{cs}`.
    The relative error is below 1e-10 for concentrations in ``[1e-3, 1e9]`` (tested against
    exact rational arithmetic and 50-digit mpmath); the sums run over proportions, so any
    concentrations with a finite sum give a finite mean (up to ``alpha = (1e300, 1e300,
    1e300)`` and down to 1e-300, also tested against exact fractions; near 1.8e308, against
    the measure of ``alpha / alpha_0``, which such a Dirichlet holds ``q`` at). A row whose
    sum overflows float64 raises (it gave NaN).

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       sections 3.1-3.2.

    Examples
    --------
    >>> import ambppl
    >>> float(ambppl.dirichlet_mean([1.0, 1.0, 1.0]))  # 1 - 4 / (3 * 3)
    0.5555555555555556
    >>> ambppl.dirichlet_mean([[6.0, 1.0, 1.0], [1.0, 1.0, 6.0]], "modified").round(6).tolist()
    [0.5, 0.916667]
    >>> round(float(ambppl.dirichlet_mean([11.0, 2.0, 2.0], "entropy")), 2)
    0.64
    """
    if is_dataarray(alpha):
        dim = category_dim(alpha, dim, "dirichlet_mean")
        idx = resolve_cant_solve(alpha, cant_solve, dim=dim, name="alpha")
        return over_categories(
            lambda a: _evaluate(a, measure, idx, _MEANS, "mean"),
            alpha,
            dim=dim,
            name=f"{measure}_mean",
            where="dirichlet_mean",
        )
    refuse_array_dim(dim, "dirichlet_mean")
    return _evaluate(alpha, measure, cant_solve, _MEANS, "mean")


def dirichlet_var(
    alpha: Any,
    measure: str = "amb",
    *,
    cant_solve: int | str | None = "auto",
    dim: str | None = None,
) -> Any:
    r"""Exact variance of an ambiguity measure of ``q ~ Dirichlet(alpha)``.

    Parameters
    ----------
    alpha : array_like or xarray.DataArray
        Dirichlet concentrations, categories on the last axis (any batch shape before it),
        all finite and strictly positive; a DataArray has them on ``dim``.
    measure : {"amb", "modified"}, default "amb"
        Which measure of ``q``. "old" and "entropy" are valid measure names but have no
        closed-form variance here: they raise :class:`NotImplementedError`.
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    dim : str, optional
        For a DataArray: the dimension holding the categories (default ``"category"`` if
        present, else the last).

    Returns
    -------
    numpy.ndarray, numpy.float64 or xarray.DataArray
        ``Var[measure(q)] >= 0`` with shape ``alpha.shape[:-1]``; a DataArray as in
        :func:`dirichlet_mean` (labelled, lazy where ``alpha`` is dask-backed).

    Raises
    ------
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"``.
    ValueError
        If ``measure`` is unknown, ``alpha`` is not finite and positive, has fewer than 2
        categories or a row summing to more than float64 holds (1.8e308), ``cant_solve`` is
        out of range, a string other than ``"auto"`` or
        contradicts ``alpha.attrs["cant_solve"]``, or ``measure="modified"`` has fewer than
        2 proper categories.
    TypeError
        If ``alpha`` is not numeric or ``cant_solve`` is not an integer, None or a string,
        or ``dim`` is given with an array.

    Notes
    -----
    Paper eqs. ``expr_amb_var_final`` (amb) and ``var_amb_tilde`` with ``expr_amb_mod_var``
    (modified) give the same values, but the printed form
    :math:`\mathcal R + (\mathcal S - 1)(1 - E)^2` cancels catastrophically for large
    :math:`\alpha_0` (:errata:`E5`). Here both measures are written as
    :math:`1 - X Y` with independent :math:`X = 1 - q_{cs}` and :math:`Y = \sum_k p_k^2`
    (amb) or :math:`Y = (C\sum_k p_k^2 - 1)/(C-1)` (modified), and

    .. math:: \mathrm{Var}(XY) = \mathrm{Var}X\,\mathrm{Var}Y + \mathrm{Var}X\,(EY)^2
              + (EX)^2\,\mathrm{Var}Y,

    .. math:: \mathrm{Var}\sum_k p_k^2 = \frac{4\,[(b+1)\,T + (P_2 + b)\,e_2]}
              {b^2 (b+1)^2 (b+2)(b+3)},

    with :math:`P_2 = \sum_k\alpha_k^2`, :math:`e_2 = \sum_{j<k}\alpha_j\alpha_k` and
    :math:`T = \sum_{j<k}\alpha_j\alpha_k(\alpha_j-\alpha_k)^2`: every term is non-negative,
    so the relative error stays below 1e-10 for concentrations in ``[1e-3, 1e9]``
    (tested against exact fractions). The sums over categories are taken of the proportions
    ``alpha_k / b`` (times powers of ``b / (b + j)``), never of products of concentrations,
    so they do not overflow: any concentrations with a finite sum give the moments (at
    ``alpha = (1e300, 1e300, 1e300)`` the amb mean 2/3 and sd 1.4e-151; the products
    overflowed to NaN from 1.3e154 on). A row whose sum overflows float64 raises.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.2.

    Examples
    --------
    >>> import ambppl
    >>> round(float(ambppl.dirichlet_var([1.0, 1.0, 1.0])), 10)
    0.0358024691
    >>> float(ambppl.dirichlet_var([1e7, 1.0, 1.0]))  # errata E5's hard case, exact to 1e-15
    4.9999934000053416e-14
    """
    if is_dataarray(alpha):
        dim = category_dim(alpha, dim, "dirichlet_var")
        idx = resolve_cant_solve(alpha, cant_solve, dim=dim, name="alpha")
        return over_categories(
            lambda a: _evaluate(a, measure, idx, _VARIANCES, "var"),
            alpha,
            dim=dim,
            name=f"{measure}_var",
            where="dirichlet_var",
        )
    refuse_array_dim(dim, "dirichlet_var")
    return _evaluate(alpha, measure, cant_solve, _VARIANCES, "var")
