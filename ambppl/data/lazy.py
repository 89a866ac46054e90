"""Counts too large for memory (:class:`LazyCounts`) and the two dask passes that score them.

:class:`LazyCounts` is the data contract of counts read in chunks: a dask array (items x
categories) chunked along items, with the item and category labels and the can't-solve label
(:func:`ambppl.data.open_counts_in_chunks` opens a zarr store or a Parquet file as one,
:func:`from_dataarray` wraps a dask-backed DataArray). Two passes over its chunks, both dask
graphs (threads, processes or a ``dask.distributed`` cluster, whichever scheduler is active):

1. every chunk's distinct count vectors with their frequencies, merged by a tree reduction
   (``dask.delayed``) into the data set's distinct vectors, which are few (at most
   ``C(n + K - 1, K - 1)`` for n answers over K categories) and summarized in memory by
   :func:`ambppl.analysis.scoring.summarize_distinct`;
2. every chunk's rows looked up in that summary (one integer key per count vector, binary
   search), giving a lazy :class:`dask.dataframe.DataFrame` that is written chunk by chunk
   (``to_parquet``) without ever holding all items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.internal.checks import MAX_COUNT, check_counts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Distinct count vectors merged per node of the reduction tree.
SPLIT_EVERY = 8


def radix(maxima: np.ndarray) -> np.ndarray | None:
    """Multipliers that turn a count vector into one int64 key (mixed radix), or None when
    the key space ``prod(max_k + 1)`` does not fit in an int64."""
    bases = [int(m) + 1 for m in maxima]
    if math.prod(bases) >= 2**63:
        return None
    return np.cumprod([1, *bases[:-1]]).astype(np.int64)


def checked_block(
    block: np.ndarray, name: str, categories: list[str] | None = None, first_row: int = 0
) -> np.ndarray:
    """A block of counts as int64, checked as :func:`ambppl.internal.checks.check_counts` does (a
    missing, fractional, negative or huge count, or a row summing past 2**53, is refused
    with where it is); an int64 block that passes is returned without a copy."""

    if block.dtype == np.int64 and block.min() >= 0:  # the usual case, checked cheaply
        if block.sum(axis=1, dtype=np.float64).max() <= MAX_COUNT:
            return block
    return check_counts(block, name, categories=categories, first_row=first_row)


def unique_rows(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a count block and how often each occurs."""
    block = np.asarray(block)
    if block.shape[0] == 0:
        return np.empty((0, block.shape[1]), dtype=np.int64), np.empty(0, dtype=np.int64)
    block = checked_block(block, "counts (rows counted within a chunk of items)")
    mult = radix(block.max(axis=0))
    if mult is None:  # a huge key space: numpy's row-wise unique (slower, any size)
        rows, freq = np.unique(block, axis=0, return_counts=True)
        return rows, freq.astype(np.int64)
    _, first, freq = np.unique(block @ mult, return_index=True, return_counts=True)
    return block[first], freq.astype(np.int64)


