"""The report of a latent-class fit (``dawid_skene``) shows each item's label: the ranked
table and the most-ambiguous table carry ``label`` and ``label_prob`` (the ranked table also
``label_entropy``), equal to :func:`ambppl.summarize`'s, with header help saying what they
are; the page's sortable tables still sort (in a browser where one is installed).

The report once left them out although ``summarize`` and ``ambppl score`` gave all three."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from _report_helpers import latent_class_answers, sort_in_browser

import ambppl
from ambppl.cli import main
from ambppl.data import read_long
from ambppl.report import render_report


def _frame() -> pd.DataFrame:
    """30 items, 6 raters (r0, r1 reliable, r5 at random, r4 says "cs" often), 4 answers per
    item, and two items answered "cs" only; seeded."""
    frame = latent_class_answers(20261207, n_items=30, per_item=4, cs_rate=0.4)
    only_cs = [("x1", "r0", "cs"), ("x1", "r4", "cs"), ("x2", "r2", "cs"), ("x2", "r3", "cs")]
    return pd.concat([frame, pd.DataFrame(only_cs, columns=frame.columns)], ignore_index=True)


def _table(page: str, table_id: str) -> tuple[list[tuple[str, str]], list[list[tuple]]]:
    """The header cells (text, title) and the body rows, as (text, data-value) per cell, of
    the table ``table_id`` of the page."""
    part = page[page.index(f'id="{table_id}"') :]
    part = part[: part.index("</table>")]
    head = part[part.index("<thead>") : part.index("</thead>")]
    heads = [
        (html.unescape(re.sub(r"<[^>]+>", "", text)).strip(), html.unescape(title or ""))
        for title, text in re.findall(r'<th(?:[^>]*?title="([^"]*)")?[^>]*>(.*?)</th>', head)
    ]
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", part[part.index("<tbody>") :], flags=re.S):
        cells = re.findall(r'<td(?:[^>]*?data-value="([^"]*)")?[^>]*>(.*?)</td>', row, re.S)
        rows.append([(html.unescape(text).strip(), value) for value, text in cells])
    return heads, rows


def _check_labels(page: str, table: pd.DataFrame, *, point: bool) -> None:
    """Both item tables of ``page`` hold ``table``'s (summarize's) label columns."""
    heads, rows = _table(page, "item-table")
    names = [text for text, _ in heads]
    assert names[1:5] == ["item", "label", "label prob", "label entropy"]
    help_text = dict(heads)
    assert "most probable true class" in help_text["label"]
    assert "posterior probability of the label" in help_text["label prob"]
    assert ("at the posterior mode" in help_text["label prob"]) is point
    assert "normalized entropy" in help_text["label entropy"]
    assert len(rows) == len(table)
    for cells in rows:
        item = cells[1][0]
        assert cells[2][0] == str(table.loc[item, "label"])
        for k, column in ((3, "label_prob"), (4, "label_entropy")):
            value = float(table.loc[item, column])
            assert cells[k][1] == format(value, ".7g")  # the sort key: summarize's value
            assert cells[k][0] == f"{value:.3f}"  # shown
    heads, rows = _table(page, "top-table")
    names = [text for text, _ in heads]
    assert names[-2:] == ["label", "label prob"] and dict(heads)["label"] == help_text["label"]
    assert rows
    for cells in rows:
        item = cells[1][0]
        assert cells[-2][0] == str(table.loc[item, "label"])
        assert cells[-1][1] == format(float(table.loc[item, "label_prob"]), ".7g")


@pytest.fixture(scope="module")
def map_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """``ambppl report --model dawid_skene --method map`` of the answers, and summarize's
    table of the same fit in Python (the mode is deterministic)."""
    folder = tmp_path_factory.mktemp("ds-labels")
    source = folder / "answers.csv"
    _frame().to_csv(source, index=False)
    out = folder / "map.html"
    argv = ["report", str(source), "--model", "dawid_skene", "--method", "map"]
    assert main([*argv, "--cant-solve", "cs", "--top", "5", "-q", "-o", str(out)]) == 0
    point = ambppl.fit(read_long(_frame(), cant_solve="cs"), "dawid_skene", method="map")
    return out, ambppl.summarize(point)


def test_the_map_report_shows_summarizes_labels(map_page) -> None:
    out, table = map_page
    page = out.read_text(encoding="utf-8")
    _check_labels(page, table, point=True)
    # the items answered "cs" only are labelled too (at the mode: a probability, not NaN)
    assert table.loc[["x1", "x2"], "label_prob"].between(0.5, 1).all()
    text = " ".join(re.sub(r"<[^>]+>", " ", page[page.index('<section id="items">') :]).split())
    assert "label prob its posterior probability ( label_prob )" in text


@pytest.mark.slow  # compiles the PyMC program of dawid_skene
def test_the_laplace_report_shows_summarizes_labels() -> None:
    answers = read_long(_frame(), cant_solve="cs")
    result = ambppl.fit(answers, "dawid_skene", method="laplace", draws=100, random_seed=3)
    page = render_report(result, top=4, random_seed=1)
    table = ambppl.summarize(result)
    _check_labels(page, table, point=False)
    assert not math.isnan(float(table["hdi_lower"].iloc[0]))  # draws, not a point


def test_a_model_without_classes_has_no_label_columns() -> None:
    counts = ambppl.read_annotations(_frame(), cant_solve="cs")
    result = ambppl.fit(counts, draws=100, chains=2, random_seed=1)
    page = render_report(result, top=3, random_seed=1)
    heads, _ = _table(page, "item-table")
    assert "label" not in [text for text, _ in heads]
    assert "label_prob" not in page


def test_the_label_columns_sort_in_a_browser(browser: str, map_page, tmp_path: Path) -> None:
    out, table = map_page
    found, done = sort_in_browser(browser, out, "label prob", tmp_path)
    dom = done.stdout
    n_tables = len(re.findall(r'<table class="sortable"', dom))
    assert n_tables >= 3
    assert len(re.findall(r'<table class="sortable" id="[\w-]+" data-sortable="ready"', dom)) == (
        n_tables
    )
    assert found["sort"] == "ascending"
    desc = [cell.split("|") for cell in found["desc"].split(";")]
    asc = [cell.split("|") for cell in found["asc"].split(";")]
    assert [float(v) for v, _ in desc] == sorted((float(v) for v, _ in desc), reverse=True)
    assert [float(v) for v, _ in asc] == sorted(float(v) for v, _ in asc)
    # the rows moved as a whole: each item keeps summarize's label_prob
    for value, item in asc:
        assert value == format(float(table.loc[item, "label_prob"]), ".7g")
