"""Coverage of the collapsed ``hierarchical_dirichlet`` route's 94 % HDIs (simulation-based).

Over ``--datasets`` data sets (default 100), each simulated from truths **drawn from the
model's own prior** (its default parameters: ``mu ~ Dirichlet(1, ..., 1)``,
``kappa ~ HalfCauchy(K)``), then ``q_i ~ Dirichlet(kappa * mu)`` and
``counts_i ~ Multinomial(n, q_i)`` (default 200 items x 10 answers x 4 categories, the last
one can't-solve), the collapsed route is fitted (NUTS on ``(mu, kappa)`` with ``q``
integrated out, ``--chains`` x ``--draws`` after 1000 tuning steps, then one exact draw
``q_i ~ Dirichlet(kappa * mu + counts_i)`` per hyperparameter draw) and the script records
whether the truth lies inside the 94 % HDI (``arviz.hdi``, ``prob=0.94``):

* of ``kappa`` and of each ``mu_k``: one yes/no per data set;
* of each item's ``amb(q_i)``: the share of items whose true ``amb`` lies in their HDI.

With truths drawn from the prior, a correct posterior covers its truth 94 % of the time on
average over data sets (any 94 % credible set does). Printed: each coverage with its
binomial standard error; for the items also the standard error over data sets (items of one
data set share the hyperparameters, so they are not independent); the data sets that
missed ``fit``'s convergence standard; timings.

``ambppl.fit`` builds a new PyMC model per call (``hyper_model`` holds the count
statistics as ``pm.Data``, so PyTensor's compilation cache shortens that to ~2-4 s, but
nutpie still compiles per model). The default ``--route reuse`` therefore builds the same
program once with the
statistics as ``pm.Data`` (every data set has the same shape: one weight per category and
count 1..n, one total) and checks that its log density equals ``hyper_model``'s; nutpie
compiles it once and gets each data set with ``with_data``; PyMC's NUTS (``--sampler
pymc``) still recompiles inside every ``pymc.sample`` call (in-process caches make that
about 2 s). The per-item draws use ``fit``'s own Dirichlet kernel. ``--fit-check`` data
sets (default 3) are also fitted with ``ambppl.fit`` itself, to time it per data set and to
compare its hyperparameter posterior means with the reused model's (z = difference over the
combined Monte Carlo standard error); ``--route fit`` runs every data set through ``fit``.

Run: ``.venv/bin/python benchmarks/recovery_hierarchical.py [--datasets 100]``
(nutpie where it is installed: it compiles once here; about 2 minutes on 2
cores with nutpie: 0.7 s per data set plus one 10 s compilation, and 10 s for each
``--fit-check`` data set; with ``--sampler pymc`` about 5 s per data set).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import logging
import os
import time
import warnings
from typing import Any

import numpy as np
import xarray as xr
from bench_hierarchical import _hardware  # this folder is on sys.path when run as a script

import ambppl
from ambppl.inference.convergence import check_convergence
from ambppl.maths.draws import dirichlet_draws

PROB = 0.94
TUNE = 1000
#: The model's own target_accept (its info record's nuts_defaults), as fit uses it.
TARGET_ACCEPT = ambppl.get_model("hierarchical_dirichlet").info["nuts_defaults"]["target_accept"]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100, help="number of data sets (100)")
    parser.add_argument("--items", type=int, default=200, help="items per data set (200)")
    parser.add_argument("--answers", type=int, default=10, help="answers per item (10)")
    parser.add_argument(
        "--categories", type=int, default=4, help="categories, the last one can't-solve (4)"
    )
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain (1000)")
    parser.add_argument("--chains", type=int, default=4, help="chains (4)")
    default_sampler = "nutpie" if importlib.util.find_spec("nutpie") else "pymc"
    parser.add_argument(
        "--sampler",
        choices=("nutpie", "pymc"),
        default=default_sampler,
        help=f"NUTS implementation ({default_sampler}: fit's default here)",
    )
    parser.add_argument(
        "--route",
        choices=("reuse", "fit"),
        default="reuse",
        help="reuse one compiled model (default) or call ambppl.fit per set",
    )
    parser.add_argument(
        "--fit-check", type=int, default=3, help="data sets also fitted with ambppl.fit (3)"
    )
    parser.add_argument("--seed", type=int, default=20261126, help="seed (20261126)")
    args = parser.parse_args(argv)
    if args.datasets < 1 or args.items < 1 or args.answers < 1 or args.categories < 3:
        parser.error("need at least 1 data set, item and answer and 3 categories")
    return args


def _prior() -> tuple[float, float]:
    """The model's default prior: mu's concentration and kappa's scale over K (its median)."""
    params = ambppl.get_model("hierarchical_dirichlet").info["parameters"]
    return float(params["mu_prior"]["default"]), float(params["kappa_scale"]["default"])


