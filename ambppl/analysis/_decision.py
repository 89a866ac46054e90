r"""Preposterior value of more answers for the threshold decision "is amb > threshold?".

For an item with counts ``n`` and a Dirichlet prior the posterior is ``q ~ Dirichlet(a)``,
``a = prior + n``. The decision "is the measure above ``t``?" is taken by the posterior
probability :math:`p(a) = P(\mathrm{amb}(q) > t \mid a)`: answering "yes" iff
:math:`p > 1/2` is right with probability :math:`\max(p, 1 - p)`. After ``m`` more answers
:math:`new \sim DM(m, a)` (Dirichlet-multinomial predictive) the decision is taken with
:math:`p(a + new)`, and the expected probability of a correct decision is

.. math:: g(m) = E_{new}\big[\max\{p(a + new), 1 - p(a + new)\}\big],

non-decreasing in ``m`` (the decision after more answers can always ignore them).
:func:`expected_correct_decision` returns :math:`g(m)`, :func:`decision_gain`
:math:`g(m) - g(0)`.

Routes (``method``):

* ``"exact"`` -- two proper categories, with a can't-solve category (``K = 3``) or without
  (``K = 2``, ``cant_solve=None``). The :math:`\binom{m + K - 1}{K - 1}` new count vectors are
  enumerated with their exact DM probabilities (log-space ``gammaln``). With can't-solve
  :math:`p` is :func:`ambppl.ambiguity_posterior` ``(a + new).sf(t)`` (tanh-sinh quadrature,
  absolute error below about 1e-12). Without it, :math:`q_{cs} = 0`, :math:`\pi = q_1 \sim
  \mathrm{Beta}(a_1, a_2)`, :math:`D = |2\pi - 1|` and each measure is a decreasing function
  of :math:`D` (amb :math:`(1 - D^2)/2`, modified :math:`1 - D^2`, old :math:`1 - D`), so
  :math:`p = I_{(1+d)/2}(a_1, a_2) - I_{(1-d)/2}(a_1, a_2)` with :math:`d = \sqrt{1 - 2t}`,
  :math:`\sqrt{1 - t}` or :math:`1 - t` (regularized incomplete beta; closed form).
* ``"beta"`` -- any number of categories, measures "amb" and "modified": :math:`p(a')` is
  the upper tail of the Beta distribution with the exact mean and variance of the measure
  under ``Dirichlet(a')`` (:func:`ambppl.dirichlet_mean`, :func:`ambppl.dirichlet_var`;
  both measures lie in [0, 1]). The expectation over the new answers is an exact
  enumeration while there are at most :data:`ENUMERATION_LIMIT` new count vectors;
  beyond, the posterior mean after ``m`` answers is taken as normal with mean
  :math:`E(\mathrm{amb} \mid a)` and variance :math:`\tau^2 = \mathrm{Var}(\mathrm{amb}\mid a)
  - E_{new}\mathrm{Var}(\mathrm{amb} \mid a + new)` (law of total variance; the second
  term from :func:`ambppl.analysis.planning.expected_posterior_var`), the posterior variance is
  set to its expectation, and the normal is integrated with 64 Gauss-Hermite nodes.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import special as sc

from ambppl.analysis.posterior_sd import _prior_by_label, expected_posterior_var
from ambppl.internal.checks import (
    _describe,
    as_float_array,
    categories_last,
    check_cant_solve,
    check_counts,
    check_item_counts,
    check_n_proper,
    check_option,
    check_prior,
    item_aligned,
    resolve_cant_solve,
)
from ambppl.internal.limits import check_memory, option
from ambppl.internal.work import WORK as _WORK
from ambppl.internal.work import guard as _guard
from ambppl.maths.exact import ambiguity_posterior
from ambppl.maths.measures import MEASURES, min_proper
from ambppl.maths.moments import dirichlet_mean, dirichlet_var

__all__ = ["ENUMERATION_LIMIT", "decision_gain", "expected_correct_decision"]

#: Most new count vectors per item that are enumerated (``method=None`` and "beta").
ENUMERATION_LIMIT = 20_000
#: Gauss-Hermite nodes of the normal approximation ("beta" beyond the enumeration limit).
N_HERMITE = 64
#: Measures per route.
_EXACT_MEASURES = ("amb", "modified", "old")
_BETA_MEASURES = ("amb", "modified")
_METHODS = ("exact", "beta")
#: Bound on the measured worst absolute error of g (and of the gain) for method="beta"
#: against exact enumeration (measured 0.077 and 0.078, see
#: :func:`expected_correct_decision` Notes); asserted in ``tests/analysis/test_decision.py``.
BETA_WORST_ERROR = 0.08
#: Bound on the measured worst error of the normal approximation of the expectation
#: against enumeration (measured 0.048).
NORMAL_WORST_ERROR = 0.05
#: Bound on the measured largest fall of the "beta" g from one m to the next (0.0062).
BETA_MONOTONE_SLACK = 0.01


# --------------------------------------------------------------------------- checks
def _check_extra(extra: Any, n_items: int) -> np.ndarray:
    what = (
        "extra must be a whole number >= 0 (the number m of answers still to come) or one "
        f"per item (shape ({n_items},))"
    )
    if isinstance(extra, bool | np.bool_) or np.asarray(extra).dtype == np.bool_:
        raise TypeError(f"{what}, but got {_describe(extra)}")
    arr = as_float_array(extra, "extra")
    if arr.ndim != 0 and arr.shape != (n_items,):
        raise ValueError(f"{what}, but got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}, but got NaN or inf")
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        bad = arr[(arr < 0) | (arr != np.round(arr))]
        raise ValueError(f"{what}, but got {_describe(bad[:5])}")
    if np.any(arr > 1e7):
        raise ValueError(f"{what} up to 1e7, but got {_describe(arr[arr > 1e7][:5])}")
    return np.broadcast_to(arr, (n_items,)).astype(np.int64)


def _check_threshold(threshold: Any) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(
            f"threshold must be a number strictly between 0 and 1 (the ambiguity level the "
            f"decision compares with), but got {threshold!r}"
        )
    if not 0.0 < float(threshold) < 1.0:
        raise ValueError(
            "threshold must be strictly between 0 and 1 (outside, the decision is the same "
            f"for every posterior and more answers cannot change it), but got {threshold!r}"
        )
    return float(threshold)


def _route(method: Any, measure: str, k: int, idx: int | None) -> str:
    """Return "exact" or "beta" (``method=None``: exact where it is possible)."""
    if method is not None:
        check_option(method, _METHODS, "method")
    two_class = (k == 2 and idx is None) or (k == 3 and idx is not None)
    if method == "exact" and not two_class:
        raise ValueError(
            "method='exact' needs two proper categories: K = 3 with a can't-solve category "
            f"or K = 2 with cant_solve=None, but got K = {k} with cant_solve={idx!r}; use "
            "method='beta' or None"
        )
    chosen = method or ("exact" if two_class else "beta")
    allowed = _EXACT_MEASURES if chosen == "exact" else _BETA_MEASURES
    if measure not in allowed:
        raise ValueError(
            f"measure={measure!r} is not available for method={chosen!r} (available: "
            f"{', '.join(repr(m) for m in allowed)})"
            + ("; 'old' needs two proper categories and method='exact'" if measure == "old" else "")
        )
    return chosen


# --------------------------------------------------------------------------- enumeration
@lru_cache(maxsize=64)
def _compositions(m: int, k: int) -> np.ndarray:
    """All vectors of ``k`` non-negative integers summing to ``m``, shape (C(m+k-1, k-1), k)."""
    if k == 1:
        return np.array([[m]], dtype=np.int64)
    blocks = []
    for first in range(m, -1, -1):
        rest = _compositions(m - first, k - 1)
        blocks.append(np.column_stack([np.full(rest.shape[0], first, np.int64), rest]))
    out = np.concatenate(blocks)
    out.setflags(write=False)
    return out


def _n_vectors(m: int, k: int) -> int:
    return math.comb(m + k - 1, k - 1)


def _dm_logpmf(new: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Log Dirichlet-multinomial pmf of the rows of ``new`` (total ``m``) under ``alpha``."""
    m = new.sum(axis=1)
    a0 = alpha.sum()
    return (
        sc.gammaln(m + 1.0)
        - sc.gammaln(new + 1.0).sum(axis=1)
        + sc.gammaln(a0)
        - sc.gammaln(a0 + m)
        + (sc.gammaln(alpha + new) - sc.gammaln(alpha)).sum(axis=1)
    )


