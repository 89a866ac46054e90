"""Generate ``models/reference/``: reference cases in posteriordb's layout.

Run from the repository root (about five minutes on 2 cores; deterministic)::

    .venv/bin/python tests/reference/reference_cases.py

Writes, for every case, ``data/<data>.json`` (counts, category labels, can't-solve label),
``posteriors/<case>.json`` (the reference posterior of every item's measures) and
``cases/<case>.json`` (the info record joining them by name), and prints the cross-check
figures it stores in each posterior file.

Nothing here imports ambppl: every value comes from the Dirichlet posterior
``q_i ~ Dirichlet(prior + counts_i)`` written out again, with mpmath, and each value is
computed **two ways** that share no code; the script stops if they disagree by more than the
stated tolerances.

Means and variances (``mp.dps = 50``). With ``V = 1 - q_cs ~ Beta(B, a_cs)`` independent of
``pi = q_proper / V ~ Dirichlet(a_1..a_C)`` (``V = 1`` without a can't-solve category) every
ambiguity measure is ``A = 1 - V H(pi)``: ``H = S = sum_k pi_k^2`` (amb), ``(C S - 1)/(C - 1)``
(modified), ``C/(2(C-1)) sum_k |pi_k - 1/C|`` (old). So ``E A = 1 - E V E H`` and
``E A^2 = 1 - 2 E V E H + E V^2 E H^2``.

* amb, modified. Route 1: mpmath, per-term rising factorials
  ``E pi_k^2 = (a_k)_2 / (B)_2``, ``E S^2 = [sum_k (a_k)_4 + sum_{j != k} (a_j)_2 (a_k)_2] /
  (B)_4``. Route 2: exact rational arithmetic (:class:`fractions.Fraction` of the binary
  floats), the generic Dirichlet moment ``E prod pi^e = prod (a_k)_{e_k} / (B)_{|e|}`` summed
  over the expanded polynomial. Agreement: exact to 1e-40.
* old. Route 1: ERRATA 7, ``E|X - c| = (mu - c)(1 - 2 I_c(a, b')) + 2 c^a (1-c)^b' /
  ((a+b') B(a, b'))`` on the Beta marginals; for C = 2 also ``E H^2 = E (2 pi_1 - 1)^2``.
  Route 2: ``mpmath.quad`` of ``|x - 1/C|`` (and ``(2x - 1)^2``) against the Beta density,
  split at 1/C and around the peak. The variance for C > 2 needs joint pair expectations of
  ``|pi_j - 1/C|`` and is not stored (``null``).
* entropy (normalized, all K entries, can't-solve included). Route 1: the digamma/trigamma
  closed forms of E H and E H^2 (Wolpert & Wolf 1995, Hutter 2002). Route 2: ``mpmath.diff``
  of the analytic moment function ``E q_i^s q_k^t`` at s, t = 1 (numerical differentiation
  at 50 digits). Agreement: 1e-25.

Quantiles of amb, modified, old for items with two proper classes and can't-solve
(``mp.dps = 30``). Route 1: the CDF as an integral over ``v = V``,
``F(a) = int f_V(v) P(H(D) >= (1-a)/v) dv + P(V > v_1)`` with ``D = |2 pi - 1|`` and
``P(D >= d) = I_{(1-d)/2}(a_1, a_2) + I_{(1-d)/2}(a_2, a_1)``; the quantile is the root of
``F(a) = p`` (Illinois' regula falsi started from a numpy Monte Carlo bracket, down to a
bracket of 1e-16). Route 2: the CDF as an integral over ``pi`` instead,
``F(a) = int f_pi(x) [1 - I_{(1-a)/H(|2x-1|)}(B, a_cs)] dx``, evaluated at the route-1
quantile: ``|F_2(q) - p|`` must be below 1e-14. ``mpmath.quad`` (tanh-sinh) error estimates
must be below 1e-15.

Values are stored as JSON floats (the float64 nearest the 30+-digit value).
"""

from __future__ import annotations

import itertools
import json
import sys
from fractions import Fraction
from multiprocessing import Pool
from pathlib import Path

import mpmath as mp
import numpy as np

