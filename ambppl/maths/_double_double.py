"""Double-double arithmetic on float64 arrays: each number a pair ``(hi, lo)`` of float64
with ``|lo| <= ulp(hi) / 2``, about 32 significant digits (unit round-off ``2^-104``),
vectorized over the elements of numpy arrays.

The error-free transformations are Knuth's two-sum (``a + b = s + e`` exactly) and Dekker's
two-product with Veltkamp's split (``a b = p + e`` exactly, for ``|a b|`` below about
1e300); the operations on pairs follow Dekker's and the QD library's "sloppy" forms, each
correct to a few units of ``2^-104`` relative. :mod:`ambppl.maths._higher_moments` runs the
moment sums here, where float64 would lose every digit to cancellation.

References
----------
.. [1] T. J. Dekker, "A floating-point technique for extending the available precision",
   Numerische Mathematik 18 (1971) 224-242.
.. [2] D. E. Knuth, The Art of Computer Programming, vol. 2, 3rd ed. (1997), section 4.2.2
   (two-sum).
.. [3] Y. Hida, X. S. Li and D. H. Bailey, "Algorithms for quad-double precision floating
   point arithmetic", ARITH-15 (2001) (the QD library's double-double operations).
"""

from __future__ import annotations

import numpy as np

#: Unit round-off of double-double arithmetic (2^-104), used in error estimates.
EPS_DD = 2.0**-104
_SPLITTER = 134217729.0  # 2^27 + 1 (Dekker's split)

#: A double-double: the high and low float64 parts, arrays of one shape.
DD = tuple[np.ndarray, np.ndarray]


def two_sum(a: np.ndarray, b: np.ndarray) -> DD:
    """``a + b`` exactly, as the rounded sum and its error (Knuth's two-sum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _quick_two_sum(a: np.ndarray, b: np.ndarray) -> DD:
    s = a + b
    return s, b - (s - a)


def _two_prod(a: np.ndarray, b: np.ndarray) -> DD:
    p = a * b
    t = _SPLITTER * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLITTER * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def dd(x: np.ndarray | float) -> DD:
    """A float64 array (or number) as a double-double with zero low part."""
    hi = np.asarray(x, dtype=np.float64)
    return hi, np.zeros_like(hi)


def dd_add(x: DD, y: DD) -> DD:
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = _quick_two_sum(s, e + t)
    return _quick_two_sum(s, e + f)


def dd_neg(x: DD) -> DD:
    return -x[0], -x[1]


def dd_mul(x: DD, y: DD) -> DD:
    p, e = _two_prod(x[0], y[0])
    return _quick_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def dd_div(x: DD, y: DD) -> DD:
    q1 = x[0] / y[0]
    r = dd_add(x, dd_neg(dd_mul(y, dd(q1))))
    q2 = r[0] / y[0]
    r = dd_add(r, dd_neg(dd_mul(y, dd(q2))))
    q3 = r[0] / y[0]
    return dd_add(_quick_two_sum(q1, q2), dd(q3))


def dd_scale(x: DD, c: float) -> DD:
    """``x * c`` for a float ``c`` (exact input)."""
    p, e = _two_prod(x[0], np.full_like(x[0], c))
    return _quick_two_sum(p, e + x[1] * c)


def dd_sum_rows(a: np.ndarray) -> DD:
    """Double-double sum over axis 0 of a (C, n) float array (exact up to dd rounding)."""
    total = dd(a[0])
    for row in a[1:]:
        total = dd_add(total, dd(row))
    return total
