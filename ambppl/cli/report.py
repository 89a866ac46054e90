"""``ambppl report``: the self-contained HTML diagnostics report of a fit, from one call of
:func:`ambppl.report.build_report`, which picks the route (for the exact fixed-prior model
:func:`ambppl.report.score_report` without per-item draws)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ambppl.analysis.scoring import MCSE_TARGET
from ambppl.cli.common import UsageError, _progress, _reporter, subcommand
from ambppl.cli.inputs import _read, _reads_answers
from ambppl.cli.options import (
    _add_input_options,
    _add_model_options,
    _add_output_options,
    _add_summary_options,
    _mcse,
    _positive_int,
)
from ambppl.cli.output import _check_output, atomic_output
from ambppl.cli.score import _what_the_fit_gives
from ambppl.cli.settings import _model_settings, _nuts_options
from ambppl.cli.signals import _warnings_as_lines
from ambppl.data import check_input_path, command_line_messages
from ambppl.report import build_report
from ambppl.report.scored import MODEL as SCORED_MODEL


@subcommand("report")
def _add_report(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="self-contained HTML diagnostics report",
        description="Fit the model and write one HTML file (figures embedded, no network "
        "access needed) that opens, before any table, with whether the draws can be trusted "
        "(exact draws; for a fit that runs NUTS whether it met the convergence standard, and "
        "if not the worst parameters, their rank plots and what to do) and, one line each, "
        "every warning of reading the data, of the fit and of the report and every finding "
        "that limits trust in the numbers (a hyperparameter its prior decides or whose prior "
        "the data pull against, draws that disagree with the closed forms or could not be "
        "checked against them), then the data overview, the model and prior, convergence "
        "diagnostics, the check of the draws against the closed-form moments, the "
        "distribution of item ambiguity, a sortable ranked item table, the most ambiguous "
        "items with their answer counts and the sensitivity to the prior; for a learned "
        "prior (--model hierarchical_dirichlet) also the learned prior and its shrinkage. "
        "The default model (dirichlet_categorical, exact draws) stores no per-item draws: "
        "its item table is that of 'ambppl score' (closed-form mean and sd, draws once per "
        "distinct count vector) and the draws checked against the closed forms are those of "
        "one item per distinct count vector (at most 2000), so millions of items fit in "
        "memory; the page lists the 10,000 most ambiguous items.",
        epilog="examples:\n"
        '  ambppl report answers.csv --cant-solve "I can\'t tell" -o report.html\n'
        "  ambppl report answers.parquet --item question --rater worker --label answer \\\n"
        "      --method nuts --draws 500 -o dogs.html --force\n"
        '  ambppl report answers.csv --cant-solve "I can\'t tell" \\\n'
        "      --model hierarchical_dirichlet --param kappa_scale=0.5 -o learned.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser)
    _add_model_options(parser)
    _add_summary_options(parser)
    group = parser.add_argument_group("report")
    group.add_argument(
        "--top",
        type=_positive_int,
        default=15,
        help="items shown in the most-ambiguous and prior-sensitivity sections "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--mcse",
        type=_mcse,
        default=None,
        help="dirichlet_categorical with exact draws: the item table comes from draws made "
        "once per distinct count vector, enough to bound the Monte Carlo standard error of "
        "P(measure > threshold) by this; --draws and --chains then apply to the items whose "
        "draws are checked against the closed forms (refused with another model or method; "
        f"default: {MCSE_TARGET})",
    )
    _add_output_options(parser, "the HTML file to write (default: %(default)s)", "report.html")
    parser.set_defaults(handler=_run_report)
    return parser


def _run_report(args: argparse.Namespace) -> int:
    """Check the command line and the output, read the input (its warnings go to the page's
    first section too), call :func:`ambppl.report.build_report` once (it picks the route),
    write."""
    check_input_path(args.annotations)
    output = Path(args.output)
    if output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"the report is HTML: end the output name in .html, but got '{output}'")
    _check_output(output, args.force, source=args.annotations)
    method, params = _model_settings(args)
    # --mcse serves the route without per-item draws (build_report's score_report) only
    if args.mcse is not None and (args.model, method or "exact") != (SCORED_MODEL, "exact"):
        raise UsageError(
            f"--mcse bounds the draws per distinct count vector of {SCORED_MODEL}'s "
            f"exact route, but --model {args.model} with --method {method or 'its default'} "
            f"{_what_the_fit_gives(method or '')}"
        )
    read_warnings: list[Any] = []  # also on the page's first section
    data = _read(args, answers=_reads_answers(args), collect=read_warnings)
    with command_line_messages(), _warnings_as_lines():
        html = build_report(
            data,
            args.model,
            method=method,
            measure=args.measure,
            hdi_prob=args.hdi_prob,
            threshold=args.threshold,
            top=args.top,
            **({} if args.mcse is None else {"mcse": args.mcse}),
            draws=args.draws,
            chains=args.chains,
            sample_kwargs=_nuts_options(args) or None,
            random_seed=args.seed,
            command=args.command_line,
            # the file's name, also for models fitted to its rows (their counts say DataFrame)
            source=str(args.annotations),
            progressbar=not args.quiet and sys.stderr.isatty(),
            progress=_reporter(args),
            read_warnings=read_warnings,
            **params,
        )
    with atomic_output(output, force=args.force) as tmp:
        tmp.write_text(html, encoding="utf-8")
    _progress(args, f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    return 0
