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
  can't-solve answers, by the product of their raters' per-class can't-solve rates. The
  mode (``method="map"``) sets those rates further apart than the posterior does, so it
  overstates how certain such items' labels are (``label_prob``); see ``method="map"``
  below. The constraint treats can't-solve like any wrong answer: the typical rater
  answers the true class more often than "can't solve".

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
  These describe *how a random rater answers an item of the item's class*, not the item
  itself: under Dawid-Skene an item's answers disagree only because raters err, and every
  item of a class is answered from the same confusion rows, so ``q_i`` is a mixture of the
  population's rows ``Theta_k`` weighted by the item's class posterior, and ``amb`` is large
  when the item's class is uncertain *or* its class is one raters confuse. Once the label is
  clear (``label_prob_ik`` near 1) ``amb`` is the class's constant ``amb(Theta_k)``, whatever
  the item's own answers: two items of a clear class, one answered unanimously and one
  split, get the same ``amb`` (``notebooks/09_dawid_skene.ipynb``, section d, shows it on the
  face data).

  The outputs thus answer different questions. The entropy of the class posterior answers
  "do we know the label?" (use it to decide which items need more answers or an expert);
  the measures of ``q_i`` answer "how much will a new rater disagree on an item of this
  class?", with the label's doubt mixed in: the right question where the items of a class
  are alike, and a measure of which classes raters confuse. "Which items are ambiguous?"
  (the paper's ambiguity, item by item) needs a model that gives each item its own answer
  distribution: ``dirichlet_categorical`` or ``hierarchical_dirichlet`` on the counts of the
  same answers, or ``rater_effects`` on the answers (which also accounts for who answered).
  The measures are the other models' functions, on the same scale, but here they rank items
  by class and label doubt, not by how much their own answers split. With many answers
  from good raters ``label_entropy`` goes to 0 while ``amb`` tends to the ambiguity of the
  item's class row.

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
models (no multinomial coefficient), so ``elpd`` is comparable with theirs. Leave-one-item-out
on that footing (``benchmarks/loo_models.py``: each model with its defaults, ``rater_effects``
with ``eta_i`` integrated out; ``ambppl.compare``'s elpd difference to the best, +- its se,
2026-11-27)::

    data (items)      dawid_skene   rater_effects   hierarchical_dirichlet   dirichlet_categorical
    face (584)        -220 +- 29    best            -570 +- 35               -1050 +- 39
    anesthesia (45)   best          -10 +- 6        -20 +- 7                 -80 +- 10
    Barzan (1000)     best          -10 +- 13       -300 +- 26               -540 +- 28

The raters' identities pay: on face and Barzan both models of answers beat both models of
counts by 290 nats or more. Between the two, the data decide: on face an item's answers
spread more than one true class and the raters' confusion rows allow (``rater_effects``
gives each item its own answer distribution), on anesthesia and Barzan one true class per
item predicts as well or better. Pareto k > 0.7 for at most 2 items of any ``dawid_skene``
fit.

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
non-centred ``e``; every deterministic is computed afterwards per kept draw. The defaults
are 4 chains x 2000 draws after 1000 tuning steps (the info record), with
:func:`nuts_defaults`' rules per design (``target_accept`` 0.9 below 10 raters, 0.99 where
every item is unanimous, 3000 draws where the median item has at most three answers, and
then nutpie's draw-variance mass matrix where one rater gives a tenth of them). 2000 draws
rather than 1000 because the standard (R-hat <= 1.01, bulk and tail ESS >= 400, no
divergences) is checked on every stored variable, thousands of per-item quantities among
them: with 1000 draws the face data's largest R-hat was 1.006-1.012 over five runs (a label
probability or ``sigma_rater``), with 2000 it was 1.0034-1.0044 over three seeds (bulk ESS
>= 1183, 28-34 s). The real-data gallery with these defaults (``benchmarks/gallery.py
--models dawid_skene``, 2 cores, 2026-11-27; wall time includes compilation;
docs/benchmarks.md has the table) meets the standard on all sixteen rows: the weather (20000
answers, 148 s), anesthesia (22 s), dog (67 s), face (42 s), product (284 s; rerun
2026-11-29), spam (171 s) and Barzan (44 s) data, the stress designs ``two_classes``,
``three_answers`` (82 s with the 3000 draws of the few-answers rule), ``many_raters`` (391 s
for 50000 answers on a quiet machine, 13 GB), ``dominant_rater`` and ``near_identical``, and
the simulated crowds shaped like public sets the project has not used (answers from a
Dawid-Skene process with Zipf rater volumes and spammers, 2026-11-28): ``crowd_two_classes``
(800 x 10 answers, 164 raters, 45 s), ``crowd_cant_solve`` (1600 x 5, 44 raters, 4 classes
and can't-solve, 72 s), ``crowd_dense`` (108 items x 39 raters, 33 s) and, 2026-11-29,
``crowd_few_answers`` (3000 x 3 answers, 150 raters, the busiest a seventh of the answers:
the busy-rater clause below, met unseen; R-hat 1.003, 88 s). One full run of the gallery
on 2026-12-01 met the standard again on all sixteen rows with the same diagnostics (walls
0.7-1.6 times these, anesthesia's 2.8 on a new compilation cache; product 287 s). Two rows
needed a rule: the spam data (every item unanimous: 30 divergences at ``target_accept``
0.8, none at 0.99, :func:`nuts_defaults`) and the product data (24945 answers, 3 per item,
176 raters: R-hat 1.013 on ``diag_gap``, bulk ESS 342, 197 s with 2000 draws; 1.044 with 1000;
``tune=2000`` does not help), which the 3000 draws of the few-answers rule bring to R-hat
1.0083-1.0119 (seeds 1-5; four of five within the standard) and its busy-rater clause,
nutpie's mass matrix from the variances of the draws, to 1.0031-1.0046 (seeds 1-5, bulk ESS
>= 981, no divergences, 237-284 s; :func:`nuts_defaults` has the runs). The product data
have four raters with 1300-2900 answers each (median 32): their ``e_rk`` are pinned by the
data, so ``sigma_k`` can move only with them (the non-centred funnel), and the slowest
quantities after ``diag_gap`` are those raters' ``e``. The remedy ``rater_effects`` uses,
centring only the raters whose answers pin them, was tried and not kept: a 30-step EM pilot
and a method-of-moments rater spread chose 72 of the 176 raters, split exactly from the rest
(the gap between the two groups' means sampled as its own coordinate; the log density equal
to this program's to 1e-8), and gave R-hat 1.030 and 1.041 (bulk ESS 106-112) on the product
data in two runs, no clear gain over 1.044 for a new potential and a pilot; other thresholds
and per-class splits gave 1.022-1.58. ``centred=True`` (free ``rater_dev = sigma_k e_rk``)
was faster on the product data (R-hat 1.027) but mixed ``sigma_rater`` worse on the face
(1.012, ESS 304) and dog (1.027, ESS 178) data, whose raters with few answers make a funnel:
non-centred is the default.

The fast routes
---------------
``method="laplace"`` of :func:`ambppl.fit`: the posterior mode of this same program (every
free variable in its unconstrained coordinates, ``z`` summed out; L-BFGS with the exact
gradient, which at the mode agrees with EM's fixed point, Fisher's identity, started from
the mode :func:`posterior_mode` finds, so that ``laplace`` and ``map`` share their local
mode), then independent draws from the Laplace approximation ``N(mode, H^-1)`` (``H`` the
Hessian of the negative log posterior there, by central differences of the exact gradient),
mapped to every posterior variable. The posterior has several local modes, and the shared
one is not always the highest: started from PyMC's initial point instead, L-BFGS found modes
whose log density minus that of the map route's mode was +2.41, -0.06, +2.34, -0.48 and
+0.73 nats on planted crowds (60 items x 3 answers, 10 raters, 3 classes, seeds 2-6;
labelling 1-11 of the 60 items differently), -0.8 to +1.7 on 7 of the 12 seeds of the
recovery benchmark below (the other 5 within 0.02), and -0.72 on the dog data (one gold
item labelled differently at the mode; on the other four gold sets the same labels). With
``centred=True``, whose mode :func:`posterior_mode` does not compute, L-BFGS starts from
PyMC's initial point. It takes 3-23 s on the gold data sets (compiling the program and the
per-draw deterministics; the optimizers well under a second but for the numpy mode's 2.2 s
on the product data). The mode under-pools the raters: on a simulated design (150 items x
5 answers from 15 raters, ``planted(seed=1)`` of ``tests/inference/test_model_dawid_skene.py``)
``sigma_rater`` is 2.5-2.7 at the mode and 0.3-0.8 in the posterior mean, yet both give the
same label accuracy (0.913; Bayes rate of the planted parameters 0.96, majority vote 0.873).
Rater accuracies' HDIs from Laplace are those of the Gaussian approximation: use NUTS where
they matter.

``method="map"``: the same mode alone (the one ``laplace`` centres on, which starts from it
and refines it with PyMC's gradient), one chain of one draw marked as a point (no
uncertainty: the summaries' HDIs and probabilities are NaN), computed by
:func:`posterior_mode` in numpy: the log posterior of the program's unconstrained
coordinates written out with its exact gradient (equal to PyMC's compiled log density up to
a constant, tested), L-BFGS from the answer shares, and the deterministics at the mode; no
PyMC program is built or compiled. Its ``mode_logp`` attribute is that numpy log posterior,
which leaves out the program's constant: it differs from the ``laplace`` route's
``mode_logp`` (PyMC's log density, constants included) by that constant at the same mode
(e.g. -133.13 against -153.92), so compare ``mode_logp`` only between fits of one route.
The mode is a local one: from another start (each rater's own smoothed confusion rows)
L-BFGS found on the face data a mode 1.3 nats higher that labels 8 gold items differently
(accuracy 0.644 against 0.658); the answer-share start is kept, as it agrees with the NUTS
labels on every gold set.
Being one point, the mode overstates the certainty of items whose few answers, or
uninformative ones, leave the label to the raters' confusion rates: its ``label_prob``
takes the rates at their most probable values, which are more extreme than their posterior
means, and leaves out their uncertainty. Three items answered only "can't solve" (by 2, 2
and 3 raters), added to 160 simulated answers on 40 items by 6 raters (two classes and
can't-solve; ``cant_solve_only_answers`` of ``tests/inference/test_model_audit_fixes.py``,
2026-12-07), got ``label_prob`` .96, .94 and .99 from ``map``, .88, .85 and .93 from
``laplace`` (200 draws) and .82, .68 and .75 from NUTS (2 chains of 300 draws, which gives
the second item the other class). Use ``laplace`` or NUTS where ``label_prob`` matters for
items with few or uninformative answers.

Calibration and recovery (2 shared cores, 2026-11-27, the program as it is here; the
commands and full tables are in the two benchmark files):

- *SBC* (``benchmarks/sbc_full.py --model dawid_skene``: 100 simulations of 20 items x 3-5
  answers from 8 raters, 3 classes and can't-solve, drawn from the prior): NUTS passes, no
  row of 47 flagged (smallest Holm p 0.062; mean PIT 0.42-0.56, sd 0.266-0.296); Laplace
  fails (21 rows): its mode overstates ``sigma_rater`` (mean PIT 0.11-0.13), and the
  population confusion, the gaps and the can't-solve rates follow.
- *Recovery* of planted crowds not drawn from the prior (``benchmarks/recovery_dawid_skene.py``:
  300 items x 5 answers, 40 raters with accuracies uniform on 0.5-0.9, 4 of them answering at
  random, 12 seeds): NUTS labels 0.950 of the items right (the Bayes rate of the planted
  parameters 0.970, majority vote 0.915), ``label_prob`` is calibrated (ECE 0.004), the 94 %
  HDIs of rater accuracy cover 0.912 of the ordinary raters' true accuracies but 0.25 of
  the random raters' (their posterior means sit about 0.18 above the true 0.25: the normal
  rater population pulls an outlier towards the crowd), and the prevalences' HDIs cover
  0.97. A heavier-tailed rater population was tried and not kept: Student-t deviations (one
  scale per rater, ``InverseGamma(2, 2)``, shared by its classes and answers, so 4 degrees
  of freedom; centred over the raters after scaling to keep ``beta`` their mean) covered the
  random raters' accuracies at 0.44 +- 0.07 only (mean error +0.15; the others 0.914,
  labels 0.949, ECE 0.006; the same 12 seeds, 37 s per fit): some 37 answers per rater do
  not overrule a population that still pools. On the gold data its labels were within 2
  items of the normal population's (dog .840, face .658, Barzan .633) and on the product
  data it did not converge (R-hat 1.54, 147 divergences, 360 s). Laplace labels 0.944
  right, ECE 0.020, covers 0.95 of the accuracies with intervals 1.7 times as wide (with
  its start at the map route's mode, ``--methods laplace``: 0.942, ECE 0.020, 0.950 and
  intervals 0.416 wide against 0.414; the former start rerun on the same tree: 0.944,
  0.020, 0.946).

Against gold (``benchmarks/dawid_skene_gold.py``, 2 cores, 2026-11-28, each route with its
defaults: NUTS 4 x 2000 draws, 3000 on the product data, ``target_accept`` 0.99 on the
unanimous spam data; every NUTS fit met the convergence standard; the product rows rerun
2026-11-29 with the busy-rater mass matrix, ``--data jn_product --methods
nuts,laplace,map,crowdkit``, gave the same figures, R-hat 1.0044; the NUTS figures are of
the rerun of 2026-12-08, ``--methods nuts,map,crowdkit``, after ``fit`` stopped compiling
with fast math, which gave NUTS other draws: every fit met the standard again and no figure
moved by more than one item or .002 but those in the pairs below): label accuracy, the
Brier score of the whole class posterior (``mean_i sum_k (p_ik - [k = gold_i])^2``, a
proper score: it judges the probabilities, not only the label they pick), expected
calibration error of ``label_prob`` (10 bins), Spearman's correlation of the rater
accuracies with the raters' accuracy on the gold items (raters with >= 5 gold answers), and
NUTS's labels paired with crowd-kit's and majority vote's on the gold items (wins / losses:
items only one of the two gets right; p: exact two-sided McNemar, and where it differs the
exact sign-flip p over *configurations* below):

=================  ===========================  ===================  ===================
data (gold items)  accuracy NUTS/Lap/MAP/ck/MV  Brier NUTS/MAP/ck    ECE NUTS/Lap/MAP/ck
=================  ===========================  ===================  ===================
dog (807)          .838/.839/.840/.843/.818     .306/.311/.306       .145/.133/.153/.151
face (584)         .658/.658/.658/.640/.644     .643/.664/.690       .311/.308/.325/.342
product (8315)     .937/.939/.940/.940/.897     .105/.107/.109       .027/.023/.029/.030
spam (100)         .660 all five                .680 all             .340 all
Barzan (30)        .633/.633/.633/.633/.700     .639/.648/.636       .338/.338/.341/.336
=================  ===========================  ===================  ===================

=================  =====================  ================  =================  ================
data               NUTS vs crowd-kit      MAP vs crowd-kit  NUTS vs majority   Brier NUTS - ck
=================  =====================  ================  =================  ================
dog                1 / 5 (.22)            1 / 3 (.63)       38 / 22 (.05)      -.0001 +- .0047
face               13 / 3 (.021)          11 / 1 (.006)     18 / 10 (.19)      -.047 +- .011
product            20 / 43 (.005; .073)   4 / 3 (1)         446 / 110 (<.001)  -.0038 +- .0009
spam               0 / 0                  0 / 0             0 / 0              0
Barzan             0 / 0                  0 / 0             0 / 2 (.5)         +.0032 +- .0090
=================  =====================  ================  =================  ================

(ck: crowd-kit's DawidSkene, 100 EM iterations; MV: majority vote, random ties; the Brier
difference is the mean per-item difference on the gold items +- its standard error.
Spearman NUTS / MAP / ck: dog .74/.80/.74, face .07/.25/.13, product .83/.79/.74, spam
.27/.20/.20, Barzan -.06/.08/-.06. NUTS's labels moved by one face item since the previous
run with the same seed (PyTensor then compiled with fast math, under which a program compiled
afresh and one loaded from its cache draw differently; fits compile without it since
2026-12-08, and a seed fixes the draws: ``ambppl.inference.compilation``). The Lap
column is of laplace's former start, PyMC's initial point; started at the map route's mode,
``--methods laplace`` gives the same accuracies and ECEs to the digits shown but for dog's
ECE, .135 (the former start rerun: .133), whose mode it moves; the product data's Laplace
accuracy is .9389 against .9390, one item, so its count against crowd-kit below may move by
one.) The Dawid-Skene fits beat majority vote on the three large sets and beat crowd-kit on
face (p = .013).

*Configurations, the unit of a paired comparison.* Two items answered by the same raters
with the same answers (the same *configuration*) have the same class posterior under any
Dawid-Skene fit, so every such method labels them alike: a difference between two methods
on such items is one decision, however many items share it. McNemar's test counts items as
independent and overstates the evidence where configurations repeat. On the product data
they do (a HIT: the same three raters answered many items): 7912 of the 8315 items share
their configuration with another. The benchmark therefore also gives, per pair of methods,
the configurations the discordant items fall in and the exact sign-flip p-value over them
(``cluster_sign_test``: each configuration's net count of wins may carry either sign under
the null; it is McNemar's test where every configuration holds one item, as on the other
four sets). NUTS's 63 discordant product items fall in 34 configurations: p = .073 (66 in
36, p = .064, in the run before).

By the Brier score NUTS's class posterior is better than crowd-kit's on face and on the
product data (4 standard errors each) and within a third of a standard error of it on the
other three. By label accuracy it is not at least crowd-kit's everywhere: on the product
data NUTS trails crowd-kit by 23 items net of 8315 (20 against 43; p = .005 by items, .073
by configurations; 21 against 45 in the run before) while the mode (``map``) ties it (4
against 3, p = 1) and Laplace trails by 6 (p = .24); on dog it trails by 4 items of 807 (1
against 5, p = .22, not distinguishable from chance), and on the 30 Barzan gold items every
Dawid-Skene fit, crowd-kit's too, misses two that majority vote gets (p = .5). crowd-kit's
other methods a user would try (``--methods crowdkit,glad,mace,onecoin``, the same frames,
2026-11-28) label fewer gold items right than its Dawid-Skene on dog, face and product and
as many on spam: GLAD / MACE / one-coin Dawid-Skene .834 / .830 / .830 on dog, .630 / .635 /
.611 on face, .928 / .929 / .908 on product (88 / 183, 96 / 186 and 115 / 376 against
crowd-kit's Dawid-Skene, p < .001), so NUTS's labels beat all three there; on Barzan all
three get the two items majority vote gets (.700; Brier .614 / .618 / .601).

*How far any Dawid-Skene labelling can go* (the benchmark's ``oracle`` row, where gold
labels every item: each rater's confusion rows and the prevalence counted on the gold labels
themselves, a rater's rows backed off to the crowd's by one answer; fitted to the items it
is scored on, so a ceiling, not a method): dog .876, face .700, product .944 (Brier .221,
.503, .095). On dog and face the fits are 4-6 points below the ceiling, on the product data
crowd-kit is 0.4 points below it and NUTS 0.7.

*Why NUTS trails on the product data.* NUTS and the mode label 59 items differently: of the
31 answered 0, 1, 1 gold sides with the mode on 25 (NUTS follows the majority, 1, on 27 of
them, the mode says 0), of the 26 answered 0, 0, 1 with the mode on 15, and of two answered
1, 1, 1 with the mode (1) against NUTS (0). Where the two part, the item is a near coin flip
for NUTS (its ``label_prob`` 0.50-0.66 on all 59) and the four raters with 1300-2900 answers
have the same confusion rows in both fits; what differs is the class-1 (rare class, 11 %)
accuracy of raters with 16-66 answers, who have seen a handful of class-1 items: the mode
puts it at the count's extreme (0.06, 0.12, 0.33 for raters of 16, 66 and 33 answers), the
posterior pools it towards the population (0.55, 0.76, 0.72). Gold sides with the mode on
the items but not with its raters: counted on the gold labels those three raters' class-1
accuracies are 1.0, 1.0 and 0.0 (two, two and three class-1 answers), and over the 20
raters with at most 100 answers who answered those items the mode's class-1 accuracies are
no closer to the gold-counted ones than the posterior's (mean absolute error .25 against
.23). Three checks say the gap is not the pooling or its prior (2026-11-28, the same
command): NUTS with ``sigma_rater`` *held at the mode's 5.3 / 5.0* (nearly unpooled raters;
an experimental copy of this program) labels .936 right (R-hat 1.016), no better than with
the spread free (.937, posterior spread 2.3 / 1.9); a wider prior (``rater_scale=2.5``)
moved the posterior spread to 2.4 / 2.0 and changed no label (``--param rater_scale=2.5``);
the posterior-mean confusion plugged in labels .938. Nor the raters' independence: on gold
a rater's class-0 and class-1 accuracies are negatively correlated (Spearman -.51 over the
72 raters with >= 10 class-0 and >= 5 class-1 gold answers: raters lean towards "match" or
"no match"), and two rater populations that couple a rater's two rows were tried and not
kept (4 x 3000 draws, on experimental copies): a shared *skill* (one normal per rater added
to the right answer's logit in every row, scale ``HalfNormal(1)``) did not converge (R-hat
1.54, 54 divergences; accuracy .937, 31 / 55 against crowd-kit), and a shared *answer bias*
(one zero-sum normal per rater and answer added to every row, as ``rater_effects``'
``b_r``: the lean the gold data show; scale ``HalfNormal(1)``) nearly converged (R-hat
1.0104, no divergences, 350 s) but labelled only 3 more gold items right (.9372 against
.9369). What remains is 59 items on which the posterior is close to even and the point
estimates happen to fall on the gold side more often (42 of 59); no change to the model
tried here moves them.

