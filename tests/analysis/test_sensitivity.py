"""``ambppl.prior_sensitivity``: posterior means and HDIs under several priors;
``ambppl.hyperprior_sensitivity``: power-scaling sensitivity of a learned prior."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.inference.catalog import get_model
from ambppl.report.writer import render_report


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(12)
    q = rng.dirichlet(2.0 * np.array([0.6, 0.3, 0.1]), size=60)
    values = np.array([rng.multinomial(6, p) for p in q])
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(60), "category": ["a", "b", "cs"]},
        attrs={"cant_solve": "cs"},
    )


@pytest.fixture(scope="module")
def table(counts):
    with warnings.catch_warnings():  # a short collapsed run may miss the ESS standard
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.prior_sensitivity(
            counts,
            priors=(0.5, 2.0, "hierarchical", "empirical_bayes"),
            draws=1000,
            chains=2,
            random_seed=5,
        )


def test_layout(table, counts):
    assert table.index.tolist() == counts["item"].values.tolist()
    assert table.columns.names == ["prior", "statistic"]
    assert table.columns.get_level_values(0).unique().tolist() == [
        "beta=0.5",
        "beta=2",
        "hierarchical",
        "empirical_bayes",
    ]
    assert table.columns.get_level_values(1).unique().tolist() == ["mean", "hdi_lower", "hdi_upper"]
    assert table.attrs["measure"] == "amb" and 0 < table.attrs["hdi_prob"] < 1
    assert set(table.attrs["learned"]) == {"hierarchical", "empirical_bayes"}
    for block in ("beta=0.5", "hierarchical"):
        part = table[block]
        assert np.all(part["hdi_lower"] <= part["mean"]) and np.all(
            part["mean"] <= part["hdi_upper"]
        )


def test_threshold_adds_p_above_matching_the_exact_law(counts):
    # independent reference: the exact two-class law of amb under Dirichlet(counts + beta)
    # (ambiguity_posterior, method "exact"); 2 x 1000 independent draws per item, tolerance
    # 5 binomial standard errors of P(amb > t)
    beta, t = 1.0, 0.3
    table = ambppl.prior_sensitivity(
        counts, priors=(beta,), threshold=t, draws=1000, chains=2, random_seed=3
    )
    assert table.columns.get_level_values(1).tolist()[-1] == "p_above"
    assert table.attrs["threshold"] == t
    alpha = counts.values[:12] + beta
    exact = np.array(
        [ambppl.ambiguity_posterior(a, cant_solve=2, method="exact").sf(t) for a in alpha]
    )
    got = table[("beta=1", "p_above")].to_numpy()[:12]
    se = np.sqrt(np.clip(exact * (1 - exact), 1e-4, None) / 2000)
    assert np.all(np.abs(got - exact) <= 5 * se)


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_fixed_priors_match_the_closed_form(table, counts, beta):
    # independent reference: the closed-form posterior mean under Dirichlet(beta + counts);
    # 2000 independent draws per item, tolerance 5 standard errors (sd <= 0.3)
    exact = ambppl.dirichlet_mean(counts.values + beta, cant_solve=2)
    got = table[(f"beta={beta:g}", "mean")].to_numpy()
    assert np.all(np.abs(got - exact) <= 5 * 0.3 / np.sqrt(2000))


def test_empirical_bayes_column_is_the_closed_form_under_its_estimate(table, counts):
    # independent reference: given the estimate, the posterior of q_i is
    # Dirichlet(kappa * mu + counts_i), whose mean amb has a closed form
    learned = table.attrs["learned"]["empirical_bayes"]
    assert sum(learned["mu"]) == pytest.approx(1.0, rel=1e-12) and learned["kappa"] > 0
    a = learned["kappa"] * np.asarray(learned["mu"])
    exact = ambppl.dirichlet_mean(counts.values + a, cant_solve=2)
    got = table[("empirical_bayes", "mean")].to_numpy()
    assert np.all(np.abs(got - exact) <= 5 * 0.3 / np.sqrt(2000))


@pytest.mark.parametrize(
    ("priors", "match"),
    [
        ((), r"priors must be a non-empty sequence"),
        (0.5, r"priors must be a non-empty sequence"),
        (
            (0.5, "flat"),
            r"^priors must hold positive numbers, vectors of 3 positive numbers or the names "
            r"\['empirical_bayes', 'hierarchical'\], but priors\[1\] is 'flat'$",
        ),
        ((-1.0,), r"^priors\[0\] must be strictly positive and finite"),
        ((0.5, [1.0, 2.0]), r"^priors\[1\] must be .* a vector of 3 positive numbers"),
        ((1.0, [2.0, 2.0, 2.0], [1, 1, 1]), r"priors must be distinct .* beta=1 more than once"),
        ((1, 1.0), r"priors must be distinct .* beta=1 more than once"),
        (("hierarchical", 0.5, "hierarchical"), r"priors must be distinct .* hierarchical more"),
    ],
)
def test_bad_priors(counts, priors, match):
    with pytest.raises(ValueError, match=match):
        ambppl.prior_sensitivity(counts, priors=priors, draws=10, chains=1)


def test_priors_that_round_alike_keep_their_own_columns(counts):
    """Labels are ``:g`` unless that rounds: 0.1234561 and 0.1234564 were both
    "beta=0.123456", and the second fit silently replaced the first."""
    table = ambppl.prior_sensitivity(
        counts, priors=(1.0, 0.1234561, 0.1234564), draws=20, chains=1, random_seed=1
    )
    assert table.columns.get_level_values(0).unique().tolist() == [
        "beta=1",
        "beta=0.1234561",
        "beta=0.1234564",
    ]


def test_takes_annotations_already_read(counts, tmp_path):
    """A path or a reader option: one TypeError naming the reader (only it reads files)."""
    path = tmp_path / "answers.csv"
    path.write_text("task,worker,label\na,w1,x\n")
    with pytest.raises(
        TypeError,
        match=r"^data must be annotations already read .* but got the path '.*answers\.csv'; "
        r"read it first: ambppl\.read_annotations\('.*answers\.csv', \.\.\.\)$",
    ):
        ambppl.prior_sensitivity(path, priors=(1.0,))
    with pytest.raises(
        TypeError,
        match=r"^prior_sensitivity takes annotations already read, .* but got \['categories'\]; "
        r".*: prior_sensitivity\(ambppl\.read_annotations\(data, categories=\.\.\.\), \.\.\.\)$",
    ):
        ambppl.prior_sensitivity(counts.values, priors=(1.0,), categories=["a", "b", "c"])
    with pytest.raises(TypeError, match=r"prior_sensitivity\(\) got unexpected keyword"):
        ambppl.prior_sensitivity(counts, priors=(1.0,), prior=1.0)


# --- hyperprior_sensitivity (issue 22: a hyperparameter the data cannot pin down) ---


def _two_class(values):
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"category": ["yes", "no"]},
        attrs={"cant_solve": None},
    )


@pytest.fixture(scope="module")
def alike_and_spread():
    """Two data sets of 400 items x 5 answers: every item from ONE q = (0.3, 0.7) (no
    over-dispersion: the likelihood of kappa levels off, kappa -> inf is as any
    large value), and q_i ~ Beta(1, 1) (kappa = 2 pinned down)."""
    rng = np.random.default_rng(20261127)
    alike = rng.multinomial(5, [0.3, 0.7], size=400)
    spread = np.array([rng.multinomial(5, [p, 1 - p]) for p in rng.uniform(size=400)])
    return _two_class(alike), _two_class(spread)


def _median_ratio_prior_squared(counts, result) -> float:
    """Posterior median of kappa with its prior density squared, over the fit's median."""
    import pymc as pm

    model = get_model("hierarchical_dirichlet").module.hyper_model(counts)
    with model:
        pm.Potential("prior_again", model.logp(vars=[model["kappa"]], jacobian=False))
        idata = pm.sample(
            draws=1000,
            tune=1000,
            chains=4,
            random_seed=3,
            target_accept=0.95,
            progressbar=False,
            compute_convergence_checks=False,
            # PyMC's own NUTS, as fit's collapsed route: PyMC's default where nutpie is
            # installed is nutpie, whose compilation for this program of K + 1 numbers took
            # longer than the sampling
            nuts_sampler="pymc",
        )
    assert int(idata.sample_stats["diverging"].sum()) == 0
    return float(idata.posterior["kappa"].median() / result["posterior"]["kappa"].median())


