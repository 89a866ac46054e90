"""rater_effects: the per-item log likelihood with eta_i integrated out (the LOO footing).

References: K = 2 against ``scipy.integrate.quad`` over the one free coordinate; K = 3 against
brute-force Monte Carlo with 2^18 draws of eta_i from its population; a probability check
(the sequence probabilities of every possible answer sequence of an item sum to 1, as the
Dirichlet models' do). Tolerances are multiples of the Monte Carlo standard errors that the
function reports (``sqrt(1/ess - 1/S)`` per draw) and, for the brute force, of its own.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import integrate
from scipy.special import log_softmax, logsumexp
from scipy.stats import norm

import ambppl
from ambppl.data.readers import read_annotations, read_long
from ambppl.inference.catalog import get_model

DIMS = {
    "mu": ("chain", "draw", "category"),
    "sigma_item": ("chain", "draw", "category"),
    "eta": ("chain", "draw", "item", "category"),
    "b": ("chain", "draw", "rater", "category"),
}


@pytest.fixture(scope="module")
def module():
    return get_model("rater_effects").module


def make_answers(rows: list[tuple], categories: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return read_long(frame, categories=categories)


def random_answers(rng, n_items, k, n_raters, answers_per_item) -> pd.DataFrame:
    cats = [f"c{j}" for j in range(k)]
    rows = []
    for i in range(n_items):
        n = int(rng.integers(*answers_per_item))
        favourite = rng.integers(k)
        for _ in range(n):
            label = favourite if rng.random() < 0.6 else rng.integers(k)
            rows.append((f"t{i}", f"r{rng.integers(n_raters)}", cats[label]))
    return make_answers(rows, cats)


def log_lik_items(eta, b, codes):
    """log prod_a softmax(eta + b_r)[y_a] for eta of shape (M, K): (M, items), numpy."""
    out = np.zeros((eta.shape[0], len(codes["item_ids"])))
    for i, r, y in zip(codes["item"], codes["rater"], codes["y"], strict=True):
        out[:, i] += log_softmax(eta + b[r], axis=-1)[:, y]
    return out


def synthetic_posterior(module, rng, answers, chains=2, draws=30, sir_draws=20_000):
    """Hyperparameters jittered over draws; eta_i drawn from the item's conditional posterior
    given the first draw's hyperparameters (sampling-importance-resampling from the
    population), as a fit would give them."""
    codes = module._codes(answers)
    k, n = len(codes["categories"]), len(codes["item_ids"])
    n_raters = len(codes["rater_ids"])
    mu = rng.normal(0, 0.5, size=k) + 0.05 * rng.normal(size=(chains, draws, k))
    mu -= mu.mean(axis=-1, keepdims=True)
    jitter = 0.05 * rng.normal(size=(chains, draws, k))
    sigma = np.exp(np.log(rng.uniform(0.6, 1.5, size=k)) + jitter)
    b = rng.normal(0, 0.5, size=(n_raters, k))
    b = b + 0.05 * rng.normal(size=(chains, draws, n_raters, k))
    b -= b.mean(axis=-1, keepdims=True)
    z = mu[0, 0] + sigma[0, 0] * rng.normal(size=(sir_draws, k))
    eta_prior = z - z.mean(axis=-1, keepdims=True)
    ll = log_lik_items(eta_prior, b[0, 0], codes)  # (M, N)
    eta = np.empty((chains, draws, n, k))
    for i in range(n):
        w = np.exp(ll[:, i] - ll[:, i].max())
        pick = rng.choice(sir_draws, size=chains * draws, p=w / w.sum())
        eta[:, :, i] = eta_prior[pick].reshape(chains, draws, k)
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(draws),
        "item": codes["item_ids"],
        "rater": codes["rater_ids"],
        "category": codes["categories"],
    }
    post = xr.Dataset(
        {
            name: (DIMS[name], value)
            for name, value in (("mu", mu), ("sigma_item", sigma), ("eta", eta), ("b", b))
        },
        coords=coords,
    )
    return post, codes


def population(mu, sigma, basis):
    """N(m, Sigma) of w = Q' eta for the population eta = P z, z ~ N(mu, diag(sigma^2))."""
    return mu @ basis, basis.T @ np.diag(sigma**2) @ basis


