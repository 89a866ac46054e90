"""The data contract that every estimator takes: labelled counts, or an answers table.

*Counts* are an :class:`xarray.DataArray` with dims ``("item", "category")``, the item ids
and category labels as coordinates and ``attrs`` naming the can't-solve label
(``attrs["cant_solve"]``: a label, or None), the source and the reading options; the
readers (:func:`ambppl.read_annotations`) return them. *Answers* are a
:class:`pandas.DataFrame` with one row per answer and the columns ``item``, ``rater`` and
``label`` (a categorical in the category order), with the same ``attrs``;
:func:`ambppl.data.read_long` returns them. Answer-level models (rater effects) take
answers; every other estimator takes counts.

Paths are read by the readers and by the ``ambppl`` command only: an estimator given a path
says which reader to call. Arrays and frames are accepted as the readers' defaults read
them (:func:`as_counts`), so a notebook can pass ``numpy`` counts directly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.files import READ_OPTIONS
from ambppl.data.labels import _label_str, _order
from ambppl.data.matrices import ids_of_one_type
from ambppl.data.readers import read_annotations, read_long
from ambppl.internal.checks import cant_solve_position, check_counts, show_values

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = [
    "READ_OPTIONS",
    "as_answers",
    "as_counts",
    "count_values",
    "describe",
    "refuse_path",
    "refuse_read_options",
]


def refuse_path(data: Any, how: str, caller: str | None = None, name: str = "data") -> None:
    """Raise when ``data`` is a path: estimators take annotations already read.

    Parameters
    ----------
    data : object
        What the estimator was given.
    how : str
        The call (or calls) that read it, with ``{path}`` where the quoted path goes.
    caller : str, optional
        The estimator's name; without it the message speaks of the argument ``name``.
    name : str, default "data"
        The argument's name, for the message without ``caller``.

    Raises
    ------
    TypeError
        For a ``str`` or ``os.PathLike``, naming the calls in ``how``.

    Examples
    --------
    >>> refuse_path([[3, 1]], "ambppl.read_annotations({path}, ...)")
    >>> refuse_path("a.csv", "ambppl.read_annotations({path}, ...)", "fit")
    Traceback (most recent call last):
    TypeError: fit takes annotations already read, not a path, but got 'a.csv'; read it first: ambppl.read_annotations('a.csv', ...)
    """  # noqa: E501
    if not isinstance(data, str | os.PathLike):
        return
    path = repr(os.fspath(data))
    if caller is None:
        what = (
            f"{name} must be annotations already read (counts from ambppl.read_annotations, "
            "answers from ambppl.data.read_long, an array or a DataFrame), but got the path"
        )
    else:
        what = f"{caller} takes annotations already read, not a path, but got"
    raise TypeError(f"{what} {path}; read it first: {how.format(path=path)}")


def refuse_read_options(
    kwargs: dict[str, Any], caller: str, reader: str = "ambppl.read_annotations"
) -> None:
    """Raise when ``kwargs`` hold reader options: the estimator ``caller`` takes read data.

    Parameters
    ----------
    kwargs : dict
        Keywords an estimator received besides its own.
    caller : str
        The estimator's name, for the message.
    reader : str, default "ambppl.read_annotations"
        The reader the message names (``"ambppl.data.read_long"`` for answer-level models).

    Raises
    ------
    TypeError
        Naming the reader options found and the call that takes them.

    Examples
    --------
    >>> refuse_read_options({"kappa_scale": 1.0}, "fit")
    >>> refuse_read_options({"item": "task"}, "fit")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: fit takes annotations already read, ... but got ['item']; ...
    """
    found = sorted(k for k in kwargs if k in READ_OPTIONS)
    if found:
        raise TypeError(
            f"{caller} takes annotations already read, so reader options do not go to it, "
            f"but got {found}; pass them to the reader and give {caller} what it returns: "
            f"{caller}({reader}(data, {found[0]}=...), ...)"
        )


def as_counts(data: Any, name: str = "data") -> xr.DataArray:
    """The counts of the contract for ``data`` (validated; read with the readers' defaults
    where ``data`` is an array or a frame).

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or array-like
        Counts with dims ``("item", "category")`` (as :func:`ambppl.read_annotations`
        returns them), an answers table (:func:`ambppl.data.read_long`), a frame that
        :func:`ambppl.read_annotations` reads with its defaults, or an array (a numpy array,
        or a nested list or tuple) of counts (items x categories; no can't-solve category
        unless the array is read with ``ambppl.read_annotations(array, cant_solve=...)``).
    name : str, default "data"
        The argument's name in the caller, for messages.

    Returns
    -------
    xarray.DataArray
        ``int64`` counts named ``counts`` with coordinates ``item`` and ``category`` and the
        input's ``attrs`` (``attrs["cant_solve"]`` always present: a label or None).

    Raises
    ------
    TypeError
        For a path (read it with :func:`ambppl.read_annotations` first), or data of another
        type (a dict, a number, a list that is not a table of numbers).
    ValueError
        For a DataArray with other dims, counts that are not non-negative whole numbers, no
        items, item or category labels that occur more than once (or print the same, as
        ``1`` and ``"1"``: a can't-solve label given twice would be read as can't-solve in
        one column and as a class in the other), or ``attrs["cant_solve"]`` naming no
        category.

    Examples
    --------
    >>> import numpy as np
    >>> counts = as_counts(np.array([[3, 1], [0, 4]]))
    >>> counts.dims, counts.attrs["cant_solve"], counts.values.tolist()
    (('item', 'category'), None, [[3, 1], [0, 4]])
    >>> as_counts([[3, 1], [0, 4]]).values.tolist()  # a nested list: the same
    [[3, 1], [0, 4]]
    >>> as_counts("answers.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: data must be annotations already read ...('answers.csv', ...)
    """
    import pandas as pd
    import xarray as xr

    refuse_path(data, "ambppl.read_annotations({path}, ...)", name=name)
    expected = (
        f"{name} must be counts of answers: an xarray.DataArray with dims ('item', "
        "'category') (as ambppl.read_annotations returns), a pandas.DataFrame that "
        "ambppl.read_annotations reads, or a numpy array or nested list of counts (items x "
        "categories)"
    )
    if isinstance(data, list | tuple):
        data = _table_of_numbers(data, expected)
    if isinstance(data, xr.DataArray):
        if tuple(data.dims) != ("item", "category"):
            fix = (
                f"; put them in that order with {name}.transpose('item', 'category')"
                if set(data.dims) == {"item", "category"}
                else "; name them with .rename(...) (items first, categories last)"
                if data.ndim == 2
                else ""
            )
            raise ValueError(
                f"{name} as a DataArray must be counts with dims ('item', 'category'), but "
                f"got dims {tuple(data.dims)}{fix}"
            )
        counts = data
    elif isinstance(data, pd.DataFrame) and _is_answers(data):
        counts = _answers_to_counts(data)
    elif isinstance(data, pd.DataFrame | np.ndarray):
        counts = read_annotations(data)
    else:
        raise TypeError(f"{expected}, but got {type(data).__name__}")
    values = check_counts(counts.values, "counts")
    if values.shape[0] == 0:
        raise ValueError("counts must have at least one item, but got 0 items")
    coords = {
        dim: (counts[dim].values if dim in counts.coords else np.arange(counts.sizes[dim]))
        for dim in ("item", "category")
    }
    # a label given twice is two rows or columns that no output tells apart, and a
    # can't-solve label given twice had its first column taken as can't-solve and the other
    # counted as a class; labels are compared as text, as the can't-solve label is (1, "1")
    for dim, row, fix in (
        ("item", "row", "sum the rows of each item into one"),
        ("category", "column", "sum the columns of each label into one"),
    ):
        index = pd.Index(coords[dim])
        mixed = pd.api.types.infer_dtype(index, skipna=False).startswith("mixed")
        if index.is_unique and not mixed:  # one type: labels that differ print differently
            continue
        labels = index.tolist()
        texts = [str(v) for v in labels]
        counted = pd.Series(texts).value_counts(sort=False)
        twice = counted.index[counted.to_numpy() > 1].tolist()
        if not twice:
            continue
        groups = [[v for v, t in zip(labels, texts, strict=True) if t == d] for d in twice]
        alike = [g for g in groups if len({repr(v) for v in g}) > 1]
        if alike:
            what = f"the labels {show_values(alike[0])} print the same (compared as text)"
        elif len(groups) == 1:
            what = f"the label {groups[0][0]!r} occurs more than once"
        else:
            what = f"the labels {show_values(g[0] for g in groups)} occur more than once"
        among = f" among {show_values(labels)}" if dim == "category" else ""
        raise ValueError(
            f"{name} must have distinct {dim} labels (one {row} of counts per {dim}), but "
            f"{what}{among}; {fix} ({name}.groupby({dim!r}).sum()), or give the {dim} "
            f"{row}s distinct labels"
        )
    attrs = dict(counts.attrs)
    attrs.setdefault("cant_solve", None)
    # labels of two types that print apart (0 beside "x1", checked above): as text, as the
    # readers give them (samplers, summaries and netCDF take one type per coordinate)
    mixed_categories = ids_of_one_type(coords["category"]) is not coords["category"]
    coords = {dim: ids_of_one_type(labels) for dim, labels in coords.items()}
    if mixed_categories and attrs["cant_solve"] is not None:
        attrs["cant_solve"] = _label_str(attrs["cant_solve"])
    # a label that names no category would leave callers to guess its column
    cant_solve_position(attrs["cant_solve"], coords["category"], "data.attrs['cant_solve']")
    return xr.DataArray(
        values, dims=("item", "category"), coords=coords, name="counts", attrs=attrs
    )


def _table_of_numbers(data: list | tuple, expected: str) -> np.ndarray:
    """A nested list or tuple of counts as a numpy array; refused (``expected``: what the
    argument must be) where it is ragged or holds other things than numbers."""
    try:
        arr = np.asarray(data)
    except ValueError:  # ragged rows
        arr = None
    if arr is None or arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{expected}, but got a {type(data).__name__} that is not a table of numbers "
            "(rows of equal length)"
        )
    return arr


def as_answers(data: Any) -> tuple[pd.DataFrame, xr.DataArray]:
    """The answers table of the contract for ``data``, and the counts it makes.

    Parameters
    ----------
    data : pandas.DataFrame
        An answers table (:func:`ambppl.data.read_long`), or a long frame that
        :func:`ambppl.data.read_long` reads with its defaults (columns ``task``, ``worker``,
        ``label``).

    Returns
    -------
    answers : pandas.DataFrame
        One row per answer: ``item``, ``rater``, ``label`` (categorical), with ``attrs``.
    counts : xarray.DataArray
        The per-item counts of those answers (:func:`as_counts`), with the answers' ``attrs``.

    Raises
    ------
    TypeError
        For a path, or data that are not a frame of answers (counts hold no rater ids).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"],
    ...                    "label": ["yes", "no", "yes"]})
    >>> answers, counts = as_answers(df)
    >>> list(answers.columns), counts.values.tolist()
    (['item', 'rater', 'label'], [[1, 1], [0, 1]])
    """
    import pandas as pd

    refuse_path(data, "ambppl.data.read_long({path}, ...)")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            "data must be answers, one row per answer with the rater's id (a DataFrame, as "
            f"ambppl.data.read_long returns), but got {type(data).__name__}; counts hold no "
            "rater ids"
        )
    answers = _cant_solve_last(data) if _is_answers(data) else read_long(data)
    counts = _answers_to_counts(answers)
    return answers, as_counts(counts)


def _cant_solve_last(answers: pd.DataFrame) -> pd.DataFrame:
    """An answers table with its can't-solve category last, as :func:`read_long` writes it.

    A table edited after reading (categories reordered, one added with
    ``cat.add_categories``) may have another order; the models index their answer columns
    by the table's categories and the counts put can't-solve last, so the two must agree.
    """
    cs = answers.attrs["cant_solve"]
    categories = list(answers["label"].cat.categories)
    if cs is None or (categories and categories[-1] == cs):
        return answers
    if cs not in categories:
        raise ValueError(
            "answers.attrs['cant_solve'] must be one of the label's categories "
            f"{categories} or None, but got {cs!r}"
        )
    order, _ = _order(categories, categories, cs, sort=False)  # the readers' rule
    out = answers.copy()
    out["label"] = out["label"].cat.reorder_categories(order)
    out.attrs = dict(answers.attrs)
    return out


def _is_answers(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is an answers table as :func:`ambppl.data.read_long` writes it."""
    import pandas as pd

    return (
        list(frame.columns) == ["item", "rater", "label"]
        and isinstance(frame["label"].dtype, pd.CategoricalDtype)
        and "cant_solve" in frame.attrs
    )