# --------------------------------------------------------------------------- p(a')
def _p_exact(alpha: np.ndarray, idx: int | None, measure: str, t: float) -> np.ndarray:
    """``P(measure > t | Dirichlet(alpha))`` for rows of two proper classes (exact)."""

    uniq, inv = np.unique(alpha, axis=0, return_inverse=True)
    if idx is not None:
        p = np.asarray(ambiguity_posterior(uniq, measure, cant_solve=idx).sf(t), dtype=float)
    else:
        d = {"amb": math.sqrt(max(1.0 - 2.0 * t, 0.0)), "modified": math.sqrt(1.0 - t)}.get(
            measure, 1.0 - t
        )
        a1, a2 = uniq[:, 0], uniq[:, 1]
        lo, hi = 0.5 * (1.0 - d), 0.5 * (1.0 + d)
        # P(lo < pi < hi): the smaller tail sums avoid cancellation near p = 0 and p = 1
        p = 1.0 - sc.betainc(a1, a2, lo) - sc.betaincc(a1, a2, hi)
        p = np.clip(p, 0.0, 1.0)
    return p.reshape(-1)[inv.reshape(-1)]


def _upper(measure: str, idx: int | None, k: int) -> float:
    """Largest value of the measure: ``1 - 1/C`` for "amb" without can't-solve, else 1."""
    return 1.0 - 1.0 / k if measure == "amb" and idx is None else 1.0


