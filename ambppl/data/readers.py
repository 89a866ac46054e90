"""Reading annotations and turning them into per-item category counts.

Every source ends up as the same labelled count array (``item`` x ``category``): long
tables (one row per answer: pandas frames, CSV, TSV or Parquet files), wide item x rater
tables with blanks, and ready-made count matrices (numpy, pandas, xarray, ``.npy`` files,
zarr stores).

Conventions (kept for every source):

* Items keep their original ids, in order of first appearance. Text files (CSV, TSV) are
  read with every column as text, so ids are kept exactly as written (``"007"`` and ``"7"``
  are two items, ``"1e3"`` is not ``1000``); an id column whose every id is a plain integer
  (``7``, ``-3``: no sign ``+``, no leading zero, no point) is given as int64, which prints
  the same. Frames and Parquet files keep their ids as they are typed.
* Category labels become strings. Text is kept exactly as written (``"2"`` and ``"2.0"`` in a
  file are two categories, ``"007"`` stays ``"007"``); a number (in a frame or a typed Parquet
  column) becomes its canonical text (``3`` and ``3.0`` both become ``"3"``, ``0.5`` becomes
  ``"0.5"``). Their order is explicit and stable: ``categories=`` fixes it; otherwise labels
  read from long or wide tables are sorted (numerically when every label is a number, ties
  by text; else as text) while count matrices keep their column order. The can't-solve label,
  if any, is always moved last, which is what ``cant_solve=-1`` in :mod:`ambppl.maths.measures`
  expects.
* Repeated answers by one rater on one item are kept: each is one answer.
* Missing labels are empty cells only (NaN, None, empty or blank strings); ``"NA"``,
  ``"N/A"``, ``"None"`` and ``"null"`` are labels like any other unless ``na_values=`` names
  them. Missing labels are dropped and counted in ``attrs["n_dropped"]``; an item left with
  no answer at all is an error.

All work is vectorized (``pandas.factorize`` and one ``numpy.bincount`` over combined codes),
so millions of answers are counted in about a second.
"""

from __future__ import annotations

import codecs
import numbers
import re
import shlex
import warnings
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.internal.checks import MAX_COUNT, check_counts
from ambppl.internal.messages import command_line_messages, say

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

SUFFIXES = {
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
    "encoding": "--encoding",
}
_UNNAMED = re.compile(r"^Unnamed: \d+$")  # pandas' name for a blank header cell
_MANGLED = re.compile(r"^(?P<base>.+)\.\d+$")  # pandas' name for a repeated header cell

