"""The catalog's PyMC programs (``models/``): structure, log density and measure nodes.

Graphs are compiled with ``mode="FAST_COMPILE"`` (Python implementations, no C compile),
so these tests stay fast; the sampled model is exercised in ``tests/inference/test_fit.py``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr

import ambppl
from ambppl.inference.catalog import _load_module, get_model

COUNTS = np.array([[3, 1, 1], [0, 5, 0], [2, 2, 1], [0, 0, 0]])


def _counts(values=COUNTS, cant_solve="cs", categories=("x", "y", "cs")):
    return xr.DataArray(
        np.asarray(values),
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(len(values))], "category": list(categories)},
        attrs={"cant_solve": cant_solve},
    )


@pytest.fixture(scope="module")
def entry():
    return get_model("dirichlet_categorical")


def test_info_record(entry):
    info = entry.info
    assert info["name"] == "dirichlet_categorical"
    assert info["methods"] == ["exact", "nuts"]
    assert info["data"] == "counts"
    assert info["parameters"]["prior"]["default"] == 1.0
    assert "dirichlet_mean" in info["reference"]


def test_structure_and_coords(entry):
    model = entry.build(_counts(), prior=1.0)
    assert [v.name for v in model.free_RVs] == ["q"]
    assert [v.name for v in model.observed_RVs] == ["counts"]
    assert sorted(v.name for v in model.deterministics) == [
        "amb",
        "amb_modified",
        "amb_old",
        "entropy",
    ]
    assert model.named_vars_to_dims["q"] == ("item", "category")
    assert model.named_vars_to_dims["amb"] == ("item",)
    assert list(model.coords["category"]) == ["x", "y", "cs"]
    assert list(model.coords["item"]) == ["i0", "i1", "i2", "i3"]


def test_one_proper_category_drops_modified_and_old(entry):
    # amb_modified / amb_old need C >= 2 proper categories (their normalization C/(C-1)).
    model = entry.build(_counts(COUNTS[:, [0, 2]], categories=("x", "cs")), prior=1.0)
    assert sorted(v.name for v in model.deterministics) == ["amb", "entropy"]


def _q_point(rng, n_items, k):
    return rng.dirichlet(np.ones(k), size=n_items)


@pytest.mark.parametrize("prior", [1.0, [0.5, 2.0, 1.5]])
def test_logp_equals_dirichlet_plus_multinomial(entry, rng, prior):
    model = entry.build(_counts(), prior=prior)
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    q = _q_point(rng, *COUNTS.shape)
    point = model.initial_point()
    point["q_simplex__"] = model.rvs_to_transforms[model["q"]].forward(q).eval()
    alpha = np.broadcast_to(np.asarray(prior, dtype=float), (3,))
    # Independent formula: scipy's Dirichlet density and multinomial pmf per item.
    expected = sum(
        st.dirichlet.logpdf(q[i], alpha) + st.multinomial.logpmf(COUNTS[i], COUNTS[i].sum(), q[i])
        for i in range(len(COUNTS))
    )
    # jacobian=False: the density of q itself; the point is stored on the simplex transform.
    assert logp(point) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("cant_solve", "position"),
    [("cs", 2), ("x", 0), (None, None)],
)
def test_deterministics_are_ambppl_measures(entry, rng, cant_solve, position):
    import pytensor
    from pytensor.graph import clone_replace

    model = entry.build(_counts(cant_solve=cant_solve), prior=1.0)
    q = _q_point(rng, *COUNTS.shape)
    x = model["q"].type()
    outputs = [model[n] for n in ("amb", "amb_modified", "amb_old", "entropy")]
    fn = pytensor.function([x], clone_replace(outputs, {model["q"]: x}), mode="FAST_COMPILE")
    got = fn(q)
    expected = [
        ambppl.amb(q, cant_solve=position),
        ambppl.amb_modified(q, cant_solve=position),
        ambppl.amb_old(q, cant_solve=position),
        ambppl.normalized_entropy(q, cant_solve=position),
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


def test_numpy_counts_are_read_by_the_catalog(entry):
    model = entry.build(COUNTS[:3], prior=2.0)
    assert model.named_vars_to_dims["q"] == ("item", "category")


@pytest.mark.parametrize(
    ("prior", "match"),
    [
        (-1.0, "prior must be strictly positive"),
        (0.0, "prior must be strictly positive"),
        ([1.0, 2.0], "vector of 3 positive numbers"),
        ([1.0, -2.0, 1.0], "prior must be strictly positive"),
        (np.nan, "prior must be strictly positive and finite"),
    ],
)
def test_bad_prior(entry, prior, match):
    with pytest.raises(ValueError, match=match):
        entry.build(_counts(), prior=prior)


def test_bad_counts(entry):
    with pytest.raises(ValueError, match=r"counts must have dims \('item', 'category'\)"):
        entry.build(_counts().T, prior=1.0)
    with pytest.raises(ValueError, match="counts must be non-negative"):
        entry.build(_counts(-COUNTS), prior=1.0)
    with pytest.raises(ValueError, match="cant_solve must be one of the category labels"):
        entry.build(_counts(cant_solve="nope"), prior=1.0)
    module = _load_module(entry.path)
    with pytest.raises(TypeError, match=r"counts must be an xarray\.DataArray"):
        module.model(COUNTS)


# ---------------------------------------------------------------------------------------
# hierarchical_dirichlet: q_i ~ Dirichlet(kappa * mu), mu ~ Dirichlet(1), kappa ~ HalfCauchy


#: PyMC 6.4's HalfCauchy log density adds ``pt.log(2)``, the log of an integer constant, which
#: PyTensor computes in float32: its normalizing constant is high by float32(log 2) - log 2
#: (1.9e-9), whatever the value and scale (a constant: the posterior is unchanged).
PYMC_HALFCAUCHY_OFFSET = float(np.float32(np.log(2.0))) - np.log(2.0)


def _log_dm(counts: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log p(answer sequence | a): scipy's Dirichlet-multinomial pmf minus the log multinomial
    coefficient (an independent route to ambppl.inference.modeling's likelihood)."""
    from scipy.special import gammaln

    n = counts.sum(axis=-1)
    coef = gammaln(n + 1) - gammaln(counts + 1).sum(axis=-1)
    return st.dirichlet_multinomial.logpmf(counts, a, n) - coef


