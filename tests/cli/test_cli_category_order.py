"""The order in which ``--prior`` and a list given to ``--param`` are read (ambppl/cli/
inputs.py): the reader's order of the categories (the labels sorted, a count table's columns,
the can't-solve category last), which is not always the file's column order. A prior written
in the file's column order was read in the reader's order without a word; a progress line now
names that order, and the help and docs say it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import ambppl
from ambppl.cli import main

#: A count table whose can't-solve column comes first: the reader moves it last.
COUNTS = "task,cs,x,y\na,1,5,3\nb,1,9,0\nc,6,1,3\n"
ORDER = "the values of --prior are read in the order of the categories: x, y, cs (can't solve)"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    file = tmp_path / "counts.csv"
    file.write_text(COUNTS, encoding="utf-8")
    return file


def _score(path: Path, out: Path, *options: str) -> pd.DataFrame:
    argv = ["score", str(path), "--layout", "counts", "--cant-solve", "cs", "--seed", "3"]
    assert main([*argv, *options, "-o", str(out), "--force"]) == 0
    return pd.read_csv(out, index_col="item").sort_index()


def test_a_prior_per_category_names_the_order_it_is_read_in(path, tmp_path, capsys):
    table = _score(path, tmp_path / "s.csv", "--prior", "0.5,2,9")
    assert ORDER in capsys.readouterr().err.splitlines()[1]
    # reference: the same prior labelled by category through the Python API
    counts = ambppl.read_annotations(path, format="counts", cant_solve="cs")
    prior = pd.Series({"cs": 9.0, "x": 0.5, "y": 2.0})
    want = ambppl.score(counts, prior=prior, random_seed=3).sort_index()
    pd.testing.assert_series_equal(table["mean"], want["mean"], check_names=False, rtol=1e-12)
    # the file's column order (cs, x, y) is another prior, and another answer
    other = _score(path, tmp_path / "t.csv", "--prior", "9,0.5,2")
    assert abs(other.loc["c", "mean"] - table.loc["c", "mean"]) > 0.1


def test_a_list_given_to_param_is_named_too(path, tmp_path, capsys):
    _score(path, tmp_path / "s.csv", "--param", "prior=0.5,2,9")
    assert "the values of --param prior are read in the order of the categories: x, y, cs" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("options", [["--prior", "2"], ["--prior", "0.5,2,9", "-q"], []])
def test_no_line_without_a_list_or_with_quiet(path, tmp_path, capsys, options):
    _score(path, tmp_path / "s.csv", *options)
    assert "read in the order of the categories" not in capsys.readouterr().err


def test_the_help_says_the_order(capsys):
    assert main(["score", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "in the order the data are read: the labels sorted (a count table: its" in help_text


def test_answers_and_many_categories_are_named_in_order(tmp_path, capsys):
    """Answers (a long table) name the label column's order; more than 20 categories are
    cut with a count of the rest."""
    labels = [f"c{k:02d}" for k in range(25)]
    rows = [(f"i{i}", f"r{r}", labels[(i + r) % 25]) for i in range(30) for r in range(3)]
    file = tmp_path / "long.csv"
    pd.DataFrame(rows, columns=["task", "worker", "label"]).to_csv(file, index=False)
    prior = ",".join(["1"] * 25)
    assert main(["score", str(file), "--prior", prior, "-o", str(tmp_path / "o.csv")]) == 0
    err = capsys.readouterr().err
    assert "categories: c00, c01, c02," in err and "c19 and 5 more" in err
