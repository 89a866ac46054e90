"""Real-data gallery: every catalog model, with its defaults, on every data set that suits it.

One row per (data set, model): wall time of ``ambppl.fit`` (compilation included), peak
memory of the process, the worst R-hat over every stored posterior variable and which
variable it is, the smallest bulk and tail ESS (and where), divergences, whether the
convergence standard (R-hat <= 1.01, bulk and tail ESS >= 400, no divergences) is met, and
``elpd_loo`` (:func:`ambppl.loo`). Exact fits (independent draws) have no MCMC diagnostics:
their standard is "met" by construction and the columns say "exact".

Data sets:

- the eight public sets in ``../shared/data`` (its README): each model that suits the data
  (count models on every set; ``rater_effects`` where there are rater ids, i.e. all but
  CIFAR-10H, which ships counts only);
- simulated stress designs (seeded; :func:`stress_design`): ``two_classes`` (500 items x 5
  answers, 2 classes), ``three_answers`` (2000 items x 3 answers), ``many_raters`` (10^4
  items x 5 answers from 10^3 raters), ``dominant_rater`` (one rater gives half of all
  answers), ``near_identical`` (every item answered from one shared response distribution:
  a learned prior's ``kappa`` has no upper bound in the data);
- simulated crowds (seeded; :func:`crowd_design`): answers from a Dawid-Skene process (a
  true class per item, a confusion matrix per rater, Zipf rater volumes, one spammer in
  ten), shaped like public sets the project has not used: ``crowd_two_classes`` (800 items
  x 10 answers from 164 raters, 2 classes, as textual entailment), ``crowd_cant_solve``
  (1600 items x 5 answers from 44 raters, 4 classes and a can't-solve answer, as site
  ratings with "broken"), ``crowd_dense`` (108 items, 39 raters who each answer every item,
  2 classes, as bird photos), ``crowd_few_answers`` (3000 items x 3 answers from 150 raters,
  2 classes: a platform's overlap of three, where the Zipf volumes leave one rater a seventh
  of all answers, the design of ``dawid_skene``'s busy-rater rule).

Every row runs in its own Python process (a fresh PyMC compilation and an honest peak RSS),
one at a time, with a time limit (``--timeout``, default 1200 s). A row that fails or times
out is a row of the table with its reason, never dropped.

Run::

    .venv/bin/python benchmarks/gallery.py                   # everything (about 1.5 hours)
    .venv/bin/python benchmarks/gallery.py --small           # CI's small gallery
    .venv/bin/python benchmarks/gallery.py --data dog_zhou2012,two_classes --models rater_effects

``--small`` takes the first 60 items of each set (stress designs: 60 items too) and two
chains of 500 draws after 500 tuning steps for NUTS routes: a check that every row runs and
reports, not the convergence verdict (that needs the defaults, which only the full gallery
uses). ``--json PATH`` also writes the rows as JSON. The full run takes about 1.5 hours on 2
cores: the walls of its fits in docs/benchmarks.md's tables add up to 90 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

#: The catalog models in the gallery, and whether each needs rater ids.
MODELS = {
    "dirichlet_categorical": False,
    "hierarchical_dirichlet": False,
    "rater_effects": True,
    "dawid_skene": True,
}

#: Real data sets: file, how to read it (pandas.read_csv keywords), the columns, can't-solve.
REAL = {
    "cf_weather_sentiment": {
        "file": "cf_weather_sentiment/weather-non-agg-DFE.csv",
        "read": {},
        "columns": ("tweet_id", "worker_id", "emotion"),
        "cant_solve": "I can't tell",
    },
    "anesthesia_ds1979": {
        "file": "anesthesia_ds1979/anesthesia_long.csv",
        "read": {},
        "columns": ("item", "rater", "rating"),
        "cant_solve": None,
    },
    "cifar10h": {"file": "cifar10h/cifar10h-counts.npy", "counts": True, "cant_solve": None},
    "dog_zhou2012": {
        "file": "dog_zhou2012/answer.csv",
        "read": {},
        "columns": ("question", "worker", "answer"),
        "cant_solve": None,
    },
    "face_sentiment": {
        "file": "face_sentiment/answer.csv",
        "read": {},
        "columns": ("question", "worker", "answer"),
        "cant_solve": None,
    },
    "jn_product": {
        "file": "jn_product/answer.csv",
        "read": {},
        "columns": ("question", "worker", "answer"),
        "cant_solve": None,
    },
    "hitspam_crowdflower": {
        "file": "hitspam_crowdflower/labels.txt",
        "read": {"sep": "\t", "header": None, "names": ["worker", "item", "label"]},
        "columns": ("item", "worker", "label"),
        "cant_solve": None,
    },
    "barzan_mozafari": {
        "file": "barzan_mozafari/labels.txt",
        "read": {"sep": "\t", "header": None, "names": ["worker", "item", "label"]},
        "columns": ("item", "worker", "label"),
        "cant_solve": None,
    },
}

#: Simulated crowds (:func:`crowd_design`), shaped like public sets the project has not used:
#: items, answers per item (0: every rater answers every item), raters, classes, whether
#: raters also answer "can't solve".
CROWDS = {
    "crowd_two_classes": (800, 10, 164, 2, False),  # textual entailment: 800 x 10, 164 raters
    "crowd_cant_solve": (1600, 5, 44, 4, True),  # site ratings with "broken": 44 raters
    "crowd_dense": (108, 0, 39, 2, False),  # bird photos: 108 x 39, every rater every item
    "crowd_few_answers": (3000, 3, 150, 2, False),  # overlap 3, a few busy raters (Zipf)
}
#: The label of the can't-solve answer in :func:`crowd_design`.
CROWD_CANT_SOLVE = "cant_solve"

STRESS = (
    "two_classes",
    "three_answers",
    "many_raters",
    "dominant_rater",
    "near_identical",
    *CROWDS,
)

#: --small: items per data set, and the NUTS settings (a smoke run, not a verdict)
SMALL_ITEMS = 60
SMALL_NUTS = {"draws": 500, "chains": 2, "sample_kwargs": {"tune": 500}}


def stress_design(name: str, n_items: int | None = None, seed: int = 20261127) -> Any:
    """A simulated long answers table (columns item, rater, label) for a stress design.

    Items have response distributions ``q_i ~ Dirichlet(alpha)`` (``near_identical``: one
    shared ``q``); each answer comes from its item's ``q_i`` and a rater drawn from the
    design's rater pool. Labels are ``"c0"``, ``"c1"``, ...; the last is not can't-solve.
    """
    import pandas as pd

    if name in CROWDS:
        return crowd_design(name, n_items, seed)
    rng = np.random.default_rng(seed)
    spec = {
        "two_classes": (500, 5, 100, [0.8, 0.8]),
        "three_answers": (2000, 3, 300, [1.0, 1.0, 1.0]),
        "many_raters": (10_000, 5, 1000, [0.7, 0.7, 0.7, 0.7]),
        "dominant_rater": (800, 6, 80, [1.0, 1.0, 1.0]),
        "near_identical": (1000, 5, 100, None),
    }[name]
    items, per_item, raters, alpha = spec
    items = n_items or items
    if alpha is None:
        q = np.tile([0.55, 0.3, 0.15], (items, 1))
    else:
        q = rng.dirichlet(alpha, size=items)
    k = q.shape[1]
    item = np.repeat(np.arange(items), per_item)
    label = (rng.random((items * per_item, 1)) > np.cumsum(q[item], axis=1)).sum(axis=1)
    label = np.minimum(label, k - 1)
    rater = rng.integers(raters, size=items * per_item)
    if name == "dominant_rater":
        rater[rng.random(len(rater)) < 0.5] = 0  # rater 0 gives half of all answers
    return pd.DataFrame(
        {"item": item.astype(str), "rater": rater.astype(str), "label": [f"c{j}" for j in label]}
    )


def crowd_design(name: str, n_items: int | None = None, seed: int = 20261127) -> Any:
    """A simulated crowd (:data:`CROWDS`): answers from a Dawid-Skene process, as real
    crowds give them, rather than from item response distributions with inert rater ids.

    Each item has a true class (prevalence ``Dirichlet(4, ..., 4)``); raters give answers in
    Zipf proportions (rater ``r`` is picked with weight ``1 / (r + 1)``: a few raters give
    most answers, many give a handful; each item's raters are distinct). A rater answers its
    accuracy ``a_r ~ Beta(6, 2)`` on the true class and spreads the rest over the other
    classes by its own ``Dirichlet(1)`` row per class; one rater in ten is a spammer whose
    answers follow one ``Dirichlet(1)`` distribution whatever the class. With can't-solve,
    rater ``r`` answers it with probability ``c_r ~ Beta(1, 19)`` (twice that on the last
    class, the hard one) and otherwise as above. ``frame.attrs`` keeps ``truth`` (the class
    code per item, in item order) and ``confusion`` (raters x classes x answers).
    """
    import pandas as pd

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from crowds import confusion_matrix, draw_answers

    items, per_item, raters, k, with_cs = CROWDS[name]
    items = n_items or items
    rng = np.random.default_rng(seed)
    prevalence = rng.dirichlet(np.full(k, 4.0))
    truth = rng.choice(k, size=items, p=prevalence)
    accuracy = rng.beta(6.0, 2.0, size=raters)
    spammer = rng.random(raters) < 0.1
    confusion = np.empty((raters, k, k))
    for r in range(raters):
        if spammer[r]:
            confusion[r] = rng.dirichlet(np.ones(k))
        else:
            confusion[r] = confusion_matrix(rng, accuracy[r], k, k)
    if with_cs:
        cs = rng.beta(1.0, 19.0, size=raters)[:, None] * np.r_[np.ones(k - 1), 2.0]
        confusion = np.concatenate([confusion * (1 - cs[..., None]), cs[..., None]], axis=2)
    if per_item == 0:
        item, rater = np.repeat(np.arange(items), raters), np.tile(np.arange(raters), items)
    else:
        weight = 1.0 / np.arange(1, raters + 1)
        weight /= weight.sum()
        chosen = [rng.choice(raters, per_item, replace=False, p=weight) for _ in range(items)]
        item, rater = np.repeat(np.arange(items), per_item), np.concatenate(chosen)
    answer = draw_answers(rng, confusion, truth, item, rater)
    labels = np.array([f"c{j}" for j in range(k)] + ([CROWD_CANT_SOLVE] if with_cs else []))
    frame = pd.DataFrame(
        {"item": item.astype(str), "rater": rater.astype(str), "label": labels[answer]}
    )
    frame.attrs.update(truth=truth, confusion=confusion)
    return frame


def _load(name: str, small: bool) -> tuple[Any, dict[str, Any]]:
    """The data (a long frame or a count matrix) and the reader's keywords."""
    import pandas as pd

    if name in STRESS:
        frame = stress_design(name, SMALL_ITEMS if small else None)
        kwargs: dict[str, Any] = {"item": "item", "rater": "rater", "label": "label"}
        if name in CROWDS and CROWDS[name][4]:
            k = CROWDS[name][3]
            kwargs.update(
                cant_solve=CROWD_CANT_SOLVE,
                categories=[f"c{j}" for j in range(k)] + [CROWD_CANT_SOLVE],
            )
        return frame, kwargs
    spec = REAL[name]
    path = SHARED_DATA / spec["file"]
    if spec.get("counts"):
        counts = np.load(path)
        if small:
            counts = counts[:SMALL_ITEMS]
        return counts, {"cant_solve": spec["cant_solve"]}
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, **spec["read"])
    item, rater, label = spec["columns"]
    frame = frame[[item, rater, label]]
    kwargs = {"item": item, "rater": rater, "label": label}
    if small:
        # the full set's labels: the first items may not use them all (the spam data's
        # first 60 items are all "No"), and a subset with one label is no annotation task
        labels = sorted(set(frame[label]) - {""})
        if spec["cant_solve"] is not None:
            labels = [x for x in labels if x != spec["cant_solve"]] + [spec["cant_solve"]]
        kwargs["categories"] = labels
        keep = frame[item].drop_duplicates().iloc[:SMALL_ITEMS]
        frame = frame[frame[item].isin(keep)]
    if spec["cant_solve"] is not None:
        kwargs["cant_solve"] = spec["cant_solve"]
    return frame, kwargs


