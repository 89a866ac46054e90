"""The model catalog: the PyMC programs in ``models/`` and their info records.

Each entry is a pair of files, ``<name>.py`` (maths in the module docstring, the PyMC program
and the functions of the sampling routes it offers) and ``<name>.json`` (the info record:
``name``, ``description``, ``parameters`` with their defaults, ``reference``, ``data``
(``"counts"`` or ``"long"``: what the model is fitted to) and ``methods``, the sampling
routes of :func:`ambppl.fit`, the default first; optional: ``sampler``, the default NUTS
implementation; ``nuts_defaults``, ``fit``'s defaults for the methods that run NUTS, with
keys from :data:`NUTS_DEFAULT_KEYS`; ``limitation``, a sentence the convergence advice quotes
for divergent transitions; and ``slow``, a mapping from a posterior variable to a sentence on
why it may mix slowly and what to do, quoted when that variable is the worst of a fit that
missed the R-hat or ESS limits, :func:`ambppl.inference.convergence.convergence_advice`).
Adding a model is adding these two files;
what each route needs from the ``.py`` file:

=================== ==========================================================================
method              functions of the model file
=================== ==========================================================================
``exact``           ``concentration(None, n_categories=K, **params)``; ``HYPERPARAMETERS = ()``
``collapsed``       ``hyper_model(counts, **params)``, ``concentration(hyper, ...)``
``empirical_bayes`` ``empirical_bayes(counts, **params)``, ``concentration(hyper, ...)``
``laplace``         ``model(counts, **params)`` (mode and Laplace draws of the PyMC program)
``map``             ``model(counts, **params)`` (its mode, one point); or, preferred when
                    present, ``posterior_mode(counts, **params)`` returning the same
                    ``(posterior, constant_data, info)`` as
                    :func:`ambppl.inference.laplace.mode_point`
``nuts``            ``model(counts, **params)`` (always required: the PyMC program)
=================== ==========================================================================

Optional in the ``.py`` file: ``nuts_defaults(data, **params)``, NUTS settings that depend on
the design (a dict with keys from :data:`NUTS_DEFAULT_KEYS`, checked as the record's), which
update the record's ``nuts_defaults`` (:meth:`ModelEntry.nuts_defaults`; the caller's
settings still win). ``HYPERPARAMETERS`` names the posterior variables ``concentration``
reads; the free ones among them have their prior density stored in ``log_prior`` for
:func:`ambppl.hyperprior_sensitivity`, and an optional ``HYPERPRIORS`` (a tuple of names)
adds free variables that are not hyperparameters themselves but carry their prior (e.g.
``rater_effects``' shared scale of two categories, of which ``sigma_item`` is a copy);
``fit`` computes the ``log_likelihood`` group from ``concentration``
(:mod:`ambppl.inference.modeling`). Where a function of the file gives a parameter a default
in its signature, it must be the info record's ``default`` (``fit`` passes the caller's
parameters only, so the file's defaults run, and it records the info record's): the entry's
``module`` refuses a disagreement. The model files import :mod:`ambppl.inference.modeling`
and nothing private of ambppl. The catalog folder is, in this order of preference:

1. the folder named by the environment variable ``AMBPPL_MODELS`` (for tests and for users
   who keep their own models);
2. ``ambppl/_models`` inside an installed wheel (``pyproject.toml`` maps ``models`` there);
3. the top-level ``models/`` folder of a source checkout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ambppl.data.contract import refuse_read_options
from ambppl.data.readers import read_annotations, read_long

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ENV_VAR",
    "INFO_KEYS",
    "ROUTE_FUNCTIONS",
    "ModelEntry",
    "catalog_dir",
    "get_model",
    "list_models",
    "model_parameters",
    "parameter_owners",
    "read_record",
]

#: Environment variable that overrides the catalog folder.
ENV_VAR = "AMBPPL_MODELS"
#: Keys every info record must have.
INFO_KEYS = ("name", "description", "parameters", "reference", "methods", "data")

#: NUTS implementations an info record may name as its default (optional key ``sampler``,
#: used by ``fit(method="nuts")`` when ``sampler=None`` and the package is installed).
SAMPLERS = ("pymc", "nutpie", "numpyro", "blackjax")
#: Keys of an info record's optional ``nuts_defaults`` (``fit``'s defaults for NUTS methods).
NUTS_DEFAULT_KEYS = ("draws", "chains", "tune", "target_accept", "adaptation")
#: nutpie's mass-matrix adaptations, the values of ``nuts_defaults["adaptation"]`` (a nutpie
#: option: ``fit`` passes it where the sampler is nutpie, and other samplers have none).
NUTPIE_ADAPTATIONS = ("diag", "draw_diag", "low_rank")
#: Sampling route (``fit``'s ``method``) -> the functions the model file must define for it.
ROUTE_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "exact": ("concentration",),
    "collapsed": ("hyper_model", "concentration"),
    "empirical_bayes": ("empirical_bayes", "concentration"),
    "laplace": ("model",),
    "map": ("model",),
    "nuts": ("model",),
}


def catalog_dir(path: str | Path | None = None) -> Path:
    """The folder the catalog is read from.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Use this folder instead of the default lookup.

    Returns
    -------
    pathlib.Path
        ``path`` if given, else ``$AMBPPL_MODELS``, else ``ambppl/_models`` of an installed
        wheel, else ``models/`` of the source checkout.

    Raises
    ------
    ValueError
        If the folder does not exist.

    Notes
    -----
    The wheel's ``_models`` folder is tried before the checkout's ``models/`` so that an
    installed copy never picks up an unrelated ``models`` folder next to ``site-packages``.

    References
    ----------
    ``pyproject.toml``: ``[tool.hatch.build.targets.wheel.force-include]``.

    Examples
    --------
    >>> catalog_dir().name in ("models", "_models")
    True
    """
    package = Path(__file__).resolve().parents[1]  # ambppl/
    if path is not None:
        folder, what = Path(path), "path"
    elif os.environ.get(ENV_VAR):
        folder, what = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    elif (package / "_models").is_dir():
        folder, what = package / "_models", "the installed catalog"
    else:
        folder, what = package.parent / "models", "the source checkout's catalog"
    if not folder.is_dir():
        state = "is a file" if folder.exists() else "does not exist"
        raise ValueError(
            f"{what} must be a folder of models (<name>.py + <name>.json), but "
            f"{str(folder)!r} {state}"
        )
    return folder


def read_record(
    json_path: Path, keys: Sequence[str] = (), what: str = "info record"
) -> dict[str, Any]:
    """Load a JSON object named after its file, with the given keys.

    Parameters
    ----------
    json_path : pathlib.Path
        The file; its ``name`` entry (when ``keys`` asks for one) must equal its stem.
    keys : sequence of str
        Keys the record must have.
    what : str, default "info record"
        How error messages name the file (e.g. ``"reference case"``).

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        If the file is not valid JSON, not an object, lacks a key or has another name.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "toy.json").write_text('{"name": "toy"}')
    >>> read_record(folder / "toy.json", ("name",))
    {'name': 'toy'}
    """
    import json

    try:
        info = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{what} {json_path.name!r} must be valid JSON, but {err}") from err
    if not isinstance(info, dict):
        raise ValueError(
            f"{what} {json_path.name!r} must be a JSON object, but got {type(info).__name__}"
        )
    missing = [k for k in keys if k not in info]
    if missing:
        raise ValueError(
            f"{what} {json_path.name!r} must have the keys {list(keys)!r}, but "
            f"{missing!r} are missing"
        )
    if "name" in keys and info["name"] != json_path.stem:
        raise ValueError(
            f"{what} {json_path.name!r} must have name {json_path.stem!r} (its file "
            f"name), but got {info['name']!r}"
        )
    return info


def _read_info(json_path: Path) -> dict[str, Any]:
    """Load and check one info record."""
    info = read_record(json_path, INFO_KEYS)
    if not isinstance(info["parameters"], dict) or not all(
        isinstance(v, dict) and "default" in v for v in info["parameters"].values()
    ):
        raise ValueError(
            f"info record {json_path.name!r} must map each parameter to "
            f'{{"default": ..., "description": ...}}, but got {info["parameters"]!r}'
        )
    methods = info["methods"]
    if (
        not isinstance(methods, list)
        or not methods
        or any(m not in ROUTE_FUNCTIONS for m in methods)
        or len(set(methods)) != len(methods)
    ):
        raise ValueError(
            f"info record {json_path.name!r} must list its methods (default first) from "
            f"{list(ROUTE_FUNCTIONS)} without repeats, but got {methods!r}"
        )
    if info["data"] not in ("counts", "long"):
        raise ValueError(
            f"info record {json_path.name!r} must have data 'counts' or 'long', "
            f"but got {info['data']!r}"
        )
    _check_nuts_defaults(info.get("nuts_defaults", {}), json_path.name)
    _check_sentences(info, json_path.name)
    if info.get("sampler") not in (None, *SAMPLERS):
        raise ValueError(
            f"info record {json_path.name!r} may name its default NUTS sampler from "
            f"{list(SAMPLERS)}, but got sampler {info['sampler']!r}"
        )
    return info


def _check_sentences(info: dict[str, Any], name: str) -> None:
    """The optional advice of an info record: ``limitation`` a non-empty string, ``slow`` a
    mapping from variable names to non-empty strings."""

    def sentence(value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())

    if "limitation" in info and not sentence(info["limitation"]):
        raise ValueError(
            f"info record {name!r} may set limitation, a sentence for the convergence "
            f"advice, but got {info['limitation']!r}"
        )
    slow = info.get("slow", {})
    if not isinstance(slow, dict) or not all(sentence(k) and sentence(v) for k, v in slow.items()):
        raise ValueError(
            f"info record {name!r} may set slow, a mapping from a posterior variable to a "
            f"sentence for the convergence advice, but got {slow!r}"
        )


def _check_nuts_defaults(defaults: Any, name: str) -> None:
    """The optional ``nuts_defaults`` of an info record: ``fit``'s defaults for the methods
    that run NUTS (``draws`` and ``chains``: positive integers; ``tune``: a non-negative
    integer; ``target_accept``: a number in (0, 1); ``adaptation``: one of
    :data:`NUTPIE_ADAPTATIONS`)."""
    if not isinstance(defaults, dict) or set(defaults) - set(NUTS_DEFAULT_KEYS):
        raise ValueError(
            f"info record {name!r} may set nuts_defaults, a mapping with keys from "
            f"{list(NUTS_DEFAULT_KEYS)}, but got {defaults!r}"
        )
    for key, value in defaults.items():
        if key == "adaptation":
            if value not in NUTPIE_ADAPTATIONS:
                raise ValueError(
                    f"info record {name!r}: nuts_defaults['adaptation'] must be one of "
                    f"{list(NUTPIE_ADAPTATIONS)} (nutpie's mass-matrix adaptations), but got "
                    f"{value!r}"
                )
            continue
        if key == "target_accept":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            ok = ok and 0.0 < value < 1.0
        else:
            low = 0 if key == "tune" else 1
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
        if not ok:
            raise ValueError(
                f"info record {name!r}: nuts_defaults[{key!r}] must be "
                + ("a number in (0, 1)" if key == "target_accept" else "a whole number")
                + f", but got {value!r}"
            )


def _load_module(path: Path) -> ModuleType:
    """Import ``path`` as a module (once per path and modification time)."""
    import importlib.util

    key = f"ambppl._catalog_models.{path.stem}_{abs(hash((str(path), path.stat().st_mtime_ns)))}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for odd file systems
        raise ValueError(f"model file {str(path)!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[key]
        raise
    if not callable(getattr(module, "model", None)):
        raise ValueError(
            f"model file {path.name!r} must define a function model(counts, **params) (the "
            "PyMC program), but has none"
        )
    return module


def _check_routes(entry: ModelEntry, module: ModuleType) -> None:
    """Each listed method's functions exist; ``exact`` needs a fixed prior."""
    for method in entry.info["methods"]:
        missing = [f for f in ROUTE_FUNCTIONS[method] if not callable(getattr(module, f, None))]
        if missing:
            raise ValueError(
                f"model file {entry.path.name!r} lists method {method!r}, which needs the "
                f"functions {list(ROUTE_FUNCTIONS[method])}, but {missing} are missing"
            )
    hyper = getattr(module, "HYPERPARAMETERS", ())
    if not isinstance(hyper, tuple) or not all(isinstance(h, str) for h in hyper):
        raise ValueError(
            f"model file {entry.path.name!r} must define HYPERPARAMETERS as a tuple of "
            f"variable names, but got {hyper!r}"
        )
    priors = getattr(module, "HYPERPRIORS", ())
    if not isinstance(priors, tuple) or not all(isinstance(h, str) for h in priors):
        raise ValueError(
            f"model file {entry.path.name!r} must define HYPERPRIORS (where it has it) as a "
            f"tuple of variable names, but got {priors!r}"
        )
    if "exact" in entry.info["methods"] and hyper:
        raise ValueError(
            f"model file {entry.path.name!r} lists method 'exact', which needs a fixed prior, "
            f"but declares the hyperparameters {list(hyper)}; offer 'collapsed' or "
            "'empirical_bayes' instead"
        )
    _check_defaults(entry, module)


