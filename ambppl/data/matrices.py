"""Count matrices (items x categories) checked and labelled as the data contract's counts.

A numpy array, a DataArray (its coordinates and ``attrs`` kept), or a frame of counts (one
row per item, one column per category; from a CSV/TSV file read as text, each cell checked to
be a number) becomes int64 counts with ``item`` and ``category`` coordinates, the columns in
their order (can't-solve last). A DataArray's dims are told apart by name (:func:`count_dims`);
a frame's item ids are its ``item=`` column, else a column headed like item ids
(:func:`id_column`, one list of id names: :data:`ID_HEADERS`). One row per item: repeated item
ids, or ids of two types that print the same (``1`` and ``"1"``), are refused
(:func:`check_distinct_ids`), never summed or kept as two items.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.files import _READ_NOTE, DEFAULT_ITEM, _header_key
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

#: Headers (as :func:`ambppl.data.files._header_key` gives them: lower case, without ``_``,
#: ``-`` and white space) that name nothing but item ids: pandas' name for the empty header
#: that ``DataFrame.to_csv`` writes over the index (``"Unnamed: 0"`` read back), the index's
#: name after ``reset_index()``, and ``id``, ``item``, ``task`` and the ``...id`` names.
_ID_ONLY = frozenset(
    "task taskid item itemid items id index questionid exampleid sampleid imageid docid "
    "textid tweetid unitid unnamed:0".split()
) | {""}

#: Headers (as :data:`_ID_ONLY` holds them) of an id column that are also words, which may
#: head a category of counts all the same (``text`` beside ``image`` and ``audio``).
_ID_WORDS = frozenset("question example sample image doc document text tweet unit".split())

#: Headers (as :func:`ambppl.data.files._header_key` gives them: lower case, without ``_``,
#: ``-`` and white space) of a column of item ids: :data:`_ID_ONLY` and :data:`_ID_WORDS`.
#: The one list of id names of the readers: a frame of counts takes such a column for its
#: item ids (:func:`id_column`), the wide reader (:mod:`ambppl.data.tables`) refuses such a
#: column taken for a rater, and a count DataArray's dim so named holds the items
#: (:func:`count_dims`). Counted as a category, such a column would add its ids to every
#: item's answers.
ID_HEADERS = _ID_ONLY | _ID_WORDS

#: Names (as :func:`ambppl.data.files._header_key` gives them) of the category dim of a count
#: DataArray besides ``category`` (:func:`count_dims`).
CATEGORY_DIMS = frozenset(
    "category categories label labels class classes answer answers response responses "
    "choice choices".split()
)

#: The column where ``DataFrame.to_parquet`` stores an index without a name.
PARQUET_INDEX = "__index_level_0__"


def id_column(columns: list[Any]) -> Any | None:
    """The column of a table of counts that holds the item ids when ``item=`` is left at its
    default: :data:`DEFAULT_ITEM` if present, else the index ``to_parquet`` stored
    (:data:`PARQUET_INDEX`), else the first column (in any position) headed with a name of
    nothing but ids (:data:`_ID_ONLY`: ``id``, ``tweet_id``, ``''``, ...), case, ``_``,
    ``-`` and white space aside, else the first column if its header is an id's name that is
    also a word (:data:`_ID_WORDS`: ``question``, ``text``, ...; in another position such a
    header heads a category, as ``text`` beside ``image`` and ``audio``); None if there is
    none (the items are then the index or numbered from 0).

    Examples
    --------
    >>> id_column(["Unnamed: 0", "yes", "no"]), id_column(["yes", "no"])
    ('Unnamed: 0', None)
    >>> id_column(["Question", "pos", "neg"]), id_column(["pos", "neg", "Tweet_ID"])
    ('Question', 'Tweet_ID')
    >>> id_column(["text", "image", "id"]), id_column(["audio", "text", "image"])
    ('id', None)
    """
    for wanted in (DEFAULT_ITEM, PARQUET_INDEX):
        if wanted in columns:
            return wanted
    found = next((c for c in columns if _header_key(c) in _ID_ONLY), None)
    if found is None and columns and _header_key(columns[0]) in _ID_WORDS:
        found = columns[0]  # a word: ids only where an id column usually is, first
    return found


def check_id_columns(columns: list[Any], ids: Any, source: str) -> None:
    """Refuse a column of a frame of counts, besides ``ids`` (the column that holds the item
    ids; None: the index), headed with a name of nothing but ids (:data:`_ID_ONLY`:
    ``id``, ``item_id``, ``''``, ...): counted as a category it would add its ids to every
    item's answers (a frame written with ``to_csv`` with its index, beside its id column).
    A header that is also a word (``question``, ``text``) may head a category and is kept.

    Examples
    --------
    >>> check_id_columns(["id", "text", "image"], "id", "c.csv")  # words: categories
    >>> try:
    ...     check_id_columns(["Unnamed: 0", "item_id", "pos"], "Unnamed: 0", "c.csv")
    ... except ValueError as err:
    ...     print(str(err).split(";")[0])
    counts must have one column of item ids, but 'c.csv' has the column 'item_id', headed
    like item ids, besides the column 'Unnamed: 0', which holds them
    """
    more = [c for c in columns if c != ids and c != PARQUET_INDEX and _header_key(c) in _ID_ONLY]
    if not more:
        return
    held = "the index" if ids in (None, PARQUET_INDEX) else f"the column {ids!r}"
    raise ValueError(
        f"counts must have one column of item ids, but {source!r} has the column "
        f"{more[0]!r}, headed like item ids, besides {held}, which holds them; counted as a "
        "category it would add its ids to every item's answers: drop it, or "
        + say(
            f"pass item={more[0]!r} if it holds the item ids",
            f"give --item {more[0]} if it holds the item ids",
        )
        + " (and drop the other)"
    )


def _may_be_a_category(header: Any) -> bool:
    """Whether a column that :func:`id_column` took for the item ids by its header might
    be a category all the same: a header of :data:`ID_HEADERS` that is a word
    (:data:`_ID_WORDS`: ``question``, ``text``, ``image``, ...), not an id's name."""
    return _header_key(header) in _ID_WORDS


