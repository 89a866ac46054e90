"""Audit findings on the exact draws per distinct count vector (ambppl/analysis/distinct.py).

A: the refusal of draws that would take too long suggested a fixed ``--mcse`` ("above
0.0158"), even below the one given, told the user to "score fewer items at a time" (which
``--chunk-items`` does not do), and counted only the vectors that need draws.
B: ``p_above_mcse`` was 0 on rows from draws where no draw, or every draw, was above the
threshold (the plug-in ``sqrt(p (1 - p) / n)`` at ``p`` 0 or 1).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
import ambppl.analysis.distinct as distinct
from ambppl.analysis.distinct import summarize_distinct
from ambppl.cli import main

#: Category shares of the toy items (K = 4, the last is can't solve).
P = np.array([0.85, 0.1, 0.03, 0.02])


def _counts(values: np.ndarray) -> xr.DataArray:
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": [f"t{i}" for i in range(len(values))], "category": list("abcd")},
        attrs={"cant_solve": "d"},
        name="counts",
    )


def _mixed() -> xr.DataArray:
    """150 items of 40 answers (their rows need exact draws) and 50 of 300 answers (the
    accuracy map trusts the approximation for them at every mcse used here)."""
    rng = np.random.default_rng(20260514)
    return _counts(np.vstack([rng.multinomial(40, P, 150), rng.multinomial(300, P, 50)]))


def _write_answers(path: Path, counts: xr.DataArray) -> Path:
    """A long CSV (task, worker, label) holding ``counts``."""
    labels = [str(c) for c in counts["category"].values]
    rows = [
        (item, f"w{r}", labels[k])
        for item, row in zip(counts["item"].values, counts.values, strict=True)
        for k, c in enumerate(row)
        for r in range(int(c))
    ]
    pd.DataFrame(rows, columns=["task", "worker", "label"]).to_csv(path, index=False)
    return path


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("ambppl: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _slow_draws(monkeypatch: pytest.MonkeyPatch, n_rows: int, draws_in_a_minute: float) -> None:
    """Two threads, and a time per gamma variate at which the pilot of ``n_rows`` vectors
    over 4 categories with ``draws_in_a_minute`` draws each takes the guard's 60 s."""
    monkeypatch.setattr(distinct, "usable_cpus", lambda: 2)
    seconds = 60.0 * 2 / (n_rows * draws_in_a_minute * 4)
    monkeypatch.setattr(distinct, "SECONDS_PER_VARIATE", seconds)


def test_pilot_refusal_names_the_mcse_the_time_model_accepts(monkeypatch, tmp_path, capsys):
    counts = _mixed()
    table = ambppl.score(counts, random_seed=1, mcse=0.02)  # the run that succeeds
    n_distinct = table.attrs["n_distinct"]
    n_drawn = len(np.unique(counts.values[table["draws"].to_numpy() > 0], axis=0))
    assert 0 < n_drawn < n_distinct
    # 500.5 pilot draws per drawn vector take 60 s: mcse=0.02 asks for ceil(0.25 / 0.02**2)
    # = 625 (75 s: 2 parts); the smallest mcse of three digits with at most 500 draws is
    # 0.0224 (0.5 / sqrt(500) = 0.02236; 0.0223 gives 503)
    _slow_draws(monkeypatch, n_drawn, 500.5)
    with pytest.raises(ValueError) as refused:
        ambppl.score(counts, random_seed=1, mcse=0.02)
    said = str(refused.value)
    assert said.startswith(
        f"scoring {n_drawn} of the {n_distinct} distinct count vectors over 4 categories by "
        f"exact draws (the other {n_distinct - n_drawn} from the approximation; at least 625 "
        "exact draws per vector"
    ), said
    assert "would take about 75 s" in said
    assert (
        "pass mcse=0.0224 or larger (estimated 60 s), or score the items in 2 or more parts" in said
    )
    assert "chunk_items= does not help" in said and "--" not in said
    # the suggestion is the boundary of the same estimate: it runs, a step below is refused
    assert ambppl.score(counts, random_seed=1, mcse=0.0224).attrs["n_distinct"] == n_distinct
    with pytest.raises(ValueError, match=r"at least 503 exact draws .* pass mcse=0\.0224 or"):
        ambppl.score(counts, random_seed=1, mcse=0.0223)
    # on the command line, in its words
    path = _write_answers(tmp_path / "answers.csv", counts)
    assert main(["score", str(path), "--cant-solve", "d", "--mcse", "0.02", "-q"]) == 2
    line = _one_error_line(capsys)
    assert f"of the {n_distinct} distinct count vectors" in line
    assert "pass --mcse 0.0224 or larger" in line and "--chunk-items does not help" in line
    assert "mcse=" not in line and "chunk_items" not in line


def test_no_mcse_helps_says_so(monkeypatch):
    counts = _counts(np.random.default_rng(3).multinomial(40, P, 60))
    n_rows = len(np.unique(counts.values, axis=0))
    _slow_draws(monkeypatch, n_rows, 0.5)  # not even one draw per vector fits in a minute
    with pytest.raises(ValueError, match=r"no mcse below 0\.5 brings it under the limit: score"):
        ambppl.score(counts, random_seed=1, mcse=0.02, approximate=False)


