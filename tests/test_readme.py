"""The README's promises: two quick-start commands, .ci/run in sync, examples that run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start() -> str:
    match = re.search(r"^## Quick start\n(.*?)(?=^## )", README, flags=re.S | re.M)
    assert match, "README has no '## Quick start' section followed by another section"
    return match.group(1)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_quick_start_has_exactly_two_commands():
    commands = [line for b in _blocks(_quick_start(), "bash") for line in b.strip().splitlines()]
    assert len(commands) == 2, commands
    assert all(c.startswith("python3 -m venv .venv && ") for c in commands), commands


def test_ci_runs_the_readme_test_command():
    test_command = _blocks(_quick_start(), "bash")[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines(), "'.ci/run' must run the README's test command verbatim"


@pytest.mark.parametrize("index", range(len(_blocks(README, "python"))))
def test_readme_python_examples_run(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _blocks(README, "python")[index]
    exec(compile(code, f"README.md python block {index}", "exec"), {"__name__": "__readme__"})
