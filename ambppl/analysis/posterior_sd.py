"""Expected posterior variance and standard deviation of amb after m more answers per item.

The preposterior analysis behind planning: :func:`expected_posterior_var` averages the
posterior variance of ``amb`` (or ``amb~``) over the answers not yet seen (can't-solve sums in
closed form, series or long sums, guarded by :mod:`ambppl.internal.work`);
:func:`expected_posterior_sd` is its square root. :mod:`ambppl.analysis.planning` turns these
curves into ``answers_needed`` and ``next_batch``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import xarray as xr

from ambppl.internal.checks import (
    _describe,
    as_float_array,
    categories_last,
    category_aligned,
    check_cant_solve,
    check_item_counts,
    check_n_proper,
    check_option,
    check_prior,
    item_aligned,
    resolve_cant_solve,
)
from ambppl.internal.work import WORK as _WORK
from ambppl.internal.work import guard as _guard
from ambppl.maths.measures import MEASURES, min_proper
from ambppl.maths.moments import (
    category_total,
    others_total,
    pair_products,
    s2_mean_var,
    split_cant_solve,
    spread_sum,
    weighted_spread,
)

__all__ = ["expected_posterior_sd", "expected_posterior_var"]

#: Measures with a closed-form expected posterior variance.
_SUPPORTED = ("amb", "modified")

#: Elements per (items x (m + 1)) block of the can't-solve sum: 2^17 doubles = 1 MiB.
_BLOCK_ELEMENTS = 1 << 17

#: (item, hyperparameter draw) pairs per call of the formula under a learned prior.
_HYPER_ELEMENTS = 1 << 18

#: Can't-solve sums of at least this many terms (m + 1) are first tried in closed form.
_CLOSED_MIN_TERMS = 1 << 10

#: The closed form of the can't-solve sum replaces the sum where its error bound is at most
#: this share of the value (the order of the sum's own rounding error at m = 10^5).
_CLOSED_RTOL = 1e-11

#: Terms of the inverse factorial series bracketing ``E 1/(N + b + 1)`` (:func:`_cs_closed`).
_SERIES_TERMS = 8


#: Above this m the marginal gain of a curve is taken from its closed form (where accurate)
#: instead of a difference of two values (which loses about eps * m relative).
_ANALYTIC_GAIN_M = 1 << 20


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


def _hyper_priors(
    prior: Any, k: int, n_hyper: Any, counts: Any = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Thinned concentrations ``kappa * mu`` (S, K) and weights (S,) of a fitted prior.

    ``None`` if ``prior`` is not a fitted model (a number or vector of concentrations).
    Draws with the same concentrations are merged (their weights added), so a fit with
    constant hyperparameters (``method="empirical_bayes"``) is one prior of weight 1.
    Where ``counts`` is a labelled DataArray and ``mu`` has category labels, ``mu`` is put
    in the counts' category order (the same labels in another order are the same data); other
    labels are refused. A bare array is taken in the fit's order.
    """
    # checked whatever the prior, so that a wrong value is never silently unused
    n_keep = _check_whole(n_hyper, "n_hyper", "the number of hyperparameter draws kept", minimum=1)
    if not isinstance(prior, xr.DataTree):
        return None
    post = prior["posterior"].to_dataset() if "posterior" in prior.children else None
    if post is None or "mu" not in post or "kappa" not in post:
        raise ValueError(
            "prior must be a number, a vector of Dirichlet concentrations or a fitted "
            "learned prior (ambppl.fit(counts, 'hierarchical_dirichlet') whose posterior has "
            "'mu' (chain, draw, category) and 'kappa' (chain, draw)), but got a DataTree "
            "without posterior mu and kappa (a fixed-prior fit: pass its prior instead)"
        )
    mu_da = _in_counts_order(post["mu"], counts)
    mu = np.asarray(mu_da.transpose("chain", "draw", "category"), dtype=float)
    kappa = np.asarray(post["kappa"].transpose("chain", "draw"), dtype=float)
    k_fit = mu.shape[-1]
    if "observed_data" in prior.children and "counts" in prior["observed_data"]:
        k_fit = int(prior["observed_data"]["counts"].shape[-1])
    if k_fit != k or mu.shape[-1] != k:
        raise ValueError(
            f"counts have {k} categories but the fitted prior was learned on {k_fit} "
            "(its observed counts and mu must have as many categories as counts)"
        )
    conc = (kappa[..., None] * mu).reshape(-1, k)
    total = conc.shape[0]
    keep = (np.arange(min(n_keep, total)) * total) // min(n_keep, total)  # evenly thinned
    conc = conc[keep]
    if not np.all(np.isfinite(conc)) or np.any(conc <= 0):
        raise ValueError("the fitted prior has draws of kappa * mu that are not positive")
    uniq, weight = np.unique(conc, axis=0, return_counts=True)
    return uniq, weight / weight.sum()


