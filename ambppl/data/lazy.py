"""Counts too large for memory: :class:`LazyCounts`, the data contract of counts read in chunks.

:class:`LazyCounts` holds a dask array (items x categories) chunked along items, with the item
and category labels and the can't-solve label (:func:`ambppl.data.open_counts_in_chunks` opens
a zarr store or a Parquet file as one, :func:`from_dataarray` wraps a dask-backed DataArray);
:func:`checked_block` checks one chunk of counts as it is read. Nothing here scores: the dask
passes that score counts read in chunks are :mod:`ambppl.analysis.lazy_score`, and the
distinct count vectors are summarized in memory by
:func:`ambppl.analysis.distinct.distinct_columns`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ambppl.internal.checks import MAX_COUNT, check_counts


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
    TypeError
        For anything but an xarray DataArray.
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
    import xarray as xr

    if not isinstance(counts, xr.DataArray):
        raise TypeError(
            "counts must be a dask-backed xarray.DataArray with dims ('item', 'category') "
            "(e.g. ambppl.read_annotations(...).chunk({'item': 10**6})), but got "
            f"{type(counts).__name__}"
        )
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
