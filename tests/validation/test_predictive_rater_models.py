"""The posterior predictive of the rater models: every answer replicated by its own rater.

``posterior_predictive`` and ``check_predictive(kind="posterior")`` drew every item's
replicated counts as ``Multinomial(n_i, q_i)``. For ``dawid_skene`` and ``rater_effects``
``q_i`` is the answer distribution of a rater drawn at random from the rater population (a
mixture), not the law of the item's answers: those come from the item's own raters, and
under ``dawid_skene`` they share the item's true class. The references below are exact: the
expected modal share of an item's answers under a posterior draw, by enumerating every
answer tuple of the item (``C^n`` of them) with the answers independent given the draw (and,
for ``dawid_skene``, given the class ``z_i``, summed over ``label_prob``). The replicates are
independent given the draws, so the mean over ``S`` replicates has Monte Carlo standard
error ``sqrt(mean_s Var_s) / sqrt(S)`` (``Var_s`` the exact variance under draw ``s``); each
item is tested at 5 of them (two-sided normal tail 5.7e-7 per item).

``dawid_skene``'s mixed predictive (``check_predictive``'s default kind) draws each item's
class afresh from the population, ``z_i ~ Categorical(pi)`` of a posterior draw, then each
observed answer from its own rater's ``confusion`` row for ``z_i``: the same law with
``label_prob_i`` replaced by ``pi`` for every item, checked against exact references the same
way (and, for the mean over items, against the exact law of that mean).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.data import read_long
from ambppl.inference.catalog import get_model
from ambppl.validation import NotApplicable, predictive
from ambppl.validation.predictive import check_predictive, posterior_predictive

CATEGORIES = ["a", "b", "cs"]  # can't-solve last
CS = 2
CLASSES = ["a", "b"]
Z_TOL = 5.0  # standard errors per item


# ------------------------------------------------------------------- exact references


def _modal_moments(rows: np.ndarray, cs: int | None) -> tuple[np.ndarray, np.ndarray]:
    """E[m] and E[m^2] of the modal share ``m`` (largest proper-class count / n) of ``n``
    independent answers, answer ``j`` drawn from ``rows[..., j, :]`` (..., n, C): the sum over
    all ``C^n`` answer tuples of their probability times their modal share."""
    n, n_cat = rows.shape[-2:]
    tuples = np.array(list(itertools.product(range(n_cat), repeat=n)))  # (T, n)
    prob = rows[..., np.arange(n), tuples].prod(axis=-1)  # (..., T)
    counts = np.zeros((len(tuples), n_cat))
    np.add.at(counts, (np.repeat(np.arange(len(tuples)), n), tuples.ravel()), 1.0)
    proper = counts if cs is None else np.delete(counts, cs, axis=1)
    modal = proper.max(axis=1) / n
    return prob @ modal, prob @ modal**2


def _expected_dawid_skene(label_prob, confusion, item, rater, cs):
    """Per item (model order): per draw E[m] and Var[m] of the modal share when z_i ~
    label_prob_i and each answer a of item i comes from confusion[rater_a, z_i] (draws,
    items)."""
    n_draws, n_items, n_classes = label_prob.shape
    mean = np.zeros((n_draws, n_items))
    second = np.zeros((n_draws, n_items))
    for i in range(n_items):
        raters = rater[item == i]
        for k in range(n_classes):
            m1, m2 = _modal_moments(confusion[:, raters, k, :], cs)  # (draws,)
            mean[:, i] += label_prob[:, i, k] * m1
            second[:, i] += label_prob[:, i, k] * m2
    return mean, second - mean**2


def _expected_rater_effects(eta, b, item, rater, cs):
    """Per item (model order): per draw E[m] and Var[m] of the modal share when each answer a
    of item i comes from softmax(eta_i + b_{rater_a}) (draws, items)."""
    n_draws, n_items, _ = eta.shape
    mean = np.zeros((n_draws, n_items))
    var = np.zeros((n_draws, n_items))
    for i in range(n_items):
        logits = eta[:, i, None, :] + b[:, rater[item == i], :]
        p = np.exp(logits - logits.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        m1, m2 = _modal_moments(p, cs)
        mean[:, i], var[:, i] = m1, m2 - m1**2
    return mean, var


def _old_replicates(q: np.ndarray, n: np.ndarray, size: int, seed: int) -> np.ndarray:
    """The replicates of the code before the fix: Multinomial(n_i, q_i) from draws evenly
    spaced over the flat posterior (q: draws x items x K, in the counts' item order)."""
    pick = np.floor(np.arange(size) * q.shape[0] / size).astype(np.int64)
    return np.random.default_rng(seed).multinomial(n, q[pick])


def _modal_share(counts: np.ndarray, n: np.ndarray, cs: int | None) -> np.ndarray:
    proper = counts if cs is None else np.delete(counts, cs, axis=-1)
    return proper.max(axis=-1) / n


def _z_scores(rep_mean, exp_mean, exp_var, size):
    """(replicated mean - exact mean) in Monte Carlo standard errors, per item."""
    return (rep_mean - exp_mean.mean(axis=0)) / np.sqrt(exp_var.mean(axis=0) / size)


# ------------------------------------------------------------------- planted trees


def _design(rng, n_items, n_raters, per_item):
    """Each item answered by ``per_item`` distinct raters: (answer_item, answer_rater)."""
    item = np.repeat(np.arange(n_items), per_item)
    rater = np.concatenate([rng.permutation(n_raters)[:per_item] for _ in range(n_items)])
    return item, rater


def _tree(posterior, item, rater, model, model_items, counts_order, n_raters):
    """A fit's layout: the posterior in the model's item order, the counts in another order
    (matched by label), the design in constant_data, the raters in a scrambled order."""
    n_items = len(model_items)
    n = np.bincount(item, minlength=n_items)
    values = np.zeros((n_items, len(CATEGORIES)), dtype=np.int64)
    values[:, 0] = n  # only the number of answers per item enters the replicates
    position = {label: j for j, label in enumerate(model_items)}
    counts = xr.DataArray(
        values[[position[label] for label in counts_order]],
        dims=("item", "category"),
        coords={"item": counts_order, "category": CATEGORIES},
        attrs={"cant_solve": "cs"},
    )
    raters = [f"r{j}" for j in np.random.default_rng(0).permutation(n_raters)]
    posterior = posterior.assign_coords(
        item=model_items,
        rater=raters,
        category=CATEGORIES,
        **({"class": CLASSES} if "class" in posterior.dims else {}),
    )
    tree = xr.DataTree.from_dict(
        {
            "posterior": posterior,
            "observed_data": xr.Dataset({"counts": counts}),
            "constant_data": xr.Dataset(
                {"answer_item": ("answer", item), "answer_rater": ("answer", rater)},
                coords={"rater": raters},
            ),
        }
    )
    tree.attrs.update({"model": model, "method": "nuts", "cant_solve": "cs"})
    return tree


def _dawid_skene_tree(seed=21, n_items=10, n_raters=5, per_item=3, n_draws=300):
    """Very accurate raters (0.96 right, per draw) on items whose class posterior is 50/50
    (the first half of the items) or random (the others)."""
    rng = np.random.default_rng(seed)
    item, rater = _design(rng, n_items, n_raters, per_item)
    base = np.array([[0.96, 0.03, 0.01], [0.03, 0.96, 0.01]])
    confusion = rng.dirichlet(300 * base[0], size=(n_draws, n_raters, 1))
    confusion = np.concatenate(
        [confusion, rng.dirichlet(300 * base[1], size=(n_draws, n_raters, 1))], axis=2
    )  # (draws, raters, class, category)
    half = n_items // 2
    p_a = np.concatenate(
        [rng.beta(200, 200, size=(n_draws, half)), rng.beta(2, 2, size=(n_draws, n_items - half))],
        axis=1,
    )
    label_prob = np.stack([p_a, 1 - p_a], axis=-1)  # (draws, items, class)
    tree, q, model_items, counts_order = _class_tree(rng, label_prob, confusion, item, rater)
    return tree, (label_prob, confusion, q, item, rater, model_items, counts_order)


def _class_tree(rng, label_prob, confusion, item, rater, pi=None):
    """A one-chain dawid_skene tree of these draws (``pi`` too where given), its q, and the
    model's item order (a permutation of the counts' sorted one)."""
    # q: a random rater from the population (here the mean of the raters' rows), mixed over
    # the class posterior, as dawid_skene stores it
    q = np.einsum("dik,dkc->dic", label_prob, confusion.mean(axis=1))
    one = ("chain", "draw")
    variables = {} if pi is None else {"pi": ((*one, "class"), pi[None])}
    posterior = xr.Dataset(
        {
            **variables,
            "label_prob": ((*one, "item", "class"), label_prob[None]),
            "confusion": ((*one, "rater", "class", "category"), confusion[None]),
            "q": ((*one, "item", "category"), q[None]),
        }
    )
    n_items, n_raters = label_prob.shape[1], confusion.shape[1]
    model_items = [f"i{j}" for j in rng.permutation(n_items)]
    counts_order = sorted(model_items)
    tree = _tree(posterior, item, rater, "dawid_skene", model_items, counts_order, n_raters)
    return tree, q, model_items, counts_order


def _rater_effects_tree(seed=22, n_items=10, n_draws=300):
    """Two raters with opposite strong biases (the first towards "a", the second towards
    "b") answer every item, a third (unbiased) one item in two; item logits near 0."""
    rng = np.random.default_rng(seed)
    item = np.concatenate([[i, i] + ([i] if i % 2 else []) for i in range(n_items)])
    rater = np.concatenate([[0, 1] + ([2] if i % 2 else []) for i in range(n_items)])
    bias = np.array([[3.0, -1.5, -1.5], [-1.5, 3.0, -1.5], [0.0, 0.0, 0.0]])
    b = bias + rng.normal(0, 0.2, size=(n_draws, 3, 3))
    b -= b.mean(axis=-1, keepdims=True)
    eta = np.array([0.5, 0.5, -1.0]) + rng.normal(0, 0.3, size=(n_draws, n_items, 3))
    eta -= eta.mean(axis=-1, keepdims=True)
    logits = eta[:, :, None, :] + b[:, None, :, :]
    p = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    q = p.mean(axis=2)  # a rater drawn at random (here: from the three), not the item's own
    one = ("chain", "draw")
    posterior = xr.Dataset(
        {
            "eta": ((*one, "item", "category"), eta[None]),
            "b": ((*one, "rater", "category"), b[None]),
            "q": ((*one, "item", "category"), q[None]),
        }
    )
    model_items = [f"i{j}" for j in rng.permutation(n_items)]
    counts_order = sorted(model_items)
    tree = _tree(posterior, item, rater, "rater_effects", model_items, counts_order, 3)
    return tree, (eta, b, q, item, rater, model_items, counts_order)


def _to_counts_order(per_model_item, model_items, counts_order):
    position = {label: j for j, label in enumerate(model_items)}
    return per_model_item[..., [position[label] for label in counts_order]]


def _rebuilt_counts(pp: xr.DataTree) -> np.ndarray:
    """Replicated counts (replicates, items, K) from the ``answers`` layout."""
    group = pp["posterior_predictive"]
    labels = list(pp["observed_data"]["item"].values)
    answer_item = np.array([labels.index(x) for x in group["answer_item"].values])
    codes = group["answers"].values.reshape(-1, answer_item.size).astype(np.int64)
    out = np.zeros((codes.shape[0], len(labels), len(CATEGORIES)), dtype=np.int64)
    draw = np.repeat(np.arange(codes.shape[0]), answer_item.size)
    np.add.at(out, (draw, np.tile(answer_item, codes.shape[0]), codes.ravel()), 1)
    return out


# ------------------------------------------------------------------- dawid_skene


def test_dawid_skene_replicates_draw_the_class_then_each_raters_answer() -> None:
    tree, (label_prob, confusion, q, item, rater, model_items, order) = _dawid_skene_tree()
    n_draws, n_items = label_prob.shape[:2]
    exp_mean, exp_var = _expected_dawid_skene(label_prob, confusion, item, rater, CS)
    exp_mean = _to_counts_order(exp_mean, model_items, order)
    exp_var = _to_counts_order(exp_var, model_items, order)
    n = tree["observed_data"]["counts"].values.sum(axis=1)

    pp = posterior_predictive(tree, random_seed=3)
    group = pp["posterior_predictive"]
    rep = _rebuilt_counts(pp)
    np.testing.assert_array_equal(rep.sum(axis=-1), np.broadcast_to(n, rep.shape[:2]))
    np.testing.assert_array_equal(
        group["cant_solve_count"].values.reshape(-1, n_items), rep[..., CS]
    )
    share = group["modal_share"].values.reshape(-1, n_items)
    np.testing.assert_allclose(share, _modal_share(rep, n, CS), rtol=1e-6)
    z = _z_scores(share.mean(axis=0), exp_mean, exp_var, n_draws)
    assert np.all(np.abs(z) < Z_TOL), z

    # the check's replicates: each draw ten times
    size = 10 * n_draws
    check = check_predictive(
        tree, kind="posterior", statistics="modal_share", replicates=size, random_seed=4
    )
    assert "confusion row" in check.description
    rep_mean = check.details["items"].set_index("item").loc[order, "rep_mean"].to_numpy()
    z = _z_scores(rep_mean, exp_mean, exp_var, size)
    assert np.all(np.abs(z) < Z_TOL), z

    # the multinomial of q_i fails the same test on the items whose class is in doubt: their
    # accurate raters agree (all of them right, or all wrong), the mixture q_i splits them
    q_counts = _to_counts_order(np.moveaxis(q, 1, 2), model_items, order)
    old = _modal_share(_old_replicates(np.moveaxis(q_counts, 1, 2), n, size, 4), n, CS)
    z_old = _z_scores(old.mean(axis=0), exp_mean, exp_var, size)
    doubt = np.isin(order, model_items[: n_items // 2])
    assert np.all(z_old[doubt] < -10 * Z_TOL), z_old
    # and the modal share of those items: near 1 (the right predictive), near 3/4 (q_i)
    assert np.all(exp_mean.mean(axis=0)[doubt] > 0.9)
    assert np.all(old.mean(axis=0)[doubt] < 0.8)


def _dawid_skene_answers() -> pd.DataFrame:
    """Four raters: 24 items answered by all four alike, six where r0 and r1 disagree (and r2
    answers can't-solve on three of them)."""
    rows = []
    for i in range(24):
        rows += [(f"u{i:02d}", f"r{r}", "a" if i % 2 else "b") for r in range(4)]
    for i in range(6):
        rows += [(f"c{i}", "r0", "a"), (f"c{i}", "r1", "b")]
        if i % 2:
            rows.append((f"c{i}", "r2", "?"))
    return read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]), cant_solve="?")


