"""Assemble the HTML diagnostics report of a fit: collect the numbers, draw, fill the template.

:func:`render_report` turns the result of :func:`ambppl.fit` into one self-contained HTML
page (figures embedded as base64 PNG, a few lines of inline JavaScript to sort the item
table, nothing fetched from a network). It renders what public functions compute
(:func:`ambppl.summarize`, :func:`ambppl.prior_sensitivity`,
:func:`ambppl.validation.check_moments`, :func:`ambppl.validation.check_density`, the
convergence diagnostics of :mod:`ambppl.inference.convergence`); its figures are the
``Figure`` objects of :mod:`ambppl.report.figures`, embedded by
:func:`~ambppl.report.figures.figure_to_data_uri`. The page is a Jinja2 template with
autoescaping on, so item ids, labels and file names are always shown as text, never
interpreted as markup.
"""

from __future__ import annotations

import datetime
import json
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ambppl import __version__
from ambppl.analysis.hyperprior import implied_prior
from ambppl.analysis.raters import summarize_raters
from ambppl.analysis.sensitivity import prior_sensitivity
from ambppl.analysis.summary import rank, summarize
from ambppl.data.contract import count_values
from ambppl.inference.catalog import get_model
from ambppl.inference.convergence import (
    CONVERGENCE,
    ConvergenceWarning,
    convergence_advice,
    convergence_message,
    convergence_severity,
    stored_record,
    worst_parameters,
)
from ambppl.inference.diagnostics import diagnose
from ambppl.inference.fitting import VARIABLES
from ambppl.internal.checks import cant_solve_position, check_positive_int, check_progress
from ambppl.internal.resultdata import cant_solve_index, observed_counts
from ambppl.internal.warned import collecting_warnings, stored_warnings
from ambppl.maths.moments import dirichlet_mean
from ambppl.report import figures
from ambppl.report.figures import figure_to_data_uri
from ambppl.validation import NotApplicable, TooFewDraws, check_density, check_moments
from ambppl.validation.closed_form import MOMENTS

#: Symmetric Dirichlet concentrations compared in the prior-sensitivity section of a fit
#: with one fixed prior.
SENSITIVITY_PRIORS: tuple[float, ...] = (0.5, 1.0, 2.0)

#: Symmetric priors a learned prior is compared with (prior sensitivity, implied prior).
LEARNED_COMPARISON: tuple[float, ...] = (0.5, 1.0)

#: Chains, and at most draws per chain (the fit's draws where fewer), of the exact refits of
#: the prior-sensitivity section (:func:`ambppl.prior_sensitivity`).
REFIT_CHAINS = 2
MAX_REFIT_DRAWS = 1000

#: Draws of q from each prior in the implied-prior figure.
N_PRIOR_DRAWS = 4000


#: Items shown in the rank-plot panel of a NUTS fit (those with the largest R-hat).
N_RANK_PLOTS = 6

#: Draws (chain x draw x scalars) the per-variable convergence table diagnoses beyond the
#: variables the fit's own convergence record checked (those are always diagnosed); the
#: remaining variables are listed as not diagnosed. 2**25 draws are about 17,000 scalars of
#: 2 chains x 1000 draws, 5-10 s with :func:`ambppl.inference.diagnostics.diagnose` on 2 cores.
MAX_DIAGNOSED_VALUES = 2**25

#: E-BFMI below this value flags a chain whose momentum resampling explores the energy
#: distribution poorly (Betancourt 2016; ArviZ's and Stan's threshold).
BFMI_THRESHOLD = 0.3

#: ``sample_stats`` names of the tree depth of each draw, of the flag "the trajectory hit the
#: maximum depth" and of the leapfrog steps: PyMC (``tree_depth``, ``reached_max_treedepth``,
#: ``n_steps``) and nutpie (``depth``, ``maxdepth_reached``, ``n_steps``).
DEPTH_STATS = ("tree_depth", "depth")
MAX_DEPTH_STATS = ("reached_max_treedepth", "maxdepth_reached")
STEP_STATS = ("n_steps",)

#: Rows of the sortable item table (the most ambiguous items): about 600 bytes of HTML each.
TABLE_ROWS = 10_000

#: Hyperparameters a line of the page's first section names before "and N more".
MAX_NAMED = 8

_TEMPLATE = "report.html.j2"


def _fmt(value: Any, digits: int = 3) -> str:
    """Format a number for the page: fixed digits, a dash for missing values."""
    if value is None:
        return "–"
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x):
        return "–"
    return f"{x:.{digits}f}"


def _sort_key(value: Any) -> str:
    """The ``data-value`` of a table cell: a plain number for sorting, '' when missing."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return ""
    return format(x, ".7g") if math.isfinite(x) else ""


def _given(value: Any) -> str:
    """A number as it was given: the shortest text that reads back as the same float
    (``repr``: 0.25, 1.0, 0.1234567), not rounded to a fixed number of digits."""
    return repr(float(value))


def _shown(value: Any) -> Any:
    """Jinja2's ``finalize``: every text the page prints (item ids, labels, file names,
    warnings that quote them) with its control characters written as escapes, as the
    figures draw them (:func:`ambppl.report.figures.visible`: a raw control character is an
    HTML parse error, and a tab or newline would vanish into the layout); the template's own
    markup (``Markup``) and other values as they are."""
    import markupsafe

    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return figures.visible(value)
    return value


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ambppl.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.filters["fmt"] = _fmt
    env.filters["given"] = _given
    env.filters["pct"] = lambda x, d=1: "–" if x is None or not np.isfinite(x) else f"{x:.{d}%}"
    env.filters["sortkey"] = _sort_key
    return env


def _model_info(name: str) -> dict[str, Any]:
    """The catalog's info record of a model (empty if the catalog lacks it)."""
    try:
        return dict(get_model(name).info)
    except (ValueError, OSError):
        return {}


def _parameters(result: Any) -> list[dict[str, str]]:
    """The model's parameters recorded by ``fit`` (``attrs["parameters"]``, JSON)."""
    raw = result.attrs.get("parameters", result["posterior"].attrs.get("parameters"))
    if raw is None:
        return []
    try:
        params = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (TypeError, ValueError):
        return [{"name": "parameters", "value": str(raw)}]
    return [{"name": str(k), "value": json.dumps(v)} for k, v in params.items()]


def _fixed_prior(result: Any) -> list[float] | None:
    """The one fixed Dirichlet prior of every q_i (``attrs["prior"]``), or None."""
    prior = result.attrs.get("prior", result["posterior"].attrs.get("prior"))
    if prior is None:
        return None
    return [float(p) for p in np.atleast_1d(np.asarray(prior, dtype=float))]


def _is_learned(result: Any) -> bool:
    """Whether the prior of q was learned: the posterior has ``mu`` and ``kappa``."""
    posterior = result["posterior"]
    return "mu" in posterior and "kappa" in posterior


def _standard(result: Any) -> dict[str, Any] | None:
    """The fit's convergence record (``attrs["convergence"]``, JSON) checked against the
    standard :data:`ambppl.inference.convergence.CONVERGENCE`, or None when the result has none."""

    record = stored_record(result)
    if record is None:
        return None
    return {
        "passed": bool(record.get("passed", False)),
        "variables": [str(v) for v in record.get("variables", [])],
        "r_hat": record.get("r_hat"),
        "ess_bulk": record.get("ess_bulk"),
        "ess_tail": record.get("ess_tail"),
        "divergences": record.get("divergences"),
        "failed": [str(f) for f in record.get("failed", [])],
        "reason": record.get("reason"),
        "tune": record.get("tune"),  # the warm-up steps per chain, where the fit knew them
        "limits": dict(CONVERGENCE),
    }


def _check_fit_warnings(
    fit_warnings: Any, name: str = "fit_warnings", around: str = "ambppl.fit"
) -> list[Any]:
    """``fit_warnings`` of :func:`render_report` (or another list of warnings, ``name``,
    recorded around ``around``) as a list: warnings (as :func:`warnings.catch_warnings`
    records them, or :class:`Warning` objects) or texts."""
    kinds = (str, Warning, warnings.WarningMessage)
    if fit_warnings is None:
        return []
    if isinstance(fit_warnings, str | Warning) or not isinstance(fit_warnings, Iterable):
        raise TypeError(
            f"{name} must be a list of warnings (e.g. the list that "
            f"warnings.catch_warnings(record=True) records around {around}) or of their "
            f"texts, but got {type(fit_warnings).__name__}; wrap one warning in a list"
        )
    items = list(fit_warnings)
    for item in items:
        if not isinstance(item, kinds):
            raise TypeError(
                f"{name} must hold warnings (warnings.WarningMessage or Warning) or "
                f"texts (str), but holds a {type(item).__name__}"
            )
    return items


