"""``ambppl.score(..., method="map", mcse=...)``: the refusal says that the posterior mode is
one point, without draws or Monte Carlo error, as ``ambppl score --method map --mcse`` does.
It once ended "drop mcse= or set the fit's draws= and chains=", although map gives one point
and refuses draws= and chains=. The other fitted methods keep pointing at the draws.
docs/cli/index.md says the same of --mcse (it said "refused with a method that fits draws",
which map does not)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.data import read_long


@pytest.fixture(scope="module")
def answers():
    """10 items x 3 answers from 4 raters, with a can't-solve answer; seeded."""
    rng = np.random.default_rng(20261207)
    rows = [
        (f"i{i}", f"r{r}", rng.choice(["a", "b", "cs"], p=[0.5, 0.4, 0.1]))
        for i in range(10)
        for r in rng.choice(4, size=3, replace=False)
    ]
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return read_long(frame, cant_solve="cs")


@pytest.mark.parametrize(
    ("kwargs", "given"),
    [({"mcse": 0.01}, "mcse="), ({"mcse": 0.01, "approximate": True}, "mcse=, approximate=")],
)
def test_mcse_with_map_says_the_mode_has_no_draws(answers, kwargs, given) -> None:
    with pytest.raises(ValueError) as caught:
        ambppl.score(answers, "dawid_skene", method="map", **kwargs)
    message = str(caught.value)
    assert message.startswith(f"{given} ")
    assert "model 'dawid_skene' with method 'map' gives one point, the posterior mode" in message
    assert message.endswith(f"no draws, so no Monte Carlo error to bound; drop {given}")
    assert "draws= and chains=" not in message


def test_map_without_mcse_scores(answers) -> None:
    """The same call without mcse= scores (so the refusal above is mcse='s alone)."""
    table = ambppl.score(answers, "dawid_skene", method="map")
    assert sorted(table.index) == sorted(answers["item"].unique())
    assert {"label", "label_prob"} <= set(table.columns)
    assert table["label_prob"].between(0, 1).all()


@pytest.mark.parametrize("method", ["laplace", "nuts"])
def test_mcse_with_a_method_of_draws_still_points_at_draws(answers, method) -> None:
    with pytest.raises(ValueError) as caught:
        ambppl.score(answers, "dawid_skene", method=method, mcse=0.01)
    message = str(caught.value)
    assert f"model 'dawid_skene' with method {method!r} is fitted" in message
    assert message.endswith("drop mcse= or set the fit's draws= and chains=")
    assert "posterior mode" not in message


def test_the_command_line_page_says_why_map_refuses_mcse() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "cli" / "index.md"
    rows = [r for r in page.read_text(encoding="utf-8").splitlines() if r.startswith("| `--mcse")]
    assert len(rows) == 1, rows
    assert "refused with a method that fits draws (`--draws` sets how many) and with" in rows[0]
    assert rows[0].endswith(
        "`--method map`, which gives one point, the posterior mode: no draws, so no Monte "
        "Carlo error to bound |"
    )