_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
_SHOW = 5  # how many offending values an error message lists
#: A number as written in a text file: ``7``, ``-2.5``, ``.5``, ``1e3`` (labels that are all
#: numbers sort numerically).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?")
#: An id written as a plain integer, read as int64: no sign ``+``, no leading zero, no point.
_PLAIN_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
#: Where :func:`_read_file` notes what it saw of a text file (``DataFrame.attrs``).
_READ_NOTE = "ambppl_read"
#: Compressed files, told by their first bytes (the suffix may say otherwise).
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
#: Byte-order marks and the encoding they announce (UTF-32's before UTF-16's: same start).
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
#: Header cells of a long table (lower case, without ``_``, ``-`` and spaces): a first row of
#: such names read with ``header=None`` is a header line, not an answer.
_COLUMN_NAMES = frozenset(
    "task taskid item itemid id question questionid example sample image imageid doc "
    "document docid text tweet tweetid unit unitid worker workerid rater raterid annotator "
    "annotatorid user userid judge coder labeler labeller participant label labels answer "
    "response class category annotation judgment judgement rating choice value emotion "
    "sentiment target gold y".split()
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


# --------------------------------------------------------------------------- helpers


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


def _as_number(label: str) -> Decimal | None:
    """The value of a label that is a number as written (``"2"``, ``"2.0"``, ``"1e3"``),
    exactly; None for other text."""
    text = label.strip()
    match = _NUMBER.fullmatch(text)
    if match is None or (match["exp"] and abs(int(match["exp"])) > 100_000):
        return None  # not a number (or an exponent beyond what compares exactly)
    return Decimal(text)


def _plain_integer_ids(values: np.ndarray) -> np.ndarray:
    """Ids read as text, as int64 when every one is a plain integer that fits (``"7"``,
    ``"-3"``; which print the same, so no two ids merge); otherwise unchanged. Missing ids
    (NaN) keep the text."""
    if values.dtype != object or len(values) == 0:
        return values
    if not all(isinstance(v, str) and _PLAIN_INTEGER.fullmatch(v) for v in values):
        return values
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except OverflowError:  # more than 19 digits: kept as text
        return values


def _text_id_column(values: Any) -> np.ndarray:
    """A whole id column read as text (e.g. the rater ids kept by :func:`read_long`) under
    the rule of :func:`_plain_integer_ids`, converted through its distinct values."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    if np.any(codes < 0):
        return np.asarray(values, dtype=object)
    converted = _plain_integer_ids(np.asarray(uniques, dtype=object))
    if converted.dtype == object:
        return np.asarray(values, dtype=object)
    return converted[codes]


def _check_na_values(na_values: Any) -> frozenset[str]:
    """Validate ``na_values=``: label texts that mean "no answer" (besides empty cells)."""
    if na_values is None:
        return frozenset()
    if isinstance(na_values, str | numbers.Real) and not isinstance(na_values, bool):
        na_values = [na_values]
    option = say("na_values", "--na-values")
    if isinstance(na_values, bytes) or not hasattr(na_values, "__iter__"):
        raise TypeError(
            f"{option} must be a list of label texts that mean 'no answer', such as "
            f"['N/A', 'NA'], but got {na_values!r}"
        )
    out = []
    for value in na_values:
        if isinstance(value, bool) or not isinstance(value, str | numbers.Real):
            raise TypeError(
                f"{option} must list label texts such as 'N/A', but got {value!r} in {na_values!r}"
            )
        out.append(_label_str(value))
    return frozenset(out)


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
    categories: list[str] | None,
    cant_solve: Any,
    *,
    sort: bool,
) -> tuple[list[str], str | None]:
    """Final category order (can't-solve last) and the can't-solve label as a string.

    ``sort``: labels sorted numerically when every one is a number as written (ties, such as
    ``"2"`` and ``"2.0"``, by their text), else as text."""
    if categories is not None:
        extra = [c for c in found if c not in categories]
        if extra:
            raise ValueError(
                f"labels {_show(extra)} occur in the data but are not in categories="
                f"{categories!r}; add them to categories or remove those answers"
            )
        order = list(categories)
    elif sort:
        values = [_as_number(c) for c in found]
        if all(v is not None for v in values):
            order = [c for _, c in sorted(zip(values, found, strict=True))]
        else:
            order = sorted(found)
    else:
        order = list(found)
    cs = None
    if cant_solve is not None:
        cs = _label_str(cant_solve)
        if cs not in order:
            leave_out = say("pass cant_solve=None", "leave out --cant-solve")
            raise ValueError(
                f"{say('cant_solve', '--cant-solve')} must be a label that occurs in the data, "
                f"but {cant_solve!r} does not; the labels present are {sorted(found)!r} "
                f"({leave_out} if the task had no can't-solve answer)"
            )
        order = [c for c in order if c != cs] + [cs]
    if len(order) < 2:
        fix = say(
            "pass categories=[...] to list the answers nobody gave",
            "check that --label names the column of answers",
        )
        raise ValueError(
            f"the annotations must have at least 2 categories, but only {order!r} occurs; {fix}"
        )
    return order, cs


def _check_column(df: pd.DataFrame, name: Any, arg: str, hint: str = "") -> None:
    if name not in df.columns:
        fix = say(f"{arg}=<one of them>", f"--{arg} <one of them>")
        raise ValueError(
            f"{arg} column {name!r} is not in the data; the columns present are "
            f"{list(df.columns)!r}: pass {fix}{hint}{_first_line_hint(df)}"
        )
    copies = df.attrs.get(_READ_NOTE, {}).get("duplicates", {}).get(name)
    copies = copies or int(np.sum(np.asarray(df.columns == name)))
    if copies > 1:
        raise ValueError(
            f"{arg} column {name!r} occurs {copies} times in the header, so which one holds "
            f"the {arg}s is ambiguous; rename the copies (or remove the extra ones) so that "
            "each column has its own name"
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
    if suffix not in SUFFIXES:
        if read_kwargs and ("sep" in read_kwargs or "delimiter" in read_kwargs):
            return "csv"  # a separator says: text (e.g. a tab-separated .txt)
        if path.is_dir() and is_zarr_store(path):
            return "zarr"
        choices = say(
            f"format= one of {', '.join(repr(v) for v in FILE_TYPES)}",
            f"--format {'|'.join(FILE_TYPES)}",
        )
        raise ValueError(
            f"format cannot be told from the file suffix {suffix or '(none)'!r} of "
            f"{path.name!r}; name the file *.csv, *.tsv, *.parquet, *.npy or *.zarr, or pass "
            f"{choices}{_sniff_hint(path)}"
        )
    return SUFFIXES[suffix]


def is_zarr_store(path: Path) -> bool:
    """A folder with zarr metadata (format 3 or 2)."""
    return any((path / name).is_file() for name in ("zarr.json", ".zgroup", ".zarray"))


def _head_lines(path: Path, n_bytes: int = 8192) -> list[str]:
    """The first non-empty lines of a text file (decompressed when its first bytes say so;
    empty for binary or unreadable files)."""
    try:
        head, _ = _peek(path, n_bytes)
    except (OSError, ValueError):
        return []
    encoding = next((enc for bom, enc in _BOMS if head.startswith(bom)), None)
    if encoding is None and b"\x00" in head:
        return []
    text = head.decode(encoding or "utf-8", errors="replace")
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
        fix = say(f"comment={char!r}", f"--comment {_quote(char)}")
        hints.append(f"it starts with comment lines: pass {fix}")
    if data:
        sep = "\t" if "\t" in data[0] else "," if "," in data[0] else None
        if sep is not None:
            kind = "tab-separated" if sep == "\t" else "comma-separated"
            seen = "tsv" if sep == "\t" else "csv"
            if seen != ftype:
                fix = say(f"format={seen!r}", f"--format {seen}")
                hints.append(f"it looks {kind}: pass {fix}")
            fields = [f.strip().strip('"') for f in data[0].split(sep)]
            if all(_is_number_text(f) for f in fields if f):
                hints.append(
                    "its first line looks like data, not column names: pass "
                    + say("header=None", "--no-header")
                    + " and the columns' 0-based positions ("
                    + say("item=0, rater=1, label=2", "--item 0 --rater 1 --label 2")
                    + ", in the file's order)"
                )
    return "; " + "; ".join(hints) if hints else ""


def _compression(head: bytes) -> str | None:
    """The compression of a file told by its first bytes (None: not compressed)."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if (
        head[:3] == b"BZh"
        and head[3:4] in b"123456789"
        and head[4:10]
        in (
            b"\x31\x41\x59\x26\x53\x59",  # a block
            b"\x17\x72\x45\x38\x50\x90",  # the end of the stream (an empty file)
        )
    ):
        return "bz2"
    return None


def _peek(path: Path, n_bytes: int = 8192) -> tuple[bytes, str | None]:
    """The first ``n_bytes`` of a file, decompressed when its first bytes say that it is
    compressed (gzip, bz2, xz, zip), and that compression (None for a plain file)."""
    import bz2
    import gzip
    import lzma
    import zipfile
    import zlib

    with path.open("rb") as handle:
        head = handle.read(n_bytes)
    kind = _compression(head)
    if kind is None or kind == "zstd":  # zstd needs the zstandard package: pandas says so
        return (head if kind is None else b""), kind
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if not n.endswith("/")]
                if len(names) != 1:
                    raise ValueError(
                        f"{path.name!r} is a zip archive of {len(names)} files; give a zip "
                        "holding one CSV or TSV file, or that file itself"
                    )
                with archive.open(names[0]) as inner:
                    return inner.read(n_bytes), kind
        opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[kind]
        with opener(path, "rb") as inner:
            return inner.read(n_bytes), kind
    except (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile, zlib.error) as err:
        raise ValueError(
            f"{path.name!r} starts like a {kind}-compressed file but does not decompress "
            f"({_first_line(err)}); check that the file is whole"
        ) from err


