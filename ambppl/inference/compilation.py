"""How ``fit`` compiles PyTensor programs: without fast math, so that a seed fixes the draws.

PyTensor's numba backend compiles with LLVM's fast-math flags by default (reassociation,
contraction, approximate functions). Under them a program compiled in this process and the
same program loaded from PyTensor's disk cache (written by an earlier run, or by another
process) are optimized differently and differ in the last bits of the log density's
gradient; NUTS's trajectories magnify that into other draws. A seeded fit of the flat model
on 3 items gave one set of draws with a fresh cache and another once the cache held the
program; a seeded ``dawid_skene`` fit moved a label of the face data between two runs, and
the test suite saw one of two realizations of a seeded fit by which of its processes
compiled a program first. Without fast math LLVM keeps IEEE arithmetic, so a program
computes the same bits however it was compiled or loaded, and a seed gives the same draws
on a machine whatever its cache holds.

The price, measured with ``benchmarks/bench_fastmath.py`` (log density and gradient per
evaluation): 0-11 % slower for the rater models on real data, 1.75x for the collapsed
``hierarchical_dirichlet`` program, whose whole default fit of CIFAR-10H took 7-15 % longer
(64.8 s against 60.6 s with ``--fits``; 66-69 s against 60-61 s in two earlier runs).

:func:`reproducible_compilation` sets PyTensor's process-wide flag ``numba__fastmath`` to
False while any fit that compiles is running, and gives it back afterwards (a count, so
that fits in several threads leave it off until the last one ends). A flag the user set
is overridden during the fit; programs compiled outside a fit keep the user's setting.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["reproducible_compilation"]

_LOCK = threading.Lock()
_OPEN = 0  # fits inside the context now
_SAVED: bool | None = None  # the flag's value before the first of them


@contextlib.contextmanager
def reproducible_compilation() -> Iterator[None]:
    """Compile PyTensor programs without fast math inside the block.

    Yields
    ------
    None
        Inside the block ``pytensor.config.numba__fastmath`` is False; after the last
        concurrent block ends it has its former value again.

    Notes
    -----
    Only the numba backend reads the flag (PyTensor's default linker, and nutpie's); the C
    and JAX backends compile as they did. Compiled programs are cached under keys that
    include the flag, so a program compiled with fast math is not reused without it.

    Examples
    --------
    >>> import pytensor
    >>> from ambppl.inference.compilation import reproducible_compilation
    >>> before = pytensor.config.numba__fastmath
    >>> with reproducible_compilation():
    ...     pytensor.config.numba__fastmath
    False
    >>> pytensor.config.numba__fastmath == before
    True
    """
    global _OPEN, _SAVED
    import pytensor

    with _LOCK:
        if _OPEN == 0:
            _SAVED = bool(pytensor.config.numba__fastmath)
            pytensor.config.numba__fastmath = False
        _OPEN += 1
    try:
        yield
    finally:
        with _LOCK:
            _OPEN -= 1
            if _OPEN == 0:
                pytensor.config.numba__fastmath = _SAVED
                _SAVED = None
