"""Files read in chunks (ambppl/data/chunked.py) refused as when read whole: a zarr store of
counts that is not 2-D, and a long answers file counted with dask (``read_in_chunks`` with
``format="long"``, ``ambppl score --layout long --chunk-items``) with a blank item id, a row
with a field too many, a header cell written twice, no answers. One mistake, one error: the
same type and message as :func:`ambppl.read_annotations`, and on the command line one line,
exit status 2."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ambppl import read_annotations
from ambppl.cli import main
from ambppl.data import count_long_in_chunks, open_counts_in_chunks, read_in_chunks

pytest.importorskip("dask.dataframe")

HEADER = "task,worker,label"


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The single stderr line of a failed call, without its prefix."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("ambppl: error: ") and "Traceback" not in err, err
    return lines[0]


def _refusal(read, *args, **kwargs) -> tuple[type, str]:
    with pytest.raises((ValueError, TypeError)) as info:
        read(*args, **kwargs)
    return info.type, str(info.value)


def _rows(rng: np.random.Generator, n: int, end: str = "") -> list[str]:
    """``n`` well-formed answers ``item,rater,label`` (every line ending with ``end``)."""
    return [
        f"t{rng.integers(n // 4 + 1)},w{rng.integers(9)},{rng.choice(['pos', 'neg'])}{end}"
        for _ in range(n)
    ]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


# ------------------------------------------------------------------ zarr counts, not 2-D


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_zarr_counts_that_are_not_2d_are_refused_as_in_memory(shape, tmp_path, capsys):
    pytest.importorskip("zarr")
    rng = np.random.default_rng(7)
    dims = ("item", "category", "x")[: len(shape)]
    counts = xr.DataArray(rng.integers(0, 5, size=shape), dims=dims, name="counts")
    store = tmp_path / "c.zarr"
    counts.to_dataset().to_zarr(store, consolidated=False)
    expected = f"counts must be 2-D (item x category), but got dims {dims!r} of shape {shape!r}"
    whole = _refusal(read_annotations, store)
    assert whole == (ValueError, expected)
    assert _refusal(open_counts_in_chunks, store, chunk_items=1) == whole
    assert _refusal(read_in_chunks, store, chunk_items=2) == whole
    for chunked in ([], ["--chunk-items", "1"]):  # score reads a zarr store in chunks
        assert main(["score", str(store), *chunked, "-q", "-o", "-"]) == 2
        assert _error_line(capsys) == f"ambppl: error: {whole[1]}"


def test_bare_zarr_array_that_is_not_2d_is_refused_as_in_memory(tmp_path, capsys):
    zarr = pytest.importorskip("zarr")
    rng = np.random.default_rng(8)
    store = tmp_path / "bare.zarr"
    zarr.save_array(str(store), rng.integers(0, 5, size=4))
    whole = _refusal(read_annotations, store)
    assert whole == (
        ValueError,
        "counts must be a 2-D array (items x categories), but got shape (4,)",
    )
    assert _refusal(open_counts_in_chunks, store, chunk_items=2) == whole
    assert main(["score", str(store), "-q", "-o", "-"]) == 2
    assert _error_line(capsys) == f"ambppl: error: {whole[1]}"


# ------------------------------------------------------- long answers counted in chunks

#: (name, the lines of the file, what the refusal says); ``{rows}`` stands for good answers.
LONG_MISTAKES = [
    (
        "blank_item",
        [HEADER, "{rows}", ",w1,pos", "{rows}"],
        r"item column 'task' must have an id on every answer, but 1 answer\(s\) have none "
        r"\(first at row 12\); fill in or drop those rows",
    ),
    (
        "blank_item_with_the_only_neg",  # its label still counts for the categories
        [HEADER, "t1,w1,pos", ",w2,neg", "t2,w1,pos"],
        r"item column 'task' must have an id on every answer, but 1 answer\(s\) have none "
        r"\(first at row 1\)",
    ),
    (
        "extra_field_on_the_first_row",
        [HEADER, "t0,w1,pos,EXTRA", "{rows}"],
        r"its first row has 4 fields but the header line names 3 "
        r"\(\['task', 'worker', 'label'\]\), so every column would shift by one",
    ),
    (
        "extra_field_on_a_later_row",
        [HEADER, "{rows}", "t0,w1,pos,EXTRA", "{rows}"],
        r"\(Error tokenizing data\. C error: Expected 3 fields in line 14, saw 4\); check "
        r"that every row has the same number of fields",
    ),
    (
        "label_column_twice",
        ["task,worker,label,label", "t0,w1,pos,neg", "t1,w1,neg,neg", "t1,w2,pos,pos"],
        r"label column 'label' occurs 2 times in the header, so which one holds the labels "
        r"is ambiguous",
    ),
    (
        "empty",
        ["", ""],
        r"could not read 'empty\.csv' as CSV: it is empty \(no header line and no answers, "
        r"only blank lines\)",
    ),
    (
        "header",
        [HEADER],
        r"'header\.csv' has no answers: it holds only a header line "
        r"\['task', 'worker', 'label'\]",
    ),
]


@pytest.mark.parametrize(
    ("name", "lines", "expected"), LONG_MISTAKES, ids=[c[0] for c in LONG_MISTAKES]
)
def test_long_mistakes_counted_in_chunks_are_refused_as_in_memory(
    name, lines, expected, tmp_path, capsys
):
    rng = np.random.default_rng(11)
    rows = _rows(rng, 12)
    lines = [r for line in lines for r in (rows if line == "{rows}" else [line])]
    path = _write(tmp_path / f"{name}.csv", lines)
    whole = _refusal(read_annotations, path)
    assert whole[0] is ValueError and re.search(expected, whole[1]), whole
    assert _refusal(read_in_chunks, path, chunk_items=2, format="long") == whole
    assert _refusal(count_long_in_chunks, path, chunk_items=2) == whole
    assert main(["score", str(path), "--layout", "long", "-q", "-o", "-"]) == 2
    in_memory = _error_line(capsys)
    argv = ["score", str(path), "--layout", "long", "--chunk-items", "2", "-q", "-o", "-"]
    assert main(argv) == 2
    assert _error_line(capsys) == in_memory


def test_parquet_answers_counted_in_chunks_are_refused_as_in_memory(tmp_path, capsys):
    """A null item id and a file without rows, in Parquet."""
    rng = np.random.default_rng(12)
    labels = rng.choice(["pos", "neg"], size=9)
    items = pd.array([f"t{k}" for k in rng.integers(3, size=9)], dtype=object)
    items[5] = None
    cases = [
        (pd.DataFrame({"task": items, "label": labels}), r"\(first at row 5\)"),
        (pd.DataFrame({"task": items[:0], "label": labels[:0]}), r"has no rows"),
    ]
    for frame, expected in cases:
        path = tmp_path / "a.parquet"
        frame.to_parquet(path, row_group_size=2)
        whole = _refusal(read_annotations, path, rater=None)
        assert re.search(expected, whole[1]), whole
        assert _refusal(read_in_chunks, path, chunk_items=2, format="long") == whole
        assert main(["score", str(path), "--no-rater", "-q", "-o", "-"]) == 2
        in_memory = _error_line(capsys)
        argv = ["score", str(path), "--layout", "long", "--chunk-items", "2", "--no-rater"]
        assert main([*argv, "-q", "-o", "-"]) == 2
        assert _error_line(capsys) == in_memory


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """dask reads text files in blocks of 2000 bytes (about 150 answers), not 64 MB."""
    import dask.dataframe as dd

    read_csv = dd.read_csv

    def read_in_small_blocks(*args, **kwargs):
        kwargs.setdefault("blocksize", 2000)
        return read_csv(*args, **kwargs)

    monkeypatch.setattr(dd, "read_csv", read_in_small_blocks)


@pytest.mark.usefixtures("small_blocks")
def test_mistakes_deep_in_a_file_of_many_blocks_are_refused_as_in_memory(tmp_path):
    """A mistake in any block, at any place in it, is refused with the row or line counted
    over the whole file, as read_annotations counts it; rows that end with a delimiter are
    read in every block."""
    rng = np.random.default_rng(13)
    rows = _rows(rng, 1200)
    trailing = _rows(rng, 1200, end=",")
    for where in (700, 701, 702, 703, 704, 705):  # one of them starts a block
        cases = {
            "later_extra": (
                [*rows[:where], rows[where] + ",x", *rows[where + 1 :]],
                f"Expected 3 fields in line {where + 2}, saw 4",
            ),
            "later_trailing": (
                [*rows[:where], rows[where] + ",", *rows[where + 1 :]],
                f"Expected 3 fields in line {where + 2}, saw 4",
            ),
            "trailing_filled": (
                [*trailing[:where], trailing[where] + "x", *trailing[where + 1 :]],
                "its first row has 4 fields but the header line names 3",
            ),
            "blank_item": (
                [*rows[:where], ",w1,pos", *rows[where + 1 :]],
                f"1 answer(s) have none (first at row {where})",
            ),
        }
        for name, (body, expected) in cases.items():
            path = _write(tmp_path / f"{name}.csv", [HEADER, *body])
            whole = _refusal(read_annotations, path)
            assert expected in whole[1], (name, where, whole)
            assert _refusal(count_long_in_chunks, path) == whole, (name, where)
    path = _write(tmp_path / "trailing.csv", [HEADER, *trailing])
    counts = count_long_in_chunks(path)
    xr.testing.assert_equal(counts, read_annotations(path).sortby("item").drop_attrs())
    assert counts.sum().item() == len(trailing)
