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
the *rater population* ``N(0, diag(sigma_rater^2))`` projected to zero sum. The free
variables are ``mu``, ``sigma_item``, ``sigma_rater``, ``z`` (item, category; ``z_i`` or
``z~_i``) and ``e`` (rater, category). Centred item effects are the default for items with
many answers (``centred=None``: at least :data:`CENTRED_MIN_ANSWERS` for the median item):
with 20 answers per item the data pin every ``eta_i`` more tightly than the prior; in trial
fits of the benchmark data (nutpie, 2 x (1000 + 1000)) the centred form gave 1.7x the bulk
ESS of ``mu`` and 1.4x that of ``sigma_item`` of the non-centred one (1.45x and 1.2x per
leapfrog step). With 8 answers per item the centred form diverged.

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
  category left free (not zero-sum) made this direction drift in a trial fit.
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

Computation. ``q`` is a ``pm.Deterministic``, computed from ``D = exp(eta) exp(B)'`` (items x
nodes) as ``q = exp(eta) * (D^-1 exp(B)) / S`` with ``B_s = sigma_rater * u_s`` (each
exponent shifted by its row maximum): ``2 N S K`` multiply-adds and no exponential per node.
In the PyMC graph the two products are broadcast sums, not matrix products: BLAS threads
started inside the samplers' per-draw functions fought the chains for the 2 cores (20 ms per
draw instead of 4 ms for 1000 items, ``S = 256``). At 4 ms per stored draw ``q`` costs about
as much as computing it after sampling with single-threaded numpy (1.5 ms per draw, but
serial over chains), and keeps ``q`` and the measures in a plain ``pymc.sample`` trace.

Speed (``benchmarks/bench_rater_effects.py``; 1000 items x 20 answers, 100 raters, K = 5,
2 chains, nutpie; 2 shared cores with a load average of 1.8-3.6 from other jobs, so the times
are upper bounds): the likelihood's gradient takes 0.55-0.67 ms (a ``logsumexp`` of the
gathered logits: 1.7-1.9 ms); compilation ~22 s; NUTS takes ~40 leapfrog steps per draw.
``ambppl.fit`` with 2 x (1000 tune + 1000 draws) took 436 s, of which 111 s were ``fit``'s
convergence check (ArviZ's R-hat and ESS one scalar at a time, 26,015 stored scalars), and
missed the standard (worst R-hat 1.018 on ``eta``, smallest bulk ESS 233); with 500 tune +
2000 draws: 409 s, R-hat 1.014 (``sigma_item``), bulk ESS 313. The 3-minute target is not
met yet. Avoid ``sampler="numpyro"`` here: PyMC's numpyro route evaluates the deterministics
for all draws at once, and ``q``'s broadcast then needs draws x items x nodes x K doubles
(20 GB for 2000 draws of 1000 items; that run was stopped at 9 GB after 19 minutes).

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
``dirichlet_categorical`` or ``hierarchical_dirichlet``. A comparable quantity would
integrate ``eta_i`` over ``N(mu, diag(sigma_item^2))`` (by importance sampling around the
item's posterior, not by prior nodes: 20 answers make the integrand far narrower than the
prior); it is not offered here.

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
        d = pt.sum(e[..., :, None, :] * c[..., None, :, :], axis=-1)  # (..., N, S)
        return e * pt.sum((1.0 / d)[..., None] * c[..., None, :, :], axis=-2) / nodes.shape[0]
    eta = np.asarray(eta, dtype=np.float64)
    big_b = np.asarray(sigma_rater, dtype=np.float64)[..., None, :] * nodes
    e = np.exp(eta - eta.max(axis=-1, keepdims=True))
    c = np.exp(big_b - big_b.max(axis=-1, keepdims=True))
    d = e @ np.swapaxes(c, -1, -2)  # (..., N, S)
    return e * ((1.0 / d) @ c) / nodes.shape[0]


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
        mu = pm.ZeroSumNormal("mu", sigma=mu_sd, dims="category")
        sigma_item = pm.HalfNormal("sigma_item", sigma=item_scale, dims="category")
        sigma_rater = pm.HalfNormal("sigma_rater", sigma=rater_scale, dims="category")
        if centred:  # eta_raw_i ~ N(mu, diag(sigma_item^2)) directly
            eta_raw = pm.Normal("z", mu, sigma_item, dims=("item", "category"))
        else:  # eta_raw_i = mu + sigma_item * z_i, z_i ~ N(0, I)
            eta_raw = mu + sigma_item * pm.Normal("z", 0.0, 1.0, dims=("item", "category"))
        e = pm.Normal("e", 0.0, 1.0, dims=("rater", "category"))
        b_raw = sigma_rater * e
        # log softmax(eta_i + b_r)[y] summed over answers, the softmax invariant to shifts:
        # linear part from the count tables, normalizer from row-max-shifted exponentials.
        m_item = disconnected_grad(pt.max(eta_raw, axis=1, keepdims=True))
        m_rater = disconnected_grad(pt.max(b_raw, axis=1, keepdims=True))
        norm = pt.sum(
            pt.exp(eta_raw - m_item)[item_idx] * pt.exp(b_raw - m_rater)[rater_idx], axis=1
        )
        pm.Potential(
            "answers",
            pt.sum(item_counts * eta_raw)
            + pt.sum(rater_counts * b_raw)
            - pt.sum(pt.log(norm))
            - pt.sum(m_item[:, 0] * item_counts.sum(axis=1))
            - pt.sum(m_rater[:, 0] * rater_counts.sum(axis=1)),
        )
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
