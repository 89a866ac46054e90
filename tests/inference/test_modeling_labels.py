"""``ambppl.inference.modeling``: labelled arguments are read by their labels, or refused.

Each labelled call is compared with the same call with the values put in order by hand,
and with scipy's Dirichlet-multinomial (an independent formula); the by-position reading,
the old behaviour, is shown to differ from it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
import xarray as xr
from scipy.special import gammaln

from ambppl.inference.modeling import (
    add_annotation_data,
    count_statistics,
    dirichlet_multinomial_logp,
    log_likelihood,
)

VALUES = np.array([[5, 3, 1], [9, 0, 1], [2, 2, 6], [1, 1, 0]])
CATEGORIES = ["x", "y", "cs"]
#: The concentration meant: x 0.5, y 2, cs 1.
IN_ORDER = np.array([0.5, 2.0, 1.0])
#: The same, labelled in another order than the counts' categories.
BY_LABEL = pd.Series({"y": 2.0, "x": 0.5, "cs": 1.0})


def _counts() -> xr.DataArray:
    return xr.DataArray(
        VALUES,
        dims=("item", "category"),
        coords={"item": list("abcd"), "category": CATEGORIES},
        attrs={"cant_solve": "cs"},
    )


def _sequence_logp(counts: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Independent reference: scipy's Dirichlet-multinomial log pmf less the log multinomial
    coefficient (the probability of one ordered sequence of the answers)."""
    n = counts.sum(axis=-1)
    coef = gammaln(n + 1) - gammaln(counts + 1).sum(axis=-1)
    return st.dirichlet_multinomial.logpmf(counts, a, n) - coef


REFERENCE = _sequence_logp(VALUES, IN_ORDER)


def test_reading_the_labelled_concentration_by_position_is_wrong():
    # the old reading (the Series' values in its own order) differs from the reference,
    # so the tests below can tell the two apart
    by_position = log_likelihood(VALUES, BY_LABEL.to_numpy())
    assert not np.allclose(by_position, REFERENCE, rtol=1e-3)
    np.testing.assert_allclose(log_likelihood(VALUES, IN_ORDER), REFERENCE, rtol=1e-12)


@pytest.mark.parametrize(
    "concentration",
    [BY_LABEL, xr.DataArray(BY_LABEL.rename_axis("category"))],
    ids=["Series", "DataArray"],
)
def test_log_likelihood_reads_a_labelled_concentration_by_label(concentration):
    got = log_likelihood(_counts(), concentration)
    np.testing.assert_allclose(got, log_likelihood(VALUES, IN_ORDER), rtol=0, atol=0)
    np.testing.assert_allclose(got, REFERENCE, rtol=1e-12)


def test_log_likelihood_reads_draws_of_a_labelled_concentration_by_label():
    rng = np.random.default_rng(20260301)
    draws = rng.gamma(2.0, size=(2, 3, 3))  # chain, draw, category in the counts' order
    order = [2, 0, 1]  # cs, x, y
    labelled = xr.DataArray(
        draws[..., order],
        dims=("chain", "draw", "category"),
        coords={"category": [CATEGORIES[j] for j in order]},
    )
    by_hand = log_likelihood(VALUES, draws)
    for concentration in (labelled, labelled.transpose("category", "chain", "draw")):
        got = log_likelihood(_counts(), concentration)
        np.testing.assert_allclose(got, by_hand, rtol=0, atol=0)
    np.testing.assert_allclose(by_hand[1, 2], _sequence_logp(VALUES, draws[1, 2]), rtol=1e-12)
    assert not np.allclose(log_likelihood(VALUES, labelled.values), by_hand, rtol=1e-3)


def test_transposed_counts_are_read_by_their_dim_names():
    counts = _counts()
    transposed = counts.transpose("category", "item")
    np.testing.assert_allclose(
        log_likelihood(transposed, BY_LABEL), log_likelihood(VALUES, IN_ORDER), rtol=0, atol=0
    )
    np.testing.assert_allclose(
        log_likelihood(transposed, IN_ORDER), REFERENCE, rtol=1e-12
    )  # by position, against the categories
    stats, expected = count_statistics(transposed), count_statistics(VALUES)
    assert (stats.n_items, stats.n_categories) == (4, 3)
    for field in ("category", "value", "weight", "total", "total_weight"):
        np.testing.assert_array_equal(getattr(stats, field), getattr(expected, field))
    # four entries were taken for four "categories" (the items) before
    with pytest.raises(ValueError, match=r"concentration must have 3 entries on its last axis"):
        log_likelihood(transposed, [1.0, 1.0, 1.0, 1.0])
    # the old reading of the transpose, items as categories: one value per category
    assert log_likelihood(VALUES.T, np.ones(4)).shape == (3,) != REFERENCE.shape


