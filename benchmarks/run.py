"""Run every benchmark in this folder: ``python benchmarks/run.py [name ...]``.

Each ``bench_*.py`` module has a ``main()`` that prints its own table of timings as ratios
against a baseline measured in the same run (the machines are noisy). A name selects the
modules whose name contains it, e.g. ``python benchmarks/run.py hierarchical``.

``bench_hierarchical`` compares PyMC's NUTS with nutpie: run it in a virtualenv that has
nutpie (``.venv-bench``, see that module); without nutpie it times PyMC's NUTS only.
``recovery_hierarchical.py`` is not a timing benchmark and is run on its own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    files = sorted(HERE.glob("bench_*.py"))
    if argv:
        files = [f for f in files if any(a in f.stem for a in argv)]
    for path in files:
        print(f"=== {path.stem} ===", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
