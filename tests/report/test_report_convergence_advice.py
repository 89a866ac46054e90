"""The report's advice for a missed convergence standard reads the chains and the warm-up
(``tune``) the fit used, as the fit's own :class:`ambppl.ConvergenceWarning` does
(:func:`ambppl.inference.convergence.convergence_advice`): one chain is told to run several,
a missed R-hat to tune twice the warm-up the fit had (at least 2000).

The report once built its advice from a record without chains or tune, so a one-chain fit
was told "tune longer (2000)" instead of "run several chains", and a fit tuned 1100 steps
was told 2000 while its own warning said 2200.

Also here: docs/topics/report.md describes the label columns of a fit with a class posterior
(``dawid_skene``), which it once left out, as the page of a map fit shows them."""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.data import read_long
from ambppl.inference.convergence import convergence_advice, stored_record
from ambppl.report import render_report

REPORT_PAGE = Path(__file__).resolve().parents[2] / "docs" / "topics" / "report.md"


@pytest.fixture(scope="module")
def counts():
    """6 items x 8 answers over 3 categories (the last can't-solve); seeded."""
    rng = np.random.default_rng(7)
    return ambppl.read_annotations(rng.multinomial(8, [0.5, 0.3, 0.2], size=6), cant_solve=2)


def _fit(counts, **kwargs):
    """A NUTS fit too short to converge (seeded), and the text of its ConvergenceWarning."""
    with pytest.warns(ambppl.ConvergenceWarning) as raised:
        result = ambppl.fit(counts, method="nuts", sampler="pymc", random_seed=3, **kwargs)
    texts = [str(w.message) for w in raised if w.category is ambppl.ConvergenceWarning]
    verdicts = [t for t in texts if " missed the convergence standard (" in t]
    assert len(verdicts) == 1, texts
    return result, verdicts[0]


def _page_advice(result, **kwargs) -> str:
    """The "What to do" of the page's first section, as text on one line."""
    with warnings.catch_warnings():  # the fit's warnings are raised again after the page
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        page = render_report(result, top=3, random_seed=1, **kwargs)
    found = re.search(
        r'<p id="verdict-advice"><strong>What to do:</strong> (.*?)\.</p>', page, re.S
    )
    assert found is not None, "the page gives no advice"
    return html.unescape(" ".join(found.group(1).split()))


def _advice(result, warning: str, command: str) -> tuple[str, str]:
    """The page's advice and that of a page of the ambppl command ``command``, each checked
    word for word against :func:`convergence_advice` (and the first against the fit's own
    warning, which ends with it)."""
    record, model = stored_record(result), result.attrs["model"]
    advice = _page_advice(result)
    assert advice == convergence_advice(record, model=model)
    assert warning.endswith(f"; {advice}")
    line = _page_advice(result, command=command)
    assert line == convergence_advice(record, command_line=True, model=model)
    return advice, line


@pytest.mark.slow  # compiles the PyMC program of dirichlet_categorical
def test_a_one_chain_fit_is_told_to_run_several_chains(counts) -> None:
    result, warning = _fit(counts, draws=20, chains=1)
    record = stored_record(result)
    assert record["chains"] == 1 and "r_hat" in record["failed"]
    advice, line = _advice(result, warning, "ambppl report counts.csv --method nuts --chains 1")
    assert "one chain cannot show that the sampler reached the posterior" in advice
    assert "run several (chains=4)" in advice
    assert "tune longer" not in advice
    # a page of the ambppl command names the option
    assert "run several (--chains 4)" in line


@pytest.mark.slow  # compiles the PyMC program of dirichlet_categorical
def test_a_fit_tuned_longer_than_1000_is_told_twice_its_tune(counts) -> None:
    result, warning = _fit(counts, draws=20, chains=2, sample_kwargs={"tune": 1100})
    record = stored_record(result)
    assert record["chains"] == 2 and record["tune"] == 1100
    assert "r_hat" in record["failed"]
    advice, line = _advice(result, warning, "ambppl report counts.csv --method nuts --tune 1100")
    assert "tune longer (sample_kwargs={'tune': 2200})" in advice
    assert "'tune': 2000" not in advice
    assert "tune longer (--tune 2200)" in line


def _headers(page: str, table_id: str) -> list[str]:
    part = page[page.index(f'id="{table_id}"') :]
    head = part[part.index("<thead>") : part.index("</thead>")]
    return [
        html.unescape(re.sub(r"<[^>]+>", "", h)).strip()
        for h in re.findall(r"<th[^>]*>(.*?)</th>", head)
    ]


def test_the_report_page_describes_the_label_columns() -> None:
    """docs/topics/report.md names the columns and where they stand, as a page shows them."""
    text = " ".join(REPORT_PAGE.read_text(encoding="utf-8").split())
    for words in (
        "for fits with a class posterior (`dawid_skene`",
        "*label*, the most probable class",
        "*label prob*, its posterior probability (`label_prob`; at the posterior mode after",
        "*label entropy*, the normalized entropy of the class posterior (`label_entropy`",
        "the ranked table, where they follow the item id",
        "the table of the most ambiguous items shows label and label prob after P(> t)",
        "fits without classes show none of them",
    ):
        assert words in text, words
    # the page of a map fit of dawid_skene (seeded answers) as the docs describe it
    rng = np.random.default_rng(20261207)
    rows = [
        (f"t{i}", f"r{r}", "ab"[z] if rng.random() < 0.8 else "ab"[1 - z])
        for i, z in enumerate(rng.integers(0, 2, size=12))
        for r in rng.choice(4, size=3, replace=False)
    ]
    answers = read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))
    page = render_report(ambppl.fit(answers, "dawid_skene", method="map"), top=3)
    ranked = _headers(page, "item-table")
    assert ranked[1:5] == ["item", "label", "label prob", "label entropy"], ranked
    top = _headers(page, "top-table")
    assert top[-3:] == ["P(> t)", "label", "label prob"], top
    assert "label entropy" not in top
    assert 'title="label_prob: the posterior probability of the label at the posterior mode' in (
        page
    )
