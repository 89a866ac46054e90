"""``ambppl.summarize`` and the decision helpers ``rank``, ``select``, ``stratify``."""

from __future__ import annotations

import importlib

import arviz_base
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.analysis.summary import COLUMNS

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


def test_estimator_columns(table):
    # Reference: hand-computed fractions for the counts (5, 0, 0), (2, 2, 1), (1, 3, 2) (yes, no,
    # cs). Plug-in: amb(counts / n) = 1 - sum_k p_k^2 / (1 - p_cs) (paper eq. plugin_estimator):
    # 0, 1 - 0.32 / 0.8 = 3/5, 1 - (10/36) / (2/3) = 7/12. Less biased (ERRATA item 8):
    # 1 - sum n_k (n_k - 1) / (n (m - 1)) with m the proper answers: 0, 1 - 4/15, 1 - 6/18.
    np.testing.assert_allclose(table["plugin"], [0.0, 3 / 5, 7 / 12], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(table["less_biased"], [0.0, 11 / 15, 2 / 3], rtol=1e-14, atol=1e-15)


def _amb_mean_second_formula(alpha):
    """E amb under Dirichlet(alpha), C = 2, can't-solve last, by a route of its own: with
    V = 1 - q_cs ~ Beta(B, a_cs) independent of pi ~ Dirichlet(proper alpha), q_k^2 / V = V pi_k^2
    and E amb = 1 - sum_k a_k (a_k + 1) / (a_0 (B + 1)) (paper eq. expr_amb_final)."""
    alpha = np.asarray(alpha, dtype=float)
    proper, a0 = alpha[:, :-1], alpha.sum(axis=1)
    big_b = proper.sum(axis=1)
    return 1.0 - (proper * (proper + 1.0)).sum(axis=1) / (a0 * (big_b + 1.0))


def test_exact_columns_are_the_closed_forms_and_agree_with_the_draws(
    table, small_counts, exact_fit
):
    alpha = small_counts.values + 1.0
    np.testing.assert_allclose(table["exact_mean"], _amb_mean_second_formula(alpha), rtol=1e-12)
    # no independent closed form for the variance here: exact_sd against the 8000 independent
    # draws' sd, within 5 standard errors of a sample sd, sqrt((m4 - s^4) / n) / (2 s)
    draws = exact_fit["posterior"]["amb"].values.reshape(-1, 3)
    d = draws - draws.mean(axis=0)
    s2 = (d**2).mean(axis=0)
    se_sd = np.sqrt(((d**4).mean(axis=0) - s2**2) / draws.shape[0]) / (2 * np.sqrt(s2))
    assert np.all(np.abs(table["exact_sd"].values - np.sqrt(s2)) <= 5 * se_sd)
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
    # No closed-form variance for amb_old and entropy in ambppl.maths.moments: documented NaN.
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


def test_hdi_prob_is_used_and_a_nan_draw_reaches_every_draw_statistic(exact_fit):
    """hdi_prob=0.5 gives intervals holding half the draws (reference: counting draws, within
    2/n as ArviZ takes ceil(prob n)); a NaN draw makes that item's mean and sd NaN (nothing
    is skipped silently) and leaves the other items alone."""
    table = ambppl.summarize(exact_fit, hdi_prob=0.5)
    draws = exact_fit["posterior"]["amb"].values.reshape(-1, 3)
    inside = ((draws >= table["hdi_lower"].values) & (draws <= table["hdi_upper"].values)).mean(0)
    assert np.all(np.abs(inside - 0.5) <= 2 / draws.shape[0])
    broken = exact_fit.copy()
    amb = broken["posterior"]["amb"].copy()
    amb[0, 0, 1] = np.nan
    broken["posterior"]["amb"] = amb
    out = ambppl.summarize(broken)
    stats = ["mean", "sd", "hdi_lower", "hdi_upper", "p_above"]
    # p_above used to count the NaN draw as "not above" the threshold and the HDI got one
    # finite and one NaN end: every draw statistic of that item is NaN now
    assert out[stats].iloc[1].isna().all()
    assert out[stats].drop(index=out.index[1]).notna().all().all()


def test_an_item_with_only_nan_draws_is_refused(exact_fit):
    """All-NaN draws have no mean, HDI or P(amb > t); p_above used to come out as 0.0."""
    broken = exact_fit.copy()
    amb = broken["posterior"]["amb"].copy()
    amb[:, :, 2] = np.nan
    broken["posterior"]["amb"] = amb
    item = repr(broken["posterior"]["item"].values[2].item())
    with pytest.raises(ValueError, match=rf"only NaN draws of 'amb' for 1 item\(s\) \({item}\)"):
        ambppl.summarize(broken)


def test_cant_solve_from_constant_data_and_float_counts(exact_fit, small_counts):
    """A result without attrs["cant_solve"] but with the model's constant_data flag (what
    pm.sample gives) is read from the flag; counts stored as floats (a netCDF round trip of
    another tool) still give integer n_answers. Reference: the hand counts (5, 0, 0),
    (2, 2, 1), (1, 3, 2): can't-solve shares 0, 1/5, 2/6, answers 5, 5, 6."""
    other = exact_fit.copy()
    for node in (other, other["posterior"]):
        for key in ("cant_solve", "method", "model"):
            node.attrs.pop(key, None)
    other["constant_data"] = xr.Dataset(
        {"is_cant_solve": ("category", np.array([0, 0, 1]))},
        coords={"category": small_counts["category"].values},
    )
    counts = other["observed_data"]["counts"].astype(np.float64)
    counts.attrs = {}
    other["observed_data"] = xr.Dataset({"counts": counts})
    table = ambppl.summarize(other)
    assert table["cs_share"].tolist() == [0.0, 0.2, 2 / 6]
    assert table["n_answers"].dtype == np.int64 and table["n_answers"].tolist() == [5, 5, 6]


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
        trace = pm.sample(
            draws=200,
            tune=200,
            chains=1,
            random_seed=3,
            progressbar=False,
            model=model,
            compute_convergence_checks=False,
        )
    table = ambppl.summarize(trace)
    assert table["cs_share"].tolist() == [0.0, 0.2, 2 / 6]  # counts (5,0,0), (2,2,1), (1,3,2)
    # the closed forms use the prior recorded in the model (0.5, not the default 1.0)
    expected = _amb_mean_second_formula(small_counts.values + 0.5)
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


def test_mcmc_diagnostics_are_arviz_vectorized(exact_fit):
    """summarize's ess_bulk and r_hat (ambppl.inference.diagnostics, vectorized over items) equal
    ArviZ's per-item arviz.ess / arviz.rhat to rounding on autocorrelated draws whose chains
    disagree a little, and are NaN (as ArviZ's) for an item with a NaN draw."""
    import arviz as az

    tree = exact_fit.copy(deep=True)  # the module fixture stays as it was
    tree.attrs["method"] = "collapsed"
    rng = np.random.default_rng(4)
    amb = tree["posterior"]["amb"].transpose("chain", "draw", "item").copy()
    values = amb.values
    for t in range(1, values.shape[1]):  # AR(1) smoothing: ESS well below the 8000 draws
        values[:, t] = 0.9 * values[:, t - 1] + 0.1 * values[:, t]
    values[1] += rng.normal(0.0, 0.01, size=values.shape[2])  # chain 1 shifted a little
    values[0, 7, 2] = np.nan
    tree["posterior"]["amb"] = amb
    table = ambppl.summarize(tree)
    with np.errstate(all="ignore"):
        ess, rhat = az.ess(amb, method="bulk").values, az.rhat(amb).values
    np.testing.assert_allclose(table["ess_bulk"], ess, rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(table["r_hat"], rhat, rtol=1e-10, equal_nan=True)
    assert np.isnan(table["r_hat"].iloc[2]) and np.isnan(table["ess_bulk"].iloc[2])
    assert (table["ess_bulk"].iloc[:2] < 2000).all()


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
        ({"overuse": "bogus"}, ValueError, r"overuse is the rule of level='rater'"),
        ({"overuse": 0.5}, ValueError, r"got overuse=0.5 with level='item'; drop it"),
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
    # Same seed, same table; several batches (one distinct vector each: the batches of the
    # machinery behind score) give the same rows up to Monte Carlo error and the same layout.
    again = ambppl.summarize_counts(counts, draws=6000, random_seed=3)
    pd.testing.assert_frame_equal(table, again)
    monkeypatch.setattr(importlib.import_module("ambppl.analysis.distinct"), "BATCH_BYTES", 1)
    batched = ambppl.summarize_counts(counts, draws=6000, random_seed=4)
    assert batched.index.tolist() == list("uvwxyz")
    assert np.all(
        np.abs(batched["mean"] - batched["exact_mean"]) <= 5 * batched["sd"] / np.sqrt(6000)
    )
    pd.testing.assert_series_equal(batched.loc["v"], batched.loc["x"], check_names=False)


def test_summarize_counts_is_the_machinery_of_score_with_fixed_draws(small_counts):
    """summarize_counts wraps the distinct-vector machinery of ambppl.score: the same count
    columns and closed forms (reference: score's closed-form mean and sd, paper eqs.
    expr_amb_final and expr_amb_var_final), ``draws`` exact draws per vector (no
    approximation), and mean / sd estimated from them as summarize does for a fit."""
    counts = small_counts
    table = ambppl.summarize_counts(counts, draws=500, random_seed=2)
    scored = ambppl.score(counts, random_seed=2)
    for column in ("n_answers", "cs_share", "plugin", "less_biased"):
        np.testing.assert_array_equal(table[column], scored[column])
    np.testing.assert_allclose(table["exact_mean"], scored["mean"], rtol=1e-12)
    np.testing.assert_allclose(table["exact_sd"], scored["sd"], rtol=1e-12)
    assert not np.allclose(table["mean"], table["exact_mean"], rtol=1e-9, atol=0)  # draws
    assert table.attrs["draws"] == 500 and table["measure"].dtype == object


def test_summarize_counts_takes_annotations_already_read(small_counts, tmp_path):
    """A path or a reader option: one TypeError naming the reader (only it reads files)."""
    path = tmp_path / "answers.csv"
    path.write_text("task,worker,label\na,w1,x\n")
    with pytest.raises(
        TypeError,
        match=r"^data must be annotations already read .* but got the path '.*answers\.csv'; "
        r"read it first: ambppl\.read_annotations\('.*answers\.csv', \.\.\.\)$",
    ):
        ambppl.summarize_counts(path)
    with pytest.raises(
        TypeError,
        match=r"^summarize_counts takes annotations already read, so reader options do not go "
        r"to it, but got \['cant_solve'\]; pass them to the reader and give summarize_counts "
        r"what it returns: summarize_counts\(ambppl\.read_annotations\(data, cant_solve=\.\.\.\), "
        r"\.\.\.\)$",
    ):
        ambppl.summarize_counts(small_counts.values, cant_solve="2")
    with pytest.raises(
        TypeError, match=r"summarize_counts\(\) got unexpected keyword .*\['drawz'\]"
    ):
        ambppl.summarize_counts(small_counts, drawz=10)


def test_summarize_counts_passes_cant_solve_draws_and_hdi_prob():
    """The can't-solve label, the draws per vector and the HDI mass reach the fit and the
    summaries. References: hand fractions; a share of 7 draws is a multiple of 1/7; the exact
    two-class law (ambppl.ambiguity_posterior, C = 2: a CDF by quadrature) for the mass of
    the HDI, tolerance 5 binomial standard errors of 4000 draws."""
    counts = xr.DataArray(
        np.array([[3, 2, 0], [1, 1, 3], [2, 2, 1]]),
        dims=("item", "category"),
        coords={"item": list("abc"), "category": ["yes", "no", "cs"]},
        attrs={"cant_solve": "cs"},
    )
    table = ambppl.summarize_counts(counts, draws=4000, hdi_prob=0.5, random_seed=8)
    np.testing.assert_allclose(table["cs_share"], [0 / 5, 3 / 5, 1 / 5], rtol=1e-15)
    for item, row in zip("abc", counts.values, strict=True):
        law = ambppl.ambiguity_posterior(1.0 + row, "amb")
        mass = float(law.cdf(table.loc[item, "hdi_upper"]) - law.cdf(table.loc[item, "hdi_lower"]))
        assert abs(mass - 0.5) <= 5 * np.sqrt(0.25 / 4000)
    seven = ambppl.summarize_counts(counts, draws=7, threshold=0.5, random_seed=9)
    np.testing.assert_allclose(seven["p_above"] * 7, np.round(seven["p_above"] * 7), atol=1e-9)
    assert ((seven["p_above"] > 0) & (seven["p_above"] < 1)).any()


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
        ("mean > 0.45", ["c"]),  # strict: b and d sit exactly on 0.45
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
    # the lowest edge belongs to the first stratum, as its label "[0, 0.2]" says
    at_zero = ambppl.stratify(hand_table.assign(mean=[0.0, 0.2, 1.0, 0.45]))
    assert at_zero["stratum"].astype(str).tolist() == [
        "[0, 0.2]",
        "[0, 0.2]",
        "(0.6, 1]",
        "(0.4, 0.6]",
    ]


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


# ---------------------------------------------------------------------------------------
# The table carries what select needs in its columns (attrs are lost by merge, concat and
# files); n_answers holds integers.


def test_n_answers_are_integers_and_rows_carry_measure_and_threshold(table, small_counts):
    assert table["n_answers"].dtype == np.int64
    assert table["n_answers"].tolist() == small_counts.values.sum(axis=1).tolist()
    assert (table["measure"] == "amb").all() and (table["threshold"] == 0.4).all()


def test_select_reads_the_columns_after_merge_concat_and_a_csv_file(exact_fit, tmp_path):
    table = ambppl.summarize(exact_fit, threshold=0.3)
    expected = ambppl.select(table, "P(amb > 0.3) > 0.5").index.tolist()
    extra = pd.DataFrame({"topic": ["a", "b", "c"]}, index=table.index)
    merged = table.merge(extra, left_index=True, right_index=True)
    stacked = pd.concat([table.iloc[:1], table.iloc[1:]])
    table.to_csv(tmp_path / "scores.csv")
    from_file = pd.read_csv(tmp_path / "scores.csv", index_col="item")
    for other in (merged, stacked, from_file):
        other.attrs = {}  # as pandas leaves them (parts with other attrs, any file)
        assert ambppl.select(other, "P(amb > 0.3) > 0.5").index.tolist() == expected
        with pytest.raises(ValueError, match=r"table holds P\(amb > 0.3\); summarize with "):
            ambppl.select(other, "P(amb > 0.4) > 0.5")


def test_select_refuses_mixed_or_unlabelled_tables(exact_fit):
    low = ambppl.summarize(exact_fit, threshold=0.3)
    high = ambppl.summarize(exact_fit, threshold=0.5)
    mixed = pd.concat([low, high])
    with pytest.raises(ValueError, match=r"holds P\(amb > 0.3\), P\(amb > 0.5\) \(rows of sev"):
        ambppl.select(mixed, "P(amb > 0.3) > 0.5")
    bare = low.drop(columns=["measure", "threshold"])
    bare.attrs = {}
    with pytest.raises(ValueError, match=r"does not say which measure and threshold"):
        ambppl.select(bare, "P(amb > 0.3) > 0.5")
    # the column rule needs neither
    assert len(ambppl.select(bare, "p_above > 0.5")) == len(ambppl.select(low, "p_above > 0.5"))


def test_stratify_refuses_a_text_column(hand_table):
    table = hand_table.assign(measure="amb", flagged=[True, False, True, False])
    numeric = r"\['n_answers', 'mean', 'hdi_lower', 'p_above'\]"
    for by in ("measure", "flagged"):
        with pytest.raises(ValueError, match=rf"^by must be a numeric column \(one of {numeric}"):
            ambppl.stratify(table, by=by)


@pytest.mark.parametrize(
    "bins", [(0, np.nan, 1), (np.nan, 0.5), (0, 0.5, np.inf), (-np.inf, 0.5, 1)]
)
def test_stratify_refuses_edges_that_are_not_finite(hand_table, bins):
    with pytest.raises(ValueError, match=r"^bins must be at least two strictly increasing finite"):
        ambppl.stratify(hand_table, bins=bins)


# ---------------------------------------------------------------------------------------
# select refuses what it cannot read, and says why; stratify labels; lazy tables


@pytest.fixture(scope="module")
def map_table():
    """dawid_skene's one point (method="map"): p_above NaN on every row."""
    from ambppl.data import read_long

    rng = np.random.default_rng(3)
    rows = [(f"i{i}", f"r{r}", rng.choice(["cs", "a", "b"])) for i in range(6) for r in range(4)]
    answers = read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]), cant_solve="cs")
    return ambppl.summarize(ambppl.fit(answers, "dawid_skene", method="map", random_seed=1))