def _is_verdict(text: str, record: dict[str, Any] | None, model: str | None) -> bool:
    """Whether the kept warning ``text`` is the one :func:`ambppl.fit` raised for a missed
    convergence standard (:func:`ambppl.inference.convergence.check_convergence`): the
    record missed it and the text is that record's message
    (:func:`ambppl.inference.convergence.convergence_message`, its ``what`` the text before
    " missed the convergence standard", the model the result's or none). Other
    :class:`ConvergenceWarning` s (e.g. a model's design warning before sampling) are not."""
    if record is None or record.get("passed", False):
        return False
    what, marker, _ = text.partition(" missed the convergence standard (")
    if not marker:
        return False
    try:
        return any(
            text == convergence_message(record, what=what, model=name)
            for name in dict.fromkeys((model, None))
        )
    except (TypeError, ValueError, KeyError):  # a record this version cannot word
        return False


def _kept(result: Any) -> list[Any]:
    """The warnings the fit kept in ``result.attrs["fit_warnings"]``, as warnings: the
    :class:`ConvergenceWarning` that is the fit's convergence verdict (:func:`_is_verdict`)
    carries the result's convergence record, as when it was raised (the page's first section
    says the same, so its line is left out); every other warning, a
    :class:`ConvergenceWarning` about the design included, is kept as its text (listed)."""
    record = stored_record(result)
    model = result.attrs.get("model", result["posterior"].attrs.get("model"))
    kept: list[Any] = []
    for category, text in stored_warnings(result.attrs):
        if category == ConvergenceWarning.__name__ and _is_verdict(
            text, record, None if model is None else str(model)
        ):
            kept.append(ConvergenceWarning(text, record=record))
        else:
            kept.append(text)
    return kept


def _warning_lines(raised: Iterable[Any], *, record: bool) -> list[str]:
    """The text of each warning in ``raised`` once, on one line, in order. The
    :class:`ambppl.ConvergenceWarning` about a missed standard (the one that carries a
    convergence record) is left out where the page shows the fit's convergence record
    (``record``): its first section says the same. A :class:`ambppl.ConvergenceWarning`
    without a record (a design warning) is listed."""
    lines: list[str] = []
    for item in raised:
        message = item.message if isinstance(item, warnings.WarningMessage) else item
        if record and isinstance(message, ConvergenceWarning) and message.record is not None:
            continue
        text = " ".join(str(message).split())
        if text and text not in lines:
            lines.append(text)
    return lines


#: :func:`ambppl.hyperprior_sensitivity`'s diagnoses of a hyperparameter that is not pinned
#: down, as :func:`_hyperprior` groups them (any other: ``"unknown"``).
_DIAGNOSES = {"weak likelihood": "weak", "prior-data conflict": "conflict"}


def _hyperprior(table: Any) -> dict[str, Any] | None:
    """The hyperprior sensitivity that :func:`ambppl.summarize` computed for a fit with a
    ``log_prior`` group (``attrs["hyperprior_sensitivity"]`` of its table, from
    :func:`ambppl.hyperprior_sensitivity`), with the hyperparameters whose posterior moves
    with their prior (``flagged``: prior sensitivity at or above the threshold) split as
    :func:`ambppl.hyperprior_sensitivity` diagnoses them: ``weak`` (the likelihood's
    sensitivity below the threshold: the data say too little, the prior decides),
    ``conflict`` (both at or above it: prior-data conflict, the data pull against the prior)
    and ``unknown`` (no likelihood sensitivity: the fit stored no ``log_likelihood``). None
    where it was not computed."""
    sensitivity = table.attrs.get("hyperprior_sensitivity")
    if sensitivity is None:
        return None
    groups: dict[str, list[str]] = {"weak": [], "conflict": [], "unknown": []}
    for row in sensitivity["rows"]:
        if not row["pinned_down"]:  # hyperprior_sensitivity's own diagnosis, grouped
            groups[_DIAGNOSES.get(row["diagnosis"], "unknown")].append(row["parameter"])
    flagged = [r["parameter"] for r in sensitivity["rows"] if not r["pinned_down"]]
    return {**sensitivity, "flagged": flagged, **groups}


def _named(names: Sequence[str]) -> str:
    """The first :data:`MAX_NAMED` of ``names``, joined, with "and N more" for the rest."""
    shown = ", ".join(names[:MAX_NAMED])
    if len(names) > MAX_NAMED:
        shown += f" and {len(names) - MAX_NAMED} more"
    return shown


def _findings(
    hyper: dict[str, Any] | None,
    learned: bool,
    agreement: dict[str, Any],
    measure: str,
    *,
    point: bool = False,
) -> list[dict[str, str]]:
    """What the report's own computations found that limits trust in the numbers, one line
    each for the page's first section, with the section that has the details (``href``,
    ``section``): the hyperparameters whose posterior moves with their prior, as
    :func:`ambppl.hyperprior_sensitivity` diagnoses them (:func:`_hyperprior`: the data do not
    pin them down; the data pull against their prior; or which of the two is unknown), and a
    check of the draws against the closed forms that failed, stopped or could not run on
    these draws (but for one point, ``point``: the page's first line says that it has no
    draws to check)."""
    out: list[dict[str, str]] = []
    if hyper:
        where = {
            "href": "#learned-prior" if learned else "#model",
            "section": "Learned prior" if learned else "Model and prior",
        }
        limit = f"{hyper['threshold']:.2f}"
        for kind in ("weak", "conflict", "unknown"):
            names = hyper.get(kind) or []
            if not names:
                continue
            shown = _named(names)
            one = len(names) == 1
            its, it = ("its", "it") if one else ("their", "them")
            beta = " and the implied symmetric beta" if learned and "kappa" in names else ""
            if kind == "weak":
                text = (
                    f"The data do not pin down {shown}: {its} posterior follows {its} own "
                    f"prior (power-scaling prior sensitivity ≥ {limit}, likelihood "
                    f"sensitivity below it); read {it}{beta} as the prior's choice, not a "
                    "measurement"
                )
            elif kind == "conflict":
                text = (
                    f"The data pull against the prior of {shown} (prior-data conflict: "
                    f"power-scaling sensitivity ≥ {limit} to both the prior and the "
                    f"likelihood): {its} posterior is a compromise between the two that "
                    f"another prior would move; check that the prior (or the model) suits "
                    f"these data before reading {it}{beta} as a measurement"
                )
            else:
                text = (
                    f"The posterior of {shown} moves with {its} prior (power-scaling prior "
                    f"sensitivity ≥ {limit}); the fit stored no log-likelihood, so whether "
                    "the data say too little or pull against the prior is not known: do not "
                    f"read {it}{beta} as a measurement"
                )
            out.append({"text": text, **where})
    link = {"href": "#agreement", "section": "Closed-form check"}
    if agreement.get("available"):
        if not agreement["ok"]:
            out.append(
                {
                    "text": f"The draws disagree with the closed-form posterior moments of "
                    f"{measure}: {agreement['n_flagged']} of {agreement['n_tests']} tests "
                    f"flagged at family-wise level {agreement['level']:.0%} (largest |z| "
                    f"{agreement['max_abs_z']:.2f})",
                    **link,
                }
            )
        density = agreement.get("density")
        if density and not density["ok"]:
            out.append(
                {
                    "text": f"The draws of the items with two proper classes disagree with "
                    f"their exact posterior law: {density['n_flagged']} of {density['n']} "
                    f"items flagged (largest Kolmogorov-Smirnov distance "
                    f"{density['max_d']:.3f})",
                    **link,
                }
            )
    elif agreement.get("error"):
        out.append(
            {
                "text": "The check of the draws against the closed-form posterior moments "
                f"stopped on these draws: {agreement['error']}",
                **link,
            }
        )
    elif agreement.get("reason") and not point:
        out.append(
            {
                "text": "The draws were not checked against the closed-form posterior "
                f"moments: {agreement['reason'].rstrip('.')}",
                **link,
            }
        )
    return out


