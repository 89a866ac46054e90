"""``ambppl score`` on tables of answers that were read wrong (audit of the data readers,
2026-12, findings 3, 4, 8, 10, 11, 13 and 15): each now reads right, in memory and with
``--chunk-items`` alike, or gets one ``ambppl: error:`` line naming the option that fixes
it, exit status 2. Expected counts are counted by hand from the rows written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli_helpers import command_error_line, score_table

pytest.importorskip("dask")

FAST = ["--method", "exact", "--draws", "100", "--chains", "1", "--seed", "3", "-q"]
#: The routes of a file of answers: read into memory, or counted with dask block by block.
ROUTES = [[], ["--chunk-items", "2"]]
ROUTE_IDS = ["memory", "chunked"]


def _error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    return command_error_line(["score", *argv, *FAST], capsys)


def _score(argv: list[str], tmp_path: Path) -> pd.DataFrame:
    return score_table([*argv, *FAST], tmp_path)


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_a_wide_item_that_is_no_column_is_refused(tmp_path, capsys, route) -> None:
    path = tmp_path / "wq10.csv"
    path.write_text("r1,r2,r3,qid\n" + "".join(f"pos,neg,?,q{i}\n" for i in range(10)))
    argv = [str(path), "--layout", "wide", "--cant-solve", "?", *route]
    line = _error_line([*argv, "--item", "QID"], capsys)
    assert "item column 'QID' is not in the wide table 'wq10.csv'" in line
    assert "pass --item <one of them> or leave it out" in line
    # the right name: 10 items of 3 answers each (the qid column is no rater)
    table = _score([*argv, "--item", "qid"], tmp_path)
    assert table.index.tolist() == [f"q{i}" for i in range(10)]
    assert table["n_answers"].tolist() == [3] * 10


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_a_long_table_read_as_wide_is_refused(tmp_path, capsys, route) -> None:
    path = tmp_path / "custom.csv"
    path.write_text("tweet,annotator,answer\n1,a,pos\n1,b,neg\n2,a,pos\n2,b,?\n")
    line = _error_line([str(path), "--layout", "wide", "--item", "tweet", *route], capsys)
    assert "the item column 'tweet' of the wide table 'custom.csv' must hold one id per row" in line
    assert line.endswith(
        "it looks like a long table (one row per answer): pass --layout long with --item, "
        "--rater and --label naming its columns"
    )
    argv = [str(path), "--layout", "long", "--item", "tweet", "--rater", "annotator"]
    table = _score([*argv, "--label", "answer", *route], tmp_path)
    assert table["n_answers"].tolist() == [2, 2]


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_labels_that_differ_by_spaces_are_one(tmp_path, route) -> None:
    path = tmp_path / "wsl.csv"
    # written with ", ": " ?" is the can't-solve answer "?"
    path.write_text("task,worker,label\n1,a, ?\n1,b, pos\n2,a,?\n2,b,neg\n2,c, ?\n")
    table = _score([str(path), "--cant-solve", "?", *route], tmp_path)
    assert table["n_answers"].tolist() == [2, 3]
    # item 1: one "?" of 2 answers; item 2: two of 3 (before: " ?" was a proper class)
    np.testing.assert_allclose(table["cs_share"], [1 / 2, 2 / 3])
    spaced = _score([str(path), "--cant-solve", " ? ", *route], tmp_path)
    np.testing.assert_allclose(spaced["cs_share"], [1 / 2, 2 / 3])


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_na_values_naming_the_cant_solve_label_is_refused(tmp_path, capsys, route) -> None:
    path = tmp_path / "na.csv"
    path.write_text("task,worker,label\n1,a,x\n1,b,?\n2,a,y\n2,b,NA\n")
    argv = [str(path), "--cant-solve", "?", "--na-values", "NA,?", *route]
    line = _error_line(argv, capsys)
    assert line == (
        "ambppl: error: --na-values must not name the can't-solve label, but it names '?', "
        "which --cant-solve '?' gives: --na-values removes those answers as missing, so '?' "
        "could never be counted; drop '?' from --na-values"
    )
    table = _score([str(path), "--cant-solve", "?", "--na-values", "NA", *route], tmp_path)
    assert table["n_answers"].tolist() == [2, 1]


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_counts_read_as_answers_are_told_layout_counts(tmp_path, capsys, route) -> None:
    path = tmp_path / "c.csv"
    path.write_text("id,pos,neg,?\na,3,1,0\nb,0,2,2\n")
    line = _error_line([str(path), "--cant-solve", "?", *route], capsys)
    assert "item column 'task' is not in the data" in line
    assert "pass --item <one of them>; or, if the table holds counts" in line
    assert line.endswith("as its columns of whole numbers suggest, pass --layout counts")
    table = _score([str(path), "--layout", "counts", "--cant-solve", "?"], tmp_path)
    assert table["n_answers"].tolist() == [4, 4]


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_float32_labels_match_their_short_text(tmp_path, route) -> None:
    path = tmp_path / "f32.parquet"
    labels = np.array([0.1, 0.2, 0.7, 0.1, 0.7, 0.7], dtype=np.float32)
    frame = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": list("abcabc"), "label": labels})
    frame.to_parquet(path, index=False)
    # 0.7 is the label "0.7", not "0.699999988079071"
    table = _score([str(path), "--cant-solve", "0.7", *route], tmp_path)
    np.testing.assert_allclose(table["cs_share"], [1 / 3, 2 / 3])


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
def test_declared_categories_count_for_the_prior(tmp_path, route) -> None:
    # a categorical label column declares a category nobody gave: it is a zero column, so
    # the scores are those of the counts with that column (K = 4, not 3)
    path = tmp_path / "cat.parquet"
    labels = pd.Categorical(["neg", "pos", "?", "neg", "neg"], categories=["pos", "neg", "x", "?"])
    frame = pd.DataFrame({"task": [1, 1, 1, 2, 2], "worker": list("abcab"), "label": labels})
    frame.to_parquet(path, index=False, row_group_size=2)
    table = _score([str(path), "--cant-solve", "?", *route], tmp_path)
    with_zero = tmp_path / "counts4.csv"
    with_zero.write_text("id,pos,neg,x,?\n1,1,1,0,1\n2,0,2,0,0\n")
    expected = _score([str(with_zero), "--layout", "counts", "--cant-solve", "?"], tmp_path)
    without = tmp_path / "counts3.csv"
    without.write_text("id,pos,neg,?\n1,1,1,1\n2,0,2,0\n")
    other = _score([str(without), "--layout", "counts", "--cant-solve", "?"], tmp_path)
    np.testing.assert_allclose(table["exact_mean"], expected["exact_mean"])
    assert not np.allclose(table["exact_mean"], other["exact_mean"])  # K matters here