def _beta_sf(mean: np.ndarray, var: np.ndarray, t: float, upper: float = 1.0) -> np.ndarray:
    """Upper tail at ``t`` of the Beta law on [0, upper] with the given mean and variance."""
    if t >= upper:
        return np.zeros(np.broadcast(mean, var).shape)
    mean, var, t = mean / upper, var / upper**2, t / upper
    mean = np.clip(mean, 1e-15, 1.0 - 1e-15)
    var = np.clip(var, 1e-300, mean * (1.0 - mean) * (1.0 - 1e-12))
    nu = mean * (1.0 - mean) / var - 1.0
    return sc.betaincc(mean * nu, (1.0 - mean) * nu, t)


def _p_beta(alpha: np.ndarray, idx: int | None, measure: str, t: float) -> np.ndarray:
    """Moment-matched Beta approximation of ``P(measure > t | Dirichlet(alpha))``."""

    uniq, inv = np.unique(alpha, axis=0, return_inverse=True)
    mean = np.atleast_1d(dirichlet_mean(uniq, measure, cant_solve=idx))
    var = np.atleast_1d(dirichlet_var(uniq, measure, cant_solve=idx))
    return _beta_sf(mean, var, t, _upper(measure, idx, alpha.shape[1]))[inv.reshape(-1)]


def _g_enumerated(
    alpha: np.ndarray, m: np.ndarray, idx: int | None, measure: str, t: float, route: str
) -> np.ndarray:
    """g by exact enumeration of the new counts, for all rows of ``alpha`` (items, K)."""
    k = alpha.shape[1]
    rows, logw, owner = [], [], []
    for i in range(alpha.shape[0]):
        new = _compositions(int(m[i]), k)
        rows.append(alpha[i] + new)
        logw.append(_dm_logpmf(new, alpha[i]))
        owner.append(np.full(new.shape[0], i))
    if not rows:
        return np.zeros(0)
    post = np.concatenate(rows)
    w = np.exp(np.concatenate(logw))
    own = np.concatenate(owner)
    p = (_p_exact if route == "exact" else _p_beta)(post, idx, measure, t)
    right = np.maximum(p, 1.0 - p)
    # normalize by the summed weights (they sum to 1 up to rounding)
    return np.bincount(own, w * right, alpha.shape[0]) / np.bincount(own, w, alpha.shape[0])