def _overview(counts: Any, source: str | None = None) -> dict[str, Any]:
    """Numbers and figures of the data overview section (``source``: the data's name,
    default the counts' ``attrs["source"]``)."""

    values = np.asarray(counts.values, dtype=np.int64)
    n_answers = values.sum(axis=1)
    labels = [str(c) for c in counts["category"].values]
    totals = values.sum(axis=0)
    shares = totals / totals.sum()
    cs = counts.attrs.get("cant_solve")
    position = cant_solve_position(cs, counts["category"].values)  # not always the last
    items_with_cs = None if position is None else int((values[:, position] > 0).sum())
    return {
        "source": str(source or counts.attrs.get("source") or "data"),
        "format": counts.attrs.get("format"),
        "n_items": int(values.shape[0]),
        "n_categories": int(values.shape[1]),
        "n_raters": counts.attrs.get("n_raters"),
        "n_total": int(n_answers.sum()),
        "n_dropped": int(counts.attrs.get("n_dropped") or 0),
        "answers_min": int(n_answers.min()),
        "answers_median": float(np.median(n_answers)),
        "answers_max": int(n_answers.max()),
        "cant_solve": None if cs is None else str(cs),
        "cant_solve_position": position,
        "items_with_cs": items_with_cs,
        "categories": [
            {
                "label": lab,
                "count": int(t),
                "share": float(s),
                "is_cs": j == position,  # by label, wherever it sits (None: no column)
            }
            for j, (lab, t, s) in enumerate(zip(labels, totals, shares, strict=True))
        ],
        "fig_answers": figure_to_data_uri(figures.plot_answers_per_item(n_answers)),
        "fig_shares": figure_to_data_uri(figures.plot_category_shares(labels, shares, cs)),
    }


def _nan_worst(values: Any, largest: bool) -> float:
    """The largest (smallest) non-NaN value, NaN when there is none (no All-NaN warning)."""
    a = np.asarray(values, dtype=float).ravel()
    a = a[~np.isnan(a)]
    if not a.size:
        return math.nan
    return float(a.max() if largest else a.min())


def _variable_diagnostics(result: Any, checked: Sequence[str]) -> dict[str, Any]:
    """Worst R-hat, smallest bulk and tail ESS of every stored posterior variable.

    One row per posterior variable, in the posterior's order, with ``passed`` against
    :data:`ambppl.inference.convergence.CONVERGENCE` (None where every value is NaN, e.g.
    fewer than 4 draws) and ``checked`` (whether the fit's own record covered it). The
    variables in ``checked`` are always diagnosed, the others while their draws fit in
    :data:`MAX_DIAGNOSED_VALUES` (``computed=False`` beyond). The diagnostics are those of
    :func:`ambppl.inference.convergence.check_convergence`
    (:func:`ambppl.inference.diagnostics.diagnose`). ``worst`` lists the scalars furthest
    from the standard over every diagnosed variable
    (:func:`ambppl.inference.convergence.worst_parameters`): the worst of each variable, then
    the next worst while fewer than :data:`N_RANK_PLOTS`.
    """

    posterior = result["posterior"]
    per_scalar = int(posterior.sizes["chain"]) * int(posterior.sizes["draw"])
    names = [str(n) for n in posterior.data_vars]
    checked = {str(v) for v in checked}
    used = sum(int(posterior[n].size) for n in names if n in checked)
    rows = []
    diagnosed: dict[str, dict[str, np.ndarray]] = {}
    for name in names:
        da = posterior[name]
        row: dict[str, Any] = {
            "name": name,
            "n": int(da.size) // max(per_scalar, 1),
            "checked": name in checked,
            "computed": True,
        }
        if name not in checked:
            if used + int(da.size) > MAX_DIAGNOSED_VALUES:
                row["computed"] = False
                rows.append(row)
                continue
            used += int(da.size)
        diag = diagnose(da.transpose("chain", "draw", ...).values)
        diagnosed[name] = diag
        r_hat = _nan_worst(diag["r_hat"], largest=True)
        ess_bulk = _nan_worst(diag["ess_bulk"], largest=False)
        ess_tail = _nan_worst(diag["ess_tail"], largest=False)
        missed = [
            k
            for k, value, bad in (
                ("r_hat", r_hat, r_hat > CONVERGENCE["r_hat"]),
                ("ess_bulk", ess_bulk, ess_bulk < CONVERGENCE["ess_bulk"]),
                ("ess_tail", ess_tail, ess_tail < CONVERGENCE["ess_tail"]),
            )
            if bad
        ]
        known = not all(math.isnan(v) for v in (r_hat, ess_bulk, ess_tail))
        row.update(
            r_hat=r_hat,
            ess_bulk=ess_bulk,
            ess_tail=ess_tail,
            missed=missed,
            passed=(not missed) if known else None,
        )
        rows.append(row)
    return {
        "rows": rows,
        "n_failed": sum(1 for r in rows if r.get("passed") is False),
        "n_skipped": sum(1 for r in rows if not r["computed"]),
        "limits": dict(CONVERGENCE),
        "worst": worst_parameters(posterior, diagnosed, n=max(N_RANK_PLOTS, len(diagnosed))),
    }


def _energy(result: Any) -> dict[str, Any]:
    """E-BFMI per chain (:func:`arviz_stats.bfmi`) and the energy plot of a NUTS fit; or
    ``available=False`` with what is missing (no ``sample_stats``, no ``energy``)."""

    if "sample_stats" not in result.children:
        return {"available": False, "missing": "the result has no sample_stats group"}
    stats = result["sample_stats"]
    if "energy" not in stats.data_vars:
        held = ", ".join(sorted(str(v) for v in stats.data_vars)) or "nothing"
        return {
            "available": False,
            "missing": f"sample_stats has no energy (it holds: {held})",
        }
    energy_da = stats["energy"].transpose("chain", "draw")
    energy = np.asarray(energy_da.values, dtype=float)
    if energy.shape[1] < 3 or not np.isfinite(energy).all():
        return {
            "available": False,
            "missing": "the stored energy has fewer than 3 draws per chain or non-finite values",
        }
    from arviz_stats import bfmi

    # mean(diff(E)^2) / var(E, ddof=1) per chain = sum(diff(E)^2) / sum((E - mean E)^2);
    # a constant chain gives 0 / 0 = NaN
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.asarray(bfmi(energy), dtype=float).reshape(-1)
    chains = [str(c) for c in energy_da["chain"].values]
    low = [bool(v < BFMI_THRESHOLD) for v in values]
    return {
        "available": True,
        "bfmi": [
            {"chain": c, "value": float(v), "low": lo}
            for c, v, lo in zip(chains, values, low, strict=True)
        ],
        "threshold": BFMI_THRESHOLD,
        "n_low": int(sum(low)),
        "min": _nan_worst(values, largest=False),
        "fig": figure_to_data_uri(figures.plot_energy(energy, values)),
    }


def _tree_depth(result: Any) -> dict[str, Any]:
    """Tree depth, leapfrog steps and draws at the maximum depth, where ``sample_stats``
    stores them (:data:`DEPTH_STATS`, :data:`STEP_STATS`, :data:`MAX_DEPTH_STATS`)."""
    if "sample_stats" not in result.children:
        return {"available": False, "missing": "the result has no sample_stats group"}
    stats = result["sample_stats"]
    depth = next((n for n in DEPTH_STATS if n in stats.data_vars), None)
    steps = next((n for n in STEP_STATS if n in stats.data_vars), None)
    at_max = next((n for n in MAX_DEPTH_STATS if n in stats.data_vars), None)
    if depth is None and steps is None and at_max is None:
        names = ", ".join(DEPTH_STATS + STEP_STATS + MAX_DEPTH_STATS)
        return {"available": False, "missing": f"sample_stats stores none of {names}"}
    out: dict[str, Any] = {"available": True, "depth": None, "steps": None, "at_max": None}
    if depth is not None:
        d = np.asarray(stats[depth].values, dtype=float)
        out["depth"] = {"name": depth, "mean": float(d.mean()), "max": int(d.max())}
    if steps is not None:
        n = np.asarray(stats[steps].values, dtype=float)
        out["steps"] = {"name": steps, "mean": float(n.mean()), "max": int(n.max())}
    if at_max is not None:
        hit = np.asarray(stats[at_max].values, dtype=bool)
        out["at_max"] = {"name": at_max, "n": int(hit.sum()), "of": int(hit.size)}
    return out


