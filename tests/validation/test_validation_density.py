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


@pytest.mark.parametrize(
    ("measures", "error", "match"),
    [
        # passed before, saying "No item has exactly two proper classes" of these items
        ([], ValueError, r"measures must name at least one measure \(among amb, modified, old"),
        (3, TypeError, r"measures must be a measure name or a sequence of them .*but got 3"),
    ],
)
def test_measures_that_name_nothing_are_refused(fit3, measures, error, match):
    with pytest.raises(error, match=match):
        check_density(fit3, measures=measures)


def _learned(fit, hyper: bool):
    """``fit`` relabelled as a learned-prior fit (no fixed prior), with draws of mu and kappa
    (hierarchical_dirichlet) when ``hyper``."""
    import xarray as xr

    out = fit.copy(deep=True)
    out.attrs = {**fit.attrs, "prior": None, "model": "hierarchical_dirichlet", "parameters": "{}"}
    post = out["posterior"].to_dataset()
    post.attrs = {**post.attrs, "prior": None}
    if hyper:
        sizes = post.sizes
        rng = np.random.default_rng(4)
        k = post.sizes["category"]
        mu = rng.dirichlet(np.ones(k), size=(sizes["chain"], sizes["draw"]))
        post["mu"] = (("chain", "draw", "category"), mu)
        post["kappa"] = (
            ("chain", "draw"),
            rng.gamma(5.0, 1.0, size=(sizes["chain"], sizes["draw"])),
        )
    out["posterior"] = xr.DataTree(post)
    return out


def test_refusal_of_a_learned_prior_points_where_the_check_is():
    """It said "check it with ambppl.validation.check_moments (conditional on the
    hyperparameters) or sbc" also where check_moments had just refused the fit, and named
    Python functions on the command line. Now: the conditional moment check where it applies,
    else simulation-based calibration; on the command line the moments check by its name."""
    from ambppl.internal.messages import command_line_messages
    from ambppl.validation import NotApplicable, check_moments

    fit = ambppl.fit(
        ambppl.read_annotations(COUNTS, cant_solve="2"), draws=100, chains=2, random_seed=3
    )
    with_hyper = _learned(fit, hyper=True)
    with pytest.raises(NotApplicable) as conditional:
        check_density(with_hyper)
    assert "check_moments tests its draws conditionally on the hyperparameters" in str(
        conditional.value
    )
    check_moments(with_hyper)  # the check named applies (no NotApplicable)
    with command_line_messages(), pytest.raises(NotApplicable) as command_line:
        check_density(with_hyper)
    assert str(command_line.value).endswith(
        "; the moments check tests its draws conditionally on the hyperparameters"
    )
    assert "check_moments" not in str(command_line.value)
    without = _learned(fit, hyper=False)
    with pytest.raises(NotApplicable):
        check_moments(without)  # refused: so density must not send the caller there
    with pytest.raises(NotApplicable) as other:
        check_density(without)
    assert "check_moments" not in str(other.value)
    assert str(other.value).endswith(
        "nor closed-form moments: ambppl.validation.sbc checks any catalog model and method "
        "by simulation-based calibration"
    )


def test_pit_cost_follows_the_distinct_count_vectors(monkeypatch):
    """With up to 2 * GRID_POINTS draws per item the exact CDF was evaluated at every draw
    of every item (a quadrature each, ~80 us): 300 two-class items with can't-solve took 65 s
    with 1000 draws against 3 s with 1200. Items with the same counts share one law: their
    pooled draws now share one interpolation grid, as above 2 * GRID_POINTS draws."""
    import ambppl.validation.density as density

    rng = np.random.default_rng(8)
    counts = np.array([[3, 1, 1], [0, 4, 1], [2, 2, 1]])
    alpha_post = np.repeat(counts, 40, axis=0) + 1.0  # 120 items, 3 distinct laws
    alpha_post = np.vstack([alpha_post, [[7.0, 2.0, 3.0]]])  # and one item on its own
    q = np.stack([rng.dirichlet(a, size=(2, 250)) for a in alpha_post], axis=2)
    x = ambppl.amb(q, cant_solve=2)  # (chain, draw, item): 500 draws per item
    evaluated = []
    original = density.two_class_cdf

    def counting(alpha, values, measure, cs):
        evaluated.append(np.size(values))
        return original(alpha, values, measure, cs)

    monkeypatch.setattr(density, "two_class_cdf", counting)
    u = _pit(alpha_post, x, "amb", 2)
    # 3 grids of GRID_POINTS values, and every draw of the lone item (500 <= 2 * GRID_POINTS)
    assert sum(evaluated) == 3 * GRID_POINTS + 500  # was 121 x 500 = 60,500
    # the lone item keeps the exact CDF at every draw, bit for bit
    np.testing.assert_array_equal(
        u[:, :, -1], original(alpha_post[-1:], x[:, :, -1:], "amb", 2)[..., 0]
    )
    # the pooled items agree with the exact CDF at every draw within the interpolation error
    # measured for GRID_POINTS (below 1e-3; the KS resolution at 500 draws is ~0.06)
    exact = original(alpha_post[:-1], x[:, :, :-1].reshape(500, -1), "amb", 2)
    assert np.max(np.abs(u[:, :, :-1].reshape(500, -1) - exact)) < 1e-3
