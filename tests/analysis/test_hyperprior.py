"""``implied_prior``: the learned prior's hyperparameters and the implied prior of a measure,
against closed forms, and the report's learned-prior section as its rendering."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import xarray as xr

from ambppl.analysis import implied_prior, rank, summarize
from ambppl.inference.fitting import ConvergenceWarning, fit
from ambppl.maths.moments import dirichlet_mean, dirichlet_var
from ambppl.report import render_report, writer


@pytest.fixture(scope="module")
def learned() -> xr.DataTree:
    """A collapsed fit of hierarchical_dirichlet: mu and kappa vary over the draws."""
    rng = np.random.default_rng(20261126)
    q = rng.dirichlet(np.ones(3), size=30)
    counts = xr.DataArray(
        np.vstack([rng.multinomial(10, qi) for qi in q]),
        dims=("item", "category"),
        coords={"item": [f"item{i}" for i in range(30)], "category": ["yes", "no", "cs"]},
        attrs={"cant_solve": "cs"},
    )
    with warnings.catch_warnings():
        # 2 chains x 200 draws may miss the convergence standard; irrelevant here
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit(
            counts,
            "hierarchical_dirichlet",
            draws=200,
            chains=2,
            random_seed=7,
            sample_kwargs={"tune": 300, "cores": 1},
        )


def test_implied_mean_against_the_closed_form(learned: xr.DataTree) -> None:
    """The learned prior's mean of amb is dirichlet_mean(kappa * mu) averaged over the
    posterior draws, within 5 Monte Carlo standard errors; the symmetric priors' means are
    dirichlet_mean(beta * ones)."""
    n = 4000
    out = implied_prior(learned, measure="amb", draws=n, random_seed=11)
    post = learned["posterior"]
    conc = (post["kappa"] * post["mu"]).transpose("chain", "draw", "category").values
    conc = conc.reshape(-1, 3)
    means = dirichlet_mean(conc, measure="amb", cant_solve=-1)
    variances = dirichlet_var(conc, measure="amb", cant_solve=-1)
    # one draw: (mu, kappa) uniform over the posterior draws, then q ~ Dirichlet(kappa * mu)
    se = math.sqrt((variances.mean() + means.var()) / n)
    assert abs(out["implied"][0]["mean"] - means.mean()) <= 5 * se
    assert [i["label"] for i in out["implied"]] == ["learned prior", "beta = 0.5", "beta = 1"]
    for entry, beta in zip(out["implied"][1:], (0.5, 1.0), strict=True):
        alpha = np.full(3, beta)
        exact = dirichlet_mean(alpha, measure="amb", cant_solve=-1)
        mcse = math.sqrt(dirichlet_var(alpha, measure="amb", cant_solve=-1) / n)
        assert abs(entry["mean"] - exact) <= 5 * mcse
    assert [len(v) for v in out["samples"].values()] == [n, n, n]
    assert [float(np.mean(v)) for v in out["samples"].values()] == [
        i["mean"] for i in out["implied"]
    ]
    # hyperparameters: posterior means (kappa: median), beta = kappa / K
    assert [m["mean"] for m in out["mu"]] == pytest.approx(post["mu"].mean(("chain", "draw")))
    assert [m["is_cs"] for m in out["mu"]] == [False, False, True]
    assert out["beta"]["median"] == pytest.approx(float(post["kappa"].median()) / 3)
    assert not out["point_estimate"] and out["n_items"] == 30 and out["n_categories"] == 3


def test_report_section_is_the_function_output(learned: xr.DataTree) -> None:
    """The writer renders implied_prior's numbers (same seed, same stream) and nothing else."""
    table = rank(summarize(learned, hdi_prob=0.9))
    section = writer._learned_prior(learned, table, measure="amb", hdi_prob=0.9, random_seed=3)
    out = implied_prior(
        learned,
        measure="amb",
        hdi_prob=0.9,
        comparison=writer.LEARNED_COMPARISON,
        draws=writer.N_PRIOR_DRAWS,
        random_seed=3,
    )
    for key, value in out.items():
        if key == "samples":
            assert list(section[key]) == list(value)
            for a, b in zip(section[key].values(), value.values(), strict=True):
                np.testing.assert_array_equal(a, b)
        else:
            assert section[key] == value, key
    # and on the page
    page = render_report(learned, top=2, random_seed=5)
    hdi_prob = rank(summarize(learned)).attrs["hdi_prob"]
    out = implied_prior(
        learned,
        hdi_prob=hdi_prob,
        comparison=writer.LEARNED_COMPARISON,
        draws=writer.N_PRIOR_DRAWS,
        random_seed=5,
    )
    html = re.search(r'<section id="learned-prior">(.*?)</section>', page, flags=re.S).group(1)
    shown = re.findall(r"prior mean of <code>amb</code>, ([^<]+)</td><td>([^<]+)</td>", html)
    assert shown == [(i["label"], f"{i['mean']:.3f}") for i in out["implied"]]
    kappa = out["kappa"]
    assert f"{kappa['median']:.3f} [{kappa['lower']:.3f}, {kappa['upper']:.3f}]" in html


