"""Shared fixtures: the read-only ../shared folder and seeded generators."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, settings

# benchmarks/mutation.py runs pytest with --hypothesis-profile=mutation: a property test that
# fails on a mutant stops at its first counterexample instead of shrinking it (the verdict is
# the same; shrinking took minutes per mutant).
settings.register_profile("mutation", phases=[Phase.explicit, Phase.reuse, Phase.generate])

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def load_benchmark(name: str):
    """The module ``benchmarks/<name>.py``, loaded with ``benchmarks/`` on the import path
    while it runs (its sibling imports: settings, crowds, ...)."""
    folder = str(ROOT / "benchmarks")
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


#: The ``<section id=...>`` elements every HTML report must contain (issue 5's list).
REPORT_SECTIONS = (
    "overview",
    "model",
    "convergence",
    "agreement",
    "distribution",
    "items",
    "top",
    "sensitivity",
)


#: Headless browsers the browser tests look for (tests/report/test_browser.py,
#: tests/docs/test_site.py), first found wins.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Flags for a quiet, offline, throwaway headless session.
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]


def run_browser(browser: str, url: str, tmp: Path, *extra: str):
    """Run headless Chromium on ``url`` with :data:`BROWSER_FLAGS`, a fresh profile under
    ``tmp`` and ``extra`` flags (e.g. ``--dump-dom``); the finished process (exit 0 asserted,
    output in text)."""
    import subprocess

    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    done = subprocess.run(
        [browser, *BROWSER_FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture(scope="session")
def browser() -> str:
    """Path of a headless Chromium; skips (fails in CI, where .ci/run installs one) where
    there is none."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    message = (
        f"no headless browser found (looked for {', '.join(BROWSERS)}); apt-get install chromium"
    )
    if IN_CI:
        pytest.fail(message + " (CI must run the browser tests)")
    pytest.skip(message)


@pytest.fixture
def shared_data() -> Path:
    """Path to ``../shared/data``; skips the test where that folder is absent."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"{path} is absent (it exists only in development checkouts and CI)")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    """A generator with a fixed seed; tests that need their own seed make one."""
    return np.random.default_rng(20261125)


@pytest.fixture(scope="session")
def small_counts():
    """3 items x 3 categories (can't-solve last) shared by the fit and summary tests."""
    import xarray as xr

    return xr.DataArray(
        np.array([[5, 0, 0], [2, 2, 1], [1, 3, 2]]),
        dims=("item", "category"),
        coords={"item": ["clear", "mixed", "unsure"], "category": ["yes", "no", "cs"]},
        attrs={"cant_solve": "cs", "source": "test"},
    )


@pytest.fixture(scope="session")
def nuts_fit(small_counts):
    """The one NUTS fit of the suite (PyMC compiles ~60 s cold per new model shape):
    2 chains x 300 draws on ``small_counts``, reused by test_fit and test_summary.

    So short a run may miss fit's convergence standard (bulk/tail ESS >= 400); the tests that
    use it compare with MCSE-based tolerances, so its ConvergenceWarning is silenced here
    (the warning itself is tested in test_fit.py)."""
    import warnings

    import ambppl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.fit(
            small_counts,
            method="nuts",
            draws=300,
            chains=2,
            random_seed=20261125,
            sample_kwargs={"tune": 300, "cores": 1},
        )


#: A toy catalog model of individual answers (info record data: "long"): its program is the
#: answers table itself, so a test sees exactly what fit / the CLI hand to such a model.
LONG_MODEL = '''
"""A model of individual answers (info record data: "long"), for the dispatch tests."""


def model(answers, **params):
    return answers
'''


def write_long_model(folder: Path) -> None:
    """Write the toy model ``answers_model`` (``.py`` + ``.json``) into ``folder``."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answers_model.py").write_text(LONG_MODEL)
    info = {
        "name": "answers_model",
        "description": "toy",
        "parameters": {},
        "reference": "none",
        "methods": ["nuts"],
        "data": "long",
    }
    (folder / "answers_model.json").write_text(json.dumps(info))


@pytest.fixture
def unanimous_answers():
    """``make(n_items, split_item)``: answers (``read_long``) of ``n_items`` items with three
    agreeing answers each from 6 raters (item i0 split 1:2 if ``split_item``), plus one item
    with a single answer (it cannot disagree); seeded. For the models' warning before
    sampling a design whose every item is unanimous."""
    import pandas as pd

    from ambppl.data.readers import read_long

    def make(n_items: int, split_item: bool):
        rng = np.random.default_rng(3)
        rows = [
            (f"i{i}", f"r{j}", "yes" if i % 2 else "no")
            for i in range(n_items)
            for j in rng.choice(6, size=3, replace=False)
        ]
        if split_item:
            rows[0] = ("i0", rows[0][1], "yes")  # i0 is a "no" item: now 1 yes, 2 no
        rows.append(("lone", "r0", "yes"))
        return read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))

    return make


@pytest.fixture
def slow_legend_clock(monkeypatch):
    """A clock for matplotlib's legend placement that moves 2 s per reading: the loaded
    machine on which matplotlib warns "Creating legend with loc="best" can be slow" for a
    legend at the default location (over 1 s of placement). A figure whose legends name their
    location draws without the warning (warnings are errors here)."""
    import types

    import matplotlib.legend

    ticks = iter(range(0, 10**6, 2))
    clock = types.SimpleNamespace(perf_counter=lambda: float(next(ticks)))
    monkeypatch.setattr(matplotlib.legend, "time", clock)
    return clock


def page_section(page: str, name: str) -> str:
    """The inner HTML of the report's ``<section id="name">``."""
    import re

    found = re.search(rf'<section id="{name}">(.*?)</section>', page, flags=re.S)
    assert found is not None, name
    return found.group(1)


def visible_text(part: str) -> str:
    """The text of an HTML fragment as a reader sees it: tags dropped, entities decoded,
    white space collapsed."""
    import html
    import re

    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", part))).strip()
