"""Files read in chunks with dask: counts opened lazily, answers counted block by block.

Counts too large for memory, in a zarr store or a Parquet file (one row per item, one integer
column per category; or a folder of part files with the same columns), are opened as
:class:`ambppl.data.lazy.LazyCounts` without reading them (:func:`open_counts_in_chunks`): a
zarr store keeps its own chunks, a Parquet file is cut into chunks of ``chunk_items`` rows
(a row group larger than that read in parts), each read and checked only when dask computes
it; the can't-solve category is the last, as :func:`ambppl.read_annotations` puts it. A
long answers file too large for memory is counted with dask block by block
(:func:`count_long_in_chunks`): only the item x category counts are held, with the checks and
conventions of :func:`ambppl.read_annotations`. :func:`read_in_chunks` picks one of the two
for a path and the reader options; ``ambppl.score(read_in_chunks(path, chunk_items=...))``
scores what it returns.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ambppl.data.files import (
    _READ_NOTE,
    READ_OPTIONS,
    _duplicate_header_cells,
    _empty_file,
    _file_type,
    _first_line,
    _not_encoded,
    _parquet_answers,
    _parquet_parts,
    _parse_format,
    _refuse_text_options,
    _sniff_hint,
    _text_options,
    _without_implicit_index,
    is_zarr_store,
)
from ambppl.data.labels import (
    _FROM_DATA,
    _check_categories,
    _check_na_conflict,
    _check_na_values,
    _empty_items_error,
    _label_str,
    _label_texts,
    _order,
    _plain_integer_ids,
    _show,
)
from ambppl.data.lazy import LazyCounts, checked_block
from ambppl.data.matrices import PARQUET_INDEX, check_id_columns, count_dims, id_column
from ambppl.data.tables import (
    _check_column,
    _check_first_row_is_data,
    counts_hint,
    declared_categories,
    declared_labels,
)
from ambppl.internal.checks import check_positive_int
from ambppl.internal.messages import say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = [
    "CHUNK_ITEMS",
    "CHUNK_READ_OPTIONS",
    "count_long_in_chunks",
    "open_counts_in_chunks",
    "read_in_chunks",
]

#: Items per chunk of a Parquet file of counts by default (a zarr store keeps its own chunks).
CHUNK_ITEMS = 2_000_000

#: Options of a text file that :func:`count_long_in_chunks` passes to dask's ``read_csv``.
_CHUNK_TEXT_OPTIONS = ("sep", "comment", "header", "encoding")

#: The keywords that :func:`read_in_chunks` takes besides ``chunk_items``: those of
#: :func:`ambppl.read_annotations` and the text options of :func:`count_long_in_chunks`.
CHUNK_READ_OPTIONS = (*READ_OPTIONS, *_CHUNK_TEXT_OPTIONS)

#: Options that counts read in chunks take (besides ``format``).
_COUNT_OPTIONS = ("item", "categories", "cant_solve")


def _need_dask() -> None:
    try:
        import dask.dataframe  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "reading counts in chunks needs dask: pip install 'ambppl[dask]'"
        ) from err


def _path(source: Any) -> Path:
    if not isinstance(source, str | os.PathLike):
        raise ValueError(
            "chunk_items reads a zarr store or a Parquet file of counts in chunks, so data "
            f"must be its path, but got {type(source).__name__}; pass a dask-backed DataArray "
            "for counts already in dask"
        )
    return Path(source)


def read_in_chunks(
    source: str | os.PathLike[str], *, chunk_items: int, format: str | None = None, **options: Any
) -> LazyCounts | xr.DataArray:
    """Read a file too large for memory with dask: counts lazily, or answers counted.

    Parameters
    ----------
    source : str or os.PathLike
        A zarr store or a Parquet file (or folder of part files) of counts
        (:func:`open_counts_in_chunks`), or a file of answers counted
        (:func:`count_long_in_chunks`): with ``format="long"`` a CSV, TSV or Parquet file,
        and without a layout a Parquet file that holds answers, as
        :func:`ambppl.read_annotations` reads it: one with the long layout's label column
        (``label`` unless ``label=`` names another) or with a column, besides the item column,
        headed like the rater or label column of a table of answers
        (:data:`ambppl.data.files.ANSWER_HEADERS`: ``worker``, ``annotator``, ``answer``,
        ...; case, ``_``, ``-`` and white space aside). Such a file without the item
        column (``task`` unless ``item=`` names another) is refused as
        :func:`ambppl.read_annotations` refuses it, never opened as counts;
        ``format="counts"`` opens it as counts.
    chunk_items : int
        Items per chunk of a Parquet file of counts (a zarr store keeps its own chunks; a
        file of answers is counted in dask's blocks).
    format : str, optional
        As ``format=`` of :func:`ambppl.read_annotations`; the layout ``"long"`` counts a file
        of answers, as does no layout for a Parquet file of answers (above); the layout
        ``"counts"``, or none for a zarr store and any other Parquet file, opens counts.
    **options
        The options of :data:`CHUNK_READ_OPTIONS`: for answers those of
        :func:`count_long_in_chunks` (``rater`` is not used: counts hold no rater ids); for
        counts ``item``, ``categories`` and ``cant_solve`` as :func:`open_counts_in_chunks`
        takes them (``cant_solve=None``: none, even if the store names one; left out: the
        store's own, if any).

    Returns
    -------
    ambppl.data.lazy.LazyCounts or xarray.DataArray
        The counts opened lazily; for answers their counts, in memory.

    Raises
    ------
    ValueError
        For a ``source`` that is no path (name a dask-backed DataArray instead), options
        that do not apply to counts, and as :func:`open_counts_in_chunks` and
        :func:`count_long_in_chunks` (which refuses a folder of part files holding answers).
    TypeError
        For a ``chunk_items`` that is not an integer.
    ImportError
        When dask is not installed.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"task": [1, 1, 2], "label": ["yes", "no", "yes"]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     answers.to_csv(Path(folder) / "a.csv", index=False)
    ...     counts = read_in_chunks(Path(folder) / "a.csv", chunk_items=10, format="long")
    ...     counts.values.tolist(), type(counts).__name__
    ([[1, 1], [0, 1]], 'DataArray')
    """
    _need_dask()
    chunk_items = check_positive_int(chunk_items, "chunk_items")
    path = _path(source)
    unknown = sorted(k for k in options if k not in CHUNK_READ_OPTIONS)
    if unknown:
        raise TypeError(
            f"read_in_chunks takes the options {list(CHUNK_READ_OPTIONS)}, but got {unknown}"
        )
    layout, ftype = _parse_format(format)
    if _parquet_answers(path, format, options.get("item"), options.get("label", "label")):
        # the long layout's item and label columns: answers, as read_annotations reads them
        layout, format = "long", "+".join(part for part in ("long", ftype) if part)
    if layout == "long" and path.exists() and not is_zarr_store(path):
        text = {k: v for k, v in options.items() if k in _CHUNK_TEXT_OPTIONS}
        if path.is_dir() or _file_type(path, ftype, text) in ("csv", "tsv", "parquet"):
            options.pop("rater", None)  # the count models do not use rater ids
            return count_long_in_chunks(path, chunk_items=chunk_items, format=format, **options)
    lazy = open_counts_in_chunks(
        path,
        chunk_items=chunk_items,
        format=format,
        item=options.pop("item", None),
        categories=options.pop("categories", None),
        # None: none, even if the store names one; left out: the store's own, if any
        cant_solve=options.pop("cant_solve", _FROM_DATA),
    )
    if options:
        raise ValueError(
            f"options {sorted(options)!r} do not apply to counts read in chunks; they take "
            "categories=, cant_solve= and item= (Parquet)"
        )
    return lazy


def open_counts_in_chunks(
    source: str | os.PathLike[str],
    *,
    chunk_items: int = CHUNK_ITEMS,
    format: str | None = None,
    item: Any = None,
    categories: Any = None,
    cant_solve: Any = _FROM_DATA,
) -> LazyCounts:
    """Open the counts of a zarr store or a Parquet file lazily, in chunks of items.

    Parameters
    ----------
    source : str or os.PathLike
        A zarr store (one 2-D array, named ``counts`` if there are several: xarray's
        ``to_zarr`` of a count DataArray, whose ``item`` and ``category`` coordinates and
        ``cant_solve`` attribute are used, or a bare zarr array), or a Parquet file (or a
        folder of ``*.parquet`` part files, all with the same columns) with one row per item,
        one integer column per category and optionally an item column.
    chunk_items : int, default :data:`CHUNK_ITEMS`
        Items per chunk of a Parquet file: every chunk but the last of each file holds
        this many, whatever the file's row groups (a larger row group is read in parts:
        each chunk decodes its rows, and those of its row group before them, a batch at
        a time, and keeps only its own); a zarr store keeps its own chunks.
    format : str, optional
        ``"zarr"`` or ``"parquet"``, optionally with the layout (``"counts+parquet"``);
        default: from the suffix, or zarr for a folder with zarr metadata.
    item : column name, optional
        The item column of a Parquet file; default as :func:`ambppl.read_annotations` finds
        it (:func:`ambppl.data.matrices.id_column`): a column ``task``, the index
        ``to_parquet`` stored, or else the first column, in any position, headed like an id
        column (case, ``_``, ``-`` and white space aside, a name of the one list of id
        headers :data:`ambppl.data.matrices.ID_HEADERS`: ``id``, ``item_id``, ``task_id``,
        ``question``, ``tweet_id``, ``Unnamed: 0``, ...); else the items are numbered from
        0. Another column headed with a name of nothing but ids (``id``, ``item_id``, ...,
        not a word such as ``question`` or ``text``) is refused, as in memory: counted as a
        category it would add its ids to every item's answers. A zarr store's items are the
        coordinate of its item dim, told by name as :func:`ambppl.read_annotations` tells
        the dims of a DataArray (:func:`ambppl.data.matrices.count_dims`: a dim named
        ``item`` or ``category`` in either position, else one named like item ids or like
        categories, else items first).
    categories : list of labels, optional
        As :func:`ambppl.read_annotations` takes it for counts: where the counts have labels
        (the Parquet column names, the store's category coordinate), the category order
        wanted, which must hold every one of them (the columns are reordered lazily; a label
        nobody gave gets zeros). Labels of the counts missing from ``categories`` are
        refused, as in memory ("labels ... occur in the data but are not in categories"):
        labelled columns are never renamed. For a bare zarr array or a store without a
        category coordinate (columns ``"0"``, ``"1"``, ...) the labels of the count columns
        in order (:meth:`ambppl.data.LazyCounts.relabel`). Default: the counts' own labels.
    cant_solve : label, int or None, optional
        The can't-solve category: a label, as :func:`ambppl.read_annotations` takes it (a
        number whose text is a label, such as ``1`` for the label ``"1"``, is that label);
        else an integer position (``-1``: the last). ``None``: no can't-solve category, even
        if the store names one. Left out: the store's ``attrs["cant_solve"]``, always a
        label (none for a Parquet file), as :func:`ambppl.read_annotations` takes it.

    Returns
    -------
    ambppl.data.lazy.LazyCounts
        A dask array of the counts chunked along items (int64, each chunk checked as
        :func:`ambppl.read_annotations` checks counts when dask computes it), the item
        labels (a dask array, or None), the category labels and the can't-solve label. Only
        metadata is read.

    Raises
    ------
    ValueError
        For a ``source`` that is no path or does not exist; a file that is neither a zarr
        store nor a Parquet file, or a layout other than counts; a zarr store without one
        2-D array (or one named ``counts``), or whose ``attrs["cant_solve"]`` is not one of
        its categories; a Parquet file without rows, with fewer than 2 count columns,
        without the ``item`` column named, or with a second column headed like item ids;
        part files with other columns than the first (the file and the column named);
        ``categories`` as :func:`ambppl.read_annotations` refuses them (repeated labels,
        labels of the counts left out) or labels of another number than the columns of a
        bare array; a ``cant_solve`` that is neither a category nor a position. When the
        chunks are computed: a count that is missing, fractional, negative or too large
        (its row and column named), item labels repeated within a chunk.
    TypeError
        For a ``chunk_items`` that is not an integer, ``categories`` that are not a list of
        labels; when the chunks are computed, a Parquet column that does not hold
        numbers.
    ImportError
        When dask (or for a store zarr) is not installed.

    See Also
    --------
    count_long_in_chunks : A long answers file counted with dask.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": ["a", "b", "c"], "yes": [3, 1, 0], "no": [0, 2, 4]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     frame.to_parquet(Path(folder) / "c.parquet", row_group_size=2)
    ...     lazy = open_counts_in_chunks(Path(folder) / "c.parquet", chunk_items=2)
    ...     lazy.categories, lazy.values.chunks, lazy.values.compute().tolist()
    (['yes', 'no'], ((2, 1), (2,)), [[3, 0], [1, 2], [0, 4]])
    """
    given = cant_solve is not _FROM_DATA  # None: none, even if the store names one
    return _open_counts(source, chunk_items, format, item, categories, cant_solve, given=given)


def _open_counts(
    source: Any,
    chunk_items: int,
    format: str | None,
    item: Any,
    categories: Any,
    cant_solve: Any,
    *,
    given: bool,
) -> LazyCounts:
    """:func:`open_counts_in_chunks`; ``given``: ``cant_solve`` is the caller's (None: no
    can't-solve category), else the store's ``attrs["cant_solve"]`` is taken."""
    _need_dask()
    chunk_items = check_positive_int(chunk_items, "chunk_items")
    path = _path(source)
    if not path.exists():
        raise ValueError(f"data must be an existing file or zarr store, but {str(path)!r} is not")
    layout, ftype = _parse_format(format)
    ftype = _file_type(path, ftype)
    if ftype not in ("zarr", "parquet") or layout not in (None, "counts"):
        raise ValueError(
            "chunk_items reads counts from a zarr store or a Parquet file (one row per item, "
            f"one column per category), but {path.name!r} is read as {ftype} "
            f"{layout or ''}".rstrip()
            + "; leave chunk_items out to read it into memory"
        )
    if ftype == "zarr":
        lazy = _open_zarr(path, stored=not given)
    else:
        lazy = _open_parquet(path, item, chunk_items)
    lazy = lazy.relabel(categories)
    return lazy.with_cant_solve(cant_solve) if given else lazy


def _chunking(lazy: LazyCounts, path: Path) -> str:
    """How ``lazy``, opened from ``path``, is cut into chunks, for a progress line: ``in
    chunks of 150 items (dask): 4 chunks, the last of 50 items`` (the sizes that dask will
    read, from the metadata; a zarr store's own chunks said to be its own)."""
    sizes = [int(n) for n in lazy.values.chunks[0]]
    head, last = sizes[:-1] or sizes, sizes[-1]  # every chunk but the last; the last
    own = " (the zarr store's own)" if is_zarr_store(path) else ""
    count = f"{len(sizes)} chunk{'s' if len(sizes) != 1 else ''}{own}"
    if len(set(head)) > 1:
        size = f"{min(sizes)} to {max(sizes)}"
    else:
        size = str(head[0])
        if last != head[0]:
            count += f", the last of {last} items"
    return f"in chunks of {size} items (dask): {count}"


def _open_zarr(path: Path, *, stored: bool = True) -> LazyCounts:
    """The :class:`LazyCounts` of a zarr store, in the store's chunks; nothing read yet.
    ``stored``: with the store's ``attrs["cant_solve"]`` (checked to be a category)."""
    import dask.array as da
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
        if node.ndim != 2:  # as read_annotations says it
            raise ValueError(
                f"counts must be a 2-D array (items x categories), but got shape {node.shape}"
            )
        values = da.from_zarr(node).rechunk({1: -1})
        names = [str(k) for k in range(values.shape[1])]
        return LazyCounts(values, None, names, named=False)
    group = node
    consolidated = getattr(group.metadata, "consolidated_metadata", None) is not None
    # the dims' coordinates left unread: xarray would load an item coordinate whole
    one_d = sorted(n for n, a in group.arrays() if a.ndim == 1 and _zarr_dims(a) == (n,))
    store = xr.open_zarr(path, drop_variables=one_d, consolidated=consolidated)
    two_d = [n for n, v in store.data_vars.items() if v.ndim == 2]
    name = "counts" if "counts" in store.data_vars else (two_d[0] if len(two_d) == 1 else None)
    if name is None:
        raise ValueError(
            f"the zarr store {path.name!r} must hold one 2-D count array (items x "
            f"categories), named 'counts' if there are several, but it holds "
            f"{sorted(store.data_vars)!r}"
        )
    counts = store[name]
    if counts.ndim != 2:  # as read_annotations says it
        raise ValueError(
            f"counts must be 2-D (item x category), but got dims {counts.dims} "
            f"of shape {counts.shape}"
        )
    # the dims by name, as read_annotations reads a DataArray (items first where neither is
    # named so)
    item_dim, cat_dim = count_dims(counts.dims)
    counts = counts.transpose(item_dim, cat_dim)
    named = cat_dim in one_d  # the category coordinate, read as read_annotations reads it
    if named:
        others = [n for n in one_d if n != cat_dim]
        labels = xr.open_zarr(path, drop_variables=others, consolidated=consolidated)[cat_dim]
        categories = [str(c) for c in labels.values]
    else:
        categories = [str(k) for k in range(counts.sizes[cat_dim])]
    items = _zarr_items(path, item_dim) if item_dim in one_d else None
    cant_solve = counts.attrs.get("cant_solve", store.attrs.get("cant_solve"))
    if not stored:
        cant_solve = None
    elif cant_solve is not None and str(cant_solve) not in categories:
        raise ValueError(
            f"the zarr store {path.name!r} names the can't-solve label {cant_solve!r} "
            f"(attrs['cant_solve']), which is not one of its categories {categories}; "
            + say("pass cant_solve=", "give --cant-solve ")
            + "the can't-solve label"
        )
    values = counts.data.rechunk({0: counts.data.chunks[0], 1: -1})
    return LazyCounts(values, items, categories, cant_solve, named)


def _zarr_dims(array: Any) -> tuple[Any, ...] | None:
    """The dim names of a zarr array as xarray wrote them (zarr format 3: its
    ``dimension_names``; format 2: its ``_ARRAY_DIMENSIONS`` attribute); None without."""
    names = getattr(array.metadata, "dimension_names", None)
    if names is None:
        names = array.attrs.get("_ARRAY_DIMENSIONS")
    return tuple(names) if names is not None else None


def _zarr_items(path: Path, dim: str = "item") -> Any:
    """The item labels of a zarr store (the array of its item dim ``dim``) as a dask array,
    decoded as :func:`xarray.open_zarr` decodes them for :func:`ambppl.read_annotations`
    (dates and times from their CF units). Nothing is read but metadata."""
    import dask.array as da
    import xarray as xr
    import zarr

    node = zarr.open_array(str(path / dim), mode="r")
    skip = ("_FillValue", "_ARRAY_DIMENSIONS")  # zarr's own; no id is a fill value
    attrs = {k: v for k, v in node.attrs.items() if k not in skip}
    raw = xr.Variable((dim,), da.from_zarr(node), attrs)
    decoded = xr.conventions.decode_cf_variable(
        dim, raw, concat_characters=False, mask_and_scale=False, decode_timedelta=True
    )
    return decoded.data


def _open_parquet(path: Path, item: Any, chunk_items: int) -> LazyCounts:
    """The :class:`LazyCounts` of a Parquet file (or a folder of part files): chunks of
    ``chunk_items`` rows (the last of each file fewer), cut across row groups wherever they
    fall (:func:`_row_pieces`); only the metadata read."""
    import dask
    import dask.array as da
    import pyarrow.parquet as pq

    files = _parquet_parts(path)
    if not files:
        raise ValueError(f"the folder {path.name!r} holds no .parquet files")
    metas = [pq.ParquetFile(f).metadata for f in files]
    columns = list(metas[0].schema.names)
    for file, meta in zip(files[1:], metas[1:], strict=True):  # one table: the same columns
        names = list(meta.schema.names)
        lacks = [c for c in columns if c not in names]
        extra = [c for c in names if c not in columns]
        if lacks or extra:
            first = repr(files[0].name)
            what = (
                f"lacks the column {lacks[0]!r} of {first}"
                if lacks
                else f"has the column {extra[0]!r}, which {first} lacks"
            )
            raise ValueError(
                f"the part files of {path.name!r} must have the same columns (those of {first}: "
                f"{columns!r}), but {file.name!r} {what}; write every part with the same columns"
            )
    # the items as read_annotations reads them: the item column, else an id column
    item_column = item if item is not None else id_column(columns)
    if item_column is not None and item_column not in columns:
        raise ValueError(
            f"item column {item_column!r} is not in {path.name!r}; its columns are "
            f"{columns!r}: pass item=<one of them> (on the command line --item)"
        )
    # a second column headed like item ids, refused as read_annotations refuses it
    check_id_columns(columns, item_column, path.name)
    categories = [c for c in columns if c not in (item_column, PARQUET_INDEX)]
    item_dtype = np.dtype(object)
    if item_column is not None:
        arrow_type = metas[0].schema.to_arrow_schema().field(item_column).type
        try:
            item_dtype = np.dtype(arrow_type.to_pandas_dtype())
        except (NotImplementedError, TypeError):
            pass
    # chunks of chunk_items rows each (the last of each file fewer), cut across row groups
    # wherever they fall; sizes from the metadata (nothing is read before the passes)
    value_parts, item_parts = [], []
    first_row = 0  # of the chunk, counted over all files (for messages about a bad count)
    for file, meta in zip(files, metas, strict=True):
        sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        total = sum(sizes)
        for start in range(0, total, chunk_items):
            pieces = _row_pieces(sizes, start, start + chunk_items)
            rows = min(chunk_items, total - start)
            value_parts.append(
                da.from_delayed(
                    dask.delayed(_read_counts)(file, pieces, categories, first_row=first_row),
                    shape=(rows, len(categories)),
                    dtype=np.int64,
                )
            )
            if item_column is not None:
                item_parts.append(
                    da.from_delayed(
                        dask.delayed(_read_items)(file, pieces, item_column),
                        shape=(rows,),
                        dtype=item_dtype,
                    )
                )
            first_row += rows
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


#: Rows of a Parquet file decoded at a time when a chunk is read (:func:`_row_batches`).
_BATCH_ROWS = 65_536


def _row_pieces(sizes: list[int], start: int, stop: int) -> list[Any]:
    """The rows ``start`` to ``stop - 1`` of a file whose row groups hold ``sizes`` rows, in
    order, as :func:`_row_batches` takes them: a row group they hold whole as its number,
    part of one as ``(group, first, end)``, its rows ``first`` to ``end - 1``."""
    pieces: list[Any] = []
    offset = 0  # the file's row at which the group begins
    for group, size in enumerate(sizes):
        first, end = max(start - offset, 0), min(stop - offset, size)
        if first == 0 and end == size and size:
            pieces.append(group)
        elif first < end:
            pieces.append((group, first, end))
        offset += size
        if offset >= stop:
            break
    return pieces


def _row_batches(source: Any, pieces: list[Any], columns: list[str]) -> Iterator[Any]:
    """The rows of the ``pyarrow.parquet.ParquetFile`` ``source`` that ``pieces`` name
    (:func:`_row_pieces`), the columns ``columns``, as record batches of at most
    :data:`_BATCH_ROWS` rows, decoded one at a time: of a row group read in part, the rows
    before the part are decoded and dropped (pyarrow reads no row range within a row group),
    those after it not read, so that a chunk holds its own rows, never its row groups'."""
    for piece in pieces:
        if isinstance(piece, int):  # a whole row group
            group, first, end = piece, 0, source.metadata.row_group(piece).num_rows
        else:
            group, first, end = piece
        at = 0  # the group's row at which the batch begins
        for batch in source.iter_batches(_BATCH_ROWS, row_groups=[group], columns=columns):
            if at + len(batch) > first:
                yield batch.slice(max(first - at, 0), end - max(first, at))
            at += len(batch)
            if at >= end:
                break


def _read_counts(
    file: Path, pieces: list[Any], columns: list[str], *, first_row: int = 0
) -> np.ndarray:
    """Rows of a Parquet file of counts (``pieces``, as :func:`_row_batches` takes them): an
    int64 block (rows x categories), filled a batch at a time and checked as
    :func:`ambppl.internal.checks.check_counts` does (a null cell, a fraction, a negative or
    huge count is refused with its row, counted from ``first_row``, and column)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pq.ParquetFile(file)
    schema = source.schema_arrow
    for name in columns:
        kind = schema.field(name).type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise TypeError(
                f"counts in {Path(file).name!r} must be numbers, but column {name!r} holds "
                f"{kind}; give one integer column per category (and the item column)"
            )
    rows = sum(
        source.metadata.row_group(p).num_rows if isinstance(p, int) else p[2] - p[1] for p in pieces
    )
    block: np.ndarray | None = None
    at = 0
    for batch in _row_batches(source, pieces, columns):
        # a null cell comes out as NaN (float), which check_counts names
        part = np.column_stack([batch.column(n).to_numpy(zero_copy_only=False) for n in columns])
        kind = part.dtype if block is None else np.result_type(block.dtype, part.dtype)
        if block is None:
            block = np.empty((rows, len(columns)), dtype=kind)
        elif kind != block.dtype:  # e.g. integers, then a batch with a null cell (NaN)
            block = block.astype(kind)
        block[at : at + len(part)] = part
        at += len(part)
    if block is None:  # no rows named (never from _open_parquet)
        block = np.empty((0, len(columns)), dtype=np.int64)
    return checked_block(block, f"counts in {Path(file).name!r}", columns, first_row)


def _read_items(file: Path, pieces: list[Any], column: str) -> np.ndarray:
    """Rows of a Parquet file (``pieces``, as :func:`_row_batches` takes them): the item
    labels."""
    import pyarrow.parquet as pq

    source = pq.ParquetFile(file)
    parts = [
        batch.column(column).to_numpy(zero_copy_only=False)
        for batch in _row_batches(source, pieces, [column])
    ]
    return np.concatenate(parts) if parts else np.empty(0, dtype=object)


def count_long_in_chunks(
    source: str | os.PathLike[str],
    *,
    chunk_items: int | None = None,
    item: Any = "task",
    label: Any = "label",
    cant_solve: Any = None,
    categories: Any = None,
    format: str | None = None,
    na_values: Any = None,
    **read_kwargs: Any,
) -> xr.DataArray:
    """Count a long answers file too large for memory with dask, block by block.

    Only the item x category counts are held (``groupby([item, label]).size()`` on each
    block, then summed): the file is read as :func:`ambppl.read_annotations` reads it (every
    text cell as written, only an empty cell or a ``na_values`` text missing, compression
    told by the first bytes), and the counts are those it would return, items in sorted
    order.

    dask splits a text file into blocks at line breaks without reading quotes (a known
    limitation of :func:`dask.dataframe.read_csv`), so a quoted field that holds a line
    break fails where a block ends inside it, with a message that says so: read such a file
    in memory (:func:`ambppl.read_annotations`).

    Parameters
    ----------
    source : str or os.PathLike
        A CSV, TSV or Parquet file with one row per answer.
    chunk_items : int, optional
        Checked to be a positive integer (the blocks are dask's: about 64 MB of text, or
        the Parquet file's row groups; a compressed text file is one block).
    item, label : column name
        The columns of the item id and of the answer; 0-based positions with
        ``header=None``. Rater ids are not read.
    cant_solve : label, optional
        The can't-solve label; it must occur in the data (or in ``categories``) and becomes
        the last category.
    categories : list of labels, optional
        The category order wanted (may include labels nobody gave).
    format : str, optional
        ``"long"``, a file type (``"csv"``, ``"tsv"``, ``"parquet"``) or both joined by
        ``+``; default: from the suffix.
    na_values : str or list of str, optional
        Label texts that mean "no answer" besides an empty cell.
    **read_kwargs
        For text files: ``sep=``, ``comment=``, ``header=None`` and ``encoding=``, as for
        :func:`ambppl.read_annotations`.

    Returns
    -------
    xarray.DataArray
        int64 counts with dims ``("item", "category")`` (items sorted, as numbers where the
        ids are numbers; ids of a text file as written, plain integers as int64 as
        :func:`ambppl.read_annotations` gives them), ``attrs`` ``cant_solve`` and
        ``source``.

    Raises
    ------
    ValueError
        For a layout other than long, a folder (answers are counted from one file), a file
        that is not CSV, TSV or Parquet, a column that is not in the file or named twice in
        its header line, a header line read as an answer (``header=None``), a
        ``cant_solve`` label absent from the data, labels missing from
        ``categories`` or repeated in it, fewer than 2 categories, an answer without an item
        id, or an item left without answers; as :func:`ambppl.read_annotations` refuses
        them, a text file that is empty, holds only a header line, is not text in its
        encoding, or has a row with more fields than the header line (or than its first
        row), the row or line counted over the whole file; text options (``sep``,
        ``comment``, ``header``, ``encoding``) for a Parquet file, with
        :func:`ambppl.read_annotations`' message; a quoted field holding a line break where
        dask ends a block (see above).
    TypeError
        For other reader options, ``categories`` that are not a list of labels, and a
        ``chunk_items`` that is not an integer.
    FileNotFoundError
        When the file does not exist.
    ImportError
        When dask is not installed.

    See Also
    --------
    open_counts_in_chunks : counts too large for memory, opened lazily.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"task": ["t2", "t1", "t1", "t2"],
    ...                         "label": ["no", "yes", "skip", "no"]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     answers.to_parquet(Path(folder) / "a.parquet")
    ...     counts = count_long_in_chunks(Path(folder) / "a.parquet", cant_solve="skip")
    ...     counts["item"].values.tolist(), counts["category"].values.tolist()
    (['t1', 't2'], ['no', 'yes', 'skip'])
    >>> counts.values.tolist()
    [[0, 1, 1], [2, 0, 0]]
    """
    _need_dask()
    if chunk_items is not None:
        check_positive_int(chunk_items, "chunk_items")
    if not isinstance(source, str | os.PathLike):
        raise TypeError(
            "source must be the path of a CSV, TSV or Parquet file of answers, but got "
            f"{type(source).__name__}"
        )
    path = Path(source)
    layout, ftype = _parse_format(format)
    if layout not in (None, "long"):
        raise ValueError(
            f"format={format!r} names the layout {layout!r}, but counting in chunks reads a "
            "long table of answers (one row per answer)"
        )
    if path.is_dir() and not is_zarr_store(path):
        raise ValueError(
            f"answers are counted in chunks from one CSV, TSV or Parquet file, but {path.name!r} "
            "is a folder (a folder of Parquet part files is read only as counts: one row per "
            "item, one integer column per category); write the answers to one file"
        )
    if not path.is_file():
        raise FileNotFoundError(f"source file {str(path)!r} does not exist or is not a file")
    ftype = _file_type(path, ftype, read_kwargs)
    if ftype not in ("csv", "tsv", "parquet"):
        raise ValueError(
            f"answers are counted in chunks from a CSV, TSV or Parquet file, but {path.name!r} "
            f"is read as {ftype}"
        )
    other = sorted(k for k in read_kwargs if k not in _CHUNK_TEXT_OPTIONS)
    if other:
        raise TypeError(
            f"reader options {other!r} do not apply to answers counted in chunks, which take "
            f"{', '.join(k + '=' for k in _CHUNK_TEXT_OPTIONS)}"
        )
    _refuse_text_options(path, ftype, read_kwargs)  # as read_annotations: text files only
    categories = _check_categories(categories, strip=True)  # as the answers' labels
    import dask
    import dask.dataframe as dd
    import pandas as pd
    import xarray as xr

    na_values = _check_na_values(na_values)
    _check_na_conflict(na_values, categories, cant_solve)
    options = dict(read_kwargs)
    if ftype == "parquet":
        import pyarrow.parquet as pq

        present = list(pq.read_schema(path).names)
        head, plain = None, {}
    else:
        options.setdefault("sep", "\t" if ftype == "tsv" else ",")
        # as read_annotations reads text: compression by the first bytes, every cell as text
        # exactly as written, only an empty cell missing
        options = _text_options(path, ftype, options)
        options = {"dtype": str, "keep_default_na": False, "na_values": [""], **options}
        if options["compression"] is not None:
            options["blocksize"] = None  # a compressed file is one block
        plain = {k: v for k, v in options.items() if k != "blocksize"}
        head = _read_head(path, ftype, plain, read_kwargs)
        present = list(head.columns)
    # a column that is absent or written twice, as in memory (the same message)
    checked = head if head is not None else pd.DataFrame(columns=present)
    hint = ""
    if item not in present or label not in present:  # counts read as answers: as in memory
        hint = counts_hint(head if head is not None else _parquet_head(path))
    _check_column(checked, item, "item", hint)
    _check_column(checked, label, "label", hint)
    if head is not None:
        # a header line read as an answer, as in memory
        if "header" in options and options["header"] is None:
            _check_first_row_is_data(head, item, None, label, path.name)
    try:  # dask's read_csv reads a sample of the file at once, the blocks when computed
        if ftype == "parquet":
            frame = dd.read_parquet(path, columns=[item, label])
        else:
            # every column, as read_annotations reads them: a row with a field too many is
            # refused
            frame = dd.read_csv(path, **options)
        parts = [
            dask.delayed(_count_block)(part, present, item, label, na_values)
            for part in frame.to_delayed()
        ]
        while len(parts) > 1:  # summed 8 blocks at a time, as dask sums a groupby
            parts = [dask.delayed(_add_blocks)(parts[i : i + 8]) for i in range(0, len(parts), 8)]
        with warnings.catch_warnings():
            # dask 2026.8's Parquet reader calls reset_index(inplace=True), which pandas 3.1
            # deprecates (Pandas4Warning): dask's business, not the caller's
            warnings.filterwarnings(
                "ignore", message="The inplace keyword in DataFrame.reset_index is deprecated"
            )
            ((sizes, all_items, stats),) = dask.compute(*parts)
    except UnicodeDecodeError as err:  # non-UTF-8 bytes after the first 8 KiB
        raise _not_text(path, ftype, err, options) from err
    except pd.errors.ParserError as err:  # a row with more fields than its block's first
        _refuse_rows(path, ftype, plain, read_kwargs)
        if "inside string" in str(err):  # the file reads whole: a block ends inside quotes
            raise _quoted_line_break(path, ftype, err) from err
        raise _unreadable(path, ftype, err, read_kwargs) from err
    if ftype != "parquet" and _rows_differ(stats):
        _refuse_rows(path, ftype, plain, read_kwargs)
    if sum(s.rows for s in stats) == 0:
        raise ValueError(f"{path.name!r} has no rows; give the file with the data")
    table = sizes.unstack(fill_value=0)
    found = [_label_str(c) for c in table.columns]  # texts without surrounding whitespace
    table.columns = found
    # labels given without an item id count for the categories, as in read_annotations
    found += sorted({lab for s in stats for lab in s.no_id_labels} - set(found))
    # blank labels and those na_values names are missing, as in read_annotations
    found = [c for c in found if c != "" and c not in na_values]
    if categories is None:  # a categorical label column's, as in read_annotations
        categories = declared_categories((c for s in stats for c in s.declared), na_values)
    order, cs = _order(found, categories, cant_solve, sort=True, strip=True)
    _check_item_ids(stats, item)
    table = table.reindex(columns=order, fill_value=0)
    unanswered = pd.Index(all_items).difference(table.index)
    if len(unanswered):
        table = pd.concat([table, table.iloc[:0].reindex(unanswered, fill_value=0)])
    items = pd.Index(table.index).to_numpy()
    if ftype != "parquet":  # ids as written; plain integers as int64, sorted as numbers
        items = _plain_integer_ids(np.asarray(items, dtype=object))
        if items.dtype != object:
            order_items = np.argsort(items, kind="stable")
            items, table = items[order_items], table.iloc[order_items]
    empty = table.sum(axis=1).to_numpy() == 0
    if np.any(empty):
        raise _empty_items_error(items, empty, "left after dropping the missing labels")
    return xr.DataArray(
        table.to_numpy(np.int64),
        dims=("item", "category"),
        coords={"item": items, "category": order},
        attrs={"cant_solve": cs, "source": str(path)},
    )


#: Rows of a text file read at a time when :func:`_refuse_rows` looks for a row that does
#: not fit.
_CHECK_ROWS = 100_000


class _BlockStats(NamedTuple):
    """What one block of a long answers file says beyond its counts."""

    rows: int  # rows read (answers, with or without a label)
    shifted: bool  # its first row has one field more than the header line names
    extra: bool  # shifted, and that last field is filled on some row
    no_id: int  # answers (rows with a label) without an item id
    first_no_id: int  # the first of them, counted within the block (-1: none)
    no_id_labels: frozenset[str]  # the labels of those answers
    declared: tuple[str, ...]  # the categories a categorical label column declares, as labels


def _count_block(
    block: pd.DataFrame, names: list[Any], item: Any, label: Any, na_values: frozenset[str]
) -> tuple[pd.Series, np.ndarray, list[_BlockStats]]:
    """One block of a long answers file: the (item, label) counts, the item ids and what
    :class:`_BlockStats` notes."""
    import pandas as pd

    shifted = not isinstance(block.index, pd.RangeIndex)
    extra = False
    if shifted:  # pandas took the first column for the index (a field more than named)
        extra = bool(block[block.columns[-1]].notna().any())
        block = block.reset_index().iloc[:, : len(names)]
        block.columns = names
    ids = block[item]
    # every answer as its label, as read_annotations reads it: text without surrounding
    # whitespace (" ?" and "?" are one label), numbers as their canonical text; code -1
    # (a missing label) takes the NaN at the end
    codes, uniques = pd.factorize(block[label], use_na_sentinel=True)
    texts = np.array([*_label_texts(uniques, block[label].dtype), np.nan], dtype=object)
    labels = pd.Series(texts[codes], index=block.index, dtype=object)
    no_id = ids.isna().to_numpy() & labels.notna().to_numpy()
    given: frozenset[str] = frozenset()
    if no_id.any():  # answers without an item id, unless their label is missing too
        strs = {v: _label_str(v) for v in pd.unique(labels[no_id])}
        kept = {v for v, s in strs.items() if s != "" and s not in na_values}
        no_id &= labels.isin(kept).to_numpy()
        given = frozenset(strs[v] for v in kept)
    first = int(np.argmax(no_id)) if no_id.any() else -1
    declared = declared_labels(block[label].dtype)
    stats = _BlockStats(len(block), shifted, extra, int(no_id.sum()), first, given, declared)
    answers = pd.DataFrame({"item": ids, "label": labels}).dropna()
    sizes = answers.groupby(["item", "label"]).size()
    return sizes, pd.unique(ids.dropna().to_numpy()), [stats]


def _parquet_head(path: Path) -> pd.DataFrame:
    """The first rows of a Parquet file (those :func:`ambppl.data.tables.counts_hint` looks
    at), or an empty frame where it has none."""
    import pandas as pd
    import pyarrow.parquet as pq

    batches = pq.ParquetFile(path).iter_batches(batch_size=1000)
    first = next(batches, None)
    return first.to_pandas() if first is not None else pd.DataFrame()


def _add_blocks(
    parts: list[tuple[pd.Series, np.ndarray, list[_BlockStats]]],
) -> tuple[pd.Series, np.ndarray, list[_BlockStats]]:
    """The counts, item ids and block notes of several blocks, in file order."""
    import pandas as pd

    sizes = pd.concat([p[0] for p in parts])
    sizes = sizes.groupby(level=[0, 1]).sum()
    items = pd.unique(np.concatenate([np.asarray(p[1], dtype=object) for p in parts]))
    return sizes, items, [s for p in parts for s in p[2]]


def _rows_differ(stats: list[_BlockStats]) -> bool:
    """Whether a block of a text file was read otherwise than read_annotations reads the whole
    file: its first row had a field more than the header line while the file's first row did
    not, or the extra field of a file whose rows end with a delimiter is filled."""
    first = stats[0].shifted
    return any(s.extra or (s.shifted and not first) for s in stats)


def _check_item_ids(stats: list[_BlockStats], item: Any) -> None:
    """Refuse answers without an item id as :func:`ambppl.read_annotations` does (the first
    one's row counted over the whole file)."""
    missing = sum(s.no_id for s in stats)
    if not missing:
        return
    before, first = 0, -1
    for s in stats:
        if s.first_no_id >= 0:
            first = before + s.first_no_id
            break
        before += s.rows
    raise ValueError(
        f"item column {item!r} must have an id on every answer, but {missing} answer(s) have "
        f"none (first at row {first}); fill in or drop those rows"
    )


def _read_head(
    path: Path, ftype: str, options: dict[str, Any], read_kwargs: dict[str, Any]
) -> pd.DataFrame:
    """The first 1001 rows of a text file (for the header line and its checks), refused as
    :func:`ambppl.read_annotations` refuses the file: empty, not text in its encoding, a row
    that does not fit, only a header line; a first row with a field more than the header line
    is read as a delimiter at the end of the lines when that field is empty."""
    import pandas as pd

    try:
        head = pd.read_csv(path, nrows=1001, **options)
    except pd.errors.EmptyDataError as err:
        raise _empty_file(path, ftype, read_kwargs) from err
    except UnicodeDecodeError as err:
        raise _not_text(path, ftype, err, options) from err
    except (ValueError, OSError, pd.errors.ParserError) as err:
        raise _unreadable(path, ftype, err, read_kwargs) from err
    if len(head) == 0:
        raise ValueError(
            f"{path.name!r} has no answers: it holds only a header line "
            f"{_show(head.columns)}; give the file with the answers"
        )
    if not isinstance(head.index, pd.RangeIndex):  # the first row has a field more
        names = list(head.columns)
        if head[names[-1]].notna().any():
            _refuse_rows(path, ftype, options, read_kwargs)
        head = head.reset_index().iloc[:, : len(names)]
        head.columns = names
    head.attrs[_READ_NOTE] = {"duplicates": _duplicate_header_cells(path, head, options)}
    return head


def _refuse_rows(
    path: Path, ftype: str, options: dict[str, Any], read_kwargs: dict[str, Any]
) -> None:
    """Refuse a text file whose rows do not fit its header line as
    :func:`ambppl.read_annotations` refuses it (the same message, the row counted over the
    whole file), reading it :data:`_CHECK_ROWS` rows at a time; returns if nothing is
    wrong."""
    import pandas as pd

    sample: pd.DataFrame | None = None
    filled: pd.DataFrame | None = None  # the first row whose field past the header is filled
    try:
        with pd.read_csv(path, chunksize=_CHECK_ROWS, **options) as reader:
            for rows in reader:
                if sample is None:
                    sample = rows.head(1000)
                    if isinstance(rows.index, pd.RangeIndex):
                        filled = sample.iloc[:0]  # no field past the header line
                if filled is None:
                    last = rows[rows.columns[-1]]
                    if last.notna().any():
                        filled = rows[last.notna()].head(1)
    except UnicodeDecodeError as err:
        raise _not_text(path, ftype, err, options) from err
    except (ValueError, OSError, pd.errors.ParserError) as err:
        raise _unreadable(path, ftype, err, read_kwargs) from err
    if sample is not None and filled is not None and len(filled):
        # read_annotations' refusal of a first row with a field more than the header line
        _without_implicit_index(path, ftype, pd.concat([sample, filled]), options)


def _not_text(
    path: Path, ftype: str, err: UnicodeDecodeError, options: dict[str, Any]
) -> Exception:
    """The error of :func:`ambppl.read_annotations` for text that does not decode."""
    return ValueError(
        f"could not read {path.name!r} as {ftype.upper()}: "
        f"{_not_encoded(err, options.get('encoding'))}"
    )


def _quoted_line_break(path: Path, ftype: str, err: Exception) -> Exception:
    """The error for a text file that pandas reads whole but dask not in blocks: a quoted
    field holding a line break where dask ends a block (dask splits text files at line
    breaks without reading quotes, a known limitation of :func:`dask.dataframe.read_csv`)."""
    fix = say(
        "read it in memory instead (ambppl.read_annotations, or leave out chunk_items)",
        "read it in memory instead (leave out --chunk-items)",
    )
    return ValueError(
        f"could not count {path.name!r} as {ftype.upper()} in dask's blocks "
        f"({_first_line(err)}): a quoted field holds a line break, and dask splits a text file "
        f"into blocks at line breaks without reading quotes (a known dask limitation); {fix}, "
        "or remove the line breaks inside quoted fields"
    )


def _unreadable(path: Path, ftype: str, err: Exception, read_kwargs: dict[str, Any]) -> Exception:
    """The error of :func:`ambppl.read_annotations` for a text file that pandas does not
    read (a row with more fields than the first)."""
    hint = {
        "csv": "check that every row has the same number of fields and the delimiter ("
        + say("pass format='tsv'", "pass --format tsv")
        + " for tab-separated files)",
        "tsv": "check that every row has the same number of tab-separated fields",
    }[ftype]
    if not read_kwargs.get("comment"):
        hint += _sniff_hint(path, None if "sep" in read_kwargs else ftype)
    return ValueError(
        f"could not read {path.name!r} as {ftype.upper()} ({_first_line(err)}); {hint}"
    )
