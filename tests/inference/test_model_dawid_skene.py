"""The dawid_skene catalog model: logp against scipy, the summed-out classes, simulation,
recovery of planted labels and rater accuracies, can't-solve and two classes."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import log_softmax, logsumexp, softmax
from scipy.stats import dirichlet, gamma, halfnorm

import ambppl
from ambppl.data.readers import read_long
from ambppl.inference.catalog import get_model

CATEGORIES = ["pos", "neg", "neutral", "unused", "?"]


@pytest.fixture(scope="module")
def module():
    return get_model("dawid_skene").module


def edge_answers() -> pd.DataFrame:
    """Items rated by different subsets, a repeated answer, single-answer raters, an item
    answered only "?", a category nobody used."""
    rows = [
        ("t1", "ann", "pos"),
        ("t1", "bob", "neg"),
        ("t1", "ann", "pos"),
        ("t2", "bob", "?"),
        ("t2", "cid", "?"),
        ("t3", "ann", "neutral"),
        ("t3", "dan", "pos"),
        ("t3", "eve", "neg"),
        ("t4", "cid", "neg"),
        ("t4", "bob", "pos"),
        ("t4", "ann", "?"),
    ]
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return read_long(frame, cant_solve="?", categories=CATEGORIES)


def two_class_answers() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "task": [1, 1, 1, 2, 2, 3, 3, 3],
            "worker": ["a", "b", "c", "a", "c", "b", "c", "d"],
            "label": ["y", "y", "n", "n", "n", "y", "n", "n"],
        }
    )
    return read_long(frame)


def test_info_record_and_catalog():
    entry = get_model("dawid_skene")
    assert entry.info["data"] == "long" and entry.info["methods"][0] == "nuts"
    assert set(entry.defaults) == {
        "pi_prior",
        "diag_prior",
        "beta_sd",
        "rater_scale",
        "n_nodes",
        "centred",
    }


def test_population_logits_put_the_right_answer_first(module):
    rng = np.random.default_rng(0)
    off, gap = rng.normal(size=(3, 4, 3)), rng.gamma(2.0, 1.0, size=(3, 4))
    beta = module.population_logits(off, gap, [0, 1, 2, 3], 4)
    assert np.allclose(beta.sum(-1), 0.0)
    assert (beta.argmax(-1) == np.arange(4)).all()  # the typical rater: plurality-correct
    srt = np.sort(beta, axis=-1)
    assert np.allclose(srt[..., -1] - srt[..., -2], gap)
    assert "dawid_skene" in ambppl.list_models().index


def test_bad_input_is_refused(module):
    with pytest.raises(ValueError, match="diag_prior must be a positive finite number"):
        get_model("dawid_skene").build(two_class_answers(), diag_prior=-1.0)
    with pytest.raises(ValueError, match="centred must be True, False or None"):
        get_model("dawid_skene").build(two_class_answers(), centred="yes")
    frame = pd.DataFrame({"task": [1, 2], "worker": ["a", None], "label": ["x", "y"]})
    with pytest.raises(ValueError, match="rater="):
        module._codes(read_long(frame))
    one = read_long(
        pd.DataFrame({"task": [1, 2], "worker": ["a", "b"], "label": ["x", "?"]}), cant_solve="?"
    )
    with pytest.raises(ValueError, match="at least 2 categories besides can't-solve"):
        module._codes(one)


def _scipy_logp(answers, values, pi_prior, diag_prior, beta_sd, rater_scale):
    """The model's log density (no Jacobians) written out term by term, items one by one."""
    codes = get_model("dawid_skene").module._codes(answers)
    cats, proper = codes["categories"], codes["proper"]
    c, k = len(cats), len(proper)
    pi, gap, sigma, e = (values[n] for n in ("pi", "diag_gap", "sigma_rater", "e"))
    off = values.get("beta_off", np.zeros((k, 1)))

    def zsn(x, s, n):  # normal density on the zero-sum subspace, per vector of length n
        x = np.asarray(x).reshape(-1, n)
        return float(np.sum(-0.5 * (x**2).sum(1) / s**2 - (n - 1) / 2 * np.log(2 * np.pi * s**2)))

    prior = (
        dirichlet.logpdf(pi, np.full(k, pi_prior))
        + gamma.logpdf(gap, 2, scale=diag_prior / 2).sum()
    )
    if c >= 3:
        prior += zsn(off, beta_sd, c - 1)
    # e: per class a zero-sum R x C matrix, (R - 1)(C - 1) degrees of freedom
    r = e.shape[1]
    prior += halfnorm.logpdf(sigma, scale=rater_scale).sum()
    prior += float(-0.5 * (e**2).sum() - k * (r - 1) * (c - 1) / 2 * np.log(2 * np.pi))
    e = np.swapaxes(e, 0, 1)
    beta = np.zeros((k, c))
    for j, col in enumerate(proper):  # the right answer above the largest wrong one
        wrong = [x for x in range(c) if x != col]
        beta[j, wrong] = off[j]
        beta[j, col] = off[j].max() + gap[j]
    beta -= beta.mean(1, keepdims=True)
    log_theta = log_softmax(beta[None] + sigma[None, :, None] * e, axis=-1)
    lik, label_prob = 0.0, []
    for i in range(len(codes["item_ids"])):
        mine = codes["item"] == i
        terms = np.log(pi).copy()
        for r, y in zip(codes["rater"][mine], codes["y"][mine], strict=True):
            terms += log_theta[r, :, y]
        lik += logsumexp(terms)
        label_prob.append(softmax(terms))
    return prior + lik, np.exp(log_theta), np.array(label_prob), beta