@pytest.mark.parametrize("how", ["csv", "merge"])
def test_select_refuses_a_point_read_back_from_a_file(map_table, tmp_path, how):
    """A method="map" table written to a CSV file and read back (or merged with a table of
    other attrs) lost the attrs that said "one point": P(amb > 0.4) > 0.5 and its complement
    both gave no rows instead of refusing."""
    assert map_table["p_above"].isna().all() and map_table["mean"].notna().all()
    if how == "csv":
        map_table.to_csv(tmp_path / "t.csv")
        back = pd.read_csv(tmp_path / "t.csv", index_col="item")
    else:
        back = map_table.merge(
            pd.DataFrame({"topic": list("xyzxyz")}, index=map_table.index),
            left_index=True,
            right_index=True,
        )
        back.attrs = {}  # as pandas leaves them for parts with other attrs
    assert back.attrs.get("method") is None
    for rule in ("P(amb > 0.4) > 0.5", "P(amb < 0.4) > 0.5"):
        with pytest.raises(
            ValueError,
            match=r"p_above is NaN, so the rule cannot tell .*: 6 item\(s\) \['i0', .* \(6 in "
            r"all\)\] summarize one point \(method='map'.* refit with method='laplace'",
        ):
            ambppl.select(back, rule)
    assert ambppl.select(back, "mean > 0").index.tolist() == back.index.tolist()


