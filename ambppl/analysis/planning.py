r"""Preposterior planning: how much will more answers shrink the posterior of ambiguity?

For an item with counts ``n`` and a Dirichlet prior the posterior of the response
distribution is ``q ~ Dirichlet(a)``, ``a = prior + n``. If ``m`` more answers are collected,
they follow the Dirichlet-multinomial predictive ``DM(m, a)`` and the posterior becomes
``Dirichlet(a + new)``. :func:`expected_posterior_var` returns the expected posterior
variance ``E_new[Var(measure(q) | a + new)]`` exactly (a closed form plus, with a can't-solve
category, one finite sum of ``m + 1`` non-negative terms), and :func:`expected_posterior_sd`
its square root.

Derivation (notation of :mod:`ambppl.maths.moments`): proper concentrations ``a_1..a_C`` with
``b = sum_k a_k``, can't-solve concentration ``a_cs``, ``A0 = b + a_cs``, ``s = A0 + m``.
Under ``Dirichlet(a)``, ``X = 1 - q_cs ~ Beta(b, a_cs)`` is independent of
``p ~ Dir(a_1..a_C)``, and both measures are ``1 - X Y``: ``Y = S2 = sum_k p_k^2`` for
"amb" and ``Y = (C S2 - 1) / (C - 1)`` for "modified" (paper eq. ``rel_mod_unmod``:
``(C amb - q_cs) / (C - 1) = 1 - X (C S2 - 1) / (C - 1)``), so ``Var Y = kappa Var S2`` with
``kappa = 1`` or ``(C / (C - 1))^2``. The details are in the Notes of
:func:`expected_posterior_var`.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np
import xarray as xr
from scipy.special import ndtri

from ambppl.internal.checks import (
    _describe,
    as_float_array,
    check_cant_solve,
    check_item_counts,
    check_n_proper,
    check_option,
    check_positive_scalar,
    check_prior,
    check_prob,
    resolve_cant_solve,
)
from ambppl.maths.measures import MEASURES, min_proper
from ambppl.maths.moments import (
    _others,
    _pair_products,
    _split,
    _spread,
    _total,
    _var_s2,
    _weighted_spread,
)

__all__ = ["answers_needed", "expected_posterior_sd", "expected_posterior_var", "next_batch"]

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

#: Seconds per term of the can't-solve sum (about 0.1-0.25 us per term measured on one core
#: of the development machine); with :data:`ambppl.internal.limits.TIME_GUARD_S` it bounds the terms
#: one request may sum.
_SECONDS_PER_TERM = 1e-7

#: Points per item evaluated one by one (every m) by :func:`next_batch` before the curve is
#: searched (bisection on the marginal gain) instead.
_DENSE_POINTS = 256

#: :func:`next_batch` takes every open tail step's gain once at most this many per row are
#: left between the bracketing gains.
_ENUMERATE_STEPS = 8

#: Above this m the marginal gain of a curve is taken from its closed form (where accurate)
#: instead of a difference of two values (which loses about eps * m relative).
_ANALYTIC_GAIN_M = 1 << 20


class _Work:
    """Terms of can't-solve sums one request may still evaluate, and the option that sets
    how many (``extra``, ``max_extra`` or ``budget``; on the command line ``--budget``)."""

    def __init__(self, python: str, command_line: str, value: Any) -> None:
        from ambppl.internal.limits import TIME_GUARD_S

        self.python, self.command_line, self.value = python, command_line, value
        self.left = TIME_GUARD_S / _SECONDS_PER_TERM
        self.spent = 0.0
        # a dry run takes the closed form wherever m is long and counts the terms the sums
        # would have needed (``would``) instead of summing them
        self.dry = False
        self.would = 0.0

    def charge(self, terms: float, estimated: bool = False) -> None:
        """Count ``terms`` more summed terms; refuse beyond the guard, before summing them
        (``estimated``: the terms a dry run says the request needs)."""
        from ambppl.internal.limits import option

        how = (
            f"an estimated {terms:.3g} terms"
            if estimated
            else f"{self.spent + terms:.3g} terms ({self.spent:.3g} summed so far)"
        )
        python_call = not option(self.python, self.command_line).startswith("--")
        self._spend(
            terms,
            " with a can't-solve category (the expected variance after m more answers is then "
            "a sum of m + 1 terms for an item where no closed form is accurate enough: "
            f"{how})",
            ", or cant_solve=None if there is no can't-solve category" if python_call else "",
        )

    def fix(self, name: str) -> str:
        """What to change, in the caller's words (``name``: the option)."""
        if self.python == "budget":
            return (
                f"pass a smaller {name} (plan in rounds: allocate part of the answers, collect "
                "them, plan again)"
            )
        return f"pass a smaller {name}"

    def charge_seconds(self, seconds: float, what: str, fix: str = "") -> None:
        """Count ``seconds`` of estimated work (``what`` it is); refuse beyond the guard."""
        self._spend(seconds / _SECONDS_PER_TERM, f": {what}", fix)

    def _spend(self, terms: float, what: str, fix: str) -> None:
        """Count ``terms``, or refuse (:func:`ambppl.internal.limits.check_time`) with a message that
        names the option and its value, then ``what`` and what to change (``fix`` added)."""
        from ambppl.internal.limits import as_count, check_time, option

        if terms <= self.left:
            self.left -= terms
            self.spent += terms
            return
        name = option(self.python, self.command_line)
        value = self.value
        shown = as_count(value) if isinstance(value, numbers.Integral) else "the values given"
        said = f"{name} {shown}" if name.startswith("--") else f"{name}={shown}"
        check_time((self.spent + terms) * _SECONDS_PER_TERM, f"{said}{what}", self.fix(name) + fix)


