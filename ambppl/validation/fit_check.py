"""``check_fit``: every check that applies to one fit, one verdict, and what to try next.

``ambppl validate FILE`` prints what :func:`check_fit` returns, so a notebook and the command
line reach the same verdict on the same fit.
"""

from __future__ import annotations

import html
import json
import math
import statistics as _stats
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.contract import as_counts
from ambppl.data.matrices import refuse_other_counts
from ambppl.data.readers import read_long
from ambppl.inference.catalog import get_model
from ambppl.inference.convergence import ConvergenceWarning, convergence_message, stored_record
from ambppl.inference.fitting import fit
from ambppl.internal import messages
from ambppl.internal.checks import (
    check_positive_int,
    check_prob,
    check_progress,
    check_random_seed,
)
from ambppl.internal.resultdata import check_fit_tree, constant
from ambppl.validation._result import NotApplicable, ValidationResult, at_level
from ambppl.validation.closed_form import check_moments
from ambppl.validation.density import check_density
from ambppl.validation.predictive import check_predictive

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["CHECKS", "FitCheck", "check_fit"]

#: The columns of an answers table (:func:`ambppl.data.read_long`): one row per answer.
ANSWER_COLUMNS = frozenset({"item", "rater", "label"})

#: The checks :func:`check_fit` runs, in order; ``convergence`` only after NUTS.
CHECKS: tuple[str, ...] = ("moments", "density", "predictive", "convergence")

#: The model that addresses each kind of predictive misfit (see :func:`check_fit`, Notes).
LEARNED_PRIOR = "hierarchical_dirichlet"
RATER_MODEL = "rater_effects"
LATENT_CLASS = "dawid_skene"

#: What a failed summary means, by (statistic, summary, direction of the observed value);
#: ``{population}`` is the model's population of items in words.
MEANINGS: dict[tuple[str, str, str], str] = {
    ("modal_share", "mean", "high"): (
        "answers agree more than the model predicts: items are less ambiguous than "
        "{population} implies"
    ),
    ("modal_share", "mean", "low"): (
        "answers agree less than the model predicts: items are more ambiguous than "
        "{population} implies"
    ),
    ("modal_share", "sd", "high"): (
        "agreement varies more from item to item than predicted (over-dispersion): clear and "
        "ambiguous items lie further apart than {population} implies"
    ),
    ("modal_share", "sd", "low"): (
        "agreement varies less from item to item than predicted: items are more alike than "
        "{population} implies"
    ),
    ("plugin_amb", "mean", "high"): (
        "the answers are more ambiguous (plug-in amb) than predicted: items are more "
        "ambiguous than {population} implies"
    ),
    ("plugin_amb", "mean", "low"): (
        "the answers are less ambiguous (plug-in amb) than predicted: items are clearer than "
        "{population} implies"
    ),
    ("plugin_amb", "sd", "high"): (
        "ambiguity varies more from item to item than predicted (over-dispersion): clear and "
        "ambiguous items lie further apart than {population} implies"
    ),
    ("plugin_amb", "sd", "low"): (
        "ambiguity varies less from item to item than predicted: items are more alike than "
        "{population} implies"
    ),
    ("cant_solve_share", "mean", "high"): (
        "can't-solve answers are more frequent than {population} implies"
    ),
    ("cant_solve_share", "mean", "low"): (
        "can't-solve answers are rarer than {population} implies"
    ),
    ("cant_solve_share", "sd", "high"): (
        "can't-solve answers are concentrated on fewer items than predicted (over-dispersion; "
        "also the mark of raters who answer can't-solve more than others)"
    ),
    ("cant_solve_share", "sd", "low"): (
        "can't-solve answers are spread more evenly over the items than {population} implies"
    ),
}

#: What a failed computation check means (not a misfit of the model to the data).
COMPUTATION = {
    "moments": (
        "the draws disagree with the closed-form posterior moments: a false alarm (the check "
        "raises one in {rate} correct runs), or the sampler or the draws are wrong (or too "
        "few effective draws), not the model; rerun with another seed, and report it if it "
        "fails again"
    ),
    "density": (
        "the draws disagree with the exact two-class posterior law: a false alarm (the check "
        "raises one in {rate} correct runs), or the sampler or the draws are wrong, not the "
        "model; rerun with another seed, and report it if it fails again"
    ),
}


