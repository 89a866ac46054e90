"""``score``: the per-item table of a conjugate model without per-item draws.

Under a model whose every item has the posterior ``Dirichlet(a + counts_i)`` with one fixed
concentration ``a`` (``dirichlet_categorical``; ``hierarchical_dirichlet`` with
``method="empirical_bayes"``), an item's posterior depends on its data only through its count
vector. A count vector of ``n`` answers over ``K`` categories takes at most
``C(n + K - 1, K - 1)`` values (10,626 for n = 20, K = 5), however many items there are.
:func:`score` therefore finds the distinct count vectors, summarizes each once (closed forms
for mean and sd, exact draws for the HDI and P(measure > t), as the requested Monte
Carlo error needs) and broadcasts the rows back to the items. No draw is stored per item.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.analysis.summary import COLUMNS, _closed_forms, _estimators
from ambppl.data.chunked import CHUNK_READ_OPTIONS, read_in_chunks
from ambppl.data.contract import READ_OPTIONS, as_counts
from ambppl.data.lazy import (
    LazyCounts,
    Lookup,
    arrow_schema,
    distinct_vectors,
    from_dataarray,
    lazy_table,
    write_part,
)
from ambppl.inference.catalog import get_model, model_parameters
from ambppl.inference.fitting import choose_method, usable_cpus
from ambppl.inference.modeling import count_values
from ambppl.internal.checks import (
    cant_solve_position,
    check_cant_solve,
    check_counts,
    check_positive_scalar,
    check_prob,
)
from ambppl.internal.labels import is_dataarray
from ambppl.internal.limits import as_count, check_memory, check_time, option
from ambppl.maths.approx import accuracy_map, approximate_distribution
from ambppl.maths.draws import dirichlet_draws
from ambppl.maths.measures import measure_name, measure_numpy

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["MCSE_TARGET", "SCORE_COLUMNS", "score"]

#: Default bound on the Monte Carlo standard error of ``p_above`` (P(measure > threshold)).
MCSE_TARGET = 0.005

#: Columns of :func:`score`, in order: those of :func:`ambppl.summarize` for an exact fit, the
#: Monte Carlo standard error of each column that may come from draws, and the draws used.
SCORE_COLUMNS = (
    *COLUMNS,
    "mean_mcse",
    "sd_mcse",
    "hdi_lower_mcse",
    "hdi_upper_mcse",
    "p_above_mcse",
    "approx_error",
    "draws",
)

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
    """
    se = np.sqrt((p_hat * (1.0 - p_hat) + 1.0 / n_pilot) / n_pilot)
    p_near_half = np.clip(0.5, p_hat - 3.0 * se, p_hat + 3.0 * se)
    n_max = math.ceil(0.25 / mcse**2)
    need = np.ceil(p_near_half * (1.0 - p_near_half) / mcse**2)
    return np.clip(need, 1, n_max).astype(np.int64)


