"""``fit``: posterior draws of the response distributions and their ambiguity measures.

Two ways to draw, one result layout (an :class:`xarray.DataTree` shaped like the one
``pymc.sample`` returns): ``method="exact"`` samples a conjugate posterior directly
(independent draws, no MCMC), ``method="nuts"`` samples the catalog's PyMC model.

This module imports only numpy at load time: ``ambppl/__init__.py`` imports :func:`fit`
eagerly, because a function named like its module is otherwise replaced by the module object
as soon as anything imports ``ambppl.fit``.
"""

from __future__ import annotations

import datetime
import importlib.util
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl._checks import (
    cant_solve_position,
    check_counts,
    check_option,
    check_positive_int,
    check_prior,
)

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["fit"]

#: Measure name (as in :data:`ambppl.MEASURES`) -> name of its posterior variable.
VARIABLES: dict[str, str] = {
    "amb": "amb",
    "modified": "amb_modified",
    "old": "amb_old",
    "entropy": "entropy",
}

#: Measures that need at least two proper categories besides "can't solve".
_NEED_TWO_PROPER = ("modified", "old")

#: ``method=`` values.
METHODS = ("exact", "nuts")

#: ``sampler=`` values for ``method="nuts"`` -> the module that must be importable.
NUTS_SAMPLERS = {"pymc": "pymc", "nutpie": "nutpie", "numpyro": "numpyro", "blackjax": "blackjax"}

#: Bytes of gamma draws generated at a time by the exact sampler (bounds temporary memory).
CHUNK_BYTES = 32 * 2**20

#: Keyword arguments of ``pymc.sample`` that ``fit`` sets itself.
_RESERVED_SAMPLE_KWARGS = (
    "draws",
    "chains",
    "random_seed",
    "progressbar",
    "var_names",
    "nuts_sampler",
    "model",
)


