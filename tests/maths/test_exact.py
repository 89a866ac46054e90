"""Tests of ambppl.maths.exact: the exact two-class posterior of ambiguity and its sampling
route."""

from __future__ import annotations

import itertools
import json
import math
import os
import warnings
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
import scipy.stats as st
from _exact_laws import end_exponents, end_rate
from scipy.integrate import IntegrationWarning, quad, tanhsinh

from ambppl import amb, amb_modified, amb_old, ambiguity_posterior, dirichlet_mean, dirichlet_var
from ambppl.maths._exact_route import _old_moments
from ambppl.maths.exact import AmbiguityPosterior

REFERENCE = Path(__file__).parents[1] / "reference" / "exact_reference.json"
MEASURE_FN = {"amb": amb, "modified": amb_modified, "old": amb_old}
#: Accuracy targets of the brief (relative pdf error, absolute cdf error vs 50-digit mpmath).
PDF_RTOL = 1e-10
CDF_ATOL = 1e-12


def _integral(f, lo, hi):
    res = tanhsinh(f, lo, hi, atol=0.0, rtol=1e-13)
    assert np.all(res.success)
    return res.integral


# ------------------------------------------------------------------- mpmath reference values


@pytest.fixture(scope="module")
def reference():
    data = json.loads(REFERENCE.read_text())
    assert data["meta"]["dps"] == 50
    return data["values"]


def test_reference_accuracy(reference):
    """pdf relative error <= 1e-10 and cdf/sf absolute error <= 1e-12 against mpmath.

    Reference: tests/reference/exact_reference.py (mpmath, 50 digits, the paper's
    u-integral with ERRATA 1's limits, a formulation independent of the one in exact.py).
    The relative pdf error is measured in log space, |expm1(logpdf - log ref)|, so that
    densities below the float range (alpha ~ 1e4, far tails) are checked too.
    """
    groups: dict = {}
    for row in reference:
        groups.setdefault((tuple(row["alpha"]), row["measure"]), []).append(row)
    worst_pdf = (0.0, None)
    worst_cdf = (0.0, None)
    for (alpha, measure), rows in groups.items():
        post = ambiguity_posterior(alpha, measure)
        x = np.array([float(r["a"]) for r in rows])
        logpdf = post.logpdf(x)
        cdf = post.cdf(x)
        sf = post.sf(x)
        for i, r in enumerate(rows):
            ref = mp.mpf(r["pdf"])
            if ref == mp.inf:
                assert logpdf[i] == np.inf, (alpha, measure, r["a"])
                continue
            err = abs(math.expm1(float(logpdf[i] - mp.log(ref))))
            if err > worst_pdf[0]:
                worst_pdf = (err, (alpha, measure, r["a"]))
            for val, key in ((cdf[i], "cdf"), (sf[i], "sf")):
                e = abs(float(val - mp.mpf(r[key])))
                if e > worst_cdf[0]:
                    worst_cdf = (e, (alpha, measure, r["a"], key))
    assert worst_pdf[0] <= PDF_RTOL, worst_pdf
    assert worst_cdf[0] <= CDF_ATOL, worst_cdf


def test_reference_covers_the_brief(reference):
    """The stored reference spans alpha in [0.2, 1e4] and points near 0, 1/2 and 1."""
    alphas = np.array([r["alpha"] for r in reference])
    assert alphas.min() == 0.2 and alphas.max() == 1e4  # (1e4, 1e4, 1e4) is too slow in mpmath
    assert np.any(alphas % 1 != 0) and np.any(alphas < 1)
    a = np.array([float(r["a"]) for r in reference])
    assert a.min() < 1e-8 and a.max() > 1 - 1e-9 and np.any(np.abs(a - 0.5) < 1e-9)
    assert {r["measure"] for r in reference} == {"amb", "modified", "old"}


# ------------------------------------------------------------------- properties


@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
@pytest.mark.parametrize("alpha", [(6.0, 6.0, 6.0), (0.5, 0.5, 0.5), (0.3, 2.7, 0.45)])
def test_density_integrates_to_one(alpha, measure):
    """int_0^1 pdf = 1 to 1e-10 (scipy tanh-sinh, split at the kink a = 1/2).

    The modified density diverges like (1 - a)**-0.5 and floats cannot get closer to 1
    than 1e-16, so the last 1e-6 of the interval is taken from the exact sf instead.
    """
    post = ambiguity_posterior(alpha, measure)
    top = 1.0 - 1e-6
    total = _integral(post.pdf, 0.0, 0.5) + _integral(post.pdf, 0.5, top) + post.sf(top)
    assert abs(total - 1.0) <= 1e-10


@pytest.mark.parametrize(
    ("alpha", "measure"),
    [
        ((6.0, 1.0, 1.0), "amb"),
        ((6.0, 1.0, 1.0), "modified"),
        ((6.0, 1.0, 1.0), "old"),
        ((0.3, 2.7, 0.45), "amb"),
    ],
)
def test_agrees_with_dirichlet_draws(alpha, measure):
    """Kolmogorov-Smirnov against 10^6 Dirichlet draws at significance 0.001.

    The exact cdf is evaluated at every 250th order statistic (4000 points); by
    monotonicity of both distribution functions this bounds the KS statistic D of all 10^6
    draws from above, and the bound must stay below the 0.001 critical value of
    scipy.stats.kstwo (a 2000-draw subsample also goes through scipy.stats.kstest).
    """
    rng = np.random.default_rng(20261125)
    draws = np.sort(MEASURE_FN[measure](rng.dirichlet(alpha, 10**6)))
    n = draws.size
    post = ambiguity_posterior(alpha, measure)
    step = 250
    ranks = np.arange(step, n + 1, step)  # 1-based ranks of the grid draws
    f = post.cdf(draws[ranks - 1])
    upper = np.max(np.maximum((ranks[1:] - 1) / n - f[:-1], f[1:] - ranks[:-1] / n))
    upper = max(upper, (ranks[0] - 1) / n, f[0], 1.0 - f[-1])
    assert upper <= st.kstwo.isf(0.001, n)
    sub = rng.choice(draws, 2000, replace=False)
    assert st.kstest(sub, post.cdf).pvalue > 0.001


def test_jeffreys_amb_symmetric_and_modified_closed_form():
    """Dir(1/2, 1/2, 1/2): amb density symmetric about 1/2; modified cdf = 1 - sqrt(1 - a).

    Reference: the closed form 1 - sqrt(1 - a) (brief; V D^2 ~ U^2 for this prior).
    """
    t = np.array([1e-9, 1e-4, 0.01, 0.1, 0.3, 0.4999])
    post = ambiguity_posterior([0.5, 0.5, 0.5], "amb")
    above = 0.5 + t
    below = 1.0 - above  # exact (Sterbenz), so the two points are exactly symmetric
    np.testing.assert_allclose(post.pdf(above), post.pdf(below), rtol=1e-11)
    np.testing.assert_allclose(post.cdf(below), post.sf(above), rtol=0, atol=1e-13)
    a = np.array([1e-12, 1e-6, 0.1, 0.25, 0.5, 0.75, 0.99, 1 - 1e-9])
    mod = ambiguity_posterior([0.5, 0.5, 0.5], "modified")
    np.testing.assert_allclose(mod.cdf(a), 1.0 - np.sqrt(1.0 - a), rtol=0, atol=1e-13)
    np.testing.assert_allclose(mod.pdf(a), 0.5 / np.sqrt(1.0 - a), rtol=1e-10)
    assert mod.pdf(0.0) == pytest.approx(0.5, rel=1e-14)  # limit a -> 0 (closed form)
    assert mod.pdf(1.0) == np.inf


