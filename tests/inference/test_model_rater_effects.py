"""The rater_effects catalog model: logp, QMC expectation, edge cases, a small recovery fit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_softmax, softmax
from scipy.stats import halfnorm, norm

import ambppl
from ambppl.data.readers import read_long
from ambppl.inference.catalog import get_model

CATEGORIES = ["pos", "neg", "neutral", "unused", "?"]


@pytest.fixture(scope="module")
def module():
    return get_model("rater_effects").module


def edge_frame() -> pd.DataFrame:
    """Every edge case at once: items rated by different subsets of raters, a rater answering
    one item twice, raters with a single answer, an item answered only "?", a category
    nobody used."""
    rows = [
        ("t1", "ann", "pos"),
        ("t1", "bob", "neg"),
        ("t1", "ann", "pos"),  # ann answers t1 twice
        ("t2", "bob", "?"),
        ("t2", "cid", "?"),  # t2: only can't-solve
        ("t3", "ann", "neutral"),
        ("t3", "dan", "pos"),  # dan: one answer
        ("t3", "eve", "neg"),  # eve: one answer
        ("t4", "cid", "neg"),
        ("t4", "bob", "pos"),
        ("t4", "ann", "?"),
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def edge_answers() -> pd.DataFrame:
    return read_long(edge_frame(), cant_solve="?", categories=CATEGORIES)


def test_info_record_and_catalog():
    entry = get_model("rater_effects")
    assert entry.info["data"] == "long" and entry.info["methods"] == ["nuts"]
    assert set(entry.defaults) == {
        "mu_sd",
        "item_scale",
        "rater_scale",
        "centred",
        "centred_raters",
        "n_nodes",
    }
    assert "rater_effects" in ambppl.list_models().index
    # fit's defaults for this model (benchmarks/rater_effects_real.py: 4 x 1000 draws left
    # the largest R-hat over the ~50,000 stored scalars of jn_product at 1.011)
    assert entry.info["nuts_defaults"] == {"draws": 2000}


class _Sampled(Exception):
    """Raised by the stand-in NUTS route: fit got this far with these settings."""


@pytest.fixture
def nuts_settings(monkeypatch):
    """Replace fit's NUTS route by one that records the job's settings and stops."""
    import importlib

    fit_module = importlib.import_module("ambppl.inference.fitting")
    seen = {}

    def record(job):
        seen.update(draws=job.draws, chains=job.chains, sample_kwargs=dict(job.sample_kwargs))
        raise _Sampled

    monkeypatch.setitem(fit_module._ROUTES, "nuts", record)
    return seen


def _many_raters_frame(n_raters: int = 12) -> pd.DataFrame:
    """Two answers from each of ``n_raters`` raters on three items."""
    rows = [
        (f"t{i % 3}", f"r{r}", "pos" if (i + r) % 2 else "neg")
        for r in range(n_raters)
        for i in range(2)
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def test_fit_takes_the_models_nuts_defaults(nuts_settings):
    # 12 raters: the info record's draws and the samplers' own target_accept
    many = read_long(_many_raters_frame())
    with pytest.raises(_Sampled):
        ambppl.fit(many, "rater_effects")
    assert nuts_settings == {"draws": 2000, "chains": 4, "sample_kwargs": {}}
    # 5 raters (fewer than CENTRED_MIN_RATERS) and one of 4 items with two answers: the
    # model file's nuts_defaults() adds target_accept 0.9 and the sparse design's warm-up
    # and draws (its docstring: measured on the anesthesia data and the sparse design)
    answers = read_long(edge_frame(), cant_solve="?")
    with pytest.raises(_Sampled):
        ambppl.fit(answers, "rater_effects")
    assert nuts_settings == {
        "draws": 3000,
        "chains": 4,
        "sample_kwargs": {"target_accept": 0.9, "tune": 1500},
    }
    # the caller's settings win
    with pytest.raises(_Sampled):
        ambppl.fit(
            answers,
            "rater_effects",
            draws=30,
            chains=2,
            sample_kwargs={"tune": 40, "target_accept": 0.85},
        )
    assert nuts_settings == {
        "draws": 30,
        "chains": 2,
        "sample_kwargs": {"tune": 40, "target_accept": 0.85},
    }


def test_the_few_raters_rule_sits_at_the_centring_threshold(module):
    limit = module.CENTRED_MIN_RATERS
    for n_raters, expected in ((limit - 1, {"target_accept": 0.9}), (limit, {})):
        answers = read_long(_many_raters_frame(n_raters))
        assert module.nuts_defaults(answers) == expected, n_raters


def test_the_sparse_rule_counts_items_with_at_most_two_answers(module):
    # 20 items of 6 answers from 12 raters, then items with one or two answers added: the
    # rule applies from a share of SPARSE_ITEM_SHARE (10 %) such items
    rows = [(f"t{i}", f"r{(i + j) % 12}", "ab"[j % 2]) for i in range(20) for j in range(6)]
    for n_sparse, expected in ((2, {}), (3, module.SPARSE_NUTS)):
        extra = [(f"s{i}", f"r{i}", "a") for i in range(n_sparse)]  # one answer each
        extra[-1:] = [extra[-1], (extra[-1][0], "r11", "b")]  # the last one has two
        frame = pd.DataFrame(rows + extra, columns=["task", "worker", "label"])
        share = n_sparse / (20 + n_sparse)
        assert (share >= module.SPARSE_ITEM_SHARE) == bool(expected), share
        assert module.nuts_defaults(read_long(frame)) == expected, n_sparse


def test_nuts_defaults_refuses_counts_by_name(module):
    # the design rules read the raters: counts hold none, and were met by xarray's KeyError
    counts = ambppl.data.as_counts(read_long(_many_raters_frame(3)))
    with pytest.raises(TypeError, match=r"answers must be a pandas.DataFrame.*but got DataArray"):
        module.nuts_defaults(counts)


def test_a_models_nuts_defaults_function_is_checked(tmp_path, monkeypatch, nuts_settings):
    import shutil

    entry = get_model("rater_effects")
    shutil.copy(entry.path.with_suffix(".json"), tmp_path / "rater_effects.json")
    source = entry.path.read_text(encoding="utf-8")
    line = 'settings["target_accept"] = FEW_RATERS_TARGET_ACCEPT'
    assert source.count(line) == 1
    (tmp_path / "rater_effects.py").write_text(
        source.replace(line, 'settings["target_accept"] = 1.5'), encoding="utf-8"
    )
    monkeypatch.setenv("AMBPPL_MODELS", str(tmp_path))
    with pytest.raises(ValueError, match=r"nuts_defaults\(\).*target_accept.*must be a number in"):
        ambppl.fit(read_long(edge_frame(), cant_solve="?"), "rater_effects")


def test_nuts_defaults_of_an_info_record_apply_and_are_checked(
    tmp_path, monkeypatch, nuts_settings
):
    import json
    import shutil

    entry = get_model("rater_effects")
    shutil.copy(entry.path, tmp_path / "rater_effects.py")

    def write(defaults):
        record = {**entry.info, "nuts_defaults": defaults}
        (tmp_path / "rater_effects.json").write_text(json.dumps(record))

    write({"draws": 7, "chains": 3, "tune": 11, "target_accept": 0.95})
    monkeypatch.setenv("AMBPPL_MODELS", str(tmp_path))
    with pytest.raises(_Sampled):
        ambppl.fit(read_long(edge_frame(), cant_solve="?"), "rater_effects")
    # the record's chains, but target_accept, tune and draws from the file's
    # nuts_defaults() for this 5-rater design with a two-answer item: the rules per design
    # refine the record
    assert nuts_settings == {
        "draws": 3000,
        "chains": 3,
        "sample_kwargs": {"tune": 1500, "target_accept": 0.9},
    }
    for bad, match in (
        ({"draw": 7}, r"nuts_defaults, a mapping with keys from \['draws'"),
        ({"draws": 0}, r"nuts_defaults\['draws'\] must be a whole number"),
        ({"tune": 2.5}, r"nuts_defaults\['tune'\] must be a whole number"),
        ({"target_accept": 1.0}, r"nuts_defaults\['target_accept'\] must be a number in"),
        ({"adaptation": "dense"}, r"nuts_defaults\['adaptation'\] must be one of \['diag'"),
        ([2000], r"nuts_defaults, a mapping"),
    ):
        write(bad)
        with pytest.raises(ValueError, match=match):
            ambppl.list_models(tmp_path)


def test_codes_and_tables_of_edge_cases(module):
    codes = module._codes(edge_answers())
    assert codes["item_ids"] == ["t1", "t2", "t3", "t4"]
    assert codes["rater_ids"] == ["ann", "bob", "cid", "dan", "eve"]
    assert codes["categories"] == CATEGORIES and codes["cant_solve"] == "?"
    item_counts, rater_counts = module._tables(codes)
    assert item_counts.tolist() == [
        [2, 1, 0, 0, 0],
        [0, 0, 0, 0, 2],
        [1, 1, 1, 0, 0],
        [1, 1, 0, 0, 1],
    ]
    assert rater_counts.sum(axis=1).tolist() == [4, 3, 2, 1, 1]
    assert rater_counts[:, 3].sum() == 0  # "unused" has no answers


def test_answers_without_rater_ids_are_refused():
    frame = edge_frame()
    for answers in (
        read_long(frame, rater=None, cant_solve="?"),
        read_long(frame.assign(worker=None), cant_solve="?"),
    ):
        with pytest.raises(ValueError, match=r"rater="):
            get_model("rater_effects").build(answers)
    with pytest.raises(ValueError, match=r"no rater id.*rater="):
        ambppl.fit(read_long(frame, rater=None, cant_solve="?"), "rater_effects")
    partly = frame.astype(object)
    partly.loc[0, "worker"] = None
    with pytest.raises(ValueError, match=r"1 of 11 answers have no rater id"):
        ambppl.fit(read_long(partly, cant_solve="?"), "rater_effects")


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match=r"rater_scale must be a positive finite number"):
        get_model("rater_effects").build(edge_answers(), rater_scale=0.0)
    with pytest.raises(ValueError, match=r"n_nodes must be a positive integer"):
        get_model("rater_effects").build(edge_answers(), n_nodes=0)


def test_a_design_where_every_item_agrees_is_named_before_sampling(unanimous_answers):
    from ambppl.inference.convergence import ConvergenceWarning

    build = get_model("rater_effects").build
    with pytest.warns(ConvergenceWarning, match=r"agree on every one of the 10 items.*count"):
        build(unanimous_answers(10, split_item=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(unanimous_answers(10, split_item=True))  # one split item: no warning
        build(unanimous_answers(9, split_item=False))  # too few items to say


def test_population_q_is_the_softmax_average_over_its_nodes(module):
    rng = np.random.default_rng(3)
    eta, sigma = rng.normal(0, 3, size=(2, 7, 5)), np.abs(rng.normal(1, 0.3, size=(2, 5)))
    nodes = module.qmc_nodes(64, 5)
    direct = softmax(eta[:, :, None, :] + (sigma[:, None, None, :] * nodes), axis=-1).mean(2)
    assert np.allclose(module.population_q(eta, sigma, nodes), direct, rtol=1e-12, atol=1e-15)
    assert np.allclose(module.population_q(eta, sigma, nodes).sum(-1), 1.0)


@pytest.mark.parametrize(("sigma_level", "bound"), [(0.5, 0.003), (1.0, 0.005), (2.0, 0.02)])
def test_qmc_error_is_below_its_stated_bound(module, sigma_level, bound):
    """256 scrambled-Sobol nodes against 2^17 (the reference), module docstring's numbers."""
    rng = np.random.default_rng(int(10 * sigma_level))
    eta = rng.normal(0.0, 2.0, size=(300, 5))
    sigma = sigma_level * rng.uniform(0.5, 1.5, size=5)
    reference = np.zeros_like(eta)
    ref_nodes = norm.ppf(
        __import__("scipy.stats", fromlist=["qmc"])
        .qmc.Sobol(d=5, scramble=True, rng=np.random.default_rng(99))
        .random_base2(17)
    )
    for lo in range(0, len(ref_nodes), 2**13):
        reference += module.population_q(eta, sigma, ref_nodes[lo : lo + 2**13])
    reference /= len(ref_nodes) // 2**13
    error = np.abs(module.population_q(eta, sigma, module.qmc_nodes(256, 5)) - reference).max()
    assert error < bound
    plain = softmax(eta[:, None, :] + sigma * rng.normal(size=(256, 5)), axis=-1).mean(1)
    assert error < np.abs(plain - reference).max()  # QMC beats plain Monte Carlo


