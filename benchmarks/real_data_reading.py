"""The shared real data sets read by this working tree and by another git revision: the same?

Run: ``.venv/bin/python benchmarks/real_data_reading.py REV`` (e.g. ``HEAD~3``).

A check for changes to the readers, not a timing. The package as of ``REV`` is exported
(``git archive``) into a temporary folder and run in a subprocess with that folder first on
``sys.path``; the working tree's package runs in another. Each reads the eight data sets of
``../shared/data`` (see its README) with the columns the README gives, as counts
(:func:`ambppl.read_annotations`: the count matrix, item ids, categories and can't-solve
label) and, where they hold answers, as answers (:func:`ambppl.data.read_long`: every cell
as text, and the columns). The table says ``same`` or what differs; the exit status is 1
when anything differs or fails on one side only.
"""

from __future__ import annotations

import argparse
import io
import pickle
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"

#: Each data set: its file and the reader's keywords (from ../shared/data/README.md).
CASES = {
    "anesthesia_ds1979": (
        "anesthesia_ds1979/anesthesia_long.csv",
        {"item": "item", "rater": "rater", "label": "rating"},
    ),
    "barzan_mozafari": (
        "barzan_mozafari/labels.txt",
        {"format": "tsv", "header": None, "item": 1, "rater": 0, "label": 2},
    ),
    "cf_weather_sentiment": (
        "cf_weather_sentiment/weather-non-agg-DFE.csv",
        {
            "item": "tweet_id",
            "rater": "worker_id",
            "label": "emotion",
            "cant_solve": "I can't tell",
        },
    ),
    "cifar10h": ("cifar10h/cifar10h-counts.npy", {}),
    "dog_zhou2012": (
        "dog_zhou2012/answer.csv",
        {"item": "question", "rater": "worker", "label": "answer"},
    ),
    "face_sentiment": (
        "face_sentiment/answer.csv",
        {"item": "question", "rater": "worker", "label": "answer"},
    ),
    "hitspam_crowdflower": (
        "hitspam_crowdflower/labels.txt",
        {"format": "tsv", "header": None, "item": 1, "rater": 0, "label": 2},
    ),
    "jn_product": (
        "jn_product/answer.csv",
        {"item": "question", "rater": "worker", "label": "answer"},
    ),
}

#: What a subprocess runs: reads every case, pickles {(name, how): result} to stdout.
READ = """
import pickle, sys
import ambppl
from ambppl.data import read_long

cases, data = pickle.loads(sys.stdin.buffer.read())
out = {}
for name, (path, kwargs) in cases.items():
    for how in ("counts", "answers"):
        if how == "answers" and path.endswith(".npy"):
            continue
        try:
            if how == "counts":
                c = ambppl.read_annotations(f"{data}/{path}", **kwargs)
                got = (c.values.tolist(), [str(i) for i in c["item"].values],
                       [str(k) for k in c["category"].values], c.attrs.get("cant_solve"))
            else:
                t = read_long(f"{data}/{path}", **kwargs)
                got = (t.astype(str).to_numpy().tolist(), [str(c) for c in t.columns])
        except Exception as err:  # a refusal on one side is a difference
            got = ("error", type(err).__name__, str(err))
        out[(name, how)] = got
sys.stdout.buffer.write(pickle.dumps((ambppl.__file__, out)))
"""


def _read_with(package_root: Path) -> dict:
    """The results of :data:`READ` with ``package_root``'s ambppl first on the path."""
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(package_root)!r})\n{READ}"],
        input=pickle.dumps((CASES, str(DATA))),
        capture_output=True,
        check=True,
    )
    where, out = pickle.loads(done.stdout)
    if not Path(where).resolve().is_relative_to(package_root.resolve()):  # an install first
        raise SystemExit(f"imported ambppl from {where}, not from {package_root}")
    return out


def _export(rev: str, folder: Path) -> Path:
    """``ambppl/`` as of ``rev`` under ``folder``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "ambppl"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def _difference(old: tuple, new: tuple) -> str:
    if old == new:
        return "same"
    if old[0] == "error" and new[0] == "error":
        return f"both refuse it, in other words ({old[1]} -> {new[1]})"
    if old[0] == "error" or new[0] == "error":
        side = "revision" if old[0] == "error" else "working tree"
        return f"differs: the {side} refuses it ({(old if old[0] == 'error' else new)[1]})"
    parts = (
        ["values", "items", "categories", "can't-solve label"]
        if len(old) == 4
        else [
            "cells",
            "columns",
        ]
    )
    return "differs: " + ", ".join(p for p, a, b in zip(parts, old, new, strict=True) if a != b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the git revision to compare with (e.g. HEAD~3)")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"no shared data at {DATA}: nothing to compare")
        return 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            old = _read_with(_export(args.rev, Path(tmp)))
        new = _read_with(ROOT)
    except subprocess.CalledProcessError as err:  # no such revision, or a package that fails
        said = (err.stderr or b"").decode(errors="replace").strip().splitlines()
        print(f"{' '.join(err.cmd[:3])}... failed: {said[-1] if said else err}", file=sys.stderr)
        return 2
    differs = 0
    print(f"{'data set':22s} {'read as':8s} {args.rev} -> working tree")
    for key in sorted(set(old) | set(new)):
        said = _difference(
            old.get(key, ("error", "absent", "")), new.get(key, ("error", "absent", ""))
        )
        differs += said != "same"
        print(f"{key[0]:22s} {key[1]:8s} {said}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
