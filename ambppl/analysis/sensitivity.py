"""Prior sensitivity: each item's posterior under several priors, side by side
(``prior_sensitivity``), and how much a learned prior's hyperparameters follow their own
prior rather than the data (``hyperprior_sensitivity``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LEARNED_PRIORS", "PSENSE_THRESHOLD", "hyperprior_sensitivity", "prior_sensitivity"]

#: Power-scaling sensitivity at or above which a quantity counts as sensitive (Kallioinen et
#: al. 2024, section 4: 0.05).
PSENSE_THRESHOLD = 0.05

#: Names of learned priors accepted in ``priors`` -> (catalog model, fit method).
LEARNED_PRIORS: dict[str, tuple[str, str]] = {
    "hierarchical": ("hierarchical_dirichlet", "collapsed"),
    "empirical_bayes": ("hierarchical_dirichlet", "empirical_bayes"),
}

#: Statistics per prior in the table.
STATISTICS = ("mean", "hdi_lower", "hdi_upper")


def _label(prior: Any) -> str:
    if isinstance(prior, str):
        return prior
    return f"beta={float(prior):g}"


def prior_sensitivity(
    data: Any,
    priors: Sequence[Any] = (0.5, 1.0, "hierarchical"),
    *,
    measure: str = "amb",
    hdi_prob: float | None = None,
    draws: int = 1000,
    chains: int = 4,
    random_seed: Any = None,
    **read_kwargs: Any,
) -> pd.DataFrame:
    """Per-item posterior mean and HDI of an ambiguity measure under each of several priors.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame, str, pathlib.Path or numpy.ndarray
        Counts or annotations, as for :func:`ambppl.inference.fitting`.
    priors : sequence, default (0.5, 1.0, "hierarchical")
        Each a positive number (the symmetric Dirichlet prior ``beta`` of
        ``dirichlet_categorical``, fitted exactly) or the name of a learned prior:
        ``"hierarchical"`` (``hierarchical_dirichlet``, NUTS on ``mu`` and ``kappa`` then
        exact draws) or ``"empirical_bayes"`` (the same model with ``mu`` and ``kappa`` at
        their maximum marginal likelihood).
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure.
    hdi_prob : float, optional
        HDI probability; default ArviZ's ``rcParams["stats.ci_prob"]``.
    draws, chains : int, default 1000, 4
        Draws per chain and chains of every fit.
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same table.
    **read_kwargs
        Passed to :func:`ambppl.read_annotations`.

    Returns
    -------
    pandas.DataFrame
        Index ``item``; columns a two-level index (prior label, statistic): the prior
        labels are ``"beta=0.5"``, ``"beta=1"``, ``"hierarchical"``, ... and the statistics
        ``mean``, ``hdi_lower``, ``hdi_upper``. ``attrs`` holds ``measure``, ``hdi_prob``
        and, for learned priors, ``learned``: label -> ``{"kappa": posterior mean,
        "mu": [posterior means]}``.

    Raises
    ------
    ValueError
        For an empty ``priors``, a prior that is neither positive nor a known name, or bad
        data (as :func:`ambppl.inference.fitting`).

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
    >>> counts = np.array([[5, 0, 0], [2, 2, 1], [0, 4, 1]])
    >>> table = ambppl.prior_sensitivity(counts, priors=(0.5, 1.0), draws=300, chains=2,
    ...                                  random_seed=1, categories=["a", "b", "cs"],
    ...                                  cant_solve="cs")
    >>> table.columns.get_level_values(0).unique().tolist()
    ['beta=0.5', 'beta=1']
    >>> bool((table[("beta=1", "mean")] > table[("beta=0.5", "mean")]).iloc[0])
    True
    """
    import numpy as np
    import pandas as pd

    from ambppl.analysis.summary import summarize
    from ambppl.inference.fitting import _as_counts, fit

    if isinstance(priors, str | int | float) or not len(priors):
        raise ValueError(
            "priors must be a non-empty sequence of positive numbers and names from "
            f"{sorted(LEARNED_PRIORS)}, but got {priors!r}"
        )
    counts = _as_counts(data, read_kwargs)
    rng = np.random.default_rng(random_seed)
    parts, learned = {}, {}
    for prior in priors:
        if isinstance(prior, str):
            if prior not in LEARNED_PRIORS:
                raise ValueError(
                    f"priors must hold positive numbers or the names {sorted(LEARNED_PRIORS)}, "
                    f"but got {prior!r}"
                )
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
        table = summarize(result, measure=measure, hdi_prob=hdi_prob)
        parts[_label(prior)] = table[list(STATISTICS)]
        hdi_prob = table.attrs["hdi_prob"]
    out = pd.concat(parts, axis=1, names=["prior", "statistic"])
    out.attrs = {"measure": table.attrs["measure"], "hdi_prob": hdi_prob, "learned": learned}
    return out


def _variable(measure: str) -> str:
    from ambppl.analysis.summary import _measure_name
    from ambppl.maths.measures import VARIABLES

    return VARIABLES[_measure_name(measure)]


def hyperprior_sensitivity(result: Any, *, threshold: float = PSENSE_THRESHOLD) -> pd.DataFrame:
    """Does the data pin each hyperparameter down, or does its own prior decide it?

    Power-scaling sensitivity (Kallioinen et al. 2024, :func:`arviz_stats.psense`) of each
    hyperparameter of a learned-prior fit (``mu`` and ``kappa`` of ``hierarchical_dirichlet``):
    how far its posterior moves when the hyperprior, or the likelihood, is raised to a power
    near 1. Computed from the fit's draws by Pareto-smoothed importance weights, no refit.

    Parameters
    ----------
    result : xarray.DataTree
        A fit with a ``log_prior`` group: :func:`ambppl.inference.fitting` writes one for the methods
        ``"collapsed"`` and ``"nuts"`` of a model with hyperparameters.
    threshold : float, default 0.05
        Sensitivity at or above which a hyperparameter is flagged (the paper's 0.05).

    Returns
    -------
    pandas.DataFrame
        One row per scalar hyperparameter (``kappa``, ``mu[<category>]``); columns
        ``prior`` and ``likelihood`` (the sensitivities; ``likelihood`` is NaN for a fit
        stored without its ``log_likelihood`` group), ``pinned_down`` (``prior <
        threshold``) and ``diagnosis``: ``"ok"``, ``"prior-data conflict"`` (both
        sensitive: the data pull against the prior) or ``"weak likelihood"`` (only the prior
        matters). ``attrs["threshold"]`` holds the threshold.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree.
    ValueError
        If ``result`` has no ``log_prior`` group (exact and empirical-Bayes fits have no
        hyperprior to scale) or ``threshold`` is not in (0, 1).

    Notes
    -----
    On items that all look alike (answers no more spread than one shared response
    distribution gives) the marginal likelihood of ``kappa`` rises to a plateau, the
    multinomial, as ``kappa -> inf``: the data set no upper bound, and the upper tail of
    ``kappa``'s posterior is its prior's. Such a fit is proper and converges, but ``kappa``
    (and the amount of shrinkage it implies) says more about ``kappa_sd`` than about the
    data; this function flags it (prior sensitivity about 0.6 on 2000 such items, 0.01 on
    500 items with ``q_i ~ Dirichlet(1, 1, 1)``; ``tests/test_sensitivity.py``).

    References
    ----------
    .. [1] Kallioinen, Paananen, Bürkner and Vehtari (2024), "Detecting and diagnosing prior
       and likelihood sensitivity with power-scaling", Statistics and Computing 34, 57.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> rng = np.random.default_rng(1)
    >>> counts = xr.DataArray(rng.multinomial(5, [0.3, 0.7], size=400), dims=("item", "category"),
    ...                       coords={"category": ["yes", "no"]}, attrs={"cant_solve": None})
    >>> fit = ambppl.fit(counts, "hierarchical_dirichlet", random_seed=1, progressbar=False)
    >>> table = ambppl.hyperprior_sensitivity(fit)
    >>> table.index.tolist()
    ['mu[yes]', 'mu[no]', 'kappa']
    >>> bool(table.loc["kappa", "pinned_down"]), bool(table.loc["mu[yes]", "pinned_down"])
    (False, True)
    """
    import numpy as np
    import pandas as pd
    import xarray as xr
    from arviz_stats import psense

    from ambppl.internal.checks import check_prob

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            f"result must be an xarray.DataTree from ambppl.fit, but got {type(result).__name__}"
        )
    threshold = check_prob(threshold, "threshold")
    if "log_prior" not in result.children:
        raise ValueError(
            "result has no log_prior group: hyperprior sensitivity needs a fit of a learned "
            "prior by method 'collapsed' or 'nuts' (exact and empirical_bayes fits have no "
            "hyperprior to scale)"
        )
    names = [n for n in result["log_prior"].data_vars if n in result["posterior"].data_vars]
    if not names:
        raise ValueError(
            "result's log_prior group names no posterior variable, but got "
            f"{list(result['log_prior'].data_vars)}"
        )
    prior = psense(result, var_names=names, group="prior")
    likelihood = (
        psense(result, var_names=names, group="likelihood")
        if "log_likelihood" in result.children
        else xr.full_like(prior, np.nan)
    )
    rows = {}
    for name in names:
        for label, p, lik in zip(
            _scalar_labels(prior[name]),
            np.ravel(prior[name].values),
            np.ravel(likelihood[name].values),
            strict=True,
        ):
            rows[label] = (float(p), float(lik))
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["prior", "likelihood"])
    table.index.name = "parameter"
    table["pinned_down"] = table["prior"] < threshold
    conflict = ~table["pinned_down"] & (table["likelihood"] >= threshold)
    weak = ~table["pinned_down"] & ~conflict
    table["diagnosis"] = np.select(
        [conflict, weak], ["prior-data conflict", "weak likelihood"], default="ok"
    )
    table.attrs["threshold"] = threshold
    return table


def _scalar_labels(values: Any) -> list[str]:
    """``name`` for a scalar, ``name[label]`` (``name[a,b]``) per element otherwise."""
    import itertools

    if not values.dims:
        return [str(values.name)]
    coords = [[str(c) for c in values[dim].values] for dim in values.dims]
    return [f"{values.name}[{','.join(key)}]" for key in itertools.product(*coords)]
