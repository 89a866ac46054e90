"""It must be able to fail: every planted fault is flagged by the checks that can see it."""

from __future__ import annotations

import numpy as np
import pytest

import ambppl
from ambppl.validation import FAULTS, check_density, check_moments, wrong_posterior

#: Two proper classes and can't-solve (so both checks apply): the paper's figure cases and
#: two small unbalanced items.
COUNTS = np.array([[5, 5, 5], [5, 0, 0], [30, 0, 0], [3, 1, 0], [2, 3, 1]])


@pytest.fixture(scope="module")
def correct():
    return ambppl.fit(
        ambppl.read_annotations(COUNTS, cant_solve="2"), draws=1000, chains=4, random_seed=17
    )


def test_the_correct_posterior_passes_both(correct):
    assert check_moments(correct).passed
    assert check_density(correct).passed


def test_fresh_draws_without_their_fault_pass(correct):
    # wrong_posterior redraws the posterior exactly; the "counts" fault only edits the
    # recorded counts, so with the counts put back its fresh draws must pass both checks:
    # the planted faults are then the only reason the checks fail below.
    wrong = wrong_posterior(correct, "counts", random_seed=3)
    wrong["observed_data"] = correct["observed_data"].to_dataset()
    assert check_moments(wrong).passed
    assert check_density(wrong).passed


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("check", [check_moments, check_density], ids=["moments", "density"])
def test_every_fault_is_flagged(correct, fault, check):
    wrong = wrong_posterior(correct, fault, random_seed=23)
    verdict = check(wrong)
    assert not verdict.passed, f"{check.__name__} missed fault {fault!r}: {verdict!r}"


def test_autocorrelated_draws_keep_the_marginal_law(correct):
    # The AR(1) copula keeps Dirichlet marginals: with ArviZ's MCSE (which accounts for the
    # autocorrelation) the moments pass; presented as independent ("auto" for an exact
    # result) they fail. That is the claim the check tests.
    wrong = wrong_posterior(correct, "autocorrelated", random_seed=5)
    assert not check_moments(wrong).passed
    assert check_moments(wrong, mcse="arviz").passed
    ess = ambppl.summarize(wrong).shape  # still a readable result
    assert ess[0] == len(COUNTS)


def test_faults_keep_layout_and_claims(correct):
    for fault in FAULTS:
        wrong = wrong_posterior(correct, fault, random_seed=1)
        assert wrong.attrs == correct.attrs
        for name in correct["posterior"].data_vars:
            assert wrong["posterior"][name].dims == correct["posterior"][name].dims
        q = wrong["posterior"]["q"].values
        np.testing.assert_allclose(q.sum(-1), 1.0)
    counts = wrong_posterior(correct, "counts")["observed_data"]["counts"].values
    np.testing.assert_array_equal(counts[:, 0], COUNTS[:, 0] + 2)


def test_bad_input(correct):
    with pytest.raises(ValueError, match="fault must be one of"):
        wrong_posterior(correct, "typo")
    no_q = correct.copy(deep=True)
    no_q["posterior"] = no_q["posterior"].to_dataset().drop_vars("q")
    with pytest.raises(ValueError, match="hold the draws of 'q'"):
        wrong_posterior(no_q, "shift")
    with pytest.raises(TypeError, match="DataTree"):
        wrong_posterior(COUNTS, "shift")


@pytest.mark.parametrize(("seed", "error"), [("x", TypeError), (-1, ValueError), (1.5, TypeError)])
def test_bad_random_seed_is_named(correct, seed, error):
    """numpy's own message ("SeedSequence expects int or sequence of ints ...", "expected
    non-negative integer") did not name random_seed."""
    with pytest.raises(error, match=r"^random_seed must be a non-negative int"):
        wrong_posterior(correct, "shift", random_seed=seed)
