"""The report's rater section for a latent-class fit (``dawid_skene``): accuracy and the
can't-solve rate per rater, as ``summarize(result, level="rater")`` gives them."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from _report_helpers import latent_class_answers

from ambppl.analysis.raters import summarize_raters
from ambppl.data import read_long
from ambppl.inference.fitting import fit
from ambppl.report import render_report

pytestmark = pytest.mark.slow  # compiles the PyMC program of dawid_skene


def _answers() -> pd.DataFrame:
    """40 items, 6 raters (r0 and r1 reliable, r5 at random, r4 says "cs" often), 5 answers
    per item; seeded."""
    frame = latent_class_answers(26, n_items=40, per_item=5, cs_rate=0.5)
    return read_long(frame, cant_solve="cs")


@pytest.fixture(scope="module")
def fits() -> tuple:
    answers = _answers()
    options = {"method": "laplace", "draws": 200, "chains": 2, "random_seed": 5}
    return fit(answers, "dawid_skene", **options), fit(
        answers, "dawid_skene", var_names=["amb"], **options
    )


def test_the_cant_solve_rate_is_derived_where_fit_did_not_store_it(fits) -> None:
    # the same seed gives the same draws; with var_names=["amb"] cant_solve_rate is not
    # stored and the rater table computes it from pi and confusion: the same numbers
    full, lean = fits
    assert "cant_solve_rate" in full["posterior"] and "cant_solve_rate" not in lean["posterior"]
    pd.testing.assert_frame_equal(summarize_raters(full), summarize_raters(lean), rtol=1e-12)


def test_the_rater_section_lists_accuracy_least_accurate_first(fits) -> None:
    full, _ = fits
    page = render_report(full, top=3, random_seed=1)
    section = page[page.index('<section id="raters">') :]
    section = section[: section.index("</section>")]
    assert "least accurate first" in section and "t-solve rate</th>" in section
    raters = re.findall(r'<td class="id" title="([^"]+)"', section)
    table = summarize_raters(full)
    assert raters == list(table.sort_values("accuracy").index)
    # the planted random rater r5 is judged less accurate than the reliable r0 and r1
    assert raters.index("r5") < min(raters.index("r0"), raters.index("r1"))
    # r4 (half of its answers "cs") has the highest can't-solve rate
    assert table["cant_solve_rate"].idxmax() == "r4"


def _text(page: str, section: str) -> str:
    part = page[page.index(f'<section id="{section}">') :]
    part = part[: part.index("</section>")]
    return " ".join(re.sub(r"<[^>]+>", " ", part).split())


def test_the_convergence_section_names_what_made_the_draws(fits) -> None:
    """Laplace draws and the posterior mode are not exact conjugate draws: the report says
    what they are (it once called every non-MCMC fit "exact ... conjugate Dirichlet")."""
    full, _ = fits
    page = render_report(full, top=3, random_seed=1)
    laplace = _text(page, "convergence")
    assert "Laplace approximation" in laplace and "conjugate" not in laplace
    # the first section says so too, before any table
    assert page.index('<section id="verdict">') < page.index("<table")
    assert _text(page, "verdict").startswith("Draws of the Laplace approximation , not of")
    point = fit(_answers(), "dawid_skene", method="map")
    page = render_report(point, top=3, random_seed=1)
    assert _text(page, "verdict").startswith("One point, not a sample: every estimate below")
    text = _text(page, "convergence")
    assert "One point, not a sample" in text and "posterior mode" in text
    # from Python the advice names the keyword (the command line's page its option)
    assert "conjugate" not in text and 'refit with method="laplace"' in text
    assert "--method" not in text
    distribution = _text(page, "distribution")
    assert "no posterior probabilities" in distribution and "items have" not in distribution
    raters = _text(page, "raters")
    assert "[–, –]" in raters  # the accuracies at the mode, without intervals