#: The functions of a model file that ``fit`` (and :meth:`ModelEntry.build`) call with the
#: caller's parameters: the routes' (:data:`ROUTE_FUNCTIONS`) and the optional ones.
PARAMETER_FUNCTIONS = (
    *dict.fromkeys(f for functions in ROUTE_FUNCTIONS.values() for f in functions),
    "posterior_mode",
    "log_likelihood",
    "nuts_defaults",
)


def _check_defaults(entry: ModelEntry, module: ModuleType) -> None:
    """Each parameter's default in the info record equals the default of that parameter in
    the signature of every function of the file that ``fit`` calls
    (:data:`PARAMETER_FUNCTIONS`) and gives one.

    ``fit`` passes a function the caller's parameters only, so the file's defaults are those
    that run, while the result's ``parameters`` attribute and ``ambppl models`` show the info
    record's: a disagreement would record a prior that was not used."""
    import inspect

    recorded = {name: spec["default"] for name, spec in entry.info["parameters"].items()}
    for function in PARAMETER_FUNCTIONS:
        own = getattr(module, function, None)
        if not callable(own):
            continue
        try:
            parameters = inspect.signature(own).parameters
        except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
            continue
        for name, value in recorded.items():
            p = parameters.get(name)
            if p is None or p.default is inspect.Parameter.empty:
                continue
            if not _same_default(value, p.default):
                raise ValueError(
                    f"model file {entry.path.name!r} and its info record "
                    f"{entry.path.with_suffix('.json').name!r} must give the parameter "
                    f"{name!r} the same default (fit runs {function}() with the file's and "
                    f"records the info record's), but {function}() has {name}="
                    f"{p.default!r} and the info record {value!r}; make them the same"
                )


