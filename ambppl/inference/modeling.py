r"""Building blocks for catalog model files (``models/<name>.py``) and for users' own models.

A model file imports this module and nothing private of ambppl. It gives every model the
same posterior variables and records, inside the PyMC model itself, what the summaries need
to read a trace (which category is "can't solve", the prior where it is fixed), so a trace
from a plain ``pymc.sample`` can be summarized as one from :func:`ambppl.fit`.

- :func:`add_measures`: the ``pm.Deterministic`` nodes ``amb``, ``amb_modified``, ``amb_old``,
  ``entropy`` of a response distribution ``q`` (those defined for the number of proper
  categories; names from :data:`ambppl.maths.measures.VARIABLES`).
- :func:`add_annotation_data`: ``pm.Data`` nodes ``is_cant_solve`` (one 0/1 flag per
  category) and, for a fixed Dirichlet prior, ``prior`` (one concentration per category).
- :func:`count_statistics` and :func:`dirichlet_multinomial_logp`: the Dirichlet-multinomial
  log likelihood of all items from sufficient statistics, for collapsed models.
- :func:`log_likelihood`: the per-item, per-draw ``log_likelihood`` group every model writes.
- :func:`answer_codes` and :func:`qmc_normal_nodes`: for models of individual answers
  (``rater_effects``, ``dawid_skene``), the answers table as integer codes (checked), and
  the scrambled-Sobol normal nodes of an expectation over the rater population.
- :func:`parameter_name` and :func:`say`: a model's messages in the caller's words, a
  parameter as ``kappa_scale`` in Python and ``--param kappa_scale=...`` on the ambppl
  command line; :func:`positive_parameter` and :func:`flag_parameter` check a scale and a
  switch (``centred``) so.

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

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ambppl.data.contract import count_values
from ambppl.data.matrices import ids_of_one_type, refuse_alike_ids
from ambppl.inference.convergence import ConvergenceWarning
from ambppl.internal.checks import (
    as_float_array,
    cant_solve_position,
    categories_last,
    category_aligned,
    check_counts,
    check_flag,
    check_positive_int,
    check_positive_scalar,
    check_prior,
    parameter_name,
    show_values,
)
from ambppl.internal.labels import is_dataarray
from ambppl.internal.messages import say
from ambppl.maths import measures
from ambppl.maths.measures import VARIABLES, measures_for

__all__ = [
    "MAX_QMC_NODES",
    "CountStatistics",
    "add_annotation_data",
    "add_measures",
    "answer_codes",
    "category_parameters",
    "count_statistics",
    "count_values",
    "dirichlet_multinomial_logp",
    "flag_parameter",
    "is_unanimous",
    "log_likelihood",
    "log_pochhammer_excess",
    "measure_values",
    "model_coords",
    "parameter_name",
    "positive_parameter",
    "prior_concentration",
    "qmc_normal_nodes",
    "say",
    "warn_if_unanimous",
]

#: :func:`warn_if_unanimous`: designs with at least this many items with two or more answers.
UNANIMOUS_MIN_ITEMS = 10


def _check_count_dataarray(counts: Any) -> None:
    """Refuse anything but a DataArray with dims ("item", "category"), before it is read.

    Only the type and the dims: cheap (nothing computed of a dask-backed array); the values
    are checked by :func:`count_values`.
    """
    if not is_dataarray(counts):
        raise TypeError(
            "counts must be an xarray.DataArray of counts with dims ('item', 'category'), "
            f"but got {type(counts).__name__}; make one with ambppl.read_annotations(data, "
            "cant_solve=...) or ambppl.data.as_counts(array)"
        )
    if tuple(counts.dims) != ("item", "category"):
        raise ValueError(
            f"counts must have dims ('item', 'category'), but got {tuple(counts.dims)}; "
            "transpose or rename them (e.g. counts.transpose('item', 'category'))"
        )


def _count_matrix(counts: Any) -> np.ndarray:
    """Checked counts of shape (items, K) as int64; a DataArray read by its dim names (its
    ``"category"`` dimension last, :func:`ambppl.internal.checks.categories_last`)."""
    values = check_counts(np.asarray(categories_last(counts)), "counts")
    if values.ndim != 2:
        raise ValueError(
            "counts must have shape (items, K) (one row of category counts per item), but got "
            f"shape {values.shape}; for a single item pass [counts]"
        )
    return values


def _is_labelled(value: Any) -> bool:
    """A pandas Series or DataFrame, or an xarray DataArray with a coordinate (an index)."""
    cls = type(value)
    if cls.__module__.startswith("pandas") and cls.__name__ in ("Series", "DataFrame"):
        return True
    return is_dataarray(value) and bool(value.indexes)


def _concentration_by_label(concentration: Any, counts: Any) -> Any:
    """``concentration`` read by its category labels against ``counts`` (categories last).

    A Series, or a DataArray, is put in the order of the counts' categories
    (:func:`ambppl.internal.checks.category_aligned`: refused where the counts have no
    category labels, or other ones); a DataArray's dimensions besides the categories are
    draws (``chain``, ``draw``), kept in front. Anything else is returned as it is, to be
    read by position.
    """
    kinds = ("Series", "DataFrame")
    cls = type(concentration)
    pandas = cls.__module__.startswith("pandas") and cls.__name__ in kinds
    if not (pandas or is_dataarray(concentration)):
        return concentration
    if not is_dataarray(counts):  # an array or a DataFrame: no category labels to read by
        return category_aligned(concentration, np.empty(0), name="concentration")
    cdim = "category" if "category" in counts.dims else counts.dims[-1]
    categories = counts[cdim]
    if pandas or concentration.ndim < 2 or cdim not in concentration.dims:
        return category_aligned(concentration, categories, name="concentration")
    shared = [d for d in concentration.dims if d != cdim and d in counts.dims]
    if shared:
        raise ValueError(
            f"concentration must be one vector per draw (its dimensions besides {cdim!r} are "
            f"draws, e.g. ('chain', 'draw')), but got a DataArray with dims "
            f"{tuple(concentration.dims)}, sharing {show_values(shared)} with counts; pass "
            "one concentration per category and draw, the same for every item"
        )
    concentration = concentration.transpose(..., cdim)
    if cdim not in concentration.indexes:  # no labels: by position
        return concentration.values
    import xarray as xr

    order = category_aligned(  # positions, aligned as the concentrations would be
        xr.DataArray(
            np.arange(concentration.sizes[cdim]),
            dims=cdim,
            coords={cdim: concentration.indexes[cdim]},
        ),
        categories,
        name="concentration",
    )
    return np.take(concentration.values, order, axis=-1)


def _check_concentration(concentration: Any, n_categories: int | None) -> np.ndarray:
    """A numpy concentration with ``n_categories`` entries on its last axis, finite and > 0."""
    a = as_float_array(concentration, "concentration")
    if a.ndim == 0 or (n_categories is not None and a.shape[-1] != n_categories):
        what = "" if n_categories is None else f"{n_categories} "
        raise ValueError(
            f"concentration must have {what}entries on its last axis (one per category), but "
            f"got shape {a.shape}"
        )
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        bad = a[~(np.isfinite(a) & (a > 0))]
        raise ValueError(
            "concentration must be finite and strictly positive (Dirichlet concentrations), "
            f"but got {float(bad.flat[0])!r}"
        )
    return a


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

    Raises
    ------
    TypeError
        If ``counts`` is not an xarray.DataArray (make one with
        :func:`ambppl.read_annotations` or :func:`ambppl.data.as_counts`).
    ValueError
        If its dims are not ``("item", "category")``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> model_coords(xr.DataArray(np.ones((2, 2)), dims=("item", "category")))
    {'item': [0, 1], 'category': [0, 1]}
    """
    _check_count_dataarray(counts)
    return {
        dim: (
            counts.coords[dim].values.tolist()
            if dim in counts.coords
            else list(range(counts.sizes[dim]))
        )
        for dim in ("item", "category")
    }


