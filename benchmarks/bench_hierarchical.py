"""``hierarchical_dirichlet``, collapsed route: hyperparameter NUTS, per-item draws, convergence.

Simulated data from a known truth: K = 5 categories (the last is can't-solve),
``mu = (0.35, 0.25, 0.20, 0.15, 0.05)``, ``kappa = 3``, 20 answers per item. Every NUTS run
has 4 chains x 1000 draws after 1000 tuning steps. One table, ratios against baselines
measured in the same run (rows ``B*``):

A. The hyperparameter posterior alone: ``models/hierarchical_dirichlet.hyper_model(counts)``
   built ("build": count statistics and the PyMC model), then ``pymc.sample`` on it as
   ``fit(method="collapsed")`` calls it, with PyMC's NUTS and with nutpie, for 10^5 and
   10^6 items. "compile" = the ``pymc.sample`` wall time minus its ``sampling_time``
   (compilation, initialization, building the trace); "sample" = ``sampling_time``.
   Each (sampler, N) runs in two fresh processes sharing a fresh ``compiledir`` and
   ``NUMBA_CACHE_DIR``: the first is **cold** (empty caches), the second **warm** (caches
   filled by the first); **hot** is a second ``pymc.sample`` call on the same model in the
   warm process. Imports (pymc, nutpie: about 1 s) are not included. Baseline B1/B2:
   ``empirical_bayes`` (the point estimate of the same hyperparameters) at the same N.
   Targets: 10^5 items <= 60 s including compilation; 10^6 items <= 1.5x the 10^5 time.
B. The per-item draws: ``fit(counts, "hierarchical_dirichlet", var_names=["amb"],
   draws=1000, chains=4)`` against the flat exact fit ``fit(counts, prior=1.0)`` with the
   same draws, chains and var_names (baseline), with and without the ``log_likelihood``
   group, at 10^4 items (best of 2) and 10^5 items (once; with the log likelihood only when
   the machine has the memory: 3.2 GB per stored variable, about 10 GB at the peak).
   "collapsed - NUTS" is the fit's wall time minus the time spent inside ``pymc.sample``
   (which is what part A measures); "draw kernel" is the time inside the shared
   ``_conditional_draws`` (gamma draws and amb) of either fit. Target: <= 1.2x.
C. Convergence: the collapsed fit's ``attrs["convergence"]`` (R-hat <= 1.01, bulk and tail
   ESS >= 400, no divergences) at 10^5 items (the fit of part B, default sampler; and
   ``fit``'s own check applied to the part-A traces of both samplers), on the full
   CrowdFlower weather file in ``../shared/data`` (1,000 tweets; skipped when absent) and on
   the bundled 200-tweet subset, with both samplers.
D. nutpie against PyMC's NUTS on the collapsed model: total time to a trace that meets the
   standard (cold, warm, hot), and sampling seconds per 400 effective draws (the smaller of
   bulk and tail ESS over mu and kappa).

PyMC's default on this 2-CPU machine is ``cores = cpu_count() // 2 = 1`` (chains one after
the other), and ``fit`` keeps PyMC's default; nutpie gets the same ``cores``.

Run: ``.venv/bin/python benchmarks/run.py hierarchical`` (nutpie is a dependency of ambppl;
about 23 minutes on 2 cores, most of it the exact draws of part B at 10^5 items; see
``benchmarks/recovery_hierarchical.py`` for the coverage check of the same route).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import xarray as xr

import ambppl

fit_module = importlib.import_module("ambppl.inference.fitting")
data_module = importlib.import_module("ambppl.data.readers")

MU = np.array([0.35, 0.25, 0.20, 0.15, 0.05])
KAPPA = 3.0
N_ANSWERS = 20
DRAWS, CHAINS, TUNE = 1000, 4, 1000
HYPER_SIZES = (100_000, 1_000_000)
#: NUTS implementations compared (nutpie only where installed: it is a dependency of ambppl).
SAMPLERS = ("pymc", "nutpie") if importlib.util.find_spec("nutpie") else ("pymc",)
#: Item counts of part B; the log likelihood at the larger one only with this much memory.
DRAW_SIZES = (10_000, 100_000)
LL_MEMORY_BYTES = 14 * 2**30
TARGET_SECONDS = 60.0
TARGET_SCALING = 1.5
TARGET_DRAWS = 1.2
WEATHER_FILE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "cf_weather_sentiment"
    / "weather-non-agg-DFE.csv"
)


def simulate(n_items: int, seed: int = 1) -> xr.DataArray:
    """Counts of ``n_items`` items from the truth (MU, KAPPA), N_ANSWERS answers each."""
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(KAPPA * MU, size=n_items)
    values = rng.multinomial(N_ANSWERS, q)
    k = MU.size
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(n_items), "category": [f"c{j}" for j in range(k - 1)] + ["cs"]},
        attrs={"cant_solve": "cs"},
    )


def _hyper_module():
    from ambppl.inference.catalog import get_model

    return get_model("hierarchical_dirichlet").module


def _convergence(tree) -> dict:
    """``fit``'s own convergence record for a ``pymc.sample`` trace of ``hyper_model``."""
    from ambppl.inference.catalog import get_model

    tree = tree.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fit_module.ConvergenceWarning)
        fit_module._check_convergence(tree, get_model("hierarchical_dirichlet"), "collapsed")
    return json.loads(tree.attrs["convergence"])


