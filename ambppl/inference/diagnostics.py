"""Vectorized rank-normalized R-hat, bulk ESS and tail ESS (ArviZ 1.3's algorithms).

Private helper of :mod:`ambppl.inference.convergence`. ArviZ (arviz-stats 1.3 [2]_,
``arviz_stats/base/diagnostics.py``) computes ``rhat(method="rank")``, ``ess(method="bulk")``
and ``ess(method="tail")`` one scalar at a time in Python (about 1.5 ms per scalar and
diagnostic). The functions here run the same algorithms of Vehtari et al. (2021) [1]_ on all
scalars of an array ``(chain, draw, *rest)`` at once, in blocks (:data:`BLOCK_ELEMENTS`
values in flight, shared by :data:`N_THREADS` threads), and return what ArviZ returns to
rounding (tested to 1e-8 relative against ``arviz.rhat`` / ``arviz.ess`` in
``tests/inference/test_diagnostics.py``):

* split chains: the first and the last ``draw // 2`` draws of every chain (the middle draw
  of an odd number of draws is dropped), stacked as ``2 * chain`` chains;
* rank normalization: average ranks of ties (scipy's ``rankdata(method="average")``) over
  all split draws, normal scores ``norm.ppf((rank - 3/8) / (n - 2 * 3/8 + 1))``;
* R-hat: the larger of the split R-hat of the rank-normalized draws and of the
  rank-normalized draws folded at their median (NaN for fewer than 2 chains);
* ESS: FFT autocovariance (``scipy.fftpack.next_fast_len(2 * n)`` padding), Geyer's initial
  positive sequence truncated as arviz-stats does (pairs of lags while fewer than
  ``n - 3`` lags; the last positive even lag added once), Geyer's initial monotone sequence,
  ``tau >= 1 / log10(N)``; a constant input (range below float resolution) gives ``N``;
* tail ESS: the smaller ESS of the indicators ``x <= quantile(x, p)`` for
  ``p = sorted((prob, 1 - prob))`` (numpy's linear quantile over all draws); ArviZ's default
  ``prob`` is ``rcParams["stats.ci_prob"]`` (0.89, so the 11 % and 89 % quantiles);
* ESS of the mean (``arviz.ess(method="mean")``): the ESS of the split chains of the draws
  themselves (no ranks), and the Monte Carlo standard error of the mean
  (``arviz.mcse(method="mean")``): ``sd(ddof=1) / sqrt(ESS of the mean)``.

Fewer than 4 draws or any NaN gives NaN; a scalar with infinite draws is handed to
arviz-stats' own per-scalar function. Where ArviZ divides 0 by 0 (a constant scalar's R-hat)
the result is the same NaN without the RuntimeWarning.

Measured speed-up (a Dataset with one ``(2, 1000, 1000, 5)`` float64 variable, 5000
scalars; 2-core container shared with another job, so timings vary by ~2x)::

    arviz.rhat(ds) + arviz.ess(ds, "bulk") + arviz.ess(ds, "tail"):  19.1-21.2 s
    diagnose(ds["p"].values), 2 threads:                             1.28-2.68 s
    diagnose, 1 thread (N_THREADS = 1):                              2.5 s
    check_convergence(tree, ["p"]):                                  1.29-2.70 s

i.e. 8-15x (about 8x per core); the largest relative difference from ArviZ was 4e-15.

References
----------
.. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C. (2021),
   "Rank-normalization, folding, and localization: an improved R-hat for assessing
   convergence of MCMC", Bayesian Analysis 16(2), 667-718.
.. [2] arviz-stats 1.3, ``arviz_stats/base/diagnostics.py`` (``_rhat_rank``, ``_ess_bulk``,
   ``_ess_tail``, ``_ess``) and ``arviz_stats/base/core.py`` (``autocov``).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ambppl.internal.checks import as_float_array

__all__ = [
    "BLOCK_ELEMENTS",
    "N_THREADS",
    "diagnose",
    "ess_bulk",
    "ess_mean",
    "ess_tail",
    "mcse_mean",
    "rhat",
]

#: The diagnostics :func:`diagnose` computes.
DIAGNOSTICS = ("r_hat", "ess_bulk", "ess_tail", "ess_mean")

#: The most draws (chain x draw x scalars) in flight at once, over all threads: 2**21 values
#: (16 MB of float64), so that the blocks and their temporaries (sort orders, FFTs) stay
#: under 200 MB (measured peak: 180 MB).
BLOCK_ELEMENTS = 2**21
#: Threads working on blocks at once (at most 8).
N_THREADS = min(os.cpu_count() or 1, 8)

_C = 3 / 8  # Blom's offset of the normal scores


def _as_draws(ary: Any) -> np.ndarray:
    """The draws as a float array (a floating dtype kept, as ArviZ ranks in it), shape
    (chain, draw, ...); a clear error for text, objects or complex numbers."""
    arr = np.asarray(ary)
    if not np.issubdtype(arr.dtype, np.floating):
        arr = as_float_array(arr, "ary")  # TypeError for text, objects, complex numbers
    if arr.ndim < 2:
        raise ValueError(
            f"ary must be draws of shape (chain, draw, ...), but got shape {arr.shape}"
        )
    return arr


def _check_what(what: Any) -> tuple[str, ...]:
    """The diagnostics asked for: one name or a sequence of names from DIAGNOSTICS."""
    if isinstance(what, str):
        what = (what,)  # one name, not its letters
    try:
        names = tuple(what)
    except TypeError:
        raise TypeError(
            f"what must be a diagnostic's name or a sequence of them (from {DIAGNOSTICS}), "
            f"but got {what!r}"
        ) from None
    unknown = [w for w in names if not isinstance(w, str) or w not in DIAGNOSTICS]
    if unknown:
        raise ValueError(
            f"what must name diagnostics among {', '.join(map(repr, DIAGNOSTICS))}, but got "
            f"unknown diagnostics {unknown!r}"
        )
    return names


def rhat(ary: np.ndarray) -> np.ndarray:
    """Rank-normalized split R-hat of every scalar, as ``arviz.rhat(method="rank")``.

    Parameters
    ----------
    ary : array_like, shape (chain, draw, ...)
        The draws.

    Returns
    -------
    numpy.ndarray, shape ``ary.shape[2:]``
        ``max(bulk R-hat, folded R-hat)``; NaN with fewer than 2 chains, 4 draws or any NaN.

    Raises
    ------
    TypeError
        If ``ary`` is not numeric (e.g. text).
    ValueError
        If ``ary`` has fewer than 2 dimensions (chain, draw).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 500, 3))
    >>> x[:, :, 2] += np.arange(4)[:, None]  # chains that disagree
    >>> rhat(x).round(2)
    array([1.  , 1.  , 1.55])
    """
    return diagnose(ary, what=("r_hat",))["r_hat"]


def ess_bulk(ary: np.ndarray) -> np.ndarray:
    """Bulk effective sample size of every scalar, as ``arviz.ess(method="bulk")``.

    Parameters
    ----------
    ary : array_like, shape (chain, draw, ...)
        The draws.

    Returns
    -------
    numpy.ndarray, shape ``ary.shape[2:]``
        The ESS of the rank-normalized split chains; NaN with fewer than 4 draws or any NaN.

    Raises
    ------
    TypeError
        If ``ary`` is not numeric (e.g. text).
    ValueError
        If ``ary`` has fewer than 2 dimensions (chain, draw).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.zeros((2, 1000))
    >>> for t in range(1, 1000):  # AR(1), autocorrelation 0.9
    ...     x[:, t] = 0.9 * x[:, t - 1] + rng.normal(size=2)
    >>> float(ess_bulk(x)) < 300
    True
    """
    return diagnose(ary, what=("ess_bulk",))["ess_bulk"]


def ess_tail(ary: np.ndarray, prob: float | Sequence[float] | None = None) -> np.ndarray:
    """Tail effective sample size of every scalar, as ``arviz.ess(method="tail")``.

    Parameters
    ----------
    ary : array_like, shape (chain, draw, ...)
        The draws.
    prob : float or (float, float), optional
        The quantiles: ``sorted((prob, 1 - prob))`` for a float in (0, 1], the pair as given
        for a pair (``low`` in [0, 1], ``high`` in (0, 1]); default ArviZ's
        ``rcParams["stats.ci_prob"]`` (0.89).

    Returns
    -------
    numpy.ndarray, shape ``ary.shape[2:]``
        The smaller ESS of the two quantile indicators; NaN with fewer than 4 draws or any NaN.

    Raises
    ------
    TypeError
        If ``ary`` is not numeric, or ``prob`` is neither a number nor a pair of numbers.
    ValueError
        If ``ary`` has fewer than 2 dimensions, or ``prob`` is out of range or a sequence of
        other than 2 levels.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ess_tail(rng.normal(size=(4, 1000, 2)), prob=0.9).round()
    array([3924., 4037.])
    """
    return diagnose(ary, what=("ess_tail",), prob=prob)["ess_tail"]


def ess_mean(ary: np.ndarray) -> np.ndarray:
    """Effective sample size of the mean of every scalar, as ``arviz.ess(method="mean")``.

    Parameters
    ----------
    ary : array_like, shape (chain, draw, ...)
        The draws.

    Returns
    -------
    numpy.ndarray, shape ``ary.shape[2:]``
        The ESS of the split chains of the draws (not rank-normalized); NaN with fewer than
        4 draws or any NaN.

    Raises
    ------
    TypeError
        If ``ary`` is not numeric (e.g. text).
    ValueError
        If ``ary`` has fewer than 2 dimensions (chain, draw).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> bool(abs(float(ess_mean(rng.normal(size=(4, 1000)))) - 4000) < 400)
    True
    """
    return diagnose(ary, what=("ess_mean",))["ess_mean"]


def mcse_mean(ary: np.ndarray) -> np.ndarray:
    """Monte Carlo standard error of the mean of every scalar, as ``arviz.mcse(method="mean")``.

    Parameters
    ----------
    ary : array_like, shape (chain, draw, ...)
        The draws.

    Returns
    -------
    numpy.ndarray, shape ``ary.shape[2:]``
        ``sd(ddof=1) / sqrt(ess_mean)`` over all draws of each scalar; NaN with fewer than 4
        draws or any NaN.

    Raises
    ------
    TypeError
        If ``ary`` is not numeric (e.g. text).
    ValueError
        If ``ary`` has fewer than 2 dimensions (chain, draw).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 1000, 2))
    >>> bool(np.all(np.abs(mcse_mean(x) * np.sqrt(4000) - 1) < 0.15))  # iid: sd / sqrt(N)
    True
    """
    ary = _as_draws(ary)
    ess = diagnose(ary, what=("ess_mean",))["ess_mean"]
    if ary.shape[0] * ary.shape[1] < 2:
        return np.full(ary.shape[2:], np.nan)
    flat = ary.reshape(ary.shape[0] * ary.shape[1], -1)
    with np.errstate(invalid="ignore"):
        sd = flat.std(axis=0, ddof=1).reshape(ary.shape[2:])
        return sd / np.sqrt(ess)


def diagnose(
    ary: np.ndarray,
    what: Sequence[str] = ("r_hat", "ess_bulk", "ess_tail"),
    prob: float | Sequence[float] | None = None,
) -> dict[str, np.ndarray]:
    """R-hat, bulk ESS and tail ESS of every scalar in one pass (sharing the ranks).

    Parameters
    ----------
    ary : array_like, shape (chain, draw, ...)
        The draws.
    what : str or sequence of {"r_hat", "ess_bulk", "ess_tail", "ess_mean"}, default the first three
        The diagnostics to compute (``ess_mean``: the ESS of the mean, :func:`ess_mean`); a
        single name is one diagnostic.
    prob : float or (float, float), optional
        The tail ESS's quantiles (see :func:`ess_tail`).

    Returns
    -------
    dict of str to numpy.ndarray
        One array of shape ``ary.shape[2:]`` per name in `what`.

    Raises
    ------
    TypeError
        If ``ary`` is not numeric, ``what`` is not a name or a sequence of names, or
        ``prob`` is neither a number nor a pair of numbers.
    ValueError
        If ``ary`` has fewer than 2 dimensions, ``what`` names an unknown diagnostic, or
        ``prob`` is out of range (see :func:`ess_tail`).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> out = diagnose(rng.normal(size=(2, 1000, 4, 5)))
    >>> {k: v.shape for k, v in out.items()}
    {'r_hat': (4, 5), 'ess_bulk': (4, 5), 'ess_tail': (4, 5)}
    >>> bool((out["r_hat"] < 1.01).all() and (out["ess_bulk"] > 1000).all())
    True
    """
    what = _check_what(what)
    ary = _as_draws(ary)
    probs = _tail_probs(prob) if "ess_tail" in what else ()
    n_chain, n_draw = ary.shape[:2]
    rest = ary.shape[2:]
    n_scalar = int(np.prod(rest, dtype=np.int64))
    out = {k: np.full(n_scalar, np.nan) for k in what}
    if n_draw < 4 or n_chain < 1 or n_scalar == 0:
        return {k: v.reshape(rest) for k, v in out.items()}
    flat = ary.reshape(n_chain, n_draw, n_scalar)
    per_scalar = n_chain * n_draw
    n_threads = max(1, min(N_THREADS, n_scalar * per_scalar // BLOCK_ELEMENTS))
    step = max(1, BLOCK_ELEMENTS // n_threads // per_scalar)

    def run(lo: int) -> None:
        hi = min(lo + step, n_scalar)
        block = np.ascontiguousarray(np.moveaxis(flat[:, :, lo:hi], 2, 0))
        for k, v in _diagnose_block(block, what, probs).items():
            out[k][lo:hi] = v

    starts = range(0, n_scalar, step)
    if n_threads == 1:
        for lo in starts:
            run(lo)
    else:  # numpy's sorts, FFTs and loops release the GIL
        with ThreadPoolExecutor(n_threads, thread_name_prefix="ambppl-diag") as pool:
            for _ in pool.map(run, starts):
                pass
    return {k: v.reshape(rest) for k, v in out.items()}


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _tail_probs(prob: float | Sequence[float] | None) -> tuple[float, float]:
    """The tail ESS's two quantile levels, as ArviZ's ``ess`` and ``_ess_tail`` pick them."""
    if prob is None:
        from arviz_base import rcParams

        prob = rcParams["stats.ci_prob"]
    if isinstance(prob, np.ndarray) and prob.ndim == 0:
        prob = prob.item()
    expected = "a number in (0, 1] or a pair (low, high) of quantile levels in [0, 1]"
    if _is_number(prob):
        if not 0 < prob <= 1:
            raise ValueError(f"prob must be {expected}, but got {prob!r}")
        low, high = sorted((prob, 1 - prob))
        return low, high
    if isinstance(prob, str | bytes) or not isinstance(prob, Sequence | np.ndarray):
        raise TypeError(f"prob must be {expected}, but got {prob!r}")
    levels = list(prob)
    if len(levels) != 2:
        raise ValueError(f"prob must be {expected}, but got {len(levels)} levels: {prob!r}")
    if not all(_is_number(p) for p in levels):
        raise TypeError(f"prob must be {expected}, but got {prob!r}")
    low, high = levels
    if not (0 <= low <= 1 and 0 < high <= 1):
        raise ValueError(f"prob must be {expected}, but got {prob!r}")
    return float(low), float(high)


def _diagnose_block(x: np.ndarray, what: tuple[str, ...], probs) -> dict[str, np.ndarray]:
    """The diagnostics of a block ``x`` of shape (scalar, chain, draw), draw >= 4."""
    n_row, n_chain = x.shape[:2]
    has_nan = np.isnan(x).any(axis=(1, 2))
    finite = np.isfinite(x).all(axis=(1, 2))
    infinite = ~finite & ~has_nan  # infinite draws: left to arviz-stats
    x_in = x
    if not finite.all():
        x = np.where(finite[:, None, None], x, 0)
    out: dict[str, np.ndarray] = {}
    split = _split_chains(x)
    # the draws sorted, row by row (for an even number of draws the split chains hold them all)
    ordered = x.reshape(n_row, -1)
    if "r_hat" in what or "ess_bulk" in what:
        z, z_fold, ordered_split = _z_scales(split, folded="r_hat" in what)
        if x.shape[2] % 2 == 0:
            ordered = ordered_split
        with np.errstate(divide="ignore", invalid="ignore"):
            if "r_hat" in what:
                bulk, tail = _rhat(z), _rhat(z_fold)
                # Python's max(bulk, tail), NaN included
                out["r_hat"] = np.where(tail > bulk, tail, bulk)
                if n_chain < 2:
                    out["r_hat"][:] = np.nan
            if "ess_bulk" in what:
                out["ess_bulk"] = _ess(z)
    if "ess_tail" in what:
        # numpy's quantile of a row depends on its values only (a sorted row: a quick partition)
        low, high = (
            _ess(_split_chains((x <= np.quantile(ordered, p, axis=1)[:, None, None]).astype(float)))
            for p in probs
        )
        out["ess_tail"] = np.where(high < low, high, low)  # Python's min(low, high)
    if "ess_mean" in what:  # the draws themselves, split
        out["ess_mean"] = _ess(split)
    for v in out.values():
        v[has_nan] = np.nan
    if infinite.any():
        from arviz_stats.base import array_stats

        funcs = {
            "r_hat": array_stats._rhat_rank,
            "ess_bulk": array_stats._ess_bulk,
            "ess_tail": lambda a: array_stats._ess_tail(a, list(probs)),
            "ess_mean": array_stats._ess_mean,
        }
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: ArviZ's NaN, quietly
            for i in np.flatnonzero(infinite):
                for k, v in out.items():
                    v[i] = funcs[k](x_in[i])
    return out


def _split_chains(x: np.ndarray) -> np.ndarray:
    """First and last ``draw // 2`` draws of every chain as chains: (row, 2 chain, draw // 2)."""
    half = x.shape[2] // 2
    return np.concatenate((x[:, :, :half], x[:, :, x.shape[2] - half :]), axis=1)


