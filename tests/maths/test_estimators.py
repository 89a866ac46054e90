"""Tests for ambppl.maths.estimators: exact enumeration of all count vectors, identities, bad
input."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multinomial

import ambppl
from ambppl import (
    dirichlet_mean,
    estimate,
    expected_plugin,
    less_biased_bias,
    plugin_bias,
)

F = Fraction


# ------------------------------------------------------------------ exact references
def compositions(n, k):
    """All count vectors of length k summing to n."""
    for head in product(range(n + 1), repeat=k - 1):
        if sum(head) <= n:
            yield (*head, n - sum(head))


def pmf(counts, q):
    """Exact multinomial probability (Fractions)."""
    coef = math.factorial(sum(counts))
    for c in counts:
        coef //= math.factorial(c)
    out = F(coef)
    for c, p in zip(counts, q, strict=True):
        out *= p**c
    return out


def amb_exact(q):
    """Paper eq. def_amb_final in Fractions (can't-solve last)."""
    proper, q_cs = q[:-1], q[-1]
    if q_cs == 1:
        return F(1)
    return 1 - sum(x * x for x in proper) / (1 - q_cs)


def plugin_exact(counts):
    """Paper section 3.3: 1 - 1[n_cs < n] sum n_k^2 / (n (n - n_cs))."""
    n, n_cs = sum(counts), counts[-1]
    if n_cs == n:
        return F(1)
    return 1 - F(sum(c * c for c in counts[:-1]), n * (n - n_cs))


def less_biased_exact(counts):
    """ERRATA item 8, literally: 1 - sum n_k(n_k-1)/(n(m-1)), 1 for m = 0, 1 - 1/n for m = 1."""
    n = sum(counts)
    m = n - counts[-1]
    if m == 0:
        return F(1)
    if m == 1:
        return 1 - F(1, n)
    return 1 - F(sum(c * (c - 1) for c in counts[:-1]), n * (m - 1))


def to_modified(value, counts_or_q_cs, c):
    """eq. rel_mod_unmod: (C amb - q_cs) / (C - 1)."""
    return (c * value - counts_or_q_cs) / (c - 1)


# q vectors (can't-solve last) incl. q_cs = 0, q_cs = 1, one proper category with mass,
# and ERRATA item 3's (1/2, 0, 1/2) with zero plug-in bias.
Q_CASES = [
    (F(1, 2), F(1, 2)),
    (F(1), F(0)),
    (F(0), F(1)),
    (F(1, 2), F(2, 5), F(1, 10)),
    (F(1, 100), F(95, 100), F(4, 100)),  # the paper's bias figure, right panel
    (F(1, 2), F(0), F(1, 2)),  # ERRATA item 3
    (F(1, 3), F(2, 3), F(0)),
    (F(0), F(0), F(1)),
    (F(1, 4), F(1, 4), F(1, 4), F(1, 4)),
    (F(7, 10), F(1, 10), F(0), F(2, 10)),
    (F(0), F(3, 5), F(0), F(2, 5)),
]


def enumerate_expectations(q, n):
    """Exact E[plug-in], E[less-biased] and P(total) by summing over all count vectors."""
    e_plugin = e_less = total = F(0)
    for counts in compositions(n, len(q)):
        p = pmf(counts, q)
        if p == 0:
            continue
        total += p
        e_plugin += p * plugin_exact(counts)
        e_less += p * less_biased_exact(counts)
    return e_plugin, e_less, total


@pytest.mark.parametrize("q", Q_CASES, ids=lambda q: "-".join(str(x) for x in q))
def test_bias_formulas_against_exact_enumeration(q):
    qf = np.array([float(x) for x in q])
    c = len(q) - 1
    truth = amb_exact(q)
    for n in range(1, 9):
        e_plugin, e_less, total = enumerate_expectations(q, n)
        assert total == 1
        assert expected_plugin(qf, n) == pytest.approx(float(e_plugin), abs=1e-14)
        assert plugin_bias(qf, n) == pytest.approx(float(e_plugin - truth), abs=1e-14)
        assert less_biased_bias(qf, n) == pytest.approx(float(e_less - truth), abs=1e-14)
        # ERRATA item 8's closed form of the less-biased bias, in exact arithmetic
        assert e_less - truth == -(q[-1] ** (n - 1)) * (truth - q[-1])
        if c >= 2:  # modified measure: the affine map with the unbiased n_cs / n
            mod_truth = to_modified(truth, q[-1], c)
            mod_plugin = to_modified(e_plugin, q[-1], c)
            mod_less = to_modified(e_less, q[-1], c)
            kw = {"measure": "modified"}
            assert expected_plugin(qf, n, **kw) == pytest.approx(float(mod_plugin), abs=1e-14)
            assert plugin_bias(qf, n, **kw) == pytest.approx(
                float(mod_plugin - mod_truth), abs=1e-14
            )
            assert less_biased_bias(qf, n, **kw) == pytest.approx(
                float(mod_less - mod_truth), abs=1e-14
            )


def test_errata3_zero_plugin_bias_and_sign_condition():
    n = np.arange(1, 31)
    assert np.all(plugin_bias([0.5, 0.0, 0.5], n) == 0.0)
    # strictly negative iff q_cs < 1 and >= 2 proper categories have mass (ERRATA 3)
    assert np.all(plugin_bias([0.5, 0.4, 0.1], n) < 0)
    assert np.all(np.diff(plugin_bias([0.5, 0.4, 0.1], n)) > 0)  # increases to 0
    assert np.all(plugin_bias([0.0, 0.0, 1.0], n) == 0.0)


def test_estimators_average_to_their_expectations_over_all_count_vectors():
    # the float implementation of estimate() summed against exact multinomial weights
    # (scipy.stats.multinomial) reproduces expected_plugin / the less-biased expectation
    q = np.array([0.5, 0.2, 0.2, 0.1])
    for n in (1, 2, 5, 8):
        counts = np.array(list(compositions(n, 4)))
        w = multinomial.pmf(counts, n, q)
        assert w.sum() == pytest.approx(1.0, abs=1e-13)
        for measure in ("amb", "modified"):
            plug = np.sum(w * estimate(counts, "plugin", measure))
            less = np.sum(w * estimate(counts, "less_biased", measure))
            true = float(getattr(ambppl, "amb" if measure == "amb" else "amb_modified")(q))
            assert plug == pytest.approx(expected_plugin(q, n, measure=measure), abs=1e-13)
            assert less - true == pytest.approx(less_biased_bias(q, n, measure=measure), abs=1e-13)


# ------------------------------------------------------------------ estimator values
@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=2, max_size=6).filter(lambda c: sum(c) > 0))
def test_estimators_match_literal_formulas(counts):
    c = len(counts) - 1
    assert estimate(counts) == pytest.approx(float(plugin_exact(counts)), rel=1e-14, abs=1e-15)
    less = less_biased_exact(counts)
    assert estimate(counts, "less_biased") == pytest.approx(float(less), rel=1e-14, abs=1e-15)
    if c >= 2:
        u_hat = F(counts[-1], sum(counts))
        assert estimate(counts, "less_biased", "modified") == pytest.approx(
            float(to_modified(less, u_hat, c)), rel=1e-14, abs=1e-15
        )
        assert estimate(counts, "plugin", "modified") == pytest.approx(
            float(to_modified(plugin_exact(counts), u_hat, c)), rel=1e-12, abs=1e-15
        )