#: The work guard of the request in progress (set by the public functions).
_WORK: ContextVar[_Work | None] = ContextVar("ambppl_planning_work", default=None)


@contextlib.contextmanager
def _guard(python: str, command_line: str, value: Any) -> Iterator[None]:
    """Run the block under a work guard naming ``python`` (``command_line`` on the command
    line), unless a request is already in progress (nested calls count against it)."""
    if _WORK.get() is not None:
        yield
        return
    token = _WORK.set(_Work(python, command_line, value))
    try:
        yield
    finally:
        _WORK.reset(token)


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


def _hyper_priors(prior: Any, k: int, n_hyper: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Thinned concentrations ``kappa * mu`` (S, K) and weights (S,) of a fitted prior.

    ``None`` if ``prior`` is not a fitted model (a number or vector of concentrations).
    Draws with the same concentrations are merged (their weights added), so a fit with
    constant hyperparameters (``method="empirical_bayes"``) is one prior of weight 1.
    """
    if not isinstance(prior, xr.DataTree):
        return None
    n_keep = _check_whole(n_hyper, "n_hyper", "the number of hyperparameter draws kept")
    if n_keep < 1:
        raise ValueError(f"n_hyper must be a whole number >= 1, but got {n_hyper!r}")
    post = prior["posterior"].to_dataset() if "posterior" in prior.children else None
    if post is None or "mu" not in post or "kappa" not in post:
        raise ValueError(
            "prior must be a number, a vector of Dirichlet concentrations or a fitted "
            "learned prior (ambppl.fit(counts, 'hierarchical_dirichlet') whose posterior has "
            "'mu' (chain, draw, category) and 'kappa' (chain, draw)), but got a DataTree "
            "without posterior mu and kappa (a fixed-prior fit: pass its prior instead)"
        )
    mu = np.asarray(post["mu"].transpose("chain", "draw", "category"), dtype=float)
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


class _DecisionCurves:
    """``f_i(m) = 1 - g_i(m)``: expected probability of a wrong threshold decision after ``m``
    more answers (prior-averaged if learned), with the interface of :class:`_Curves`."""

    #: Largest ``m`` the curves take (the limit of :func:`expected_correct_decision`).
    max_m: int | None = 10**7

    def __init__(self, curves: _Curves, threshold: float) -> None:
        self.base, self.threshold = curves, threshold
        self.n = curves.n
        # Items repeat count vectors: each (count vector, m) is evaluated once and memoized
        # (g costs up to an enumeration of C(m + K - 1, K - 1) new count vectors).
        self.distinct, self.row_of = np.unique(curves.counts, axis=0, return_inverse=True)
        self.row_of = self.row_of.reshape(-1)
        self.memo: dict[tuple[int, int], float] = {}

    def __call__(self, rows: np.ndarray, m: np.ndarray) -> np.ndarray:
        from ambppl.analysis._decision import expected_correct_decision

        base = self.base
        keys = list(zip(self.row_of[rows].tolist(), np.asarray(m).tolist(), strict=True))
        todo = sorted({k for k in keys if k not in self.memo})
        if todo:
            d_rows = np.array([k[0] for k in todo])
            d_m = np.array([k[1] for k in todo])
            loss = np.zeros(len(todo))
            for prior, weight in zip(base.priors, base.weights, strict=True):
                g = expected_correct_decision(
                    self.distinct[d_rows],
                    d_m,
                    threshold=self.threshold,
                    measure=base.measure,
                    prior=prior,
                    cant_solve=base.idx,
                )
                loss += weight * (1.0 - np.asarray(g, dtype=np.float64))
            self.memo.update(zip(todo, loss.tolist(), strict=True))
        return np.array([self.memo[k] for k in keys], dtype=np.float64)

    def gain(self, rows: np.ndarray, m: np.ndarray) -> np.ndarray:
        """``f(m - 1) - f(m)`` (values memoized)."""
        m = np.asarray(m, dtype=np.int64)
        return self(rows, m - 1) - self(rows, m)

    def unique_rows(self) -> tuple[_DecisionCurves, np.ndarray]:
        """The curves of the distinct count vectors, and each item's row among them."""
        base, inverse = self.base.unique_rows()
        return _DecisionCurves(base, self.threshold), inverse


def _prepare(
    counts: Any, measure: Any, prior: Any, cant_solve: Any, n_hyper: Any = 100
) -> tuple[_Curves, bool]:
    """Check the item arguments; return ``(curves, single)``."""
    measure = _check_measure(measure)
    counts_arr, single = check_item_counts(counts)
    k = counts_arr.shape[-1]
    idx = check_cant_solve(resolve_cant_solve(counts, cant_solve, name="counts"), k)
    check_n_proper(k - (idx is not None), min_proper(measure), f"measure={measure!r}")
    hyper = _hyper_priors(prior, k, n_hyper)
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


def _log_ratios(
    b: float, a_cs: float, m: int, lo: int, hi: int
) -> np.ndarray:
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
            2.0 * kappa * (c0 + 2.0 * delta * (mf - b - 1.0))
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
        axis, ``K >= 2``.
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item.
    measure : {"amb", "modified"}, default "amb"
        :func:`ambppl.amb` or :func:`ambppl.amb_modified`. "old" and "entropy" are valid
        measure names but have no closed form here: they raise
        :class:`NotImplementedError`.
    prior : float, array_like or xarray.DataTree, default 1.0
        Dirichlet prior: one concentration for all categories (symmetric) or one per
        category, all finite and strictly positive; or a learned prior, the result of
        ``ambppl.fit(counts, "hierarchical_dirichlet")`` (its ``posterior`` has ``mu``
        (chain, draw, category) and ``kappa`` (chain, draw)): then the value is averaged
        over the hyperparameters' posterior (see Notes, *Learned prior*).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    n_hyper : int, default 100
        With a learned ``prior``: the number of posterior draws of ``(mu, kappa)`` averaged
        over, an evenly thinned subset of the chain x draw draws (all if fewer). Ignored for
        a fixed prior.

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
        the wrong shape, or its sums would take more than about a minute (Notes, *Large
        m*); ``prior`` is not positive or has the wrong length; ``cant_solve`` is out of
        range, a string other than ``"auto"`` or contradicts ``counts.attrs["cant_solve"]``;
        or ``measure="modified"`` has fewer than 2 proper categories. For
        a learned ``prior``: if it has no posterior ``mu`` and ``kappa``, was learned on a
        different number of categories than ``counts`` has, or ``n_hyper < 1``.
    TypeError
        If ``counts``, ``extra`` or ``prior`` is not numeric (or ``extra`` is boolean), or
        ``cant_solve`` is not an integer, None or a string.

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
    .. [1] "Bayesian inference of ambiguity in categorical annotations", sections 2-3 and
       appendix A (Beta and Dirichlet moments).

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
        Answers so far per category (non-negative whole numbers), ``K >= 2``.
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item.
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like or xarray.DataTree, default 1.0
        Symmetric Dirichlet concentration, one per category, or a fitted
        ``hierarchical_dirichlet`` result (averaged over its hyperparameters, as in
        :func:`expected_posterior_var`).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
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
    .. [1] "Bayesian inference of ambiguity in categorical annotations", sections 2-3.

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
_OBJECTIVES = ("variance", "decision")


def _check_whole(x: Any, name: str, what: str) -> int:
    """Return ``x`` as a Python int >= 0 or raise naming ``name`` and what it means."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a whole number >= 0 ({what}), but got {x!r}")
    if not isinstance(x, numbers.Integral) and not (math.isfinite(x) and x == round(x)):
        raise ValueError(f"{name} must be a whole number >= 0 ({what}), but got {x!r}")
    if x < 0:
        raise ValueError(f"{name} must be a whole number >= 0 ({what}), but got {x!r}")
    return int(x)


def _sd_target(target_sd: Any, target_hdi_width: Any, hdi_prob: Any) -> float:
    """The posterior-sd target implied by exactly one of the two targets."""
    if (target_sd is None) == (target_hdi_width is None):
        raise ValueError(
            "give exactly one of target_sd or target_hdi_width (a positive number), but got "
            f"target_sd={target_sd!r} and target_hdi_width={target_hdi_width!r}"
        )
    prob = check_prob(hdi_prob, "hdi_prob")
    if target_sd is not None:
        return check_positive_scalar(target_sd, "target_sd")
    width = check_positive_scalar(target_hdi_width, "target_hdi_width")
    return width / (2.0 * float(ndtri(0.5 + 0.5 * prob)))


def answers_needed(
    counts: Any,
    *,
    target_sd: float | None = None,
    target_hdi_width: float | None = None,
    max_extra: int = 1000,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    hdi_prob: float = 0.94,
    n_hyper: int = 100,
) -> Any:
    r"""Fewest further answers per item for the expected posterior sd to reach a target.

    For each item the smallest ``m`` in ``0..max_extra`` with
    :func:`expected_posterior_sd` ``(counts, m) <= target_sd``, or ``-1`` if even
    ``max_extra`` more answers are not expected to reach it.

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers), ``K >= 2``.
    target_sd : float, optional
        Target posterior standard deviation of the measure (> 0).
    target_hdi_width : float, optional
        Target width of the ``hdi_prob`` highest-density interval (> 0), converted to
        ``target_sd = target_hdi_width / (2 z)`` with ``z`` the standard normal
        ``(1 + hdi_prob) / 2`` quantile (normal approximation, see Notes). Give exactly one
        of ``target_sd`` and ``target_hdi_width``.
    max_extra : int, default 1000
        Largest number of further answers considered (a whole number >= 0).
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like or xarray.DataTree, default 1.0
        Symmetric Dirichlet concentration, one per category, or a fitted
        ``hierarchical_dirichlet`` result (averaged over its hyperparameters, as in
        :func:`expected_posterior_var`).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    hdi_prob : float, default 0.94
        Probability mass of the interval, in (0, 1); used only with ``target_hdi_width``.
    n_hyper : int, default 100
        Draws of a learned ``prior`` averaged over (see :func:`expected_posterior_var`).

    Returns
    -------
    numpy.ndarray of int64, shape (items,), or numpy.int64
        The number of further answers per item: ``0`` if the target is already met,
        ``-1`` (sentinel) if it is not met within ``max_extra`` further answers (a scalar for
        counts of shape ``(K,)``).

    Raises
    ------
    ValueError
        If both or neither target is given, a target is not positive and finite,
        ``hdi_prob`` is not in (0, 1), ``max_extra`` is negative or its can't-solve sums
        would take more than about a minute (naming ``max_extra``), or as
        :func:`expected_posterior_var`.
    TypeError
        If a target, ``hdi_prob`` or ``max_extra`` is not a number (``max_extra``: not a
        whole number), or as :func:`expected_posterior_var`.
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"``.

    Notes
    -----
    :func:`expected_posterior_sd` decreases strictly in ``m``, so the answer is found by a
    bisection over ``m`` run for all items at once: ``ceil(log2(max_extra))`` rounds, each
    one vectorized call (time :math:`O(\mathrm{items} \times \mathrm{max\_extra} \times
    \log \mathrm{max\_extra})` with a can't-solve category, less without).

    The sd used is the root of the expected posterior variance; by Jensen's inequality
    the expected posterior sd is at most this, so the count errs towards more answers.

    *HDI width.* ``2 z sd`` is the width of the central interval of a normal posterior
    (``z = 1.881`` for ``hdi_prob=0.94``). It is good when the posterior of the measure is
    roughly symmetric and far from the bounds, i.e. with many answers and an ambiguity
    away from 0 and 1 (the upper bound of the measure). It is poor with few answers or a
    posterior piled up near 0 or near the upper bound: such a posterior is skewed and
    bounded, and its HDI is then usually narrower than ``2 z sd`` (at 94%: 2.81 sd for an
    exponential shape, 3.26 sd for a uniform one, against 3.76 sd), so the count again errs
    towards more answers; for a heavy-tailed posterior it could be too few. Pass
    ``target_sd`` to avoid the approximation.

    Examples
    --------
    >>> from ambppl.analysis.planning import answers_needed
    >>> counts = [[3, 1, 0], [0, 0, 4], [40, 2, 1]]
    >>> answers_needed(counts, target_sd=0.05).tolist()
    [52, 40, 32]
    >>> answers_needed(counts, target_hdi_width=0.2).tolist()  # 94% HDI, normal approx.
    [45, 34, 23]
    >>> answers_needed(counts, target_sd=0.001).tolist()  # out of reach: -1
    [-1, -1, -1]
    """
    target = _sd_target(target_sd, target_hdi_width, hdi_prob)
    top = _check_whole(max_extra, "max_extra", "the largest number of further answers tried")
    curves, single = _prepare(counts, measure, prior, cant_solve, n_hyper)
    n = curves.n

    def met(rows: np.ndarray, m: np.ndarray) -> np.ndarray:
        return np.sqrt(curves(rows, m)) <= target

    everyone = np.arange(n)
    out = np.full(n, -1, dtype=np.int64)
    with _guard("max_extra", "--max-extra", top):
        _bisect_needed(met, everyone, out, top)
    return out[0] if single else out


def _bisect_needed(met: Any, everyone: np.ndarray, out: np.ndarray, top: int) -> None:
    """Fill ``out`` with the smallest ``m`` in ``0..top`` where ``met`` (see
    :func:`answers_needed`)."""
    n = everyone.size
    if n:
        now = met(everyone, np.zeros(n, dtype=np.int64))
        out[now] = 0
        rest = everyone[~now]
        if rest.size and top > 0:
            reach = met(rest, np.full(rest.size, top, dtype=np.int64))
            rest = rest[reach]
            lo = np.zeros(rest.size, dtype=np.int64)  # not met at lo
            hi = np.full(rest.size, top, dtype=np.int64)  # met at hi
            while rest.size and np.any(hi - lo > 1):
                open_ = hi - lo > 1
                mid = (lo + hi) // 2
                ok = np.ones(rest.size, dtype=bool)
                ok[open_] = met(rest[open_], mid[open_])
                hi = np.where(open_ & ok, mid, hi)
                lo = np.where(open_ & ~ok, mid, lo)
            out[rest] = hi


def next_batch(
    counts: Any,
    budget: int,
    *,
    objective: str = "variance",
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    n_hyper: int = 100,
    threshold: float = 0.4,
) -> np.ndarray:
    r"""Allocate ``budget`` further answers across items (greedy on convex hulls of the gains).

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers), ``K >= 2``; a vector is
        one item.
    budget : int
        Number of further answers to allocate (a whole number >= 0).
    objective : {"variance", "decision"}, default "variance"
        "variance": make the total expected posterior variance
        :math:`\sum_i f_i(m_i)`, :math:`f_i(m)` = :func:`expected_posterior_var`
        ``(counts_i, m)``, small. "decision": make the expected number of wrong threshold
        decisions :math:`\sum_i f_i(m_i)`, :math:`f_i(m) = 1 - g_i(m)` with :math:`g_i(m)`
        the expected probability that "measure > ``threshold``?" is decided right after
        ``m`` more answers (:func:`ambppl.analysis._decision.expected_correct_decision`: exact for two
        proper classes, a moment-matched Beta approximation otherwise, worst error 0.08 on
        its test grid), small: answers go where decisions are still open (P(measure >
        threshold) near 1/2) and can be settled.
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like or xarray.DataTree, default 1.0
        Symmetric Dirichlet concentration, one per category, or a fitted
        ``hierarchical_dirichlet`` result (averaged over its hyperparameters, as in
        :func:`expected_posterior_var`).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    n_hyper : int, default 100
        Draws of a learned ``prior`` averaged over (see :func:`expected_posterior_var`);
        :math:`f_i` is then the prior-averaged expected posterior variance.
    threshold : float, default 0.4
        The decision threshold of ``objective="decision"`` (unused otherwise).

    Returns
    -------
    numpy.ndarray of int64, shape (items,)
        Further answers per item, summing to ``budget`` (shape ``(1,)`` for counts of
        shape ``(K,)``).

    Raises
    ------
    ValueError
        If ``objective`` is not "variance" or "decision", ``budget`` is negative, positive
        with no items or at least 2**53, more than ``objective="decision"`` can allocate
        (10**7 per item), or its work is estimated beyond the time guard (see Notes, *Cost*),
        or as :func:`expected_posterior_var`.
    TypeError
        If ``budget`` is not a whole number, or as :func:`expected_posterior_var`.
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"``.

    Notes
    -----
    *Why not plain greedy.* Giving each answer to the item with the largest marginal gain
    :math:`f_i(m_i) - f_i(m_i + 1)` is optimal for a separable sum when every :math:`f_i`
    is convex in :math:`m` (Gross 1956; Fox 1966), and :math:`f_i` often is **not**:
    whenever the proper concentrations ``prior + counts`` of an item are all equal (an item
    without answers under a symmetric prior, or counts such as ``[3, 3, 3]``) and there is
    no can't-solve category, the first answer gives no reduction at all,
    :math:`f(1) = f(0)` (by symmetry :math:`E(\mathrm{measure} \mid a + e_k)` is the same
    for every answer ``k``, so the law of total variance removes nothing), while the second
    one does: e.g. ``counts=[0, 0, 0]``, ``cant_solve=None``, ``prior=1``:
    :math:`f(0) - 2f(1) + f(2) = -0.067 f(0)`; with ``prior=0.01``, ``-0.33 f(0)``; with a
    can't-solve category and 3 proper categories at ``prior=1``, ``-0.036 f(0)``. Nearly
    symmetric items and small priors give non-convex :math:`f_i` too. Plain greedy never
    starts an item whose first answer gains nothing (with all items unanswered it gave the
    whole budget to the first one) and, in the brute-force comparison below, missed the
    optimum in 161 of 395 non-convex cases, by up to 2.4 times the optimal total.

    *The rule: greedy on the lower convex hulls.* Let :math:`h_i` be the lower convex hull
    of the points :math:`(m, f_i(m))`. Its runs (between consecutive hull breakpoints
    :math:`p < q`) have average gains :math:`(f_i(p) - f_i(q)) / (q - p)`, decreasing
    along an item. The runs of all items are taken whole in order of decreasing average
    gain (ties: lowest item, then smallest ``m``); the first run that does not fit is
    filled partially with what is left. The result minimizes the convex relaxation
    :math:`\sum_i h_i(m_i)`, which is at most the optimum since :math:`h_i \le f_i`. Hence,
    with :math:`m` the returned allocation and :math:`m^*` an optimal one,

    .. math:: \sum_i f_i(m_i) - \sum_i f_i(m^*_i) \le \sum_i [f_i(m_i) - h_i(m_i)]
              = f_j(m_j) - h_j(m_j),

    where :math:`j` is the item of the partially filled run (every other :math:`m_i` is a
    hull breakpoint, where :math:`h_i = f_i`). So the allocation is **optimal whenever the
    budget ends on a hull breakpoint** (the gap is 0), and otherwise off by at most the gap
    between item :math:`j`'s curve and its hull at :math:`m_j`, itself at most the largest
    gap of that item over its last run. Every :math:`f_i` convex: each run is one answer
    and this is plain greedy. To compute the gap of a returned allocation ``m``: evaluate
    ``f = expected_posterior_var(np.tile(counts_i, (budget + 1, 1)), np.arange(budget +
    1))`` for each item, take its lower hull (e.g. a monotone chain), and sum
    ``f[m_i] - hull[m_i]`` over items.

    In a brute-force comparison (the 120 random setups of ``tests/test_planning.py``:
    3 items, budget 0..6, counts 0..5, priors 0.05..2; 840 cases) the allocation was
    optimal in 820 cases: all 815 that end on hull breakpoints and 5 of the 25 others; the
    worst total was 1.083 times the optimum (plain greedy: 679 optimal, worst 2.4 times).
    Near-ties on the last run can make it worse than plain greedy, e.g. four unanswered
    items, ``cant_solve=None``, ``budget=8``: the hull runs straight from 0 to 6, so the
    result is ``[6, 2, 0, 0]`` (0.8% above the optimum ``[4, 4, 0, 0]``, plain greedy's
    ``[8, 0, 0, 0]`` 0.1% above).

    *Cost.* Items with equal counts share one curve. Each curve is evaluated at every
    :math:`m = 0..M_i`, with :math:`M_i = \min(\max(4, \lceil 2\,\mathrm{budget}/
    \mathrm{items} \rceil), 256)` (at most the budget), doubled while :math:`f_i` is not
    convex on :math:`M_i/2..M_i` or its hull's last run is longer than one answer; its hull
    runs there are exact. Beyond :math:`M_i` the curve is assumed convex (as it is for large
    ``m``, where :math:`f_i \sim 1/m`), so its hull is the curve: single answers with
    falling marginal gains :math:`f_i(m-1) - f_i(m)` (from closed forms above :math:`m =
    2^{20}`, where a difference of two values would lose :math:`\log_{10} m` digits). The
    gain :math:`g` of the run that reaches the budget is found by bisection on :math:`g`
    (interpolating in :math:`g^{-1/2}`), each step needing only the counts of the items
    still bracketed, found by galloping and bisection on their own :math:`m`, and the last
    few steps' gains taken all at once; runs of gain :math:`> g` are taken whole and those of
    gain :math:`g` in item order, as above. The points evaluated do not grow with the budget
    (``next_batch(counts, 10**15)``: about a second for 20 items). A learned ``prior``
    multiplies the cost of the formula by up to ``n_hyper``. With a can't-solve category a
    point at :math:`m \ge 1024` costs :math:`O(1)` where the closed form of
    :func:`expected_posterior_var` is accurate and :math:`O(m)` otherwise (items answered
    only "can't solve" under a small prior); a dry run with the closed forms everywhere
    estimates those sums first, and a budget they would take more than about a minute for
    (:data:`ambppl.internal.limits.TIME_GUARD_S`) is refused before any of them, naming ``budget``
    (``--budget`` on the command line).

    References
    ----------
    .. [1] O. Gross (1956), "A class of discrete type minimization problems", RM-1644,
       RAND Corporation; B. Fox (1966), "Discrete optimization via marginal analysis",
       Management Science 13(3), 210-216.

    Examples
    --------
    >>> from ambppl.analysis.planning import next_batch
    >>> counts = [[3, 1, 0], [0, 0, 4], [40, 2, 1], [5, 5, 0]]
    >>> next_batch(counts, 10).tolist()
    [6, 4, 0, 0]
    >>> next_batch(counts, 0).tolist()
    [0, 0, 0, 0]
    """
    if not isinstance(objective, str) or objective not in _OBJECTIVES:
        raise ValueError(
            f"objective must be one of {', '.join(repr(o) for o in _OBJECTIVES)}, but got "
            f"{objective!r}"
        )
    total = _check_whole(budget, "budget", "the number of further answers to allocate")
    if total >= 2**53:
        from ambppl.internal.limits import option

        raise ValueError(
            f"{option('budget', '--budget')} must be below 2**53 = 9.0e15 (whole numbers "
            f"beyond are not exact in floating point), but got {budget!r}"
        )
    curves, _ = _prepare(counts, measure, prior, cant_solve, n_hyper)
    if objective == "decision":
        from ambppl.analysis._decision import _check_threshold

        curves = _DecisionCurves(curves, _check_threshold(threshold))
    n = curves.n
    if total == 0:
        return np.zeros(n, dtype=np.int64)
    if n == 0:
        raise ValueError(
            f"budget={total} cannot be allocated to no items: pass counts with at least one "
            "row, or budget=0"
        )
    if n == 1:
        return np.array([total], dtype=np.int64)
    if curves.max_m is not None and n * curves.max_m < total:
        from ambppl.internal.limits import as_count, option

        name = option("budget", "--budget")
        raise ValueError(
            f"{name} {as_count(total)} is more than objective 'decision' can allocate to "
            f"{n} items (at most {as_count(curves.max_m)} further answers per item, the limit "
            f"of its expected probability of a right decision): pass a {name} of at most "
            f"{as_count(n * curves.max_m)}, or objective 'variance'"
        )
    with _guard("budget", "--budget", total):
        return _hull_greedy(curves, total)


def _lower_hull(f: np.ndarray, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower convex hull of each row of ``f`` on ``m = 0..top_i`` (Andrew's monotone chain).

    ``f`` is (items, L) with row ``i`` valid on ``0..top_i``. Returns ``(stack, size)``: the
    hull breakpoints of row ``i`` are ``stack[i, :size[i]]`` (increasing, from 0 to
    ``top_i``). Points on a chord are dropped. One pass over ``m``, vectorized over items.
    """
    n, width = f.shape
    stack = np.zeros((n, width), dtype=np.int64)
    size = np.ones(n, dtype=np.int64)
    for t in range(1, width):
        rows = np.flatnonzero(t <= top)
        while rows.size:
            pop = rows[size[rows] >= 2]
            i1 = stack[pop, size[pop] - 2]
            i2 = stack[pop, size[pop] - 1]
            f1 = f[pop, i1]
            # i2 on or above the chord from i1 to t: not a hull point
            bad = (f[pop, i2] - f1) * (t - i1) >= (f[pop, t] - f1) * (i2 - i1)
            if not np.any(bad):
                break
            size[pop[bad]] -= 1
            rows = pop[bad]
        rows = np.flatnonzero(t <= top)
        stack[rows, size[rows]] = t
        size[rows] += 1
    return stack, size


