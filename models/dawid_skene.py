r"""Dawid-Skene model: a latent true class per item, a confusion matrix per rater, pooled.

Every item ``i`` has one true class ``z_i`` among the ``K`` proper classes (can't-solve is
never a class); every answer ``a`` (item ``i[a]``, rater ``r[a]``, answer ``y_a`` among the
``C`` answer categories: the ``K`` classes, plus can't-solve where the data name one) is a
draw from row ``z_i`` of its rater's confusion matrix ``theta_r`` (``K x C``):

.. math::

   z_i \sim \mathrm{Categorical}(\pi), \qquad
   y_a \mid z \sim \mathrm{Categorical}(\theta_{r[a],\, z_{i[a]}}).

Each rater's rows are partially pooled towards the population's (the hierarchical
Dawid-Skene of Paun et al. 2018, on the logit scale):

.. math::

   \pi &\sim \mathrm{Dirichlet}(\texttt{pi\_prior}\,\mathbf 1_K), \\
   o_k &\sim \mathrm{ZeroSumNormal}_{C-1}(\texttt{beta\_sd}) \ (C \ge 3;\ o_k = 0
       \text{ for } C = 2), \quad
   g_k \sim \mathrm{Gamma}(2,\ 2 / \texttt{diag\_prior}), \\
   \beta_{kj} &= o_{kj} \ (j \ne k), \qquad \beta_{kk} = \max_{j \ne k} o_{kj} + g_k
       \quad (\text{then centred over } j), \\
   \sigma_k &\sim \mathrm{HalfNormal}(\texttt{rater\_scale}), \\
   \theta_{rk} &= \mathrm{softmax}(\beta_k + \sigma_k\, e_{rk}), \quad
   e_{\cdot k \cdot} \sim \mathrm{ZeroSumNormal}_{R \times C}(1),

the rater deviations ``e`` of class ``k`` zero-sum over the answers *and over the raters*.

``beta_k`` are the logits of the *typical* rater's row ``k`` (a rater with ``e = 0``, the
raters' mean on the logit scale, as ``e`` sums to zero over the raters): its
wrong answers ``o_k`` (the can't-solve answer among them) and, above the most frequent
wrong answer by the gap ``g_k > 0`` (prior mean ``diag_prior``), the right one;
``sigma_k`` is how much raters differ on items of class ``k``.

The latent classes summed out
-----------------------------
NUTS cannot sample the discrete ``z_i``; the likelihood sums them out exactly per item:

.. math::

   \log p(y_i \mid \pi, \theta) = \log \sum_{k=1}^K \exp\Big(\log \pi_k +
       \sum_{a \in i} \log \theta_{r[a], k, y_a}\Big),

computed for all items at once: one gather of ``log theta`` per answer (``A x K``), a
segment sum over each item's answers and one log-sum-exp per item (no loop over items, no
item x rater matrix). The class posterior of each item is then exact per draw:
``label_prob_ik = p(z_i = k | y, pi, theta) = softmax_k(log pi_k + sum_{a in i} log
theta_{r[a], k, y_a})``, and its posterior mean over the draws is ``p(z_i = k | y)`` (a
Rao-Blackwellized estimate, better than sampling ``z``).

Priors, label switching and identifiability
-------------------------------------------
- *Label switching.* The likelihood is invariant under a permutation of the classes applied
  to ``pi`` and to the rows of every ``theta_r``: ``K!`` equal modes. A prior that merely
  favours the diagonal does not keep the chains in one of them: with a diagonal-favouring
  normal prior (mean +2 on the diagonal logit, sd 1.5) two of four chains on the product
  data (2 classes, 3 answers per item, prevalence 0.89 / 0.11) settled in the swapped
  labelling (R-hat 1.77, label accuracy 0.06 in those chains), whose prior density was only
  about ``e^-4.6`` lower. The remedy is a constraint: the typical rater answers the true
  class more often than any single wrong answer (``beta_kk > max_{j != k} beta_kj``, the gap
  ``g_k > 0``). Every permutation of the classes other than the identity breaks it (row ``k``
  of the permuted typical rater favours answer ``pi(k) != k``), so the support holds one
  labelling and the chains agree whenever the data's typical rater is plurality-correct in
  every class (raters better than chance on average, class by class). Where it is not (most
  raters swap two classes systematically, or a rare class is answered as another more often
  than as itself), the constraint holds ``g_k`` near 0 for that class, the labels follow the
  constraint rather than the data's mode and may be wrong; the posterior of ``g_k`` piled at
  0 says so. No prior or constraint repairs a crowd that is wrong on average; gold items
  can. Individual raters are not constrained: a rater may be below chance (``e_rk``).
- *The typical rater is the raters' mean.* Were the ``e_rk`` iid, their mean over the raters
  would be free (sd ``sigma_k / sqrt(R)``), and a chain can carry the swapped labelling in
  it with ``g_k`` near 0: on the product data one chain in four did (176 raters, ``sigma``
  3.4 in that chain). Zero-sum over the raters (the deviations of ``R`` iid normals from
  their mean, the dropped mean absorbed in ``beta``) makes ``beta_k`` the raters' own mean
  logit row, so the constraint binds the raters as a group. The price: the prior of
  ``beta`` is put on the mean of the raters at hand rather than of the rater population
  (they differ by ``sigma_k / sqrt(R)`` in sd; with one rater ``e = 0``).
- *Softmax shifts.* ``softmax(x + c) = softmax(x)``: the wrong-answer logits ``o_k`` and the
  rater deviations ``e_rk`` are zero-sum, so the program has no unidentified direction
  (``beta_k`` is stored centred: it sums to zero over the answers).
- *What the data identify.* The confusion rows ``theta_rk`` are identified through the
  agreement between raters (the classical Dawid-Skene argument: with three or more
  conditionally independent answers per item the mixture is identified up to the
  permutation above); a rater with few answers stays near the population, ``sigma_k``
  measures the spread of the raters, and items with one answer carry almost no information
  on the confusion matrices (their class posterior is the prevalence times one row of the
  rater's confusion). With two classes and two answers per item the model is not identified
  from the data alone and the prior decides.
- *Can't-solve is an answer, not a class.* It is column ``cs`` of every ``theta_r``:
  ``theta_{rk,cs}`` is rater ``r``'s propensity to answer "can't solve" on an item of true
  class ``k`` (it may depend on the class: hard classes draw more of it). Items answered
  only "can't solve" keep a class posterior near ``pi`` reweighted by which classes draw
  can't-solve answers. The constraint treats can't-solve like any wrong answer: the typical
  rater answers the true class more often than "can't solve".

Outputs
-------
Per item:

- ``label_prob`` (item, class): the class posterior per draw (above). The summaries take its
  posterior mean: ``label`` (the class of largest posterior probability) and ``label_prob``
  (that probability).
- ``label_entropy`` (item): per draw, the normalized entropy ``-sum_k p_k log p_k / log K``
  of ``label_prob_i``, how *uncertain the true class is* given the parameters; the item
  summary's ``label_entropy`` is that of the class posterior itself, ``p(z_i | y)`` (the
  posterior mean of ``label_prob``), which also counts the uncertainty about the raters. It
  goes to 0 as answers from good raters accumulate, whether or not the raters agree.
- ``q`` (item, category): the answer distribution of a rater drawn at random from the rater
  population, ``q_i = sum_k label_prob_ik Theta_k`` with ``Theta_k = E_e[softmax(beta_k +
  sigma_k e)]`` (the population average, not the typical rater ``softmax(beta_k)``: the
  average over raters is what a new answer from an unknown rater follows, and it is the
  meaning of ``q`` in ``rater_effects``; :func:`population_confusion` computes it by QMC with
  :data:`QMC_SEED`, the nodes fixed), and the ambiguity measures of ``q_i``: ``amb``,
  ``amb_modified``, ``amb_old``, ``entropy`` (the names of every catalog model).
  These describe *how a rater answers the item*: under Dawid-Skene an item's answers
  disagree only because raters err, so ``q_i`` is a mixture of the population's confusion
  rows, and ``amb`` is large when the item's class is uncertain *or* its class is one raters
  confuse. The entropy of the class posterior answers "do we know the label?" (use it to
  decide which items need more answers or an expert); the measures of ``q_i`` answer "how
  much will raters disagree on this item?" (the ambiguity of the paper, comparable with the
  other models). With many answers from good raters ``label_entropy`` goes to 0 while
  ``amb`` tends to the ambiguity of the item's class row.

Per rater:

- ``confusion`` (rater, class, category): ``theta_r``.
- ``accuracy`` (rater): ``sum_k pi_k theta_{rkk}``, the probability that the rater answers
  the true class of an item drawn from the population (can't-solve counts as not correct);
  the per-class accuracies are the diagonal of ``confusion``.
- ``cant_solve_rate`` (rater, only with a can't-solve category): ``sum_k pi_k
  theta_{rk,cs}``, the rater's probability of answering "can't solve" on an item drawn from
  the population; per class it is column ``cs`` of ``confusion``.

And ``pi`` (class), ``beta`` (class, category), ``sigma_rater`` (class),
``population_confusion`` (class, category; the ``Theta_k`` above). The free variables are
``pi``, ``diag_gap`` (``g``, class), ``beta_off`` (``o``, class x other answer; ``C >= 3``
only), ``sigma_rater`` and ``e`` (class, rater, category; two raters or more).

Log likelihood (``log_likelihood`` group): :func:`log_likelihood` gives ``log p(y_i | pi,
theta)`` with ``z_i`` summed out: the probability of the item's answer *sequence* given the
population and the raters, the item's own parameter integrated out, as in the Dirichlet
models (no multinomial coefficient), so ``elpd`` is comparable with theirs.

The model in Stan notation::

    data {
      int<lower=1> N;  int<lower=1> R;  int<lower=2> K;  int<lower=K> C;  // C = K (+1: cs)
      int<lower=1> A;
      array[A] int<lower=1, upper=N> item;
      array[A] int<lower=1, upper=R> rater;
      array[A] int<lower=1, upper=C> y;
      real pi_prior;  real diag_prior;  real beta_sd;  real rater_scale;
    }
    parameters {
      simplex[K] pi;
      array[K] sum_to_zero_vector[C - 1] o;               // wrong answers (C = 2: zero)
      vector<lower=0>[K] g;                               // the right answer's gap
      vector<lower=0>[K] sigma;
      array[K] sum_to_zero_matrix[R, C] e;                // zero-sum over raters and answers
    }
    transformed parameters {
      array[K] vector[C] beta;  array[R, K] vector[C] log_theta;
      for (k in 1:K) {                                    // answer k: right; others: o[k]
        beta[k] = append_row(o[k][1:k-1], append_row(max(o[k]) + g[k], o[k][k:C-1]));
        beta[k] -= mean(beta[k]);
      }
      for (r in 1:R) for (k in 1:K)
        log_theta[r, k] = log_softmax(beta[k] + sigma[k] * e[k, r]');
    }
    model {
      array[N] vector[K] lp;
      pi ~ dirichlet(rep_vector(pi_prior, K));
      for (k in 1:K) o[k] ~ normal(0, beta_sd);           // zero-sum normal
      g ~ gamma(2, 2 / diag_prior);
      sigma ~ normal(0, rater_scale);
      for (k in 1:K) to_vector(e[k]) ~ normal(0, 1);      // zero-sum normal
      for (i in 1:N) lp[i] = log(pi);
      for (a in 1:A) lp[item[a]] += to_vector(log_theta[rater[a], :, y[a]]);
      for (i in 1:N) target += log_sum_exp(lp[i]);
    }
    generated quantities {
      array[N] simplex[K] label_prob;  array[N] simplex[C] q;  vector[R] accuracy;
      // label_prob[i] = softmax(lp[i]); q[i] = Theta' label_prob[i] (Theta: population
      // average of the confusion rows, QMC); accuracy[r] = sum_k pi[k] theta[r, k, k];
      // amb, amb_modified, amb_old, entropy of q[i]; label_entropy of label_prob[i]
    }

Sampling
--------
NUTS (nutpie) samples ``pi``, ``diag_gap``, ``beta_off``, ``sigma_rater`` and the
non-centred ``e``; every deterministic is computed afterwards per kept draw. Measured with
the defaults (4 chains x 1000 draws after 1000 tuning steps, 2 shared cores, 2026-11-27,
``benchmarks/dawid_skene_gold.py``; wall time includes compilation): the convergence
standard (R-hat <= 1.01, bulk and tail ESS >= 400, no divergences) is met on the dog
photos (8070 answers, 127 s; R-hat 1.007, ESS 725 / 489) and the Barzan data (5000
answers, R-hat 1.008); face sentiment (5242 answers, 60-100 s) reached R-hat 1.006-1.011
over four runs (bulk ESS >= 575; one of the four at 1.011 misses the standard); a second dog
run gave R-hat 1.008, ESS 751 / 573 (89 s); not met on the product data (24945 answers, 3 per item,
176 raters: R-hat 1.044 and bulk ESS 153 on ``diag_gap`` and ``sigma_rater`` of the common
class, 104-190 s; the labels of the four chains agree; ``tune=2000`` does not help: R-hat
1.043) and on the spam data (unanimous items: 14 divergences, R-hat 1.006). The product
data have four raters with 1300-2900 answers each (median 32): their ``e_rk`` are pinned by
the data, so ``sigma_k`` can move only with them (the non-centred funnel), and the slowest
quantities after ``diag_gap`` are those raters' ``e``. The remedy ``rater_effects`` uses,
centring only the raters whose answers pin them, was tried and not kept: a 30-step EM pilot
and a method-of-moments rater spread chose 72 of the 176 raters, split exactly from the
rest (the gap between the two groups' means sampled as its own coordinate; the log density
equal to this program's to 1e-8), and gave R-hat 1.030 and 1.041 (bulk ESS 106-112) on the
product data in two runs, no clear gain over 1.044 for a new potential and a pilot; other
thresholds and per-class splits gave 1.022-1.58. ``centred=True`` (free
``rater_dev = sigma_k e_rk``) was faster on the product data (R-hat 1.027) but mixed
``sigma_rater`` worse on the face (1.012, ESS 304) and dog (1.027, ESS 178) data, whose
raters with few answers make a funnel: non-centred is the default.

The fast route
--------------
``method="laplace"`` of :func:`ambppl.fit`: the posterior mode of this same program (every
free variable in its unconstrained coordinates, ``z`` summed out; L-BFGS with the exact
gradient, which at the mode agrees with EM's fixed point, Fisher's identity), then
independent draws from the Laplace approximation ``N(mode, H^-1)`` (``H`` the Hessian of
the negative log posterior there, by central differences of the exact gradient), mapped to
every posterior variable. Label accuracy against gold (``benchmarks/dawid_skene_gold.py``;
NUTS / Laplace / crowd-kit's DawidSkene / majority vote): dog 0.838 / 0.839 / 0.843 /
0.818, face 0.658 / 0.658 / 0.640 / 0.644, product 0.937 / 0.939 / 0.940 / 0.897, spam
(100 gold items) 0.66 for all, Barzan (30 gold items) 0.633 for the three Dawid-Skene fits
and 0.70 for majority vote. Laplace takes 33-73 s (compilation and the per-draw
deterministics; the optimizer a few seconds). The mode under-pools the raters: on a
simulated design (150 items x 5 answers from 15 raters, ``planted(seed=1)`` of
``tests/inference/test_model_dawid_skene.py``) ``sigma_rater`` is 2.5-2.7 at the mode and
0.3-0.8 in the posterior mean, yet both give the same label accuracy (0.913; Bayes rate of
the planted parameters 0.96, majority vote 0.873). Rater accuracies' HDIs from Laplace are
those of the Gaussian approximation: use NUTS where they matter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.inference.modeling import (
    add_annotation_data,
    add_measures,
    answer_codes,
    qmc_normal_nodes,
)

#: Posterior variables always stored by ``fit`` (``log_likelihood`` reads ``pi`` and
#: ``confusion``; the rater summary reads ``accuracy`` and ``confusion``).
HYPERPARAMETERS: tuple[str, ...] = (
    "pi",
    "diag_gap",
    "beta",
    "sigma_rater",
    "label_prob",
    "label_entropy",
    "confusion",
    "accuracy",
)

#: Deterministics that are functions of the answers, not of the parameters alone (the
#: class posterior and what is computed from it): :func:`ambppl.validation.sbc` ranks the
#: parameters only (the simulated true classes are not a variable of the program).
DATA_DEPENDENT: tuple[str, ...] = (
    "label_prob",
    "label_entropy",
    "q",
    "amb",
    "amb_modified",
    "amb_old",
    "entropy",
)

#: Seed of the scrambled Sobol nodes of :func:`population_confusion` (fixed).
QMC_SEED = 20261127

#: Elements (float64) of the largest temporary array of :func:`log_likelihood`.
LL_CHUNK = 2**22


def qmc_nodes(n_nodes: int, dim: int) -> np.ndarray:
    """Scrambled-Sobol standard normal nodes (``S x dim``, seed :data:`QMC_SEED`):
    :func:`ambppl.inference.modeling.qmc_normal_nodes`.

    Examples
    --------
    >>> qmc_nodes(8, 3).shape
    (8, 3)
    """
    return qmc_normal_nodes(n_nodes, dim, QMC_SEED)


def population_confusion(beta: Any, sigma: Any, nodes: np.ndarray) -> Any:
    """``Theta_k = E_e[softmax(beta_k + sigma_k e)]``, ``e ~ N(0, I_C)``, by QMC.

    Parameters
    ----------
    beta : numpy.ndarray or pytensor tensor, shape (..., K, C)
        Population logits.
    sigma : numpy.ndarray or pytensor tensor, shape (..., K)
        Rater scales per class.
    nodes : numpy.ndarray, shape (S, C)
        Standard normal nodes (:func:`qmc_nodes`). The rater deviations are zero-sum
        normals, the projection of ``N(0, I_C)`` on the zero-sum vectors; the softmax
        ignores the part the projection removes, so iid normal nodes give the same average.

    Returns
    -------
    same kind as ``beta``, shape (..., K, C)

    Examples
    --------
    >>> theta = population_confusion(np.zeros((2, 3)), np.ones(2), qmc_nodes(256, 3))
    >>> bool(np.allclose(theta.sum(axis=-1), 1.0) and np.abs(theta - 1 / 3).max() < 0.01)
    True
    """
    if type(beta).__module__.startswith("pytensor"):
        import pytensor.tensor as pt

        x = beta[..., None, :] + sigma[..., None, None] * nodes  # (..., K, S, C)
        return pt.mean(pt.special.softmax(x, axis=-1), axis=-2)
    from scipy.special import softmax

    x = np.asarray(beta)[..., None, :] + np.asarray(sigma)[..., None, None] * nodes
    return softmax(x, axis=-1).mean(axis=-2)


def _codes(answers: Any) -> dict[str, Any]:
    """Integer codes of the answers' items, raters and categories (checked,
    :func:`ambppl.inference.modeling.answer_codes`), with the proper classes and the
    position of the can't-solve answer."""
    codes = answer_codes(answers, "dawid_skene")
    categories, cs_label = codes["categories"], codes["cant_solve"]
    cs = None if cs_label is None else categories.index(cs_label)
    classes = [c for j, c in enumerate(categories) if j != cs]
    if len(classes) < 2:
        raise ValueError(
            f"answers must have at least 2 categories besides can't-solve, but got {classes}"
        )
    proper = [j for j in range(len(categories)) if j != cs]
    return {**codes, "classes": classes, "proper": proper, "cs": cs}


