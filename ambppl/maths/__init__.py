"""The mathematics of ambiguity: pure numpy/scipy/xarray, no PyMC, no ArviZ.

The measures on a response distribution (``measures``), closed-form posterior moments under a
Dirichlet (``moments``), the plug-in and less-biased estimators (``estimators``), the exact
posterior law for two proper classes (``exact``) and the fitted approximations (``approx``).
This layer imports nothing of ambppl above it but ``ambppl.internal``.
"""

from ambppl.maths.approx import (
    ApproximateDistribution,
    accuracy_map,
    approximate_distribution,
)
from ambppl.maths.estimators import (
    estimate,
    expected_plugin,
    less_biased_bias,
    plugin_bias,
)
from ambppl.maths.exact import (
    EXACT_MEASURES,
    AmbiguityPosterior,
    ambiguity_posterior,
)
from ambppl.maths.measures import (
    MEASURES,
    VARIABLES,
    amb,
    amb_modified,
    amb_old,
    evaluate,
    measures_for,
    min_proper,
    normalized_entropy,
)
from ambppl.maths.moments import (
    MAX_ORDER,
    DirichletMoments,
    dirichlet_mean,
    dirichlet_moments,
    dirichlet_var,
)

__all__ = [
    "EXACT_MEASURES",
    "MAX_ORDER",
    "MEASURES",
    "VARIABLES",
    "AmbiguityPosterior",
    "ApproximateDistribution",
    "DirichletMoments",
    "accuracy_map",
    "amb",
    "amb_modified",
    "amb_old",
    "ambiguity_posterior",
    "approximate_distribution",
    "dirichlet_mean",
    "dirichlet_moments",
    "dirichlet_var",
    "estimate",
    "evaluate",
    "expected_plugin",
    "less_biased_bias",
    "measures_for",
    "min_proper",
    "normalized_entropy",
    "plugin_bias",
]