# ---------------------------------------------------------------------------------------
# Part A: one process per (sampler, N, cache state); results come back as one JSON line


def _worker_hyper(n_items: int, sampler: str) -> dict:
    import pymc as pm

    hd = _hyper_module()
    counts = simulate(n_items)
    eb = []
    for _ in range(3):
        t = time.perf_counter()
        hd.empirical_bayes(counts)
        eb.append(time.perf_counter() - t)
    out: dict = {"eb": min(eb), "calls": []}
    model = None
    for _ in range(2):  # first call, then a second one on the same model ("hot")
        t = time.perf_counter()
        if model is None:
            model = hd.hyper_model(counts)
        build = time.perf_counter() - t
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = pm.sample(
                draws=DRAWS,
                tune=TUNE,
                chains=CHAINS,
                random_seed=2,
                progressbar=False,
                nuts_sampler=sampler,
                model=model,
            )
        wall = time.perf_counter() - t
        sampling = float(tree["posterior"].attrs["sampling_time"])
        post = tree["posterior"]
        out["calls"].append(
            {
                "build": build,
                "wall": wall,
                "sampling": sampling,
                "convergence": _convergence(tree),
                "kappa_mean": float(post["kappa"].mean()),
                "mu_mean": post["mu"].mean(("chain", "draw")).values.tolist(),
            }
        )
    return out