def test_select_refuses_items_with_nan_draws(exact_fit, tmp_path):
    """An item with a NaN draw has p_above NaN: P(...) rules left it out of a rule and of its
    complement alike; they now name it."""
    posterior = exact_fit["posterior"].to_dataset()
    amb = posterior["amb"].values.copy()
    amb[0, 3, 1] = np.nan
    tree = exact_fit.copy()
    tree["posterior"] = xr.DataTree(posterior.assign(amb=posterior["amb"].copy(data=amb)))
    table = ambppl.summarize(tree)
    table.to_csv(tmp_path / "t.csv")
    for other in (table, pd.read_csv(tmp_path / "t.csv", index_col="item")):
        with pytest.raises(
            ValueError, match=r"1 item\(s\) \['mixed'\] have NaN draws of the measure"
        ):
            ambppl.select(other, "P(amb > 0.4) > 0.5")
    kept = ambppl.select(table.drop(index="mixed"), "P(amb > 0.4) > 0.5")
    assert kept.index.tolist() == table.index[table["p_above"] > 0.5].tolist()


def test_select_on_a_table_without_rows(table, tmp_path):
    """An empty table (select(t, "mean > 0.99")) said it did not know its measure and
    threshold: its measure/threshold columns exist but are empty. attrs are read then."""
    empty = ambppl.select(table, "mean > 0.99")
    assert len(empty) == 0 and empty.attrs["threshold"] == 0.4
    out = ambppl.select(empty, "P(amb > 0.4) > 0.9")
    assert len(out) == 0 and list(out.columns) == list(table.columns)
    with pytest.raises(ValueError, match=r"table holds P\(amb > 0.4\); summarize with "):
        ambppl.select(empty, "P(amb > 0.6) > 0.9")
    empty.to_csv(tmp_path / "e.csv")  # no rows, no attrs: nothing to misread
    assert len(ambppl.select(pd.read_csv(tmp_path / "e.csv"), "P(amb > 0.4) > 0.9")) == 0


