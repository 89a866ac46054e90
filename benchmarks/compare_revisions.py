"""Exact two-class posterior: this working tree against another git revision, in one process.

Run: ``.venv/bin/python benchmarks/compare_revisions.py REV [--rounds N] [--only TEXT]``.

The package as of ``REV`` is exported (``git archive``) into a temporary folder under the
name ``ambppl_rev`` and imported beside the working tree's ``ambppl``. Each round times the
revision and the working tree back to back on the same 512-point grid, so both see the
same machine state; the table gives each side's minimum and the median of the per-round
ratios (new / revision), which is far steadier on a noisy machine than comparing two
separate benchmark runs (this VM's speed drifts by up to 1.6x between runs). It also prints
the largest difference between the two sides' values (log pdf relative, cdf absolute).
"""

from __future__ import annotations

import argparse
import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GRID = np.linspace(0.0, 1.0, 514)[1:-1]
CASES = [
    ((1e4, 1e4, 1e4), "amb"),
    ((1e4, 1e4, 1e4), "old"),
    ((0.3, 2.7, 0.45), "amb"),
    ((150.5, 20.25, 3.3), "modified"),
    ((150.5, 20.25, 3.3), "amb"),
    ((6.0, 6.0, 6.0), "amb"),
    ((6.0, 1.0, 1.0), "amb"),
    ((31.0, 1.0, 1.0), "amb"),
]


def export(rev: str, dest: Path) -> None:
    """``ambppl/`` as of ``rev`` into ``dest/ambppl_rev``, its imports renamed."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "ambppl"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    (dest / "ambppl").rename(dest / "ambppl_rev")
    for path in (dest / "ambppl_rev").rglob("*.py"):
        text = path.read_text()
        path.write_text(re.sub(r"\bambppl\b(?!_rev)", "ambppl_rev", text))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="git revision to compare with (e.g. HEAD~3)")
    parser.add_argument("--rounds", type=int, default=11, help="timing rounds per case")
    parser.add_argument("--only", default="", help="only cases whose text contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        export(args.rev, Path(tmp))
        sys.path.insert(0, tmp)
        old = importlib.import_module("ambppl_rev")
        new = importlib.import_module("ambppl")
        print(f"512-point grid, {args.rounds} rounds; revision {args.rev} against the working tree")
        print(
            f"{'alpha':>22} {'measure':>8} {'':>4} {'rev ms':>8} {'new ms':>8} "
            f"{'median new/rev':>15} {'max diff':>9}"
        )
        for alpha, measure in CASES:
            if args.only not in f"{alpha} {measure}":
                continue
            for kind in ("pdf", "cdf"):
                name = "logpdf" if kind == "pdf" else "cdf"
                f_old = getattr(old.ambiguity_posterior(alpha, measure), name)
                f_new = getattr(new.ambiguity_posterior(alpha, measure), name)
                v_old, v_new = f_old(GRID), f_new(GRID)
                with np.errstate(invalid="ignore"):
                    diff = np.where(v_old == v_new, 0.0, v_new - v_old)
                diff = np.abs(np.expm1(diff) if kind == "pdf" else diff)
                t_old, t_new = [], []
                for _ in range(args.rounds):
                    t0 = time.perf_counter()
                    f_old(GRID)
                    t1 = time.perf_counter()
                    f_new(GRID)
                    t2 = time.perf_counter()
                    t_old.append(t1 - t0)
                    t_new.append(t2 - t1)
                ratio = np.median(np.array(t_new) / np.array(t_old))
                print(
                    f"{alpha!s:>22} {measure:>8} {kind:>4} {1e3 * min(t_old):8.1f} "
                    f"{1e3 * min(t_new):8.1f} {ratio:15.2f} {np.nanmax(diff):9.1e}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