#: :func:`_fit_cant_solve` of a prior that is no fit, or of labelled counts.
_NOT_A_FIT = object()


def _fit_cant_solve(prior: Any, counts: Any) -> Any:
    """The position of a fitted prior's can't-solve category where ``counts`` are bare
    (read in the fit's order); :data:`_NOT_A_FIT` where ``prior`` is no fit, the fit names
    no can't-solve category (bare counts keep their convention, the last), or ``counts``
    are a DataArray (their own ``cant_solve``, and ``mu`` aligned by label). Before, bare
    counts took the last category as can't-solve whatever the fit had: a fit of counts with
    can't-solve first gave wrong curves, silently."""
    if not isinstance(prior, xr.DataTree) or isinstance(counts, xr.DataArray):
        return _NOT_A_FIT
    if "observed_data" not in prior.children or "counts" not in prior["observed_data"]:
        return _NOT_A_FIT
    observed = prior["observed_data"]["counts"]
    label = observed.attrs.get("cant_solve", prior.attrs.get("cant_solve"))
    labels = [str(c) for c in observed["category"].values] if "category" in observed.coords else []
    if label is None or str(label) not in labels:
        # a fit without a can't-solve category: the bare counts' own convention (the last)
        return _NOT_A_FIT
    return labels.index(str(label))


def _in_counts_order(mu: xr.DataArray, counts: Any) -> xr.DataArray:
    """``mu`` with its categories in the order of the labelled ``counts`` (else as it is)."""
    if not (
        isinstance(counts, xr.DataArray) and "category" in counts.coords and "category" in mu.coords
    ):
        return mu
    want = [str(c) for c in counts["category"].values]
    have = [str(c) for c in mu["category"].values]
    if want == have:
        return mu
    if sorted(want) != sorted(have) or len(set(want)) != len(want):
        raise ValueError(
            f"counts have categories {want} but the fitted prior was learned on {have}: "
            "pass counts with the fit's categories (in any order), or a bare array in the "
            "fit's order"
        )
    return mu.isel(category=[have.index(c) for c in want])


def _prior_by_label(prior: Any, counts: Any, name: str = "prior") -> Any:
    """``prior`` read by its labels against ``counts`` (the items' counts, categories last).

    A labelled ``prior`` (a :class:`pandas.Series` indexed by category labels, an
    :class:`xarray.DataArray` with a category coordinate) is put in the order of the
    categories of ``counts`` (a DataArray: along ``"category"``, else its last dimension) by
    :func:`ambppl.internal.checks.category_aligned`, as one concentration per category (a
    vector, not broadcast over the items); it is refused, naming ``name``, where its labels
    differ from those categories, occur twice, or ``counts`` have none (a bare array: pass
    ``prior.values`` in their order). Anything else (a number, a bare array, a learned
    prior) is returned as it is, to be read by position. Without this a prior labelled in
    another order than the counts' categories was read by position: the wrong category got
    each concentration.
    """
    if isinstance(counts, xr.DataArray) and counts.ndim:
        dim = "category" if "category" in counts.dims else counts.dims[-1]
        return category_aligned(prior, counts[dim], name=name, data_name="counts")
    return category_aligned(prior, counts, name=name, data_name="counts")


