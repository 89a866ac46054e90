"""``ambppl.fit``: exact conjugate draws, NUTS, one result layout, and every error message.

Monte Carlo tolerances are 5 standard errors computed from the samples themselves (for
exact draws, which are independent, se = sd / sqrt(n); for NUTS, ArviZ's MCSE).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import write_long_model

import ambppl
from ambppl.data import read_long
from ambppl.inference.catalog import ENV_VAR, get_model

# ``ambppl.fit`` is the function (it shadows its module); the module is needed for patching.
fit_module = importlib.import_module("ambppl.inference.fitting")

MEASURE_FUNCS = {
    "amb": ambppl.amb,
    "amb_modified": ambppl.amb_modified,
    "amb_old": ambppl.amb_old,
    "entropy": ambppl.normalized_entropy,
}


def _se_mean(x: np.ndarray, axis=0) -> np.ndarray:
    """Standard error of the mean of independent draws."""
    return x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis])


def _se_var(x: np.ndarray, axis=0) -> np.ndarray:
    """Standard error of the sample variance of independent draws: sqrt((m4 - s^4) / n)."""
    d = x - x.mean(axis=axis, keepdims=True)
    m4 = (d**4).mean(axis=axis)
    s2 = (d**2).mean(axis=axis)
    return np.sqrt((m4 - s2**2) / x.shape[axis])


@pytest.fixture(scope="module")
def exact_fit(small_counts):
    return ambppl.fit(small_counts, draws=5000, chains=2, random_seed=7)


# ---------------------------------------------------------------------------------------
# Layout


def test_exact_layout(exact_fit, small_counts):
    assert set(exact_fit.children) == {"posterior", "observed_data", "log_likelihood"}
    post = exact_fit["posterior"]
    assert post["q"].dims == ("chain", "draw", "item", "category")
    for name in MEASURE_FUNCS:
        assert post[name].dims == ("chain", "draw", "item")
    assert dict(post.sizes) == {"chain": 2, "draw": 5000, "item": 3, "category": 3}
    assert post["item"].values.tolist() == ["clear", "mixed", "unsure"]
    assert post["category"].values.tolist() == ["yes", "no", "cs"]
    assert post.attrs["sample_dims"] == ["chain", "draw"]
    # the groups' sample_dims as ArviZ's own converter writes them (arviz_base.from_dict):
    # arviz_base.validate reads them to tell the sample dimensions of each group
    import arviz_base

    ref = arviz_base.from_dict(
        {"posterior": {"x": np.ones((2, 3))}, "observed_data": {"y": np.ones(3)}}
    )
    for group in ("posterior", "observed_data"):
        assert exact_fit[group].attrs["sample_dims"] == ref[group].attrs["sample_dims"]
    ll_ref = arviz_base.from_dict({"log_likelihood": {"y": np.ones((2, 3))}})
    assert (
        exact_fit["log_likelihood"].attrs["sample_dims"]
        == ll_ref["log_likelihood"].attrs["sample_dims"]
    )
    # ArviZ's provenance keys (those from_dict writes) name ambppl and its installed version
    import importlib.metadata

    assert set(ref["posterior"].attrs) - {"sample_dims"} <= set(post.attrs)
    assert post.attrs["creation_library"] == "ambppl"
    assert post.attrs["creation_library_version"] == importlib.metadata.version("ambppl")
    observed = exact_fit["observed_data"]["counts"]
    xr.testing.assert_equal(observed, small_counts.rename("counts"))
    assert observed.attrs["cant_solve"] == "cs" and observed.attrs["source"] == "test"
    expected = {
        "method": "exact",
        "model": "dirichlet_categorical",
        "prior": [1.0, 1.0, 1.0],
        "parameters": '{"prior": 1.0}',
        "cant_solve": "cs",
        "sampler": "numpy.random.Generator.standard_gamma",
    }
    for key, value in expected.items():
        assert exact_fit.attrs[key] == value
        assert post.attrs[key] == value
    assert "convergence" not in exact_fit.attrs  # independent draws: nothing to diagnose
    import datetime

    assert post.attrs["inference_library"] == "ambppl"
    assert post.attrs["inference_library_version"] == ambppl.__version__
    created = datetime.datetime.fromisoformat(post.attrs["created_at"])
    assert created.utcoffset() == datetime.timedelta(0)  # UTC, as ArviZ writes it


def test_log_likelihood_is_the_dirichlet_multinomial_of_the_answers(exact_fit, small_counts):
    # Independent reference: the probability of one ordered answer sequence under
    # Dirichlet(1, 1, 1) integrated over q, computed by the chain rule of the Polya urn:
    # P(y_1..y_n) = prod_t (alpha_{y_t} + #earlier y_t) / (alpha_0 + t - 1).
    ll = exact_fit["log_likelihood"]["counts"]
    assert ll.dims == ("chain", "draw", "item") and ll.shape == (2, 5000, 3)
    assert set(ll.coords) == {"chain", "draw", "item"}  # the posterior's coordinates, no other
    for i, row in enumerate(small_counts.values):
        seq = np.repeat(np.arange(3), row)
        seen, logp = np.zeros(3), 0.0
        for t, y in enumerate(seq):
            logp += np.log((1.0 + seen[y]) / (3.0 + t))
            seen[y] += 1
        np.testing.assert_allclose(ll.values[:, :, i], logp, rtol=1e-13)


def test_log_likelihood_can_be_left_out(small_counts):
    result = ambppl.fit(small_counts, draws=10, chains=1, random_seed=1, log_likelihood=False)
    assert "log_likelihood" not in result.children
    with pytest.raises(TypeError, match=r"log_likelihood must be True or False, but got 1"):
        ambppl.fit(small_counts, draws=10, chains=1, log_likelihood=1)


def test_default_method_is_exact_for_a_conjugate_model(small_counts):
    result = ambppl.fit(small_counts, draws=10, chains=1, random_seed=1)
    assert result.attrs["method"] == "exact"


def test_var_names_stores_only_what_is_asked(small_counts):
    result = ambppl.fit(small_counts, draws=20, chains=2, random_seed=1, var_names=["amb"])
    assert list(result["posterior"].data_vars) == ["amb"]
    assert "category" not in result["posterior"].dims
    single = ambppl.fit(small_counts, draws=20, chains=2, random_seed=1, var_names="entropy")
    assert list(single["posterior"].data_vars) == ["entropy"]


def test_one_proper_category_has_no_modified_or_old(small_counts):
    counts = small_counts.isel(category=[0, 2])
    result = ambppl.fit(counts, draws=10, chains=1, random_seed=1)
    assert sorted(result["posterior"].data_vars) == ["amb", "entropy", "q"]
    with pytest.raises(ValueError, match=r"var_names must be a non-empty selection of"):
        ambppl.fit(counts, draws=10, chains=1, var_names=["amb_old"])


# ---------------------------------------------------------------------------------------
# Exact draws: correctness


def test_same_seed_same_draws(small_counts):
    a = ambppl.fit(small_counts, draws=50, chains=2, random_seed=11)
    b = ambppl.fit(small_counts, draws=50, chains=2, random_seed=11)
    c = ambppl.fit(small_counts, draws=50, chains=2, random_seed=12)
    xr.testing.assert_identical(
        a["posterior"].to_dataset().drop_attrs(), b["posterior"].to_dataset().drop_attrs()
    )
    assert not np.array_equal(a["posterior"]["q"].values, c["posterior"]["q"].values)
    gen = ambppl.fit(small_counts, draws=50, chains=2, random_seed=np.random.default_rng(11))
    np.testing.assert_array_equal(gen["posterior"]["q"].values, a["posterior"]["q"].values)


def _measures_second_formula(q):
    """The four measures of q = (q_+, q_-, q_cs) by formulas of their own (C = 2, not the
    ambppl.maths.measures code): with V = q_+ + q_- and D = |q_+ - q_-| / V,
    amb = 1 - V (1 + D^2) / 2 (paper eq. def_amb_final), modified = 2 amb - q_cs = 1 - V D^2
    (eq. rel_mod_unmod), old = 1 - V D (section 2.3) and entropy = -sum q log q / log 3."""
    v = q[..., 0] + q[..., 1]
    d = np.abs(q[..., 0] - q[..., 1]) / v
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(q > 0, q * np.log(q), 0.0)
    return {
        "amb": 1 - v * (1 + d**2) / 2,
        "amb_modified": 1 - v * d**2,
        "amb_old": 1 - v * d,
        "entropy": -plogp.sum(axis=-1) / np.log(3),
    }


def test_stored_measures_are_the_measures_of_the_stored_q(exact_fit):
    post = exact_fit["posterior"]
    expected = _measures_second_formula(post["q"].values)
    for name in MEASURE_FUNCS:
        np.testing.assert_allclose(post[name].values, expected[name], rtol=1e-12, atol=1e-15)


def test_q_moments_match_the_dirichlet_posterior(exact_fit, small_counts):
    # Independent formula: q | n ~ Dirichlet(alpha), alpha = prior + n, so
    # E q_k = alpha_k / alpha_0, Var q_k = alpha_k (alpha_0 - alpha_k) / (alpha_0^2 (alpha_0 + 1)).
    alpha = small_counts.values + 1.0
    a0 = alpha.sum(axis=1, keepdims=True)
    mean = alpha / a0
    var = alpha * (a0 - alpha) / (a0**2 * (a0 + 1))
    q = exact_fit["posterior"]["q"].values.reshape(-1, *alpha.shape)
    assert np.all(np.abs(q.mean(axis=0) - mean) <= 5 * _se_mean(q))
    assert np.all(np.abs(q.var(axis=0) - var) <= 5 * _se_var(q))


@pytest.mark.parametrize(
    ("measure", "name", "has_var"),
    [
        ("amb", "amb", True),
        ("modified", "amb_modified", True),
        ("old", "amb_old", False),
        ("entropy", "entropy", False),
    ],
)
def test_measure_moments_match_dirichlet_mean_and_var(
    exact_fit, small_counts, measure, name, has_var
):
    # Reference: the closed forms of ambppl.maths.moments (helper A; paper section 3.2), which
    # have no variance for amb_old and entropy.
    from ambppl.maths.moments import dirichlet_mean, dirichlet_var

    alpha = small_counts.values + 1.0
    draws = exact_fit["posterior"][name].values.reshape(-1, 3)
    exact_mean = dirichlet_mean(alpha, measure=measure, cant_solve=-1)
    assert np.all(np.abs(draws.mean(axis=0) - exact_mean) <= 5 * _se_mean(draws))
    if has_var:
        exact_var = dirichlet_var(alpha, measure=measure, cant_solve=-1)
        assert np.all(np.abs(draws.var(axis=0) - exact_var) <= 5 * _se_var(draws))


def test_chunks_give_the_same_distribution_and_measures(small_counts, monkeypatch):
    # A chunk of a single item (3 items -> 3 chunks per chain) exercises the chunk loop
    # and the progress bar; the draws must still be Dirichlet(prior + counts).
    monkeypatch.setattr(fit_module, "CHUNK_BYTES", 1)
    result = ambppl.fit(small_counts, draws=4000, chains=2, random_seed=3, progressbar=True)
    post = result["posterior"]
    expected = _measures_second_formula(post["q"].values)
    for name in MEASURE_FUNCS:
        np.testing.assert_allclose(post[name].values, expected[name], rtol=1e-12, atol=1e-15)
    alpha = small_counts.values + 1.0
    q = post["q"].values.reshape(-1, 3, 3)
    assert np.all(np.abs(q.mean(axis=0) - alpha / alpha.sum(1, keepdims=True)) <= 5 * _se_mean(q))


def test_tiny_concentrations_do_not_underflow_to_nan(rng):
    # With alpha = 1e-3 every gamma variate underflows to 0 with probability ~0.47, all three
    # together ~0.1 of the time; those vectors are redrawn in log space. By symmetry of
    # Dirichlet(a, a, a): E q_k = 1/3 and P(q_1 > 1/2) = 1/3 (q is nearly one-hot).
    counts = xr.DataArray(
        np.zeros((2, 3), dtype=int),
        dims=("item", "category"),
        coords={"item": ["a", "b"], "category": ["x", "y", "z"]},
        attrs={"cant_solve": None},
    )
    result = ambppl.fit(counts, prior=1e-3, draws=6000, chains=1, random_seed=5)
    q = result["posterior"]["q"].values.reshape(-1, 2, 3)
    assert np.all(np.isfinite(q))
    np.testing.assert_allclose(q.sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(np.abs(q.mean(axis=0) - 1 / 3) <= 5 * _se_mean(q))
    hit = (q[..., 0] > 0.5).astype(float)
    assert np.all(np.abs(hit.mean(axis=0) - 1 / 3) <= 5 * _se_mean(hit))


def test_tiny_unequal_concentrations_pick_each_vertex_in_proportion():
    """As alpha -> 0, Dirichlet(alpha) puts q at vertex k with probability alpha_k / alpha_0
    (reference: the limit of P(q_k > 1/2); the log-space redraw must use one uniform per
    entry, a shared one would always pick the largest alpha). Tolerance: 5 binomial se."""
    counts = xr.DataArray(
        np.zeros((1, 3), dtype=int),
        dims=("item", "category"),
        coords={"item": ["a"], "category": ["x", "y", "z"]},
        attrs={"cant_solve": None},
    )
    prior = np.array([1e-3, 2e-3, 1e-3])
    result = ambppl.fit(counts, prior=prior, draws=40_000, chains=1, random_seed=9)
    q = result["posterior"]["q"].values.reshape(-1, 3)
    hit = (q > 0.5).astype(float)
    assert np.all(np.abs(hit.mean(axis=0) - prior / prior.sum()) <= 5 * _se_mean(hit))


def test_progress_bar_only_when_asked(small_counts, monkeypatch):
    """No bar by default; with progressbar=True a rich bar whose total is the number of chunks
    (one item per chunk here: 3 items x 2 chains) and that advances once per chunk."""
    import rich.progress

    bars = []

    class Recorder:
        def __init__(self, **kwargs):
            self.total, self.steps = None, 0
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def add_task(self, description, total=None):
            self.total = total
            return 0

        def advance(self, task):
            self.steps += 1

    monkeypatch.setattr(rich.progress, "Progress", Recorder)
    monkeypatch.setattr(fit_module, "CHUNK_BYTES", 1)
    ambppl.fit(small_counts, draws=20, chains=2, random_seed=1)
    assert bars == []
    ambppl.fit(small_counts, draws=20, chains=2, random_seed=1, progressbar=True)
    assert len(bars) == 1 and bars[0].total == bars[0].steps == 6


def test_empirical_bayes_draws_are_dirichlet_given_the_fitted_prior():
    """hierarchical_dirichlet, method="empirical_bayes": kappa and mu are fixed, and each q_i
    is Dirichlet(kappa mu + n_i). Reference: that posterior's mean (kappa mu + n_i) /
    (kappa + N_i), a formula of its own; tolerance 5 standard errors of the draws' mean."""
    counts = np.array([[1, 2, 0], [3, 0, 1], [0, 0, 4], [2, 2, 0]])
    result = ambppl.fit(
        counts,
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=2000,
        chains=1,
        random_seed=3,
    )
    post = result["posterior"]
    kappa, mu = post["kappa"].values.reshape(-1), post["mu"].values.reshape(-1, 3)
    assert np.all(kappa == kappa[0]) and np.all(mu == mu[0])  # a point, not a distribution
    expected = (kappa[0] * mu[0] + counts) / (kappa[0] + counts.sum(axis=1, keepdims=True))
    q = post["q"].values.reshape(-1, 4, 3)
    assert np.all(np.abs(q.mean(axis=0) - expected) <= 5 * _se_mean(q))


