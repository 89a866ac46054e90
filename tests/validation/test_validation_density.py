"""``ambppl.validation.check_density``: draws of two-class items against the exact law."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from scipy.stats import kstwo

import ambppl
from ambppl.validation import check_density
from ambppl.validation.density import GRID_POINTS, _pit, two_class_cdf, two_class_pdf

matplotlib.use("Agg")

#: Two proper classes and can't-solve: the paper's figure cases (5,5,5), (5,0,0), (30,0,0)
#: plus an item without can't-solve answers and an unbalanced one.
COUNTS = np.array([[5, 5, 5], [5, 0, 0], [30, 0, 0], [3, 1, 0], [2, 3, 1]])


@pytest.fixture(scope="module")
def fit3():
    return ambppl.fit(
        ambppl.read_annotations(COUNTS, cant_solve="2"), draws=1000, chains=4, random_seed=11
    )


def test_correct_posterior_passes(fit3):
    check = check_density(fit3)
    assert check.passed and check.check == "density"
    assert len(check.table) == 3 * len(COUNTS)
    assert list(check.table.columns) == [
        "item",
        "measure",
        "n",
        "D",
        "p_value",
        "p_holm",
        "flagged",
    ]
    assert (check.table["n"] == 4000).all()  # exact draws are not thinned
    np.testing.assert_allclose(
        check.table["p_value"], kstwo.sf(check.table["D"], check.table["n"]), rtol=1e-12
    )


def test_pit_interpolation_matches_the_exact_cdf(fit3):
    # Beyond 2 * GRID_POINTS draws the exact CDF is evaluated on a quantile grid and
    # interpolated; the module states a PIT error below 1e-3.
    x = fit3["posterior"]["amb"].transpose("chain", "draw", "item").values
    assert x.shape[0] * x.shape[1] > 2 * GRID_POINTS
    alpha = COUNTS + 1.0
    fast = _pit(alpha, x, "amb", 2)
    exact = two_class_cdf(alpha, x[:1].reshape(-1, len(COUNTS)), "amb", 2)
    assert np.max(np.abs(fast[:1].reshape(-1, len(COUNTS)) - exact)) < 1e-3


@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
def test_two_class_law_without_cant_solve(measure, rng):
    # Independent twin: the empirical CDF of 200,000 exact Beta draws; its error is at most
    # 1.95 / sqrt(n) = 0.0044 uniformly with probability 0.999 (DKW inequality).
    a = np.array([[2.5, 4.0]])
    p1 = rng.beta(2.5, 4.0, size=200_000)
    q = np.stack([p1, 1 - p1], axis=-1)
    draws = ambppl.maths.measures.evaluate(measure, q, cant_solve=None)
    grid = np.quantile(draws, np.linspace(0.01, 0.99, 41))
    ecdf = np.searchsorted(np.sort(draws), grid, side="right") / draws.size
    exact = two_class_cdf(a, grid[:, None], measure, None)[:, 0]
    assert np.max(np.abs(exact - ecdf)) < 0.0044
    # The density integrates the CDF: trapezoid rule between two grid points.
    lo, hi = grid[10], grid[30]
    xs = np.linspace(lo, hi, 4001)
    integral = np.trapezoid(two_class_pdf(a[0], xs, measure, None), xs)
    cdf = two_class_cdf(a, np.array([[lo], [hi]]), measure, None)[:, 0]
    assert integral == pytest.approx(cdf[1] - cdf[0], abs=1e-6)


def test_without_cant_solve_category(rng):
    counts = np.array([[5, 5], [5, 0], [30, 0], [1, 2]])
    result = ambppl.fit(
        ambppl.read_annotations(counts, cant_solve=None), draws=1000, chains=2, random_seed=5
    )
    check = check_density(result)
    assert check.passed and len(check.table) == 12
    shifted = result.copy(deep=True)
    post = shifted["posterior"].to_dataset()
    post["amb_old"] = post["amb_old"] * 0.97
    shifted["posterior"] = post
    failed = check_density(shifted)
    assert not failed.passed
    assert set(failed.table.loc[failed.table["flagged"], "measure"]) == {"old"}


def test_no_two_class_item_passes_with_empty_table():
    result = ambppl.fit(
        ambppl.read_annotations(np.array([[3, 1, 1, 0], [0, 2, 2, 1]]), cant_solve="3"),
        draws=100,
        random_seed=1,
    )
    check = check_density(result)
    assert check.passed and len(check.table) == 0 and np.isnan(check.statistic)
    assert "nothing to test" in check.description
    with pytest.raises(ValueError, match="nothing to plot"):
        check.plot()


@pytest.mark.slow
def test_mcmc_draws_are_thinned_to_their_ess(nuts_fit):
    check = check_density(nuts_fit)
    n_total = nuts_fit["posterior"].sizes["chain"] * nuts_fit["posterior"].sizes["draw"]
    assert (check.table["n"] < n_total).all()
    assert check.passed


def test_refuses_a_learned_prior(fit3):
    learned = fit3.copy()
    learned.attrs = {**fit3.attrs, "prior": None, "model": "hierarchical_dirichlet"}
    learned["posterior"].attrs = {**fit3["posterior"].attrs, "prior": None}
    with pytest.raises(ValueError, match="fixed Dirichlet prior"):
        check_density(learned)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"measures": "entropy"}, "exact two-class law"),
        ({"alpha": 1.5}, "alpha must be in the open interval"),
        ({"mcse": "none"}, "mcse must be one of"),
    ],
)
def test_bad_arguments(fit3, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_density(fit3, **kwargs)


def test_plot_overlays_the_exact_density(fit3):
    import matplotlib.pyplot as plt

    fig = check_density(fit3, measures=["amb"]).plot(n_items=2)
    assert len(fig.axes) == 2
    assert all(len(ax.lines) == 1 for ax in fig.axes)
    plt.close(fig)
