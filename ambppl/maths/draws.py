"""Exact draws of the conjugate posterior: independent Dirichlet vectors (numpy only)."""

from __future__ import annotations

import numpy as np
import scipy.special as sc

__all__ = ["dirichlet_draws"]


def dirichlet_draws(rng: np.random.Generator, alpha: np.ndarray, draws: int) -> np.ndarray:
    """Independent Dirichlet draws of shape (draws, items, K), by normalized gamma variates.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of randomness.
    alpha : numpy.ndarray
        Concentrations, (items, K) (the same for every draw) or (draws, items, K).
    draws : int
        Number of draws (ignored where ``alpha`` is three-dimensional).

    Returns
    -------
    numpy.ndarray
        Draws on the simplex along the last axis.

    Notes
    -----
    Where every gamma variate of a vector underflows (all concentrations tiny) the vector is
    redrawn in log space, ``Gamma(a) = Gamma(a + 1) U^(1/a)``, and normalized by a softmax.

    Examples
    --------
    >>> import numpy as np
    >>> q = dirichlet_draws(np.random.default_rng(0), np.ones((2, 3)), 5)
    >>> q.shape, bool(np.allclose(q.sum(axis=-1), 1.0))
    ((5, 2, 3), True)
    """
    size = alpha.shape if alpha.ndim == 3 else (draws, *alpha.shape)
    g = rng.standard_gamma(alpha, size=size)
    total = g.sum(axis=-1, keepdims=True)
    under = total[..., 0] == 0
    if np.any(under):
        # Every gamma underflowed (all concentrations tiny): redraw those vectors in log
        # space, Gamma(a) = Gamma(a + 1) * U^(1/a), then normalize with a softmax.
        d, i = np.nonzero(under)
        a = np.broadcast_to(alpha, size)[d, i]
        logg = np.log(rng.standard_gamma(a + 1.0)) + np.log(rng.random(a.shape)) / a
        g[d, i] = sc.softmax(logg, axis=-1)
        total[d, i] = 1.0
    g /= total
    return g
