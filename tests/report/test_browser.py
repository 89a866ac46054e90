"""The HTML report in a real browser: headless Chromium renders it, runs its script, and
neither the console nor the DOM shows anything wrong.

Chromium is Debian's ``chromium`` package (``apt-get install chromium``); ``.ci/run``
installs it in CI. Where it is missing the tests skip, except in CI (``CI`` set), where a
missing browser is a failure.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest
from _report_helpers import console_messages, sort_in_browser
from conftest import REPORT_SECTIONS, run_browser

from ambppl.cli import main

#: Hostile strings in the data: they must show as text, never become elements.
EVIL_LABEL = "<script>alert(1)</script>"
EVIL_ITEM = "<img src=x onerror=alert(2)>"


def _run(browser: str, page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_browser(browser, page.as_uri(), tmp, *extra)


@pytest.fixture(scope="module")
def report(browser: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report written by the command on data with hostile labels, item ids and file name."""
    folder = tmp_path_factory.mktemp("browser")
    source = _hostile_answers(folder)
    out = folder / "report.html"
    argv = ["report", str(source), "--cant-solve", "can't tell", "--draws", "300", "--chains", "2"]
    assert main([*argv, "--seed", "3", "--top", "6", "-q", "-o", str(out)]) == 0
    return out


def _hostile_answers(folder: Path) -> Path:
    """Answers with hostile labels, item ids and file name (30 items, 8 answers each)."""
    rng = np.random.default_rng(20261126)
    labels = np.array(["sunny", EVIL_LABEL, "rain & snow", "can't tell"])
    rows = [
        {"task": EVIL_ITEM if i == 0 else f"tweet {i}", "worker": f"w{j}", "label": lab}
        for i in range(30)
        for j, lab in enumerate(rng.choice(labels, size=8, p=rng.dirichlet(np.ones(4))))
    ]
    rows += [{"task": "tweet 1", "worker": "w99", "label": lab} for lab in labels]
    source = folder / "<i>tweets & co.csv"
    pd.DataFrame(rows).to_csv(source, index=False)
    return source


@pytest.fixture(scope="module")
def learned_report(browser: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A learned-prior report (hierarchical_dirichlet, empirical Bayes: no NUTS) of the same
    hostile data: the learned-prior section with its tables and figures."""
    folder = tmp_path_factory.mktemp("browser-learned")
    source = _hostile_answers(folder)
    out = folder / "learned.html"
    argv = ["report", str(source), "--cant-solve", "can't tell", "--draws", "300", "--chains", "2"]
    argv += ["--model", "hierarchical_dirichlet", "--method", "empirical_bayes"]
    assert main([*argv, "--seed", "3", "--top", "6", "-q", "-o", str(out)]) == 0
    return out


def test_learned_prior_renders(browser: str, learned_report: Path, tmp_path: Path) -> None:
    done = _run(browser, learned_report, tmp_path, "--dump-dom")
    assert console_messages(done.stderr) == []
    dom = done.stdout
    assert len(re.findall(r'<table class="sortable" id="[\w-]+" data-sortable="ready"', dom)) == 3
    for section in (*REPORT_SECTIONS, "learned-prior"):
        assert f'<section id="{section}">' in dom
    assert '<figure id="shrinkage">' in dom
    assert len(re.findall(r"<script\b", dom)) == 1
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # the hostile label in the mu table


def test_renders_without_console_errors(browser: str, report: Path, tmp_path: Path) -> None:
    done = _run(browser, report, tmp_path, "--dump-dom")
    assert console_messages(done.stderr) == []
    dom = done.stdout
    # the sorting script ran on every sortable table
    assert len(re.findall(r'<table class="sortable" id="[\w-]+" data-sortable="ready"', dom)) == 3
    for section in REPORT_SECTIONS:
        assert f'<section id="{section}">' in dom
    assert "The draws are <strong>exact</strong>" in dom
    # 30 items in the ranked table, 6 in the most-ambiguous table
    assert dom.count('<tr><td data-value="') == 30 + 6


def test_user_strings_stay_text(browser: str, report: Path, tmp_path: Path) -> None:
    dom = _run(browser, report, tmp_path, "--dump-dom").stdout
    # exactly one script element (the report's own) and no injected image
    assert len(re.findall(r"<script\b", dom)) == 1
    assert '<img src="x"' not in dom and "onerror=" not in dom.replace("onerror=alert(2)&gt;", "")
    assert "<i>" not in dom
    # shown literally, as escaped text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "&lt;img src=x onerror=alert(2)&gt;" in dom
    assert "&lt;i&gt;tweets &amp; co.csv" in dom
    assert "rain &amp; snow" in dom


def test_sorting_in_the_browser(browser: str, report: Path, tmp_path: Path) -> None:
    found, _ = sort_in_browser(browser, report, "mean", tmp_path)
    assert found["sort"] == "ascending"
    desc = [float(cell.split("|")[0]) for cell in found["desc"].split(";")]
    asc = [float(cell.split("|")[0]) for cell in found["asc"].split(";")]
    assert len(asc) == 30 and desc == sorted(desc, reverse=True) and asc == sorted(asc)
    # the rows moved as a whole: the same (mean, item) pairs in both orders
    assert sorted(found["desc"].split(";")) == sorted(found["asc"].split(";"))
    # the browser holds the hostile item id as plain text
    assert EVIL_ITEM in {unquote(cell.split("|")[1]) for cell in found["asc"].split(";")}


def test_screenshot(browser: str, report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = _run(browser, report, tmp_path, f"--screenshot={shot}", "--window-size=1200,3000")
    assert console_messages(done.stderr) == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 3000)
    assert len(data) > 100_000  # figures and tables drawn, not a blank page
