"""Generate ``exact_reference.json``: 50-digit mpmath values of the exact C = 2 densities.

Run from the repository root (takes a few minutes on 2 cores)::

    .venv/bin/python tests/reference/exact_reference.py

The formulation is deliberately *not* the one used by :mod:`ambppl.exact`: it integrates over
``u = q_cs`` as in the paper's Lemma ``analytic_density`` (with ERRATA 1's lower limit
``g(a) = max(0, 2a - 1)``), and the CDF follows the lemma's proof,
``F(a) = I_g(alpha_cs, alpha_1 + alpha_2) + int_g^a f_U(u) [1 - P(xi^- < pi < xi^+)] du``.
For the old measure ``amb0 = 1 - (1 - u) |2 pi - 1|`` the band is
``xi^{+-} = (1 +- (1 - a)/(1 - u)) / 2`` and ``d xi^-/da = 1 / (2 (1 - u))``.
``mpmath.quad`` (tanh-sinh) runs on subintervals split geometrically towards both ends and at
the peaks of the two Beta factors, at ``mp.dps = 50``; the quadrature error estimate of every
value is recorded and must be below 1e-25 (relative).
"""

from __future__ import annotations

import json
import sys
from multiprocessing import Pool
from pathlib import Path

import mpmath as mp

DPS = 50
OUT = Path(__file__).with_name("exact_reference.json")

#: Dirichlet parameters (alpha_1, alpha_2, alpha_cs): entries in [0.2, 1e4], integers and
#: non-integers, below and above 1.
ALPHAS = [
    (0.2, 0.2, 0.2),
    (0.5, 0.5, 0.5),
    (1.0, 1.0, 1.0),
    (0.3, 2.7, 0.45),
    (6.0, 6.0, 6.0),
    (31.0, 1.0, 1.0),
    (3.5, 0.7, 12.25),
    (150.5, 20.25, 3.3),
    (0.2, 1e4, 2.5),
    (1e4, 1e4, 1e4),
    (1e4, 0.2, 0.5),
]
MEASURES = ("amb", "modified", "old")
#: Points spread over (0, 1), including near 0, 1/2 and 1.
BASE_POINTS = [
    "1e-9", "1e-4", "0.03", "0.2", "0.37", "0.499", "0.4999999999", "0.5",
    "0.5000000001", "0.501", "0.65", "0.8", "0.95", "0.9999", "0.9999999999",
]


def moments(alpha, measure):
    """Mean and sd of A = 1 - V H(D) (V = 1 - q_cs and D = |2 pi - 1| independent)."""
    a1, a2, c = (mp.mpf(x) for x in alpha)
    b = a1 + a2
    ev = b / (b + c)
    ev2 = b * (b + 1) / ((b + c) * (b + c + 1))

    def epow(k):  # E[(2 pi - 1)^k], k even, by the binomial theorem and Beta moments
        tot = mp.mpf(0)
        for j in range(k + 1):
            m = mp.rf(a1, j) / mp.rf(b, j)
            tot += mp.binomial(k, j) * 2**j * (-1) ** (k - j) * m
        return tot

    d2, d4 = epow(2), epow(4)
    if measure == "amb":
        eh, eh2 = (1 + d2) / 2, (1 + 2 * d2 + d4) / 4
    elif measure == "modified":
        eh, eh2 = d2, d4
    else:
        ed = mp.quad(lambda x: abs(2 * x - 1) * fpi(x, a1, a2), [0, mp.mpf(1) / 2, 1])
        eh, eh2 = ed, d2
    return 1 - ev * eh, mp.sqrt(ev2 * eh2 - ev**2 * eh**2)


def fpi(x, a1, a2):
    return mp.exp((a1 - 1) * mp.log(x) + (a2 - 1) * mp.log(1 - x) - mp.log(mp.beta(a1, a2)))


def band(measure, a, u):
    """xi^- (lower end of the excluded band of pi) and d xi^- / da."""
    y = 1 - a
    if measure == "amb":
        if 1 + u - 2 * a <= 0:  # u rounded onto the lower limit 2a - 1
            return mp.mpf(1) / 2, mp.mpf(0)
        s = mp.sqrt((1 + u - 2 * a) / (1 - u))
        return (1 - s) / 2, 1 / (2 * mp.sqrt((1 - u) * (1 + u - 2 * a)))
    if measure == "modified":
        s = mp.sqrt(y / (1 - u))
        return (1 - s) / 2, 1 / (4 * mp.sqrt(y * (1 - u)))
    return (1 - y / (1 - u)) / 2, 1 / (2 * (1 - u))


