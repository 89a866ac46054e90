"""The ``ambppl`` command: parse the command line, call the library, print or write.

Subcommands live in a registry (:data:`SUBCOMMANDS`): each entry is a function that adds its
own parser to the ``argparse`` sub-parser collection and sets ``handler`` on it. A new
subcommand (validation, rater models, ...) is one decorated function; nothing else changes.

Errors raised by the library for bad input (``ValueError``, ``TypeError``,
``FileNotFoundError``) and bad command lines are reported as one line
``ambppl: error: <message>`` on stderr with exit status 2, never as a traceback. Warnings of
the fit (an :class:`ambppl.ConvergenceWarning` when NUTS missed the convergence standard) are
printed as one line ``warning: <message>`` on stderr and the run goes on (exit status 0);
so is any other warning shown while a command runs (never with a source line).
Output files are checked before any work (the folder takes a new file; the output is not
the input; an existing one is replaced only with ``--force`` and only when writable, keeping
its permissions) and written atomically (a temporary file in the same directory, then
:func:`os.replace`); Ctrl-C, SIGTERM and SIGHUP remove the temporary file.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import shlex
import signal
import stat
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ambppl import __version__, validation
from ambppl.analysis.planning import expected_posterior_sd, next_batch
from ambppl.analysis.scoring import CONJUGATE_METHODS, score
from ambppl.analysis.summary import rank, summarize
from ambppl.data import (
    FILE_TYPES,
    command_line_messages,
    count_long_in_chunks,
    holds_counts,
    is_zarr_store,
    open_counts_in_chunks,
    opens_in_chunks,
    read_annotations,
    read_long,
)
from ambppl.inference.catalog import get_model, list_models, parameter_owners
from ambppl.inference.convergence import ConvergenceWarning, convergence_message
from ambppl.inference.fitting import (
    METHODS,
    NUTS_METHODS,
    SUMMARY_COPIES,
    VARIABLES,
    after_fit,
    fit,
)
from ambppl.internal.work import guard as _guard
from ambppl.report import render_report, score_report

PROG = "ambppl"

#: Exit status for bad usage or bad input (the argparse convention).
EXIT_USAGE = 2

#: Table output suffixes of ``ambppl score -o``.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")

#: Items per chunk when ``ambppl score`` streams counts from zarr or Parquet.
CHUNK_ITEMS = 1_000_000

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


#: The largest ``--seed``: numpy's classic seed range (0 to 2**32 - 1), which every sampler
#: behind the command accepts.
SEED_MAX = 2**32 - 1


def _seed(text: str) -> int:
    """Parse ``--seed``: a whole number from 0 to :data:`SEED_MAX`."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 0 to {SEED_MAX}, e.g. --seed 7, but got {text!r}"
        )
    return value


def _measure_option(text: str) -> str:
    """Parse ``--measure``: a measure name (``modified``) or its variable (``amb_modified``)."""

    if text in VARIABLES or text in VARIABLES.values():
        return text
    raise argparse.ArgumentTypeError(f"must be one of {', '.join(VARIABLES)}, but got {text!r}")


def _input_path(text: str) -> Path:
    """Check that the input file exists and is a file (or a folder holding a zarr store)."""

    path = Path(text)
    if not path.exists():
        raise UsageError(f"input file '{text}' does not exist; check the path")
    if path.is_dir() and (path.suffix.lower() == ".zarr" or is_zarr_store(path)):
        return path
    if not path.is_file():
        raise UsageError(
            f"input '{text}' is not a file; give the path of an annotations file (a folder is "
            "read only as a zarr store of counts, --format zarr)"
        )
    return path


def _separator(text: str) -> str:
    """Parse ``--sep``: the field separator; ``\\t`` (as typed) or ``tab`` is a tab."""
    sep = {"\\t": "\t", "tab": "\t", "\\s+": r"\s+", "space": " "}.get(text, text)
    if not sep:
        raise argparse.ArgumentTypeError(
            "must be the field separator, e.g. --sep ';' or --sep '\\t' for tabs, but got ''"
        )
    return sep


def _encoding(text: str) -> str:
    """Parse ``--encoding``: a text encoding Python knows."""
    import codecs

    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(
            f"must be a text encoding such as utf-8, latin-1, cp1252 or utf-16, but got {text!r}"
        ) from None
    return text


def _na_values(text: str) -> list[str]:
    """Parse ``--na-values``: comma-separated answers that mean 'no answer'."""
    values = [v for v in text.split(",") if v != ""]
    if not values:
        raise argparse.ArgumentTypeError(
            f"must name the answers that mean 'no answer', e.g. --na-values N/A,NA, but got "
            f"{text!r}"
        )
    return values


def _comment_char(text: str) -> str:
    """Parse ``--comment``: one character."""
    if len(text) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one character that starts a comment, e.g. --comment '#', but got {text!r}"
        )
    return text


