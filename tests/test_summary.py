"""``ambppl.summarize`` and the decision helpers ``rank``, ``select``, ``stratify``."""

from __future__ import annotations

import importlib

import arviz_base
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.summary import COLUMNS

SAMPLE = ("chain", "draw")


@pytest.fixture(scope="module")
def exact_fit(small_counts):
    return ambppl.fit(small_counts, draws=4000, chains=2, random_seed=21)


@pytest.fixture(scope="module")
def table(exact_fit):
    return ambppl.summarize(exact_fit)


def test_columns_index_and_attrs(table, small_counts):
    assert list(table.columns) == list(COLUMNS)
    assert table.index.name == "item"
    assert table.index.tolist() == small_counts["item"].values.tolist()
    assert table.attrs == {
        "measure": "amb",
        "threshold": 0.4,
        "hdi_prob": pytest.approx(arviz_base.rcParams["stats.ci_prob"]),  # 0.89 in ArviZ 1.3
        "method": "exact",
        "model": "dirichlet_categorical",
    }


def test_default_hdi_prob_follows_arviz_rcparams(exact_fit):
    with arviz_base.rc_context({"stats.ci_prob": 0.5}):
        table = ambppl.summarize(exact_fit)
    assert table.attrs["hdi_prob"] == 0.5
    draws = exact_fit["posterior"]["amb"].values.reshape(-1, 3)
    inside = ((draws >= table["hdi_lower"].values) & (draws <= table["hdi_upper"].values)).mean(0)
    assert np.all(np.abs(inside - 0.5) <= 2 / draws.shape[0])


def test_count_columns(table, small_counts):
    n = small_counts.values.sum(axis=1)
    np.testing.assert_array_equal(table["n_answers"], n)
    np.testing.assert_allclose(table["cs_share"], small_counts.values[:, 2] / n)


