r"""Building blocks for catalog model files (``models/<name>.py``) and for users' own models.

A model file imports this module and nothing private of ambppl. It gives every model the
same posterior variables and records, inside the PyMC model itself, what the summaries need
to read a trace (which category is "can't solve", the prior where it is fixed), so a trace
from a plain ``pymc.sample`` can be summarized as well as one from :func:`ambppl.fit`.

- :func:`add_measures`: the ``pm.Deterministic`` nodes ``amb``, ``amb_modified``, ``amb_old``,
  ``entropy`` of a response distribution ``q`` (those defined for the number of proper
  categories; names from :data:`ambppl.measures.VARIABLES`).
- :func:`add_annotation_data`: ``pm.Data`` nodes ``is_cant_solve`` (one 0/1 flag per
  category) and, for a fixed Dirichlet prior, ``prior`` (one concentration per category).
- :func:`count_statistics` and :func:`dirichlet_multinomial_logp`: the Dirichlet-multinomial
  log likelihood of all items from sufficient statistics, for collapsed models.
- :func:`log_likelihood`: the per-item, per-draw ``log_likelihood`` group every model writes.

The log likelihood (one meaning in every model)
-----------------------------------------------
For item ``i`` with answers ``y_i`` (counts ``x_i``, ``n_i`` answers) and a model whose
response distribution has the conditional prior ``q_i | theta ~ Dirichlet(a(theta))``,
the pointwise log likelihood is the probability of the item's *sequence of answers* with
``q_i`` integrated out:

.. math::

   \log p(y_i \mid \theta) = \log\Gamma(A) - \log\Gamma(A + n_i)
       + \sum_k \left[\log\Gamma(a_k + x_{ik}) - \log\Gamma(a_k)\right],
   \qquad A = \sum_k a_k .

It is the Dirichlet-multinomial without the multinomial coefficient ``n_i! / prod x_ik!``:
the coefficient does not depend on the model, and leaving it out makes count models agree
with models of individual answers (a rater model's likelihood is a product over answers).
Integrating ``q_i`` out is what makes PSIS-LOO work: with one ``q_i`` per item, leaving an
item out removes the only data on its own parameter, and the importance ratios have heavy
tails (Pareto k > 0.7 for most items). With ``q_i`` integrated out, leave-one-item-out
predicts a *new item's* answers from what the other items taught the model about the prior
(nothing, for a fixed prior; ``mu`` and ``kappa`` for a learned one), which is the question
that decides between a fixed and a learned prior.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ambppl.measures import VARIABLES, measures_for

__all__ = [
    "CountStatistics",
    "add_annotation_data",
    "add_measures",
    "count_statistics",
    "count_values",
    "dirichlet_multinomial_logp",
    "log_likelihood",
    "model_coords",
    "prior_concentration",
]


def count_values(counts: Any) -> tuple[np.ndarray, int | None]:
    """Check a count DataArray and return its values and the can't-solve position.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")`` and ``attrs["cant_solve"]`` (a category
        label or None), as :func:`ambppl.read_annotations` returns.

    Returns
    -------
    values : numpy.ndarray of int64, shape (items, K)
    cant_solve : int or None
        Position of the can't-solve category.

    Raises
    ------
    TypeError
        If ``counts`` is not a DataArray.
    ValueError
        For other dims, counts that are not non-negative whole numbers, or a can't-solve
        label that is not a category.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> c = xr.DataArray(np.array([[1, 2]]), dims=("item", "category"),
    ...                  coords={"category": ["x", "?"]}, attrs={"cant_solve": "?"})
    >>> count_values(c)[1]
    1
    """
    import xarray as xr

    from ambppl._checks import cant_solve_position, check_counts

    if not isinstance(counts, xr.DataArray):
        raise TypeError(
            "counts must be an xarray.DataArray with dims ('item', 'category') (see "
            f"ambppl.read_annotations), but got {type(counts).__name__}"
        )
    if tuple(counts.dims) != ("item", "category"):
        raise ValueError(
            f"counts must have dims ('item', 'category'), but got {tuple(counts.dims)}"
        )
    values = check_counts(counts.values)
    labels = model_coords(counts)["category"]
    return values, cant_solve_position(counts.attrs.get("cant_solve"), labels)


def model_coords(counts: Any) -> dict[str, list]:
    """The ``coords`` of a model of ``counts``: item and category labels (positions if none).

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")``.

    Returns
    -------
    dict
        ``{"item": [...], "category": [...]}``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> model_coords(xr.DataArray(np.ones((2, 2)), dims=("item", "category")))
    {'item': [0, 1], 'category': [0, 1]}
    """
    return {
        dim: (
            counts.coords[dim].values.tolist()
            if dim in counts.coords
            else list(range(counts.sizes[dim]))
        )
        for dim in ("item", "category")
    }


def prior_concentration(prior: Any, n_categories: int, name: str = "prior") -> np.ndarray:
    """A Dirichlet concentration vector from one positive number or one per category.

    Parameters
    ----------
    prior : float or array_like
        Symmetric concentration, or one positive value per category.
    n_categories : int
        Number of categories K.
    name : str, default "prior"
        The argument's name in error messages.

    Returns
    -------
    numpy.ndarray, shape (K,)

    Raises
    ------
    ValueError, TypeError
        If a value is not positive and finite, or the length is not 1 or K.

    Examples
    --------
    >>> prior_concentration(0.5, 3).tolist()
    [0.5, 0.5, 0.5]
    """
    from ambppl._checks import check_prior

    return check_prior(prior, n_categories, name)


def add_measures(q: Any, *, cant_solve: int | None, dims: str | tuple[str, ...] = "item") -> dict:
    """Add the ambiguity measures of ``q`` as ``pm.Deterministic`` nodes of the current model.

    Parameters
    ----------
    q : pytensor.tensor.TensorVariable
        Response distributions with the categories on the last axis (static length).
    cant_solve : int or None
        Position of the can't-solve category, or None.
    dims : str or tuple of str, default "item"
        Dims of one measure value per response distribution.

    Returns
    -------
    dict
        Variable name -> the Deterministic, for the measures defined for the number of proper
        categories (:func:`ambppl.measures.measures_for`).

    Raises
    ------
    ValueError
        If the category axis has no static length, or ``cant_solve`` is out of range.

    Notes
    -----
    Must be called inside a ``with pm.Model():`` block. The names are those of
    :data:`ambppl.measures.VARIABLES`, the same in every catalog model.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> with pm.Model(coords={"item": [0, 1], "category": ["a", "b", "cs"]}) as m:
    ...     q = pm.Dirichlet("q", a=np.ones((2, 3)), dims=("item", "category"))
    ...     names = sorted(add_measures(q, cant_solve=2))
    >>> names
    ['amb', 'amb_modified', 'amb_old', 'entropy']
    """
    import pymc as pm

    from ambppl import measures

    n_categories = q.type.shape[-1]
    if n_categories is None:
        raise ValueError(
            "q must have a static number of categories on its last axis; build it with a "
            "known shape (e.g. pm.Dirichlet(..., dims=('item', 'category')))"
        )
    n_proper = n_categories - (cant_solve is not None)
    out = {}
    for m in measures_for(n_proper):
        value = measures._apply(m, q, cant_solve, -1, None)
        out[VARIABLES[m]] = pm.Deterministic(VARIABLES[m], value, dims=dims)
    return out


def add_annotation_data(counts: Any, *, prior: Any = None) -> dict:
    """Record in the current model what a summary needs to read its trace.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts (dims ``item``, ``category``) with ``attrs["cant_solve"]`` (label or None).
    prior : array_like, optional
        The fixed Dirichlet concentration of ``q_i`` (one per category), for models whose
        posterior of ``q_i`` is ``Dirichlet(prior + counts_i)``. Leave it out when the prior
        is learned.

    Returns
    -------
    dict
        ``{"is_cant_solve": ..., "prior": ...}`` (``prior`` only when given): ``pm.Data``
        nodes with dims ``category``; ``pymc.sample`` stores them in ``constant_data``.

    Notes
    -----
    :func:`ambppl.summarize` reads ``is_cant_solve`` and ``prior`` from the ``constant_data``
    group when the result's attributes do not carry them (a trace made by ``pymc.sample``
    rather than :func:`ambppl.fit`), and refuses a trace that has neither.

    Examples
    --------
    >>> import numpy as np, pymc as pm, xarray as xr
    >>> counts = xr.DataArray(np.array([[3, 1, 0]]), dims=("item", "category"),
    ...                       coords={"category": ["a", "b", "cs"]}, attrs={"cant_solve": "cs"})
    >>> with pm.Model(coords={"category": ["a", "b", "cs"]}):
    ...     nodes = add_annotation_data(counts, prior=[1.0, 1.0, 1.0])
    >>> nodes["is_cant_solve"].get_value().tolist()
    [0, 0, 1]
    """
    import pymc as pm

    from ambppl._checks import cant_solve_position

    labels = counts["category"].values if "category" in counts.coords else None
    n_categories = counts.sizes["category"]
    if labels is None:
        labels = np.arange(n_categories)
    cs = cant_solve_position(counts.attrs.get("cant_solve"), labels)
    flags = np.zeros(n_categories, dtype=np.int8)
    if cs is not None:
        flags[cs] = 1
    out = {"is_cant_solve": pm.Data("is_cant_solve", flags, dims="category")}
    if prior is not None:
        alpha = np.broadcast_to(np.asarray(prior, dtype=np.float64), (n_categories,))
        out["prior"] = pm.Data("prior", np.array(alpha), dims="category")
    return out


@dataclass(frozen=True)
class CountStatistics:
    """Sufficient statistics of a count matrix for the Dirichlet-multinomial likelihood.

    Attributes
    ----------
    category, value, weight : numpy.ndarray
        One entry per distinct (category, count > 0) pair: the category index, the count and
        the number of items with that count in that category.
    total, total_weight : numpy.ndarray
        The distinct numbers of answers per item and how many items have each.
    n_items : int
        Number of items summarized.
    """

    category: np.ndarray
    value: np.ndarray
    weight: np.ndarray
    total: np.ndarray
    total_weight: np.ndarray
    n_items: int


def count_statistics(counts: Any) -> CountStatistics:
    """Reduce a count matrix to the sufficient statistics of the Dirichlet-multinomial.

    Parameters
    ----------
    counts : array_like of int, shape (items, K)
        Answers per item and category.

    Returns
    -------
    CountStatistics
        At most ``K * (max count)`` pairs and ``max total`` totals, whatever the number of
        items.

    Notes
    -----
    ``sum_i log p(y_i | a)`` (see the module docstring) is
    ``sum_(k, c) w_kc [lgamma(a_k + c) - lgamma(a_k)] - sum_n w_n [lgamma(A + n) - lgamma(A)]``
    where ``w_kc`` counts the items with ``c`` answers in category ``k`` and ``w_n`` those with
    ``n`` answers in all: the likelihood of a million items costs as much as that of a few
    hundred (pairs with ``c = 0`` contribute nothing and are dropped). This is finer than
    summing over distinct count vectors with multiplicities, which it equals.

    Examples
    --------
    >>> s = count_statistics([[2, 0], [2, 1], [0, 3]])
    >>> s.category.tolist(), s.value.tolist(), s.weight.tolist()
    ([0, 1, 1], [2, 1, 3], [2, 1, 1])
    >>> s.total.tolist(), s.total_weight.tolist()
    ([2, 3], [1, 2])
    """
    from ambppl._checks import check_counts

    values = check_counts(np.asarray(counts), "counts")
    cats, vals, weights = [], [], []
    for k in range(values.shape[1]):
        v, w = np.unique(values[:, k], return_counts=True)
        keep = v > 0
        cats.append(np.full(int(keep.sum()), k, dtype=np.int64))
        vals.append(v[keep].astype(np.int64))
        weights.append(w[keep].astype(np.int64))
    total, total_weight = np.unique(values.sum(axis=1), return_counts=True)
    return CountStatistics(
        category=np.concatenate(cats),
        value=np.concatenate(vals),
        weight=np.concatenate(weights),
        total=total.astype(np.int64),
        total_weight=total_weight.astype(np.int64),
        n_items=int(values.shape[0]),
    )


def dirichlet_multinomial_logp(stats: CountStatistics, concentration: Any) -> Any:
    """Summed log likelihood of all items, ``sum_i log p(y_i | a)``, from sufficient statistics.

    Parameters
    ----------
    stats : CountStatistics
        From :func:`count_statistics`.
    concentration : pytensor tensor or numpy array, shape (K,)
        The Dirichlet concentration ``a`` of ``q_i`` (e.g. ``kappa * mu``).

    Returns
    -------
    scalar of the same kind as ``concentration`` (PyTensor graph or numpy float)
        The log probability of every item's answer sequence with ``q_i`` integrated out
        (module docstring; no multinomial coefficients).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import gammaln
    >>> counts, a = np.array([[2, 0], [2, 1]]), np.array([0.5, 1.5])
    >>> direct = sum(gammaln(2.0) - gammaln(2.0 + x.sum())
    ...              + np.sum(gammaln(a + x) - gammaln(a)) for x in counts)
    >>> bool(np.isclose(dirichlet_multinomial_logp(count_statistics(counts), a), direct))
    True
    """
    if type(concentration).__module__.startswith("pytensor"):
        import pytensor.tensor as pt

        gammaln, total = pt.gammaln, pt.sum
    else:
        from scipy.special import gammaln

        concentration = np.asarray(concentration, dtype=np.float64)
        total = np.sum
    a = concentration[stats.category]
    big_a = total(concentration)
    pairs = total(stats.weight * (gammaln(a + stats.value) - gammaln(a)))
    totals = total(stats.total_weight * (gammaln(big_a + stats.total) - gammaln(big_a)))
    return pairs - totals


def log_likelihood(counts: Any, concentration: Any) -> np.ndarray:
    """Pointwise log likelihood ``log p(y_i | a)`` for every item and every draw of ``a``.

    Parameters
    ----------
    counts : array_like of int, shape (items, K)
        Answers per item and category.
    concentration : array_like, shape (..., K)
        Dirichlet concentration of ``q_i``: one vector (fixed prior) or one per draw (e.g.
        shape (chain, draw, K) for a learned prior).

    Returns
    -------
    numpy.ndarray, shape (..., items)
        The module docstring's ``log p(y_i | theta)``. For a single concentration vector the
        result has shape (items,).

    Notes
    -----
    Evaluated once per distinct count vector (from per-category tables of distinct counts),
    then gathered to the items in one pass: the cost is ``draws x distinct vectors x (K + 1)``
    additions plus one gather of the output's size.

    Examples
    --------
    >>> import numpy as np
    >>> ll = log_likelihood([[1, 0], [1, 1]], [1.0, 1.0])  # uniform q: P(one answer) = 1/2
    >>> np.round(np.exp(ll), 6).tolist()                   # P(a, b) = 1/2 * 1/3
    [0.5, 0.166667]
    """
    from scipy.special import gammaln

    from ambppl._checks import check_counts

    values = check_counts(np.asarray(counts), "counts")
    a = np.asarray(concentration, dtype=np.float64)
    k = values.shape[1]
    if a.shape[-1] != k:
        raise ValueError(
            f"concentration must have {k} entries on its last axis (one per category), but "
            f"got shape {a.shape}"
        )
    # Items repeat count vectors (at most C(n + K - 1, K - 1) distinct ones for n answers):
    # evaluate once per distinct vector, then one gather to the items.
    distinct, to_item = np.unique(values, axis=0, return_inverse=True)
    out = np.zeros((*a.shape[:-1], distinct.shape[0]))
    for j in range(k):
        uniq, inverse = np.unique(distinct[:, j], return_inverse=True)
        aj = a[..., j, None]
        table = gammaln(aj + uniq) - gammaln(aj)
        out += np.take(table, inverse.reshape(-1), axis=-1)
    big_a = a.sum(axis=-1)[..., None]
    uniq, inverse = np.unique(distinct.sum(axis=1), return_inverse=True)
    table = gammaln(big_a) - gammaln(big_a + uniq)
    out += np.take(table, inverse.reshape(-1), axis=-1)
    return np.take(out, to_item.reshape(-1), axis=-1)
