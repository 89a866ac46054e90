"""Reading the files users have (ambppl/data.py): headerless text files, comment lines, other
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

from ambppl.data import command_line_messages, read_annotations, read_long


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
    with command_line_messages(), pytest.raises(
        ValueError, match=r"item column 'task' is not in the data.*pass --item <one of them>; the "
        r"first line looks like data, not column names: pass --no-header"
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
    with command_line_messages(), pytest.raises(
        ValueError, match=r"; it starts with comment lines: pass --comment %; "
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
    with command_line_messages(), pytest.raises(
        ValueError, match=r"--sep, --comment, --no-header apply to text files .* --format csv"
    ):
        read_annotations(tmp_path / "c.npy", sep=",", comment="#", header=None)


def test_unknown_reader_option_is_a_type_error(answers, tmp_path):
    path = tmp_path / "a.csv"
    answers.to_csv(path, index=False)
    with pytest.raises(
        TypeError, match=r"reader options \['colour'\] must be options of pandas\.read_csv for "
        r"'a\.csv' \(.*colour"
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