@pytest.mark.parametrize("two", [False, True], ids=["cs", "K2"])
def test_logp_equals_a_scipy_computation(two, module):
    answers = two_class_answers() if two else edge_answers()
    options = {"pi_prior": 1.3, "diag_prior": 1.7, "beta_sd": 1.2, "rater_scale": 0.8}
    m = get_model("dawid_skene").build(answers, **options)
    free = sorted(rv.name for rv in m.free_RVs)
    # the centred program builds, its free variable the scaled deviations
    centred = get_model("dawid_skene").build(answers, centred=True, **options)
    assert "rater_dev" in {rv.name for rv in centred.free_RVs}
    assert free == (
        ["diag_gap", "e", "pi", "sigma_rater"]
        if two
        else ["beta_off", "diag_gap", "e", "pi", "sigma_rater"]
    )
    rng = np.random.default_rng(7)
    start = m.initial_point()
    point = {v.name: rng.normal(0, 1.0, size=np.shape(start[v.name])) for v in m.value_vars}
    logp = m.compile_logp(jacobian=False)(point)
    as_values = {v.name: v for v in m.unobserved_value_vars}
    names = [
        *free,
        "beta",
        "confusion",
        "label_prob",
        "label_entropy",
        "q",
        "accuracy",
        "population_confusion",
    ]
    if not two:
        names.append("cant_solve_rate")
    values = m.compile_fn(
        [as_values[n] for n in names], inputs=m.value_vars, on_unused_input="ignore", point_fn=False
    )(*point.values())
    new = dict(zip(names, values, strict=True))
    expected, theta, label_prob, beta = _scipy_logp(answers, new, **options)
    assert logp == pytest.approx(expected, rel=1e-8)
    assert np.allclose(new["confusion"], theta) and np.allclose(new["beta"], beta)
    assert np.allclose(new["label_prob"], label_prob)
    assert np.allclose(new["beta"].sum(1), 0.0) and np.allclose(new["e"].sum(-1), 0.0)
    assert np.allclose(new["e"].sum(1), 0.0)  # the typical rater is the raters' mean
    k = label_prob.shape[1]
    entropy = -(label_prob * np.log(label_prob)).sum(1) / np.log(k)
    assert np.allclose(new["label_entropy"], entropy)
    pop = module.population_confusion(
        beta, new["sigma_rater"], module.qmc_nodes(256, beta.shape[1])
    )
    assert np.allclose(new["population_confusion"], pop)
    assert np.allclose(new["q"], label_prob @ pop)
    proper = module._codes(answers)["proper"]
    diag = theta[:, np.arange(k), proper]
    assert np.allclose(new["accuracy"], diag @ new["pi"])
    if not two:
        assert np.allclose(new["cant_solve_rate"], theta[:, :, -1] @ new["pi"])
        # can't-solve is an answer, not a class
        assert list(m.coords["class"]) == ["pos", "neg", "neutral", "unused"]


