"""Labelled per-item arguments of the maths layer are read by their labels, or refused.

* ``n`` (answers per item) of :func:`ambppl.expected_plugin`, :func:`ambppl.plugin_bias` and
  :func:`ambppl.less_biased_bias` was read by position: a Series or DataArray labelled by item
  in another order gave each item another item's ``n``;
* the point ``x`` (and the level ``q``) of the distribution objects
  (:func:`ambppl.ambiguity_posterior`, :func:`ambppl.approximate_distribution`) was read by
  position, and the objects dropped ``alpha``'s item labels.

Each reference is the same call with the values put in the items' order by hand (or, for
``expected_plugin``, the paper's closed form written out here); each test also shows that the
by-position reading gives another answer, so that reading by position fails it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.maths.approx import approximate_distribution
from ambppl.maths.exact import ambiguity_posterior

ITEMS = ["a", "b", "c"]

# ---------------------------------------------------------------------------- n of the biases

Q = xr.DataArray(
    [[0.5, 0.4, 0.1], [0.9, 0.05, 0.05], [0.2, 0.2, 0.6]],
    dims=("item", "category"),
    coords={"item": ITEMS, "category": ["x", "y", "cs"]},
)
#: n in the items' order (a, b, c), by hand
N_BY_HAND = np.array([2, 10, 50])
#: the same numbers labelled, in another order
N_SERIES = pd.Series({"c": 50, "b": 10, "a": 2})
N_DATAARRAY = xr.DataArray([50, 10, 2], dims="item", coords={"item": ["c", "b", "a"]})
BIAS_FUNCTIONS = [ambppl.expected_plugin, ambppl.plugin_bias, ambppl.less_biased_bias]


def _expected_plugin_formula(q: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Paper eq. plugin_estimator_mean (can't-solve last): E = u + (1 - u) G - (1 - u^n) G / n,
    G = 1 - sum_k p_k^2 over the proper shares p = q_proper / (1 - u)."""
    u = q[:, -1]
    p = q[:, :-1] / (1.0 - u)[:, None]
    g = 1.0 - np.sum(p * p, axis=1)
    return u + (1.0 - u) * g - (1.0 - u**n) * g / n


@pytest.mark.parametrize("n", [N_SERIES, N_DATAARRAY], ids=["series", "dataarray"])
@pytest.mark.parametrize("fn", BIAS_FUNCTIONS, ids=lambda f: f.__name__)
def test_labelled_n_is_read_by_item(fn, n) -> None:
    by_hand = fn(Q, N_BY_HAND)  # reference: the values put in the items' order by hand
    got = fn(Q, n)
    np.testing.assert_allclose(got, by_hand, rtol=1e-14, atol=0)
    by_position = fn(Q, np.asarray(n))  # what the old code computed
    assert not np.allclose(by_position, by_hand)


def test_labelled_n_matches_the_closed_form() -> None:
    reference = _expected_plugin_formula(Q.values, N_BY_HAND.astype(float))  # independent
    np.testing.assert_allclose(ambppl.expected_plugin(Q, N_SERIES), reference, rtol=1e-12)
    # for these numbers: [0.3, 0.1348, 0.79] (a: n = 2; c: n = 50)
    np.testing.assert_allclose(reference[[0, 2]], [0.3, 0.79], atol=1e-4)
    assert not np.allclose(ambppl.expected_plugin(Q, N_SERIES.values), reference)


@pytest.mark.parametrize("fn", BIAS_FUNCTIONS, ids=lambda f: f.__name__)
def test_unlabelled_n_still_broadcasts(fn) -> None:
    np.testing.assert_array_equal(fn(Q, 10), fn(Q.values, [10, 10, 10]))
    np.testing.assert_array_equal(fn(Q, N_BY_HAND), fn(Q.values, N_BY_HAND))
    grid = fn(Q, np.array([2, 10])[:, None])  # a grid of n against every item
    assert grid.shape == (2, 3)
    np.testing.assert_array_equal(grid[1], fn(Q.values, 10))


