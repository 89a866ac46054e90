"""The catalog's PyMC programs (``models/``): structure, log density and measure nodes.

Graphs are compiled with ``mode="FAST_COMPILE"`` (Python implementations, no C compile),
so these tests stay fast; the sampled model is exercised in ``tests/test_fit.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr

import ambppl
from ambppl.catalog import _load_module, get_model

COUNTS = np.array([[3, 1, 1], [0, 5, 0], [2, 2, 1], [0, 0, 0]])


def _counts(values=COUNTS, cant_solve="cs", categories=("x", "y", "cs")):
    return xr.DataArray(
        np.asarray(values),
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(len(values))], "category": list(categories)},
        attrs={"cant_solve": cant_solve},
    )


@pytest.fixture(scope="module")
def entry():
    return get_model("dirichlet_categorical")


def test_info_record(entry):
    info = entry.info
    assert info["name"] == "dirichlet_categorical"
    assert info["exact"] == "dirichlet"
    assert info["data"] == "counts"
    assert info["parameters"]["prior"]["default"] == 1.0
    assert "dirichlet_mean" in info["reference"]


def test_structure_and_coords(entry):
    model = entry.build(_counts(), prior=1.0)
    assert [v.name for v in model.free_RVs] == ["q"]
    assert [v.name for v in model.observed_RVs] == ["counts"]
    assert sorted(v.name for v in model.deterministics) == [
        "amb",
        "amb_modified",
        "amb_old",
        "entropy",
    ]
    assert model.named_vars_to_dims["q"] == ("item", "category")
    assert model.named_vars_to_dims["amb"] == ("item",)
    assert list(model.coords["category"]) == ["x", "y", "cs"]
    assert list(model.coords["item"]) == ["i0", "i1", "i2", "i3"]


def test_one_proper_category_drops_modified_and_old(entry):
    # amb_modified / amb_old need C >= 2 proper categories (their normalization C/(C-1)).
    model = entry.build(_counts(COUNTS[:, [0, 2]], categories=("x", "cs")), prior=1.0)
    assert sorted(v.name for v in model.deterministics) == ["amb", "entropy"]


def _q_point(rng, n_items, k):
    return rng.dirichlet(np.ones(k), size=n_items)


@pytest.mark.parametrize("prior", [1.0, [0.5, 2.0, 1.5]])
def test_logp_equals_dirichlet_plus_multinomial(entry, rng, prior):
    model = entry.build(_counts(), prior=prior)
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    q = _q_point(rng, *COUNTS.shape)
    point = model.initial_point()
    point["q_simplex__"] = model.rvs_to_transforms[model["q"]].forward(q).eval()
    alpha = np.broadcast_to(np.asarray(prior, dtype=float), (3,))
    # Independent formula: scipy's Dirichlet density and multinomial pmf per item.
    expected = sum(
        st.dirichlet.logpdf(q[i], alpha) + st.multinomial.logpmf(COUNTS[i], COUNTS[i].sum(), q[i])
        for i in range(len(COUNTS))
    )
    # jacobian=False: the density of q itself; the point is stored on the simplex transform.
    assert logp(point) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("cant_solve", "position"),
    [("cs", 2), ("x", 0), (None, None)],
)
def test_deterministics_are_ambppl_measures(entry, rng, cant_solve, position):
    import pytensor
    from pytensor.graph import clone_replace

    model = entry.build(_counts(cant_solve=cant_solve), prior=1.0)
    q = _q_point(rng, *COUNTS.shape)
    x = model["q"].type()
    outputs = [model[n] for n in ("amb", "amb_modified", "amb_old", "entropy")]
    fn = pytensor.function([x], clone_replace(outputs, {model["q"]: x}), mode="FAST_COMPILE")
    got = fn(q)
    expected = [
        ambppl.amb(q, cant_solve=position),
        ambppl.amb_modified(q, cant_solve=position),
        ambppl.amb_old(q, cant_solve=position),
        ambppl.normalized_entropy(q, cant_solve=position),
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


def test_numpy_counts_are_read_by_the_catalog(entry):
    model = entry.build(COUNTS[:3], prior=2.0)
    assert model.named_vars_to_dims["q"] == ("item", "category")


@pytest.mark.parametrize(
    ("prior", "match"),
    [
        (-1.0, "prior must be strictly positive"),
        (0.0, "prior must be strictly positive"),
        ([1.0, 2.0], "vector of 3 positive numbers"),
        ([1.0, -2.0, 1.0], "prior must be strictly positive"),
        (np.nan, "prior must be strictly positive and finite"),
    ],
)
def test_bad_prior(entry, prior, match):
    with pytest.raises(ValueError, match=match):
        entry.build(_counts(), prior=prior)


def test_bad_counts(entry):
    with pytest.raises(ValueError, match=r"counts must have dims \('item', 'category'\)"):
        entry.build(_counts().T, prior=1.0)
    with pytest.raises(ValueError, match="counts must be non-negative"):
        entry.build(_counts(-COUNTS), prior=1.0)
    with pytest.raises(ValueError, match="cant_solve must be one of the category labels"):
        entry.build(_counts(cant_solve="nope"), prior=1.0)
    module = _load_module(entry.path)
    with pytest.raises(TypeError, match=r"counts must be an xarray\.DataArray"):
        module.model(COUNTS)
