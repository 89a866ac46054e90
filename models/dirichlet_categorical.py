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
so :func:`ambppl.fit` samples it exactly without MCMC (info record: ``"exact": "dirichlet"``)
and ``ambppl.dirichlet_mean`` / ``ambppl.dirichlet_var`` give closed-form posterior moments.
``amb_modified`` and ``amb_old`` need at least two proper categories; with a single proper
category besides "can't solve" they are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ambppl
from ambppl._checks import cant_solve_position, check_counts, check_prior


def model(counts: Any, *, prior: Any = 1.0) -> Any:
    """Build the PyMC model for a count DataArray.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")``; ``counts.attrs["cant_solve"]`` is the
        can't-solve label (one of the category coordinates) or ``None``.
    prior : float or array_like, default 1.0
        Symmetric Dirichlet concentration, or one positive value per category.

    Returns
    -------
    pymc.Model
        Free variable ``q`` (dims item, category), observed ``counts`` and the deterministic
        measures ``amb``, ``amb_modified``, ``amb_old``, ``entropy`` (dims item).

    Raises
    ------
    TypeError
        If ``counts`` is not an xarray.DataArray.
    ValueError
        If its dims are not ``("item", "category")``, the counts are not non-negative whole
        numbers, or ``prior`` is not positive / has the wrong length.
    """
    import pymc as pm
    import xarray as xr

    if not isinstance(counts, xr.DataArray):
        raise TypeError(
            "counts must be an xarray.DataArray with dims ('item', 'category') (see "
            f"ambppl.read_annotations), but got {type(counts).__name__}"
        )
    if tuple(counts.dims) != ("item", "category"):
        raise ValueError(
            f"counts must have dims ('item', 'category'), but got {tuple(counts.dims)}"
        )
    values = check_counts(counts.values)
    n_categories = values.shape[1]
    alpha = check_prior(prior, n_categories)
    cs = cant_solve_position(counts.attrs.get("cant_solve"), _coord(counts, "category"))
    n_proper = n_categories - (cs is not None)

    coords = {"item": _coord(counts, "item"), "category": _coord(counts, "category")}
    with pm.Model(coords=coords) as dirichlet_categorical:
        q = pm.Dirichlet("q", a=np.broadcast_to(alpha, values.shape), dims=("item", "category"))
        pm.Multinomial(
            "counts", n=values.sum(axis=1), p=q, observed=values, dims=("item", "category")
        )
        pm.Deterministic("amb", ambppl.amb(q, cant_solve=cs), dims="item")
        if n_proper >= 2:
            pm.Deterministic("amb_modified", ambppl.amb_modified(q, cant_solve=cs), dims="item")
            pm.Deterministic("amb_old", ambppl.amb_old(q, cant_solve=cs), dims="item")
        pm.Deterministic("entropy", ambppl.normalized_entropy(q, cant_solve=cs), dims="item")
    return dirichlet_categorical


def _coord(counts: Any, dim: str) -> list:
    """Coordinate values of ``dim`` (positions when the DataArray has none)."""
    if dim in counts.coords:
        return counts.coords[dim].values.tolist()
    return list(range(counts.sizes[dim]))