def merge_unique(*parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Merge (rows, frequencies) pairs of several chunks into one, frequencies summed."""
    rows = np.concatenate([p[0] for p in parts])
    freq = np.concatenate([p[1] for p in parts])
    if rows.shape[0] == 0:
        return rows, freq
    mult = radix(rows.max(axis=0))
    if mult is None:
        out, inverse = np.unique(rows, axis=0, return_inverse=True)
    else:
        _, first, inverse = np.unique(rows @ mult, return_index=True, return_inverse=True)
        out = rows[first]
    return out, np.bincount(inverse.reshape(-1), weights=freq).astype(np.int64)


def distinct_vectors(blocks: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Pass 1: the distinct count vectors of all ``blocks`` (delayed arrays) and their
    frequencies, by a tree reduction on the active dask scheduler."""
    import dask

    level = [dask.delayed(unique_rows)(b) for b in blocks]
    while len(level) > 1:
        level = [
            dask.delayed(merge_unique)(*level[i : i + SPLIT_EVERY])
            for i in range(0, len(level), SPLIT_EVERY)
        ]
    ((rows, freq),) = dask.compute(level[0])
    order = np.lexsort(rows.T[::-1])  # rows in numpy.unique(axis=0)'s order, as in memory
    return rows[order], freq[order]


class Lookup:
    """The per-distinct-vector score columns and the keys that find a count vector's row."""

    def __init__(self, distinct: np.ndarray, columns: dict[str, np.ndarray]) -> None:
        self.distinct = distinct
        self.columns = columns
        self.mult = radix(distinct.max(axis=0)) if len(distinct) else None
        if self.mult is not None:
            keys = distinct @ self.mult
            self.order = np.argsort(keys)
            self.keys = keys[self.order]

    def rows(self, block: np.ndarray) -> np.ndarray:
        """Row of the summary of each count vector in ``block``."""
        block = np.asarray(block).astype(np.int64, copy=False)
        if self.mult is not None:
            pos = np.searchsorted(self.keys, block @ self.mult)
            return self.order[np.minimum(pos, len(self.keys) - 1)]
        import pandas as pd

        index = pd.MultiIndex.from_arrays(self.distinct.T)
        return index.get_indexer(pd.MultiIndex.from_arrays(block.T))

    def table(self, block: np.ndarray, items: np.ndarray, names: tuple[str, ...]) -> pd.DataFrame:
        """The score rows of one chunk of items."""
        import pandas as pd

        rows = self.rows(block)
        data = {}
        for name in names:
            column = self.columns[name]
            if isinstance(column, pd.Categorical):
                data[name] = pd.Categorical.from_codes(column.codes[rows], dtype=column.dtype)
            else:
                data[name] = column[rows]
        return pd.DataFrame(data, index=pd.Index(items, name="item"))


def lazy_table(
    blocks: list[Any], item_blocks: list[Any], lookup: Lookup, names: tuple[str, ...]
) -> Any:
    """Pass 2: a lazy dask DataFrame of the score rows, one partition per chunk."""
    import dask
    import dask.dataframe as dd

    meta = lookup.table(lookup.distinct[:0], np.empty(0, dtype=np.int64), names)
    parts = [
        dask.delayed(lookup.table)(b, i, names) for b, i in zip(blocks, item_blocks, strict=True)
    ]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def arrow_schema(lookup: Lookup, names: tuple[str, ...], item_example: np.ndarray) -> Any:
    """The Parquet schema of the score parts (with pandas' metadata: index ``item``)."""
    import pyarrow as pa

    example = lookup.table(lookup.distinct[:1], np.asarray(item_example)[:1], names)
    return pa.Schema.from_pandas(example, preserve_index=True)


def write_part(
    block: np.ndarray,
    items: np.ndarray,
    lookup: Lookup,
    names: tuple[str, ...],
    schema: Any,
    file: str,
) -> int:
    """Write the score rows of one chunk of items as a Parquet file (straight from the
    per-vector columns to Arrow, no pandas frame); returns the number of rows."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = lookup.rows(block)
    arrays = []
    for field in schema:
        if field.name == "item":
            arrays.append(pa.array(np.asarray(items), type=field.type))
            continue
        column = lookup.columns[field.name]
        if isinstance(column, pd.Categorical):
            codes = pa.array(column.codes[rows], type=field.type.index_type)
            arrays.append(pa.DictionaryArray.from_arrays(codes, pa.array(column.categories)))
        else:
            arrays.append(pa.array(column[rows], type=field.type))
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), file)
    return len(rows)


@dataclass
class LazyCounts:
    """Counts too large for memory, chunked along items (the data contract read in chunks).

    Attributes
    ----------
    values : dask.array.Array
        The counts, items x categories, chunked along items.
    items : dask.array.Array or None
        The item labels in the same chunks; None: items are numbered from 0.
    categories : list of str
        The category labels, one per count column.
    cant_solve : label, int or None
        The can't-solve category (a label or a position) from the source; None if it names
        none.
    """

    values: Any
    items: Any
    categories: list[str]
    cant_solve: Any = None

    def blocks(self) -> tuple[list[Any], list[Any]]:
        """Delayed count blocks and their item labels, one pair per chunk of items."""
        import dask.array as da

        values = self.values
        if values.numblocks[1] != 1:
            values = values.rechunk({1: -1})
        items = self.items
        if items is None:
            items = da.arange(values.shape[0], chunks=(values.chunks[0],))
        else:
            items = items.rechunk((values.chunks[0],))
        return list(values.to_delayed()[:, 0]), list(items.to_delayed())

    def relabel(self, categories: Any = None) -> LazyCounts:
        """These counts with other category labels.

        Parameters
        ----------
        categories : list of labels, optional
            One label per count column, in order; None returns these counts unchanged.

        Returns
        -------
        LazyCounts
            A copy with ``categories`` as strings (the dask arrays shared).

        Raises
        ------
        ValueError
            For a number of labels other than the number of count columns.
        """
        if categories is None:
            return self
        if isinstance(categories, str | bytes) or len(categories) != len(self.categories):
            raise ValueError(
                f"categories must name the {len(self.categories)} count columns, but got "
                f"{len(categories)}: {categories!r}"
            )
        return replace(self, categories=[str(c) for c in categories])


def from_dataarray(counts: Any) -> LazyCounts:
    """The :class:`LazyCounts` of a dask-backed count DataArray.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")`` backed by dask (e.g.
        ``read_annotations(...).chunk({"item": 10**6})``); its ``item`` and ``category``
        coordinates and ``attrs["cant_solve"]`` are used where present.

    Returns
    -------
    LazyCounts
        The same chunks (nothing computed), the item labels in those chunks, the category
        labels as strings and the can't-solve label.

    Raises
    ------
    ValueError
        For other dims.

    Examples
    --------
    >>> import xarray as xr
    >>> counts = xr.DataArray(np.array([[3, 1], [0, 4], [2, 2]]), dims=("item", "category"),
    ...                       coords={"category": ["yes", "no"]}).chunk({"item": 2})
    >>> lazy = from_dataarray(counts)
    >>> lazy.categories, lazy.values.chunks, lazy.items is None
    (['yes', 'no'], ((2, 1), (2,)), True)
    """
    import dask.array as da

    if tuple(counts.dims) != ("item", "category"):
        raise ValueError(
            "data as a DataArray must be counts with dims ('item', 'category'), but got dims "
            f"{tuple(counts.dims)}"
        )
    items = None
    if "item" in counts.coords:
        items = da.from_array(np.asarray(counts["item"].values), chunks=(counts.chunks[0],))
    categories = (
        [str(c) for c in counts["category"].values]
        if "category" in counts.coords
        else [str(k) for k in range(counts.sizes["category"])]
    )
    return LazyCounts(counts.data, items, categories, counts.attrs.get("cant_solve"))
