"""Validation: ambppl's posteriors checked against mathematics that does not use the sampler.

Every check returns a :class:`ValidationResult` (``.passed``, ``.statistic``, ``.p_value``,
``.level``, ``.table``, ``.plot()``):

- :func:`check_moments`: every item's draws against the closed-form posterior moments;
- :func:`check_density`: two-class items against the exact posterior law;
- :func:`posterior_predictive` / :func:`check_predictive`: replicated answers against the
  observed ones (does the model fit the data?);
- :func:`run_reference_cases`: fits of the stored reference cases (``models/reference/``);
- :func:`sbc`: simulation-based calibration of any catalog model and method.
"""

from ambppl.validation._result import ValidationResult
from ambppl.validation.closed_form import check_moments
from ambppl.validation.density import check_density
from ambppl.validation.faults import FAULTS, wrong_posterior

__all__ = [
    "FAULTS",
    "ValidationResult",
    "check_density",
    "check_moments",
    "wrong_posterior",
]
