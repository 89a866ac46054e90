"""The one data contract: any input becomes a labelled counts ``DataArray`` or an answers table.

``readers`` turns paths, frames and arrays into counts (item x category, labels as
coordinates, ``attrs`` naming the can't-solve label, the source and reading options) or an
answers table (item, rater, label); ``lazy`` opens chunked sources (Parquet, zarr, long files)
without reading them whole. Nothing else in ambppl sniffs formats.
"""

from ambppl.data.contract import READ_OPTIONS, as_answers, as_counts, refuse_read_options
from ambppl.data.readers import (
    command_line_messages,
    example_path,
    read_annotations,
    read_long,
)

__all__ = [
    "READ_OPTIONS",
    "as_answers",
    "as_counts",
    "refuse_read_options",
    "command_line_messages",
    "example_path",
    "read_annotations",
    "read_long",
]