def test_posterior_columns_are_the_draws_statistics(table, exact_fit):
    amb = exact_fit["posterior"]["amb"]
    np.testing.assert_allclose(table["mean"], amb.mean(SAMPLE), rtol=1e-12)
    np.testing.assert_allclose(table["sd"], amb.std(SAMPLE, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(table["p_above"], (amb > 0.4).mean(SAMPLE), rtol=1e-12)


def test_hdi_holds_its_mass_and_is_no_wider_than_the_central_interval(table, exact_fit):
    draws = exact_fit["posterior"]["amb"].values.reshape(-1, 3)
    n = draws.shape[0]
    inside = ((draws >= table["hdi_lower"].values) & (draws <= table["hdi_upper"].values)).mean(0)
    # ArviZ takes ceil(prob * n) draws (up to rounding): the share inside is prob within 2/n.
    prob = table.attrs["hdi_prob"]
    assert np.all(np.abs(inside - prob) <= 2 / n)
    central = np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    width = table["hdi_upper"].values - table["hdi_lower"].values
    assert np.all(width <= central[1] - central[0] + 1e-12)


def test_estimator_columns(table, small_counts):
    from ambppl.estimators import estimate

    values = small_counts.values
    for method in ("plugin", "less_biased"):
        expected = estimate(values, method=method, measure="amb", cant_solve=-1)
        np.testing.assert_allclose(table[method], expected, rtol=1e-12)
    # Independent formulas: the plug-in is amb(counts / n) (paper eq. plugin_estimator);
    # the less biased estimator is ERRATA item 8, a = 1 - sum n_k (n_k - 1) / (n (m - 1)).
    n = values.sum(axis=1)
    np.testing.assert_allclose(table["plugin"], ambppl.amb(values / n[:, None]), rtol=1e-12)
    proper = values[:, :2]
    m = proper.sum(axis=1)
    less = 1 - (proper * (proper - 1)).sum(axis=1) / (n * (m - 1))
    np.testing.assert_allclose(table["less_biased"], less, rtol=1e-12)


def test_exact_columns_are_the_closed_forms_and_agree_with_the_draws(table, small_counts):
    from ambppl.moments import dirichlet_mean, dirichlet_var

    alpha = small_counts.values + 1.0
    np.testing.assert_allclose(table["exact_mean"], dirichlet_mean(alpha), rtol=1e-12)
    np.testing.assert_allclose(table["exact_sd"], np.sqrt(dirichlet_var(alpha)), rtol=1e-12)
    se = table["sd"] / np.sqrt(8000)  # independent exact draws: se = sd / sqrt(n)
    assert np.all(np.abs(table["mean"] - table["exact_mean"]) <= 5 * se)


@pytest.mark.parametrize(
    ("measure", "variable", "has_var"),
    [
        ("modified", "amb_modified", True),
        ("amb_old", "amb_old", False),
        ("entropy", "entropy", False),
    ],
)
def test_other_measures(exact_fit, small_counts, measure, variable, has_var):
    table = ambppl.summarize(exact_fit, measure=measure, hdi_prob=0.5, threshold=0.7)
    draws = exact_fit["posterior"][variable]
    np.testing.assert_allclose(table["mean"], draws.mean(SAMPLE), rtol=1e-12)
    np.testing.assert_allclose(table["p_above"], (draws > 0.7).mean(SAMPLE), rtol=1e-12)
    assert table.attrs["hdi_prob"] == 0.5 and table.attrs["threshold"] == 0.7
    assert np.all(np.isfinite(table["exact_mean"]))
    # No closed-form variance for amb_old and entropy in ambppl.moments: documented NaN.
    assert np.all(np.isfinite(table["exact_sd"])) == has_var
    assert np.all(np.isnan(table["exact_sd"])) != has_var


def test_measure_is_computed_from_q_when_not_stored(small_counts, exact_fit):
    only_q = ambppl.fit(small_counts, draws=4000, chains=2, random_seed=21, var_names=["q"])
    pd.testing.assert_frame_equal(
        ambppl.summarize(only_q, measure="old"), ambppl.summarize(exact_fit, measure="old")
    )
    only_amb = ambppl.fit(small_counts, draws=10, chains=1, var_names=["amb"])
    with pytest.raises(ValueError, match=r"fit with var_names=\['amb_old'\]"):
        ambppl.summarize(only_amb, measure="old")


def test_no_closed_form_without_a_fixed_prior(exact_fit):
    # a learned prior (hierarchical_dirichlet's collapsed fit) records no attrs["prior"]
    other = exact_fit.copy()
    del other.attrs["prior"]
    del other["posterior"].attrs["prior"]
    table = ambppl.summarize(other)
    assert table["exact_mean"].isna().all() and table["exact_sd"].isna().all()
    assert table["mean"].notna().all()


@pytest.mark.slow
def test_plain_pymc_trace_of_a_catalog_model_is_read_from_its_data(small_counts):
    # Defect found by trying the API: a trace from pm.sample on a catalog model used to carry
    # no can't-solve label, so summarize silently took cs_share = 0 and no closed forms.
    import warnings

    import pymc as pm

    model = ambppl.get_model("dirichlet_categorical").build(small_counts, prior=0.5)
    with warnings.catch_warnings():  # a deliberately short run; PyMC may warn about it
        warnings.simplefilter("ignore", RuntimeWarning)
        trace = pm.sample(draws=200, tune=200, chains=1, random_seed=3, progressbar=False,
                          model=model, compute_convergence_checks=False)
    table = ambppl.summarize(trace)
    assert table["cs_share"].tolist() == [0.0, 0.2, 2 / 6]  # counts (5,0,0), (2,2,1), (1,3,2)
    # the closed forms use the prior recorded in the model (0.5, not the default 1.0)
    expected = ambppl.dirichlet_mean(small_counts.values + 0.5, cant_solve=2)
    np.testing.assert_allclose(table["exact_mean"], expected, rtol=1e-12)
    # without the model's data the trace cannot be read: refused, not guessed
    del trace["constant_data"]
    with pytest.raises(ValueError, match=r"result must say which category is can't-solve"):
        ambppl.summarize(trace)


def test_nuts_adds_ess_and_rhat(nuts_fit):
    import arviz as az

    table = ambppl.summarize(nuts_fit)
    assert list(table.columns) == [*COLUMNS, "ess_bulk", "r_hat"]
    amb = nuts_fit["posterior"]["amb"]
    np.testing.assert_allclose(table["ess_bulk"], az.ess(amb, method="bulk"), rtol=1e-12)
    np.testing.assert_allclose(table["r_hat"], az.rhat(amb), rtol=1e-12)
    assert table.attrs["method"] == "nuts"


def test_no_cant_solve_category(small_counts):
    counts = small_counts.assign_attrs(cant_solve=None)
    table = ambppl.summarize(ambppl.fit(counts, draws=200, chains=1, random_seed=1))
    np.testing.assert_array_equal(table["cs_share"], 0.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"measure": "ambiguity"}, ValueError, r"measure must be one of 'amb', 'modified'"),
        ({"hdi_prob": 1.5}, ValueError, r"hdi_prob must be in the open interval \(0, 1\)"),
        ({"hdi_prob": 0}, ValueError, r"hdi_prob must be in the open interval \(0, 1\)"),
        ({"threshold": 1.0}, ValueError, r"threshold must be in the open interval \(0, 1\)"),
        ({"threshold": "high"}, TypeError, r"threshold must be a number in \(0, 1\)"),
    ],
)
def test_bad_arguments(exact_fit, kwargs, error, match):
    with pytest.raises(error, match=match):
        ambppl.summarize(exact_fit, **kwargs)