def test_full_prior_vector(small_counts):
    prior = [0.5, 2.0, 0.25]
    result = ambppl.fit(small_counts, prior=prior, draws=4000, chains=1, random_seed=9)
    assert result.attrs["prior"] == prior
    alpha = small_counts.values + np.array(prior)
    q = result["posterior"]["q"].values.reshape(-1, 3, 3)
    assert np.all(np.abs(q.mean(axis=0) - alpha / alpha.sum(1, keepdims=True)) <= 5 * _se_mean(q))


# ---------------------------------------------------------------------------------------
# Data sources (via ambppl.read_annotations)


def test_long_frame_with_column_names():
    import pandas as pd

    frame = pd.DataFrame(
        {
            "doc": ["d1", "d1", "d1", "d2", "d2"],
            "who": ["r1", "r2", "r3", "r1", "r2"],
            "answer": ["a", "b", "?", "a", "a"],
        }
    )
    counts = ambppl.read_annotations(frame, item="doc", rater="who", label="answer", cant_solve="?")
    result = ambppl.fit(counts, draws=10, chains=1)
    counts = result["observed_data"]["counts"]
    assert counts.values.tolist() == [[1, 1, 1], [2, 0, 0]]
    assert result.attrs["cant_solve"] == "?"
    assert counts["category"].values.tolist()[-1] == "?"