def test_log_likelihood_hook_sums_the_classes_out(module):
    import xarray as xr

    answers = edge_answers()
    codes = module._codes(answers)
    rng = np.random.default_rng(1)
    pi = rng.dirichlet(np.ones(4), size=(2, 3))
    theta = rng.dirichlet(np.ones(5), size=(2, 3, 5, 4))
    post = xr.Dataset(
        {
            "pi": (("chain", "draw", "class"), pi),
            "confusion": (("chain", "draw", "rater", "class", "category"), theta),
        }
    )
    ll = module.log_likelihood(post, answers)
    expected = np.zeros((2, 3, 4))
    for c in range(2):
        for d in range(3):
            for i in range(4):
                mine = codes["item"] == i
                p = pi[c, d].copy()
                for r, y in zip(codes["rater"][mine], codes["y"][mine], strict=True):
                    p = p * theta[c, d, r, :, y]
                expected[c, d, i] = np.log(p.sum())
    assert np.allclose(ll, expected, rtol=1e-12)


def test_simulate_answers_follows_the_confusion_rows(module):
    rng = np.random.default_rng(3)
    theta = np.array([[[0.8, 0.15, 0.05], [0.1, 0.7, 0.2]]])  # one rater, 2 classes, cs
    n = 40000
    item = np.arange(n)
    y = module.simulate_answers([0.3, 0.7], theta, item, np.zeros(n, dtype=int), rng=rng)
    freq = np.bincount(y, minlength=3) / n
    expected = 0.3 * theta[0, 0] + 0.7 * theta[0, 1]  # the answer law, classes summed out
    # multinomial frequencies: 4 binomial standard errors each (false alarm < 2e-4 in all)
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.allclose(freq, expected, rtol=0, atol=4 * se)
    batch = module.simulate_answers(
        np.full((5, 2), 0.5),
        np.broadcast_to(theta, (5, 1, 2, 3)),
        item[:10],
        np.zeros(10, dtype=int),
        rng=rng,
    )
    assert batch.shape == (5, 10)


def planted(n_items=150, n_raters=15, per_item=5, k=3, cs=False, seed=0):
    """Answers from planted prevalences and confusion matrices (with the true classes)."""
    rng = np.random.default_rng(seed)
    pi = rng.dirichlet(np.full(k, 5.0))
    acc = rng.uniform(0.5, 0.9, n_raters)
    c = k + cs
    theta = np.empty((n_raters, k, c))
    for r in range(n_raters):
        rest = rng.dirichlet(np.ones(c - 1), size=k) * (1 - acc[r])
        for j in range(k):
            theta[r, j] = np.insert(rest[j], j, acc[r])
    item = np.repeat(np.arange(n_items), per_item)
    rater = np.concatenate([rng.choice(n_raters, per_item, replace=False) for _ in range(n_items)])
    z = rng.choice(k, size=n_items, p=pi)
    u = rng.random((len(item), 1))
    y = np.minimum((u > np.cumsum(theta[rater, z[item]], axis=1)).sum(1), c - 1)
    names = [f"c{j}" for j in range(k)] + (["?"] if cs else [])
    frame = pd.DataFrame(
        {"task": item, "worker": [f"w{r}" for r in rater], "label": np.array(names)[y]}
    )
    # the Bayes rate: each item's class posterior under the planted parameters
    log_terms = np.log(pi)[None].repeat(n_items, 0)
    np.add.at(log_terms, item, np.log(theta[rater, :, y]))
    bayes = softmax(log_terms, axis=1).argmax(1) == z
    answers = read_long(frame, cant_solve="?" if cs else None, categories=names)
    true_acc = theta[:, np.arange(k), np.arange(k)] @ pi
    return answers, z, bayes.mean(), true_acc, names