@dataclass(frozen=True, eq=False)
class FitCheck:
    """The verdict of :func:`check_fit`: the checks that applied, the ones skipped and why,
    the predictive statistics in words, and the models to try next.

    Attributes
    ----------
    model, method : str
        The catalog model and method of the checked fit.
    passed : bool
        True when at least one check ran, every check that ran passed and none stopped with
        an error (``bool(check)`` is the same); False where no check applies (a point, too
        few draws): nothing was validated. Where only ``convergence`` ran (a NUTS fit no
        check of the draws applies to, e.g. a ``dawid_skene`` fit stored without ``q`` and
        ``pi``) True says that the sampler met the convergence standard, not that the
        posterior was checked:
        :attr:`FitCheck.posterior_checks` is empty and :attr:`FitCheck.verdict` says
        "passed convergence only".
    level : float
        The false-alarm rate ``alpha`` of the verdict: each of the ``m`` checks that ran on
        the draws (``moments``, ``density``, ``predictive``) was decided at ``alpha / m``
        (its ``ValidationResult.level``), so a correct fit fails one with probability at
        most ``alpha``.
    checks : dict of str to ValidationResult
        The checks that ran, by name (``"moments"``, ``"density"``, ``"predictive"``,
        ``"convergence"``); ``check["predictive"]`` is the same. For a check that did not
        run, ``check[name]`` raises ``KeyError`` saying why: its error, its reason for
        being skipped, or (``convergence``) that no NUTS ran.
    skipped : dict of str to str
        The checks that do not apply to this fit, with the reason.
    errors : dict of str to str
        The checks that stopped with an error on this result (e.g. non-finite draws, draws of
        other items than the counts'), with the message: each a failure.
    table : pandas.DataFrame
        One row per check: ``check``, ``verdict`` (``pass``, ``FAIL``, ``ERROR`` or
        ``skipped``),
        ``statistic``, ``p_value``, ``flagged`` (rows flagged of rows tested), ``note``.
    predictive : pandas.DataFrame or None
        One row per predictive statistic (``summary`` over items of ``statistic``):
        ``observed``, ``predicted`` (mean over replicated data sets), ``lower``/``upper``
        (the central interval the row was tested at), ``level`` (its probability),
        ``z``, ``p_holm``, ``verdict``, ``direction`` (``high`` or ``low``: the observed
        value against the predicted mean) and ``meaning`` (what a failure says, in words).
        None when the predictive check did not run.
    suggestions : pandas.DataFrame
        One row per catalog model that addresses a failure: ``model`` and ``reason``; empty
        when nothing failed or no catalog model addresses the failure.
    comparison : pandas.DataFrame or None
        With ``compare=True``: one row per model (the checked fit first, then each
        suggestion fitted with its defaults): ``model``, ``method``, one column per check
        (``pass``, ``FAIL``, ``-`` where it does not apply), ``verdict`` and ``note``.
    notes : list of str
        Further remarks (e.g. ``rater_effects`` when the data have no rater ids).
    population : str
        The model's population of items in words, as the meanings name it (e.g. "a flat
        Dirichlet(1) prior", "the learned Dirichlet population").

    Examples
    --------
    >>> import numpy as np, ambppl
    >>> from ambppl.validation import check_fit
    >>> rng = np.random.default_rng(3)
    >>> counts = rng.multinomial(10, rng.dirichlet([0.2, 0.2], size=200))  # clear items
    >>> check = check_fit(ambppl.fit(counts, draws=500, chains=2, random_seed=1), random_seed=2)
    >>> check.verdict
    'dirichlet_categorical (exact): FAILED the predictive check'
    >>> row = check.predictive.iloc[0]
    >>> row["summary"], row["statistic"], row["verdict"], bool(row["observed"] > row["upper"])
    ('mean', 'modal_share', 'FAIL', True)
    >>> print(row["meaning"])  # doctest: +NORMALIZE_WHITESPACE
    answers agree more than the model predicts: items are less ambiguous than a flat
    Dirichlet(1) prior implies
    >>> check.suggestions["model"].tolist()
    ['hierarchical_dirichlet']
    """

    model: str
    method: str
    passed: bool
    level: float
    checks: dict[str, ValidationResult]
    skipped: dict[str, str]
    table: Any
    predictive: Any
    suggestions: Any
    comparison: Any = None
    notes: list[str] = field(default_factory=list)
    population: str = field(default="", repr=False)
    errors: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.passed)

    def __getitem__(self, name: str) -> ValidationResult:
        if name in self.checks:
            return self.checks[name]
        if name in self.errors:
            raise KeyError(
                f"the {name!r} check stopped with an error (a failure), so it has no result: "
                f"{self.errors[name]}"
            )
        if name in self.skipped:
            raise KeyError(f"the {name!r} check was skipped: {self.skipped[name]}")
        if name == "convergence":
            raise KeyError(
                f"the 'convergence' check did not run: it reads the convergence record of a "
                f"NUTS fit, and this {self.method} fit has none"
            )
        raise KeyError(f"no check named {name!r}; the checks are {', '.join(CHECKS)}")

    @property
    def posterior_checks(self) -> list[str]:
        """The checks that ran on the draws themselves (``moments``, ``density``,
        ``predictive``): empty where only ``convergence`` ran, which says the sampler mixed,
        not that its draws are right."""
        return [name for name in self.checks if name != "convergence"]

    @property
    def verdict(self) -> str:
        """One sentence: passed (and what was checked), which checks failed, or that nothing
        was checked."""
        if self.passed and not self.posterior_checks:
            return (
                f"{self.model} ({self.method}): passed convergence only; no check of the "
                f"posterior applies to this fit (skipped: {', '.join(self.skipped)})"
            )
        if self.passed:
            return f"{self.model} ({self.method}): every check passed ({', '.join(self.checks)})"
        if not self.checks and not self.errors:
            return (
                f"{self.model} ({self.method}): NOTHING CHECKED, no check applies to this fit "
                f"(skipped: {', '.join(self.skipped)})"
            )
        failed = [name for name, c in self.checks.items() if not c.passed] + list(self.errors)
        return f"{self.model} ({self.method}): FAILED the {' and '.join(failed)} check" + (
            "s" if len(failed) > 1 else ""
        )

    def text(self, *, command_line: bool = False) -> str:
        """What ``ambppl validate FILE`` prints: the table of checks, the skipped ones and
        why, the predictive statistics, the failures in words, the suggestions and, after
        ``compare=True``, the comparison table.

        Parameters
        ----------
        command_line : bool, default False
            Name the options of the ``ambppl`` command (``--compare``, ``--draws``, ...)
            instead of Python keywords (``compare=True``, ``draws=``).

        Returns
        -------
        str
        """
        import pandas as pd

        lines: list[str] = []
        shown = self.table.drop(columns=["note"]).astype(object)
        shown = shown.map(_cell)
        with pd.option_context("display.max_rows", None, "display.width", 200):
            lines.append(shown.to_string(index=False))
        for name, reason in self.skipped.items():
            lines.append(f"{name} skipped: {reason}")
        for name, message in self.errors.items():
            lines.append(f"{name} stopped with an error (a failure): {message}")
        if "convergence" in self.checks and not self.checks["convergence"].passed:
            record = self.checks["convergence"].details["record"]
            message = convergence_message(
                record, what=f"the {self.method} fit", model=self.model, command_line=command_line
            )
            lines.extend(_wrap(f"convergence: {message}", first=""))
        for name, what in COMPUTATION.items():
            if name in self.checks and not self.checks[name].passed:
                level = self.checks[name].level
                rate = f"{1.0 / level:.0f}" if level > 0 else "no"
                lines.append(f"{name}: {what.format(rate=rate)}")
        if self.predictive is not None:
            lines.append("")
            header = textwrap.wrap(self.checks["predictive"].description + ":", width=100)
            lines.extend(line if i == 0 else "  " + line for i, line in enumerate(header))
            lines.extend("  " + row for row in _predictive_lines(self.predictive))
            failed = self.predictive[self.predictive["verdict"] == "FAIL"]
            if len(failed):
                lines.append("what the failures mean:")
                for _, row in failed.iterrows():
                    lines.extend(_wrap(f"{row['summary']} {row['statistic']}: {row['meaning']}"))
        if len(self.suggestions):
            lines.append("")
            lines.append("models that address the failures:")
            for _, row in self.suggestions.iterrows():
                lines.extend(_wrap(f"{row['model']}: {row['reason']}"))
            if self.comparison is None:
                how = "rerun with --compare" if command_line else "check_fit(..., compare=True)"
                lines.append(f"  (fit them and check them: {how})")
        elif not self.notes and "predictive" in self.checks:
            if not self.checks["predictive"].passed:
                lines.append("")
                lines.append(
                    "no other catalog model addresses these failures: read them as what the "
                    f"{self.model} model misses on these data"
                )
        if self.comparison is not None:
            lines.append("")
            lines.append("comparison (each model with its defaults):")
            table = self.comparison.drop(columns=["note"]).astype(object).map(_cell)
            with pd.option_context("display.max_rows", None, "display.width", 200):
                lines.extend("  " + row for row in table.to_string(index=False).splitlines())
            for _, row in self.comparison.iterrows():
                if isinstance(row["note"], str) and row["note"]:
                    lines.extend(_wrap(f"{row['model']}: {row['note']}"))
            winners = self.comparison.loc[self.comparison["verdict"] == "pass", "model"]
            lines.append(
                "  passes every check: " + ", ".join(map(str, winners))
                if len(winners)
                else "  none of these models passes every check"
            )
        for note in self.notes:
            lines.extend(_wrap(note, first=""))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"<FitCheck {self.verdict}>"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        return (
            f'<p><b style="color:{colour}">{html.escape(self.verdict)}</b></p>'
            f"<pre>{html.escape(self.text())}</pre>"
        )