def test_bundled_example_path():
    from ambppl.data.readers import example_path

    counts = ambppl.read_annotations(example_path("weather_sentiment"), cant_solve="I can't tell")
    result = ambppl.fit(counts, draws=20, chains=1)
    assert result["posterior"]["amb"].sizes["item"] == 200
    assert result.attrs["cant_solve"] == "I can't tell"


def test_a_path_is_refused_naming_the_reader(tmp_path):
    """Only the readers (and the command line) read files; fit says which reader to call."""
    from ambppl.data.readers import example_path

    path = example_path("weather_sentiment")
    with pytest.raises(
        TypeError,
        match=r"data must be annotations already read .* but got the path '.*weather.*'; read it "
        r"first: ambppl\.read_annotations\('.*weather.*', \.\.\.\)$",
    ):
        ambppl.fit(path)
    with pytest.raises(TypeError, match=r"read it first: ambppl\.read_annotations\("):
        ambppl.fit(str(path), draws=10)
    # a model of answers names the reader of answers
    with pytest.raises(TypeError, match=r"read it first: ambppl\.data\.read_long\("):
        ambppl.fit(path, "rater_effects")


@pytest.mark.parametrize("option", ["cant_solve", "item", "rater", "label", "categories", "format"])
def test_a_reader_option_is_refused_naming_the_reader(small_counts, option):
    with pytest.raises(
        TypeError,
        match=rf"^fit takes annotations already read, so reader options do not go to it, but got "
        rf"\['{option}'\]; pass them to the reader and give fit what it returns: "
        rf"fit\(ambppl\.read_annotations\(data, {option}=\.\.\.\), \.\.\.\)$",
    ):
        ambppl.fit(small_counts, **{option: "x"})
    # also before looking at the data (a path with reader options: one message), and for a
    # model of answers the message names its reader
    with pytest.raises(TypeError, match=rf"fit\(ambppl\.read_annotations\(data, {option}="):
        ambppl.fit("answers.csv", **{option: "x"})
    with pytest.raises(TypeError, match=rf"fit\(ambppl\.data\.read_long\(data, {option}="):
        ambppl.fit(small_counts, "rater_effects", **{option: "x"})


