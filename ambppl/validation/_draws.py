"""What the checks read from a fit result: counts, can't-solve, the prior, the draws."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

import ambppl.maths.measures as measures
from ambppl.inference.catalog import get_model
from ambppl.inference.diagnostics import diagnose, mcse_mean
from ambppl.inference.fitting import INDEPENDENT_METHODS
from ambppl.internal.checks import check_option, check_prob
from ambppl.internal.messages import say
from ambppl.internal.resultdata import (
    cant_solve_index,
    check_fit_tree,
    fixed_prior,
    observed_counts,
)
from ambppl.maths.measures import VARIABLES
from ambppl.validation._result import TooFewDraws

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr


#: Fewest draws (chains x draws) a check accepts: below it the normal approximation of the
#: z-scores and the Monte Carlo standard errors themselves are unreliable.
MIN_DRAWS = 100

#: How the Monte Carlo standard error is obtained (``mcse=`` of the checks).
MCSE_OPTIONS = ("auto", "arviz", "independent")


@dataclass(frozen=True)
class Fitted:
    """The parts of a fit result a check needs."""

    result: Any
    counts: xr.DataArray
    values: np.ndarray
    cs: int | None
    prior: np.ndarray | None
    method: str
    model: str | None
    parameters: dict[str, Any]

    @property
    def n_proper(self) -> int:
        return self.values.shape[1] - (self.cs is not None)

    @property
    def n_draws(self) -> int:
        post = self.result["posterior"]
        return int(post.sizes["chain"] * post.sizes["draw"])

    def draws(self, measure: str) -> xr.DataArray:
        """Draws of ``measure`` with dims (chain, draw, item): stored, or computed from q."""

        posterior = self.result["posterior"].to_dataset()
        name = VARIABLES[measure]
        if name in posterior:
            da = posterior[name]
        elif "q" in posterior:
            da = measures.evaluate(measure, posterior["q"], cant_solve=self.cs, dim="category")
        else:
            raise ValueError(
                f"result must hold the draws of {name!r} or of 'q' to check measure "
                f"{measure!r}, but its posterior has {sorted(posterior.data_vars)}"
            )
        da = da.transpose("chain", "draw", "item")
        bad = ~np.isfinite(np.asarray(da.values, dtype=np.float64)).all(axis=(0, 1))
        if bad.any():
            items = da["item"].values[bad]
            raise ValueError(
                f"result's posterior holds non-finite draws (NaN or inf) of {da.name or name!r} "
                f"for {int(bad.sum())} item(s), e.g. {items[:5].tolist()}: the fit is broken "
                "and cannot pass a check; refit"
            )
        return da

    def independent(self, mcse: str) -> bool:
        """Whether the Monte Carlo standard errors treat the draws as independent."""
        if mcse == "auto":
            return self.method in INDEPENDENT_METHODS
        return mcse == "independent"


#: Draws (in all) times an item's smallest Dirichlet concentration below which the
#: closed-form checks do not test the item (:func:`unseen_items`): the share of that category
#: shows in fewer than about this many draws, and the z-scores are not normal. Measured with
#: Beta(a, 5) shares and N = 4000 independent draws (4000 replications, 2026-12-07; a
#: smaller run in ``tests/validation/test_validation_closed_form.py``): the z of the mean on
#: the draws' standard error passed |z| > 3.29 (two-sided 0.001) in 71%, 25%, 10% and 2.7%
#: of replications at N a = 0.1, 1, 3 and 10, 0.8% at 30 and 0.2% at 100. With the 100
#: draws the checks need at least, concentrations of 0.1 or more are always tested.
MIN_EXPECTED = 10.0


def read_fit(result: Any) -> Fitted:
    """Check that ``result`` is a fit result and read what the checks need from it."""

    check_fit_tree(result)
    attrs = {**result["posterior"].attrs, **result.attrs}
    counts = observed_counts(result)
    cs = cant_solve_index(result, attrs, counts)
    prior = fixed_prior(result, attrs)
    values = np.asarray(counts.values, dtype=np.int64)
    if prior is not None:
        prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), values.shape[1:]).copy()
    raw = attrs.get("parameters") or {}
    try:
        parameters = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (TypeError, ValueError):
        parameters = {}
    fitted = Fitted(
        result=result,
        counts=counts,
        values=values,
        cs=cs,
        prior=prior,
        method=str(attrs.get("method", "nuts")),
        model=attrs.get("model"),
        parameters=parameters,
    )
    posterior_items = result["posterior"].sizes.get("item")
    if posterior_items is not None and posterior_items != values.shape[0]:
        raise ValueError(
            f"result's posterior has {posterior_items} items but observed_data['counts'] has "
            f"{values.shape[0]}: the draws do not belong to these counts; refit"
        )
    if fitted.n_draws < MIN_DRAWS:
        raise TooFewDraws(_too_few_draws(fitted))
    return fitted


def _too_few_draws(fitted: Fitted) -> str:
    """Why a fit with fewer than :data:`MIN_DRAWS` draws is not checked, and the fix, in the
    caller's words (:func:`ambppl.internal.messages.say`): more draws, or for a ``map``
    point the model's methods that draw."""
    held = f"at least {MIN_DRAWS} draws ({{}}) for a check, but holds {fitted.n_draws}"
    if fitted.method != "map":
        return say(
            f"result must hold {held.format('chains x draws')}; fit with more draws",
            f"the fit must hold {held.format('--chains x --draws')}; give more --draws or --chains",
        )
    try:
        drawn = [m for m in get_model(fitted.model).info["methods"] if m != "map"]
    except (KeyError, ValueError, TypeError):  # a model no longer in the catalog
        drawn = []
    python = " or ".join(repr(m) for m in drawn) or "a method that draws"
    command = " or ".join(drawn) or "a method that draws"
    return say(
        f"result must hold {held.format('chains x draws')}; method='map' gives one point, "
        f"no draws: fit with method={python} for draws to check",
        f"the fit must hold {held.format('--chains x --draws')}; --method map gives one "
        f"point, no draws: fit with --method {command} for draws to check",
    )


