"""``ambppl validate``: posteriors checked against closed forms, exact laws and the data: the
stored reference cases, or one fit of an annotations file (:func:`ambppl.validation.validate`);
exit status 1 when a check fails."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ambppl import validation
from ambppl.cli.common import UsageError, _progress, _reporter, subcommand
from ambppl.cli.inputs import _names_raters, _read, _reads_answers
from ambppl.cli.options import _add_input_options, _add_model_options, _open_prob
from ambppl.cli.settings import _model_settings, _nuts_options
from ambppl.cli.signals import _warnings_as_lines
from ambppl.data import check_input_path, command_line_messages


@subcommand("validate")
def _add_validate(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "validate",
        help="check posteriors against closed forms, exact laws and the data",
        description="Without a file: fit every stored reference case (models/reference) and "
        "check the draws against its reference posterior, the closed-form moments, the exact "
        "two-class law and posterior predictive replications. With an annotations file: fit "
        "it (same options as 'score') and run the closed-form, exact-density, predictive and "
        "(after NUTS) convergence checks that apply to the model: one verdict line per check, "
        "then each predictive statistic (observed, predicted interval, verdict), what a "
        "failure means and the catalog model that addresses it (--compare fits those); where "
        "only the convergence check applies, the last line says that the posterior was not "
        "checked. Exit status 0 when every check passes (without a file: when Holm's "
        "procedure across the reference, moments and density rows of all cases rejects none "
        "at --alpha), 1 when one fails, 2 for bad input.",
        epilog="examples:\n"
        "  ambppl validate\n"
        "  ambppl validate --method nuts --draws 500\n"
        '  ambppl validate answers.csv --cant-solve "I can\'t tell"\n'
        '  ambppl validate answers.csv --cant-solve "I can\'t tell" --model '
        "hierarchical_dirichlet\n"
        '  ambppl validate answers.csv --cant-solve "I can\'t tell" --compare',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser, optional=True)
    _add_model_options(parser)
    checks = parser.add_argument_group("checks")
    checks.add_argument(
        "--alpha",
        type=_open_prob,
        default=0.01,
        help="false-alarm rate of the verdict: with a file, each of the m checks of the "
        "draws that apply is decided at alpha / m (family-wise over its rows); without, "
        "Holm across the reference cases' rows (default: %(default)s)",
    )
    checks.add_argument(
        "--compare",
        action="store_true",
        help="with a file: also fit each model suggested for a failed check (with its "
        "defaults and --draws/--chains/--seed), check it the same way and print a table of "
        "which pass; the exit status stays that of --model's fit",
    )
    group = parser.add_argument_group("output")
    group.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    parser.set_defaults(handler=_run_validate, measure=None)
    return parser


def _reading_options_given(args: argparse.Namespace) -> list[str]:
    """The options that read an annotations file (``--item``, ``--sep``, ...) set to other
    than their defaults, as written on the command line."""
    scratch = argparse.ArgumentParser(add_help=False)
    _add_input_options(scratch, optional=True)
    defaults = vars(scratch.parse_args([]))
    return [
        "--" + name.replace("_", "-")
        for name, value in defaults.items()
        if name != "annotations" and getattr(args, name) != value
    ]


def _run_validate(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    if args.annotations is not None:
        return _validate_file(args, start)
    _refuse_file_options(args)
    # the method and --tune/--target-accept checked as for a file: NUTS options with a
    # method that runs no NUTS are refused, not ignored
    method, _ = _model_settings(args)
    _progress(args, "fitting the reference cases")
    given = {k: v for k, v in (("draws", args.draws), ("chains", args.chains)) if v is not None}
    with command_line_messages(), _warnings_as_lines():
        cases = validation.run_reference_cases(
            method=method,
            **given,  # else the reference cases' own defaults
            random_seed=args.seed,
            alpha=args.alpha,
            sample_kwargs=_nuts_options(args) or None,
        )
    decided = _print_reference_table(cases.table, args.alpha)
    word = "all checks passed" if cases.passed else "a check FAILED"
    print(
        f"{word} (family-wise level {args.alpha:g} over the {decided} rows that decide; "
        f"{time.perf_counter() - start:.1f} s)"
    )
    return 0 if cases.passed else 1


def _refuse_file_options(args: argparse.Namespace) -> None:
    """Refuse, for the reference cases (no file), the options that apply to a file."""
    if args.compare:
        raise UsageError(
            "--compare fits other models to an annotations file: give the file, or leave "
            "--compare out to run the reference cases"
        )
    reading = _reading_options_given(args)
    if reading:
        named = ", ".join(reading[:-1]) + " and " + reading[-1] if reading[1:] else reading[0]
        raise UsageError(
            f"{named} appl{'ies' if len(reading) == 1 else 'y'} to an "
            "annotations file, but none is given (the reference cases carry their own data): "
            "give the file, or leave them out"
        )
    if args.model != "dirichlet_categorical" or args.param or args.prior is not None:
        raise UsageError(
            "the reference cases carry their own model and prior: give an annotations "
            "file to validate --model/--param/--prior, or leave them out"
        )


def _print_reference_table(rows: Any, alpha: float) -> int:
    """Print the reference cases' table and its legend; return the rows that decide."""
    import pandas as pd

    # the verdict of each row is the family-wise decision (Holm across the rows that decide),
    # so that the column agrees with the last line; a row outside the decision shows its
    # check's own verdict, marked *
    verdict = pd.DataFrame(
        {
            "case": rows["case"],
            "check": rows["check"],
            "verdict": [
                _row_verdict(ok, flagged, decided)
                for ok, flagged, decided in zip(
                    rows["passed"], rows["flagged"], rows["in_decision"], strict=True
                )
            ],
            "statistic": rows["statistic"],
            "p_value": rows["p_value"],
            "p_holm": rows["p_holm"],
            "rows_flagged": rows["n_flagged"],
        }
    )
    with pd.option_context("display.max_rows", None, "display.width", 200):
        shown = verdict.astype(object).map(
            lambda x: f"{x:.3g}" if isinstance(x, float) and x == x else "" if x != x else x
        )
        print(shown.to_string(index=False))
    decided = int(rows["in_decision"].sum())
    print(
        "p_value: the check's own (Holm over its rows); p_holm: Holm across the "
        f"{decided} rows that decide, a row fails when p_holm <= {alpha:g}; rows_flagged: "
        "rows of the check's own table flagged at its own level"
    )
    print(
        "* not part of the verdict (its check's own verdict at level "
        f"{alpha:g}): the predictive check tests whether the model fits the data, and "
        "the reference cases are edge cases chosen to be unlike it"
    )
    return decided