def _fit(answers, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.fit(
            answers,
            "dawid_skene",
            random_seed=5,
            draws=500,
            chains=2,
            sample_kwargs={"tune": 500},
            **kwargs,
        )


def _labels(result, names):
    prob = result["posterior"]["label_prob"].mean(("chain", "draw"))
    return prob.values.argmax(1), prob["item"].values


@pytest.mark.slow
def test_recovery_of_labels_and_rater_accuracies():
    answers, z, bayes, true_acc, names = planted()
    result = _fit(answers)
    labels, items = _labels(result, names)
    recovered = (labels == z[items.astype(int)]).mean()
    assert recovered >= bayes - 0.04  # close to the Bayes rate of the planted parameters
    acc = result["posterior"]["accuracy"]
    import arviz as az

    hdi = az.hdi(acc, prob=0.94, dim=["chain", "draw"])
    raters = [int(r[1:]) for r in acc["rater"].values]
    inside = (hdi.sel(ci_bound="lower").values <= true_acc[raters]) & (
        true_acc[raters] <= hdi.sel(ci_bound="upper").values
    )
    n = len(raters)
    assert inside.mean() >= 0.94 - 3 * np.sqrt(0.94 * 0.06 / n)
    assert int(result["sample_stats"]["diverging"].sum()) == 0
    ll = result["log_likelihood"]["counts"]
    assert ll.shape == (2, 500, 150) and np.isfinite(ll).all()


@pytest.mark.slow
def test_cant_solve_and_two_classes_fit():
    answers, z, bayes, _true_acc, names = planted(n_items=80, n_raters=10, k=2, cs=True, seed=2)
    result = _fit(answers)
    post = result["posterior"]
    assert list(post["label_prob"]["class"].values) == ["c0", "c1"]
    assert list(post["q"]["category"].values) == ["c0", "c1", "?"]
    assert np.allclose(post["q"].sum("category"), 1.0)
    assert "cant_solve_rate" in post and post["cant_solve_rate"].dims[-1] == "rater"
    labels, items = _labels(result, names)
    assert (labels == z[items.astype(int)]).mean() >= bayes - 0.06
    assert {"amb", "amb_modified", "entropy", "label_entropy"} <= set(post.data_vars)
    raters = ambppl.summarize(result, level="rater")
    assert raters["cant_solve_rate"].between(0, 1).all()
    assert (raters["cant_solve_lower"] <= raters["cant_solve_rate"]).all()
    table = ambppl.summarize(result)
    assert set(table["label"]) <= {"c0", "c1"} and "r_hat" in table.columns


@pytest.mark.slow
def test_laplace_route_same_layout_and_labels():
    answers, z, bayes, _true_acc, names = planted(seed=1)
    result = ambppl.fit(
        answers, "dawid_skene", method="laplace", random_seed=2, draws=100, chains=2
    )
    assert result.attrs["method"] == "laplace" and "laplace" in result.attrs["approximation"]
    assert result.attrs["optimizer_converged"] == 1 and result.attrs["hessian_clipped"] == 0
    assert "sample_stats" not in result.children
    assert {"posterior", "observed_data", "constant_data", "log_likelihood"} <= set(result.children)
    post = result["posterior"]
    assert post["label_prob"].dims == ("chain", "draw", "item", "class")
    assert post.sizes["chain"] == 2 and post.sizes["draw"] == 100
    labels, items = _labels(result, names)
    right = (labels == z[items.astype(int)]).mean()
    # the mode under-pools the raters (sigma_rater 2.5-2.7 at the joint mode, 0.3-0.8 in
    # NUTS's posterior mean), yet labels as NUTS does: 0.913 both, the Bayes rate 0.96,
    # majority vote 0.873
    counts = result["observed_data"]["counts"].values
    majority = (counts.argmax(1) == z[items.astype(int)]).mean()
    assert right >= bayes - 0.07 and right >= majority
    # summaries: the item table gains the class posterior, the rater table the accuracies
    table = ambppl.summarize(result)
    assert {"label", "label_prob", "label_entropy"} <= set(table.columns)
    assert "r_hat" not in table.columns  # independent draws
    assert table["label_prob"].between(1 / 3, 1).all()
    raters = ambppl.summarize(result, level="rater")
    from ambppl.analysis.raters import CLASS_RATER_COLUMNS

    assert tuple(raters.columns) == CLASS_RATER_COLUMNS
    assert raters["n_answers"].sum() == len(answers)
    assert (raters["accuracy_lower"] <= raters["accuracy"]).all()
    assert (raters["accuracy"] <= raters["accuracy_upper"]).all()
    assert raters["cant_solve_rate"].isna().all()
    # the mode is the same model's: var_names keeps what log_likelihood needs
    small = ambppl.fit(
        answers,
        "dawid_skene",
        method="laplace",
        random_seed=2,
        draws=20,
        chains=1,
        var_names=["amb"],
    )
    assert {"amb", "label_prob", "confusion", "pi"} <= set(small["posterior"].data_vars)
    assert "q" not in small["posterior"].data_vars


# The posterior mode in numpy (method "map")


@pytest.mark.parametrize(("k", "cs"), [(3, True), (2, False), (3, False)])
def test_numpy_log_posterior_is_the_programs(module, k, cs):
    """The numpy log posterior equals PyMC's compiled one (Jacobians included) up to one
    constant, at random points of the same unconstrained coordinates; its gradient matches
    central differences of itself."""
    from pymc.blocking import DictToArrayBijection, RaveledVars
    from scipy.optimize import approx_fprime

    answers, *_ = planted(n_items=40, n_raters=6, k=k, cs=cs, seed=3)
    target = module._LogPosterior(
        module._codes(answers),
        {"pi_prior": 1.3, "diag_prior": 2.5, "beta_sd": 1.2, "rater_scale": 0.8},
    )
    pm_model = module.model(answers, pi_prior=1.3, diag_prior=2.5, beta_sd=1.2, rater_scale=0.8)
    logp = pm_model.compile_logp(jacobian=True)
    start = pm_model.initial_point()
    info = DictToArrayBijection.map({v.name: start[v.name] for v in pm_model.value_vars})
    assert info.data.size == target.size
    rng = np.random.default_rng(4)
    gaps = []
    for _ in range(3):
        x = rng.normal(scale=0.7, size=target.size)
        point = DictToArrayBijection.rmap(RaveledVars(x, info.point_map_info))
        gaps.append(float(logp(point)) + target(x)[0])
        # the gradient: central differences (step 1e-6, error ~1e-6 x the curvature)
        numeric = approx_fprime(x, lambda v: target(v)[0], 1e-6)
        scale = max(1.0, np.abs(numeric).max())
        assert np.abs(numeric - target(x)[1]).max() < 1e-4 * scale
    assert np.ptp(gaps) < 1e-9 * max(1.0, abs(gaps[0]))  # one constant: the same density


def test_posterior_mode_is_the_programs_mode(module):
    """The numpy mode equals the mode PyMC's L-BFGS finds on the compiled program (the
    generic route of method='map'), and fit(method='map') returns it as one point."""
    from ambppl.inference.laplace import mode_point

    answers, z, _bayes, _acc, names = planted(n_items=60, n_raters=8, seed=5)
    fast, constant, info = module.posterior_mode(answers)
    pm_model = module.model(answers)
    slow, _, slow_info = mode_point(pm_model)
    assert info["optimizer_converged"] and slow_info["optimizer_converged"]
    # both stop when f falls by less than 2.2e-9 relative (L-BFGS-B's default ftol, f ~ 300
    # here): the numpy mode is at least as high on the program's own log density ...
    defaults = {"pi_prior": 1.0, "diag_prior": 2.0, "beta_sd": 1.5, "rater_scale": 1.0}
    target = module._LogPosterior(module._codes(answers), defaults)
    logp = pm_model.compile_logp(jacobian=True)
    start = pm_model.initial_point()
    constant_gap = float(logp(start)) + target(_raveled(pm_model, start))[0]
    fast_logp = info["mode_logp"] + constant_gap
    assert fast_logp >= slow_info["mode_logp"] - 1e-6 * abs(fast_logp)
    # ... and the two points agree to what that tolerance leaves in flat directions (measured
    # at most 7e-4 on this design, in e)
    for name in ("pi", "diag_gap", "sigma_rater", "e", "accuracy", "label_prob", "amb"):
        assert np.allclose(fast[name].values, slow[name].values, atol=3e-3), name
    assert set(slow.data_vars) == set(fast.data_vars)
    for name in slow.data_vars:
        assert fast[name].dims == slow[name].dims, name
    assert set(constant.data_vars) == {
        "is_cant_solve",
        "rater_answers",
        "answer_item",
        "answer_rater",
    }
    result = ambppl.fit(answers, "dawid_skene", method="map")
    assert result.attrs["method"] == "map" and "one point" in result.attrs["approximation"]
    post = result["posterior"]
    assert post.sizes["chain"] == 1 and post.sizes["draw"] == 1
    assert np.allclose(post["label_prob"].values, fast["label_prob"].values)
    assert result["log_likelihood"]["counts"].shape == (1, 1, 60)
    labels, items = _labels(result, names)
    assert (labels == z[items.astype(int)]).mean() > 0.8
    table = ambppl.summarize(result)
    assert {"label", "label_prob", "label_entropy"} <= set(table.columns)
    assert np.allclose(table["mean"], fast["amb"].values.ravel())
    # a point: no spread, no interval, no probability (NaN, not a zero-width interval)
    assert table[["sd", "hdi_lower", "hdi_upper", "p_above"]].isna().all().all()
    assert "r_hat" not in table.columns
    with pytest.raises(ValueError, match=r"one point.*no posterior probabilities"):
        ambppl.select(table, "P(amb > 0.4) > 0.9")
    assert len(ambppl.select(table, "mean > 0.0")) == (table["mean"] > 0).sum()
    raters = ambppl.summarize(result, level="rater")
    assert np.allclose(raters["accuracy"], fast["accuracy"].values.ravel())
    assert raters[["accuracy_lower", "accuracy_upper"]].isna().all().all()


@pytest.mark.slow
def test_laplace_centres_on_the_map_mode(module):
    """laplace starts its L-BFGS from the mode map returns, so both routes land on the same
    local mode. On this planted crowd (60 items x 3 answers, 10 raters, 3 classes and
    can't-solve) L-BFGS from PyMC's initial point, laplace's old start, finds another mode,
    2.4 nats higher. mode_logp is PyMC's log density at the mode for laplace and the numpy
    one, less the program's constant, for map."""
    from pymc.initial_point import make_initial_point_fn

    from ambppl.inference.laplace import mode_point

    answers, *_ = planted(n_items=60, n_raters=10, per_item=3, k=3, cs=True, seed=2)
    point = ambppl.fit(answers, "dawid_skene", method="map")
    laplace = ambppl.fit(
        answers,
        "dawid_skene",
        method="laplace",
        draws=10,
        chains=1,
        random_seed=0,
        var_names=["amb"],
        log_likelihood=False,
    )
    assert laplace.attrs["optimizer_converged"] == 1
    pm_model = module.model(answers)
    logp = pm_model.compile_logp(jacobian=True)
    free = {
        rv.name: point.posterior[rv.name].values[0, 0]
        for rv in pm_model.free_RVs
        if rv.name in point.posterior
    }
    at_map = make_initial_point_fn(model=pm_model, overrides=free, jitter_rvs=set())(0)
    at_map_logp = float(logp(at_map))
    # the same mode: laplace's L-BFGS (gtol 1e-8) only polishes map's (gtol 1e-6)
    assert laplace.attrs["mode_logp"] == pytest.approx(at_map_logp, abs=1e-3)
    # the design has another mode, which PyMC's initial point leads to
    _, _, elsewhere = mode_point(pm_model)
    assert elsewhere["mode_logp"] > at_map_logp + 1.0
    # map's mode_logp leaves out the program's constant (the same at every point)
    defaults = {"pi_prior": 1.0, "diag_prior": 2.0, "beta_sd": 1.5, "rater_scale": 1.0}
    target = module._LogPosterior(module._codes(answers), defaults)
    start = pm_model.initial_point()
    constant = float(logp(start)) + target(_raveled(pm_model, start))[0]
    assert abs(constant) > 1.0
    assert point.attrs["mode_logp"] + constant == pytest.approx(at_map_logp, abs=1e-6)
    # centred=True, whose mode posterior_mode does not compute: PyMC's initial point
    centred = ambppl.fit(
        two_class_answers(), "dawid_skene", method="laplace", centred=True, draws=5, chains=1
    )
    assert centred.attrs["optimizer_converged"] == 1


def _raveled(pm_model, point):
    from pymc.blocking import DictToArrayBijection

    return DictToArrayBijection.map({v.name: point[v.name] for v in pm_model.value_vars}).data


def test_map_refuses_draws_and_the_centred_coordinates(module):
    answers = two_class_answers()
    with pytest.raises(ValueError, match=r"returns one point.*method='laplace'"):
        ambppl.fit(answers, "dawid_skene", method="map", draws=100)
    with pytest.raises(ValueError, match="chains=2"):
        ambppl.fit(answers, "dawid_skene", method="map", chains=2)
    with pytest.raises(ValueError, match="centred must be None or False"):
        ambppl.fit(answers, "dawid_skene", method="map", centred=True)
    result = ambppl.fit(answers, "dawid_skene", method="map", draws=1, chains=1)
    assert result["posterior"]["label_prob"].shape == (1, 1, 3, 2)
    with pytest.raises(ValueError, match=r"one point.*needs posterior draws"):
        ambppl.loo(result)


def test_nuts_defaults_refuses_counts_by_name(module):
    # the design rules read the raters: counts hold none
    answers = read_long(
        pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"], "label": ["x", "y", "x"]})
    )
    with pytest.raises(TypeError, match=r"answers must be a pandas.DataFrame.*but got DataArray"):
        module.nuts_defaults(ambppl.data.as_counts(answers))


class _Sampled(Exception):
    """Raised by the recording route instead of sampling."""


def test_nuts_defaults_follow_the_design(module, monkeypatch):
    """nuts_defaults(): target_accept 0.9 below FEW_RATERS raters (the anesthesia data's
    divergences), 3000 draws where the median item has at most FEW_ANSWERS answers (the
    product data) and then nutpie's draw-variance mass matrix where a rater gives at least
    BUSY_RATER_SHARE of the answers (the product data, not the three_answers design),
    nothing else (its docstring's runs); fit applies them and the caller's settings win."""
    import importlib

    fit_module = importlib.import_module("ambppl.inference.fitting")
    seen = {}

    def record(job):
        seen.update(sample_kwargs=dict(job.sample_kwargs), draws=job.draws)
        raise _Sampled

    monkeypatch.setitem(fit_module._ROUTES, "nuts", record)
    limit = module.FEW_RATERS
    for n_raters, expected in ((limit - 1, {"target_accept": 0.9}), (limit, {})):
        rows = [(f"t{i}", f"r{r}", "ab"[(i + r) % 2]) for r in range(n_raters) for i in range(3)]
        answers = read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))
        assert module.nuts_defaults(answers) == expected, n_raters
        with pytest.raises(_Sampled):
            ambppl.fit(answers, "dawid_skene")
        assert seen["sample_kwargs"] == expected
        assert seen["draws"] == 2000  # the info record's nuts_defaults (the docstring's runs)
        with pytest.raises(_Sampled):
            ambppl.fit(answers, "dawid_skene", sample_kwargs={"target_accept": 0.95})
        assert seen["sample_kwargs"] == {"target_accept": 0.95}
    # few answers per item (median <= FEW_ANSWERS) and a busy rater (3 of the 27 answers):
    # more draws and nutpie's draw-variance mass matrix; 4 answers: the record's 2000 draws
    # and nutpie's own adaptation
    assert module.BUSY_RATER_SHARE == 0.1
    for per_item, draws in ((module.FEW_ANSWERS, 3000), (module.FEW_ANSWERS + 1, 2000)):
        answers = _nine_items(per_item)
        few = draws == 3000
        expected = {"draws": draws, "adaptation": "draw_diag"} if few else {}
        assert module.nuts_defaults(answers) == expected, per_item
        with pytest.raises(_Sampled):
            ambppl.fit(answers, "dawid_skene")  # the info record's sampler: nutpie
        nutpie = {"nuts": {"adaptation": "draw_diag"}} if few else {}
        assert seen == {"sample_kwargs": nutpie, "draws": draws}
        with pytest.raises(_Sampled):
            ambppl.fit(answers, "dawid_skene", draws=50)
        assert seen["draws"] == 50
    # few answers spread evenly (40 items x 3 answers, 30 raters with 4 each, a share of
    # 0.033 < BUSY_RATER_SHARE, as in the three_answers design): more draws, nutpie's own
    # mass matrix; one rater more than BUSY_RATER_SHARE of the answers turns it on
    rows = [(f"t{i}", f"r{(3 * i + j) % 30}", "ab"[j % 2]) for i in range(40) for j in range(3)]
    even = pd.DataFrame(rows, columns=["task", "worker", "label"])
    assert even["worker"].value_counts().max() == 4
    assert module.nuts_defaults(read_long(even)) == {"draws": 3000}
    with pytest.raises(_Sampled):
        ambppl.fit(read_long(even), "dawid_skene")
    assert seen == {"sample_kwargs": {}, "draws": 3000}
    busy = even.copy()
    busy.loc[busy.index[::3][:13], "worker"] = "busy"  # 13 of 120 answers: 0.108
    got = module.nuts_defaults(read_long(busy))
    assert got == {"draws": 3000, "adaptation": "draw_diag"}
    busy.loc[busy.index[::3][12], "worker"] = "r0"  # 12 of 120: exactly 0.1 counts as busy
    assert module.nuts_defaults(read_long(busy)) == got
    busy.loc[busy.index[::3][11], "worker"] = "r1"  # 11 of 120: 0.092, not busy
    assert module.nuts_defaults(read_long(busy)) == {"draws": 3000}
    # the adaptation is nutpie's: PyMC's own NUTS gets none; the caller's nutpie settings
    # win key by key
    few_answers = _nine_items(module.FEW_ANSWERS)
    with pytest.raises(_Sampled):
        ambppl.fit(few_answers, "dawid_skene", sampler="pymc")
    assert seen["sample_kwargs"] == {}
    for given, expected in (
        ({"adaptation": "low_rank"}, {"adaptation": "low_rank"}),
        ({"store_unconstrained": True}, {"store_unconstrained": True, "adaptation": "draw_diag"}),
    ):
        before = dict(given)
        with pytest.raises(_Sampled):
            ambppl.fit(few_answers, "dawid_skene", sample_kwargs={"nuts": given})
        assert seen["sample_kwargs"] == {"nuts": expected}
        assert given == before  # the caller's dict is not changed
    # PyMC refuses nuts= beside its deprecated nuts_sampler_kwargs: the caller's key is kept
    with pytest.raises(_Sampled):
        ambppl.fit(few_answers, "dawid_skene", sample_kwargs={"nuts_sampler_kwargs": {}})
    assert seen["sample_kwargs"] == {"nuts_sampler_kwargs": {"adaptation": "draw_diag"}}