def test_plugin_applies_each_measure_to_frequencies():
    counts = np.array([[3, 1, 0, 2], [0, 0, 0, 4], [1, 1, 1, 1]])
    freq = counts / counts.sum(axis=1, keepdims=True)
    for name, func in [
        ("amb", ambppl.amb),
        ("modified", ambppl.amb_modified),
        ("old", ambppl.amb_old),
        ("entropy", ambppl.normalized_entropy),
    ]:
        np.testing.assert_array_equal(estimate(counts, "plugin", name), func(freq))
    np.testing.assert_array_equal(
        estimate(counts, "plugin", cant_solve=None), ambppl.amb(freq, cant_solve=None)
    )


def test_less_biased_edge_cases():
    # m = 0 -> 1; m = 1 -> 1 - 1/n; no can't-solve: unbiased U-statistic 1 - sum n(n-1)/(n(n-1))
    np.testing.assert_allclose(
        estimate([[0, 0, 5], [1, 0, 3], [2, 0, 0], [1, 1, 0]], "less_biased"),
        [1.0, 0.75, 0.0, 1.0],
        rtol=1e-15,
    )
    # the modified less-biased estimator may exceed 1 (not clipped: clipping would bias it)
    assert estimate([1, 1, 0], "less_biased", "modified") == pytest.approx(2.0)
    assert estimate([3, 1], "less_biased", cant_solve=None) == pytest.approx(0.5)


