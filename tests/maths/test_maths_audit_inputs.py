"""Input handling of the estimators and closed-form moments found wanting by an audit: a
labelled prior read by position, bare numpy errors for shapes that do not match, a
transposed ``q`` told to normalize, NaN for concentrations whose sum overflows, ragged lists
and booleans read as numbers, and the closed-forms page disagreeing with the code."""

from __future__ import annotations

import inspect
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.internal.checks import RaggedArrayError, category_aligned
from ambppl.maths.measures import amb, amb_modified, amb_old, normalized_entropy

ROOT = Path(__file__).resolve().parents[2]
BIAS_FUNCTIONS = (ambppl.expected_plugin, ambppl.plugin_bias, ambppl.less_biased_bias)


def _audit_counts():
    """The audit's counts: the can't-solve label first, attrs naming it."""
    return xr.DataArray(
        [[5, 1, 2], [0, 5, 5]],
        dims=("item", "category"),
        coords={"item": ["i1", "i2"], "category": ["cs", "a", "b"]},
        attrs={"cant_solve": "cs"},
    )


def _amb_mean(a, b, cs):
    """E amb under Dirichlet(a, b, cs) (paper eq. expr_amb_final as cs/a0 + 2ab/(a0(A+1)))."""
    a, b, cs = Fraction(a), Fraction(b), Fraction(cs)
    a0, big_a = a + b + cs, a + b
    return cs / a0 + 2 * a * b / (a0 * (big_a + 1))


# ------------------------------------------------------------------ 1. a labelled prior


def test_a_labelled_prior_is_read_by_label_not_position():
    """The audit's case: prior (a=1, b=1, cs=10) against counts ordered (cs, a, b) gave
    [0.46, 0.4174] (the prior read as cs=1, a=1, b=10). Reference: exact fractions of the
    posteriors Dir(a=2, b=3, cs=15) and Dir(a=6, b=6, cs=10) (17/20 and 0.70629...), which
    xarray's own alignment (counts + prior) also gives."""
    counts = _audit_counts()
    prior = xr.DataArray([1.0, 1.0, 10.0], dims="category", coords={"category": ["a", "b", "cs"]})
    want = [float(_amb_mean(2, 3, 15)), float(_amb_mean(6, 6, 10))]
    assert want[0] == 0.85
    got = ambppl.estimate(counts, "posterior_mean", prior=prior)
    np.testing.assert_allclose(got.values, want, rtol=1e-14)
    np.testing.assert_allclose(ambppl.dirichlet_mean(counts + prior).values, want, rtol=1e-14)
    assert got["item"].values.tolist() == ["i1", "i2"]
    # a pandas Series is labelled by its index, the same way
    series = pd.Series({"b": 1.0, "cs": 10.0, "a": 1.0})
    got = ambppl.estimate(counts, "posterior_mean", prior=series)
    np.testing.assert_allclose(got.values, want, rtol=1e-14)
    # dask-backed counts: the same, computed lazily
    lazy = ambppl.estimate(counts.chunk({"item": 1}), "posterior_mean", prior=prior)
    np.testing.assert_allclose(lazy.compute().values, want, rtol=1e-14)
    # the categories first in counts: read by name, as before
    got = ambppl.estimate(counts.T, "posterior_mean", prior=prior)
    np.testing.assert_allclose(got.values, want, rtol=1e-14)


def test_a_prior_labelled_by_item_is_aligned_too():
    """A prior per item, labelled along both dimensions and in another order than the
    counts, is aligned along both; reference: the exact fractions of each posterior."""
    counts = _audit_counts()
    prior = xr.DataArray(
        [[10.0, 1.0], [1.0, 1.0], [2.0, 1.0]],
        dims=("category", "item"),
        coords={"category": ["cs", "b", "a"], "item": ["i2", "i1"]},
    )
    # i1: cs 5 + 1, a 1 + 1, b 2 + 1; i2: cs 0 + 10, a 5 + 2, b 5 + 1
    want = [float(_amb_mean(2, 3, 6)), float(_amb_mean(7, 6, 10))]
    got = ambppl.estimate(counts, "posterior_mean", prior=prior)
    np.testing.assert_allclose(got.values, want, rtol=1e-14)
    np.testing.assert_allclose(ambppl.dirichlet_mean(counts + prior).values, want, rtol=1e-14)