@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
@pytest.mark.parametrize(
    "alpha",
    [(6.0, 6.0, 6.0), (2.0, 3.0, 0.5), (0.5, 0.5, 0.5), (0.5, 0.5, 0.2), (0.3, 0.4, 2.0)],
)
def test_pdf_at_the_ends_is_the_limit(alpha, measure):
    """pdf(0) and pdf(1) are the one-sided limits, and the density approaches them at the
    rate derived in ``_exact_laws.end_rate`` (reference: that derivation, independent of the
    quadrature).

    eps**e with e > 0: limit 0; e < 0: limit inf, and the local slope d log p / d log eps
    between eps = 1e-10 and 1e-12 is e (the next term of the expansion is a power of eps
    higher by |a1 - a2| >= 0.1 at worst here, so the slope is within 0.01 of e and closer
    than between 1e-8 and 1e-10); e = 0: the finite limit equals the density at 1e-12 from
    the end. The log case (old at b = 1) grows by K log(100) per factor 100 in eps with
    K = f_V(0) f_D(0) = a_cs * 2 / B(a1, a2) (f_D(0) = f_pi(1/2) = 2**(2 - b) / B(a1, a2)).
    """
    post = ambiguity_posterior(alpha, measure)
    eps = np.array([1e-8, 1e-10, 1e-12])
    for end in (0.0, 1.0):
        x = eps if end == 0.0 else 1.0 - eps
        dist = np.abs(x - end)  # exact (Sterbenz): the eps the float point really has
        lim, p = float(post.pdf(end)), post.pdf(x)
        e, log = end_rate(alpha, measure, end)
        if log:
            assert lim == np.inf
            k = (
                alpha[2]
                * 2.0
                / math.exp(
                    math.lgamma(alpha[0]) + math.lgamma(alpha[1]) - math.lgamma(alpha[0] + alpha[1])
                )
            )
            growth = np.diff(p) / np.diff(np.log(1.0 / dist))
            np.testing.assert_allclose(growth, k, rtol=1e-3)
        elif e == 0.0:
            assert 0.0 < lim < np.inf
            assert lim == pytest.approx(float(p[-1]), rel=1e-5)
        else:
            assert lim == (0.0 if e > 0 else np.inf), (end, e, lim)
            slope = np.diff(np.log(p)) / np.diff(np.log(dist))
            assert abs(slope[-1] - e) < 0.01, (end, e, slope)
            assert abs(slope[-1] - e) <= abs(slope[0] - e) + 1e-9, (end, e, slope)


def test_asymptotics_errata_4():
    """ERRATA 4: p_amb(a) -> 0 as a -> 1 iff alpha_1 + alpha_2 > 1 (like eps**(b - 1));
    the modified density ~ eps**(-1/2); the amb density is infinite at 1/2 iff
    alpha_cs <= 1/2."""
    eps = np.array([1e-6, 1e-8, 1e-10])
    for alpha in [(1.5, 0.5, 2.0), (0.7, 0.6, 0.3), (3.0, 4.0, 0.5)]:
        b = alpha[0] + alpha[1]
        p = ambiguity_posterior(alpha, "amb").pdf(1.0 - eps)
        np.testing.assert_allclose(p[1:] / p[:-1], 0.01 ** (b - 1.0), rtol=1e-3)
        assert ambiguity_posterior(alpha, "amb").pdf(1.0) == 0.0
    slow = ambiguity_posterior((0.3, 0.4, 1.0), "amb")  # b = 0.7 < 1: diverges
    assert np.all(np.diff(slow.pdf(1.0 - eps)) > 0) and slow.pdf(1.0) == np.inf
    for alpha in [(6.0, 6.0, 6.0), (0.2, 3.0, 0.4)]:
        p = ambiguity_posterior(alpha, "modified").pdf(1.0 - eps)
        np.testing.assert_allclose(p * np.sqrt(eps) / (p[-1] * np.sqrt(eps[-1])), 1.0, rtol=1e-3)
    for c, infinite in [(0.5, True), (0.3, True), (0.6, False), (1.0, False)]:
        post = ambiguity_posterior((2.0, 3.0, c), "amb")
        assert (post.pdf(0.5) == np.inf) == infinite
        near = post.pdf(0.5 + np.array([1e-4, 1e-8, 1e-12]))
        assert np.all(np.isfinite(near))
        assert (near[-1] > 2 * near[0]) == infinite


@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
@pytest.mark.parametrize("alpha", [(6.0, 1.0, 1.0), (0.3, 2.7, 0.45), (150.5, 20.25, 3.3)])
def test_ppf_inverts_cdf(alpha, measure):
    """cdf(ppf(p)) = p and ppf(cdf(a)) = a to 1e-12 where the density is not tiny.

    (p stops at 0.999: the modified density diverges at 1, so its 1 - 1e-9 quantile lies
    within 1e-16 of 1 and is not a float below 1.)
    """
    post = ambiguity_posterior(alpha, measure)
    p = np.array([1e-9, 1e-3, 0.05, 0.3, 0.5, 0.7, 0.95, 0.999])
    x = post.ppf(p)
    np.testing.assert_allclose(post.cdf(x), p, rtol=0, atol=1e-12)
    np.testing.assert_allclose(post.sf(post.isf(p[1:])), p[1:], rtol=0, atol=1e-12)
    a = post.ppf(np.linspace(0.01, 0.99, 9))
    a = a[post.pdf(a) > 1e-2]
    np.testing.assert_allclose(post.ppf(post.cdf(a)), a, rtol=0, atol=1e-12)
    assert post.ppf(0.0) == 0.0 and post.ppf(1.0) == 1.0


@pytest.mark.parametrize(
    ("alpha", "measure"),
    [
        ((6.0, 6.0, 6.0), "amb"),
        ((6.0, 1.0, 1.0), "modified"),
        ((31.0, 1.0, 1.0), "old"),
        ((0.5, 0.5, 0.5), "modified"),
    ],
)
def test_hdi(alpha, measure):
    """The HDI holds the mass, is never longer than the equal-tailed interval, has equal
    density at interior ends and ends at 1 when the density rises to infinity there."""
    post = ambiguity_posterior(alpha, measure)
    lo, hi = post.hdi(0.9)
    elo, ehi = post.interval(0.9)
    assert float(post.cdf(hi) - post.cdf(lo)) == pytest.approx(0.9, abs=1e-10)
    assert hi - lo <= ehi - elo + 1e-12
    assert float(post.cdf(ehi) - post.cdf(elo)) == pytest.approx(0.9, abs=1e-10)
    if 0 < lo and hi < 1:
        assert float(post.pdf(lo)) == pytest.approx(float(post.pdf(hi)), rel=1e-6)
    if alpha == (0.5, 0.5, 0.5):  # density 1 / (2 sqrt(1 - a)) increases to infinity at 1
        assert hi == 1.0
        assert lo == pytest.approx(1.0 - 0.9**2, abs=1e-12)  # cdf = 1 - sqrt(1 - a)


@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
@pytest.mark.parametrize("alpha", [(6.0, 6.0, 6.0), (6.0, 1.0, 1.0), (0.3, 2.7, 0.45)])
def test_moments_agree_with_the_distribution(alpha, measure):
    """mean, var and std (closed forms: dirichlet_mean/dirichlet_var, _old_moments) equal the
    moments of the distribution: E A = int sf, E A^2 = 2 int a sf(a) da (reference: tanh-sinh
    integrals of the CDF route, which shares no formula with the moments). The old
    comparisons with dirichlet_mean/dirichlet_var themselves were dropped: for "exact"
    mean() and var() are those functions, so they compared a function with itself."""
    post = ambiguity_posterior(alpha, measure)
    m1 = _integral(post.sf, 0.0, 0.5) + _integral(post.sf, 0.5, 1.0)

    def second(a):
        return 2.0 * a * post.sf(a)

    m2 = _integral(second, 0.0, 0.5) + _integral(second, 0.5, 1.0)
    assert float(post.mean()) == pytest.approx(m1, rel=1e-10)
    assert float(post.var()) == pytest.approx(m2 - m1 * m1, rel=1e-8)
    assert float(post.std()) == pytest.approx(math.sqrt(m2 - m1 * m1), rel=1e-8)
    # the median holds half the mass of the density (reference: tanh-sinh integral of the pdf
    # route, split at 1/2 where the amb density may diverge; median() inverts the CDF route)
    med = float(post.median())
    cuts = [0.0, *([0.5] if med > 0.5 else []), med]
    mass = sum(_integral(post.pdf, lo, hi) for lo, hi in itertools.pairwise(cuts))
    assert mass == pytest.approx(0.5, abs=1e-9)


def test_old_moments_match_dirichlet_mean():
    """The C = 2 closed form for amb_old agrees with moments.dirichlet_mean (ERRATA 7)."""
    alpha = np.array([[0.2, 1e4, 2.5], [3.0, 3.0, 0.5], [150.5, 20.25, 3.3]])
    mean, _ = _old_moments(alpha)
    np.testing.assert_allclose(mean, dirichlet_mean(alpha, "old"), rtol=1e-12)


# ------------------------------------------------------------------- vectorization, rvs