def two_class_answers() -> pd.DataFrame:
    """The edge design with two categories (one shared scale per population)."""
    frame = edge_frame()
    frame["label"] = frame["label"].map(lambda v: "pos" if v in ("pos", "?") else "neg")
    return read_long(frame, categories=["pos", "neg"])


def _numpy_logp(answers, new, centred, centred_raters, mu_sd, item_scale, rater_scale):
    """The textbook model's log density (no Jacobians) from scipy, answer by answer, at the
    sampled point ``new`` mapped back to the textbook coordinates, plus the constant and
    ``log det`` terms of that map (module docstring, "Sampling")."""
    from scipy.stats import multivariate_normal

    module = get_model("rater_effects").module
    codes = module._codes(answers)
    k = len(codes["categories"])
    p, n_items, n_raters = k - 1, len(codes["item_ids"]), len(codes["rater_ids"])
    basis = module._zero_sum_basis(k)
    assert np.allclose(basis.T @ basis, np.eye(p)) and np.allclose(basis.sum(axis=0), 0.0)
    if k == 2:  # one shared scale: Q' diag(s^2, s^2) Q = s^2
        s_item, s_rater = new["sigma_item_shared"], new["sigma_rater_shared"]
        prior = halfnorm.logpdf(s_item, scale=item_scale) + halfnorm.logpdf(
            s_rater, scale=rater_scale
        )
        chol_item, chol_rater = np.array([[s_item]]), np.array([[s_rater]])
    else:
        s_item, s_rater = new["sigma_item"], new["sigma_rater"]
        prior = (
            halfnorm.logpdf(s_item, scale=item_scale).sum()
            + halfnorm.logpdf(s_rater, scale=rater_scale).sum()
        )
        chol_item = np.linalg.cholesky(basis.T @ np.diag(s_item**2) @ basis)
        chol_rater = np.linalg.cholesky(basis.T @ np.diag(s_rater**2) @ basis)
    cov_item, cov_rater = chol_item @ chol_item.T, chol_rater @ chol_rater.T
    d = chol_rater @ new["e_bar"]
    g = np.zeros(p) if centred else chol_item @ new["z_bar"]
    mu_w = basis.T @ new["m"] - d - g
    prior += norm.logpdf(mu_w, 0.0, mu_sd).sum()  # mu ~ ZeroSumNormal(mu_sd)
    constant = 0.0
    if centred:  # w_i ~ N(mu_w, Sigma_item); the sampled w is shifted by d (Jacobian 1)
        w = new["w"] - d
        prior += multivariate_normal.logpdf(w, mu_w, cov_item).sum()
    else:  # z_i = z_bar + z_dev_i ~ N(0, I): the split costs the constant p log(N) / 2
        z = new["z_bar"] + new["z"].T
        w = mu_w + z @ chol_item.T
        prior += norm.logpdf(z).sum()
        constant += p * np.log(n_items) / 2
    if centred_raters:  # v_r ~ N(0, Sigma_rater): (v_bar = L e_bar, isometric rest u)
        v = d + module._zero_sum_extend(new["u_rater"])
        prior += multivariate_normal.logpdf(v, np.zeros(p), cov_rater).sum()
        constant += p * np.log(n_raters) / 2 + np.log(np.diag(chol_rater)).sum()
    else:  # e_r = e_bar + e_dev_r ~ N(0, I)
        e = new["e_bar"] + new["e_dev"].T
        v = e @ chol_rater.T
        prior += norm.logpdf(e).sum()
        constant += p * np.log(n_raters) / 2
    eta, b = w @ basis.T, v @ basis.T
    lik = sum(
        log_softmax(eta[i] + b[r])[y]
        for i, r, y in zip(codes["item"], codes["rater"], codes["y"], strict=True)
    )
    return prior + lik + constant, eta, b, mu_w @ basis.T