def _convergence(result: Any, table: Any, variable: str) -> dict[str, Any]:
    """Convergence diagnostics of a NUTS fit, or the statement that the draws are exact.

    For NUTS: the ranked measure's per-item R-hat and bulk ESS, divergences and rank plots;
    the per-variable table of every stored posterior variable
    (:func:`_variable_diagnostics`); the energy diagnostics (:func:`_energy`); the tree
    depth summary (:func:`_tree_depth`). ``ok`` is False when any of them flags a problem
    (a draw at the maximum tree depth costs efficiency, not validity, and does not count).
    """

    posterior = result["posterior"]
    method = str(result.attrs.get("method", posterior.attrs.get("method", "")))
    chains = int(posterior.sizes["chain"])
    draws = int(posterior.sizes["draw"])
    out: dict[str, Any] = {"method": method, "chains": chains, "draws": draws, "exact": False}
    if method == "exact" or "r_hat" not in table.columns:
        # no Markov chain: exact conjugate draws, Laplace draws or one point (the mode)
        out["exact"] = True
        out["kind"] = method if method in ("laplace", "map") else "exact"
        return out
    r_hat = table["r_hat"].to_numpy(dtype=float)
    ess = table["ess_bulk"].to_numpy(dtype=float)
    diverging = 0
    if "sample_stats" in result.children and "diverging" in result["sample_stats"]:
        diverging = int(np.asarray(result["sample_stats"]["diverging"].values).sum())
    worst = np.argsort(-np.nan_to_num(r_hat, nan=np.inf))[: min(N_RANK_PLOTS, len(r_hat))]
    worst_ids = table.index.to_numpy()[worst]
    draws_arr = (
        posterior[variable].sel(item=list(worst_ids)).transpose("item", "chain", "draw").values
    )
    out.update(
        {
            "r_hat_max": _nan_worst(r_hat, largest=True),
            "n_r_hat_bad": int(np.sum(r_hat > 1.01)),
            "ess_min": _nan_worst(ess, largest=False),
            "n_ess_low": int(np.sum(ess < CONVERGENCE["ess_bulk"])),
            "ess_threshold": CONVERGENCE["ess_bulk"],
            "divergences": diverging,
            "n_total_draws": chains * draws,
            "fig_rank": figure_to_data_uri(
                figures.plot_item_ranks(draws_arr, list(worst_ids), r_hat[worst])
            ),
        }
    )
    standard = _standard(result)
    out["variables"] = _variable_diagnostics(result, standard["variables"] if standard else [])
    out["energy"] = _energy(result)
    out["tree"] = _tree_depth(result)
    # a NaN R-hat (one chain) is not a pass: nothing could be compared; the fit's own record
    # counts too, so that this line never contradicts the headline (:func:`_verdict`)
    out["ok"] = bool(
        out["r_hat_max"] <= CONVERGENCE["r_hat"]
        and out["ess_min"] >= CONVERGENCE["ess_bulk"]
        and diverging == 0
        and out["variables"]["n_failed"] == 0
        and (not out["energy"]["available"] or out["energy"]["n_low"] == 0)
        and (standard is None or standard["passed"])
    )
    return out


def _verdict(
    result: Any,
    table: Any,
    convergence: dict[str, Any],
    standard: dict[str, Any] | None,
    variable: str,
    *,
    command_line: bool,
) -> dict[str, Any] | None:
    """The report's first section for a NUTS fit: did it meet the convergence standard?

    Missed when the fit's own record missed it, when any diagnosed posterior variable
    (hyperparameters included) or any item's R-hat / bulk ESS of the ranked measure misses
    it, or when there are divergent transitions. Names the worst parameter of every
    diagnosed variable (and of the measure's items), worst first (those of the variables
    the fit's record checked and that missed before the others), with the rank plots of the
    first :data:`N_RANK_PLOTS`
    (:func:`ambppl.report.figures.plot_parameter_ranks`) and the advice that fits what
    failed (:func:`ambppl.inference.convergence.convergence_advice`; command-line options when the
    report comes from the command line). None for exact draws.
    """

    if convergence["exact"]:
        return None
    posterior = result["posterior"]
    rows = convergence["variables"]["rows"]
    failed = set(standard["failed"]) if standard else set()
    for row in rows:
        failed.update(row.get("missed", []))
    worst = list(convergence["variables"]["worst"])
    measured = any(r["name"] == variable and r["computed"] for r in rows)
    r_hat = table["r_hat"].to_numpy(dtype=float)
    ess = table["ess_bulk"].to_numpy(dtype=float)
    if np.nanmax(r_hat, initial=-np.inf) > CONVERGENCE["r_hat"]:
        failed.add("r_hat")
    if np.nanmin(ess, initial=np.inf) < CONVERGENCE["ess_bulk"]:
        failed.add("ess_bulk")
    if not measured and variable in posterior.data_vars:  # the measure's worst items
        severity = convergence_severity({"r_hat": r_hat, "ess_bulk": ess})
        items = posterior[variable].get_index("item")
        for k in np.argsort(-np.nan_to_num(severity, nan=-np.inf))[:N_RANK_PLOTS]:
            if np.isnan(severity[k]):
                continue
            missed = [
                key
                for key, bad in (
                    ("r_hat", r_hat[k] > CONVERGENCE["r_hat"]),
                    ("ess_bulk", ess[k] < CONVERGENCE["ess_bulk"]),
                )
                if bad
            ]
            worst.append(
                {
                    "parameter": f"{variable}[{table.index[k]}]",
                    "variable": variable,
                    "index": [int(items.get_loc(table.index[k]))],
                    "r_hat": float(r_hat[k]),
                    "ess_bulk": float(ess[k]),
                    "ess_tail": math.nan,
                    "severity": float(severity[k]),
                    "missed": missed,
                }
            )
    # as worst_parameters: each variable's worst scalar first, then the next worst
    seen: set[str] = set()
    firsts, rest = [], []
    for w in sorted(worst, key=lambda w: -w["severity"]):
        (rest if w["variable"] in seen else firsts).append(w)
        seen.add(w["variable"])
    worst = firsts + rest[: max(0, N_RANK_PLOTS - len(firsts))]
    # the sampled parameters that the fit's record checked and that missed come first (for
    # a collapsed fit mu and kappa, whose draws the per-item draws follow; the command line's
    # warning names the same one), then the others, each group worst first
    checked = {r["name"] for r in rows if r["checked"]}
    worst.sort(key=lambda w: (not (w["variable"] in checked and w["missed"]), -w["severity"]))
    divergences = max(
        int(convergence["divergences"]), int((standard or {}).get("divergences") or 0)
    )
    if divergences > CONVERGENCE["divergences"]:
        failed.add("divergences")
    failed_list = [k for k in CONVERGENCE if k in failed]
    passed = not failed_list and (standard is None or standard["passed"])
    values = [w for w in worst if w["missed"]] or worst
    record = {
        "passed": passed,
        "failed": failed_list,
        "divergences": divergences,
        "ess_bulk": _nan_worst([w["ess_bulk"] for w in values], largest=False),
        "ess_tail": _nan_worst([w["ess_tail"] for w in values], largest=False),
        "draws": convergence["draws"],
        # what the advice reads besides the failures (convergence_advice): one chain is told
        # to run several, R-hat to tune twice the warm-up the fit had (the fit's record), and
        # the worst parameter's variable may be one the model is known to mix slowly
        "chains": convergence["chains"],
        "tune": standard.get("tune") if standard else None,
        "worst": worst,
        "reason": standard.get("reason") if standard else None,
    }
    model = str(result.attrs.get("model", posterior.attrs.get("model", ""))) or None
    out: dict[str, Any] = {
        "passed": passed,
        "failed": failed_list,
        "divergences": divergences,
        "n_total_draws": convergence["chains"] * convergence["draws"],
        "reason": record["reason"],
        "worst": worst if not passed else [],
        "advice": (
            "" if passed else convergence_advice(record, command_line=command_line, model=model)
        ),
        "limits": dict(CONVERGENCE),
        "fig": None,
    }
    if out["worst"] and convergence["chains"] >= 2:
        draws = {
            w["parameter"]: posterior[w["variable"]]
            .transpose("chain", "draw", ...)
            .values[(slice(None), slice(None), *w["index"])]
            for w in out["worst"][:N_RANK_PLOTS]
        }
        out["fig"] = figure_to_data_uri(figures.plot_parameter_ranks(draws))
    return out


