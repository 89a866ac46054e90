"""``check_moments``: the draws of every item against the closed-form posterior moments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.inference.catalog import get_model
from ambppl.internal.messages import say
from ambppl.maths.measures import measure_name, measures_for
from ambppl.maths.moments import dirichlet_mean, dirichlet_var
from ambppl.validation._draws import (
    MIN_EXPECTED,
    Fitted,
    check_alpha_level,
    check_mcse,
    measure_list,
    read_fit,
    series_mcse,
    unseen_items,
    unseen_refusal,
)
from ambppl.validation._result import NotApplicable, ValidationResult, decide
from ambppl.validation._skewed import dirichlet_square_moments, mean_z

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

#: The moments with a closed form under a Dirichlet, per measure (:mod:`ambppl.maths.moments`).
MOMENTS: dict[str, tuple[str, ...]] = {
    "amb": ("mean", "var"),
    "modified": ("mean", "var"),
    "old": ("mean",),
    "entropy": ("mean",),
}


def check_moments(
    result: Any,
    *,
    measures: Sequence[str] | str | None = None,
    alpha: float = 0.01,
    mcse: str = "auto",
) -> ValidationResult:
    r"""Test every item's draws against the closed-form posterior mean and variance.

    For every item and every measure with a closed form (``amb`` and ``modified``: mean and
    variance; ``old`` and ``entropy``: mean), the z-score of the draws' estimate against the
    exact value, divided by its Monte Carlo standard error (for a variance, read against the
    estimate's skewed law: Notes), then one family-wise decision over all items x measures
    x moments (Holm) at level ``alpha``.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` (any method) or a ``pymc.sample`` trace of a catalog
        model; its prior and counts are read from the result itself.
    measures : str or sequence of str, optional
        Measures to check (``"amb"``, ``"modified"``, ``"old"``, ``"entropy"`` or their
        variable names). Default: every measure defined for the number of proper classes.
    alpha : float, default 0.01
        Family-wise false-alarm rate: a correct posterior fails with probability at most
        ``alpha`` (up to the approximations of Notes; measured there).
    mcse : {"auto", "arviz", "independent"}, default "auto"
        Monte Carlo standard errors: ``"arviz"`` accounts for autocorrelation (the draws'
        ESS of the mean, as :func:`arviz.mcse`: ``sd / sqrt(ESS)``); ``"independent"`` takes
        the ``N`` draws as independent (``sd / sqrt(N)``); ``"auto"`` takes
        ``"independent"`` for methods whose draws are independent by construction
        (``exact``, ``empirical_bayes``), so that the check tests that claim, and
        ``"arviz"`` otherwise. ``sd`` is the draws' own for the means, the closed form for
        the variances.

    Returns
    -------
    ValidationResult
        ``statistic`` is the largest ``|z|``, ``p_value`` the smallest Holm-adjusted p-value.
        ``table`` has one row per item x measure x moment: ``item``, ``measure``,
        ``moment``, ``estimate``, ``reference``, ``mcse``, ``z``, ``p_value`` (two-sided,
        ``2 * norm.sf(|z|)``), ``p_holm``, ``flagged``. For a mean ``z`` is ``(estimate -
        reference) / mcse``; for a variance it is the normal score of that ratio's tail
        probability under its skewed law (Notes), which a table reader compares with
        N(0, 1) as the other rows.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree, or ``measures`` is neither a name nor a sequence of
        names.
    ValueError
        If the result's model has no closed form (no fixed prior and no hyperparameter
        draws the model turns into a Dirichlet concentration), ``measures`` is empty, a
        measure is unknown or has no closed form, ``alpha`` is not in (0, 1), ``mcse`` is
        unknown, or the result holds fewer than 100 draws.

    Notes
    -----
    Two references, chosen from what the result says:

    - *Fixed prior* (``attrs["prior"]`` or ``pm.Data("prior")``: ``dirichlet_categorical``
      with any method, ``empirical_bayes`` given its estimate): the posterior of ``q_i`` is
      ``Dirichlet(prior + counts_i)`` (paper section 3), whose moments are
      :func:`ambppl.dirichlet_mean` and :func:`ambppl.dirichlet_var`. The mean is tested
      with the series ``x``, the variance with ``(x - m)^2`` whose expectation is the
      variance because ``m`` is the exact mean (so the test needs no estimated mean).
    - *Learned prior* (posterior draws of the model's ``HYPERPARAMETERS``, e.g. ``mu`` and
      ``kappa`` of ``hierarchical_dirichlet``): given a draw ``h`` of them, ``q_i`` is
      ``Dirichlet(concentration(h) + counts_i)``, so ``x - m(h)`` and
      ``(x - m(h))^2 - v(h)`` have expectation zero (a Rao-Blackwell check of the
      conditional draws). The ``reference`` column is the mean of ``m(h)`` over draws.

    The variance rows. The mean of ``(x - m)^2`` over ``N`` draws is right-skewed (for a
    normal ``x`` it is a scaled chi-square with ``N`` degrees of freedom), and an error
    estimated from the same draws is small exactly where the sample variance is: on that
    error the z-scores have a heavy lower tail (below). The error is therefore the closed
    form ``sqrt((mu_4 - mu_2^2) / N)``, with the measure's central moments ``mu_r`` under
    the Dirichlet (:func:`ambppl.dirichlet_moments`) and ``N`` replaced by the ESS for
    ``mcse="arviz"``, and the tail probability is that of the gamma law (Pearson type III)
    with this mean and error and the closed-form skewness ``(mu_6 - 3 mu_4 mu_2 + 2
    mu_2^3) / (mu_4 - mu_2^2)^{3/2} / sqrt(N)``. Under a learned prior the three moments
    are those given ``h``, averaged over at most 25 hyperparameter draws per chain.
    Autocorrelated draws are given the skewness of ESS independent ones (an
    approximation).

    What it detects: any error in the location or spread of an item's marginal posterior
    larger than a few Monte Carlo standard errors -- shifted draws, a wrong prior, counts
    that are not the ones the posterior was computed from, truncated tails (the variance),
    and autocorrelated draws presented as independent (``mcse="auto"`` does not estimate the
    autocorrelation for such methods, so the z-scores are too wide). What it cannot detect:
    errors in the shape that keep the first two moments (:func:`check_density` for two
    classes), wrong dependence between items, errors in the posterior of the
    hyperparameters under a learned prior (its check is conditional on them; use
    :func:`sbc`), and a model that does not fit the data (:func:`check_predictive`).
    Holm's procedure holds the family-wise rate at ``alpha`` under any dependence between
    tests with valid p-values, so with many correlated rows the real rate is below
    ``alpha``. Measured at ``alpha = 0.01`` (documentation page topics/validation, with the
    command; 2026-12-07): a correct posterior of the bundled 200 tweets failed in 0.003 +-
    0.002 of 400 replicates of independent draws with 2 x 300 draws, 0.010 +- 0.005 of 400
    with 2 x 500 and 0.015 +- 0.009 of 200 with 4 x 1000 (0.007, 0.005 and 0.010 with
    ``mcse="arviz"``), and in 1 of 60 collapsed ``hierarchical_dirichlet`` fits with 2 x 300
    NUTS draws. With the variance rows on the draws' own error it had failed in 0.107,
    0.052 and 0.025 of the same replicates (0.095, 0.043, 0.020 with ``mcse="arviz"``) and
    in 11 of the 60 fits, mostly on a variance row with a negative z. Where an
    item's smallest concentration times ``N`` is within a few times the bound below which
    it is not tested (10: priors of 1e-2 or less), the law of ``x`` has rare large values
    that few draws show, and both of its rows fail more often than their level (an item
    ``Dirichlet(30.003, 0.003, 0.003)`` with 4000 draws: each row's p-value fell below
    1e-4 in 0.8 % of 20,000 replicates).

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       section 3, and
       the documentation page maths/errata (:errata:`E5`, :errata:`E7`) for the moments.
    .. [2] Holm, S. (1979), "A simple sequentially rejective multiple test procedure",
       Scandinavian Journal of Statistics 6(2), 65-70.
    .. [3] Vehtari et al. (2021), "Rank-normalization, folding, and localization: an
       improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> from ambppl.validation import check_moments
    >>> counts = ambppl.read_annotations(np.array([[5, 5, 5], [5, 0, 0], [3, 1, 1]]),
    ...                                  cant_solve="2")
    >>> result = ambppl.fit(counts, draws=500, chains=2, random_seed=1)
    >>> check = check_moments(result)
    >>> bool(check), len(check.table)
    (True, 18)
    """
    fitted = read_fit(result)
    alpha = check_alpha_level(alpha)
    mcse = check_mcse(mcse)
    names = _measures(measures, fitted.n_proper)
    reference = _reference(fitted)
    independent = fitted.independent(mcse)
    sizes = fitted.draws(names[0]).sizes
    n_draws = sizes["chain"] * sizes["draw"]
    unseen = unseen_items(reference.concentrations(), n_draws)
    if unseen.all():
        why = "its draws cannot show the moments they are tested on"
        raise unseen_refusal(reference.concentrations(), n_draws, why)
    frames = []
    for measure in names:
        x = fitted.draws(measure)
        for moment in MOMENTS[measure]:
            series, estimate, exact, centre = reference.series(x, measure, moment)
            diff = series.mean(("chain", "draw")).values - centre
            if moment == "var":
                var_y, third_y = reference.spread(measure, x.sizes)
                z, err = mean_z(series, diff, var_y, third_y, independent)
            else:
                err = series_mcse(series, independent)
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = diff / err
            z = np.where(unseen, np.nan, z)  # not tested: the draws cannot show the moment
            frames.append(
                {
                    "item": x["item"].values,
                    "measure": measure,
                    "moment": moment,
                    "estimate": estimate,
                    "reference": exact,
                    "mcse": err,
                    "z": z,
                }
            )
    return _verdict(frames, alpha, reference.kind, independent, int(unseen.sum()))


def _measures(measures: Sequence[str] | str | None, n_proper: int) -> tuple[str, ...]:
    """The measures to check: given, or every measure with a closed form for ``n_proper``."""

    available = tuple(m for m in measures_for(n_proper) if m in MOMENTS)
    given = measure_list(measures, available)
    if given is None:
        return available
    out = []
    for m in given:
        name = measure_name(m)
        if name not in available:
            raise ValueError(
                f"measures must have a closed form for {n_proper} proper classes "
                f"({', '.join(available)}), but got {m!r}"
            )
        out.append(name)
    return tuple(dict.fromkeys(out))


class _Marginal:
    """Fixed prior: the posterior of q_i is Dirichlet(prior + counts_i)."""

    kind = "fixed prior: Dirichlet(prior + counts)"

    def __init__(self, fitted: Fitted) -> None:
        self.alpha = fitted.values + fitted.prior
        self.cs = fitted.cs

    def series(self, x: xr.DataArray, measure: str, moment: str) -> tuple:

        mean = np.asarray(dirichlet_mean(self.alpha, measure, cant_solve=self.cs), float)
        if moment == "mean":
            return x, x.mean(("chain", "draw")).values, mean, mean
        var = np.asarray(dirichlet_var(self.alpha, measure, cant_solve=self.cs), float)
        series = (x - mean) ** 2
        return series, series.mean(("chain", "draw")).values, var, var

    def spread(self, measure: str, sizes: Any) -> tuple[np.ndarray, np.ndarray]:
        """Closed-form variance and third central moment of each item's ``(x - m)^2``."""
        return dirichlet_square_moments(self.alpha, measure, self.cs)

    def concentrations(self) -> np.ndarray:
        """Each item's posterior Dirichlet concentration (items x K)."""
        return self.alpha


class _Conditional:
    """Learned prior: given a hyperparameter draw h, q_i ~ Dirichlet(conc(h) + counts_i)."""

    kind = "learned prior: Dirichlet(concentration(hyperparameters) + counts) per draw"

    def __init__(self, fitted: Fitted, conc: np.ndarray) -> None:
        self.conc = conc  # (chain, draw, K)
        # the closed forms depend on an item only through its counts: evaluated once per
        # distinct count vector (real data repeat them: 8,315 items with 3 answers in two
        # classes have 4), then spread over the items
        unique, inverse = np.unique(fitted.values, axis=0, return_inverse=True)
        self.values = unique
        self.inverse = np.asarray(inverse).reshape(-1)
        self.cs = fitted.cs

    def _per_draw(self, measure: str, func: Any, step: int) -> np.ndarray:
        conc = self.conc[:, ::step]
        out = np.empty((*conc.shape[:2], self.inverse.size))
        for c in range(conc.shape[0]):  # one chain at a time bounds the memory
            value = func(conc[c][:, None, :] + self.values, measure, cant_solve=self.cs)
            out[c] = np.asarray(value)[:, self.inverse]
        return out

    def series(self, x: xr.DataArray, measure: str, moment: str) -> tuple:

        # A closed form that costs a quadrature per draw is evaluated on evenly thinned draws
        # (still an unbiased check, on fewer draws).
        step = -(-x.sizes["draw"] // _COSTLY.get(measure, x.sizes["draw"]))
        x = x.isel(draw=slice(None, None, step))
        m = x.copy(data=self._per_draw(measure, dirichlet_mean, step))
        zero = np.zeros(x.sizes["item"])
        if moment == "mean":
            return x - m, x.mean(("chain", "draw")).values, m.mean(("chain", "draw")).values, zero
        v = x.copy(data=self._per_draw(measure, dirichlet_var, step))
        sq = (x - m) ** 2
        estimate = sq.mean(("chain", "draw")).values
        return sq - v, estimate, v.mean(("chain", "draw")).values, zero

    def spread(self, measure: str, sizes: Any) -> tuple[np.ndarray, np.ndarray]:
        """Variance and third moment of each item's ``(x - m(h))^2 - v(h)``: those of
        ``(x - m)^2`` under ``Dirichlet(concentration(h) + counts_i)`` (its conditional mean
        is 0), averaged over at most :data:`_SPREAD_DRAWS` evenly thinned draws per chain of
        the hyperparameters (an average over their posterior, not a test statistic)."""
        step = -(-sizes["draw"] // _SPREAD_DRAWS)
        conc = self.conc[:, ::step]
        var_y = np.zeros(len(self.values))
        third_y = np.zeros(len(self.values))
        for c in range(conc.shape[0]):  # one chain at a time bounds the memory
            v, t = dirichlet_square_moments(conc[c][:, None, :] + self.values, measure, self.cs)
            var_y += v.sum(axis=0)
            third_y += t.sum(axis=0)
        n = conc.shape[0] * conc.shape[1]
        return var_y[self.inverse] / n, third_y[self.inverse] / n

    def concentrations(self) -> np.ndarray:
        """Each item's posterior Dirichlet concentration (items x K), at the mean
        concentration over the hyperparameter draws."""
        return self.conc.mean(axis=(0, 1)) + self.values[self.inverse]


#: Draws per chain at most, under a learned prior, for closed forms that need a quadrature
#: per draw (``dirichlet_mean(..., "old")``: about 40 us per item and draw).
_COSTLY = {"old": 100}

#: Draws per chain at most, under a learned prior, over which the variance and skewness of
#: the variance rows' series are averaged (sixth moments: about 15 us per distinct count
#: vector and draw; an average over the hyperparameters' posterior, which a few dozen
#: draws give to within a few per cent of its spread over them).
_SPREAD_DRAWS = 25


def _reference(fitted: Fitted) -> _Marginal | _Conditional:
    """The closed-form reference the result allows, or a clear refusal."""
    if fitted.prior is not None:
        return _Marginal(fitted)
    conc = _hyper_concentration(fitted)
    if conc is not None:
        return _Conditional(fitted, conc)
    raise NotApplicable(
        say(
            f"result must come from a model with closed-form posterior moments (a fixed "
            f"Dirichlet prior, or hyperparameters the model turns into one), but model "
            f"{fitted.model!r} (method {fitted.method!r}) records neither a prior nor such "
            f"hyperparameters; {SBC_PYTHON}",
            f"the closed-form moments need a fixed Dirichlet prior or hyperparameters the "
            f"model turns into one, but model {fitted.model!r} (--method {fitted.method}) has "
            f"neither; {SBC_COMMAND_LINE}",
        )
    )


#: What checks a fit without closed forms, in Python and on the command line (which has no
#: command for it): simulation-based calibration applies to every catalog model and method.
SBC_PYTHON = (
    "ambppl.validation.sbc checks any catalog model and method by simulation-based calibration"
)
SBC_COMMAND_LINE = (
    "no check of this command replaces them (simulation-based calibration does, in Python: "
    "ambppl.validation.sbc)"
)


def has_conditional_moments(fitted: Fitted) -> bool:
    """Whether :func:`check_moments` tests the draws of a fit without a fixed prior
    conditionally on its hyperparameters (the model turns their draws into a Dirichlet
    concentration)."""
    return fitted.prior is None and _hyper_concentration(fitted) is not None


def _hyper_concentration(fitted: Fitted) -> np.ndarray | None:
    """Per-draw Dirichlet concentration from the model's hyperparameters, if it has any."""
    if fitted.model is None:
        return None

    try:
        entry = get_model(str(fitted.model))
    except ValueError:
        return None
    module = entry.module
    hyper_names = tuple(getattr(module, "HYPERPARAMETERS", ()))
    posterior = fitted.result["posterior"]
    if not hyper_names or not hasattr(module, "concentration"):
        return None
    if any(name not in posterior.data_vars for name in hyper_names):
        return None
    hyper = {name: posterior[name].transpose("chain", "draw", ...).values for name in hyper_names}
    params = {**entry.defaults, **fitted.parameters}
    conc = module.concentration(hyper, n_categories=fitted.values.shape[1], **params)
    return np.asarray(conc, dtype=np.float64)


def _verdict(
    frames: list[dict], alpha: float, kind: str, independent: bool, n_unseen: int
) -> ValidationResult:
    import pandas as pd
    from scipy.stats import norm

    table = pd.concat([pd.DataFrame(f) for f in frames], ignore_index=True)
    table["p_value"] = 2.0 * norm.sf(np.abs(table["z"].to_numpy(dtype=float)))
    passed, p = decide(table, "p_value", alpha)
    absz = np.abs(table["z"].to_numpy(dtype=float))
    statistic = float(np.nanmax(absz)) if np.isfinite(absz).any() else float("nan")
    errors = "sd / sqrt(N)" if independent else "sd / sqrt(ESS) (arviz.mcse)"
    return ValidationResult(
        check="moments",
        passed=passed,
        statistic=statistic,
        p_value=p,
        level=alpha,
        table=table,
        description=(
            f"Posterior mean and variance of every item's measures against the closed forms "
            f"({kind}); z-scores with Monte Carlo standard errors {errors}, the sd of the "
            f"draws for a mean and the closed form for a variance (read against a gamma law "
            f"with its closed-form skewness); Holm over {int((~np.isnan(absz)).sum())} tests."
            + (
                f" {n_unseen} item{'s' if n_unseen != 1 else ''} not tested (a concentration "
                f"under {MIN_EXPECTED:g} / draws: too few draws show its share)."
                if n_unseen
                else ""
            )
        ),
        plotter=_plot,
    )


def _plot(check: ValidationResult, *, n_items: int = 5) -> Any:
    """Histogram of the z-scores against N(0, 1), with the Holm cut-off and the worst rows."""
    from matplotlib.figure import Figure
    from scipy.stats import norm

    table = check.table
    z = table["z"].to_numpy(dtype=float)
    z = z[np.isfinite(z)]
    fig = Figure(figsize=(9, 3.4))
    ax, ax2 = fig.subplots(1, 2, width_ratios=(3, 2))
    lim = max(4.5, float(np.max(np.abs(z))) + 0.5 if z.size else 4.5)
    ax.hist(z, bins=np.linspace(-lim, lim, 61), density=True, color="#9ecae1", label="z")
    grid = np.linspace(-lim, lim, 400)
    ax.plot(grid, norm.pdf(grid), color="black", lw=1, label="N(0, 1)")
    cut = norm.isf(check.level / 2 / max(len(z), 1))
    for s in (-cut, cut):
        ax.axvline(s, color="#cf222e", ls="--", lw=1)
    ax.set_xlabel("z = (estimate - closed form) / MCSE")
    ax.set_title(f"moments: {'passed' if check.passed else 'FAILED'}")
    # loc named: matplotlib warns, by the clock, where the default placement is slow
    ax.legend(frameon=False, fontsize=8, loc="best")
    worst = table.reindex(table["z"].abs().sort_values(ascending=False).index[:n_items])
    labels = [f"{r.item} {r.measure} {r.moment}" for r in worst.itertuples()]
    ax2.barh(range(len(worst))[::-1], worst["z"].abs(), color="#6baed6")
    ax2.set_yticks(range(len(worst))[::-1], labels, fontsize=8)
    ax2.axvline(cut, color="#cf222e", ls="--", lw=1)
    ax2.set_xlabel("|z| (dashed: Bonferroni cut-off)")
    fig.tight_layout()
    return fig


__all__ = ["MOMENTS", "check_moments"]
