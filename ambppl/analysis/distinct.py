"""Per-item tables from distinct count vectors: the conjugate machinery of ``score``.

Under a model whose every item has the posterior ``Dirichlet(a + counts_i)`` with one fixed
concentration ``a`` (``dirichlet_categorical``; ``hierarchical_dirichlet`` with
``method="empirical_bayes"``), an item's posterior depends on its data only through its count
vector. A count vector of ``n`` answers over ``K`` categories takes at most
``C(n + K - 1, K - 1)`` values (10,626 for n = 20, K = 5), however many items there are.
:func:`distinct_table` therefore finds the distinct count vectors, summarizes each once
(:func:`summarize_distinct`: closed forms for mean and sd, exact draws for the HDI and
P(measure > t), as many as the requested Monte Carlo error needs, or a fixed number) and
broadcasts the rows back to the items. No draw is stored per item. :func:`ambppl.score` and
:func:`ambppl.summarize_counts` are built on it; the per-item estimators and closed forms
(:func:`_estimators`, :func:`_closed_forms`) are shared with :func:`ambppl.summarize`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.contract import as_counts, count_values
from ambppl.inference.catalog import get_model, model_parameters
from ambppl.inference.fitting import choose_method, usable_cpus
from ambppl.inference.modeling import category_parameters
from ambppl.internal import limits
from ambppl.internal.checks import check_random_seed
from ambppl.internal.limits import as_count, check_memory, check_time, duration, option
from ambppl.internal.messages import say
from ambppl.maths.approx import accuracy_map, approximate_distribution
from ambppl.maths.draws import dirichlet_draws
from ambppl.maths.estimators import estimate
from ambppl.maths.measures import measure_numpy
from ambppl.maths.moments import dirichlet_mean, dirichlet_var

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "CONJUGATE_METHODS",
    "conjugate_setup",
    "distinct_columns",
    "distinct_table",
    "draws_needed",
    "p_above_mcse",
    "seed_sequence",
    "summarize_distinct",
]


def _estimators(values: np.ndarray, measure: str, cs: int | None) -> tuple[Any, Any]:
    """Plug-in and less-biased estimates per item.

    NaN for items without answers (no estimate exists) and for a measure an estimator does
    not cover (``ambppl.estimate`` raises NotImplementedError, e.g. less_biased for entropy).
    """

    answered = values.sum(axis=1) > 0
    out = []
    for method in ("plugin", "less_biased"):
        column = np.full(values.shape[0], np.nan)
        if np.any(answered):
            try:
                column[answered] = estimate(
                    values[answered], method=method, measure=measure, cant_solve=cs
                )
            except NotImplementedError:
                pass
        out.append(column)
    return out[0], out[1]


def _closed_forms(
    values: np.ndarray, attrs: dict[str, Any], measure: str, cs: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd in closed form (NaN where not available).

    They exist where the posterior of every ``q_i`` is ``Dirichlet(prior + counts_i)`` with
    one fixed ``prior``: ``ambppl.fit`` records that prior in ``attrs["prior"]`` (fixed-prior
    models, and empirical Bayes given its estimate), a fixed-prior model in
    ``pm.Data("prior")``. Learned priors (a posterior over the hyperparameters) have none.
    """
    nan = np.full(values.shape[0], np.nan)
    prior = attrs.get("prior")
    if prior is None:
        return nan, nan

    alpha = values + np.asarray(prior, dtype=np.float64)
    out = []
    for func in (dirichlet_mean, dirichlet_var):
        try:
            out.append(np.asarray(func(alpha, measure=measure, cant_solve=cs), dtype=np.float64))
        except NotImplementedError:  # no closed form for this measure (e.g. Var of entropy)
            out.append(nan)
    return out[0], np.sqrt(out[1])


#: Methods whose posterior of every q_i is Dirichlet(one fixed concentration + counts_i).
CONJUGATE_METHODS = ("exact", "empirical_bayes")

#: Draws per distinct count vector in the first, pilot round.
PILOT_DRAWS = 1000

#: Bytes of gamma variates generated at a time per thread (bounds temporary memory).
BATCH_BYTES = 48 * 2**20


def _pilot_draws(n_max: int) -> int:
    return min(n_max, PILOT_DRAWS)


