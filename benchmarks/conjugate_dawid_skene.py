"""Dawid-Skene with conjugate Dirichlet rows: EM (its mode) and Gibbs (its posterior), in numpy.

An independent yardstick for ``dawid_skene_gold.py``: not ambppl's model (whose rater rows
are partially pooled on the logit scale and whose hyperparameters are learned) but the
textbook conjugate one, each rater's confusion row of class ``k`` a priori
``Dirichlet(alpha_k)`` with ``alpha`` fixed (``alpha_kk = diag``, ``alpha_kj = off``), the
prevalence ``Dirichlet(1)``:

* :func:`em_fit`: the posterior mode by EM (Dawid & Skene 1979), rows
  ``(alpha - 1 + expected counts)`` normalized; ``diag = off = 1`` is maximum likelihood,
  crowd-kit's DawidSkene (which starts from majority-vote shares as this does);
* :func:`gibbs_fit`: the posterior by Gibbs sampling (the true classes, the rows and the
  prevalence drawn in turn from their conditionals), the class posterior of each item
  Rao-Blackwellized (the mean over sweeps of the exact conditional class probabilities).

So the two differ only in point estimate against posterior average, and each can be run
at any strength of prior: what the gold benchmark needs to say whether a gap to crowd-kit
is ambppl's prior or the price of any prior and of averaging on those data.

The class posterior given the parameters is :func:`crowds.class_posterior`. Both take
integer codes (``item``, ``rater``, ``answer``: one entry per answer) with the
classes the answer categories (``n_classes`` of them), and return the class posterior
(items x classes), the confusion matrices (raters x classes x answers) and the prevalence.
"""

from __future__ import annotations

import numpy as np
from crowds import class_posterior

#: The smallest probability EM takes the logarithm of.
FLOOR = 1e-12


def prior_rows(n_classes: int, diag: float, off: float) -> np.ndarray:
    """The Dirichlet parameters of a rater's confusion rows: ``diag`` on the right answer,
    ``off`` elsewhere (``n_classes x n_classes``)."""
    alpha = np.full((n_classes, n_classes), float(off))
    np.fill_diagonal(alpha, float(diag))
    return alpha


def _counts(item, rater, answer, weights, n_raters, n_classes):
    """Expected answer counts ``n_rkc = sum_a w_{item[a], k} [rater[a] = r, y_a = c]``."""
    n = np.zeros((n_raters, n_classes, n_classes))
    np.add.at(n, (rater, slice(None), answer), weights[item])
    return n


def _start(item, answer, n_items, n_classes):
    """Majority-vote shares of each item's answers (the EM start, as crowd-kit's)."""
    shares = np.zeros((n_items, n_classes))
    np.add.at(shares, (item, answer), 1.0)
    return shares / shares.sum(axis=1, keepdims=True)


def em_fit(
    item: np.ndarray,
    rater: np.ndarray,
    answer: np.ndarray,
    n_classes: int,
    diag: float = 1.0,
    off: float = 1.0,
    n_iter: int = 100,
) -> dict[str, np.ndarray]:
    """The posterior mode by EM, from majority-vote shares (``diag, off >= 1``).

    A row with no expected answers (a rater who never met a class) is uniform; a zero
    probability is read as :data:`FLOOR` in the logarithm (maximum likelihood puts a rater's
    unseen answers at 0).
    """
    if min(diag, off) < 1:
        raise ValueError(
            f"em_fit needs diag, off >= 1 (a mode inside the simplex), but got {diag}, {off}"
        )
    n_items, n_raters = int(item.max()) + 1, int(rater.max()) + 1
    alpha = prior_rows(n_classes, diag, off)
    post = _start(item, answer, n_items, n_classes)
    for _ in range(n_iter):
        rows = alpha[None] - 1.0 + _counts(item, rater, answer, post, n_raters, n_classes)
        total = rows.sum(axis=2, keepdims=True)
        theta = np.where(total > 0, rows / np.where(total > 0, total, 1.0), 1.0 / n_classes)
        pi = post.mean(axis=0)
        floored = np.maximum(theta, FLOOR)
        post = class_posterior(np.maximum(pi, FLOOR), floored, item, rater, answer, n_items)
    return {"label_prob": post, "confusion": theta, "pi": pi}


def gibbs_fit(
    item: np.ndarray,
    rater: np.ndarray,
    answer: np.ndarray,
    n_classes: int,
    diag: float = 1.0,
    off: float = 1.0,
    sweeps: int = 1500,
    burn: int = 300,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """The posterior by Gibbs sampling, one chain from majority vote; posterior means of the
    class probabilities (Rao-Blackwellized), the confusion matrices and the prevalence over
    the ``sweeps - burn`` kept sweeps."""
    rng = np.random.default_rng(seed)
    n_items, n_raters = int(item.max()) + 1, int(rater.max()) + 1
    alpha = prior_rows(n_classes, diag, off)
    start = _start(item, answer, n_items, n_classes)
    z = np.argmax(start + 1e-6 * rng.random(start.shape), axis=1)
    sums = {"label_prob": 0.0, "confusion": 0.0, "pi": 0.0}
    for sweep in range(sweeps):
        onehot = np.eye(n_classes)[z]
        theta = rng.gamma(alpha[None] + _counts(item, rater, answer, onehot, n_raters, n_classes))
        theta /= theta.sum(axis=2, keepdims=True)
        pi = rng.dirichlet(1.0 + onehot.sum(axis=0))
        post = class_posterior(pi, theta, item, rater, answer, n_items)
        if sweep >= burn:
            for key, value in (("label_prob", post), ("confusion", theta), ("pi", pi)):
                sums[key] = sums[key] + value
        u = rng.random((n_items, 1))
        z = np.minimum((u > np.cumsum(post, axis=1)).sum(axis=1), n_classes - 1)
    return {key: value / (sweeps - burn) for key, value in sums.items()}