def split_points(alpha, measure, a, lo, hi):
    a1, a2, c = (mp.mpf(x) for x in alpha)
    b = a1 + a2
    pts = {lo, hi}
    y = 1 - a
    if measure == "amb":  # the 1/sqrt singularity at u = 2a - 1 next to u**(c-1) at u = 0
        g = abs(2 * a - 1)
        if 0 < g < mp.mpf("0.01"):
            for k in range(0, 12, 2):
                pts.add(lo + g * mp.mpf(10) ** k)
    elif y < mp.mpf("0.01"):  # the band edge varies on the scale 1 - a near u = a
        for k in range(0, 12, 2):
            pts.add(hi - y * mp.mpf(10) ** k)
    # peaks: mode of f_U and the u at which xi^- hits the mode of min(pi, 1 - pi)
    if c > 1 and b > 1:
        pts.add((c - 1) / (b + c - 2))
    if a1 > 1 and a2 > 1:
        m = (a1 - 1) / (b - 2)
        p = min(m, 1 - m)
        dd = 1 - 2 * p
        if measure == "amb":
            pts.add(1 - 2 * y / (1 + dd**2))
        elif measure == "modified" and dd > 0:
            pts.add(1 - y / dd**2)
        elif dd > 0:
            pts.add(1 - y / dd)
    return sorted(x for x in pts if lo <= x <= hi)


def reference(task):
    alpha, measure, a_str = task
    mp.mp.dps = DPS
    a1, a2, c = (mp.mpf(x) for x in alpha)
    b = a1 + a2
    a = mp.mpf(a_str)
    lbu = mp.log(mp.beta(c, b))

    def fu(u):
        return mp.exp((c - 1) * mp.log(u) + (b - 1) * mp.log(1 - u) - lbu)

    lo = max(mp.mpf(0), 2 * a - 1) if measure == "amb" else mp.mpf(0)
    hi = a
    pts = split_points(alpha, measure, a, lo, hi)

    def pdf_integrand(u):
        if u <= lo or u >= hi:  # a node rounded onto an end point (weight ~ 1e-50)
            return mp.mpf(0)
        xi, dxi = band(measure, a, u)
        return fu(u) * (fpi(xi, a1, a2) + fpi(1 - xi, a1, a2)) * dxi

    def cdf_integrand(u):
        if u <= lo or u >= hi:
            return mp.mpf(0)
        xi, _ = band(measure, a, u)
        inside = mp.betainc(a1, a2, xi, 1 - xi, regularized=True)
        return fu(u) * (1 - inside)

    half_div = measure == "amb" and a == mp.mpf(1) / 2 and c <= mp.mpf(1) / 2
    if half_div:
        pdf, pdf_err = mp.inf, mp.mpf(0)
    else:
        pdf, pdf_err = mp.quad(pdf_integrand, pts, error=True, maxdegree=8)
    cdf, cdf_err = mp.quad(cdf_integrand, pts, error=True, maxdegree=7)
    cdf += mp.betainc(c, b, 0, lo, regularized=True)
    rel = pdf_err / pdf if pdf not in (0, mp.inf) else mp.mpf(0)
    return {
        "alpha": list(alpha),
        "measure": measure,
        "a": a_str,
        "pdf": mp.nstr(pdf, 30),
        "cdf": mp.nstr(cdf, 30),
        "sf": mp.nstr(1 - cdf, 30),
        "pdf_quad_rel_err": float(rel),
        "cdf_quad_abs_err": float(cdf_err),
    }


def tasks():
    out = []
    mp.mp.dps = DPS
    for alpha in ALPHAS:
        for measure in MEASURES:
            pts = list(BASE_POINTS)
            mean, sd = moments(alpha, measure)
            for k in (-3, -1, 0, 1, 3):
                x = mean + k * sd
                if 0 < x < 1:
                    pts.append(mp.nstr(x, 17))
            out += [(alpha, measure, p) for p in pts]
    return out


def main() -> int:
    todo = tasks()
    with Pool(int(sys.argv[1]) if len(sys.argv) > 1 else 2) as pool:
        rows = pool.map(reference, todo, chunksize=4)
    bad = [r for r in rows if r["pdf_quad_rel_err"] > 1e-25 or r["cdf_quad_abs_err"] > 1e-25]
    meta = {
        "generator": "tests/reference/exact_reference.py",
        "mpmath_version": mp.__version__,
        "dps": DPS,
        "method": "mpmath.quad (tanh-sinh, maxdegree 8/7) over u = q_cs, paper lemma with "
        "ERRATA 1 limits; split points recorded in split_points()",
        "n_values": len(rows),
        "n_quadrature_error_above_1e-25": len(bad),
    }
    OUT.write_text(json.dumps({"meta": meta, "values": rows}, indent=1) + "\n")
    print(f"wrote {len(rows)} values to {OUT} ({len(bad)} with large quadrature error)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