@pytest.fixture(scope="module")
def dawid_skene_map():
    return ambppl.fit(_dawid_skene_answers(), "dawid_skene", method="map")


def test_dawid_skene_map_fit_against_its_stored_class_posterior(dawid_skene_map) -> None:
    result = dawid_skene_map
    post = result["posterior"]
    label_prob = post["label_prob"].transpose("chain", "draw", "item", "class").values[0]
    confusion = post["confusion"].transpose("chain", "draw", "rater", "class", "category")
    confusion = confusion.values[0]
    item = result["constant_data"]["answer_item"].values
    rater = result["constant_data"]["answer_rater"].values
    cs = list(result["observed_data"]["category"].values).index("?")
    counts = result["observed_data"]["counts"]
    model_items = list(post["item"].values)
    order = list(counts["item"].values)
    exp_mean, exp_var = _expected_dawid_skene(label_prob, confusion, item, rater, cs)
    exp_mean = _to_counts_order(exp_mean, model_items, order)
    exp_var = _to_counts_order(exp_var, model_items, order)
    n = counts.values.sum(axis=1)

    size = 4000  # the mode, replicated 4000 times
    check = check_predictive(
        result, kind="posterior", statistics="modal_share", replicates=size, random_seed=5
    )
    rep_mean = check.details["items"].set_index("item").loc[order, "rep_mean"].to_numpy()
    z = _z_scores(rep_mean, exp_mean, exp_var, size)
    assert np.all(np.abs(z) < Z_TOL), z

    # posterior_predictive on the mode repeated along draw: the same law
    tiled = result.copy()
    tiled["posterior"] = (
        post.to_dataset().isel(draw=np.zeros(size, dtype=int)).assign_coords(draw=np.arange(size))
    )
    share = posterior_predictive(tiled, random_seed=6)["posterior_predictive"]["modal_share"]
    z = _z_scores(share.values.reshape(size, -1).mean(axis=0), exp_mean, exp_var, size)
    assert np.all(np.abs(z) < Z_TOL), z

    # the old multinomial of q_i is off on the items whose raters disagree
    q = post["q"].sel(item=order).transpose("chain", "draw", "item", "category").values[0]
    old = _modal_share(_old_replicates(q, n, size, 5), n, cs).mean(axis=0)
    z_old = _z_scores(old, exp_mean, exp_var, size)
    disputed = np.array([label.startswith("c") for label in order])
    assert np.all(np.abs(z_old[disputed]) > 2 * Z_TOL), z_old