def _check_output(
    path: Path, force: bool, folder: bool = False, source: str | Path | None = None
) -> None:
    """Check, before any work, that the output can be written: it is not the input
    ``source`` (nor inside it, nor a folder holding it), it does not exist (or ``force``
    and it is writable), and its folder exists and takes a new file.
    ``folder``: the output is a folder (a Parquet dataset), which ``--force`` may replace."""
    if source is not None and _overlaps(path, Path(source)):
        raise UsageError(
            f"output '{path}' is the input '{source}' (or holds it, or lies inside it): "
            "writing it would destroy the annotations; choose another name with -o (--force "
            "does not allow this)"
        )
    if path.is_dir() and not folder:
        raise UsageError(f"output '{path}' is a folder; give a file name, e.g. -o {path}/out")
    if path.exists() and not force:
        raise UsageError(
            f"output file '{path}' exists already; pass --force to replace it or choose "
            "another name with -o"
        )
    parent = path.parent
    if not parent.is_dir():
        if parent.exists() or any(p.is_file() for p in parent.parents):
            raise UsageError(
                f"the folder of output '{path}' is not a folder (a file is in the way); "
                "choose another name with -o"
            )
        raise UsageError(f"the folder of output '{path}' does not exist; create it first")
    if path.exists() and _read_only(path):
        raise UsageError(
            f"output '{path}' is read-only; --force replaces only writable files: make it "
            f"writable (chmod u+w {shlex.quote(str(path))}) or choose another name with -o"
        )
    try:  # the robust test of "can we write here": what the writer will do
        fd, name = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".check")
    except OSError as err:
        raise UsageError(
            f"cannot write output '{path}': its folder '{parent}' does not take new files "
            f"({err.strerror or err}); choose a writable folder with -o"
        ) from err
    os.close(fd)
    os.unlink(name)


def _overlaps(output: Path, source: Path) -> bool:
    """Whether ``output`` is ``source`` (by any path: ``./``, a symbolic or hard link), a
    folder holding it, or a path inside it (a zarr store)."""
    if output.exists() and source.exists():
        with contextlib.suppress(OSError):
            if os.path.samefile(output, source):
                return True
    out, src = output.resolve(), source.resolve()
    return out == src or out in src.parents or src in out.parents


def _read_only(path: Path) -> bool:
    """Whether an existing output is read-only: no write permission bit at all (also for
    root, who may write anyway) or none for this user."""
    return not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK)


@contextlib.contextmanager
def atomic_output(path: Path, *, force: bool, folder: bool = False) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s folder; move it onto ``path`` on success.

    Parameters
    ----------
    path : pathlib.Path
        The final output file.
    force : bool
        Replace ``path`` if it exists; otherwise an existing ``path`` raises.
    folder : bool, default False
        The output is a folder (a Parquet dataset written part by part): the temporary path
        does not exist yet when yielded, and is renamed onto ``path`` (an existing one
        removed first, with ``force``).

    Returns
    -------
    contextlib.AbstractContextManager of pathlib.Path
        The temporary file to write; it is renamed onto ``path`` with :func:`os.replace`
        when the block ends without an exception and removed otherwise, so ``path`` is never
        left half-written (also not after Ctrl-C).

    Raises
    ------
    UsageError
        If ``path`` exists and ``force`` is false, is a folder, is read-only, or its folder is
        missing or takes no new file; or if writing fails for want of permission or space.

    Notes
    -----
    The temporary file lives in the same folder so that the final rename is atomic on POSIX
    file systems; its permissions follow the umask like a normally created file, or are
    those of the file it replaces. After an exception (Ctrl-C, or SIGTERM / SIGHUP in
    :func:`main`) the temporary file is removed, and again at exit in case a dask worker
    thread was still writing it.

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
    _check_output(path, force, folder)
    if folder:
        with _write_errors(path):
            yield from _atomic_folder(path, force)
        return
    with _write_errors(path):
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(name)
    try:
        with _write_errors(path):
            yield tmp
            _check_output(path, force)  # a file may have appeared while we worked
            os.chmod(tmp, _output_mode(path, 0o666))
            os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    finally:
        if tmp.exists():
            tmp.unlink()


def _discard(tmp: Path) -> None:
    """Remove a temporary output after an error, Ctrl-C or SIGTERM, now and once more when
    Python exits: a dask task still running in a worker thread may write to it after the main
    thread gave up (Python joins those threads at exit, before :mod:`atexit` handlers)."""
    import atexit
    import shutil

    def remove(path: Path = tmp) -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()

    remove()
    atexit.register(remove)


#: ``errno`` values of a failed write that are the output's problem (not a bug): no
#: permission, a read-only file system, a full disk or quota.
_WRITE_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT", "EFBIG")
    if hasattr(errno, name)
)


@contextlib.contextmanager
def _write_errors(path: Path) -> Iterator[None]:
    """Report a write that failed for the output's sake (permission, disk full) as one
    line naming the output instead of a traceback."""
    try:
        yield
    except OSError as err:
        name = err.filename
        elsewhere = isinstance(name, str | bytes) and path.parent.resolve() not in (
            Path(os.fsdecode(name)).resolve().parents
        )  # e.g. the input, read while the output is written
        if err.errno not in _WRITE_ERRNOS or elsewhere:
            raise
        raise UsageError(
            f"cannot write output '{path}' ({err.strerror or err}); nothing was written: "
            "choose a writable folder with free space with -o"
        ) from err


