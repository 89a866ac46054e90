"""The accuracy map of ``ambppl.maths.approx``: worst CDF error of the moment-matched families.

Run ``.venv/bin/python benchmarks/accuracy_map.py`` (16 minutes on one busy core); it
rewrites ``ambppl/maths/approx_accuracy.json`` and prints the table. ``--draws N`` and ``--out
PATH`` change the number of reference draws (default 10^6) and the output file; ``--show``
prints the stored map; ``--only SHAPE`` recomputes one shape (same seeds) and merges it;
``--validate`` checks the rule on 60 random posteriors unlike the map's shapes (20 s).

For every cell (K = length of the alpha vector, alpha_0 on a log grid from 1 to 10^4, alpha
shape) the script draws ``n`` exact Dirichlet vectors (``numpy.random.Generator.dirichlet``,
seed fixed per cell), pushes them through the measures' definitions (written out here, not
taken from ambppl) and records the Kolmogorov-Smirnov distance
``sup_x |F_approx(x) - F_n(x)|`` of each family of :mod:`ambppl.maths.approx` (``"beta"``, and
``"pearson"`` with its fall-back to ``"beta"``). The supremum is taken over 4001 empirical
quantiles ``x_(i)`` (both sides of each jump), so it can miss at most 1/4000 between them.
One set of draws serves both readings of the last category: can't-solve (``cs``) and an
ordinary class (``nocs``); the shape "heavy_cs" is read only with can't-solve.

Shapes (the last entry is the one read as can't-solve; ``s = min(0.5, 0.1 alpha_0 / m)`` is a
prior-like small concentration shared by the ``m`` minor entries):

* ``symmetric``: all K entries equal;
* ``dominant``: every minor entry ``s``, the first the rest (all answers agree);
* ``heavy_cs``: the last (can't-solve) 0.5 alpha_0, the other K - 1 equal;
* ``tie``: the first two split alpha_0 - (K - 2) s, the K - 2 others ``s`` (a two-way tie
  with a rare can't-solve: amb's density is infinite at 1/2 when alpha_cs <= 1/2, ERRATA 4);
* ``near_tie``: as ``tie`` but the first two differ by a factor ``(1 + d) / (1 - d)``,
  ``d = min(0.5, 1 / sqrt(alpha_0))`` (about one to two posterior sd apart);
* ``graded``: entries proportional to K, K - 1, ..., 1;
* ``leader``: as ``tie`` but the first two split 2 : 1 (a clear winner and a runner-up with
  prior-sized minor classes: the common crowd-labelling posterior).

Each cell also stores the moment mismatch (``ambppl.maths.approx.moment_mismatch``) of each
family for that alpha: the rule of ``ambppl.maths.approx`` rejects rows whose mismatch is above
``MISMATCH_MAX`` and takes the worst case only over the shapes that pass.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ambppl.maths.approx import MAP_FILE, fit_beta, fit_pearson, moment_mismatch, support  # noqa: E402
from ambppl.maths.moments import dirichlet_moments  # noqa: E402

K_GRID = [3, 4, 5, 6, 8, 10, 12, 15, 20]
ALPHA0_GRID = [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0]
SHAPES = ("symmetric", "dominant", "heavy_cs", "tie", "near_tie", "graded", "leader")
N_DRAWS = 1_000_000
CHUNK = 200_000
N_POINTS = 4001
#: 99 % quantile of the KS distance of n exact draws from their own law: 1.63 / sqrt(n).
KS_99 = 1.63


def shape_alpha(shape: str, k: int, alpha0: float) -> np.ndarray:
    """The alpha vector of a shape (weights as in the module docstring)."""
    if shape == "symmetric":
        return np.full(k, alpha0 / k)
    if shape == "dominant":
        small = min(0.5, 0.1 * alpha0 / (k - 1))
        return np.array([alpha0 - (k - 1) * small] + [small] * (k - 1))
    if shape == "heavy_cs":
        return np.array([0.5 * alpha0 / (k - 1)] * (k - 1) + [0.5 * alpha0])
    if shape in ("tie", "near_tie"):
        small = min(0.5, 0.1 * alpha0 / (k - 2))
        d = min(0.5, 1.0 / np.sqrt(alpha0)) if shape == "near_tie" else 0.0
        half = (alpha0 - (k - 2) * small) / 2
        return np.array([half * (1 + d), half * (1 - d)] + [small] * (k - 2))
    if shape == "leader":
        small = min(0.5, 0.1 * alpha0 / (k - 2))
        rest = alpha0 - (k - 2) * small
        return np.array([rest * 2 / 3, rest / 3] + [small] * (k - 2))
    if shape == "graded":
        w = np.arange(k, 0, -1, dtype=float)
        return alpha0 * w / w.sum()
    raise ValueError(f"shape must be one of {SHAPES}, but got {shape!r}")


def reference_draws(alpha: np.ndarray, n: int, seed: int) -> dict[str, np.ndarray]:
    """Measures of ``n`` exact Dirichlet draws, keys ``"amb|cs"``, ``"modified|nocs"`` ...

    Written from the definitions (measures.py): with proper entries q_1..q_C, b = sum q_k,
    amb = 1 - sum q_k^2 / b, modified = q_cs + C/(C-1) (b - sum q_k^2 / b).
    """
    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {}
    k = alpha.size
    for start in range(0, n, CHUNK):
        q = rng.dirichlet(alpha, size=min(CHUNK, n - start))
        for cs in (True, False):
            proper = q[:, :-1] if cs else q
            c = k - 1 if cs else k
            b = proper.sum(axis=1)
            # b = 0 (every proper entry underflowed: q_cs = 1) has flip part 0, amb = 1
            b_safe = np.where(b > 0, b, 1.0)
            flip = b - np.einsum("ij,ij->i", proper, proper) / b_safe
            q_cs = q[:, -1] if cs else 0.0
            tag = "cs" if cs else "nocs"
            out.setdefault(f"amb|{tag}", []).append(q_cs + flip)
            if c >= 2:
                out.setdefault(f"modified|{tag}", []).append(q_cs + c / (c - 1.0) * flip)
    return {key: np.sort(np.concatenate(v)) for key, v in out.items()}


def ks_distance(params: tuple, sorted_draws: np.ndarray) -> float:
    """``sup |F(x) - F_n(x)|`` over N_POINTS empirical quantiles, both sides of each jump."""
    import scipy.special as sc

    a, b, lo, hi = (float(p) for p in params)
    n = sorted_draws.size
    idx = np.unique(np.linspace(0, n - 1, N_POINTS).astype(np.int64))
    x = sorted_draws[idx]
    f = sc.betainc(a, b, np.clip((x - lo) / (hi - lo), 0.0, 1.0))
    return float(max(np.max(f - idx / n), np.max((idx + 1) / n - f)))


def family_params(alpha: np.ndarray, measure: str, cs: bool) -> dict[str, tuple]:
    """Fitted parameters and moment mismatch of both families for one alpha vector."""
    m = dirichlet_moments(alpha, measure, order=6, cant_solve=-1 if cs else None)
    lo, hi = support(measure, alpha.size - cs, cs)
    beta = fit_beta(m.mean, m.var, lo, hi)
    pear, ok = fit_pearson(m.mean, m.var, m.skewness, m.excess_kurtosis)
    fits = {"beta": beta, "pearson": pear if bool(ok) else beta}
    return {name: (p, float(moment_mismatch(p, m.central))) for name, p in fits.items()}


def measure_cell(shape: str, k: int, alpha0: float, n: int, seed: int) -> dict[str, dict]:
    """``{"amb|cs": {"beta": (ks, mismatch), "pearson": (ks, mismatch)}, ...}`` of one cell."""
    alpha = shape_alpha(shape, k, alpha0)
    draws = reference_draws(alpha, n, seed)
    out: dict[str, dict] = {}
    for key, values in draws.items():
        measure, tag = key.split("|")
        if shape == "heavy_cs" and tag == "nocs":
            continue
        params = family_params(alpha, measure, tag == "cs")
        out[key] = {
            name: (ks_distance(fit, values), mismatch) for name, (fit, mismatch) in params.items()
        }
    return out


def cell_seed(shape: str, k: int, alpha0: float) -> int:
    """Fixed seed per cell (reproducible cell by cell)."""
    return 20260 + 1000 * SHAPES.index(shape) + 37 * k + round(10 * math.log10(alpha0))


def build(n: int, shapes: tuple[str, ...] = SHAPES) -> dict:
    keys = ("amb|cs", "amb|nocs", "modified|cs", "modified|nocs")
    tables: dict[str, dict] = {"ks": {}, "mismatch": {}}
    for what in tables:
        for key in keys:
            tables[what][key] = {
                fam: {
                    shape: np.full((len(K_GRID), len(ALPHA0_GRID)), np.nan)
                    for shape in shapes
                    if not (shape == "heavy_cs" and key.endswith("nocs"))
                }
                for fam in ("beta", "pearson")
            }
    for shape in shapes:
        for i, k in enumerate(K_GRID):
            for j, a0 in enumerate(ALPHA0_GRID):
                cell = measure_cell(shape, k, a0, n, cell_seed(shape, k, a0))
                for key, per_family in cell.items():
                    for fam, (d, mismatch) in per_family.items():
                        tables["ks"][key][fam][shape][i, j] = d
                        tables["mismatch"][key][fam][shape][i, j] = mismatch
            print(f"{shape} K={k} done", flush=True)
    for what, digits in (("ks", 5), ("mismatch", 4)):
        for per_family in tables[what].values():
            for per_shape in per_family.values():
                for shape, arr in per_shape.items():
                    per_shape[shape] = [
                        [round(float(v), digits) if np.isfinite(v) else 1e9 for v in row]
                        for row in arr
                    ]
    return {
        "description": (
            "ks[measure|cs or nocs][family][shape]: K x alpha0 table of the KS distance "
            "sup|F_approx - F_n| of ambppl.maths.approx's families against n exact Dirichlet "
            "draws; "
            "mismatch[...]: the family's moment mismatch (ambppl.maths.approx.moment_mismatch) at "
            "the same alpha. Made by benchmarks/accuracy_map.py."
        ),
        "n_draws": n,
        "mc_allowance": round(KS_99 / np.sqrt(n), 5),
        "K": K_GRID,
        "alpha0": ALPHA0_GRID,
        "shapes": list(shapes),
        **tables,
    }


def print_table(data: dict) -> None:
    """The rule's numbers: worst over passing shapes + MC allowance, and the family picked.

    Cells print as ``error``, the family (b = beta, p = pearson) and how many shapes passed
    the moment check; ``inf`` where none did. A first set of tables ignores the check.
    """
    from ambppl.maths.approx import MISMATCH_MAX, worst_over_shapes

    a0 = data["alpha0"]
    for check in (False, True):
        for key in data["ks"]:
            worst, passing = {}, {}
            for fam in ("beta", "pearson"):
                limit = MISMATCH_MAX[fam] if check else np.inf
                worst[fam] = worst_over_shapes(data, key, fam, limit) + data["mc_allowance"]
                mm = np.array(list(data["mismatch"][key][fam].values()))
                passing[fam] = np.sum(mm <= limit, axis=0)
            pick = worst["pearson"] < worst["beta"]
            best = np.where(pick, worst["pearson"], worst["beta"])
            count = np.where(pick, passing["pearson"], passing["beta"])
            label = "shapes passing the moment check" if check else "all shapes"
            print(f"\n{key}: worst CDF error over {label} + MC allowance")
            print("K \\ a0 " + " ".join(f"{x:>10g}" for x in a0))
            for i, k in enumerate(data["K"]):
                cells = []
                for j in range(len(a0)):
                    fam = "p" if pick[i, j] else "b"
                    if np.isfinite(best[i, j]):
                        cells.append(f"{best[i, j]:7.4f}{fam}{count[i, j]}")
                    else:
                        cells.append("       inf")
                print(f"{k:>6} " + " ".join(cells))


def validate(n_cases: int = 60, n: int = 200_000, seed: int = 11) -> list[tuple]:
    """Check the rule on random posteriors unlike the map's shapes (the numbers on
    docs/maths/closed_forms.md).

    ``alpha = Dirichlet(c, ..., c) * alpha_0 + 0.5`` with K uniform on 3..20, alpha_0
    log-uniform on [10, 10^4] and c in {0.3, 1, 3}; each measure, with and without
    can't-solve, against ``n`` exact draws. Prints how many rows were trusted and the
    trusted rows whose measured KS distance exceeds ``max_error + 1.63 / sqrt(n)``.
    """
    from ambppl.maths.approx import approximate_distribution

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_cases):
        k = int(rng.integers(3, 21))
        alpha0 = float(np.exp(rng.uniform(np.log(10.0), np.log(1e4))))
        conc = rng.choice([0.3, 1.0, 3.0])
        alpha = rng.dirichlet(np.full(k, conc)) * alpha0 + 0.5
        draws = reference_draws(alpha, n, int(rng.integers(2**31)))
        for key, values in draws.items():
            measure, tag = key.split("|")
            cs = -1 if tag == "cs" else None
            d = approximate_distribution(alpha, measure, cant_solve=cs)
            ks = ks_distance((d.a, d.b, d.lo, d.hi), values)
            rows.append((k, round(alpha0), key, bool(d.accurate), float(d.max_error), ks))
    trusted = [r for r in rows if r[3]]
    bad = [r for r in trusted if r[5] > r[4] + KS_99 / np.sqrt(n)]
    worst = max((r[5] for r in trusted), default=float("nan"))
    print(f"trusted {len(trusted)} of {len(rows)}; worst measured KS {worst:.4f}; over: {bad}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=N_DRAWS)
    parser.add_argument("--out", type=Path, default=MAP_FILE)
    parser.add_argument("--show", action="store_true", help="print the stored map and exit")
    parser.add_argument(
        "--only",
        choices=SHAPES,
        help="recompute this shape only and merge it into the stored map (same seeds)",
    )
    parser.add_argument(
        "--validate", action="store_true", help="check the rule on random posteriors and exit"
    )
    args = parser.parse_args(argv)
    if args.validate:
        validate()
        return 0
    if args.show:
        print_table(json.loads(args.out.read_text()))
        return 0
    t0 = time.perf_counter()
    if args.only:
        data = json.loads(args.out.read_text())
        if data["n_draws"] != args.draws:
            raise SystemExit(f"--draws must match the stored map's {data['n_draws']}")
        part = build(args.draws, shapes=(args.only,))
        for what in ("ks", "mismatch"):
            for key, per_family in part[what].items():
                for fam, per_shape in per_family.items():
                    data[what][key][fam].update(per_shape)
        data["shapes"] = [s for s in SHAPES if s in data["shapes"] or s == args.only]
        data.setdefault("runtime_parts_s", {})[args.only] = round(time.perf_counter() - t0, 1)
    else:
        data = build(args.draws)
        data["runtime_s"] = round(time.perf_counter() - t0, 1)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print_table(data)
    print(f"\nwrote {args.out} in {round(time.perf_counter() - t0, 1)} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