def _g_normal(
    alpha: np.ndarray, m: np.ndarray, idx: int | None, measure: str, t: float
) -> np.ndarray:
    """g from the normal approximation of the predictive of the posterior mean."""

    mean = np.atleast_1d(dirichlet_mean(alpha, measure, cant_solve=idx))
    var0 = np.atleast_1d(dirichlet_var(alpha, measure, cant_solve=idx))
    # expected_posterior_var sees the concentrations only through prior + counts
    zeros = np.zeros(alpha.shape[1], dtype=np.int64)
    var_m = np.array(
        [
            expected_posterior_var(zeros, int(mi), measure=measure, prior=row, cant_solve=idx)
            for row, mi in zip(alpha, m, strict=True)
        ]
    )
    tau = np.sqrt(np.maximum(var0 - var_m, 0.0))
    z, wz = np.polynomial.hermite_e.hermegauss(N_HERMITE)
    wz = wz / wz.sum()
    mu = mean[:, None] + tau[:, None] * z[None, :]
    upper = _upper(measure, idx, alpha.shape[1])
    inside = (mu > 0.0) & (mu < upper)
    p = np.where(
        inside,
        _beta_sf(mu, np.broadcast_to(var_m[:, None], mu.shape), t, upper),
        (mu >= upper).astype(float),
    )
    return np.sum(wz * np.maximum(p, 1.0 - p), axis=1)


