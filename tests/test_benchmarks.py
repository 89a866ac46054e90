"""``benchmarks/run.py`` (the runner), ``benchmarks/bench_import.py``, and the files that the
benchmarks and the documentation name."""

from __future__ import annotations

import json
import re
import sys

import pytest
from conftest import ROOT, load_benchmark

#: A stand-in benchmark that parses ``sys.argv`` as bench_scale and bench_rater_effects do
#: (argparse exits 2 on an argument it does not know) and prints what it was given.
FAKE = """
import argparse, json, sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samplers", default="all")
    args = parser.parse_args()
    print("GOT", json.dumps([sys.argv[1:], args.samplers]))
"""


def _run(tmp_path, monkeypatch, capsys, stem: str, names: list[str]) -> list:
    (tmp_path / f"{stem}.py").write_text(FAKE)
    run = load_benchmark("run")
    monkeypatch.setattr(run, "HERE", tmp_path)
    monkeypatch.setattr(sys, "argv", ["run.py", *names])  # as `python run.py NAME` leaves it
    assert run.main(names) == 0
    assert sys.argv == ["run.py", *names]  # the runner's own argv is given back
    out = capsys.readouterr().out
    return json.loads(out.split("GOT ", 1)[1])


def test_a_named_benchmark_does_not_see_the_runners_arguments(tmp_path, monkeypatch, capsys):
    # `run.py scale` used to leave "scale" in sys.argv: bench_scale's parser exited 2
    # ("unrecognized arguments")
    assert _run(tmp_path, monkeypatch, capsys, "bench_scale", ["scale"]) == [[], "all"]


def test_all_benchmarks_time_rater_effects_with_nutpie_only(tmp_path, monkeypatch, capsys):
    got = _run(tmp_path, monkeypatch, capsys, "bench_rater_effects", [])
    assert got == [["--samplers", "nutpie"], "nutpie"]


def test_bench_import_prints_each_statement_against_its_baseline(monkeypatch, capsys):
    bench = load_benchmark("bench_import")
    monkeypatch.setattr(bench, "REPEATS", 1)
    bench.main()
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 + len(bench.ROWS)
    for line, (ours, base, _) in zip(lines[1:], bench.ROWS, strict=True):
        assert line.startswith(ours) and base in line
        numbers = line[len(ours) :].replace(base, "").split()[:3]  # s, baseline s, ratio
        t_ours, t_base, ratio = map(float, numbers)
        assert t_ours > 0 and t_base > 0
        # the ratio of the unrounded times: within what the printed 3 decimals leave open
        low, high = (t_ours - 5e-4) / (t_base + 5e-4), (t_ours + 5e-4) / (t_base - 5e-4)
        assert low - 0.005 <= ratio <= high + 0.005, line
    assert lines[1].endswith(("met", "missed"))  # `import ambppl` against its 0.5 s target


#: A path inside the repository, as the benchmarks' docstrings, the pages and pyproject.toml's
#: comments and mutmut settings name files.
REPO_PATH = re.compile(
    r"\b(?:ambppl|benchmarks|tests|docs|models|notebooks)/[\w./-]+\.(?:py|json|md|ipynb|sh)\b"
)
NAMING = sorted(
    [
        *ROOT.glob("benchmarks/*.py"),
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("docs/*/*.md"),
        ROOT / "pyproject.toml",  # named benchmarks/mutation.sh and ambppl/data/formats.py
    ]
)


@pytest.mark.parametrize("path", NAMING, ids=[str(p.relative_to(ROOT)) for p in NAMING])
def test_every_file_named_exists(path):
    # accuracy_map.py and docs/maths/closed_forms.md named ambppl/approx_accuracy.json, which
    # lives in ambppl/maths/
    named = set(REPO_PATH.findall(path.read_text(encoding="utf-8")))
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, missing


def test_real_data_reading_says_what_differs(monkeypatch, capsys, tmp_path):
    # benchmarks/real_data_reading.py compares the readers of two revisions on the shared
    # data: a difference on one side, or a refusal on one side, is named and gives status 1
    bench = load_benchmark("real_data_reading")
    counts = ([[1, 2]], ["a"], ["x", "y"], None)
    assert bench._difference(counts, counts) == "same"
    assert bench._difference(counts, ([[1, 2]], ["a"], ["y", "x"], None)) == ("differs: categories")
    refused = ("error", "ValueError", "no")
    assert bench._difference(counts, refused) == "differs: the working tree refuses it (ValueError)"
    assert bench._difference(refused, ("error", "TypeError", "no")).startswith("both refuse")
    sides = iter([{("d", "counts"): counts}, {("d", "counts"): refused}])
    monkeypatch.setattr(bench, "_read_with", lambda root: next(sides))
    monkeypatch.setattr(bench, "_export", lambda rev, folder: folder)
    monkeypatch.setattr(bench, "DATA", tmp_path)
    assert bench.main(["HEAD"]) == 1
    assert "d                      counts   differs: the working tree refuses it" in (
        capsys.readouterr().out
    )