def _wrap(text: str, first: str = "  ") -> list[str]:
    """One remark as indented lines of at most 100 characters."""
    return textwrap.wrap(text, width=100, initial_indent=first, subsequent_indent="      ")


def _cell(x: Any) -> Any:
    if isinstance(x, float):
        return "" if x != x else f"{x:.3g}"
    return "" if x is None else x


def _predictive_lines(table: pd.DataFrame) -> list[str]:
    import pandas as pd

    rows = pd.DataFrame(
        {
            "statistic": table["summary"] + " " + table["statistic"],
            "observed": table["observed"].map(lambda x: f"{x:.4f}"),
            "predicted": table["predicted"].map(lambda x: f"{x:.4f}"),
            "interval": [
                f"{lo:.4f} to {hi:.4f}"
                for lo, hi in zip(table["lower"], table["upper"], strict=True)
            ],
            "level": table["level"].map(lambda x: f"{100 * x:.2f} %"),
            "verdict": table["verdict"],
        }
    )
    return rows.to_string(index=False).splitlines()


# --------------------------------------------------------------------------- helpers


def _holm_levels(p: np.ndarray, alpha: float) -> np.ndarray:
    """The level each row was tested at in Holm's step-down procedure.

    Sorted by p-value, row ``j`` (0-based) is tested at ``alpha / (m - j)`` while every row
    before it was rejected; the rows after the first one kept are held to that row's level.
    So a row is flagged exactly when ``p <= level``, i.e. when the observed value lies
    outside the central normal interval of probability ``1 - level``.
    """
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    order = np.argsort(np.nan_to_num(p, nan=np.inf), kind="stable")
    thresholds = alpha / (m - np.arange(m))
    sorted_p = np.nan_to_num(p[order], nan=np.inf)
    kept = np.flatnonzero(sorted_p > thresholds)
    stop = int(kept[0]) if kept.size else m
    levels = np.empty(m)
    levels[order] = thresholds[np.minimum(np.arange(m), stop if stop < m else m - 1)]
    return levels


