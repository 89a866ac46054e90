"""A Parquet file of counts is read in chunks of ``chunk_items`` rows whatever its row groups
(ambppl/data/chunked.py), and ``ambppl score`` says the chunks it reads (ambppl/data/readers.py)
and what ``--chunk-items`` gives on screen (ambppl/cli/score.py). Found by an audit (2027-01):
chunks were whole row groups, so ``--chunk-items 200000`` on a file of 1,048,576 + 451,424
rows scored 2 chunks (the scoring memory followed the row groups, not the option) while the
progress line said "in chunks of 200000 items"; it said "in chunks of 1000000 items (dask)"
for a 50-item file then read into memory; and the help said "no rank column" where ``-o -``
writes a ranked table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import ambppl
from ambppl.cli import main
from ambppl.data import open_counts_in_chunks, read_in_chunks

pytest.importorskip("dask.dataframe")

COLUMNS = ["a", "b", "c", "cs"]


def _frame(n_items: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(6, rng.dirichlet([1, 1, 1, 0.4], size=n_items))
    frame = pd.DataFrame(counts, columns=COLUMNS)
    frame.insert(0, "item", [f"t{k:03d}" for k in range(n_items)])
    return frame


@pytest.fixture
def grouped(tmp_path: Path) -> Path:
    """50 items in row groups of 30 and 20."""
    path = tmp_path / "grouped.parquet"
    _frame(50, 5).to_parquet(path, index=False, row_group_size=30)
    meta = pq.ParquetFile(path).metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [30, 20]
    return path


def _block_rows(lazy) -> tuple[list[int], list[int]]:
    """The rows each chunk of counts and of item labels holds once read."""
    values = [block.compute().shape[0] for block in lazy.values.to_delayed()[:, 0]]
    items = [block.compute().shape[0] for block in lazy.items.to_delayed()]
    return values, items


def test_chunks_cut_row_groups(grouped: Path) -> None:
    whole = ambppl.read_annotations(grouped, format="counts", item="item", cant_solve="cs")
    for chunk_items, sizes in (
        (8, (8, 8, 8, 8, 8, 8, 2)),  # within and across the row groups
        (30, (30, 20)),  # the row groups themselves: each read whole
        (45, (45, 5)),
        (100, (50,)),
    ):
        lazy = read_in_chunks(grouped, chunk_items=chunk_items, cant_solve="cs")
        assert lazy.values.chunks[0] == sizes
        assert _block_rows(lazy) == (list(sizes), list(sizes))  # each reads its own rows
        np.testing.assert_array_equal(lazy.values.compute(), whole.values)
        np.testing.assert_array_equal(lazy.items.compute(), whole["item"].values)


def test_part_files_are_cut_each_on_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = _frame(50, 6)
    frame.iloc[:25].to_parquet(folder / "part.0.parquet", index=False, row_group_size=10)
    frame.iloc[25:].to_parquet(folder / "part.1.parquet", index=False, row_group_size=10)
    lazy = open_counts_in_chunks(folder, chunk_items=12, format="parquet")
    assert lazy.values.chunks[0] == (12, 12, 1, 12, 12, 1)
    np.testing.assert_array_equal(lazy.values.compute(), frame[COLUMNS].to_numpy())
    np.testing.assert_array_equal(lazy.items.compute(), frame["item"].to_numpy())


def test_a_bad_count_is_named_at_its_row_in_a_cut_row_group(tmp_path: Path) -> None:
    frame = _frame(50, 7)
    frame.loc[37, "b"] = -1
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=False, row_group_size=30)
    lazy = open_counts_in_chunks(path, chunk_items=4)
    with pytest.raises(ValueError, match=r"row 37") as caught:
        lazy.values.compute()
    assert "'b'" in str(caught.value)


def test_scores_of_cut_row_groups_are_those_in_memory(grouped: Path) -> None:
    whole = ambppl.read_annotations(grouped, format="counts", item="item", cant_solve="cs")
    eager = ambppl.score(whole, random_seed=3)
    lazy = ambppl.score(read_in_chunks(grouped, chunk_items=8, cant_solve="cs"), random_seed=3)
    assert lazy.table.npartitions == 7
    pd.testing.assert_frame_equal(lazy.compute(), eager, check_names=False)


def _said(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_the_progress_line_says_the_chunks_read(grouped: Path, tmp_path: Path, capsys) -> None:
    argv = ["score", str(grouped), "--cant-solve", "cs", "--seed", "1"]
    assert main([*argv, "--chunk-items", "8", "-o", str(tmp_path / "s.csv")]) == 0
    said = _said(capsys)
    assert f"reading {grouped} in chunks of 8 items (dask): 7 chunks, the last of 2 items" in said
    assert "scoring 7 chunks of counts" in said
    assert main([*argv, "--chunk-items", "10", "-o", str(tmp_path / "t.csv")]) == 0
    assert f"reading {grouped} in chunks of 10 items (dask): 5 chunks ambppl:" in _said(capsys)
    # without --chunk-items 50 items are read into memory: no word of chunks
    assert main([*argv, "-o", str(tmp_path / "u.csv")]) == 0
    said = _said(capsys)
    assert f"reading {grouped} ambppl:" in said and "chunk" not in said


def test_the_help_says_what_chunk_items_writes_to_stdout(grouped: Path, capsys) -> None:
    assert main(["score", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "chunks of this many items (a Parquet file's whatever its row groups" in help_text
    assert (
        "on screen or with -o -, the whole table is collected in memory and written ranked, "
        "with a rank column" in help_text
    )
    # as it says: -o - writes every item ranked, with the rank column
    argv = ["score", str(grouped), "--cant-solve", "cs", "--chunk-items", "10", "--seed", "1"]
    assert main([*argv, "-o", "-", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split(",")[-1] == "rank" and len(lines) == 51
    ranks = [int(line.split(",")[-1]) for line in lines[1:]]
    assert ranks == list(range(1, 51))
