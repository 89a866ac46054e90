"""Tests of the report without per-item draws (ambppl/report/scored.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from conftest import REPORT_SECTIONS

from ambppl.analysis.scoring import score
from ambppl.analysis.summary import rank
from ambppl.cli import main
from ambppl.report import score_report
from ambppl.report.scored import checked_items

P = np.array([0.4, 0.3, 0.2, 0.1])


def _counts(rng: np.random.Generator, n_items: int, n: int = 6) -> xr.DataArray:
    """Multinomial answer counts of items that share few distinct vectors (n answers, K=4)."""
    values = rng.multinomial(n, P, size=n_items)
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(n_items)], "category": ["a", "b", "c", "cs"]},
        attrs={"cant_solve": "cs", "source": "toy.csv"},
        name="counts",
    )


def _rows(page: str) -> list[str]:
    """Item ids of the sortable item table, in the page's order."""
    table = page.split('id="item-table"')[1].split("</table>")[0]
    return re.findall(r'<td class="id" title="([^"]*)">', table)


def test_checked_items_cover_top_and_every_vector_once() -> None:
    values = np.array([[2, 0], [1, 1], [2, 0], [0, 2], [1, 1], [2, 0]])
    keep = checked_items(values, np.array([2, 5]), 10, np.random.default_rng(0))
    # items 2 and 5 (the top, both [2, 0]) and the first item of each other vector: 1 and 3
    np.testing.assert_array_equal(keep, [1, 2, 3, 5])


def test_checked_items_sample_the_other_vectors() -> None:
    values = np.arange(40).reshape(20, 2)  # 20 distinct vectors
    rng = np.random.default_rng(3)
    keep = checked_items(values, np.array([7]), 5, rng)
    assert keep.size == 5 and 7 in keep  # the top item plus 4 sampled others
    again = checked_items(values, np.array([7]), 5, np.random.default_rng(3))
    np.testing.assert_array_equal(keep, again)  # seeded
    # top items beyond the budget are all kept, nothing else
    np.testing.assert_array_equal(checked_items(values, np.array([1, 2, 3]), 2, rng), [1, 2, 3])


@pytest.fixture(scope="module")
def page_and_counts() -> tuple[str, xr.DataArray]:
    counts = _counts(np.random.default_rng(20261126), 600)
    page = score_report(counts, top=4, draws=300, chains=2, max_rows=50, random_seed=7)
    return page, counts


def test_page_has_every_section_and_the_scored_statement(page_and_counts) -> None:
    page, counts = page_and_counts
    for section in REPORT_SECTIONS:
        assert f'<section id="{section}">' in page
    n_distinct = len(np.unique(counts.values, axis=0))
    statement = re.search(r'id="scored-statement">(.*?)</p>', page, re.S).group(1)
    assert f"({n_distinct} for 600 items;" in statement
    # every distinct vector is checked (fewer than CHECK_VECTORS): no sample
    assert "every distinct count vector" in statement
    assert 'id="exact-statement"' in page  # the checked draws are exact
    # the page opens, before any table, with the same line as an exact fit's
    assert page.index("<section") == page.index('<section id="verdict">') < page.index("<table")
    verdict = re.search(r'<section id="verdict">(.*?)</section>', page, re.S).group(1)
    said = " ".join(re.sub(r"<[^>]+>", "", verdict).split())
    assert said.startswith("The draws are exact: independent draws of the conjugate Dirichlet")
    assert "(the item table's means and sds are closed forms)" in said


def test_item_table_is_score_ranked_and_capped(page_and_counts) -> None:
    page, counts = page_and_counts
    assert "The 50 most ambiguous of 600 items" in page
    rows = _rows(page)
    assert len(rows) == 50
    # the ranking of ambppl.score's table: means are closed forms, the same whatever the seed
    table = rank(score(counts, random_seed=0))
    assert rows == [str(i) for i in table.index[:50]]


def test_checks_cover_one_item_per_vector(page_and_counts) -> None:
    page, counts = page_and_counts
    n_distinct = len(np.unique(counts.values, axis=0))
    m = re.search(r"the largest \|z\| among (\d+) tests on (\d+) items", page)
    # mean and variance per checked item; the top 4 items may share vectors with others
    n_checked = int(m.group(2))
    assert n_distinct <= n_checked <= n_distinct + 4 and int(m.group(1)) == 2 * n_checked
    assert '<span class="ok">Consistent:</span>' in page


def test_large_data_are_sampled(rng: np.random.Generator) -> None:
    counts = _counts(rng, 3000, n=30)
    n_distinct = len(np.unique(counts.values, axis=0))
    page = score_report(counts, top=3, draws=100, chains=2, check_vectors=40, random_seed=1)
    assert n_distinct > 40
    assert re.search(r"the largest \|z\| among 80 tests on 40 items", page)
    # 37 sampled vectors besides the 3 top items, which may share vectors
    covered = re.search(rf"distinct count vectors \((\d+) of {n_distinct}\)", page)
    assert 38 <= int(covered.group(1)) <= 40


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"check_vectors": 0}, ValueError, "check_vectors"),
        ({"draws": 0}, ValueError, "draws"),
        ({"max_rows": 1.5}, TypeError, "max_rows"),
        ({"random_seed": "7"}, TypeError, "random_seed"),
        ({"measure": "nope"}, ValueError, "measure"),
        ({"prior": -1.0}, ValueError, "prior"),
    ],
)
def test_bad_input(kwargs, error, field, rng: np.random.Generator) -> None:
    with pytest.raises(error, match=field):
        score_report(_counts(rng, 20), **kwargs)


def test_takes_annotations_already_read(rng: np.random.Generator, tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("task,worker,label\na,w1,x\n")
    with pytest.raises(TypeError, match=r"read it first: ambppl\.read_annotations\('.*answers"):
        score_report(path)
    with pytest.raises(
        TypeError,
        match=r"^score_report takes annotations already read, .* but got \['cant_solve'\]; .*"
        r"score_report\(ambppl\.read_annotations\(data, cant_solve=\.\.\.\), \.\.\.\)$",
    ):
        score_report(_counts(rng, 20).values, cant_solve=3)
    with pytest.raises(ValueError, match=r"score_report's keywords must be parameters of model"):
        score_report(_counts(rng, 20), kappa=1.0)


def test_cli_report_takes_the_scored_route(tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "counts.npy"
    np.save(path, rng.multinomial(8, P, size=400))
    out = tmp_path / "r.html"
    argv = ["report", str(path), "--cant-solve", "3", "--draws", "100", "--chains", "2", "--seed=1"]
    assert main([*argv, "--top", "3", "-o", str(out), "--quiet"]) == 0
    page = " ".join(out.read_text(encoding="utf-8").split())
    assert 'id="scored-statement"' in page and "by 0.0050" in page
    assert main([*argv, "--mcse", "0.02", "--top", "3", "-o", str(out), "--force", "-q"]) == 0
    assert "by 0.0200" in " ".join(out.read_text(encoding="utf-8").split())
    # a model fitted by NUTS keeps the per-item route
    argv = ["report", str(path), "--cant-solve", "3", "--method", "nuts", "--seed=1"]
    assert (
        main([*argv, "--draws=50", "--chains=2", "--top=2", "-o", str(out), "--force", "-q"]) == 0
    )
    page = out.read_text(encoding="utf-8")
    assert 'id="scored-statement"' not in page and 'id="diagnostics"' in page
