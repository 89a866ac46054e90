"""ambppl: Bayesian inference of ambiguity in categorical annotations.

Importing ``ambppl`` needs only numpy; every public name below is loaded from its module on
first use (PEP 562), so ``import ambppl`` stays well under 0.5 s and pulls in neither scipy,
xarray, pandas nor PyMC/ArviZ until a function that needs them is called.

To export a new public name: add it to ``_EXPORTS`` (name -> module), to the imports of
``__init__.pyi`` (what type checkers and IDEs read) and to the literal ``__all__`` (sorted).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
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


#: Module paths of the flat layout before the subpackages (version 0.1.0 until November 2026)
#: -> where each module lives now. ``import ambppl.measures`` still works, with a
#: DeprecationWarning naming the new path. Not ``ambppl.fit``: that name is the function.
MOVED_MODULES: dict[str, str] = {
    "ambppl.measures": "ambppl.maths.measures",
    "ambppl.moments": "ambppl.maths.moments",
    "ambppl.estimators": "ambppl.maths.estimators",
    "ambppl.exact": "ambppl.maths.exact",
    "ambppl.approx": "ambppl.maths.approx",
    "ambppl.catalog": "ambppl.inference.catalog",
    "ambppl.modeling": "ambppl.inference.modeling",
    "ambppl.convergence": "ambppl.inference.convergence",
    "ambppl.summary": "ambppl.analysis.summary",
    "ambppl.scoring": "ambppl.analysis.scoring",
    "ambppl.raters": "ambppl.analysis.raters",
    "ambppl.planning": "ambppl.analysis.planning",
    "ambppl.sensitivity": "ambppl.analysis.sensitivity",
    "ambppl.comparison": "ambppl.analysis.comparison",
    "ambppl.figures": "ambppl.report.plots",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path of :data:`MOVED_MODULES`: a stand-in module whose attributes
    are the new module's (PEP 562 ``__getattr__``), after a DeprecationWarning."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: Any) -> types.ModuleType:
        new = MOVED_MODULES[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new} (ambppl's subpackages); import from {new}, or use "
            "the name from the top-level ambppl namespace",
            DeprecationWarning,
            stacklevel=2,
        )
        real = importlib.import_module(new)
        stand_in = types.ModuleType(spec.name, real.__doc__)
        stand_in.__getattr__ = lambda name: getattr(real, name)  # type: ignore[method-assign]
        stand_in.__dir__ = lambda: dir(real)  # type: ignore[method-assign]
        stand_in.__all__ = list(getattr(real, "__all__", ()))
        return stand_in

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the stand-in reads every attribute from the new module."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