def _first_line(err: BaseException) -> str:
    """The first line of an exception's message (its type when it has none)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _utf16_without_bom(head: bytes) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` when the bytes read as UTF-16 text without a
    byte-order mark (every other byte NUL, as in mostly-ASCII text), else None."""
    head = head[: len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    for encoding, zeros, chars in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) == 0:
            try:
                codecs.getincrementaldecoder(encoding)().decode(head, final=False)
            except UnicodeDecodeError:
                return None
            return encoding
    return None


def _not_encoded(err: UnicodeDecodeError, encoding: str | None) -> str:
    """What to say about text that does not decode."""
    byte = err.object[err.start : err.start + 1].hex() if err.object else "?"
    fix = say("encoding='latin-1'", "--encoding latin-1")
    if encoding is None or codecs.lookup(encoding).name == "utf-8":
        return (
            f"it is not UTF-8 text (its byte 0x{byte} does not decode as UTF-8); if it is "
            f"Latin-1 or Windows-1252 text pass {fix}, else the encoding it was saved in"
        )
    return f"it is not {encoding} text ({_first_line(err)}); pass the encoding it was saved in"


def _text_options(path: Path, ftype: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options that let :func:`pandas.read_csv` read a text file: the compression told
    by its first bytes (whatever the suffix), the encoding a byte-order mark (UTF-8, UTF-16,
    UTF-32) or the NUL bytes of UTF-16 text announce; refuses, saying what the file is, a
    Parquet or ``.npy`` file, binary data, text that is not UTF-8 and JSON."""
    n_bytes = 8192
    head, compression = _peek(path, n_bytes)
    kwargs = dict(kwargs)
    kwargs.setdefault("compression", compression)
    if "encoding" in kwargs or not head:
        return kwargs
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            kwargs["encoding"] = encoding
            return kwargs

    def refuse(what: str) -> ValueError:
        return ValueError(f"could not read {path.name!r} as {ftype.upper()}: {what}")

    if head.startswith(b"PAR1"):
        fix = say("pass format='parquet'", "pass --format parquet")
        raise refuse(f"it is a Parquet file, not text; {fix} or name it *.parquet")
    if head.startswith(b"\x93NUMPY"):
        fix = say("pass format='npy'", "pass --format npy")
        raise refuse(f"it is a NumPy .npy file (a count matrix), not text; {fix}")
    if b"\x00" in head:
        utf16 = _utf16_without_bom(head)
        if utf16 is not None:
            kwargs["encoding"] = utf16
            return kwargs
        raise refuse(
            "it is not a text file (it holds binary data: NUL bytes); give the CSV or TSV file "
            "of answers"
        )
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < n_bytes)
    except UnicodeDecodeError as err:
        raise refuse(_not_encoded(err, None)) from None
    start = text.lstrip()
    if start.startswith("{") or re.match(r"\[\s*[\[{\"\]]", start):
        first = start.splitlines()[0].strip() if start else ""
        lines = ", lines=True" if first.startswith("{") and first.endswith("}") else ""
        raise refuse(
            "it holds JSON, which is not read; convert it to a CSV file of answers first, "
            f"e.g. with pandas: pandas.read_json('{path.name}'{lines}).to_csv('answers.csv', "
            "index=False)"
        )
    return kwargs


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


# --------------------------------------------------------------------------- parsing


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
    """Factorize items and labels of a long table (one row per answer)."""
    import pandas as pd

    _check_column(df, item, "item")
    _check_column(df, label, "label")
    if rater is not None:
        no_rater = say("rater=None", "--no-rater")
        _check_column(df, rater, "rater", f" (or {no_rater} if the data have no rater ids)")
    note = df.attrs.get(_READ_NOTE, {})
    if note.get("headerless"):
        _check_first_row_is_data(df, item, rater, label, desc)

    codes, uniques = pd.factorize(df[label], use_na_sentinel=True)
    strs = [_label_str(u) for u in uniques]
    # last: NaN (-1); blank strings and the texts na_values names are missing too
    blank = np.array([s.strip() == "" or s in na_values for s in strs] + [True], dtype=bool)
    missing = blank[codes]
    kept = ~missing
    n_dropped = int(missing.sum())

    str_codes, str_uniques = pd.factorize(np.array(strs, dtype=object))
    found = [s for s in str_uniques.tolist() if s.strip() != "" and s not in na_values]
    order, cs = _order(found, categories, cant_solve, sort=True)
    position = {c: i for i, c in enumerate(order)}
    remap = np.array([position.get(s, -1) for s in str_uniques.tolist()], dtype=np.int64)
    label_codes = remap[str_codes[codes[kept]]]

    item_codes_all, items = pd.factorize(df[item], use_na_sentinel=True)
    item_codes = item_codes_all[kept].astype(np.int64)
    items = np.asarray(items)
    if note.get("text"):  # ids as written; plain integers as int64
        items = _plain_integer_ids(np.asarray(items, dtype=object))
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
    named = [
        role
        for role, cell in first.items()
        if re.sub(r"[\s_\-]", "", cell.lower()) in _COLUMN_NAMES
    ]
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


def _check_wide_layout(df: pd.DataFrame, item: Any, rater: Any, label: Any, desc: str) -> None:
    """Refuse a table read as wide (items x raters) that is not one: a long table (it has the
    rater and label columns of the long layout, which would be counted as answers), or a
    column of ids (20 or more values, all different) that would be taken for a rater."""
    if rater is not None and label is not None and rater != item and label != item:
        if rater in df.columns and label in df.columns:
            raise ValueError(
                f"the table {desc!r} read as wide (one column per rater) has the columns "
                f"{rater!r} and {label!r} of a long table (one row per answer), whose rater ids "
                "would be counted as answers; leave out "
                + say("format='wide'", "--layout wide")
                + " to read one row per answer"
            )
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
    out = pd.DataFrame(
        {
            "item": np.repeat(ids, m),
            "rater": np.tile(np.asarray(table.columns, dtype=object), n),
            "label": table.to_numpy(dtype=object).ravel(),
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
                    f"{at(int(np.argmax(bad)))}; fix that cell, or pass the layout of a table "
                    "of answers"
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
        text = obj.attrs.get(_READ_NOTE, {}).get("text", False)
        if item in obj.columns:
            obj = obj.set_index(item)
        ids = obj.index.to_numpy()
        labels = obj.columns.tolist()
        if text:  # a CSV/TSV of counts, read as text: ids as written, counts as numbers
            ids = _plain_integer_ids(np.asarray(ids, dtype=object))
        values = _numeric_counts(obj, ids, text)
    else:
        values = np.asarray(obj)
        if values.ndim != 2:
            raise ValueError(
                f"counts must be a 2-D array (items x categories), but got shape {values.shape}"
            )
        ids = np.arange(values.shape[0])
        labels = None
    named = labels is not None and len(labels) == np.shape(values)[-1]
    arr = check_counts(
        values, "counts", items=np.asarray(ids), categories=labels if named else categories
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
    na_values: Any = None,
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
    na_values : str or list of str, optional
        Label texts that mean "no answer" besides an empty cell, as in
        :func:`read_annotations`.
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
    missing = _check_na_values(na_values)
    if layout == "wide":
        _check_wide_layout(obj, item, rater, label, desc)
        _check_wide_header(obj, item, desc)
        obj = _wide_to_long(obj, item)
        item, rater, label = "item", "rater", "label"
    parsed = _parse_long(obj, item, rater, label, cant_solve, cats, na_values=missing, desc=desc)
    _counts_array(parsed, desc, layout)  # same checks (e.g. empty items) as read_annotations
    rater_values = obj[rater].to_numpy()[parsed.kept] if rater is not None else pd.NA
    if rater is not None and obj.attrs.get(_READ_NOTE, {}).get("text"):
        rater_values = _text_id_column(rater_values)  # as written; plain integers as int64
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
    na_values: Any = None,
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
    na_values : str or list of str, optional
        Label texts that mean "no answer" besides an empty cell, e.g. ``["N/A", "NA"]``:
        such answers are dropped and counted in ``attrs["n_dropped"]``. By default only an
        empty (or blank) cell is missing: ``"NA"``, ``"N/A"``, ``"None"`` and ``"null"`` are
        labels like any other. For tables of answers only (long or wide).
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
        named ``counts``); with ``header=None`` a first row that looks like a header line
        (usual column names, or text ids where every other row has numbers, and a label found
        nowhere else); a table read as wide that has the long layout's ``rater`` and
        ``label`` columns, or a column of 20 or more values all different (ids); an item,
        rater or label column whose name occurs twice; a file that is empty, only a header
        line, not UTF-8 text (the message says ``encoding=``), JSON, binary, Parquet or
        ``.npy`` read as text, or not ``.npy`` read as ``.npy``; counts summing past 2**53
        per item.
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
    category coordinate has one type for every source: text exactly as written (every cell
    of a CSV/TSV file is read as text), numbers (typed frame or Parquet columns) as their
    canonical text (``3.0`` -> ``"3"``); labels that are all numbers are sorted numerically
    (``"2"`` before ``"10"``). Text ids are kept as written (``"007"`` is not ``"7"``), as
    int64 when all are plain integers. Text files are read as UTF-8 unless a byte-order
    mark or ``encoding=`` says otherwise; gzip, bz2, xz and zip files are told by their
    first bytes. Use ``counts["item"]`` for the item ids:
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
    missing = _check_na_values(na_values)
    if layout == "counts":
        if missing:
            raise ValueError(
                f"{say('na_values', '--na-values')} names missing answers, but {desc!r} holds "
                "counts (items x categories), not answers; leave it out"
            )
        return _from_counts(obj, item, cant_solve, cats, desc)
    if layout == "wide":
        _check_wide_layout(obj, item, rater, label, desc)
        _check_wide_header(obj, item, desc)
        obj = _wide_to_long(obj, item)
        item, rater, label = "item", "rater", "label"
    parsed = _parse_long(obj, item, rater, label, cant_solve, cats, na_values=missing, desc=desc)
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