@pytest.mark.parametrize("fn", BIAS_FUNCTIONS, ids=lambda f: f.__name__)
def test_labelled_n_refused_where_it_cannot_be_aligned(fn) -> None:
    with pytest.raises(ValueError, match=r"^n must be read by position against q without item"):
        fn(Q.values, N_SERIES)  # a bare q has no item labels
    with pytest.raises(ValueError, match=r"^n must have the labels of q along 'item'"):
        fn(Q, pd.Series({"z": 50, "b": 10, "a": 2}))
    unlabelled = Q.drop_vars("item")
    with pytest.raises(ValueError, match=r"^n must be read by position where q have no labels"):
        fn(unlabelled, N_DATAARRAY)
    # n.values in the items' order is the fix the messages name
    np.testing.assert_array_equal(fn(Q.values, N_SERIES[ITEMS].values), fn(Q, N_BY_HAND))
    # a dimension that is not the items' (the categories, another name) is refused in the
    # words of items; it had been worded for categories ("rename its category dimension")
    for dims in (("item", "k"), ("item", "category")):
        two = xr.DataArray(np.ones((3, 3)), dims=dims, coords={"item": ITEMS})
        with pytest.raises(
            ValueError,
            match=r"^n must have one entry per item of q, along the dimension 'item' \(the "
            r"categories 'category' excluded\), but got a labelled DataArray with dims "
            rf"{re.escape(repr(dims))}; rename its item dimension",
        ):
            fn(Q, two)


Q_GRID = xr.DataArray(
    np.array(
        [
            [[0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]],
            [[0.1, 0.1, 0.8], [0.6, 0.3, 0.1], [0.4, 0.4, 0.2]],
        ]
    ),
    dims=("r", "s", "category"),
    coords={"r": ["x", "y"], "s": [1, 2, 3]},
)


@pytest.mark.parametrize("fn", BIAS_FUNCTIONS, ids=lambda f: f.__name__)
def test_labelled_n_along_several_item_dimensions(fn) -> None:
    """q with two item dimensions: a DataArray n labelled along one or both is read by its
    labels (the old code refused it, saying q had no item labels); a Series, which labels
    one dimension, is refused naming the DataArray. Reference: the bare values in q's
    order, by hand."""
    n_r = xr.DataArray([2, 50], dims="r", coords={"r": ["y", "x"]})
    np.testing.assert_array_equal(fn(Q_GRID, n_r), fn(Q_GRID.values, np.array([[50], [2]])))
    n_rs = xr.DataArray(
        [[1, 2, 3], [4, 5, 6]], dims=("s", "r")[::-1], coords={"r": ["y", "x"], "s": [3, 2, 1]}
    )
    by_hand = np.array([[6, 5, 4], [3, 2, 1]])  # r = x, y; s = 1, 2, 3
    np.testing.assert_array_equal(fn(Q_GRID, n_rs), fn(Q_GRID.values, by_hand))
    with pytest.raises(
        ValueError,
        match=r"^n must be an xarray.DataArray with dims among \('r', 's'\) where q have "
        r"several item dimensions, but got a pandas Series",
    ):
        fn(Q_GRID, pd.Series({"y": 2, "x": 50}))


# ------------------------------------------------------------------- x of the distributions

ALPHA = xr.DataArray(
    [[5.0, 4.0, 1.0], [9.0, 0.5, 0.5], [2.0, 2.0, 6.0]],
    dims=("item", "category"),
    coords={"item": ITEMS, "category": ["x", "y", "cs"]},
    attrs={"cant_solve": "cs"},
)
#: points in the items' order (a, b, c), by hand; pdf's at b = 0.5 would be inf (a_cs <= 1/2)
X_BY_HAND = np.array([0.3, 0.55, 0.7])
X_SERIES = pd.Series({"c": 0.7, "a": 0.3, "b": 0.55})
X_DATAARRAY = xr.DataArray([0.7, 0.3, 0.55], dims="item", coords={"item": ["c", "a", "b"]})
#: four categories: the sampling route (seeded, so that two calls share their draws)
ALPHA4 = xr.DataArray(
    [[5.0, 4.0, 2.0, 1.0], [9.0, 0.5, 3.0, 0.5], [2.0, 2.0, 2.0, 6.0]],
    dims=("item", "category"),
    coords={"item": ITEMS},
)


