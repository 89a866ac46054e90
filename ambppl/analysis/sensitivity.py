"""Prior sensitivity: each item's posterior under several priors, side by side
(``prior_sensitivity``; the hyperparameters' own sensitivity is ``ambppl.analysis.hyperprior``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.analysis.hyperprior import PSENSE_THRESHOLD, hyperprior_sensitivity
from ambppl.analysis.summary import summarize
from ambppl.data.contract import as_counts, refuse_read_options
from ambppl.inference.fitting import fit
from ambppl.internal.checks import category_aligned, check_prior
from ambppl.maths.measures import VARIABLES, measure_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LEARNED_PRIORS", "PSENSE_THRESHOLD", "hyperprior_sensitivity", "prior_sensitivity"]


#: Names of learned priors accepted in ``priors`` -> (catalog model, fit method).
LEARNED_PRIORS: dict[str, tuple[str, str]] = {
    "hierarchical": ("hierarchical_dirichlet", "collapsed"),
    "empirical_bayes": ("hierarchical_dirichlet", "empirical_bayes"),
}

#: Statistics per prior in the table.
STATISTICS = ("mean", "hdi_lower", "hdi_upper")


def _label(prior: Any) -> str:
    """``"beta=0.5"`` for a number, ``"beta=[1, 1, 2]"`` for one per category (each ``:g``,
    or every digit where ``:g`` would round it); a learned prior's name as it is."""
    if isinstance(prior, str):
        return prior
    values = np.asarray(prior, dtype=np.float64)
    if values.ndim == 0:
        return f"beta={_number(float(values))}"
    return f"beta=[{', '.join(_number(float(v)) for v in values)}]"


def _number(value: float) -> str:
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def _check_priors(priors: Sequence[Any], counts: Any) -> list[Any]:
    """Every element of ``priors`` checked before any fit: a learned prior's name, or a
    fixed prior (:func:`ambppl.internal.checks.check_prior`: a positive number or one per
    category; a labelled one, a Series or DataArray, first put in the order of the
    categories of ``counts`` by its labels, :func:`ambppl.internal.checks.category_aligned`),
    with the element named (``priors[1]``) in the message."""
    names = sorted(LEARNED_PRIORS)
    n_categories = counts.sizes["category"]
    checked: list[Any] = []
    for i, prior in enumerate(priors):
        if isinstance(prior, str):
            if prior not in LEARNED_PRIORS:
                raise ValueError(
                    f"priors must hold positive numbers, vectors of {n_categories} positive "
                    f"numbers or the names {names}, but priors[{i}] is {prior!r}"
                )
            checked.append(prior)
            continue
        # by its labels: read by position, a Series in another order than the categories
        # gave each concentration to the wrong category
        prior = category_aligned(prior, counts["category"], name=f"priors[{i}]")
        try:
            vector = check_prior(prior, n_categories, name=f"priors[{i}]")
        except TypeError as err:
            raise TypeError(
                f"{err}; priors must hold positive numbers, vectors of {n_categories} positive "
                f"numbers (one per category) or the names {names}"
            ) from None
        # a number, or a vector of equal numbers, is the symmetric prior (one label for it);
        # any other vector stays a list of floats
        symmetric = np.ndim(prior) == 0 or bool(np.all(vector == vector[0]))
        checked.append(float(vector[0]) if symmetric else vector.tolist())
    return checked


