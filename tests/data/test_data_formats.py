"""Reading the files users have (ambppl/data): headerless text files, comment lines, other
separators, wide tables without a header line, zarr stores, and messages in the caller's words
(Python keywords, or the ``ambppl`` command's options inside ``command_line_messages``)."""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ambppl.data.readers import command_line_messages, read_annotations, read_long


@pytest.fixture
def answers(rng: np.random.Generator) -> pd.DataFrame:
    """A long table: 8 items x 4 answers from 6 raters, labels pos / neg / ?."""
    rows = [
        (f"w{w}", f"t{i}", rng.choice(["pos", "neg", "?"]))
        for i in range(8)
        for w in rng.choice(6, size=4, replace=False)
    ]
    rows += [("w0", "t0", label) for label in ("pos", "neg", "?")]  # every label occurs
    return pd.DataFrame(rows, columns=["worker", "task", "label"])


def _headerless(path: Path, df: pd.DataFrame, sep: str = "\t") -> Path:
    """The worker / item / label file that crowdsourcing benchmarks ship: no header line."""
    df.to_csv(path, sep=sep, header=False, index=False)
    return path


def test_headerless_tsv_by_column_positions(answers, tmp_path):
    reference = read_annotations(answers, cant_solve="?")
    path = _headerless(tmp_path / "answers.tsv", answers)
    counts = read_annotations(path, header=None, item=1, rater=0, label=2, cant_solve="?")
    np.testing.assert_array_equal(counts.values, reference.values)
    assert counts["item"].values.tolist() == reference["item"].values.tolist()
    assert counts.attrs["n_raters"] == answers["worker"].nunique()
    long = read_long(path, header=None, item=1, rater=0, label=2)
    assert long["rater"].tolist() == answers["worker"].tolist()


def test_txt_is_read_as_text_when_a_separator_is_given(answers, tmp_path):
    path = _headerless(tmp_path / "answers.txt", answers)
    by_sep = read_annotations(path, sep="\t", header=None, item=1, rater=0, label=2)
    by_format = read_annotations(path, format="tsv", header=None, item=1, rater=0, label=2)
    xr.testing.assert_identical(by_sep, by_format)


def test_txt_without_format_says_what_it_looks_like(answers, tmp_path):
    path = _headerless(tmp_path / "answers.txt", answers)
    with pytest.raises(ValueError, match=r"suffix '.txt'.*looks tab-separated: pass format='tsv'"):
        read_annotations(path)
    with command_line_messages(), pytest.raises(ValueError) as caught:
        read_annotations(path)
    message = str(caught.value)
    assert "--format csv|tsv|parquet|npy|zarr" in message and "pass --format tsv" in message
    assert "format=" not in message


def test_numeric_headerless_file_is_told_to_use_no_header(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text("1\t1\t3\n2\t1\t2\n1\t2\t0\n2\t2\t3\n")
    with pytest.raises(ValueError, match=r"first line looks like data.*pass header=None"):
        read_annotations(path)
    with command_line_messages(), pytest.raises(ValueError, match=r"pass --no-header"):
        read_annotations(path)
    # read with a header, the first line's values become the column names: caught there too
    with (
        command_line_messages(),
        pytest.raises(
            ValueError,
            match=r"item column 'task' is not in the data.*pass --item <one of them>; the "
            r"first line looks like data, not column names: pass --no-header",
        ),
    ):
        read_annotations(path, format="tsv")
    counts = read_annotations(path, format="tsv", header=None, item=1, rater=0, label=2)
    assert counts.values.tolist() == [[0, 1, 1], [1, 0, 1]]


def test_header_made_of_labels_of_a_long_file_is_caught(answers, tmp_path):
    path = _headerless(tmp_path / "answers.csv", answers, sep=",")
    with pytest.raises(ValueError, match=r"the columns present are \['w"):
        read_annotations(path, item="task")
    with pytest.raises(ValueError, match=r"first line looks like data.*header=None"):
        read_annotations(path)


def test_csv_with_comment_lines(answers, tmp_path):
    path = tmp_path / "commented.csv"
    header = "# exported 2024-01-01, pilot study\n# second line\n"
    path.write_text(header + answers.to_csv(index=False))
    with pytest.raises(ValueError, match=r"could not read 'commented.csv' as CSV.*comment='#'"):
        read_annotations(path)
    with command_line_messages(), pytest.raises(ValueError, match=r"pass --comment '#'"):
        read_annotations(path)
    counts = read_annotations(path, comment="#", cant_solve="?")
    np.testing.assert_array_equal(counts.values, read_annotations(answers, cant_solve="?").values)


def test_one_comment_line_read_as_the_header_is_caught(answers, tmp_path):
    path = tmp_path / "commented.csv"
    path.write_text("# a, b, c\n" + answers.to_csv(index=False))
    with pytest.raises(ValueError, match=r"the first line looks like a comment: pass comment='#'"):
        read_annotations(path)


def test_one_percent_comment_line_gets_the_comment_hint(answers, tmp_path):
    """A text file whose first line (only) is a ``%`` comment, as MATLAB and Octave write:
    the message says so and names ``comment='%'`` (``--comment %`` on the command line);
    with that option the file reads to the counts of the table written into it (reference:
    the same table read as a DataFrame)."""
    path = tmp_path / "answers.txt"
    path.write_text("% exported from MATLAB\n" + answers.to_csv(index=False))
    with pytest.raises(ValueError, match=r"; it starts with comment lines: pass comment='%'; "):
        read_annotations(path)
    with (
        command_line_messages(),
        pytest.raises(ValueError, match=r"; it starts with comment lines: pass --comment %; "),
    ):
        read_annotations(path)
    counts = read_annotations(path, sep=",", comment="%", cant_solve="?")
    np.testing.assert_array_equal(counts.values, read_annotations(answers, cant_solve="?").values)


def test_quoted_numbers_on_the_first_line_look_like_data(tmp_path):
    """A headerless file of numbers written with every field quoted ("1","7","2") still gets
    the no-header hint: the quotes are not part of the values (reference: pandas reads the
    quoted fields as the integers written)."""
    df = pd.DataFrame({"worker": [1, 2, 1, 2], "task": [7, 7, 8, 8], "label": [2, 0, 1, 1]})
    path = tmp_path / "answers.txt"
    df.to_csv(path, header=False, index=False, quoting=csv.QUOTE_ALL)
    assert path.read_text().splitlines()[0] == '"1","7","2"'
    with pytest.raises(
        ValueError, match=r"; its first line looks like data, not column names: pass header=None "
    ):
        read_annotations(path)
    counts = read_annotations(path, sep=",", header=None, item=1, rater=0, label=2)
    xr.testing.assert_identical(counts.drop_attrs(), read_annotations(df).drop_attrs())


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"comment": "##"}, r"comment must be one character such as '#', but got '##'"),
        ({"comment": 3}, r"comment must be one character"),
    ],
)
def test_bad_comment(answers, tmp_path, options, match):
    path = tmp_path / "a.csv"
    answers.to_csv(path, index=False)
    with pytest.raises(ValueError, match=match):
        read_annotations(path, **options)