def _distributions():
    return {
        "exact": ambiguity_posterior(ALPHA),
        "sampling": ambiguity_posterior(ALPHA4, n_draws=4000, random_seed=0),
        "approx": approximate_distribution(ALPHA),
    }


DISTRIBUTIONS = _distributions()
METHODS = {
    "exact": ["cdf", "sf", "pdf", "logpdf", "ppf", "isf"],
    "sampling": ["cdf", "sf", "pdf", "logpdf", "ppf", "isf"],
    "approx": ["cdf", "sf", "ppf", "isf"],
}
CASES = [(d, m) for d, methods in METHODS.items() for m in methods]


@pytest.mark.parametrize("x", [X_SERIES, X_DATAARRAY], ids=["series", "dataarray"])
@pytest.mark.parametrize(("dist", "method"), CASES)
def test_labelled_point_is_read_by_item(dist, method, x) -> None:
    f = getattr(DISTRIBUTIONS[dist], method)
    by_hand = f(X_BY_HAND)  # reference: the values put in the items' order by hand
    got = f(x)
    assert isinstance(got, np.ndarray) and got.shape == (3,)
    np.testing.assert_array_equal(got, by_hand)
    by_position = f(np.asarray(x))  # what the old code computed
    assert not np.allclose(by_position, by_hand)


def test_labels_kept_in_the_objects() -> None:
    for dist in DISTRIBUTIONS.values():
        assert dist._batch_dims == ("item",)
        assert dist._batch_labels == {"item": ITEMS}
    bare = ambiguity_posterior(ALPHA.values)
    assert bare._batch_dims is None and bare._batch_labels == {}


def test_labelled_point_with_several_batch_dimensions() -> None:
    # two raters x three items: a point per item (labelled) applies to every rater
    alpha = xr.concat([ALPHA, ALPHA + 1.0], dim="rater").transpose("rater", "item", "category")
    post = ambiguity_posterior(alpha)
    assert post._batch_dims == ("rater", "item")
    got = post.cdf(X_DATAARRAY)
    np.testing.assert_array_equal(got, post.cdf(X_BY_HAND[None, :]))  # reference: by hand
    assert got.shape == (2, 3)
    assert not np.allclose(post.cdf(X_DATAARRAY.values[None, :]), got)
    with pytest.raises(ValueError, match=r"^x must be an xarray.DataArray with the dimension"):
        post.cdf(X_SERIES)  # which of the two dimensions a Series labels is not said


def test_labelled_grid_of_points() -> None:
    post = DISTRIBUTIONS["exact"]
    grid = np.array([0.2, 0.5, 0.8])
    # points along an item dimension in another order, and along a grid dimension "point"
    x = xr.DataArray(
        grid[:, None] + np.array([0.0, 0.01, 0.02])[None, :],  # columns for c, a, b
        dims=("point", "item"),
        coords={"item": ["c", "a", "b"]},
    )
    by_hand = post.cdf(x.values[:, [1, 2, 0]])  # reference: columns put in order a, b, c
    np.testing.assert_array_equal(post.cdf(x), by_hand)
    assert not np.allclose(post.cdf(x.values), by_hand)
    # items first: the labelled grid still comes out point x item
    np.testing.assert_array_equal(post.cdf(x.transpose("item", "point")), by_hand)
    # a grid labelled along its own dimension broadcasts against every item
    g = xr.DataArray(grid, dims="point", coords={"point": grid})
    np.testing.assert_array_equal(post.cdf(g), post.cdf(grid[:, None]))