def test_a_prior_data_frame_is_read_by_its_index_and_columns():
    """A pandas DataFrame of priors per item (rows by item, columns by category), in another
    order than the counts along both, was read by position: it gave [0.8231, 0.5030] where
    the exact fractions of the posteriors (the same as the DataArray test above) give
    [8/11, 0.6957]. It is now read as ``xarray.DataArray(frame)`` would label it."""
    counts = _audit_counts()
    frame = pd.DataFrame(
        [[10.0, 1.0, 2.0], [1.0, 1.0, 1.0]], index=["i2", "i1"], columns=["cs", "b", "a"]
    )
    want = [float(_amb_mean(2, 3, 6)), float(_amb_mean(7, 6, 10))]
    by_position = ambppl.estimate(counts, "posterior_mean", prior=frame.to_numpy())
    assert not np.allclose(by_position.values, want)  # the old reading differs here
    got = ambppl.estimate(counts, "posterior_mean", prior=frame)
    np.testing.assert_allclose(got.values, want, rtol=1e-14)
    np.testing.assert_allclose(
        ambppl.dirichlet_mean(counts + xr.DataArray(frame, dims=("item", "category"))).values,
        want,
        rtol=1e-14,
    )
    # labels it cannot be aligned by are refused, naming prior and the way out
    with pytest.raises(ValueError, match=r"^prior must have the labels of counts along 'item'"):
        ambppl.estimate(counts, "posterior_mean", prior=frame.rename(index={"i2": "i9"}))
    with pytest.raises(
        ValueError, match=r"^prior must be read by position .* a pandas DataFrame .* prior.values"
    ):
        ambppl.estimate(counts.values, "posterior_mean", prior=frame, cant_solve=0)
    with pytest.raises(ValueError, match=r"^prior must be a pandas DataFrame only where counts"):
        ambppl.estimate(counts.expand_dims(rater=2).copy(), "posterior_mean", prior=frame)
    # where one concentration per category is asked for (fit, the planning curves), a frame is
    # refused in those words, not read as a vector
    with pytest.raises(ValueError, match=r"^prior must be one concentration per category here"):
        category_aligned(frame, counts["category"])


@pytest.mark.parametrize("method", ["plugin", "less_biased", "posterior_mean"])
def test_a_labelled_prior_that_cannot_be_aligned_is_refused(method):
    counts = _audit_counts()
    other = xr.DataArray([1.0, 1.0, 1.0], dims="category", coords={"category": ["a", "b", "c"]})
    with pytest.raises(
        ValueError,
        match=r"^prior must have the labels of counts along 'category' \['cs', 'a', 'b'\], "
        r"but got a labelled DataArray that lacks \['cs'\] and has \['c'\], which counts "
        r"lack; give prior the labels of counts, or pass prior.values",
    ):
        ambppl.estimate(counts, method, prior=other)
    with pytest.raises(ValueError, match=r"^prior must have the labels of counts .* lacks \['b'\]"):
        ambppl.estimate(counts, method, prior=pd.Series({"a": 1.0, "cs": 1.0, "x": 1.0}))
    with pytest.raises(ValueError, match=r"^prior must label each entry along 'category' once"):
        ambppl.estimate(counts, method, prior=pd.Series([1.0, 1.0, 1.0], index=["a", "a", "cs"]))
    labelled = xr.DataArray(
        [1.0, 1.0, 10.0], dims="category", coords={"category": ["a", "b", "cs"]}
    )
    # unlabelled counts: a bare array, or a DataArray without category coordinates
    bare = counts.values
    for unlabelled in (bare, xr.DataArray(bare, dims=("item", "category"))):
        with pytest.raises(
            ValueError,
            match=r"^prior must be read by position .* but got a labelled DataArray .* pass "
            r"prior.values in the order",
        ):
            ambppl.estimate(unlabelled, method, prior=labelled, cant_solve=0)
    with pytest.raises(ValueError, match=r"^prior must be read by position .* a pandas Series"):
        ambppl.estimate(bare, method, prior=pd.Series([1.0, 1.0, 1.0]))
    # a prior dimension that counts lack
    with pytest.raises(
        ValueError, match=r"^prior must have the category dimension of counts .* dims \('k',\)"
    ):
        ambppl.estimate(counts, method, prior=xr.DataArray([1.0, 1.0, 1.0], dims="k"))


def test_an_unlabelled_dataarray_prior_is_still_read_by_position():
    """Backwards compatible: a DataArray prior without coordinates is read as its values."""
    counts = _audit_counts()
    positional = xr.DataArray([10.0, 1.0, 1.0], dims="category")
    np.testing.assert_array_equal(
        ambppl.estimate(counts, "posterior_mean", prior=positional).values,
        ambppl.estimate(counts, "posterior_mean", prior=positional.values).values,
    )
    np.testing.assert_array_equal(
        ambppl.estimate(counts.values, "posterior_mean", prior=positional, cant_solve=0),
        ambppl.estimate(counts.values, "posterior_mean", prior=[10.0, 1.0, 1.0], cant_solve=0),
    )


def test_a_prior_per_item_with_dask_counts_is_refused():
    """Chunks of items cannot be matched to the rows of one prior array: it raised a numpy
    broadcasting error when computed, or used the first rows for every chunk."""
    counts = _audit_counts()
    with pytest.raises(ValueError, match=r"^prior must be the same for every item where counts"):
        ambppl.estimate(counts.chunk({"item": 1}), "posterior_mean", prior=np.ones((2, 3)))


