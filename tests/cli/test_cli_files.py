"""The command's output files (issue 25): an output that cannot be written is refused before
any work, the input is never overwritten, a read-only file is not replaced, and SIGTERM or
SIGHUP leaves no hidden ``.part`` file or folder behind."""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli_helpers import error_line as _error_line
from hypothesis import given, settings
from hypothesis import strategies as st

import ambppl.cli as cli
import ambppl.cli.inputs
import ambppl.cli.output
from ambppl.cli import main

#: Small fit settings: exact draws, few of them.
FAST = ["--draws", "50", "--chains", "2", "--seed", "7", "-q"]

#: Each subcommand with -o, with its arguments besides the input and the output.
COMMANDS = {
    "score": ["score", "--cant-solve", "skip", *FAST],
    "report": ["report", "--cant-solve", "skip", "--top", "2", *FAST],
    "plan": ["plan", "--cant-solve", "skip", "--budget", "5", "-q"],
}

#: An output name each subcommand accepts.
OUTPUT = {"score": "out.csv", "report": "out.html", "plan": "out.csv"}


def _answers(rng: np.random.Generator, n_items: int = 10) -> pd.DataFrame:
    """A long table with crowd-kit's column names and a can't-solve answer 'skip'."""
    labels = rng.choice(["cat", "dog", "skip"], size=(n_items, 5))
    labels[0, :3] = ["cat", "dog", "skip"]  # every label occurs
    return pd.DataFrame(
        {
            "task": np.repeat([f"t{i:02d}" for i in range(n_items)], 5),
            "worker": np.tile([f"w{j}" for j in range(5)], n_items),
            "label": labels.ravel(),
        }
    )


@pytest.fixture
def answers_csv(tmp_path: Path, rng: np.random.Generator) -> Path:
    path = tmp_path / "answers.csv"
    _answers(rng).to_csv(path, index=False)
    return path


def _argv(command: str, source: Path, output: Path | str, *extra: str) -> list[str]:
    name, *rest = COMMANDS[command]
    return [name, str(source), *rest, "-o", str(output), *extra]


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a command reads its input: the output must be refused before."""

    def read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the input was read before the output was checked")

    monkeypatch.setattr(ambppl.cli.inputs, "read_input", read)  # every subcommand reads so


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -------------------------------------------------------------------------- unwritable output


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder that takes no new file: read-only by its mode for a normal user; for root,
    who writes anyway, /sys (read-only sysfs), if that refuses a new file here."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    try:
        fd, name = tempfile.mkstemp(dir="/sys")
    except OSError:
        return Path("/sys")
    os.close(fd)
    os.unlink(name)
    pytest.skip("running as root where /sys takes files: no folder refuses root a file")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_unwritable_output_folder_is_refused_before_any_work(
    command: str, answers_csv: Path, tmp_path: Path, capsys, no_work
) -> None:
    """Issue 25: a read-only output folder gave a PermissionError traceback after all the
    work (15 s of fitting for a report). Now one line, before the input is read."""
    folder = _unwritable_folder(tmp_path)
    try:
        assert main(_argv(command, answers_csv, folder / OUTPUT[command])) == 2
    finally:
        if folder.is_relative_to(tmp_path):
            folder.chmod(0o755)
    line = _error_line(capsys)
    assert f"cannot write output '{folder / OUTPUT[command]}'" in line
    assert "does not take new files" in line and "-o" in line


@pytest.mark.parametrize("command", list(COMMANDS))
def test_output_under_a_file_is_refused_before_any_work(
    command: str, answers_csv: Path, tmp_path: Path, capsys, no_work
) -> None:
    """``-o file.txt/out.csv``: a file where the folder should be (the case root cannot
    write either) is named as such, not as a missing folder."""
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file")
    for output in (blocker / OUTPUT[command], blocker / "sub" / OUTPUT[command]):
        assert main(_argv(command, answers_csv, output)) == 2
        assert "is not a folder (a file is in the way)" in _error_line(capsys)
    assert blocker.read_text() == "a file"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_output_that_is_a_folder_suggests_a_name_that_works(
    command: str, answers_csv: Path, tmp_path: Path, capsys
) -> None:
    """``-o d.csv`` where d.csv is a folder suggested ``-o d.csv/out``, which then failed as
    a name without a table format: the suggestion keeps the suffix (d.csv/out.csv)."""
    folder = tmp_path / OUTPUT[command]
    folder.mkdir()
    assert main(_argv(command, answers_csv, folder)) == 2
    line = _error_line(capsys)
    suggested = folder / f"out{folder.suffix}"
    assert f"is a folder; give a file name inside it, e.g. -o {suggested}" in line
    assert main(_argv(command, answers_csv, suggested)) == 0  # the suggestion works
    assert suggested.is_file()
    bare = tmp_path / "results"  # a folder without a suffix: the format is asked for first
    bare.mkdir()
    assert main(_argv(command, answers_csv, bare)) == 2
    assert re.search(r"end the (output )?name in", _error_line(capsys))


def test_failed_write_is_one_line_and_leaves_nothing(
    answers_csv: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that fills up while the table is written: one line naming the output, no
    temporary file left, the old output kept."""
    out = tmp_path / "s.csv"
    out.write_text("old")

    def full_disk(table, path, sep):
        Path(path).write_text("half a tab")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ambppl.cli.output, "write_text_table", full_disk)
    assert main(_argv("score", answers_csv, out, "--force")) == 2
    line = _error_line(capsys)
    assert f"cannot write output '{out}' (No space left on device)" in line
    assert out.read_text() == "old"
    assert _files(tmp_path) == ["answers.csv", "s.csv"]


