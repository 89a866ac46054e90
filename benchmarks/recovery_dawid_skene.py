"""Recovery of planted rater accuracies, prevalences and labels by ``dawid_skene``.

Each seed simulates one crowd with known parameters, *not* drawn from the model's prior
(that is what SBC checks: ``benchmarks/sbc_full.py --model dawid_skene``), and fits it with
``ambppl.fit(..., "dawid_skene")`` twice: ``method="nuts"`` (nutpie, 2 chains x (``--tune``
+ ``--draws``)) and ``method="laplace"`` (``--laplace-draws`` independent draws):

* ``--items`` items (default 300), each answered by ``--answers`` (default 5) distinct raters
  out of ``--raters`` (default 40), chosen with unequal activity (Gamma(2) weights);
* K = 3 classes with unequal prevalence ``pi = (0.55, 0.30, 0.15)`` and a fourth answer,
  can't-solve (C = 4);
* each rater's accuracy ``a_r ~ Uniform(0.5, 0.9)``, the same in every class (``theta_rkk =
  a_r``), the rest ``1 - a_r`` of each row split over the three other answers (can't-solve
  among them) by Dirichlet(1, 1, 1) weights, drawn per rater and class;
* ``--spammers`` raters (default 4) answer at random: every row uniform over the C answers
  (true accuracy 1 / C = 0.25).

Reported, pooled over ``--seeds`` seeds (default 12), coverages and label accuracies with the
binomial standard error ``sqrt(p (1 - p) / n)`` (the units of one data set share
parameters, so the real uncertainty is somewhat larger; per-seed values are printed too):

(a) coverage of the 94 % HDI (:func:`arviz.hdi`) of each rater's ``accuracy`` against the
    true ``sum_k pi_k theta_rkk`` (all raters; spammers; the others) and of each ``pi_k``;
(b) label accuracy: the class of largest posterior mean ``label_prob`` against the planted
    class ``z``; the Bayes rate (the class posterior under the planted parameters, the best
    any method can do on average); majority vote over the proper answers (ties and items
    answered only "can't solve" broken at random, seeded);
(c) calibration of the posterior mean ``label_prob`` against ``z``: a reliability table of
    the top-label confidence ``max_k p(z_i = k | y)`` (bins with edges 1/3, 0.5, 0.7, 0.8,
    0.9, 0.95, 0.99, 1: items, mean confidence, accuracy +- binomial se), its expected
    calibration error ``ECE = sum_b n_b / N |acc_b - conf_b|`` and the multi-class Brier
    score; the same for the class posterior under the planted parameters (calibrated by
    construction: its ECE is the noise floor of the bins at this N);
(d) Spearman correlation of the posterior mean accuracy with the true accuracy, per seed,
    and the mean error (posterior mean minus truth) and mean 94 % HDI width of the
    accuracies of the spammers and of the other raters;
(e) wall times of every fit (NUTS's include compilation).

Run: ``.venv/bin/python benchmarks/recovery_dawid_skene.py`` (11 minutes on 2 shared cores,
"Measured"); ``--small`` for a smoke run (60 items, 12 raters, 2 spammers, 1 seed, 300 + 300
draws); ``--methods nuts`` for one route.

Measured
--------
2026-11-27, ``nice -n 19 .venv/bin/python benchmarks/recovery_dawid_skene.py`` (defaults:
300 items x 5 answers, 40 raters of whom 4 spammers, 12 seeds from 20261127; NUTS by nutpie
2 x (1000 + 1000), Laplace 2000 draws) on the committed tree of 09e31e4; 2 shared cores,
other engineers' jobs running. Total 663 s; per fit NUTS 32 s (16-46 s, compilation
included), Laplace 23 s (4-38 s; the spread is the other jobs' load). No divergences; every
NUTS fit raised ``fit``'s ConvergenceWarning (2 chains miss its R-hat / ESS standard).
Pooled over the seeds, +- the binomial se; [range over the seeds]::

  quantity                          NUTS                        Laplace
  94 % HDI coverage of accuracy     0.846 +- 0.016 (n=480)      0.950 +- 0.010 (n=480)
                                    [0.775, 1.000]              [0.850, 1.000]
    spammers                        0.250 +- 0.062 (n=48)       0.938 +- 0.035 (n=48)
    the other raters                0.912 +- 0.014 (n=432)      0.951 +- 0.010 (n=432)
  94 % HDI coverage of pi           0.972 +- 0.027 (n=36)       0.889 +- 0.052 (n=36)
  label accuracy                    0.950 +- 0.004 (n=3600)     0.944 +- 0.004 (n=3600)
    Bayes rate (planted params)     0.970 +- 0.003
    majority vote                   0.915 +- 0.005
  ECE of label_prob (top label)     0.0039                      0.0195   (planted: 0.0069)
  Brier score                       0.0750                      0.0878   (planted: 0.0454)
  Spearman(accuracy), mean          0.854 [0.778, 0.921]        0.794 [0.673, 0.879]
  accuracy: mean error, spammers    +0.180                      +0.047
            the other raters        -0.016                      -0.078
  accuracy: mean HDI width, spam.   0.286                       0.345
            the other raters        0.247                       0.414
  posterior mean sigma_rater        0.35-1.18                   3.67-4.19

Laplace's column is of its former start, PyMC's initial point. Since 2026-12-07 it starts at
the ``map`` route's mode (``models/dawid_skene.py``, Laplace); rerun with ``--methods
laplace`` on the same 12 seeds it labelled 0.942 of the items right (0.944 from the former
start rerun on the same tree), ECE 0.020, Brier 0.0889 (0.0879), covered 0.950 of the
accuracies with HDIs 0.416 wide (0.414): its mode moved on 7 of the 12 seeds.

Reliability of the top-label confidence (pooled; items, mean confidence, accuracy +- se)::

  bin            NUTS                      Laplace                   planted parameters
  [0.333, 0.5)     29 0.459 0.483+-0.093      1 0.464 1.000+-0.000      7 0.469 0.571+-0.187
  [0.5, 0.7)      195 0.606 0.610+-0.035     87 0.605 0.494+-0.054    114 0.609 0.649+-0.045
  [0.7, 0.8)      122 0.756 0.746+-0.039    111 0.761 0.604+-0.046     87 0.754 0.736+-0.047
  [0.8, 0.9)      197 0.853 0.883+-0.023    266 0.860 0.789+-0.025    151 0.854 0.815+-0.032
  [0.9, 0.95)     237 0.928 0.928+-0.017    330 0.928 0.879+-0.018    160 0.928 0.969+-0.014
  [0.95, 0.99)    570 0.976 0.972+-0.007    884 0.976 0.980+-0.005    423 0.977 0.983+-0.006
  [0.99, 1]      2250 0.998 1.000+-0.000   1921 0.997 0.999+-0.001   2658 0.999 1.000+-0.000

What it shows. *Labels*: NUTS recovers 0.950 of the planted classes, 2 points below the
Bayes rate of the planted parameters (0.970) and 3.5 above majority vote (0.915); Laplace
0.944. NUTS's ``label_prob`` is calibrated (below 0.99 every bin's accuracy within 1.3 se of
its confidence, the top bin 1.000 at 0.998; ECE 0.004, below the planted parameters' own
0.007, which is the noise of the bins at this N); Laplace's is overconfident between 0.5 and
0.95 (accuracy 0.49 at confidence 0.61, 0.60 at 0.76, 0.79 at 0.86, 0.88 at 0.93; ECE
0.020).

*Raters*: NUTS ranks the raters well (Spearman 0.85) and covers the accuracies of the
ordinary raters nearly at the nominal rate (0.912 +- 0.014, about 2 se below 0.94; mean
error -0.016; with ``--spammers 0 --seeds 6``: 0.921 +- 0.017, n=240, mean error -0.013, 428
s), but not those of the spammers (12 of 48; posterior mean 0.18 above their 0.25): the
model's raters are a normal population on the logit scale (``e_rk ~ N(0, 1)`` times
``sigma_rater``, posterior mean 0.35-1.18 here), and a rater answering at random lies
several ``sigma`` from the typical rater, so partial pooling pulls its accuracy towards the
crowd's. This is the model, not the computation (SBC of the same program passes,
``benchmarks/sbc_full.py``, "Measured"); a heavier-tailed or mixture rater population would
be needed to cover such outliers. Laplace covers the accuracies at 0.950, spammers included,
only because its mode puts ``sigma_rater`` at 3.7-4.2 (no pooling to speak of): its
intervals are 1.7 times as wide for ordinary raters (0.414 against 0.247), centred 0.08 too
low, and it ranks the raters worse (Spearman 0.79); its ``pi`` coverage is 0.889 (two seeds
with 1 of 3 covered).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from crowds import brier_scores, class_posterior, confusion_matrix, draw_answers

import ambppl
from ambppl.data.readers import read_long

PROB = 0.94
CLASSES = ["c1", "c2", "c3"]
CATEGORIES = [*CLASSES, "cant_solve"]
PI = np.array([0.55, 0.30, 0.15])
#: Edges of the reliability bins of the top-label confidence (K = 3: at least 1/3).
BIN_EDGES = np.array([1 / 3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0])
METHODS = ("nuts", "laplace")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--raters", type=int, default=40)
    parser.add_argument("--answers", type=int, default=5, help="answers per item")
    parser.add_argument("--spammers", type=int, default=4, help="raters answering at random")
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--seed", type=int, default=20261127, help="first seed")
    parser.add_argument("--draws", type=int, default=1000, help="NUTS draws per chain")
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--laplace-draws", type=int, default=2000)
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated")
    parser.add_argument("--small", action="store_true", help="quick smoke run")
    args = parser.parse_args(argv)
    args.methods = args.methods.split(",")
    unknown = sorted(set(args.methods) - set(METHODS))
    if unknown:
        parser.error(f"--methods takes {', '.join(METHODS)}, but got {', '.join(unknown)}")
    if args.small:
        args.items, args.raters, args.spammers = 60, 12, 2
        args.seeds, args.draws, args.tune, args.laplace_draws = 1, 300, 300, 300
    return args


def simulate(rng: np.random.Generator, args: argparse.Namespace) -> dict:
    """One crowd with planted prevalences and confusion matrices, and its truths.

    Parameters
    ----------
    rng : numpy.random.Generator
        The seed's generator (everything random is drawn from it).
    args : argparse.Namespace
        The design (items, raters, answers, spammers).

    Returns
    -------
    dict
        ``frame`` (the long answers table), ``z`` (true class per item), ``theta`` (R x K x
        C), ``accuracy`` (R), ``spammer`` (R, bool), ``item`` / ``rater`` / ``y`` (positions
        per answer), ``item_ids``, ``rater_ids``.
    """
    n, r, k, c = args.items, args.raters, len(CLASSES), len(CATEGORIES)
    acc = rng.uniform(0.5, 0.9, size=r)
    theta = np.empty((r, k, c))
    for j in range(r):
        theta[j] = confusion_matrix(rng, acc[j], k, c)
    spammer = np.zeros(r, dtype=bool)
    spammer[rng.choice(r, args.spammers, replace=False)] = True
    theta[spammer] = 1.0 / c
    weights = rng.gamma(2.0, size=r)
    rater = np.concatenate(
        [rng.choice(r, args.answers, replace=False, p=weights / weights.sum()) for _ in range(n)]
    )
    item = np.repeat(np.arange(n), args.answers)
    z = rng.choice(k, size=n, p=PI)
    y = draw_answers(rng, theta, z, item, rater)
    item_ids = np.array([f"t{i:04d}" for i in range(n)])
    rater_ids = np.array([f"w{j:03d}" for j in range(r)])
    frame = pd.DataFrame(
        {"task": item_ids[item], "worker": rater_ids[rater], "label": np.array(CATEGORIES)[y]}
    )
    return {
        "frame": frame,
        "z": z,
        "theta": theta,
        "accuracy": theta[:, np.arange(k), np.arange(k)] @ PI,
        "spammer": spammer,
        "item": item,
        "rater": rater,
        "y": y,
        "item_ids": item_ids,
        "rater_ids": rater_ids,
    }


def oracle_posterior(data: dict) -> np.ndarray:
    """The class posterior of every item under the planted parameters (N x K)."""
    n_items = len(data["item_ids"])
    return class_posterior(PI, data["theta"], data["item"], data["rater"], data["y"], n_items)


def majority_vote(data: dict, rng: np.random.Generator) -> np.ndarray:
    """The most frequent proper answer per item, ties (and no proper answer) at random."""
    k = len(CLASSES)
    proper = data["y"] < k
    counts = np.zeros((len(data["item_ids"]), k))
    np.add.at(counts, (data["item"][proper], data["y"][proper]), 1.0)
    top = counts == counts.max(axis=1, keepdims=True)
    return np.array([rng.choice(np.flatnonzero(row)) for row in top])


def _hdi(draws: np.ndarray, prob: float = PROB) -> np.ndarray:
    """Lower and upper ends (2, ...) of the HDI (:func:`arviz.hdi`) of draws (axis 0)."""
    import arviz as az
    import xarray as xr

    dims = ("sample", *(f"d{j}" for j in range(np.ndim(draws) - 1)))
    hdi = az.hdi(xr.DataArray(draws, dims=dims), prob=prob, dim=["sample"])
    return np.stack([hdi.sel(ci_bound="lower").values, hdi.sel(ci_bound="upper").values])


def hdi_covers(draws: np.ndarray, truth: np.ndarray, prob: float = PROB) -> np.ndarray:
    """Whether each truth lies in the HDI (:func:`arviz.hdi`) of its draws (axis 0)."""
    lower, upper = _hdi(draws, prob)
    return (truth >= lower) & (truth <= upper)


def calibration(prob: np.ndarray, z: np.ndarray) -> dict:
    """Top-label reliability bins (:data:`BIN_EDGES`), ECE and Brier score of ``prob``.

    Parameters
    ----------
    prob : numpy.ndarray, shape (N, K)
        Class probabilities per item.
    z : numpy.ndarray of int, shape (N,)
        True classes.

    Returns
    -------
    dict
        ``n``, ``confidence`` (sum per bin), ``correct`` (sum per bin), ``ece``, ``brier``.
    """
    conf = prob.max(axis=1)
    correct = (prob.argmax(axis=1) == z).astype(np.float64)
    which = np.clip(np.searchsorted(BIN_EDGES, conf, side="right") - 1, 0, BIN_EDGES.size - 2)
    nb = BIN_EDGES.size - 1
    n = np.bincount(which, minlength=nb).astype(np.float64)
    conf_sum = np.bincount(which, weights=conf, minlength=nb)
    correct_sum = np.bincount(which, weights=correct, minlength=nb)
    return {
        "n": n,
        "confidence": conf_sum,
        "correct": correct_sum,
        "ece": _ece(n, conf_sum, correct_sum),
        "brier": float(brier_scores(prob, z).mean()),
    }


def _ece(n: np.ndarray, conf_sum: np.ndarray, correct_sum: np.ndarray) -> float:
    return float(np.abs(correct_sum - conf_sum).sum() / n.sum())


def _draws(post, name: str, dims: tuple[str, ...]) -> np.ndarray:
    values = post[name].transpose("chain", "draw", *dims).values
    return values.reshape(-1, *values.shape[2:])


def fit_one(data: dict, method: str, seed: int, args: argparse.Namespace) -> dict:
    """Fit one crowd by one method and measure what the docstring lists."""
    from scipy.stats import spearmanr

    answers = read_long(data["frame"], cant_solve="cant_solve", categories=CATEGORIES)
    options: dict = {"draws": args.laplace_draws, "chains": 1}
    if method == "nuts":
        options = {"draws": args.draws, "chains": 2, "sample_kwargs": {"tune": args.tune}}
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ambppl.fit(
            answers,
            "dawid_skene",
            method=method,
            random_seed=seed,
            progressbar=False,
            log_likelihood=False,
            **options,
        )
    seconds = time.perf_counter() - started
    post = result["posterior"]
    assert [str(x) for x in post["class"].values] == CLASSES
    raters = pd.Index(data["rater_ids"]).get_indexer([str(x) for x in post["rater"].values])
    items = pd.Index(data["item_ids"]).get_indexer([str(x) for x in post["item"].values])
    acc_draws = _draws(post, "accuracy", ("rater",))
    true_acc = data["accuracy"][raters]
    acc_cov = hdi_covers(acc_draws, true_acc)
    width = np.diff(_hdi(acc_draws), axis=0)[0]
    error = acc_draws.mean(axis=0) - true_acc
    pi_cov = hdi_covers(_draws(post, "pi", ("class",)), PI)
    label_prob = post["label_prob"].mean(("chain", "draw")).transpose("item", "class").values
    z = data["z"][items]
    spam = data["spammer"][raters]
    diverging = (
        int(result["sample_stats"]["diverging"].sum()) if "sample_stats" in result.children else 0
    )
    return {
        "seconds": seconds,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
        "diverging": diverging,
        "acc": acc_cov,
        "acc_spam": acc_cov[spam],
        "acc_rest": acc_cov[~spam],
        "pi": pi_cov,
        "labels": label_prob.argmax(axis=1) == z,
        "calibration": calibration(label_prob, z),
        "spearman": float(spearmanr(acc_draws.mean(axis=0), true_acc).statistic),
        "error_spam": error[spam],
        "error_rest": error[~spam],
        "width_spam": width[spam],
        "width_rest": width[~spam],
        "sigma_rater": post["sigma_rater"].mean(("chain", "draw")).values.round(2).tolist(),
    }


def run_seed(seed: int, args: argparse.Namespace) -> dict:
    """Simulate one crowd and fit it by both methods."""
    rng = np.random.default_rng(seed)
    data = simulate(rng, args)
    oracle = oracle_posterior(data)
    out = {
        "seed": seed,
        "bayes": oracle.argmax(axis=1) == data["z"],
        "majority": majority_vote(data, rng) == data["z"],
        "oracle_calibration": calibration(oracle, data["z"]),
        "n_raters": int(np.unique(data["rater"]).size),
    }
    for method in args.methods:
        out[method] = fit_one(data, method, seed, args)
    return out


def _rate(hits: np.ndarray) -> str:
    n = hits.size
    if n == 0:
        return "n/a"
    p = float(hits.mean())
    return f"{p:.3f} +- {np.sqrt(p * (1 - p) / n):.3f} (n={n})"


def _pooled_calibration(cals: list[dict]) -> dict:
    total = {key: sum(c[key] for c in cals) for key in ("n", "confidence", "correct")}
    total["ece"] = _ece(total["n"], total["confidence"], total["correct"])
    total["brier"] = float(np.mean([c["brier"] for c in cals]))
    return total


def _print_reliability(label: str, cal: dict) -> None:
    print(f"\nreliability of the top-label confidence, {label} (pooled over seeds)")
    print(f"  {'bin':<13} {'items':>6} {'mean conf':>10} {'accuracy +- se':>18}")
    for b in range(BIN_EDGES.size - 1):
        n = cal["n"][b]
        lo, hi = BIN_EDGES[b], BIN_EDGES[b + 1]
        name = f"[{lo:.3g}, {hi:.3g}{']' if b == BIN_EDGES.size - 2 else ')'}"
        if n == 0:
            print(f"  {name:<13} {0:>6}")
            continue
        acc = cal["correct"][b] / n
        se = np.sqrt(acc * (1 - acc) / n)
        print(
            f"  {name:<13} {int(n):>6} {cal['confidence'][b] / n:>10.3f} "
            f"{f'{acc:.3f} +- {se:.3f}':>18}"
        )
    print(f"  ECE {cal['ece']:.4f}, Brier {cal['brier']:.4f}")


def main(argv: list[str] | None = None) -> int:
    """Run the study and print its tables."""
    args = _parse(argv)
    started = time.perf_counter()
    runs = []
    for j in range(args.seeds):
        out = run_seed(args.seed + j, args)
        runs.append(out)
        for method in args.methods:
            m = out[method]
            print(
                f"seed {out['seed']} {method}: fit {m['seconds']:.0f} s, divergences "
                f"{m['diverging']}, warnings {m['warnings'] or 'none'}; coverage accuracy "
                f"{m['acc'].mean():.3f}, pi {m['pi'].mean():.3f}; labels {m['labels'].mean():.3f}"
                f" (Bayes {out['bayes'].mean():.3f}, majority {out['majority'].mean():.3f}); "
                f"ECE {m['calibration']['ece']:.3f}; Spearman {m['spearman']:.3f}; "
                f"posterior mean sigma_rater {m['sigma_rater']}",
                flush=True,
            )
    print(
        f"\ndawid_skene recovery: {args.items} items x {args.answers} answers, {args.raters} "
        f"raters ({args.spammers} spammers), K = 3 + can't-solve, pi = {PI.tolist()}, "
        f"{args.seeds} seeds from {args.seed}; NUTS 2 x ({args.tune} + {args.draws}), "
        f"Laplace {args.laplace_draws} draws; {PROB:.0%} HDI\n"
    )
    print(f"{'quantity':<30} {'method':<8} {'pooled +- binomial se':<28} per seed")
    for key, label in (
        ("acc", "coverage accuracy, all raters"),
        ("acc_spam", "  spammers"),
        ("acc_rest", "  the other raters"),
        ("pi", "coverage pi"),
        ("labels", "label accuracy"),
    ):
        for method in args.methods:
            hits = np.concatenate([r[method][key] for r in runs])
            per_seed = " ".join(f"{r[method][key].mean():.3f}" for r in runs)
            print(f"{label:<30} {method:<8} {_rate(hits):<28} {per_seed}")
    for key, label in (("bayes", "label accuracy, Bayes rate"), ("majority", "majority vote")):
        hits = np.concatenate([r[key] for r in runs])
        per_seed = " ".join(f"{r[key].mean():.3f}" for r in runs)
        print(f"{label:<30} {'':<8} {_rate(hits):<28} {per_seed}")
    for method in args.methods:
        rho = [r[method]["spearman"] for r in runs]
        print(
            f"{'Spearman(accuracy)':<30} {method:<8} {f'mean {np.mean(rho):.3f}':<28} "
            + " ".join(f"{x:.3f}" for x in rho)
        )
    for key, label in (
        ("error_spam", "accuracy error, spammers"),
        ("error_rest", "  the other raters"),
        ("width_spam", "HDI width accuracy, spammers"),
        ("width_rest", "  the other raters"),
    ):
        if not any(r[args.methods[0]][key].size for r in runs):  # e.g. --spammers 0
            continue
        for method in args.methods:
            per_seed = " ".join(f"{r[method][key].mean():.3f}" for r in runs)
            pooled = np.concatenate([r[method][key] for r in runs]).mean()
            sign = "+" if key.startswith("error") else ""
            print(f"{label:<30} {method:<8} {f'mean {pooled:{sign}.3f}':<28} {per_seed}")
    for method in args.methods:
        secs = [r[method]["seconds"] for r in runs]
        print(
            f"{'wall time per fit (s)':<30} {method:<8} {f'mean {np.mean(secs):.0f}':<28} "
            + " ".join(f"{x:.0f}" for x in secs)
        )
    for method in args.methods:
        _print_reliability(method, _pooled_calibration([r[method]["calibration"] for r in runs]))
    _print_reliability(
        "planted parameters (oracle)", _pooled_calibration([r["oracle_calibration"] for r in runs])
    )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
