"""Scale: one table of timings and ratios, every baseline measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_scale.py`` (about 5 minutes on 2 cores; never while
tests run). ``--sizes 10000,100000`` picks the ``ambppl score`` sizes (default 10^4, 10^5,
10^6); ``--huge N`` instead writes N items of counts to a Parquet file and streams
``ambppl score big.parquet -o scores.parquet`` over it (the 10^8-item target:
``--huge 100000000``, needs ~10 GB of disk), reporting time, peak memory and items/s.

Rows of the table (``ratio`` = ambppl's time / the baseline's; < 1 is faster):

* closed forms: ``dirichlet_mean`` + ``dirichlet_var`` (amb) on 10^6 items x 6 categories
  against the same formulas as one bare numpy expression (``bench_moments.py``);
* exact sampler: ``fit(method="exact", var_names=["amb"])``, 10^4 items x 2 x 1000 draws,
  against bare numpy gamma draws normalized, amb inline (``bench_fit.py``);
* ``ambppl score counts.npy -o scores.csv`` at each size in a fresh process (wall time from
  the parent, peak RSS from ``/usr/bin/time -v``, items/s), against the same command on
  10^4 items before this route existed: ``fit`` with 4 x 1000 draws stored + ``summarize``
  (the baseline row ``fit + summarize``); counts: q ~ Dirichlet(1, ..., 1), 20 answers over
  5 categories (can't-solve last), which makes all 10,626 count vectors equally likely;
* NUTS against exact at 1000 items x 3 categories (``fit(method="nuts")``, PyMC's NUTS,
  2 x (1000 + 1000), compilation included, against ``fit(method="exact")`` 2 x 1000);
* the exact two-class density: ``ambiguity_posterior(...).pdf`` on 64 points against
  ``scipy.integrate.quad`` on the paper's integrand (``bench_exact.py``);
* dask: ``ambppl.score`` of a 4 x 10^6-item Parquet file in chunks of 5 x 10^5, written to
  Parquet, on a ``distributed.LocalCluster`` of 1 worker against 2 workers (one thread each).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
AMBPPL = [PYTHON, "-m", "ambppl"]


def _sibling(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hardware() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[1])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, TypeError):
        pass
    return (
        f"{datetime.date.today()}, {platform.machine()}, {model}, {len(os.sched_getaffinity(0))}"
        f" cores{mem}, Python {platform.python_version()}, numpy {np.__version__}"
    )


def best(func, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def counts(n_items: int, seed: int = 0, n_answers: int = 20, k: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n_items, k), dtype=np.int64)
    for start in range(0, n_items, 10**6):
        stop = min(start + 10**6, n_items)
        out[start:stop] = rng.multinomial(n_answers, rng.dirichlet(np.ones(k), stop - start))
    return out


def timed_command(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (GB) of a command in a fresh process (/usr/bin/time -v)."""
    start = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *argv], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)[1])
    return wall, rss_kb / 1e6


ROWS: list[tuple[str, str, float | None, str]] = []


def row(what: str, ambppl_s: float, baseline: str, baseline_s: float | None, note: str = ""):
    ratio = "" if baseline_s is None else f"{ambppl_s / baseline_s:.3g}"
    ROWS.append(
        (
            what,
            f"{ambppl_s:.3g}",
            baseline,
            "" if baseline_s is None else f"{baseline_s:.3g}",
            ratio,
            note,
        )
    )
    print(f"  {what}: {ambppl_s:.3g} s {note}", flush=True)


def bench_closed_forms() -> None:
    import ambppl

    moments = _sibling("bench_moments")
    alpha = np.random.default_rng(1).gamma(2.0, 3.0, size=(10**6, 6)) + 0.5
    lib = best(lambda: (ambppl.dirichlet_mean(alpha), ambppl.dirichlet_var(alpha)))
    bare = best(lambda: (moments.bare_mean(alpha), moments.bare_var(alpha)))
    row("closed forms, 10^6 x 6", lib, "bare numpy formulas", bare)


def bench_exact_sampler() -> None:
    import xarray as xr

    import ambppl

    fit_bench = _sibling("bench_fit")
    values = counts(10**4, seed=2)
    data = xr.DataArray(values, dims=("item", "category"), attrs={"cant_solve": 4})
    data = data.assign_coords(category=list("abcde"), item=np.arange(10**4))
    data.attrs["cant_solve"] = "e"
    lib = best(
        lambda: ambppl.fit(
            data, draws=1000, chains=2, var_names=["amb"], log_likelihood=False, random_seed=1
        ),
        repeat=2,
    )
    bare = best(lambda: [fit_bench._bare_numpy(values, 1.0, 1000, s) for s in (1, 2)], repeat=2)
    row("exact sampler, 10^4 items x 2 x 1000 draws", lib, "bare numpy gamma draws", bare)