def test_posterior_mean_is_dirichlet_mean_of_counts_plus_prior():
    counts = np.array([[5, 5, 5], [5, 0, 0], [30, 0, 0], [0, 0, 0]])
    for measure in ambppl.MEASURES:
        np.testing.assert_array_equal(
            estimate(counts, "posterior_mean", measure), dirichlet_mean(counts + 1.0, measure)
        )
        np.testing.assert_array_equal(
            estimate(counts, "posterior_mean", measure, prior=0.5),
            dirichlet_mean(counts + 0.5, measure),
        )
    prior = np.array([0.5, 0.5, 2.0])
    np.testing.assert_array_equal(
        estimate(counts, "posterior_mean", prior=prior), dirichlet_mean(counts + prior)
    )
    # an item without answers gets the prior mean (paper: 1 - 4/9 for Dir(1,1,1))
    assert estimate([0, 0, 0], "posterior_mean") == pytest.approx(5 / 9, rel=1e-15)


def test_vectorization_over_items_and_n():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 6, size=(4, 5, 3)) + np.array([1, 0, 0])
    for method in ("plugin", "less_biased", "posterior_mean"):
        out = estimate(counts, method)
        assert out.shape == (4, 5)
        assert out[2, 3] == pytest.approx(estimate(counts[2, 3], method), rel=1e-14)
    assert isinstance(estimate([1, 2, 3]), float | np.floating)
    q = rng.dirichlet([1.0, 2.0, 0.5], size=(2, 3))
    n = np.array([1, 4, 9])
    for func in (expected_plugin, plugin_bias, less_biased_bias):
        out = func(q, n)
        assert out.shape == (2, 3)
        assert out[1, 2] == pytest.approx(func(q[1, 2], 9), rel=1e-14)
    assert expected_plugin([0.2, 0.3, 0.5], 10_000) == pytest.approx(
        float(ambppl.amb([0.2, 0.3, 0.5])), abs=1e-4
    )


def test_no_cant_solve_category():
    q = [0.2, 0.3, 0.5]
    # without can't-solve, the less-biased estimator is unbiased for n >= 2
    assert less_biased_bias(q, 2, cant_solve=None) == 0.0
    assert less_biased_bias(q, 1, cant_solve=None) == pytest.approx(
        -float(ambppl.amb(q, cant_solve=None))
    )
    # plug-in bias -(1/n) (1 - sum q^2)
    assert plugin_bias(q, 4, cant_solve=None) == pytest.approx(-(1 - 0.38) / 4, rel=1e-14)


# ------------------------------------------------------------------ bad input
def test_bad_counts():
    with pytest.raises(ValueError, match=r"counts must be non-negative, but got minimum -1"):
        estimate([1, -1, 2])
    with pytest.raises(ValueError, match=r"counts must be whole numbers, but got \[1\.5\]"):
        estimate([1.5, 2, 2])
    with pytest.raises(ValueError, match=r"counts must be finite"):
        estimate([np.nan, 2, 2])
    with pytest.raises(TypeError, match=r"counts must be array-like of numbers"):
        estimate(["a", "b"])
    with pytest.raises(ValueError, match=r"counts must have at least 2 categories"):
        estimate([[3], [4]])


