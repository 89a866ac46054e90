"""Up-front limits on memory and time: refuse a request that cannot be done before working.

Every entry point whose memory or time grows with a number the caller chooses (``budget``,
``extra``, ``max_extra``, ``n_draws``, ``mcse``, ``draws`` x ``chains``, the number of
categories) estimates what the request needs from the code path it will take and raises one
:class:`ValueError` naming the option to change when that is beyond:

* memory: :func:`memory_ceiling`, :data:`MEMORY_FRACTION` of the memory available to new
  allocations (Linux ``MemAvailable``; else ``psutil`` if installed; else ``os.sysconf``);
  no memory check where none of them tells;
* time: a ceiling per kind of work in units of that work (summed terms, gamma variates,
  enumerated count vectors), set at about :data:`TIME_GUARD_S` seconds at the rates
  measured on one core of the development machine (the constants next to each entry point).

Inside :func:`ambppl.internal.messages.command_line_messages` (the ``ambppl`` command) the
message names the command-line option (``--budget``) instead of the Python keyword (``budget=``).
"""

from __future__ import annotations

import os
from typing import Any

from ambppl.internal.messages import COMMAND_LINE, say

#: Share of the available memory a request may plan to use (the rest is headroom for the
#: interpreter, other arrays and the caller).
MEMORY_FRACTION = 0.8

#: Wall time in seconds a request may be estimated to take before it is refused.
TIME_GUARD_S = 60.0

GIB = 2.0**30


def available_memory() -> int | None:
    """Bytes of memory available to new allocations, else None.

    Linux ``MemAvailable`` (``/proc/meminfo``), else ``psutil.virtual_memory().available``
    where psutil is installed, else ``os.sysconf`` (free physical pages), else None.
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # not installed or not supported: try the next source
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_ceiling() -> int | None:
    """Bytes a request may plan to allocate: :data:`MEMORY_FRACTION` of
    :func:`available_memory` (None where that is unknown: no check)."""
    have = available_memory()
    return None if have is None else int(MEMORY_FRACTION * have)


def option(python: str, command_line: str) -> str:
    """The option in the caller's words: ``python`` (e.g. ``"budget"``), or on the command
    line (inside :func:`ambppl.internal.messages.command_line_messages`) ``command_line``
    (``"--budget"``)."""

    return say(python, command_line)


def on_command_line() -> bool:
    """Whether messages should name command-line options (see :func:`option`)."""

    return bool(COMMAND_LINE.get())


def size(n_bytes: float) -> str:
    """Bytes as a short human size: ``"14.9 GiB"``, ``"512.0 MiB"``, ``"111.0 PiB"``."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024.0 or unit == "PiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024.0
    return f"{value:.1f} EiB"  # pragma: no cover - unreachable


def duration(seconds: float) -> str:
    """Seconds as a short human duration: ``"40 s"``, ``"12 min"``, ``"3.5 h"``, ``"9 days"``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.3g} days"


def check_memory(need: float, what: str, fix: str) -> None:
    """Raise :class:`ValueError` if ``need`` bytes exceed :func:`memory_ceiling`.

    ``what`` says what would be allocated, ``fix`` what to change (in the caller's words,
    see :func:`option`).
    """
    ceiling = memory_ceiling()
    if ceiling is None or need <= ceiling:
        return
    raise ValueError(
        f"{what} would need about {size(need)} of memory, more than the {size(ceiling)} "
        f"allowed ({MEMORY_FRACTION:.0%} of the {size(ceiling / MEMORY_FRACTION)} "
        f"available); {fix}"
    )


def check_time(seconds: float, what: str, fix: str) -> None:
    """Raise :class:`ValueError` if the estimated ``seconds`` exceed :data:`TIME_GUARD_S`."""
    if seconds <= TIME_GUARD_S:
        return
    raise ValueError(
        f"{what} would take about {duration(seconds)} (estimated; the limit is "
        f"{duration(TIME_GUARD_S)}); {fix}"
    )


def as_count(x: Any) -> str:
    """A whole number as typed: ``10**12`` as ``1e+12``, below a million as it is."""
    x = int(x)
    return str(x) if x < 10**6 else f"{x:.3g}"