def test_numpy_count_matrix():
    result = ambppl.fit(np.array([[3, 1], [0, 4]]), draws=10, chains=1, random_seed=1)
    assert result.attrs.get("cant_solve") is None
    assert set(result["posterior"].data_vars) == {"q", "amb", "amb_modified", "amb_old", "entropy"}


# ---------------------------------------------------------------------------------------
# NUTS (the one compiled model, shared via the session fixture ``nuts_fit``)


def test_nuts_layout_matches_exact(nuts_fit, exact_fit):
    assert set(nuts_fit.children) >= {"posterior", "observed_data", "sample_stats"}
    post, ref = nuts_fit["posterior"], exact_fit["posterior"]
    assert set(post.data_vars) == set(ref.data_vars)
    for name in ref.data_vars:
        assert post[name].dims == ref[name].dims
    assert post["item"].values.tolist() == ref["item"].values.tolist()
    assert post["category"].values.tolist() == ref["category"].values.tolist()
    # sampler=None: PyMC's own choice, nutpie (a core dependency) for this model
    assert nuts_fit.attrs["method"] == "nuts" and post.attrs["sampler"] == "nutpie"
    assert nuts_fit.attrs["prior"] == [1.0, 1.0, 1.0]
    record = json.loads(nuts_fit.attrs["convergence"])
    assert set(record) >= {"r_hat", "ess_bulk", "ess_tail", "divergences", "passed", "failed"}
    assert record["variables"] == sorted(record["variables"], key=list(post.data_vars).index)
    # the fixed prior's log likelihood is the same for every draw, as for exact draws
    np.testing.assert_allclose(
        nuts_fit["log_likelihood"]["counts"].values,
        exact_fit["log_likelihood"]["counts"].values[:, :300],
        rtol=1e-13,
    )
    assert nuts_fit["observed_data"]["counts"].attrs["cant_solve"] == "cs"
    np.testing.assert_array_equal(
        nuts_fit["observed_data"]["counts"].values, exact_fit["observed_data"]["counts"].values
    )


def test_nuts_deterministics_are_the_measures_of_q(nuts_fit):
    post = nuts_fit["posterior"]
    q = post["q"].values
    for name, func in MEASURE_FUNCS.items():
        np.testing.assert_allclose(post[name].values, func(q, cant_solve=2), rtol=1e-9, atol=1e-12)