def _population(result: xr.DataTree, model: str, method: str) -> str:
    """The model's population of items in words (for the meanings of failures)."""
    attrs = {**result["posterior"].attrs, **result.attrs}
    prior = attrs.get("prior")
    if model == RATER_MODEL or (prior is None and "b" in result["posterior"].data_vars):
        return "the rater model's item population"
    if model == LATENT_CLASS or (prior is None and "confusion" in result["posterior"].data_vars):
        return "one true class per item, answered through the raters' confusion rows,"
    if prior is not None and method == "empirical_bayes":
        return "the Dirichlet population estimated by empirical Bayes"
    if prior is not None:
        values = np.atleast_1d(np.asarray(json.loads(prior) if isinstance(prior, str) else prior))
        values = values.astype(np.float64)
        if values.size and np.allclose(values, values[0]):
            beta = f"{values[0]:g}"
            flat = "a flat " if values[0] == 1 else "a "
            return f"{flat}Dirichlet({beta}) prior"
        return f"the Dirichlet({np.round(values, 3).tolist()}) prior"
    return "the learned Dirichlet population"


def _predictive_table(check: ValidationResult, population: str) -> pd.DataFrame:
    import pandas as pd

    table = check.table
    levels = _holm_levels(table["p_value"].to_numpy(), check.level)
    normal = _stats.NormalDist()
    rows = []
    for (_, row), level in zip(table.iterrows(), levels, strict=True):
        half = normal.inv_cdf(1.0 - level / 2.0) * float(row["rep_sd"])
        direction = "high" if row["observed"] > row["rep_mean"] else "low"
        failed = bool(row["flagged"])
        meaning = MEANINGS.get((row["statistic"], row["summary"], direction), "")
        rows.append(
            {
                "statistic": row["statistic"],
                "summary": row["summary"],
                "observed": float(row["observed"]),
                "predicted": float(row["rep_mean"]),
                "lower": float(row["rep_mean"]) - half,
                "upper": float(row["rep_mean"]) + half,
                "level": 1.0 - float(level),
                "z": float(row["z"]),
                "p_holm": float(row["p_holm"]),
                "verdict": "FAIL" if failed else "pass",
                "direction": direction,
                "meaning": meaning.format(population=population) if failed else "",
            }
        )
    return pd.DataFrame(rows)


def _convergence_check(result: xr.DataTree, alpha: float) -> ValidationResult | None:
    """The fit's convergence record as a check (None when no NUTS ran)."""
    import pandas as pd

    record = stored_record(result)
    if record is None:
        return None
    passed = bool(record.get("passed", False))
    worst = pd.DataFrame(record.get("worst") or [])
    keep = [c for c in ("parameter", "r_hat", "ess_bulk", "ess_tail") if c in worst]
    worst = worst[keep] if len(worst) else pd.DataFrame(columns=["parameter"])
    worst["flagged"] = not passed
    if passed:
        description = (
            "the sampler met the convergence standard (R-hat <= 1.01, bulk and tail ESS >= "
            "400, no divergences)"
        )
    else:
        description = convergence_message(
            record,
            what=f"the {result.attrs.get('method', 'NUTS')} fit",
            model=result.attrs.get("model"),
            command_line=False,
        )
    r_hat = record.get("r_hat")
    return ValidationResult(
        check="convergence",
        passed=passed,
        statistic=float(r_hat) if r_hat is not None else math.nan,
        p_value=None,
        level=alpha,
        table=worst,
        description=description,
        details={"record": record},
    )


def _raters_known(result: xr.DataTree, answers: Any) -> bool:
    if answers is not None:
        return True

    if constant(result, "answer_rater") is not None:
        return True
    counts = result["observed_data"]["counts"] if "counts" in result["observed_data"] else None
    return counts is not None and bool(counts.attrs.get("n_raters"))