def count_dims(dims: tuple[Any, ...]) -> tuple[Any, Any]:
    """The item dim and the category dim of a 2-D count DataArray, by name: a dim named
    ``item`` or ``category``, in either position, is that one (the other dim is the other
    one); else a dim named like an item id (:data:`ID_HEADERS`: ``task``, ``question``, ...)
    or like a category (:data:`CATEGORY_DIMS`: ``label``, ``answer``, ...), the other dim
    named neither way, is that one; else (``dim_0``, ``dim_1``) by position, items first,
    as for a numpy array.

    Examples
    --------
    >>> count_dims(("label", "item")), count_dims(("category", "task"))
    (('item', 'label'), ('task', 'category'))
    >>> count_dims(("label", "task")), count_dims(("dim_0", "dim_1"))
    (('task', 'label'), ('dim_0', 'dim_1'))
    """
    first, second = dims
    if "item" in dims:
        return "item", second if first == "item" else first
    if "category" in dims:
        return (second if first == "category" else first), "category"

    def named(dim: Any, names: frozenset[str]) -> bool:
        return isinstance(dim, str) and _header_key(dim) in names and dim != ""

    items = (named(first, ID_HEADERS), named(second, ID_HEADERS))
    cats = (named(first, CATEGORY_DIMS), named(second, CATEGORY_DIMS))
    if items == (False, True) or cats == (True, False):  # the two lists share no name
        return second, first
    return first, second


def check_distinct_ids(ids: np.ndarray, place: str, grouped: str, note: str = "") -> None:
    """Refuse repeated item ids in a count matrix (one row per item): ids equal as values
    (missing ones aside), or different values that print the same (``1`` and ``"1"``).
    ``place`` says where the ids are (``"the column 'id' of 'counts.csv'"``), ``grouped``
    is the call that sums each item's rows (``"with pandas: frame.groupby('id').sum()"``)
    and ``note`` is added to the fix.

    Examples
    --------
    >>> check_distinct_ids(np.array(["a", "b"]), "the index", "e.g. groupby")  # distinct
    >>> try:
    ...     check_distinct_ids(np.array(["a", "b", "a"]), "the index", "e.g. groupby")
    ... except ValueError as err:
    ...     print(str(err).split(";")[0])
    item ids must be distinct (one row of counts per item), but the id 'a' occurs on more
    than one row (in the index)
    """
    import pandas as pd

    index = pd.Index(ids)
    present = ~np.asarray(index.isna())
    if index.is_unique:
        groups = alike_ids(index)
        if not groups:
            return
        raise ValueError(
            f"item ids must be distinct (one row of counts per item), but the ids "
            f"{', '.join(groups)} (in {place}) are different values that "
            "print the same; give the ids one type (e.g. all text: ids.astype(str)) and sum "
            f"the rows of each item into one ({grouped})"
        )
    repeated = index[np.asarray(index.duplicated()) & present].unique()
    if len(repeated) == 0:
        return  # only missing ids repeat: check_counts and the callers say so
    shown = [v.item() if isinstance(v, np.generic) else v for v in repeated]
    ids_text = f"id {shown[0]!r} occurs" if len(shown) == 1 else f"ids {_show(shown)} occur"
    raise ValueError(
        f"item ids must be distinct (one row of counts per item), but the {ids_text} on "
        f"more than one row (in {place}); sum the rows of each item into "
        f"one ({grouped}), or give the items distinct ids{note}"
    )


