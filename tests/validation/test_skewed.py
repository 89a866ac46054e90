"""The known-moment errors of the checks (``ambppl.validation._skewed``): the pilot moments
of the measures without finite moment sums against the closed forms where both exist, and
``square_moments`` against ``dirichlet_square_moments``."""

from __future__ import annotations

import numpy as np
import pytest

import ambppl
from ambppl.maths.moments import dirichlet_mean
from ambppl.validation._skewed import (
    PILOT_DRAWS,
    dirichlet_square_moments,
    pilot_central_moments,
    square_moments,
)
from ambppl.validation.reference import load_reference_case

#: Rows with and without can't-solve weight, small and moderate concentrations.
ALPHA = np.array([[5.0, 3.0, 2.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [30.5, 0.5, 0.5]])


@pytest.mark.parametrize("measure", ["amb", "modified"])
def test_pilot_moments_agree_with_the_closed_forms(measure: str) -> None:
    # The pilot's mu_r is a mean of M = PILOT_DRAWS independent (x - m)^r, whose standard
    # error is sqrt((mu_2r - mu_r^2) / M) with the exact mu_2r (dirichlet_moments to order
    # 12); 4.4 of them is a two-sided 1e-5 per value (16 values: 2e-4 in all).
    mean = np.asarray(dirichlet_mean(ALPHA, measure, cant_solve=2), dtype=np.float64)
    got = pilot_central_moments(ALPHA, measure, 2, mean)
    exact = np.asarray(ambppl.dirichlet_moments(ALPHA, measure, 12, cant_solve=2).central)
    for r in (2, 3, 4, 6):
        se = np.sqrt((exact[:, 2 * r] - exact[:, r] ** 2) / PILOT_DRAWS)
        assert np.all(np.abs(got[:, r] - exact[:, r]) <= 4.4 * se), (r, got[:, r], exact[:, r])
    # the first central moment about the exact mean is the pilot's own mean error
    assert np.all(np.abs(got[:, 1]) <= 4.4 * np.sqrt(exact[:, 2] / PILOT_DRAWS))
    # and the moments of (x - m)^2 follow from them as the closed forms do
    via_pilot = square_moments(got)
    closed = dirichlet_square_moments(ALPHA, measure, 2)
    np.testing.assert_allclose(via_pilot[0], closed[0], rtol=0.05)


@pytest.mark.parametrize("measure", ["entropy", "old"])
def test_pilot_variance_agrees_with_the_mpmath_reference(measure: str) -> None:
    # paper_posterior_figure stores the mpmath variance of both measures (two proper
    # classes); the pilot's mu_2 has standard error sqrt((mu_4 - mu_2^2) / M), estimated
    # from the pilot's own mu_4 (a 4.4-sigma band, two-sided 1e-5 per item).
    case = load_reference_case("paper_posterior_figure")
    ref = case.reference[case.reference["measure"] == measure]
    mean = ref[ref["statistic"] == "mean"]["value"].to_numpy()
    var = ref[ref["statistic"] == "var"]["value"].to_numpy()
    alpha = np.array([item["alpha"] for item in case.posterior["items"]])
    got = pilot_central_moments(alpha, measure, 2, mean)
    se = np.sqrt((got[:, 4] - got[:, 2] ** 2) / PILOT_DRAWS)
    assert np.all(np.abs(got[:, 2] - var) <= 4.4 * se), (got[:, 2], var)


def test_pilot_moments_are_seeded_and_cached() -> None:
    mean = np.asarray(dirichlet_mean(ALPHA[:1], "old", cant_solve=2), dtype=np.float64)
    first = pilot_central_moments(ALPHA[:1], "old", 2, mean)
    again = pilot_central_moments(ALPHA[:1].copy(), "old", 2, mean.copy())
    np.testing.assert_array_equal(first, again)
    assert first[0, 0] == 1.0
