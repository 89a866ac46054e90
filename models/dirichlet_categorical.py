r"""Dirichlet-categorical model: one independent response distribution per item.

Every item ``i`` has its own response distribution ``q_i`` over the ``K`` answer
categories (the proper categories and, if the task has one, "can't solve"); the answers to
item ``i`` are ``n_i`` independent draws from ``q_i``. The prior is a Dirichlet, symmetric
(``prior = beta``: all ``alpha_k = beta``) or given in full (``prior = alpha``, one entry per
category). The ambiguity measures are functions of ``q_i`` and are stored per draw.

The same program in Stan notation::

    data {
      int<lower=1> N;                        // items
      int<lower=2> K;                        // categories (can't-solve included)
      array[N, K] int<lower=0> counts;       // answers per item and category
      vector<lower=0>[K] alpha;              // Dirichlet prior (prior=beta: all entries beta)
    }
    parameters {
      array[N] simplex[K] q;                 // response distribution of each item
    }
    model {
      for (i in 1:N) {
        q[i] ~ dirichlet(alpha);
        counts[i] ~ multinomial(q[i]);       // n_i = sum(counts[i]) answers
      }
    }
    generated quantities {
      vector[N] amb;            // ambppl.amb(q[i])                 eq. def_amb_final
      vector[N] amb_modified;   // ambppl.amb_modified(q[i])        eq. def_modified_amb
      vector[N] amb_old;        // ambppl.amb_old(q[i])             section 2.4
      vector[N] entropy;        // ambppl.normalized_entropy(q[i])  section 3.1
    }

The posterior is conjugate, ``q_i | counts ~ Dirichlet(alpha + counts_i)`` (paper section 3),
so :func:`ambppl.fit` samples it exactly without MCMC (``method="exact"``, the info record's
first method) and ``ambppl.dirichlet_mean`` / ``ambppl.dirichlet_var`` give closed-form
posterior moments. ``amb_modified`` and ``amb_old`` need at least two proper categories;
with a single proper category besides "can't solve" they are left out.

What :func:`ambppl.fit` reads from this file (the template for your own models):

- ``HYPERPARAMETERS``: the posterior variables the prior of ``q_i`` depends on (none here);
- ``concentration(hyper, *, n_categories, **params)``: the Dirichlet concentration of
  ``q_i`` given them (here the fixed ``alpha``); the exact route draws
  ``q_i ~ Dirichlet(concentration + counts_i)`` and every route computes the
  ``log_likelihood`` group from it (:mod:`ambppl.inference.modeling`);
- ``model(counts, **params)``: the PyMC program above, for ``method="nuts"``.

The pointwise log likelihood is ``log p(answers_i | alpha)`` with ``q_i`` integrated out
(:mod:`ambppl.inference.modeling`); it is the same for every draw, so leave-one-item-out is exact
(:func:`ambppl.loo`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.inference.modeling import (
    add_annotation_data,
    add_measures,
    count_values,
    model_coords,
    prior_concentration,
)

#: Posterior variables the prior of q_i depends on: none (the prior is fixed).
HYPERPARAMETERS: tuple[str, ...] = ()


def concentration(hyper: Any, *, n_categories: int, prior: Any = 1.0) -> np.ndarray:
    """The Dirichlet concentration of every ``q_i`` before the counts: ``alpha``.

    Parameters
    ----------
    hyper : dict or None
        Draws of :data:`HYPERPARAMETERS` (unused: there are none).
    n_categories : int
        Number of categories K.
    prior : float or array_like, default 1.0
        Symmetric Dirichlet concentration, or one positive value per category in the order
        of the categories (there are no counts here to read a labelled prior by: a pandas
        Series or labelled DataArray is refused; :func:`model` and ``ambppl.fit`` read one
        by its labels).

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``alpha``.

    Raises
    ------
    ValueError, TypeError
        If ``prior`` is not positive, has the wrong length or is labelled.
    """
    return prior_concentration(prior, n_categories)


def model(counts: Any, *, prior: Any = 1.0) -> Any:
    """Build the PyMC model for a count DataArray.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")``; ``counts.attrs["cant_solve"]`` is the
        can't-solve label (one of the category coordinates) or ``None``.
    prior : float, array_like or pandas.Series, default 1.0
        Symmetric Dirichlet concentration, or one positive value per category: in the order
        of the counts' categories, or labelled by category (a Series indexed by the labels,
        a DataArray with a ``category`` coordinate) and read by its labels.

    Returns
    -------
    pymc.Model
        Free variable ``q`` (dims item, category), observed ``counts``, the deterministic
        measures ``amb``, ``amb_modified``, ``amb_old``, ``entropy`` (dims item) and the
        ``pm.Data`` nodes ``is_cant_solve`` and ``prior`` (dims category).

    Raises
    ------
    TypeError
        If ``counts`` is not an xarray.DataArray.
    ValueError
        If its dims are not ``("item", "category")``, the counts are not non-negative whole
        numbers, or ``prior`` is not positive / has the wrong length.
    """
    import pymc as pm

    values, cs = count_values(counts)
    # a prior labelled by category is read by its labels, not by position
    prior = prior_concentration(prior, values.shape[1], categories=counts["category"])
    alpha = concentration(None, n_categories=values.shape[1], prior=prior)
    with pm.Model(coords=model_coords(counts)) as dirichlet_categorical:
        add_annotation_data(counts, prior=alpha)
        q = pm.Dirichlet("q", a=np.broadcast_to(alpha, values.shape), dims=("item", "category"))
        pm.Multinomial(
            "counts", n=values.sum(axis=1), p=q, observed=values, dims=("item", "category")
        )
        add_measures(q, cant_solve=cs)
    return dirichlet_categorical
