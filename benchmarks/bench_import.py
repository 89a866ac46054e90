"""Import time: ``import ambppl`` and its first use, each against a baseline in the same run.

``import ambppl`` loads none of its modules (every public name is loaded on first use:
docs/architecture.md), so it should cost less than numpy, which any of its functions loads.
Each probe is a fresh ``python -c`` process that times its import statement with
``time.perf_counter`` (the interpreter's own start is not counted); a row's two probes are
alternated, best of ``REPEATS`` each. Rows (``ratio`` = ambppl's time / the baseline's):

* ``import ambppl`` against ``import numpy``; target: under 0.5 s on 2 cores;
* ``import ambppl; ambppl.amb`` (the first use of a measure, which loads ``ambppl.maths``
  with numpy and scipy.special) against ``import numpy, scipy.special`` alone: what the
  package adds to its dependencies.

``tests/test_package.py`` checks that ``import ambppl`` loads no heavy module (PyMC,
PyTensor, ArviZ, matplotlib, pandas); the time is measured here, not in a test.

Run: ``.venv/bin/python benchmarks/run.py import`` (a few seconds).
"""

from __future__ import annotations

import subprocess
import sys

REPEATS = 5
TARGET_SECONDS = 0.5

_PROBE = """
import time
t = time.perf_counter()
{statement}
print(time.perf_counter() - t)
"""

#: (what ambppl does, the baseline, the target in seconds or None)
ROWS = (
    ("import ambppl", "import numpy", TARGET_SECONDS),
    ("import ambppl; ambppl.amb", "import numpy, scipy.special", None),
)


def probe(statement: str) -> float:
    """Seconds that ``statement`` takes in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(statement=statement)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.split()[-1])


def main() -> None:
    print(f"{'statement':<28} {'s':>7} {'baseline':<28} {'s':>7} {'ratio':>6}  target")
    for ours, base, target in ROWS:
        t_ours, t_base = float("inf"), float("inf")
        for _ in range(REPEATS):
            t_base = min(t_base, probe(base))
            t_ours = min(t_ours, probe(ours))
        verdict = (
            "" if target is None else f"< {target} s: {'met' if t_ours < target else 'missed'}"
        )
        ratio = t_ours / t_base
        print(f"{ours:<28} {t_ours:>7.3f} {base:<28} {t_base:>7.3f} {ratio:>6.2f}  {verdict}")


if __name__ == "__main__":
    main()
