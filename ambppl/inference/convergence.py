"""The convergence standard of MCMC fits: one record per fit, a warning when it is missed.

``fit`` checks every NUTS-based fit against :data:`CONVERGENCE` (Vehtari et al. 2021's
recommendations: rank-normalized R-hat <= 1.01, bulk and tail ESS >= 400, and no divergent
transitions), records the worst values and the worst parameters in ``attrs["convergence"]``
(JSON) and warns with :class:`ConvergenceWarning`, naming the worst parameter and the advice
that fits the failure (:func:`convergence_advice`); the report shows the record. Validation
and simulation scripts call :func:`check_convergence` on their own traces.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ambppl.inference.catalog import get_model
from ambppl.inference.diagnostics import diagnose

__all__ = [
    "CONVERGENCE",
    "ConvergenceWarning",
    "check_convergence",
    "convergence_advice",
    "convergence_message",
    "describe_parameter",
    "stored_record",
    "worst_parameters",
]

#: The convergence standard: worst R-hat, smallest bulk and tail ESS, and the number of
#: divergent transitions allowed.
CONVERGENCE = {"r_hat": 1.01, "ess_bulk": 400, "ess_tail": 400, "divergences": 0}

#: Parameters (scalars of the posterior variables) named in the record, worst first.
N_WORST = 6


class ConvergenceWarning(UserWarning):
    """An MCMC fit missed the convergence standard :data:`CONVERGENCE`.

    Parameters
    ----------
    message : str
        The warning's text (:func:`convergence_message`).
    record, what, model
        As the attributes below.

    Attributes
    ----------
    record : dict or None
        The record of :func:`check_convergence` as stored (worst values, ``failed``,
        ``worst`` parameters; a NaN or infinite number as None), so that a caller can word
        its own advice (the command line names its options: :func:`convergence_message`
        with ``command_line=True``).
    what : str
        How the message names the fit.
    model : str or None
        The catalog model, for the advice.
    """

    def __init__(
        self,
        message: str,
        record: Mapping[str, Any] | None = None,
        what: str = "the fit",
        model: str | None = None,
    ) -> None:
        super().__init__(message)
        self.record = None if record is None else dict(record)
        self.what = what
        self.model = model


def _diagnose(values: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`diagnose` of one variable, with every scalar that has a non-finite draw
    marked as missing the standard (R-hat inf, ESS 0): its diagnostics would be NaN, which
    no limit flags."""
    diag = dict(diagnose(values))
    bad = ~np.isfinite(values).all(axis=(0, 1))
    if bad.any():
        for key, value in (("r_hat", np.inf), ("ess_bulk", 0.0), ("ess_tail", 0.0)):
            diag[key] = np.where(bad, value, np.asarray(diag[key], dtype=float))
    return diag


def _extreme(diag: Mapping[str, Mapping[str, np.ndarray]], key: str, pick: Any) -> float:
    """The largest (``np.max``) or smallest (``np.min``) known value of one diagnostic over
    every scalar of every variable, NaN (no value known: a constant variable, one chain's
    R-hat) left out whatever the variables' order; NaN where none is known."""
    values = np.concatenate([np.ravel(np.asarray(d[key], dtype=float)) for d in diag.values()])
    values = values[~np.isnan(values)]
    return float(pick(values)) if values.size else float("nan")


#: The diagnostics of the record whose extreme :func:`check_convergence` locates
#: (``record["extremes_at"]``), with the end that is worst.
EXTREMES = (("r_hat", "largest"), ("ess_bulk", "smallest"), ("ess_tail", "smallest"))


def _extremes_at(posterior: Any, diag: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, str]:
    """The parameter (``name[coord]``) that holds the record's extreme of each diagnostic of
    :data:`EXTREMES`: the largest R-hat, the smallest bulk and tail ESS (NaN left out, the
    first variable in order on a tie); a diagnostic known for no scalar is left out."""
    out = {}
    for key, end in EXTREMES:
        best: tuple[float, str, tuple[int, ...]] | None = None
        for name, d in diag.items():
            if key not in d:
                continue
            values = np.asarray(d[key], dtype=float)
            flat = np.atleast_1d(values).ravel()
            if np.isnan(flat).all():
                continue
            signed = flat if end == "largest" else -flat
            i = int(np.nanargmax(signed))
            if best is None or signed[i] > best[0]:
                index = tuple(int(j) for j in np.unravel_index(i, np.shape(values)))
                best = (float(signed[i]), name, index)
        if best is not None:
            out[key] = _label(best[1], posterior[best[1]], best[2])
    return out


