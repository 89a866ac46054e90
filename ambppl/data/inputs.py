"""``read_input``: one path read as an estimator needs it: counts, answers, or counts in chunks.

The ``ambppl`` command reads every input here: a model of answers gets the answers table
(:func:`ambppl.data.read_long`); a model of counts the counts (:func:`ambppl.read_annotations`),
opened lazily where the file holds counts that open in chunks (a zarr store, a Parquet file of
counts: :func:`ambppl.data.open_counts_in_chunks`), or for a long answers file too large for
memory counted with dask (:func:`ambppl.data.count_long_in_chunks`). Which of them applies
is told by the file (:func:`ambppl.data.opens_in_chunks`) and the options, never by the
estimator that takes the result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ambppl.data.chunked import count_long_in_chunks, open_counts_in_chunks
from ambppl.data.formats import _parse_format, opens_in_chunks
from ambppl.data.lazy import LazyCounts
from ambppl.data.readers import read_annotations, read_long

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["read_input"]

#: The item column that the readers take by default (crowd-kit's name in a table of
#: answers); for counts opened in chunks it means "the file's own item column, if any".
DEFAULT_ITEM = "task"


def read_input(
    source: str | os.PathLike[str],
    *,
    answers: bool = False,
    lazy: int | None = None,
    chunk_items: int | None = None,
    format: str | None = None,
    item: Any = DEFAULT_ITEM,
    rater: Any = "worker",
    label: Any = "label",
    cant_solve: Any = None,
    progress: Callable[[str], Any] | None = None,
    **options: Any,
) -> xr.DataArray | pd.DataFrame | LazyCounts:
    """Read an annotations file for an estimator, in memory or in chunks as the file allows.

    Parameters
    ----------
    source : str or os.PathLike
        A file or a zarr store.
    answers : bool, default False
        Read one row per answer with the rater ids (:func:`ambppl.data.read_long`), for the
        models of answers (info record ``"data": "long"``, e.g. ``rater_effects``); always
        in memory (``lazy`` and ``chunk_items`` are then unused).
    lazy : int, optional
        Items per chunk: counts that open in chunks (:func:`ambppl.data.opens_in_chunks`: a
        zarr store, a Parquet file of counts) are opened lazily
        (:func:`ambppl.data.open_counts_in_chunks`); None reads every file into memory.
    chunk_items : int, optional
        With the layout ``"long"`` in ``format``: count the answers file with dask block by
        block (:func:`ambppl.data.count_long_in_chunks`; the counts are held in memory).
    format : str, optional
        As ``format=`` of :func:`ambppl.read_annotations`: a layout, a file type, or both.
    item, rater, label : column name or 0-based position
        As for :func:`ambppl.read_annotations`. For counts opened lazily, ``item`` names the
        Parquet file's item column; the default ``"task"`` then means the column ``"item"``
        if there is one, else items numbered from 0. Counts hold no rater ids.
    cant_solve : label, optional
        The can't-solve label (for counts opened lazily a label or a position; None: the
        store's own, if any).
    progress : callable, optional
        Called with one line saying what is read and how (``reading <path>``, ``... in chunks
        of N items (dask)``, ``counting the answers in <path> with dask, block by block``).
    **options
        Further reader options: ``categories``, ``na_values`` and for text files ``sep``,
        ``comment``, ``header``, ``encoding`` (counts opened lazily take only
        ``categories``).

    Returns
    -------
    xarray.DataArray, pandas.DataFrame or LazyCounts
        Counts (:func:`ambppl.read_annotations` or :func:`ambppl.data.count_long_in_chunks`),
        the answers table (``answers``), or counts opened lazily (``lazy``).

    Raises
    ------
    ValueError, TypeError, FileNotFoundError
        As the reader that reads the file.
    ImportError
        For counts in chunks without dask (or a zarr store without zarr).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "c.parquet"
    ...     pd.DataFrame({"item": ["a", "b"], "yes": [3, 1], "no": [0, 2]}).to_parquet(path)
    ...     lazy = read_input(path, lazy=1000)
    ...     counts = read_input(path, format="counts", item="item")
    ...     type(lazy).__name__, counts.values.tolist()
    ('LazyCounts', [[3, 0], [1, 2]])
    """

    path = Path(source)
    say = progress if progress is not None else _silent
    columns = {"item": item, "rater": rater, "label": label, "cant_solve": cant_solve}
    if answers:
        say(f"reading {path}")
        return read_long(path, format=format, **columns, **options)
    if lazy is not None and opens_in_chunks(path, format, item=item):
        say(f"reading {path} in chunks of {lazy} items (dask)")
        return open_counts_in_chunks(
            path,
            chunk_items=lazy,
            format=format,
            item=None if item == DEFAULT_ITEM else item,
            categories=options.get("categories"),
            cant_solve=cant_solve,
        )
    layout, _ = _parse_format(format)
    if chunk_items is not None and layout == "long":
        say(f"counting the answers in {path} with dask, block by block")
        columns.pop("rater")  # counts hold no rater ids
        return count_long_in_chunks(
            path, chunk_items=chunk_items, format=format, **columns, **options
        )
    say(f"reading {path}")
    return read_annotations(path, format=format, **columns, **options)


def _silent(message: str) -> None:
    """No progress lines."""
