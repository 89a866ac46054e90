"""Repeated ``collapsed`` fits: the compiled program reused (``ambppl.inference.reuse``) or not.

A simulation study, a stratified analysis or a test suite fits ``hierarchical_dirichlet`` by
its collapsed route to many data sets of the same categories. Each fit here: 300 items x 8
answers over 3 categories drawn from ``Dirichlet(kappa * mu)`` (a new ``mu`` and ``kappa``
per data set, seeded), ``fit(counts, "hierarchical_dirichlet", var_names=["amb"],
log_likelihood=False, random_seed=s)`` with the defaults (4 chains x 1000 draws after 1000
tuning steps, PyMC's NUTS).

Rows, ``FITS`` data sets each, in one process, the order alternating between rounds:

- **fresh** (baseline): ``reuse.clear()`` before every fit, so each fit builds and compiles
  its program, as every fit did before the reuse;
- **reused**: the cache kept, so the first fit of the round compiles and the others set their
  data into the frozen program.

Printed: seconds per fit (median over the round, best round), the ratio reused / fresh, and
whether the two gave identical draws of ``kappa`` for every data set (they must).

Run: ``.venv/bin/python benchmarks/run.py reuse`` (about 3 minutes on 2 cores).
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np
import xarray as xr

import ambppl
from ambppl.inference import reuse

FITS = 6
ROUNDS = 2
N_ITEMS, N_ANSWERS = 300, 8


def data_set(seed: int) -> xr.DataArray:
    """One simulated data set (a new ``mu`` and ``kappa``, then the items)."""
    rng = np.random.default_rng(seed)
    mu, kappa = rng.dirichlet(np.ones(3) * 2.0), rng.uniform(2.0, 20.0)
    q = rng.dirichlet(kappa * mu, size=N_ITEMS)
    values = np.array([rng.multinomial(N_ANSWERS, p) for p in q])
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(N_ITEMS), "category": ["x", "y", "cs"]},
        name="counts",
        attrs={"cant_solve": "cs"},
    )


def _fit(counts: xr.DataArray, seed: int) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(
            counts,
            "hierarchical_dirichlet",
            var_names=["amb"],
            log_likelihood=False,
            random_seed=seed,
        )
    return time.perf_counter() - start, result["posterior"]["kappa"].values


def _round(sets: list[xr.DataArray], keep: bool) -> tuple[list[float], list[np.ndarray]]:
    reuse.clear()
    seconds, kappas = [], []
    for seed, counts in enumerate(sets):
        if not keep:
            reuse.clear()
        wall, kappa = _fit(counts, seed)
        seconds.append(wall)
        kappas.append(kappa)
    return seconds, kappas


def main() -> None:
    sets = [data_set(seed) for seed in range(FITS)]
    best: dict[str, float] = {}
    first_fit: dict[str, float] = {}
    draws: dict[str, list[np.ndarray]] = {}
    for r in range(ROUNDS):
        for name in ("fresh", "reused") if r % 2 == 0 else ("reused", "fresh"):
            seconds, kappas = _round(sets, keep=name == "reused")
            later = statistics.median(seconds[1:])
            if later < best.get(name, np.inf):
                best[name], first_fit[name] = later, seconds[0]
            draws[name] = kappas
    same = all(np.array_equal(a, b) for a, b in zip(draws["fresh"], draws["reused"], strict=True))
    print(f"{FITS} collapsed fits of {N_ITEMS} items x {N_ANSWERS} answers, 3 categories;")
    print("seconds per fit after the first (median of a round, best of rounds):")
    print(f"  fresh (baseline)  {best['fresh']:6.2f} s   first fit {first_fit['fresh']:5.2f} s")
    print(f"  reused            {best['reused']:6.2f} s   first fit {first_fit['reused']:5.2f} s")
    print(f"  ratio reused / fresh: {best['reused'] / best['fresh']:.2f}")
    print(f"  identical draws of kappa on every data set: {same}")


if __name__ == "__main__":
    main()
