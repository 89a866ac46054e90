"""Reading mistakes that once gave a result: each now reads right or gets one clear error.

Found by an audit of the readers with a new user's files (2026-12-02): a count table written
by ``DataFrame.to_csv`` counted its index as a category, one column could hold two roles, a
masked array lost its mask, and cells holding lists or a file with another separator gave
messages that named no fix.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ambppl.cli import main
from ambppl.data.readers import read_annotations, read_long

COUNTS = pd.DataFrame({"a": [1, 2], "b": [2, 3]}, index=pd.Index([101, 102]))


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``ambppl`` prints for ``argv``, which must exit 2 without a traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ambppl: error: "), err
    return err[0]


@pytest.mark.parametrize("header", ["", "id", "item", "Item_ID", "index"])
def test_a_first_id_column_of_counts_holds_the_item_ids(tmp_path: Path, header: str) -> None:
    # DataFrame.to_csv writes the index under an empty header; reset_index() names it "index"
    path = tmp_path / "counts.csv"
    COUNTS.rename_axis(header or None).to_csv(path)
    counts = read_annotations(path, format="counts")
    assert counts["category"].values.tolist() == ["a", "b"]
    assert counts["item"].values.tolist() == [101, 102]
    assert counts.values.tolist() == [[1, 2], [2, 3]]  # not [[101, 1, 2], [102, 2, 3]]
    frame = COUNTS.rename_axis(header or "Unnamed: 0").reset_index()
    assert read_annotations(frame, format="counts").values.tolist() == [[1, 2], [2, 3]]


def test_an_item_column_of_counts_that_is_absent_is_refused(tmp_path, capsys) -> None:
    path = tmp_path / "counts.csv"
    COUNTS.rename_axis("id").to_csv(path)
    with pytest.raises(ValueError, match=r"item column 'hit' is not in the counts; the columns"):
        read_annotations(path, format="counts", item="hit")
    line = _cli_error(["score", str(path), "--layout", "counts", "--item", "hit", "-q"], capsys)
    assert "--item <one of them>" in line


def test_a_text_id_column_of_counts_names_the_item_option(tmp_path, capsys) -> None:
    path = tmp_path / "counts.csv"
    path.write_text("name,a,b\nx,1,2\ny,2,3\n")
    with pytest.raises(ValueError, match=r"pass item='name' if that column holds the item ids"):
        read_annotations(path, format="counts")
    line = _cli_error(["score", str(path), "--layout", "counts", "-q"], capsys)
    assert "pass --item name if that column holds the item ids" in line
    assert read_annotations(path, format="counts", item="name").values.tolist() == [[1, 2], [2, 3]]


def test_a_masked_array_is_refused() -> None:
    masked = np.ma.masked_array([[1, 2], [3, 4]], mask=[[True, False], [False, False]])
    with pytest.raises(TypeError, match=r"counts must be a plain array, but got a numpy masked"):
        read_annotations(masked)
    assert read_annotations(masked.filled(0)).values.tolist() == [[0, 2], [3, 4]]


ANSWERS = pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"], "label": ["x", "y", "x"]})


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        ({"item": "label"}, "item and label must be different columns, but both are 'label'"),
        ({"rater": "task"}, "item and rater must be different columns, but both are 'task'"),
        ({"rater": "label"}, "rater and label must be different columns, but both are 'label'"),
    ],
)
def test_one_column_in_two_roles_is_refused(tmp_path, capsys, roles, message) -> None:
    for reader in (read_annotations, read_long):
        with pytest.raises(ValueError, match=message):
            reader(ANSWERS, **roles)
    path = tmp_path / "answers.csv"
    ANSWERS.to_csv(path, index=False)
    options = [x for role, column in roles.items() for x in (f"--{role}", column)]
    assert message in _cli_error(["score", str(path), *options, "-q"], capsys)


@pytest.mark.parametrize("role", ["task", "worker", "label"])
def test_a_cell_holding_a_list_is_refused(role: str) -> None:
    answers = ANSWERS.astype(object)
    answers.at[1, role] = ["p", "q"]
    name = {"task": "item", "worker": "rater", "label": "label"}[role]
    with pytest.raises(
        TypeError, match=rf"{name} column '{role}' must hold one {name} per answer .* row 1"
    ):
        read_annotations(answers)


@pytest.mark.parametrize(
    ("name", "text", "api", "cli"),
    [
        ("semi.csv", "task;worker;label\n1;a;x\n", "sep=';'", "--sep ';'"),
        ("pipe.csv", "task|worker|label\n1|a|x\n", "sep='|'", "--sep '|'"),
        ("tabs.csv", "task\tworker\tlabel\n1\ta\tx\n", "format='tsv'", "--format tsv"),
        ("commas.tsv", "task,worker,label\n1,a,x\n", "format='csv'", "--format csv"),
    ],
)
def test_another_separator_is_named(tmp_path, capsys, name, text, api, cli) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=r"the header line was read as one column") as info:
        read_annotations(path)
    assert str(info.value).endswith(f"pass {api}")
    assert _cli_error(["score", str(path), "-q"], capsys).endswith(f"pass {cli}")


@pytest.mark.parametrize("name", [None, "id", "task", "Item"])
def test_parquet_counts_keep_their_ids_in_memory_and_in_chunks(tmp_path, capsys, name) -> None:
    # to_parquet stores an unnamed index as __index_level_0__; a named one as a column
    from ambppl.data import read_in_chunks

    path = tmp_path / "counts.parquet"
    frame = COUNTS.rename_axis(name)
    (frame.reset_index() if name else frame).to_parquet(path)
    counts = read_annotations(path, format="counts")
    assert counts["category"].values.tolist() == ["a", "b"]
    assert counts["item"].values.tolist() == [101, 102]
    assert counts.values.tolist() == [[1, 2], [2, 3]]
    lazy = read_in_chunks(path, chunk_items=1)
    assert lazy.categories == ["a", "b"]
    assert np.asarray(lazy.items.compute()).tolist() == [101, 102]
    assert lazy.values.compute().tolist() == [[1, 2], [2, 3]]


def test_an_item_column_for_a_count_array_is_refused(tmp_path, capsys) -> None:
    path = tmp_path / "counts.npy"
    np.save(path, np.array([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match=r"so item='x' would be unused; leave it out"):
        read_annotations(path, item="x")
    with pytest.raises(ValueError, match=r"holds counts as a DataArray"):
        read_annotations(read_annotations(path), item="x")
    line = _cli_error(["score", str(path), "--item", "x", "-q"], capsys)
    assert "--item names the id column of a table" in line and "so --item x would" in line


@pytest.mark.parametrize(
    ("head", "why", "fix"),
    [
        (
            "item",
            "it is headed like an id column and holds a different value on every row",
            "pass its name (or rename the column)",
        ),
        (
            # renaming it would not help: the first-column rule still holds
            "name",
            "it holds a different value on every row, none of which any other column holds, "
            "while the other columns share answers",
            "pass its name with item=",
        ),
    ],
)
def test_a_short_wide_table_with_its_ids_in_a_rater_column_is_refused(
    tmp_path, capsys, head, why, fix
) -> None:
    # under 20 rows the column of ids was read as a rater's answers ("i1" an answer)
    path = tmp_path / "wide.csv"
    path.write_text(f"{head},r1,r2,r3\ni1,x,y,?\ni2,x,x,x\ni3,?,,y\n")
    with pytest.raises(ValueError) as info:
        read_annotations(path, format="wide", cant_solve="?")
    assert str(info.value) == (
        f"column {head!r} of the wide table 'wide.csv' looks like the item ids, not one rater's "
        f"answers: {why}; if it holds the item ids pass item={head!r}, else give the table a "
        f"column of item ids and {fix}"
    )
    with pytest.raises(ValueError, match=re.escape(why)):
        read_long(path, format="wide")
    line = _cli_error(["score", str(path), "--layout", "wide", "--cant-solve", "?", "-q"], capsys)
    assert f"if it holds the item ids pass --item {head}, else" in line
    assert line.endswith(fix.replace("item=", "--item"))
    counts = read_annotations(path, format="wide", cant_solve="?", item=head)
    assert counts["item"].values.tolist() == ["i1", "i2", "i3"] and int(counts.sum()) == 8


@pytest.mark.parametrize(
    "table",
    [
        {"r1": ["a", "b", "c"], "r2": ["a", "a", "b"], "r3": ["b", "b", "c"]},  # r1's are answers
        {"r1": ["p", "q"], "r2": ["x", "x"], "r3": ["x", "y"]},  # two items
        {"r1": ["a", "b", "c"], "r2": ["x", "x", "x"], "r3": ["y", "y", "z"]},  # none shared
        {"r2": ["x", "x", "y"], "r1": ["a", "b", "c"], "r3": ["x", "y", "y"]},  # not first
        {"id": ["a", None, "b"], "r2": ["a", "a", "b"], "r3": ["b", "b", "a"]},  # a gap
        {"a": ["pos", "?"], "b": ["neg", None]},  # the reading guide's
    ],
)
def test_a_short_wide_table_of_raters_is_read(table) -> None:
    frame = pd.DataFrame(table)
    counts = read_annotations(frame, format="wide")
    assert int(counts.sum()) == int(frame.notna().sum().sum())


def test_a_wide_frame_with_its_item_ids_in_the_index_is_read(capsys) -> None:
    # the first-column rule refused it: the ids are in the index, column a is a rater
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 5], "c": [5, 4, 4]}, index=["x", "y", "z"])
    counts = read_annotations(frame, format="wide")
    assert counts["item"].values.tolist() == ["x", "y", "z"] and int(counts.sum()) == 9
    assert counts.sel(item="x", category="1").item() == 1
    named = frame.rename_axis("task").reset_index(drop=True).rename_axis("task")
    assert int(read_annotations(named, format="wide").sum()) == 9  # a named index: ids
    # the same table without ids in its index is refused, as a text file is
    with pytest.raises(ValueError, match=r"column 'a' .* looks like the item ids"):
        read_annotations(frame.reset_index(drop=True), format="wide")
    # a column headed like the ids is refused whatever the index
    with pytest.raises(ValueError, match=r"column 'id' .* headed like an id column"):
        read_annotations(frame.rename(columns={"a": "id"}), format="wide")
