"""Point estimators of ambiguity from answer counts, and their exact expectations and biases.

Three estimators (:func:`estimate`):

* ``"plugin"`` -- the measure of the empirical frequencies ``counts / n`` (paper section
  3.3). For ``amb`` it is biased low; its exact mean is :func:`expected_plugin`.
* ``"less_biased"`` -- :errata:`E8`: replaces ``sum_k p_k^2`` by its unbiased U-statistic
  ``sum_k n_k (n_k - 1) / (m (m - 1))`` (``m`` = proper answers), so the only bias left comes
  from items with a single proper answer: ``-q_cs^(n-1) (amb - q_cs)``
  (:func:`less_biased_bias`). No exactly unbiased estimator exists because ``amb`` is not a
  polynomial in ``q``.
* ``"posterior_mean"`` -- the mean of the measure under the conjugate posterior
  ``Dirichlet(counts + prior)`` (:func:`ambppl.dirichlet_mean`).

All are vectorized over items: counts have the categories on the last axis.

The "modified" measure is an affine function of ``amb`` and ``q_cs`` (paper eq.
``rel_mod_unmod``: ``(C amb - q_cs) / (C - 1)``) and ``q_cs`` has the unbiased estimator
``n_cs / n``; so the same affine map turns every statement about ``amb`` estimators into one
about the modified measure, with biases multiplied by ``C / (C - 1)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.internal.checks import (
    as_float_array,
    category_aligned,
    check_cant_solve,
    check_counts,
    check_n_proper,
    check_option,
    check_positive_scalar,
    check_prior_total,
    check_probabilities,
    item_aligned,
    resolve_cant_solve,
)
from ambppl.internal.docstrings import filled
from ambppl.internal.labels import (
    category_dim,
    is_dataarray,
    over_categories,
    refuse_array_dim,
)
from ambppl.maths.measures import MEASURES, evaluate, min_proper
from ambppl.maths.moments import dirichlet_mean, pair_products

__all__ = ["estimate", "expected_plugin", "less_biased_bias", "plugin_bias"]

#: Estimation methods accepted by :func:`estimate`.
METHODS: tuple[str, ...] = ("plugin", "less_biased", "posterior_mean")

#: Measures whose expectation / bias functions below are exact (affine in amb and q_cs).
_BIAS_MEASURES = ("amb", "modified")


def _split_last(arr: np.ndarray, idx: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(proper entries, can't-solve entry or None) along the last axis."""
    if idx is None:
        return arr, None
    if idx == arr.shape[-1] - 1:
        return arr[..., :-1], arr[..., -1]
    return np.delete(arr, idx, axis=-1), arr[..., idx]


def _pairs(a: np.ndarray) -> np.ndarray:
    """``sum_{j<k} a_j a_k`` over the last axis, for any batch shape."""
    k = a.shape[-1]
    flat = np.asarray(a, dtype=np.float64).reshape(-1, k)
    return pair_products(flat.T).reshape(a.shape[:-1])


def _flip_factor(measure: str, n_proper: int) -> float:
    """1 for amb, C/(C-1) for the modified measure."""
    return 1.0 if measure == "amb" else n_proper / (n_proper - 1.0)


def _check_items_answered(total: np.ndarray, method: str) -> None:
    if total.ndim == 0:  # the counts of one item (1-D): np.argwhere finds no index in 0-d
        if total == 0:
            raise ValueError(
                f"counts must have at least one answer for method={method!r}, but the item "
                "has none (all its counts are 0); use method='posterior_mean', which is "
                "defined without answers"
            )
        return
    empty = np.argwhere(total == 0)
    if empty.size:
        where = tuple(int(i) for i in empty[0])
        index = where[0] if len(where) == 1 else where
        raise ValueError(
            f"counts must have at least one answer per item for method={method!r}, but item "
            f"{index} has none ({len(empty)} such item(s)); drop them or use "
            "method='posterior_mean', which is defined without answers"
        )


def _is_scalar(prior: Any) -> bool:
    """A prior that is one value (np.ndim, which raised numpy's error for ragged lists)."""
    return prior is None or np.isscalar(prior) or getattr(prior, "ndim", None) == 0


