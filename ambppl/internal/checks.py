"""Argument checks shared by the modules.

Every function returns the (possibly converted) value or raises one ``ValueError`` /
``TypeError`` whose message names the argument, what was received and what is expected.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ambppl.internal.messages import say

#: Absolute tolerance on ``|sum(q) - 1|`` accepted for probability vectors.
SUM_TOL = 1e-6

#: The largest count, and the largest number of answers of one item (a row's sum), taken:
#: float64 holds every whole number up to 2**53 exactly, and int64 sums of such rows cannot
#: overflow (2**62 + 2**62 wrapped to a negative total before this bound).
MAX_COUNT = 2**53


#: How many offending values an error message lists (:func:`show_values`).
SHOWN = 5


def show_values(values: Any, total: int | None = None) -> str:
    """A short list of values for error messages: the first :data:`SHOWN`, and how many in
    all when there are more.

    Parameters
    ----------
    values : iterable
        The values, or only the first of them (then give ``total``).
    total : int, optional
        How many values there are in all; default: as many as ``values`` holds.

    Returns
    -------
    str
        ``"['a', 'b']"``, or ``"['a', 'b', 'c', 'd', 'e', ... (12 in all)]"``.

    Examples
    --------
    >>> show_values(["a", "b"])
    "['a', 'b']"
    >>> show_values(range(7))
    '[0, 1, 2, 3, 4, ... (7 in all)]'
    >>> show_values(["a"], total=3)
    "['a', ... (3 in all)]"
    """
    values = list(values)
    total = len(values) if total is None else total
    head = ", ".join(repr(v) for v in values[:SHOWN])
    more = f", ... ({total} in all)" if total > min(len(values), SHOWN) else ""
    return f"[{head}{more}]"


def _describe(x: Any) -> str:
    """Short description of an offending value for error messages."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        return repr(arr.item())
    if arr.size <= 8:
        return repr(arr.tolist())
    return f"an array of shape {arr.shape}"


class RaggedArrayError(ValueError, TypeError):
    """Nested sequences of unequal lengths where a rectangular array is needed.

    A ``ValueError`` (a shape problem), and a ``TypeError`` too, as such input raised
    ``TypeError("... must be array-like of numbers ...")`` before, so that handlers of either
    keep catching it.
    """


def _ragged(x: Any, name: str) -> RaggedArrayError:
    """The error for ragged nested sequences ``x``: where the lengths first differ."""
    level = [x]
    for depth in range(32):  # the deepest level numpy would read; ragged ones are shallow
        lengths = [
            len(v) if hasattr(v, "__len__") and not isinstance(v, str) else None for v in level
        ]
        if len(set(lengths)) > 1:
            where = "rows" if depth == 1 else f"sequences at depth {depth}"
            what = (
                f"a mix of numbers and sequences at depth {depth}"
                if None in lengths
                else f"{where} of lengths {show_values(lengths)}"
            )
            return RaggedArrayError(
                f"{name} must be a rectangular array (every row as long as the others), but "
                f"got ragged nested sequences: {what}; pad or drop the short rows"
            )
        if lengths[0] is None:
            break
        level = [w for v in level for w in v]
    return RaggedArrayError(
        f"{name} must be a rectangular array (every row as long as the others), but got "
        "ragged nested sequences; pad or drop the short rows"
    )


def as_float_array(x: Any, name: str) -> np.ndarray:
    """Convert ``x`` to a float64 array or raise ``TypeError`` naming ``name``
    (:class:`RaggedArrayError`, also a ``ValueError``, for ragged nested sequences)."""
    try:
        arr = np.asarray(x)
    except ValueError as err:
        if "inhomogeneous" in str(err):  # numpy >= 1.24 on ragged nested sequences
            raise _ragged(x, name) from err
        raise TypeError(
            f"{name} must be array-like of numbers, but got {type(x).__name__}"
        ) from err
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