def convergence_severity(diag: Mapping[str, np.ndarray]) -> np.ndarray:
    """How far each scalar is from :data:`CONVERGENCE`: the largest of ``(R-hat - 1) /
    0.01``, ``400 / bulk ESS`` and ``400 / tail ESS`` (above 1: missed); NaN where no
    diagnostic is known (fewer than 2 chains leave R-hat out)."""
    parts = []
    with np.errstate(divide="ignore", invalid="ignore"):
        if "r_hat" in diag:
            parts.append((np.asarray(diag["r_hat"], float) - 1) / (CONVERGENCE["r_hat"] - 1))
        for key in ("ess_bulk", "ess_tail"):
            if key in diag:
                ess = np.asarray(diag[key], float)
                parts.append(np.where(ess > 0, CONVERGENCE[key] / ess, np.inf))
    stacked = np.stack(np.broadcast_arrays(*parts))
    known = ~np.isnan(stacked)
    worst = np.where(known, stacked, -np.inf).max(axis=0)
    return np.where(known.any(axis=0), worst, np.nan)


def _label(name: str, da: Any, index: tuple[int, ...]) -> str:
    """``name[coord, ...]`` of one scalar of a variable (dims after chain and draw)."""
    if not index:
        return name
    dims = [d for d in da.dims if d not in ("chain", "draw")]
    parts = []
    for dim, i in zip(dims, index, strict=True):
        value = da[dim].values[i] if dim in da.coords else i
        parts.append(str(value.item() if hasattr(value, "item") else value))
    return f"{name}[{', '.join(parts)}]"


def worst_parameters(
    posterior: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]], n: int = N_WORST
) -> list[dict[str, Any]]:
    """The ``n`` scalars furthest from :data:`CONVERGENCE` over all diagnosed variables.

    Parameters
    ----------
    posterior : xarray.Dataset or DataTree node
        The posterior (for the variables' coordinates).
    diagnostics : mapping of str to mapping of str to numpy.ndarray
        Per variable, its ``r_hat``, ``ess_bulk`` and ``ess_tail`` per scalar (shape: the
        variable's dims after ``chain`` and ``draw``), as
        :func:`ambppl.inference.diagnostics.diagnose` returns them.
    n : int, default N_WORST
        How many to return.

    Returns
    -------
    list of dict
        The worst scalar of each variable (so that a hyperparameter is not crowded out by
        thousands of per-item scalars), then the next worst scalars while fewer than ``n``;
        worst first: ``parameter`` (e.g. ``"sigma_item[yes]"``), ``variable``, ``index``
        (positions along the variable's dims after chain and draw), ``r_hat``,
        ``ess_bulk``, ``ess_tail``, ``severity`` (the largest of ``(R-hat - 1) / 0.01``,
        ``400 / bulk ESS`` and ``400 / tail ESS``: above 1 misses the standard) and
        ``missed`` (the limits missed). Scalars without any known diagnostic are left out.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from ambppl.inference.diagnostics import diagnose
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(size=(4, 500, 2)); s[0, :, 1] += 3   # chain 0 of "b" elsewhere
    >>> post = xr.Dataset({"a": (("chain", "draw"), rng.normal(size=(4, 500))),
    ...                    "s": (("chain", "draw", "k"), s)}, coords={"k": ["x", "b"]})
    >>> diag = {v: diagnose(post[v].values) for v in post.data_vars}
    >>> worst = worst_parameters(post, diag, n=1)[0]
    >>> worst["parameter"], worst["missed"], bool(worst["r_hat"] > 1.1)
    ('s[b]', ['r_hat', 'ess_bulk', 'ess_tail'], True)
    """
    firsts: list[tuple[float, str, tuple[int, ...]]] = []  # each variable's worst scalar
    rest: list[tuple[float, str, tuple[int, ...]]] = []
    for name, diag in diagnostics.items():
        severity = convergence_severity(diag)
        flat = np.atleast_1d(severity).ravel()
        order = np.argsort(-np.nan_to_num(flat, nan=-np.inf), kind="stable")[:n]
        shape = np.shape(severity)
        found = [
            (float(flat[i]), name, tuple(int(j) for j in np.unravel_index(i, shape)))
            for i in order
            if not np.isnan(flat[i])
        ]
        firsts.extend(found[:1])
        rest.extend(found[1:])
    firsts.sort(key=lambda c: -c[0])
    rest.sort(key=lambda c: -c[0])
    candidates = firsts[:n] + rest[: max(0, n - len(firsts))]
    candidates.sort(key=lambda c: -c[0])
    out = []
    for severity, name, index in candidates[:n]:
        values = {
            k: float(np.asarray(diagnostics[name][k])[index])
            if k in diagnostics[name]
            else math.nan
            for k in ("r_hat", "ess_bulk", "ess_tail")
        }
        missed = [
            k
            for k in ("r_hat", "ess_bulk", "ess_tail")
            if (values[k] > CONVERGENCE[k] if k == "r_hat" else values[k] < CONVERGENCE[k])
        ]
        out.append(
            {
                "parameter": _label(name, posterior[name], tuple(int(i) for i in index)),
                "variable": name,
                "index": [int(i) for i in index],
                **values,
                "severity": severity,
                "missed": missed,
            }
        )
    return out


