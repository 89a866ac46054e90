"""The work guard of planning requests: a budget of can't-solve-sum terms per request.

One request (``answers_needed``, ``next_batch``, ``expected_posterior_var`` or the ``ambppl plan``
command) charges the terms it evaluates against :data:`~ambppl.internal.limits.TIME_GUARD_S`
seconds of work; nested calls count against the outer request. A request beyond the budget is
refused with one :class:`ValueError` naming the option that sets its size.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from ambppl.internal.limits import TIME_GUARD_S, as_count, check_time, option

#: Seconds per term of the can't-solve sum (about 0.1-0.25 us per term measured on one core
#: of the development machine); with :data:`ambppl.internal.limits.TIME_GUARD_S` it bounds
#: the terms one request may sum.
SECONDS_PER_TERM = 1e-7


class Work:
    """Terms of can't-solve sums one request may still evaluate, and the option that sets
    how many (``extra``, ``max_extra`` or ``budget``; on the command line ``--budget``)."""

    def __init__(self, python: str, command_line: str, value: Any) -> None:

        self.python, self.command_line, self.value = python, command_line, value
        self.left = TIME_GUARD_S / SECONDS_PER_TERM
        self.spent = 0.0
        # a dry run takes the closed form wherever m is long and counts the terms the sums
        # would have needed (``would``) instead of summing them
        self.dry = False
        self.would = 0.0

    def charge(self, terms: float, estimated: bool = False) -> None:
        """Count ``terms`` more summed terms; refuse beyond the guard, before summing them
        (``estimated``: the terms a dry run says the request needs)."""

        how = (
            f"an estimated {terms:.3g} terms"
            if estimated
            else f"{self.spent + terms:.3g} terms ({self.spent:.3g} summed so far)"
        )
        python_call = not option(self.python, self.command_line).startswith("--")
        self._spend(
            terms,
            " with a can't-solve category (the expected variance after m more answers is then "
            "a sum of m + 1 terms for an item where no closed form is accurate enough: "
            f"{how})",
            ", or cant_solve=None if there is no can't-solve category" if python_call else "",
        )

    def fix(self, name: str) -> str:
        """What to change, in the caller's words (``name``: the option)."""
        if self.python == "budget":
            return (
                f"pass a smaller {name} (plan in rounds: allocate part of the answers, collect "
                "them, plan again)"
            )
        return f"pass a smaller {name}"

    def charge_seconds(self, seconds: float, what: str, fix: str = "") -> None:
        """Count ``seconds`` of estimated work (``what`` it is); refuse beyond the guard."""
        self._spend(seconds / SECONDS_PER_TERM, f": {what}", fix)

    def _spend(self, terms: float, what: str, fix: str) -> None:
        """Count ``terms``, or refuse (:func:`ambppl.internal.limits.check_time`) with a message
        that names the option and its value, then ``what`` and what to change (``fix`` added)."""

        if terms <= self.left:
            self.left -= terms
            self.spent += terms
            return
        name = option(self.python, self.command_line)
        value = self.value
        shown = as_count(value) if isinstance(value, numbers.Integral) else "the values given"
        said = f"{name} {shown}" if name.startswith("--") else f"{name}={shown}"
        check_time((self.spent + terms) * SECONDS_PER_TERM, f"{said}{what}", self.fix(name) + fix)


#: The work guard of the request in progress (set by the public functions).
WORK: ContextVar[Work | None] = ContextVar("ambppl_planning_work", default=None)


@contextlib.contextmanager
def guard(python: str, command_line: str, value: Any) -> Iterator[None]:
    """Run the block under a work guard naming ``python`` (``command_line`` on the command
    line), unless a request is already in progress (nested calls count against it)."""
    if WORK.get() is not None:
        yield
        return
    token = WORK.set(Work(python, command_line, value))
    try:
        yield
    finally:
        WORK.reset(token)
