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
   \eta_i &= P z_i, \quad z_i \sim N(\mu, \mathrm{diag}(\sigma^{item\,2}))
       \quad\text{(centred, the default; non-centred: } z_i = \mu + \sigma^{item} \odot
       \tilde z_i,\ \tilde z_i \sim N(0, I_K)), \\
   b_r &= P(\sigma^{rater} \odot e_r), \quad e_r \sim N(0, I_K).

So ``eta_i`` is ``N(mu, diag(sigma_item^2))`` projected to zero sum, and ``b_r`` is a draw of
the *rater population* ``N(0, diag(sigma_rater^2))`` projected to zero sum. With 20 answers per
item the data pin every ``eta_i`` more tightly than the prior, so the item logits are centred by
default (``centred=None``: centred when the median item has at least
:data:`CENTRED_MIN_ANSWERS` answers; in trial fits of the benchmark data the centred form gave
1.7x the bulk ESS of ``mu`` and 1.4x that of ``sigma_item`` of the non-centred one; with 8
answers per item it diverged).

Sampling: an exact reparameterization
-------------------------------------
Item and rater effects share a direction: ``eta_i + c`` and ``b_r - c`` (``c`` zero-sum) give
the same likelihood, and only the raters' prior pins ``c`` (posterior sd about
``sigma_rater / sqrt(R)``). Written as above, moving along ``c`` means moving all ``N + R``
effect vectors together, which a diagonal mass matrix cannot do: ``mu`` mixed slowest (bulk
ESS 249 of 2000 draws). The program NUTS samples is the same model in other coordinates:

- ``e_r = e_bar + e_dev_r``: the raters' sample mean ``e_bar ~ N(0, I / R)`` and the deviations
  ``e_dev`` (``ZeroSumNormal`` over raters), independent -- an exact decomposition of ``R``
  independent standard normals;