ROOT = Path(__file__).resolve().parents[2] / "models" / "reference"
GENERATOR = "tests/reference/reference_cases.py"
DPS_MOMENTS = 50
DPS_QUANTILES = 30
PROBS = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Largest accepted disagreement of the two routes.
TOL_MOMENT_RATIONAL = mp.mpf("1e-40")
TOL_MOMENT_QUAD = mp.mpf("1e-25")
TOL_CDF = 1e-14
TOL_QUAD_ERR = 1e-15
MEASURES = ("amb", "modified", "old", "entropy")
QUANTILE_MEASURES = ("amb", "modified", "old")

CS = "can't solve"

#: Data sets: counts with labelled items and categories (can't-solve last, or none).
DATA: dict[str, dict] = {
    "paper_posterior_figure": {
        "description": "The paper's posterior figure (fig:all_posterior_comparison): counts "
        "(n+, n-, n_cs) = (5,5,5), (5,0,0), (30,0,0).",
        "categories": ["+", "-", CS],
        "cant_solve": CS,
        "items": ["n=(5,5,5)", "n=(5,0,0)", "n=(30,0,0)"],
        "counts": [[5, 5, 5], [5, 0, 0], [30, 0, 0]],
    },
    "binary_no_cant_solve_answers": {
        "description": "Two proper classes plus can't-solve, nobody answered can't-solve.",
        "categories": ["yes", "no", CS],
        "cant_solve": CS,
        "items": ["n=(4,4,0)", "n=(2,3,0)", "n=(10,0,0)"],
        "counts": [[4, 4, 0], [2, 3, 0], [10, 0, 0]],
    },
    "zero_counts": {
        "description": "Four proper classes plus can't-solve; most categories never chosen.",
        "categories": ["a", "b", "c", "d", CS],
        "cant_solve": CS,
        "items": ["only_a", "b_and_cs", "a_and_c"],
        "counts": [[7, 0, 0, 0, 0], [0, 3, 0, 0, 2], [2, 0, 4, 0, 0]],
    },
    "twelve_categories": {
        "description": "Twelve proper categories and no can't-solve category.",
        "categories": [f"c{k:02d}" for k in range(1, 13)],
        "cant_solve": None,
        "items": ["spread", "unanimous", "one_each"],
        "counts": [
            [3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0],
            [20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [1] * 12,
        ],
    },
    "thousand_answers": {
        "description": "One item with 1000 answers over three proper classes and can't-solve.",
        "categories": ["a", "b", "c", CS],
        "cant_solve": CS,
        "items": ["n=1000"],
        "counts": [[600, 300, 80, 20]],
    },
    "cant_solve_only": {
        "description": "Items answered only with can't-solve.",
        "categories": ["yes", "no", CS],
        "cant_solve": CS,
        "items": ["n_cs=6", "n_cs=20"],
        "counts": [[0, 0, 6], [0, 0, 20]],
    },
    "single_answer": {
        "description": "Items with one answer: a proper class, or can't-solve.",
        "categories": ["yes", "no", CS],
        "cant_solve": CS,
        "items": ["one_yes", "one_cs"],
        "counts": [[1, 0, 0], [0, 0, 1]],
    },
}

#: Cases: a data set, a catalog model and its parameters.
CASES: dict[str, dict] = {
    "paper_posterior_figure": {
        "data": "paper_posterior_figure",
        "parameters": {"prior": 1.0},
        "description": "The three count vectors of the paper's posterior figure under its "
        "uniform prior beta = 1 (ERRATA: the figure's layouts and prior).",
    },
    "prior_half": {
        "data": "binary_no_cant_solve_answers",
        "parameters": {"prior": 0.5},
        "description": "Prior beta = 0.5 with no can't-solve answers: alpha_cs = 1/2, so the "
        "amb density is infinite at a = 1/2 (ERRATA 4).",
    },
    "zero_counts": {
        "data": "zero_counts",
        "parameters": {"prior": 1.0},
        "description": "Zero counts in most categories of a five-category task.",
    },
    "twelve_categories": {
        "data": "twelve_categories",
        "parameters": {"prior": 1.0},
        "description": "Twelve proper categories without a can't-solve category.",
    },
    "thousand_answers": {
        "data": "thousand_answers",
        "parameters": {"prior": 1.0},
        "description": "1000 answers on one item: a posterior concentrated within ~0.015.",
    },
    "cant_solve_only": {
        "data": "cant_solve_only",
        "parameters": {"prior": 1.0},
        "description": "Items answered only with can't-solve: the proper classes carry prior "
        "mass only.",
    },
    "single_answer": {
        "data": "single_answer",
        "parameters": {"prior": 1.0},
        "description": "Items with a single answer: the posterior is nearly the prior.",
    },
}
MODEL = "dirichlet_categorical"

REFERENCE_METHOD = (
    "Posterior Dirichlet(prior + counts) written out without ambppl. Means and variances "
    "at mpmath dps 50, each computed two ways that share no code (rising-factorial closed "
    "forms vs exact rational moments for amb/modified; ERRATA 7 incomplete-beta form vs "
    "mpmath.quad for old; digamma/trigamma closed forms vs mpmath.diff of the moment "
    "function for entropy). Quantiles (two-class items) are roots of the CDF integrated "
    "over 1 - q_cs at dps 30, confirmed by the CDF integrated over q_1 / (1 - q_cs)."
)
TRUST = (
    "Independent of ambppl's code; two independent routes agree to the stated tolerances "
    "(recorded under cross_checks in the posterior file); quadrature error estimates below "
    "1e-15; stored values are the nearest float64. The tests compare them with "
    "ambppl.dirichlet_mean / dirichlet_var and ambppl.ambiguity_posterior, a third "
    "implementation."
)


# --------------------------------------------------------------------------- moments, route 1


def _split(alpha: list, has_cs: bool) -> tuple[list, mp.mpf | None]:
    a = [mp.mpf(x) for x in alpha]
    return (a[:-1], a[-1]) if has_cs else (a, None)


def _v_moments(big_b: mp.mpf, c: mp.mpf | None) -> tuple[mp.mpf, mp.mpf]:
    """E V and E V^2 for V = 1 - q_cs ~ Beta(B, a_cs) (V = 1 without can't-solve)."""
    if c is None:
        return mp.mpf(1), mp.mpf(1)
    t = big_b + c
    return big_b / t, big_b * (big_b + 1) / (t * (t + 1))


def _s_moments(a: list) -> tuple[mp.mpf, mp.mpf]:
    """E S and E S^2 for S = sum_k pi_k^2, pi ~ Dirichlet(a)."""
    big_b = mp.fsum(a)
    es = mp.fsum(mp.rf(x, 2) for x in a) / mp.rf(big_b, 2)
    quad = mp.fsum(mp.rf(x, 4) for x in a)
    sq = mp.fsum(mp.rf(x, 2) for x in a)
    cross = sq**2 - mp.fsum(mp.rf(x, 2) ** 2 for x in a)  # sum over j != k
    return es, (quad + cross) / mp.rf(big_b, 4)


def _beta_abs_dev(a: mp.mpf, b: mp.mpf, c: mp.mpf) -> mp.mpf:
    """E|X - c| for X ~ Beta(a, b) (ERRATA 7)."""
    mu = a / (a + b)
    log_dens = a * mp.log(c) + b * mp.log1p(-c) - mp.log(a + b) - mp.log(mp.beta(a, b))
    return (mu - c) * (1 - 2 * mp.betainc(a, b, 0, c, regularized=True)) + 2 * mp.exp(log_dens)


def _h_moments(measure: str, a: list) -> tuple[mp.mpf, mp.mpf | None]:
    """E H and E H^2 (None where not available) of the measure's H(pi)."""
    big_c = len(a)
    if measure in ("amb", "modified"):
        es, es2 = _s_moments(a)
        if measure == "amb":
            return es, es2
        k = mp.mpf(big_c)
        return (k * es - 1) / (k - 1), (k**2 * es2 - 2 * k * es + 1) / (k - 1) ** 2
    big_b = mp.fsum(a)
    c = mp.mpf(1) / big_c
    eh = mp.mpf(big_c) / (2 * (big_c - 1)) * mp.fsum(_beta_abs_dev(x, big_b - x, c) for x in a)
    if big_c != 2:
        return eh, None
    e1 = a[0] / big_b
    e2 = mp.rf(a[0], 2) / mp.rf(big_b, 2)
    return eh, 4 * e2 - 4 * e1 + 1  # E (2 pi_1 - 1)^2


def _entropy_moments(alpha: list) -> tuple[mp.mpf, mp.mpf]:
    """Mean and variance of the normalized entropy of q ~ Dirichlet(alpha): closed forms."""
    a = [mp.mpf(x) for x in alpha]
    a0 = mp.fsum(a)
    mean = mp.psi(0, a0 + 1) - mp.fsum(x / a0 * mp.psi(0, x + 1) for x in a)
    p2 = mp.psi(0, a0 + 2)
    t2 = mp.psi(1, a0 + 2)
    norm = a0 * (a0 + 1)
    second = mp.mpf(0)
    for i, j in itertools.product(range(len(a)), repeat=2):
        if i == j:
            x = a[i]
            second += x * (x + 1) / norm * ((mp.psi(0, x + 2) - p2) ** 2 + mp.psi(1, x + 2) - t2)
        else:
            second += (
                a[i] * a[j] / norm * ((mp.psi(0, a[i] + 1) - p2) * (mp.psi(0, a[j] + 1) - p2) - t2)
            )
    log_k = mp.log(len(a))
    return mean / log_k, (second - mean**2) / log_k**2


def moments_route1(alpha: list, has_cs: bool) -> dict[str, tuple[mp.mpf, mp.mpf | None]]:
    a, c = _split(alpha, has_cs)
    ev, ev2 = _v_moments(mp.fsum(a), c)
    out = {}
    for measure in MEASURES:
        if measure == "entropy":
            out[measure] = _entropy_moments(alpha)
            continue
        if measure in ("modified", "old") and len(a) < 2:
            continue
        eh, eh2 = _h_moments(measure, a)
        mean = 1 - ev * eh
        var = None if eh2 is None else ev2 * eh2 - (ev * eh) ** 2
        out[measure] = (mean, var)
    return out


# --------------------------------------------------------------------------- moments, route 2


def _rising_frac(x: Fraction, n: int) -> Fraction:
    out = Fraction(1)
    for j in range(n):
        out *= x + j
    return out


def _dir_moment(a: list[Fraction], exps: list[int]) -> Fraction:
    """E prod_k pi_k^{e_k} for pi ~ Dirichlet(a), exactly."""
    num = Fraction(1)
    for x, e in zip(a, exps, strict=True):
        num *= _rising_frac(x, e)
    return num / _rising_frac(sum(a, Fraction(0)), sum(exps))


def moments_route2_rational(alpha: list, has_cs: bool) -> dict[str, tuple[Fraction, Fraction]]:
    """amb and modified: E and Var from the expanded polynomial, in exact fractions."""
    f = [Fraction(float(x)) for x in alpha]
    a, c = (f[:-1], f[-1]) if has_cs else (f, None)
    big_c = len(a)
    if c is None:
        ev = ev2 = Fraction(1)
    else:
        bsum = sum(a, Fraction(0))
        ev, ev2 = _dir_moment([bsum, c], [1, 0]), _dir_moment([bsum, c], [2, 0])
    es = Fraction(0)
    es2 = Fraction(0)
    for j in range(big_c):
        e = [0] * big_c
        e[j] = 2
        es += _dir_moment(a, e)
        for k in range(big_c):
            e2 = list(e)
            e2[k] += 2
            es2 += _dir_moment(a, e2)
    out = {"amb": (es, es2)}
    if big_c >= 2:
        k = Fraction(big_c)
        out["modified"] = ((k * es - 1) / (k - 1), (k * k * es2 - 2 * k * es + 1) / (k - 1) ** 2)
    return {m: (1 - ev * eh, ev2 * eh2 - (ev * eh) ** 2) for m, (eh, eh2) in out.items()}


def _beta_quad(f, a: mp.mpf, b: mp.mpf, breaks: list) -> mp.mpf:
    """int_0^1 f(x) Beta(a, b) pdf dx, split at ``breaks``, 1/2 and around the peak.

    The part above 1/2 is integrated in ``t = 1 - x`` so that nodes next to ``x = 1``, where
    ``(1 - x)^(b - 1)`` may be singular, keep full relative precision.
    """
    lb = mp.log(mp.beta(a, b))

    def g(x):
        if x <= 0 or x >= 1:
            return mp.mpf(0)
        return f(x) * mp.exp((a - 1) * mp.log(x) + (b - 1) * mp.log1p(-x) - lb)

    def g_flip(t):
        if t <= 0 or t >= 1:
            return mp.mpf(0)
        return f(1 - t) * mp.exp((b - 1) * mp.log(t) + (a - 1) * mp.log1p(-t) - lb)

    half = mp.mpf(1) / 2
    mu = a / (a + b)
    sd = mp.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    pts = {mp.mpf(0), half, mp.mpf(1), *breaks}
    for k in (-12, -6, -3, -1, 0, 1, 3, 6, 12):
        pts.add(mu + k * sd)
    left = sorted(p for p in pts if 0 <= p <= half)
    right = sorted(1 - p for p in pts if half <= p <= 1)
    return mp.quad(g, left) + mp.quad(g_flip, right)


def old_route2(alpha: list, has_cs: bool) -> tuple[mp.mpf, mp.mpf | None]:
    """E and (C = 2) Var of amb_old by quadrature of the Beta marginals."""
    with mp.workdps(DPS_MOMENTS):
        a, c = _split(alpha, has_cs)
        big_c = len(a)
        big_b = mp.fsum(a)
        inv_c = mp.mpf(1) / big_c
        ev, ev2 = _v_moments(big_b, c)
        eh = (
            mp.mpf(big_c)
            / (2 * (big_c - 1))
            * mp.fsum(_beta_quad(lambda x: abs(x - inv_c), x, big_b - x, [inv_c]) for x in a)
        )
        if big_c != 2:
            return 1 - ev * eh, None
        eh2 = _beta_quad(lambda x: (2 * x - 1) ** 2, a[0], a[1], [inv_c])
        return 1 - ev * eh, ev2 * eh2 - (ev * eh) ** 2


def entropy_route2(alpha: list) -> tuple[mp.mpf, mp.mpf]:
    """Mean and variance of the normalized entropy by differentiating E q_i^s q_k^t."""
    a = [mp.mpf(x) for x in alpha]
    a0 = mp.fsum(a)
    lg = [mp.loggamma(x) for x in a]

    def m1(i):  # E q_i^s
        return lambda s: mp.exp(
            mp.loggamma(a0) - mp.loggamma(a0 + s) + mp.loggamma(a[i] + s) - lg[i]
        )

    def m2(i, k):  # E q_i^s q_k^t
        return lambda s, t: mp.exp(
            mp.loggamma(a0)
            - mp.loggamma(a0 + s + t)
            + mp.loggamma(a[i] + s)
            - lg[i]
            + mp.loggamma(a[k] + t)
            - lg[k]
        )

    n = len(a)
    # E q log q = d/ds E q^s at s = 1; E q^2 log^2 q = d^2/ds^2 E q^s at s = 2.
    e1 = [mp.diff(m1(i), 1) for i in range(n)]
    e2 = [mp.diff(m1(i), 2, 2) for i in range(n)]
    mean = -mp.fsum(e1)
    second = mp.fsum(e2)
    cache: dict[tuple, mp.mpf] = {}
    for i in range(n):
        for k in range(i + 1, n):
            key = tuple(sorted((a[i], a[k])))
            if key not in cache:
                cache[key] = mp.diff(m2(i, k), (1, 1), (1, 1))
            second += 2 * cache[key]
    log_k = mp.log(n)
    return mean / log_k, (second - mean**2) / log_k**2


# --------------------------------------------------------------------------- quantiles


def _hinv(measure: str, h: mp.mpf) -> mp.mpf:
    """D with H(D) = h (h in [H(0), 1])."""
    if measure == "amb":
        return mp.sqrt(2 * h - 1)
    if measure == "modified":
        return mp.sqrt(h)
    return h


def _h_of_d(measure: str, d: mp.mpf) -> mp.mpf:
    if measure == "amb":
        return (1 + d * d) / 2
    if measure == "modified":
        return d * d
    return d


def _h0(measure: str) -> mp.mpf:
    return mp.mpf(1) / 2 if measure == "amb" else mp.mpf(0)


class _Quad:
    """mpmath.quad that records the largest error estimate."""

    def __init__(self) -> None:
        self.max_err = mp.mpf(0)

    def __call__(self, f, pts) -> mp.mpf:
        val, err = mp.quad(f, pts, error=True)
        self.max_err = max(self.max_err, err)
        return val


def cdf_route1(alpha, measure: str, x: mp.mpf, quad: _Quad) -> mp.mpf:
    """F(x) = P(A <= x), integrating over w = q_cs = 1 - V (V ~ Beta(B, a_cs)).

    The variable is ``w`` rather than ``v`` so that the nodes next to ``q_cs = 0``, where
    ``w^(a_cs - 1)`` is singular for ``a_cs < 1``, keep full relative precision.
    """
    a1, a2, c = (mp.mpf(v) for v in alpha)
    big_b = a1 + a2
    y = 1 - x
    h0 = _h0(measure)
    v1 = min(mp.mpf(1), y / h0) if h0 > 0 else mp.mpf(1)
    lb = mp.log(mp.beta(big_b, c))

    def f(w):
        v = 1 - w
        if w <= 0 or v <= y:
            return mp.mpf(0)
        h = y / v
        d = _hinv(measure, h)
        xi = (1 - d) / 2
        tail = mp.betainc(a1, a2, 0, xi, regularized=True) + mp.betainc(
            a2, a1, 0, xi, regularized=True
        )
        return tail * mp.exp((big_b - 1) * mp.log1p(-w) + (c - 1) * mp.log(w) - lb)

    lo, hi = 1 - v1, 1 - y
    pts = {lo, hi}
    mu = c / (big_b + c)
    sd = mp.sqrt(big_b * c / ((big_b + c) ** 2 * (big_b + c + 1)))
    if sd < mp.mpf("0.02"):  # a narrow peak: split around it
        for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8):
            pts.add(mu + k * sd)
    pts = sorted(p for p in pts if lo <= p <= hi)
    total = quad(f, pts) if hi > lo else mp.mpf(0)
    if v1 < 1:
        total += 1 - mp.betainc(big_b, c, 0, v1, regularized=True)
    return total