def prior_concentration(
    prior: Any, n_categories: int, name: str = "prior", *, categories: Any = None
) -> np.ndarray:
    """A Dirichlet concentration vector from one positive number or one per category.

    Parameters
    ----------
    prior : float, array_like, pandas.Series or xarray.DataArray
        Symmetric concentration, or one positive value per category: by position, or
        labelled by category (a Series indexed by the category labels, a DataArray with a
        ``category`` coordinate), read by its labels against ``categories``.
    n_categories : int
        Number of categories K, a positive integer.
    name : str, default "prior"
        The argument's name in error messages.
    categories : xarray.DataArray, optional
        The counts' categories (``counts["category"]``) that a labelled ``prior`` is put in
        the order of (:func:`ambppl.internal.checks.category_aligned`). Without it a
        labelled prior is refused: there are no labels to read it by, and reading it by
        position gave each concentration to whichever category stood there.

    Returns
    -------
    numpy.ndarray, shape (K,)

    Raises
    ------
    ValueError, TypeError
        If a value is not positive and finite, or the length is not 1 or K; if
        ``n_categories`` is not a positive integer; if a labelled ``prior`` has other labels
        than ``categories``, or ``categories`` is not given.

    Examples
    --------
    >>> prior_concentration(0.5, 3).tolist()
    [0.5, 0.5, 0.5]
    >>> import pandas as pd, xarray as xr
    >>> labels = xr.DataArray(["yes", "no", "cs"], dims="category")
    >>> labels = labels.assign_coords(category=labels.values)
    >>> by_label = pd.Series({"cs": 5.0, "yes": 1.0, "no": 2.0})
    >>> prior_concentration(by_label, 3, categories=labels).tolist()
    [1.0, 2.0, 5.0]
    """
    n = check_positive_int(n_categories, "n_categories")
    unlabelled = np.zeros(n)  # refuses a labelled prior: nothing to align it with
    aligned = category_aligned(prior, unlabelled if categories is None else categories, name=name)
    return check_prior(aligned, n, name)


def category_parameters(params: dict[str, Any], categories: Any) -> dict[str, Any]:
    """A model's parameters with every one labelled by category put in the counts' order.

    Parameters
    ----------
    params : dict
        The model's parameters by name (``{"prior": ...}``), as :func:`ambppl.fit` or
        :func:`ambppl.score` take them.
    categories : xarray.DataArray or sequence
        The counts' categories: ``counts["category"]``, or their labels in order (counts
        read in chunks).

    Returns
    -------
    dict
        ``params`` with each labelled value (a pandas Series indexed by category, an
        xarray DataArray with a ``category`` coordinate) as a numpy array in the order of
        ``categories`` (:func:`ambppl.internal.checks.category_aligned`); the others as
        given, read by position. Without this a Series labelled by category was read by
        position: each category got another's concentration.

    Raises
    ------
    ValueError
        If a labelled value's labels differ from ``categories`` or occur twice.

    Examples
    --------
    >>> import pandas as pd
    >>> aligned = category_parameters({"prior": pd.Series({"no": 2.0, "yes": 1.0})},
    ...                               ["yes", "no"])
    >>> aligned["prior"].tolist()
    [1.0, 2.0]
    """
    if not is_dataarray(categories):
        import xarray as xr

        labels = list(categories)
        categories = xr.DataArray(labels, dims="category", coords={"category": labels})
    return {
        name: category_aligned(value, categories, name=name, data_name="counts")
        for name, value in params.items()
    }


