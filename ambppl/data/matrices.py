"""Count matrices (items x categories) checked and labelled as the data contract's counts.

A numpy array, a DataArray (its coordinates and ``attrs`` kept), or a frame of counts (one
row per item, one column per category; from a CSV/TSV file read as text, each cell checked to
be a number) becomes int64 counts with ``item`` and ``category`` coordinates, the columns in
their order (can't-solve last).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.files import _READ_NOTE, DEFAULT_ITEM
from ambppl.data.labels import (
    _empty_items_error,
    _label_str,
    _order,
    _plain_integer_ids,
    _show,
)
from ambppl.internal.checks import MAX_COUNT, check_counts
from ambppl.internal.messages import reader_option, say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

#: Headers (compared in lower case, stripped) of a first column that holds the item ids of a
#: frame of counts whose ``item=`` column is absent: pandas' name for the empty header that
#: ``DataFrame.to_csv`` writes over the index, the index's name after ``reset_index()``, and
#: the usual names of an id column. Counted as a category, such a column would add its ids
#: to every item's answers.
ID_HEADERS = frozenset({"", "unnamed: 0", "index", "id", "item", "item_id", "items", "task_id"})

#: The column where ``DataFrame.to_parquet`` stores an index without a name.
PARQUET_INDEX = "__index_level_0__"


def id_column(columns: list[Any]) -> Any | None:
    """The column of a table of counts that holds the item ids when ``item=`` is left at its
    default: :data:`DEFAULT_ITEM` if present, else the index ``to_parquet`` stored
    (:data:`PARQUET_INDEX`), else the first column headed as :data:`ID_HEADERS` lists;
    None if there is none (the items are then the index or numbered from 0).

    Examples
    --------
    >>> id_column(["Unnamed: 0", "yes", "no"]), id_column(["yes", "no"])
    ('Unnamed: 0', None)
    """
    for wanted in (DEFAULT_ITEM, PARQUET_INDEX):
        if wanted in columns:
            return wanted
    return next((c for c in columns if str(c).strip().lower() in ID_HEADERS), None)


def _numeric_counts(table: pd.DataFrame, ids: np.ndarray, text: bool) -> np.ndarray:
    """The count columns of a frame as one numpy array: int64 when every column holds whole
    numbers without a gap, else float64 (a missing cell NaN, which
    :func:`ambppl.internal.checks.check_counts` names). ``text``: the columns of a CSV/TSV file,
    read as text; a cell that is not a number is refused. Integers above 2**53 are refused
    here, before float64 could round them (2**53 + 1 to 2**53)."""
    import pandas as pd

    def at(row: int) -> str:
        item = ids[row].item() if isinstance(ids[row], np.generic) else ids[row]
        return f"(item {item!r}, category {column!r})"

    out = []
    for column in table.columns:
        cells = table[column]
        numbers = pd.to_numeric(cells, errors="coerce") if text else cells
        if text:
            bad = numbers.isna().to_numpy() & cells.notna().to_numpy()
            if np.any(bad):
                raise ValueError(
                    f"counts must be numbers, but got {cells.iloc[int(np.argmax(bad))]!r} "
                    f"{at(int(np.argmax(bad)))}; fix that cell, pass "
                    f"{say(f'item={column!r}', f'--item {column}')} if that column holds the "
                    "item ids, or pass the layout of a table of answers"
                )
        if numbers.dtype.kind not in "iuf":
            return table.to_numpy()  # not numbers: check_counts says so
        if numbers.dtype.kind in "iu":
            large = (numbers > MAX_COUNT).to_numpy(dtype=bool, na_value=False)
            if np.any(large):
                row = int(np.argmax(large))
                raise ValueError(
                    f"counts must be at most 2**53 = {MAX_COUNT} answers per item (beyond, "
                    f"float64 loses whole numbers and int64 totals overflow), but got "
                    f"{numbers.iloc[row]} {at(row)}; check that the data hold counts of answers"
                )
            if not numbers.isna().any():
                out.append(numbers.to_numpy(dtype=np.int64))
                continue
        out.append(numbers.to_numpy(dtype=np.float64, na_value=np.nan))
    if not out:
        return np.empty((len(table), 0))
    return np.column_stack(out)


def _from_counts(
    obj: Any, item: Any, cant_solve: Any, categories: list[str] | None, source: str
) -> xr.DataArray:
    """Check a count matrix and label it."""
    import pandas as pd
    import xarray as xr

    attrs: dict[str, Any] = {"n_dropped": 0, "n_raters": None}
    if item != DEFAULT_ITEM and not isinstance(obj, pd.DataFrame):
        kind = "a DataArray" if isinstance(obj, xr.DataArray) else "an array"
        given = say(f"item={item!r}", f"--item {item}")
        raise ValueError(
            f"{say('item', '--item')} names the id column of a table, but {source!r} holds "
            f"counts as {kind} (items by position or coordinate), so {given} would be unused; "
            "leave it out"
        )
    if isinstance(obj, xr.DataArray):
        if obj.ndim != 2:
            raise ValueError(
                f"counts must be 2-D (item x category), but got dims {obj.dims} "
                f"of shape {obj.shape}"
            )
        if set(obj.dims) == {"item", "category"}:
            obj = obj.transpose("item", "category")
        da_item, da_cat = obj.dims
        values = obj.values
        ids = obj[da_item].values if da_item in obj.coords else np.arange(obj.shape[0])
        labels = obj[da_cat].values.tolist() if da_cat in obj.coords else None
        for key in ("n_dropped", "n_raters", "source"):
            if obj.attrs.get(key) is not None:
                attrs[key] = obj.attrs[key]
        if cant_solve is None:
            cant_solve = obj.attrs.get("cant_solve")
        source = attrs.pop("source", source)
    elif isinstance(obj, pd.DataFrame):
        text = obj.attrs.get(_READ_NOTE, {}).get("text", False)
        ids_in = id_column(list(obj.columns)) if item == DEFAULT_ITEM else None
        if item in obj.columns:
            obj = obj.set_index(item)
        elif item != DEFAULT_ITEM:
            raise ValueError(
                f"item column {item!r} is not in the counts; the columns present are "
                f"{list(obj.columns)!r}: {reader_option('item')} "
                "or leave it out (the index, or a first column headed 'id', 'item' or '', holds "
                "the item ids)"
            )
        elif ids_in is not None:
            obj = obj.set_index(ids_in)
        ids = obj.index.to_numpy()
        labels = obj.columns.tolist()
        if text:  # a CSV/TSV of counts, read as text: ids as written, counts as numbers
            ids = _plain_integer_ids(np.asarray(ids, dtype=object))
        values = _numeric_counts(obj, ids, text)
    else:
        if isinstance(obj, np.ma.MaskedArray):  # np.asarray would drop the mask unseen
            raise TypeError(
                "counts must be a plain array, but got a numpy masked array, whose mask the "
                "counts cannot keep: fill the masked cells (e.g. counts.filled(0)) or drop "
                "their items first"
            )
        values = np.asarray(obj)
        if values.ndim != 2:
            raise ValueError(
                f"counts must be a 2-D array (items x categories), but got shape {values.shape}"
            )
        ids = np.arange(values.shape[0])
        labels = None
    named = labels is not None and len(labels) == np.shape(values)[-1]
    arr = check_counts(
        values, "counts", items=np.asarray(ids), categories=labels if named else categories
    )
    if arr.shape[0] == 0:  # as ambppl.data.as_counts and ambppl.fit: nothing to count
        raise ValueError(
            f"counts must have at least one item, but got 0 items: {source!r} holds counts "
            f"of shape {arr.shape}; give at least one row of counts"
        )
    if labels is None:
        if categories is not None and len(categories) != arr.shape[1]:
            raise ValueError(
                f"categories must name the {arr.shape[1]} columns of the count matrix in order, "
                f"but got {len(categories)} labels: {categories!r}"
            )
        found = categories if categories is not None else [str(j) for j in range(arr.shape[1])]
        columns = found
    else:
        columns = [_label_str(c) for c in labels]
        dupes = sorted(c for c, n in Counter(columns).items() if n > 1)
        if dupes:
            raise ValueError(
                f"counts must have distinct category labels, but {_show(dupes)} repeat"
            )
        found = columns
    order, cs = _order(found, categories, cant_solve, sort=False)
    where = {c: j for j, c in enumerate(columns)}
    out = np.zeros((arr.shape[0], len(order)), dtype=np.int64)
    for j, c in enumerate(order):
        if c in where:
            out[:, j] = arr[:, where[c]]
    empty = out.sum(axis=1) == 0
    if np.any(empty):
        raise _empty_items_error(np.asarray(ids), empty, "(an all-zero row of counts)")
    return xr.DataArray(
        out,
        dims=("item", "category"),
        coords={"item": np.asarray(ids), "category": np.array(order, dtype=object)},
        name="counts",
        attrs={
            "cant_solve": cs,
            "n_dropped": int(attrs["n_dropped"]),
            "source": source,
            "n_raters": attrs["n_raters"],
            "format": "counts",
        },
    )