def _check_prior(prior: Any, shape: tuple[int, ...]) -> Any:
    """The prior of counts of ``shape``: a positive scalar, or an array broadcasting to it."""
    n_categories = shape[-1]
    if _is_scalar(prior):
        value = check_positive_scalar(
            prior[()] if isinstance(prior, np.ndarray) else prior, "prior"
        )
        check_prior_total(np.full(n_categories, value), "prior")
        return value
    arr = as_float_array(prior, "prior")
    if np.asarray(prior).dtype == np.bool_:  # as True is refused (as_float_array reads 1.0)
        raise TypeError(
            "prior must be a positive number or positive numbers (one per category), but got "
            + (f"booleans {np.asarray(prior).tolist()!r}" if arr.size <= 8 else "booleans")
        )
    if arr.shape[-1] != n_categories:
        raise ValueError(
            f"prior must be a positive number or have one entry per category ({n_categories}) "
            f"on its last axis, but got shape {arr.shape}"
        )
    try:
        joint = np.broadcast_shapes(arr.shape, shape)
    except ValueError:
        joint = None
    if joint != tuple(shape):
        raise ValueError(
            f"prior must broadcast against counts of shape {tuple(shape)} (one concentration "
            f"per category, or one row per item), but got shape {arr.shape}; pass shape "
            f"({n_categories},) for every item alike or {tuple(shape)} for one row per item"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"prior must contain finite, strictly positive concentrations, but got {arr.tolist()!r}"
            if arr.size <= 8
            else "prior must contain finite, strictly positive concentrations"
        )
    check_prior_total(arr, "prior")
    return arr


