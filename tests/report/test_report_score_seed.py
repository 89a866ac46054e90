"""The report without per-item draws shows the item table of ``ambppl score`` with the same
seed (audit finding C: the report spawned its own seed for the table, so ``ambppl report``
and ``ambppl score`` with ``--seed 1`` differed by up to 0.044 in an HDI bound and 0.011 in
P(> t), although the report's help says its item table is that of ``ambppl score``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl.report.scored as scored_module
from ambppl.analysis.scoring import score
from ambppl.analysis.summary import rank
from ambppl.cli import main
from ambppl.report import score_report

#: Category shares of the toy items (K = 4, the last is can't solve).
P = np.array([0.4, 0.3, 0.2, 0.1])


def _counts(seed: int, n_items: int, n: int = 7) -> xr.DataArray:
    """Multinomial counts of ``n`` answers per item over four categories (the last is can't
    solve): many items share a count vector."""
    values = np.random.default_rng(seed).multinomial(n, P, size=n_items)
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(n_items)], "category": ["a", "b", "c", "cs"]},
        attrs={"cant_solve": "cs"},
        name="counts",
    )


def _ranked_of_report(monkeypatch: pytest.MonkeyPatch, counts: xr.DataArray, seed) -> pd.DataFrame:
    """The ranked item table that :func:`score_report` hands to the page."""
    seen: dict[str, pd.DataFrame] = {}
    render = scored_module._render

    def keep(result, ranked, *args, **kwargs):
        seen["ranked"] = ranked
        return render(result, ranked, *args, **kwargs)

    monkeypatch.setattr(scored_module, "_render", keep)
    page = score_report(counts, top=3, draws=100, chains=2, check_vectors=30, random_seed=seed)
    assert page.startswith("<!DOCTYPE html>")
    return seen["ranked"]


@pytest.mark.parametrize("seed", [1, 20260514])
def test_report_table_is_score_table_with_the_same_seed(monkeypatch, seed) -> None:
    counts = _counts(11, 400)
    expected = rank(score(counts, random_seed=seed))
    # the columns from draws do depend on the seed (else this test could not fail)
    assert (expected["draws"] > 0).any()
    other = rank(score(counts, random_seed=seed + 1))
    assert not np.array_equal(expected["p_above"].to_numpy(), other["p_above"].to_numpy())
    ranked = _ranked_of_report(monkeypatch, counts, seed)
    # number for number, every column (p_above, the HDI, their MCSEs, draws)
    pd.testing.assert_frame_equal(ranked, expected, check_exact=True)


def test_report_table_is_score_table_with_the_same_generator(monkeypatch) -> None:
    counts = _counts(12, 300)
    expected = rank(score(counts, random_seed=np.random.default_rng(5)))
    ranked = _ranked_of_report(monkeypatch, counts, np.random.default_rng(5))
    pd.testing.assert_frame_equal(ranked, expected, check_exact=True)


def _write_answers(path: Path, counts: xr.DataArray) -> Path:
    """A long CSV (item, rater, label) holding ``counts``."""
    labels = ["a", "b", "c", "I can't tell"]
    rows = [
        (str(item), f"r{r}", labels[k])
        for item, row in zip(counts["item"].values, counts.values, strict=True)
        for k, c in enumerate(row)
        for r in range(int(c))
    ]
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(path, index=False)
    return path


def _page_table(page: str) -> pd.DataFrame:
    """The item table of a report page from its cells' ``data-value`` (7 significant digits):
    item, mean, HDI ends and P(> t) per row, in the page's order."""
    body = page.split('id="item-table"')[1].split("</table>")[0].split("<tbody>")[1]
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        item = re.search(r'<td class="id" title="([^"]*)">', tr).group(1)
        values = [float(v) for v in re.findall(r'data-value="([^"]+)"', tr)]
        # rank, answers, can't-solve share, plug-in, less biased, mean, sd, low, high, P
        rows.append((item, *values[5:10]))
    return pd.DataFrame(rows, columns=["item", "mean", "sd", "hdi_lower", "hdi_upper", "p_above"])


def test_command_line_report_shows_the_score_of_the_same_seed(tmp_path) -> None:
    counts = _counts(13, 500)
    answers = _write_answers(tmp_path / "long.csv", counts)
    common = ["--item", "item", "--rater", "rater", "--cant-solve", "I can't tell"]
    scores, page_path = tmp_path / "s.csv", tmp_path / "r.html"
    assert main(["score", str(answers), *common, "--seed", "1", "-q", "-o", str(scores)]) == 0
    argv = ["report", str(answers), *common, "--seed", "1", "-q", "--top", "3"]
    assert main([*argv, "--draws", "100", "-o", str(page_path)]) == 0
    table = pd.read_csv(scores, index_col="item")
    table.index = table.index.astype(str)
    assert (table["draws"] > 0).any()
    page = page_path.read_text(encoding="utf-8")
    shown = _page_table(page)
    assert len(shown) >= 50
    want = table.loc[shown["item"]]
    for column in ("mean", "sd", "hdi_lower", "hdi_upper", "p_above"):
        # the page writes 7 significant digits
        np.testing.assert_allclose(shown[column], want[column], rtol=1e-6, atol=1e-12)
    # the page's counts of items with P(> t) above 0.5 and 0.9 are the score table's
    said = re.search(r"(\d+) items have\s+P\(.*?\) &gt; 0.5 and (\d+) items &gt; 0.9", page)
    assert said is not None
    assert int(said.group(1)) == int((table["p_above"] > 0.5).sum())
    assert int(said.group(2)) == int((table["p_above"] > 0.9).sum())
