"""Tests of ``ambppl.validation.predictive``: the posterior_predictive group and the check."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.validation.predictive import (
    STATISTICS,
    _statistics,
    check_predictive,
    posterior_predictive,
)

K = 5  # categories, can't-solve last


def _counts(values: np.ndarray, cant_solve: bool = True) -> xr.DataArray:
    labels = [f"c{k}" for k in range(values.shape[1])]
    if cant_solve:
        labels[-1] = "cs"
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": [f"i{i}" for i in range(values.shape[0])], "category": labels},
        attrs={"cant_solve": "cs" if cant_solve else None},
    )


def _flat(rng: np.random.Generator, items: int, answers: int) -> np.ndarray:
    """Data from the flat model itself: q_i ~ Dirichlet(1), counts multinomial."""
    return rng.multinomial(answers, rng.dirichlet(np.ones(K), size=items))


def _raters(rng: np.random.Generator, items: int, answers: int, bad: int, share: float):
    """Rater effects as in benchmarks/calibration_predictive.py: ``bad`` raters answer
    can't-solve with 5 times the odds, each on its own random ``share`` of the items; the
    other answers come from ordinary raters answering from q_i ~ Dirichlet(1)."""
    q = rng.dirichlet(np.ones(K), size=items)
    odds = 5.0 * q[:, -1] / (1.0 - q[:, -1])
    q_bad = q * ((1.0 / (1.0 + odds)) / (1.0 - q[:, -1]))[:, None]
    q_bad[:, -1] = odds / (1.0 + odds)
    n_bad = (rng.random((items, bad)) < share).sum(axis=1)
    return rng.multinomial(answers - n_bad, q) + rng.multinomial(n_bad, q_bad)


@pytest.fixture(scope="module")
def small_fit():
    """40 items with 3-9 answers each, 2 chains x 300 exact draws."""
    rng = np.random.default_rng(20261126)
    n = rng.integers(3, 10, size=40)
    values = np.stack(
        [rng.multinomial(m, p) for m, p in zip(n, rng.dirichlet(np.ones(K), 40), strict=True)]
    )
    return ambppl.fit(_counts(values), draws=300, chains=2, random_seed=1)


@pytest.fixture(scope="module")
def small_pp(small_fit):
    return posterior_predictive(small_fit, random_seed=2)


# ------------------------------------------------------------------- the group


def test_group_layout(small_fit, small_pp):
    counts = small_fit["observed_data"]["counts"].values
    n = counts.sum(axis=1)
    pp = small_pp["posterior_predictive"]
    obs = small_pp["observed_data"]
    assert pp["answers"].dims == ("chain", "draw", "answer")
    assert pp["answers"].shape == (2, 300, n.sum()) and pp["answers"].dtype == np.int8
    for name in (*STATISTICS, "cant_solve_count"):
        assert pp[name].dims == ("chain", "draw", "item"), name
        assert pp[name].shape == (2, 300, 40)
        assert obs[name].dims == ("item",)
    assert pp["modal_share"].dtype == np.float32 and pp["cant_solve_count"].dtype == np.int16
    assert obs["answers"].dims == ("answer",) and obs["answers"].dtype == np.int8
    np.testing.assert_array_equal(obs["counts"].values, counts)  # kept
    # the same number of answers per item as observed, in the same order
    item_pos = {label: i for i, label in enumerate(obs["item"].values)}
    answer_item = np.array([item_pos[x] for x in pp["answer_item"].values])
    np.testing.assert_array_equal(np.bincount(answer_item, minlength=40), n)
    # the observed answers rebuild the counts; every replicate's counts sum to n_i
    rebuilt = np.zeros_like(counts)
    np.add.at(rebuilt, (answer_item, obs["answers"].values), 1)
    np.testing.assert_array_equal(rebuilt, counts)
    codes = pp["answers"].values.reshape(-1, n.sum()).astype(np.int64)
    rep = np.zeros((codes.shape[0], 40, K), dtype=np.int64)
    draw = np.repeat(np.arange(codes.shape[0]), n.sum())
    np.add.at(rep, (draw, np.tile(answer_item, codes.shape[0]), codes.ravel()), 1)
    np.testing.assert_array_equal(rep.sum(axis=-1), np.broadcast_to(n, (codes.shape[0], 40)))
    # the per-item statistics are those of the replicated answers
    np.testing.assert_array_equal(rep[..., -1], pp["cant_solve_count"].values.reshape(-1, 40))
    stats = _statistics(rep, n, K - 1, STATISTICS)
    for name in STATISTICS:
        np.testing.assert_allclose(pp[name].values.reshape(-1, 40), stats[name], rtol=1e-6)
    # the input is not mutated
    assert "posterior_predictive" not in small_fit.children
    assert list(small_fit["observed_data"].data_vars) == ["counts"]


def test_plugin_amb_is_the_package_estimate(rng):
    counts = rng.multinomial(12, rng.dirichlet(np.ones(K), size=30))
    counts[0] = [0, 0, 0, 0, 12]  # every answer can't-solve: amb = 1
    got = _statistics(counts, counts.sum(axis=1), K - 1, ["plugin_amb"])["plugin_amb"]
    want = ambppl.estimate(counts, method="plugin", measure="amb", cant_solve=-1)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_replicated_shares_match_posterior_mean(small_fit, small_pp):
    # Per draw s, x_ik^rep / n_i - q_ik^(s) has mean 0 and variance q_ik (1 - q_ik) / n_i
    # given q^(s), independently over draws (exact sampler), so the mean over S draws of the
    # difference has Monte Carlo standard error sqrt(mean_s q (1 - q) / (n_i S)); 5 standard
    # errors over 40 x 5 cells leaves a chance below 1e-4 of a spurious failure.
    pp = small_pp["posterior_predictive"]
    counts = small_fit["observed_data"]["counts"].values
    n = counts.sum(axis=1)
    q = small_fit["posterior"]["q"].values.reshape(-1, 40, K)
    item_pos = {label: i for i, label in enumerate(small_pp["observed_data"]["item"].values)}
    answer_item = np.array([item_pos[x] for x in pp["answer_item"].values])
    codes = pp["answers"].values.reshape(q.shape[0], -1)
    share = np.zeros_like(q)
    draw = np.repeat(np.arange(q.shape[0]), codes.shape[1])
    np.add.at(share, (draw, np.tile(answer_item, q.shape[0]), codes.ravel()), 1.0)
    share /= n[:, None]
    diff = (share - q).mean(axis=0)
    se = np.sqrt((q * (1 - q)).mean(axis=0) / (n[:, None] * q.shape[0]))
    assert np.all(np.abs(diff) <= 5 * se + 1e-12)


def test_arviz_predictive_plots_run(small_pp):
    for call in (
        lambda: az.plot_ppc_rootogram(small_pp, var_names="answers"),
        lambda: az.plot_ppc_rootogram(small_pp, var_names="cant_solve_count"),
        # randomized PIT (method="prit_c"): the statistics are discrete; the default
        # "pot_c" fits Pareto tails to the replicates, which their ties can break
        lambda: az.plot_ppc_pit(small_pp, var_names="plugin_amb", method="prit_c"),
        lambda: az.plot_ppc_pit(small_pp, var_names="cant_solve_count", method="prit_c"),
        lambda: az.plot_ppc_pit(small_pp, var_names="answers", method="prit_c"),
        lambda: az.plot_ppc_dist(small_pp, var_names="cant_solve_share"),
        lambda: az.plot_ppc_dist(small_pp, var_names=["modal_share", "plugin_amb"]),
    ):
        try:
            assert call() is not None
        finally:
            plt.close("all")


def test_no_cant_solve_category(rng):
    values = rng.multinomial(8, rng.dirichlet(np.ones(3), size=30))
    result = ambppl.fit(_counts(values, cant_solve=False), draws=100, chains=2, random_seed=3)
    pp = posterior_predictive(result, random_seed=4)["posterior_predictive"]
    assert "cant_solve_share" not in pp and "cant_solve_count" not in pp
    check = check_predictive(result, random_seed=5)
    assert set(check.table["statistic"]) == {"modal_share", "plugin_amb"}
    assert any("cant_solve_share skipped" in note for note in check.details["notes"])


def test_same_seed_same_replicates(small_fit):
    a = posterior_predictive(small_fit, random_seed=7)["posterior_predictive"]["answers"]
    b = posterior_predictive(small_fit, random_seed=7)["posterior_predictive"]["answers"]
    np.testing.assert_array_equal(a.values, b.values)


# ------------------------------------------------------------------- the check


def test_check_table_and_plot(small_fit, slow_legend_clock):
    check = check_predictive(small_fit, random_seed=8)
    assert check.check == "predictive" and check.level == 0.01
    assert list(check.table["statistic"]) == [s for s in STATISTICS for _ in range(2)]
    assert list(check.table["summary"]) == ["mean", "sd"] * 3
    assert {"observed", "rep_mean", "rep_sd", "z", "p_value", "p_mc", "p_holm", "flagged"} <= set(
        check.table.columns
    )
    items = check.details["items"]
    assert len(items) == 40 * 3 and items["p_value"].between(0, 1).all()
    assert check.details["replicates"] == 1000 and check.details["kind"] == "mixed"
    fig = check.plot()
    try:
        assert len(fig.axes) == 6
        fig.savefig(io.BytesIO(), format="png")  # drawn on a slow machine: no legend warning
    finally:
        plt.close(fig)


def test_detects_rater_effects():
    # 500 items x 20 answers, 5 can't-solve-prone raters each on their own random 80 % of
    # the items: `benchmarks/calibration_predictive.py --design raters --share 0.8 --seeds 50
    # --seed 7` measured power 50/50 for the mixed check (the default; the cant_solve_share
    # mean flagged in all 50, its sd in 11) and 0/50 for kind="posterior".
    rng = np.random.default_rng(11)
    values = _raters(rng, 500, 20, bad=5, share=0.8)
    result = ambppl.fit(_counts(values), draws=250, chains=2, random_seed=rng)
    check = check_predictive(result, random_seed=rng)
    assert not check.passed
    flagged = check.table[check.table["flagged"]]
    assert "cant_solve_share" in set(flagged["statistic"])


@pytest.mark.parametrize("kind", ["mixed", "posterior"])
def test_passes_on_flat_model_data(kind):
    rng = np.random.default_rng(12)
    result = ambppl.fit(_counts(_flat(rng, 500, 20)), draws=250, chains=2, random_seed=rng)
    check = check_predictive(result, kind=kind, random_seed=rng)
    assert check.passed, check.table
    assert check.p_value is not None and 0 < check.p_value <= 1


def test_hierarchical_empirical_bayes(rng):
    values = _flat(rng, 200, 10)
    result = ambppl.fit(
        _counts(values),
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=200,
        chains=2,
        random_seed=rng,
    )
    check = check_predictive(result, random_seed=rng)
    assert "the fixed prior" in check.description and check.passed
    assert posterior_predictive(result)["posterior_predictive"]["answers"].shape[:2] == (2, 200)


def test_mixed_with_per_draw_hyperparameters(rng):
    # A collapsed fit's layout without NUTS: (mu, kappa) vary per draw and attrs hold no
    # fixed prior, so the mixed check draws q_i^rep ~ Dirichlet(kappa * mu) per draw.
    values = _flat(rng, 200, 10)
    result = ambppl.fit(
        _counts(values),
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=200,
        chains=2,
        random_seed=rng,
    )
    post = result["posterior"].to_dataset()
    post["kappa"] = post["kappa"] * np.exp(rng.normal(0, 0.05, post["kappa"].shape))
    tree = result.copy()
    post.attrs = {k: v for k, v in post.attrs.items() if k != "prior"}
    tree["posterior"] = post
    tree.attrs = {k: v for k, v in result.attrs.items() if k != "prior"}
    check = check_predictive(tree, random_seed=rng)
    assert "hyperparameter draw" in check.description and check.passed


@pytest.mark.slow
@pytest.mark.filterwarnings(
    # 2 x 500 draws of a tiny collapsed fit may miss the ESS standard; the check is tested,
    # not the sampler's convergence
    "ignore::ambppl.inference.convergence.ConvergenceWarning"
)
def test_hierarchical_collapsed(rng):
    values = _flat(rng, 100, 10)
    result = ambppl.fit(
        _counts(values), "hierarchical_dirichlet", draws=500, chains=2, random_seed=13
    )
    check = check_predictive(result, random_seed=14)
    assert "hyperparameter draw" in check.description and check.passed


# ------------------------------------------------------------------- bad inputs


def test_bad_inputs(small_fit):
    with pytest.raises(TypeError, match=r"xarray\.DataTree"):
        check_predictive(small_fit["posterior"].to_dataset())
    with pytest.raises(TypeError, match=r"xarray\.DataTree"):
        posterior_predictive(np.ones((3, 3)))
    with pytest.raises(ValueError, match="'modal_share', 'cant_solve_share', 'plugin_amb'"):
        check_predictive(small_fit, statistics=("modal_share", "entropy"))
    for alpha in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="alpha"):
            check_predictive(small_fit, alpha=alpha)
    with pytest.raises(ValueError, match="kind"):
        check_predictive(small_fit, kind="prior")
    with pytest.raises(ValueError, match="replicates"):
        check_predictive(small_fit, replicates=5)
    for call in (check_predictive, posterior_predictive):  # was numpy's SeedSequence error
        with pytest.raises(TypeError, match=r"random_seed must be a non-negative int, a numpy"):
            call(small_fit, random_seed="x")
    no_q = small_fit.copy()
    no_q["posterior"] = small_fit["posterior"].to_dataset().drop_vars("q")
    with pytest.raises(ValueError, match=r"posterior\['q'\]"):
        check_predictive(no_q)


def test_replicates_of_the_wrong_type_are_a_type_error(small_fit):
    """replicates=2.5 was a ValueError; the house answers a wrong type with a TypeError."""
    for wrong in (2.5, "1000", True):
        with pytest.raises(TypeError, match=r"replicates must be an integer >= 20 or None"):
            check_predictive(small_fit, replicates=wrong)
    with pytest.raises(ValueError, match=r"replicates must be an integer >= 20 or None"):
        check_predictive(small_fit, replicates=19)
    assert (
        check_predictive(small_fit, replicates=np.int64(20), random_seed=1).details["replicates"]
        == 20
    )


def test_one_answered_item_is_not_applicable_not_an_error():
    """A statistic's spread over items needs two items: with one the check does not apply
    (NotApplicable, which check_fit skips); it raised a plain ValueError, which check_fit and
    ambppl validate counted as a failure of a correct fit."""
    from ambppl.validation import NotApplicable, check_fit

    one = ambppl.fit(
        _counts(np.array([[3, 1, 1, 0], [0, 0, 0, 0]])), draws=100, chains=2, random_seed=1
    )
    with pytest.raises(NotApplicable, match=r"check_predictive compares statistics over items"):
        check_predictive(one)
    with pytest.raises(ValueError, match=r"needs at least two items with answers, but the data"):
        check_predictive(one)  # still a ValueError for callers that catch those
    verdict = check_fit(one, random_seed=2)
    assert "predictive" in verdict.skipped and not verdict.errors
    assert verdict.passed, verdict.text()


def test_a_latent_class_fit_without_its_population_is_not_applicable_in_plain_words() -> None:
    """dawid_skene's item population is its class prevalences pi (a fresh class per item),
    so its mixed check runs; a result stored without pi cannot draw fresh items. Before it
    had one, the reason named the model file's internals ("concentration(hyper)") and a list
    of hyperparameters that included the per-item outputs label_prob and label_entropy."""
    import pandas as pd

    from ambppl.data import read_long
    from ambppl.validation import NotApplicable

    rng = np.random.default_rng(4)
    rows = [(f"i{i}", f"r{r}", rng.choice(["a", "b"])) for i in range(12) for r in range(4)]
    answers = read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))
    result = ambppl.fit(answers, "dawid_skene", method="laplace", draws=200, random_seed=1)
    assert check_predictive(result, random_seed=1).check == "predictive"  # it applies
    without = result.copy()
    without["posterior"] = result["posterior"].to_dataset().drop_vars("pi")
    with pytest.raises(NotApplicable, match=r"the result lacks posterior\['pi'\]") as info:
        check_predictive(without, random_seed=1)
    assert "concentration(" not in str(info.value) and "label_prob" not in str(info.value)
    assert "use kind='posterior'" in str(info.value)
