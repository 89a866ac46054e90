"""``benchmarks/dawid_skene_gold.py``: the proper score and the gold-fitted ceiling it adds
to the accuracy table (the table itself is in the ``dawid_skene`` model's docstring)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import load_benchmark


@pytest.fixture(scope="module")
def gold_bench():
    return load_benchmark("dawid_skene_gold")


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


def test_cluster_sign_test_is_mcnemar_when_every_configuration_holds_one_item(gold_bench):
    from scipy.stats import binomtest

    # 21 wins and 45 losses, each its own configuration: the exact McNemar test
    nets = np.array([1] * 21 + [-1] * 45)
    expected = binomtest(21, 66, 0.5).pvalue
    assert gold_bench.cluster_sign_test(nets) == pytest.approx(expected, rel=1e-12)
    assert gold_bench.cluster_sign_test(np.array([0, 0])) == 1.0


def test_cluster_sign_test_counts_a_configuration_once(gold_bench):
    # by hand: signs of (3, 1) give sums +-4, +-2, each 1/4; observed 4: P(|S| >= 4) = 1/2
    assert gold_bench.cluster_sign_test(np.array([3, 1])) == pytest.approx(0.5, abs=1e-15)
    # (3, -1): observed 2 and every sum is at least 2 in size
    assert gold_bench.cluster_sign_test(np.array([3, -1])) == pytest.approx(1.0, abs=1e-15)
    # ten losses in one configuration are one coin, not ten: p = 1, where McNemar's is .002
    assert gold_bench.cluster_sign_test(np.array([-10])) == pytest.approx(1.0, abs=1e-15)
    # (5, 4, 3, 2, 1) all positive: only the all-plus and all-minus signs reach 15: 2 / 32
    nets = np.array([5, 4, 3, 2, 1])
    assert gold_bench.cluster_sign_test(nets) == pytest.approx(2 / 32, abs=1e-15)


def test_paired_groups_the_discordant_items_by_configuration(gold_bench):
    # q1-q3: the same raters gave the same answers (one configuration); q4 on its own
    frame = pd.DataFrame(
        [(q, w, a) for q in ("q1", "q2", "q3") for w, a in (("u", "1"), ("v", "1"), ("w", "0"))]
        + [("q4", "u", "0"), ("q4", "v", "1")],
        columns=["question", "worker", "answer"],
    )
    cluster = gold_bench.configurations(frame)
    assert cluster.loc["q1"] == cluster.loc["q2"] == cluster.loc["q3"] == "u=1 v=1 w=0"
    assert cluster.loc["q4"] == "u=0 v=1"
    gold = pd.Series(["1", "1", "1", "0"], index=["q1", "q2", "q3", "q4"])
    mine = pd.Series(["0", "0", "0", "0"], index=gold.index)
    theirs = pd.Series(["1", "1", "1", "1"], index=gold.index)
    got = gold_bench.paired(mine, theirs, gold, cluster)
    assert (got["wins"], got["losses"], got["clusters"]) == (1, 3, 2)
    # nets: q1-q3 -3, q4 +1; sums +-4, +-2 each 1/4; observed |-2|: p = 1
    assert got["cluster_p"] == 1.0
    assert got["mcnemar_p"] == pytest.approx(0.625, abs=1e-3)  # binomtest(1, 4): 10 / 16
    assert "cluster_p" not in gold_bench.paired(mine, theirs, gold)


def test_conjugate_fit_names_the_labels_and_raters(gold_bench):
    # a unanimous crowd: every item's class is its one answer, every rater always right
    truth = pd.Series(["x", "y", "x", "y", "y"], index=[f"q{i}" for i in range(5)])
    frame = pd.DataFrame(
        [(q, w, t) for q, t in truth.items() for w in ("u", "v", "w")],
        columns=["question", "worker", "answer"],
    )
    fits = {m: gold_bench.conjugate_fit(frame, m, (1.0, 1.0)) for m in ("em", "gibbs")}
    for got in fits.values():
        assert (got["labels"].loc[truth.index] == truth).all()
        assert list(got["probs"].columns) == ["x", "y"]
        assert got["n_classes"] == 2
        assert sorted(got["rater_accuracy"].index) == ["u", "v", "w"]
    # maximum likelihood: each rater's rows are its answer shares, all on the diagonal
    np.testing.assert_allclose(fits["em"]["rater_accuracy"], 1.0, rtol=0, atol=1e-12)


def test_conjugate_gibbs_rater_accuracy_against_enumeration(gold_bench):
    """The Gibbs yardstick's rater accuracy, ``diag(E theta_r) @ E pi``, against the exact
    posterior by enumerating the 2^5 class vectors of a unanimous crowd (conjugate rows and
    prevalence: closed-form marginals and conditional means). Rows ``Dirichlet(4, 1)``: with
    flat rows the posterior is exactly symmetric under swapping the classes, and a chain
    from majority vote visits the swapped mode only now and then (its accuracy 0.57 where the
    symmetric posterior's is lower), so flat rows test the sampler's mixing, not its
    arithmetic."""
    import itertools

    from scipy.special import gammaln

    truth = pd.Series(["x", "y", "x", "y", "y"], index=[f"q{i}" for i in range(5)])
    frame = pd.DataFrame(
        [(q, w, t) for q, t in truth.items() for w in ("u", "v", "w")],
        columns=["question", "worker", "answer"],
    )
    got = gold_bench.conjugate_fit(frame, "gibbs", (4.0, 1.0))["rater_accuracy"].to_numpy()
    alpha = np.array([[4.0, 1.0], [1.0, 4.0]])
    answers = np.array([0 if t == "x" else 1 for t in truth])  # every rater answers truth

    def log_beta(a: np.ndarray) -> np.ndarray:
        return gammaln(a).sum(axis=-1) - gammaln(a.sum(axis=-1))

    weights, theta, theta2, pi, pi2 = [], [], [], [], []
    for z in itertools.product((0, 1), repeat=5):
        z = np.array(z)
        m = np.bincount(z, minlength=2)
        n = np.zeros((2, 2))  # one rater's answer counts by class (the three are alike)
        np.add.at(n, (z, answers), 1)
        weights.append(
            log_beta(1.0 + m)
            - log_beta(np.ones(2))
            + 3 * (log_beta(alpha + n) - log_beta(alpha)).sum()
        )
        a, total = np.diag(alpha + n), (alpha + n).sum(axis=1)
        theta.append(a / total)
        theta2.append(a * (a + 1) / (total * (total + 1)))  # E theta_kk^2 (Beta moments)
        pi.append((1.0 + m) / 7.0)
        pi2.append((1.0 + m) * (2.0 + m) / 56.0)
    w = np.exp(np.array(weights) - max(weights))
    w /= w.sum()
    e_theta, e_pi = w @ np.array(theta), w @ np.array(pi)
    exact = e_theta @ e_pi
    # 5 MCSE of the product of means over the 1200 kept sweeps (delta method; the class
    # vector is the truth with posterior probability 0.97, so the sweeps are nearly
    # independent)
    var_theta, var_pi = w @ np.array(theta2) - e_theta**2, w @ np.array(pi2) - e_pi**2
    mcse = np.sqrt((e_pi**2 @ var_theta + e_theta**2 @ var_pi) / 1200)
    np.testing.assert_allclose(got, exact, rtol=0, atol=5 * mcse)  # exact 0.8655


def test_simulated_crowds_are_scored_against_their_true_classes(gold_bench):
    """``--data`` takes the gallery's crowds without can't-solve: the answers as the gold
    sets give them and the simulated true classes as gold; the others are refused by
    name."""
    assert gold_bench.SIMULATED_GOLD == ("crowd_two_classes", "crowd_dense", "crowd_few_answers")
    frame, gold = gold_bench.load("crowd_dense")
    crowd = gold_bench.crowd_design("crowd_dense")
    assert list(frame.columns) == ["question", "worker", "answer"]
    assert frame["answer"].tolist() == crowd["label"].tolist()
    assert gold.index.tolist() == [str(i) for i in range(108)]
    truth = crowd.attrs["truth"]
    assert gold.tolist() == [f"c{t}" for t in truth]
    # gold labels every item, so the ceiling runs; majority vote is scored on every item
    assert set(frame["question"]) == set(gold.index)
    # another draw of the crowd (--crowd-seed)
    other, other_gold = gold_bench.load("crowd_dense", crowd_seed=2)
    again = gold_bench.crowd_design("crowd_dense", seed=2)
    assert other["answer"].tolist() == again["label"].tolist() != frame["answer"].tolist()
    assert other_gold.tolist() == [f"c{t}" for t in again.attrs["truth"]]
    with pytest.raises(ValueError, match="--data crowd_cant_solve: its raters also answer"):
        gold_bench.load("crowd_cant_solve")


def test_main_names_the_data_sets_it_takes(gold_bench, capsys):
    with pytest.raises(SystemExit) as stop:
        gold_bench.main(["--data", "crowd_cant_solve", "--methods", "map"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--data takes data sets with gold" in err and "got crowd_cant_solve" in err
    assert "Traceback" not in err