# --------------------------------------------------------------------------- public API
def expected_correct_decision(
    counts: Any,
    extra: Any,
    *,
    threshold: float = 0.4,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    method: str | None = None,
) -> Any:
    r"""Expected probability that "is amb > threshold?" is decided right after more answers.

    Parameters
    ----------
    counts : array_like of int, shape (items, K) or (K,)
        Answers so far per category (non-negative whole numbers), ``K >= 2``; a DataArray
        with a ``"category"`` dimension is read by that name, in either dimension order.
    extra : int or array_like of int, shape (items,)
        The number ``m >= 0`` of answers still to come, for all items or one per item: by
        position, or labelled by item (a pandas Series indexed by the items, a DataArray
        with an item coordinate) and read by its labels against labelled counts.
    threshold : float, default 0.4
        The level ``t`` in (0, 1) the measure is compared with.
    measure : {"amb", "modified", "old"}, default "amb"
        Which measure; "old" only with ``method="exact"`` (two proper categories).
    prior : float, array_like, pandas.Series or xarray.DataArray, default 1.0
        Dirichlet prior: one concentration for all categories or one per category; a bare
        array is read by position (in the order of the categories of ``counts``), a labelled
        one (a Series indexed by the category labels, a DataArray with a ``category``
        coordinate) by its labels, in any order, against the ``category`` coordinate of
        ``counts``.
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    method : {None, "exact", "beta"}, default None
        None: "exact" for two proper categories (``K = 3`` with can't-solve, ``K = 2``
        without) while the number of new count vectors ``C(m + K - 1, K - 1)`` is at most
        :data:`ENUMERATION_LIMIT` (``m <= 198`` with can't-solve), "beta" otherwise.
        "exact" enumerates beyond that limit too, as far as the time and memory guards
        allow (see Raises; budgeted at 0.2 ms per new count vector with can't-solve, so
        ``extra=2000`` for one item, 2e6 vectors, is refused as too slow, and ``extra=10**5``,
        5e9 vectors, as too large for memory). "beta": the approximations of the Notes.

    Returns
    -------
    numpy.ndarray or numpy.float64
        :math:`g(m) = E_{new}[\max(p, 1 - p)]` in [0.5, 1] with
        :math:`p = P(\mathrm{measure} > t \mid a + new)`, :math:`a` = ``prior + counts``,
        :math:`new \sim DM(m, a)`; shape ``(items,)`` (a scalar for counts of shape
        ``(K,)``). ``extra=0`` gives :math:`\max(p, 1 - p)` of the current posterior.

    Raises
    ------
    ValueError
        If ``counts``, ``extra``, ``prior``, ``threshold``, ``measure``, ``method`` or
        ``cant_solve`` has a wrong value (or contradicts ``counts.attrs["cant_solve"]``; a
        labelled ``prior`` whose labels are not the categories of ``counts``, or that
        ``counts`` without category labels cannot be read against), or
        ``method="exact"`` is asked for other than two proper categories. Before any work,
        naming ``extra``: if the new count vectors to enumerate would need more memory than
        allowed (80% of the memory available, :func:`ambppl.internal.limits.check_memory`)
        or are estimated to take
        longer than about a minute (:data:`ambppl.internal.limits.TIME_GUARD_S`, at 200 us
        per vector on the exact route with a can't-solve category and 30 us otherwise).
    TypeError
        If an argument is not numeric (``extra`` boolean, ``cant_solve`` not an integer).

    Notes
    -----
    The module docstring gives the formulas of both routes. *Exact* is exact up to the
    quadrature error of :func:`ambppl.ambiguity_posterior` (about 1e-12; closed form
    without can't-solve); ``tests/analysis/test_decision.py`` checks it against a brute force over
    answer sequences (Polya urn) to 1e-12.

    *Beta approximation.* A Beta law on [0, u] with the exact posterior mean and variance of
    the measure replaces its posterior (``u = 1 - 1/C``, the largest value, for "amb"
    without can't-solve; ``u = 1`` otherwise). It is poor where the posterior is far from
    a Beta shape: few answers, a small can't-solve concentration (the exact density of
    "amb" then has a spike or a kink near 1/2), and ``t`` near such features. Measured
    against exact enumeration (``m`` in 0..6, ``prior`` in {0.5, 1, 2}; script in
    ``tests/analysis/test_decision.py``):

    * two proper categories plus can't-solve, counts in {0, 2, 4, 6}^3, ``t`` in
      {0.2, 0.4, 0.5, 0.6}: worst absolute error of :math:`g` 0.077 (counts (2, 4, 0),
      prior 0.5, t = 0.4, m = 0: exact 0.715, Beta 0.639), of the gain
      :math:`g(m) - g(0)` 0.078 (counts (4, 2, 0), prior 0.5, t = 0.4, m = 6);
    * two categories without can't-solve, counts in 0..6, ``t`` in {0.2, 0.3, 0.4, 0.45}:
      worst error of :math:`g` 0.017.

    *Normal approximation of the expectation* (beyond :data:`ENUMERATION_LIMIT` new count
    vectors): it ignores the discreteness and skewness of the predictive of the posterior
    mean and the spread of the posterior variance across outcomes. Against enumeration
    (both with the Beta :math:`p`; K = 4 without can't-solve, counts in {0, 4, 8}^4,
    ``prior`` in {0.5, 1, 2}, ``t`` in {0.3, 0.5, 0.6}, ``m`` in {5, 10, 20, 40}) its worst
    absolute error of :math:`g` was 0.048 (all-zero counts, prior 0.5, t = 0.6, m = 5),
    typically 0.01-0.03 and decreasing only slowly with ``m``. It is used only where
    enumeration is too large, i.e. for large ``m``.

    The Beta :math:`p` is not a posterior probability, so the martingale argument behind
    the monotonicity of :math:`g` does not apply: on the same grids (K = 3 with and K = 3,
    4 without can't-solve, ``m`` in 0..15) the "beta" :math:`g` fell by up to 0.0062
    from one ``m`` to the next (:data:`BETA_MONOTONE_SLACK` = 0.01 is asserted), and
    :func:`decision_gain` can be slightly negative there.

    So "beta" is a rough guide (errors of a few hundredths, up to about 0.08); use it to
    rank items, not to quote :math:`g` to two decimals.

    Examples
    --------
    >>> from ambppl.analysis._decision import expected_correct_decision
    >>> expected_correct_decision([[3, 1, 0], [5, 5, 0]], [0, 10]).round(4).tolist()
    [0.7444, 0.9451]
    >>> float(expected_correct_decision([3, 2, 0], 0)) <= float(
    ...     expected_correct_decision([3, 2, 0], 5))
    True
    """
    measure = check_option(measure, MEASURES, "measure")
    t = _check_threshold(threshold)
    counts = categories_last(counts)  # labelled counts: read by the 'category' name
    counts_arr, single = check_item_counts(counts)
    k = counts_arr.shape[-1]
    idx = check_cant_solve(resolve_cant_solve(counts, cant_solve, name="counts"), k)
    check_n_proper(
        k - (idx is not None), max(2, min_proper(measure)), f"measure={measure!r}", measure
    )
    route = _route(method, measure, k, idx)
    prior = _prior_by_label(prior, counts)  # a labelled prior by its category labels
    prior_vec = check_prior(prior, k, "prior")
    alpha = counts_arr.reshape(-1, k) + prior_vec
    m = _check_extra(item_aligned(extra, counts), alpha.shape[0])  # labelled: by item
    out = np.empty(alpha.shape[0])
    sizes = np.array([min(_n_vectors(int(mi), k), 10**300) for mi in m], dtype=np.float64)
    if method is None and route == "exact":
        big = sizes > ENUMERATION_LIMIT
        route_rows = {"exact": ~big, "beta": big}
    else:
        route_rows = {route: np.ones(alpha.shape[0], bool)}

    with _guard("extra", "--extra", extra if np.ndim(extra) == 0 else None):
        _check_enumeration(route_rows, sizes, k, idx, method)
        return _g_by_route(route_rows, sizes, alpha, m, idx, measure, t, out, single)


