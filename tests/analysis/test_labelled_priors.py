"""A labelled prior (a pandas Series indexed by category labels, a DataArray with a
``category`` coordinate) is read by its labels by every analysis function that takes one:
the planning curves, the threshold decision, ``plan`` and ``prior_sensitivity``; and the
answers still to come (``extra``), labelled by item, by their item labels.

Before, they read it by position (``check_prior``): with counts labelled ``["cs", "a", "b"]``
and a prior labelled ``["a", "b", "cs"]`` the can't-solve column got the concentration of
``"a"``, silently. Each test compares the call with the labelled prior against the same call
with the prior put in the counts' order by hand, and checks that the two orders give different
answers here (so that reading by position would fail the test).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.analysis._decision import decision_gain, expected_correct_decision
from ambppl.analysis.planning import (
    answers_needed,
    expected_posterior_sd,
    expected_posterior_var,
    next_batch,
    plan,
)

#: The counts' categories, can't-solve first; the prior's labels in another order.
CATEGORIES = ["cs", "a", "b"]
LABELS = ["a", "b", "cs"]
VALUES = [2.0, 0.5, 3.0]  # the prior's concentrations of "a", "b", "cs"
BY_HAND = np.array([3.0, 2.0, 0.5])  # the same, in the counts' order (cs, a, b)
BY_POSITION = np.array(VALUES)  # what the old code used: cs 2.0, a 0.5, b 3.0


@pytest.fixture
def counts():
    return xr.DataArray(
        [[5, 1, 2], [0, 5, 5], [1, 3, 0]],
        dims=("item", "category"),
        coords={"item": ["i0", "i1", "i2"], "category": CATEGORIES},
        attrs={"cant_solve": "cs"},
    )


LABELLED = {
    "series": lambda: pd.Series(VALUES, index=LABELS),
    "dataarray": lambda: xr.DataArray(VALUES, dims="category", coords={"category": LABELS}),
}


def _differs(a, b) -> bool:
    return not np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


#: The analyses that give an array per item, each as ``call(counts, prior)``.
ARRAY_CALLS = {
    "expected_posterior_var": lambda c, p: expected_posterior_var(c, 5, prior=p),
    "expected_posterior_sd": lambda c, p: expected_posterior_sd(
        c, [3, 10, 0], prior=p, measure="modified"
    ),
    "answers_needed": lambda c, p: answers_needed(c, target_sd=0.05, prior=p),
    "next_batch-variance": lambda c, p: next_batch(c, 9, prior=p, objective="variance"),
    "next_batch-decision": lambda c, p: next_batch(c, 9, prior=p, objective="decision"),
    "expected_correct_decision": lambda c, p: expected_correct_decision(c, 5, prior=p),
    # g(m) of the labelled counts and g(0) of their bare rows both with the aligned prior
    "decision_gain": lambda c, p: decision_gain(c, 5, prior=p),
}


@pytest.mark.parametrize("kind", sorted(LABELLED))
@pytest.mark.parametrize("name", list(ARRAY_CALLS))
def test_array_analyses_read_a_labelled_prior_by_label(counts, name, kind):
    call = ARRAY_CALLS[name]
    got = call(counts, LABELLED[kind]())
    want = call(counts, BY_HAND)
    np.testing.assert_array_equal(got, want)
    assert _differs(want, call(counts, BY_POSITION))


def test_transposed_counts_read_a_labelled_prior_by_label(counts):
    # counts with dims ("category", "item"): the categories by name, then the prior by label
    got = expected_posterior_var(counts.T, 5, prior=LABELLED["series"]())
    np.testing.assert_array_equal(got, expected_posterior_var(counts, 5, prior=BY_HAND))


@pytest.mark.parametrize("kind", sorted(LABELLED))
def test_plan_reads_a_labelled_prior_by_label(counts, kind):
    # plan reads the counts' bare values: the prior is aligned with their labels first
    got = plan(counts, 9, prior=LABELLED[kind]())
    want = plan(counts, 9, prior=BY_HAND)
    pd.testing.assert_frame_equal(got, want)
    other = plan(counts, 9, prior=BY_POSITION)
    assert _differs(want.loc[other.index, "extra"], other["extra"])


@pytest.mark.parametrize(
    "name", ["expected_posterior_var", "expected_correct_decision", "decision_gain"]
)
def test_a_labelled_prior_that_cannot_be_aligned_is_refused(counts, name):
    call = ARRAY_CALLS[name]
    other = pd.Series(VALUES, index=["a", "b", "maybe"])
    with pytest.raises(ValueError, match=r"^prior must have the labels of counts.*'maybe'"):
        call(counts, other)
    # bare counts have no labels to read it by: refused, not read by position
    with pytest.raises(ValueError, match=r"^prior must be read by position.*prior\.values"):
        call(counts.values, LABELLED["series"]())
    twice = pd.Series([1.0, 1.0, 1.0], index=["a", "a", "cs"])
    with pytest.raises(ValueError, match=r"^prior must label each entry.*'a'"):
        call(counts, twice)


def test_a_bare_prior_and_a_learned_prior_are_read_as_before(counts):
    # an unlabelled vector stays positional; a fitted hierarchical prior is still averaged
    bare = expected_posterior_var(counts.values, 5, prior=BY_HAND, cant_solve=0)
    np.testing.assert_array_equal(bare, expected_posterior_var(counts, 5, prior=BY_HAND))
    fitted = ambppl.fit(counts, "hierarchical_dirichlet", method="empirical_bayes")
    kappa_mu = fitted["posterior"]["kappa"] * fitted["posterior"]["mu"]
    fixed = kappa_mu.isel(chain=0, draw=0).sel(category=CATEGORIES).values
    np.testing.assert_allclose(
        expected_posterior_var(counts, 5, prior=fitted),
        expected_posterior_var(counts, 5, prior=fixed),
        rtol=1e-12,
    )


@pytest.mark.parametrize("kind", sorted(LABELLED))
def test_prior_sensitivity_reads_a_labelled_prior_by_label(counts, kind):
    settings = {"draws": 200, "chains": 2, "random_seed": 3}  # exact draws: same seed, same
    got = ambppl.prior_sensitivity(counts, priors=[LABELLED[kind](), 1.0], **settings)
    want = ambppl.prior_sensitivity(counts, priors=[BY_HAND, 1.0], **settings)
    pd.testing.assert_frame_equal(got, want)
    assert "beta=[3, 2, 0.5]" in got.columns.get_level_values("prior")
    other = ambppl.prior_sensitivity(counts, priors=[BY_POSITION, 1.0], **settings)
    assert _differs(want.iloc[:, 0], other.iloc[:, 0])


def test_prior_sensitivity_refuses_a_labelled_prior_it_cannot_align(counts):
    # the element is named; bare counts are labelled 0, 1, 2 by as_counts
    with pytest.raises(ValueError, match=r"^priors\[1\] must have the labels of counts"):
        ambppl.prior_sensitivity(counts.values, priors=[1.0, LABELLED["series"]()])


# -- the answers still to come, labelled by item ------------------------------------------

#: ``extra`` labelled by item in another order than the counts' items (i0, i1, i2).
EXTRA = {"i2": 0, "i0": 20, "i1": 3}
EXTRA_BY_HAND = [20, 3, 0]  # the same, in the counts' order
EXTRA_LABELLED = {
    "series": lambda: pd.Series(EXTRA),
    "dataarray": lambda: xr.DataArray(
        list(EXTRA.values()), dims="item", coords={"item": list(EXTRA)}
    ),
}
#: The analyses that take ``extra`` per item, each as ``call(counts, extra)``.
EXTRA_CALLS = {
    "expected_posterior_var": lambda c, m: expected_posterior_var(c, m),
    "expected_posterior_sd": lambda c, m: expected_posterior_sd(c, m, measure="modified"),
    "expected_correct_decision": lambda c, m: expected_correct_decision(c, m),
    "decision_gain": lambda c, m: decision_gain(c, m),
}


@pytest.mark.parametrize("kind", sorted(EXTRA_LABELLED))
@pytest.mark.parametrize("name", list(EXTRA_CALLS))
def test_extra_labelled_by_item_is_read_by_label(counts, name, kind):
    """``extra`` as a Series or DataArray labelled by item was read by position: each item
    got another item's number of answers still to come. Reference: the same numbers put in
    the counts' order by hand; reading by position gives other values here."""
    call = EXTRA_CALLS[name]
    want = call(counts, EXTRA_BY_HAND)
    np.testing.assert_array_equal(call(counts, EXTRA_LABELLED[kind]()), want)
    np.testing.assert_array_equal(call(counts.T, EXTRA_LABELLED[kind]()), want)  # transposed
    assert _differs(want, call(counts, list(EXTRA.values())))


