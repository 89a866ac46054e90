"""The ``ambppl`` command: parse the command line, call the library, print or write.

One module per subcommand (``score``, ``report``, ``plan``, ``validate``, ``models``): each
adds its parser to the registry (:data:`SUBCOMMANDS`, :func:`subcommand`) and runs parse ->
library call -> write; the input is read with the data layer (:func:`ambppl.data.read_input`),
never told apart here. Shared: ``common`` (the registry, :class:`UsageError`, progress),
``options`` (the input, model, summary and output options), ``inputs`` (the input read),
``settings`` (the model options as library keywords), ``output`` (checked, atomic outputs and
table writers), ``signals`` (termination and one-line warnings), ``scheduler``
(``--scheduler``) and ``app`` (:func:`build_parser`, :func:`main`). A new subcommand is one
module with one decorated function, imported in ``app``.

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

from ambppl.cli.app import build_parser, main
from ambppl.cli.common import EXIT_USAGE, PROG, SUBCOMMANDS, UsageError, subcommand
from ambppl.cli.options import SEED_MAX
from ambppl.cli.output import atomic_output, write_text_table
from ambppl.cli.signals import _warnings_as_lines as _warnings_as_lines  # for tests of warnings

__all__ = [
    "EXIT_USAGE",
    "PROG",
    "SEED_MAX",
    "SUBCOMMANDS",
    "UsageError",
    "atomic_output",
    "build_parser",
    "main",
    "subcommand",
    "write_text_table",
]