#: Seconds per enumerated new count vector: the exact route with a can't-solve category (a
#: quadrature per distinct posterior), and the others (closed forms). About twice the
#: costliest rate measured on one core of the development machine with
#: ``benchmarks/bench_decision_rate.py`` (2026-12-07: 24-28 us and 6-7 us per vector for one
#: item given many answers, every posterior distinct; 6-7 us and 4 us for 60 items of few
#: answers), so that the guard's estimate is an upper bound with room for a slower machine.
#: The rates first set here (200 us and 30 us) were 7 to 30 times the measured ones: the
#: guard refused allocations that took a few seconds.
_SECONDS_PER_VECTOR = {"exact_cs": 6e-5, "other": 1.5e-5}

#: The routes of :data:`_SECONDS_PER_VECTOR` in words, for messages.
_ROUTE_WORDS = {
    "exact_cs": "on the exact route with a can't-solve category",
    "exact": "on the exact route without a can't-solve category",
    "beta": "on the Beta route",
}

#: Bytes held per enumerated new count vector and category (the vectors, the posteriors, their
#: weights and probabilities, with numpy's temporaries).
_BYTES_PER_VECTOR_ENTRY = 64


def _check_enumeration(
    route_rows: dict, sizes: np.ndarray, k: int, idx: int | None, method: Any
) -> None:
    """Refuse up front an enumeration beyond the memory or time guard."""

    seconds, vectors, rates = 0.0, 0.0, []
    for name, sel in route_rows.items():
        enum = sel if name == "exact" else sel & (sizes <= ENUMERATION_LIMIT)
        count = float(sizes[enum].sum())
        vectors += count
        rate = "exact_cs" if name == "exact" and idx is not None else "other"
        seconds += count * _SECONDS_PER_VECTOR[rate]
        if count:
            words = _ROUTE_WORDS["exact_cs" if rate == "exact_cs" else name]
            rates.append(f"about {1e6 * _SECONDS_PER_VECTOR[rate]:.0f} us each {words}")
    if vectors == 0:
        return
    work = _WORK.get()
    name = option(work.python, work.command_line)
    hint = (
        ", or method=None (the Beta approximation beyond ENUMERATION_LIMIT new count vectors "
        "per item)"
        if method == "exact" and work.python == "extra"
        else ""
    )
    what = (
        f"the expected probability of a right decision enumerates C(m + K - 1, K - 1) new "
        f"count vectors per item and m ({vectors:.3g} in all here, {' and '.join(rates)})"
    )
    check_memory(
        vectors * k * _BYTES_PER_VECTOR_ENTRY,
        what[0].upper() + what[1:],
        f"pass a smaller {name}{hint}",
    )
    work.charge_seconds(seconds, what, hint)


