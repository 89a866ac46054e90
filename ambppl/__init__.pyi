"""Type stub of the lazily loaded package (``__init__.py`` loads each name on first use)."""

from ambppl.analysis.comparison import compare, loo
from ambppl.analysis.hyperprior import hyperprior_sensitivity
from ambppl.analysis.planning import (
    answers_needed,
    expected_posterior_sd,
    expected_posterior_var,
    next_batch,
)
from ambppl.analysis.scoring import score
from ambppl.analysis.sensitivity import prior_sensitivity
from ambppl.analysis.summary import rank, select, stratify, summarize, summarize_counts
from ambppl.data.readers import read_annotations
from ambppl.inference.catalog import get_model, list_models
from ambppl.inference.convergence import ConvergenceWarning
from ambppl.inference.fitting import fit
from ambppl.maths.approx import approximate_distribution
from ambppl.maths.estimators import estimate, expected_plugin, less_biased_bias, plugin_bias
from ambppl.maths.exact import ambiguity_posterior
from ambppl.maths.measures import MEASURES, amb, amb_modified, amb_old, normalized_entropy
from ambppl.maths.moments import dirichlet_mean, dirichlet_moments, dirichlet_var

__version__: str

__all__ = [  # noqa: RUF022 - plain sorted() order, as tests/test_package.py checks
    "ConvergenceWarning",
    "MEASURES",
    "__version__",
    "amb",
    "amb_modified",
    "amb_old",
    "ambiguity_posterior",
    "answers_needed",
    "approximate_distribution",
    "compare",
    "dirichlet_mean",
    "dirichlet_moments",
    "dirichlet_var",
    "estimate",
    "expected_plugin",
    "expected_posterior_sd",
    "expected_posterior_var",
    "fit",
    "get_model",
    "hyperprior_sensitivity",
    "less_biased_bias",
    "list_models",
    "loo",
    "next_batch",
    "normalized_entropy",
    "plugin_bias",
    "prior_sensitivity",
    "rank",
    "read_annotations",
    "score",
    "select",
    "stratify",
    "summarize",
    "summarize_counts",
]