def test_dawid_skene_replicates_survive_a_netcdf_round_trip(
    dawid_skene_map, tmp_path: Path
) -> None:
    path = tmp_path / "fit.nc"
    dawid_skene_map.to_netcdf(path)
    with xr.open_datatree(path) as reloaded:
        reloaded = reloaded.load()
    a = check_predictive(dawid_skene_map, kind="posterior", replicates=200, random_seed=7)
    b = check_predictive(reloaded, kind="posterior", replicates=200, random_seed=7)
    assert "confusion row" in b.description
    for name, summaries in a.details["replicated"].items():
        for summary, values in summaries.items():
            np.testing.assert_array_equal(values, b.details["replicated"][name][summary])
    a = posterior_predictive(dawid_skene_map, random_seed=8)["posterior_predictive"]
    b = posterior_predictive(reloaded, random_seed=8)["posterior_predictive"]
    np.testing.assert_array_equal(a["answers"].values, b["answers"].values)


# ------------------------------------------------------------------- dawid_skene, mixed


def _count_pmfs(rows: np.ndarray, cs: int) -> dict[str, np.ndarray]:
    """Law of the modal proper count and of the can't-solve count (0..n) of ``n`` independent
    answers, answer ``j`` drawn from ``rows[..., j, :]`` (..., n, C): the sum over all ``C^n``
    answer tuples of their probability, per count (..., n + 1)."""
    n, n_cat = rows.shape[-2:]
    tuples = np.array(list(itertools.product(range(n_cat), repeat=n)))  # (T, n)
    prob = rows[..., np.arange(n), tuples].prod(axis=-1)  # (..., T)
    counts = np.zeros((len(tuples), n_cat), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(tuples)), n), tuples.ravel()), 1)
    modal = np.delete(counts, cs, axis=1).max(axis=1)
    return {
        "modal_share": prob @ np.eye(n + 1)[modal],
        "cant_solve_share": prob @ np.eye(n + 1)[counts[:, cs]],
    }