*The price of a prior and of averaging, not of this model* (``--methods crowdkit,em,gibbs
--dirichlet DIAG,OFF``, 2026-11-28). An independent yardstick separates the estimator from
the population model: the textbook conjugate Dawid-Skene (each rater's row of class ``k``
``Dirichlet(alpha_k)`` with ``alpha`` fixed, ``DIAG`` on the right answer and ``OFF``
elsewhere; ``benchmarks/conjugate_dawid_skene.py``), its mode by EM and its posterior by
Gibbs sampling. EM with flat rows (``1,1``: maximum likelihood) labels every gold item of
all five sets as crowd-kit does (no discordant item). On the product data the conjugate
*posterior* labels .9377, .9382, .9390, .9376 and .9384 of the gold items right (rows
``1,1``, ``2,1``, ``4,1``, ``0.5,0.5``, ``1,0.5``; against crowd-kit 16 / 33, 27 / 40, 34 /
40, 10 / 28, 12 / 23 items, p .18-.67 by configurations), each behind crowd-kit and each
with the better Brier score (.1043-.1054 against .1086), and its *mode under a prior* (EM
with ``2,1`` and ``4,1``) .9390 and .9379. On these data every prior and every posterior
average tried gives up a few gold items to unsmoothed maximum likelihood while improving
the probabilities, and this model's NUTS (.9369, Brier .1048) sits with them. On dog and
face the conjugate posterior with flat rows labels .841 and .642, this model's NUTS .838
and .659 (its pooling of the raters pays on face).