@pytest.mark.parametrize("centred_raters", [False, True])
@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("two", [False, True], ids=["K5", "K2"])
def test_logp_equals_a_scipy_computation_on_the_edge_cases(two, centred, centred_raters):
    answers = two_class_answers() if two else edge_answers()
    options = {"mu_sd": 1.5, "item_scale": 2.5, "rater_scale": 0.7}
    m = get_model("rater_effects").build(
        answers, centred=centred, centred_raters=centred_raters, **options
    )
    free = sorted(rv.name for rv in m.free_RVs)
    scales = ["sigma_item_shared", "sigma_rater_shared"] if two else ["sigma_item", "sigma_rater"]
    items = ["w"] if centred else ["z", "z_bar"]
    raters = ["u_rater"] if centred_raters else ["e_dev"]
    assert free == sorted(["e_bar", "m", *scales, *items, *raters])
    rng = np.random.default_rng(7)
    start = m.initial_point()
    point = {v.name: rng.normal(0, 1.5, size=np.shape(start[v.name])) for v in m.value_vars}
    logp = m.compile_logp(jacobian=False)(point)
    # constrained values and deterministics as functions of the value variables
    as_values = {v.name: v for v in m.unobserved_value_vars}
    names = [*free, "mu", "eta", "b", "q", "q_typical", "sigma_item", "sigma_rater"]
    values = m.compile_fn(
        [as_values[n] for n in names], inputs=m.value_vars, on_unused_input="ignore", point_fn=False
    )(*point.values())
    new = dict(zip(names, values, strict=True))
    assert abs(new["m"].sum()) < 1e-12
    if not centred:
        assert np.allclose(new["z"].sum(axis=1), 0.0)  # zero-sum over items
    if not centred_raters:
        assert np.allclose(new["e_dev"].sum(axis=1), 0.0)  # zero-sum over raters
    expected, eta, b, mu = _numpy_logp(answers, new, centred, centred_raters, **options)
    # rel 1e-8: PyMC's ZeroSumNormal normalizing constant differs from scipy's in the 8th
    # digit (the same offset at every point); a wrong density term is O(1)
    assert logp == pytest.approx(expected, rel=1e-8)
    # the deterministics are the textbook quantities: zero-sum effects, q from the shared
    # QMC nodes, the softmax of eta; two categories: both scales equal the shared one
    assert np.allclose(new["mu"], mu) and np.allclose(new["eta"], eta)
    assert np.allclose(new["b"], b)
    assert np.allclose(new["eta"].sum(1), 0) and np.allclose(new["b"].sum(1), 0)
    module = get_model("rater_effects").module
    k = len(new["mu"])
    nodes = module.qmc_nodes(256, k)
    assert np.allclose(new["q"], module.population_q(eta, new["sigma_rater"], nodes))
    assert np.allclose(new["q_typical"], softmax(eta, axis=1))
    if two:
        assert np.allclose(new["sigma_item"], new["sigma_item_shared"])
        assert np.allclose(new["sigma_rater"], new["sigma_rater_shared"])


