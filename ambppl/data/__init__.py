"""The one data contract: any input becomes a labelled counts ``DataArray`` or an answers table.

Only this subpackage reads files or tells formats; everything else takes what it returns.

* ``files``: what a path holds (file types, layouts and suffixes of ``format=``, compression
  and encoding told by a file's first bytes, zarr stores; :func:`holds_counts` and
  :func:`opens_in_chunks` say how a path will be read) and one source read into a frame or an
  array (text with pandas, Parquet, ``.npy``, zarr), with messages that say what went wrong.
* ``labels``: cells as category labels and ids, ``na_values``, the category order.
* ``tables``: tables of answers (long, wide) counted; ``matrices``: count matrices labelled.
* ``readers``: :func:`read_annotations` (counts: item x category, labels as coordinates,
  ``attrs`` naming the can't-solve label, the source and reading options),
  :func:`read_long` (an answers table: item, rater, label), and :func:`read_input`, one path
  read as an estimator needs it (the ``ambppl`` command's one reader: counts, answers, counts
  opened lazily or answers counted in chunks; :func:`check_input_path` first).
* ``contract``: :func:`as_counts`, :func:`as_answers`, :func:`refuse_path` and
  :func:`refuse_read_options`, the conversion and refusals that estimators share.
* ``lazy`` and ``chunked``: counts too large for memory (:class:`LazyCounts`), opened lazily
  from zarr or Parquet (:func:`open_counts_in_chunks`), and long answers files counted with
  dask block by block (:func:`count_long_in_chunks`); :func:`read_in_chunks` picks one.
* ``examples``: the bundled data sets (:func:`example_path`).
"""

from ambppl.data.chunked import (
    CHUNK_ITEMS,
    CHUNK_READ_OPTIONS,
    count_long_in_chunks,
    open_counts_in_chunks,
    read_in_chunks,
)
from ambppl.data.contract import (
    READ_OPTIONS,
    as_answers,
    as_counts,
    count_values,
    describe,
    refuse_path,
    refuse_read_options,
)
from ambppl.data.examples import example_path
from ambppl.data.files import (
    COUNT_TYPES,
    FILE_TYPES,
    SUFFIXES,
    holds_counts,
    is_zarr_store,
    opens_in_chunks,
)
from ambppl.data.lazy import LazyCounts, from_dataarray
from ambppl.data.readers import (
    check_input_path,
    command_line_messages,
    read_annotations,
    read_input,
    read_long,
)

__all__ = [  # noqa: RUF022 - plain sorted() order, as in ambppl.__all__
    "CHUNK_ITEMS",
    "CHUNK_READ_OPTIONS",
    "COUNT_TYPES",
    "FILE_TYPES",
    "LazyCounts",
    "READ_OPTIONS",
    "SUFFIXES",
    "as_answers",
    "as_counts",
    "check_input_path",
    "command_line_messages",
    "count_long_in_chunks",
    "count_values",
    "describe",
    "example_path",
    "from_dataarray",
    "holds_counts",
    "is_zarr_store",
    "open_counts_in_chunks",
    "opens_in_chunks",
    "read_annotations",
    "read_in_chunks",
    "read_input",
    "read_long",
    "refuse_path",
    "refuse_read_options",
]