def test_zero_sum_basis_is_orthonormal(module):
    for k in (2, 3, 5):
        q = module._zero_sum_basis(k)
        assert q.shape == (k, k - 1)
        np.testing.assert_allclose(q.T @ q, np.eye(k - 1), atol=1e-14)
        np.testing.assert_allclose(q.sum(axis=0), 0.0, atol=1e-14)


def test_two_categories_against_quadrature(module):
    """K = 2: one free coordinate w, eta = (w, -w) / sqrt(2); reference by scipy quad."""
    rng = np.random.default_rng(11)
    answers = random_answers(rng, n_items=6, k=2, n_raters=3, answers_per_item=(1, 12))
    post, codes = synthetic_posterior(module, rng, answers, draws=20)
    ll = module.integrated_log_likelihood(post, answers, n_nodes=256, max_draws=10)
    assert ll["counts"].shape == (2, 5, 6) and ll.attrs["thin"] == 4
    basis = module._zero_sum_basis(2)
    kept = ll["draw"].values
    per_item = [
        (codes["rater"][codes["item"] == i], codes["y"][codes["item"] == i]) for i in range(6)
    ]
    err, se = [], []
    for c in range(2):
        for j, d in enumerate(kept):
            m, s2 = population(post["mu"].values[c, d], post["sigma_item"].values[c, d], basis)
            b = post["b"].values[c, d]
            for i, (raters, ys) in enumerate(per_item):

                def log_f(w, raters=raters, ys=ys, m=m, s2=s2, b=b):
                    w = np.asarray(w, dtype=float)[..., None, None]  # (..., answer, K)
                    eta = np.concatenate([w, -w], axis=-1) * basis[0, 0]
                    lp = log_softmax(eta + b[raters], axis=-1)[..., np.arange(len(ys)), ys]
                    lp = lp.sum(axis=-1)
                    return lp + norm.logpdf(w[..., 0, 0], m[0], np.sqrt(s2[0, 0]))

                grid = np.linspace(-15, 15, 601)
                values = log_f(grid)
                top, mode = values.max(), grid[values.argmax()]
                assert abs(mode) < 8  # the integrand lives well inside [-15, 15]
                ref, quad_err = integrate.quad(
                    lambda w, f=log_f, top=top: np.exp(f(w) - top),
                    -15,
                    15,
                    points=[mode],
                    epsabs=0,
                    epsrel=1e-10,
                    limit=200,
                )
                assert quad_err < 1e-7 * ref
                est = float(ll["counts"].values[c, j, i])
                ess = float(ll["ess"].values[c, j, i])
                err.append(est - (np.log(ref) + top))
                se.append(np.sqrt(max(1.0 / ess - 1.0 / 256, 0.0)))
    err, se = np.array(err), np.array(se)
    assert se.max() < 0.05  # the proposal fits: the check below is not vacuous
    assert np.all(np.abs(err) <= 4.0 * se + 1e-9), (np.abs(err) / se).max()
    assert np.all(ll["min_ess"].values > 100)


def test_three_categories_against_brute_force(module):
    """K = 3: brute-force Monte Carlo over 2^18 draws of eta_i from its population."""
    rng = np.random.default_rng(12)
    answers = random_answers(rng, n_items=5, k=3, n_raters=4, answers_per_item=(1, 6))
    post, codes = synthetic_posterior(module, rng, answers, draws=10)
    ll = module.integrated_log_likelihood(post, answers, n_nodes=512, max_draws=4)
    assert ll["counts"].shape == (2, 2, 5)
    basis = module._zero_sum_basis(3)
    n_mc = 2**18
    z = []
    for c in range(2):
        for j, d in enumerate(ll["draw"].values):
            m, cov = population(post["mu"].values[c, d], post["sigma_item"].values[c, d], basis)
            w = m + rng.normal(size=(n_mc, 2)) @ np.linalg.cholesky(cov).T
            lik = np.exp(log_lik_items(w @ basis.T, post["b"].values[c, d], codes))  # (M, N)
            ref = np.log(lik.mean(axis=0))
            se_ref = lik.std(axis=0) / np.sqrt(n_mc) / lik.mean(axis=0)
            ess = ll["ess"].values[c, j]
            se_is = np.sqrt(np.maximum(1.0 / ess - 1.0 / 512, 0.0))
            z.append((ll["counts"].values[c, j] - ref) / np.sqrt(se_ref**2 + se_is**2))
            assert se_ref.max() < 0.01
    z = np.concatenate(z)
    assert np.abs(z).max() < 4.0, z