def test_category_aligned_returns_other_values_unchanged():
    prior = [1.0, 2.0, 3.0]
    assert category_aligned(prior, _audit_counts()) is prior
    assert category_aligned(xr.DataArray(2.0), np.ones(3)) == 2.0


# ------------------------------------------------------------------ 2. shapes that do not match


def test_a_prior_of_another_shape_than_the_counts_is_refused():
    """It raised numpy's "operands could not be broadcast together"."""
    with pytest.raises(
        ValueError,
        match=r"^prior must broadcast against counts of shape \(3, 3\) .* but got shape "
        r"\(2, 3\); pass shape \(3,\)",
    ):
        ambppl.estimate(np.ones((3, 3), int), "posterior_mean", prior=[[1, 1, 1], [2, 2, 2]])
    # one row per item is fine
    rows = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [0.5, 0.5, 0.5]])
    got = ambppl.estimate(np.ones((3, 3), int), "posterior_mean", prior=rows)
    np.testing.assert_array_equal(got, ambppl.dirichlet_mean(np.ones((3, 3)) + rows))


@pytest.mark.parametrize("func", BIAS_FUNCTIONS)
def test_n_of_another_shape_than_the_items_of_q_is_refused(func):
    """They raised numpy's "shape mismatch: objects cannot be broadcast"."""
    with pytest.raises(
        ValueError,
        match=r"^n must broadcast against the items of q: q has shape \(2, 3\) \(items "
        r"\(2,\), categories last\) and n shape \(3,\); pass one n per item",
    ):
        func([[0.5, 0.4, 0.1], [0.2, 0.2, 0.6]], [1, 2, 3])
    assert func([[0.5, 0.4, 0.1], [0.2, 0.2, 0.6]], [1, 2]).shape == (2,)


# ------------------------------------------------------------------ 3. a transposed q


@pytest.mark.parametrize("func", BIAS_FUNCTIONS)
def test_a_transposed_q_is_told_to_transpose(func):
    """They said "q must sum to 1 along axis -1 ... normalize it first" (the columns of the
    transposed array), unlike every other function."""
    q = xr.DataArray([[0.5, 0.4, 0.1], [0.2, 0.2, 0.6]], dims=("item", "category"))
    with pytest.raises(ValueError, match=r"^q must have its categories on the last axis.*"):
        func(q.T, 3)
    with pytest.raises(ValueError, match=r"pass q.transpose\(\.\.\., 'category'\)$"):
        func(q.T, 3)
    np.testing.assert_array_equal(func(q, 3), func(q.values, 3))


# ------------------------------------------------------------------ 4. overflowing sums


@pytest.mark.parametrize("measure", ["amb", "modified", "old", "entropy"])
def test_concentrations_whose_sum_overflows_are_refused(measure):
    """dirichlet_mean([1e308, 1e308, 1]) returned NaN with overflow warnings."""
    alpha = [[1.0, 2.0, 3.0], [1e308, 1e308, 1.0]]
    with pytest.raises(
        ValueError,
        match=r"^alpha must sum to at most 1\.798e\+308 \(float64's largest number\) over the "
        r"categories .* but a row sums to inf \(row 1\)",
    ):
        ambppl.dirichlet_mean(alpha, measure)
    if measure in ("amb", "modified"):
        with pytest.raises(ValueError, match=r"^alpha must sum to at most 1\.798e\+308"):
            ambppl.dirichlet_var(alpha, measure)


def test_concentrations_summing_to_near_float_max_give_the_measure_at_the_mean():
    """Every finite sum gives finite moments, as the docs say; near 1.8e308 the entropy,
    old measure and modified variance overflowed to inf or NaN (warnings). Reference: a
    Dirichlet with alpha_0 ~ 1e308 has sd(q_k) ~ alpha_0**-0.5, so E f(q) = f(alpha /
    alpha_0) to float precision (alpha / alpha_0 formed after dividing by the largest
    entry)."""
    rng = np.random.default_rng(20261202)
    top = float(np.finfo(np.float64).max)
    refs = {"amb": amb, "modified": amb_modified, "old": amb_old}
    for _ in range(40):
        k = int(rng.integers(3, 16))
        alpha = rng.dirichlet(np.full(k, 0.7)) * top * rng.choice([0.99, 0.5, 0.05])
        alpha = np.maximum(alpha, 1.0)
        q = alpha / alpha.max()
        q /= q.sum()
        for measure, ref in refs.items():
            got = ambppl.dirichlet_mean(alpha, measure)
            assert got == pytest.approx(float(ref(q)), rel=1e-9, abs=1e-300), (measure, k)
        got = ambppl.dirichlet_mean(alpha, "entropy")
        assert got == pytest.approx(float(normalized_entropy(q)), rel=1e-9), k
        for measure in ("amb", "modified"):
            var = ambppl.dirichlet_var(alpha, measure)
            assert np.isfinite(var) and 0.0 <= var <= 1e-300, (measure, var)