*Where the Dawid-Skene likelihood holds by construction* (the gallery's simulated crowds
with their true classes as gold: ``--methods nuts,map,crowdkit --data
crowd_two_classes,crowd_few_answers``, the gallery's draw and ``--crowd-seed 2`` and ``3``;
2 cores, 2026-11-29; every NUTS fit met the standard, R-hat <= 1.0052, no divergences).
NUTS against crowd-kit, wins / losses (exact McNemar p) and the Brier difference:

=======================  =========  =================  ===============
crowd (items x answers)  draw       NUTS vs crowd-kit  Brier NUTS - ck
=======================  =========  =================  ===============
few answers (3000 x 3)   gallery's  81 / 43 (.001)     -.022 +- .003
few answers              2          67 / 70 (.86)      -.014 +- .004
few answers              3          115 / 105 (.54)    -.013 +- .005
two classes (800 x 10)   gallery's  2 / 3 (1)          -.003 +- .004
two classes              2          2 / 3 (1)          -.002 +- .003
two classes              3          11 / 6 (.33)       -.019 +- .007
=======================  =========  =================  ===============

(accuracy NUTS / crowd-kit: .852 / .839, .832 / .833, .839 / .836, .991 / .993, .983 /
.984, .945 / .939; ``crowd_dense``, 108 items x 39 raters, is labelled without error by
every method.) Over the six crowds NUTS labels 278 items right that crowd-kit gets wrong
and 230 the other way, and its probabilities score better on all six (by 0.6 to 6.8
standard errors); yet three of the six crowds, on which the likelihood is the true one, show NUTS a
few items behind by point accuracy (1, 1 and 3 items, p >= .86). A per-set comparison of
label counts swings by a few items either way even where the posterior is the better
estimator; the gold tables above are read with that in mind.

