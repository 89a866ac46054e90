"""How much a learned prior's hyperparameters follow their own prior rather than the data
(``hyperprior_sensitivity``, power-scaling of the prior), and what prior of the measure they
imply (``implied_prior``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ambppl.data.contract import count_values
from ambppl.internal.checks import check_positive_int, check_prior_total, check_prob
from ambppl.internal.resultdata import check_fit_tree, observed_counts
from ambppl.maths import measures
from ambppl.maths.draws import dirichlet_draws

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PSENSE_THRESHOLD", "hyperprior_sensitivity", "implied_prior"]

#: Power-scaling sensitivity at or above which a quantity counts as sensitive (Kallioinen et
#: al. 2024, section 4: 0.05).
PSENSE_THRESHOLD = 0.05


def hyperprior_sensitivity(result: Any, *, threshold: float = PSENSE_THRESHOLD) -> pd.DataFrame:
    """Does the data pin each hyperparameter down, or does its own prior decide it?

    Power-scaling sensitivity (Kallioinen et al. 2024, :func:`arviz_stats.psense`) of each
    hyperparameter of a learned-prior fit (``mu`` and ``kappa`` of ``hierarchical_dirichlet``;
    the sampled scales of the rater models: ``sigma_item`` and ``sigma_rater`` of
    ``rater_effects``, ``sigma_item_shared`` and ``sigma_rater_shared`` with two categories;
    ``pi``, ``diag_gap`` and ``sigma_rater`` of ``dawid_skene``): how far its posterior
    moves when the hyperprior, or the likelihood, is raised to a power near 1. Computed
    from the fit's draws by Pareto-smoothed importance weights, no refit.

    Parameters
    ----------
    result : xarray.DataTree
        A fit with a ``log_prior`` group: :func:`ambppl.fit` writes one for the methods
        ``"collapsed"`` and ``"nuts"`` of a model with sampled hyperparameters (not for
        ``exact``, ``empirical_bayes``, ``laplace`` or ``map``).
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
        matters), or ``"prior-sensitive (likelihood not computed)"`` where the prior is
        sensitive and the fit has no ``log_likelihood`` group to tell the two apart.
        ``attrs["threshold"]`` holds the threshold.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree.
    ValueError
        If ``result`` has no ``log_prior`` group (the message names the fit's model and
        method) or ``threshold`` is not in (0, 1).

    Notes
    -----
    On items that all look alike (answers no more spread than one shared response
    distribution gives) the marginal likelihood of ``kappa`` rises to a plateau, the
    multinomial, as ``kappa -> inf``: the data set no upper bound, and the upper tail of
    ``kappa``'s posterior is its prior's. Such a fit is proper and converges, but ``kappa``
    (and the amount of shrinkage it implies) says more about its prior than about the
    data; this function flags it (prior sensitivity 2.4 on 400 such items of two
    categories, 0.03 on 400 items with ``q_i ~ Beta(1, 1)``, seed 3;
    ``tests/analysis/test_sensitivity.py``). With ``hierarchical_dirichlet``'s half-Cauchy
    prior the prior density of ``1 / kappa`` is flat near 0, so moving the prior's scale
    hardly moves such a posterior (the median of ``kappa`` by 1.07 for a 10x scale) while
    changing its shape at ``1 / kappa = 0`` does (squaring the prior density: 0.40): the
    sensitivity this function measures is to the prior's form there, which no data of
    alike items can check.

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

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            f"result must be an xarray.DataTree from ambppl.fit, but got {type(result).__name__}"
        )
    threshold = check_prob(threshold, "threshold")
    if "log_prior" not in result.children:
        model, method = result.attrs.get("model"), result.attrs.get("method")
        raise ValueError(
            "result has no log_prior group: hyperprior sensitivity needs a fit of a model "
            "with sampled hyperparameters by method 'collapsed' or 'nuts', but got a fit of "
            f"model {model!r} by method {method!r} (exact, empirical_bayes, laplace and map "
            "fits, and models with a fixed prior, have no hyperprior draws to scale)"
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
    known = table["likelihood"].notna()
    conflict = ~table["pinned_down"] & known & (table["likelihood"] >= threshold)
    weak = ~table["pinned_down"] & known & ~conflict
    unknown = ~table["pinned_down"] & ~known
    table["diagnosis"] = np.select(
        [conflict, weak, unknown],
        ["prior-data conflict", "weak likelihood", "prior-sensitive (likelihood not computed)"],
        default="ok",
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


def implied_prior(
    result: Any,
    *,
    measure: str = "amb",
    hdi_prob: float | None = None,
    comparison: Sequence[float] = (0.5, 1.0),
    draws: int = 4000,
    random_seed: Any = None,
) -> dict[str, Any]:
    """The learned prior of a fit: its hyperparameters and the prior of a measure they imply.

    For a fit with hyperparameters ``mu`` and ``kappa`` (``hierarchical_dirichlet``): their
    posterior means (``kappa``: median) and HDIs, the symmetric ``beta = kappa / K`` they
    correspond to, and ``draws`` draws of the measure under the learned prior,
    ``q ~ Dirichlet(kappa * mu)`` with ``(mu, kappa)`` resampled from the posterior, next to
    ``draws`` draws under each symmetric prior ``q ~ Dirichlet(beta * ones)`` of
    ``comparison``.

    Parameters
    ----------
    result : xarray.DataTree
        A fit whose posterior has ``mu`` (over ``category``) and ``kappa``.
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure whose implied prior is drawn.
    hdi_prob : float, optional
        Probability of the HDIs (:func:`arviz.hdi`); default arviz's ``stats.ci_prob``.
    comparison : sequence of float, default (0.5, 1.0)
        Symmetric Dirichlet concentrations the learned prior is compared with: distinct
        positive finite numbers (a list, tuple or 1-D array; it may be empty).
    draws : int, default 4000
        Draws of q from each prior.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws; a Generator is used (and advanced) as it is.

    Returns
    -------
    dict
        ``measure``, ``hdi_prob``, ``n_items``, ``n_categories``, ``uniform`` (1 / K),
        ``point_estimate`` (True when ``mu`` and ``kappa`` do not vary over the draws, as in
        empirical Bayes); ``mu``: one dict per category with ``label``, ``mean``, ``lower``,
        ``upper`` and ``is_cs`` (the can't-solve category); ``kappa`` and ``beta``: dicts with
        ``median``, ``lower`` and ``upper`` (the median: where the data bound ``kappa`` on one side
        only its posterior mean may not exist, ``hierarchical_dirichlet``'s prior has a
        ``kappa^-2`` tail); ``implied``: one dict per prior (the learned first,
        then ``comparison``) with ``label`` (``"learned prior"``, ``"beta = 0.5"``, ...) and
        ``mean`` (of the measure's draws; a beta is written ``:g``, with every digit where
        ``:g`` would round it); ``samples``: the measure's draws per prior (arrays of length
        ``draws``, keyed by a figure label, in the order of ``implied``);
        ``n_prior_draws`` (``draws``).

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree, ``comparison`` is not a sequence of numbers (a single
        number, a string, None), or ``hdi_prob`` or ``draws`` is not a number of its kind.
    ValueError
        If ``result`` has no ``posterior`` or ``observed_data`` group (with ``counts``), its
        posterior has no ``mu`` and ``kappa``, ``measure`` is unknown, ``hdi_prob`` is not in
        (0, 1), ``draws`` is below 1, or ``comparison`` holds a number that is not positive
        and finite (or too large to draw from), or one twice.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> counts = xr.DataArray(np.random.default_rng(1).multinomial(5, [0.3, 0.7], size=50),
    ...                       dims=("item", "category"), coords={"category": ["yes", "no"]},
    ...                       attrs={"cant_solve": None})
    >>> fit = ambppl.fit(counts, "hierarchical_dirichlet", method="empirical_bayes",
    ...                  draws=100, chains=1, random_seed=1)
    >>> from ambppl.analysis import implied_prior
    >>> prior = implied_prior(fit, draws=500, random_seed=1)
    >>> [i["label"] for i in prior["implied"]], prior["point_estimate"]
    (['learned prior', 'beta = 0.5', 'beta = 1'], True)
    >>> bool(0 <= prior["implied"][0]["mean"] <= 1)
    True
    """
    import arviz_base
    import numpy as np
    import xarray as xr

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            f"result must be an xarray.DataTree from ambppl.fit, but got {type(result).__name__}"
        )
    check_fit_tree(result)
    posterior = result["posterior"]
    if "mu" not in posterior or "kappa" not in posterior:
        raise ValueError(
            "result has no learned prior: implied_prior needs a posterior with mu and kappa "
            "(a fit of hierarchical_dirichlet)"
        )
    counts = observed_counts(result)
    function = _MEASURES.get(measure)
    if function is None:
        raise ValueError(f"measure must be one of {sorted(_MEASURES)}, but got {measure!r}")
    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    hdi_prob = check_prob(hdi_prob, "hdi_prob")
    draws = check_positive_int(draws, "draws")
    _, cs = count_values(counts)
    mu = posterior["mu"].transpose("chain", "draw", ...)
    kappa = posterior["kappa"].transpose("chain", "draw", ...)
    n_cat = int(mu.shape[-1])
    betas = _check_comparison(comparison, n_cat)
    labels = [str(c) for c in counts["category"].values]
    mu_mean = mu.mean(("chain", "draw")).values
    mu_hdi = _hdi(mu, hdi_prob)
    kappa_hdi = _hdi(kappa, hdi_prob)
    beta_hdi = _hdi(kappa / n_cat, hdi_prob)
    kappa_median = float(kappa.median())
    point = bool(np.ptp(kappa.values) == 0 and np.all(np.ptp(mu.values, axis=(0, 1)) == 0))

    # q ~ Dirichlet(kappa * mu) for resampled posterior draws of (mu, kappa), against
    # q ~ Dirichlet(beta * ones)
    rng = np.random.default_rng(random_seed)
    flat_mu = mu.values.reshape(-1, n_cat)
    flat_kappa = kappa.values.reshape(-1)
    pick = rng.integers(len(flat_kappa), size=draws)
    alpha = (flat_kappa[pick, None] * flat_mu[pick])[:, None, :]
    learned_q = dirichlet_draws(rng, alpha, draws)[:, 0, :]
    samples = {"learned prior: Dirichlet(κ·μ)": function(learned_q, cant_solve=cs)}
    implied = [{"label": "learned prior", "mean": float(np.mean(samples[next(iter(samples))]))}]
    for beta, label in betas.items():
        q = dirichlet_draws(rng, np.full((1, n_cat), beta), draws)[:, 0, :]
        values = function(q, cant_solve=cs)
        samples[f"symmetric prior β = {label}"] = values
        implied.append({"label": f"beta = {label}", "mean": float(np.mean(values))})
    return {
        "measure": measure,
        "hdi_prob": hdi_prob,
        "point_estimate": point,
        "n_items": int(counts.sizes["item"]),
        "n_categories": n_cat,
        "mu": [
            {
                "label": lab,
                "mean": float(mu_mean[k]),
                "lower": float(mu_hdi[k, 0]),
                "upper": float(mu_hdi[k, 1]),
                "is_cs": cs is not None and k == cs,
            }
            for k, lab in enumerate(labels)
        ],
        "uniform": 1.0 / n_cat,
        "kappa": {
            "median": kappa_median,
            "lower": float(kappa_hdi[0]),
            "upper": float(kappa_hdi[1]),
        },
        "beta": {
            "median": kappa_median / n_cat,
            "lower": float(beta_hdi[0]),
            "upper": float(beta_hdi[1]),
        },
        "implied": implied,
        "samples": samples,
        "n_prior_draws": draws,
    }


def _check_comparison(comparison: Any, n_categories: int) -> dict[float, str]:
    """``comparison`` of :func:`implied_prior` checked: distinct positive finite numbers,
    each with its label (``:g``, or every digit where ``:g`` would round it)."""
    import math
    import numbers
    from collections.abc import Collection, Mapping

    import numpy as np

    if (
        isinstance(comparison, str | bytes | Mapping)
        or not isinstance(comparison, Collection)
        or (isinstance(comparison, np.ndarray) and comparison.ndim != 1)
    ):
        raise TypeError(
            "comparison must be a sequence of distinct positive numbers (symmetric Dirichlet "
            f"concentrations, e.g. (0.5, 1.0)), but got {comparison!r}"
        )
    betas: dict[float, str] = {}
    for i, beta in enumerate(comparison):
        if isinstance(beta, bool | np.bool_) or not isinstance(beta, numbers.Real):
            raise TypeError(
                "comparison must hold numbers (symmetric Dirichlet concentrations), but "
                f"comparison[{i}] is {beta!r}"
            )
        value = float(beta)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(
                "comparison must hold positive finite numbers (symmetric Dirichlet "
                f"concentrations), but comparison[{i}] is {beta!r}"
            )
        check_prior_total(np.full(n_categories, value), f"comparison[{i}]")
        if value in betas:
            raise ValueError(
                "comparison must hold distinct numbers (one implied prior and one sample "
                f"each), but got {comparison!r}: {betas[value]} more than once"
            )
        short = f"{value:g}"
        betas[value] = short if float(short) == value else repr(value)
    return betas


#: The measure functions :func:`implied_prior` draws, by name.
_MEASURES = {
    "amb": measures.amb,
    "modified": measures.amb_modified,
    "old": measures.amb_old,
    "entropy": measures.normalized_entropy,
}


def _hdi(draws: Any, hdi_prob: float) -> Any:
    """HDI over (chain, draw) with :func:`arviz.hdi`: array (..., 2) of lower, upper."""
    import arviz as az
    import numpy as np

    hdi = az.hdi(draws, prob=hdi_prob, dim=["chain", "draw"])
    return np.stack([hdi.sel(ci_bound="lower").values, hdi.sel(ci_bound="upper").values], axis=-1)