def _suggest(
    model: str, predictive: pd.DataFrame | None, raters: bool, has_cs: bool
) -> tuple[list[dict[str, str]], list[str]]:
    """(suggestions, notes) for the failed predictive rows."""
    if predictive is None or not (predictive["verdict"] == "FAIL").any():
        return [], []
    failed = predictive[predictive["verdict"] == "FAIL"]
    out: list[dict[str, str]] = []
    notes: list[str] = []
    if model == LATENT_CLASS:
        reason = (
            "answers that one true class per item and the raters' confusion rows do not "
            "reproduce are the mark of items that are ambiguous in themselves; it gives each "
            "item its own answer distribution (its ambiguity) beside each rater's bias"
        )
        return [{"model": RATER_MODEL, "reason": reason}], notes
    learned = model == LEARNED_PRIOR
    if model not in (LEARNED_PRIOR, RATER_MODEL):
        answers = "how often each answer" + (", can't-solve included," if has_cs else "")
        out.append(
            {
                "model": LEARNED_PRIOR,
                "reason": (
                    f"a learned prior: it estimates from all items the population of q_i, "
                    f"its mean ({answers} is given) and its concentration (how much answers "
                    "agree and how much that varies over items), which the failures above say "
                    "the fixed prior gets wrong"
                ),
            }
        )
    if model == RATER_MODEL:
        return out, notes
    cs_high = failed[(failed["statistic"] == "cant_solve_share") & (failed["direction"] == "high")]
    if learned:
        why = (
            "the answers disagree with even a learned Dirichlet population of items; raters "
            "who favour a label (or can't-solve) are one cause it cannot absorb"
        )
    elif len(cs_high):
        what = " and ".join(
            {"mean": "more frequent", "sd": "more concentrated on some items"}[summary]
            for summary in cs_high["summary"]
        )
        why = (
            f"can't-solve answers are {what} than predicted, the mark of raters who answer "
            "can't-solve more often than others, which no Dirichlet population of items absorbs"
        )
    else:
        why = (
            f"the next step if {LEARNED_PRIOR} fails too: raters who favour a label make "
            "answers that no Dirichlet population of items reproduces"
        )
    if raters:
        out.append({"model": RATER_MODEL, "reason": f"{why}; it models each rater's bias"})
    else:
        notes.append(
            f"{RATER_MODEL} models rater heterogeneity ({why}), but the data have no rater ids "
            "(on the command line: name the rater column with --rater)"
        )
    return out, notes


def _read_answers(answers: pd.DataFrame) -> pd.DataFrame:
    """The answers table read again as :func:`ambppl.data.read_long` reads it (``fit`` takes
    it read): its own can't-solve label and, for a categorical label, its categories."""
    import pandas as pd

    options = {
        "item": "item",
        "rater": "rater",
        "label": "label",
        "cant_solve": answers.attrs.get("cant_solve"),
    }
    if isinstance(answers["label"].dtype, pd.CategoricalDtype):
        options["categories"] = [str(c) for c in answers["label"].cat.categories]
    return read_long(answers, **options)


def _texts(values: Any) -> list[str]:
    return [str(v) for v in np.asarray(values).tolist()]


def _check_same_answers(
    counts: xr.DataArray, answers: pd.DataFrame, of: str, fitted: str
) -> pd.DataFrame:
    """Refuse answers that are not those of ``counts``; return them read as ``fit`` reads them.

    The counts of ``answers`` (one row per answer) must be ``counts``: the same categories
    (labels, in any order) and can't-solve label, the same items (labels, in any order) and
    the same count of every label on every item, as :func:`ambppl.compare` asks of the fits
    it compares. The order of the rows of ``answers`` does not matter.

    Parameters
    ----------
    counts : xarray.DataArray
        The item x category counts the fit was made from (``result["observed_data"]
        ["counts"]``).
    answers : pandas.DataFrame
        One row per answer, columns ``item``, ``rater``, ``label``.
    of, fitted : str
        For messages: whose answers they must be (``"that result was fitted to"``) and what
        ``counts`` are (``"result['observed_data']['counts']"``).

    Returns
    -------
    pandas.DataFrame
        ``answers`` read again as :func:`ambppl.data.read_long` reads them.

    Raises
    ------
    ValueError
        Where the categories, the items or the counts of an item differ: the message names
        ``answers``, the first difference and the fix.
    """
    import pandas as pd

    read = _read_answers(answers)
    theirs = as_counts(read, "answers")
    subject = messages.say(
        f"answers must be the answers {of}",
        "the answers read with rater ids (--rater) must be those of the counts read from the "
        "same file",
    )
    fitted = messages.say(fitted, "the counts")
    fix = messages.say(
        "pass as answers the answers the fit was made from (the table given to ambppl.fit, "
        "rows in any order), or leave answers out",
        "read the answers and the counts from the same file with the same --item, --label "
        "and --cant-solve",
    )
    categories, ref_categories = (
        _texts(theirs["category"].values),
        _texts(
            counts["category"].values if "category" in counts.coords else range(counts.shape[1])
        ),
    )
    cs, ref_cs = theirs.attrs.get("cant_solve"), counts.attrs.get("cant_solve")
    cs, ref_cs = (None if x is None else str(x) for x in (cs, ref_cs))
    if sorted(categories) != sorted(ref_categories) or cs != ref_cs:
        raise ValueError(
            f"{subject}, but their categories are {categories} (can't-solve {cs!r}) and those "
            f"of {fitted} {ref_categories} (can't-solve {ref_cs!r}): {fix}"
        )
    items = _texts(theirs["item"].values)
    ref_items = _texts(counts["item"].values if "item" in counts.coords else range(counts.shape[0]))
    if set(items) != set(ref_items):
        known = set(ref_items)
        extra = [i for i in items if i not in known]
        where = (
            f"{extra[0]!r} is not among them"
            if extra
            else f"{next(i for i in ref_items if i not in set(items))!r} has no answer"
        )
        raise ValueError(
            f"{subject}, but their {len(items)} items differ from the {len(ref_items)} of "
            f"{fitted} ({where}): {fix}"
        )
    # aligned by label: the rows of answers in another order count the same
    table = pd.DataFrame(np.asarray(theirs.values, dtype=np.float64), items, categories)
    refuse_other_counts(
        table, counts.values, ref_items, ref_categories, subject=subject, fitted=fitted, fix=fix
    )
    return read