For labels alone on designs like this one (few answers per item, many
raters with a handful of rare-class items), ``method="map"`` labelled as many gold items
right as crowd-kit; NUTS gives the better probabilities. ``label_prob`` is better calibrated
than crowd-kit's probabilities on dog, face and product; on spam every method gives
probability ~1 to 100 gold items of which 34 disagree with the crowd's answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.inference.modeling import (
    add_annotation_data,
    add_measures,
    answer_codes,
    flag_parameter,
    is_unanimous,
    measure_values,
    parameter_name,
    positive_parameter,
    qmc_normal_nodes,
    say,
    warn_if_unanimous,
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

#: Designs with fewer raters than this get :data:`FEW_RATERS_TARGET_ACCEPT` (:func:`nuts_defaults`).
FEW_RATERS = 10

#: NUTS's target acceptance rate for designs with fewer than :data:`FEW_RATERS` raters.
FEW_RATERS_TARGET_ACCEPT = 0.9

#: Designs whose median item has at most this many answers get :data:`FEW_ANSWERS_DRAWS`.
FEW_ANSWERS = 3

#: Draws per chain for designs of few answers per item (:func:`nuts_defaults`).
FEW_ANSWERS_DRAWS = 3000

#: nutpie's mass-matrix adaptation for designs of few answers per item with a busy rater
#: (:func:`nuts_defaults`): the variances of the draws rather than nutpie's default, which
#: also uses the gradients.
FEW_ANSWERS_ADAPTATION = "draw_diag"

#: A rater who gives at least this share of all answers is busy (:func:`nuts_defaults`).
BUSY_RATER_SHARE = 0.1

#: NUTS's target acceptance rate where every item is unanimous (:func:`nuts_defaults`).
UNANIMOUS_TARGET_ACCEPT = 0.99


def _warn_if_unanimous(item_counts: np.ndarray, *, mode: bool = False) -> None:
    """Say before sampling (or before finding the mode, ``mode``) when every item's answers
    agree.

    Where every item with two or more answers is unanimous (and there are at least
    :data:`ambppl.inference.modeling.UNANIMOUS_MIN_ITEMS` of them), no rater ever disagrees
    with another: the data say nothing about error rates, every confusion matrix looks
    perfect, the right-answer gaps ``diag_gap`` and the spreads ``sigma_rater`` are decided
    by their priors (a long tail towards perfect raters), and NUTS diverges now and then
    (the spam data, 5380 unanimous items, seed 1: 30 divergences at ``target_accept`` 0.8,
    1 at 0.95; :func:`nuts_defaults` sets :data:`UNANIMOUS_TARGET_ACCEPT`). The labels are
    the unanimous answers
    (:func:`ambppl.inference.modeling.warn_if_unanimous` says so).
    """
    said = "so the data say nothing about the raters' error rates: their accuracies and "
    warn_if_unanimous(
        item_counts,
        model="dawid_skene",
        consequence=(
            said + "sigma_rater at the mode are decided by the priors; the labels are the "
            "unanimous answers"
            if mode
            else said + "sigma_rater are decided by the priors (NUTS takes target_accept=0.99 "
            "to sample them without divergences); the labels are the unanimous answers, which "
            "method='map' gives in a second"
        ),
    )


