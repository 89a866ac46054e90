"""Dawid-Skene labels against gold: ambppl's ``dawid_skene`` (NUTS, Laplace, the posterior
mode) vs majority vote vs crowd-kit's DawidSkene, on every shared data set with gold labels.

Per (data set, method):

* label accuracy on the gold items;
* calibration of the label probability (the largest class posterior, ``label_prob``; for
  crowd-kit its ``probas_``) against gold: a reliability table (10 equal bins of the
  probability from 1/K to 1: items, mean probability, share right) and the expected
  calibration error ``ECE = sum_b (n_b / n) |share right_b - mean prob_b|``;
* the Brier score of the whole class posterior against gold, ``mean_i sum_k (p_ik -
  [k = gold_i])^2`` (a proper score: it rewards the probabilities, not only the label they
  pick), and paired against crowd-kit the mean per-item difference with its standard error
  (``vs_crowdkit_brier_diff``, ``..._se``; negative: ambppl's probabilities are better);
* rater accuracy against gold: Spearman's rank correlation, over the raters with at least
  :data:`MIN_GOLD_ANSWERS` answers on gold items, of each method's rater accuracy (ambppl:
  the posterior mean of ``accuracy``; crowd-kit: ``sum_k prior_k errors_[worker][k, k]``) with
  the rater's share of right answers on the gold items;
* paired against majority vote (random ties) and crowd-kit: on the gold items where exactly
  one of the two labels is right, how many favour each (``wins`` / ``losses``) and the exact
  two-sided McNemar p-value (``scipy.stats.binomtest`` of wins among the discordant items
  at 1/2), so that a difference of a few items is read against the items that decide it;
  and, as items answered by the same raters with the same answers are labelled alike by
  every Dawid-Skene method (one decision, not several: :func:`configurations`), how many
  such configurations the discordant items fall in (``..._clusters``) and the exact
  sign-flip p-value over them (``..._cluster_p``, :func:`cluster_sign_test`; McNemar's
  where every configuration holds one item);
* wall time: ``fit_s`` is ``ambppl.fit`` (compilation included) from the answers table
  (``read_long`` apart); for ``map`` and crowd-kit's ``fit_predict`` the best of
  :data:`REPEATS` calls in one process (the first pays one-off imports), the same rule for
  both; and for NUTS the convergence record (worst R-hat, smallest bulk / tail ESS,
  divergences).

``oracle`` (only where gold labels every item of the set: dog, face, product) is not a
method but a ceiling: the Dawid-Skene labels from the raters' confusion matrices and the
prevalence *counted on the gold labels themselves* (:func:`oracle_fit`), i.e. the best a
Dawid-Skene labelling of these answers can do knowing every rater's true confusion as
measured on these very items; the gap between it and crowd-kit is the room left for any
estimate of the raters.

Majority vote breaks ties at random (seeded) and counts a tie's expected accuracy as the
share of tied labels that are right (``mv_expected``); ``mv_first`` breaks ties by the first
label. ``em`` and ``gibbs`` are the textbook conjugate Dawid-Skene
(:mod:`conjugate_dawid_skene`: rows ``Dirichlet(DIAG, OFF, ...)`` fixed by ``--dirichlet``,
default flat), its mode by EM (with flat rows crowd-kit's maximum likelihood) and its
posterior by Gibbs sampling: a yardstick that tells the price of a prior and of averaging
over the posterior from that of ambppl's rater population. crowd-kit is not a dependency of
ambppl: where ``/tmp/ck/bin/python`` exists (a venv
with ``pip install crowd-kit``) its DawidSkene (100 EM iterations) runs there by subprocess,
else the row says so; ``glad``, ``mace`` and ``onecoin`` run crowd-kit's GLAD, MACE and
one-coin Dawid-Skene the same way (:data:`CROWDKIT_METHODS`), for the other methods a user
would try beside it.

``--data`` also takes the simulated crowds of ``benchmarks/gallery.py`` that have no
can't-solve answer (:data:`SIMULATED_GOLD`: answers from a Dawid-Skene process, Zipf rater
volumes, one spammer in ten), their true classes as gold: answers that follow the
Dawid-Skene likelihood by construction while the rater population that made them is not
ambppl's (nor its priors), so that a gap to crowd-kit there is the method's and not a
misfit of the likelihood.

Run::

    .venv/bin/python benchmarks/dawid_skene_gold.py                     # every set with gold
    .venv/bin/python benchmarks/dawid_skene_gold.py --methods nuts,map,crowdkit \
        --data crowd_two_classes,crowd_dense,crowd_few_answers    # simulated: truth known
    .venv/bin/python benchmarks/dawid_skene_gold.py --data crowd_few_answers --crowd-seed 2
    .venv/bin/python benchmarks/dawid_skene_gold.py --data face_sentiment --methods nuts
    .venv/bin/python benchmarks/dawid_skene_gold.py --methods map,crowdkit   # speed only
    .venv/bin/python benchmarks/dawid_skene_gold.py --data jn_product --methods nuts,map \
        --discordant nuts,map                  # where the two label differently
    .venv/bin/python benchmarks/dawid_skene_gold.py --param rater_scale=2.5 --methods nuts
    .venv/bin/python benchmarks/dawid_skene_gold.py --methods oracle,crowdkit  # the ceiling
    .venv/bin/python benchmarks/dawid_skene_gold.py --methods crowdkit,glad,mace,onecoin
    .venv/bin/python benchmarks/dawid_skene_gold.py --methods crowdkit,em,gibbs --dirichlet 2,1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from conjugate_dawid_skene import em_fit, gibbs_fit
from crowds import brier_scores, class_posterior
from gallery import CROWDS, crowd_design
from settings import add_param_option

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CROWDKIT_PYTHON = Path("/tmp/ck/bin/python")

#: data set -> (answers file, read_csv keywords, item, rater, label columns, gold file, gold
#: read_csv keywords)
GOLD = {
    "dog_zhou2012": ("answer.csv", {}, "truth.csv", {}),
    "face_sentiment": ("answer.csv", {}, "truth.csv", {}),
    "jn_product": ("answer.csv", {}, "truth.csv", {}),
    "hitspam_crowdflower": (
        "labels.txt",
        {"sep": "\t", "header": None, "names": ["worker", "question", "answer"]},
        "gold.txt",
        {"sep": "\t", "header": None, "names": ["question", "truth"]},
    ),
    "barzan_mozafari": (
        "labels.txt",
        {"sep": "\t", "header": None, "names": ["worker", "question", "answer"]},
        "gold-30items.txt",
        {"sep": "\t", "header": None, "names": ["question", "truth"]},
    ),
}


def load(name: str, crowd_seed: int | None = None) -> tuple[Any, Any]:
    """The answers (columns question, worker, answer as strings) and the gold series; for
    a simulated crowd of ``benchmarks/gallery.py`` (:data:`SIMULATED_GOLD`) its true
    classes are the gold (``crowd_seed``: another draw of the crowd than the gallery's)."""
    import pandas as pd

    if name in CROWDS:
        if name not in SIMULATED_GOLD:
            raise ValueError(
                f"--data {name}: its raters also answer can't-solve, which this benchmark "
                f"does not score; use one of {list(SIMULATED_GOLD)}"
            )
        crowd = crowd_design(name) if crowd_seed is None else crowd_design(name, seed=crowd_seed)
        frame = crowd.rename(columns={"item": "question", "rater": "worker", "label": "answer"})
        truth = crowd.attrs["truth"]
        gold = pd.Series([f"c{t}" for t in truth], index=[str(i) for i in range(len(truth))])
        return frame, gold.rename_axis("question").rename("truth")
    answers_file, read, gold_file, gold_read = GOLD[name]
    frame = pd.read_csv(SHARED / name / answers_file, dtype=str, keep_default_na=False, **read)
    frame = frame[["question", "worker", "answer"]]
    frame = frame[frame["answer"] != ""]
    gold = pd.read_csv(SHARED / name / gold_file, dtype=str, keep_default_na=False, **gold_read)
    gold = gold.drop_duplicates("question").set_index("question")["truth"]
    return frame, gold


#: The simulated crowds of ``benchmarks/gallery.py`` (answers from a Dawid-Skene process)
#: that ``--data`` also takes, their true classes as gold: those without a can't-solve
#: answer.
SIMULATED_GOLD = tuple(name for name, spec in CROWDS.items() if not spec[4])


def majority(frame: Any, gold: Any, seed: int = 0) -> dict[str, Any]:
    """Majority vote: accuracy with random tie-breaking, its expectation, first-label ties,
    and the random tie-breaking's labels on the gold items (``labels``)."""
    import pandas as pd

    counts = frame.groupby(["question", "answer"]).size().unstack(fill_value=0)
    counts = counts.loc[counts.index.intersection(gold.index)]
    top = counts.values == counts.values.max(axis=1, keepdims=True)
    columns = np.asarray(counts.columns, dtype=object)
    truth = np.asarray(gold.loc[counts.index], dtype=object)
    right = columns[None, :] == truth[:, None]
    expected = float(((top & right).sum(axis=1) / top.sum(axis=1)).mean())
    rng = np.random.default_rng(seed)
    pick = np.array([rng.choice(np.flatnonzero(row)) for row in top])
    random = float(right[np.arange(len(pick)), pick].mean())
    first = float(right[np.arange(len(pick)), top.argmax(axis=1)].mean())
    labels = pd.Series(columns[pick], index=counts.index.astype(str))
    return {"mv_random": random, "mv_expected": expected, "mv_first": first, "labels": labels}


def paired(labels: Any, other: Any, gold: Any, cluster: Any = None) -> dict[str, Any]:
    """Wins, losses and the exact McNemar p-value of ``labels`` against ``other`` on gold;
    with ``cluster`` (item -> configuration, :func:`configurations`) also how many
    configurations the discordant items fall in and the exact sign-flip p-value over them
    (:func:`cluster_sign_test`)."""
    from scipy.stats import binomtest

    common = gold.index.intersection(labels.index).intersection(other.index)
    truth = gold.loc[common].astype(str).to_numpy()
    mine = labels.loc[common].astype(str).to_numpy() == truth
    theirs = other.loc[common].astype(str).to_numpy() == truth
    wins, losses = int((mine & ~theirs).sum()), int((theirs & ~mine).sum())
    p = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    out = {"wins": wins, "losses": losses, "mcnemar_p": round(float(p), 3)}
    if cluster is not None:
        import pandas as pd

        net = pd.Series(mine.astype(int) - theirs.astype(int), index=common)
        key = cluster.reindex(common)
        out["clusters"] = int(key[net != 0].nunique())
        out["cluster_p"] = round(cluster_sign_test(net.groupby(key).sum().to_numpy()), 3)
    return out


def configurations(frame: Any) -> Any:
    """Each item's *configuration*: its (rater, answer) pairs, sorted, as one string.

    Under any Dawid-Skene fit, two items with the same configuration have the same class
    posterior (the likelihood of an item is a function of its raters and their answers
    alone), so every Dawid-Skene method here labels them alike (majority vote too, but for
    its random ties), and a difference between two methods on such items is one decision,
    not several: the unit of a paired comparison is the configuration. On the product data
    the same three raters answered many items (a HIT): 7912 of the 8315 items share their
    configuration with another item."""
    pairs = frame["worker"].astype(str) + "=" + frame["answer"].astype(str)
    return pairs.groupby(frame["question"]).agg(lambda p: " ".join(sorted(p)))


def cluster_sign_test(nets: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value of a paired comparison clustered by configuration.

    ``nets`` holds, per configuration, the items the first method gets right and the second
    wrong minus the reverse (integers; zeros are dropped). Under the null hypothesis that
    neither method is better, each configuration's net is as likely to carry either sign;
    the p-value is ``P(|sum_c s_c |net_c|| >= |sum_c net_c|)`` over independent fair signs
    ``s_c``, computed exactly by convolving the per-configuration distributions. With every
    ``|net_c| = 1`` it is the exact McNemar test (``binomtest(wins, n, 1/2)``)."""
    sizes = np.abs(np.asarray(nets, dtype=int))
    sizes = sizes[sizes > 0]
    if sizes.size == 0:
        return 1.0
    total = int(sizes.sum())
    dist = np.zeros(2 * total + 1)  # P(sum = s), index s + total
    dist[total] = 1.0
    for v in sizes:
        dist = 0.5 * (np.roll(dist, v) + np.roll(dist, -v))  # no wrap: |sum| <= total
    observed = abs(int(np.sum(nets)))
    support = np.arange(-total, total + 1)
    return float(min(1.0, dist[np.abs(support) >= observed].sum()))


#: Raters with fewer answers on gold items are left out of the rank correlation.
MIN_GOLD_ANSWERS = 5

#: Calls of the fast methods (``map``, crowd-kit) timed; the best is reported.
REPEATS = 3

#: Equal-width bins of the reliability table.
BINS = 10


def ambppl_fit(frame: Any, method: str, seed: int = 1, **params: Any) -> dict[str, Any]:
    """Fit dawid_skene with its defaults: labels, label probabilities, rater accuracies,
    the wall time of ``fit`` and, after NUTS, the convergence record."""
    import pandas as pd

    import ambppl
    from ambppl.data.readers import read_long

    answers = read_long(frame, item="question", rater="worker", label="answer")
    walls = []
    for _ in range(REPEATS if method == "map" else 1):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
            result = ambppl.fit(answers, "dawid_skene", method=method, random_seed=seed, **params)
        walls.append(time.perf_counter() - start)
    post = result["posterior"]
    prob = post["label_prob"].mean(("chain", "draw")).transpose("item", "class")
    items = [str(i) for i in prob["item"].values]
    out: dict[str, Any] = {
        "labels": pd.Series(prob["class"].values[prob.values.argmax(axis=1)], index=items),
        "label_prob": pd.Series(prob.values.max(axis=1), index=items),
        "probs": pd.DataFrame(
            prob.values, index=items, columns=[str(c) for c in prob["class"].values]
        ),
        "n_classes": prob.sizes["class"],
        "rater_accuracy": pd.Series(
            post["accuracy"].mean(("chain", "draw")).values,
            index=[str(r) for r in post["rater"].values],
        ),
        "info": {
            "fit_s": min(walls),
            "sigma_rater": post["sigma_rater"].mean(("chain", "draw")).round(3).values.tolist(),
        },
    }
    if "convergence" in result.attrs:
        record = json.loads(result.attrs["convergence"])
        keys = ("r_hat", "ess_bulk", "ess_tail", "divergences")
        out["info"].update({k: record.get(k) for k in keys})
    return out


#: crowd-kit's aggregators by method name: ``crowdkit`` is its DawidSkene, the others are
#: run for the table of its other methods (a rater score where crowd-kit gives one per rater).
CROWDKIT_METHODS = {
    "crowdkit": ("DawidSkene", {"n_iter": 100}),
    "glad": ("GLAD", {"n_iter": 100}),
    "mace": ("MACE", {"n_iter": 100, "random_state": 0}),
    "onecoin": ("OneCoinDawidSkene", {"n_iter": 100}),
}

CROWDKIT_SCRIPT = """
import json, sys, time, pandas as pd
from crowdkit import aggregation
from crowdkit.aggregation import DawidSkene, GLAD
df = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
df = df.rename(columns={"question": "task", "answer": "label"})
walls = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    ds = getattr(aggregation, sys.argv[4])(**json.loads(sys.argv[5]))
    labels = ds.fit_predict(df)
    walls.append(time.perf_counter() - t)
probas = ds.probas_
out = pd.DataFrame({"label": labels, "label_prob": probas.max(axis=1)})
out = out.join(probas.rename(columns=lambda c: "p_" + str(c)))
out.index.name = "task"
out.to_csv(sys.argv[2])
acc = {}
if isinstance(ds, DawidSkene):  # the rater's accuracy: sum_k prior_k P(answer k | class k)
    for worker, matrix in ds.errors_.groupby(level="worker"):
        m = matrix.droplevel("worker")
        acc[str(worker)] = float(sum(ds.priors_[k] * m.loc[k, k] for k in ds.priors_.index
                                     if k in m.index and k in m.columns))
elif isinstance(ds, GLAD):  # its rater ability alpha (ranked only)
    acc = {str(w): float(a) for w, a in ds.alphas_.items()}
elif hasattr(ds, "skills_"):  # one-coin: the rater's probability of the right answer
    acc = {str(w): float(a) for w, a in ds.skills_.items()}
print(json.dumps({"wall_s": min(walls), "rater_accuracy": acc,
                  "n_classes": int(probas.shape[1])}))
"""


def crowdkit_fit(frame: Any, method: str = "crowdkit") -> dict[str, Any] | None:
    """A crowd-kit aggregator (:data:`CROWDKIT_METHODS`; ``crowdkit``: its DawidSkene, 100
    EM iterations) in its own venv, by subprocess."""
    import pandas as pd

    if not CROWDKIT_PYTHON.exists():
        return {"info": {"note": f"{CROWDKIT_PYTHON} missing (pip install crowd-kit there)"}}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "answers.csv", Path(tmp) / "labels.csv"
        frame.to_csv(src, index=False)
        done = subprocess.run(
            [
                str(CROWDKIT_PYTHON),
                "-c",
                CROWDKIT_SCRIPT,
                str(src),
                str(dst),
                str(REPEATS),
                CROWDKIT_METHODS[method][0],
                json.dumps(CROWDKIT_METHODS[method][1]),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            return {"info": {"note": done.stderr.strip().splitlines()[-1][:120]}}
        table = pd.read_csv(dst, dtype={"task": str, "label": str}, keep_default_na=False)
        table = table.set_index("task")
    record = json.loads(done.stdout.strip().splitlines()[-1])
    probs = table[[c for c in table.columns if c.startswith("p_")]].astype(float)
    return {
        "labels": table["label"],
        "label_prob": table["label_prob"].astype(float),
        "probs": probs.rename(columns=lambda c: c[2:]),
        "n_classes": record["n_classes"],
        "rater_accuracy": pd.Series(record["rater_accuracy"], dtype=float),
        "info": {"fit_s": record["wall_s"]},
    }


#: Pseudo-answers of the pooled gold confusion row that :func:`oracle_fit` adds to each
#: rater's own gold counts (a rater with no gold answers of a class answers as the crowd).
ORACLE_BACKOFF = 1.0


def oracle_fit(frame: Any, gold: Any) -> dict[str, Any]:
    """Dawid-Skene labels from confusion matrices and prevalence counted on the gold labels.

    Rater ``r``'s row for true class ``k`` is ``(n_rkc + w P_kc) / (n_rk + w)``: its answers
    ``c`` on the gold items of class ``k``, backed off by :data:`ORACLE_BACKOFF` (``w``)
    pseudo-answers of the pooled row ``P_k`` (all raters' gold answers of class ``k``, plus
    half an answer per category); the prevalence is the gold class shares. Each item's
    label is the class of largest ``log pi_k + sum_a log theta_{r[a], k, y_a}``, its
    probabilities the softmax of that. Fitted to the items it is scored on: a ceiling, not a
    method (module docstring).
    """
    import pandas as pd

    on_gold = frame[frame["question"].isin(gold.index)].copy()
    on_gold["truth"] = gold.loc[on_gold["question"]].astype(str).to_numpy()
    classes = sorted(gold.astype(str).unique())
    answers = sorted(set(on_gold["answer"].astype(str)) | set(classes))
    counts = pd.crosstab([on_gold["worker"], on_gold["truth"]], on_gold["answer"].astype(str))
    counts = counts.reindex(columns=answers, fill_value=0)
    pooled = counts.groupby(level="truth").sum().reindex(classes, fill_value=0)
    pooled = (pooled + 0.5).div((pooled + 0.5).sum(axis=1), axis=0)
    workers = on_gold["worker"].unique()
    full = pd.MultiIndex.from_product([workers, classes], names=["worker", "truth"])
    counts = counts.reindex(full, fill_value=0)
    prior = pooled.loc[counts.index.get_level_values("truth")].to_numpy()
    theta = (counts.to_numpy() + ORACLE_BACKOFF * prior) / (
        counts.to_numpy().sum(axis=1, keepdims=True) + ORACLE_BACKOFF
    )
    theta = theta.reshape(len(workers), len(classes), len(answers))
    items = pd.Index(on_gold["question"].unique())
    shares = gold.astype(str).value_counts(normalize=True).reindex(classes).to_numpy()
    probs = class_posterior(
        shares,
        theta,
        items.get_indexer(on_gold["question"]),
        pd.Index(workers).get_indexer(on_gold["worker"]),
        pd.Index(answers).get_indexer(on_gold["answer"].astype(str)),
        len(items),
    )
    index = items.astype(str)
    right = theta[:, np.arange(len(classes)), pd.Index(answers).get_indexer(classes)]
    return {
        "labels": pd.Series(np.asarray(classes, dtype=object)[probs.argmax(axis=1)], index=index),
        "label_prob": pd.Series(probs.max(axis=1), index=index),
        "probs": pd.DataFrame(probs, index=index, columns=classes),
        "n_classes": len(classes),
        "rater_accuracy": pd.Series(right @ shares, index=[str(x) for x in workers]),
        "info": {"fit_s": None, "note": "fitted to the gold labels it is scored on: a ceiling"},
    }


#: Methods of :mod:`conjugate_dawid_skene` by name (the conjugate Dirichlet-row model).
CONJUGATE_METHODS = ("em", "gibbs")


def conjugate_fit(frame: Any, method: str, dirichlet: tuple[float, float]) -> dict[str, Any]:
    """The conjugate Dirichlet-row Dawid-Skene (rows ``Dirichlet(diag, off, ...)``, the pair
    ``dirichlet``): ``em`` its mode by 100 EM iterations (``1, 1``: maximum likelihood, as
    crowd-kit), ``gibbs`` its posterior by 1500 Gibbs sweeps (300 dropped, seed 0); the
    classes are the answer categories. The rater accuracy is ``sum_k pi_k theta_rkk``."""
    import pandas as pd

    items, item = np.unique(frame["question"].astype(str), return_inverse=True)
    raters, rater = np.unique(frame["worker"].astype(str), return_inverse=True)
    classes, answer = np.unique(frame["answer"].astype(str), return_inverse=True)
    fit = {"em": em_fit, "gibbs": gibbs_fit}[method]
    start = time.perf_counter()
    got = fit(item, rater, answer, len(classes), *dirichlet)
    wall = time.perf_counter() - start
    probs = pd.DataFrame(got["label_prob"], index=items, columns=classes)
    diagonal = got["confusion"][:, np.arange(len(classes)), np.arange(len(classes))]
    return {
        "labels": pd.Series(classes[probs.to_numpy().argmax(axis=1)], index=items),
        "label_prob": probs.max(axis=1),
        "probs": probs,
        "n_classes": len(classes),
        "rater_accuracy": pd.Series(diagonal @ got["pi"], index=raters),
        "info": {"fit_s": wall, "dirichlet": list(dirichlet)},
    }


def brier(probs: Any, gold: Any) -> Any:
    """Per gold item, the Brier score ``sum_k (p_k - [k = gold])^2`` of the class posterior
    (rows: items, columns: classes; :func:`crowds.brier_scores`); a gold class the columns
    lack counts as probability 0."""
    import pandas as pd

    common = gold.index.intersection(probs.index)
    truth = pd.Index(probs.columns.astype(str)).get_indexer(gold.loc[common].astype(str))
    return pd.Series(brier_scores(probs.loc[common].to_numpy(dtype=float), truth), index=common)


def accuracy(labels: Any, gold: Any) -> float:
    common = gold.index.intersection(labels.index)
    return float((labels.loc[common].astype(str) == gold.loc[common].astype(str)).mean())


def reliability(labels: Any, prob: Any, gold: Any, n_classes: int) -> dict[str, Any]:
    """Reliability table and expected calibration error of ``prob`` (the probability of the
    chosen label) against gold, in :data:`BINS` equal bins from 1/K to 1."""
    common = gold.index.intersection(labels.index)
    right = (labels.loc[common].astype(str) == gold.loc[common].astype(str)).to_numpy()
    p = prob.loc[common].to_numpy(dtype=float)
    edges = np.linspace(1.0 / n_classes, 1.0, BINS + 1)
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, BINS - 1)
    rows, ece = [], 0.0
    for b in range(BINS):
        inside = which == b
        if not inside.any():
            continue
        mean_p, share = float(p[inside].mean()), float(right[inside].mean())
        ece += inside.mean() * abs(share - mean_p)
        rows.append([round(edges[b], 3), int(inside.sum()), round(mean_p, 3), round(share, 3)])
    return {"ece": float(ece), "reliability": rows}


def gold_rater_accuracy(frame: Any, gold: Any) -> Any:
    """Each rater's share of right answers on the gold items (raters with at least
    :data:`MIN_GOLD_ANSWERS` of them)."""
    on_gold = frame[frame["question"].isin(gold.index)]
    right = on_gold["answer"].to_numpy() == gold.loc[on_gold["question"]].to_numpy()
    by = on_gold.assign(right=right).groupby("worker")["right"]
    table = by.agg(["mean", "size"])
    return table.loc[table["size"] >= MIN_GOLD_ANSWERS, "mean"]


def discordant(frame: Any, gold: Any, first: Any, second: Any, names: tuple[str, str]) -> Any:
    """The gold items two methods label differently, by the item's answers (sorted): how
    many, and how many of them each method gets right."""
    import pandas as pd

    common = gold.index.intersection(first.index).intersection(second.index)
    differ = common[first.loc[common].astype(str) != second.loc[common].astype(str)]
    truth = gold.loc[differ].astype(str)
    pattern = frame.groupby("question")["answer"].agg(lambda a: " ".join(sorted(map(str, a))))
    table = pd.DataFrame(
        {
            "answers": pattern.reindex(differ).to_numpy(),
            f"{names[0]}_right": (first.loc[differ].astype(str) == truth).to_numpy(),
            f"{names[1]}_right": (second.loc[differ].astype(str) == truth).to_numpy(),
        }
    )
    return table.groupby("answers").agg(["sum", "size"])


def run(
    name: str,
    methods: list[str],
    params: dict[str, Any],
    compare: list[str],
    dirichlet: tuple[float, float] = (1.0, 1.0),
    crowd_seed: int | None = None,
) -> list[dict[str, Any]]:
    from scipy.stats import spearmanr

    frame, gold = load(name, crowd_seed)
    mv = majority(frame, gold)
    labels = {"majority": mv.pop("labels")}
    if crowd_seed is not None and name in CROWDS:
        name = f"{name}@{crowd_seed}"  # the rows say which draw of the crowd
    rows: list[dict[str, Any]] = [{"data": name, "method": "majority", **mv}]
    truth_acc = gold_rater_accuracy(frame, gold)
    cluster = configurations(frame)
    # crowd-kit first, so that every ambppl row can be paired with it
    briers = {}
    for method in sorted(methods, key=lambda m: m != "crowdkit"):
        if method == "oracle" and not frame["question"].isin(gold.index).all():
            covered = int(gold.index.isin(frame["question"]).sum())
            note = f"gold labels {covered} of {frame['question'].nunique()} items: no ceiling"
            rows.append({"data": name, "method": method, "note": note})
            print(json.dumps(rows[-1]), flush=True)
            continue
        if method in CROWDKIT_METHODS:
            got = crowdkit_fit(frame, method)
        elif method == "oracle":
            got = oracle_fit(frame, gold)
        elif method in CONJUGATE_METHODS:
            got = conjugate_fit(frame, method, dirichlet)
        else:
            got = ambppl_fit(frame, method, **params)
        row = {"data": name, "method": method, **got["info"]}
        if "probs" in got:
            briers[method] = brier(got["probs"], gold)
            row["brier"] = float(briers[method].mean())
            if "crowdkit" in briers and method != "crowdkit":
                diff = (briers[method] - briers["crowdkit"]).dropna()
                row["vs_crowdkit_brier_diff"] = float(diff.mean())
                row["vs_crowdkit_brier_se"] = float(diff.std(ddof=1) / np.sqrt(len(diff)))
        if "labels" in got:
            row["accuracy"] = accuracy(got["labels"], gold)
            for other in ("majority", "crowdkit"):
                if other in labels and method != "crowdkit":
                    pair = paired(got["labels"], labels[other], gold, cluster)
                    row.update({f"vs_{other}_{k}": v for k, v in pair.items()})
            labels[method] = got["labels"]
            row.update(reliability(got["labels"], got["label_prob"], gold, got["n_classes"]))
            est = got["rater_accuracy"]
            common = truth_acc.index.intersection(est.index)
            row["n_raters_gold"] = len(common)
            if len(common) >= 3:
                rho = spearmanr(est.loc[common], truth_acc.loc[common]).statistic
                row["rater_spearman"] = float(rho)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if compare:
        a, b = compare
        table = discordant(frame, gold, labels[a], labels[b], (a, b))
        print(f"{name}: gold items {a} and {b} label differently\n{table.to_string()}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(GOLD))
    parser.add_argument("--methods", default="nuts,laplace,map,crowdkit")
    parser.add_argument("--json", default=None)
    add_param_option(parser, "a dawid_skene parameter for the ambppl fits, e.g. rater_scale=2.5")
    parser.add_argument(
        "--discordant",
        default=None,
        metavar="A,B",
        help="two of the methods: the gold items they label differently, by answers",
    )
    parser.add_argument(
        "--dirichlet",
        default="1,1",
        metavar="DIAG,OFF",
        help="the rows' Dirichlet prior of the em and gibbs methods (default 1,1: flat)",
    )
    parser.add_argument(
        "--crowd-seed",
        type=int,
        default=None,
        help="simulated crowds: draw them with this seed instead of the gallery's",
    )
    args = parser.parse_args(argv)
    params = dict(args.param)
    try:
        dirichlet = tuple(float(x) for x in args.dirichlet.split(","))
    except ValueError:
        dirichlet = ()
    if len(dirichlet) != 2 or min(dirichlet) <= 0:
        parser.error(f"--dirichlet takes two positive numbers DIAG,OFF, got {args.dirichlet}")
    methods = args.methods.split(",")
    if "em" in methods and min(dirichlet) < 1:
        parser.error(f"em needs --dirichlet DIAG,OFF of at least 1 (a mode), got {args.dirichlet}")
    compare = args.discordant.split(",") if args.discordant else []
    if compare and (len(compare) != 2 or not set(compare) <= {*methods, "majority"}):
        parser.error(f"--discordant takes two of {[*methods, 'majority']}, got {args.discordant}")
    names = args.data.split(",")
    for name in names:
        if name not in (*GOLD, *SIMULATED_GOLD):
            parser.error(
                f"--data takes data sets with gold {list(GOLD)} or simulated crowds "
                f"{list(SIMULATED_GOLD)} (not those with can't-solve answers), got {name}"
            )
    rows = []
    for name in names:
        rows.extend(run(name, methods, params, compare, dirichlet, args.crowd_seed))
    for row in rows:
        print(json.dumps(row))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