def test_sequence_probabilities_sum_to_one(module):
    """exp(value) is the probability of the answer *sequence* (no multinomial coefficient):
    over the 3^2 label sequences of two fixed raters it sums to 1, as for
    dirichlet_categorical's log likelihood."""
    from ambppl.inference.modeling import log_likelihood as dirichlet_ll

    cats = ["x", "y", "z"]
    rows = []
    for i, seq in enumerate(itertools.product(cats, repeat=2)):
        rows += [(f"t{i}", "ann", seq[0]), (f"t{i}", "bob", seq[1])]
    answers = make_answers(rows, cats)
    rng = np.random.default_rng(13)
    post, _ = synthetic_posterior(module, rng, answers, draws=10)
    ll = module.integrated_log_likelihood(post, answers, n_nodes=512, max_draws=20)
    p = np.exp(ll["counts"].values)  # (chain, draw, 9)
    se = p * np.sqrt(np.maximum(1.0 / ll["ess"].values - 1.0 / 512, 0.0))
    total = p.sum(axis=-1)
    assert np.all(np.abs(total - 1.0) <= 4.0 * se.sum(axis=-1) + 1e-12), total
    counts = read_annotations(answers, item="item", rater="rater", label="label")
    assert np.isclose(np.exp(dirichlet_ll(counts.values, [1.0, 1.0, 1.0])).sum(), 1.0)


def test_thinning_keeps_draw_labels(module):
    rng = np.random.default_rng(14)
    answers = random_answers(rng, n_items=3, k=3, n_raters=2, answers_per_item=(2, 4))
    post, _ = synthetic_posterior(module, rng, answers, chains=2, draws=30)
    ll = module.integrated_log_likelihood(post, answers, n_nodes=64, max_draws=25)
    assert ll.attrs["thin"] == 3 and ll["draw"].values.tolist() == list(range(0, 30, 3))
    assert ll.sizes["chain"] * ll.sizes["draw"] <= 25
    full = module.integrated_log_likelihood(post, answers, n_nodes=64, max_draws=60)
    np.testing.assert_allclose(full["counts"].sel(draw=ll["draw"]), ll["counts"], rtol=1e-12)
    # same nodes for every draw: the result does not depend on which draws are kept