def cdf_route2(alpha, measure: str, x: mp.mpf, quad: _Quad) -> mp.mpf:
    """F(x) = P(A <= x), integrating over pi = q_1 / (1 - q_cs) ~ Beta(a_1, a_2)."""
    a1, a2, c = (mp.mpf(v) for v in alpha)
    big_b = a1 + a2
    y = 1 - x
    lb = mp.log(mp.beta(a1, a2))

    def f(t):
        if t <= 0 or t >= 1:
            return mp.mpf(0)
        h = _h_of_d(measure, abs(2 * t - 1))
        if h <= y:
            return mp.mpf(0)
        upper = 1 - mp.betainc(big_b, c, 0, y / h, regularized=True)
        return upper * mp.exp((a1 - 1) * mp.log(t) + (a2 - 1) * mp.log1p(-t) - lb)

    half = mp.mpf(1) / 2
    pts = {mp.mpf(0), half, mp.mpf(1)}
    if y >= _h0(measure):
        d1 = _hinv(measure, y)
        pts |= {(1 - d1) / 2, (1 + d1) / 2}
    mu = a1 / big_b
    sd = mp.sqrt(a1 * a2 / (big_b**2 * (big_b + 1)))
    if sd < mp.mpf("0.02"):  # a narrow peak: split around it
        for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8):
            pts.add(mu + k * sd)
    pts = sorted(p for p in pts if 0 <= p <= 1)
    return quad(f, pts)


