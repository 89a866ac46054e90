"""Generate ``exact_reference.json``: 50-digit mpmath values of the exact C = 2 densities.

Run from the repository root (takes a few minutes on 2 cores)::

    .venv/bin/python tests/reference/exact_reference.py

The formulation is deliberately *not* the one used by :mod:`ambppl.maths.exact`: it integrates over
``u = q_cs`` as in the paper's Lemma ``analytic_density`` (with ERRATA 1's lower limit
``g(a) = max(0, 2a - 1)``), and the CDF follows the lemma's proof,
``F(a) = I_g(alpha_cs, alpha_1 + alpha_2) + int_g^a f_U(u) [1 - P(xi^- < pi < xi^+)] du``.
For the old measure ``amb0 = 1 - (1 - u) |2 pi - 1|`` the band is
``xi^{+-} = (1 +- (1 - a)/(1 - u)) / 2`` and ``d xi^-/da = 1 / (2 (1 - u))``.
``mpmath.quad`` (tanh-sinh) runs on subintervals split geometrically towards both ends and at
the peaks of the two Beta factors, at ``mp.dps = 50``; the left half of the interval is
integrated in ``u - lo = v**5`` and the right half in ``a - u = v**5`` so that nodes next to
the singular ends keep full relative precision and the end-point powers become smooth.
The quadrature error estimate of every value is recorded;
values whose estimate exceeds ``MAX_PDF_ERR`` / ``MAX_CDF_ERR`` or that take longer than
``TIME_LIMIT`` are left out (their numbers are in the metadata).
"""

from __future__ import annotations

import json
import signal
import sys
from multiprocessing import Pool
from pathlib import Path

import mpmath as mp

DPS = 50
#: Seconds allowed per value; slower ones (narrow peaks at alpha ~ 1e4) are left out and
#: counted in the metadata.
TIME_LIMIT = 30
#: Power of the substitution w = v**K next to both ends of the interval.
SUBST_POWER = 5
#: Largest accepted quadrature error estimates (mpmath's estimate, the change between its
#: last two levels, is pessimistic for tanh-sinh): pdf relative, cdf absolute; both at least
#: ten times below the accuracy the tests demand (1e-10 and 1e-12).
MAX_PDF_ERR = 1e-12
MAX_CDF_ERR = 1e-13
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
    # added after a stopping rule that trusted error ~ diff**2 returned the modified pdf of
    # (2.5, 2.5, 300) at a = 0.9727 with a 1.6e-7 relative error (0.137 vs mpmath)
    (2.5, 2.5, 300.0),
    (40.0, 3.0, 0.7),
]
MEASURES = ("amb", "modified", "old")
#: Points spread over (0, 1), including near 0, 1/2 and 1.
BASE_POINTS = [
    "1e-9",
    "0.03",
    "0.2",
    "0.37",
    "0.4999999999",
    "0.5",
    "0.5000000001",
    "0.5003",
    "0.65",
    "0.8",
    "0.95",
    "0.9726829268292683",
    "0.99",
    "0.9999999999",
]
#: For concentrated posteriors (some alpha >= 1000) most base points lie where the density
#: is below 1e-1000; only these base points are kept there, besides mean + k sd.
BASE_POINTS_LARGE = ["0.37", "0.5000000001"]


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


def fpi_pair(xi, a1, a2):
    """f_pi(xi) + f_pi(1 - xi) from log(xi) and log1p(-xi): exact for xi below 1e-50."""
    l1, l2 = mp.log(xi), mp.log1p(-xi)
    lb = mp.log(mp.beta(a1, a2))
    return mp.exp((a1 - 1) * l1 + (a2 - 1) * l2 - lb) + mp.exp((a1 - 1) * l2 + (a2 - 1) * l1 - lb)


