r"""Hierarchical Dirichlet model: the prior of the response distributions is learned.

Every item ``i`` has its own response distribution ``q_i`` over the ``K`` categories
(can't-solve included), as in ``dirichlet_categorical``, but the Dirichlet prior of the
``q_i`` is not fixed: its mean ``mu`` (a distribution over the categories: how often each
answer is given overall) and its concentration ``kappa`` (how close each item's ``q_i`` stays
to ``mu``; small ``kappa`` = items with clear answers, large ``kappa`` = every item answered
like the average) are learned from all items together::

    mu      ~ Dirichlet(mu_prior)                          mu_prior: 1 per category
    kappa   ~ HalfCauchy(K * kappa_scale)                  median K * kappa_scale
    q_i     ~ Dirichlet(kappa * mu)                        i = 1..N
    x_i     ~ Multinomial(n_i, q_i)                        counts of item i

With ``mu`` uniform, ``kappa = K * beta`` is the paper's symmetric prior ``beta``: the
default prior of ``kappa`` has its median at ``beta = 1``, its quartiles at ``beta = 0.41``
and ``2.4``, and 95 % of its mass between ``beta = 0.04`` and ``beta = 25`` (the paper's
0.5 and 1 are well inside). Its prior predictive of ``amb`` for an item is broad (see
``notebooks/05_learned_prior.ipynb``), which is what a weakly informative prior on a
data-set-level quantity should give; every data set of a few hundred items with spread
between its items pins ``kappa`` down far more tightly than this prior.

Both ends are reachable limits
------------------------------
``kappa = infinity`` is the multinomial: every item answered from ``mu`` itself, no spread
between items beyond multinomial noise (near-identical items, data sets of a few answers per
item). ``kappa -> 0`` puts every ``q_i`` at a vertex: each item answered unanimously. Real data
sets come close to both ends (near-identical items; the spam data of the real-data gallery,
every item unanimous), where the data bound ``kappa`` on one side only and the likelihood
levels off towards the end (:func:`ambppl.inference.modeling.dirichlet_multinomial_logp` is
accurate there, to ``kappa = 1e300``, and tends to the multinomial). The half-Cauchy prior
says so: the reciprocal of a half-Cauchy variable is half-Cauchy, ``1 / kappa ~
HalfCauchy(1 / (K * kappa_scale))``, so the prior density of ``1 / kappa`` is positive and
finite at ``1 / kappa = 0`` as the density of ``kappa`` is at ``kappa = 0``: either limit is a
point of the support's closure with prior density, not a region the prior rules out. On
``log kappa`` (the coordinate NUTS samples) the prior is the hyperbolic secant law, with
exponential tails on both sides (sd ``pi / 2``), so where the likelihood levels off the
posterior of ``log kappa`` keeps an exponential tail: proper and finite, and NUTS samples
it. A log-normal prior (this model's prior until 2026-11-28, ``LogNormal(log K, 1.5)``,
nearly the same bulk) has Gaussian tails on ``log kappa``, and decided ``kappa`` on
near-identical items against the data: on the gallery's ``near_identical`` design its
posterior median was 122 (94 % interval 51-476) where the marginal likelihood peaks at
2806 (empirical Bayes); with the half-Cauchy prior it is 183 (57-2487; seed 1, the
defaults). Where the data bound ``kappa`` on one side only, the posterior mean of ``kappa``
(or of ``1 / kappa``) may not exist (the prior's ``kappa^-2`` tails): read its median and
quantiles (the report does), and ``ambppl.hyperprior_sensitivity`` says where the prior's
shape at that end decides the posterior (``near_identical``; not the spam data, where the
likelihood's steep upper wall does).

The same program in Stan notation::

    data {
      int<lower=1> N;  int<lower=2> K;
      array[N, K] int<lower=0> counts;
      vector<lower=0>[K] mu_prior;  real<lower=0> kappa_scale;
    }
    parameters {
      simplex[K] mu;
      real<lower=0> kappa;
      array[N] simplex[K] q;                 // integrated out by method="collapsed"
    }
    model {
      mu ~ dirichlet(mu_prior);
      kappa ~ cauchy(0, K * kappa_scale);     // half-Cauchy: kappa > 0
      for (i in 1:N) {
        q[i] ~ dirichlet(kappa * mu);
        counts[i] ~ multinomial(q[i]);
      }
    }
    generated quantities {   // per item, as in dirichlet_categorical
      vector[N] amb; vector[N] amb_modified; vector[N] amb_old; vector[N] entropy;
    }

How :func:`ambppl.fit` samples it (the info record's ``methods``, the first is the default):

- ``"collapsed"`` (default): ``q_i`` integrates out, ``counts_i | mu, kappa`` is
  Dirichlet-multinomial, and NUTS runs on ``mu`` and ``kappa`` alone (:func:`hyper_model`),
  with the likelihood of all items computed from sufficient statistics
  (:func:`ambppl.inference.modeling.count_statistics`), so its cost does not grow with the number of
  items. Each posterior draw of ``(mu, kappa)`` then gets one exact draw
  ``q_i ~ Dirichlet(kappa * mu + counts_i)`` for every item. Together these are draws from
  the joint posterior of ``(mu, kappa, q)``. NUTS runs at ``target_accept`` 0.95 (the info
  record's ``nuts_defaults``): where every item is unanimous the posterior of ``log kappa``
  has a steep upper wall and a long lower tail, and at 0.8 the spam data of the real-data
  gallery gave 3, 5, 1, 0 and 0 divergences over seeds 1-5, at 0.9 and 0.95 none (the
  sampling itself takes a second or two of the 16-20 s fit).
- ``"empirical_bayes"``: ``(mu, kappa)`` fixed at the maximum of the marginal likelihood
  (:func:`empirical_bayes`, ``scipy.optimize``), then exact draws of ``q_i`` given them. The
  priors of ``mu`` and ``kappa`` are not used: a ``mu_prior`` or ``kappa_scale`` other than
  the default is refused. It ignores the uncertainty about ``mu`` and
  ``kappa``; that matters when there are few items (tens) or few answers per item, and
  hardly at all for hundreds of items with several answers each, where the posterior of
  ``kappa`` is narrow (the notebook compares both).
- ``"nuts"``: NUTS on the full program (:func:`model`, ``q`` explicit). Slow and prone to
  divergences when ``kappa`` is small (the funnel of hierarchical models); it is kept as the
  proof that the collapsed route is right (the tests compare both).

The pointwise log likelihood is ``log p(answers_i | mu, kappa)`` with ``q_i`` integrated out
(:mod:`ambppl.inference.modeling`), one value per item and draw: leave-one-item-out predicts a new
item's answers from the prior learned on the others, comparable with ``dirichlet_categorical``
(:func:`ambppl.compare`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ambppl.inference.modeling import (
    CountStatistics,
    add_annotation_data,
    add_measures,
    count_statistics,
    count_values,
    dirichlet_multinomial_logp,
    model_coords,
    parameter_name,
    positive_parameter,
    prior_concentration,
    say,
)

#: Posterior variables the prior of q_i depends on.
HYPERPARAMETERS: tuple[str, ...] = ("mu", "kappa")

#: Bounds of log(kappa * mu_k) in the empirical-Bayes optimization.
LOG_CONCENTRATION_BOUNDS = (-14.0, 14.0)


def _check_params(
    n_categories: int, mu_prior: Any, kappa_scale: Any, categories: Any = None
) -> tuple[np.ndarray, float]:
    """The checked parameters: mu's Dirichlet concentration (a ``mu_prior`` labelled by
    category read by its labels against ``categories``, the counts' categories) and the scale
    (median) of kappa."""
    mu_alpha = prior_concentration(mu_prior, n_categories, "mu_prior", categories=categories)
    scale = positive_parameter(kappa_scale, "kappa_scale")
    return mu_alpha, n_categories * scale


def concentration(
    hyper: Any,
    *,
    n_categories: int,
    mu_prior: Any = 1.0,
    kappa_scale: float = 1.0,
) -> np.ndarray:
    """The Dirichlet concentration of ``q_i`` given the hyperparameters: ``kappa * mu``.

    Parameters
    ----------
    hyper : dict
        Arrays ``"mu"`` (shape (..., K)) and ``"kappa"`` (shape (...)), e.g. posterior draws
        with dims (chain, draw).
    n_categories : int
        Number of categories K.
    mu_prior, kappa_scale
        The model's parameters (unused here).

    Returns
    -------
    numpy.ndarray, shape (..., K)

    Raises
    ------
    ValueError
        If ``hyper`` lacks ``mu`` or ``kappa``.
    """
    if not isinstance(hyper, dict) or not {"mu", "kappa"} <= set(hyper):
        raise ValueError(
            "hyper must hold the draws of 'mu' and 'kappa', but got "
            f"{sorted(hyper) if isinstance(hyper, dict) else hyper!r}"
        )
    mu = np.asarray(hyper["mu"], dtype=np.float64)
    kappa = np.asarray(hyper["kappa"], dtype=np.float64)
    return kappa[..., None] * mu


def _hyperpriors(counts: Any, mu_prior: Any, kappa_scale: Any) -> tuple:
    """Add mu and kappa to the current model; return (mu, kappa, values, cs)."""
    import pymc as pm

    values, cs = count_values(counts)
    mu_alpha, median = _check_params(values.shape[1], mu_prior, kappa_scale, counts["category"])
    add_annotation_data(counts)
    mu = pm.Dirichlet("mu", a=mu_alpha, dims="category")
    # a float64 constant: PyTensor would take a Python float that float32 holds exactly (6.0)
    # as float32, and log(beta) in the normalizing constant would be off by ~1e-8
    kappa = pm.HalfCauchy("kappa", beta=np.float64(median))
    return mu, kappa, values, cs


def hyper_model(counts: Any, *, mu_prior: Any = 1.0, kappa_scale: float = 1.0) -> Any:
    """The collapsed program: ``mu`` and ``kappa`` with the ``q_i`` integrated out.

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")`` and ``attrs["cant_solve"]``.
    mu_prior : float, array_like or pandas.Series, default 1.0
        Dirichlet concentration of ``mu`` (one number or one per category: in the order of
        the counts' categories, or labelled by category, a Series indexed by the labels or a
        DataArray with a ``category`` coordinate, and read by its labels).
    kappa_scale : float, default 1.0
        Median of ``kappa / K`` under its half-Cauchy prior (the symmetric ``beta`` it
        corresponds to): ``kappa ~ HalfCauchy(K * kappa_scale)``.

    Returns
    -------
    pymc.Model
        Free variables ``mu`` (dims category) and ``kappa``; the potential ``log_marginal``
        ``= sum_i log p(answers_i | mu, kappa)``; ``pm.Data`` ``is_cant_solve``.

    Raises
    ------
    TypeError, ValueError
        For counts that are not a count DataArray or parameters that are not positive.
    """
    import pymc as pm

    with pm.Model(coords={"category": model_coords(counts)["category"]}) as collapsed:
        mu, kappa, values, _ = _hyperpriors(counts, mu_prior, kappa_scale)
        # The statistics enter as pm.Data (shared variables, not constants): the graph is
        # then the same for every data set with these categories and parameters, and fit's
        # collapsed route reuses its compiled log density across fits (a frozen model with
        # the data set in: ambppl.inference.reuse; compiling took 4-5 s of a small fit).
        stats = count_statistics(values)
        shared = CountStatistics(
            **{
                name: pm.Data(f"stats_{name}", getattr(stats, name))
                for name in ("category", "value", "weight", "total", "total_weight")
            },
            n_items=stats.n_items,
        )
        pm.Potential("log_marginal", dirichlet_multinomial_logp(shared, kappa * mu))
    return collapsed


def model(counts: Any, *, mu_prior: Any = 1.0, kappa_scale: float = 1.0) -> Any:
    """The full program with every ``q_i`` explicit (for ``method="nuts"``).

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")`` and ``attrs["cant_solve"]``.
    mu_prior, kappa_scale
        As in :func:`hyper_model`.

    Returns
    -------
    pymc.Model
        Free variables ``mu``, ``kappa`` and ``q`` (dims item, category), observed
        ``counts``, the measures as Deterministics and ``pm.Data`` ``is_cant_solve``.

    Raises
    ------
    TypeError, ValueError
        As :func:`hyper_model`.
    """
    import pymc as pm

    with pm.Model(coords=model_coords(counts)) as hierarchical_dirichlet:
        mu, kappa, values, cs = _hyperpriors(counts, mu_prior, kappa_scale)
        q = pm.Dirichlet("q", a=kappa * mu, shape=values.shape, dims=("item", "category"))
        pm.Multinomial(
            "counts", n=values.sum(axis=1), p=q, observed=values, dims=("item", "category")
        )
        add_measures(q, cant_solve=cs)
    return hierarchical_dirichlet


def _newton_polish(theta: np.ndarray, stats: Any, objective: Any, steps: int = 4) -> np.ndarray:
    """A few Newton steps on ``log a`` from the optimizer's answer (quadratic convergence).

    With ``g`` the gradient in ``a``, ``h_k = sum_c w_kc [psi'(a_k + c) - psi'(a_k)]`` and
    ``z = sum_n w_n [psi'(A + n) - psi'(A)]``, the Hessian in ``a`` is ``diag(h) - z``, and in
    ``theta = log a`` it is ``a a^T (diag(h) - z) + diag(a g)``. A step that is not an ascent
    direction (Hessian not negative definite) is not taken.
    """
    from scipy.special import polygamma

    for _ in range(steps):
        a = np.exp(theta)
        value, neg_grad_theta = objective(theta)
        a_pair = a[stats.category]
        h = np.bincount(
            stats.category,
            weights=stats.weight * (polygamma(1, a_pair + stats.value) - polygamma(1, a_pair)),
            minlength=len(a),
        )
        big_a = a.sum()
        z = np.sum(stats.total_weight * (polygamma(1, big_a + stats.total) - polygamma(1, big_a)))
        grad_theta = -neg_grad_theta
        hess = np.outer(a, a) * (np.diag(h) - z) + np.diag(grad_theta)
        try:
            step = np.linalg.solve(hess, grad_theta)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.linalg.eigvalsh(hess) < 0):
            break
        new = theta - step
        if objective(new)[0] > value:  # no improvement: already at the float optimum
            break
        theta = new
    return theta


def empirical_bayes(
    counts: Any, *, mu_prior: Any = 1.0, kappa_scale: float = 1.0
) -> dict[str, np.ndarray]:
    """``mu`` and ``kappa`` at the maximum of the marginal likelihood (type-II ML).

    Parameters
    ----------
    counts : xarray.DataArray
        Counts with dims ``("item", "category")``.
    mu_prior, kappa_scale
        Accepted for a uniform signature (and a fit's recorded parameters), checked, and
        refused unless left at their defaults: empirical Bayes maximizes the likelihood, not
        the posterior, so another hyperprior would change nothing.

    Returns
    -------
    dict
        ``{"mu": array (K,), "kappa": float array ()}``.

    Raises
    ------
    ValueError
        For a ``mu_prior`` other than 1 per category or a ``kappa_scale`` other than 1 (the
        defaults): use ``method="collapsed"`` or ``"nuts"`` for a hyperprior.

    Warns
    -----
    UserWarning
        If the maximum lies at a bound of ``log(kappa * mu_k)`` (:data:`LOG_CONCENTRATION_BOUNDS`):
        a category nobody used drives ``mu_k`` to 0, and data with no more spread than
        multinomial noise drive ``kappa`` to infinity. The bounded estimate is returned.

    Notes
    -----
    Maximizes ``sum_i log p(answers_i | a)`` over ``log a`` (``a = kappa * mu``) with
    truncated Newton (``scipy.optimize.minimize(method="TNC")``), the exact gradient
    ``d/da_k = sum_c w_kc [psi(a_k + c) - psi(a_k)] - sum_n w_n [psi(A + n) - psi(A)]``
    from the sufficient statistics (Minka 2000, "Estimating a Dirichlet distribution"), and
    then Newton steps on the exact Hessian to full precision.
    """
    from scipy.optimize import minimize
    from scipy.special import digamma

    values, _ = count_values(counts)
    k = values.shape[1]
    mu_alpha, _ = _check_params(k, mu_prior, kappa_scale, counts["category"])
    # fit passes only the caller's keywords; a refit from a fit's record passes the defaults
    unused = {
        name: value
        for name, value, default in (
            ("mu_prior", mu_prior, bool(np.all(mu_alpha == 1.0))),
            ("kappa_scale", kappa_scale, positive_parameter(kappa_scale, "kappa_scale") == 1.0),
        )
        if not default
    }
    if unused:
        names = " and ".join(parameter_name(name) for name in unused)
        got = ", ".join(f"{name}={np.asarray(v).tolist()!r}" for name, v in unused.items())
        they, them = ("they", "them") if len(unused) > 1 else ("it", "it")
        here = say("method='empirical_bayes'", "--method empirical_bayes")
        others = say("method='collapsed' or 'nuts'", "--method collapsed or nuts")
        raise ValueError(
            f"{names} must be left out with {here}, but got {got}: empirical Bayes estimates "
            "mu and kappa by maximum marginal likelihood and takes no hyperprior, so "
            f"{they} would change nothing; drop {them}, or use {others}, whose hyperprior "
            f"{'they set' if len(unused) > 1 else 'it sets'}"
        )
    stats = count_statistics(values)

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        a = np.exp(theta)
        big_a = a.sum()
        value = dirichlet_multinomial_logp(stats, a)
        a_pair = a[stats.category]
        per_pair = stats.weight * (digamma(a_pair + stats.value) - digamma(a_pair))
        grad = np.bincount(stats.category, weights=per_pair, minlength=k)
        grad -= np.sum(stats.total_weight * (digamma(big_a + stats.total) - digamma(big_a)))
        return -float(value), -grad * a

    lo, hi = LOG_CONCENTRATION_BOUNDS
    used = values.sum(axis=0) > 0
    theta = np.full(k, lo)  # a category nobody used: the likelihood grows as mu_k -> 0
    pooled = (values.sum(axis=0) + 0.5) / (values.sum() + 0.5 * k)

    def partial(t: np.ndarray) -> tuple[float, np.ndarray]:
        full = theta.copy()
        full[used] = t
        value, grad = objective(full)
        return value, grad[used]

    res = minimize(
        partial,
        np.log(k * pooled[used]),
        jac=True,
        method="TNC",  # as L-BFGS-B here and ~10x faster (scipy 1.18)
        bounds=[(lo, hi)] * int(used.sum()),
    )
    theta[used] = res.x
    at_bound = (not np.all(used)) or bool(np.any(res.x >= hi - 1.0))
    if not at_bound:  # polish to full precision with Newton steps on the exact Hessian
        polished = _newton_polish(theta, stats, objective)
        # the optimizer can stop short where the likelihood still rises slowly towards the
        # bound (under-dispersed items: kappa -> infinity); Newton then leaves the box
        # (default_rng(2), 60 items x 5 answers at p = 0.3 went to kappa = 1.7e10)
        at_bound = bool(np.any(polished > hi - 1.0) or np.any(polished < lo))
        theta = theta if at_bound else polished
    if at_bound:
        warnings.warn(
            "empirical_bayes: the marginal likelihood is largest at a bound of log(kappa * mu) "
            f"= {list(LOG_CONCENTRATION_BOUNDS)} (a category nobody used drives mu_k to 0; "
            "no spread beyond multinomial noise drives kappa to infinity); the bounded "
            "estimate is used. method='collapsed' averages over the uncertainty instead",
            UserWarning,
            stacklevel=2,
        )
    a = np.exp(theta)
    return {"mu": a / a.sum(), "kappa": np.asarray(a.sum())}
