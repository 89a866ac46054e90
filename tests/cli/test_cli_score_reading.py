"""``ambppl score`` on counts and Parquet files that were read wrong (audit of the data
readers, 2026-12, findings 1, 2, 9 and 12): a Parquet file of answers with integer columns
was scored as counts, an item-id column headed ``question`` was counted as a category,
repeated item ids were scored as separate items, and a damaged zarr store gave a bare JSON
parser error. Each now reads right, or gets one ``ambppl: error:`` line that says what to
do, exit status 2, as ``ambppl plan`` says it. Expected counts are written out from the rows
written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli_helpers import command_error_line, score_table

from ambppl.cli import main

pytest.importorskip("dask")

FAST = ["--method", "exact", "--seed", "3", "-q"]


def _error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    return command_error_line(argv, capsys)


def _score(argv: list[str], tmp_path: Path) -> pd.DataFrame:
    return score_table([*argv, *FAST], tmp_path)


# ------------------------------------------ 1: a Parquet file of answers, integer columns


@pytest.mark.parametrize(
    "columns", [("task_id", "worker_id", "label"), ("question", "annotator", "answer")]
)
@pytest.mark.parametrize("chunks", [[], ["--chunk-items", "2"]], ids=["default", "chunk-items"])
def test_score_refuses_parquet_answers_as_plan_does(tmp_path, capsys, columns, chunks) -> None:
    item, rater, label = columns
    path = tmp_path / "tid.parquet"
    frame = pd.DataFrame(
        {item: [1, 1, 1, 2, 2, 2], rater: [7, 8, 9, 7, 8, 9], label: [0, 1, 0, 2, 2, 1]}
    )
    frame.to_parquet(path, index=False)
    said = _error_line(["score", str(path), *FAST, *chunks, "-o", "-"], capsys)
    assert said == _error_line(["plan", str(path), "--budget", "3", "-q"], capsys)
    assert "item column 'task' is not in the data" in said and "--item" in said
    # its columns named: two items of 3 answers each (0,1,0 and 2,2,1), never six rows
    table = _score([str(path), "--item", item, "--rater", rater, "--label", label], tmp_path)
    assert table.index.tolist() == [1, 2] and table["n_answers"].tolist() == [3, 3]


def test_score_refuses_answers_under_other_headers_by_their_item_ids(tmp_path, capsys) -> None:
    # headers that do not say answers (user, value) beside the item column: its ids repeat,
    # which no count matrix does, and the message says how to read answers
    path = tmp_path / "iuv.parquet"
    frame = pd.DataFrame(
        {"item": [1, 1, 1, 2, 2, 2], "user": [7, 8, 9, 7, 8, 9], "value": [0, 1, 0, 2, 2, 1]}
    )
    frame.to_parquet(path, index=False)
    said = _error_line(["score", str(path), *FAST, "-o", "-"], capsys)
    assert "the ids [1, 2] occur on more than one row" in said
    assert said.endswith(
        "read it as answers: --layout long with --item, --rater and --label naming its columns"
    )
    table = _score(
        [str(path), "--layout", "long", "--item", "item", "--rater", "user", "--label", "value"],
        tmp_path,
    )
    assert table.index.tolist() == [1, 2] and table["n_answers"].tolist() == [3, 3]


def test_score_streams_a_parquet_file_of_counts(tmp_path) -> None:
    path = tmp_path / "counts.parquet"
    frame = pd.DataFrame({"item": ["a", "b", "c"], "pos": [3, 0, 1], "neg": [1, 2, 1]})
    frame.to_parquet(path, index=False)
    out = tmp_path / "scores.parquet"
    assert main(["score", str(path), *FAST, "--chunk-items", "2", "-o", str(out)]) == 0
    assert out.is_dir()  # a Parquet dataset: read and scored in chunks
    table = pd.read_parquet(out)
    assert table.index.tolist() == ["a", "b", "c"] and table["n_answers"].tolist() == [4, 2, 2]


# ---------------------------------------------- 2: an item-id column counted as a category


@pytest.mark.parametrize("header", ["question", "tweet_id"])
def test_score_takes_an_id_column_of_counts_for_the_items(tmp_path, header) -> None:
    path = tmp_path / "c_q.csv"
    path.write_text(f"{header},pos,neg,?\n1001,3,1,0\n1002,0,2,2\n")
    table = _score([str(path), "--layout", "counts", "--cant-solve", "?"], tmp_path)
    assert table.index.tolist() == [1001, 1002]
    assert table["n_answers"].tolist() == [4, 4]  # not 1005 and 1006
    assert table["cs_share"].tolist() == [0.0, 0.5]


# ------------------------------------------------------------- 9: repeated item ids refused


def test_score_refuses_repeated_item_ids_of_counts(tmp_path, capsys) -> None:
    path = tmp_path / "countsdup.csv"
    path.write_text("id,x,y\na,1,2\na,3,0\nb,1,1\n")
    said = _error_line(["score", str(path), "--layout", "counts", *FAST, "-o", "-"], capsys)
    assert "item ids must be distinct" in said and "the id 'a' occurs on more than one" in said
    assert "groupby('id').sum()" in said
    frame = pd.DataFrame({"item": ["a", "b", "a"], "yes": [1, 2, 3], "no": [0, 1, 1]})
    frame.to_parquet(tmp_path / "dup.parquet", index=False)
    said = _error_line(["score", str(tmp_path / "dup.parquet"), *FAST, "-o", "-"], capsys)
    assert "the id 'a' occurs on more than one row" in said


# ---------------------------------------------------------------- 12: a damaged zarr store


def test_score_refuses_a_damaged_zarr_store_with_the_file(tmp_path, capsys) -> None:
    xr = pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    path = tmp_path / "s.zarr"
    counts = xr.DataArray(np.array([[3, 1], [0, 2]]), dims=("item", "category"), name="counts")
    counts.to_dataset().to_zarr(path, consolidated=False)
    meta = path / "zarr.json" if (path / "zarr.json").exists() else path / ".zgroup"
    meta.write_text("{'attributes': {}}")  # single quotes: not JSON
    said = _error_line(["score", str(path), *FAST, "-o", "-"], capsys)
    assert said.startswith(
        f"ambppl: error: could not read 's.zarr' as ZARR: its metadata file '{meta.name}' "
        "must hold a JSON object, but got text that is not JSON"
    )
    assert "the store is damaged" in said and "write it again" in said
    assert said == _error_line(["plan", str(path), "--budget", "1", "-q"], capsys)
