"""The input options of the ``ambppl`` command (ambppl/cli/options.py, ambppl/cli/inputs.py):
``--format``, ``--sep``, ``--comment``, ``--no-header``, ``--no-rater``; every mistake
answered in one line that names the option that fixes it (never a Python keyword), exit
status 2."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ambppl.cli import main

FAST = ["--method", "exact", "--draws", "100", "--chains", "1", "--seed", "3", "-q"]

#: Python keywords that a command-line user cannot type.
PYTHON_SPELLING = re.compile(r"\b(format|header|comment|sep|item|rater|label|cant_solve)=")


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The single stderr line of a failed call: no traceback, no Python keyword."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("ambppl: error: "), err
    assert not PYTHON_SPELLING.search(lines[0]), lines[0]
    return lines[0]


@pytest.fixture
def answers(rng: np.random.Generator) -> pd.DataFrame:
    rows = [
        (f"w{w}", f"t{i:02d}", rng.choice(["cat", "dog", "skip"]))
        for i in range(10)
        for w in rng.choice(8, size=5, replace=False)
    ]
    rows += [("w0", "t00", label) for label in ("cat", "dog", "skip")]
    return pd.DataFrame(rows, columns=["worker", "task", "label"])


@pytest.fixture
def reference(answers: pd.DataFrame, tmp_path: Path) -> pd.DataFrame:
    """The score table of the same answers in a CSV file with a header line."""
    path = tmp_path / "with_header.csv"
    answers.to_csv(path, index=False)
    out = tmp_path / "reference.csv"
    assert main(["score", str(path), "--cant-solve", "skip", *FAST, "-o", str(out)]) == 0
    return pd.read_csv(out, index_col="item")


def _score(argv: list[str], tmp_path: Path) -> pd.DataFrame:
    out = tmp_path / "out.csv"
    assert main(["score", *argv, *FAST, "-o", str(out), "--force"]) == 0
    return pd.read_csv(out, index_col="item")


def test_headerless_txt_by_positions(answers, reference, tmp_path, capsys):
    path = tmp_path / "answers.txt"
    answers.to_csv(path, sep="\t", header=False, index=False)
    assert main(["score", str(path), *FAST]) == 2
    line = _error_line(capsys)
    assert "--format csv|tsv|parquet|npy|zarr" in line and "pass --format tsv" in line
    assert main(["score", str(path), "--format", "tsv", *FAST]) == 2
    line = _error_line(capsys)
    assert "pass --item <one of them>" in line and "pass --no-header" in line
    assert main(["score", str(path), "--format", "tsv", "--no-header", *FAST]) == 2
    assert "--no-header, --item must be the 0-based position" in _error_line(capsys)
    positions = ["--no-header", "--item", "1", "--rater", "0", "--label", "2"]
    for how in (["--format", "tsv"], ["--sep", "\\t"], ["--sep", "tab"]):
        table = _score([str(path), *how, *positions, "--cant-solve", "skip"], tmp_path)
        pd.testing.assert_frame_equal(table, reference)
    # without --rater: no rater ids, the same counts
    table = _score(
        [
            str(path),
            "--format",
            "tsv",
            "--no-header",
            "--item",
            "1",
            "--label",
            "2",
            "--cant-solve",
            "skip",
        ],
        tmp_path,
    )
    pd.testing.assert_frame_equal(table, reference)


def test_integer_columns_are_integers(reference):
    assert reference["n_answers"].dtype.kind == "i"
    assert reference["rank"].dtype.kind == "i"


def test_csv_with_comment_lines(answers, reference, tmp_path, capsys):
    path = tmp_path / "commented.csv"
    path.write_text("# pilot, 2024\n# labels: cat, dog, skip\n" + answers.to_csv(index=False))
    assert main(["score", str(path), "--cant-solve", "skip", *FAST]) == 2
    assert "pass --comment '#'" in _error_line(capsys)
    table = _score([str(path), "--comment", "#", "--cant-solve", "skip"], tmp_path)
    pd.testing.assert_frame_equal(table, reference)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--comment", "##"], "argument --comment: must be one character"),
        (["--sep", ""], "argument --sep: must be the field separator"),
        (["--format", "xlsx"], "argument --format: invalid choice: 'xlsx'"),
        (["--no-header", "--item", "x"], "--item must be the 0-based position"),
        (["--no-header", "--item", "-1", "--label", "2"], "--item must be the 0-based position"),
        (["--no-rater", "--rater", "w"], "--no-rater and --rater w contradict"),
        (["--rater", "annotator"], "(or --no-rater if the data have no rater ids)"),
        (["--label", "answer"], "pass --label <one of them>"),
        (["--cant-solve", "maybe"], "--cant-solve must be a label that occurs"),
        (["--format", "npy"], "could not read 'a.csv' as NPY"),
        (["--format", "parquet", "--sep", ";"], "--sep applies to text files (CSV, TSV)"),
        (["--layout", "counts", "--format", "npy", "--no-header"], "--no-header applies to text"),
    ],
)
def test_input_mistakes_name_the_option(answers, tmp_path, capsys, extra, expected):
    path = tmp_path / "a.csv"
    answers.to_csv(path, index=False)
    assert main(["score", str(path), *extra, *FAST]) == 2
    assert expected in _error_line(capsys)


def test_no_rater(answers, reference, tmp_path):
    path = tmp_path / "no_raters.csv"
    answers.drop(columns="worker").to_csv(path, index=False)
    table = _score([str(path), "--no-rater", "--cant-solve", "skip"], tmp_path)
    pd.testing.assert_frame_equal(table, reference)


def test_headerless_wide_csv(rng, tmp_path, capsys):
    cells = np.full((9, 4), "", dtype=object)
    for i in range(9):
        cells[i, rng.choice(4, size=3, replace=False)] = rng.choice(["cat", "dog", "skip"], 3)
    cells[0, :3] = ["cat", "dog", "skip"]
    path = tmp_path / "wide.csv"
    path.write_text("".join(",".join(row) + "\n" for row in cells))
    assert main(["score", str(path), "--layout", "wide", *FAST]) == 2
    assert "looks like answers, not rater names" in (line := _error_line(capsys))
    assert "pass --no-header" in line
    table = _score([str(path), "--layout", "wide", "--no-header", "--cant-solve", "skip"], tmp_path)
    assert sorted(table.index) == list(range(9))  # every line is an item
    assert table.loc[0, "n_answers"] == 3


def test_wide_header_of_labels_is_a_warning_line(tmp_path, capsys):
    path = tmp_path / "wide.csv"
    path.write_text("1,2,3\n1,2,1\n3,3,2\n2,1,1\n")
    out = tmp_path / "s.csv"
    assert main(["score", str(path), "--layout", "wide", *FAST, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: the rater names ['1', '2', '3']") and "--no-header" in err
    assert len(pd.read_csv(out)) == 3


def test_zarr_store(tmp_path, capsys):
    """Counts in a zarr store, read whole (``ambppl plan``; ``score`` reads them in chunks)."""
    pytest.importorskip("zarr")
    counts = xr.DataArray(
        np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]]),
        dims=("item", "category"),
        coords={"item": ["a", "b", "c"], "category": ["yes", "no", "?"]},
        name="counts",
    )
    store = tmp_path / "counts.zarr"
    counts.to_dataset().to_zarr(store, consolidated=False)
    out = tmp_path / "plan.csv"
    argv = ["plan", str(store), "--cant-solve", "?", "--budget", "2", "-q", "-o", str(out)]
    assert main(argv) == 0
    assert pd.read_csv(out, index_col="item")["n_answers"].to_dict() == {"a": 4, "b": 4, "c": 3}
    plain = tmp_path / "store"
    store.rename(plain)
    argv = ["plan", str(plain), "--format", "zarr", "--budget", "2", "-q", "-o", str(out)]
    assert main([*argv, "--force"]) == 0
    folder = tmp_path / "folder"
    folder.mkdir()
    assert main(["plan", str(folder), "--budget", "1", "-q"]) == 2
    assert "a folder is read only as a zarr store of counts, --format zarr" in _error_line(capsys)
    assert main(["plan", str(plain), "--layout", "wide", "--budget", "1", "-q"]) == 2
    assert "--layout wide does not fit a zarr store" in _error_line(capsys)
    text = tmp_path / "a.csv"
    text.write_text("task,worker,label\n1,a,x\n1,b,y\n")
    assert main(["plan", str(text), "--format", "zarr", "--budget", "1", "-q"]) == 2
    assert "could not read 'a.csv' as ZARR" in _error_line(capsys)


# ----------------------------------------------------------------------------- issue 25


NA_LIKE = "task,worker,label\n1,a,N/A\n1,b,pos\n2,a,NA\n2,b,None\n3,a,null\n3,b,pos\n3,c,neg\n"


def _answers_per_item(argv: list[str], tmp_path: Path) -> dict:
    table = _score(argv, tmp_path)
    return {item: int(n) for item, n in table["n_answers"].items()}


@pytest.mark.parametrize("chunked", [[], ["--layout", "long", "--chunk-items", "2"]])
def test_na_like_labels_count_and_na_values_drops_them(tmp_path, chunked):
    path = tmp_path / "na.csv"
    path.write_text(NA_LIKE)
    # every row is an answer (reference: the 7 rows written above); N/A occurs and is last
    assert _answers_per_item([str(path), "--cant-solve", "N/A", *chunked], tmp_path) == {
        1: 2,
        2: 2,
        3: 3,
    }
    # named missing: comma-separated and repeated
    argv = [str(path), "--na-values", "N/A,NA", "--na-values", "null", *chunked]
    assert _answers_per_item(argv, tmp_path) == {1: 1, 2: 1, 3: 2}


def test_header_line_with_no_header_is_refused(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text("task,worker,label\n1,2,pos\n1,3,neg\n2,2,pos\n")
    argv = ["score", str(path), "--no-header", "--item", "0", "--rater", "1", "--label", "2"]
    assert main([*argv, *FAST]) == 2
    line = _error_line(capsys)
    assert "looks like a header line, not an answer" in line
    assert line.endswith(
        "drop --no-header and name the columns (--item task --rater worker --label label)"
    )


def test_long_file_with_layout_wide_is_refused(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_text("task,worker,label\n1,a,pos\n1,b,neg\n2,a,pos\n")
    assert main(["score", str(path), "--layout", "wide", *FAST]) == 2
    assert "leave out --layout wide to read one row per answer" in _error_line(capsys)


def test_ids_are_printed_as_written(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("task,worker,label\n007,a,x\n7,b,y\n1e3,a,x\n1000,b,y\n7.0,a,x\n")
    out = tmp_path / "s.csv"
    assert main(["score", str(path), *FAST, "-o", str(out)]) == 0
    assert sorted(pd.read_csv(out, dtype=str)["item"]) == ["007", "1000", "1e3", "7", "7.0"]


GOOD = "task,worker,label\n1,a,café\n1,b,neg\n2,a,neg\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            GOOD.encode("latin-1"),
            "it is not UTF-8 text (its byte 0xe9 does not decode as UTF-8); "
            "if it is Latin-1 or Windows-1252 text pass --encoding latin-1",
        ),
        (b'[{"task": 1}]', "it holds JSON, which is not read; convert it to a CSV file"),
        (b"task,worker,label\n", "'a.csv' has no answers: it holds only a header line"),
        (bytes(range(256)), "it is not a text file (it holds binary data: NUL bytes)"),
        (b"PAR1\x00", "it is a Parquet file, not text; pass --format parquet"),
    ],
    ids=["latin-1", "json", "header-only", "binary", "parquet"],
)
def test_files_that_are_not_csv_are_named(content, expected, tmp_path, capsys):
    path = tmp_path / "a.csv"
    path.write_bytes(content)
    assert main(["score", str(path), *FAST]) == 2
    assert expected in _error_line(capsys)


def test_encodings_and_gzip_are_read(tmp_path, capsys):
    import gzip

    reference = {1: 2, 2: 1}  # the 3 rows of GOOD
    for name, content in [
        ("u16.csv", GOOD.encode("utf-16")),
        ("gz.csv", gzip.compress(GOOD.encode())),
    ]:
        (tmp_path / name).write_bytes(content)
        assert _answers_per_item([str(tmp_path / name)], tmp_path) == reference
    (tmp_path / "l1.csv").write_bytes(GOOD.encode("latin-1"))
    assert (
        _answers_per_item([str(tmp_path / "l1.csv"), "--encoding", "latin-1"], tmp_path)
        == reference
    )
    assert main(["score", str(tmp_path / "l1.csv"), "--encoding", "nope", *FAST]) == 2
    assert "argument --encoding: must be a text encoding" in _error_line(capsys)


def test_npy_format_on_a_csv_says_it_is_not_npy(tmp_path, capsys):
    path = tmp_path / "a.csv"
    path.write_text(GOOD)
    assert main(["score", str(path), "--format", "npy", *FAST]) == 2
    line = _error_line(capsys)
    assert "it is not a NumPy .npy file" in line and "pass --format csv or tsv" in line
    assert "allow_pickle" not in line


@pytest.mark.parametrize("streamed", [[], ["--chunk-items", "1"], ["--layout", "counts"]])
def test_bad_parquet_counts_are_named(tmp_path, capsys, streamed):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cases = [
        ({"item": [1, 2], "a": [2**62, 1], "b": [2**62, 1]}, "must be at most 2**53"),
        (
            {"item": [1, 2], "a": pa.array([None, 1], pa.int64()), "b": [3, 1]},
            "a count is missing (NaN: an empty cell or a null)",
        ),
        (
            {
                "item": pa.array([], pa.int64()),
                "a": pa.array([], pa.int64()),
                "b": pa.array([], pa.int64()),
            },
            "has no rows",
        ),
    ]
    for columns, expected in cases:
        path = tmp_path / "c.parquet"
        pq.write_table(pa.table(columns), path)
        assert main(["score", str(path), *streamed, *FAST]) == 2
        line = _error_line(capsys)
        assert expected in line and "-9.2e" not in line and "concatenate" not in line


def test_headerless_answers_counted_in_chunks_by_positions(tmp_path, capsys):
    """``--layout long --chunk-items`` with ``--no-header``: the columns by position (dask's
    groupby took the list of positions for something else: item ids counted as labels), and
    a header line read as an answer refused as in memory."""
    path = tmp_path / "a.csv"
    path.write_text("w1,007,pos\nw2,007,neg\nw1,8,neg\n")
    chunked = ["--layout", "long", "--chunk-items", "2"]
    positions = ["--no-header", "--item", "1", "--rater", "0", "--label", "2"]
    out = tmp_path / "s.csv"
    assert main(["score", str(path), *chunked, *positions, *FAST, "-o", str(out)]) == 0
    table = pd.read_csv(out, dtype=str)
    # reference: the 3 rows above; the id 007 as written
    assert dict(zip(table["item"], table["n_answers"], strict=True)) == {"007": "2", "8": "1"}
    path.write_text("worker,task,label\nw1,007,pos\nw2,007,neg\nw1,8,neg\n")
    assert main(["score", str(path), *chunked, *positions, *FAST]) == 2
    assert "drop --no-header and name the columns" in _error_line(capsys)