def test_nuts_agrees_with_exact_within_monte_carlo_error(nuts_fit, exact_fit):
    import arviz as az

    for name in ("amb", "amb_modified", "entropy", "q"):
        nuts = nuts_fit["posterior"][name]
        mcse = az.mcse(nuts).values
        exact = exact_fit["posterior"][name]
        se = exact.std(("chain", "draw"), ddof=1).values / np.sqrt(
            exact.sizes["chain"] * exact.sizes["draw"]
        )
        diff = np.abs(nuts.mean(("chain", "draw")).values - exact.mean(("chain", "draw")).values)
        assert np.all(diff <= 5 * np.sqrt(mcse**2 + se**2)), (name, diff, mcse)


# ---------------------------------------------------------------------------------------
# Errors


@pytest.fixture
def no_exact_catalog(tmp_path, monkeypatch):
    """A catalog with a copy of the model whose info record offers NUTS only."""
    src = get_model("dirichlet_categorical")
    shutil.copy(src.path, tmp_path / "no_exact.py")
    info = {**src.info, "name": "no_exact", "methods": ["nuts"]}
    (tmp_path / "no_exact.json").write_text(json.dumps(info))
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    return tmp_path


def test_method_must_be_one_the_model_offers(small_counts, no_exact_catalog):
    with pytest.raises(
        ValueError,
        match=r"method must be one of the methods of model 'no_exact' \(\['nuts'\]\), but got "
        r"'exact'",
    ):
        ambppl.fit(small_counts, "no_exact", method="exact")


def test_default_method_is_the_models_first(small_counts, no_exact_catalog, monkeypatch):
    seen = {}

    def fake_nuts(job):
        seen["model"] = job.entry.name
        tree = fit_module._assemble({"amb": np.zeros((1, 1, 3))}, job.counts)
        return tree, job.concentration(None)

    monkeypatch.setitem(fit_module._ROUTES, "nuts", fake_nuts)
    monkeypatch.setattr(fit_module, "_check_convergence", lambda *a: None)
    result = ambppl.fit(small_counts, "no_exact")
    assert seen == {"model": "no_exact"} and result.attrs["method"] == "nuts"


def test_nuts_options_choose_a_nuts_method(small_counts, monkeypatch):
    # sampler= or sample_kwargs= without method= pick the model's first NUTS method
    chosen = []
    monkeypatch.setitem(fit_module._ROUTES, "nuts", lambda job: chosen.append("nuts") or 1 / 0)
    with pytest.raises(ZeroDivisionError):
        ambppl.fit(small_counts, sample_kwargs={"tune": 5})
    assert chosen == ["nuts"]


def test_unknown_keywords_are_refused(small_counts):
    with pytest.raises(
        ValueError,
        match=r"^fit's keywords must be parameters of model 'dirichlet_categorical' "
        r"\(\['prior'\]\), but got \['kapa'\]$",
    ):
        ambppl.fit(small_counts, kapa=3.0)
    with pytest.raises(ValueError, match=r"parameters of model .* but got \['sep'\]$"):
        ambppl.fit(small_counts, sep="\t")  # a pandas option is no parameter either


def test_parameters_of_another_model_are_refused(small_counts):
    with pytest.raises(
        ValueError,
        match=r"model 'hierarchical_dirichlet' has the parameters \['kappa_scale', 'mu_prior'\], "
        r"but got \['prior'\] \(parameters of other models\); drop them or choose the model "
        r"that has them$",
    ):
        ambppl.fit(small_counts, "hierarchical_dirichlet", prior=0.5)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"model": "nope"},
            ValueError,
            r"model must be one of \['dawid_skene', 'dirichlet_categorical'",
        ),
        (
            {"method": "mcmc"},
            ValueError,
            r"method must be one of 'exact', 'collapsed', 'empirical_bayes', 'laplace', 'map', "
            r"'nuts', but got 'mcmc'",
        ),
        (
            {"method": "collapsed"},
            ValueError,
            r"method must be one of the methods of model 'dirichlet_categorical' \(\['exact', "
            r"'nuts'\]\), but got 'collapsed'",
        ),
        ({"prior": -1.0}, ValueError, r"prior must be strictly positive"),
        ({"prior": [1.0, 2.0]}, ValueError, r"prior must be .* a vector of 3 positive numbers"),
        ({"prior": "flat"}, TypeError, r"prior must be array-like of numbers"),
        ({"prior": True}, TypeError, r"prior must be a positive number or one per category"),
        ({"random_seed": -1}, ValueError, r"random_seed must be a non-negative int \(a numpy"),
        ({"random_seed": "abc"}, TypeError, r"random_seed must be a non-negative int, a numpy"),
        ({"random_seed": 1.5}, TypeError, r"random_seed must be a non-negative int, a numpy"),
        (
            {"method": "nuts", "sample_kwargs": [1]},
            TypeError,
            r"sample_kwargs must be a dict of pymc.sample keywords .* but got list \[1\]",
        ),
        ({"draws": 0}, ValueError, r"draws must be a positive integer, but got 0"),
        ({"draws": 1.5}, TypeError, r"draws must be a positive integer, but got 1.5"),
        ({"chains": -2}, ValueError, r"chains must be a positive integer, but got -2"),
        ({"var_names": ["qq"]}, ValueError, r"var_names must be a non-empty selection of \['q'"),
        ({"var_names": []}, ValueError, r"var_names must be a non-empty selection"),
        ({"var_names": 3}, TypeError, r"var_names must be a variable name or a list"),
        (
            {"method": "exact", "sampler": "pymc"},
            ValueError,
            r"sampler chooses the NUTS implementation",
        ),
        (
            {"method": "exact", "sample_kwargs": {"tune": 5}},
            ValueError,
            r"sample_kwargs are passed to pymc.sample",
        ),
        ({"method": "nuts", "sampler": "stan"}, ValueError, r"sampler must be one of 'pymc', "),
        (
            {"method": "nuts", "sample_kwargs": {"draws": 5}},
            ValueError,
            r"sample_kwargs must not contain \['draws'\]",
        ),
    ],
)
def test_bad_arguments(small_counts, kwargs, error, match):
    with pytest.raises(error, match=match):
        ambppl.fit(small_counts, **kwargs)