def nuts_defaults(answers: Any, **params: Any) -> dict[str, Any]:
    """NUTS settings that depend on the design, over the info record's ``nuts_defaults``.

    Three rules, measured on 2 cores (2026-11-27 to 29); ``fit``'s own ``draws=`` and
    ``sample_kwargs=`` win over them:

    **Few raters** (fewer than :data:`FEW_RATERS`): a handful of raters say little about
    their population's spread, the posterior of ``sigma_rater`` reaches towards 0 and the
    step size tuned for the bulk diverges now and then there: ``target_accept`` is
    :data:`FEW_RATERS_TARGET_ACCEPT` (0.8 otherwise). Measured on the anesthesia data (45
    items, 5 raters, 315 answers; seeds 1-5, 4 x 1000 draws, 2 shared cores, 2026-11-27):
    divergences 1, 0, 1, 1, 0 at 0.8 (R-hat <= 1.0064, 30-42 s) and none at 0.9 (R-hat
    <= 1.0062, bulk / tail ESS >= 814 / 620, 13-41 s).

    **Few answers per item** (the median item has at most :data:`FEW_ANSWERS`): each item's
    class is uncertain, which ties the labels to the raters' parameters, and the rater
    spread ``sigma_rater`` of a common class mixes slowly where a few raters give many
    answers and most raters few: the draws per chain are :data:`FEW_ANSWERS_DRAWS`. On the
    product data (8315 items x 3 answers, 176 raters, four of them with 1300-2900 answers)
    R-hat was 1.044 with 1000 draws (bulk ESS 153) and 1.013 with 2000 (ESS 342, 197 s).
    With 3000 draws and nutpie's default mass matrix, seeds 1-5 (2026-11-28) gave R-hat
    1.0094, 1.0083, 1.0119, 1.0086, 1.0083 (bulk ESS 489, 454, 388, 534, 488; 170-239 s):
    seed 3 missed the standard, on ``e`` of the rater with 2615 answers, and 4000 draws
    brought it to 1.0106 only. **With a busy rater** (one who gives at least
    :data:`BUSY_RATER_SHARE` of the answers; the product data's busiest gives 0.118) nutpie
    (the default sampler) also adapts its mass matrix to the variances of the draws
    (:data:`FEW_ANSWERS_ADAPTATION`, ``"draw_diag"``) rather than its default, which mixes
    in the variances of the gradients: the step is half as long (0.11 against 0.25, 31
    leapfrog steps per draw against 16) but crosses the busy raters' ``e`` better. Seeds 1-5
    (2026-11-28 and 29) gave R-hat 1.0044, 1.0031, 1.0046, 1.0033, 1.0036 (bulk ESS 1046,
    1019, 981, 1288, 1221; no divergences; 237-261 s, seed 1 beside other work), 1.6-2 times
    the effective draws per second (seeds 1, 4, 5 with their walls); seeds 1-3 label
    .9367-.9369 of the gold items right, as the default's runs did (to one item). Without a
    busy rater the draw variances are no help: on the ``three_answers`` stress design (2000
    x 3 answers spread evenly over 300 raters, whose answers do not depend on the rater at
    all, so ``sigma_rater`` sits at 0; the busiest gives 0.007) they diverged 55 and 1 times
    in seeds 1 and 2 (148 and 112 s) where nutpie's default meets the standard (82 s); on a
    simulated crowd of the same shape, unseen while the clause was chosen (the gallery's
    ``crowd_few_answers``: 3000 x 3 answers, 150 raters in Zipf proportions, the busiest
    0.153), the clause and nutpie's default both met it (R-hat 1.0026 and 1.0022, 98 and 84
    s; the gallery's row, 1.003, 88 s). Also tried on the product data's seed 3 and not
    kept: nutpie's low-rank mass matrix
    (``sample_kwargs={"nuts": {"adaptation": "low_rank"}}``: R-hat 1.0057 but 72 divergences
    at ``target_accept`` 0.9, 425 s; 1.0061, bulk ESS 704 and none at 0.95, 381 s, within the
    gallery's 10-minute step target but over the 299 s its per-answer reading allows) and
    ``centred=True`` (R-hat 1.0209, 208 s).

    **Every item unanimous** (:func:`ambppl.inference.modeling.is_unanimous`; ``fit`` warns
    too): no rater ever disagrees, the likelihood only bounds the right-answer gaps
    ``diag_gap`` from below (about 11 on the spam data, prior mean 2) and the posterior
    reaches out along the rater spread ``sigma_rater``, where the step size tuned for the
    bulk diverges: ``target_accept`` is :data:`UNANIMOUS_TARGET_ACCEPT` (it overrides the
    few-raters rule). On the spam data (5380 items x 7.9 answers, 153 raters; 4 x 2000
    draws, 2 cores) seed 1 gave 30 divergences at 0.8 (141 s), 1 at 0.95 (131 s; their
    ``sigma_rater`` 1.8 and 1.2 against a posterior mean of 0.5) and none at 0.99 (175 s);
    seeds 2 and 3 at 0.99 none either (184 and 200 s; R-hat <= 1.0031, bulk / tail ESS
    >= 3696 / 2794 in all three).

    Parameters
    ----------
    answers : pandas.DataFrame
        One row per answer (:func:`ambppl.data.readers.read_long`).
    **params
        The model's parameters (unused: the settings depend on the design only).

    Returns
    -------
    dict
        The settings that apply (empty for designs with enough raters and answers).

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data.readers import read_long
    >>> frame = pd.DataFrame({"item": [1, 1, 2], "rater": ["a", "b", "a"],
    ...                       "label": ["x", "y", "x"]})
    >>> nuts_defaults(read_long(frame, item="item", rater="rater", label="label"))
    {'target_accept': 0.9, 'draws': 3000, 'adaptation': 'draw_diag'}
    """
    codes = _codes(answers)  # refuses counts or an untyped table by name
    settings: dict[str, Any] = {}
    if len(codes["rater_ids"]) < FEW_RATERS:
        settings["target_accept"] = FEW_RATERS_TARGET_ACCEPT
    if is_unanimous(_item_counts(codes)):
        settings["target_accept"] = UNANIMOUS_TARGET_ACCEPT
    if np.median(np.bincount(codes["item"])) <= FEW_ANSWERS:
        settings["draws"] = FEW_ANSWERS_DRAWS
        if np.bincount(codes["rater"]).max() >= BUSY_RATER_SHARE * len(codes["y"]):
            settings["adaptation"] = FEW_ANSWERS_ADAPTATION
    return settings