def test_zero_sum_extend_splits_iid_rows_exactly(module):
    # n iid rows N(0, S) = their mean and an orthonormal rest: the map is an isometry onto
    # the rows summing to zero (Helmert-like), so iid N(0, S) inputs give the deviations.
    rng = np.random.default_rng(4)
    u = rng.normal(size=(6, 3))
    out = module._zero_sum_extend(u)
    assert out.shape == (7, 3) and np.allclose(out.sum(axis=0), 0.0)
    basis = module._zero_sum_extend(np.eye(6))  # 7 x 6: its columns are orthonormal
    assert np.allclose(basis.T @ basis, np.eye(6)) and np.allclose(out, basis @ u)


def test_log_likelihood_hook_sums_each_items_answers(module):
    import xarray as xr

    answers = edge_answers()
    rng = np.random.default_rng(1)
    eta, b = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 5, 5))
    post = xr.Dataset(
        {
            "eta": (("chain", "draw", "item", "category"), eta),
            "b": (("chain", "draw", "rater", "category"), b),
        }
    )
    ll = module.log_likelihood(post, answers)
    codes = module._codes(answers)
    expected = np.zeros((2, 3, 4))
    for i, r, y in zip(codes["item"], codes["rater"], codes["y"], strict=True):
        expected[..., i] += log_softmax(eta[..., i, :] + b[..., r, :], axis=-1)[..., y]
    assert np.allclose(ll, expected)


