"""``ambppl.prior_sensitivity``: posterior means and HDIs under several priors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

import ambppl


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
        ((0.5, "flat"), r"priors must hold positive numbers or the names \['empirical_bayes', "),
        ((-1.0,), r"prior must be strictly positive"),
    ],
)
def test_bad_priors(counts, priors, match):
    with pytest.raises(ValueError, match=match):
        ambppl.prior_sensitivity(counts, priors=priors, draws=10, chains=1)
