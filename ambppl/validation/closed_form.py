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
    exact value, divided by its Monte Carlo standard error, then one family-wise decision
    over all items x measures x moments (Holm) at level ``alpha``.

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
        ``alpha``.
    mcse : {"auto", "arviz", "independent"}, default "auto"
        Monte Carlo standard errors: ``"arviz"`` estimates them from the draws
        (:func:`arviz.mcse`, accounting for autocorrelation); ``"independent"`` uses
        ``sd / sqrt(N)``; ``"auto"`` takes ``"independent"`` for methods whose draws are
        independent by construction (``exact``, ``empirical_bayes``), so that the check
        tests that claim, and ``"arviz"`` otherwise.

    Returns
    -------
    ValidationResult
        ``statistic`` is the largest ``|z|``, ``p_value`` the smallest Holm-adjusted p-value.
        ``table`` has one row per item x measure x moment: ``item``, ``measure``,
        ``moment``, ``estimate``, ``reference``, ``mcse``, ``z``, ``p_value`` (two-sided,
        normal), ``p_holm``, ``flagged``.

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
    the tests, so with many correlated rows the real rate is below ``alpha``; the measured
    rate is in ``benchmarks/calibration_validation.py``. The variance rows need enough
    draws: their series ``(x - m)^2`` is skewed, so with a few hundred draws the z-scores
    have a heavy lower tail (a collapsed ``hierarchical_dirichlet`` fit of the bundled 200
    tweets raised a false alarm, always on a variance row, in 5 of 30 seeds with 2 x 300
    draws and in none of 30 with 4 x 1000; 2026-11-28).

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
            err = series_mcse(series, independent)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = (series.mean(("chain", "draw")).values - centre) / err
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

    def concentrations(self) -> np.ndarray:
        """Each item's posterior Dirichlet concentration (items x K), at the mean
        concentration over the hyperparameter draws."""
        return self.conc.mean(axis=(0, 1)) + self.values[self.inverse]


#: Draws per chain at most, under a learned prior, for closed forms that need a quadrature
#: per draw (``dirichlet_mean(..., "old")``: about 40 us per item and draw).
_COSTLY = {"old": 100}


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
    errors = "sd / sqrt(N)" if independent else "arviz.mcse"
    return ValidationResult(
        check="moments",
        passed=passed,
        statistic=statistic,
        p_value=p,
        level=alpha,
        table=table,
        description=(
            f"Posterior mean and variance of every item's measures against the closed forms "
            f"({kind}); z-scores with Monte Carlo standard errors from {errors}; Holm over "
            f"{int((~np.isnan(absz)).sum())} tests."
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