def _agreement(result: Any, table: Any, measure: str) -> dict[str, Any]:
    """The closed-form section: :func:`ambppl.validation.check_moments` for ``measure`` and,
    where items have two proper classes, :func:`ambppl.validation.check_density`."""
    from scipy.stats import norm

    if measure not in MOMENTS:
        return {"available": False}
    try:
        check = check_moments(result, measures=[measure])
    except TooFewDraws as err:  # a closed form, but not these draws: the page says why
        return {"available": False, "reason": " ".join(str(err).split())}
    except NotApplicable:  # no closed form for this model
        return {"available": False}
    except ValueError as err:  # draws the check cannot read (non-finite, other items)
        return {"available": False, "error": " ".join(str(err).split())}
    rows = check.table
    z_all = rows["z"].to_numpy(dtype=float)
    finite = ~np.isnan(z_all)  # the tests Holm counts (an infinite z is one, flagged)
    if not finite.any():
        return {"available": False}
    means = rows[rows["moment"] == "mean"]
    z_mean = means["z"].to_numpy(dtype=float)
    m = int(finite.sum())
    az = np.abs(z_all[finite])
    sd_ratio = (table["sd"] / table["exact_sd"]).to_numpy(dtype=float)
    ratio = sd_ratio[np.isfinite(sd_ratio)]
    # Two-sided tail probabilities of N(0, 1): how many |z| beyond 3 (4) chance alone gives.
    p3, p4 = 2 * norm.sf(3.0), 2 * norm.sf(4.0)
    worst = rows.reindex(rows["z"].abs().sort_values(ascending=False).index[:5])
    density = None
    if "exact_mean" in table.columns and measure in ("amb", "modified", "old"):
        try:
            dens = check_density(result, measures=[measure])
        except NotApplicable:
            dens = None
        if dens is not None and len(dens.table):
            density = {
                "ok": dens.passed,
                "n": len(dens.table),
                "max_d": dens.statistic,
                "p_value": dens.p_value,
                "n_flagged": dens.n_flagged,
                "fig": figure_to_data_uri(dens.plot(n_items=3)),
            }
    return {
        "available": True,
        "description": check.description,
        "n": int(np.isfinite(z_mean).sum()),
        "n_tests": m,
        "moments": ", ".join(MOMENTS[measure]),
        "max_abs_z": float(az.max()),
        # Holm's first step: the largest |z| among m tests is flagged beyond this.
        "z_crit": float(norm.isf(check.level / 2 / m)),
        "level": check.level,
        "ok": check.passed,
        "n_flagged": check.n_flagged,
        "n_above_3": int((az > 3).sum()),
        "expected_above_3": float(m * p3),
        "n_above_4": int((az > 4).sum()),
        "expected_above_4": float(m * p4),
        "mean_z": float(np.nanmean(z_mean)),
        "sd_z": float(np.nanstd(z_mean, ddof=1)) if np.isfinite(z_mean).sum() > 1 else math.nan,
        "sd_ratio_median": float(np.median(ratio)) if ratio.size else math.nan,
        "sd_ratio_min": float(ratio.min()) if ratio.size else math.nan,
        "sd_ratio_max": float(ratio.max()) if ratio.size else math.nan,
        "worst": [
            {
                "item": r.item,
                "moment": r.moment,
                "mean": r.estimate,
                "exact_mean": r.reference,
                "mcse": r.mcse,
                "z": r.z,
            }
            for r in worst.itertuples()
            if np.isfinite(r.z)
        ],
        "fig_z": figure_to_data_uri(figures.plot_zscores(z_all)),
        "density": density,
    }


def _raters(result: Any, hdi_prob: float | None) -> dict[str, Any] | None:
    """The rater section (fits with rater effects ``b``): ``summarize(level="rater")``; None
    for models without raters.

    With a can't-solve category: ranked by the can't-solve odds ratio, over-users first.
    Without one: ranked by label bias (strongest first): the favoured label, the label bias
    (posterior mean of the largest logit bias of a proper category over the rater's mean
    over them, :func:`ambppl.analysis.raters.summarize_raters`'s ``label_bias``) and its HDI
    (:func:`arviz.hdi` of the same per-draw quantity).
    """
    post = result["posterior"]
    if "b" not in post.data_vars and {"accuracy", "confusion"} <= set(post.data_vars):
        return _class_raters(result, hdi_prob)
    if "b" not in post.data_vars:
        return None
    import arviz as az

    table = summarize_raters(result, hdi_prob=hdi_prob)
    post = result["posterior"]
    attrs = {**post.attrs, **result.attrs}
    cs = cant_solve_index(result, attrs, observed_counts(result))
    b = post["b"].transpose("chain", "draw", "rater", "category")
    proper = [k for k in range(b.sizes["category"]) if k != cs]
    bp = b.isel(category=proper)
    strength = (bp - bp.mean("category")).max("category")  # label_bias per draw
    hdi = az.hdi(strength, prob=table.attrs["hdi_prob"], dim=["chain", "draw"])
    hdi = hdi.transpose("rater", "ci_bound").to_pandas()
    table = table.assign(
        bias_lower=hdi["lower"].reindex(table.index).to_numpy(),
        bias_upper=hdi["upper"].reindex(table.index).to_numpy(),
    )
    if cs is None:
        table = table.sort_values("label_bias", ascending=False, na_position="last")
    else:
        table = table.sort_values(
            ["overuses_cant_solve", "cant_solve_odds_ratio"], ascending=False, na_position="last"
        )
    rows = [
        {
            "rater": rater,
            "n": row.n_answers,
            "odds": row.cant_solve_odds_ratio,
            "lower": row.cant_solve_or_lower,
            "upper": row.cant_solve_or_upper,
            "p_over": row.p_overuse,
            "over": bool(row.overuses_cant_solve),
            "favoured": row.favoured_label,
            "bias": row.label_bias,
            "bias_lower": row.bias_lower,
            "bias_upper": row.bias_upper,
        }
        for rater, row in zip(table.index, table.itertuples(index=False), strict=True)
    ]
    return {
        "rows": rows,
        "n": len(rows),
        "n_over": int(table["overuses_cant_solve"].sum()),
        "hdi_prob": table.attrs["hdi_prob"],
        "cant_solve": cs is not None,
        "accuracy": False,
    }


def _class_raters(result: Any, hdi_prob: float | None) -> dict[str, Any]:
    """The rater section of a latent-class fit (``dawid_skene``): each rater's accuracy (the
    probability of answering the true class) and can't-solve rate with their HDIs, from
    :func:`ambppl.analysis.raters.summarize_raters`; least accurate first (whom to check)."""
    table = summarize_raters(result, hdi_prob=hdi_prob).sort_values("accuracy")
    rows = [
        {
            "rater": rater,
            "n": row.n_answers,
            "accuracy": row.accuracy,
            "lower": row.accuracy_lower,
            "upper": row.accuracy_upper,
            "cs_rate": row.cant_solve_rate,
            "cs_lower": row.cant_solve_lower,
            "cs_upper": row.cant_solve_upper,
        }
        for rater, row in zip(table.index, table.itertuples(index=False), strict=True)
    ]
    return {
        "rows": rows,
        "n": len(rows),
        "hdi_prob": table.attrs["hdi_prob"],
        "cant_solve": bool(table["cant_solve_rate"].notna().any()),
        "accuracy": True,
    }