def test_other_separators(answers, tmp_path):
    reference = read_annotations(answers, cant_solve="?")
    semicolon = tmp_path / "a.csv"
    answers.to_csv(semicolon, sep=";", index=False)
    counts = read_annotations(semicolon, sep=";", cant_solve="?")
    np.testing.assert_array_equal(counts.values, reference.values)
    spaces = tmp_path / "a.dat"
    spaces.write_text("".join(f"{w}   {t} {lab}\n" for w, t, lab in answers.to_numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ParserWarning about the regex separator
        counts = read_annotations(spaces, sep=r"\s+", header=None, item=1, rater=0, label=2)
    np.testing.assert_array_equal(counts.values, read_annotations(answers).values)


@pytest.mark.parametrize(
    ("sep", "joiners"), [("::", ("::", "::")), ("[;,]", (";", ","))], ids=["double-colon", "mixed"]
)
def test_regular_expression_separators_read_without_a_warning(answers, tmp_path, sep, joiners):
    """A separator of more than one character is a regular expression: read by pandas' python
    engine, chosen up front, so pandas does not warn that it falls back to it (reference: the
    same table read as a DataFrame)."""
    first, second = joiners
    rows = [answers.columns.tolist(), *answers.to_numpy().tolist()]
    path = tmp_path / "answers.csv"
    path.write_text("".join(f"{w}{first}{t}{second}{lab}\n" for w, t, lab in rows))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' ParserWarning about the python engine
        counts = read_annotations(path, sep=sep, cant_solve="?")
    reference = read_annotations(answers, cant_solve="?")
    xr.testing.assert_identical(counts.drop_attrs(), reference.drop_attrs())


def test_text_options_refused_for_binary_files(tmp_path):
    np.save(tmp_path / "c.npy", np.array([[1, 2], [3, 0]]))
    with pytest.raises(ValueError, match=r"sep= applies to text files .*'c.npy' is read as NPY"):
        read_annotations(tmp_path / "c.npy", sep=",")
    with (
        command_line_messages(),
        pytest.raises(
            ValueError, match=r"--sep, --comment, --no-header apply to text files .* --format csv"
        ),
    ):
        read_annotations(tmp_path / "c.npy", sep=",", comment="#", header=None)


def test_unknown_reader_option_is_a_type_error(answers, tmp_path):
    path = tmp_path / "a.csv"
    answers.to_csv(path, index=False)
    with pytest.raises(
        TypeError,
        match=r"reader options \['colour'\] must be options of pandas\.read_csv for "
        r"'a\.csv' \(.*colour",
    ):
        read_annotations(path, colour="red")


def test_messages_name_command_line_options(answers):
    df = answers.rename(columns={"worker": "annotator"})
    with command_line_messages():
        with pytest.raises(ValueError) as caught:
            read_annotations(df)
        with pytest.raises(ValueError, match=r"--cant-solve must be a label .*leave out "):
            read_annotations(df, rater="annotator", cant_solve="maybe")
    message = str(caught.value)
    assert "pass --rater <one of them> (or --no-rater if the data have no rater ids)" in message
    assert "rater=" not in message
    # outside the block: Python keywords again
    with pytest.raises(ValueError, match=r"pass rater=<one of them> \(or rater=None"):
        read_annotations(df)


# --------------------------------------------------------------------------- wide tables


def _wide_headerless(path: Path, rng: np.random.Generator, n_items: int = 12) -> np.ndarray:
    """A headerless wide CSV: one row per item, one column per rater, blanks not rated."""
    cells = np.full((n_items, 5), "", dtype=object)
    for i in range(n_items):
        cells[i, rng.choice(5, size=3, replace=False)] = rng.choice(["pos", "neg", "?"], size=3)
    cells[0, :3] = ["pos", "neg", "?"]  # every label on the first line
    path.write_text("".join(",".join(row) + "\n" for row in cells))
    return cells


def test_headerless_wide_csv_is_refused_not_shortened(rng, tmp_path):
    path = tmp_path / "wide.csv"
    cells = _wide_headerless(path, rng)
    with pytest.raises(ValueError, match=r"looks like answers, not rater names.*pass header=None"):
        read_annotations(path, format="wide")
    with command_line_messages(), pytest.raises(ValueError, match=r"pass --no-header"):
        read_annotations(path, format="wide")
    counts = read_annotations(path, format="wide", header=None, cant_solve="?")
    assert counts.sizes["item"] == len(cells)  # no row lost
    expected = [[int(np.sum(row == c)) for c in ("neg", "pos", "?")] for row in cells]
    assert counts.values.tolist() == expected
    assert counts["item"].values.tolist() == list(range(len(cells)))


@pytest.mark.parametrize(
    ("text", "cells", "what"),
    [
        ("pos,neg,\nneg,,pos\n?,pos,\n", "['pos', 'neg']", "some are blank"),
        ("pos,pos,neg\nneg,?,pos\n", "['pos', 'pos', 'neg']", "some repeat"),
    ],
    ids=["blank", "repeat"],
)
def test_headerless_wide_csv_message_says_blank_or_repeat(tmp_path, text, cells, what):
    """A headerless wide file whose first line has a blank cell (pandas names it
    ``Unnamed: 2``) or a repeated label (``pos.1``): the message (reference: written out in
    full here) says which, and names both fixes."""
    path = tmp_path / "wide.csv"
    path.write_text(text)
    message = (
        f"the header of the wide table 'wide.csv' looks like answers, not rater names: its "
        f"cells {cells} are answer labels and {what}; reading that line as the header would "
        "drop its item's answers: pass header=None (items are then numbered by row from 0, or "
        "give the id column's 0-based position item=<position>), or give the table a header "
        "line of rater names"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        read_annotations(path, format="wide")


def test_wide_header_of_labels_without_blanks_warns(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("1,2,3\n1,2,1\n3,3,2\n")  # raters 1-3 rating on a 1-3 scale, or no header?
    with pytest.warns(UserWarning, match=r"rater names \['1', '2', '3'\] .* are all answer labels"):
        counts = read_annotations(path, format="wide")
    assert counts.sizes["item"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_annotations(path, format="wide", header=None).sizes["item"] == 3


def test_wide_table_with_rater_names_is_quiet(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("id,ann1,ann2,ann3\na,pos,,neg\nb,,pos,pos\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts = read_annotations(path, format="wide", item="id")
    assert counts.values.tolist() == [[1, 1], [0, 2]]


# --------------------------------------------------------------------------- zarr stores


@pytest.fixture
def counts() -> xr.DataArray:
    return xr.DataArray(
        np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]]),
        dims=("item", "category"),
        coords={"item": ["a", "b", "c"], "category": ["yes", "no", "?"]},
        name="counts",
        attrs={"cant_solve": "?"},
    )


def test_zarr_store_written_by_xarray(counts, tmp_path):
    pytest.importorskip("zarr")
    path = tmp_path / "counts.zarr"
    counts.to_dataset().to_zarr(path, consolidated=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = read_annotations(path)
    xr.testing.assert_equal(back, counts)
    assert back.attrs["cant_solve"] == "?" and back.attrs["format"] == "counts"
    # a folder without the .zarr suffix: recognized by its metadata, or named by format=
    other = tmp_path / "store"
    path.rename(other)
    xr.testing.assert_equal(read_annotations(other), counts)
    xr.testing.assert_equal(read_annotations(other, format="zarr"), counts)


def test_plain_zarr_array(tmp_path):
    zarr = pytest.importorskip("zarr")
    zarr.save_array(str(tmp_path / "c.zarr"), np.array([[1, 2], [0, 3]]))
    counts = read_annotations(tmp_path / "c.zarr", categories=["x", "y"])
    assert counts.values.tolist() == [[1, 2], [0, 3]]
    assert counts["category"].values.tolist() == ["x", "y"]


def test_reading_an_empty_folder_as_zarr_writes_nothing(tmp_path):
    """A reader opens a zarr store read-only: an empty folder is an error and stays empty
    (opened for appending, zarr would write a new empty group into it)."""
    pytest.importorskip("zarr")
    folder = tmp_path / "empty.zarr"
    folder.mkdir()
    with pytest.raises(ValueError, match=r"could not read 'empty.zarr' as ZARR"):
        read_annotations(folder)
    assert list(folder.iterdir()) == []


def test_zarr_errors(counts, tmp_path):
    zarr = pytest.importorskip("zarr")
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    group.create_array("a", data=np.ones((2, 2)))
    group.create_array("b", data=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"must hold one 2-D count array .* \['a', 'b'\]"):
        read_annotations(tmp_path / "g.zarr")
    (tmp_path / "empty.zarr").mkdir()
    with pytest.raises(ValueError, match=r"could not read 'empty.zarr' as ZARR"):
        read_annotations(tmp_path / "empty.zarr")
    with pytest.raises(FileNotFoundError, match=r"zarr store .*absent.zarr' does not exist"):
        read_annotations(tmp_path / "absent.zarr")
    counts.to_dataset().to_zarr(tmp_path / "c.zarr", consolidated=False)
    with pytest.raises(ValueError, match=r"format='wide' does not fit a zarr store"):
        read_annotations(tmp_path / "c.zarr", format="wide")
    with pytest.raises(ValueError, match=r"count matrix cannot be turned into one row per answer"):
        read_long(tmp_path / "c.zarr")


# --------------------------------------------------------------------------- real data


def test_headerless_copy_of_the_dog_data(shared_data, tmp_path):
    """The dog data (question, worker, answer) written without its header line and with
    tabs, as such benchmarks often ship, reads to the same counts by column positions."""
    raw = pd.read_csv(shared_data / "dog_zhou2012" / "answer.csv")
    reference = read_annotations(raw, item="question", rater="worker", label="answer")
    path = tmp_path / "dog.txt"
    raw[["worker", "question", "answer"]].to_csv(path, sep="\t", header=False, index=False)
    with pytest.raises(ValueError, match=r"looks tab-separated.*first line looks like data"):
        read_annotations(path)
    counts = read_annotations(path, sep="\t", header=None, item=1, rater=0, label=2)
    xr.testing.assert_equal(counts.drop_attrs(), reference.drop_attrs())
    assert counts.sizes == {"item": 807, "category": 4}


# --------------------------------------------------------------------------- issue 25: reading


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


NA_LIKE = "task,worker,label\n1,a,N/A\n1,b,pos\n2,a,NA\n2,b,None\n3,a,null\n3,b,pos\n3,c,neg\n"


def test_na_like_labels_are_answers(tmp_path):
    """pandas' default NA strings are labels: nothing is dropped unless na_values names it."""
    path = _write(tmp_path / "na.csv", NA_LIKE)
    counts = read_annotations(path, cant_solve="N/A")
    # reference: the 7 rows written above, tallied by hand: every label kept
    assert counts["category"].values.tolist() == ["NA", "None", "neg", "null", "pos", "N/A"]
    assert counts.values.tolist() == [[0, 0, 0, 0, 1, 1], [1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 0]]
    assert counts.attrs["n_dropped"] == 0
    # the same strings in a frame agree
    frame = pd.read_csv(path, keep_default_na=False)
    xr.testing.assert_equal(
        counts.drop_attrs(), read_annotations(frame, cant_solve="N/A").drop_attrs()
    )


def test_na_values_names_the_missing_answers(tmp_path):
    path = _write(tmp_path / "na.csv", NA_LIKE)
    counts = read_annotations(path, na_values=["N/A", "NA", "null"])
    assert counts["category"].values.tolist() == ["None", "neg", "pos"]
    assert counts.values.tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 1]]
    assert counts.attrs["n_dropped"] == 3
    frame = pd.read_csv(path, keep_default_na=False)
    assert read_annotations(frame, na_values="None", rater=None).attrs["n_dropped"] == 1
    long = read_long(path, na_values=["N/A", "NA", "null"])
    assert len(long) == 4 and long.attrs["n_dropped"] == 3
    wide = _write(tmp_path / "wide.csv", "task,a,b\n1,N/A,pos\n2,neg,pos\n")
    w = read_annotations(wide, format="wide", na_values=["N/A"])
    assert w.values.tolist() == [[0, 1], [1, 1]] and w.attrs["n_dropped"] == 1
    with pytest.raises(ValueError, match=r"every item must have at least one answer.*\[2\]"):
        read_annotations(path, na_values=["N/A", "NA", "None", "null"])
    with pytest.raises(TypeError, match=r"na_values must list label texts"):
        read_annotations(path, na_values=[None])
    np.save(tmp_path / "c.npy", np.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match=r"na_values names missing answers, but 'c.npy' holds"):
        read_annotations(tmp_path / "c.npy", na_values=["NA"])


def test_na_like_ids_are_ids(tmp_path):
    path = _write(tmp_path / "ids.csv", "task,worker,label\nNA,None,x\nNA,null,y\nN/A,NA,x\n")
    counts = read_annotations(path)
    assert counts["item"].values.tolist() == ["NA", "N/A"]
    assert counts.values.tolist() == [[1, 1], [1, 0]]
    assert counts.attrs["n_raters"] == 3


def test_ids_and_labels_are_kept_exactly_as_written(tmp_path):
    text = "task,worker,label\n007,a,2\n7,b,2.0\n1e3,a,x\n1000,b,2\n7.0,c,x\n 7,d,2\n"
    counts = read_annotations(_write(tmp_path / "ids.csv", text))
    assert counts["item"].values.tolist() == ["007", "7", "1e3", "1000", "7.0", " 7"]
    assert counts["category"].values.tolist() == ["2", "2.0", "x"]
    assert counts.values.sum(axis=1).tolist() == [1] * 6
    # the same text in a frame gives the same counts (one rule for files and frames)
    frame = pd.read_csv(tmp_path / "ids.csv", dtype=str)
    xr.testing.assert_identical(
        counts.drop_attrs(), read_annotations(frame).drop_attrs().astype(np.int64)
    )
    # plain integer ids come back as int64 (they print the same); a float id is not one
    plain = read_annotations(_write(tmp_path / "p.csv", "task,worker,label\n12,a,x\n-3,b,y\n"))
    assert plain["item"].dtype == np.int64 and plain["item"].values.tolist() == [12, -3]
    float_ids = read_annotations(_write(tmp_path / "f.csv", "task,worker,label\n7.0,a,x\n8,a,y\n"))
    assert float_ids["item"].values.tolist() == ["7.0", "8"]
    # a blank label on the row of a float-looking column does not turn 7 into 7.0
    blank = read_annotations(_write(tmp_path / "b.csv", "task,worker,label\n7,a,x\n7,b,\n8,a,y\n"))
    assert blank["item"].values.tolist() == [7, 8] and blank.attrs["n_dropped"] == 1
    long = read_long(_write(tmp_path / "r.csv", "task,worker,label\n1,5,x\n1,007,y\n"))
    assert long["rater"].tolist() == ["5", "007"]  # one id is not plain: all kept as text
    long = read_long(_write(tmp_path / "r2.csv", "task,worker,label\n1,5,x\n1,-12,y\n"))
    assert long["rater"].tolist() == [5, -12] and long["rater"].dtype == np.int64


def test_numeric_labels_agree_across_frames_files_and_parquet(tmp_path):
    """Numbers (a typed column) become canonical text; the text a file holds is kept; the
    order is numeric when every label is a number."""
    frame = pd.DataFrame({"task": [1, 1, 1, 2], "worker": [1, 2, 3, 1], "label": [10, 2, 1, 2]})
    reference = read_annotations(frame)
    assert reference["category"].values.tolist() == ["1", "2", "10"]
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.to_parquet(tmp_path / "a.parquet")
    frame.astype({"label": float}).to_parquet(tmp_path / "f.parquet")
    frame.astype(str).to_parquet(tmp_path / "s.parquet")
    for name in ("a.csv", "a.parquet", "f.parquet"):
        xr.testing.assert_identical(
            read_annotations(tmp_path / name).drop_attrs(), reference.drop_attrs()
        )
    # a Parquet column of text ids keeps them as text (typed ids are never changed)
    text = read_annotations(tmp_path / "s.parquet")
    assert text["item"].values.tolist() == ["1", "2"]
    np.testing.assert_array_equal(text.values, reference.values)
    assert text["category"].values.tolist() == ["1", "2", "10"]
    # labels written as floats stay as written, sorted by value then text
    _write(tmp_path / "w.csv", "task,worker,label\n1,a,10.0\n1,b,2.0\n1,c,2\n2,a,1e0\n")
    counts = read_annotations(tmp_path / "w.csv")
    assert counts["category"].values.tolist() == ["1e0", "2", "2.0", "10.0"]


def test_header_line_read_with_header_none_is_refused(tmp_path):
    path = _write(tmp_path / "h.csv", "task,worker,label\n1,2,pos\n1,3,neg\n2,2,pos\n")
    with pytest.raises(
        ValueError,
        match=r"^the first line of 'h.csv' looks like a header line, not an answer: its cells "
        r"\['task', 'worker', 'label'\] are column names, and its label 'label' occurs nowhere "
        r"else; drop header=None and name the columns \(item='task', rater='worker', "
        r"label='label'\)$",
    ):
        read_annotations(path, header=None, item=0, rater=1, label=2)
    # other column names: told by the text ids where every other row has numbers
    path = _write(tmp_path / "n.csv", "q,who,said\n1,2,pos\n1,3,neg\n2,2,pos\n")
    with pytest.raises(ValueError, match=r"its item cell 'q' is text where every other row"):
        read_annotations(path, header=None, item=0, rater=1, label=2)
    with (
        command_line_messages(),
        pytest.raises(
            ValueError,
            match=r"drop --no-header and name "
            r"the columns \(--item q --rater who --label said",
        ),
    ):
        read_annotations(path, header=None, item=0, rater=1, label=2)


def test_headerless_data_whose_first_answer_is_rare_is_kept(tmp_path):
    """No false alarm: numeric ids on every row, or a first label given elsewhere too."""
    text = "1,2,unique\n1,3,neg\n2,2,pos\n"
    counts = read_annotations(
        _write(tmp_path / "a.csv", text), header=None, item=0, rater=1, label=2
    )
    assert counts["category"].values.tolist() == ["neg", "pos", "unique"]
    text = "t1,w1,label\nt1,w2,label\nt2,w1,pos\n"  # 'label' is an answer given twice
    counts = read_annotations(
        _write(tmp_path / "b.csv", text), header=None, item=0, rater=1, label=2
    )
    assert counts.values.tolist() == [[2, 0], [0, 1]]


def test_long_file_read_as_wide_is_refused(tmp_path):
    path = _write(tmp_path / "long.csv", "task,worker,label\n1,a,pos\n1,b,neg\n2,a,pos\n")
    with pytest.raises(
        ValueError,
        match=r"^the table 'long.csv' read as wide \(one column per rater\) has the columns "
        r"'worker' and 'label' of a long table .*; leave out format='wide' to read one row per "
        r"answer$",
    ):
        read_annotations(path, format="wide")
    with command_line_messages(), pytest.raises(ValueError, match="leave out --layout wide"):
        read_long(path, format="wide")
    other = _write(tmp_path / "o.csv", "id,annotator,answer\n1,a,pos\n1,b,neg\n")
    with pytest.raises(ValueError, match=r"the columns 'annotator' and 'answer' of a long"):
        read_annotations(other, format="wide", item="id", rater="annotator", label="answer")


def test_wide_table_with_a_column_of_ids_is_refused(rng, tmp_path):
    table = pd.DataFrame(
        {
            "id": [f"item{i}" for i in range(25)],
            "r1": rng.choice(["pos", "neg"], 25),
            "r2": rng.choice(["pos", "neg"], 25),
        }
    )
    with pytest.raises(
        ValueError,
        match=r"column 'id' of the wide table 'DataFrame' holds 25 "
        r"different values, one per row, .*pass item='id'",
    ):
        read_annotations(table, format="wide")
    counts = read_annotations(table, format="wide", item="id")
    assert int(counts.sum()) == 50


def test_duplicated_label_column_is_refused(tmp_path):
    path = _write(tmp_path / "d.csv", "task,worker,label,label\n1,a,pos,neg\n1,b,neg,neg\n")
    message = r"^label column 'label' occurs 2 times in the header, so which one holds the"
    with pytest.raises(ValueError, match=message):
        read_annotations(path)
    frame = pd.DataFrame([[1, "a", "pos", "neg"]], columns=["task", "worker", "label", "label"])
    with pytest.raises(ValueError, match=message):
        read_annotations(frame)
    # a column that is really called label.1 is no copy
    ok = _write(tmp_path / "ok.csv", "task,worker,label,label.1\n1,a,pos,x\n1,b,neg,y\n")
    assert read_annotations(ok).values.tolist() == [[1, 1]]
    # a repeated column that is not used is fine
    ok = _write(tmp_path / "ok2.csv", "task,worker,label,note,note\n1,a,pos,,\n1,b,neg,,\n")
    assert read_annotations(ok).values.tolist() == [[1, 1]]


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (
            np.array([[2**62, 2**62], [1, 1]]),
            r"must be at most 2\*\*53 = 9007199254740992 .* but "
            r"got 4611686018427387904 \(item 0, column 0\)",
        ),
        (
            np.array([[2**52, 2**52 + 2], [1, 1]]),
            r"must sum to at most 2\*\*53 .* but a row "
            r"sums to 9007199254740994 \(item 0\)",
        ),
        (np.array([[1e300, 1], [1, 1]]), r"but got 1e\+300 \(item 0, column 0\)"),
        (
            np.array([[1, 1], [np.nan, 1]]),
            r"must be finite, .*a count is missing \(NaN: an empty "
            r"cell or a null\) \(item 1, column 0\)",
        ),
        (pd.DataFrame({"a": [1.0, np.nan], "b": [1, 2]}), r"missing .* \(item 1, category 'a'\)"),
    ],
)
def test_counts_too_large_or_missing_are_refused(data, match):
    with pytest.raises(ValueError, match=match):
        read_annotations(data, format="counts")


def test_counts_just_below_two_to_the_53_are_kept():
    counts = read_annotations(np.array([[2**52, 2**52 - 1], [0, 1]]))
    assert counts.values.sum(axis=1).tolist() == [2**53 - 1, 1]
    # 2**53 + 1 is refused, not rounded to 2**53 by float64 (from a file too)
    with pytest.raises(ValueError, match=r"but got 9007199254740993 \(item 0, column 0\)"):
        read_annotations(np.array([[2**53 + 1, 0], [0, 1]]))


def test_count_csv_is_read_as_numbers(tmp_path):
    path = _write(tmp_path / "c.csv", "item,a,b\n007,1,2\n8,3,1e1\n")
    counts = read_annotations(path, format="counts", item="item")
    assert counts.values.tolist() == [[1, 2], [3, 10]]
    assert counts["item"].values.tolist() == ["007", "8"]
    for cells, match in [
        ("8,x,1", r"^counts must be numbers, but got 'x' \(item 8, category 'a'\)"),
        ("8,,1", r"a count is missing .* \(item 8, category 'a'\)"),
        ("8,9007199254740993,0", r"but got 9007199254740993 \(item 8, category 'a'\)"),
        ("8,0.5,1", r"must be whole numbers, but got \[0\.5\] \(item 8, category 'a'\)"),
        ("8,-1,1", r"must be non-negative, but got minimum -1\.0 \(item 8, category 'a'\)"),
    ]:
        _write(path, f"item,a,b\n7,1,2\n{cells}\n")
        with pytest.raises(ValueError, match=match):
            read_annotations(path, format="counts", item="item")


def test_parquet_count_errors_name_row_and_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ambppl.data import open_counts_in_chunks
    from ambppl.data.chunked import _read_counts as read_counts

    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"a": pa.array([1, None, 3], pa.int64()), "b": [1, 1, 1]}), path)
    with pytest.raises(ValueError, match=r"missing \(NaN.*\) \(item 1, category 'a'\)"):
        read_annotations(path, format="counts")
    with pytest.raises(
        ValueError,
        match=r"^counts in 'c.parquet' must be finite.*\(row 5, "
        r"category 'a'\)",
    ):
        read_counts(path, [0], ["a", "b"], first_row=4)
    pq.write_table(pa.table({"a": [2**62, 1], "b": [2**62, 1]}), path)
    with pytest.raises(ValueError, match=r"must be at most 2\*\*53"):
        read_counts(path, [0], ["a", "b"])
    pq.write_table(pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.int64())}), path)
    with pytest.raises(ValueError, match=r"^'c.parquet' has no rows"):
        open_counts_in_chunks(path, chunk_items=10)
    with pytest.raises(ValueError, match=r"^'c.parquet' has no rows"):
        read_annotations(path, format="counts")


