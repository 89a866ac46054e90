"""``ambppl.loo`` and ``ambppl.compare``: leave-one-item-out on the one log-likelihood meaning."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.inference.modeling import log_likelihood


@pytest.fixture(scope="module")
def counts():
    return ambppl.read_annotations(
        ambppl.data.readers.example_path("weather_sentiment"), cant_solve="I can't tell"
    )


@pytest.fixture(scope="module")
def flat_fits(counts):
    return {
        f"beta={b:g}": ambppl.fit(counts, prior=b, draws=200, chains=2, random_seed=1)
        for b in (0.5, 1.0)
    }


@pytest.fixture(scope="module")
def learned(counts):
    with warnings.catch_warnings():  # 2 x 500 draws may miss the ESS >= 400 standard
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.fit(counts, "hierarchical_dirichlet", draws=500, chains=2, random_seed=2)


def test_fixed_prior_loo_is_exact(flat_fits, counts):
    # A fixed prior learns nothing from other items: LOO density = log p(answers_i | prior),
    # computed here from ambppl.inference.modeling.log_likelihood (tested against scipy there).
    elpd = ambppl.loo(flat_fits["beta=1"])
    expected = log_likelihood(counts.values, np.ones(5))
    np.testing.assert_allclose(elpd.elpd_i.values, expected, rtol=1e-12)
    assert elpd.elpd == pytest.approx(expected.sum(), rel=1e-12)
    assert float(np.abs(elpd.pareto_k).max()) == 0.0 and abs(elpd.p) < 1e-8
    # what fit's docstring and docs/topics/workflow.md say: arviz's own loo refuses these
    # constant ratios, which is why ambppl.loo exists
    import arviz as az

    with pytest.raises(ValueError, match="All tail values are the same"):
        az.loo(flat_fits["beta=1"])


def test_learned_prior_loo_is_arviz_psis(learned):
    import arviz as az

    ours = ambppl.loo(learned)
    theirs = az.loo(learned, pointwise=True)
    np.testing.assert_allclose(ours.elpd_i.values, theirs.elpd_i.values, rtol=1e-12)
    assert float(ours.pareto_k.max()) < 0.7  # q_i integrated out: no item is influential


def test_mixed_constant_and_varying_items():
    rng = np.random.default_rng(9)
    varying = rng.normal(-3.0, 0.2, size=(2, 300, 4))
    constant = np.broadcast_to(np.array([-2.0, -5.0]), (2, 300, 2))
    ll = np.concatenate([varying, constant], axis=-1)
    tree = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset({"x": (("chain", "draw"), rng.normal(size=(2, 300)))}),
            "log_likelihood": xr.Dataset({"counts": (("chain", "draw", "item"), ll)}),
        }
    )
    elpd = ambppl.loo(tree)
    np.testing.assert_allclose(elpd.elpd_i.values[4:], [-2.0, -5.0], rtol=1e-14)
    assert elpd.pareto_k.values[4:].tolist() == [0.0, 0.0]
    # the varying items: PSIS-LOO; with log-likelihoods this light-tailed (sd 0.2, k < 0.5)
    # smoothing barely moves the raw importance-sampling estimate -log mean(1 / p_s)
    raw = -np.log(np.mean(np.exp(-varying), axis=(0, 1)))
    assert np.all(elpd.pareto_k.values[:4] < 0.5)
    np.testing.assert_allclose(elpd.elpd_i.values[:4], raw, atol=1e-3)


def test_compare_ranks_the_learned_prior_first(flat_fits, learned):
    table = ambppl.compare({**flat_fits, "learned": learned})
    assert table.index[0] == "learned"
    assert set(table.index) == {"learned", "beta=0.5", "beta=1"}
    assert (table["elpd_diff"].iloc[1:] > 0).all() or (table["elpd_diff"].iloc[1:] < 0).all()


def test_errors(flat_fits, counts):
    one = flat_fits["beta=1"]
    with pytest.raises(TypeError, match=r"result must be the xarray\.DataTree returned by"):
        ambppl.loo(one.to_dict())
    no_ll = ambppl.fit(counts, draws=10, chains=1, random_seed=1, log_likelihood=False)
    with pytest.raises(ValueError, match=r"must have a log_likelihood group .* refit with"):
        ambppl.loo(no_ll)
    with pytest.raises(ValueError, match=r"results must be a dict of at least two"):
        ambppl.compare({"one": one})
    other = ambppl.fit(counts.isel(item=slice(0, 50)), draws=10, chains=1, random_seed=1)
    with pytest.raises(ValueError, match=r"results must be fits of the same items"):
        ambppl.compare({"all": one, "some": other})


def test_empirical_bayes_loo_refits_without_each_item():
    # Independent route: for every item (not every distinct vector), refit the estimate on
    # the other items and score the item with scipy's Dirichlet-multinomial pmf (minus the
    # multinomial coefficient).
    import scipy.stats as st
    from scipy.special import gammaln

    rng = np.random.default_rng(17)
    q = rng.dirichlet(3.0 * np.array([0.5, 0.3, 0.2]), size=25)
    values = np.array([rng.multinomial(5, p) for p in q])
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"category": ["a", "b", "cs"]},
        attrs={"cant_solve": "cs"},
    )
    result = ambppl.fit(
        counts,
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=50,
        chains=2,
        random_seed=3,
    )
    elpd = ambppl.loo(result)
    module = ambppl.get_model("hierarchical_dirichlet").module
    expected = []
    for i in range(25):
        est = module.empirical_bayes(counts.isel(item=np.delete(np.arange(25), i)))
        a = est["kappa"] * est["mu"]
        coef = gammaln(6.0) - gammaln(values[i] + 1.0).sum()
        expected.append(st.dirichlet_multinomial.logpmf(values[i], a, 5) - coef)
    np.testing.assert_allclose(elpd.elpd_i.values, expected, rtol=1e-9)
    in_sample = float(result["log_likelihood"]["counts"].isel(chain=0, draw=0).sum())
    assert elpd.elpd < in_sample and elpd.p == pytest.approx(in_sample - elpd.elpd)


@pytest.mark.parametrize("results", [None, [1, 2], ("a", "b")])
def test_compare_rejects_a_non_dict_with_type_error(results):
    with pytest.raises(TypeError, match=r"results must be a dict of name -> ambppl\.fit result"):
        ambppl.compare(results)


def test_compare_documents_the_columns_it_returns():
    counts = xr.DataArray(
        np.array([[5, 0], [4, 1], [5, 0]]), dims=("item", "category"), attrs={"cant_solve": None}
    )
    fits = {
        f"beta={b}": ambppl.fit(counts, prior=b, draws=100, chains=2, random_seed=1)
        for b in (0.5, 1.0)
    }
    table = ambppl.compare(fits)
    returns = ambppl.compare.__doc__.split("Returns")[1].split("Raises")[0]
    documented = re.findall(r"``(\w+)``", returns)
    assert [c for c in documented if c in table.columns] == list(table.columns)
    assert "warning" not in documented


def _small_fit(values, prior=0.5):
    return ambppl.fit(np.array(values), prior=prior, draws=50, chains=2, random_seed=1)


def test_compare_refuses_fits_of_other_counts_of_the_same_items():
    """The items' labels agreed (0, 1, 2), the answers did not: compare ranked them (elpd_diff
    -10). The observed counts must agree cell for cell."""
    a = _small_fit([[5, 0], [4, 1], [5, 0]])
    b = _small_fit([[5, 0], [2, 3], [9, 9]])
    with pytest.raises(
        ValueError,
        match=r"^results must be fits of the same data, but results\['B'\]'s observed counts "
        r"differ from results\['A'\]'s on 2 of 3 items \(the first, '1': \[2, 3\] against "
        r"\[4, 1\]\)",
    ):
        ambppl.compare({"A": a, "B": b})
    # the same counts under another prior: ranked
    table = ambppl.compare({"A": a, "flat": _small_fit([[5, 0], [4, 1], [5, 0]], prior=1.0)})
    assert set(table.index) == {"A", "flat"}


def test_compare_refuses_fits_with_other_categories():
    """A two-category and a three-category version of the same answers (an unused third
    category) are different data: the log likelihoods are not on one scale."""
    two = _small_fit([[5, 0], [4, 1], [5, 0]])
    three = _small_fit([[5, 0, 0], [4, 1, 0], [5, 0, 0]])
    with pytest.raises(
        ValueError,
        match=r"^results must be fits of the same data, but results\['three'\] was fitted to "
        r"the categories \['0', '1', '2'\] and results\['two'\] to \['0', '1'\]",
    ):
        ambppl.compare({"two": two, "three": three})
    renamed = xr.DataArray(
        np.array([[5, 0], [4, 1], [5, 0]]),
        dims=("item", "category"),
        coords={"category": ["yes", "no"]},
        attrs={"cant_solve": None},
    )
    other = ambppl.fit(renamed, prior=1.0, draws=50, chains=2, random_seed=1)
    with pytest.raises(ValueError, match=r"the categories \['yes', 'no'\] and results\['two'\]"):
        ambppl.compare({"two": two, "named": other})


def test_empirical_bayes_loo_of_one_item_says_it_needs_two():
    counts = xr.DataArray(
        np.array([[3, 1, 1]]), dims=("item", "category"), attrs={"cant_solve": None}
    )
    with warnings.catch_warnings():  # one item: the estimate sits at a bound (it warns so)
        warnings.simplefilter("ignore", UserWarning)
        result = ambppl.fit(
            counts, "hierarchical_dirichlet", method="empirical_bayes", draws=20, chains=1
        )
    with pytest.raises(ValueError, match=r"^result must cover at least 2 items .* but it has 1$"):
        ambppl.loo(result)


def test_items_beside_a_constant_one_get_arviz_psis():
    """A collapsed fit with an item nobody answered (log likelihood 0 in every draw): the other
    items get exactly what arviz.loo gives them (its r_eff is that of the posterior's
    variables, not of each item's likelihood: with that, elpd_i differed by up to 4e-4 and
    Pareto k by 0.1 here)."""
    import arviz as az

    rng = np.random.default_rng(3)
    q = rng.dirichlet(2.0 * np.ones(3), size=30)
    values = np.array([rng.multinomial(6, p) for p in q])
    values[0] = 0
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"category": ["a", "b", "cs"]},
        attrs={"cant_solve": "cs"},
    )
    with warnings.catch_warnings():  # 2 x 300 draws may miss the ESS >= 400 standard
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(counts, "hierarchical_dirichlet", draws=300, chains=2, random_seed=1)
    ours = ambppl.loo(result)
    assert ours.elpd_i.values[0] == 0.0 and ours.pareto_k.values[0] == 0.0
    answered = result.copy()
    answered["log_likelihood"] = result["log_likelihood"].to_dataset().isel(item=slice(1, None))
    theirs = az.loo(answered, pointwise=True)
    np.testing.assert_allclose(ours.elpd_i.values[1:], theirs.elpd_i.values, rtol=1e-12)
    np.testing.assert_allclose(ours.pareto_k.values[1:], theirs.pareto_k.values, rtol=1e-12)


def test_compare_gives_unrounded_numbers_by_default(flat_fits):
    """arviz.compare rounds by default ("auto": elpd -5009.78 shown as -5000.0); ambppl's
    table is the unrounded one, each elpd equal to ambppl.loo's, unless round_to is given."""
    table = ambppl.compare(flat_fits)
    for name, result in flat_fits.items():
        assert table.loc[name, "elpd"] == float(ambppl.loo(result).elpd)
    best, other = table.index
    assert table.loc[other, "elpd_diff"] == pytest.approx(
        table.loc[other, "elpd"] - table.loc[best, "elpd"], rel=1e-12
    )
    rounded = ambppl.compare(flat_fits, round_to=0)
    assert (rounded["elpd"] == rounded["elpd"].round(0)).all()
