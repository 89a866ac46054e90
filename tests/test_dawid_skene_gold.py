"""``benchmarks/dawid_skene_gold.py``: the proper score and the gold-fitted ceiling it adds
to the accuracy table (the table itself is in the ``dawid_skene`` model's docstring)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT


@pytest.fixture(scope="module")
def gold_bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # its sibling import of settings.py
    try:
        path = ROOT / "benchmarks" / "dawid_skene_gold.py"
        spec = importlib.util.spec_from_file_location("dawid_skene_gold", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def test_brier_is_the_squared_distance_to_the_gold_class(gold_bench):
    probs = pd.DataFrame(
        [[0.8, 0.2, 0.0], [0.1, 0.6, 0.3], [0.5, 0.5, 0.0]],
        index=["i1", "i2", "i3"],
        columns=["a", "b", "c"],
    )
    gold = pd.Series(["a", "c", "z"], index=["i1", "i2", "i3"])
    got = gold_bench.brier(probs, gold)
    # independent form: 1 - 2 p_gold + sum_k p_k^2 (p_gold = 0 for a class not listed)
    p = probs.to_numpy()
    p_gold = np.array([0.8, 0.3, 0.0])
    expected = 1 - 2 * p_gold + (p**2).sum(axis=1)
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=0, atol=1e-15)
    assert got.loc["i1"] == pytest.approx(0.08, abs=1e-15)  # 0.2^2 + 0.2^2 + 0


def _adversarial_crowd():
    """20 items, classes alternating a / b; one rater right on all, two always wrong."""
    truth = pd.Series(["a", "b"] * 10, index=[f"q{i}" for i in range(20)])
    flip = {"a": "b", "b": "a"}
    rows = []
    for q, t in truth.items():
        rows += [(q, "good", t), (q, "bad1", flip[t]), (q, "bad2", flip[t])]
    return pd.DataFrame(rows, columns=["question", "worker", "answer"]), truth


def test_oracle_reads_the_raters_confusion_off_the_gold_labels(gold_bench):
    frame, gold = _adversarial_crowd()
    got = gold_bench.oracle_fit(frame, gold)
    # majority vote gets every item wrong; the confusion counted on gold sees the two raters
    # who always swap the classes and labels every item right
    assert (got["labels"].loc[gold.index] == gold).all()
    # rater accuracy, by hand: pooled row of class a over the 30 gold answers on class-a
    # items (10 right, 20 wrong), smoothed by half an answer: P_aa = 10.5 / 31; a bad rater's
    # row a: (0 right + w P_aa) / (10 + w), w = ORACLE_BACKOFF; the same for class b
    w = gold_bench.ORACLE_BACKOFF
    pooled_right = 10.5 / 31
    bad = (0 + w * pooled_right) / (10 + w)
    good = (10 + w * pooled_right) / (10 + w)
    acc = got["rater_accuracy"]
    assert acc.loc["bad1"] == pytest.approx(bad, rel=1e-12)
    assert acc.loc["good"] == pytest.approx(good, rel=1e-12)
    probs = got["probs"].loc[gold.index]
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (got["label_prob"] > 0.99).all()