- ``d = P(sigma_rater * e_bar)`` (the bias of the raters' average) moves into the items:
  ``z'_i = z_i + d ~ N(m, diag(sigma_item^2))`` with ``m = mu + d``, a shift with Jacobian 1;
  ``mu = m - d`` keeps its ``ZeroSumNormal(mu_sd)`` prior through a potential
  ``log ZSN(m - d) - log ZSN(m)`` (``m`` is declared ``ZeroSumNormal(mu_sd)``).

Then ``eta_i + b_r = P z'_i + P(sigma_rater * e_dev_r)``: the likelihood sees ``z'`` and
``e_dev`` only, the data fix ``m``, and ``e_bar`` stays near its prior (its coupling to ``m``
goes through the wide ``mu`` prior). Stored: ``eta_i = P z'_i - d`` and
``b_r = P(sigma_rater * e_dev_r) + d``, exactly the original model's quantities. Measured at
1000 items x 20 answers, 100 raters (nutpie, 2 x (500 + 1500)): bulk ESS of ``mu`` 1866
(was 249 for 2 x (1000 + 1000) in the first form), slowest now ``sigma_item`` (476). Free
variables: ``sigma_item``, ``sigma_rater``, ``m``, ``e_bar``, ``e_dev`` (category, rater) and
``z`` (item, category; ``z'_i``, or ``z~_i`` when non-centred).

Identifiability
---------------
- The softmax ignores a constant added to all ``K`` logits, so only ``P eta_i`` and ``P b_r``
  are identified: the stored ``eta`` (item, category) and ``b`` (rater, category) sum to zero
  over the categories, and so does ``mu`` (a ``ZeroSumNormal``). An unconstrained ``mu`` is
  unidentified (its sum over categories is set by the prior alone), which costs NUTS time.
- The free normals ``z_i`` and ``e_r`` have ``K`` entries of which ``K - 1`` are identified;
  the remaining direction (the sum of ``z_i``; ``e_r`` along ``1 / sigma_rater``) follows
  its Gaussian prior given the rest (for ``e_r`` exactly ``N(0, 1)``, independent of
  everything else), which NUTS samples at little cost. Keeping it makes ``eta_i`` and
  ``b_r`` exactly the projected population draws.
- Item effects and rater effects share one more direction: ``eta_i + c`` and ``b_r - c`` give
  the same likelihood for any zero-sum ``c``. The hierarchical priors pin it: the raters'
  population mean is 0, so ``mu`` is the logit of a rater with zero bias (``c`` has posterior
  sd of about ``sigma_rater / sqrt(raters)``). No other constraint is needed; a mean per
  category left free (not zero-sum) made this direction drift in a trial fit. NUTS samples
  this direction in its own coordinate (``e_bar``, "Sampling" above).
- ``sigma_rater`` is identified per category for ``K >= 3`` (the off-diagonal entries of
  ``P diag(sigma^2) P`` give every pairwise sum ``sigma_j^2 + sigma_k^2``); for ``K = 2``
  only ``sigma_1^2 + sigma_2^2`` is, the split between the two following the prior. The same
  holds for ``sigma_item``.

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
2, ``tests/test_model_rater_effects.py``): with ``S = 256`` the largest absolute error of any
``q_ik`` is about 0.0015 for ``sigma_rater`` near 0.5, 0.003 near 1 and 0.01 near 2 (plain
Monte Carlo with 256 nodes: 0.01, 0.02, 0.04). That is far below the posterior sd of
``q_ik`` with 20 answers per item (0.05-0.1).

Unbalanced designs
------------------
The answers are index vectors, never an item x rater matrix, so any design is valid (each
case is tested in ``tests/test_model_rater_effects.py``):

- *each item rated by a different subset of raters*: the usual case; an item's answers enter
  through its own raters' biases only.
- *repeated answers* (a rater answering an item twice): each answer is its own categorical
  draw given ``eta_i`` and ``b_r``; both count (``rater_answers`` counts answers, not items).
- *raters with one answer*: their ``b_r`` stays close to the population ``N(0,
  diag(sigma_rater^2))``; the odds-ratio HDI is wide and contains 1, so one answer never
  makes an over-user.
- *items answered only "can't solve"*: ``eta_i`` moves towards can't-solve as far as the
  item prior allows; ``q_i`` puts the largest can't-solve share of all items there.
- *categories nobody used*: kept (``read_long(categories=...)``); their ``mu`` and ``q`` go
  low, bounded by the priors, with no special case.
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

Speed (``benchmarks/bench_rater_effects.py``: 1000 items x 20 answers, 100 raters, K = 5,
2 chains, ``ambppl.fit`` from the answers table to the finished result -- compilation,
deterministics, log likelihood and convergence check over all 26,025 stored scalars included;
2 cores, 2026-11-26). One run, 2 x (500 tune + 1500 draws), seed 1:

=========  ======  =========  =========  ========  ===========  ======
sampler    wall s  max R-hat  bulk ESS   tail ESS  divergences  passed
=========  ======  =========  =========  ========  ===========  ======
nutpie      108.0     1.0098        495       785            0  yes
PyMC NUTS   242.2     1.0111        703       870            0  no
numpyro     342.0     1.0139        333       570            0  no
=========  ======  =========  =========  ========  ===========  ======

(PyMC's NUTS given both cores: ``cores=2``; its default counts half the CPUs.) So nutpie is
this model's sampler (info record ``"sampler": "nutpie"``, a core dependency). With seed 2 the
same settings ended at bulk ESS 357 (121.9 s); 2 x (300 + 2200) reached 409 in 111.4 s. The
slowest quantity is ``sigma_item`` (bulk ESS 0.2-0.25 per draw); ``tune=300`` suffices for
nutpie's adaptation. For the standard with a margin use ``chains=2, draws=3000,
sample_kwargs={"tune": 300}``: 152.7 s (R-hat 1.0048, bulk ESS 782, tail 1100) and 149.2 s
(R-hat 1.0059, bulk ESS 554, tail 1011) for seeds 1 and 2, no divergences.

The full CrowdFlower weather data (1000 tweets x 20 answers, 102 raters) meet the standard
with ``centred=False`` and longer chains: 2 x (500 + 6000) ended at R-hat 1.0028, bulk ESS 677,
tail ESS 945, no divergences (463 s on 2 cores shared with other work); notebook 06 (seed 6)
ended at R-hat 1.0028, bulk ESS 837, tail ESS 1118. There the
centred default fails (R-hat 1.54, 36 divergences: "I can't tell" hardly varies between
tweets, ``sigma_item`` about 0.11, a funnel), and shorter non-centred runs miss the standard:
2 x (300 + 3000) ended at R-hat 1.0098, bulk ESS 265, tail ESS 318 (160 s). Centring the rater
effects as well (``b_dev ~ ZeroSumNormal(sigma_rater)``) did not help (bulk ESS 207). Per
variable (``centred=False``, 2 x (300 + 3000)): smallest bulk ESS ``sigma_rater`` 265,
``e_dev`` 346, ``sigma_item`` 591, ``m`` 1051; every per-item output above 2000 with R-hat
<= 1.005; at 2 x 6000 draws ``sigma_rater`` reached 677, ``sigma_item`` 1442, ``mu`` 5448. The
rater scales are the bottleneck: 21 of the 102 raters overuse "I can't tell" (odds ratios up
to 22), a heavy tail that one normal sd per category fits poorly and NUTS explores slowly.
nutpie's low-rank mass matrix (``nuts={"adaptation": "low_rank"}``) took 449 s for the
sampling alone on the benchmark data (diagonal: 68 s) and did not mix better.

The same program in Stan notation::

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
      vector<lower=0>[K] sigma_item;
      vector<lower=0>[K] sigma_rater;
      array[N] vector[K] z;                             // centred item effects
      array[R] vector[K] e;                             // non-centred rater effects
    }
    transformed parameters {
      array[N] vector[K] eta;  array[R] vector[K] b;
      for (i in 1:N) eta[i] = z[i] - mean(z[i]);
      for (r in 1:R) { b[r] = sigma_rater .* e[r];  b[r] -= mean(b[r]); }
    }
    model {
      mu ~ normal(0, mu_sd);                            // zero-sum normal
      sigma_item ~ normal(0, item_scale);
      sigma_rater ~ normal(0, rater_scale);
      for (i in 1:N) z[i] ~ normal(mu, sigma_item);      // centred=False: std_normal()
      for (r in 1:R) e[r] ~ std_normal();
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
models, whose log likelihood integrates their ``q_i`` out (:mod:`ambppl.modeling`). PSIS-LOO
on it asks how well the fit predicts an item's answers *given that item's own parameters*,
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
from ambppl.modeling import add_annotation_data, add_measures

#: Posterior variables always stored by ``fit`` (``log_likelihood`` reads ``eta`` and ``b``).
HYPERPARAMETERS: tuple[str, ...] = ("mu", "sigma_item", "sigma_rater", "eta", "b")

#: Default parameterization of the item logits: centred when the median item has at least
#: this many answers (20 answers: centred 1.4-1.7x the ESS per step of non-centred for
#: ``mu`` and ``sigma_item``; 8 answers: centred diverged). A heuristic between the two.
CENTRED_MIN_ANSWERS = 12

#: Seed of the scrambled Sobol sequence of :func:`qmc_nodes` (fixed: every fit, every item and
#: every draw uses the same nodes).
QMC_SEED = 20240601


def qmc_nodes(n_nodes: int, n_categories: int) -> np.ndarray:
    """Quasi-Monte Carlo standard normal nodes for the rater-population expectation.

    Parameters
    ----------
    n_nodes : int
        Number of nodes ``S`` (a power of two keeps the Sobol sequence balanced).
    n_categories : int
        Dimension ``K``.

    Returns
    -------
    numpy.ndarray, shape (S, K)
        ``Phi^-1`` of the first ``S`` points of a scrambled Sobol sequence (seed
        :data:`QMC_SEED`).

    Raises
    ------
    ValueError
        If ``n_nodes`` is not a positive integer.

    Examples
    --------
    >>> qmc_nodes(64, 3).shape
    (64, 3)
    """
    from scipy.stats import norm, qmc

    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int | np.integer) or n_nodes < 1:
        raise ValueError(f"n_nodes must be a positive integer, but got {n_nodes!r}")
    sobol = qmc.Sobol(d=n_categories, scramble=True, rng=np.random.default_rng(QMC_SEED))
    # random_base2 would insist on a power of two; random(n) warns for other n: draw the next
    # power of two and keep the first n points.
    m = int(np.ceil(np.log2(n_nodes)))
    u = sobol.random_base2(m)[:n_nodes]
    return norm.ppf(u)


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
    import pandas as pd

    if not isinstance(answers, pd.DataFrame) or not {"item", "rater", "label"} <= set(answers):
        raise TypeError(
            "answers must be a pandas.DataFrame with columns item, rater, label (one row per "
            f"answer, as ambppl.data.read_long returns), but got {type(answers).__name__}"
        )
    label = answers["label"]
    if not isinstance(label.dtype, pd.CategoricalDtype):
        raise TypeError(
            "answers['label'] must be a pandas.Categorical (categories in order, can't-solve "
            f"last; see ambppl.data.read_long), but got dtype {label.dtype}"
        )
    if len(answers) == 0:
        raise ValueError("answers must have at least one row, but got an empty table")
    missing = int(answers["rater"].isna().sum())
    if missing:
        raise ValueError(
            "the rater_effects model needs the rater of every answer, but "
            f"{missing} of {len(answers)} answers have no rater id; name the rater column "
            "with rater= (e.g. ambppl.fit(data, 'rater_effects', rater='worker')), or use a "
            "model of counts such as 'hierarchical_dirichlet'"
        )
    if label.isna().any():
        raise ValueError("answers['label'] must have no missing labels (read_long drops them)")
    item_code, item_ids = pd.factorize(answers["item"], sort=False)
    rater_code, rater_ids = pd.factorize(answers["rater"], sort=False)
    categories = [str(c) for c in label.cat.categories]
    cs_label = answers.attrs.get("cant_solve")
    if cs_label is not None and str(cs_label) not in categories:
        raise ValueError(
            f"answers.attrs['cant_solve'] must be one of the categories {categories}, but got "
            f"{cs_label!r}"
        )
    return {
        "item": item_code.astype(np.int64),
        "rater": rater_code.astype(np.int64),
        "y": label.cat.codes.to_numpy().astype(np.int64),
        "item_ids": list(item_ids),
        "rater_ids": list(rater_ids),
        "categories": categories,
        "cant_solve": None if cs_label is None else str(cs_label),
    }


def _tables(codes: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Answers per (item, category) and per (rater, category)."""
    k = len(codes["categories"])
    n, r = len(codes["item_ids"]), len(codes["rater_ids"])
    item_counts = np.bincount(codes["item"] * k + codes["y"], minlength=n * k).reshape(n, k)
    rater_counts = np.bincount(codes["rater"] * k + codes["y"], minlength=r * k).reshape(r, k)
    return item_counts, rater_counts


def model(
    answers: Any,
    *,
    mu_sd: float = 2.0,
    item_scale: float = 2.0,
    rater_scale: float = 1.0,
    n_nodes: int = 256,
    centred: bool | None = None,
) -> Any:
    """Build the PyMC model for one row per answer.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``item``, ``rater`` and ``label`` (a Categorical, can't-solve last) and
        ``attrs["cant_solve"]``, as :func:`ambppl.data.read_long` returns.
    mu_sd : float, default 2.0
        Scale of the zero-sum normal prior of the mean item logits ``mu``.
    item_scale : float, default 2.0
        Scale of the half-normal prior of each ``sigma_item[k]``.
    rater_scale : float, default 1.0
        Scale of the half-normal prior of each ``sigma_rater[k]``.
    n_nodes : int, default 256
        QMC nodes for the population expectation ``q`` (module docstring).
    centred : bool, optional
        ``True``: centred item logits (free ``z_i ~ N(mu, diag(sigma_item^2))``), the faster
        choice with many answers per item; ``False``: non-centred (free ``z_i ~ N(0, I)``),
        needed when items have few answers (8 answers per item gave divergences centred).
        Default: centred when the median item has at least :data:`CENTRED_MIN_ANSWERS`
        answers.

    Returns
    -------
    pymc.Model
        Free variables ``mu``, ``sigma_item``, ``sigma_rater``, ``z`` (item, category),
        ``e`` (rater, category); deterministics ``eta``, ``b``, ``q``, ``q_typical``, the
        measures of ``q`` and ``amb_typical``; data ``is_cant_solve`` and ``rater_answers``.

    Raises
    ------
    TypeError
        If ``answers`` is not such a frame.
    ValueError
        If an answer has no rater id (the message names ``rater=``), for an empty table or
        bad parameter values.
    """
    import pymc as pm
    import pytensor.tensor as pt
    import xarray as xr
    from pytensor.gradient import disconnected_grad

    if centred is not None and not isinstance(centred, bool):
        raise ValueError(f"centred must be True, False or None (automatic), but got {centred!r}")
    for name, value in (("mu_sd", mu_sd), ("item_scale", item_scale), ("rater_scale", rater_scale)):
        if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, but got {value!r}")
    codes = _codes(answers)
    k = len(codes["categories"])
    if k < 2:
        raise ValueError(f"answers must have at least 2 categories, but got {k}")
    nodes = qmc_nodes(n_nodes, k)
    item_counts, rater_counts = _tables(codes)
    if centred is None:
        centred = bool(np.median(item_counts.sum(axis=1)) >= CENTRED_MIN_ANSWERS)
    cs = None if codes["cant_solve"] is None else codes["categories"].index(codes["cant_solve"])
    counts = xr.DataArray(
        item_counts,
        dims=("item", "category"),
        coords={"item": codes["item_ids"], "category": codes["categories"]},
        attrs={"cant_solve": codes["cant_solve"]},
    )
    coords = {
        "item": codes["item_ids"],
        "rater": codes["rater_ids"],
        "category": codes["categories"],
        "answer": np.arange(len(codes["item"])),
    }
    item_idx, rater_idx = codes["item"], codes["rater"]
    with pm.Model(coords=coords) as rater_effects:
        add_annotation_data(counts)
        pm.Data("rater_answers", rater_counts.sum(axis=1), dims="rater")
        # Who answered which item (positions), for summarize(level="rater"): each rater is
        # compared with the typical rater on the items it rated.
        pm.Data("answer_item", item_idx, dims="answer")
        pm.Data("answer_rater", rater_idx, dims="answer")
        sigma_item = pm.HalfNormal("sigma_item", sigma=item_scale, dims="category")
        sigma_rater = pm.HalfNormal("sigma_rater", sigma=rater_scale, dims="category")
        # Exact reparameterization (module docstring, "Sampling"): e_r ~ N(0, I) is split
        # into the raters' sample mean e_bar ~ N(0, I / R) and deviations e_dev (zero-sum
        # over raters, independent of e_bar), and the items are centred on
        # m = mu + d, d = P(sigma_rater * e_bar), the mean logit for the raters' average
        # bias, which the data pin down. mu = m - d keeps its ZeroSumNormal prior through the
        # potential (the change of variables mu -> m has Jacobian 1).
        n_raters = len(coords["rater"])
        m = pm.ZeroSumNormal("m", sigma=mu_sd, dims="category")
        e_bar = pm.Normal("e_bar", 0.0, 1.0 / np.sqrt(n_raters), dims="category")
        d = sigma_rater * e_bar - pt.mean(sigma_rater * e_bar)
        # log ZSN(m - d) - log ZSN(m), the ZeroSumNormal log density being -|x|^2 / (2 s^2)
        pm.Potential("mu_prior", (2.0 * pt.sum(m * d) - pt.sum(d * d)) / (2.0 * mu_sd**2))
        e_dev = pm.ZeroSumNormal("e_dev", sigma=1.0, dims=("category", "rater")).T
        if centred:  # z_i ~ N(m, diag(sigma_item^2)) directly
            z = pm.Normal("z", m, sigma_item, dims=("item", "category"))
        else:  # z_i = m + sigma_item * z~_i, z~_i ~ N(0, I)
            z = m + sigma_item * pm.Normal("z", 0.0, 1.0, dims=("item", "category"))
        eta_raw = z - d
        b_dev = sigma_rater * e_dev
        b_raw = b_dev + d
        # The likelihood sees z and b_dev only: d cancels in eta_i + b_r.
        # log softmax(eta_i + b_r)[y] summed over answers, the softmax invariant to shifts:
        # linear part from the count tables, normalizer from row-max-shifted exponentials.
        m_item = disconnected_grad(pt.max(z, axis=1, keepdims=True))
        m_rater = disconnected_grad(pt.max(b_dev, axis=1, keepdims=True))
        norm = pt.sum(pt.exp(z - m_item)[item_idx] * pt.exp(b_dev - m_rater)[rater_idx], axis=1)
        pm.Potential(
            "answers",
            pt.sum(item_counts * z)
            + pt.sum(rater_counts * b_dev)
            - pt.sum(pt.log(norm))
            - pt.sum(m_item[:, 0] * item_counts.sum(axis=1))
            - pt.sum(m_rater[:, 0] * rater_counts.sum(axis=1)),
        )
        pm.Deterministic("mu", m - d, dims="category")
        eta = pm.Deterministic(
            "eta",
            pt.specify_shape(
                eta_raw - pt.mean(eta_raw, axis=1, keepdims=True), (len(coords["item"]), k)
            ),
            dims=("item", "category"),
        )
        pm.Deterministic(
            "b", b_raw - pt.mean(b_raw, axis=1, keepdims=True), dims=("rater", "category")
        )
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
        The answers the model was fitted to (:func:`ambppl.data.read_long`).
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


def _posterior_for_integration(result: Any, codes: dict[str, Any]) -> Any:
    """The posterior Dataset of ``result``, checked against the answers' codes."""
    import xarray as xr

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
                f"{dim}s and the posterior has {post.sizes[dim]}"
            )
        if dim in post.coords and [str(v) for v in post[dim].values] != [str(v) for v in ids[dim]]:
            raise ValueError(
                f"answers must be the answers the model was fitted to, but their {dim} ids "
                f"(in order of first appearance) differ from the posterior's {dim} coordinate"
            )
    if constant is not None and {"answer_item", "answer_rater"} <= set(constant.data_vars):
        same = len(constant["answer_item"]) == len(codes["item"]) and (
            np.array_equal(constant["answer_item"].values, codes["item"])
            and np.array_equal(constant["answer_rater"].values, codes["rater"])
        )
        if not same:
            raise ValueError(
                "answers must be the answers the model was fitted to (same rows in the same "
                "order), but their items or raters differ from result's constant_data "
                "answer_item / answer_rater"
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
    integrated out (:mod:`ambppl.modeling`), so that leave-one-item-out compares the models
    on the same footing (:func:`with_integrated_log_likelihood`).

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A fit of ``rater_effects`` (:func:`ambppl.fit`) or its posterior: draws of ``mu``,
        ``sigma_item`` (chain, draw, category), ``eta`` (chain, draw, item, category) and
        ``b`` (chain, draw, rater, category).
    answers : pandas.DataFrame
        The answers the model was fitted to (:func:`ambppl.data.read_long`; same rows, same
        order: checked against ``constant_data``'s ``answer_item`` / ``answer_rater`` where
        ``result`` has them, and against the posterior's coordinates).
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
        answers (:func:`ambppl.data.read_long`).
    ValueError
        If the posterior lacks ``mu``, ``sigma_item``, ``eta`` or ``b`` (or they have other
        dims, non-finite values, ``sigma_item <= 0``), the answers are not those of the fit,
        or an option is out of range; the message names the field.

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
        The answers it was fitted to.
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
        As :func:`integrated_log_likelihood`.

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