def _row_verdict(own: Any, flagged: Any, decided: Any) -> str:
    """A reference-case row's verdict: the family-wise decision (``flagged``) for a row that
    decides; its check's own verdict, marked ``*``, for one that does not; ``n/a`` for a
    check that did not run (``passed`` None: its module is not available)."""
    if own is None or own != own:
        return "n/a"
    if decided:
        return "FAIL" if flagged else "pass"
    return ("pass" if own else "FAIL") + " *"


def _validate_file(args: argparse.Namespace, start: float) -> int:
    """``validate FILE``: read, call :func:`ambppl.validation.validate` once, print its text."""

    check_input_path(args.annotations)
    method, params = _model_settings(args)
    data = _read(args, answers=_reads_answers(args))
    answers = None
    if args.compare and hasattr(data, "sizes") and _names_raters(args):
        try:  # rater_effects, if suggested, fits the answers with their rater ids
            answers = _read(args, answers=True)
        except UsageError:
            answers = None
    with command_line_messages(), _warnings_as_lines():
        check = validation.validate(
            data,
            args.model,
            method=method,
            answers=answers,
            alpha=args.alpha,
            compare=args.compare,
            draws=args.draws,
            chains=args.chains,
            sample_kwargs=_nuts_options(args) or None,
            random_seed=args.seed,
            progressbar=not args.quiet and sys.stderr.isatty(),
            progress=_reporter(args),
            **params,
        )
    print(check.text(command_line=True))
    word = "all checks passed" if check.passed else "a check FAILED"
    if check.passed and not check.posterior_checks:
        # the sampler converged, but nothing tested its draws: say so, not "all passed"
        word = "passed: convergence only; no check of the posterior applies to this fit"
    if not check.checks and not check.errors:
        word = "NOTHING CHECKED: no check applies to this fit"
    m = len(check.posterior_checks)
    each = f", each of {m} checks at {args.alpha / m:.3g}" if m > 1 else ""
    print(f"{word} (level {args.alpha:g}{each}; {time.perf_counter() - start:.1f} s)")
    return 0 if check.passed else 1
