"""rater_effects recovers planted rater effects: one small seeded fit (the full study is
``benchmarks/recovery_rater_effects.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.data.readers import read_long
from ambppl.inference.catalog import get_model

CATEGORIES = ["a", "b", "c", "?"]
N_ITEMS, N_RATERS, PER_ITEM = 60, 15, 10
OVERUSERS = ("w00", "w05", "w10")
PROB = 0.94


def simulate(seed: int = 11) -> tuple[pd.DataFrame, pd.DataFrame]:
    """60 items x 10 answers from 15 raters; w00, w05, w10 have 10x the odds of "?"."""
    rng = np.random.default_rng(seed)
    module = get_model("rater_effects").module
    k = len(CATEGORIES)
    mu = np.array([0.6, 0.2, 0.0, -0.8])  # about 10 % "?" for a typical rater
    eta = mu + rng.normal(0, 1.0, size=(N_ITEMS, k))
    eta -= eta.mean(axis=1, keepdims=True)
    b = rng.normal(0, 0.3, size=(N_RATERS, k))
    ids = np.array([f"w{r:02d}" for r in range(N_RATERS)])
    b[np.isin(ids, OVERUSERS), -1] = np.log(10.0)  # 10x the odds of a zero-bias rater
    b -= b.mean(axis=1, keepdims=True)
    items = np.repeat(np.arange(N_ITEMS), PER_ITEM)
    raters = np.concatenate([rng.choice(N_RATERS, PER_ITEM, replace=False) for _ in range(N_ITEMS)])
    y = module.simulate_answers(eta, b, items, raters, rng=rng)
    frame = pd.DataFrame({"task": items, "worker": ids[raters], "label": np.array(CATEGORIES)[y]})
    return frame, pd.DataFrame(b, index=ids, columns=CATEGORIES)


def hdi_covers(draws: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Whether each truth lies in the HDI (:func:`arviz.hdi`) of its draws (axis 0)."""
    import arviz as az
    import xarray as xr

    dims = ("sample", *(f"d{j}" for j in range(np.ndim(draws) - 1)))
    hdi = az.hdi(xr.DataArray(draws, dims=dims), prob=PROB, dim=["sample"])
    return (truth >= hdi.sel(ci_bound="lower").values) & (truth <= hdi.sel(ci_bound="upper").values)


@pytest.fixture(scope="module")
def fitted():
    frame, b_true = simulate()
    with warnings.catch_warnings():
        # a short fit: the convergence standard is the benchmark's job
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(
            read_long(frame, cant_solve="?", categories=CATEGORIES),
            "rater_effects",
            # 2 x 1000 draws: with 2 x 300 the 94 % HDI's lower end of w10's odds ratio
            # (P(OR > 1) = 0.99) fell on either side of 1 with the package versions
            draws=1000,
            chains=2,
            random_seed=5,
            sampler="pymc",
            log_likelihood=False,
            sample_kwargs={"tune": 500},
        )
    return result, b_true


def test_planted_overusers_are_flagged(fitted):
    result, _ = fitted
    raters = ambppl.summarize(result, level="rater")
    flagged = set(raters.index[raters["overuses_cant_solve"].to_numpy(dtype=bool)])
    assert set(OVERUSERS) <= flagged
    assert len(flagged - set(OVERUSERS)) <= 1  # at most one false alarm among 12
    top = raters.sort_values("cant_solve_odds_ratio", ascending=False).index[:3]
    assert set(top) == set(OVERUSERS)


def test_coverage_of_rater_effects_is_not_absurd(fitted):
    result, b_true = fitted
    post = result["posterior"]
    draws = post["b"].transpose("chain", "draw", "rater", "category").values
    draws = draws.reshape(-1, *draws.shape[2:])
    truth = b_true.loc[[str(r) for r in post["rater"].values], CATEGORIES].to_numpy()
    covered = hdi_covers(draws, truth)
    n = covered.size  # 60 effects
    # Binomial se of a 94 % coverage over 60 effects is 0.031; the effects share the
    # hyperparameters and sum to zero per rater (design effect taken as 2), and the planted
    # outliers' "?" entries are shrunk towards the population: 4 inflated se below 0.94.
    bound = PROB - 4 * np.sqrt(2 * PROB * (1 - PROB) / n)
    assert covered.mean() >= bound, (covered.mean(), bound)
    # ... and the intervals are not uselessly wide: the truths are spread over (-1, 2.5).
    s = np.sort(draws, axis=0)
    width = s[int(0.97 * len(s))] - s[int(0.03 * len(s))]
    assert float(np.median(width)) < 1.5
