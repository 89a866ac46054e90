"""Tests for ambppl.maths.measures: the paper's tables, properties, backends and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ambppl
from ambppl import amb, amb_modified, amb_old, normalized_entropy

FUNCS = {
    "amb": amb,
    "modified": amb_modified,
    "old": amb_old,
    "entropy": normalized_entropy,
}

# Paper, Figure fig:binary_amb (C = 2, q = (q+, q-, q_cs)); distributions from ERRATA.md's
# list of the paper's example tables. Columns: new (amb), old (amb0), modified.
TABLE_C2 = [
    ((1.0, 0.0, 0.0), 0.00, 0.00, 0.00),
    ((0.9, 0.1, 0.0), 0.18, 0.20, 0.36),
    ((0.8, 0.2, 0.0), 0.32, 0.40, 0.64),
    ((0.7, 0.3, 0.0), 0.42, 0.60, 0.84),
    ((0.6, 0.4, 0.0), 0.48, 0.80, 0.96),
    ((0.5, 0.5, 0.0), 0.50, 1.00, 1.00),
    ((0.25, 0.25, 0.5), 0.75, 1.00, 1.00),
    ((0.0, 0.0, 1.0), 1.00, 1.00, 1.00),
]
# Paper, Figure fig:categorical_amb (C = 5, printed to 3 decimals).
TABLE_C5 = [
    ((1, 0, 0, 0, 0, 0), 0.000, 0.000, 0.000),
    ((0.8, 0.2, 0, 0, 0, 0), 0.320, 0.250, 0.400),
    ((0.7, 0.3, 0, 0, 0, 0), 0.420, 0.250, 0.525),
    ((0.4, 0.4, 0.2, 0, 0, 0), 0.640, 0.500, 0.800),
    ((0.3, 0.2, 0.2, 0.15, 0.15, 0), 0.785, 0.875, 0.981),
    ((0.2, 0.2, 0.2, 0.2, 0.2, 0), 0.800, 1.000, 1.000),
    ((0.1, 0.1, 0.1, 0.1, 0.1, 0.5), 0.900, 1.000, 1.000),
    ((0, 0, 0, 0, 0, 1), 1.000, 1.000, 1.000),
]


@pytest.mark.parametrize(("table", "digits"), [(TABLE_C2, 2), (TABLE_C5, 3)])
def test_paper_example_tables(table, digits):
    for q, new, old, modified in table:
        assert round(float(amb(q)), digits) == new, q
        assert round(float(amb_old(q)), digits) == old, q
        assert round(float(amb_modified(q)), digits) == modified, q


def test_paper_tables_vectorized_match_rows():
    q = np.array([row[0] for row in TABLE_C5], dtype=float)
    expected = np.array([row[1] for row in TABLE_C5])
    np.testing.assert_allclose(amb(q), expected, atol=5e-4)  # printed to 3 decimals
    assert amb(q).shape == (8,)


def test_axis_argument_moves_categories():
    q = np.array([row[0] for row in TABLE_C2]).T  # categories on axis 0
    np.testing.assert_array_equal(amb(q, axis=0), amb(q.T))
    np.testing.assert_array_equal(amb_old(q, axis=0, cant_solve=2), amb_old(q.T))


def test_cant_solve_position_and_none():
    q = np.array([0.25, 0.5, 0.25])
    # cs first: proper (0.5, 0.25), b = 0.75 -> 1 - (0.25 + 0.0625)/0.75
    assert float(amb(q, cant_solve=0)) == pytest.approx(1 - 0.3125 / 0.75, rel=1e-15)
    # no cs: three proper categories -> 1 - sum q^2 (Gini-Simpson index)
    assert float(amb(q, cant_solve=None)) == pytest.approx(1 - (0.0625 + 0.25 + 0.0625), rel=1e-15)


def test_cs_only_is_exactly_one_without_warnings():
    for f in FUNCS.values():
        if f is normalized_entropy:
            continue
        with np.errstate(all="raise"):
            assert float(f([0.0, 0.0, 1.0])) == 1.0
            assert float(f([0.0, 0.0, 0.0, 1.0])) == 1.0


def test_entropy_values():
    assert float(normalized_entropy([0.5, 0.5])) == pytest.approx(1.0, rel=1e-15)
    assert float(normalized_entropy([1.0, 0.0, 0.0])) == 0.0
    q = np.array([0.7, 0.2, 0.1])
    expected = -(q * np.log(q)).sum() / np.log(3)  # definition, section 3.1
    assert float(normalized_entropy(q)) == pytest.approx(expected, rel=1e-14)
    # cant_solve does not change the entropy (can't-solve is an ordinary answer here)
    assert float(normalized_entropy(q, cant_solve=None)) == float(normalized_entropy(q))


# ---------------------------------------------------------------- property tests
def _simplex(min_k: int = 3, max_k: int = 7):
    weights = st.integers(min_k, max_k).flatmap(
        lambda k: hnp.arrays(np.float64, k, elements=st.floats(0, 1e3, allow_subnormal=False))
    )
    return weights.filter(lambda w: w.sum() > 1e-6).map(lambda w: w / w.sum())


@settings(max_examples=300, deadline=None)
@given(_simplex())
def test_properties_random_simplex(q):
    c = q.size - 1
    a, m, o, h = (float(f(q)) for f in FUNCS.values())
    for v in (a, m, o, h):
        assert 0.0 <= v <= 1.0
    assert m >= a - 1e-12  # modified >= amb (paper section 2.3)
    # modified = (C amb - q_cs)/(C - 1)  (paper eq. rel_mod_unmod)
    assert m == pytest.approx((c * a - q[-1]) / (c - 1), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(_simplex(), st.randoms(use_true_random=False))
def test_invariant_under_permuting_proper_categories(q, rnd):
    perm = list(range(q.size - 1))
    rnd.shuffle(perm)
    qp = np.concatenate([q[perm], q[-1:]])
    for f in FUNCS.values():
        assert float(f(qp)) == pytest.approx(float(f(q)), abs=1e-12)


@pytest.mark.parametrize("c", [2, 3, 5, 10])
def test_one_hot_cs_only_and_uniform(c):
    one_hot = np.zeros(c + 1)
    one_hot[1] = 1.0
    cs_only = np.zeros(c + 1)
    cs_only[-1] = 1.0
    for f in (amb, amb_modified, amb_old):
        assert float(f(one_hot)) == pytest.approx(0.0, abs=1e-15)
        assert float(f(cs_only)) == 1.0
    for q_cs in (0.0, 0.3, 0.9):
        uniform = np.full(c + 1, (1 - q_cs) / c)
        uniform[-1] = q_cs
        # paper section 2.2: amb of a uniform p is 1 - (1 - q_cs)/C
        assert float(amb(uniform)) == pytest.approx(1 - (1 - q_cs) / c, rel=1e-13)
        assert float(amb_modified(uniform)) == pytest.approx(1.0, rel=1e-13)


# ---------------------------------------------------------------- backends
def test_xarray_keeps_coords_and_uses_dim():
    q = np.array([row[0] for row in TABLE_C2])
    da = xr.DataArray(
        q,
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(8)], "category": ["pos", "neg", "cs"]},
    )
    for name, f in FUNCS.items():
        out = f(da)
        assert out.dims == ("item",)
        assert list(out["item"].values) == list(da["item"].values)
        np.testing.assert_array_equal(out.values, f(q))
        assert out.name is not None, name
    # dim given explicitly, categories first
    np.testing.assert_array_equal(amb(da.T, dim="category").values, amb(q))


def test_xarray_dask_chunks_match():
    pytest.importorskip("dask")
    rng = np.random.default_rng(1)
    q = rng.dirichlet(np.ones(4), size=50)
    da = xr.DataArray(q, dims=("item", "category")).chunk({"item": 10})
    np.testing.assert_allclose(amb(da).compute().values, amb(q), rtol=1e-15)


def test_pytensor_graph_matches_numpy():
    import pytensor.tensor as pt

    rng = np.random.default_rng(2)
    q = rng.dirichlet(np.ones(4), size=20)
    q[0] = [0, 0, 0, 1]
    x = pt.matrix("q", shape=(None, 4))
    for f in FUNCS.values():
        np.testing.assert_allclose(f(x).eval({x: q}), f(q), rtol=1e-13, atol=1e-15)
    xt = pt.matrix("qt", shape=(4, None))
    np.testing.assert_allclose(amb(xt, axis=0).eval({xt: q.T}), amb(q), rtol=1e-13)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("q", "kwargs", "exc", "match"),
    [
        ([0.5, -0.1, 0.6], {}, ValueError, r"q must be non-negative, but got minimum -0\.1"),
        ([0.5, np.nan, 0.5], {}, ValueError, r"q must contain only finite probabilities"),
        ([0.5, 0.2, 0.2], {}, ValueError, r"q must sum to 1 along axis -1 \(tolerance 1e-06\)"),
        ([1.0], {}, ValueError, r"q must have at least 2 categories along axis -1, but got 1"),
        ([0.5, 0.5], {"axis": 1}, ValueError, r"axis must be in \[-1, 0\].*but got 1"),
        ([0.5, 0.5], {"axis": 0.5}, TypeError, r"axis must be an integer, but got 0\.5"),
        (
            [0.5, 0.5, 0],
            {"cant_solve": 3},
            ValueError,
            r"cant_solve must be a position in \[-3, 2\]",
        ),
        ([0.5, 0.5, 0], {"cant_solve": "cs"}, TypeError, r"cant_solve must be an integer position"),
        (["a", "b"], {}, TypeError, r"q must be array-like of numbers, but got dtype <U1"),
        ([0.5, 0.5], {"dim": "category"}, TypeError, r"dim= is for xarray inputs"),
    ],
)
def test_bad_input_messages(q, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        amb(q, **kwargs)


@pytest.mark.parametrize("f", [amb_modified, amb_old])
def test_modified_and_old_need_two_proper_categories(f):
    with pytest.raises(ValueError, match=r"needs at least 2 proper categories.*but got 1"):
        f([0.4, 0.6])
    # with no can't-solve category the same vector has two proper classes and is fine
    assert 0.0 <= float(f([0.4, 0.6], cant_solve=None)) <= 1.0


def test_xarray_bad_dim():
    da = xr.DataArray(np.array([[0.5, 0.5]]), dims=("item", "category"))
    with pytest.raises(ValueError, match=r"dim must be one of \['item', 'category'\], but got 'x'"):
        amb(da, dim="x")


def test_measures_tuple_matches_functions():
    assert ambppl.MEASURES == tuple(FUNCS)


def test_evaluate_names_the_measure_argument():
    """evaluate(name, q) refuses an unknown name with a message naming the argument."""
    from ambppl.maths.measures import evaluate

    with pytest.raises(ValueError, match=r"^measure must be one of 'amb', .* but got 'gini'"):
        evaluate("gini", [0.5, 0.5, 0.0])


def test_one_vector_gives_a_scalar():
    """One probability vector gives a numpy scalar (not a 0-d array), a batch an array;
    reference: the paper's table 1, row 3 (amb 0.32, old 0.40, modified 0.64)."""
    q = [0.8, 0.2, 0.0]
    for func, value in ((ambppl.amb, 0.32), (ambppl.amb_old, 0.4), (ambppl.amb_modified, 0.64)):
        one = func(q)
        assert np.ndim(one) == 0 and not isinstance(one, np.ndarray), func.__name__
        assert float(one) == pytest.approx(value, abs=1e-12)
        assert isinstance(func([q, q]), np.ndarray)