def _sensitivity(
    result: Any,
    table: Any,
    *,
    top: int,
    priors: Sequence[float] | None,
    measure: str,
    hdi_prob: float | None,
    threshold: float,
    random_seed: Any,
) -> dict[str, Any]:
    """The top items' posterior under other priors: :func:`ambppl.prior_sensitivity`
    rendered (mean, HDI and P(measure > ``threshold``) under each prior).

    A fit with one fixed prior: the top items refitted exactly under each symmetric prior in
    ``priors`` (default :data:`SENSITIVITY_PRIORS`) by :func:`ambppl.prior_sensitivity`
    (:data:`REFIT_CHAINS` chains of the fit's draws, at most :data:`MAX_REFIT_DRAWS`). A
    learned-prior fit (``mu`` and ``kappa`` in the posterior): the fit's own summaries
    (``table``) next to those refits under the symmetric priors ``priors`` (default
    :data:`LEARNED_COMPARISON`). Other fits: not available. ``table`` (the ranked summary of
    the fit) is the sensitivity table's shape too: index the items, columns (prior label,
    statistic), drawn by :func:`ambppl.report.figures.plot_prior_sensitivity`.
    """

    import pandas as pd

    ids = list(table.index[:top])
    learned = _is_learned(result)
    if not learned and _fixed_prior(result) is None:
        model = str(result.attrs.get("model", ""))
        return {
            "available": False,
            "reason": f"the fit of model {model!r} has neither one fixed Dirichlet prior of "
            "every item's q (attrs['prior']) nor a learned prior (mu and kappa in the "
            "posterior), so there is no prior to compare with symmetric priors",
        }
    if not _model_info("dirichlet_categorical"):
        return {
            "available": False,
            "reason": "the symmetric priors are refitted with the catalog model "
            "'dirichlet_categorical', which this catalog lacks",
        }
    if priors is None:
        priors = LEARNED_COMPARISON if learned else SENSITIVITY_PRIORS
    priors = list(dict.fromkeys(float(b) for b in priors))  # one column per prior
    counts = result["observed_data"]["counts"]
    subset = counts.sel(item=ids)
    subset.attrs = dict(counts.attrs)
    draws = min(int(result["posterior"].sizes["draw"]), MAX_REFIT_DRAWS)
    refits = prior_sensitivity(
        subset,
        priors,
        measure=measure,
        hdi_prob=hdi_prob,
        threshold=threshold,
        draws=draws,
        chains=REFIT_CHAINS,
        random_seed=random_seed,
    )
    # each prior as given (0.25, 1.0, 0.1234567: never rounded, so 0.25 and 0.2 stay apart)
    labels = [f"prior {_given(b)}" for b in priors]
    legend = list(labels)
    if learned:
        own = table.loc[ids, ["mean", "hdi_lower", "hdi_upper", "p_above"]]
        refits = pd.concat(
            {"learned prior": own, **{p: refits[p] for p in refits.columns.unique(0)}},
            axis=1,
            names=refits.columns.names,
        )
        labels.insert(0, "learned prior")
        legend = ["learned prior", *(f"β = {_given(b)}" for b in priors)]
    refits = refits.loc[ids]
    columns = list(refits.columns.unique(0))
    means = np.column_stack([refits[(c, "mean")].to_numpy(dtype=float) for c in columns])
    spread = means.max(axis=1) - means.min(axis=1) if len(ids) else np.zeros(0)
    rows = [
        {
            "item": item,
            "by_prior": [
                {
                    "mean": float(refits[(c, "mean")].iloc[k]),
                    "lower": float(refits[(c, "hdi_lower")].iloc[k]),
                    "upper": float(refits[(c, "hdi_upper")].iloc[k]),
                    "p_above": float(refits[(c, "p_above")].iloc[k]),
                }
                for c in columns
            ],
            "spread": float(spread[k]),
        }
        for k, item in enumerate(ids)
    ]
    return {
        "available": True,
        "learned": learned,
        "priors": priors,
        "labels": labels,
        "rows": rows,
        "max_spread": float(spread.max()) if len(ids) else float("nan"),
        "draws": draws,
        "chains": REFIT_CHAINS,
        "table": refits,
        "fig": figure_to_data_uri(
            figures.plot_prior_sensitivity(refits, measure=measure, labels=legend)
        ),
    }


def _learned_prior(
    result: Any,
    table: Any,
    *,
    measure: str,
    hdi_prob: float,
    random_seed: Any,
) -> dict[str, Any] | None:
    """The learned prior of a fit with ``mu`` and ``kappa``: their posterior, the implied
    prior of the measure against symmetric priors, and the shrinkage against beta = 1.

    Returns None for a fit without ``mu`` and ``kappa``.
    """

    if not _is_learned(result):
        return None
    rng = np.random.default_rng(random_seed)
    learned = implied_prior(
        result,
        measure=measure,
        hdi_prob=hdi_prob,
        comparison=LEARNED_COMPARISON,
        draws=N_PRIOR_DRAWS,
        random_seed=rng,
    )
    counts = result["observed_data"]["counts"]

    # shrinkage: posterior means under beta = 1 in closed form (no Monte Carlo error) against
    # those under the learned prior (the item table's means)
    import pandas as pd

    values, cs = count_values(counts)
    flat = pd.Series(
        np.asarray(dirichlet_mean(values + 1.0, measure, cant_solve=cs), dtype=float),
        index=pd.Index(counts["item"].values, name="item"),
    ).reindex(table.index)
    flat_mean = flat.to_numpy(dtype=float)
    learned_mean = table["mean"].to_numpy(dtype=float)
    change = learned_mean - flat_mean
    finite = np.isfinite(change)
    largest = int(np.argmax(np.where(finite, np.abs(change), -np.inf))) if finite.any() else 0
    return {
        **learned,
        "sensitivity": _hyperprior(table),
        "fig_implied": figure_to_data_uri(
            figures.plot_implied_prior(learned["samples"], learned["measure"])
        ),
        "shrinkage": {
            "median_abs_change": float(np.median(np.abs(change[finite])))
            if finite.any()
            else float("nan"),
            "mean_change": float(np.mean(change[finite])) if finite.any() else float("nan"),
            "largest_item": table.index[largest],
            "largest_change": float(change[largest]),
            "largest_flat": float(flat_mean[largest]),
            "largest_learned": float(learned_mean[largest]),
            "largest_answers": table["n_answers"].iloc[largest],
            "n_lower": int(np.sum(change[finite] < 0)),
            "n_higher": int(np.sum(change[finite] > 0)),
            "fig": figure_to_data_uri(figures.plot_shrinkage(flat_mean, learned_mean, measure)),
        },
    }