def _gzip(text: str) -> bytes:
    import gzip

    return gzip.compress(text.encode())


GOOD = "task,worker,label\n1,a,café\n1,b,neg\n2,a,neg\n"


@pytest.mark.parametrize(
    "content",
    [
        GOOD.encode("utf-8-sig"),
        GOOD.encode("utf-16"),  # with a byte-order mark
        GOOD.encode("utf-16-le"),  # without one
        GOOD.encode("utf-16-be"),
        GOOD.encode("utf-32"),
        _gzip(GOOD),  # gzip saved as .csv
    ],
    ids=["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "gzip"],
)
def test_encodings_and_compression_told_by_the_first_bytes_are_read(content, tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(content)
    counts = read_annotations(path)
    assert counts["category"].values.tolist() == ["café", "neg"]
    assert counts.values.tolist() == [[1, 1], [0, 1]]


def test_csv_gz_that_is_not_compressed_is_read(tmp_path):
    path = _write(tmp_path / "a.csv.gz", GOOD)
    assert read_annotations(path).values.tolist() == [[1, 1], [0, 1]]


@pytest.mark.parametrize(
    ("content", "kwargs", "match"),
    [
        (
            GOOD.encode("latin-1"),
            {},
            r"^could not read 'a.csv' as CSV: it is not UTF-8 text \(its "
            r"byte 0xe9 does not decode as UTF-8\); if it is Latin-1 or Windows-1252 text pass "
            r"encoding='latin-1', else the encoding it was saved in$",
        ),
        (
            ("task,worker,label\n" + "1,a,x\n" * 2000 + "1,b,caf\xe9\n").encode("latin-1"),
            {},
            r"^could not read 'a.csv' as CSV: it is not UTF-8 text .*encoding='latin-1'",
        ),
        (GOOD.encode(), {"encoding": "nope"}, r"^encoding must be a text encoding such as"),
        (
            bytes(range(256)) * 3,
            {},
            r"^could not read 'a.csv' as CSV: it is not a text file \(it "
            r"holds binary data: NUL bytes\)",
        ),
        (
            b'[{"task": 1, "worker": "a", "label": "x"}]',
            {},
            r"^could not read 'a.csv' as CSV: it "
            r"holds JSON, which is not read; convert it to a CSV file of answers first, "
            r"e\.g\. with "
            r"pandas: pandas\.read_json\('a\.csv'\)\.to_csv",
        ),
        (
            b'{"task": 1, "label": "x"}\n{"task": 2, "label": "y"}\n',
            {},
            r"holds JSON.*read_json\('a\.csv', lines=True\)",
        ),
        (
            b"task,worker,label\n",
            {},
            r"^'a.csv' has no answers: it holds only a header line "
            r"\['task', 'worker', 'label'\]",
        ),
        (b"", {}, r"^could not read 'a.csv' as CSV: it is empty"),
        (b"# only\n# comments\n", {"comment": "#"}, r"it is empty .*only blank or comment lines"),
        (b"PAR1\x00\x00", {}, r"it is a Parquet file, not text; pass format='parquet'"),
        (b"\x93NUMPY\x01\x00", {}, r"it is a NumPy \.npy file \(a count matrix\), not text"),
        (
            _gzip(GOOD)[:20],
            {},
            r"^'a.csv' starts like a gzip-compressed file but does not "
            r"decompress",
        ),
    ],
    ids=[
        "latin-1",
        "latin-1-late",
        "bad-encoding",
        "binary",
        "json",
        "json-lines",
        "header-only",
        "empty",
        "comments-only",
        "parquet",
        "npy",
        "truncated-gzip",
    ],
)
def test_files_that_are_not_csv_say_what_they_are(content, kwargs, match, tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        read_annotations(path, **kwargs)


def test_latin1_file_is_read_with_its_encoding(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(GOOD.encode("latin-1"))
    counts = read_annotations(path, encoding="latin-1")
    assert counts["category"].values.tolist() == ["café", "neg"]


def test_npy_errors_say_what_the_file_is(tmp_path):
    path = _write(tmp_path / "a.csv", GOOD)
    with pytest.raises(
        ValueError,
        match=r"^could not read 'a.csv' as NPY: it is not a NumPy "
        r"\.npy file .*; it looks like text: pass format='csv' or 'tsv'$",
    ):
        read_annotations(path, format="npy")
    np.save(tmp_path / "o.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(
        ValueError,
        match=r"^could not read 'o.npy' as NPY: it holds Python "
        r"objects \(a pickled object array\), not numbers",
    ):
        read_annotations(tmp_path / "o.npy")


def test_zstd_without_zstandard_names_the_package(tmp_path):
    import importlib.util

    if importlib.util.find_spec("zstandard") is not None:
        pytest.skip("zstandard is installed: the file is read")
    path = tmp_path / "z.csv"
    path.write_bytes(b"(\xb5/\xfd" + b"task,label\n")
    with pytest.raises(
        ImportError,
        match=r"^could not read 'z.csv' as CSV: it is zstd-compressed \(its first bytes say "
        r"so\), which needs the zstandard package: pip install zstandard$",
    ):
        read_annotations(path)


def test_empty_parquet_and_frame_have_no_rows(tmp_path):
    empty = pd.DataFrame(
        {"task": pd.Series([], dtype="int64"), "label": pd.Series([], dtype="str")}
    )
    empty.to_parquet(tmp_path / "e.parquet")
    with pytest.raises(ValueError, match=r"^'e.parquet' has no rows"):
        read_annotations(tmp_path / "e.parquet")
    with pytest.raises(ValueError, match=r"^the DataFrame has no rows"):
        read_annotations(empty)


# --------------------------------------------------------------------------- read in chunks


def test_what_a_path_holds_is_told_by_the_data_layer(counts, tmp_path):
    from ambppl.data import holds_counts, opens_in_chunks

    assert holds_counts("c.npy") and holds_counts("c.npy.gz") and holds_counts("x.csv", "counts")
    assert not holds_counts("a.csv") and not holds_counts("a.txt")  # unknown: the reader says
    frame = pd.DataFrame(counts.values, columns=["yes", "no", "?"])
    frame.insert(0, "id", counts["item"].values)
    frame.to_parquet(tmp_path / "c.parquet")
    counts.to_dataset().to_zarr(tmp_path / "store", consolidated=False)
    assert opens_in_chunks(tmp_path / "store")  # a folder with zarr metadata
    assert not opens_in_chunks(tmp_path / "c.parquet")  # "id" taken for a count column...
    assert opens_in_chunks(tmp_path / "c.parquet", item="id")  # ...but it names the items
    assert opens_in_chunks(tmp_path / "c.parquet", "counts")
    assert not opens_in_chunks(tmp_path / "c.parquet", "long", item="id")
    assert not opens_in_chunks(tmp_path / "a.csv") and not opens_in_chunks(tmp_path / "x.txt")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    assert not opens_in_chunks(tmp_path / "bad.parquet")  # the reader's message says why


def test_counts_opened_in_chunks_equal_those_read_whole(counts, tmp_path):
    from ambppl.data import LazyCounts, open_counts_in_chunks

    frame = pd.DataFrame(counts.values.astype(np.uint8), columns=["yes", "no", "?"])
    frame.insert(0, "id", counts["item"].values)
    frame.to_parquet(tmp_path / "c.parquet", row_group_size=1)
    lazy = open_counts_in_chunks(tmp_path / "c.parquet", chunk_items=2, item="id", cant_solve=-1)
    assert isinstance(lazy, LazyCounts) and lazy.values.chunks == ((2, 1), (3,))
    assert lazy.categories == ["yes", "no", "?"] and lazy.cant_solve == "?"  # -1: the label
    np.testing.assert_array_equal(lazy.values.compute(), counts.values)
    np.testing.assert_array_equal(lazy.items.compute(), counts["item"].values)
    counts.chunk({"item": 2}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    store = open_counts_in_chunks(tmp_path / "c.zarr", categories=["no", "?", "yes"])
    # the store's labels reordered lazily; its can't-solve label follows its column, moved
    # last as read_annotations puts it
    assert store.cant_solve == "?" and store.categories == ["no", "yes", "?"]
    np.testing.assert_array_equal(store.values.compute(), counts.values[:, [1, 0, 2]])
    assert store.values.chunks[0] == (2, 1)  # the store's own chunks
    # labelled counts are never renamed by position, as read_annotations refuses it in memory
    for renamed in (["y", "n", "skip"], ["a", "b"]):
        with pytest.raises(ValueError, match=r"labels \['yes', 'no', '\?'\] occur in the data"):
            open_counts_in_chunks(tmp_path / "c.zarr", categories=renamed)
    with pytest.raises(ValueError, match=r"cant_solve must be one of the category labels"):
        open_counts_in_chunks(tmp_path / "c.zarr", cant_solve="maybe")
    with pytest.raises(ValueError, match=r"is read as parquet long; leave chunk_items out"):
        open_counts_in_chunks(tmp_path / "c.parquet", format="long")
    with pytest.raises(ValueError, match=r"must be its path, but got ndarray"):
        open_counts_in_chunks(counts.values)
    with pytest.raises(ValueError, match=r"must be an existing file or zarr store"):
        open_counts_in_chunks(tmp_path / "absent.parquet")


@pytest.mark.parametrize("suffix", ["csv", "tsv", "parquet"])
def test_answers_counted_in_chunks_equal_those_read_whole(answers, tmp_path, suffix):
    from ambppl.data import count_long_in_chunks

    answers = answers.assign(label=answers["label"].where(answers.index != 3, "N/A"))
    path = tmp_path / f"a.{suffix}"
    if suffix == "parquet":
        answers.to_parquet(path, row_group_size=7)
    else:
        answers.to_csv(path, sep="\t" if suffix == "tsv" else ",", index=False)
    options = {"cant_solve": "?", "na_values": ["N/A"]}
    whole = read_annotations(path, **options)
    chunked = count_long_in_chunks(path, chunk_items=5, **options)
    xr.testing.assert_equal(chunked, whole.sortby("item").drop_attrs())
    assert chunked.attrs == {"cant_solve": "?", "source": str(path)}
    # the in-memory reader's message, word for word
    with pytest.raises(ValueError) as whole_error:
        read_annotations(path, item="tweet")
    with pytest.raises(ValueError, match=r"item column 'tweet' is not in the data; the columns"):
        count_long_in_chunks(path, item="tweet")
    with pytest.raises(ValueError, match=re.escape(str(whole_error.value))):
        count_long_in_chunks(path, item="tweet")
    with pytest.raises(ValueError, match=r"names the layout 'wide'"):
        count_long_in_chunks(path, format="wide")
    with pytest.raises(TypeError, match=r"reader options \['skiprows'\] do not apply"):
        count_long_in_chunks(path, skiprows=1)
    with pytest.raises(TypeError, match=r"source must be the path"):
        count_long_in_chunks(answers)
    with pytest.raises(FileNotFoundError, match=r"does not exist"):
        count_long_in_chunks(tmp_path / "absent.csv")
    with pytest.raises(ValueError, match=r"chunk_items must be a positive integer"):
        count_long_in_chunks(path, chunk_items=0)


def test_read_in_chunks_picks_the_reader(answers, counts, tmp_path):
    from ambppl.data import LazyCounts, read_in_chunks

    answers.to_csv(tmp_path / "a.txt", sep=";", index=False)
    counted = read_in_chunks(tmp_path / "a.txt", chunk_items=3, format="long", sep=";", rater="w")
    xr.testing.assert_equal(counted, read_annotations(answers).sortby("item").drop_attrs())
    counts.to_dataset().to_zarr(tmp_path / "c.zarr", consolidated=False)
    lazy = read_in_chunks(tmp_path / "c.zarr", chunk_items=3, cant_solve=None)
    assert isinstance(lazy, LazyCounts) and lazy.cant_solve is None  # None given: none
    with pytest.raises(ValueError, match=r"options \['label'\] do not apply to counts read in"):
        read_in_chunks(tmp_path / "c.zarr", chunk_items=3, label="answer")
    with pytest.raises(TypeError, match=r"takes the options .* but got \['prior'\]"):
        read_in_chunks(tmp_path / "c.zarr", chunk_items=3, prior=1.0)
    with pytest.raises(ValueError, match=r"zarr store or a Parquet file .* read as npy long"):
        np.save(tmp_path / "c.npy", counts.values)
        read_in_chunks(tmp_path / "c.npy", chunk_items=3, format="long")
    with pytest.raises(TypeError, match=r"chunk_items must be a positive integer"):
        read_in_chunks(tmp_path / "c.zarr", chunk_items=1.5)


def test_from_dataarray_refuses_what_is_not_a_dataarray():
    """A numpy array ended in AttributeError ('numpy.ndarray' object has no attribute 'dims')."""
    from ambppl.data.lazy import from_dataarray

    with pytest.raises(
        TypeError, match=r"counts must be a dask-backed xarray\.DataArray .* ndarray"
    ):
        from_dataarray(np.ones((3, 2)))
