"""``benchmarks/gallery.py``: the real-data gallery runs and reports every row (CI's small
gallery); the full gallery's table is on the docs page benchmarks.md."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from conftest import ROOT

from ambppl import get_model
from ambppl.data import read_long


@pytest.fixture(scope="module")
def gallery():
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "benchmarks" / "gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_pair_each_data_set_with_the_models_that_suit_it(gallery):
    pairs = gallery.rows(["cifar10h", "dog_zhou2012", "two_classes"], list(gallery.MODELS))
    # CIFAR-10H ships counts only: no rater model
    assert ("cifar10h", "rater_effects") not in pairs
    assert ("cifar10h", "hierarchical_dirichlet") in pairs
    assert ("dog_zhou2012", "rater_effects") in pairs and ("two_classes", "rater_effects") in pairs
    assert ("cifar10h", "dawid_skene") not in pairs and ("dog_zhou2012", "dawid_skene") in pairs
    assert len(pairs) == 2 + 4 + 4


@pytest.mark.parametrize(
    "name", ["two_classes", "three_answers", "dominant_rater", "near_identical"]
)
def test_stress_designs_are_what_they_say(gallery, name):
    frame = gallery.stress_design(name, n_items=300)
    assert list(frame.columns) == ["item", "rater", "label"]
    per_item = frame.groupby("item").size()
    assert frame["item"].nunique() == 300
    if name == "two_classes":
        assert set(frame["label"]) == {"c0", "c1"} and (per_item == 5).all()
    if name == "three_answers":
        assert (per_item == 3).all()
    if name == "dominant_rater":
        share = (frame["rater"] == "0").mean()
        # half the answers are reassigned to rater 0, plus its 1/80 of the rest:
        # 0.5 + 0.5 / 80 = 0.506; binomial sd over 1800 answers is 0.012
        assert abs(share - 0.50625) < 4 * 0.012
    if name == "near_identical":
        # one shared q = (0.55, 0.3, 0.15): label shares within 4 binomial sd (5000 answers)
        shares = frame["label"].value_counts(normalize=True).reindex(["c0", "c1", "c2"])
        sd = np.sqrt(np.array([0.55, 0.3, 0.15]) * [0.45, 0.7, 0.85] / len(frame))
        assert np.all(np.abs(shares.to_numpy() - [0.55, 0.3, 0.15]) < 4 * sd)


@pytest.mark.parametrize(
    "name", ["crowd_two_classes", "crowd_cant_solve", "crowd_dense", "crowd_few_answers"]
)
def test_crowd_designs_answer_from_their_raters_confusion(gallery, name):
    """The simulated crowds: the shape of their spec, and per true class the answers' shares
    are the confusion rows of the raters who gave them (within 4 binomial sd)."""
    _, per_item, raters, k, with_cs = gallery.CROWDS[name]
    frame = gallery.crowd_design(name, n_items=300)
    assert list(frame.columns) == ["item", "rater", "label"]
    per = frame.groupby("item").size()
    assert frame["item"].nunique() == 300
    assert (per == (per_item or raters)).all()
    # each item's raters are distinct
    assert not frame.duplicated(["item", "rater"]).any()
    labels = [f"c{j}" for j in range(k)] + ([gallery.CROWD_CANT_SOLVE] if with_cs else [])
    assert set(frame["label"]) <= set(labels)
    truth, confusion = frame.attrs["truth"], frame.attrs["confusion"]
    assert confusion.shape == (raters, k, len(labels))
    np.testing.assert_allclose(confusion.sum(axis=2), 1.0)
    item = frame["item"].astype(int).to_numpy()
    rater = frame["rater"].astype(int).to_numpy()
    answer = frame["label"].map({x: j for j, x in enumerate(labels)}).to_numpy()
    for t in range(k):
        mine = truth[item] == t
        expected = confusion[rater[mine], t].mean(axis=0)
        shares = np.bincount(answer[mine], minlength=len(labels)) / mine.sum()
        sd = np.sqrt(expected * (1 - expected) / mine.sum())
        assert np.all(np.abs(shares - expected) <= 4 * sd + 1e-12), (t, shares, expected)
    if not per_item:  # every rater answers every item
        assert frame["rater"].nunique() == raters
    else:  # Zipf: rater 0 gives more answers than the median rater
        counts = frame["rater"].value_counts()
        assert counts.get("0", 0) > 3 * counts.median()


def test_crowd_few_answers_is_the_design_of_dawid_skenes_busy_rater_clause(gallery):
    """Three answers per item and one rater with a seventh of them: the gallery's row checks
    ``dawid_skene``'s few-answers rule and its busy-rater clause on a crowd they were not
    chosen on."""
    frame = gallery.crowd_design("crowd_few_answers")
    entry = get_model("dawid_skene")
    share = frame["rater"].value_counts().iloc[0] / len(frame)
    assert share >= entry.module.BUSY_RATER_SHARE  # 0.153 (the docs' gallery row)
    assert (frame.groupby("item").size() <= entry.module.FEW_ANSWERS).all()
    answers = read_long(frame, item="item", rater="rater", label="label")
    assert entry.nuts_defaults(answers) == {"draws": 3000, "adaptation": "draw_diag"}


@pytest.mark.slow
def test_small_gallery_runs_every_row(gallery, shared_data, tmp_path, capsys):
    out = tmp_path / "rows.json"
    gallery.main(
        [
            "--small",
            "--data",
            "barzan_mozafari,near_identical",
            "--models",
            "dirichlet_categorical,hierarchical_dirichlet",
            "--json",
            str(out),
        ]
    )
    table = json.loads(out.read_text())
    assert [(r["data"], r["model"]) for r in table] == [
        ("barzan_mozafari", "dirichlet_categorical"),
        ("barzan_mozafari", "hierarchical_dirichlet"),
        ("near_identical", "dirichlet_categorical"),
        ("near_identical", "hierarchical_dirichlet"),
    ]
    assert all("error" not in r for r in table), table
    for r in table:
        assert r["items"] == gallery.SMALL_ITEMS and r["wall_s"] > 0 and r["peak_rss_gb"] > 0
        assert isinstance(r["elpd_loo"], float) and r["elpd_loo"] < 0
        if r["model"] == "dirichlet_categorical":
            assert r["r_hat"] == "exact" and r["met"] is True
        else:
            assert r["r_hat_var"] and r["ess_bulk_var"] and r["divergences"] >= 0
            assert isinstance(r["not_pinned_down"], list)
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 4 and "| near_identical | hierarchical_dirichlet |" in printed
