"""Shared knowledge about the exact C = 2 laws (``ambppl.ambiguity_posterior``) for tests."""

from __future__ import annotations


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
