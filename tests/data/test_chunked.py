"""Files read in chunks (ambppl/data/chunked.py, lazy.py) read as :func:`ambppl.read_annotations`
reads them whole. Found by an audit of the chunked readers (2027-01): a Parquet file of answers
with integer columns taken for counts, an integer ``cant_solve`` taken for a position where it
is a label, ``categories=`` renaming columns where it reorders them in memory, part files with
other columns, zarr item dates left encoded, text options ignored for Parquet, integer ids
sorted as text, and a quoted line break on a dask block boundary without a word of why."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl import read_annotations
from ambppl.cli import main
from ambppl.data import (
    count_long_in_chunks,
    open_counts_in_chunks,
    opens_in_chunks,
    read_in_chunks,
)
from ambppl.data.readers import read_input

pytest.importorskip("dask.dataframe")

COUNTS = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 4]])


def _message(read, *args, **kwargs) -> tuple[type, str]:
    with pytest.raises((ValueError, TypeError)) as info:
        read(*args, **kwargs)
    return info.type, str(info.value)


# ------------------------------------------------- a Parquet file of answers, integer columns


def test_parquet_answers_of_integer_columns_are_read_as_answers(tmp_path: Path) -> None:
    path = tmp_path / "answers.parquet"
    answers = {"task": [1, 1, 1, 2, 2, 3], "worker": [10, 11, 12, 10, 11, 12]}
    pd.DataFrame({**answers, "label": [0, 1, 1, 2, 2, 0]}).to_parquet(path, index=False)
    assert not opens_in_chunks(path)  # the long layout's task and label columns: answers
    # Without its label column named, the file is still answers (its worker and label
    # columns are headed as a table of answers' are), as read_annotations reads it: it used
    # to open as counts, task, worker and label becoming three categories (audit finding 1);
    # only format="counts" reads it as counts.
    assert not opens_in_chunks(path, label="answer")
    assert opens_in_chunks(path, "counts", label="answer")
    assert not opens_in_chunks(path, "long")
    whole = read_annotations(path)
    read = read_input(path, lazy=1000)  # as ambppl score reads it
    assert isinstance(read, xr.DataArray)
    xr.testing.assert_identical(read, whole)
    # a true count file still streams
    counts = tmp_path / "counts.parquet"
    pd.DataFrame({"item": ["a", "b"], "yes": [3, 1], "no": [0, 2]}).to_parquet(counts)
    assert opens_in_chunks(counts) and opens_in_chunks(counts, item="task", label="label")
    # on the command line: three items with 3, 2 and 1 answers, not six rows of counts
    out = tmp_path / "scores.csv"
    assert main(["score", str(path), "-o", str(out), "--seed", "0"]) == 0
    table = pd.read_csv(out, index_col=0).sort_index()
    assert table.index.tolist() == [1, 2, 3] and table["n_answers"].tolist() == [3, 2, 1]


def test_read_in_chunks_counts_parquet_answers_without_a_layout(tmp_path: Path) -> None:
    # read_in_chunks without format= took the task, worker and label columns for counts
    path = tmp_path / "answers.parquet"
    answers = {"task": [1, 1, 1, 2, 2, 3], "worker": [10, 11, 12, 10, 11, 12]}
    pd.DataFrame({**answers, "label": [0, 1, 1, 2, 2, 0]}).to_parquet(path, index=False)
    counted = read_in_chunks(path, chunk_items=1000)
    assert isinstance(counted, xr.DataArray)
    xr.testing.assert_identical(counted, read_in_chunks(path, chunk_items=1000, format="long"))
    assert counted.values.tolist() == [[1, 2, 0], [0, 0, 2], [1, 0, 0]]
    # other column names, as read_annotations takes them; rater ids are not used
    renamed = tmp_path / "renamed.parquet"
    pd.read_parquet(path).rename(columns={"task": "q", "label": "a"}).to_parquet(renamed)
    again = read_in_chunks(renamed, chunk_items=2, item="q", label="a", rater="worker")
    assert again.values.tolist() == counted.values.tolist()
    # Without the label column named, the file is still answers (its column "worker" is a
    # rater's), refused as read_annotations refuses it: it used to be read as counts, worker
    # ids becoming a category (audit finding 1); format="counts" still reads it so.
    kind, text = _message(read_in_chunks, renamed, chunk_items=2, item="q")
    assert (kind, text) == _message(read_annotations, renamed, item="q")
    assert "label column 'label' is not in the data" in text
    lazy = read_in_chunks(renamed, chunk_items=2, item="q", format="counts")
    assert lazy.categories == ["worker", "a"]


# ---------------------------------------------- a folder of Parquet part files, command line


def _parts(folder: Path, *frames: pd.DataFrame) -> Path:
    folder.mkdir()
    for k, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{k}.parquet", index=False)
    return folder


def test_a_folder_of_count_parts_streams_on_the_command_line(tmp_path: Path) -> None:
    # opens_in_chunks read no schema from a folder, so ambppl refused it or counted it as answers
    first = pd.DataFrame({"item": ["u", "v"], "yes": [3, 0], "no": [1, 2]})
    folder = _parts(
        tmp_path / "counts.parquet", first, pd.DataFrame({"item": ["w"], "yes": [1], "no": [4]})
    )
    assert opens_in_chunks(folder) and opens_in_chunks(tmp_path / "counts.parquet", "parquet")
    lazy = read_input(folder, lazy=2)
    assert type(lazy).__name__ == "LazyCounts" and lazy.categories == ["yes", "no"]
    assert read_input(folder, lazy=2, chunk_items=2).values.compute().tolist() == [
        [3, 1],
        [0, 2],
        [1, 4],
    ]
    out = tmp_path / "scores.parquet"
    assert main(["score", str(folder), "-o", str(out), "-q", "--seed", "0"]) == 0
    table = pd.read_parquet(out).sort_index()  # 3 items: read into memory, ranked
    assert table.index.tolist() == ["u", "v", "w"] and table["n_answers"].tolist() == [4, 2, 5]
    assert sorted(table["rank"]) == [1, 2, 3]
    csv = tmp_path / "scores.csv"
    argv = ["score", str(folder), "-o", str(csv), "-q", "--chunk-items", "2", "--seed", "0"]
    assert main(argv) == 0
    assert pd.read_csv(csv, index_col=0)["n_answers"].tolist() == [4, 2, 5]


def test_a_folder_of_answer_parts_is_recognized_and_refused(tmp_path, capsys) -> None:
    answers = pd.DataFrame({"task": [1, 1, 2], "worker": [10, 11, 12], "label": [0, 1, 1]})
    folder = _parts(tmp_path / "answers.parquet", answers)
    assert not opens_in_chunks(folder)  # the long layout's task and label columns: answers
    said = "is a folder of Parquet part files, which is read only as counts in chunks"
    for chunk_items in (None, 2):
        with pytest.raises(ValueError, match=said):
            read_input(folder, lazy=2, chunk_items=chunk_items)
    with pytest.raises(ValueError, match="answers are counted in chunks from one CSV, TSV or"):
        read_in_chunks(folder, chunk_items=2)  # not six rows of counts
    assert main(["score", str(folder), "-q", "--chunk-items", "2"]) == 2
    err = capsys.readouterr().err
    assert said in err and "--format parquet, read by ambppl score" in err
    assert main(["plan", str(folder), "--budget", "1", "-q"]) == 2  # in memory: one file
    assert said in capsys.readouterr().err


# ------------------------------------------------------------- an integer cant_solve is a label


def test_an_integer_cant_solve_names_a_label_before_a_position(tmp_path: Path) -> None:
    path = tmp_path / "c.parquet"
    pd.DataFrame(COUNTS, columns=["1", "2", "3"]).assign(item=list("uvw")).to_parquet(path)
    for given, label in ((1, "1"), (2, "2"), ("1", "1"), (-1, "3"), (0, "1")):
        lazy = read_in_chunks(path, chunk_items=2, cant_solve=given)
        assert lazy.cant_solve == label, given
        opened = open_counts_in_chunks(path, chunk_items=2, cant_solve=given)
        assert opened.cant_solve == label, given
    whole = read_annotations(path, format="counts", item="item", cant_solve=1)
    eager = ambppl.score(whole, random_seed=0, mcse=0.05)
    lazy = ambppl.score(read_in_chunks(path, chunk_items=2, cant_solve=1), random_seed=0, mcse=0.05)
    np.testing.assert_allclose(lazy.compute()["cs_share"], eager["cs_share"])
    kind, message = _message(read_in_chunks, path, chunk_items=2, cant_solve=5)
    assert kind is ValueError and message == (
        "cant_solve must be one of the category labels ['1', '2', '3'], a position in [-3, 2] "
        "or None, but got 5"
    )


def test_a_stored_integer_cant_solve_is_a_label(tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    counts = xr.DataArray(
        COUNTS,
        dims=("item", "category"),
        coords={"item": list("uvw"), "category": [1, 2, 3]},
        attrs={"cant_solve": 1},
        name="counts",
    )
    eager = ambppl.score(counts, random_seed=0, mcse=0.05)["cs_share"]
    lazy = ambppl.score(counts.chunk({"item": 2}), random_seed=0, mcse=0.05)  # from_dataarray
    np.testing.assert_allclose(lazy.compute()["cs_share"], eager)
    counts.chunk({"item": 2}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    store = open_counts_in_chunks(tmp_path / "c.zarr")
    assert store.categories == ["2", "3", "1"] and store.cant_solve == "1"  # can't-solve last
    np.testing.assert_allclose(
        ambppl.score(store, random_seed=0, mcse=0.05).compute()["cs_share"], eager
    )


# ------------------------------------------------------- categories= as read_annotations takes it


@pytest.fixture
def store(tmp_path: Path) -> Path:
    pytest.importorskip("zarr")
    counts = xr.DataArray(
        COUNTS,
        dims=("item", "category"),
        coords={"item": list("uvw"), "category": ["a", "cs", "b"]},
        name="counts",
    )
    counts.chunk({"item": 2}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    return tmp_path / "c.zarr"


@pytest.mark.parametrize("categories", [["b", "a", "cs"], ["b", "new", "a", "cs"]])
def test_categories_of_the_files_labels_reorder_the_columns(store, categories) -> None:
    whole = read_annotations(store, categories=categories, cant_solve="cs")
    lazy = read_in_chunks(store, chunk_items=2, categories=categories, cant_solve="cs")
    assert lazy.categories == whole["category"].values.tolist()
    np.testing.assert_array_equal(lazy.values.compute(), whole.values)
    eager = ambppl.score(whole, random_seed=0, mcse=0.05)
    scored = ambppl.score(open_counts_in_chunks(store), categories=categories, cant_solve="cs")
    np.testing.assert_allclose(scored.compute()["cs_share"], eager["cs_share"])


def test_categories_are_refused_as_read_annotations_refuses_them(store, tmp_path) -> None:
    path = tmp_path / "c.parquet"
    pd.DataFrame(COUNTS, columns=["a", "cs", "b"]).to_parquet(path)
    for categories in (["b", "a", "x"], ["x", "x", "y"], 3, "ab", ["a"]):
        expected = _message(read_annotations, store, categories=categories)
        assert _message(read_in_chunks, store, chunk_items=2, categories=categories) == expected
        assert _message(open_counts_in_chunks, path, categories=categories) == expected
        lazy = open_counts_in_chunks(path)
        assert _message(ambppl.score, lazy, categories=categories) == expected
    # Other names for every column are refused too, as read_annotations refuses them: they
    # used to rename the columns in order, so that ["negative", "positive", "cant"] made a
    # column "?" the counts of "negative" (audit finding 6). Labelled columns are only
    # reordered; columns named by position ("0", "1", ...) take new names (test below).
    for categories in (["x", "y", "z"], ["negative", "positive", "cant"]):
        expected = _message(read_annotations, store, categories=categories)
        assert "occur in the data but are not in categories" in expected[1]
        assert _message(read_in_chunks, store, chunk_items=2, categories=categories) == expected
        assert _message(open_counts_in_chunks, path, categories=categories) == expected


def test_categories_of_counts_named_by_position_name_the_columns(tmp_path) -> None:
    zarr = pytest.importorskip("zarr")
    zarr.save_array(str(tmp_path / "bare.zarr"), COUNTS)
    lazy = open_counts_in_chunks(tmp_path / "bare.zarr", categories=["2", "1", "0"])
    assert lazy.categories == ["2", "1", "0"] and not lazy.named
    np.testing.assert_array_equal(lazy.values.compute(), COUNTS)  # named, not moved


# ------------------------------------------------------ part files, zarr items, text options


@pytest.mark.parametrize(
    ("second", "said"),
    [
        ({"item": ["w"], "a": [5]}, "'p1.parquet' lacks the column 'b' of 'p0.parquet'"),
        ({"item": ["w"], "a": [5], "b": [1], "c": [7]}, "'p1.parquet' has the column 'c'"),
        ({"a": [5], "b": [1]}, "'p1.parquet' lacks the column 'item' of 'p0.parquet'"),
    ],
)
def test_part_files_with_other_columns_are_refused_when_opened(tmp_path, second, said) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    pd.DataFrame({"item": ["u", "v"], "a": [1, 0], "b": [0, 3]}).to_parquet(
        folder / "p0.parquet", index=False
    )
    pd.DataFrame(second).to_parquet(folder / "p1.parquet", index=False)
    with pytest.raises(ValueError, match=r"the part files of 'parts' must have the same columns"):
        read_in_chunks(folder, chunk_items=2, format="parquet")
    with pytest.raises(ValueError, match=re.escape(said)):
        read_in_chunks(folder, chunk_items=2, format="parquet")


def test_zarr_item_dates_are_decoded_as_in_memory(tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    counts = xr.DataArray(
        COUNTS[:, :2],
        dims=("item", "category"),
        coords={"item": pd.date_range("2020-01-01", periods=3), "category": ["a", "b"]},
        name="counts",
    )
    counts.chunk({"item": 2}).to_zarr(tmp_path / "d.zarr", consolidated=False)
    whole = read_annotations(tmp_path / "d.zarr")
    lazy = read_in_chunks(tmp_path / "d.zarr", chunk_items=2)
    items = np.asarray(lazy.items.compute())
    assert items.dtype == whole["item"].dtype
    np.testing.assert_array_equal(items, whole["item"].values)


@pytest.mark.parametrize(
    "option", [{"sep": ";"}, {"header": None}, {"comment": "#"}, {"encoding": "latin-1"}]
)
def test_text_options_for_parquet_answers_are_refused_as_in_memory(tmp_path, option) -> None:
    path = tmp_path / "a.parquet"
    pd.DataFrame({"task": ["u", "v", "v"], "label": ["a", "b", "a"]}).to_parquet(path)
    expected = _message(read_annotations, path, rater=None, **option)
    assert _message(count_long_in_chunks, path, **option) == expected


# ------------------------------------------------------------- answers counted: order, quotes


def test_integer_ids_of_a_text_file_are_sorted_as_numbers(tmp_path: Path) -> None:
    answers = pd.DataFrame({"task": [3, 1, 2, 10, 3], "label": ["a", "b", "a", "b", "b"]})
    answers.to_csv(tmp_path / "a.csv", index=False)
    answers.to_parquet(tmp_path / "a.parquet")
    text = count_long_in_chunks(tmp_path / "a.csv")
    assert text["item"].values.tolist() == [1, 2, 3, 10] and text["item"].dtype == np.int64
    xr.testing.assert_identical(
        text.drop_attrs(), count_long_in_chunks(tmp_path / "a.parquet").drop_attrs()
    )
    whole = read_annotations(tmp_path / "a.csv", rater=None)
    xr.testing.assert_equal(text, whole.sortby("item").drop_attrs())


def test_a_quoted_line_break_on_a_block_boundary_says_why(tmp_path, monkeypatch) -> None:
    import dask.dataframe as dd

    read_csv = dd.read_csv
    monkeypatch.setattr(dd, "read_csv", lambda path, **kw: read_csv(path, blocksize=30, **kw))
    # every other answer a quoted label over two lines: some block ends inside the quotes
    lines = [
        f't{k % 5},w{k % 3},"{"xy"[k % 2]}\nz"' if k % 2 else f"t{k % 5},w1,x" for k in range(40)
    ]
    path = tmp_path / "q.csv"
    path.write_text("task,worker,label\n" + "\n".join(lines) + "\n")
    whole = read_annotations(path)  # read whole, a quoted label is one label
    assert int(whole.sum()) == 40 and "y\nz" in whole["category"].values
    with pytest.raises(
        ValueError,
        match=r"^could not count 'q.csv' as CSV in dask's blocks .*a quoted field holds a line "
        r"break.*a known dask limitation\); read it in memory instead",
    ):
        count_long_in_chunks(path)


def test_parquet_answers_written_without_an_index_count_without_a_warning(tmp_path: Path) -> None:
    # dask's Parquet reader calls reset_index(inplace=True), which pandas 3.1 deprecates: the
    # caller saw a Pandas4Warning (an error under this suite's filterwarnings) for a file
    # written with index=False, the usual way
    path = tmp_path / "answers.parquet"
    frame = pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"], "label": ["x", "y", "x"]})
    frame.to_parquet(path, index=False)
    counts = count_long_in_chunks(path, chunk_items=10, format="long")
    assert counts.values.tolist() == read_annotations(path).values.tolist() == [[1, 1], [1, 0]]
