"""``ambppl.modeling``: the building blocks of model files, against independent formulas."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from scipy.special import gammaln

from ambppl.modeling import (
    add_annotation_data,
    add_measures,
    count_statistics,
    count_values,
    dirichlet_multinomial_logp,
    log_likelihood,
    model_coords,
    prior_concentration,
)


def _sequence_logp(counts: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Independent reference: scipy's Dirichlet-multinomial pmf minus the log multinomial
    coefficient = the probability of one ordered sequence of the answers."""
    n = counts.sum(axis=-1)
    coef = gammaln(n + 1) - gammaln(counts + 1).sum(axis=-1)
    return st.dirichlet_multinomial.logpmf(counts, a, n) - coef


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(20261126)
    q = rng.dirichlet([0.7, 1.5, 0.3, 0.5], size=300)
    n = rng.integers(1, 30, size=300)
    return np.array([rng.multinomial(k, p) for k, p in zip(n, q, strict=True)])


def test_sufficient_statistics_give_the_summed_likelihood(counts):
    a = np.array([0.9, 2.0, 0.4, 0.6])
    stats = count_statistics(counts)
    assert stats.n_items == 300
    assert len(stats.category) <= 4 * counts.max() and stats.total_weight.sum() == 300
    expected = _sequence_logp(counts, a).sum()
    assert dirichlet_multinomial_logp(stats, a) == pytest.approx(expected, rel=1e-12)


def test_pytensor_likelihood_equals_numpy(counts):
    import pytensor
    import pytensor.tensor as pt

    stats = count_statistics(counts)
    x = pt.vector("a")
    fn = pytensor.function([x], dirichlet_multinomial_logp(stats, x), mode="FAST_COMPILE")
    a = np.array([0.3, 5.0, 1.2, 0.05])
    assert fn(a) == pytest.approx(dirichlet_multinomial_logp(stats, a), rel=1e-12)


def test_pointwise_log_likelihood_per_draw(counts):
    rng = np.random.default_rng(3)
    a = rng.gamma(2.0, size=(2, 3, 4))
    ll = log_likelihood(counts, a)
    assert ll.shape == (2, 3, 300)
    for c, d in ((0, 0), (1, 2)):
        np.testing.assert_allclose(ll[c, d], _sequence_logp(counts, a[c, d]), rtol=1e-12)
    single = log_likelihood(counts, a[0, 0])
    assert single.shape == (300,)
    np.testing.assert_allclose(single, ll[0, 0], rtol=0, atol=0)


def test_log_likelihood_sums_to_one_over_sequences():
    # Every ordered sequence of 3 answers over 2 categories: probabilities add up to 1.
    a = np.array([0.4, 1.7])
    seqs = np.array([[k, 3 - k] for k in range(4)])
    n_orders = np.array([1, 3, 3, 1])  # sequences per count vector
    total = np.sum(n_orders * np.exp(log_likelihood(seqs, a)))
    assert total == pytest.approx(1.0, rel=1e-14)


def test_log_likelihood_checks_shapes(counts):
    with pytest.raises(ValueError, match=r"concentration must have 4 entries on its last axis"):
        log_likelihood(counts, [1.0, 1.0])
    with pytest.raises(ValueError, match=r"counts must be non-negative"):
        count_statistics(-counts)


def _counts_da(values, cant_solve="cs"):
    return xr.DataArray(
        np.asarray(values),
        dims=("item", "category"),
        coords={"item": ["a", "b"], "category": ["x", "y", "cs"]},
        attrs={"cant_solve": cant_solve},
    )


def test_count_values_and_coords():
    values, cs = count_values(_counts_da([[1, 2, 0], [0, 0, 3]]))
    assert values.tolist() == [[1, 2, 0], [0, 0, 3]] and cs == 2
    assert count_values(_counts_da([[1, 2, 0], [0, 0, 3]], cant_solve=None))[1] is None
    assert model_coords(_counts_da([[1, 2, 0], [0, 0, 3]])) == {
        "item": ["a", "b"],
        "category": ["x", "y", "cs"],
    }
    with pytest.raises(TypeError, match=r"counts must be an xarray\.DataArray"):
        count_values(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"counts must have dims \('item', 'category'\)"):
        count_values(_counts_da([[1, 2, 0], [0, 0, 3]]).T)
    with pytest.raises(ValueError, match=r"cant_solve must be one of the category labels"):
        count_values(_counts_da([[1, 2, 0], [0, 0, 3]], cant_solve="?"))


@pytest.mark.parametrize(
    ("prior", "error", "match"),
    [
        (-1.0, ValueError, r"kappa must be strictly positive"),
        ([1.0, 2.0], ValueError, r"kappa must be .* a vector of 3 positive numbers"),
        ("big", TypeError, r"kappa must be array-like of numbers"),
    ],
)
def test_prior_concentration_errors(prior, error, match):
    assert prior_concentration([1.0, 2.0, 3.0], 3).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(error, match=match):
        prior_concentration(prior, 3, "kappa")


def test_model_nodes():
    import pymc as pm

    counts = _counts_da([[1, 2, 0], [0, 0, 3]])
    with pm.Model(coords=model_coords(counts)) as m:
        data = add_annotation_data(counts, prior=0.5)
        q = pm.Dirichlet("q", a=np.ones((2, 3)), dims=("item", "category"))
        nodes = add_measures(q, cant_solve=2)
    assert data["is_cant_solve"].get_value().tolist() == [0, 0, 1]
    assert data["prior"].get_value().tolist() == [0.5, 0.5, 0.5]
    assert sorted(nodes) == ["amb", "amb_modified", "amb_old", "entropy"]
    assert m.named_vars_to_dims["amb"] == ("item",)
    with pm.Model(coords={"item": ["a", "b"], "category": ["x", "cs"]}):
        q = pm.Dirichlet("q", a=np.ones((2, 2)), dims=("item", "category"))
        assert sorted(add_measures(q, cant_solve=1)) == ["amb", "entropy"]  # one proper
    import pytensor.tensor as pt

    with pm.Model(), pytest.raises(ValueError, match=r"q must have a static number of categories"):
        add_measures(pt.matrix("q"), cant_solve=None)


def test_pointwise_log_likelihood_keeps_the_item_order():
    # all rows distinct, in an order np.unique would change: each item keeps its own value
    counts = np.array([[3, 0, 1], [0, 4, 0], [1, 1, 2], [2, 2, 0]])
    a = np.array([0.7, 1.3, 0.4])
    np.testing.assert_allclose(log_likelihood(counts, a), _sequence_logp(counts, a), rtol=1e-13)
    np.testing.assert_allclose(
        log_likelihood(counts[::-1], a), _sequence_logp(counts[::-1], a), rtol=1e-13
    )