@pytest.mark.parametrize("method", ["plugin", "less_biased"])
def test_items_without_answers_are_named(method):
    counts = np.array([[1, 2, 0], [3, 0, 1], [0, 0, 0], [0, 0, 0]])
    with pytest.raises(
        ValueError,
        match=rf"at least one answer per item for method='{method}', but item 2 has none \(2 such",
    ):
        estimate(counts, method)
    with pytest.raises(ValueError, match=r"but item \(1, 0\) has none"):
        estimate(counts.reshape(2, 2, 3), method)


@pytest.mark.parametrize("method", ["plugin", "less_biased"])
def test_one_item_without_answers_raises(method):
    # 1-D counts of one unanswered item: less_biased returned NaN, plugin a message about q
    with pytest.raises(
        ValueError,
        match=rf"counts must have at least one answer for method='{method}', but the item "
        r"has none \(all its counts are 0\); use method='posterior_mean'",
    ):
        estimate([0, 0, 0], method)
    assert np.isfinite(estimate([0, 0, 0], "posterior_mean"))


@pytest.mark.parametrize("method", ["plugin", "less_biased"])
def test_prior_is_checked_by_every_method(method):
    # plugin with prior=-1 returned 0.667: the docs say a non-positive prior raises
    with pytest.raises(ValueError, match=r"prior must be a positive finite number, but got -1"):
        estimate([1, 1, 1], method, prior=-1)
    with pytest.raises(TypeError, match=r"prior must be a positive number, but got 'flat'"):
        estimate([1, 1, 1], method, prior="flat")
    with pytest.raises(ValueError, match=r"one entry per category \(3\)"):
        estimate([1, 1, 1], method, prior=[1.0, 1.0])
    # a valid prior changes nothing for these methods
    assert estimate([1, 2, 3], method, prior=0.5) == estimate([1, 2, 3], method)


def test_bad_options():
    with pytest.raises(
        ValueError,
        match=r"method must be one of 'plugin', 'less_biased', 'posterior_mean', but got 'mle'",
    ):
        estimate([1, 2, 3], "mle")
    with pytest.raises(
        ValueError,
        match=r"measure must be one of 'amb', 'modified', 'old', 'entropy', but got 'gini'",
    ):
        estimate([1, 2, 3], measure="gini")
    for measure in ("old", "entropy"):
        with pytest.raises(
            NotImplementedError,
            match=rf"defined for measure .amb. and .modified. only, not .{measure}. \(no "
            r"unbiased U-statistic form is known\); use 'plugin' or 'posterior_mean'$",
        ):
            estimate([1, 2, 3], "less_biased", measure)
    with pytest.raises(ValueError, match=r"cant_solve must be a position in \[-3, 2\]"):
        estimate([1, 2, 3], cant_solve=5)
    with pytest.raises(ValueError, match=r"needs at least 2 proper categories"):
        estimate([1, 2], measure="modified")
    with pytest.raises(ValueError, match=r"prior must be a positive finite number, but got -1\.0"):
        estimate([1, 2, 3], "posterior_mean", prior=-1.0)
    with pytest.raises(TypeError, match=r"prior must be a positive number, but got 'flat'"):
        estimate([1, 2, 3], "posterior_mean", prior="flat")
    with pytest.raises(
        ValueError, match=r"prior must be a positive number or have one entry per category \(3\)"
    ):
        estimate([1, 2, 3], "posterior_mean", prior=[1.0, 1.0])
    with pytest.raises(
        ValueError, match=r"prior must contain finite, strictly positive concentrations"
    ):
        estimate([1, 2, 3], "posterior_mean", prior=[1.0, 0.0, 1.0])
    # a small prior is quoted in the message, a large one (more than 8 entries) is not
    with pytest.raises(ValueError, match=r"concentrations, but got \[1\.0, 0\.0, 1\.0\]$"):
        estimate([1, 2, 3], "posterior_mean", prior=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"strictly positive concentrations$"):
        estimate(np.ones((3, 3)), "posterior_mean", prior=np.zeros((3, 3)))