def _nine_items(per_item: int):
    """9 items x ``per_item`` answers from 12 raters (rater ``r`` answers items ``r - j``):
    with 3 answers the busiest rater gives 3 of the 27."""
    rows = [(f"t{i}", f"r{(i + j) % 12}", "ab"[j % 2]) for i in range(9) for j in range(per_item)]
    return read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))


@pytest.mark.slow
def test_few_answers_reach_nutpie_with_the_draw_variance_mass_matrix(module, monkeypatch):
    """The few-answers rule's adaptation arrives in nutpie.sample (through PyMC) and nutpie
    samples with it: a real, small fit of 3 answers per item from 8 raters (the busiest
    gives at least 1/8 of the answers)."""
    import nutpie

    calls = []
    original = nutpie.sample

    def recording(*args, **kwargs):
        calls.append(kwargs.get("adaptation"))
        return original(*args, **kwargs)

    monkeypatch.setattr(nutpie, "sample", recording)
    answers, *_ = planted(n_items=40, n_raters=8, per_item=3, k=2, seed=3)
    with warnings.catch_warnings():  # 100 draws: too few for the convergence standard
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        result = ambppl.fit(
            answers, "dawid_skene", random_seed=2, draws=100, chains=2, sample_kwargs={"tune": 100}
        )
    assert calls == ["draw_diag"]
    assert result["posterior"]["label_prob"].shape == (2, 100, 40, 2)


