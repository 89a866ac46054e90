r"""Preposterior planning: how much will more answers shrink the posterior of ambiguity?

For an item with counts ``n`` and a Dirichlet prior the posterior of the response
distribution is ``q ~ Dirichlet(a)``, ``a = prior + n``. If ``m`` more answers are collected,
they follow the Dirichlet-multinomial predictive ``DM(m, a)`` and the posterior becomes
``Dirichlet(a + new)``. :func:`expected_posterior_var` returns the expected posterior
variance ``E_new[Var(measure(q) | a + new)]`` exactly (a closed form plus, with a can't-solve
category, one finite sum of ``m + 1`` non-negative terms), and :func:`expected_posterior_sd`
its square root.

Derivation (notation of :mod:`ambppl.moments`): proper concentrations ``a_1..a_C`` with
``b = sum_k a_k``, can't-solve concentration ``a_cs``, ``A0 = b + a_cs``, ``s = A0 + m``.
Under ``Dirichlet(a)``, ``X = 1 - q_cs ~ Beta(b, a_cs)`` is independent of
``p ~ Dir(a_1..a_C)``, and both measures are ``1 - X Y``: ``Y = S2 = sum_k p_k^2`` for
"amb" and ``Y = (C S2 - 1) / (C - 1)`` for "modified" (paper eq. ``rel_mod_unmod``:
``(C amb - q_cs) / (C - 1) = 1 - X (C S2 - 1) / (C - 1)``), so ``Var Y = kappa Var S2`` with
``kappa = 1`` or ``(C / (C - 1))^2``. The details are in the Notes of
:func:`expected_posterior_var`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl._checks import (
    _describe,
    as_float_array,
    check_cant_solve,
    check_counts,
    check_n_proper,
    check_option,
    check_prior,
)
from ambppl.measures import MEASURES, min_proper
from ambppl.moments import (
    _others,
    _pair_products,
    _split,
    _spread,
    _total,
    _var_s2,
    _weighted_spread,
)

__all__ = ["expected_posterior_sd", "expected_posterior_var"]

#: Measures with a closed-form expected posterior variance.
_SUPPORTED = ("amb", "modified")

#: Elements per (items x (m + 1)) block of the can't-solve sum: 2^17 doubles = 1 MiB.
_BLOCK_ELEMENTS = 1 << 17


# --------------------------------------------------------------------------- argument checks
def _check_extra(extra: Any, n_items: int | None) -> np.ndarray:
    """Return ``extra`` as int64 of shape ``(n_items,)`` (``n_items=None``: one item)."""
    what = (
        "extra must be a whole number >= 0 (the number m of answers still to come)"
        if n_items is None
        else "extra must be a whole number >= 0 (the number m of answers still to come) "
        f"or one per item (shape ({n_items},))"
    )
    if isinstance(extra, bool | np.bool_):
        raise TypeError(f"{what}, but got {extra!r}")
    arr = as_float_array(extra, "extra")
    if np.asarray(extra).dtype == np.bool_:
        raise TypeError(f"{what}, but got booleans {_describe(extra)}")
    if arr.ndim != 0 and (n_items is None or arr.shape != (n_items,)):
        hint = "; for several items pass counts of shape (items, K)" if n_items is None else ""
        raise ValueError(f"{what}, but got shape {arr.shape}{hint}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}, but got NaN or inf")
    if np.any(arr < 0):
        raise ValueError(f"{what}, but got {_describe(arr[arr < 0][:5])}")
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{what}, but got {_describe(arr[arr != np.round(arr)][:5])}")
    if np.any(arr >= 2.0**53):
        raise ValueError(f"{what} below 2**53, but got {_describe(arr[arr >= 2.0**53][:5])}")
    return np.broadcast_to(arr, (1 if n_items is None else n_items,)).astype(np.int64)


def _check_measure(measure: Any) -> str:
    check_option(measure, MEASURES, "measure")
    if measure not in _SUPPORTED:
        raise NotImplementedError(
            f"the expected posterior variance of measure={measure!r} has no closed form in "
            f"ambppl (available for: {', '.join(repr(m) for m in _SUPPORTED)}): its posterior "
            "variance under a Dirichlet has none either; estimate it by simulation (draw "
            "q ~ Dirichlet(prior + counts), new ~ Multinomial(extra, q), and average the "
            "variance of the measure over draws from Dirichlet(prior + counts + new))"
        )
    return measure


# --------------------------------------------------------------------------- the formulas
def _cs_sum(
    b: np.ndarray, a_cs: np.ndarray, c0: np.ndarray, delta: np.ndarray, m: np.ndarray
) -> np.ndarray:
    r"""``F = sum_j w_j (b + N)(c0 + 4 N delta) / (b + N + 1)`` with ``N = m - j``.

    ``w_j`` is the beta-binomial ``BB(m, a_cs, b)`` pmf of the number ``j`` of new can't-solve
    answers. Its logarithm is built from the log ratios
    ``log w_{j+1} / w_j = log[(m - j)(a_cs + j) / ((j + 1)(b + (m - j - 1)))]``, where the
    integer ``m - j - 1`` is formed before ``b`` is added (``b + m - j - 1`` would cancel for
    small ``b``), summed outward from the mode so that rounding does not accumulate over the
    whole range, and normalized by the sum of the weights. All rows share one grid of
    ``max(m) + 1`` values of ``j``; entries beyond a row's own ``m`` get weight 0.
    """
    out = np.empty_like(b)
    order = np.argsort(m, kind="stable")
    start = 0
    n = order.size
    while start < n:
        stop = start + 1
        while stop < n and (stop + 1 - start) * (m[order[stop]] + 1) <= _BLOCK_ELEMENTS:
            stop += 1
        rows = order[start:stop]
        out[rows] = _cs_sum_block(b[rows], a_cs[rows], c0[rows], delta[rows], m[rows])
        start = stop
    return out


def _cs_sum_block(
    b: np.ndarray, a_cs: np.ndarray, c0: np.ndarray, delta: np.ndarray, m_int: np.ndarray
) -> np.ndarray:
    top = int(m_int.max())
    m = m_int.astype(np.float64)[:, None]
    b_, a_cs_ = b[:, None], a_cs[:, None]
    j = np.arange(top, dtype=np.float64)[None, :]  # the ratio w_{j+1} / w_j, j < top
    step = j < m
    rest = m - j  # exact integers
    num = np.where(step, rest * (a_cs_ + j), 1.0)
    den = np.where(step, (j + 1.0) * (b_ + (rest - 1.0)), 1.0)
    log_ratio = np.log(num / den)  # 0 where the row has no such step
    jj = np.arange(top + 1, dtype=np.float64)[None, :]
    inside = jj <= m
    # first pass: locate the mode; second pass: sum the ratios outward from it
    rough = np.concatenate([np.zeros_like(b_), np.cumsum(log_ratio, axis=1)], axis=1)
    mode = np.argmax(np.where(inside, rough, -np.inf), axis=1)[:, None]
    up = np.cumsum(np.where(j >= mode, log_ratio, 0.0), axis=1)
    down = np.cumsum(np.where(j < mode, log_ratio, 0.0)[:, ::-1], axis=1)[:, ::-1]
    log_w = np.zeros((b.size, top + 1))
    log_w[:, 1:] += np.where(j >= mode, up, 0.0)
    log_w[:, :-1] -= np.where(j < mode, down, 0.0)
    with np.errstate(under="ignore"):  # far tails underflow to weight 0, harmlessly
        w = np.where(inside, np.exp(log_w), 0.0)
    proper = np.where(inside, m - jj, 0.0)  # N = m - j new proper answers
    bn = b_ + proper
    h = bn * (c0[:, None] + 4.0 * proper * delta[:, None]) / (bn + 1.0)
    return np.sum(w * h, axis=1) / np.sum(w, axis=1)


def _expected_var(alpha_t: np.ndarray, idx: int | None, measure: str, m: np.ndarray) -> Any:
    """The expected posterior variance for posterior concentrations ``alpha_t`` (K, items)."""
    a, a_cs = _split(alpha_t, idx)
    c = a.shape[0]
    b = _total(a)
    mean_s2, var_s2 = _var_s2(a, b)
    p2 = _total(a * a)
    e2 = _pair_products(a)
    t = _weighted_spread(a, b, p2)
    den = b * (b + 1.0) * (b + 2.0) * (b + 3.0)
    # c0 = b (b + 1) Var(S2 | a) and delta = E(sum p^3 - S2^2 | a), as non-negative sums
    c0 = 4.0 * ((b + 1.0) * t + (p2 + b) * e2) / den
    delta = (t + _total(a * a * _others(a)) + 2.0 * e2) / den
    if measure == "modified":
        kappa = (c / (c - 1.0)) ** 2
        mean_y = (_spread(a, b) + (c - 1.0) * b) / ((c - 1.0) * b * (b + 1.0))
    else:
        kappa = 1.0
        mean_y = mean_s2
    mf = m.astype(np.float64)
    if a_cs is None:
        return kappa * (c0 + 4.0 * mf * delta) / ((b + mf) * (b + mf + 1.0))
    a0 = b + a_cs
    s = a0 + mf
    second_y = kappa * var_s2 + mean_y * mean_y  # E(Y^2 | a)
    return kappa * _cs_sum(b, a_cs, c0, delta, m) / (s * s) + a_cs * b * second_y / (
        a0 * (a0 + 1.0) * s
    )


# --------------------------------------------------------------------------- public API
def expected_posterior_var(
    counts: Any,
    extra: Any,
    *,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | None = -1,
) -> Any:
    r"""Expected posterior variance of an ambiguity measure after ``extra`` more answers.

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers); categories on the last
        axis, ``K >= 2``.
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item.
    measure : {"amb", "modified"}, default "amb"
        :func:`ambppl.amb` or :func:`ambppl.amb_modified`. "old" and "entropy" are valid
        measure names but have no closed form here: they raise
        :class:`NotImplementedError`.
    prior : float or array_like, default 1.0
        Dirichlet prior: one concentration for all categories (symmetric) or one per
        category, all finite and strictly positive.
    cant_solve : int or None, default -1
        Position of the "can't solve" category on the last axis; ``None`` if there is none.

    Returns
    -------
    numpy.ndarray or numpy.float64
        :math:`E_{new}[\mathrm{Var}(\mathrm{measure}(q) \mid a + new)] \ge 0` with
        :math:`a` = ``prior + counts`` and :math:`new \sim DM(m, a)`, shape ``(items,)``
        (a scalar for counts of shape ``(K,)``). ``extra=0`` gives
        :func:`ambppl.dirichlet_var` of ``prior + counts``; the value decreases in ``m``
        and falls like ``1/m``.

    Raises
    ------
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"``.
    ValueError
        If ``measure`` is unknown; ``counts`` is negative, not whole, not finite, has fewer
        than 2 categories or more than 2 dimensions; ``extra`` is negative, not whole, or of
        the wrong shape; ``prior`` is not positive or has the wrong length; ``cant_solve``
        is out of range; or ``measure="modified"`` has fewer than 2 proper categories.
    TypeError
        If ``counts``, ``extra`` or ``prior`` is not numeric (or ``extra`` is boolean), or
        ``cant_solve`` is not an integer or None.

    Notes
    -----
    Notation: :math:`a_1..a_C` proper concentrations, :math:`b = \sum_k a_k`,
    :math:`A_0 = b + a_{cs}`, :math:`m` = ``extra``, :math:`s = A_0 + m`, rising factorials
    :math:`x^{(r)} = x(x+1)\cdots(x+r-1)`. Both measures are :math:`1 - XY` with
    :math:`X = 1 - q_{cs} \sim \mathrm{Beta}(b, a_{cs})` independent of
    :math:`p \sim \mathrm{Dir}(a_1..a_C)`; :math:`Y = S_2 = \sum_k p_k^2` (amb) or
    :math:`Y = (C S_2 - 1)/(C-1)` (modified, from eq. ``rel_mod_unmod``), so
    :math:`\mathrm{Var}\,Y = \kappa\,\mathrm{Var}\,S_2` with :math:`\kappa = 1` or
    :math:`(C/(C-1))^2`. The joint moments with :math:`u = q_{cs} = 1 - X` are those of
    :math:`X`.

    *Dirichlet-multinomial moments.* For :math:`n \sim DM(M, a)` (total :math:`b`),
    summing the pmf :math:`\binom{M}{n}\frac{\Gamma(b)}{\Gamma(b+M)}\prod_k
    \frac{\Gamma(a_k+n_k)}{\Gamma(a_k)}` against :math:`\prod_k (a_k+n_k)^{(r_k)}` gives

    .. math:: E \prod_k (a_k + n_k)^{(r_k)} = \frac{(b+M)^{(R)}}{b^{(R)}}
              \prod_k a_k^{(r_k)}, \qquad R = \sum_k r_k,

    equivalently the factorial moments
    :math:`E\prod_k n_k^{\underline{r_k}} = M^{\underline{R}} \prod_k a_k^{(r_k)} / b^{(R)}`;
    orders :math:`R \le 4` are needed.

    *No can't-solve category.* With :math:`a' = a + n`, :math:`b' = b + M`,
    :math:`E(S_2 \mid a') = \sum_k a_k'^{(2)} / b'^{(2)}` is quadratic in :math:`n`;
    :math:`(x^{(2)})^2 = x^{(4)} - 4x^{(3)} + 2x^{(2)}` puts its square in the rising
    factorial basis, and with :math:`E_r = E(\cdot \mid a)` of :math:`\sum_k p_k^2`,
    :math:`\sum_k p_k^3`, :math:`S_2^2` (:math:`r = 2, 3, 4`) the identity above gives
    :math:`E_n \mathrm{Var}(S_2 \mid a') = [4(b'+2)E_3 - (4b'+6)E_4 - 2E_2] / (b'(b'+1))`,
    i.e.

    .. math:: V_M \equiv E_n \mathrm{Var}(S_2 \mid a + n)
              = \frac{c_0 + 4 M \Delta}{(b+M)(b+M+1)}, \qquad
              c_0 = b(b+1)\,\mathrm{Var}(S_2 \mid a),

    .. math:: \Delta = E\Big(\sum_k p_k^3 - S_2^2 \,\Big|\, a\Big)
              = \frac{T + \sum_k a_k^2 (b - a_k) + 2 e_2}{b(b+1)(b+2)(b+3)} \ge 0,

    with :math:`e_2 = \sum_{j<k} a_j a_k`, :math:`T = \sum_{j<k} a_j a_k (a_j - a_k)^2`.
    The result is :math:`\kappa V_m`: a closed form, no sum.

    *With a can't-solve category.* The number :math:`j` of new can't-solve answers is
    beta-binomial :math:`BB(m, a_{cs}, b)` with weights :math:`w_j`; given :math:`j` the
    :math:`N = m - j` proper ones are :math:`DM(N, a_{1..C})` and
    :math:`X \mid a' \sim \mathrm{Beta}(b+N, a_{cs}+j)`. From
    :math:`\mathrm{Var}(XY) = E(X^2)\mathrm{Var}\,Y + \mathrm{Var}\,X\,(EY)^2` and
    :math:`E_n[E(Y \mid a')^2] = E(Y^2 \mid a) - \kappa V_N`,

    .. math:: E_{new}\mathrm{Var} = \sum_{j=0}^m w_j \big[(E_j X)^2 \kappa V_{m-j}
              + \mathrm{Var}_j X \; E(Y^2 \mid a)\big]
              = \frac{\kappa}{s^2} \sum_{j=0}^m w_j \frac{(b+N)(c_0 + 4N\Delta)}{b+N+1}
              + \frac{a_{cs}\, b\, E(Y^2 \mid a)}{A_0 (A_0+1)\, s},

    the last term by the DM identity applied to
    :math:`E[(b+N)(a_{cs}+j)] = a_{cs} b\, s(s+1) / (A_0(A_0+1))`. The summand is rational
    in :math:`N` with a pole at :math:`N = -b-1`, so the sum is kept as a finite sum of
    :math:`m + 1` terms (vectorized over items and :math:`j`; time and memory
    :math:`O(\mathrm{items} \times m)`).

    *Stability.* The law-of-total-variance form
    :math:`\mathrm{Var}(f \mid a) - \mathrm{Var}_n E(f \mid a + n)` subtracts nearly equal
    numbers when :math:`m \gg A_0` (about :math:`\log_{10}(m/A_0)` digits lost), and
    :math:`\mathrm{Var}_n E` itself is a difference of second moments of size
    :math:`E(f)^2 \gg \mathrm{Var}` when the counts are large. The direct form above
    has only non-negative terms (:math:`c_0`, :math:`\Delta`, :math:`T` as in
    :func:`ambppl.dirichlet_var`). The beta-binomial weights are built from their log
    ratios, summed outward from the mode and normalized; ``gammaln``/``betaln`` log-pmfs
    lose up to 4e-11 relative at :math:`m = 10^4` (their values reach 1e6, so their
    absolute rounding is 1e-10), the ratios stay within 1e-13 of 40-digit ``mpmath``.

    :func:`expected_posterior_sd` is the square root of this value.

    References
    ----------
    .. [1] "Bayesian inference of ambiguity in categorical annotations", sections 2-3 and
       appendix A (Beta and Dirichlet moments).

    Examples
    --------
    Two items answered (yes, no, can't solve) = (3, 1, 0) and (0, 0, 4), uniform prior:

    >>> import ambppl
    >>> from ambppl.planning import expected_posterior_var
    >>> counts = [[3, 1, 0], [0, 0, 4]]
    >>> ambppl.dirichlet_var([[4.0, 2.0, 1.0], [1.0, 1.0, 5.0]]).round(6).tolist()
    [0.01607, 0.013719]
    >>> expected_posterior_var(counts, 0).round(6).tolist()  # no new answers: the same
    [0.01607, 0.013719]
    >>> expected_posterior_var(counts, [10, 100]).round(6).tolist()  # 10 and 100 more
    [0.007877, 0.001113]
    >>> round(float(expected_posterior_var([5, 5, 2, 0], 20, cant_solve=None)), 6)
    0.001697
    """
    measure = _check_measure(measure)
    counts_arr = check_counts(counts, "counts")
    if counts_arr.ndim > 2:
        raise ValueError(
            "counts must have shape (items, K) or (K,) (one row of category counts per item), "
            f"but got shape {counts_arr.shape}"
        )
    single = counts_arr.ndim == 1
    k = counts_arr.shape[-1]
    idx = check_cant_solve(cant_solve, k)
    check_n_proper(k - (idx is not None), min_proper(measure), f"measure={measure!r}")
    prior_vec = check_prior(prior, k, "prior")
    items = counts_arr.reshape(-1, k)
    m = _check_extra(extra, None if single else items.shape[0])
    if items.shape[0] == 0:
        return np.empty(0)
    alpha_t = np.ascontiguousarray((items + prior_vec).T)
    out = _expected_var(alpha_t, idx, measure, m)
    return out[0] if single else out


def expected_posterior_sd(
    counts: Any,
    extra: Any,
    *,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | None = -1,
) -> Any:
    r"""Square root of the expected posterior variance after ``extra`` more answers.

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers), ``K >= 2``.
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item.
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float or array_like, default 1.0
        Symmetric Dirichlet concentration or one per category.
    cant_solve : int or None, default -1
        Position of the "can't solve" category; ``None`` if there is none.

    Returns
    -------
    numpy.ndarray or numpy.float64
        :math:`\sqrt{E_{new}[\mathrm{Var}(\mathrm{measure} \mid a + new)]}`, shape
        ``(items,)`` or a scalar for counts of shape ``(K,)``.

    Raises
    ------
    NotImplementedError, ValueError, TypeError
        As :func:`expected_posterior_var`.

    Notes
    -----
    This is the root of the expected variance, the usual preposterior quantity (the
    posterior sd one expects "on the variance scale"). The expected posterior sd
    :math:`E_{new}[\mathrm{sd}(\cdot \mid a + new)]` itself has no closed form; by Jensen's
    inequality it is at most this value. See :func:`expected_posterior_var` for the
    formulas.

    References
    ----------
    .. [1] "Bayesian inference of ambiguity in categorical annotations", sections 2-3.

    Examples
    --------
    >>> from ambppl.planning import expected_posterior_sd
    >>> expected_posterior_sd([[3, 1, 0], [0, 0, 4]], [10, 100]).round(4).tolist()
    [0.0887, 0.0334]
    """
    return np.sqrt(
        expected_posterior_var(counts, extra, measure=measure, prior=prior, cant_solve=cant_solve)
    )
