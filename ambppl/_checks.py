"""Argument checks shared by the modules.

Every function returns the (possibly converted) value or raises one ``ValueError`` /
``TypeError`` whose message names the argument, what was received and what is expected.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Absolute tolerance on ``|sum(q) - 1|`` accepted for probability vectors.
SUM_TOL = 1e-6


def _describe(x: Any) -> str:
    """Short description of an offending value for error messages."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        return repr(arr.item())
    if arr.size <= 8:
        return repr(arr.tolist())
    return f"an array of shape {arr.shape}"


def as_float_array(x: Any, name: str) -> np.ndarray:
    """Convert ``x`` to a float64 array or raise ``TypeError`` naming ``name``."""
    try:
        arr = np.asarray(x)
    except Exception as err:  # pragma: no cover - numpy raises rarely here
        raise TypeError(
            f"{name} must be array-like of numbers, but got {type(x).__name__}"
        ) from err
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(
            f"{name} must be array-like of numbers, but got dtype {arr.dtype} ({_describe(x)})"
        )
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, but got complex values")
    return arr.astype(np.float64, copy=False)


def check_axis(axis: Any, ndim: int, name: str = "axis") -> int:
    """Return ``axis`` as a non-negative index into ``ndim`` dimensions."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name} must be an integer, but got {axis!r}")
    if ndim == 0:
        raise ValueError(f"{name}={axis} is out of range: the input is a scalar, expected an array")
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{name} must be in [-{ndim}, {ndim - 1}] for an array with {ndim} dimension(s), "
            f"but got {axis}"
        )
    return int(axis) % ndim


def check_cant_solve(cant_solve: Any, n_categories: int) -> int | None:
    """Return the non-negative position of the can't-solve category, or ``None``."""
    if cant_solve is None:
        return None
    if isinstance(cant_solve, bool) or not isinstance(cant_solve, numbers.Integral):
        raise TypeError(
            "cant_solve must be an integer position along the category axis or None, "
            f"but got {cant_solve!r}"
        )
    if not -n_categories <= cant_solve < n_categories:
        raise ValueError(
            f"cant_solve must be a position in [-{n_categories}, {n_categories - 1}] "
            f"(there are {n_categories} categories) or None, but got {cant_solve}"
        )
    return int(cant_solve) % n_categories


def check_n_proper(n_proper: int, minimum: int, what: str) -> None:
    """Raise if there are fewer than ``minimum`` proper categories."""
    if n_proper < minimum:
        raise ValueError(
            f"{what} needs at least {minimum} proper categories (besides can't-solve), "
            f"but got {n_proper}; pass cant_solve=None if the last category is a proper one"
        )


def check_probabilities(q: Any, axis: int, name: str = "q") -> np.ndarray:
    """Check a numpy array of probability vectors along ``axis``.

    Entries must be finite and non-negative and each vector must sum to 1 within
    :data:`SUM_TOL`.
    """
    arr = as_float_array(q, name)
    ax = check_axis(axis, arr.ndim)
    if arr.shape[ax] < 2:
        raise ValueError(
            f"{name} must have at least 2 categories along axis {axis}, but got {arr.shape[ax]}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite probabilities, but got NaN or inf")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative, but got minimum {float(arr.min())!r}")
    sums = arr.sum(axis=ax)
    worst = np.max(np.abs(sums - 1.0)) if sums.size else 0.0
    if worst > SUM_TOL:
        raise ValueError(
            f"{name} must sum to 1 along axis {axis} (tolerance {SUM_TOL:g}), but a vector "
            f"sums to {float(sums.flat[np.argmax(np.abs(sums - 1.0))])!r}; normalize it first"
        )
    return arr


def check_alpha(alpha: Any, name: str = "alpha") -> np.ndarray:
    """Check Dirichlet concentration parameters (last axis = categories)."""
    arr = as_float_array(alpha, name)
    if arr.ndim == 0 or arr.shape[-1] < 2:
        raise ValueError(
            f"{name} must have at least 2 categories on its last axis, but got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, but got {_describe(arr[~np.isfinite(arr)])}")
    if np.any(arr <= 0):
        raise ValueError(
            f"{name} must be strictly positive (Dirichlet concentrations), "
            f"but got minimum {float(arr.min())!r}"
        )
    return arr


def check_counts(counts: Any, name: str = "counts") -> np.ndarray:
    """Check a count array: finite, non-negative, integer-valued; returns int64."""
    arr = as_float_array(counts, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array with a category axis, but got a scalar")
    if arr.shape[-1] < 2:
        raise ValueError(
            f"{name} must have at least 2 categories on its last axis, but got {arr.shape[-1]}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, but got NaN or inf")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative, but got minimum {float(arr.min())!r}")
    if np.any(arr != np.round(arr)):
        bad = arr[arr != np.round(arr)]
        raise ValueError(f"{name} must be whole numbers, but got {_describe(bad[:5])}")
    return arr.astype(np.int64)


def check_positive_scalar(x: Any, name: str) -> float:
    """Return ``x`` as a positive finite float."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a positive number, but got {x!r}")
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive finite number, but got {x!r}")
    return float(x)


def check_positive_int(x: Any, name: str) -> int:
    """Return ``x`` as a positive int."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, but got {x!r}")
    if x < 1:
        raise ValueError(f"{name} must be a positive integer, but got {x!r}")
    return int(x)


def check_prob(x: Any, name: str) -> float:
    """Return ``x`` as a float in the open interval (0, 1)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1), but got {x!r}")
    if not 0 < x < 1:
        raise ValueError(f"{name} must be in the open interval (0, 1), but got {x!r}")
    return float(x)


def check_option(value: Any, options: Mapping[str, Any] | tuple[str, ...], name: str) -> str:
    """Return ``value`` if it is one of ``options``; otherwise list the valid ones."""
    valid = tuple(options)
    if not isinstance(value, str) or value not in valid:
        raise ValueError(
            f"{name} must be one of {', '.join(repr(v) for v in valid)}, but got {value!r}"
        )
    return value


def check_prior(prior: Any, n_categories: int, name: str = "prior") -> np.ndarray:
    """Return a symmetric (scalar) or full Dirichlet prior as a vector of ``n_categories``."""
    arr = as_float_array(prior, name)
    if arr.ndim == 0:
        arr = np.full(n_categories, float(arr))
    elif arr.ndim != 1 or arr.shape[0] != n_categories:
        raise ValueError(
            f"{name} must be a positive number (symmetric Dirichlet) or a vector of "
            f"{n_categories} positive numbers (one per category), but got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"{name} must be strictly positive and finite (Dirichlet concentrations), "
            f"but got {_describe(prior)}"
        )
    return arr


def cant_solve_position(label: Any, categories: Any, name: str = "cant_solve") -> int | None:
    """Position of the can't-solve ``label`` among ``categories`` (``None`` if label is None)."""
    if label is None:
        return None
    labels = [str(c) for c in np.asarray(categories).tolist()]
    if str(label) not in labels:
        raise ValueError(
            f"{name} must be one of the category labels {labels} or None, but got {label!r}"
        )
    return labels.index(str(label))


def check_item_counts(counts: Any) -> tuple[np.ndarray, bool]:
    """Counts of one item (K,) or of many (items, K): ``(array, single)``."""
    arr = check_counts(counts, "counts")
    if arr.ndim > 2:
        raise ValueError(
            "counts must have shape (items, K) or (K,) (one row of category counts per item), "
            f"but got shape {arr.shape}"
        )
    return arr, arr.ndim == 1
