"""ambppl: Bayesian inference of ambiguity in categorical annotations.

Importing ``ambppl`` needs only numpy, scipy and xarray; PyMC and ArviZ are imported by the
functions that need them.
"""

from ambppl.measures import MEASURES, amb, amb_modified, amb_old, normalized_entropy

__version__ = "0.1.0"

__all__ = [
    "MEASURES",
    "__version__",
    "amb",
    "amb_modified",
    "amb_old",
    "normalized_entropy",
]
