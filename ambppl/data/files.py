"""Reading one source into a table or an array, with messages that say what went wrong.

A path is read by the reader of its file type (:mod:`ambppl.data.formats` tells which):
text files by :func:`pandas.read_csv` with every cell as text (pyarrow's engine where the
options allow), Parquet by :func:`pandas.read_parquet`, ``.npy`` by :func:`numpy.load`
(no pickles) and zarr stores by zarr/xarray; frames and arrays pass through. What was seen of a
text file (read as text, without a header line, repeated header cells) is noted in the
frame's ``attrs`` for the checks of the table readers.
"""

from __future__ import annotations

import codecs
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.formats import (
    COUNT_TYPES,
    TEXT_TYPES,
    _file_type,
    _head_lines,
    _not_encoded,
    _parse_format,
    _sniff_hint,
    _text_options,
)
from ambppl.data.labels import _is_number_text, _label_str, _quote, _show
from ambppl.internal.messages import say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


#: Reader options of text files, with their ``ambppl`` command-line spelling.
_TEXT_OPTIONS = {
    "sep": "--sep",
    "delimiter": "--sep",
    "comment": "--comment",
    "header": "--no-header",
    "names": None,
    "skiprows": None,
    "encoding": "--encoding",
}
_MANGLED = re.compile(r"^(?P<base>.+)\.\d+$")  # pandas' name for a repeated header cell
#: Where :func:`_read_file` notes what it saw of a text file (``DataFrame.attrs``).
_READ_NOTE = "ambppl_read"