def _same_default(recorded: Any, own: Any) -> bool:
    """Whether a JSON default equals a Python one: numbers by value (1 and 1.0 alike), not
    True for 1; lists, tuples and numpy arrays element by element; None only as null."""
    if hasattr(own, "tolist") and not isinstance(own, str):  # numpy arrays and scalars
        own = own.tolist()
    if isinstance(recorded, bool) or isinstance(own, bool):
        return isinstance(recorded, bool) and isinstance(own, bool) and recorded == own
    if isinstance(recorded, list) or isinstance(own, list | tuple):
        return (
            isinstance(recorded, list)
            and isinstance(own, list | tuple)
            and len(recorded) == len(own)
            and all(_same_default(a, b) for a, b in zip(recorded, own, strict=True))
        )
    if isinstance(recorded, dict) or isinstance(own, dict):
        return (
            isinstance(recorded, dict)
            and isinstance(own, dict)
            and recorded.keys() == own.keys()
            and all(_same_default(recorded[k], own[k]) for k in recorded)
        )
    if recorded is None or own is None:
        return recorded is own
    try:
        return bool(recorded == own)
    except (TypeError, ValueError):  # pragma: no cover - an object without equality
        return False


@dataclass(frozen=True)
class ModelEntry:
    """One catalog entry: a PyMC program and its info record.

    Attributes
    ----------
    name : str
        The entry's name (the file stem).
    info : dict
        The info record (keys ``name``, ``description``, ``parameters``, ``reference``,
        ``methods``, ``data``).
    path : pathlib.Path
        The ``<name>.py`` file.
    """

    name: str
    info: dict[str, Any] = field(repr=False, compare=False)
    path: Path

    @property
    def module(self) -> ModuleType:
        """The model file, imported (once per modification time) and checked: the
        functions of its methods, ``HYPERPARAMETERS``, and its parameters' defaults against
        the info record's."""
        module = _load_module(self.path)
        _check_routes(self, module)
        return module

    @property
    def hyperparameters(self) -> tuple[str, ...]:
        """Posterior variables the prior of ``q_i`` depends on (the file's HYPERPARAMETERS)."""
        return tuple(getattr(self.module, "HYPERPARAMETERS", ()))

    @property
    def hyperpriors(self) -> tuple[str, ...]:
        """Variables whose prior density ``fit`` stores in ``log_prior`` where they are free
        (sampled): :attr:`hyperparameters`, then the file's ``HYPERPRIORS``."""
        return tuple(
            dict.fromkeys([*self.hyperparameters, *getattr(self.module, "HYPERPRIORS", ())])
        )

    @property
    def defaults(self) -> dict[str, Any]:
        """The parameters' defaults from the info record."""
        return {k: v["default"] for k, v in self.info["parameters"].items()}

    def nuts_defaults(self, data: Any, **params: Any) -> dict[str, Any]:
        """``fit``'s NUTS defaults for ``data``: the info record's ``nuts_defaults``, updated
        by the file's own ``nuts_defaults(data, **params)`` where it has one (settings that
        depend on the design, e.g. a higher ``target_accept`` for few raters); both checked.

        Parameters
        ----------
        data : object
            What the model is fitted to (counts, or answers for ``"data": "long"``).
        **params
            The model's parameters as given to ``fit``.

        Returns
        -------
        dict
            Keys from ``draws``, ``chains``, ``tune``, ``target_accept`` and ``adaptation``
            (nutpie's mass-matrix adaptation, :data:`NUTPIE_ADAPTATIONS`).

        Raises
        ------
        ValueError
            When the file's function returns another key or a value out of range.
        """
        own = dict(self.info.get("nuts_defaults", {}))
        by_design = getattr(self.module, "nuts_defaults", None)
        if by_design is not None:
            chosen = by_design(data, **params)
            _check_nuts_defaults(chosen, f"{self.path.name}: nuts_defaults()")
            own.update(chosen)
        return own

    def build(self, counts: Any, **prior: Any) -> Any:
        """Build the entry's ``pymc.Model`` for ``counts``.

        Parameters
        ----------
        counts : xarray.DataArray or any source of :func:`ambppl.read_annotations`
            The data. For ``"data": "counts"`` models anything that is not already a
            DataArray is read with :func:`ambppl.read_annotations` (default options).
        **prior
            The model's parameters (see ``info["parameters"]``); missing ones take their
            defaults.

        Returns
        -------
        pymc.Model
            The model returned by the file's ``model(counts, **prior)``.

        Raises
        ------
        ValueError
            For a parameter the model does not have (the message lists the ones it has).

        Notes
        -----
        The file is imported by path, so a wheel needs no importable ``models`` package.

        References
        ----------
        PyMC: https://www.pymc.io

        Examples
        --------
        >>> import numpy as np
        >>> m = get_model("dirichlet_categorical").build(np.array([[3, 1], [2, 2]]), prior=1.0)
        >>> sorted(m.named_vars)[:3]
        ['amb', 'amb_modified', 'amb_old']
        """
        unknown = sorted(set(prior) - set(self.info["parameters"]))
        if unknown:
            raise ValueError(
                f"model {self.name!r} must be given only its parameters "
                f"{sorted(self.info['parameters'])!r}, but got {unknown!r}"
            )
        if self.info["data"] == "counts":
            import xarray as xr

            if not isinstance(counts, xr.DataArray):
                counts = read_annotations(counts)
        else:  # "long": one row per answer with item, rater and label columns
            import pandas as pd

            if not (isinstance(counts, pd.DataFrame) and {"item", "rater", "label"} <= set(counts)):
                counts = read_long(counts)
        return self.module.model(counts, **prior)


