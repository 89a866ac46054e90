"""ambppl: Bayesian inference of ambiguity in categorical annotations.

Importing ``ambppl`` needs only numpy; every public name below is loaded from its module on
first use (PEP 562), so ``import ambppl`` stays well under 0.5 s and pulls in neither scipy,
xarray, pandas nor PyMC/ArviZ until a function that needs them is called.

To export a new public name: add it to ``_EXPORTS`` (name -> module), to the
``TYPE_CHECKING`` imports and to the literal ``__all__`` (sorted).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "MEASURES": "ambppl.maths.measures",
    "fit": "ambppl.inference.fitting",
    "amb": "ambppl.maths.measures",
    "amb_modified": "ambppl.maths.measures",
    "amb_old": "ambppl.maths.measures",
    "normalized_entropy": "ambppl.maths.measures",
    "dirichlet_mean": "ambppl.maths.moments",
    "dirichlet_var": "ambppl.maths.moments",
    "dirichlet_moments": "ambppl.maths.moments",
    "approximate_distribution": "ambppl.maths.approx",
    "ambiguity_posterior": "ambppl.maths.exact",
    "estimate": "ambppl.maths.estimators",
    "expected_plugin": "ambppl.maths.estimators",
    "less_biased_bias": "ambppl.maths.estimators",
    "plugin_bias": "ambppl.maths.estimators",
    "read_annotations": "ambppl.data.readers",
    "get_model": "ambppl.inference.catalog",
    "list_models": "ambppl.inference.catalog",
    "summarize": "ambppl.analysis.summary",
    "rank": "ambppl.analysis.summary",
    "select": "ambppl.analysis.summary",
    "stratify": "ambppl.analysis.summary",
    "summarize_counts": "ambppl.analysis.summary",
    "score": "ambppl.analysis.scoring",
    "loo": "ambppl.analysis.comparison",
    "compare": "ambppl.analysis.comparison",
    "prior_sensitivity": "ambppl.analysis.sensitivity",
    "hyperprior_sensitivity": "ambppl.analysis.sensitivity",
    "ConvergenceWarning": "ambppl.inference.convergence",
    "expected_posterior_sd": "ambppl.analysis.planning",
    "expected_posterior_var": "ambppl.analysis.planning",
    "answers_needed": "ambppl.analysis.planning",
    "next_batch": "ambppl.analysis.planning",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ambppl.analysis.comparison import compare, loo
    from ambppl.analysis.planning import (
        answers_needed,
        expected_posterior_sd,
        expected_posterior_var,
        next_batch,
    )
    from ambppl.analysis.scoring import score
    from ambppl.analysis.sensitivity import hyperprior_sensitivity, prior_sensitivity
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ambppl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # cache: later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
