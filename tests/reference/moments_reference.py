"""Generate ``moments_reference.json``: 50-digit values of E(amb_old) under a Dirichlet.

Run from the repository root (a few minutes on 2 cores)::

    .venv/bin/python tests/reference/moments_reference.py

The formula is deliberately *not* the one used by :mod:`ambppl.maths.moments`: it is ERRATA item 7
as printed, ``E(amb0) = 1 - C/(2(C-1)) * (b/alpha_0) * sum_k E|p_k - 1/C|`` with
``p_k ~ Beta(alpha_k, b - alpha_k)`` and, for ``X ~ Beta(a, b')``,
``E|X - c| = (mu - c)(1 - 2 I_c(a, b')) + 2 c^a (1-c)^b' / ((a+b') B(a, b'))``, evaluated at
``mp.dps = 50`` so that its cancellations (up to ~15 digits) leave > 30 correct digits.

``mpmath.betainc`` takes minutes for parameters ~1e9, so the regularized incomplete beta is
evaluated here by its continued fraction (DLMF 8.17.22, modified Lentz) at 50 digits; the
script first checks it against ``mpmath.betainc`` on moderate parameters (agreement to 1e-40).
Inputs are stored as ``float.hex`` strings (exact), values as 40-digit decimal strings.
"""

from __future__ import annotations

import json
from multiprocessing import Pool
from pathlib import Path

import mpmath as mp
import numpy as np

DPS = 50
OUT = Path(__file__).with_name("moments_reference.json")


def betainc_cf(a: mp.mpf, b: mp.mpf, x: mp.mpf) -> mp.mpf:
    """Regularized incomplete beta I_x(a, b) by the continued fraction (DLMF 8.17.22)."""
    if x <= 0:
        return mp.mpf(0)
    if x >= 1:
        return mp.mpf(1)
    if x > (a + 1) / (a + b + 2):
        return 1 - betainc_cf(b, a, 1 - x)
    log_front = a * mp.log(x) + b * mp.log1p(-x) - mp.log(a) - mp.log(mp.beta(a, b))
    tiny = mp.mpf(10) ** (-2 * DPS)
    eps = mp.mpf(10) ** (-DPS + 2)
    # modified Lentz for 1 + d1/(1 + d2/(1 + ...)): b_j = 1, a_j = d_j
    lentz_f = mp.mpf(1)
    c = mp.mpf(1)
    d = mp.mpf(0)
    j = 0
    while True:
        j += 1
        m = j // 2
        if j % 2:
            coef = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            coef = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1 + coef * d
        if d == 0:
            d = tiny
        c = 1 + coef / c
        if c == 0:
            c = tiny
        d = 1 / d
        delta = c * d
        lentz_f *= delta
        if abs(delta - 1) < eps:
            break
        if j > 10**7:  # pragma: no cover - never reached for the inputs below
            raise RuntimeError(f"continued fraction did not converge for {a}, {b}, {x}")
    return mp.exp(log_front) / lentz_f


def mean_abs_dev(a: mp.mpf, b: mp.mpf, c: mp.mpf) -> mp.mpf:
    """E|X - c| for X ~ Beta(a, b) (ERRATA item 7)."""
    mu = a / (a + b)
    dens = 2 * mp.exp(a * mp.log(c) + b * mp.log1p(-c) - mp.log(a + b) - mp.log(mp.beta(a, b)))
    return (mu - c) * (1 - 2 * betainc_cf(a, b, c)) + dens


def mean_old(alpha: list[float], cant_solve: bool) -> mp.mpf:
    """E(amb0) for q ~ Dir(alpha), can't-solve last if ``cant_solve``."""
    a = [mp.mpf(v) for v in alpha]
    proper, a_cs = (a[:-1], a[-1]) if cant_solve else (a, mp.mpf(0))
    big_c = len(proper)
    b = mp.fsum(proper)
    a0 = b + a_cs
    c = mp.mpf(1) / big_c
    total = mp.fsum(mean_abs_dev(x, b - x, c) for x in proper)
    return 1 - mp.mpf(big_c) / (2 * (big_c - 1)) * (b / a0) * total


def cases() -> list[tuple[list[float], bool]]:
    """Adversarial vectors and a seeded log-uniform grid on [1e-3, 1e9], C+1 in 3..7."""
    out = [
        ([1.0, 1.0, 1.0], True),
        ([1.0, 1.0, 1.0], False),
        ([6.0, 1.0, 1.0], True),
        ([1e7, 1.0, 1.0], True),
        ([1e9, 1e-3, 1e-3], True),
        ([1e9, 1e-3, 1e-3], False),
        ([1e-3, 1e9, 1e-3], True),
        ([1e9, 1e9, 1e9], True),
        ([1e9, 1e9, 1e9, 1e9], False),
        ([1e-3, 1e-3, 1e-3], True),
        ([1e-3, 1e-3, 1e-3, 1e-3, 1e-3], False),
        ([1e9, 1e9 + 1.0, 1e9 + 2.0], False),
        ([2e8, 1e8, 5.0], True),
    ]
    rng = np.random.default_rng(20261126)
    for i in range(40):
        k = int(rng.integers(3, 8))
        alpha = np.exp(rng.uniform(np.log(1e-3), np.log(1e9), k)).tolist()
        out.append((alpha, bool(i % 2)))
    return out


def _one(case: tuple[list[float], bool]) -> dict:
    mp.mp.dps = DPS
    alpha, cs = case
    value = mean_old(alpha, cs)
    return {
        "alpha": [float(v).hex() for v in alpha],
        "cant_solve": -1 if cs else None,
        "mean_old": mp.nstr(value, 40),
    }


def self_check() -> None:
    """The continued fraction against mpmath.betainc where the latter is fast."""
    mp.mp.dps = DPS
    for a, b, x in [
        (0.5, 0.5, 0.3),
        (2.0, 3.0, 0.5),
        (1e-3, 2.0, 1 / 3),
        (30.0, 70.0, 0.25),
        (300.5, 200.25, 0.6),
        (1.001, 4.0, 0.2),
    ]:
        a_, b_, x_ = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        ref = mp.betainc(a_, b_, 0, x_, regularized=True)
        got = betainc_cf(a_, b_, x_)
        assert abs(got - ref) <= mp.mpf(10) ** -40 * max(abs(ref), mp.mpf(10) ** -300), (a, b, x)


def main() -> None:
    self_check()
    with Pool(2) as pool:
        rows = pool.map(_one, cases())
    payload = {
        "description": "E(amb_old) under q ~ Dirichlet(alpha); see the generating script",
        "script": "tests/reference/moments_reference.py",
        "dps": DPS,
        "cases": rows,
    }
    OUT.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {len(rows)} cases to {OUT}")


if __name__ == "__main__":
    main()
