"""``build_report``: the page ``ambppl report`` writes, by the route the library picks."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.cli import main
from ambppl.report import build_report


def _without_time(page: str) -> str:
    """The page without its header line (time stamp and command line)."""
    return re.sub(r'<p class="meta">.*?</p>', "", page, flags=re.S)


@pytest.fixture(scope="module")
def answers_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("build") / "answers.csv"
    rng = np.random.default_rng(5)
    rows = [
        {"task": f"t{i}", "worker": f"w{j}", "label": lab}
        for i, q in enumerate(rng.dirichlet([1.0, 1.0, 1.0], size=40))
        for j, lab in enumerate(rng.choice(["a", "b", "c"], size=6, p=q))
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("options", "keywords", "scored"),
    [
        ([], {}, True),  # exact dirichlet_categorical: no per-item draws
        (
            ["--model", "hierarchical_dirichlet", "--method", "empirical_bayes"],
            {"model": "hierarchical_dirichlet", "method": "empirical_bayes"},
            False,
        ),
    ],
)
def test_build_report_is_what_the_command_writes(
    answers_csv: Path, tmp_path: Path, options: list[str], keywords: dict, scored: bool
) -> None:
    out = tmp_path / "r.html"
    settings = ["--draws", "100", "--chains", "2", "--seed", "3", "--top", "2"]
    assert main(["report", str(answers_csv), *options, *settings, "-q", "-o", str(out)]) == 0
    data = ambppl.read_annotations(answers_csv)
    seen: list[str] = []
    page = build_report(
        data,
        **keywords,
        draws=100,
        chains=2,
        random_seed=3,
        top=2,
        source=str(answers_csv),
        progress=seen.append,
    )
    assert _without_time(page) == _without_time(out.read_text(encoding="utf-8"))
    assert ('id="scored-statement"' in page) is scored
    first = "scoring dirichlet_categorical" if scored else "fitting hierarchical_dirichlet"
    assert seen[0].startswith(first)


def test_build_report_refuses_nuts_keywords_without_nuts() -> None:
    counts = ambppl.read_annotations(np.array([[3, 1], [2, 2]]))
    with pytest.raises(ValueError, match="sample_kwargs tune NUTS"):
        build_report(counts, sample_kwargs={"tune": 100})