def _answers_to_counts(answers: pd.DataFrame) -> xr.DataArray:
    counts = read_annotations(
        answers,
        item="item",
        rater="rater",
        label="label",
        cant_solve=answers.attrs["cant_solve"],
        categories=list(answers["label"].cat.categories),
    )
    for key in ("source", "n_dropped", "n_raters", "format"):
        counts.attrs[key] = answers.attrs.get(key)
    return counts


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
    labels = (
        counts.coords["category"].values.tolist()
        if "category" in counts.coords
        else list(range(counts.sizes["category"]))
    )
    return values, cant_solve_position(counts.attrs.get("cant_solve"), labels)


def describe(data: Any) -> str:
    """The size of annotations in words, for progress lines and messages.

    Parameters
    ----------
    data : object
        Counts (anything with ``sizes`` or a two-dimensional ``shape``) or an answers table
        (columns ``item`` and ``rater``).

    Returns
    -------
    str
        ``"N items x K categories"``, ``"N answers on M items by R raters"``, or the type.

    Examples
    --------
    >>> import numpy as np
    >>> describe(np.zeros((40, 3)))
    '40 items x 3 categories'
    """
    sizes = getattr(data, "sizes", None)
    if sizes is not None and "item" in sizes and "category" in sizes:
        return f"{sizes['item']} items x {sizes['category']} categories"
    columns = getattr(data, "columns", None)
    if columns is not None and {"item", "rater"} <= set(columns):
        return (
            f"{len(data)} answers on {data['item'].nunique()} items by "
            f"{data['rater'].nunique()} raters"
        )
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) == 2:
        return f"{shape[0]} items x {shape[1]} categories"
    return f"the data ({type(data).__name__})"
