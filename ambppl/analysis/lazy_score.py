"""The two dask passes that score counts read in chunks (:class:`ambppl.data.LazyCounts`).

Both are dask graphs (threads, processes or a ``dask.distributed`` cluster, whichever
scheduler is active):

1. every chunk's distinct count vectors with their frequencies, merged by a tree reduction
   (``dask.delayed``) into the data set's distinct vectors, which are few (at most
   ``C(n + K - 1, K - 1)`` for n answers over K categories) and summarized in memory by
   :func:`ambppl.analysis.distinct.distinct_columns`;
2. every chunk's rows looked up in that summary (:class:`Lookup`: one integer key per count
   vector, binary search), giving a lazy :class:`dask.dataframe.DataFrame`
   (:func:`lazy_table`) or Parquet part files written chunk by chunk (:func:`write_part`)
   without ever holding all items.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.lazy import checked_block
from ambppl.internal.checks import SHOWN, show_values
from ambppl.internal.messages import on_command_line

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "SPLIT_EVERY",
    "Lookup",
    "arrow_schema",
    "distinct_vectors",
    "empty_items",
    "first_items",
    "lazy_table",
    "merge_unique",
    "radix",
    "unique_rows",
    "write_part",
]

#: Distinct count vectors merged per node of the reduction tree.
SPLIT_EVERY = 8


def radix(maxima: np.ndarray) -> np.ndarray | None:
    """Multipliers that turn a count vector into one int64 key (mixed radix), or None when
    the key space ``prod(max_k + 1)`` does not fit in an int64."""
    bases = [int(m) + 1 for m in maxima]
    if math.prod(bases) >= 2**63:
        return None
    return np.cumprod([1, *bases[:-1]]).astype(np.int64)


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
        # the caller's words, fixed here: the chunks are looked up in dask's threads or
        # workers, outside the context that ambppl.internal.messages.say reads
        self.command_line = on_command_line()
        self.mult = radix(distinct.max(axis=0)) if len(distinct) else None
        if self.mult is not None:
            keys = distinct @ self.mult
            self.order = np.argsort(keys)
            self.keys = keys[self.order]

    def rows(self, block: np.ndarray, items: np.ndarray | None = None) -> np.ndarray:
        """Row of the summary of each count vector in ``block`` (the counts of ``items``).

        Raises
        ------
        ValueError
            For a count vector that is not among the distinct vectors summarized: the
            chunks are read again after :func:`ambppl.score` summarized them, so a source
            changed in between (or an item not scored) would otherwise take another
            vector's row.
        """
        block = np.asarray(block)
        n_cat = self.distinct.shape[1]
        if block.ndim != 2 or block.shape[1] != n_cat:
            raise ValueError(
                self._say(
                    f"the counts read in chunks must have the {n_cat} category columns they "
                    f"had when ambppl.score summarized them, but a chunk read again has shape "
                    f"{block.shape}: the source changed since; score it again",
                    f"the counts must keep the {n_cat} category columns they had when their "
                    f"distinct count vectors were summarized, but a chunk read again has "
                    f"shape {block.shape}: the input changed while ambppl score ran; run it "
                    "again",
                )
            )
        if block.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        with np.errstate(invalid="ignore"):
            block = block.astype(np.int64, copy=False)
        if self.mult is not None and len(self.keys):
            pos = np.searchsorted(self.keys, block @ self.mult)
            rows = self.order[np.minimum(pos, len(self.keys) - 1)]
        elif len(self.distinct):
            import pandas as pd

            index = pd.MultiIndex.from_arrays(self.distinct.T)
            rows = index.get_indexer(pd.MultiIndex.from_arrays(block.T))
        else:
            rows = np.full(block.shape[0], -1)
        # the key of a vector beyond the summarized maxima, or not summarized at all, finds
        # some other row (or -1): compare the vectors themselves
        found = (rows >= 0) & np.all(self.distinct[np.maximum(rows, 0)] == block, axis=1)
        if not np.all(found):
            self._refuse_unknown(block, ~found, items)
        return rows

    def _say(self, python: str, command_line: str) -> str:
        """:func:`ambppl.internal.messages.say` as it was when the lookup was made."""
        return command_line if self.command_line else python

    def _refuse_unknown(self, block: np.ndarray, unknown: np.ndarray, items: Any) -> None:
        n = int(unknown.sum())
        which = ""
        if items is not None:
            labels = np.asarray(items)[unknown][:SHOWN]
            which = " " + show_values(
                [v.item() if isinstance(v, np.generic) else v for v in labels], n
            )
        first = block[unknown][0].tolist()
        raise ValueError(
            self._say(
                f"the counts read in chunks must be those that ambppl.score summarized, but "
                f"{n} item(s){which} of a chunk read again have count vectors it never saw "
                f"(first {first}): the source changed since ambppl.score(...) read it, and "
                "their rows would belong to other vectors; score it again (and leave the "
                "source unchanged until .compute() or .to_parquet() has read it)",
                f"the counts must be those whose distinct count vectors were summarized, but "
                f"{n} item(s){which} of a chunk read again have count vectors not among them "
                f"(first {first}): the input changed while ambppl score ran; run it again "
                "with the input left unchanged",
            )
        )

    def table(self, block: np.ndarray, items: np.ndarray, names: tuple[str, ...]) -> pd.DataFrame:
        """The score rows of one chunk of items."""
        import pandas as pd

        rows = self.rows(block, items)
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


def first_items(item_blocks: list[Any]) -> np.ndarray:
    """The item labels of the first chunk that has items (chunks may be empty), computed one
    chunk at a time: an example of the item labels' type for :func:`arrow_schema`."""
    import dask

    items = np.empty(0)
    for block in item_blocks:
        (items,) = dask.compute(block)
        items = np.asarray(items)
        if len(items):
            break
    return items


def arrow_schema(lookup: Lookup, names: tuple[str, ...], item_example: np.ndarray) -> Any:
    """The Parquet schema of the score parts (with pandas' metadata: index ``item``), from
    one score row and ``item_example``, item labels of the data (at least one:
    :func:`first_items`)."""
    import pyarrow as pa

    example = lookup.table(lookup.distinct[:1], np.asarray(item_example)[:1], names)
    return pa.Schema.from_pandas(example, preserve_index=True)


def _empty_in_block(block: np.ndarray, items: np.ndarray, limit: int) -> list[Any]:
    """The labels of the first ``limit`` items of one chunk that have no answer."""
    empty = np.asarray(block).sum(axis=1) == 0
    return [v.item() if isinstance(v, np.generic) else v for v in np.asarray(items)[empty][:limit]]


def empty_items(blocks: list[Any], item_blocks: list[Any], limit: int) -> list[Any]:
    """The labels of the first ``limit`` items (in the data's order) that have no answer:
    one more dask pass over the chunks, for an error message."""
    import dask

    found = dask.compute(
        *(
            dask.delayed(_empty_in_block)(b, i, limit)
            for b, i in zip(blocks, item_blocks, strict=True)
        )
    )
    return [item for part in found for item in part][:limit]


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

    rows = lookup.rows(block, items)
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
