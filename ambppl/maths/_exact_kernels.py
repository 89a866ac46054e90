"""Integrands for the exact two-class distributions of the ambiguity measures.

Private helper of :mod:`ambppl.maths.exact`. For ``C = 2`` write ``q = (q_1, q_2, q_cs)`` with
``V = 1 - q_cs ~ Beta(b, c)`` (``b = alpha_1 + alpha_2``, ``c = alpha_cs``) independent of
``pi = q_1 / V ~ Beta(alpha_1, alpha_2)``, and ``D = |2 pi - 1|``. Every measure has the form

    A = 1 - V * H(D),   H = (1 + D**2) / 2 (amb),  D**2 (modified),  D (old),

so with ``y = 1 - a``

    pdf(a) = E[f_V(y / H) / H],   cdf(a) = P(V H >= y) = E[S_V(y / H)],

a one-dimensional integral over ``D`` (paper eq. ``amb_posterior_analytic`` after the change
of variables ``u = 1 - V``; :errata:`E1` for the lower limit ``max(0, 2a - 1)``). The variable of
integration is chosen per measure so that no singularity lies close to (but not on) the
interval and every end-point singularity is a power of a distance the quadrature supplies:

* amb, ``a > 1/2``: ``r = |pi - 1/2| = sqrt(2a - 1)/2 * sinh(w)``; ``a < 1/2``:
  ``r = sqrt(1 - 2a)/2 * cosh(w)``; ``a = 1/2``: ``r`` itself. This absorbs the
  ``1/sqrt`` singularity of the paper's integrand at ``u = 2a - 1`` and its collision with
  the ``u**(alpha_cs - 1)`` singularity near ``a = 1/2`` (:errata:`E6`).
* modified and old: ``s = -log H``, so ``V = y * exp(s)`` and ``1 - V = 1 - exp(-(S - s))``
  with ``S = -log y`` taken from the distance to the upper end.

All functions return logarithms of the integrand including the Jacobian.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc

from ambppl.internal.threads import MIN_CHUNK, map_chunks

LOG2 = math.log(2.0)


def xl(k: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """``k * log_x``; the quadrature never hands out a distance that underflows to 0, so
    ``log_x`` is finite and no ``0 * log(0)`` guard is needed."""
    return k * log_x


def _at(x: Any, sel: Any) -> Any:
    """``x`` at the nodes ``sel`` (a boolean mask, or ``slice(None)`` for all): a scalar
    parameter as it is, an array (per node, or per row of a 2-D batch) broadcast first."""
    if np.ndim(x) == 0 or isinstance(sel, slice):
        return x
    return np.broadcast_to(x, sel.shape)[sel]


def log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(-x))`` for ``x > 0``, exact for tiny ``x`` through ``expm1``."""
    return np.log(-np.expm1(-x))


def log_pi_pair(p: dict, l1: np.ndarray, l2: np.ndarray) -> np.ndarray:
    """``log(f_pi(x) + f_pi(1 - x))`` for ``pi ~ Beta(a1, a2)``, given log x and log(1-x)."""
    k1 = p["a1"] - 1.0
    k2 = p["a2"] - 1.0
    if np.ndim(k1) == 0 and np.ndim(k2) == 0 and k1 == k2:  # symmetric: both terms equal
        return xl(k1, l1 + l2) + (LOG2 - p["lbR"])
    return np.logaddexp(xl(k1, l1) + xl(k2, l2), xl(k1, l2) + xl(k2, l1)) - p["lbR"]


def _ibeta(a: Any, b: Any, x: np.ndarray) -> np.ndarray:
    """``scipy.special.betainc(a, b, x)``, in parallel chunks for large ``x``."""
    if x.size < 2 * MIN_CHUNK:
        return sc.betainc(a, b, x)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), x.shape)
    a, b, x = (v if np.ndim(v) == 0 else np.broadcast_to(v, shape).ravel() for v in (a, b, x))
    out = np.empty(x.size)

    def part(sl: slice) -> None:
        a_, b_ = (v if np.ndim(v) == 0 else v[sl] for v in (a, b))
        out[sl] = sc.betainc(a_, b_, x[sl])

    map_chunks(part, x.size)
    return out.reshape(shape)