@pytest.mark.parametrize("name", list(EXTRA_CALLS))
def test_extra_that_cannot_be_aligned_is_refused(counts, name):
    call = EXTRA_CALLS[name]
    with pytest.raises(ValueError, match=r"^extra must have the labels of counts along 'item'"):
        call(counts, pd.Series({"i0": 1, "i1": 1, "x": 1}))
    with pytest.raises(
        ValueError,
        match=r"^extra must be read by position against counts without item labels, .* pass "
        r"extra.values in the order of the items of counts",
    ):
        call(counts.values, pd.Series(EXTRA))
    # a number, a list, a 0-d DataArray and one without coordinates (any dim name) are read
    # by position, as before
    np.testing.assert_array_equal(call(counts, xr.DataArray(5)), call(counts, 5))
    by_position = xr.DataArray(EXTRA_BY_HAND, dims="x")
    np.testing.assert_array_equal(call(counts, by_position), call(counts, EXTRA_BY_HAND))


# -- score ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(LABELLED))
def test_score_reads_a_labelled_prior_by_label(counts, kind, tmp_path):
    """``score`` gave the prior to the model file's ``concentration`` as it was: a Series
    labelled by category was read by position (at 5c43d0a the means here were [0.6667,
    0.5206, 0.6105] for [0.7635, 0.5615, 0.5020]). In memory and read in chunks, it now
    scores as the prior put in the counts' order by hand."""
    want = ambppl.score(counts, prior=BY_HAND, random_seed=1)
    got = ambppl.score(counts, prior=LABELLED[kind](), random_seed=1)
    pd.testing.assert_frame_equal(got, want)
    assert _differs(want["mean"], ambppl.score(counts, prior=BY_POSITION, random_seed=1)["mean"])
    path = tmp_path / "counts.parquet"
    frame = pd.DataFrame(counts.values, columns=CATEGORIES)
    frame.index = pd.Index(counts["item"].values, name="item")
    frame.to_parquet(path)
    lazy = ambppl.data.read_in_chunks(path, chunk_items=2, cant_solve="cs")
    chunked = ambppl.score(lazy, prior=LABELLED[kind](), random_seed=1).compute()
    np.testing.assert_allclose(np.asarray(chunked["mean"]), want["mean"].to_numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"^prior must have the labels of counts"):
        ambppl.score(counts, prior=pd.Series({"a": 1.0, "b": 1.0, "z": 1.0}))


