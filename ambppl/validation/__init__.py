"""Validation: ambppl's posteriors checked against mathematics that does not use the sampler.

Every check returns a :class:`ValidationResult` (``.passed``, ``.statistic``, ``.p_value``,
``.level``, ``.table``, ``.plot()``):

- :func:`check_moments`: every item's draws against the closed-form posterior moments;
- :func:`check_density`: two-class items against the exact posterior law;
- :func:`posterior_predictive` / :func:`check_predictive`: replicated answers against the
  observed ones (does the model fit the data?);
- :func:`run_reference_cases` / :func:`check_reference`: fits of the stored reference cases
  (``models/reference/``) against their high-precision reference posteriors;
- :func:`sbc`: simulation-based calibration of any catalog model and method;
- :func:`check_fit`: every check that applies to one fit, one verdict (a :class:`FitCheck`),
  each predictive statistic in words and the catalog model that addresses a failure (what
  ``ambppl validate FILE`` prints);
- :func:`validate`: :func:`ambppl.fit` of annotations already read, then :func:`check_fit`
  (the one call of ``ambppl validate FILE``);
- :func:`wrong_posterior`: deliberately wrong posteriors, to see the checks fail;
- :class:`NotApplicable`: the error a check raises where it does not apply to a kind of fit
  (a ``ValueError``; any other error of a check means a broken result), and
  :class:`TooFewDraws`, its kind where more draws would make the check apply.

Importing this package needs numpy only; pandas, scipy, ArviZ and PyMC are imported by the
checks that use them.
"""

from ambppl.validation._result import NotApplicable, TooFewDraws, ValidationResult
from ambppl.validation.closed_form import check_moments
from ambppl.validation.data_check import validate
from ambppl.validation.density import check_density
from ambppl.validation.faults import FAULTS, wrong_posterior
from ambppl.validation.fit_check import FitCheck, check_fit
from ambppl.validation.predictive import check_predictive, posterior_predictive
from ambppl.validation.reference import (
    check_reference,
    list_reference_cases,
    load_reference_case,
    run_reference_cases,
)
from ambppl.validation.sbc import plot_sbc, sbc

__all__ = [
    "FAULTS",
    "FitCheck",
    "NotApplicable",
    "TooFewDraws",
    "ValidationResult",
    "check_density",
    "check_fit",
    "check_moments",
    "check_predictive",
    "check_reference",
    "list_reference_cases",
    "load_reference_case",
    "plot_sbc",
    "posterior_predictive",
    "run_reference_cases",
    "sbc",
    "validate",
    "wrong_posterior",
]