def _sort_rows(flat: np.ndarray, kind: str = "quicksort") -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts every row of ``flat`` (row, value) and the sorted rows."""
    order = np.argsort(flat, axis=1, kind=kind)
    return order, np.take_along_axis(flat, order, axis=1)


def _normal_scores(order: np.ndarray, ordered: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Normal scores of the average ranks (ties share their mean rank), in the rows' order.

    ``order`` and ``ordered`` come from :func:`_sort_rows`; ``dtype`` is the draws' dtype.
    ArviZ's ``_z_scale``: ``norm.ppf((rank - 3/8) / (n - 2 * 3/8 + 1))`` with scipy's
    ``rankdata(method="average")`` over all draws of a scalar.
    """
    from scipy import stats

    n = ordered.shape[1]
    # in the dtype of scipy's ranks (float32 for float32 draws), as ArviZ computes them;
    # twice the average 1-based rank of a run of ties at first..last is first + last + 2
    rank_dtype = stats.rankdata(np.zeros(1, dtype=dtype)).dtype
    ranks = ((np.arange(2 * n - 1, dtype=np.float64) + 2) / 2).astype(rank_dtype)
    scores = stats.norm.ppf((ranks - _C) / (n - 2 * _C + 1))
    new = np.empty(ordered.shape, dtype=bool)  # first of a run of ties
    new[:, 0] = True
    np.not_equal(ordered[:, 1:], ordered[:, :-1], out=new[:, 1:])
    z = np.empty(ordered.shape)
    np.put_along_axis(z, order, scores[::2], axis=1)  # no ties: rank i + 1 at position i
    tied = np.flatnonzero(~new.all(axis=1))
    if tied.size:  # runs of ties in these rows: every member gets the run's mean rank
        starts = new[tied].ravel()
        first = np.flatnonzero(starts)
        count = np.diff(first, append=starts.size)
        first, count = first[count > 1], count[count > 1]
        offset = np.cumsum(count) - count
        members = np.repeat(first - offset, count) + np.arange(count.sum())
        rows, pos = tied[members // n], members % n
        z[rows, order[rows, pos]] = np.repeat(scores[2 * (first % n) + count - 1], count)
    return z


def _z_scales(split: np.ndarray, folded: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Normal scores of split chains (row, chain, draw), of the chains folded at the median.

    Returns the normal scores, those of the folded draws (None unless `folded`) and the draws
    of every row sorted (row, chain * draw).

    The folded draws ``|x - median|`` fall, in the order of the sorted draws, then rise, so a
    stable sort (merging runs) orders them in linear time.
    """
    n_row = split.shape[0]
    flat = split.reshape(n_row, -1)
    order, ordered = _sort_rows(flat)
    z = _normal_scores(order, ordered, split.dtype).reshape(split.shape)
    if not folded:
        return z, None, ordered
    n = flat.shape[1]
    median = np.mean(ordered[:, [(n - 1) // 2, n // 2]], axis=1)  # numpy's median, n even
    fold = np.abs(ordered - median[:, None])
    order_fold, ordered_fold = _sort_rows(fold, kind="stable")
    order_fold = np.take_along_axis(order, order_fold, axis=1)
    z_fold = _normal_scores(order_fold, ordered_fold, split.dtype)
    return z, z_fold.reshape(split.shape), ordered


def _rhat(z: np.ndarray) -> np.ndarray:
    """Split R-hat of rows of chains, (row, chain, draw) -> (row,)."""
    n = z.shape[2]
    chain_mean = z.mean(axis=2)
    chain_var = z.var(axis=2, ddof=1)
    between = n * chain_mean.var(axis=1, ddof=1)
    within = chain_var.mean(axis=1)
    return np.sqrt((between / within + n - 1) / n)


def _autocov(y: np.ndarray) -> np.ndarray:
    """Autocovariance at every lag, averaged over chains: (row, chain, draw) -> (row, draw).

    arviz-stats' FFT estimate (``core.autocov``), averaged over chains as its ``_ess`` does.
    """
    from scipy.fftpack import next_fast_len

    n = y.shape[-1]
    m = next_fast_len(2 * n)
    f = np.fft.rfft(y - y.mean(axis=-1, keepdims=True), n=m, axis=-1)
    power = np.square(f.real)
    power += np.square(f.imag)
    # the mean over chains of the inverse transforms is the inverse transform of the mean
    cov = np.fft.irfft(power.mean(axis=-2), n=m, axis=-1)[..., :n]
    cov /= n
    return cov


def _ess(y: np.ndarray) -> np.ndarray:
    """ESS of rows of (split) chains, (row, chain, draw) -> (row,), as arviz-stats' ``_ess``.

    Geyer's initial positive sequence runs over pairs of lags ``Q_j = rho[2j] + rho[2j+1]``
    (``rho[0] = 1``) for ``j = 1 .. J``, ``J`` the first ``j`` whose predecessor ``Q_{j-1}``
    is not positive or ``L = (draw - 3) // 2``; the monotone sequence replaces the kept pair
    sums by their running minimum; the even lag ``rho[2J]`` is added once where it was kept
    (``Q_J >= 0``) or is positive.
    """
    n_row, n_chain, n_draw = y.shape
    size = n_chain * n_draw
    y = y.astype(np.float64, copy=False)
    const = (y.max(axis=(1, 2)) - y.min(axis=(1, 2))) < np.finfo(float).resolution
    acov = _autocov(y)
    mean_var = acov[:, 0] * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus += y.mean(axis=2).var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var[:, None] - acov) / var_plus[:, None]
    rho[:, 0] = 1.0
    n_pairs = max(0, (n_draw - 3) // 2)  # L: the pairs j = 1 .. L the loop may reach
    pairs = rho[:, 0 : 2 * n_pairs + 2 : 2] + rho[:, 1 : 2 * n_pairs + 2 : 2]  # Q_0 .. Q_L
    stop = ~(pairs > 0)
    stop[:, -1] = True
    n_kept = np.minimum(np.argmax(stop, axis=1), n_pairs)  # J
    cum = np.minimum.accumulate(np.where(stop, -np.inf, pairs), axis=1)
    kept = np.arange(n_pairs + 1) < n_kept[:, None]
    total = np.where(kept, cum, 0.0).sum(axis=1)
    rows = np.arange(n_row)
    even = rho[rows, 2 * n_kept]
    last = np.where((even > 0) | (pairs[rows, n_kept] >= 0), even, 0.0)
    tau = -1.0 + 2.0 * total + last
    floor = 1 / np.log10(size)
    tau = np.where(floor > tau, floor, tau)
    ess = size / tau
    ess[np.isnan(rho[:, 1])] = np.nan
    ess[const] = size
    return ess
