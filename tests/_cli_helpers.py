"""Helpers shared by the command-line tests (``test_cli.py``, ``test_cli_files.py``)."""

from __future__ import annotations

import pytest


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The single stderr line of a failed call (and check there is no traceback)."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("ambppl: error: "), err
    assert "Traceback" not in err
    return lines[0]
