"""Mutation testing of the maths and the data path (issue 15): one command, not run in CI.

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python benchmarks/mutation.py            # mutmut run --max-children 1, then scores
    .venv/bin/python benchmarks/mutation.py --report   # scores of the last run only
    .venv/bin/python benchmarks/mutation.py --sample 60  # 60 mutants per module (seeded)
    .venv/bin/python benchmarks/mutation.py --report --sample 60 --survivors  # untriaged
    .venv/bin/python benchmarks/mutation.py --confirm  # each triaged kill, re-checked

The configuration is ``[tool.mutmut]`` in pyproject.toml: the modules mutated (its
``only_mutate``: the maths, ``measures``, ``moments``, ``estimators``, ``_exact_kernels``,
``_exact_route``, ``exact``; the readers, ``readers``, ``files``, ``labels``, ``tables``,
``matrices``; ``summary`` and ``fitting``) and the tests of their mirrored test files
(``test_data`` and ``test_data_formats``, ``test_fit`` and ``test_fit_netcdf``,
``test_models`` for the catalog routes of ``fit``, ...): NUTS tests included (mutmut runs
only the tests that reach the mutated function, fastest first), slow-marked tests left out
except those also marked ``mutation``. mutmut 3 works in ``mutants/`` (git-ignored) and
re-runs only the mutants whose function changed since the last run; delete ``mutants/`` for a
fresh run. A full run (about 7900 mutants) at one worker takes several hours on 2 cores;
``--sample 60`` about an hour.

The score of a module is (killed + timeout) / (killed + timeout + survived), survivors triaged
as equivalent left out and mutants no selected test reaches counted as survived. Every
survivor has a row in ``benchmarks/mutation_triage.md``: ``equivalent`` with its reason (a
mutant that changes no observable result), ``killed`` by a test added after the run (named
first in the row; ``--confirm`` runs it with the mutant switched on, ``MUTANT_UNDER_TEST``,
and without), or ``outside selection``. ``run`` is the score the run recorded, ``after``
counts the re-killed survivors as killed. A timeout (mutmut counts it as killed) is shown
apart.
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
#: the mutated modules, as paths under ambppl/ without ".py" (pyproject's only_mutate)
MATHS = tuple(
    f"maths/{m}" for m in ("measures", "moments", "estimators", "_exact_kernels", "_exact_route")
)
OTHERS = (
    "maths/exact",
    *(f"data/{m}" for m in ("readers", "files", "labels", "tables", "matrices")),
    "analysis/summary",
    "inference/fitting",
)
#: mutmut 3's exit-code meanings (mutmut.stats.status_by_exit_code)
#: "no tests" (no selected test calls the function) counts as survived: nothing kills it.
STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    36: "timeout",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    5: "survived",
    33: "survived",
    34: "skipped",
    37: "killed",
    None: "not checked",
}


def verdicts(path: Path = TRIAGE) -> dict[str, tuple[str, str]]:
    """Mutant name -> (verdict, reason) of the triage file's table rows: ``equivalent``,
    ``killed`` (by the test named first in the reason, ``test_x.py::test_name``) or
    ``outside selection``."""
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.split("|")]
        if len(cells) > 5 and cells[1].startswith("ambppl."):
            out[cells[1]] = (cells[4].lower(), cells[5])
    return out


def killing_test(reason: str) -> str | None:
    """The pytest node id a triage reason names first (the file found under ``tests/``), if
    any."""
    match = re.search(r"(?:tests/)?(test_\w+\.py::[\w\[\]\-.]+)", reason)
    if not match:
        return None
    file, _, node = match.group(1).partition("::")
    found = sorted((ROOT / "tests").rglob(file))  # tests/ mirrors the package's subfolders
    return f"{found[0].relative_to(ROOT)}::{node}" if found else f"tests/{match.group(1)}"


def results(root: Path = ROOT, only: list[str] | None = None) -> dict[str, Counter]:
    """Per module: a Counter of statuses over the mutants in ``mutants/ambppl/*.py.meta``.

    A survivor of the run is ``equivalent`` where the triage says so, ``rekilled`` where the
    triage names a test (added after the run) that kills it (``--confirm`` checks each)."""
    out: dict[str, Counter] = {}
    triage = verdicts()
    for module in MATHS + OTHERS:
        meta = root / "mutants" / "ambppl" / f"{module}.py.meta"
        counts: Counter = Counter()
        if meta.is_file():
            data = json.loads(meta.read_text(encoding="utf-8"))
            for name, code in data["exit_code_by_key"].items():
                if only is not None and name not in only:
                    continue
                status = STATUS.get(code, "suspicious")
                verdict = triage.get(name, ("", ""))[0]
                if status == "survived" and verdict.startswith("equivalent"):
                    status = "equivalent"
                elif status == "survived" and verdict.startswith("killed"):
                    status = "rekilled"
                counts[status] += 1
        out[module] = counts
    return out


def report(root: Path = ROOT, only: list[str] | None = None) -> str:
    """Scores per module: ``run`` = (killed + timeout) / (killed + timeout + survived +
    rekilled) as the run left them, ``after`` counts the survivors killed by tests added
    after the run (``rekilled``) as killed; equivalent mutants are left out of both."""
    lines = [
        f"{'module':20s} {'mutants':>7s} {'killed':>6s} {'timeout':>7s} {'survived':>8s} "
        f"{'equiv':>5s} {'rekilled':>8s} {'other':>5s} {'run':>6s} {'after':>6s}"
    ]
    for module, c in results(root, only).items():
        total = sum(c.values())
        known = ("killed", "timeout", "survived", "equivalent", "rekilled")
        other = total - sum(c[k] for k in known)
        judged = c["killed"] + c["timeout"] + c["survived"] + c["rekilled"]
        run = after = "   -"
        if judged:
            run = f"{100 * (c['killed'] + c['timeout']) / judged:5.1f}%"
            after = f"{100 * (c['killed'] + c['timeout'] + c['rekilled']) / judged:5.1f}%"
        lines.append(
            f"{module:20s} {total:7d} {c['killed']:6d} {c['timeout']:7d} "
            f"{c['survived']:8d} {c['equivalent']:5d} {c['rekilled']:8d} {other:5d} "
            f"{run:>6s} {after:>6s}"
        )
    return "\n".join(lines)


def survivors(only: list[str] | None = None, root: Path = ROOT) -> list[str]:
    """Names of the surviving mutants not (yet) triaged."""
    names = []
    triage = verdicts()
    for module in MATHS + OTHERS:
        meta = root / "mutants" / "ambppl" / f"{module}.py.meta"
        if meta.is_file():
            data = json.loads(meta.read_text(encoding="utf-8"))
            names += [
                n
                for n, code in data["exit_code_by_key"].items()
                if STATUS.get(code) == "survived"
                and n not in triage
                and (only is None or n in only)
            ]
    return sorted(
        names, key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)]
    )


def confirm(root: Path = ROOT) -> list[str]:
    """Check every ``killed`` row of the triage: its test fails with the mutant switched on
    (``MUTANT_UNDER_TEST``) and passes without, run on the working tree's tests copied into a
    scratch copy of ``mutants/``. Returns one line per row."""
    import os
    import shutil
    import tempfile

    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "mutants"
        shutil.copytree(root / "mutants", work)
        shutil.copytree(root / "tests", work / "tests", dirs_exist_ok=True)
        for name, (verdict, reason) in verdicts().items():
            test = killing_test(reason) if verdict.startswith("killed") else None
            if test is None:
                continue
            codes = []
            for mutant in (name, ""):
                env = {**os.environ, "MUTANT_UNDER_TEST": mutant}
                proc = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", test],
                    cwd=work,
                    env=env,
                    capture_output=True,
                    check=False,
                )
                codes.append(proc.returncode)
            ok = codes[0] != 0 and codes[1] == 0
            lines.append(
                f"{'ok  ' if ok else 'FAIL'} {name}: {test} (exit {codes[0]} with the "
                f"mutant, {codes[1]} without)"
            )
    return lines


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
        names += [
            keys[i]
            for i in sorted(rng.choice(len(keys), min(per_module, len(keys)), replace=False))
        ]
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="only print the last run's scores")
    parser.add_argument("--survivors", action="store_true", help="list untriaged survivors")
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="run only this many mutants per module (seeded; needs mutants/)",
    )
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="check that each triage row's killing test kills its mutant",
    )
    parser.add_argument("mutants", nargs="*", help="mutant names or globs to (re)run")
    args = parser.parse_args(argv)
    chosen = sample(args.sample) if args.sample else None
    if args.confirm:
        lines = confirm()
        print("\n".join(lines))
        return int(any(line.startswith("FAIL") for line in lines))
    if not (args.report or args.survivors):
        mutmut = Path(sys.executable).with_name("mutmut")
        subprocess.run(
            [str(mutmut), "run", "--max-children", "1", *(chosen or args.mutants)],
            cwd=ROOT,
            check=False,
        )
    if args.survivors:
        print("\n".join(survivors(chosen)))
    print(report(only=chosen))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
