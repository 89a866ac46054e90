"""False alarms and power of ``check_predictive(kind="mixed")`` on ``dawid_skene`` fits.

Null (``--design null``): answers simulated from ``dawid_skene`` itself (the model file's
``simulate_answers``): ``--items`` items, each answered by ``--per`` distinct raters of
``--raters``, ``--classes`` classes plus can't-solve; per seed ``pi ~ Dirichlet(2)`` and each
rater's row ``k`` a Dirichlet with 16 on ``k``, 3 on the other classes and 1.5 on
can't-solve. Misfit (``--design ambiguous``): the same, but each item with probability
``--ambiguous`` is ambiguous in itself: each of its answers comes from its own class, 50/50
between two random classes, through the answering rater's confusion row (a per-item
mixture, not one true class per item).

Each seed is fitted (``--method map`` by default) and checked with 1000 replicates at
``alpha = 0.01``; one JSON line per seed, then the rejection rate with its binomial standard
error, the rows flagged and the mean and sd of each row's ``z`` over seeds. The figures of
``check_predictive``'s Notes (2026-12-08, 2 shared cores).

Run: ``.venv/bin/python benchmarks/calibration_dawid_skene_predictive.py --design null
--seeds 400 [--classes 2] [--per 4 --raters 6] [--method map]`` (about 0.5 s a seed with
``map``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd

import ambppl
from ambppl.data import read_long
from ambppl.inference.catalog import get_model
from ambppl.validation.predictive import check_predictive


def simulate(seed: int, args: argparse.Namespace) -> pd.DataFrame:
    """One data set of answers (read as ``read_long`` reads them) for ``seed``."""
    ds = get_model("dawid_skene").module
    rng = np.random.default_rng(seed)
    n, n_raters, k, per = args.items, args.raters, args.classes, args.per
    item = np.repeat(np.arange(n), per)
    rater = np.concatenate([rng.permutation(n_raters)[:per] for _ in range(n)])
    pi = rng.dirichlet(2.0 * np.ones(k))
    theta = np.empty((n_raters, k, k + 1))
    for r in range(n_raters):
        for c in range(k):
            conc = np.full(k + 1, 3.0)
            conc[c] = 16.0
            conc[k] = 1.5
            theta[r, c] = rng.dirichlet(conc)
    y = ds.simulate_answers(pi, theta, item, rater, rng=rng)
    if args.design == "ambiguous":
        ambiguous = rng.random(n) < args.ambiguous
        pairs = np.array([rng.permutation(k)[:2] for _ in range(n)])
        z = pairs[item, rng.integers(0, 2, size=item.size)]
        rows = theta[rater, z]
        y_amb = (rng.random((item.size, 1)) > np.cumsum(rows, axis=1)).sum(axis=1)
        y = np.where(ambiguous[item], np.minimum(y_amb, k), y)
    cats = [f"c{c}" for c in range(k)] + ["cs"]
    frame = pd.DataFrame(
        {
            "task": [f"t{i:03d}" for i in item],
            "worker": [f"w{r}" for r in rater],
            "label": pd.Categorical([cats[c] for c in y], categories=cats),
        }
    )
    return read_long(frame, cant_solve="cs", categories=cats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=["null", "ambiguous"], default="null")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--method", default="map")
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--raters", type=int, default=6)
    parser.add_argument("--per", type=int, default=4)
    parser.add_argument("--ambiguous", type=float, default=0.3)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--chains", type=int, default=2)
    args = parser.parse_args()
    flags, flagged_rows, zs, start = [], {}, [], time.perf_counter()
    table = None
    for seed in range(args.first, args.first + args.seeds):
        answers = simulate(seed, args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if args.method == "map":
                result = ambppl.fit(answers, "dawid_skene", method="map")
            else:
                result = ambppl.fit(
                    answers,
                    "dawid_skene",
                    method=args.method,
                    draws=args.draws,
                    chains=args.chains,
                    random_seed=seed,
                    progressbar=False,
                )
        check = check_predictive(result, alpha=0.01, replicates=1000, random_seed=seed)
        table = check.table
        flags.append(not check.passed)
        zs.append(table["z"].to_numpy())
        line = {"seed": seed, "flagged": not check.passed, "z": np.round(zs[-1], 2).tolist()}
        print(json.dumps(line), flush=True)
        for _, row in table[table["flagged"]].iterrows():
            key = f"{row['summary']} {row['statistic']}"
            flagged_rows[key] = flagged_rows.get(key, 0) + 1
    rate = float(np.mean(flags))
    names = (table["summary"] + " " + table["statistic"]).tolist()
    summary = {
        "args": vars(args),
        "rejections": int(np.sum(flags)),
        "n": len(flags),
        "rate": round(rate, 4),
        "se": round(float(np.sqrt(rate * (1 - rate) / len(flags))), 4),
        "rows_flagged": flagged_rows,
        "mean_z": dict(zip(names, np.round(np.mean(zs, axis=0), 2).tolist(), strict=True)),
        "sd_z": dict(zip(names, np.round(np.std(zs, axis=0), 2).tolist(), strict=True)),
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