def test_batch_broadcasting():
    """alpha (2, 3) with x (4, 1) gives (4, 2), equal to the per-row answers."""
    alpha = np.array([[6.0, 1.0, 1.0], [0.3, 2.7, 0.45]])
    post = ambiguity_posterior(alpha, "amb")
    x = np.array([0.1, 0.4, 0.5, 0.9])[:, None]
    assert post.batch_shape == (2,)
    for method in ("pdf", "cdf", "sf", "logpdf"):
        got = getattr(post, method)(x)
        assert got.shape == (4, 2)
        for j in range(2):
            one = getattr(ambiguity_posterior(alpha[j], "amb"), method)(x[:, 0])
            np.testing.assert_array_equal(got[:, j], one)
    assert post.mean().shape == (2,) and post.ppf(0.5).shape == (2,)
    lo, hi = post.hdi(0.5)
    assert lo.shape == (2,) and np.all(lo < hi)
    assert isinstance(post, AmbiguityPosterior) and "method='exact'" in repr(post)


def test_rvs_exact_and_seeded():
    """rvs draws exactly (two Beta variables); seeded; shape size + batch_shape; the
    sample mean is within 5 standard errors of the closed-form mean."""
    post = ambiguity_posterior([[6.0, 1.0, 1.0], [2.0, 2.0, 9.0]], "modified")
    draws = post.rvs(20000, random_state=3)
    assert draws.shape == (20000, 2)
    np.testing.assert_array_equal(draws, post.rvs(20000, random_state=3))
    se = draws.std(axis=0, ddof=1) / math.sqrt(draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - post.mean()) <= 5 * se)
    assert np.all((draws >= 0) & (draws <= 1))


def test_rvs_shapes_and_the_dirichlet_branch():
    """rvs for one alpha and a tuple size; with more than two proper categories (a batch of
    three alphas, so that no axis but the last can pass for the category axis) the draws'
    means agree with the closed forms within 5 standard errors (reference: dirichlet_mean,
    which shares no code with the draws)."""
    one = ambiguity_posterior([6.0, 1.0, 1.0], "old")
    assert one.rvs(random_state=1).shape == ()
    assert one.rvs((4, 5), random_state=1).shape == (4, 5)
    alpha = np.array(
        [[3.0, 2.0, 1.0, 0.5, 1.5], [1.0, 1.0, 1.0, 1.0, 1.0], [9.0, 1.0, 2.0, 1.0, 4.0]]
    )
    for measure in ("amb", "modified"):
        post = ambiguity_posterior(alpha, measure, n_draws=1000, random_seed=2)
        draws = post.rvs((200, 100), random_state=5)
        assert draws.shape == (200, 100, 3)
        flat = draws.reshape(-1, 3)
        se = flat.std(axis=0, ddof=1) / math.sqrt(flat.shape[0])
        assert np.all(np.abs(flat.mean(axis=0) - dirichlet_mean(alpha, measure)) <= 5 * se)