def _run_worker(args: list[str], cache: Path) -> dict:
    env = dict(os.environ)
    flags = env.get("PYTENSOR_FLAGS", "")
    env["PYTENSOR_FLAGS"] = ",".join(f for f in (flags, f"compiledir={cache / 'pytensor'}") if f)
    env["NUMBA_CACHE_DIR"] = str(cache / "numba")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker {args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def _part_a() -> dict:
    results: dict = {}
    for sampler in SAMPLERS:
        for n in HYPER_SIZES:
            cache = Path(tempfile.mkdtemp(prefix="bench-hier-cache-"))
            try:
                cold = _run_worker(["hyper", str(n), sampler], cache)
                warm = _run_worker(["hyper", str(n), sampler], cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            results[sampler, n] = {
                "cold": cold["calls"][0],
                "warm": warm["calls"][0],
                "hot": warm["calls"][1],
                "eb": min(cold["eb"], warm["eb"]),
            }
            print(f"  [A done: {sampler}, N={n}]", flush=True)
    return results


# ---------------------------------------------------------------------------------------
# Part B and C: in this process


class _Timers:
    """Wrap ``pymc.sample`` and ``fit``'s ``_conditional_draws`` to time what runs inside."""

    def __init__(self) -> None:
        self.sample = 0.0
        self.draws = 0.0

    def __enter__(self) -> _Timers:
        import pymc

        self._pm, self._sample, self._cond = pymc, pymc.sample, fit_module._conditional_draws

        def sample(*args, **kwargs):
            t = time.perf_counter()
            try:
                return self._sample(*args, **kwargs)
            finally:
                self.sample += time.perf_counter() - t

        def cond(*args, **kwargs):
            t = time.perf_counter()
            try:
                return self._cond(*args, **kwargs)
            finally:
                self.draws += time.perf_counter() - t

        pymc.sample = sample
        fit_module._conditional_draws = cond
        return self

    def __exit__(self, *exc: object) -> None:
        self._pm.sample = self._sample
        fit_module._conditional_draws = self._cond


def _timed_fit(counts: xr.DataArray, route: str, ll: bool) -> tuple[dict, str | None]:
    """Time one fit: ``route`` is "collapsed", "exact" (prior 1) or a prior vector."""
    kwargs = {"var_names": ["amb"], "log_likelihood": ll, "draws": DRAWS, "chains": CHAINS}
    with _Timers() as timers, warnings.catch_warnings():
        warnings.simplefilter("ignore", fit_module.ConvergenceWarning)
        t = time.perf_counter()
        if route == "collapsed":
            result = ambppl.fit(counts, "hierarchical_dirichlet", random_seed=3, **kwargs)
        else:
            prior = 1.0 if route == "exact" else EB_PRIOR[counts.sizes["item"]]
            result = ambppl.fit(counts, prior=prior, random_seed=3, **kwargs)
        total = time.perf_counter() - t
    conv = result.attrs.get("convergence")
    sampler = result.attrs["sampler"]
    del result
    times = {"total": total, "nuts": timers.sample, "kernel": timers.draws, "sampler": sampler}
    times["rest"] = total - timers.sample
    return times, conv


#: The empirical-Bayes concentration kappa * mu of each part-B data set (filled by _part_b).
EB_PRIOR: dict[int, list[float]] = {}


def _mem_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _part_b() -> tuple[dict, dict]:
    results: dict = {}
    convergence: dict = {}
    for n in DRAW_SIZES:
        counts = simulate(n, seed=4)
        eb = _hyper_module().empirical_bayes(counts)
        EB_PRIOR[n] = (eb["kappa"] * eb["mu"]).tolist()
        repeats = 2 if n <= 10_000 else 1
        for ll in (False, True):
            if ll and n > 10_000 and _mem_available() < LL_MEMORY_BYTES:
                results[n, ll] = None
                continue
            # the exact fit with the data's own concentration separates the cost of the
            # gamma draws at concentrations below 1 from the collapsed route's overhead; the
            # log likelihood of an exact fit is a broadcast, so it is run without it only
            routes = ("exact", "collapsed") if ll else ("exact", "exact_eb", "collapsed")
            best: dict = {}
            for _ in range(repeats):
                for route in routes:  # interleaved: the machine's speed drifts
                    times, conv = _timed_fit(counts, route, ll)
                    if route == "collapsed":
                        convergence[n] = (conv, times["sampler"])
                    old = best.get(route)
                    best[route] = (
                        times
                        if old is None
                        else {
                            k: (min(v, old[k]) if isinstance(v, float) else v)
                            for k, v in times.items()
                        }
                    )
            results[n, ll] = best
            print(f"  [B done: N={n}, log_likelihood={ll}]", flush=True)
    return results, convergence


def _weather_sets() -> list[tuple[str, xr.DataArray | None, str]]:
    sets = []
    if WEATHER_FILE.exists():
        counts = ambppl.read_annotations(
            WEATHER_FILE,
            item="tweet_id",
            rater="worker_id",
            label="emotion",
            cant_solve="I can't tell",
        )
        sets.append(("weather, full file", counts, ""))
    else:
        sets.append(("weather, full file", None, f"skipped: {WEATHER_FILE} not found"))
    counts = ambppl.read_annotations(
        data_module.example_path("weather_sentiment"), cant_solve="I can't tell"
    )
    sets.append(("weather, bundled subset", counts, ""))
    return sets


def _part_c() -> list[tuple[str, int, str, float, dict | None, str]]:
    rows = []
    for label, counts, note in _weather_sets():
        for sampler in SAMPLERS:
            if counts is None:
                rows.append((label, 0, sampler, float("nan"), None, note))
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", fit_module.ConvergenceWarning)
                t = time.perf_counter()
                result = ambppl.fit(
                    counts,
                    "hierarchical_dirichlet",
                    var_names=["amb"],
                    draws=DRAWS,
                    chains=CHAINS,
                    sampler=sampler,
                    random_seed=5,
                )
                total = time.perf_counter() - t
            conv = json.loads(result.attrs["convergence"])
            rows.append((label, counts.sizes["item"], sampler, total, conv, note))
    return rows


# ---------------------------------------------------------------------------------------
# The table


def _conv_text(conv: dict | None) -> str:
    if conv is None:
        return ""
    if "r_hat" not in conv:
        return f"{conv.get('reason', '?')}: MISSED"
    return (
        f"R-hat {conv['r_hat']:.3f}, ESS bulk {conv['ess_bulk']:.0f} / tail "
        f"{conv['ess_tail']:.0f}, {conv['divergences']} div: "
        f"{'met' if conv['passed'] else 'MISSED ' + ','.join(conv['failed'])}"
    )


def _fmt(x: float | None) -> str:
    return "" if x is None or x != x else f"{x:.{3 if abs(x) < 1 else 2}f}"


def _n(n: int) -> str:
    return f"1e{round(np.log10(n))}" if n and 10 ** round(np.log10(n)) == n else str(n)


class _Table:
    """Rows of the one table: id, measurement, N, times, ratio, target."""

    HEAD = ("id", "measurement", "N", "total s", "compile s", "sample s", "ratio", "target")

    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []

    def add(
        self,
        rid: str,
        what: str,
        n: int | None,
        total: float | None = None,
        *,
        compile_s: float | None = None,
        sample: float | None = None,
        ratio: str = "",
        target: str = "",
    ) -> None:
        n_text = "" if not n else _n(n)
        self.rows.append(
            (rid, what, n_text, _fmt(total), _fmt(compile_s), _fmt(sample), ratio, target)
        )

    def print(self) -> None:
        rows = [self.HEAD, *self.rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.HEAD))]
        for r in rows:
            cells = [
                c.ljust(w) if i in (0, 1, 7) else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ]
            print("  " + "  ".join(cells).rstrip())


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _rows_a(table: _Table, part_a: dict) -> dict:
    for i, n in enumerate(HYPER_SIZES):
        eb = part_a[SAMPLERS[0], n]["eb"]
        table.add(f"B{i + 1}", "A baseline: empirical_bayes (L-BFGS-B)", n, eb, ratio="1")
    totals: dict = {}
    n0 = HYPER_SIZES[0]
    for sampler in SAMPLERS:
        for state in ("cold", "warm", "hot"):
            for i, n in enumerate(HYPER_SIZES):
                call = part_a[sampler, n][state]
                total = call["build"] + call["wall"]
                totals[sampler, state, n] = total
                if n == n0:
                    target = f"<= {TARGET_SECONDS:.0f} s: {_met(total <= TARGET_SECONDS)}"
                else:
                    scale = total / totals[sampler, state, n0]
                    target = (
                        f"{scale:.2f}x the {_n(n0)} time <= {TARGET_SCALING}: "
                        f"{_met(scale <= TARGET_SCALING)}"
                    )
                table.add(
                    "A",
                    f"hyper {sampler}, {state} (build {call['build']:.2f} s)",
                    n,
                    total,
                    compile_s=call["wall"] - call["sampling"],
                    sample=call["sampling"],
                    ratio=f"{total / part_a[sampler, n]['eb']:.0f}x B{i + 1}",
                    target=target,
                )
    return totals