def _simulate(rng: np.random.Generator, args: argparse.Namespace) -> dict:
    """Truths from the prior and the counts they generate."""
    k = args.categories
    mu_prior, kappa_scale = _prior()
    mu = rng.dirichlet(np.full(k, mu_prior))
    kappa = float(k * kappa_scale * abs(rng.standard_cauchy()))  # HalfCauchy(K * kappa_scale)
    # the package's Dirichlet draws: exact in log space where every gamma variate underflows
    q = dirichlet_draws(rng, np.tile(kappa * mu, (args.items, 1)), 1)[0]
    if not np.all(np.isfinite(q)):
        raise RuntimeError(f"non-finite Dirichlet draws at kappa*mu={kappa * mu}")
    values = rng.multinomial(args.answers, q)
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={
            "item": np.arange(args.items),
            "category": [f"c{j}" for j in range(k - 1)] + ["cs"],
        },
        attrs={"cant_solve": "cs"},
    )
    return {"mu": mu, "kappa": kappa, "amb": ambppl.amb(q, cant_solve=-1), "counts": counts}


def _pair_weights(values: np.ndarray, n_answers: int) -> np.ndarray:
    """Items with c answers in category k, for c = 1..n (flattened category-major)."""
    return (
        np.stack(
            [np.bincount(values[:, k], minlength=n_answers + 1)[1:] for k in range(values.shape[1])]
        )
        .ravel()
        .astype(np.float64)
    )


def _reusable_model(args: argparse.Namespace):
    """``hyper_model``'s program with the count statistics as ``pm.Data``."""
    import pymc as pm

    from ambppl.inference.modeling import CountStatistics, dirichlet_multinomial_logp

    k, n = args.categories, args.answers
    mu_prior, kappa_scale = _prior()
    labels = [f"c{j}" for j in range(k - 1)] + ["cs"]
    with pm.Model(coords={"category": labels}) as model:
        weight = pm.Data("pair_weight", np.zeros(k * n))
        mu = pm.Dirichlet("mu", a=np.full(k, mu_prior), dims="category")
        kappa = pm.HalfCauchy("kappa", beta=k * kappa_scale)
        stats = CountStatistics(
            category=np.repeat(np.arange(k), n),
            value=np.tile(np.arange(1, n + 1), k),
            weight=weight,
            total=np.array([n]),
            total_weight=np.array([args.items]),
            n_items=args.items,
        )
        pm.Potential("log_marginal", dirichlet_multinomial_logp(stats, kappa * mu))
    return model


def _check_same_density(model, data: dict, args: argparse.Namespace) -> float:
    """Largest |logp difference| between the reused model and ``hyper_model`` at 5 points."""
    import pymc as pm

    hd = ambppl.get_model("hierarchical_dirichlet").module
    reference = hd.hyper_model(data["counts"])
    pm.set_data({"pair_weight": _pair_weights(data["counts"].values, args.answers)}, model=model)
    ours, theirs = model.compile_logp(), reference.compile_logp()
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(5):
        point = {
            "mu_simplex__": rng.normal(size=args.categories - 1),
            "kappa_log__": np.asarray(rng.normal(np.log(args.categories), 1.5)),
        }
        a, b = float(ours(point)), float(theirs(point))
        worst = max(worst, abs(a - b) / max(1.0, abs(b)))
    if worst > 1e-10:
        raise RuntimeError(f"the reused model's log density differs from hyper_model's: {worst}")
    return worst