# --------------------------------------------------------------------------- the function


def _check_options(
    *,
    alpha: Any,
    answers: Any,
    random_seed: Any,
    compare: Any,
    draws: Any,
    chains: Any,
    progress: Any,
) -> tuple[float, Any, int | None, int | None, Callable[[str], None] | None]:
    """The options of :func:`check_fit` (and of :func:`ambppl.validation.validate`, before it
    fits), checked: ``(alpha, random_seed, draws, chains, progress)``; one TypeError or
    ValueError naming the first bad one."""
    import pandas as pd

    alpha = check_prob(alpha, "alpha")
    if answers is not None and not isinstance(answers, pd.DataFrame):
        raise TypeError(
            "answers must be a pandas.DataFrame with columns item, rater, label (one row per "
            f"answer, as ambppl.data.read_long returns), but got {type(answers).__name__}"
        )
    if answers is not None and not ANSWER_COLUMNS <= set(answers.columns):
        raise ValueError(
            "answers must have the columns item, rater and label (one row per answer, as "
            "ambppl.data.read_long returns), but got the columns "
            f"{[str(c) for c in answers.columns]}"
        )
    random_seed = check_random_seed(random_seed)
    if not isinstance(compare, (bool, np.bool_)):
        raise TypeError(f"compare must be True or False, but got {compare!r}")
    if draws is not None:
        draws = check_positive_int(draws, "draws")
    if chains is not None:
        chains = check_positive_int(chains, "chains")
    progress = check_progress(progress)
    return alpha, random_seed, draws, chains, progress


