"""Output of the ``ambppl`` command: files checked before any work, written atomically.

An output is checked before the input is read (:func:`_check_output`: the folder takes a new
file; the output is not the input, by any of its names; an existing one is replaced only with
``--force`` and only when writable, keeping its permissions) and written atomically
(:func:`atomic_output`: a temporary file in the same folder, then :func:`os.replace`); an
error, Ctrl-C, SIGTERM or SIGHUP removes the temporary file. Tables go to a file whose suffix
picks the format (:func:`write_text_table` for CSV and TSV, Parquet), to stdout as CSV
(``-o -``), or to the screen.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import errno
import io
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ambppl.cli.common import UsageError, _progress
from ambppl.internal.swap import discard, output_mode

#: Table output suffixes of ``ambppl score -o`` and ``ambppl plan -o``.
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")

#: Suffixes of a Parquet output: a dataset folder when the table is written part by part.
PARQUET_SUFFIXES = (".parquet", ".pq")


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
        # a file inside it keeps the suffix that told the format (d.csv/out.csv); every
        # command refuses an output without a suffix of its format before this check
        inside = path / f"out{path.suffix}"
        raise UsageError(
            f"output '{path}' is a folder; give a file name inside it, e.g. -o {inside}"
        )
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
    _check_output(path, force)
    with _write_errors(path):
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(name)
    try:
        with _write_errors(path):
            yield tmp
            _check_output(path, force)  # a file may have appeared while we worked
            os.chmod(tmp, output_mode(path, 0o666))
            os.replace(tmp, path)
    except BaseException:
        discard(tmp)
        raise
    finally:
        if tmp.exists():
            tmp.unlink()


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


def write_dataset(path: Path, *, force: bool, write: Callable[..., None]) -> None:
    """Write a folder output (a Parquet dataset) with ``write(path, overwrite=force)``, a
    writer that writes beside ``path`` and moves the folder into place itself
    (:meth:`ambppl.analysis.scoring.LazyScore.to_parquet`, through
    :func:`ambppl.internal.swap.folder_in_place`); the command's checks and messages as
    :func:`atomic_output`'s.

    Raises
    ------
    UsageError
        As :func:`atomic_output`, also where ``path`` appeared while the dataset was written
        (the writer's ``FileExistsError``, in the command's words).
    """
    _check_output(path, force, folder=True)
    with _write_errors(path):
        try:
            write(path, overwrite=force)
        except FileExistsError:  # it appeared while we worked: the command's message
            _check_output(path, force, folder=True)
            raise


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


def _table_output(
    args: argparse.Namespace, source: str | Path, *, folder: bool = False
) -> tuple[Path | None, Callable[[Any, Path], None] | None]:
    """``-o`` of a table, checked before any work: the output and its writer (both None for
    the screen and ``-o -``). ``folder``: the table may be written as a Parquet dataset."""
    if args.output in (None, "-"):
        return None, None
    output = Path(args.output)
    write = _table_writer(output)
    _check_output(output, args.force, folder=folder, source=source)
    return output, write
