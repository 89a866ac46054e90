"""``ambppl plan``: refusals in the command's words (its options, not Python keywords)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _cli_helpers import error_line

import ambppl
from ambppl.cli import main

EXAMPLE = Path(ambppl.__file__).parent / "examples" / "weather_sentiment.csv"


@pytest.fixture
def two(tmp_path: Path) -> Path:
    """Counts of 3 items over 2 columns (.npy)."""
    path = tmp_path / "two.npy"
    np.save(path, np.array([[3, 1], [0, 4], [2, 2]]))
    return path


def test_too_few_proper_categories_names_the_options(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "measure='modified' needs ...; pass cant_solve=None if the last category is a
    # proper one"
    argv = ["plan", str(two), "--cant-solve", "1", "--measure", "modified", "--budget", "5"]
    assert main([*argv, "-q"]) == 2
    line = error_line(capsys)
    assert line == (
        "ambppl: error: --measure modified needs at least 2 proper categories (besides "
        "can't-solve), but got 1; leave out --cant-solve if the task had no can't-solve answer"
    )
    # the library keeps its Python words
    with pytest.raises(ValueError, match=r"^measure='modified' needs .* pass cant_solve=None"):
        ambppl.next_batch(np.load(two), 5, measure="modified", cant_solve=1)


def test_a_budget_beyond_the_decision_limit_names_the_options(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "... budget ... is more than objective 'decision' can allocate ..., or
    # objective 'variance'"
    argv = ["plan", str(two), "--budget", str(3 * 10**7 + 1), "--objective", "decision", "-q"]
    assert main(argv) == 2
    line = error_line(capsys)
    assert line.startswith("ambppl: error: --budget 3e+07 is more than --objective decision can ")
    assert line.endswith("pass a --budget of at most 3e+07, or --objective variance")
    assert "objective=" not in line and "objective '" not in line


def test_the_weather_example_with_the_decision_objective_is_refused_as_documented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/topics/planning.md: five categories take the Beta route (15 us per enumerated
    vector in the time guard), and the 200 tweets of 20 answers are refused; the message
    named the exact route's rate."""
    out = tmp_path / "plan.csv"
    argv = ["plan", str(EXAMPLE), "--cant-solve", "I can't tell", "--budget", "100"]
    assert main([*argv, "--objective", "decision", "-q", "-o", str(out)]) == 2
    line = error_line(capsys)
    assert line.startswith("ambppl: error: --budget 100: the expected probability of a right ")
    assert "about 15 us each on the Beta route)" in line and "60 us" not in line
    assert "(estimated; the limit is 60 s); pass a smaller --budget" in line
    assert not out.exists()


def test_threshold_without_the_decision_objective_is_refused(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --threshold was silently ignored under the default --objective variance
    argv = ["plan", str(two), "--budget", "5", "--threshold", "0.3", "-q", "-o", "-"]
    assert main(argv) == 2
    line = error_line(capsys)
    assert line == (
        "ambppl: error: --threshold applies to --objective decision, but got --objective "
        "variance, which has no threshold: drop --threshold, or add --objective decision"
    )
    assert main([*argv, "--objective", "decision"]) == 0


def test_threshold_default_in_the_help_is_plans() -> None:
    import inspect

    from ambppl.cli.app import build_parser

    default = inspect.signature(ambppl.analysis.plan).parameters["threshold"].default
    help_text = build_parser().commands["plan"].format_help()
    assert f"(default: {default})" in " ".join(help_text.split())


def test_decision_without_threshold_uses_plans_default(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import inspect

    default = inspect.signature(ambppl.analysis.plan).parameters["threshold"].default
    argv = ["plan", str(two), "--budget", "5", "--objective", "decision", "-q", "-o", "-"]
    assert main(argv) == 0
    left_out = capsys.readouterr().out
    assert main([*argv, "--threshold", str(default)]) == 0
    assert capsys.readouterr().out == left_out
    assert main([*argv, "--threshold", "0.2"]) == 0
    assert capsys.readouterr().out != left_out  # the threshold matters to this plan
