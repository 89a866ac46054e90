"""``summarize(result, level="rater")`` of a Dawid-Skene fit: ``overuse`` is checked before
the model is told apart (a bad value got no error for ``dawid_skene``), a probability, which
means nothing there, is refused, and the docs and the error for a fit without raters name
both rater models and the Dawid-Skene columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.analysis.raters import CLASS_RATER_COLUMNS, RATER_COLUMNS, summarize_raters
from ambppl.data import example_path, read_long


@pytest.fixture(scope="module")
def point():
    """The posterior mode (``method="map"``: numpy, no compilation) of dawid_skene on 20
    items x 4 answers from 5 raters with a can't-solve answer; seeded."""
    rng = np.random.default_rng(20261207)
    rows = [
        (f"i{i}", f"r{r}", rng.choice(["a", "b", "cs"], p=[0.5, 0.4, 0.1]))
        for i in range(20)
        for r in rng.choice(5, size=4, replace=False)
    ]
    answers = read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]), cant_solve="cs")
    return ambppl.fit(answers, "dawid_skene", method="map")


@pytest.mark.parametrize("overuse", ["bogus", 7, 1.5, 0, True, None])
def test_a_bad_overuse_is_refused_for_dawid_skene_as_for_rater_effects(point, overuse) -> None:
    message = f"overuse must be 'hdi' or a probability in (0, 1), but got {overuse!r}"
    with pytest.raises(ValueError) as caught:
        ambppl.summarize(point, level="rater", overuse=overuse)
    assert str(caught.value) == message
    with pytest.raises(ValueError) as caught:
        summarize_raters(point, overuse=overuse)
    assert str(caught.value) == message


@pytest.mark.parametrize("overuse", [0.9, 0.5])
def test_a_probability_means_nothing_for_dawid_skene(point, overuse) -> None:
    with pytest.raises(ValueError) as caught:
        ambppl.summarize(point, level="rater", overuse=overuse)
    message = str(caught.value)
    assert f"got overuse={overuse!r} for a dawid_skene fit" in message
    assert "overuses_cant_solve" in message and message.endswith("drop overuse")


def test_the_default_overuse_gives_the_class_table(point) -> None:
    table = ambppl.summarize(point, level="rater")
    assert tuple(table.columns) == CLASS_RATER_COLUMNS
    pd.testing.assert_frame_equal(table, ambppl.summarize(point, level="rater", overuse="hdi"))
    assert table["n_answers"].sum() == 80  # every answer once


def test_a_fit_without_raters_names_both_rater_models() -> None:
    counts = ambppl.read_annotations(np.array([[3, 1, 1], [0, 4, 1]]), cant_solve="2")
    flat = ambppl.fit(counts, draws=50, random_seed=1)
    with pytest.raises(ValueError) as caught:
        ambppl.summarize(flat, level="rater")
    message = str(caught.value)
    assert "needs a fit of a rater model" in message
    assert "ambppl.fit(answers, 'rater_effects')" in message
    assert "ambppl.fit(answers, 'dawid_skene')" in message
    assert message.endswith("but this result (model 'dirichlet_categorical') has neither")


def _section(doc: str, start: str, end: str) -> str:
    return " ".join(doc[doc.index(start) : doc.index(end)].split())


def test_the_docs_describe_the_dawid_skene_rater_table() -> None:
    """summarize's level="rater" and summarize_raters' Returns name every column of both
    rater tables (they described rater_effects' only)."""
    level = _section(ambppl.summarize.__doc__, "level :", "overuse :")
    returns = _section(summarize_raters.__doc__, "Returns", "Raises")
    for name in (*CLASS_RATER_COLUMNS, *RATER_COLUMNS):
        assert f"``{name}``" in level, name
        assert name in returns, name
    assert "dawid_skene" in level and "rater_effects" in level
    raises = _section(ambppl.summarize.__doc__, "Raises", "Notes")
    assert "``rater_effects`` or ``dawid_skene``" in raises
    overuse = _section(ambppl.summarize.__doc__, "overuse :", "Returns")
    assert "``dawid_skene`` fit has no such column" in overuse


# ------------------------------------- docs/topics/dawid_skene.md: the mode's overconfidence

PAGE = Path(__file__).resolve().parents[2] / "docs" / "topics" / "dawid_skene.md"