@pytest.fixture(scope="module")
def hier():
    return get_model("hierarchical_dirichlet")


def test_hierarchical_info_record(hier):
    assert hier.info["methods"] == ["collapsed", "empirical_bayes", "nuts"]
    assert hier.info["data"] == "counts"
    assert hier.hyperparameters == ("mu", "kappa")
    assert set(hier.info["parameters"]) == {"mu_prior", "kappa_scale"}


def _hier_point(model, mu, kappa, q=None):
    point = model.initial_point()
    point["mu_simplex__"] = model.rvs_to_transforms[model["mu"]].forward(mu).eval()
    point["kappa_log__"] = np.log(kappa)
    if q is not None:
        point["q_simplex__"] = model.rvs_to_transforms[model["q"]].forward(q).eval()
    return point


def test_hierarchical_collapsed_logp_is_the_marginal_likelihood(hier):
    model = hier.module.hyper_model(_counts(), kappa_scale=2.0)
    assert [v.name for v in model.free_RVs] == ["mu", "kappa"]
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    mu, kappa = np.array([0.5, 0.3, 0.2]), 4.0
    expected = (
        _log_dm(COUNTS, kappa * mu).sum()
        + st.dirichlet.logpdf(mu, np.ones(3))
        + st.halfcauchy.logpdf(kappa, scale=3 * 2.0)  # median K * kappa_scale
        + PYMC_HALFCAUCHY_OFFSET
    )
    assert logp(_hier_point(model, mu, kappa)) == pytest.approx(expected, rel=1e-10)