def band(measure, a, u, t, z):
    """xi^- (lower end of the excluded band of pi) and d xi^- / da, with z = a - u and (amb)
    t = 1 + u - 2a given separately: xi ~ z and 1/sqrt(t) stay exact next to the ends."""
    y = 1 - a
    if measure == "amb":
        s = mp.sqrt(t / (1 - u))
        return z / ((1 - u) * (1 + s)), 1 / (2 * mp.sqrt((1 - u) * t))
    if measure == "modified":
        s = mp.sqrt(y / (1 - u))
        return z / (2 * (1 - u) * (1 + s)), 1 / (4 * mp.sqrt(y * (1 - u)))
    return z / (2 * (1 - u)), 1 / (2 * (1 - u))


def split_points(alpha, measure, a, lo, hi):
    a1, a2, c = (mp.mpf(x) for x in alpha)
    b = a1 + a2
    pts = {lo, hi}
    y = 1 - a
    if measure == "amb":  # the 1/sqrt singularity at u = 2a - 1 next to u**(c-1) at u = 0
        g = abs(2 * a - 1)
        if 0 < g < mp.mpf("0.01"):
            for k in range(0, 24):
                pts.add(lo + g * 3**k)
    elif y < mp.mpf("0.01"):  # the band edge varies on the scale 1 - a near u = a
        for k in range(0, 24):
            pts.add(hi - y * 3**k)
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


