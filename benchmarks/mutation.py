"""Mutation testing of the maths and the data path (issue 15): one command, not run in CI.

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python benchmarks/mutation.py            # mutmut run --max-children 1, then scores
    .venv/bin/python benchmarks/mutation.py --report   # scores of the last run only
    .venv/bin/python benchmarks/mutation.py --sample 40  # 40 mutants per module (seeded)

The configuration is ``[tool.mutmut]`` in pyproject.toml: the nine modules mutated
(``measures``, ``moments``, ``estimators``, ``_exact_kernels``, ``_exact_route``, ``exact``,
``data``, ``summary``, ``fit``) and the tests of their mirrored test files (``test_data`` and
``test_data_formats``, ``test_fit`` and ``test_fit_netcdf``, ``test_models`` for the catalog
routes of ``fit``, ...): NUTS tests included (mutmut runs only the tests that reach the
mutated function, fastest first), slow-marked tests left out except those also marked
``mutation``. mutmut 3 works in ``mutants/`` (git-ignored) and re-runs only the mutants whose
function changed since the last run; delete ``mutants/`` for a fresh run. A full run (about
7900 mutants) at one worker takes several hours on 2 cores; ``--sample 60`` about an hour.

The score of a module is (killed + timeout) / (killed + timeout + survived), survivors triaged
as equivalent left out and mutants no selected test reaches counted as survived; the equivalent
mutants are the names listed in ``benchmarks/mutation_triage.md`` under "Equivalent", each with
its reason (a mutant that changes no observable result, e.g. a default argument that every
caller overrides). A timeout (mutmut counts it as killed) is shown apart.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRIAGE = ROOT / "benchmarks" / "mutation_triage.md"
MATHS = ("measures", "moments", "estimators", "_exact_kernels", "_exact_route")
OTHERS = ("exact", "data", "summary", "fit")
#: mutmut 3's exit-code meanings (mutmut.stats.status_by_exit_code)
#: "no tests" (no selected test calls the function) counts as survived: nothing kills it.
STATUS = {1: "killed", 3: "killed", 0: "survived", 36: "timeout", 24: "timeout", -24: "timeout",
          152: "timeout", 255: "timeout", 5: "survived", 33: "survived", 34: "skipped",
          37: "killed", None: "not checked"}


def equivalent_names(path: Path = TRIAGE) -> set[str]:
    """Mutant names in the triage file's table rows whose verdict is ``equivalent``."""
    if not path.is_file():
        return set()
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.split("|")]
        if len(cells) > 4 and cells[4].lower().startswith("equivalent"):
            names.add(cells[1])
    return names


def results(root: Path = ROOT, only: list[str] | None = None) -> dict[str, Counter]:
    """Per module: a Counter of statuses over the mutants in ``mutants/ambppl/*.py.meta``."""
    out: dict[str, Counter] = {}
    equivalent = equivalent_names()
    for module in MATHS + OTHERS:
        meta = root / "mutants" / "ambppl" / f"{module}.py.meta"
        counts: Counter = Counter()
        if meta.is_file():
            data = json.loads(meta.read_text(encoding="utf-8"))
            for name, code in data["exit_code_by_key"].items():
                if only is not None and name not in only:
                    continue
                status = STATUS.get(code, "suspicious")
                if status == "survived" and name in equivalent:
                    status = "equivalent"
                counts[status] += 1
        out[module] = counts
    return out


def report(root: Path = ROOT, only: list[str] | None = None) -> str:
    lines = [f"{'module':16s} {'mutants':>7s} {'killed':>6s} {'timeout':>7s} {'survived':>8s} "
             f"{'equiv':>5s} {'other':>5s} {'score':>6s}"]
    for module, c in results(root, only).items():
        total = sum(c.values())
        other = total - sum(c[k] for k in ("killed", "timeout", "survived", "equivalent"))
        judged = c["killed"] + c["timeout"] + c["survived"]
        score = f"{100 * (c['killed'] + c['timeout']) / judged:5.1f}%" if judged else "   -"
        lines.append(f"{module:16s} {total:7d} {c['killed']:6d} {c['timeout']:7d} "
                     f"{c['survived']:8d} {c['equivalent']:5d} {other:5d} {score:>6s}")
    return "\n".join(lines)


def survivors(only: list[str] | None = None, root: Path = ROOT) -> list[str]:
    """Names of the surviving mutants not (yet) triaged as equivalent."""
    names = []
    equivalent = equivalent_names()
    for module in MATHS + OTHERS:
        meta = root / "mutants" / "ambppl" / f"{module}.py.meta"
        if meta.is_file():
            data = json.loads(meta.read_text(encoding="utf-8"))
            names += [n for n, code in data["exit_code_by_key"].items()
                      if STATUS.get(code) == "survived" and n not in equivalent
                      and (only is None or n in only)]
    return sorted(names, key=lambda n: [int(t) if t.isdigit() else t
                                        for t in re.split(r"(\d+)", n)])


def sample(per_module: int, seed: int = 15, root: Path = ROOT) -> list[str]:
    """``per_module`` mutant names of each module, drawn without replacement (seeded), from
    the ``.meta`` files of a previous (possibly interrupted) run: a full run is ~6900 mutants,
    several hours at one worker, so before/after scores can be estimated on the same sample."""
    import numpy as np

    rng = np.random.default_rng(seed)
    names = []
    for module in MATHS + OTHERS:
        meta = root / "mutants" / "ambppl" / f"{module}.py.meta"
        keys = sorted(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
        names += [keys[i] for i in sorted(rng.choice(len(keys), min(per_module, len(keys)),
                                                     replace=False))]
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="only print the last run's scores")
    parser.add_argument("--survivors", action="store_true", help="list untriaged survivors")
    parser.add_argument("--sample", type=int, default=0,
                        help="run only this many mutants per module (seeded; needs mutants/)")
    parser.add_argument("mutants", nargs="*", help="mutant names or globs to (re)run")
    args = parser.parse_args(argv)
    chosen = sample(args.sample) if args.sample else None
    if not (args.report or args.survivors):
        mutmut = Path(sys.executable).with_name("mutmut")
        subprocess.run([str(mutmut), "run", "--max-children", "1", *(chosen or args.mutants)],
                       cwd=ROOT, check=False)
    if args.survivors:
        print("\n".join(survivors(chosen)))
    print(report(only=chosen))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
