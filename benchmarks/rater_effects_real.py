"""``rater_effects`` with its defaults on real and simulated designs: does it converge, how fast?

One row per data set: ``ambppl.fit(read_long(frame, item=..., rater=..., label=...),
"rater_effects")`` with the model's defaults (reading, compilation, deterministics, log
likelihood and fit's own convergence check included in the wall time), then per stored
posterior variable the R-hat and the bulk and tail ESS
(:func:`ambppl.inference.diagnostics.diagnose`, ArviZ's algorithms), the divergences, the
smallest E-BFMI over the chains, and whether the convergence standard (R-hat <= 1.01, bulk
and tail ESS >= 400, no divergences) is met, and the peak resident memory. Each row runs in
its own Python process, one at a time.

Data: the public sets in ``../shared/data`` (its README) that have rater ids, read as
``benchmarks/gallery.py`` reads them, and simulated designs: ``sparse`` (600 items with 1-5
answers, a fifth with one answer, so items answered by one rater; 150 raters with one
answer; one rater with half of all answers; answers from the model itself) and the stress
designs of
``benchmarks/gallery.py`` (``two_classes``, ``three_answers``, ``dominant_rater``,
``near_identical``, ``many_raters``, and the simulated crowds ``crowd_two_classes``,
``crowd_cant_solve``, ``crowd_dense``, ``crowd_few_answers``: answers from a Dawid-Skene
process).

Run (2 cores)::

    .venv/bin/python benchmarks/rater_effects_real.py                       # all
    .venv/bin/python benchmarks/rater_effects_real.py --data anesthesia_ds1979,sparse
    .venv/bin/python benchmarks/rater_effects_real.py --json rows.json

Options: ``--seed`` (default 1), ``--timeout`` per row in seconds (default 1800),
``--set key=json`` passes a model parameter, ``draws``, ``chains``, ``tune``,
``target_accept`` or ``nuts`` (nutpie's options, e.g. ``nuts={"adaptation": "low_rank"}``) to
every fit (to try other settings; the table is about the defaults).
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

#: The public sets with rater ids (read as ``benchmarks/gallery.py`` reads them).
REAL = (
    "anesthesia_ds1979",
    "barzan_mozafari",
    "face_sentiment",
    "dog_zhou2012",
    "cf_weather_sentiment",
    "jn_product",
    "hitspam_crowdflower",
)

SIMULATED = (
    "sparse",
    "two_classes",
    "three_answers",
    "many_raters",
    "dominant_rater",
    "near_identical",
    "crowd_two_classes",
    "crowd_cant_solve",
    "crowd_dense",
    "crowd_few_answers",
)


def sparse_design(seed: int = 5, n_items: int = 600) -> Any:
    """Answers of the model itself on a sparse design (3 categories): items with 1-5 answers
    (a fifth with a single answer), half of all answers from rater "0", 150 raters with one
    answer, the rest from 60 raters with Zipf-distributed counts."""
    import pandas as pd

    from ambppl.inference.catalog import get_model

    rng = np.random.default_rng(seed)
    per_item = rng.integers(1, 6, size=n_items)
    item = np.repeat(np.arange(n_items), per_item)
    rater = np.zeros(len(item), dtype=np.int64)
    others = np.flatnonzero(rng.random(len(item)) >= 0.5)
    rng.shuffle(others)
    rater[others[:150]] = 1 + np.arange(150)
    rater[others[150:]] = 151 + np.minimum(rng.zipf(1.6, size=len(others) - 150) - 1, 59)
    eta = np.array([0.8, 0.0, -0.8]) + 1.2 * rng.normal(size=(n_items, 3))
    b = 0.7 * rng.normal(size=(int(rater.max()) + 1, 3))
    y = get_model("rater_effects").module.simulate_answers(eta, b, item, rater, rng=rng)
    return pd.DataFrame(
        {"item": item.astype(str), "rater": rater.astype(str), "label": np.array(list("abc"))[y]}
    )


def load(name: str) -> tuple[Any, dict[str, Any]]:
    """The answers (a long frame) and fit's reading keywords: ``sparse`` here, every other
    data set as ``benchmarks/gallery.py`` reads it."""
    if name == "sparse":
        return sparse_design(), {"item": "item", "rater": "rater", "label": "label"}
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gallery import _load

    return _load(name, small=False)


def run_row(name: str, seed: int, settings: dict[str, Any]) -> dict[str, Any]:
    """Fit one data set with the defaults (plus ``settings``) in this process; the row."""
    import ambppl
    from ambppl.data.readers import read_long
    from ambppl.inference.diagnostics import diagnose

    frame, kwargs = load(name)
    options = dict(settings)
    for key in ("tune", "target_accept", "nuts"):  # pymc.sample's (nuts: nutpie's options)
        if key in options:
            options.setdefault("sample_kwargs", {})[key] = options.pop(key)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        answers = read_long(frame, **kwargs)  # in the timed block, as when fit read it
        result = ambppl.fit(answers, "rater_effects", random_seed=seed, **options)
    wall = time.perf_counter() - start
    post = result["posterior"]
    counts = result["observed_data"]["counts"]
    row: dict[str, Any] = {
        "data": name,
        "answers": int(counts.values.sum()),
        "items": int(counts.sizes["item"]),
        "raters": int(post.sizes["rater"]),
        "categories": int(counts.sizes["category"]),
        "draws": f"{post.sizes['chain']} x {post.sizes['draw']}",
        "wall_s": round(wall, 1),
        "load": round(load_before, 1),
    }
    worst = {"r_hat": (-np.inf, ""), "ess_bulk": (np.inf, ""), "ess_tail": (np.inf, "")}
    per_variable = {}
    for var in post.data_vars:
        diag = diagnose(post[var].transpose("chain", "draw", ...).values)
        values = {
            "r_hat": float(np.nanmax(diag["r_hat"])),
            "ess_bulk": float(np.nanmin(diag["ess_bulk"])),
            "ess_tail": float(np.nanmin(diag["ess_tail"])),
        }
        per_variable[str(var)] = {k: round(v, 4 if k == "r_hat" else 0) for k, v in values.items()}
        for key, value in values.items():
            worse = value > worst[key][0] if key == "r_hat" else value < worst[key][0]
            if worse:
                worst[key] = (value, str(var))
    stats = result["sample_stats"]
    energy = stats["energy"].transpose("chain", "draw").values
    ebfmi = (np.diff(energy, axis=1) ** 2).mean(axis=1) / energy.var(axis=1)
    row.update(
        r_hat=round(worst["r_hat"][0], 4),
        r_hat_var=worst["r_hat"][1],
        ess_bulk=round(worst["ess_bulk"][0]),
        ess_bulk_var=worst["ess_bulk"][1],
        ess_tail=round(worst["ess_tail"][0]),
        ess_tail_var=worst["ess_tail"][1],
        divergences=int(stats["diverging"].values.sum()),
        ebfmi_min=round(float(ebfmi.min()), 2),
    )
    row["met"] = bool(
        row["r_hat"] <= 1.01
        and row["ess_bulk"] >= 400
        and row["ess_tail"] >= 400
        and row["divergences"] == 0
    )
    row["peak_rss_gb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
    row["variables"] = per_variable
    # per chain: the scales' posterior means (chains in different modes show here)
    row["chain_means"] = {
        name: np.round(post[name].mean("draw").values, 2).tolist()
        for name in ("sigma_item", "sigma_rater")
    }
    return row


def run_isolated(name: str, seed: int, settings: list[str], timeout: float) -> dict[str, Any]:
    """:func:`run_row` in a fresh process with a time limit."""
    cmd = [sys.executable, __file__, "--row", name, "--seed", str(seed)]
    for item in settings:
        cmd += ["--set", item]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"data": name, "error": f"timeout after {timeout:.0f} s"}
    for line in done.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            return json.loads(line)
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return {
        "data": name,
        "error": f"exit {done.returncode} after {time.perf_counter() - start:.0f} s: {tail[0]}",
    }


def _parse_settings(items: list[str]) -> dict[str, Any]:
    from settings import setting

    return dict(map(setting, items))


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'data':22s} {'answers':>7s} {'items':>5s} {'raters':>6s} {'K':>2s} {'wall s':>7s} "
        f"{'R-hat':>7s} {'(var)':14s} {'bulk':>5s} {'(var)':14s} {'tail':>5s} {'div':>4s} "
        f"{'E-BFMI':>6s} {'GB':>5s} met"
    )
    print(head)
    for r in rows:
        if "error" in r:
            print(f"{r['data']:22s} {r['error']}")
            continue
        print(
            f"{r['data']:22s} {r['answers']:7d} {r['items']:5d} {r['raters']:6d} "
            f"{r['categories']:2d} {r['wall_s']:7.1f} {r['r_hat']:7.4f} {r['r_hat_var']:14s} "
            f"{r['ess_bulk']:5d} {r['ess_bulk_var']:14s} {r['ess_tail']:5d} "
            f"{r['divergences']:4d} {r['ebfmi_min']:6.2f} {r.get('peak_rss_gb', 0):5.1f} "
            f"{'yes' if r['met'] else 'NO'}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=",".join([*REAL, *SIMULATED]))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=JSON")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    parser.add_argument("--row", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.row:
        print(json.dumps(run_row(args.row, args.seed, _parse_settings(args.set))), flush=True)
        return
    rows = []
    for name in args.data.split(","):
        row = run_isolated(name, args.seed, args.set, args.timeout)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
