r"""Rater-effects model: per-item response logits plus per-rater biases, from single answers.

Every answer ``a`` (item ``i[a]``, rater ``r[a]``, category ``y_a``) is a draw from the
softmax of the item's logits ``eta_i`` shifted by the rater's bias ``b_r``:

.. math::

   y_a \sim \mathrm{Categorical}\big(\mathrm{softmax}(\eta_{i[a]} + b_{r[a]})\big),

with both effects partially pooled over their populations (``P = I - 11'/K`` centres a
vector over the ``K`` categories):

.. math::

   \mu &\sim \mathrm{ZeroSumNormal}(\texttt{mu\_sd}) \text{ over categories}, \quad
   \sigma^{item}_k \sim \mathrm{HalfNormal}(\texttt{item\_scale}), \quad
   \sigma^{rater}_k \sim \mathrm{HalfNormal}(\texttt{rater\_scale}), \\
   \eta_i &= P z_i, \quad z_i \sim N(\mu, \mathrm{diag}(\sigma^{item\,2})), \qquad
   b_r = P e_r, \quad e_r \sim N(0, \mathrm{diag}(\sigma^{rater\,2})).

So ``eta_i`` is ``N(mu, diag(sigma_item^2))`` projected to zero sum, and ``b_r`` a draw of the
*rater population* ``N(0, diag(sigma_rater^2))`` projected to zero sum. With two categories
the two scales of each population are one shared scale (``sigma_1 = sigma_2``; below).

Two categories: one shared scale
--------------------------------
For ``K = 2`` the projection keeps one number per item, ``eta_i = (x_i, -x_i) / sqrt(2)``, and
``P diag(sigma_1^2, sigma_2^2) P`` is ``(sigma_1^2 + sigma_2^2) / 4`` times a fixed matrix:
only ``sigma_1^2 + sigma_2^2`` enters the likelihood, the split between the two follows the
prior alone, and NUTS wandered along that curved ridge (on real two-class data R-hat 1.3-1.8,
bulk ESS 6-11, hundreds of divergences). So for ``K = 2`` the model has *one* scale per
population, ``sigma_item_shared`` and ``sigma_rater_shared`` (``HalfNormal(item_scale)``,
``HalfNormal(rater_scale)``; the stored ``sigma_item`` and ``sigma_rater`` repeat it per
category, so every reader of the fit sees the same variables for every ``K``). One shared
scale rather than a reference category (``eta_i = (0, x_i)``): the shared scale *is* the
model above restricted to ``sigma_1 = sigma_2``, keeps both labels symmetric (a reference
category would make the prior depend on which label is listed first) and keeps ``eta``,
``b``, ``q`` and every summary defined as for ``K >= 3``; the two parameterizations give the
same family of distributions for the identified ``x_i`` (``N(., sigma^2)`` either way).

Identifiability
---------------
- The softmax ignores a constant added to all ``K`` logits, so only ``P eta_i`` and ``P b_r``
  are identified: the stored ``eta`` (item, category) and ``b`` (rater, category) sum to zero
  over the categories, and so does ``mu`` (a ``ZeroSumNormal``). The program NUTS samples
  has no coordinate along the unidentified direction (below), so none follows its prior.
- Item effects and rater effects share one more direction: ``eta_i + c`` and ``b_r - c`` give
  the same likelihood for any zero-sum ``c``. The hierarchical priors pin it: the raters'
  population mean is 0, so ``mu`` is the logit of a rater with zero bias (``c`` has posterior
  sd of about ``sigma_rater / sqrt(raters)``). NUTS samples this direction in its own
  coordinate (``e_bar``, "Sampling").
- ``sigma_rater`` is identified per category for ``K >= 3`` (the off-diagonal entries of
  ``P diag(sigma^2) P`` give every pairwise sum ``sigma_j^2 + sigma_k^2``); for ``K = 2``
  only ``sigma_1^2 + sigma_2^2`` is, hence the shared scale. The same holds for
  ``sigma_item``.

Sampling: the coordinates NUTS sees
-----------------------------------
The program NUTS samples is the model above in other coordinates (an exact
reparameterization: the same posterior, checked against a scipy computation of the density
above in ``tests/inference/test_model_rater_effects.py``). Each choice removes a slow
direction that was measured, per variable, with
:func:`ambppl.inference.convergence.check_convergence`, the per-variable ESS and the E-BFMI
of nutpie's energy (``benchmarks/rater_effects_real.py``):

1. *Zero-sum coordinates.* With ``Q`` an orthonormal basis of the zero-sum vectors (``K x
   (K - 1)``, Helmert contrasts; dim ``contrast``), ``w_i = Q' eta_i ~ N(Q' mu, Sigma_item)``
   and ``v_r = Q' b_r ~ N(0, Sigma_rater)`` with ``Sigma = Q' diag(sigma^2) Q`` (full rank),
   and ``L`` its Cholesky factor. The earlier program kept ``K`` free normals per item and
   rater, one of them along the unidentified direction; in the centred form that direction's
   prior variance depends on every ``sigma_item``, so ``sigma_item`` had to move with a
   thousand prior-only numbers (the funnel of "I can't tell" on the weather data: R-hat 2.0
   with the old defaults).
2. *Non-centred item effects, their mean split off* (``z`` and ``z_bar``): ``w_i = mu +
   L z_i``, ``z_i ~ N(0, I)``, written as the items' mean ``z_bar ~ N(0, I / N)`` plus
   deviations ``z`` (zero-sum over items), exactly ``N`` independent standard normals.
   Non-centred, because items with 1-10 answers (most real designs) and unanimous items (whose
   likelihood is one-sided) do not pin ``w_i`` (centred, the face data stalled at tree depth
   10); the mean split, because the data pin the items' mean: without it ``m`` moved only
   when all ``N`` ``z_i`` moved together (bulk ESS of ``m`` 337-411 on the face data, 768
   with the split). ``centred=True`` gives centred items (``w ~ N(m - g, Sigma_item)``).
3. *Rater effects centred where the data pin them, non-centred elsewhere.* A non-centred
   rater with hundreds of answers ties ``sigma_rater`` to its ``e_r = L^-1 v_r`` (the slowest
   quantity on the weather data: bulk ESS 440 of 4000 draws); a centred rater with few
   answers, or any centred rater when ``sigma_rater`` is near 0 (raters that agree, e.g. the
   spam data), makes a funnel (anesthesia's 5 raters: 33-560 divergences; the spam data:
   tree depth 10). :func:`centring` estimates ``sigma_rater`` from the count tables (a
   method of moments, milliseconds) and centres a rater when its answers pin its bias at
   least :data:`CENTRED_SNR` times more tightly (in variance) than that population does, in
   designs with at least :data:`CENTRED_MIN_RATERS` raters (weather: 92 of 102 raters centred,
   face 11 of 27, spam 0 of 153). The centred group ``C`` and the non-centred group ``P``
   are each split into their mean and deviations: ``v_r = d + (|P|/R) gap + H u_r`` for
   ``r`` in ``C`` (``u_rater``: ``|C| - 1`` iid ``N(0, Sigma_rater)`` rows, ``H`` an
   orthonormal map to deviations summing to zero, :func:`_zero_sum_extend`) and ``v_r = d -
   (|C|/R) gap + L e_dev_r`` for ``r`` in ``P`` (``e_dev``: zero-sum standard normals), with
   the raters' mean ``d = L e_bar``, ``e_bar ~ N(0, I / R)``, and ``rater_gap ~ N(0,
   Sigma_rater (1/|C| + 1/|P|))`` the difference of the two groups' means (independent of
   ``d``: an exact decomposition of ``R`` iid ``N(0, Sigma_rater)`` vectors). Weather:
   bulk ESS of ``sigma_rater`` 440 -> 862, face 668 -> 1495, two-class Barzan data 554 ->
   1959. ``centred_raters=True`` / ``False`` centres all raters / none.
4. *The shared direction in its own coordinate* (``e_bar``, ``m``): ``d`` (the raters' mean
   bias) and ``g = L z_bar`` (the non-centred items' mean effect) move into the items'
   centre, ``m = mu + d + g`` (free, declared ``ZeroSumNormal(mu_sd)``), so the likelihood
   sees ``w_i + d = m + L z_dev_i`` and ``v_r - d`` only; ``mu = m - d - g`` keeps its
   ``ZeroSumNormal(mu_sd)`` prior through the potential ``mu_prior`` (``log ZSN(m - s) -
   log ZSN(m)``, ``s = d + g``; the shift has Jacobian 1). Without it moving ``c`` meant
   moving all ``N + R`` effect vectors together (bulk ESS of ``mu`` 249 of 2000 draws in the
   first version).

Stored: ``eta_i = Q (w_i + d) - Q d`` and ``b_r = Q v_r``, exactly the model's quantities,
``mu``, ``sigma_item``, ``sigma_rater`` and every free variable: ``sigma_item`` and
``sigma_rater`` (category; ``K = 2``: ``sigma_item_shared``, ``sigma_rater_shared``), ``m``
(category), ``e_bar`` and ``z_bar`` (contrast), ``z`` (contrast, item_nc), ``e_dev``
(contrast, rater_nc), ``u_rater`` (rater_c_dev, contrast) and ``rater_gap`` (contrast) where
the design has centred raters, ``w`` (item_c, contrast) with ``centred=True``.

Per-item outputs
----------------
``q`` (item, category) is the *population* response distribution, the answer distribution of
a rater drawn at random from the rater population:

.. math::

   q_i = E_{b \sim N(0, \mathrm{diag}(\sigma^{rater\,2}))}\,[\mathrm{softmax}(\eta_i + b)]
       \approx \frac1S \sum_{s=1}^S \mathrm{softmax}(\eta_i + \sigma^{rater} \odot u_s),

with ``S = n_nodes`` scrambled-Sobol normal nodes ``u_s`` (:func:`qmc_nodes`, a fixed seed, so
every item and every draw uses the same nodes; the projection ``P`` does not change a
softmax). The ambiguity measures ``amb``, ``amb_modified``, ``amb_old`` and ``entropy`` are
those of ``q_i`` (the names of every catalog model, so :func:`ambppl.summarize` works).
``q_typical = softmax(eta_i)`` and ``amb_typical`` describe the *typical* rater (zero bias),
which is not the average rater: averaging over rater biases flattens ``q_i``, so
``amb >= amb_typical`` for most items.

Approximation error of ``q`` (measured against 2^17 Sobol nodes, 300 items with logits of sd
2, ``tests/inference/test_model_rater_effects.py``): with ``S = 256`` the largest absolute
error of any ``q_ik`` is about 0.0015 for ``sigma_rater`` near 0.5, 0.003 near 1 and 0.01
near 2 (plain Monte Carlo with 256 nodes: 0.01, 0.02, 0.04). That is far below the posterior sd of
``q_ik`` with 20 answers per item (0.05-0.1).

Unbalanced designs
------------------
The answers are index vectors, never an item x rater matrix, so any design is valid (each
case is tested in ``tests/inference/test_model_rater_effects.py``):

- *each item rated by a different subset of raters*: the usual case; an item's answers enter
  through its own raters' biases only.
- *repeated answers* (a rater answering an item twice): each answer is its own categorical
  draw given ``eta_i`` and ``b_r``; both count (``rater_answers`` counts answers, not items).
- *raters with one answer*: their ``b_r`` stays close to the population ``N(0,
  diag(sigma_rater^2))``; the odds-ratio HDI is wide and contains 1, so one answer never
  makes an over-user.
- *items answered only "can't solve"*: ``eta_i`` moves towards can't-solve as the
  item prior allows; ``q_i`` puts the largest can't-solve share of all items there.
- *categories nobody used*: kept (``read_long(categories=...)``); their ``mu`` and ``q`` go
  low, bounded by the priors, with no special case.
- *one rater with half of all answers, raters with one answer, items with one answer*:
  :func:`centring` centres the raters whose answers pin them (the dominant one) and keeps
  the others (and all items) non-centred, so neither group makes a funnel; the item and
  rater scales are then identified mostly by the items and raters with several answers
  (on the ``sparse`` design of ``benchmarks/rater_effects_real.py`` the two scales trade
  off, the slowest quantities of the fit).
- *answers without a rater id*: refused with a ``ValueError`` that names ``rater=`` (the CLI
  exits 2 and names ``--rater``).

Computation. ``q`` is a ``pm.Deterministic``, computed from ``D = exp(eta) exp(B)'`` (items x
nodes) as ``q = exp(eta) * (D^-1 exp(B)) / S`` with ``B_s = sigma_rater * u_s`` (each
exponent shifted by its row maximum): two matrix products, ``2 N S K`` multiply-adds and no
exponential per node. :func:`ambppl.fit` samples the free variables only and computes every
deterministic afterwards, once per kept draw (``pymc.compute_deterministics``): 0.6 ms per
draw for ``q`` at 1000 items and ``S = 256``, 3 ms for all outputs. (Inside the sampler the
same deterministics cost every warm-up draw as well, in each chain's thread, with BLAS threads
competing with the chains: computing them there doubled the sampling time.)

Convergence with the defaults
-----------------------------
Measured with ``benchmarks/rater_effects_real.py`` (4 chains x 2000 draws after 1000 tuning
steps, nutpie, 2 cores, 2026-11-27; the documentation's benchmarks page has the full table):
the standard (R-hat <= 1.01, bulk and tail ESS >= 400, no divergences) is met on the
anesthesia data (5 raters: ``target_accept`` 0.9 for fewer than 10 raters,
:func:`nuts_defaults`; seeds 1-5), the weather data (1000 items x 20 answers, 261 s), face
sentiment (53 s), the two-class Barzan (39 s) and product (8315 items x 3 answers, 301 s)
data, and the simulated ``two_classes``, ``three_answers``, ``dominant_rater``,
``near_identical`` and ``sparse`` designs (``sparse``: a longer warm-up and more draws for
designs with many items of one or two answers, :func:`nuts_defaults`; seeds 1-3, 66-72 s),
the simulated crowds shaped like public sets the project has not used (answers from a
Dawid-Skene process with Zipf rater volumes and spammers, ``benchmarks/gallery.py``,
2026-11-28: ``crowd_two_classes``, 800 x 10 answers from 164 raters, 49 s;
``crowd_cant_solve``, 1600 x 5 from 44 raters with a can't-solve answer, 123 s;
``crowd_dense``, 108 items x 39 raters, 28 s; 2026-11-29: ``crowd_few_answers``, 3000 x 3
from 150 raters, the busiest a seventh of all answers, 117 s),
and, just, the ``many_raters`` design (10^4 items x 5 answers from 10^3 raters without rater
effects: R-hat 1.0071 on ``sigma_rater``, bulk / tail ESS 483 / 562, 558 s, 13.8 GB, alone
on the cores; an earlier run with other jobs sharing them gave R-hat 1.012, 535 s).
The spam data, unanimous on every item, meet it too, but slowly (1099 s for 42762 answers,
against the 10-minute target; :func:`model` warns before sampling; ``_warn_if_unanimous``
says why). Not met: the dog photos (``sigma_item`` mixes slowly: smallest bulk ESS 165 of
8000 draws, R-hat 1.03; their items form one cluster per breed, which ``dawid_skene``
models; the info record's ``slow`` entry makes the convergence advice say so).

The model in Stan notation (the textbook coordinates; NUTS samples the coordinates of
"Sampling", the same distribution)::

    data {
      int<lower=1> N;  int<lower=1> R;  int<lower=2> K;  int<lower=1> A;  // answers
      array[A] int<lower=1, upper=N> item;
      array[A] int<lower=1, upper=R> rater;
      array[A] int<lower=1, upper=K> y;
      int<lower=1> S;  array[S] vector[K] u;            // QMC normal nodes (fixed)
      real mu_sd;  real item_scale;  real rater_scale;
    }
    parameters {
      sum_to_zero_vector[K] mu;
      vector<lower=0>[K] sigma_item;                    // K = 2: one shared scale,
      vector<lower=0>[K] sigma_rater;                   //   sigma[1] == sigma[2]
      array[N] vector[K] z;                             // item effects
      array[R] vector[K] e;                             // rater effects
    }
    transformed parameters {
      array[N] vector[K] eta;  array[R] vector[K] b;
      for (i in 1:N) eta[i] = z[i] - mean(z[i]);
      for (r in 1:R) b[r] = e[r] - mean(e[r]);
    }
    model {
      mu ~ normal(0, mu_sd);                            // zero-sum normal
      sigma_item ~ normal(0, item_scale);
      sigma_rater ~ normal(0, rater_scale);
      for (i in 1:N) z[i] ~ normal(mu, sigma_item);
      for (r in 1:R) e[r] ~ normal(0, sigma_rater);
      for (a in 1:A) y[a] ~ categorical_logit(eta[item[a]] + b[rater[a]]);
    }
    generated quantities {
      array[N] simplex[K] q;                            // population response distribution
      for (i in 1:N) {
        q[i] = rep_vector(0, K);
        for (s in 1:S) q[i] += softmax(eta[i] + sigma_rater .* u[s]) / S;
      }
      // amb, amb_modified, amb_old, entropy of q[i]; q_typical[i] = softmax(eta[i]),
      // amb_typical[i] = amb(q_typical[i])
    }

The likelihood is evaluated without a loop and without an item x rater matrix: the linear
part as ``sum(counts * eta) + sum(rater_counts * b)`` and the normalizer per answer as
``log sum_k exp(eta_ik - m_i) exp(b_rk - m_r) + m_i + m_r`` (row maxima ``m``), gathered by
index vectors; this is 3x faster than a ``logsumexp`` of the gathered logits (and a
``pm.Categorical``), gradient included. The model has no observed variable (a
``pm.Potential`` holds the likelihood), so ``pm.sample_posterior_predictive`` has nothing to
draw.

Log likelihood (``log_likelihood`` group)
-----------------------------------------
:func:`log_likelihood` gives, per item and draw, ``log p(answers_i | eta_i, b) =
sum_{a in i} log softmax(eta_i + b_{r[a]})[y_a]`` (no multinomial coefficient), i.e.
*conditional on the item's own effect* ``eta_i``. It is **not** the quantity of the Dirichlet
models, whose log likelihood integrates their ``q_i`` out (:mod:`ambppl.inference.modeling`).
PSIS-LOO on it asks how well the fit predicts an item's answers *given that item's own parameters*,
it usually flags many items with Pareto k > 0.7, and its ``elpd`` is not comparable with
``dirichlet_categorical`` or ``hierarchical_dirichlet``. The comparable quantity integrates
``eta_i`` over ``N(mu, diag(sigma_item^2))``: :func:`integrated_log_likelihood` (importance
sampling around the item's posterior, not prior nodes: 20 answers make the integrand far
narrower than the prior), and :func:`with_integrated_log_likelihood` gives a thinned copy of
the fit that :func:`ambppl.loo` and :func:`ambppl.compare` accept beside a Dirichlet model.

Rater outputs: ``b`` (rater, category) in the posterior (``rater`` coordinate: the original
ids) and ``rater_answers`` (rater; the number of answers of each rater), ``answer_item`` and
``answer_rater`` (answer; the positions of each answer's item and rater) in ``constant_data``,
read by ``ambppl.summarize(result, level="rater")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl import amb
from ambppl.data.matrices import refuse_other_counts
from ambppl.inference.modeling import (
    add_annotation_data,
    add_measures,
    answer_codes,
    flag_parameter,
    positive_parameter,
    qmc_normal_nodes,
    warn_if_unanimous,
)

#: What ``fit``'s ``log_likelihood`` group holds: ``log p(answers_i | eta_i, b)``, given the
#: item's own effect (module docstring); :func:`ambppl.compare` refuses to rank it beside the
#: other models unless :func:`with_integrated_log_likelihood` replaced it.
LOG_LIKELIHOOD = "conditional"

#: Posterior variables always stored by ``fit`` (``log_likelihood`` reads ``eta`` and ``b``).
HYPERPARAMETERS: tuple[str, ...] = ("mu", "sigma_item", "sigma_rater", "eta", "b")

#: Free variables that carry the hyperprior where the hyperparameters do not: with two
#: categories one scale each is shared (``sigma_item`` is a copy of ``sigma_item_shared``),
#: and ``fit`` stores their prior density in ``log_prior`` for
#: :func:`ambppl.hyperprior_sensitivity`, as it stores ``sigma_item``'s with three or more.
HYPERPRIORS: tuple[str, ...] = ("sigma_item_shared", "sigma_rater_shared")

#: :func:`centring`: a rater's effect is centred when its answers pin it this many times more
#: tightly (in variance) than the rater population does ...
CENTRED_SNR = 4.0

#: ... and the design has at least this many raters.
CENTRED_MIN_RATERS = 10

#: Seed of the scrambled Sobol sequence of :func:`qmc_nodes` (fixed: every fit, every item and
#: every draw uses the same nodes).
QMC_SEED = 20240601


def qmc_nodes(n_nodes: int, n_categories: int) -> np.ndarray:
    """Quasi-Monte Carlo standard normal nodes for the rater-population expectation:
    :func:`ambppl.inference.modeling.qmc_normal_nodes` with this model's :data:`QMC_SEED`.

    Parameters
    ----------
    n_nodes : int
        Number of nodes ``S``.
    n_categories : int
        Answer categories ``K`` (the dimension of each node).

    Returns
    -------
    numpy.ndarray, shape (n_nodes, n_categories)

    Examples
    --------
    >>> qmc_nodes(64, 3).shape
    (64, 3)
    """
    return qmc_normal_nodes(n_nodes, n_categories, QMC_SEED)


def population_q(eta: Any, sigma_rater: Any, nodes: np.ndarray) -> Any:
    """The population response distribution ``q_i = E_b[softmax(eta_i + b)]`` by QMC.

    Parameters
    ----------
    eta : numpy.ndarray or pytensor tensor, shape (..., N, K)
        Item logits.
    sigma_rater : numpy.ndarray or pytensor tensor, shape (..., K)
        Rater-population scales per category (batch dims as ``eta``'s leading ones).
    nodes : numpy.ndarray, shape (S, K)
        Standard normal nodes (:func:`qmc_nodes`).

    Returns
    -------
    same kind as ``eta``, shape (..., N, K)
        ``(1/S) sum_s softmax(eta_i + sigma_rater * u_s)``.

    Notes
    -----
    With ``E = exp(eta - max)`` and ``C_s = exp(B_s - max)``, ``B_s = sigma_rater * u_s``:
    ``softmax(eta_i + B_s)_k = E_ik C_sk / D_is`` where ``D = E C'``, hence
    ``q = E * (D^-1 C) / S``: two matrix products and no exponential per node.

    Examples
    --------
    >>> import numpy as np
    >>> q = population_q(np.zeros((2, 3)), np.ones(3), qmc_nodes(256, 3))
    >>> bool(np.allclose(q.sum(axis=-1), 1.0) and np.abs(q - 1 / 3).max() < 0.005)
    True
    """
    if type(eta).__module__.startswith("pytensor"):
        import pytensor.tensor as pt

        # Broadcast products and sums instead of matrix products: a BLAS call inside a
        # sampler's per-draw function starts BLAS threads that fight the chains for the
        # cores (20 ms per draw instead of 4 on 2 busy cores).
        big_b = sigma_rater[..., None, :] * nodes  # (..., S, K)
        e = pt.exp(eta - pt.max(eta, axis=-1, keepdims=True))
        c = pt.exp(big_b - pt.max(big_b, axis=-1, keepdims=True))
        d = pt.matmul(e, pt.swapaxes(c, -1, -2))  # (..., N, S)
        return e * pt.matmul(1.0 / d, c) / nodes.shape[0]
    eta = np.asarray(eta, dtype=np.float64)
    big_b = np.asarray(sigma_rater, dtype=np.float64)[..., None, :] * nodes
    e = np.exp(eta - eta.max(axis=-1, keepdims=True))
    c = np.exp(big_b - big_b.max(axis=-1, keepdims=True))
    d = e @ np.swapaxes(c, -1, -2)  # (..., N, S)
    return e * ((1.0 / d) @ c) / nodes.shape[0]


def simulate_answers(eta: Any, b: Any, item: Any, rater: Any, *, rng: Any = None) -> np.ndarray:
    """Simulate answers ``y_a ~ Categorical(softmax(eta_{i[a]} + b_{r[a]}))``, vectorized.

    The model's own data-generating step, used by :func:`ambppl.validation.sbc` (which finds
    it as a module attribute and passes the prior draws of the variables named by its
    parameters) and by ``benchmarks/recovery_rater_effects.py``.

    Parameters
    ----------
    eta : array_like, shape (..., N, K)
        Item logits (any leading batch dimensions, e.g. one per simulation).
    b : array_like, shape (..., R, K)
        Rater biases, with the same leading dimensions as ``eta``.
    item, rater : array_like of int, shape (A,)
        Position (``0..N-1``, ``0..R-1``) of each answer's item and rater: the design.
    rng : numpy.random.Generator, int or None
        Seed or generator (``numpy.random.default_rng``).

    Returns
    -------
    numpy.ndarray of int64, shape (..., A)
        The category position (``0..K-1``) of every answer.

    Raises
    ------
    ValueError
        If the shapes do not match or a position is out of range.

    Notes
    -----
    Gumbel-max: ``argmax_k (eta_ik + b_rk + G_k)`` with independent standard Gumbel ``G_k``
    is an exact draw from ``softmax(eta_i + b_r)``; no softmax is formed, so any finite
    logits work. Memory: one ``(..., A, K)`` array of doubles.

    Examples
    --------
    >>> import numpy as np
    >>> eta = np.array([[9.0, 0.0, 0.0], [0.0, 0.0, 9.0]])        # item 0: "a", item 1: "c"
    >>> y = simulate_answers(eta, np.zeros((2, 3)), [0, 0, 1], [0, 1, 1], rng=0)
    >>> y.tolist()
    [0, 0, 2]
    """
    eta = np.asarray(eta, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    item = np.asarray(item)
    rater = np.asarray(rater)
    if eta.ndim < 2 or b.ndim != eta.ndim or eta.shape[-1] != b.shape[-1]:
        raise ValueError(
            "eta (..., items, categories) and b (..., raters, categories) must have the same "
            f"number of dimensions and categories, but got shapes {eta.shape} and {b.shape}"
        )
    if eta.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            f"eta and b must have the same leading dimensions, but got {eta.shape[:-2]} and "
            f"{b.shape[:-2]}"
        )
    for name, idx, size in (("item", item, eta.shape[-2]), ("rater", rater, b.shape[-2])):
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"{name} must be a 1-D array of positions, but got {idx!r}")
        if idx.size and (idx.min() < 0 or idx.max() >= size):
            raise ValueError(f"{name} positions must lie in 0..{size - 1}, but got {idx!r}")
    if item.shape != rater.shape:
        raise ValueError(
            f"item and rater must have one entry per answer, but got {item.size} and {rater.size}"
        )
    rng = np.random.default_rng(rng)
    logits = eta[..., item, :] + b[..., rater, :]
    return np.argmax(logits + rng.gumbel(size=logits.shape), axis=-1).astype(np.int64)


def _codes(answers: Any) -> dict[str, Any]:
    """Integer codes of the answers' items, raters and categories (checked)."""
    return answer_codes(answers, "rater_effects")