def draws_needed(p_hat: np.ndarray, n_pilot: int, mcse: float) -> np.ndarray:
    """Draws that bring the MCSE of a probability estimate below ``mcse``.

    The pilot estimate ``p_hat`` (from ``n_pilot`` draws) is widened by three of its standard
    errors towards 1/2 (the variance ``p (1 - p)`` is largest there), so that the final
    estimate meets the bound unless the pilot was off by more than that; never more than
    ``ceil(0.25 / mcse**2)``, which meets it whatever ``p`` is.

    Parameters
    ----------
    p_hat : numpy.ndarray
        Pilot estimates of the probability.
    n_pilot : int
        The pilot's draws.
    mcse : float
        The bound on the Monte Carlo standard error.

    Returns
    -------
    numpy.ndarray
        int64 draws per estimate, from 1 to ``ceil(0.25 / mcse**2)``.

    Examples
    --------
    >>> import numpy as np
    >>> draws_needed(np.array([0.0, 0.5]), 1000, 0.005).tolist()
    [120, 10000]
    """
    se = np.sqrt((p_hat * (1.0 - p_hat) + 1.0 / n_pilot) / n_pilot)
    p_near_half = np.clip(0.5, p_hat - 3.0 * se, p_hat + 3.0 * se)
    n_max = math.ceil(0.25 / mcse**2)
    need = np.ceil(p_near_half * (1.0 - p_near_half) / mcse**2)
    return np.clip(need, 1, n_max).astype(np.int64)


