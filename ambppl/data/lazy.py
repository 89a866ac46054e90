"""The score of counts too large for memory: dask over chunks of items.

Two passes over the chunks, both dask graphs (threads, processes or a ``dask.distributed``
cluster, whichever scheduler is active):

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.readers import is_zarr_store
from ambppl.internal.checks import MAX_COUNT, check_counts
from ambppl.internal.messages import say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Items per chunk when a Parquet file is read (a zarr store keeps its own chunks).
CHUNK_ITEMS = 2_000_000

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
    """Counts too large for memory: a dask array (items x categories) chunked along items,
    the item labels (a dask array in the same chunks, or None: positions), the category
    labels and the can't-solve label from the source (None if it names none)."""

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


def from_dataarray(counts: Any) -> LazyCounts:
    """The :class:`LazyCounts` of a dask-backed count DataArray (dims item, category)."""
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


def open_lazy(path: Path, ftype: str, *, item: Any, chunk_items: int) -> LazyCounts:
    """The :class:`LazyCounts` of a zarr store or a Parquet file, nothing read yet.

    A zarr store holds one 2-D array (named ``counts`` if there are several; xarray's
    ``to_zarr`` of a count DataArray: its ``item`` and ``category`` coordinates and
    ``cant_solve`` attribute are used, the item labels read lazily too). A Parquet file
    holds one row per item and one integer column per category, plus optionally the item
    column ``item`` names (default: a column called "item" if there is one); it is read in
    chunks of ``chunk_items`` items.
    """
    import dask
    import dask.array as da

    if ftype == "zarr":
        import xarray as xr
        import zarr

        if not (path.is_dir() and is_zarr_store(path)):
            raise ValueError(
                f"could not read {path.name!r} as ZARR: it is not a zarr store (a folder written "
                "by xarray's to_zarr or by zarr, holding a 2-D count array); "
                + say(
                    "pass format='parquet' or leave format out",
                    "give --format parquet or leave --format out",
                )
                + " for other files"
            )
        node = zarr.open(str(path), mode="r")
        if isinstance(node, zarr.Array):  # a bare count array: categories by position
            values = da.from_zarr(node).rechunk({1: -1})
            names = [str(k) for k in range(values.shape[1])]
            return LazyCounts(values, None, names)
        group = node
        consolidated = getattr(group.metadata, "consolidated_metadata", None) is not None
        store = xr.open_zarr(path, drop_variables=["item"], consolidated=consolidated)
        two_d = [n for n, v in store.data_vars.items() if v.ndim == 2]
        name = "counts" if "counts" in store.data_vars else (two_d[0] if len(two_d) == 1 else None)
        if name is None:
            raise ValueError(
                f"the zarr store {path.name!r} must hold one 2-D count array (items x "
                f"categories), named 'counts' if there are several, but it holds "
                f"{sorted(store.data_vars)!r}"
            )
        counts = store[name]
        cat_dim = counts.dims[1]
        categories = (
            [str(c) for c in counts[cat_dim].values]
            if cat_dim in counts.coords
            else [str(k) for k in range(counts.sizes[cat_dim])]
        )
        items = None
        if (path / "item").exists():
            items = da.from_zarr(str(path), component="item")
        cant_solve = counts.attrs.get("cant_solve", store.attrs.get("cant_solve"))
        values = counts.data.rechunk({0: counts.data.chunks[0], 1: -1})
        return LazyCounts(values, items, categories, cant_solve)
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"the folder {path.name!r} holds no .parquet files")
    metas = [pq.ParquetFile(f).metadata for f in files]
    columns = [name for name in metas[0].schema.names if name != "__index_level_0__"]
    item_column = item if item is not None else ("item" if "item" in columns else None)
    if item_column is not None and item_column not in columns:
        raise ValueError(
            f"item column {item_column!r} is not in {path.name!r}; its columns are "
            f"{columns!r}: pass item=<one of them> (on the command line --item)"
        )
    categories = [c for c in columns if c != item_column]
    item_dtype = np.dtype(object)
    if item_column is not None:
        arrow_type = metas[0].schema.to_arrow_schema().field(item_column).type
        try:
            item_dtype = np.dtype(arrow_type.to_pandas_dtype())
        except (NotImplementedError, TypeError):
            pass
    # chunks of whole row groups, about chunk_items items each; sizes from the metadata
    # (nothing is read before the passes)
    value_parts, item_parts = [], []
    first_row = 0  # of the chunk, counted over all files (for messages about a bad count)
    for file, meta in zip(files, metas, strict=True):
        groups: list[int] = []
        rows = 0
        for g in range(meta.num_row_groups):
            groups.append(g)
            rows += meta.row_group(g).num_rows
            if rows >= chunk_items or g == meta.num_row_groups - 1:
                if rows:
                    value_parts.append(
                        da.from_delayed(
                            dask.delayed(read_counts)(
                                file, list(groups), categories, first_row=first_row
                            ),
                            shape=(rows, len(categories)),
                            dtype=np.int64,
                        )
                    )
                    if item_column is not None:
                        item_parts.append(
                            da.from_delayed(
                                dask.delayed(read_items)(file, list(groups), item_column),
                                shape=(rows,),
                                dtype=item_dtype,
                            )
                        )
                first_row += rows
                groups, rows = [], 0
    if not value_parts:
        raise ValueError(f"{path.name!r} has no rows (no items); give the file with the counts")
    if len(categories) < 2:
        raise ValueError(
            f"{path.name!r} must have at least 2 category columns (one count per category), but "
            f"its columns besides the item column are {categories!r}"
        )
    values = da.concatenate(value_parts, axis=0)
    items = da.concatenate(item_parts) if item_parts else None
    return LazyCounts(values, items, [str(c) for c in categories])


def read_counts(
    file: Path, groups: list[int], columns: list[str], *, first_row: int = 0
) -> np.ndarray:
    """Row groups of a Parquet file of counts: an int64 block (rows x categories), checked
    as :func:`ambppl.internal.checks.check_counts` does (a null cell, a fraction, a negative or huge
    count is refused with its row, counted from ``first_row``, and column)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.ParquetFile(file).read_row_groups(groups, columns=columns)
    for name in columns:
        kind = table.schema.field(name).type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise TypeError(
                f"counts in {Path(file).name!r} must be numbers, but column {name!r} holds "
                f"{kind}; give one integer column per category (and the item column)"
            )
    # a null cell comes out as NaN (float), which check_counts names
    block = np.column_stack([table.column(n).to_numpy(zero_copy_only=False) for n in columns])
    return checked_block(block, f"counts in {Path(file).name!r}", columns, first_row)


def read_items(file: Path, groups: list[int], column: str) -> np.ndarray:
    """Row groups of a Parquet file: the item labels."""
    import pyarrow.parquet as pq

    table = pq.ParquetFile(file).read_row_groups(groups, columns=[column])
    return table.column(column).to_numpy(zero_copy_only=False)