def _mixed_item_pmfs(weights, confusion, item, rater, cs):
    """Per draw and item (model order), the law of each count (draws, items, n + 1) when z_i ~
    weights[:, i] and every answer a of item i comes from confusion[rater_a, z_i]: the sum over
    the classes z of weights_z times the law given z (the raters' rows for z). The mixed
    predictive has weights pi (one row for every item), the posterior kind label_prob_i."""
    n_draws, n_items, n_classes = weights.shape
    n = np.bincount(item).max()
    out = {s: np.zeros((n_draws, n_items, n + 1)) for s in ("modal_share", "cant_solve_share")}
    for i in range(n_items):
        raters = rater[item == i]
        for k in range(n_classes):
            for s, pmf in _count_pmfs(confusion[:, raters, k, :], cs).items():
                out[s][:, i] += weights[:, i, k, None] * pmf
    return out


def _population_tree(seed=31, n_items=10, n_raters=5, per_item=3, n_draws=200):
    """Draws of pi (about 0.7 / 0.3) and of raters who answer class b with can't-solve three
    times as often as class a; the class posterior label_prob says every item is class b,
    so replicates drawn from it (the posterior kind) differ from the population's."""
    rng = np.random.default_rng(seed)
    item, rater = _design(rng, n_items, n_raters, per_item)
    pi = rng.dirichlet([28.0, 12.0], size=n_draws)  # (draws, class)
    rows = []
    for base in ([0.8, 0.12, 0.08], [0.15, 0.55, 0.3]):
        per_rater = rng.dirichlet(30 * np.array(base), size=n_raters)
        rows.append(np.stack([rng.dirichlet(300 * r, size=n_draws) for r in per_rater], axis=1))
    confusion = np.stack(rows, axis=2)  # (draws, raters, class, category)
    label_prob = np.broadcast_to([0.05, 0.95], (n_draws, n_items, 2))
    tree, _, model_items, counts_order = _class_tree(rng, label_prob, confusion, item, rater, pi)
    return tree, (pi, label_prob, confusion, item, rater, model_items, counts_order)


