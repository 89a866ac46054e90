"""Closed-form mean and variance of amb for 10^7 items x 6 categories.

Run: ``.venv/bin/python benchmarks/run.py moments`` (set ``AMBPPL_BENCH_ROWS`` for another
number of items). Prints, for ``dirichlet_mean(alpha) + dirichlet_var(alpha)`` on an
``alpha`` array of shape (10^7, 6):

* the absolute time (best of 3; target <= 2 s on 2 cores),
* ratios against baselines measured in the same run (target <= 1.3x the bare expression):
  the same cancellation-free formulas as one whole-array numpy expression without checks
  ("bare numpy"), the library's own block kernels without argument checks (the cost of the
  checks), and the paper's printed (unstable, ERRATA 5) formulas as whole-array numpy,
* the peak of extra memory allocated by the call (tracemalloc), next to the input's size.
"""

from __future__ import annotations

import os
import time
import tracemalloc

import numpy as np

ROWS = int(os.environ.get("AMBPPL_BENCH_ROWS", 10_000_000))
COLS = 6
REPEATS = 3


def _pairs(a: np.ndarray) -> np.ndarray:
    run = a[:, 0].copy()
    e2 = np.zeros_like(run)
    for k in range(1, a.shape[1]):
        e2 += a[:, k] * run
        run += a[:, k]
    return e2


def bare_mean(alpha: np.ndarray) -> np.ndarray:
    """E(amb) = alpha_cs/alpha_0 + 2 e2/(alpha_0 (b + 1)), whole-array numpy."""
    a, a_cs = alpha[:, :-1], alpha[:, -1]
    b = a.sum(axis=1)
    a0 = b + a_cs
    return a_cs / a0 + 2.0 * _pairs(a) / (a0 * (b + 1.0))


def bare_var(alpha: np.ndarray) -> np.ndarray:
    """Var(amb) = Var(X S2), the same formulas as ambppl.maths.moments, whole-array numpy."""
    a, a_cs = alpha[:, :-1], alpha[:, -1]
    b = a.sum(axis=1)
    a0 = b + a_cs
    p2 = np.einsum("ij,ij->i", a, a)
    e2 = _pairs(a)
    d = a - (p2 / b)[:, None]
    ad = a * d
    t = np.maximum(b * np.einsum("ij,ij->i", ad, d) - ad.sum(axis=1) ** 2, 0.0)
    bb1 = b * (b + 1.0)
    mean_y = (p2 + b) / bb1
    var_y = 4.0 * ((b + 1.0) * t + (p2 + b) * e2) / (bb1 * bb1) / ((b + 2.0) * (b + 3.0))
    mean_x = b / a0
    var_x = b * a_cs / (a0 * a0 * (a0 + 1.0))
    return var_x * var_y + var_x * mean_y**2 + mean_x**2 * var_y


def paper_mean_var(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paper's printed eqs. expr_amb_final and R + (S - 1)(1 - E)^2 (unstable)."""
    a, a_cs = alpha[:, :-1], alpha[:, -1]
    b = a.sum(axis=1)
    a0 = b + a_cs
    s1 = (a * (a + 1.0)).sum(axis=1)
    mean = 1.0 - s1 / (a0 * (b + 1.0))
    r = (a * (a + 1.0) * ((a + 2.0) * (a + 3.0) - a * (a + 1.0))).sum(axis=1) / (
        a0 * (a0 + 1.0) * (b + 2.0) * (b + 3.0)
    )
    s = a0 * (b + 1.0) ** 2 / ((a0 + 1.0) * (b + 2.0) * (b + 3.0))
    return mean, r + (s - 1.0) * (1.0 - mean) ** 2


def _best(func, *args) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        func(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def _peak_bytes(func, *args) -> int:
    tracemalloc.start()
    try:
        func(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    from ambppl import dirichlet_mean, dirichlet_var
    from ambppl.maths.moments import _mean_amb, _var_amb

    rng = np.random.default_rng(20261126)
    # concentrations like posterior counts + prior: 0.5 + Poisson-ish counts, some large
    alpha = 0.5 + rng.gamma(0.7, 6.0, size=(ROWS, COLS))

    def library(x: np.ndarray) -> None:
        dirichlet_mean(x)
        dirichlet_var(x)

    def bare(x: np.ndarray) -> None:
        bare_mean(x)
        bare_var(x)

    def kernels(x: np.ndarray) -> None:
        idx = COLS - 1
        for start in range(0, ROWS, 8192):
            block = np.ascontiguousarray(x[start : start + 8192].T)
            _mean_amb(block, idx)
            _var_amb(block, idx)

    # the same numbers (the block kernels and the whole-array expression agree to rounding)
    lib_m, lib_v = dirichlet_mean(alpha[:100_000]), dirichlet_var(alpha[:100_000])
    np.testing.assert_allclose(lib_m, bare_mean(alpha[:100_000]), rtol=1e-13)
    np.testing.assert_allclose(lib_v, bare_var(alpha[:100_000]), rtol=1e-12)

    t_lib = _best(library, alpha)
    t_bare = _best(bare, alpha)
    t_kern = _best(kernels, alpha)
    t_paper = _best(paper_mean_var, alpha)
    peak_lib = _peak_bytes(library, alpha)
    peak_bare = _peak_bytes(bare, alpha)

    mib = 2.0**20
    print(f"alpha: {ROWS:,} x {COLS} float64 ({alpha.nbytes / mib:,.0f} MiB); best of {REPEATS}")
    print(f"{'what':<52}{'seconds':>9}{'ratio':>9}")
    rows = [
        ("ambppl dirichlet_mean + dirichlet_var", t_lib),
        ("bare numpy, same formulas, whole arrays (baseline)", t_bare),
        ("ambppl block kernels without argument checks", t_kern),
        ("paper's printed formulas, whole arrays (unstable)", t_paper),
    ]
    for name, t in rows:
        print(f"{name:<52}{t:>9.3f}{t / t_bare:>8.2f}x")
    print(f"argument checks cost {t_lib / t_kern:.2f}x the bare block kernels")
    print(
        f"peak extra memory: ambppl {peak_lib / mib:,.0f} MiB, "
        f"bare numpy {peak_bare / mib:,.0f} MiB"
    )
    print(
        "targets: <= 1.3x the bare-numpy baseline "
        f"({'met' if t_lib <= 1.3 * t_bare else 'NOT met'}), <= 2 s absolute "
        f"({'met' if t_lib <= 2.0 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
