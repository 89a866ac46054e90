"""Reading annotations and turning them into per-item category counts.

Every source ends up as the same labelled count array (``item`` x ``category``): long
tables (one row per answer: pandas frames, CSV, TSV or Parquet files), wide item x rater
tables with blanks, and ready-made count matrices (numpy, pandas, xarray, ``.npy`` files).

Conventions (kept for every source):

* Items keep their original ids, in order of first appearance.
* Category labels become strings (``3`` and ``3.0`` both become ``"3"``; ``"007"`` stays
  ``"007"``). Their order is explicit and stable: ``categories=`` fixes it; otherwise labels
  read from long or wide tables are sorted (numerically when every label is a number, else
  as text) while count matrices keep their column order. The can't-solve label, if any, is
  always moved last, which is what ``cant_solve=-1`` in :mod:`ambppl.measures` expects.
* Repeated answers by one rater on one item are kept: each is one answer.
* Missing labels (NaN, None, empty or blank strings) are dropped and counted in
  ``attrs["n_dropped"]``; an item left with no answer at all is an error.

All work is vectorized (``pandas.factorize`` and one ``numpy.bincount`` over combined codes),
so millions of answers are counted in about a second.
"""

from __future__ import annotations

import numbers
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl._checks import check_counts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["example_path", "read_annotations", "read_long"]

#: Table layouts understood by ``format=``.
LAYOUTS = ("long", "wide", "counts")
#: File types understood by ``format=`` (otherwise taken from the file suffix).
FILE_TYPES = ("csv", "tsv", "parquet", "npy")

_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
}
_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
_SHOW = 5  # how many offending values an error message lists


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


# --------------------------------------------------------------------------- helpers


def _show(values: Any) -> str:
    """A short list of values for error messages."""
    values = list(values)
    head = ", ".join(repr(v) for v in values[:_SHOW])
    more = f", ... ({len(values)} in all)" if len(values) > _SHOW else ""
    return f"[{head}{more}]"


