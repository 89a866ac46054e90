"""Run the timing benchmarks in this folder: ``python benchmarks/run.py [name ...]``.

Without a name it runs every ``bench_*.py`` module, one after the other in this process; a
name selects the modules whose name contains it, e.g. ``python benchmarks/run.py
hierarchical``. Each module's ``main()`` runs as if the module had been started alone with
no options (its own defaults; the names given here are not passed on), except the options
in :data:`OPTIONS`: ``bench_rater_effects`` times nutpie only here (PyMC's own NUTS was
never run at its 1000 items, and numpyro had not finished after 19 minutes at 9.2 GB; run
that module itself to compare samplers).

All of them take at least 40 minutes on 2 cores, by the times in their docstrings:
``bench_hierarchical`` about 23, ``bench_rater_effects`` about 7 (436 s for nutpie's fit),
``bench_scale`` about 5, ``bench_reuse`` about 3, ``bench_fastmath`` about 2,
``bench_import`` a few seconds; the
others (``bench_data``, ``bench_exact``, ``bench_fit``, ``bench_moments``,
``bench_planning``) have no recorded total; ``bench_decision_rate`` takes about a minute.

What they print:

* ratios against a baseline measured in the same run (the machines are noisy):
  ``bench_data``, ``bench_exact``, ``bench_fit``, ``bench_hierarchical``, ``bench_import``,
  ``bench_moments``, ``bench_reuse``, ``bench_scale``, ``bench_fastmath`` (and, run on their own,
  ``report_learned_prior.py`` and ``compare_revisions.py``);
* no ratio: ``bench_rater_effects`` (per NUTS sampler, the wall time to the convergence
  standard and the diagnostics: the samplers are compared with the standard and with each
  other, there is no baseline that does the same work) and ``bench_planning`` (a simulation
  study: the answers the planner saves against uniform collection, and its total time);
* the measured rate against an assumed one: ``bench_decision_rate`` (the decision
  objective's seconds per enumerated vector against its time guard's rate).

``gallery.py`` and ``rater_effects_real.py`` (run on their own) print absolute wall times of
whole fits, each in its own process; docs/benchmarks.md judges them against its time target.
``recovery_hierarchical.py`` is not a timing benchmark and is run on its own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Command-line options a module gets here (none for the others): its ``main()`` sees them
#: as its ``sys.argv[1:]``.
OPTIONS = {"bench_rater_effects": ["--samplers", "nutpie"]}


def main(argv: list[str]) -> int:
    files = sorted(HERE.glob("bench_*.py"))
    if argv:
        files = [f for f in files if any(a in f.stem for a in argv)]
    saved = sys.argv
    for path in files:
        print(f"=== {path.stem} ===", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        # modules that read options parse sys.argv: give them theirs, not this runner's names
        sys.argv = [str(path), *OPTIONS.get(path.stem, [])]
        try:
            module.main()
        finally:
            sys.argv = saved
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