def test_bad_result(exact_fit):
    with pytest.raises(TypeError, match=r"result must be the xarray\.DataTree returned"):
        ambppl.summarize(exact_fit["posterior"].to_dataset())
    no_obs = xr.DataTree.from_dict({"posterior": exact_fit["posterior"].to_dataset()})
    with pytest.raises(ValueError, match=r"result must have a 'observed_data' group"):
        ambppl.summarize(no_obs)


def test_item_without_answers(small_counts):
    # Its posterior is the prior. E[amb] under Dirichlet(1, 1, 1), by hand: E q_cs = 1/3 and
    # p = q_yes / (1 - q_cs) ~ Beta(1, 1), E[p^2 + (1 - p)^2] = 2/3, so 1/3 + 2/3 * 1/3 = 5/9.
    counts = xr.concat(
        [small_counts, small_counts.isel(item=[0]).assign_coords(item=["none"]) * 0], "item"
    ).assign_attrs(small_counts.attrs)
    table = ambppl.summarize(ambppl.fit(counts, draws=200, chains=1, random_seed=1))
    row = table.loc["none"]
    assert row["n_answers"] == 0
    assert np.isnan(row["cs_share"]) and np.isnan(row["plugin"]) and np.isnan(row["less_biased"])
    assert row["exact_mean"] == pytest.approx(5 / 9, rel=1e-12)
    assert table.loc[["clear", "mixed", "unsure"], "plugin"].notna().all()


# ---------------------------------------------------------------------------------------
# summarize_counts: one set of draws per distinct count vector


def test_summarize_counts_shares_draws_between_equal_count_vectors(small_counts, monkeypatch):
    values = small_counts.values[[0, 1, 2, 1, 0, 0]]
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": list("uvwxyz"), "category": ["yes", "no", "cs"]},
        attrs={"cant_solve": "cs"},
    )
    table = ambppl.summarize_counts(counts, draws=6000, random_seed=3)
    assert table.index.tolist() == list("uvwxyz") and table.index.name == "item"
    assert list(table.columns) == list(COLUMNS)
    assert table.attrs["n_distinct"] == 3 and table.attrs["draws"] == 6000
    assert table.attrs["method"] == "exact" and table.attrs["measure"] == "amb"
    pd.testing.assert_series_equal(table.loc["v"], table.loc["x"], check_names=False)
    pd.testing.assert_series_equal(table.loc["u"], table.loc["z"], check_names=False)
    se = table["sd"] / np.sqrt(6000)  # independent exact draws
    assert np.all(np.abs(table["mean"] - table["exact_mean"]) <= 5 * se)
    # Same seed, same table; several batches (one distinct vector each) give the same rows
    # up to Monte Carlo error and the same layout.
    again = ambppl.summarize_counts(counts, draws=6000, random_seed=3)
    pd.testing.assert_frame_equal(table, again)
    monkeypatch.setattr(importlib.import_module("ambppl.summary"), "BATCH_BYTES", 1)
    batched = ambppl.summarize_counts(counts, draws=6000, random_seed=4)
    assert batched.index.tolist() == list("uvwxyz")
    assert np.all(
        np.abs(batched["mean"] - batched["exact_mean"]) <= 5 * batched["sd"] / np.sqrt(6000)
    )
    pd.testing.assert_series_equal(batched.loc["v"], batched.loc["x"], check_names=False)


def test_summarize_counts_reads_annotations_and_checks_arguments():
    frame = pd.DataFrame({"task": [1, 1, 2, 2], "worker": list("abab"), "label": list("xyxx")})
    table = ambppl.summarize_counts(frame, measure="entropy", draws=100, random_seed=1)
    assert table.index.tolist() == [1, 2] and table.attrs["measure"] == "entropy"
    with pytest.raises(ValueError, match=r"draws must be a positive integer"):
        ambppl.summarize_counts(frame, draws=0)
    with pytest.raises(ValueError, match=r"measure must be one of"):
        ambppl.summarize_counts(frame, measure="gini")
    with pytest.raises(ValueError, match=r"threshold must be in the open interval"):
        ambppl.summarize_counts(frame, threshold=2)


# ---------------------------------------------------------------------------------------
# Decision helpers on a hand-made table (values chosen to make every comparison clear)


@pytest.fixture
def hand_table():
    table = pd.DataFrame(
        {
            "n_answers": [20.0, 3.0, 10.0, 8.0],
            "mean": [0.05, 0.45, 0.7, 0.45],
            "hdi_lower": [0.01, 0.1, 0.55, 0.3],
            "p_above": [0.0, 0.6, 0.99, 0.7],
        },
        index=pd.Index(["a", "b", "c", "d"], name="item"),
    )
    table.attrs.update(measure="amb", threshold=0.4)
    return table


