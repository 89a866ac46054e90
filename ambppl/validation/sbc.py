"""``sbc``: simulation-based calibration of any catalog model with any of its methods.

Draw parameters from the model's prior (its own PyMC program, so a new catalog model needs no
code here), simulate answers, fit them with :func:`ambppl.fit`, and rank each true value among
(roughly independent) posterior draws. If the inference is right, every rank is uniform; a
chi-square test per quantity and Holm's correction across quantities give the verdict.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from math import ceil
from typing import Any

import numpy as np

import ambppl
from ambppl.data.readers import read_long
from ambppl.inference.catalog import get_model
from ambppl.inference.fitting import INDEPENDENT_METHODS, METHODS, NUTS_METHODS
from ambppl.internal.checks import check_positive_int, check_prob, check_random_seed
from ambppl.maths.measures import VARIABLES
from ambppl.validation._result import ValidationResult, decide

__all__ = ["RANK_DRAWS", "plot_sbc", "sbc"]

#: Default number L of posterior draws each truth is ranked among (ranks 0..L: L + 1 values,
#: which every default bin count divides).
RANK_DRAWS = 99

#: Bin counts the default chooses from (all divide RANK_DRAWS + 1 = 100).
_BIN_CHOICES = (20, 10, 5, 4)

#: Arguments of ``ambppl.fit`` that ``sbc`` sets itself.
_FIT_RESERVED = (
    "data",
    "model",
    "method",
    "draws",
    "chains",
    "random_seed",
    "progressbar",
    "log_likelihood",
    "var_names",
)

#: Loggers silenced while the simulations run.
_LOGGERS = ("pymc", "pytensor")

#: Models of answers: items and raters whose per-item / per-rater quantities are ranked.
_TRACKED = 4

#: Models of answers with potentials that belong to the prior: forward draws per simulation
#: from which the importance resampling picks one.
_SIR_OVERSAMPLE = 20

#: Dimensions a table row pools over (besides the simulations).
_POOLED = ("item", "rater")


def sbc(
    model: str = "dirichlet_categorical",
    *,
    n_simulations: int = 100,
    n_items: int = 5,
    n_answers: int = 10,
    n_categories: int = 3,
    cant_solve: bool = True,
    n_raters: int | None = None,
    n_tracked: int | None = None,
    method: str | None = None,
    draws: int | None = None,
    chains: int | None = None,
    rank_draws: int = RANK_DRAWS,
    thin: int | None = None,
    bins: int | None = None,
    alpha: float = 0.01,
    fit_kwargs: dict[str, Any] | None = None,
    random_seed: Any = None,
    **model_kwargs: Any,
) -> ValidationResult:
    """Simulation-based calibration (SBC) of a catalog model and an inference method.

    Each of ``n_simulations`` simulations draws the parameters (``q`` of every item, the
    hyperparameters) from the model's prior, simulates ``n_answers`` answers per item, fits
    them with ``ambppl.fit(..., method=method)`` and records the rank of every true value among
    ``rank_draws`` posterior draws: of ``q`` (per item and category), of each ambiguity measure
    (per item) and of each hyperparameter. If the fit returns draws from the exact posterior,
    every rank is uniform on ``0..L`` (Talts et al. 2018).

    Parameters
    ----------
    model : str, default "dirichlet_categorical"
        Name of a catalog model (:func:`ambppl.list_models`): a model of counts, or a model
        of answers with rater ids (info record ``"data": "long"``, e.g. ``rater_effects``)
        whose file defines ``simulate_answers`` (Notes, "Models of answers").
    n_simulations : int, default 100
        Number of simulated data sets: at least 20 with the default ``bins`` (at least 2 with
        ``bins`` given). The chi-square test wants about five per bin: the default ``bins``
        is chosen from the number of simulations.
    n_items, n_answers, n_categories : int, default 5, 10, 3
        Shape of each simulated data set: items, answers per item, categories (can't-solve
        included). For models of answers ``n_answers`` is the most answers an item gets
        (the design gives each item between ``ceil(n_answers / 2)`` and ``n_answers``).
    cant_solve : bool, default True
        Whether the last category is "can't solve" (changes which measures exist).
    n_raters : int, optional
        Models of answers only: raters in the design (default ``2 * n_answers``; at least
        ``n_answers``, as each item's answers come from distinct raters).
    n_tracked : int, optional
        Models of answers only: how many items and how many raters have their per-item and
        per-rater quantities ranked (default 4 of each, spread from the least to the most
        answered); the quantities without an item or rater dimension are always ranked.
    method : str, optional
        One of the model's methods (its info record); default the model's first method.
    draws, chains : int, optional
        Draws per chain and chains of every fit. Default: for the independent methods
        (``exact``, ``empirical_bayes``) one chain of ``rank_draws`` draws; for the NUTS
        methods (``collapsed``, ``nuts``) 2 chains x 500 draws (after 500 tuning steps unless
        ``fit_kwargs["sample_kwargs"]`` says otherwise).
    rank_draws : int, default 99
        L: the number of posterior draws each truth is ranked among (ranks 0..L). Fewer are
        used when the fit has fewer draws, or fewer effective draws (``thin``).
    thin : int, optional
        Keep every ``thin``-th draw of each chain before choosing ``rank_draws`` evenly spaced
        draws. Default: for NUTS methods, thin each variable of each fit to its smallest bulk
        ESS (so the ranked draws are roughly independent); no thinning for independent draws.
    bins : int, optional
        Equal-probability bins of the rank test (2..L + 1). Default: the largest of 20, 10,
        5, 4 that leaves at least five simulations per bin. Two bins test only the median
        rank: they cannot see a posterior that is too narrow or too wide (ranks piled at
        both ends), so they are never chosen by default; fewer than 20 simulations need
        ``bins=2`` given, for a location-only test.
    alpha : float, default 0.01
        Family-wise false-alarm rate of the verdict (Holm across the table's rows).
    fit_kwargs : dict, optional
        Keywords for ``ambppl.fit`` that override the simulation's: model parameters (a
        deliberately wrong prior, e.g. ``{"prior": 3.0}``, to see SBC catch it), ``sampler``,
        ``sample_kwargs``. Not the arguments ``sbc`` sets itself (draws, chains, method, ...).
    random_seed : int, numpy.random.Generator or None
        Seed; each simulation gets its own child generator, so results are reproducible.
    **model_kwargs
        The model's parameters for simulating and fitting (e.g. ``prior=0.5``; see
        ``ambppl.get_model(model).info["parameters"]``).

    Returns
    -------
    ValidationResult
        ``check="sbc"``; ``table`` has one row per quantity (``q`` per category and each
        measure pooled over items; each hyperparameter element) with ``n_ranks``, ``bins``,
        ``chi2``, ``design_effect``, ``statistic`` (chi-square divided by the design effect),
        ``df``, ``p_value``, ``mean_pit`` (0.5 if unbiased; above: the posterior sits too
        low), ``sd_pit`` (0.289 if calibrated; above: too narrow, below: too wide),
        ``p_holm`` and ``flagged``. ``statistic`` is the largest row statistic, ``p_value``
        the smallest Holm-adjusted p-value. ``details["ranks"]`` is an
        :class:`xarray.DataTree` with the groups ``prior_sbc`` (randomized PIT values
        ``(rank + U) / (L + 1)``, dims chain (1), draw (one per simulation), item, ...;
        ready for ``arviz_plots.plot_ecdf_pit``), ``ranks`` (the integer ranks, dims
        simulation, ...) and ``rank_draws`` (L of each simulation and variable);
        ``details`` also holds ``truth`` (the prior draws), ``counts`` (the simulated
        data), ``fit_warnings`` (warning class -> number of fits that raised it),
        ``seconds`` and the settings. ``result.plot()`` draws the ECDF difference of every
        row's PIT values with a simultaneous ``1 - alpha`` band (:func:`plot_sbc`);
        ``arviz_plots.plot_ecdf_pit(result.details["ranks"], var_names=["amb"])`` draws one
        variable per item with arviz-plots' own test. For models of answers the rows pool
        over the tracked items and raters (``b[c1]``: the biases of every tracked rater in
        category ``c1``), and ``details`` also holds ``design`` (the answers' items and
        raters), ``labels`` (simulation x answer), ``tracked`` (the ranked items and raters)
        and ``prior_draws`` / ``prior_ess`` / ``prior_potentials`` (forward prior draws, the
        effective sample size of their importance weights, the potentials applied).

    Raises
    ------
    ValueError
        For an unknown model, a method the model does not offer, a model of answers whose
        file has no ``simulate_answers``, unknown model parameters, non-positive sizes,
        fewer than 2 simulations, a bad ``bins``, ``n_raters`` below ``n_answers``,
        ``n_raters`` or ``n_tracked`` for a model of counts, or ``fit_kwargs`` naming
        arguments ``sbc`` sets itself.
    TypeError
        For arguments of the wrong type (e.g. ``n_simulations=2.5``, ``cant_solve="yes"``).

    Notes
    -----
    The algorithm (Talts et al. 2018): for s = 1..S draw ``theta_s`` from the prior and data
    ``y_s`` given it, draw ``theta_s^(1..L)`` from the computed posterior given ``y_s`` and
    record ``r_s = #{l : theta_s^(l) < theta_s}``. If the posterior is right, ``theta_s`` is
    one more draw from it, so ``r_s`` is uniform on ``0..L``. The prior draws come from
    ``pymc.sample_prior_predictive`` on the model's own program (``model(counts, **params)``
    of the model file), built once on a template count array, so any catalog model works;
    the fits go through :func:`ambppl.fit`, so every route (exact, collapsed, empirical
    Bayes, NUTS) is what is checked. That is why this is not ``simuk``: it runs
    ``pymc.sample`` on a PyMC model and cannot check ambppl's exact or collapsed routes.

    *Discreteness and ties.* Ties (equal draws, e.g. the constant hyperparameters of
    ``empirical_bayes``) are broken at random, and each rank becomes a randomized PIT value
    ``(r + U) / (L + 1)``, exactly uniform on (0, 1) under calibration whatever L (which may
    differ between simulations after ESS thinning). The test bins PIT values into ``bins``
    equal bins; when ``bins`` divides L + 1 (the defaults) the randomization does not move any
    rank between bins. Each row's test is Pearson's chi-square on the bin counts of all its
    ranks. Ranks of different items in one simulation are independent only when the items
    share no unknown parameter; a learned prior couples them, so the chi-square is divided by
    the Rao-Scott first-order design effect (estimated from the spread of each simulation's
    bin counts, never below 1). That correction is approximate: it divides by the design
    effect averaged over the bins, and where dependence inflates some bins' variance more
    than others' the corrected test stays anti-conservative. Measured on PIT values that are
    uniform but dependent within a simulation (an exchangeable Gaussian copula with
    correlation rho; 20 bins; 2000 replications at level 0.01, 2026-12-07; the same
    simulation, smaller, in ``tests/validation/test_validation_sbc.py``): with 5 pooled
    values and 100 simulations the rejection rate was 0.014, 0.022 and 0.030 at rho = 0.3,
    0.6 and 0.95 (200 simulations: 0.016, 0.025, 0.024); with 15 pooled values 0.035, 0.059
    and 0.044; independent values (rho = 0) gave 0.007-0.010. So a row of pooled,
    dependent ranks raises false alarms up to about three (five items) to six (fifteen)
    times as often as ``alpha``: read a p-value near ``alpha`` on such a row with that in
    mind. The verdict: Holm-adjusted p-values at level ``alpha`` across rows.

    *What SBC detects:* a fit whose posterior is biased (mean PIT away from 0.5), too narrow
    (U-shaped ranks, sd of PIT above 0.289) or too wide (hump), averaged over the prior: a
    wrong conjugate update, a prior that differs between simulation and fit, a sampler that
    does not converge (too few effective draws give U-shaped ranks). *What it cannot detect:*
    errors that are the same in the simulator and the fit (both use the same model file, so
    a wrong model is invisible), errors confined to regions the prior rarely visits, errors
    too small for S simulations, and errors that leave every marginal rank uniform (e.g. the
    posterior of the wrong item, when items are exchangeable; a posterior equal to the prior
    is calibrated too). Passing is evidence about the inference code, not about the model's
    fit to real data.

    ``empirical_bayes`` is run, not refused: its hyperparameters are point estimates, not
    posterior draws, so their rows fail by construction (all draws equal: ranks 0 or L), and
    the ``q`` and measure rows show how much ignoring the hyperparameters' uncertainty
    miscalibrates the items (much with few items, little with hundreds).

    *Models of answers* (``"data": "long"``). The design is fixed for all simulations and
    drawn once from the seed: ``n_items`` items, each answered by between
    ``ceil(n_answers / 2)`` and ``n_answers`` distinct raters out of ``n_raters``, the raters
    chosen with unequal activity (Gamma(2) weights) and every rater answering at least once.
    The prior draws come from ``pymc.sample_prior_predictive`` of the free variables of the
    model's own program built on that design, and its deterministics from
    ``pymc.compute_deterministics``. Forward sampling ignores ``pm.Potential`` terms, so
    potentials that do not depend on the answers (found by evaluating every potential on
    two label sets; the one that does is the likelihood) are applied by sampling-importance
    resampling: ``20 * n_simulations`` forward draws, ``n_simulations`` of them resampled
    with weights ``exp(sum of those potentials)`` (``details["prior_ess"]``: the weights'
    effective sample size); where none belongs to the prior (the likelihood is the only
    potential, e.g. ``dawid_skene``) the first ``n_simulations`` forward draws are the prior
    draws, without resampling (which would repeat some). The answers of each simulation are
    drawn by the model file's ``simulate_answers``, which gets the prior draws of the
    variables its parameters name (leading axis: simulation), ``item`` and ``rater`` (each
    answer's positions), ``rng`` and any model parameters it names, and returns the category
    position of every answer (simulation x answer). The fits get the answers as a long table
    (``item``, ``rater``, ``label``). Ranked: the hyperparameters, ``q``, the measures and the other
    deterministics of the program, per-item and per-rater ones at the ``n_tracked`` tracked
    items and raters (rows pooled over them), except those the model file names in
    ``DATA_DEPENDENT`` (functions of the answers, e.g. ``dawid_skene``'s class posterior,
    whose value at a prior draw is not a true value).

    With NUTS methods every fit's warnings (e.g. ``ConvergenceWarning`` for short chains)
    are counted in ``details["fit_warnings"]`` rather than raised, and PyMC's logging is
    silenced during the loop. Each NUTS fit builds and compiles its model (cached by PyTensor
    after the first): about 2-3 s per fit on two cores.

    References
    ----------
    .. [1] Talts, S., Betancourt, M., Simpson, D., Vehtari, A. and Gelman, A. (2018),
       "Validating Bayesian inference algorithms with simulation-based calibration",
       arXiv:1804.06788.
    .. [2] Säilynoja, T., Bürkner, P.-C. and Vehtari, A. (2022), "Graphical test for discrete
       uniformity and its applications in goodness-of-fit evaluation and multiple sample
       comparison", Statistics and Computing 32, 32.
    .. [3] Rao, J. N. K. and Scott, A. J. (1981), "The analysis of categorical data from
       complex sample surveys", Journal of the American Statistical Association 76, 221-230.

    Examples
    --------
    >>> from ambppl.validation.sbc import sbc
    >>> result = sbc(n_simulations=20, n_items=3, method="exact", random_seed=1)
    >>> result.passed, result.check
    (True, 'sbc')
    >>> list(result.table["quantity"])
    ['q[c1]', 'q[c2]', 'q[cant_solve]', 'amb', 'amb_modified', 'amb_old', 'entropy']
    >>> result.details["ranks"]["ranks"]["q"].dims
    ('simulation', 'item', 'category')
    """
    started = time.perf_counter()
    entry, method, params = _check_model(model, method, model_kwargs)
    n_simulations = check_positive_int(n_simulations, "n_simulations")
    if n_simulations < 2:
        raise ValueError(
            f"n_simulations must be at least 2 (ranks of one simulation test nothing), but got "
            f"{n_simulations!r}; use 100 or more for a verdict with power"
        )
    n_items = check_positive_int(n_items, "n_items")
    n_answers = check_positive_int(n_answers, "n_answers")
    n_categories = check_positive_int(n_categories, "n_categories")
    if n_categories < 2:
        raise ValueError(f"n_categories must be at least 2, but got {n_categories!r}")
    if not isinstance(cant_solve, bool):
        raise TypeError(f"cant_solve must be True or False, but got {cant_solve!r}")
    long = entry.info.get("data", "counts") == "long"
    n_raters, n_tracked = _check_long_sizes(entry, long, n_answers, n_raters, n_tracked)
    rank_draws = check_positive_int(rank_draws, "rank_draws")
    if thin is not None:
        thin = check_positive_int(thin, "thin")
    if bins is None:
        bins = next((b for b in _BIN_CHOICES if n_simulations >= 5 * b), None)
        if bins is None:
            raise ValueError(
                f"n_simulations must be at least {5 * _BIN_CHOICES[-1]} for the default rank "
                f"test ({_BIN_CHOICES[-1]} bins of five simulations each), but got "
                f"{n_simulations!r}; use 100 or more for a verdict with power, or pass bins=2 "
                "for a test of the median rank only (blind to a posterior too narrow or too "
                "wide)"
            )
    else:
        bins = check_positive_int(bins, "bins")
        if not 2 <= bins <= rank_draws + 1:
            raise ValueError(
                f"bins must be between 2 and rank_draws + 1 = {rank_draws + 1}, but got "
                f"{bins!r}; choose a divisor of rank_draws + 1 with >= 5 simulations per bin"
            )
    alpha = check_prob(alpha, "alpha")

    independent = method in INDEPENDENT_METHODS
    chains = (1 if independent else 2) if chains is None else check_positive_int(chains, "chains")
    if draws is None:
        draws = -(-rank_draws // chains) if independent else 500
    draws = check_positive_int(draws, "draws")
    fit_options = _fit_options(entry, model_kwargs, fit_kwargs, method in NUTS_METHODS, draws)

    rngs = np.random.default_rng(check_random_seed(random_seed)).spawn(n_simulations + 2)
    long_sim: _LongSimulation | None = None
    if long:
        long_sim = _LongSimulation(
            entry,
            params,
            n_items=n_items,
            n_raters=n_raters,
            n_answers=n_answers,
            n_categories=n_categories,
            cant_solve=cant_solve,
            n_simulations=n_simulations,
            n_tracked=n_tracked,
            rng=rngs[0],
        )
        truth, simulated = long_sim.truth, long_sim.labels
        ranked_truth = long_sim.ranked_truth
        names = long_sim.rank_variables()
    else:
        template = _template(n_items, n_answers, n_categories, cant_solve)
        truth, simulated = _prior_draws(entry, template, params, n_simulations, rngs[0])
        ranked_truth = truth
        names = _rank_variables(entry, truth)
    jitter = rngs[1]

    ranks: dict[str, list[np.ndarray]] = {name: [] for name in names}
    kept: dict[str, list[int]] = {name: [] for name in names}
    fit_warnings: Counter[str] = Counter()
    for s in range(n_simulations):
        if long_sim:  # read as a user's answers are read (fit takes data already read)
            data = read_long(long_sim.answers(s), **long_sim.read_options)
        else:
            data = template.copy(data=simulated[s])
        seed = int(rngs[s + 2].integers(2**31 - 1))
        with _quiet(), _compile_mode(long), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tree = _fit(data, entry, method, draws, chains, seed, fit_options)
        for name in {type(w.message).__name__ for w in caught}:
            fit_warnings[name] += 1
        if s == 0:
            names = [n for n in names if n in tree["posterior"].data_vars]
        if long_sim:
            tree = long_sim.tracked_posterior(tree, names)
        n_keep = _n_keep(tree, names, rank_draws, thin, independent)
        for name in names:
            draws_ = _stacked(tree["posterior"][name], ranked_truth[name].dims[1:])
            idx = _selection(draws_.shape[0], chains, n_keep[name], thin)
            ranks[name].append(_rank(draws_[idx], ranked_truth[name].values[s], jitter))
            kept[name].append(len(idx))

    rank_tree = _rank_tree(ranked_truth, names, ranks, kept, jitter)
    table = _table(rank_tree, names, bins)
    passed, p_value = decide(table, "p_value", alpha)
    statistic = float(np.nanmax(table["statistic"])) if len(table) else float("nan")
    if long_sim:
        shape = (
            f"{n_items} items x {ceil(n_answers / 2)}-{n_answers} answers from {n_raters} "
            f"raters, {n_categories} categories; {n_tracked} items and raters tracked"
        )
        pooled = "tracked items and raters pooled"
    else:
        shape = f"{n_items} items x {n_answers} answers, {n_categories} categories"
        pooled = "items pooled"
    description = (
        f"SBC of {entry.name!r} fitted by method {method!r}: ranks of {n_simulations} prior "
        f"draws among up to {rank_draws} posterior draws ({shape}); per quantity a "
        f"chi-square test on {bins} equal bins ({pooled}, Rao-Scott corrected), Holm across "
        f"{len(table)} rows."
    )
    details = {
        "ranks": rank_tree,
        "truth": truth,
        "counts": long_sim.counts() if long_sim else _counts_array(template, simulated),
        "fit_warnings": dict(fit_warnings),
        "seconds": time.perf_counter() - started,
        "model": entry.name,
        "method": method,
        "parameters": params,
        "fit_kwargs": dict(fit_kwargs or {}),
        "draws": draws,
        "chains": chains,
        "rank_draws": rank_draws,
        "thin": thin,
        "bins": bins,
    }
    if long_sim:
        details.update(long_sim.details())
    return ValidationResult(
        check="sbc",
        passed=passed,
        statistic=statistic,
        p_value=p_value,
        level=alpha,
        table=table,
        description=description,
        details=details,
        plotter=plot_sbc,
    )


# ---------------------------------------------------------------------------------------
# Arguments


def _check_model(model: Any, method: Any, model_kwargs: dict[str, Any]) -> tuple:
    """The catalog entry, the method (checked or the default) and the full parameters."""

    if not isinstance(model, str):
        raise TypeError(f"model must be the name of a catalog model (a str), but got {model!r}")
    entry = get_model(model)  # ValueError naming the catalog's models
    if entry.info.get("data", "counts") == "long" and not callable(
        getattr(entry.module, "simulate_answers", None)
    ):
        raise ValueError(
            f"model {model!r} takes answers with rater ids (data 'long'), and sbc simulates "
            "them with the model file's simulate_answers(...), but its file defines none"
        )
    offered = list(entry.info["methods"])
    if method is None:
        method = offered[0]
    elif not isinstance(method, str) or method not in offered:
        known = "" if method in METHODS else f" (ambppl.fit knows {list(METHODS)})"
        raise ValueError(
            f"method must be one of the methods of model {model!r}, {offered}, but got "
            f"{method!r}{known}"
        )
    unknown = sorted(set(model_kwargs) - set(entry.info["parameters"]))
    if unknown:
        raise ValueError(
            f"sbc's extra keywords must be parameters of model {model!r} "
            f"({sorted(entry.info['parameters'])}), but got {unknown}"
        )
    return entry, method, {**entry.defaults, **model_kwargs}


def _check_long_sizes(
    entry: Any, long: bool, n_answers: int, n_raters: Any, n_tracked: Any
) -> tuple[int, int]:
    """``n_raters`` and ``n_tracked`` checked (models of answers) or refused (counts)."""
    if not long:
        for name, value in (("n_raters", n_raters), ("n_tracked", n_tracked)):
            if value is not None:
                raise ValueError(
                    f"{name} applies to models of answers with rater ids (info record data "
                    f"'long') only, but model {entry.name!r} takes counts; drop {name}="
                )
        return 0, 0
    n_raters = 2 * n_answers if n_raters is None else check_positive_int(n_raters, "n_raters")
    if n_raters < n_answers:
        raise ValueError(
            f"n_raters must be at least n_answers = {n_answers} (each item's answers come from "
            f"distinct raters), but got {n_raters!r}"
        )
    n_tracked = _TRACKED if n_tracked is None else check_positive_int(n_tracked, "n_tracked")
    return n_raters, n_tracked


def _design(
    n_items: int, n_raters: int, n_answers: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A seeded unbalanced design: each answer's item and rater position.

    Item ``i`` gets between ``ceil(n_answers / 2)`` and ``n_answers`` distinct raters, chosen
    with probabilities proportional to Gamma(2) activity weights; every rater answers at
    least once (rater ``j`` of a random order is given to item ``j mod n_items`` first, so an
    item may get more answers when ``n_raters > n_items * ceil(n_answers / 2)``). Raters are
    numbered in order of first appearance, items in order.
    """
    per_item = rng.integers(ceil(n_answers / 2), n_answers + 1, size=n_items)
    weights = rng.gamma(2.0, size=n_raters)
    first: list[list[int]] = [[] for _ in range(n_items)]
    for j, r in enumerate(rng.permutation(n_raters)):
        first[j % n_items].append(int(r))
    items, raters = [], []
    everyone = np.arange(n_raters)
    for i in range(n_items):
        chosen = list(first[i])
        need = int(per_item[i]) - len(chosen)
        if need > 0:
            free = np.setdiff1d(everyone, chosen)
            p = weights[free] / weights[free].sum()
            chosen += rng.choice(free, size=need, replace=False, p=p).tolist()
        items += [i] * len(chosen)
        raters += chosen
    import pandas as pd

    rater_pos, _ = pd.factorize(np.asarray(raters), sort=False)
    return np.asarray(items, dtype=np.int64), rater_pos.astype(np.int64)


def _spread(activity: np.ndarray, n: int) -> np.ndarray:
    """Positions of ``n`` units spread from the least to the most active (sorted)."""
    order = np.argsort(activity, kind="stable")
    n = min(n, order.size)
    picks = np.unique(np.round(np.linspace(0, order.size - 1, n)).astype(np.int64))
    return np.sort(order[picks])


class _LongSimulation:
    """Design, prior draws and simulated answers of a model of answers (``"data": "long"``)."""

    def __init__(
        self,
        entry: Any,
        params: dict,
        *,
        n_items: int,
        n_raters: int,
        n_answers: int,
        n_categories: int,
        cant_solve: bool,
        n_simulations: int,
        n_tracked: int,
        rng: np.random.Generator,
    ) -> None:
        import pandas as pd

        design_rng, prior_rng, answer_rng = rng.spawn(3)
        self.entry, self.params = entry, params
        self.categories = [f"c{k + 1}" for k in range(n_categories)]
        if cant_solve:
            self.categories[-1] = "cant_solve"
        self.cant_solve = "cant_solve" if cant_solve else None
        self.item_pos, self.rater_pos = _design(n_items, n_raters, n_answers, design_rng)
        self.design = pd.DataFrame(
            {
                "item": np.array([f"i{i}" for i in range(n_items)])[self.item_pos],
                "rater": np.array([f"r{r}" for r in range(n_raters)])[self.rater_pos],
            }
        )
        self.read_options = {
            "item": "item",
            "rater": "rater",
            "label": "label",
            "cant_solve": self.cant_solve,
            "categories": list(self.categories),
        }
        self.prior_draws = n_simulations
        self.prior_potentials: list[str] = []
        self.truth, self.deterministics, self.prior_ess = self._prior(n_simulations, prior_rng)
        self.labels = self._simulate(answer_rng)
        self.tracked = {
            "item": _spread(np.bincount(self.item_pos, minlength=n_items), n_tracked),
            "rater": _spread(np.bincount(self.rater_pos, minlength=n_raters), n_tracked),
        }
        self.ranked_truth = self.truth.isel(self.tracked, missing_dims="ignore")

    def answers(self, s: int, codes: np.ndarray | None = None) -> Any:
        """The long table of simulation ``s`` (or of the category positions ``codes``)."""
        import pandas as pd

        codes = self.labels[s] if codes is None else codes
        frame = self.design.assign(
            label=pd.Categorical.from_codes(codes, categories=self.categories)
        )
        frame.attrs = {"cant_solve": self.cant_solve, "source": "sbc"}
        return frame

    def _prior(self, n_simulations: int, rng: np.random.Generator) -> tuple[Any, list, float]:
        """Prior draws (Dataset, dims simulation, ...) of the program's free variables and
        deterministics; answer-free potentials applied by importance resampling."""
        import pymc as pm
        import xarray as xr

        first = self.answers(0, np.zeros(len(self.design), dtype=np.int64))
        with _quiet():
            pm_model = self.entry.build(first, **self.params)
        free = [rv.name for rv in pm_model.free_RVs]
        deterministics = [v.name for v in pm_model.deterministics]
        n_draws = n_simulations * (_SIR_OVERSAMPLE if pm_model.potentials else 1)
        self.prior_draws = n_draws
        with _quiet(), warnings.catch_warnings():
            # forward sampling ignores potentials; the prior ones are applied below
            warnings.filterwarnings(
                "ignore", message="The effect of Potentials", category=UserWarning
            )
            prior = pm.sample_prior_predictive(
                draws=n_draws,
                model=pm_model,
                var_names=free,
                random_seed=int(rng.integers(2**31 - 1)),
            )
        draws = prior["prior"].to_dataset()[free]
        ess = float(n_simulations)
        if pm_model.potentials:
            log_w = self._prior_log_weights(pm_model, draws)
            if self.prior_potentials:
                w = np.exp(log_w - log_w.max())
                w /= w.sum()
                ess = float(1.0 / np.sum(w**2))
                pick = rng.choice(log_w.size, size=n_simulations, replace=True, p=w)
            else:  # only the likelihood: the forward draws are the prior's, no duplicates
                pick = np.arange(n_simulations)
            draws = draws.transpose("chain", "draw", ...)
            draws = xr.Dataset(
                {
                    name: (
                        da.dims,
                        da.values.reshape(-1, *da.shape[2:])[pick][None],
                    )
                    for name, da in draws.data_vars.items()
                },
                coords={
                    **{c: draws[c].values for c in draws.coords if c not in ("chain", "draw")},
                    "chain": [0],
                    "draw": np.arange(n_simulations),
                },
            )
        with _quiet():
            derived = pm.compute_deterministics(
                draws, var_names=deterministics, model=pm_model, progressbar=False
            )
        truth = (
            draws.assign({n: derived[n] for n in deterministics})
            .isel(chain=0, drop=True)
            .rename(draw="simulation")
            .drop_attrs()
        )
        bad = [n for n, da in truth.data_vars.items() if not np.all(np.isfinite(da.values))]
        if bad:
            raise RuntimeError(
                f"the prior of model {self.entry.name!r} with parameters {self.params} gave "
                f"non-finite draws of {bad}; choose parameters that keep the prior proper"
            )
        return truth, deterministics, ess

    def _prior_log_weights(self, pm_model: Any, draws: Any) -> np.ndarray:
        """Sum of the potentials that do not depend on the answers, per draw (chain-major).

        Every potential is evaluated at the first draws on two label sets (all answers in
        the first category, all in the last); those that agree belong to the prior."""
        import pymc as pm

        other = self.answers(0, np.full(len(self.design), len(self.categories) - 1))
        with _quiet():
            other_model = self.entry.build(other, **self.params)
        values = []
        for mdl, sub in ((pm_model, draws), (other_model, draws.isel(draw=slice(0, 4)))):
            names = []
            with mdl:
                for j, pot in enumerate(mdl.potentials):
                    names.append(f"_sbc_potential_{j}")
                    pm.Deterministic(names[-1], pot)
            with _quiet():
                out = pm.compute_deterministics(sub, var_names=names, model=mdl, progressbar=False)
            values.append([np.asarray(out[n].values, dtype=np.float64) for n in names])
        log_w = np.zeros(draws.sizes["chain"] * draws.sizes["draw"])
        for pot, full, few in zip(pm_model.potentials, *values, strict=True):
            head = full[:, : few.shape[1]]
            if np.allclose(head, few, rtol=1e-9, atol=1e-9):
                self.prior_potentials.append(pot.name)
                log_w += full.reshape(full.shape[0] * full.shape[1], -1).sum(axis=1)
        return log_w

    def _simulate(self, rng: np.random.Generator) -> np.ndarray:
        """Category positions (simulation x answer) from the model file's simulate_answers."""
        import inspect

        hook = self.entry.module.simulate_answers
        kwargs: dict[str, Any] = {}
        for name in inspect.signature(hook).parameters:
            if name == "item":
                kwargs[name] = self.item_pos
            elif name == "rater":
                kwargs[name] = self.rater_pos
            elif name == "rng":
                kwargs[name] = rng
            elif name in self.truth.data_vars:
                kwargs[name] = self.truth[name].values
            elif name in self.params:
                kwargs[name] = self.params[name]
        labels = np.asarray(hook(**kwargs))
        n_sim = self.truth.sizes["simulation"]
        k = len(self.categories)
        if labels.shape != (n_sim, len(self.design)) or not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(
                f"model {self.entry.name!r}: simulate_answers must return integer category "
                f"positions of shape (simulations, answers) = {(n_sim, len(self.design))}, but "
                f"got {labels.dtype} {labels.shape}"
            )
        if labels.min() < 0 or labels.max() >= k:
            raise ValueError(
                f"model {self.entry.name!r}: simulate_answers must return category positions "
                f"0..{k - 1}, but got values from {labels.min()} to {labels.max()}"
            )
        return labels.astype(np.int64)

    def rank_variables(self) -> list[str]:
        """Hyperparameters, ``q``, the measures, then the program's other deterministics."""

        # a model file's DATA_DEPENDENT: deterministics that are functions of the answers
        # (e.g. dawid_skene's class posterior), which have no true value to rank
        skip = set(getattr(self.entry.module, "DATA_DEPENDENT", ()))
        order = [*self.entry.hyperparameters, "q", *VARIABLES.values()]
        names = [n for n in order if n in self.truth.data_vars and n not in skip]
        return names + sorted(
            n
            for n in self.deterministics
            if n in self.truth.data_vars and n not in names and n not in skip
        )

    def tracked_posterior(self, tree: Any, names: list[str]) -> Any:
        """A tree whose posterior holds ``names`` at the tracked items and raters."""
        import xarray as xr

        post = tree["posterior"].to_dataset()[names]
        where = {
            dim: self.ranked_truth[dim].values for dim in ("item", "rater") if dim in post.dims
        }
        return xr.DataTree.from_dict({"posterior": post.sel(where)})

    def counts(self) -> Any:
        """Simulated counts (simulation, item, category)."""
        import xarray as xr

        n_sim = self.labels.shape[0]
        n_items, k = self.truth.sizes["item"], len(self.categories)
        flat = (np.arange(n_sim)[:, None] * n_items + self.item_pos[None, :]) * k + self.labels
        values = np.bincount(flat.ravel(), minlength=n_sim * n_items * k)
        return xr.DataArray(
            values.reshape(n_sim, n_items, k),
            dims=("simulation", "item", "category"),
            coords={
                "simulation": np.arange(n_sim),
                "item": self.truth["item"].values,
                "category": self.categories,
            },
            name="counts",
            attrs={"cant_solve": self.cant_solve, "source": "sbc"},
        )

    def details(self) -> dict[str, Any]:
        import xarray as xr

        labels = xr.DataArray(
            self.labels,
            dims=("simulation", "answer"),
            coords={"simulation": np.arange(self.labels.shape[0])},
            name="labels",
            attrs={"categories": list(self.categories)},
        )
        return {
            "design": self.design.copy(),
            "labels": labels,
            "tracked": {dim: self.ranked_truth[dim].values.tolist() for dim in self.tracked},
            "prior_ess": self.prior_ess,
            "prior_draws": self.prior_draws,
            "prior_potentials": list(self.prior_potentials),
        }


def _fit_options(
    entry: Any, model_kwargs: dict, fit_kwargs: Any, nuts: bool, draws: int
) -> dict[str, Any]:
    """Keywords for every ``ambppl.fit`` call: parameters (fit_kwargs overriding) and NUTS
    options (one core, ``draws`` tuning steps, no PyMC convergence report: ``fit`` checks
    convergence itself)."""
    if fit_kwargs is None:
        fit_kwargs = {}
    if not isinstance(fit_kwargs, dict):
        raise TypeError(f"fit_kwargs must be a dict or None, but got {fit_kwargs!r}")
    reserved = sorted(set(fit_kwargs) & set(_FIT_RESERVED))
    if reserved:
        raise ValueError(
            f"fit_kwargs must not contain {reserved}: sbc sets them itself (use sbc's own "
            "method=, draws=, chains=, random_seed=)"
        )
    allowed = {*entry.info["parameters"], "sampler", "sample_kwargs"}
    unknown = sorted(set(fit_kwargs) - allowed)
    if unknown:
        raise ValueError(
            f"fit_kwargs must hold parameters of model {entry.name!r} or 'sampler' / "
            f"'sample_kwargs', but got {unknown}"
        )
    options = {**model_kwargs, **fit_kwargs}
    if nuts:
        sample_kwargs = {"cores": 1, "tune": draws, "compute_convergence_checks": False}
        sample_kwargs.update(fit_kwargs.get("sample_kwargs") or {})
        options["sample_kwargs"] = sample_kwargs
        if entry.info.get("sampler") not in (None, "pymc") and "sampler" not in fit_kwargs:
            # The model's own default (e.g. nutpie) compiles every simulated data set's
            # model anew: ~50 s per fit of a tiny rater_effects design, PyMC's NUTS ~10 s.
            options["sampler"] = "pymc"
    return options


# ---------------------------------------------------------------------------------------
# Simulation and fitting


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence PyMC's and PyTensor's logging (sampling messages, chain advice)."""
    import pymc  # noqa: F401  (importing pymc sets its logger's level: set ours after)

    loggers = [logging.getLogger(name) for name in _LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


@contextlib.contextmanager
def _compile_mode(long: bool) -> Iterator[None]:
    """Models of answers: PyTensor's C virtual machine for the fits. Every simulated data set
    is a new graph (the answers are constants of the likelihood); the C backend caches its
    compiled ops on disk across graphs, the default numba backend compiles each graph anew
    (a tiny rater_effects design: about 10 s per fit against 23 s, once the cache is warm)."""
    if not long:
        yield
        return
    import pytensor

    with pytensor.config.change_flags(mode="CVM"):
        yield


def _template(n_items: int, n_answers: int, n_categories: int, cant_solve: bool) -> Any:
    """A count DataArray of the simulated shape (every answer in the first category)."""
    import xarray as xr

    labels = [f"c{k + 1}" for k in range(n_categories)]
    if cant_solve:
        labels[-1] = "cant_solve"
    values = np.zeros((n_items, n_categories), dtype=np.int64)
    values[:, 0] = n_answers
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(n_items), "category": labels},
        name="counts",
        attrs={"cant_solve": "cant_solve" if cant_solve else None, "source": "sbc"},
    )


def _prior_draws(
    entry: Any, template: Any, params: dict, n_simulations: int, rng: np.random.Generator
) -> tuple[Any, np.ndarray]:
    """Prior draws of every variable (Dataset, dims simulation, ...) and simulated counts."""
    import pymc as pm

    with _quiet():
        pm_model = entry.module.model(template, **params)
        prior = pm.sample_prior_predictive(
            draws=n_simulations, model=pm_model, random_seed=int(rng.integers(2**31 - 1))
        )
    truth = prior["prior"].to_dataset().isel(chain=0, drop=True).rename(draw="simulation")
    truth = truth.drop_attrs()
    counts = np.asarray(prior["prior_predictive"]["counts"].values[0], dtype=np.int64)
    bad = [name for name, da in truth.data_vars.items() if not np.all(np.isfinite(da.values))]
    if bad:
        raise RuntimeError(
            f"the prior of model {entry.name!r} with parameters {params} gave non-finite draws "
            f"of {bad}; choose parameters that keep the prior proper"
        )
    return truth, counts


def _rank_variables(entry: Any, truth: Any) -> list[str]:
    """The variables to rank: hyperparameters, ``q``, the measures, then any others that
    the fit's posterior also has (checked after the first fit)."""

    order = [*entry.hyperparameters, "q", *VARIABLES.values()]
    names = [n for n in order if n in truth.data_vars]
    return names + sorted(n for n in truth.data_vars if n not in names)


def _fit(
    data: Any, entry: Any, method: str, draws: int, chains: int, seed: int, options: dict
) -> Any:

    return ambppl.fit(
        data,
        entry.name,
        method=method,
        draws=draws,
        chains=chains,
        random_seed=seed,
        progressbar=False,
        log_likelihood=False,
        **options,
    )


def _n_keep(
    tree: Any, names: list[str], rank_draws: int, thin: int | None, independent: bool
) -> dict[str, int]:
    """Draws to rank among, per variable: at most ``rank_draws`` and, for MCMC without an
    explicit ``thin``, at most the variable's smallest bulk ESS."""
    post = tree["posterior"]
    total = post.sizes["chain"] * post.sizes["draw"]
    if thin is not None:
        total = post.sizes["chain"] * len(range(0, post.sizes["draw"], thin))
    keep = dict.fromkeys(names, min(rank_draws, total))
    if independent or thin is not None:
        return keep
    from arviz_stats import ess

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant draws: ESS is NaN
        values = ess(tree, var_names=names, method="bulk")
    for name in names:
        e = np.asarray(values[name].values, dtype=np.float64)
        e = e[np.isfinite(e)]
        if e.size:
            keep[name] = int(np.clip(np.floor(e.min()), 1, keep[name]))
    return keep


def _stacked(da: Any, dims: tuple) -> np.ndarray:
    """Draws as an array (chain * draw, *dims), chains one after another."""
    values = np.asarray(da.transpose("chain", "draw", *dims).values)
    return values.reshape(-1, *values.shape[2:])


def _selection(total: int, chains: int, n_keep: int, thin: int | None) -> np.ndarray:
    """Indices of ``n_keep`` draws spread evenly over the stacked chains (after ``thin``)."""
    if thin is not None:
        per_chain = total // chains
        pool = np.concatenate(
            [c * per_chain + np.arange(0, per_chain, thin) for c in range(chains)]
        )
    else:
        pool = np.arange(total)
    n_keep = min(n_keep, pool.size)
    return pool[(np.arange(n_keep) * pool.size) // n_keep]


def _rank(draws: np.ndarray, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rank of ``truth`` among ``draws`` (axis 0), ties broken uniformly at random."""
    less = (draws < truth).sum(axis=0)
    ties = (draws == truth).sum(axis=0)
    return less + rng.integers(0, ties + 1)


def _counts_array(template: Any, simulated: np.ndarray) -> Any:
    import xarray as xr

    return xr.DataArray(
        simulated,
        dims=("simulation", "item", "category"),
        coords={
            "simulation": np.arange(simulated.shape[0]),
            "item": template["item"].values,
            "category": template["category"].values,
        },
        name="counts",
        attrs=dict(template.attrs),
    )


def _rank_tree(
    truth: Any, names: list[str], ranks: dict, kept: dict, rng: np.random.Generator
) -> Any:
    """DataTree: ``ranks`` (integers), ``rank_draws`` (L per simulation) and ``prior_sbc``
    (randomized PIT values with dims chain, draw for arviz-plots)."""
    import xarray as xr

    rank_ds = xr.Dataset(
        {name: (truth[name].dims, np.stack(ranks[name]).astype(np.int64)) for name in names},
        coords=truth.coords,
    )
    sizes = xr.Dataset(
        {name: ("simulation", np.asarray(kept[name], dtype=np.int64)) for name in names},
        coords={"simulation": truth["simulation"].values},
    )
    pit = {}
    for name in names:
        r = rank_ds[name]
        lsize = sizes[name].broadcast_like(r).transpose(*r.dims)
        u = rng.random(r.shape)
        pit[name] = (r + u) / (lsize + 1)
    pit_ds = (
        xr.Dataset(pit)
        .rename(simulation="draw")
        .expand_dims(chain=[0])
        .transpose("chain", "draw", ...)
    )
    pit_ds.attrs = {"sample_dims": ["chain", "draw"]}
    return xr.DataTree.from_dict({"prior_sbc": pit_ds, "ranks": rank_ds, "rank_draws": sizes})


# ---------------------------------------------------------------------------------------
# The uniformity test


def _rows(rank_tree: Any, names: list[str]) -> Iterator[tuple[str, str, Any, np.ndarray]]:
    """(quantity, variable, category, PIT array (simulations, pooled)) per table row."""
    pit = rank_tree["prior_sbc"].to_dataset().isel(chain=0)
    for name in names:
        da = pit[name]
        other = [d for d in da.dims if d not in ("draw", *_POOLED)]
        if not other:
            yield name, name, None, da.values.reshape(da.sizes["draw"], -1)
            continue
        stacked = da.stack(_row=other)
        for j in range(stacked.sizes["_row"]):
            one = stacked.isel(_row=j)
            label = ",".join(str(one[d].values) for d in other)
            category = str(one["category"].values) if "category" in other else None
            values = one.transpose("draw", ...).values.reshape(da.sizes["draw"], -1)
            yield f"{name}[{label}]", name, category, values


def _uniformity(pit: np.ndarray, bins: int) -> dict[str, float]:
    """Pearson's chi-square on equal bins of PIT values (simulations x pooled), divided by
    the Rao-Scott first-order design effect (at least 1) when several values are pooled per
    simulation."""
    from scipy.stats import chi2

    n_sim, n_pool = pit.shape
    which = np.minimum((pit * bins).astype(np.int64), bins - 1)
    per_sim = np.stack([np.bincount(row, minlength=bins) for row in which])  # (S, B)
    observed = per_sim.sum(axis=0)
    expected = n_sim * n_pool / bins
    stat = float(np.sum((observed - expected) ** 2) / expected)
    design = 1.0
    if n_pool > 1:
        spread = per_sim.var(axis=0, ddof=1).sum() / (n_pool / bins) / (bins - 1)
        design = max(1.0, float(spread))
    adjusted = stat / design
    return {
        "n_ranks": int(pit.size),
        "bins": bins,
        "chi2": stat,
        "design_effect": design,
        "statistic": adjusted,
        "df": bins - 1,
        "p_value": float(chi2.sf(adjusted, bins - 1)),
        "mean_pit": float(pit.mean()),
        "sd_pit": float(pit.std()),
    }


def _table(rank_tree: Any, names: list[str], bins: int) -> Any:
    import pandas as pd

    records = [
        {"quantity": quantity, "variable": variable, "category": category} | _uniformity(pit, bins)
        for quantity, variable, category, pit in _rows(rank_tree, names)
    ]
    return pd.DataFrame.from_records(records)


# ---------------------------------------------------------------------------------------
# The figure


def plot_sbc(
    result: ValidationResult,
    *,
    quantities: Any = None,
    prob: float | None = None,
    n_band_simulations: int = 1000,
    ncols: int = 4,
    random_seed: int = 0,
) -> Any:
    """ECDF difference plots of the SBC ranks with simultaneous bands (``result.plot()``).

    Parameters
    ----------
    result : ValidationResult
        A result of :func:`sbc`.
    quantities : str or list of str, optional
        Rows of ``result.table`` (its ``quantity`` column) to draw; default all.
    prob : float, optional
        Coverage of the simultaneous band; default ``1 - result.level``.
    n_band_simulations : int, default 1000
        Simulations that calibrate the band (``arviz_stats.ecdf_utils.ecdf_pit``).
    ncols : int, default 4
        Panels per row.
    random_seed : int, default 0
        Seed of the band's simulation.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per quantity: ECDF of its PIT values minus the uniform CDF, with the band
        inside which the whole curve stays with probability ``prob`` for independent uniform
        values (for items pooled under a learned prior the band is too narrow: the test's
        design effect, in the panel title, says by how much the variance grows). Flagged
        rows are drawn in red.

    Raises
    ------
    ValueError
        For a quantity that is not in the table or a ``prob`` outside (0, 1).
    """
    import matplotlib.pyplot as plt
    from arviz_stats.ecdf_utils import ecdf_pit

    table = result.table
    if quantities is None:
        chosen = list(table["quantity"])
    else:
        chosen = [quantities] if isinstance(quantities, str) else list(quantities)
        missing = [q for q in chosen if q not in set(table["quantity"])]
        if missing or not chosen:
            raise ValueError(
                f"quantities must be rows of the table ({list(table['quantity'])}), but got "
                f"{quantities!r}"
            )
    prob = 1.0 - result.level if prob is None else check_prob(prob, "prob")
    n_band_simulations = check_positive_int(n_band_simulations, "n_band_simulations")
    ncols = min(check_positive_int(ncols, "ncols"), len(chosen))
    nrows = -(-len(chosen) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.2 * ncols, 2.6 * nrows), squeeze=False, sharey=True
    )
    pits = {quantity: pit for quantity, _, _, pit in _rows(result.details["ranks"], _names(table))}
    rows = table.set_index("quantity")
    bands: dict[int, tuple] = {}  # the band depends only on the number of values
    for ax, quantity in zip(axes.flat, chosen, strict=False):
        vals = np.sort(pits[quantity].ravel())
        if vals.size not in bands:
            x, _, lower, upper = ecdf_pit(
                vals, prob, n_band_simulations, rng=np.random.default_rng(random_seed)
            )
            bands[vals.size] = (x, lower, upper)
        x, lower, upper = bands[vals.size]
        ecdf = np.searchsorted(vals, x, side="right") / vals.size
        row = rows.loc[quantity]
        colour = "#cf222e" if bool(row["flagged"]) else "#1f4e79"
        ax.fill_between(x, lower - x, upper - x, step="post", color="0.85", lw=0)
        ax.step(x, ecdf - x, where="post", color=colour, lw=1.2)
        ax.axhline(0, color="0.4", lw=0.6)
        ax.set_title(
            f"{quantity}: p={row['p_value']:.2g}, deff={row['design_effect']:.2g}", fontsize=9
        )
        ax.set_xlim(0, 1)
        ax.set_xlabel("PIT (normalized rank)", fontsize=8)
    for ax in axes.flat[len(chosen) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("ECDF - uniform", fontsize=8)
    fig.suptitle(
        f"SBC of {result.details['model']} ({result.details['method']}): "
        f"{'passed' if result.passed else 'FAILED'} at {result.level:g}; "
        f"band {prob:.0%} simultaneous",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def _names(table: Any) -> list[str]:
    return list(dict.fromkeys(table["variable"]))
