"""Tables of answers (long: one row per answer; wide: items x raters) turned into counts.

A long table is factorized (items in order of first appearance, labels without surrounding
whitespace in the order of :func:`ambppl.data.labels._order`, or of a pandas categorical
label column's declared categories) and counted with one :func:`numpy.bincount`; a wide table
is first melted to the long layout. The checks here refuse what would silently count the
wrong thing: a column named twice, a header line read as an answer (``header=None``), a long
table read as wide (its rater and label columns, or repeated item ids), an item column that
is not there, a column of ids taken for a rater, rater names that are answers, item ids of
two types that print the same (``1`` and ``"1"``: two items no output tells apart).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.files import (
    _MANGLED,
    _READ_NOTE,
    DEFAULT_ITEM,
    _first_line_hint,
    _header_key,
)
from ambppl.data.labels import (
    _as_number,
    _check_na_conflict,
    _empty_items_error,
    _float_dtype,
    _label_str,
    _label_texts,
    _order,
    _plain_integer_ids,
    _quote,
    _show,
)
from ambppl.data.matrices import ID_HEADERS, ids_of_one_type, refuse_alike_ids
from ambppl.internal.messages import reader_option, say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr


_UNNAMED = re.compile(r"^Unnamed: \d+$")  # pandas' name for a blank header cell


#: Header cells of a long table (lower case, without ``_``, ``-`` and spaces): a first row of
#: such names read with ``header=None`` is a header line, not an answer; the item names first.
_ITEM_NAMES = frozenset(
    "task taskid item itemid id question questionid example sample image imageid doc "
    "document docid text tweet tweetid unit unitid".split()
)
_COLUMN_NAMES = _ITEM_NAMES | frozenset(
    "worker workerid rater raterid annotator annotatorid user userid judge coder labeler "
    "labeller participant label labels answer response class category annotation judgment "
    "judgement rating choice value emotion sentiment target gold y".split()
)


@dataclass(frozen=True)
class _Parsed:
    """Codes of the kept answers and the labels they point to."""

    item_codes: np.ndarray  # int64, one per kept answer, into ``items``
    items: np.ndarray  # item ids in order of first appearance
    label_codes: np.ndarray  # int64, one per kept answer, into ``categories``
    categories: list[str]
    kept: np.ndarray  # bool mask of kept rows
    n_raters: int | None
    n_dropped: int
    cant_solve: str | None


def _check_column(df: pd.DataFrame, name: Any, arg: str, hint: str = "") -> None:
    if name not in df.columns:
        raise ValueError(
            f"{arg} column {name!r} is not in the data; the columns present are "
            f"{list(df.columns)!r}: {reader_option(arg)}{hint}{_first_line_hint(df)}"
        )
    copies = df.attrs.get(_READ_NOTE, {}).get("duplicates", {}).get(name)
    copies = copies or int(np.sum(np.asarray(df.columns == name)))
    if copies > 1:
        raise ValueError(
            f"{arg} column {name!r} occurs {copies} times in the header, so which one holds "
            f"the {arg}s is ambiguous; rename the copies (or remove the extra ones) so that "
            "each column has its own name"
        )


def _factorize(df: pd.DataFrame, column: Any, role: str) -> tuple[np.ndarray, Any]:
    """``pandas.factorize`` of one column (NaN coded -1), refusing cells that are no single
    value (lists, dicts, arrays: pandas cannot hash them)."""
    import pandas as pd

    try:
        return pd.factorize(df[column], use_na_sentinel=True)
    except TypeError as err:
        cells = df[column]
        unhashable = (i for i, v in enumerate(cells) if not isinstance(v, Hashable))
        row = next(unhashable, None)
        held = "" if row is None else f" row {row} holds {cells.iloc[row]!r}, and"
        raise TypeError(
            f"{role} column {column!r} must hold one {role} per answer (a text or a number), "
            f"but{held} pandas cannot group its cells ({err}); flatten such cells into one "
            "row per answer first (e.g. DataFrame.explode)"
        ) from err


def _check_roles(item: Any, rater: Any, label: Any) -> None:
    """Refuse one column in two roles (``item="label"`` would make each answer its own
    item's only category)."""
    roles = {"item": item, "rater": rater, "label": label}
    seen: dict[Any, str] = {}
    for role, column in roles.items():
        if column is None:
            continue
        if column in seen:
            first = seen[column]
            raise ValueError(
                f"{first} and {role} must be different columns, but both are {column!r}; "
                f"pass {say(f'{first}=', f'--{first} ')}<its own column> or "
                f"{say(f'{role}=', f'--{role} ')}<its own column>"
            )
        seen[column] = role


def declared_labels(dtype: Any) -> tuple[str, ...]:
    """The categories that a pandas categorical label column (``dtype``) declares, in their
    order, as labels (:func:`ambppl.data.labels._label_texts`); empty for another dtype."""
    import pandas as pd

    if not isinstance(dtype, pd.CategoricalDtype):
        return ()
    return tuple(_label_texts(dtype.categories))


def declared_categories(declared: Iterable[str], na_values: frozenset[str]) -> list[str] | None:
    """The categories of the counts that declared labels (:func:`declared_labels`) give:
    those nobody gave included (zero counts), in their order, each once, blank ones and those
    ``na_values`` names left out; None where fewer than 2 remain (the labels found then
    decide, as for a column that is not categorical)."""
    out = list(dict.fromkeys(t for t in declared if t != "" and t not in na_values))
    return out if len(out) >= 2 else None


#: Rows of a table that :func:`counts_hint` looks at.
_HINT_ROWS = 1000


def counts_hint(df: pd.DataFrame) -> str:
    """The hint for a table read as answers whose item column is absent, where the table looks
    like counts (items x categories): 2 or more columns of whole numbers >= 0 on every row
    (of the first 1000) and at most one other column, holding a different value on every row
    (the item ids); empty otherwise, and for a file read without a header line or whose
    header line repeats a cell (the category labels of counts are distinct)."""
    import pandas as pd

    note = df.attrs.get(_READ_NOTE, {})
    rows = df.head(_HINT_ROWS)
    if len(rows) == 0 or rows.columns.has_duplicates or note.get("duplicates"):
        return ""
    if note.get("headerless"):
        return ""
    counts, others = 0, []
    for column in rows.columns:
        cells = rows[column]
        numbers = None
        if cells.dtype.kind != "b" and cells.notna().all():
            try:
                numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
            except (TypeError, ValueError):
                numbers = None
        if (
            numbers is not None
            and np.all(np.isfinite(numbers))
            and np.all(numbers >= 0)
            and np.all(numbers == np.floor(numbers))
        ):
            counts += 1
        else:
            others.append(column)
    if counts < 2 or len(others) > 1:
        return ""
    if others:
        ids = rows[others[0]]
        try:
            distinct = bool(ids.notna().all()) and not ids.duplicated().any()
        except TypeError:  # cells pandas cannot hash: no ids
            distinct = False
        if not distinct:
            return ""
    fix = say("format='counts'", "--layout counts")
    return (
        "; or, if the table holds counts (one row per item, one column per category), as its "
        f"columns of whole numbers suggest, pass {fix}"
    )


def _parse_long(
    df: pd.DataFrame,
    item: Any,
    rater: Any,
    label: Any,
    cant_solve: Any,
    categories: list[str] | None,
    *,
    na_values: frozenset[str] = frozenset(),
    desc: str = "DataFrame",
) -> _Parsed:
    """Factorize items and labels of a long table (one row per answer): labels without
    surrounding whitespace (:func:`ambppl.data.labels._label_text`; ``categories`` and
    ``na_values`` come so from their checks, ``cant_solve`` is matched so); without
    ``categories``, a pandas categorical label column gives its declared categories, in
    their order, those nobody gave included."""
    import pandas as pd

    _check_na_conflict(na_values, categories, cant_solve)
    # a table of counts read as answers lacks both columns: the hint says so at either
    _check_column(df, item, "item", counts_hint(df) if item not in df.columns else "")
    _check_column(df, label, "label", counts_hint(df) if label not in df.columns else "")
    if rater is not None:
        no_rater = say("rater=None", "--no-rater")
        _check_column(df, rater, "rater", f" (or {no_rater} if the data have no rater ids)")
    _check_roles(item, rater, label)
    note = df.attrs.get(_READ_NOTE, {})
    if note.get("headerless"):
        _check_first_row_is_data(df, item, rater, label, desc)

    codes, uniques = _factorize(df, label, "label")
    strs = _label_texts(uniques, df[label].dtype)  # " ?" and "?" are one label
    # last: NaN (-1); blank strings and the texts na_values names are missing too
    blank = np.array([s == "" or s in na_values for s in strs] + [True], dtype=bool)
    missing = blank[codes]
    kept = ~missing
    n_dropped = int(missing.sum())

    str_codes, str_uniques = pd.factorize(np.array(strs, dtype=object))
    found = [s for s in str_uniques.tolist() if s != "" and s not in na_values]
    if categories is None:
        categories = declared_categories(declared_labels(df[label].dtype), na_values)
    order, cs = _order(found, categories, cant_solve, sort=True, strip=True)
    position = {c: i for i, c in enumerate(order)}
    remap = np.array([position.get(s, -1) for s in str_uniques.tolist()], dtype=np.int64)
    label_codes = remap[str_codes[codes[kept]]]

    item_codes_all, items = _factorize(df, item, "item")
    item_codes = item_codes_all[kept].astype(np.int64)
    items = np.asarray(items)
    if note.get("text"):  # ids as written; plain integers as int64
        items = _plain_integer_ids(np.asarray(items, dtype=object))
    refuse_alike_ids(items, f"the item column {item!r} of {desc!r}", f"frame[{item!r}]")
    items = ids_of_one_type(items)  # 0 and "x1" (printing apart): as text, one type
    if np.any(item_codes < 0):
        first = int(np.flatnonzero(kept)[np.argmax(item_codes < 0)])
        raise ValueError(
            f"item column {item!r} must have an id on every answer, but "
            f"{int(np.sum(item_codes < 0))} answer(s) have none (first at row {first}); "
            "fill in or drop those rows"
        )
    n_raters = None
    if rater is not None:
        rater_codes, raters = _factorize(df[kept], rater, "rater")
        # 1 and "1" would be two raters that no output tells apart, as items would
        refuse_alike_ids(
            raters, f"the rater column {rater!r} of {desc!r}", f"frame[{rater!r}]", "rater"
        )
        n_raters = int(np.max(rater_codes, initial=-1)) + 1
    return _Parsed(
        item_codes=item_codes,
        items=np.asarray(items),
        label_codes=label_codes,
        categories=order,
        kept=kept,
        n_raters=n_raters,
        n_dropped=n_dropped,
        cant_solve=cs,
    )


def _check_first_row_is_data(
    df: pd.DataFrame, item: Any, rater: Any, label: Any, desc: str
) -> None:
    """Refuse a header line read as an answer (``header=None`` on a file that has one).

    The first row is taken for a header line when its label occurs nowhere else in the label
    column and either its item or rater cell is text while those of the other rows (the first
    1000) are all numbers, or one of its cells is a usual column name (``task``, ``worker``,
    ``label``, ``answer``, ...; case, ``_``, ``-`` and spaces aside).
    """
    import pandas as pd

    if len(df) < 2:
        return
    columns = {"item": item, "rater": rater, "label": label}
    first: dict[str, str] = {}
    for role, column in columns.items():
        if column is None:
            continue
        value = df[column].iloc[0]
        if pd.isna(value) or not str(value).strip():
            return  # a header line has a name in every column used
        first[role] = str(value)
    if bool(np.any(df[label].iloc[1:].to_numpy(dtype=object) == first["label"])):
        return  # the label is an answer given elsewhere too
    rest = df.iloc[1:1001]
    numeric = [
        role
        for role in ("item", "rater")
        if role in first
        and _as_number(first[role]) is None
        and pd.to_numeric(rest[columns[role]].dropna(), errors="coerce").notna().all()
        and rest[columns[role]].notna().any()
    ]
    named = [role for role, cell in first.items() if _header_key(cell) in _COLUMN_NAMES]
    if not numeric and not named:
        return
    if named:
        why = f"its cells {[first[r] for r in named]!r} are column names"
    else:
        why = (
            f"its {numeric[0]} cell {first[numeric[0]]!r} is text where every other row has a "
            "number"
        )
    python = ", ".join(f"{role}={cell!r}" for role, cell in first.items())
    command = " ".join(f"--{role} {_quote(cell)}" for role, cell in first.items())
    raise ValueError(
        f"the first line of {desc!r} looks like a header line, not an answer: {why}, and its "
        f"label {first['label']!r} occurs nowhere else; drop "
        + say("header=None", "--no-header")
        + f" and name the columns ({say(python, command)})"
    )


#: Headers of a column of item ids (as :func:`ambppl.data.files._header_key` gives them:
#: lower case, without ``_``, ``-`` and white space): the one list of id headers of the
#: readers, :data:`ambppl.data.matrices.ID_HEADERS` (the item names of :data:`_COLUMN_NAMES`
#: among them, and pandas' name for the blank header cell that ``DataFrame.to_csv`` writes
#: over the index), less the blank header: a frame's column headed ``""`` is not taken for
#: the item ids by its header alone.
_ID_NAMES = ID_HEADERS - {""}


def _looks_like_ids(df: pd.DataFrame, column: Any) -> tuple[str, bool] | None:
    """Why ``column`` of a wide table without its item column looks like the item ids
    rather than a rater's answers, and whether renaming it would clear it (None: it does
    not look like ids). Such a column has a value on every row, all different, and either a
    header of an id column (:data:`_ID_NAMES`; renaming clears it), or, as the first of 3 or
    more columns on 3 or more rows of a table whose index holds no ids (a default
    :class:`pandas.RangeIndex`, as a text file is read), values that no other column holds
    while the other columns share answers (raters of one task agree somewhere)."""
    import pandas as pd

    cells = df[column]
    if not isinstance(cells, pd.Series) or len(cells) == 0 or cells.isna().any():
        return None  # a rater may skip an item; an id column has an id on every row
    values = [_label_str(v) for v in cells]
    if len(set(values)) < len(values) or any(not v.strip() for v in values):
        return None
    if _header_key(column) in _ID_NAMES:
        return "it is headed like an id column and holds a different value on every row", True
    others = [c for c in df.columns if c != column]
    if column != df.columns[0] or len(values) < 3 or len(others) < 2:
        return None
    index = df.index  # a text file is read with a default RangeIndex: no ids in it
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    if not default or index.name is not None:
        return None  # the ids are in the index (a DataFrame indexed by item)
    answers = [
        {_label_str(v) for v in pd.unique(df[c].dropna().to_numpy(dtype=object))} for c in others
    ]
    if set(values) & set().union(*answers):
        return None  # some of its values are answers: a rater
    shared = any(a & b for i, a in enumerate(answers) for b in answers[i + 1 :])
    if not shared:
        return None
    return (
        "it holds a different value on every row, none of which any other column holds, "
        "while the other columns share answers"
    ), False


def _check_wide_layout(df: pd.DataFrame, item: Any, rater: Any, label: Any, desc: str) -> None:
    """Refuse a table read as wide (items x raters) that is not one: a long table (it has the
    rater and label columns of the long layout, which would be counted as answers, or its
    item ids repeat), an ``item`` other than the default that names no column (nor the
    index), or a column of ids that would be taken for a rater: 20 or more values, all
    different, or, when the table has no ``item`` column, a column that
    :func:`_looks_like_ids`."""
    if rater is not None and label is not None and rater != item and label != item:
        if rater in df.columns and label in df.columns:
            raise ValueError(
                f"the table {desc!r} read as wide (one column per rater) has the columns "
                f"{rater!r} and {label!r} of a long table (one row per answer), whose rater ids "
                "would be counted as answers; leave out "
                + say("format='wide'", "--layout wide")
                + " to read one row per answer"
            )
    named_index = item is not None and item == df.index.name
    if item != DEFAULT_ITEM and item not in df.columns and not named_index:
        raise ValueError(
            f"item column {item!r} is not in the wide table {desc!r}; the columns present are "
            f"{list(df.columns)!r}: {reader_option('item')} or leave it out if the index holds "
            "the item ids (a file's rows are then numbered from 0)" + _first_line_hint(df)
        )
    _check_wide_ids(df, item, desc)
    for column in df.columns:
        if column == item:
            continue
        values = df[column].dropna()
        if len(values) >= 20 and values.nunique() == len(values):
            fix = say(f"item={column!r}", f"--item {_quote(str(column))}")
            raise ValueError(
                f"column {column!r} of the wide table {desc!r} holds {len(values)} different "
                "values, one per row, like ids rather than one rater's answers; if it holds the "
                f"item ids pass {fix}, else remove it"
            )
    if item in df.columns:
        return
    for column in df.columns:
        found = _looks_like_ids(df, column)
        if found is not None:
            why, renamable = found
            fix = say(f"item={column!r}", f"--item {_quote(str(column))}")
            named = say("item=", "--item")
            raise ValueError(
                f"column {column!r} of the wide table {desc!r} looks like the item ids, not one "
                f"rater's answers: {why}; if it holds the item ids pass {fix}, else give the "
                + (
                    "table a column of item ids and pass its name (or rename the column)"
                    if renamable
                    else f"table a column of item ids and pass its name with {named}"
                )
            )


def _check_wide_ids(df: pd.DataFrame, item: Any, desc: str) -> None:
    """Refuse a wide table whose item ids (the ``item`` column, else the index) repeat: a wide
    table has one row per item, and repeated ids are the clearest sign of a long table (one
    row per answer) read as wide, whose rater and label columns would be counted as raters'
    answers."""
    import pandas as pd

    # the rater names are the header's other cells: 1 and "1" would be two raters
    raters = df.columns[np.asarray(df.columns != item)] if item in df.columns else df.columns
    where = "header (one column per rater)"
    refuse_alike_ids(raters, f"the {where} of {desc!r}", "frame.columns", "rater")
    if item in df.columns:
        ids = df[item]
        where, column = f"item column {item!r}", f"frame[{item!r}]"
        if isinstance(ids, pd.DataFrame):
            return  # a column named twice: the reader says so
    else:
        ids = df.index.to_series()
        where, column = "index", "frame.index"
    try:
        repeated = ids[ids.duplicated() & ids.notna()]
    except TypeError:  # cells pandas cannot hash: the reader says so
        return
    if len(repeated) == 0:
        then = " and one row to each item"  # a wide table has one row per item
        refuse_alike_ids(pd.unique(ids.dropna()), f"the {where} of {desc!r}", column, then=then)
        return
    first = [v.item() if isinstance(v, np.generic) else v for v in pd.unique(repeated)]
    layout = say(
        "pass format='long' with item=, rater= and label= naming its columns",
        "pass --layout long with --item, --rater and --label naming its columns",
    )
    raise ValueError(
        f"the {where} of the wide table {desc!r} must hold one id per row (a wide table has "
        f"one row per item, one column per rater), but the ids {_show(first)} "
        f"repeat; it looks like a long table (one row per answer): {layout}"
    )


def _check_wide_header(df: pd.DataFrame, item: Any, desc: str) -> None:
    """Refuse (or warn about) a wide table whose rater names are answers: the first line of a
    file without a header line, read as the header, which would silently lose that item.

    Refused when every rater name is an answer label and some are blank or repeated (pandas'
    ``Unnamed: 3`` and ``pos.1``), which a header line of rater names never is; a warning when
    the names are all labels but look like a header otherwise (raters numbered like labels).
    """
    import pandas as pd

    table = df.drop(columns=[item]) if item in df.columns else df
    names = list(table.columns)
    if not names or not all(isinstance(c, str) for c in names):
        return  # positions (header=None) or a frame built in Python with other labels
    named = [c for c in names if not _UNNAMED.match(c)]
    if not named:
        return
    cells = pd.unique(table.to_numpy(dtype=object).ravel())
    labels = {_label_str(v) for v in cells if not pd.isna(v) and _label_str(v).strip()}

    def base(name: str) -> str:
        m = _MANGLED.match(name)
        return m["base"] if m and m["base"] in names else name

    if not all(c in labels or base(c) in labels for c in named):
        return
    blank = len(named) < len(names)
    repeated = any(base(c) != c for c in named)
    shown = _show(base(c) for c in named)
    fix = (
        say("pass header=None", "pass --no-header")
        if desc != "DataFrame"
        else ("read the file with pandas.read_csv(..., header=None)")
    )
    fix += (
        " (items are then numbered by row from 0, or give the id column's 0-based position "
        + say("item=<position>", "--item <position>")
        + "), or give the table a header line of rater names"
    )
    if blank or repeated:
        what = " and some are blank" if blank else " and some repeat"
        raise ValueError(
            f"the header of the wide table {desc!r} looks like answers, not rater names: its "
            f"cells {shown} are answer labels{what}; reading that line as the header would "
            f"drop its item's answers: {fix}"
        )
    warnings.warn(
        f"the rater names {shown} of the wide table {desc!r} are all answer labels; if its "
        f"first line holds answers rather than rater names, that item is lost: {fix}",
        UserWarning,
        stacklevel=3,
    )


def _short_float(dtype: Any) -> np.dtype | None:
    """The numpy dtype of a column of floats of less than 64 bits (float32, float16; also
    pandas' nullable ``Float32`` and a categorical of such floats), whose cells a label
    must take at their own precision; None for other columns."""
    floats = _float_dtype(dtype)
    return floats if floats is not None and floats.itemsize < 8 else None


def _wide_to_long(df: pd.DataFrame, item: Any) -> pd.DataFrame:
    """Melt a wide item x rater table (blank = not rated) to columns item, rater, label."""
    import pandas as pd

    if item in df.columns:
        ids = df[item].to_numpy()
        table = df.drop(columns=[item])
    else:
        ids = df.index.to_numpy()
        table = df
    if table.shape[1] == 0:
        raise ValueError(
            "a wide table must have one column per rater besides the item column, but the "
            f"data have only the columns {list(df.columns)!r}"
        )
    n, m = table.shape
    cells = table.to_numpy(dtype=object)  # floats as Python floats (float64)
    short = {j: _short_float(table.dtypes.iloc[j]) for j in range(m)}
    short = {j: dtype for j, dtype in short.items() if dtype is not None}
    if short:
        cells = cells.copy()  # (a read-only view where pandas can give one)
        for j, dtype in short.items():  # float32 scalars, written at their own precision
            values = table.iloc[:, j].to_numpy(dtype=dtype, na_value=np.nan)
            column = np.array(list(values), dtype=object)
            column[np.isnan(values)] = None
            cells[:, j] = column
    out = pd.DataFrame(
        {
            "item": np.repeat(ids, m),
            "rater": np.tile(np.asarray(table.columns, dtype=object), n),
            "label": cells.ravel(),
        }
    )
    note = df.attrs.get(_READ_NOTE)
    if note is not None:  # ids as written in a text file (the header check is the wide one's)
        out.attrs[_READ_NOTE] = {**note, "headerless": False, "duplicates": {}}
    return out


def _counts_array(parsed: _Parsed, source: str, layout: str) -> xr.DataArray:
    import xarray as xr

    n, k = len(parsed.items), len(parsed.categories)
    counts = np.bincount(parsed.item_codes * k + parsed.label_codes, minlength=n * k)
    counts = counts.reshape(n, k).astype(np.int64)
    empty = counts.sum(axis=1) == 0
    if np.any(empty):
        raise _empty_items_error(
            parsed.items, empty, f"left after dropping {parsed.n_dropped} missing label(s)"
        )
    return xr.DataArray(
        counts,
        dims=("item", "category"),
        coords={"item": parsed.items, "category": np.array(parsed.categories, dtype=object)},
        name="counts",
        attrs={
            "cant_solve": parsed.cant_solve,
            "n_dropped": parsed.n_dropped,
            "source": source,
            "n_raters": parsed.n_raters,
            "format": layout,
        },
    )
