"""What every module of the ``ambppl`` command shares: the program's name, the exit status of
bad usage, :class:`UsageError`, the subcommand registry, one-line messages and progress."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

PROG = "ambppl"

#: Exit status for bad usage or bad input (the argparse convention).
EXIT_USAGE = 2

#: The subcommand registry: name -> function adding the subcommand's parser.
SUBCOMMANDS: dict[str, Callable[[Any], argparse.ArgumentParser]] = {}


class UsageError(Exception):
    """A problem with the command line or the files it names (exit status 2)."""


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
    Each subcommand's module (``ambppl/cli/score.py``, ...) registers itself when
    :mod:`ambppl.cli` is imported. ``ambppl --help`` lists score, report, plan, validate and
    models in that order, then any other subcommand in the order of registration.

    References
    ----------
    The Python documentation of :mod:`argparse`, "Sub-commands".

    Examples
    --------
    >>> import ambppl.cli
    >>> "score" in SUBCOMMANDS and "report" in SUBCOMMANDS and "models" in SUBCOMMANDS
    True
    """

    def register(add_parser: Callable[..., Any]) -> Callable[..., Any]:
        if name in SUBCOMMANDS:
            raise ValueError(f"subcommand {name!r} is registered already")
        SUBCOMMANDS[name] = add_parser
        return add_parser

    return register


def _one_line(message: str) -> str:
    """Collapse a (possibly multi-line) message onto one line."""
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


def _progress(args: argparse.Namespace, message: str) -> None:
    """Report progress on stderr unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _reporter(args: argparse.Namespace) -> Callable[[str], None]:
    """``progress=`` of the library calls: their progress lines on stderr unless ``--quiet``."""
    return lambda message: _progress(args, message)
