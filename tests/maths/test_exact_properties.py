"""Generated tests of the exact two-class law (``ambiguity_posterior`` with 3 entries).

Every alpha coordinate is drawn log-uniformly from [1e-3, 1e6], together with the edge
regions hand-picked grids leave out: alpha_1 + alpha_2 just above 1 (amb's density at 1
switches from infinite to 0 there, ERRATA 4), alpha_cs next to 1/2 (amb's density at 1/2
switches from finite to infinite), alpha_1 = alpha_2 and alpha_1 + alpha_2 next to 1/2
(modified) and 1 (old). Over all of them:

* ``ppf`` is monotone and inverts ``cdf``: the quantile ``x`` of ``p`` has
  ``cdf(x-) - TOL <= p <= cdf(x+) + TOL`` with ``x-`` / ``x+`` the quantile moved down / up
  by ``Z_SLACK`` in ``logit(x)`` (100 times the root tolerance ``PPF_ZTOL``) or by one float,
  whichever is more (a law can hold mass within one float spacing, e.g. next to 1);
* the HDI lies in [0, 1] with lower <= upper and holds its mass ``cdf(upper) - cdf(lower)``
  (to ``TOL``), also where most of the mass lies within the last float below 1;
* the density's limits at 0 and 1 are those of its expansion there
  (``_exact_laws.end_exponents``): 0, inf or finite as the leading exponent is positive,
  negative or 0, and between 1e-40 and 1e-50 from 0 the density's local power lies between
  the exponents of the expansion's two terms (both positive terms).

``TOL`` is the accuracy the exact route states for this range: absolute cdf error 1e-12
plus 4e-17 (|log B(a1, a2)| + |log B(b, c)|), at most 1.4e-10 here.

Where double precision cannot resolve the law (entries beyond ~1e7, or below 1e-100)
``method="exact"`` refuses with a ValueError and ``"auto"`` takes the sampling route.

Examples per run (hypothesis ``max_examples``): 10 + 10 + 25 + 12, about 25 s on one core.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sc
from _exact_laws import end_exponents, end_rate
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ambppl import ambiguity_posterior
from ambppl.maths._exact_route import EXACT_MAX_TERMS, PPF_ZTOL, exact_term_size

MEASURES = st.sampled_from(["amb", "modified", "old"])
TOL = 2e-10
Z_SLACK = 100 * PPF_ZTOL
SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


def _log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(math.log(lo), math.log(hi)).map(math.exp)


COORD = _log_uniform(1e-3, 1e6)
NEAR = _log_uniform(1e-12, 1e-2)  # distance to an edge


@st.composite
def alphas(draw: st.DrawFn) -> tuple[float, float, float]:
    """(alpha_1, alpha_2, alpha_cs): log-uniform coordinates or one of the edge regions."""
    a1, a2, c = draw(COORD), draw(COORD), draw(COORD)
    region = draw(st.sampled_from(["free", "free", "b>1", "c~1/2", "a1=a2", "b~1/2", "b~1"]))
    share = draw(st.floats(1e-3, 1.0 - 1e-3))
    if region == "b>1":  # alpha_1 + alpha_2 = 1 + tiny
        a1, a2 = share * (1.0 + draw(NEAR)), (1.0 - share) * (1.0 + draw(NEAR))
    elif region == "c~1/2":
        c = 0.5 + draw(st.sampled_from([-1.0, 1.0])) * draw(NEAR)
    elif region == "a1=a2":
        a2 = a1
    elif region in ("b~1/2", "b~1"):
        b = (0.5 if region == "b~1/2" else 1.0) + draw(st.sampled_from([-0.2, 0.2])) * draw(NEAR)
        a1, a2 = max(share * b, 1e-3), max((1.0 - share) * b, 1e-3)
    return a1, a2, c


def _bracket(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x moved down / up by Z_SLACK in logit(x), or by one float if that is more."""
    with np.errstate(divide="ignore"):
        z = sc.logit(x)
    lo = np.minimum(sc.expit(z - Z_SLACK), np.nextafter(x, 0.0))
    hi = np.maximum(sc.expit(z + Z_SLACK), np.nextafter(x, 1.0))
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


@settings(max_examples=10, **SETTINGS)
@given(alpha=alphas(), measure=MEASURES, p=st.floats(1e-12, 1.0 - 1e-12))
def test_ppf_is_monotone_and_inverts_the_cdf(alpha, measure, p):
    post = ambiguity_posterior(alpha, measure)
    q = np.sort(np.array([1e-9, 0.01, 0.3, 0.5, 0.7, 0.99, 1.0 - 1e-9, p]))
    x = post.ppf(q)
    assert np.all((x >= 0.0) & (x <= 1.0)), x
    with np.errstate(divide="ignore"):
        z = sc.logit(x)
    assert np.all((z[1:] >= z[:-1] - 2 * PPF_ZTOL) | (x[1:] >= x[:-1])), (q, x)
    lo, hi = _bracket(x)
    below, above = post.cdf(lo), post.cdf(hi)
    assert np.all(below - TOL <= q), (q, x, below)
    assert np.all(q <= above + TOL), (q, x, above)