def test_hierarchical_full_program_logp(hier, rng):
    model = hier.build(_counts(), mu_prior=[2.0, 1.0, 0.5])
    assert [v.name for v in model.free_RVs] == ["mu", "kappa", "q"]
    assert sorted(v.name for v in model.deterministics) == [
        "amb",
        "amb_modified",
        "amb_old",
        "entropy",
    ]
    assert "is_cant_solve" in model.named_vars and "prior" not in model.named_vars
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    mu, kappa, q = np.array([0.2, 0.5, 0.3]), 2.5, _q_point(rng, *COUNTS.shape)
    expected = (
        st.dirichlet.logpdf(mu, [2.0, 1.0, 0.5])
        + st.halfcauchy.logpdf(kappa, scale=3.0)
        + PYMC_HALFCAUCHY_OFFSET
        + sum(st.dirichlet.logpdf(q[i], kappa * mu) for i in range(len(COUNTS)))
        + sum(st.multinomial.logpmf(c, c.sum(), q[i]) for i, c in enumerate(COUNTS))
    )
    assert logp(_hier_point(model, mu, kappa, q)) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kappa_scale": 0.0}, r"kappa_scale must be a positive finite number"),
        ({"kappa_scale": -1.0}, r"kappa_scale must be a positive finite number"),
        ({"mu_prior": [1.0, 1.0]}, r"mu_prior must be .* a vector of 3 positive numbers"),
    ],
)
def test_hierarchical_bad_parameters(hier, params, match):
    with pytest.raises(ValueError, match=match):
        hier.module.hyper_model(_counts(), **params)
    with pytest.raises(ValueError, match=match):
        ambppl.fit(_counts(), "hierarchical_dirichlet", method="empirical_bayes", **params)


def _alike_grid_posterior(counts: np.ndarray, scale: float) -> dict[str, float]:
    """Posterior of (mu, kappa) for two categories on a grid (an independent route): mu
    uniform, ``kappa ~ HalfCauchy(scale)``, each item's answer sequence
    ``prod_j (a1 + j) prod_j (a2 + j) / prod_j (kappa + j)`` written as
    ``sum_j log(mu + j / kappa) - log1p(j / kappa)`` (exact at every kappa, no log-gamma)."""
    n = int(counts.sum(axis=1)[0])
    mu = np.linspace(0.0005, 0.9995, 1000)[:, None]
    u = np.linspace(-12.0, 35.0, 4701)[None, :]  # log kappa; prior mass beyond: < 1e-15
    inv = np.exp(-u)
    loglik = np.zeros((mu.size, u.size))
    for x, weight in zip(*np.unique(counts[:, 0], return_counts=True), strict=True):
        seq = sum(np.log(mu + j * inv) for j in range(x))
        seq = seq + sum(np.log(1.0 - mu + j * inv) for j in range(n - x))
        seq = seq - sum(np.log1p(j * inv) for j in range(n))
        loglik += weight * seq
    logpost = loglik + st.halfcauchy.logpdf(np.exp(u), scale=scale) + u  # + log |d kappa / du|
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    kappa = np.exp(u)
    return {
        "inv_kappa": float((w * inv).sum()),
        "above_1000": float(w[:, kappa[0] > 1000.0].sum()),
    }


def test_hierarchical_posterior_reaches_the_multinomial_on_alike_items(hier):
    """Items answered from one shared q (no spread beyond multinomial noise): the likelihood
    levels off as kappa -> infinity and the half-Cauchy prior keeps 1 / kappa = 0 in reach.
    The fit's posterior of 1 / kappa and its mass above kappa = 1000 equal the grid's
    (``_alike_grid_posterior``) within 4 Monte Carlo standard errors. Under the log-normal
    prior used until 2026-11-28 (``LogNormal(log 2, 1.5)``) the same grid gives a mass of
    0.001 above 1000 instead of 0.051: the test fails for a prior that rules out the limit."""
    from ambppl.inference.diagnostics import mcse_mean

    rng = np.random.default_rng(20261127)
    values = rng.multinomial(5, [0.3, 0.7], size=400)
    counts = _counts(values, cant_solve=None, categories=("yes", "no")).assign_coords(
        item=np.arange(400)
    )
    result = ambppl.fit(counts, "hierarchical_dirichlet", random_seed=5, progressbar=False)
    kappa = result["posterior"]["kappa"].transpose("chain", "draw").values
    assert np.all(np.isfinite(kappa)) and np.all(kappa > 0)
    grid = _alike_grid_posterior(values, scale=2.0)
    for name, draws in (("inv_kappa", 1.0 / kappa), ("above_1000", (kappa > 1000.0) * 1.0)):
        mcse = float(mcse_mean(draws[..., None])[0])
        assert abs(draws.mean() - grid[name]) < 4 * mcse, (name, draws.mean(), grid[name], mcse)
    assert grid["above_1000"] > 0.01  # the limit is in reach: a visible share of the mass