def test_repr_hdi_default_and_the_whole_mass():
    """repr shows one alpha and the shape of a batch; hdi() is hdi(0.94) (ArviZ's default,
    as documented) and holds 0.94 of the mass by the CDF; prob = confidence = 1 is allowed
    and gives the whole support [0, 1] (reference: the support of every measure)."""
    one = ambiguity_posterior([6.0, 1.0, 1.0])
    assert repr(one) == "AmbiguityPosterior(alpha=[6. 1. 1.], measure='amb', method='exact')"
    batch = ambiguity_posterior([[6.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    assert "alpha=array of shape (2, 3)" in repr(batch)
    lo, hi = one.hdi()
    assert (lo, hi) == one.hdi(0.94)
    for value in (one.mean(), one.var(), lo, one.cdf(0.3)):  # numpy scalars, not 0-d arrays
        assert np.ndim(value) == 0 and not isinstance(value, np.ndarray)
    assert float(one.cdf(hi) - one.cdf(lo)) == pytest.approx(0.94, abs=1e-10)
    assert tuple(map(float, one.hdi(1.0))) == (0.0, 1.0)
    assert tuple(map(float, one.interval(1.0))) == (0.0, 1.0)


def test_sampling_hdi_holds_ceil_prob_n_draws():
    """The sampling route's HDI is the shortest run of ceil(prob n) sorted draws: it holds
    exactly that many draws (reference: counting the draws) and no shorter run does."""
    post = ambiguity_posterior([3.0, 2.0, 1.0, 1.0, 1.5], n_draws=1001, random_seed=3)
    draws = np.sort(post._draws[0])
    lo, hi = post.hdi(0.9)
    k = math.ceil(0.9 * 1001)
    assert int(np.sum((draws >= lo) & (draws <= hi))) == k
    assert hi - lo == pytest.approx(np.min(draws[k - 1 :] - draws[: 1001 - k + 1]), abs=0)


def test_sampling_pdf_is_the_histogram_of_the_right_bin():
    """The sampling route's pdf at a point is the density of the bin holding it. Reference: the
    exact density (C = 2) averaged over that bin, i.e. the CDF difference over the bin width;
    tolerance 5 binomial standard errors of the bin's share of the draws."""
    alpha = (6.0, 6.0, 6.0)
    exact = ambiguity_posterior(alpha, "amb")
    mc = ambiguity_posterior(alpha, "amb", method="sampling", n_draws=200_000, random_seed=4)
    width = 1.0 / 256
    k = np.arange(100, 200, 7)  # bins on the rising and falling flanks of the density
    x = (k + 0.3) * width
    share = np.asarray(exact.cdf((k + 1) * width) - exact.cdf(k * width))
    se = np.sqrt(share * (1 - share) / 200_000) / width
    assert np.all(np.abs(mc.pdf(x) - share / width) <= 5 * se + 1e-12)


def test_sampling_pdf_at_the_ends_of_the_support():
    """x = 1 lies in the last bin (numpy's histogram closes its right edge); outside [0, 1]
    the density is 0. Reference for the last bin: the route's empirical CDF (sorted draws,
    not the histogram), (1 - F(1 - w)) / w with w = 1/256."""
    mc = ambiguity_posterior(
        (1.0, 1.0, 30.0), "amb", method="sampling", n_draws=20_000, random_seed=5
    )
    w = 1.0 / 256
    last = (1.0 - float(mc.cdf(1.0 - w))) / w
    assert last > 0  # q_cs ~ Beta(30, 2): amb is near 1
    np.testing.assert_allclose(mc.pdf([1.0, 1.0 - w / 2]), [last, last], rtol=1e-12)
    np.testing.assert_array_equal(mc.pdf([-0.2, 1.3]), [0.0, 0.0])


def test_sampling_cdf_counts_the_draws_equal_to_x():
    """The sampling route's CDF is P(X <= x) over the draws (right-continuous): at the
    smallest draw (ppf(0), numpy's quantile at 0) it is 1/n, at the largest (ppf(1)) it is 1.
    Reference: the definition of a distribution function."""
    n = 5000
    mc = ambiguity_posterior(
        (3.0, 2.0, 1.0, 1.5), "amb", method="sampling", n_draws=n, random_seed=12
    )
    assert float(mc.cdf(mc.ppf(0.0))) == 1 / n
    assert float(mc.cdf(mc.ppf(1.0))) == 1.0


def test_one_quadrature_per_distinct_point_and_alpha(monkeypatch):
    """sf(0.4) of 40 items with 2 distinct alphas evaluates the exact route at 2 (x, alpha)
    pairs, not 40 (the documented cost of _pairwise); the values equal item-by-item ones."""
    import importlib

    exact_module = importlib.import_module("ambppl.maths.exact")
    real = exact_module._exact_cdf_sf
    sizes = []

    def counting(measure, x, alpha, *args, **kwargs):
        sizes.append(np.size(x))
        return real(measure, x, alpha, *args, **kwargs)

    alphas = np.array([[3.0, 2.0, 1.0], [1.0, 4.0, 2.0]] * 20)
    post = ambiguity_posterior(alphas, "amb")
    monkeypatch.setattr(exact_module, "_exact_cdf_sf", counting)
    got = post.sf(0.4)
    assert sizes == [2]
    # two equal alphas are one distribution: one evaluation for both
    sizes.clear()
    twin = ambiguity_posterior(alphas[[0, 2]], "amb").sf(0.4)
    assert sizes == [1] and twin[0] == twin[1]
    monkeypatch.setattr(exact_module, "_exact_cdf_sf", real)
    one = [float(ambiguity_posterior(a, "amb").sf(0.4)) for a in alphas[:2]]
    np.testing.assert_allclose(got, one * 20, rtol=1e-14)


# ------------------------------------------------------------------- sampling route


def test_sampling_route_for_more_categories():
    """C = 4: Monte Carlo from Dirichlet draws; tolerances from the Monte Carlo error."""
    alpha = [3.0, 2.0, 1.0, 0.5, 1.5]
    post = ambiguity_posterior(alpha, "amb", n_draws=40000, random_seed=7)
    assert post.method == "sampling" and post.n_draws == 40000
    exact_mean = float(dirichlet_mean(alpha))
    assert abs(float(post.mean()) - exact_mean) <= 5 * float(post.mcse)
    assert float(post.var()) == pytest.approx(float(dirichlet_var(alpha)), rel=0.05)
    # the cdf at the exact mean: binomial standard error
    f = float(post.cdf(exact_mean))
    draws = amb(np.random.default_rng(8).dirichlet(alpha, 40000))
    f_indep = float(np.mean(draws <= exact_mean))
    assert abs(f - f_indep) <= 5 * math.sqrt(2 * 0.25 / 40000)
    lo, hi = post.hdi(0.9)
    elo, ehi = post.interval(0.9)
    assert hi - lo <= ehi - elo and lo < exact_mean < hi
    x = np.linspace(0.0, 1.0, 2001)
    assert float(np.sum(post.pdf(x[:-1])) * (x[1] - x[0])) == pytest.approx(1.0, abs=1e-3)
    # the median against independent draws: binomial standard error of the fraction below
    assert abs(float(np.mean(draws <= float(post.median()))) - 0.5) <= 5 * math.sqrt(
        2 * 0.25 / 40000
    )
    same = ambiguity_posterior(alpha, "amb", n_draws=40000, random_seed=7)
    assert float(same.mean()) == float(post.mean())


def test_sampling_route_on_request_for_two_classes():
    """method="sampling" works for C = 2 too and agrees with the exact route within MC error."""
    exact = ambiguity_posterior([6.0, 1.0, 1.0], "old")
    mc = ambiguity_posterior(
        [6.0, 1.0, 1.0], "old", method="sampling", n_draws=50000, random_seed=1
    )
    assert mc.method == "sampling" and exact.method == "exact"
    assert abs(float(mc.mean() - exact.mean())) <= 5 * float(mc.mcse)
    q = np.array([0.1, 0.3, 0.5])
    f = exact.cdf(q)
    assert np.all(np.abs(mc.cdf(q) - f) <= 5 * np.sqrt(f * (1 - f) / 50000))


# ------------------------------------------------------------------- bad input


def test_points_outside_the_support():
    post = ambiguity_posterior([2.0, 3.0, 4.0])
    x = np.array([-0.5, 1.5, np.nan])
    assert post.pdf(x)[:2].tolist() == [0.0, 0.0] and np.isnan(post.pdf(x)[2])
    assert post.cdf(x)[:2].tolist() == [0.0, 1.0]
    assert post.sf(x)[:2].tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"alpha": [1.0, 2.0]}, ValueError, "at least 3 entries"),
        ({"alpha": [1.0, 2.0, 3.0, 4.0], "method": "exact"}, ValueError, "exactly 3 entries"),
        ({"alpha": [1.0, 0.0, 3.0]}, ValueError, "strictly positive"),
        ({"alpha": [1.0, -2.0, 3.0]}, ValueError, "strictly positive"),
        (
            {"alpha": [1.0, 2.0, 3.0], "measure": "entropy"},
            ValueError,
            "measure must be one of 'amb', 'modified', 'old'",
        ),
        (
            {"alpha": [1.0, 2.0, 3.0], "method": "mcmc"},
            ValueError,
            "method must be one of 'auto', 'exact', 'sampling'",
        ),
        ({"alpha": [1.0, 2.0, 3.0], "cant_solve": None}, ValueError, "cant_solve must be"),
        ({"alpha": [1.0, 2.0, 3.0], "cant_solve": 5}, ValueError, "cant_solve must be"),
        ({"alpha": ["a", "b", "c"]}, TypeError, "alpha must be array-like of numbers"),
        ({"alpha": [1.0, 2.0, 3.0, 4.0], "n_draws": 0}, ValueError, "n_draws must be"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        ambiguity_posterior(**kwargs)


@pytest.mark.parametrize("method", ["sampling", "exact"])
def test_bad_random_seed_names_the_argument(method):
    # numpy's "SeedSequence expects int or sequence of ints" named no argument
    with pytest.raises(
        TypeError,
        match=r"random_seed must be a non-negative int, a numpy.random.Generator or None, "
        r"but got 'x'",
    ):
        ambiguity_posterior([1.0, 2.0, 3.0], method=method, n_draws=100, random_seed="x")
    with pytest.raises(ValueError, match=r"random_seed must be a non-negative int .*got -1"):
        ambiguity_posterior([1.0, 2.0, 3.0], method=method, n_draws=100, random_seed=-1)
    rng = np.random.default_rng(0)
    post = ambiguity_posterior([1.0, 2.0, 3.0], method=method, n_draws=100, random_seed=rng)
    assert post.method == method


def test_posterior_class_documents_its_constructor():
    doc = AmbiguityPosterior.__doc__
    params, attrs = doc.split("Parameters\n    ----------")[1].split("Attributes\n    ----------")

    def names(text):
        return {line.split(" : ")[0].strip() for line in text.splitlines() if " : " in line}

    assert names(params) == {"alpha", "measure", "method", "n_draws", "random_seed", "n_bins"}
    assert names(attrs) == {"alpha", "measure", "method", "batch_shape", "n_draws", "mcse"}


def test_bad_method_arguments():
    post = ambiguity_posterior([2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"q must be probabilities in \[0, 1\], but got 1.5"):
        post.ppf(1.5)
    with pytest.raises(ValueError, match="q must be probabilities"):
        post.isf(-0.1)
    with pytest.raises(ValueError, match=r"prob must be in \(0, 1\]"):
        post.hdi(0.0)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\]"):
        post.interval(1.5)
    batch = ambiguity_posterior([[2.0, 3.0, 4.0], [1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=r"x must broadcast against the batch shape \(2,\)"):
        batch.pdf([0.1, 0.2, 0.3])
    for method in (batch.cdf, batch.sf):
        with pytest.raises(ValueError, match=r"^x must broadcast against the batch shape"):
            method([0.1, 0.2, 0.3])


def test_cant_solve_position_is_moved_last():
    """cant_solve=0 reads the first entry as "can't solve"."""
    a = ambiguity_posterior([4.0, 2.0, 3.0], cant_solve=0)
    b = ambiguity_posterior([2.0, 3.0, 4.0])
    assert float(a.cdf(0.6)) == float(b.cdf(0.6))


# mpmath, 50 digits (tests/reference/exact_reference.py's ``reference`` at these exact floats):
# the amb pdf of Dir(6, 1, 1). Two quadrature levels once agreed here by coincidence (4e-7)
# while the value was off by 1e-6; levels now have to agree to the tolerance itself.
@pytest.mark.parametrize(
    ("a", "expected"),
    [(0.44124, 1.761822507375796), (0.44125000000000003, 1.761787098841224)],
)
def test_pdf_where_two_levels_agreed_by_coincidence(a, expected):
    post = ambiguity_posterior([6.0, 1.0, 1.0], "amb")
    assert float(post.pdf(a)) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("alpha", [(6.0, 1.0, 1.0), (6.0, 6.0, 6.0), (0.3, 2.7, 0.45)])
@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
def test_cdf_increments_equal_the_integrated_pdf(alpha, measure):
    # Independent route: 60-point Gauss-Legendre on short pieces where the pdf is smooth
    # (away from 0, 1/2 and 1). With pdf relative error <= 1e-10 the integral of a piece of
    # mass m is good to ~1e-10 m; the CDF claims 1e-12 absolute.
    post = ambiguity_posterior(alpha, measure)
    nodes, weights = np.polynomial.legendre.leggauss(60)
    edges = np.concatenate([np.linspace(0.02, 0.48, 24), np.linspace(0.52, 0.97, 24)])
    for lo, hi in itertools.pairwise(edges):
        if lo < 0.5 < hi:
            continue
        x = (hi - lo) / 2 * nodes + (hi + lo) / 2
        integral = (hi - lo) / 2 * np.sum(weights * post.pdf(x))
        increment = float(post.cdf(hi) - post.cdf(lo))
        assert abs(integral - increment) <= 1e-10 * integral + 2e-12, (lo, hi)


def _old_logpdf_by_quad(alpha, a):
    """Independent log density of amb0: the paper's integral over u = q_cs (ERRATA 7's
    band xi = (a - u) / (2 (1 - u)), d xi / da = 1 / (2 (1 - u))), scaled by its maximum
    so that it stays in float range, by ``scipy.integrate.quad`` with a break point at the
    peak; Beta normalizers from mpmath (``scipy.special.betaln`` is off by ~5e-11 at 1e4).
    Returns (log pdf, quad's relative error estimate)."""
    a1, a2, c = alpha
    b = a1 + a2
    lbu, lbp = float(mp.log(mp.beta(c, b))), float(mp.log(mp.beta(a1, a2)))

    def logf(u):
        xi = (a - u) / (2.0 * (1.0 - u))
        pair = np.logaddexp(
            (a1 - 1) * np.log(xi) + (a2 - 1) * np.log1p(-xi),
            (a2 - 1) * np.log(xi) + (a1 - 1) * np.log1p(-xi),
        )
        return (
            (c - 1) * np.log(u)
            + (b - 1) * np.log1p(-u)
            - lbu
            + pair
            - lbp
            - np.log(2.0 * (1.0 - u))
        )

    grid = np.linspace(0.0, a, 200_001)[1:-1]
    vals = logf(grid)
    top = int(np.argmax(vals))
    with warnings.catch_warnings():
        # quad reports round-off once it is at machine precision; its estimate is checked
        warnings.simplefilter("ignore", IntegrationWarning)
        val, err = quad(
            lambda u: math.exp(logf(u) - vals[top]),
            0.0,
            a,
            points=[grid[top]],
            epsabs=0.0,
            epsrel=1.2e-14,
            limit=1000,
        )
    return vals[top] + math.log(val), err / val


@pytest.mark.parametrize(
    ("alpha", "a"),
    [
        ((1e4, 1e4, 1e4), 0.3),  # log pdf = -14435.5
        ((1e4, 1e4, 1e4), 0.7092682926829268),  # -1962.2
        ((1e4, 1e4, 1e4), 0.99),
        ((150.5, 20.25, 3.3), 0.2),
        ((150.5, 20.25, 3.3), 0.6),
        ((2.5, 2.5, 300.0), 0.5),  # -197.1
    ],
)
def test_densities_below_the_float_range_match_an_independent_quadrature(alpha, a):
    """Concentrated posteriors have densities far below 1e-308 over most of (0, 1); they are
    returned in log space with the same relative accuracy. Regression: the quadrature's
    absolute-tolerance test compared exp(log value) with 0, which underflows, and stopped
    every such integral after two levels (errors up to 4e-4 at alpha = (1e4, 1e4, 1e4))."""
    ref, quad_err = _old_logpdf_by_quad(alpha, a)
    assert quad_err < 1e-12  # the independent value is itself good to 1e-12
    got = float(ambiguity_posterior(alpha, "old").logpdf(a))
    # relative density error, plus the rounding of a log of size |ref| (ulp ~ 2e-16 |ref|)
    assert abs(math.expm1(got - ref)) <= PDF_RTOL + 4e-16 * abs(ref)


def test_values_do_not_move_when_the_quadrature_is_tightened(monkeypatch):
    """Random alphas (log-uniform in [0.2, 1e4], seeded) at random points: the defaults
    agree with a 1000x tighter tolerance, two more levels and an exact peak search to the
    accuracy claimed (pdf 1e-10 relative, cdf/sf 1e-12 absolute). Regression: a stopping
    rule that trusted error ~ diff**2 moved by 1.6e-7 (modified pdf, alpha = (2.5, 2.5,
    300)) and an underflowing absolute test by 4e-4 (alpha ~ 1e4)."""
    import ambppl.maths._exact_route as exact_mod
    import ambppl.maths._quadrature as quad_mod

    rng = np.random.default_rng(20261126)
    alphas = np.exp(rng.uniform(math.log(0.2), math.log(1e4), (12, 3)))
    x = np.sort(np.concatenate([rng.uniform(0.0, 1.0, 40), [1e-9, 0.5, 0.5 + 1e-9, 1 - 1e-9]]))

    def values():
        out = []
        for alpha in alphas:
            for measure in ("amb", "modified", "old"):
                post = ambiguity_posterior(alpha, measure)
                out.append(np.stack([post.logpdf(x), post.cdf(x), post.sf(x)]))
        return np.array(out)

    default = values()
    monkeypatch.setattr(quad_mod, "PEAK_ITERS", 80)
    monkeypatch.setattr(quad_mod, "PEAK_DROP", 1e-9)
    monkeypatch.setattr(quad_mod, "LEVEL_MAX", quad_mod.LEVEL_MAX + 2)
    monkeypatch.setattr(exact_mod, "RTOL", {k: v / 1000 for k, v in exact_mod.RTOL.items()})
    with warnings.catch_warnings():
        # a few tightened integrals cannot reach 1e-15 in float64 and say so
        warnings.simplefilter("ignore", RuntimeWarning)
        tight = values()
    same = default[:, 0] == tight[:, 0]  # equal infinities included
    with np.errstate(invalid="ignore"):  # inf - inf where same
        log_diff = np.where(same, 0.0, default[:, 0] - tight[:, 0])
    # relative density error, plus the rounding of a log of size |log pdf|
    assert np.all(np.abs(np.expm1(log_diff)) <= PDF_RTOL + 4e-16 * np.abs(tight[:, 0]))
    assert np.max(np.abs(default[:, 1:] - tight[:, 1:])) <= CDF_ATOL


def _child_cdf(x):
    return ambiguity_posterior([0.3, 2.7, 0.45], "amb").cdf(x)


@pytest.mark.skipif(
    "fork" not in __import__("multiprocessing").get_all_start_methods(), reason="no fork"
)
def test_cdf_in_a_forked_child_after_the_parent_used_its_threads():
    """The incomplete beta functions run on a thread pool; a child forked after the parent
    started it must get a pool of its own, not wait forever on the parent's dead threads."""
    import multiprocessing

    from ambppl.internal import threads as _threads

    x = np.linspace(0.01, 0.99, 512)  # enough nodes for the threaded path
    parent = _child_cdf(x)
    assert os.getpid() in _threads._POOLS
    with warnings.catch_warnings():
        # Python warns that forking a threaded process may deadlock: the hazard tested here
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            child = pool.apply_async(_child_cdf, (x,)).get(timeout=120)
    np.testing.assert_array_equal(child, parent)


@pytest.mark.parametrize(
    ("b", "c"),
    [
        (3.0, 0.45),
        (1.0, 0.2),
        (16.0, 7.3),
        (2.5, 4.0),
        (0.3, 1.0),
        (12.0, 6.0),
        (5.0, 300.0),
        (170.75, 3.0),
    ],
)
def test_finite_sum_beta_tails_match_mpmath(b, c):
    """The Beta(b, c) tails used where b or c is a small integer (finite sums, and their
    complements where those are >= 1e-2) against mpmath's regularized incomplete beta at
    30 digits: relative error <= 1e-13 wherever the sums are used (plus the rounding of
    a logarithm of size |log P|, for tails down to 1e-3000)."""
    from ambppl.maths._exact_kernels import _log_tail_integer

    rng = np.random.default_rng(5)
    v = np.sort(np.concatenate([rng.uniform(0, 1, 20), 10.0 ** rng.uniform(-12, -1, 10)]))
    v = np.concatenate([v, 1.0 - 10.0 ** rng.uniform(-12, -1, 10)])
    log_v, log_1mv = np.log(v), np.log1p(-v)
    used = 0
    for kind in ("cdf", "sf"):
        out, done = _log_tail_integer(kind == "cdf", b, c, log_v, log_1mv)
        used += int(done.sum())
        for i in np.flatnonzero(done):
            with mp.workdps(30):
                x = mp.mpf(float(v[i]))
                ref = (
                    mp.betainc(c, b, 0, 1 - x, regularized=True)  # P(V >= v)
                    if kind == "cdf"
                    else mp.betainc(b, c, 0, x, regularized=True)  # P(V < v)
                )
                err = abs(float(mp.exp(out[i]) / ref - 1))
                assert err <= 1e-13 + 4e-16 * abs(float(mp.log(ref))), (kind, v[i], err)
    assert used > 0  # every (b, c) here has a small integer parameter


def test_a_minor_piece_does_not_stop_on_an_early_level(monkeypatch):
    """Regression: the far flank of the amb density at this alpha holds 1e-8 of the mass;
    it was allowed to stop once its level-to-level change times that share was 1e-12, but
    at level 2 the change understated its error 60x, and the density was off by 6e-11.
    Reference: the same integral with 1000x tighter tolerances, more levels and no flank
    cuts (a different set of pieces); mpmath's own error estimate there is too large
    (6e-4) to serve."""
    import ambppl.maths._exact_route as exact_mod
    import ambppl.maths._quadrature as quad_mod

    alpha, a = (1176.4036, 2380.15006, 0.805504236), 0.3152102819233672
    got = float(ambiguity_posterior(alpha, "amb").logpdf(a))
    monkeypatch.setattr(quad_mod, "PEAK_SIDE", math.inf)
    monkeypatch.setattr(quad_mod, "LEVEL_MAX", quad_mod.LEVEL_MAX + 2)
    monkeypatch.setattr(exact_mod, "RTOL", {k: v / 1000 for k, v in exact_mod.RTOL.items()})
    ref = float(ambiguity_posterior(alpha, "amb").logpdf(a))
    assert ref == pytest.approx(-175.075921171443, abs=1e-12)
    assert abs(math.expm1(got - ref)) <= 1e-12


def test_far_tail_probes_skip_points_without_changing_the_cdf(monkeypatch):
    """One alpha on a fine grid: every TAIL_PROBE_STEP-th point of each tail is integrated
    first, and points further out than a probe whose tail is below TAIL_TINY are set to 0
    (``ambppl.maths._exact_route._exact_cdf_sf``). The result equals the same points taken eight
    at a time (too few to probe) to the CDF target, and the probes did skip points."""
    import ambppl.maths._exact_route as route

    integrated = []
    real = route._log_integral

    def counting(measure, kind, a, prm):
        integrated.append(a.size)
        return real(measure, kind, a, prm)

    grid = np.linspace(0.0, 1.0, 514)[1:-1]
    post = ambiguity_posterior((1e4, 1e4, 1e4), "amb")
    monkeypatch.setattr(route, "_log_integral", counting)
    cdf = post.cdf(grid)
    assert sum(integrated) < grid.size / 4  # most points lie far out in a tail here
    sf = post.sf(grid)
    few = [np.stack([post.cdf(g), post.sf(g)]) for g in np.split(grid, grid.size // 8)]
    direct = np.concatenate(few, axis=1)
    assert np.max(np.abs(np.stack([cdf, sf]) - direct)) <= CDF_ATOL


def test_log_beta_constants_match_mpmath():
    """``_betaln`` (the normalizers of every density) within 4 ulps of max(1, |log B|) of
    mpmath's log Beta at 40 digits, including pairs where ``scipy.special.betaln`` is off by
    100-7300 ulps: (5, 300) gave every density of Dir(2.5, 2.5, 300) a 4.4e-13 relative
    error, the worst in the mpmath reference before it was fixed."""
    from ambppl.maths._exact_route import _betaln

    rng = np.random.default_rng(11)
    pairs = np.exp(rng.uniform(math.log(0.2), math.log(3e4), (200, 2)))
    known = [
        (5.0, 300.0),
        (20.0, 900.0),
        (968.06, 0.29),
        (0.364, 74.119),
        (2e4, 1e4),
        (0.2, 1e4),
        (0.3, 0.4),
        (9.9, 0.3),
        (10.0, 10.0),
        (2.5, 2.5),
    ]
    pairs = np.vstack([pairs, known])
    got = _betaln(pairs[:, 0], pairs[:, 1])
    with mp.workdps(40):
        ref = np.array([float(mp.log(mp.beta(a, b))) for a, b in pairs])
    ulps = np.abs(got - ref) / (np.maximum(1.0, np.abs(ref)) * np.finfo(float).eps)
    # 18 ulps where both arguments are below 10 (scipy's own betaln there: 9)
    small = np.maximum(pairs[:, 0], pairs[:, 1]) < 10.0
    assert np.all(ulps[~small] <= 4.0), (pairs[~small][np.argmax(ulps[~small])], ulps.max())
    assert np.all(ulps[small] <= 20.0)


def _amb_integrand_mp(alpha, a, dl, dr, above):
    """log of the amb pdf integrand at one node, in mpmath (40 digits), from the paper's
    factors: (f_pi(1/2 - r) + f_pi(1/2 + r)) f_V(V) / H times dr/dw, with r = hs sinh w
    (a > 1/2, hs = sqrt(2a - 1)/2) or r0 cosh w (a < 1/2); the node is placed from its
    nearer end of [0, W], as the quadrature hands both distances exactly."""
    with mp.workdps(40):
        a1, a2, c = (mp.mpf(float(v)) for v in alpha)
        am = mp.mpf(float(a))
        e = 2 * am - 1
        half = mp.mpf(1) / 2
        if above:
            h = mp.sqrt(e) / 2
            big_w = mp.asinh(1 / mp.sqrt(e))
            fn, dfn = mp.sinh, mp.cosh
        else:
            h = mp.sqrt(-e) / 2
            big_w = mp.asinh(mp.sqrt(2 * am / (1 - 2 * am)))
            fn, dfn = mp.cosh, mp.sinh
        if dl <= dr:
            w = mp.mpf(float(dl))
            x = half - h * fn(w)
        else:
            w = big_w - mp.mpf(float(dr))
            x = h * (fn(big_w) - fn(w))  # 1/2 - r, exact near the end where pi -> 0 or 1
        r = half - x
        hh = (1 + 4 * r * r) / 2
        v = (1 - am) / hh

        def log_beta_pdf(t, p, q):
            return (p - 1) * mp.log(t) + (q - 1) * mp.log(1 - t) - mp.log(mp.beta(p, q))

        lo, hi = log_beta_pdf(x, a1, a2), log_beta_pdf(1 - x, a1, a2)
        pair = max(lo, hi) + mp.log(1 + mp.exp(-abs(lo - hi)))
        value = pair + log_beta_pdf(v, a1 + a2, c) - mp.log(hh) + mp.log(h * dfn(w))
        # the size of each logarithm times its exponent: each log is good to a few ulps of
        # itself (log(1 - x) ~ -x where x is tiny), so this scales the attainable error
        t1, t2 = (x, 1 - x) if lo >= hi else (1 - x, x)  # the dominant Beta term
        scale = abs(a1 - 1) * abs(mp.log(t1)) + abs(a2 - 1) * abs(mp.log(t2))
        scale += abs(a1 + a2 - 1) * abs(mp.log(v)) + abs(c - 1) * abs(mp.log(1 - v))
        scale += abs(mp.log(mp.beta(a1, a2))) + abs(mp.log(mp.beta(a1 + a2, c)))  # normalizers
        return float(value), float(scale)


@pytest.mark.parametrize(
    "alpha",
    [(0.3, 2.7, 0.45), (1e4, 0.2, 0.5), (150.5, 20.25, 3.3), (1e4, 1e4, 1e4), (2.5, 2.5, 300.0)],
)
def test_amb_integrand_at_single_nodes_matches_mpmath(alpha):
    """The amb pdf integrands (``ambppl.maths._exact_kernels.amb_above``/``amb_below``) node by
    node, at distances from 1e-12 to 1 - 1e-12 of the interval, on both sides of 1/2, against
    mpmath: within 4 ulps of each logarithm times its exponent (|alpha_i - 1| |log t|, so
    that ``log(1 - x) ~ -x`` must be exact for tiny x), of the log normalizers and of
    |log f|. Guards the
    forms of ``1/2 -+ r``: ``log1p(2 r)`` where ``pi`` is near 0 or 1 was 1e4 times less
    accurate (it cost 1e-13 in the cdf of Dir(0.2, 1e4, 2.5) at 2.9e-4), and ``1/2 - r`` by
    subtraction loses all digits next to the end of the interval."""
    from ambppl.maths import _exact_kernels as kern
    from ambppl.maths._exact_route import _amb_params, _params

    fracs = np.array([1e-12, 1e-6, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-6, 1 - 1e-12])
    eps = np.finfo(float).eps
    for a in (0.05, 0.3, 0.49, 0.51, 0.7, 0.99):
        (above, w_above), (below, w_below), common = _amb_params(np.array([a]))
        extra, big_w, kernel = (
            (above, w_above, kern.amb_above) if a > 0.5 else (below, w_below, kern.amb_below)
        )
        p = {k: v[0] for k, v in {**_params(np.array([alpha])), **extra, **common}.items()}
        dl = big_w[0] * fracs
        dr = big_w[0] * (1.0 - fracs)
        with np.errstate(all="ignore"):
            got = kernel("pdf")(p, dl, dr)
        for i in range(fracs.size):
            ref, scale = _amb_integrand_mp(alpha, a, dl[i], dr[i], a > 0.5)
            tol = 4 * eps * (scale + abs(ref) + 20.0)
            assert abs(got[i] - ref) <= tol, (a, fracs[i], got[i] - ref, tol)


# ------------------------------------------------------------------------------ equal alphas


def _with_repeats(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct alpha rows and a batch (4 x 6) that repeats them, in random order."""
    distinct = np.array([rng.integers(1, 7, size=k) + 0.5 for _ in range(5)])
    distinct = np.unique(distinct, axis=0)
    picks = rng.integers(0, len(distinct), size=24)
    return distinct, distinct[picks].reshape(4, 6, k)


def test_equal_alphas_computed_once_give_each_items_values(rng, monkeypatch):
    """Items with equal alphas share one computation; every value equals the value of the
    same distribution asked alone (exact route)."""
    distinct, batch = _with_repeats(rng, 3)
    post = ambiguity_posterior(batch, "amb")
    assert len(post._flat) == len(distinct)
    x = rng.uniform(0, 1, size=batch.shape[:-1])
    alone = ambiguity_posterior(distinct, "amb")  # each distribution once
    index = np.argmax(np.all(batch[..., None, :] == distinct, axis=-1), axis=-1)
    for name, args in (("cdf", (0.4,)), ("mean", ()), ("var", ()), ("ppf", (0.3,))):
        np.testing.assert_allclose(  # root finding may differ in the last bits
            getattr(post, name)(*args), getattr(alone, name)(*args)[index], rtol=1e-12, atol=0
        )
    # the HDI (root finding on quadratures, the slow part) is found once per distinct alpha
    import ambppl.maths.exact as exact_module

    seen = []

    def fake_hdi(measure, rows, prob):
        seen.append(rows.copy())
        return rows[:, 0] / 10, rows[:, 1] / 10

    monkeypatch.setattr(exact_module, "_exact_hdi", fake_hdi)
    lower, upper = post.hdi(0.8)
    assert len(seen) == 1 and len(seen[0]) == len(distinct)
    np.testing.assert_array_equal(lower, batch[..., 0] / 10)
    np.testing.assert_array_equal(upper, batch[..., 1] / 10)
    pdf = post.pdf(x)
    for j in range(len(distinct)):
        where = index == j
        np.testing.assert_allclose(pdf[where], alone.pdf(x[where][:, None])[:, j], rtol=1e-12)
    # one point per item and a point for every item broadcast the same way
    grid = np.linspace(0, 1, 7)[:, None, None]
    np.testing.assert_allclose(
        post.sf(grid)[:, 0, 0], ambiguity_posterior(batch[0, 0]).sf(grid[:, 0, 0]), rtol=1e-12
    )


def test_equal_alphas_share_draws_on_the_sampling_route(rng):
    distinct, batch = _with_repeats(rng, 4)
    post = ambiguity_posterior(batch, "modified", n_draws=2000, random_seed=5)
    assert post._draws.shape == (len(distinct), 2000)
    flat = batch.reshape(-1, 4)
    same = np.all(flat[:, None] == flat[None], axis=-1)
    for stat in (post.mean(), post.cdf(0.5), post.hdi(0.9)[0], post.mcse):
        values = np.asarray(stat).reshape(-1)
        assert np.all((values[:, None] == values[None]) | ~same)
    # the distinct rows keep their order of first appearance, so a batch without repeats
    # gets the draws of one Dirichlet sample per row in turn, as before
    gen = np.random.default_rng(5)
    expected = [amb_modified(gen.dirichlet(row, size=2000)).mean() for row in distinct]
    lone = ambiguity_posterior(distinct, "modified", n_draws=2000, random_seed=5)
    np.testing.assert_allclose(lone.mean(), expected, rtol=1e-12)


def test_rvs_stay_independent_between_equal_alphas(rng):
    batch = np.tile([2.0, 3.0, 1.0, 1.0], (3, 1))
    draws = ambiguity_posterior(batch, random_seed=1).rvs(4000, random_state=2)
    assert draws.shape == (4000, 3)
    assert not np.array_equal(draws[:, 0], draws[:, 1])
    assert abs(np.corrcoef(draws[:, 0], draws[:, 1])[0, 1]) < 0.1


def test_regularized_beta_in_parallel_chunks_is_betainc():
    """_ibeta splits large inputs (>= 2 * MIN_CHUNK values) into chunks run on all cores; each
    chunk must see its own slice of a and b (arrays) or the scalar itself. Reference: one
    unchunked scipy.special.betainc call on the same values (what is under test is the
    chunking, not the function)."""
    import scipy.special as sc

    from ambppl.internal.threads import MIN_CHUNK
    from ambppl.maths._exact_kernels import _ibeta

    rng = np.random.default_rng(15)
    n = 2 * MIN_CHUNK + 123
    x = rng.random(n)
    a = rng.uniform(0.2, 40.0, n)
    np.testing.assert_array_equal(_ibeta(a, 2.5, x), sc.betainc(a, 2.5, x))
    np.testing.assert_array_equal(_ibeta(3.5, a, x), sc.betainc(3.5, a, x))
    small = x[:10]
    np.testing.assert_array_equal(_ibeta(a[:10], 2.5, small), sc.betainc(a[:10], 2.5, small))


def test_a_quadrature_that_misses_its_tolerance_says_which_one(monkeypatch):
    """Where the tanh-sinh quadrature reports no convergence, a RuntimeWarning names the pdf
    or the cdf quadrature and the first point (forced here by a quadrature that reports
    failure everywhere)."""
    import ambppl.maths._exact_route as route

    real = route.integrate_log

    def failing(*args, **kwargs):
        vals, ok = real(*args, **kwargs)
        return vals, np.zeros_like(ok, dtype=bool)

    monkeypatch.setattr(route, "integrate_log", failing)
    post = ambiguity_posterior([6.0, 1.0, 1.0], "modified")
    with pytest.warns(
        RuntimeWarning,
        match=r"^ambiguity_posterior: the pdf quadrature did not "
        r"reach its tolerance at 1 point\(s\) \(e\.g\. a = \S*0\.3",
    ):
        post.pdf(0.3)
    with pytest.warns(RuntimeWarning, match=r"^ambiguity_posterior: the cdf quadrature did not"):
        post.cdf(0.3)


def test_sampling_mcse_is_per_distribution():
    """mcse of a batch is each distribution's own sd / sqrt(n_draws). Reference: the closed-form
    sd (dirichlet_var, no draws); the draws' sd estimates it within 5 of its standard errors,
    about sd / sqrt(2 n) for these near-normal draws (the two sds differ tenfold)."""
    alpha = np.array([[3.0, 2.0, 1.0, 1.0, 1.5], [300.0, 200.0, 100.0, 100.0, 150.0]])
    n = 20_000
    post = ambiguity_posterior(alpha, "amb", n_draws=n, random_seed=6)
    sd = np.sqrt(dirichlet_var(alpha, "amb"))
    assert np.all(np.abs(post.mcse * math.sqrt(n) - sd) <= 5 * sd / math.sqrt(2 * n))


# --------------------------------------- issue 25: small parameters, tiny quantiles, huge laws


def _cdf_by_v_integral(alpha, measure, a, dps=20):
    """P(A <= a) integrated over V = 1 - q_cs with pi done exactly (mpmath betainc): a route
    independent of ambppl's (which integrates over pi with V's tails inside).

    A <= a iff H(D) >= y / V (y = 1 - a), and P(H(D) >= h) is a Beta probability of
    min(pi, 1 - pi) <= (1 - H^-1(h)) / 2. Over u = 1 - V in [0, a] with u = a s**(1/a_cs),
    u**(a_cs - 1) du = a**a_cs / a_cs ds removes the singularity of a tiny a_cs, and mpmath's
    unbounded exponents keep every u exact.
    """
    with mp.workdps(dps):
        a1, a2, c = (mp.mpf(v) for v in alpha)
        a, b = mp.mpf(a), a1 + a2
        y, lb = 1 - a, mp.log(mp.beta(a1 + a2, c))
        h_min = mp.mpf(1) / 2 if measure == "amb" else mp.mpf(0)

        def band(h):  # P(H(D) >= h)
            if h >= 1:
                return mp.mpf(0)
            if h <= h_min:
                return mp.mpf(1)
            d = {"amb": mp.sqrt(2 * h - 1), "modified": mp.sqrt(h), "old": h}[measure]
            xi = (1 - d) / 2
            return mp.betainc(a1, a2, 0, xi, regularized=True) + mp.betainc(
                a2, a1, 0, xi, regularized=True
            )

        def f(s):
            v = 1 - (a * s ** (1 / c) if s > 0 else 0)
            return mp.exp((b - 1) * mp.log(v) - lb) * band(y / v)

        pts = {mp.mpf(0), mp.mpf(1)} | {mp.mpf(2) ** -k for k in range(1, 30)}
        pts |= {1 - mp.mpf(2) ** -k for k in range(1, 30)}
        if measure == "amb" and 0 < 1 - 2 * y < a:  # kink where y / V = 1/2
            pts.add(((1 - 2 * y) / a) ** c)
        return float(a**c / c * mp.quad(f, sorted(pts)))


@pytest.mark.parametrize(
    ("alpha", "measure", "a"),
    [
        ((1e-5, 1.0, 1.0), "amb", 0.5),
        ((1e-3, 2.0, 0.01), "modified", 0.3),
        ((0.05, 3.0, 1e-3), "old", 0.6),
    ],
)
def test_small_parameters_match_an_independent_formula(alpha, measure, a):
    """A Beta factor with parameter k puts a share ~d**k of its mass within d of its end:
    for k = 1e-3, 63% lies closer than 1e-200, where no quadrature node reaches, so the cdf
    of (1e-5, 1, 1) at 1/2 came out as 0.0024 instead of 0.499996. Reference:
    _cdf_by_v_integral (mpmath, 20 digits), a formula that integrates over the other
    variable; the exact route now adds the mass next to the end in closed form."""
    got = float(ambiguity_posterior(alpha, measure).cdf(a))
    assert got == pytest.approx(_cdf_by_v_integral(alpha, measure, a), abs=CDF_ATOL)


def test_hdi_and_ppf_of_the_issue_25_law():
    """ambiguity_posterior([1e-5, 1, 1]).hdi(0.9) returned (1.0, 0.0) and ppf jumped from 1
    to 0; pi ~ Beta(1e-5, 1) is 0 almost surely, so amb ~ 1 - V, V ~ Beta(1 + 1e-5, 1):
    close to uniform (reference: that argument; the exact cdf is checked above)."""
    post = ambiguity_posterior([1e-5, 1.0, 1.0])
    x = post.ppf(np.linspace(0.01, 0.99, 21))
    assert np.all(np.diff(x) > 0)
    np.testing.assert_allclose(x, np.linspace(0.01, 0.99, 21), atol=1e-3)
    lo, hi = post.hdi(0.9)
    assert 0.0 <= lo <= hi <= 1.0
    assert float(post.cdf(hi) - post.cdf(lo)) == pytest.approx(0.9, abs=1e-10)


def test_quantiles_far_below_1e_15_keep_their_relative_precision():
    """(1e6, 1e-3, 1e-3) has its median near 1e-157: solved for logit(x), not to an
    absolute 1e-15 (which returned 8.9e-16, where the cdf is 0.7766); a quantile below the
    smallest float is 0 (cdf(5e-324) = 0.15 > 0.05 for (1e-3, 1e-3, 1e-3))."""
    post = ambiguity_posterior([1e6, 1e-3, 1e-3])
    x = float(post.ppf(0.5))
    assert 0.0 < x < 1e-100
    assert float(post.cdf(x)) == pytest.approx(0.5, abs=1e-12)
    tiny = ambiguity_posterior([1e-3, 1e-3, 1e-3])
    assert float(tiny.cdf(5e-324)) > 0.05 and float(tiny.ppf(0.05)) == 0.0


def test_quantiles_next_to_1_are_the_floats_where_the_tail_is_reached():
    """Floats near 1 are 1.1e-16 apart while logit(x) moves by ~0.7 between them, so a root
    found in logit(x) alone can stop a float or two short (1 - 2.2e-16 for the 1 - 1e-9
    quantile of old at (0.2493, 0.2493, 0.04394), whose sf is 1.3e-9 at 1 - 1.1e-16, was seen
    while the quantile search moved to logit(x)). Each quantile is the smallest float whose
    tail reaches its goal (reference: sf at that float and at the one below)."""
    post = ambiguity_posterior(
        [0.24932620530009145, 0.24932620530009145, 0.04393693362340742], "old"
    )
    assert float(post.sf(1.0 - 1.1e-16)) > 1e-9 and float(post.ppf(1.0 - 1e-9)) == 1.0
    x = float(post.isf(1e-7))
    assert 1.0 - 1e-12 < x < 1.0
    assert float(post.sf(x)) <= 1e-7 < float(post.sf(np.nextafter(x, 0.0)))


def test_a_narrow_peak_next_to_an_end_of_the_interval_is_cut():
    """A peak 20 of its widths from the end of the interval, but only 3.6e-4 of the
    interval away, was not cut at (EDGE) and went unseen: the lower tail of modified at
    (459.17, 2.21e5, 9.1917) at 1 - 1e-10 (the whole mass) came out as 1.7e-53."""
    from ambppl.maths._exact_route import _exact_cdf_sf

    alpha = np.array([[459.17, 2.21e5, 9.1917]])
    cdf, _ = _exact_cdf_sf("modified", np.array([1.0 - 1e-10]), alpha, np.array([False]))
    assert cdf[0] == pytest.approx(1.0, abs=CDF_ATOL)


def test_concentrated_laws_reach_their_tolerance():
    """Without warnings (errors here): the log-densities of (1e6, 1e6, 1e6) add terms of
    size 3e6 whose rounding moves the integrand by ~1e-10, which no level removes (the
    tolerance now includes that floor), and the cdf of old at (4.95e5, 3.99e4, 44.7) steps
    from 0 to 1 where V crosses its mean, 8 of its sd from the end (now a cut)."""
    for measure in ("amb", "modified"):
        post = ambiguity_posterior([1e6, 1e6, 1e6], measure)
        lo, hi = post.hdi(0.9)
        assert float(post.cdf(hi) - post.cdf(lo)) == pytest.approx(0.9, abs=1e-9)
    post = ambiguity_posterior([4.9544e5, 3.9894e4, 44.727], "old")
    assert float(post.cdf(post.ppf(0.7))) == pytest.approx(0.7, abs=1e-9)


def test_the_hdi_holds_its_mass_when_a_float_spacing_holds_mass():
    """modified at (0.0048, 0.0247, 0.0195) has 13.5% of its mass within 1.1e-16 of 1: the
    quantiles nearest to the exact ones gave [0, 1 - 2.2e-16], holding 0.86 of 0.9; the
    ends are now moved out by whole floats until the interval holds its mass."""
    post = ambiguity_posterior([0.0048, 0.0247, 0.0195], "modified")
    assert float(post.cdf(1.0 - 1.1e-16)) < 0.9
    lo, hi = post.hdi(0.9)
    assert float(post.cdf(hi)) - (float(post.cdf(np.nextafter(lo, 0))) if lo > 0 else 0) >= 0.9


@pytest.mark.parametrize("alpha", [(1e-3, 1e-3, 1e-3), (0.5, 0.7, 0.3), (40.0, 3.0, 0.7)])
@pytest.mark.parametrize("measure", ["amb", "modified", "old"])
def test_the_expansion_at_zero_joins_the_quadrature(alpha, measure):
    """Below SMALL_A = 1e-60 the pdf and cdf are the two-term expansion at 0 (the
    quadrature's nodes would underflow: NaN at 1e-300 before); across SMALL_A both change
    like a power between the expansion's exponents (reference: _exact_laws.end_exponents,
    derived independently), and the cdf keeps rising down to 5e-324."""
    from ambppl.maths._exact_route import SMALL_A

    post = ambiguity_posterior(alpha, measure)
    x = np.array([0.9 * SMALL_A, 1.1 * SMALL_A])
    exponents, _ = end_exponents(alpha, measure, 0.0)
    step = math.log(1.1 / 0.9)
    slope_pdf = float(np.diff(post.logpdf(x))[0]) / step
    slope_cdf = float(np.diff(np.log(post.cdf(x)))[0]) / step
    assert exponents[0] - 1e-6 <= slope_pdf <= exponents[-1] + 1e-6
    assert exponents[0] + 1 - 1e-6 <= slope_cdf <= exponents[-1] + 1 + 1e-6
    tiny = post.cdf(np.array([5e-324, 1e-300, 1e-200, 1e-100]))
    assert np.all(np.isfinite(post.logpdf(np.array([5e-324, 1e-300])))) and np.all(
        np.diff(tiny) >= 0
    )