@pytest.mark.parametrize("column", ["measure", "label"])
def test_select_refuses_a_text_column(table, column):
    """'measure > 0' raised pandas' "'>' not supported between instances of 'str' and
    'float'"."""
    texts = table.assign(label="yes")
    with pytest.raises(
        ValueError,
        match=rf"^the column in rule must be a numeric column \(one of \['n_answers', .*\]\) "
        rf"to compare with a number, but '{column}' holds text \(dtype .*\) in rule",
    ):
        ambppl.select(texts, f"{column} > 0")


@pytest.mark.parametrize(
    ("rule", "match"),
    [
        ("P(amb > 0.4) > 1.5", r"probability that P\(...\) is compared with must be in \[0, 1\]"),
        ("P(amb > 0.4) >= -0.1", r"must be in \[0, 1\], but got -0.1"),
        ("P(amb > 1.4) > 0.5", r"threshold in P\(...\) must be in the open interval \(0, 1\)"),
        ("P(amb > 0) > 0.5", r"threshold in P\(...\) must be .* but got 0 in rule"),
    ],
)
def test_select_checks_the_numbers_of_a_probability_clause(table, rule, match):
    """p = 1.5 gave no rows silently; threshold 1.4 suggested summarize(threshold=1.4), which
    summarize refuses."""
    with pytest.raises(ValueError, match=match) as caught:
        ambppl.select(table, rule)
    assert "summarize with" not in str(caught.value)


