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

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtri

from ambppl.analysis._decision import _check_threshold, expected_correct_decision
from ambppl.analysis.posterior_sd import (
    _check_whole,
    _Curves,
    _prepare,
    _prior_by_label,
    expected_posterior_sd,
    expected_posterior_var,
)
from ambppl.data.contract import as_counts, count_values
from ambppl.internal.checks import (
    check_positive_scalar,
    check_prob,
    check_progress,
)
from ambppl.internal.limits import as_count, option
from ambppl.internal.work import WORK as _WORK
from ambppl.internal.work import guard as _guard

__all__ = [
    "answers_needed",
    "expected_posterior_sd",
    "expected_posterior_var",
    "next_batch",
    "plan",
]


#: Points per item evaluated one by one (every m) by :func:`next_batch` before the curve is
#: searched (bisection on the marginal gain) instead.
_DENSE_POINTS = 256

#: :func:`next_batch` takes every open tail step's gain once at most this many per row are
#: left between the bracketing gains.
_ENUMERATE_STEPS = 8


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


_OBJECTIVES = ("variance", "decision")


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
        Answers so far per category (non-negative whole numbers), ``K >= 2``; a DataArray
        with a ``"category"`` dimension is read by that name, in either dimension order.
    target_sd : float, optional
        Target posterior standard deviation of the measure (> 0).
    target_hdi_width : float, optional
        Target width of the ``hdi_prob`` highest-density interval (> 0), converted to
        ``target_sd = target_hdi_width / (2 z)`` with ``z`` the standard normal
        ``(1 + hdi_prob) / 2`` quantile (normal approximation, see Notes). Give exactly one
        of ``target_sd`` and ``target_hdi_width``.
    max_extra : int, default 1000
        Largest number of further answers considered (a whole number >= 0, below 2**53).
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like, pandas.Series, xarray.DataArray or xarray.DataTree, default 1.0
        Symmetric Dirichlet concentration, one per category (a bare array by position, a
        labelled Series or DataArray by its category labels, as in
        :func:`expected_posterior_var`), or a fitted ``hierarchical_dirichlet`` result
        (averaged over its hyperparameters, as in :func:`expected_posterior_var`).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it);
        for bare counts with a learned ``prior`` whose fit names a can't-solve category, that
        category's position in the fit (bare counts are read in the fit's order; an explicit
        value must agree); else the last category.
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
        ``hdi_prob`` is not in (0, 1), ``max_extra`` is negative, at least 2**53 (whole
        numbers beyond are not exact in floating point) or its can't-solve sums would take
        more than about a minute (naming ``max_extra``), or as
        :func:`expected_posterior_var`.
    TypeError
        If a target, ``hdi_prob`` or ``max_extra`` is not a number (``max_extra``: not a
        whole number), or as :func:`expected_posterior_var`.
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"``.

    Notes
    -----
    :func:`expected_posterior_sd` is non-increasing in ``m`` (not strictly: for an item
    with equal proper concentrations and no can't-solve category the first answer removes
    nothing, :math:`f(1) = f(0)`; see :func:`next_batch`, Notes), so the answer is found by a
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
    if top >= 2**53:
        raise ValueError(
            "max_extra must be below 2**53 = 9.0e15 (whole numbers beyond are not exact in "
            f"floating point), but got {max_extra!r}"
        )
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
        one item. A DataArray with a ``"category"`` dimension is read by that name, in
        either dimension order.
    budget : int
        Number of further answers to allocate (a whole number >= 0).
    objective : {"variance", "decision"}, default "variance"
        "variance": make the total expected posterior variance
        :math:`\sum_i f_i(m_i)`, :math:`f_i(m)` = :func:`expected_posterior_var`
        ``(counts_i, m)``, small. "decision": make the expected number of wrong threshold
        decisions :math:`\sum_i f_i(m_i)`, :math:`f_i(m) = 1 - g_i(m)` with :math:`g_i(m)`
        the expected probability that "measure > ``threshold``?" is decided right after
        ``m`` more answers
        (:func:`ambppl.analysis._decision.expected_correct_decision`: exact for two proper
        classes, a moment-matched Beta approximation otherwise, worst error 0.08 on its test
        grid), small: answers go where decisions are still open (P(measure >
        threshold) near 1/2) and can be settled.
    measure : {"amb", "modified"}, default "amb"
        Which measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like, pandas.Series, xarray.DataArray or xarray.DataTree, default 1.0
        Symmetric Dirichlet concentration, one per category (a bare array by position, a
        labelled Series or DataArray by its category labels, as in
        :func:`expected_posterior_var`), or a fitted ``hierarchical_dirichlet`` result
        (averaged over its hyperparameters, as in :func:`expected_posterior_var`).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it);
        for bare counts with a learned ``prior`` whose fit names a can't-solve category, that
        category's position in the fit (bare counts are read in the fit's order; an explicit
        value must agree); else the last category.
    n_hyper : int, default 100
        Draws of a learned ``prior`` averaged over (see :func:`expected_posterior_var`);
        :math:`f_i` is then the prior-averaged expected posterior variance.
    threshold : float, default 0.4
        The decision threshold of ``objective="decision"``, strictly between 0 and 1
        (unused by ``objective="variance"``, but checked whatever the objective).

    Returns
    -------
    numpy.ndarray of int64, shape (items,)
        Further answers per item, summing to ``budget`` (shape ``(1,)`` for counts of
        shape ``(K,)``).

    Raises
    ------
    ValueError
        If ``objective`` is not "variance" or "decision", ``threshold`` is not strictly
        between 0 and 1 (whatever the objective), ``budget`` is negative, positive
        with no items or at least 2**53, more than ``objective="decision"`` can allocate
        (10**7 per item), or its work is estimated beyond the time guard (see Notes, *Cost*),
        or as :func:`expected_posterior_var`.
    TypeError
        If ``budget`` is not a whole number, ``threshold`` is not a number, or as
        :func:`expected_posterior_var`.
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
    :math:`f(0) - 2f(1) + f(2) = -0.067 f(0)`; with ``prior=0.01``, ``-0.33 f(0)``. With a
    can't-solve category the first answer does remove some variance (it may be "can't
    solve"), and at ``prior=1`` with 3 proper categories (``counts=[0, 0, 0, 0]``,
    ``cant_solve=3``) the curve of ``measure="amb"`` is convex there (``+0.0084 f(0)``) while
    that of ``measure="modified"`` is not (``-0.036 f(0)``). Nearly symmetric items and
    small priors give non-convex :math:`f_i` too. Plain greedy never
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

    In a brute-force comparison (the 120 random setups of ``tests/analysis/test_planning.py``:
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
        raise ValueError(
            f"{option('budget', '--budget')} must be below 2**53 = 9.0e15 (whole numbers "
            f"beyond are not exact in floating point), but got {budget!r}"
        )
    threshold = _check_threshold(threshold)  # checked always: a wrong one is never unused
    curves, _ = _prepare(counts, measure, prior, cant_solve, n_hyper)
    if objective == "decision":
        curves = _DecisionCurves(curves, threshold)
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
        name = option("budget", "--budget")
        decision = option("objective 'decision'", "--objective decision")
        variance = option("objective='variance'", "--objective variance")
        raise ValueError(
            f"{name} {as_count(total)} is more than {decision} can allocate to {n} items (at "
            f"most {as_count(curves.max_m)} further answers per item, the limit of its "
            "expected probability of a right decision): pass a "
            f"{name} of at most {as_count(n * curves.max_m)}, or {variance}"
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
            probe = np.where(gallop[active], np.minimum(a_hi, a_lo + step), (a_lo + a_hi + 1) // 2)
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


def plan(
    counts: Any,
    budget: int,
    *,
    objective: str = "variance",
    threshold: float = 0.4,
    measure: str = "amb",
    prior: Any = 1.0,
    progress: Callable[[str], None] | None = None,
) -> Any:
    """Where to spend ``budget`` further answers: one row per item, most extra answers first.

    The table that ``ambppl plan`` writes: :func:`next_batch` allocates the budget under the
    flat Dirichlet model (a fixed ``prior``, in closed form), and :func:`expected_posterior_sd`
    gives each item's posterior sd of the measure now and after its extra answers.

    Parameters
    ----------
    counts : xarray.DataArray, pandas.DataFrame, numpy.ndarray or nested list
        Counts already read (:func:`ambppl.read_annotations`, dims ``("item", "category")``;
        an array, a nested list of counts (items x categories) or a frame is read with its
        defaults, :func:`ambppl.data.as_counts`). The can't-solve category is the one
        ``attrs["cant_solve"]`` names, in whatever position; a bare array is read with none
        (unlike :func:`expected_posterior_sd`, whose bare arrays take the last column: read
        such an array with ``ambppl.read_annotations(array, cant_solve=...)`` first).
    budget : int
        Number of further answers to allocate (a whole number >= 0).
    objective : {"variance", "decision"}, default "variance"
        What to make small (:func:`next_batch`): the total expected posterior variance of the
        measure, or the chance of getting "measure > threshold" wrong.
    threshold : float, default 0.4
        The threshold of ``objective="decision"``, strictly between 0 and 1 (checked
        whatever the objective).
    measure : {"amb", "modified"}, default "amb"
        The ambiguity measure; "old" and "entropy" raise :class:`NotImplementedError`.
    prior : float, array_like, pandas.Series or xarray.DataArray, default 1.0
        The fixed Dirichlet prior: one positive number (symmetric) or one per category, a
        bare array by position (in the order of the categories of ``counts``), a labelled
        one (a Series indexed by the category labels, a DataArray with a ``category``
        coordinate) by its labels, in any order.
    progress : callable, optional
        Called with one line of text as the allocation starts (the command line prints it
        on stderr).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``item``, columns ``n_answers`` (answers so far), ``extra`` (answers
        allocated), ``sd_now`` and ``sd_after`` (the root of the expected posterior variance
        after the extra answers); sorted by ``extra``, largest first (ties in item order).

    Raises
    ------
    ValueError
        For counts that are not counts of answers (a DataArray with dims other than
        ``("item", "category")``, negative or fractional counts, no items), a bad budget,
        objective, threshold (not strictly between 0 and 1, whatever the objective), measure
        or prior (a labelled prior also where its labels are not the categories of
        ``counts``), or a request too large to finish in time (as :func:`next_batch` and
        :func:`expected_posterior_sd`).
    TypeError
        For a path or reader options instead of counts already read, ``counts`` of another
        type, or a budget, threshold or prior that is not a number (as :func:`next_batch`).
    NotImplementedError
        For ``measure="old"`` or ``measure="entropy"`` (no closed form, as
        :func:`next_batch`).

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> from ambppl.analysis.planning import plan
    >>> counts = np.array([[5, 0, 0], [2, 2, 1], [1, 1, 0]])
    >>> counts = ambppl.read_annotations(counts, cant_solve=2)
    >>> table = plan(counts, 4)
    >>> table["extra"].tolist(), table.index.tolist()
    ([3, 1, 0], [0, 2, 1])
    """
    import pandas as pd

    counts = as_counts(counts, "counts")
    values, cant_solve = count_values(counts)  # the label's position, in any category order
    prior = _prior_by_label(prior, counts)  # the bare values below: a labelled prior by label
    model = {"measure": measure, "prior": prior, "cant_solve": cant_solve}
    if check_progress(progress) is not None:
        progress(
            f"allocating {budget} answers over {values.shape[0]} items (objective {objective})"
        )
    # one time guard for the allocation and the sd after it; refusals name the budget
    with _guard("budget", "--budget", budget):
        extra = next_batch(values, budget, objective=objective, threshold=threshold, **model)
        extra = np.asarray(extra, dtype=np.int64)
        table = pd.DataFrame(
            {
                "n_answers": values.sum(axis=1).astype(np.int64),
                "extra": extra,
                "sd_now": expected_posterior_sd(values, 0, **model),
                "sd_after": expected_posterior_sd(values, extra, **model),
            },
            index=pd.Index(counts["item"].values, name="item"),
        )
    return table.sort_values("extra", ascending=False, kind="stable")
