"""``--categories``: the answer categories declared on the command line.

A file answered only "can't solve" could not be scored from the command line: the reader
refused one category and told the user to check ``--label``, which was right, while Python
took ``categories=[...]`` (audit). ``--categories`` is that keyword on the command line; its
order is the order of a per-category ``--prior``. References: the Python API on the same
file with ``categories=``, and the exact posterior mean of ``amb`` by the paper's closed form
(``ambppl.dirichlet_mean``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.cli import main


def _only_cant_solve(tmp_path: Path) -> Path:
    path = tmp_path / "only_cs.csv"
    path.write_text("task,worker,label\n1,a,cs\n1,b,cs\n2,a,cs\n", encoding="utf-8")
    return path


def test_a_file_answered_only_cant_solve_is_scored_with_its_categories(tmp_path, capsys):
    path = _only_cant_solve(tmp_path)
    assert main(["score", str(path), "--cant-solve", "cs", "-q", "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert "list the categories with --categories" in err and "Traceback" not in err
    out = tmp_path / "s.csv"
    argv = ["score", str(path), "--cant-solve", "cs", "--categories", "x,y,cs"]
    assert main([*argv, "--seed", "1", "-q", "-o", str(out)]) == 0
    table = pd.read_csv(out, index_col="item", dtype={"item": str}).sort_index()  # ranked
    counts = ambppl.read_annotations(path, categories=["x", "y", "cs"], cant_solve="cs")
    want = ambppl.score(counts, random_seed=1)
    np.testing.assert_allclose(table["mean"], want["mean"].sort_index(), rtol=1e-12)
    # the closed form: Dirichlet(1 + counts) of (x, y, cs)
    exact = ambppl.dirichlet_mean(counts.values + 1.0, cant_solve=2)  # [0.7333, 0.6667]
    np.testing.assert_allclose(table.loc[["1", "2"], "exact_mean"], exact, rtol=1e-12)


def test_the_order_of_categories_is_the_order_of_the_prior(tmp_path, capsys):
    path = tmp_path / "a.csv"
    path.write_text("task,worker,label\n1,a,x\n1,b,y\n2,a,cs\n2,b,y\n", encoding="utf-8")
    argv = ["score", str(path), "--cant-solve", "cs", "--categories", "y", "--categories", "x,cs"]
    out = tmp_path / "s.csv"
    assert main([*argv, "--prior", "3,1,0.5", "--seed", "1", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "read in the order of the categories: y, x, cs (can't solve)" in err
    counts = ambppl.read_annotations(path, categories=["y", "x", "cs"], cant_solve="cs")
    want = ambppl.score(counts, prior=[3.0, 1.0, 0.5], random_seed=1)
    table = pd.read_csv(out, index_col="item", dtype={"item": str}).sort_index()  # ranked
    np.testing.assert_allclose(table["mean"], want["mean"].sort_index(), rtol=1e-12)
    # the file's sorted order (cs last: x, y) reads the same prior for other categories
    sorted_order = ambppl.score(
        ambppl.read_annotations(path, cant_solve="cs"), prior=[3.0, 1.0, 0.5], random_seed=1
    )
    assert not np.allclose(sorted_order["mean"], want["mean"])


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            ["--categories", "x,y"],
            "labels ['cs'] occur in the data but are not in --categories x,y; add them to "
            "--categories (the can't-solve answer too)",
        ),
        (["--categories", ","], "--categories: must name the answer categories"),
    ],
)
def test_categories_that_do_not_fit_are_refused_in_command_line_words(
    tmp_path, capsys, given, message
):
    path = _only_cant_solve(tmp_path)
    assert main(["score", str(path), "--cant-solve", "cs", *given, "-q", "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert message in err and "categories=" not in err and "Traceback" not in err, err