def test_select_on_concatenated_summaries_says_to_select_each_part(exact_fit):
    """On rows of thresholds 0.3 and 0.5, asking P(amb > 0.3) suggested summarizing with the
    threshold the table already holds."""
    low = ambppl.summarize(exact_fit, threshold=0.3)
    mixed = pd.concat([low, ambppl.summarize(exact_fit, threshold=0.5)])
    with pytest.raises(ValueError) as caught:
        ambppl.select(mixed, "P(amb > 0.3) > 0.5")
    message = str(caught.value)
    assert "summarize with" not in message
    part = "table[(table['measure'] == 'amb') & (table['threshold'] == 0.3)]"
    assert message.endswith(f"select on the part that holds it: {part}")
    one_part = mixed[(mixed["measure"] == "amb") & (mixed["threshold"] == 0.3)]
    expected = ambppl.select(low, "P(amb > 0.3) > 0.5")
    assert ambppl.select(one_part, "P(amb > 0.3) > 0.5").equals(expected)
    with pytest.raises(ValueError, match=r"none of them is P\(amb > 0.7\): summarize with"):
        ambppl.select(mixed, "P(amb > 0.7) > 0.5")


def test_stratify_labels_close_edges_apart():
    """Edges equal to 6 digits gave equal labels: pandas refused them ("labels must be
    unique if ordered=True")."""
    table = pd.DataFrame(
        {"mean": [0.05, 0.10000002, 0.10000004, 0.5]}, index=pd.Index(list("abcd"), name="item")
    )
    bins = (0, 0.10000001, 0.10000003, 0.10000005, 1)
    out = ambppl.stratify(table, bins=bins)
    labels = ["[0, 0.10000001]", "(0.10000001, 0.10000003]", "(0.10000003, 0.10000005]"]
    assert out["stratum"].cat.categories.tolist() == [*labels, "(0.10000005, 1]"]
    assert out["stratum"].astype(str).tolist() == [*labels, "(0.10000005, 1]"]
    assert ambppl.stratify(table, bins=(0, 0.2, 1))["stratum"].cat.categories.tolist() == [
        "[0, 0.2]",
        "(0.2, 1]",
    ]