def _tables(codes: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Answers per (item, category) and per (rater, category)."""
    k = len(codes["categories"])
    n, r = len(codes["item_ids"]), len(codes["rater_ids"])
    item_counts = np.bincount(codes["item"] * k + codes["y"], minlength=n * k).reshape(n, k)
    rater_counts = np.bincount(codes["rater"] * k + codes["y"], minlength=r * k).reshape(r, k)
    return item_counts, rater_counts


#: ``target_accept`` for designs with fewer than :data:`CENTRED_MIN_RATERS` raters.
FEW_RATERS_TARGET_ACCEPT = 0.9
#: A design is *sparse* when at least this share of its items has at most two answers.
SPARSE_ITEM_SHARE = 0.1
#: Warm-up and draws for sparse designs (the info record's defaults: 1000 and 2000).
SPARSE_NUTS = {"tune": 1500, "draws": 3000}


def nuts_defaults(answers: Any, **params: Any) -> dict[str, Any]:
    """NUTS settings that depend on the design, over the info record's ``nuts_defaults``.

    Two rules, each measured with ``benchmarks/rater_effects_real.py`` (2 cores,
    2026-11-27); ``fit``'s own ``draws=`` and ``sample_kwargs=`` win over both:

    - **Few raters** (fewer than :data:`CENTRED_MIN_RATERS`): the posterior of
      ``sigma_rater`` is wide and reaches towards 0 (a handful of raters say little about
      their population's spread), where the step size tuned for the bulk diverges now and
      then: ``target_accept`` is :data:`FEW_RATERS_TARGET_ACCEPT` (0.8 otherwise, PyMC's and
      nutpie's default). On the anesthesia data (45 items, 5 raters, ``--seed S``,
      S = 1..5): divergences 1, 0, 0, 0, 7 at 0.8 and none at 0.9, at about 1.5 times the
      time (20-30 s against 34-44 s).
    - **Sparse items** (at least :data:`SPARSE_ITEM_SHARE` of the items with one or two
      answers): such items pin their own effect weakly, the item scales ``sigma_item`` are
      learned from the other items and mix slowly, so the warm-up and the draws are
      :data:`SPARSE_NUTS`. On the ``sparse`` design (600 items, 43 % with at most two
      answers, 150 one-answer raters, one rater with half of the answers) the defaults gave
      ``sigma_item`` R-hat 1.022, bulk / tail ESS 200 / 142 (54 s); ``tune=2000`` 413 / 361
      (60 s); ``tune=1500, draws=3000`` R-hat 1.0045, 766 / 691 (75 s). Centred item or
      rater effects were far worse (R-hat 1.02-1.07, ESS 39-187). No data set in
      ``../shared/data`` has such items.

    Parameters
    ----------
    answers : pandas.DataFrame
        One row per answer (:func:`ambppl.data.readers.read_long`).
    **params
        The model's parameters (unused: the settings depend on the design only).

    Returns
    -------
    dict
        The settings that apply (empty for designs that need neither rule).

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data.readers import read_long
    >>> frame = pd.DataFrame({"item": [1, 1, 2], "rater": ["a", "b", "a"],
    ...                       "label": ["x", "y", "x"]})
    >>> nuts_defaults(read_long(frame, item="item", rater="rater", label="label"))
    {'target_accept': 0.9, 'tune': 1500, 'draws': 3000}
    """
    codes = _codes(answers)  # refuses counts or an untyped table by name
    settings: dict[str, Any] = {}
    if len(codes["rater_ids"]) < CENTRED_MIN_RATERS:
        settings["target_accept"] = FEW_RATERS_TARGET_ACCEPT
    per_item = np.bincount(codes["item"])
    if np.mean(per_item <= 2) >= SPARSE_ITEM_SHARE:
        settings.update(SPARSE_NUTS)
    return settings


def centring(answers: Any) -> dict[str, Any]:
    """The default parameterization of the item and rater effects for these answers.

    Parameters
    ----------
    answers : pandas.DataFrame
        One row per answer (:func:`ambppl.data.readers.read_long`).

    Returns
    -------
    dict
        ``items``: a boolean array, one entry per item (in order of first appearance),
        ``True`` for a centred item effect: all ``False`` (non-centred item effects whatever
        the design, module docstring "Sampling"); ``raters``: the same per rater;
        ``sigma_rater_hat``: the pilot estimate of the rater sd behind the choice;
        ``rater_snr``: per rater, the ratio of ``sigma_rater_hat^2`` to the sampling variance
        of the rater's bias.

    Notes
    -----
    A rater's effect is centred when its answers pin it more tightly than the rater
    population does: ``snr_r = sigma_hat^2 / var_r >`` :data:`CENTRED_SNR`, and the design
    has at least :data:`CENTRED_MIN_RATERS` raters (with fewer the posterior of
    ``sigma_rater`` reaches towards 0, where centred effects make a funnel). The pilot
    estimate is a method of moments on the count tables, computed in milliseconds: per
    answer the item's other answers give the expected label distribution (add 1/2, leave
    the answer out); per rater ``beta_rk = log((O_rk + 1/2) / (E_rk + 1/2))`` (observed
    against expected counts, centred over the categories) has sampling variance about
    ``var_r = mean_k 1 / (n_r p_rk (1 - p_rk) + 1/2) (1 - 1/K)``; ``sigma_hat^2`` is the
    precision-weighted mean of ``sum_k beta_rk^2 / (K - 1) - var_r`` (weights
    ``1 / (var_r + sigma_hat^2)^2``, solved for ``sigma_hat^2``; 0 when no root is above 0).
    It only picks coordinates: the model and its posterior are the same either way.

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data.readers import read_long
    >>> frame = pd.DataFrame({"item": [1, 1, 2], "rater": ["a", "b", "a"],
    ...                       "label": ["x", "y", "x"]})
    >>> centring(read_long(frame, item="item", rater="rater", label="label"))["raters"]
    array([False, False])
    """
    codes = _codes(answers)
    k = len(codes["categories"])
    item_counts, rater_counts = _tables(codes)
    item, rater, y = codes["item"], codes["rater"], codes["y"]
    n_items_answers = item_counts.sum(axis=1)
    n_r = rater_counts.sum(axis=1).astype(float)
    others = item_counts[item].astype(float)
    others[np.arange(len(y)), y] -= 1.0  # leave the answer out
    expected_p = (others + 0.5) / (n_items_answers[item] - 1.0 + 0.5 * k)[:, None]
    expected = np.zeros(rater_counts.shape)
    np.add.at(expected, rater, expected_p)
    beta = np.log((rater_counts + 0.5) / (expected + 0.5))
    beta -= beta.mean(axis=1, keepdims=True)
    share = (expected + 0.5) / (n_r[:, None] + 0.5 * k)
    var = (1.0 / (n_r[:, None] * share * (1.0 - share) + 0.5)).mean(axis=1) * (1.0 - 1.0 / k)
    s2 = _moment_variance((beta**2).sum(axis=1) / (k - 1), var)
    rater_snr = s2 / var
    raters = (rater_snr > CENTRED_SNR) & (len(n_r) >= CENTRED_MIN_RATERS)
    return {
        "items": np.zeros(len(item_counts), dtype=bool),
        "raters": raters,
        "sigma_rater_hat": float(np.sqrt(s2)),
        "rater_snr": rater_snr,
    }


def _moment_variance(spread: np.ndarray, var: np.ndarray) -> float:
    """Between-group variance ``s2`` from per-group spreads and sampling variances: the root
    of ``sum_r w_r (spread_r - var_r - s2) = 0`` with weights ``w_r = 1 / (var_r + s2)^2``
    (a precision-weighted method of moments), or 0 where there is none above 0."""
    from scipy.optimize import brentq

    excess = spread - var

    def estimating(s2: float) -> float:
        weight = 1.0 / (var + s2) ** 2
        return float(np.sum(weight * (excess - s2)))

    high = float(np.max(excess, initial=0.0))
    if high <= 0.0 or estimating(0.0) <= 0.0:
        return 0.0
    return float(brentq(estimating, 0.0, high, xtol=1e-8))


def _warn_if_unanimous(item_counts: np.ndarray) -> None:
    """Say before sampling when every item's answers agree (a design the model samples slowly).

    Where every item with two or more answers is unanimous (and there are at least
    :data:`ambppl.inference.modeling.UNANIMOUS_MIN_ITEMS` of them), each item's likelihood
    is one-sided: it says only that the item lies far on its answers' side. Where the items
    agree on different answers, one normal item population must hold each group far from the
    others, so ``sigma_item`` grows far beyond its prior and each item's posterior is that
    wide normal cut off sharply at its side: NUTS's step size is set by the cut and its
    trajectories by the width. On the spam data of the real-data gallery
    (docs/benchmarks.md, 5380 unanimous items, two answers; 2 chains x 300 + 300 draws,
    2026-11-28) ``sigma_item`` was 31 against its ``HalfNormal(2)`` prior, the step size
    0.025 and every draw took 255 leapfrog steps (tree depth 8). With the defaults (4 x 2000
    draws after 1000 tuning steps) the fit met the convergence standard (R-hat 1.0042, bulk
    / tail ESS 2698 / 2809, no divergences) in 1099 s, 5.0 GB; a shorter run (500 tuning
    steps, 1000 draws) took 720 s and diverged once. The count models describe such data
    (every item's ambiguity is about 0): :func:`ambppl.inference.modeling.warn_if_unanimous`
    says so.
    """
    warn_if_unanimous(
        item_counts,
        model="rater_effects",
        consequence="so each item's likelihood is one-sided: the item logits run out as far as the "
        "item population lets them, and NUTS needs hundreds of leapfrog steps per draw "
        "(slow: 18 minutes on 5380 such items); every item's ambiguity is about 0, "
        "which the count models ('dirichlet_categorical', 'hierarchical_dirichlet') "
        "estimate in seconds",
    )


def _zero_sum_extend(u: Any) -> Any:
    """Map ``n - 1`` rows to ``n`` rows summing to zero, isometrically (PyMC's zero-sum
    transform, ``ZeroSumTransform.extend_axis`` along axis 0): ``u`` of iid rows ``N(0, S)``
    gives the deviations from their mean of ``n`` iid rows ``N(0, S)``."""
    n = u.shape[0] + 1
    total = u.sum(axis=0, keepdims=True)
    norm = total / (n**0.5 + n)
    fill = norm - total / n**0.5
    try:
        import pytensor.tensor as pt

        if isinstance(u, pt.TensorVariable):
            return pt.concatenate([u, fill], axis=0) - norm
    except ImportError:  # pragma: no cover - pytensor comes with pymc
        pass
    return np.concatenate([u, fill], axis=0) - norm


def _rater_deviations(groups: tuple[np.ndarray, np.ndarray], chol: Any, p: int) -> Any:
    """The rater effects minus their mean ``d``, ``v_r - d`` (raters x contrasts), from the
    free variables of the two groups (module docstring, "Sampling"): centred raters ``C``
    (their mean and ``u_rater``, iid ``N(0, Sigma_rater)`` rows mapped to deviations) and
    non-centred raters ``P`` (their mean and ``e_dev``, zero-sum standard normals); with both
    groups, the difference of their means ``rater_gap ~ N(0, Sigma_rater (1/|C| + 1/|P|))``."""
    import pymc as pm
    import pytensor.tensor as pt

    rich, poor = groups
    n_c, n_p = len(rich), len(poor)
    n = n_c + n_p
    v_dev = pt.zeros((n, p))
    shift_c = shift_p = pt.zeros(p)
    if n_c and n_p:  # mean of C minus mean of P; d is their weighted mean
        gap = pm.MvNormal(
            "rater_gap", mu=np.zeros(p), chol=chol * np.sqrt(1.0 / n_c + 1.0 / n_p), dims="contrast"
        )
        shift_c, shift_p = (n_p / n) * gap, -(n_c / n) * gap
    if n_c:
        dev_c = pt.zeros((1, p))
        if n_c > 1:
            u = pm.MvNormal("u_rater", mu=np.zeros(p), chol=chol, dims=("rater_c_dev", "contrast"))
            dev_c = _zero_sum_extend(u)
        v_dev = pt.set_subtensor(v_dev[rich], dev_c + shift_c)
    if n_p:
        dev_p = pt.zeros((1, p))
        if n_p > 1:
            e_dev = pm.ZeroSumNormal("e_dev", sigma=1.0, dims=("contrast", "rater_nc"))
            dev_p = pt.dot(chol, e_dev).T
        v_dev = pt.set_subtensor(v_dev[poor], dev_p + shift_p)
    return v_dev


def _item_effects(
    groups: tuple[np.ndarray, np.ndarray], m_w: Any, chol: Any, p: int
) -> tuple[Any, Any]:
    """The item effects in the likelihood's coordinates (items x contrasts) and ``g``, the
    non-centred items' mean effect (module docstring, "Sampling"): centred items ``w``
    (item_c, contrast) ``~ N(m - g, Sigma_item)``; non-centred items ``m + L z_i`` with
    ``z`` (contrast, item_nc) zero-sum over those items and their mean ``z_bar``
    ``~ N(0, I / |P|)`` split off, ``g = L z_bar``."""
    import pymc as pm
    import pytensor.tensor as pt

    strong, weak = groups
    n = len(strong) + len(weak)
    w = pt.zeros((n, p))
    g_w = pt.zeros(p)
    if len(weak):
        z_bar = pm.Normal("z_bar", 0.0, 1.0 / np.sqrt(len(weak)), dims="contrast")
        g_w = pt.dot(chol, z_bar)
        dev = pt.zeros((1, p))
        if len(weak) > 1:
            z = pm.ZeroSumNormal("z", sigma=1.0, dims=("contrast", "item_nc"))
            dev = pt.dot(chol, z).T
        w = pt.set_subtensor(w[weak], m_w + dev)
    if len(strong):
        w_c = pm.MvNormal("w", mu=m_w - g_w, chol=chol, dims=("item_c", "contrast"))
        w = pt.set_subtensor(w[strong], w_c)
    return w, g_w


def model(
    answers: Any,
    *,
    mu_sd: float = 2.0,
    item_scale: float = 2.0,
    rater_scale: float = 1.0,
    n_nodes: int = 256,
    centred: bool | None = None,
    centred_raters: bool | None = None,
) -> Any:
    """Build the PyMC model for one row per answer.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``item``, ``rater`` and ``label`` (a Categorical, can't-solve last) and
        ``attrs["cant_solve"]``, as :func:`ambppl.data.readers.read_long` returns.
    mu_sd : float, default 2.0
        Scale of the zero-sum normal prior of the mean item logits ``mu``.
    item_scale : float, default 2.0
        Scale of the half-normal prior of each ``sigma_item[k]`` (two categories: of the one
        shared scale ``sigma_item_shared``).
    rater_scale : float, default 1.0
        Scale of the half-normal prior of each ``sigma_rater[k]`` (two categories: of
        ``sigma_rater_shared``).
    n_nodes : int, default 256
        QMC nodes for the population expectation ``q`` (module docstring).
    centred : bool, optional
        ``True``: centred item effects (free ``w_i ~ N(m, Sigma_item)`` in the zero-sum
        coordinates); ``False``: non-centred (free standard normals, their mean over the
        items split off), the default (``None``: :func:`centring`).
    centred_raters : bool, optional
        The same for the rater effects (``None``: :func:`centring`).

    Returns
    -------
    pymc.Model
        Free variables (module docstring, "Sampling"): ``sigma_item`` and ``sigma_rater``
        (category; two categories: ``sigma_item_shared`` and ``sigma_rater_shared``, and
        ``sigma_item`` / ``sigma_rater`` are their deterministic copies per category),
        ``m`` (category), ``e_bar`` and ``z_bar`` (contrast), ``e_dev`` (contrast, rater;
        centred raters: ``u_rater`` (rater_dev, contrast)) and ``z`` (contrast, item;
        centred items: ``w`` (item, contrast)); deterministics ``mu``, ``eta``, ``b``,
        ``q``, ``q_typical``, the measures of ``q`` and ``amb_typical``; data
        ``is_cant_solve``, ``rater_answers``, ``answer_item`` and ``answer_rater``.

    Raises
    ------
    TypeError
        If ``answers`` is not such a frame.
    ValueError
        If an answer has no rater id (the message names ``rater=``), for an empty table or
        bad parameter values.

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data.readers import read_long
    >>> answers = read_long(pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"],
    ...                                   "label": ["x", "y", "x"]}))
    >>> m = model(answers)
    >>> sorted(rv.name for rv in m.free_RVs)
    ['e_bar', 'e_dev', 'm', 'sigma_item_shared', 'sigma_rater_shared', 'z', 'z_bar']
    """
    import pymc as pm
    import pytensor.tensor as pt
    import xarray as xr
    from pytensor.gradient import disconnected_grad

    centred = flag_parameter(centred, "centred")
    centred_raters = flag_parameter(centred_raters, "centred_raters")
    for name, value in (("mu_sd", mu_sd), ("item_scale", item_scale), ("rater_scale", rater_scale)):
        positive_parameter(value, name)
    codes = _codes(answers)
    k = len(codes["categories"])
    if k < 2:
        raise ValueError(f"answers must have at least 2 categories, but got {k}")
    nodes = qmc_nodes(n_nodes, k)
    item_counts, rater_counts = _tables(codes)
    _warn_if_unanimous(item_counts)
    auto = centring(answers)
    n_items, n_raters = len(codes["item_ids"]), len(codes["rater_ids"])
    strong = auto["items"] if centred is None else np.full(n_items, centred)
    rich = auto["raters"] if centred_raters is None else np.full(n_raters, centred_raters)
    item_groups = (np.flatnonzero(strong), np.flatnonzero(~strong))
    rater_groups = (np.flatnonzero(rich), np.flatnonzero(~rich))
    cs = None if codes["cant_solve"] is None else codes["categories"].index(codes["cant_solve"])
    counts = xr.DataArray(
        item_counts,
        dims=("item", "category"),
        coords={"item": codes["item_ids"], "category": codes["categories"]},
        attrs={"cant_solve": codes["cant_solve"]},
    )
    basis = _zero_sum_basis(k)  # Q: K x (K - 1), orthonormal, columns sum to zero
    p = k - 1
    coords = {
        "item": codes["item_ids"],
        "rater": codes["rater_ids"],
        "category": codes["categories"],
        "contrast": [f"h{j + 1}" for j in range(p)],
        "answer": np.arange(len(codes["item"])),
    }
    item_ids = np.asarray(codes["item_ids"], dtype=object)
    if len(item_groups[0]):  # centred items: their ids
        coords["item_c"] = list(item_ids[item_groups[0]])
    if len(item_groups[1]) > 1:  # non-centred items: their ids
        coords["item_nc"] = list(item_ids[item_groups[1]])
    rater_ids = np.asarray(codes["rater_ids"], dtype=object)
    if len(rater_groups[0]) > 1:  # centred raters: their deviations, one row fewer
        coords["rater_c_dev"] = np.arange(len(rater_groups[0]) - 1)
    if len(rater_groups[1]) > 1:  # non-centred raters: their ids
        coords["rater_nc"] = list(rater_ids[rater_groups[1]])
    item_idx, rater_idx = codes["item"], codes["rater"]
    with pm.Model(coords=coords) as rater_effects:
        add_annotation_data(counts)
        pm.Data("rater_answers", rater_counts.sum(axis=1), dims="rater")
        # Who answered which item (positions), for summarize(level="rater"): each rater is
        # compared with the typical rater on the items it rated.
        pm.Data("answer_item", item_idx, dims="answer")
        pm.Data("answer_rater", rater_idx, dims="answer")
        if k == 2:
            # Two categories: only sigma_1^2 + sigma_2^2 enters the model (module docstring,
            # "Identifiability"), so one scale is shared; Q' diag(s^2, s^2) Q = s^2.
            s_item = pm.HalfNormal("sigma_item_shared", sigma=item_scale)
            s_rater = pm.HalfNormal("sigma_rater_shared", sigma=rater_scale)
            pm.Deterministic("sigma_item", pt.stack([s_item, s_item]), dims="category")
            sigma_rater = pm.Deterministic(
                "sigma_rater", pt.stack([s_rater, s_rater]), dims="category"
            )
            chol_item = pt.reshape(s_item, (1, 1))
            chol_rater = pt.reshape(s_rater, (1, 1))
        else:
            sigma_item = pm.HalfNormal("sigma_item", sigma=item_scale, dims="category")
            sigma_rater = pm.HalfNormal("sigma_rater", sigma=rater_scale, dims="category")
            # the populations in zero-sum coordinates: N(., Q' diag(sigma^2) Q), full rank
            chol_item = pt.linalg.cholesky(pt.dot(basis.T, sigma_item[:, None] ** 2 * basis))
            chol_rater = pt.linalg.cholesky(pt.dot(basis.T, sigma_rater[:, None] ** 2 * basis))
        # The free centre m (module docstring, "Sampling"): m = mu + d + g, the mean item
        # logit for the raters' average bias d (and, non-centred, plus the items' average
        # effect g), which the data pin down; mu = m - d - g keeps its ZeroSumNormal prior
        # through the potential mu_prior (the shift has Jacobian 1).
        m = pm.ZeroSumNormal("m", sigma=mu_sd, dims="category")
        m_w = pt.dot(m, basis)
        e_bar = pm.Normal("e_bar", 0.0, 1.0 / np.sqrt(n_raters), dims="contrast")
        d_w = pt.dot(chol_rater, e_bar)  # the raters' average bias (zero-sum coordinates)
        v_dev = _rater_deviations(rater_groups, chol_rater, p)
        w, g_w = _item_effects(item_groups, m_w, chol_item, p)
        s_w = d_w + g_w
        # log ZSN(m - s) - log ZSN(m), the ZeroSumNormal log density being -|x|^2 / (2 s^2)
        pm.Potential("mu_prior", (2.0 * pt.sum(m_w * s_w) - pt.sum(s_w * s_w)) / (2.0 * mu_sd**2))
        # The likelihood sees w and v_dev only: d and g cancel in eta_i + b_r.
        # log softmax(eta_i + b_r)[y] summed over answers, the softmax invariant to shifts:
        # linear part from the count tables, normalizer from row-max-shifted exponentials.
        eta_lik = pt.dot(w, basis.T)
        b_lik = pt.dot(v_dev, basis.T)
        m_item = disconnected_grad(pt.max(eta_lik, axis=1, keepdims=True))
        m_rater = disconnected_grad(pt.max(b_lik, axis=1, keepdims=True))
        norm = pt.sum(
            pt.exp(eta_lik - m_item)[item_idx] * pt.exp(b_lik - m_rater)[rater_idx], axis=1
        )
        pm.Potential(
            "answers",
            pt.sum(item_counts * eta_lik)
            + pt.sum(rater_counts * b_lik)
            - pt.sum(pt.log(norm))
            - pt.sum(m_item[:, 0] * item_counts.sum(axis=1))
            - pt.sum(m_rater[:, 0] * rater_counts.sum(axis=1)),
        )
        pm.Deterministic("mu", pt.dot(m_w - s_w, basis.T), dims="category")
        eta = pm.Deterministic(
            "eta",
            pt.specify_shape(pt.dot(w - d_w, basis.T), (n_items, k)),
            dims=("item", "category"),
        )
        pm.Deterministic("b", pt.dot(v_dev + d_w, basis.T), dims=("rater", "category"))
        q = pm.Deterministic("q", population_q(eta, sigma_rater, nodes), dims=("item", "category"))
        add_measures(q, cant_solve=cs)
        q_typical = pm.Deterministic(
            "q_typical", pt.special.softmax(eta, axis=-1), dims=("item", "category")
        )
        pm.Deterministic("amb_typical", amb(q_typical, cant_solve=cs), dims="item")
    return rater_effects


def log_likelihood(posterior: Any, answers: Any, **params: Any) -> np.ndarray:
    """Per item and draw: ``log p(answers_i | eta_i, b) = sum_a log softmax(eta_i + b_r)[y_a]``.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws of ``eta`` (chain, draw, item, category) and ``b`` (chain, draw, rater,
        category).
    answers : pandas.DataFrame
        The answers the model was fitted to (:func:`ambppl.data.readers.read_long`).
    **params
        The model's parameters (unused).

    Returns
    -------
    numpy.ndarray, shape (chains, draws, items)
        Conditional on the item's own effect ``eta_i`` (module docstring: not comparable with
        the Dirichlet models' log likelihood, which integrates ``q_i`` out).

    Examples
    --------
    >>> import numpy as np, pandas as pd, xarray as xr
    >>> answers = pd.DataFrame({"item": [0, 0], "rater": ["a", "b"],
    ...                         "label": pd.Categorical(["x", "y"], categories=["x", "y"])})
    >>> post = xr.Dataset({"eta": (("chain", "draw", "item", "category"), np.zeros((1, 1, 1, 2))),
    ...                    "b": (("chain", "draw", "rater", "category"), np.zeros((1, 1, 2, 2)))})
    >>> np.round(log_likelihood(post, answers), 4).tolist()  # two answers at 1/2 each
    [[[-1.3863]]]
    """
    codes = _codes(answers)
    eta = posterior["eta"].transpose("chain", "draw", "item", "category").values
    b = posterior["b"].transpose("chain", "draw", "rater", "category").values
    chains, draws, n_items, k = eta.shape
    order = np.argsort(codes["item"], kind="stable")
    item_idx, rater_idx, y = codes["item"][order], codes["rater"][order], codes["y"][order]
    starts = np.searchsorted(item_idx, np.arange(n_items))
    eta = eta.reshape(chains * draws, n_items, k)
    b = b.reshape(chains * draws, -1, k)
    out = np.empty((chains * draws, n_items))
    chunk = max(1, 2**22 // max(1, len(y) * k))
    for lo in range(0, chains * draws, chunk):
        et, bt = eta[lo : lo + chunk], b[lo : lo + chunk]
        m_e, m_b = et.max(axis=-1, keepdims=True), bt.max(axis=-1, keepdims=True)
        norm = np.einsum(
            "dak,dak->da", np.exp(et - m_e)[:, item_idx], np.exp(bt - m_b)[:, rater_idx]
        )
        per_answer = (
            et[:, item_idx, y]
            + bt[:, rater_idx, y]
            - np.log(norm)
            - m_e[:, item_idx, 0]
            - m_b[:, rater_idx, 0]
        )
        out[lo : lo + chunk] = np.add.reduceat(per_answer, starts, axis=1)
    return out.reshape(chains, draws, n_items)


#: Seed of the scrambled Sobol sequence behind the importance-sampling nodes of
#: :func:`integrated_log_likelihood` (fixed: every item and every draw uses the same nodes).
IS_SEED = 20240602

#: Degrees of freedom of the multivariate Student-t proposal of
#: :func:`integrated_log_likelihood` (heavier tails than the item's posterior, so the
#: importance weights stay bounded).
IS_DF = 5.0

#: Elements (float64) of the largest temporary array of :func:`integrated_log_likelihood`
#: (answers x nodes x draws per chunk; 2^23 = 64 MiB).
IS_CHUNK = 2**23


def _zero_sum_basis(n_categories: int) -> np.ndarray:
    """An orthonormal basis ``Q`` (K x (K-1)) of the zero-sum vectors (Helmert contrasts)."""
    k = n_categories
    basis = np.zeros((k, k - 1))
    for j in range(1, k):
        basis[:j, j - 1] = 1.0
        basis[j, j - 1] = -float(j)
        basis[:, j - 1] /= np.sqrt(j * (j + 1.0))
    return basis


def _student_t_nodes(n_nodes: int, dim: int, df: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard multivariate Student-t nodes (scrambled Sobol) and their log densities."""
    from scipy.special import gammaln
    from scipy.stats import chi2, norm, qmc

    sobol = qmc.Sobol(d=dim + 1, scramble=True, rng=np.random.default_rng(seed))
    u = sobol.random_base2(int(np.ceil(np.log2(n_nodes))))[:n_nodes]
    u = np.clip(u, 1e-15, 1.0 - 1e-15)
    t = norm.ppf(u[:, :dim]) * np.sqrt(df / chi2.ppf(u[:, dim], df))[:, None]
    log_density = (
        gammaln((df + dim) / 2.0)
        - gammaln(df / 2.0)
        - 0.5 * dim * np.log(df * np.pi)
        - 0.5 * (df + dim) * np.log1p(np.sum(t * t, axis=1) / df)
    )
    return t, log_density


def _check_is_options(n_nodes: Any, max_draws: Any, seed: Any, df: Any) -> None:
    for name, value, low in (("n_nodes", n_nodes, 2), ("max_draws", max_draws, 1)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, but got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, but got {seed!r}")
    if isinstance(df, bool) or not isinstance(df, int | float) or not (np.isfinite(df) and df > 0):
        raise ValueError(f"df must be a positive number, but got {df!r}")


#: The fix of every refusal of answers that are not the fit's.
_FITTED_ANSWERS = (
    "; pass as answers the answers the fit was made from (the table given to ambppl.fit, "
    "rows in the same order)"
)


def _check_fitted_counts(counts: Any, codes: dict[str, Any]) -> None:
    """Refuse answers whose item x category counts are not ``counts`` (the fit's
    ``observed_data``), in the words of :func:`ambppl.validation.check_fit`."""
    import pandas as pd

    fitted = "result['observed_data']['counts']"
    subject = "answers must be the answers that result was fitted to"
    fix = _FITTED_ANSWERS.removeprefix("; ")
    if tuple(counts.dims) != ("item", "category"):
        raise ValueError(
            f"{fitted} must have dims ('item', 'category'), as a fit of 'rater_effects' "
            f"has, but got {tuple(counts.dims)}"
        )
    item_counts, _ = _tables(codes)
    items = [str(v) for v in codes["item_ids"]]
    categories = [str(v) for v in codes["categories"]]
    ref_items = [str(v) for v in counts["item"].values] if "item" in counts.coords else items
    ref_categories = (
        [str(v) for v in counts["category"].values] if "category" in counts.coords else categories
    )
    if (
        counts.shape != item_counts.shape
        or sorted(ref_items) != sorted(items)
        or sorted(ref_categories) != sorted(categories)
    ):
        raise ValueError(
            f"{subject}, but their {len(items)} items and categories {categories} differ from "
            f"the {counts.sizes['item']} items and categories {ref_categories} of {fitted}: "
            f"{fix}"
        )
    # aligned by label: the counts of the answers in the order of the fit's counts
    table = pd.DataFrame(item_counts, index=items, columns=categories)
    refuse_other_counts(
        table, counts.values, ref_items, ref_categories, subject=subject, fitted=fitted, fix=fix
    )


def _posterior_for_integration(result: Any, codes: dict[str, Any]) -> Any:
    """The posterior Dataset of ``result``, checked against the answers' codes."""
    import xarray as xr

    observed = None
    if isinstance(result, xr.DataTree):
        if "posterior" not in result.children:
            raise ValueError(
                "result must have a posterior group (a fit of 'rater_effects'), but it has "
                f"{sorted(result.children)}"
            )
        post = result["posterior"].to_dataset()
        constant = (
            result["constant_data"].to_dataset() if "constant_data" in result.children else None
        )
        if "observed_data" in result.children:
            observed = result["observed_data"].to_dataset()
    elif isinstance(result, xr.Dataset):
        post, constant = result, None
    else:
        raise TypeError(
            "result must be the xarray.DataTree of ambppl.fit(answers, 'rater_effects') or its "
            f"posterior Dataset, but got {type(result).__name__}"
        )
    dims = {
        "mu": ("chain", "draw", "category"),
        "sigma_item": ("chain", "draw", "category"),
        "eta": ("chain", "draw", "item", "category"),
        "b": ("chain", "draw", "rater", "category"),
    }
    for name, want in dims.items():
        if name not in post.data_vars:
            raise ValueError(
                f"result's posterior must hold {name!r} (dims {want}), as a fit of "
                f"'rater_effects' does, but it has {sorted(post.data_vars)}"
            )
        if set(post[name].dims) != set(want):
            raise ValueError(
                f"result's posterior {name!r} must have dims {want}, but got {post[name].dims}"
            )
    sizes = {
        "item": len(codes["item_ids"]),
        "rater": len(codes["rater_ids"]),
        "category": len(codes["categories"]),
    }
    ids = {"item": codes["item_ids"], "rater": codes["rater_ids"], "category": codes["categories"]}
    for dim, n in sizes.items():
        if post.sizes[dim] != n:
            raise ValueError(
                f"answers must be the answers the model was fitted to, but they have {n} "
                f"{dim}s and the posterior has {post.sizes[dim]}{_FITTED_ANSWERS}"
            )
        if dim in post.coords and [str(v) for v in post[dim].values] != [str(v) for v in ids[dim]]:
            raise ValueError(
                f"answers must be the answers the model was fitted to, but their {dim} ids "
                f"(in order of first appearance) differ from the posterior's {dim} coordinate"
                f"{_FITTED_ANSWERS}"
            )
    if observed is not None and "counts" in observed.data_vars:
        _check_fitted_counts(observed["counts"], codes)
    if constant is not None and {"answer_item", "answer_rater"} <= set(constant.data_vars):
        same = len(constant["answer_item"]) == len(codes["item"]) and (
            np.array_equal(constant["answer_item"].values, codes["item"])
            and np.array_equal(constant["answer_rater"].values, codes["rater"])
        )
        if not same:
            raise ValueError(
                "answers must be the answers the model was fitted to (same rows in the same "
                "order), but their items or raters differ from result's constant_data "
                f"answer_item / answer_rater{_FITTED_ANSWERS}"
            )
    sigma = post["sigma_item"].values
    if not (np.all(np.isfinite(sigma)) and np.all(sigma > 0)):
        raise ValueError(
            "result's posterior 'sigma_item' must be positive and finite in every draw (the "
            "population of eta_i must have a density), but it is not"
        )
    for name in ("mu", "eta", "b"):
        if not np.all(np.isfinite(post[name].values)):
            raise ValueError(f"result's posterior {name!r} must be finite, but has NaN or inf")
    return post


def integrated_log_likelihood(
    result: Any,
    answers: Any,
    *,
    n_nodes: int = 256,
    max_draws: int = 500,
    seed: int = IS_SEED,
    df: float = IS_DF,
) -> Any:
    r"""Per item and draw: ``log p(answers_i | mu, sigma_item, b)`` with ``eta_i`` integrated out.

    The probability of the item's sequence of answers under the *population* of item logits,
    the quantity every Dirichlet model's ``log_likelihood`` group holds with ``q_i``
    integrated out (:mod:`ambppl.inference.modeling`), so that leave-one-item-out compares the
    models on the same footing (:func:`with_integrated_log_likelihood`).

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A fit of ``rater_effects`` (:func:`ambppl.fit`) or its posterior: draws of ``mu``,
        ``sigma_item`` (chain, draw, category), ``eta`` (chain, draw, item, category) and
        ``b`` (chain, draw, rater, category).
    answers : pandas.DataFrame
        The answers the model was fitted to (:func:`ambppl.data.readers.read_long`; same rows,
        same order). Checked against the posterior's coordinates (items, raters and
        categories, in order) and, where ``result`` is a DataTree that has them, against
        ``observed_data``'s ``counts`` (the count of every label on every item) and
        ``constant_data``'s ``answer_item`` / ``answer_rater`` (each answer's item and rater).
        A fit does not store each answer's label, so answers that move labels between the
        raters of one item, keeping every item's counts, are not detected; nor is anything
        checked where ``result`` is a posterior Dataset beyond its coordinates.
    n_nodes : int, default 256
        Importance-sampling nodes per item ``S`` (a power of two keeps the Sobol sequence
        balanced).
    max_draws : int, default 500
        At most this many posterior draws are used: every ``t``-th draw of each chain,
        ``t = ceil(chains * draws / max_draws)``.
    seed : int, default :data:`IS_SEED`
        Seed of the scrambled Sobol sequence of the nodes.
    df : float, default :data:`IS_DF`
        Degrees of freedom of the Student-t proposal.

    Returns
    -------
    xarray.Dataset
        ``counts`` (chain, draw, item): the integrated log likelihood of the kept draws
        (``draw`` keeps the original labels); the importance-sampling diagnostics ``ess``
        (chain, draw, item: effective sample size of the ``S`` weights), ``min_ess`` (item:
        its smallest value over the draws) and ``mcse`` (item: the largest approximate Monte
        Carlo standard error of ``counts`` over the draws, ``sqrt(1/ess - 1/S)``, in nats).
        ``attrs``: ``n_nodes``, ``df``, ``seed``, ``thin``.

    Raises
    ------
    TypeError
        If ``result`` is neither a DataTree nor a Dataset, or ``answers`` is not a frame of
        answers (:func:`ambppl.data.readers.read_long`).
    ValueError
        If the posterior lacks ``mu``, ``sigma_item``, ``eta`` or ``b`` (or they have other
        dims, non-finite values, ``sigma_item <= 0``), if ``observed_data``'s ``counts`` has
        dims other than ``(item, category)``, or an option is out of range; the message names
        the field. If ``answers`` are not those of the fit as far as ``result``
        tells (see ``answers``): other items, raters or categories than the posterior's;
        counts that differ from ``observed_data``'s ``counts`` (the message says on how many
        items, and the first, as :func:`ambppl.validation.check_fit` does); or rows whose
        items or raters differ from ``constant_data``'s ``answer_item`` / ``answer_rater``.

    Notes
    -----
    With ``Q`` an orthonormal basis (``K x (K-1)``) of the zero-sum vectors, the stored
    ``eta_i = Q w_i`` and the population ``eta_i = P z_i``, ``z_i ~ N(mu, diag(sigma^2))``
    (``sigma = sigma_item``) is ``w_i ~ N(m, Sigma)`` with ``m = Q' mu`` and
    ``Sigma = Q' diag(sigma^2) Q`` (full rank). For each kept draw ``d`` and item ``i``

    .. math::

        \ell_{di} = \log \int \prod_{a \in i} \mathrm{softmax}(Q w + b^{(d)}_{r[a]})[y_a]\,
            N(w; m^{(d)}, \Sigma^{(d)})\, dw
        \approx \log \frac1S \sum_{s=1}^S
            \frac{\prod_{a \in i} \mathrm{softmax}(Q w_{is} + b^{(d)}_{r[a]})[y_a]\,
            N(w_{is}; m^{(d)}, \Sigma^{(d)})}{g_i(w_{is})},

    with the proposal ``g_i`` a multivariate Student-t (``df`` degrees of freedom) with the
    mean and covariance of the item's posterior draws of ``w_i`` (all draws, not only the
    kept ones), and nodes ``w_is = mean_i + L_i t_s`` from ``S`` scrambled-Sobol Student-t
    points ``t_s`` (seed ``seed``; the same for every draw of an item). The integrand is
    concentrated where the item's answers put ``eta_i`` (20 answers pin it far more tightly
    than the population), which the proposal follows and prior draws would miss. The
    estimate of the integral is unbiased; its log is biased low by about ``mcse^2 / 2``.
    ``ess = (sum_s v_s)^2 / sum_s v_s^2`` for the weights ``v_s`` of one draw; ``ess`` near
    ``S`` means a proposal close to the integrand, a small ``ess`` (say below 30) an
    unreliable estimate (raise ``n_nodes``).

    *What is compared with the Dirichlet models.* No multinomial coefficient: ``exp(l_di)``
    is the probability of the item's answers as a *sequence* (each answer with its rater;
    the rater ids are covariates, fixed), exactly as ``dirichlet_categorical``'s
    ``log_likelihood`` is the Dirichlet-multinomial *without* ``n_i! / prod x_ik!``, the
    probability of the item's answer sequence (exchangeable: any order has the same
    probability). Summed over the ``K^n`` possible label sequences of an item either is 1.
    So ``elpd`` differences between ``rater_effects`` and a Dirichlet model are differences
    in predicting the same labels (the rater model also uses who answered).

    Cost: per kept draw and answer ``S`` dot products of length ``K`` and ``S`` logarithms
    (1000 items x 20 answers, ``S = 256``, 500 draws: 2.6e9 of each), computed in chunks of
    at most :data:`IS_CHUNK` numbers (answers x nodes x draws), items and draws vectorized.

    Examples
    --------
    >>> import numpy as np, pandas as pd, xarray as xr
    >>> answers = pd.DataFrame({"item": [0, 0, 1], "rater": ["a", "b", "a"],
    ...                         "label": pd.Categorical(["x", "y", "x"], categories=["x", "y"])})
    >>> rng = np.random.default_rng(0)
    >>> w = rng.normal(0.0, 0.8, size=(1, 200, 2, 1))        # posterior draws of eta's free part
    >>> post = xr.Dataset({
    ...     "mu": (("chain", "draw", "category"), np.zeros((1, 200, 2))),
    ...     "sigma_item": (("chain", "draw", "category"), np.ones((1, 200, 2))),
    ...     "eta": (("chain", "draw", "item", "category"),
    ...             np.concatenate([w, -w], axis=-1) / np.sqrt(2)),
    ...     "b": (("chain", "draw", "rater", "category"), np.zeros((1, 200, 2, 2)))})
    >>> ll = integrated_log_likelihood(post, answers, max_draws=50)
    >>> ll["counts"].sizes["draw"], float(ll["min_ess"].min()) > 100
    (50, True)
    >>> # eta symmetric around 0, no rater bias: P(x) = 1/2 exactly for a single answer (the
    >>> # estimate is within 0.003 of it, its reported Monte Carlo error is about 0.035 nats)
    >>> bool(np.allclose(np.exp(ll["counts"].sel(item=1)), 0.5, atol=0.01))
    True
    """
    import xarray as xr
    from scipy.special import logsumexp

    codes = _codes(answers)
    _check_is_options(n_nodes, max_draws, seed, df)
    k = len(codes["categories"])
    if k < 2:
        raise ValueError(f"answers must have at least 2 categories, but got {k}")
    post = _posterior_for_integration(result, codes)
    n_items, p = len(codes["item_ids"]), k - 1
    basis = _zero_sum_basis(k)

    # the item's posterior of w_i = Q' eta_i (all draws): the proposal's location and scale
    eta_all = post["eta"].transpose("chain", "draw", "item", "category").values
    chains, draws = eta_all.shape[:2]
    w_post = eta_all.reshape(chains * draws, n_items, k) @ basis  # (draws, N, p)
    center = w_post.mean(axis=0)
    dev = w_post - center
    cov = np.einsum("dnp,dnq->npq", dev, dev) / max(1, chains * draws - 1)
    cov += np.eye(p) * (1e-10 + 1e-8 * np.trace(cov, axis1=1, axis2=2)[:, None, None] / p)
    chol = np.linalg.cholesky(cov)  # (N, p, p)
    t, log_t = _student_t_nodes(int(n_nodes), p, float(df), int(seed))
    w_nodes = center[:, None, :] + np.einsum("npq,sq->nsp", chol, t)  # (N, S, p)
    log_g = log_t[None, :] - np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)[:, None]
    eta_nodes = w_nodes @ basis.T  # (N, S, K)
    m_e = eta_nodes.max(axis=-1)  # (N, S)
    exp_eta = np.exp(eta_nodes - m_e[..., None])
    item_counts, _ = _tables(codes)
    n_answers = item_counts.sum(axis=1)
    linear_eta = np.einsum("nk,nsk->ns", item_counts.astype(float), eta_nodes) - (
        n_answers[:, None] * m_e
    )  # (N, S): sum_a eta_{y_a} - n_i m_e

    # the kept draws
    thin = int(np.ceil(chains * draws / max_draws))
    keep = np.arange(0, draws, thin)
    sel = {"draw": keep}
    mu = post["mu"].transpose("chain", "draw", "category").isel(sel).values.reshape(-1, k)
    sigma = post["sigma_item"].transpose("chain", "draw", "category").isel(sel).values
    sigma = sigma.reshape(-1, k)
    b = post["b"].transpose("chain", "draw", "rater", "category").isel(sel).values
    b = b.reshape(-1, b.shape[2], k)
    n_draws = mu.shape[0]
    # population of w: N(m_d, Sigma_d); precision, Prec m_d, m_d' Prec m_d, log det
    m_pop = mu @ basis  # (D, p)
    sig_pop = np.einsum("kp,dk,kq->dpq", basis, sigma**2, basis)
    prec = np.linalg.inv(sig_pop)
    prec = 0.5 * (prec + np.swapaxes(prec, 1, 2))
    prec_m = np.einsum("dpq,dq->dp", prec, m_pop)
    m_prec_m = np.einsum("dp,dp->d", m_pop, prec_m)
    log_det = np.linalg.slogdet(sig_pop)[1]
    log_norm_const = -0.5 * (p * np.log(2.0 * np.pi) + log_det)  # (D,)
    outer = np.einsum("nsp,nsq->nspq", w_nodes, w_nodes).reshape(n_items, -1, p * p)

    order = np.argsort(codes["item"], kind="stable")
    item_idx, rater_idx, y = codes["item"][order], codes["rater"][order], codes["y"][order]
    starts = np.searchsorted(item_idx, np.arange(n_items))
    ends = np.append(starts[1:], len(item_idx))
    n_s = t.shape[0]
    d_chunk = int(max(1, min(n_draws, IS_CHUNK // (n_s * int(n_answers.max())))))

    out = np.empty((n_draws, n_items))
    ess = np.empty((n_draws, n_items))
    for d0 in range(0, n_draws, d_chunk):
        dsl = slice(d0, min(n_draws, d0 + d_chunk))
        bd = b[dsl]  # (Dc, R, K)
        m_b = bd.max(axis=-1)  # (Dc, R)
        exp_b = np.ascontiguousarray(np.exp(bd - m_b[..., None]).transpose(1, 2, 0))  # (R,K,Dc)
        # per answer: b_{r,y} - m_b_r, summed per item: (N, Dc)
        linear_b = np.add.reduceat((bd[:, rater_idx, y] - m_b[:, rater_idx]).T, starts, axis=0)
        prec_flat = prec[dsl].reshape(-1, p * p)
        # group items so that answers x nodes x draws stays below IS_CHUNK
        per_answer = n_s * (dsl.stop - dsl.start)
        lo = 0
        while lo < n_items:
            budget = starts[lo] + max(1, IS_CHUNK // per_answer)
            hi = int(max(lo + 1, np.searchsorted(ends, budget, side="right")))
            hi = min(hi, n_items)
            a0, a1 = starts[lo], ends[hi - 1]
            ans_item = item_idx[a0:a1]
            # sum_k exp(eta_sk) exp(b_rk) for every answer, node and draw: (A, S, Dc)
            norm = np.matmul(exp_eta[ans_item], exp_b[rater_idx[a0:a1]])
            np.log(norm, out=norm)
            log_norm = np.add.reduceat(norm, starts[lo:hi] - a0, axis=0)  # (n, S, Dc)
            del norm
            log_lik = linear_eta[lo:hi, :, None] + linear_b[lo:hi, None, :]  # (n, S, Dc)
            log_lik -= log_norm
            del log_norm
            # log N(w_s; m_d, Sigma_d): -(w'Pw - 2 w'Pm + m'Pm)/2 + const
            quad = outer[lo:hi] @ prec_flat.T  # (n, S, Dc)
            quad -= 2.0 * (w_nodes[lo:hi] @ prec_m[dsl].T)
            quad += m_prec_m[dsl]
            log_w = log_lik - 0.5 * quad + log_norm_const[dsl] - log_g[lo:hi, :, None]
            lse = logsumexp(log_w, axis=1)  # (n, Dc)
            out[dsl, lo:hi] = (lse - np.log(n_s)).T
            ess[dsl, lo:hi] = np.exp(2.0 * lse - logsumexp(2.0 * log_w, axis=1)).T
            lo = hi

    kept = post["draw"].values[keep] if "draw" in post.coords else keep
    coords = {"chain": post["chain"].values if "chain" in post.coords else np.arange(chains)}
    coords.update(draw=kept, item=codes["item_ids"])
    shape = (chains, len(keep), n_items)
    ess = ess.reshape(shape)
    mcse = np.sqrt(np.maximum(1.0 / ess - 1.0 / n_s, 0.0)).max(axis=(0, 1))
    return xr.Dataset(
        {
            "counts": (("chain", "draw", "item"), out.reshape(shape)),
            "ess": (("chain", "draw", "item"), ess),
            "min_ess": (("item",), ess.min(axis=(0, 1))),
            "mcse": (("item",), mcse),
        },
        coords=coords,
        attrs={"n_nodes": int(n_s), "df": float(df), "seed": int(seed), "thin": thin},
    )


def with_integrated_log_likelihood(result: Any, answers: Any, **options: Any) -> Any:
    """A copy of a fit whose ``log_likelihood`` group integrates ``eta_i`` out (for LOO).

    Parameters
    ----------
    result : xarray.DataTree
        A fit of ``rater_effects`` (:func:`ambppl.fit`).
    answers : pandas.DataFrame
        The answers it was fitted to (same rows, same order), checked as
        :func:`integrated_log_likelihood` checks them: against the posterior's coordinates,
        ``observed_data``'s ``counts`` and ``constant_data``'s ``answer_item`` /
        ``answer_rater`` where ``result`` has them (not each answer's label, which a fit
        does not store).
    **options
        ``n_nodes``, ``max_draws``, ``seed``, ``df`` of :func:`integrated_log_likelihood`.

    Returns
    -------
    xarray.DataTree
        Every group with ``chain`` and ``draw`` dims (``posterior``, ``sample_stats``, ...)
        thinned to the draws :func:`integrated_log_likelihood` keeps; ``log_likelihood``
        holds its ``counts`` (chain, draw, item), and the group ``integration`` its
        diagnostics ``ess``, ``min_ess`` and ``mcse``. Root attributes are kept, plus
        ``log_likelihood = "integrated"``. :func:`ambppl.loo` and :func:`ambppl.compare`
        accept it, on the footing of the Dirichlet models.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree (and as :func:`integrated_log_likelihood`).
    ValueError
        As :func:`integrated_log_likelihood`; in particular, if ``answers`` are not the
        answers ``result`` was fitted to: their counts differ from
        ``result["observed_data"]["counts"]`` (say, labels shuffled between items), or their
        items or raters row by row from ``constant_data``'s ``answer_item`` /
        ``answer_rater``. Such a copy would otherwise keep the fit's ``observed_data`` and
        pass :func:`ambppl.compare`'s check that the models saw the same data.

    Examples
    --------
    >>> import numpy as np, pandas as pd, xarray as xr
    >>> answers = pd.DataFrame({"item": [0, 0, 1, 1], "rater": ["a", "b", "a", "b"],
    ...                         "label": pd.Categorical(["x", "y", "x", "x"], ["x", "y"])})
    >>> rng = np.random.default_rng(1)
    >>> w = rng.normal(0.0, 0.8, size=(2, 100, 2, 1))
    >>> post = xr.Dataset({
    ...     "mu": (("chain", "draw", "category"), np.zeros((2, 100, 2))),
    ...     "sigma_item": (("chain", "draw", "category"), np.ones((2, 100, 2))),
    ...     "eta": (("chain", "draw", "item", "category"),
    ...             np.concatenate([w, -w], axis=-1) / np.sqrt(2)),
    ...     "b": (("chain", "draw", "rater", "category"), np.zeros((2, 100, 2, 2)))})
    >>> tree = with_integrated_log_likelihood(xr.DataTree.from_dict({"posterior": post}),
    ...                                       answers, max_draws=100)
    >>> tree["posterior"].sizes["draw"], tree["log_likelihood"]["counts"].shape
    (50, (2, 50, 2))
    """
    import xarray as xr

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            "result must be the xarray.DataTree of ambppl.fit(answers, 'rater_effects'), but "
            f"got {type(result).__name__}"
        )
    ll = integrated_log_likelihood(result, answers, **options)
    kept = ll["draw"].values
    groups: dict[str, Any] = {}
    for name, node in result.children.items():
        if name in ("log_likelihood", "integration"):
            continue
        ds = node.to_dataset()
        if "draw" in ds.dims and "chain" in ds.dims:
            ds = ds.sel(draw=kept) if "draw" in ds.coords else ds.isel(draw=kept)
        groups[name] = ds
    groups["log_likelihood"] = ll[["counts"]].assign_attrs(
        {**ll.attrs, "sample_dims": ["chain", "draw"], "eta": "integrated out"}
    )
    groups["integration"] = ll[["ess", "min_ess", "mcse"]]
    tree = xr.DataTree.from_dict(groups)
    tree.attrs.update({**result.attrs, "log_likelihood": "integrated"})
    return tree
