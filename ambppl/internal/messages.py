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


#: ``(caller, reader, note)`` while an estimator reads its data with the readers' defaults
#: (:func:`reading_for`), else None.
READ_FOR: ContextVar[tuple[str, str, str] | None] = ContextVar("ambppl_read_for", default=None)


@contextlib.contextmanager
def reading_for(caller: str, reader: str, note: str = "") -> Iterator[None]:
    """Within the block, a reader that asks for one of its options (:func:`reader_option`)
    shows the reader's call to make first: ``caller`` (``"fit"``) takes no reader options,
    only what ``reader`` (``"ambppl.read_annotations"``) returns; ``note`` is added to it.
    On the command line the option is named as ever."""
    token = READ_FOR.set((caller, reader, note))
    try:
        yield
    finally:
        READ_FOR.reset(token)


def reader_option(arg: str) -> str:
    """The fix where a reader needs its option ``arg``: ``pass item=<one of them>``, on the
    command line ``pass --item <one of them>``, and inside :func:`reading_for` the reader's
    call that names it, e.g. ``fit(ambppl.read_annotations(data, item=<one of them>), ...)``.
    """
    called = READ_FOR.get()
    if COMMAND_LINE.get() or called is None:
        return "pass " + say(f"{arg}=<one of them>", f"--{arg} <one of them>")
    caller, reader, note = called
    return (
        f"read the frame first, naming the column, and give {caller} what the reader "
        f"returns: {caller}({reader}(data, {arg}=<one of them>), ...){note}"
    )
