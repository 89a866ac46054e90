"""Files: what a path holds and reading it into a table or an array, with messages that say
what went wrong. Nothing else in ambppl sniffs formats.

*What a file is.* ``format=`` is parsed here (a layout, a file type, or both joined by ``+``);
otherwise the file type comes from the suffix (also behind ``.gz``, ``.zip``, ...), a folder
with zarr metadata is a zarr store, and a ``sep=`` makes any other suffix text. The first
bytes of a text file tell its compression (gzip, bz2, xz, zip, zstd) and encoding (a
byte-order mark, or the NUL bytes of UTF-16), and refuse what is not text (Parquet, ``.npy``,
binary, JSON) with what it is; the first lines give hints (separator, comment lines, no
header line) for error messages.

*Reading it.* A path is read by the reader of its file type: text files by
:func:`pandas.read_csv` with every cell as text (pyarrow's engine where the options allow),
Parquet by :func:`pandas.read_parquet`, ``.npy`` by :func:`numpy.load` (no pickles) and zarr
stores by zarr/xarray; frames and arrays pass through. What was seen of a text file (read as
text, without a header line, repeated header cells) is noted in the frame's ``attrs`` for the
checks of the table readers.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.data.labels import _is_number_text, _label_str, _quote, _show
from ambppl.internal.messages import say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Keywords of the readers; an estimator given one says to read the data first.
READ_OPTIONS = ("item", "rater", "label", "cant_solve", "categories", "format", "na_values")

#: The item column that the readers take by default (crowd-kit's name in a table of
#: answers); for counts it means "the table's own item column, if any".
DEFAULT_ITEM = "task"

#: Table layouts understood by ``format=``.
LAYOUTS = ("long", "wide", "counts")
#: File types understood by ``format=`` (otherwise taken from the file suffix).
FILE_TYPES = ("csv", "tsv", "parquet", "npy", "zarr")
#: File types read as text by :func:`pandas.read_csv`; only they take ``sep=``,
#: ``comment=`` and ``header=``.
TEXT_TYPES = ("csv", "tsv")
#: File types that hold a count matrix (items x categories), not a table of answers.
COUNT_TYPES = ("npy", "zarr")
#: File suffixes (lower case) and the file type each means.
SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
    ".zarr": "zarr",
}
#: Suffixes of compressed files: the file type is told by the suffix before them.
_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
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
    """The file type of ``path`` (``ftype`` if given, else told by the suffix, a ``sep=`` or
    zarr metadata); a zarr store's metadata is checked to be JSON
    (:func:`_check_zarr_metadata`), so that every reader refuses a damaged store alike."""
    told = _type_of(path, ftype, read_kwargs)
    if told == "zarr" and path.is_dir():
        _check_zarr_metadata(path)
    return told


def _type_of(path: Path, ftype: str | None, read_kwargs: dict[str, Any] | None = None) -> str:
    """The file type of ``path`` as :func:`_file_type` tells it, without reading."""
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


def is_zarr_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder with zarr metadata (zarr format 3 or 2).

    Parameters
    ----------
    path : str or os.PathLike
        A path; it need not exist.

    Returns
    -------
    bool
        True for a folder holding ``zarr.json``, ``.zgroup`` or ``.zarray``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     before = is_zarr_store(folder)
    ...     _ = (Path(folder) / "zarr.json").write_text("{}")
    ...     before, is_zarr_store(folder)
    (False, True)
    """
    path = Path(path)
    return any((path / name).is_file() for name in ("zarr.json", ".zgroup", ".zarray"))


def _told_type(path: Path, format: Any) -> tuple[str | None, str | None]:
    """(layout, file type) of ``path`` read with ``format=``; the file type None where
    neither ``format`` nor the suffix (nor zarr metadata) tells it."""
    layout, ftype = _parse_format(format)
    try:
        told = _type_of(path, ftype)
    except ValueError:  # an unknown suffix: the reader's message says what to pass
        return layout, None
    return layout, _file_type(path, told)  # a damaged zarr store refused as by every reader


def holds_counts(path: str | os.PathLike[str], format: str | None = None) -> bool:
    """Whether :func:`ambppl.read_annotations` reads ``path`` as a count matrix.

    Parameters
    ----------
    path : str or os.PathLike
        A file or zarr store; it need not exist.
    format : str, optional
        As ``format=`` of :func:`ambppl.read_annotations`: a layout, a file type, or both
        joined by ``+``.

    Returns
    -------
    bool
        True for the layout ``"counts"``, a ``.npy`` file and a zarr store (by ``format``,
        by the suffix, or by a folder's zarr metadata); False for tables of answers and for
        files whose type cannot be told (reading them says why).

    Raises
    ------
    ValueError, TypeError
        For a ``format`` that is not a layout and/or a file type; ValueError for a zarr
        store whose metadata is not JSON (damaged), as every reader refuses it.

    Examples
    --------
    >>> holds_counts("counts.npy"), holds_counts("answers.csv")
    (True, False)
    >>> holds_counts("counts.parquet", "counts"), holds_counts("store.zarr")
    (True, True)
    """
    layout, ftype = _told_type(Path(path), format)
    return layout == "counts" or ftype in COUNT_TYPES