def test_dawid_skene_mixed_replicates_draw_the_class_from_pi_then_each_raters_answer() -> None:
    """Exact references of the mixed predictive, per item and for the mean over items.

    Per item: the replicated mean of a share against its exact mean, in units of the Monte
    Carlo standard error ``sqrt(mean_s Var_s / S)`` (each of the D draws is used exactly S / D
    times and the replicates are independent given their draws, so the variance of their mean
    is ``sum_j Var_s(j) / S^2``).

    Over items: per replicate the check summarizes the items by the mean share ``T``; given
    draw ``s`` the items are independent (``z_i ~ pi^(s)`` independently, the answers
    independent given the ``z``), so the exact law of ``T`` under draw ``s`` is the
    convolution of the items' laws (every item has n = 3 answers: ``T = sum_i M_i / (3N)``
    with integer counts ``M_i``). With ``mu_s``, ``v_s`` its mean and variance and ``mu =
    mean_s mu_s``: the mean of the S replicates has expectation ``mu`` and variance ``mean_s
    v_s / S`` (as above); their variance with ``ddof=1`` (``rep_sd^2``) has expectation
    ``mean_s v_s + S / (S - 1) var_s(mu_s)`` (``var_s`` over the draws, ``ddof=0``: ``sum_j
    E (T_j - Tbar)^2 = (S - 1) mean_s v_s + S var_s(mu_s)`` for S / D replicates per draw) and,
    to first order (the sample variance is the mean of ``(T_j - mu)^2`` less ``(Tbar -
    mu)^2``, of order 1 / S), variance ``mean_s Var_s[(T - mu)^2] / S``, from the exact
    fourth and second moments about ``mu`` under each draw. Each is tested at 5 standard
    errors (two-sided normal tail 5.7e-7; 24 tests).
    """
    tree, (pi, label_prob, confusion, item, rater, model_items, order) = _population_tree()
    n_draws, n_items = label_prob.shape[:2]
    size = 20 * n_draws
    check = check_predictive(
        tree, statistics=["modal_share", "cant_solve_share"], replicates=size, random_seed=12
    )
    assert check.details["kind"] == "mixed" and "Categorical(pi)" in check.description
    mixed = _mixed_item_pmfs(
        np.broadcast_to(pi[:, None, :], label_prob.shape), confusion, item, rater, CS
    )
    own = _mixed_item_pmfs(label_prob, confusion, item, rater, CS)  # the posterior kind's
    shares = np.arange(4) / 3.0
    items = check.details["items"].set_index(["statistic", "item"])
    table = check.table.set_index(["statistic", "summary"])
    for stat, pmf in mixed.items():
        pmf = _to_counts_order(np.moveaxis(pmf, 2, 1), model_items, order)  # (D, 4, items)
        pmf = np.moveaxis(pmf, 1, 2)
        mean = pmf @ shares
        var = pmf @ shares**2 - mean**2
        rep_mean = items.loc[stat].loc[order, "rep_mean"].to_numpy()
        z = _z_scores(rep_mean, mean, var, size)
        assert np.all(np.abs(z) < Z_TOL), (stat, z)

        law = np.ones((n_draws, 1))  # the sum of the items' counts, per draw
        for i in range(n_items):
            wider = np.zeros((n_draws, law.shape[1] + 3))
            for m in range(4):
                wider[:, m : m + law.shape[1]] += law * pmf[:, i, m, None]
            law = wider
        t = np.arange(law.shape[1]) / (3.0 * n_items)
        mu_s = law @ t
        v_s = law @ t**2 - mu_s**2
        mu = mu_s.mean()
        dev = t - mu
        var_dev2 = law @ dev**4 - (law @ dev**2) ** 2
        row = table.loc[(stat, "mean")]
        z_mean = (row["rep_mean"] - mu) / np.sqrt(v_s.mean() / size)
        expected_var = v_s.mean() + size / (size - 1) * mu_s.var()
        z_var = (row["rep_sd"] ** 2 - expected_var) / np.sqrt(var_dev2.mean() / size)
        assert abs(z_mean) < Z_TOL and abs(z_var) < Z_TOL, (stat, z_mean, z_var)

        # the class posterior (every item class b) predicts other shares: the reference is
        # the population's
        own_mean = (np.moveaxis(own[stat], 1, 0) @ shares).T.mean()  # mean over draws, items
        if stat == "cant_solve_share":
            assert (row["rep_mean"] - own_mean) / np.sqrt(v_s.mean() / size) < -10 * Z_TOL


