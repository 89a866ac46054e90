"""Reuse of compiled programs: one frozen PyMC model per program, each fit's data set into it.

A program whose data enter only as ``pm.Data`` (shared variables) has the same graph for every
data set of its shape: the collapsed ``hierarchical_dirichlet`` program (``method="collapsed"``
of :func:`ambppl.fit`) is one, its count statistics are ``pm.Data``. PyMC compiles a new model's
log density and gradient anew on every ``pymc.sample`` call all the same, and for that program
the compilation (PyTensor's graph rewriting; the compiled code itself comes from the disk
cache) was most of a small fit: 4-5 s of 6.5 s for 100 items on 2 cores. PyMC's
``freeze_model`` gives a model whose compiled functions are cached on it and whose data stay
settable by ``pm.set_data``; :func:`reused_program` keeps one such frozen model per program in
this process and sets each new fit's data into it, so a repeated fit of the same program
(another data set, a simulation study, a test suite) compiles nothing.

A frozen model is reused only where it is *the same program*: the caller's key (e.g. the
catalog model and its parameters) matches, the coordinates, dims and variable names match,
and the log density graph of the new model equals the cached one node for node, with the
value variables and the data variables paired by name (``pytensor.graph.basic
.equal_computations``; a constant that differs, e.g. a prior parameter or a number taken from
the data, makes it another program). Anything else gets a frozen model of its own. Draws are
identical to those of the unfrozen model with the same seed (PyMC re-seeds cached functions on
every call; tested).

One fit at a time uses a cached model (its data are those of the fit in progress): a second
thread that asks for a program in use gets a frozen model of its own for that fit.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: How many frozen programs the process keeps (least recently used dropped first).
CACHE_SIZE = 8


@dataclass(eq=False)  # entries compare by identity
class _Entry:
    layout: tuple
    source: Any  # the model as built: compiling the frozen one rewrites its cached graph
    frozen: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


#: The cached programs, least recently used first.
_CACHE: list[_Entry] = []
_CACHE_LOCK = threading.Lock()


def _data_vars(model: Any) -> dict[str, Any]:
    """The model's ``pm.Data`` variables (shared variables among its named variables)."""
    from pytensor.compile.sharedvalue import SharedVariable

    return {name: var for name, var in model.named_vars.items() if isinstance(var, SharedVariable)}


def _layout(model: Any) -> tuple:
    """What a program's result is labelled by: coordinates, dims, variable and data names."""
    data = _data_vars(model)
    return (
        tuple((name, tuple(values)) for name, values in model.coords.items()),
        tuple(sorted((name, tuple(dims)) for name, dims in model.named_vars_to_dims.items())),
        tuple(rv.name for rv in model.free_RVs),
        tuple(var.name for var in model.deterministics),
        tuple(var.name for var in model.potentials),
        tuple(sorted((name, str(var.type)) for name, var in data.items())),
    )


def same_program(model: Any, other: Any) -> bool:
    """Whether two PyMC models are one program up to the values of their data.

    Parameters
    ----------
    model, other : pymc.Model
        Two models (either may be frozen).

    Returns
    -------
    bool
        True where the coordinates, dims, names of the variables and of the ``pm.Data``
        (with their types) agree and the log density graphs are equal node for node, the
        value variables and the data variables paired by name.

    Examples
    --------
    >>> import pymc as pm
    >>> def program(data, sd):
    ...     with pm.Model() as m:
    ...         x = pm.Data("x", data)
    ...         b = pm.Normal("b", 0.0, sd)
    ...         pm.Potential("fit", -((x - b) ** 2).sum())
    ...     return m
    >>> same_program(program([1.0, 2.0], 1.0), program([5.0, 6.0, 7.0], 1.0))
    True
    >>> same_program(program([1.0, 2.0], 1.0), program([1.0, 2.0], 2.0))
    False
    """
    from pytensor.graph.basic import equal_computations

    if _layout(model) != _layout(other):
        return False
    # value variables are not named variables: paired through their random variables
    pairs = [
        (model.rvs_to_values[rv], other.rvs_to_values[other.named_vars[rv.name]])
        for rv in model.free_RVs
    ]
    theirs = _data_vars(other)
    pairs += [(var, theirs[name]) for name, var in _data_vars(model).items()]
    return equal_computations(
        [model.logp()],
        [other.logp()],
        in_xs=[mine for mine, _ in pairs],
        in_ys=[their for _, their in pairs],
    )


@contextlib.contextmanager
def reused_program(model: Any, key: Hashable) -> Iterator[Any]:
    """A frozen model of ``model``'s program holding ``model``'s data, reused where it can be.

    Parameters
    ----------
    model : pymc.Model
        The program for this fit, built as usual (building is cheap; compiling is not).
    key : hashable
        What the caller knows determines the program (e.g. the catalog model's name and its
        parameters); a frozen model is looked for among those cached under the same key only.

    Yields
    ------
    pymc.Model
        A frozen model (``pymc.model.transform.optimization.freeze_model``) equal to
        ``model`` (:func:`same_program`) with ``model``'s data set into it: the cached one
        where it is free, else a new one, cached for the next fit. Use it inside the
        ``with`` block only: the next fit sets its own data into it.

    Notes
    -----
    At most :data:`CACHE_SIZE` programs are kept, the least recently used dropped first.
    Draws with a given seed equal those of ``model`` itself.
    """
    import pymc as pm
    from pymc.model.transform.optimization import freeze_model

    layout = (key, _layout(model))
    with _CACHE_LOCK:
        candidates = [entry for entry in _CACHE if entry.layout == layout]
    entry = None
    for candidate in candidates:
        if not candidate.lock.acquire(blocking=False):
            continue  # in use by another fit
        try:
            if same_program(model, candidate.source):
                data = {name: var.get_value() for name, var in _data_vars(model).items()}
                pm.set_data(data, model=candidate.frozen)
                entry = candidate
                break
        except BaseException:
            candidate.lock.release()
            raise
        candidate.lock.release()
    if entry is None:
        entry = _Entry(layout, model, freeze_model(model))
        entry.lock.acquire()
    with _CACHE_LOCK:
        if entry in _CACHE:
            _CACHE.remove(entry)
        _CACHE.append(entry)
        del _CACHE[:-CACHE_SIZE]
    try:
        yield entry.frozen
    finally:
        entry.lock.release()


def clear() -> None:
    """Drop every cached program (the next fit of each compiles it again)."""
    with _CACHE_LOCK:
        _CACHE.clear()
