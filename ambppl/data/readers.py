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
  the same. Frames and Parquet files keep their ids as they are typed. A count matrix and a
  wide table have one row per item: repeated ids are refused, never summed; so are ids of
  two types that print the same (``1`` and ``"1"``) in any layout, item ids and rater ids
  (a long table's rater column, a wide table's header) alike. Ids of two types that print
  apart (``0`` beside ``"x1"``) are given as text (``"0"``, ``"x1"``), as a file's column
  would be: samplers, summaries and netCDF take one type per coordinate.
* Category labels become strings. An answer's text is kept as written less surrounding
  whitespace (``" ?"`` and ``"?"`` are one label, matched so by ``cant_solve=``,
  ``categories=`` and ``na_values=``; ``"2"`` and ``"2.0"`` in a file are two categories,
  ``"007"`` stays ``"007"``; ids are never stripped); a number (in a frame or a typed Parquet
  column) becomes its canonical text (``3`` and ``3.0`` both become ``"3"``, ``0.5`` becomes
  ``"0.5"``, a float32 ``0.1`` ``"0.1"``). Their order is explicit and stable:
  ``categories=`` fixes it; otherwise a long table's pandas categorical label column gives
  its declared categories in their order (those nobody gave as zero counts), other labels
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

:func:`read_input` reads one path as an estimator needs it (the ``ambppl`` command reads
every input with it): a model of answers gets the answers table (:func:`read_long`); a model
of counts the counts (:func:`read_annotations`), opened lazily where the file holds counts
that open in chunks (a zarr store, a Parquet file of counts:
:func:`ambppl.data.open_counts_in_chunks`), or for a long answers file too large for memory
counted with dask (:func:`ambppl.data.count_long_in_chunks`). Which of them applies is told
by the file (:func:`ambppl.data.opens_in_chunks`) and the options, never by the estimator
that takes the result. :func:`check_input_path` checks the path first.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ambppl.data.chunked import _chunking, count_long_in_chunks, open_counts_in_chunks
from ambppl.data.examples import example_path
from ambppl.data.files import (
    _READ_NOTE,
    DEFAULT_ITEM,
    _load,
    _parquet_parts,
    _parse_format,
    holds_counts,
    is_zarr_store,
    opens_in_chunks,
)
from ambppl.data.labels import (
    _FROM_DATA,
    _check_categories,
    _check_na_values,
    _text_id_column,
)
from ambppl.data.lazy import LazyCounts
from ambppl.data.matrices import _from_counts, ids_of_one_type
from ambppl.data.tables import (
    _check_wide_header,
    _check_wide_layout,
    _counts_array,
    _parse_long,
    _wide_to_long,
)
from ambppl.internal.messages import command_line_messages, say

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = [
    "check_input_path",
    "command_line_messages",
    "example_path",
    "read_annotations",
    "read_input",
    "read_long",
]


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
        For wide tables ``item`` names the id column, which must hold one id per row (the
        index is used when ``item`` is left at its default; another ``item`` must be a
        column or the index's name).
    cant_solve : label, optional
        The label of the "can't solve" answer; it must occur in the data (or in
        ``categories``), surrounding whitespace aside. It becomes the last category.
    categories : list of labels, optional
        The categories in the order wanted (may include labels nobody gave); default as
        :func:`read_annotations` finds them (a categorical label column's declared ones).
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
    cats = _check_categories(categories, strip=True)  # as the answers' labels
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
    if rater is not None:  # checked to print apart by _parse_long: 0 and "w1" as text
        rater_values = ids_of_one_type(rater_values)
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
    cant_solve: Any = _FROM_DATA,
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
        ``.parquet`` (either table layout, or counts with ``format="counts"``) or ``.npy``
        (counts) file, or a ``.zarr`` store (a folder) holding a count array. A
        DataArray's (or zarr store's) dims are told apart by name
        (:func:`ambppl.data.matrices.count_dims`): a dim named ``item`` or ``category``, in
        either position, is that one; else a dim named like item ids (``task``,
        ``question``, ...: :data:`ambppl.data.matrices.ID_HEADERS`) or like categories
        (``label``, ``answer``, ...), the other named neither way; else items first.
    item, rater, label : column name
        Columns of a long table holding the item id, the rater id and the answer (crowd-kit's
        ``task``, ``worker``, ``label`` by default); 0-based positions for a file read with
        ``header=None``. ``rater=None``: no rater ids; one column may not hold two roles.
        For wide tables and count frames ``item`` names the id column; an ``item`` other
        than the default must be a column (of a wide frame, or the index's name). Left at
        the default, the index (or the row number) holds the ids, except that a count
        frame's column ``task``, the index ``to_parquet`` stored (``__index_level_0__``), or
        else its first column, in any position, headed like an id column is taken first:
        headed, case, ``_``, ``-`` and white space aside, with a name of the readers' one
        list of id headers, :data:`ambppl.data.matrices.ID_HEADERS` (``id``, ``item``,
        ``item_id``, ``task_id``, ``index``, ``question``, ``tweet_id``, ..., or blank as
        ``DataFrame.to_csv`` writes over the index), which also tells a wide table's column
        of ids and a DataArray's item dim. A second column of a count frame headed with a
        name of nothing but ids (``id``, ``item_id``, ..., not a word such as ``text``) is
        refused: counted as a category it would add its ids to every item's answers. A
        count matrix and a wide table have one row per item: their ids must not repeat.
    cant_solve : label or None, optional
        The label of the "can't solve" answer (e.g. ``"I can't tell"``); it must occur in the
        data or in ``categories``. It becomes the last category. For a table of answers it
        is matched as the answers are, surrounding whitespace aside. ``None``: no can't-solve
        category, whatever the data carry. Left out: none for tables of answers and plain
        arrays; for labelled counts (a DataArray, a zarr store) the label their
        ``attrs["cant_solve"]`` carries, if any.
    categories : list of labels, optional
        The category order wanted; may include labels nobody gave (zero counts); for a table
        of answers, labels without surrounding whitespace. Labels of the data missing from
        it are refused: for counts with labels of their own (a frame's columns, a
        DataArray's category coordinate, a zarr store's) it reorders them and never renames
        them, as the readers in chunks do (:func:`ambppl.data.open_counts_in_chunks`). For
        a numpy count matrix (or a DataArray without a category coordinate) it names the
        columns in order (default ``"0"``, ``"1"``, ...). Default for a long table whose
        label column is a pandas categorical: its declared categories, in their order,
        those nobody gave included (zero counts, so they count for the number of
        categories); a wide table's are not used.
    format : str, optional
        Layout ``"long"`` (default for tables, a Parquet file included: read it as counts
        with ``"counts"``), ``"wide"`` or ``"counts"``; file type ``"csv"``, ``"tsv"``,
        ``"parquet"``, ``"npy"`` or ``"zarr"`` (default: from the suffix, also behind
        ``.gz``/``.zip`` etc.; a folder with zarr metadata is zarr; a ``sep=`` makes other
        suffixes such as ``.txt`` text); or both joined by ``+``, e.g. ``"wide+tsv"``. (The
        readers in chunks, and ``ambppl score``, open a Parquet file without a stated
        layout as counts where it cannot be a table of answers:
        :func:`ambppl.data.opens_in_chunks`.)
    na_values : str or list of str, optional
        Label texts that mean "no answer" besides an empty cell, e.g. ``["N/A", "NA"]``:
        such answers are dropped and counted in ``attrs["n_dropped"]``. By default only an
        empty (or blank) cell is missing: ``"NA"``, ``"N/A"``, ``"None"`` and ``"null"`` are
        labels like any other; compared without surrounding whitespace, and never naming
        ``cant_solve`` or a label of ``categories``. For tables of answers only (long or
        wide).
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
        A column that is not in the data (the message lists the columns present; for a
        header read as one column that holds another separator, it names ``sep=`` or
        ``format=``; for a table read as answers without its item column that looks like
        counts, whole numbers beside at most one column of ids, ``format="counts"``); one
        column in two roles (``item``, ``rater``, ``label``); a
        ``cant_solve`` label absent from the data; labels missing from ``categories``; fewer
        than 2 categories; no items (a count matrix, ``.npy`` file or zarr store with 0 rows,
        as :func:`ambppl.data.as_counts` and :func:`ambppl.fit` refuse); an item with no
        answers (all labels missing, or an all-zero row of
        counts); negative, fractional or non-finite counts; repeated item ids of a count
        matrix (one row per item); item ids of two types that print the same (``1`` and
        ``"1"``: two items no output tells apart), in any layout, and so rater ids (a long
        table's rater column, a wide table's header of rater names); a second id column of a
        count frame (above); a file that does not parse; an
        unknown ``format`` or file suffix; a wide table whose header looks like answers
        (every rater name an answer label, some blank or repeated: the first line of a file
        without a header line), which would silently lose that line's item; text options
        (``sep``, ``comment``, ``header``) for a Parquet, ``.npy`` or zarr source; a
        ``comment`` that is not one character; a zarr store without one 2-D array (or one
        named ``counts``); with ``header=None`` a first row that looks like a header line
        (usual column names, or text ids where every other row has numbers, and a label found
        nowhere else); a table read as wide that has the long layout's ``rater`` and
        ``label`` columns, or whose item ids repeat (a long table: the message names
        ``format="long"``), or a column of 20 or more values all different (ids), or, without
        its ``item`` column, a column that looks like the item ids (a value on every row, all
        different, and headed like an id column, ``item``, ``id``, ``question``, ..., or as
        the first column on 3 or more rows holding no other column's answer while the other
        columns share answers, where the ids are not in the index: a default
        ``RangeIndex``, as a text file is read); an item,
        rater or label column whose name occurs twice; an ``item`` other than the default
        that names no column of a wide table; a ``na_values`` that names ``cant_solve`` or a
        label of ``categories``; a file that is empty, only a header
        line, not UTF-8 text (the message says ``encoding=``), JSON, binary, Parquet or
        ``.npy`` read as text, or not ``.npy`` read as ``.npy``; counts summing past 2**53
        per item.
    TypeError
        For an unsupported ``source`` type, non-numeric counts, a numpy masked array, cells
        that hold lists or other unhashable values, or a reader option the reader does not
        take.
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
    category coordinate has one type for every source: answers that are text as written
    less surrounding whitespace (every cell of a CSV/TSV file is read as text; ``" ?"``, as
    a file written with ``", "`` holds it, is ``"?"``; a blank answer is missing; item and
    rater ids are kept as written), numbers (typed frame or Parquet columns) as their
    canonical text (``3.0`` -> ``"3"``; a float32 or float16 as the shortest text of its
    own precision, ``numpy.float32(0.1)`` -> ``"0.1"``); labels that are all numbers are
    sorted numerically (``"2"`` before ``"10"``). Text ids are kept as written (``"007"``
    is not ``"7"``), as int64 when all are plain integers. Text files are read as UTF-8
    unless a byte-order mark or ``encoding=`` says otherwise; gzip, bz2, xz and zip files
    are told by their first bytes. Use ``counts["item"]`` for the item ids:
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
    if cant_solve is None:  # said: no can't-solve category, whatever the data carry
        obj = _without_cant_solve(obj)
    elif cant_solve is _FROM_DATA:  # left out: a DataArray's attrs["cant_solve"], if any
        cant_solve = None
    # labels of answers without surrounding whitespace; a count matrix's as its columns say
    cats = _check_categories(categories, strip=layout != "counts")
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


def _without_cant_solve(obj: Any) -> Any:
    """``obj`` without a can't-solve label of its own: a DataArray (a zarr store read) whose
    ``attrs["cant_solve"]`` names one, as a shallow copy without that key (the caller's
    untouched); other sources as they are (only a DataArray's is read)."""
    import xarray as xr

    if not isinstance(obj, xr.DataArray) or obj.attrs.get("cant_solve") is None:
        return obj
    out = obj.copy(deep=False)
    out.attrs = {k: v for k, v in obj.attrs.items() if k != "cant_solve"}
    return out


def check_input_path(source: str | os.PathLike[str]) -> Path:
    """The annotations file (or zarr store) named by ``source``, checked before any work.

    Parameters
    ----------
    source : str or os.PathLike
        A file, a folder holding a zarr store (its name ending in ``.zarr``, or holding
        zarr's metadata), or a folder of ``*.parquet`` part files (read only as counts in
        chunks: :func:`read_input` with ``lazy``).

    Returns
    -------
    pathlib.Path
        The path.

    Raises
    ------
    FileNotFoundError
        When nothing is at ``source``.
    ValueError
        When ``source`` is a folder that is neither a zarr store nor holds ``*.parquet``
        part files.

    Examples
    --------
    >>> check_input_path("no/such/answers.csv")
    Traceback (most recent call last):
    FileNotFoundError: input file 'no/such/answers.csv' does not exist; check the path
    """
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"input file '{source}' does not exist; check the path")
    if path.is_dir() and (path.suffix.lower() == ".zarr" or is_zarr_store(path)):
        return path
    if path.is_dir() and _parquet_parts(path):
        return path  # Parquet part files: counts in chunks (read_input says otherwise)
    if not path.is_file():
        raise ValueError(
            f"input '{source}' is not a file; give the path of an annotations file (a folder "
            "is read only as a zarr store of counts, --format zarr, or as *.parquet part "
            "files of counts, read in chunks)"
        )
    return path


def _part_folder_error(path: Path) -> ValueError:
    """The refusal of a folder of Parquet part files that is not read as counts in
    chunks."""
    return ValueError(
        f"{path.name!r} is a folder of Parquet part files, which is read only as counts in "
        "chunks: one row per item, one integer column per category (no column headed like "
        "the rater or label column of answers), the folder named *.parquet or "
        + say(
            "format='parquet', read in chunks (lazy=, ambppl.data.read_in_chunks)",
            "--format parquet, read by ambppl score",
        )
        + "; write other data to one file"
    )


def read_input(
    source: str | os.PathLike[str],
    *,
    answers: bool = False,
    lazy: int | None = None,
    chunk_items: int | None = None,
    format: str | None = None,
    item: Any = DEFAULT_ITEM,
    rater: Any = "worker",
    label: Any = "label",
    cant_solve: Any = None,
    progress: Callable[[str], Any] | None = None,
    per_category: Sequence[str] = (),
    **options: Any,
) -> xr.DataArray | pd.DataFrame | LazyCounts:
    """Read an annotations file for an estimator, in memory or in chunks as the file allows.

    Parameters
    ----------
    source : str or os.PathLike
        A file, a zarr store, or a folder of ``*.parquet`` part files of counts (with
        ``lazy`` only).
    answers : bool, default False
        Read one row per answer with the rater ids (:func:`ambppl.data.read_long`), for the
        models of answers (info record ``"data": "long"``, e.g. ``rater_effects``); always
        in memory (``lazy`` and ``chunk_items`` are then unused).
    lazy : int, optional
        Items per chunk: counts that open in chunks (:func:`ambppl.data.opens_in_chunks`: a
        zarr store; a Parquet file, or folder of part files, with the layout ``"counts"``
        in ``format``, or without a layout where it cannot be a table of answers: no label
        column, ``label``, no other column headed like the rater or label column of
        answers, ``worker``, ``annotator``, ``answer``, ...
        (:data:`ambppl.data.files.ANSWER_HEADERS`), and every column besides the item column
        holding integers) are opened lazily (:func:`ambppl.data.open_counts_in_chunks`);
        another Parquet file is read as its layout says, without one as answers (as
        :func:`ambppl.read_annotations` reads it). None reads every file into memory.
    chunk_items : int, optional
        With the layout ``"long"`` in ``format``, or no layout and a file that holds no
        counts (long is the readers' default layout): count the answers file with dask
        block by block (:func:`ambppl.data.count_long_in_chunks`; the counts are held in
        memory).
    format : str, optional
        As ``format=`` of :func:`ambppl.read_annotations`: a layout, a file type, or both.
    item, rater, label : column name or 0-based position
        As for :func:`ambppl.read_annotations`. For counts opened lazily, ``item`` names the
        Parquet file's item column; left at the default ``"task"`` the item column is found
        as :func:`ambppl.read_annotations` finds it in a count frame (a column ``task``, the
        stored index, or a column headed like item ids:
        :data:`ambppl.data.matrices.ID_HEADERS`), else the items are numbered from 0.
        Counts hold no rater ids.
    cant_solve : label, optional
        The can't-solve label (for counts opened lazily a label, else an integer position
        where no label has its text). None, the default, means the data's own: the counts'
        label if they carry one (a zarr store's ``attrs["cant_solve"]``), else none, which
        is how the ``ambppl`` command uses it (it passes None for an absent
        ``--cant-solve``). Unlike :func:`ambppl.read_annotations` and the readers in chunks,
        whose explicit ``cant_solve=None`` drops a store's label, this reader takes None as
        left out, so it cannot drop a store's own label: read the store with
        :func:`ambppl.read_annotations` (or :func:`ambppl.data.read_in_chunks`) and
        ``cant_solve=None`` for that.
    progress : callable, optional
        Called with one line saying what is read and how (``reading <path>``, ``... in chunks
        of N items (dask): M chunks`` with the sizes the chunks have, ``counting the answers
        in <path> with dask, block by block``); counts opened lazily without
        ``chunk_items`` that hold at most ``lazy`` items, which ``ambppl score`` then reads
        into memory, are said as ``reading <path>``.
    per_category : sequence of str, optional
        Names of the arguments given one value per category (the command line's
        ``--prior 1,1,2``): where given, ``progress`` also names the categories in the order
        those values are read, the reader's (the labels sorted, a count table's columns, the
        can't-solve category last), which is not always the file's column order.
    **options
        Further reader options: ``categories``, ``na_values`` and for text files ``sep``,
        ``comment``, ``header``, ``encoding`` (counts opened lazily take only
        ``categories``).

    Returns
    -------
    xarray.DataArray, pandas.DataFrame or LazyCounts
        Counts (:func:`ambppl.read_annotations` or :func:`ambppl.data.count_long_in_chunks`),
        the answers table (``answers``), or counts opened lazily (``lazy``).

    Raises
    ------
    FileNotFoundError, ValueError
        When ``source`` names no file or zarr store (:func:`check_input_path`).
    ValueError
        For a folder of Parquet part files that is not opened as counts in chunks (without
        ``lazy``, with ``answers``, or holding answers).
    ValueError, TypeError
        As the reader that reads the file.
    ImportError
        For counts in chunks without dask (or a zarr store without zarr).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "c.parquet"
    ...     pd.DataFrame({"item": ["a", "b"], "yes": [3, 1], "no": [0, 2]}).to_parquet(path)
    ...     lazy = read_input(path, lazy=1000)
    ...     counts = read_input(path, format="counts", item="item")
    ...     type(lazy).__name__, counts.values.tolist()
    ('LazyCounts', [[3, 0], [1, 2]])
    """

    data = _read_input_data(
        source, answers, lazy, chunk_items, format, item, rater, label, cant_solve, progress,
        options,
    )  # fmt: skip
    if per_category and progress is not None:
        progress(_category_order_line(per_category, data))
    return data


def _read_input_data(
    source: Any,
    answers: bool,
    lazy: int | None,
    chunk_items: int | None,
    format: str | None,
    item: Any,
    rater: Any,
    label: Any,
    cant_solve: Any,
    progress: Callable[[str], Any] | None,
    options: dict[str, Any],
) -> xr.DataArray | pd.DataFrame | LazyCounts:
    """:func:`read_input`'s reading, its arguments as they came."""
    path = check_input_path(source)
    say = progress if progress is not None else _silent
    columns = {"item": item, "rater": rater, "label": label, "cant_solve": cant_solve}
    # None: the counts' own label, if any (a table of answers carries none)
    own = _FROM_DATA if cant_solve is None else cant_solve
    chunked = (
        not answers and lazy is not None and opens_in_chunks(path, format, item=item, label=label)
    )
    if not chunked and path.is_dir() and _parquet_parts(path) and not is_zarr_store(path):
        raise _part_folder_error(path)
    if answers:
        say(f"reading {path}")
        return read_long(path, format=format, **columns, **options)
    if chunked:
        opened = open_counts_in_chunks(
            path,
            chunk_items=lazy,
            format=format,
            item=None if item == DEFAULT_ITEM else item,
            categories=options.get("categories"),
            cant_solve=own,
        )
        n_items = opened.n_items
        if chunk_items is None and n_items is not None and n_items <= lazy:
            say(f"reading {path}")  # one chunk's worth, which ambppl score reads into memory
        else:  # the chunks dask will read, from the metadata
            say(f"reading {path} {_chunking(opened, path)}")
        return opened
    layout, ftype = _parse_format(format)
    if chunk_items is not None and (
        layout == "long"
        # no layout: long, the readers' default, unless the file holds counts
        or (
            layout is None
            and not holds_counts(path, format)
            and not opens_in_chunks(path, format, item=item, label=label)
        )
    ):
        say(f"counting the answers in {path} with dask, block by block")
        columns.pop("rater")  # counts hold no rater ids
        told = "+".join(part for part in ("long", ftype) if part)
        return count_long_in_chunks(
            path, chunk_items=chunk_items, format=told, **columns, **options
        )
    say(f"reading {path}")
    return read_annotations(path, format=format, **{**columns, "cant_solve": own}, **options)


#: Categories a progress line names before it says how many more there are.
SHOWN_CATEGORIES = 20


def _category_order_line(per_category: Sequence[str], data: Any) -> str:
    """The progress line naming the categories of ``data`` in order, for the arguments
    ``per_category`` given one value per category; the can't-solve category marked."""
    categories = getattr(data, "categories", None)  # counts in chunks
    if categories is None and "category" in getattr(data, "coords", {}):
        categories = data["category"].values.tolist()
    if categories is None and "label" in getattr(data, "columns", ()):
        categories = list(data["label"].cat.categories)  # answers: the label's categories
    categories = list(categories or [])
    cs = getattr(data, "cant_solve", None)
    if cs is None:
        cs = getattr(data, "attrs", {}).get("cant_solve")
    shown = [f"{c} (can't solve)" if cs is not None and str(c) == str(cs) else str(c)
             for c in categories[:SHOWN_CATEGORIES]]  # fmt: skip
    more = len(categories) - len(shown)
    listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    given = " and ".join(per_category)
    return f"the values of {given} are read in the order of the categories: {listed}"


def _silent(message: str) -> None:
    """No progress lines."""
