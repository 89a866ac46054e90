"""Helpers shared by the command-line tests (``tests/cli``)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from ambppl.cli import main


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The single stderr line of a failed call (and check there is no traceback)."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("ambppl: error: "), err
    assert "Traceback" not in err
    return lines[0]


#: A Python keyword spelled as in a call (``cant_solve=``), which a command-line message of
#: the readers must not show (it names ``--cant-solve``).
PYTHON_SPELLING = re.compile(
    r"\b(format|header|comment|sep|item|rater|label|cant_solve|na_values|categories)="
)


def command_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line the command prints for ``argv``: exit 2, no traceback, no Python
    keyword (:data:`PYTHON_SPELLING`)."""
    capsys.readouterr()
    assert main(argv) == 2
    line = error_line(capsys)
    assert not PYTHON_SPELLING.search(line), line
    return line


def score_table(argv: list[str], tmp_path: Path) -> pd.DataFrame:
    """The table ``ambppl score`` writes for ``argv`` (to a CSV file), sorted by item."""
    out = tmp_path / "out.csv"
    assert main(["score", *argv, "-o", str(out), "--force"]) == 0
    return pd.read_csv(out, index_col="item").sort_index()