def bench_score(sizes: list[int], folder: Path) -> None:
    base_file = folder / "c10000.npy"
    np.save(base_file, counts(10**4, seed=3))
    # the route before distinct vectors: fit with 4 x 1000 stored draws, then summarize
    code = (
        "import sys, numpy as np, ambppl; from ambppl.analysis.summary import rank, summarize; "
        "c = np.load(sys.argv[1]); "
        "c = ambppl.read_annotations(c, categories=list('abcde'), cant_solve='e'); "
        "r = ambppl.fit(c, var_names=['amb'], random_seed=1); "
        "rank(summarize(r)).to_csv(sys.argv[2])"
    )
    base_s, base_rss = timed_command([PYTHON, "-c", code, str(base_file), str(folder / "o.csv")])
    for n in sizes:
        path = folder / f"c{n}.npy"
        if not path.exists():
            np.save(path, counts(n, seed=3))
        out = folder / f"s{n}.csv"
        wall, rss = timed_command(
            [
                *AMBPPL,
                "score",
                str(path),
                "--cant-solve",
                "4",
                "-q",
                "--seed",
                "1",
                "-o",
                str(out),
                "--force",
            ]
        )
        row(
            f"ambppl score, 10^{round(np.log10(n))} items x 5 x 20 answers",
            wall,
            "fit + summarize (4 x 1000 draws), 10^4 items" if n == 10**4 else "",
            base_s if n == 10**4 else None,
            f"peak RSS {rss:.2f} GB, {n / wall:,.0f} items/s"
            + (f"; baseline peak {base_rss:.2f} GB" if n == 10**4 else ""),
        )


def bench_nuts_vs_exact() -> None:
    import logging

    import ambppl

    logging.getLogger("pymc").setLevel(logging.ERROR)
    data = ambppl.read_annotations(
        counts(1000, seed=4, n_answers=10, k=3), categories=["a", "b", "cs"], cant_solve="cs"
    )
    kw = {
        "chains": 2,
        "draws": 1000,
        "random_seed": 1,
    }
    exact = best(lambda: ambppl.fit(data, **kw), repeat=2)
    start = time.perf_counter()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ambppl.fit(data, method="nuts", sampler="pymc", **kw)
    nuts = time.perf_counter() - start
    row("NUTS (PyMC), 1000 items x 3, 2 x (1000 + 1000)", nuts, "exact draws, 2 x 1000", exact)


def bench_two_class_density() -> None:
    import ambppl

    exact_bench = _sibling("bench_exact")
    alpha = np.array([6.0, 4.0, 2.0])
    x = np.linspace(0.02, 0.98, 64)
    post = ambppl.ambiguity_posterior(alpha)
    lib = best(lambda: post.pdf(x), repeat=5)
    quad = best(lambda: exact_bench.quad_amb(alpha, x, "pdf"), repeat=2)
    row("two-class density, 64 points", lib, "scipy.integrate.quad", quad)


def bench_dask(folder: Path, n_items: int = 4 * 10**6) -> None:
    import pandas as pd
    from distributed import Client, LocalCluster

    import ambppl
    import ambppl.data

    path = folder / "d.parquet"
    pd.DataFrame(counts(n_items, seed=5).astype(np.uint8), columns=list("abcde")).to_parquet(
        path, row_group_size=500_000
    )
    times = {}
    for workers in (1, 2):
        with (
            LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as c,
            Client(c),
        ):
            out = folder / f"d{workers}.parquet"
            start = time.perf_counter()
            chunked = ambppl.data.read_in_chunks(path, chunk_items=500_000, cant_solve="e")
            lazy = ambppl.score(chunked, random_seed=1)
            lazy.to_parquet(out)
            times[workers] = time.perf_counter() - start
            shutil.rmtree(out)
    row(
        "dask score, 4x10^6 items to Parquet, 2 workers",
        times[2],
        "1 worker",
        times[1],
        f"{n_items / times[2]:,.0f} items/s",
    )


def huge(n_items: int, folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / "big.parquet"
    rng = np.random.default_rng(7)
    start = time.perf_counter()
    with pq.ParquetWriter(path, pa.schema([(c, pa.uint8()) for c in "abcde"])) as writer:
        for begin in range(0, n_items, 2 * 10**6):
            m = min(2 * 10**6, n_items - begin)
            block = rng.multinomial(20, rng.dirichlet(np.ones(5), m)).astype(np.uint8)
            writer.write_table(pa.table({c: block[:, k] for k, c in enumerate("abcde")}))
    print(
        f"wrote {n_items:,} items to {path} ({path.stat().st_size / 1e9:.2f} GB) in "
        f"{time.perf_counter() - start:.0f} s",
        flush=True,
    )
    out = folder / "scores.parquet"
    argv = [*AMBPPL, "score", str(path), "--cant-solve", "e", "--seed", "1", "-o", str(out)]
    wall, rss = timed_command(argv)
    size = sum(p.stat().st_size for p in out.glob("*")) / 1e9
    print(
        f"ambppl score {n_items:,} items: {wall:.1f} s, peak RSS {rss:.2f} GB, "
        f"{n_items / wall:,.0f} items/s; output {size:.2f} GB ({hardware()})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--huge", type=int, default=None)
    parser.add_argument("--folder", default=None, help="scratch folder (default: a temp dir)")
    args = parser.parse_args(argv)
    folder = Path(args.folder or tempfile.mkdtemp(prefix="ambppl-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(hardware(), flush=True)
    if args.huge:
        huge(args.huge, folder)
        return
    bench_closed_forms()
    bench_exact_sampler()
    bench_score([int(s) for s in args.sizes.split(",")], folder)
    bench_nuts_vs_exact()
    bench_two_class_density()
    bench_dask(folder)
    header = ("what", "ambppl s", "baseline", "baseline s", "ratio", "notes")
    print(f"\n{hardware()}")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in ROWS:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
