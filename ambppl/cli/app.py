"""The ``ambppl`` command's entry point: the parser built from the subcommand registry, and
:func:`main`, which runs a subcommand and turns bad input, Ctrl-C, SIGTERM, SIGHUP and a
closed stdout into one line on stderr and an exit status."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from ambppl import __version__
from ambppl.cli import common, models, plan, report, score, validate
from ambppl.cli.common import EXIT_USAGE, PROG, UsageError, _one_line
from ambppl.cli.signals import (
    _library_logs,
    _one_line_warnings,
    _Terminated,
    _termination_signals,
)

#: The subcommands in the order of ``ambppl --help``; others follow in registration order.
HELP_ORDER = ("score", "report", "plan", "validate", "models")

#: The modules whose import registers the subcommands of :data:`HELP_ORDER`.
SUBCOMMAND_MODULES = (score, report, plan, validate, models)


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line: ``ambppl: error: ...`` (exit status 2).

    An option that no parser knows is reported by the subcommand's parser (``see 'ambppl
    validate --help'``; :func:`main`), not by the top-level one that argparse leaves it to."""

    #: The subcommands' parsers by name (set by :func:`build_parser` on the top-level one).
    commands: dict[str, argparse.ArgumentParser] | None = None

    def error(self, message: str) -> NoReturn:
        hint = f"see '{self.prog} --help'"
        self.exit(EXIT_USAGE, f"{PROG}: error: {_one_line(message)} ({hint})\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the ``ambppl`` argument parser from the subcommand registry.

    Returns
    -------
    argparse.ArgumentParser
        The parser; every subcommand parser sets ``handler`` (a function of the parsed
        namespace returning the exit status).

    Notes
    -----
    Usage errors print one line ``ambppl: error: ...`` and exit with status 2. The registry
    is :data:`ambppl.cli.common.SUBCOMMANDS` (looked up when the parser is built).

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
    registry = common.SUBCOMMANDS
    ordered = [name for name in HELP_ORDER if name in registry]
    for name in ordered + [name for name in registry if name not in ordered]:
        registry[name](subparsers)
    parser.commands = dict(subparsers.choices)
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
    and propagate. Every warning is one line ``warning: ...`` on stderr, those that PyMC,
    PyTensor and nutpie log included; their progress lines are left out with ``--quiet``,
    and PyMC's convergence diagnostics always (ambppl's own convergence warning says what
    failed and which option helps).

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
        args, extras = parser.parse_known_args(argv)
        if extras:  # the subcommand's parser says so, pointing to its own --help
            command = (parser.commands or {}).get(getattr(args, "command", None), parser)
            command.error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as done:  # --help, --version (0) or a usage error (2, message printed)
        return int(done.code or 0)
    args.command_line = shlex.join([PROG, *argv])
    try:
        quiet = bool(getattr(args, "quiet", False))
        with _termination_signals(), _one_line_warnings(), _library_logs(quiet):
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
