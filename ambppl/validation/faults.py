"""``wrong_posterior``: deliberately wrong posteriors, to show that the checks can fail."""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.internal.checks import check_option, check_random_seed
from ambppl.maths.measures import VARIABLES, evaluate
from ambppl.validation._draws import read_fit

#: The faults :func:`wrong_posterior` plants, and what each one is.
FAULTS: dict[str, str] = {
    "shift": "amb draws shifted by +0.02 (q and the other measures untouched)",
    "prior": "the posterior under prior beta = 3 presented as the recorded prior",
    "counts": "the recorded counts of the first category two higher than those fitted",
    "autocorrelated": (
        "draws with the right marginal law but AR(1) dependence (rho = 0.99 per chain) "
        "presented as independent"
    ),
    "truncated": "draws from the posterior with the top 5 % of each item's amb removed",
}


def wrong_posterior(result: Any, fault: str, *, random_seed: Any = None) -> Any:
    """A copy of a fixed-prior fit whose posterior is wrong in one stated way.

    The draws are made anew from the exact conjugate posterior (so the fault is the only
    error); the attributes still claim what the original result claims. Use it to see what
    a failing check looks like, and to measure a check's power
    (``benchmarks/calibration_validation.py``).

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` with a fixed Dirichlet prior (e.g.
        ``dirichlet_categorical``) that holds ``q``.
    fault : {"shift", "prior", "counts", "autocorrelated", "truncated"}
        The fault (:data:`FAULTS` describes each).
    random_seed : int, numpy.random.Generator or None
        Seed of the new draws.

    Returns
    -------
    xarray.DataTree
        Same groups, dims and attributes as ``result``; wrong posterior draws (or, for
        ``"counts"``, wrong recorded counts).

    Raises
    ------
    ValueError
        For an unknown fault, a negative ``random_seed``, or a result without a fixed prior
        or without ``q``.
    TypeError
        If ``result`` is not a DataTree, or ``random_seed`` is not an int, a Generator or
        None.

    Notes
    -----
    ``"autocorrelated"`` uses a Gaussian copula: per chain and category an AR(1) series
    ``z_t = rho z_{t-1} + sqrt(1 - rho^2) e_t`` is mapped to ``Gamma(alpha_k)`` by its
    quantile function, and the gammas are normalized, so every draw is marginally
    ``Dirichlet(alpha)`` but neighbouring draws are nearly equal. ``"truncated"`` draws
    from the posterior conditional on ``amb`` at most its 95 % quantile (by rejection,
    the quantile from 20,000 exact draws per item).

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> from ambppl.validation import check_moments, wrong_posterior
    >>> counts = ambppl.read_annotations(np.array([[5, 5, 5], [5, 0, 0], [3, 1, 1]]),
    ...                                  cant_solve="2")
    >>> result = ambppl.fit(counts, draws=1000, chains=2, random_seed=1)
    >>> bool(check_moments(wrong_posterior(result, "prior", random_seed=2)))
    False
    """
    fault = check_option(fault, tuple(FAULTS), "fault")
    random_seed = check_random_seed(random_seed)
    fitted = read_fit(result)
    posterior = result["posterior"].to_dataset()
    if fitted.prior is None or "q" not in posterior:
        raise ValueError(
            "result must have a fixed Dirichlet prior and hold the draws of 'q' (as "
            "ambppl.fit(..., model='dirichlet_categorical') returns), but it has "
            f"prior {None if fitted.prior is None else fitted.prior.tolist()} and posterior "
            f"variables {sorted(posterior.data_vars)}"
        )
    rng = np.random.default_rng(random_seed)
    q = posterior["q"].transpose("chain", "draw", "item", "category")
    chains, draws = q.sizes["chain"], q.sizes["draw"]
    alpha = fitted.values + fitted.prior
    if fault == "prior":
        alpha = fitted.values + np.full_like(fitted.prior, 3.0)
    if fault == "autocorrelated":
        new_q = _ar1_dirichlet(alpha, chains, draws, 0.99, rng)
    elif fault == "truncated":
        new_q = _truncated_dirichlet(alpha, chains * draws, fitted.cs, rng).reshape(
            chains, draws, *alpha.shape
        )
    else:
        new_q = _dirichlet(alpha, chains * draws, rng).reshape(chains, draws, *alpha.shape)
    out = result.copy(deep=True)
    new_post = out["posterior"].to_dataset()
    new_post["q"] = q.copy(data=new_q).transpose(*posterior["q"].dims)
    for measure, name in VARIABLES.items():
        if name in new_post:
            value = _measure(measure, new_q, fitted.cs)
            new_post[name] = posterior[name].copy(data=value).transpose(*posterior[name].dims)
    if fault == "shift" and "amb" in new_post:
        new_post["amb"] = new_post["amb"] + 0.02
    new_post.attrs = dict(posterior.attrs)
    out["posterior"] = new_post
    if fault == "counts":
        observed = out["observed_data"].to_dataset()
        counts = observed["counts"].copy()
        counts[..., 0] = counts[..., 0] + 2
        observed["counts"] = counts
        out["observed_data"] = observed
    return out


def _measure(measure: str, q: np.ndarray, cs: int | None) -> np.ndarray:

    return np.asarray(evaluate(measure, q, cant_solve=cs))


def _dirichlet(alpha: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n exact draws of Dirichlet(alpha_i) for every row i: shape (n, item, K)."""
    g = rng.standard_gamma(np.broadcast_to(alpha, (n, *alpha.shape)))
    return g / g.sum(axis=-1, keepdims=True)


def _ar1_dirichlet(
    alpha: np.ndarray, chains: int, draws: int, rho: float, rng: np.random.Generator
) -> np.ndarray:
    """Dirichlet(alpha) marginals with AR(1) dependence along draws (Gaussian copula)."""
    from scipy.special import ndtr
    from scipy.stats import gamma

    z = np.empty((chains, draws, *alpha.shape))
    z[:, 0] = rng.standard_normal((chains, *alpha.shape))
    scale = np.sqrt(1.0 - rho**2)
    for t in range(1, draws):
        z[:, t] = rho * z[:, t - 1] + scale * rng.standard_normal((chains, *alpha.shape))
    g = gamma.ppf(ndtr(z), alpha)
    return g / g.sum(axis=-1, keepdims=True)


def _truncated_dirichlet(
    alpha: np.ndarray, n: int, cs: int | None, rng: np.random.Generator
) -> np.ndarray:
    """n draws per item of Dirichlet(alpha_i) given amb <= its 95 % quantile."""
    cut = np.quantile(_measure("amb", _dirichlet(alpha, 20_000, rng), cs), 0.95, axis=0)
    out = np.empty((n, *alpha.shape))
    filled = np.zeros(alpha.shape[0], dtype=int)
    while (filled < n).any():
        batch = _dirichlet(alpha, n, rng)
        keep = _measure("amb", batch, cs) <= cut
        for i in np.flatnonzero(filled < n):
            take = batch[keep[:, i], i][: n - filled[i]]
            out[filled[i] : filled[i] + len(take), i] = take
            filled[i] += len(take)
    return out


__all__ = ["FAULTS", "wrong_posterior"]