def test_missing_nuts_sampler_package(small_counts, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nutpie" else real(name, *a)
    )
    with pytest.raises(ImportError, match=r"pip install 'ambppl\[nutpie\]'"):
        ambppl.fit(small_counts, method="nuts", sampler="nutpie")
    with pytest.raises(ImportError, match=r"sampler='nutpie' needs the nutpie package"):
        ambppl.fit(small_counts, sampler="nutpie")  # a NUTS sampler implies method="nuts"


def test_the_model_names_its_default_sampler(monkeypatch):
    """A model's info record ``sampler`` is used for method="nuts" when it is installed."""
    from ambppl.inference.catalog import get_model
    from ambppl.inference.fitting import _default_sampler

    entry = get_model("rater_effects")
    assert entry.info["sampler"] == "nutpie"
    assert _default_sampler(get_model("dirichlet_categorical"), "nuts") is None
    assert _default_sampler(entry, "collapsed") is None
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    assert _default_sampler(entry, "nuts") == "nutpie"
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nutpie" else real(name, *a)
    )
    assert _default_sampler(entry, "nuts") is None  # not installed: PyMC's choice


def test_fit_hands_the_default_sampler_to_the_nuts_route(monkeypatch):
    """fit(method="nuts") of a model whose info record names a sampler (rater_effects:
    nutpie) passes that sampler to the NUTS route (the route is replaced by a recorder: no
    compile)."""
    fit_module = importlib.import_module("ambppl.inference.fitting")
    seen = {}

    class Recorded(Exception):
        pass

    def record(job):
        seen["sampler"] = job.sampler
        raise Recorded

    monkeypatch.setitem(fit_module._ROUTES, "nuts", record)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    answers = pd.DataFrame(
        {"item": [1, 1, 2, 2], "rater": ["a", "b", "a", "b"], "label": ["x", "y", "x", "x"]}
    )
    answers = read_long(answers, item="item", rater="rater", label="label")
    with pytest.raises(Recorded):
        ambppl.fit(answers, "rater_effects", method="nuts")
    assert seen["sampler"] == "nutpie"


def test_threaded_samplers_get_one_core_per_chain(small_counts, monkeypatch):
    """PyMC counts half the CPUs (2 cores -> 1, chains in turn); fit passes cores itself."""
    import importlib

    import pymc as pm

    fit_module = importlib.import_module("ambppl.inference.fitting")
    seen = {}

    def fake_sample(**kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop")

    monkeypatch.setattr(pm, "sample", fake_sample)
    monkeypatch.setattr(fit_module, "usable_cpus", lambda: 2)
    monkeypatch.setattr(fit_module, "_check_sampler", lambda s: s)
    for sampler, sample_kwargs, cores in [
        ("nutpie", None, 2),
        ("numpyro", {"cores": 1}, 1),
        ("pymc", None, None),
        (None, None, 2),  # PyMC picks nutpie itself (its default with the Numba linker)
        (None, {"init": "adapt_diag"}, None),  # PyMC keeps its own NUTS
    ]:
        seen.clear()
        with pytest.raises(RuntimeError, match="stop"):
            ambppl.fit(
                small_counts, method="nuts", sampler=sampler, chains=4, sample_kwargs=sample_kwargs
            )
        assert seen.get("cores") == cores, sampler


def test_usable_cpus_is_the_affinity_mask():
    import os

    from ambppl.inference.fitting import usable_cpus

    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert usable_cpus() == expected >= 1


def test_bad_data(small_counts):
    # transposed counts: the message names the fix (it had said only what was wrong)
    with pytest.raises(
        ValueError,
        match=r"dims \('item', 'category'\), but got dims \('category', 'item'\); put them "
        r"in that order with data\.transpose\('item', 'category'\)$",
    ):
        ambppl.fit(small_counts.T)
    with pytest.raises(ValueError, match=r"got dims \('task', 'category'\); name them with"):
        ambppl.score(small_counts.rename(item="task"))
    with pytest.raises(ValueError, match=r"counts must be whole numbers"):
        ambppl.fit(small_counts * 0.5)
    with pytest.raises(
        ValueError, match=r"attrs\['cant_solve'\] must be one of the category labels"
    ):
        ambppl.fit(small_counts.assign_attrs(cant_solve="maybe"))
    with pytest.raises(ValueError, match=r"counts must have at least one item"):
        ambppl.fit(small_counts.isel(item=[]))


def test_nuts_var_names_keeps_only_what_was_asked(small_counts):
    # PyMC's convergence checks need the free variable q in the trace; fit samples it and
    # drops it afterwards (this used to fail inside pm.sample).
    import ambppl

    with pytest.warns(ambppl.ConvergenceWarning, match=r"ess_tail"):  # 200 draws < 400
        tree = ambppl.fit(
            small_counts,
            method="nuts",
            draws=100,
            chains=2,
            random_seed=3,
            var_names=["amb"],
            sample_kwargs={"tune": 100, "cores": 1},
        )
    assert list(tree["posterior"].data_vars) == ["amb"]
    assert tree["posterior"]["amb"].dims == ("chain", "draw", "item")
    assert tree["posterior"]["amb"].shape == (2, 100, 3)


# ---------------------------------------------------------------------------------------
# The convergence standard (checked on fabricated draws: no sampler involved)


def _tree_with_draws(values: np.ndarray, diverging: int = 0) -> xr.DataTree:
    chains, draws = values.shape
    stats = np.zeros((chains, draws), dtype=bool)
    stats.flat[:diverging] = True
    return xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset({"kappa": (("chain", "draw"), values)}),
            "sample_stats": xr.Dataset({"diverging": (("chain", "draw"), stats)}),
        }
    )


