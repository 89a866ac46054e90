"""Messages in the caller's words: Python keywords, or the ``ambppl`` command's options.

Inside :func:`command_line_messages` (the ``ambppl`` command reads and computes inside it)
every error message and warning names the command-line option that fixes it (``--item``,
``--format tsv``, ``--budget``) instead of the Python keyword (``item=``, ``format='tsv'``,
``budget=``). :func:`say` picks the words.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

#: True while :func:`command_line_messages` is active: messages name ``--options``.
COMMAND_LINE: ContextVar[bool] = ContextVar("ambppl_data_command_line", default=False)


@contextlib.contextmanager
def command_line_messages() -> Iterator[None]:
    """Within the block, error messages and warnings name the options of the ``ambppl``
    command (``--item``, ``--format tsv``, ``--no-header``) instead of the Python keywords
    (``item=``, ``format='tsv'``, ``header=None``).

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager (thread- and task-safe: a :class:`contextvars.ContextVar`).

    Notes
    -----
    :mod:`ambppl.cli` reads every annotations file inside this block, so that a mistake on
    the command line is answered with the option that fixes it.

    Examples
    --------
    >>> say("header=None", "--no-header")
    'header=None'
    >>> with command_line_messages():
    ...     say("header=None", "--no-header")
    '--no-header'
    """
    token = COMMAND_LINE.set(True)
    try:
        yield
    finally:
        COMMAND_LINE.reset(token)


def say(python: str, command_line: str) -> str:
    """The fix in the caller's words: a Python keyword, or the ``ambppl`` command's option."""
    return command_line if COMMAND_LINE.get() else python


def on_command_line() -> bool:
    """Whether messages should name command-line options (see :func:`say`)."""
    return bool(COMMAND_LINE.get())