def fit(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    method: str | None = None,
    prior: Any = 1.0,
    draws: int = 1000,
    chains: int = 4,
    random_seed: Any = None,
    sampler: str | None = None,
    var_names: Sequence[str] | str | None = None,
    progressbar: bool = False,
    sample_kwargs: dict[str, Any] | None = None,
    **read_kwargs: Any,
) -> xr.DataTree:
    """Draw from the posterior of every item's response distribution and its ambiguity.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame, str, pathlib.Path or numpy.ndarray
        A count DataArray (dims ``("item", "category")``, ``attrs["cant_solve"]`` the
        can't-solve label or ``None``) or anything :func:`ambppl.read_annotations` accepts.
    model : str, default "dirichlet_categorical"
        Name of a model in the catalog (:func:`ambppl.catalog.list_models`).
    method : {"exact", "nuts"}, optional
        ``"exact"``: independent draws from the conjugate posterior (needs a model whose info
        record names an exact sampler); ``"nuts"``: MCMC on the PyMC model. Default: "exact"
        where the model allows it and neither ``sampler`` nor ``sample_kwargs`` is given,
        else "nuts".
    prior : float or array_like, default 1.0
        Symmetric Dirichlet concentration or one positive value per category.
    draws, chains : int, default 1000, 4
        Draws per chain and number of chains.
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives identical draws.
    sampler : {"pymc", "nutpie", "numpyro", "blackjax"}, optional
        NUTS implementation for ``method="nuts"`` (PyMC's ``nuts_sampler``); default PyMC's own.
        The others are optional extras (``pip install 'ambppl[nutpie]'``).
    var_names : str or sequence of str, optional
        Posterior variables to store (default all): ``"q"``, ``"amb"``, ``"amb_modified"``,
        ``"amb_old"``, ``"entropy"``. Storing costs draws x chains x items x 8 bytes per
        measure and K times that for ``q``.
    progressbar : bool, default False
        Show a progress bar.
    sample_kwargs : dict, optional
        Further arguments for ``pymc.sample`` with ``method="nuts"`` (e.g. ``tune``, ``cores``,
        ``target_accept``).
    **read_kwargs
        Passed to :func:`ambppl.read_annotations` (``item=``, ``rater=``, ``label=``,
        ``cant_solve=``, ...).

    Returns
    -------
    xarray.DataTree
        Group ``posterior`` (dims chain, draw, item[, category]), ``observed_data`` (``counts``
        with the count attributes) and, for NUTS, ``sample_stats``. The root and the posterior
        carry the attributes ``method``, ``model``, ``prior`` (list of floats, one per
        category), ``cant_solve`` (label or None) and ``sampler``.

    Raises
    ------
    ValueError
        For an unknown model, method or sampler, ``method="exact"`` with a model that has no
        exact sampler, a bad prior (not positive, wrong length), non-positive draws/chains,
        unknown var_names, or bad data.
    ImportError
        If the requested NUTS sampler is not installed.

    Notes
    -----
    Exact sampling: the Dirichlet prior is conjugate to the multinomial likelihood, so
    ``q_i | counts ~ Dirichlet(prior + counts_i)`` (paper section 3). Each draw normalizes
    independent gamma variates ``g_k ~ Gamma(prior_k + n_ik)``; draws whose gammas all
    underflow (concentrations far below 1) are redrawn in log space
    (``Gamma(a) = Gamma(a + 1) U^(1/a)``). Items are processed in chunks of about
    :data:`CHUNK_BYTES` so temporary memory stays bounded, and the measures are computed per
    chunk with the same kernels as :func:`ambppl.amb` & co (the probability checks run on the
    first chunk only).

    Every item gets its own independent draws. Sampling once per *distinct* count vector and
    broadcasting (much faster on real data, where count vectors repeat) would make items with
    equal counts share identical draws: right for each item's marginal posterior but wrong
    for any joint quantity (e.g. the posterior of a ranking or of a mean over items), so it is
    not used for stored draws.

    References
    ----------
    .. [1] "Bayesian inference of ambiguity in categorical annotations", section 3.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> counts = xr.DataArray(
    ...     np.array([[5, 0, 0], [2, 2, 1]]), dims=("item", "category"),
    ...     coords={"item": ["a", "b"], "category": ["yes", "no", "cs"]},
    ...     attrs={"cant_solve": "cs"})
    >>> result = ambppl.fit(counts, draws=500, chains=2, random_seed=1)
    >>> result.posterior["amb"].sizes["draw"], result.attrs["method"]
    (500, 'exact')
    >>> amb = result.posterior["amb"].mean(("chain", "draw"))
    >>> bool(amb.sel(item="b") > amb.sel(item="a"))
    True
    """
    from ambppl.catalog import get_model

    entry = get_model(model)
    exact_name = entry.info.get("exact")
    if method is None:  # a NUTS sampler or pymc.sample arguments imply NUTS
        method = "exact" if exact_name and sampler is None and not sample_kwargs else "nuts"
    check_option(method, METHODS, "method")
    draws = check_positive_int(draws, "draws")
    chains = check_positive_int(chains, "chains")
    counts = _as_counts(data, read_kwargs)
    alpha = check_prior(prior, counts.sizes["category"])
    cs_label = counts.attrs.get("cant_solve")
    cs = cant_solve_position(cs_label, counts["category"].values)
    n_proper = counts.sizes["category"] - (cs is not None)
    measures = [m for m in VARIABLES if n_proper >= 2 or m not in _NEED_TWO_PROPER]
    available = ["q", *(VARIABLES[m] for m in measures)]
    names = _check_var_names(var_names, available)

    if method == "exact":
        if not exact_name:
            raise ValueError(
                f"method='exact' needs a model with a conjugate exact sampler, but model "
                f"{entry.name!r} has none (its info record says exact: null); use method='nuts'"
            )
        if exact_name not in _EXACT_SAMPLERS:
            raise ValueError(
                f"model {entry.name!r} names the exact sampler {exact_name!r}, which this "
                f"version of ambppl does not have (known: {sorted(_EXACT_SAMPLERS)}); "
                "use method='nuts'"
            )
        if sampler is not None:
            raise ValueError(
                f"sampler chooses the NUTS implementation and applies to method='nuts' only, "
                f"but got sampler={sampler!r} with method='exact'; drop sampler="
            )
        if sample_kwargs:
            raise ValueError(
                "sample_kwargs are passed to pymc.sample and apply to method='nuts' only, "
                f"but got {sorted(sample_kwargs)} with method='exact'"
            )
        posterior = _EXACT_SAMPLERS[exact_name](
            counts, alpha, cs, measures, names, draws, chains, random_seed, progressbar
        )
        tree = _assemble(posterior, counts)
        sampler_name = "numpy.random.Generator.standard_gamma"
    else:
        sampler_name = _check_sampler(sampler)
        tree = _fit_nuts(
            entry,
            counts,
            alpha,
            names,
            available,
            draws,
            chains,
            random_seed,
            sampler_name,
            progressbar,
            sample_kwargs,
        )
    attrs = {
        "method": method,
        "model": entry.name,
        "prior": [float(a) for a in alpha],
        "cant_solve": None if cs_label is None else str(cs_label),
        "sampler": sampler_name,
    }
    tree.attrs.update(attrs)
    tree["posterior"].attrs.update(attrs)
    return tree