def measure_list(measures: Any, available: tuple[str, ...]) -> list[Any] | None:
    """``measures=`` of a check as a list (None stays None: every available measure): one
    name, or a non-empty sequence of names; a clear TypeError or ValueError otherwise."""
    if measures is None:
        return None
    if isinstance(measures, str):
        return [measures]
    if isinstance(measures, bytes) or not isinstance(measures, Iterable):
        raise TypeError(
            f"measures must be a measure name or a sequence of them (among "
            f"{', '.join(available)}), but got {measures!r}"
        )
    out = list(measures)
    if not out:
        raise ValueError(
            f"measures must name at least one measure (among {', '.join(available)}), or be "
            "None for all of them, but got an empty sequence"
        )
    return out


def check_alpha_level(alpha: Any) -> float:
    """The false-alarm rate of a check: a probability strictly between 0 and 1."""
    return check_prob(alpha, "alpha")


def check_mcse(mcse: Any) -> str:
    """One of :data:`MCSE_OPTIONS`."""

    return check_option(mcse, MCSE_OPTIONS, "mcse")


def series_mcse(series: xr.DataArray, independent: bool) -> np.ndarray:
    """Monte Carlo standard error of the mean of ``series`` (dims chain, draw, ...)."""
    if independent:
        n = series.sizes["chain"] * series.sizes["draw"]
        sd = series.std(("chain", "draw"), ddof=1).values
        return np.asarray(sd, dtype=np.float64) / np.sqrt(n)
    # arviz.mcse(series, method="mean") to rounding, vectorized over the items (ArviZ loops
    # over them in Python, about a millisecond each)

    values = series.transpose("chain", "draw", ...).values
    return np.asarray(mcse_mean(values), dtype=np.float64)


def effective_draws(series: xr.DataArray, independent: bool) -> np.ndarray:
    """Effective number of draws behind the mean of ``series`` (dims chain, draw, ...), one
    per scalar: chains x draws where the draws are independent, else ArviZ's ESS of the mean
    (:func:`ambppl.inference.diagnostics.diagnose`, ``ess_mean``; :func:`series_mcse` is the
    draws' sd over its square root). With an error known in closed form, the Monte Carlo
    standard error of the mean is that sd over the square root of this number."""
    n = series.sizes["chain"] * series.sizes["draw"]
    if independent:
        rest = [size for dim, size in series.sizes.items() if dim not in ("chain", "draw")]
        return np.full(rest, float(n))
    values = series.transpose("chain", "draw", ...).values
    return np.asarray(diagnose(values, what=("ess_mean",))["ess_mean"], dtype=np.float64)


def unseen_items(alpha: np.ndarray, n_draws: int) -> np.ndarray:
    """Items (rows of the concentrations ``alpha``, items x K) whose ``n_draws`` draws cannot
    show their posterior: a concentration ``alpha_k`` under :data:`MIN_EXPECTED` / N. A share
    ``q_k ~ Beta(alpha_k, .)`` exceeds ``t`` with probability about ``alpha_k ln(1/t)``, so
    its mean and spread are carried by fewer than ``N alpha_k`` draws (the others round it
    to 0): a z-score on the draws' standard error is no longer normal, and draws rounded to
    0 have no place under a continuous law. Such concentrations come from priors of 1e-3
    or less (``empirical_bayes`` at its bound: 8e-7 per category)."""
    return np.asarray(alpha, dtype=np.float64).min(axis=1) * n_draws < MIN_EXPECTED


def unseen_refusal(alpha: np.ndarray, n_draws: int, why: str) -> TooFewDraws:
    """The refusal of a check where every item is unseen (:func:`unseen_items`), ``why`` the
    check's reason, with the draws it needs, in the caller's words."""
    smallest = float(np.asarray(alpha, dtype=np.float64).min(axis=1).max())
    need = f"{MIN_EXPECTED / smallest:.3g}"
    held = (
        f"every item has a Dirichlet concentration under {MIN_EXPECTED:g} / {n_draws} draws "
        f"(a prior of 1e-3 or less, e.g. empirical_bayes at its bound), so {why}; "
    )
    return TooFewDraws(
        say(
            held + f"draw at least {need} times (chains x draws), or fit with a larger prior",
            held + f"give at least {need} draws in all (--chains x --draws), or a larger --prior",
        )
    )