def _dense_hulls(
    curves: Any, total: int, cap: int, n_items: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hull runs of every row's curve on ``m = 0..top`` (every point evaluated).

    ``top`` starts at ``max(4, ceil(2 budget / items))`` (at most :data:`_DENSE_POINTS` and
    ``cap``) and doubles (up to ``cap``) while the curve is not convex on ``top/2..top`` or
    its hull's last run is longer than one answer. Returns ``top`` and the runs in row order:
    row, length, average gain (a running minimum along the row), and the end of each run.
    """
    n = curves.n
    first = min(cap, max(4, -(-2 * total // n_items)), max(_DENSE_POINTS, 4))
    top = np.full(n, first, dtype=np.int64)
    f = np.zeros((n, first + 1))
    have = np.zeros(n, dtype=np.int64)  # f of row i is known at m = 0..have_i - 1
    rows = np.arange(n)
    while True:
        if f.shape[1] < top.max() + 1:
            f = np.pad(f, ((0, 0), (0, int(top.max()) + 1 - f.shape[1])))
        reps = top + 1 - have  # the new points have_i..top_i
        item = np.repeat(rows, reps)
        off = np.arange(item.size) - np.repeat(np.cumsum(reps) - reps, reps) + have[item]
        f[item, off] = curves(item, off)
        have = top + 1
        stack, size = _lower_hull(f, top)
        k = np.arange(f.shape[1] - 2)[None, :]
        tail = (k >= (top // 2)[:, None]) & (k + 2 <= top[:, None])
        bent = np.any(tail & (f[:, :-2] - 2.0 * f[:, 1:-1] + f[:, 2:] < 0.0), axis=1)
        long_last = stack[rows, np.maximum(size - 2, 0)] < top - 1
        grow = np.flatnonzero((top < cap) & (bent | long_last))
        if grow.size == 0:
            break
        top[grow] = np.minimum(2 * top[grow], cap)
    seg_i, seg_k = np.nonzero(np.arange(stack.shape[1] - 1)[None, :] < (size - 1)[:, None])
    start = stack[seg_i, seg_k]
    end = stack[seg_i, seg_k + 1]
    gain = (f[seg_i, start] - f[seg_i, end]) / (end - start)
    # hull gains fall along a row; a running minimum removes rounding-level rises
    grid = np.full((n, max(stack.shape[1] - 1, 1)), np.inf)
    grid[seg_i, seg_k] = gain
    gain = np.minimum.accumulate(grid, axis=1)[seg_i, seg_k]
    return top, seg_i, end - start, gain, end


class _Tails:
    """Tail steps ``m = top + k`` (``k = 1..cap - top``) of each row: their marginal gains,
    assumed non-increasing in ``k`` (the curve convex beyond ``top``), clipped to the row's
    last hull gain; probed points are kept."""

    def __init__(self, curves: Any, top: np.ndarray, room: np.ndarray, last: np.ndarray) -> None:
        self.curves, self.top, self.room, self.last = curves, top, room, last
        self.known: dict[tuple[int, int], float] = {}

    def gains(self, rows: np.ndarray, k: np.ndarray) -> np.ndarray:
        keys = list(zip(rows.tolist(), k.tolist(), strict=True))
        todo = [i for i, key in enumerate(keys) if key not in self.known]
        if todo:
            r, kk = rows[todo], k[todo]
            g = np.minimum(self.curves.gain(r, self.top[r] + kk), self.last[r])
            self.known.update(zip([keys[i] for i in todo], g.tolist(), strict=True))
        return np.array([self.known[key] for key in keys], dtype=np.float64)

    def counts(
        self, lam: float, lo: np.ndarray, hi: np.ndarray, decided: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bounds ``lo <= K <= hi`` on the number ``K`` of tail steps with gain ``>= lam``,
        narrowed from the given ones until equal, or until ``decided(lo, hi)`` is true.

        A row first gallops (its ``m`` doubling) from ``lo`` and then bisects, so a row
        probes points up to about twice its answer only.
        """
        lo, hi = lo.copy(), hi.copy()
        gallop = np.ones(lo.size, dtype=bool)
        while True:
            active = np.flatnonzero(lo < hi)
            if active.size == 0 or (decided is not None and decided(lo, hi)):
                return lo, hi
            a_lo, a_hi = lo[active], hi[active]
            step = np.maximum(1, self.top[active] + a_lo)
            probe = np.where(
                gallop[active], np.minimum(a_hi, a_lo + step), (a_lo + a_hi + 1) // 2
            )
            ok = self.gains(active, probe) >= lam
            lo[active] = np.where(ok, probe, a_lo)
            hi[active] = np.where(ok, a_hi, probe - 1)
            gallop[active] &= ok


def _hull_greedy(curves: Any, total: int) -> np.ndarray:
    """Greedy on the lower convex hulls (see :func:`next_batch`, Notes).

    Items with equal counts share one curve (:meth:`_Curves.unique_rows`). Every row's hull
    runs on ``0..top`` come from :func:`_dense_hulls`; beyond ``top`` the curve is assumed
    convex, so its hull is the curve itself: single answers with falling gains. The run
    that reaches the budget has the largest gain ``g`` with ``T(g) >= budget``, ``T(x)`` the
    answers in runs of gain ``>= x``: found by bisection on ``x`` (and interpolation in
    ``x^(-1/2)``, as gains fall like ``1/m^2``), each ``T`` needing only the bracketed rows'
    counts of tail steps. Runs of gain ``> g`` are taken whole, those of gain ``g`` in item
    order until the budget is spent.
    """
    n_items = curves.n
    cap = total if curves.max_m is None else min(total, curves.max_m)
    dist, row_of = curves.unique_rows()
    dense = _dense_hulls(dist, total, cap, n_items)
    work = _WORK.get()
    if work is not None and getattr(dist, "idx", None) is not None and np.any(dense[0] < cap):
        # can't-solve curves searched beyond the dense points: a dry run with the closed
        # forms first, so that a request the guard refuses is refused before the sums
        work.dry = True
        try:
            _allocate(dist, row_of, dense, total, cap, n_items)
        finally:
            work.dry = False
        work.charge(work.would, estimated=True)
        work.left += work.would  # only an estimate: the real run charges what it sums
        work.spent -= work.would
        dist = curves.unique_rows()[0]  # nothing the dry run memoized is kept
    return _allocate(dist, row_of, dense, total, cap, n_items)


def _allocate(
    dist: Any, row_of: np.ndarray, dense: tuple, total: int, cap: int, n_items: int
) -> np.ndarray:
    """The hull greedy's allocation given the dense hull runs (see :func:`_hull_greedy`)."""
    n = dist.n
    mult = np.bincount(row_of, minlength=n).astype(np.float64)
    top, seg_i, length, gain, _ = dense
    last = np.full(n, np.inf)
    ends = np.flatnonzero(np.r_[seg_i[1:] != seg_i[:-1], True])  # each row's last run
    last[seg_i[ends]] = gain[ends]
    tails = _Tails(dist, top, cap - top, last)

    def prefix(lam: float, strict: bool = False) -> np.ndarray:
        take = gain > lam if strict else gain >= lam
        return np.bincount(seg_i, weights=length * take, minlength=n)

    # bounds on the tail counts: k_lo <= K(lam_hi) <= u_hi, l_lo <= K(lam_lo) <= k_hi, with
    # prefix(lam_lo) + l_lo >= budget > prefix(lam_hi) + u_hi (weighted by multiplicity): kept
    # so that the allocation sums to the budget even where rounding makes gains non-monotone
    k_hi = cap - top
    l_lo = k_hi.copy()
    k_lo = np.zeros(n, dtype=np.int64)
    u_hi = k_lo.copy()
    lam_lo, lam_hi = -np.inf, np.inf
    t_lo, t_hi = float(n_items) * cap, 0.0

    def evaluate(lam: float) -> None:
        """Narrow the bracket with ``lam``: ``T(lam) >= budget`` or not."""
        nonlocal lam_lo, lam_hi, t_lo, t_hi, k_lo, k_hi, l_lo, u_hi
        base = prefix(lam)
        open_ = last >= lam  # rows whose tail steps may count
        lo = np.where(open_, k_lo, 0)
        hi = np.where(open_, k_hi, 0)
        lo, hi = tails.counts(
            lam, lo, hi, lambda x, y: mult @ (base + x) >= total or mult @ (base + y) < total
        )
        if mult @ (base + lo) >= total:
            lam_lo, t_lo, k_hi, l_lo = lam, float(mult @ (base + lo)), hi, lo
        else:
            lam_hi, t_hi, k_lo, u_hi = lam, float(mult @ (base + hi)), lo, hi

    # 1. among the gains of the hull runs
    cand = np.unique(gain)
    a, b = -1, cand.size
    while b - a > 1:
        mid = (a + b) // 2
        evaluate(float(cand[mid]))
        if lam_lo == cand[mid]:
            a = mid
        else:
            b = mid
    if a == cand.size - 1 and a >= 0:  # no gain above the largest run's
        lam_hi = float(np.nextafter(lam_lo, np.inf))
        k_lo = np.zeros(n, dtype=np.int64)
        u_hi = k_lo.copy()
    # 2. below every run's gain (tail steps only): step down until T(lam) >= budget
    lowest = -float(np.finfo(np.float64).max)  # T there counts every step: >= budget
    while lam_lo == -np.inf:
        if lam_hi > 1e-290:
            lam = lam_hi / 16.0
        elif lam_hi > 0.0:
            lam = 0.0
        else:
            lam = max(lam_hi * 1e10 - 1e-300, lowest)
        evaluate(lam)
    # 3. between lam_lo and lam_hi only tail steps: bisect (and interpolate) on lam
    turn = 0
    while np.any(k_hi > k_lo) and lam_hi > np.nextafter(lam_lo, np.inf):
        width = k_hi - k_lo
        if width.sum() <= _ENUMERATE_STEPS * np.count_nonzero(width):
            # few steps left open: take all their gains, then bisect among them
            rows = np.repeat(np.arange(n), width)
            ks = k_lo[rows] + 1 + np.arange(rows.size) - np.repeat(np.cumsum(width) - width, width)
            found = tails.gains(rows, ks)
            cand = np.unique(found[(found > lam_lo) & (found < lam_hi)])
            a, b = -1, cand.size
            while b - a > 1:
                mid = (a + b) // 2
                evaluate(float(cand[mid]))
                if lam_lo == cand[mid]:
                    a = mid
                else:
                    b = mid
            break
        if 0.0 < lam_lo and turn % 2 == 0 and t_lo > t_hi:
            x_lo, x_hi = lam_lo**-0.5, lam_hi**-0.5
            x = x_hi + (total - 0.5 - t_hi) / (t_lo - t_hi) * (x_lo - x_hi)
            lam = x**-2.0
        elif 0.0 < lam_lo and lam_hi / lam_lo > 4.0:
            lam = math.sqrt(lam_lo) * math.sqrt(lam_hi)
        else:
            lam = lam_lo + (lam_hi - lam_lo) / 2.0
        if not lam_lo < lam < lam_hi:
            lam = lam_lo + (lam_hi - lam_lo) / 2.0
            if not lam_lo < lam < lam_hi:
                break
        turn += 1
        evaluate(lam)
    # 4. the allocation: runs of gain > g whole, those of gain g in item order
    g = lam_lo
    k_gt = tails.counts(lam_hi, k_lo, np.minimum(u_hi, k_hi))[0]  # gain > g
    k_ge = tails.counts(g, np.maximum(k_gt, l_lo), k_hi)[0]  # gain >= g
    above = prefix(g, strict=True) + k_gt
    equal = prefix(g) - prefix(g, strict=True) + (k_ge - k_gt)
    left = total - float(mult @ above)
    eq_items = equal[row_of]
    before = np.cumsum(eq_items) - eq_items
    give = np.clip(left - before, 0.0, eq_items)
    return (above[row_of] + give).astype(np.int64)