def _mc_quantile(alpha, measure: str, p: float) -> float:
    """Rough quantile from numpy Dirichlet draws (only to bracket the root)."""
    rng = np.random.default_rng(12345)
    q = rng.dirichlet(np.asarray(alpha, dtype=float), size=200_000)
    v = q[:, 0] + q[:, 1]
    d = np.abs(q[:, 0] - q[:, 1]) / v
    h = {"amb": (1 + d * d) / 2, "modified": d * d, "old": d}[measure]
    return float(np.quantile(1 - v * h, p))


def quantile(alpha, measure: str, p: float, quad: _Quad) -> mp.mpf:
    """Root of F(a) = p by Illinois' regula falsi from a Monte Carlo bracket."""
    target = mp.mpf(p)
    guess = _mc_quantile(alpha, measure, p)
    width = 0.004
    while True:
        lo = mp.mpf(max(guess - width, 0.0))
        hi = mp.mpf(min(guess + width, 1.0))
        flo = cdf_route1(alpha, measure, lo, quad) - target if lo > 0 else -target
        fhi = cdf_route1(alpha, measure, hi, quad) - target if hi < 1 else 1 - target
        if flo < 0 < fhi:
            break
        width *= 4
    side = 0
    for _ in range(200):
        if hi - lo < mp.mpf("1e-17"):
            break
        mid = (lo * fhi - hi * flo) / (fhi - flo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        fm = cdf_route1(alpha, measure, mid, quad) - target
        if abs(fm) < mp.mpf("1e-20"):
            return mid
        if fm < 0:
            lo, flo = mid, fm
            if side == -1:
                fhi /= 2
            side = -1
        else:
            hi, fhi = mid, fm
            if side == 1:
                flo /= 2
            side = 1
    else:  # pragma: no cover
        raise RuntimeError(f"no convergence for {alpha}, {measure}, {p}")
    return (lo + hi) / 2


def quantile_task(task):
    alpha, measure, p = task
    mp.mp.dps = DPS_QUANTILES
    quad = _Quad()
    q = quantile(alpha, measure, p, quad)
    check = _Quad()
    residual = abs(cdf_route2(alpha, measure, q, check) - p)
    return {
        "value": float(q),
        "cdf_residual_route2": float(residual),
        "quad_err": float(max(quad.max_err, check.max_err)),
    }


# --------------------------------------------------------------------------- one item


def moments_task(task):
    """Both routes for every measure of one alpha; returns floats and the disagreements."""
    alpha, has_cs = task
    mp.mp.dps = DPS_MOMENTS
    one = moments_route1(alpha, has_cs)
    rational = moments_route2_rational(alpha, has_cs)
    diffs = {}
    for m, (mean2, var2) in rational.items():
        mean1, var1 = one[m]
        diffs[f"{m}_mean"] = abs(mean1 - mp.mpf(mean2.numerator) / mean2.denominator)
        diffs[f"{m}_var"] = abs(var1 - mp.mpf(var2.numerator) / var2.denominator)
        assert diffs[f"{m}_mean"] < TOL_MOMENT_RATIONAL, (alpha, m, diffs)
        assert diffs[f"{m}_var"] < TOL_MOMENT_RATIONAL * max(1, var1), (alpha, m, diffs)
    a, _ = _split(alpha, has_cs)
    if len(a) >= 2:
        mean2, var2 = old_route2(alpha, has_cs)
        mean1, var1 = one["old"]
        diffs["old_mean"] = abs(mean1 - mean2)
        assert diffs["old_mean"] < TOL_MOMENT_QUAD, (alpha, diffs)
        if var1 is not None:
            diffs["old_var"] = abs(var1 - var2)
            assert diffs["old_var"] < TOL_MOMENT_QUAD, (alpha, diffs)
    mean2, var2 = entropy_route2(alpha)
    mean1, var1 = one["entropy"]
    diffs["entropy_mean"] = abs(mean1 - mean2)
    diffs["entropy_var"] = abs(var1 - var2)
    assert diffs["entropy_mean"] < TOL_MOMENT_QUAD, (alpha, diffs)
    assert diffs["entropy_var"] < TOL_MOMENT_QUAD, (alpha, diffs)
    values = {
        m: (float(mean), None if var is None else float(var)) for m, (mean, var) in one.items()
    }
    return values, {k: float(v) for k, v in diffs.items()}


def _alphas(data: dict, prior: float) -> list[list[float]]:
    return [[float(n) + prior for n in row] for row in data["counts"]]


def main() -> int:
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    jobs_m, jobs_q = [], []
    plan = {}
    for name, case in CASES.items():
        data = DATA[case["data"]]
        has_cs = data["cant_solve"] is not None
        alphas = _alphas(data, case["parameters"]["prior"])
        two_class = has_cs and len(data["categories"]) == 3
        plan[name] = (alphas, has_cs, two_class)
        for alpha in alphas:
            jobs_m.append((alpha, has_cs))
            if two_class:
                jobs_q += [(alpha, m, p) for m in QUANTILE_MEASURES for p in PROBS]
    with Pool(workers) as pool:
        keys = [(tuple(alpha), has_cs) for alpha, has_cs in jobs_m]
        res_m = dict(zip(keys, pool.map(moments_task, jobs_m), strict=True))
        res_q = {}
        for i, r in enumerate(pool.imap(quantile_task, jobs_q, chunksize=1)):
            alpha, m, p = jobs_q[i]
            res_q[(tuple(alpha), m, p)] = r
            print(f"{i + 1}/{len(jobs_q)} {alpha} {m} {p}: {r}", flush=True)
    for sub in ("data", "posteriors", "cases"):
        (ROOT / sub).mkdir(parents=True, exist_ok=True)
    for name, data in DATA.items():
        record = {"name": name, **data}
        _write(ROOT / "data" / f"{name}.json", record)
    for name, case in CASES.items():
        alphas, has_cs, two_class = plan[name]
        data = DATA[case["data"]]
        items = []
        worst = {"moments_route_difference": 0.0, "cdf_residual_route2": 0.0, "quad_err": 0.0}
        for label, alpha in zip(data["items"], alphas, strict=True):
            values, diffs = res_m[(tuple(alpha), has_cs)]
            worst["moments_route_difference"] = max(
                worst["moments_route_difference"], *diffs.values()
            )
            measures = {}
            for m, (mean, var) in values.items():
                entry = {"mean": mean, "var": var, "quantiles": None}
                if two_class and m in QUANTILE_MEASURES:
                    qs = [res_q[(tuple(alpha), m, p)] for p in PROBS]
                    entry["quantiles"] = [q["value"] for q in qs]
                    for key in ("cdf_residual_route2", "quad_err"):
                        worst[key] = max(worst[key], *(q[key] for q in qs))
                measures[m] = entry
            items.append({"item": label, "alpha": alpha, "measures": measures})
        if two_class:
            assert worst["cdf_residual_route2"] < TOL_CDF, (name, worst)
            assert worst["quad_err"] < TOL_QUAD_ERR, (name, worst)
        posterior = {
            "name": name,
            "generator": GENERATOR,
            "mpmath_version": mp.__version__,
            "dps": {"moments": DPS_MOMENTS, "quantiles": DPS_QUANTILES},
            "measures": "keys are ambppl's measure names (amb, modified, old, entropy); "
            "var null = not computed (old with more than two proper classes)",
            "probabilities": list(PROBS),
            "cross_checks": {
                **worst,
                "tolerance_moments_rational": float(TOL_MOMENT_RATIONAL),
                "tolerance_moments_quadrature": float(TOL_MOMENT_QUAD),
                "tolerance_cdf_residual": TOL_CDF,
                "tolerance_quad_err": TOL_QUAD_ERR,
            },
            "items": items,
        }
        _write(ROOT / "posteriors" / f"{name}.json", posterior)
        info = {
            "name": name,
            "data": case["data"],
            "model": MODEL,
            "parameters": case["parameters"],
            "posterior": name,
            "description": case["description"],
            "reference_method": REFERENCE_METHOD,
            "trust": TRUST,
            "quantiles": two_class,
            "generator": GENERATOR,
        }
        _write(ROOT / "cases" / f"{name}.json", info)
        print(f"{name}: {worst}")
    return 0


def _write(path: Path, record: dict) -> None:
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