def prior_sensitivity(
    data: Any,
    priors: Sequence[Any] = (0.5, 1.0, "hierarchical"),
    *,
    measure: str = "amb",
    hdi_prob: float | None = None,
    threshold: float | None = None,
    draws: int = 1000,
    chains: int = 4,
    random_seed: Any = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """Per-item posterior mean and HDI of an ambiguity measure under each of several priors.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Counts already read, as for :func:`ambppl.fit` (:func:`ambppl.data.as_counts`; not a
        path: read files with :func:`ambppl.read_annotations` first).
    priors : sequence, default (0.5, 1.0, "hierarchical")
        A non-empty sequence (a list, tuple or 1-D array; not a single value or a dict),
        each a positive number (the symmetric Dirichlet prior ``beta`` of
        ``dirichlet_categorical``, fitted exactly), a vector of one positive number per
        category (that model's full Dirichlet prior: a bare array in the order of the
        categories, a pandas Series indexed by the category labels or a DataArray with a
        ``category`` coordinate by its labels, in any order; one of equal numbers is the
        symmetric prior, labelled so) or the name of a learned prior:
        ``"hierarchical"`` (``hierarchical_dirichlet``, NUTS on ``mu`` and ``kappa`` then
        exact draws) or ``"empirical_bayes"`` (the same model with ``mu`` and ``kappa`` at
        their maximum marginal likelihood).
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure.
    hdi_prob : float, optional
        HDI probability; default ArviZ's ``rcParams["stats.ci_prob"]``.
    threshold : float, optional
        Also give ``p_above``, the posterior probability that the measure exceeds
        ``threshold``, under each prior (as :func:`ambppl.summarize` does).
    draws, chains : int, default 1000, 4
        Draws per chain and chains of every fit.
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same table.
    **kwargs
        None are taken: reader options (``cant_solve=``, ...) raise a TypeError that shows
        the call of :func:`ambppl.read_annotations` that takes them.

    Returns
    -------
    pandas.DataFrame
        Index ``item``; columns a two-level index (prior label, statistic): the prior
        labels are ``"beta=0.5"``, ``"beta=1"``, ``"beta=[1, 1, 0.5]"`` (a vector),
        ``"hierarchical"``, ... and the statistics
        ``mean``, ``hdi_lower``, ``hdi_upper`` (and ``p_above`` with ``threshold``).
        ``attrs`` holds ``measure``, ``hdi_prob``, ``threshold``
        and, for learned priors, ``learned``: label -> ``{"kappa": posterior mean,
        "mu": [posterior means]}``.

    Raises
    ------
    ValueError
        For a ``priors`` that is empty or not a sequence (None, one number or name, a
        dict), an element that is not positive and finite, a vector whose length is not the
        number of categories, a labelled vector whose labels are not the categories of
        ``data``, an unknown name, priors with the same label, or bad data (as
        :func:`ambppl.fit`). Every element is checked before the first fit; the message
        names it (``priors[1]``).
    TypeError
        For an element that is neither a name nor numbers (None, True), a path, reader
        options or any other keyword not in the signature.

    Notes
    -----
    A fixed prior adds ``beta`` pseudo-answers to every category, which matters most for
    items with few answers and for categories nobody chose (the weather data's unanimous
    tweets have posterior mean amb 0.25 under ``beta = 1`` and 0.14 under 0.5, plug-in 0).
    The learned prior adds ``kappa * mu``: as many pseudo-answers as the data support, spread
    like the answers overall.

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> counts = ambppl.read_annotations(np.array([[5, 0, 0], [2, 2, 1], [0, 4, 1]]),
    ...                                  categories=["a", "b", "cs"], cant_solve="cs")
    >>> table = ambppl.prior_sensitivity(counts, priors=(0.5, 1.0), draws=300, chains=2,
    ...                                  random_seed=1)
    >>> table.columns.get_level_values(0).unique().tolist()
    ['beta=0.5', 'beta=1']
    >>> bool((table[("beta=1", "mean")] > table[("beta=0.5", "mean")]).iloc[0])
    True
    """
    import pandas as pd

    if (
        isinstance(priors, str | bytes | Mapping)
        or not isinstance(priors, Collection)
        or (isinstance(priors, np.ndarray) and priors.ndim != 1)
        or not len(priors)
    ):
        raise ValueError(
            "priors must be a non-empty sequence of positive numbers and names from "
            f"{sorted(LEARNED_PRIORS)}, but got {priors!r}"
        )
    refuse_read_options(kwargs, "prior_sensitivity")
    if kwargs:
        raise TypeError(
            f"prior_sensitivity() got unexpected keyword arguments {sorted(kwargs)}; its "
            "keywords are priors, measure, hdi_prob, threshold, draws, chains and random_seed"
        )
    counts = as_counts(data)
    checked = _check_priors(priors, counts)
    labels = [_label(p) for p in checked]
    repeated = sorted({x for x in labels if labels.count(x) > 1})
    if repeated:
        raise ValueError(
            f"priors must be distinct (one column group each), but got {priors!r}: "
            f"{', '.join(repeated)} more than once"
        )
    rng = np.random.default_rng(random_seed)
    parts, learned = {}, {}
    for prior, label in zip(checked, labels, strict=True):
        if isinstance(prior, str):
            model, method = LEARNED_PRIORS[prior]
            params: dict[str, Any] = {}
        else:
            model, method, params = "dirichlet_categorical", "exact", {"prior": prior}
        result = fit(
            counts,
            model,
            method=method,
            draws=draws,
            chains=chains,
            random_seed=rng,
            var_names=[_variable(measure)],
            log_likelihood=False,
            **params,
        )
        if isinstance(prior, str):
            post = result["posterior"]
            learned[prior] = {
                "kappa": float(post["kappa"].mean()),
                "mu": post["mu"].mean(("chain", "draw")).values.tolist(),
            }
        extra = {} if threshold is None else {"threshold": threshold}
        table = summarize(result, measure=measure, hdi_prob=hdi_prob, **extra)
        columns = [*STATISTICS, *(["p_above"] if threshold is not None else [])]
        parts[label] = table[columns]
        hdi_prob = table.attrs["hdi_prob"]
    out = pd.concat(parts, axis=1, names=["prior", "statistic"])
    out.attrs = {
        "measure": table.attrs["measure"],
        "hdi_prob": hdi_prob,
        "threshold": threshold,
        "learned": learned,
    }
    return out


def _variable(measure: str) -> str:

    return VARIABLES[measure_name(measure)]
