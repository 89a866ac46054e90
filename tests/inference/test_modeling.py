"""``ambppl.inference.modeling``: the building blocks of model files, against independent
formulas."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr
from scipy.special import gammaln

from ambppl.inference.modeling import (
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


# --- accuracy at every concentration (issue 22: the learned prior's kappa ran to 1e16 on
# near-homogeneous data because the difference of two huge log-gamma values was noise) ---

EPS = np.finfo(np.float64).eps


def _excess_mpmath(a: float, c: int):
    """Reference: sum_{j<c} log1p(j / a) at 50 digits (the rising factorial's definition)."""
    import mpmath as mp

    with mp.workdps(50):
        a = mp.mpf(a)
        return mp.fsum(mp.log1p(j / a) for j in range(c))


def test_log_pochhammer_excess_against_mpmath_from_1e_minus_3_to_1e300():
    from ambppl.inference.modeling import log_pochhammer_excess

    a = np.logspace(-3, 300, 41)
    c = np.array([0, 1, 2, 3, 7, 40, 300, 2000])
    got = log_pochhammer_excess(a[:, None], c[None, :])
    assert got.shape == (41, 8) and np.all(got[:, 0] == 0.0)
    for i, ai in enumerate(a):
        for j, cj in enumerate(c[1:], start=1):
            ref = _excess_mpmath(float(ai), int(cj))
            err = abs(float(got[i, j] - ref))
            # each regime adds terms of size at most |result| + c (Stirling's a log1p(c/a) - c
            # cancels terms of size c): a few units in the last place of that (measured <= 1)
            assert err <= 4 * EPS * (abs(float(ref)) + cj), (ai, cj, got[i, j], float(ref))


def test_log_pochhammer_excess_regimes_meet_continuously():
    # on both sides of each switch the three formulas agree with the mpmath value
    from ambppl.inference.modeling import SERIES_RATIO, STIRLING_FROM, log_pochhammer_excess

    for a, c in ((STIRLING_FROM, 5), (5 / SERIES_RATIO, 5), (50 / SERIES_RATIO, 50)):
        for x in (np.nextafter(a, 0.0), a, np.nextafter(a, np.inf)):
            ref = _excess_mpmath(x, c)
            assert abs(float(log_pochhammer_excess(x, c) - ref)) <= 4 * EPS * (abs(float(ref)) + c)


def _near_homogeneous_counts():
    """400 items x 5 answers from ONE response distribution: the marginal likelihood levels
    off at the multinomial (kappa = infinity) and the data cannot bound kappa above."""
    rng = np.random.default_rng(20261127)
    return rng.multinomial(5, [0.7, 0.25, 0.05], size=400)


def _dm_logp_mpmath(counts: np.ndarray, mu: np.ndarray, kappa: float):
    """Reference: sum_i [sum_k x_ik log(a_k / A) + sum_k sum_{j<x_ik} log1p(j / a_k)
    - sum_{j<n_i} log1p(j / A)] with a = kappa mu, A = sum(a), at 50 digits: an exact
    rearrangement of the log-gamma form (checked against mpmath's loggamma where it resolves)."""
    import mpmath as mp

    with mp.workdps(50):
        a = [mp.mpf(kappa) * mp.mpf(float(v)) for v in mu]
        big = mp.fsum(a)
        out = mp.mpf(0)
        for row in counts:
            for x, ak in zip(row, a, strict=True):
                out += int(x) * mp.log(ak / big) + mp.fsum(mp.log1p(j / ak) for j in range(x))
            out -= mp.fsum(mp.log1p(j / big) for j in range(int(row.sum())))
        return out


def _dm_logp_loggamma(counts: np.ndarray, mu: np.ndarray, kappa: float):
    """Second route: mpmath's loggamma differences, at enough digits for the cancellation."""
    import mpmath as mp

    with mp.workdps(80):
        a = [mp.mpf(kappa) * mp.mpf(float(v)) for v in mu]
        big = mp.fsum(a)
        out = mp.mpf(0)
        for row in counts:
            out += mp.loggamma(big) - mp.loggamma(big + int(row.sum()))
            pairs = zip(a, row, strict=True)
            out += mp.fsum(mp.loggamma(ak + int(x)) - mp.loggamma(ak) for ak, x in pairs)
        return out


@pytest.mark.parametrize(
    "kappa", [1e-8, 1e-5, 1e-3, 0.5, 3.0, 70.0, 1e4, 1e8, 1e12, 1e15, 1e16, 1e30, 1e300]
)
def test_dirichlet_multinomial_logp_at_every_concentration(kappa):
    counts = _near_homogeneous_counts()
    mu = np.array([0.68, 0.26, 0.06])
    stats = count_statistics(counts)
    ref = _dm_logp_mpmath(counts, mu, kappa)
    if kappa <= 1e16:
        assert abs(float(ref - _dm_logp_loggamma(counts, mu, kappa))) < 1e-30
    got = dirichlet_multinomial_logp(stats, kappa * mu)
    # 2000 answers: terms of size <= |log mu_k| + a few, summed in float64
    assert abs(got - float(ref)) <= 1e-12 * abs(float(ref))
    pointwise = log_likelihood(counts, kappa * mu)
    assert abs(pointwise.sum() - float(ref)) <= 1e-12 * abs(float(ref))


def test_dirichlet_multinomial_logp_levels_off_at_the_multinomial():
    counts = _near_homogeneous_counts()
    mu = np.array([0.68, 0.26, 0.06])
    stats = count_statistics(counts)
    multinomial = float(np.sum(counts * np.log(mu)))  # the kappa = infinity limit
    kappas = np.logspace(0, 300, 301)
    curve = np.array([dirichlet_multinomial_logp(stats, k * mu) for k in kappas])
    assert np.all(np.isfinite(curve))
    # the first term of the series in 1/kappa (log1p(t) = t + O(t^2)):
    # sum_i [sum_k x_ik (x_ik - 1) / (2 mu_k) - n_i (n_i - 1) / 2] / kappa
    n = counts.sum(axis=1)
    first = np.sum(counts * (counts - 1) / (2 * mu)) - np.sum(n * (n - 1) / 2)
    large = kappas >= 1e8
    np.testing.assert_allclose(
        curve[large] - multinomial,
        first / kappas[large],
        rtol=1e-6,
        atol=4 * EPS * abs(multinomial),
    )
    assert curve[-1] == pytest.approx(multinomial, rel=1e-15)


def test_pytensor_likelihood_and_gradient_finite_at_extreme_concentrations():
    import pytensor
    import pytensor.tensor as pt

    counts = _near_homogeneous_counts()
    stats = count_statistics(counts)
    log_kappa = pt.scalar("log_kappa")
    mu = np.array([0.68, 0.26, 0.06])
    logp = dirichlet_multinomial_logp(stats, pt.exp(log_kappa) * mu)
    fn = pytensor.function([log_kappa], [logp, pytensor.grad(logp, log_kappa)])
    for lk in (np.log(1e-8), np.log(1e-3), 0.0, np.log(1e8), np.log(1e16), np.log(1e300)):
        value, grad = fn(lk)
        assert np.isfinite(value) and np.isfinite(grad)
        assert value == pytest.approx(dirichlet_multinomial_logp(stats, np.exp(lk) * mu), rel=1e-13)
    # d logp / d log kappa -> -first / kappa (the series' first term), up to rounding in the
    # x log(a_k / A) terms, whose exact derivative is 0: a few eps per answer (2000 answers)
    n = counts.sum(axis=1)
    first = np.sum(counts * (counts - 1) / (2 * mu)) - np.sum(n * (n - 1) / 2)
    for kappa in (1e8, 1e16, 1e300):
        assert abs(fn(np.log(kappa))[1] + first / kappa) <= 8 * EPS * n.sum()


def test_is_unanimous_reads_only_items_with_two_answers_or_more():
    """is_unanimous: every item with >= 2 answers agrees and there are UNANIMOUS_MIN_ITEMS of
    them; single answers cannot disagree and do not count; one split item is enough to say no."""
    from ambppl.inference.modeling import UNANIMOUS_MIN_ITEMS, is_unanimous

    agree = np.array([[3, 0, 0], [0, 2, 0], [0, 0, 5]] * 4)[:UNANIMOUS_MIN_ITEMS]
    single = np.array([[1, 0, 0], [0, 1, 0]])
    assert is_unanimous(agree) and is_unanimous(np.vstack([agree, single]))
    assert not is_unanimous(agree[:-1])  # too few items to say
    assert not is_unanimous(np.vstack([agree[:-1], single]))  # singles do not count
    assert not is_unanimous(np.vstack([agree, [[2, 1, 0]]]))


# --- argument checks: clear errors instead of AttributeError, IndexError or a silent NaN ---


def test_model_builders_refuse_counts_that_are_not_a_count_dataarray():
    from ambppl.inference.catalog import get_model

    fix = r"make one with ambppl\.read_annotations\(data, cant_solve=\.\.\.\) or ambppl\.data"
    for build in (model_coords, lambda c: add_annotation_data(c)):
        with pytest.raises(TypeError, match=rf"^counts must be an xarray\.DataArray .*{fix}"):
            build(np.array([[1, 2, 0]]))
        with pytest.raises(ValueError, match=r"counts must have dims \('item', 'category'\)"):
            build(_counts_da([[1, 2, 0], [0, 0, 3]]).T)
    module = get_model("hierarchical_dirichlet").module
    for build in (module.model, module.hyper_model):
        # was AttributeError: 'numpy.ndarray' object has no attribute 'coords'
        with pytest.raises(TypeError, match=rf"^counts must be an xarray\.DataArray .*{fix}"):
            build(np.array([[1, 2, 0]]))


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf])
def test_log_likelihood_refuses_a_concentration_that_is_not_positive(bad):
    # was [nan] (or a number) silently
    with pytest.raises(
        ValueError, match=r"^concentration must be finite and strictly positive .* but got"
    ):
        log_likelihood([[1, 1]], [bad, 1.0])
    with pytest.raises(ValueError, match=r"concentration must be finite and strictly positive"):
        log_likelihood([[1, 1]], np.array([[[1.0, 1.0]], [[bad, 1.0]]]))  # one bad draw
    with pytest.raises(TypeError, match=r"concentration must be array-like of numbers"):
        log_likelihood([[1, 1]], ["a", "b"])