@pytest.mark.slow
def test_hyperprior_sensitivity_flags_kappa_only_where_the_data_cannot_bound_it(
    alike_and_spread,
):
    alike, spread = alike_and_spread
    flagged = {}
    for name, counts in (("alike", alike), ("spread", spread)):
        result = ambppl.fit(counts, "hierarchical_dirichlet", random_seed=3, progressbar=False)
        table = ambppl.hyperprior_sensitivity(result)
        assert list(table.columns) == ["prior", "likelihood", "pinned_down", "diagnosis"]
        assert table.index.tolist() == ["mu[yes]", "mu[no]", "kappa"]
        assert table.loc[["mu[yes]", "mu[no]"], "pinned_down"].all()  # the mean is clear
        flagged[name] = not table.loc["kappa", "pinned_down"]
        # the independent check of the flag: refit with kappa's prior counted twice (its
        # density power-scaled by 2, what psense perturbs); a flagged kappa moves, a pinned-down
        # one stays. (Moving the prior's scale 10x is no check under the half-Cauchy prior: its
        # density of 1 / kappa is flat near 0, so the scale barely moves the alike posterior,
        # median ratio 1.07, while the power does: the shape at 1 / kappa = 0 is the prior's.)
        ratio = _median_ratio_prior_squared(counts, result)
        # measured (seed 3): alike 0.40, spread 0.985 (0.403, 0.987 with PyMC's NUTS for
        # the refit, 2026-12-02); the Monte Carlo error of a log median
        # is about 0.01 here (ESS > 1000), so the bounds below are many MCSE away from both
        # values and from each other
        if flagged[name]:
            assert table.loc["kappa", "diagnosis"] != "ok"
            assert abs(np.log(ratio)) > np.log(1.35), ratio
        else:
            assert table.loc["kappa", "diagnosis"] == "ok"
            assert abs(np.log(ratio)) < 0.1, ratio
    assert flagged == {"alike": True, "spread": False}


