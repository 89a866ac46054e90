"""``ambppl.validation.check_moments`` and the shared ``ValidationResult`` / Holm machinery."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest
import xarray as xr
from scipy.stats import chi2, norm

import ambppl
from ambppl.data.readers import example_path, read_annotations
from ambppl.validation import ValidationResult, check_moments
from ambppl.validation._result import holm

matplotlib.use("Agg")

CS = "I can't tell"


@pytest.fixture(scope="module")
def weather():
    return read_annotations(example_path("weather_sentiment"), cant_solve=CS)


@pytest.fixture(scope="module")
def weather_fit(weather):
    return ambppl.fit(weather, draws=1000, chains=4, random_seed=7)


@pytest.fixture(scope="module")
def weather_check(weather_fit):
    return check_moments(weather_fit)


def test_holm_matches_the_hand_computation():
    # Holm (1979): sorted p (0.005, 0.01, 0.03, 0.04) times (4, 3, 2, 1) = (0.02, 0.03, 0.06,
    # 0.04), then the running maximum: (0.02, 0.03, 0.06, 0.06); NaN stays out of the family.
    got = holm([0.01, 0.04, 0.03, 0.005, np.nan])
    np.testing.assert_allclose(got[:4], [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(got[4])
    assert np.isnan(holm([np.nan])).all()


def test_correct_posterior_passes_and_table_layout(weather_check, weather):
    check = weather_check
    assert isinstance(check, ValidationResult)
    assert check.passed and bool(check) and check.check == "moments"
    assert check.level == 0.01
    n_items = weather.sizes["item"]
    # 4 proper classes + can't-solve: amb, modified (mean, var), old, entropy (mean).
    assert len(check.table) == 6 * n_items
    assert list(check.table.columns) == [
        "item",
        "measure",
        "moment",
        "estimate",
        "reference",
        "mcse",
        "z",
        "p_value",
        "p_holm",
        "flagged",
    ]
    assert check.statistic == pytest.approx(check.table["z"].abs().max())
    assert check.p_value == pytest.approx(check.table["p_holm"].min())
    assert check.n_flagged == 0


def test_z_scores_are_standard_normal(weather_check):
    # Exact draws: the z-scores of the 200 items' amb means are independent N(0, 1) up to the
    # normal approximation; their mean is within 4 / sqrt(200) of 0 and their sum of squares
    # within the chi-square(200) 0.01 % / 99.99 % quantiles.
    z = weather_check.table.query("measure == 'amb' and moment == 'mean'")["z"].to_numpy()
    assert abs(z.mean()) < 4 / np.sqrt(z.size)
    ss = float(np.sum(z**2))
    assert chi2.ppf(1e-4, z.size) < ss < chi2.ppf(1 - 1e-4, z.size)


def test_reference_is_the_closed_form(weather_check, weather):
    prior = np.ones(weather.sizes["category"])
    alpha = weather.values + prior
    rows = weather_check.table.query("measure == 'modified' and moment == 'var'")
    np.testing.assert_allclose(
        rows["reference"], ambppl.dirichlet_var(alpha, "modified", cant_solve=-1), rtol=1e-12
    )


def test_mcse_options(weather_fit):
    auto = check_moments(weather_fit, measures="amb")
    independent = check_moments(weather_fit, measures=["amb"], mcse="independent")
    arviz = check_moments(weather_fit, measures="amb", mcse="arviz")
    np.testing.assert_array_equal(auto.table["mcse"], independent.table["mcse"])
    # For independent draws ArviZ's estimate agrees with sd / sqrt(N) up to the noise of the
    # autocorrelation estimate (a few per cent at N = 4000).
    ratio = arviz.table["mcse"] / independent.table["mcse"]
    assert 0.85 < float(ratio.median()) < 1.15
    assert set(auto.table["measure"]) == {"amb"}


def test_small_fit_doctest_example_has_all_measures():
    result = ambppl.fit(
        ambppl.read_annotations(np.array([[5, 5, 5], [5, 0, 0], [3, 1, 1]]), cant_solve="2"),
        draws=500,
        chains=2,
        random_seed=1,
    )
    check = check_moments(result)
    assert set(check.table["measure"]) == {"amb", "modified", "old", "entropy"}
    # A single proper class besides can't-solve: only amb and entropy exist.
    one = ambppl.fit(
        ambppl.read_annotations(np.array([[5, 1], [0, 3]]), cant_solve="1"),
        draws=100,
        random_seed=2,
    )
    assert set(check_moments(one).table["measure"]) == {"amb", "entropy"}


def test_shifted_draws_fail(weather_fit):
    shifted = weather_fit.copy(deep=True)
    post = shifted["posterior"].to_dataset()
    post["amb"] = post["amb"] + 0.02
    shifted["posterior"] = post
    check = check_moments(shifted)
    assert not check.passed
    flagged = check.table[check.table["flagged"]]
    assert set(flagged["measure"]) == {"amb"}


@pytest.mark.slow
def test_learned_prior_is_checked_conditionally_on_the_hyperparameters(weather):
    # hierarchical_dirichlet (collapsed): q_i | mu, kappa ~ Dirichlet(kappa mu + counts_i).
    subset = weather.isel(item=slice(0, 60))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(subset, "hierarchical_dirichlet", draws=500, chains=2, random_seed=3)
    check = check_moments(result)
    assert check.passed
    assert "learned prior" in check.description
    assert len(check.table) == 6 * 60
    # Conditional draws 2 % too large no longer match the per-draw closed form.
    broken = result.copy(deep=True)
    post = broken["posterior"].to_dataset()
    post["amb"] = post["amb"] * 1.02
    broken["posterior"] = post
    assert not check_moments(broken).passed


def test_refuses_a_model_without_closed_form(weather_fit):
    other = weather_fit.copy()
    other.attrs = {**weather_fit.attrs, "prior": None, "model": "rater_whatever"}
    other["posterior"].attrs = {**weather_fit["posterior"].attrs, "prior": None}
    with pytest.raises(ValueError, match="closed-form posterior moments"):
        check_moments(other)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"alpha": 0.0}, ValueError, "alpha must be in the open interval"),
        ({"alpha": "0.01"}, TypeError, "alpha must be a number"),
        ({"measures": "sharpness"}, ValueError, "measure must be one of"),
        ({"mcse": "batch"}, ValueError, "mcse must be one of"),
    ],
)
def test_bad_arguments(weather_fit, kwargs, error, match):
    with pytest.raises(error, match=match):
        check_moments(weather_fit, **kwargs)


def test_bad_results():
    with pytest.raises(TypeError, match=r"result must be the xarray\.DataTree"):
        check_moments(np.zeros((4, 100)))
    with pytest.raises(ValueError, match="'observed_data' group"):
        check_moments(xr.DataTree.from_dict({"posterior": xr.Dataset()}))
    tiny = ambppl.fit(
        ambppl.read_annotations(np.array([[3, 1, 1]]), cant_solve="2"),
        draws=20,
        chains=2,
        random_seed=1,
    )
    with pytest.raises(ValueError, match="at least 100 draws"):
        check_moments(tiny)
    one = ambppl.fit(
        ambppl.read_annotations(np.array([[5, 1], [0, 3]]), cant_solve="1"),
        draws=100,
        random_seed=2,
    )
    with pytest.raises(ValueError, match="closed form for 1 proper classes"):
        check_moments(one, measures="modified")


def test_plot_and_html(weather_check, slow_legend_clock):
    import io

    import matplotlib.pyplot as plt

    fig = weather_check.plot(n_items=3)
    assert len(fig.axes) == 2
    fig.savefig(io.BytesIO(), format="png")  # drawn on a slow machine: no legend warning
    plt.close(fig)
    page = weather_check._repr_html_()
    assert "moments: passed" in page and "<table" in page
    assert "passed" in repr(weather_check)


def test_family_wise_cut_off():
    # The Holm decision flags a single row exactly when its two-sided p-value is below
    # alpha / m for the smallest p (Bonferroni step): a z of norm.isf(0.005 / 1200) + 0.01
    # is flagged among 1200 tests, one 0.01 below is not.
    import pandas as pd

    from ambppl.validation._result import decide

    for shift, flagged in ((0.01, True), (-0.01, False)):
        z = np.zeros(1200)
        z[0] = norm.isf(0.005 / 1200) + shift
        table = pd.DataFrame({"p_value": 2 * norm.sf(np.abs(z))})
        passed, _ = decide(table, "p_value", 0.01)
        assert passed is (not flagged)


def test_plugin_z_is_not_normal_where_few_draws_show_a_share():
    # Why MIN_EXPECTED: the z of the mean of N = 4000 draws of a share q ~ Beta(a, 5) on the
    # draws' own standard error, against the exact mean a / (a + 5). At N a = 1 most draws
    # round the share to ~0 and the mean rests on a handful: |z| > 3.29 (two-sided 0.001) in
    # about 25% of 400 replications (MIN_EXPECTED's comment: 25.1% of 4000), far from 0.1%;
    # at N a = 100 (binomial sd of 400 replications at 0.2%: 0.2%) it is near nominal.
    from ambppl.validation._draws import MIN_EXPECTED

    rng = np.random.default_rng(20261207)
    n, reps, crit = 4000, 400, norm.isf(0.0005)
    rates = {}
    for na in (1.0, 100.0):
        a = na / n
        x = rng.beta(a, 5.0, size=(reps, n))
        z = (x.mean(axis=1) - a / (a + 5.0)) / (x.std(axis=1, ddof=1) / np.sqrt(n))
        rates[na] = float(np.mean(np.abs(z) > crit))
    assert rates[1.0] > 0.15  # 25% expected; binomial sd 2.2%
    assert rates[100.0] < 0.015  # 0.2% expected
    assert 1.0 < MIN_EXPECTED < 100.0


def test_items_whose_draws_cannot_show_a_share_are_not_tested():
    # prior 1e-6: the unanimous items' other share is 0 in nearly every one of the 4000 draws
    # while the closed-form mean keeps its rare nonzero values; their z was -inf (a certain
    # false failure, and the report's "8 of 4 tests flagged"). They are left out, and said so.
    from ambppl.validation import TooFewDraws, check_density

    counts = np.array([[5, 0], [3, 2], [0, 5]])
    fit = ambppl.fit(counts, prior=1e-6, draws=1000, chains=4, random_seed=3)
    check = check_moments(fit)
    assert check.passed
    untested = check.table[check.table["z"].isna()]
    assert sorted(set(untested["item"])) == [0, 2]
    assert check.table[check.table["item"] == 1]["z"].notna().all()
    assert "Holm over 6 tests. 2 items not tested" in check.description
    density = check_density(fit)
    assert density.passed and density.table["D"].isna().sum() == 6  # 2 items x 3 measures
    assert "Holm over 3 tests. 2 items not tested" in density.description
    # every item unseen: not applicable, with the draws it would need (and still a ValueError)
    unanimous = ambppl.fit(counts[[0, 2]], prior=1e-6, draws=500, chains=2, random_seed=3)
    for check_it in (check_moments, check_density):
        with pytest.raises(TooFewDraws, match=r"draw at least 1e\+07 times") as info:
            check_it(unanimous)
        assert isinstance(info.value, ValueError)
    # a prior of 0.1 with 100 draws is tested (0.1 x 100 = MIN_EXPECTED)
    small = ambppl.fit(counts, prior=0.1, draws=50, chains=2, random_seed=3)
    assert check_moments(small).table["z"].notna().all()


def test_an_infinite_z_counts_among_the_tests():
    # draws that are all one value where the posterior has spread: z = -inf is a test, flagged
    counts = np.array([[3, 2], [2, 3]])
    fit = ambppl.fit(counts, draws=500, chains=2, random_seed=4)
    fit["posterior"]["amb"] = fit["posterior"]["amb"] * 0 + 0.1
    check = check_moments(fit, measures="amb")
    assert not check.passed and "Holm over 4 tests" in check.description


@pytest.mark.parametrize(
    ("measures", "error", "match"),
    [
        # pandas' "No objects to concatenate" and "'int' object is not iterable" before
        ([], ValueError, r"measures must name at least one measure \(among amb, modified"),
        ((), ValueError, "measures must name at least one measure"),
        (3, TypeError, r"measures must be a measure name or a sequence of them .*but got 3"),
        (b"amb", TypeError, "measures must be a measure name or a sequence of them"),
    ],
)
def test_measures_that_name_nothing_are_refused(weather_fit, measures, error, match):
    with pytest.raises(error, match=match):
        check_moments(weather_fit, measures=measures)


def test_refusal_without_closed_form_names_a_check_that_applies(weather_fit):
    """It said "validate it with ambppl.validation.sbc or check_predictive instead", but the
    predictive check does not apply to such models either (dawid_skene: skipped on the next
    line); simulation-based calibration applies to every catalog model and method."""
    from ambppl.internal.messages import command_line_messages
    from ambppl.validation import NotApplicable

    other = weather_fit.copy()
    other.attrs = {**weather_fit.attrs, "prior": None, "model": "dawid_skene", "method": "nuts"}
    other["posterior"].attrs = {**weather_fit["posterior"].attrs, "prior": None}
    with pytest.raises(NotApplicable) as python:
        check_moments(other)
    assert str(python.value).endswith(
        "; ambppl.validation.sbc checks any catalog model and method by simulation-based "
        "calibration"
    )
    assert "check_predictive" not in str(python.value)
    with command_line_messages(), pytest.raises(NotApplicable) as command_line:
        check_moments(other)
    assert str(command_line.value).startswith(
        "the closed-form moments need a fixed Dirichlet prior or hyperparameters the model "
        "turns into one, but model 'dawid_skene' (--method nuts) has neither"
    )