def render_report(
    result: Any,
    *,
    measure: str = "amb",
    hdi_prob: float | None = None,
    threshold: float = 0.4,
    top: int = 15,
    priors: Sequence[float] | None = None,
    random_seed: Any = None,
    command: str | None = None,
    title: str | None = None,
    max_rows: int = TABLE_ROWS,
    source: str | None = None,
    progress: Callable[[str], None] | None = None,
    fit_warnings: Sequence[Any] | None = None,
) -> str:
    """Render the HTML diagnostics report of a fit.

    Parameters
    ----------
    result : xarray.DataTree
        The result of :func:`ambppl.fit` of any catalog model and method (groups
        ``posterior``, ``observed_data`` and, for NUTS, ``sample_stats``).
    measure : str, default "amb"
        The ambiguity measure summarized (one of :data:`ambppl.MEASURES`).
    hdi_prob : float, optional
        Mass of the highest-density intervals (default: :func:`ambppl.summarize`'s).
    threshold : float, default 0.4
        The table shows P(measure > threshold) per item.
    top : int, default 15
        Items listed with their answer counts and refitted in the prior-sensitivity section.
    priors : sequence of float, optional
        Symmetric Dirichlet concentrations compared in the prior-sensitivity section.
        Default: :data:`SENSITIVITY_PRIORS` (0.5, 1, 2) for a fit with one fixed prior,
        :data:`LEARNED_COMPARISON` (0.5, 1) for a learned prior.
    random_seed : int, optional
        Seed of the prior-sensitivity refits and of the learned-prior figures.
    command : str, optional
        The command line that produced the report, shown in its header.
    title : str, optional
        Page title (default: "ambppl report: <source>").
    max_rows : int, default TABLE_ROWS
        Rows of the sortable item table: the ``max_rows`` most ambiguous items (the page
        says how many were left out; :func:`ambppl.score` or ``ambppl score`` writes every
        row).
    source : str, optional
        The name of the data (a file name) in the title and the data overview; default the
        counts' ``attrs["source"]`` (which is ``"DataFrame"`` for a model fitted to one row
        per answer from a data frame: ``ambppl report`` passes the file it read).
    progress : callable, optional
        Called with one line (e.g. ``"summarizing 11040 items"``) as each long step starts;
        ``ambppl report`` prints them on stderr unless ``--quiet``.
    fit_warnings : sequence, optional
        The warnings the fit raised: the list that ``warnings.catch_warnings(record=True)``
        records around :func:`ambppl.fit`, or :class:`Warning` objects or their texts.
        Default: those the result keeps (:func:`ambppl.fit` writes them to
        ``attrs["fit_warnings"]``, saved with the result; none for a result without it). The
        page's first section lists them, with the warnings raised while the report is built.

    Returns
    -------
    str
        One self-contained HTML document.

    Raises
    ------
    ValueError
        For an unknown ``measure``, a bad ``hdi_prob`` or ``threshold`` (from
        :func:`ambppl.summarize`) or a non-positive ``top`` or ``max_rows``.
    TypeError
        If ``result`` is not a fit result, or ``fit_warnings`` is not a list of warnings
        or texts.

    Warns
    -----
    Warning
        Each warning raised while the report is built, once, after the page is drawn (the
        page lists it too); and one ``UserWarning`` for the characters the figures cannot
        draw (below).

    Notes
    -----
    The page opens with the section "Read this first", before any table, for every kind of
    fit: one line on whether the draws can be trusted (exact draws; draws of the Laplace
    approximation; one point, the posterior mode; or, after NUTS, the verdict below), then
    one line each for what limits trust in the numbers: every warning of the fit
    (``fit_warnings``) and of the report's own computations, each once in its own words
    (the :class:`ambppl.ConvergenceWarning` about a missed standard is the verdict itself
    and is not repeated; any other, e.g. a model's design warning, is listed, whether or not
    the fit converged), the hyperparameters whose posterior moves with their prior as
    :func:`ambppl.hyperprior_sensitivity` diagnoses them (for a fit with a ``log_prior``
    group: the data do not pin them down, "weak likelihood"; the data pull against their
    prior, "prior-data conflict"; or, without a likelihood sensitivity, which of the two is
    not known) and a check of the draws against the closed forms that failed, stopped or
    could not run on these draws (but for one point, whose first line says it has none),
    each with a link to the section that has the details. Where one of them applies, the
    first line does not read as a plain success ("The fit met the convergence standard
    ..., but:").

    A NUTS fit first gets its verdict, before any estimate: whether it met the convergence
    standard :data:`ambppl.inference.convergence.CONVERGENCE` on every diagnosed variable
    (hyperparameters included), on every item's measure and on divergences, agreeing with
    the fit's own record. When it did not, that first section names the parameters furthest
    from the standard (:func:`ambppl.inference.convergence.worst_parameters`) with their rank plots
    (:func:`arviz_plots.plot_rank`) and the advice that fits the failure
    (:func:`ambppl.inference.convergence.convergence_advice`: reparameterize or raise
    ``target_accept`` for divergences, tune longer for R-hat, draw more for ESS; the
    command line's options when ``command`` is given), and every later section that shows
    estimates says that they come from an unconverged fit (the learned prior's kappa and
    beta lose their bold face).

    Sections: read this first (above); data overview; model and prior (with the
    hyperparameters' prior sensitivity for a fit with a ``log_prior`` group but no learned
    prior, e.g. ``dawid_skene``); convergence (R-hat, ESS, divergences and rank
    plots of the items with the largest R-hat for NUTS, or the statement that the draws are
    exact); agreement of the posterior means with the closed-form means (z-scores against
    the Monte Carlo standard error ``sd / sqrt(ESS)``, paper section 3 and the docs page
    maths/errata for the moments; :func:`ambppl.validation.check_moments` and
    :func:`ambppl.validation.check_density`); the distribution of item ambiguity; the
    sortable ranked item table; the most ambiguous items with their answer counts (for a
    latent-class fit, ``dawid_skene``, both tables also show each item's ``label`` and
    ``label_prob``, the ranked one its ``label_entropy`` too, as :func:`ambppl.summarize`
    gives them, with header help saying what they are); the
    sensitivity to the prior (:func:`ambppl.prior_sensitivity` of the ``top`` items:
    posterior mean and HDI under each prior). The convergence
    section opens with whether the fit met the standard
    :data:`ambppl.inference.convergence.CONVERGENCE` (``attrs["convergence"]``, written by
    :func:`ambppl.fit` after NUTS). A learned-prior fit
    (``mu`` and ``kappa`` in the posterior, e.g. ``hierarchical_dirichlet``) adds the section
    "Learned prior": posterior mean and HDI (:func:`arviz.hdi`) of ``mu`` per category, of
    ``kappa`` and of the implied symmetric ``beta = kappa / K``; the implied prior of the
    measure (``q ~ Dirichlet(kappa * mu)`` for posterior draws of ``(mu, kappa)``) next to the
    symmetric priors 0.5 and 1; and the shrinkage plot of every item's posterior mean under
    ``beta = 1`` (closed form, :func:`ambppl.dirichlet_mean`) against the learned prior. Its prior
    sensitivity compares the learned prior with exact refits under ``beta`` = 0.5 and 1.
    Every value that comes from the data is escaped by Jinja2's autoescaping, and its
    control characters are written as escapes (``\\t``, ``\\x01``), as in the figures
    (:func:`ambppl.report.figures.visible`). Characters of
    labels or ids that the figure font lacks (CJK, emoji) are drawn as empty boxes and
    named in one ``UserWarning`` for the page (matplotlib would warn per figure and
    character); control characters are drawn as their escapes. Every figure is drawn by a
    public function of :mod:`ambppl.report.figures` that returns a
    :class:`matplotlib.figure.Figure` (a notebook can call it to show the same figure) and
    embedded with :func:`ambppl.report.figures.figure_to_data_uri`.

    The convergence section of a NUTS fit (method ``"nuts"`` or ``"collapsed"``) shows every
    diagnostic that applies:

    * the ranked measure per item: largest R-hat, smallest bulk ESS, divergent transitions
      and rank plots of the items with the largest R-hat;
    * every stored posterior variable, hyperparameters included (``sigma_item``,
      ``sigma_rater``, ``mu``, rater effects ``b``, ...): a table of its worst R-hat and
      smallest bulk and tail ESS over its scalars, passed or missed against
      :data:`ambppl.inference.convergence.CONVERGENCE`, the variables the fit's own record checked
      marked ``*`` (computed as :func:`ambppl.inference.convergence.check_convergence` does; other
      variables are diagnosed while their draws fit in :data:`MAX_DIAGNOSED_VALUES`);
    * energy, where ``sample_stats`` has ``energy``: E-BFMI per chain
      (:func:`arviz_stats.bfmi`, ``sum(diff(E)**2) / sum((E - mean(E))**2)``), flagged below
      :data:`BFMI_THRESHOLD` (0.3), and the energy plot (marginal energy against energy
      transitions); otherwise a note says what is missing;
    * tree depth, where stored (PyMC: ``tree_depth``, ``n_steps``, ``reached_max_treedepth``;
      nutpie: ``depth``, ``n_steps``, ``maxdepth_reached``): mean and largest depth and
      steps, and the draws that hit the maximum depth.

    "No convergence problems found" needs all of them (draws at the maximum depth cost
    efficiency only and do not count). Exact (independent) draws get the statement that no
    MCMC diagnostics apply, with no energy or tree-depth part.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       sections 3-4.
    .. [2] Vehtari et al. (2021), "Rank-normalization, folding, and localization: an
       improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).
    .. [3] Betancourt (2016), "Diagnosing suboptimal cotangent disintegrations in
       Hamiltonian Monte Carlo", arXiv:1604.00695 (E-BFMI, energy plot).

    Examples
    --------
    >>> import ambppl
    >>> from ambppl.data import example_path
    >>> counts = ambppl.read_annotations(example_path("weather_sentiment"),
    ...                                  cant_solve="I can't tell")
    >>> result = ambppl.fit(counts, draws=200, chains=2, random_seed=1)
    >>> page = render_report(result, top=5, random_seed=1)
    >>> page.startswith("<!DOCTYPE html>"), 'id="items"' in page, "http://" in page
    (True, True, False)
    """
    import xarray as xr

    if not isinstance(result, xr.DataTree) or "posterior" not in result.children:
        raise TypeError(
            "result must be the DataTree returned by ambppl.fit (with a 'posterior' group), "
            f"but got {type(result).__name__}"
        )
    top = check_positive_int(top, "top")
    max_rows = check_positive_int(max_rows, "max_rows")
    given = _check_fit_warnings(fit_warnings) if fit_warnings is not None else _kept(result)
    with collecting_warnings() as raised:
        if check_progress(progress) is not None:
            progress(f"summarizing {result['posterior'].sizes.get('item', 0)} items")
        table = rank(summarize(result, measure=measure, hdi_prob=hdi_prob, threshold=threshold))
        return _render(
            result,
            table,
            result["observed_data"]["counts"],
            warned=(given, raised),
            measure=measure,
            hdi_prob=hdi_prob,
            threshold=threshold,
            top=top,
            priors=priors,
            random_seed=random_seed,
            command=command,
            title=title,
            max_rows=max_rows,
            source=source,
            progress=progress,
        )