def _as_counts(data: Any, read_kwargs: dict[str, Any]) -> xr.DataArray:
    """The count DataArray of ``data`` (read with ``read_annotations`` unless it is one)."""
    import xarray as xr

    if isinstance(data, xr.DataArray) and not read_kwargs:
        if tuple(data.dims) != ("item", "category"):
            raise ValueError(
                "data as a DataArray must be counts with dims ('item', 'category'), but got "
                f"dims {tuple(data.dims)}"
            )
        counts = data
    else:
        from ambppl.data import read_annotations

        counts = read_annotations(data, **read_kwargs)
    values = check_counts(counts.values, "counts")
    if values.shape[0] == 0:
        raise ValueError("counts must have at least one item, but got 0 items")
    coords = {
        dim: (counts[dim].values if dim in counts.coords else np.arange(counts.sizes[dim]))
        for dim in ("item", "category")
    }
    attrs = dict(counts.attrs)
    attrs.setdefault("cant_solve", None)
    return xr.DataArray(
        values, dims=("item", "category"), coords=coords, name="counts", attrs=attrs
    )


def _check_var_names(var_names: Any, available: list[str]) -> list[str]:
    """Return the posterior variables to store, in the order of ``available``."""
    if var_names is None:
        return list(available)
    names = [var_names] if isinstance(var_names, str) else var_names
    try:
        names = list(names)
    except TypeError:
        raise TypeError(
            f"var_names must be a variable name or a list of them, but got {var_names!r}"
        ) from None
    bad = [n for n in names if n not in available]
    if bad or not names:
        raise ValueError(
            f"var_names must be a non-empty selection of {available}, but got {var_names!r}"
        )
    return [n for n in available if n in names]


def _check_sampler(sampler: Any) -> str:
    """Return the NUTS sampler name, checking that its package is installed."""
    if sampler is None:
        return "pymc"
    check_option(sampler, tuple(NUTS_SAMPLERS), "sampler")
    module = NUTS_SAMPLERS[sampler]
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"sampler={sampler!r} needs the {module} package, which is not installed; "
            f"install it with: pip install 'ambppl[{sampler}]' (or use sampler=None for "
            "PyMC's own NUTS)"
        )
    return sampler


