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
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ambppl.data.labels import _check_categories, _label_str, _order
from ambppl.data.matrices import check_distinct_ids, count_dims
from ambppl.internal.checks import (
    MAX_COUNT,
    cant_solve_absent,
    cant_solve_position,
    check_counts,
)
from ambppl.internal.messages import say


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
        The item labels, one per row of ``values``; None: items are numbered from 0. Each
        chunk of ``values``, when computed, refuses item labels repeated within it (as
        :func:`ambppl.read_annotations` refuses repeated ids of counts; labels repeated in
        two chunks are not looked for, which would take every label at once).
    categories : list of str
        The category labels, one per count column.
    cant_solve : str or None
        The can't-solve label, one of ``categories`` (given as another value, its text);
        None if there is none. :meth:`with_cant_solve` sets it from a label or a position.
        Its column is moved last (lazily), as :func:`ambppl.read_annotations` moves it:
        the other columns keep their order, so that a value per category (a positional
        ``prior``) is read in the same order in memory and in chunks.
    named : bool, default True
        Whether ``categories`` are the source's own labels (Parquet column names, a
        ``category`` coordinate), which ``categories=`` must list, in the order wanted
        (:meth:`relabel`); False for columns named by position (``"0"``, ``"1"``, ...),
        which ``categories=`` names in the source's order.
    source_columns : tuple of int or None, default None
        For columns named by position (``named`` False): the source's column of each count
        column, where the can't-solve column was moved last (None: the source's order);
        kept up to date by this class, not given.

    Raises
    ------
    ValueError
        For a ``cant_solve`` that is not one of ``categories``, or ``items`` of another
        length than the rows of ``values``.
    """

    values: Any
    items: Any
    categories: list[str]
    cant_solve: Any = None
    named: bool = True
    source_columns: tuple[int, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.categories = list(self.categories)
        position = None
        if self.cant_solve is not None:
            self.cant_solve = str(self.cant_solve)
            # one of them, else refused
            position = cant_solve_position(self.cant_solve, self.categories)
        if self.items is not None:
            self.values = _checking_items(self.values, self.items)
        last = len(self.categories) - 1
        if position is not None and position != last:  # moved last, as read_annotations does
            where = [j for j in range(last + 1) if j != position] + [position]
            self.values = _columns(self.values, where)
            self.categories = [self.categories[j] for j in where]
            if not self.named:
                source = self.source_columns or tuple(range(last + 1))
                self.source_columns = tuple(source[j] for j in where)

    @property
    def n_items(self) -> int | None:
        """The number of items where the source says it without reading the counts (a zarr
        store's shape, a Parquet file's row count); None where it is not known yet."""
        n = self.values.shape[0]
        return None if n is None or (isinstance(n, float) and np.isnan(n)) else int(n)

    def compute(self) -> Any:
        """The counts in memory, as :func:`ambppl.read_annotations` returns them.

        Returns
        -------
        xarray.DataArray
            ``int64`` counts named ``counts`` with dims ``("item", "category")`` (items
            numbered from 0 where ``items`` is None), the categories in the order of
            ``categories`` (the can't-solve category last) and ``attrs["cant_solve"]``.

        Raises
        ------
        ValueError
            For a count that is not a non-negative whole number (each chunk is checked as
            it is read), or item labels repeated anywhere (all of them are at hand here).

        Examples
        --------
        >>> import dask.array as da
        >>> lazy = LazyCounts(da.from_array(np.array([[1, 3], [2, 0]]), chunks=1), None,
        ...                   ["?", "yes"], cant_solve="?")
        >>> counts = lazy.compute()  # the can't-solve category last
        >>> counts["category"].values.tolist(), counts.values.tolist()
        (['yes', '?'], [[3, 1], [0, 2]])
        >>> counts.attrs["cant_solve"], counts["item"].values.tolist()
        ('?', [0, 1])
        """
        import dask
        import xarray as xr

        values, items = dask.compute(self.values, self.items)
        values = np.asarray(values, dtype=np.int64)
        if items is None:
            items = np.arange(values.shape[0])
        else:
            items = np.asarray(items)
            check_distinct_ids(
                items,
                "the item labels",
                "before writing the counts, e.g. with pandas: frame.groupby('item').sum()",
            )
        return xr.DataArray(
            values,
            dims=("item", "category"),
            coords={"item": items, "category": list(self.categories)},
            name="counts",
            attrs={"cant_solve": self.cant_solve},
        )

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
            Where the counts have labels of their own (``named``): the category order
            wanted, which must hold every one of them (the columns are reordered, lazily; a
            label nobody gave gets a column of zeros), the can't-solve category then moved
            last, as :func:`ambppl.read_annotations` moves it. Otherwise (columns named by
            position) new labels for the count columns, one per column, in the source's
            order (that of ``"0"``, ``"1"``, ..., even where the can't-solve column was
            moved last). None returns these counts unchanged.

        Returns
        -------
        LazyCounts
            A copy with ``categories`` as strings (the dask arrays shared, or reordered
            lazily); the can't-solve label follows its column, which stays last.

        Raises
        ------
        TypeError
            For ``categories`` that are not a list of labels.
        ValueError
            For repeated labels or fewer than 2; for labels of the counts missing from
            ``categories`` (as :func:`ambppl.read_annotations` refuses them: the columns
            are never renamed by position), or new labels of another number than the count
            columns.

        Examples
        --------
        >>> import dask.array as da
        >>> lazy = LazyCounts(da.from_array(np.array([[3, 1], [0, 2]])), None, ["a", "b"])
        >>> moved = lazy.relabel(["b", "c", "a"])
        >>> moved.categories, moved.values.compute().tolist()
        (['b', 'c', 'a'], [[1, 0, 3], [2, 0, 0]])
        >>> lazy.with_cant_solve("a").relabel(["a", "b"]).categories  # can't-solve last
        ['b', 'a']
        >>> bare = LazyCounts(lazy.values, None, ["0", "1"], named=False)
        >>> bare.relabel(["yes", "no"]).categories
        ['yes', 'no']
        >>> bare.with_cant_solve("0").relabel(["?", "yes"]).categories  # the source's order
        ['yes', '?']
        """
        if categories is None:
            return self
        cats = _check_categories(categories) or []  # a list: categories is not None
        if self.named:
            # the counts' own labels: reordered by label, as read_annotations does (every
            # label must be there; the can't-solve category last)
            cats, _ = _order(self.categories, cats, self.cant_solve, sort=False)
            where = [self.categories.index(c) if c in self.categories else -1 for c in cats]
            return replace(self, values=_columns(self.values, where), categories=cats)
        if len(cats) != len(self.categories):  # as read_annotations says it
            raise ValueError(
                f"categories must name the {len(self.categories)} columns of the count matrix "
                f"in order, but got {len(cats)} labels: {cats!r}"
            )
        # the new labels name the source's columns in order, wherever the columns are now
        source = self.source_columns or range(len(cats))
        labels = [cats[k] for k in source]
        cant_solve = self.cant_solve
        if cant_solve is not None:
            cant_solve = labels[self.categories.index(cant_solve)]
        return replace(self, categories=labels, cant_solve=cant_solve)

    def with_cant_solve(self, cant_solve: Any) -> LazyCounts:
        """These counts with the can't-solve category ``cant_solve``.

        Parameters
        ----------
        cant_solve : label, int or None
            A label among ``categories`` (a number is taken for a label when its text is
            one, as :func:`ambppl.read_annotations` takes it), else an integer position
            along ``categories`` as they are (``-1``: the last); None: no can't-solve
            category.

        Returns
        -------
        LazyCounts
            A copy whose ``cant_solve`` is that label (or None), its column moved last
            (lazily), the others in their order, as :func:`ambppl.read_annotations` puts it.

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
        >>> moved = lazy.with_cant_solve("2")
        >>> moved.categories, moved.values.compute().tolist()
        (['1', '3', '2'], [[3, 0, 1]])
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


#: The name of the dask layer that checks the item labels of each chunk of counts
#: (:func:`_checking_items`), by which a graph that holds it is known.
_CHECKED_ITEMS = "ambppl-distinct-items"


def _checking_items(values: Any, items: Any) -> Any:
    """``values``, the counts, as a dask array each of whose chunks, when computed, first
    refuses item labels (``items``, in any chunks) repeated within the chunk
    (:func:`_distinct_in_chunk`); unchanged where its graph checks them already (a copy made
    by :meth:`LazyCounts.relabel`)."""
    import dask.array as da
    from dask.base import tokenize

    if any(str(name).startswith(_CHECKED_ITEMS) for name in values.dask.layers):
        return values
    if values.numblocks[1] != 1:
        values = values.rechunk({1: -1})
    if not isinstance(items, da.Array):
        items = da.from_array(np.asarray(items), chunks=(values.chunks[0],))
    if items.shape != values.shape[:1]:
        raise ValueError(
            f"items must hold one label per row of the counts ({values.shape[0]}), but got "
            f"{items.shape[0] if items.ndim == 1 else items.shape}"
        )
    labels = items.rechunk((values.chunks[0],))[:, None]  # one column: blocks pair up
    # the caller's words, fixed here: dask computes the chunks outside the context of say
    answers = say(
        "format='long' with item=, rater= and label= naming its columns",
        "--layout long with --item, --rater and --label naming its columns",
    )
    return da.map_blocks(
        _distinct_in_chunk,
        values,
        labels,
        answers,
        dtype=values.dtype,
        chunks=values.chunks,
        name=f"{_CHECKED_ITEMS}-{tokenize(values, labels, answers)}",
        meta=np.empty((0, 0), dtype=values.dtype),
    )


def _distinct_in_chunk(
    block: np.ndarray,
    items: np.ndarray,
    answers: str,
    block_info: dict[Any, Any] | None = None,
) -> np.ndarray:
    """``block``, the counts of one chunk of items, once its item labels ``items`` (a column)
    are found distinct (:func:`ambppl.data.matrices.check_distinct_ids`, as
    :func:`ambppl.read_annotations` refuses repeated ids of counts in memory; labels
    repeated in two chunks are not looked for, which would take every label at once).
    ``answers`` is how to read a file of answers instead, in the caller's words."""
    rows = ""
    if block_info is not None and 0 in block_info:
        start, stop = block_info[0]["array-location"][0]
        rows = f", rows {start} to {stop - 1}"
    check_distinct_ids(
        np.asarray(items).ravel(),
        f"the item labels of the counts read in chunks{rows}",
        "e.g. with pandas before the file is written: frame.groupby(<item column>).sum()",
        f"; or, if the file holds answers (one row per answer) rather than counts, read it "
        f"as answers: {answers}",
    )
    return block


def _columns(values: Any, where: list[int]) -> Any:
    """The dask array of counts ``values`` with its columns ``where``, in that order (-1: a
    column of zeros), reordered lazily; ``values`` itself where ``where`` is every column in
    order."""
    if where == list(range(values.shape[1])):
        return values
    if values.numblocks[1] != 1:
        values = values.rechunk({1: -1})
    return values.map_blocks(
        _select_columns,
        where,
        chunks=(values.chunks[0], (len(where),)),
        dtype=values.dtype,
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
        2-D counts backed by dask (e.g. ``read_annotations(...).chunk({"item": 10**6})``),
        whose dims are told apart as :func:`ambppl.read_annotations` tells them
        (:func:`ambppl.data.matrices.count_dims`: by name where one is named ``item`` or
        ``category``, else items first); the coordinates of those dims and
        ``attrs["cant_solve"]`` are used where present.

    Returns
    -------
    LazyCounts
        The same chunks (nothing computed), the item labels in those chunks, the category
        labels as strings and the can't-solve label.

    Raises
    ------
    TypeError
        For anything but an xarray DataArray backed by dask.
    ValueError
        For counts that are not 2-D, or item labels (the coordinate of the item dim) that
        repeat, as :func:`ambppl.read_annotations` refuses them.

    Examples
    --------
    >>> import xarray as xr
    >>> counts = xr.DataArray(np.array([[3, 1], [0, 4], [2, 2]]), dims=("item", "category"),
    ...                       coords={"category": ["yes", "no"]}).chunk({"item": 2})
    >>> lazy = from_dataarray(counts)
    >>> lazy.categories, lazy.values.chunks, lazy.items is None
    (['yes', 'no'], ((2, 1), (2,)), True)
    >>> from_dataarray(counts.T).values.compute().tolist()  # dims by name
    [[3, 1], [0, 4], [2, 2]]
    """
    import dask.array as da
    import xarray as xr

    if not isinstance(counts, xr.DataArray):
        raise TypeError(
            "counts must be a dask-backed xarray.DataArray with dims ('item', 'category') "
            "(e.g. ambppl.read_annotations(...).chunk({'item': 10**6})), but got "
            f"{type(counts).__name__}"
        )
    if counts.chunks is None:
        raise TypeError(
            "counts must be backed by dask, but got a DataArray in memory: chunk it along its "
            "items (counts.chunk({'item': 10**6})), or pass it to ambppl.read_annotations"
        )
    if counts.ndim != 2:  # as read_annotations says it
        raise ValueError(
            f"counts must be 2-D (item x category), but got dims {counts.dims} "
            f"of shape {counts.shape}"
        )
    item_dim, category_dim = count_dims(counts.dims)
    counts = counts.transpose(item_dim, category_dim)
    items = None
    if item_dim in counts.coords:
        ids = np.asarray(counts[item_dim].values)  # in memory: checked as read_annotations does
        check_distinct_ids(
            ids,
            f"the coordinate {item_dim!r} of 'DataArray'",
            f"with xarray: counts.groupby({item_dim!r}).sum()",
        )
        items = da.from_array(ids, chunks=(counts.chunks[0],))
    named = category_dim in counts.coords
    categories = (
        [str(c) for c in counts[category_dim].values]
        if named
        else [str(k) for k in range(counts.sizes[category_dim])]
    )
    label = counts.attrs.get("cant_solve")
    if label is not None and str(label) not in categories:  # as the arrays in memory say it
        raise ValueError(
            f"counts.attrs['cant_solve'] must be one of the labels of its {category_dim!r} "
            f"dimension {categories} or None, but got {label!r}; set counts.attrs['cant_solve'] "
            "to the can't-solve label (None if there is none)"
        )
    return LazyCounts(counts.data, items, categories, label, named)