def test_empirical_bayes_maximizes_the_marginal_likelihood(hier):
    from scipy.optimize import minimize

    rng = np.random.default_rng(11)
    q = rng.dirichlet(3.0 * np.array([0.5, 0.3, 0.2]), size=60)
    counts = np.array([rng.multinomial(8, p) for p in q])
    est = hier.module.empirical_bayes(
        _counts(counts, categories=("x", "y", "cs")).assign_coords(item=np.arange(60))
    )
    # independent route: Nelder-Mead on scipy's Dirichlet-multinomial over log a
    res = minimize(
        lambda t: -_log_dm(counts, np.exp(t)).sum(),
        np.zeros(3),
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000},
    )
    a = np.exp(res.x)
    np.testing.assert_allclose(est["kappa"], a.sum(), rtol=1e-4)
    np.testing.assert_allclose(est["mu"], a / a.sum(), rtol=1e-4)


def test_empirical_bayes_warns_at_a_bound(hier):
    # "y" never used: the likelihood grows as mu_y -> 0, the maximum lies on the boundary
    used = np.array([[4, 0], [0, 4], [2, 2], [4, 0], [1, 3], [4, 0]])
    counts = _counts(np.insert(used, 1, 0, axis=1))
    with pytest.warns(UserWarning, match=r"largest at a bound of log\(kappa \* mu\)"):
        est = hier.module.empirical_bayes(counts)
    assert est["mu"][1] < 1e-5
    # with mu_y -> 0 category y drops out: the rest is the 2-category maximum (to 1e-4: the
    # bound leaves kappa * mu_y = e^-14, which shifts the optimum by ~1e-5 relative)
    two = hier.module.empirical_bayes(_counts(used, categories=("x", "cs")))
    np.testing.assert_allclose(est["mu"][[0, 2]], two["mu"], rtol=1e-4)
    np.testing.assert_allclose(est["kappa"], two["kappa"], rtol=1e-4)


def test_empirical_bayes_warns_where_the_maximum_lies_beyond_kappas_bound(hier):
    # binomial items (no spread beyond multinomial noise; under-dispersed by chance): the
    # likelihood still rises where the optimizer stops, and Newton's polish left the box
    # without a warning (kappa 1.7e10 on this draw); now the bounded estimate, and the warning
    rng = np.random.default_rng(2)
    counts = _counts(rng.multinomial(5, [0.3, 0.7], size=60), categories=("x", "cs"))
    with pytest.warns(UserWarning, match=r"largest at a bound of log\(kappa \* mu\)"):
        est = hier.module.empirical_bayes(counts)
    hi = hier.module.LOG_CONCENTRATION_BOUNDS[1]
    assert np.all(np.log(est["kappa"] * est["mu"]) <= hi)


def test_empirical_bayes_fit_has_constant_hyperparameters_and_closed_forms():
    counts = ambppl.read_annotations(
        ambppl.data.readers.example_path("weather_sentiment"), cant_solve="I can't tell"
    )
    result = ambppl.fit(
        counts,
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=300,
        chains=2,
        random_seed=4,
    )
    post = result["posterior"]
    assert post["mu"].dims == ("chain", "draw", "category") and post["kappa"].dims == (
        "chain",
        "draw",
    )
    assert np.ptp(post["kappa"].values) == 0.0 and np.ptp(post["mu"].values, axis=(0, 1)).max() == 0
    a = post["kappa"].values[0, 0] * post["mu"].values[0, 0]
    np.testing.assert_allclose(result.attrs["prior"], a, rtol=1e-14)
    table = ambppl.summarize(result)
    assert "ess_bulk" not in table  # independent draws given the estimate
    np.testing.assert_allclose(
        table["exact_mean"], ambppl.dirichlet_mean(counts.values + a, cant_solve=4), rtol=1e-12
    )
    se = table["sd"] / np.sqrt(600)
    assert np.all(np.abs(table["mean"] - table["exact_mean"]) <= 5 * se)