@pytest.mark.parametrize("chunk_bytes", [None, 1])
def test_dawid_skene_mixed_replicates_keep_the_observed_design(chunk_bytes, monkeypatch) -> None:
    """Raters who answer each class with one category, each their own way, and draws of pi
    that make every item's class certain (a different class per draw): each replicate is
    exactly the answers of the observed raters of every item, counted in the counts' rows and
    categories, whatever order the model's categories are in (here can't-solve first), also
    with the draws processed one at a time (``CHUNK_BYTES = 1``)."""
    if chunk_bytes is not None:
        monkeypatch.setattr(predictive, "CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(25)
    n_chains, n_draws, n_items, n_raters = 2, 7, 8, 4
    item, rater = _design(rng, n_items, n_raters, 3)
    # answer (in CATEGORIES) of rater r on class k: r0 right, r1 swaps a and b, r2 always
    # can't-solve, r3 right on a and can't-solve on b
    answer = np.array([[0, 1], [1, 0], [2, 2], [0, 2]])
    model_categories = ["cs", "a", "b"]
    column = [model_categories.index(c) for c in CATEGORIES]  # model column of each category
    confusion = np.zeros((n_raters, 2, 3))
    for r in range(n_raters):
        for k in range(2):
            confusion[r, k, column[answer[r, k]]] = 1.0
    true_class = rng.integers(0, 2, size=(n_chains, n_draws))  # one class per draw
    one = ("chain", "draw")
    posterior = xr.Dataset(
        {
            "pi": ((*one, "class"), np.eye(2)[true_class]),
            "label_prob": ((*one, "item", "class"), np.full((n_chains, n_draws, n_items, 2), 0.5)),
            "confusion": (
                (*one, "rater", "class", "category"),
                np.broadcast_to(confusion, (n_chains, n_draws, *confusion.shape)),
            ),
            "q": ((*one, "item", "category"), np.full((n_chains, n_draws, n_items, 3), 1 / 3)),
        }
    )
    model_items = [f"i{j}" for j in rng.permutation(n_items)]
    order = sorted(model_items)
    tree = _tree(posterior, item, rater, "dawid_skene", model_items, order, n_raters)
    tree["posterior"] = tree["posterior"].to_dataset().assign_coords(category=model_categories)
    n = tree["observed_data"]["counts"].values.sum(axis=1)

    want = np.zeros((n_chains * n_draws, n_items, 3), dtype=np.int64)  # counts' rows, categories
    row = np.array([order.index(model_items[i]) for i in item])
    for d, k in enumerate(true_class.ravel()):
        np.add.at(want[d], (row, answer[rater, k]), 1)
    check = check_predictive(tree, replicates=None, random_seed=3)
    reps = check.details["replicated"]
    np.testing.assert_array_equal(
        reps["cant_solve_share"]["mean"], (want[..., CS] / n).mean(axis=-1)
    )
    np.testing.assert_allclose(
        reps["modal_share"]["mean"], _modal_share(want, n, CS).mean(axis=-1), rtol=1e-12
    )
    np.testing.assert_allclose(
        reps["modal_share"]["sd"], _modal_share(want, n, CS).std(axis=-1), rtol=1e-12
    )

    # categories that are not the counts' are refused, not matched by position
    other = tree.copy()
    other["posterior"] = tree["posterior"].to_dataset().assign_coords(category=["x", "a", "b"])
    with pytest.raises(ValueError, match=r"posterior\['confusion'\]'s categories must be"):
        check_predictive(other, random_seed=3)


def _simulated_answers(seed: int, n_items: int = 80, n_raters: int = 6, per_item: int = 4):
    """Answers simulated from dawid_skene itself (the model file's simulate_answers): two
    classes and can't-solve, each rater's rows a Dirichlet around a good rater."""
    rng = np.random.default_rng(seed)
    item, rater = _design(rng, n_items, n_raters, per_item)
    theta = np.stack(
        [
            np.stack([rng.dirichlet([16, 3, 1.5]), rng.dirichlet([3, 16, 1.5])])
            for _ in range(n_raters)
        ]
    )
    simulate = get_model("dawid_skene").module.simulate_answers
    y = simulate([0.6, 0.4], theta, item, rater, rng=rng)
    frame = pd.DataFrame(
        {
            "task": [f"t{i:03d}" for i in item],
            "worker": [f"w{r}" for r in rater],
            "label": [CATEGORIES[k] for k in y],
        }
    )
    return read_long(frame, cant_solve="cs")


@pytest.fixture(scope="module")
def simulated_map():
    return ambppl.fit(_simulated_answers(41), "dawid_skene", method="map")


def test_dawid_skene_mixed_check_passes_on_answers_from_the_model(simulated_map) -> None:
    check = check_predictive(simulated_map, random_seed=42)
    assert check.details["kind"] == "mixed" and "Categorical(pi)" in check.description
    assert len(check.table) == 6 and check.passed, check.table


def test_dawid_skene_mixed_check_runs_on_the_map_fit(simulated_map) -> None:
    """The mixed check raised NotApplicable ("dawid_skene has no population of q_i") and was
    skipped; the item population is pi."""
    check = check_predictive(simulated_map, replicates=200, random_seed=1)
    assert check.details["kind"] == "mixed" and check.details["replicates"] == 200
    assert "fresh true class z_i ~ Categorical(pi)" in check.description
    again = check_predictive(simulated_map, replicates=200, random_seed=1)
    np.testing.assert_array_equal(
        check.details["replicated"]["modal_share"]["mean"],
        again.details["replicated"]["modal_share"]["mean"],
    )


def test_a_dawid_skene_fit_without_pi_or_design_is_not_applicable(simulated_map) -> None:
    no_pi = simulated_map.copy()
    no_pi["posterior"] = simulated_map["posterior"].to_dataset().drop_vars("pi")
    with pytest.raises(NotApplicable, match=r"lacks posterior\['pi'\]; refit") as info:
        check_predictive(no_pi, random_seed=1)
    assert "use kind='posterior'" in str(info.value)
    check_predictive(no_pi, kind="posterior", replicates=20, random_seed=1)  # still applies
    no_design = simulated_map.copy()
    no_design["constant_data"] = xr.Dataset()
    with pytest.raises(NotApplicable, match=r"lacks constant_data\['answer_item'\]"):
        check_predictive(no_design, random_seed=1)


# ------------------------------------------------------------------- rater_effects


def test_rater_effects_replicates_each_answer_by_its_own_rater() -> None:
    tree, (eta, b, q, item, rater, model_items, order) = _rater_effects_tree()
    n_draws, n_items = eta.shape[:2]
    exp_mean, exp_var = _expected_rater_effects(eta, b, item, rater, CS)
    exp_mean = _to_counts_order(exp_mean, model_items, order)
    exp_var = _to_counts_order(exp_var, model_items, order)
    n = tree["observed_data"]["counts"].values.sum(axis=1)

    pp = posterior_predictive(tree, random_seed=9)
    rep = _rebuilt_counts(pp)
    np.testing.assert_array_equal(rep.sum(axis=-1), np.broadcast_to(n, rep.shape[:2]))
    share = pp["posterior_predictive"]["modal_share"].values.reshape(-1, n_items)
    np.testing.assert_allclose(share, _modal_share(rep, n, CS), rtol=1e-6)
    z = _z_scores(share.mean(axis=0), exp_mean, exp_var, n_draws)
    assert np.all(np.abs(z) < Z_TOL), z

    size = 10 * n_draws
    check = check_predictive(
        tree, kind="posterior", statistics="modal_share", replicates=size, random_seed=10
    )
    assert "softmax(eta_i + b_r)" in check.description
    rep_mean = check.details["items"].set_index("item").loc[order, "rep_mean"].to_numpy()
    z = _z_scores(rep_mean, exp_mean, exp_var, size)
    assert np.all(np.abs(z) < Z_TOL), z

    # the multinomial of q_i (a rater at random) makes the two opposed raters agree far
    # more often than they do: too large a modal share on every item
    q_counts = _to_counts_order(np.moveaxis(q, 1, 2), model_items, order)
    old = _modal_share(_old_replicates(np.moveaxis(q_counts, 1, 2), n, size, 10), n, CS)
    z_old = _z_scores(old.mean(axis=0), exp_mean, exp_var, size)
    assert np.all(z_old > 2 * Z_TOL), z_old


def test_the_mixed_check_of_rater_effects_is_unchanged_by_the_shared_design() -> None:
    """The mixed predictive reads the design through the same helper: replicated from fresh
    eta_i of the draw's population, by the same raters, in the counts' item order."""
    tree, (eta, b, _, item, rater, model_items, order) = _rater_effects_tree(n_draws=50)
    post = tree["posterior"].to_dataset()
    post["mu"] = (("chain", "draw", "category"), np.zeros((1, 50, 3)))
    post["sigma_item"] = (("chain", "draw", "category"), np.full((1, 50, 3), 1e-9))
    tree["posterior"] = post
    check = check_predictive(tree, statistics="modal_share", replicates=2000, random_seed=11)
    assert "by its own rater" in check.description and check.details["kind"] == "mixed"
    # eta_i = mu = 0: every item's answers from softmax(b_r) of its raters
    zero = np.zeros_like(eta)
    exp_mean, exp_var = _expected_rater_effects(zero, b, item, rater, CS)
    exp_mean = _to_counts_order(exp_mean, model_items, order)
    exp_var = _to_counts_order(exp_var, model_items, order)
    rep_mean = check.details["items"].set_index("item").loc[order, "rep_mean"].to_numpy()
    z = _z_scores(rep_mean, exp_mean, exp_var, 2000)
    assert np.all(np.abs(z) < Z_TOL), z


# ------------------------------------------------------------------- draws and blocks


@pytest.mark.parametrize("model", ["dawid_skene", "rater_effects"])
@pytest.mark.parametrize("chunk_bytes", [None, 1])
def test_every_replicate_comes_from_its_own_draw(model, chunk_bytes, monkeypatch) -> None:
    """Draws that make the answers certain, a different pattern per (chain, draw, item):
    each replicate must be its own draw's pattern, also when the draws are processed one
    at a time (``CHUNK_BYTES = 1``: blocks of one draw)."""
    if chunk_bytes is not None:
        monkeypatch.setattr(predictive, "CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(24)
    n_chains, n_draws, n_items, n_raters = 2, 7, 6, 4
    item, rater = _design(rng, n_items, n_raters, 3)
    dims = ("chain", "draw", "item", "category")
    if model == "dawid_skene":
        pattern = rng.integers(0, 2, size=(n_chains, n_draws, n_items))  # the true class
        perfect = np.broadcast_to(np.eye(2, 3), (n_chains, n_draws, n_raters, 2, 3))
        posterior = xr.Dataset(
            {
                "label_prob": (("chain", "draw", "item", "class"), np.eye(2)[pattern]),
                "confusion": (("chain", "draw", "rater", "class", "category"), perfect),
                "q": (dims, np.eye(2, 3)[pattern]),
            }
        )
    else:
        pattern = rng.integers(0, 3, size=(n_chains, n_draws, n_items))  # cs among them
        eta = 40.0 * np.eye(3)[pattern]
        posterior = xr.Dataset(
            {
                "eta": (dims, eta - eta.mean(axis=-1, keepdims=True)),
                "b": (("chain", "draw", "rater", "category"), np.zeros((2, 7, n_raters, 3))),
                "q": (dims, np.eye(3)[pattern]),
            }
        )
    model_items = [f"i{j}" for j in rng.permutation(n_items)]
    order = sorted(model_items)
    tree = _tree(posterior, item, rater, model, model_items, order, n_raters)
    n = tree["observed_data"]["counts"].values.sum(axis=1)
    in_order = _to_counts_order(pattern, model_items, order)  # (chain, draw, counts rows)

    answers = posterior_predictive(tree, random_seed=1)["posterior_predictive"]["answers"]
    want = np.repeat(in_order, n, axis=-1)  # every answer of an item: its pattern
    np.testing.assert_array_equal(answers.values, want)

    check = check_predictive(
        tree, kind="posterior", statistics="cant_solve_share", replicates=None, random_seed=2
    )
    mean = check.details["replicated"]["cant_solve_share"]["mean"]
    np.testing.assert_array_equal(mean, (in_order == CS).mean(axis=-1).ravel())


# ------------------------------------------------------------------- refusals


def test_a_rater_fit_without_what_its_predictive_needs_is_refused() -> None:
    tree, _ = _dawid_skene_tree(n_draws=20)
    no_confusion = tree.copy()
    no_confusion["posterior"] = tree["posterior"].to_dataset().drop_vars("confusion")
    for call in (
        lambda t: posterior_predictive(t, random_seed=1),
        lambda t: check_predictive(t, kind="posterior", random_seed=1),
    ):
        with pytest.raises(NotApplicable, match=r"posterior\['confusion'\]"):
            call(no_confusion)
    no_design = tree.copy()
    no_design["constant_data"] = xr.Dataset()
    with pytest.raises(NotApplicable, match=r"constant_data\['answer_item'\]"):
        posterior_predictive(no_design, random_seed=1)
    wrong = tree.copy()
    design = tree["constant_data"].to_dataset()
    design["answer_item"] = design["answer_item"].where(design["answer"] != 0, 7)
    wrong["constant_data"] = design
    with pytest.raises(ValueError, match=r"design .* does not match"):
        posterior_predictive(wrong, random_seed=1)


# ------------------------------------------------------------------- count models


def test_dirichlet_categorical_replicates_are_the_multinomial_of_q_as_before() -> None:
    """The count models keep their code path: the same seed gives, draw for draw, the
    replicates Multinomial(n_i, q_i) of one generator over the chains in turn."""
    rng = np.random.default_rng(23)
    values = rng.multinomial(6, rng.dirichlet(np.ones(4), size=30))
    counts = ambppl.read_annotations(values, cant_solve="3")
    result = ambppl.fit(counts, draws=200, chains=2, random_seed=1)
    n = values.sum(axis=1)
    q = result["posterior"]["q"].transpose("chain", "draw", "item", "category").values

    gen = np.random.default_rng(12)
    want = np.stack([gen.multinomial(n, q[c]) for c in range(2)])  # (chain, draw, item, K)
    pp = posterior_predictive(result, random_seed=12)
    codes = pp["posterior_predictive"]["answers"].values
    expected = np.stack(
        [
            np.concatenate([np.repeat(np.arange(4), row) for row in draw])
            for draw in want.reshape(-1, 30, 4)
        ]
    ).reshape(codes.shape)
    np.testing.assert_array_equal(codes, expected)

    gen = np.random.default_rng(13)
    pick = np.floor(np.arange(1000) * 400 / 1000).astype(np.int64)
    rep = gen.multinomial(n, q.reshape(400, 30, 4)[pick])
    check = check_predictive(result, kind="posterior", replicates=1000, random_seed=13)
    np.testing.assert_allclose(
        check.details["replicated"]["modal_share"]["mean"],
        _modal_share(rep, n, 3).mean(axis=1),
        rtol=1e-12,
    )
    assert "own posterior q_i" in check.description