def _known(value: Any) -> bool:
    """Whether a diagnostic is known: a number, not NaN nor None (a stored record's null)."""
    return isinstance(value, int | float | np.number) and not math.isnan(value)


def describe_parameter(worst: Mapping[str, Any]) -> str:
    """One parameter of :func:`worst_parameters` in words.

    Parameters
    ----------
    worst : mapping
        One entry of :func:`worst_parameters` (``parameter`` and, where known, ``r_hat``,
        ``ess_bulk``, ``ess_tail``).

    Returns
    -------
    str
        The name and the known diagnostics, e.g. ``"sigma_item[yes] (R-hat 1.530, bulk ESS
        7, tail ESS 12)"``; an unknown one (NaN, or None: a stored record's null) is left
        out, a non-finite draw's R-hat shows as ``inf`` (in the stored record it is null).

    Examples
    --------
    >>> describe_parameter({"parameter": "kappa", "r_hat": 1.5, "ess_bulk": 7.0,
    ...                     "ess_tail": float("nan")})
    'kappa (R-hat 1.500, bulk ESS 7)'
    """
    parts = []
    if _known(worst.get("r_hat")):
        parts.append(f"R-hat {worst['r_hat']:.3f}")
    for key, what in (("ess_bulk", "bulk ESS"), ("ess_tail", "tail ESS")):
        if _known(worst.get(key)):
            parts.append(f"{what} {worst[key]:.0f}")
    return f"{worst['parameter']} ({', '.join(parts)})" if parts else str(worst["parameter"])