def test_rank(hand_table):
    ranked = ambppl.rank(hand_table)
    assert ranked.index.tolist() == ["c", "b", "d", "a"]  # ties (b, d) keep their order
    assert ranked["rank"].tolist() == [1, 2, 3, 4]
    assert ambppl.rank(hand_table, by="hdi_lower", ascending=True).index.tolist() == list("abdc")
    assert "rank" not in hand_table.columns  # the input is not modified


@pytest.mark.parametrize(
    ("rule", "items"),
    [
        ("P(amb > 0.4) > 0.9", ["c"]),
        ("P(amb>0.4)>=0.6", ["b", "c", "d"]),
        ("P(amb < 0.4) > 0.9", ["a"]),  # 1 - p_above
        ("P(amb <= 0.40) < 0.5", ["b", "c", "d"]),
        ("mean > 0.5", ["c"]),
        ("mean <= 0.45", ["a", "b", "d"]),
        ("n_answers >= 8 and P(amb > 0.4) > 0.5", ["c", "d"]),
        ("hdi_lower > -1e-3", ["a", "b", "c", "d"]),
    ],
)
def test_select(hand_table, rule, items):
    assert ambppl.select(hand_table, rule).index.tolist() == items


@pytest.mark.parametrize(
    ("rule", "error", "match"),
    [
        ("mean >> 0.5", ValueError, r"rule must follow the grammar rule := clause"),
        ("__import__('os')", ValueError, r"rule must follow the grammar"),
        ("mean > 0.5 or mean < 0.1", ValueError, r"rule must follow the grammar"),
        ("P(amb > 0.4)", ValueError, r"rule must follow the grammar"),
        ("median > 0.5", ValueError, r"the column in rule must be one of the columns"),
        ("P(amb > 0.5) > 0.9", ValueError, r"summarize with measure='amb', threshold=0.5"),
        ("P(entropy > 0.4) > 0.9", ValueError, r"summarize with measure='entropy'"),
        ("P(xyz > 0.4) > 0.9", ValueError, r"measure must be one of"),
        (0.5, TypeError, r"rule must be a string"),
    ],
)
def test_select_errors(hand_table, rule, error, match):
    with pytest.raises(error, match=match):
        ambppl.select(hand_table, rule)


def test_select_needs_p_above(hand_table):
    with pytest.raises(ValueError, match=r"needs the p_above column"):
        ambppl.select(hand_table.drop(columns="p_above"), "P(amb > 0.4) > 0.5")


def test_stratify(hand_table):
    out = ambppl.stratify(hand_table)
    assert out["stratum"].astype(str).tolist() == [
        "[0, 0.2]",
        "(0.4, 0.6]",
        "(0.6, 1]",
        "(0.4, 0.6]",
    ]
    assert out["stratum"].cat.ordered
    custom = ambppl.stratify(hand_table, bins=[0, 0.5, 1], by="hdi_lower")
    assert custom["stratum"].astype(str).tolist() == [
        "[0, 0.5]",
        "[0, 0.5]",
        "(0.5, 1]",
        "[0, 0.5]",
    ]
    outside = ambppl.stratify(hand_table, bins=(0.1, 0.5))
    assert outside["stratum"].isna().tolist() == [True, False, True, False]


@pytest.mark.parametrize(
    ("func", "kwargs", "error", "match"),
    [
        (ambppl.rank, {"by": "median"}, ValueError, r"by must be one of the columns \['n_answers'"),
        (ambppl.rank, {"ascending": "yes"}, TypeError, r"ascending must be True or False"),
        (ambppl.stratify, {"bins": (0.5, 0.2)}, ValueError, r"bins must be at least two strictly"),
        (ambppl.stratify, {"bins": (0.5,)}, ValueError, r"bins must be at least two strictly"),
        (ambppl.stratify, {"bins": ["a", "b"]}, TypeError, r"bins must be array-like of numbers"),
        (ambppl.stratify, {"by": "sd"}, ValueError, r"by must be one of the columns"),
    ],
)
def test_helper_errors(hand_table, func, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(hand_table, **kwargs)


def test_helpers_need_a_table():
    for func in (ambppl.rank, ambppl.stratify):
        with pytest.raises(TypeError, match=r"table must be the pandas\.DataFrame"):
            func({"mean": [0.1]})
    with pytest.raises(TypeError, match=r"table must be the pandas\.DataFrame"):
        ambppl.select([0.1], "mean > 0")