def test_refusal_after_the_pilot_names_the_mcse_the_time_model_accepts(monkeypatch):
    counts = _counts(np.random.default_rng(4).multinomial(40, P, 80))
    n_rows = len(np.unique(counts.values, axis=0))
    # the pilot (1000 draws per vector below mcse 0.0158) takes 6 s, the draws it asks for
    # at mcse=0.002 (up to 62,500 per vector) far more
    _slow_draws(monkeypatch, n_rows, 10_000)
    with pytest.raises(ValueError) as refused:
        ambppl.score(counts, random_seed=1, mcse=0.002, approximate=False)
    said = str(refused.value)
    assert said.startswith("mcse=0.002 (the pilot draws ask for ")
    assert f"more exact draws for {n_rows} distinct count vectors over 4 categories)" in said
    bound = float(re.search(r"pass mcse=([0-9.e-]+) or larger", said).group(1))
    step = 10.0 ** (math.floor(math.log10(bound)) - 2)
    assert 0.002 < bound - step
    # the same pilot (same seed, rows and size) at the suggested bound: within the guard; one
    # step (third digit) below: refused by the same estimate
    table = ambppl.score(counts, random_seed=1, mcse=bound, approximate=False)
    assert (table["p_above_mcse"] <= bound).all()
    below = f"{bound - step:.3g}"
    with pytest.raises(ValueError, match=rf"^mcse={below} \(the pilot draws ask for .* pass "):
        ambppl.score(counts, random_seed=1, mcse=float(below), approximate=False)


#: P(amb > 0.4) under Dirichlet(1, 1, 2, 5), the posterior of counts (0, 0, 1, 4) (can't
#: solve last) under the flat prior: about 0.99699 (10**7 draws, seed 12345: 0.9969937, MCSE
#: 1.7e-5); computed again below from 2 * 10**6 independent draws.
def _reference_share(n: int = 2_000_000) -> tuple[float, float]:
    rng = np.random.default_rng(12345)
    q = rng.dirichlet([1.0, 1.0, 2.0, 5.0], size=n)
    proper = q[:, :3]
    amb = 1.0 - (proper**2).sum(axis=1) / proper.sum(axis=1)
    p = float(np.mean(amb > 0.4))
    return p, math.sqrt(p * (1.0 - p) / n)


def test_p_above_mcse_covers_the_truth_at_the_edge():
    truth, truth_se = _reference_share()
    assert abs(truth - 0.9969937) < 5 * truth_se
    # 600 independent rows of the same vector (each row has its own draws): with 1000 draws
    # each, all of them above the threshold about one time in twenty (0.997**1000 = 0.05)
    rows = 600
    cols = summarize_distinct(
        np.tile([0, 0, 1, 4], (rows, 1)),
        np.ones(4),
        measure="amb",
        cs=3,
        threshold=0.4,
        hdi_prob=0.89,
        mcse=0.005,
        seed=np.random.SeedSequence(20260514),
        workers=2,
        approximate=False,
    )
    p, se, n = cols["p_above"], cols["p_above_mcse"], cols["draws"]
    assert (n == 1000).all()
    at_one = p == 1.0
    assert at_one.sum() >= 10  # the case of the finding occurs (expected 30)
    # no row from draws claims zero Monte Carlo error; the route's bound still holds
    assert (se > 0).all() and (se <= 0.005).all()
    # p +- 2 mcse covers the truth: 94.9 % of samples for this truth (binomial probabilities;
    # the plug-in: 79.9 %, the rows at 1 never); over 600 rows the share's sd is 0.9 %, so
    # 90 % is more than 5 sd below the expected share and 10 sd above the plug-in's
    covered = np.abs(p - truth) <= 2 * se + 2 * truth_se
    assert covered.mean() >= 0.90, covered.mean()
    # the rows at 1: the truth is 1 - p_ref = 0.0030 below, about 2.1 of their errors
    assert np.all(np.abs(p[at_one] - truth) <= 2.5 * se[at_one])


def test_score_rows_from_draws_never_claim_zero_error():
    # items whose draws all fall above 0.4 (the docs' example has 12,021 such rows of 20,000)
    rng = np.random.default_rng(0)
    counts = ambppl.read_annotations(
        rng.multinomial(20, rng.dirichlet(np.ones(5), size=2000)),
        categories=list("abcde"),
        cant_solve="e",
    )
    table = ambppl.score(counts, random_seed=1)
    drawn = table["draws"].to_numpy() > 0
    edge = drawn & np.isin(table["p_above"].to_numpy(), [0.0, 1.0])
    assert edge.sum() > 100
    assert (table.loc[drawn, "p_above_mcse"] > 0).all()
    assert (table["p_above_mcse"] <= 0.005).all()
    # Agresti-Coull at 1000 draws all above: p~ = 1002/1004
    shrunk = 1002 / 1004
    at_1000 = edge & (table["draws"].to_numpy() == 1000)
    np.testing.assert_allclose(
        table.loc[at_1000, "p_above_mcse"], math.sqrt(shrunk * (1 - shrunk) / 1000), rtol=1e-12
    )