def opens_in_chunks(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    item: Any = None,
    label: Any = "label",
) -> bool:
    """Whether ``path`` holds counts that :func:`ambppl.data.open_counts_in_chunks` opens.

    A Parquet file whose layout is not stated is read as :func:`ambppl.read_annotations`
    reads it, as a table of answers (the long layout), unless it cannot be one: it opens as
    counts only where its schema holds neither the long layout's label column nor a column
    headed like the rater or label column of a table of answers (:data:`ANSWER_HEADERS`:
    ``worker``, ``annotator``, ``answer``, ...), and its columns besides the item column
    are all integers. Any other such file is read as answers, and refused as
    :func:`ambppl.read_annotations` refuses it where its columns are not those named;
    ``format="counts"`` (``--layout counts``) reads it as counts. For a folder of
    ``*.parquet`` part files the schema is that of the first part file, as
    :func:`ambppl.data.open_counts_in_chunks` lists them.

    Parameters
    ----------
    path : str or os.PathLike
        A file, zarr store or folder of Parquet part files.
    format : str, optional
        As ``format=`` of :func:`ambppl.read_annotations`.
    item : column name, optional
        The item column: of a Parquet file of counts (besides ``"item"``, which is always
        taken for one), and of the long layout (None: its default ``"task"``).
    label : column name, default "label"
        The label column of the long layout.

    Returns
    -------
    bool
        True for a zarr store, for a Parquet file (or folder of part files) with the layout
        ``"counts"``, and for one without a stated layout that cannot be a table of answers
        (above; only its schema is read); False otherwise (a table of answers, a file that
        is not readable as Parquet, a folder without part files, an unknown file type).

    Raises
    ------
    ValueError, TypeError
        For a ``format`` that is not a layout and/or a file type; ValueError for a zarr
        store whose metadata is not JSON (damaged), as every reader refuses it.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "c.parquet"
    ...     pd.DataFrame({"item": ["a", "b"], "yes": [3, 1], "no": [0, 2]}).to_parquet(path)
    ...     answers = Path(folder) / "a.parquet"
    ...     pd.DataFrame({"task": [1, 1], "worker": [7, 8], "label": [0, 1]}).to_parquet(answers)
    ...     opens_in_chunks(path), opens_in_chunks(path, "long"), opens_in_chunks(answers)
    ...     renamed = Path(folder) / "r.parquet"
    ...     pd.read_parquet(answers).rename(columns={"task": "task_id"}).to_parquet(renamed)
    ...     opens_in_chunks(renamed), opens_in_chunks(renamed, "counts")
    (True, False, False)
    (False, True)
    """
    path = Path(path)
    layout, ftype = _told_type(path, format)
    if ftype == "zarr":
        return True
    if ftype != "parquet" or layout in ("long", "wide"):
        return False
    if layout == "counts":
        return True
    import pyarrow as pa

    schema = _parquet_schema(path)
    if schema is None or _holds_answers(schema, item, label):
        return False  # unreadable (the reader says why), or a table of answers
    others = [f for f in schema if f.name not in (item, "item", "__index_level_0__")]
    return bool(others) and all(pa.types.is_integer(f.type) for f in others)


def _parquet_parts(path: Path) -> list[Path]:
    """The files of Parquet data: a folder's ``*.parquet`` part files, sorted (as
    :func:`ambppl.data.open_counts_in_chunks` reads them); else ``[path]``."""
    return sorted(path.glob("*.parquet")) if path.is_dir() else [path]