def test_count_matrices_must_have_an_item_axis():
    # count_statistics([1, 2]) raised IndexError
    for func in (count_statistics, lambda c: log_likelihood(c, [1.0, 1.0])):
        with pytest.raises(
            ValueError, match=r"^counts must have shape \(items, K\) .* but got shape \(2,\)"
        ):
            func([1, 2])


def test_dirichlet_multinomial_logp_checks_the_concentration():
    stats = count_statistics([[2, 0], [2, 1]])
    assert stats.n_categories == 2
    # the wrong number of categories returned -5.19, a zero concentration nan
    with pytest.raises(ValueError, match=r"^concentration must have 2 entries .* shape \(3,\)"):
        dirichlet_multinomial_logp(stats, np.ones(3))
    with pytest.raises(ValueError, match=r"^concentration must be finite and strictly positive"):
        dirichlet_multinomial_logp(stats, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"^concentration must be one vector \(K,\)"):
        dirichlet_multinomial_logp(stats, np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"^stats must be the CountStatistics of the counts"):
        dirichlet_multinomial_logp([[2, 0], [2, 1]], np.ones(2))
    # statistics built by hand (no n_categories): at least the categories they count
    from dataclasses import replace

    bare = replace(stats, n_categories=None)
    with pytest.raises(ValueError, match=r"an entry for each of the counts' categories"):
        dirichlet_multinomial_logp(bare, np.ones(1))
    assert dirichlet_multinomial_logp(bare, np.ones(2)) == dirichlet_multinomial_logp(
        stats, np.ones(2)
    )


