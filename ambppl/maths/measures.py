"""Ambiguity measures of a response distribution ``q``.

One implementation serves numpy arrays, :class:`xarray.DataArray` (a ``dim`` name instead
of ``axis``; coordinates kept) and PyTensor tensors, so a PyMC model can use the same
function for its ``pm.Deterministic`` nodes.

Convention: ``q = (q_1, ..., q_C, q_cs)`` with the categories on ``axis``; ``cant_solve`` is
the position of the "can't solve" answer (``None`` = the task has none, so ``q_cs = 0`` and
all entries are proper categories). Its default ``"auto"`` reads a labelled DataArray's
``attrs["cant_solve"]`` (as :func:`ambppl.read_annotations` sets it) and takes the last
category for bare arrays and tensors.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ambppl.internal.checks import (
    check_axis,
    check_cant_solve,
    check_n_proper,
    check_option,
    check_probabilities,
    resolve_cant_solve,
)
from ambppl.internal.labels import refuse_array_dim

__all__ = [
    "MEASURES",
    "VARIABLES",
    "amb",
    "amb_modified",
    "amb_old",
    "evaluate",
    "measures_for",
    "min_proper",
    "normalized_entropy",
]


class _NumpyOps:
    """The handful of array operations the kernels need, for numpy."""

    concatenate = staticmethod(np.concatenate)
    where = staticmethod(np.where)
    abs = staticmethod(np.abs)
    clip = staticmethod(np.clip)

    @staticmethod
    def sum(x: Any) -> Any:
        return np.sum(x, axis=-1)

    @staticmethod
    def entr(x: Any) -> Any:
        from scipy.special import entr  # imported here: scipy.special costs ~0.4 s to import

        return entr(x)


class _PyTensorOps:
    """The same operations for PyTensor tensors (imported only when one is passed)."""

    def __init__(self) -> None:
        import pytensor.tensor as pt
        from pytensor.tensor.special import xlogy

        self.pt = pt
        self.concatenate = pt.concatenate
        self.where = pt.switch
        self.abs = pt.abs
        self.clip = pt.clip
        self._xlogy = xlogy

    def sum(self, x: Any) -> Any:
        return self.pt.sum(x, axis=-1)

    def entr(self, x: Any) -> Any:
        return -self._xlogy(x, x)


def _split(q: Any, idx: int | None, ops: Any, n: int) -> tuple[Any, Any, Any]:
    """Return (proper entries, q_cs, b = sum of proper entries) with categories last.

    ``b`` is summed from the proper entries rather than computed as ``1 - q_cs``, which
    keeps it exact when ``q_cs`` is close to 1.
    """
    if idx is None:
        proper = q
        q_cs = 0.0 * ops.sum(q)
    else:
        proper = ops.concatenate([q[..., :idx], q[..., idx + 1 :]], axis=-1)
        q_cs = q[..., idx]
    return proper, q_cs, ops.sum(proper)


def _kernel_amb(q: Any, idx: int | None, ops: Any, n: int) -> Any:
    proper, _, b = _split(q, idx, ops, n)
    sumsq = ops.sum(proper * proper)
    pos = b > 0
    b_safe = ops.where(pos, b, 1.0)
    return ops.clip(ops.where(pos, 1.0 - sumsq / b_safe, 1.0), 0.0, 1.0)


def _kernel_modified(q: Any, idx: int | None, ops: Any, n: int) -> Any:
    proper, q_cs, b = _split(q, idx, ops, n)
    c = n - (idx is not None)
    sumsq = ops.sum(proper * proper)
    pos = b > 0
    b_safe = ops.where(pos, b, 1.0)
    val = q_cs + c / (c - 1) * (b - sumsq / b_safe)
    return ops.clip(ops.where(pos, val, 1.0), 0.0, 1.0)


def _kernel_old(q: Any, idx: int | None, ops: Any, n: int) -> Any:
    # 1 - (1 - q_cs)/2 * C/(C-1) * sum|p_k - 1/C| with p_k = q_k / b, written without the
    # division so that b = 0 (q_cs = 1) gives exactly 1.
    proper, _, b = _split(q, idx, ops, n)
    c = n - (idx is not None)
    dist = ops.sum(ops.abs(proper - b[..., None] / c))
    return ops.clip(1.0 - c / (2.0 * (c - 1)) * dist, 0.0, 1.0)


def _kernel_entropy(q: Any, idx: int | None, ops: Any, n: int) -> Any:
    return ops.clip(ops.sum(ops.entr(q)) / math.log(n), 0.0, 1.0)


#: Measure name -> (kernel, minimum number of proper categories, display name).
_KERNELS = {
    "amb": (_kernel_amb, 1, "amb"),
    "modified": (_kernel_modified, 2, "amb_modified"),
    "old": (_kernel_old, 2, "amb_old"),
    "entropy": (_kernel_entropy, 1, "normalized_entropy"),
}

#: Names accepted by ``measure=`` arguments throughout the package.
MEASURES: tuple[str, ...] = tuple(_KERNELS)

#: Measure name -> name of its posterior variable, the same in every catalog model.
#: This module holds the package's one measure table: every other module (fit, summaries,
#: moments, estimators, the model files through
#: :func:`ambppl.inference.modeling.add_measures`) reads the names, the variable names and
#: the minimum number of proper categories from here.
VARIABLES: dict[str, str] = {
    "amb": "amb",
    "modified": "amb_modified",
    "old": "amb_old",
    "entropy": "entropy",
}


def min_proper(measure: str) -> int:
    """The fewest proper categories (besides can't-solve) a measure is defined for.

    Parameters
    ----------
    measure : {"amb", "modified", "old", "entropy"}
        A measure name.

    Returns
    -------
    int
        1 for ``"amb"`` and ``"entropy"``, 2 for ``"modified"`` and ``"old"`` (their
        normalization ``C / (C - 1)`` needs ``C >= 2``).

    Raises
    ------
    ValueError
        For an unknown measure.

    Examples
    --------
    >>> min_proper("modified")
    2
    """

    return _KERNELS[check_option(measure, MEASURES, "measure")][1]


def evaluate(
    measure: str,
    q: Any,
    cant_solve: int | str | None = "auto",
    axis: int = -1,
    dim: str | None = None,
) -> Any:
    """Any measure by name: ``evaluate("modified", q)`` is ``amb_modified(q)``.

    Parameters
    ----------
    measure : {"amb", "modified", "old", "entropy"}
        The measure.
    q, cant_solve, axis, dim
        As for :func:`amb` (numpy arrays, xarray DataArrays or PyTensor tensors); the
        default ``cant_solve="auto"`` reads a DataArray's ``attrs["cant_solve"]`` and takes
        the last category for bare arrays and tensors.

    Returns
    -------
    Same kind as ``q``
        The measure of every response distribution.

    Raises
    ------
    ValueError
        For an unknown measure, or as the measure's own function raises.

    Examples
    --------
    >>> float(evaluate("amb", [0.5, 0.5, 0.0]))
    0.5
    """

    return _apply(check_option(measure, MEASURES, "measure"), q, cant_solve, axis, dim)


def measures_for(n_proper: int) -> tuple[str, ...]:
    """The measures defined for ``n_proper`` proper categories, in the order of MEASURES.

    Parameters
    ----------
    n_proper : int
        Number of proper categories (can't-solve not counted), a non-negative integer.

    Returns
    -------
    tuple of str
        Measure names; ``"modified"`` and ``"old"`` need two proper categories (none is
        defined for 0).

    Raises
    ------
    TypeError
        If ``n_proper`` is not an integer.
    ValueError
        If ``n_proper`` is negative.

    Examples
    --------
    >>> measures_for(1), len(measures_for(4))
    (('amb', 'entropy'), 4)
    """
    if isinstance(n_proper, bool) or not isinstance(n_proper, numbers.Integral):
        raise TypeError(
            "n_proper must be a non-negative integer (the number of proper categories), "
            f"but got {n_proper!r}"
        )
    if n_proper < 0:
        raise ValueError(
            "n_proper must be a non-negative integer (the number of proper categories), "
            f"but got {n_proper!r}"
        )
    return tuple(m for m in MEASURES if n_proper >= _KERNELS[m][1])


def _apply(measure: str, q: Any, cant_solve: int | str | None, axis: int, dim: str | None) -> Any:
    kernel, min_proper, fname = _KERNELS[measure]
    module = type(q).__module__
    if module.startswith("xarray"):
        return _apply_xarray(measure, q, cant_solve, dim)
    cant_solve = resolve_cant_solve(q, cant_solve, name="q")  # "auto": the last category
    refuse_array_dim(dim, fname, "for arrays use axis=")
    if module.startswith("pytensor"):
        ops = _PyTensorOps()
        ax = check_axis(axis, q.ndim)
        n = q.type.shape[ax]
        if n is None:
            raise ValueError(
                f"{fname}: the category axis of a PyTensor q must have a static length; "
                "build it with a known shape (e.g. pm.Dirichlet with a shape or dims)"
            )
        idx = check_cant_solve(cant_solve, n)
        check_n_proper(n - (idx is not None), min_proper, fname, measure)
        return kernel(ops.pt.moveaxis(q, ax, -1), idx, ops, n)
    return measure_numpy(measure, q, cant_solve, axis, check=True)


def measure_numpy(measure: str, q: Any, cant_solve: int | None, axis: int, *, check: bool) -> Any:
    kernel, min_proper, fname = _KERNELS[measure]
    arr = check_probabilities(q, axis) if check else np.asarray(q, dtype=np.float64)
    ax = check_axis(axis, arr.ndim)
    n = arr.shape[ax]
    idx = check_cant_solve(cant_solve, n)
    check_n_proper(n - (idx is not None), min_proper, fname, measure)
    out = kernel(np.moveaxis(arr, ax, -1), idx, _NumpyOps, n)
    return out[()] if out.ndim == 0 else out


def _apply_xarray(measure: str, q: Any, cant_solve: int | str | None, dim: str | None) -> Any:
    import xarray as xr

    fname = _KERNELS[measure][2]
    if dim is None:
        dim = "category" if "category" in q.dims else q.dims[-1]
    if dim not in q.dims:
        raise ValueError(f"{fname}: dim must be one of {list(q.dims)}, but got {dim!r}")
    n = q.sizes[dim]
    idx = check_cant_solve(resolve_cant_solve(q, cant_solve, dim=dim, name="q"), n)
    check_n_proper(n - (idx is not None), _KERNELS[measure][1], fname, measure)
    if not q.chunks:  # eager data is checked once here; dask chunks are checked as computed
        check_probabilities(q.values, q.dims.index(dim))

    def func(values: np.ndarray) -> np.ndarray:
        return measure_numpy(measure, values, idx, -1, check=bool(q.chunks))

    out = xr.apply_ufunc(
        func,
        q,
        input_core_dims=[[dim]],
        dask="parallelized",
        output_dtypes=[np.float64],
        keep_attrs=False,
    )
    return out.rename(fname)


def amb[T](
    q: T, *, cant_solve: int | str | None = "auto", axis: int = -1, dim: str | None = None
) -> T:
    r"""Ambiguity: probability of "can't solve" or of a label flip between two answers.

    Parameters
    ----------
    q : array_like, xarray.DataArray or pytensor TensorVariable
        Response probabilities along ``axis`` (non-negative, summing to 1 within 1e-6).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    axis : int, default -1
        Axis holding the categories (numpy and PyTensor inputs).
    dim : str, optional
        Dimension holding the categories for a DataArray (default ``"category"`` if present,
        else the last dimension).

    Returns
    -------
    same kind as ``q``
        amb(q) with the category axis removed; values in [0, 1].

    Raises
    ------
    ValueError
        If ``q`` is not a probability vector along ``axis``, ``axis``/``cant_solve`` is
        out of range, or ``cant_solve`` is a string other than ``"auto"`` or contradicts
        ``q.attrs["cant_solve"]``.
    TypeError
        If ``q`` is not numeric.

    Notes
    -----
    Paper eq. ``def_amb_final``: with :math:`b = 1 - q_{cs} = \sum_k q_k`,

    .. math:: \mathrm{amb}(q) = 1 - \frac{1}{b}\sum_{k=1}^C q_k^2 \quad (b > 0),
              \qquad \mathrm{amb}(q) = 1 \quad (q_{cs} = 1).

    :math:`b` is summed from the proper entries, so ``q_cs = 1`` gives exactly 1 without
    warnings.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 2.

    Examples
    --------
    >>> import ambppl
    >>> float(ambppl.amb([0.8, 0.2, 0.0]))
    0.32
    >>> ambppl.amb([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]).tolist()
    [0.5, 1.0]
    """
    return _apply("amb", q, cant_solve, axis, dim)


def amb_modified[T](
    q: T, *, cant_solve: int | str | None = "auto", axis: int = -1, dim: str | None = None
) -> T:
    r"""Modified ambiguity: the label-flip part normalized to reach 1 at uniform answers.

    Parameters
    ----------
    q : array_like, xarray.DataArray or pytensor TensorVariable
        Response probabilities along ``axis`` (non-negative, summing to 1 within 1e-6).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    axis : int, default -1
        Axis holding the categories (numpy and PyTensor inputs).
    dim : str, optional
        Category dimension of a DataArray.

    Returns
    -------
    same kind as ``q``
        The modified ambiguity in [0, 1]; never smaller than :func:`amb`.

    Raises
    ------
    ValueError
        If there are fewer than 2 proper categories (the normalization C/(C-1) is
        undefined), ``q`` is not a probability vector along ``axis``, ``axis``/``cant_solve``
        is out of range, or ``cant_solve`` is a string other than ``"auto"`` or contradicts
        ``q.attrs["cant_solve"]``.
    TypeError
        If ``q`` is not numeric.

    Notes
    -----
    Paper eq. ``def_modified_amb``; equivalently ``(C * amb - q_cs) / (C - 1)``
    (eq. ``rel_mod_unmod``).

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 2.2.

    Examples
    --------
    >>> import ambppl
    >>> round(float(ambppl.amb_modified([0.8, 0.2, 0.0])), 12)
    0.64
    """
    return _apply("modified", q, cant_solve, axis, dim)


def amb_old[T](
    q: T, *, cant_solve: int | str | None = "auto", axis: int = -1, dim: str | None = None
) -> T:
    r"""The older total-variation ambiguity ``amb0`` of Schwirten et al. and Klugmann et al.

    Parameters
    ----------
    q : array_like, xarray.DataArray or pytensor TensorVariable
        Response probabilities along ``axis``.
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    axis : int, default -1
        Axis holding the categories.
    dim : str, optional
        Category dimension of a DataArray.

    Returns
    -------
    same kind as ``q``
        amb0(q) in [0, 1].

    Raises
    ------
    ValueError
        If there are fewer than 2 proper categories, ``q`` is not a probability vector along
        ``axis``, ``axis``/``cant_solve`` is out of range, or ``cant_solve`` is a string other
        than ``"auto"`` or contradicts ``q.attrs["cant_solve"]``.
    TypeError
        If ``q`` is not numeric.

    Notes
    -----
    .. math:: \mathrm{amb}_0(q) = 1 - \frac{1-q_{cs}}{2}\frac{C}{C-1}
              \sum_{k=1}^C \left|p_k - \frac1C\right|, \quad p_k = q_k / (1 - q_{cs}),

    computed as :math:`1 - \frac{C}{2(C-1)}\sum_k |q_k - b/C|` so that ``q_cs = 1`` gives 1.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 2.3.

    Examples
    --------
    >>> import ambppl
    >>> round(float(ambppl.amb_old([0.8, 0.2, 0.0])), 12)
    0.4
    """
    return _apply("old", q, cant_solve, axis, dim)


def normalized_entropy[T](
    q: T, *, cant_solve: int | str | None = "auto", axis: int = -1, dim: str | None = None
) -> T:
    r"""Shannon entropy of ``q`` divided by its maximum ``log K``.

    Parameters
    ----------
    q : array_like, xarray.DataArray or pytensor TensorVariable
        Probabilities along ``axis`` (``K >= 2`` entries).
    cant_solve : int, None or "auto", default "auto"
        Position of the "can't solve" category; ``None`` if there is none; ``"auto"``: a
        labelled DataArray's ``attrs["cant_solve"]`` (an explicit value must agree with it),
        else the last category.
    axis : int, default -1
        Axis holding the categories.
    dim : str, optional
        Category dimension of a DataArray.

    Returns
    -------
    same kind as ``q``
        :math:`\tilde H(q) = -\sum_k q_k \log q_k / \log K` in [0, 1] (``0 log 0 = 0``).

    Raises
    ------
    ValueError
        If ``q`` has fewer than 2 entries along ``axis`` or is not a probability vector
        there, ``axis``/``cant_solve`` is out of range, or ``cant_solve`` is a string other
        than ``"auto"`` or contradicts ``q.attrs["cant_solve"]``.
    TypeError
        If ``q`` is not numeric.

    Notes
    -----
    The paper's normalized entropy (section 3.1), used as a familiar comparison. Its mean
    under a Dirichlet is :func:`ambppl.dirichlet_mean` with ``measure="entropy"``.

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.1.

    Examples
    --------
    >>> import ambppl
    >>> float(ambppl.normalized_entropy([0.5, 0.5]))
    1.0
    """
    return _apply("entropy", q, cant_solve, axis, dim)


def measure_name(measure: Any) -> str:
    """The measure's name, from a measure name or its posterior variable's name.

    Parameters
    ----------
    measure : str
        ``"amb"``, ``"modified"``, ``"old"``, ``"entropy"``, or the variable name
        (``"amb_modified"``, ``"amb_old"``, ``"entropy"``).

    Returns
    -------
    str
        The measure's name, a key of :data:`VARIABLES`.

    Raises
    ------
    ValueError
        If ``measure`` is neither.

    Examples
    --------
    >>> measure_name("amb_modified")
    'modified'
    """
    by_variable = {v: m for m, v in VARIABLES.items()}
    if isinstance(measure, str) and measure in by_variable:
        return by_variable[measure]
    return check_option(measure, tuple(VARIABLES), "measure")