def qmc_nodes(n_nodes: int, dim: int) -> np.ndarray:
    """Scrambled-Sobol standard normal nodes (``S x dim``, seed :data:`QMC_SEED`):
    :func:`ambppl.inference.modeling.qmc_normal_nodes`.

    Parameters
    ----------
    n_nodes : int
        Number of nodes ``S``.
    dim : int
        Dimension of each node (the number of answer categories ``C``).

    Returns
    -------
    numpy.ndarray, shape (n_nodes, dim)

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
    :func:`ambppl.inference.modeling.answer_codes`), with the proper classes, the position
    of the can't-solve answer and ``by_item``: the answers' items, raters and categories
    sorted by item, with each item's first position (for the segment sums of
    :func:`marginal_terms`)."""
    codes = answer_codes(answers, "dawid_skene")
    order = np.argsort(codes["item"], kind="stable")
    item = codes["item"][order]
    by_item = {
        "item": item,
        "rater": codes["rater"][order],
        "y": codes["y"][order],
        "starts": np.searchsorted(item, np.arange(len(codes["item_ids"]))),
    }
    categories, cs_label = codes["categories"], codes["cant_solve"]
    cs = None if cs_label is None else categories.index(cs_label)
    classes = [c for j, c in enumerate(categories) if j != cs]
    if len(classes) < 2:
        # a category nobody chose is still a class when declared (read_long's categories=)
        shown = [*classes, "<another>", *([] if cs_label is None else [cs_label])]
        declare = say(
            "declare the categories the raters could choose with categories= (e.g. "
            f"ambppl.data.read_long(data, categories={shown!r}"
            + ("" if cs_label is None else f", cant_solve={cs_label!r}")
            + "))",
            "declare the categories the raters could choose (a Parquet file whose label "
            "column is a categorical of all of them declares them)",
        )
        other = say("'rater_effects'", "--model rater_effects")
        raise ValueError(
            "answers must have at least 2 categories besides can't-solve (the classes of "
            f"the dawid_skene model), but got {classes}: {declare}, or use a model that "
            f"takes one, such as {other}"
        )
    proper = [j for j in range(len(categories)) if j != cs]
    return {**codes, "classes": classes, "proper": proper, "cs": cs, "by_item": by_item}


def _item_counts(codes: dict[str, Any]) -> np.ndarray:
    """Answers per item and category (items x categories) from :func:`_codes`."""
    n_items, c = len(codes["item_ids"]), len(codes["categories"])
    flat = codes["item"] * c + codes["y"]
    return np.bincount(flat, minlength=n_items * c).reshape(n_items, c)


def _coords(codes: dict[str, Any]) -> dict[str, Any]:
    """The program's coords: item, rater, class, category, answer and (three or more
    answer categories) other_answer, the wrong answers of a class."""
    coords = {
        "item": codes["item_ids"],
        "rater": codes["rater_ids"],
        "class": codes["classes"],
        "category": codes["categories"],
        "answer": np.arange(len(codes["y"])),
    }
    n_categories = len(codes["categories"])
    if n_categories >= 3:
        coords["other_answer"] = [f"o{j + 1}" for j in range(n_categories - 1)]
    return coords


def _check_positive(**values: Any) -> None:
    for name, value in values.items():
        positive_parameter(value, name)


def wrong_answers(proper: list[int], n_categories: int) -> np.ndarray:
    """Per class ``k`` the positions of its wrong answers (K x (C - 1)), in category order.

    Parameters
    ----------
    proper : list of int
        The answer column of each true class (the proper categories' positions).
    n_categories : int
        Answer categories ``C`` (can't-solve included).

    Returns
    -------
    numpy.ndarray of int, shape (K, C - 1)

    Examples
    --------
    >>> wrong_answers([0, 1], 3).tolist()
    [[1, 2], [0, 2]]
    """
    return np.array([[j for j in range(n_categories) if j != p] for p in proper])


