"""Elementwise work shared out over threads; BLAS held to one thread for small sequential work.

Private helper of :mod:`ambppl.maths.exact` (:func:`map_chunks`) and of the optimizing routes
of :func:`ambppl.fit` (:func:`one_blas_thread`). numpy's and scipy.special's loops release the GIL,
so a large elementwise evaluation split into contiguous chunks runs on several cores:
measured 1.3-2x on 2 cores for the quadrature's integrands and incomplete beta functions
from ~8000 elements (below that the thread hand-off costs more than it saves).

Work that is already running on a chunk does not split again (a pool thread waiting for
its own pool could deadlock), and a forked child gets a pool of its own (the parent's
threads do not survive a fork, and a pool without them would never run its tasks).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["MIN_CHUNK", "N_THREADS", "map_chunks", "one_blas_thread"]

#: Threads (at most 8; 1 means everything runs on the calling thread).
N_THREADS = min(os.cpu_count() or 1, 8)
#: The fewest elements per chunk.
MIN_CHUNK = 4096

_POOLS: dict[int, ThreadPoolExecutor] = {}
_LOCAL = threading.local()


def _pool() -> ThreadPoolExecutor:
    """This process's pool."""
    pid = os.getpid()
    if pid not in _POOLS:
        _POOLS.clear()
        _POOLS[pid] = ThreadPoolExecutor(N_THREADS, thread_name_prefix="ambppl")
    return _POOLS[pid]


def map_chunks(fn: Callable[[slice], None], size: int) -> None:
    """Call ``fn(chunk)`` for contiguous slices covering ``range(size)``, in parallel.

    ``fn`` writes its results itself (into a preallocated array). One chunk runs on the
    calling thread; with fewer than ``2 * MIN_CHUNK`` elements, one thread, or from inside
    another chunk, ``fn(slice(0, size))`` runs alone.
    """
    k = min(N_THREADS, size // MIN_CHUNK)
    if k < 2 or getattr(_LOCAL, "inside", False):
        fn(slice(0, size))
        return
    bounds = np.linspace(0, size, k + 1).astype(int)
    chunks = [slice(bounds[i], bounds[i + 1]) for i in range(k)]

    def run(chunk: slice) -> None:
        _LOCAL.inside = True
        try:
            fn(chunk)
        finally:
            _LOCAL.inside = False

    futures = [_pool().submit(run, chunk) for chunk in chunks[1:]]
    run(chunks[0])
    for fut in futures:
        fut.result()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Hold the BLAS libraries (OpenBLAS, MKL) to one thread inside the block.

    L-BFGS (``scipy.optimize``'s ``setulb``) makes many small BLAS calls per iteration; with
    a threaded BLAS each call wakes its threads. Measured on 2 cores (2026-11-27, the dog
    data's ``dawid_skene`` mode, 1744 parameters, 163 iterations): 0.56 s inside ``setulb``
    with OpenBLAS's threads, 0.011 s with one, the whole mode 0.84 s against 0.19 s.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
