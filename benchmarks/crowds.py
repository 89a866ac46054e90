"""Planted crowds: the steps of a Dawid-Skene process, for the benchmarks.

One place for what ``recovery_dawid_skene.py`` (its planted crowds) and ``gallery.py`` (its
simulated crowds, ``crowd_design``) both draw: a rater's confusion matrix from its accuracy,
and the answers given the true classes. Each function draws from the caller's generator in
a fixed order, so a seed gives the same crowd wherever it is drawn. And what
``recovery_dawid_skene.py`` (under the planted parameters) and ``dawid_skene_gold.py``
(under confusion matrices counted on gold labels) both score: the class posterior of each
item given known confusion matrices and prevalence, and the Brier score of class
probabilities against the true classes.
"""

from __future__ import annotations

import numpy as np


def confusion_matrix(
    rng: np.random.Generator, accuracy: float, n_classes: int, n_answers: int
) -> np.ndarray:
    """One rater's confusion matrix (``n_classes x n_answers``): row ``t`` gives answer ``t``
    with probability ``accuracy`` and spreads the rest over the other answers by a
    ``Dirichlet(1)`` draw (one per row, in row order)."""
    rest = rng.dirichlet(np.ones(n_answers - 1), size=n_classes) * (1.0 - accuracy)
    return np.stack([np.insert(rest[t], t, accuracy) for t in range(n_classes)])


def draw_answers(
    rng: np.random.Generator,
    confusion: np.ndarray,
    truth: np.ndarray,
    item: np.ndarray,
    rater: np.ndarray,
) -> np.ndarray:
    """The answer (category code) of each answer ``a``: a draw from row ``truth[item[a]]`` of
    rater ``rater[a]``'s confusion matrix (``confusion``: raters x classes x answers)."""
    p_answer = confusion[rater, truth[item]]
    answer = (rng.random((len(item), 1)) > np.cumsum(p_answer, axis=1)).sum(axis=1)
    return np.minimum(answer, p_answer.shape[1] - 1)


def class_posterior(
    prevalence: np.ndarray,
    confusion: np.ndarray,
    item: np.ndarray,
    rater: np.ndarray,
    answer: np.ndarray,
    n_items: int,
) -> np.ndarray:
    """``p(z_i = k | answers)`` given the parameters (``n_items x classes``): the softmax over
    ``k`` of ``log prevalence_k + sum_{a in i} log confusion[rater[a], k, answer[a]]``
    (``confusion``: raters x classes x answers)."""
    from scipy.special import softmax

    log_terms = np.repeat(np.log(prevalence)[None], n_items, axis=0)
    np.add.at(log_terms, item, np.log(confusion[rater, :, answer]))
    return softmax(log_terms, axis=1)


def brier_scores(prob: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per item, the Brier score ``sum_k (prob_ik - [k = truth_i])^2`` of class probabilities
    (``prob``: items x classes); ``truth_i = -1`` marks a true class outside the columns
    (probability 0 given to it: the score counts 1 for it)."""
    outside = truth < 0
    onehot = np.zeros_like(prob)
    onehot[np.flatnonzero(~outside), truth[~outside]] = 1.0
    return ((prob - onehot) ** 2).sum(axis=1) + outside