class _Sampler:
    """NUTS on the reused model: nutpie compiles once; PyMC recompiles per call."""

    def __init__(self, model, args: argparse.Namespace) -> None:
        self.model, self.args = model, args
        self.compile_time = 0.0
        if args.sampler == "nutpie":
            import nutpie

            t = time.perf_counter()
            self.compiled = nutpie.compile_pymc_model(model)
            self.compile_time = time.perf_counter() - t

    def __call__(self, weights: np.ndarray, seed: int):
        import pymc as pm

        args = self.args
        if args.sampler == "nutpie":
            import nutpie

            return nutpie.sample(
                self.compiled.with_data(pair_weight=weights),
                draws=args.draws,
                tune=TUNE,
                target_accept=TARGET_ACCEPT,
                chains=args.chains,
                seed=seed,
                progress_bar=False,
            )
        pm.set_data({"pair_weight": weights}, model=self.model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pm.sample(
                draws=args.draws,
                tune=TUNE,
                target_accept=TARGET_ACCEPT,
                chains=args.chains,
                random_seed=seed,
                progressbar=False,
                nuts_sampler="pymc",
                model=self.model,
                compute_convergence_checks=False,
            )


def _convergence(tree) -> dict:
    """``fit``'s convergence record of a hyperparameter trace."""
    tree = tree.copy()
    entry = ambppl.get_model("hierarchical_dirichlet")
    with warnings.catch_warnings():  # the collapsed route's check: on the hyperparameters
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        check_convergence(tree, list(entry.hyperparameters), model=entry.name)
    return json.loads(tree.attrs["convergence"])


def _amb_draws(
    rng: np.random.Generator, mu: np.ndarray, kappa: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """amb of one exact draw q_i ~ Dirichlet(kappa * mu + counts_i) per hyperparameter draw."""
    conc = kappa[..., None] * mu
    out = np.empty((*kappa.shape, values.shape[0]))
    for c in range(conc.shape[0]):
        q = dirichlet_draws(rng, conc[c][:, None, :] + values[None], conc.shape[1])
        out[c] = ambppl.amb(q, cant_solve=-1)
    return out


def _inside(draws: xr.DataArray, truth: Any) -> np.ndarray:
    """Whether the truth lies in the 94 % HDI (one per entry beyond chain and draw)."""
    import arviz as az

    hdi = az.hdi(draws, prob=PROB)
    lo, hi = hdi.sel(ci_bound="lower").values, hdi.sel(ci_bound="upper").values
    return (lo <= truth) & (truth <= hi)


def _fit_route(data: dict, args: argparse.Namespace, seed: int) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(
            data["counts"],
            "hierarchical_dirichlet",
            var_names=["amb"],
            log_likelihood=False,
            draws=args.draws,
            chains=args.chains,
            sampler=args.sampler,
            random_seed=seed,
        )
    post = result["posterior"]
    return post["mu"], post["kappa"], post["amb"], json.loads(result.attrs["convergence"])


def _hyper_dataarrays(tree) -> tuple[xr.DataArray, xr.DataArray]:
    post = tree["posterior"]
    return post["mu"], post["kappa"]


def _z_difference(a: xr.DataArray, b: xr.DataArray) -> float:
    """Largest |mean difference| / combined MCSE over the entries of a and b."""
    import arviz as az

    ma = az.mcse(xr.Dataset({"x": a.drop_vars(["chain", "draw"], errors="ignore")}))["x"]
    mb = az.mcse(xr.Dataset({"x": b.drop_vars(["chain", "draw"], errors="ignore")}))["x"]
    diff = a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values
    return float(np.max(np.abs(diff) / np.sqrt(ma.values**2 + mb.values**2)))


def _se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n)) if n else float("nan")


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    import pymc  # noqa: F401  (pymc sets its logger to INFO when imported)

    logging.getLogger("pymc").setLevel(logging.WARNING)
    load = os.getloadavg()
    print(
        f"recovery, hierarchical_dirichlet collapsed: {args.datasets} data sets x {args.items} "
        f"items x {args.answers} answers x {args.categories} categories (last = can't solve); "
        f"truths drawn from the model's prior; {args.chains} chains x {args.draws} draws after "
        f"{TUNE} tuning steps, sampler {args.sampler}, route {args.route}; seed {args.seed}"
    )
    print(
        f"  {_hardware()}; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )
    rng = np.random.default_rng(args.seed)
    t_start = time.perf_counter()
    sets = [_simulate(rng, args) for _ in range(args.datasets)]
    seeds = rng.integers(2**31 - 1, size=args.datasets)
    draw_rng = np.random.default_rng(rng.integers(2**63))

    sampler = None
    if args.route == "reuse":
        t = time.perf_counter()
        model = _reusable_model(args)
        worst = _check_same_density(model, sets[0], args)
        t_check = time.perf_counter() - t
        sampler = _Sampler(model, args)
        print(
            f"  reused model: log density equals hyper_model's (worst relative difference "
            f"{worst:.1e}; build and check {t_check:.1f} s); compiled once in "
            f"{sampler.compile_time:.1f} s"
            + (" (PyMC's NUTS recompiles per call)" if args.sampler == "pymc" else ""),
            flush=True,
        )

    kappa_in = np.zeros(args.datasets, dtype=bool)
    mu_in = np.zeros((args.datasets, args.categories), dtype=bool)
    amb_share = np.zeros(args.datasets)
    amb_covered = np.zeros(args.datasets, dtype=np.int64)
    passed = np.zeros(args.datasets, dtype=bool)
    divergent_sets = 0
    kappa_true = np.array([d["kappa"] for d in sets])
    t_sets = []
    fit_checks = []
    for i, data in enumerate(sets):
        t = time.perf_counter()
        values = data["counts"].values
        if args.route == "fit":
            mu, kappa, amb, conv = _fit_route(data, args, int(seeds[i]))
        else:
            tree = sampler(_pair_weights(values, args.answers), int(seeds[i]))
            mu, kappa = _hyper_dataarrays(tree)
            conv = _convergence(tree)
            amb = xr.DataArray(
                _amb_draws(draw_rng, mu.values, kappa.values, values),
                dims=("chain", "draw", "item"),
            )
        kappa_in[i] = _inside(kappa, data["kappa"])
        mu_in[i] = _inside(mu, data["mu"])
        amb_in = _inside(amb, data["amb"])
        amb_share[i] = amb_in.mean()
        amb_covered[i] = amb_in.sum()
        passed[i] = conv["passed"]
        divergent_sets += conv.get("divergences", 0) > 0
        t_sets.append(time.perf_counter() - t)
        if args.route == "reuse" and i < args.fit_check:
            t = time.perf_counter()
            f_mu, f_kappa, _, _ = _fit_route(data, args, int(seeds[i]) + 1)
            t_fit = time.perf_counter() - t
            z = max(_z_difference(f_kappa, kappa), _z_difference(f_mu, mu))
            fit_checks.append((t_fit, z))
        if (i + 1) % 25 == 0:
            print(f"  [{i + 1} data sets, {time.perf_counter() - t_start:.0f} s]", flush=True)

    n = args.datasets
    n_items = n * args.items
    print()
    print(f"  coverage of the {PROB:.0%} HDI (nominal {PROB:.2f}); SE = binomial standard error")
    head = ("quantity", "covered", "of", "coverage", "SE", "|cov - 0.94| / SE")
    rows = [("kappa", int(kappa_in.sum()), n, kappa_in.mean(), _se(kappa_in.mean(), n))]
    for k in range(args.categories):
        label = "cs" if k == args.categories - 1 else f"c{k}"
        p = mu_in[:, k].mean()
        rows.append((f"mu[{label}]", int(mu_in[:, k].sum()), n, p, _se(p, n)))
    p_mu = mu_in.mean()
    rows.append(("mu, all categories", int(mu_in.sum()), mu_in.size, p_mu, _se(p_mu, mu_in.size)))
    covered_items = int(amb_covered.sum())
    p_amb = covered_items / n_items
    rows.append(("amb(q_i), all items", covered_items, n_items, p_amb, _se(p_amb, n_items)))
    print("  " + "  ".join(f"{h:>20}" if j == 0 else f"{h:>9}" for j, h in enumerate(head)))
    for name, cov, tot, p, se in rows:
        print(
            f"  {name:>20}  {cov:>9}  {tot:>9}  {p:>9.3f}  {se:>9.3f}  "
            f"{abs(p - PROB) / se if se else float('nan'):>9.1f}"
        )
    se_sets = float(amb_share.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    print(
        f"  amb(q_i): mean per-data-set coverage {amb_share.mean():.3f}, SE over data sets "
        f"{se_sets:.3f} (items within a data set are not independent); lowest per-set "
        f"coverage {amb_share.min():.3f}"
    )
    terciles = np.quantile(kappa_true, [1 / 3, 2 / 3])
    groups = np.digitize(kappa_true, terciles)
    parts = []
    for g, name in enumerate(("small", "middle", "large")):
        sel = groups == g
        if not sel.any():
            continue
        parts.append(
            f"{name} kappa ({kappa_true[sel].min():.2g}-{kappa_true[sel].max():.2g}): "
            f"kappa {kappa_in[sel].mean():.2f}, mu {mu_in[sel].mean():.2f}, amb "
            f"{amb_share[sel].mean():.3f}"
        )
    print("  by true kappa, terciles of the data sets: " + "; ".join(parts))
    print(
        f"  convergence standard (R-hat <= 1.01, ESS >= 400, no divergences) missed by "
        f"{int((~passed).sum())} of {n} data sets ({divergent_sets} with divergences); "
        f"coverage of kappa among the passing ones "
        f"{kappa_in[passed].mean() if passed.any() else float('nan'):.3f}"
    )
    total = time.perf_counter() - t_start
    print(
        f"  time: {total:.0f} s in all; per data set {np.mean(t_sets):.2f} s (median "
        f"{np.median(t_sets):.2f} s: NUTS, exact draws, HDIs)"
        + (
            f", plus one compilation of {sampler.compile_time:.1f} s"
            if args.route == "reuse" and args.sampler == "nutpie"
            else ""
        )
    )
    if fit_checks:
        t_fit = [c[0] for c in fit_checks]
        z = [c[1] for c in fit_checks]
        print(
            f"  ambppl.fit on the first {len(fit_checks)} data sets: {np.mean(t_fit):.1f} s per "
            f"data set (builds and compiles each time); its posterior means of mu and kappa "
            f"vs the reused model's: largest |z| {max(z):.1f}"
        )
    load = os.getloadavg()
    print(f"  load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