def _entries(path: str | Path | None) -> dict[str, ModelEntry]:
    folder = catalog_dir(path)
    entries = {}
    for py in sorted(folder.glob("*.py")):
        if py.name.startswith("_"):
            continue
        json_path = py.with_suffix(".json")
        if not json_path.is_file():
            raise ValueError(
                f"model {py.stem!r} must have an info record {json_path.name!r} next to "
                f"{py.name!r} in {str(folder)!r}, but it is missing"
            )
        entries[py.stem] = ModelEntry(name=py.stem, info=_read_info(json_path), path=py)
    return entries


def list_models(path: str | Path | None = None) -> pd.DataFrame:
    """List the models in the catalog.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        A catalog folder to read instead of the default (see :func:`catalog_dir`).

    Returns
    -------
    pandas.DataFrame
        Index ``name``; columns ``description``, ``parameters`` (``"name=default, ..."``;
        the full records are in ``get_model(name).info``), ``reference``, ``data``
        (``"counts"`` or ``"long"``) and ``methods`` (``fit``'s methods, the default first,
        comma-separated); all of object dtype.

    Raises
    ------
    ValueError
        If the folder is missing, or an entry lacks or has a broken info record.

    Notes
    -----
    One row per ``<name>.py`` file (files starting with ``_`` are skipped).

    References
    ----------
    The documentation's model catalog (:ref:`model-files`): ``models/<name>.py`` and
    ``models/<name>.json``.

    Examples
    --------
    >>> table = list_models()
    >>> "dirichlet_categorical" in table.index, list(table.columns)
    (True, ['description', 'parameters', 'reference', 'data', 'methods'])
    >>> table.loc["hierarchical_dirichlet", "methods"]
    'collapsed, empirical_bayes, nuts'
    """
    import pandas as pd

    rows = [
        {
            "name": e.name,
            "description": e.info["description"],
            "parameters": ", ".join(
                f"{k}={v['default']!r}" for k, v in e.info["parameters"].items()
            ),
            "reference": e.info["reference"],
            "data": e.info["data"],
            "methods": ", ".join(e.info["methods"]),
        }
        for e in _entries(path).values()
    ]
    columns = ["name", "description", "parameters", "reference", "data", "methods"]
    return pd.DataFrame(rows, columns=columns, dtype=object).set_index("name")