def _render(
    result: Any,
    table: Any,
    counts: Any,
    *,
    warned: Sequence[Sequence[Any]] = (),
    **settings: Any,
) -> str:
    """Fill the template with :func:`_render_page`'s numbers and the warnings of ``warned``
    (lists, read when the numbers are done: those of the fit, and the list of
    :func:`ambppl.internal.warned.collecting_warnings` of the caller), with one warning for
    the characters its figures cannot draw (matplotlib gives one per figure and character,
    with a source line), attributed to the caller of :func:`render_report` or
    :func:`ambppl.report.score_report`."""

    with figures.missing_glyphs() as missing:
        context = _render_page(result, table, counts, **settings)
    top = context["read_first"]
    top["warnings"] = _warning_lines(
        [w for raised in warned for w in raised], record=context["standard"] is not None
    )
    top["shown"] = bool(top["warnings"] or top["findings"])
    page = _environment().get_template(_TEMPLATE).render(**context)
    if missing:
        warnings.warn(figures.missing_glyphs_message(missing), UserWarning, stacklevel=3)
    return page


def _label_cells(table: Any, k: int) -> dict[str, Any]:
    """The class posterior of row ``k`` (by position) of :func:`ambppl.summarize`'s table of
    a latent-class fit (``dawid_skene``), as the table holds it: ``label`` (the most probable
    class), ``label_prob`` (its posterior probability) and ``label_entropy`` (the normalized
    entropy of the class posterior)."""
    return {name: table[name].iloc[k] for name in ("label", "label_prob", "label_entropy")}


def _render_page(
    result: Any,
    table: Any,
    counts: Any,
    *,
    measure: str,
    hdi_prob: float | None,
    threshold: float,
    top: int,
    priors: Sequence[float] | None,
    random_seed: Any,
    command: str | None,
    title: str | None,
    max_rows: int,
    checked: Any = None,
    scored: dict[str, Any] | None = None,
    source: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The template's numbers and figures. ``table`` is the ranked table of every item and
    ``counts`` their counts; ``result`` holds the draws, of every item or (``checked``, its
    own summary table) of a subset, which the convergence and closed-form sections then
    diagnose. ``scored`` describes a table from :func:`ambppl.score` (see
    :func:`ambppl.report.score_report`). ``read_first`` (the first section) holds the kind of
    draws and the findings; :func:`_render` adds the warnings."""

    if checked is None:
        checked = table
    say = progress or (lambda message: None)
    variable = VARIABLES.get(measure, measure)
    say("drawing the data overview")
    overview = _overview(counts, source)
    say("diagnosing convergence (R-hat, ESS of every stored variable)")
    convergence = _convergence(result, checked, variable)
    standard = _standard(result)
    verdict = _verdict(
        result, checked, convergence, standard, variable, command_line=command is not None
    )
    say("checking the draws against the closed forms")
    agreement = _agreement(result, checked, measure)
    say("refitting the top items under other priors")
    top_n = min(top, len(table))
    sensitivity = _sensitivity(
        result,
        table,
        top=top_n,
        priors=priors,
        measure=measure,
        hdi_prob=table.attrs.get("hdi_prob", hdi_prob),
        threshold=threshold,
        random_seed=random_seed,
    )
    hyper = _hyperprior(table)
    if _is_learned(result):
        say("summarizing the learned prior")
    learned = _learned_prior(
        result,
        table,
        measure=str(table.attrs["measure"]),
        hdi_prob=float(table.attrs["hdi_prob"]),
        random_seed=random_seed,
    )
    labels = [str(c) for c in counts["category"].values]
    top_ids = list(table.index[:top_n])
    # a latent-class model's (dawid_skene) class posterior: summarize's label columns
    has_labels = "label_prob" in table.columns
    top_counts = counts.sel(item=top_ids).values
    top_rows = [
        {
            "rank": k + 1,
            "item": item,
            "counts": [int(c) for c in top_counts[k]],
            "n": int(top_counts[k].sum()),
            "mean": table["mean"].iloc[k],
            "lower": table["hdi_lower"].iloc[k],
            "upper": table["hdi_upper"].iloc[k],
            "p_above": table["p_above"].iloc[k],
            **(_label_cells(table, k) if has_labels else {}),
        }
        for k, item in enumerate(top_ids)
    ]
    shown = table.iloc[:max_rows]
    item_rows = [
        {
            "rank": k + 1,
            "item": item,
            "n_answers": row.n_answers,
            "cs_share": row.cs_share,
            "plugin": row.plugin,
            "less_biased": row.less_biased,
            "mean": row.mean,
            "sd": row.sd,
            "lower": row.hdi_lower,
            "upper": row.hdi_upper,
            "p_above": row.p_above,
            "r_hat": getattr(row, "r_hat", None),
            "ess": getattr(row, "ess_bulk", None),
            **(_label_cells(shown, k) if has_labels else {}),
        }
        for k, (item, row) in enumerate(
            zip(shown.index, shown.itertuples(index=False), strict=True)
        )
    ]
    prior = _fixed_prior(result) or []
    model_name = str(result.attrs.get("model", ""))
    info = _model_info(model_name)
    p_above = table["p_above"].to_numpy(dtype=float)
    context = {
        "title": title or f"ambppl report: {overview['source']}",
        "version": __version__,
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        # the page's advice names the command's options (--method nuts) where it comes from
        # the command line, Python's keywords (method="nuts") otherwise, as the verdict's
        "command_line": command is not None,
        # one point (method="map"): estimates at the posterior mode, without intervals
        "point_estimate": convergence["exact"] and convergence.get("kind") == "map",
        "measure": measure,
        "variable": variable,
        "threshold": threshold,
        "hdi_prob": table.attrs.get("hdi_prob", hdi_prob),
        "model": {
            "name": model_name,
            "description": str(info.get("description", "")),
            "method": convergence["method"],
            "methods": [str(m) for m in info.get("methods", [])],
            "parameters": _parameters(result),
            "sampler": str(result.attrs.get("sampler", "")),
            "kind": "learned" if learned is not None else ("fixed" if prior else "other"),
            "prior": [{"label": lab, "value": p} for lab, p in zip(labels, prior, strict=False)],
            "symmetric": len(set(prior)) == 1,
            "prior_value": prior[0] if prior else None,
        },
        "overview": overview,
        "convergence": convergence,
        "standard": standard,
        "verdict": verdict,
        "unconverged": verdict is not None and not verdict["passed"],
        "learned": learned,
        "raters": _raters(result, table.attrs.get("hdi_prob", hdi_prob)),
        "agreement": agreement,
        "distribution": {
            "fig": figure_to_data_uri(
                figures.plot_ambiguity_histogram(
                    table["mean"].to_numpy(dtype=float),
                    table["plugin"].to_numpy(dtype=float),
                    measure,
                    threshold,
                )
            ),
            # None for one point (method="map"): it has no posterior probabilities
            "n_above": int(np.sum(p_above > 0.5)) if np.isfinite(p_above).any() else None,
            "n_confident": int(np.sum(p_above > 0.9)),
            "median": float(np.median(table["mean"].to_numpy(dtype=float))),
        },
        "has_mcmc_columns": "r_hat" in table.columns,
        "has_labels": has_labels,
        "items": item_rows,
        "n_items": len(table),
        "scored": scored,
        "labels": labels,
        "top_rows": top_rows,
        "sensitivity": sensitivity,
        "hyper": hyper,
        "read_first": {
            "kind": convergence["kind"] if convergence["exact"] else "nuts",
            "findings": _findings(
                hyper,
                learned is not None,
                agreement,
                measure,
                point=convergence["exact"] and convergence.get("kind") == "map",
            ),
        },
    }
    return context