def test_log_likelihood_refuses_a_concentration_it_cannot_align():
    counts = _counts()
    with pytest.raises(
        ValueError,
        match=r"concentration must be read by position against counts without category "
        r"labels.*pass concentration\.values in the order",
    ):
        log_likelihood(VALUES, BY_LABEL)
    with pytest.raises(
        ValueError,
        match=r"concentration must have the labels of counts along 'category' "
        r"\['x', 'y', 'cs'\].*lacks \['cs'\] and has \['q'\]",
    ):
        log_likelihood(counts, pd.Series({"y": 2.0, "x": 0.5, "q": 1.0}))
    with pytest.raises(
        ValueError,
        match=r"concentration must be read by position where counts have no labels along "
        r"'category'.*label counts along 'category'",
    ):
        log_likelihood(counts.drop_vars("category"), BY_LABEL)
    per_item = xr.DataArray(
        np.ones((4, 3)), dims=("item", "category"), coords={"category": CATEGORIES}
    )
    with pytest.raises(
        ValueError, match=r"concentration must be one vector per draw .* sharing \['item'\]"
    ):
        log_likelihood(counts, per_item)
    with pytest.raises(ValueError, match=r"rename its category dimension to 'category'"):
        log_likelihood(counts, xr.DataArray(BY_LABEL))  # dim "dim_0": not the categories
    # unlabelled: by position, as an array
    unlabelled = xr.DataArray(IN_ORDER, dims="category")
    np.testing.assert_allclose(log_likelihood(counts, unlabelled), REFERENCE, rtol=1e-12)


def test_dirichlet_multinomial_logp_refuses_a_labelled_concentration():
    stats = count_statistics(_counts())
    expected = REFERENCE.sum()
    assert dirichlet_multinomial_logp(stats, IN_ORDER) == pytest.approx(expected, rel=1e-12)
    # the old by-position reading of the Series: another number
    assert dirichlet_multinomial_logp(stats, BY_LABEL.to_numpy()) != pytest.approx(
        expected, rel=1e-3
    )
    for labelled in (BY_LABEL, xr.DataArray(BY_LABEL.rename_axis("category"))):
        with pytest.raises(
            ValueError,
            match=r"concentration must be read by position against stats .*pass "
            r"concentration\.values in the order of the counts' categories",
        ):
            dirichlet_multinomial_logp(stats, labelled)
    unlabelled = xr.DataArray(IN_ORDER, dims="category")  # no labels: by position
    assert dirichlet_multinomial_logp(stats, unlabelled) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "prior",
    [BY_LABEL, xr.DataArray(BY_LABEL.rename_axis("category"))],
    ids=["Series", "DataArray"],
)
def test_add_annotation_data_reads_a_labelled_prior_by_label(prior):
    import pymc as pm

    counts = _counts()
    with pm.Model(coords={"category": CATEGORIES}):
        by_label = add_annotation_data(counts, prior=prior)["prior"].get_value()
    with pm.Model(coords={"category": CATEGORIES}):
        by_hand = add_annotation_data(counts, prior=IN_ORDER)["prior"].get_value()
    np.testing.assert_array_equal(by_label, by_hand)
    np.testing.assert_array_equal(by_label, [0.5, 2.0, 1.0])
    assert not np.array_equal(BY_LABEL.to_numpy(), by_hand)  # the old by-position reading


def test_add_annotation_data_refuses_a_prior_it_cannot_align():
    import pymc as pm

    counts = _counts()
    with (
        pm.Model(),
        pytest.raises(
            ValueError,
            match=r"prior must have the labels of counts along 'category'.*lacks \['cs'\]",
        ),
    ):
        add_annotation_data(counts, prior=pd.Series({"y": 2.0, "x": 0.5, "q": 1.0}))
    with (
        pm.Model(),
        pytest.raises(
            ValueError,
            match=r"prior must be read by position where counts have no labels along "
            r"'category'.*pass prior\.values in the order of counts",
        ),
    ):
        unlabelled = counts.drop_vars("category").assign_attrs(cant_solve=None)
        add_annotation_data(unlabelled, prior=BY_LABEL)
