"""Reading annotations and turning them into per-item category counts.

Every source ends up as the same labelled count array (``item`` x ``category``): long
tables (one row per answer: pandas frames, CSV, TSV or Parquet files), wide item x rater
tables with blanks, and ready-made count matrices (numpy, pandas, xarray, ``.npy`` files,
zarr stores).

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

import contextlib
import numbers
import re
import shlex
import warnings
from collections import Counter
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl._checks import check_counts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["command_line_messages", "example_path", "read_annotations", "read_long"]

#: Table layouts understood by ``format=``.
LAYOUTS = ("long", "wide", "counts")
#: File types understood by ``format=`` (otherwise taken from the file suffix).
FILE_TYPES = ("csv", "tsv", "parquet", "npy", "zarr")
#: File types read as text by :func:`pandas.read_csv`; only they take ``sep=``,
#: ``comment=`` and ``header=``.
TEXT_TYPES = ("csv", "tsv")
#: File types that hold a count matrix (items x categories), not a table of answers.
COUNT_TYPES = ("npy", "zarr")

_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
    ".zarr": "zarr",
}
#: Reader options of text files, with their ``ambppl`` command-line spelling.
_TEXT_OPTIONS = {
    "sep": "--sep",
    "delimiter": "--sep",
    "comment": "--comment",
    "header": "--no-header",
    "names": None,
    "skiprows": None,
}
_UNNAMED = re.compile(r"^Unnamed: \d+$")  # pandas' name for a blank header cell
_MANGLED = re.compile(r"^(?P<base>.+)\.\d+$")  # pandas' name for a repeated header cell

#: True while :func:`command_line_messages` is active: messages name ``--options``.
_COMMAND_LINE: ContextVar[bool] = ContextVar("ambppl_data_command_line", default=False)
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


@contextlib.contextmanager
def command_line_messages() -> Iterator[None]:
    """Within the block, error messages and warnings of this module name the options of the
    ``ambppl`` command (``--item``, ``--format tsv``, ``--no-header``) instead of the Python
    keywords (``item=``, ``format='tsv'``, ``header=None``).

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager (thread- and task-safe: a :class:`contextvars.ContextVar`).

    Notes
    -----
    :mod:`ambppl.cli` reads every annotations file inside this block, so that a mistake on
    the command line is answered with the option that fixes it.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": [1], "label": ["a"]})
    >>> with command_line_messages():
    ...     read_annotations(df)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: rater column 'worker' is not in the data; ... pass --rater <one of them> ...
    """
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def _say(python: str, command_line: str) -> str:
    """The fix in the caller's words: a Python keyword, or the ``ambppl`` command's option."""
    return command_line if _COMMAND_LINE.get() else python


def _quote(text: str) -> str:
    """``text`` as typed in a shell."""
    return shlex.quote(text)


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
            leave_out = _say("pass cant_solve=None", "leave out --cant-solve")
            raise ValueError(
                f"{_say('cant_solve', '--cant-solve')} must be a label that occurs in the data, "
                f"but {cant_solve!r} does not; the labels present are {sorted(found)!r} "
                f"({leave_out} if the task had no can't-solve answer)"
            )
        order = [c for c in order if c != cs] + [cs]
    if len(order) < 2:
        fix = _say(
            "pass categories=[...] to list the answers nobody gave",
            "check that --label names the column of answers",
        )
        raise ValueError(
            f"the annotations must have at least 2 categories, but only {order!r} occurs; {fix}"
        )
    return order, cs


def _check_column(df: pd.DataFrame, name: Any, arg: str, hint: str = "") -> None:
    if name not in df.columns:
        fix = _say(f"{arg}=<one of them>", f"--{arg} <one of them>")
        raise ValueError(
            f"{arg} column {name!r} is not in the data; the columns present are "
            f"{list(df.columns)!r}: pass {fix}{hint}{_first_line_hint(df)}"
        )


def _is_number_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _first_line_hint(df: pd.DataFrame) -> str:
    """A hint when the column names of a table read from a file look like a comment line or
    like data (a file without a header line); empty otherwise."""
    names = list(df.columns)
    if not names or not all(isinstance(c, str) for c in names):
        return ""  # header=None gave positions, or the table was built in Python
    first = names[0].lstrip()
    if first[:1] in ("#", "%"):
        char = first[0]
        return (
            "; the first line looks like a comment: pass "
            + _say(f"comment={char!r}", f"--comment {_quote(char)}")
        )
    bases = [m["base"] if (m := _MANGLED.match(c)) and m["base"] in names else c for c in names]
    head = df.head(1000)
    as_data = all(_is_number_text(b) for b in bases) or any(
        b in {_label_str(v) for v in head[c].dropna().unique()}
        for b, c in zip(bases, names, strict=True)
    )
    if not as_data:
        return ""
    positions = _say("item=0, rater=1, label=2", "--item 0 --rater 1 --label 2")
    return (
        "; the first line looks like data, not column names: pass "
        + _say("header=None", "--no-header")
        + f" and give the columns by 0-based position (e.g. {positions}, in the file's order)"
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


def _file_type(path: Path, ftype: str | None, read_kwargs: dict[str, Any] | None = None) -> str:
    if ftype is not None:
        return ftype
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in _SUFFIXES:
        if read_kwargs and ("sep" in read_kwargs or "delimiter" in read_kwargs):
            return "csv"  # a separator says: text (e.g. a tab-separated .txt)
        if path.is_dir() and _is_zarr_store(path):
            return "zarr"
        choices = _say(
            f"format= one of {', '.join(repr(v) for v in FILE_TYPES)}",
            f"--format {'|'.join(FILE_TYPES)}",
        )
        raise ValueError(
            f"format cannot be told from the file suffix {suffix or '(none)'!r} of "
            f"{path.name!r}; name the file *.csv, *.tsv, *.parquet, *.npy or *.zarr, or pass "
            f"{choices}{_sniff_hint(path)}"
        )
    return _SUFFIXES[suffix]


def _is_zarr_store(path: Path) -> bool:
    """A folder with zarr metadata (format 3 or 2)."""
    return any((path / name).is_file() for name in ("zarr.json", ".zgroup", ".zarray"))


def _head_lines(path: Path, n_bytes: int = 8192) -> list[str]:
    """The first non-empty lines of a text file (empty for binary or unreadable files)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(n_bytes)
    except OSError:
        return []
    if b"\x00" in head:
        return []
    text = head.decode("utf-8", errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[:-1] if len(head) == n_bytes and len(lines) > 1 else lines


def _sniff_hint(path: Path, ftype: str | None = None) -> str:
    """What the first lines of a text file suggest: its separator (unless it is ``ftype``'s),
    comment lines, no header line."""
    lines = _head_lines(path)
    if not lines:
        return ""
    hints = []
    comments = [line for line in lines if line.lstrip()[:1] in ("#", "%")]
    data = [line for line in lines if line not in comments]
    if comments and lines[0] in comments:
        char = lines[0].lstrip()[0]
        fix = _say(f"comment={char!r}", f"--comment {_quote(char)}")
        hints.append(f"it starts with comment lines: pass {fix}")
    if data:
        sep = "\t" if "\t" in data[0] else "," if "," in data[0] else None
        if sep is not None:
            kind = "tab-separated" if sep == "\t" else "comma-separated"
            seen = "tsv" if sep == "\t" else "csv"
            if seen != ftype:
                fix = _say(f"format={seen!r}", f"--format {seen}")
                hints.append(f"it looks {kind}: pass {fix}")
            fields = [f.strip().strip('"') for f in data[0].split(sep)]
            if all(_is_number_text(f) for f in fields if f):
                hints.append(
                    "its first line looks like data, not column names: pass "
                    + _say("header=None", "--no-header")
                    + " and the columns' 0-based positions ("
                    + _say("item=0, rater=1, label=2", "--item 0 --rater 1 --label 2")
                    + ", in the file's order)"
                )
    return "; " + "; ".join(hints) if hints else ""


def _read_file(path: Path, ftype: str, read_kwargs: dict[str, Any]) -> Any:
    """Read one file into a DataFrame (an ndarray for ``.npy``, a DataArray or ndarray for a
    zarr store) with clear errors."""
    import pandas as pd

    if ftype == "zarr":
        if not path.exists():
            raise FileNotFoundError(f"zarr store {str(path)!r} does not exist")
    elif not path.is_file():
        raise FileNotFoundError(f"source file {str(path)!r} does not exist or is not a file")
    text_only = [k for k in read_kwargs if k in _TEXT_OPTIONS]
    if ftype not in TEXT_TYPES and text_only:
        named = ", ".join(_say(f"{k}=", _TEXT_OPTIONS[k] or f"{k}=") for k in text_only)
        one = len(text_only) == 1
        as_text = _say("format='csv'", "--format csv")
        raise ValueError(
            f"{named} appl{'ies' if one else 'y'} to text files (CSV, TSV), but {path.name!r} "
            f"is read as {ftype.upper()}; leave {'it' if one else 'them'} out, or pass "
            f"{as_text} if the file is text"
        )
    kwargs = dict(read_kwargs)
    comment = kwargs.get("comment")
    if comment is not None and not (isinstance(comment, str) and len(comment) == 1):
        raise ValueError(
            f"{_say('comment', '--comment')} must be one character such as '#', but got "
            f"{comment!r}"
        )
    sep = kwargs.get("sep", kwargs.get("delimiter"))
    if isinstance(sep, str) and len(sep) > 1 and sep != r"\s+":
        kwargs.setdefault("engine", "python")  # a regular expression: pandas' python engine
    try:
        if ftype == "zarr":
            return _read_zarr(path, kwargs)
        if ftype == "csv":
            return pd.read_csv(path, **kwargs)
        if ftype == "tsv":
            return pd.read_csv(path, **{"sep": "\t", **kwargs})
        if ftype == "parquet":
            return pd.read_parquet(path, **kwargs)
        return np.load(path, allow_pickle=False, **kwargs)
    except TypeError as err:  # an option the reader does not take
        reader = {"npy": "numpy.load", "parquet": "pandas.read_parquet"}.get(ftype)
        reader = reader or ("xarray.open_zarr" if ftype == "zarr" else "pandas.read_csv")
        raise TypeError(
            f"reader options {sorted(read_kwargs)!r} must be options of {reader} for "
            f"{path.name!r} ({err})"
        ) from err
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as err:
        hint = {
            "csv": "check that every row has the same number of fields and the delimiter ("
            + _say("pass format='tsv'", "pass --format tsv")
            + " for tab-separated files)",
            "tsv": "check that every row has the same number of tab-separated fields",
            "parquet": "check that it is a Parquet file (or "
            + _say("pass format='csv'", "pass --format csv")
            + " for text)",
            "npy": "check that it is a numpy .npy file saved with numpy.save",
            "zarr": "check that it is a zarr store (a folder written by xarray's to_zarr or "
            "by zarr) holding a 2-D count array",
        }[ftype]
        if ftype in TEXT_TYPES and not read_kwargs.get("comment"):
            hint += _sniff_hint(path, None if "sep" in read_kwargs else ftype)
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(
            f"could not read {path.name!r} as {ftype.upper()} ({msg}); {hint}"
        ) from err


def _read_zarr(path: Path, read_kwargs: dict[str, Any]) -> Any:
    """The count array of a zarr store: a DataArray (with its coords and attrs) when xarray
    wrote the store, else a plain numpy array. ``read_kwargs`` go to
    :func:`xarray.open_zarr`."""
    try:
        import zarr
    except ImportError as err:  # pragma: no cover - zarr is in the test extras
        raise ImportError(
            "reading a zarr store needs the zarr package: pip install 'ambppl[zarr]' (or zarr)"
        ) from err
    import xarray as xr

    node = zarr.open(str(path), mode="r")
    if isinstance(node, zarr.Array):
        return np.asarray(node[...])
    arrays = {name: arr for name, arr in node.arrays()}
    two_d = sorted(name for name, arr in arrays.items() if arr.ndim == 2)
    name = "counts" if "counts" in arrays else (two_d[0] if len(two_d) == 1 else None)
    if name is None:
        raise ValueError(
            f"the zarr store {path.name!r} must hold one 2-D count array (items x categories), "
            f"named 'counts' if there are several, but it holds {sorted(arrays)!r}"
        )
    consolidated = getattr(node.metadata, "consolidated_metadata", None) is not None
    try:
        dataset = xr.open_zarr(path, **{"consolidated": consolidated, **read_kwargs})
    except (ValueError, KeyError):  # arrays without xarray's dimension names
        return np.asarray(arrays[name][...])
    return dataset[name].load()


def _load(source: Any, format: Any, read_kwargs: dict[str, Any]) -> tuple[Any, str, str]:
    """Return (object, layout, source description)."""
    import pandas as pd
    import xarray as xr

    layout, ftype = _parse_format(format)
    if isinstance(source, str | Path):
        path = Path(source)
        ftype = _file_type(path, ftype, read_kwargs)
        if ftype in COUNT_TYPES and layout not in (None, "counts"):
            given = _say(f"format={format!r}", f"--layout {layout}")
            fix = _say("pass format='counts' or leave format out", "leave out --layout")
            kind = ".npy file" if ftype == "npy" else "zarr store"
            raise ValueError(
                f"{given} does not fit a {kind}, which holds a count matrix; {fix}"
            )
        obj = _read_file(path, ftype, read_kwargs)
        desc = path.name
        if ftype in COUNT_TYPES:
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
        f"path to a .csv/.tsv/.parquet/.npy file or .zarr store, but got "
        f"{type(source).__name__}"
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
        no_rater = _say("rater=None", "--no-rater")
        _check_column(df, rater, "rater", f" (or {no_rater} if the data have no rater ids)")

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
    fix = _say("pass header=None", "pass --no-header") if desc != "DataFrame" else (
        "read the file with pandas.read_csv(..., header=None)"
    )
    fix += (
        " (items are then numbered by row from 0, or give the id column's 0-based position "
        + _say("item=<position>", "--item <position>")
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
        ``worker``, ``label`` by default); 0-based positions for a file read with
        ``header=None``. ``rater=None``: the data have no rater ids.
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
        Passed to :func:`pandas.read_csv` / :func:`pandas.read_parquet` for paths, e.g.
        ``sep=``, ``comment="#"`` and ``header=None`` for text files, as in
        :func:`read_annotations`.

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
        For an unsupported ``source`` type or reader option.
    FileNotFoundError
        When a path does not exist.

    Warns
    -----
    UserWarning
        As :func:`read_annotations`, for a wide table whose rater names are all answer labels.

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
        _check_wide_header(obj, item, desc)
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
        ``.parquet`` (either table layout) or ``.npy`` (counts) file, or a ``.zarr`` store
        (a folder) holding a count array.
    item, rater, label : column name
        Columns of a long table holding the item id, the rater id and the answer (crowd-kit's
        ``task``, ``worker``, ``label`` by default); 0-based positions for a file read with
        ``header=None``. ``rater=None``: no rater ids. For wide tables and count frames
        ``item`` names the id column (the index, or the row number, is used if absent).
    cant_solve : label, optional
        The label of the "can't solve" answer (e.g. ``"I can't tell"``); it must occur in the
        data or in ``categories``. It becomes the last category. For a DataArray that
        already carries ``attrs["cant_solve"]`` that label is used by default.
    categories : list of labels, optional
        The category order wanted; may include labels nobody gave (zero counts). For a
        numpy count matrix it names the columns in order (default ``"0"``, ``"1"``, ...).
    format : str, optional
        Layout ``"long"`` (default for tables), ``"wide"`` or ``"counts"``; file type
        ``"csv"``, ``"tsv"``, ``"parquet"``, ``"npy"`` or ``"zarr"`` (default: from the
        suffix, also behind ``.gz``/``.zip`` etc.; a folder with zarr metadata is zarr; a
        ``sep=`` makes other suffixes such as ``.txt`` text); or both joined by ``+``, e.g.
        ``"wide+tsv"``.
    **read_kwargs
        Passed to :func:`pandas.read_csv`, :func:`pandas.read_parquet`,
        :func:`numpy.load` or :func:`xarray.open_zarr` for paths. For text files (CSV, TSV
        only): ``sep=`` (one character, or a regular expression such as ``r"\\s+"``),
        ``comment="#"`` (one character: lines starting with it, and the rest of a line after
        it, are skipped) and ``header=None`` (the first line is data; ``item``, ``rater`` and
        ``label`` are then positions).

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
        unknown ``format`` or file suffix; a wide table whose header looks like answers
        (every rater name an answer label, some blank or repeated: the first line of a file
        without a header line), which would silently lose that line's item; text options
        (``sep``, ``comment``, ``header``) for a Parquet, ``.npy`` or zarr source; a
        ``comment`` that is not one character; a zarr store without one 2-D array (or one
        named ``counts``).
    TypeError
        For an unsupported ``source`` type, non-numeric counts, or a reader option the
        reader does not take.
    FileNotFoundError
        When a path does not exist.
    ImportError
        For a zarr store when the ``zarr`` package is not installed.

    Warns
    -----
    UserWarning
        For a wide table whose rater names are all answer labels but look like a header
        otherwise (raters numbered like the labels): if that line holds answers, pass
        ``header=None``.

    Notes
    -----
    Messages name the fix as a Python keyword (``header=None``); inside
    :func:`command_line_messages` as the ``ambppl`` command's option (``--no-header``).
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
        _check_wide_header(obj, item, desc)
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