def test_refuses_a_fit_without_a_learned_prior(learned: xr.DataTree) -> None:
    flat = fit(learned["observed_data"]["counts"], draws=50, random_seed=1)
    with pytest.raises(ValueError, match="no learned prior"):
        implied_prior(flat)
    with pytest.raises(ValueError, match="measure must be one of"):
        implied_prior(learned, measure="nope")


def test_refuses_what_is_not_a_fit(learned: xr.DataTree) -> None:
    """An array, None or a tree without observed data failed inside (IndexError, 'NoneType'
    not subscriptable, KeyError) instead of naming ``result``."""
    with pytest.raises(TypeError, match=r"^result must be an xarray\.DataTree .* got ndarray$"):
        implied_prior(np.zeros(3))
    with pytest.raises(TypeError, match=r"^result must be an xarray\.DataTree .* got NoneType$"):
        implied_prior(None)
    posterior_only = xr.DataTree.from_dict({"posterior": learned["posterior"].to_dataset()})
    with pytest.raises(ValueError, match=r"^result must have a 'observed_data' group"):
        implied_prior(posterior_only)


@pytest.mark.parametrize(
    ("comparison", "error", "match"),
    [
        (
            (-1.0,),
            ValueError,
            r"^comparison must hold positive .*\[0\] is -1\.0$",
        ),
        ((0.5, math.nan), ValueError, r"^comparison must hold positive finite .*\[1\] is nan$"),
        (("a",), TypeError, r"^comparison must hold numbers .* comparison\[0\] is 'a'$"),
        ((True,), TypeError, r"^comparison must hold numbers .* comparison\[0\] is True$"),
        (0.5, TypeError, r"^comparison must be a sequence of distinct positive numbers"),
        ("0.5", TypeError, r"^comparison must be a sequence of distinct positive numbers"),
        ((0.5, 0.5), ValueError, r"^comparison must hold distinct .* 0\.5 more than once$"),
        ((1e308,), ValueError, r"^comparison\[0\] must sum to at most 1e\+300"),
    ],
)
def test_refuses_a_bad_comparison(
    learned: xr.DataTree, comparison: object, error: type, match: str
) -> None:
    """A bad ``comparison`` failed in the Dirichlet draws (a message about ``shape`` or
    ``q``), or, repeated, gave three implied entries and two samples."""
    with pytest.raises(error, match=match):
        implied_prior(learned, comparison=comparison, draws=10)


def test_comparison_labels_keep_every_digit(learned: xr.DataTree) -> None:
    """Two betas that ``:g`` rounds alike keep their own implied entry and sample."""
    out = implied_prior(learned, comparison=np.array([0.1234561, 0.1234564]), draws=10)
    assert [i["label"] for i in out["implied"]] == [
        "learned prior",
        "beta = 0.1234561",
        "beta = 0.1234564",
    ]
    assert len(out["samples"]) == len(out["implied"]) == 3
    assert implied_prior(learned, comparison=(), draws=10)["implied"][0]["label"] == "learned prior"
