"""Simulation-based calibration (``ambppl.validation.sbc``).

Every ``sbc`` call compiles the model's prior program once (PyTensor caches it on disk
afterwards), hence the ``slow`` marks; the exact fits themselves take ~10 ms each.
"""

from __future__ import annotations

import numpy as np
import pytest

from ambppl.validation._result import ValidationResult
from ambppl.validation.sbc import _rank, _uniformity, sbc

SEED = 20261125


@pytest.fixture(scope="module")
def exact_result() -> ValidationResult:
    """100 simulations of the default model fitted exactly (calibrated by construction)."""
    return sbc(method="exact", n_simulations=100, random_seed=SEED)


@pytest.mark.slow
def test_exact_sbc_passes(exact_result):
    # Exact conjugate draws are the posterior: the verdict is a false alarm with
    # probability <= alpha = 0.01 (Holm), so a fixed seed that passes stays passing.
    result = exact_result
    assert result.check == "sbc" and result.passed and bool(result)
    assert result.level == 0.01 and result.p_value > 0.01
    table = result.table
    assert list(table["quantity"]) == [
        "q[c1]",
        "q[c2]",
        "q[cant_solve]",
        "amb",
        "amb_modified",
        "amb_old",
        "entropy",
    ]
    assert set(table["bins"]) == {20} and set(table["n_ranks"]) == {500}
    assert np.all((table["p_value"] >= 0) & (table["p_value"] <= 1))
    assert not table["flagged"].any()
    assert np.allclose(table["mean_pit"], 0.5, atol=0.05)
    assert np.allclose(table["sd_pit"], np.sqrt(1 / 12), atol=0.03)
    assert result.statistic == pytest.approx(table["statistic"].max())
    ranks = result.details["ranks"]
    assert sorted(ranks.children) == ["prior_sbc", "rank_draws", "ranks"]
    q = ranks["ranks"]["q"]
    assert q.dims == ("simulation", "item", "category") and q.shape == (100, 5, 3)
    assert q.min() >= 0 and q.max() <= 99 and q.dtype == np.int64
    assert (ranks["rank_draws"]["amb"] == 99).all()
    pit = ranks["prior_sbc"]["amb"]
    assert pit.dims == ("chain", "draw", "item") and float(pit.min()) > 0 and float(pit.max()) < 1
    assert (result.details["counts"].sum("category") == 10).all()
    assert result.details["fit_warnings"] == {}


@pytest.mark.slow
def test_sbc_is_reproducible():
    first = sbc(method="exact", n_simulations=10, n_items=2, random_seed=7)
    second = sbc(method="exact", n_simulations=10, n_items=2, random_seed=7)
    assert first.details["ranks"]["ranks"].identical(second.details["ranks"]["ranks"])
    assert first.table["p_value"].tolist() == second.table["p_value"].tolist()


@pytest.mark.slow
def test_wrong_prior_is_detected():
    # Simulate with beta = 1, fit with beta = 3: posteriors are pulled toward uniform q.
    # With 30 simulations of 5 items SBC rejected in 100 of 100 seeds
    # (benchmarks/sbc_full.py --fit-prior 3 --simulations 30 --repeat 100).
    result = sbc(
        method="exact", n_simulations=30, prior=1.0, fit_kwargs={"prior": 3.0}, random_seed=SEED
    )
    assert not result.passed and result.p_value <= 0.01
    row = result.table.set_index("quantity").loc["entropy"]
    assert row["flagged"] and row["mean_pit"] < 0.4  # the truth is less uniform than fitted
    assert result.details["fit_kwargs"] == {"prior": 3.0}
    assert "FAILED" in repr(result)


@pytest.mark.slow
def test_collapsed_runs_through():
    # Tiny NUTS runs: too short to assert calibration, enough to check the structure
    # (hyperparameter rows, ESS thinning, warnings counted rather than raised).
    result = sbc(
        "hierarchical_dirichlet",
        method="collapsed",
        n_simulations=3,
        n_items=2,
        draws=100,
        chains=2,
        random_seed=SEED,
    )
    table = result.table
    assert list(table["quantity"][:4]) == ["mu[c1]", "mu[c2]", "mu[cant_solve]", "kappa"]
    assert set(table["n_ranks"]) == {3, 6} and set(table["bins"]) == {2}
    assert np.all(np.isfinite(table["p_value"]))
    sizes = result.details["ranks"]["rank_draws"]
    assert ((sizes["kappa"] >= 1) & (sizes["kappa"] <= 99)).all()
    assert result.details["ranks"]["ranks"]["mu"].dims == ("simulation", "category")
    assert result.details["method"] == "collapsed" and result.details["chains"] == 2
    assert set(result.details["fit_warnings"]) <= {"ConvergenceWarning", "RuntimeWarning"}