def simulate(n_items=60, n_raters=20, per_item=8, seed=0):
    """Answers of a rater pool in which raters 0-3 say "can't solve" far more often."""
    rng = np.random.default_rng(seed)
    k = 4
    mu = np.array([0.6, 0.2, 0.0, -0.8])
    eta = mu + rng.normal(0, 1.0, size=(n_items, k))
    b = rng.normal(0, 0.3, size=(n_raters, k))
    b[:4, -1] += 2.5  # the planted can't-solve bias
    items = np.repeat(np.arange(n_items), per_item)
    raters = np.concatenate([rng.choice(n_raters, per_item, replace=False) for _ in range(n_items)])
    p = softmax(eta[items] + b[raters], axis=1)
    y = (p.cumsum(1) > rng.random((len(p), 1))).argmax(1)
    labels = np.array(["a", "b", "c", "?"])[y]
    return pd.DataFrame({"task": items, "worker": [f"w{r}" for r in raters], "label": labels})


@pytest.mark.slow
def test_small_fit_recovers_planted_cant_solve_bias():
    frame = simulate()
    with warnings.catch_warnings():
        # a short fit: the convergence standard is the benchmark's job
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(
            read_long(frame, cant_solve="?"),
            "rater_effects",
            draws=300,
            chains=2,
            random_seed=3,
            sample_kwargs={"tune": 300},
        )
    post = result["posterior"]
    b_cs = post["b"].sel(category="?").mean(("chain", "draw"))
    planted = b_cs.sel(rater=[f"w{r}" for r in range(4)])
    others = b_cs.drop_sel(rater=[f"w{r}" for r in range(4)])
    assert float(planted.min()) > float(others.max()) - 0.5
    assert float(planted.mean()) > float(others.mean()) + 1.5
    assert int(result["sample_stats"]["diverging"].sum()) == 0
    assert result["constant_data"]["rater_answers"].sum() == len(frame)
    assert list(post["q"].dims) == ["chain", "draw", "item", "category"]
    assert np.allclose(post["q"].sum("category"), 1.0)
    # the population distribution is flatter than the typical rater's
    assert float((post["amb"] - post["amb_typical"]).mean()) > 0
    ll = result["log_likelihood"]["counts"]
    assert ll.shape == (2, 300, 60) and np.isfinite(ll).all()
    table = ambppl.summarize(result)
    assert len(table) == 60 and table["mean"].between(0, 1).all()
    assert {"n_answers", "hdi_lower", "r_hat"} <= set(table.columns)
    # One row per rater: the planted over-users have the largest can't-solve odds ratios
    # and are the only ones flagged (the rule is the HDI of the odds ratio above 1).
    raters = ambppl.summarize(result, level="rater")
    assert len(raters) == post.sizes["rater"]
    top = raters.sort_values("cant_solve_odds_ratio", ascending=False).index[:4]
    assert set(top) == {f"w{r}" for r in range(4)}
    flagged = set(raters.index[raters["overuses_cant_solve"]])
    assert flagged and flagged <= {f"w{r}" for r in range(4)}
    assert (raters["n_answers"].sum()) == len(frame)
    # The report gains its rater section with the over-users highlighted.
    from ambppl.report import render_report

    page = render_report(result, top=3, random_seed=1)
    assert 'id="raters"' in page and "over-uses" in page


