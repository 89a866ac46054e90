"""Tests for ambppl.maths.approx: the moment-matched laws, the accuracy map and its rule."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as st

import ambppl
from ambppl.maths.approx import (
    MAP_FILE,
    MISMATCH_MAX,
    approximate_distribution,
    fit_beta,
    fit_pearson,
    moment_mismatch,
)

ROOT = Path(__file__).resolve().parents[2]
KS_99 = 1.63  # 99 % quantile of sqrt(n) * KS distance of n exact draws from their own law


def _load_benchmark():
    spec = importlib.util.spec_from_file_location(
        "accuracy_map", ROOT / "benchmarks" / "accuracy_map.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ks(dist, row, draws):
    """sup_x |F_approx(x) - F_n(x)| over all draws (both sides of each jump)."""
    x = np.sort(draws)
    n = x.size
    f = dist.cdf(x[:, None])[:, row]
    i = np.arange(n)
    return float(max(np.max(f - i / n), np.max((i + 1) / n - f)))


# ------------------------------------------------------------------ against exact laws
def test_two_classes_against_the_exact_law():
    # reference: ambppl.ambiguity_posterior's exact C = 2 CDF (quadrature of the paper's
    # integral, tested to 1e-14 in test_exact.py) on a fine grid; where the map says
    # accurate, the approximation must be within the mapped error
    alpha = np.array(
        [
            [300.5, 200.5, 10.5],
            [1000.5, 50.5, 20.5],
            [40.5, 40.5, 5.5],
            [2.5, 1.5, 0.5],
            [150.0, 30.0, 60.0],
            [5000.5, 4000.5, 900.5],
            [500.5, 300.5, 200.5],
            [2000.5, 1500.5, 30.5],
            [700.5, 200.5, 100.5],
            [800.5, 100.5, 40.5],
            [3000.5, 300.5, 100.5],
            [400.5, 60.5, 15.5],
        ]
    )
    checked = 0
    for measure in ("amb", "modified"):
        approx = approximate_distribution(alpha, measure)
        exact = ambppl.ambiguity_posterior(alpha, measure)
        lo, hi = exact.ppf(1e-6), exact.ppf(1 - 1e-6)
        x = lo + (hi - lo) * np.linspace(0.0, 1.0, 801)[:, None]
        err = np.max(np.abs(approx.cdf(x) - exact.cdf(x)), axis=0)
        assert np.all(err[approx.accurate] <= approx.max_error[approx.accurate]), (measure, err)
        checked += int(np.sum(approx.accurate))
    assert checked >= 8
    # the small-count row is outside what the map trusts at bound 0.005
    assert not approximate_distribution(alpha[3]).accurate


def test_off_map_shapes_against_exact_draws():
    # reference: 200,000 exact Dirichlet draws per alpha through ambppl.maths.measures; shapes
    # drawn at random (not the map's four); tolerance = mapped error + the draws' own KS
    # 99 % quantile 1.63 / sqrt(n)
    rng = np.random.default_rng(2026)
    n = 200_000
    checked = 0
    for case in range(10):
        k = int(rng.integers(4, 13))
        alpha = rng.dirichlet(np.full(k, 1.0)) * float(
            np.exp(rng.uniform(np.log(300), np.log(5000)))
        )
        alpha = alpha + 0.5  # a Jeffreys-like prior on top of "counts"
        q = rng.dirichlet(alpha, size=n)
        for measure, func in (("amb", ambppl.amb), ("modified", ambppl.amb_modified)):
            approx = approximate_distribution(alpha[None, :], measure)
            if not approx.accurate[0]:
                continue
            d = _ks(approx, 0, func(q))
            assert d <= approx.max_error[0] + KS_99 / math.sqrt(n), (case, measure, alpha, d)
            checked += 1
    assert checked >= 3


# ------------------------------------------------------------------ the map and its rule
def test_map_file_covers_the_promised_grid():
    data = json.loads(MAP_FILE.read_text(encoding="utf-8"))
    assert MAP_FILE.parent == Path(ambppl.__file__).parent / "maths"  # package data, in the wheel
    assert data["n_draws"] >= 1_000_000
    assert data["mc_allowance"] == pytest.approx(KS_99 / math.sqrt(data["n_draws"]), abs=1e-5)
    assert data["K"][0] == 3 and data["K"][-1] == 20
    assert data["alpha0"][0] == 1.0 and data["alpha0"][-1] == 1e4
    assert np.all(np.diff(np.log10(data["alpha0"])) <= 0.53)  # log grid, <= 3.4x steps
    for key in ("amb|cs", "amb|nocs", "modified|cs", "modified|nocs"):
        for family in ("beta", "pearson"):
            shapes = data["ks"][key][family]
            expected = {"symmetric", "dominant", "tie", "near_tie", "graded", "leader"}
            if key.endswith("|cs"):
                expected.add("heavy_cs")
            assert set(shapes) == expected == set(data["mismatch"][key][family])
            for shape, table in shapes.items():
                arr = np.array(table)
                assert arr.shape == (len(data["K"]), len(data["alpha0"]))
                assert np.all((arr > 0) & (arr <= 1))
                assert np.all(np.array(data["mismatch"][key][family][shape]) >= 0)


def test_map_cell_reproduces_with_fewer_draws():
    # reference: the benchmark's own cell routine rerun with a different seed and 200,000
    # draws; two KS distances against the same law differ by at most the sum of the two
    # samples' KS 99 % quantiles (and the 1/4000 grid of the supremum, twice)
    bench = _load_benchmark()
    data = json.loads(MAP_FILE.read_text(encoding="utf-8"))
    n = 200_000
    shape, k, alpha0 = "tie", 5, 100.0  # a cell with a large error (0.06)
    cell = bench.measure_cell(shape, k, alpha0, n, seed=7)
    i, j = data["K"].index(k), data["alpha0"].index(alpha0)
    tol = KS_99 / math.sqrt(n) + KS_99 / math.sqrt(data["n_draws"]) + 2 / 4000
    for key, per_family in cell.items():
        for family, (d, mismatch) in per_family.items():
            stored = data["ks"][key][family][shape][i][j]
            assert abs(d - stored) <= tol, (key, family, d, stored)
            # the mismatch depends on alpha only: reproduced to its stored rounding
            assert mismatch == pytest.approx(data["mismatch"][key][family][shape][i][j], abs=1e-4)


def _expected_error(data, key, family, ki, aj):
    """Worst KS over passing shapes + allowance, max over the 2 x 2 bracketing cells (a cell
    where no shape passes is inf: no evidence)."""
    worst = -np.inf
    for i in (ki, ki + 1):
        for j in (aj, aj + 1):
            cell = [
                table[i][j]
                for shape, table in data["ks"][key][family].items()
                if data["mismatch"][key][family][shape][i][j] <= MISMATCH_MAX[family]
            ]
            worst = max(worst, max(cell) if cell else np.inf)
    return worst + data["mc_allowance"]


def test_rule_takes_the_worst_passing_shape_and_the_larger_neighbour():
    # reference: the JSON read directly and the rule written out again here
    data = json.loads(MAP_FILE.read_text(encoding="utf-8"))
    ki = data["K"].index(6)  # K = 7 lies between grid values 6 and 8
    aj = data["alpha0"].index(3000.0)  # alpha_0 = 5000 lies between 3000 and 10^4
    weights = np.array([80.0, 5.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    alpha = weights / weights.sum() * 5000.0
    checked = 0
    for family in ("beta", "pearson"):
        d = approximate_distribution(alpha, method=family)
        if str(d.family) != family or d.mismatch > MISMATCH_MAX[family]:
            continue  # outside Pearson type I, or rejected by the moment check
        expect = _expected_error(data, "amb|cs", family, ki, aj)
        assert float(d.max_error) == pytest.approx(expect, abs=1e-12)
        assert bool(d.accurate) == (expect <= d.bound)
        checked += 1
    assert checked == 2
    auto = approximate_distribution(alpha)
    assert float(auto.max_error) <= float(approximate_distribution(alpha, method="beta").max_error)
    # outside the grid: never trusted (alpha_0 = 0.6, alpha_0 = 4e4, K = 21)
    outside = approximate_distribution([[0.2, 0.2, 0.2], [2e4, 1e4, 1e4]])
    assert np.all(np.isinf(outside.max_error)) and not np.any(outside.accurate)
    wide = approximate_distribution(np.full(21, 50.0))
    assert np.isinf(wide.max_error) and not wide.accurate
    assert bool(auto.trusted(0.999)) == bool(np.isfinite(auto.max_error))
    assert not bool(auto.trusted(1e-9))


def test_ties_fail_the_moment_check_and_are_not_trusted():
    # reference: the exact C = 2 law (ambppl.ambiguity_posterior): near a two-way tie with a
    # rare can't-solve the amb density is infinite at 1/2 (ERRATA 4) and no Beta fits
    alpha = np.array([[400.5, 400.5, 0.5], [2000.5, 1990.5, 0.5]])
    d = approximate_distribution(alpha)
    assert np.all(d.mismatch > MISMATCH_MAX["pearson"]) and np.all(d.family == "beta")
    assert np.all(d.mismatch > MISMATCH_MAX["beta"])
    assert np.all(np.isinf(d.max_error)) and not np.any(d.accurate)
    exact = ambppl.ambiguity_posterior(alpha)
    x = np.linspace(0.45, 0.55, 2001)[:, None]
    assert np.all(np.max(np.abs(d.cdf(x) - exact.cdf(x)), axis=0) > 0.05)


# ------------------------------------------------------------------ the families and methods
def test_families_match_the_exact_moments():
    # reference: scipy.stats.beta's own moments of the fitted (loc, scale) Beta
    rng = np.random.default_rng(3)
    alpha = rng.uniform(5.0, 400.0, size=(20, 6))
    for measure in ("amb", "modified"):
        m = ambppl.dirichlet_moments(alpha, measure)
        a, b, lo, hi = fit_beta(m.mean, m.var, 0.0, 1.0)
        mean, var = st.beta(a, b, loc=lo, scale=hi - lo).stats(moments="mv")
        np.testing.assert_allclose(mean, m.mean, rtol=1e-12)
        np.testing.assert_allclose(var, m.var, rtol=1e-10)
        (a, b, lo, hi), ok = fit_pearson(m.mean, m.var, m.skewness, m.excess_kurtosis)
        assert np.sum(ok) >= 2
        mvsk = st.beta(a[ok], b[ok], loc=lo[ok], scale=(hi - lo)[ok]).stats(moments="mvsk")
        for got, want in zip(mvsk, (m.mean, m.var, m.skewness, m.excess_kurtosis), strict=True):
            np.testing.assert_allclose(got, want[ok], rtol=1e-8, atol=1e-12)


def test_cdf_sf_ppf_interval_hdi():
    alpha = np.array([[300.5, 200.5, 100.5, 0.5, 0.5], [20.0, 30.0, 5.0, 1.0, 40.0]])
    d = approximate_distribution(alpha, "modified")
    x = np.linspace(0.0, 1.0, 11)[:, None]
    np.testing.assert_allclose(d.cdf(x) + d.sf(x), 1.0, atol=1e-14)
    p = np.array([0.01, 0.3, 0.5, 0.9, 0.999])[:, None]
    np.testing.assert_allclose(d.cdf(d.ppf(p)), np.broadcast_to(p, (5, 2)), atol=1e-10)
    np.testing.assert_allclose(d.sf(d.isf(p)), np.broadcast_to(p, (5, 2)), atol=1e-10)
    lo, hi = d.interval(0.9)
    np.testing.assert_allclose(d.cdf(hi) - d.cdf(lo), 0.9, atol=1e-10)
    hlo, hhi = d.hdi(0.9)
    np.testing.assert_allclose(d.cdf(hhi) - d.cdf(hlo), 0.9, atol=1e-9)
    assert np.all(hhi - hlo <= hi - lo + 1e-12)
    # reference for the HDI: brute force over 20,001 lower tails with scipy.stats.beta
    for r in range(2):
        law = st.beta(d.a[r], d.b[r], loc=d.lo[r], scale=d.hi[r] - d.lo[r])
        t = np.linspace(0.0, 0.1, 20_001)
        widths = law.ppf(t + 0.9) - law.ppf(t)
        assert hhi[r] - hlo[r] <= widths.min() + 1e-9
        assert hhi[r] - hlo[r] >= widths.min() - 1e-6
    # scalars for one row; points broadcast against the batch
    one = approximate_distribution(alpha[0])
    assert np.ndim(one.cdf(0.5)) == 0 and one.cdf([0.1, 0.5]).shape == (2,)
    assert d.cdf(np.zeros((3, 1))).shape == (3, 2)
    assert "ApproximateDistribution" in repr(d)


def test_bad_input():
    alpha = [30.0, 20.0, 5.0, 2.0]
    with pytest.raises(ValueError, match=r"method must be one of 'auto', 'beta', 'pearson'"):
        approximate_distribution(alpha, method="normal")
    with pytest.raises(ValueError, match=r"bound must be in the open interval \(0, 1\)"):
        approximate_distribution(alpha, bound=0.0)
    with pytest.raises(NotImplementedError, match=r"measure='old'"):
        approximate_distribution(alpha, "old")
    with pytest.raises(ValueError, match=r"measure must be one of"):
        approximate_distribution(alpha, "gini")
    with pytest.raises(ValueError, match=r"alpha must be strictly positive"):
        approximate_distribution([1.0, -1.0, 2.0])
    d = approximate_distribution([alpha, alpha])
    with pytest.raises(ValueError, match=r"x must broadcast against the batch shape \(2,\)"):
        d.cdf(np.zeros(3))
    with pytest.raises(ValueError, match=r"q must be probabilities in \[0, 1\]"):
        d.ppf(1.5)
    with pytest.raises(ValueError, match=r"confidence must be in the open interval"):
        d.interval(1.0)
    with pytest.raises(ValueError, match=r"bound must be in the open interval"):
        d.trusted(2.0)


def test_moment_mismatch_is_zero_for_an_exact_beta_law():
    # reference: with one proper class amb = q_cs ~ Beta(alpha_cs, alpha_1) exactly, so a
    # Beta fitted on [0, 1] by two moments has every higher moment right
    alpha = np.array([[3.0, 0.7], [250.0, 40.0], [0.4, 2.5]])
    m = ambppl.dirichlet_moments(alpha, order=6)
    params = fit_beta(m.mean, m.var, 0.0, 1.0)
    np.testing.assert_allclose(params[0], alpha[:, 1], rtol=1e-10)
    assert np.all(moment_mismatch(params, m.central) < 1e-9)
    # and for a skewed law that is no Beta: scipy's standardized moments of the fit differ
    other = ambppl.dirichlet_moments([5.0, 1.0, 1.0, 2.0], order=6)
    fit = fit_beta(other.mean, other.var, 0.0, 1.0)
    law = st.beta(float(fit[0]), float(fit[1]))
    raw = [law.moment(r) for r in range(7)]
    mu = [
        sum(math.comb(r, j) * raw[j] * (-raw[1]) ** (r - j) for j in range(r + 1)) for r in range(7)
    ]
    fit_std = [mu[r] / mu[2] ** (r / 2) for r in range(7)]
    exact_std = [other.central[r] / other.var ** (r / 2) for r in range(7)]
    scales = [
        None,
        None,
        None,
        math.sqrt(exact_std[4]),
        exact_std[4],
        math.sqrt(exact_std[4] * exact_std[6]),
        exact_std[6],
    ]
    want = max(abs(fit_std[r] - exact_std[r]) / scales[r] for r in range(3, 7))
    assert float(moment_mismatch(fit, other.central)) == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize(
    ("alpha", "cant_solve", "why"),
    [
        # near-uniform without can't-solve: the mass against amb's maximum 1 - 1/C, where
        # a Beta missed the CDF by 0.008-0.023 (10^6 exact draws) against a mapped 0.0035
        ([1.5, 1.5, 7.0], None, "near the upper end"),
        ([15.16, 7.12, 7.73], None, "near the upper end"),
        ([8.23, 12.2, 16.06], None, "near the upper end"),
        ([14.19, 6.73, 12.76, 7.99], None, "near the upper end"),
        # mean 3.2 sds from the end: 0.0034 off (4 x 10^6 draws) against a mapped 0.0024
        ([7.88, 31.89, 13.42, 16.25, 39.55, 17.22], None, "near the upper end"),
        # minor entries below the map's smallest (0.5 at this alpha_0): Pearson 0.079 off
        ([0.128, 54.15, 0.178], None, "below the map's entries"),
    ],
)
def test_rows_the_map_does_not_cover_are_not_trusted(alpha, cant_solve, why):
    # an audit (2026-12-02) found these trusted with a mapped error the exact law exceeded
    for measure in ("amb", "modified"):
        d = approximate_distribution(np.array(alpha), measure, cant_solve=cant_solve)
        assert not d.accurate and np.isinf(d.max_error), (measure, why)


def test_trusted_rows_meet_their_mapped_error_near_the_edge_rule():
    # random alphas without can't-solve, many near-uniform (where the rule bites): every
    # row the map trusts is within its mapped error of 2 x 10^5 exact draws, up to the
    # draws' own 99 % KS allowance 1.63 / sqrt(n)
    rng = np.random.default_rng(20261202)
    n = 200_000
    checked = 0
    for _ in range(400):
        k = int(rng.choice([3, 4, 5, 8]))
        spread = rng.choice([1.0, 3.0, 10.0])  # 10: near-uniform
        alpha = 10 ** rng.uniform(1.0, 3.0) * rng.dirichlet(np.full(k, spread))
        d = approximate_distribution(alpha, "amb", cant_solve=None)
        if not d.accurate:
            continue
        x = np.sort(ambppl.amb(rng.dirichlet(alpha, size=n), cant_solve=None))
        f = np.asarray(d.cdf(x))
        ks = max(np.max(np.abs(f - np.arange(1, n + 1) / n)), np.max(np.abs(f - np.arange(n) / n)))
        assert ks <= float(d.max_error) + 1.63 / np.sqrt(n), (alpha, ks, float(d.max_error))
        checked += 1
        if checked == 12:
            break
    assert checked == 12