def _label_str(value: Any) -> str:
    """The string form of one label: numpy scalars unwrapped, whole floats as ints."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _check_categories(categories: Any) -> list[str] | None:
    """Validate ``categories=``: a list-like of at least 2 distinct labels, as strings."""
    if categories is None:
        return None
    if isinstance(categories, str | bytes) or not hasattr(categories, "__iter__"):
        raise TypeError(
            "categories must be a list of labels such as ['neg', 'pos', \"can't tell\"], "
            f"but got {categories!r}"
        )
    cats = [_label_str(c) for c in categories]
    dupes = sorted(c for c, n in Counter(cats).items() if n > 1)
    if dupes:
        raise ValueError(f"categories must be distinct labels, but {_show(dupes)} repeat")
    if len(cats) < 2:
        raise ValueError(
            f"categories must list at least 2 labels (ambiguity needs a choice), but got {cats!r}"
        )
    return cats


def _order(
    found: list[str],
    raw: dict[str, Any],
    categories: list[str] | None,
    cant_solve: Any,
    *,
    sort: bool,
) -> tuple[list[str], str | None]:
    """Final category order (can't-solve last) and the can't-solve label as a string."""
    if categories is not None:
        extra = [c for c in found if c not in categories]
        if extra:
            raise ValueError(
                f"labels {_show(extra)} occur in the data but are not in categories="
                f"{categories!r}; add them to categories or remove those answers"
            )
        order = list(categories)
    elif sort:
        values = [raw.get(c, c) for c in found]
        if all(_is_number(v) for v in values):
            order = [c for _, c in sorted(zip(values, found, strict=True))]
        else:
            order = sorted(found)
    else:
        order = list(found)
    cs = None
    if cant_solve is not None:
        cs = _label_str(cant_solve)
        if cs not in order:
            raise ValueError(
                f"cant_solve must be a label that occurs in the data, but {cant_solve!r} does "
                f"not; the labels present are {sorted(found)!r} (pass cant_solve=None if the "
                "task had no can't-solve answer)"
            )
        order = [c for c in order if c != cs] + [cs]
    if len(order) < 2:
        raise ValueError(
            f"the annotations must have at least 2 categories, but only {order!r} occurs; "
            "pass categories=[...] to list the answers nobody gave"
        )
    return order, cs


def _check_column(df: pd.DataFrame, name: Any, arg: str, hint: str = "") -> None:
    if name not in df.columns:
        raise ValueError(
            f"{arg} column {name!r} is not in the data; the columns present are "
            f"{list(df.columns)!r}: pass {arg}=<one of them>{hint}"
        )


def _empty_items_error(items: np.ndarray, empty: np.ndarray, why: str) -> ValueError:
    ids = items[empty].tolist()
    return ValueError(
        f"every item must have at least one answer, but {len(ids)} item(s) {_show(ids)} "
        f"have none {why}; remove those items or supply their answers"
    )


def _parse_format(format: Any) -> tuple[str | None, str | None]:
    """Split ``format=`` into (layout, file type); either part may be None."""
    if format is None:
        return None, None
    valid = (*LAYOUTS, *FILE_TYPES)
    if not isinstance(format, str):
        raise TypeError(f"format must be a string such as 'csv' or 'wide+tsv', but got {format!r}")
    parts = [p.strip().lower() for p in format.split("+")]
    layout = [p for p in parts if p in LAYOUTS]
    ftype = [p for p in parts if p in FILE_TYPES]
    if len(layout) > 1 or len(ftype) > 1 or len(layout) + len(ftype) != len(parts):
        raise ValueError(
            f"format must be one of {', '.join(repr(v) for v in valid)} or a layout and a "
            f"file type joined by '+' (e.g. 'wide+tsv'), but got {format!r}"
        )
    return (layout[0] if layout else None), (ftype[0] if ftype else None)


def _file_type(path: Path, ftype: str | None) -> str:
    if ftype is not None:
        return ftype
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in _SUFFIXES:
        raise ValueError(
            f"format cannot be told from the file suffix {suffix or '(none)'!r} of "
            f"{path.name!r}; name the file *.csv, *.tsv, *.parquet or *.npy, or pass "
            f"format= one of {', '.join(repr(v) for v in FILE_TYPES)}"
        )
    return _SUFFIXES[suffix]


def _read_file(path: Path, ftype: str, read_kwargs: dict[str, Any]) -> Any:
    """Read one file into a DataFrame (or an ndarray for ``.npy``) with clear errors."""
    import pandas as pd

    if not path.is_file():
        raise FileNotFoundError(f"source file {str(path)!r} does not exist or is not a file")
    try:
        if ftype == "csv":
            return pd.read_csv(path, **read_kwargs)
        if ftype == "tsv":
            return pd.read_csv(path, **{"sep": "\t", **read_kwargs})
        if ftype == "parquet":
            return pd.read_parquet(path, **read_kwargs)
        return np.load(path, allow_pickle=False, **read_kwargs)
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as err:
        hint = {
            "csv": "check that every row has the same number of fields and the delimiter "
            "(pass format='tsv' for tab-separated files)",
            "tsv": "check that every row has the same number of tab-separated fields",
            "parquet": "check that it is a Parquet file (or pass format='csv' for text)",
            "npy": "check that it is a numpy .npy file saved with numpy.save",
        }[ftype]
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(
            f"could not read {path.name!r} as {ftype.upper()} ({msg}); {hint}"
        ) from err


def _load(source: Any, format: Any, read_kwargs: dict[str, Any]) -> tuple[Any, str, str]:
    """Return (object, layout, source description)."""
    import pandas as pd
    import xarray as xr

    layout, ftype = _parse_format(format)
    if isinstance(source, str | Path):
        path = Path(source)
        ftype = _file_type(path, ftype)
        obj = _read_file(path, ftype, read_kwargs)
        desc = path.name
        if ftype == "npy":
            if layout not in (None, "counts"):
                raise ValueError(
                    f"format={format!r} does not fit a .npy file, which holds a count matrix; "
                    "pass format='counts' or leave format out"
                )
            return obj, "counts", desc
        return obj, layout or "long", desc
    if read_kwargs:
        raise TypeError(
            f"reader options {sorted(read_kwargs)!r} apply to file paths only, but the source "
            f"is a {type(source).__name__}"
        )
    if ftype is not None:
        raise ValueError(
            f"format={format!r} names a file type, but the source is a "
            f"{type(source).__name__}, not a path; pass format= 'long', 'wide' or 'counts'"
        )
    if isinstance(source, pd.DataFrame):
        return source, layout or "long", "DataFrame"
    if isinstance(source, np.ndarray | xr.DataArray):
        if layout not in (None, "counts"):
            raise ValueError(
                f"format={format!r} does not fit a {type(source).__name__}, which is read as a "
                "count matrix (items x categories); pass format='counts' or leave format out, "
                "or wrap a table of labels in a pandas.DataFrame"
            )
        return source, "counts", type(source).__name__
    raise TypeError(
        "source must be a pandas.DataFrame, a numpy array or xarray.DataArray of counts, or a "
        f"path to a .csv/.tsv/.parquet/.npy file, but got {type(source).__name__}"
    )


# --------------------------------------------------------------------------- parsing


def _parse_long(
    df: pd.DataFrame,
    item: Any,
    rater: Any,
    label: Any,
    cant_solve: Any,
    categories: list[str] | None,
) -> _Parsed:
    """Factorize items and labels of a long table (one row per answer)."""
    import pandas as pd

    _check_column(df, item, "item")
    _check_column(df, label, "label")
    if rater is not None:
        _check_column(df, rater, "rater", " (or rater=None if the data have no rater ids)")

    codes, uniques = pd.factorize(df[label], use_na_sentinel=True)
    raw_uniques = list(uniques)
    strs = [_label_str(u) for u in raw_uniques]
    blank = np.array([s.strip() == "" for s in strs] + [True], dtype=bool)  # last: NaN (-1)
    missing = blank[codes]
    kept = ~missing
    n_dropped = int(missing.sum())

    str_codes, str_uniques = pd.factorize(np.array(strs, dtype=object))
    found = [s for s in str_uniques.tolist() if s.strip() != ""]
    raw = {}
    for s, r in zip(strs, raw_uniques, strict=True):
        raw.setdefault(s, r)
    order, cs = _order(found, raw, categories, cant_solve, sort=True)
    position = {c: i for i, c in enumerate(order)}
    remap = np.array([position.get(s, -1) for s in str_uniques.tolist()], dtype=np.int64)
    label_codes = remap[str_codes[codes[kept]]]

    item_codes_all, items = pd.factorize(df[item], use_na_sentinel=True)
    item_codes = item_codes_all[kept].astype(np.int64)
    if np.any(item_codes < 0):
        first = int(np.flatnonzero(kept)[np.argmax(item_codes < 0)])
        raise ValueError(
            f"item column {item!r} must have an id on every answer, but "
            f"{int(np.sum(item_codes < 0))} answer(s) have none (first at row {first}); "
            "fill in or drop those rows"
        )
    n_raters = None
    if rater is not None:
        n_raters = int(df[rater][kept].nunique(dropna=True))
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
    return pd.DataFrame(
        {
            "item": np.repeat(ids, m),
            "rater": np.tile(np.asarray(table.columns, dtype=object), n),
            "label": table.to_numpy(dtype=object).ravel(),
        }
    )


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


def _from_counts(
    obj: Any, item: Any, cant_solve: Any, categories: list[str] | None, source: str
) -> xr.DataArray:
    """Check a count matrix and label it."""
    import pandas as pd
    import xarray as xr

    attrs: dict[str, Any] = {"n_dropped": 0, "n_raters": None}
    if isinstance(obj, xr.DataArray):
        if obj.ndim != 2:
            raise ValueError(
                f"counts must be 2-D (item x category), but got dims {obj.dims} "
                f"of shape {obj.shape}"
            )
        if set(obj.dims) == {"item", "category"}:
            obj = obj.transpose("item", "category")
        da_item, da_cat = obj.dims
        values = obj.values
        ids = obj[da_item].values if da_item in obj.coords else np.arange(obj.shape[0])
        labels = obj[da_cat].values.tolist() if da_cat in obj.coords else None
        for key in ("n_dropped", "n_raters", "source"):
            if obj.attrs.get(key) is not None:
                attrs[key] = obj.attrs[key]
        if cant_solve is None:
            cant_solve = obj.attrs.get("cant_solve")
        source = attrs.pop("source", source)
    elif isinstance(obj, pd.DataFrame):
        if item in obj.columns:
            obj = obj.set_index(item)
        ids = obj.index.to_numpy()
        labels = obj.columns.tolist()
        values = obj.to_numpy()
    else:
        values = np.asarray(obj)
        if values.ndim != 2:
            raise ValueError(
                f"counts must be a 2-D array (items x categories), but got shape {values.shape}"
            )
        ids = np.arange(values.shape[0])
        labels = None
    arr = check_counts(values, "counts")
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
    order, cs = _order(found, {}, categories, cant_solve, sort=False)
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


# --------------------------------------------------------------------------- public API


def read_long(
    source: Any,
    *,
    item: Any = "task",
    rater: Any = "worker",
    label: Any = "label",
    cant_solve: Any = None,
    categories: Any = None,
    format: str | None = None,
    **read_kwargs: Any,
) -> pd.DataFrame:
    """Read annotations into a canonical long table (one row per kept answer).

    Parameters
    ----------
    source : pandas.DataFrame, str or pathlib.Path
        A long table (one row per answer), a wide item x rater table (``format="wide"``),
        or a path to a CSV, TSV or Parquet file holding either.
    item, rater, label : column name
        Columns holding the item id, the rater id and the answer (crowd-kit's ``task``,
        ``worker``, ``label`` by default). ``rater=None``: the data have no rater ids.
        For wide tables ``item`` names the id column (the index is used when absent).
    cant_solve : label, optional
        The label of the "can't solve" answer; it must occur in the data (or in
        ``categories``). It becomes the last category.
    categories : list of labels, optional
        The categories in the order wanted (may include labels nobody gave).
    format : str, optional
        ``"long"`` (default), ``"wide"``, a file type ``"csv"``, ``"tsv"``, ``"parquet"``
        (default: from the file suffix), or both joined by ``+`` (``"wide+tsv"``).
    **read_kwargs
        Passed to :func:`pandas.read_csv` / :func:`pandas.read_parquet` for paths.

    Returns
    -------
    pandas.DataFrame
        Columns ``item`` (original ids), ``rater`` (original ids, or missing when
        ``rater=None``) and ``label`` (a :class:`pandas.Categorical` of strings in the
        category order); rows with a missing label are dropped. ``attrs`` holds
        ``cant_solve``, ``n_dropped``, ``source``, ``n_raters`` and ``format``.

    Raises
    ------
    ValueError
        For count matrices (they hold no answers), and for everything
        :func:`read_annotations` rejects.
    TypeError
        For an unsupported ``source`` type.
    FileNotFoundError
        When a path does not exist.

    Notes
    -----
    The rater column is kept for rater models; the ambiguity measures themselves need only
    the per-item counts (paper, Section "Model"), see :func:`read_annotations`.

    References
    ----------
    crowd-kit's long annotation format: https://github.com/Toloka/crowd-kit

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": [1, 1, 2, 2], "worker": ["a", "b", "a", "b"],
    ...                    "label": ["pos", "?", "neg", None]})
    >>> long = read_long(df, cant_solve="?")
    >>> long["label"].tolist(), list(long["label"].cat.categories), long.attrs["n_dropped"]
    (['pos', '?', 'neg'], ['neg', 'pos', '?'], 1)
    """
    import pandas as pd

    obj, layout, desc = _load(source, format, read_kwargs)
    if layout == "counts":
        raise ValueError(
            "a count matrix cannot be turned into one row per answer (which rater gave which "
            "answer is unknown); use read_annotations for counts"
        )
    cats = _check_categories(categories)
    if layout == "wide":
        obj = _wide_to_long(obj, item)
        item, rater, label = "item", "rater", "label"
    parsed = _parse_long(obj, item, rater, label, cant_solve, cats)
    _counts_array(parsed, desc, layout)  # same checks (e.g. empty items) as read_annotations
    rater_values = obj[rater].to_numpy()[parsed.kept] if rater is not None else pd.NA
    out = pd.DataFrame(
        {
            "item": parsed.items[parsed.item_codes],
            "rater": rater_values,
            "label": pd.Categorical.from_codes(parsed.label_codes, categories=parsed.categories),
        }
    )
    out.attrs = {
        "cant_solve": parsed.cant_solve,
        "n_dropped": parsed.n_dropped,
        "source": desc,
        "n_raters": parsed.n_raters,
        "format": layout,
    }
    return out


def read_annotations(
    source: Any,
    *,
    item: Any = "task",
    rater: Any = "worker",
    label: Any = "label",
    cant_solve: Any = None,
    categories: Any = None,
    format: str | None = None,
    **read_kwargs: Any,
) -> xr.DataArray:
    """Read annotations from any supported source into per-item category counts.

    Parameters
    ----------
    source : pandas.DataFrame, numpy.ndarray, xarray.DataArray, str or pathlib.Path
        A long table (one row per answer), a wide item x rater table (``format="wide"``),
        a count matrix (items x categories: a 2-D numpy array, an xarray DataArray, or a
        DataFrame with ``format="counts"``), or a path to a ``.csv``, ``.tsv``,
        ``.parquet`` (either table layout) or ``.npy`` (counts) file.
    item, rater, label : column name
        Columns of a long table holding the item id, the rater id and the answer (crowd-kit's
        ``task``, ``worker``, ``label`` by default). ``rater=None``: no rater ids. For wide
        tables and count frames ``item`` names the id column (the index is used if absent).
    cant_solve : label, optional
        The label of the "can't solve" answer (e.g. ``"I can't tell"``); it must occur in the
        data or in ``categories``. It becomes the last category. For a DataArray that
        already carries ``attrs["cant_solve"]`` that label is used by default.
    categories : list of labels, optional
        The category order wanted; may include labels nobody gave (zero counts). For a
        numpy count matrix it names the columns in order (default ``"0"``, ``"1"``, ...).
    format : str, optional
        Layout ``"long"`` (default for tables), ``"wide"`` or ``"counts"``; file type
        ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"npy"`` (default: from the suffix, also
        behind ``.gz``/``.zip`` etc.); or both joined by ``+``, e.g. ``"wide+tsv"``.
    **read_kwargs
        Passed to :func:`pandas.read_csv`, :func:`pandas.read_parquet` or
        :func:`numpy.load` for paths.

    Returns
    -------
    xarray.DataArray
        ``counts`` (int64) with dims ``("item", "category")``; coords ``item`` (ids in order
        of first appearance) and ``category`` (labels as strings, can't-solve last).
        ``attrs``: ``cant_solve`` (label or None), ``n_dropped`` (answers with a missing
        label dropped; blank cells for wide tables), ``source``, ``n_raters`` (None when
        unknown) and ``format`` (``"long"``, ``"wide"`` or ``"counts"``).

    Raises
    ------
    ValueError
        A column that is not in the data (the message lists the columns present); a
        ``cant_solve`` label absent from the data; labels missing from ``categories``; fewer
        than 2 categories; an item with no answers (all labels missing, or an all-zero row of
        counts); negative, fractional or non-finite counts; a file that does not parse; an
        unknown ``format`` or file suffix.
    TypeError
        For an unsupported ``source`` type or non-numeric counts.
    FileNotFoundError
        When a path does not exist.

    Notes
    -----
    The counts ``n_i`` are the sufficient statistic of the multinomial likelihood
    ``n_i ~ Multinomial(N_i, q_i)`` of the paper (Section "Model"); repeated answers by one
    rater on one item are kept as separate answers. Labels become strings so that the
    category coordinate has one type for every source; numeric labels are sorted
    numerically (``"2"`` before ``"10"``). Use ``counts["item"]`` for the item ids:
    ``counts.item`` is the DataArray method that returns a scalar.

    References
    ----------
    crowd-kit's long annotation format: https://github.com/Toloka/crowd-kit

    Examples
    --------
    >>> counts = read_annotations(example_path("weather_sentiment"), cant_solve="I can't tell")
    >>> dict(counts.sizes)
    {'item': 200, 'category': 5}
    >>> counts["category"].values[-1], int(counts.sum()), counts.attrs["n_raters"]
    ("I can't tell", 4000, 99)

    A count matrix (numpy) with the can't-solve answer in the first column:

    >>> import numpy as np
    >>> c = read_annotations(np.array([[1, 3, 0], [2, 0, 2]]), cant_solve=0)
    >>> c["category"].values.tolist(), c.values.tolist()
    (['1', '2', '0'], [[3, 0, 1], [0, 2, 2]])
    """
    obj, layout, desc = _load(source, format, read_kwargs)
    cats = _check_categories(categories)
    if layout == "counts":
        return _from_counts(obj, item, cant_solve, cats, desc)
    if layout == "wide":
        obj = _wide_to_long(obj, item)
        item, rater, label = "item", "rater", "label"
    parsed = _parse_long(obj, item, rater, label, cant_solve, cats)
    return _counts_array(parsed, desc, layout)


def example_path(name: str = "weather_sentiment") -> Path:
    """Path of a bundled example data set.

    Parameters
    ----------
    name : str
        The data set's name; ``"weather_sentiment"`` is bundled (200 tweets x 20 crowd
        labels, columns ``task, worker, label``, can't-solve label ``"I can't tell"``).

    Returns
    -------
    pathlib.Path
        The CSV file inside the installed package.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the bundled ones).

    Notes
    -----
    The origin and licence of each set are in ``ambppl/examples/README.md``.

    References
    ----------
    CrowdFlower "Data for Everyone", weather sentiment, via snorkel-team/snorkel
    ``tutorials/crowdsourcing/data/weather-non-agg-DFE.csv``.

    Examples
    --------
    >>> example_path("weather_sentiment").name
    'weather_sentiment.csv'
    """
    from importlib import resources

    folder = Path(str(resources.files("ambppl").joinpath("examples")))
    available = sorted(p.stem for p in folder.glob("*.csv"))
    if name not in available:
        raise ValueError(f"name must be one of {available!r}, but got {name!r}")
    return folder / f"{name}.csv"
