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
    "MEASURES": "ambppl.measures",
    "amb": "ambppl.measures",
    "amb_modified": "ambppl.measures",
    "amb_old": "ambppl.measures",
    "normalized_entropy": "ambppl.measures",
    "dirichlet_mean": "ambppl.moments",
    "dirichlet_var": "ambppl.moments",
    "dirichlet_moments": "ambppl.moments",
    "approximate_distribution": "ambppl.approx",
    "ambiguity_posterior": "ambppl.exact",
    "estimate": "ambppl.estimators",
    "expected_plugin": "ambppl.estimators",
    "less_biased_bias": "ambppl.estimators",
    "plugin_bias": "ambppl.estimators",
    "read_annotations": "ambppl.data",
    "get_model": "ambppl.catalog",
    "list_models": "ambppl.catalog",
    "summarize": "ambppl.summary",
    "rank": "ambppl.summary",
    "select": "ambppl.summary",
    "stratify": "ambppl.summary",
    "summarize_counts": "ambppl.summary",
    "score": "ambppl.scoring",
    "loo": "ambppl.comparison",
    "compare": "ambppl.comparison",
    "prior_sensitivity": "ambppl.sensitivity",
    "hyperprior_sensitivity": "ambppl.sensitivity",
    "ConvergenceWarning": "ambppl.convergence",
    "expected_posterior_sd": "ambppl.planning",
    "expected_posterior_var": "ambppl.planning",
    "answers_needed": "ambppl.planning",
    "next_batch": "ambppl.planning",
}

# ``fit`` is imported eagerly (ambppl.fit loads only numpy): a lazily exported function named
# like its module would be replaced by the module object as soon as anything imported
# ``ambppl.fit`` (the import system sets the package attribute ``fit`` to the submodule).
from ambppl.fit import fit  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ambppl.approx import approximate_distribution
    from ambppl.catalog import get_model, list_models
    from ambppl.comparison import compare, loo
    from ambppl.convergence import ConvergenceWarning
    from ambppl.data import read_annotations
    from ambppl.estimators import estimate, expected_plugin, less_biased_bias, plugin_bias
    from ambppl.exact import ambiguity_posterior
    from ambppl.measures import MEASURES, amb, amb_modified, amb_old, normalized_entropy
    from ambppl.moments import dirichlet_mean, dirichlet_moments, dirichlet_var
    from ambppl.planning import (
        answers_needed,
        expected_posterior_sd,
        expected_posterior_var,
        next_batch,
    )
    from ambppl.scoring import score
    from ambppl.sensitivity import hyperprior_sensitivity, prior_sensitivity
    from ambppl.summary import rank, select, stratify, summarize, summarize_counts

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