#: 0.888 of amb's mass in [1 - 1.1e-16, 1] (tests/maths/test_maths_audit_numerics.py): hdi(0.5)
#: was (1.0, 1.0), holding nothing, and hdi(0.9) held 0.89997; the mass once measured here,
#: ``cdf(hi) - cdf(nextafter(lo, 0))``, counted the float below ``lo`` too (0.888 for the first).
LAST_FLOAT = (2.5555e-3, 2.7468e-3, 9.8307e5)


@settings(max_examples=10, **SETTINGS)
@given(alpha=alphas(), measure=MEASURES, prob=st.floats(0.5, 0.99))
@example(alpha=LAST_FLOAT, measure="amb", prob=0.5)
@example(alpha=LAST_FLOAT, measure="amb", prob=0.9)
def test_hdi_lies_in_the_support_and_holds_its_mass(alpha, measure, prob):
    post = ambiguity_posterior(alpha, measure)
    lo, hi = post.hdi(prob)
    assert 0.0 <= lo <= hi <= 1.0, (lo, hi)
    # the mass of [lo, hi]: cdf(hi) - cdf(lo), as ambiguity_posterior's docstring defines it
    below, above = post.cdf(lo), post.cdf(hi)
    assert above - below >= prob - TOL, (lo, hi, above, below)


def _limit_matches(log_value: float, exponent: float, log: bool) -> bool:
    """The log density at an end against the expansion's leading exponent (in logs: a finite
    limit may lie below the float range, e.g. 2**-1095 for old at (1, 1097, 1))."""
    if log or exponent < 0:
        return log_value == np.inf
    if exponent > 0:
        return log_value == -np.inf
    return bool(np.isfinite(log_value))


@settings(max_examples=25, **SETTINGS)
@given(alpha=alphas(), measure=MEASURES)
def test_the_density_at_the_ends_is_the_limit_of_its_expansion(alpha, measure):
    post = ambiguity_posterior(alpha, measure)
    for end in (0.0, 1.0):
        e, log = end_rate(alpha, measure, end)
        assert _limit_matches(float(post.logpdf(end)), e, log), (end, e, post.logpdf(end))
    # at 0: p ~ K1 eps**e1 + K2 eps**e2 with K1, K2 > 0, so the local power d log p / d log
    # eps lies between e1 and e2 (relative corrections O(eps alpha_0) < 1e-33 here)
    eps = np.array([1e-40, 1e-50])
    slope = float(np.diff(post.logpdf(eps))[0] / np.diff(np.log(eps))[0])
    exponents, _ = end_exponents(alpha, measure, 0.0)
    assert exponents[0] - 1e-6 <= slope <= exponents[-1] + 1e-6, (slope, exponents)
    if measure == "amb":
        # at 1: eps**(b - 1) alone, to relative O(eps alpha_cs); ERRATA 4 at 1/2
        if max(alpha) <= 100.0:
            one = 1.0 - np.array([1e-12, 1e-14])
            dist = 1.0 - one  # exact (Sterbenz)
            slope = float(np.diff(post.logpdf(one))[0] / np.diff(np.log(dist))[0])
            assert abs(slope - (alpha[0] + alpha[1] - 1.0)) < 1e-3, slope
        assert (post.pdf(0.5) == np.inf) == (alpha[2] <= 0.5)
        assert np.all(np.isfinite(post.pdf(0.5 + np.array([-1e-10, 1e-10]))))


@settings(max_examples=12, **SETTINGS)
@given(
    alpha=st.tuples(_log_uniform(1e5, 1e9), _log_uniform(1e5, 1e9), _log_uniform(1e5, 1e9)),
    measure=MEASURES,
)
def test_exact_refuses_laws_float64_cannot_resolve(alpha, measure):
    """Beyond EXACT_MAX_TERMS the rounding of the log-densities alone (terms of that size)
    moves the cdf by more than 1e-9: method="exact" refuses, "auto" samples; below it the
    exact route answers (the median of a law this narrow lies within 1e-3 of its mean)."""
    size = float(exact_term_size(np.array(alpha)))
    if size > EXACT_MAX_TERMS:
        with pytest.raises(ValueError, match=r"method='exact' cannot serve this alpha: .* too "):
            ambiguity_posterior(alpha, measure, method="exact")
        post = ambiguity_posterior(alpha, measure, n_draws=1000, random_seed=1)
        assert post.method == "sampling"
    else:
        post = ambiguity_posterior(alpha, measure, method="exact")
        assert abs(float(post.median()) - float(post.mean())) < 1e-3


def test_exact_refuses_entries_below_its_floor_and_sums_beyond_float64():
    with pytest.raises(ValueError, match=r"entry below 1e-100 .*use method='sampling'"):
        ambiguity_posterior([1e-200, 1.0, 1.0], method="exact")
    post = ambiguity_posterior([1e-300] * 3, n_draws=4000, random_seed=3)
    # three Bernoulli-like corners: q_cs = 1 (amb 1) or a proper class = 1 (amb 0)
    assert post.method == "sampling" and abs(float(post.mean()) - 1 / 3) < 0.03
    with pytest.raises(ValueError, match=r"alpha must sum to at most 1e\+300 .* sums to inf"):
        ambiguity_posterior([1e308, 1e308, 1e308])