def _check_sample_size(n: Any) -> np.ndarray:
    arr = as_float_array(n, "n")
    if np.asarray(n).dtype == np.bool_:  # True would be read as 1 answer
        shown = (
            repr(bool(n)) if arr.ndim == 0 else f"booleans {np.asarray(n).ravel()[:5].tolist()!r}"
        )
        raise TypeError(f"n must be whole numbers >= 1 (answers per item), but got {shown}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 1) or np.any(arr != np.round(arr)):
        bad = arr[~(np.isfinite(arr) & (arr >= 1) & (arr == np.round(arr)))]
        raise ValueError(
            f"n must be whole numbers >= 1 (answers per item), but got {bad.ravel()[:5].tolist()!r}"
        )
    return arr


def _less_biased(counts: np.ndarray, idx: int | None, measure: str) -> np.ndarray:
    # errata E8: a_hat = 1 - sum_k n_k (n_k - 1) / (n (m - 1)) for m >= 2 (1 for m = 0,
    # 1 - 1/n for m = 1), written without cancellation as
    # a_hat = n_cs / n + 2 sum_{j<k} n_j n_k / (n (m - 1)), the second term 0 for m <= 1.
    proper, n_cs = _split_last(counts, idx)
    n = counts.sum(axis=-1).astype(np.float64)
    m = proper.sum(axis=-1).astype(np.float64)
    e2 = _pairs(proper)
    denom = np.where(m >= 2, n * (m - 1.0), 1.0)
    flips = np.where(m >= 2, 2.0 * e2 / denom, 0.0)
    flips = _flip_factor(measure, proper.shape[-1]) * flips
    return flips if n_cs is None else n_cs / n + flips


def estimate(
    counts: Any,
    method: str = "plugin",
    measure: str = "amb",
    *,
    prior: Any = 1.0,
    cant_solve: int | str | None = "auto",
    dim: str | None = None,
) -> Any:
    r"""Estimate the ambiguity of each item from its answer counts.

    Parameters
    ----------
    counts : array_like of int or xarray.DataArray
        Answer counts, categories on the last axis (any batch shape of items before it); a
        DataArray has them on ``dim``.
    method : {"plugin", "less_biased", "posterior_mean"}, default "plugin"
        ``"plugin"`` applies the measure to ``counts / n``; ``"less_biased"`` is the estimator
        of :errata:`E8` (``measure`` "amb" or "modified"); ``"posterior_mean"`` is the
        exact mean under ``Dirichlet(counts + prior)``.
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        Which ambiguity measure.
    prior : float, array_like, xarray.DataArray or pandas.Series, default 1.0
        Dirichlet prior for ``"posterior_mean"``: a symmetric concentration ``beta`` or one
        concentration per category (categories on the last axis, broadcast against
        ``counts`` without changing its shape: ``(K,)`` or one row per item). A labelled
        prior is read by label, as ``counts + prior`` would be: a DataArray with a
        coordinate along the categories (or any other dimension of ``counts``) is put in the
        order of ``counts``' labels, and a Series is labelled by its index (the category
        labels); the labels must be those of ``counts``, which must be a DataArray labelled
        along that dimension (with a bare array pass ``prior.values`` in its order). A
        DataArray prior without coordinates is read by position. Not used by "plugin"
        and "less_biased", but checked with every method (a non-positive prior raises).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    dim : str, optional
        For a DataArray: the dimension holding the categories (default ``"category"`` if
        present, else the last).

    Returns
    -------
    numpy.ndarray, numpy.float64 or xarray.DataArray
        One estimate per item, shape ``counts.shape[:-1]``. A DataArray gives a DataArray
        without ``dim``, its other coordinates (``item``) kept, lazy where ``counts`` is
        dask-backed (one task per chunk of items; bad counts then raise when computed).

    Raises
    ------
    ValueError
        If counts are negative, not whole or not finite; if an item has no answers and
        ``method`` is "plugin" or "less_biased" (the message names the first such item);
        if ``method``/``measure`` is unknown; if ``prior`` is not positive and finite, has
        the wrong number of categories or does not broadcast against ``counts``, or is
        labelled with labels other than those of ``counts`` (or ``counts`` have none), or
        varies by item where ``counts`` are dask-backed (whichever the method); if
        ``cant_solve`` is out of range, a string other than ``"auto"`` or contradicts
        ``counts.attrs["cant_solve"]``; if the measure needs more proper categories.
    NotImplementedError
        For ``method="less_biased"`` with ``measure`` "old" or "entropy".
    TypeError
        If counts or ``prior`` are not numeric (booleans included, as ``prior=True``) or
        ``cant_solve`` is not an integer, None or a string, or ``dim`` is given with an
        array; ragged nested lists raise a ``ValueError`` that is also a ``TypeError``.

    Notes
    -----
    Plug-in: paper section 3.3, :math:`1 - \sum_k n_k^2 / (n (n - n_{cs}))` for amb.

    Less biased (:errata:`E8`), with :math:`m = n - n_{cs}` proper answers:
    :math:`\hat a = 1 - \sum_k n_k(n_k-1) / (n(m-1))` for :math:`m \ge 2`, 1 for
    :math:`m = 0` and :math:`1 - 1/n` for :math:`m = 1`, computed without cancellation as
    :math:`n_{cs}/n + 2\sum_{j<k} n_j n_k / (n(m-1))`. For the modified measure the
    estimator is :math:`(C\hat a - n_{cs}/n)/(C-1)` (eq. ``rel_mod_unmod`` with the unbiased
    :math:`n_{cs}/n`); its bias is :math:`C/(C-1)` times that of :math:`\hat a`. Being
    (nearly) unbiased it can exceed 1 for the modified measure (e.g. two different proper
    answers and nothing else give :math:`C/(C-1)`); it is not clipped, which would bias it.

    An item without answers has no plug-in or less-biased estimate (0/0); it raises rather
    than silently returning NaN.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.3.

    Examples
    --------
    >>> import ambppl
    >>> counts = [[5, 5, 5], [5, 0, 0], [30, 0, 0]]
    >>> ambppl.estimate(counts).round(6).tolist()
    [0.666667, 0.0, 0.0]
    >>> ambppl.estimate(counts, "less_biased").round(6).tolist()
    [0.703704, 0.0, 0.0]
    >>> ambppl.estimate(counts, "posterior_mean").round(6).tolist()
    [0.641026, 0.3125, 0.087236]
    """
    if is_dataarray(counts):
        check_option(method, METHODS, "method")  # argument errors at once, even when lazy
        check_option(measure, MEASURES, "measure")
        dim = category_dim(counts, dim, "estimate")
        idx = resolve_cant_solve(counts, cant_solve, dim=dim, name="counts")
        prior = category_aligned(prior, counts, dim=dim)  # by label, as counts + prior would
        shape = () if _is_scalar(prior) else as_float_array(prior, "prior").shape
        if counts.chunks and len(shape) > 1 and max(shape[:-1]) > 1:
            raise ValueError(
                "prior must be the same for every item where counts are dask-backed (computed "
                f"chunk by chunk), but got shape {shape}; compute the counts first "
                "(counts.compute()) or pass one concentration per category"
            )
        return over_categories(
            lambda c: estimate(c, method, measure, prior=prior, cant_solve=idx),
            counts,
            dim=dim,
            name=f"{measure}_{method}",
            where="estimate",
        )
    refuse_array_dim(dim, "estimate")
    prior = category_aligned(prior, counts)  # refuses labels that counts cannot match
    check_option(method, METHODS, "method")
    check_option(measure, MEASURES, "measure")
    if method == "less_biased" and measure not in _BIAS_MEASURES:
        raise NotImplementedError(
            f"method='less_biased' is defined for measure 'amb' and 'modified' only, not "
            f"{measure!r} (no unbiased U-statistic form is known); use 'plugin' or "
            "'posterior_mean'"
        )
    arr = check_counts(counts)
    k = arr.shape[-1]
    idx = check_cant_solve(resolve_cant_solve(counts, cant_solve, name="counts"), k)
    check_n_proper(
        k - (idx is not None), min_proper(measure), f"estimate(measure={measure!r})", measure
    )
    checked_prior = _check_prior(prior, arr.shape)  # checked by every method, used by one
    if method == "posterior_mean":
        alpha = arr + checked_prior
        return dirichlet_mean(alpha, measure, cant_solve=idx)
    total = arr.sum(axis=-1)
    _check_items_answered(total, method)
    if method == "plugin":
        return evaluate(measure, arr / total[..., None], cant_solve=idx)
    out = _less_biased(arr, idx, measure)
    return out[()] if out.ndim == 0 else out


def _bias_parts(
    q: Any, n: Any, measure: str, cant_solve: int | str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Checked (u = q_cs, b = 1 - q_cs, G = 1 - sum p_k^2, n, flip factor), broadcast."""
    check_option(measure, MEASURES, "measure")
    if measure not in _BIAS_MEASURES:
        raise NotImplementedError(
            f"the exact plug-in / less-biased expectations are implemented for measure 'amb' "
            f"and 'modified' only, not {measure!r} (no closed form is known); estimate them by "
            "simulation"
        )
    # before the sums: a DataArray with its categories first is told to transpose, not to
    # normalize (its columns do not sum to 1)
    position = resolve_cant_solve(q, cant_solve, name="q")
    arr = check_probabilities(q, -1)
    k = arr.shape[-1]
    idx = check_cant_solve(position, k)
    check_n_proper(k - (idx is not None), min_proper(measure), f"measure={measure!r}", measure)
    nn = _check_sample_size(item_aligned(n, q, name="n", data_name="q"))  # labelled: by item
    try:
        np.broadcast_shapes(arr.shape[:-1], nn.shape)
    except ValueError:
        raise ValueError(
            f"n must broadcast against the items of q: q has shape {arr.shape} (items "
            f"{arr.shape[:-1]}, categories last) and n shape {nn.shape}; pass one n per item "
            f"(shape {arr.shape[:-1]}) or a single n"
        ) from None
    proper, u = _split_last(arr, idx)
    b = proper.sum(axis=-1)
    if u is None:
        u = np.zeros_like(b)
    e2 = _pairs(proper)
    pos = b > 0
    b_safe = np.where(pos, b, 1.0)
    gini = np.where(pos, 2.0 * e2 / (b_safe * b_safe), 0.0)  # 1 - sum p_k^2, cancellation-free
    u, b, gini, nn = np.broadcast_arrays(u, b, gini, nn)
    return u, b, gini, nn, _flip_factor(measure, proper.shape[-1])


def _one_minus_power(u: np.ndarray, b: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``1 - u**n`` with ``b = 1 - u``, accurate also for u close to 1."""
    near_one = u >= 0.5
    b_near = np.where(near_one, b, 0.5)
    return np.where(near_one, -np.expm1(n * np.log1p(-b_near)), 1.0 - u**n)


def _scalar(x: np.ndarray) -> Any:
    return x[()] if x.ndim == 0 else x


#: The Parameters section of the three bias functions (``{bias_parameters}``).
_BIAS_PARAMETERS = """Parameters
    ----------
    q : array_like or xarray.DataArray
        True response probabilities, categories on the last axis (any batch shape).
    n : int, array_like of int, pandas.Series or xarray.DataArray
        Number of answers per item (>= 1; not a bool): by position, broadcast against
        ``q.shape[:-1]``; or labelled by item, read by its labels: a Series indexed by item,
        or a DataArray with coordinates along item dimensions of ``q``, is put in the order
        of ``q``'s labels; ``q`` must then be a DataArray labelled by the same items (a
        Series only where ``q`` has one dimension besides its categories).
    measure : {"amb", "modified"}, default "amb"
        Which measure.
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category."""

#: The Raises section of the three bias functions (``{bias_raises}``).
_BIAS_RAISES = """Raises
    ------
    ValueError
        If ``q`` is not a probability vector (or a DataArray with its ``category``
        dimension not last: transpose it), ``n`` is not a whole number >= 1 or does not
        broadcast against ``q.shape[:-1]``, ``n`` is labelled where ``q`` has no labels to
        align it with (a bare array or a DataFrame, or no coordinate along that dimension:
        pass ``n.values`` in the items' order), along a dimension that is not one of ``q``'s
        items, or with labels other than the items of ``q``, or ``measure``/``cant_solve``
        is invalid (or contradicts ``q.attrs["cant_solve"]``).
    TypeError
        If ``q`` or ``n`` is not numeric or ``n`` is a bool; ragged nested lists raise a
        ``ValueError`` that is also a ``TypeError``.
    NotImplementedError
        For ``measure`` "old" or "entropy" (no closed form)."""

_bias_sections = filled(bias_parameters=_BIAS_PARAMETERS, bias_raises=_BIAS_RAISES)


@_bias_sections
def plugin_bias(
    q: Any, n: Any, *, measure: str = "amb", cant_solve: int | str | None = "auto"
) -> Any:
    r"""Exact bias of the plug-in estimator for ``n`` answers drawn from ``q``.

    {bias_parameters}

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``E[estimate(counts, "plugin")] - measure(q)`` (<= 0).

    {bias_raises}

    Notes
    -----
    Paper appendix (plug-in consistency lemma) and :errata:`E8`:
    :math:`-\frac{1-q_{cs}^n}{n}\,(1 - \sum_k p_k^2)`, zero iff ``q_cs = 1`` or at most one
    proper category has mass (:errata:`E3`). Times :math:`C/(C-1)` for the modified measure.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       section 3.3 and appendix B.1.

    Examples
    --------
    >>> import ambppl
    >>> round(float(ambppl.plugin_bias([0.5, 0.4, 0.1], 10)), 6)
    -0.049383
    >>> float(ambppl.plugin_bias([0.5, 0.0, 0.5], 3))  # errata E3: no bias
    0.0
    """
    u, b, gini, nn, factor = _bias_parts(q, n, measure, cant_solve)
    return _scalar(0.0 - factor * _one_minus_power(u, b, nn) / nn * gini)


@_bias_sections
def expected_plugin(
    q: Any, n: Any, *, measure: str = "amb", cant_solve: int | str | None = "auto"
) -> Any:
    r"""Exact expectation of the plug-in estimator for ``n`` answers drawn from ``q``.

    {bias_parameters}

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``E[estimate(counts, "plugin")]`` for ``counts ~ Multinomial(n, q)``.

    {bias_raises}

    Notes
    -----
    Paper eq. ``plugin_estimator_mean`` (with :errata:`E2`'s corrected intermediate step):

    .. math:: E\,\mathrm{amb}(\hat q_n) = q_{cs} + (1 - q_{cs})\,G
              - \frac{1 - q_{cs}^n}{n}\,G, \qquad G = 1 - \sum_k p_k^2,

    and 1 when ``q_cs = 1``. For the modified measure, ``(C E amb - q_cs) / (C - 1)``.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.3.

    Examples
    --------
    >>> import ambppl
    >>> ambppl.expected_plugin([0.5, 0.4, 0.1], [1, 10, 1000]).round(6).tolist()
    [0.1, 0.495062, 0.543951]
    """
    u, b, gini, nn, factor = _bias_parts(q, n, measure, cant_solve)
    # E = u + factor * G * (b - (1 - u^n)/n); b - (1 - u^n)/n >= 0 is kept as one difference
    return _scalar(u + factor * gini * (b - _one_minus_power(u, b, nn) / nn))


@_bias_sections
def less_biased_bias(
    q: Any, n: Any, *, measure: str = "amb", cant_solve: int | str | None = "auto"
) -> Any:
    r"""Exact bias of the less-biased estimator (:errata:`E8`) for ``n`` answers from ``q``.

    {bias_parameters}

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``E[estimate(counts, "less_biased")] - measure(q)`` (<= 0).

    {bias_raises}

    Notes
    -----
    :errata:`E8`: :math:`-q_{cs}^{\,n-1}(\mathrm{amb} - q_{cs})`; the only bias comes from
    samples with exactly one proper answer. Without a can't-solve category it vanishes for
    ``n >= 2``. Times :math:`C/(C-1)` for the modified measure.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations",
       :errata:`E8`.

    Examples
    --------
    >>> import ambppl
    >>> round(float(ambppl.less_biased_bias([0.5, 0.4, 0.1], 10)) * 1e10, 6)
    -4.444444
    """
    u, b, gini, nn, factor = _bias_parts(q, n, measure, cant_solve)
    return _scalar(0.0 - factor * u ** (nn - 1.0) * b * gini)