def test_bad_bias_arguments():
    for func in (expected_plugin, plugin_bias, less_biased_bias):
        with pytest.raises(
            ValueError, match=r"n must be whole numbers >= 1 \(answers per item\), but got \[0\.0\]"
        ):
            func([0.5, 0.5, 0.0], 0)
        with pytest.raises(ValueError, match=r"n must be whole numbers >= 1 .* but got \[2\.5\]"):
            func([0.5, 0.5, 0.0], 2.5)
        # only the bad sizes are quoted: 1 is a valid n (the least one)
        with pytest.raises(ValueError, match=r"but got \[0\.5\]$"):
            func([0.5, 0.5, 0.0], [1, 0.5])
        with pytest.raises(ValueError, match=r"q must sum to 1"):
            func([0.5, 0.6, 0.0], 3)
        with pytest.raises(ValueError, match=r"q must be non-negative"):
            func([1.5, -0.5, 0.0], 3)
        with pytest.raises(ValueError, match=r"measure must be one of .* but got 'gini'"):
            func([0.5, 0.5, 0.0], 3, measure="gini")
        with pytest.raises(
            NotImplementedError, match=r"measure 'amb' and 'modified' only, not 'old'"
        ):
            func([0.5, 0.5, 0.0], 3, measure="old")
        with pytest.raises(ValueError, match=r"needs at least 2 proper categories"):
            func([0.5, 0.5], 3, measure="modified")


def test_bias_functions_return_a_scalar_for_one_q_and_n():
    """One q and one n give a numpy scalar (not a 0-d array); a batch gives an array.
    Reference: the bias of the plug-in at n = 1 is -amb(q) (one answer never disagrees with
    itself: amb(one-hot) = 0 unless it is can't-solve), enumerated by hand for q = (.5, .5, 0)."""
    q = [0.5, 0.5, 0.0]
    for func in (expected_plugin, plugin_bias, less_biased_bias):
        one = func(q, 3)
        assert np.ndim(one) == 0 and not isinstance(one, np.ndarray), func.__name__
        batch = func(q, [2, 3])
        assert isinstance(batch, np.ndarray) and batch.shape == (2,)
    assert float(plugin_bias(q, 1)) == pytest.approx(-0.5, abs=1e-15)


# ------------------------------------------------------------------------------------------
# labelled and lazy inputs: a DataArray keeps its item coordinates, dask stays lazy


@pytest.mark.parametrize("method", ["plugin", "less_biased", "posterior_mean"])
def test_dataarray_keeps_labels_and_dask_stays_lazy(method):
    import dask.array
    import xarray as xr

    rng = np.random.default_rng(5)
    counts = rng.multinomial(12, [0.5, 0.3, 0.2], size=9)
    labelled = xr.DataArray(
        counts,
        dims=("item", "category"),
        coords={"item": np.arange(100, 109), "category": ["x", "y", "cs"]},
    )
    eager = ambppl.estimate(labelled, method)
    assert eager.dims == ("item",) and eager["item"].values.tolist() == list(range(100, 109))
    np.testing.assert_array_equal(eager.values, ambppl.estimate(counts, method))
    lazy = ambppl.estimate(labelled.chunk({"item": 4}), method)
    assert isinstance(lazy.data, dask.array.Array)
    np.testing.assert_array_equal(lazy.compute().values, eager.values)
    with pytest.raises(ValueError, match="method"):  # argument errors even before computing
        ambppl.estimate(labelled.chunk({"item": 4}), "mle")
    bad = labelled.copy(data=np.where(np.arange(9)[:, None] == 8, -1, counts))
    with pytest.raises(ValueError, match="counts"):  # bad counts raise when computed
        ambppl.estimate(bad.chunk({"item": 4}), method).compute()


