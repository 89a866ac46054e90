"""The exact posterior distribution of an ambiguity measure, and its sampling fallback.

For two proper categories plus "can't solve" (``C = 2``, ``q = (q_1, q_2, q_cs)``) the
distribution of ``amb(q)``, ``amb_modified(q)`` and ``amb_old(q)`` under
``q ~ Dirichlet(alpha)`` is a one-dimensional integral (paper Lemma ``analytic_density``,
corrected by :errata:`E1`); :func:`ambiguity_posterior` evaluates it to near machine precision.
For ``C > 2`` no closed form exists and the same object is served by exact conjugate Monte
Carlo (Dirichlet draws pushed through the measure); ``.method`` says which route was taken.

Design choice: the frozen distribution is a small class of its own rather than a
``scipy.stats.rv_continuous`` or ``scipy.stats.ContinuousDistribution`` subclass, because

* its parameter is a *batch of vectors* ``alpha (..., 3)``, not three scalar shapes;
* ``rvs`` samples exactly from two Beta variables instead of inverting the CDF;
* bad input must raise a helpful error (scipy returns NaN);
* the sampling route must answer the same methods.

The numerical work is still scipy's where scipy is accurate: ``scipy.special.betainc`` for
the Beta tails, ``scipy.optimize.elementwise.find_root`` (Chandrupatla) for quantiles and the
HDI; log Beta constants use a Stirling form where ``scipy.special.betaln`` loses digits.
The exact route's integrals, limits, quantiles and HDI live in ``ambppl.maths._exact_route``.
The quadrature is a hand-rolled tanh-sinh rule (``ambppl.maths._quadrature``) because it hands the
integrand the exact distances to both ends of the interval and runs all (point, alpha) pairs
as one 2-D numpy array; ``benchmarks/bench_exact.py`` compares it with
``scipy.integrate.tanhsinh`` and ``scipy.integrate.quad``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ambppl.internal.checks import (
    MAX_PRIOR_TOTAL,
    as_float_array,
    batch_labels,
    check_alpha,
    check_cant_solve,
    check_option,
    check_positive_int,
    check_random_seed,
    points_aligned,
    resolve_cant_solve,
)
from ambppl.internal.docstrings import filled
from ambppl.internal.limits import as_count, check_memory, check_time, option
from ambppl.maths._exact_route import (
    _exact_cdf_sf,
    _exact_hdi,
    _exact_logpdf,
    _exact_ppf,
    _mean,
    _round_outwards,
    _var,
    exact_refusal,
)
from ambppl.maths.measures import amb, amb_modified, amb_old

__all__ = ["EXACT_MEASURES", "AmbiguityPosterior", "ambiguity_posterior"]

#: Measures whose posterior this module describes.
EXACT_MEASURES: tuple[str, ...] = ("amb", "modified", "old")
#: Routes: "auto" picks "exact" for C = 2 and "sampling" otherwise.
METHODS: tuple[str, ...] = ("auto", "exact", "sampling")
#: Default number of Dirichlet draws of the sampling route, and its histogram bins.
N_DRAWS = 100_000
N_BINS = 256


def _sampling_doubles(n_distinct: int, n_cat: int) -> int:
    """Peak memory of the sampling route per draw, in doubles: the sorted draws of every
    distinct alpha row, plus (one row at a time) the Dirichlet draws and the measure's
    temporaries, about three values per category (tracemalloc: 15.2 doubles per draw for
    K = 4 and one row, 33.0 for K = 10 and three rows)."""
    return n_distinct + 3 * n_cat + 3


#: Seconds per Dirichlet draw and category on the sampling route (a gamma variate, the
#: measure and the sort; 100-150 ns measured on one core of the development machine).
SECONDS_PER_VARIATE = 1e-7


def _check_sampling_size(n_distinct: int, n_draws: int, n_cat: int) -> None:
    """Refuse up front ``n_draws`` whose draws cannot be held or take too long."""

    name = option("n_draws", "--n-draws")
    what = (
        f"{name}={as_count(n_draws)} for {n_distinct} distinct alpha row(s) of {n_cat} "
        "categories (sampling route)"
    )
    fix = (
        f"pass a smaller {name} (the Monte Carlo error of cdf is at most 0.5 / "
        "sqrt(n_draws): 10**6 draws give 5e-4)"
    )
    check_memory(8.0 * n_draws * _sampling_doubles(n_distinct, n_cat), what, fix)
    check_time(float(n_draws) * n_distinct * n_cat * SECONDS_PER_VARIATE, what, fix)


# ------------------------------------------------------------------------------ the object


#: The Returns section of :data:`POINT_SECTIONS` and :data:`LEVEL_SECTIONS`.
_RETURNS = (
    "        Returns\n"
    "        -------\n"
    "        numpy.ndarray or numpy.float64\n"
    "            Shape ``numpy.broadcast_shapes(x.shape, batch_shape)`` (a labelled ``x``: its\n"
    "            other dimensions, then ``batch_shape``); a scalar for a scalar batch and ``x``.\n"
    "\n"
)

#: The numpydoc sections of a distribution method that takes points ``x`` (``{points}`` in
#: its docstring), shared by :class:`AmbiguityPosterior` and
#: :class:`ambppl.maths.approx.ApproximateDistribution`.
POINT_SECTIONS = (
    """Parameters
        ----------
        x : float, array_like, pandas.Series or xarray.DataArray
            Points, by position: broadcast against ``batch_shape`` by numpy's rules (a
            scalar for every distribution, one point per distribution, or a grid such as
            ``x[:, None]`` against a batch of items). Or labelled by item, read by its
            labels: a Series indexed by item, or a DataArray with a coordinate along a
            batch dimension, is put in the order of the items where the distribution was
            built from a DataArray ``alpha`` labelled along that dimension (a labelled
            DataArray's other dimensions come first, as a grid of points).

"""
    + _RETURNS
    + """        Raises
        ------
        ValueError
            If ``x`` does not broadcast against ``batch_shape``; if it is labelled where
            the batch has no labels to align it with (``alpha`` a bare array, or a
            DataArray without a coordinate along its items: pass ``x.values`` in the
            items' order), its labels differ from the items' or occur twice, or it is a
            pandas DataFrame.
        TypeError
            If ``x`` is not numeric."""
)

#: The sections of a method that takes probability levels ``q`` (``{levels}``).
LEVEL_SECTIONS = (
    """Parameters
        ----------
        q : float, array_like, pandas.Series or xarray.DataArray
            Probabilities in [0, 1], by position (broadcast against ``batch_shape`` by
            numpy's rules) or labelled by item, read by its labels, as ``x`` of :meth:`cdf`.

"""
    + _RETURNS
    + """        Raises
        ------
        ValueError
            If ``q`` is NaN or outside [0, 1], does not broadcast against ``batch_shape``,
            or is labelled where the batch has no labels to align it with (pass
            ``q.values`` in the items' order), with other labels than the items', or is a
            pandas DataFrame.
        TypeError
            If ``q`` is not numeric."""
)


#: A decorator: ``{points}`` and ``{levels}`` in a method's docstring replaced by
#: :data:`POINT_SECTIONS` and :data:`LEVEL_SECTIONS` (one text for every method of both
#: distribution classes).
shared_sections = filled(points=POINT_SECTIONS, levels=LEVEL_SECTIONS)


class AmbiguityPosterior:
    """Frozen posterior distribution of an ambiguity measure (see :func:`ambiguity_posterior`).

    Build it with :func:`ambiguity_posterior`, which checks the arguments and picks the
    route; the constructor takes them already checked.

    Parameters
    ----------
    alpha : numpy.ndarray
        Checked Dirichlet parameters (float), shape ``batch_shape + (K,)``, "can't solve"
        last.
    measure : {"amb", "modified", "old"}
        Which measure.
    method : {"exact", "sampling"}
        The route: "exact" needs ``K = 3``.
    n_draws : int, optional
        Dirichlet draws per distinct alpha row; required for "sampling", ignored for "exact".
    random_seed : int, numpy.random.Generator or None, optional
        Seed of the sampling route's draws (unused by "exact").
    n_bins : int, default 256
        Number of equal histogram bins on [0, 1] behind :meth:`pdf` on the sampling route.

    Attributes
    ----------
    alpha : numpy.ndarray
        Dirichlet parameters, shape ``batch_shape + (K,)``, "can't solve" last.
    measure : str
        "amb", "modified" or "old".
    method : str
        "exact" (C = 2, one-dimensional integrals) or "sampling" (Monte Carlo).
    batch_shape : tuple
        Shape of the batch of distributions (``alpha.shape[:-1]``).
    n_draws : int or None
        Number of Dirichlet draws per distribution ("sampling" only, else None).
    mcse : numpy.ndarray
        Monte Carlo standard error of :meth:`mean`, shape ``batch_shape`` (zeros for
        "exact").

    Where :func:`ambiguity_posterior` got ``alpha`` as an :class:`xarray.DataArray`, it keeps
    the names of its batch dimensions and their labels (:func:`batch_labels`) in the object,
    so that a point labelled by item (:meth:`cdf`) is read by its labels; the results stay
    numpy arrays in ``alpha``'s order.
    """

    def __init__(
        self,
        alpha: np.ndarray,
        measure: str,
        method: str,
        n_draws: int | None = None,
        random_seed: Any = None,
        n_bins: int = N_BINS,
    ) -> None:
        self.alpha = alpha
        # the batch's dimension names and labels (batch_labels), set by ambiguity_posterior
        # for a DataArray alpha; None and {}: a bare array, whose labelled points are refused
        self._batch_dims: tuple[Any, ...] | None = None
        self._batch_labels: dict[Any, list] = {}
        self.measure = measure
        self.method = method
        self.batch_shape = alpha.shape[:-1]
        self.n_draws = n_draws if method == "sampling" else None
        # Items with equal counts have equal alphas: every distinct alpha row is computed once
        # (self._flat) and broadcast back through self._inv (batch position -> distinct row).
        self._flat, self._inv = _distinct_rows(alpha.reshape(-1, alpha.shape[-1]))
        if method == "sampling":
            _check_sampling_size(self._flat.shape[0], int(n_draws), alpha.shape[-1])
            self._draws = self._sample(n_draws, random_seed)  # sorted, (n_distinct, n_draws)
            self._n_bins = n_bins
            sd = self._draws.std(axis=1, ddof=1)
            self.mcse = (sd / math.sqrt(n_draws))[self._inv].reshape(self.batch_shape)
        else:
            self.mcse = np.zeros(self.batch_shape)

    def __repr__(self) -> str:
        a = self.alpha if self.alpha.ndim == 1 else f"array of shape {self.alpha.shape}"
        return f"AmbiguityPosterior(alpha={a}, measure={self.measure!r}, method={self.method!r})"

    # -- helpers ---------------------------------------------------------------------------

    def _sample(self, n: int, random_seed: Any) -> np.ndarray:

        fn = {"amb": amb, "modified": amb_modified, "old": amb_old}[self.measure]
        rng = np.random.default_rng(random_seed)
        out = np.empty((self._flat.shape[0], n))
        for i, row in enumerate(self._flat):
            out[i] = fn(rng.dirichlet(row, size=n))
        out.sort(axis=1)
        return out

    def _broadcast(self, x: Any, name: str) -> tuple[np.ndarray, np.ndarray, tuple]:
        # a labelled x is read by its labels (or refused), not by position
        arr = as_float_array(points_aligned(x, self._batch_dims, self._batch_labels, name), name)
        try:
            xb, ib = np.broadcast_arrays(arr, np.arange(self._inv.size).reshape(self.batch_shape))
        except ValueError as err:
            raise ValueError(
                f"{name} must broadcast against the batch shape {self.batch_shape}, but got "
                f"shape {arr.shape}; add trailing axes of length 1 (e.g. x[:, None])"
            ) from err
        return xb.reshape(-1), self._inv[ib.reshape(-1)], xb.shape

    def _pairwise(self, fn: Any, xf: np.ndarray, ib: np.ndarray, **kwargs: Any) -> Any:
        """``fn(measure, x, alpha_rows, **kwargs)`` once per distinct (x, distribution) pair.

        A point asked of many items with equal alphas (e.g. ``sf(0.4)`` of every item) costs
        one quadrature per distinct alpha, not one per item.
        """
        if xf.size > 1:
            keys = np.column_stack([xf, ib.astype(np.float64)])
            pairs, inverse = np.unique(keys, axis=0, return_inverse=True)
            if len(pairs) < len(keys):
                rows = self._flat[pairs[:, 1].astype(np.intp)]
                out = fn(self.measure, pairs[:, 0], rows, **kwargs)
                inverse = inverse.reshape(-1)
                if isinstance(out, tuple):
                    return tuple(np.asarray(o)[inverse] for o in out)
                return np.asarray(out)[inverse]
        return fn(self.measure, xf, self._flat[ib], **kwargs)

    @staticmethod
    def _out(v: np.ndarray, shape: tuple) -> Any:
        v = v.reshape(shape)
        return v[()] if v.ndim == 0 else v

    def _check_p(self, p: Any, name: str) -> tuple[np.ndarray, np.ndarray, tuple]:
        pf, ib, shape = self._broadcast(p, name)
        if np.any(np.isnan(pf)) or np.any((pf < 0) | (pf > 1)):
            bad = float(pf[np.isnan(pf) | (pf < 0) | (pf > 1)][0])
            raise ValueError(f"{name} must be probabilities in [0, 1], but got {bad!r}")
        return pf, ib, shape

    # -- density and distribution function -------------------------------------------------

    @shared_sections
    def logpdf(self, x: Any) -> Any:
        """Log density at ``x`` (``-inf`` outside [0, 1]).

        {points}
        """
        xf, ib, shape = self._broadcast(x, "x")
        if self.method == "exact":
            return self._out(self._pairwise(_exact_logpdf, xf, ib), shape)
        with np.errstate(divide="ignore"):
            return self._out(np.log(self._hist_pdf(xf, ib)), shape)

    @shared_sections
    def pdf(self, x: Any) -> Any:
        """Density at ``x`` (0 outside [0, 1]; the limit at 0 and 1, possibly ``inf``).

        {points}
        """
        return np.exp(self.logpdf(x))

    def _hist_pdf(self, xf: np.ndarray, ib: np.ndarray) -> np.ndarray:
        out = np.zeros(xf.shape)
        edges = np.linspace(0.0, 1.0, self._n_bins + 1)
        for i in np.unique(ib):
            sel = ib == i
            dens, _ = np.histogram(self._draws[i], bins=edges, density=True)
            k = np.clip(np.searchsorted(edges, xf[sel], side="right") - 1, 0, self._n_bins - 1)
            ok = (xf[sel] >= 0) & (xf[sel] <= 1)
            out[sel] = np.where(ok, dens[k], 0.0)
        out[np.isnan(xf)] = np.nan
        return out

    def _cdf_sf(self, x: Any) -> tuple[np.ndarray, np.ndarray, tuple]:
        xf, ib, shape = self._broadcast(x, "x")
        if self.method == "exact":
            cdf, sf = self._pairwise(_exact_cdf_sf, xf, ib)
            return cdf, sf, shape
        cdf = np.empty(xf.shape)
        for i in np.unique(ib):
            sel = ib == i
            cdf[sel] = np.searchsorted(self._draws[i], xf[sel], side="right") / self.n_draws
        cdf[np.isnan(xf)] = np.nan
        return cdf, 1.0 - cdf, shape

    @shared_sections
    def cdf(self, x: Any) -> Any:
        """``P(A <= x)``, ``x`` broadcast against the batch shape.

        {points}

        Examples
        --------
        >>> import pandas as pd, xarray as xr, ambppl
        >>> alpha = xr.DataArray([[5.0, 4.0, 1.0], [2.0, 2.0, 6.0]], dims=("item", "category"),
        ...                      coords={"item": ["a", "b"]})
        >>> post = ambppl.ambiguity_posterior(alpha)
        >>> bool((post.cdf(pd.Series({"b": 0.7, "a": 0.3})) == post.cdf([0.3, 0.7])).all())
        True
        """
        cdf, _, shape = self._cdf_sf(x)
        return self._out(cdf, shape)

    @shared_sections
    def sf(self, x: Any) -> Any:
        """``P(A > x)``, computed directly in the upper tail (not as ``1 - cdf``).

        {points}
        """
        _, sf, shape = self._cdf_sf(x)
        return self._out(sf, shape)

    def _sampled_quantile(self, pf: np.ndarray, ib: np.ndarray) -> np.ndarray:
        out = np.empty(pf.shape)
        for i in np.unique(ib):
            sel = ib == i
            out[sel] = np.quantile(self._draws[i], pf[sel])
        return out

    @shared_sections
    def ppf(self, q: Any) -> Any:
        """Quantile function: the ``x`` with ``cdf(x) = q``.

        {levels}
        """
        pf, ib, shape = self._check_p(q, "q")
        if self.method == "exact":
            return self._out(self._pairwise(_exact_ppf, pf, ib, upper=False), shape)
        return self._out(self._sampled_quantile(pf, ib), shape)

    @shared_sections
    def isf(self, q: Any) -> Any:
        """Inverse survival function: the ``x`` with ``sf(x) = q``.

        {levels}
        """
        pf, ib, shape = self._check_p(q, "q")
        if self.method == "exact":
            return self._out(self._pairwise(_exact_ppf, pf, ib, upper=True), shape)
        return self._out(self._sampled_quantile(1.0 - pf, ib), shape)

    # -- summaries -------------------------------------------------------------------------

    def mean(self) -> Any:
        """Posterior mean (closed form for "exact", the draws' mean for "sampling")."""
        if self.method == "sampling":
            return self._out(self._draws.mean(axis=1)[self._inv], self.batch_shape)
        return self._out(_mean(self._flat, self.measure)[self._inv], self.batch_shape)

    def var(self) -> Any:
        """Posterior variance (closed form for "exact", the draws' for "sampling")."""
        if self.method == "sampling":
            return self._out(self._draws.var(axis=1, ddof=1)[self._inv], self.batch_shape)
        return self._out(_var(self._flat, self.measure)[self._inv], self.batch_shape)

    def std(self) -> Any:
        """Posterior standard deviation."""
        return np.sqrt(self.var())

    def median(self) -> Any:
        """Posterior median."""
        return self.ppf(0.5)

    def interval(self, confidence: float = 0.94) -> tuple[Any, Any]:
        """Equal-tailed interval holding ``confidence`` of the mass: (lower, upper).

        The ends are the quantiles ``ppf((1 - confidence) / 2)`` and ``isf(...)``; on the
        exact route, where float rounding of those quantiles leaves mass outside (a law
        with much of its mass within a float spacing, e.g. in the last float below 1), the
        ends move out by whole floats until ``cdf(upper) - cdf(lower)`` holds
        ``confidence`` (to 1e-12).
        """
        conf = _check_mass(confidence, "confidence")
        tail = (1.0 - conf) / 2.0
        if self.method == "sampling":
            lo = self.ppf(np.full(self.batch_shape, tail))
            hi = self.isf(np.full(self.batch_shape, tail))
            return lo, hi
        q = np.full(self._flat.shape[0], tail)
        lo = _exact_ppf(self.measure, q, self._flat, upper=False)
        hi = _exact_ppf(self.measure, q, self._flat, upper=True)
        lo, hi = _round_outwards(self.measure, self._flat, conf, lo, hi)
        lo, hi = np.asarray(lo)[self._inv], np.asarray(hi)[self._inv]
        return self._out(lo, self.batch_shape), self._out(hi, self.batch_shape)

    def hdi(self, prob: float = 0.94) -> tuple[Any, Any]:
        """Shortest interval holding ``prob`` of the mass: (lower, upper).

        For a unimodal density this is the highest-density interval. Where the density
        diverges at an end of [0, 1] and keeps rising towards it, the interval ends there.
        """
        prob = _check_mass(prob, "prob")
        if self.method == "sampling":
            n = self.n_draws
            k = max(1, min(n, math.ceil(prob * n)))
            width = self._draws[:, k - 1 :] - self._draws[:, : n - k + 1]
            j = np.argmin(width, axis=1)
            rows = np.arange(self._draws.shape[0])
            lo, hi = self._draws[rows, j], self._draws[rows, j + k - 1]
        else:
            lo, hi = _exact_hdi(self.measure, self._flat, prob)
        lo, hi = np.asarray(lo)[self._inv], np.asarray(hi)[self._inv]
        return self._out(lo, self.batch_shape), self._out(hi, self.batch_shape)

    def rvs(self, size: int | tuple = (), random_state: Any = None) -> np.ndarray:
        """Exact draws of the measure, shape ``size + batch_shape``.

        C = 2 draws two independent Beta variables (``V = 1 - q_cs`` and ``pi``); otherwise
        Dirichlet vectors pushed through the measure. ``size`` is a non-negative int or a
        tuple of them; ``random_state`` a non-negative int, a ``numpy.random.Generator`` or
        None (as ``random_seed`` of :func:`ambiguity_posterior`); anything else raises
        ``TypeError`` or ``ValueError``.
        """
        size = _check_size(size)
        rng = np.random.default_rng(check_random_seed(random_state, "random_state"))
        shape = size + self.batch_shape
        if self.alpha.shape[-1] == 3:
            a1, a2, c = (np.broadcast_to(self.alpha[..., i], shape) for i in range(3))
            v = rng.beta(a1 + a2, c)
            d = np.abs(2.0 * rng.beta(a1, a2) - 1.0)
            h = {"amb": 0.5 * (1.0 + d * d), "modified": d * d, "old": d}[self.measure]
            return 1.0 - v * h

        fn = {"amb": amb, "modified": amb_modified, "old": amb_old}[self.measure]
        n = math.prod(size)
        rows = self.alpha.reshape(-1, self.alpha.shape[-1])  # every item: independent draws
        out = np.empty((n, rows.shape[0]))
        for i, row in enumerate(rows):
            out[:, i] = fn(rng.dirichlet(row, size=n))
        return out.reshape(shape)


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows in order of first appearance, and each row's position among them."""
    if rows.shape[0] < 2:
        return rows, np.arange(rows.shape[0])
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)  # np.unique sorts; keep the order of first appearance
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    return rows[first[order]], position[inverse.reshape(-1)]


def _check_size(size: Any) -> tuple[int, ...]:
    """``size`` of :meth:`AmbiguityPosterior.rvs` as a tuple of non-negative ints."""
    dims = (size,) if isinstance(size, numbers.Integral) else size
    if (
        isinstance(size, bool)
        or not isinstance(dims, tuple | list)
        or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) for d in dims)
    ):
        raise TypeError(
            f"size must be a non-negative int or a tuple of them (e.g. 1000 or (10, 5)), "
            f"but got {size!r}"
        )
    if any(d < 0 for d in dims):
        raise ValueError(f"size must be non-negative (a number of draws), but got {size!r}")
    return tuple(int(d) for d in dims)


def _check_mass(prob: Any, name: str) -> float:
    if isinstance(prob, bool) or not isinstance(prob, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number in (0, 1], but got {prob!r}")
    if not 0.0 < float(prob) <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], but got {prob!r}")
    return float(prob)


# ------------------------------------------------------------------------------ constructor


def ambiguity_posterior(
    alpha: Any,
    measure: str = "amb",
    *,
    cant_solve: int | str | None = "auto",
    method: str = "auto",
    n_draws: int = N_DRAWS,
    random_seed: Any = None,
) -> AmbiguityPosterior:
    r"""The distribution of an ambiguity measure of ``q ~ Dirichlet(alpha)``.

    With a uniform ``Dirichlet(beta)`` prior and counts ``n``, the posterior of ``q`` is
    ``Dirichlet(n + beta)``: pass ``alpha = counts + beta`` to get the posterior of the
    measure, or ``alpha = beta`` for its prior.

    Parameters
    ----------
    alpha : array_like or xarray.DataArray
        Dirichlet concentrations, categories on the last axis (any batch shape before it),
        finite and strictly positive. A DataArray's batch dimensions and their labels
        (``item``) are kept in the object: points and levels labelled by item (a pandas
        Series, a DataArray with an item coordinate) are read by these labels; with a bare
        array they are refused (pass ``x.values`` in the items' order). The results are
        numpy arrays in ``alpha``'s order.
    measure : {"amb", "modified", "old"}, default "amb"
        :func:`ambppl.amb`, :func:`ambppl.amb_modified` or :func:`ambppl.amb_old`.
    cant_solve : int or "auto", default "auto"
        Position of the "can't solve" category on the last axis (moved to the end).
        ``"auto"``: for a DataArray with ``attrs["cant_solve"]`` (labelled counts, and
        ``counts + prior`` computed from them) the position of that label along its last
        dimension; for bare arrays the last category (``-1``). ``None``, or
        ``attrs["cant_solve"]`` None, is refused (the measure's law needs a can't-solve
        entry); an explicit value contradicting ``attrs["cant_solve"]`` raises.
    method : {"auto", "exact", "sampling"}, default "auto"
        "exact" needs two proper categories plus "can't solve" (3 entries) and alphas that
        double precision resolves (entries at least 1e-100 and ``|log B(a1, a2)| +
        |log B(a1 + a2, a_cs)|`` at most 2.5e7: about ``alpha_0 <= 1e7``); "auto" takes it
        there and "sampling" otherwise.
    n_draws : int, default 100000
        Dirichlet draws per distribution for the sampling route, at least 2 (``var`` and
        ``mcse`` use the draws' sample variance).
    random_seed : int, numpy.random.Generator or None
        Seed of the sampling route (a non-negative int); checked on either route.

    Returns
    -------
    AmbiguityPosterior
        Frozen distribution with ``pdf``, ``logpdf``, ``cdf``, ``sf``, ``ppf``, ``isf``,
        ``mean``, ``var``, ``std``, ``median``, ``interval``, ``hdi`` and ``rvs``; its
        ``method`` attribute says "exact" or "sampling" and ``mcse`` gives the Monte Carlo
        standard error of the mean (0 for "exact").

    Raises
    ------
    ValueError
        If ``measure`` or ``method`` is unknown, ``alpha`` is not positive and finite or
        sums to more than 1e300, ``cant_solve`` is out of range or None (given, or from
        ``alpha.attrs["cant_solve"]``) or contradicts that attribute, there are fewer
        than 2 proper categories, or ``method="exact"`` is asked for other than 3 categories
        or for an alpha it cannot resolve (see ``method``), ``random_seed`` is a
        negative int, or the sampling route gets ``n_draws`` below 2.
    TypeError
        If ``alpha`` is not numeric, ``random_seed`` is not an int, a
        ``numpy.random.Generator`` or None, or the sampling route gets an ``n_draws`` that
        is not an int.

    Notes
    -----
    Exact route (C = 2): with ``V = 1 - q_cs ~ Beta(a_1 + a_2, a_cs)`` independent of
    ``pi = q_1 / V ~ Beta(a_1, a_2)`` and ``D = |2 pi - 1|``, each measure is
    ``A = 1 - V H(D)`` with ``H = (1 + D^2)/2`` (amb), ``D^2`` (modified) or ``D`` (old;
    :errata:`E7`). The density is paper eq. ``amb_posterior_analytic`` (Lemma
    ``analytic_density``) with :errata:`E1`'s lower limit ``max(0, 2a - 1)``; the CDF is the
    lemma's proof, an integral of regularized incomplete beta functions, so quantiles and
    HDIs are exact up to root finding. Both are computed by tanh-sinh quadrature after a
    change of variables that removes the ``1/sqrt`` singularities (:errata:`E6`), with relative
    pdf error below 1e-10 and absolute CDF error below 1e-12 against 50-digit mpmath for
    alpha entries in [0.2, 1e4] (``tests/maths/test_exact.py``). Beyond: the first and last 1e-30
    of every integral are added in closed form (a Beta factor with a parameter of 1e-3 has
    half its mass below the smallest double), below ``a = 1e-60`` the density and CDF are
    their two-term expansion at 0, and the CDF's absolute error is 1e-12 plus 4e-17 times
    the size of the log-densities' terms (1.4e-10 at alpha = (1e6, 1e6, 1e6)); quantiles
    are solved for ``logit(x)`` to 1e-14 of ``x`` and ``1 - x``, and the ends of ``hdi``
    and ``interval`` move out by whole floats until ``cdf(upper) - cdf(lower)`` holds the
    mass (``tests/maths/test_exact_properties.py``: entries in [1e-3, 1e6];
    ``tests/maths/test_maths_audit_numerics.py``: mass within the last float below 1). At
    the ends of [0, 1] ``pdf`` returns the limits (:errata:`E4`: ``inf`` at 1 for
    "modified"; for "amb" 0 at 1 iff ``a_1 + a_2 > 1``, and ``inf`` at 1/2 when
    ``a_cs <= 1/2``).

    Sampling route (C > 2): ``n_draws`` exact Dirichlet draws per distribution; ``cdf``,
    ``ppf``, ``interval``, ``mean``, ``var`` and ``hdi`` (shortest interval of the sorted
    draws, computed with numpy to keep ``ambppl.maths.exact`` free of ArviZ) come from the draws,
    ``pdf`` is a histogram with 256 equal bins on [0, 1] (paper section 3.5). The Monte
    Carlo error of the mean is ``mcse``; that of ``cdf`` is at most ``0.5 / sqrt(n_draws)``.

    Items with equal counts have equal alphas: each distinct alpha row is computed once
    (quadratures, root finding, Dirichlet draws) and the results are broadcast back, so the
    cost follows the number of distinct rows (1593 items with 73 distinct alphas: about 8x
    faster on the exact route, 28x on the sampling route). On the sampling route equal alphas
    therefore share their draws; :meth:`AmbiguityPosterior.rvs` still draws every item on its
    own.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       section 3.5 and appendix, Lemma ``analytic_density``.

    Examples
    --------
    >>> import ambppl
    >>> post = ambppl.ambiguity_posterior([6.0, 6.0, 6.0])  # counts (5, 5, 5), beta = 1
    >>> post.method
    'exact'
    >>> round(float(post.cdf(0.5)), 6), round(float(post.mean()), 6)
    (0.023691, 0.641026)
    >>> [round(float(v), 4) for v in post.hdi(0.9)]
    [0.5363, 0.7533]
    >>> ambppl.ambiguity_posterior([0.5, 0.5, 0.5], "modified").cdf(0.75).round(12)
    np.float64(0.5)
    """
    measure = check_option(measure, EXACT_MEASURES, "measure")
    method = check_option(method, METHODS, "method")
    random_seed = check_random_seed(random_seed)
    arr = check_alpha(alpha)
    n_cat = arr.shape[-1]
    given, cant_solve = cant_solve, resolve_cant_solve(alpha, cant_solve, name="alpha")
    if cant_solve is None:
        got = "None" if given is None else "alpha.attrs['cant_solve'] None (no such category)"
        raise ValueError(
            f'cant_solve must be the position of the "can\'t solve" category, but got {got}; '
            "for tasks without one, draw q yourself (ambppl.fit) or add a category with a "
            "tiny concentration"
        )
    idx = check_cant_solve(cant_solve, n_cat)
    if n_cat < 3:
        raise ValueError(
            f"alpha must have at least 3 entries (2 proper categories and can't solve) on its "
            f"last axis, but got {n_cat}"
        )
    if idx != n_cat - 1:
        arr = np.concatenate([np.delete(arr, idx, axis=-1), arr[..., idx : idx + 1]], axis=-1)
    if method == "exact" and n_cat != 3:
        raise ValueError(
            "method='exact' needs alpha with exactly 3 entries (alpha_1, alpha_2, alpha_cs), "
            f"but got {n_cat}; use method='auto' or 'sampling' for more categories"
        )
    with np.errstate(over="ignore"):
        total = float(np.max(np.sum(arr, axis=-1))) if arr.size else 0.0
    if not total <= MAX_PRIOR_TOTAL:
        raise ValueError(
            f"alpha must sum to at most {MAX_PRIOR_TOTAL:g} over the categories (Dirichlet "
            f"draws and moments add the concentrations up, and float64 overflows at "
            f"1.8e308), but a row sums to {total:g}"
        )
    if method != "sampling" and n_cat == 3:
        reason = exact_refusal(np.asarray(arr, dtype=float))
        if reason is not None:
            if method == "exact":
                raise ValueError(
                    f"method='exact' cannot serve this alpha: {reason}; use "
                    "method='sampling' (or 'auto', which does)"
                )
            method = "sampling"
    if method == "auto":
        method = "exact" if n_cat == 3 else "sampling"
    if method == "sampling":
        name = option("n_draws", "--n-draws")
        check_positive_int(n_draws, name)
        if n_draws < 2:
            raise ValueError(
                f"{name} must be at least 2 on the sampling route (var() and mcse are the "
                f"draws' sample variance, which needs two draws), but got {n_draws}"
            )
    post = AmbiguityPosterior(np.array(arr, dtype=float), measure, method, n_draws, random_seed)
    post._batch_dims, post._batch_labels = batch_labels(alpha)  # labelled points: by these
    return post