def rows(data: list[str], models: list[str]) -> list[tuple[str, str]]:
    """The (data set, model) pairs that suit each other."""
    out = []
    for name in data:
        has_raters = name in STRESS or not REAL[name].get("counts")
        for model in models:
            if MODELS[model] and not has_raters:
                continue
            out.append((name, model))
    return out


def _worst(result: Any) -> dict[str, Any]:
    """Worst R-hat, smallest bulk/tail ESS and the variables they come from, over every
    stored posterior variable (ambppl.inference.convergence.check_convergence per variable)."""
    from ambppl.inference.convergence import ConvergenceWarning, check_convergence

    out: dict[str, Any] = {"r_hat": -np.inf, "ess_bulk": np.inf, "ess_tail": np.inf}
    saved = result.attrs.get("convergence")
    for name in result["posterior"].data_vars:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            record = check_convergence(result, [name])
        for key, worse in (("r_hat", np.greater), ("ess_bulk", np.less), ("ess_tail", np.less)):
            value = record.get(key)
            if value is not None and np.isfinite(value) and worse(value, out[key]):
                out[key], out[f"{key}_var"] = float(value), name
    if saved is not None:
        result.attrs["convergence"] = saved
    div = 0
    if "sample_stats" in result.children and "diverging" in result["sample_stats"]:
        div = int(result["sample_stats"]["diverging"].values.sum())
    out["divergences"] = div
    out["met"] = (
        out["r_hat"] <= 1.01 and out["ess_bulk"] >= 400 and out["ess_tail"] >= 400 and div == 0
    )
    return out


