"""Counts read right or refused with the fix, in memory and in chunks alike.

Findings 1, 2, 5, 6, 9 and 12 of the data readers' audit (2026-12): a Parquet file of answers
with integer columns was opened as counts in chunks (its rater ids and labels becoming
categories), an item-id column headed ``question`` or ``tweet_id`` was counted as a category
of a count table, a DataArray whose dims were not exactly ``(item, category)`` was read by
position (its labels becoming items), ``categories=`` renamed the count columns read in
chunks where ``read_annotations`` refuses it, repeated item ids (and ``1`` beside ``"1"``)
were kept as separate items, and a damaged zarr store gave a bare JSON parser error. Every
expected count below is written out from the few rows of the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.data import (
    files,
    from_dataarray,
    holds_counts,
    open_counts_in_chunks,
    opens_in_chunks,
    read_in_chunks,
    tables,
)
from ambppl.data.matrices import ID_HEADERS, count_dims, id_column
from ambppl.data.readers import read_annotations, read_input, read_long
from ambppl.data.tables import _ID_NAMES

pytest.importorskip("dask")

#: Two items' counts of pos, neg and '?' (the can't-solve answer).
VALUES = np.array([[3, 1, 0], [0, 2, 2]])
CATEGORIES = ["pos", "neg", "?"]


def _message(read, *args, **kwargs) -> tuple[type, str]:
    with pytest.raises((ValueError, TypeError)) as info:
        read(*args, **kwargs)
    return info.type, str(info.value)


# ------------------------------------------ 1: a Parquet file of answers, integer columns


ANSWER_FILES = {
    # the audit's file: six answers to tasks 1 and 2 by workers 7, 8 and 9
    "task_id": {"task_id": [1, 1, 1, 2, 2, 2], "worker_id": [7, 8, 9, 7, 8, 9]},
    "question": {"question": [1, 1, 1, 2, 2, 2], "annotator": [7, 8, 9, 7, 8, 9]},
}


@pytest.mark.parametrize("heading", list(ANSWER_FILES))
def test_parquet_answers_of_integer_columns_never_open_as_counts(tmp_path, heading) -> None:
    label = "label" if heading == "task_id" else "answer"
    path = tmp_path / "answers.parquet"
    frame = pd.DataFrame({**ANSWER_FILES[heading], label: [0, 1, 0, 2, 2, 1]})
    frame.to_parquet(path, index=False)
    # read as read_annotations reads it: answers whose item column 'task' is absent
    assert not opens_in_chunks(path) and not opens_in_chunks(path, item="task")
    expected = _message(read_annotations, path)
    assert "item column 'task' is not in the data" in expected[1]
    assert _message(read_input, path, lazy=1000) == expected  # as ambppl score reads it
    assert _message(read_in_chunks, path, chunk_items=1000) == expected
    # its columns named: answers, in memory and in chunks alike
    item, rater = list(ANSWER_FILES[heading])
    counts = read_input(path, lazy=1000, item=item, rater=rater, label=label)
    assert isinstance(counts, xr.DataArray)
    assert counts["item"].values.tolist() == [1, 2]
    assert counts["category"].values.tolist() == ["0", "1", "2"]
    assert counts.values.tolist() == [[2, 1, 0], [0, 1, 2]]  # 0,1,0 and 2,2,1
    chunked = read_in_chunks(path, chunk_items=1, item=item, label=label)
    assert chunked.values.tolist() == counts.values.tolist()
    # only the layout counts reads it as counts
    assert opens_in_chunks(path, "counts")


def test_parquet_counts_still_open_in_chunks(tmp_path) -> None:
    path = tmp_path / "counts.parquet"
    frame = pd.DataFrame(VALUES, columns=CATEGORIES).assign(item=["a", "b"])
    frame.to_parquet(path, index=False)
    assert opens_in_chunks(path) and opens_in_chunks(path, item="task", label="label")
    lazy = read_input(path, lazy=1000)
    assert lazy.categories == CATEGORIES and lazy.values.compute().tolist() == VALUES.tolist()


# ---------------------------------------------- 2: an item-id column counted as a category


def test_the_count_reader_knows_every_id_name_of_the_wide_reader() -> None:
    # one list: the wide reader's id names (question, tweet_id, doc, ...) are those of counts
    # (all but the blank header), each header normalized by one helper
    assert _ID_NAMES == ID_HEADERS - {""}
    assert tables._header_key is files._header_key


@pytest.mark.parametrize(
    ("header", "where"),
    [
        *(
            (h, w)
            for h in ("tweet_id", "Tweet ID", "question_id", "unit_id")
            for w in ("first", "last")
        ),
        ("question", "first"),  # a word: the item ids only in the first column
        ("doc", "first"),
    ],
)
def test_an_id_column_of_counts_holds_the_items(tmp_path, header, where) -> None:
    frame = pd.DataFrame(VALUES, columns=CATEGORIES)
    frame.insert(0 if where == "first" else 3, header, [1001, 1002])
    path = tmp_path / "c_q.csv"
    frame.to_csv(path, index=False)
    counts = read_annotations(path, format="counts", cant_solve="?")
    assert counts["category"].values.tolist() == CATEGORIES  # the ids are no category
    assert counts["item"].values.tolist() == [1001, 1002]
    assert counts.values.tolist() == VALUES.tolist()  # 4 answers each, not 1005 and 1006
    frame.to_parquet(tmp_path / "c_q.parquet", index=False)
    lazy = open_counts_in_chunks(tmp_path / "c_q.parquet", chunk_items=1)
    assert lazy.categories == CATEGORIES
    assert lazy.items.compute().tolist() == [1001, 1002]


def test_a_second_id_column_of_counts_is_refused(tmp_path) -> None:
    # to_csv with the index of a frame that has its own id column: two id columns
    frame = pd.DataFrame(VALUES, columns=CATEGORIES)
    frame.insert(0, "item_id", [1001, 1002])
    frame.to_csv(tmp_path / "c.csv")
    kind, text = _message(read_annotations, tmp_path / "c.csv", format="counts")
    assert kind is ValueError
    assert "the column 'item_id', headed like item ids, besides the column 'Unnamed: 0'" in text
    assert "pass item='item_id'" in text
    counts = read_annotations(
        pd.read_csv(tmp_path / "c.csv").drop(columns="Unnamed: 0"), format="counts"
    )
    assert counts["item"].values.tolist() == [1001, 1002]
    # a header that is also a word may name a category beside the id column: kept
    modality = pd.DataFrame({"id": ["a", "b"], "text": [2, 0], "image": [1, 3]})
    counts = read_annotations(modality, format="counts")
    assert counts["category"].values.tolist() == ["text", "image"]
    assert id_column(["text", "image", "id"]) == "id"


def test_a_word_header_elsewhere_than_first_heads_a_category(tmp_path) -> None:
    # `text`, `image`, `question` are id names that are also words: beside other categories
    # (not first) they head counts, where a list of id names alone took them for the ids
    frame = pd.DataFrame({"audio": [3, 2, 0], "text": [1, 2, 5], "image": [0, 1, 1]})
    counts = read_annotations(frame, format="counts")
    assert counts["category"].values.tolist() == ["audio", "text", "image"]
    assert counts.values.sum(axis=1).tolist() == [4, 5, 6]
    assert id_column(["pos", "question", "neg"]) is None


def test_a_first_word_column_of_repeated_counts_is_refused_with_the_rename(tmp_path) -> None:
    # first, a word header is taken for the ids; counts repeat (as a category's do on any
    # table with more items than answers per item), so it is refused, saying to rename it
    frame = pd.DataFrame({"text": [1, 2, 1], "image": [3, 2, 0], "audio": [0, 1, 1]})
    kind, text = _message(read_annotations, frame, format="counts")
    assert kind is ValueError
    assert "the id 1 occurs on more than one row" in text
    assert "if column 'text' holds the counts of a category rather than item ids" in text


def test_a_second_id_column_of_parquet_counts_is_refused_in_chunks(tmp_path) -> None:
    # follow-up: the chunked reader refuses it as read_annotations does (the same message);
    # before, 'item_id' was opened as a category, adding 1001 and 1002 to the items' answers
    path = tmp_path / "c2.parquet"
    frame = pd.DataFrame(VALUES, columns=CATEGORIES)
    frame.insert(0, "id", ["a", "b"])
    frame.insert(1, "item_id", [1001, 1002])
    frame.to_parquet(path, index=False)
    expected = _message(read_annotations, path, format="counts")
    assert expected[0] is ValueError
    assert "the column 'item_id', headed like item ids, besides the column 'id'" in expected[1]
    assert _message(open_counts_in_chunks, path, chunk_items=1) == expected
    assert _message(read_in_chunks, path, chunk_items=1) == expected
    # the id column named, the other dropped: read
    frame.drop(columns="item_id").to_parquet(path, index=False)
    lazy = open_counts_in_chunks(path, chunk_items=1, cant_solve="?")
    assert lazy.categories == CATEGORIES and lazy.items.compute().tolist() == ["a", "b"]


# ----------------------------------------------------------- 5: a DataArray's dims by name


def _laid_out(dims: tuple[str, str], **kwargs: Any) -> tuple[xr.DataArray, str, str]:
    """The counts VALUES of items x, y laid out with ``dims`` (told apart by name), with
    the item dim and the category dim."""
    item_dim, category_dim = count_dims(dims)
    array = xr.DataArray(
        VALUES if dims[0] == item_dim else VALUES.T,
        dims=dims,
        coords={item_dim: ["x", "y"], category_dim: CATEGORIES},
        **kwargs,
    )
    return array, item_dim, category_dim


@pytest.mark.parametrize(
    "dims",
    [
        ("item", "category"),
        ("category", "item"),
        ("label", "item"),
        ("category", "task"),
        ("item", "label"),
        ("label", "task"),
        ("answer", "question"),
    ],
)
def test_a_dataarray_is_read_by_its_dim_names(dims) -> None:
    array, item_dim, _ = _laid_out(dims)
    counts = read_annotations(array, cant_solve="?")
    assert counts.dims == ("item", "category")
    assert counts["item"].values.tolist() == ["x", "y"]  # never the labels
    assert counts["category"].values.tolist() == CATEGORIES
    assert counts.values.tolist() == VALUES.tolist()
    lazy = from_dataarray(array.chunk({item_dim: 1}))
    assert lazy.categories == CATEGORIES and lazy.items.compute().tolist() == ["x", "y"]
    assert lazy.values.compute().tolist() == VALUES.tolist()
    assert lazy.values.chunks[0] == (1, 1)  # chunked along the items


@pytest.mark.parametrize(
    "dims",
    [("item", "category"), ("category", "item"), ("label", "task"), ("task", "label")],
)
def test_a_zarr_store_is_opened_in_chunks_by_its_dim_names(tmp_path, dims) -> None:
    # follow-up: the chunked reader took the store's second dim for the categories (labels
    # 'x', 'y' as categories, pos/neg/? as items); it tells them by name, as in memory
    pytest.importorskip("zarr")
    array, item_dim, _ = _laid_out(dims, name="counts", attrs={"cant_solve": "?"})
    for zarr_format in (2, 3):  # dim names in an attribute (2) or the metadata (3)
        path = tmp_path / f"c{zarr_format}.zarr"
        array.chunk({item_dim: 1}).to_dataset().to_zarr(
            path, consolidated=False, zarr_format=zarr_format
        )
        whole = read_annotations(path)
        assert whole["item"].values.tolist() == ["x", "y"]
        assert whole.values.tolist() == VALUES.tolist()
        for lazy in (open_counts_in_chunks(path), read_in_chunks(path, chunk_items=1)):
            assert lazy.categories == CATEGORIES and lazy.cant_solve == "?"
            assert lazy.items.compute().tolist() == ["x", "y"]
            assert lazy.values.compute().tolist() == VALUES.tolist()
            assert lazy.values.chunks[0] == (1, 1)  # the store's chunks along its items
    # a store without an item coordinate: items numbered from 0, categories still by name
    array.drop_vars(item_dim).to_dataset().to_zarr(tmp_path / "bare.zarr", consolidated=False)
    bare = open_counts_in_chunks(tmp_path / "bare.zarr")
    assert bare.items is None and bare.categories == CATEGORIES
    assert bare.values.compute().tolist() == VALUES.tolist()


def test_count_dims_without_names_are_positional() -> None:
    assert count_dims(("dim_0", "dim_1")) == ("dim_0", "dim_1")
    assert count_dims(("task", "item_id")) == ("task", "item_id")  # both ids: as written
    counts = read_annotations(xr.DataArray(VALUES))  # as a numpy array: items first
    assert counts.values.tolist() == VALUES.tolist()


# --------------------------------------- 6: categories= refused, never renaming, in chunks


def test_categories_that_are_not_the_count_columns_are_refused_in_chunks(tmp_path) -> None:
    path = tmp_path / "c.parquet"
    frame = pd.DataFrame({"item": ["a", "b"], "?": [0, 2], "pos": [3, 0], "neg": [1, 2]})
    frame.to_parquet(path, index=False)
    wrong = {"categories": ["negative", "positive", "cant"], "cant_solve": "cant"}
    expected = _message(read_annotations, path, format="counts", item="item", **wrong)
    assert "labels ['?', 'pos', 'neg'] occur in the data but are not in categories" in (expected[1])
    assert _message(read_in_chunks, path, chunk_items=1, item="item", **wrong) == expected
    assert _message(open_counts_in_chunks, path, item="item", **wrong) == expected
    lazy = open_counts_in_chunks(path, item="item")
    assert _message(ambppl.score, lazy, **wrong) == expected
    # the labels themselves reorder the columns, as in memory
    moved = read_in_chunks(path, chunk_items=1, categories=["pos", "neg", "?"], cant_solve="?")
    whole = read_annotations(
        path, format="counts", item="item", categories=["pos", "neg", "?"], cant_solve="?"
    )
    assert moved.categories == whole["category"].values.tolist() == ["pos", "neg", "?"]
    assert moved.values.compute().tolist() == whole.values.tolist() == [[3, 1, 0], [0, 2, 2]]


# ------------------------------------------------------------- 9: repeated item ids refused


def test_repeated_item_ids_of_counts_are_refused(tmp_path) -> None:
    path = tmp_path / "countsdup.csv"
    path.write_text("id,x,y\na,1,2\na,3,0\nb,1,1\n")
    kind, text = _message(read_annotations, path, format="counts")
    assert kind is ValueError
    assert "item ids must be distinct" in text and "the id 'a' occurs on more than one row" in text
    assert "groupby('id').sum()" in text and "'countsdup.csv'" in text
    frame = pd.DataFrame({"x": [1, 3, 1], "y": [2, 0, 1]}, index=["a", "a", "b"])
    assert "the id 'a' occurs" in _message(read_annotations, frame, format="counts")[1]
    array = xr.DataArray(VALUES, dims=("item", "category"), coords={"item": ["a", "a"]})
    assert "the id 'a' occurs" in _message(read_annotations, array)[1]
    assert "the id 'a' occurs" in _message(from_dataarray, array.chunk({"item": 1}))[1]


def test_item_ids_of_two_types_that_print_the_same_are_refused() -> None:
    frame = pd.DataFrame(VALUES, columns=CATEGORIES, index=pd.Index([1, "1"], dtype=object))
    kind, text = _message(read_annotations, frame, format="counts")
    assert kind is ValueError and "the ids [1, '1']" in text and "print the same" in text
    # ids that differ in print are kept, as text (one type per coordinate)
    frame.index = pd.Index([1, "2"], dtype=object)
    assert read_annotations(frame, format="counts")["item"].values.tolist() == ["1", "2"]


def test_long_and_wide_item_ids_of_two_types_that_print_the_same_are_refused() -> None:
    # follow-up: a long frame with ids 1 and "1" gave two items that both print as 1
    answers = pd.DataFrame(
        {"task": [1, "1", 2], "worker": ["a", "b", "a"], "label": ["pos", "neg", "pos"]}
    )
    for read in (read_annotations, read_long):
        kind, text = _message(read, answers)
        assert kind is ValueError and "but the ids [1, '1'] (in the item column 'task'" in text
        assert "print the same" in text and "frame['task'].astype(str)" in text
    one_type = read_annotations(answers.assign(task=answers["task"].astype(str)))
    assert one_type["item"].values.tolist() == ["1", "2"]  # one item: its two answers
    assert one_type.values.tolist() == [[1, 1], [0, 1]]
    wide = pd.DataFrame({"r1": ["pos", "neg"], "r2": ["neg", "neg"]})
    wide.index = pd.Index([1, "1"], dtype=object)
    kind, text = _message(read_annotations, wide, format="wide")
    assert kind is ValueError and "the ids [1, '1'] (in the index of 'DataFrame')" in text
    assert "and one row to each item" in text
    wide.index = pd.Index([1, "2"], dtype=object)  # ids that print apart are kept
    assert read_annotations(wide, format="wide")["item"].values.tolist() == ["1", "2"]


def test_repeated_item_ids_are_refused_in_chunks(tmp_path) -> None:
    path = tmp_path / "dup.parquet"
    frame = pd.DataFrame({"item": ["a", "b", "a", "c"], "yes": [1, 2, 3, 0], "no": [0, 1, 1, 2]})
    frame.to_parquet(path, index=False, row_group_size=2)
    expected = "but the id 'a' occurs on more than one row"
    with pytest.raises(ValueError, match=expected):  # one chunk holds both rows
        read_in_chunks(path, chunk_items=4).values.compute()
    with pytest.raises(ValueError, match=expected):
        ambppl.score(read_in_chunks(path, chunk_items=4), random_seed=0).compute()
    lazy = read_in_chunks(path, chunk_items=4).relabel(["no", "yes"])  # still checked
    with pytest.raises(ValueError, match=expected):
        lazy.values.compute()
    distinct = tmp_path / "distinct.parquet"
    frame.assign(item=["a", "b", "d", "c"]).to_parquet(distinct, index=False)
    counts = read_in_chunks(distinct, chunk_items=2)
    assert counts.values.compute().tolist() == [[1, 0], [2, 1], [3, 1], [0, 2]]


# ---------------------------------------------------------------- 12: a damaged zarr store


def _store(tmp_path: Path) -> Path:
    pytest.importorskip("zarr")
    path = tmp_path / "s.zarr"
    array = xr.DataArray(
        VALUES,
        dims=("item", "category"),
        coords={"item": ["a", "b"], "category": CATEGORIES},
        name="counts",
    )
    array.to_dataset().to_zarr(path, consolidated=False)
    return path


@pytest.mark.parametrize(
    ("damage", "got"),
    [
        ("{'zarr_format': 3}", "text that is not JSON (Expecting property name"),
        ("", "an empty file"),
        ("[1, 2]", "a JSON list"),
    ],
)
@pytest.mark.parametrize("where", ["store", "array"])
def test_a_damaged_zarr_store_is_refused_with_the_file(tmp_path, damage, got, where) -> None:
    path = _store(tmp_path)
    meta = path / "zarr.json" if (path / "zarr.json").exists() else path / ".zgroup"
    if where == "array":
        meta = path / "counts" / ("zarr.json" if (path / "zarr.json").exists() else ".zarray")
    json.loads(meta.read_text())  # it was JSON
    meta.write_text(damage)
    inside = meta.relative_to(path).as_posix()
    wanted = (
        f"could not read 's.zarr' as ZARR: its metadata file '{inside}' must hold a JSON "
        f"object, but got {got}"
    )
    for read in (
        lambda: read_annotations(path),
        lambda: read_in_chunks(path, chunk_items=1),
        lambda: open_counts_in_chunks(path),
        lambda: read_input(path, lazy=10),
        lambda: holds_counts(path),
    ):
        kind, text = _message(read)
        assert kind is ValueError and text.startswith(wanted), text
        assert "the store is damaged" in text and "write it again" in text


def test_an_intact_zarr_store_is_read(tmp_path) -> None:
    path = _store(tmp_path)
    counts = read_annotations(path)
    assert counts.values.tolist() == VALUES.tolist()
    assert read_in_chunks(path, chunk_items=1).values.compute().tolist() == VALUES.tolist()
