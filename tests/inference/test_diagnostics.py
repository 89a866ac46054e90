"""Tests of ambppl.inference.diagnostics: vectorized R-hat and ESS equal to ArviZ's, scalar by
scalar.

The reference is ArviZ itself (``arviz.rhat`` and ``arviz.ess`` on DataArrays, arviz-stats
1.3), on draws that exercise every branch: autocorrelated and anti-correlated chains,
disagreeing chains, ties (discrete draws, indicators, rare events), heavy tails, one chain,
odd and tiny numbers of draws, constant scalars, NaN and infinite draws.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from ambppl.inference import diagnostics as diag
from ambppl.inference.convergence import check_convergence

RTOL = 1e-8


def _arviz(x, prob=None):
    """ArviZ's rank R-hat, bulk ESS and tail ESS of draws (chain, draw, ...)."""
    import arviz as az

    da = xr.DataArray(x, dims=("chain", "draw", *(f"d{i}" for i in range(x.ndim - 2))))
    with np.errstate(all="ignore"):  # ArviZ divides 0 by 0 for constant scalars
        return {
            "r_hat": az.rhat(da).values,
            "ess_bulk": az.ess(da, method="bulk").values,
            "ess_tail": az.ess(da, method="tail", prob=prob).values,
        }


def _ar1(rng, shape, phi):
    x = np.zeros(shape)
    noise = rng.normal(size=shape)
    for t in range(1, shape[1]):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def _cases():
    rng = np.random.default_rng(20240601)
    special = rng.normal(size=(2, 50, 7))
    special[:, :, 0] = 3.0  # constant
    special[:, :, 1] = np.arange(2)[:, None]  # constant within chains
    special[0, 3, 2] = np.nan  # one NaN
    special[:, :, 3] = 0.0
    special[0, :, 3] = 1.0  # constant within split chains, two values
    special[1, 5, 4] = np.inf  # one infinite draw: ArviZ's own function
    special[:, :, 5] = np.nan  # all NaN
    return {
        "normal": rng.normal(size=(4, 200, 30)),
        "ar1": _ar1(rng, (2, 300, 20), 0.95),
        "ar1_sticky": _ar1(rng, (2, 400, 10), 0.995),
        "ar1_negative": _ar1(rng, (2, 300, 10), -0.7),
        "shifted_means": rng.normal(size=(3, 101, 10))
        + np.arange(3)[:, None, None] * np.linspace(0, 2, 10),
        "ties": rng.integers(0, 4, size=(2, 150, 20)).astype(float),
        "ties_int": rng.integers(0, 3, size=(2, 50, 4, 5)),
        "binary": rng.integers(0, 2, size=(2, 100, 30)).astype(float),
        "rare": (rng.random(size=(2, 200, 30)) < 0.02).astype(float),
        "heavy_tails": rng.standard_cauchy(size=(2, 200, 20)),
        "one_chain": rng.normal(size=(1, 100, 10)),
        "odd_draws": rng.normal(size=(2, 7, 10)),
        "odd_draws_long": _ar1(rng, (3, 255, 10), 0.6),
        "four_draws": rng.normal(size=(2, 4, 10)),
        "five_draws": rng.normal(size=(2, 5, 10)),
        "three_draws": rng.normal(size=(2, 3, 4)),
        "float32": rng.normal(size=(2, 100, 10)).astype(np.float32),
        "scalar": rng.normal(size=(4, 100)),
        "special": special,
    }


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("prob", [None, 0.95, (0.1, 0.8)])
def test_equals_arviz(name, prob):
    x = CASES[name]
    ours = diag.diagnose(x, prob=prob)
    ref = _arviz(x, prob=prob)
    for key, value in ref.items():
        assert ours[key].shape == value.shape == x.shape[2:]
        np.testing.assert_allclose(ours[key], value, rtol=RTOL, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mean_ess_and_mcse_equal_arviz(name):
    """ESS and MCSE of the mean (the closed-form check's standard error) against
    ``arviz.ess(method="mean")`` and ``arviz.mcse(method="mean")``."""
    import arviz as az

    x = CASES[name]
    da = xr.DataArray(x, dims=("chain", "draw", *(f"d{i}" for i in range(x.ndim - 2))))
    with np.errstate(all="ignore"):
        ess_ref = az.ess(da, method="mean").values
        mcse_ref = az.mcse(da, method="mean").values
    ess = diag.diagnose(x, what=("ess_mean",))["ess_mean"]
    np.testing.assert_allclose(ess, ess_ref, rtol=RTOL, atol=0, equal_nan=True)
    np.testing.assert_array_equal(diag.ess_mean(x), ess)
    # ArviZ's sd of float32 draws is a float32 sum (error ~ 1e-7): to that dtype's rounding
    rtol = RTOL if x.dtype != np.float32 else 50 * np.finfo(np.float32).eps
    np.testing.assert_allclose(diag.mcse_mean(x), mcse_ref, rtol=rtol, atol=0, equal_nan=True)


def test_special_values():
    out = diag.diagnose(CASES["special"])
    # constant: R-hat NaN (0/0), ESS the number of split draws; NaN draws: NaN
    assert np.isnan(out["r_hat"][[0, 2, 5]]).all()
    assert out["ess_bulk"][0] == out["ess_tail"][0] == 100
    assert np.isnan(out["ess_bulk"][[2, 5]]).all()
    assert out["r_hat"][1] == np.inf  # constant chains that disagree
    assert np.isnan(diag.rhat(CASES["one_chain"])).all()
    assert np.isnan(diag.ess_bulk(CASES["three_draws"])).all()


def test_blocks_and_single_functions(monkeypatch):
    x = np.concatenate([CASES["ar1"][:, :150], CASES["ties"], CASES["normal"][:2, :150]], axis=2)
    whole = diag.diagnose(x)
    monkeypatch.setattr(diag, "BLOCK_ELEMENTS", 7 * x.shape[0] * x.shape[1])
    blocks = diag.diagnose(x)
    for key in whole:
        np.testing.assert_array_equal(blocks[key], whole[key])
    np.testing.assert_array_equal(diag.rhat(x), whole["r_hat"])
    np.testing.assert_array_equal(diag.ess_bulk(x), whole["ess_bulk"])
    np.testing.assert_array_equal(diag.ess_tail(x), whole["ess_tail"])
    assert set(diag.diagnose(x, what=("ess_tail",))) == {"ess_tail"}


def test_default_tail_probability_follows_arviz_rcparams():
    from arviz_base import rc_context

    x = CASES["ar1"]
    with rc_context({"stats.ci_prob": 0.9}):
        ours = diag.ess_tail(x)
        ref = _arviz(x)["ess_tail"]
    np.testing.assert_allclose(ours, ref, rtol=RTOL)
    np.testing.assert_allclose(ours, diag.ess_tail(x, prob=0.9), rtol=0)


def test_bad_input():
    with pytest.raises(ValueError, match="chain, draw"):
        diag.diagnose(np.zeros(10))
    with pytest.raises(ValueError, match="unknown"):
        diag.diagnose(np.zeros((2, 10)), what=("mcse",))
    with pytest.raises(ValueError, match="prob"):
        diag.ess_tail(np.zeros((2, 10)), prob=1.5)


def _check_with_arviz(tree, names):
    """check_convergence's record as computed before, from ArviZ's Dataset functions."""
    import arviz as az

    ds = tree["posterior"].to_dataset()[names]
    rhat, bulk = az.rhat(ds), az.ess(ds, method="bulk")
    tail = az.ess(ds, method="tail")
    return {
        "r_hat": max(float(np.nanmax(rhat[v].values)) for v in names),
        "ess_bulk": min(float(np.nanmin(bulk[v].values)) for v in names),
        "ess_tail": min(float(np.nanmin(tail[v].values)) for v in names),
    }


def test_check_convergence_record_matches_arviz():
    rng = np.random.default_rng(3)
    theta = rng.normal(size=(2, 400, 6, 3))
    theta[1] += 0.3  # chains that disagree a little
    tree = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(
                {
                    # draw dims not first: check_convergence puts chain, draw first
                    "theta": (("item", "chain", "draw", "cat"), theta.transpose(2, 0, 1, 3)),
                    "mu": (("chain", "draw"), _ar1(rng, (2, 400), 0.8)),
                }
            )
        }
    )
    with pytest.warns(UserWarning, match="missed the convergence standard"):
        record = check_convergence(tree, ["theta", "mu"])
    ref = _check_with_arviz(tree, ["theta", "mu"])
    for key, value in ref.items():
        assert record[key] == pytest.approx(value, rel=RTOL)
    assert json.loads(tree.attrs["convergence"]) == record


