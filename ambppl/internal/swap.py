"""Outputs written beside their place and moved into it only when complete.

:func:`folder_in_place` writes a folder (a Parquet dataset) into a temporary sibling and
renames it onto its path at the end, so that a reader never sees half of it and an error
leaves an existing output as it was (:func:`discard` removes the temporary output);
:func:`output_mode` gives a new output the permission bits of a normally created one (the
umask, read by :func:`current_umask`). Used by :meth:`ambppl.analysis.scoring.LazyScore.to_parquet`
(which ``ambppl score`` calls for a Parquet dataset) and, for :func:`output_mode` and
:func:`discard`, the ``ambppl`` command's file outputs (:mod:`ambppl.cli.output`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's
    ``/proc/self/status``); elsewhere set to ``0o077`` (never looser) and put back at once."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


def output_mode(path: Path, default: int) -> int:
    """Permission bits of an output written onto ``path``: those of the file or folder it
    replaces, else ``default`` less the umask, as for a normally created one (``0o666`` for a
    file, ``0o777`` for a folder)."""
    if path.exists():
        return stat.S_IMODE(path.stat().st_mode)
    return default & ~current_umask()


def remove(path: Path) -> None:
    """Remove ``path``: a folder with everything in it, else the file or symbolic link (a
    link to a folder is removed, not the folder it points to)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def discard(tmp: Path) -> None:
    """Remove a temporary output after an error, Ctrl-C or SIGTERM, now and once more when
    Python exits: a dask task still running in a worker thread may write to it after the main
    thread gave up (Python joins those threads at exit, before :mod:`atexit` handlers)."""

    def remove_now(path: Path = tmp) -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()

    remove_now()
    atexit.register(remove_now)


@contextlib.contextmanager
def folder_in_place(
    path: Path,
    check: Callable[[], None],
) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; move it onto ``path`` when the block ends.

    Parameters
    ----------
    path : pathlib.Path
        The folder to write; its parent folder must exist.
    check : callable
        Called with no argument just before the move: it raises where ``path`` may not be
        replaced now (something appeared there while the block ran, and the caller does
        not overwrite).

    Returns
    -------
    contextlib.AbstractContextManager of pathlib.Path
        The temporary folder ``.<name>.*.part`` beside ``path``.

    Notes
    -----
    After the block and ``check``, the folder gets the permission bits of :func:`output_mode`
    (those of a folder it replaces, else ``0o777`` less the umask: a temporary folder is
    made ``0o700``), an existing ``path`` is removed (:func:`remove`) and the folder renamed
    onto it with :func:`os.replace`. After an exception in the block or in ``check``, the
    temporary folder is removed (after one in the block, once more at exit: :func:`discard`)
    and ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "out"
    >>> with folder_in_place(folder, lambda: None) as tmp:
    ...     _ = (tmp / "part.0").write_text("done")
    >>> (folder / "part.0").read_text(), [p.name for p in folder.parent.iterdir()]
    ('done', ['out'])
    """
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part"))
    try:
        try:
            yield tmp
        except BaseException:
            discard(tmp)
            raise
        check()
        # a folder replacing a file (or a link to one) takes the bits of a new folder
        mode = output_mode(path, 0o777) if path.is_dir() else 0o777 & ~current_umask()
        os.chmod(tmp, mode)
        if path.exists() or path.is_symlink():
            remove(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