def _check_positive(**values: Any) -> None:
    for name, value in values.items():
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not (ok and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, but got {value!r}")


def wrong_answers(proper: list[int], n_categories: int) -> np.ndarray:
    """Per class ``k`` the positions of its wrong answers (K x (C - 1)), in category order.

    Examples
    --------
    >>> wrong_answers([0, 1], 3).tolist()
    [[1, 2], [0, 2]]
    """
    return np.array([[j for j in range(n_categories) if j != p] for p in proper])


def population_logits(off: Any, gap: Any, proper: list[int], n_categories: int) -> Any:
    """``beta`` (K x C, centred over the answers) from the wrong-answer logits ``off``
    (K x (C - 1)) and the gaps ``gap`` (K): ``beta_kk = max_j off_kj + gap_k``.

    Examples
    --------
    >>> population_logits(np.zeros((2, 1)), np.array([2.0, 1.0]), [0, 1], 2).tolist()
    [[1.0, -1.0], [-0.5, 0.5]]
    """
    k = len(proper)
    rows = np.repeat(np.arange(k), n_categories - 1)
    cols = wrong_answers(proper, n_categories).ravel()
    if type(off).__module__.startswith("pytensor") or type(gap).__module__.startswith("pytensor"):
        import pytensor.tensor as pt

        beta = pt.zeros((k, n_categories))
        beta = pt.set_subtensor(beta[rows, cols], pt.flatten(off))
        beta = pt.set_subtensor(beta[np.arange(k), proper], pt.max(off, axis=1) + gap)
        return beta - pt.mean(beta, axis=1, keepdims=True)
    off, gap = np.asarray(off, dtype=np.float64), np.asarray(gap, dtype=np.float64)
    beta = np.zeros((*off.shape[:-2], k, n_categories))
    beta[..., rows, cols] = off.reshape(*off.shape[:-2], -1)
    beta[..., np.arange(k), proper] = off.max(axis=-1) + gap
    return beta - beta.mean(axis=-1, keepdims=True)


def model(
    answers: Any,
    *,
    pi_prior: float = 1.0,
    diag_prior: float = 2.0,
    beta_sd: float = 1.5,
    rater_scale: float = 1.0,
    n_nodes: int = 256,
    centred: bool | None = None,
) -> Any:
    """Build the PyMC model for one row per answer.

    Parameters
    ----------
    answers : pandas.DataFrame
        Columns ``item``, ``rater`` and ``label`` (a Categorical, can't-solve last) and
        ``attrs["cant_solve"]``, as :func:`ambppl.data.readers.read_long` returns.
    pi_prior : float, default 1.0
        Concentration of the symmetric Dirichlet prior of the prevalences ``pi``.
    diag_prior : float, default 2.0
        Prior mean of the gap ``g_k`` (Gamma(2) prior): the typical rater's logit of the
        right answer over its most frequent wrong one (module docstring).
    beta_sd : float, default 1.5
        Scale of the zero-sum normal prior of the typical rater's wrong-answer logits.
    rater_scale : float, default 1.0
        Scale of the half-normal prior of the rater spread ``sigma_rater`` (one per class).
    n_nodes : int, default 256
        QMC nodes of the population average of the confusion rows (``q``).
    centred : bool, optional
        ``True``: the free variables are the rater deviations ``rater_dev = sigma_k e_rk``
        (class, rater, category; zero-sum normal with scale ``sigma_k``); ``False`` or
        ``None`` (the default): the non-centred ``e`` (module docstring, "Sampling").

    Returns
    -------
    pymc.Model
        Free variables ``pi``, ``diag_gap``, ``beta_off`` (three or more answer categories),
        ``sigma_rater``, ``e``; the likelihood is the
        potential ``answers``; deterministics ``beta``, ``confusion``, ``label_prob``,
        ``label_entropy``, ``population_confusion``, ``q`` and its measures, ``accuracy``
        and (with a can't-solve category) ``cant_solve_rate``; data ``is_cant_solve``,
        ``rater_answers``, ``answer_item``, ``answer_rater``.

    Raises
    ------
    TypeError
        If ``answers`` is not such a frame.
    ValueError
        If an answer has no rater id, for fewer than two proper classes, or bad parameters.

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data.readers import read_long
    >>> answers = read_long(pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"],
    ...                                   "label": ["x", "y", "x"]}))
    >>> m = model(answers)
    >>> sorted(rv.name for rv in m.free_RVs)
    ['diag_gap', 'e', 'pi', 'sigma_rater']
    """
    import pymc as pm
    import pytensor.tensor as pt
    import xarray as xr

    _check_positive(
        pi_prior=pi_prior, diag_prior=diag_prior, beta_sd=beta_sd, rater_scale=rater_scale
    )
    codes = _codes(answers)
    cats, classes, proper, cs = codes["categories"], codes["classes"], codes["proper"], codes["cs"]
    c, k = len(cats), len(classes)
    n_items, n_raters = len(codes["item_ids"]), len(codes["rater_ids"])
    nodes = qmc_nodes(n_nodes, c)
    item_idx, rater_idx, y = codes["item"], codes["rater"], codes["y"]
    item_counts = np.bincount(item_idx * c + y, minlength=n_items * c).reshape(n_items, c)
    counts = xr.DataArray(
        item_counts,
        dims=("item", "category"),
        coords={"item": codes["item_ids"], "category": cats},
        attrs={"cant_solve": codes["cant_solve"]},
    )
    coords = {
        "item": codes["item_ids"],
        "rater": codes["rater_ids"],
        "class": classes,
        "category": cats,
        "answer": np.arange(len(y)),
    }
    if c >= 3:
        coords["other_answer"] = [f"o{j + 1}" for j in range(c - 1)]
    with pm.Model(coords=coords) as dawid_skene:
        add_annotation_data(counts)
        pm.Data("rater_answers", np.bincount(rater_idx, minlength=n_raters), dims="rater")
        pm.Data("answer_item", item_idx, dims="answer")
        pm.Data("answer_rater", rater_idx, dims="answer")
        pi = pm.Dirichlet("pi", a=np.full(k, float(pi_prior)), dims="class")
        gap = pm.Gamma("diag_gap", alpha=2.0, beta=2.0 / diag_prior, dims="class")
        if c >= 3:
            off = pm.ZeroSumNormal("beta_off", sigma=beta_sd, dims=("class", "other_answer"))
        else:
            off = pt.zeros((k, 1))
        sigma = pm.HalfNormal("sigma_rater", sigma=rater_scale, dims="class")
        if centred is not None and not isinstance(centred, bool):
            raise ValueError(f"centred must be True, False or None, but got {centred!r}")
        if n_raters > 1 and centred:  # the deviations sigma_k e_rk themselves
            dev = pm.ZeroSumNormal(
                "rater_dev",
                sigma=sigma[:, None, None],
                dims=("class", "rater", "category"),
                n_zerosum_axes=2,
            )
            scaled = pt.swapaxes(dev, 0, 1)  # (R, K, C)
        elif n_raters > 1:  # zero-sum over the raters and the answers, per class
            e = pm.ZeroSumNormal(
                "e", sigma=1.0, dims=("class", "rater", "category"), n_zerosum_axes=2
            )
            scaled = sigma[None, :, None] * pt.swapaxes(e, 0, 1)  # (R, K, C)
        else:
            scaled = pt.zeros((1, k, c))
        beta = pm.Deterministic(
            "beta", population_logits(off, gap, proper, c), dims=("class", "category")
        )
        logits = beta[None] + scaled  # (R, K, C)
        log_theta = pt.special.log_softmax(logits, axis=-1)
        # one row (K values) per answer: log theta[r_a, :, y_a], gathered from the
        # (R * C, K) table; then the segment sum over each item's answers
        table = pt.reshape(pt.swapaxes(log_theta, 1, 2), (n_raters * c, k))
        per_answer = table[rater_idx * c + y]  # (A, K)
        per_item = pt.inc_subtensor(pt.zeros((n_items, k))[item_idx], per_answer)
        joint = pt.log(pi)[None, :] + per_item  # log p(z_i = k, y_i)
        pm.Potential("answers", pt.sum(pt.logsumexp(joint, axis=1)))
        log_post = joint - pt.logsumexp(joint, axis=1, keepdims=True)
        label_prob = pm.Deterministic("label_prob", pt.exp(log_post), dims=("item", "class"))
        pm.Deterministic(
            "label_entropy",
            -pt.sum(label_prob * log_post, axis=1) / np.log(k),
            dims="item",
        )
        theta = pm.Deterministic(
            "confusion", pt.exp(log_theta), dims=("rater", "class", "category")
        )
        pop = pm.Deterministic(
            "population_confusion",
            population_confusion(beta, sigma, nodes),
            dims=("class", "category"),
        )
        q = pm.Deterministic("q", pt.dot(label_prob, pop), dims=("item", "category"))
        add_measures(q, cant_solve=cs)
        pm.Deterministic("accuracy", pt.dot(theta[:, np.arange(k), proper], pi), dims="rater")
        if cs is not None:
            pm.Deterministic("cant_solve_rate", pt.dot(theta[:, :, cs], pi), dims="rater")
    return dawid_skene


def marginal_terms(log_pi: np.ndarray, log_theta: np.ndarray, codes: dict[str, Any]) -> np.ndarray:
    """``log pi_k + sum_{a in i} log theta_{r[a], k, y_a}`` per draw, item and class.

    Parameters
    ----------
    log_pi : numpy.ndarray, shape (D, K)
    log_theta : numpy.ndarray, shape (D, R, K, C)
    codes : dict
        From the answers (``item``, ``rater``, ``y`` positions, ``item_ids``).

    Returns
    -------
    numpy.ndarray, shape (D, N, K)
    """
    n_items = len(codes["item_ids"])
    order = np.argsort(codes["item"], kind="stable")
    item_idx, rater_idx, y = codes["item"][order], codes["rater"][order], codes["y"][order]
    starts = np.searchsorted(item_idx, np.arange(n_items))
    per_answer = log_theta[:, rater_idx, :, y]  # (A, D, K): advanced indices first
    per_item = np.add.reduceat(per_answer, starts, axis=0)  # (N, D, K)
    return np.moveaxis(per_item, 0, 1) + log_pi[:, None, :]


def log_likelihood(posterior: Any, answers: Any, **params: Any) -> np.ndarray:
    """Per item and draw: ``log p(y_i | pi, theta)``, the true class summed out.

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws of ``pi`` (chain, draw, class) and ``confusion`` (chain, draw, rater, class,
        category).
    answers : pandas.DataFrame
        The answers the model was fitted to (:func:`ambppl.data.readers.read_long`).
    **params
        The model's parameters (unused).

    Returns
    -------
    numpy.ndarray, shape (chains, draws, items)
        ``logsumexp_k (log pi_k + sum_{a in i} log theta_{r[a], k, y_a})``: the item's
        answer sequence with its own parameter ``z_i`` summed out (module docstring).

    Examples
    --------
    >>> import numpy as np, pandas as pd, xarray as xr
    >>> answers = pd.DataFrame({"item": [0, 0], "rater": ["a", "b"],
    ...                         "label": pd.Categorical(["x", "y"], categories=["x", "y"])})
    >>> theta = np.array([[0.9, 0.1], [0.2, 0.8]])   # both raters
    >>> post = xr.Dataset({
    ...     "pi": (("chain", "draw", "class"), np.full((1, 1, 2), 0.5)),
    ...     "confusion": (("chain", "draw", "rater", "class", "category"),
    ...                   np.broadcast_to(theta, (1, 1, 2, 2, 2)))})
    >>> float(np.exp(log_likelihood(post, answers))[0, 0, 0])   # .5*.9*.1 + .5*.2*.8
    0.125
    """
    from scipy.special import logsumexp

    codes = _codes(answers)
    pi = posterior["pi"].transpose("chain", "draw", "class").values
    theta = posterior["confusion"].transpose("chain", "draw", "rater", "class", "category")
    theta = theta.values
    chains, draws = pi.shape[:2]
    d_all = chains * draws
    pi = pi.reshape(d_all, -1)
    theta = theta.reshape(d_all, *theta.shape[2:])
    n_items = len(codes["item_ids"])
    out = np.empty((d_all, n_items))
    chunk = max(1, LL_CHUNK // max(1, len(codes["y"]) * pi.shape[1]))
    with np.errstate(divide="ignore"):
        for lo in range(0, d_all, chunk):
            sl = slice(lo, lo + chunk)
            joint = marginal_terms(np.log(pi[sl]), np.log(theta[sl]), codes)
            out[sl] = logsumexp(joint, axis=-1)
    return out.reshape(chains, draws, n_items)


def simulate_answers(
    pi: Any, confusion: Any, item: Any, rater: Any, *, rng: Any = None
) -> np.ndarray:
    """Simulate ``z_i ~ Categorical(pi)`` and ``y_a ~ Categorical(confusion[r[a], z_{i[a]}])``.

    The model's own data-generating step (:func:`ambppl.validation.sbc` finds it by name).

    Parameters
    ----------
    pi : array_like, shape (..., K)
        Prevalences (any leading batch dimensions, e.g. one per simulation).
    confusion : array_like, shape (..., R, K, C)
        Confusion matrices, the same leading dimensions.
    item, rater : array_like of int, shape (A,)
        Position of each answer's item and rater (the design); items are ``0..max(item)``.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    numpy.ndarray of int64, shape (..., A)
        The answer category (``0..C-1``) of every answer.

    Examples
    --------
    >>> theta = np.array([[[1.0, 0.0], [0.0, 1.0]]])                 # one perfect rater
    >>> y = simulate_answers([0.0, 1.0], theta, [0, 1], [0, 0], rng=0)  # every item class 1
    >>> y.tolist()
    [1, 1]
    """
    pi = np.asarray(pi, dtype=np.float64)
    theta = np.asarray(confusion, dtype=np.float64)
    item, rater = np.asarray(item, dtype=np.int64), np.asarray(rater, dtype=np.int64)
    rng = np.random.default_rng(rng)
    if theta.ndim < 3 or theta.shape[-2] != pi.shape[-1] or theta.shape[:-3] != pi.shape[:-1]:
        raise ValueError(
            "pi (..., K) and confusion (..., R, K, C) must agree in K and leading dimensions, "
            f"but got shapes {pi.shape} and {theta.shape}"
        )
    n_items = int(item.max()) + 1 if item.size else 0
    batch = pi.shape[:-1]
    u = rng.random((*batch, n_items, 1))
    z = (u > np.cumsum(pi, axis=-1)[..., None, :]).sum(axis=-1)
    z = np.minimum(z, pi.shape[-1] - 1)  # (..., N)
    flat_theta = theta.reshape(-1, *theta.shape[-3:])
    flat_z = z.reshape(-1, n_items)
    rows = flat_theta[np.arange(flat_theta.shape[0])[:, None], rater[None, :], flat_z[:, item]]
    v = rng.random((*rows.shape[:-1], 1))
    y = (v > np.cumsum(rows, axis=-1)).sum(axis=-1)
    y = np.minimum(y, theta.shape[-1] - 1)
    return y.reshape(*batch, len(item)).astype(np.int64)
