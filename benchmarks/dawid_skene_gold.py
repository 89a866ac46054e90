"""Dawid-Skene labels against gold: ambppl's ``dawid_skene`` (NUTS, Laplace) vs majority vote
vs crowd-kit's DawidSkene, on every shared data set with gold labels.

Per (data set, method): label accuracy on the gold items, wall time (compilation included),
and for NUTS the convergence record (worst R-hat, smallest bulk / tail ESS, divergences).
Majority vote breaks ties at random (seeded) and counts a tie's expected accuracy as the
share of tied labels that are right (``mv_expected``); ``mv_first`` breaks ties by the first
label. crowd-kit is not a dependency of ambppl: where ``/tmp/ck/bin/python`` exists (a venv
with ``pip install crowd-kit``) its DawidSkene runs there by subprocess, else the row says so.

Run::

    .venv/bin/python benchmarks/dawid_skene_gold.py                     # every set with gold
    .venv/bin/python benchmarks/dawid_skene_gold.py --data face_sentiment --methods nuts
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


def load(name: str) -> tuple[Any, Any]:
    """The answers (columns question, worker, answer as strings) and the gold series."""
    import pandas as pd

    answers_file, read, gold_file, gold_read = GOLD[name]
    frame = pd.read_csv(SHARED / name / answers_file, dtype=str, keep_default_na=False, **read)
    frame = frame[["question", "worker", "answer"]]
    frame = frame[frame["answer"] != ""]
    gold = pd.read_csv(SHARED / name / gold_file, dtype=str, keep_default_na=False, **gold_read)
    gold = gold.drop_duplicates("question").set_index("question")["truth"]
    return frame, gold


def majority(frame: Any, gold: Any, seed: int = 0) -> dict[str, float]:
    """Majority vote: accuracy with random tie-breaking, its expectation, first-label ties."""
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
    return {"mv_random": random, "mv_expected": expected, "mv_first": first}


def ambppl_labels(frame: Any, method: str, seed: int = 1) -> tuple[Any, dict[str, Any]]:
    """Fit dawid_skene with its defaults; the labels (posterior-mean class probabilities)."""
    import ambppl
    from ambppl.data.readers import read_long

    start = time.perf_counter()
    answers = read_long(frame, item="question", rater="worker", label="answer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(answers, "dawid_skene", method=method, random_seed=seed)
    wall = time.perf_counter() - start
    prob = result["posterior"]["label_prob"].mean(("chain", "draw"))
    labels = prob["class"].values[prob.values.argmax(axis=1)]
    out: dict[str, Any] = {"wall_s": wall}
    if "convergence" in result.attrs:
        record = json.loads(result.attrs["convergence"])
        out.update({k: record.get(k) for k in ("r_hat", "ess_bulk", "ess_tail", "divergences")})
    import pandas as pd

    return pd.Series(labels, index=[str(i) for i in prob["item"].values]), out


CROWDKIT_SCRIPT = """
import sys, time, pandas as pd
from crowdkit.aggregation import DawidSkene
df = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
df = df.rename(columns={"question": "task", "answer": "label"})
t = time.perf_counter()
labels = DawidSkene(n_iter=100).fit_predict(df)
print(time.perf_counter() - t)
labels.to_csv(sys.argv[2])
"""


def crowdkit_labels(frame: Any) -> tuple[Any, dict[str, Any]]:
    """crowd-kit's DawidSkene (100 EM iterations) in its own venv, by subprocess."""
    import pandas as pd

    if not CROWDKIT_PYTHON.exists():
        return None, {"note": f"{CROWDKIT_PYTHON} missing (pip install crowd-kit there)"}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "answers.csv", Path(tmp) / "labels.csv"
        frame.to_csv(src, index=False)
        done = subprocess.run(
            [str(CROWDKIT_PYTHON), "-c", CROWDKIT_SCRIPT, str(src), str(dst)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            return None, {"note": done.stderr.strip().splitlines()[-1][:120]}
        labels = pd.read_csv(dst, dtype=str, keep_default_na=False).set_index("task").iloc[:, 0]
    return labels, {"wall_s": float(done.stdout.strip().splitlines()[-1])}


def accuracy(labels: Any, gold: Any) -> float:
    common = gold.index.intersection(labels.index)
    return float((labels.loc[common].astype(str) == gold.loc[common].astype(str)).mean())


def run(name: str, methods: list[str]) -> list[dict[str, Any]]:
    frame, gold = load(name)
    rows: list[dict[str, Any]] = [{"data": name, "method": "majority", **majority(frame, gold)}]
    for method in methods:
        if method == "crowdkit":
            labels, info = crowdkit_labels(frame)
        else:
            labels, info = ambppl_labels(frame, method)
        row = {"data": name, "method": method, **info}
        if labels is not None:
            row["accuracy"] = accuracy(labels, gold)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(GOLD))
    parser.add_argument("--methods", default="nuts,laplace,crowdkit")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rows = []
    for name in args.data.split(","):
        rows.extend(run(name, args.methods.split(",")))
    for row in rows:
        print(json.dumps(row))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