def positive_parameter(value: Any, name: str) -> float:
    """A model parameter that is one positive finite number (a prior's scale), checked.

    Parameters
    ----------
    value : float
        The parameter as given.
    name : str
        Its keyword; messages name it in the caller's words (``--param NAME=...`` on the
        ambppl command line).

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError
        For something other than a real number (a list, a text, a bool).
    ValueError
        For zero, a negative number or a non-finite one.

    Examples
    --------
    >>> positive_parameter(2, "kappa_scale"), positive_parameter(np.array(0.5), "kappa_scale")
    (2.0, 0.5)
    >>> positive_parameter(-1.0, "kappa_scale")
    Traceback (most recent call last):
    ...
    ValueError: kappa_scale must be a positive finite number, but got -1.0
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:  # a numpy scalar array
        value = value.item()
    return check_positive_scalar(value, parameter_name(name))


def flag_parameter(value: Any, name: str, automatic: bool = True) -> bool | None:
    """A model parameter that is a switch (``centred``): True, False or, where ``automatic``,
    None (the model chooses), checked.

    Parameters
    ----------
    value : bool or None
        The parameter as given.
    name : str
        Its keyword; messages name it in the caller's words (``--param NAME=...`` on the
        ambppl command line, where the values are spelled ``true``, ``false``, ``null``).
    automatic : bool, default True
        Whether None (the model's automatic choice) is allowed.

    Returns
    -------
    bool or None
        ``value`` (a numpy bool as a bool).

    Raises
    ------
    ValueError
        For anything else (a number, a text).

    Examples
    --------
    >>> flag_parameter(True, "centred"), flag_parameter(None, "centred")
    (True, None)
    >>> flag_parameter(3, "centred")
    Traceback (most recent call last):
    ...
    ValueError: centred must be True, False or None (automatic), but got 3
    """
    return check_flag(value, parameter_name(name), automatic)


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
        categories (:func:`ambppl.maths.measures.measures_for`).

    Raises
    ------
    ValueError
        If the category axis has no static length, or ``cant_solve`` is out of range.

    Notes
    -----
    Must be called inside a ``with pm.Model():`` block. The names are those of
    :data:`ambppl.maths.measures.VARIABLES`, the same in every catalog model.

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

    n_categories = q.type.shape[-1]
    if n_categories is None:
        raise ValueError(
            "q must have a static number of categories on its last axis; build it with a "
            "known shape (e.g. pm.Dirichlet(..., dims=('item', 'category')))"
        )
    return {
        name: pm.Deterministic(name, value, dims=dims)
        for name, value in measure_values(q, cant_solve=cant_solve).items()
    }


def measure_values(q: Any, *, cant_solve: int | None) -> dict[str, Any]:
    """The ambiguity measures of ``q`` that its number of proper categories defines.

    Parameters
    ----------
    q : numpy.ndarray or pytensor tensor
        Response distributions with the categories on the last axis (for a tensor: of static
        length).
    cant_solve : int or None
        Position of the can't-solve category, or None.

    Returns
    -------
    dict
        Variable name (:data:`ambppl.maths.measures.VARIABLES`) -> the measure, the same kind
        as ``q`` (one value per distribution). For numpy ``q`` the probabilities are not
        checked (a model's own, already normalized).

    Examples
    --------
    >>> out = measure_values(np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]), cant_solve=2)
    >>> sorted(out), out["amb"].round(3).tolist()
    (['amb', 'amb_modified', 'amb_old', 'entropy'], [0.5, 0.0])
    """
    n_proper = q.shape[-1] if isinstance(q, np.ndarray) else q.type.shape[-1]
    n_proper -= cant_solve is not None
    out = {}
    for m in measures_for(n_proper):
        if isinstance(q, np.ndarray):
            out[VARIABLES[m]] = measures.measure_numpy(m, q, cant_solve, -1, check=False)
        else:
            out[VARIABLES[m]] = measures._apply(m, q, cant_solve, -1, None)
    return out


def add_annotation_data(counts: Any, *, prior: Any = None) -> dict:
    """Record in the current model what a summary needs to read its trace.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts (dims ``item``, ``category``) with ``attrs["cant_solve"]`` (label or None).
    prior : array_like, pandas.Series or xarray.DataArray, optional
        The fixed Dirichlet concentration of ``q_i`` (one per category), for models whose
        posterior of ``q_i`` is ``Dirichlet(prior + counts_i)``. Leave it out when the prior
        is learned. An array is read by position; a Series indexed by the category labels,
        or a DataArray with a ``category`` coordinate, by its labels, put in the order of
        ``counts["category"]`` (:func:`ambppl.internal.checks.category_aligned`).

    Returns
    -------
    dict
        ``{"is_cant_solve": ..., "prior": ...}`` (``prior`` only when given): ``pm.Data``
        nodes with dims ``category``; ``pymc.sample`` stores them in ``constant_data``.

    Raises
    ------
    TypeError
        If ``counts`` is not an xarray.DataArray.
    ValueError
        If its dims are not ``("item", "category")``; if a labelled ``prior`` has other
        labels than the counts' categories, or the counts have no category coordinate to
        read it by (pass ``prior.values`` in the counts' order).

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
    >>> import pandas as pd
    >>> with pm.Model(coords={"category": ["a", "b", "cs"]}):
    ...     nodes = add_annotation_data(counts, prior=pd.Series({"cs": 2.0, "a": 0.5, "b": 1.0}))
    >>> nodes["prior"].get_value().tolist()
    [0.5, 1.0, 2.0]
    """
    import pymc as pm

    _check_count_dataarray(counts)
    labels = counts["category"].values if "category" in counts.coords else None
    n_categories = counts.sizes["category"]
    if labels is None:
        labels = np.arange(n_categories)
    cs = cant_solve_position(counts.attrs.get("cant_solve"), labels)
    flags = np.zeros(n_categories, dtype=np.int8)
    if cs is not None:
        flags[cs] = 1
    out = {"is_cant_solve": pm.Data("is_cant_solve", flags, dims="category")}
    if prior is not None:  # labelled by category: read by its labels, not by position
        prior = category_aligned(prior, counts["category"], name="prior", data_name="counts")
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
    n_categories : int or None
        Number of categories K (set by :func:`count_statistics`; None where the statistics
        were built by hand, e.g. as ``pm.Data``): :func:`dirichlet_multinomial_logp` then
        checks that the concentration has K entries.
    """

    category: np.ndarray
    value: np.ndarray
    weight: np.ndarray
    total: np.ndarray
    total_weight: np.ndarray
    n_items: int
    n_categories: int | None = None


def count_statistics(counts: Any) -> CountStatistics:
    """Reduce a count matrix to the sufficient statistics of the Dirichlet-multinomial.

    Parameters
    ----------
    counts : array_like of int, shape (items, K), or xarray.DataArray
        Answers per item and category. A DataArray with a ``category`` dimension is read by
        its dim names (dims ``("category", "item")`` as its transpose); otherwise the
        categories are on the last axis.

    Returns
    -------
    CountStatistics
        At most ``K * (max count)`` pairs and ``max total`` totals, whatever the number of
        items.

    Raises
    ------
    ValueError
        If ``counts`` is not a matrix (items, K) with at least 2 categories, or holds counts
        that are not non-negative whole numbers.
    TypeError
        If ``counts`` is not numeric.

    Notes
    -----
    ``sum_i log p(y_i | a)`` (see the module docstring) is
    ``sum_(k, c) w_kc [lgamma(a_k + c) - lgamma(a_k)] - sum_n w_n [lgamma(A + n) - lgamma(A)]``
    where ``w_kc`` counts the items with ``c`` answers in category ``k`` and ``w_n`` those with
    ``n`` answers in all: the likelihood of a million items costs as that of a few
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

    values = _count_matrix(counts)
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
        n_categories=int(values.shape[1]),
    )


#: Thresholds of :func:`log_pochhammer_excess`'s three regimes: the series in ``1 / a`` where
#: ``c <= SERIES_RATIO * a``, Stirling's series where ``a >= STIRLING_FROM``, else log-gamma.
SERIES_RATIO = 1e-3
STIRLING_FROM = 10.0

# Stirling's series of log Gamma(x) - [(x - 1/2) log x - x + log(2 pi) / 2]: the coefficients
# B_2m / (2m (2m - 1)) of x^-(2m-1), m = 1..8 (Abramowitz & Stegun 6.1.41). At x >= 10 the
# first omitted term is below 2e-18.
_STIRLING = (
    1 / 12,
    -1 / 360,
    1 / 1260,
    -1 / 1680,
    1 / 1188,
    -691 / 360360,
    1 / 156,
    -3617 / 122400,
)


def _backend(x: Any) -> dict:
    """The elementwise functions for numpy arrays or PyTensor tensors."""
    if type(x).__module__.startswith("pytensor"):
        import pytensor.tensor as pt

        return {
            "log": pt.log,
            "log1p": pt.log1p,
            "gammaln": pt.gammaln,
            "where": pt.switch,
            "maximum": pt.maximum,
            "minimum": pt.minimum,
            "sum": pt.sum,
        }
    from scipy.special import gammaln

    return {
        "log": np.log,
        "log1p": np.log1p,
        "gammaln": gammaln,
        "where": np.where,
        "maximum": np.maximum,
        "minimum": np.minimum,
        "sum": np.sum,
    }


def _stirling_remainder(x: Any) -> Any:
    """``log Gamma(x) - (x - 1/2) log x + x - log(2 pi) / 2`` for ``x >= 10`` (Horner in 1/x^2)."""
    inv = 1.0 / x
    inv2 = inv * inv
    acc = _STIRLING[-1]
    for coefficient in _STIRLING[-2::-1]:
        acc = coefficient + inv2 * acc
    return inv * acc


def log_pochhammer_excess(a: Any, c: Any) -> Any:
    r"""``log Gamma(a + c) - log Gamma(a) - c log a``, accurate for every ``a > 0``.

    The log of the rising factorial ``a (a + 1) ... (a + c - 1)`` less ``c log a``, i.e.
    ``sum_{j < c} log(1 + j / a)``: the part of the Dirichlet-multinomial likelihood that
    goes to 0 as the concentration grows. Written this way, :func:`dirichlet_multinomial_logp`
    never takes the difference of two huge log-gamma values.

    Parameters
    ----------
    a : array_like or pytensor tensor
        Positive concentrations (``inf`` is not allowed; ``1e300`` is).
    c : array_like of int or pytensor tensor
        Non-negative counts (whole numbers), broadcast against ``a``.

    Returns
    -------
    numpy.ndarray or pytensor tensor
        Same kind as ``a``.

    Raises
    ------
    ValueError
        If ``c`` has an entry that is not a non-negative whole number, or a numpy ``a`` one
        that is NaN or not positive. PyTensor tensors are not checked (their values are not
        known when the graph is built).
    TypeError
        If a numpy ``a`` or ``c`` is not numeric.

    Notes
    -----
    Three regimes, each accurate to a few units in the last place of the terms it adds:

    - ``c <= 1e-3 a``: the series ``sum_m (-1)^(m+1) S_m(c) / (m a^m)``, ``m = 1..5``, with
      ``S_m(c) = sum_{j<c} j^m`` (Faulhaber's polynomials); the first omitted term is below
      ``c * 1e-18 / 42``. At ``a = inf`` it is 0: the multinomial limit.
    - ``a >= 10``: Stirling, ``(a + c - 1/2) log1p(c / a) - c + r(a + c) - r(a)`` with
      ``r`` the remainder of Stirling's series (8 terms).
    - otherwise ``log Gamma(a + c) - log Gamma(a) - c log a`` directly: every term is
      moderate there.

    Each regime is evaluated on arguments clamped into its own range, so that a regime not
    taken is finite and has finite gradients (PyTensor's ``switch`` differentiates both).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import gammaln
    >>> a, c = np.array([0.3, 5.0, 1e16]), np.array([4, 4, 4])
    >>> direct = gammaln(a + c) - gammaln(a) - c * np.log(a)
    >>> bool(np.allclose(log_pochhammer_excess(a[:2], c[:2]), direct[:2]))
    True
    >>> bool(np.isclose(log_pochhammer_excess(1e16, 4), 6e-16, rtol=1e-15, atol=0))
    True
    >>> bool(abs(direct[2]) > 1.0)      # (1 + 2 + 3) / 1e16 by the direct formula: noise
    True
    """
    if not type(c).__module__.startswith("pytensor"):
        arr = as_float_array(c, "c")
        bad = ~(np.isfinite(arr) & (arr >= 0) & (arr == np.round(arr)))
        if np.any(bad):
            raise ValueError(
                f"c must be non-negative whole numbers (counts), but got {float(arr[bad][0])!r}"
            )
        c = arr
    if not type(a).__module__.startswith("pytensor"):
        arr = as_float_array(a, "a")
        if not np.all(arr > 0):  # NaN fails too
            bad = arr[~(arr > 0)]
            raise ValueError(
                f"a must be strictly positive concentrations, but got {float(bad[0])!r}"
            )
        a = arr
    return _log_pochhammer_excess(a, c)


def _log_pochhammer_excess(a: Any, c: Any) -> Any:
    """:func:`log_pochhammer_excess` without the checks, for callers whose ``a`` and ``c``
    are checked already (once per likelihood, not once per draw) or symbolic."""
    f = _backend(a)
    if f["where"] is np.where:
        a = np.asarray(a, dtype=np.float64)
    c = c.astype("float64") if hasattr(c, "astype") else np.asarray(c, dtype=np.float64)
    # series in x = 1 / a (clamped so that c x <= SERIES_RATIO)
    x = 1.0 / f["maximum"](a, f["maximum"](c / SERIES_RATIO, 1.0))
    n = c - 1.0  # S_m(c) = sum_{j=1}^{n} j^m with n = c - 1
    s1 = n * (n + 1) / 2
    s2 = n * (n + 1) * (2 * n + 1) / 6
    s3 = s1 * s1
    s4 = s2 * (3 * n * n + 3 * n - 1) / 5
    s5 = s3 * (2 * n * n + 2 * n - 1) / 3
    series = x * (s1 - x * (s2 / 2 - x * (s3 / 3 - x * (s4 / 4 - x * s5 / 5))))
    # Stirling, a >= STIRLING_FROM
    b = f["maximum"](a, STIRLING_FROM)
    stirling = (
        (b + c - 0.5) * f["log1p"](c / b) - c + _stirling_remainder(b + c) - _stirling_remainder(b)
    )
    # log-gamma, a < STIRLING_FROM
    d = f["minimum"](a, STIRLING_FROM)
    direct = f["gammaln"](d + c) - f["gammaln"](d) - c * f["log"](d)
    large = f["where"](a >= STIRLING_FROM, stirling, direct)
    return f["where"](c <= SERIES_RATIO * a, series, large)


def dirichlet_multinomial_logp(stats: CountStatistics, concentration: Any) -> Any:
    """Summed log likelihood of all items, ``sum_i log p(y_i | a)``, from sufficient statistics.

    Parameters
    ----------
    stats : CountStatistics
        From :func:`count_statistics`.
    concentration : pytensor tensor or numpy array, shape (K,)
        The Dirichlet concentration ``a`` of ``q_i`` (e.g. ``kappa * mu``), by position: in
        the order of the categories of the counts ``stats`` were made of. ``stats`` keep no
        category labels, so a labelled one (a pandas Series, an xarray DataArray with a
        coordinate) is refused rather than read by position.

    Returns
    -------
    scalar of the same kind as ``concentration`` (PyTensor graph or numpy float)
        The log probability of every item's answer sequence with ``q_i`` integrated out
        (module docstring; no multinomial coefficients).

    Raises
    ------
    TypeError
        If ``stats`` is not a :class:`CountStatistics`, or a numpy ``concentration`` is not
        numeric.
    ValueError
        If ``concentration`` is not one vector of K entries (``stats.n_categories``; for a
        tensor, where its length is static), or a numpy ``concentration`` has an entry that
        is not finite and strictly positive, or ``concentration`` is labelled (pass
        ``concentration.values`` in the counts' order, e.g.
        ``prior_concentration(concentration, K, categories=counts["category"])``).
        Symbolic values are not checked: the checks
        cost O(K) per call and add nothing to a compiled graph.

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
    if not isinstance(stats, CountStatistics):
        raise TypeError(
            "stats must be the CountStatistics of the counts (from count_statistics(counts)), "
            f"but got {type(stats).__name__}"
        )
    if _is_labelled(concentration):  # the statistics hold category positions, no labels
        kind = "an xarray.DataArray" if is_dataarray(concentration) else "a pandas object"
        raise ValueError(
            "concentration must be read by position against stats (count_statistics keeps "
            f"no category labels to read it by), but got {kind} labelled by category; pass "
            "concentration.values in the order of the counts' categories (e.g. "
            "prior_concentration(concentration, K, categories=counts['category']))"
        )
    f = _backend(concentration)
    k = stats.n_categories
    if f["where"] is np.where:
        concentration = _check_concentration(concentration, k)
        if concentration.ndim != 1:
            raise ValueError(
                "concentration must be one vector (K,) of Dirichlet concentrations, but got "
                f"shape {concentration.shape}; for one per draw use log_likelihood"
            )
        category = stats.category  # statistics built by hand: at least their categories
        if (
            k is None
            and isinstance(category, np.ndarray)
            and category.size
            and category.max() >= len(concentration)
        ):
            raise ValueError(
                f"concentration must have an entry for each of the counts' categories (at "
                f"least {int(category.max()) + 1}), but got {len(concentration)}"
            )
    else:  # a tensor: its static length, where known (no symbolic check in the graph)
        static = getattr(getattr(concentration, "type", None), "shape", None)
        if k is not None and static and static[-1] is not None and static[-1] != k:
            raise ValueError(
                f"concentration must have {k} entries (one per category), but got a tensor "
                f"of static shape {tuple(static)}"
            )
    a = concentration[stats.category]
    big_a = f["sum"](concentration)
    # sum_k x_k log a_k - n log A = sum_k x_k log(a_k / A) item by item: the log-gamma
    # differences become log(a_k / A) and excesses that vanish as A grows (the multinomial)
    pairs = f["sum"](
        stats.weight * (stats.value * f["log"](a / big_a) + _log_pochhammer_excess(a, stats.value))
    )
    totals = f["sum"](stats.total_weight * _log_pochhammer_excess(big_a, stats.total))
    return pairs - totals


def log_likelihood(counts: Any, concentration: Any) -> np.ndarray:
    """Pointwise log likelihood ``log p(y_i | a)`` for every item and every draw of ``a``.

    Parameters
    ----------
    counts : array_like of int, shape (items, K), or xarray.DataArray
        Answers per item and category. A DataArray with a ``category`` dimension is read by
        its dim names (dims ``("category", "item")`` as its transpose); otherwise the
        categories are on the last axis.
    concentration : array_like, pandas.Series or xarray.DataArray, shape (..., K)
        Dirichlet concentration of ``q_i``: one vector (fixed prior) or one per draw (e.g.
        shape (chain, draw, K) for a learned prior). An array is read by position. A Series
        indexed by the category labels, or a DataArray with a coordinate along the counts'
        category dimension (its other dimensions being draws), is read by its labels: put in
        the order of the categories of ``counts``, a DataArray with a category coordinate
        (:func:`ambppl.internal.checks.category_aligned`).

    Returns
    -------
    numpy.ndarray, shape (..., items)
        The module docstring's ``log p(y_i | theta)``. For a single concentration vector the
        result has shape (items,).

    Raises
    ------
    ValueError
        If ``counts`` is not a matrix (items, K) of non-negative whole numbers, or
        ``concentration`` does not have K entries on its last axis or has an entry that is
        not finite and strictly positive; if a labelled ``concentration`` has other labels
        than the counts' categories, has a dimension of the counts other than the
        categories (``item``), is a DataFrame, or ``counts`` have no category labels to read
        it by (a numpy array, a DataFrame: pass ``concentration.values`` in their order).
    TypeError
        If ``counts`` or ``concentration`` is not numeric.

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
    >>> import pandas as pd, xarray as xr
    >>> counts = xr.DataArray([[2, 0], [0, 2]], dims=("item", "category"),
    ...                       coords={"category": ["yes", "no"]})
    >>> by_label = log_likelihood(counts, pd.Series({"no": 3.0, "yes": 1.0}))
    >>> bool(np.allclose(by_label, log_likelihood([[2, 0], [0, 2]], [1.0, 3.0])))
    True
    """

    counts = categories_last(counts)  # labelled counts: read by the 'category' name
    values = _count_matrix(counts)
    k = values.shape[1]
    concentration = _concentration_by_label(concentration, counts)  # labelled: by label
    a = _check_concentration(concentration, k)  # O(draws K): below the draws x rows work
    # Items repeat count vectors (at most C(n + K - 1, K - 1) distinct ones for n answers):
    # evaluate once per distinct vector, then one gather to the items.
    # The same stable form as dirichlet_multinomial_logp: x log(a_k / A) plus excesses.
    distinct, to_item = np.unique(values, axis=0, return_inverse=True)
    out = np.zeros((*a.shape[:-1], distinct.shape[0]))
    big_a = a.sum(axis=-1)[..., None]
    for j in range(k):
        uniq, inverse = np.unique(distinct[:, j], return_inverse=True)
        aj = a[..., j, None]
        table = uniq * np.log(aj / big_a) + _log_pochhammer_excess(aj, uniq)
        out += np.take(table, inverse.reshape(-1), axis=-1)
    uniq, inverse = np.unique(distinct.sum(axis=1), return_inverse=True)
    table = -_log_pochhammer_excess(big_a, uniq)
    out += np.take(table, inverse.reshape(-1), axis=-1)
    return np.take(out, to_item.reshape(-1), axis=-1)


def answer_codes(answers: Any, model: str) -> dict[str, Any]:
    """Integer codes of an answers table's items, raters and categories, checked.

    Parameters
    ----------
    answers : pandas.DataFrame
        One row per answer, columns ``item``, ``rater`` and ``label`` (a categorical in the
        category order), ``attrs["cant_solve"]`` naming the can't-solve label or None: what
        :func:`ambppl.data.read_long` returns.
    model : str
        The model's name, for the messages.

    Returns
    -------
    dict
        ``item``, ``rater``, ``y`` (int64 codes, one per answer; items and raters in order of
        first appearance), ``item_ids``, ``rater_ids``, ``categories`` (labels as text) and
        ``cant_solve`` (the label, or None).

    Raises
    ------
    TypeError
        For something other than such a table, or a label column that is not categorical.
    ValueError
        For an empty table, answers without a rater id, item or rater ids that are
        different values printing the same (``1`` and ``"1"``), missing labels, or a
        can't-solve label that is not a category.

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data import read_long
    >>> frame = pd.DataFrame({"item": [1, 1, 2], "rater": ["a", "b", "a"],
    ...                       "label": ["x", "y", "x"]})
    >>> codes = answer_codes(read_long(frame, item="item", rater="rater", label="label"), "m")
    >>> codes["item"].tolist(), codes["rater"].tolist(), codes["y"].tolist()
    ([0, 0, 1], [0, 1, 0], [0, 1, 0])
    """
    import pandas as pd

    if not isinstance(answers, pd.DataFrame) or not {"item", "rater", "label"} <= set(answers):
        raise TypeError(
            "answers must be a pandas.DataFrame with columns item, rater, label (one row per "
            f"answer, as ambppl.data.readers.read_long returns), but got {type(answers).__name__}"
        )
    label = answers["label"]
    if not isinstance(label.dtype, pd.CategoricalDtype):
        raise TypeError(
            "answers['label'] must be a pandas.Categorical (categories in order, can't-solve "
            f"last; see ambppl.data.readers.read_long), but got dtype {label.dtype}"
        )
    if len(answers) == 0:
        raise ValueError("answers must have at least one row, but got an empty table")
    no_rater = np.asarray(answers["rater"].isna())
    missing = int(no_rater.sum())
    counts_model = say("'hierarchical_dirichlet'", "--model hierarchical_dirichlet")
    if missing == len(answers):  # no rater column (read_long(..., rater=None)), or none filled
        column = say(
            "name the rater column with rater= (e.g. ambppl.fit(ambppl.data.read_long(data, "
            f"rater='worker'), '{model}'))",
            "name the rater column with --rater (its 0-based position with --no-header)",
        )
        raise ValueError(
            f"the {model} model needs the rater of every answer, but all {len(answers)} "
            f"answers have no rater id; {column}, or use a model of counts such as "
            f"{counts_model}"
        )
    if missing:  # the rater column was named, but some of its cells are empty
        first = answers["item"].iloc[int(np.argmax(no_rater))]
        first = first.item() if isinstance(first, np.generic) else first
        where = say(
            "the data (read_long(..., rater=...) keeps an answer whose rater cell is empty)",
            "the file",
        )
        raise ValueError(
            f"the {model} model needs the rater of every answer, but {missing} of "
            f"{len(answers)} answers have no rater id (the first on item {first!r}); fill in "
            f"their rater ids or drop those rows from {where}, or use a model of counts such "
            f"as {counts_model}"
        )
    if label.isna().any():
        raise ValueError("answers['label'] must have no missing labels (read_long drops them)")
    item_code, item_ids = pd.factorize(answers["item"], sort=False)
    rater_code, rater_ids = pd.factorize(answers["rater"], sort=False)
    for role, ids in (("item", item_ids), ("rater", rater_ids)):
        # 1 and "1": two ids no output tells apart (the readers' own refusal)
        refuse_alike_ids(ids, f"answers[{role!r}]", f"answers[{role!r}]", role)
    categories = [str(c) for c in label.cat.categories]
    cs_label = answers.attrs.get("cant_solve")
    if cs_label is not None and str(cs_label) not in categories:
        raise ValueError(
            f"answers.attrs['cant_solve'] must be one of the categories {categories}, but got "
            f"{cs_label!r}"
        )
    return {
        "item": item_code.astype(np.int64),
        "rater": rater_code.astype(np.int64),
        "y": label.cat.codes.to_numpy().astype(np.int64),
        # 0 and "x1" (printing apart, checked above): as text, as the readers give them
        "item_ids": list(ids_of_one_type(item_ids)),
        "rater_ids": list(ids_of_one_type(rater_ids)),
        "categories": categories,
        "cant_solve": None if cs_label is None else str(cs_label),
    }


#: Most quasi-Monte Carlo nodes :func:`qmc_normal_nodes` draws (``n_nodes``): 256 times the
#: catalog models' default of 256, whose largest error of any ``q_ik`` is already 0.01 at
#: most (``sigma_rater`` near 2; ``rater_effects``' docstring). A bound up front: the nodes'
#: arrays grow with it (for ``rater_effects`` items x nodes x categories per log density),
#: and 10^9 nodes ran out of memory inside scipy instead of being refused.
MAX_QMC_NODES = 2**16


def qmc_normal_nodes(n_nodes: int, dim: int, seed: int) -> np.ndarray:
    """Quasi-Monte Carlo standard normal nodes: ``Phi^-1`` of scrambled Sobol points.

    Parameters
    ----------
    n_nodes : int
        Number of nodes ``S`` (a power of two keeps the Sobol sequence balanced), at most
        :data:`MAX_QMC_NODES`. On the ambppl command line, whose ``--param`` reads numbers
        as floats, a whole number (512.0) is taken too.
    dim : int
        Dimension of each node.
    seed : int
        Seed of the scrambling (fixed per model, so its fits are reproducible).

    Returns
    -------
    numpy.ndarray, shape (S, dim)
        The first ``S`` points of the sequence (the next power of two is drawn and cut:
        :meth:`scipy.stats.qmc.Sobol.random_base2` takes powers of two only).

    Raises
    ------
    TypeError
        If ``n_nodes`` is not an integer (2.5, True).
    ValueError
        If ``n_nodes`` is not positive, or more than :data:`MAX_QMC_NODES`. The messages
        name the model parameter in the caller's words (``--param n_nodes=...`` on the
        ambppl command line).

    Examples
    --------
    >>> qmc_normal_nodes(64, 3, seed=1).shape
    (64, 3)
    """
    from scipy.stats import norm, qmc

    name = parameter_name("n_nodes")
    wanted = f"a positive integer of at most {MAX_QMC_NODES}"
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int | np.integer):
        raise TypeError(f"{name} must be {wanted}, but got {n_nodes!r}")
    if not 1 <= n_nodes <= MAX_QMC_NODES:
        raise ValueError(
            f"{name} must be {wanted} (the default, 256, keeps the error of q at 0.01 or "
            f"less), but got {n_nodes!r}"
        )
    sobol = qmc.Sobol(d=dim, scramble=True, rng=np.random.default_rng(seed))
    m = int(np.ceil(np.log2(n_nodes)))
    return norm.ppf(sobol.random_base2(m)[:n_nodes])


def is_unanimous(item_counts: np.ndarray) -> bool:
    """Whether the answers agree on every item of a design models of raters cannot learn from.

    Parameters
    ----------
    item_counts : numpy.ndarray, shape (items, categories)
        Answers per item and category.

    Returns
    -------
    bool
        ``True`` where every item with two or more answers is unanimous and there are at
        least :data:`UNANIMOUS_MIN_ITEMS` of them (fewer say too little).

    Examples
    --------
    >>> is_unanimous(np.array([[3, 0]] * 10)), is_unanimous(np.array([[3, 0]] * 9 + [[2, 1]]))
    (True, False)
    """
    several = item_counts[item_counts.sum(axis=1) >= 2]
    return len(several) >= UNANIMOUS_MIN_ITEMS and bool(
        np.all(several.max(axis=1) == several.sum(axis=1))
    )


def warn_if_unanimous(item_counts: np.ndarray, *, model: str, consequence: str) -> bool:
    """Say before sampling when every item's answers agree (a design models of raters
    cannot learn from).

    Parameters
    ----------
    item_counts : numpy.ndarray, shape (items, categories)
        Answers per item and category.
    model : str
        The model's name (the warning's first word and record).
    consequence : str
        What such data do to this model, and what to do instead (the rest of the message).

    Returns
    -------
    bool
        Whether it warned: every item with two or more answers is unanimous, and there are at
        least :data:`UNANIMOUS_MIN_ITEMS` of them (fewer say too little to warn).

    Warns
    -----
    ambppl.ConvergenceWarning
        Without a convergence record: the command line prints it as one ``warning:`` line.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_if_unanimous(np.array([[3, 0]] * 10), model="m", consequence="x")
    True
    >>> str(seen[0].message)
    'm: the answers agree on every one of the 10 items with two or more answers, x'
    """
    if not is_unanimous(item_counts):
        return False
    several = int((item_counts.sum(axis=1) >= 2).sum())
    warnings.warn(
        ConvergenceWarning(
            f"{model}: the answers agree on every one of the {several} items with two or "
            f"more answers, {consequence}",
            model=model,
        ),
        stacklevel=3,
    )
    return True
