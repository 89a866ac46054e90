"""``summarize``: one row per item from a fit, and the decision helpers rank, select, stratify.

The per-item statistics are computed for all items at once (vectorized over the ``item``
dimension with xarray and ArviZ), never one variable or one item at a time.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import ambppl.maths.measures as measures
from ambppl.analysis.distinct import (
    _closed_forms,
    _estimators,
    conjugate_setup,
    distinct_table,
    seed_sequence,
)
from ambppl.analysis.hyperprior import hyperprior_sensitivity
from ambppl.analysis.raters import summarize_raters
from ambppl.data.contract import refuse_read_options
from ambppl.inference.catalog import get_model, list_models
from ambppl.inference.diagnostics import diagnose
from ambppl.inference.fitting import INDEPENDENT_METHODS, POINT_METHODS
from ambppl.internal.checks import (
    SHOWN,
    as_float_array,
    check_option,
    check_positive_int,
    check_prob,
    show_values,
)
from ambppl.internal.resultdata import (
    cant_solve_index,
    check_fit_tree,
    fixed_prior,
    observed_counts,
)
from ambppl.maths.measures import VARIABLES, measure_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["rank", "select", "stratify", "summarize", "summarize_counts"]

#: Columns of :func:`summarize` (``ess_bulk`` and ``r_hat`` are added for MCMC fits).
COLUMNS = (
    "n_answers",
    "cs_share",
    "plugin",
    "less_biased",
    "mean",
    "sd",
    "exact_mean",
    "exact_sd",
    "hdi_lower",
    "hdi_upper",
    "p_above",
    "measure",
    "threshold",
)

_SAMPLE_DIMS = ("chain", "draw")


def summarize(
    result: xr.DataTree,
    *,
    measure: str = "amb",
    hdi_prob: float | None = None,
    threshold: float = 0.4,
    level: str = "item",
    overuse: str | float = "hdi",
) -> pd.DataFrame:
    """Per-item table of a measure's posterior next to its closed forms and estimators.

    Parameters
    ----------
    result : xarray.DataTree
        The result of :func:`ambppl.fit` (groups ``posterior`` and ``observed_data``).
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure to summarize (the variable names ``"amb_modified"``, ``"amb_old"`` are
        accepted too). If its variable was not stored but ``q`` was, it is computed from ``q``.
    hdi_prob : float, optional
        Probability mass of the highest density interval; default ArviZ's
        ``rcParams["stats.ci_prob"]``.
    threshold : float, default 0.4
        ``p_above`` is the posterior probability that the measure exceeds it.
    level : {"item", "rater"}, default "item"
        ``"rater"``: one row per rater instead
        (:func:`ambppl.analysis.raters.summarize_raters`), of a fit of a model with raters.
        For ``rater_effects``: ``n_answers``, the can't-solve odds ratio against the typical
        rater with its HDI (``cant_solve_odds_ratio``, ``cant_solve_or_lower``,
        ``cant_solve_or_upper``), ``p_overuse``, ``overuses_cant_solve``,
        ``favoured_label`` and ``label_bias``. For ``dawid_skene``: ``n_answers``,
        ``accuracy`` (the probability that the rater answers an item's true class, averaged
        over the classes' prevalences) with its HDI (``accuracy_lower``,
        ``accuracy_upper``), and ``cant_solve_rate`` (the probability that it answers "can't
        solve"; NaN without such a category) with its HDI (``cant_solve_lower``,
        ``cant_solve_upper``); the HDI columns are NaN for the one point of
        ``method="map"``. ``measure`` and ``threshold`` are then unused, and other values
        than their defaults are refused.
    overuse : "hdi" or float, default "hdi"
        For ``level="rater"`` of a ``rater_effects`` fit: the rule for
        ``overuses_cant_solve`` (HDI of the odds ratio above 1, or
        ``P(odds ratio > 1) >= overuse``). A ``dawid_skene`` fit has no such column: the
        default ``"hdi"`` is unused there and a probability is refused.

    Returns
    -------
    pandas.DataFrame
        Index ``item`` (``rater`` for ``level="rater"``); columns ``n_answers`` (answers per
        item), ``cs_share`` (share of can't-solve answers; 0 without such a category, NaN
        for items without answers), ``plugin`` and ``less_biased`` (estimators from the
        counts alone; NaN for items without answers and where an estimator does not cover
        the measure), ``mean``, ``sd`` (posterior, from the draws; like ``hdi_lower``,
        ``hdi_upper`` and ``p_above`` NaN for an item with a NaN draw), ``exact_mean``,
        ``exact_sd`` (closed forms under the Dirichlet posterior), ``hdi_lower``,
        ``hdi_upper``, ``p_above``, ``measure`` and ``threshold`` (the same on every row:
        what ``p_above`` is the probability of, so that :func:`select` still reads it after
        ``merge``, ``concat`` or a CSV round trip, which drop ``attrs``) and, when MCMC made
        the draws, ``ess_bulk`` and ``r_hat``. For the one point of ``method="map"`` (the
        posterior mode) ``mean`` is the measure at the mode and ``sd``, ``hdi_lower``,
        ``hdi_upper`` and ``p_above`` are NaN: a point carries no posterior uncertainty
        (:func:`select`'s ``P(...)`` rules refuse such a table, by its ``attrs`` or, once
        a file has dropped them, by its NaN ``p_above``). For a model with a latent
        true class per item (``dawid_skene``: posterior ``label_prob``), ``label`` (the most
        probable class), ``label_prob`` (its posterior probability) and ``label_entropy``
        (the normalized entropy of the class posterior). ``n_answers`` holds integers (int64;
        with ``level="rater"`` too, each rater's answers from the fit's ``constant_data``
        ``rater_answers``, or NaN, float, for a result without it).
        ``df.attrs`` holds ``measure``, ``threshold``, ``hdi_prob``, ``method``, ``model``
        and, for a fit of a learned prior with a ``log_prior`` group, ``not_pinned_down``:
        the hyperparameters whose posterior follows their own prior more than the data
        (:func:`ambppl.hyperprior_sensitivity`; e.g. ``["kappa"]`` when the items are no
        more spread than one shared response distribution makes them: every item's
        shrinkage then depends on the prior of ``kappa``) and ``hyperprior_sensitivity``
        (``threshold`` and the rows of that table as records, for the report).

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree.
    ValueError
        For an unknown measure or level, ``hdi_prob`` or ``threshold`` outside (0, 1), a
        result without the groups/variables needed (``level="rater"``: a fit of
        ``rater_effects`` or ``dawid_skene``), an item whose every draw of the measure is
        NaN, ``overuse`` other than "hdi" with ``level="item"``, ``overuse`` neither "hdi"
        nor a probability in (0, 1) with ``level="rater"``, or a probability for a
        ``dawid_skene`` fit, or ``measure`` or ``threshold`` other than their defaults with
        ``level="rater"``.

    Notes
    -----
    ``exact_mean`` / ``exact_sd`` are :func:`ambppl.dirichlet_mean` /
    :func:`ambppl.dirichlet_var` at ``prior + counts`` (paper eqs. ``expr_amb_final`` and
    ``expr_amb_var_final``; :errata:`E5` for the variance's conditioning). They are NaN where no
    closed form exists (see those functions) and for models whose posterior is not Dirichlet.
    ``plugin`` and ``less_biased`` are :func:`ambppl.estimate` (paper section 3.3, :errata:`E8`).
    ``sd`` uses ``ddof=1`` like ArviZ; the HDI is :func:`arviz.hdi`, and ESS/R-hat are
    ArviZ's :func:`arviz.ess` (bulk) and :func:`arviz.rhat` (rank-normalized) as
    :mod:`ambppl.inference.diagnostics` computes them: the same algorithms (arviz-stats 1.3),
    equal to rounding, vectorized over the items instead of ArviZ's loop over scalars (11,040
    items x 4 chains x 1000 draws: 6.4 s of CPU against ArviZ's 39 s), all over every item at
    once.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       sections 3-4.
    .. [2] Vehtari et al. (2021), "Rank-normalization, folding, and localization: an improved
       R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> counts = xr.DataArray(
    ...     np.array([[5, 0, 0], [2, 2, 1]]), dims=("item", "category"),
    ...     coords={"item": ["a", "b"], "category": ["yes", "no", "cs"]},
    ...     attrs={"cant_solve": "cs"})
    >>> table = ambppl.summarize(ambppl.fit(counts, draws=500, chains=2, random_seed=1))
    >>> table.loc["b", ["n_answers", "cs_share"]].tolist()
    [5.0, 0.2]
    >>> round(float(table.loc["a", "exact_mean"]), 6)  # E[amb] under Dirichlet(6, 1, 1): 5/16
    0.3125
    """
    level = check_option(level, ("item", "rater"), "level")
    if level == "rater":
        _refuse_item_options(measure, threshold)
        return summarize_raters(result, hdi_prob=hdi_prob, overuse=overuse)
    if not (isinstance(overuse, str) and overuse == "hdi"):
        raise ValueError(
            f"overuse is the rule of level='rater' (which raters over-use can't solve), but "
            f"got overuse={overuse!r} with level='item'; drop it, or pass level='rater'"
        )
    import arviz as az
    import arviz_base
    import pandas as pd

    check_fit_tree(result)
    measure = measure_name(measure)
    threshold = check_prob(threshold, "threshold")
    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    hdi_prob = check_prob(hdi_prob, "hdi_prob")

    posterior = result["posterior"].to_dataset()
    counts = observed_counts(result)
    attrs = {**posterior.attrs, **result.attrs}
    method = attrs.get("method", "nuts")
    cs = cant_solve_index(result, attrs, counts)
    attrs["prior"] = fixed_prior(result, attrs)
    draws = _draws(posterior, measure, cs)
    partial = _check_nan_draws(draws, measure)
    values = np.asarray(counts.values, dtype=np.int64)
    n = values.sum(axis=1)

    columns: dict[str, Any] = {}
    columns["n_answers"] = n.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = values[:, cs] / n if cs is not None else np.zeros(len(n))
    columns["cs_share"] = np.where(n > 0, share, np.nan)
    columns["plugin"], columns["less_biased"] = _estimators(values, measure, cs)
    columns["mean"] = draws.mean(_SAMPLE_DIMS, skipna=False).values
    point = method in POINT_METHODS  # one point (method="map"): no spread, interval, probability
    nan = np.full(len(n), np.nan)
    columns["sd"] = nan if point else draws.std(_SAMPLE_DIMS, ddof=1, skipna=False).values
    columns["exact_mean"], columns["exact_sd"] = _closed_forms(values, attrs, measure, cs)
    if point:
        columns.update({"hdi_lower": nan, "hdi_upper": nan, "p_above": nan})
    else:
        hdi = az.hdi(draws, prob=hdi_prob, dim=list(_SAMPLE_DIMS)).transpose("item", "ci_bound")
        columns["hdi_lower"] = hdi.sel(ci_bound="lower").values
        columns["hdi_upper"] = hdi.sel(ci_bound="upper").values
        columns["p_above"] = (draws > threshold).mean(_SAMPLE_DIMS).values
    for key in ("hdi_lower", "hdi_upper", "p_above"):  # as mean and sd: NaN, not a guess
        columns[key] = np.where(partial, np.nan, columns[key])
    columns["measure"] = np.full(len(n), measure, dtype=object)
    columns["threshold"] = np.full(len(n), threshold, dtype=np.float64)
    if method not in INDEPENDENT_METHODS:
        # arviz.ess(draws, method="bulk") and arviz.rhat(draws), vectorized over the items

        diag = diagnose(draws.values, what=("r_hat", "ess_bulk"))
        columns["ess_bulk"] = diag["ess_bulk"]
        columns["r_hat"] = diag["r_hat"]
    if "label_prob" in posterior.data_vars:
        columns.update(_label_columns(posterior["label_prob"], draws["item"].values))

    index = pd.Index(draws["item"].values, name="item")
    table = pd.DataFrame(columns, index=index)
    table.attrs.update(
        {
            "measure": measure,
            "threshold": threshold,
            "hdi_prob": hdi_prob,
            "method": method,
            "model": attrs.get("model"),
        }
    )
    if "log_prior" in result.children:
        # a learned prior's hyperparameters that follow their own prior, not the data

        sensitivity = hyperprior_sensitivity(result)
        table.attrs["not_pinned_down"] = sensitivity.index[~sensitivity["pinned_down"]].tolist()
        table.attrs["hyperprior_sensitivity"] = {
            "threshold": sensitivity.attrs["threshold"],
            "rows": [
                {
                    "parameter": str(name),
                    "prior": float(row["prior"]),
                    "likelihood": float(row["likelihood"]),
                    "pinned_down": bool(row["pinned_down"]),
                    "diagnosis": str(row["diagnosis"]),
                }
                for name, row in sensitivity.iterrows()
            ],
        }
    return table


def _refuse_item_options(measure: Any, threshold: Any) -> None:
    """With ``level="rater"``: refuse a ``measure`` or ``threshold`` other than the defaults,
    which only the item table uses (as ``level="item"`` refuses an ``overuse``)."""
    given = []
    if not (isinstance(measure, str) and measure == "amb"):
        given.append(f"measure={measure!r}")
    real = isinstance(threshold, int | float | np.floating | np.integer)
    if not (real and not isinstance(threshold, bool | np.bool_) and threshold == 0.4):
        given.append(f"threshold={threshold!r}")
    if given:
        listed = " and ".join(given)
        raise ValueError(
            "measure and threshold choose what the item table's p_above is the probability "
            f"of (level='item'), but got {listed} with level='rater', whose table has no "
            f"p_above; drop {'it' if len(given) == 1 else 'them'}, or pass level='item'"
        )


def _label_columns(label_prob: xr.DataArray, items: Any) -> dict[str, Any]:
    """A latent-class model's (``dawid_skene``) posterior of each item's true class:
    ``label`` (the class of largest posterior probability), ``label_prob`` (its
    probability) and ``label_entropy`` (the normalized entropy of the class posterior
    ``p(z_i | y)``, the posterior mean of ``label_prob`` over the draws: 0 = the class is
    certain, 1 = every class equally likely)."""
    other = next(d for d in label_prob.dims if d not in (*_SAMPLE_DIMS, "item"))
    prob = label_prob.mean(_SAMPLE_DIMS).transpose("item", other).sel(item=items).values
    classes = np.asarray(label_prob[other].values, dtype=object)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(prob > 0, prob * np.log(prob), 0.0)
    return {
        "label": classes[prob.argmax(axis=1)],
        "label_prob": prob.max(axis=1),
        "label_entropy": -plogp.sum(axis=1) / np.log(prob.shape[1]),
    }


def _draws(posterior: xr.Dataset, measure: str, cs: int | None) -> xr.DataArray:
    """Draws of ``measure`` (chain, draw, item): stored, or computed from ``q``."""

    name = VARIABLES[measure]
    if name in posterior:
        da = posterior[name]
    elif "q" in posterior:
        da = measures.evaluate(measure, posterior["q"], cant_solve=cs, dim="category")
    else:
        raise ValueError(
            f"result must hold the draws of {name!r} or of 'q' to summarize measure "
            f"{measure!r}, but its posterior has {sorted(posterior.data_vars)}; fit with "
            f"var_names=[{name!r}]"
        )
    return da.transpose("chain", "draw", "item")


def _check_nan_draws(draws: xr.DataArray, measure: str) -> np.ndarray:
    """Items with some NaN draws (returned: their draw statistics become NaN); raises where
    every draw of an item is NaN."""
    isnan = draws.isnull()
    empty = isnan.all(_SAMPLE_DIMS).values
    if np.any(empty):
        items = draws["item"].values[empty]
        shown = ", ".join(repr(i.item() if hasattr(i, "item") else i) for i in items[:5])
        raise ValueError(
            f"result holds only NaN draws of {draws.name or VARIABLES[measure]!r} for "
            f"{items.size} item(s) ({shown}{', ...' if items.size > 5 else ''}), so their "
            "mean, HDI and p_above do not exist; check how those draws were made (refit, or "
            "summarize a measure that is defined for these items)"
        )
    return isnan.any(_SAMPLE_DIMS).values


def summarize_counts(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    measure: str = "amb",
    prior: Any = 1.0,
    draws: int = 4000,
    hdi_prob: float | None = None,
    threshold: float = 0.4,
    random_seed: Any = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """The :func:`summarize` table straight from counts, sampling once per distinct count vector.

    A thin wrapper of the machinery behind :func:`ambppl.score`
    (:func:`ambppl.analysis.distinct.distinct_table`) with a fixed number of exact draws per
    distinct count vector, and the columns and ``attrs`` of :func:`summarize` for an exact
    fit. :func:`ambppl.score` is the per-item table to prefer: it draws as many as a bound on
    the Monte Carlo error needs, and takes every model and method.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Counts already read, as for :func:`ambppl.fit` (:func:`ambppl.data.as_counts`; not a
        path: read files with :func:`ambppl.read_annotations` first).
    model : str, default "dirichlet_categorical"
        A catalog model of counts with a conjugate exact sampler (its method ``"exact"``:
        ``dirichlet_categorical``); the method is always ``"exact"``, so other models (e.g.
        ``hierarchical_dirichlet``) are refused: :func:`ambppl.score` takes them.
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure to summarize.
    prior : float or array_like, default 1.0
        Symmetric Dirichlet concentration or one positive value per category.
    draws : int, default 4000
        Exact posterior draws per distinct count vector.
    hdi_prob : float, optional
        HDI probability; default ArviZ's ``rcParams["stats.ci_prob"]``.
    threshold : float, default 0.4
        ``p_above`` is P(measure > threshold).
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same table.
    **kwargs
        None are taken: reader options (``cant_solve=``, ...) raise a TypeError that shows
        the call of :func:`ambppl.read_annotations` that takes them.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`summarize` (method "exact"), one row per item in the order of
        the data; ``attrs`` as there plus ``draws`` and ``n_distinct`` (distinct count vectors).
        ``mean`` and ``sd`` are the estimates from the draws (as :func:`summarize` reports a
        fit), ``exact_mean`` and ``exact_sd`` the closed forms.

    Raises
    ------
    ValueError
        For a ``model`` without a conjugate exact sampler (the message names those with
        one), bad parameters, ``draws`` not a positive
        integer, an unknown measure, ``threshold`` or ``hdi_prob`` outside (0, 1), bad data,
        or draws of one count vector that would not fit in memory.
    TypeError
        For a path, reader options or any other keyword not in the signature, and a
        ``random_seed`` that is no int, Generator or None.

    Notes
    -----
    An item's posterior depends on its data only through its count vector, so items with
    equal counts have the same posterior, ``Dirichlet(prior + counts)``, and share one set of
    draws here (``numpy.unique(..., axis=0, return_inverse=True)``, then broadcast back).
    With 20 answers per item there are at most 231 distinct vectors for K = 3 and 53,130 for
    K = 6, so a million items cost a few seconds instead of storing draws x items values.
    Each row's statistics are exact-sampler estimates of that item's marginal posterior;
    items with equal counts get identical rows (shared Monte Carlo error), which is why this
    is only offered for per-item summaries and never for stored draws (joint quantities across
    items would be wrong). The draws are those of :func:`ambppl.score` (in batches of about
    :data:`ambppl.analysis.distinct.BATCH_BYTES` on the usable CPUs, each batch with its own
    seed), so the table does not depend on the number of threads. The HDI is the shortest
    interval holding ``ceil(hdi_prob * draws)`` of the sorted draws.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> counts = ambppl.read_annotations(np.array([[5, 0, 0], [2, 2, 1], [5, 0, 0]]),
    ...                                  categories=["yes", "no", "cs"], cant_solve="cs")
    >>> table = ambppl.summarize_counts(counts, random_seed=1)
    >>> table.attrs["n_distinct"], bool(table.iloc[0].equals(table.iloc[2]))
    (2, True)
    """
    import arviz_base

    measure = measure_name(measure)
    refuse_read_options(kwargs, "summarize_counts")
    if kwargs:
        raise TypeError(
            f"summarize_counts() got unexpected keyword arguments {sorted(kwargs)}; its "
            "keywords are model, measure, prior, draws, hdi_prob, threshold and random_seed"
        )
    draws = check_positive_int(draws, "draws")
    threshold = check_prob(threshold, "threshold")
    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    hdi_prob = check_prob(hdi_prob, "hdi_prob")
    seed = seed_sequence(random_seed)
    _check_exact_model(model)
    counts, conc, method = conjugate_setup(
        model, "exact", data, {"prior": prior}, "summarize_counts"
    )
    settings = {"measure": measure, "threshold": threshold, "hdi_prob": hdi_prob, "mcse": None}
    # exactly `draws` exact draws per distinct vector, mean and sd from them (as summarize)
    table = distinct_table(counts, conc, COLUMNS, settings, seed, draws=draws, closed=False)
    table["measure"] = table["measure"].astype(object)
    table.attrs = {
        "measure": measure,
        "threshold": threshold,
        "hdi_prob": hdi_prob,
        "method": method,
        "model": get_model(model).name,
        "draws": draws,
        "n_distinct": table.attrs["n_distinct"],
    }
    return table


def _check_exact_model(model: Any) -> None:
    """Refuse a ``model`` of :func:`summarize_counts` without a conjugate exact sampler (the
    method ``"exact"`` on counts), naming the catalog models that have one."""
    entry = get_model(model)  # an unknown name: the message lists the catalog
    if "exact" in entry.info["methods"] and entry.info.get("data", "counts") == "counts":
        return
    models = list_models()
    exact = [
        str(name)
        for name, row in models.iterrows()
        if "exact" in row["methods"].split(", ") and row["data"] == "counts"
    ]
    raise ValueError(
        f"model must be a model of counts with a conjugate exact sampler (method 'exact': "
        f"{', '.join(repr(m) for m in exact)}) for summarize_counts, but got model="
        f"{entry.name!r} (methods {', '.join(entry.info['methods'])}); score it with "
        f"ambppl.score(data, {entry.name!r}), or fit it with ambppl.fit and summarize the "
        "draws with ambppl.summarize"
    )


# ---------------------------------------------------------------------------------------
# Decision helpers


def _check_table(table: Any) -> pd.DataFrame:
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        kind = type(table)
        name = kind.__qualname__
        if kind.__module__ not in ("builtins", "__main__"):
            name = f"{kind.__module__}.{name}"
        fix = ""
        if callable(getattr(table, "compute", None)):  # LazyScore, a dask DataFrame
            fix = (
                " (lazy: nothing computed yet); pass table.compute(), a pandas DataFrame (of "
                "the LazyScore of ambppl.score rather than of its dask .table: its "
                ".compute() keeps the attrs)"
            )
        raise TypeError(
            f"table must be the pandas.DataFrame returned by ambppl.summarize or "
            f"ambppl.score, but got {name}{fix}"
        )
    return table


def _check_column(table: pd.DataFrame, by: Any, name: str = "by") -> str:
    if not isinstance(by, str) or by not in table.columns:
        raise ValueError(f"{name} must be one of the columns {list(table.columns)}, but got {by!r}")
    return by


def rank(table: pd.DataFrame, by: str = "mean", ascending: bool = False) -> pd.DataFrame:
    """Sort the items of a summary table and number them.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`summarize`.
    by : str, default "mean"
        Column to sort by.
    ascending : bool, default False
        Sort order; the default puts the most ambiguous items first.

    Returns
    -------
    pandas.DataFrame
        A sorted copy with an added column ``rank`` (1 = first); ties keep their order.

    Raises
    ------
    ValueError
        If ``by`` is not a column of ``table``.
    TypeError
        If ``table`` is not a DataFrame.

    Notes
    -----
    Ranking by the posterior mean orders items by expected ambiguity; ranking by
    ``hdi_lower`` is a conservative alternative that penalizes items with few answers.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 5.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"mean": [0.1, 0.7, 0.4]}, index=pd.Index(list("abc"), name="item"))
    >>> rank(table)["rank"].to_dict()
    {'b': 1, 'c': 2, 'a': 3}
    """
    table = _check_table(table)
    by = _check_column(table, by)
    if not isinstance(ascending, bool):
        raise TypeError(f"ascending must be True or False, but got {ascending!r}")
    out = table.sort_values(by, ascending=ascending, kind="stable").copy()
    out["rank"] = np.arange(1, len(out) + 1)
    return out


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_OP = r">=|<=|>|<"
_PROB_CLAUSE = re.compile(
    rf"^P\(\s*(?P<measure>\w+)\s*(?P<inner>{_OP})\s*(?P<t>{_NUMBER})\s*\)\s*"
    rf"(?P<op>{_OP})\s*(?P<p>{_NUMBER})$"
)
_COLUMN_CLAUSE = re.compile(rf"^(?P<column>\w+)\s*(?P<op>{_OP})\s*(?P<value>{_NUMBER})$")
_GRAMMAR = (
    "rule := clause ['and' clause ...]; clause := 'P(<measure> <op> <threshold>) <op> <prob>' "
    "or '<column> <op> <number>'; op := > | >= | < | <=; e.g. 'P(amb > 0.4) > 0.9' or "
    "'mean > 0.5 and n_answers >= 5'"
)


def _compare(x: Any, op: str, y: float) -> Any:
    return {">": x > y, ">=": x >= y, "<": x < y, "<=": x <= y}[op]


def select(table: pd.DataFrame, rule: str) -> pd.DataFrame:
    """Keep the items of a summary table that satisfy a rule.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`summarize` or :func:`ambppl.score` (in memory: a
        :class:`~ambppl.analysis.scoring.LazyScore` is computed first, ``.compute()``).
    rule : str
        ``clause`` or ``clause and clause ...``, each clause either
        ``"P(<measure> <op> <threshold>) <op> <prob>"`` (uses the ``p_above`` column; the
        measure and threshold must be those the table was made with, read from its
        ``measure`` and ``threshold`` columns, or from ``table.attrs`` where those columns
        are absent or the table has no rows; the threshold in (0, 1), the probability in
        [0, 1]) or ``"<column> <op> <number>"`` (a numeric column); ``op`` is one of ``>``,
        ``>=``, ``<``, ``<=``.

    Returns
    -------
    pandas.DataFrame
        The rows satisfying every clause (a copy; attrs kept). A table without rows gives
        an empty table.

    Raises
    ------
    ValueError
        If the rule does not follow the grammar (the message gives it), names an unknown
        column or one that is not numeric (text such as ``measure`` or ``label``), has a
        threshold outside (0, 1) or a probability outside [0, 1] in ``P(...)``, or asks for
        a measure/threshold the table was not summarized with (or the table does not say
        which, or mixes several: select on each part); and for a ``P(...)`` rule on a table
        whose ``p_above`` is NaN on some row (the one point of ``method="map"``, also after
        a CSV or Parquet file has dropped the attrs that say so, or NaN draws: the message
        names the items).
    TypeError
        If ``rule`` is not a string or ``table`` not a pandas DataFrame (a lazy table names
        its ``.compute()``).

    Notes
    -----
    The rule is parsed with regular expressions, never evaluated as code. Inside ``P(...)``,
    ``<`` is read as ``1 - p_above`` and ``>=`` like ``>``: the measures' posteriors are
    continuous, so ties have probability zero.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 5.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"mean": [0.1, 0.7], "p_above": [0.01, 0.97]},
    ...                      index=pd.Index(["a", "b"], name="item"))
    >>> table.attrs.update(measure="amb", threshold=0.4)
    >>> list(select(table, "P(amb > 0.4) > 0.9").index)
    ['b']
    >>> list(select(table, "mean < 0.5").index)
    ['a']
    """
    table = _check_table(table)
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a string ({_GRAMMAR}), but got {rule!r}")
    clauses = [c.strip() for c in re.split(r"\s+and\s+", rule.strip())]
    keep = np.ones(len(table), dtype=bool)
    for clause in clauses:
        keep &= _clause_mask(table, clause, rule)
    return table[keep].copy()


def _clause_mask(table: pd.DataFrame, clause: str, rule: str) -> np.ndarray:
    m = _PROB_CLAUSE.match(clause)
    if m:
        return _probability_mask(table, m, rule)
    m = _COLUMN_CLAUSE.match(clause)
    if m:
        column = _check_column(table, m["column"], "the column in rule")
        values = _numeric_column(table, column, rule)
        return np.asarray(_compare(values, m["op"], float(m["value"])))
    raise ValueError(f"rule must follow the grammar {_GRAMMAR}, but got {rule!r}")


def _numeric_columns(table: pd.DataFrame) -> list[str]:
    import pandas as pd

    return [str(c) for c in table.columns if pd.api.types.is_numeric_dtype(table[c])]


def _numeric_column(table: pd.DataFrame, column: str, rule: str) -> np.ndarray:
    """A column of ``table`` as float values for a comparison with a number (missing
    values NaN); a column of text or other non-numbers is refused."""
    import pandas as pd

    values = table[column]
    if not pd.api.types.is_numeric_dtype(values):
        dtype = values.dtype
        text = (
            pd.api.types.is_object_dtype(dtype)
            or pd.api.types.is_string_dtype(dtype)
            or isinstance(dtype, pd.CategoricalDtype)
        )
        holds = "holds text" if text else "is not numeric"
        raise ValueError(
            f"the column in rule must be a numeric column (one of {_numeric_columns(table)}) "
            f"to compare with a number, but {column!r} {holds} (dtype {dtype}) in rule "
            f"{rule!r}"
        )
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def _probability_mask(table: pd.DataFrame, m: re.Match[str], rule: str) -> np.ndarray:
    """The rows satisfying one ``P(<measure> <op> <threshold>) <op> <prob>`` clause."""
    if "p_above" not in table.columns:
        raise ValueError(
            f"rule {rule!r} uses P(...), which needs the p_above column of "
            "ambppl.summarize, but the table has none"
        )
    if table.attrs.get("method") in POINT_METHODS:
        raise ValueError(
            f"rule {rule!r} uses P(...), but the table summarizes one point (method="
            f"{table.attrs['method']!r}: the posterior mode), which has no posterior "
            "probabilities; refit with method='laplace' or 'nuts', or select on the "
            "column: e.g. 'mean > 0.4'"
        )
    measure = measure_name(m["measure"])
    t, prob = float(m["t"]), float(m["p"])
    if not 0 < t < 1:
        raise ValueError(
            f"the threshold in P(...) must be in the open interval (0, 1), as summarize's "
            f"threshold, but got {m['t']} in rule {rule!r}"
        )
    if not 0 <= prob <= 1:
        raise ValueError(
            f"the probability that P(...) is compared with must be in [0, 1], but got "
            f"{m['p']} in rule {rule!r}"
        )
    held = _p_above_of(table)
    fix = f"summarize with measure={measure!r}, threshold={t}"
    if not held:
        if len(table) == 0:  # no rows, no p_above to misread
            return np.zeros(0, dtype=bool)
        raise ValueError(
            f"rule {rule!r} uses P(...), but the table does not say which measure and "
            "threshold its p_above is for (no measure and threshold columns, nor attrs); "
            f"{fix}, or select on the column: 'p_above {m['op']} {m['p']}'"
        )
    asked = f"P({m['measure']} {m['inner']} {m['t']})"
    holds = ", ".join(f"P({have_m} > {have_t:g})" for have_m, have_t in held)
    match = [(hm, ht) for hm, ht in held if hm == measure and np.isclose(t, ht)]
    if len(held) > 1:
        if match:
            have_m, have_t = match[0]
            part = f"table[(table['measure'] == {have_m!r}) & (table['threshold'] == {have_t!r})]"
            fix = f"select on the part that holds it: {part}"
        else:
            fix = f"none of them is {asked}: {fix}"
        raise ValueError(
            f"rule {rule!r} asks for {asked}, but the table holds {holds} (rows of several "
            f"summaries, concatenated: P(...) is another event on some rows); {fix}"
        )
    if not match:
        raise ValueError(f"rule {rule!r} asks for {asked}, but the table holds {holds}; {fix}")
    p = table["p_above"].to_numpy(dtype=np.float64, na_value=np.nan)
    missing = np.isnan(p)
    if np.any(missing):
        raise _nan_p_above(table, missing, rule)
    if m["inner"] in ("<", "<="):
        p = 1.0 - p
    return np.asarray(_compare(p, m["op"], prob))


def _nan_p_above(table: pd.DataFrame, missing: np.ndarray, rule: str) -> ValueError:
    """The error for a ``P(...)`` rule on rows whose ``p_above`` is NaN: the one point of
    ``method="map"`` (``mean``, the measure at the mode, is a number), or NaN draws (``mean``
    NaN too)."""
    items = table.index[missing]
    mean = np.full(len(items), np.nan)
    if "mean" in _numeric_columns(table):
        mean = table["mean"].to_numpy(dtype=np.float64, na_value=np.nan)[missing]
    point = np.isfinite(mean)
    parts = []
    if np.any(point):
        n = int(point.sum())
        parts.append(
            f"{n} item(s) {show_values(list(items[point][:SHOWN]), n)} summarize one point "
            "(method='map': the posterior mode, whose sd, HDI and p_above are NaN), which "
            "has no posterior probabilities: refit with method='laplace' or 'nuts', or select "
            "on the column, e.g. 'mean > 0.4'"
        )
    if not np.all(point):
        n = int((~point).sum())
        parts.append(
            f"{n} item(s) {show_values(list(items[~point][:SHOWN]), n)} have NaN draws of the "
            "measure (summarize leaves their mean, sd, HDI and p_above NaN): check how the "
            "draws were made and refit, or drop those rows first"
        )
    return ValueError(
        f"rule {rule!r} uses P(...), but p_above is NaN, so the rule cannot tell whether "
        f"these items satisfy it: {'; and '.join(parts)}"
    )


def _p_above_of(table: pd.DataFrame) -> list[tuple[str, float]]:
    """The (measure, threshold) pairs the table's ``p_above`` is for: from its ``measure`` and
    ``threshold`` columns (which survive merge, concat and files), else (no such columns, or
    no rows) from ``attrs``."""
    if {"measure", "threshold"} <= set(table.columns):
        pairs = table[["measure", "threshold"]].drop_duplicates().dropna()
        if len(pairs):
            return [
                (measure_name(str(measure)), float(threshold))
                for measure, threshold in pairs.itertuples(index=False)
            ]
    have_m, have_t = table.attrs.get("measure"), table.attrs.get("threshold")
    if have_m is None or have_t is None:
        return []
    return [(measure_name(have_m), float(have_t))]


def stratify(
    table: pd.DataFrame,
    bins: Sequence[float] = (0, 0.2, 0.4, 0.6, 1.0),
    by: str = "mean",
) -> pd.DataFrame:
    """Assign each item to an ambiguity bin.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`summarize`.
    bins : sequence of float, default (0, 0.2, 0.4, 0.6, 1.0)
        Finite, strictly increasing bin edges; the bins are ``[b0, b1], (b1, b2], ...``.
    by : str, default "mean"
        Numeric column to bin.

    Returns
    -------
    pandas.DataFrame
        A copy with an added ordered categorical column ``stratum`` (:func:`pandas.cut`,
        labelled ``"[0, 0.2]"``, ``"(0.2, 0.4]"``, ...: the edges to 6 significant digits,
        more where edges would otherwise print alike; NaN outside the edges).

    Raises
    ------
    ValueError
        If ``bins`` has fewer than two edges, an edge that is not finite (NaN or inf) or is
        not strictly increasing, or ``by`` is not a numeric column (text or boolean).
    TypeError
        If ``table`` is not a DataFrame or ``bins`` not numeric.

    Notes
    -----
    Strata such as "clear", "somewhat ambiguous", "ambiguous" make a fixed annotation
    budget easy to allocate: e.g. collect more answers for the middle strata.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 5.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"mean": [0.1, 0.5]}, index=pd.Index(["a", "b"], name="item"))
    >>> stratify(table)["stratum"].astype(str).tolist()
    ['[0, 0.2]', '(0.4, 0.6]']
    """
    import pandas as pd

    table = _check_table(table)
    by = _check_column(table, by)
    numeric = [
        str(c)
        for c in table.columns
        if pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
    ]
    if by not in numeric:
        raise ValueError(
            f"by must be a numeric column (one of {numeric}) to bin, but got {by!r} "
            f"(dtype {table[by].dtype})"
        )
    edges = as_float_array(bins, "bins")
    if (
        edges.ndim != 1
        or edges.size < 2
        or not np.all(np.isfinite(edges))
        or np.any(np.diff(edges) <= 0)
    ):
        raise ValueError(
            "bins must be at least two strictly increasing finite edges (e.g. "
            f"(0, 0.2, 0.4, 0.6, 1.0)), but got {edges.tolist()}"
        )
    out = table.copy()
    out["stratum"] = pd.cut(out[by], edges, labels=_bin_labels(edges), include_lowest=True)
    return out


def _bin_labels(edges: np.ndarray) -> list[str]:
    """``"[0, 0.2]"``, ``"(0.2, 0.4]"``, ...: the edges with 6 significant digits (``:g``),
    or as many more as keep them distinct (17 tell any two float64 apart)."""
    for digits in range(6, 18):
        text = [f"{edge:.{digits}g}" for edge in edges]
        if len(set(text)) == len(text):
            break
    return [
        f"{'[' if i == 0 else '('}{lo}, {hi}]"
        for i, (lo, hi) in enumerate(itertools.pairwise(text))
    ]