def get_model(name: str, path: str | Path | None = None) -> ModelEntry:
    """One catalog entry by name.

    Parameters
    ----------
    name : str
        The model's name, e.g. ``"dirichlet_categorical"``.
    path : str or pathlib.Path, optional
        A catalog folder to read instead of the default (see :func:`catalog_dir`).

    Returns
    -------
    ModelEntry
        The entry; ``.build(counts, **prior)`` makes its ``pymc.Model``.

    Raises
    ------
    TypeError
        For a name that is not a string (a list, None).
    ValueError
        For an unknown name (the message lists the available ones).

    Notes
    -----
    The info record's ``reference`` names the closed-form results the model is checked
    against (e.g. Dirichlet moments, paper Section 3).

    References
    ----------
    The documentation's model catalog (:ref:`model-files`): ``models/<name>.py`` and
    ``models/<name>.json``.

    Examples
    --------
    >>> entry = get_model("dirichlet_categorical")
    >>> entry.info["methods"], entry.path.name
    (['exact', 'nuts'], 'dirichlet_categorical.py')
    """
    entries = _entries(path)
    if not isinstance(name, str):  # a list is no dict key: refused here, not by the lookup
        raise TypeError(
            f"model must be the name of one model, one of {sorted(entries)!r} "
            f"(ambppl.list_models()), but got {type(name).__name__} {name!r}"
        )
    if name not in entries:
        raise ValueError(
            f"model must be one of {sorted(entries)!r} (ambppl.list_models()), but got {name!r}"
        )
    return entries[name]


