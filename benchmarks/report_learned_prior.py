"""The learned-prior report against the empirical-Bayes report of the same data.

``ambppl report DATA --model hierarchical_dirichlet`` (the model's default route, the
collapsed NUTS fit of ``mu`` and ``kappa``, then per-item draws) against the baseline
``ambppl report DATA --model hierarchical_dirichlet --method empirical_bayes`` (the same
model with ``mu`` and ``kappa`` fixed at their marginal maximum-likelihood values), measured
in the same run, one after the other, each command in its own process: wall time (the whole
command: reading, fitting, summaries, figures, writing the HTML page) and the peak resident
memory of the process. The target of issue 22: the learned-prior report within 3x the
empirical-Bayes report.

Data: the largest sets in ``../shared/data`` (its README): CIFAR-10H (10^4 images x 10
classes, counts), the product-matching answers (8315 items x 3 answers, 2 classes) and the
spam judgements (5380 items x 7.9 answers, 2 classes).

Run (2 cores; never while tests run)::

    .venv/bin/python benchmarks/report_learned_prior.py
    .venv/bin/python benchmarks/report_learned_prior.py --data cifar10h
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

#: Data set -> the command line's input arguments.
DATA = {
    "cifar10h": ["cifar10h/cifar10h-counts.npy"],
    "jn_product": [
        "jn_product/answer.csv",
        "--item",
        "question",
        "--rater",
        "worker",
        "--label",
        "answer",
    ],
    "hitspam_crowdflower": [
        "hitspam_crowdflower/labels.txt",
        "--sep",
        "\t",
        "--no-header",
        "--item",
        "1",
        "--rater",
        "0",
        "--label",
        "2",
    ],
}

#: Runs one command in this process and prints its wall time and peak RSS as JSON.
_WRAPPER = """
import json, resource, sys, time
from ambppl.cli import main
start = time.perf_counter()
code = main(sys.argv[1:])
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"code": code, "wall_s": wall, "peak_gb": rss}))
"""


def run_report(name: str, method: str | None, out_dir: Path) -> dict[str, float]:
    """One ``ambppl report`` command in a fresh process: its wall time and peak memory."""
    first, *options = DATA[name]
    args = ["report", str(SHARED_DATA / first), *options, "--model", "hierarchical_dirichlet"]
    if method:
        args += ["--method", method]
    args += ["--seed", "1", "-q", "--force", "-o", str(out_dir / f"{name}-{method}.html")]
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args], capture_output=True, text=True, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{name} {method}: {done.stderr.strip().splitlines()[-3:]}")
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=",".join(DATA))
    args = parser.parse_args(argv)
    print(f"{'data':22s} {'EB s':>7s} {'EB GB':>6s} {'learned s':>9s} {'GB':>6s} {'ratio':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.data.split(","):
            base = run_report(name, "empirical_bayes", Path(tmp))
            learned = run_report(name, None, Path(tmp))
            ratio = learned["wall_s"] / base["wall_s"]
            print(
                f"{name:22s} {base['wall_s']:7.1f} {base['peak_gb']:6.2f} "
                f"{learned['wall_s']:9.1f} {learned['peak_gb']:6.2f} {ratio:6.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