# ------------------------------------------------------------------ 5. ragged lists, booleans


def test_ragged_lists_are_named_ragged():
    """They said "q must be array-like of numbers, but got list"."""
    cases = [
        (lambda x: ambppl.plugin_bias(x, 3), "q"),
        (lambda x: ambppl.estimate(x), "counts"),
        (lambda x: ambppl.dirichlet_mean(x), "alpha"),
        (lambda x: ambppl.estimate([[1, 2, 3], [3, 2, 1]], "posterior_mean", prior=x), "prior"),
        (lambda x: ambppl.estimate(_audit_counts(), prior=x), "prior"),
    ]
    for call, name in cases:
        with pytest.raises(
            ValueError,
            match=rf"^{name} must be a rectangular array \(every row as long as the others\), "
            r"but got ragged nested sequences: rows of lengths \[3, 2\]; pad or drop",
        ) as info:
            call([[0.5, 0.5, 0.0], [0.5, 0.5]])
        assert isinstance(info.value, RaggedArrayError) and isinstance(info.value, TypeError)
    with pytest.raises(RaggedArrayError, match=r"a mix of numbers and sequences at depth 1"):
        ambppl.plugin_bias([0.5, [0.5, 0.0]], 3)


@pytest.mark.parametrize("method", ["plugin", "posterior_mean"])
def test_boolean_priors_are_refused_as_true_is(method):
    """prior=[True, True, True] was read as 1.0 each while prior=True was refused."""
    with pytest.raises(TypeError, match=r"^prior must be a positive number, but got True$"):
        ambppl.estimate([1, 2, 3], method, prior=True)
    with pytest.raises(
        TypeError,
        match=r"^prior must be a positive number or positive numbers \(one per category\), "
        r"but got booleans \[True, True, True\]$",
    ):
        ambppl.estimate([1, 2, 3], method, prior=[True, True, True])
    with pytest.raises(TypeError, match=r"but got booleans$"):
        ambppl.estimate(np.ones((3, 3)), method, prior=np.ones((3, 3), bool))
    # numbers are still numbers, a 0-d array included (it was refused as "array(2.)")
    for two in (2, 2.0, np.float64(2.0), np.array(2.0), [2.0, 2.0, 2.0]):
        assert ambppl.estimate([1, 2, 3], method, prior=two) == ambppl.estimate(
            [1, 2, 3], method, prior=2.0
        )
    with pytest.raises(TypeError, match=r"^prior must be a positive number, but got None$"):
        ambppl.estimate([1, 2, 3], method, prior=None)


@pytest.mark.parametrize("func", BIAS_FUNCTIONS)
def test_boolean_sample_sizes_are_refused(func):
    """n=True was read as one answer."""
    with pytest.raises(
        TypeError, match=r"^n must be whole numbers >= 1 \(answers per item\), but got True$"
    ):
        func([0.5, 0.4, 0.1], True)
    with pytest.raises(TypeError, match=r"but got booleans \[True, True\]$"):
        func([0.5, 0.4, 0.1], np.array([True, True]))
    assert func([0.5, 0.4, 0.1], 1) == func([0.5, 0.4, 0.1], np.int64(1))


# ------------------------------------------------------------------ 6. the closed-forms page


def test_closed_forms_page_shows_dirichlet_moments_signature():
    """The page showed cant_solve=-1; the default is "auto"."""
    text = (ROOT / "docs" / "maths" / "closed_forms.md").read_text(encoding="utf-8")
    shown = re.search(r"`ambppl\.dirichlet_moments\(alpha, (.*?)\)`", text)
    assert shown is not None
    signature = inspect.signature(ambppl.dirichlet_moments)
    for part in shown.group(1).split(", "):
        key, value = part.split("=")
        assert signature.parameters[key].default == eval(value), part


def test_closed_forms_page_states_the_docstring_accuracy_of_mu4():
    """The page said mu4 is exact to 1e-12 up to alpha_0 ~ 10^5 (measured: 1.7e-12 at
    (5e4, 5e4)); dirichlet_moments' docstring says the double-double route keeps 1e-12 up
    to 3*10^4 and 1e-8 up to 3*10^5 (two equal classes, the worst shape)."""
    text = " ".join((ROOT / "docs" / "maths" / "closed_forms.md").read_text().split())
    assert "up to `alpha_0 ~ 3*10^4` and 1e-8 up to about `3*10^5`" in text
    assert "up to `alpha_0 ~ 10^5`" not in text
