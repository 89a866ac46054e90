"""Termination and warnings of the ``ambppl`` command: SIGTERM and SIGHUP unwind like Ctrl-C
(no temporary output is left), and every warning is one line ``warning: ...`` on stderr, the
log records of PyMC, PyTensor and nutpie included (their progress lines only without
``--quiet``)."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

from ambppl.cli.common import _one_line
from ambppl.inference.convergence import ConvergenceWarning, convergence_message


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
    that the temporary ``.part`` files and folders of :func:`ambppl.cli.atomic_output` are
    removed as after Ctrl-C; a second signal during the cleanup ends the process at once (the
    previous handlers are back). Outside the main thread (no signal handlers there) nothing
    changes."""
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


#: Loggers of the libraries that fit: their records follow the command's conventions.
LIBRARY_LOGGERS = ("pymc", "pytensor", "nutpie")

#: PyMC's convergence diagnostics after sampling (R-hat, ESS, divergences, tree depth, too
#: few chains or draws): ambppl checks every NUTS fit itself and says what fails in one
#: ``warning:`` line naming the option that helps, so these records are not shown.
PYMC_CONVERGENCE_LOGGER = "pymc.stats.convergence"


class _LibraryLogHandler(logging.Handler):
    """Show a library's log record the command's way: a warning (WARNING and above) as one
    line ``warning: ...``, a progress line (below WARNING) as it is unless ``quiet``, PyMC's
    convergence diagnostics not at all; on the ``sys.stderr`` of the moment."""

    def __init__(self, quiet: bool) -> None:
        super().__init__(logging.DEBUG)
        self.quiet = quiet

    def emit(self, record: logging.LogRecord) -> None:
        name = record.name
        if name == PYMC_CONVERGENCE_LOGGER or name.startswith(PYMC_CONVERGENCE_LOGGER + "."):
            return
        try:
            message = record.getMessage()
        except Exception:  # a library's malformed record: logging's own report
            self.handleError(record)
            return
        if record.levelno >= logging.WARNING:
            print(f"warning: {_one_line(message)}", file=sys.stderr, flush=True)
        elif not self.quiet:
            print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _library_logs(quiet: bool) -> Iterator[None]:
    """Within the block the records of :data:`LIBRARY_LOGGERS` go to one handler that shows
    them the command's way (:class:`_LibraryLogHandler`): PyMC's progress lines
    ("Initializing NUTS...", "Sampling 2 chains ...") unless ``quiet`` (``--quiet``), every
    warning as one line ``warning: ...``, PyMC's convergence diagnostics not at all (ambppl's
    own convergence warning says what failed and which option helps). The loggers' own
    handlers, levels and propagation are back after the block.

    Only the command does this: the Python API leaves the libraries' logging as they set it.
    """
    handler = _LibraryLogHandler(quiet)
    loggers = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    saved = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    pymc_before = "pymc" in sys.modules
    for lg in loggers:
        lg.handlers = [handler]  # PyMC's own StreamHandler is set aside, not doubled
        lg.propagate = False
        # PyMC's progress lines are INFO (PyMC shows them by default); PyTensor's INFO
        # records are compiler chatter, shown neither by PyTensor nor here
        lg.setLevel(logging.WARNING if quiet or lg.name == "pytensor" else logging.INFO)
    try:
        yield
    finally:
        for lg, (handlers, level, propagate) in zip(loggers, saved, strict=True):
            lg.handlers = handlers
            lg.setLevel(level)
            lg.propagate = propagate
        if not pymc_before and "pymc" in sys.modules:
            _pymc_import_logging(loggers[0])


def _pymc_import_logging(logger: logging.Logger) -> None:
    """Set up the ``pymc`` logger as PyMC's import does (``pymc/__init__.py``: INFO and a
    stream handler where the root logger has none), for PyMC first imported inside
    :func:`_library_logs`: its import saw that block's handler and set up nothing, so after
    an in-process command (tests, a notebook) PyMC's progress lines would be lost."""
    if not logging.root.handlers and not logger.handlers:
        logger.setLevel(logging.INFO)
        logger.addHandler(logging.StreamHandler())