def check_fit(
    result: xr.DataTree,
    *,
    answers: Any = None,
    alpha: float = 0.01,
    random_seed: Any = None,
    compare: bool = False,
    draws: int | None = None,
    chains: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> FitCheck:
    """Run every check that applies to a fit, name what fails and suggest the model to try.

    The checks (each of the ``m`` checks of the draws that apply decided at ``alpha / m``,
    so that a correct fit fails the verdict with probability at most ``alpha``):

    - ``moments``: :func:`check_moments` (closed-form posterior moments; models with a
      fixed or learned Dirichlet prior);
    - ``density``: :func:`check_density` (the exact two-class law; fixed-prior fits with
      two-class items);
    - ``predictive``: :func:`check_predictive` (the mixed predictive: do replicated answers
      look like the observed ones?);
    - ``convergence``: after NUTS, the fit's convergence record (R-hat <= 1.01, bulk and
      tail ESS >= 400, no divergences; :data:`ambppl.inference.CONVERGENCE`).

    A check that does not apply is skipped with the reason. ``ambppl validate FILE`` prints
    the returned :meth:`FitCheck.text` and exits 1 when ``passed`` is False.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` (any catalog model and method).
    answers : pandas.DataFrame, optional
        The answers the fit was made from, one row per answer with rater ids (columns
        ``item``, ``rater``, ``label``: :func:`ambppl.data.read_long`; rows in any order).
        Their counts must be those the fit holds (``result["observed_data"]["counts"]``: the
        same categories and can't-solve label, the same items and the same count of every
        label on every item), which is checked before any check runs. Needed only to fit
        ``rater_effects`` with ``compare=True``; without it the suggestion of
        ``rater_effects`` rests on whether the counts were read with rater ids.
    alpha : float, default 0.01
        False-alarm rate of the verdict: the checks of the draws that apply (``m`` of
        ``moments``, ``density``, ``predictive``) are each decided at ``alpha / m``
        (Bonferroni; the convergence check is a standard, not a test).
    random_seed : int, numpy.random.Generator or None
        Seed of the predictive replications and of the compared fits.
    compare : bool, default False
        Fit each suggested model with its defaults (its default method and parameters; the
        draws and chains of ``result`` unless ``draws``/``chains`` say otherwise), check it
        the same way and add the table :attr:`FitCheck.comparison`.
    draws, chains : int, optional
        Draws per chain and chains of the compared fits (default: those of ``result``).
    progress : callable, optional
        Called with one line of text before each check and each compared fit (the command
        line prints it on stderr).

    Returns
    -------
    FitCheck
        ``passed`` (also its truth value), the checks by name, the skipped ones with
        reasons, ``table`` (one row per check), ``predictive`` (one row per statistic:
        observed value, predicted interval, verdict, meaning), ``suggestions`` and, with
        ``compare=True``, ``comparison``.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree, ``answers`` is not a DataFrame, ``random_seed`` is
        not an int, Generator or None, ``compare`` is not a bool, ``progress`` is not
        callable, or ``draws``/``chains`` are not integers.
    ValueError
        If ``result`` is not a fit result (no ``posterior`` or ``observed_data``), or
        ``alpha`` is outside (0, 1), ``random_seed`` is negative, or ``draws``/``chains``
        are not positive; or if ``answers`` lack the columns ``item``, ``rater``, ``label``
        or are not the answers ``result`` was fitted to: their categories, their items or the
        counts of an item differ from ``result["observed_data"]["counts"]`` (as
        :func:`ambppl.compare` refuses fits of other data; otherwise ``compare=True`` would
        fit ``rater_effects`` to other data than ``result``'s).

    Notes
    -----
    Reading the predictive check. Each row compares a summary over items (``mean`` or
    ``sd``) of a per-item statistic of the observed answers (``modal_share``: the share of
    the most frequent proper answer; ``cant_solve_share``; ``plugin_amb``: the plug-in
    ambiguity) with its distribution over data sets replicated from the model's population
    of items. The interval is the central normal interval (replicated mean +- quantile x
    replicated sd) at the level Holm's procedure tested the row at, so a row fails exactly
    when the observed value lies outside its interval.

    The verdict's level. Each check holds its own level over its rows (Holm); over the checks
    the verdict takes Bonferroni's: with ``m`` checks of the draws, each at ``alpha / m``.
    Measured on correct exact fits of data simulated from the flat model (200 items x 10
    answers, ``q_i ~ Dirichlet(1, 1, 1)`` with can't-solve last, 2 x 500 draws, the three
    checks applying; ``python benchmarks/calibration_validation.py --seeds 0 --power-seeds 0
    --check-fit 300``; 2026-12-08): at ``alpha = 0.01`` the verdict failed 2 of 300 fits
    (0.007 +- 0.005, both on a ``moments`` mean row); with every check at ``alpha`` it had
    failed 5 of 150 (0.033 +- 0.015: moments 3, density 1, predictive 1).

    Suggestions. A fixed prior that fails the predictive check (too much or too little
    agreement, over-dispersion, a can't-solve rate unlike ``1/K``) misdescribes the
    population of items: ``hierarchical_dirichlet`` learns that population. Can't-solve
    shares that no Dirichlet population reproduces, or a learned prior that still fails,
    point to rater heterogeneity: ``rater_effects`` (which needs rater ids). A failed moment
    or density check is a computation error, and a failed convergence check a sampling
    problem; neither is a reason to change the model.

    Examples
    --------
    >>> import numpy as np, ambppl
    >>> from ambppl.validation import check_fit
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.multinomial(10, rng.dirichlet(np.ones(3), size=100))
    >>> counts = ambppl.read_annotations(counts, cant_solve="2")
    >>> result = ambppl.fit(counts, draws=200, chains=2, random_seed=1)
    >>> check = check_fit(result, random_seed=2)
    >>> check.passed, sorted(check.checks), list(check.skipped)
    (True, ['density', 'moments', 'predictive'], [])
    >>> check.predictive[["summary", "statistic", "verdict"]].head(2).values.tolist()
    [['mean', 'modal_share', 'pass'], ['sd', 'modal_share', 'pass']]
    """
    return _check_fit(
        result,
        answers=answers,
        alpha=alpha,
        random_seed=random_seed,
        compare=compare,
        draws=draws,
        chains=chains,
        progress=progress,
    )


def _check_fit(
    result: xr.DataTree,
    *,
    answers: Any,
    alpha: Any,
    random_seed: Any,
    compare: Any,
    draws: Any,
    chains: Any,
    progress: Any,
    answers_known: bool = False,
) -> FitCheck:
    """:func:`check_fit`; ``answers_known``: the caller made the fit from ``answers`` (or
    checked them against its data), so they are not checked again (``validate``, and the
    fits of ``compare``)."""
    import pandas as pd

    check_fit_tree(result)
    alpha, random_seed, draws, chains, progress = _check_options(
        alpha=alpha,
        answers=answers,
        random_seed=random_seed,
        compare=compare,
        draws=draws,
        chains=chains,
        progress=progress,
    )
    read = None  # the answers read as fit reads them, where they were checked here
    # (a tree built by hand may hold no counts to check them against)
    if answers is not None and not answers_known and "counts" in result["observed_data"]:
        read = _check_same_answers(
            result["observed_data"]["counts"],
            answers,
            "that result was fitted to",
            "result['observed_data']['counts']",
        )
    attrs = {**result["posterior"].attrs, **result.attrs}
    model = str(attrs.get("model", "unknown"))
    method = str(attrs.get("method", "unknown"))
    rng = np.random.default_rng(random_seed)
    population = _population(result, model, method)

    ran: dict[str, ValidationResult] = {}
    skipped: dict[str, str] = {}
    errors: dict[str, str] = {}
    records = []
    functions = {"moments": check_moments, "density": check_density}
    say = progress or (lambda message: None)
    for name in ("moments", "density", "predictive"):
        say(f"check {name}")
        try:
            if name == "predictive":  # the last check: at its level if it applies (below)
                level = alpha / (len(ran) + 1)
                out = check_predictive(result, alpha=level, random_seed=rng)
            else:
                out = functions[name](result, alpha=alpha)
        except NotApplicable as err:  # the check does not apply to this kind of fit
            skipped[name] = " ".join(str(err).split())
            records.append({"check": name, "verdict": "skipped", "note": skipped[name]})
            continue
        except ValueError as err:  # the result is broken for this check: a failure
            errors[name] = " ".join(str(err).split())
            records.append({"check": name, "verdict": "ERROR", "note": errors[name]})
            continue
        if len(out.table) == 0:  # nothing to test (e.g. no two-class item)
            skipped[name] = out.description
            records.append({"check": name, "verdict": "skipped", "note": out.description})
            continue
        ran[name] = out
        records.append({"check": name})  # filled in below, at the check's level
    # every check that ran on the draws is decided at alpha / m (Bonferroni): a correct fit
    # then fails some check with probability at most alpha, whatever their dependence
    level = alpha / max(1, len(ran))
    ran = {name: at_level(out, level) for name, out in ran.items()}
    records = [_record(r["check"], ran[r["check"]]) if r["check"] in ran else r for r in records]
    convergence = _convergence_check(result, alpha)
    if convergence is not None:
        ran["convergence"] = convergence
        records.append(_record("convergence", convergence))
    table = pd.DataFrame(
        records, columns=["check", "verdict", "statistic", "p_value", "flagged", "note"]
    )
    predictive = _predictive_table(ran["predictive"], population) if "predictive" in ran else None
    has_cs = predictive is not None and bool((predictive["statistic"] == "cant_solve_share").any())
    suggested, notes = _suggest(model, predictive, _raters_known(result, answers), has_cs)
    suggestions = pd.DataFrame(suggested, columns=["model", "reason"])
    passed = bool(ran) and not errors and all(c.passed for c in ran.values())
    comparison = None
    if compare:
        comparison = _compare(
            result,
            answers,
            read,
            model,
            method,
            passed,
            ran,
            suggestions,
            alpha,
            rng,
            draws,
            chains,
            say,
        )
    return FitCheck(
        model=model,
        method=method,
        passed=passed,
        level=alpha,
        checks=ran,
        skipped=skipped,
        table=table,
        predictive=predictive,
        suggestions=suggestions,
        comparison=comparison,
        notes=notes,
        population=population,
        errors=errors,
    )


def _record(name: str, out: ValidationResult) -> dict[str, Any]:
    return {
        "check": name,
        "verdict": "pass" if out.passed else "FAIL",
        "statistic": out.statistic,
        "p_value": out.p_value,
        "flagged": f"{out.n_flagged} of {len(out.table)}",
        "note": None,
    }


def _compare(
    result: xr.DataTree,
    answers: Any,
    read: pd.DataFrame | None,
    model: str,
    method: str,
    passed: bool,
    ran: dict[str, ValidationResult],
    suggestions: pd.DataFrame,
    alpha: float,
    rng: np.random.Generator,
    draws: int | None,
    chains: int | None,
    say: Callable[[str], None],
) -> pd.DataFrame:
    """Fit each suggested model with its defaults and check it: one row per model
    (``read``: ``answers`` read as :func:`ambppl.data.read_long` reads them, or None)."""
    import pandas as pd

    post = result["posterior"]
    draws = draws or int(post.sizes.get("draw", 1000))
    chains = chains or int(post.sizes.get("chain", 4))
    rows = [_comparison_row(model, method, ran, passed, "")]
    counts = result["observed_data"]["counts"]
    for name in suggestions["model"]:
        entry = get_model(str(name))
        default = next(iter(entry.info["methods"]))
        long = entry.info.get("data") == "long"
        if long and answers is None:
            rows.append(
                {
                    "model": name,
                    "method": default,
                    "verdict": "not fitted",
                    "note": "needs the answers with rater ids (answers=; on the command line "
                    "the file's rater column, --rater)",
                }
            )
            continue
        if not long:
            data = counts
        else:  # the answers table (those of the fit), read as read_long reads it
            data = read if read is not None else _read_answers(answers)
        seed = int(rng.integers(2**32))
        say(f"fitting {name} ({default}, {chains} x {draws} draws) to compare")
        with warnings.catch_warnings():
            # the convergence record is the 'convergence' check of the row
            warnings.simplefilter("ignore", ConvergenceWarning)
            other = fit(data, model=str(name), draws=draws, chains=chains, random_seed=seed)
        check = _check_fit(  # fitted to these answers or to the counts they were checked to make
            other,
            answers=answers,
            alpha=alpha,
            random_seed=rng,
            compare=False,
            draws=None,
            chains=None,
            progress=None,
            answers_known=True,
        )
        note = ""
        if "convergence" in check.checks and not check.checks["convergence"].passed:
            record = check.checks["convergence"].details["record"]
            worst = (record.get("worst") or [{}])[0].get("parameter")
            note = "missed the convergence standard" + (f" (worst: {worst})" if worst else "")
        row = _comparison_row(str(name), check.method, check.checks, check.passed, note)
        if check.predictive is not None:
            failed = check.predictive[check.predictive["verdict"] == "FAIL"]
            if len(failed):
                named = ", ".join(
                    f"{s} {t}" for s, t in zip(failed["summary"], failed["statistic"], strict=True)
                )
                row["note"] = "; ".join(filter(None, [row["note"], f"predictive fails on {named}"]))
        rows.append(row)
    columns = ["model", "method", *CHECKS, "verdict", "note"]
    table = pd.DataFrame(rows).reindex(columns=columns)
    for name in CHECKS:
        table[name] = table[name].fillna("-")
    return table


def _comparison_row(
    model: str, method: str, checks: dict[str, ValidationResult], passed: bool, note: str
) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model, "method": method, "note": note}
    for name in CHECKS:
        row[name] = ("pass" if checks[name].passed else "FAIL") if name in checks else "-"
    row["verdict"] = "pass" if passed else "FAIL"
    return row