def test_symbolic_likelihood_is_checked_by_static_shape_only():
    import pytensor
    import pytensor.tensor as pt

    stats = count_statistics([[2, 0], [2, 1]])
    with pytest.raises(ValueError, match=r"concentration must have 2 entries .* static shape"):
        dirichlet_multinomial_logp(stats, pt.vector("a", shape=(3,)))
    # no check enters the graph: the compiled function equals the numpy value
    x = pt.vector("a")
    fn = pytensor.function([x], dirichlet_multinomial_logp(stats, x), mode="FAST_COMPILE")
    a = np.array([0.5, 1.5])
    assert fn(a) == pytest.approx(dirichlet_multinomial_logp(stats, a), rel=1e-13)


def test_log_pochhammer_excess_refuses_counts_that_are_not_whole():
    from ambppl.inference.modeling import log_pochhammer_excess

    # returned 2.28 and 0.28
    for bad in (-1, 1.5, np.nan):
        with pytest.raises(ValueError, match=r"^c must be non-negative whole numbers \(counts\)"):
            log_pochhammer_excess(1.0, bad)
    for bad in (0.0, -2.0, np.nan):
        with pytest.raises(ValueError, match=r"^a must be strictly positive concentrations"):
            log_pochhammer_excess(bad, 3)
    with pytest.raises(TypeError, match=r"^c must be array-like of numbers"):
        log_pochhammer_excess(1.0, "3")
    assert log_pochhammer_excess(1.0, [0, 3]).tolist() == pytest.approx([0.0, np.log(6.0)])


@pytest.mark.parametrize(
    ("n_categories", "error"),
    [(0, ValueError), (-1, ValueError), (2.5, TypeError), ("3", TypeError)],
)
def test_prior_concentration_refuses_a_bad_number_of_categories(n_categories, error):
    # 0 gave an empty array, the others numpy's errors
    with pytest.raises(error, match=r"^n_categories must be a positive integer, but got"):
        prior_concentration(1.0, n_categories)