def test_convergence_standard_passes_independent_draws():
    tree = _tree_with_draws(np.random.default_rng(5).normal(size=(4, 1000)))
    fit_module._check_convergence(tree, get_model("hierarchical_dirichlet"), "collapsed")
    record = json.loads(tree.attrs["convergence"])
    assert record["passed"] and record["failed"] == [] and record["variables"] == ["kappa"]
    assert record["divergences"] == 0 and record["r_hat"] < 1.01


def test_convergence_standard_flags_a_sticky_chain_and_divergences():
    rng = np.random.default_rng(6)
    x = np.zeros((4, 1000))  # AR(1) with rho = 0.99: ESS ~ 4000 * 0.01 / 1.99 ~ 20
    for t in range(1, 1000):
        x[:, t] = 0.99 * x[:, t - 1] + rng.normal(size=4)
    tree = _tree_with_draws(x)
    with pytest.warns(ambppl.ConvergenceWarning, match=r"missed the convergence standard"):
        fit_module._check_convergence(tree, get_model("hierarchical_dirichlet"), "collapsed")
    assert {"ess_bulk", "ess_tail"} <= set(json.loads(tree.attrs["convergence"])["failed"])
    tree = _tree_with_draws(rng.normal(size=(4, 1000)), diverging=3)
    with pytest.warns(ambppl.ConvergenceWarning, match=r'"divergences": 3'):
        fit_module._check_convergence(tree, get_model("hierarchical_dirichlet"), "collapsed")
    assert json.loads(tree.attrs["convergence"])["failed"] == ["divergences"]


def test_long_models_get_one_row_per_answer(tmp_path, monkeypatch):
    import pandas as pd

    write_long_model(tmp_path)
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    seen = {}

    def fake_nuts(job):
        seen["built"] = job.entry.build(job.answers)
        seen["counts"] = job.counts
        return fit_module._assemble({"amb": np.zeros((1, 2, 2))}, job.counts), job.concentration(
            None
        )

    monkeypatch.setitem(fit_module._ROUTES, "nuts", fake_nuts)
    monkeypatch.setattr(fit_module, "_check_convergence", lambda *a: None)
    frame = pd.DataFrame(
        {"doc": [1, 1, 1, 2], "who": ["r1", "r2", "r1", "r3"], "answer": ["a", "?", "a", "b"]}
    )
    columns = {"item": "doc", "rater": "who", "label": "answer", "cant_solve": "?"}
    result = ambppl.fit(read_long(frame, **columns), "answers_model", draws=2, chains=1)
    built = seen["built"]
    assert list(built.columns) == ["item", "rater", "label"] and len(built) == 4
    assert list(built["label"].cat.categories) == ["a", "b", "?"]  # can't-solve last
    assert seen["counts"].attrs["n_raters"] == 3  # r1, r2, r3
    assert built["rater"].tolist() == ["r1", "r2", "r1", "r3"]
    assert seen["counts"].values.tolist() == [[2, 0, 1], [0, 1, 0]]
    assert result["observed_data"]["counts"].attrs["cant_solve"] == "?"
    assert result["observed_data"]["counts"].attrs["n_raters"] == 3
    # no Dirichlet concentration and no log_likelihood hook: no log_likelihood group
    assert "log_likelihood" not in result.children and "prior" not in result.attrs
    # categories nobody gave are kept, in the order asked (can't-solve last)
    answers = read_long(frame, **columns, categories=["a", "b", "c", "?"])
    ambppl.fit(answers, "answers_model", draws=2, chains=1)
    assert seen["counts"]["category"].values.tolist() == ["a", "b", "c", "?"]
    assert seen["counts"].values.tolist() == [[2, 0, 0, 1], [0, 1, 0, 0]]


# ------------------------------------------------------------------------------------------
# memory: a fit whose draws cannot be stored fails up front


def test_fit_refuses_draws_that_do_not_fit_in_memory(small_counts, monkeypatch):
    """The check counts the fit's peak (ambppl.inference.fitting.memory_needed: the stored
    draws plus the sampler's working chunks), against 80% of the memory available; it used to
    count the stored draws only (9600 bytes here) against all of it."""
    import importlib
    import math

    fit_module = importlib.import_module("ambppl.inference.fitting")
    from ambppl.internal.limits import MEMORY_FRACTION

    peak, stored = fit_module.memory_needed(2, 100, 3, 3, ["amb"], True)
    # 2 chains x 100 draws x 3 items x 8 bytes of amb; the log likelihood of a fixed prior
    # is one value per item (broadcast over the draws): 3 x 8 bytes
    assert stored == 4800 + 24
    # plus 4 working chunks of CHUNK_BYTES and (K + 3) doubles per item
    assert peak == stored + 4 * fit_module.CHUNK_BYTES + 8 * 3 * 6
    short = math.floor(peak / MEMORY_FRACTION) - 1
    monkeypatch.setattr(fit_module, "available_memory", lambda: short)
    with pytest.raises(
        ValueError,
        match=r"would need about .* at its peak: it would store .* of "
        r"draws .*ambppl\.score",
    ) as info:
        ambppl.fit(small_counts, draws=100, chains=2, var_names=["amb"])
    assert "3 items x 2 values per item: amb, log_likelihood" in str(info.value)
    monkeypatch.setattr(fit_module, "available_memory", lambda: math.ceil(peak / MEMORY_FRACTION))
    assert ambppl.fit(small_counts, draws=100, chains=2, var_names=["amb"]) is not None


