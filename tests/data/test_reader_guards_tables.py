"""Tables of answers read right or refused with the fix, in memory and counted in chunks alike.

Findings 3, 4, 7, 8, 10, 11, 13 and 15 of the data readers' audit (2026-12): an ``item=`` that
is no column of a wide table was ignored (its ids column counted as a rater), a long table
read as wide merged its repeated item ids, ``cant_solve=None`` kept a DataArray's own
can't-solve label (while ``read_in_chunks`` dropped a store's), ``" ?"`` and ``"?"`` were two
labels, ``na_values`` could remove the can't-solve label without a word, a counts file read
as answers got no hint of ``format="counts"``, float32 labels were written with float64
digits, and a pandas categorical label column lost its declared categories and their order.
Every expected count below is counted by hand from the few rows written in the test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ambppl.data import count_long_in_chunks, open_counts_in_chunks, read_in_chunks
from ambppl.data.readers import read_annotations, read_input, read_long
from ambppl.internal.messages import command_line_messages

pytest.importorskip("dask")


def _same(a: xr.DataArray, b: xr.DataArray) -> None:
    """The same counts: categories, item ids (as text: the chunked reader sorts items) and
    values."""
    assert a["category"].values.tolist() == b["category"].values.tolist()
    a = a.sortby("item")
    b = b.sortby("item")
    assert a["item"].values.tolist() == b["item"].values.tolist()
    assert a.values.tolist() == b.values.tolist()


# ------------------------------------------------------ 3: an item= that a wide table lacks

WIDE_QID = "r1,r2,r3,qid\n" + "".join(f"pos,neg,?,q{i}\n" for i in range(10))


def test_a_wide_item_that_is_no_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wq10.csv"
    path.write_text(WIDE_QID)
    refusal = r"item column 'QID' is not in the wide table 'wq10.csv'; the columns present are"
    with pytest.raises(ValueError, match=refusal + r".*pass item=<one of them>"):
        read_annotations(path, format="wide", item="QID", cant_solve="?")
    with pytest.raises(ValueError, match=refusal):
        read_long(path, format="wide", item="QID", cant_solve="?")
    # the chunked route of a wide table reads it in memory: the same refusal
    with pytest.raises(ValueError, match=refusal):
        read_input(path, format="wide", item="QID", cant_solve="?", chunk_items=2, lazy=2)
    with command_line_messages(), pytest.raises(ValueError, match=r"pass --item <one of them>"):
        read_annotations(path, format="wide", item="QID", cant_solve="?")
    # the right name reads 10 items of 3 answers each (qid is not a rater)
    counts = read_annotations(path, format="wide", item="qid", cant_solve="?")
    assert counts["item"].values.tolist() == [f"q{i}" for i in range(10)]
    assert counts["category"].values.tolist() == ["neg", "pos", "?"]
    assert counts.values.tolist() == [[1, 1, 1]] * 10


def test_a_wide_frame_item_may_name_its_index_not_another_name() -> None:
    frame = pd.DataFrame(
        {"r1": ["pos", "neg", "pos"], "r2": ["neg", "neg", "?"]},
        index=pd.Index(["q1", "q2", "q3"], name="qid"),
    )
    by_name = read_annotations(frame, format="wide", item="qid", cant_solve="?")
    by_default = read_annotations(frame, format="wide", cant_solve="?")
    xr.testing.assert_identical(by_name, by_default)
    assert by_name["item"].values.tolist() == ["q1", "q2", "q3"]
    with pytest.raises(ValueError, match=r"item column 'question' is not in the wide table"):
        read_annotations(frame, format="wide", item="question", cant_solve="?")


# ---------------------------------------------- 4: a wide table whose item ids repeat


def test_a_long_table_read_as_wide_is_refused_by_its_repeated_ids(tmp_path: Path) -> None:
    path = tmp_path / "custom.csv"
    path.write_text("tweet,annotator,answer\n1,a,pos\n1,b,neg\n2,a,pos\n2,b,?\n3,a,neg\n")
    refusal = (
        r"the item column 'tweet' of the wide table 'custom.csv' must hold one id per row .*"
        r"but the ids \['1', '2'\] repeat; it looks like a long table \(one row per answer\): "
    )
    with pytest.raises(ValueError, match=refusal + r"pass format='long' with item=, rater="):
        read_annotations(path, format="wide", item="tweet")
    with pytest.raises(ValueError, match=refusal):
        read_long(path, format="wide", item="tweet")
    with pytest.raises(ValueError, match=refusal):
        read_input(path, format="wide", item="tweet", chunk_items=2, lazy=2)
    with command_line_messages(), pytest.raises(ValueError, match=r"pass --layout long with"):
        read_annotations(path, format="wide", item="tweet")
    # the fix reads it: 3 items with 2, 2 and 1 answers
    counts = read_annotations(path, item="tweet", rater="annotator", label="answer")
    assert counts.values.sum(axis=1).tolist() == [2, 2, 1]


def test_a_wide_frame_indexed_by_repeated_ids_is_refused() -> None:
    frame = pd.DataFrame({"r1": ["pos", "neg", "pos"]}, index=[7, 7, 8])
    with pytest.raises(ValueError, match=r"the index of the wide table .* ids \[7\] repeat"):
        read_annotations(frame, format="wide")
    # the worker/label guard keeps its own message
    long = pd.DataFrame({"task": [1, 1], "worker": ["a", "b"], "label": ["x", "y"]})
    with pytest.raises(ValueError, match=r"has the columns 'worker' and 'label' of a long"):
        read_annotations(long, format="wide", item="task")


# ------------------------------------- 7: cant_solve left out keeps, None drops, a label


def _labelled() -> xr.DataArray:
    """Counts that carry their own can't-solve label "?" (read with it, so it is last)."""
    counts = np.array([[3, 1, 0], [0, 2, 2]])
    return read_annotations(counts, categories=["pos", "neg", "?"], cant_solve="?")