def run_row(name: str, model: str, small: bool) -> dict[str, Any]:
    """Fit one (data set, model) with the model's defaults in this process; the row."""
    import ambppl
    from ambppl.data.readers import read_annotations, read_long

    data, kwargs = _load(name, small)
    settings = dict(SMALL_NUTS) if small and model != "dirichlet_categorical" else {}
    if model == "hierarchical_dirichlet" and small:
        settings = {"draws": 500, "chains": 2}
    row: dict[str, Any] = {"data": name, "model": model, "small": small}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        # read in the timed block, as when fit read the data itself
        read = read_long(data, **kwargs) if MODELS[model] else read_annotations(data, **kwargs)
        result = ambppl.fit(read, model, random_seed=1, progressbar=False, **settings)
    row["wall_s"] = time.perf_counter() - start
    counts = result["observed_data"]["counts"]
    row["items"] = int(counts.sizes["item"])
    row["categories"] = int(counts.sizes["category"])
    row["answers"] = int(counts.values.sum())
    row["method"] = result.attrs.get("method") or result["posterior"].attrs.get("method")
    if row["method"] in ("exact", "empirical_bayes"):
        row.update(r_hat="exact", ess_bulk="exact", ess_tail="exact", divergences=0, met=True)
    else:
        row.update(_worst(result))
    if "log_prior" in result.children:
        table = ambppl.hyperprior_sensitivity(result)
        row["not_pinned_down"] = table.index[~table["pinned_down"]].tolist()
    try:
        row["elpd_loo"] = float(ambppl.loo(result, pointwise=False).elpd)
    except Exception as err:  # a row reports why, it never disappears
        row["elpd_loo"] = f"n/a: {type(err).__name__}: {str(err).splitlines()[0][:80]}"
    row["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return row


def run_isolated(name: str, model: str, small: bool, timeout: float) -> dict[str, Any]:
    """:func:`run_row` in a fresh process with a time limit."""
    cmd = [sys.executable, __file__, "--row", f"{name}:{model}"] + (["--small"] if small else [])
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"data": name, "model": model, "error": f"timeout after {timeout:.0f} s"}
    for line in done.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            return json.loads(line)
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {
        "data": name,
        "model": model,
        "error": f"exit {done.returncode}: {tail[:160]}",
        "wall_s": time.perf_counter() - start,
    }