def test_tree_for_loo_and_compare(module):
    """with_integrated_log_likelihood gives a tree that ambppl.loo and ambppl.compare take,
    next to dirichlet_categorical on the same items."""
    rng = np.random.default_rng(15)
    answers = random_answers(rng, n_items=8, k=3, n_raters=3, answers_per_item=(4, 8))
    post, codes = synthetic_posterior(module, rng, answers, chains=2, draws=400)
    constant = xr.Dataset(
        {"answer_item": ("answer", codes["item"]), "answer_rater": ("answer", codes["rater"])}
    )
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((2, 400), dtype=bool))})
    fit = xr.DataTree.from_dict(
        {"posterior": post, "constant_data": constant, "sample_stats": stats}
    )
    fit.attrs["model"] = "rater_effects"
    tree = module.with_integrated_log_likelihood(fit, answers, n_nodes=128, max_draws=400)
    assert tree["posterior"].sizes["draw"] == tree["sample_stats"].sizes["draw"] == 200
    assert tree["log_likelihood"]["counts"].dims == ("chain", "draw", "item")
    assert tree.attrs["log_likelihood"] == "integrated" and tree.attrs["model"] == "rater_effects"
    assert set(tree["integration"].data_vars) == {"ess", "min_ess", "mcse"}
    elpd = ambppl.loo(tree)
    np.testing.assert_allclose(
        elpd.elpd,
        float(
            logsumexp(tree["log_likelihood"]["counts"].values, axis=(0, 1)).sum() - 8 * np.log(400)
        ),
        atol=2.0,  # PSIS-LOO vs the in-sample log mean density: close, for 8 items
    )
    counts = read_annotations(answers, item="item", rater="rater", label="label")
    dirichlet = ambppl.fit(counts, draws=200, chains=2, random_seed=1)
    table = ambppl.compare({"rater_effects": tree, "dirichlet_categorical": dirichlet})
    assert set(table.index) == {"rater_effects", "dirichlet_categorical"}
    # fit's own log likelihood (given each eta_i) is refused beside a Dirichlet model: its
    # elpd is on another scale (PSIS flagged 543 of 584 face items and ranked it first by
    # 820 nats, benchmarks/loo_models.py)
    conditional = fit.copy()
    conditional["log_likelihood"] = xr.Dataset(
        {"counts": (("chain", "draw", "item"), module.log_likelihood(post, answers))},
        coords={"item": tree["log_likelihood"]["item"].values},
    )
    with pytest.raises(ValueError, match=r"given each item's own parameters.*with_integrated"):
        ambppl.compare({"raw": conditional, "dirichlet_categorical": dirichlet})


@pytest.mark.parametrize(
    ("change", "error", "field"),
    [
        (lambda post, ans, tree: ("not a result", ans, {}), TypeError, "result"),
        (lambda post, ans, tree: (post.drop_vars("sigma_item"), ans, {}), ValueError, "sigma_item"),
        (
            lambda post, ans, tree: (post.assign(sigma_item=post["sigma_item"] * 0), ans, {}),
            ValueError,
            "sigma_item",
        ),
        (
            lambda post, ans, tree: (post, ans.assign(item=["new", *ans["item"].iloc[1:]]), {}),
            ValueError,
            "answers",
        ),
        (lambda post, ans, tree: (post, ans.drop(columns="rater"), {}), TypeError, "answers"),
        (lambda post, ans, tree: (post, ans, {"n_nodes": 1}), ValueError, "n_nodes"),
        (lambda post, ans, tree: (post, ans, {"max_draws": 0}), ValueError, "max_draws"),
        (lambda post, ans, tree: (post, ans, {"df": -1.0}), ValueError, "df"),
        (lambda post, ans, tree: (post, ans, {"seed": 1.5}), ValueError, "seed"),
        (
            lambda post, ans, tree: (tree, ans.iloc[::-1].reset_index(drop=True), {}),
            ValueError,
            "answer",
        ),
    ],
)
def test_bad_input_names_the_field(module, change, error, field):
    rng = np.random.default_rng(16)
    answers = random_answers(rng, n_items=4, k=3, n_raters=2, answers_per_item=(3, 5))
    post, codes = synthetic_posterior(module, rng, answers, draws=5, sir_draws=2000)
    tree = xr.DataTree.from_dict(
        {
            "posterior": post,
            "constant_data": xr.Dataset(
                {
                    "answer_item": ("answer", codes["item"]),
                    "answer_rater": ("answer", codes["rater"]),
                }
            ),
        }
    )
    result, ans, options = change(post, answers, tree)
    with pytest.raises(error, match=field):
        module.integrated_log_likelihood(result, ans, **options)


def test_tree_function_needs_a_tree(module):
    rng = np.random.default_rng(17)
    answers = random_answers(rng, n_items=2, k=2, n_raters=2, answers_per_item=(2, 3))
    post, _ = synthetic_posterior(module, rng, answers, draws=5, sir_draws=2000)
    with pytest.raises(TypeError, match=r"result must be the xarray\.DataTree"):
        module.with_integrated_log_likelihood(post, answers)