def _parquet_schema(path: Path) -> Any:
    """The :class:`pyarrow.Schema` of a Parquet file, or of a folder's first part file
    (:func:`_parquet_parts`); None where there is none to read (the reader says why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = _parquet_parts(path)
    if not parts:
        return None
    try:
        return pq.read_schema(parts[0])
    except (OSError, pa.ArrowInvalid):
        return None  # not readable as Parquet: the reader's message says why


def _header_key(header: Any) -> str:
    """A column header as the name lists of the readers hold it: lower case, without ``_``,
    ``-`` and white space (``"Worker_ID"`` is ``"workerid"``)."""
    return re.sub(r"[\s_\-]", "", str(header).lower())


#: Headers (as :func:`_header_key` gives them) of the rater and label columns of a table of
#: answers. A Parquet file without a stated layout that has such a column is read as answers
#: (:func:`opens_in_chunks`): the columns of counts are categories, not named so. Names that
#: may well be categories (``user``, ``value``, ``y``) are not listed.
ANSWER_HEADERS = frozenset(
    "worker workerid workers rater raterid raters annotator annotatorid annotators userid "
    "judge judgeid coder coderid labeler labelerid labeller labellerid participant "
    "participantid label labels labelid answer answers response responses annotation "
    "annotations judgment judgement judgments judgements rating ratings choice class "
    "category emotion sentiment gold".split()
)


def _holds_answers(schema: Any, item: Any, label: Any) -> bool:
    """Whether a Parquet schema is that of a table of answers rather than of counts: it has
    the long layout's ``label`` column, or a column (besides the item column ``item``, or
    ``"item"``, or the index ``to_parquet`` stored) headed as :data:`ANSWER_HEADERS` lists.
    :func:`ambppl.read_annotations` reads such a file, without a layout, as answers."""
    names = list(schema.names)
    if label in names:
        return True
    ids = (item, "item", "__index_level_0__")
    return any(_header_key(n) in ANSWER_HEADERS for n in names if n not in ids)


def _parquet_answers(path: Path, format: Any, item: Any = None, label: Any = "label") -> bool:
    """Whether ``path``, read with ``format=`` stating no layout, is Parquet answers: a
    Parquet file (or folder of part files) that is a table of answers
    (:func:`_holds_answers`), which :func:`ambppl.read_annotations` reads as answers (and
    refuses where its columns are not those named) and :func:`opens_in_chunks` does not
    open as counts."""
    layout, ftype = _told_type(path, format)
    if layout is not None or ftype != "parquet":
        return False
    schema = _parquet_schema(path)
    return schema is not None and _holds_answers(schema, item, label)


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
    if kind is None or kind == "zstd":  # zstd needs the zstandard package: the reader says so
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
    if len(names) == 1:  # a header read as one column: another separator than the reader's
        found = [sep for sep in ("\t", ";", ",", "|") if sep in first]
        if found:
            sep = found[0]
            fix = {
                "\t": say("format='tsv'", "--format tsv"),
                ",": say("format='csv'", "--format csv"),
            }
            shown = "a tab" if sep == "\t" else repr(sep)
            option = fix.get(sep) or say(f"sep={sep!r}", f"--sep {_quote(sep)}")
            return (
                f"; the header line was read as one column, and it holds {shown}: if that "
                f"separates the fields, pass {option}"
            )
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


def _empty_file(path: Path, ftype: str, read_kwargs: dict[str, Any]) -> ValueError:
    """The error for a text file without a header line or answers."""
    comments = " or comment lines" if read_kwargs.get("comment") else ""
    return ValueError(
        f"could not read {path.name!r} as {ftype.upper()}: it is empty (no header line "
        f"and no answers, only blank{comments} lines); give the file of answers"
    )


def _refuse_text_options(path: Path, ftype: str, read_kwargs: dict[str, Any]) -> None:
    """Refuse the options of text files (``sep=``, ``comment=``, ``header=``,
    ``encoding=``, ...) for a file read as another type (Parquet, ``.npy``, zarr)."""
    text_only = [k for k in read_kwargs if k in _TEXT_OPTIONS]
    if ftype in TEXT_TYPES or not text_only:
        return
    named = ", ".join(say(f"{k}=", _TEXT_OPTIONS[k] or f"{k}=") for k in text_only)
    one = len(text_only) == 1
    as_text = say("format='csv'", "--format csv")
    raise ValueError(
        f"{named} appl{'ies' if one else 'y'} to text files (CSV, TSV), but {path.name!r} "
        f"is read as {ftype.upper()}; leave {'it' if one else 'them'} out, or pass "
        f"{as_text} if the file is text"
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
    _refuse_text_options(path, ftype, read_kwargs)
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
        raise _empty_file(path, ftype, read_kwargs) from err
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


#: The metadata files of a zarr store (zarr format 3, then 2), each a JSON object.
_ZARR_METADATA = ("zarr.json", ".zgroup", ".zarray", ".zattrs", ".zmetadata")


def _check_zarr_metadata(path: Path) -> None:
    """Refuse a zarr store whose metadata files (:data:`_ZARR_METADATA`, of the store and of
    the groups and arrays in it; an array's chunk files are not looked at) are not JSON
    objects: a damaged store (a write cut short, a hand edit), which zarr would refuse with a
    bare JSON parser error naming neither the store nor the file. Only metadata is read."""
    folders = [path]
    while folders:
        folder = folders.pop(0)
        array = found = False
        for name in _ZARR_METADATA:
            file = folder / name
            if not file.is_file():
                continue
            found = True
            data = file.read_bytes()  # an unreadable file: the OSError names it
            try:
                meta = json.loads(data)
            except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
                lines = str(err).strip().splitlines()
                got = "an empty file" if not data.strip() else f"text that is not JSON ({lines[0]})"
            else:
                if isinstance(meta, dict):
                    array = array or name == ".zarray" or meta.get("node_type") == "array"
                    continue
                got = f"a JSON {type(meta).__name__}"
            inside = file.relative_to(path).as_posix()
            raise ValueError(
                f"could not read {path.name!r} as ZARR: its metadata file {inside!r} must hold "
                f"a JSON object, but got {got}; the store is damaged (e.g. a write that was cut "
                "short): write it again (e.g. counts.to_zarr(path) with xarray)"
            )
        if found and not array:  # a group: the folders of its arrays and groups
            folders.extend(sorted(d for d in folder.iterdir() if d.is_dir()))


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
