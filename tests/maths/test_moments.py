"""Tests for ambppl.maths.moments: exact references, Monte Carlo, stability, batches, bad input."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from _exact_laws import enumerated_moments
from hypothesis import given, settings
from hypothesis import strategies as st

import ambppl
from ambppl import dirichlet_mean, dirichlet_var
from ambppl.maths.measures import amb, amb_modified, amb_old, normalized_entropy

REFERENCE = Path(__file__).parents[1] / "reference" / "moments_reference.json"
REL_TOL = 1e-10  # the stability requirement: relative error against exact arithmetic
MEASURE_FUNCS = {
    "amb": amb,
    "modified": amb_modified,
    "old": amb_old,
    "entropy": normalized_entropy,
}


# ------------------------------------------------------------------ exact references
def exact_amb_moments(alpha, cant_solve=True):
    """(E amb, Var amb, E mod, Var mod) in exact rational arithmetic.

    Uses the paper's printed final forms (eqs. expr_amb_final, expr_amb_var_final =
    R + (S - 1)(1 - E)^2, rel_mod_unmod, var_amb_tilde with expr_amb_mod_var), which are
    right in exact arithmetic (ERRATA header) and independent of the rearranged forms in
    ambppl.maths.moments. ``Fraction(float)`` is exact, so these are the exact moments of the
    float inputs. The modified entries are None with fewer than 2 proper categories.
    """
    a = [Fraction(float(x)) for x in alpha]
    proper, a_cs = (a[:-1], a[-1]) if cant_solve else (a, Fraction(0))
    b = sum(proper)
    a0 = b + a_cs
    mean = 1 - sum(x * (x + 1) for x in proper) / (a0 * (b + 1))
    r = sum(x * (x + 1) * ((x + 2) * (x + 3) - x * (x + 1)) for x in proper) / (
        a0 * (a0 + 1) * (b + 2) * (b + 3)
    )
    s = a0 * (b + 1) ** 2 / ((a0 + 1) * (b + 2) * (b + 3))
    var = r + (s - 1) * (1 - mean) ** 2
    c = len(proper)
    if c < 2:
        return mean, var, None, None
    var_cs = a_cs * b / (a0**2 * (a0 + 1))
    cov = a_cs / (a0 * (a0 + 1)) * (1 - mean)
    mean_mod = (c * mean - a_cs / a0) / (c - 1)
    var_mod = (c * c * var + var_cs - 2 * c * cov) / (c - 1) ** 2
    return mean, var, mean_mod, var_mod


def mp_entropy_mean(alpha):
    """Paper section 3.1's digamma formula at 50 digits (mpmath), over all K entries."""
    with mp.workdps(50):
        a = [mp.mpf(float(x)) for x in alpha]
        a0 = mp.fsum(a)
        val = (mp.digamma(a0 + 1) - mp.fsum(x / a0 * mp.digamma(x + 1) for x in a)) / mp.log(len(a))
        return val


def rel_err(got, exact):
    """|got - exact| / |exact| with exact a Fraction or mpf (absolute if exact == 0)."""
    if isinstance(exact, Fraction):
        diff = abs(Fraction(float(got)) - exact)
        return float(diff / abs(exact)) if exact != 0 else float(diff)
    return float(abs(mp.mpf(float(got)) - exact) / abs(exact)) if exact != 0 else abs(float(got))


ADVERSARIAL = [
    (1e7, 1.0, 1.0),  # ERRATA item 5: the printed variance loses 1e-3 here
    (1e9, 1e-3, 1e-3),
    (1e-3, 1e9, 1e-3),
    (1e-3, 1e-3, 1e9),
    (1e9, 1e9, 1e9),
    (1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9),
    (1e9, 1e9 + 1.0, 1e9 + 2.0),
    (1e-3, 1e-3, 1e-3),
    (1e-3, 1e-3, 1e-3, 1e-3, 1e-3),
    (1e9, 1e-3),
    (1e-3, 1e9),
    (5e8, 5e8, 1e-3, 1e-3),
]