def _rows_b(table: _Table, part_b: dict) -> None:
    n_base = len(HYPER_SIZES)
    for (n, ll), best in part_b.items():
        tag = "with ll" if ll else "no ll"
        if best is None:
            table.add(
                "B",
                f"per-item draws, {tag}",
                n,
                target=f"skipped: MemAvailable < {LL_MEMORY_BYTES / 2**30:.0f} GiB",
            )
            continue
        ex, co = best["exact"], best["collapsed"]
        n_base += 1
        base = f"B{n_base}"
        table.add(base, f"B baseline: fit exact prior=1, amb, {tag}", n, ex["total"], ratio="1")
        table.add(
            "B",
            f"  collapsed fit ({co['sampler']}), amb, {tag}",
            n,
            co["total"],
            sample=co["nuts"],
            ratio=f"{co['total'] / ex['total']:.2f}x {base}",
        )
        ratio = co["rest"] / ex["total"]
        table.add(
            "B",
            f"  collapsed - NUTS, amb, {tag}",
            n,
            co["rest"],
            ratio=f"{ratio:.2f}x {base}",
            target=f"<= {TARGET_DRAWS}: {_met(ratio <= TARGET_DRAWS)}",
        )
        table.add(
            "B",
            f"  draw kernel: collapsed {co['kernel']:.2f} s / exact {ex['kernel']:.2f} s",
            n,
            ratio=f"{co['kernel'] / ex['kernel']:.2f}x",
        )
        if "exact_eb" in best:
            eb = best["exact_eb"]
            table.add(
                "B",
                "  fit exact prior=EB kappa*mu (same concentrations)",
                n,
                eb["total"],
                ratio=f"{eb['total'] / ex['total']:.2f}x {base}",
            )
            table.add(
                "B", "  collapsed - NUTS vs that fit", n, ratio=f"{co['rest'] / eb['total']:.2f}x"
            )