def _exact_dirichlet(
    counts: xr.DataArray,
    alpha: np.ndarray,
    cs: int | None,
    measures: list[str],
    names: list[str],
    draws: int,
    chains: int,
    random_seed: Any,
    progressbar: bool,
) -> dict[str, np.ndarray]:
    """Independent draws of q_i ~ Dirichlet(alpha + counts_i) and of the measures."""
    from ambppl.measures import _numpy as _measure_numpy

    rng = np.random.default_rng(random_seed)
    post = counts.values + alpha
    n_items, n_cat = post.shape
    store_q = "q" in names
    todo = [m for m in measures if VARIABLES[m] in names]
    out: dict[str, np.ndarray] = {}
    if store_q:
        out["q"] = np.empty((chains, draws, n_items, n_cat))
    for m in todo:
        out[VARIABLES[m]] = np.empty((chains, draws, n_items))
    chunk = max(1, CHUNK_BYTES // (8 * draws * n_cat))
    starts = range(0, n_items, chunk)
    with _progress(progressbar, chains * len(starts), "exact Dirichlet draws") as advance:
        for c in range(chains):
            for start in starts:
                stop = min(start + chunk, n_items)
                q = _dirichlet_draws(rng, post[start:stop], draws)
                if store_q:
                    out["q"][c, :, start:stop] = q
                first = c == 0 and start == 0  # validate q once (finite, on the simplex)
                for m in todo:
                    out[VARIABLES[m]][c, :, start:stop] = _measure_numpy(m, q, cs, -1, check=first)
                advance()
    return out


def _dirichlet_draws(rng: np.random.Generator, alpha: np.ndarray, draws: int) -> np.ndarray:
    """``draws`` Dirichlet(alpha_i) vectors per row of ``alpha``: shape (draws, items, K)."""
    g = rng.standard_gamma(alpha, size=(draws, *alpha.shape))
    total = g.sum(axis=-1, keepdims=True)
    under = total[..., 0] == 0
    if np.any(under):
        # Every gamma underflowed (all concentrations tiny): redraw those vectors in log
        # space, Gamma(a) = Gamma(a + 1) * U^(1/a), then normalize with a softmax.
        import scipy.special as sc

        d, i = np.nonzero(under)
        a = alpha[i]
        logg = np.log(rng.standard_gamma(a + 1.0)) + np.log(rng.random(a.shape)) / a
        g[d, i] = sc.softmax(logg, axis=-1)
        total[d, i] = 1.0
    g /= total
    return g


#: Exact sampler name (a model info record's "exact") -> function.
_EXACT_SAMPLERS: dict[str, Callable[..., dict[str, np.ndarray]]] = {"dirichlet": _exact_dirichlet}


def _assemble(posterior: dict[str, np.ndarray], counts: xr.DataArray) -> xr.DataTree:
    """A DataTree with the layout of ``pymc.sample``'s result for exact draws."""
    import xarray as xr

    import ambppl

    chains, draws = next(iter(posterior.values())).shape[:2]
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(draws),
        "item": counts["item"].values,
        "category": counts["category"].values,
    }
    data_vars = {
        name: (("chain", "draw", "item", "category")[: values.ndim], values)
        for name, values in posterior.items()
    }
    created = {
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(),
        "creation_library": "ambppl",
        "creation_library_version": ambppl.__version__,
        "creation_library_language": "Python",
        "inference_library": "ambppl",
        "inference_library_version": ambppl.__version__,
    }
    ds = xr.Dataset(data_vars, coords={k: v for k, v in coords.items() if k != "category"})
    if "q" in posterior:
        ds = ds.assign_coords(category=coords["category"])
    ds.attrs = {**created, "sample_dims": ["chain", "draw"]}
    observed = xr.Dataset({"counts": counts})
    observed.attrs = {**created, "sample_dims": []}
    return xr.DataTree.from_dict({"posterior": ds, "observed_data": observed})


def _fit_nuts(
    entry: Any,
    counts: xr.DataArray,
    alpha: np.ndarray,
    names: list[str],
    available: list[str],
    draws: int,
    chains: int,
    random_seed: Any,
    sampler: str,
    progressbar: bool,
    sample_kwargs: dict[str, Any] | None,
) -> xr.DataTree:
    """Sample the catalog model with NUTS; return PyMC's DataTree."""
    import pymc as pm

    kwargs = dict(sample_kwargs or {})
    clash = sorted(set(kwargs) & set(_RESERVED_SAMPLE_KWARGS))
    if clash:
        raise ValueError(
            f"sample_kwargs must not contain {clash}: fit sets them itself (use fit's own "
            "arguments draws=, chains=, random_seed=, progressbar=, var_names=, sampler=)"
        )
    pm_model = entry.build(counts, prior=alpha)
    # PyMC's convergence checks need the free variables in the trace: keep them while
    # sampling and drop what was not asked for afterwards.
    free = [rv.name for rv in pm_model.free_RVs]
    keep = None if names == available else sorted(set(names) | set(free))
    tree = pm.sample(
        draws=draws,
        chains=chains,
        random_seed=random_seed,
        progressbar=progressbar,
        var_names=keep,
        nuts_sampler=sampler,
        model=pm_model,
        **kwargs,
    )
    if keep is not None:
        tree["posterior"] = tree["posterior"].to_dataset()[names]
    observed = tree["observed_data"].to_dataset()
    observed["counts"].attrs.update(counts.attrs)
    tree["observed_data"] = observed
    return tree


class _progress:
    """Context manager yielding an ``advance()`` callable; a rich progress bar if wanted."""

    def __init__(self, show: bool, total: int, description: str) -> None:
        self.show = show and total > 1
        self.total = total
        self.description = description

    def __enter__(self) -> Callable[[], None]:
        if not self.show:
            return lambda: None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.__enter__()
        task = self._bar.add_task(self.description, total=self.total)
        return lambda: self._bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self.show:
            self._bar.__exit__(*exc)
