"""The ``sample_kwargs`` of :func:`ambppl.fit`, checked against the installed PyMC.

``fit`` passes ``sample_kwargs`` on to ``pymc.sample`` (and through it to nutpie, numpyro or
blackjax). This module checks them before anything is built or sampled: the keys against
the installed ``pymc.sample`` and its NUTS step (a misspelt key is named with the closest
one), where the settings go for each NUTS implementation (``nuts={...}``), the values of
the numbers ``fit`` knows (``tune``, ``cores``, ``target_accept``, ``max_treedepth``,
nutpie's ``maxdepth``) and the keys it cannot honour (``step``, ``return_inferencedata``,
the settings of another step method). PyMC and nutpie take a
negative ``tune`` (dropping draws) or a ``target_accept`` of 2 without a word.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ambppl.internal.messages import say

__all__ = [
    "RESERVED_SAMPLE_KWARGS",
    "THREADED_SAMPLERS",
    "check_sample_kwargs",
    "other_step_methods",
    "sample_keywords",
    "sample_kwargs_dict",
]

#: Samplers whose chains run as threads (or one vectorized program) in this process: ``fit``
#: gives them ``cores = min(chains, usable CPUs)`` unless ``sample_kwargs`` says otherwise.
THREADED_SAMPLERS = ("nutpie", "numpyro", "blackjax")


#: Keyword arguments of ``pymc.sample`` that ``fit`` sets itself.
RESERVED_SAMPLE_KWARGS = (
    "draws",
    "chains",
    "random_seed",
    "progressbar",
    "var_names",
    "nuts_sampler",
    "model",
)


@functools.cache
def _step_settings() -> frozenset[str]:
    """The keywords of PyMC's NUTS step (``pymc.NUTS`` and the classes it builds on), less
    those ``pymc.sample``'s NUTS initialization sets itself: the settings ``pymc.sample``
    passes on to the step from ``nuts={...}`` or its own ``**kwargs`` (``target_accept``,
    ``max_treedepth``, ``step_scale``, ...)."""
    import pymc as pm

    names: set[str] = set()
    for cls in pm.NUTS.__mro__:
        if cls is not object and "__init__" in cls.__dict__:
            names |= _named_parameters(cls.__init__)
    return frozenset(names - _SET_BY_INIT_NUTS)


#: Keywords of the NUTS step's classes that are no user settings: ``pymc.sample``'s
#: initialization (``init_nuts``) passes them itself, or they are internal.
_SET_BY_INIT_NUTS = frozenset(
    {"self", "shared", "potential", "model", "rng", "initial_point", "logp_dlogp_func"}
)


@functools.cache
def sample_keywords() -> frozenset[str]:
    """The keys ``sample_kwargs`` may hold at the top level: the named parameters of the
    installed ``pymc.sample`` (less :data:`RESERVED_SAMPLE_KWARGS`), ``nuts`` (the step's
    settings, for every NUTS sampler) and the settings of PyMC's NUTS step (its ``**kwargs``
    go to the step: :func:`_step_settings`). ``pymc.sample`` passes nothing else on: other
    keys reach PyMC's own NUTS unused (PyMC 6.4 gives it a compiled log density, so it reads
    no compile options) or an external sampler, which refuses them. The settings of PyMC's
    other step methods (``{"metropolis": {...}}``, :func:`other_step_methods`) are not
    among them: they apply only with ``step=``, which ``fit`` refuses."""
    names = _sample_parameters() | {"nuts"} | _step_settings()
    return frozenset(names - set(RESERVED_SAMPLE_KWARGS))


@functools.cache
def other_step_methods() -> frozenset[str]:
    """The names of PyMC's step methods other than NUTS (``metropolis``, ``slice``, ...):
    ``pymc.sample(**kwargs)`` reads a key of that name as that method's settings, used only
    where ``step=`` assigns it; with NUTS, as ``fit`` samples, PyMC drops them unread."""
    from pymc.step_methods import STEP_METHODS

    return frozenset(str(method.name) for method in STEP_METHODS) - {"nuts"}


@functools.cache
def _sample_parameters() -> frozenset[str]:
    """The named parameters of the installed ``pymc.sample`` (read where PyMC defines it)."""
    from pymc.sampling.mcmc import sample

    return frozenset(_named_parameters(sample))


def _named_parameters(function: Callable[..., Any]) -> set[str]:
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds}


def sample_kwargs_dict(sample_kwargs: Any) -> dict[str, Any]:
    """``sample_kwargs`` as a new dict (None: empty), refused unless a dict."""
    if sample_kwargs is not None and not isinstance(sample_kwargs, Mapping):
        raise TypeError(
            "sample_kwargs must be a dict of pymc.sample keywords (e.g. {'tune': 2000}), but "
            f"got {type(sample_kwargs).__name__} {sample_kwargs!r}"
        )
    return dict(sample_kwargs or {})


def _unknown(keys: Sequence[str], known: frozenset[str]) -> str:
    """``'key' (did you mean 'close'?)`` for each of ``keys``, the suggestion where one of
    ``known`` is close (:func:`difflib.get_close_matches`)."""
    import difflib

    words = []
    for key in keys:
        close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.75)
        words.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ", ".join(words)


def check_sample_kwargs(sample_kwargs: Any, sampler: str | None = None) -> dict[str, Any]:
    """``sample_kwargs`` checked against the installed ``pymc.sample`` (:func:`sample_keywords`)
    and copied, with their ``nuts`` (or ``nuts_sampler_kwargs``) dict: PyMC writes into it.

    ``sampler`` is the NUTS implementation where known (None: PyMC's choice): with
    ``"pymc"`` the keys of ``nuts={...}`` must be settings of PyMC's NUTS step (it drops
    others unread); with nutpie, numpyro or blackjax the step's settings go in ``nuts={...}``
    (PyMC refuses them at the top level, ``target_accept`` apart).
    """
    kwargs = sample_kwargs_dict(sample_kwargs)
    clash = sorted(set(kwargs) & set(RESERVED_SAMPLE_KWARGS))
    if clash:
        raise ValueError(
            f"sample_kwargs must not contain {clash}: fit sets them itself (use fit's own "
            "arguments draws=, chains=, random_seed=, progressbar=, var_names=, sampler=)"
        )
    other = sorted(set(kwargs) & other_step_methods())
    if other:
        raise ValueError(
            f"sample_kwargs must not hold settings of step methods other than NUTS (fit "
            f"samples with NUTS only, and PyMC drops them unread), but got {other}; drop "
            f"them (NUTS's own settings go at the top level or in nuts={{...}})"
        )
    known = sample_keywords()
    unknown = [key for key in kwargs if key not in known]
    if unknown:
        raise ValueError(
            "sample_kwargs must hold keywords of pymc.sample or settings of its NUTS step "
            "(e.g. tune, cores, target_accept, max_treedepth; nutpie's own settings go in "
            f"nuts={{...}}), but got {_unknown(unknown, known)}"
        )
    if "nuts" in kwargs and "nuts_sampler_kwargs" in kwargs:
        raise ValueError(
            "sample_kwargs must give the NUTS settings once, in nuts={...} (PyMC's "
            "nuts_sampler_kwargs is its deprecated name), but got both"
        )
    key = "nuts_sampler_kwargs" if "nuts_sampler_kwargs" in kwargs else "nuts"
    if kwargs.get(key) is not None:
        if not isinstance(kwargs[key], Mapping):
            raise TypeError(
                f"sample_kwargs[{key!r}] must be a dict of NUTS settings (e.g. "
                f"{{'target_accept': 0.95}}), but got {kwargs[key]!r}"
            )
        kwargs[key] = dict(kwargs[key])  # PyMC moves a top-level target_accept into it
        nested = kwargs[key]
        if "target_accept" in kwargs and "target_accept" in nested:
            raise ValueError(
                f"sample_kwargs must set target_accept once, at the top level or in "
                f"{key}={{...}}, but got both ({kwargs['target_accept']!r} and "
                f"{nested['target_accept']!r})"
            )
        step = _step_settings()
        if sampler == "pymc" and any(name not in step for name in nested):
            wrong = [name for name in nested if name not in step]
            raise ValueError(
                f"sample_kwargs[{key!r}] must hold settings of PyMC's NUTS step with "
                f"sampler 'pymc' (e.g. target_accept, max_treedepth, step_scale), but got "
                f"{_unknown(wrong, step)}"
            )
    if sampler in THREADED_SAMPLERS:
        sample = _sample_parameters()
        misplaced = [k for k in kwargs if k not in sample and k not in ("nuts", "target_accept")]
        if misplaced:
            raise ValueError(
                f"sample_kwargs must give the {sampler} sampler's settings in nuts={{...}} "
                f"(target_accept may stay at the top level), but got {misplaced} at the top "
                f"level: sample_kwargs={{'nuts': {{{misplaced[0]!r}: ...}}}}"
            )
    _check_sample_values(kwargs, key)
    return kwargs


#: ``sample_kwargs`` keys that ``fit`` cannot honour: the value that changes nothing (None:
#: every other value is refused), why, and the fix.
_REFUSED_SAMPLE_KWARGS: dict[str, tuple[Any, str, str]] = {
    "step": (
        None,
        "fit samples with NUTS on the program it builds from the model, so no step method "
        "can be given for it",
        "drop it (sampler= chooses the NUTS implementation)",
    ),
    "return_inferencedata": (
        True,
        "fit builds its result from PyMC's xarray.DataTree",
        "drop it",
    ),
}

#: Numeric ``sample_kwargs`` checked by ``fit`` (at the top level, and in ``nuts={...}``
#: where ``nested``): the smallest whole number allowed, or None for a number in (0, 1);
#: whether None (PyMC's default) is allowed; what the setting is; the command line's option.
_SAMPLE_NUMBERS: dict[str, tuple[int | None, bool, bool, str, str | None]] = {
    # name: (low, nested, none_ok, what, option)
    "tune": (0, False, True, "warm-up steps per chain", "--tune"),
    "cores": (1, False, True, "chains run at once", None),
    "target_accept": (
        None,
        True,
        False,
        "the step size's target acceptance rate, e.g. 0.95",
        "--target-accept",
    ),
    "max_treedepth": (1, True, False, "the largest depth of a NUTS tree, e.g. 10", None),
    # nutpie's name for it, in nuts={...} (at the top level it is refused as misplaced):
    # nutpie 0.16 took maxdepth=0 and sampled without a word
    "maxdepth": (1, True, False, "nutpie's largest depth of a NUTS tree, e.g. 10", None),
}


def _check_sample_values(kwargs: dict[str, Any], key: str) -> None:
    """The values of the ``sample_kwargs`` keys ``fit`` checks: :data:`_SAMPLE_NUMBERS` (at
    the top level and, for the step's settings, in ``kwargs[key]``, the ``nuts`` dict)
    changed to plain ints and floats, and :data:`_REFUSED_SAMPLE_KWARGS` refused. PyMC and
    nutpie take a negative ``tune`` (dropping draws), a ``target_accept`` of 2 or
    ``cores=0`` without a word or with an unrelated error."""
    for name, (unchanged, why, fix) in _REFUSED_SAMPLE_KWARGS.items():
        if name in kwargs and not _is_value(kwargs[name], unchanged):
            raise ValueError(
                f"sample_kwargs must not set {name} ({why}), but got {name}={kwargs[name]!r}; {fix}"
            )
    nested = kwargs.get(key) if isinstance(kwargs.get(key), dict) else {}
    for name, (low, in_nuts, none_ok, what, option) in _SAMPLE_NUMBERS.items():
        places = [(kwargs, f"sample_kwargs[{name!r}]")]
        if in_nuts:
            places.append((nested, f"sample_kwargs[{key!r}][{name!r}]"))
        for where, python in places:
            if name not in where or (none_ok and where[name] is None):
                continue
            value = where[name]
            if low is None:
                fix = f"a number in the open interval (0, 1) ({what})"
                ok = _open_unit
            else:
                fix = f"a whole number >= {low} ({what})"
                ok = functools.partial(_whole_at_least, low=low)
            words = python
            if option and where is kwargs:  # the command line passes it: name its option
                words = say(python, option)
                fix += say(" or None", "") if none_ok else ""
            elif none_ok:
                fix += " or None"
            try:
                where[name] = ok(value)
            except (TypeError, ValueError) as err:
                raise type(err)(f"{words} must be {fix}, but got {value!r}") from None


def _is_value(value: Any, unchanged: Any) -> bool:
    """Whether ``value`` is ``unchanged`` (None, or True: numpy's True too)."""
    if unchanged is None:
        return value is None
    return isinstance(value, bool | np.bool_) and bool(value) is unchanged


def _whole_at_least(value: Any, low: int) -> int:
    """``value`` as an int >= ``low`` (numpy's integers too): a TypeError for another type,
    a ValueError below ``low``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError
    if value < low:
        raise ValueError
    return int(value)


def _open_unit(value: Any) -> float:
    """``value`` as a float in the open interval (0, 1): a TypeError for another type, a
    ValueError outside (NaN too)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError
    if not 0.0 < float(value) < 1.0:
        raise ValueError
    return float(value)
