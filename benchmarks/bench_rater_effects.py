"""Time to the convergence standard of ``rater_effects`` per NUTS sampler, on simulated answers.

Simulates ``--items`` items x ``--per-item`` answers (each item answered by that many raters
drawn at random from ``--raters``; ``--categories`` categories, the last one "can't solve"),
then fits ``ambppl.fit(answers, "rater_effects", sampler=...)`` -- the user's path, model
compilation, deterministics, log likelihood and convergence check included -- once per
sampler, and prints per sampler the wall time, the worst R-hat, the smallest bulk and tail
ESS over every stored posterior variable, the divergences and whether the standard
(R-hat <= 1.01, ESS >= 400, no divergences) was met, with the machine load before each fit.

``--samplers`` defaults to nutpie, PyMC's NUTS and numpyro, numpyro only where it is
installed; ``benchmarks/run.py`` passes ``--samplers nutpie``. nutpie is a dependency of
ambppl, so ``.venv`` has it; numpyro (and JAX) are in a separate virtualenv, ``.venv-bench``
(git-ignored), made with
``python3 -m venv .venv-bench && .venv-bench/bin/pip install -e ".[numpyro]"``.
Run (2 cores)::

    .venv/bin/python benchmarks/bench_rater_effects.py
    .venv-bench/bin/python benchmarks/bench_rater_effects.py --samplers pymc,nutpie,numpyro \
        --items 1000 --raters 100 --per-item 20 --draws 1000 --tune 1000 --diagnose
    .venv/bin/python benchmarks/bench_rater_effects.py --samplers nutpie \
        --nuts '{"low_rank_modified_mass_matrix": true}'

Measured (2 shared cores, load average 1.8-3.6 from other jobs; nutpie):
2 x (1000 + 1000): 436 s, of which 111 s fit's convergence check of 26,015 scalars; R-hat
1.018 (eta), bulk ESS 233 -- missed. 2 x (500 + 2000): 409 s, R-hat 1.014 (sigma_item), bulk
ESS 313 -- missed. numpyro, 2 x (1000 + 1000): sampled, then still post-processing after 19
min at 9.2 GB resident (PyMC's numpyro route evaluates the deterministics for all draws at
once in JAX, and ``q``'s broadcast needs draws x items x nodes x K doubles); stopped.
PyMC's own NUTS was not run at this size.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
import warnings

import numpy as np
import pandas as pd


def simulate(items: int, raters: int, per_item: int, categories: int, seed: int) -> pd.DataFrame:
    """Long answers from the model itself (item logits sd 1.5, rater biases sd 0.5, 1.0 on
    can't-solve)."""
    rng = np.random.default_rng(seed)
    k = categories
    mu = np.linspace(1.0, -1.0, k)
    eta = mu + 1.5 * rng.normal(size=(items, k))
    scale = np.full(k, 0.5)
    scale[-1] = 1.0
    b = scale * rng.normal(size=(raters, k))
    item = np.repeat(np.arange(items), per_item)
    rater = np.concatenate([rng.choice(raters, per_item, replace=False) for _ in range(items)])
    logit = eta[item] + b[rater]
    p = np.exp(logit - logit.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = (p.cumsum(axis=1) > rng.random((len(p), 1))).argmax(axis=1)
    labels = np.array([f"c{j}" for j in range(k - 1)] + ["cant"])
    return pd.DataFrame({"task": item, "worker": rater, "label": labels[y]})


def run(answers: pd.DataFrame, sampler: str, args: argparse.Namespace) -> dict:
    import ambppl
    from ambppl.data.readers import read_long

    load = os.getloadavg()[0]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ambppl.fit(
            read_long(answers, cant_solve="cant"),  # read in the timed call, as fit used to
            "rater_effects",
            draws=args.draws,
            chains=args.chains,
            random_seed=args.seed,
            sampler=sampler,
            sample_kwargs={
                "tune": args.tune,
                # fit gives nutpie and numpyro one core per chain; PyMC's own sampler gets the
                # same here (PyMC's default takes half the CPUs: 1 of 2)
                **({"cores": min(args.chains, os.cpu_count() or 1)} if sampler == "pymc" else {}),
                **({"nuts": args.nuts} if args.nuts else {}),
            },
        )
    wall = time.perf_counter() - start
    record = json.loads(result.attrs["convergence"])
    record.pop("variables", None)
    post = result["posterior"].to_dataset()
    steps = result["sample_stats"].get("n_steps")
    out = {
        "sampler": sampler,
        "wall_s": round(wall, 1),
        "load_before": round(load, 2),
        "checked_scalars": int(
            sum(post[v].size // (post.sizes["chain"] * post.sizes["draw"]) for v in post)
        ),
        "mean_leapfrog_steps": None if steps is None else round(float(steps.mean()), 1),
        **record,
    }
    if args.diagnose:  # after the timing: which variable is worst, what the check costs
        import arviz as az

        from ambppl.inference.convergence import check_convergence

        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_convergence(result, list(post.data_vars))
        out["check_s"] = round(time.perf_counter() - start, 1)
        rhat = az.rhat(post)
        out["worst_r_hat_variable"] = max(post.data_vars, key=lambda v: float(rhat[v].max()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    samplers = ["nutpie", "pymc"] + (["numpyro"] if importlib.util.find_spec("numpyro") else [])
    parser.add_argument("--samplers", default=",".join(samplers))
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--raters", type=int, default=100)
    parser.add_argument("--per-item", type=int, default=20)
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--draws", type=int, default=1500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="after each timed fit: time fit's convergence check again, name the worst variable",
    )
    parser.add_argument(
        "--nuts",
        type=json.loads,
        default=None,
        help="JSON of NUTS options for pymc.sample(nuts=...), e.g. '{\"target_accept\": 0.9}'",
    )
    args = parser.parse_args()
    answers = simulate(args.items, args.raters, args.per_item, args.categories, args.seed)
    print(
        f"rater_effects: {args.items} items x {args.per_item} answers, {args.raters} raters, "
        f"K = {args.categories}; {args.chains} chains x ({args.tune} tune + {args.draws} draws)",
        flush=True,
    )
    for sampler in args.samplers.split(","):
        print(json.dumps(run(answers, sampler, args)), flush=True)


if __name__ == "__main__":
    main()