# ------------------------------------------------------------------------ the input is safe


def _spellings(source: Path) -> dict[str, Path]:
    """Other names of ``source``: relative with ./, through a symbolic link to it or to its
    folder, a hard link, and a detour through a sibling folder."""
    folder = source.parent
    (folder / "link.csv").symlink_to(source)
    (folder / "linked").symlink_to(folder, target_is_directory=True)
    os.link(source, folder / "hard.csv")
    (folder / "sub").mkdir()
    return {
        "same": source,
        "dot": Path(f"./{source.name}"),
        "symlink": folder / "link.csv",
        "folder symlink": folder / "linked" / source.name,
        "hard link": folder / "hard.csv",
        "detour": folder / "sub" / ".." / source.name,
    }


@pytest.mark.parametrize("command", ["score", "plan"])
def test_output_naming_the_input_is_refused_even_with_force(
    command: str, answers_csv: Path, tmp_path: Path, capsys, monkeypatch, no_work
) -> None:
    """Issue 25: ``-o`` naming the input replaced the annotations with the scores, even with
    --force. Now refused by every name of the input, before any work."""
    monkeypatch.chdir(tmp_path)
    before = answers_csv.read_bytes()
    for name, output in _spellings(answers_csv).items():
        for force in ([], ["--force"]):
            assert main(_argv(command, answers_csv, output, *force)) == 2, name
            line = _error_line(capsys)
            assert "is the input" in line and "--force does not allow this" in line, name
    assert answers_csv.read_bytes() == before


