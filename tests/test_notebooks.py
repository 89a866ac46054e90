"""Every notebook in ``notebooks/`` runs top to bottom (code cells executed in order).

The notebooks run with small settings: ``AMBPPL_NOTEBOOK_SMALL=1`` (a notebook that samples
reads it and draws less; its checks stay the same) and ``AMBPPL_SHARED`` naming the
``../shared`` folder, or a folder that does not exist where ``../shared`` is absent, so that a
notebook using the real data falls back to the bundled example (as its text says). They
draw under ``slow_legend_clock`` (``conftest.py``): a legend left at matplotlib's default
location would warn "can be slow" on a loaded machine, and warnings are errors here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LEARNED_PRIOR = ROOT / "notebooks" / "05_learned_prior.ipynb"
WEATHER = SHARED / "data" / "cf_weather_sentiment" / "weather-non-agg-DFE.csv"

#: Every notebook test draws under the slow legend clock (the module docstring says why).
pytestmark = pytest.mark.usefixtures("slow_legend_clock")


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3
    assert LEARNED_PRIOR in NOTEBOOKS


def _run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: Path) -> dict:
    """Execute the code cells of ``path`` in one namespace (small settings) and return it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AMBPPL_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("AMBPPL_SHARED", str(shared))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    namespace: dict = {"__name__": "__notebook__"}
    try:
        for i, cell in enumerate(cells):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            exec(compile(source, f"{path.name} cell {i}", "exec"), namespace)
    finally:
        plt.close("all")
    return namespace


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    shared = SHARED if WEATHER.is_file() else tmp_path / "absent"
    namespace = _run(path, tmp_path, monkeypatch, shared)
    if path == LEARNED_PRIOR:  # the real data where ../shared has it, else the example
        assert namespace["SMALL"]
        assert namespace["N"] == (1000 if WEATHER.is_file() else 200)


def test_learned_prior_notebook_falls_back_to_the_example(tmp_path, monkeypatch):
    """Without ../shared, notebook 05 runs (and checks what it says) on the bundled subset."""
    if not WEATHER.is_file():
        pytest.skip(f"{WEATHER} is absent: test_notebook_runs already used the bundled subset")
    namespace = _run(LEARNED_PRIOR, tmp_path, monkeypatch, tmp_path / "absent")
    assert namespace["N"] == 200 and namespace["DATA"].startswith("bundled 200-tweet subset")


RATER_EFFECTS = ROOT / "notebooks" / "06_rater_effects.ipynb"


def test_rater_effects_notebook_falls_back_to_the_example(tmp_path, monkeypatch):
    """Without ../shared, notebook 06 runs (and checks what it says) on the bundled subset."""
    if not WEATHER.is_file():
        pytest.skip(f"{WEATHER} is absent: test_notebook_runs already used the bundled subset")
    namespace = _run(RATER_EFFECTS, tmp_path, monkeypatch, tmp_path / "absent")
    assert namespace["N"] == 120 and namespace["DATA"].startswith("bundled 200-tweet subset")


DAWID_SKENE = ROOT / "notebooks" / "09_dawid_skene.ipynb"
FACE = SHARED / "data" / "face_sentiment" / "answer.csv"


def test_dawid_skene_notebook_falls_back_to_the_simulated_crowd(tmp_path, monkeypatch):
    """Without ../shared, notebook 09 runs on the simulated crowd and compares the raters'
    posterior accuracies with the planted ones; its section (d) ranks the items by their own
    answers (an item-level model), not by ``dawid_skene``'s class-level ``amb``."""
    from scipy.stats import spearmanr

    import ambppl

    if not FACE.is_file():
        pytest.skip(f"{FACE} is absent: test_notebook_runs already used the simulated crowd")
    namespace = _run(DAWID_SKENE, tmp_path, monkeypatch, tmp_path / "absent")
    assert namespace["DATA"].startswith("simulated crowd")
    table = namespace["table"]
    assert table["planted_accuracy"].notna().all() and namespace["rho_planted"] > 0.8
    # the items' own posterior mean amb follows their plug-in amb (Spearman 0.99 here, 0.98 on
    # the face data's first 150 items); dawid_skene's amb, one value per clear class, does not
    # (0.35 and 0.70)
    view, counts = namespace["view"], namespace["counts"]
    plug_in = ambppl.estimate(counts.to_numpy(), cant_solve=None)  # four proper classes
    own = spearmanr(view["own_amb"], plug_in).statistic
    assert own > 0.9