def population_logits(off: Any, gap: Any, proper: list[int], n_categories: int) -> Any:
    """``beta`` (K x C, centred over the answers) from the wrong-answer logits ``off``
    (K x (C - 1)) and the gaps ``gap`` (K): ``beta_kk = max_j off_kj + gap_k``.

    Parameters
    ----------
    off : numpy.ndarray or pytensor tensor, shape (K, C - 1)
        The typical rater's logits of each class's wrong answers (:func:`wrong_answers`
        order).
    gap : numpy.ndarray or pytensor tensor, shape (K,)
        How far the right answer's logit exceeds the largest wrong one (positive).
    proper : list of int
        The answer column of each true class.
    n_categories : int
        Answer categories ``C``.

    Returns
    -------
    numpy.ndarray or pytensor tensor, shape (K, C)
        Of the inputs' kind: a PyTensor expression where either input is one.

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
    item_counts = _item_counts(codes)
    _warn_if_unanimous(item_counts)
    counts = xr.DataArray(
        item_counts,
        dims=("item", "category"),
        coords={"item": codes["item_ids"], "category": cats},
        attrs={"cant_solve": codes["cant_solve"]},
    )
    with pm.Model(coords=_coords(codes)) as dawid_skene:
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
        centred = flag_parameter(centred, "centred")
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


# ---------------------------------------------------------------------------------------
# The posterior mode in numpy (method "map", and the start of "laplace")
# ---------------------------------------------------------------------------------------


def _extend(x: np.ndarray, axis: int) -> np.ndarray:
    """PyMC's zero-sum transform along one axis (``ZeroSumTransform.extend_axis``): the
    ``m`` free coordinates to ``m + 1`` values summing to zero, an isometry."""
    n = x.shape[axis] + 1
    total = x.sum(axis=axis, keepdims=True)
    norm = total / (np.sqrt(n) + n)
    return np.concatenate([x, norm - total / np.sqrt(n)], axis=axis) - norm


def _extend_adjoint(g: np.ndarray, axis: int) -> np.ndarray:
    """The transpose of :func:`_extend`: the gradient of the free coordinates from the
    gradient of the extended values."""
    n = g.shape[axis]
    head = np.delete(g, -1, axis=axis)
    last = np.take(g, [-1], axis=axis)
    return head - head.sum(axis=axis, keepdims=True) / (np.sqrt(n) + n) - last / np.sqrt(n)


def _reduce(x: np.ndarray, axis: int) -> np.ndarray:
    """The inverse of :func:`_extend` on zero-sum values (``extend_axis_rev``)."""
    n = x.shape[axis]
    last = np.take(x, [-1], axis=axis)
    return np.delete(x, -1, axis=axis) + (-last * np.sqrt(n)) / (np.sqrt(n) + n)


class _LogPosterior:
    """``log p(x | y)`` and its gradient in the unconstrained coordinates ``x`` of the PyMC
    program (the same transforms and order: ``pi`` by PyMC's simplex transform, ``diag_gap``
    and ``sigma_rater`` by log, ``beta_off`` and ``e`` by its zero-sum transform), up to a
    constant; the true classes summed out."""

    def __init__(self, codes: dict[str, Any], params: dict[str, float]) -> None:
        self.k, self.c = len(codes["classes"]), len(codes["categories"])
        self.n_items, self.n_raters = len(codes["item_ids"]), len(codes["rater_ids"])
        self.proper = np.asarray(codes["proper"])
        self.wrong = wrong_answers(codes["proper"], self.c)
        self.codes = codes
        by_item = codes["by_item"]
        self.item, self.rater, self.y = by_item["item"], by_item["rater"], by_item["y"]
        self.cell = self.rater * self.c + self.y  # (rater, answer) of each answer
        self.params = params
        k, c, r = self.k, self.c, self.n_raters
        sizes = {
            "pi": k - 1,
            "diag_gap": k,
            "beta_off": k * (c - 2) if c >= 3 else 0,
            "sigma_rater": k,
            "e": k * (r - 1) * (c - 1) if r > 1 else 0,
        }
        self.cuts = dict(zip(sizes, np.cumsum([0, *sizes.values()])[:-1], strict=True))
        self.sizes = sizes
        self.size = sum(sizes.values())

    def part(self, x: np.ndarray, name: str) -> np.ndarray:
        return x[self.cuts[name] : self.cuts[name] + self.sizes[name]]

    def constrained(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """The free variables of the program at ``x`` (their constrained values)."""
        k, c, r = self.k, self.c, self.n_raters
        v = self.part(x, "pi")
        u = np.append(v, -v.sum())
        log_pi = u - _logsumexp(u)
        out = {
            "pi": np.exp(log_pi),
            "log_pi": log_pi,
            "diag_gap": np.exp(self.part(x, "diag_gap")),
            "sigma_rater": np.exp(self.part(x, "sigma_rater")),
        }
        if c >= 3:
            out["beta_off"] = _extend(self.part(x, "beta_off").reshape(k, c - 2), 1)
        off = out["beta_off"] if c >= 3 else np.zeros((k, 1))
        out["beta_raw"] = population_logits(off, out["diag_gap"], list(self.proper), c)
        if r > 1:
            free_e = self.part(x, "e").reshape(k, r - 1, c - 1)
            out["e"] = _extend(_extend(free_e, 1), 2)
        e = out["e"] if r > 1 else np.zeros((k, 1, c))
        logits = out["beta_raw"][None] + out["sigma_rater"][None, :, None] * np.swapaxes(e, 0, 1)
        out["log_theta"] = logits - _logsumexp(logits, axis=-1, keepdims=True)  # (R, K, C)
        return out

    def joint(self, log_pi: np.ndarray, log_theta: np.ndarray) -> np.ndarray:
        """``log pi_k + sum_{a in i} log theta_{r[a], k, y_a}`` (items x classes):
        :func:`marginal_terms` of one draw."""
        return marginal_terms(log_pi[None], log_theta[None], self.codes)[0]

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(-log p(x | y), -gradient)``, for a minimizer.

        A trial step of L-BFGS's line search can leave float64 (``exp`` of a coordinate above
        about 709: with scipy 1.18 one step reached coordinates of 3e13 on a small test set);
        the value is then inf or NaN, from which the line search steps back, so it is
        computed without a warning."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return self._value_and_gradient(x)

    def _value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        k, c, r, p = self.k, self.c, self.n_raters, self.params
        val = self.constrained(x)
        joint = self.joint(val["log_pi"], val["log_theta"])
        lse = _logsumexp(joint, axis=1, keepdims=True)
        post = np.exp(joint - lse)  # class posterior (N, K)
        gap, sigma = val["diag_gap"], val["sigma_rater"]
        rate = 2.0 / p["diag_prior"]
        x_off, x_e = self.part(x, "beta_off"), self.part(x, "e")
        logp = (
            float(lse.sum())
            + p["pi_prior"] * float(val["log_pi"].sum())  # Dirichlet and the transform's Jacobian
            + float((2.0 * np.log(gap) - rate * gap).sum())  # Gamma(2) and the log Jacobian
            + float((np.log(sigma) - 0.5 * (sigma / p["rater_scale"]) ** 2).sum())
            - 0.5 * float(x_off @ x_off) / p["beta_sd"] ** 2
            - 0.5 * float(x_e @ x_e)
        )
        # d/d log theta[r, k, c]: expected counts of (rater, true class, answer)
        expected = np.bincount(
            (self.cell[:, None] * k + np.arange(k)[None, :]).ravel(),
            weights=post[self.item].ravel(),
            minlength=r * c * k,
        ).reshape(r, c, k)
        expected = np.swapaxes(expected, 1, 2)  # (R, K, C)
        theta = np.exp(val["log_theta"])
        g_logits = expected - theta * expected.sum(axis=-1, keepdims=True)
        g_beta = g_logits.sum(axis=0)  # (K, C)
        grad = np.empty(self.size)
        # pi: d/d log pi_k, then through the simplex transform
        weight = p["pi_prior"] + post.sum(axis=0)
        g_u = weight - val["pi"] * weight.sum()
        grad[self.cuts["pi"] : self.cuts["pi"] + k - 1] = g_u[:-1] - g_u[-1]
        rows = np.arange(k)
        g_right = g_beta[rows, self.proper]
        grad[self.cuts["diag_gap"] : self.cuts["diag_gap"] + k] = gap * (g_right - rate) + 2.0
        if c >= 3:
            g_off = g_beta[rows[:, None], self.wrong]  # (K, C - 1)
            top = np.argmax(val["beta_off"], axis=1)  # the max's subgradient
            g_off[rows, top] += g_right
            g_free = _extend_adjoint(g_off, 1).ravel() - x_off / p["beta_sd"] ** 2
            grad[self.cuts["beta_off"] : self.cuts["beta_off"] + x_off.size] = g_free
        e = np.swapaxes(val["e"], 0, 1) if r > 1 else np.zeros((1, k, c))
        g_sigma = (g_logits * e).sum(axis=(0, 2))
        grad[self.cuts["sigma_rater"] : self.cuts["sigma_rater"] + k] = (
            sigma * g_sigma - (sigma / p["rater_scale"]) ** 2 + 1.0
        )
        if r > 1:
            g_e = np.swapaxes(sigma[None, :, None] * g_logits, 0, 1)  # (K, R, C)
            g_free = _extend_adjoint(_extend_adjoint(g_e, 2), 1).ravel() - x_e
            grad[self.cuts["e"] : self.cuts["e"] + x_e.size] = g_free
        return -logp, -grad

    def start(self) -> np.ndarray:
        """A starting point from the answers: each item's answer shares (the proper ones) as
        its class posterior, the prevalences and the typical rater's rows they imply, the
        raters at the typical rater (``e = 0``) and ``sigma = 0.5``."""
        k, c = self.k, self.c
        shares = np.zeros((self.n_items, c))
        np.add.at(shares, (self.item, self.y), 1.0)
        soft = shares[:, self.proper] + 0.5
        soft /= soft.sum(axis=1, keepdims=True)
        counts = soft.T @ shares + 1.0  # (K, C): answers per true class (soft)
        beta = np.log(counts / counts.sum(axis=1, keepdims=True))
        x = np.zeros(self.size)
        log_pi = np.log(soft.mean(axis=0))
        x[self.cuts["pi"] : self.cuts["pi"] + k - 1] = log_pi[:-1] - log_pi.mean()
        off = beta[np.arange(k)[:, None], self.wrong]
        gap = np.maximum(beta[np.arange(k), self.proper] - off.max(axis=1), 0.25)
        x[self.cuts["diag_gap"] : self.cuts["diag_gap"] + k] = np.log(gap)
        if c >= 3:
            off = off - off.mean(axis=1, keepdims=True)
            x[self.cuts["beta_off"] : self.cuts["beta_off"] + k * (c - 2)] = _reduce(off, 1).ravel()
        x[self.cuts["sigma_rater"] : self.cuts["sigma_rater"] + k] = np.log(0.5)
        return x


def _logsumexp(a: np.ndarray, axis: int | None = None, keepdims: bool = False) -> np.ndarray:
    """``log sum exp`` over ``axis`` for finite input: :func:`scipy.special.logsumexp` without
    its checks and options, which cost a third of :func:`posterior_mode` on small designs
    (the Barzan data, best of 5 fits: 0.115 s with this, 0.180 s with scipy's; 2026-11-27)."""
    top = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.exp(a - top).sum(axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis)


def posterior_mode(
    answers: Any,
    *,
    pi_prior: float = 1.0,
    diag_prior: float = 2.0,
    beta_sd: float = 1.5,
    rater_scale: float = 1.0,
    n_nodes: int = 256,
    centred: bool | None = None,
    maxiter: int = 5000,
) -> tuple[Any, Any, dict[str, Any]]:
    """The posterior mode of :func:`model` in numpy, with every variable the program stores.

    The route ``method="map"`` of :func:`ambppl.fit`: a local maximum of ``log p(x | y)``
    over the unconstrained coordinates ``x`` of the PyMC program, found without building or
    compiling the program, by L-BFGS with the exact gradient (written out in numpy: the
    classes summed out, the gradient through the expected counts of (rater, true class,
    answer), as in EM's E-step). Started from the answer shares (each item's proper answers
    as its class posterior, the raters at the typical rater). The ``laplace`` route starts
    its own L-BFGS on the program from this mode, so it centres its approximation on the
    same local mode.

    Parameters
    ----------
    answers : pandas.DataFrame
        As for :func:`model`.
    pi_prior, diag_prior, beta_sd, rater_scale, n_nodes
        As for :func:`model`.
    centred : bool, optional
        Must be ``None`` or ``False``: the mode is that of the non-centred coordinates
        (``centred`` chooses NUTS's coordinates, whose mode differs by a Jacobian).
    maxiter : int, default 5000
        L-BFGS iterations at most.

    Returns
    -------
    posterior : xarray.Dataset
        One chain of one draw: the mode of the free variables and the deterministics at it
        (the variables and dims of :func:`model`'s trace).
    constant_data : xarray.Dataset
        ``is_cant_solve``, ``rater_answers``, ``answer_item``, ``answer_rater``.
    info : dict
        ``mode_logp`` (the numpy log posterior at the mode: PyMC's log density of the
        program less its constant, so not comparable with the ``laplace`` route's),
        ``optimizer_converged``, ``optimizer_iterations``, ``optimizer_message``,
        ``n_parameters``.

    Examples
    --------
    >>> import pandas as pd
    >>> from ambppl.data.readers import read_long
    >>> answers = read_long(pd.DataFrame({
    ...     "task": [1, 1, 1, 2, 2, 2], "worker": ["a", "b", "c"] * 2,
    ...     "label": ["x", "x", "y", "y", "y", "y"]}))
    >>> post, _, info = posterior_mode(answers)
    >>> post["label_prob"].sizes["draw"], info["optimizer_converged"]
    (1, True)
    >>> post["label_prob"].isel(chain=0, draw=0).argmax("class").values.tolist()
    [0, 1]
    """
    import xarray as xr
    from scipy.optimize import minimize

    _check_positive(
        pi_prior=pi_prior, diag_prior=diag_prior, beta_sd=beta_sd, rater_scale=rater_scale
    )
    if flag_parameter(centred, "centred"):
        raise ValueError(
            f"{parameter_name('centred')} must be "
            f"{say('None or False', 'false or null')} for the posterior mode, but got "
            f"{say(repr(centred), str(centred).lower())}: the mode is found in the "
            "non-centred coordinates (centred="
            f"{say('True', 'true')} chooses NUTS's coordinates; drop it, or use "
            f"{say('method=', '--method ')}nuts with it)"
        )
    codes = _codes(answers)
    _warn_if_unanimous(_item_counts(codes), mode=True)  # the mode's accuracies are the prior's
    params = {
        "pi_prior": float(pi_prior),
        "diag_prior": float(diag_prior),
        "beta_sd": float(beta_sd),
        "rater_scale": float(rater_scale),
    }
    target = _LogPosterior(codes, params)
    found = minimize(
        target,
        target.start(),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": maxiter, "gtol": 1e-6},
    )
    val = target.constrained(found.x)
    cats, classes, cs = codes["categories"], codes["classes"], codes["cs"]
    k, c = len(classes), len(cats)
    joint = target.joint(val["log_pi"], val["log_theta"])
    log_post = joint - _logsumexp(joint, axis=1, keepdims=True)
    label_prob = np.exp(log_post)
    theta = np.exp(val["log_theta"])
    pop = population_confusion(val["beta_raw"], val["sigma_rater"], qmc_nodes(n_nodes, c))
    q = label_prob @ pop
    one = ("chain", "draw")
    data: dict[str, Any] = {
        "pi": ((*one, "class"), val["pi"]),
        "diag_gap": ((*one, "class"), val["diag_gap"]),
        "sigma_rater": ((*one, "class"), val["sigma_rater"]),
        "beta": ((*one, "class", "category"), val["beta_raw"]),
        "label_prob": ((*one, "item", "class"), label_prob),
        "label_entropy": ((*one, "item"), -(label_prob * log_post).sum(axis=1) / np.log(k)),
        "confusion": ((*one, "rater", "class", "category"), theta),
        "population_confusion": ((*one, "class", "category"), pop),
        "q": ((*one, "item", "category"), q),
        "accuracy": ((*one, "rater"), theta[:, np.arange(k), codes["proper"]] @ val["pi"]),
    }
    if "beta_off" in val:
        data["beta_off"] = ((*one, "class", "other_answer"), val["beta_off"])
    if "e" in val:
        data["e"] = ((*one, "class", "rater", "category"), val["e"])
    if cs is not None:
        data["cant_solve_rate"] = ((*one, "rater"), theta[:, :, cs] @ val["pi"])
    for name, value in measure_values(q, cant_solve=cs).items():
        data[name] = ((*one, "item"), value)
    coords = {"chain": [0], "draw": [0], **_coords(codes)}
    del coords["answer"]
    posterior = xr.Dataset(
        {name: (dims, np.asarray(value)[None, None]) for name, (dims, value) in data.items()},
        coords=coords,
    )
    flags = np.zeros(c, dtype=np.int8)
    if cs is not None:
        flags[cs] = 1
    n_raters = len(codes["rater_ids"])
    constant = xr.Dataset(
        {
            "is_cant_solve": ("category", flags),
            "rater_answers": ("rater", np.bincount(codes["rater"], minlength=n_raters)),
            "answer_item": ("answer", codes["item"]),
            "answer_rater": ("answer", codes["rater"]),
        },
        coords={
            "category": cats,
            "rater": codes["rater_ids"],
            "answer": np.arange(len(codes["y"])),
        },
    )
    info = {
        "mode_logp": -float(found.fun),
        "optimizer_converged": bool(found.success),
        "optimizer_iterations": int(found.nit),
        "optimizer_message": str(found.message),
        "n_parameters": int(target.size),
    }
    return posterior, constant, info


def marginal_terms(log_pi: np.ndarray, log_theta: np.ndarray, codes: dict[str, Any]) -> np.ndarray:
    """``log pi_k + sum_{a in i} log theta_{r[a], k, y_a}`` per draw, item and class.

    Parameters
    ----------
    log_pi : numpy.ndarray, shape (D, K)
    log_theta : numpy.ndarray, shape (D, R, K, C)
    codes : dict
        From the answers (:func:`_codes`: ``by_item``, the answers sorted by item).

    Returns
    -------
    numpy.ndarray, shape (D, N, K)
    """
    by_item = codes["by_item"]
    per_answer = log_theta[:, by_item["rater"], :, by_item["y"]]  # (A, D, K): advanced first
    per_item = np.add.reduceat(per_answer, by_item["starts"], axis=0)  # (N, D, K)
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
