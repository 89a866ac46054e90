"""Posterior and mixed predictive checks: replicated answers against the observed ones.

:func:`posterior_predictive` writes the ordinary posterior predictive as a
``posterior_predictive`` group (PyMC's layout) that ArviZ's predictive plots read (for the
models of answers with rater ids every answer replicated by its own rater);
:func:`check_predictive` compares per-item statistics of the observed answers (the share of
the modal proper class, the can't-solve share, the plug-in ``amb``) and their mean and spread
over items with those of replicated data sets, and decides with Holm's procedure.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.inference.catalog import get_model
from ambppl.internal.checks import check_option, check_prob, check_random_seed
from ambppl.internal.messages import say
from ambppl.internal.resultdata import cant_solve_index, constant, fixed_prior, observed_counts
from ambppl.maths.draws import dirichlet_draws
from ambppl.validation._result import NotApplicable, ValidationResult, decide

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["KINDS", "STATISTICS", "SUMMARIES", "check_predictive", "posterior_predictive"]

#: Per-item statistics of a set of answers (``statistics=`` of :func:`check_predictive`).
STATISTICS: tuple[str, ...] = ("modal_share", "cant_solve_share", "plugin_amb")

#: Summaries over items compared by :func:`check_predictive`, one table row each.
SUMMARIES: tuple[str, ...] = ("mean", "sd")

#: Reference distributions of :func:`check_predictive` (the default first).
KINDS: tuple[str, ...] = ("mixed", "posterior")

#: Bytes of temporary arrays per block of replicated draws (bounds the working memory).
CHUNK_BYTES = 32 * 2**20


# --------------------------------------------------------------------------- reading


def _check_tree(result: Any) -> xr.DataTree:
    import xarray as xr

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            "result must be an xarray.DataTree as returned by ambppl.fit, but got "
            f"{type(result).__name__}"
        )
    if "posterior" not in result.children or "q" not in result["posterior"].data_vars:
        raise NotApplicable(
            "result must hold posterior draws of q (posterior['q'] with dims chain, draw, "
            "item, category), as ambppl.fit writes them unless var_names leaves q out; refit "
            "with var_names=None"
        )
    return result


def _read(result: xr.DataTree) -> tuple[Any, np.ndarray, int | None, dict[str, Any]]:
    """(counts DataArray, counts as int64 array, can't-solve position, merged attrs)."""
    attrs = {**result["posterior"].attrs, **result.attrs}
    counts = observed_counts(result)
    values = np.asarray(counts.values, dtype=np.int64)
    cs = cant_solve_index(result, attrs, counts)
    q = result["posterior"]["q"]
    if q.sizes.get("item") != values.shape[0] or q.sizes.get("category") != values.shape[1]:
        raise ValueError(
            "posterior['q'] must have the items and categories of observed_data['counts'] "
            f"{values.shape}, but got sizes {dict(q.sizes)}"
        )
    return counts, values, cs, attrs


def _check_statistics(statistics: Any, cs: int | None) -> tuple[list[str], list[str]]:
    """(statistics to compute, notes on the ones skipped)."""
    names = [statistics] if isinstance(statistics, str) else list(statistics)
    unknown = [s for s in names if s not in STATISTICS]
    if unknown or not names:
        raise ValueError(
            f"statistics must be a non-empty selection of {', '.join(map(repr, STATISTICS))}, "
            f"but got {statistics!r}"
        )
    names = list(dict.fromkeys(names))
    notes = []
    if cs is None and "cant_solve_share" in names:
        names.remove("cant_solve_share")
        notes.append("cant_solve_share skipped: the data have no can't-solve category")
    if not names:
        raise ValueError(
            "statistics left nothing to check: cant_solve_share needs a can't-solve category "
            "and the data have none; choose 'modal_share' or 'plugin_amb'"
        )
    return names, notes


# --------------------------------------------------------------------------- kernels


def _statistics(counts: np.ndarray, n: np.ndarray, cs: int | None, names: Sequence[str]) -> dict:
    """Per-item statistics of counts (..., items, K) with n (items,) answers (n > 0 or NaN).

    ``plugin_amb`` is paper section 3.3's plug-in, ``1 - sum_k n_k^2 / (n (n - n_cs))`` over
    the proper classes (1 when every answer is can't-solve), i.e. ``ambppl.amb(counts / n)``.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        nf = np.where(n > 0, n, np.nan).astype(np.float64)
        proper = counts if cs is None else np.delete(counts, cs, axis=-1)
        out: dict[str, np.ndarray] = {}
        if "modal_share" in names:
            out["modal_share"] = proper.max(axis=-1) / nf
        if "cant_solve_share" in names and cs is not None:
            out["cant_solve_share"] = counts[..., cs] / nf
        if "plugin_amb" in names:
            m = proper.sum(axis=-1).astype(np.float64)
            sumsq = np.square(proper.astype(np.float64)).sum(axis=-1)
            amb = np.where(m > 0, 1.0 - sumsq / (nf * np.where(m > 0, m, 1.0)), 1.0)
            out["plugin_amb"] = np.where(np.isfinite(nf), amb, np.nan)
    return out


def _answer_codes(counts: np.ndarray, item_of: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Category codes of every answer, sorted within each item: (..., items, K) -> (..., A)."""
    cum = np.cumsum(counts[..., :-1], axis=-1, dtype=np.int32)  # answers in categories 0..k
    return (cum[..., item_of, :] <= position[:, None]).sum(axis=-1)


def _code_dtype(n_categories: int) -> Any:
    return np.int8 if n_categories <= np.iinfo(np.int8).max else np.int16


def _draw_blocks(n_draws: int, bytes_per_draw: int) -> list[tuple[int, int]]:
    step = max(1, CHUNK_BYTES // max(1, bytes_per_draw))
    return [(s, min(s + step, n_draws)) for s in range(0, n_draws, step)]


# --------------------------------------------------------------------------- rater models

#: Posterior variables from which the posterior predictive of a model of answers with rater
#: ids replicates every answer by its own rater, by the form of the model: a latent true
#: class per item (``dawid_skene``: the class posterior ``label_prob`` (item, class) and
#: every rater's ``confusion`` (rater, class, category)) or item logits plus rater biases
#: (``rater_effects``: ``eta`` (item, category) and ``b`` (rater, category)).
RATER_POSTERIOR: dict[str, tuple[str, str]] = {
    "latent_class": ("label_prob", "confusion"),
    "logits": ("eta", "b"),
}

#: Dims (after chain, draw) of the variables of :data:`RATER_POSTERIOR`.
_RATER_DIMS: dict[str, tuple[str, ...]] = {
    "label_prob": ("item", "class"),
    "confusion": ("rater", "class", "category"),
    "eta": ("item", "category"),
    "b": ("rater", "category"),
}


def _answers_with_raters(result: xr.DataTree, attrs: dict[str, Any]) -> bool:
    """Whether ``result`` is a fit to answers with rater ids: a catalog model of answers
    (info record ``"data": "long"``) or, for a result that names no catalog model (a
    ``pymc.sample`` trace), the answers' design ``answer_item``, ``answer_rater`` in
    ``constant_data``."""
    name = attrs.get("model")
    if name is not None:
        try:
            return get_model(str(name)).info.get("data") == "long"
        except (ValueError, OSError, KeyError):
            pass
    return all(constant(result, v) is not None for v in ("answer_item", "answer_rater"))


def _counted(codes: np.ndarray, row: np.ndarray, n_items: int, n_cat: int) -> np.ndarray:
    """Replicated answers (replicates x answers, category positions of the counts) counted
    per item (``row``: each answer's row of the counts): replicates x items x categories."""
    reps = codes.shape[0]
    flat = (np.arange(reps)[:, None] * n_items + row) * n_cat + codes
    out = np.bincount(flat.ravel(), minlength=reps * n_items * n_cat)
    return out.reshape(reps, n_items, n_cat)


def _answer_design(
    result: xr.DataTree, values: np.ndarray, model_items: Any, n_raters: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(item, rater, row) of every observed answer: the position of its item in the model's
    item order (``constant_data["answer_item"]``), of its rater in the posterior's ``rater``
    dim (``answer_rater``), and the row of its item in ``observed_data["counts"]`` (the
    model's items matched to the counts' by the ``item`` coordinate of ``model_items``, a
    posterior variable, where it has one). Refuses a design that does not match the counts.
    """
    import pandas as pd

    item, rater = constant(result, "answer_item"), constant(result, "answer_rater")
    if item is None or rater is None:
        raise NotApplicable(
            "result must hold the answers' design, constant_data['answer_item'] and "
            "constant_data['answer_rater'] (the item and rater of every answer), as "
            "ambppl.fit writes them for a model of answers with rater ids; refit with "
            "ambppl.fit"
        )
    item = np.asarray(item, dtype=np.int64)
    rater = np.asarray(rater, dtype=np.int64)
    n_items = values.shape[0]
    # the model's item order (positions in answer_item) -> the rows of the observed counts
    order = np.arange(n_items)
    if model_items is not None and "item" in model_items.coords:
        counts_items = pd.Index(observed_counts(result)["item"].values)
        order = counts_items.get_indexer(pd.Index(model_items["item"].values))
    ok = (
        item.ndim == 1
        and item.shape == rater.shape
        and order.shape == (n_items,)
        and np.array_equal(np.sort(order), np.arange(n_items))
        and (item.size == 0 or (item.min() >= 0 and item.max() < n_items))
        and (rater.size == 0 or (rater.min() >= 0 and rater.max() < n_raters))
    )
    row = order[item] if ok else item
    if not ok or not np.array_equal(np.bincount(row, minlength=n_items), values.sum(axis=1)):
        raise ValueError(
            "the rater model's design (constant_data answer_item, answer_rater) does not "
            "match observed_data['counts'] and the posterior's raters; refit with ambppl.fit"
        )
    return item, rater, row


def _draw_categorical(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    """One category per row of probabilities ``p`` (..., C): the inverse of the CDF."""
    u = rng.random((*p.shape[:-1], 1))
    return np.minimum((u > np.cumsum(p, axis=-1)).sum(axis=-1), p.shape[-1] - 1)


def _rater_posterior(
    result: xr.DataTree, values: np.ndarray, rng: np.random.Generator
) -> tuple[Any, int, str]:
    """Posterior predictive of a model of answers with rater ids, on the observed design.

    Returns a function ``counts(draws)`` -> replicated counts (len(draws), items, K) in the
    rows of ``observed_data["counts"]``, for flat posterior draws ``draws`` (positions
    ``chain * n_draws + draw``); the bytes per draw of its temporaries; and a sentence
    saying how the answers are replicated. Per posterior draw ``s`` every observed answer
    ``a`` (item ``i``, rater ``r``) is replicated by its own rater:

    - latent class (``label_prob``, ``confusion``): ``z_i ~ Categorical(label_prob_i^(s))``
      (the draw's class posterior, so ``(theta^(s), z)`` is a draw of the joint posterior),
      then ``y_a ~ Categorical(confusion_r^(s)[z_i])``, the answers of an item sharing its
      ``z_i``;
    - logits (``eta``, ``b``): ``y_a ~ Categorical(softmax(eta_i^(s) + b_r^(s)))``.
    """
    post = result["posterior"]
    form = next(
        (f for f, names in RATER_POSTERIOR.items() if all(v in post.data_vars for v in names)),
        None,
    )
    if form is None:
        raise NotApplicable(
            "the posterior predictive of a model of answers with rater ids replicates every "
            "answer by its own rater and needs posterior['label_prob'] and "
            "posterior['confusion'] (a latent-class model: dawid_skene) or posterior['eta'] "
            "and posterior['b'] (rater_effects), but the posterior has neither pair "
            f"({sorted(map(str, post.data_vars))}); refit with ambppl.fit"
        )
    first, second = RATER_POSTERIOR[form]
    arrays = {}
    for name in (first, second):
        var = post[name]
        dims = ("chain", "draw", *_RATER_DIMS[name])
        if set(var.dims) != set(dims):
            raise ValueError(
                f"posterior[{name!r}] must have dims {dims}, but got {tuple(var.dims)}"
            )
        arrays[name] = var.transpose(*dims)
    n_items, n_cat = values.shape
    n_raters = arrays[second].sizes["rater"]
    total = post.sizes["chain"] * post.sizes["draw"]
    # label_prob's classes are confusion's; eta's categories are the counts'
    shared = "class" if form == "latent_class" else "category"
    if (
        arrays[first].sizes["item"] != n_items
        or arrays[second].sizes["category"] != n_cat
        or arrays[first].sizes[shared] != arrays[second].sizes[shared]
    ):
        raise ValueError(
            f"posterior[{first!r}] and posterior[{second!r}] must match the items and "
            f"categories of observed_data['counts'] {values.shape}, but got sizes "
            f"{dict(arrays[first].sizes)} and {dict(arrays[second].sizes)}"
        )
    item, rater, row = _answer_design(result, values, arrays[first], n_raters)
    flat = {
        name: np.asarray(var.values, dtype=np.float64).reshape(total, *var.shape[2:])
        for name, var in arrays.items()
    }

    if form == "latent_class":
        label_prob, confusion = flat["label_prob"], flat["confusion"]

        def counts(draws: np.ndarray) -> np.ndarray:
            z = _draw_categorical(rng, label_prob[draws])  # (draws, model items)
            rows = confusion[draws[:, None], rater, z[:, item]]  # (draws, answers, K)
            return _counted(_draw_categorical(rng, rows), row, n_items, n_cat)

        where = (
            "each item's true class z_i drawn from the class posterior (label_prob) of a "
            "posterior draw, each observed answer replicated by its own rater from that "
            "draw's confusion row for z_i (the ordinary posterior predictive of the "
            "latent-class model)"
        )
    else:
        eta, b = flat["eta"], flat["b"]

        def counts(draws: np.ndarray) -> np.ndarray:
            logits = eta[draws][:, item] + b[draws][:, rater]  # (draws, answers, K)
            logits -= logits.max(axis=-1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=-1, keepdims=True)
            return _counted(_draw_categorical(rng, p), row, n_items, n_cat)

        where = (
            "each observed answer replicated by its own rater from softmax(eta_i + b_r) of "
            "a posterior draw (the ordinary posterior predictive of the rater model)"
        )
    # per answer: up to six (answers x K) float64 arrays (gathered logits or rows, their
    # softmax, cumulative sums), the comparisons (bool), codes and cells; per item and rater:
    # the draw's rows and the counts
    per_draw = (
        item.size * n_cat * (8 * 6 + 1) + 16 * item.size + 8 * (n_items + n_raters) * n_cat * 3
    )
    return counts, per_draw, where


# --------------------------------------------------------------------------- the group


def posterior_predictive(result: xr.DataTree, *, random_seed: Any = None) -> xr.DataTree:
    """Replicate every item's answers from every posterior draw (the posterior predictive).

    The ordinary posterior predictive of the fitted model: one replicated data set per
    posterior draw ``s`` (chain, draw), with the observed number of answers ``n_i`` of every
    item, drawn from the model's own law of the answers:

    - models of counts (``dirichlet_categorical``, ``hierarchical_dirichlet``), whose
      ``counts_i | q_i`` is multinomial: ``x_i^rep ~ Multinomial(n_i, q_i^(s))``;
    - models of answers with rater ids, on the observed design (the same items, every
      observed answer replicated by its own rater, ``constant_data["answer_item"]`` and
      ``["answer_rater"]``): for ``dawid_skene`` the item's true class ``z_i ~
      Categorical(label_prob_i^(s))`` (the draw's class posterior), then each answer ``y_a ~
      Categorical(confusion_r^(s)[z_i])``, the item's answers sharing ``z_i``; for
      ``rater_effects`` ``y_a ~ Categorical(softmax(eta_i^(s) + b_r^(s)))``. Their ``q_i``
      is the answer distribution of a rater drawn at random from the rater population, a
      mixture over raters (and classes), not the law of the item's answers, so it is not
      used here.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` (``posterior["q"]`` and ``observed_data["counts"]``;
        for the rater models also ``label_prob`` and ``confusion`` or ``eta`` and ``b`` in
        the posterior and the answers' design in ``constant_data``, as the fit stores them).
        A ``method="map"`` fit has one draw, hence one replicated data set.
    random_seed : int, numpy.random.Generator or None
        Seed of ``numpy.random.default_rng``; the same seed gives identical replicates.

    Returns
    -------
    xarray.DataTree
        A new tree: the groups of ``result`` (not modified) plus ``posterior_predictive``
        and an extended ``observed_data`` with, under the same names:

        ``answers`` (chain, draw, answer), int8 (int16 beyond 127 categories)
            Every replicated answer as a category code ``0..K-1`` (the position in the
            ``category`` coordinate), one row per observed answer, sorted by item and,
            within an item, by category. The ``answer`` dim carries the coordinate
            ``answer_item`` (the item label of each answer; it cannot be called ``item``,
            the dim of the per-item variables). ``observed_data["answers"]`` holds the
            observed answers in the same order.
        ``modal_share``, ``cant_solve_share``, ``plugin_amb`` (chain, draw, item), float32
            Per-item statistics of the replicated answers (see :func:`check_predictive`);
            ``cant_solve_share`` only when the data have a can't-solve category. NaN for
            items without answers.
        ``cant_solve_count`` (chain, draw, item), int16
            Can't-solve answers per item (only with a can't-solve category).

        ``observed_data["counts"]`` is kept.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree.
    ValueError
        If it has no ``posterior["q"]``, no ``observed_data["counts"]``, does not say which
        category is can't-solve, or ``q`` does not match the counts; for a rater model, if
        its design or its posterior variables do not match the counts.
    NotApplicable
        (a ``ValueError``) If it has no ``posterior["q"]``, or it is a fit to answers with
        rater ids without the posterior variables or the design above.

    Notes
    -----
    The ``answers`` of every replicate are listed, like the observed ones, by item and
    within an item by category: for the rater models each answer is drawn by its own rater
    and then counted into its item, so the order of ``answers`` carries no rater.

    Which ArviZ call gives which picture (``import arviz as az``; ``pp`` the returned tree):

    - ``az.plot_ppc_rootogram(pp, var_names="answers")``: observed against replicated
      frequencies of each category over all answers (the marginal answer distribution);
      ``var_names="cant_solve_count"``: how many items have 0, 1, 2, ... can't-solve
      answers, the picture of over-dispersion of can't-solve over items.
    - ``az.plot_ppc_dist(pp, var_names="cant_solve_share")`` (or ``"modal_share"``,
      ``"plugin_amb"``): the distribution over items of the statistic, observed against
      ``num_samples`` replicated data sets.
    - ``az.plot_ppc_pit(pp, var_names="plugin_amb", method="prit_c")`` (or
      ``"cant_solve_share"``, ``"cant_solve_count"``, ...): the ECDF of the items' randomized
      PIT values ``p(T_i^rep < T_i) + U p(T_i^rep = T_i)`` against uniformity. The
      statistics are discrete (shares of ``n_i`` answers), so pass ``method="prit_c"`` (or
      ``"envelope"``): the default ``"pot_c"`` fits Pareto tails to the replicates, which
      their ties can break (a RuntimeWarning inside arviz-stats). ``var_names="answers"``
      (also with ``method="prit_c"``) gives the PIT of the within-item order statistics of
      the answer codes.

    The plain multinomial layout (``counts`` with dims item x category) breaks these
    functions (the rootogram cannot broadcast it, the PIT expects one scalar per
    observation, ``plot_ppc_dist`` pools all cells into one curve), hence this layout.

    What it can and cannot show: the posterior predictive of a model whose ``q_i`` are free
    per item (``dirichlet_categorical``, and nearly so ``hierarchical_dirichlet``)
    reproduces each item's own shares by construction, so per-item pictures look good even
    under misfit; differences show in the pooled pictures (the rootogram of
    ``cant_solve_count``, ``plot_ppc_dist``) and are measured by :func:`check_predictive`,
    whose default reference is the mixed predictive. Nothing a model of counts replicates
    sees misfit that leaves each item's counts multinomial with some ``q_i`` (e.g. rater
    effects averaged within an item); the rater models, which replicate who answered, can.

    Memory: ``answers`` costs one byte per answer and draw (1000 items x 20 answers x 4000
    draws: 80 MB), each per-item statistic four bytes per item and draw; temporaries are
    bounded by processing :data:`CHUNK_BYTES` worth of draws at a time.

    References
    ----------
    .. [1] Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A. and Rubin,
       D. B. (2013), *Bayesian Data Analysis*, 3rd ed., chapter 6.
    .. [2] Säilynoja, T., Bürkner, P.-C. and Vehtari, A. (2022), "Graphical test for discrete
       uniformity and its applications in goodness-of-fit evaluation and multiple sample
       comparison", Statistics and Computing 32, 32.

    Examples
    --------
    >>> import numpy as np, ambppl
    >>> from ambppl.validation.predictive import posterior_predictive
    >>> counts = np.array([[5, 0, 0], [2, 2, 1], [1, 3, 2]])
    >>> counts = ambppl.read_annotations(counts, cant_solve="2")
    >>> result = ambppl.fit(counts, draws=100, chains=2, random_seed=1)
    >>> pp = posterior_predictive(result, random_seed=2)
    >>> pp["posterior_predictive"]["answers"].sizes
    Frozen({'chain': 2, 'draw': 100, 'answer': 16})
    >>> rep = pp["posterior_predictive"]["cant_solve_count"]
    >>> rep.dims, str(rep.dtype)
    (('chain', 'draw', 'item'), 'int16')
    >>> pp["observed_data"]["answers"].values[:5].tolist()
    [0, 0, 0, 0, 0]
    """
    import xarray as xr

    result = _check_tree(result)
    counts, values, cs, attrs = _read(result)
    rng = np.random.default_rng(check_random_seed(random_seed))
    q = result["posterior"]["q"].transpose("chain", "draw", "item", "category")
    n_chains, n_draws = q.sizes["chain"], q.sizes["draw"]
    n_items, n_cat = values.shape
    n = values.sum(axis=1)
    item_of = np.repeat(np.arange(n_items), n)
    position = np.arange(item_of.size) - np.repeat(np.cumsum(n) - n, n)
    code = _code_dtype(n_cat)
    names = [s for s in STATISTICS if cs is not None or s != "cant_solve_share"]
    # a model of answers with rater ids: every answer replicated by its own rater
    raters = _rater_posterior(result, values, rng) if _answers_with_raters(result, attrs) else None

    answers = np.empty((n_chains, n_draws, item_of.size), dtype=code)
    stats = {s: np.empty((n_chains, n_draws, n_items), dtype=np.float32) for s in names}
    cs_count = np.empty((n_chains, n_draws, n_items), dtype=np.int16) if cs is not None else None
    # bytes per draw: q, its multinomial counts and statistics (float64 / int64), and the
    # gathered cumulative counts (int32) and comparisons (bool) of every answer
    per_draw = 8 * n_items * n_cat * 3 + 5 * item_of.size * (n_cat - 1)
    if raters is not None:
        per_draw += raters[1]
    for c in range(n_chains):
        q_chain = np.asarray(q.isel(chain=c).values, dtype=np.float64) if raters is None else None
        for start, stop in _draw_blocks(n_draws, per_draw):
            if raters is None:
                rep = rng.multinomial(n, q_chain[start:stop])  # (draws, items, K)
            else:
                rep = raters[0](c * n_draws + np.arange(start, stop))
            answers[c, start:stop] = _answer_codes(rep, item_of, position)
            for name, value in _statistics(rep, n, cs, names).items():
                stats[name][c, start:stop] = value
            if cs_count is not None:
                cs_count[c, start:stop] = rep[..., cs]

    item_coord = counts["item"].values if "item" in counts.coords else np.arange(n_items)
    category = counts["category"].values if "category" in counts.coords else np.arange(n_cat)
    sample_coords = {
        "chain": q["chain"].values,
        "draw": q["draw"].values,
    }
    answer_coords = {
        "answer": np.arange(item_of.size),
        "answer_item": ("answer", item_coord[item_of]),
    }
    pp_vars: dict[str, Any] = {"answers": (("chain", "draw", "answer"), answers)}
    obs_vars: dict[str, Any] = {
        "answers": (
            ("answer",),
            np.repeat(np.tile(np.arange(n_cat), n_items), values.ravel()).astype(code),
        )
    }
    observed = _statistics(values, n, cs, names)
    for name in names:
        pp_vars[name] = (("chain", "draw", "item"), stats[name])
        obs_vars[name] = (("item",), observed[name].astype(np.float32))
    if cs_count is not None:
        pp_vars["cant_solve_count"] = (("chain", "draw", "item"), cs_count)
        obs_vars["cant_solve_count"] = (("item",), values[:, cs].astype(np.int16))
    attrs = {
        "kind": "posterior predictive",
        "answers": "category codes: positions in the category coordinate",
        "categories": json.dumps([str(x) for x in category.tolist()]),
        "created_by": "ambppl.validation.posterior_predictive",
    }
    pp = xr.Dataset(
        pp_vars, coords={**sample_coords, "item": item_coord, **answer_coords}, attrs=attrs
    )
    obs_new = xr.Dataset(obs_vars, coords={"item": item_coord, **answer_coords})
    obs_old = result["observed_data"].to_dataset()
    obs_old = obs_old.drop_vars([v for v in obs_new.data_vars if v in obs_old.data_vars])
    tree = result.copy()
    tree["observed_data"] = xr.merge([obs_old, obs_new], combine_attrs="override")
    tree["observed_data"].attrs.update(result["observed_data"].attrs)
    tree["posterior_predictive"] = pp
    return tree


# --------------------------------------------------------------------------- the check


def _replicate_q(
    result: xr.DataTree,
    attrs: dict[str, Any],
    kind: str,
    rng: np.random.Generator,
    n_items: int,
    n_cat: int,
    replicates: int | None,
) -> tuple[Any, int, str]:
    """A function block(start, stop) -> q^rep (stop - start, items, K), the number of
    replicates, and a sentence saying where q^rep comes from."""
    post = result["posterior"]
    q = post["q"].transpose("chain", "draw", "item", "category")
    total = q.sizes["chain"] * q.sizes["draw"]
    size, pick = _spread_draws(total, replicates)
    if kind == "posterior":
        flat = q.values.reshape(total, n_items, n_cat)
        return (
            (lambda a, b: np.asarray(flat[pick[a:b]], dtype=np.float64)),
            size,
            ("each item's own posterior q_i (ordinary posterior predictive)"),
        )
    prior = fixed_prior(result, attrs)
    if prior is not None:
        alpha = np.asarray(prior, dtype=np.float64)
        if alpha.shape != (n_cat,):
            raise ValueError(
                f"the result's fixed prior must have one concentration per category ({n_cat}), "
                f"but got {prior!r}"
            )
        where = f"a fresh q_i ~ Dirichlet({np.round(alpha, 4).tolist()}) (the fixed prior)"
        return (
            (lambda a, b: dirichlet_draws(rng, np.broadcast_to(alpha, (n_items, n_cat)), b - a)),
            size,
            where,
        )
    conc = _learned_concentration(result, attrs, n_cat)
    flat_conc = conc.reshape(total, n_cat)

    def block(a: int, b: int) -> np.ndarray:
        alpha = np.broadcast_to(flat_conc[pick[a:b], None, :], (b - a, n_items, n_cat))
        return dirichlet_draws(rng, alpha, b - a)

    return block, size, "a fresh q_i ~ Dirichlet(concentration of a posterior hyperparameter draw)"


#: Posterior variables of a rater model that the mixed predictive reads: the mean item
#: logits, the item-effect sd (one per category) and every rater's bias.
RATER_VARIABLES: tuple[str, ...] = ("mu", "sigma_item", "b")

#: Posterior variables of a latent-class model (``dawid_skene``) that the mixed predictive
#: reads: the prevalences of the true classes (the item population) and every rater's
#: confusion rows; the model file's ``simulate_answers`` takes them under these names.
CLASS_VARIABLES: tuple[str, ...] = ("pi", "confusion")


def _takes(module: Any, names: tuple[str, ...]) -> bool:
    """Whether the model file's ``simulate_answers`` takes ``names`` as its first parameters."""
    import inspect

    try:
        params = list(inspect.signature(module.simulate_answers).parameters)
    except (TypeError, ValueError):
        return False
    return tuple(params[: len(names)]) == names


def _rater_design(result: xr.DataTree, attrs: dict[str, Any]) -> tuple[Any, str] | None:
    """The catalog module of a model fitted to answers with rater ids and the form of its
    item population, when the result holds what its mixed predictive needs, else None:
    ``"logits"`` (``rater_effects``: :data:`RATER_VARIABLES`) or ``"latent_class"``
    (``dawid_skene``: :data:`CLASS_VARIABLES`, which its ``simulate_answers`` takes).

    Raises NotApplicable for a latent-class model whose result lacks those variables or the
    answers' design (a fit whose ``var_names`` left them out): it has an item population,
    but not in the result."""

    name = attrs.get("model")
    if name is None or fixed_prior(result, attrs) is not None:
        return None
    try:
        entry = get_model(str(name))
    except (ValueError, OSError, KeyError):
        return None
    if entry.info.get("data") != "long" or not callable(
        getattr(entry.module, "simulate_answers", None)
    ):
        return None
    post = result["posterior"]
    design = all(constant(result, v) is not None for v in ("answer_item", "answer_rater"))
    if all(v in post.data_vars for v in RATER_VARIABLES) and design:
        return entry.module, "logits"
    if _takes(entry.module, CLASS_VARIABLES):
        missing = [f"posterior[{v!r}]" for v in CLASS_VARIABLES if v not in post.data_vars]
        missing += [
            f"constant_data[{v!r}]"
            for v in ("answer_item", "answer_rater")
            if constant(result, v) is None
        ]
        if missing:
            raise NotApplicable(
                _mixed_needs(
                    f"model {str(name)!r}'s item population and raters: the posterior draws "
                    "of pi and confusion and the answers' design (constant_data answer_item, "
                    f"answer_rater), but the result lacks {', '.join(missing)}; refit with "
                    "ambppl.fit and var_names=None"
                )
            )
        return entry.module, "latent_class"
    return None


def _replicate_rater_answers(
    result: xr.DataTree,
    module: Any,
    rng: np.random.Generator,
    values: np.ndarray,
    replicates: int | None,
) -> tuple[Any, int, str, int]:
    """Mixed predictive of a rater model: replicated counts (stop - start, items, K).

    Per replicate, a posterior draw of (``mu``, ``sigma_item``, ``b``): fresh item logits
    ``eta_i ~ N(mu, diag(sigma_item^2))`` (the model's item population; the zero-sum
    projection does not change a softmax), and every observed answer replicated by its own
    rater, ``y ~ Categorical(softmax(eta_i + b_r))`` (the model's ``simulate_answers``), so
    the design (which rater answered which item) is the observed one.
    """
    post = result["posterior"]
    mu = post["mu"].transpose("chain", "draw", "category")
    sigma = post["sigma_item"].transpose("chain", "draw", "category")
    b = post["b"].transpose("chain", "draw", "rater", "category")
    n_items, n_cat = values.shape
    total = mu.sizes["chain"] * mu.sizes["draw"]
    size, pick = _spread_draws(total, replicates)
    mu_flat = mu.values.reshape(total, n_cat)
    sigma_flat = sigma.values.reshape(total, n_cat)
    b_flat = b.values.reshape(total, b.sizes["rater"], n_cat)
    model_items = post["eta"] if "eta" in post.data_vars else None
    item, rater, row = _answer_design(result, values, model_items, b.sizes["rater"])

    def block(a: int, c: int) -> np.ndarray:
        draws = pick[a:c]
        eta = mu_flat[draws, None, :] + sigma_flat[draws, None, :] * rng.standard_normal(
            (c - a, n_items, n_cat)
        )
        codes = module.simulate_answers(eta, b_flat[draws], item, rater, rng=rng)
        return _counted(codes, row, n_items, n_cat)

    where = (
        "fresh item logits eta_i ~ N(mu, sigma_item^2) of a posterior draw, each observed "
        "answer replicated by its own rater with that draw's bias b_r (the rater model's "
        "mixed predictive)"
    )
    per_draw = 8 * item.size * n_cat * 4 + 8 * n_items * n_cat * 4
    return block, size, where, per_draw


def _spread_draws(total: int, replicates: int | None) -> tuple[int, np.ndarray]:
    """The number of replicates (``total`` posterior draws where ``replicates`` is None) and
    the flat posterior draw each one uses: evenly spaced, with repeats when there are more
    replicates than draws."""
    size = total if replicates is None else replicates
    return size, np.floor(np.arange(size) * total / size).astype(np.int64)


def _category_positions(var: Any, counts: Any, n_cat: int) -> np.ndarray:
    """Position in ``observed_data["counts"]``'s categories of each category of the posterior
    variable ``var`` (its ``category`` dim), matched by label (as text: the model stores its
    labels as text) where both have a ``category`` coordinate, else by position."""
    import pandas as pd

    if "category" not in var.coords or "category" not in counts.coords:
        return np.arange(n_cat)
    model = pd.Index([str(x) for x in var["category"].values])
    observed = pd.Index([str(x) for x in counts["category"].values])
    where = observed.get_indexer(model)
    if len(model) != n_cat or not np.array_equal(np.sort(where), np.arange(n_cat)):
        raise ValueError(
            f"posterior[{var.name!r}]'s categories must be those of observed_data['counts'] "
            f"{observed.tolist()}, but got {model.tolist()}; refit with ambppl.fit"
        )
    return where


def _replicate_class_answers(
    result: xr.DataTree,
    module: Any,
    rng: np.random.Generator,
    values: np.ndarray,
    replicates: int | None,
) -> tuple[Any, int, str, int]:
    """Mixed predictive of a latent-class model: replicated counts (stop - start, items, K).

    Per replicate, a posterior draw of (``pi``, ``confusion``): a fresh true class ``z_i ~
    Categorical(pi)`` for every item (the model's item population, not the item's own class
    posterior ``label_prob_i``), and every observed answer replicated by its own rater, ``y ~
    Categorical(confusion_r[z_i])`` (the model's ``simulate_answers``), the answers of an item
    sharing its ``z_i``, counted per item in the rows and category order of
    ``observed_data["counts"]``.
    """
    post = result["posterior"]
    arrays = {}
    for name, dims in (("pi", ("class",)), ("confusion", _RATER_DIMS["confusion"])):
        var, dims = post[name], ("chain", "draw", *dims)
        if set(var.dims) != set(dims):
            raise ValueError(
                f"posterior[{name!r}] must have dims {dims}, but got {tuple(var.dims)}"
            )
        arrays[name] = var.transpose(*dims)
    pi, confusion = arrays["pi"], arrays["confusion"]
    n_items, n_cat = values.shape
    if (
        confusion.sizes["class"] != pi.sizes["class"]
        or confusion.sizes["category"] != n_cat
        or confusion.sizes["class"] > n_cat
    ):
        raise ValueError(
            "posterior['pi'] (class) and posterior['confusion'] (rater, class, category) must "
            "agree in their classes and have the categories of observed_data['counts'] "
            f"{values.shape}, but got sizes {dict(pi.sizes)} and {dict(confusion.sizes)}"
        )
    to_counts = _category_positions(confusion, observed_counts(result), n_cat)
    n_raters = confusion.sizes["rater"]
    total = pi.sizes["chain"] * pi.sizes["draw"]
    size, pick = _spread_draws(total, replicates)
    pi_flat = np.asarray(pi.values, dtype=np.float64).reshape(total, -1)
    theta_flat = np.asarray(confusion.values, dtype=np.float64).reshape(total, *confusion.shape[2:])
    # the model's item order, matched to the counts' rows by label, as the posterior kind does
    model_items = post["label_prob"] if "label_prob" in post.data_vars else post["q"]
    item, rater, row = _answer_design(result, values, model_items, n_raters)

    def block(a: int, c: int) -> np.ndarray:
        draws = pick[a:c]
        codes = module.simulate_answers(pi_flat[draws], theta_flat[draws], item, rater, rng=rng)
        return _counted(to_counts[codes], row, n_items, n_cat)

    where = (
        "a fresh true class z_i ~ Categorical(pi) of a posterior draw for every item, each "
        "observed answer replicated by its own rater from that draw's confusion row for z_i "
        "(the latent-class model's mixed predictive)"
    )
    n_classes = pi.sizes["class"]
    # per answer: the gathered rows, their cumulative sums (float64) and comparisons (bool),
    # codes and cells; per item: the classes' cumulative sums and comparisons; the draws'
    # confusion matrices; the counts
    per_draw = (
        item.size * n_cat * (8 * 2 + 1)
        + 24 * item.size
        + n_items * n_classes * 9
        + 8 * n_raters * n_classes * n_cat
        + 8 * n_items * n_cat * 4
    )
    return block, size, where, per_draw


def _mixed_needs(needs: str) -> str:
    """Why the mixed predictive check does not apply, in the caller's words
    (:func:`ambppl.internal.messages.say`): in Python with the fix ``kind='posterior'``; the
    ambppl command runs the mixed check only, so it has no option to name."""
    return say(
        f"kind='mixed' needs {needs}; use kind='posterior'",
        f"the mixed predictive check needs {needs}",
    )


def _learned_concentration(result: xr.DataTree, attrs: dict[str, Any], n_cat: int) -> np.ndarray:
    """Per-draw Dirichlet concentration of q_i (chain, draw, K) from the catalog model."""

    name = attrs.get("model")
    if name is None:
        needs = (
            "the population distribution of q_i: a fixed prior (attrs['prior']) or the "
            "catalog model (attrs['model']) and its hyperparameter draws, but the result has "
            "neither"
        )
        raise NotApplicable(_mixed_needs(needs))
    entry = get_model(name)
    module = entry.module
    hyper_names = tuple(getattr(module, "HYPERPARAMETERS", ()))
    post = result["posterior"]
    missing = [h for h in hyper_names if h not in post.data_vars]
    if not callable(getattr(module, "concentration", None)) or not hyper_names:
        raise NotApplicable(
            _mixed_needs(
                "a population distribution of q_i to draw fresh items from (a Dirichlet prior "
                f"of q_i, fixed or learned), and model {name!r} has none: its q_i are not "
                "drawn from a prior of their own"
            )
        )
    if missing:
        raise NotApplicable(
            _mixed_needs(
                f"the posterior draws of model {name!r}'s hyperparameters "
                f"{list(hyper_names)}, but the result lacks {missing}"
            )
        )
    params = json.loads(attrs.get("parameters") or "{}")
    hyper = {
        h: post[h].transpose("chain", "draw", ...).values.astype(np.float64) for h in hyper_names
    }
    conc = np.asarray(module.concentration(hyper, n_categories=n_cat, **params), dtype=np.float64)
    shape = (post.sizes["chain"], post.sizes["draw"], n_cat)
    if conc.shape != shape:
        conc = np.broadcast_to(conc, shape)
    return conc


def _two_sided(rep: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Monte Carlo two-sided tail probability, ``min(1, 2 min(P(T >= t), P(T <= t)))`` with
    the add-one correction ``(1 + #) / (1 + S)`` (replicates on axis 0)."""
    s = rep.shape[0]
    ge = (1.0 + (rep >= obs).sum(axis=0)) / (s + 1.0)
    le = (1.0 + (rep <= obs).sum(axis=0)) / (s + 1.0)
    return np.minimum(1.0, 2.0 * np.minimum(ge, le))


def check_predictive(
    result: xr.DataTree,
    *,
    statistics: Sequence[str] | str = STATISTICS,
    alpha: float = 0.01,
    kind: str = "mixed",
    replicates: int | None = 1000,
    random_seed: Any = None,
) -> ValidationResult:
    """Do replicated answers look like the observed ones, item by item and over items?

    For every statistic ``T_i`` (per item) and every summary over items (``mean``,
    ``sd``) the observed value is compared with its distribution over replicated data sets,
    each with the observed number of answers per item ``n_i``:

    - ``kind="mixed"`` (default): ``q_i^rep`` drawn afresh from the model's population
      distribution of ``q`` (the fixed prior ``Dirichlet(alpha)``; for a learned prior
      ``Dirichlet(concentration(theta))`` with ``theta`` a posterior hyperparameter draw),
      then ``x_i^rep ~ Multinomial(n_i, q_i^rep)``: the mixed predictive [1]_, [2]_;
    - ``kind="posterior"``: the ordinary posterior predictive, as
      :func:`posterior_predictive` draws it: for the models of counts ``x_i^rep ~
      Multinomial(n_i, q_i)`` with ``q_i`` the item's own posterior draw; for the models of
      answers with rater ids every observed answer replicated by its own rater from a
      posterior draw (``dawid_skene``: the item's class ``z_i`` drawn from the draw's
      ``label_prob_i``, the answers from their raters' ``confusion`` rows for ``z_i``;
      ``rater_effects``: ``softmax(eta_i + b_r)``), counted per item.

    For the models of answers with rater ids the mixed predictive keeps the observed design
    too: fresh items from the model's item population of a posterior draw, each observed
    answer given again by its own rater, counted per item. ``rater_effects``: fresh item
    logits ``eta_i ~ N(mu, sigma_item^2)``, each answer from ``softmax(eta_i + b_r)`` with
    that draw's bias ``b_r``; ``dawid_skene``: a fresh true class ``z_i ~ Categorical(pi)``
    for every item (the prevalences, not the item's class posterior ``label_prob_i``), each
    answer from its rater's ``confusion`` row for ``z_i`` (the model file's
    ``simulate_answers``), the answers of an item sharing ``z_i``; the model's categories are
    matched to the counts' by label.

    Statistics: ``modal_share`` = largest proper-class count / ``n_i``;
    ``cant_solve_share`` = can't-solve count / ``n_i``; ``plugin_amb`` = the plug-in
    ``amb`` of the counts (paper section 3.3; ``ambppl.estimate(counts, "plugin")``).

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`ambppl.fit` with ``posterior["q"]``.
    statistics : str or sequence of str, default all of :data:`STATISTICS`
        Which per-item statistics. ``cant_solve_share`` is skipped (with a note in
        ``details["notes"]``) when the data have no can't-solve category.
    alpha : float, default 0.01
        Family-wise false-alarm rate (Holm over the table's rows).
    kind : {"mixed", "posterior"}, default "mixed"
        The reference distribution (see above). ``"posterior"`` on a rater model needs the
        posterior variables and design of :func:`posterior_predictive`.
    replicates : int or None, default 1000
        Number of replicated data sets: posterior draws evenly spaced over chains and draws
        (repeated when there are fewer draws); ``None``: one per posterior draw.
    random_seed : int, numpy.random.Generator or None
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    ValidationResult
        ``check="predictive"``; ``table`` one row per statistic x summary with ``observed``,
        the replicated ``rep_mean`` and ``rep_sd``, ``z = (observed - rep_mean) / rep_sd``,
        ``p_value`` (two-sided, normal reference, used for the decision), ``p_mc`` (two-sided
        Monte Carlo tail probability), ``p_holm`` and ``flagged``; ``statistic`` the largest
        ``|z|``; ``p_value`` the smallest Holm-adjusted p-value. ``details`` holds
        ``"items"`` (a DataFrame, one row per item x statistic: observed value, replicated
        mean and the per-item two-sided Monte Carlo p-value, not part of the decision),
        ``"replicated"`` (statistic -> summary -> array of replicates), ``"kind"``,
        ``"replicates"`` and ``"notes"``. ``.plot()`` draws, per row, the replicated
        distribution of the summary with the observed value marked.

    Raises
    ------
    TypeError
        If ``result`` is not a DataTree, or ``replicates`` is not an integer or None.
    ValueError
        For an unknown statistic (the message lists the allowed names), ``alpha`` outside
        (0, 1), an unknown ``kind``, ``replicates`` below 20, a result without
        ``posterior["q"]`` or counts; for ``kind="mixed"`` a result whose population
        distribution cannot be read (for ``dawid_skene``: ``pi`` and ``confusion`` whose
        dims, classes or categories do not match each other and the counts); for a rater
        model a design (``constant_data``) that does not match the counts.
    NotApplicable
        (a ``ValueError``) For data with fewer than two answered items (the summaries over
        items need two), a result without ``posterior["q"]``, ``kind="mixed"`` on a result
        whose item population is not known (no fixed prior, no catalog model with a learned
        prior or a rater model's population; a ``dawid_skene`` result without
        ``posterior["pi"]``, ``["confusion"]`` or the answers' design), or
        ``kind="posterior"`` on a rater model without the posterior variables or design of
        :func:`posterior_predictive`: :func:`check_fit` lists the check as skipped.

    Notes
    -----
    Decision: the Monte Carlo tail probability cannot fall below ``2 / (S + 1)`` with ``S``
    replicates, so with 1000 replicates and six rows Holm could never reach ``alpha = 0.01``.
    The decision therefore uses the normal reference ``p = 2 Phi(-|z|)``: the summaries are
    means over hundreds of nearly independent items, close to normal; the false-alarm rates
    below confirm the approximation where it matters. ``p_mc`` is reported beside it.

    Why the mixed predictive is the default. The flat model is saturated per item: each
    item's posterior predictive reproduces its own shares, and ordinary posterior predictive
    p-values are conservative [1]_, [3]_. Measured with
    ``benchmarks/calibration_predictive.py`` (500 items x 20 answers, K = 5 with can't-solve
    last, ``q_i ~ Dirichlet(1)``, flat model with ``prior=1``, 1000 replicates,
    ``alpha = 0.01``; 200 seeds, binomial standard errors in brackets):

    ===================== ========================== ==========================
    kind                  false alarms (flat data)   power (rater-effect data)
    ===================== ========================== ==========================
    ``"mixed"`` (default) 0.015 (0.009)              0.815 (0.027)
    ``"posterior"``       0.000 (0.000)              0.000 (0.000)
    ===================== ========================== ==========================

    Rater-effect data: 100 raters, each item answered by 20 of them; 5 raters answer
    can't-solve with five times the odds (``q_cs`` odds x 5), each on its own random half of
    the items (``--share 0.8``: power 50/50 for ``"mixed"``, 0/50 for ``"posterior"``).
    The mixed check sees the rater effect mainly through the mean can't-solve share (flagged
    in 163 of the 163 detections; its sd over items in 10, the modal-share mean in 59): the
    extra spread the raters add is small beside the spread of ``Dirichlet(1)`` items. The
    posterior kind never fired in 400 data sets: it is far too conservative to be useful as
    a test here, so it is offered for pictures and comparison only. A learned prior absorbs
    the effect: ``hierarchical_dirichlet`` fitted by ``empirical_bayes`` flagged 0 of 20
    rater-effect data sets (and 0 of 20 flat ones) with either kind.

    ``dawid_skene``'s mixed check (fresh classes from ``pi``), measured with
    ``python benchmarks/calibration_dawid_skene_predictive.py --design {null,ambiguous} --seeds
    S --per P --raters R --classes K`` (2026-12-08, 2 shared cores: 100 items, each answered by
    ``P`` distinct raters of ``R``; per seed ``pi ~ Dirichlet(2)`` over ``K`` classes and each
    rater's row ``k`` a ``Dirichlet`` with 16 on ``k``, 3 on the other classes and 1.5 on
    can't-solve; answers from the model file's ``simulate_answers``; ``method="map"``, 1000
    replicates, ``alpha = 0.01``; binomial standard errors in brackets, for 0 of ``n`` the
    one-sided 95 % bound ``3 / n``). Ambiguous data: each item with probability
    ``--ambiguous`` (0.5 or 0.3) genuinely ambiguous, each of its answers from its own class,
    50/50 between two random classes, through the answering rater's confusion row (a per-item
    mixture, not one true class):

    ================  ==================================  ===================================
    P / R, K          false alarms (dawid_skene data)     power (ambiguous share 0.5 / 0.3)
    ================  ==================================  ===================================
    4 / 6, K = 2      0 of 400 (< 0.0075)                 0 of 200 / 0 of 200
    4 / 6, K = 3      0 of 400 (< 0.0075)                 - / 0 of 200
    10 / 12, K = 2    0.0025 (0.0025), 1 of 400           0.120 (0.023), 24 of 200 / -
    ================  ==================================  ===================================

    Conservative, and weak against this misfit: the mode is refitted to the same answers, so
    the means over items sit at the replicates' centre (their ``z`` had sd 0.07-0.22 over
    seeds, the spreads' 0.5-0.97), and the fitted raters' confusion rows flatten to absorb
    most of the items' ambiguity; what is left shows in the spread over items of the modal
    share and plug-in ``amb`` (21 and 15 of the 24 detections), which a few answers per item
    resolve poorly. With ``--method laplace --draws 200 --chains 1`` (4 / 6, K = 2; about 11 s a
    fit) no false alarm in 51 seeds (< 0.06; largest ``|z|`` 2.03): the means' ``z``
    averaged +0.43 (modal share) and -0.43 (can't-solve share), sd 0.22 over seeds, the
    Gaussian approximation's draws slightly off the data's centre.

    What the check can detect: a population of ``q_i`` unlike the model's (for the fixed
    prior: a prior that misdescribes the items, e.g. can't-solve shares more spread out or
    more frequent than ``Dirichlet(alpha)`` allows; for a learned prior: shapes the
    Dirichlet family cannot take), and answers that are not multinomial within items in
    ways that move the mean or spread of the statistics (rater effects). What it cannot
    detect: misfit a Dirichlet population absorbs (a learned prior adapts its mean and
    concentration to rater effects); rater effects that leave each item's counts
    multinomial; anything about single items beyond the per-item p-values in ``details``
    (a two-sided p-value per item and statistic, not corrected for multiplicity). Under
    the fixed prior the mixed check tests the prior as a description of the items: a
    weakly informative prior fitted to data with many clear items fails it, by design.

    References
    ----------
    .. [1] Gelman, A., Meng, X.-L. and Stern, H. (1996), "Posterior predictive assessment of
       model fitness via realized discrepancies", Statistica Sinica 6, 733-807.
    .. [2] Marshall, E. C. and Spiegelhalter, D. J. (2003), "Approximate cross-validatory
       predictive checks in disease mapping models", Statistics in Medicine 22, 1649-1660.
    .. [3] Bayarri, M. J. and Berger, J. O. (2000), "P values for composite null models",
       JASA 95, 1127-1142.

    Examples
    --------
    >>> import numpy as np, ambppl
    >>> from ambppl.validation.predictive import check_predictive
    >>> rng = np.random.default_rng(0)
    >>> q = rng.dirichlet(np.ones(4), size=200)
    >>> counts = rng.multinomial(10, q)
    >>> counts = ambppl.read_annotations(counts, cant_solve="3")
    >>> result = ambppl.fit(counts, draws=250, chains=2, random_seed=1)
    >>> check = check_predictive(result, random_seed=2)
    >>> check.passed, list(check.table["statistic"].unique())
    (True, ['modal_share', 'cant_solve_share', 'plugin_amb'])
    """
    import pandas as pd

    result = _check_tree(result)
    alpha = check_prob(alpha, "alpha")
    kind = check_option(kind, KINDS, "kind")
    if replicates is not None:
        if isinstance(replicates, bool) or not isinstance(replicates, numbers.Integral):
            raise TypeError(f"replicates must be an integer >= 20 or None, but got {replicates!r}")
        if replicates < 20:
            raise ValueError(f"replicates must be an integer >= 20 or None, but got {replicates!r}")
        replicates = int(replicates)
    counts, values, cs, attrs = _read(result)
    names, notes = _check_statistics(statistics, cs)
    n = values.sum(axis=1)
    answered = n > 0
    if answered.sum() < 2:
        # a statistic's spread over items needs two of them: the check does not apply to
        # these data (a one-item data set is no broken result)
        got = int(answered.sum())
        raise NotApplicable(
            say("check_predictive", "the predictive check")
            + " compares statistics over items and needs at least two items with answers, "
            f"but the data have {got}"
        )
    if not answered.all():
        notes.append(f"{int((~answered).sum())} items without answers left out")
    rng = np.random.default_rng(check_random_seed(random_seed))
    n_items, n_cat = values.shape
    rater_model = _rater_design(result, attrs) if kind == "mixed" else None
    if rater_model is not None:
        module, form = rater_model
        replicate_answers = (
            _replicate_rater_answers if form == "logits" else _replicate_class_answers
        )
        counts_block, size, where, per_draw = replicate_answers(
            result, module, rng, values, replicates
        )
    elif kind == "posterior" and _answers_with_raters(result, attrs):
        replicate, per_draw, where = _rater_posterior(result, values, rng)
        post = result["posterior"]
        size, pick = _spread_draws(post.sizes["chain"] * post.sizes["draw"], replicates)
        per_draw += 8 * n_items * n_cat * 3

        def counts_block(a: int, b: int) -> np.ndarray:
            return replicate(pick[a:b])

    else:
        block, size, where = _replicate_q(result, attrs, kind, rng, n_items, n_cat, replicates)
        per_draw = 8 * n_items * n_cat * 4

        def counts_block(a: int, b: int) -> np.ndarray:
            return rng.multinomial(n, block(a, b))

    observed = {k: v[answered] for k, v in _statistics(values, n, cs, names).items()}
    per_item = {s: np.empty((size, int(answered.sum()))) for s in names}
    for start, stop in _draw_blocks(size, per_draw):
        rep = counts_block(start, stop)
        for s, v in _statistics(rep, n, cs, names).items():
            per_item[s][start:stop] = v[:, answered]

    rows, reps = [], {}
    for s in names:
        summaries = {
            "mean": (observed[s].mean(), per_item[s].mean(axis=1)),
            "sd": (observed[s].std(), per_item[s].std(axis=1)),
        }
        reps[s] = {}
        for summary, (obs, rep) in summaries.items():
            reps[s][summary] = rep
            mean, sd = float(rep.mean()), float(rep.std(ddof=1))
            z = (
                (obs - mean) / sd
                if sd > 0
                else (0.0 if obs == mean else math.copysign(np.inf, obs - mean))
            )
            rows.append(
                {
                    "statistic": s,
                    "summary": summary,
                    "observed": float(obs),
                    "rep_mean": mean,
                    "rep_sd": sd,
                    "z": float(z),
                    "p_value": float(math.erfc(abs(z) / math.sqrt(2.0))),
                    "p_mc": float(_two_sided(rep[:, None], np.array([obs]))[0]),
                }
            )
    table = pd.DataFrame(rows)
    passed, p = decide(table, "p_value", alpha)

    item_labels = (
        counts["item"].values[answered] if "item" in counts.coords else np.flatnonzero(answered)
    )
    items = pd.concat(
        [
            pd.DataFrame(
                {
                    "item": item_labels,
                    "statistic": s,
                    "observed": observed[s],
                    "rep_mean": per_item[s].mean(axis=0),
                    "p_value": _two_sided(per_item[s], observed[s]),
                }
            )
            for s in names
        ],
        ignore_index=True,
    )
    description = (
        f"{kind} predictive check: mean and sd over {int(answered.sum())} items of "
        f"{', '.join(names)}, observed against {size} replicated data sets drawn from {where}, "
        f"Holm at level {alpha:g}"
    )
    return ValidationResult(
        check="predictive",
        passed=bool(passed),
        statistic=float(np.max(np.abs(table["z"].to_numpy()))),
        p_value=p,
        level=alpha,
        table=table,
        description=description,
        details={
            "items": items,
            "replicated": reps,
            "kind": kind,
            "replicates": size,
            "notes": notes,
        },
        plotter=_plot_check,
    )


def _plot_check(check: ValidationResult, *, bins: int = 40, figsize: Any = None) -> Any:
    """Replicated distribution of each summary (histogram) with the observed value (line)."""
    import matplotlib.pyplot as plt

    table = check.table
    stats = list(dict.fromkeys(table["statistic"]))
    summaries = list(dict.fromkeys(table["summary"]))
    fig, axes = plt.subplots(
        len(stats),
        len(summaries),
        figsize=figsize or (4.0 * len(summaries), 2.6 * len(stats)),
        squeeze=False,
        layout="constrained",
    )
    reps = check.details["replicated"]
    for _, row in table.iterrows():
        ax = axes[stats.index(row["statistic"]), summaries.index(row["summary"])]
        rep = reps[row["statistic"]][row["summary"]]
        ax.hist(rep, bins=bins, color="C0", alpha=0.6, density=True, label="replicated")
        colour = "C3" if row["flagged"] else "k"
        ax.axvline(row["observed"], color=colour, lw=2, label="observed")
        ax.set_title(
            f"{row['summary']} of {row['statistic']} over items\n"
            f"z = {row['z']:.2f}, p_holm = {row['p_holm']:.3g}",
            fontsize=9,
        )
        ax.set_yticks([])
    # loc named: matplotlib warns, by the clock, where the default placement is slow
    axes[0, 0].legend(fontsize=8, frameon=False, loc="best")
    word = "passed" if check.passed else "FAILED"
    fig.suptitle(f"{check.details['kind']} predictive check {word} at level {check.level:g}")
    return fig
