"""Leave-one-item-out across the catalog on real data: every model on a common footing.

Every catalog model writes the same pointwise log likelihood, ``log p(answers_i | theta)``:
the probability of item ``i``'s answer *sequence* with the item's own parameter integrated
or summed out (its ``q_i`` for the Dirichlet models, its latent logits for
``rater_effects``, integrated by ``with_integrated_log_likelihood`` of its model file as
``fit`` stores it given ``eta_i``; its true class for ``dawid_skene``; no multinomial
coefficient), so
:func:`ambppl.compare` ranks them on one scale, ``elpd_loo`` in nats. The models of counts
get the counts of the same answers table the models of answers get (``as_answers``), so
every fit covers the same items in the same order.

Per data set: each model with its defaults (its first method; ``dawid_skene`` and
``rater_effects`` with NUTS), then ``ambppl.compare``'s table (elpd_loo, p_loo, elpd
difference and its standard error, Pareto-k warning) and each fit's wall time and
convergence record.

Run::

    .venv/bin/python benchmarks/loo_models.py          # face, anesthesia, barzan; four models
    .venv/bin/python benchmarks/loo_models.py --data dog_zhou2012 \
        --models dawid_skene,hierarchical_dirichlet
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

#: data set -> (file, read_csv keywords, item, rater, label columns)
DATA = {
    "face_sentiment": ("answer.csv", {}, "question", "worker", "answer"),
    "dog_zhou2012": ("answer.csv", {}, "question", "worker", "answer"),
    "anesthesia_ds1979": ("anesthesia_long.csv", {}, None, None, None),
    "barzan_mozafari": (
        "labels.txt",
        {"sep": "\t", "header": None, "names": ["worker", "question", "answer"]},
        "question",
        "worker",
        "answer",
    ),
}

MODELS = ("dirichlet_categorical", "hierarchical_dirichlet", "rater_effects", "dawid_skene")


def answers_of(name: str) -> Any:
    import pandas as pd

    from ambppl.data.readers import read_long

    file, read, item, rater, label = DATA[name]
    frame = pd.read_csv(SHARED / name / file, dtype=str, keep_default_na=False, **read)
    if item is None:  # anesthesia: columns named by the file
        item, rater, label = (
            next(c for c in frame.columns if c.lower() in names)
            for names in (("item", "patient", "task"), ("rater", "worker"), ("rating", "label"))
        )
    return read_long(frame, item=item, rater=rater, label=label)


def run(name: str, models: list[str]) -> dict[str, Any]:
    import ambppl
    from ambppl.data import as_answers

    answers, counts = as_answers(answers_of(name))
    fits, rows = {}, []
    for model in models:
        long = ambppl.get_model(model).info["data"] == "long"
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
            fits[model] = ambppl.fit(answers if long else counts, model, random_seed=1)
        row = {"data": name, "model": model, "method": fits[model].attrs["method"]}
        row["wall_s"] = round(time.perf_counter() - start, 1)
        module = ambppl.get_model(model).module
        if getattr(module, "LOG_LIKELIHOOD", "integrated") == "conditional":
            # rater_effects: its log likelihood given eta_i, integrated out (a thinned copy)
            start = time.perf_counter()
            fits[model] = module.with_integrated_log_likelihood(fits[model], answers)
            row["integrate_s"] = round(time.perf_counter() - start, 1)
        if "convergence" in fits[model].attrs:
            record = json.loads(fits[model].attrs["convergence"])
            row.update({k: record.get(k) for k in ("r_hat", "ess_bulk", "divergences")})
        rows.append(row)
        print(json.dumps(row), flush=True)
    with warnings.catch_warnings():  # counted below instead: items with Pareto k > 0.7
        warnings.simplefilter("ignore", UserWarning)
        table = ambppl.compare(fits)
        for row in rows:
            k = np.asarray(ambppl.loo(fits[row["model"]]).pareto_k)
            row["pareto_k_above_0.7"] = int((k > 0.7).sum())
    print(f"\n{name}: {len(counts)} items, {len(answers)} answers")
    shown = [c for c in ("rank", "elpd", "p", "elpd_diff", "dse", "se", "weight") if c in table]
    table = table[shown].assign(k_above_07={r["model"]: r["pareto_k_above_0.7"] for r in rows})
    print(table.round(1).to_string())
    return {"fits": rows, "compare": table.reset_index().to_dict("records")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="face_sentiment,anesthesia_ds1979,barzan_mozafari")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    out = {name: run(name, args.models.split(",")) for name in args.data.split(",")}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