def _posterior_grid(counts, n=400):
    """Posterior of (m, kappa) for K = 2 (mu = (m, 1 - m)) on a grid: an independent reference
    for the collapsed route (scipy's Dirichlet-multinomial, uniform prior on m, log-normal
    prior on kappa with median 2 and sd 1.5 on the log scale)."""
    m = (np.arange(n) + 0.5) / n
    t = np.linspace(-6.0, 8.0, n)  # log kappa
    mm, tt = np.meshgrid(m, t, indexing="ij")
    kappa = np.exp(tt)
    a = np.stack([kappa * mm, kappa * (1 - mm)], axis=-1)
    logpost = st.norm.logpdf(tt, np.log(2.0), 1.5)  # density of log kappa
    for c in counts:
        logpost = logpost + _log_dm(c, a)
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    return mm, kappa, a, w


@pytest.mark.slow
def test_collapsed_route_matches_a_grid_posterior():
    counts = np.array([[4, 0], [3, 1], [0, 4], [2, 2], [4, 0], [1, 3], [4, 0], [3, 1]])
    data = xr.DataArray(
        counts,
        dims=("item", "category"),
        coords={"category": ["a", "b"]},
        attrs={"cant_solve": None},
    )
    result = ambppl.fit(data, "hierarchical_dirichlet", draws=1500, chains=4, random_seed=21)
    json_record = result.attrs["convergence"]
    assert '"passed": true' in json_record, json_record
    # log_prior: the hyperprior's density per draw (ambppl.hyperprior_sensitivity)
    assert set(result.children) == {
        "posterior",
        "observed_data",
        "log_likelihood",
        "sample_stats",
        "log_prior",
    }
    assert sorted(result["log_prior"].data_vars) == ["kappa", "mu"]
    assert "prior" not in result.attrs
    mm, kappa, a, w = _posterior_grid(counts)
    post = result["posterior"]
    import arviz as az

    def check(draws, reference):
        mcse = float(az.mcse(draws).values) if draws.ndim == 2 else None
        assert abs(float(draws.mean()) - reference) <= 5 * mcse, (float(draws.mean()), reference)

    check(post["mu"].isel(category=0), float(np.sum(w * mm)))
    check(np.log(post["kappa"]), float(np.sum(w * np.log(kappa))))
    # each item's amb: the grid average of its conditional closed form E[amb | kappa, mu]
    for i in (0, 3, 5):
        cond = ambppl.dirichlet_mean(a + counts[i], cant_solve=None)
        check(post["amb"].isel(item=i), float(np.sum(w * cond)))


@pytest.mark.slow
@pytest.mark.mutation  # the one test of fit's collapsed route that mutation testing runs
def test_collapsed_conditional_draws_and_log_likelihood():
    rng = np.random.default_rng(31)
    q = rng.dirichlet(4.0 * np.array([0.4, 0.4, 0.2]), size=40)
    counts = _counts(np.array([rng.multinomial(6, p) for p in q]))
    counts = counts.assign_coords(item=np.arange(40))
    result = ambppl.fit(counts, "hierarchical_dirichlet", draws=500, chains=2, random_seed=8)
    post = result["posterior"]
    conc = post["kappa"].values[..., None] * post["mu"].values  # (chain, draw, K)
    # log_likelihood = scipy's Dirichlet-multinomial (sequence) at each draw's kappa * mu
    ll = result["log_likelihood"]["counts"].values
    for c, d in ((0, 0), (1, 499), (0, 250)):
        np.testing.assert_allclose(ll[c, d], _log_dm(counts.values, conc[c, d]), rtol=1e-12)
    # Rao-Blackwell check of the conditional draws: E[q_i] equals the average over draws of
    # E[q_i | mu, kappa] = (kappa mu + x_i) / (kappa + n_i), within the draws' Monte Carlo error
    alpha = conc[:, :, None, :] + counts.values
    cond_mean = (alpha / alpha.sum(-1, keepdims=True)).mean(axis=(0, 1))
    qd = post["q"].values.reshape(-1, 40, 3)
    resid = qd - (alpha / alpha.sum(-1, keepdims=True)).reshape(-1, 40, 3)
    se = resid.std(axis=0) / np.sqrt(resid.shape[0])  # draws are independent given mu, kappa
    assert np.all(np.abs(qd.mean(axis=0) - cond_mean) <= 5 * se + 1e-12)
    # the stored measures are those of the stored q
    np.testing.assert_allclose(
        post["amb"].values, ambppl.amb(post["q"].values, cant_solve=2), rtol=1e-12
    )
    table = ambppl.summarize(result)
    assert {"ess_bulk", "r_hat"} <= set(table.columns) and table["exact_mean"].isna().all()
    # NUTS's statistics of (mu, kappa) under ArviZ's group name, one per draw
    stats = result["sample_stats"]
    assert stats["diverging"].shape == (2, 500) and "energy" in stats