def check_n_proper(n_proper: int, minimum: int, what: str, measure: str | None = None) -> None:
    """Raise if there are fewer than ``minimum`` proper categories.

    ``what`` names the request in Python's words (``"measure='modified'"``); on the command
    line (:func:`ambppl.internal.messages.say`) the message names ``--measure NAME``
    instead, ``NAME`` being ``measure`` (where the request is for a measure), and
    ``--cant-solve``.
    """
    if n_proper < minimum:
        name = measure
        needs = (
            f"needs at least {minimum} proper categories (besides can't-solve), but got {n_proper}"
        )
        raise ValueError(
            say(
                f"{what} {needs}; pass cant_solve=None if the last category is a proper one",
                f"{f'--measure {name}' if name else what} {needs}; leave out --cant-solve if "
                "the task had no can't-solve answer",
            )
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


def _number(value: Any) -> str:
    """A count for a message: integers in full, huge floats in short (``1e+300``)."""
    if isinstance(value, np.integer | int):
        return str(int(value))
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else f"{value:.4g}"


def _where(bad: np.ndarray, items: Any = None, categories: Any = None, first_row: int = 0) -> str:
    """Where the first True of ``bad`` is: `` (row 3, column 1)``, or with labels
    `` (item 'a', category 'neg')``; positions are 0-based, rows counted from ``first_row``."""
    index = np.unravel_index(int(np.argmax(bad)), bad.shape)

    def label(labels: Any, i: int) -> str:
        value = labels[i]
        return repr(value.item() if isinstance(value, np.generic) else value)

    if categories is not None and len(categories) != bad.shape[-1]:
        categories = None
    if items is not None and (bad.ndim != 2 or len(items) != bad.shape[0]):
        items = None
    if bad.ndim == 1:
        column = int(index[0])
        if categories is not None:
            return f" (category {label(categories, column)})"
        return f" (position {column})"
    row, column = int(index[0]), int(index[-1])
    rows = f"item {label(items, row)}" if items is not None else f"row {first_row + row}"
    cols = f"column {column}" if categories is None else f"category {label(categories, column)}"
    return f" ({rows}, {cols})" if bad.ndim == 2 else f" (at {tuple(int(i) for i in index)})"


def check_counts(
    counts: Any,
    name: str = "counts",
    *,
    items: Any = None,
    categories: Any = None,
    first_row: int = 0,
) -> np.ndarray:
    """Check a count array: finite, non-negative, integer-valued, each row summing to at most
    :data:`MAX_COUNT`; returns int64. Messages say where the first bad count is: by
    ``items`` / ``categories`` labels when given (a 2-D array), else by 0-based row (counted
    from ``first_row``) and column."""
    arr = as_float_array(counts, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array with a category axis, but got a scalar")
    if arr.shape[-1] < 2:
        raise ValueError(
            f"{name} must have at least 2 categories on its last axis, but got {arr.shape[-1]}"
        )

    def where(bad: np.ndarray) -> str:
        return _where(bad, items, categories, first_row)

    finite = np.isfinite(arr)
    if not np.all(finite):
        bad = arr[~finite][0]
        what = "missing (NaN: an empty cell or a null)" if np.isnan(bad) else f"{bad}"
        raise ValueError(
            f"{name} must be finite, but got NaN or inf: a count is {what}{where(~finite)}; "
            "fill in or remove that row"
        )
    if np.any(arr < 0):
        raise ValueError(
            f"{name} must be non-negative, but got minimum {float(arr.min())!r}{where(arr < 0)}"
        )
    whole = arr == np.round(arr)
    if not np.all(whole):
        bad = arr[~whole]
        raise ValueError(
            f"{name} must be whole numbers, but got {_describe(bad[:5])}{where(~whole)}"
        )
    # checked on the integers themselves (float64 rounds 2**53 + 1 down to 2**53) and before
    # the sums, which could overflow to inf
    raw = np.asarray(counts)
    integers = raw.dtype.kind in "iu"
    huge = (raw if integers else arr) > MAX_COUNT
    totals = None
    if not np.any(huge):  # each count <= 2**53: int64 sums of fewer than 1024 cannot overflow
        exact = integers and arr.shape[-1] < 1024
        totals = (raw if integers else arr).sum(axis=-1, dtype=np.int64 if exact else np.float64)
    if totals is not None and np.any(totals > MAX_COUNT):
        row = np.unravel_index(int(np.argmax(totals > MAX_COUNT)), totals.shape)
        if arr.ndim == 1:
            at = ""
        elif arr.ndim == 2 and items is not None and len(items) == arr.shape[0]:
            value = items[row[0]]
            at = f" (item {value.item() if isinstance(value, np.generic) else value!r})"
        else:
            at = f" (at {tuple(int(i) for i in row)})"
            if arr.ndim == 2:
                at = f" (row {first_row + int(row[0])})"
        raise ValueError(
            f"{name} must sum to at most 2**53 = {MAX_COUNT} answers per item (beyond, float64 "
            f"loses whole numbers and int64 totals overflow), but a row sums to "
            f"{_number(totals[row])}{at}; check that the data hold counts of answers"
        )
    if np.any(huge):
        raise ValueError(
            f"{name} must be at most 2**53 = {MAX_COUNT} answers per item (beyond, float64 "
            f"loses whole numbers and int64 totals overflow), but got "
            f"{_number((raw if integers else arr)[huge][0])}{where(huge)}; check that the data "
            "hold counts of answers"
        )
    return arr.astype(np.int64)


def given_value(x: Any) -> str:
    """``x`` as the caller wrote it, for messages (:func:`ambppl.internal.messages.say`):
    its ``repr`` in Python; on the command line, where ``--param`` values are JSON-like
    literals, ``null``, ``true`` and ``false`` for None, True and False."""
    if x is None or isinstance(x, bool):
        return say(repr(x), {None: "null", True: "true", False: "false"}[x])
    return repr(x)


def check_positive_scalar(x: Any, name: str) -> float:
    """Return ``x`` as a positive finite float."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a positive number, but got {given_value(x)}")
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive finite number, but got {x!r}")
    return float(x)


def check_flag(x: Any, name: str, automatic: bool = True) -> bool | None:
    """Return ``x``, a bool (or None, where ``automatic``: the model chooses), refusing
    anything else in the caller's words (``--param centred=...`` must be ``true``, ...)."""
    if isinstance(x, bool | np.bool_) or (automatic and x is None):
        return None if x is None else bool(x)
    choices = say(
        "True, False or None (automatic)" if automatic else "True or False",
        "true, false or null (automatic)" if automatic else "true or false",
    )
    raise ValueError(f"{name} must be {choices}, but got {given_value(x)}")


def check_positive_int(x: Any, name: str) -> int:
    """Return ``x`` as a positive int."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, but got {x!r}")
    if x < 1:
        raise ValueError(f"{name} must be a positive integer, but got {x!r}")
    return int(x)


def check_random_seed(seed: Any, name: str = "random_seed") -> Any:
    """Return a seed that numpy and PyMC take: None, a non-negative int or a Generator."""
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be a non-negative int, a numpy.random.Generator or None, but got {seed!r}"
        )
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative int (a numpy seed), but got {seed}")
    return seed


def check_progress(progress: Any, name: str = "progress") -> Any:
    """Return ``progress``: None or a callable that takes one line of text."""
    if progress is not None and not callable(progress):
        raise TypeError(
            f"{name} must be a callable that takes one line of text (e.g. print) or None, "
            f"but got {progress!r}"
        )
    return progress


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


def parameter_name(name: str) -> str:
    """A model parameter in the caller's words (:func:`ambppl.internal.messages.say`): the
    keyword ``name``, or on the command line the option that sets it, ``--prior`` for
    ``prior`` and ``--param NAME=...`` for the others; other names (``data.attrs[...]``)
    unchanged."""
    if not name.isidentifier():
        return name
    return say(name, "--prior" if name == "prior" else f"--param {name}=...")


def check_prior(prior: Any, n_categories: int, name: str = "prior") -> np.ndarray:
    """Return a symmetric (scalar) or full Dirichlet prior as a vector of ``n_categories``.
    Messages name ``name`` in the caller's words (:func:`parameter_name`)."""
    name = parameter_name(name)
    if prior is None or np.asarray(prior).dtype == np.bool_:  # --param prior=null, =true
        got = given_value(prior) if prior is None else _describe(prior)
        raise TypeError(f"{name} must be a positive number or one per category, but got {got}")
    arr = as_float_array(prior, name)
    if arr.ndim == 0:
        arr = np.full(n_categories, float(arr))
    elif arr.ndim != 1 or arr.shape[0] != n_categories:
        got = say(
            f"shape {arr.shape}",
            f"{arr.size} number{'s' if arr.size != 1 else ''}" if arr.ndim == 1 else "a table",
        )
        raise ValueError(
            f"{name} must be a positive number (symmetric Dirichlet) or a vector of "
            f"{n_categories} positive numbers (one per category"
            f"{say('', ', comma-separated')}), but got {got}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"{name} must be strictly positive and finite (Dirichlet concentrations), "
            f"but got {_describe(prior)}"
        )
    check_prior_total(arr, name)
    return arr


#: Largest total of a Dirichlet prior over the categories: draws and closed forms add the
#: concentrations up (plus the counts), which overflows float64 at 1.8e308 (--prior 1e308
#: with 3 categories scored every item's mean as 1.0 with sd 0, the true value being 0.667).
MAX_PRIOR_TOTAL = 1e300


def check_prior_total(arr: np.ndarray, name: str = "prior") -> None:
    """Refuse a prior whose concentrations (last axis) sum to more than
    :data:`MAX_PRIOR_TOTAL`."""
    with np.errstate(over="ignore"):
        total = float(np.max(np.sum(arr, axis=-1, dtype=np.float64)))
    if not total <= MAX_PRIOR_TOTAL:
        name = parameter_name(name)  # the ambppl command's option in command_line_messages()
        raise ValueError(
            f"{name} must sum to at most {MAX_PRIOR_TOTAL:g} over the categories (the "
            f"concentrations plus the counts must stay below float64's 1.8e308), but got "
            f"{_describe(arr)}, summing to {total:g}; a prior that strong already pins "
            "every posterior to the prior's mean"
        )


def _is_type(x: Any, name: str, module: str) -> bool:
    cls = type(x)
    return cls.__name__ == name and cls.__module__.startswith(module)


def _by_labels(
    values: np.ndarray,
    axis: int,
    own: list[Any],
    want: list[Any],
    dim: Any,
    name: str,
    data_name: str,
    kind: str,
) -> np.ndarray:
    """``values`` along ``axis`` (labelled ``own``) put in the order of the labels ``want``,
    labels compared as text; refused (naming ``name`` and the fix) where either labels an
    entry twice or the two differ. The one comparison of labels of :func:`category_aligned`
    and :func:`points_aligned`."""
    own_s = [str(v) for v in own]
    want_s = [str(v) for v in want]
    for whose, these in ((name, own_s), (data_name, want_s)):
        if len(set(these)) != len(these):
            seen: set[str] = set()
            twice = sorted({v for v in these if v in seen or seen.add(v)})
            raise ValueError(
                f"{whose} must label each entry along {dim!r} once to align {name} with "
                f"{data_name}, but {show_values(twice)} occur more than once; "
                f"pass {name}.values in the order of {data_name} instead"
            )
    if set(own_s) != set(want_s):
        missing = [v for v in want_s if v not in set(own_s)]
        extra = [v for v in own_s if v not in set(want_s)]
        lack = "lack" if data_name.endswith("s") else "lacks"
        differ = " and ".join(
            [f"lacks {show_values(missing)}"] * bool(missing)
            + [f"has {show_values(extra)}, which {data_name} {lack}"] * bool(extra)
        )
        raise ValueError(
            f"{name} must have the labels of {data_name} along {dim!r} {show_values(want_s)}, "
            f"but got {kind} that {differ}; give {name} the labels of {data_name}, or "
            f"pass {name}.values in the order of {data_name}"
        )
    position = {v: i for i, v in enumerate(own_s)}
    return np.take(values, [position[v] for v in want_s], axis=axis)


def category_aligned(
    value: Any, data: Any, *, dim: str | None = None, name: str = "prior", data_name: str = "counts"
) -> Any:
    """``value`` (a prior) read by its labels against ``data`` (the counts).

    A labelled ``value``, an :class:`xarray.DataArray` with an index (coordinate) along a
    dimension, a :class:`pandas.Series` (labelled by its index, the categories) or a
    :class:`pandas.DataFrame` (one row per item, labelled by its index, along ``data``'s one
    other dimension; its columns labelled by the categories, as ``xarray.DataArray(frame)``
    reads it), is put in the order of ``data``'s labels along each such dimension, as
    xarray's arithmetic would (``data + value``); anything else is returned as it is, to be
    read by position.

    Parameters
    ----------
    value : object
        The argument to align; only a DataArray, a Series or a DataFrame is changed.
    data : array_like or xarray.DataArray
        What ``value`` goes with.
    dim : str, optional
        ``data``'s category dimension (a DataArray); default ``"category"`` where it has one,
        else its last dimension. A Series labels that dimension.
    name, data_name : str, default "prior", "counts"
        The arguments' names, for messages.

    Returns
    -------
    object or numpy.ndarray
        ``value`` unchanged where it is no DataArray, Series or DataFrame; a 0-d
        DataArray's value as a numpy scalar; else a numpy array with the categories on the
        last axis and ``data``'s other dimensions before them, in ``data``'s order (length 1
        where ``value`` lacks them), so that it broadcasts against ``data`` with its
        category dimension moved last.

    Raises
    ------
    ValueError
        If ``value`` has labels where ``data`` has none to align them with (``data`` a
        numpy array, or a DataArray without a coordinate along that dimension), labels that
        differ from ``data``'s or occur twice, or (``data`` a DataArray) a dimension that
        ``data`` lacks; if ``value`` is a DataFrame and ``data`` has not exactly one
        dimension besides the categories.
    """
    series = _is_type(value, "Series", "pandas")
    frame = _is_type(value, "DataFrame", "pandas")
    if not (series or frame or _is_type(value, "DataArray", "xarray")):
        return value
    data_da = _is_type(data, "DataArray", "xarray")
    cdim = dim if dim is not None else "category"
    if data_da and dim is None and "category" not in data.dims:
        cdim = data.dims[-1]
    if series:
        dims: tuple[Any, ...] = (cdim,)
        values = value.to_numpy()
        labels = {cdim: list(value.index)}
    elif frame:  # items by its index, categories by its columns, as xr.DataArray(frame)
        others = [d for d in data.dims if d != cdim] if data_da else ["item"]
        if not others:  # the caller aligns one concentration per category
            raise ValueError(
                f"{name} must be one concentration per category here (a number, a sequence, "
                f"or a pandas Series labelled by category), but got a pandas DataFrame of "
                f"shape {value.shape}; pass one row of it (a Series) or a number"
            )
        if len(others) != 1:
            raise ValueError(
                f"{name} must be a pandas DataFrame only where {data_name} have one dimension "
                f"besides the categories (its rows), but {data_name} have dims "
                f"{tuple(data.dims)}; pass {name} as an xarray.DataArray with "
                f"{data_name}' dimension names, or one concentration per category"
            )
        dims = (others[0], cdim)
        values = value.to_numpy()
        labels = {others[0]: list(value.index), cdim: list(value.columns)}
    else:
        if value.ndim == 0:
            return value.values[()]
        dims = tuple(value.dims)
        values = value.values
        labels = {d: list(value.indexes[d]) for d in dims if d in value.indexes}
        if not data_da:  # its categories: "category", else its last dimension
            cdim = "category" if "category" in dims else dims[-1]
    kind = (
        "a pandas Series (labelled by its index)"
        if series
        else "a pandas DataFrame (its rows labelled by its index, its categories by its columns)"
        if frame
        else ("a labelled DataArray" if labels else "a DataArray")
    )
    if not data_da:
        if labels:
            whose = {"category": "categories", "item": "items"}.get(cdim, f"{cdim} entries")
            raise ValueError(
                f"{name} must be read by position against {data_name} {_unlabelled(data, cdim)}"
                f", but got {kind} with labels along {show_values(labels)}; pass "
                f"{name}.values in the order of the {whose} of {data_name}, or "
                f"{data_name} as an xarray.DataArray with a coordinate {cdim!r}"
                f"{_as_dataarray(data)}"
            )
        return np.moveaxis(values, dims.index(cdim), -1)
    for d in (cdim, *dims):
        if d not in (dims if d == cdim else data.dims):
            need = "the category dimension" if d == cdim else "only dimensions"
            raise ValueError(
                f"{name} must have {need} of {data_name} (dims {tuple(data.dims)}, the "
                f"categories along {cdim!r}), but got {kind} with dims {dims}; rename its "
                f"category dimension to {cdim!r} ({name}.rename(...))"
            )
    for d, own in labels.items():
        if d not in data.indexes:
            raise ValueError(
                f"{name} must be read by position where {data_name} have no labels along "
                f"{d!r}, but got {kind} labelled along it ({show_values(own)}); pass "
                f"{name}.values in the order of {data_name}, or label {data_name} along {d!r}"
            )
        values = _by_labels(
            values, dims.index(d), own, list(data.indexes[d]), d, name, data_name, kind
        )
    order = [d for d in data.dims if d != cdim and d in dims] + [cdim]
    values = np.transpose(values, [dims.index(d) for d in order])
    shape = [values.shape[order.index(d)] if d in order else 1 for d in data.dims if d != cdim]
    return values.reshape(*shape, values.shape[-1])


def _unlabelled(data: Any, dim: str) -> str:
    """How ``data`` (no DataArray) lacks labels along ``dim``, for messages: a DataFrame has
    labels, which the array-level functions do not read."""
    if _is_type(data, "DataFrame", "pandas"):
        return "given as a pandas DataFrame (read as an array: its labels are not read)"
    return f"without {dim} labels"


def _as_dataarray(data: Any) -> str:
    """The conversion that labels a DataFrame of counts, for messages (empty otherwise)."""
    if _is_type(data, "DataFrame", "pandas"):
        return " (xarray.DataArray(frame, dims=('item', 'category')))"
    return ""


def item_aligned(value: Any, data: Any, *, name: str = "extra", data_name: str = "counts") -> Any:
    """``value`` (one entry per item, e.g. the answers still to come) read by its item labels
    against ``data`` (the counts).

    A :class:`pandas.Series` indexed by item, or an :class:`xarray.DataArray` with item
    coordinates, is put in the order of ``data``'s items (its dimensions besides the
    categories: ``"category"``, else its last; a Series only where there is one) by
    :func:`category_aligned`; anything else is returned as it is, to be read by position.
    Before, such a value was read by position: each item got another item's entry.

    Parameters
    ----------
    value : object
        The argument to align; only a Series or a DataArray is changed.
    data : array_like or xarray.DataArray
        The counts, items by categories (either order where labelled).
    name, data_name : str, default "extra", "counts"
        The arguments' names, for messages.

    Returns
    -------
    object or numpy.ndarray
        ``value`` unchanged where it is neither a Series nor a DataArray; a DataArray
        without coordinates as its values (any dim names: read by position); else a numpy
        array with ``data``'s item dimensions in its order (length 1 where ``value`` lacks
        one), each in the order of ``data``'s labels.

    Raises
    ------
    ValueError
        If ``value`` is labelled and ``data`` is no DataArray (nothing to align with); if a
        DataArray ``value`` has a dimension that is not one of ``data``'s item dimensions
        (the categories included), or a Series goes with ``data`` of several item
        dimensions; as :func:`category_aligned`: labels where ``data`` has none, or labels
        that differ from ``data``'s or occur twice.

    Examples
    --------
    >>> import pandas as pd, xarray as xr
    >>> counts = xr.DataArray([[3, 1], [0, 4]], dims=("item", "category"),
    ...                       coords={"item": ["a", "b"], "category": ["yes", "no"]})
    >>> item_aligned(pd.Series({"b": 100, "a": 10}), counts).tolist()
    [10, 100]
    """
    series = _is_type(value, "Series", "pandas")
    if not (series or _is_type(value, "DataArray", "xarray")):
        return value
    if not series and not value.indexes:
        return value.values  # no labels (any dim names): read by position, as before
    kind = "a pandas Series (labelled by its index)" if series else "a labelled DataArray"
    if not _is_type(data, "DataArray", "xarray"):
        raise ValueError(
            f"{name} must be read by position against {data_name} {_unlabelled(data, 'item')}"
            f", but got {kind}; pass {name}.values in the order of the items of {data_name}, "
            f"or {data_name} as an xarray.DataArray with a coordinate 'item'"
            f"{_as_dataarray(data)}"
        )
    cdim = "category" if "category" in data.dims else data.dims[-1]
    items = tuple(d for d in data.dims if d != cdim)
    if series and len(items) != 1:
        raise ValueError(
            f"{name} must be an xarray.DataArray with dims among {items} where {data_name} "
            f"have several item dimensions, but got {kind}, which labels one; pass "
            f"{name} as a DataArray, or {name}.values in the order of {data_name}"
        )
    own = items if series else tuple(value.dims)
    if not set(own) <= set(items):
        which = f"the dimension {items[0]!r}" if len(items) == 1 else f"dimensions among {items}"
        raise ValueError(
            f"{name} must have one entry per item of {data_name}, along {which} (the "
            f"categories {cdim!r} excluded), but got {kind} with dims {own}; rename its item "
            f"dimension ({name}.rename(...)) or pass {name}.values in the order of the items "
            f"of {data_name}"
        )
    if series:
        return category_aligned(value, data[items[0]], dim=items[0], name=name, data_name=data_name)
    aligned = category_aligned(
        value.expand_dims(cdim, axis=-1), data, dim=cdim, name=name, data_name=data_name
    )
    return aligned[..., 0]  # data's item dimensions in its order (1 where value lacks one)


def batch_labels(alpha: Any) -> tuple[tuple[Any, ...] | None, dict[Any, list]]:
    """The batch dimensions of ``alpha`` and their labels, kept to read labelled points.

    Parameters
    ----------
    alpha : array_like or xarray.DataArray
        The concentrations a distribution is built from, categories last (as
        :func:`ambppl.internal.checks.resolve_cant_solve` requires of a DataArray).

    Returns
    -------
    dims : tuple or None
        ``None`` where ``alpha`` is no :class:`xarray.DataArray` (its batch has no names);
        else its dimensions but the last (the categories).
    labels : dict
        For each of ``dims`` with an index (a coordinate): its labels, in ``alpha``'s order.
    """
    if not _is_type(alpha, "DataArray", "xarray"):
        return None, {}
    dims = tuple(alpha.dims[:-1])
    return dims, {d: list(alpha.indexes[d]) for d in dims if d in alpha.indexes}


def points_aligned(
    x: Any,
    dims: tuple[Any, ...] | None,
    labels: dict[Any, list],
    name: str = "x",
    data_name: str = "alpha",
) -> Any:
    """``x`` (points, or levels of a quantile) read by its labels against a batch of
    distributions whose dimensions and labels are ``dims`` and ``labels``
    (:func:`batch_labels`).

    A :class:`pandas.Series` is labelled by its index along the one batch dimension (the
    items); an :class:`xarray.DataArray` with an index (a coordinate) is read by its
    dimensions' names: along a batch dimension it is put in the order of the batch's
    labels, and its other dimensions (a grid of points, labelled or not) come first, so that
    the result broadcasts against the batch shape as ``x`` broadcast against the labelled
    batch in xarray's arithmetic. A 0-d DataArray gives its value, a DataArray without
    coordinates its values (read by position, as before); anything else is returned as it
    is, to be read by position.

    Parameters
    ----------
    x : object
        The argument; only a Series, a DataFrame or a DataArray is changed or refused.
    dims : tuple or None
        The batch's dimension names (``None``: the distribution was built from a bare
        array).
    labels : dict
        The batch's labels along those of ``dims`` that have them.
    name, data_name : str, default "x", "alpha"
        The arguments' names, for messages.

    Returns
    -------
    object or numpy.ndarray
        ``x`` unchanged where it is no Series or DataArray; else a numpy array with ``x``'s
        other dimensions first and the batch dimensions after them in the batch's order
        (length 1 where ``x`` lacks them).

    Raises
    ------
    ValueError
        If ``x`` is a DataFrame (which of its axes holds the items is not said); if it is
        labelled where the batch has no labels to align it with (a bare ``alpha``, no
        labels along that dimension, or for a Series not exactly one batch dimension); if
        its labels along a batch dimension differ from the batch's or occur twice.
    """
    series = _is_type(x, "Series", "pandas")
    if _is_type(x, "DataFrame", "pandas"):
        names = "" if not dims else f" {tuple(dims)}"
        raise ValueError(
            f"{name} must be a number, an array (read by position), a pandas Series labelled "
            f"by item or an xarray.DataArray, but got a pandas DataFrame of shape {x.shape}; "
            f"pass {name}.to_numpy() to read it by position, or an xarray.DataArray with the "
            f"dimension names of {data_name}{names} to read it by its labels"
        )
    if not (series or _is_type(x, "DataArray", "xarray")):
        return x
    if series:
        one = dims[0] if dims is not None and len(dims) == 1 else "item"
        xdims: tuple[Any, ...] = (one,)
        values = x.to_numpy()
        own = {one: list(x.index)}
        kind = "a pandas Series (labelled by its index)"
        if dims is not None and len(dims) > 1:
            raise ValueError(
                f"{name} must be an xarray.DataArray with the dimension names of {data_name} "
                f"{tuple(dims)} where {data_name} has several batch dimensions, but got {kind}; "
                f"pass xarray.DataArray({name}) with its dimension named, or {name}.values in "
                f"the order of {data_name}"
            )
    else:
        if x.ndim == 0:
            return x.values[()]
        xdims = tuple(x.dims)
        values = x.values
        own = {d: list(x.indexes[d]) for d in xdims if d in x.indexes}
        kind = "an xarray.DataArray"
        if not own:  # no coordinates: read by position, as before
            return values
    for d, these in own.items():
        if dims is not None and d not in dims and not series:
            continue  # another dimension (a grid of points): broadcast against the batch
        if dims is None or d not in labels:
            whose = "items" if dims is None or not dims or d == "item" else f"{d!r} entries"
            where = (
                f"with labels {show_values(these)}"
                if series
                else f"labelled along {d!r} ({show_values(these)})"
            )
            fix = (
                f"build the distribution from an xarray.DataArray {data_name} with a "
                "coordinate along its items"
                if dims is None or not dims or d not in dims
                else f"label {data_name} along {d!r}"
            )
            raise ValueError(
                f"{name} must be read by position where {data_name} has no labels along its "
                f"{whose}, but got {kind} {where}; "
                f"pass {name}.values in the order of the {whose} of {data_name}, or {fix}"
            )
        values = _by_labels(values, xdims.index(d), these, labels[d], d, name, data_name, kind)
    batch = tuple(dims or ())
    others = [d for d in xdims if d not in batch]
    order = others + [d for d in batch if d in xdims]
    values = np.transpose(values, [xdims.index(d) for d in order])
    shape = list(values.shape[: len(others)])
    shape += [values.shape[order.index(d)] if d in xdims else 1 for d in batch]
    return values.reshape(shape)


def cant_solve_absent(label: Any, labels: list[str], python: str | None = None) -> str:
    """The message for a can't-solve ``label`` that is not one of ``labels``, in the caller's
    words (:func:`ambppl.internal.messages.say`).

    Parameters
    ----------
    label : object
        The can't-solve label given.
    labels : list of str
        The labels it may be.
    python : str, optional
        The message in Python's words, where a caller takes more than a label (a position);
        default: that ``cant_solve`` must be a label that occurs in the data.

    Returns
    -------
    str
        ``python``, or on the command line the one message of ``--cant-solve``.

    Examples
    --------
    >>> print(cant_solve_absent("maybe", ["neg", "pos"]))
    cant_solve must be a label that occurs in the data, but 'maybe' does not; the labels
    present are ['neg', 'pos'] (pass cant_solve=None if the task had no can't-solve answer)
    >>> from ambppl.internal.messages import command_line_messages
    >>> with command_line_messages():
    ...     print(cant_solve_absent("maybe", ["neg", "pos"], "cant_solve must be ..."))
    --cant-solve must be a label that occurs in the data, but 'maybe' does not; the labels
    present are ['neg', 'pos'] (leave out --cant-solve if the task had no can't-solve answer)
    """
    if python is None:
        python = (
            f"cant_solve must be a label that occurs in the data, but {label!r} does not; the "
            f"labels present are {labels} (pass cant_solve=None if the task had no can't-solve "
            "answer)"
        )
    return say(
        python,
        f"--cant-solve must be a label that occurs in the data, but {label!r} does not; the "
        f"labels present are {labels} (leave out --cant-solve if the task had no can't-solve "
        "answer)",
    )


def cant_solve_position(label: Any, categories: Any, name: str = "cant_solve") -> int | None:
    """Position of the can't-solve ``label`` among ``categories`` (``None`` if label is None)."""
    if label is None:
        return None
    labels = [str(c) for c in np.asarray(categories).tolist()]
    if str(label) not in labels:
        if name == "cant_solve":  # the ambppl command's option inside command_line_messages()
            raise ValueError(
                cant_solve_absent(
                    label,
                    labels,
                    f"cant_solve must be one of the category labels {labels} or None, but got "
                    f"{label!r}",
                )
            )
        raise ValueError(
            f"{name} must be one of the category labels {labels} or None, but got {label!r}"
        )
    return labels.index(str(label))


#: The attribute that says "no can't-solve category" on stored counts, where
#: ``attrs["cant_solve"] = None`` cannot be kept (netCDF has no None): ``ambppl.fit`` writes it
#: on its result's count arrays, :func:`resolve_cant_solve` reads it.
NO_CANT_SOLVE = "no_cant_solve"


class CantSolveOptionError(ValueError, TypeError):
    """A ``cant_solve=`` string other than ``"auto"``.

    A ``ValueError``, and a ``TypeError`` too, as such strings raised before ``"auto"``
    existed (``cant_solve="last"``), so that handlers of either keep catching it.
    """


def resolve_cant_solve(
    data: Any, cant_solve: int | str | None, *, dim: str | None = None, name: str = "data"
) -> int | None:
    """The can't-solve position an array function uses for ``data``.

    The one place where the array-level functions (measures, moments, estimators, exact,
    approx, planning, decisions) turn their ``cant_solve=`` keyword into a position.

    Parameters
    ----------
    data : array_like, xarray.DataArray or pytensor TensorVariable
        The function's input (``q``, ``alpha`` or ``counts``).
    cant_solve : int, None or "auto"
        The keyword as given. ``"auto"``: from ``data.attrs["cant_solve"]`` where a
        DataArray has that key (the labelled counts of :func:`ambppl.read_annotations`,
        and arrays computed from them: xarray keeps ``attrs`` through arithmetic; a count
        array of a fit's result, in memory or reloaded, keeps the readers' ``source`` and
        ``format`` or :data:`NO_CANT_SOLVE` but not a ``cant_solve`` of None, which netCDF
        cannot store: it has none);
        otherwise the documented convention, the last category (``-1``).
    dim : str, optional
        The DataArray's category dimension; default its ``"category"`` dimension where it has
        one (which must then be its last: the functions without a ``dim=`` keyword read the
        categories on the last axis; :func:`categories_last` puts it there), else its last
        dimension.
    name : str, default "data"
        The argument's name, for messages.

    Returns
    -------
    int or None
        With the ``attrs`` contract: the non-negative position of the can't-solve label
        along ``dim``, or None. Otherwise ``-1`` for ``"auto"`` and an explicit value
        unchanged (the callers' :func:`check_cant_solve` checks its type and range).

    Raises
    ------
    ValueError
        For a string other than ``"auto"`` (:class:`CantSolveOptionError`, also a
        ``TypeError``); for an ``attrs["cant_solve"]`` label that is not among the labels of
        ``dim``; for an explicit position or None that contradicts ``attrs["cant_solve"]``;
        without ``dim``, for a ``"category"`` dimension that is not the last (the caller
        would read another dimension as the categories).
    """
    if isinstance(cant_solve, str) and cant_solve != "auto":
        raise CantSolveOptionError(
            "cant_solve must be an integer position along the category axis, None (no "
            "can't-solve category) or 'auto' (a labelled DataArray's attrs['cant_solve'], "
            f"else the last category), but got {cant_solve!r}"
        )
    cls = type(data)
    labelled = cls.__name__ == "DataArray" and cls.__module__.startswith("xarray")
    attrs = data.attrs if labelled else {}
    # The readers write attrs "source", "format" and "cant_solve"; saving a fit to netCDF
    # leaves out attributes that are None (ambppl.fit's _storable_attrs), so a reloaded count
    # array with the readers' marks and no "cant_solve" had none.
    stored = {"source", "format"} <= set(attrs) or bool(attrs.get(NO_CANT_SOLVE))
    if labelled and dim is None and "category" in data.dims and data.dims[-1] != "category":
        # with or without attrs: the caller reads the categories on the last axis
        raise ValueError(
            f"{name} must have its categories on the last axis, but its 'category' "
            f"dimension is not last (dims {tuple(data.dims)}); pass "
            f"{name}.transpose(..., 'category')"
        )
    if not labelled or not ("cant_solve" in attrs or stored) or data.ndim == 0:  # a scalar:
        return -1 if isinstance(cant_solve, str) else cant_solve  # the callers refuse it
    label = attrs.get("cant_solve")
    if dim is None:
        dim = "category" if "category" in data.dims else data.dims[-1]
    labels = [str(c) for c in np.asarray(data[dim].values).tolist()]
    if label is None:
        position = None
    elif str(label) in labels:
        position = labels.index(str(label))
    else:
        raise ValueError(
            f"{name}.attrs['cant_solve'] must be one of the labels of its {dim!r} dimension "
            f"{labels} or None, but got {label!r}; set {name}.attrs['cant_solve'] to the "
            "can't-solve label (None if there is none)"
        )
    if isinstance(cant_solve, str):
        return position
    given = check_cant_solve(cant_solve, len(labels))
    if given != position:
        said = "no can't-solve category" if given is None else f"category {labels[given]!r}"
        held = "no can't-solve category" if position is None else f"position {position}"
        raise ValueError(
            f"cant_solve={cant_solve!r} ({said}) contradicts {name}.attrs['cant_solve'] = "
            f"{label!r} ({held} along {dim!r}); leave cant_solve out (it then follows "
            f"attrs['cant_solve']), or change {name}.attrs['cant_solve'] if the data are "
            "labelled wrongly"
        )
    return position


def categories_last(data: Any) -> Any:
    """``data`` with its ``"category"`` dimension last, where it is an
    :class:`xarray.DataArray` that has one (its ``attrs`` kept); anything else as it is.

    The functions that read the categories on the last axis of an array call it first, so
    that labelled counts are read by the dimension's name: a DataArray with dims
    ``("category", "item")`` is the same data as its transpose.

    Examples
    --------
    >>> import xarray as xr
    >>> counts = xr.DataArray([[3, 0], [1, 4]], dims=("category", "item"))
    >>> categories_last(counts).dims
    ('item', 'category')
    >>> categories_last([[3, 1], [0, 4]])
    [[3, 1], [0, 4]]
    """
    cls = type(data)
    labelled = cls.__name__ == "DataArray" and cls.__module__.startswith("xarray")
    if labelled and "category" in data.dims and data.dims[-1] != "category":
        return data.transpose(..., "category")
    return data


def check_item_counts(counts: Any) -> tuple[np.ndarray, bool]:
    """Counts of one item (K,) or of many (items, K): ``(array, single)``."""
    arr = check_counts(counts, "counts")
    if arr.ndim > 2:
        raise ValueError(
            "counts must have shape (items, K) or (K,) (one row of category counts per item), "
            f"but got shape {arr.shape}"
        )
    return arr, arr.ndim == 1