def _betainc_split(
    first: np.ndarray,
    b: Any,
    c: Any,
    v: np.ndarray,
    one_m_v: np.ndarray,
    *,
    upper: Any,
) -> np.ndarray:
    """``P(V >= v)`` (where ``upper``) or ``P(V < v)`` for ``V ~ Beta(b, c)``: ``I_v(b, c)``
    where ``first``, ``I_{1-v}(c, b)`` elsewhere (one call over all nodes), complemented as
    needed."""
    x = np.where(first, v, one_m_v)
    val = _ibeta(np.where(first, b, c), np.where(first, c, b), x)
    flip = first == upper  # I gives P(V < v) from v, P(V >= v) from 1 - v
    val[flip] = 1.0 - val[flip]
    return val


#: Tails of Beta(b, c) with an integer parameter up to this size are finite sums.
MAX_SUM_TERMS = 16
#: ... and their complements serve where at least this large (relative error ~1e-14).
COMPLEMENT_MIN = 1e-2


def _log_finite_sum(a: Any, m: Any, log_z: np.ndarray) -> np.ndarray:
    """``log sum_{k<m} (a)_k / k! z^k`` (rising factorial ``(a)_k``) by Horner's rule; ``a``
    and ``m`` scalars or one per element (the same operations either way, so a batch gives
    the values of single calls bit for bit)."""
    z = np.exp(log_z)
    acc = np.ones(np.shape(z))
    for k in range(int(np.max(m)) - 1, 0, -1):
        step = 1.0 + acc * z * ((a + k - 1.0) / k)
        acc = step if np.ndim(m) == 0 else np.where(k < m, step, acc)
    return np.log(acc)