def alike_ids(ids: Any) -> list[str]:
    """Distinct item ids that print the same (``1`` and ``"1"``, ids of two types): up to 3
    groups of them, each shown as a list; empty where there are none. Such ids would give
    two items that no output tells apart. Ids of one type (the usual case) are not looked
    at one by one.

    Examples
    --------
    >>> alike_ids([1, "1", 2]), alike_ids(["1", "2"])
    (["[1, '1']"], [])
    """
    import pandas as pd

    index = pd.Index(ids, dtype=object) if not isinstance(ids, pd.Index) else ids
    if not pd.api.types.infer_dtype(index, skipna=True).startswith("mixed"):
        return []  # one type: ids that differ print differently
    present = ~np.asarray(index.isna())
    texts = pd.Index([_label_str(v) for v in index], dtype=object)
    same = texts[np.asarray(texts.duplicated()) & present].unique().tolist()[:3]
    return [
        _show(v.item() if isinstance(v, np.generic) else v for v in index[texts == t]) for t in same
    ]


def refuse_alike_ids(
    ids: Any, where: str, column: str, role: str = "item", then: str | None = None
) -> None:
    """Refuse distinct item (or rater) ids that print the same (``1`` and ``"1"``,
    :func:`alike_ids`): they would give two items (raters) that no output tells apart.

    ``where`` says which ids (``"the item column 'task' of 'answers.csv'"``), ``column`` how
    to name them in the fix (``"frame['task']"``) and ``role`` whose ids they are
    (``"item"`` or ``"rater"``); ``then`` ends the fix (default: that it makes them one
    item or rater). The readers and :func:`ambppl.inference.modeling.answer_codes`
    give this one message.

    Examples
    --------
    >>> try:
    ...     refuse_alike_ids([1, "1"], "the item column 'task'", "frame['task']")
    ... except ValueError as err:
    ...     print(str(err).split(";")[0])
    item ids must print differently (one id per item), but the ids [1, '1'] (in the item
    column 'task') are different values that print the same, which would give items that no
    output tells apart
    """
    groups = alike_ids(ids)
    if groups:
        raise ValueError(
            f"{role} ids must print differently (one id per {role}), but the ids "
            f"{', '.join(groups)} (in {where}) are different values that print the same, "
            f"which would give {role}s that no output tells apart; give the ids one type "
            f"(e.g. all text: {column}.astype(str))"
            + (f", which makes them one {role}" if then is None else then)
        )