def log_uniform_grid(n_cases, seed):
    """Seeded alphas, entries log-uniform on [1e-3, 1e9], C + 1 in {2, ..., 7}."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_cases):
        k = int(rng.integers(2, 8))
        out.append(tuple(np.exp(rng.uniform(math.log(1e-3), math.log(1e9), k)).tolist()))
    return out


GRID = ADVERSARIAL + log_uniform_grid(150, seed=11)


# ------------------------------------------------------------------ stability vs exact values
@pytest.mark.parametrize("cant_solve", [-1, None])
def test_amb_and_modified_match_exact_fractions(cant_solve):
    has_cs = cant_solve is not None
    worst = {}
    for alpha in GRID:
        exact = exact_amb_moments(alpha, has_cs)
        got = [
            dirichlet_mean(alpha, cant_solve=cant_solve),
            dirichlet_var(alpha, cant_solve=cant_solve),
        ]
        names = ["mean amb", "var amb"]
        if exact[2] is not None:
            got += [
                dirichlet_mean(alpha, "modified", cant_solve=cant_solve),
                dirichlet_var(alpha, "modified", cant_solve=cant_solve),
            ]
            names += ["mean modified", "var modified"]
        for name, g, e in zip(names, got, exact, strict=False):
            err = rel_err(g, e)
            assert err <= REL_TOL, (name, alpha, cant_solve, err)
            worst[name] = max(worst.get(name, 0.0), err)
    assert set(worst) == {"mean amb", "var amb", "mean modified", "var modified"}


def test_errata5_case_is_hard_for_the_printed_formula_but_not_here():
    alpha = (1e7, 1.0, 1.0)
    _, var_exact, _, _ = exact_amb_moments(alpha)
    # the paper's printed form evaluated in floats (ERRATA item 5: ~1e-3 relative error)
    a = np.array(alpha)
    b, a0 = a[:2].sum(), a.sum()
    mean = 1 - np.sum(a[:2] * (a[:2] + 1)) / (a0 * (b + 1))
    r = np.sum(a[:2] * (a[:2] + 1) * ((a[:2] + 2) * (a[:2] + 3) - a[:2] * (a[:2] + 1))) / (
        a0 * (a0 + 1) * (b + 2) * (b + 3)
    )
    s = a0 * (b + 1) ** 2 / ((a0 + 1) * (b + 2) * (b + 3))
    naive = r + (s - 1) * (1 - mean) ** 2
    assert rel_err(naive, var_exact) > 1e-5
    assert rel_err(dirichlet_var(alpha), var_exact) <= 1e-14


HUGE_AND_TINY = [
    (1e300, 1e300, 1e300),
    (3e299, 1e299 + 1e284, 1e299),
    (1e200, 1e-3, 1.0),
    (1e154, 2e154, 5e153),
    (1e100, 1e100, 3.0, 1e100),
    (2.0, 1e-300, 1e-300),
    (1e-300, 1e-300, 1e-300),
]


@pytest.mark.parametrize("alpha", HUGE_AND_TINY)
def test_huge_and_tiny_concentrations_match_exact_fractions(alpha):
    """Every finite alpha: the products of concentrations (e2 ~ b^2, Var S2 ~ 1/b^6)
    overflowed to NaN from 1.3e154 on, so --prior 1e300 had no closed-form mean or sd.
    Reference: exact_amb_moments (the paper's printed forms in exact fractions); a moment
    below the float range (modified's variance at the symmetric point is ~1/alpha_0^2) must
    come out as at most 1e-300."""
    exact = exact_amb_moments(alpha)
    got = [
        dirichlet_mean(alpha),
        dirichlet_var(alpha),
        dirichlet_mean(alpha, "modified"),
        dirichlet_var(alpha, "modified"),
    ]
    for name, g, e in zip(["mean", "var", "mean mod", "var mod"], got, exact, strict=True):
        assert np.isfinite(g), (name, g)
        if abs(e) < Fraction(1, 10**300):
            assert 0.0 <= g <= 1e-300, (name, g, float(e))
        else:
            assert rel_err(g, e) <= REL_TOL, (name, g, float(e))
    for measure in ("old", "entropy"):
        assert 0.0 <= dirichlet_mean(alpha, measure) <= 1.0


def test_a_prior_must_sum_to_at_most_1e300():
    """--prior 1e308 (3 categories: 3e308 = inf) scored every item's mean as 1.0 with sd 0
    (the Dirichlet draws divided by an infinite sum); the true mean is 2/3. Refused now, in
    the option's words on the command line; 3e299 (total 9e299) and 1e-300 are computed,
    their closed forms equal to exact fractions (exact_amb_moments)."""
    from ambppl.data.readers import command_line_messages
    from ambppl.maths.estimators import estimate

    counts = np.array([[1, 1, 1], [2, 0, 0]])
    read = ambppl.read_annotations(counts, categories=["x", "y", "z"], cant_solve=None)
    kwargs = {"random_seed": 1}
    with pytest.raises(ValueError, match=r"^prior must sum to at most 1e\+300 .*summing to inf"):
        ambppl.score(read, prior=1e308, **kwargs)
    with command_line_messages(), pytest.raises(ValueError, match=r"^--prior must sum to at"):
        ambppl.score(read, prior=1e308, **kwargs)
    with pytest.raises(ValueError, match=r"^prior must sum to at most 1e\+300"):
        estimate(counts, "posterior_mean", prior=[1e300, 1e300, 1.0], cant_solve=None)
    for prior in (3e299, 1e-300):
        table = ambppl.score(read, prior=prior, **kwargs)
        for row, c in zip(table.itertuples(), counts, strict=True):
            mean, var, _, _ = exact_amb_moments(c + prior, cant_solve=False)
            assert rel_err(row.exact_mean, mean) <= REL_TOL and row.mean == row.exact_mean
            if var > Fraction(1, 10**300):
                assert rel_err(row.exact_sd**2, var) <= 1e-9
            assert 0.0 <= row.hdi_lower <= row.hdi_upper <= 1.0


def test_entropy_mean_matches_mpmath():
    # plus the switch points of the digamma difference (series / asymptotic at 1e6) and
    # concentrations far above the tested range, where a naive series would overflow
    extra = [(11.0, 2.0, 2.0), (999_999.0, 1e-3, 3.0), (1e6, 1e-3, 3.0), (8e19, 1e19, 1.0)]
    for alpha in [*ADVERSARIAL, *log_uniform_grid(60, seed=12), *extra]:
        exact = mp_entropy_mean(alpha)
        got = dirichlet_mean(alpha, "entropy")
        assert rel_err(got, exact) <= REL_TOL, (alpha, rel_err(got, exact))
        # the cant_solve position does not matter for the entropy
        assert dirichlet_mean(alpha, "entropy", cant_solve=None) == got


def test_entropy_mean_of_paper_example():
    # Paper section 3.1: E(normalized entropy) of Dir(11, 2, 2) "is approximately 0.64"
    got = float(dirichlet_mean([11.0, 2.0, 2.0], "entropy"))
    assert round(got, 2) == 0.64
    assert rel_err(got, mp_entropy_mean((11.0, 2.0, 2.0))) <= 1e-14


def test_old_mean_matches_stored_mpmath_reference():
    # values: tests/reference/moments_reference.py (ERRATA 7's E|X - c| form, 50 digits)
    cases = json.loads(REFERENCE.read_text())["cases"]
    assert len(cases) >= 50
    for case in cases:
        alpha = [float.fromhex(h) for h in case["alpha"]]
        exact = mp.mpf(case["mean_old"])
        got = dirichlet_mean(alpha, "old", cant_solve=case["cant_solve"])
        assert rel_err(got, exact) <= REL_TOL, (alpha, case["cant_solve"], rel_err(got, exact))


def test_old_mean_two_categories_by_quadrature():
    # Independent check of the tent-function rewrite on moderate parameters: for C = 2,
    # amb0 = 1 - (1 - u)|2 pi - 1| (ERRATA 7) with u ~ Beta(a_cs, b), pi ~ Beta(a1, a2)
    # independent; E|2 pi - 1| by mpmath quadrature split at 1/2.
    a1, a2, a_cs = 2.5, 0.7, 1.3
    with mp.workdps(30):
        dens = lambda x: x ** (a1 - 1) * (1 - x) ** (a2 - 1) / mp.beta(a1, a2)  # noqa: E731
        e_abs = mp.quad(lambda x: abs(2 * x - 1) * dens(x), [0, 0.5, 1])
        exact = 1 - (a1 + a2) / (a1 + a2 + a_cs) * e_abs
    assert rel_err(dirichlet_mean([a1, a2, a_cs], "old"), exact) <= 1e-12


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=1e-3, max_value=1e9), min_size=3, max_size=6),
    st.sampled_from([-1, 0, None]),
)
def test_exact_fractions_property(alpha, cant_solve):
    # any position of the can't-solve category: move it last for the reference
    a = list(alpha)
    if cant_solve is not None:
        a.append(a.pop(cant_solve))
    exact = exact_amb_moments(a, cant_solve is not None)
    assert rel_err(dirichlet_mean(alpha, cant_solve=cant_solve), exact[0]) <= REL_TOL
    assert rel_err(dirichlet_var(alpha, cant_solve=cant_solve), exact[1]) <= REL_TOL
    assert rel_err(dirichlet_mean(alpha, "modified", cant_solve=cant_solve), exact[2]) <= REL_TOL
    assert rel_err(dirichlet_var(alpha, "modified", cant_solve=cant_solve), exact[3]) <= REL_TOL


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1e-3, max_value=1e9), min_size=3, max_size=7))
def test_orderings_and_ranges_property(alpha):
    means = {m: float(dirichlet_mean(alpha, m)) for m in ambppl.MEASURES}
    assert all(0.0 <= v <= 1.0 for v in means.values()), means
    # modified >= amb pointwise (paper section 2.2), hence in expectation
    assert means["modified"] >= means["amb"] * (1 - 1e-12)
    assert dirichlet_var(alpha) >= 0.0
    assert dirichlet_var(alpha, "modified") >= 0.0


# ------------------------------------------------------------------ Monte Carlo
N_DRAWS = 1_000_000
MC_CASES = [
    ((2.0, 3.0, 1.5), -1),
    ((0.5, 0.5, 0.5, 0.5), None),
    ((11.0, 2.0, 2.0), -1),
    ((4.0, 1.0, 0.3, 2.0, 1.0, 0.7), -1),
    ((0.2, 3.0, 0.8), 0),
]


def _mc(alpha, measure, cant_solve, seed):
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(alpha, size=N_DRAWS)
    return MEASURE_FUNCS[measure](q, cant_solve=cant_solve)


@pytest.mark.parametrize(("alpha", "cant_solve"), MC_CASES)
def test_moments_against_monte_carlo(alpha, cant_solve):
    for i, measure in enumerate(ambppl.MEASURES):
        x = _mc(alpha, measure, cant_solve, seed=1000 + i)
        n = x.size
        mean, var = x.mean(), x.var(ddof=1)
        # standard error of the mean: sample sd / sqrt(n)
        se_mean = math.sqrt(var / n)
        assert abs(dirichlet_mean(alpha, measure, cant_solve=cant_solve) - mean) <= 5 * se_mean
        if measure in ("amb", "modified"):
            # standard error of the sample variance from the 4th central moment:
            # Var(s^2) ~= (m4 - s^4) / n for large n
            m4 = np.mean((x - mean) ** 4)
            se_var = math.sqrt((m4 - var**2) / n)
            exact_var = dirichlet_var(alpha, measure, cant_solve=cant_solve)
            assert abs(exact_var - var) <= 5 * se_var, (measure, exact_var, var, se_var)


# ------------------------------------------------------------------ batches and layout
def test_batch_shapes_match_elementwise():
    rng = np.random.default_rng(5)
    alpha = rng.uniform(0.1, 20.0, size=(2, 3, 4))
    for func, measures in [(dirichlet_mean, ambppl.MEASURES), (dirichlet_var, ("amb", "modified"))]:
        for measure in measures:
            out = func(alpha, measure)
            assert out.shape == (2, 3)
            for i in range(2):
                for j in range(3):
                    # one row alone and inside a batch: same formulas, rounding may differ
                    assert out[i, j] == pytest.approx(func(alpha[i, j], measure), rel=1e-14)
    assert isinstance(dirichlet_mean([1.0, 2.0, 3.0]), np.float64)
    assert dirichlet_mean(np.ones((0, 3))).shape == (0,)


def test_large_batch_is_processed_in_blocks_consistently():
    rng = np.random.default_rng(6)
    alpha = np.exp(rng.uniform(-3, 5, size=(20_001, 5)))  # more than one block of rows
    for measure in ("amb", "modified", "entropy", "old"):
        whole = dirichlet_mean(alpha, measure)
        pieces = np.concatenate(
            [dirichlet_mean(alpha[s : s + 777], measure) for s in range(0, 20_001, 777)]
        )
        np.testing.assert_allclose(whole, pieces, rtol=1e-14)
    np.testing.assert_allclose(
        dirichlet_var(alpha),
        np.concatenate([dirichlet_var(a) for a in np.array_split(alpha, 7)]),
        rtol=1e-14,
    )


def test_cant_solve_position_and_layout():
    alpha = np.array([[3.0, 0.5, 2.0, 1.5], [1.0, 7.0, 0.2, 0.1]])
    moved = alpha[:, [0, 2, 3, 1]]  # can't-solve (column 1) moved last
    for measure in ("amb", "modified", "old"):
        np.testing.assert_allclose(
            dirichlet_mean(alpha, measure, cant_solve=1),
            dirichlet_mean(moved, measure),
            rtol=1e-14,
        )
    np.testing.assert_allclose(
        dirichlet_var(alpha, "modified", cant_solve=-3),
        dirichlet_var(moved, "modified"),
        rtol=1e-14,
    )
    # non-contiguous and integer inputs
    fortran = np.asfortranarray(np.tile(alpha, (3, 1)))
    np.testing.assert_allclose(
        dirichlet_var(fortran), dirichlet_var(np.ascontiguousarray(fortran)), rtol=1e-14
    )
    assert dirichlet_mean([1, 1, 1]) == dirichlet_mean([1.0, 1.0, 1.0])


def test_no_cant_solve_is_the_measure_of_all_entries():
    # cant_solve=None: E(amb) = 1 - E(sum p^2) = 2 e2 / (a0 (a0 + 1)); for Dir(1, 1): 1/3
    assert dirichlet_mean([1.0, 1.0], cant_solve=None) == pytest.approx(1 / 3, rel=1e-15)
    # with one proper category and can't-solve, amb = q_cs exactly: Beta moments
    assert dirichlet_mean([2.0, 3.0]) == pytest.approx(3 / 5, rel=1e-15)
    assert dirichlet_var([2.0, 3.0]) == pytest.approx(6 / (25 * 6), rel=1e-14)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("alpha", "exc", "match"),
    [
        ([1.0, 0.0, 1.0], ValueError, r"alpha must be strictly positive.*minimum 0\.0"),
        ([1.0, -2.0, 1.0], ValueError, r"alpha must be strictly positive"),
        ([1.0, np.nan, 1.0], ValueError, r"alpha must be finite, but got \[nan\]"),
        ([1.0, np.inf, 1.0], ValueError, r"alpha must be finite, but got \[inf\]"),
        ([3.0], ValueError, r"alpha must have at least 2 categories on its last axis"),
        (2.0, ValueError, r"alpha must have at least 2 categories"),
        (["a", "b"], TypeError, r"alpha must be array-like of numbers"),
    ],
)
def test_bad_alpha(alpha, exc, match):
    with pytest.raises(exc, match=match):
        dirichlet_mean(alpha)
    with pytest.raises(exc, match=match):
        dirichlet_var(alpha)


def test_bad_options():
    with pytest.raises(
        ValueError,
        match=r"measure must be one of 'amb', 'modified', 'old', 'entropy', but got 'gini'",
    ):
        dirichlet_mean([1.0, 1.0, 1.0], "gini")
    with pytest.raises(ValueError, match=r"measure must be one of .* but got 'gini'"):
        dirichlet_var([1.0, 1.0, 1.0], "gini")
    with pytest.raises(ValueError, match=r"cant_solve must be a position in \[-3, 2\].*but got 3"):
        dirichlet_mean([1.0, 1.0, 1.0], cant_solve=3)
    with pytest.raises(
        TypeError, match=r"cant_solve must be an integer position .* but got 'last'"
    ):
        dirichlet_var([1.0, 1.0, 1.0], cant_solve="last")
    for measure in ("modified", "old"):  # the message names the function and the measure
        with pytest.raises(
            ValueError,
            match=rf"^dirichlet_mean\('{measure}'\) needs at least 2 proper categories .* got 1",
        ):
            dirichlet_mean([1.0, 1.0], measure)
    with pytest.raises(ValueError, match=r"^dirichlet_var\('modified'\) needs at least 2 proper"):
        dirichlet_var([1.0, 1.0], "modified")


@pytest.mark.parametrize("measure", ["entropy", "old"])
def test_missing_variances_raise_not_implemented(measure):
    with pytest.raises(
        NotImplementedError,
        # the message lists the measures that have a closed-form variance
        match=rf"variance of measure='{measure}' under a Dirichlet has no closed form in "
        r"ambppl \(available for: 'amb', 'modified'\)",
    ):
        dirichlet_var([1.0, 2.0, 3.0], measure)


# ------------------------------------------------------------------ higher moments
HIGHER_CASES = [
    ((1.0, 1.0, 1.0), True),
    ((0.5, 2.5, 7.0, 0.3), True),
    ((0.01,) * 6, True),
    ((5.0,) * 12, True),
    ((2000.0, 1000.0, 500.0, 10.0, 3.0), True),
    ((1e4, 1e4, 1.0), True),  # alpha_0 = 2e4: the sd is 7e-5 of the mean
    ((1e4, 1e4), False),  # two equal classes: the worst cancellation
    ((1e4, 0.01, 0.01), False),  # amb ~ 0, tiny and very skewed
    ((3e4, 3e4, 3e4), False),
    ((1e5, 1e5), False),
    ((3.0, 0.2), True),  # one proper class: amb = q_cs ~ Beta(0.2, 3)
    ((0.7, 1.3, 2.0, 0.4, 9.0), False),
]


@pytest.mark.parametrize(("alpha", "has_cs"), HIGHER_CASES)
def test_dirichlet_moments_match_exact_enumeration(alpha, has_cs):
    # reference: exact fractions by explicit multinomial enumeration (enumerated_moments)
    measures = ("amb", "modified") if len(alpha) - has_cs >= 2 else ("amb",)
    for measure in measures:
        mean, central = enumerated_moments(alpha, measure, has_cs, order=6)
        got = ambppl.dirichlet_moments(alpha, measure, order=6, cant_solve=-1 if has_cs else None)
        assert rel_err(got.mean, mean) < 1e-14, (measure, got.mean)
        var = float(central[2])
        assert rel_err(got.var, central[2]) < 1e-13
        for r in range(3, 7):
            # error of mu_r against var^(r/2): what standardized moments feel
            err = abs(float(Fraction(float(got.central[r])) - central[r])) / var ** (r / 2)
            # the promise: within 1e-12 var^(r/2), or the exact value correctly rounded (rows
            # whose double-double estimate exceeds 1e-12 are recomputed exactly), at any alpha_0;
            # up to r = 4 here that rounding is itself below 1e-12 (2e5 included)
            if r <= 4:
                assert err < 1e-12, (measure, r, err)
            if r == 6:  # the top order: the reported estimate bounds the error
                assert err <= max(got.rel_error, 1e-13), (measure, err, got.rel_error)
        skew = float(central[3]) / var**1.5
        kurt = float(central[4]) / var**2 - 3.0
        assert got.skewness == pytest.approx(skew, rel=1e-10, abs=1e-12)
        assert got.excess_kurtosis == pytest.approx(kurt, rel=1e-10, abs=1e-12)


def test_closed_forms_page_states_the_exact_recomputation():
    """docs/maths/closed_forms.md stated the double-double route's reach (1e-12 up to
    alpha_0 ~ 3*10^4, 1e-8 up to 3*10^5) as the accuracy of mu4 and that ``rel_error``
    reports the estimate; dirichlet_moments recomputes exactly every row whose estimate
    exceeds 1e-12. The page's example beyond that reach, alpha = (1e9, 1e9, 1), is checked
    here against exact fractions (enumerated_moments)."""
    page = Path(__file__).parents[2] / "docs" / "maths" / "closed_forms.md"
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert "`rel_error` reports the estimate per row" not in text
    assert "is recomputed in exact rational arithmetic (Python integers;" in text
    assert "within `1e-12 * var^(r/2)` of its exact value or is that value correctly rounded" in (
        text
    )
    assert "`alpha = (1e9, 1e9, 1)` had an excess kurtosis of -197218 instead of 6" in text
    alpha = (1e9, 1e9, 1.0)
    mean, central = enumerated_moments(alpha, "amb", True)
    got = ambppl.dirichlet_moments(alpha)
    assert rel_err(got.mean, mean) < 1e-14
    var = float(central[2])
    for r in range(2, 5):
        err = abs(float(Fraction(float(got.central[r])) - central[r])) / var ** (r / 2)
        assert err < 1e-12, (r, err)
    kurt = float(central[4]) / var**2 - 3.0
    assert round(kurt) == 6 and got.excess_kurtosis == pytest.approx(kurt, abs=1e-12)


def test_dirichlet_moments_twenty_categories_against_mpmath():
    # reference: the same enumeration in 60-digit mpmath (7315 compositions of 4 into 19)
    rng = np.random.default_rng(21)
    cases = [
        (tuple(np.full(20, 500.0)), True),  # alpha_0 = 10^4, symmetric
        (tuple(rng.gamma(0.5, 20.0, size=20)), True),
        (tuple([9000.0] + [50.0] * 19), False),
    ]
    with mp.workdps(60):
        for alpha, has_cs in cases:
            for measure in ("amb", "modified"):
                mean, central = enumerated_moments(alpha, measure, has_cs, exact=False)
                got = ambppl.dirichlet_moments(alpha, measure, cant_solve=-1 if has_cs else None)
                assert rel_err(got.mean, mean) < 1e-14
                for r in range(2, 5):
                    err = abs(mp.mpf(float(got.central[r])) - central[r]) / central[2] ** (r / 2)
                    assert err < 1e-12, (measure, r, float(err))


def test_dirichlet_moments_first_two_match_dirichlet_mean_and_var():
    # reference: the existing closed forms (themselves tested against exact fractions above)
    alphas = [a for a in GRID if len(a) >= 3 and max(a) <= 1e6 and min(a) >= 1e-2]
    assert len(alphas) >= 10
    for cant_solve in (-1, None):
        for measure in ("amb", "modified"):
            for alpha in alphas:
                got = ambppl.dirichlet_moments(alpha, measure, cant_solve=cant_solve)
                mean = dirichlet_mean(alpha, measure, cant_solve=cant_solve)
                var = dirichlet_var(alpha, measure, cant_solve=cant_solve)
                assert got.mean == pytest.approx(mean, rel=1e-13), alpha
                assert got.var == pytest.approx(var, rel=1e-11), alpha


def test_dirichlet_moments_skewness_kurtosis_against_monte_carlo():
    # reference: 400,000 exact Dirichlet draws through ambppl.maths.measures; 5 standard errors
    # (the standard errors of the sample skewness and kurtosis estimated by batches)
    for alpha, cant_solve in [((3.0, 1.0, 0.5, 1.0), -1), ((6.0, 2.0, 2.0), None)]:
        rng = np.random.default_rng(99)
        q = rng.dirichlet(alpha, size=400_000)
        for measure in ("amb", "modified"):
            x = MEASURE_FUNCS[measure](q, cant_solve=cant_solve).reshape(100, -1)
            got = ambppl.dirichlet_moments(alpha, measure, cant_solve=cant_solve)
            d = x - x.mean()
            sd = math.sqrt(np.mean(d**2))
            skew_b = np.mean(d**3, axis=1) / sd**3
            kurt_b = np.mean(d**4, axis=1) / sd**4 - 3.0
            se = lambda v: np.std(v, ddof=1) / math.sqrt(v.size)  # noqa: E731
            assert abs(got.skewness - skew_b.mean()) < 5 * se(skew_b) + 1e-3
            assert abs(got.excess_kurtosis - kurt_b.mean()) < 5 * se(kurt_b) + 1e-3


def test_dirichlet_moments_batches_and_layout():
    rng = np.random.default_rng(8)
    alpha = rng.uniform(0.2, 30.0, size=(3, 5000, 5))  # several blocks of rows
    got = ambppl.dirichlet_moments(alpha, "modified", order=5)
    assert got.mean.shape == (3, 5000) and got.central.shape == (3, 5000, 6)
    one = ambppl.dirichlet_moments(alpha[2, 4321], "modified", order=5)
    assert isinstance(one.mean, np.float64) and one.central.shape == (6,)
    np.testing.assert_allclose(got.central[2, 4321], one.central, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(got.central[..., 0], 1.0)
    np.testing.assert_array_equal(got.central[..., 1], 0.0)
    moved = alpha[0, :10][:, [4, 0, 1, 2, 3]]  # can't-solve first
    np.testing.assert_allclose(
        ambppl.dirichlet_moments(moved, cant_solve=0).central,
        ambppl.dirichlet_moments(alpha[0, :10]).central,
        rtol=1e-13,
    )


def test_dirichlet_moments_bad_input():
    with pytest.raises(ValueError, match=r"order must be an integer in \[4, 12\], but got 3"):
        ambppl.dirichlet_moments([1.0, 1.0, 1.0], order=3)
    for bad in (13, 4.0, True):
        with pytest.raises(ValueError, match=r"order must be an integer in \[4, 12\]"):
            ambppl.dirichlet_moments([1.0, 1.0, 1.0], order=bad)
    for measure in ("old", "entropy"):
        with pytest.raises(NotImplementedError, match=rf"measure='{measure}'.*estimate them"):
            ambppl.dirichlet_moments([1.0, 1.0, 1.0], measure)
    with pytest.raises(ValueError, match=r"measure must be one of .* but got 'gini'"):
        ambppl.dirichlet_moments([1.0, 1.0, 1.0], "gini")
    with pytest.raises(ValueError, match=r"alpha must be strictly positive"):
        ambppl.dirichlet_moments([1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"needs at least 2 proper categories .* cant_solve=None"):
        ambppl.dirichlet_moments([1.0, 1.0], "modified")


# ------------------------------------------------------------------------------------------
# labelled and lazy inputs: a DataArray keeps its item coordinates, dask stays lazy


@pytest.mark.parametrize("func", ["dirichlet_mean", "dirichlet_var"])
def test_dataarray_keeps_labels_and_dask_stays_lazy(func):
    import dask.array
    import xarray as xr

    rng = np.random.default_rng(4)
    alpha = rng.gamma(2.0, 2.0, size=(7, 4)) + 0.1
    labelled = xr.DataArray(
        alpha.T,  # categories first: the function finds them by name, not position
        dims=("category", "item"),
        coords={"item": [f"t{i}" for i in range(7)], "category": list("abcd")},
    )
    fn = getattr(ambppl, func)
    eager = fn(labelled, "modified")
    assert eager.dims == ("item",) and eager["item"].values.tolist() == [f"t{i}" for i in range(7)]
    assert eager.name == f"modified_{func.split('_')[1]}"
    # the same numbers as the numpy route on the same rows
    np.testing.assert_array_equal(eager.values, fn(alpha, "modified"))
    lazy = fn(labelled.chunk({"item": 3, "category": 2}), "modified")
    assert isinstance(lazy.data, dask.array.Array) and lazy.chunks == ((3, 3, 1),)
    np.testing.assert_array_equal(lazy.compute().values, eager.values)
    # another name for the category dimension, and a wrong one
    renamed = labelled.rename(category="label")
    np.testing.assert_array_equal(fn(renamed, "modified", dim="label").values, eager.values)
    with pytest.raises(ValueError, match=rf"{func}: dim must be one of"):
        fn(renamed, dim="labels")
    with pytest.raises(ValueError, match="alpha"):  # eager input is checked at once
        fn(-labelled)


def test_too_few_proper_categories_is_reported_before_bad_values():
    """Two categories with can't-solve last leave one proper category: that structural error
    is the one reported, also when a concentration is invalid too (checks run in that order:
    shape, then the values block by block)."""
    with pytest.raises(ValueError, match=r"needs at least 2 proper categories .* but got 1"):
        dirichlet_mean([1.0, 0.0], "modified")
    # two proper categories and no can't-solve: valid, E amb = 1 - sum a(a+1) / (a0 (a0 + 1))
    # (paper eq. expr_amb_final with alpha_cs = 0): 1 - (2 + 6) / (3 * 4) = 1/3
    assert float(dirichlet_mean([1.0, 2.0], cant_solve=None)) == pytest.approx(1 / 3, rel=1e-15)


@pytest.mark.parametrize("fn", [dirichlet_mean, dirichlet_var])
def test_dim_with_an_array_is_refused(fn):
    refused = rf"{fn.__name__}: dim= is for xarray inputs; an array has its categories"
    with pytest.raises(TypeError, match=refused):
        fn(np.array([[3.0, 1.0, 1.0]]), dim="label")