def convergence_advice(
    record: Mapping[str, Any], *, command_line: bool = False, model: str | None = None
) -> str:
    """What to do about a missed convergence standard, matched to what failed.

    Parameters
    ----------
    record : mapping
        A record of :func:`check_convergence` (``failed``, ``divergences``, ``ess_bulk``,
        ``draws``, ...).
    command_line : bool, default False
        Name the options of the ``ambppl`` command (``--draws``, ``--tune``,
        ``--target-accept``, ``--param``) instead of :func:`ambppl.fit`'s keywords.
    model : str, optional
        The catalog model: a ``limitation`` in its info record is quoted for divergences, a
        model with the parameter ``centred`` is told to switch its parameterization, and
        where its record's ``slow`` names the worst parameter's variable (``record["worst"]``)
        of a fit that missed R-hat or ESS, that sentence is quoted after the remedies.

    Returns
    -------
    str
        One sentence or two; empty when the standard was met.

    Notes
    -----
    Divergent transitions mean the sampler could not follow the posterior's curvature
    somewhere (a funnel between a scale parameter and the effects it scales, or a likelihood
    that is not smooth): the draws may be biased, and more draws do not help. The remedies
    are a reparameterization (or the model's known limitation on such data) and a higher
    ``target_accept`` (smaller steps). An R-hat above 1.01 without divergences means the
    chains have not reached the same distribution: longer tuning (warm-up), twice the
    record's ``tune`` and at least 2000 (PyMC's 1000 assumed where the record has none). A
    small ESS means the chains are autocorrelated: more draws, about ``draws * 400 / ESS``
    (both remedies when both failed). Divergences are named first and the other remedies are not
    offered with them: their draws are not worth multiplying (Betancourt 2017, Vehtari et
    al. 2021).

    References
    ----------
    .. [1] Betancourt (2017), "A conceptual introduction to Hamiltonian Monte Carlo",
       arXiv:1701.02434, section 6.2 (divergences).
    .. [2] Vehtari et al. (2021), Bayesian Analysis 16(2), section 4 (what to do).

    Examples
    --------
    >>> print(convergence_advice({"failed": ["ess_bulk"], "ess_bulk": 120.0, "draws": 1000}))
    the chains agree but their draws are autocorrelated (ESS below 400): draw more
    (draws=3400 or more)
    >>> print(convergence_advice({"failed": ["r_hat", "ess_bulk"], "ess_bulk": 120.0,
    ...                           "draws": 1000}, command_line=True))
    the chains disagree (R-hat above 1.01): they have not reached the same distribution;
    tune longer (--tune 2000); their draws are autocorrelated (ESS below 400): draw more
    (raise --draws to 3400 or more); if a chain stays apart after that, the posterior has
    several modes
    >>> print(convergence_advice({"failed": ["divergences", "ess_bulk"], "divergences": 12}))
    12 divergent transitions: the sampler could not follow the posterior's curvature (a
    funnel, or a model that these data do not identify), so the draws may be biased and more
    draws do not help; raise target_accept (sample_kwargs={'target_accept': 0.95}) for smaller
    steps, and if they persist reparameterize the model or read them as its limitation on
    these data
    """
    failed = set(record.get("failed", ()))
    if record.get("passed", not failed) and not failed:
        return ""
    cli = command_line
    if record.get("reason") and not failed:
        return "draw at least 4 draws per chain (" + ("--draws" if cli else "draws=") + ")"
    if "divergences" in failed:
        n = record.get("divergences")
        target = "--target-accept 0.95" if cli else "sample_kwargs={'target_accept': 0.95}"
        text = (
            f"{n if n is not None else 'some'} divergent transitions: the sampler could not "
            "follow the posterior's curvature (a funnel, or a model that these data do not "
            "identify), so the draws may be biased and more draws do not help; raise "
            f"target_accept ({target}) for smaller steps, and if they persist "
        )
        info = _model_info(model)
        if "centred" in info.get("parameters", {}):
            option = "--param centred=" if cli else "centred="
            text += (
                f"switch the parameterization ({option}true for items with many answers "
                f"each, {option}false for few; the default picks one per design) or read "
                "them as the model's limitation on these data"
            )
        else:
            text += "reparameterize the model or read them as its limitation on these data"
        if info.get("limitation"):
            text += f" (known limitation: {info['limitation']})"
        return text
    parts = []
    if "r_hat" in failed and int(record.get("chains", 2)) < 2:
        chains = "--chains 4" if cli else "chains=4"
        parts.append(
            "one chain cannot show that the sampler reached the posterior (R-hat compares "
            f"chains): run several ({chains})"
        )
    elif "r_hat" in failed:
        # twice the warm-up the fit had (PyMC's 1000 where the record does not say)
        tune = max(2000, 2 * int(record.get("tune") or 1000))
        option = f"--tune {tune}" if cli else f"sample_kwargs={{'tune': {tune}}}"
        parts.append(
            "the chains disagree (R-hat above 1.01): they have not reached the same "
            f"distribution; tune longer ({option})"
        )
    low = [record.get(k) for k in ("ess_bulk", "ess_tail") if k in failed]
    if low:
        low = [float(v) for v in low if v is not None and math.isfinite(float(v)) and v > 0]
        draws = record.get("draws")
        if low and draws:
            need = int(math.ceil(int(draws) * CONVERGENCE["ess_bulk"] / min(low) / 100) * 100)
            amount = f"raise --draws to {need} or more" if cli else f"draws={need} or more"
        else:
            amount = "raise --draws" if cli else "draws="
        what = "their" if parts else "the chains agree but their"
        parts.append(f"{what} draws are autocorrelated (ESS below 400): draw more ({amount})")
    if "r_hat" in failed:
        parts.append("if a chain stays apart after that, the posterior has several modes")
    slow = _model_info(model).get("slow") or {}
    worst = (record.get("worst") or [{}])[0]
    if parts and worst.get("variable") in slow:
        parts.append(
            f"{worst['variable']} is where {model} is known to mix slowly: "
            + slow[worst["variable"]]
        )
    return "; ".join(parts)