def parameter_owners(path: str | Path | None = None) -> dict[str, list[str]]:
    """Which catalog models have a parameter of each name.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        A catalog folder to read instead of the default (see :func:`catalog_dir`).

    Returns
    -------
    dict
        Parameter name -> the names of the models whose info record lists it (sorted), read
        in one pass over the catalog.

    Raises
    ------
    ValueError
        If the folder is missing, or an entry lacks or has a broken info record.

    Notes
    -----
    :func:`model_parameters` (for ``fit``, ``score``, ...) and the command line use it to tell
    a parameter of another model (``prior=`` given to ``hierarchical_dirichlet``) from a
    keyword that no model has.

    Examples
    --------
    >>> parameter_owners()["prior"]
    ['dirichlet_categorical']
    """
    owners: dict[str, list[str]] = {}
    for name, entry in _entries(path).items():
        for parameter in entry.info["parameters"]:
            owners.setdefault(parameter, []).append(name)
    return owners


def model_parameters(
    entry: ModelEntry, kwargs: dict[str, Any], caller: str = "fit"
) -> dict[str, Any]:
    """The keywords an estimator received for the model ``entry``, checked to be its parameters.

    Parameters
    ----------
    entry : ModelEntry
        The catalog entry (:func:`get_model`).
    kwargs : dict
        The estimator's further keywords (``**kwargs`` of :func:`ambppl.fit`,
        :func:`ambppl.score`, ...).
    caller : str, default "fit"
        The estimator's name, for the messages.

    Returns
    -------
    dict
        A copy of ``kwargs``: every key is a parameter of the model (see
        ``entry.info["parameters"]``; the missing ones keep their defaults).

    Raises
    ------
    TypeError
        For options of the readers (``cant_solve=``, ``item=``, ...;
        :data:`ambppl.data.READ_OPTIONS`): the estimator takes annotations already read, and
        the message names the reader that takes them (:func:`ambppl.read_annotations`, or
        :func:`ambppl.data.read_long` for a model of answers).
    ValueError
        For parameters of other catalog models (``prior=`` given to
        ``hierarchical_dirichlet``) and for any other keyword; the message lists the
        model's parameters.

    Notes
    -----
    The parameters of other models are found with :func:`parameter_owners` on the entry's
    own catalog folder.

    Examples
    --------
    >>> entry = get_model("dirichlet_categorical")
    >>> model_parameters(entry, {"prior": 0.5})
    {'prior': 0.5}
    >>> model_parameters(entry, {"kappa_scale": 1.0})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: model 'dirichlet_categorical' has the parameters ['prior'], but got ...
    >>> model_parameters(entry, {"cant_solve": "?"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: fit takes annotations already read, ... but got ['cant_solve']; ...
    """
    long = entry.info["data"] == "long"
    reader = "ambppl.data.read_long" if long else "ambppl.read_annotations"
    refuse_read_options(kwargs, caller, reader)
    own = entry.info["parameters"]
    rest = [k for k in kwargs if k not in own]
    owners = parameter_owners(entry.path.parent) if rest else {}
    foreign = sorted(k for k in rest if k in owners)
    if foreign:
        raise ValueError(
            f"model {entry.name!r} has the parameters {sorted(own)}, but got "
            f"{foreign} (parameters of other models); drop them or choose the model that has "
            "them"
        )
    if rest:
        raise ValueError(
            f"{caller}'s keywords must be parameters of model {entry.name!r} ({sorted(own)}), "
            f"but got {sorted(rest)}"
        )
    return dict(kwargs)