def test_xarray_finds_the_category_dim_wherever_it_is():
    """Without dim=, a DataArray's "category" dimension holds the categories even when it is
    not the last; reference: the numpy function on the item-major array."""
    q = np.array([row[0] for row in TABLE_C2])
    da = xr.DataArray(q.T, dims=("category", "item"))  # categories first
    for f in FUNCS.values():
        np.testing.assert_array_equal(f(da).values, f(q))


@pytest.mark.parametrize("f", [amb_modified, amb_old])
def test_xarray_counts_the_proper_categories(f):
    """Two categories, the last "can't solve": one proper class, refused as for numpy input;
    with no can't-solve category the same DataArray has two proper classes and is fine."""
    da = xr.DataArray(np.array([[0.4, 0.6]]), dims=("item", "category"))
    with pytest.raises(ValueError, match=r"needs at least 2 proper categories.*but got 1"):
        f(da)
    np.testing.assert_array_equal(f(da, cant_solve=None).values, f(da.values, cant_solve=None))


def test_xarray_dask_chunks_are_checked_when_computed():
    """A dask-backed DataArray is checked chunk by chunk as it is computed: a row that is no
    probability vector fails there with the numpy input's message."""
    pytest.importorskip("dask")
    q = np.full((20, 3), 1 / 3)
    q[13] = [0.5, -0.1, 0.6]
    lazy = amb(xr.DataArray(q, dims=("item", "category")).chunk({"item": 5}))
    with pytest.raises(ValueError, match=r"q must be non-negative, but got minimum -0\.1"):
        lazy.compute()


def test_xarray_result_drops_the_attrs_of_q():
    """The measure is not a probability vector: attributes describing q (units, its
    can't-solve label) are not carried over to it (xarray's keep_attrs=False)."""
    da = xr.DataArray(
        np.array([[0.5, 0.3, 0.2]]),
        dims=("item", "category"),
        coords={"category": ["a", "b", "cs"]},  # attrs["cant_solve"] must name a label
        attrs={"units": "probability", "cant_solve": "cs"},
    )
    for f in FUNCS.values():
        assert f(da).attrs == {}


def test_measures_for_refuses_a_bad_number_of_proper_categories():
    from ambppl.maths.measures import measures_for

    # measures_for(-1) returned () silently
    with pytest.raises(ValueError, match=r"n_proper must be a non-negative integer .* got -1$"):
        measures_for(-1)
    for bad in (2.5, "3", True, None):
        with pytest.raises(TypeError, match=rf"n_proper must be a non-negative .* got {bad!r}$"):
            measures_for(bad)
    assert measures_for(0) == ()
    assert measures_for(np.int64(2)) == ambppl.MEASURES