def _order_stat_se(s: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Standard error of the sample quantile at rank ``j`` of sorted rows ``s``.

    The rank of a quantile of ``n`` independent draws has binomial spread
    ``sqrt(n p (1 - p))``; the distance between the order statistics one such spread
    below and above ``j``, per spread, estimates the standard error of the value (the
    order-statistic interval behind ArviZ's quantile MCSE for independent draws). Where the
    window is cut by the first or last draw, the spacings it keeps are scaled to a whole
    spread (one spacing for the sample minimum, whose error is about one spacing).
    """
    n = s.shape[1]
    p = (j + 0.5) / n
    d = np.ceil(np.sqrt(n * p * (1.0 - p))).astype(np.int64)
    hi = np.minimum(j + d, n - 1)
    lo = np.maximum(j - d, 0)
    span = np.take_along_axis(s, hi[:, None], 1)[:, 0] - np.take_along_axis(s, lo[:, None], 1)[:, 0]
    return span * d / np.maximum(hi - lo, 1)


#: Batches whose shortest intervals give the HDI ends' standard error, and the fewest draws
#: a batch may hold (with fewer than ``2 * HDI_BATCH_DRAWS`` draws the ends get the
#: order-statistic error of :func:`_order_stat_se`).
HDI_BATCHES = 10
HDI_BATCH_DRAWS = 20


def _shortest(s: np.ndarray, k: int) -> np.ndarray:
    """Rank of the first draw of the shortest interval of ``k`` sorted draws (last axis)."""
    return np.argmin(s[..., k - 1 :] - s[..., : s.shape[-1] - k + 1], axis=-1)


def _hdi_se(x: np.ndarray, s: np.ndarray, j: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors of the ends of the shortest interval ``s[j], s[j + k - 1]`` of the
    independent draws ``x`` (rows, n) sorted in ``s``.

    An interior end is not a fixed quantile: the rank where the shortest interval starts
    is itself estimated, from a width curve that is flat at its minimum, so the ends move at
    the cube-root rate ``n ** (-1 / 3)`` (the argmin of a noisy curve; Kim & Pollard 1990),
    not at a quantile's ``n ** (-1 / 2)``. Their error is taken by subsampling with that
    rate: the spread of the shortest intervals of ``B`` disjoint batches of ``m = n / B``
    draws, times ``(m / n) ** (1 / 3)``. An interval that starts at the first draw or ends
    at the last (a density highest at the edge of the support) has the quantile at the
    other end, whose error is the order-statistic one (:func:`_order_stat_se`).
    """
    rows, n = x.shape
    lower, upper = _order_stat_se(s, j), _order_stat_se(s, j + k - 1)
    batches = min(HDI_BATCHES, n // HDI_BATCH_DRAWS)
    if batches < 2:
        return lower, upper
    m = n // batches
    sb = np.sort(x[:, : m * batches].reshape(rows, batches, m), axis=-1)
    kb = max(1, min(m, math.ceil(k * m / n)))
    jb = _shortest(sb, kb)[..., None]
    scale = (m / n) ** (1.0 / 3.0)
    sub_lower = np.take_along_axis(sb, jb, -1)[..., 0].std(axis=1, ddof=1) * scale
    sub_upper = np.take_along_axis(sb, jb + kb - 1, -1)[..., 0].std(axis=1, ddof=1) * scale
    edge = (j == 0) | (j == n - k)
    return np.where(edge, lower, sub_lower), np.where(edge, upper, sub_upper)


def p_above_mcse(above: np.ndarray, n: int) -> np.ndarray:
    """Monte Carlo standard error of ``above / n``, the share of ``n`` independent draws above
    a threshold: ``sqrt(p~ (1 - p~) / n)`` at the Agresti-Coull estimate
    ``p~ = (above + 2) / (n + 4)``.

    The plug-in ``sqrt(p (1 - p) / n)`` is 0 where no draw, or every draw, is above the
    threshold, claiming no Monte Carlo error for an estimate that has one (a true share of
    0.997 gives 1000 draws all above it one time in twenty). Adding two draws above and two
    below (the ``z**2 / 2`` of a 95 % interval: Agresti and Coull (1998), on the references
    page) keeps the error positive, and ``p +- 2 * mcse`` covers
    the true share in at least 93 % of samples whatever that share is (binomial
    probabilities, 100 to 10,000 draws; the plug-in covers 80 % at a true ``n (1 - p) = 3``
    and 10 % at 0.1, the Jeffreys-type ``(above + 1/2) / (n + 1)`` 76 % at 1.5). Away from 0
    and 1 it is the plug-in to ``O(1 / n)``. It is at most ``0.5 / sqrt(n)``, so
    ``0.25 / mcse**2`` draws always meet a bound ``mcse``.

    Parameters
    ----------
    above : numpy.ndarray
        Draws above the threshold, per row.
    n : int
        Draws per row.

    Returns
    -------
    numpy.ndarray
        The standard error of each row's share.

    Examples
    --------
    >>> import numpy as np
    >>> p_above_mcse(np.array([0, 500, 1000]), 1000).round(5).tolist()
    [0.00141, 0.01581, 0.00141]
    """
    shrunk = (np.asarray(above, dtype=np.float64) + 2.0) / (n + 4.0)
    return np.sqrt(shrunk * (1.0 - shrunk) / n)


def _summaries_of_draws(x: np.ndarray, threshold: float, hdi_prob: float) -> dict[str, np.ndarray]:
    """Row-wise statistics of independent draws ``x`` (rows, n)."""
    n = x.shape[1]
    s = np.sort(x, axis=1)
    k = max(1, min(n, math.ceil(hdi_prob * n)))
    j = _shortest(s, k)
    rows = np.arange(s.shape[0])
    mean = s.mean(axis=1)
    centred = s - mean[:, None]
    m2 = np.mean(centred**2, axis=1)
    m4 = np.mean(centred**4, axis=1)
    sd = np.sqrt(m2 * n / max(n - 1, 1))
    above = np.count_nonzero(s > threshold, axis=1)
    p = above / n
    hdi_se = _hdi_se(x, s, j, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd_mcse = np.where(m2 > 0, np.sqrt(np.maximum(m4 - m2**2, 0.0) / (4.0 * m2 * n)), 0.0)
    return {
        "mc_mean": mean,
        "mc_sd": sd,
        "mc_mean_mcse": sd / math.sqrt(n),
        "mc_sd_mcse": sd_mcse,
        "hdi_lower": s[rows, j],
        "hdi_upper": s[rows, j + k - 1],
        "hdi_lower_mcse": hdi_se[0],
        "hdi_upper_mcse": hdi_se[1],
        "p_above": p,
        "p_above_mcse": p_above_mcse(above, n),
    }


def _draw_block(
    seed: np.random.SeedSequence,
    alpha: np.ndarray,
    n: int,
    settings: tuple[str, int | None, float, float],
    prefix: np.ndarray | None,
    keep: bool,
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Statistics of ``n`` new draws per row of ``alpha`` (after the draws ``prefix``)."""

    measure, cs, threshold, hdi_prob = settings
    rng = np.random.default_rng(seed)
    q = dirichlet_draws(rng, alpha, n)  # (n, rows, K)
    x = np.ascontiguousarray(measure_numpy(measure, q, cs, -1, check=False).T)  # (rows, n)
    del q
    if prefix is not None:
        x = np.concatenate([prefix, x], axis=1)
    return _summaries_of_draws(x, threshold, hdi_prob), (x if keep else None)


def _sample_rows(
    alpha: np.ndarray,
    n: int,
    seed: np.random.SeedSequence,
    settings: tuple[str, int | None, float, float],
    pool: ThreadPoolExecutor,
    *,
    prefix: np.ndarray | None = None,
    keep: bool = False,
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Statistics of ``n`` new draws (after ``prefix``, the draws a row has already) for every
    row of ``alpha``, in batches run on ``pool``; the draws too with ``keep``."""
    width = n + (0 if prefix is None else prefix.shape[1])
    per_batch = max(1, BATCH_BYTES // (8 * width * alpha.shape[1]))
    starts = list(range(0, len(alpha), per_batch))
    seeds = seed.spawn(len(starts))
    futures = [
        pool.submit(
            _draw_block,
            sq,
            alpha[a : a + per_batch],
            n,
            settings,
            None if prefix is None else prefix[a : a + per_batch],
            keep,
        )
        for sq, a in zip(seeds, starts, strict=True)
    ]
    parts = [f.result() for f in futures]
    stats = {key: np.concatenate([p[0][key] for p in parts]) for key in parts[0][0]}
    return stats, (np.concatenate([p[1] for p in parts]) if keep else None)


#: Seconds per gamma variate of the exact draws (one per category and draw), with the
#: measure and the summaries (measured on one core of the shared development machine:
#: 100-150 ns for 2000-5 categories).
SECONDS_PER_VARIATE = 1e-7

#: Doubles held per draw of one row while its block is summarized: its Dirichlet draws (one
#: per category) and about seven copies of the measure's draws (kept, new, joined, sorted,
#: sorted in batches, centred, powers).
_DOUBLES_PER_DRAW = 7


def _said(mcse: float) -> str:
    """``mcse=0.02`` in Python, ``--mcse 0.02`` on the command line."""
    return say(f"mcse={mcse:g}", f"--mcse {mcse:g}")


def _larger_mcse(seconds: Callable[[float], float], mcse: float) -> float | None:
    """The smallest bound of three significant digits above ``mcse`` whose estimated time
    ``seconds(bound)`` (non-increasing in the bound) is within the time guard; None where no
    bound below 0.5 (``mcse`` must stay below it) is."""
    limit = limits.TIME_GUARD_S
    top = 0.499
    if seconds(top) > limit:
        return None
    lo, hi = mcse, top
    while hi - lo > 1e-9 * hi:  # seconds(lo) > limit >= seconds(hi)
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if seconds(mid) <= limit else (mid, hi)
    step = 10.0 ** (math.floor(math.log10(hi)) - 2)
    bound = float(f"{math.ceil(hi / step - 1e-9) * step:.3g}")
    while seconds(bound) > limit:  # rounding below hi: one step up
        bound = float(f"{bound + step:.3g}")
    return bound


def _check_draws(
    n_rows: int,
    n_cat: int,
    n_pilot: int,
    mcse: float,
    workers: int,
    p_hat: np.ndarray | None = None,
    n_distinct: int | None = None,
) -> None:
    """Refuse up front exact draws beyond the memory or time guard (:mod:`ambppl.internal.limits`).

    Before the pilot (``p_hat`` None): the kept pilot draws plus, per thread, one block of
    the largest size a row may get (``ceil(0.25 / mcse**2)`` draws), and the pilot's time;
    after it: the time of the draws the pilot estimates ``p_hat`` say each row needs. The
    ``n_rows`` rows that need draws are among ``n_distinct`` distinct count vectors (the
    others from the approximation). A refusal of the time names the smallest ``mcse`` (three
    significant digits) whose estimate by the same model is within the guard, and splitting
    the items into separate calls (reading in chunks does not: the distinct count vectors of
    all chunks are drawn at once).
    """

    name = option("mcse", "--mcse")
    n_max = math.ceil(0.25 / mcse**2)
    n_distinct = n_rows if n_distinct is None else n_distinct
    scoring = f"{n_distinct} distinct count vectors over {n_cat} categories"
    approximated = ""
    if n_distinct > n_rows:
        scoring = f"{n_rows} of the {scoring} by exact draws"
        approximated = f"the other {n_distinct - n_rows} from the approximation; "
    per_second = n_cat * SECONDS_PER_VARIATE / workers
    if p_hat is None:
        block = max(BATCH_BYTES * 3.0, 8.0 * n_max * (n_cat + _DOUBLES_PER_DRAW))
        check_memory(
            8.0 * n_rows * n_pilot + workers * block,
            f"{_said(mcse)} (up to ceil(0.25 / mcse**2) = {as_count(n_max)} exact draws of a "
            f"count vector over {n_cat} categories)",
            f"pass a larger {name} (0.005: at most 10000 draws per count vector)",
        )

        def pilot_seconds(bound: float) -> float:
            return n_rows * _pilot_draws(math.ceil(0.25 / bound**2)) * per_second

        variates = float(n_rows) * n_pilot * n_cat
        if n_cat > _MANY_CATEGORIES:
            label = option("label=", "--label")
            fix = (
                f"{n_cat} categories usually mean that the label column holds free text or "
                f"ids rather than labels: check {label}, or merge rare labels into fewer "
                "categories"
            )
        else:
            fix = _time_fix(pilot_seconds, mcse)
        check_time(
            pilot_seconds(mcse),
            f"scoring {scoring} ({approximated}at least {n_pilot} exact draws per vector to "
            "estimate P(measure > threshold), one gamma variate per category and draw: "
            f"{variates:.3g} variates)",
            fix,
        )
        return

    shares: np.ndarray = p_hat

    def more_seconds(bound: float) -> float:
        top = max(math.ceil(0.25 / bound**2), n_pilot)
        need = draws_needed(shares, n_pilot, bound)
        return float((np.minimum(np.maximum(need, n_pilot), top) - n_pilot).sum()) * per_second

    approximated = f"; {approximated[:-2]}" if approximated else ""
    check_time(
        more_seconds(mcse),
        f"{_said(mcse)} (the pilot draws ask for {more_seconds(mcse) / per_second:.3g} more "
        f"exact draws for {scoring}{approximated})",
        _time_fix(more_seconds, mcse),
    )


def _time_fix(seconds: Callable[[float], float], mcse: float) -> str:
    """The fix of a refusal of the time ``seconds(mcse)``: the larger bound that the same
    estimate passes, and splitting the items, in the caller's words."""
    parts = math.ceil(seconds(mcse) / limits.TIME_GUARD_S)
    split = say(
        f"score the items in {parts} or more parts, a separate call each (fewer items have "
        "fewer distinct count vectors; read_in_chunks' chunk_items= does not help: the "
        "distinct count vectors of all chunks are drawn at once)",
        f"score the items in {parts} or more parts, a separate run on a file of each part "
        "(fewer items have fewer distinct count vectors; --chunk-items does not help: the "
        "distinct count vectors of all chunks are drawn at once)",
    )
    bound = _larger_mcse(seconds, mcse)
    if bound is None:
        return f"no {option('mcse', '--mcse')} below 0.5 brings it under the limit: {split}"
    return f"pass {_said(bound)} or larger (estimated {duration(seconds(bound))}), or {split}"


#: Above this many categories a refusal of the exact draws' time suspects the label column.
_MANY_CATEGORIES = 200


def _sampled_stats(
    alpha: np.ndarray,
    draw_settings: tuple[str, int | None, float, float],
    mcse: float,
    seed: np.random.SeedSequence,
    workers: int,
    n_distinct: int | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Statistics of exact draws per row of ``alpha``, as many as ``mcse`` needs (pilot,
    then the remaining draws, then a fresh top-up where the pilot misjudged ``p``);
    ``n_distinct``: the distinct count vectors these rows are among, for the messages."""
    n_rows = alpha.shape[0]
    pilot_seed, final_seed, top_seed = seed.spawn(3)
    n_max = math.ceil(0.25 / mcse**2)
    n_pilot = _pilot_draws(n_max)
    n_cat = alpha.shape[1]
    _check_draws(n_rows, n_cat, n_pilot, mcse, workers, n_distinct=n_distinct)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pilot, kept = _sample_rows(alpha, n_pilot, pilot_seed, draw_settings, pool, keep=True)
        _check_draws(n_rows, n_cat, n_pilot, mcse, workers, pilot["p_above"], n_distinct)
        need = draws_needed(pilot["p_above"], n_pilot, mcse)
        # draws rounded up to a multiple of the pilot size: a handful of groups, each
        # sampled as one block after the pilot draws, which are kept
        groups = np.maximum(np.ceil(need / n_pilot).astype(np.int64) * n_pilot, n_pilot)
        groups = np.minimum(groups, max(n_max, n_pilot))
        stats = {key: np.empty(n_rows) for key in pilot}
        drawn = np.empty(n_rows, dtype=np.int64)
        sizes = np.unique(groups)
        for size, sq in zip(sizes, final_seed.spawn(len(sizes)), strict=True):
            rows = np.flatnonzero(groups == size)
            if size == n_pilot:  # the pilot is already the final sample of these rows
                part = {key: val[rows] for key, val in pilot.items()}
            else:
                part, _ = _sample_rows(
                    alpha[rows], int(size) - n_pilot, sq, draw_settings, pool, prefix=kept[rows]
                )
            for key, val in part.items():
                stats[key][rows] = val
            drawn[rows] = size
        del kept
        # a pilot that was off by more than three standard errors: redraw afresh at the size
        # that meets the bound for every p
        over = np.flatnonzero(stats["p_above_mcse"] > mcse)
        if len(over):
            part, _ = _sample_rows(alpha[over], n_max, top_seed, draw_settings, pool)
            for key, val in part.items():
                stats[key][over] = val
            drawn[over] = n_max
    return stats, drawn


def _mapped(n_cat: int) -> bool:
    """Whether the accuracy map of :mod:`ambppl.maths.approx` covers ``n_cat`` categories (beyond
    it no row is trusted, and the moments of many categories take long to compute)."""

    return n_cat <= max(accuracy_map()["K"])


def _stats(
    alpha: np.ndarray,
    exact_mean: np.ndarray,
    exact_sd: np.ndarray,
    cs: int | None,
    draw_settings: tuple[str, int | None, float, float],
    mcse: float,
    seed: np.random.SeedSequence,
    workers: int,
    approximate: bool,
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Statistics per row: from the moment-matched approximation where the accuracy map
    trusts it to ``mcse`` (``ambppl.maths.approx``), from exact draws elsewhere."""
    measure, _, threshold, hdi_prob = draw_settings
    n_rows = alpha.shape[0]
    trusted = np.zeros(n_rows, dtype=bool)
    approx_error = np.zeros(n_rows)
    if approximate and measure in ("amb", "modified") and _mapped(alpha.shape[1]):
        try:
            approx = approximate_distribution(alpha, measure, cant_solve=cs, bound=mcse)
        except ValueError:  # outside what the approximation takes (e.g. K < 3)
            approx = None
        if approx is not None:
            trusted = np.asarray(approx.accurate, dtype=bool).reshape(n_rows)
    keys = (
        "mc_mean",
        "mc_sd",
        "mc_mean_mcse",
        "mc_sd_mcse",
        "hdi_lower",
        "hdi_upper",
        "hdi_lower_mcse",
        "hdi_upper_mcse",
        "p_above",
        "p_above_mcse",
    )
    stats = {key: np.zeros(n_rows) for key in keys}
    drawn = np.zeros(n_rows, dtype=np.int64)
    if trusted.any():
        rows = np.flatnonzero(trusted)
        sub = approximate_distribution(alpha[rows], measure, cant_solve=cs, bound=mcse)
        stats["mc_mean"][rows] = exact_mean[rows]
        stats["mc_sd"][rows] = exact_sd[rows]
        stats["p_above"][rows] = sub.sf(np.full(len(rows), threshold))
        lo, hi = sub.hdi(hdi_prob)
        stats["hdi_lower"][rows], stats["hdi_upper"][rows] = lo, hi
        approx_error[rows] = np.asarray(sub.max_error).reshape(-1)
    rows = np.flatnonzero(~trusted)
    if len(rows):
        part, n = _sampled_stats(alpha[rows], draw_settings, mcse, seed, workers, n_rows)
        for key in keys:
            stats[key][rows] = part[key]
        drawn[rows] = n
    return stats, drawn, approx_error


def _fixed_stats(
    alpha: np.ndarray,
    draw_settings: tuple[str, int | None, float, float],
    draws: int,
    seed: np.random.SeedSequence,
    workers: int,
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Statistics of exactly ``draws`` exact draws per row of ``alpha`` (no approximation),
    refused up front where one block of them per thread would not fit in memory."""
    n_rows, n_cat = alpha.shape
    name = option("draws", "--draws")
    check_memory(
        workers * max(BATCH_BYTES * 3.0, 8.0 * draws * (n_cat + _DOUBLES_PER_DRAW)),
        f"{name} {as_count(draws)} (exact draws of a count vector over {n_cat} categories)",
        f"pass a smaller {name}",
    )
    with ThreadPoolExecutor(max_workers=workers) as pool:
        stats, _ = _sample_rows(alpha, draws, seed, draw_settings, pool)
    return stats, np.full(n_rows, draws, dtype=np.int64), np.zeros(n_rows)


def summarize_distinct(
    values: np.ndarray,
    concentration: np.ndarray,
    *,
    measure: str,
    cs: int | None,
    threshold: float,
    hdi_prob: float,
    mcse: float | None,
    seed: np.random.SeedSequence,
    workers: int,
    approximate: bool = True,
    draws: int | None = None,
    closed: bool = True,
) -> dict[str, np.ndarray]:
    """The per-item columns of each distinct count vector under ``Dirichlet(a + counts)``.

    Parameters
    ----------
    values : numpy.ndarray
        Distinct count vectors, shape (D, K), int64.
    concentration : numpy.ndarray
        The fixed concentration ``a`` (K,).
    measure : str
        A measure name (:func:`ambppl.maths.measures.measure_name`).
    cs : int or None
        The can't-solve column, or None.
    threshold, hdi_prob : float
        ``p_above`` is P(measure > threshold); the HDI holds ``hdi_prob`` of the mass.
    mcse : float or None
        Bound on the Monte Carlo standard error of ``p_above`` (each row gets the exact draws
        it needs); unused with ``draws``.
    seed : numpy.random.SeedSequence
        The seed of every draw (the rows do not depend on ``workers``).
    workers : int
        Threads that draw.
    approximate : bool, default True
        Take ``p_above`` and the HDI from the moment-matched approximation where its accuracy
        map bounds the CDF error by ``mcse`` (not with ``draws``).
    draws : int, optional
        Exactly this many exact draws per row instead of as many as ``mcse`` needs.
    closed : bool, default True
        ``mean`` and ``sd``: the closed forms where they exist (True) or the estimates from
        the draws (False, as :func:`ambppl.summarize` reports a fit).

    Returns
    -------
    dict of numpy.ndarray
        The columns of :data:`ambppl.analysis.scoring.SCORE_COLUMNS` but ``measure`` and
        ``threshold``, one value per row.

    Examples
    --------
    >>> import numpy as np
    >>> cols = summarize_distinct(np.array([[5, 0, 0]]), np.ones(3), measure="amb", cs=2,
    ...                           threshold=0.4, hdi_prob=0.9, mcse=None, draws=7,
    ...                           seed=np.random.SeedSequence(1), workers=1)
    >>> float(cols["mean"][0]), int(cols["draws"][0])  # E[amb] under Dirichlet(6, 1, 1)
    (0.3125, 7)
    """

    n_rows = values.shape[0]
    n = values.sum(axis=1)
    out: dict[str, np.ndarray] = {"n_answers": n.astype(np.int64)}
    with np.errstate(invalid="ignore", divide="ignore"):
        share = values[:, cs] / n if cs is not None else np.zeros(n_rows)
    out["cs_share"] = np.where(n > 0, share, np.nan)
    out["plugin"], out["less_biased"] = _estimators(values, measure, cs)
    exact_mean, exact_sd = _closed_forms(values, {"prior": concentration}, measure, cs)
    alpha = values + concentration
    draw_settings = (measure, cs, threshold, hdi_prob)
    if draws is None:
        stats, drawn, approx_error = _stats(
            alpha, exact_mean, exact_sd, cs, draw_settings, mcse, seed, workers, approximate
        )
    else:
        stats, drawn, approx_error = _fixed_stats(alpha, draw_settings, draws, seed, workers)
    closed_mean = np.isfinite(exact_mean) & closed
    closed_sd = np.isfinite(exact_sd) & closed
    out["mean"] = np.where(closed_mean, exact_mean, stats["mc_mean"])
    out["sd"] = np.where(closed_sd, exact_sd, stats["mc_sd"])
    out["exact_mean"], out["exact_sd"] = exact_mean, exact_sd
    for key in ("hdi_lower", "hdi_upper", "p_above"):
        out[key] = stats[key]
    out["mean_mcse"] = np.where(closed_mean, 0.0, stats["mc_mean_mcse"])
    out["sd_mcse"] = np.where(closed_sd, 0.0, stats["mc_sd_mcse"])
    for key in ("hdi_lower_mcse", "hdi_upper_mcse", "p_above_mcse"):
        out[key] = stats[key]
    out["approx_error"] = approx_error
    out["draws"] = drawn
    return out


def _conjugate_entry(model: str, method: str | None) -> tuple[Any, str]:
    """The catalog entry and its method, checked to be conjugate and to fit counts."""

    entry = get_model(model)
    method = choose_method(entry, method, None, None)
    if method not in CONJUGATE_METHODS:
        conjugate = [m for m in entry.info["methods"] if m in CONJUGATE_METHODS]
        hint = (
            f"use method={conjugate[0]!r}"
            if conjugate
            else "fit it with ambppl.fit and summarize the draws with ambppl.summarize"
        )
        raise ValueError(
            f"method must give every item a Dirichlet posterior with one fixed concentration "
            f"({', '.join(CONJUGATE_METHODS)}) to score without per-item draws, but model "
            f"{entry.name!r} runs {method!r}; {hint}"
        )
    if entry.info.get("data", "counts") != "counts":
        raise ValueError(
            f"model must fit counts to score without per-item draws, but {entry.name!r} fits "
            "one row per answer; fit it with ambppl.fit"
        )
    return entry, method


def _concentration(entry: Any, method: str, counts: Any, params: dict, categories: Any) -> Any:
    """The fixed Dirichlet concentration of ``method``: estimated from ``counts`` in memory
    for ``"empirical_bayes"``; ``counts`` may be None for the other methods (counts read in
    chunks, which ``score`` refuses with ``"empirical_bayes"`` before this). A parameter
    labelled by category is read by its labels against ``categories`` (the counts'
    ``category`` coordinate, or their labels in order)."""
    params = category_parameters(params, categories)
    n_categories = len(categories)
    hyper = None
    if method == "empirical_bayes":
        hyper = {
            k: np.asarray(v, dtype=np.float64)
            for k, v in entry.module.empirical_bayes(counts, **params).items()
        }
    return np.asarray(
        entry.module.concentration(hyper, n_categories=n_categories, **params), dtype=np.float64
    )


def conjugate_setup(
    model: str, method: str | None, data: Any, kwargs: dict[str, Any], caller: str = "score"
) -> tuple[Any, np.ndarray, str]:
    """Counts (in memory), the fixed concentration and the method of a conjugate model.

    Parameters
    ----------
    model : str
        A catalog model that fits counts.
    method : str or None
        One of :data:`CONJUGATE_METHODS` that the model offers; None: its first method.
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Counts already read (:func:`ambppl.data.as_counts`).
    kwargs : dict
        The model's parameters.
    caller : str, default "score"
        The estimator's name, for the messages.

    Returns
    -------
    counts : xarray.DataArray
        The counts of the data contract.
    concentration : numpy.ndarray
        The fixed Dirichlet concentration of every item's prior (K,).
    method : str
        The method.

    Raises
    ------
    ValueError
        For a method that gives no fixed concentration or a model of answers.
    TypeError
        For a path or reader options (the message names the reader).

    Examples
    --------
    >>> import numpy as np
    >>> counts, conc, method = conjugate_setup(
    ...     "dirichlet_categorical", None, np.array([[3, 1], [0, 2]]), {"prior": 0.5})
    >>> conc.tolist(), method, counts.sizes["item"]
    ([0.5, 0.5], 'exact', 2)
    """

    entry, method = _conjugate_entry(model, method)
    params = model_parameters(entry, kwargs, caller)  # reader options: TypeError
    counts = as_counts(data)  # a path: TypeError naming the reader
    conc = _concentration(entry, method, counts, params, counts["category"])
    return counts, conc, method


def seed_sequence(random_seed: Any) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` of a ``random_seed`` argument.

    Parameters
    ----------
    random_seed : int, numpy.random.Generator, numpy.random.SeedSequence or None
        The seed; a Generator gives one draw of its stream.

    Returns
    -------
    numpy.random.SeedSequence
        The same seed gives the same sequence.

    Raises
    ------
    TypeError
        For any other type.
    ValueError
        For a negative int.

    Examples
    --------
    >>> seed_sequence(7).entropy, seed_sequence(None).entropy > 0
    (7, True)
    """
    if isinstance(random_seed, np.random.Generator):
        return np.random.SeedSequence(int(random_seed.integers(2**63)))
    if isinstance(random_seed, np.random.SeedSequence):
        return random_seed
    return np.random.SeedSequence(check_random_seed(random_seed))


def distinct_columns(
    distinct: np.ndarray,
    conc: np.ndarray,
    cs: int | None,
    settings: dict[str, Any],
    seed: np.random.SeedSequence,
    approximate: bool = True,
    draws: int | None = None,
    closed: bool = True,
) -> dict[str, Any]:
    """Every per-item column for each distinct count vector: :func:`summarize_distinct` on
    the usable CPUs, with ``measure`` (categorical) and ``threshold``.

    Parameters
    ----------
    distinct : numpy.ndarray
        Distinct count vectors (D, K).
    conc : numpy.ndarray
        The fixed Dirichlet concentration (K,).
    cs : int or None
        The can't-solve column.
    settings : dict
        ``measure``, ``threshold``, ``hdi_prob`` and ``mcse`` (None with ``draws``).
    seed : numpy.random.SeedSequence
        The seed of every draw.
    approximate, draws, closed
        As for :func:`summarize_distinct`.

    Returns
    -------
    dict
        One array per column of :data:`ambppl.analysis.scoring.SCORE_COLUMNS`, D values each.

    Examples
    --------
    >>> import numpy as np
    >>> settings = {"measure": "amb", "threshold": 0.4, "hdi_prob": 0.9, "mcse": 0.01}
    >>> cols = distinct_columns(np.array([[5, 0], [2, 3]]), np.ones(2), None, settings,
    ...                         np.random.SeedSequence(1))
    >>> cols["n_answers"].tolist(), list(cols["measure"])
    ([5, 5], ['amb', 'amb'])
    """
    import pandas as pd

    columns = summarize_distinct(
        distinct,
        conc,
        cs=cs,
        seed=seed,
        workers=usable_cpus(),
        approximate=approximate,
        draws=draws,
        closed=closed,
        **settings,
    )
    columns["measure"] = pd.Categorical([settings["measure"]] * len(distinct))
    columns["threshold"] = np.full(len(distinct), settings["threshold"])
    return columns


def distinct_table(
    counts: Any,
    concentration: np.ndarray,
    names: tuple[str, ...] | list[str],
    settings: dict[str, Any],
    seed: np.random.SeedSequence,
    *,
    approximate: bool = True,
    draws: int | None = None,
    closed: bool = True,
) -> pd.DataFrame:
    """One row per item from the rows of its distinct count vector, broadcast back.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts of the data contract (:func:`ambppl.data.as_counts`).
    concentration : numpy.ndarray
        The fixed Dirichlet concentration of every item's prior (K,).
    names : sequence of str
        The columns wanted (of :data:`ambppl.analysis.scoring.SCORE_COLUMNS`), in order.
    settings : dict
        ``measure``, ``threshold``, ``hdi_prob`` and ``mcse`` (None with ``draws``).
    seed : numpy.random.SeedSequence
        The seed of every draw.
    approximate, draws, closed
        As for :func:`summarize_distinct`.

    Returns
    -------
    pandas.DataFrame
        Index ``item`` (the data's order), the columns ``names``; ``attrs["n_distinct"]``.

    Notes
    -----
    Items with equal count vectors share one row of statistics
    (``numpy.unique(..., axis=0, return_inverse=True)``): the cost grows with the number of
    distinct vectors, not of items, and the rows of items with equal counts are identical
    (shared Monte Carlo error).

    Examples
    --------
    >>> import numpy as np
    >>> from ambppl.data import as_counts
    >>> counts = as_counts(np.array([[5, 0], [2, 3], [5, 0]]))
    >>> settings = {"measure": "amb", "threshold": 0.4, "hdi_prob": 0.9, "mcse": None}
    >>> table = distinct_table(counts, np.ones(2), ["n_answers", "draws"], settings,
    ...                        np.random.SeedSequence(1), draws=10)
    >>> table["draws"].tolist(), table.attrs["n_distinct"]
    ([10, 10, 10], 2)
    """
    import pandas as pd

    values, cs = count_values(counts)
    distinct, inverse = np.unique(values, axis=0, return_inverse=True)
    columns = distinct_columns(
        distinct, concentration, cs, settings, seed, approximate, draws, closed
    )
    inverse = inverse.reshape(-1)
    table = pd.DataFrame(
        {name: columns[name][inverse] for name in names},
        index=pd.Index(counts["item"].values, name="item"),
    )
    table.attrs["n_distinct"] = len(distinct)
    return table