@pytest.mark.slow
def test_collapsed_and_full_programs_agree():
    """The proof that integrating q out is right: NUTS on the full program (q explicit) gives
    the same posterior as the collapsed route, within Monte Carlo error."""
    import arviz as az

    rng = np.random.default_rng(41)
    q = rng.dirichlet(6.0 * np.array([0.5, 0.3, 0.2]), size=10)
    counts = _counts(np.array([rng.multinomial(10, p) for p in q])).assign_coords(
        item=np.arange(10)
    )
    collapsed = ambppl.fit(counts, "hierarchical_dirichlet", draws=1000, chains=2, random_seed=1)
    # The full program mixes slower: it may miss the ESS part of the standard, which the
    # MCSE-based tolerance below accounts for; it must not diverge nor show R-hat > 1.01.
    # 2 x 2000 draws (R-hat 1.004, bulk ESS 563 on kappa): with the half-Cauchy prior's
    # heavier upper tail of kappa, 2 x 1000 gave R-hat 1.0103 on these 10 items.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        full = ambppl.fit(
            counts,
            "hierarchical_dirichlet",
            method="nuts",
            draws=2000,
            chains=2,
            random_seed=2,
            sample_kwargs={"target_accept": 0.95, "cores": 1},
        )
    record = json.loads(full.attrs["convergence"])
    assert record["divergences"] == 0 and record["r_hat"] <= 1.01, record
    for name in ("kappa", "mu", "amb", "amb_modified"):
        a, b = collapsed["posterior"][name], full["posterior"][name]
        if name == "kappa":
            a, b = np.log(a), np.log(b)
        diff = np.abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw"))).values
        tol = 5 * np.sqrt(az.mcse(a).values ** 2 + az.mcse(b).values ** 2)
        assert np.all(diff <= tol), (name, diff, tol)


@pytest.mark.slow
def test_collapsed_route_recovers_the_truth_at_the_nominal_rate():
    """Small recovery study (the full one, >= 100 data sets, is in benchmarks/): truths drawn
    from the prior, so the 94 % HDI of kappa covers them with probability 0.94 if the
    posterior is right. 20 data sets: fail below 15 covered (false alarm P = 0.0009 by the
    binomial(20, 0.94) law; a sampler covering 70 % fails with P = 0.58)."""
    import arviz as az

    from ambppl.maths.draws import dirichlet_draws

    rng = np.random.default_rng(20261126)
    covered = []
    for s in range(20):
        mu = rng.dirichlet(np.ones(3))
        kappa = 3.0 * abs(rng.standard_cauchy())  # the prior: HalfCauchy(K)
        # the package's Dirichlet draws, exact in log space for tiny kappa (no floor)
        q = dirichlet_draws(rng, np.tile(kappa * mu, (100, 1)), 1)[0]
        counts = _counts(np.array([rng.multinomial(8, p) for p in q])).assign_coords(
            item=np.arange(100)
        )
        with warnings.catch_warnings():  # extreme prior draws may sample less well
            warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
            result = ambppl.fit(
                counts,
                "hierarchical_dirichlet",
                draws=400,
                chains=2,
                random_seed=s,
                var_names=["amb"],
                log_likelihood=False,
                sample_kwargs={"tune": 400, "cores": 1},
            )
        lo, hi = az.hdi(result["posterior"]["kappa"], prob=0.94).values
        covered.append(lo <= kappa <= hi)
    assert sum(covered) >= 15, covered