@pytest.mark.slow
def test_empirical_bayes_flags_its_hyperparameters():
    # Point estimates are not posterior draws: the hyperparameter ranks are 0 or L.
    result = sbc(
        "hierarchical_dirichlet", method="empirical_bayes", n_simulations=20, random_seed=1
    )
    rows = result.table.set_index("quantity")
    assert not result.passed
    assert rows.loc["kappa", "flagged"] and rows.loc["kappa", "sd_pit"] > 0.4
    ranks = result.details["ranks"]["ranks"]["kappa"].values
    assert set(np.unique(ranks)) <= {0, 99}


@pytest.mark.slow
def test_plot(exact_result):
    import matplotlib.pyplot as plt

    fig = exact_result.plot()
    assert len([ax for ax in fig.axes if ax.get_visible()]) == len(exact_result.table)
    plt.close(fig)
    fig = exact_result.plot(quantities="amb", prob=0.95)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="quantities must be rows"):
        exact_result.plot(quantities="kappa")


def test_rank_breaks_ties_at_random():
    rng = np.random.default_rng(0)
    draws = np.array([[0.1], [0.2], [0.2], [0.3]])
    assert _rank(draws, np.array([0.25]), rng).tolist() == [3]
    assert _rank(draws, np.array([0.0]), rng).tolist() == [0]
    tied = [int(_rank(draws, np.array([0.2]), rng)[0]) for _ in range(300)]
    assert set(tied) == {1, 2, 3}


def test_uniformity_test_is_calibrated_and_corrects_for_pooling():
    rng = np.random.default_rng(SEED)
    flat = _uniformity(np.full((40, 1), 0.5) + np.linspace(-0.49, 0.49, 40)[:, None], bins=4)
    assert flat["chi2"] == 0 and flat["p_value"] == 1
    # Independent uniform values: p-values uniform (false alarms at the nominal rate).
    p = np.array([_uniformity(rng.random((100, 5)), bins=20)["p_value"] for _ in range(400)])
    assert 0.0 <= np.mean(p <= 0.05) <= 0.09 and abs(np.mean(p) - 0.5) < 0.06
    # Five identical copies per simulation: the design effect is ~5 and removes the inflation.
    copies = np.repeat(rng.random((100, 1)), 5, axis=1)
    out = _uniformity(copies, bins=10)
    assert 3.5 < out["design_effect"] < 6.5
    assert out["statistic"] == pytest.approx(out["chi2"] / out["design_effect"])
    # A posterior too narrow: PIT values pile up at both ends.
    narrow = np.clip(rng.beta(0.5, 0.5, size=(100, 5)), 1e-9, 1 - 1e-9)
    assert _uniformity(narrow, bins=20)["p_value"] < 1e-6


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"model": "no_such_model"}, ValueError, "name must be one of"),
        ({"model": 3}, TypeError, "model must be the name"),
        ({"method": "collapsed"}, ValueError, "method must be one of the methods"),
        ({"n_simulations": 1}, ValueError, "n_simulations must be at least 2"),
        ({"n_simulations": 2.5}, TypeError, "n_simulations must be a positive integer"),
        ({"n_items": 0}, ValueError, "n_items must be a positive integer"),
        ({"n_categories": 1}, ValueError, "n_categories must be at least 2"),
        ({"cant_solve": "yes"}, TypeError, "cant_solve must be True or False"),
        ({"bins": 1}, ValueError, "bins must be between 2"),
        ({"alpha": 1.5}, ValueError, "alpha must be in the open interval"),
        ({"thin": 0}, ValueError, "thin must be a positive integer"),
        ({"fit_kwargs": {"draws": 5}}, ValueError, "fit_kwargs must not contain"),
        ({"fit_kwargs": {"kappa_sd": 1.0}}, ValueError, "fit_kwargs must hold parameters"),
        ({"fit_kwargs": [("prior", 3)]}, TypeError, "fit_kwargs must be a dict"),
        ({"kappa_sd": 1.0}, ValueError, "must be parameters of model"),
    ],
)
def test_bad_inputs(kwargs, error, match):
    with pytest.raises(error, match=match):
        sbc(**{"n_simulations": 10, **kwargs})