# ---------------------------------------------------------------------------------------
# Unbalanced designs: one small fit of the edge cases, one test per documented behaviour


@pytest.fixture(scope="module")
def edge_fit():
    with warnings.catch_warnings():
        # four items: the convergence standard is not the point here
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.fit(
            edge_answers(),
            "rater_effects",
            draws=500,
            chains=2,
            random_seed=11,
            sample_kwargs={"tune": 500},
        )


def _post_mean(result, name):
    return result["posterior"][name].mean(("chain", "draw"))


def test_edge_repeated_answers_each_count(edge_fit):
    answers = edge_fit["constant_data"]["rater_answers"].to_series()
    assert answers["ann"] == 4  # t1 twice, t3, t4
    counts = edge_fit["observed_data"]["counts"]
    assert int(counts.sel(item="t1", category="pos")) == 2


def test_edge_single_answer_raters_are_not_over_users(edge_fit):
    table = ambppl.summarize(edge_fit, level="rater")
    for rater in ("dan", "eve"):
        row = table.loc[rater]
        assert row["n_answers"] == 1
        assert row["cant_solve_or_lower"] < 1.0 < row["cant_solve_or_upper"]
        assert not row["overuses_cant_solve"]


def test_edge_item_answered_only_cant_solve(edge_fit):
    q_cs = _post_mean(edge_fit, "q").sel(category="?")
    assert q_cs.idxmax("item").item() == "t2"
    assert float(q_cs.sel(item="t2")) > 1 / len(CATEGORIES)


