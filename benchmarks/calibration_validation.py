"""False-alarm rate and power of ``check_moments`` and ``check_density`` over many seeds.

For each seed a correct posterior is drawn and both checks are run at ``alpha = 0.01``; the
share that fails is the false-alarm rate (a correct check fails at most ``alpha`` of the
time: Holm's procedure controls the family-wise rate under any dependence). Then each of
the five faults of ``ambppl.validation.wrong_posterior`` is planted in a fresh correct
posterior and the share of seeds where the check flags it is its power.

Data: the weather sentiment example (200 tweets, 4 proper classes + can't-solve) for
``check_moments``; five two-class items with can't-solve (the paper's figure counts
(5,5,5), (5,0,0), (30,0,0), plus (3,1,0) and (2,3,1)) for ``check_density`` (and
``check_moments`` on them). Exact draws, 4 chains x 1000, prior beta = 1.

``--nuts N`` also fits the five two-class items N times with ``method="nuts"`` (4 x 1000
after 1000 tuning steps, ArviZ's MCSE and ESS thinning) to measure the false-alarm rate
when the draws are autocorrelated MCMC draws; ``--collapsed N`` fits a 60-tweet subset of
the weather data with ``hierarchical_dirichlet`` (collapsed) N times and runs the
conditional ``check_moments``; ``--reference N`` fits each of the seven reference cases
(``models/reference``) N times with 2 x 300 exact draws (seeds 1000, 1001, ...) and runs
``check_reference`` (about 0.1 s a fit; N = 400 is the figure of ``check_reference``'s
Notes); ``--check-fit N`` runs ``check_fit`` on N correct exact fits (2 x 500 draws) of data
simulated from the flat model (200 items x 10 answers, ``q_i ~ Dirichlet(1, 1, 1)``,
can't-solve last), where its three checks apply (about 4 s a seed; N = 300 is the figure of
``check_fit``'s Notes).

Each rate is printed with its binomial standard error ``sqrt(r (1 - r) / n)``.

Run: ``.venv/bin/python benchmarks/calibration_validation.py [--seeds 200] [--nuts 0]
[--collapsed 0] [--reference 0] [--check-fit 0]`` (about 4 s per seed for the exact part on
2 cores).
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings

import numpy as np

import ambppl
from ambppl.data.readers import example_path, read_annotations
from ambppl.validation import FAULTS, check_density, check_moments, wrong_posterior

TWO_CLASS = np.array([[5, 5, 5], [5, 0, 0], [30, 0, 0], [3, 1, 0], [2, 3, 1]])


def _rate(flags: list[bool]) -> str:
    n = len(flags)
    r = float(np.mean(flags)) if n else float("nan")
    se = np.sqrt(r * (1 - r) / n) if n else float("nan")
    return f"{r:6.3f} +- {se:.3f} (n = {n})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--power-seeds", type=int, default=50)
    parser.add_argument("--nuts", type=int, default=0)
    parser.add_argument("--collapsed", type=int, default=0)
    parser.add_argument("--reference", type=int, default=0)
    parser.add_argument("--check-fit", type=int, default=0)
    args = parser.parse_args()
    if args.reference:
        _reference_cases(args.reference)
    if args.check_fit:
        _check_fit_verdict(args.check_fit)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    weather = read_annotations(example_path("weather_sentiment"), cant_solve="I can't tell")
    two_class = read_annotations(TWO_CLASS, cant_solve="2")

    if args.seeds:
        start = time.perf_counter()
        fa = {"moments (weather, 200 items)": [], "moments (two-class)": [], "density": []}
        for seed in range(args.seeds):
            w = ambppl.fit(weather, draws=1000, chains=4, random_seed=seed)
            fa["moments (weather, 200 items)"].append(not check_moments(w).passed)
            t = ambppl.fit(two_class, draws=1000, chains=4, random_seed=seed)
            fa["moments (two-class)"].append(not check_moments(t).passed)
            fa["density"].append(not check_density(t).passed)
        print(
            f"False-alarm rate at alpha = 0.01, exact draws ({time.perf_counter() - start:.0f} s):"
        )
        for name, flags in fa.items():
            print(f"  {name:32s} {_rate(flags)}")

    if args.power_seeds:
        start = time.perf_counter()
        print("\nPower (share of seeds flagged), two-class items, exact draws + fault:")
        print(f"  {'fault':16s} {'check_moments':>28s} {'check_density':>28s}")
        for fault in FAULTS:
            m, d = [], []
            for seed in range(args.power_seeds):
                t = ambppl.fit(two_class, draws=1000, chains=4, random_seed=seed)
                wrong = wrong_posterior(t, fault, random_seed=10_000 + seed)
                m.append(not check_moments(wrong).passed)
                d.append(not check_density(wrong).passed)
            print(f"  {fault:16s} {_rate(m):>28s} {_rate(d):>28s}")
        print(f"  ({time.perf_counter() - start:.0f} s)")

    if args.nuts:
        start = time.perf_counter()
        m, d = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in range(args.nuts):
                t = ambppl.fit(
                    two_class,
                    method="nuts",
                    draws=1000,
                    chains=4,
                    random_seed=seed,
                    sample_kwargs={"cores": 1},
                )
                m.append(not check_moments(t).passed)
                d.append(not check_density(t).passed)
        print(f"\nFalse-alarm rate, NUTS draws ({time.perf_counter() - start:.0f} s):")
        print(f"  moments {_rate(m)}\n  density {_rate(d)}")

    if args.collapsed:
        start = time.perf_counter()
        subset = weather.isel(item=slice(0, 60))
        m = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in range(args.collapsed):
                h = ambppl.fit(subset, "hierarchical_dirichlet", random_seed=seed)
                m.append(not check_moments(h).passed)
        print(
            f"\nFalse-alarm rate, hierarchical_dirichlet collapsed, conditional moments "
            f"({time.perf_counter() - start:.0f} s):\n  moments {_rate(m)}"
        )


def _reference_cases(n: int) -> None:
    """False-alarm rate of ``check_reference`` on ``n`` exact fits of every reference case."""
    from ambppl.validation.reference import (
        check_reference,
        list_reference_cases,
        load_reference_case,
    )

    start = time.perf_counter()
    every = []
    print("False-alarm rate of check_reference at alpha = 0.01, 2 x 300 exact draws:")
    for name in list_reference_cases()["name"]:
        case = load_reference_case(name)
        flags = []
        for r in range(n):
            fit = ambppl.fit(
                case.counts,
                case.model,
                draws=300,
                chains=2,
                random_seed=1000 + r,
                **case.parameters,
            )
            flags.append(not check_reference(fit, case).passed)
        every += flags
        print(f"  {name:32s} {_rate(flags)}")
    print(f"  {'all cases':32s} {_rate(every)} ({time.perf_counter() - start:.0f} s)\n")


def _check_fit_verdict(n: int) -> None:
    """False-alarm rate of ``check_fit``'s verdict, and of each check, on ``n`` correct fits."""
    from ambppl.validation import check_fit

    start = time.perf_counter()
    verdict, per_check = [], {}
    for seed in range(100, 100 + n):
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(10, rng.dirichlet(np.ones(3), size=200))
        counts = ambppl.read_annotations(counts, cant_solve="2")
        fit = ambppl.fit(counts, draws=500, chains=2, random_seed=seed)
        check = check_fit(fit, random_seed=seed + 10**6)
        verdict.append(not check.passed)
        for name, out in check.checks.items():
            per_check.setdefault(name, []).append(not out.passed)
    print("False-alarm rate of check_fit at alpha = 0.01 (flat-model data, 2 x 500 exact draws):")
    print(f"  {'verdict':32s} {_rate(verdict)} ({time.perf_counter() - start:.0f} s)")
    for name, flags in per_check.items():
        print(f"  {name:32s} {_rate(flags)}")


if __name__ == "__main__":
    main()
