"""``--mcse`` with ``--method map``: the refusal says that the posterior mode is one point,
without draws or Monte Carlo error. It once said "fits draws: drop --mcse (--draws sets how
many)", although map gives one point and refuses --draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli_helpers import command_error_line


@pytest.fixture
def answers_csv(tmp_path: Path) -> Path:
    """12 items x 3 answers from 4 raters with a can't-solve answer; seeded."""
    rng = np.random.default_rng(20261207)
    rows = [
        (f"i{i}", f"r{r}", rng.choice(["a", "b", "cant"], p=[0.5, 0.4, 0.1]))
        for i in range(12)
        for r in rng.choice(4, size=3, replace=False)
    ]
    path = tmp_path / "answers.csv"
    pd.DataFrame(rows, columns=["task", "worker", "label"]).to_csv(path, index=False)
    return path


def _mcse_refusal(command: str, method: str, answers_csv: Path, tmp_path: Path, capsys) -> str:
    """The one error line of ``ambppl <command> --model dawid_skene --method <method> --mcse
    0.01`` on the answers (exit 2, no traceback; no output file written)."""
    output = tmp_path / ("o.html" if command == "report" else "o.csv")
    argv = [command, str(answers_csv), "--model", "dawid_skene", "--method", method]
    line = command_error_line(
        [*argv, "--cant-solve", "cant", "--mcse", "0.01", "-q", "-o", str(output)], capsys
    )
    assert not output.exists()
    return line


@pytest.mark.parametrize("command", ["score", "report"])
def test_mcse_with_map_says_the_mode_has_no_draws(
    command: str, answers_csv: Path, tmp_path: Path, capsys
) -> None:
    line = _mcse_refusal(command, "map", answers_csv, tmp_path, capsys)
    assert "--model dawid_skene with --method map gives one point, the posterior mode" in line
    assert "no draws, so no Monte Carlo error to bound; drop --mcse" in line
    assert "--draws" not in line and "fits draws" not in line


@pytest.mark.parametrize("command", ["score", "report"])
def test_mcse_with_laplace_still_points_at_draws(
    command: str, answers_csv: Path, tmp_path: Path, capsys
) -> None:
    line = _mcse_refusal(command, "laplace", answers_csv, tmp_path, capsys)
    assert line.endswith("with --method laplace fits draws: drop --mcse (--draws sets how many)")