def _rows_c(table: _Table, part_a: dict, conv_b: dict, part_c: list) -> None:
    n_b = max(conv_b)
    conv, sampler = conv_b[n_b]
    table.add(
        "C",
        f"convergence, fit() default sampler ({sampler})",
        n_b,
        target=_conv_text(json.loads(conv) if conv else None),
    )
    for sampler in SAMPLERS:
        call = part_a[sampler, HYPER_SIZES[0]]["cold"]
        table.add(
            "C",
            f"convergence, part A trace ({sampler}, cold)",
            HYPER_SIZES[0],
            target=_conv_text(call["convergence"]),
        )
    for label, n, sampler, total, conv, note in part_c:
        table.add(
            "C", f"convergence, {label} ({sampler})", n, total, target=note or _conv_text(conv)
        )


def _rows_d(table: _Table, part_a: dict, totals: dict) -> None:
    n = HYPER_SIZES[0]
    if "nutpie" not in SAMPLERS:
        table.add("D", "nutpie vs pymc", n, target="skipped: nutpie is not installed")
        return
    for state in ("cold", "warm", "hot"):
        t_nut, t_pm = totals["nutpie", state, n], totals["pymc", state, n]
        met = all(part_a[s, n][state]["convergence"]["passed"] for s in SAMPLERS)
        table.add(
            "D",
            f"time to standard, {state}: nutpie {t_nut:.1f} s / pymc {t_pm:.1f} s",
            n,
            ratio=f"{t_nut / t_pm:.2f}x",
            target="both met the standard" if met else "NOT both met",
        )
    per = {}
    for sampler in SAMPLERS:
        call = part_a[sampler, n]["warm"]
        conv = call["convergence"]
        per[sampler] = call["sampling"] * 400 / min(conv["ess_bulk"], conv["ess_tail"])
    table.add(
        "D",
        f"sampling s per 400 ESS (warm): nutpie {per['nutpie']:.3f} / pymc {per['pymc']:.3f}",
        n,
        ratio=f"{per['nutpie'] / per['pymc']:.2f}x",
    )


def _hardware() -> str:
    """CPU model, CPU count and memory, from /proc where available."""
    model, mem = platform.processor() or platform.machine(), 0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    python = platform.python_version()
    return f"{model}, {os.cpu_count()} CPUs, {mem / 2**30:.0f} GiB RAM, Python {python}"


def main() -> None:
    import pymc  # noqa: F401  (pymc sets its logger to INFO when imported)

    logging.getLogger("pymc").setLevel(logging.WARNING)
    load = os.getloadavg()
    print(
        f"hierarchical_dirichlet, collapsed: K={MU.size} (last = can't solve), {N_ANSWERS} "
        f"answers/item, truth mu={MU.tolist()}, kappa={KAPPA}; {CHAINS} chains x {DRAWS} "
        f"draws after {TUNE} tuning steps"
    )
    print(
        f"  {_hardware()}; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )
    part_a = _part_a()
    part_b, conv_b = _part_b()
    part_c = _part_c()
    table = _Table()
    totals = _rows_a(table, part_a)
    _rows_b(table, part_b)
    _rows_c(table, part_a, conv_b, part_c)
    _rows_d(table, part_a, totals)
    table.print()
    load = os.getloadavg()
    print(f"  load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    post = part_a["pymc", HYPER_SIZES[0]]["warm"]
    print(
        f"  posterior means at {_n(HYPER_SIZES[0])} (pymc): kappa {post['kappa_mean']:.3f} "
        f"(truth {KAPPA}), mu {np.round(post['mu_mean'], 4).tolist()} (truth {MU.tolist()})"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, *rest = sys.argv[2:]
        if kind != "hyper":
            raise SystemExit(f"unknown worker {kind!r}")
        print("RESULT " + json.dumps(_worker_hyper(int(rest[0]), rest[1])), flush=True)
    else:
        main()
