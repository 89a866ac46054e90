"""The ``ambppl`` command: parse the command line, call the library, print or write.

Subcommands live in a registry (:data:`SUBCOMMANDS`): each entry is a function that adds its
own parser to the ``argparse`` sub-parser collection and sets ``handler`` on it. A new
subcommand (validation, rater models, ...) is one decorated function; nothing else changes.

Errors raised by the library for bad input (``ValueError``, ``TypeError``,
``FileNotFoundError``) and bad command lines are reported as one line
``ambppl: error: <message>`` on stderr with exit status 2, never as a traceback. Warnings of
the fit (an :class:`ambppl.ConvergenceWarning` when NUTS missed the convergence standard) are
printed as one line ``warning: <message>`` on stderr and the run goes on (exit status 0).
Output files are written atomically (a temporary file in the same directory, then
:func:`os.replace`) and an existing file is only replaced with ``--force``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

PROG = "ambppl"

#: Exit status for bad usage or bad input (the argparse convention).
EXIT_USAGE = 2

#: Table output suffixes of ``ambppl score -o``.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")

#: The subcommand registry: name -> function adding the subcommand's parser.
SUBCOMMANDS: dict[str, Callable[[Any], argparse.ArgumentParser]] = {}


class UsageError(Exception):
    """A problem with the command line or the files it names (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line: ``ambppl: error: ...`` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        hint = f"see '{self.prog} --help'"
        self.exit(EXIT_USAGE, f"{PROG}: error: {_one_line(message)} ({hint})\n")


def subcommand(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function that adds the parser of subcommand ``name``.

    Parameters
    ----------
    name : str
        The subcommand as typed on the command line.

    Returns
    -------
    callable
        A decorator; the decorated function receives the ``argparse`` sub-parser collection,
        adds its parser with ``set_defaults(handler=...)`` and returns that parser.

    Raises
    ------
    ValueError
        If ``name`` is registered already.

    Notes
    -----
    Registration order is the order of the subcommands in ``ambppl --help``.

    References
    ----------
    The Python documentation of :mod:`argparse`, "Sub-commands".

    Examples
    --------
    >>> "score" in SUBCOMMANDS and "report" in SUBCOMMANDS and "models" in SUBCOMMANDS
    True
    """

    def register(add_parser: Callable[..., Any]) -> Callable[..., Any]:
        if name in SUBCOMMANDS:
            raise ValueError(f"subcommand {name!r} is registered already")
        SUBCOMMANDS[name] = add_parser
        return add_parser

    return register


# ----------------------------------------------------------------------------------------------
# small helpers


def _one_line(message: str) -> str:
    """Collapse a (possibly multi-line) message onto one line."""
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def _progress(args: argparse.Namespace, message: str) -> None:
    """Report progress on stderr unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _numbers(text: str) -> float | list[float] | None:
    """One finite number or a comma-separated list of them; None if ``text`` is neither."""
    import math

    try:
        values = [float(p.strip()) for p in text.split(",")]
    except ValueError:
        return None
    if not all(math.isfinite(v) for v in values):
        return None
    return values[0] if len(values) == 1 else values


def _param(text: str) -> tuple[str, float | list[float]]:
    """Parse ``--param NAME=VALUE``: VALUE is a number or a comma-separated list of numbers."""
    name, sep, value = text.partition("=")
    name = name.strip()
    parsed = _numbers(value) if sep and value.strip() else None
    if not name.isidentifier() or parsed is None:
        raise argparse.ArgumentTypeError(
            "must be NAME=VALUE with a model parameter's name and a number or a "
            "comma-separated list of numbers (e.g. --param kappa_scale=0.5 or --param "
            f"mu_prior=1,1,2), but got {text!r}"
        )
    return name, parsed


def _prior(text: str) -> float | list[float]:
    """Parse ``--prior``: one positive number or a comma-separated list of them."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if not values or not all(v > 0 and v != float("inf") for v in values):
        raise argparse.ArgumentTypeError(
            f"must be a positive number (symmetric Dirichlet prior, e.g. --prior 0.5) or a "
            f"comma-separated list with one positive number per category (e.g. --prior "
            f"1,1,2), but got {text!r}"
        )
    return values[0] if len(values) == 1 else values


def _positive_int(text: str) -> int:
    """Parse a positive integer option."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, but got {text!r}")
    return value


def _open_prob(text: str) -> float:
    """Parse a probability in the open interval (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a number in the open interval (0, 1), e.g. 0.94, but got {text!r}"
        )
    return value


def _input_path(text: str) -> Path:
    """Check that the input file exists and is a file."""
    path = Path(text)
    if not path.exists():
        raise UsageError(f"input file '{text}' does not exist; check the path")
    if not path.is_file():
        raise UsageError(f"input '{text}' is not a file; give the path of an annotations file")
    return path


def _check_output(path: Path, force: bool) -> None:
    """Refuse to replace an existing file without ``--force``; the folder must exist."""
    if path.is_dir():
        raise UsageError(f"output '{path}' is a folder; give a file name, e.g. -o {path}/out")
    if path.exists() and not force:
        raise UsageError(
            f"output file '{path}' exists already; pass --force to replace it or choose "
            "another name with -o"
        )
    if not path.parent.is_dir():
        raise UsageError(f"the folder of output '{path}' does not exist; create it first")


@contextlib.contextmanager
def atomic_output(path: Path, *, force: bool) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s folder; move it onto ``path`` on success.

    Parameters
    ----------
    path : pathlib.Path
        The final output file.
    force : bool
        Replace ``path`` if it exists; otherwise an existing ``path`` raises.

    Returns
    -------
    contextlib.AbstractContextManager of pathlib.Path
        The temporary file to write; it is renamed onto ``path`` with :func:`os.replace`
        when the block ends without an exception and removed otherwise, so ``path`` is never
        left half-written (also not after Ctrl-C).

    Raises
    ------
    UsageError
        If ``path`` exists and ``force`` is false, is a folder, or its folder is missing.

    Notes
    -----
    The temporary file lives in the same folder so that the final rename is atomic on POSIX
    file systems; its permissions follow the umask like a normally created file.

    References
    ----------
    POSIX ``rename(2)``; the Python documentation of :func:`os.replace`.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with atomic_output(folder / "out.txt", force=False) as tmp:
    ...     _ = tmp.write_text("done")
    >>> (folder / "out.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('done', ['out.txt'])
    """
    _check_output(path, force)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        _check_output(path, force)  # a file may have appeared while we worked
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# ----------------------------------------------------------------------------------------------
# shared option groups


def _add_input_options(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    group = parser.add_argument_group("input")
    group.add_argument(
        "annotations",
        nargs="?" if optional else None,
        default=None,
        help="annotations file: .csv, .tsv or .parquet with one row per answer (also "
        "compressed, e.g. .csv.gz), or a NumPy .npy count matrix (items x categories)"
        + ("; without it, the stored reference cases are checked" if optional else ""),
    )
    group.add_argument(
        "--item", default="task", help="column with the item ids (default: %(default)s)"
    )
    group.add_argument(
        "--rater", default="worker", help="column with the rater ids (default: %(default)s)"
    )
    group.add_argument(
        "--label", default="label", help="column with the answers (default: %(default)s)"
    )
    group.add_argument(
        "--cant-solve",
        metavar="LABEL",
        default=None,
        help="the answer that means 'can't solve' (e.g. \"I can't tell\"); default: none",
    )
    group.add_argument(
        "--layout",
        choices=("long", "wide", "counts"),
        default=None,
        help="table layout: long (one row per answer, the default), wide (items x raters) "
        "or counts (items x categories); .npy files are always counts",
    )


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    from ambppl.fit import METHODS

    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        default="dirichlet_categorical",
        help="catalog model (see 'ambppl models'; default: %(default)s)",
    )
    group.add_argument(
        "--method",
        choices=METHODS,
        default=None,
        help="how to sample: one of the model's methods (see 'ambppl models'); default: the "
        "model's first (exact for dirichlet_categorical, collapsed for "
        "hierarchical_dirichlet)",
    )
    group.add_argument(
        "--param",
        metavar="NAME=VALUE",
        type=_param,
        action="append",
        default=[],
        help="a parameter of the model, repeatable: a number or a comma-separated list of "
        "numbers, e.g. --param kappa_scale=0.5 --param mu_prior=1,1,2 (the parameters are "
        "listed by 'ambppl models --verbose'; default: the model's defaults)",
    )
    group.add_argument(
        "--prior",
        type=_prior,
        default=None,
        help="dirichlet_categorical's Dirichlet prior (its parameter 'prior'): one number "
        "for a symmetric prior or one per category, comma-separated (default: 1)",
    )
    group.add_argument(
        "--draws", type=_positive_int, default=1000, help="draws per chain (default: %(default)s)"
    )
    group.add_argument(
        "--chains", type=_positive_int, default=4, help="chains (default: %(default)s)"
    )
    group.add_argument("--seed", type=int, default=None, help="random seed (default: random)")


def _add_summary_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("summary")
    group.add_argument(
        "--measure",
        default="amb",
        help="ambiguity measure: amb, modified, old or entropy (default: %(default)s)",
    )
    group.add_argument(
        "--hdi-prob",
        type=_open_prob,
        default=None,
        help="probability mass of the highest-density intervals (default: ArviZ's "
        "rcParams['stats.ci_prob'], 0.89 unless changed)",
    )
    group.add_argument(
        "--threshold",
        type=_open_prob,
        default=0.4,
        help="report P(measure > threshold) per item (default: %(default)s)",
    )


def _add_output_options(
    parser: argparse.ArgumentParser, help_text: str, default: str | None
) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("-o", "--output", default=default, help=help_text)
    group.add_argument("--force", action="store_true", help="replace the output file if it exists")
    group.add_argument("-q", "--quiet", action="store_true", help="no progress messages")


# ----------------------------------------------------------------------------------------------
# the pipeline shared by score and report


def _read(args: argparse.Namespace, data: str = "counts") -> Any:
    """Read the annotations named on the command line: the count array, or for a model that
    fits answers (its info record's ``data`` is ``"long"``, e.g. ``rater_effects``) one row per
    answer with the ``--rater`` column."""
    from ambppl.data import read_annotations, read_long

    path = _input_path(args.annotations)
    _progress(args, f"reading {path}")
    columns = {
        "item": args.item,
        "rater": args.rater,
        "label": args.label,
        "cant_solve": args.cant_solve,
        "format": args.layout,
    }
    if data == "long":
        if args.layout == "counts" or path.suffix.lower() == ".npy":
            raise UsageError(
                f"--model {args.model} fits one row per answer with rater ids, but "
                f"'{path}' holds counts; give the answers file (--layout long or wide)"
            )
        answers = read_long(path, **columns)
        if answers["rater"].isna().all():
            raise UsageError(
                f"--model {args.model} needs rater ids, but column --rater {args.rater!r} "
                "holds none; name the rater column with --rater"
            )
        return answers
    return read_annotations(path, **columns)


def _model_settings(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The method and the model parameters from the command line, checked against the model.

    Runs before the data are read, so a mistake costs nothing.
    """
    from ambppl.catalog import get_model, list_models, parameter_owners

    catalog = list_models()
    if args.model not in catalog.index:
        raise UsageError(
            f"--model must be one of {', '.join(map(str, catalog.index))} (see 'ambppl "
            f"models'), but got {args.model!r}"
        )
    info = get_model(args.model).info
    names = list(info["parameters"])
    described = ", ".join(names) if names else "none"
    params: dict[str, Any] = {}
    for name, value in args.param:
        if name not in names:
            raise UsageError(
                f"--param {name}: model {args.model!r} has no parameter {name!r}; its "
                f"parameters are {described} (see 'ambppl models --verbose')"
            )
        if name in params:
            raise UsageError(f"--param {name} is given twice; give each parameter once")
        params[name] = value
    if args.prior is not None:
        if "prior" not in names:
            owners = parameter_owners().get("prior", [])
            raise UsageError(
                f"--prior sets the parameter 'prior' of {', '.join(owners)}, but model "
                f"{args.model!r} has the parameters {described}; set them with --param "
                "NAME=VALUE (see 'ambppl models --verbose')"
            )
        if "prior" in params:
            raise UsageError("--prior and --param prior=... both set the prior; give one of them")
        params["prior"] = args.prior
    offered = list(info["methods"])
    method = args.method or offered[0]
    if method not in offered:
        raise UsageError(
            f"--method {method}: model {args.model!r} offers the methods "
            f"{', '.join(offered)} (default {offered[0]}); choose one of them"
        )
    return method, params


def _data_kind(args: argparse.Namespace) -> str:
    """What the chosen model fits: ``"counts"`` or ``"long"`` (its info record's ``data``)."""
    from ambppl.catalog import get_model

    return str(get_model(args.model).info.get("data", "counts"))


def _fit(args: argparse.Namespace, counts: Any, method: str, params: dict[str, Any]) -> Any:
    """Fit the chosen model to the counts, with progress on stderr.

    The fit's warnings (a :class:`ambppl.ConvergenceWarning` when NUTS missed the
    convergence standard) are printed as one line ``warning: ...`` each; the run goes on.
    """
    from ambppl.fit import VARIABLES, ConvergenceWarning, fit

    # Exact draws given the hyperparameters: store only the summarized measure (q costs K
    # times as much memory; the hyperparameters are always stored). Full NUTS keeps every
    # variable: its convergence record covers all of them.
    variable = VARIABLES.get(args.measure) if method != "nuts" else None
    if hasattr(counts, "sizes"):
        shape = f"{counts.sizes['item']} items x {counts.sizes['category']} categories"
    else:  # one row per answer
        shape = (
            f"{len(counts)} answers on {counts['item'].nunique()} items by "
            f"{counts['rater'].nunique()} raters"
        )
    if not hasattr(counts, "sizes"):  # the canonical answers table read_long wrote
        params = {
            **params,
            "item": "item",
            "rater": "rater",
            "label": "label",
            "cant_solve": counts.attrs.get("cant_solve"),
            "categories": list(counts["label"].cat.categories),
        }
    what = f"{args.model} ({method}, {args.chains} x {args.draws} draws)"
    _progress(args, f"fitting {what} to {shape}")
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        # ambppl's own warnings are meant for the user: each is shown once, as one line
        warnings.filterwarnings("always", category=UserWarning, module="ambppl")
        warnings.simplefilter("always", ConvergenceWarning)
        result = fit(
            counts,
            model=args.model,
            method=method,
            draws=args.draws,
            chains=args.chains,
            random_seed=args.seed,
            var_names=None if variable is None else [variable],
            progressbar=not args.quiet and sys.stderr.isatty(),
            **params,
        )
    for caught_warning in caught:
        message = _one_line(str(caught_warning.message))
        if issubclass(caught_warning.category, ConvergenceWarning):
            message += " (on the command line: raise --draws)"
        print(f"warning: {message}", file=sys.stderr, flush=True)
    _progress(args, f"fitted in {time.perf_counter() - start:.1f} s")
    return result


def _summarize(args: argparse.Namespace, result: Any) -> Any:
    from ambppl.summary import rank, summarize

    table = summarize(
        result, measure=args.measure, hdi_prob=args.hdi_prob, threshold=args.threshold
    )
    return rank(table)


# ----------------------------------------------------------------------------------------------
# subcommands


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
        "  ambppl score counts.npy --draws 200 -o scores.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser)
    _add_model_options(parser)
    _add_summary_options(parser)
    _add_output_options(
        parser,
        "output file; its suffix picks the format (.csv, .tsv, .parquet/.pq); '-' writes "
        "CSV to stdout; default: a readable table on screen",
        None,
    )
    parser.set_defaults(handler=_run_score)
    return parser


def _table_writer(path: Path) -> Callable[[Any, Path], None]:
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise UsageError(
            f"cannot tell the table format of output '{path}'; end the name in "
            f"{', '.join(TABLE_SUFFIXES)}"
        )
    if suffix == ".csv":
        return lambda table, tmp: table.to_csv(tmp)
    if suffix == ".tsv":
        return lambda table, tmp: table.to_csv(tmp, sep="\t")
    return lambda table, tmp: table.to_parquet(tmp)


def _run_score(args: argparse.Namespace) -> int:
    _input_path(args.annotations)
    output = None if args.output in (None, "-") else Path(args.output)
    write = None
    if output is not None:
        write = _table_writer(output)
        _check_output(output, args.force)  # fail before the expensive part
    method, params = _model_settings(args)
    table = _summarize(args, _fit(args, _read(args, _data_kind(args)), method, params))
    return _emit(args, output, write, table)


def _emit(args: argparse.Namespace, output: Any, write: Any, table: Any) -> int:
    """Write a per-item table: CSV on stdout (``-o -``), a file (``-o``), or the screen."""
    if args.output == "-":
        table.to_csv(sys.stdout)
    elif output is None:
        import pandas as pd

        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(table.to_string(float_format=lambda x: f"{x:.4g}"))
    else:
        with atomic_output(output, force=args.force) as tmp:
            write(table, tmp)
        _progress(args, f"wrote {len(table)} items to {output}")
    return 0


@subcommand("report")
def _add_report(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="self-contained HTML diagnostics report",
        description="Fit the model and write one HTML file (figures embedded, no network "
        "access needed) with the data overview, the model and prior, convergence "
        "diagnostics, the check of the draws against the closed-form moments, the "
        "distribution of item ambiguity, a sortable ranked item table, the most ambiguous "
        "items with their answer counts and the sensitivity to the prior; for a learned "
        "prior (--model hierarchical_dirichlet) also the learned prior and its shrinkage.",
        epilog="examples:\n"
        '  ambppl report answers.csv --cant-solve "I can\'t tell" -o report.html\n'
        "  ambppl report answers.parquet --item question --rater worker --label answer \\\n"
        "      --method nuts --draws 500 -o dogs.html --force\n"
        '  ambppl report answers.csv --cant-solve "I can\'t tell" \\\n'
        "      --model hierarchical_dirichlet --param kappa_sd=1 -o learned.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser)
    _add_model_options(parser)
    _add_summary_options(parser)
    parser.add_argument_group("report").add_argument(
        "--top",
        type=_positive_int,
        default=15,
        help="items shown in the most-ambiguous and prior-sensitivity sections "
        "(default: %(default)s)",
    )
    _add_output_options(parser, "the HTML file to write (default: %(default)s)", "report.html")
    parser.set_defaults(handler=_run_report)
    return parser


def _run_report(args: argparse.Namespace) -> int:
    from ambppl.report import render_report

    _input_path(args.annotations)
    output = Path(args.output)
    if output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"the report is HTML: end the output name in .html, but got '{output}'")
    _check_output(output, args.force)
    method, params = _model_settings(args)
    result = _fit(args, _read(args, _data_kind(args)), method, params)
    _progress(args, "summarizing and drawing the figures")
    html = render_report(
        result,
        measure=args.measure,
        hdi_prob=args.hdi_prob,
        threshold=args.threshold,
        top=args.top,
        random_seed=args.seed,
        command=args.command_line,
    )
    with atomic_output(output, force=args.force) as tmp:
        tmp.write_text(html, encoding="utf-8")
    _progress(args, f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    return 0


def _nonnegative_int(text: str) -> int:
    """Parse a whole number >= 0 (e.g. ``--budget``)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, but got {text!r}")
    return value


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
        default="variance",
        help="what to make small: variance (the total expected posterior variance of the "
        "measure) or decision (the chance of getting 'measure > --threshold' wrong, where "
        "the library offers it); default: %(default)s",
    )
    group.add_argument(
        "--threshold",
        type=_open_prob,
        default=0.4,
        help="the t of 'measure > t' for --objective decision (default: %(default)s)",
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
        "prior or one per category, comma-separated (default: 1)",
    )
    _add_output_options(
        parser,
        "output file; its suffix picks the format (.csv, .tsv, .parquet/.pq); '-' writes "
        "CSV to stdout; default: a readable table on screen",
        None,
    )
    parser.set_defaults(handler=_run_plan)
    return parser


def _plan_table(args: argparse.Namespace, counts: Any) -> Any:
    """The plan: one row per item, most extra answers first (ties in item order)."""
    import numpy as np
    import pandas as pd

    from ambppl.planning import expected_posterior_sd, next_batch

    values = np.asarray(counts.values)
    cant_solve = -1 if counts.attrs.get("cant_solve") is not None else None
    model = {"measure": args.measure, "prior": args.prior, "cant_solve": cant_solve}
    options: dict[str, Any] = {"objective": args.objective, "threshold": args.threshold}
    _progress(
        args,
        f"allocating {args.budget} answers over {values.shape[0]} items "
        f"(objective {args.objective})",
    )
    extra = np.asarray(next_batch(values, args.budget, **options, **model), dtype=np.int64)
    table = pd.DataFrame(
        {
            "n_answers": values.sum(axis=1).astype(np.int64),
            "extra": extra,
            "sd_now": expected_posterior_sd(values, 0, **model),
            "sd_after": expected_posterior_sd(values, extra, **model),
        },
        index=pd.Index(counts["item"].values, name="item"),
    )
    return table.sort_values("extra", ascending=False, kind="stable")


def _run_plan(args: argparse.Namespace) -> int:
    _input_path(args.annotations)
    output = None if args.output in (None, "-") else Path(args.output)
    write = None
    if output is not None:
        write = _table_writer(output)
        _check_output(output, args.force)
    table = _plan_table(args, _read(args))
    return _emit(args, output, write, table)


@subcommand("validate")
def _add_validate(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "validate",
        help="check posteriors against closed forms, exact laws and the data",
        description="Without a file: fit every stored reference case (models/reference) and "
        "check the draws against its reference posterior, the closed-form moments, the exact "
        "two-class law and posterior predictive replications. With an annotations file: fit "
        "it (same options as 'score') and run the closed-form, exact-density and predictive "
        "checks that apply to the model. Prints one verdict line per check; exit status 0 "
        "when every check passes, 1 when one fails, 2 for bad input.",
        epilog="examples:\n"
        "  ambppl validate\n"
        "  ambppl validate --method nuts --draws 500\n"
        '  ambppl validate answers.csv --cant-solve "I can\'t tell"\n'
        '  ambppl validate answers.csv --cant-solve "I can\'t tell" --model '
        "hierarchical_dirichlet",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_options(parser, optional=True)
    _add_model_options(parser)
    parser.add_argument_group("checks").add_argument(
        "--alpha",
        type=_open_prob,
        default=0.01,
        help="family-wise false-alarm rate of each check (default: %(default)s)",
    )
    group = parser.add_argument_group("output")
    group.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    parser.set_defaults(handler=_run_validate, measure=None)
    return parser


def _run_validate(args: argparse.Namespace) -> int:
    import pandas as pd

    from ambppl import validation

    start = time.perf_counter()
    if args.annotations is None:
        if args.model != "dirichlet_categorical" or args.param or args.prior is not None:
            raise UsageError(
                "the reference cases carry their own model and prior: give an annotations "
                "file to validate --model/--param/--prior, or leave them out"
            )
        _progress(args, "fitting the reference cases")
        cases = validation.run_reference_cases(
            method=args.method or "exact",
            draws=args.draws,
            chains=args.chains,
            random_seed=args.seed,
            alpha=args.alpha,
        )
        rows = cases.table
        verdict = pd.DataFrame(
            {
                "case": rows["case"],
                "check": rows["check"],
                "verdict": [
                    ("pass" if ok else "FAIL") + ("" if decided else " *")
                    for ok, decided in zip(rows["passed"], rows["in_decision"], strict=True)
                ],
                "statistic": rows["statistic"],
                "p_value": rows["p_value"],
                "flagged": rows["n_flagged"],
            }
        )
        passed = cases.passed
        footnote = (
            "* not part of the verdict: the predictive check tests whether the model fits "
            "the data, and the reference cases are edge cases chosen to be unlike it"
        )
    else:
        footnote = None
        _input_path(args.annotations)
        method, params = _model_settings(args)
        result = _fit(args, _read(args, _data_kind(args)), method, params)
        checks = [
            ("moments", validation.check_moments),
            ("density", validation.check_density),
            ("predictive", validation.check_predictive),
        ]
        records = []
        for name, check in checks:
            _progress(args, f"check {name}")
            try:
                kwargs = {"random_seed": args.seed} if name == "predictive" else {}
                out = check(result, alpha=args.alpha, **kwargs)
            except ValueError as err:  # the check does not apply to this model
                records.append({"check": name, "verdict": "skipped", "note": _one_line(str(err))})
                continue
            if len(out.table) == 0:  # nothing to test (e.g. no two-class item)
                records.append({"check": name, "verdict": "skipped", "note": out.description})
                continue
            records.append(
                {
                    "check": name,
                    "verdict": "pass" if out.passed else "FAIL",
                    "statistic": out.statistic,
                    "p_value": out.p_value,
                    "flagged": f"{out.n_flagged} of {len(out.table)}",
                }
            )
        verdict = pd.DataFrame(records)
        passed = all(r["verdict"] != "FAIL" for r in records)
    notes = verdict.pop("note").dropna() if "note" in verdict else pd.Series(dtype=str)
    with pd.option_context("display.max_rows", None, "display.width", 200):
        shown = verdict.astype(object).map(
            lambda x: f"{x:.3g}" if isinstance(x, float) and x == x else "" if x != x else x
        )
        print(shown.to_string(index=False))
    for k in notes.index:
        print(f"{verdict.loc[k, 'check']} skipped: {notes[k]}")
    if footnote:
        print(footnote)
    word = "all checks passed" if passed else "a check FAILED"
    print(f"{word} (level {args.alpha:g} each; {time.perf_counter() - start:.1f} s)")
    return 0 if passed else 1


@subcommand("models")
def _add_models(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "models",
        help="list the model catalog",
        description="List the models that --model accepts with the methods that --method "
        "accepts for each (the default first) and, with --verbose, their parameters (set "
        "with --param NAME=VALUE) and the closed-form reference that checks them.",
        epilog="examples:\n  ambppl models\n  ambppl models --verbose",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also show parameters and references"
    )
    parser.set_defaults(handler=_run_models)
    return parser


def _run_models(args: argparse.Namespace) -> int:
    from ambppl.catalog import get_model, list_models

    catalog = list_models()
    for name, row in catalog.iterrows():
        info = get_model(str(name)).info
        methods = list(info["methods"])
        shown = ", ".join([f"{methods[0]} (default)", *methods[1:]])
        print(f"{name}  (methods: {shown})")
        print(f"    {row['description']}")
        if args.verbose:
            params = info.get("parameters") or {}
            for key, spec in params.items():
                spec = spec if isinstance(spec, dict) else {"description": spec}
                how = f"--param {key}=VALUE"
                if key == "prior":
                    how = f"--prior or {how}"
                default = spec.get("default")
                print(f"    {key} (default {default}; {how}): {spec.get('description', '')}")
            print(f"    reference: {row['reference']}")
    return 0


# ----------------------------------------------------------------------------------------------
# entry point


def build_parser() -> argparse.ArgumentParser:
    """Build the ``ambppl`` argument parser from the subcommand registry.

    Returns
    -------
    argparse.ArgumentParser
        The parser; every subcommand parser sets ``handler`` (a function of the parsed
        namespace returning the exit status).

    Notes
    -----
    Usage errors print one line ``ambppl: error: ...`` and exit with status 2.

    References
    ----------
    The Python documentation of :mod:`argparse`.

    Examples
    --------
    >>> args = build_parser().parse_args(["score", "a.csv", "--prior", "0.5"])
    >>> args.annotations, args.prior, args.item, args.rater, args.label
    ('a.csv', 0.5, 'task', 'worker', 'label')
    """
    from ambppl import __version__

    parser = _Parser(
        prog=PROG,
        description="Bayesian inference of ambiguity in categorical annotations: per-item "
        "posterior of the ambiguity (the chance that an annotator cannot solve the item or "
        "that two annotators disagree), from a table with one row per answer.",
        epilog="examples:\n"
        '  ambppl score answers.csv --cant-solve "I can\'t tell" -o scores.csv\n'
        '  ambppl report answers.csv --cant-solve "I can\'t tell" -o report.html\n'
        "  ambppl models\n"
        "\n"
        "Columns default to crowd-kit's names task, worker, label; give yours with --item,\n"
        "--rater and --label. 'ambppl <command> --help' shows each command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for add_parser in SUBCOMMANDS.values():
        add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ambppl`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``None`` reads :data:`sys.argv`.

    Returns
    -------
    int
        The exit status: 0 on success, 2 for bad usage or bad input, 130 after Ctrl-C,
        141 when the reader of stdout went away (``| head``).

    Raises
    ------
    Exception
        Only for bugs: bad usage and bad input are reported on stderr and give status 2;
        ``--help`` and ``--version`` print and give status 0.

    Notes
    -----
    Library errors that describe bad input (``ValueError``, ``TypeError``,
    ``FileNotFoundError``) or an unsupported combination (``NotImplementedError``) become
    ``ambppl: error: <message>`` on stderr, without a traceback. Other exceptions are bugs
    and propagate.

    References
    ----------
    The Python documentation of :mod:`argparse`.

    Examples
    --------
    >>> main(["score", "no-such-file.csv"])
    2
    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version (0) or a usage error (2, message printed)
        return int(done.code or 0)
    args.command_line = shlex.join([PROG, *argv])
    try:
        return int(args.handler(args))
    except (UsageError, ValueError, TypeError, FileNotFoundError, NotImplementedError) as err:
        print(f"{PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no output was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `ambppl score ... -o - | head`: the reader left early
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
        return 141  # what a shell reports for a process ended by SIGPIPE
