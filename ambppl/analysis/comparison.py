"""Model comparison by leave-one-item-out: :func:`loo` and :func:`compare`.

Every catalog model writes a ``log_likelihood`` group with one meaning (see
:mod:`ambppl.inference.modeling`): ``log p(answers_i | theta)`` with the item's own
``q_i`` integrated out. Leave-one-item-out then asks how well the model predicts a *new
item's* answers from the other items, which is the question that separates a fixed prior
(``dirichlet_categorical`` with ``prior=0.5`` or ``1``) from a learned one
(``hierarchical_dirichlet``).

For a fixed prior the pointwise log likelihood is the same for every draw: nothing is learned
from other items, so leaving one out changes nothing and the LOO predictive density is exactly
``log p(answers_i | prior)``. PSIS cannot smooth importance ratios that are all equal
(``arviz.loo`` raises "All tail values are the same"), so :func:`loo` gives such items
uniform weights and a Pareto k of 0 (the ratios have no tail); for every other item it is
``arviz.loo``'s PSIS-LOO, with ``arviz.loo``'s relative efficiency ``r_eff`` (one value from
the posterior's draws), so those items get the weights and Pareto k ``arviz.loo`` gives them.
An empirical-Bayes fit's hyperparameters were estimated from every
item, so its log likelihood is constant over draws yet *not* a leave-one-out density: for it
:func:`loo` refits the hyperparameters without each item (once per distinct count vector;
cheap, the estimate is an optimization over sufficient statistics) and reports the exact
leave-one-out density, with ``p`` the in-sample gain (it needs at least 2 items).

:func:`compare` ranks fits of the same data only: the same items in the same order and, where
the results hold the counts they were fitted to (``observed_data["counts"]``, which
:func:`ambppl.fit` writes for every catalog model), the same categories and counts. A model of
answers (``rater_effects``, ``dawid_skene``) stores the counts of its answers, and its log
likelihood is that of each item's answer sequence, as a count model's is: the two compare when
they were fitted to the same answers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.data.matrices import count_difference
from ambppl.inference.catalog import get_model
from ambppl.inference.fitting import POINT_METHODS
from ambppl.inference.modeling import log_likelihood

__all__ = ["compare", "loo"]

_SAMPLE_DIMS = ("chain", "draw")


def _log_likelihood(result: Any, name: str) -> Any:
    import xarray as xr

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            f"{name} must be the xarray.DataTree returned by ambppl.fit, but got "
            f"{type(result).__name__}"
        )
    if "log_likelihood" not in result.children or not result["log_likelihood"].data_vars:
        raise ValueError(
            f"{name} must have a log_likelihood group (ambppl.fit writes one unless "
            "log_likelihood=False), but it has "
            f"{sorted(result.children)}; refit with log_likelihood=True"
        )
    method = result.attrs.get("method")
    if method in POINT_METHODS:
        raise ValueError(
            f"{name} is one point (method={method!r}: the posterior mode), and leave-one-item-"
            "out needs posterior draws; refit with method='laplace' or 'nuts'"
        )
    if "posterior" not in result.children:
        raise ValueError(
            f"{name} must have a posterior group (as ambppl.fit returns: PSIS-LOO weighs its "
            f"draws), but it has {sorted(result.children)}"
        )
    group = result["log_likelihood"].to_dataset()
    if "counts" not in group.data_vars:
        raise ValueError(
            f"{name}'s log_likelihood group must hold 'counts' (one value per chain, draw and "
            f"item, as ambppl.fit writes it), but it has {sorted(group.data_vars)}"
        )
    return group["counts"]


def loo(result: Any, *, pointwise: bool = True) -> Any:
    """Leave-one-item-out predictive accuracy of a fit (PSIS-LOO, exact where it can be).

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` (any catalog model) with a ``log_likelihood`` group.
    pointwise : bool, default True
        Keep the per-item ``elpd_i`` and ``pareto_k``.

    Returns
    -------
    arviz_stats.ELPDData
        As :func:`arviz.loo` returns it (``elpd``, ``se``, ``p``, ``pareto_k``, ...);
        accepted by :func:`arviz.compare`.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree.
    ValueError
        If it has no ``posterior`` group, no ``log_likelihood`` group with the variable
        ``counts``, is one point (``method="map"``), or is an empirical-Bayes fit of one item
        (leave-one-item-out refits the hyperparameters from the other items).

    Notes
    -----
    Items whose log likelihood is the same in every draw (a fixed prior) get uniform log
    weights ``-log S`` and ``pareto_k = 0``: their LOO density is exact. All other items use
    the Pareto-smoothed importance weights of :func:`arviz.loo` (Vehtari, Gelman & Gabry
    2017), with ``r_eff`` as :func:`arviz.loo` computes it: 1 for one chain, else the mean
    ESS of the posterior variables' elements over the number of draws. Empirical-Bayes fits
    (``attrs["method"]``) are refitted without each item: exact leave-one-out, not PSIS
    (module docstring).

    References
    ----------
    .. [1] Vehtari, Gelman & Gabry (2017), "Practical Bayesian model evaluation using
       leave-one-out cross-validation and WAIC", Statistics and Computing 27.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> from ambppl.inference.modeling import log_likelihood
    >>> counts = xr.DataArray(np.array([[5, 0, 0], [2, 2, 1]]), dims=("item", "category"),
    ...                       coords={"category": ["yes", "no", "cs"]}, attrs={"cant_solve": "cs"})
    >>> elpd = ambppl.loo(ambppl.fit(counts, draws=200, chains=2, random_seed=1))
    >>> ll = log_likelihood(counts.values, [1.0, 1.0, 1.0])
    >>> bool(np.isclose(elpd.elpd, ll.sum())), float(elpd.pareto_k.max())
    (True, 0.0)
    """
    import arviz as az
    import xarray as xr

    ll = _log_likelihood(result, "result")
    if not isinstance(pointwise, bool):
        raise TypeError(f"pointwise must be True or False, but got {pointwise!r}")
    if result.attrs.get("method") == "empirical_bayes":
        return _loo_empirical_bayes(result, ll, pointwise)
    values = ll.values
    n_samples = values.shape[0] * values.shape[1]
    constant = np.all(values == values[:1, :1], axis=(0, 1))
    if not np.any(constant):
        return az.loo(result, pointwise=pointwise, var_name="counts")
    ll = ll.transpose("chain", "draw", "item")
    log_weights = np.full(ll.shape, -np.log(n_samples))
    pareto_k = np.zeros(ll.sizes["item"])
    if not np.all(constant):
        idx = np.flatnonzero(~constant)
        varying = ll.isel(item=idx)
        lw, k = varying.azstats.psislw(r_eff=_r_eff(result, n_samples), dim=list(_SAMPLE_DIMS))
        log_weights[..., idx] = lw.transpose("chain", "draw", "item").values
        pareto_k[idx] = k.values
    log_weights = xr.DataArray(log_weights, dims=ll.dims, coords=ll.coords)
    pareto_k = xr.DataArray(
        pareto_k, dims=("item",), coords={"item": ll["item"]} if "item" in ll.coords else None
    )
    return az.loo(
        result,
        pointwise=pointwise,
        var_name="counts",
        log_weights=log_weights,
        pareto_k=pareto_k,
    )


def _loo_empirical_bayes(result: Any, ll: Any, pointwise: bool) -> Any:
    """Exact leave-one-item-out for an empirical-Bayes fit: the hyperparameters refitted
    without each item (once per distinct count vector), then ``log p(answers_i | those)``.

    The fit's own log likelihood uses hyperparameters estimated from every item, the left-out
    one included: scored as LOO it would be in-sample, optimistic by about the number of
    hyperparameters (K for ``hierarchical_dirichlet``).
    """
    import json

    import arviz as az
    import xarray as xr

    entry = get_model(result.attrs["model"])
    params = json.loads(result.attrs.get("parameters", "{}"))
    counts = result["observed_data"]["counts"]
    values = np.asarray(counts.values, dtype=np.int64)
    if len(values) < 2:
        raise ValueError(
            "result must cover at least 2 items for leave-one-item-out of an empirical-Bayes "
            "fit (its hyperparameters are refitted from the other items, and without this one "
            f"there are none), but it has {len(values)}"
        )
    distinct, inverse = np.unique(values, axis=0, return_inverse=True)
    loo_i = np.empty(len(distinct))
    for d, row in enumerate(distinct):
        drop = int(np.flatnonzero(inverse.reshape(-1) == d)[0])
        rest = counts.isel(item=np.delete(np.arange(len(values)), drop))
        hyper = entry.module.empirical_bayes(rest, **params)
        conc = entry.module.concentration(hyper, n_categories=values.shape[1], **params)
        loo_i[d] = log_likelihood(row[None, :], conc)[0]
    elpd_i = loo_i[inverse.reshape(-1)]
    shape = ll.transpose("chain", "draw", "item").shape
    tree = xr.DataTree.from_dict(
        {
            "posterior": result["posterior"].to_dataset()[list(entry.hyperparameters)],
            "log_likelihood": xr.Dataset(
                {"counts": (("chain", "draw", "item"), np.broadcast_to(elpd_i, shape))},
                coords={"item": counts["item"].values},
            ),
        }
    )
    n = shape[0] * shape[1]
    out = az.loo(
        tree,
        pointwise=pointwise,
        var_name="counts",
        log_weights=xr.full_like(tree["log_likelihood"]["counts"], -np.log(n), dtype=float),
        pareto_k=xr.zeros_like(tree["log_likelihood"]["counts"].isel(chain=0, draw=0, drop=True)),
    )
    in_sample = float(ll.isel(chain=0, draw=0).sum())
    out.p = in_sample - out.elpd  # what the in-sample fit gains: the effective parameters
    return out


def _r_eff(result: Any, n_samples: int) -> float:
    """Relative efficiency of the draws, computed as :func:`arviz.loo` computes it
    (``arviz_stats.loo.loo_helper._get_r_eff``, arviz_stats 1.3): 1 for one chain, else the
    mean ``ess(method="mean")`` of every posterior variable's elements over the number of
    draws. One value for every item, so the items PSIS smooths here get the weights and
    Pareto k that :func:`arviz.loo` would give them."""
    if result["posterior"].sizes.get("chain", 1) == 1:
        return 1.0
    ess = result["posterior"].to_dataset().azstats.ess(method="mean")
    return float(np.hstack([ess[v].values.ravel() for v in ess.data_vars]).mean() / n_samples)


def compare(results: dict[str, Any], **kwargs: Any) -> Any:
    """Rank fits of the same data by leave-one-item-out predictive accuracy.

    Parameters
    ----------
    results : dict of str -> xarray.DataTree
        Named results of :func:`ambppl.fit` on the same data (any catalog models; a model of
        answers beside a model of the counts of the same answers).
    **kwargs
        Passed to :func:`arviz.compare` (``method``, ``reference``, ...). ``round_to``
        defaults to ``"none"``: the numbers unrounded (``elpd`` equal to
        ``float(ambppl.loo(result).elpd)``), where :func:`arviz.compare` rounds by default
        (``"auto"``: ``elpd`` and ``elpd_diff`` to the digits their standard errors leave,
        -5009.78 shown as -5000.0); pass ``round_to="auto"`` or a number of decimals for a
        table to print.

    Returns
    -------
    pandas.DataFrame
        :func:`arviz.compare`'s table, one row per result, best model first (rank 0), with
        the columns (ArviZ 1.x) ``rank``, ``elpd_diff`` (difference from the best, or from
        ``reference``: 0 or negative), ``dse`` (its standard error), ``p_worse`` (the
        probability that the model is worse than the best; ``p_better`` when ``reference``
        is given), ``diag_diff`` and ``diag_elpd`` (warnings about the difference and the
        estimate, empty when none), ``p`` (effective number of parameters), ``elpd``, ``se``
        (its standard error) and ``weight``.

    Raises
    ------
    TypeError
        If ``results`` is not a dict (of name -> :func:`ambppl.fit` result), or one of its
        values is not a DataTree.
    ValueError
        If fewer than two results are given, one lacks a log likelihood, the results cover
        different items (labels or order), or were fitted to different data (other categories,
        or other counts of an item: the message names the results and the first such item;
        compared where both hold ``observed_data["counts"]``), or one result's log
        likelihood conditions on each item's own parameters (a model file's
        ``LOG_LIKELIHOOD = "conditional"``, ``rater_effects``) beside results that integrate
        them out (the message names the function that integrates it).

    Notes
    -----
    Each result goes through :func:`loo`, so fixed-prior and learned-prior models are
    compared on the same quantity, ``log p(answers_i | other items)``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> counts = xr.DataArray(np.array([[5, 0], [4, 1], [5, 0]]), dims=("item", "category"),
    ...                       attrs={"cant_solve": None})
    >>> fits = {f"beta={b}": ambppl.fit(counts, prior=b, draws=100, chains=2, random_seed=1)
    ...         for b in (0.5, 1.0)}
    >>> ambppl.compare(fits).index.tolist()   # skewed data: the sparser prior predicts better
    ['beta=0.5', 'beta=1.0']
    """
    import arviz as az

    if not isinstance(results, dict):
        raise TypeError(
            "results must be a dict of name -> ambppl.fit result (e.g. {'flat': fit_a, "
            f"'learned': fit_b}}), but got {type(results).__name__}"
        )
    if len(results) < 2:
        raise ValueError(
            "results must be a dict of at least two named ambppl.fit results, but got "
            f"{len(results)}"
        )
    for name, result in results.items():
        _log_likelihood(result, f"results[{name!r}]")
    _check_same_data(results)
    _check_footing(results)
    kwargs.setdefault("round_to", "none")  # arviz's "auto" rounds elpd_diff to the tens
    return az.compare({name: loo(result) for name, result in results.items()}, **kwargs)


def _observed_counts(result: Any) -> Any:
    """The item x category counts a result was fitted to (``observed_data["counts"]``, which
    :func:`ambppl.fit` writes for every catalog model: for a model of answers, the counts of
    those answers), or None for a tree that has none (built by hand)."""
    if "observed_data" in result.children and "counts" in result["observed_data"].data_vars:
        return result["observed_data"]["counts"]
    return None


def _labels(values: Any) -> list[str]:
    return [str(v) for v in np.asarray(values).tolist()]


def _check_same_data(results: dict[str, Any]) -> None:
    """Refuse results fitted to different data: their elpd are sums over different answers.

    Every result must have the same items (labels, in order) in its log likelihood; where two
    results hold the counts they were fitted to, those must have the same categories (labels,
    in order) and the same count in every cell. A model of answers (``rater_effects``,
    ``dawid_skene``) stores the counts of its answers, so it compares with a model of counts
    fitted to the counts of the same answers; a tree without ``observed_data["counts"]`` is
    compared by its items only.
    """
    names = list(results)
    first = names[0]
    items = _labels(_log_likelihood(results[first], f"results[{first!r}]")["item"].values)
    reference = None  # (name, counts) of the first result that holds its counts
    for name in names:
        these = _labels(_log_likelihood(results[name], f"results[{name!r}]")["item"].values)
        if these != items:
            differ = next(
                (i for i, (a, b) in enumerate(zip(these, items, strict=False)) if a != b),
                min(len(these), len(items)),
            )
            where = (
                f"item {differ} is {these[differ]!r} against {items[differ]!r}"
                if differ < min(len(these), len(items))
                else f"{len(these)} items against {len(items)}"
            )
            raise ValueError(
                f"results must be fits of the same items, but results[{name!r}] has "
                f"{len(these)} items that differ from results[{first!r}]'s {len(items)} "
                f"({where})"
            )
        counts = _observed_counts(results[name])
        if counts is None:
            continue
        if reference is None:
            reference = (name, counts)
            continue
        ref_name, ref = reference
        categories = _labels(counts["category"].values) if "category" in counts.coords else None
        ref_categories = _labels(ref["category"].values) if "category" in ref.coords else None
        if counts.shape != ref.shape or categories != ref_categories:
            raise ValueError(
                f"results must be fits of the same data, but results[{name!r}] was fitted to "
                f"the categories {categories} and results[{ref_name!r}] to {ref_categories}: "
                "fit every model to the same counts (the same answers)"
            )
        differ = count_difference(counts.values, ref.values, items)
        if differ is not None:
            raise ValueError(
                f"results must be fits of the same data, but results[{name!r}]'s observed "
                f"counts differ from results[{ref_name!r}]'s {differ}: fit every model to the "
                "same counts (the same answers)"
            )


def _conditional(result: Any) -> bool:
    """Whether the result's log likelihood conditions on each item's own parameter (a model
    file's ``LOG_LIKELIHOOD = "conditional"``, unless the result says it was integrated)."""
    name = result.attrs.get("model")
    if name is None or result.attrs.get("log_likelihood") == "integrated":
        return False
    try:
        module = get_model(str(name)).module
    except ValueError:  # a model no longer in the catalog: nothing declared
        return False
    return getattr(module, "LOG_LIKELIHOOD", "integrated") == "conditional"


def _check_footing(results: dict[str, Any]) -> None:
    conditional = [name for name, result in results.items() if _conditional(result)]
    if conditional and len(conditional) < len(results):
        first = conditional[0]
        model = results[first].attrs["model"]
        raise ValueError(
            f"results[{first!r}] ({model}) has a log likelihood given each item's own "
            "parameters, while the others integrate them out: their elpd are not on one scale; "
            f"replace it by ambppl.get_model({model!r}).module.with_integrated_log_likelihood("
            "result, answers) first"
        )
