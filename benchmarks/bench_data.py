"""Reading annotations at scale: ``read_annotations`` on synthetic long tables.

Baseline (measured in the same run): the plain pandas way of counting,
``df.groupby(["task", "label"]).size().unstack(fill_value=0)``, which does no checks and
keeps no category order. Prints absolute times, the ratio to the baseline and peak memory
(tracemalloc, Python allocations incl. numpy/pandas buffers).

Run: ``.venv/bin/python benchmarks/run.py data``
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pandas as pd

from ambppl.data.readers import read_annotations

LABELS = np.array(["Negative", "Neutral", "Positive", "Unrelated", "I can't tell"], dtype=object)


def make(n_rows: int, seed: int = 1) -> pd.DataFrame:
    """Long table: 20 answers per item, 500 workers, 1 % missing labels, string labels."""
    rng = np.random.default_rng(seed)
    labels = pd.array(LABELS[rng.integers(0, len(LABELS), n_rows)], dtype="str")
    labels[rng.random(n_rows) < 0.01] = None
    return pd.DataFrame(
        {
            "task": np.repeat(np.arange(n_rows // 20), 20)[:n_rows],
            "worker": rng.integers(0, 500, n_rows),
            "label": labels,
        }
    )


def timed(fn, repeat: int = 3) -> tuple[float, float]:
    """Best wall time over ``repeat`` runs and peak traced memory (MiB) of one run."""
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, peak


def main() -> None:
    print(f"{'rows':>10} {'baseline s':>11} {'ambppl s':>9} {'ratio':>6} {'peak MiB':>9}")
    for n_rows in (10**5, 10**6, 5 * 10**6):
        df = make(n_rows)
        base, _ = timed(lambda df=df: df.groupby(["task", "label"]).size().unstack(fill_value=0))
        ours, peak = timed(lambda df=df: read_annotations(df, cant_solve="I can't tell"))
        print(f"{n_rows:>10} {base:>11.3f} {ours:>9.3f} {ours / base:>6.2f} {peak:>9.0f}")


if __name__ == "__main__":
    main()