def test_edge_unused_category_goes_low_and_stays_finite(edge_fit):
    q = _post_mean(edge_fit, "q")
    mu = _post_mean(edge_fit, "mu")
    assert np.isfinite(edge_fit["posterior"]["q"].values).all()
    assert mu.idxmin("category").item() == "unused"
    for item in q["item"].values:  # no item's q favours the category nobody used
        assert float(q.sel(item=item, category="unused")) < float(q.sel(item=item).max())


def test_the_sampled_scales_of_two_categories_get_a_log_prior():
    """With two categories the sampled scales are ``sigma_*_shared`` (``sigma_item`` a copy):
    fit wrote no ``log_prior`` group, and hyperprior_sensitivity said "exact and
    empirical_bayes fits have no hyperprior to scale" of a NUTS fit (audit). The densities
    are checked against scipy's half-normal (the model's prior of the scales); rtol 1e-8:
    the draws went through PyMC's log transform and back."""
    import warnings

    from scipy import stats

    with warnings.catch_warnings():  # 2 x 40 draws: too few for the convergence standard
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(
            two_class_answers(),
            "rater_effects",
            draws=40,
            chains=2,
            random_seed=3,
            var_names=["amb"],
            sample_kwargs={"tune": 40},
            progressbar=False,
        )
    names = ["sigma_item_shared", "sigma_rater_shared"]
    assert sorted(result["log_prior"].data_vars) == names
    scale = {"item": 2.0, "rater": 1.0}  # the info record's item_scale and rater_scale
    for name in names:
        draws = result["posterior"][name].values
        want = stats.halfnorm(scale=scale[name.split("_")[1]]).logpdf(draws)
        np.testing.assert_allclose(result["log_prior"][name].values, want, rtol=1e-8)
    table = ambppl.hyperprior_sensitivity(result)
    assert set(table.index) == set(names)