def _output_mode(path: Path, default: int) -> int:
    """Permission bits of a new output: those of the file it replaces (``--force`` keeps
    them), else ``default`` less the umask, as for a normally created file."""
    if path.exists():
        return stat.S_IMODE(path.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return default & ~umask


def _atomic_folder(path: Path, force: bool) -> Iterator[Path]:
    """atomic_output for a folder: written beside ``path``, then renamed onto it."""
    import shutil

    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part"))
    tmp.rmdir()  # the writer creates it
    try:
        try:
            yield tmp
        except BaseException:
            _discard(tmp)
            raise
        _check_output(path, force, folder=True)
        mode = _output_mode(path, 0o777) if path.is_dir() else None
        if path.exists():
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        if mode is not None and tmp.is_dir():
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# shared option groups


def _add_input_options(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    group = parser.add_argument_group("input")

    group.add_argument(
        "annotations",
        nargs="?" if optional else None,
        default=None,
        help="annotations file: .csv, .tsv or .parquet with one row per answer (also "
        "compressed, e.g. .csv.gz), a NumPy .npy count matrix (items x categories) or a "
        ".zarr store holding one; other suffixes (.txt) need --format or --sep"
        + ("; without it, the stored reference cases are checked" if optional else ""),
    )
    group.add_argument(
        "--item",
        default="task",
        help="column with the item ids; with --no-header its 0-based position "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--rater",
        default="worker",
        help="column with the rater ids; with --no-header its 0-based position, and no rater "
        "column when left out (default: %(default)s)",
    )
    group.add_argument(
        "--label",
        default="label",
        help="column with the answers; with --no-header its 0-based position "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--no-rater",
        action="store_true",
        help="the data have no rater ids (enough for the count models; rater_effects needs them)",
    )
    group.add_argument(
        "--format",
        choices=FILE_TYPES,
        default=None,
        help="file type, overriding the suffix: csv, tsv, parquet, npy or zarr (default: from "
        "the suffix)",
    )
    group.add_argument(
        "--sep",
        type=_separator,
        default=None,
        help="field separator of a text file (default: ',' for csv, a tab for tsv); '\\t' or "
        "tab for a tab; a file with another suffix (e.g. .txt) is then read as text",
    )
    group.add_argument(
        "--comment",
        metavar="CHAR",
        type=_comment_char,
        default=None,
        help="text files: CHAR starts a comment, to the end of the line (e.g. --comment '#' "
        "for files that begin with # lines); default: none",
    )
    group.add_argument(
        "--no-header",
        action="store_true",
        help="the text file has no header line (its first line is data): --item, --rater and "
        "--label then take 0-based column positions, e.g. --item 1 --rater 0 --label 2",
    )
    group.add_argument(
        "--na-values",
        metavar="TEXT",
        type=_na_values,
        action="extend",
        default=None,
        help="answers that mean 'no answer', comma-separated or repeated, e.g. --na-values "
        "N/A,NA (default: only an empty cell; NA, N/A, None, null are labels otherwise)",
    )
    group.add_argument(
        "--encoding",
        type=_encoding,
        default=None,
        help="text files: the encoding, e.g. latin-1 or cp1252 (default: UTF-8; a byte-order "
        "mark, UTF-16 and gzip are recognised)",
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
    group.add_argument(
        "--tune",
        type=_nonnegative_int,
        default=None,
        help="NUTS methods (nuts, collapsed): warm-up steps per chain; more when R-hat is "
        "above 1.01 (default: PyMC's, 1000)",
    )
    group.add_argument(
        "--target-accept",
        type=_open_prob,
        default=None,
        help="NUTS methods: the step size's target acceptance rate; higher (e.g. 0.95) for "
        "smaller steps when there are divergent transitions (default: PyMC's, 0.8)",
    )
    group.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help=f"random seed, a whole number from 0 to {SEED_MAX} (default: random)",
    )


def _add_summary_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("summary")
    group.add_argument(
        "--measure",
        type=_measure_option,
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
    answer with the ``--rater`` column.

    Mistakes are reported with the option that fixes them (``--format tsv``, ``--no-header``,
    ``--comment '#'``), never with a Python keyword: the reading runs inside
    :func:`ambppl.data.command_line_messages`. Warnings of the reader are printed as one
    line.
    """

    path = _input_path(args.annotations)
    _progress(args, f"reading {path}")
    columns = {**_columns(args), "cant_solve": args.cant_solve}
    fmt = _format(args)
    options = _text_options(args)
    try:
        with command_line_messages(), _warnings_as_lines():
            if data != "long":
                return read_annotations(path, format=fmt, **columns, **options)
            if holds_counts(path, fmt):
                raise UsageError(
                    f"--model {args.model} fits one row per answer with rater ids, but "
                    f"'{path}' holds counts; give the answers file (--layout long or wide)"
                )
            answers = read_long(path, format=fmt, **columns, **options)
    except ImportError as err:  # e.g. zarr not installed
        raise UsageError(_one_line(str(err))) from err
    if answers["rater"].isna().all():
        where = (
            "no rater column was given"
            if columns["rater"] is None
            else (f"column --rater {args.rater!r} holds none")
        )
        raise UsageError(
            f"--model {args.model} needs rater ids, but {where}; name the rater column with "
            "--rater (its 0-based position with --no-header)"
        )
    return answers


def _columns(args: argparse.Namespace) -> dict[str, Any]:
    """``item``, ``rater`` and ``label`` for the reader: column names, or with ``--no-header``
    0-based positions; ``rater`` is None with ``--no-rater`` (or ``--no-header`` without
    ``--rater``)."""
    defaults = {"item": "task", "rater": "worker", "label": "label"}
    given = {name: getattr(args, name) for name in defaults}
    if args.no_rater and given["rater"] != defaults["rater"]:
        raise UsageError(f"--no-rater and --rater {given['rater']} contradict; give one of them")
    if not args.no_header:
        return {**given, "rater": None if args.no_rater else given["rater"]}
    out: dict[str, Any] = {}
    for name, value in given.items():
        if value == defaults[name] and (name == "rater" or args.layout in ("wide", "counts")):
            out[name] = None if name == "rater" else value  # no rater; wide: ids by row
            continue
        try:
            position = int(value)
        except ValueError:
            position = -1
        if position < 0:
            default = " (the default, a column name)" if value == defaults[name] else ""
            raise UsageError(
                f"with --no-header, --{name} must be the 0-based position of the {name} "
                f"column (e.g. --item 1 --rater 0 --label 2), but got {value!r}{default}"
            )
        out[name] = position
    if args.no_rater:
        out["rater"] = None
    return out


def _model_settings(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The method and the model parameters from the command line, checked against the model.

    Runs before the data are read, so a mistake costs nothing.
    """

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

    nuts_options = _nuts_options(args)
    if nuts_options and method not in NUTS_METHODS:
        given = " and ".join(f"--{k.replace('_', '-')}" for k in nuts_options)
        nuts = [m for m in offered if m in NUTS_METHODS]
        fix = f"choose --method {' or '.join(nuts)}" if nuts else "leave them out"
        raise UsageError(
            f"{given} tune NUTS, but --method {method} of model {args.model!r} draws without "
            f"it; drop {given} or {fix}"
        )
    return method, params


def _nuts_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--tune`` and ``--target-accept`` as ``pymc.sample`` keywords (those given)."""
    pairs = (
        ("tune", getattr(args, "tune", None)),
        ("target_accept", getattr(args, "target_accept", None)),
    )
    return {key: value for key, value in pairs if value is not None}


def _data_kind(args: argparse.Namespace) -> str:
    """What the chosen model fits: ``"counts"`` or ``"long"`` (its info record's ``data``)."""

    return str(get_model(args.model).info.get("data", "counts"))


def _fit(args: argparse.Namespace, counts: Any, method: str, params: dict[str, Any]) -> Any:
    """Fit the chosen model to the counts, with progress on stderr.

    The fit's warnings (a :class:`ambppl.ConvergenceWarning` when NUTS missed the
    convergence standard) are printed as one line ``warning: ...`` each; the run goes on.
    """

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
    nuts_options = _nuts_options(args)  # checked against the method by _model_settings
    if nuts_options:
        params = {**params, "sample_kwargs": nuts_options}
    what = f"{args.model} ({method}, {args.chains} x {args.draws} draws)"
    _progress(args, f"fitting {what} to {shape}")
    start = time.perf_counter()

    # the memory check counts the summary made next, and names the command's options
    with command_line_messages(), after_fit(SUMMARY_COPIES), _warnings_as_lines():
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
    _progress(args, f"fitted in {time.perf_counter() - start:.1f} s")
    return result


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Print the warnings raised inside as one line ``warning: ...`` each; the run goes on.

    ambppl's own warnings are meant for the user: each is shown once, as one line (a
    :class:`ambppl.ConvergenceWarning` names the worst parameter and the option that helps:
    ``--draws`` for a small ESS, ``--tune`` for R-hat, ``--target-accept`` or the model's
    parameters for divergent transitions).
    """

    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", category=UserWarning, module="ambppl")
        warnings.simplefilter("always", ConvergenceWarning)
        yield
    for caught_warning in caught:
        shown = caught_warning.message
        if isinstance(shown, ConvergenceWarning) and shown.record is not None:
            # the same message with the command's options (--draws, --tune, ...) as advice

            text = convergence_message(
                shown.record, what=shown.what, model=shown.model, command_line=True
            )
        else:
            text = str(shown)
        print(f"warning: {_one_line(text)}", file=sys.stderr, flush=True)


def _summarize(args: argparse.Namespace, result: Any) -> Any:

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
    scale = parser.add_argument_group("scale")
    scale.add_argument(
        "--chunk-items",
        type=_positive_int,
        default=None,
        help="counts in a zarr store or a Parquet file are read and scored in chunks of about "
        "this many items with dask, written part by part (-o x.parquet: a Parquet dataset "
        "folder; .csv/.tsv: one file; items in the data's order, no rank column; default "
        f"{CHUNK_ITEMS}); with --layout long, a long answers file too large for memory is "
        "counted with dask block by block (default: read into memory)",
    )
    scale.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the chunks on a dask.distributed cluster: the scheduler's address (e.g. "
        "tcp://10.0.0.5:8786), or threads, processes or synchronous for a local dask "
        "scheduler (default: dask's threads)",
    )
    parser.add_argument_group("summary").add_argument(
        "--mcse",
        type=_open_prob,
        default=0.005,
        help="conjugate models (dirichlet_categorical; hierarchical_dirichlet with --method "
        "empirical_bayes): bound on the Monte Carlo standard error of P(measure > threshold); "
        "each distinct count vector gets the exact draws it needs and no per-item draws are "
        "stored (--draws and --chains then do not apply; default: %(default)s)",
    )
    _add_output_options(
        parser,
        "output file; its suffix picks the format (.csv, .tsv, .parquet/.pq); '-' writes "
        "CSV to stdout; default: a readable table on screen",
        None,
    )
    parser.set_defaults(handler=_run_score)
    return parser


def write_text_table(table: Any, path: Any, sep: str) -> None:
    r"""Write a table as CSV/TSV with pyarrow's writer (ten times pandas' ``to_csv`` on 10^6
    rows; the same numbers: floats in their shortest round-trip form, NaN as an empty field).

    Parameters
    ----------
    table : pandas.DataFrame
        The table; its index becomes the first column.
    path : str, pathlib.Path or file-like
        Where to write.
    sep : str
        The delimiter (``","`` or ``"\t"``).

    Examples
    --------
    >>> import io, pandas as pd
    >>> out = io.BytesIO()
    >>> frame = pd.DataFrame({"a": [1.5, float("nan")]}, index=pd.Index(["x", "y"], name="item"))
    >>> write_text_table(frame, out, ",")
    >>> out.getvalue().decode()
    'item,a\nx,1.5\ny,\n'
    """
    import csv
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pacsv

    frame = table.reset_index()
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(str)
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    header = io.StringIO()
    csv.writer(header, delimiter=sep, lineterminator="\n").writerow(map(str, frame.columns))
    special = (sep, '"', "\n", "\r")
    quote = any(  # quotes only where a text field holds the delimiter, a quote or a newline
        frame[name].astype(str).str.contains("|".join(map(re.escape, special))).any()
        for name in frame.columns
        if frame[name].dtype == object or isinstance(frame[name].dtype, pd.StringDtype)
    )
    options = pacsv.WriteOptions(
        include_header=False, delimiter=sep, quoting_style="needed" if quote else "none"
    )
    with contextlib.ExitStack() as stack:
        out = path if hasattr(path, "write") else stack.enter_context(open(path, "wb"))
        out.write(header.getvalue().encode())
        pacsv.write_csv(arrow, out, options)


def _table_writer(path: Path) -> Callable[[Any, Path], None]:
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise UsageError(
            f"cannot tell the table format of output '{path}'; end the name in "
            f"{', '.join(TABLE_SUFFIXES)}"
        )
    if suffix == ".csv":
        return lambda table, tmp: write_text_table(table, tmp, ",")
    if suffix == ".tsv":
        return lambda table, tmp: write_text_table(table, tmp, "\t")
    return lambda table, tmp: table.to_parquet(tmp)


def _run_score(args: argparse.Namespace) -> int:

    _input_path(args.annotations)
    method, params = _model_settings(args)
    kind = _data_kind(args)
    conjugate = kind == "counts" and method in CONJUGATE_METHODS
    streaming = conjugate and _chunked_counts(args)
    output = None if args.output in (None, "-") else Path(args.output)
    write = None
    if output is not None:
        write = _table_writer(output)
        dataset = streaming and output.suffix.lower() in (".parquet", ".pq")
        # fail before the expensive part
        _check_output(output, args.force, folder=dataset, source=args.annotations)
    with _scheduler(args):
        if streaming:
            return _score_streaming(args, output, method, params)
        if conjugate and args.chunk_items is not None and args.layout == "long":
            table = _score_long_in_chunks(args, method, params)
        elif conjugate:
            table = _score_conjugate(args, _read(args, kind), method, params)
        else:
            table = _summarize(args, _fit(args, _read(args, kind), method, params))
    return _emit(args, output, write, table)


@contextlib.contextmanager
def _scheduler(args: argparse.Namespace) -> Iterator[None]:
    """Run the block on the dask scheduler ``--scheduler`` names (an address of a
    ``dask.distributed`` scheduler, or threads / processes / synchronous); default dask's."""
    name = getattr(args, "scheduler", None)
    if name is None:
        yield
        return
    import dask

    if name in ("threads", "processes", "synchronous"):
        with dask.config.set(scheduler=name):
            yield
        return
    try:
        from distributed import Client
    except ImportError as err:
        raise UsageError(
            "--scheduler ADDRESS needs dask.distributed: pip install 'ambppl[dask]'"
        ) from err
    _progress(args, f"connecting to the dask scheduler at {name}")
    start = time.monotonic()
    _probe_scheduler(name, SCHEDULER_TIMEOUT)
    left = max(SCHEDULER_TIMEOUT - (time.monotonic() - start), 1.0)
    try:
        client = Client(name, timeout=left)
    except (OSError, TimeoutError, ValueError) as err:
        raise UsageError(_scheduler_message(name, _one_line(str(err)))) from err
    with client, dask.config.set(scheduler=client):
        yield


#: Seconds that ``--scheduler ADDRESS`` waits for a dask scheduler to answer, connection and
#: handshake together (a wrong address is reported within about this time).
SCHEDULER_TIMEOUT = 8.0


def _scheduler_message(name: str, reason: str) -> str:
    return (
        f"--scheduler: cannot reach a dask scheduler at {name!r}: {reason}; give the address "
        "the scheduler prints (e.g. tcp://10.0.0.5:8786; 8787 is its dashboard), or threads, "
        "processes or synchronous for a local scheduler"
    )


def _probe_scheduler(name: str, timeout: float) -> None:
    """Check within ``timeout`` seconds that a dask scheduler answers at ``name``.

    ``distributed.Client``'s timeout bounds only the connection: a peer that accepts it and
    then never answers (an HTTP server, a silent listener) hangs the handshake, and one that
    answers in another protocol (an SSH banner) is read as a frame of exabytes. So first a
    plain TCP connection (refused or unreachable at once), then dask's own handshake and an
    ``identity`` request, in a thread with a deadline: the peer must say it is a scheduler.

    Raises
    ------
    UsageError
        One line naming ``--scheduler`` and what went wrong.
    """
    import asyncio
    import socket
    import threading

    from distributed.comm import connect, parse_address, parse_host_port
    from distributed.security import Security

    deadline = time.monotonic() + timeout
    try:
        scheme, location = parse_address(name)
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(location)
    except (ValueError, TypeError) as err:
        raise UsageError(_scheduler_message(name, f"not an address ({err})")) from err
    if scheme in ("tcp", "tls"):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except ConnectionRefusedError as err:
            raise UsageError(_scheduler_message(name, "nothing listens there")) from err
        except TimeoutError as err:
            raise UsageError(
                _scheduler_message(name, f"no connection within {timeout:g} s")
            ) from err
        except (OSError, OverflowError, ValueError) as err:
            raise UsageError(_scheduler_message(name, _one_line(str(err)))) from err

    async def identify() -> Any:
        comm = await connect(name, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    outcome: dict[str, Any] = {}

    def run() -> None:
        left = max(deadline - time.monotonic(), 0.1)
        try:
            outcome["identity"] = asyncio.run(asyncio.wait_for(identify(), left))
        except BaseException as err:  # reported below as one line, whatever the peer did
            outcome["error"] = err

    thread = threading.Thread(target=run, name="ambppl-scheduler-probe", daemon=True)
    thread.start()
    thread.join(max(deadline - time.monotonic(), 0.1) + 1.0)
    error = outcome.get("error")
    if "identity" not in outcome and (error is None or isinstance(error, TimeoutError)):
        raise UsageError(
            _scheduler_message(
                name,
                f"the server there did not answer in dask's protocol within {timeout:g} s "
                "(is it another service, e.g. the dashboard or a web server?)",
            )
        )
    if error is not None:
        detail = (
            "its first bytes read as a message of impossible size"
            if isinstance(error, MemoryError)
            else f"{type(error).__name__}: {_one_line(str(error))[:120]}"
        )
        raise UsageError(
            _scheduler_message(name, f"the server there does not speak dask's protocol ({detail})")
        )
    identity = outcome["identity"]
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        raise UsageError(
            _scheduler_message(name, f"it is a dask {kind or 'server'}, not the scheduler")
        )


def _chunked_counts(args: argparse.Namespace) -> bool:
    """Whether the input is counts to read in chunks: a zarr store, or a Parquet file of
    counts (``--layout counts``, or integer columns only, besides an item column)."""

    return opens_in_chunks(Path(args.annotations), _format(args), item=args.item)


def _format(args: argparse.Namespace) -> str | None:
    """``format=`` of the readers: ``--layout`` and ``--format`` joined by ``+``."""
    return "+".join(part for part in (args.layout, args.format) if part) or None


def _text_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reading options of a text file that the command line sets (``--sep``,
    ``--comment``, ``--no-header``, ``--encoding``, ``--na-values``), as reader keywords."""
    options: dict[str, Any] = {}
    if args.sep is not None:
        options["sep"] = args.sep
    if args.comment is not None:
        options["comment"] = args.comment
    if args.no_header:
        options["header"] = None
    if args.encoding is not None:
        options["encoding"] = args.encoding
    if args.na_values:
        options["na_values"] = args.na_values
    return options


def _score_long_in_chunks(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any:
    """``--layout long --chunk-items N``: an answers file too large for memory, counted with
    dask block by block (:func:`ambppl.data.count_long_in_chunks`), then scored."""

    path = _input_path(args.annotations)
    _progress(args, f"counting the answers in {path} with dask, block by block")
    columns = _columns(args)  # names, or 0-based positions with --no-header
    options: dict[str, Any] = {"item": columns["item"], "label": columns["label"]}
    if args.cant_solve is not None:
        options["cant_solve"] = args.cant_solve
    options.update(_text_options(args))
    fmt = "+".join(part for part in ("long", args.format) if part)
    start = time.perf_counter()
    with command_line_messages(), _warnings_as_lines():
        counts = count_long_in_chunks(path, chunk_items=args.chunk_items, format=fmt, **options)
        table = score(counts, args.model, **_score_settings(args, method), **params)
    _progress(
        args,
        f"scored {len(table)} items ({table.attrs['n_distinct']} distinct count vectors) in "
        f"{time.perf_counter() - start:.1f} s",
    )
    return rank(table)


def _score_settings(args: argparse.Namespace, method: str) -> dict[str, Any]:
    """The keywords of :func:`ambppl.score` that the command line sets."""
    return {
        "method": method,
        "measure": args.measure,
        "threshold": args.threshold,
        "hdi_prob": args.hdi_prob,
        "mcse": args.mcse,
        "random_seed": args.seed,
    }


def _score_streaming(
    args: argparse.Namespace, output: Path | None, method: str, params: dict[str, Any]
) -> int:
    """Score counts chunk by chunk with dask: :func:`ambppl.score` of the counts that
    :func:`ambppl.data.open_counts_in_chunks` opens lazily, written part by part (Parquet: a
    dataset folder; CSV/TSV: one file) without holding every item; on screen / stdout the
    table is collected (and ranked) first."""

    path = _input_path(args.annotations)
    chunk_items = args.chunk_items or CHUNK_ITEMS
    _progress(args, f"reading {path} in chunks of {chunk_items} items (dask)")
    options: dict[str, Any] = {"format": args.format}
    if args.cant_solve is not None:
        options["cant_solve"] = args.cant_solve
    if args.item != "task":
        options["item"] = args.item

    start = time.perf_counter()
    try:
        with command_line_messages(), _warnings_as_lines():
            counts = open_counts_in_chunks(path, chunk_items=chunk_items, **options)
            lazy = score(counts, args.model, **_score_settings(args, method), **params)
    except ImportError as err:
        raise UsageError(_one_line(str(err))) from err
    _progress(
        args,
        f"{lazy.attrs['n_items']} items, {lazy.attrs['n_distinct']} distinct count vectors "
        f"summarized in {time.perf_counter() - start:.1f} s; writing",
    )
    if output is None:
        return _emit(args, None, None, rank(lazy.compute()))
    suffix = output.suffix.lower()
    with atomic_output(output, force=args.force, folder=suffix in (".parquet", ".pq")) as tmp:
        if suffix in (".parquet", ".pq"):
            lazy.to_parquet(tmp)
        else:
            lazy.table.to_csv(tmp, single_file=True, sep="\t" if suffix == ".tsv" else ",")
    _progress(
        args,
        f"wrote {lazy.attrs['n_items']} items to {output} in "
        f"{time.perf_counter() - start:.1f} s (items in the data's order, no rank column)",
    )
    return 0


def _score_conjugate(
    args: argparse.Namespace, counts: Any, method: str, params: dict[str, Any]
) -> Any:
    """The score table of a conjugate model from its distinct count vectors (no per-item
    draws): :func:`ambppl.score`, ranked."""

    _progress(
        args,
        f"scoring {counts.sizes['item']} items x {counts.sizes['category']} categories with "
        f"{args.model} ({method}; exact draws per distinct count vector, MCSE <= {args.mcse})",
    )

    start = time.perf_counter()
    with command_line_messages(), _warnings_as_lines():
        table = score(
            counts,
            args.model,
            **_score_settings(args, method),
            **params,
        )
    _progress(
        args,
        f"scored {len(table)} items ({table.attrs['n_distinct']} distinct count vectors) in "
        f"{time.perf_counter() - start:.1f} s",
    )
    return rank(table)


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
        "access needed) with, first for a fit that runs NUTS, whether it met the convergence "
        "standard (if not: the worst parameters, their rank plots and what to do), then the "
        "data overview, the model and prior, convergence "
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
        "      --model hierarchical_dirichlet --param kappa_sd=1 -o learned.html",
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
        type=_open_prob,
        default=0.005,
        help="dirichlet_categorical with exact draws: the item table comes from draws made "
        "once per distinct count vector, enough to bound the Monte Carlo standard error of "
        "P(measure > threshold) by this; --draws and --chains then apply to the items whose "
        "draws are checked against the closed forms (default: %(default)s)",
    )
    _add_output_options(parser, "the HTML file to write (default: %(default)s)", "report.html")
    parser.set_defaults(handler=_run_report)
    return parser


def _run_report(args: argparse.Namespace) -> int:

    _input_path(args.annotations)
    output = Path(args.output)
    if output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"the report is HTML: end the output name in .html, but got '{output}'")
    _check_output(output, args.force, source=args.annotations)
    method, params = _model_settings(args)
    if args.model == SCORE_REPORT_MODEL and method == "exact":
        html = _score_report(args, _read(args, "counts"), params)
    else:
        result = _fit(args, _read(args, _data_kind(args)), method, params)
        start = time.perf_counter()

        def step(message: str) -> None:  # the report's long steps, with the time so far
            _progress(args, f"report: {message} ({time.perf_counter() - start:.0f} s)")

        with _warnings_as_lines():
            # the file's name, also for models fitted to its rows (their counts say DataFrame)
            html = render_report(
                result,
                source=str(args.annotations),
                progress=step,
                **_report_settings(args),
            )
        _progress(args, f"report drawn in {time.perf_counter() - start:.1f} s")
    with atomic_output(output, force=args.force) as tmp:
        tmp.write_text(html, encoding="utf-8")
    _progress(args, f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    return 0


#: The model whose report is built without per-item draws (:func:`ambppl.report.score_report`)
#: when its method is exact.
SCORE_REPORT_MODEL = "dirichlet_categorical"


def _report_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords every report takes from the command line."""
    return {
        "measure": args.measure,
        "hdi_prob": args.hdi_prob,
        "threshold": args.threshold,
        "top": args.top,
        "random_seed": args.seed,
        "command": args.command_line,
    }


def _score_report(args: argparse.Namespace, counts: Any, params: dict[str, Any]) -> str:
    """The report of the fixed-prior model from distinct count vectors (no per-item draws)."""

    n_items, n_cat = counts.sizes["item"], counts.sizes["category"]
    _progress(
        args,
        f"scoring {args.model} (exact; draws per distinct count vector, MCSE <= {args.mcse}) "
        f"on {n_items} items x {n_cat} categories, checking {args.chains} x {args.draws} "
        "exact draws of the distinct vectors",
    )

    start = time.perf_counter()
    with command_line_messages(), _warnings_as_lines():
        html = score_report(
            counts,
            mcse=args.mcse,
            draws=args.draws,
            chains=args.chains,
            **_report_settings(args),
            **params,
        )
    _progress(args, f"scored, checked and drawn in {time.perf_counter() - start:.1f} s")
    return html


def _nonnegative_int(text: str) -> int:
    """Parse a whole number >= 0 (e.g. ``--budget``), also written as ``1e6``."""
    from decimal import Decimal, InvalidOperation

    try:
        value = int(text)
    except ValueError:
        try:  # 1e6, 2.5e3: exact when the decimal value is whole
            number = Decimal(text.strip())
            whole = number.is_finite() and number.adjusted() <= 30 and number == int(number)
            value = int(number) if whole else -1
        except (InvalidOperation, ValueError, OverflowError):
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
        choices=("variance", "decision"),
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

    values = np.asarray(counts.values)
    cant_solve = -1 if counts.attrs.get("cant_solve") is not None else None
    model = {"measure": args.measure, "prior": args.prior, "cant_solve": cant_solve}
    options: dict[str, Any] = {"objective": args.objective, "threshold": args.threshold}
    _progress(
        args,
        f"allocating {args.budget} answers over {values.shape[0]} items "
        f"(objective {args.objective})",
    )
    # one time guard for the allocation and the sd after it; refusals name --budget
    with command_line_messages(), _guard("budget", "--budget", args.budget):
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
        _check_output(output, args.force, source=args.annotations)
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
        "it (same options as 'score') and run the closed-form, exact-density, predictive and "
        "(after NUTS) convergence checks that apply to the model: one verdict line per check, "
        "then each predictive statistic (observed, predicted interval, verdict), what a "
        "failure means and the catalog model that addresses it (--compare fits those). Exit "
        "status 0 when every check passes, 1 when one fails, 2 for bad input.",
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
        help="family-wise false-alarm rate of each check (default: %(default)s)",
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


def _run_validate(args: argparse.Namespace) -> int:
    import pandas as pd

    start = time.perf_counter()
    if args.annotations is not None:
        return _validate_file(args, start)
    if args.compare:
        raise UsageError(
            "--compare fits other models to an annotations file: give the file, or leave "
            "--compare out to run the reference cases"
        )
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
    with pd.option_context("display.max_rows", None, "display.width", 200):
        shown = verdict.astype(object).map(
            lambda x: f"{x:.3g}" if isinstance(x, float) and x == x else "" if x != x else x
        )
        print(shown.to_string(index=False))
    print(
        "* not part of the verdict: the predictive check tests whether the model fits "
        "the data, and the reference cases are edge cases chosen to be unlike it"
    )
    word = "all checks passed" if passed else "a check FAILED"
    print(f"{word} (level {args.alpha:g} each; {time.perf_counter() - start:.1f} s)")
    return 0 if passed else 1


def _validate_file(args: argparse.Namespace, start: float) -> int:
    """``validate FILE``: read, fit, :func:`ambppl.validation.check_fit`, print its text."""

    _input_path(args.annotations)
    method, params = _model_settings(args)
    data = _read(args, _data_kind(args))
    answers = data if not hasattr(data, "sizes") else None
    if args.compare and answers is None and _names_raters(args):
        try:  # rater_effects, if suggested, fits the answers with their rater ids
            answers = _read(args, "long")
        except UsageError:
            answers = None
    result = _fit(args, data, method, params)
    _progress(args, "checking the fit")
    with _warnings_as_lines():
        check = validation.check_fit(
            result,
            answers=answers,
            alpha=args.alpha,
            random_seed=args.seed,
            compare=args.compare,
            draws=args.draws,
            chains=args.chains,
            progress=lambda message: _progress(args, message),
        )
    print(check.text(command_line=True))
    word = "all checks passed" if check.passed else "a check FAILED"
    print(f"{word} (level {args.alpha:g} each; {time.perf_counter() - start:.1f} s)")
    return 0 if check.passed else 1


def _names_raters(args: argparse.Namespace) -> bool:
    """Whether the command line names a rater column of an answers file (not counts)."""

    if holds_counts(Path(args.annotations), _format(args)):
        return False
    return _columns(args)["rater"] is not None


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


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so that no temporary output is left.

    A ``BaseException`` (as :class:`KeyboardInterrupt`) that no library's ``except Exception``
    swallows, and not a ``KeyboardInterrupt`` that a sampler may take for "stop early and
    keep the draws so far"."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: Signals after which the command cleans up and exits with status 128 + the signal number.
TERMINATION_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def _termination_signals() -> Iterator[None]:
    """Within the block SIGTERM and SIGHUP raise :class:`_Terminated` in the main thread, so
    that the temporary ``.part`` files and folders of :func:`atomic_output` are removed as
    after Ctrl-C; a second signal during the cleanup ends the process at once (the previous
    handlers are back). Outside the main thread (no signal handlers there) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in TERMINATION_SIGNALS}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    def stop(signum: int, frame: Any) -> None:
        restore()
        raise _Terminated(signum)

    for sig in TERMINATION_SIGNALS:
        signal.signal(sig, stop)
    try:
        yield
    finally:
        restore()


@contextlib.contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Within the block every warning that is shown at all is one line ``warning: ...`` on
    stderr, without the source line Python adds (a user of the command has no use for it)."""

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        print(f"warning: {_one_line(str(message))}", file=sys.stderr, flush=True)

    saved = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = saved


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
        143 after SIGTERM and 129 after SIGHUP (128 + the signal number, as a shell reports
        it; the temporary output is removed first), 141 when the reader of stdout went away
        (``| head``).

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
        with _termination_signals(), _one_line_warnings():
            return int(args.handler(args))
    except (UsageError, ValueError, TypeError, FileNotFoundError, NotImplementedError) as err:
        print(f"{PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no output was written", file=sys.stderr)
        return 130
    except _Terminated as stop:
        name = signal.Signals(stop.signum).name
        print(f"{PROG}: stopped by {name}; no output was written", file=sys.stderr)
        return 128 + stop.signum  # what a shell reports for a process ended by the signal
    except BrokenPipeError:  # e.g. `ambppl score ... -o - | head`: the reader left early
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
        return 141  # what a shell reports for a process ended by SIGPIPE