class _Curves:
    """Evaluate ``f_i(m)`` (the expected posterior variance, prior-averaged if learned)."""

    def __init__(
        self,
        counts: np.ndarray,
        priors: np.ndarray,
        weights: np.ndarray,
        idx: int | None,
        measure: str,
    ) -> None:
        self.counts, self.priors, self.weights = counts, priors, weights
        self.idx, self.measure = idx, measure
        self.n = counts.shape[0]

    #: Largest ``m`` the curves take (None: any).
    max_m: int | None = None

    def __call__(self, rows: np.ndarray, m: np.ndarray) -> np.ndarray:
        """``f`` of items ``rows`` at ``m`` (same shapes, 1-d)."""
        return self._each_draw(_expected_var, rows, m)

    def gain(self, rows: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The marginal gain ``f(m - 1) - f(m)`` of items ``rows`` at ``m >= 1``: for ``m``
        above :data:`_ANALYTIC_GAIN_M` from the closed forms (:func:`_expected_gain`) where
        they are accurate, otherwise as the difference of two values."""
        m = np.asarray(m, dtype=np.int64)
        out = np.full(m.shape, np.nan)
        far = np.flatnonzero(m > _ANALYTIC_GAIN_M)
        if far.size:
            out[far] = self._each_draw(_expected_gain, rows[far], m[far])
        near = np.flatnonzero(np.isnan(out))
        if near.size:
            out[near] = self(rows[near], m[near] - 1) - self(rows[near], m[near])
        return out

    def unique_rows(self) -> tuple[_Curves, np.ndarray]:
        """The curves of the distinct count vectors, and each item's row among them."""
        uniq, inverse = np.unique(self.counts, axis=0, return_inverse=True)
        return _Curves(uniq, self.priors, self.weights, self.idx, self.measure), inverse.reshape(-1)

    def _each_draw(self, fn: Any, rows: np.ndarray, m: np.ndarray) -> np.ndarray:
        s = self.weights.size
        step = max(1, _HYPER_ELEMENTS // s)  # items per chunk: bounded memory for S draws
        out = np.empty(rows.size)
        for lo in range(0, rows.size, step):
            r = rows[lo : lo + step]
            alpha = self.counts[r][:, None, :] + self.priors[None, :, :]  # (rows, S, K)
            alpha_t = np.ascontiguousarray(alpha.reshape(-1, alpha.shape[-1]).T)
            v = fn(alpha_t, self.idx, self.measure, np.repeat(m[lo : lo + step], s))
            out[lo : lo + step] = v if s == 1 else v.reshape(-1, s) @ self.weights
        return out


def _prepare(
    counts: Any, measure: Any, prior: Any, cant_solve: Any, n_hyper: Any = 100
) -> tuple[_Curves, bool]:
    """Check the item arguments; return ``(curves, single)``."""
    measure = _check_measure(measure)
    counts = categories_last(counts)  # labelled counts: read by the 'category' name
    counts_arr, single = check_item_counts(counts)
    k = counts_arr.shape[-1]
    fitted = _fit_cant_solve(prior, counts)
    if fitted is not _NOT_A_FIT and isinstance(cant_solve, str) and cant_solve == "auto":
        cant_solve = fitted  # bare counts are in the fit's order: its can't-solve too
    idx = check_cant_solve(resolve_cant_solve(counts, cant_solve, name="counts"), k)
    if fitted is not _NOT_A_FIT and idx != fitted % k:
        raise ValueError(
            f"cant_solve must be the fitted prior's can't-solve category for counts in the "
            f"fit's order (position {fitted}), but got {cant_solve!r}; leave cant_solve out "
            f"(it then follows the fit), or pass counts labelled by category"
        )
    check_n_proper(k - (idx is not None), min_proper(measure), f"measure={measure!r}", measure)
    prior = _prior_by_label(prior, counts)  # a labelled prior by its labels; a fit unchanged
    hyper = _hyper_priors(prior, k, n_hyper, counts)
    if hyper is None:
        priors, weights = check_prior(prior, k, "prior")[None, :], np.ones(1)
    else:
        priors, weights = hyper
    items = np.asarray(counts_arr, dtype=np.float64).reshape(-1, k)
    return _Curves(items, priors, weights, idx, measure), single


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
    long = np.flatnonzero(m + 1 > _BLOCK_ELEMENTS)
    for i in long:  # one row at a time, in chunks of j: memory bounded whatever m is
        out[i] = _cs_sum_long(float(b[i]), float(a_cs[i]), float(c0[i]), float(delta[i]), int(m[i]))
    order = np.argsort(m, kind="stable")
    order = order[m[order] + 1 <= _BLOCK_ELEMENTS]
    start = 0
    n = order.size
    ms = m[order]
    while start < n:
        # the most rows (at least one) whose block (rows x (max m + 1)) fits the budget;
        # m is sorted, so the size grows with the row count: a search on a window
        ahead = ms[start : start + _BLOCK_ELEMENTS] + 1
        size = np.arange(1, ahead.size + 1) * ahead
        stop = start + max(1, int(np.searchsorted(size, _BLOCK_ELEMENTS, side="right")))
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


def _log_ratios(b: float, a_cs: float, m: int, lo: int, hi: int) -> np.ndarray:
    """``log w_{j+1} / w_j`` of the beta-binomial ``BB(m, a_cs, b)`` for ``j = lo..hi - 1``
    (the integer ``m - j - 1`` formed before ``b`` is added, as in :func:`_cs_sum_block`)."""
    j = np.arange(lo, hi, dtype=np.float64)
    rest = float(m) - j
    return np.log(rest * (a_cs + j) / ((j + 1.0) * (b + (rest - 1.0))))


def _cs_sum_long(
    b: float, a_cs: float, c0: float, delta: float, m: int, chunk: int = _BLOCK_ELEMENTS
) -> float:
    """:func:`_cs_sum` of one row with ``m + 1`` terms, ``chunk`` values of ``j`` at a time.

    The same arithmetic as :func:`_cs_sum_block`, streamed: a first pass finds the mode of
    the weights (the first maximum of the running sum of log ratios), a second sums the
    ratios upward from it and a third downward (each running sum continued from the last
    chunk, so the values are those of one sequential sum), accumulating ``sum_j w_j h_j``
    and ``sum_j w_j``.
    """
    best, mode, run = 0.0, 0, 0.0
    for lo in range(0, m, chunk):
        r = _log_ratios(b, a_cs, m, lo, min(lo + chunk, m))
        r[0] += run
        cum = np.cumsum(r)  # the running sum at j = lo + 1 .. hi
        k = int(np.argmax(cum))
        if cum[k] > best:
            best, mode = float(cum[k]), lo + k + 1
        run = float(cum[-1])

    def terms(j_lo: int, log_w: np.ndarray) -> tuple[float, float]:
        with np.errstate(under="ignore"):  # far tails underflow to weight 0, harmlessly
            w = np.exp(log_w)
        proper = float(m) - np.arange(j_lo, j_lo + log_w.size, dtype=np.float64)
        bn = b + proper
        h = bn * (c0 + 4.0 * proper * delta) / (bn + 1.0)
        return float(np.sum(w * h)), float(np.sum(w))

    num, den = terms(mode, np.zeros(1))  # the mode itself: log w = 0
    run = 0.0
    for lo in range(mode, m, chunk):  # log w at j = lo + 1 .. hi, summed upward
        r = _log_ratios(b, a_cs, m, lo, min(lo + chunk, m))
        r[0] += run
        cum = np.cumsum(r)
        run = float(cum[-1])
        part = terms(lo + 1, cum)
        num, den = num + part[0], den + part[1]
    run = 0.0
    for hi in range(mode, 0, -chunk):  # log w at j = lo .. hi - 1, summed downward
        lo = max(hi - chunk, 0)
        r = _log_ratios(b, a_cs, m, lo, hi)[::-1].copy()
        r[0] += run
        cum = np.cumsum(r)
        run = float(cum[-1])
        part = terms(lo, -cum[::-1])
        num, den = num + part[0], den + part[1]
    return num / den


def _cs_closed(
    b: np.ndarray, a_cs: np.ndarray, c0: np.ndarray, delta: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""The can't-solve sum ``F`` of :func:`_cs_sum` in closed form, and a bound on its error.

    With ``u = b + N + 1`` the summand is ``(b + N)(c0 + 4 N delta) / (b + N + 1) =
    (A - B) + B u - A / u``, ``A = c0 - 4 delta (b + 1)``, ``B = 4 delta``, where ``N = m - j
    ~ BB(m, b, a_cs)`` (new proper answers) has mean ``m b / A0`` and variance
    ``m b a_cs (A0 + m) / (A0^2 (A0 + 1))``. Only ``E(1/u)`` has no closed form. It is
    bracketed by

    * ``1/E u + Var N / ((E u)^2 (b + 1 + m))`` from below (``1/u = 1/mu - (u - mu)/mu^2 +
      (u - mu)^2/(mu^2 u)`` with ``u <= b + 1 + m``) and ``1/(b + 1)`` from above;
    * the partial sums of the inverse factorial series in ``x = N + b - 1``,
      ``1/(x + 2) = sum_k (-1)^k (k + 1)! / (x (x - 1) ... (x - k))``: with ``x - r > 0``
      (``b > r + 1``) the remainder after ``r`` terms has the sign ``(-1)^r`` and at most the
      size of the next term, so ``E(1/u)`` lies between consecutive partial sums; each term
      is a beta-binomial inverse factorial moment in closed form, ``E 1/(x (x - 1) ... (x -
      k)) = prod_{i=1}^{k+1} (A0 - i) / ((b - i)(m + A0 - i))``.

    The midpoint of the tightest bracket is used; the bound is half its width times ``|A|``
    plus the rounding of the three terms.
    """
    mf = m.astype(np.float64)
    a0 = b + a_cs
    big_a = c0 - 4.0 * delta * (b + 1.0)
    big_b = 4.0 * delta
    mean_u = b + 1.0 + mf * (b / a0)
    lower, upper = _inverse_u(b, a_cs, m)
    t1, t2, t3 = big_a - big_b, big_b * mean_u, -big_a * 0.5 * (lower + upper)
    err = 0.5 * np.abs(big_a) * (upper - lower) + 8e-16 * (np.abs(t1) + np.abs(t2) + np.abs(t3))
    return t1 + t2 + t3, err


def _inverse_u(b: np.ndarray, a_cs: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``lower <= E 1/(N + b + 1) <= upper`` for ``N ~ BB(m, b, a_cs)`` (see
    :func:`_cs_closed`)."""
    mf = m.astype(np.float64)
    a0 = b + a_cs
    mean_u = b + 1.0 + mf * (b / a0)
    var_n = mf * b * a_cs * (a0 + mf) / (a0 * a0 * (a0 + 1.0))
    lower = 1.0 / mean_u + var_n / (mean_u * mean_u * (b + 1.0 + mf))
    upper = 1.0 / (b + 1.0)
    partial = np.zeros_like(b)  # the sum of the first r terms
    term = np.ones_like(b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for r in range(_SERIES_TERMS):
            i = r + 1.0
            term = term * i * (a0 - i) / ((b - i) * (mf + a0 - i))  # the term t_r
            ok = b > r + 1.0
            nxt = partial + (-1.0) ** r * term
            lo_r, hi_r = (partial, nxt) if r % 2 == 0 else (nxt, partial)
            lower = np.where(ok, np.maximum(lower, lo_r), lower)
            upper = np.where(ok, np.minimum(upper, hi_r), upper)
            partial = np.where(ok, nxt, partial)
    return lower, np.maximum(upper, lower)


def _expected_gain(alpha_t: np.ndarray, idx: int | None, measure: str, m: np.ndarray) -> Any:
    r"""``f(m - 1) - f(m)`` from closed forms, without a difference of nearly equal values.

    Without can't-solve, ``f(m) = kappa (c0 + 4 m delta) / ((b + m)(b + m + 1))`` gives
    ``f(m - 1) - f(m) = 2 kappa (c0 + 2 delta (m - b - 1)) / ((b + m - 1)(b + m)(b + m +
    1))``. With it, the closed form of :func:`_cs_closed` is ``f(m) = kappa (A / s^2 + Q / s
    - A e(m) / s^2) + T / s`` (``s = A0 + m``, ``Q = 4 delta b / A0``, ``T`` the second term
    of the formula, ``e(m)`` the bracketed ``E 1/(N + b + 1)``), so ``f(m - 1) - f(m) =
    kappa A (2s - 1) / ((s - 1)^2 s^2) + (kappa Q + T) / ((s - 1) s) - kappa A (e(m - 1) /
    (s - 1)^2 - e(m) / s^2)``; NaN where that closed form is not accurate to
    :data:`_CLOSED_RTOL` at ``m - 1`` or ``m`` (the caller then takes the difference).
    """
    kappa, b, a_cs, c0, delta, second_y = _parts(alpha_t, idx, measure)
    mf = m.astype(np.float64)
    if a_cs is None:
        return (
            2.0
            * kappa
            * (c0 + 2.0 * delta * (mf - b - 1.0))
            / ((b + mf - 1.0) * (b + mf) * (b + mf + 1.0))
        )
    a0 = b + a_cs
    big_a = c0 - 4.0 * delta * (b + 1.0)
    q = 4.0 * delta * b / a0
    t = a_cs * b * second_y / (a0 * (a0 + 1.0))
    s = a0 + mf
    mids, ok = [], np.ones(b.shape, dtype=bool)
    for mm in (m - 1, m):
        lower, upper = _inverse_u(b, a_cs, mm)
        mids.append(0.5 * (lower + upper))
        closed, err = _cs_closed(b, a_cs, c0, delta, mm)
        ss = a0 + mm.astype(np.float64)
        bound = kappa * err / (ss * ss)
        ok &= bound <= _CLOSED_RTOL * (kappa * closed / (ss * ss) + t / ss - bound)
    s1 = s - 1.0
    gain = (
        kappa * big_a * (2.0 * s - 1.0) / (s1 * s1 * s * s)
        + (kappa * q + t) / (s1 * s)
        - kappa * big_a * (mids[0] / (s1 * s1) - mids[1] / (s * s))
    )
    return np.where(ok, gain, np.nan)


def _parts(alpha_t: np.ndarray, idx: int | None, measure: str) -> tuple:
    """``(kappa, b, a_cs, c0, delta, second_y)`` of the formula (see
    :func:`expected_posterior_var`, Notes) for concentrations ``alpha_t`` (K, items)."""
    a, a_cs = split_cant_solve(alpha_t, idx)
    c = a.shape[0]
    b = category_total(a)
    mean_s2, var_s2 = s2_mean_var(a, b)
    p2 = category_total(a * a)
    e2 = pair_products(a)
    t = weighted_spread(a, b, p2)
    den = b * (b + 1.0) * (b + 2.0) * (b + 3.0)
    # c0 = b (b + 1) Var(S2 | a) and delta = E(sum p^3 - S2^2 | a), as non-negative sums
    c0 = 4.0 * ((b + 1.0) * t + (p2 + b) * e2) / den
    delta = (t + category_total(a * a * others_total(a)) + 2.0 * e2) / den
    if measure == "modified":
        kappa = (c / (c - 1.0)) ** 2
        mean_y = (spread_sum(a, b) + (c - 1.0) * b) / ((c - 1.0) * b * (b + 1.0))
    else:
        kappa = 1.0
        mean_y = mean_s2
    second_y = kappa * var_s2 + mean_y * mean_y  # E(Y^2 | a)
    return kappa, b, a_cs, c0, delta, second_y


def _expected_var(alpha_t: np.ndarray, idx: int | None, measure: str, m: np.ndarray) -> Any:
    """The expected posterior variance for posterior concentrations ``alpha_t`` (K, items)."""
    kappa, b, a_cs, c0, delta, second_y = _parts(alpha_t, idx, measure)
    mf = m.astype(np.float64)
    if a_cs is None:
        return kappa * (c0 + 4.0 * mf * delta) / ((b + mf) * (b + mf + 1.0))
    a0 = b + a_cs
    s = a0 + mf
    tail = a_cs * b * second_y / (a0 * (a0 + 1.0) * s)
    total = np.empty_like(b)
    exact = m + 1 < _CLOSED_MIN_TERMS
    if not exact.all():
        closed, err = _cs_closed(b, a_cs, c0, delta, m)
        value = kappa * closed / (s * s) + tail
        bound = kappa * err / (s * s)
        exact |= ~(bound <= _CLOSED_RTOL * (value - bound))
        total[~exact] = closed[~exact]
    work = _WORK.get()
    if work is not None and work.dry:
        long = exact & (m + 1 >= _CLOSED_MIN_TERMS)
        if long.any():
            work.would += float(np.sum(m[long] + 1.0))
            total[long] = closed[long]
            exact &= ~long
    rows = np.flatnonzero(exact)
    if rows.size:
        if work is not None:
            work.charge(float(np.sum(m[rows] + 1.0)))
        total[rows] = _cs_sum(b[rows], a_cs[rows], c0[rows], delta[rows], m[rows])
    return kappa * total / (s * s) + tail


# --------------------------------------------------------------------------- public API
def _check_whole(x: Any, name: str, what: str, minimum: int = 0) -> int:
    """Return ``x`` as a Python int >= ``minimum`` or raise naming ``name`` and what it
    means (one message for every way it is wrong)."""
    message = f"{name} must be a whole number >= {minimum} ({what}), but got {x!r}"
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
        raise TypeError(message)
    if not isinstance(x, numbers.Integral) and not (math.isfinite(x) and x == round(x)):
        raise ValueError(message)
    if x < minimum:
        raise ValueError(message)
    return int(x)


def expected_posterior_var(
    counts: Any,
    extra: Any,
    *,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    n_hyper: int = 100,
) -> Any:
    r"""Expected posterior variance of an ambiguity measure after ``extra`` more answers.

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers); categories on the last
        axis, ``K >= 2``. A DataArray with a ``"category"`` dimension is read by that name,
        in either dimension order (``("category", "item")`` is its transpose).
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item: by
        position, or labelled by item (a pandas Series indexed by the items, a DataArray
        with an item coordinate) and read by its labels against labelled counts.
    measure : {"amb", "modified"}, default "amb"
        :func:`ambppl.amb` or :func:`ambppl.amb_modified`. "old" and "entropy" are valid
        measure names but have no closed form here: they raise
        :class:`NotImplementedError`.
    prior : float, array_like, pandas.Series, xarray.DataArray or xarray.DataTree, default 1.0
        Dirichlet prior: one concentration for all categories (symmetric) or one per
        category, all finite and strictly positive; a bare array is read by position (in
        the order of the categories of ``counts``), a labelled one (a Series indexed by the
        category labels, a DataArray with a ``category`` coordinate) by its labels, in any
        order, against the ``category`` coordinate of ``counts``. Or a learned prior, the
        result of ``ambppl.fit(counts, "hierarchical_dirichlet")`` (its ``posterior`` has
        ``mu`` (chain, draw, category) and ``kappa`` (chain, draw)): then the value is
        averaged over the hyperparameters' posterior (see Notes, *Learned prior*).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it);
        for bare counts with a learned ``prior`` whose fit names a can't-solve category, that
        category's position in the fit (bare counts are read in the fit's order; an explicit
        value must agree); else the last category.
    n_hyper : int, default 100
        With a learned ``prior``: the number of posterior draws of ``(mu, kappa)`` averaged
        over, an evenly thinned subset of the chain x draw draws (all if fewer); a whole
        number >= 1. Unused for a fixed prior, but checked whatever the prior.

    Returns
    -------
    numpy.ndarray or numpy.float64
        :math:`E_{new}[\mathrm{Var}(\mathrm{measure}(q) \mid a + new)] \ge 0` with
        :math:`a` = ``prior + counts`` and :math:`new \sim DM(m, a)`, shape ``(items,)``
        (a scalar for counts of shape ``(K,)``). ``extra=0`` gives
        :func:`ambppl.dirichlet_var` of ``prior + counts``; the value is non-increasing in ``m``
        and falls like ``1/m``.

    Raises
    ------
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"``.
    ValueError
        If ``measure`` is unknown; ``counts`` is negative, not whole, not finite, has fewer
        than 2 categories or more than 2 dimensions; ``extra`` is negative, not whole, or of
        the wrong shape, or its sums would take more than about a minute (Notes, *Large
        m*); ``prior`` is not positive or has the wrong length, or is labelled with labels
        other than the categories of ``counts`` (or repeated ones, or ``counts`` have no
        category labels to read it by); ``cant_solve`` is out of
        range, a string other than ``"auto"`` or contradicts ``counts.attrs["cant_solve"]``;
        or ``measure="modified"`` has fewer than 2 proper categories. For
        a learned ``prior``: if it has no posterior ``mu`` and ``kappa`` or was learned on a
        different number of categories than ``counts`` has. For any ``prior``: if
        ``n_hyper`` is not a whole number >= 1.
    TypeError
        If ``counts``, ``extra``, ``prior`` or ``n_hyper`` is not numeric (or ``extra`` or
        ``n_hyper`` is boolean), or ``cant_solve`` is not an integer, None or a string.

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
    :math:`m + 1` terms (vectorized over items and :math:`j`; time :math:`O(\mathrm{items}
    \times m)`, memory bounded: rows beyond :math:`2^{17}` terms are summed in chunks).

    *Large m.* With :math:`u = b + N + 1` the summand is :math:`(A - B) + Bu - A/u`
    (:math:`A = c_0 - 4\Delta(b+1)`, :math:`B = 4\Delta`), so only :math:`E(1/u)` has no
    closed form. For :math:`m \ge 1023` it is bracketed (Jensen's bound with the variance
    of :math:`N`; :math:`1/(b+1)`; the partial sums of the alternating inverse factorial
    series :math:`1/(x+2) = \sum_k (-1)^k (k+1)!/(x(x-1)\cdots(x-k))`, :math:`x = N + b -
    1`, whose terms are beta-binomial inverse factorial moments
    :math:`\prod_{i=1}^{k+1} (A_0 - i)/((b - i)(m + A_0 - i))` for :math:`b > k + 1`), and
    the midpoint is used where the bracket bounds the error by 1e-11 of the value; the other
    rows are summed. A request whose sums are estimated beyond about a minute
    (:data:`ambppl.internal.limits.TIME_GUARD_S`, at 1e-7 s per term) is refused before summing,
    naming ``extra``.

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

    *Learned prior.* For a fitted ``hierarchical_dirichlet`` prior the value is
    :math:`E_{\mu,\kappa}[f(\mathrm{counts}, m; \mathrm{prior} = \kappa\mu)]`, the
    average of the formula above over ``n_hyper`` draws of the hyperparameters' posterior,
    taken at evenly spaced positions ``(i * S) // n_hyper`` of the ``S`` chain x draw draws
    (so the same draws on every call; draws with equal ``kappa * mu`` are merged, so a
    fit with constant hyperparameters, ``method="empirical_bayes"``, gives exactly the
    fixed prior ``kappa * mu``). The mean over the kept draws is an unbiased estimate of the
    average over the whole posterior. It conditions on the hyperparameters' *current*
    posterior: that the new answers would also update ``mu`` and ``kappa`` is ignored, which
    is negligible when they were learned from many items. Cost: ``n_hyper`` times the
    fixed-prior cost (at most).

    :func:`expected_posterior_sd` is the square root of this value.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       sections 2-3 and appendix A (Beta and Dirichlet moments).

    Examples
    --------
    Two items answered (yes, no, can't solve) = (3, 1, 0) and (0, 0, 4), uniform prior:

    >>> import ambppl
    >>> from ambppl.analysis.planning import expected_posterior_var
    >>> counts = [[3, 1, 0], [0, 0, 4]]
    >>> ambppl.dirichlet_var([[4.0, 2.0, 1.0], [1.0, 1.0, 5.0]]).round(6).tolist()
    [0.01607, 0.013719]
    >>> expected_posterior_var(counts, 0).round(6).tolist()  # no new answers: the same
    [0.01607, 0.013719]
    >>> expected_posterior_var(counts, [10, 100]).round(6).tolist()  # 10 and 100 more
    [0.007877, 0.001113]
    >>> round(float(expected_posterior_var([5, 5, 2, 0], 20, cant_solve=None)), 6)
    0.001697

    Under a prior learned from all items (here at the empirical-Bayes point, fast):

    >>> fitted = ambppl.fit(np.array(counts * 5), "hierarchical_dirichlet",
    ...                     method="empirical_bayes")
    >>> expected_posterior_var(counts, [10, 100], prior=fitted).round(6).tolist()
    [0.009536, 0.000566]
    """
    curves, single = _prepare(counts, measure, prior, cant_solve, n_hyper)
    extra = item_aligned(extra, counts)  # labelled by item: read by its labels
    m = _check_extra(extra, None if single else curves.n)
    if curves.n == 0:
        return np.empty(0)
    with _guard("extra", "--extra", extra if np.ndim(extra) == 0 else None):
        out = curves(np.arange(curves.n), m)
    return out[0] if single else out


def expected_posterior_sd(
    counts: Any,
    extra: Any,
    *,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    n_hyper: int = 100,
) -> Any:
    r"""Square root of the expected posterior variance after ``extra`` more answers.

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers), ``K >= 2``; a DataArray
        with a ``"category"`` dimension is read by that name, in either dimension order.
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item: by
        position, or labelled by item (a pandas Series indexed by the items, a DataArray
        with an item coordinate) and read by its labels against labelled counts.
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like, pandas.Series, xarray.DataArray or xarray.DataTree, default 1.0
        Symmetric Dirichlet concentration, one per category (a bare array by position, a
        labelled Series or DataArray by its category labels), or a fitted
        ``hierarchical_dirichlet`` result (averaged over its hyperparameters, as in
        :func:`expected_posterior_var`).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it);
        for bare counts with a learned ``prior`` whose fit names a can't-solve category, that
        category's position in the fit (bare counts are read in the fit's order; an explicit
        value must agree); else the last category.
    n_hyper : int, default 100
        Draws of a learned ``prior`` averaged over (see :func:`expected_posterior_var`).

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
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       sections 2-3.

    Examples
    --------
    >>> from ambppl.analysis.planning import expected_posterior_sd
    >>> expected_posterior_sd([[3, 1, 0], [0, 0, 4]], [10, 100]).round(4).tolist()
    [0.0887, 0.0334]
    """
    return np.sqrt(
        expected_posterior_var(
            counts, extra, measure=measure, prior=prior, cant_solve=cant_solve, n_hyper=n_hyper
        )
    )


# --------------------------------------------------------------------------- planning
#: Objectives of :func:`next_batch` that are implemented.
