"""``ambppl.fit`` timings: exact conjugate draws against bare numpy, and NUTS against exact.

1. N = 10^5 items, K = 6 categories (5 proper + can't-solve), 2000 draws, storing only
   ``amb`` (``var_names=["amb"]``): ``fit(method="exact")`` against a bare numpy sampler
   (gamma variates normalized, amb computed inline) in the same chunks. Target: <= 2x.
   Peak memory (tracemalloc, which sees numpy's allocations) is reported for both: the
   stored draws are draws x items x 8 bytes = 1.6 GB; the rest is bounded by the chunking.
2. N = 1000 items, K = 3: ``fit(method="nuts")`` (PyMC's NUTS, 2 chains x 1000 draws after
   1000 tuning steps, compile time included) against ``fit(method="exact")`` with the same
   number of draws.
3. ``summarize`` on N = 10^4 items x 4000 draws against bare numpy statistics of the same
   array (vectorized over items; no per-item or per-variable calls).

Run: ``.venv/bin/python benchmarks/run.py fit``.
"""

from __future__ import annotations

import gc
import importlib
import time
import tracemalloc

import numpy as np
import xarray as xr

import ambppl

fit_module = importlib.import_module("ambppl.inference.fitting")


def _counts(n_items: int, k: int, n_answers: int, seed: int) -> xr.DataArray:
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.full(k, 0.5), size=n_items)
    values = rng.multinomial(n_answers, q)
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(n_items), "category": [f"c{j}" for j in range(k - 1)] + ["cs"]},
        attrs={"cant_solve": "cs"},
    )


def _bare_numpy(counts: np.ndarray, prior: float, draws: int, seed: int) -> np.ndarray:
    """Baseline: Dirichlet draws as normalized gammas and amb inline, same chunking as fit."""
    rng = np.random.default_rng(seed)
    alpha = counts + prior
    n, k = alpha.shape
    out = np.empty((draws, n))
    chunk = max(1, fit_module.CHUNK_BYTES // (8 * draws * k))
    for start in range(0, n, chunk):
        a = alpha[start : start + chunk]
        g = rng.standard_gamma(a, size=(draws, *a.shape))
        g /= g.sum(axis=-1, keepdims=True)
        proper = g[..., :-1]
        out[:, start : start + chunk] = 1.0 - (proper**2).sum(-1) / proper.sum(-1)
    return out


def _timed(func, *args, **kwargs):
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    t = time.perf_counter()
    result = func(*args, **kwargs)
    elapsed = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, elapsed, peak


def _exact_vs_numpy() -> None:
    n_items, k, draws = 100_000, 6, 2000
    counts = _counts(n_items, k, 20, seed=1)
    stored = draws * n_items * 8 / 2**30
    print(f"exact vs bare numpy: N={n_items}, K={k}, draws={draws}, 1 chain, store amb only")
    print(f"  stored draws: {stored:.2f} GiB; chunk: {fit_module.CHUNK_BYTES / 2**20:.0f} MiB")

    base, t_base, m_base = _timed(_bare_numpy, counts.values, 1.0, draws, 2)
    del base
    result, t_fit, m_fit = _timed(
        ambppl.fit, counts, draws=draws, chains=1, random_seed=2, var_names=["amb"]
    )
    del result
    gib = 2**30
    print(f"  bare numpy : {t_base:7.2f} s   peak {m_base / gib:5.2f} GiB   (baseline)")
    print(
        f"  fit exact  : {t_fit:7.2f} s   peak {m_fit / gib:5.2f} GiB   "
        f"ratio {t_fit / t_base:.2f}x (target <= 2x)"
    )
    print(
        f"  peak beyond the stored draws: numpy {(m_base / gib - stored):.2f} GiB, "
        f"fit {(m_fit / gib - stored):.2f} GiB"
    )


def _nuts_vs_exact() -> None:
    n_items, k, draws, chains = 1000, 3, 1000, 2
    counts = _counts(n_items, k, 20, seed=3)
    print(f"nuts vs exact: N={n_items}, K={k}, {chains} chains x {draws} draws")
    _, t_exact, _ = _timed(ambppl.fit, counts, draws=draws, chains=chains, random_seed=4)
    t = time.perf_counter()
    nuts = ambppl.fit(
        counts,
        method="nuts",
        draws=draws,
        chains=chains,
        random_seed=4,
        sample_kwargs={"tune": 1000, "cores": min(chains, 2)},
    )
    t_nuts = time.perf_counter() - t
    sampling = float(nuts["posterior"].attrs.get("sampling_time", float("nan")))
    print(f"  exact      : {t_exact:7.2f} s   (baseline)")
    print(f"  nuts total : {t_nuts:7.2f} s   ratio {t_nuts / t_exact:.0f}x (compile included)")
    print(f"  nuts sample: {sampling:7.2f} s   ratio {sampling / t_exact:.0f}x (sampling only)")


def _summarize_vs_numpy() -> None:
    n_items, k, draws, chains = 10_000, 6, 1000, 4
    counts = _counts(n_items, k, 20, seed=5)
    result = ambppl.fit(counts, draws=draws, chains=chains, random_seed=6, var_names=["amb"])
    amb = result["posterior"]["amb"].values.reshape(chains * draws, n_items)
    print(f"summarize: N={n_items}, {chains} chains x {draws} draws of amb")

    def bare() -> None:
        amb.mean(0), amb.std(0, ddof=1), np.quantile(amb, [0.055, 0.945], axis=0)
        (amb > 0.4).mean(0)

    _, t_base, _ = _timed(bare)
    _, t_sum, _ = _timed(ambppl.summarize, result)
    print(f"  numpy mean/sd/quantiles/P : {t_base:6.2f} s   (baseline)")
    print(
        f"  ambppl.summarize          : {t_sum:6.2f} s   ratio {t_sum / t_base:.1f}x "
        f"({1e3 * t_sum / n_items:.3f} ms per item, all columns incl. HDI and closed forms)"
    )


def main() -> None:
    _exact_vs_numpy()
    _summarize_vs_numpy()
    _nuts_vs_exact()


if __name__ == "__main__":
    main()
