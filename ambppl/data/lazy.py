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

import numbers
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ambppl.data.labels import _check_categories, _label_str, _order
from ambppl.internal.checks import (
    MAX_COUNT,
    cant_solve_absent,
    cant_solve_position,
    check_counts,
)


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
    cant_solve : str or None
        The can't-solve label, one of ``categories`` (given as another value, its text);
        None if there is none. :meth:`with_cant_solve` sets it from a label or a position.
    named : bool, default True
        Whether ``categories`` are the source's own labels (Parquet column names, a
        ``category`` coordinate); False for columns named by position (``"0"``, ``"1"``,
        ...), which ``categories=`` names in order (:meth:`relabel`).

    Raises
    ------
    ValueError
        For a ``cant_solve`` that is not one of ``categories``.
    """

    values: Any
    items: Any
    categories: list[str]
    cant_solve: Any = None
    named: bool = True

    def __post_init__(self) -> None:
        if self.cant_solve is not None:
            self.cant_solve = str(self.cant_solve)
            cant_solve_position(self.cant_solve, self.categories)  # one of them, else refused

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
        """These counts with the categories ``categories``, as :func:`ambppl.read_annotations`
        takes ``categories=`` for counts.

        Parameters
        ----------
        categories : list of labels, optional
            Where the counts have labels of their own (``named``) and ``categories``
            holds any of them: the category order wanted, which must hold every label (the
            columns are reordered, lazily; a label nobody gave gets a column of zeros).
            Otherwise new labels for the count columns, one per column, in order. None
            returns these counts unchanged.

        Returns
        -------
        LazyCounts
            A copy with ``categories`` as strings (the dask arrays shared, or reordered
            lazily); the can't-solve label follows its column.

        Raises
        ------
        TypeError
            For ``categories`` that are not a list of labels.
        ValueError
            For repeated labels or fewer than 2; for labels of the counts missing from
            ``categories``, or new labels of another number than the count columns.

        Examples
        --------
        >>> import dask.array as da
        >>> lazy = LazyCounts(da.from_array(np.array([[3, 1], [0, 2]])), None, ["a", "b"])
        >>> moved = lazy.relabel(["b", "c", "a"])
        >>> moved.categories, moved.values.compute().tolist()
        (['b', 'c', 'a'], [[1, 0, 3], [2, 0, 0]])
        >>> lazy.relabel(["yes", "no"]).categories
        ['yes', 'no']
        """
        if categories is None:
            return self
        cats = _check_categories(categories) or []  # a list: categories is not None
        if self.named and set(cats) & set(self.categories):
            # the counts' own labels: reordered by label, as read_annotations does
            _order(self.categories, cats, None, sort=False)  # every label must be there
            where = [self.categories.index(c) if c in self.categories else -1 for c in cats]
            values = self.values
            if where != list(range(len(self.categories))):
                if values.numblocks[1] != 1:
                    values = values.rechunk({1: -1})
                values = values.map_blocks(
                    _select_columns,
                    where,
                    chunks=(values.chunks[0], (len(where),)),
                    dtype=values.dtype,
                )
            return replace(self, values=values, categories=cats)
        if len(cats) != len(self.categories):
            own = f" (or list their labels {self.categories} in the order wanted)"
            raise ValueError(
                f"categories must name the {len(self.categories)} count columns"
                f"{own if self.named else ''}, but got {len(cats)}: {categories!r}"
            )
        cant_solve = self.cant_solve
        if cant_solve is not None:
            cant_solve = cats[self.categories.index(cant_solve)]
        return replace(self, categories=cats, cant_solve=cant_solve)

    def with_cant_solve(self, cant_solve: Any) -> LazyCounts:
        """These counts with the can't-solve category ``cant_solve``.

        Parameters
        ----------
        cant_solve : label, int or None
            A label among ``categories`` (a number is taken for a label when its text is
            one, as :func:`ambppl.read_annotations` takes it), else an integer position
            along the categories (``-1``: the last); None: no can't-solve category.

        Returns
        -------
        LazyCounts
            A copy whose ``cant_solve`` is that label (or None).

        Raises
        ------
        ValueError
            For a value that is neither a label nor a position among the categories.

        Examples
        --------
        >>> import dask.array as da
        >>> lazy = LazyCounts(da.from_array(np.array([[3, 1, 0]])), None, ["1", "2", "3"])
        >>> lazy.with_cant_solve(1).cant_solve, lazy.with_cant_solve(-1).cant_solve
        ('1', '3')
        """
        return replace(self, cant_solve=_cant_solve_label(cant_solve, self.categories))


def _cant_solve_label(cant_solve: Any, categories: list[str]) -> str | None:
    """The can't-solve label that ``cant_solve`` names among ``categories``: a label first
    (a value whose text is one of them), else an integer position; None for None.

    Raises
    ------
    ValueError
        For a value that is neither a label nor a position among ``categories``.
    """
    if cant_solve is None:
        return None
    for text in (_label_str(cant_solve), str(cant_solve)):
        if text in categories:
            return text
    k = len(categories)
    position = isinstance(cant_solve, numbers.Integral) and not isinstance(cant_solve, bool)
    if position and -k <= int(cant_solve) < k:
        return categories[int(cant_solve)]
    raise ValueError(
        cant_solve_absent(
            cant_solve,
            categories,
            f"cant_solve must be one of the category labels {categories}, a position in "
            f"[-{k}, {k - 1}] or None, but got {cant_solve!r}",
        )
    )


def _select_columns(block: np.ndarray, where: list[int]) -> np.ndarray:
    """The columns ``where`` of a block of counts, in that order (-1: a column of zeros)."""
    out = np.zeros((block.shape[0], len(where)), dtype=block.dtype)
    for j, column in enumerate(where):
        if column >= 0:
            out[:, j] = block[:, column]
    return out


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
    named = "category" in counts.coords
    categories = (
        [str(c) for c in counts["category"].values]
        if named
        else [str(k) for k in range(counts.sizes["category"])]
    )
    label = counts.attrs.get("cant_solve")
    if label is not None and str(label) not in categories:  # as the arrays in memory say it
        raise ValueError(
            f"counts.attrs['cant_solve'] must be one of the labels of its 'category' dimension "
            f"{categories} or None, but got {label!r}; set counts.attrs['cant_solve'] to the "
            "can't-solve label (None if there is none)"
        )
    return LazyCounts(counts.data, items, categories, label, named)
