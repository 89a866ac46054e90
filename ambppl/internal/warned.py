"""Warnings recorded where they are raised and raised again for the caller.

:func:`ambppl.fit` keeps the warnings of a fit in its result (``attrs["fit_warnings"]``) and
the report lists them, with its own, in its first section; both record them here.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "FIT_WARNINGS",
    "collecting_warnings",
    "module_named",
    "stored_warnings",
    "warnings_attr",
]


#: The collectors at work, per thread (its ident -> a stack of recorders: blocks nest), and
#: the process's warning state saved by the first of them, put back by the last (``state``).
_COLLECTORS: dict[int, list[Callable[..., None]]] = {}
_STATE: dict[str, Any] = {}
_LOCK = threading.Lock()


def _dispatch(message, category, filename, lineno, file=None, line=None):  # showwarning
    """Hand a warning to the innermost collector of the thread that raised it; a thread that
    collects nothing shows it as the process did before any collector started."""
    stack = _COLLECTORS.get(threading.get_ident())
    if stack:
        stack[-1](message, category, filename, lineno, file, line)
    else:
        _STATE["show"](message, category, filename, lineno, file, line)


def _start(record: Callable[..., None]) -> None:
    with _LOCK:
        if not _COLLECTORS:  # the first collector of the process: rewrite the filters once
            saved = warnings.catch_warnings()
            saved.__enter__()
            _STATE.update(saved=saved, show=warnings.showwarning)
            # the caller's "ignore" and "error" stay (an error at once, as without a
            # collector: CPython itself swallows some, e.g. os.fork's DeprecationWarning in
            # a multi-threaded process); every other action (default, once, ...) records
            warnings.filters[:] = [
                (f[0] if f[0] in ("ignore", "error") else "always", *f[1:])
                for f in warnings.filters
            ]
            warnings.simplefilter("always", append=True)  # and what no filter names
            warnings.showwarning = _dispatch
        _COLLECTORS.setdefault(threading.get_ident(), []).append(record)


def _stop() -> None:
    with _LOCK:
        me = threading.get_ident()
        _COLLECTORS[me].pop()
        if not _COLLECTORS[me]:
            del _COLLECTORS[me]
        if not _COLLECTORS:  # the last: the filters and showwarning as they were
            _STATE.pop("saved").__exit__(None, None, None)
            _STATE.clear()


@contextlib.contextmanager
def collecting_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record the warnings raised inside (a fit's, a report's first section); raise each
    again, once, when the block ends.

    Inside the block every warning that the caller's filters show is recorded once per
    distinct text (not once per place: a warning raised in a per-item loop is kept once;
    and whether or not ``"default"`` or ``"once"`` showed it before), so that the result or
    the page keeps it however often a fit or a report is made. When the block ends, each is
    raised again (:func:`warnings.warn_explicit`, at its own source line and module, with
    that module's registry, so that the ``"default"`` action shows it once per place as
    before) under the caller's filters: the command line prints it as one ``warning:`` line,
    ``pytest.warns`` sees it. A warning the caller's filters make an error (``-W error``) is
    one at once, inside the block, as without it; one they ignore is neither recorded nor
    shown. Where the block stops on an exception (a failure after a long fit, Ctrl-C) the
    recorded ones are raised again before it, so none is lost.

    Blocks nest and run in several threads at once (fits in a thread pool): each records the
    warnings raised in its own thread. The warning filters are the process's, so while any
    block runs they are rewritten for every thread (the first block rewrites them, the last
    puts them back), and a warning raised again in one thread while another's block runs
    meets the rewritten filters (shown, not made an error).
    """
    caught: list[warnings.WarningMessage] = []
    seen: set[tuple[type[Warning], str]] = set()

    def record(message, category, filename, lineno, file=None, line=None):
        key = (category, str(message))
        if key not in seen:
            seen.add(key)
            caught.append(warnings.WarningMessage(message, category, filename, lineno, file, line))

    stopped: BaseException | None = None
    _start(record)
    try:
        yield caught
    except BaseException as exc:  # raised again below, after the warnings
        stopped = exc
    finally:
        _stop()
    for w in caught:  # under the caller's filters again
        name = module_named(w.filename)
        module = sys.modules.get(name) if name else None
        registry = vars(module).setdefault("__warningregistry__", {}) if module else None
        again = (w.message, w.category, w.filename, w.lineno)
        where = {"module": name, "registry": registry, "source": w.source}
        if stopped is None:
            warnings.warn_explicit(*again, **where)
        else:
            with contextlib.suppress(Exception):  # the block's own exception comes first
                # (a filter made an error since the block began)
                warnings.warn_explicit(*again, **where)
    if stopped is not None:
        raise stopped


def module_named(filename: str) -> str | None:
    """The name of the imported module of file ``filename`` (what a filter's ``module``
    matches), None where none is found."""
    for name, module in list(sys.modules.items()):
        try:
            if getattr(module, "__file__", None) == filename:
                return name
        except Exception:  # a lazy module that imports on attribute access
            continue
    return None


#: The attribute of a fit result that keeps the fit's warnings (:func:`warnings_attr`).
FIT_WARNINGS = "fit_warnings"


def warnings_attr(raised: list[warnings.WarningMessage]) -> str:
    """The warnings ``raised`` as an attribute netCDF can store: a JSON list of
    ``{"category": class name, "message": text}``, in order."""
    return json.dumps(
        [{"category": w.category.__name__, "message": str(w.message)} for w in raised]
    )


def stored_warnings(attrs: dict) -> list[tuple[str, str]]:
    """``(category name, text)`` of each warning kept in ``attrs[FIT_WARNINGS]`` (none where
    the attribute is absent or not such a record: a result from before it existed)."""
    try:
        records = json.loads(attrs.get(FIT_WARNINGS) or "[]")
        return [(str(r["category"]), str(r["message"])) for r in records]
    except (TypeError, ValueError, KeyError):
        return []
