"""Shared knowledge about exact laws for tests: the C = 2 posteriors
(``ambppl.ambiguity_posterior``) and the moments of the measures under a Dirichlet
(``ambppl.dirichlet_moments``)."""

from __future__ import annotations

import math
from fractions import Fraction


def end_exponents(alpha, measure, end):
    """(exponents, log): p(a) ~ sum_j K_j eps**e_j (+ a log(1/eps) factor where ``log``) as
    eps = |a - end| -> 0; the smallest exponent leads.

    Derivation (C = 2): with V = 1 - q_cs ~ Beta(a1 + a2, a_cs) independent of
    pi = q_+ / V ~ Beta(a1, a2) and D = |2 pi - 1|, 1 - amb = V (1 + D^2) / 2,
    1 - modified = V D^2 and 1 - old = V D. At a -> 0 all three need V -> 1 and D -> 1:
    1 - V has a density ~ s**(a_cs - 1) and 1 - D one ~ t**(a1 - 1) + t**(a2 - 1) (pi -> 0
    or 1), and the measure is their sum to first order, so p ~ eps**(a_cs + a1 - 1) +
    eps**(a_cs + a2 - 1), both terms positive. At a -> 1 (b = a1 + a2): amb needs V -> 0 only
    (eps**(b - 1), ERRATA 4); modified needs V D^2 -> 0, a product of densities ~ v**(b - 1)
    and ~ w**(-1/2) (D has a finite density at 0), so eps**(b - 1) and eps**(-1/2); old
    needs V D -> 0: eps**(b - 1) and eps**0, and at b = 1 the product of two densities finite
    at 0 grows like f_V(0) f_D(0) log(1/eps) (modified at b = 1/2 likewise).
    """
    a1, a2, acs = alpha
    b = a1 + a2
    if end == 0.0:
        return sorted([acs + a1 - 1.0, acs + a2 - 1.0]), False
    if measure == "amb":
        return [b - 1.0], False
    if measure == "modified":
        return sorted([b - 1.0, -0.5]), b == 0.5
    return sorted([b - 1.0, 0.0]), b == 1.0


def end_rate(alpha, measure, end):
    """(e, log) with p(a) ~ K eps**e (log: ~ K log(1/eps)) as eps = |a - end| -> 0: the
    leading term of :func:`end_exponents`."""
    exponents, log = end_exponents(alpha, measure, end)
    return exponents[0], log


def _compositions(m, c):
    """All (n_1..n_c) of non-negative integers summing to m."""
    if c == 1:
        yield (m,)
        return
    for i in range(m + 1):
        for rest in _compositions(m - i, c - 1):
            yield (i, *rest)


def _rising(x, n):
    """The rising factorial (x)_n, in the number type of ``x``."""
    out = x * 0 + 1
    for i in range(n):
        out *= x + i
    return out


def enumerated_moments(alpha, measure, has_cs, order=4, exact=True):
    """(mean, central moments mu_0..mu_order) of the measure by explicit enumeration.

    Independent of ambppl.maths._higher_moments: E[S^m] expands (sum_k p_k^2)^m over all
    compositions n of m (multinomial coefficients) with the Dirichlet moments
    E[prod p_k^{2 n_k}] = prod (a_k)_{2 n_k} / (A)_{2m}; E[(1-u)^m] = (A)_m / (alpha_0)_m;
    then amb = 1 - (1-u) S or modified = 1 - (1-u)(C S - 1)/(C - 1) expanded binomially and
    centred, all in exact fractions (``exact``; ``Fraction(float)`` is exact, so these are the
    exact moments of the float inputs) or in mpmath at the caller's working precision
    (``mpmath.workdps``).
    """
    if exact:
        num = lambda x: Fraction(float(x))  # noqa: E731
    else:
        import mpmath as mp

        num = lambda x: mp.mpf(float(x))  # noqa: E731
    a = [num(x) for x in alpha]
    proper, a_cs = (a[:-1], a[-1]) if has_cs else (a, num(0))
    c, big_a = len(proper), sum(proper)
    a0 = big_a + a_cs
    es = []
    for m in range(order + 1):
        total = num(0)
        for n in _compositions(m, c):
            term = num(math.factorial(m) // math.prod(math.factorial(x) for x in n))
            for ak, nk in zip(proper, n, strict=True):
                if nk:
                    term *= _rising(ak, 2 * nk)
            total += term
        es.append(total / _rising(big_a, 2 * m))
    ex = [_rising(big_a, m) / _rising(a0, m) for m in range(order + 1)]
    if measure == "amb":
        ey = es
    else:
        ey = [
            sum(math.comb(m, i) * num(c) ** i * es[i] * (-1) ** (m - i) for i in range(m + 1))
            / num(c - 1) ** m
            for m in range(order + 1)
        ]
    ew = [x * y for x, y in zip(ex, ey, strict=True)]
    ev = [sum(math.comb(m, i) * (-1) ** i * ew[i] for i in range(m + 1)) for m in range(order + 1)]
    mean = ev[1]
    central = [
        sum(math.comb(r, j) * ev[j] * (-mean) ** (r - j) for j in range(r + 1))
        for r in range(order + 1)
    ]
    return mean, central