@pytest.mark.slow
def test_report_says_the_prior_decides_kappa_on_alike_items(alike_and_spread):
    """The report's learned-prior section opens with the flag, says what decides kappa (the
    prior's shape at 1 / kappa = 0, not its scale) and does not print beta in bold."""
    result = ambppl.fit(
        alike_and_spread[0], "hierarchical_dirichlet", random_seed=3, progressbar=False
    )
    page = render_report(result, top=2, random_seed=5)
    section = re.search(r'<section id="learned-prior">(.*?)</section>', page, flags=re.S)
    flag = re.search(r'<p id="hyperprior-sensitivity-flag">(.*?)</p>', section.group(1), re.S)
    assert flag is not None and "kappa" in flag.group(1)
    assert "shape at 1/&kappa; = 0" in flag.group(1) and "hardly moves it" in flag.group(1)
    assert "set by the prior of &kappa;" in section.group(1)
    assert "<strong>" not in section.group(1).split('<div class="figs">')[0]


def test_hyperprior_sensitivity_needs_a_learned_prior_fit(alike_and_spread):
    counts = alike_and_spread[1]
    eb = ambppl.fit(counts, "hierarchical_dirichlet", method="empirical_bayes", random_seed=1)
    with pytest.raises(ValueError, match=r"result has no log_prior group: .* 'collapsed' or"):
        ambppl.hyperprior_sensitivity(eb)
    with pytest.raises(ValueError, match=r"result has no log_prior group"):
        ambppl.hyperprior_sensitivity(ambppl.fit(counts, draws=50, chains=2, random_seed=1))
    with pytest.raises(TypeError, match=r"result must be an xarray\.DataTree .* but got dict"):
        ambppl.hyperprior_sensitivity({})
    empty = xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"q": ("x", [1.0])}), "log_prior": xr.Dataset({"z": 1.0})}
    )
    with pytest.raises(ValueError, match=r"log_prior group names no posterior variable"):
        ambppl.hyperprior_sensitivity(empty)


