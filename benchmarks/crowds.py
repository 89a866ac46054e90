"""Planted crowds: the data-generating steps of a Dawid-Skene process, for the benchmarks.

One place for what ``recovery_dawid_skene.py`` (its planted crowds) and ``gallery.py`` (its
simulated crowds, ``crowd_design``) both draw: a rater's confusion matrix from its accuracy,
and the answers given the true classes. Each function draws from the caller's generator in
a fixed order, so a seed gives the same crowd wherever it is drawn.
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