def test_what_as_one_name_is_one_diagnostic():
    # a string was iterated: "unknown diagnostics ['_', 'a', 'h', 'r', 't']"
    x = np.random.default_rng(0).normal(size=(2, 50, 3))
    out = diag.diagnose(x, what="r_hat")
    assert list(out) == ["r_hat"]
    np.testing.assert_array_equal(out["r_hat"], diag.diagnose(x, what=("r_hat",))["r_hat"])
    with pytest.raises(
        ValueError,
        match=r"^what must name diagnostics among 'r_hat', 'ess_bulk', 'ess_tail', 'ess_mean', "
        r"but got unknown diagnostics \['rhat'\]$",
    ):
        diag.diagnose(x, what="rhat")
    with pytest.raises(TypeError, match=r"^what must be a diagnostic's name or a sequence"):
        diag.diagnose(x, what=3)


@pytest.mark.parametrize(
    "func", [diag.mcse_mean, diag.diagnose, diag.rhat, diag.ess_bulk, diag.ess_tail, diag.ess_mean]
)
def test_draws_that_are_not_numbers_are_named(func):
    # mcse_mean("abc") raised "could not convert string to float"
    with pytest.raises(TypeError, match=r"^ary must be array-like of numbers, but got dtype <U3"):
        func("abc")
    with pytest.raises(TypeError, match=r"^ary must be array-like of numbers"):
        func([["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match=r"^ary must be draws of shape \(chain, draw, \.\.\.\)"):
        func(np.zeros(10))


def test_tail_prob_that_is_not_a_level_is_named():
    x = np.random.default_rng(0).normal(size=(2, 50))
    # prob="a" raised "not enough values to unpack"
    for bad in ("a", "ab", True, 0.5j, {"low": 0.1}):
        with pytest.raises(TypeError, match=r"^prob must be a number in \(0, 1\] or a pair"):
            diag.ess_tail(x, prob=bad)
    for bad in ((0.1,), (0.1, 0.5, 0.9), (0.5, 1.5), 0.0, float("nan")):
        with pytest.raises(ValueError, match=r"^prob must be a number in \(0, 1\] or a pair"):
            diag.ess_tail(x, prob=bad)
    with pytest.raises(TypeError, match=r"^prob must be"):
        diag.ess_tail(x, prob=("a", 0.9))
    # a pair as an array, and a 0-d array, are levels like any other
    np.testing.assert_allclose(
        diag.ess_tail(x, prob=np.array([0.05, 0.95])), diag.ess_tail(x, prob=(0.05, 0.95))
    )
    np.testing.assert_allclose(diag.ess_tail(x, prob=np.array(0.9)), diag.ess_tail(x, prob=0.9))