def _fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        if not np.isfinite(value):
            return str(value)
        return f"{value:.{digits}f}" if abs(value) < 1e4 else f"{value:.4g}"
    return str(value)


def markdown(table: list[dict[str, Any]]) -> str:
    """The gallery as a Markdown table."""
    head = (
        "| data | model | items x answers | wall s | peak GB | worst R-hat (variable) "
        "| min bulk / tail ESS (variable) | div | standard | elpd_loo |"
    )
    lines = [head, "|" + "---|" * 10]
    for r in table:
        if "error" in r:
            lines.append(f"| {r['data']} | {r['model']} | | | | {r['error']} | | | not met | |")
            continue
        size = f"{r['items']} x {r['answers'] / r['items']:.1f}"
        if r["r_hat"] == "exact":
            rhat, ess = "exact draws", "exact draws"
        else:
            rhat = f"{r['r_hat']:.3f} ({r.get('r_hat_var', '')})"
            ess = (
                f"{r['ess_bulk']:.0f} / {r['ess_tail']:.0f} "
                f"({r.get('ess_bulk_var', '')}, {r.get('ess_tail_var', '')})"
            )
        met = "met" if r["met"] else "**not met**"
        if r.get("not_pinned_down"):
            met += f"; prior decides {', '.join(r['not_pinned_down'])}"
        lines.append(
            f"| {r['data']} | {r['model']} | {size} | {r['wall_s']:.1f} | "
            f"{r['peak_rss_gb']:.2f} | {rhat} | {ess} | {r['divergences']} | {met} | "
            f"{_fmt(r['elpd_loo'], 1)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="comma-separated data sets (default: all)")
    parser.add_argument("--models", help="comma-separated catalog models (default: all)")
    parser.add_argument("--small", action="store_true", help="60 items per set, short NUTS")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per row")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--row", help=argparse.SUPPRESS)  # DATA:MODEL, in this process
    args = parser.parse_args(argv)
    if args.row:
        name, model = args.row.split(":")
        print(json.dumps(run_row(name, model, args.small), default=str))
        return 0
    available = [n for n in REAL if (SHARED_DATA / REAL[n]["file"]).exists()]
    data = args.data.split(",") if args.data else [*available, *STRESS]
    models = args.models.split(",") if args.models else list(MODELS)
    unknown = [d for d in data if d not in REAL and d not in STRESS]
    unknown += [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown data sets or models: {unknown}")
    table = []
    for name, model in rows(data, models):
        row = run_isolated(name, model, args.small, args.timeout)
        table.append(row)
        print(
            f"{name} / {model}: {row.get('error') or _fmt(row.get('wall_s'), 1) + ' s'}",
            file=sys.stderr,
            flush=True,
        )
    print(markdown(table))
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1, default=str))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
