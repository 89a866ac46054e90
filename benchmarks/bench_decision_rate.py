"""The decision objective's time guard against the time it guards: seconds per vector.

``expected_correct_decision`` (and ``next_batch(objective="decision")``) enumerates
``C(m + K - 1, K - 1)`` new count vectors per item; before it starts, its guard estimates
the time as the number of vectors times a rate per route
(``ambppl.analysis._decision._SECONDS_PER_VECTOR``) and refuses a request estimated past the
planning limit. This benchmark measures each route's rate on this machine, with BLAS held
to one thread, on items of distinct counts (no shared work), and prints the measured rate,
the guard's and their ratio (guard / measured: above 1 the guard refuses requests that would
finish in time; below 1 it lets through requests that run longer than it says):

* ``exact_cs``: K = 3 with a can't-solve category, ``method="exact"`` (a quadrature per
  distinct posterior);
* ``exact``: K = 2 without one, ``method="exact"``;
* ``beta``: K = 5 with a can't-solve category (the Beta route, ``method=None``).

Each route runs twice: 60 items of few answers (their posteriors overlap: an item of counts
``(3, 1, 0)`` given ``(1, 0, 0)`` more is one of ``(4, 0, 0)`` given ``(0, 1, 0)``) and one
item given many answers (every posterior distinct: the costliest per vector).

Run: ``.venv/bin/python benchmarks/run.py decision_rate`` (about a minute on 2 cores; never
while tests run).
"""

from __future__ import annotations

import time
from math import comb

import numpy as np

#: (route, K, can't-solve position or None, method, extra answers m, items)
ROWS = (
    ("exact_cs", 3, 2, "exact", 40, 60),
    ("exact_cs", 3, 2, "exact", 250, 1),
    ("exact", 2, None, "exact", 400, 60),
    ("exact", 2, None, "exact", 20000, 1),
    ("beta", 5, 4, None, 12, 60),
    ("beta", 5, 4, None, 20, 1),
)
REPEATS = 3


def _counts(rng: np.random.Generator, k: int, items: int) -> np.ndarray:
    """``items`` distinct count vectors of 3 to 12 answers over ``k`` categories."""
    seen: set[tuple[int, ...]] = set()
    rows = []
    while len(rows) < items:
        n = int(rng.integers(3, 13))
        row = tuple(int(v) for v in rng.multinomial(n, rng.dirichlet(np.ones(k))))
        if row not in seen:
            seen.add(row)
            rows.append(row)
    return np.array(rows)


def main() -> None:
    from threadpoolctl import threadpool_limits

    from ambppl.analysis._decision import _SECONDS_PER_VECTOR, expected_correct_decision

    rng = np.random.default_rng(20261207)
    print(f"{'route':9} {'vectors':>9} {'seconds':>8} {'measured us':>12} {'guard us':>9} ratio")
    for route, k, cs, method, m, items in ROWS:
        counts = _counts(rng, k, items)
        vectors = items * comb(m + k - 1, k - 1)
        best = np.inf
        with threadpool_limits(1):
            for _ in range(REPEATS):
                start = time.perf_counter()
                expected_correct_decision(counts, m, cant_solve=cs, method=method)
                best = min(best, time.perf_counter() - start)
        measured = best / vectors
        guard = _SECONDS_PER_VECTOR["exact_cs" if route == "exact_cs" else "other"]
        print(
            f"{route:9} {vectors:9d} {best:8.2f} {1e6 * measured:12.1f} {1e6 * guard:9.1f} "
            f"{guard / measured:5.2f}"
        )


if __name__ == "__main__":
    main()
