"""Calibration and power of ``check_moments``' variance rows.

The variance of an item's measure is tested with the mean of ``(x - m)^2`` (``m`` the exact
mean). With its error estimated from the same draws, the z-scores had a heavy lower tail (a
low sample variance comes with a low estimated error), and ``check_moments`` of a correct
posterior failed in 5-11 % of fits at ``alpha = 0.01`` with 2 x 500 or 2 x 300 draws. The
error is now the closed-form one, and the tail that of a gamma law with the closed-form
skewness (:func:`ambppl.validation._skewed.mean_z`).

Replicates are run many at once: the weather counts are tiled ``BLOCK`` times into one
result whose posterior is replaced by fresh independent Dirichlet draws, and each
replicate's verdict is read from the table's p-values of its own rows. Holm's procedure
rejects a hypothesis of a family of ``m`` exactly when the smallest p-value is at most
``alpha / m``, so that verdict is the one ``check_moments`` gives the replicate alone (every
row's z depends on its item's draws only).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom, norm, pearson3

import ambppl
from ambppl.data.readers import example_path, read_annotations
from ambppl.validation import check_moments
from ambppl.validation._skewed import dirichlet_square_moments, normal_score

ALPHA = 0.01
#: Replicates tiled into one result (memory: chains x draws x BLOCK x 200 x 5 x 8 bytes).
BLOCK = 10
MEASURES = ("amb", "modified")
VARIABLES = {"amb": "amb", "modified": "amb_modified"}


@pytest.fixture(scope="module")
def weather() -> np.ndarray:
    counts = read_annotations(example_path("weather_sentiment"), cant_solve="I can't tell")
    return np.asarray(counts.values)


_TEMPLATES: dict[tuple[int, int], object] = {}


def _template(weather: np.ndarray, chains: int, draws: int) -> object:
    """An exact fit of the weather counts tiled BLOCK times: the layout of a result."""
    if (chains, draws) not in _TEMPLATES:
        tiled = np.tile(weather, (BLOCK, 1))
        counts = ambppl.read_annotations(tiled, cant_solve=str(tiled.shape[1] - 1))
        _TEMPLATES[chains, draws] = ambppl.fit(
            counts, draws=draws, chains=chains, random_seed=0, var_names=list(VARIABLES.values())
        )
    return _TEMPLATES[chains, draws]


def _measures(g: np.ndarray) -> dict[str, np.ndarray]:
    """amb and amb_modified of q = g / sum(g) (can't-solve last), from independent gamma
    draws ``g``: with ``B`` the proper total, ``G`` the total and ``C`` proper classes,
    ``amb = 1 - sum_k g_k^2 / (G B)`` and ``amb_modified = 1 - (B / G) (C sum_k g_k^2 / B^2
    - 1) / (C - 1)`` (module docstring of :mod:`ambppl.maths.moments`: ``1 - X S`` and
    ``1 - X (C S - 1) / (C - 1)``)."""
    proper = g[..., :-1]
    c = proper.shape[-1]
    b = proper.sum(axis=-1)
    total = b + g[..., -1]
    s = np.einsum("...k,...k->...", proper, proper) / (b * b)
    x = b / total
    return {"amb": 1.0 - x * s, "modified": 1.0 - x * (c * s - 1.0) / (c - 1.0)}


def failures(
    weather: np.ndarray,
    chains: int,
    draws: int,
    reps: int,
    seed: int,
    *,
    scale: float = 1.0,
    var_factor: float = 1.0,
    mcse: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """For ``reps`` replicates of independent draws from Dirichlet(scale * (counts + 1)):
    whether ``check_moments(measures=("amb", "modified"))`` fails, and whether a variance
    row is among the flagged ones. ``var_factor`` multiplies the draws' variance (their
    deviations from the exact mean scaled by its square root: a posterior with the right
    mean and a wrong variance)."""
    template = _template(weather, chains, draws)
    alpha = np.tile(weather + 1.0, (BLOCK, 1))
    cs = alpha.shape[1] - 1
    n_items = weather.shape[0]
    means = {m: ambppl.dirichlet_mean(alpha, m, cant_solve=cs) for m in MEASURES}
    rng = np.random.default_rng(seed)
    fail, var_fail = [], []
    for _ in range(-(-reps // BLOCK)):
        draws_of = _measures(rng.standard_gamma(scale * alpha, size=(chains, draws, *alpha.shape)))
        post = template["posterior"].to_dataset()
        for m in MEASURES:
            x = means[m] + np.sqrt(var_factor) * (draws_of[m] - means[m])
            post[VARIABLES[m]] = post[VARIABLES[m]].copy(data=x)
        result = template.copy()
        result["posterior"] = post
        table = check_moments(result, measures=list(MEASURES), alpha=ALPHA, mcse=mcse).table
        # row order: measure, moment, then the tiled items; replicate = item position // 200
        replicate = np.tile(np.arange(BLOCK).repeat(n_items), 2 * len(MEASURES))
        p = table["p_value"].to_numpy(dtype=float)
        is_var = (table["moment"] == "var").to_numpy()
        for r in range(BLOCK):
            mine = replicate == r
            cut = ALPHA / np.isfinite(p[mine]).sum()
            fail.append(bool(np.nanmin(p[mine]) <= cut))
            var_fail.append(bool(np.nanmin(p[mine & is_var]) <= cut))
    return np.array(fail[:reps]), np.array(var_fail[:reps])


def _largest_count(reps: int, rate: float, tail: float) -> int:
    """The smallest ``t`` with ``P(Binomial(reps, rate) > t) < tail``."""
    t = 0
    while binom.sf(t, reps, rate) >= tail:
        t += 1
    return t


@pytest.mark.parametrize(
    ("chains", "draws", "reps"),
    [
        # `python tests/validation/test_moments_calibration.py` (the same seed, 400
        # replicates): 0.003 +- 0.002 failed; with the variance rows on the draws' own error
        # 0.107 +- 0.015, and P(Binomial(300, 0.107) <= 10) = 2e-6
        (2, 300, 300),
        # 0.010 +- 0.005 failed; on the draws' own error 0.052 +- 0.011 (21 of these 400),
        # and P(Binomial(400, 0.052) <= 11) = 0.012
        (2, 500, 400),
    ],
)
def test_a_correct_posterior_fails_at_most_alpha_of_the_time(weather, chains, draws, reps):
    fail, _ = failures(weather, chains, draws, reps, seed=20261207)
    # If the family-wise rate is at most alpha, more failures than this come with a
    # probability under 0.001 (10 of 300, 11 of 400).
    assert fail.sum() <= _largest_count(reps, ALPHA, 1e-3), fail.mean()


@pytest.mark.parametrize(
    ("scale", "var_factor"),
    [
        (1.2, 1.0),  # concentrations 20 % too large: every variance about 17 % too small
        (0.8, 1.0),  # and 20 % too small
        (1.0, 0.85),  # the right means, variances 15 % too small
        (1.0, 1.15),  # and 15 % too large
    ],
)
def test_a_wrong_variance_is_flagged_on_the_variance_rows(weather, scale, var_factor):
    # 2 x 500 draws: each of 20 replicates is flagged on a variance row (measured with 50
    # replicates each, 2026-12-07: all 50 flagged in each case, as with the draws' own error;
    # variances 10 % too large: 50 of 50 flagged, on the draws' own error 31 of 50).
    _, var_fail = failures(weather, 2, 500, 20, seed=5, scale=scale, var_factor=var_factor)
    assert var_fail.all(), var_fail.mean()


def test_nuts_errors_take_the_closed_form_sd_over_the_ess(weather):
    # mcse="arviz" (the route of NUTS draws): a variance row's error is the closed-form sd
    # of (x - m)^2 over the square root of the draws' ESS of the mean, and so equals the
    # independent error times sqrt(N / ESS) with ESS from ambppl's ArviZ-equivalent mean.
    from ambppl.inference.diagnostics import diagnose

    counts = ambppl.read_annotations(weather[:20], cant_solve="4")
    fit = ambppl.fit(counts, draws=300, chains=2, random_seed=3)
    ind = check_moments(fit, measures="amb", mcse="independent").table
    arv = check_moments(fit, measures="amb", mcse="arviz").table
    alpha = weather[:20] + 1.0
    x = fit["posterior"]["amb"].transpose("chain", "draw", "item").values
    m = ambppl.dirichlet_mean(alpha, "amb", cant_solve=-1)
    ess = diagnose((x - m) ** 2, what="ess_mean")["ess_mean"]
    var_y, _ = dirichlet_square_moments(alpha, "amb", 4)
    rows = (ind["moment"] == "var").to_numpy()
    np.testing.assert_allclose(ind["mcse"][rows], np.sqrt(var_y / 600), rtol=1e-12)
    np.testing.assert_allclose(arv["mcse"][rows], np.sqrt(var_y / ess), rtol=1e-12)


def test_square_moments_are_exact_for_two_classes():
    # Two classes, no can't-solve: amb = 2 p (1 - p) with p ~ Beta(a, b), whose raw moments
    # E p^k = prod_{i<k} (a + i) / (a + b + i) are rational: the central moments of amb,
    # and so Var((x - m)^2) = mu4 - mu2^2 and its third moment mu6 - 3 mu4 mu2 + 2 mu2^3,
    # follow exactly from the polynomial (2 p - 2 p^2 - m)^r.
    for a, b in ((3, 2), (7, 1), (1, 1), (40, 25)):
        raw = [Fraction(1)]
        for i in range(12):
            raw.append(raw[-1] * Fraction(a + i, a + b + i))

        def expect(coefs: list[Fraction], raw=raw) -> Fraction:
            return sum((c * raw[k] for k, c in enumerate(coefs)), Fraction(0))

        def power(coefs: list[Fraction], r: int) -> list[Fraction]:
            out = [Fraction(1)]
            for _ in range(r):
                new = [Fraction(0)] * (len(out) + len(coefs) - 1)
                for i, u in enumerate(out):
                    for j, v in enumerate(coefs):
                        new[i + j] += u * v
                out = new
            return out

        x = [Fraction(0), Fraction(2), Fraction(-2)]
        m = expect(x)
        dev = [x[0] - m, *x[1:]]
        mu = {r: expect(power(dev, r)) for r in (2, 4, 6)}
        var_y, third_y = dirichlet_square_moments(np.array([[a, b]], dtype=float), "amb", None)
        np.testing.assert_allclose(var_y, float(mu[4] - mu[2] ** 2), rtol=1e-9)
        want = mu[6] - 3 * mu[4] * mu[2] + 2 * mu[2] ** 3
        np.testing.assert_allclose(third_y, float(want), rtol=1e-8)


@pytest.mark.parametrize("skew", [0.05, 0.3, 1.0, -0.3, -1.5])
def test_normal_score_is_that_of_the_pearson_type_iii_law(skew):
    # scipy's pearson3 (standardized: mean 0, sd 1, the given skewness) is the reference.
    t = np.array([-4.5, -2.0, -0.5, 0.0, 0.7, 3.0, 5.0])
    inside = skew * t > -2.0  # its support: t > -2 / skew for skew > 0
    got = normal_score(t, np.full(t.shape, skew))
    cdf = pearson3.cdf(t[inside], skew)
    want = np.where(cdf < 0.5, -norm.isf(cdf), norm.isf(pearson3.sf(t[inside], skew)))
    np.testing.assert_allclose(got[inside], want, rtol=1e-8, atol=1e-10)
    assert np.all(np.isneginf(got[~inside]) if skew > 0 else np.isposinf(got[~inside]))


def test_normal_score_of_a_small_skewness_is_cornish_fishers():
    # Where the gamma shape k = 4 / skew^2 is past scipy's accurate range (Wilson-Hilferty
    # there) the score is Cornish and Fisher's t - skew (t^2 - 1) / 6 up to O(skew^2 t^3):
    # under 1e-6 at skew 1e-4 and |t| <= 5 (scipy's incomplete gamma gave errors of tens of
    # per cent in the tail probability at k ~ 1e8). A zero skewness keeps t, and the two
    # routes meet at the switch.
    from ambppl.validation._skewed import WILSON_HILFERTY_K

    t = np.array([-5.0, -4.5, -1.0, 0.0, 2.0, 4.5, 5.0])
    for skew in (1e-4, -1e-4, 1e-6, 1e-9):
        got = normal_score(t, np.full(t.shape, skew))
        np.testing.assert_allclose(got, t - skew * (t**2 - 1) / 6, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(normal_score(t, np.zeros(t.shape)), t)
    edge = 2.0 / np.sqrt(WILSON_HILFERTY_K)
    below, above = (normal_score(t, np.full(t.shape, s)) for s in (edge * 1.0001, edge * 0.9999))
    np.testing.assert_allclose(below, above, atol=1e-4, rtol=0)
    odd = normal_score(np.array([np.inf, np.nan, 1.0]), np.array([0.5, 0.5, np.nan]))
    assert np.isposinf(odd[0]) and np.isnan(odd[1]) and odd[2] == 1.0


def test_the_replicates_draw_the_measures_of_the_package():
    rng = np.random.default_rng(0)
    g = rng.standard_gamma(np.array([3.0, 1.0, 2.0, 5.0, 1.0]), size=(1000, 5))
    q = g / g.sum(axis=-1, keepdims=True)
    got = _measures(g)
    np.testing.assert_allclose(got["amb"], ambppl.amb(q, cant_solve=4), atol=1e-14)
    np.testing.assert_allclose(got["modified"], ambppl.amb_modified(q, cant_solve=4), atol=1e-14)


def _main(argv: list[str]) -> None:
    """The measured rates of the documentation page topics/validation: ``python
    tests/validation/test_moments_calibration.py [REPS] [--collapsed SEEDS]``."""
    import argparse
    import logging
    import time
    import warnings

    parser = argparse.ArgumentParser(description=_main.__doc__)
    parser.add_argument("reps", nargs="?", type=int, default=400)
    parser.add_argument("--collapsed", type=int, default=0)
    args = parser.parse_args(argv)
    counts = read_annotations(example_path("weather_sentiment"), cant_solve="I can't tell")
    weather = np.asarray(counts.values)
    print(f"check_moments of the bundled 200 tweets at alpha = {ALPHA}, exact draws:")
    for chains, draws in ((2, 300), (2, 500), (4, 1000)):
        for mcse in ("auto", "arviz"):
            start = time.perf_counter()
            reps = args.reps if draws < 1000 else args.reps // 2
            fail, var_fail = failures(weather, chains, draws, reps, 20261207, mcse=mcse)
            rate = fail.mean()
            print(
                f"  {chains} x {draws}, mcse={mcse!r}: {rate:.3f} +- "
                f"{np.sqrt(rate * (1 - rate) / reps):.3f} of {reps} replicates failed "
                f"({var_fail.sum()} on a variance row; {time.perf_counter() - start:.0f} s)"
            )
    if args.collapsed:
        logging.getLogger("pymc").setLevel(logging.ERROR)
        fail = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in range(1, args.collapsed + 1):
                fit = ambppl.fit(
                    counts, "hierarchical_dirichlet", draws=300, chains=2, random_seed=seed
                )
                fail.append(not check_moments(fit).passed)
        print(
            f"hierarchical_dirichlet (collapsed, NUTS), 2 x 300 draws: {sum(fail)} of "
            f"{len(fail)} seeds failed"
        )


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