def _model_info(model: str | None) -> dict[str, Any]:
    """The catalog info record of ``model`` (empty when unknown)."""
    if not model:
        return {}
    try:
        return dict(get_model(model).info)
    except (ValueError, OSError, KeyError):
        return {}


def check_convergence(
    tree: Any,
    var_names: Sequence[str],
    *,
    what: str = "the fit",
    stacklevel: int = 2,
    model: str | None = None,
    tune: int | None = None,
) -> dict[str, Any]:
    """Check posterior draws against :data:`CONVERGENCE`; record the result, warn if missed.

    Parameters
    ----------
    tree : xarray.DataTree
        A result with a ``posterior`` group (dims chain, draw) and, optionally,
        ``sample_stats["diverging"]``.
    var_names : sequence of str
        The variables to check (those absent from the posterior are skipped; none left:
        every posterior variable).
    what : str, default "the fit"
        How the warning names the fit.
    stacklevel : int, default 2
        Passed to :func:`warnings.warn`.
    model : str, optional
        The catalog model, for the advice (:func:`convergence_advice`); default
        ``tree.attrs["model"]``.
    tune : int, optional
        The warm-up steps per chain, where the sampler did not record them in
        ``sample_stats`` (PyMC's ``attrs["tuning_steps"]``, nutpie's ``num_tune`` in
        ``attrs["inference_library_settings"]``), which win: the advice asks for more than
        the fit had.

    Returns
    -------
    dict
        ``variables``, ``chains``, ``draws``, ``tune`` (where known), ``r_hat`` (largest),
        ``ess_bulk`` and ``ess_tail`` (smallest), ``divergences``, ``passed``, ``failed`` (the
        limits missed) and ``worst``: the :data:`N_WORST` parameters furthest from the
        standard over every checked variable (:func:`worst_parameters`: name such as
        ``"sigma_item[yes]"``, its R-hat and ESS; furthest by the largest ratio to a limit,
        so the first need not hold the largest R-hat or the smallest ESS), and
        ``extremes_at``: the parameter that holds each of ``r_hat``, ``ess_bulk`` and
        ``ess_tail``; with fewer than 4 draws ``variables``, ``chains``, ``draws``, ``tune``,
        ``passed=False`` and a ``reason`` only. Also stored as JSON in
        ``tree.attrs["convergence"]``, valid JSON: a number that is NaN (R-hat of one chain)
        or infinite there is null, as in the warning's record and text (:func:`stored_record`
        reads it back). The extremes are over every scalar of every checked variable,
        whatever their order: a scalar with a non-finite draw counts as R-hat inf and ESS 0
        (missed), one whose diagnostic is unknown (a constant) is left out of that
        diagnostic. With one chain R-hat is unknown, and the standard
        counts as missed on ``r_hat``: one chain cannot show that the sampler reached the
        posterior.

    Warns
    -----
    ConvergenceWarning
        When the standard is missed: one message naming the worst parameter, the record's
        numbers and the advice that fits the failure (:func:`convergence_advice`: never
        "draw more" for divergent transitions); its ``record`` attribute holds the record.

    Notes
    -----
    R-hat is ArviZ's rank-normalized split R-hat (``arviz.rhat``, the larger of the bulk and
    the folded one), ``ess_bulk`` and ``ess_tail`` ArviZ's ``arviz.ess(method="bulk")`` and
    ``arviz.ess(method="tail")`` (the 11 % and 89 % quantiles with ArviZ's default
    ``rcParams["stats.ci_prob"]`` of 0.89), computed by :mod:`ambppl.inference.diagnostics`: the
    algorithms of arviz-stats 1.3 (``arviz_stats/base/diagnostics.py``) vectorized over all
    scalars, equal to ArviZ's to rounding and 8-15x faster (ArviZ loops over scalars in
    Python, ~1.3 ms per scalar and diagnostic: 19-21 s against 1.3-2.7 s for 5000 scalars
    of 2 chains x 1000 draws).

    References
    ----------
    .. [1] Vehtari et al. (2021), "Rank-normalization, folding, and localization: an improved
       R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).
    .. [2] arviz-stats 1.3, ``arviz_stats/base/diagnostics.py`` (``_rhat_rank``,
       ``_ess_bulk``, ``_ess_tail``, ``_ess``) and ``arviz_stats/base/core.py``
       (``autocov``).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> rng = np.random.default_rng(5)
    >>> tree = xr.DataTree.from_dict(
    ...     {"posterior": xr.Dataset({"x": (("chain", "draw"), rng.normal(size=(4, 1000)))})})
    >>> check_convergence(tree, ["x"])["passed"]
    True
    """

    post = tree["posterior"].to_dataset()
    names = [n for n in var_names if n in post] or list(post.data_vars)
    ds = post[names]
    record: dict[str, Any] = {
        "variables": names,
        "chains": int(post.sizes["chain"]),
        "draws": int(post.sizes["draw"]),
    }
    steps = _recorded_tune(tree)
    steps = steps if steps is not None else (None if tune is None else int(tune))
    if steps is not None:
        record["tune"] = steps
    if post.sizes["chain"] * post.sizes["draw"] < 4 or post.sizes["draw"] < 4:
        record.update(passed=False, reason="too few draws to diagnose")
    else:
        # arviz.rhat(ds), arviz.ess(ds, method="bulk") and arviz.ess(ds, method="tail"),
        # vectorized over each variable's scalars
        diag = {v: _diagnose(ds[v].transpose("chain", "draw", ...).values) for v in names}
        worst = {
            "r_hat": _extreme(diag, "r_hat", np.max),
            "ess_bulk": _extreme(diag, "ess_bulk", np.min),
            "ess_tail": _extreme(diag, "ess_tail", np.min),
        }
        div = 0
        if "sample_stats" in tree.children and "diverging" in tree["sample_stats"]:
            div = int(tree["sample_stats"]["diverging"].values.sum())
        worst["divergences"] = div
        failed = [
            k
            for k, limit in CONVERGENCE.items()
            if (worst[k] > limit if k in ("r_hat", "divergences") else worst[k] < limit)
        ]
        if record["chains"] < 2 and "r_hat" not in failed:
            # R-hat compares chains: one chain cannot show that it is within the standard
            failed.insert(0, "r_hat")
        record.update(worst, passed=not failed, failed=failed)
        record["worst"] = [
            {k: w[k] for k in ("parameter", "variable", "index", "r_hat", "ess_bulk", "ess_tail")}
            for w in worst_parameters(post, diag)
        ]
        record["extremes_at"] = _extremes_at(post, diag)
    # valid JSON (json.dumps writes NaN and Infinity, which strict readers refuse): the
    # warning carries the record as stored, so that its text is the stored record's message
    stored = _json_values(record)
    tree.attrs["convergence"] = json.dumps(stored, allow_nan=False)
    if not record["passed"]:
        model = model or tree.attrs.get("model")
        warnings.warn(
            ConvergenceWarning(
                convergence_message(stored, what=what, model=model),
                record=stored,
                what=what,
                model=model,
            ),
            stacklevel=stacklevel + 1,
        )
    return record


