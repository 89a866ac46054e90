"""Vectorized tanh-sinh (double-exponential) quadrature of log-integrands.

Private helper of :mod:`ambppl.maths.exact`. Each of ``n`` independent integrals
``I_i = int_{lo_i}^{hi_i} exp(g_i(x)) dx`` is computed with the tanh-sinh rule, halving the
step until two levels agree, all integrals advancing together as 2-D numpy arrays. Two
details make it accurate near singular end points and for peaked integrands:

* the integrand receives the distances of each node to *both* ends of the interval (and
  their logarithms), computed from the rule itself rather than by subtracting nearly equal
  numbers, so ``(x - lo)**(alpha - 1)`` stays exact for nodes 1e-200 away from ``lo``;
* the interval is split at the maximum of ``g`` (a scout over the first level's nodes,
  then a vectorized grid search inside the bracket), so a narrow peak (large Dirichlet
  parameters) sits at the end of a piece, where the rule's nodes cluster, instead of
  between widely spaced central nodes; optionally the peak's flanks (+- ``PEAK_SIDE``
  widths, from the curvature of ``g``) become pieces of their own, integrated by
  Gauss-Legendre.

Sums are accumulated in log space with a running maximum, so tiny or huge densities neither
underflow nor overflow, and every test of convergence works on logarithms too (a value of
``exp(-2000)`` is a legitimate density, not zero).

Stopping rule: a piece has converged when two successive levels agree to ``rtol`` (relative
to the piece, or to ``rtol * MINOR`` relative to its whole integral). Cheaper estimates that
assume the asymptotic doubling of correct digits (error ~ diff**2) were measured to be
fooled by up to 1e5x (``tests/maths/test_quadrature.py`` and the mpmath references in
``tests/reference``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ambppl.internal.threads import map_chunks

__all__ = ["integrate_log"]

#: Half-width of the rule in t: the outermost nodes lie ~1e-200 of the interval from its
#: ends, far enough for end-point singularities as x**(-0.8).
T_MAX = 5.7
#: First and last level (step h = 2**-level).
LEVEL_MIN = 1
#: Level whose nodes the peak search scouts.
SCOUT_LEVEL = 1
LEVEL_MAX = 9
#: After the first level a piece only refines where ``f * w`` is within exp(-WINDOW) of
#: its largest value (plus one coarse step on either side).
WINDOW = 40.0
#: A piece holding a small share of its integral may stop once its level-to-level change
#: times that share is below MINOR * rtol. At the first levels that change was seen to
#: understate the piece's error 60x (the far flank of the amb pdf at alpha = (1176, 2380,
#: 0.81), a = 0.315): the factor keeps such errors 1000x below rtol.
MINOR = 1e-3
#: Relative rounding of exp(g) per unit of |g|: a few ulps of the logarithm.
LOG_ROUNDING = 8e-16
#: Points evaluated on each side of the best point per step of the peak search
#: (``find_peak``): the bracket shrinks to at most 2 / (PEAK_POINTS + 1) of itself.
PEAK_POINTS = 4
#: Most steps of the peak search.
PEAK_ITERS = 30
#: The peak search stops once ``log f`` varies by less than this across its bracket.
PEAK_DROP = 0.25
#: ... or once a bracket that reaches an end of the interval (the integrand rises towards
#: it) lies this close to it (fraction of the interval); ``integrate_log`` makes no cut this
#: close to an end, except at a peak with a finite width:
EDGE = 1e-3
#: a narrow interior peak at least PEAK_SIDE widths and EDGE_PEAK of the interval away from
#: both ends is cut at wherever it lies (a peak 20 widths from the end but 3.6e-4 of the
#: interval away was missed entirely: the modified cdf of (459, 2.2e5, 9.2) at 1 - 1e-10
#: came out as 1.7e-53).
EDGE_PEAK = 1e-12
#: Besides the peak, cut at peak +- PEAK_SIDE widths: the flanks of a narrow peak then
#: span whole pieces instead of a sliver next to an end of a long piece.
PEAK_SIDE = 7.0
#: Gauss-Legendre orders tried on the flanks of a narrow peak (pieces between two cuts).
GL_ORDERS = (16, 24)

LogIntegrand = Callable[[dict, np.ndarray, np.ndarray], np.ndarray]


@cache
def _nodes(level: int, first: bool) -> tuple[np.ndarray, ...]:
    """Nodes of the rule added at ``level`` (all its nodes where ``first``).

    Returns normalized distances to the lower and upper end (fractions of the interval
    length), log weights (without the factor h * length) and the abscissae t.
    """
    h = 2.0**-level
    n = math.ceil(T_MAX / h)
    j = np.arange(-n, n + 1)
    if not first:
        j = j[j % 2 == 1]
    t = j * h
    u = 0.5 * math.pi * np.sinh(t)
    log_rho_hi = -np.logaddexp(0.0, 2.0 * u)  # (1 - tanh u) / 2
    log_rho_lo = -np.logaddexp(0.0, -2.0 * u)  # (1 + tanh u) / 2
    log_cosh_u = np.abs(u) + np.log1p(np.exp(-2.0 * np.abs(u))) - math.log(2.0)
    log_w = math.log(math.pi / 4.0) + np.log(np.cosh(t)) - 2.0 * log_cosh_u
    return np.exp(log_rho_lo), np.exp(log_rho_hi), log_w, t


def _const_params(params: dict) -> dict:
    """The parameters shared by every element, as scalars (no gathers or broadcasts)."""
    return {k: v[0] for k, v in params.items() if v.size and np.all(v == v[0])}


def find_peak(
    logf: LogIntegrand, params: dict, length: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Locate a maximum of each log-integrand on (0, length) and estimate its width.

    A scout evaluates ``logf`` at the first-level nodes of the rule (dense next to both
    ends, where narrow peaks of Beta factors with small or large parameters sit); the
    best node and its two neighbours bracket a maximum. Each refinement step evaluates
    ``PEAK_POINTS`` evenly spaced points on either side of the best point so far and keeps
    the best of them with its two neighbours, until ``logf`` varies by less than
    ``PEAK_DROP`` across the bracket, the bracket lies within ``EDGE`` of an end of the
    interval, or after ``PEAK_ITERS`` steps. The integrand need not be unimodal: any local
    maximum is a valid split point.

    Returns
    -------
    peak, width : arrays of shape ``(n,)``
        Distance of the maximum from the lower end, and ``1 / sqrt(-(log f)'')`` there
        from the curvature of the final bracket (the standard deviation of a Gaussian
        peak), NaN where no interior maximum was bracketed.
    """
    n = length.shape[0]
    const = _const_params(params)
    rlo, rhi, _, _ = _nodes(SCOUT_LEVEL, True)
    fracs = np.concatenate([[0.0], rlo, [1.0]])

    def f(frac: np.ndarray, rows: Any = slice(None), frac_hi: Any = None) -> np.ndarray:
        """logf at fractions ``frac``: (k,) shared by the rows ``rows`` with ``frac_hi`` the
        exact complements, or (m, k), one row of fractions per row in ``rows``."""
        p = {k: const[k] if k in const else v[rows][:, None] for k, v in params.items()}
        ln = length[rows][:, None]
        if frac_hi is None:
            frac_hi = 1.0 - frac
        dl, dr = ln * frac, ln * frac_hi
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            val = logf(p, dl, dr)
        return np.where(np.isnan(val), -np.inf, val)

    # scout: the interior first-level nodes (exact distances to both ends), with the
    # interval ends as -inf sentinels
    scout = np.full((n, fracs.size), -np.inf)
    scout[:, 1:-1] = f(rlo, frac_hi=rhi)
    j = np.argmax(scout[:, 1:-1], axis=1) + 1
    rows = np.arange(n)
    # bracket (a, b) around the best point x so far: f(x) >= f(a), f(b)
    a, b, x = fracs[j - 1], fracs[j + 1], fracs[j]
    fa, fb, fx = scout[rows, j - 1], scout[rows, j + 1], scout[rows, j]
    # each step: PEAK_POINTS evenly spaced points on either side of x, then the best point
    # and its two neighbours (the points of a row are in order by construction)
    up = np.arange(1, PEAK_POINTS + 1) / (PEAK_POINTS + 1)
    down = 1.0 - up[::-1]  # ascending fractions of (a, x)
    active = rows
    for _ in range(PEAK_ITERS):
        ac = active
        settled = fx[ac] - np.minimum(fa[ac], fb[ac]) < PEAK_DROP
        settled |= ((b[ac] < EDGE) & (a[ac] == 0.0)) | ((a[ac] > 1.0 - EDGE) & (b[ac] == 1.0))
        settled |= ~np.isfinite(fx[ac])
        active = ac[~settled]
        if active.size == 0:
            break
        ac = active
        aa, xx, bb = a[ac, None], x[ac, None], b[ac, None]
        pts = np.concatenate([aa + (xx - aa) * down, xx + (bb - xx) * up], axis=1)
        fp = f(pts, ac)
        xs = np.concatenate([aa, pts[:, :PEAK_POINTS], xx, pts[:, PEAK_POINTS:], bb], axis=1)
        fs = np.concatenate(
            [fa[ac, None], fp[:, :PEAK_POINTS], fx[ac, None], fp[:, PEAK_POINTS:], fb[ac, None]],
            axis=1,
        )
        i = np.argmax(fs[:, 1:-1], axis=1) + 1
        r = np.arange(ac.size)
        a[ac], fa[ac] = xs[r, i - 1], fs[r, i - 1]
        b[ac], fb[ac] = xs[r, i + 1], fs[r, i + 1]
        x[ac], fx[ac] = xs[r, i], fs[r, i]
    # curvature of log f from the best point and the bracket ends
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        curv = 2.0 * ((fb - fx) / (b - x) - (fx - fa) / (x - a)) / (b - a)
        width = np.where((curv < 0) & np.isfinite(curv), 1.0 / np.sqrt(-curv), np.nan)
    return x * length, width * length


