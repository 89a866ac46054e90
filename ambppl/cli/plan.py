"""``ambppl plan``: where to spend a budget of further answers, in closed form under the
flat Dirichlet model: the table of :func:`ambppl.analysis.planning.plan`."""

from __future__ import annotations

import argparse
from typing import Any

from ambppl.analysis.planning import plan
from ambppl.cli.common import UsageError, _reporter, subcommand
from ambppl.cli.inputs import _read
from ambppl.cli.options import (
    PRIOR_PER_CATEGORY,
    _add_input_options,
    _add_output_options,
    _nonnegative_int,
    _open_prob,
    _prior,
)
from ambppl.cli.output import _emit, _table_output
from ambppl.data import check_input_path, command_line_messages


@subcommand("plan")
def _add_plan(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "plan",
        help="where to spend a budget of further answers (CSV, TSV, Parquet or on screen)",
        description="Allocate a budget of further answers across the items and write one row "
        "per item, most extra answers first: number of answers so far, extra answers "
        "allocated, the posterior sd of the measure now and the expected posterior sd after "
        "the extra answers (the root of the expected posterior variance). The model is the "
        "flat Dirichlet model, dirichlet_categorical with a fixed prior (--prior), computed in "
        "closed form: no sampling.",
        epilog="examples:\n"
        '  ambppl plan answers.csv --cant-solve "I can\'t tell" --budget 500 -o plan.csv\n'
        "  ambppl plan answers.csv --budget 200 --measure modified --prior 0.5 -o - | head\n"
        "  ambppl plan counts.npy --budget 1000",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser)
    group = parser.add_argument_group("plan")
    group.add_argument(
        "--budget",
        type=_nonnegative_int,
        required=True,
        help="number of further answers to allocate (a whole number >= 0)",
    )
    group.add_argument(
        "--objective",
        choices=("variance", "decision"),
        default="variance",
        help="what to make small: variance (the total expected posterior variance of the "
        "measure) or decision (the chance of getting 'measure > --threshold' wrong, where "
        "the library offers it); default: %(default)s",
    )
    group.add_argument(
        "--threshold",
        type=_open_prob,
        default=None,
        help="the t of 'measure > t' for --objective decision, refused with the variance "
        "objective, which has no threshold (default: 0.4)",
    )
    group.add_argument(
        "--measure",
        choices=("amb", "modified"),
        default="amb",
        help="ambiguity measure (default: %(default)s)",
    )
    group.add_argument(
        "--prior",
        type=_prior,
        default=1.0,
        help="the flat Dirichlet model's fixed prior: one positive number for a symmetric "
        f"prior or {PRIOR_PER_CATEGORY} (default: 1)",
    )
    _add_output_options(
        parser,
        "output file; its suffix picks the format (.csv, .tsv, .parquet/.pq); '-' writes "
        "CSV to stdout; default: a readable table on screen",
        None,
    )
    parser.set_defaults(handler=_run_plan)
    return parser


def _run_plan(args: argparse.Namespace) -> int:
    """Check the input and the output, read the counts, call :func:`ambppl.analysis.plan`
    once, write."""
    if args.threshold is not None and args.objective != "decision":
        raise UsageError(
            f"--threshold applies to --objective decision, but got --objective "
            f"{args.objective}, which has no threshold: drop --threshold, or add "
            "--objective decision"
        )
    check_input_path(args.annotations)
    output, write = _table_output(args, args.annotations)  # before any work
    counts = _read(args)
    given = {} if args.threshold is None else {"threshold": args.threshold}  # else plan's
    with command_line_messages():  # refusals name --budget
        table = plan(
            counts,
            args.budget,
            objective=args.objective,
            measure=args.measure,
            prior=args.prior,
            progress=_reporter(args),
            **given,
        )
    return _emit(args, output, write, table)