def test_cant_solve_anywhere():
    """The can't-solve column may sit anywhere: the docs' counts with it first give the docs'
    values (reference: the hand-computed [2/3, 0, 1/2] and [19/27, 0, 1] of the example on
    docs/maths/closed_forms.md, paper eq. plugin_estimator and errata E8)."""
    last = np.array([[5, 5, 5], [5, 0, 0], [1, 1, 0]])
    for idx in (0, 1):
        counts = np.roll(last, idx + 1, axis=1)  # can't-solve moved to position idx
        assert counts[0, idx] == 5 and counts[2, idx] == 0
        np.testing.assert_allclose(estimate(counts, cant_solve=idx), [2 / 3, 0, 1 / 2])
        np.testing.assert_allclose(
            estimate(counts, "less_biased", cant_solve=idx), [19 / 27, 0, 1], atol=1e-15
        )


def test_less_biased_with_counts_beyond_int64_products():
    """Counts of 4e9 answers: n_j n_k = 1.6e19 overflows int64, the estimator must not.
    Reference: for counts (n, n, 0), ERRATA 8 gives 1 - 2 n (n - 1) / (2n (2n - 1)) =
    n / (2n - 1)."""
    n = 4_000_000_000
    got = estimate(np.array([[n, n, 0]]), "less_biased")
    np.testing.assert_allclose(got, [n / (2 * n - 1)], rtol=1e-12)


def test_plugin_bias_when_cant_solve_is_nearly_certain():
    """1 - q_cs**n for q_cs within 1e-12 of 1 is computed from the proper mass b (no
    cancellation). Reference: 50-digit mpmath of -(1 - (1 - b)**n) / n * (1 - sum p_k**2)
    (paper appendix B.1, ERRATA item 8) with b the sum of the proper entries."""
    import mpmath

    p = np.array([6e-13, 4e-13])
    q = np.array([*p, 1.0 - p.sum()])
    with mpmath.workdps(50):
        b = mpmath.mpf(p[0]) + mpmath.mpf(p[1])
        gini = 1 - sum((mpmath.mpf(x) / b) ** 2 for x in p)
        refs = [-(1 - (1 - b) ** n) / n * gini for n in (3, 10, 1000)]
    got = ambppl.plugin_bias(np.stack([q, q, q]), np.array([3, 10, 1000]))
    np.testing.assert_allclose(got, [float(r) for r in refs], rtol=1e-10)


def test_posterior_mean_with_cant_solve_anywhere():
    """method="posterior_mean" takes the can't-solve position too. Reference: the same counts
    with the can't-solve column moved last (a second route through the default position)."""
    last = np.array([[5, 5, 5], [5, 0, 0], [1, 1, 0]])
    ref = estimate(last, "posterior_mean")
    for idx in (0, 1):
        counts = np.roll(last, idx + 1, axis=1)  # can't-solve moved to position idx
        np.testing.assert_allclose(
            estimate(counts, "posterior_mean", cant_solve=idx), ref, rtol=1e-14
        )


@pytest.mark.parametrize(
    ("method", "measure"),
    [
        ("plugin", "modified"),
        ("less_biased", "modified"),
        ("posterior_mean", "modified"),
        ("plugin", "old"),
        ("posterior_mean", "old"),
    ],
)
def test_estimate_counts_the_proper_categories(method, measure):
    """Two categories, the last can't-solve: one proper class, which the modified and old
    measures refuse up front, naming estimate (not a later division by zero or another
    function's check); without a can't-solve category the same counts have two."""
    with pytest.raises(
        ValueError, match=rf"^estimate\(measure='{measure}'\) needs at least 2 proper .* got 1"
    ):
        estimate(np.array([[3, 1]]), method, measure=measure)
    assert np.isfinite(estimate(np.array([[3, 1]]), method, measure=measure, cant_solve=None))


def test_dim_with_an_array_is_refused():
    # dim= names a DataArray's category dimension; an array ignored it before
    refused = r"estimate: dim= is for xarray inputs; an array has its categories on the last"
    with pytest.raises(TypeError, match=refused):
        estimate(np.array([[3, 1, 1]]), dim="label")