# -- bare counts with a fitted prior whose can't-solve category is not last ------------------


def test_bare_counts_take_the_fitted_priors_cant_solve_category():
    """A learned prior fitted to counts with can't-solve first, then asked with those
    counts' bare values: ``cant_solve="auto"`` took the last category as can't-solve (the
    bare arrays' convention) although the fit had it first ([0.0118, 0.0161, 0.0057, 0.0099]
    for [0.00455, 0.00519, 0.00398, 0.0129]). Bare counts are read in the fit's order, so
    its can't-solve category now comes with them. Reference: the same call with the
    labelled counts, and with ``cant_solve=0`` given."""
    rng = np.random.default_rng(1)
    q = rng.dirichlet([1.0, 1.0, 0.5], size=30)
    values = np.array(
        [rng.multinomial(n, p) for n, p in zip(rng.integers(3, 12, 30), q, strict=True)]
    )
    labelled = xr.DataArray(
        values[:, [2, 0, 1]],
        dims=("item", "category"),
        coords={"item": [f"i{i}" for i in range(30)], "category": ["cs", "x", "y"]},
        attrs={"cant_solve": "cs"},
    )
    fitted = ambppl.fit(labelled, "hierarchical_dirichlet", method="empirical_bayes")
    want = expected_posterior_var(labelled[:4], 5, prior=fitted)
    np.testing.assert_array_equal(
        expected_posterior_var(labelled[:4].values, 5, prior=fitted, cant_solve=0), want
    )
    np.testing.assert_array_equal(
        expected_posterior_var(labelled[:4].values, 5, prior=fitted), want
    )
    # an explicit position that contradicts the fit is refused, not used
    with pytest.raises(ValueError, match=r"^cant_solve must be the fitted prior's can't-solve"):
        expected_posterior_var(labelled[:4].values, 5, prior=fitted, cant_solve=2)
    np.testing.assert_array_equal(
        next_batch(labelled[:6].values, 10, prior=fitted),
        next_batch(labelled[:6], 10, prior=fitted),
    )
