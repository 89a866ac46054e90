"""ambppl: Bayesian inference of ambiguity in categorical annotations.

Importing ``ambppl`` needs only numpy; every public name below is loaded from its module on
first use (PEP 562), so ``import ambppl`` stays well under 0.5 s and pulls in neither scipy,
xarray, pandas nor PyMC/ArviZ until a function that needs them is called.

To export a new public name: add it to ``_EXPORTS`` (name -> module), to the imports of
``__init__.pyi`` (what type checkers and IDEs read) and to the literal ``__all__`` (sorted).
"""

from __future__ import annotations

import importlib
from typing import Any

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
    "hyperprior_sensitivity": "ambppl.analysis.hyperprior",
    "ConvergenceWarning": "ambppl.inference.convergence",
    "expected_posterior_sd": "ambppl.analysis.planning",
    "expected_posterior_var": "ambppl.analysis.planning",
    "answers_needed": "ambppl.analysis.planning",
    "next_batch": "ambppl.analysis.planning",
}

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