def test_memory_refusal_states_the_sizes(small_counts, monkeypatch):
    """The message's sizes. Reference: by hand, 4 chains x 2**20 draws x 3 items x 8 bytes of
    amb = 96 MiB stored (+ 24 bytes of log likelihood); the peak adds 4 chunks of 32 MiB:
    224.0 MiB; 2**26 bytes = 64 MiB available, 80% of it 51.2 MiB allowed."""
    import importlib

    fit_module = importlib.import_module("ambppl.inference.fitting")
    monkeypatch.setattr(fit_module, "available_memory", lambda: 2**26)
    with pytest.raises(
        ValueError,
        match=r"need about 224\.0 MiB .* store 96\.0 MiB .* more than "
        r"the 51\.2 MiB allowed \(80% of the 64\.0 MiB available\)",
    ):
        ambppl.fit(small_counts, draws=2**20, chains=4, var_names=["amb"])


def test_default_chains_is_four(small_counts):
    """fit's documented default (docstring: ``chains : int, default 4``)."""
    result = ambppl.fit(small_counts, draws=5, var_names=["amb"], random_seed=1)
    assert result["posterior"].sizes["chain"] == 4


def test_attributes_netcdf_cannot_store_are_converted(small_counts, tmp_path):
    """Bools become 0/1, dicts and lists holding None or mixed types JSON text: the netCDF
    round trip (h5netcdf) is the reference that they can be stored, json.loads that nothing
    was lost."""
    import importlib

    fit_module = importlib.import_module("ambppl.inference.fitting")
    result = ambppl.fit(small_counts, draws=5, chains=1, var_names=["amb"], random_seed=1)
    result.attrs.update(
        {
            "flag": True,
            "np_flag": np.bool_(False),
            "record": {"a": 1, "b": None},
            "mixed": ["x", 1],
            "holes": [1.0, None],
            "plain": [1, 2],
        }
    )
    fit_module._storable_attrs(result)
    result.to_netcdf(tmp_path / "t.nc")
    with xr.open_datatree(tmp_path / "t.nc") as back:
        attrs = back.attrs
        assert int(attrs["flag"]) == 1 and int(attrs["np_flag"]) == 0
        assert json.loads(attrs["record"]) == {"a": 1, "b": None}
        assert json.loads(attrs["mixed"]) == ["x", 1]
        assert json.loads(attrs["holes"]) == [1.0, None]
        assert list(attrs["plain"]) == [1, 2]


def test_available_memory_reads_the_system():
    import importlib

    have = importlib.import_module("ambppl.inference.fitting").available_memory()
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():  # Linux: exactly MemAvailable (kB), the first source it reads
        line = next(x for x in meminfo.read_text().splitlines() if x.startswith("MemAvailable:"))
        # the two reads are moments apart: allow the system's memory to move by 1 %
        assert have == pytest.approx(int(line.split()[1]) * 1024, rel=0.01)
    else:
        assert have is None or 2**20 < have < 2**50  # between a MiB and a PiB


def test_fit_with_progress_refuses_a_progress_that_is_not_callable(small_counts):
    from ambppl.inference.fitting import fit_with_progress

    with pytest.raises(TypeError, match=r"progress must be a callable .* but got 'yes'"):
        fit_with_progress(small_counts, "dirichlet_categorical", method="exact", progress="yes")


@pytest.mark.parametrize(
    ("argv", "fix"),
    [
        (
            ["--method", "nuts"],
            "score this model by its conjugate route: 'ambppl score --model "
            "dirichlet_categorical --method exact' (leave out --method nuts)",
        ),
        (
            ["--model", "hierarchical_dirichlet", "--method", "nuts"],
            "'ambppl score --model hierarchical_dirichlet --method empirical_bayes'",
        ),
    ],
)
def test_memory_refusal_names_the_conjugate_route_of_the_model(
    argv, fix, tmp_path, monkeypatch, capsys
):
    """'ambppl score --method nuts' refused for memory was told to "score a conjugate model
    ... --model dirichlet_categorical", the model it had asked for (audit): the fix is that
    model's conjugate route. In Python the same, in keywords."""
    import importlib

    from ambppl.cli import main

    fit_module = importlib.import_module("ambppl.inference.fitting")
    monkeypatch.setattr(fit_module, "available_memory", lambda: 1000)
    path = tmp_path / "counts.csv"
    path.write_text("item,a,b,cs\ni1,3,1,0\ni2,0,2,2\n", encoding="utf-8")
    base = ["score", str(path), "--layout", "counts", "--cant-solve", "cs", "-q", "-o", "-"]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ambppl: error: the fit would need about") and fix in err, err
    assert "--model dirichlet_categorical, or" not in err
    counts = ambppl.read_annotations(path, format="counts", cant_solve="cs")
    with pytest.raises(
        ValueError,
        match=r"use ambppl\.score\(data, 'hierarchical_dirichlet', "
        r"method='empirical_bayes'\), which stores no per-item draws \(method='nuts' does\)",
    ):
        ambppl.fit(counts, "hierarchical_dirichlet", method="nuts")
