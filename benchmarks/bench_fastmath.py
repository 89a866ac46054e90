"""The price of reproducible draws: PyTensor programs compiled with and without fast math.

``fit`` compiles without PyTensor's numba fast-math flags (``ambppl.inference.compilation``):
with them a program compiled afresh and the same program loaded from PyTensor's disk cache
differ in the last bits, and a seeded NUTS fit drew differently on a machine's first run.
This measures what that costs.

Rows, the catalog models' programs on public data (``../shared/data``; a row whose data are
absent is skipped with a line saying so): the log density and its gradient (PyMC's
``logp_dlogp_function``, the function NUTS calls), compiled in this process once with fast
math (baseline: PyTensor's default) and once without (``fit``'s), evaluated in turn at the
same 20 points near the initial point for ``SECONDS`` each, ``ROUNDS`` rounds. Printed:
microseconds per evaluation of each (best round) and the ratio without / with.

``--fits``: whole default fits (``benchmarks/gallery.py``'s rows ``cifar10h`` x
``hierarchical_dirichlet`` and ``anesthesia_ds1979`` x ``dawid_skene``), each in a fresh
process twice (the second, with PyTensor's cache warm, is the one printed), with fit's
setting and with fast math (``fit``'s block replaced by a no-op under PyTensor's default),
and the ratio of their wall times, with each fit's smallest bulk ESS (equal to every digit
where fast math does not change the program's draws; the test suite checks that fit's draws
do not depend on the cache, ``tests/inference/test_compilation.py``).

Run: ``.venv/bin/python benchmarks/bench_fastmath.py`` (about 2 minutes on 2 cores; with
``--fits`` about 8 more).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SECONDS = 2.0
ROUNDS = 3
#: (data set of gallery.py, catalog model)
ROWS = (
    ("cifar10h", "hierarchical_dirichlet"),
    ("cifar10h", "dirichlet_categorical"),
    ("dog_zhou2012", "rater_effects"),
    ("cf_weather_sentiment", "rater_effects"),
    ("dog_zhou2012", "dawid_skene"),
    ("jn_product", "dawid_skene"),
)
FIT_ROWS = (("cifar10h", "hierarchical_dirichlet"), ("anesthesia_ds1979", "dawid_skene"))


def _gallery():
    sys.path.insert(0, str(HERE))
    import gallery

    return gallery


def program(name: str, model: str):
    """The PyMC program ``fit`` samples for this row (the collapsed one for
    ``hierarchical_dirichlet``, its default route)."""
    from ambppl.data.readers import read_annotations, read_long
    from ambppl.inference.catalog import get_model

    gallery = _gallery()
    data, kwargs = gallery._load(name, False)
    raters = gallery.MODELS[model]
    read = read_long(data, **kwargs) if raters else read_annotations(data, **kwargs)
    entry = get_model(model)
    if model == "hierarchical_dirichlet":
        return entry.module.hyper_model(read)
    return entry.build(read)


def per_evaluation(model) -> tuple[float, float]:
    """Best-round microseconds per log density and gradient: with fast math, without."""
    import pytensor

    functions = []
    for fast in (True, False):
        with pytensor.config.change_flags(numba__fastmath=fast):
            f = model.logp_dlogp_function(mode="NUMBA", ravel_inputs=True)
            f.set_extra_values({})
            functions.append(f)
    x0 = np.concatenate([np.ravel(v) for v in model.initial_point().values()])
    rng = np.random.default_rng(0)
    points = [x0 + 0.1 * rng.normal(size=x0.size) for _ in range(20)]
    best = [np.inf, np.inf]
    for _ in range(ROUNDS):
        for k, f in enumerate(functions):
            for x in points:  # warm
                f(x)
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < SECONDS:
                for x in points:
                    f(x)
                n += len(points)
            best[k] = min(best[k], (time.perf_counter() - start) / n * 1e6)
    return best[0], best[1]


_FIT = """
import contextlib, hashlib, sys, time, warnings
sys.path.insert(0, {here!r})
import gallery
import ambppl.inference.fitting as fitting
if {fast!r}:
    fitting.reproducible_compilation = contextlib.nullcontext  # PyTensor's default
warnings.simplefilter("ignore")
row = gallery.run_row({name!r}, {model!r}, False)
print(row["wall_s"], row["ess_bulk"])
"""


def whole_fit(name: str, model: str, fast: bool) -> tuple[float, str]:
    """Wall seconds of the second of two runs in fresh processes, and its smallest bulk
    ESS."""
    code = _FIT.format(here=str(HERE), fast=fast, name=name, model=model)
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    return float(out[-2]), out[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", action="store_true", help="also time whole default fits")
    args = parser.parse_args()
    gallery = _gallery()
    print(f"{'data':22} {'model':24} {'fast us':>9} {'fit us':>9} {'ratio':>6}")
    for name, model in ROWS:
        path = gallery.SHARED_DATA / gallery.REAL[name]["file"]
        if not path.exists():
            print(f"{name:22} {model:24} skipped: {path} is absent")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast, slow = per_evaluation(program(name, model))
        print(f"{name:22} {model:24} {fast:9.1f} {slow:9.1f} {slow / fast:6.2f}")
    if not args.fits:
        return
    print(f"\n{'data':22} {'model':24} {'fast s':>8} {'fit s':>8} {'ratio':>6}  bulk ESS")
    for name, model in FIT_ROWS:
        (t_fast, ess_fast), (t_fit, ess_fit) = (whole_fit(name, model, f) for f in (True, False))
        print(
            f"{name:22} {model:24} {t_fast:8.1f} {t_fit:8.1f} {t_fit / t_fast:6.2f}"
            f"  {float(ess_fast):.1f} / {float(ess_fit):.1f}"
        )


if __name__ == "__main__":
    main()