def _first_line_hint(df: pd.DataFrame) -> str:
    """A hint when the column names of a table read from a file look like a comment line or
    like data (a file without a header line); empty otherwise."""
    names = list(df.columns)
    if not names or not all(isinstance(c, str) for c in names):
        return ""  # header=None gave positions, or the table was built in Python
    first = names[0].lstrip()
    if first[:1] in ("#", "%"):
        char = first[0]
        return "; the first line looks like a comment: pass " + say(
            f"comment={char!r}", f"--comment {_quote(char)}"
        )
    bases = [m["base"] if (m := _MANGLED.match(c)) and m["base"] in names else c for c in names]
    head = df.head(1000)
    as_data = all(_is_number_text(b) for b in bases) or any(
        b in {_label_str(v) for v in head[c].dropna().unique()}
        for b, c in zip(bases, names, strict=True)
    )
    if not as_data:
        return ""
    positions = say("item=0, rater=1, label=2", "--item 0 --rater 1 --label 2")
    return (
        "; the first line looks like data, not column names: pass "
        + say("header=None", "--no-header")
        + f" and give the columns by 0-based position (e.g. {positions}, in the file's order)"
    )


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
        named = ", ".join(say(f"{k}=", _TEXT_OPTIONS[k] or f"{k}=") for k in text_only)
        one = len(text_only) == 1
        as_text = say("format='csv'", "--format csv")
        raise ValueError(
            f"{named} appl{'ies' if one else 'y'} to text files (CSV, TSV), but {path.name!r} "
            f"is read as {ftype.upper()}; leave {'it' if one else 'them'} out, or pass "
            f"{as_text} if the file is text"
        )
    kwargs = dict(read_kwargs)
    comment = kwargs.get("comment")
    if comment is not None and not (isinstance(comment, str) and len(comment) == 1):
        raise ValueError(
            f"{say('comment', '--comment')} must be one character such as '#', but got {comment!r}"
        )
    sep = kwargs.get("sep", kwargs.get("delimiter"))
    if isinstance(sep, str) and len(sep) > 1 and sep != r"\s+":
        kwargs.setdefault("engine", "python")  # a regular expression: pandas' python engine
    if ftype in TEXT_TYPES:
        encoding = kwargs.get("encoding")
        if encoding is not None:
            try:
                codecs.lookup(encoding)
            except (LookupError, TypeError):
                raise ValueError(
                    f"{say('encoding', '--encoding')} must be a text encoding such as 'utf-8', "
                    f"'latin-1' or 'utf-16', but got {encoding!r}"
                ) from None
        kwargs = _text_options(path, ftype, kwargs)
        # every cell as text, exactly as written; only an empty cell is missing
        kwargs = {"dtype": str, "keep_default_na": False, "na_values": [""], **kwargs}
        if ftype == "tsv":
            kwargs.setdefault("sep", "\t")
    if ftype == "npy":
        with path.open("rb") as handle:
            magic = handle.read(6)
        if magic != b"\x93NUMPY":
            as_text = say("pass format='csv' or 'tsv'", "pass --format csv or tsv")
            text = f"; it looks like text: {as_text}" if _head_lines(path) else ""
            raise ValueError(
                f"could not read {path.name!r} as NPY: it is not a NumPy .npy file (those "
                f"start with the bytes \\x93NUMPY, as numpy.save writes them){text}"
            )
    try:
        if ftype == "zarr":
            return _read_zarr(path, kwargs)
        if ftype in TEXT_TYPES:
            frame = _read_text(path, kwargs)
        elif ftype == "parquet":
            frame = pd.read_parquet(path, **kwargs)
        else:
            return np.load(path, allow_pickle=False, **kwargs)
    except ImportError as err:
        if kwargs.get("compression") != "zstd":
            raise
        raise ImportError(  # pandas' message, in one line, with the reason
            f"could not read {path.name!r} as {ftype.upper()}: it is zstd-compressed (its first "
            "bytes say so), which needs the zstandard package: pip install zstandard"
        ) from err
    except TypeError as err:  # an option the reader does not take
        reader = {"npy": "numpy.load", "parquet": "pandas.read_parquet"}.get(ftype)
        reader = reader or ("xarray.open_zarr" if ftype == "zarr" else "pandas.read_csv")
        raise TypeError(
            f"reader options {sorted(read_kwargs)!r} must be options of {reader} for "
            f"{path.name!r} ({err})"
        ) from err
    except UnicodeDecodeError as err:  # non-UTF-8 bytes after the first 8 KiB
        raise ValueError(
            f"could not read {path.name!r} as {ftype.upper()}: "
            f"{_not_encoded(err, kwargs.get('encoding'))}"
        ) from err
    except pd.errors.EmptyDataError as err:
        comments = " or comment lines" if read_kwargs.get("comment") else ""
        raise ValueError(
            f"could not read {path.name!r} as {ftype.upper()}: it is empty (no header line "
            f"and no answers, only blank{comments} lines); give the file of answers"
        ) from err
    except (ValueError, OSError, pd.errors.ParserError) as err:
        if ftype == "npy" and "allow_pickle" in str(err):
            raise ValueError(
                f"could not read {path.name!r} as NPY: it holds Python objects (a pickled "
                "object array), not numbers; save the counts as an integer array, e.g. "
                "numpy.save(path, counts.astype('int64'))"
            ) from err
        hint = {
            "csv": "check that every row has the same number of fields and the delimiter ("
            + say("pass format='tsv'", "pass --format tsv")
            + " for tab-separated files)",
            "tsv": "check that every row has the same number of tab-separated fields",
            "parquet": "check that it is a Parquet file (or "
            + say("pass format='csv'", "pass --format csv")
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
    if ftype in TEXT_TYPES and not isinstance(frame.index, pd.RangeIndex):
        frame = _without_implicit_index(path, ftype, frame, kwargs)
    if len(frame) == 0:
        if ftype in TEXT_TYPES:
            raise ValueError(
                f"{path.name!r} has no answers: it holds only a header line "
                f"{_show(frame.columns)}; give the file with the answers"
            )
        raise ValueError(f"{path.name!r} has no rows; give the file with the data")
    text = ftype in TEXT_TYPES
    frame.attrs[_READ_NOTE] = {
        "text": text,
        "headerless": text and "header" in kwargs and kwargs["header"] is None,
        "duplicates": _duplicate_header_cells(path, frame, kwargs) if text else {},
    }
    return frame


#: Options with which pandas' pyarrow engine reads a text file as its C engine does, only
#: about four times faster (strings are made in C++, on several threads).
_ARROW_OPTIONS = frozenset(
    {
        "sep",
        "delimiter",
        "header",
        "dtype",
        "keep_default_na",
        "na_values",
        "encoding",
        "compression",
    }
)


def _read_text(path: Path, kwargs: dict[str, Any]) -> pd.DataFrame:
    """:func:`pandas.read_csv` of a text file: by the pyarrow engine where the options allow
    (one-character separator, no comment), else, and whenever that engine fails (a ragged
    row, a quoted line break it does not take, a bad byte), by the C engine, whose result or
    message the reader's checks then use."""
    import pandas as pd

    sep = kwargs.get("sep", kwargs.get("delimiter", ","))
    simple = set(kwargs) <= _ARROW_OPTIONS and kwargs.get("header", "infer") in ("infer", 0, None)
    if simple and isinstance(sep, str) and len(sep) == 1:
        try:
            return pd.read_csv(path, engine="pyarrow", **kwargs)
        except Exception:  # read again below: the C engine's result or message says why
            pass
    return pd.read_csv(path, **kwargs)


def _without_implicit_index(
    path: Path, ftype: str, frame: pd.DataFrame, kwargs: dict[str, Any]
) -> pd.DataFrame:
    """A text file whose first row has one field more than its header line: pandas takes the
    first column for the index and shifts every column name one to the right (``task``
    naming the raters). Read again without an index when the extra fields are empty (a
    delimiter at the end of each line); refused otherwise."""
    import pandas as pd

    if "index_col" in kwargs or "names" in kwargs:
        return frame  # the caller chose
    last = frame.columns[-1]
    if not frame[last].isna().all():
        names = [str(c) for c in frame.columns]
        raise ValueError(
            f"could not read {path.name!r} as {ftype.upper()}: its first row has "
            f"{len(names) + 1} fields but the header line names {len(names)} ({names!r}), so "
            "every column would shift by one; give the extra column a name in the header line, "
            f"or remove it{_first_line_hint(frame)}"
        )
    with warnings.catch_warnings():  # "... leads to a loss of data": only empty fields here
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        return pd.read_csv(path, index_col=False, **kwargs)


def _duplicate_header_cells(
    path: Path, frame: pd.DataFrame, kwargs: dict[str, Any]
) -> dict[str, int]:
    """Header cells that occur more than once in a text file, and how often (pandas renames
    the copies ``label.1``, ...); read from the header line only when such a name occurs."""
    import pandas as pd

    names = [c for c in frame.columns if isinstance(c, str)]
    if kwargs.get("header", "infer") is None or "names" in kwargs:
        return {}
    if not any((m := _MANGLED.match(c)) and m["base"] in names for c in names):
        return {}
    skip = ("header", "names", "nrows", "usecols", "index_col", "dtype", "chunksize")
    options = {k: v for k, v in kwargs.items() if k not in skip}
    try:
        line = pd.read_csv(path, header=None, nrows=1, dtype=str, **options)
    except (ValueError, OSError, pd.errors.ParserError):  # pragma: no cover - read once already
        return {}
    cells = [str(c) for c in line.iloc[0].tolist() if isinstance(c, str)]
    return {c: n for c, n in Counter(cells).items() if n > 1}


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
            given = say(f"format={format!r}", f"--layout {layout}")
            fix = say("pass format='counts' or leave format out", "leave out --layout")
            kind = ".npy file" if ftype == "npy" else "zarr store"
            raise ValueError(f"{given} does not fit a {kind}, which holds a count matrix; {fix}")
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
        if len(source) == 0:
            raise ValueError(
                f"the DataFrame has no rows (columns {list(source.columns)!r}); give the answers"
            )
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
