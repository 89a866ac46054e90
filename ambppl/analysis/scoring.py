"""``score``: the per-item ambiguity table of any catalog model; it picks its route itself.

Under a model whose every item has the posterior ``Dirichlet(a + counts_i)`` with one fixed
concentration ``a`` (``dirichlet_categorical``; ``hierarchical_dirichlet`` with
``method="empirical_bayes"``), an item's posterior depends on its data only through its count
vector, so :func:`score` summarizes each distinct count vector once and broadcasts the rows
back to the items (:mod:`ambppl.analysis.distinct`; in memory, or out of core with dask for
counts read in chunks): no draw is stored per item. Every other model and method
(``collapsed``, ``nuts``, models of answers such as ``rater_effects``) is fitted with
:func:`ambppl.fit` and summarized with :func:`ambppl.summarize`. The caller passes the data
object and the settings; which route runs, and which keywords it takes, is decided here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from ambppl.analysis.distinct import (
    CONJUGATE_METHODS,
    _concentration,
    _conjugate_entry,
    conjugate_setup,
    distinct_columns,
    distinct_table,
    seed_sequence,
)
from ambppl.analysis.lazy_score import (
    Lookup,
    arrow_schema,
    distinct_vectors,
    empty_items,
    first_items,
    lazy_table,
    write_part,
)
from ambppl.analysis.summary import COLUMNS, summarize
from ambppl.data.contract import READ_OPTIONS, as_counts, refuse_path, refuse_read_options
from ambppl.data.lazy import LazyCounts, from_dataarray
from ambppl.inference.catalog import ModelEntry, get_model, model_parameters
from ambppl.inference.fitting import POINT_METHODS, choose_method, fit_with_progress
from ambppl.internal.checks import (
    SHOWN,
    check_counts,
    check_option,
    check_positive_scalar,
    check_prob,
    check_progress,
    show_values,
)
from ambppl.internal.messages import say
from ambppl.internal.swap import folder_in_place
from ambppl.maths.measures import measure_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "CONJUGATE_METHODS",
    "MCSE_TARGET",
    "SCORE_COLUMNS",
    "LazyScore",
    "is_conjugate_route",
    "score",
]

#: Default bound on the Monte Carlo standard error of ``p_above`` (P(measure > threshold)).
MCSE_TARGET = 0.005

#: Columns of :func:`score` on the conjugate route, in order: those of
#: :func:`ambppl.summarize` for an exact fit, the Monte Carlo standard error of each column
#: that may come from draws, and the draws used.
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

#: Keywords of :func:`score` that only the route through :func:`ambppl.fit` uses.
FIT_KEYWORDS = ("draws", "chains", "sampler", "sample_kwargs", "var_names", "progressbar")

#: Keywords of :func:`score` that only the conjugate route (distinct count vectors) uses.
CONJUGATE_KEYWORDS = ("mcse", "approximate")


def score(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    method: str | None = None,
    measure: str = "amb",
    threshold: float = 0.4,
    hdi_prob: float | None = None,
    mcse: float | None = None,
    approximate: bool | None = None,
    draws: int | None = None,
    chains: int | None = None,
    sampler: str | None = None,
    sample_kwargs: dict[str, Any] | None = None,
    var_names: Sequence[str] | str | None = None,
    progressbar: bool = False,
    random_seed: Any = None,
    progress: Callable[[str], Any] | None = None,
    unused: str = "raise",
    **kwargs: Any,
) -> pd.DataFrame | LazyScore:
    """Per-item ambiguity table of any catalog model and method.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame, numpy.ndarray or LazyCounts
        Annotations already read, as for :func:`ambppl.fit`: counts
        (:func:`ambppl.read_annotations`, :func:`ambppl.data.as_counts`), the answers table of
        :func:`ambppl.data.read_long` for a model of answers (e.g. ``rater_effects``), or
        counts read in chunks (:func:`ambppl.data.read_in_chunks`,
        :func:`ambppl.data.open_counts_in_chunks`, a dask-backed DataArray). Never a path:
        read it first (a file too large for memory with
        ``ambppl.data.read_in_chunks(path, chunk_items=...)``).
    model : str, default "dirichlet_categorical"
        A catalog model (:func:`ambppl.list_models`).
    method : str, optional
        One of the model's methods; default its first (or its NUTS method when ``sampler``
        or ``sample_kwargs`` is given). The conjugate methods (``exact``, ``empirical_bayes``)
        of a model of counts score from distinct count vectors; every other method fits.
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure to summarize (variable names such as ``"amb_modified"`` accepted).
    threshold : float, default 0.4
        ``p_above`` is P(measure > threshold).
    hdi_prob : float, optional
        HDI probability; default ArviZ's ``rcParams["stats.ci_prob"]`` (0.89 unless changed).
    mcse : float, optional
        Conjugate route only: bound on the Monte Carlo standard error of ``p_above``; each
        distinct count vector gets as many exact draws as that needs, at most
        ``ceil(0.25 / mcse**2)``. Default :data:`MCSE_TARGET` (0.005).
    approximate : bool, optional
        Conjugate route only: for amb and the modified measure take ``p_above`` and the HDI
        from the moment-matched approximation (:func:`ambppl.approximate_distribution`) on
        the rows where its accuracy map bounds the CDF error by ``mcse`` (then ``draws`` is 0
        and ``approx_error`` holds that bound); exact draws everywhere else. Default True.
    draws, chains : int, optional
        Fit route only: draws per chain and chains of :func:`ambppl.fit` (default: fit's,
        the model's own for NUTS, else 1000 and 4).
    sampler : str, optional
        Fit route only: the NUTS implementation (as for :func:`ambppl.fit`).
    sample_kwargs : dict, optional
        Fit route only: further arguments of ``pymc.sample`` (``tune``, ``target_accept``).
    var_names : str or sequence of str, optional
        Fit route only: the per-item variables the fit stores. Default: only the summarized
        measure's variable (``q`` costs K times as much memory), except with
        ``method="nuts"``, which stores every variable so that its convergence check covers
        them all.
    progressbar : bool, default False
        Fit route only: show the sampler's progress bar.
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same table.
    progress : callable, optional
        Called with one line of text before and after the long step (what is scored or
        fitted, and in how many seconds); the command line prints them on stderr.
    unused : {"raise", "ignore"}, default "raise"
        What to do with keywords that the chosen route does not use (``mcse`` and
        ``approximate`` on the fit route; ``draws``, ``chains``, ``sampler``,
        ``sample_kwargs``, ``var_names`` and ``progressbar=True`` on the conjugate route):
        one ValueError naming them, or leave them unused (for callers that pass one set of
        settings whatever the route, such as the ``ambppl score`` command).
    **kwargs
        The model's parameters (``prior=0.5``); with counts read in chunks also
        ``categories=`` and ``cant_solve=`` (relabelling the :class:`LazyCounts`).

    Returns
    -------
    pandas.DataFrame or LazyScore
        One row per item (index ``item``, the data's order). Conjugate route: the columns
        :data:`SCORE_COLUMNS`: those of :func:`ambppl.summarize` for an exact fit
        (``n_answers`` as integers), each Monte Carlo column with its standard error
        (``*_mcse``; 0 where the column is a closed form or approximated), ``approx_error``
        (the mapped bound on the CDF error where the approximation was used, else 0) and
        ``draws``, the exact draws behind the row (0 where approximated); ``mean`` and
        ``sd`` are the closed forms where they exist, else draw estimates; ``attrs`` holds
        ``measure``, ``threshold``, ``hdi_prob``, ``method``, ``model``, ``prior`` (the
        concentration), ``mcse`` and ``n_distinct``. For counts read in chunks a
        :class:`LazyScore`: the same columns as a lazy dask DataFrame and the ``attrs``
        (plus ``n_items``). Fit route: :func:`ambppl.summarize` of the fit (its columns, with
        ``ess_bulk`` and ``r_hat`` after MCMC, and its ``attrs``).

    Raises
    ------
    ValueError
        For an unknown model, method, measure or ``unused``; ``threshold``/``hdi_prob``
        outside (0, 1); ``mcse`` not in (0, 0.5); keywords of the other route (with
        ``unused="raise"``); ``method="empirical_bayes"`` on counts read in chunks; bad data
        or parameters (as :func:`ambppl.fit`); items without answers (an all-zero row of
        counts: refused on every route, in memory and out of core alike, as the readers
        refuse them, although :func:`ambppl.fit` takes them and gives them the prior); and
        before drawing, exact draws beyond the guards of :mod:`ambppl.internal.limits`
        (memory of ``ceil(0.25 / mcse**2)`` draws of one count vector; about a minute of
        draws, many categories suspected of being free text or ids) or a fit beyond the
        memory available (:func:`ambppl.fit`).
    TypeError
        For a ``random_seed`` that is no int, Generator or None; for a path (the message
        names :func:`ambppl.read_annotations` and :func:`ambppl.data.read_in_chunks`, or
        :func:`ambppl.data.read_long` for a model of answers) or ``chunk_items=`` (the
        keyword of :func:`ambppl.data.read_in_chunks`); for reader options with data in
        memory; counts given to a model of answers.

    Warns
    -----
    ambppl.ConvergenceWarning
        After NUTS on the fit route, as :func:`ambppl.fit`.

    Notes
    -----
    Conjugate route: items with equal count vectors have the same posterior,
    ``Dirichlet(a + counts)``, so they share one row of statistics
    (``numpy.unique(..., axis=0, return_inverse=True)``): the cost grows with the number of
    distinct vectors, not of items. Mean and sd are :func:`ambppl.dirichlet_mean` /
    :func:`ambppl.dirichlet_var` (paper eqs. ``expr_amb_final`` and ``expr_amb_var_final``)
    where they exist. ``p_above`` and the HDI (the shortest interval of the sorted draws) come
    from exact Dirichlet draws: a pilot of 1000 draws per distinct vector estimates ``p``;
    the vector then gets ``p (1 - p) / mcse**2`` draws in all (the pilot's kept), with ``p``
    moved three pilot standard errors towards 1/2, and any row still above the bound is
    redrawn afresh with ``0.25 / mcse**2`` draws, so ``p_above_mcse <= mcse`` on every row.
    The HDI ends' MCSE is not a sample quantile's: where the shortest interval starts is itself
    estimated, so an interior end moves at the cube-root rate ``n ** (-1 / 3)``; its MCSE is the
    spread of the shortest intervals of 10 disjoint batches of the draws (fewer below 200 draws,
    at least 20 draws each), scaled by ``(batch / draws) ** (1 / 3)`` (subsampling; a quantile's
    order-statistic error for an end at the edge of the support and for fewer than 40 draws).
    Rows of items with equal counts are identical (shared Monte Carlo error), which is why this
    is only offered for per-item summaries and never for joint quantities across items. Draws
    run in batches on ``usable_cpus()`` threads (numpy's gamma sampler releases the GIL); each
    batch has its own seed, so the table does not depend on the number of threads.

    Out of core (counts read in chunks): two dask passes over the chunks
    of items, on whatever dask scheduler is active (a ``distributed.Client`` makes it a
    cluster): the distinct count vectors with their frequencies (a tree reduction),
    summarized in memory as above, then every chunk's rows looked up in that summary (one
    int64 key per count vector); nothing per item is held. The distinct vectors are sorted as
    ``numpy.unique(..., axis=0)`` sorts them, so the same seed gives the same table in memory
    and out of core when the categories are in the same order. :func:`ambppl.read_annotations`
    moves the can't-solve category last, :func:`ambppl.data.read_in_chunks` keeps the file's
    column order: read from a file whose can't-solve column is not last, the two agree in the
    closed forms and, in the columns from draws (``p_above``, the HDI, ``draws``), within
    their Monte Carlo error. On the fit route, counts read in chunks are computed into memory first
    (the fit holds every item's draws anyway).

    Fit route: :func:`ambppl.fit` (its memory check counts the summary made next) and
    :func:`ambppl.summarize` of the result.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.
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

    Other methods are fitted; the keywords of the other route are refused:

    >>> ambppl.score(counts, method="nuts", mcse=0.01)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: mcse= applies to the conjugate route ...

    A path is read first (a file too large for memory by
    :func:`ambppl.data.read_in_chunks`, whose :class:`LazyCounts` ``score`` takes):

    >>> ambppl.score("big.zarr")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: score takes annotations already read, ...chunk_items=...), ...)
    """
    import arviz_base

    entry = get_model(model)
    if entry.info.get("data", "counts") == "long":
        how = f"ambppl.score(ambppl.data.read_long({{path}}, ...), {entry.name!r}, ...)"
    else:
        how = (
            "ambppl.score(ambppl.read_annotations({path}, ...), ...), or for a file too large "
            "for memory ambppl.score(ambppl.data.read_in_chunks({path}, chunk_items=...), ...)"
        )
    refuse_path(data, how, "score")
    if "chunk_items" in kwargs:
        raise TypeError(
            "score takes counts already read in chunks, so chunk_items= does not go to it; "
            "read the file with ambppl.data.read_in_chunks(path, chunk_items=...) and give "
            "score what it returns"
        )
    method = choose_method(entry, method, sampler, sample_kwargs)
    conjugate = is_conjugate_route(entry, method)
    options = {
        "draws": draws,
        "chains": chains,
        "sampler": sampler,
        "sample_kwargs": sample_kwargs,
        "var_names": var_names,
        "progressbar": progressbar,
    }
    if check_option(unused, ("raise", "ignore"), "unused") == "raise":
        given = {**options, "mcse": mcse, "approximate": approximate}
        _refuse_unused(given, conjugate, entry.name, method)
    measure = measure_name(measure)
    threshold = check_prob(threshold, "threshold")
    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    settings = {
        "measure": measure,
        "threshold": threshold,
        "hdi_prob": check_prob(hdi_prob, "hdi_prob"),
    }
    seed = seed_sequence(random_seed)
    check_progress(progress)
    if not isinstance(approximate, bool | None):
        raise TypeError(f"approximate must be True, False or None, but got {approximate!r}")
    if not conjugate:
        return _score_by_fit(data, entry, method, kwargs, settings, random_seed, options, progress)
    settings["mcse"] = _check_mcse(MCSE_TARGET if mcse is None else mcse)
    approximate = True if approximate is None else approximate
    lazy = _lazy_counts(data)
    if lazy is not None:
        return _score_lazy(lazy, entry.name, method, kwargs, settings, seed, approximate, progress)
    return _score_in_memory(data, entry.name, method, kwargs, settings, seed, approximate, progress)


def is_conjugate_route(entry: Any, method: str) -> bool:
    """Whether :func:`score` scores ``entry`` (a catalog model) with ``method`` from its
    distinct count vectors (a model of counts with a conjugate method), not through a fit.

    Parameters
    ----------
    entry : ambppl.inference.catalog.ModelEntry
        The catalog model.
    method : str
        The fit method, already checked against the model's.

    Returns
    -------
    bool

    Examples
    --------
    >>> from ambppl.inference.catalog import get_model
    >>> is_conjugate_route(get_model("dirichlet_categorical"), "exact")
    True
    >>> is_conjugate_route(get_model("hierarchical_dirichlet"), "collapsed")
    False
    """
    return entry.info.get("data", "counts") == "counts" and method in CONJUGATE_METHODS


def _check_mcse(mcse: Any) -> float:
    mcse = check_positive_scalar(mcse, "mcse")
    if mcse >= 0.5:
        raise ValueError(f"mcse must be below 0.5 (a probability's sd), but got {mcse!r}")
    return mcse


def _refuse_unused(given: dict[str, Any], conjugate: bool, model: str, method: str) -> None:
    """One ValueError naming the keywords given that the chosen route does not use."""

    names = FIT_KEYWORDS if conjugate else CONJUGATE_KEYWORDS
    # not given: None, and the defaults progressbar=False and sample_kwargs={} (no options)
    found = [
        name
        for name in names
        if given[name] is not None
        and (name not in ("progressbar", "sample_kwargs") or bool(given[name]))
    ]
    if not found:
        return
    listed = ", ".join(f"{name}=" for name in found)
    verb = "applies" if len(found) == 1 else "apply"
    if conjugate:
        raise ValueError(
            f"{listed} {verb} to the route through ambppl.fit (methods that are not "
            f"{' or '.join(CONJUGATE_METHODS)}, models of answers), but model {model!r} with "
            f"method {method!r} is scored from its distinct count vectors, with as many "
            f"exact draws as mcse= needs; drop {listed} or choose another method"
        )
    if method in POINT_METHODS:  # one point (the mode): no draws, so nothing for mcse= to bound
        fitted = (
            "gives one point, the posterior mode (ambppl.fit, then ambppl.summarize): no "
            f"draws, so no Monte Carlo error to bound; drop {listed}"
        )
    else:
        fitted = (
            f"is fitted (ambppl.fit, then ambppl.summarize); drop {listed} or set the fit's "
            "draws= and chains="
        )
    raise ValueError(
        f"{listed} {verb} to the conjugate route (methods {' and '.join(CONJUGATE_METHODS)} "
        f"of a model of counts, scored from distinct count vectors), but model {model!r} with "
        f"method {method!r} {fitted}"
    )


def _score_in_memory(
    data: Any,
    model: str,
    method: str,
    kwargs: dict[str, Any],
    settings: dict[str, Any],
    seed: np.random.SeedSequence,
    approximate: bool,
    progress: Callable[[str], Any] | None,
) -> pd.DataFrame:
    """The conjugate route in memory: the table of the distinct count vectors, broadcast."""

    counts, conc, method = conjugate_setup(model, method, data, kwargs)
    _refuse_items_without_answers(counts)
    if progress is not None:
        progress(
            f"scoring {counts.sizes['item']} items x {counts.sizes['category']} categories "
            f"with {model} ({method}; exact draws per distinct count vector, MCSE <= "
            f"{settings['mcse']:g})"
        )
    start = time.perf_counter()
    table = distinct_table(counts, conc, SCORE_COLUMNS, settings, seed, approximate=approximate)
    n_distinct = table.attrs["n_distinct"]
    table.attrs = {
        **settings,
        "method": method,
        "model": model,
        "prior": [float(a) for a in conc],
        "n_distinct": n_distinct,
    }
    if progress is not None:
        progress(
            f"scored {len(table)} items ({n_distinct} distinct count vectors) in "
            f"{time.perf_counter() - start:.1f} s"
        )
    return table


def _without_answers(shown: list[Any], n_empty: int) -> ValueError:
    """The error for items without answers (``shown``: the first of them), on every route."""
    return ValueError(
        f"every item must have at least one answer, but {n_empty} item(s) "
        f"{show_values(shown, n_empty)} have none; remove those items or supply their answers"
    )


def _refuse_items_without_answers(counts: xr.DataArray) -> None:
    """Refuse counts in memory with an all-zero row, as the route of counts read in chunks
    refuses them (in its pass over the distinct count vectors)."""
    empty = np.asarray(counts.values).sum(axis=1) == 0
    if np.any(empty):
        items = np.asarray(counts["item"].values)[empty][:SHOWN]
        shown = [v.item() if isinstance(v, np.generic) else v for v in items]
        raise _without_answers(shown, int(empty.sum()))


def _score_by_fit(
    data: Any,
    entry: ModelEntry,
    method: str,
    kwargs: dict[str, Any],
    settings: dict[str, Any],
    random_seed: Any,
    options: dict[str, Any],
    progress: Callable[[str], Any] | None,
) -> pd.DataFrame:
    """The fit route: :func:`ambppl.fit`, then :func:`ambppl.summarize`."""

    lazy = _lazy_counts(data)
    if lazy is not None:  # the fit holds every item in memory anyway
        lazy, _, kwargs = _lazy_options(lazy, kwargs)
        data = lazy.compute()
    long = entry.info.get("data", "counts") == "long"
    reader = "ambppl.data.read_long" if long else "ambppl.read_annotations"
    refuse_read_options(kwargs, "score", reader)
    if not long:  # as the conjugate route (answers give every item one at least)
        data = as_counts(data)
        _refuse_items_without_answers(data)
    result = fit_with_progress(
        data,
        entry.name,
        method=method,
        draws=options["draws"],
        chains=options["chains"],
        measure=settings["measure"],
        progress=progress,
        random_seed=random_seed,
        sampler=options["sampler"],
        sample_kwargs=options["sample_kwargs"] or None,
        var_names=options["var_names"],
        progressbar=bool(options["progressbar"]),
        **kwargs,
    )
    return summarize(result, **settings)


def _lazy_counts(data: Any) -> LazyCounts | None:
    """The counts read in chunks behind ``data`` (None for data in memory)."""
    if isinstance(data, LazyCounts):
        return data
    if isinstance(data, xr.DataArray) and data.chunks:
        return from_dataarray(data)
    return None


def _lazy_options(
    lazy: LazyCounts, kwargs: dict[str, Any]
) -> tuple[LazyCounts, int | None, dict[str, Any]]:
    """Counts read in chunks with the options of that read among ``kwargs`` applied
    (``categories=``, ``cant_solve=``): the counts, the can't-solve position and the rest
    of ``kwargs`` (the model's parameters)."""
    rest = {k: v for k, v in kwargs.items() if k in READ_OPTIONS}  # of the chunked read
    params = {k: v for k, v in kwargs.items() if k not in rest}
    lazy = lazy.relabel(rest.pop("categories", None))
    if "cant_solve" in rest:  # a label first, else a position (LazyCounts.with_cant_solve)
        lazy = lazy.with_cant_solve(rest.pop("cant_solve"))
    if rest:
        raise ValueError(
            f"options {sorted(rest)!r} do not apply when scoring counts read in chunks, which "
            "takes categories= and cant_solve=; give item= to ambppl.data.read_in_chunks"
        )
    cs = None if lazy.cant_solve is None else lazy.categories.index(lazy.cant_solve)
    return lazy, cs, params


def _score_lazy(
    lazy: LazyCounts,
    model: str,
    method: str,
    kwargs: dict[str, Any],
    settings: dict[str, Any],
    seed: np.random.SeedSequence,
    approximate: bool,
    progress: Callable[[str], Any] | None,
) -> LazyScore:
    """Two dask passes: the distinct vectors (computed now), then the lazy table."""

    entry, method = _conjugate_entry(model, method)
    if method == "empirical_bayes":
        _refuse_empirical_bayes(entry)
    lazy, cs, kwargs = _lazy_options(lazy, kwargs)
    params = model_parameters(entry, kwargs, "score")
    conc = _concentration(entry, method, None, params, lazy.categories)
    start = time.perf_counter()
    blocks, item_blocks = lazy.blocks()
    if progress is not None:
        progress(
            f"scoring {len(blocks)} chunks of counts with {model} ({method}; exact draws per "
            f"distinct count vector, MCSE <= {settings['mcse']:g})"
        )
    distinct, freq = distinct_vectors(blocks)
    if len(distinct) == 0:
        raise ValueError("counts must have at least one item, but got 0 items")
    check_counts(distinct, "counts")
    if np.any(distinct.sum(axis=1) == 0):
        n_empty = int(freq[distinct.sum(axis=1) == 0].sum())
        raise _without_answers(empty_items(blocks, item_blocks, SHOWN), n_empty)
    columns = distinct_columns(distinct, conc, cs, settings, seed, approximate)
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
    if progress is not None:
        progress(
            f"{attrs['n_items']} items, {attrs['n_distinct']} distinct count vectors "
            f"summarized in {time.perf_counter() - start:.1f} s"
        )
    return LazyScore(table, attrs, (blocks, item_blocks, lookup))


def _refuse_empirical_bayes(entry: ModelEntry) -> None:
    """The ValueError for ``method="empirical_bayes"`` on counts read in chunks, in the
    caller's words (:func:`ambppl.internal.messages.say`)."""
    fits = [m for m in entry.info["methods"] if m not in CONJUGATE_METHODS]
    fit = say(
        f"or fit them with method={fits[0]!r} (the counts are then computed into memory)",
        f"or fit them with --method {' or '.join(fits)} (the counts are then read into memory)",
    )
    raise ValueError(
        say("method='empirical_bayes'", "--method empirical_bayes")
        + " estimates the prior from every item's counts in memory, but these counts are "
        + say(
            "read in chunks (ambppl.data.read_in_chunks, a dask-backed DataArray); read them "
            "into memory (ambppl.read_annotations) for it, score them in chunks with a fixed "
            "prior (model='dirichlet_categorical', method='exact')",
            "read in chunks (a zarr store, a Parquet file of counts); score them in chunks "
            "with a fixed prior (--model dirichlet_categorical --method exact)",
        )
        + (f" {fit}" if fits else "")
    )


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

    def to_parquet(self, path: Any, *, overwrite: bool = False) -> None:
        """Write the table chunk by chunk as a Parquet dataset.

        Parameters
        ----------
        path : str or os.PathLike
            The folder to write: part files ``part.<k>.parquet``, one per chunk of items
            (empty chunks give empty parts), that ``pandas.read_parquet`` reads as one
            table, index ``item``. Missing parent folders are created.
        overwrite : bool, default False
            Replace an existing ``path`` (the whole folder, or a file): the new dataset is
            written beside it and moved onto it only when complete, as ``ambppl score
            --force`` does; without it an existing ``path`` raises.

        Raises
        ------
        FileExistsError
            If ``path`` exists and ``overwrite`` is false (no part of the old dataset is
            left mixed with the new one), checked before the work and again before the
            move: a ``path`` that appeared meanwhile is left as it is.
        TypeError
            If ``overwrite`` is not a bool.

        Notes
        -----
        One dask task per chunk reads its counts, looks up its rows and writes them straight
        to Arrow. The dataset is written into a temporary folder ``.<name>.*.part`` beside
        ``path`` and renamed onto it at the end (:func:`ambppl.internal.swap.folder_in_place`);
        after an error the temporary folder is removed and an existing ``path`` is left as it
        was. A new folder gets the permission bits of a normally created one (``0o777`` less
        the umask); a replaced folder's bits are kept.
        """
        import dask

        if not isinstance(overwrite, bool):
            raise TypeError(f"overwrite must be True or False, but got {overwrite!r}")
        folder = Path(path)

        def refuse_existing() -> None:
            if (folder.exists() or folder.is_symlink()) and not overwrite:
                raise FileExistsError(
                    f"cannot write the Parquet dataset {str(folder)!r}: it exists already; pass "
                    "overwrite=True to replace it (the whole folder) or choose another path"
                )

        refuse_existing()
        blocks, item_blocks, lookup = self.parts
        schema = arrow_schema(lookup, SCORE_COLUMNS, first_items(item_blocks))
        folder.parent.mkdir(parents=True, exist_ok=True)
        # checked again before the move: a path that appeared meanwhile is not overwritten
        with folder_in_place(folder, refuse_existing) as tmp:
            tasks = [
                dask.delayed(write_part)(
                    b, i, lookup, SCORE_COLUMNS, schema, str(tmp / f"part.{k}.parquet")
                )
                for k, (b, i) in enumerate(zip(blocks, item_blocks, strict=True))
            ]
            dask.compute(*tasks)