def _order_stat_se(s: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Standard error of the sample quantile at rank ``j`` of sorted rows ``s``.

    The rank of a quantile of ``n`` independent draws has binomial spread
    ``sqrt(n p (1 - p))``; half the distance between the order statistics one such spread
    below and above ``j`` estimates the standard error of the value (the order-statistic
    interval behind ArviZ's quantile MCSE for independent draws).
    """
    n = s.shape[1]
    p = (j + 0.5) / n
    d = np.ceil(np.sqrt(n * p * (1.0 - p))).astype(np.int64)
    hi = np.minimum(j + d, n - 1)[:, None]
    lo = np.maximum(j - d, 0)[:, None]
    return 0.5 * (np.take_along_axis(s, hi, 1) - np.take_along_axis(s, lo, 1))[:, 0]


def _summaries_of_draws(x: np.ndarray, threshold: float, hdi_prob: float) -> dict[str, np.ndarray]:
    """Row-wise statistics of independent draws ``x`` (rows, n)."""
    n = x.shape[1]
    s = np.sort(x, axis=1)
    k = max(1, min(n, math.ceil(hdi_prob * n)))
    width = s[:, k - 1 :] - s[:, : n - k + 1]
    j = np.argmin(width, axis=1)
    rows = np.arange(s.shape[0])
    mean = s.mean(axis=1)
    centred = s - mean[:, None]
    m2 = np.mean(centred**2, axis=1)
    m4 = np.mean(centred**4, axis=1)
    sd = np.sqrt(m2 * n / max(n - 1, 1))
    p = np.mean(s > threshold, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd_mcse = np.where(m2 > 0, np.sqrt(np.maximum(m4 - m2**2, 0.0) / (4.0 * m2 * n)), 0.0)
    return {
        "mc_mean": mean,
        "mc_sd": sd,
        "mc_mean_mcse": sd / math.sqrt(n),
        "mc_sd_mcse": sd_mcse,
        "hdi_lower": s[rows, j],
        "hdi_upper": s[rows, j + k - 1],
        "hdi_lower_mcse": _order_stat_se(s, j),
        "hdi_upper_mcse": _order_stat_se(s, j + k - 1),
        "p_above": p,
        "p_above_mcse": np.sqrt(p * (1.0 - p) / n),
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
#: per category) and about six copies of the measure's draws (kept, new, joined, sorted,
#: centred, powers).
_DOUBLES_PER_DRAW = 6


def _check_draws(
    n_rows: int,
    n_cat: int,
    n_pilot: int,
    n_max: int,
    mcse: float,
    workers: int,
    need: np.ndarray | None = None,
) -> None:
    """Refuse up front exact draws beyond the memory or time guard (:mod:`ambppl.internal.limits`).

    Before the pilot (``need`` None): the kept pilot draws plus, per thread, one block of
    the largest size a row may get (``ceil(0.25 / mcse**2)`` draws), and the pilot's time;
    after it: the time of the draws the pilot says each row needs.
    """

    name = option("mcse", "--mcse")
    said = f"{name} {mcse:g}" if name.startswith("--") else f"{name}={mcse:g}"
    if need is None:
        block = max(BATCH_BYTES * 3.0, 8.0 * n_max * (n_cat + _DOUBLES_PER_DRAW))
        check_memory(
            8.0 * n_rows * n_pilot + workers * block,
            f"{said} (up to ceil(0.25 / mcse**2) = {as_count(n_max)} exact draws of a count "
            f"vector over {n_cat} categories)",
            f"pass a larger {name} (0.005: at most 10000 draws per count vector)",
        )
        variates = float(n_rows) * n_pilot * n_cat
        if n_cat > _MANY_CATEGORIES:
            label = option("label=", "--label")
            fix = (
                f"{n_cat} categories usually mean that the label column holds free text or "
                f"ids rather than labels: check {label}, or merge rare labels into fewer "
                "categories"
            )
        else:
            fix = (
                f"score fewer items at a time, or pass a larger {name} (above 0.0158 the "
                "pilot has fewer than 1000 draws)"
            )
        check_time(
            variates * SECONDS_PER_VARIATE / workers,
            f"scoring {n_rows} distinct count vectors over {n_cat} categories (at least "
            f"{n_pilot} exact draws per vector to estimate P(measure > threshold), one gamma "
            f"variate per category and draw: {variates:.3g} variates)",
            fix,
        )
        return
    more = np.minimum(np.maximum(need, n_pilot), max(n_max, n_pilot)) - n_pilot
    variates = float(more.sum()) * n_cat
    check_time(
        variates * SECONDS_PER_VARIATE / workers,
        f"{said} (the pilot draws ask for {variates / n_cat:.3g} more exact draws over "
        f"{n_rows} distinct count vectors of {n_cat} categories)",
        f"pass a larger {name}",
    )


#: Above this many categories a refusal of the exact draws' time suspects the label column.
_MANY_CATEGORIES = 200


def _sampled_stats(
    alpha: np.ndarray,
    draw_settings: tuple[str, int | None, float, float],
    mcse: float,
    seed: np.random.SeedSequence,
    workers: int,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Statistics of exact draws per row of ``alpha``, as many as ``mcse`` needs (pilot,
    then the remaining draws, then a fresh top-up where the pilot misjudged ``p``)."""
    n_rows = alpha.shape[0]
    pilot_seed, final_seed, top_seed = seed.spawn(3)
    n_max = math.ceil(0.25 / mcse**2)
    n_pilot = _pilot_draws(n_max)
    _check_draws(n_rows, alpha.shape[1], n_pilot, n_max, mcse, workers)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pilot, kept = _sample_rows(alpha, n_pilot, pilot_seed, draw_settings, pool, keep=True)
        need = draws_needed(pilot["p_above"], n_pilot, mcse)
        _check_draws(n_rows, alpha.shape[1], n_pilot, n_max, mcse, workers, need)
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
        part, n = _sampled_stats(alpha[rows], draw_settings, mcse, seed, workers)
        for key in keys:
            stats[key][rows] = part[key]
        drawn[rows] = n
    return stats, drawn, approx_error


def summarize_distinct(
    values: np.ndarray,
    concentration: np.ndarray,
    *,
    measure: str,
    cs: int | None,
    threshold: float,
    hdi_prob: float,
    mcse: float,
    seed: np.random.SeedSequence,
    workers: int,
    approximate: bool = True,
) -> dict[str, np.ndarray]:
    """The score columns for each row of distinct count vectors ``values`` (D, K)."""

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
    stats, drawn, approx_error = _stats(
        alpha, exact_mean, exact_sd, cs, draw_settings, mcse, seed, workers, approximate
    )
    closed_mean, closed_sd = np.isfinite(exact_mean), np.isfinite(exact_sd)
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


def _concentration(entry: Any, method: str, counts: Any, params: dict, n_categories: int) -> Any:
    hyper = None
    if method == "empirical_bayes":
        if counts is None:
            raise ValueError(
                "method='empirical_bayes' estimates the prior from every item's counts in "
                "memory; data read in chunks (chunk_items=, a dask-backed DataArray) take "
                "method='exact' with a fixed prior"
            )
        hyper = {
            k: np.asarray(v, dtype=np.float64)
            for k, v in entry.module.empirical_bayes(counts, **params).items()
        }
    return np.asarray(
        entry.module.concentration(hyper, n_categories=n_categories, **params), dtype=np.float64
    )


def conjugate_setup(
    model: str, method: str | None, data: Any, kwargs: dict[str, Any]
) -> tuple[Any, np.ndarray, str]:
    """Counts (in memory), the fixed concentration and the method of a conjugate fit."""

    entry, method = _conjugate_entry(model, method)
    params = model_parameters(entry, kwargs, "score")  # reader options: TypeError
    counts = as_counts(data)  # a path: TypeError naming the reader
    conc = _concentration(entry, method, counts, params, counts.sizes["category"])
    return counts, conc, method


def seed_sequence(random_seed: Any) -> np.random.SeedSequence:
    if isinstance(random_seed, np.random.Generator):
        return np.random.SeedSequence(int(random_seed.integers(2**63)))
    if isinstance(random_seed, np.random.SeedSequence):
        return random_seed
    if random_seed is not None and not isinstance(random_seed, int | np.integer):
        raise TypeError(
            "random_seed must be an int, a numpy.random.Generator or None, but got "
            f"{type(random_seed).__name__}"
        )
    return np.random.SeedSequence(random_seed)


def score(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    method: str | None = None,
    measure: str = "amb",
    threshold: float = 0.4,
    hdi_prob: float | None = None,
    mcse: float = MCSE_TARGET,
    random_seed: Any = None,
    chunk_items: int | None = None,
    approximate: bool = True,
    **kwargs: Any,
) -> pd.DataFrame:
    """Per-item ambiguity table of a conjugate model, without per-item draws.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame, numpy.ndarray, str or pathlib.Path
        Counts already read, as for :func:`ambppl.fit` (:func:`ambppl.data.as_counts`); a
        path only with ``chunk_items`` (the out-of-core route below).
    model : str, default "dirichlet_categorical"
        A catalog model with a conjugate route (``dirichlet_categorical``, or
        ``hierarchical_dirichlet`` with ``method="empirical_bayes"``).
    method : {"exact", "empirical_bayes"}, optional
        The model's route; default its first method (it must be conjugate).
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure to summarize (variable names such as ``"amb_modified"`` accepted).
    threshold : float, default 0.4
        ``p_above`` is P(measure > threshold).
    hdi_prob : float, optional
        HDI probability; default ArviZ's ``rcParams["stats.ci_prob"]`` (0.89 unless changed).
    mcse : float, default 0.005
        Bound on the Monte Carlo standard error of ``p_above``: each distinct count vector
        gets as many exact draws as that needs, at most ``ceil(0.25 / mcse**2)``.
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same table.
    chunk_items : int, optional
        Read a zarr store or a Parquet file of counts (``data`` its path) lazily, in chunks of
        about this many items (whole Parquet row groups; a zarr store keeps its own chunks),
        and return a :class:`LazyScore` (:func:`ambppl.data.read_in_chunks`). A dask-backed
        count DataArray, or counts opened by :func:`ambppl.data.open_counts_in_chunks`, are
        always scored lazily. With ``format="long"`` a CSV/TSV/Parquet file of answers too
        large for memory is counted with dask block by block (only the item x category counts
        are held; items in sorted order) and scored in memory.
    approximate : bool, default True
        For amb and the modified measure: take ``p_above`` and the HDI from the
        moment-matched approximation (:func:`ambppl.approximate_distribution`) on the rows
        where its accuracy map bounds the CDF error by ``mcse`` (then ``draws`` is 0 and
        ``approx_error`` holds that bound); exact draws everywhere else.
    **kwargs
        The model's parameters (``prior=0.5``); with ``chunk_items`` also the options of that
        read (``format=``, ``item=``, ``label=``, ``cant_solve=``, ``categories=``, ...).

    Returns
    -------
    pandas.DataFrame or LazyScore
        One row per item (index ``item``, the data's order) with :data:`SCORE_COLUMNS`:
        the columns of :func:`ambppl.summarize` for an exact fit (``n_answers`` as integers),
        each Monte Carlo column with its standard error (``*_mcse``; 0 where the column is a
        closed form or approximated), ``approx_error`` (the mapped bound on the CDF error where
        the approximation was used, else 0) and ``draws``, the exact draws behind the row's
        Monte Carlo columns (0 where approximated). For data read in chunks a
        :class:`LazyScore`: the same columns as a lazy dask DataFrame (items in the data's
        order) and the ``attrs``.
        ``mean`` and ``sd`` are the closed forms where they exist (then equal to
        ``exact_mean`` and ``exact_sd``), else draw estimates. ``attrs`` holds ``measure``,
        ``threshold``, ``hdi_prob``, ``method``, ``model``, ``prior`` (the concentration),
        ``mcse`` and ``n_distinct``.

    Raises
    ------
    ValueError
        For a model or method without a conjugate route (fit those with :func:`ambppl.fit`),
        an unknown measure, ``threshold``/``hdi_prob`` outside (0, 1), ``mcse`` not positive,
        or bad data (as :func:`ambppl.fit`); and before drawing, for exact draws beyond the
        guards of :mod:`ambppl.internal.limits`: a ``mcse`` whose ``ceil(0.25 / mcse**2)``
        draws of one count vector cannot be held in memory, or draws estimated to take more
        than about a minute (:data:`SECONDS_PER_VARIATE` per category and draw: the pilot
        before any draw, many categories suspected of being free text or ids; the draws the
        pilot asks for after it).
    TypeError
        For a ``random_seed`` that is no int, Generator or None; in memory (no
        ``chunk_items``) for a path or reader options (the message names
        :func:`ambppl.read_annotations`, which takes them).

    Notes
    -----
    Items with equal count vectors have the same posterior, ``Dirichlet(a + counts)``, so
    they share one row of statistics (``numpy.unique(..., axis=0, return_inverse=True)``):
    the cost grows with the number of distinct vectors, not of items. Mean and sd are
    :func:`ambppl.dirichlet_mean` / :func:`ambppl.dirichlet_var` (paper eqs.
    ``expr_amb_final`` and ``expr_amb_var_final``) where they exist. ``p_above`` and the HDI
    (the shortest interval of the sorted draws) come from exact Dirichlet draws: a pilot of
    1000 draws per distinct vector estimates ``p``; the vector then gets
    ``p (1 - p) / mcse**2`` draws in all (the pilot's kept), with ``p`` moved three pilot
    standard errors towards 1/2, and any row still above the bound is redrawn afresh with
    ``0.25 / mcse**2`` draws,
    so ``p_above_mcse <= mcse`` on every row. The HDI ends' MCSE is the order-statistic
    standard error of a sample quantile at their rank. Rows of items with equal counts are
    identical (shared Monte Carlo error), which is why this is only offered for per-item
    summaries and never for joint quantities across items. Draws run in batches of about
    :data:`BATCH_BYTES` on ``ambppl.inference.fitting.usable_cpus()`` threads (numpy's gamma sampler
    releases the GIL); each batch has its own seed, so the table does not depend on the
    number of threads.

    Out of core (``chunk_items``, or dask-backed counts): two dask passes over the chunks of
    items, on whatever dask scheduler is active (a ``distributed.Client`` makes it a cluster):
    the distinct count vectors with their frequencies (a tree reduction), summarized in memory
    as above, then every chunk's rows looked up in that summary (one int64 key per count
    vector); nothing per item is held. The distinct vectors are sorted as
    ``numpy.unique(..., axis=0)`` sorts them, so the same seed gives the same table in memory
    and out of core.

    References
    ----------
    .. [1] "Bayesian inference of ambiguity in categorical annotations", section 3.
    .. [2] Vehtari et al. (2021), "Rank-normalization, folding, and localization", Bayesian
       Analysis 16(2) (MCSE of quantiles).

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> counts = ambppl.read_annotations(np.array([[5, 0, 0], [2, 2, 1], [5, 0, 0]]),
    ...                                  categories=["yes", "no", "cs"], cant_solve="cs")
    >>> table = ambppl.score(counts, random_seed=1)
    >>> table.attrs["n_distinct"], round(float(table.loc[0, "mean"]), 4)  # 5/16: closed form
    (2, 0.3125)
    >>> bool((table["p_above_mcse"] <= 0.005).all()), int(table.loc[0, "n_answers"])
    (True, 5)
    """
    import arviz_base
    import pandas as pd

    measure = measure_name(measure)
    threshold = check_prob(threshold, "threshold")
    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    hdi_prob = check_prob(hdi_prob, "hdi_prob")
    mcse = check_positive_scalar(mcse, "mcse")
    if mcse >= 0.5:
        raise ValueError(f"mcse must be below 0.5 (a probability's sd), but got {mcse!r}")
    seed = seed_sequence(random_seed)
    settings = {"measure": measure, "threshold": threshold, "hdi_prob": hdi_prob, "mcse": mcse}
    lazy = _lazy_counts(data)
    if lazy is None and chunk_items is not None:  # a path: counts opened lazily, or answers
        read = {k: kwargs.pop(k) for k in CHUNK_READ_OPTIONS if k in kwargs}  # counted
        data = read_in_chunks(data, chunk_items=chunk_items, **read)
        lazy = data if isinstance(data, LazyCounts) else None
    if lazy is not None:
        return _score_lazy(lazy, model, method, kwargs, settings, seed, approximate)
    counts, conc, method = conjugate_setup(model, method, data, kwargs)
    values, cs = count_values(counts)
    distinct, inverse = np.unique(values, axis=0, return_inverse=True)
    columns = _columns(distinct, conc, cs, settings, seed, approximate)
    inverse = inverse.reshape(-1)
    table = pd.DataFrame(
        {name: columns[name][inverse] for name in SCORE_COLUMNS},
        index=pd.Index(counts["item"].values, name="item"),
    )
    table.attrs.update(
        {
            **settings,
            "method": method,
            "model": model,
            "prior": [float(a) for a in conc],
            "n_distinct": len(distinct),
        }
    )
    return table


def _columns(
    distinct: np.ndarray,
    conc: np.ndarray,
    cs: int | None,
    settings: dict,
    seed: Any,
    approximate: bool,
) -> dict[str, Any]:
    """Every score column for each distinct count vector (categorical ``measure``)."""
    import pandas as pd

    columns = summarize_distinct(
        distinct,
        conc,
        cs=cs,
        seed=seed,
        workers=usable_cpus(),
        approximate=approximate,
        **settings,
    )
    columns["measure"] = pd.Categorical([settings["measure"]] * len(distinct))
    columns["threshold"] = np.full(len(distinct), settings["threshold"])
    return columns


def _lazy_counts(data: Any) -> LazyCounts | None:
    """The counts read in chunks behind ``data`` (None for data in memory)."""
    if isinstance(data, LazyCounts):
        return data
    if is_dataarray(data) and data.chunks:
        return from_dataarray(data)
    return None


def _score_lazy(
    lazy: Any,
    model: str,
    method: Any,
    kwargs: dict[str, Any],
    settings: dict,
    seed: Any,
    approximate: bool,
) -> Any:
    """Two dask passes: the distinct vectors (computed now), then the lazy table."""

    entry, method = _conjugate_entry(model, method)
    rest = {k: v for k, v in kwargs.items() if k in READ_OPTIONS}  # of the chunked read
    params = model_parameters(entry, {k: v for k, v in kwargs.items() if k not in rest}, "score")
    lazy = lazy.relabel(rest.pop("categories", None))
    label = rest.pop("cant_solve", lazy.cant_solve)
    if rest:
        raise ValueError(
            f"options {sorted(rest)!r} do not apply to counts read in chunks; they take "
            "categories=, cant_solve= and item= (Parquet)"
        )
    if isinstance(label, int | np.integer) and not isinstance(label, bool):
        cs = check_cant_solve(int(label), len(lazy.categories))
    else:
        cs = None if label is None else cant_solve_position(label, lazy.categories)
    conc = _concentration(entry, method, None, params, len(lazy.categories))
    blocks, item_blocks = lazy.blocks()
    distinct, freq = distinct_vectors(blocks)
    if len(distinct) == 0:
        raise ValueError("counts must have at least one item, but got 0 items")
    check_counts(distinct, "counts")
    if np.any(distinct.sum(axis=1) == 0):
        raise ValueError(
            "every item must have at least one answer, but "
            f"{int(freq[distinct.sum(axis=1) == 0].sum())} item(s) have none; remove those "
            "items or supply their answers"
        )
    columns = _columns(distinct, conc, cs, settings, seed, approximate)
    lookup = Lookup(distinct, columns)
    table = lazy_table(blocks, item_blocks, lookup, SCORE_COLUMNS)
    attrs = {
        **settings,
        "method": method,
        "model": model,
        "prior": [float(a) for a in conc],
        "n_distinct": len(distinct),
        "n_items": int(freq.sum()),
    }
    return LazyScore(table, attrs, (blocks, item_blocks, lookup))


@dataclass
class LazyScore:
    """The score table of counts read in chunks: nothing per item is computed yet.

    Attributes
    ----------
    table : dask.dataframe.DataFrame
        One partition per chunk of items, the columns of :data:`SCORE_COLUMNS` (index
        ``item``), in the items' order.
    attrs : dict
        What :func:`score` puts in a table's ``attrs``, plus ``n_items``.
    """

    table: Any
    attrs: dict[str, Any]
    parts: Any = field(default=None, repr=False)

    def compute(self) -> pd.DataFrame:
        """The whole table in memory (a pandas DataFrame with ``attrs``)."""
        out = self.table.compute()
        out.attrs.update(self.attrs)
        return out

    def to_parquet(self, path: Any) -> None:
        """Write the table chunk by chunk: a Parquet dataset (a folder of part files
        ``part.<k>.parquet`` that ``pandas.read_parquet`` reads as one table, index
        ``item``), one dask task per chunk that reads its counts, looks up its rows and
        writes them straight to Arrow."""
        import dask

        blocks, item_blocks, lookup = self.parts
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        (first_items,) = dask.compute(item_blocks[0])
        schema = arrow_schema(lookup, SCORE_COLUMNS, first_items)
        tasks = [
            dask.delayed(write_part)(
                b, i, lookup, SCORE_COLUMNS, schema, str(folder / f"part.{k}.parquet")
            )
            for k, (b, i) in enumerate(zip(blocks, item_blocks, strict=True))
        ]
        dask.compute(*tasks)