def test_parquet_input_is_not_replaced_by_a_dataset(tmp_path: Path, capsys) -> None:
    """Issue 25: a Parquet file of counts, scored in chunks with ``-o`` itself and --force,
    was replaced by a folder (a Parquet dataset). Also refused: an output folder that holds
    the input, and an output inside a zarr store of counts."""
    counts = pd.DataFrame({"cat": [3, 1, 0], "dog": [0, 2, 1], "skip": [1, 0, 4]})
    parquet = tmp_path / "counts.parquet"
    counts.to_parquet(parquet)
    before = parquet.read_bytes()
    argv = ["score", str(parquet), "--cant-solve", "skip", "--chunk-items", "2", "-q"]
    assert main([*argv, "-o", str(parquet), "--force"]) == 2
    assert "is the input" in _error_line(capsys)
    assert parquet.is_file() and parquet.read_bytes() == before
    # a dataset folder that holds the input
    folder = tmp_path / "data.parquet"
    folder.mkdir()
    inner = folder / "part.0.parquet"
    counts.to_parquet(inner)
    inner_argv = ["score", str(inner), "--cant-solve", "skip", "--chunk-items", "2", "-q"]
    assert main([*inner_argv, "-o", str(folder), "--force"]) == 2
    assert "is the input" in _error_line(capsys)
    assert inner.is_file()
    # inside a zarr store (the input is a folder)
    store = tmp_path / "c.zarr"
    store.mkdir()
    assert ambppl.cli.output._overlaps(store / "scores.csv", store)
    assert not ambppl.cli.output._overlaps(tmp_path / "scores.csv", store)


@pytest.fixture(scope="module")
def spelled_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folders a/b/c with the input a/b/in.csv and another file a/b/other.csv."""
    root = tmp_path_factory.mktemp("spell")
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "in.csv").write_text("task,worker,label\n")
    (root / "a" / "b" / "other.csv").write_text("x\n")
    return root


@settings(max_examples=40, deadline=None)
@given(
    detours=st.lists(st.sampled_from(["./", "c/../", ".//", "../b/"]), max_size=4),
    target=st.sampled_from(["in.csv", "other.csv", "new.csv"]),
)
def test_any_spelling_of_the_input_is_refused(
    spelled_tree: Path, detours: list[str], target: str
) -> None:
    """Property: however the output path is spelled (./, //, detours through sub- and
    parent folders), it is refused exactly when it names the input."""
    folder = spelled_tree / "a" / "b"
    spelled = Path(f"{folder}/{''.join(detours)}{target}")
    source = folder / "in.csv"
    assert ambppl.cli.output._overlaps(spelled, source) == (target == "in.csv")
    if target == "in.csv":
        with pytest.raises(cli.UsageError, match="is the input"):
            ambppl.cli.output._check_output(spelled, True, source=source)
    else:
        ambppl.cli.output._check_output(spelled, True, source=source)


# ------------------------------------------------------------------ read-only and file modes


def test_force_refuses_a_read_only_file(answers_csv: Path, tmp_path: Path, capsys) -> None:
    """Issue 25: --force replaced a mode-444 file by a 644 one. A read-only file is a
    user's "do not touch": refused, with how to allow it (even for root, by its mode)."""
    out = tmp_path / "s.csv"
    out.write_text("precious")
    out.chmod(0o444)
    assert main(_argv("score", answers_csv, out, "--force")) == 2
    line = _error_line(capsys)
    assert f"output '{out}' is read-only" in line and "chmod u+w" in line
    assert out.read_text() == "precious" and out.stat().st_mode & 0o777 == 0o444
    assert _files(tmp_path) == ["answers.csv", "s.csv"]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_force_keeps_the_mode_of_the_replaced_file(
    mode: int, answers_csv: Path, tmp_path: Path
) -> None:
    """--force replaces a writable file and keeps its permissions (not the umask's)."""
    out = tmp_path / "s.csv"
    out.write_text("old")
    out.chmod(mode)
    assert main(_argv("score", answers_csv, out, "--force")) == 0
    assert out.read_text() != "old" and out.read_text().startswith("item,")
    assert out.stat().st_mode & 0o777 == mode


def test_force_keeps_the_mode_of_a_replaced_dataset(tmp_path: Path) -> None:
    counts = pd.DataFrame({"cat": [3, 1, 0], "dog": [0, 2, 1], "skip": [1, 0, 4]})
    parquet = tmp_path / "counts.parquet"
    counts.to_parquet(parquet)
    out = tmp_path / "s.parquet"
    out.mkdir(mode=0o750)
    out.chmod(0o750)
    argv = ["score", str(parquet), "--cant-solve", "skip", "--chunk-items", "2", "-q"]
    assert main([*argv, "-o", str(out), "--force"]) == 0
    assert len(pd.read_parquet(out)) == 3 and out.stat().st_mode & 0o777 == 0o750