def _evaluate(logf: LogIntegrand, params: dict, dl: np.ndarray, dr: np.ndarray) -> np.ndarray:
    """``logf`` at the nodes, in parallel chunks (``ambppl.internal.threads``) when there are many;
    ``params`` holds scalars or one value per node."""
    out = np.empty(dl.size)

    def part(sl: slice) -> None:
        p = {k: v if np.ndim(v) == 0 else v[sl] for k, v in params.items()}
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            out[sl] = logf(p, dl[sl], dr[sl])

    map_chunks(part, dl.size)
    return out


def _group_logsumexp(values: np.ndarray, groups: np.ndarray, size: int) -> np.ndarray:
    """``log(sum(exp(values)))`` within each of ``size`` groups (``-inf`` for an empty
    group, ``+inf`` where a value is ``+inf``), shifted by each group's maximum so that
    nothing under- or overflows."""
    top = np.full(size, -np.inf)
    np.maximum.at(top, groups, values)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = safe + np.log(np.bincount(groups, np.exp(values - safe[groups]), minlength=size))
    return np.where(np.isposinf(top), np.inf, out)


def _row_logsumexp(values: np.ndarray) -> np.ndarray:
    """``log(sum(exp(values), axis=1))`` shifted by each row's maximum (``-inf`` for a row
    of zeros, ``+inf`` where a value is ``+inf``); 4x faster than ``scipy.special.logsumexp`` on
    (1000, 24) arrays, where its array-API dispatch dominates."""
    top = values.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = safe + np.log(np.exp(values - safe[:, None]).sum(axis=1))
    return np.where(np.isposinf(top), np.inf, out)