def _one_cant_solve_tweet():
    """The page's example: the bundled weather data plus one tweet that its three busiest
    raters all answered "I can't tell"."""
    raw = pd.read_csv(example_path("weather_sentiment"), dtype=str)
    busiest = raw["worker"].value_counts().index[:3]
    cant = pd.DataFrame({"task": "new", "worker": busiest, "label": "I can't tell"})
    return read_long(pd.concat([raw, cant]), cant_solve="I can't tell"), list(busiest)


def _page() -> str:
    return " ".join(PAGE.read_text(encoding="utf-8").split())


def test_the_page_says_the_mode_is_overconfident_with_the_modes_numbers() -> None:
    """The page's numbers at the mode are the code's (deterministic: rounded as printed)."""
    page = _page()
    assert "**The mode is overconfident about items whose answers say little" in page
    answers, busiest = _one_cant_solve_tweet()
    point = ambppl.fit(answers, "dawid_skene", method="map")
    row = ambppl.summarize(point).loc["new"]
    assert row["label"] == "Tweet not related to weather condition"
    assert f"`label_prob` {row['label_prob']:.2f} (`label_entropy` {row['label_entropy']:.2f})" in (
        page
    )
    assert f"label_prob {row['label_prob']:.2f}, label_entropy {row['label_entropy']:.2f}" in page
    # the rater of 149 answers in the example and its can't-solve rates at the mode
    rater = busiest[1]
    assert (answers["rater"].astype(str) == rater).sum() == 149 + 1  # the example's and one
    rates = point["posterior"]["confusion"].sel(rater=rater, category="I can't tell")
    rates = rates.isel(chain=0, draw=0).to_series()
    unrelated, neutral, positive = (
        rates[c]
        for c in (
            "Tweet not related to weather condition",
            "Neutral / author is just sharing information",
            "Positive",
        )
    )
    quoted = (
        f"a can't-solve rate of {unrelated:.2f} for tweets not related to the weather and "
        f"{neutral:.3f} and {positive:.4f} for neutral and positive ones"
    )
    assert quoted in page


@pytest.mark.slow  # compiles the PyMC program of dawid_skene
def test_the_pages_laplace_numbers() -> None:
    """Laplace's label_prob and label_entropy of the tweet as the page quotes them (0.67 and
    0.69, seeded; 0.68 before fit compiled without fast math, 0.672 since), within the
    rounding and three Monte Carlo standard errors of the mean of the per-draw class
    posterior (the draws are independent)."""
    page = _page()
    assert "give 0.67 (0.69)" in page and '0.67 and 0.69 with method="laplace"' in page
    answers, _ = _one_cant_solve_tweet()
    result = ambppl.fit(answers, "dawid_skene", method="laplace", draws=250, random_seed=1)
    row = ambppl.summarize(result).loc["new"]
    assert row["label"] == "Tweet not related to weather condition"
    # the mean class posterior over the independent draws, its Monte Carlo standard errors
    probs = result["posterior"]["label_prob"].sel(item="new")
    probs = probs.transpose(..., probs.dims[-1]).values.reshape(-1, probs.shape[-1])
    mean, mcse = probs.mean(axis=0), probs.std(axis=0, ddof=1) / np.sqrt(len(probs))
    assert abs(row["label_prob"] - 0.67) <= 0.005 + 3 * mcse[mean.argmax()]
    # label_entropy = -sum p log p / log K of the mean: to first order its error is the
    # gradient -(log p + 1) / log K times the errors of the means
    slope = np.abs(np.log(mean) + 1) / np.log(len(mean))
    assert abs(row["label_entropy"] - 0.69) <= 0.005 + 3 * float(slope @ mcse)


# ------------------------------ notebook 09: the stored rater table as the code prints it

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "09_dawid_skene.ipynb"


def test_notebook_09_stores_the_rater_table_with_integer_answer_counts(point) -> None:
    """The stored output of notebook 09's rater table (section c) was made before
    ``n_answers`` became int64 and showed 56.0; re-executed, it shows what the code gives."""
    import json

    assert ambppl.summarize(point, level="rater")["n_answers"].dtype == np.int64
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    tables = [
        "".join(output["data"]["text/plain"])
        for cell in cells
        if cell["cell_type"] == "code"
        for output in cell["outputs"]
        if "text/plain" in output.get("data", {})
        and "gold_accuracy" in "".join(output["data"]["text/plain"])
    ]
    assert len(tables) == 1
    lines = tables[0].splitlines()
    assert lines[0].split()[:2] == ["n_answers", "accuracy"] and lines[1].strip() == "rater"
    counts = [line.split()[1] for line in lines[2:] if line.strip()]
    assert len(counts) == 27 and all(c.isdigit() for c in counts), counts