def test_cant_solve_none_drops_a_dataarrays_own_label() -> None:
    labelled = _labelled()
    assert labelled.attrs["cant_solve"] == "?"
    # left out: its own label
    kept = read_annotations(labelled)
    assert kept.attrs["cant_solve"] == "?"
    assert kept["category"].values.tolist() == ["pos", "neg", "?"]
    # None: no can't-solve category (before the fix: "?" all the same); the counts unchanged
    none = read_annotations(labelled, cant_solve=None)
    assert none.attrs["cant_solve"] is None
    assert none["category"].values.tolist() == ["pos", "neg", "?"]
    assert none.values.tolist() == [[3, 1, 0], [0, 2, 2]]
    assert labelled.attrs["cant_solve"] == "?"  # the caller's counts keep theirs
    # another label: that one, moved last
    other = read_annotations(labelled, cant_solve="pos")
    assert other.attrs["cant_solve"] == "pos"
    assert other["category"].values.tolist() == ["neg", "?", "pos"]
    assert other.values.tolist() == [[1, 0, 3], [2, 2, 0]]
    # what a fit reads follows: the estimators see no can't-solve category
    from ambppl.data import as_counts

    assert as_counts(none).attrs["cant_solve"] is None


def test_cant_solve_none_means_none_for_a_table_too(tmp_path: Path) -> None:
    frame = pd.DataFrame({"task": [1, 1, 2], "worker": list("aba"), "label": ["x", "?", "y"]})
    left_out = read_annotations(frame)
    xr.testing.assert_identical(left_out, read_annotations(frame, cant_solve=None))
    assert left_out.attrs["cant_solve"] is None
    path = tmp_path / "a.csv"
    frame.to_csv(path, index=False)
    chunked = read_in_chunks(path, chunk_items=2, format="long", cant_solve=None)
    assert chunked.attrs["cant_solve"] is None