def _tol(rtol: Any, log_value: np.ndarray) -> np.ndarray:
    """``rtol`` raised to the rounding floor of integrands of size ``exp(log_value)``: a log
    density of -1.6e5 is itself uncertain by ~1e-11 (relative) in float64, so levels
    cannot agree more closely than that."""
    mag = np.abs(log_value)
    return rtol + LOG_ROUNDING * np.where(np.isfinite(mag), mag, 0.0)


@cache
def _gl_rule(order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Legendre on [0, 1]: fractions from the lower and the upper end, log weights."""
    u, w = np.polynomial.legendre.leggauss(order)
    return (1.0 + u) / 2.0, (1.0 - u) / 2.0, np.log(w / 2.0)


def _gauss_legendre(
    logf: LogIntegrand,
    params: dict,
    off_lo: np.ndarray,
    off_hi: np.ndarray,
    width: np.ndarray,
    rtol: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre of orders GL_ORDERS[0] and [1] over the pieces; converged where the two
    agree to ``rtol`` (the higher order is then far more accurate still). For pieces away
    from the ends of the interval, where the integrand is analytic and tanh-sinh would
    waste its end-point clustering."""
    const = _const_params(params)
    vals = []
    for order in GL_ORDERS:
        flo, fhi, lw = _gl_rule(order)
        dl = (off_lo[:, None] + width[:, None] * flo).ravel()
        dr = (off_hi[:, None] + width[:, None] * fhi).ravel()
        p = {k: const[k] if k in const else np.repeat(v, order) for k, v in params.items()}
        val = _evaluate(logf, p, dl, dr).reshape(-1, order) + lw
        val[np.isnan(val)] = -np.inf
        vals.append(_row_logsumexp(val) + np.log(width))
    with np.errstate(invalid="ignore"):
        diff = np.abs(np.expm1(vals[0] - vals[1]))
    return vals[1], (diff <= _tol(rtol, vals[1])) & np.isfinite(vals[1])


def _integrate_pieces(
    logf: LogIntegrand,
    params: dict,
    off_lo: np.ndarray,
    off_hi: np.ndarray,
    width: np.ndarray,
    rtol: Any,
    atol: float = 0.0,
    owner: np.ndarray | None = None,
    known: np.ndarray | None = None,
    accept: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Tanh-sinh over pieces [lo + off_lo, hi - off_hi] of width ``width``.

    After the first level, each piece only evaluates new nodes within one coarse step of
    the range of t where ``f * w`` exceeds ``exp(-WINDOW)`` times its largest value. A
    piece stops when the change between two successive levels drops below ``rtol``
    relative to the piece itself (at least the rounding floor ``LOG_ROUNDING * |log I|``),
    or below ``rtol * MINOR`` relative to the sum of all pieces of the same integral
    (``owner``: the integral of each piece; ``known``: the log of mass each integral has
    from elsewhere), or below ``atol`` absolutely.

    A piece still open after LEVEL_MAX counts as converged where its last change was at
    most ``accept`` relative to its whole integral (the integrand's own rounding can keep
    levels from agreeing to ``rtol``: changes of 1e-12 back and forth from level 5 to 9).

    Returns (log of the integral, converged flag) per piece (``rtol``: one, or one per
    piece).
    """
    n = width.shape[0]
    rtol = np.broadcast_to(np.asarray(rtol, dtype=float), (n,))
    log_width = np.log(width)
    mx = np.full(n, -np.inf)  # running maximum of log(f * w)
    tot = np.zeros(n)  # sum of exp(log(f * w) - mx)
    prev = np.full(n, np.nan)
    last = np.full(n, np.inf)  # log of the last change relative to the whole integral
    result = np.full(n, -np.inf)
    done = np.zeros(n, dtype=bool)
    t_lo = np.full(n, -np.inf)
    t_hi = np.full(n, np.inf)
    h0 = 2.0**-LEVEL_MIN
    active = np.arange(n)
    if owner is None:
        owner = active
    n_own = int(owner.max()) + 1 if n else 0
    if known is not None:
        n_own = max(n_own, known.size)
    # parameters shared by every piece (one alpha) are passed as scalars, not gathered
    const = _const_params(params)
    # every non-finite value below is handled explicitly (log space, -inf for zero)
    with np.errstate(all="ignore"):
        for level in range(LEVEL_MIN, LEVEL_MAX + 1):
            rlo, rhi, lw, t = _nodes(level, level == LEVEL_MIN)
            na = active.size
            # each piece evaluates the nodes of this level inside its window [t_lo, t_hi]: a
            # contiguous run of the sorted t, listed row by row without a (pieces x nodes) mask
            lo_idx = np.searchsorted(t, t_lo[active], side="left")
            counts = np.searchsorted(t, t_hi[active], side="right") - lo_idx
            rows = np.repeat(np.arange(na), counts)
            starts = np.cumsum(counts) - counts
            cols = np.arange(rows.size) - np.repeat(starts - lo_idx, counts)
            # per-node copies by np.repeat (rows are sorted), cheaper than gathers
            dl = np.repeat(off_lo[active], counts)
            dl += np.repeat(width[active], counts) * rlo[cols]
            dr = np.repeat(off_hi[active], counts)
            dr += np.repeat(width[active], counts) * rhi[cols]
            sub = {
                k: const[k] if k in const else np.repeat(v[active], counts)
                for k, v in params.items()
            }
            flat = _evaluate(logf, sub, dl, dr)
            flat += lw[cols]
            flat[np.isnan(flat)] = -np.inf
            row_max = np.full(na, -np.inf)
            filled = counts > 0
            if flat.size:  # rows are sorted: reduce each row's run
                row_max[filled] = np.maximum.reduceat(flat, starts[filled])
            new_mx = np.maximum(mx[active], row_max)
            safe = np.where(np.isfinite(new_mx), new_mx, 0.0)
            scale = np.where(np.isfinite(mx[active]), np.exp(mx[active] - safe), 0.0)
            flat -= np.repeat(safe, counts)
            terms = np.bincount(rows, weights=np.exp(flat), minlength=na)
            flat += np.repeat(safe, counts)
            tot_a = tot[active] * scale + terms
            mx[active] = new_mx
            tot[active] = tot_a
            cur = (
                np.where(tot_a > 0, safe + np.log(tot_a), -np.inf)
                + log_width[active]
                - level * math.log(2.0)
            )
            result[active] = cur
            if level == LEVEL_MIN:
                vals = np.full((na, t.size), -np.inf)
                vals[rows, cols] = flat
                big = vals > (new_mx[:, None] - WINDOW)
                anyb = big.any(axis=1)
                first = np.where(anyb, t[np.argmax(big, axis=1)], -np.inf)
                last = np.where(anyb, t[t.size - 1 - np.argmax(big[:, ::-1], axis=1)], np.inf)
                t_lo[active] = first - h0
                t_hi[active] = last + h0
                prev[active] = cur
                continue
            p = prev[active]
            both_zero = np.isneginf(cur) & np.isneginf(p)
            diff = np.abs(np.expm1(p - cur))
            # stop once two successive levels agree to rtol: the classic rule. Estimates that
            # trust the asymptotic doubling of correct digits (error ~ diff**2, Bailey's
            # diff**(log diff_k / log diff_{k-1})) were fooled by up to 1e5x: an integrand
            # resolved at levels 2 and 3 to the same wrong 2e-7 (amb pdf, alpha = (6, 1, 1);
            # modified pdf, alpha = (2.5, 2.5, 300), a = 0.9727)
            # absolute tolerance (probabilities), in log space: exp(cur) underflows for the
            # densities of concentrated posteriors (log pdf ~ -2000), and "0 <= atol = 0"
            # stopped every such integral after its second level
            tiny = np.log(diff) + cur <= math.log(atol) if atol > 0 else np.zeros(na, bool)
            # the piece's change relative to its whole integral (all pieces, latest levels)
            log_total = _group_logsumexp(result, owner, n_own)
            if known is not None:
                log_total = np.logaddexp(log_total, known)
            rt = rtol[active]
            share = np.log(diff) + cur - log_total[owner[active]]  # change / whole integral
            last[active] = share
            minor = share <= np.log(MINOR * rt)
            ok = both_zero | tiny | (diff <= _tol(rt, cur)) | minor | (np.isinf(cur) & (cur > 0))
            done[active[ok]] = True
            prev[active] = cur
            active = active[~ok]
            if active.size == 0:
                break
    if accept > 0.0:
        done |= last <= math.log(accept)
    return result, done


def integrate_log(
    logf: LogIntegrand,
    params: dict,
    length: np.ndarray,
    *,
    split: bool = True,
    flanks: bool = False,
    rtol: Any = 1e-8,
    atol: float = 0.0,
    gaps: tuple[np.ndarray, np.ndarray] | None = None,
    log_extra: np.ndarray | None = None,
    cuts: np.ndarray | None = None,
    accept: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Log of ``int_0^length exp(logf) dx`` for each element, by tanh-sinh with step halving.

    Parameters
    ----------
    logf : callable
        ``logf(p, dl, dr)`` with ``p`` a dict of parameter arrays and ``dl``/``dr`` arrays of
        the same (broadcast) shape holding the distances of the nodes to the lower and upper
        end of the *whole* interval; returns ``log f`` elementwise.
    params : dict of 1-D arrays
        One entry per integral (shape ``(n,)``).
    length : 1-D array
        Interval lengths (positive).
    split : bool
        Split each interval at the maximum of ``logf`` first.
    flanks : bool
        Also cut at the maximum +- ``PEAK_SIDE`` times its width (from the curvature of
        ``log f``) and integrate the pieces between cuts by Gauss-Legendre: far fewer
        nodes for the narrow, near-Gaussian peaks of densities at large Dirichlet
        parameters. (For the cdf integrands, a density times a smooth step, it costs
        more than it saves.)
    rtol, atol : float
        Target relative and absolute error (see :func:`_integrate_pieces`); ``rtol`` may be
        one per element (the rounding floor of its integrand).
    gaps : (lower, upper) arrays of shape ``(n,)``, optional
        Stretches at the two ends of each interval that the rule leaves out (0: none): the
        caller integrates them in closed form (an end-point singularity ``x**(k - 1)`` with a
        tiny ``k`` holds most of its mass closer to the end than any float distance the rule
        reaches, see ``ambppl.maths._exact_route``). Far smaller than the interval.
    log_extra : array of shape ``(n,)``, optional
        Log of mass the caller adds to each integral (the stretches left out): counted as
        settled mass by the stopping rule and added to the result.
    cuts : array of shape ``(n, k)``, optional
        More points (distances from the lower end; NaN: none) to cut each interval at, e.g.
        where a factor of the integrand steps from 0 to 1 on a scale far below the
        interval's; used where they lie more than ``EDGE_PEAK`` of the interval from its ends.
    accept : float
        Where ``rtol`` is not reached by the last level, a change of at most ``accept``
        (relative to the whole integral) between the last two levels still counts as
        converged (see :func:`_integrate_pieces`).

    Returns
    -------
    log_integral, converged : arrays of shape ``(n,)``
    """
    n = length.shape[0]
    peak_cuts = np.full((n, 3), np.nan)
    if split:
        m, width = find_peak(logf, params, length)
        peak_cuts = np.stack([m - PEAK_SIDE * width, m, m + PEAK_SIDE * width], axis=1)
        if not flanks:
            peak_cuts[:, [0, 2]] = np.nan
        peak_cuts[:, [0, 2]] = np.where(np.isfinite(width)[:, None], peak_cuts[:, [0, 2]], np.nan)
    frac = peak_cuts / length[:, None]
    with np.errstate(invalid="ignore"):
        ok = (frac > EDGE) & (frac < 1.0 - EDGE)
        if split:  # a narrow peak next to an end: cut there too (EDGE_PEAK)
            clear = (m - PEAK_SIDE * width > EDGE_PEAK * length) & (
                m + PEAK_SIDE * width < (1.0 - EDGE_PEAK) * length
            )
            ok |= clear[:, None] & (frac > EDGE_PEAK) & (frac < 1.0 - EDGE_PEAK)
        inside = np.where(ok, peak_cuts, np.nan)
        if cuts is not None:
            more = cuts / length[:, None]
            more = np.where((more > EDGE_PEAK) & (more < 1.0 - EDGE_PEAK), cuts, np.nan)
            inside = np.concatenate([inside, more], axis=1)
    bounds = np.sort(np.concatenate([np.zeros((n, 1)), inside, length[:, None]], axis=1))
    lo, hi = bounds[:, :-1], bounds[:, 1:]  # NaN (absent cuts) sort last
    with np.errstate(invalid="ignore"):
        elem, k = np.nonzero(hi > lo)
    plo, phi = lo[elem, k], hi[elem, k]
    off_hi = length[elem] - phi
    off_hi[phi == length[elem]] = 0.0
    if gaps is not None:  # the end pieces start (end) a gap away from the interval's ends
        first, last = plo == 0.0, phi == length[elem]
        plo = np.where(first, gaps[0][elem], plo)
        off_hi = np.where(last, gaps[1][elem], off_hi)
        phi = np.where(last, length[elem] - off_hi, phi)
    # the flanks of a narrow peak, [m - K w, m] and [m, m + K w], with no other cut inside
    c = inside[elem]
    flank = ((plo == c[:, 0]) & (phi == c[:, 1])) | ((plo == c[:, 1]) & (phi == c[:, 2]))
    piece_params = {key: v[elem] for key, v in params.items()}
    piece_rtol = np.broadcast_to(np.asarray(rtol, dtype=float), (n,))[elem]
    logs = np.full(elem.size, -np.inf)
    ok = np.zeros(elem.size, dtype=bool)
    # smooth pieces between two cuts (the flanks of a narrow peak): Gauss-Legendre first
    gl = np.flatnonzero(flank)
    if gl.size:
        sub = {key: v[gl] for key, v in piece_params.items()}
        logs[gl], ok[gl] = _gauss_legendre(
            logf, sub, plo[gl], off_hi[gl], phi[gl] - plo[gl], piece_rtol[gl]
        )
    known = _group_logsumexp(logs[ok], elem[ok], n)  # log mass already settled
    if log_extra is not None:
        known = np.logaddexp(known, log_extra)
    ts = np.flatnonzero(~ok)
    if ts.size:
        sub = {key: v[ts] for key, v in piece_params.items()}
        logs[ts], ok[ts] = _integrate_pieces(
            logf,
            sub,
            plo[ts],
            off_hi[ts],
            phi[ts] - plo[ts],
            piece_rtol[ts],
            atol,
            owner=elem[ts],
            known=known,
            accept=accept,
        )
    out = _group_logsumexp(logs, elem, n)
    if log_extra is not None:
        out = np.logaddexp(out, log_extra)
    conv = np.bincount(elem, ~ok, minlength=n) == 0
    return out, conv
