"""Tests of ambppl.data.readers: every source format, the conventions and every error message."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import ambppl
from ambppl.data.readers import example_path, read_annotations, read_long

CS = "I can't tell"


def reference_counts(items, labels, categories):
    """Independent reference: count (item, label) pairs with a plain Counter.

    Items are ordered by their first row, whether or not that row's label is missing.
    """
    kept = [(i, lab) for i, lab in zip(items, labels, strict=True) if not pd.isna(lab)]
    order = list(dict.fromkeys(items))
    tally = Counter(kept)
    return order, np.array([[tally[(i, c)] for c in categories] for i in order], dtype=np.int64)


@pytest.fixture
def long_df() -> pd.DataFrame:
    """Small long table: repeated answers (item 7, rater a), a missing label, a cs answer."""
    return pd.DataFrame(
        {
            "task": [7, 7, 7, 3, 3, 3, 5, 5, 7],
            "worker": ["a", "a", "b", "a", "b", "c", "b", "c", "c"],
            "label": ["pos", "pos", "neg", "?", "neg", None, "pos", "pos", "?"],
        }
    )


EXPECTED_CATS = ["neg", "pos", "?"]


def expected(df: pd.DataFrame) -> tuple[list, np.ndarray]:
    return reference_counts(df["task"].tolist(), df["label"].tolist(), EXPECTED_CATS)


def check_counts_array(counts: xr.DataArray, items: list, values: np.ndarray) -> None:
    assert counts.name == "counts"
    assert counts.dims == ("item", "category")
    assert counts.dtype == np.int64
    assert counts["item"].values.tolist() == items
    assert counts["category"].values.tolist() == EXPECTED_CATS
    np.testing.assert_array_equal(counts.values, values)


# --------------------------------------------------------------------------- long sources


def test_long_frame_counts_attrs_and_order(long_df):
    counts = read_annotations(long_df, cant_solve="?")
    items, values = expected(long_df)
    assert items == [7, 3, 5]  # order of first appearance, original ids kept
    check_counts_array(counts, items, values)
    assert counts.attrs == {
        "cant_solve": "?",
        "n_dropped": 1,
        "source": "DataFrame",
        "n_raters": 3,
        "format": "long",
    }
    # repeated answers by rater "a" on item 7 are both counted
    assert int(counts.sel(item=7, category="pos")) == 2


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("a.csv", {}),
        ("a.csv.gz", {}),
        ("a.tsv", {"sep": "\t"}),
        ("a.parquet", None),
        ("a.txt", {"sep": "\t"}),  # unknown suffix: format given explicitly
    ],
)
def test_files_round_trip(long_df, tmp_path, name, kwargs):
    path = tmp_path / name
    if kwargs is None:
        long_df.to_parquet(path)
    else:
        long_df.to_csv(path, index=False, **kwargs)
    fmt = "tsv" if name.endswith(".txt") else None
    counts = read_annotations(path, cant_solve="?", format=fmt)
    items, values = expected(long_df)
    check_counts_array(counts, items, values)
    assert counts.attrs["source"] == name
    assert counts.attrs["n_dropped"] == 1
    assert counts.attrs["n_raters"] == 3
    xr.testing.assert_identical(
        counts.drop_attrs(), read_annotations(long_df, cant_solve="?").drop_attrs()
    )


def test_read_kwargs_reach_the_reader(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("task;worker;label\n1;a;x\n1;b;y\n")
    counts = read_annotations(path, sep=";")
    assert counts.values.tolist() == [[1, 1]]


def test_custom_column_names_and_no_rater(long_df):
    df = long_df.rename(columns={"task": "tweet", "label": "answer"}).drop(columns="worker")
    counts = read_annotations(df, item="tweet", rater=None, label="answer", cant_solve="?")
    items, values = expected(long_df)
    check_counts_array(counts, items, values)
    assert counts.attrs["n_raters"] is None


def test_blank_strings_are_missing_labels(long_df):
    df = long_df.copy()
    df.loc[0, "label"] = "  "
    counts = read_annotations(df, cant_solve="?")
    assert counts.attrs["n_dropped"] == 2
    assert int(counts.sum()) == len(df) - 2


# --------------------------------------------------------------------------- category order


def test_numeric_labels_sorted_numerically_as_strings():
    df = pd.DataFrame({"task": [1, 1, 1, 2], "worker": [1, 2, 3, 1], "label": [10, 2, 1, 2]})
    counts = read_annotations(df)
    assert counts["category"].values.tolist() == ["1", "2", "10"]
    assert counts.values.tolist() == [[1, 1, 1], [0, 1, 0]]


def test_float_labels_with_missing_values_become_integer_strings():
    # a CSV column of ints with a blank is read as float64: 1.0 must still be "1"
    df = pd.DataFrame({"task": [1, 1, 2], "worker": [1, 2, 1], "label": [1.0, np.nan, 0.0]})
    counts = read_annotations(df)
    assert counts["category"].values.tolist() == ["0", "1"]
    assert counts.attrs["n_dropped"] == 1


def test_text_labels_sorted_and_cant_solve_last(long_df):
    counts = read_annotations(long_df)  # no cant_solve: plain sorted order
    assert counts["category"].values.tolist() == ["?", "neg", "pos"]
    assert counts.attrs["cant_solve"] is None


def test_categories_fix_order_and_add_unused_labels(long_df):
    counts = read_annotations(long_df, categories=["?", "pos", "meh", "neg"], cant_solve="?")
    # cant_solve moved last, the others keep the given order; "meh" was never chosen
    assert counts["category"].values.tolist() == ["pos", "meh", "neg", "?"]
    assert counts.sel(category="meh").values.tolist() == [0, 0, 0]
    base = read_annotations(long_df, cant_solve="?")
    np.testing.assert_array_equal(counts.sel(category=["neg", "pos", "?"]).values, base.values)


def test_cant_solve_declared_in_categories_but_unused():
    df = pd.DataFrame({"task": [1, 1], "worker": [1, 2], "label": ["a", "b"]})
    counts = read_annotations(df, categories=["a", "b", "cs"], cant_solve="cs")
    assert counts["category"].values.tolist() == ["a", "b", "cs"]
    assert counts.values.tolist() == [[1, 1, 0]]


def test_integer_cant_solve_label():
    df = pd.DataFrame({"task": [1, 1, 1], "worker": [1, 2, 3], "label": [0, 3, 1]})
    counts = read_annotations(df, cant_solve=3)
    assert counts["category"].values.tolist() == ["0", "1", "3"]
    assert counts.attrs["cant_solve"] == "3"


# --------------------------------------------------------------------------- wide and counts


def test_wide_table_matches_long(long_df):
    single = long_df.drop_duplicates(["task", "worker"])  # a wide table has one cell per pair
    wide = single.pivot(index="task", columns="worker", values="label")
    wide = wide.loc[[7, 3, 5]]  # keep the first-appearance order of the long table
    counts = read_annotations(wide, format="wide", cant_solve="?")
    items, values = expected(single)
    check_counts_array(counts, items, values)
    n_blank = int(wide.isna().sum().sum())
    assert counts.attrs["n_dropped"] == n_blank
    assert counts.attrs["format"] == "wide"
    assert counts.attrs["n_raters"] == 3
    # the same table as a file with an item column
    assert n_blank > 0


def test_wide_file_with_item_column(long_df, tmp_path):
    single = long_df.drop_duplicates(["task", "worker"])
    wide = single.pivot(index="task", columns="worker", values="label").loc[[7, 3, 5]]
    path = tmp_path / "wide.tsv"
    wide.reset_index().to_csv(path, sep="\t", index=False)
    from_file = read_annotations(path, format="wide", cant_solve="?")
    from_frame = read_annotations(wide, format="wide", cant_solve="?")
    xr.testing.assert_identical(from_file.drop_attrs(), from_frame.drop_attrs())
    assert read_annotations(path, format="wide+tsv", cant_solve="?").equals(from_file)


def test_count_matrices_agree(long_df):
    ref = read_annotations(long_df, cant_solve="?")
    as_numpy = read_annotations(ref.values, categories=EXPECTED_CATS, cant_solve="?")
    frame = pd.DataFrame(ref.values, index=ref["item"].values, columns=EXPECTED_CATS)
    as_pandas = read_annotations(frame, format="counts", cant_solve="?")
    as_xarray = read_annotations(ref)
    for counts in (as_numpy, as_pandas, as_xarray):
        np.testing.assert_array_equal(counts.values, ref.values)
        assert counts["category"].values.tolist() == EXPECTED_CATS
        assert counts.attrs["cant_solve"] == "?"
        assert counts.attrs["format"] == "counts"
    assert as_numpy["item"].values.tolist() == [0, 1, 2]
    assert as_pandas["item"].values.tolist() == [7, 3, 5]
    assert as_numpy.attrs["n_raters"] is None
    # a DataArray from read_annotations keeps its provenance
    assert as_xarray.attrs["n_raters"] == 3 and as_xarray.attrs["source"] == "DataFrame"


def test_count_frame_with_item_column_and_column_order_kept():
    frame = pd.DataFrame({"task": ["x", "y"], "b": [1, 0], "cs": [0, 2], "a": [3, 1]})
    counts = read_annotations(frame, format="counts", cant_solve="cs")
    assert counts["item"].values.tolist() == ["x", "y"]
    assert counts["category"].values.tolist() == ["b", "a", "cs"]  # column order, cs last
    assert counts.values.tolist() == [[1, 3, 0], [0, 1, 2]]
    assert counts.dtype == np.int64
    # labels are kept as Python objects (any hashable label), not fixed-width numpy strings
    assert counts["category"].dtype == object


def test_xarray_transposed_and_npy_file(tmp_path):
    arr = np.array([[2, 0, 1], [0, 4, 1]])
    da = xr.DataArray(arr.T, dims=("category", "item"), coords={"category": ["u", "v", "w"]})
    counts = read_annotations(da, cant_solve="u")
    assert counts["category"].values.tolist() == ["v", "w", "u"]
    assert counts.values.tolist() == [[0, 1, 2], [4, 1, 0]]
    path = tmp_path / "c.npy"
    np.save(path, arr)
    from_npy = read_annotations(path)
    assert from_npy.values.tolist() == arr.tolist()
    assert from_npy["category"].values.tolist() == ["0", "1", "2"]


# --------------------------------------------------------------------------- read_long


def test_read_long_canonical(long_df):
    long = read_long(long_df, cant_solve="?")
    assert list(long.columns) == ["item", "rater", "label"]
    assert len(long) == len(long_df) - 1
    assert list(long["label"].cat.categories) == EXPECTED_CATS
    assert long["item"].tolist() == long_df["task"][long_df["label"].notna()].tolist()
    assert long["rater"].tolist() == long_df["worker"][long_df["label"].notna()].tolist()
    assert long.attrs["n_dropped"] == 1 and long.attrs["cant_solve"] == "?"
    # counting the canonical table gives the same counts
    again = read_annotations(long, item="item", rater="rater", label="label", cant_solve="?")
    np.testing.assert_array_equal(again.values, read_annotations(long_df, cant_solve="?").values)


def test_read_long_rejects_counts():
    # reference: the whole message, which says why and names the function that takes counts
    message = (
        "a count matrix cannot be turned into one row per answer (which rater gave which "
        "answer is unknown); use read_annotations for counts"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        read_long(np.ones((2, 2)))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 6),
            st.integers(0, 3),
            st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"])),
        ),
        min_size=1,
        max_size=60,
    )
)
def test_counts_match_reference_property(rows):
    df = pd.DataFrame(rows, columns=["task", "worker", "label"])
    kept = df[df["label"].notna()]
    answered = set(kept["task"])
    if set(df["task"]) - answered or kept["label"].nunique() < 2:
        with pytest.raises(ValueError, match="at least"):
            read_annotations(df)
        return
    counts = read_annotations(df)
    cats = sorted(kept["label"].unique())
    items, values = reference_counts(df["task"].tolist(), df["label"].tolist(), cats)
    assert counts["category"].values.tolist() == cats
    assert counts["item"].values.tolist() == items
    np.testing.assert_array_equal(counts.values, values)
    assert counts.attrs["n_dropped"] == int(df["label"].isna().sum())
    assert int(counts.sum()) == len(kept)


# --------------------------------------------------------------------------- errors


def test_unknown_column_lists_the_columns(long_df):
    with pytest.raises(
        ValueError, match=r"item column 'tweet' is not in the data.*'task', 'worker'"
    ):
        read_annotations(long_df, item="tweet")
    with pytest.raises(ValueError, match=r"label column 'emotion' is not in the data"):
        read_annotations(long_df, label="emotion")
    with pytest.raises(ValueError, match=r"rater column 'rater' .*rater=None"):
        read_annotations(long_df, rater="rater")


def test_cant_solve_absent(long_df):
    with pytest.raises(ValueError, match=r"cant_solve must be a label that occurs.*'maybe'.*'neg'"):
        read_annotations(long_df, cant_solve="maybe")
    with pytest.raises(
        ValueError,
        match=r"\(pass cant_solve=None if the task had no can't-solve "
        r"answer\)$",
    ):
        read_annotations(long_df, cant_solve="maybe")


def test_labels_missing_from_categories(long_df):
    with pytest.raises(ValueError, match=r"labels \['\?'\] occur in the data but are not in"):
        read_annotations(long_df, categories=["neg", "pos"])


@pytest.mark.parametrize(
    ("categories", "error", "match"),
    [
        ("neg", TypeError, "categories must be a list of labels"),
        (["neg", "neg", "pos"], ValueError, r"categories must be distinct labels.*'neg'"),
        (["neg"], ValueError, "categories must list at least 2 labels"),
    ],
)
def test_bad_categories(long_df, categories, error, match):
    with pytest.raises(error, match=match):
        read_annotations(long_df, categories=categories)


def test_empty_item_all_labels_missing(long_df):
    df = pd.concat(
        [long_df, pd.DataFrame({"task": [9, 9], "worker": ["a", "b"], "label": [None, np.nan]})]
    )
    with pytest.raises(ValueError, match=r"1 item\(s\) \[9\] have none left after dropping 3"):
        read_annotations(df)


def test_empty_item_all_zero_count_row():
    with pytest.raises(ValueError, match=r"item\(s\) \[1\] have none \(an all-zero row"):
        read_annotations(np.array([[1, 2], [0, 0]]))


def test_missing_item_id(long_df):
    df = long_df.astype({"task": "float64"})
    df.loc[4, "task"] = np.nan
    with pytest.raises(
        ValueError, match=r"item column 'task' must have an id on every answer.*row 4"
    ):
        read_annotations(df)


def test_missing_item_ids_are_counted_among_kept_answers(long_df):
    """The message counts the kept answers without an item id (reference: the rows the test
    blanks, 4 and 6; row 5's id is blanked too but its label is missing, so it is dropped,
    not counted). Item 7, the first item, has answers too, so a count of the first item's
    answers with the missing ones (6) would differ."""
    df = long_df.astype({"task": "float64"})
    df.loc[[4, 5, 6], "task"] = np.nan
    assert df["label"].isna().tolist() == [False] * 5 + [True] + [False] * 3
    assert (df["task"] == 7).sum() == 4  # answers on item 7, the first item
    with pytest.raises(
        ValueError,
        match=re.escape(
            "item column 'task' must have an id on every answer, but 2 answer(s) have none "
            "(first at row 4); fill in or drop those rows"
        ),
    ):
        read_annotations(df)


@pytest.mark.parametrize(
    ("counts", "match"),
    [
        (np.array([[1, -2], [3, 1]]), "counts must be non-negative, but got minimum -2.0"),
        (np.array([[1, 0.5], [3, 1]]), r"counts must be whole numbers, but got \[0.5\]"),
        (np.array([[1, np.nan], [3, 1]]), "counts must be finite"),
        (np.array([[1], [3]]), "counts must have at least 2 categories"),
        (np.array([1, 3]), r"counts must be a 2-D array \(items x categories\)"),
    ],
)
def test_bad_counts(counts, match):
    with pytest.raises(ValueError, match=match):
        read_annotations(counts)


def test_non_numeric_counts_frame():
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    with pytest.raises(TypeError, match="counts must be array-like of numbers"):
        read_annotations(frame, format="counts")


def test_counts_categories_must_name_every_column():
    with pytest.raises(ValueError, match=r"categories must name the 3 columns.*got 2 labels"):
        read_annotations(np.ones((2, 3)), categories=["a", "b"])


def test_duplicate_count_columns():
    da = xr.DataArray(np.ones((2, 2)), dims=("item", "category"), coords={"category": [1, 1.0]})
    with pytest.raises(ValueError, match=r"counts must have distinct category labels.*'1'"):
        read_annotations(da)


def test_three_dimensional_dataarray():
    with pytest.raises(ValueError, match=r"counts must be 2-D \(item x category\)"):
        read_annotations(xr.DataArray(np.ones((2, 2, 2))))


def test_single_category():
    df = pd.DataFrame({"task": [1, 2], "worker": [1, 1], "label": ["yes", "yes"]})
    # reference: the whole message, which names the fix (list the answers nobody gave)
    message = (
        "the annotations must have at least 2 categories, but only ['yes'] occurs; "
        "pass categories=[...] to list the answers nobody gave"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        read_annotations(df)
    # listing the unused answer fixes it
    assert read_annotations(df, categories=["yes", "no"]).values.tolist() == [[1, 0], [1, 0]]


def test_garbage_parquet(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"\x00\x01garbage bytes, not parquet\xff" * 10)
    with pytest.raises(
        ValueError,
        match=r"could not read 'bad.parquet' as PARQUET .*; check that it is a Parquet file "
        r"\(or pass format='csv' for text\)$",
    ):
        read_annotations(path)


def test_ragged_csv(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("task,worker,label\n1,a,x\n1,b,y,extra,fields\n")
    with pytest.raises(ValueError, match=r"could not read 'ragged.csv' as CSV.*same number of"):
        read_annotations(path)
    # the reader's own first line is quoted (pandas' tokenizer: 5 fields where 3 are expected)
    with pytest.raises(
        ValueError,
        match=r"as CSV \(Error tokenizing data\. C error: Expected 3 "
        r"fields in line 3, saw 5\); check",
    ):
        read_annotations(path)
    tsv = tmp_path / "ragged.tsv"
    tsv.write_text("task\tworker\tlabel\n1\ta\tx\n1\tb\ty\textra\tfields\n")
    with pytest.raises(
        ValueError,
        match=r"as TSV \(.*saw 5\); check that every row has the "
        r"same number of tab-separated fields$",
    ):
        read_annotations(tsv)


def test_undecodable_csv(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("task,worker,label\n1,a,caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"could not read 'latin.csv' as CSV"):
        read_annotations(path)
    assert read_annotations(path, encoding="latin-1", rater=None, categories=["café", "x"]).shape


def test_bad_npy(tmp_path):
    path = tmp_path / "c.npy"
    path.write_text("not numpy")
    with pytest.raises(ValueError, match=r"could not read 'c.npy' as NPY"):
        read_annotations(path)


def test_unknown_suffix_and_format(tmp_path, long_df):
    path = tmp_path / "data.xlsx"
    path.write_text("x")
    with pytest.raises(ValueError, match=r"format cannot be told from the file suffix '.xlsx'"):
        read_annotations(path)
    bare = tmp_path / "data"  # no suffix at all
    bare.write_text("x")
    with pytest.raises(ValueError, match=r"format cannot be told from the file suffix '\(none\)'"):
        read_annotations(bare)
    with pytest.raises(ValueError, match=r"format must be one of 'long', .*but got 'excel'"):
        read_annotations(path, format="excel")
    with pytest.raises(ValueError, match=r"format must be one of .*but got 'wide\+long'"):
        read_annotations(long_df, format="wide+long")
    with pytest.raises(TypeError, match="format must be a string"):
        read_annotations(long_df, format=3)


def test_format_that_does_not_fit_the_source(long_df, tmp_path):
    with pytest.raises(ValueError, match=r"format='csv' names a file type, but the source is a"):
        read_annotations(long_df, format="csv")
    with pytest.raises(ValueError, match=r"format='wide' does not fit a ndarray"):
        read_annotations(np.ones((2, 2)), format="wide")
    np.save(tmp_path / "c.npy", np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"format='long' does not fit a .npy file"):
        read_annotations(tmp_path / "c.npy", format="long")


def test_missing_file_and_bad_source(tmp_path, long_df):
    with pytest.raises(FileNotFoundError, match=r"source file .*nope.csv' does not exist"):
        read_annotations(tmp_path / "nope.csv")
    with pytest.raises(TypeError, match=r"source must be a pandas.DataFrame.*but got list"):
        read_annotations([[1, 2]])
    with pytest.raises(TypeError, match=r"reader options \['sep'\] apply to file paths only"):
        read_annotations(long_df, sep=";")


def test_wide_table_without_rater_columns():
    with pytest.raises(ValueError, match="a wide table must have one column per rater"):
        read_annotations(pd.DataFrame({"task": [1, 2]}), format="wide")


# --------------------------------------------------------------------------- bundled example


def test_example_data():
    path = example_path("weather_sentiment")
    assert path.is_file() and (path.parent / "README.md").is_file()
    df = pd.read_csv(path)
    assert list(df.columns) == ["task", "worker", "label"]
    counts = ambppl.read_annotations(path, cant_solve=CS)
    assert dict(counts.sizes) == {"item": 200, "category": 5}
    assert set(counts.sum("category").values.tolist()) == {20}
    assert counts["category"].values[-1] == CS
    assert int((counts.sel(category=CS) > 0).sum()) == 126  # stratified: 63 % of 200


def test_example_unknown_name():
    with pytest.raises(ValueError, match=r"name must be one of \['weather_sentiment'\]"):
        example_path("weather")


def test_example_is_reproduced_by_its_script(shared_data):
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "reference" / "make_example_data.py"
    spec = importlib.util.spec_from_file_location("make_example_data", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.make(shared_data / "cf_weather_sentiment" / "weather-non-agg-DFE.csv")
    stored = pd.read_csv(example_path("weather_sentiment"))
    pd.testing.assert_frame_equal(made.reset_index(drop=True), stored)


# --------------------------------------------------------------------------- shared data sets


def test_shared_weather(shared_data):
    path = shared_data / "cf_weather_sentiment" / "weather-non-agg-DFE.csv"
    counts = read_annotations(
        path, item="tweet_id", rater="worker_id", label="emotion", cant_solve=CS
    )
    assert dict(counts.sizes) == {"item": 1000, "category": 5}
    assert set(counts.sum("category").values.tolist()) == {20}
    assert counts["category"].values[-1] == CS
    assert counts.attrs["n_raters"] == 102
    assert int(counts.sel(category=CS).sum()) == 1137  # 5.7 % of 20,000 (README)
    assert round(float((counts.sel(category=CS) > 0).mean()), 2) == 0.63  # README: 63 % of items


def test_shared_anesthesia_repeated_answers_kept(shared_data):
    path = shared_data / "anesthesia_ds1979" / "anesthesia_long.csv"
    counts = read_annotations(path, item="item", rater="rater", label="rating")
    assert dict(counts.sizes) == {"item": 45, "category": 4}
    assert int(counts.sum()) == 315
    assert counts.attrs["n_raters"] == 5
    assert counts["category"].values.tolist() == ["1", "2", "3", "4"]
    long = read_long(path, item="item", rater="rater", label="rating")
    assert long.duplicated(["item", "rater"]).any()  # rater 1 rated every item 3 times


def test_shared_dog(shared_data):
    path = shared_data / "dog_zhou2012" / "answer.csv"
    counts = read_annotations(path, item="question", rater="worker", label="answer")
    assert dict(counts.sizes) == {"item": 807, "category": 4}
    assert counts["category"].values.tolist() == ["0", "1", "2", "3"]
    assert set(counts.sum("category").values.tolist()) == {10}
    assert counts.attrs["n_raters"] == 109


def test_shared_cifar10h_counts(shared_data):
    path = shared_data / "cifar10h" / "cifar10h-counts.npy"
    counts = read_annotations(path)
    assert dict(counts.sizes) == {"item": 10000, "category": 10}
    totals = counts.sum("category").values
    assert totals.min() == 47 and totals.max() == 63  # README: 47-63 labels per image
    np.testing.assert_array_equal(counts.values, np.load(path))


def test_read_long_of_a_wide_table_and_its_attrs(long_df):
    """read_long on the wide form of a table gives the same canonical rows as on the long form
    (reference: the long table itself, one answer per item-rater pair), and attrs say which
    layout was read; n_raters counts distinct rater ids, a missing id not among them."""
    single = long_df.drop_duplicates(["task", "worker"])
    wide = single.pivot(index="task", columns="worker", values="label").loc[[7, 3, 5]]
    from_wide = read_long(wide, format="wide", cant_solve="?")
    assert from_wide.attrs["format"] == "wide"
    assert read_long(long_df, cant_solve="?").attrs["format"] == "long"
    kept = single[single["label"].notna()]
    pairs = sorted(zip(kept["task"], kept["worker"], kept["label"], strict=True))
    got = sorted(zip(from_wide["item"], from_wide["rater"], from_wide["label"], strict=True))
    assert got == pairs
    no_id = long_df.assign(worker=["a", "a", "b", "a", None, "c", "b", "c", "c"])
    assert read_long(no_id, cant_solve="?").attrs["n_raters"] == 3  # a, b, c


def test_count_matrix_without_items(tmp_path):
    # as ambppl.data.as_counts and ambppl.fit: no items is refused where it is read
    np.save(tmp_path / "empty.npy", np.zeros((0, 3), dtype=np.int64))
    sources = [
        np.zeros((0, 3)),
        np.zeros((0, 3), dtype=np.int64),
        xr.DataArray(np.zeros((0, 2)), dims=("item", "category")),
        tmp_path / "empty.npy",
    ]
    for source in sources:
        with pytest.raises(ValueError, match=r"^counts must have at least one item, but got 0"):
            read_annotations(source)
    with pytest.raises(ValueError, match=r"^counts must have at least one item, but got 0"):
        ambppl.data.as_counts(np.zeros((0, 3)))


def test_data_all_is_in_plain_sorted_order():
    # the comment on ambppl.data.__all__ promises plain sorted() order, as ambppl.__all__
    assert ambppl.data.__all__ == sorted(ambppl.data.__all__)
    assert len(set(ambppl.data.__all__)) == len(ambppl.data.__all__)
    assert all(hasattr(ambppl.data, name) for name in ambppl.data.__all__)