def _g_by_route(
    route_rows: dict,
    sizes: np.ndarray,
    alpha: np.ndarray,
    m: np.ndarray,
    idx: int | None,
    measure: str,
    t: float,
    out: np.ndarray,
    single: bool,
) -> Any:
    """g of every row by its route (see :func:`expected_correct_decision`)."""
    for name, sel in route_rows.items():
        if not sel.any():
            continue
        enum = sel if name == "exact" else sel & (sizes <= ENUMERATION_LIMIT)
        if enum.any():
            out[enum] = _g_enumerated(alpha[enum], m[enum], idx, measure, t, name)
        normal = sel & ~enum
        if normal.any():
            if measure not in _BETA_MEASURES:
                raise ValueError(
                    f"measure={measure!r} with {int(m[normal].max())} more answers needs the "
                    "beta route, which supports 'amb' and 'modified' only; use "
                    "method='exact' (slow) or fewer answers"
                )
            out[normal] = _g_normal(alpha[normal], m[normal], idx, measure, t)
    return out[0] if single else out


def decision_gain(
    counts: Any,
    extra: Any,
    *,
    threshold: float = 0.4,
    measure: str = "amb",
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    method: str | None = None,
) -> Any:
    r"""Gain in the expected probability of a correct threshold decision, ``g(m) - g(0)``.

    Parameters and raises as :func:`expected_correct_decision` (a labelled ``prior`` is
    read by its category labels); ``g(0)`` is taken by the same route as ``g(m)`` (so
    ``extra=0`` gives exactly 0).

    Returns
    -------
    numpy.ndarray or numpy.float64
        :math:`g(m) - g(0)`, shape ``(items,)`` or a scalar: non-negative (up to about
        1e-12) on the exact route; on the "beta" route it can be slightly negative (see
        the Notes of :func:`expected_correct_decision`).

    Examples
    --------
    >>> from ambppl.analysis._decision import decision_gain
    >>> decision_gain([[3, 1, 0], [40, 2, 1]], 10).round(4).tolist()
    [0.0747, 0.0]
    """
    kw = {
        "threshold": threshold,
        "measure": measure,
        "prior": prior,
        "cant_solve": cant_solve,
    }
    counts = categories_last(counts)  # labelled counts: read by the 'category' name
    g_m = expected_correct_decision(counts, extra, method=method, **kw)
    # g(0) below is asked of the bare rows: pass the position the labelled counts gave, and
    # a labelled prior in their category order (as g(m) read it)
    kw["cant_solve"] = resolve_cant_solve(counts, cant_solve, name="counts")
    kw["prior"] = _prior_by_label(prior, counts)
    counts_arr = check_counts(counts, "counts")
    n_items = 1 if counts_arr.ndim == 1 else counts_arr.shape[0]
    m = _check_extra(item_aligned(extra, counts), n_items)  # labelled: by item
    if n_items == 0:  # no items: no gains (as g of no items is empty)
        return np.zeros(0)
    if method is None:
        # the route of g(0) must be the one g(m) used (exact rows may switch to beta at
        # large m): ask each row for g(0) by the route of its own m
        k = counts_arr.shape[-1]
        idx = check_cant_solve(kw["cant_solve"], k)
        two = (k == 2 and idx is None) or (k == 3 and idx is not None)
        big = np.array([_n_vectors(int(mi), k) > ENUMERATION_LIMIT for mi in m])
        flat = counts_arr.reshape(-1, k)
        g0 = np.empty(n_items)
        for name, sel in (("exact", ~big), ("beta", big)) if two else (("beta", None),):
            rows = np.ones(n_items, bool) if sel is None else sel
            if rows.any():
                g0[rows] = expected_correct_decision(flat[rows], 0, method=name, **kw)
    else:
        g0 = np.atleast_1d(expected_correct_decision(counts, 0, method=method, **kw))
    gain = np.atleast_1d(g_m) - g0
    return gain[0] if counts_arr.ndim == 1 else gain
