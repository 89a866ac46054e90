"""Termination and warnings of the ``ambppl`` command: SIGTERM and SIGHUP unwind like Ctrl-C
(no temporary output is left), and every warning is one line ``warning: ...`` on stderr."""

from __future__ import annotations

import contextlib
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
