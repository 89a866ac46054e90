"""Full simulation-based calibration of the catalog's models and methods.

Usage (from the repository root)::

    .venv/bin/python benchmarks/sbc_full.py                       # dirichlet_categorical exact
    .venv/bin/python benchmarks/sbc_full.py --method nuts --draws 250 --chains 2
    .venv/bin/python benchmarks/sbc_full.py --model hierarchical_dirichlet --method collapsed
    .venv/bin/python benchmarks/sbc_full.py --all                 # the three runs above

Prints each quantity's p-value, the verdict and the wall time. ``--repeat R`` reruns the whole
SBC with R seeds and prints how often it rejected (the false-alarm rate, or with
``--fit-prior 3`` the power against a fit whose prior differs from the simulation's).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ambppl.validation.sbc import sbc

#: The runs of ``--all``: (model, method).
ALL_RUNS = (
    ("dirichlet_categorical", "exact"),
    ("dirichlet_categorical", "nuts"),
    ("hierarchical_dirichlet", "collapsed"),
)


def run_once(args: argparse.Namespace, model: str, method: str, seed: int) -> object:
    """One SBC with the command line's settings."""
    fit_kwargs = {"prior": args.fit_prior} if args.fit_prior is not None else None
    return sbc(
        model,
        method=method,
        n_simulations=args.simulations,
        n_items=args.items,
        n_answers=args.answers,
        n_categories=args.categories,
        draws=args.draws,
        chains=args.chains,
        alpha=args.alpha,
        fit_kwargs=fit_kwargs,
        random_seed=seed,
    )


def report(model: str, method: str, args: argparse.Namespace) -> None:
    """Run one (model, method) once or ``--repeat`` times and print the outcome."""
    title = f"{model} / {method}: {args.simulations} simulations x {args.items} items"
    if args.repeat > 1:
        start = time.perf_counter()
        rejected = [
            not run_once(args, model, method, args.seed + r).passed for r in range(args.repeat)
        ]
        rate = float(np.mean(rejected))
        se = float(np.sqrt(rate * (1 - rate) / args.repeat))
        print(
            f"{title}, fit_prior={args.fit_prior}: rejected {sum(rejected)} of {args.repeat} "
            f"({rate:.3f} +- {se:.3f}) at alpha={args.alpha}; "
            f"{time.perf_counter() - start:.1f} s"
        )
        return
    start = time.perf_counter()
    result = run_once(args, model, method, args.seed)
    seconds = time.perf_counter() - start
    columns = ["quantity", "n_ranks", "statistic", "design_effect", "p_value", "p_holm"]
    columns += ["mean_pit", "sd_pit", "flagged"]
    print(title)
    print(result.table[columns].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print(repr(result))
    print(f"fit warnings: {result.details['fit_warnings'] or 'none'}")
    print(f"wall time: {seconds:.1f} s\n", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--model", default="dirichlet_categorical")
    parser.add_argument("--method", default=None, help="default: the model's first method")
    parser.add_argument("--all", action="store_true", help="run " + ", ".join(map(str, ALL_RUNS)))
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--answers", type=int, default=10)
    parser.add_argument("--categories", type=int, default=3)
    parser.add_argument("--draws", type=int, default=None, help="per chain (NUTS default 500)")
    parser.add_argument("--chains", type=int, default=None)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--fit-prior", type=float, default=None, help="fit with this prior")
    parser.add_argument("--repeat", type=int, default=1, help="rerun with this many seeds")
    parser.add_argument("--seed", type=int, default=20261125)
    args = parser.parse_args(argv)
    runs = ALL_RUNS if args.all else ((args.model, args.method),)
    for model, method in runs:
        from ambppl.inference.catalog import get_model

        report(model, method or get_model(model).info["methods"][0], args)


if __name__ == "__main__":
    main()
