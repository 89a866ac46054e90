"""``benchmarks/conjugate_dawid_skene.py``: the conjugate Dirichlet-row Dawid-Skene that the
gold benchmark runs beside ambppl's model, EM against a loop over raters, Gibbs against the
exact posterior of a crowd small enough to enumerate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import load_benchmark
from scipy.special import gammaln


@pytest.fixture(scope="module")
def conjugate():
    return load_benchmark("conjugate_dawid_skene")


#: 4 items, 3 raters, 2 classes; item 3 answered once (codes: item, rater, answer).
SMALL = np.array(
    [
        [0, 0, 0], [0, 1, 0], [0, 2, 1],
        [1, 0, 1], [1, 1, 1], [1, 2, 1],
        [2, 0, 0], [2, 2, 1],
        [3, 1, 0],
    ]
)  # fmt: skip


def test_em_step_is_the_rows_of_expected_counts(conjugate):
    # one EM iteration by hand, a loop over the answers: M-step rows from the majority-vote
    # shares with Dirichlet(2, 1.5) rows (mode: counts + alpha - 1), then the E-step
    item, rater, answer = SMALL.T
    shares = np.zeros((4, 2))
    for i, y in zip(item, answer, strict=True):
        shares[i, y] += 1
    shares /= shares.sum(axis=1, keepdims=True)
    rows = np.array([[1.0, 0.5], [0.5, 1.0]])[None].repeat(3, axis=0)  # alpha - 1
    for i, r, y in SMALL:
        rows[r, :, y] += shares[i]
    theta = rows / rows.sum(axis=2, keepdims=True)
    pi = shares.mean(axis=0)
    log_post = np.log(pi)[None].repeat(4, axis=0)
    for i, r, y in SMALL:
        log_post[i] += np.log(theta[r, :, y])
    post = np.exp(log_post) / np.exp(log_post).sum(axis=1, keepdims=True)
    got = conjugate.em_fit(item, rater, answer, 2, diag=2.0, off=1.5, n_iter=1)
    np.testing.assert_allclose(got["confusion"], theta, rtol=1e-13)
    np.testing.assert_allclose(got["pi"], pi, rtol=1e-13)
    np.testing.assert_allclose(got["label_prob"], post, rtol=1e-12)


def test_em_refuses_a_prior_without_an_interior_mode(conjugate):
    item, rater, answer = SMALL.T
    with pytest.raises(ValueError, match=r"diag, off >= 1 .* but got 0\.5, 1\.0"):
        conjugate.em_fit(item, rater, answer, 2, diag=0.5, off=1.0)


def _exact_class_posterior(diag: float, off: float) -> np.ndarray:
    """P(z_i = k | y) by enumerating the 2^4 labellings, rows and prevalence integrated out
    (Dirichlet-multinomial: prod over raters and classes of B(alpha_k + n_rk) / B(alpha_k),
    times B(1 + m) / B(1) for the class counts m)."""

    def log_beta(a):
        return gammaln(a).sum(axis=-1) - gammaln(a.sum(axis=-1))

    alpha = np.array([[diag, off], [off, diag]])
    weights = np.zeros((4, 2))
    for z in itertools.product((0, 1), repeat=4):
        z = np.array(z)
        counts = np.zeros((3, 2, 2))
        for i, r, y in SMALL:
            counts[r, z[i], y] += 1
        log_p = (log_beta(alpha[None] + counts) - log_beta(alpha)[None]).sum()
        m = np.bincount(z, minlength=2)
        log_p += log_beta(1.0 + m) - log_beta(np.ones(2))
        weights[np.arange(4), z] += np.exp(log_p)
    return weights / weights.sum(axis=1, keepdims=True)


def test_gibbs_reaches_the_exact_posterior_of_a_small_crowd(conjugate):
    item, rater, answer = SMALL.T
    exact = _exact_class_posterior(2.0, 1.0)
    runs = np.stack(
        [
            conjugate.gibbs_fit(item, rater, answer, 2, 2.0, 1.0, sweeps=2500, burn=100, seed=s)[
                "label_prob"
            ]
            for s in range(8)
        ]
    )
    # eight independent chains: their spread gives the Monte Carlo standard error
    mean, se = runs.mean(axis=0), runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert np.all(np.abs(mean - exact) <= 4 * se), (mean, exact, se)
    # and it is not the prior: the unanimous item 1 is class 1 with probability > 0.8
    assert exact[1, 1] > 0.8