def test_every_item_unanimous_raises_target_accept(module, unanimous_answers):
    """nuts_defaults(): UNANIMOUS_TARGET_ACCEPT where every item agrees (the spam data's
    divergences, its docstring's runs), over the few-raters rule; one split item, or too few
    items to say, leave the other rules alone (6 raters: few raters; 3 answers: more draws)."""
    few = {
        "target_accept": module.FEW_RATERS_TARGET_ACCEPT,
        "draws": module.FEW_ANSWERS_DRAWS,
        "adaptation": module.FEW_ANSWERS_ADAPTATION,
    }
    assert module.UNANIMOUS_TARGET_ACCEPT == 0.99
    got = module.nuts_defaults(unanimous_answers(10, split_item=False))
    assert got == {**few, "target_accept": module.UNANIMOUS_TARGET_ACCEPT}
    assert module.nuts_defaults(unanimous_answers(10, split_item=True)) == few
    assert module.nuts_defaults(unanimous_answers(9, split_item=False)) == few


def test_a_design_where_every_item_agrees_is_named_before_sampling(module, unanimous_answers):
    from ambppl.inference.convergence import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match=r"dawid_skene: .* 10 items.*method='map'"):
        module.model(unanimous_answers(10, split_item=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.model(unanimous_answers(10, split_item=True))  # one split item: no warning
        module.model(unanimous_answers(9, split_item=False))  # too few items to say
        module.posterior_mode(unanimous_answers(10, split_item=True))
    # the mode's accuracies are the priors' too: method="map" said nothing, and a report of
    # the fit opened with no word of it
    with pytest.warns(ConvergenceWarning, match=r"dawid_skene: .* 10 items.* at the mode are"):
        module.posterior_mode(unanimous_answers(10, split_item=False))