def test_helpers_name_a_lazy_table_and_its_compute(small_counts):
    """A LazyScore or its dask table was refused as "but got LazyScore" / "but got DataFrame"
    (dask's class has pandas' name)."""
    lazy = ambppl.score(small_counts.chunk({"item": 2}), random_seed=1, mcse=0.05)
    for table, name in (
        (lazy, r"ambppl\.analysis\.scoring\.LazyScore"),
        (lazy.table, r"dask\.dataframe\.[\w.]*DataFrame"),
    ):
        for call in (
            lambda t=table: ambppl.rank(t),
            lambda t=table: ambppl.select(t, "mean > 0"),
            lambda t=table: ambppl.stratify(t),
        ):
            with pytest.raises(
                TypeError,
                match=rf"but got {name} \(lazy: nothing computed yet\); pass table\."
                r"compute\(\)",
            ):
                call()
    assert len(ambppl.rank(lazy.compute())) == 3


@pytest.mark.parametrize("model", ["hierarchical_dirichlet", "rater_effects", "dawid_skene"])
def test_summarize_counts_names_the_model_argument(small_counts, model):
    """A model without an exact sampler was answered "method must be one of the methods of
    model ... but got 'exact'", a method the caller never passed."""
    with pytest.raises(
        ValueError,
        match=rf"^model must be a model of counts with a conjugate exact sampler \(method "
        rf"'exact': 'dirichlet_categorical'\) for summarize_counts, but got model='{model}'",
    ) as caught:
        ambppl.summarize_counts(small_counts, model, random_seed=1)
    assert "method must" not in str(caught.value)
