"""``ambppl score``: the per-item ambiguity table of any model, from one call of
:func:`ambppl.score`, which picks the route (distinct count vectors, in memory or in chunks
with dask, or a fit and its summary); written ranked, or for counts read in chunks part by
part in the data's order."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ambppl.analysis.scoring import MCSE_TARGET, LazyScore, is_conjugate_route, score
from ambppl.analysis.summary import rank
from ambppl.cli.common import UsageError, _one_line, _progress, _reporter, subcommand
from ambppl.cli.inputs import _format, _read, _reads_answers
from ambppl.cli.options import (
    _add_input_options,
    _add_model_options,
    _add_output_options,
    _add_summary_options,
    _mcse,
    _positive_int,
)
from ambppl.cli.output import (
    PARQUET_SUFFIXES,
    _emit,
    _table_output,
    atomic_output,
    write_dataset,
)
from ambppl.cli.scheduler import _scheduler
from ambppl.cli.settings import _model_settings, _nuts_options
from ambppl.cli.signals import _warnings_as_lines
from ambppl.data import LazyCounts, check_input_path, command_line_messages, opens_in_chunks
from ambppl.inference.catalog import get_model
from ambppl.inference.fitting import POINT_METHODS

#: Items per chunk when ``ambppl score`` reads counts from zarr or Parquet in chunks.
CHUNK_ITEMS = 1_000_000


@subcommand("score")
def _add_score(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "score",
        help="per-item ambiguity table (CSV, TSV, Parquet or on screen)",
        description="Fit the model and write one row per item, most ambiguous first: number "
        "of answers, can't-solve share, plug-in and less-biased estimates, posterior mean, "
        "sd, closed-form mean and sd, HDI and P(measure > threshold).",
        epilog="examples:\n"
        '  ambppl score answers.csv --cant-solve "I can\'t tell"\n'
        "  ambppl score answers.csv --item tweet_id --rater worker_id --label emotion \\\n"
        '      --cant-solve "I can\'t tell" -o scores.parquet\n'
        "  ambppl score answers.tsv --prior 0.5 --threshold 0.3 -o - | head\n"
        "  ambppl score answers.csv --model hierarchical_dirichlet --param kappa_scale=0.5\n"
        "  ambppl score counts.npy --mcse 0.01 -o scores.csv\n"
        "  ambppl score answers.csv --method nuts --draws 2000 --seed 1 -o scores.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser)
    _add_model_options(parser)
    summary = _add_summary_options(parser)
    summary.add_argument(
        "--mcse",
        type=_mcse,
        default=None,
        help="conjugate models (dirichlet_categorical; hierarchical_dirichlet with --method "
        "empirical_bayes): bound on the Monte Carlo standard error of P(measure > threshold); "
        "each distinct count vector gets the exact draws it needs and no per-item draws are "
        "stored (--draws and --chains then do not apply; refused with a method that fits "
        f"draws; default: {MCSE_TARGET})",
    )
    _add_scale_options(parser)
    _add_output_options(
        parser,
        "output file; its suffix picks the format (.csv, .tsv, .parquet/.pq); '-' writes "
        "CSV to stdout; default: a readable table on screen",
        None,
    )
    parser.set_defaults(handler=_run_score)
    return parser


def _add_scale_options(parser: argparse.ArgumentParser) -> None:
    """The scale group: chunks of items and the dask scheduler that runs them."""
    scale = parser.add_argument_group("scale")
    scale.add_argument(
        "--chunk-items",
        type=_positive_int,
        default=None,
        help="counts in a zarr store or a Parquet file of counts (--layout counts, or without "
        "--layout integer columns none headed like the rater or label column of answers, "
        "worker, annotator, label, answer, ...: other Parquet files hold answers, read as by "
        "ambppl plan) are read and scored with dask in chunks of this many items (a "
        "Parquet file's whatever its row groups, the last chunk of each file holding the "
        "rest; a zarr store keeps its own chunks) and written part by part (-o "
        "x.parquet: a Parquet dataset folder; .csv/.tsv: one file; items in the data's "
        "order, no rank column; on screen or with -o -, the whole table is collected in "
        "memory and written ranked, with a rank column); without "
        f"it, such counts of more than {CHUNK_ITEMS} items are scored in chunks of that many "
        "and smaller ones are read into memory (ranked; every method); a long answers "
        "file (CSV, TSV or Parquet; long is the default layout) too large for memory is "
        "counted with dask block by block (default: read "
        "into memory); --layout wide and counts in a text or .npy file are read into memory",
    )
    scale.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the chunks on a dask.distributed cluster: the scheduler's address (e.g. "
        "tcp://10.0.0.5:8786), or threads, processes or synchronous for a local dask "
        "scheduler (default: dask's threads)",
    )


def _run_score(args: argparse.Namespace) -> int:
    """Check the command line and the output, read the input (:func:`ambppl.data.read_input`
    through :func:`_read`), call :func:`ambppl.score` once, write."""
    path = check_input_path(args.annotations)
    method, params = _model_settings(args)
    answers = _reads_answers(args)
    # fail before the expensive part: the output is checked before the input is read, but
    # for counts that open in chunks (opening reads only metadata), which tell whether the
    # output is a Parquet dataset folder (scored in chunks) or a file (read into memory)
    chunked = not answers and opens_in_chunks(path, _format(args), item=args.item, label=args.label)
    if not chunked:
        output, write = _table_output(args, path)
    _refuse_unused_mcse(args, method)
    _say_unused_sampling(args, method)
    with _scheduler(args):
        data = _read(
            args,
            answers=answers,
            lazy=args.chunk_items or CHUNK_ITEMS,
            chunk_items=args.chunk_items,
        )
        # without --chunk-items, counts that one chunk would hold are read into memory:
        # ranked, and every method takes them (their number from the source's metadata)
        if args.chunk_items is None and isinstance(data, LazyCounts):
            n_items = data.n_items
            if n_items is not None and n_items <= CHUNK_ITEMS:
                data = data.compute()
        if chunked:
            suffix = Path(args.output or "").suffix.lower()
            dataset = isinstance(data, LazyCounts) and suffix in PARQUET_SUFFIXES
            output, write = _table_output(args, path, folder=dataset)
        try:
            with command_line_messages(), _warnings_as_lines():
                table = score(data, args.model, **_score_keywords(args, method), **params)
        except ImportError as err:  # e.g. dask or a NUTS sampler not installed
            raise UsageError(_one_line(str(err))) from err
        if isinstance(table, LazyScore):
            return _write_lazy(args, output, table)
        return _emit(args, output, write, rank(table))


def _refuse_unused_mcse(args: argparse.Namespace, method: str) -> None:
    """Refuse --mcse where the route fits draws (it bounds the exact draws per distinct
    count vector of the conjugate route only), as ``ambppl.score`` refuses ``mcse=``."""
    if args.mcse is not None and not is_conjugate_route(get_model(args.model), method):
        raise UsageError(
            f"--mcse bounds the exact draws of a conjugate model (dirichlet_categorical; "
            f"hierarchical_dirichlet with --method empirical_bayes), but --model {args.model} "
            f"with --method {method} {_what_the_fit_gives(method)}"
        )


def _what_the_fit_gives(method: str) -> str:
    """The end of the --mcse refusal for a fitted route (``ambppl score`` and ``ambppl
    report``): draws, whose number --draws sets, or the one point of ``--method map``, which
    has no draws and no Monte Carlo error (and refuses --draws)."""
    if method in POINT_METHODS:
        return (
            "gives one point, the posterior mode: no draws, so no Monte Carlo error to "
            "bound; drop --mcse"
        )
    return "fits draws: drop --mcse (--draws sets how many)"


def _say_unused_sampling(args: argparse.Namespace, method: str) -> None:
    """A progress line where sampling options are given to the conjugate route, which draws
    per distinct count vector until --mcse is met (one set of options serves every
    subcommand and route, so they are not refused: ``ambppl.score`` refuses them in Python)."""
    if not is_conjugate_route(get_model(args.model), method):
        return
    given = [
        flag
        for flag, value in (
            ("--draws", args.draws),
            ("--chains", args.chains),
            ("--tune", args.tune),
            ("--target-accept", args.target_accept),
        )
        if value is not None
    ]
    if given:
        _progress(
            args,
            f"{', '.join(given)} not used: method {method} draws exactly, per distinct count "
            "vector, as many draws as --mcse needs",
        )


def _score_keywords(args: argparse.Namespace, method: str) -> dict[str, Any]:
    """The keywords of :func:`ambppl.score` that the command line sets, for every route
    (``unused="ignore"``: --draws and --chains do not apply to the conjugate route, --mcse
    not to a fit)."""
    return {
        "method": method,
        "measure": args.measure,
        "threshold": args.threshold,
        "hdi_prob": args.hdi_prob,
        "mcse": MCSE_TARGET if args.mcse is None else args.mcse,
        "draws": args.draws,
        "chains": args.chains,
        "sample_kwargs": _nuts_options(args) or None,
        "progressbar": not args.quiet and sys.stderr.isatty(),
        "random_seed": args.seed,
        "progress": _reporter(args),
        "unused": "ignore",
    }


def _write_lazy(args: argparse.Namespace, output: Path | None, lazy: LazyScore) -> int:
    """Write the score of counts read in chunks part by part (Parquet: a dataset folder;
    CSV/TSV: one file) without holding every item; on screen / stdout the table is
    collected (and ranked) first."""
    if output is None:
        return _emit(args, None, None, rank(lazy.compute()))
    start = time.perf_counter()
    suffix = output.suffix.lower()
    if suffix in PARQUET_SUFFIXES:  # a folder, moved into place by to_parquet itself
        write_dataset(output, force=args.force, write=lazy.to_parquet)
    else:
        with atomic_output(output, force=args.force) as tmp:
            lazy.table.to_csv(tmp, single_file=True, sep="\t" if suffix == ".tsv" else ",")
    _progress(
        args,
        f"wrote {lazy.attrs['n_items']} items to {output} in "
        f"{time.perf_counter() - start:.1f} s (items in the data's order, no rank column)",
    )
    return 0