# ------------------------------------------------------------------------- SIGTERM, SIGHUP

#: Runs ``ambppl`` with the writer of a table (or of one part of a dataset) made slow: it
#: writes, says so on stdout, then sleeps; the test signals it meanwhile.
SLOW_WRITER = """
import os, sys, time
from pathlib import Path
import ambppl.analysis.lazy_score as lazy_score
import ambppl.analysis.scoring as scoring
import ambppl.cli as cli
import ambppl.cli.output as cli_output

write_part = lazy_score.write_part

def slow_table(table, path, sep):
    Path(path).write_text("half a table")
    os.write(1, b"writing\\n")  # one write: atomic between threads
    time.sleep(60)

def slow_part(*args):
    rows = write_part(*args)
    os.write(1, b"writing\\n")  # one write: atomic between threads
    time.sleep(2)
    return rows

cli_output.write_text_table = slow_table  # the name the table writer calls
scoring.write_part = slow_part  # LazyScore.to_parquet looks the name up in scoring
sys.exit(cli.main(sys.argv[1:]))
"""


def _signal_while_writing(argv: list[str], signum: int) -> subprocess.CompletedProcess:
    """Run ``ambppl argv`` with the slow writer, send ``signum`` once it writes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # blocks until the writer has written
        assert line == "writing\n", proc.communicate(timeout=60)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, line + out, err)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_signal_while_writing_a_table_leaves_no_part_file(
    signum: int, answers_csv: Path, tmp_path: Path
) -> None:
    """Issue 25: SIGTERM left the hidden temporary file (34 MB after ``score -o``). Now the
    signal unwinds like Ctrl-C: no ``.part`` file, the old output kept, one line, status
    128 + the signal number (what a shell reports for a process the signal ended)."""
    out = tmp_path / "s.csv"
    out.write_text("old")
    done = _signal_while_writing(_argv("score", answers_csv, out, "--force"), signum)
    assert done.returncode == 128 + signum, done.stderr
    name = signal.Signals(signum).name
    assert done.stderr == f"ambppl: stopped by {name}; no output was written\n"
    assert out.read_text() == "old"
    assert _files(tmp_path) == ["answers.csv", "s.csv"]


def test_sigterm_while_writing_a_dataset_leaves_no_part_folder(tmp_path: Path) -> None:
    """Issue 25: SIGTERM left a ``.part/`` folder after streaming Parquet. A dask task may
    still be writing a part when the main thread gives up; the folder is removed again
    when Python exits, after those threads."""
    counts = pd.DataFrame({"cat": np.arange(40) % 4, "dog": np.arange(40) % 3, "skip": 1})
    parquet = tmp_path / "counts.parquet"
    counts.to_parquet(parquet, row_group_size=5)
    out = tmp_path / "s.parquet"
    argv = ["score", str(parquet), "--cant-solve", "skip", "--chunk-items", "5", "-q"]
    start = time.perf_counter()
    done = _signal_while_writing([*argv, "-o", str(out)], signal.SIGTERM)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr == "ambppl: stopped by SIGTERM; no output was written\n"
    assert _files(tmp_path) == ["counts.parquet"]
    assert time.perf_counter() - start < 60


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_empty_output_name_is_refused_by_the_parser(
    command: str, answers_csv: Path, capsys, no_work
) -> None:
    # `-o ''` was taken for the current folder: "output '.' is a folder"
    assert main(_argv(command, answers_csv, "")) == 2
    assert "argument -o/--output: must name a file, e.g. -o out.csv, but got ''" in _error_line(
        capsys
    )