def count_difference(a: Any, b: Any, items: list[str]) -> str | None:
    """Where two count matrices of the same items and categories differ, in words.

    Parameters
    ----------
    a, b : array_like
        Counts, items x categories, of one shape and in one order.
    items : list of str
        The items' labels, in that order.

    Returns
    -------
    str or None
        ``"on N of M items (the first, 'i': [2, 3] against [1, 4])"``, or None where the two
        are equal: the words of :func:`ambppl.compare` and :func:`ambppl.validation.check_fit`
        refusing other data.

    Examples
    --------
    >>> count_difference([[2, 3], [1, 1]], [[1, 4], [1, 1]], ["i", "j"])
    "on 1 of 2 items (the first, 'i': [2, 3] against [1, 4])"
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    rows = np.flatnonzero(np.any(a != b, axis=-1))
    if not len(rows):
        return None
    i = int(rows[0])

    def shown(row: np.ndarray) -> str:
        return "[" + ", ".join(f"{v:g}" for v in row) + "]"

    return (
        f"on {len(rows)} of {len(items)} items (the first, {items[i]!r}: {shown(a[i])} "
        f"against {shown(b[i])})"
    )


def refuse_other_counts(
    table: Any,
    counts: Any,
    items: list[str],
    categories: list[str],
    *,
    subject: str,
    fitted: str,
    fix: str,
) -> None:
    """Refuse ``table`` where its counts, read by label, differ from ``counts``.

    Parameters
    ----------
    table : pandas.DataFrame
        Counts indexed by item label, with a column per category label.
    counts : array_like or xarray.DataArray
        The reference counts, items x categories, in the order of ``items`` and
        ``categories``.
    items, categories : list of str
        The reference's labels: ``table`` is read in their order.
    subject, fitted, fix : str
        The message's words: what must hold, the reference's name and the fix.

    Raises
    ------
    ValueError
        ``"{subject}, but their counts differ from {fitted} on N of M items (...),
        categories [...]: {fix}"``, the words of :func:`ambppl.validation.check_fit`.
    """
    differ = count_difference(table.loc[items, categories].to_numpy(), np.asarray(counts), items)
    if differ is not None:
        raise ValueError(
            f"{subject}, but their counts differ from {fitted} {differ}, categories "
            f"{categories}: {fix}"
        )


def ids_of_one_type(ids: Any) -> np.ndarray:
    """Item or rater ids as given where they are of one type, else all as text.

    Ids of mixed types that print apart (``0`` and ``"x1"``, which a Python table may hold;
    a file's column is read as one type) are legitimate, but samplers and netCDF take one
    type per coordinate: they are written as text (``"0"``, ``"x1"``), as a file would give
    them. Run :func:`alike_ids` first: ids that print alike are refused, so the text is one
    per id. Missing ids (None, NaN) stay missing.

    Examples
    --------
    >>> ids_of_one_type([0, "x1"]).tolist(), ids_of_one_type([0, 1]).tolist()
    (['0', 'x1'], [0, 1])
    """
    import pandas as pd

    index = pd.Index(ids, dtype=object) if not isinstance(ids, pd.Index) else ids
    if not pd.api.types.infer_dtype(index, skipna=True).startswith("mixed"):
        return np.asarray(ids)
    present = ~np.asarray(index.isna())
    return np.array(
        [_label_str(v) if keep else v for v, keep in zip(index, present, strict=True)],
        dtype=object,
    )


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
        da_item, da_cat = count_dims(obj.dims)  # by name where a dim is named so
        obj = obj.transpose(da_item, da_cat)
        values = obj.values
        ids = obj[da_item].values if da_item in obj.coords else np.arange(obj.shape[0])
        place = f"the coordinate {da_item!r} of {source!r}"
        grouped, note = f"with xarray: counts.groupby({da_item!r}).sum()", ""
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
        id_name = None  # the frame's own index holds the ids
        if item in obj.columns:
            obj, id_name = obj.set_index(item), item
        elif item != DEFAULT_ITEM:
            raise ValueError(
                f"item column {item!r} is not in the counts; the columns present are "
                f"{list(obj.columns)!r}: {reader_option('item')} "
                "or leave it out (the index, or a column headed like an id column such as 'id', "
                "'item' or '', holds the item ids)"
            )
        elif ids_in is not None:
            obj, id_name = obj.set_index(ids_in), ids_in
        check_id_columns(list(obj.columns), id_name, source)  # the rest are counts
        if id_name in (None, PARQUET_INDEX):
            place, grouped = "the index", "with pandas: frame.groupby(level=0).sum()"
        else:
            place = f"the column {id_name!r}"
            grouped = f"with pandas: frame.groupby({id_name!r}).sum()"
        place += f" of {source!r}"
        note = ""
        if id_name not in (None, item, PARQUET_INDEX) and _may_be_a_category(id_name):
            note = (
                f"; or, if column {id_name!r} holds the counts of a category rather than item "
                "ids (its header made it the id column), rename it"
            )
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
        place = grouped = note = ""
    if grouped:
        check_distinct_ids(np.asarray(ids), place, grouped, note)
        ids = ids_of_one_type(ids)  # 0 and "x1": as text, one type
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