def _json_values(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, inf) as None and numpy scalars as
    Python's, in dicts and lists: what ``json.dumps(..., allow_nan=False)`` writes."""
    if isinstance(value, Mapping):
        return {k: _json_values(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_values(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _recorded_tune(tree: Any) -> int | None:
    """The warm-up steps per chain the sampler recorded in ``sample_stats``: PyMC's
    ``attrs["tuning_steps"]``, nutpie's ``num_tune`` in ``attrs["inference_library_settings"]``
    (JSON); None where neither is there."""
    if "sample_stats" not in tree.children:
        return None
    attrs = tree["sample_stats"].attrs
    steps = attrs.get("tuning_steps")
    if steps is None and isinstance(attrs.get("inference_library_settings"), str):
        try:
            steps = json.loads(attrs["inference_library_settings"])["settings"]["num_tune"]
        except (ValueError, KeyError, TypeError):
            steps = None
    try:
        return None if steps is None else int(steps)
    except (TypeError, ValueError):
        return None


def stored_record(result: Any) -> dict[str, Any] | None:
    """The convergence record a fit stored, read back.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` (the record is its ``attrs["convergence"]``, JSON, or
        its posterior's).

    Returns
    -------
    dict or None
        The record of :func:`check_convergence`; None where no NUTS ran. A record that cannot
        be read is returned as failed: ``{"passed": False, "failed": ["unreadable"],
        "reason": ...}``.

    Raises
    ------
    TypeError
        If ``result`` is not an ``xarray.DataTree`` (give the result of :func:`ambppl.fit`).

    Examples
    --------
    >>> import xarray as xr
    >>> tree = xr.DataTree.from_dict({"posterior": xr.Dataset()})
    >>> tree.attrs["convergence"] = '{"passed": true, "r_hat": 1.002}'
    >>> stored_record(tree)
    {'passed': True, 'r_hat': 1.002}
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(
            "result must be an xarray.DataTree (the result of ambppl.fit), but got "
            f"{type(result).__name__}"
        )
    posterior = result.children.get("posterior")
    inner = None if posterior is None else posterior.attrs.get("convergence")
    raw = result.attrs.get("convergence", inner)
    if raw is None:
        return None
    try:
        return json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (TypeError, ValueError):
        return {"passed": False, "failed": ["unreadable"], "reason": f"unreadable record {raw!r}"}


#: The words of each diagnostic in a message.
DIAGNOSTIC_WORDS = {"r_hat": "R-hat", "ess_bulk": "bulk ESS", "ess_tail": "tail ESS"}


def _named_worst(record: Mapping[str, Any]) -> str:
    """The worst parameter of a record in words (empty without one). It is the furthest from
    the standard by its largest ratio to a limit (:func:`worst_parameters`), so a missed
    limit's extreme may belong to another parameter (a larger R-hat where the worst one has
    the smaller ESS): each such extreme is named with its parameter, from
    ``record["extremes_at"]`` (records written before it existed go without)."""
    worst = record.get("worst") or []
    if not worst:
        return ""
    first = worst[0]
    words = (
        f"worst parameter {describe_parameter(first)}, the furthest from the standard by its "
        "largest ratio to a limit"
    )
    failed = record.get("failed") or []
    at = record.get("extremes_at") or {}
    for key, end in EXTREMES:
        where = at.get(key)
        if key not in failed or not where or where == first.get("parameter"):
            continue
        value = record.get(key)
        number = ""
        if isinstance(value, (int, float)):
            number = f" ({value:.3f})" if key == "r_hat" else f" ({value:.0f})"
        words += f"; the {end} {DIAGNOSTIC_WORDS[key]}{number} is {where}'s"
    return words


def convergence_message(
    record: Mapping[str, Any],
    *,
    what: str = "the fit",
    model: str | None = None,
    command_line: bool = False,
) -> str:
    """The one-line message of a missed standard: the worst parameter, the numbers, the
    advice (:func:`convergence_advice`).

    Parameters
    ----------
    record : mapping
        A record of :func:`check_convergence`.
    what : str, default "the fit"
        How the message names the fit.
    model : str, optional
        The catalog model, for the advice.
    command_line : bool, default False
        Name the options of the ``ambppl`` command instead of :func:`ambppl.fit`'s keywords.

    Returns
    -------
    str
        One line: what missed the standard, the worst parameter, the record's numbers (JSON)
        and the advice.

    Examples
    --------
    >>> record = {"passed": False, "failed": ["divergences"], "r_hat": 1.004,
    ...           "ess_bulk": 900.0, "ess_tail": 800.0, "divergences": 3,
    ...           "worst": [{"parameter": "kappa", "r_hat": 1.004, "ess_bulk": 900.0,
    ...                      "ess_tail": 800.0}]}
    >>> print(convergence_message(record, command_line=True))  # doctest: +ELLIPSIS
    the fit missed the convergence standard (R-hat <= 1.01, bulk and tail ESS >= 400, no
    divergences): worst parameter kappa (R-hat 1.004, bulk ESS 900, tail ESS 800), the
    furthest from the standard by its largest ratio to a limit; over all parameters ...
    3 divergent transitions: ... raise target_accept (--target-accept 0.95) ...
    """
    shown = {
        # valid JSON: a number that could not be computed (R-hat of one chain, NaN) is null
        k: None if isinstance(v, float) and not math.isfinite(v) else v
        for k, v in record.items()
        if k not in ("variables", "worst", "extremes_at")
    }
    named = _named_worst(record)
    named = f"{named}; over all parameters " if named else ""
    advice = convergence_advice(record, command_line=command_line, model=model)
    return (
        f"{what} missed the convergence standard (R-hat <= 1.01, bulk and tail ESS >= 400, "
        f"no divergences): {named}{json.dumps(shown)}; {advice}"
    )