def _log_tail_integer(
    want_upper: Any, b: Any, c: Any, log_v: np.ndarray, log_1mv: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """log P(V >= v) (where ``want_upper``) or log P(V < v) for V ~ Beta(b, c) where b or c
    is an integer of at most MAX_SUM_TERMS. With integer n (the identity for I_x(a, n)):

        P(V >= v) = (1 - v)**c sum_{k<b} (c)_k / k! v**k        (b = n)
        P(V < v)  = v**b sum_{k<c} (b)_k / k! (1 - v)**k        (c = n)

    sums of positive terms, from the exact logarithms of v and 1 - v; the other tail is the
    complement where that is at least COMPLEMENT_MIN. scipy.special.betainc takes 0.3-1 us
    per value for non-integer parameters (Jeffreys priors give b = n_1 + n_2 + 1, an
    integer), these sums 0.02-0.1 us. Returns (log tail, where it applies); elsewhere the
    log is NaN (also where log v is NaN: the caller's betainc path propagates it)."""
    shape = np.broadcast_shapes(np.shape(want_upper), np.shape(b), np.shape(c), np.shape(log_v))
    out = np.full(shape, np.nan)
    ok_b = (np.floor(b) == b) & (b <= MAX_SUM_TERMS)
    ok_c = (np.floor(c) == c) & (c <= MAX_SUM_TERMS)
    use_b = np.broadcast_to(ok_b & (want_upper | ~ok_c), shape)  # prefer the wanted tail
    use_c = np.broadcast_to(~use_b & ok_c, shape)
    for sel, upper in ((use_b, True), (use_c, False)):
        if not sel.any():
            continue
        every = sel.all()
        nodes = slice(None) if every else sel
        bs, cs, lv, l1, want = (_at(x, nodes) for x in (b, c, log_v, log_1mv, want_upper))
        if upper:  # log P(V >= v)
            log_tail = xl(cs, l1) + _log_finite_sum(cs, bs, lv)
        else:  # log P(V < v)
            log_tail = xl(bs, lv) + _log_finite_sum(bs, cs, l1)
        flip = want != upper
        if np.any(flip):
            # the wanted tail is the complement: kept only where it is at least
            # COMPLEMENT_MIN, so that its relative error stays below 1e-16 / COMPLEMENT_MIN
            # (elsewhere betainc, which gets the small tail directly)
            with np.errstate(invalid="ignore", divide="ignore"):
                comp = np.log(-np.expm1(np.minimum(log_tail, 0.0)))
                comp = np.where(comp >= math.log(COMPLEMENT_MIN), comp, np.nan)
            log_tail = np.where(flip, comp, log_tail)
        if every:
            out = np.broadcast_to(log_tail, shape).copy()
        else:
            out[sel] = log_tail
    return out, (use_b | use_c) & ~np.isnan(out)


def _log_v_factor(p: dict, kind: str, log_v: np.ndarray, log_1mv: np.ndarray) -> np.ndarray:
    """log f_V(v) (kind "pdf"), else log P(V >= v) where ``p["lower"]`` (the integrand of
    the lower tail of A) and log P(V < v) elsewhere (the upper tail), V ~ Beta(b, c)."""
    b = p["b"]
    c = p["c"]
    if kind == "pdf":
        return xl(b - 1.0, log_v) + xl(c - 1.0, log_1mv) - p["lbV"]
    upper = p["lower"]  # P(V >= v) for the lower tail of A = 1 - V H
    out, done = _log_tail_integer(upper, b, c, log_v, log_1mv)
    rest = ~done | np.isneginf(out)  # a complement that underflowed: betainc's stand-in
    if not rest.any():
        return out
    every = bool(rest.all())
    shape = out.shape
    nodes = slice(None) if every else rest
    b, c, lbv, log_v, log_1mv, upper = (
        _at(x, nodes) for x in (b, c, p["lbV"], log_v, log_1mv, upper)
    )
    v = np.exp(log_v)
    one_m_v = np.exp(log_1mv)
    # each node evaluates one incomplete beta, from whichever of v and 1 - v is small and
    # exact: the other may be rounded, and near the end where the Beta density diverges
    # (parameter < 1) that rounding would cost far more than 1e-16 (seen: 6e-13 in the amb
    # cdf of Dir(0.2, 0.2, 0.2) at 1/2). The complement 1 - I costs ~1e-16 absolute, all the
    # cdf needs; scipy.special.betaincc is 6-14x slower than betainc (scipy 1.18).
    val = _betainc_split(v < 0.5, b, c, v, one_m_v, upper=upper)
    with np.errstate(divide="ignore"):
        res = np.log(val)
    zero = ~(val > 0)
    if np.any(zero):
        # leading term of the incomplete beta tail: a finite stand-in where betainc
        # underflows (only the peak search looks at those nodes; their contribution is
        # below 1e-300), computed at those nodes only
        lead = np.where(upper, c, b)
        bz, cz, lz, lbz, lv, l1 = (_at(x, zero) for x in (b, c, lead, lbv, log_v, log_1mv))
        res[zero] = xl(cz, l1) + xl(bz, lv) - np.log(lz) - lbz
    if every:
        return np.broadcast_to(res, shape).copy() if res.shape != shape else res
    out[rest] = res
    return out


# ---------------------------------------------------------------------------------------
# amb
# ---------------------------------------------------------------------------------------


#: Where ``r = |pi - 1/2|`` is at most this, ``log(1/2 -+ r)`` are taken as
#: ``log1p(-+2 r) - log 2`` (relative error of ``1/2 - r`` at most that of ``r``, and far
#: smaller than that for small ``r``, where ``pi ~ Beta`` with parameters ~ 1e4 needs it);
#: above it from ``x = 1/2 - r`` computed from the distance ``W - w`` to the end of the
#: interval of integration, exact where ``pi`` approaches 0 or 1, and ``1/2 + r = 1 - x``.
DIRECT_R = 0.25
#: ... and where more than this share of the nodes lies above it, the second form serves
#: all nodes (masking costs more than it saves).
FAR_SHARE = 0.3


def _log_half_pm_r(r: np.ndarray, far_x: Any) -> tuple[np.ndarray, np.ndarray]:
    """``log(1/2 - r)`` and ``log(1/2 + r)``: ``log1p(-+2 r) - log 2`` where
    ``r <= DIRECT_R``; elsewhere ``log x`` and ``log1p(-x)`` with ``x = far_x(mask)``
    (``1/2 - r`` to a few ulps, evaluated at those nodes only). The second is exact near 1,
    which the factor ``(1 - x)**(alpha - 1)`` of ``pi ~ Beta`` needs where alpha ~ 1e4 and
    ``x`` ~ 1e-4: ``log1p(2 r)`` cost 1e-13 in the cdf of Dir(0.2, 1e4, 2.5) at 2.9e-4."""
    far = r > DIRECT_R
    n_far = np.count_nonzero(far)
    if n_far > FAR_SHARE * far.size:  # the second form is accurate everywhere: use it alone
        x = far_x(slice(None))
        return np.log(x), np.log1p(-x)
    l_lo = np.log1p(-2.0 * r) - LOG2
    l_hi = np.log1p(2.0 * r) - LOG2
    if n_far:
        x = far_x(far)
        l_lo[far] = np.log(x)
        l_hi[far] = np.log1p(-x)
    return l_lo, l_hi


def _log_v_near_one(direct: np.ndarray, log_1mv: np.ndarray) -> np.ndarray:
    """``log V``: ``log1p(-(1 - V))`` where ``1 - V < 1/2`` (exact relative to ``1 - V``),
    the ``direct`` value elsewhere."""
    near = log_1mv < -LOG2
    if not np.any(near):
        return direct
    with np.errstate(invalid="ignore"):
        return np.where(near, np.log1p(-np.exp(np.minimum(log_1mv, -LOG2))), direct)


def _sinh_cosh(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sinh w`` and ``cosh w`` for ``w >= 0`` from one ``expm1``; sinh exact for tiny w."""
    em = np.expm1(w)
    ep1 = em + 1.0
    sh = em * (em + 2.0) / (2.0 * ep1)
    return sh, sh + 1.0 / ep1  # cosh = sinh + exp(-w)


def amb_above(kind: str):
    """amb at ``a > 1/2``: ``r = sqrt(e)/2 sinh(w)``, ``w in [0, W]``, ``e = 2a - 1``."""

    def logf(p, w, dr):
        em = np.expm1(w)
        sh = em * (em + 2.0) / (2.0 * (em + 1.0))  # sinh w, exact for tiny w
        r = p["hse"] * sh  # hse = sqrt(e) / 2
        lch = 0.5 * np.log1p(sh * sh)  # log cosh w, exact for small w (log(ch) is not)

        def far_x(sel):
            # 1/2 - r = hse (sinh W - sinh w) = hse m (2 cosh W + m exp(-W)) / (2 (m + 1))
            # with m = expm1(W - w): a sum of positive terms, exact to a few ulps
            m = np.expm1(_at(dr, sel))
            return (
                _at(p["hse"], sel)
                * m
                * (2.0 * _at(p["chW"], sel) + m * _at(p["emW"], sel))
                / (2.0 * (m + 1.0))
            )

        l_lo, l_hi = _log_half_pm_r(r, far_x)
        l1p = np.log1p(4.0 * r * r)
        log_1mv = p["le"] + 2.0 * lch - l1p  # 1 - V = (4 r^2 + e) / (1 + 4 r^2)
        # V = (1 - e) / (1 + 4 r^2), 1 - e = 2 (1 - a) exact for a > 1/2; where V > 1/2 its
        # log from 1 - V instead (log V ~ -(1 - V) to 1e-16 of itself: V**(b - 1) with
        # b ~ 1e6 and the complement of a tail need that)
        log_v = _log_v_near_one(p["log2y"] - l1p, log_1mv)
        out = log_pi_pair(p, l_lo, l_hi) + _log_v_factor(p, kind, log_v, log_1mv)
        out = out + p["lse"] - LOG2 + lch  # dr/dw
        if kind == "pdf":
            out = out - (l1p - LOG2)  # 1 / H, H = (1 + 4 r^2) / 2
        return out

    return logf


def amb_below(kind: str):
    """amb at ``a < 1/2``: ``r = r0 cosh(w)``, ``r0 = sqrt(1 - 2a)/2``, ``w in [0, W]``."""

    def logf(p, w, dr):
        sh, ch = _sinh_cosh(w)
        r = p["r0"] * ch

        def far_x(sel):
            # 1/2 - r = r0 (cosh W - cosh w) = r0 m (2 sinh W - m exp(-W)) / (2 (m + 1))
            # with m = expm1(W - w); m exp(-W) <= 1 - exp(-W) is at most half of 2 sinh W,
            # so the difference loses at most one bit
            m = np.expm1(_at(dr, sel))
            return (
                _at(p["r0"], sel)
                * m
                * (2.0 * _at(p["shW"], sel) - m * _at(p["emW"], sel))
                / (2.0 * (m + 1.0))
            )

        l_lo, l_hi = _log_half_pm_r(r, far_x)
        r2 = 4.0 * r * r
        l1p = np.log1p(r2)
        lsh = np.log(sh)
        log_1mv = 2.0 * (p["lr0"] + LOG2 + lsh) - l1p
        # 1 - V = 4 r0^2 sinh^2 w / (1 + 4 r^2) <= 1/2: log V from it is exact (the direct
        # log(2 y) - log1p(4 r^2) lost 1e-16 absolute, 2.5e-9 of the complement 1 - V**b
        # for the amb cdf of (1, 7.3e5, 1) at 4.1e-8)
        log_v = _log_v_near_one(p["log2y"] - l1p, log_1mv)
        out = log_pi_pair(p, l_lo, l_hi) + _log_v_factor(p, kind, log_v, log_1mv)
        out = out + p["lr0"] + lsh  # dr/dw
        if kind == "pdf":
            out = out - (l1p - LOG2)
        return out

    return logf


def amb_half(kind: str):
    """amb at ``a = 1/2`` exactly: integrate over ``r in [0, 1/2]``."""

    def logf(p, r, dr):
        l1p = np.log1p(4.0 * r * r)
        log_v = p["log2y"] - l1p
        log_1mv = 2.0 * (LOG2 + np.log(r)) - l1p
        out = log_pi_pair(p, np.log(dr), np.log(0.5 + r)) + _log_v_factor(p, kind, log_v, log_1mv)
        if kind == "pdf":
            out = out - (l1p - LOG2)
        return out

    return logf


# ---------------------------------------------------------------------------------------
# modified and old: s = -log H in [0, S], S = -log(1 - a)
# ---------------------------------------------------------------------------------------


def power_family(kind: str, power: int):
    """``H = D**power`` (2: modified, 1: old) in the variable ``s = -log H``."""
    half = 1.0 / power

    def logf(p, s, dr):
        sd = half * s  # -log D
        l_lo = log1mexp(sd) - LOG2  # log((1 - D)/2)
        l_hi = np.log1p(0.5 * np.expm1(-sd))  # log((1 + D)/2), exact for D near 1
        log_fd = log_pi_pair(p, l_lo, l_hi) - LOG2  # density of D
        log_v = -dr
        log_1mv = log1mexp(dr)
        out = log_fd + _log_v_factor(p, kind, log_v, log_1mv)
        # pdf: f_D f_V / H |dD/ds| ;  cdf, sf: f_D S_V |dD/ds|,  |dD/ds| = D / power
        if kind == "pdf":
            return out + s - sd - math.log(power)
        return out - sd - math.log(power)

    return logf