def test_cant_solve_none_drops_a_stores_own_label_on_every_route(tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    store = tmp_path / "c.zarr"
    _labelled().to_dataset().to_zarr(store, consolidated=False)
    # in memory
    assert read_annotations(store).attrs["cant_solve"] == "?"
    assert read_annotations(store, cant_solve=None).attrs["cant_solve"] is None
    # in chunks: left out keeps, None drops (before the fix open_counts_in_chunks kept "?")
    assert open_counts_in_chunks(store, chunk_items=1).cant_solve == "?"
    assert open_counts_in_chunks(store, chunk_items=1, cant_solve=None).cant_solve is None
    assert read_in_chunks(store, chunk_items=1).cant_solve == "?"
    assert read_in_chunks(store, chunk_items=1, cant_solve=None).cant_solve is None
    lazy = open_counts_in_chunks(store, chunk_items=1, cant_solve=None)
    assert lazy.categories == ["pos", "neg", "?"]
    assert lazy.values.compute().tolist() == [[3, 1, 0], [0, 2, 2]]
    # the command line's reader: None is an absent --cant-solve, so the store's label stays
    assert read_input(store, lazy=1).cant_solve == "?"
    assert read_input(store).attrs["cant_solve"] == "?"
    assert read_input(store, cant_solve="neg").attrs["cant_solve"] == "neg"


# ----------------------------------------------------- 8: labels without surrounding spaces

SPACED = "task,worker,label\n1,a, ?\n1,b,pos \n2,a,?\n2,b,neg\n3,a,  \n3,b,pos\n"


@pytest.mark.parametrize(
    "read",
    [
        lambda path, **kw: read_annotations(path, **kw),
        lambda path, **kw: count_long_in_chunks(path, chunk_items=2, **kw),
        lambda path, **kw: read_in_chunks(path, chunk_items=2, format="long", **kw),
        lambda path, **kw: read_input(path, lazy=2, chunk_items=2, **kw),
    ],
    ids=["memory", "count_long_in_chunks", "read_in_chunks", "read_input"],
)
def test_labels_lose_surrounding_whitespace_on_every_route(tmp_path: Path, read) -> None:
    path = tmp_path / "wsl.csv"
    path.write_text(SPACED)
    counts = read(path, cant_solve="?")
    # item 1: "?" (" ?") and "pos" ("pos "); item 2: "?" and "neg"; item 3: "pos" (the blank
    # answer "  " is missing)
    assert counts["category"].values.tolist() == ["neg", "pos", "?"]
    assert counts.attrs["cant_solve"] == "?"
    assert counts.sortby("item").values.tolist() == [[0, 1, 1], [1, 0, 1], [0, 1, 0]]
    # cant_solve= and categories= are matched after the same stripping
    again = read(path, cant_solve=" ? ", categories=["pos ", " neg", "?"])
    assert again["category"].values.tolist() == ["pos", "neg", "?"]
    assert again.sortby("item").values.tolist() == [[1, 0, 1], [0, 1, 1], [1, 0, 0]]
    with pytest.raises(ValueError, match=r"categories must be distinct labels \(surrounding"):
        read(path, categories=["?", " ? ", "pos", "neg"])
    _same(counts, read_annotations(path, cant_solve="?"))


def test_parquet_text_labels_agree_in_memory_and_in_chunks(tmp_path: Path) -> None:
    path = tmp_path / "spaced.parquet"
    pd.DataFrame({"task": [2, 2, 1, 1, 1], "label": ["?", " ?", "yes", "yes ", " "]}).to_parquet(
        path, row_group_size=2
    )
    memory = read_annotations(path, rater=None, cant_solve="?")
    chunked = count_long_in_chunks(path, chunk_items=2, cant_solve="?")
    assert memory["category"].values.tolist() == ["yes", "?"]
    assert memory.values.tolist() == [[0, 2], [2, 0]] and memory.attrs["n_dropped"] == 1
    _same(memory, chunked)


def test_ids_keep_their_spaces_and_na_values_are_stripped_too(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("task,worker,label\n1,a,x\n 1,a ,y\n1,b, NA\n")
    long = read_long(path, na_values=["NA "])
    assert long["item"].tolist() == ["1", " 1"]  # ids as written: two items
    assert long["rater"].tolist() == ["a", "a "]
    assert long.attrs["n_dropped"] == 1  # " NA" is the label "NA", named missing
    chunked = count_long_in_chunks(path, na_values=["NA "])
    _same(read_annotations(path, na_values=["NA "]), chunked)


def test_a_wide_table_merges_labels_that_differ_by_spaces() -> None:
    frame = pd.DataFrame({"r1": [" ?", "pos"], "r2": ["?", " pos"]}, index=["a", "b"])
    counts = read_annotations(frame, format="wide", cant_solve="?")
    assert counts["category"].values.tolist() == ["pos", "?"]
    assert counts.values.tolist() == [[0, 2], [2, 0]]


# ------------------------------------------------ 10: na_values naming a label it must keep


@pytest.mark.parametrize("chunked", [False, True], ids=["memory", "chunked"])
def test_na_values_naming_cant_solve_or_a_category_is_refused(tmp_path: Path, chunked) -> None:
    path = tmp_path / "na.csv"
    path.write_text("task,worker,label\n1,a,x\n1,b,?\n2,a,y\n2,b,NA\n")

    def read(**kw):
        if chunked:
            return count_long_in_chunks(path, **kw)
        return read_annotations(path, **kw)

    with pytest.raises(
        ValueError,
        match=r"na_values must not name the can't-solve label, but it names '\?', which "
        r"cant_solve='\?' gives: na_values removes those answers as missing.*drop '\?' from "
        r"na_values",
    ):
        read(cant_solve="?", na_values=["?", "NA"])
    with pytest.raises(ValueError, match=r"must not name a label of categories=.*\['NA'\]"):
        read(categories=["x", "y", "?", "NA"], na_values=["NA"])
    with pytest.raises(ValueError, match=r"can't-solve label, but it names '\?'"):
        read(cant_solve="?", na_values=[" ? "])  # matched without the spaces
    with command_line_messages(), pytest.raises(ValueError, match=r"from --na-values$"):
        read(cant_solve="?", na_values=["?"])
    # without the contradiction: NA dropped, ? counted
    counts = read(cant_solve="?", na_values=["NA"])
    assert counts.values.tolist() == [[1, 0, 1], [0, 1, 0]]


def test_na_values_naming_cant_solve_is_refused_for_read_long_and_wide() -> None:
    frame = pd.DataFrame({"task": [1, 1], "worker": ["a", "b"], "label": ["x", "?"]})
    with pytest.raises(ValueError, match=r"na_values must not name the can't-solve label"):
        read_long(frame, cant_solve="?", na_values="?")
    wide = pd.DataFrame({"r1": ["x", "?"], "r2": ["y", "x"]})
    with pytest.raises(ValueError, match=r"na_values must not name the can't-solve label"):
        read_annotations(wide, format="wide", cant_solve="?", na_values="?")


# --------------------------------------- 11: a counts table read as answers names counts

COUNTS_CSV = "id,pos,neg,?\na,3,1,0\nb,0,2,2\n"


def test_counts_read_as_answers_are_told_to_read_counts(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(COUNTS_CSV)
    hint = r"if the table holds counts \(one row per item, one column per category\)"
    with pytest.raises(ValueError, match=r"item column 'task' is not in the data.*" + hint):
        read_annotations(path)
    with pytest.raises(ValueError, match=hint + r".*pass format='counts'"):
        count_long_in_chunks(path)
    with command_line_messages(), pytest.raises(ValueError, match=r"pass --layout counts"):
        read_annotations(path)
    # the old hint's fix (name the id column) lacks the label column: the same hint there
    for read in (read_annotations, count_long_in_chunks):
        with pytest.raises(ValueError, match=r"label column 'label' is not in the data.*" + hint):
            read(path, item="id")
    parquet = tmp_path / "c.parquet"
    pd.read_csv(path).to_parquet(parquet, index=False)
    with pytest.raises(ValueError, match=hint):
        read_annotations(parquet, format="long")
    with pytest.raises(ValueError, match=hint):
        count_long_in_chunks(parquet)
    # the hint's fix reads it
    counts = read_annotations(path, format="counts")
    assert counts.values.tolist() == [[3, 1, 0], [0, 2, 2]]


@pytest.mark.parametrize(
    "text",
    [
        "question,worker,label\n1,a,pos\n1,b,neg\n",  # labels that are text
        "id,pos,neg\na,3,1\na,0,2\n",  # ids that repeat
        "id,pos,neg\na,3,-1\nb,0,2\n",  # a negative number
        "id,pos,neg\na,3,1.5\nb,0,2\n",  # a fraction
        "id,name,pos,neg\na,x,3,1\nb,y,0,2\n",  # two columns that are not numbers
    ],
)
def test_tables_that_are_no_counts_get_no_counts_hint(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"item column 'task' is not in the data") as err:
        read_annotations(path)
    assert "counts" not in str(err.value)


# ---------------------------------------- 13: float labels at their own precision

FLOATS = [0.1, 0.2, 0.1, 0.7]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_float_labels_are_their_shortest_text(tmp_path: Path, dtype) -> None:
    frame = pd.DataFrame(
        {"task": [1, 1, 2, 2], "worker": list("abab"), "label": np.array(FLOATS, dtype)}
    )
    counts = read_annotations(frame, categories=[0.1, 0.2, 0.7])
    assert counts["category"].values.tolist() == ["0.1", "0.2", "0.7"]
    assert counts.values.tolist() == [[1, 1, 0], [1, 0, 1]]
    # a wide frame of such labels
    wide = pd.DataFrame({"r1": np.array([0.1, 0.2], dtype), "r2": np.array([0.1, 0.7], dtype)})
    assert read_annotations(wide, format="wide")["category"].values.tolist() == [
        "0.1",
        "0.2",
        "0.7",
    ]
    if dtype is not np.float16:  # pandas has no float16 categorical, nor Parquet column
        path = tmp_path / "f.parquet"
        frame.to_parquet(path)
        _same(counts, read_annotations(path, categories=[0.1, 0.2, 0.7]))
        _same(counts, count_long_in_chunks(path, categories=[0.1, 0.2, 0.7]))
        typed = frame.assign(label=pd.Categorical(frame["label"]))
        assert read_annotations(typed)["category"].values.tolist() == ["0.1", "0.2", "0.7"]
    # whole floats stay whole numbers
    whole = frame.assign(label=np.array([1, 2, 1, 3], dtype))
    assert read_annotations(whole)["category"].values.tolist() == ["1", "2", "3"]


def test_nullable_and_categorical_float32_labels_are_their_shortest_text() -> None:
    # pandas' nullable Float32 (a missing answer as pd.NA) and a categorical of float32
    nullable = pd.array([0.1, None, 0.7, 0.1], dtype="Float32")
    frame = pd.DataFrame({"task": [1, 1, 2, 2], "worker": list("abab"), "label": nullable})
    counts = read_annotations(frame, cant_solve=0.7)
    assert counts["category"].values.tolist() == ["0.1", "0.7"]
    assert counts.values.tolist() == [[1, 0], [1, 1]] and counts.attrs["n_dropped"] == 1
    wide = pd.DataFrame(
        {
            "r1": pd.array([0.1, 0.2], dtype="Float32"),
            "r2": pd.array([None, 0.1], dtype="Float32"),
            "r3": pd.Categorical(np.array([0.7, np.nan], dtype=np.float32)),
        }
    )
    read = read_annotations(wide, format="wide", categories=[0.1, 0.2, 0.7])
    assert read["category"].values.tolist() == ["0.1", "0.2", "0.7"]
    assert read.values.tolist() == [[1, 0, 1], [1, 1, 0]] and read.attrs["n_dropped"] == 2


# ------------------------------------ 15: a categorical label column's declared categories

DECLARED = ["pos", "neg", "unused", "?"]


def _categorical() -> pd.DataFrame:
    labels = pd.Categorical(["neg", "pos", "neg", "?"], categories=DECLARED)
    return pd.DataFrame({"task": [1, 1, 2, 2], "worker": list("abab"), "label": labels})


def test_declared_categories_are_kept_in_order_on_every_route(tmp_path: Path) -> None:
    frame = _categorical()
    counts = read_annotations(frame, cant_solve="?")
    # the declared order; "unused" as a zero column; can't-solve last
    assert counts["category"].values.tolist() == ["pos", "neg", "unused", "?"]
    assert counts.values.tolist() == [[1, 1, 0, 0], [0, 1, 0, 1]]
    long = read_long(frame, cant_solve="?")
    assert list(long["label"].cat.categories) == ["pos", "neg", "unused", "?"]
    path = tmp_path / "cat.parquet"
    frame.to_parquet(path, row_group_size=2)
    _same(counts, read_annotations(path, cant_solve="?"))
    _same(counts, count_long_in_chunks(path, chunk_items=1, cant_solve="?"))
    _same(counts, read_input(path, lazy=1, chunk_items=1, cant_solve="?"))
    # categories= still decides; na_values drops a declared category
    chosen = read_annotations(frame, categories=["?", "neg", "pos"])
    assert chosen["category"].values.tolist() == ["?", "neg", "pos"]
    dropped = read_annotations(frame, na_values=["unused"], cant_solve="?")
    assert dropped["category"].values.tolist() == ["pos", "neg", "?"]
    _same(dropped, count_long_in_chunks(path, na_values=["unused"], cant_solve="?"))