def peak_ladder(alpha, measure, a, lo, hi, fu):
    """Split points m +- h 2^-k around the maximum m of the pdf integrand (found on a grid
    of 4000 points at low precision), so that every subinterval sees a smooth function."""
    a1, a2, _ = (mp.mpf(x) for x in alpha)
    with mp.workdps(20):
        best, arg = -mp.inf, None
        n = 4000
        for i in range(1, n):
            u = lo + (hi - lo) * i / n
            xi, dxi = band(measure, a, u, 1 + u - 2 * a, hi - u)
            if xi <= 0 or dxi <= 0:
                continue
            val = mp.log(fu(u)) + mp.log(dxi) + mp.log(fpi(xi, a1, a2) + fpi(1 - xi, a1, a2))
            if val > best:
                best, arg = val, u
    if arg is None:
        return []
    span = (hi - lo) / n
    out = [arg]
    for k in range(-4, 30):
        for sgn in (-1, 1):
            p = arg + sgn * span * mp.mpf(2) ** -k
            if lo < p < hi:
                out.append(p)
    return out


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def reference(task):
    """One reference row, or None when mpmath needs more than TIME_LIMIT seconds."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT)
    try:
        return _reference(task)
    except _Timeout:
        return None
    finally:
        signal.alarm(0)


def _reference(task):
    alpha, measure, a_str = task
    mp.mp.dps = DPS
    a1, a2, c = (mp.mpf(x) for x in alpha)
    b = a1 + a2
    a = mp.mpf(float(a_str))  # the float64 the tests pass, exactly (not the decimal string)
    lbu = mp.log(mp.beta(c, b))

    def fu(u):
        return mp.exp((c - 1) * mp.log(u) + (b - 1) * mp.log(1 - u) - lbu)

    lo = max(mp.mpf(0), 2 * a - 1) if measure == "amb" else mp.mpf(0)
    hi = a
    pts = split_points(alpha, measure, a, lo, hi)
    if max(alpha) >= 1000:  # narrow peak: geometric ladder of split points around it
        pts = sorted(set(pts) | set(peak_ladder(alpha, measure, a, lo, hi, fu)))

    def pdf_integrand(u, t, z):
        xi, dxi = band(measure, a, u, t, z)
        return fu(u) * fpi_pair(xi, a1, a2) * dxi

    def cdf_integrand(u, t, z):
        xi, _ = band(measure, a, u, t, z)
        outside = mp.betainc(a1, a2, 0, xi, regularized=True) + mp.betainc(
            a2, a1, 0, xi, regularized=True
        )
        return fu(u) * outside

    def integrate(f):
        """Left half in w = u - lo, right half in z = a - u: nodes next to either end keep
        full relative precision (mpmath's nodes are exact near 0, not near lo or a)."""
        mid = pts[len(pts) // 2] if len(pts) > 2 else (lo + hi) / 2
        left = [p - lo for p in pts if p < mid] + [mid - lo]
        right = sorted([hi - mid] + [hi - p for p in pts if p > mid])
        t0 = 1 + lo - 2 * a  # 1 + u - 2a = t0 + (u - lo); t0 = 0 for amb at a >= 1/2
        # w = v**K, z = v**K turn end-point powers x**(alpha - 1) (alpha >= 0.2) and
        # x**(-1/2) into smooth functions of v, which mpmath's tanh-sinh integrates to
        # full precision (without it, its error estimate hides 1e-11 errors at alpha = 0.2)
        k = SUBST_POWER

        def left_f(v):
            if v == 0:  # a node rounded onto the end; the integrand in v is bounded there
                return mp.mpf(0)
            w = v**k
            return f(lo + w, t0 + w, hi - lo - w) * k * v ** (k - 1)

        def right_f(v):
            if v == 0:
                return mp.mpf(0)
            z = v**k
            return f(hi - z, t0 + (hi - lo - z), z) * k * v ** (k - 1)

        root = mp.mpf(1) / k
        v1, e1 = mp.quad(left_f, [x**root for x in left], error=True, maxdegree=8)
        v2, e2 = mp.quad(right_f, [x**root for x in right], error=True, maxdegree=8)
        return v1 + v2, e1 + e2

    half_div = measure == "amb" and a == mp.mpf(1) / 2 and c <= mp.mpf(1) / 2
    if half_div:
        pdf, pdf_err = mp.inf, mp.mpf(0)
    else:
        pdf, pdf_err = integrate(pdf_integrand)
    cdf, cdf_err = integrate(cdf_integrand)
    cdf += mp.betainc(c, b, 0, lo, regularized=True)
    rel = pdf_err / pdf if pdf not in (0, mp.inf) else mp.mpf(0)
    return {
        "alpha": list(alpha),
        "measure": measure,
        "a": repr(float(a_str)),
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
            pts = list(BASE_POINTS if max(alpha) < 1000 else BASE_POINTS_LARGE)
            mean, sd = moments(alpha, measure)
            for k in (-2, 0, 2):
                x = mean + k * sd
                if 0 < x < 1:
                    pts.append(mp.nstr(x, 17))
            out += [(alpha, measure, p) for p in pts]
    return out


def main() -> int:
    todo = tasks()
    with Pool(int(sys.argv[1]) if len(sys.argv) > 1 else 2) as pool:
        results = []
        for i, r in enumerate(pool.imap(reference, todo, chunksize=1)):
            results.append(r)
            print(f"{i + 1}/{len(todo)} {todo[i]} {'ok' if r else 'slow'}", flush=True)
    rows = [r for r in results if r is not None]
    n_timeout = len(results) - len(rows)
    bad = [
        r
        for r in rows
        if r["pdf_quad_rel_err"] > MAX_PDF_ERR or r["cdf_quad_abs_err"] > MAX_CDF_ERR
    ]
    # an infinite density is genuine only for amb at a = 1/2 with alpha_cs <= 1/2
    bad += [
        r
        for r in rows
        if r["pdf"] in ("+inf", "inf")
        and not (r["measure"] == "amb" and float(r["a"]) == 0.5 and r["alpha"][2] <= 0.5)
    ]
    rows = [r for r in rows if r not in bad]
    meta = {
        "generator": "tests/reference/exact_reference.py",
        "mpmath_version": mp.__version__,
        "dps": DPS,
        "method": "mpmath.quad (tanh-sinh, maxdegree 8) over u = q_cs, paper lemma with "
        "ERRATA 1 limits; split points recorded in split_points()",
        "n_values": len(rows),
        "time_limit_s": TIME_LIMIT,
        "n_left_out_time_limit": n_timeout,
        "max_pdf_quad_rel_err": MAX_PDF_ERR,
        "max_cdf_quad_abs_err": MAX_CDF_ERR,
        "n_left_out_quad_error": len(bad),
    }
    OUT.write_text(json.dumps({"meta": meta, "values": rows}, indent=1) + "\n")
    print(f"wrote {len(rows)} values to {OUT}; left out: {n_timeout} slow, {len(bad)} inexact")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
