"""Reference cases: fits of stored data sets checked against stored reference posteriors.

The cases live in ``models/reference/`` (``ambppl/_models/reference/`` in a wheel) in
posteriordb's layout: ``data/<data>.json`` (counts with item and category labels and the
can't-solve label), ``posteriors/<case>.json`` (every item's reference posterior: mean and
variance of each measure and, for two-class items, five quantiles) and ``cases/<case>.json``
(the info record joining them by name with the model, its parameters, and how and why the
reference can be trusted). ``models/reference/README.md`` states the rule for what makes a
reference trustworthy; ``tests/reference/reference_cases.py`` generates every file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import ambppl
from ambppl.inference.catalog import catalog_dir, read_record
from ambppl.internal.checks import check_random_seed
from ambppl.maths.moments import dirichlet_moments
from ambppl.validation._draws import (
    INDEPENDENT_METHODS,
    check_alpha_level,
    effective_draws,
    read_fit,
)
from ambppl.validation._result import ValidationResult, decide
from ambppl.validation._skewed import (
    mean_z,
    pilot_central_moments,
    square_moments,
    square_of,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr


__all__ = [
    "INFO_KEYS",
    "ReferenceCase",
    "check_reference",
    "list_reference_cases",
    "load_reference_case",
    "reference_dir",
    "run_reference_cases",
]

#: Keys every case's info record (``cases/<case>.json``) must have.
INFO_KEYS = (
    "name",
    "data",
    "model",
    "parameters",
    "posterior",
    "description",
    "reference_method",
    "trust",
)

#: The checks :func:`run_reference_cases` runs on every case's fit, in table order.
CHECKS = ("reference", "moments", "density", "predictive")


def reference_dir() -> Path:
    """The folder of the reference cases: ``catalog_dir() / "reference"``.

    Returns
    -------
    pathlib.Path
        ``models/reference`` of a checkout, ``ambppl/_models/reference`` of a wheel, or
        ``$AMBPPL_MODELS/reference``.

    Raises
    ------
    ValueError
        If the catalog has no ``reference`` folder.

    Examples
    --------
    >>> reference_dir().name
    'reference'
    """

    folder = catalog_dir() / "reference"
    if not (folder / "cases").is_dir():
        raise ValueError(
            f"the model catalog must hold the reference cases in {str(folder)!r} (cases/, "
            "data/, posteriors/), but that folder is missing"
        )
    return folder


def _read_json(path: Path) -> dict[str, Any]:

    return read_record(path, what="reference file")


def _infos() -> dict[str, dict[str, Any]]:

    infos = {}
    for path in sorted((reference_dir() / "cases").glob("*.json")):
        infos[path.stem] = read_record(path, INFO_KEYS, what="reference case")
    return infos


@dataclass(frozen=True, eq=False)
class ReferenceCase:
    """One reference case: data, model, parameters and the reference posterior.

    Attributes
    ----------
    name : str
        The case's name (its info record's file stem).
    counts : xarray.DataArray
        The data: dims ``("item", "category")``, ``attrs["cant_solve"]`` the can't-solve
        label or None; ready for :func:`ambppl.fit`.
    model : str
        The catalog model the reference posterior belongs to.
    parameters : dict
        The model's parameters (e.g. ``{"prior": 0.5}``).
    reference : pandas.DataFrame
        One row per item x measure x statistic: ``item``, ``measure`` (ambppl's measure
        names), ``statistic`` (``"mean"``, ``"var"`` or ``"quantile"``), ``prob`` (the
        quantile's probability, NaN otherwise) and ``value``.
    info : dict
        The info record (``description``, ``reference_method``, ``trust``, ...).
    posterior : dict
        The posterior file as stored (with its ``cross_checks`` figures).
    """

    name: str
    counts: xr.DataArray = field(repr=False)
    model: str
    parameters: dict[str, Any]
    reference: pd.DataFrame = field(repr=False)
    info: dict[str, Any] = field(repr=False)
    posterior: dict[str, Any] = field(repr=False)

    @property
    def n_proper(self) -> int:
        """Number of proper categories (can't-solve not counted)."""
        return self.counts.sizes["category"] - (self.counts.attrs.get("cant_solve") is not None)

    @property
    def two_class(self) -> bool:
        """Whether the items have two proper classes and can't-solve (the exact C = 2 law)."""
        return self.n_proper == 2 and self.counts.attrs.get("cant_solve") is not None


def list_reference_cases() -> pd.DataFrame:
    """The stored reference cases.

    Returns
    -------
    pandas.DataFrame
        One row per case: ``name``, ``model``, ``parameters`` (JSON), ``n_items``,
        ``n_categories``, ``cant_solve`` (the label or None), ``quantiles`` (whether the
        reference has quantiles: two-class items) and ``description``.

    Raises
    ------
    ValueError
        If the reference folder is missing or an info record is broken.

    Examples
    --------
    >>> table = list_reference_cases()
    >>> "paper_posterior_figure" in set(table["name"])
    True
    """
    import pandas as pd

    rows = []
    folder = reference_dir()
    for name, info in _infos().items():
        data = _read_json(folder / "data" / f"{info['data']}.json")
        rows.append(
            {
                "name": name,
                "model": info["model"],
                "parameters": json.dumps(info["parameters"]),
                "n_items": len(data["counts"]),
                "n_categories": len(data["categories"]),
                "cant_solve": data["cant_solve"],
                "quantiles": bool(info.get("quantiles", False)),
                "description": info["description"],
            }
        )
    columns = [
        "name",
        "model",
        "parameters",
        "n_items",
        "n_categories",
        "cant_solve",
        "quantiles",
        "description",
    ]
    return pd.DataFrame(rows, columns=columns)


def load_reference_case(name: str) -> ReferenceCase:
    """One reference case by name.

    Parameters
    ----------
    name : str
        A name from :func:`list_reference_cases`.

    Returns
    -------
    ReferenceCase
        Frozen: ``counts`` (DataArray), ``model``, ``parameters``, ``reference`` (table of
        reference values), ``info``, ``posterior``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the cases), or a case whose data or
        posterior file is missing or does not match it.

    Examples
    --------
    >>> case = load_reference_case("prior_half")
    >>> case.parameters, dict(case.counts.sizes)
    ({'prior': 0.5}, {'item': 3, 'category': 3})
    """
    import pandas as pd
    import xarray as xr

    infos = _infos()
    if not isinstance(name, str) or name not in infos:
        raise ValueError(
            f"name must be one of the reference cases {sorted(infos)}, but got {name!r}"
        )
    info = infos[name]
    folder = reference_dir()
    data_path = folder / "data" / f"{info['data']}.json"
    post_path = folder / "posteriors" / f"{info['posterior']}.json"
    for what, path in (("data", data_path), ("posterior", post_path)):
        if not path.is_file():
            raise ValueError(
                f"reference case {name!r} names the {what} {path.stem!r}, but "
                f"{str(path)!r} does not exist"
            )
    data = _read_json(data_path)
    posterior = _read_json(post_path)
    counts = xr.DataArray(
        np.asarray(data["counts"], dtype=np.int64),
        dims=("item", "category"),
        coords={"item": list(data["items"]), "category": list(data["categories"])},
        name="counts",
        attrs={"cant_solve": data["cant_solve"]},
    )
    labels = [str(i["item"]) for i in posterior["items"]]
    if labels != [str(i) for i in data["items"]]:
        raise ValueError(
            f"reference case {name!r}: the posterior's items {labels} must be the data's "
            f"items {data['items']}"
        )
    probs = list(posterior["probabilities"])
    rows = []
    for item in posterior["items"]:
        for measure, values in item["measures"].items():
            for stat in ("mean", "var"):
                if values.get(stat) is not None:
                    rows.append((item["item"], measure, stat, math.nan, float(values[stat])))
            for p, q in zip(probs, values.get("quantiles") or [], strict=False):
                rows.append((item["item"], measure, "quantile", float(p), float(q)))
    reference = pd.DataFrame(rows, columns=["item", "measure", "statistic", "prob", "value"])
    return ReferenceCase(
        name=name,
        counts=counts,
        model=str(info["model"]),
        parameters=dict(info["parameters"]),
        reference=reference,
        info=info,
        posterior=posterior,
    )


def _as_case(case: Any) -> ReferenceCase:
    if isinstance(case, ReferenceCase):
        return case
    if isinstance(case, str):
        return load_reference_case(case)
    raise TypeError(f"case must be a case name or a ReferenceCase, but got {type(case).__name__}")


def check_reference(result: Any, case: Any, *, alpha: float = 0.01) -> ValidationResult:
    r"""Test a fit of a reference case's data against the case's stored reference posterior.

    For every item, measure and stored statistic a z-score (or an exact binomial p-value)
    of the draws against the reference value, then one family-wise decision (Holm) at
    level ``alpha``.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` on ``case.counts`` (any model and method; the check
        does not read the model or prior from the result, so a fit with the wrong prior is
        what it is meant to catch).
    case : str or ReferenceCase
        The case (a name from :func:`list_reference_cases`, or a loaded case).
    alpha : float, default 0.01
        Family-wise false-alarm rate.

    Returns
    -------
    ValidationResult
        ``check = "reference"``; ``statistic`` the largest ``|z|``; ``p_value`` the smallest
        Holm-adjusted p-value. ``table`` has one row per item x measure x statistic:
        ``item``, ``measure``, ``statistic`` (``mean``, ``var``, ``quantile``), ``prob``,
        ``reference``, ``estimate``, ``mcse``, ``z``, ``p_value``, ``p_holm``, ``flagged``.
        ``details`` holds ``case``, ``independent`` and the parameters of the fit and the
        case.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree or ``case`` not a name or case.
    ValueError
        For an unknown case, a result whose counts are not the case's counts, ``alpha``
        outside (0, 1), or fewer than 100 draws.

    Notes
    -----
    With draws ``x`` of a measure (N = chains x draws) and the reference mean ``m``:

    - mean: the series ``x``; variance: the series ``(x - m)^2`` (its expectation is the
      variance because ``m`` is exact); quantile ``q_p``: the indicator ``1{x <= q_p}``
      (expectation ``p``).
    - The error of the series' mean comes from the reference law, not from the draws: its
      variance over ``n`` effective draws is ``var / n`` with ``var`` the reference
      variance (mean rows), ``mu_4 - mu_2^2`` (variance rows; ``mu_r`` the measure's
      central moments) or ``p (1 - p)`` (quantile rows). ``n`` is N for results whose
      method claims independent draws (``"exact"``, ``"empirical_bayes"``), else the
      ESS of the series' mean (ArviZ's ``ess`` method ``"mean"``), so autocorrelation
      counts. Mean and variance rows are read against the gamma law (Pearson type III)
      with the series' skewness (from ``mu_3``, and ``mu_6 - 3 mu_4 mu_2 + 2 mu_2^3``),
      and ``z`` is the normal score of that tail probability; quantile rows take the exact
      binomial test of the count of draws below ``q_p`` (``scipy.stats.binomtest``) for
      independent draws, else ``z = (share - p) / error`` with a normal tail.
    - The moments the case does not store come from the case's Dirichlet ``alpha``:
      closed forms (:func:`ambppl.dirichlet_moments`) for ``amb`` and ``modified``; for
      ``old`` and ``entropy``, which have no finite moment sums, 200,000 independent
      draws of the reference law with a fixed seed (the reference's draws, not the fit's;
      a few per cent of error in the fourth moment moves a z of 3 by under 0.1).

    Why not the draws' own standard deviation: it is small exactly where the sample
    variance is, so the variance rows had a heavy lower tail. Measured at ``alpha =
    0.01`` with 2 x 300 exact draws (400 fits of each of the seven cases; 2026-12-08): a
    correct posterior failed in 42 of 2800 fits (0.015 +- 0.002) on the draws' error,
    mostly on variance rows, and in 13 of 2800 (0.005 +- 0.001) now; on 1000 replicates
    of ``twelve_categories`` the ``amb`` variance row's ``z`` fell below -2.576 (one-sided
    0.005) in 0.027 of rows before and 0.007 now (``tests/validation``'s
    ``test_check_reference_variance_rows_hold_their_level``).

    The reference values come from mpmath, independent of ambppl's code (see the case's
    ``info["reference_method"]`` and ``models/reference/README.md``); their own errors
    (below 1e-12) are negligible against any MCSE.

    Examples
    --------
    >>> import ambppl
    >>> from ambppl.validation.reference import check_reference, load_reference_case
    >>> case = load_reference_case("paper_posterior_figure")
    >>> result = ambppl.fit(case.counts, case.model, draws=500, chains=2, random_seed=3,
    ...                     **case.parameters)
    >>> bool(check_reference(result, case))
    True
    """

    fitted = read_fit(result)
    case = _as_case(case)
    alpha = check_alpha_level(alpha)
    _check_same_counts(fitted.counts, case)
    independent = fitted.method in _independent_methods()
    n = fitted.n_draws
    ref = case.reference
    rows = []
    for measure in dict.fromkeys(ref["measure"]):
        x = fitted.draws(measure)
        items = [str(i) for i in x["item"].values]
        sub = ref[ref["measure"] == measure]
        law = _ReferenceLaw(case, measure, sub)
        for stat_row in sub.itertuples(index=False):
            k = items.index(str(stat_row.item))
            xi = x.isel(item=k)
            if stat_row.statistic == "quantile":
                series = (xi <= stat_row.value).astype(np.float64)
                mean_series = float(series.mean())
                diff = mean_series - stat_row.prob
                estimate = float(np.quantile(xi.values, stat_row.prob))
                # the indicator's variance is p (1 - p) under the reference law
                err = math.sqrt(stat_row.prob * (1.0 - stat_row.prob) / _n_eff(series, independent))
                z = _z(diff, err)
                if independent:
                    from scipy.stats import binomtest

                    p = float(binomtest(round(mean_series * n), n, stat_row.prob).pvalue)
                else:
                    p = _two_sided(z)
            else:
                m = law.mean[k]
                if stat_row.statistic == "mean":
                    series, var_y, third_y = xi, law.var[k], law.central[k, 3]
                    estimate = float(xi.mean())
                else:
                    series = (xi - m) ** 2
                    var_y, third_y = law.square[0][k], law.square[1][k]
                    estimate = float(xi.var(ddof=1))
                diff = float(series.mean()) - stat_row.value
                z_arr, err_arr = mean_z(
                    series, np.asarray(diff), np.asarray(var_y), np.asarray(third_y), independent
                )
                z, err = float(z_arr), float(err_arr)
                p = _two_sided(z)
            rows.append(
                {
                    "item": stat_row.item,
                    "measure": measure,
                    "statistic": stat_row.statistic,
                    "prob": stat_row.prob,
                    "reference": stat_row.value,
                    "estimate": estimate,
                    "mcse": err,
                    "z": z,
                    "p_value": p,
                }
            )
    import pandas as pd

    table = pd.DataFrame(rows)
    passed, p_value = decide(table, "p_value", alpha)
    z_abs = np.abs(table["z"].to_numpy(dtype=np.float64))
    statistic = float(np.max(z_abs)) if z_abs.size else math.nan
    return ValidationResult(
        check="reference",
        passed=passed,
        statistic=statistic,
        p_value=p_value,
        level=alpha,
        table=table,
        description=(
            f"Draws of every item and measure of reference case {case.name!r} against its "
            "stored mpmath posterior (means, variances"
            + (", quantiles" if (ref["statistic"] == "quantile").any() else "")
            + "); "
            + "errors from the reference law over "
            + ("N independent draws" if independent else "the ESS")
            + f", Holm over {len(table)} rows."
        ),
        details={
            "case": case.name,
            "independent": independent,
            "case_parameters": dict(case.parameters),
            "fit_parameters": dict(fitted.parameters),
            "fit_model": fitted.model,
        },
    )


class _ReferenceLaw:
    """The moments of one measure's reference law, every item of a case (its ``alpha``).

    ``mean`` and ``var`` are the stored reference values (mpmath); where no variance is
    stored (``old`` with more than two proper classes) and for the higher moments, the
    closed forms of :func:`ambppl.dirichlet_moments` (``amb``, ``modified``) or, for the
    measures without finite moment sums, :func:`_skewed.pilot_central_moments` (independent
    draws of the reference law, not of the fit). ``central`` holds ``mu_0..mu_6`` (items x
    7) and ``square`` the variance and third moment of ``(x - mean)^2``.
    """

    def __init__(self, case: ReferenceCase, measure: str, sub: pd.DataFrame) -> None:
        labels = [str(i) for i in case.counts["item"].values]
        alpha = np.array([item["alpha"] for item in case.posterior["items"]], dtype=np.float64)
        cs_label = case.counts.attrs.get("cant_solve")
        categories = [str(c) for c in case.counts["category"].values]
        cs = None if cs_label is None else categories.index(str(cs_label))
        stored = {
            stat: dict(zip(rows["item"].astype(str), rows["value"], strict=True))
            for stat, rows in sub.groupby("statistic")
        }
        self.mean = np.array([stored["mean"][i] for i in labels], dtype=np.float64)
        if measure in ("amb", "modified"):
            moments = dirichlet_moments(alpha, measure, 6, cant_solve=cs)
            self.central = np.asarray(moments.central, dtype=np.float64)
            self.square = square_of(moments)
        else:
            self.central = pilot_central_moments(alpha, measure, cs, self.mean)
            self.square = square_moments(self.central)
        var = stored.get("var", {})
        self.var = np.array(
            [var.get(i, c) for i, c in zip(labels, self.central[:, 2], strict=True)],
            dtype=np.float64,
        )


def _n_eff(series: xr.DataArray, independent: bool) -> float:
    return float(np.atleast_1d(effective_draws(series, independent))[0])


def _independent_methods() -> tuple[str, ...]:

    return tuple(INDEPENDENT_METHODS)


def _z(diff: float, err: float) -> float:
    if err > 0 and np.isfinite(err):
        return diff / err
    return 0.0 if diff == 0 else math.copysign(math.inf, diff)


def _two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


def _check_same_counts(counts: xr.DataArray, case: ReferenceCase) -> None:
    want = case.counts
    got = np.asarray(counts.values)
    same = got.shape == want.shape and np.array_equal(got, want.values)
    if same and "item" in counts.coords:
        same = [str(i) for i in counts["item"].values] == [str(i) for i in want["item"].values]
    if not same:
        raise ValueError(
            f"result must be a fit of reference case {case.name!r}'s counts "
            f"({want.sizes['item']} items x {want.sizes['category']} categories, items "
            f"{[str(i) for i in want['item'].values]}), but its counts differ; fit "
            "load_reference_case(name).counts"
        )


def run_reference_cases(
    *,
    method: str = "exact",
    sampler: str | None = None,
    draws: int = 1000,
    chains: int = 4,
    random_seed: Any = None,
    alpha: float = 0.01,
    cases: Any = None,
    decision_checks: Any = ("reference", "moments", "density"),
    sample_kwargs: dict[str, Any] | None = None,
) -> ValidationResult:
    """Fit every reference case and run the validation checks on each fit.

    Parameters
    ----------
    method : str, default "exact"
        :func:`ambppl.fit`'s method, used for every case (each case is fitted with its own
        model and parameters).
    sampler : str, optional
        NUTS implementation for NUTS methods (``fit``'s ``sampler``).
    draws, chains : int, default 1000, 4
        Draws per chain and chains of every fit.
    random_seed : int, numpy.random.Generator or None
        Seed; each case gets its own stream (``numpy.random.SeedSequence.spawn``), so the
        same seed gives the same table.
    alpha : float, default 0.01
        Family-wise false-alarm rate of the whole run.
    cases : str or sequence of str, optional
        Run only these cases (default: all of :func:`list_reference_cases`).
    decision_checks : sequence of str, default ("reference", "moments", "density")
        The checks whose rows enter the family-wise decision; the other rows are reported
        (``in_decision`` False, ``p_holm`` NaN, never ``flagged``). Add ``"predictive"`` to
        let a model misfit fail the run (see Notes).
    sample_kwargs : dict, optional
        Keywords of ``pymc.sample`` for a method that runs NUTS (e.g. ``tune``,
        ``target_accept``), passed to every fit (:func:`ambppl.fit` refuses them for a
        method that runs no NUTS).

    Returns
    -------
    ValidationResult
        ``check = "reference_cases"``. ``table``: one row per case x check, columns
        ``case``, ``check`` (``reference``, ``moments``, ``density``, ``predictive``),
        ``passed`` (the check's own verdict), ``statistic``, ``p_value`` (the check's own
        family-wise p-value), ``n_flagged``, ``n_rows``, ``note``, ``in_decision``,
        ``p_holm``, ``flagged``; ``details["results"]``
        maps ``(case, check)`` to the check's :class:`ValidationResult` and
        ``details["fits"]`` maps a case to its fit.

    Raises
    ------
    TypeError
        If ``cases`` or ``decision_checks`` is neither a name nor a sequence of names,
        ``random_seed`` is not an int, a Generator or None, or ``sample_kwargs`` is not a
        dict.
    ValueError
        For an unknown case, an empty ``cases``, an unknown check in ``decision_checks``,
        a negative ``random_seed``, or a method the case's model does not offer (from
        :func:`ambppl.fit`).

    Notes
    -----
    Checks per case: ``reference`` (:func:`check_reference`) always; ``moments``
    (:func:`ambppl.validation.check_moments`) always; ``density``
    (:func:`ambppl.validation.check_density`) only for cases whose items have two proper
    classes and can't-solve (the exact law needs both); ``predictive``
    (:func:`ambppl.validation.check_predictive`) only for cases with at least two answered
    items (it compares statistics across items; ``thousand_answers`` has one). A check whose
    module is not available in this installation gets a row with ``passed`` None, p-value
    NaN and a note.

    The decision: each row's ``p_value`` is the smallest Holm-adjusted p-value of the
    check's own table, which is a valid p-value for "the check's null holds" (Holm's
    procedure rejects some row of the check at level t exactly when it is <= t). Holm's
    procedure is applied again across the rows of ``decision_checks`` (``decide`` on their
    ``p_value``); the run passes when none of their ``p_holm`` is <= ``alpha``, so a correct
    sampler fails the whole run with probability at most ``alpha`` under any dependence
    between the checks. ``statistic`` is the number of flagged rows.

    Why ``predictive`` is reported but, by default, not decided on: the other checks ask
    "are the draws the posterior of this model and data?", which a correct sampler answers
    yes on every case. The predictive check asks "does the model fit these data?", and the
    cases are edge cases chosen to strain the model, not samples from it: under the uniform
    prior over twelve categories, a unanimous item next to spread ones is implausible, and
    ``check_predictive`` rightly rejects ``twelve_categories`` for every sampler (p ~ 1e-24
    with exact draws). A failing predictive row therefore says nothing about the sampler.

    Method limits: every case uses ``dirichlet_categorical``, which offers ``exact`` and
    ``nuts``. ``nuts`` compiles one PyMC model per case shape (about a minute each on 2
    cores) and samples the 1000-answer and twelve-category cases slowly; its draws are
    tested with ArviZ MCSEs. ``collapsed`` and ``empirical_bayes`` are not offered by the
    cases' model: ``fit`` raises. The ``old`` measure's reference variance is stored only
    for two proper classes; with more classes its mean is checked.

    Examples
    --------
    >>> from ambppl.validation.reference import run_reference_cases
    >>> run = run_reference_cases(draws=200, chains=2, random_seed=0,
    ...                           cases=["single_answer"])
    >>> list(run.table["check"])
    ['reference', 'moments', 'density', 'predictive']
    """
    import pandas as pd

    alpha = check_alpha_level(alpha)
    random_seed = check_random_seed(random_seed)
    decided = _names(decision_checks, "decision_checks", list(CHECKS))
    if sample_kwargs is not None and not isinstance(sample_kwargs, dict):
        raise TypeError(
            "sample_kwargs must be a dict of pymc.sample keywords (e.g. {'tune': 2000}) or "
            f"None, but got {sample_kwargs!r}"
        )
    names = list(list_reference_cases()["name"])
    if cases is not None:
        names = _names(cases, "cases", names)
    seeds = np.random.SeedSequence(_entropy(random_seed)).spawn(len(names))
    rows: list[dict[str, Any]] = []
    results: dict[tuple[str, str], Any] = {}
    fits = {}
    for name, seed in zip(names, seeds, strict=True):
        case = load_reference_case(name)
        fit_rng, pred_rng = (np.random.default_rng(s) for s in seed.spawn(2))
        result = ambppl.fit(
            case.counts,
            case.model,
            method=method,
            draws=draws,
            chains=chains,
            random_seed=fit_rng,
            sampler=sampler,
            **({"sample_kwargs": sample_kwargs} if sample_kwargs else {}),
            **case.parameters,
        )
        fits[name] = result
        for check in CHECKS:
            if not _applies(check, case):
                continue
            outcome, note = _run_check(check, result, case, alpha, pred_rng)
            results[(name, check)] = outcome
            rows.append(_row(name, check, outcome, note))
    table = pd.DataFrame(rows)
    table["in_decision"] = table["check"].isin(decided)
    table["p_decision"] = table["p_value"].where(table["in_decision"])
    passed, p_value = decide(table, "p_decision", alpha)
    table = table.drop(columns="p_decision")
    return ValidationResult(
        check="reference_cases",
        passed=passed,
        statistic=float(table["flagged"].sum()),
        p_value=p_value,
        level=alpha,
        table=table,
        description=(
            f"{len(names)} reference cases fitted with method {method!r}; each fit checked "
            "against its stored reference posterior, the closed-form moments, the exact "
            "two-class law (where it applies) and its posterior predictive; Holm across "
            f"the {int(table['in_decision'].sum())} rows of {decided}."
        ),
        details={"results": results, "fits": fits, "method": method, "decision_checks": decided},
    )


def _names(given: Any, name: str, allowed: list[str]) -> list[str]:
    """``cases=`` or ``decision_checks=``: one name or a sequence of names among ``allowed``
    (``decision_checks`` may be empty: nothing decides, every row is reported only)."""
    if isinstance(given, str):
        given = [given]
    elif isinstance(given, (bytes, dict)) or not isinstance(given, Iterable):
        raise TypeError(
            f"{name} must be a name or a sequence of names among {allowed}, but got {given!r}"
        )
    out = list(given)
    if name == "cases" and not out:
        raise ValueError(
            f"cases must name at least one case among {allowed}, or be None for all of them, "
            "but got an empty sequence"
        )
    bad = [c for c in out if not isinstance(c, str) or c not in allowed]
    if bad:
        raise ValueError(f"{name} must be among {allowed}, but got {bad}")
    return out


def _applies(check: str, case: ReferenceCase) -> bool:
    """Whether ``check`` applies to ``case`` (see :func:`run_reference_cases`, Notes)."""
    if check == "density":
        return case.two_class
    if check == "predictive":
        return int((case.counts.values.sum(axis=1) > 0).sum()) >= 2
    return True


def _entropy(random_seed: Any) -> Any:
    """Seed material for SeedSequence from an int, a Generator or None."""
    if isinstance(random_seed, np.random.Generator):
        return int(random_seed.integers(2**63))
    return random_seed


def _run_check(
    check: str, result: Any, case: ReferenceCase, alpha: float, rng: np.random.Generator
) -> tuple[Any, str]:
    """One check on one fit; (None, why) where the check's module is not available."""
    import importlib

    if check == "reference":
        return check_reference(result, case, alpha=alpha), ""
    module, function = {
        "moments": ("ambppl.validation.closed_form", "check_moments"),
        "density": ("ambppl.validation.density", "check_density"),
        "predictive": ("ambppl.validation.predictive", "check_predictive"),
    }[check]
    try:
        func = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as err:
        return None, f"not available: {err}"
    if check == "predictive":
        return func(result, alpha=alpha, random_seed=rng), ""
    return func(result, alpha=alpha), ""


def _row(case: str, check: str, outcome: Any, note: str) -> dict[str, Any]:
    if outcome is None:
        return {
            "case": case,
            "check": check,
            "passed": None,
            "statistic": math.nan,
            "p_value": math.nan,
            "n_flagged": 0,
            "n_rows": 0,
            "note": note,
        }
    p = outcome.p_value
    return {
        "case": case,
        "check": check,
        "passed": bool(outcome.passed),
        "statistic": float(outcome.statistic),
        "p_value": math.nan if p is None else float(p),
        "n_flagged": int(outcome.n_flagged),
        "n_rows": len(outcome.table),
        "note": note,
    }