@pytest.mark.slow
def test_hyperprior_sensitivity_without_log_likelihood_has_nan_likelihood(alike_and_spread):
    counts = alike_and_spread[1]
    result = ambppl.fit(
        counts,
        "hierarchical_dirichlet",
        draws=500,
        chains=2,
        random_seed=2,
        log_likelihood=False,
        progressbar=False,
    )
    table = ambppl.hyperprior_sensitivity(result, threshold=0.2)
    assert table["likelihood"].isna().all() and table.attrs["threshold"] == 0.2
    assert set(table["diagnosis"]) == {"ok"}  # spread items: every hyperparameter pinned down
    # a prior-sensitive row without the likelihood's sensitivity is not called "weak
    # likelihood" (that needs the likelihood to be insensitive, which was never computed)
    table = ambppl.hyperprior_sensitivity(result, threshold=1e-9)
    assert not table["pinned_down"].any()
    assert set(table["diagnosis"]) == {"prior-sensitive (likelihood not computed)"}
    with pytest.raises(ValueError, match=r"threshold"):
        ambppl.hyperprior_sensitivity(result, threshold=1.5)


@pytest.mark.parametrize(
    "priors",
    [None, 0.5, "hierarchical", {"hierarchical": 1}, np.float64(0.5), np.array(0.5), object()],
)
def test_priors_that_are_not_a_sequence(counts, priors):
    with pytest.raises(ValueError, match=r"^priors must be a non-empty sequence of positive"):
        ambppl.prior_sensitivity(counts, priors=priors, draws=10, chains=1)


def test_priors_as_an_array(counts):
    table = ambppl.prior_sensitivity(
        counts, priors=np.array([0.5, 1.0]), draws=20, chains=1, random_seed=1
    )
    assert table.columns.get_level_values(0).unique().tolist() == ["beta=0.5", "beta=1"]


@pytest.mark.parametrize(
    ("priors", "error", "match"),
    [
        (("hierarchical", -1), ValueError, r"^priors\[1\] must be strictly positive"),
        ((0.5, "empirical_bayes", "flat"), ValueError, r"but priors\[2\] is 'flat'$"),
        (
            [None, 1],
            TypeError,
            # check_prior names None as such (it said "dtype object (None)")
            r"^priors\[0\] must be a positive number or one per category, but got None; "
            r"priors must hold positive numbers, vectors of 3 positive numbers",
        ),
        ([0.5, True], TypeError, r"^priors\[1\] must be a positive number or one per category"),
    ],
)
def test_every_prior_is_checked_before_the_first_fit(counts, monkeypatch, priors, error, match):
    """A bad element further on was refused only when its turn came, after the earlier fits
    (NUTS for "hierarchical"), in a message that named ``prior``, not the element."""
    import ambppl.analysis.sensitivity as sensitivity

    calls = []
    monkeypatch.setattr(sensitivity, "fit", lambda *a, **k: calls.append(k) or 1 / 0)
    with pytest.raises(error, match=match):
        ambppl.prior_sensitivity(counts, priors=priors, draws=10, chains=1)
    assert calls == []


def test_a_vector_prior_gets_its_own_column(counts):
    """A per-category prior (``fit``'s ``prior=[...]``) crashed in the column label after the
    fit; its column is the closed-form posterior mean under Dirichlet(counts + prior)."""
    alpha = [0.25, 1.0, 2.0]
    table = ambppl.prior_sensitivity(
        counts, priors=[alpha, 0.5, np.array([2.0, 2.0, 2.0])], draws=1000, chains=2, random_seed=4
    )
    assert table.columns.get_level_values(0).unique().tolist() == [
        "beta=[0.25, 1, 2]",
        "beta=0.5",
        "beta=2",  # a vector of equal numbers is the symmetric prior
    ]
    # independent reference: the closed-form mean; 2000 independent draws per item,
    # tolerance 5 standard errors (sd <= 0.3)
    for label, a in (("beta=[0.25, 1, 2]", alpha), ("beta=2", [2.0, 2.0, 2.0])):
        exact = ambppl.dirichlet_mean(counts.values + np.asarray(a), cant_solve=2)
        got = table[(label, "mean")].to_numpy()
        assert np.all(np.abs(got - exact) <= 5 * 0.3 / np.sqrt(2000)), label