@pytest.mark.parametrize("dist", ["exact", "sampling", "approx"])
def test_unlabelled_points_still_broadcast(dist) -> None:
    d = DISTRIBUTIONS[dist]
    np.testing.assert_array_equal(d.cdf(0.5), d.cdf(np.full(3, 0.5)))  # a scalar for all
    grid = np.array([0.2, 0.5, 0.8])
    out = d.cdf(grid[:, None])  # a grid of points against all items
    assert out.shape == (3, 3)
    np.testing.assert_array_equal(out[1], d.cdf(np.full(3, 0.5)))
    # a DataArray without coordinates is read by position, as before
    np.testing.assert_array_equal(d.cdf(xr.DataArray(X_BY_HAND, dims="item")), d.cdf(X_BY_HAND))
    np.testing.assert_array_equal(d.cdf(xr.DataArray(0.5)), d.cdf(0.5))


@pytest.mark.parametrize("build", [ambiguity_posterior, approximate_distribution])
def test_labelled_point_refused_without_labels(build) -> None:
    bare = build(ALPHA.values)
    msg = r"^x must be read by position where alpha has no labels along its items"
    with pytest.raises(ValueError, match=msg):
        bare.cdf(X_SERIES)
    with pytest.raises(ValueError, match=msg):
        bare.sf(X_DATAARRAY)
    with pytest.raises(ValueError, match=r"^q must be read by position where alpha has no"):
        bare.ppf(X_SERIES)
    unlabelled = build(ALPHA.drop_vars("item"))  # a DataArray without item labels
    with pytest.raises(ValueError, match=msg):
        unlabelled.cdf(X_SERIES)
    with pytest.raises(ValueError, match=msg):
        unlabelled.cdf(X_DATAARRAY)
    # x.values in the items' order is the fix the message names
    np.testing.assert_array_equal(bare.cdf(X_SERIES[ITEMS].values), build(ALPHA).cdf(X_SERIES))


@pytest.mark.parametrize("build", [ambiguity_posterior, approximate_distribution])
def test_labelled_point_refused_with_other_labels(build) -> None:
    d = build(ALPHA)
    with pytest.raises(ValueError, match=r"^x must have the labels of alpha along 'item'"):
        d.cdf(pd.Series({"z": 0.7, "a": 0.3, "b": 0.55}))
    with pytest.raises(ValueError, match=r"^q must have the labels of alpha along 'item'"):
        d.ppf(X_DATAARRAY.isel(item=[0, 1]))
    with pytest.raises(ValueError, match=r"^x must label each entry along 'item' once"):
        d.cdf(pd.Series([0.3, 0.5, 0.7], index=["a", "a", "b"]))
    with pytest.raises(ValueError, match=r"^x must be a number, an array"):
        d.cdf(pd.DataFrame({"a": [0.3], "b": [0.5], "c": [0.7]}))


def test_a_dataframe_read_as_an_array_is_named_in_the_refusal() -> None:
    """The array-level functions read a DataFrame of counts (or of q) as an array; with a
    labelled prior or n the refusal said "counts without category labels" of a frame that
    has them. It now says the frame's labels are not read and names the conversion, which
    reads them (reference: the prior in the columns' order by hand)."""
    frame = pd.DataFrame({"a": [3, 0], "b": [1, 4]}, index=["i1", "i2"])
    prior = pd.Series({"b": 1.0, "a": 2.0})
    with pytest.raises(
        ValueError,
        match=r"^prior must be read by position against counts given as a pandas DataFrame "
        r"\(read as an array: its labels are not read\), .* \(xarray.DataArray\(frame, "
        r"dims=\('item', 'category'\)\)\)$",
    ):
        ambppl.estimate(frame, "posterior_mean", prior=prior)
    with pytest.raises(ValueError, match=r"^n must be read by position against q given as a"):
        ambppl.expected_plugin(frame / 4, pd.Series({"i2": 4, "i1": 4}))
    labelled = xr.DataArray(frame, dims=("item", "category"))
    by_hand = ambppl.estimate(frame.to_numpy(), "posterior_mean", prior=[2.0, 1.0])
    got = ambppl.estimate(labelled, "posterior_mean", prior=prior)
    np.testing.assert_allclose(got, by_hand, rtol=1e-14)
    assert not np.allclose(
        by_hand, ambppl.estimate(frame.to_numpy(), "posterior_mean", prior=[1.0, 2.0])
    )
