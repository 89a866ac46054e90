"""``fit``: posterior draws of the response distributions and their ambiguity measures.

One result layout (an :class:`xarray.DataTree` shaped like the one ``pymc.sample`` returns)
for every catalog model and every way of sampling it. ``fit`` has no branch per model: each
model file declares what it needs (the info record's ``data`` and ``methods``) and provides
the functions of the routes it lists; ``fit`` dispatches on the method:

- ``exact``: independent draws of the conjugate posterior ``Dirichlet(a + counts_i)``; the
  model file provides ``concentration`` (and no ``HYPERPARAMETERS``).
- ``collapsed``: NUTS on the hyperparameters with every ``q_i`` integrated out, then one
  exact draw of every ``q_i`` per hyperparameter draw; ``hyper_model`` and ``concentration``.
- ``empirical_bayes``: the hyperparameters at the maximum of the marginal likelihood, then
  exact draws; ``empirical_bayes`` and ``concentration``.
- ``laplace``: the posterior mode of the full PyMC program and independent draws of the
  Laplace approximation around it (:mod:`ambppl.inference.laplace`); ``model``. Where the
  model file offers ``posterior_mode``, L-BFGS starts from its mode, so that ``laplace``
  centres on the local mode ``map`` returns.
- ``map``: the posterior mode alone, one chain of one draw marked as a point (no posterior
  uncertainty); the model file's ``posterior_mode(data, **params)`` where it offers one (a
  fast mode without a PyMC program), else ``model``'s (:func:`ambppl.inference.laplace.mode_point`).
- ``nuts``: NUTS on the full PyMC program; ``model``.

Every route writes the groups ``posterior`` (``q``, the measures, the hyperparameters),
``observed_data`` (``counts``), ``log_likelihood`` (``counts``: one value per item and draw,
see :mod:`ambppl.inference.modeling`) and, where NUTS ran, ``sample_stats``.

The module is named ``fitting``, not ``fit``: a function named like its module is replaced
by the module object as soon as anything imports the module, so ``ambppl.fit`` (and
``ambppl.inference.fit``) stay the function.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.util
import json
import numbers
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np

import ambppl
from ambppl.data.contract import (
    as_answers,
    as_counts,
    count_values,
    describe,
    refuse_read_options,
)
from ambppl.inference.catalog import ModelEntry, get_model, model_parameters
from ambppl.inference.compilation import reproducible_compilation
from ambppl.inference.convergence import CONVERGENCE, ConvergenceWarning, check_convergence
from ambppl.inference.laplace import POINT_SENTENCE, laplace_draws, mode_point
from ambppl.inference.modeling import category_parameters, log_likelihood
from ambppl.inference.reuse import reused_program
from ambppl.inference.sample_settings import (
    THREADED_SAMPLERS,
    check_sample_kwargs,
    sample_kwargs_dict,
)
from ambppl.internal.checks import (
    NO_CANT_SOLVE,
    check_option,
    check_positive_int,
    check_progress,
    check_random_seed,
)
from ambppl.internal.limits import MEMORY_FRACTION, on_command_line, size
from ambppl.internal.limits import available_memory as available
from ambppl.internal.messages import reading_for, say
from ambppl.internal.threads import one_blas_thread
from ambppl.internal.warned import FIT_WARNINGS, collecting_warnings, warnings_attr
from ambppl.maths.draws import dirichlet_draws
from ambppl.maths.measures import VARIABLES, measure_name, measures_for
from ambppl.maths.measures import measure_numpy as _measure_numpy

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr


__all__ = ["CONVERGENCE", "ConvergenceWarning", "fit", "fit_with_progress"]

#: ``method=`` values, in the order of preference when a model offers several.
METHODS = ("exact", "collapsed", "empirical_bayes", "laplace", "map", "nuts")

#: Methods whose draws are independent (no MCMC): no ESS / R-hat columns in summaries.
INDEPENDENT_METHODS = ("exact", "empirical_bayes", "laplace", "map")

#: Methods that return one point (one chain of one draw), not draws of a posterior.
POINT_METHODS = ("map",)

#: Methods that run NUTS (and accept ``sampler=`` and ``sample_kwargs=``).
NUTS_METHODS = ("collapsed", "nuts")

#: ``sampler=`` values -> the module that must be importable.
NUTS_SAMPLERS = {"pymc": "pymc", "nutpie": "nutpie", "numpyro": "numpyro", "blackjax": "blackjax"}


#: NUTS implementation of ``method="collapsed"`` when ``sampler=None`` (measured fastest
#: end to end on the small hyperparameter model; ``method="nuts"`` keeps PyMC's own choice).
COLLAPSED_SAMPLER = "pymc"

#: Bytes of gamma draws generated at a time by the exact sampler (bounds temporary memory).
CHUNK_BYTES = 32 * 2**20


def fit(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    method: str | None = None,
    draws: int | None = None,
    chains: int | None = None,
    random_seed: Any = None,
    sampler: str | None = None,
    var_names: Sequence[str] | str | None = None,
    progressbar: bool = False,
    sample_kwargs: dict[str, Any] | None = None,
    log_likelihood: bool = True,
    **kwargs: Any,
) -> xr.DataTree:
    """Draw from the posterior of every item's response distribution and its ambiguity.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Annotations already read (:mod:`ambppl.data.contract`): counts as
        :func:`ambppl.read_annotations` returns them (dims ``("item", "category")``,
        ``attrs["cant_solve"]`` the can't-solve label or ``None``), or an array or frame it
        reads with its defaults (:func:`ambppl.data.as_counts`). Models of answers (info
        record ``"data": "long"``, e.g. ``rater_effects``) take the answers table of
        :func:`ambppl.data.read_long` (:func:`ambppl.data.as_answers`). Not a path: read
        files with the readers first.
    model : str, default "dirichlet_categorical"
        Name of a model in the catalog (:func:`ambppl.list_models`).
    method : {"exact", "collapsed", "empirical_bayes", "laplace", "map", "nuts"}, optional
        One of the model's ``methods`` (its info record; :func:`ambppl.list_models`).
        Default: the model's first method, or ``"nuts"`` when ``sampler`` or
        ``sample_kwargs`` is given and the first method runs no NUTS.
    draws, chains : int, optional
        Draws per chain and number of chains. Default: the model's own for the methods that
        run NUTS (its info record's ``nuts_defaults``, e.g. 2000 draws for
        ``rater_effects``), else 1000 and 4.
    random_seed : int, numpy.random.Generator or None
        Seed; the same seed gives identical draws on the same machine with the same
        packages, also for the routes that compile (see Notes).
    sampler : {"pymc", "nutpie", "numpyro", "blackjax"}, optional
        NUTS implementation for the methods that run NUTS (PyMC's ``nuts_sampler``).
        Default for ``"nuts"``: the model's own (its info record's ``sampler``, e.g. nutpie
        for ``rater_effects``, measured fastest there), else PyMC's own choice (nutpie where
        PyMC can use it, else PyMC's NUTS). Samplers whose chains are threads
        (:data:`THREADED_SAMPLERS`, also nutpie chosen by PyMC: a ``hierarchical_dirichlet``
        NUTS fit of 2000 items took 54-76 s instead of 100-127 s on 2 cores) get
        ``cores = min(chains, usable CPUs)`` unless
        ``sample_kwargs`` sets ``cores`` (PyMC's default counts half the CPUs, which on 2 cores
        runs the chains one after the other); for ``"collapsed"``: PyMC's NUTS
        (:data:`COLLAPSED_SAMPLER`; on a model of K + 1 numbers nutpie's compilation costs
        more than it saves). nutpie is a core dependency; numpyro and blackjax are optional
        extras (``pip install 'ambppl[numpyro]'`` / ``'ambppl[blackjax]'``).
    var_names : str or sequence of str, optional
        Per-item posterior variables to store (default all): ``"q"``, ``"amb"``,
        ``"amb_modified"``, ``"amb_old"``, ``"entropy"``. Storing costs draws x chains x
        items x 8 bytes per measure and K times that for ``q``. Hyperparameters are always
        stored.
    progressbar : bool, default False
        Show a progress bar (True or False; numpy's bools too).
    sample_kwargs : dict, optional
        Further arguments for ``pymc.sample`` (e.g. ``tune``, ``cores``, ``target_accept``;
        those the model's info record sets in ``nuts_defaults`` apply unless given here, at
        the top level or in ``nuts={...}``). Keys are checked against the installed PyMC:
        ``pymc.sample``'s parameters, ``nuts`` (a dict of the NUTS step's settings) and the
        settings of PyMC's NUTS step (``target_accept``, ``max_treedepth``, ...); with
        ``sampler="pymc"`` the keys of ``nuts`` must be such settings, and with nutpie,
        numpyro or blackjax the step's settings go in ``nuts`` (``target_accept`` may stay
        at the top level). The dict and its ``nuts`` are copied, not changed. A model's
        ``nuts_defaults`` may also choose nutpie's mass-matrix ``adaptation`` (e.g.
        ``dawid_skene`` on designs of few answers per item with a busy rater); it is passed as
        ``nuts={"adaptation": ...}`` where the sampler is nutpie, unless
        ``sample_kwargs["nuts"]`` sets its own. Values checked: ``tune`` a whole number >= 0,
        ``cores`` one >= 1 (both or None), ``target_accept`` a number in (0, 1) and
        ``max_treedepth`` (nutpie's ``maxdepth``, in ``nuts``) a whole number >= 1 (at the
        top level or in ``nuts``); ``step``, ``return_inferencedata=False`` and the settings
        of another step method (``{"metropolis": {...}}``) are refused (fit runs NUTS on its
        own program and builds its result from PyMC's DataTree).
    log_likelihood : bool, default True
        Store the ``log_likelihood`` group (draws x chains x items x 8 bytes). True or
        False (numpy's bools too). It is ``log p(answers_i | theta)`` with the item's own
        ``q_i`` integrated out; for a fixed prior (and ``empirical_bayes``) it is the same
        in every draw, which ``arviz.loo`` and ``arviz.compare`` refuse ("All tail values
        are the same"): compare models with :func:`ambppl.loo` and :func:`ambppl.compare`,
        which treat that case exactly (:mod:`ambppl.analysis.comparison`).
    **kwargs
        The model's parameters (e.g. ``prior=0.5`` for ``dirichlet_categorical``; see
        ``ambppl.get_model(model).info["parameters"]``), checked by
        :func:`ambppl.inference.catalog.model_parameters`. A labelled one, a
        :class:`pandas.Series` indexed by the category labels or an
        :class:`xarray.DataArray` with a ``category`` coordinate, is read by its labels (put
        in the order of the counts' categories; :func:`ambppl.internal.checks.category_aligned`),
        arrays and lists by position. Reader options (``cant_solve=``, ``item=``, ...) go to
        the reader, not here.

    Returns
    -------
    xarray.DataTree
        Groups ``posterior`` (dims chain, draw, item[, category], plus the hyperparameters),
        ``observed_data`` (``counts`` with the count attributes), ``log_likelihood`` and, for
        NUTS, ``sample_stats``. The root and the posterior carry the attributes ``method``,
        ``model``, ``parameters`` (JSON of the model's parameters, defaults filled in),
        ``cant_solve`` (the label; absent when there is none), ``sampler`` (what computed
        the draws: the NUTS library, ``numpy.random.Generator.standard_gamma``,
        ``ambppl.inference.laplace``, or for ``map`` with a model file's own mode
        ``"<model>.posterior_mode"``) and, where the prior of every ``q_i`` is one fixed
        Dirichlet (``exact``, ``empirical_bayes``, or a fixed-prior model), ``prior`` (its
        concentration, one float per category). After
        NUTS the root also has ``convergence``: a JSON record of the worst R-hat, the
        smallest bulk and tail ESS and the divergences, checked against :data:`CONVERGENCE`.
        Where the fit raised warnings, the root keeps them in ``fit_warnings`` (a JSON list
        of ``{"category", "message"}``, each once; they are raised as well, those the
        caller's warning filters ignore are neither raised nor kept, and one they make an
        error stops the fit), for the report's first section. The optimizing routes
        (``laplace``, ``map``) add the optimizer's record (``approximation``,
        ``mode_logp``, ``optimizer_converged``, ...): ``mode_logp`` is PyMC's log density of
        the program at the mode, constants included, except where ``map`` uses the model
        file's ``posterior_mode``, whose value may omit the program's constant
        (``dawid_skene``'s does), so compare it only within a route.
        Every attribute is one netCDF can store (None-valued ones are left out), so
        ``result.to_netcdf(path)`` saves the fit and ``xarray.open_datatree(path)`` reloads
        it for :func:`ambppl.summarize` and the report.

    Raises
    ------
    TypeError
        For a path (the message names the reader to call first: :func:`ambppl.read_annotations`,
        or :func:`ambppl.data.read_long` for a model of answers), for reader options among
        ``kwargs`` (the message shows the call that reads the data with them), for counts
        given to a model of answers, for a model name that is not a string, draws or chains
        that are not integers (for ``map`` too), ``progressbar`` or ``log_likelihood`` that
        is not a bool, and ``sample_kwargs`` that is not a dict (whatever the method).
    ValueError
        For an unknown model, method or sampler, a method the model does not list, a
        parameter of another model, any other keyword that is not a parameter of the model
        (the message lists the model's parameters), bad parameter values (e.g. a prior that
        is not positive, or a labelled prior whose labels are not the counts' categories),
        non-positive draws/chains, unknown var_names, a frame the reader cannot read with its
        defaults (the message shows the reader's call that names the column),
        ``sample_kwargs`` keys that the installed PyMC does not take (the message names a
        close key: "did you mean 'cores'?") or that fit sets itself or cannot honour
        (``step``, ``return_inferencedata=False``, ``metropolis``), ``sample_kwargs`` values
        out of range (``tune=-5``, ``target_accept=2``, ``cores=0``, ``max_treedepth=0``,
        ``nuts={"maxdepth": 0}``; a value of
        another type, ``tune=1.5``, is a TypeError), a ``target_accept`` given both at the
        top level and in ``nuts``, or bad data; and up front, before any sampling, when the
        fit's peak memory (:func:`memory_needed`: the draws to store,
        ``8 x chains x draws x items x`` the values per item of ``var_names``, the log
        likelihood, plus the sampler's working chunks) exceeds
        :data:`ambppl.internal.limits.MEMORY_FRACTION` (80%) of the memory available
        (:func:`available_memory`): the message names :func:`ambppl.score`, which summarizes
        conjugate models without per-item draws, and the options that store less (on the
        command line: ``--draws``, ``--chains``, ``ambppl score``).
    ImportError
        If the requested NUTS sampler is not installed.

    Warns
    -----
    ConvergenceWarning
        After NUTS, when the fit misses :data:`CONVERGENCE` (R-hat <= 1.01, bulk and tail
        ESS >= 400, no divergences), checked on the hyperparameters (``collapsed``) or on
        every stored variable (``nuts``).
    UserWarning
        After ``map`` or ``laplace``, when the optimizer stopped before it converged
        (``optimizer_converged`` False: the iteration limit, or a failed line search): the
        mode may be off.

    Notes
    -----
    Exact sampling: with ``q_i | theta ~ Dirichlet(a(theta))`` the posterior given ``theta``
    is ``Dirichlet(a(theta) + counts_i)`` (paper section 3). Each draw normalizes independent
    gamma variates ``g_k ~ Gamma(a_k + n_ik)``; draws whose gammas all underflow
    (concentrations far below 1) are redrawn in log space (``Gamma(a) = Gamma(a + 1)
    U^(1/a)``). Items are processed in chunks of about :data:`CHUNK_BYTES` so temporary memory
    stays bounded, and the measures are computed per chunk with the same kernels as
    :func:`ambppl.amb` & co. For ``collapsed`` each draw of the hyperparameters gets its own
    ``a(theta)``; the cost per draw is the same as for a fixed prior.

    The collapsed program's data are ``pm.Data``: the first ``collapsed`` fit of a model with
    given categories and parameters compiles it, later ones in the same process (other data
    sets: strata, simulations, refits) reuse the compiled program with their own data set
    into it (:func:`ambppl.inference.reuse.reused_program`; the draws are those of a fresh
    compile; default fits of 300 items took 4.1 s each after the first instead of 9.4 s on 2
    cores, ``benchmarks/bench_reuse.py``).

    The routes that compile a PyTensor program (``nuts``, ``collapsed``, ``laplace``,
    ``map`` but for a model file's own mode) compile it without PyTensor's fast-math flags
    (:mod:`ambppl.inference.compilation`). With them, the default of PyTensor's numba backend,
    a program compiled afresh and the same program loaded from PyTensor's disk cache differ
    in the last bits of the gradient, and NUTS turned that into other draws: a seeded fit
    gave one result on a machine's first run and another on the next. The price is 0-11 %
    per gradient for the rater models and 7-15 % of a collapsed fit
    (``benchmarks/bench_fastmath.py``).

    Every item gets its own independent draws. Sampling once per *distinct* count vector and
    broadcasting (much faster on real data, where count vectors repeat) would make items with
    equal counts share identical draws: right for each item's marginal posterior but wrong
    for any joint quantity (e.g. the posterior of a ranking or of a mean over items), so it is
    not used for stored draws (:func:`ambppl.summarize_counts` does it for tables).

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import ambppl
    >>> counts = xr.DataArray(
    ...     np.array([[5, 0, 0], [2, 2, 1]]), dims=("item", "category"),
    ...     coords={"item": ["a", "b"], "category": ["yes", "no", "cs"]},
    ...     attrs={"cant_solve": "cs"})
    >>> result = ambppl.fit(counts, draws=500, chains=2, random_seed=1)
    >>> result.posterior["amb"].sizes["draw"], result.attrs["method"]
    (500, 'exact')
    >>> amb = result.posterior["amb"].mean(("chain", "draw"))
    >>> bool(amb.sel(item="b") > amb.sel(item="a"))
    True
    >>> sorted(result.children)
    ['log_likelihood', 'observed_data', 'posterior']

    Files and frames are read first, with the reader's options:

    >>> from ambppl.data import example_path
    >>> counts = ambppl.read_annotations(example_path("weather_sentiment"),
    ...                                  cant_solve="I can't tell")
    >>> ambppl.fit(counts, draws=100, random_seed=1).attrs["cant_solve"]
    "I can't tell"
    >>> ambppl.fit(example_path("weather_sentiment"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: data must be annotations already read ...: ambppl.read_annotations(...)
    >>> ambppl.fit(counts, cant_solve="I can't tell")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: fit takes ... fit(ambppl.read_annotations(data, cant_solve=...), ...)
    """

    entry = get_model(model)
    long = entry.info["data"] == "long"  # the model takes one row per answer (rater ids kept)
    reader = "ambppl.data.read_long" if long else "ambppl.read_annotations"
    refuse_read_options(kwargs, "fit", reader)  # before the data: the message shows the read
    # the fit's warnings, raised as ever and kept in the result for the report
    with collecting_warnings() as raised:
        answers, counts = _read_data(data, long, reader)
        params = category_parameters(model_parameters(entry, kwargs, "fit"), counts["category"])
        # before sampling: what the result records (the info record's defaults filled in)
        parameters = json.dumps(_jsonable({**entry.defaults, **params}))
        method = choose_method(entry, method, sampler, sample_kwargs)
        own = (
            entry.nuts_defaults(answers if long else counts, **params)
            if method in NUTS_METHODS
            else {}
        )
        if method in POINT_METHODS:
            _refuse_draws(method, draws, chains)
            draws = chains = 1
        draws = check_positive_int(own.get("draws", 1000) if draws is None else draws, "draws")
        chains = check_positive_int(own.get("chains", 4) if chains is None else chains, "chains")
        log_likelihood = _check_switch(log_likelihood, "log_likelihood")
        progressbar = _check_switch(progressbar, "progressbar")
        if method in NUTS_METHODS:
            sampler = _check_sampler(sampler) or _default_sampler(entry, method)
            used = sampler or (COLLAPSED_SAMPLER if method == "collapsed" else None)
            sample_kwargs = check_sample_kwargs(sample_kwargs, used)
            # pymc.sample's nuts={...}, or the caller's deprecated nuts_sampler_kwargs (PyMC
            # refuses both; check_sample_kwargs copied it, as PyMC writes into it)
            key = "nuts_sampler_kwargs" if "nuts_sampler_kwargs" in sample_kwargs else "nuts"
            nested = sample_kwargs.get(key) or {}
            # the model's own tune / target_accept (info record nuts_defaults) unless given, at
            # the top level or in nuts= (PyMC refuses a target_accept given in both)
            for name in ("tune", "target_accept"):
                if name in own and name not in nested:
                    sample_kwargs.setdefault(name, own[name])
            if "adaptation" in own and sampler == "nutpie":  # a nutpie option (mass matrix)
                nutpie_kwargs = dict(nested)
                nutpie_kwargs.setdefault("adaptation", own["adaptation"])
                sample_kwargs[key] = nutpie_kwargs
        else:
            _refuse_nuts_options(method, sampler, sample_kwargs)
        cs_label = counts.attrs.get("cant_solve")

        values, cs = count_values(counts)
        n_categories = values.shape[1]
        measures = list(measures_for(n_categories - (cs is not None)))
        available = ["q", *(VARIABLES[m] for m in measures)]
        names = _check_var_names(var_names, available)
        per_draw = method in ("collapsed", "nuts") and bool(entry.hyperparameters)
        _check_memory(
            chains,
            draws,
            values.shape[0],
            n_categories,
            names,
            log_likelihood,
            per_draw,
            route=(entry.name, method),
        )
        job = _Job(
            entry=entry,
            counts=counts,
            answers=answers,
            values=values,
            cs=cs,
            params=params,
            measures=measures,
            names=names,
            available=available,
            draws=draws,
            chains=chains,
            rng=np.random.default_rng(check_random_seed(random_seed)),
            random_seed=random_seed,
            sampler=sampler,
            progressbar=progressbar,
            sample_kwargs=sample_kwargs or {},
        )
        # a route that compiles a PyTensor program compiles it without fast math, so that
        # the seed fixes the draws whatever PyTensor's disk cache holds (compilation.py)
        compiling = (
            reproducible_compilation() if _compiles(job, method) else contextlib.nullcontext()
        )
        with compiling:
            tree, conc = _ROUTES[method](job)
        if log_likelihood:
            _add_log_likelihood(tree, job, conc)
        attrs: dict[str, Any] = {
            "method": method,
            "model": entry.name,
            "parameters": parameters,
            "sampler": _sampler_name(method, tree, entry),
        }
        if cs_label is not None:  # absent = no can't-solve category (netCDF stores no None)
            attrs["cant_solve"] = str(cs_label)
        if conc is not None and conc.ndim == 1:  # one Dirichlet prior for all q_i: closed forms
            attrs["prior"] = [float(a) for a in conc]
        tree.attrs.update(attrs)
        tree["posterior"].attrs.update(attrs)
        _mark_cant_solve(tree, job.counts)
        if method in NUTS_METHODS:
            _check_convergence(tree, entry, method, job.sample_kwargs.get("tune"))
        _check_optimizer(tree, entry, method)
        if raised:
            tree.attrs[FIT_WARNINGS] = warnings_attr(raised)
        _storable_attrs(tree)
    return tree


def _storable_attr(value: Any) -> Any:
    """An attribute value netCDF can store: bools as 0/1, dicts and mixed lists as JSON."""
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, dict):
        return json.dumps(_jsonable(value))
    if isinstance(value, list | tuple):
        kinds = {type(v) for v in value}
        if any(v is None or isinstance(v, bool | dict | list | tuple) for v in value) or (
            str in kinds and len(kinds) > 1
        ):
            return json.dumps(_jsonable(list(value)))
    return value


def _mark_cant_solve(tree: xr.DataTree, counts: xr.DataArray) -> None:
    """Give every variable along the counts' categories (``q``, a rater model's confusion
    rows, ...) the counts' ``cant_solve`` attribute, so that a measure applied to it
    (``ambppl.amb(result.posterior["q"])``) reads the can't-solve category the fit used.
    Without it, ``cant_solve="auto"`` took the last category, also where the data have none
    (0.96 off on a fit of two classes) or where it is not last."""
    labels = list(counts["category"].values)
    for node in tree.subtree:
        for variable in node.data_vars.values():
            if (
                "category" in variable.dims
                and "cant_solve" not in variable.attrs
                and list(variable["category"].values) == labels
            ):
                variable.attrs["cant_solve"] = counts.attrs.get("cant_solve")


def _storable_attrs(tree: xr.DataTree) -> None:
    """Make every attribute of the result storable with ``tree.to_netcdf(path)``.

    netCDF stores strings, numbers and arrays of them; attributes set to None (e.g.
    ``n_raters`` of a count matrix) are left out, so that ``attrs.get(name)`` still gives None.
    A count array's ``cant_solve`` of None becomes ``attrs[NO_CANT_SOLVE] = 1``
    (:data:`ambppl.internal.checks.NO_CANT_SOLVE`), so that the array functions do not take
    its last category for the can't-solve one.
    """
    for node in tree.subtree:
        for variable in node.variables.values():  # counts without a can't-solve category
            if "cant_solve" in variable.attrs and variable.attrs["cant_solve"] is None:
                variable.attrs[NO_CANT_SOLVE] = 1  # say so where None cannot be stored
        targets = [node.attrs, *(v.attrs for v in node.variables.values())]
        for attrs in targets:
            for key in list(attrs):
                if attrs[key] is None:
                    del attrs[key]
                else:
                    attrs[key] = _storable_attr(attrs[key])


class _Job:
    """Everything a route needs, checked."""

    def __init__(self, **kwargs: Any) -> None:
        self.__dict__.update(kwargs)
        self.module = kwargs["entry"].module
        self.n_categories = kwargs["values"].shape[1]

    def concentration(self, hyper: dict[str, np.ndarray] | None) -> np.ndarray | None:
        """The model's Dirichlet concentration of q_i given hyperparameter draws (None for a
        model whose q_i have no Dirichlet prior: it defines no ``concentration``)."""
        if not callable(getattr(self.module, "concentration", None)):
            return None
        return np.asarray(
            self.module.concentration(hyper, n_categories=self.n_categories, **self.params),
            dtype=np.float64,
        )


def choose_method(entry: ModelEntry, method: Any, sampler: Any, sample_kwargs: Any) -> str:
    """The method: checked against the model's list, or its default."""
    offered = list(entry.info["methods"])
    if method is None:
        method = offered[0]
        if (sampler is not None or sample_kwargs) and method not in NUTS_METHODS:
            nuts = [m for m in offered if m in NUTS_METHODS]
            method = nuts[0] if nuts else method  # no NUTS route: _refuse_nuts_options says so
        return method
    check_option(method, METHODS, "method")
    if method not in offered:
        raise ValueError(
            f"method must be one of the methods of model {entry.name!r} ({offered}), but got "
            f"{method!r}"
        )
    return method


def _refuse_nuts_options(method: str, sampler: Any, sample_kwargs: Any) -> None:
    if sampler is not None:
        raise ValueError(
            f"sampler chooses the NUTS implementation and applies to the methods "
            f"{list(NUTS_METHODS)} only, but got sampler={sampler!r} with method={method!r}; "
            "drop sampler="
        )
    sample_kwargs_dict(sample_kwargs)  # a dict or None, whatever the method
    if sample_kwargs:
        raise ValueError(
            f"sample_kwargs are passed to pymc.sample and apply to the methods "
            f"{list(NUTS_METHODS)} only, but got {sorted(sample_kwargs)} with method={method!r}"
        )


def _refuse_draws(method: str, draws: Any, chains: Any) -> None:
    for name, value in (("draws", draws), ("chains", chains)):
        if value is not None:  # a positive int, as for the other methods (not 1.0, not True)
            check_positive_int(value, name)
    given = [
        say(f"{k}={v!r}", f"--{k} {v}")
        for k, v in (("draws", draws), ("chains", chains))
        if v not in (None, 1)
    ]
    if given:
        chosen = say(f"method={method!r}", f"--method {method}")
        laplace = say("method='laplace'", "--method laplace")
        raise ValueError(
            f"{chosen} returns one point (the posterior mode), not draws, but got "
            f"{', '.join(given)}; drop them, or use {laplace} for draws around the mode"
        )


def _check_switch(value: Any, name: str) -> bool:
    """``value`` as a bool: True or False (numpy's bools too), else a TypeError."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, but got {value!r}")
    return bool(value)


def _read_data(data: Any, long: bool, reader: str) -> tuple[Any, xr.DataArray]:
    """The answers (None for a model of counts) and the counts of ``data``
    (:func:`ambppl.data.as_answers`, :func:`ambppl.data.as_counts`).

    A frame the reader cannot read with its defaults is refused by the reader, whose
    message asks for one of its options; ``fit`` takes no reader options
    (:func:`ambppl.data.refuse_read_options`), so in Python the message shows the call that
    reads the frame first, ``fit(ambppl.read_annotations(data, item=...), ...)``
    (:func:`ambppl.internal.messages.reading_for`; on the command line it keeps the option,
    ``--item``)."""
    note = "" if long else " (and format='counts' where the frame holds counts)"
    with reading_for("fit", reader, note):
        if long:
            return as_answers(data)
        return None, as_counts(data)


def _jsonable(value: Any) -> Any:
    """Parameters as JSON values: arrays (numpy's, pandas', xarray's) and tuples as lists,
    numpy scalars and other numbers as Python's, mappings as dicts with string keys; any
    other object as its ``repr``, so that writing a record never fails after sampling."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray | np.generic):
        return _jsonable(value.tolist())
    if hasattr(value, "to_numpy"):  # a pandas Series or frame, an xarray DataArray
        with contextlib.suppress(Exception):
            return _jsonable(np.asarray(value.to_numpy()).tolist())
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return repr(value)


# ---------------------------------------------------------------------------------------
# Routes: each returns (DataTree without log_likelihood, concentration of q_i)


def _route_exact(job: _Job) -> tuple[xr.DataTree, np.ndarray]:
    conc = job.concentration(None)
    posterior = _conditional_draws(job, conc)
    return _assemble(posterior, job.counts), conc


def _route_empirical_bayes(job: _Job) -> tuple[xr.DataTree, np.ndarray]:
    hyper = {
        k: np.asarray(v, dtype=np.float64)
        for k, v in job.module.empirical_bayes(job.counts, **job.params).items()
    }
    conc = job.concentration(hyper)
    posterior = _conditional_draws(job, conc)
    for name, value in hyper.items():
        posterior[name] = np.broadcast_to(value, (job.chains, job.draws, *value.shape)).copy()
    return _assemble(posterior, job.counts), conc


def _route_collapsed(job: _Job) -> tuple[xr.DataTree, np.ndarray]:
    # The collapsed program's data are pm.Data: a repeated fit of the same program (another
    # data set with the same categories and parameters) reuses its compiled log density
    # (ambppl.inference.reuse; compiling was 4-5 s of a 6.5 s fit of 100 items).
    with reused_program(job.module.hyper_model(job.counts, **job.params), job.entry.name) as m:
        return _sample_collapsed(job, m)


def _sample_collapsed(job: _Job, pm_model: Any) -> tuple[xr.DataTree, np.ndarray]:
    import pymc as pm

    seed = int(job.rng.integers(2**31 - 1))
    hyper_tree = pm.sample(
        draws=job.draws,
        chains=job.chains,
        random_seed=seed,
        progressbar=job.progressbar,
        # A model of K + 1 numbers: compiling for nutpie (8-24 s) costs more than its faster
        # sampling saves; PyMC's NUTS reached the convergence standard 1.5-2.5x sooner end to
        # end at 1e5 items (benchmarks/bench_hierarchical.py). sampler= still overrides.
        nuts_sampler=job.sampler or COLLAPSED_SAMPLER,
        model=pm_model,
        **job.sample_kwargs,
    )
    hyper_post = hyper_tree["posterior"].to_dataset()
    hyper = {name: hyper_post[name].values for name in job.entry.hyperparameters}
    conc = job.concentration(hyper)
    posterior = _conditional_draws(job, conc)
    tree = _assemble(posterior, job.counts, hyper=hyper_post[list(job.entry.hyperparameters)])
    if "sample_stats" in hyper_tree.children:
        tree["sample_stats"] = hyper_tree["sample_stats"].to_dataset()
    tree["log_prior"] = _hyperprior_log_density(hyper_tree, pm_model, job.entry.hyperparameters)
    return tree, conc


def _hyperprior_log_density(tree: xr.DataTree, pm_model: Any, names: Sequence[str]) -> xr.Dataset:
    """The ``log_prior`` group: the log prior density of each hyperparameter per draw, for
    power-scaling prior sensitivity (:func:`ambppl.analysis.sensitivity.hyperprior_sensitivity`)."""
    import pymc as pm
    import xarray as xr

    # every free variable's draws (PyMC's function takes all value variables), scored on
    # the hyperparameters' prior terms only
    free = [rv.name for rv in pm_model.free_RVs]
    post = tree["posterior"].to_dataset()
    hyper = xr.DataTree.from_dict({"posterior": post[[n for n in free if n in post]]})
    return pm.stats.compute_log_prior(
        hyper,
        var_names=list(names),
        model=pm_model,
        extend_inferencedata=False,
        progressbar=False,
    )


def _route_nuts(job: _Job) -> tuple[xr.DataTree, np.ndarray | None]:
    import pymc as pm
    import xarray as xr

    pm_model = job.entry.build(job.counts if job.answers is None else job.answers, **job.params)
    # NUTS stores the free variables only (PyMC's convergence checks need them); the
    # deterministics that are kept are computed afterwards, once per kept draw, by
    # pymc.compute_deterministics on this thread. Computing them inside the sampler costs
    # every warm-up draw too, in each chain's thread: for rater_effects (q over 256 rater
    # nodes per item) that doubled the sampling time at 1000 items.
    free = [rv.name for rv in pm_model.free_RVs]
    hyper_names = list(job.entry.hyperparameters)
    deterministics = [det.name for det in pm_model.deterministics]
    wanted = (
        deterministics
        if job.names == job.available
        else [n for n in deterministics if n in {*job.names, *hyper_names}]
    )
    kwargs = dict(job.sample_kwargs)
    if job.sampler in THREADED_SAMPLERS or (job.sampler is None and _pymc_runs_nutpie(kwargs)):
        # PyMC's default assumes half the CPUs are hyper-threads (2 cores -> 1), which runs
        # these samplers' chains one after the other; their chains are threads.
        kwargs.setdefault("cores", max(1, min(job.chains, usable_cpus())))
    tree = pm.sample(
        draws=job.draws,
        chains=job.chains,
        random_seed=job.random_seed,
        progressbar=job.progressbar,
        var_names=free,
        nuts_sampler=job.sampler,
        model=pm_model,
        **kwargs,
    )
    post = tree["posterior"].to_dataset()
    # the sampled hyperparameters only (a model may list derived ones, e.g. rater_effects'
    # eta and b, which have no prior density of their own), from every free variable's draws
    # before var_names drops any
    sampled = [n for n in job.entry.hyperpriors if n in free]
    log_prior = _hyperprior_log_density(tree, pm_model, sampled) if sampled else None
    if wanted:
        derived = pm.compute_deterministics(
            post, var_names=wanted, model=pm_model, progressbar=False
        )
        post = post.assign({name: derived[name] for name in wanted}).assign_attrs(post.attrs)
    if job.names != job.available:  # log_prior's variables stay beside it
        post = post[[*dict.fromkeys([*hyper_names, *sampled, *job.names])]]
    tree["posterior"] = post
    # the model's own observed variables, and the counts every summary reads (with their
    # attributes: can't-solve label, source, ...)
    observed = (
        tree["observed_data"].to_dataset() if "observed_data" in tree.children else xr.Dataset()
    )
    tree["observed_data"] = observed.assign(counts=job.counts)
    for group in ("log_likelihood",):  # written by fit from the model's concentration
        if group in tree.children:
            del tree[group]
    hyper = {name: post[name].values for name in hyper_names} if hyper_names else None
    if log_prior is not None:
        tree["log_prior"] = log_prior
    return tree, job.concentration(hyper)


def _route_laplace(job: _Job) -> tuple[xr.DataTree, np.ndarray | None]:
    """The mode of the full program and Laplace draws around it (the same variables and
    groups as ``nuts``, without ``sample_stats``); the approximation is named in attrs.

    L-BFGS starts from the mode ``map`` returns where the model file offers
    ``posterior_mode`` (:func:`_mode_start`), so that the two routes find the same local
    mode of a multimodal posterior; else from the program's initial point."""
    data = job.counts if job.answers is None else job.answers
    pm_model = job.entry.build(data, **job.params)
    free = [rv.name for rv in pm_model.free_RVs]
    post, constant, info = laplace_draws(
        pm_model,
        draws=job.draws,
        chains=job.chains,
        rng=job.rng,
        names=_wanted(job),
        start=_mode_start(job, data, free),
    )
    return _optimizer_tree(job, post, constant, info, free)


def _mode_start(job: _Job, data: Any, free: list[str]) -> dict[str, np.ndarray] | None:
    """The free variables at the model file's ``posterior_mode`` (the ``map`` route's
    mode), for the ``laplace`` route to start from; None where the file has none, or where
    it refuses the fit's parameters (``dawid_skene``'s ``centred=True``: its mode is that of
    the non-centred coordinates) or gives none of ``free``.

    Its warnings are not raised: the program the ``laplace`` route builds raises its own.
    """
    import warnings

    own = getattr(job.module, "posterior_mode", None)
    if not callable(own):
        return None
    with one_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            post = own(data, **job.params)[0]
        except ValueError:  # parameters whose mode the file does not compute
            return None
    start = {name: post[name].values[0, 0] for name in free if name in post.data_vars}
    return start or None


def _route_map(job: _Job) -> tuple[xr.DataTree, np.ndarray | None]:
    """The posterior mode as one chain of one draw: the model file's ``posterior_mode``
    where it has one (no PyMC program built), else the PyMC program's (:func:`mode_point`)."""
    data = job.counts if job.answers is None else job.answers
    own = _own_mode(job.entry)
    if own is not None:
        with one_blas_thread():
            post, constant, info = own(data, **job.params)
        free = [n for n in post.data_vars if n not in job.available]
    else:
        pm_model = job.entry.build(data, **job.params)
        post, constant, info = mode_point(pm_model, names=_wanted(job))
        free = [rv.name for rv in pm_model.free_RVs]
    info = {**info, "approximation": POINT_SENTENCE}
    return _optimizer_tree(job, post, constant, info, free)


def _compiles(job: _Job, method: str) -> bool:
    """Whether the route compiles a PyTensor program: every route but the exact ones and the
    model file's own ``posterior_mode`` (``map`` of ``dawid_skene``: numpy and scipy alone,
    which does not import PyTensor)."""
    if method in ("exact", "empirical_bayes"):
        return False
    return not (method == "map" and _own_mode(job.entry) is not None)


def _own_mode(entry: ModelEntry) -> Callable[..., Any] | None:
    """The model file's ``posterior_mode``, which the ``map`` route prefers, or None."""
    own = getattr(entry.module, "posterior_mode", None)
    return own if callable(own) else None


def _wanted(job: _Job) -> list[str] | None:
    """The deterministics an optimizing route computes (None: all)."""
    if job.names == job.available:
        return None
    return [*job.entry.hyperparameters, *job.names]


def _optimizer_tree(
    job: _Job, post: xr.Dataset, constant: xr.Dataset, info: dict[str, Any], free: list[str]
) -> tuple[xr.DataTree, np.ndarray | None]:
    """The result tree of the optimizing routes (``laplace``, ``map``): the posterior (the
    free variables, the hyperparameters and the per-item variables asked for), the counts,
    the model's data; ``info`` in the attributes."""
    import xarray as xr

    hyper_names = list(job.entry.hyperparameters)
    if job.names != job.available:
        post = post[[*dict.fromkeys([*free, *hyper_names, *job.names])]]
    post.attrs = {**_created(), "sample_dims": ["chain", "draw"], **info}
    observed = xr.Dataset({"counts": job.counts})
    observed.attrs = {**_created(), "sample_dims": []}
    tree = xr.DataTree.from_dict(
        {"posterior": post, "observed_data": observed, "constant_data": constant}
    )
    tree.attrs.update(info)
    hyper = {name: post[name].values for name in hyper_names} if hyper_names else None
    return tree, job.concentration(hyper)


_ROUTES: dict[str, Callable[[_Job], tuple[Any, np.ndarray]]] = {
    "exact": _route_exact,
    "collapsed": _route_collapsed,
    "empirical_bayes": _route_empirical_bayes,
    "laplace": _route_laplace,
    "map": _route_map,
    "nuts": _route_nuts,
}


def _sampler_name(method: str, tree: xr.DataTree, entry: ModelEntry) -> str:
    """What computed the draws: the model file's ``posterior_mode`` for ``map`` where it has
    one (``"<model>.posterior_mode"``), :mod:`ambppl.inference.laplace` for the other
    optimizing routes, numpy's gamma draws for the exact ones, else the NUTS library."""
    if method == "map" and _own_mode(entry) is not None:
        return f"{entry.name}.posterior_mode"
    if method in ("laplace", "map"):
        return "ambppl.inference.laplace"
    if method not in NUTS_METHODS:
        return "numpy.random.Generator.standard_gamma"
    attrs = tree["sample_stats"].attrs if "sample_stats" in tree.children else {}
    return str(
        attrs.get("inference_library") or tree["posterior"].attrs.get("inference_library", "pymc")
    )


def _add_log_likelihood(tree: xr.DataTree, job: _Job, conc: np.ndarray | None) -> None:
    """Write the ``log_likelihood`` group: log p(answers_i | theta) per chain, draw and item.

    From the model's Dirichlet concentration where it has one (:mod:`ambppl.inference.modeling`);
    otherwise from the model file's ``log_likelihood(posterior, data, **params)`` (the same
    meaning, the item's answers with its own parameters integrated out, unless the file sets
    ``LOG_LIKELIHOOD = "conditional"``: then given them, as ``rater_effects``, which
    :func:`ambppl.compare` refuses to rank beside the others), or not at all.
    """
    import xarray as xr

    post = tree["posterior"]
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    counts = job.counts
    if conc is None:
        hook = getattr(job.module, "log_likelihood", None)
        if not callable(hook):
            return
        data = job.counts if job.answers is None else job.answers
        ll = np.asarray(hook(post.to_dataset(), data, **job.params), dtype=np.float64)
        if ll.shape != (chains, draws, job.values.shape[0]):
            raise ValueError(
                f"model {job.entry.name!r}: log_likelihood must return shape (chains, draws, "
                f"items) = {(chains, draws, job.values.shape[0])}, but got {ll.shape}"
            )
    else:
        ll = log_likelihood(job.values, conc)
    if ll.ndim == 1:  # the same for every draw: a read-only broadcast, no copies
        ll = np.broadcast_to(ll, (chains, draws, job.values.shape[0]))
    ds = xr.Dataset(
        {"counts": (("chain", "draw", "item"), ll)},
        coords={
            "chain": post["chain"].values,
            "draw": post["draw"].values,
            "item": counts["item"].values,
        },
    )
    ds.attrs = {**_created(), "sample_dims": ["chain", "draw"]}
    tree["log_likelihood"] = ds


def _check_convergence(
    tree: xr.DataTree, entry: ModelEntry, method: str, tune: int | None = None
) -> None:
    """The convergence standard on the hyperparameters (``collapsed``: the per-item draws are
    exact given them) or on every stored variable (``nuts``); ``tune``, the warm-up steps
    fit asked for, is recorded where the sampler did not record its own."""

    post = tree["posterior"]
    names = list(entry.hyperparameters) if method == "collapsed" else list(post.data_vars)
    check_convergence(
        tree, names, what=f"the {method} fit of {entry.name!r}", stacklevel=3, tune=tune
    )


def _check_optimizer(tree: xr.DataTree, entry: ModelEntry, method: str) -> None:
    """Warn where the optimizer of an optimizing route (``map``, ``laplace``) stopped
    before it converged (``optimizer_converged`` False in its record: the iteration limit,
    or a line search that failed): its mode, and the draws around it, may be off. Before,
    the record said so and nothing else did."""
    import warnings

    converged = tree.attrs.get("optimizer_converged")
    if converged is None or bool(converged):
        return
    around = " and the Laplace draws around it" if method == "laplace" else ""
    warnings.warn(
        f"the optimizer of the {method} fit of {entry.name!r} stopped before it converged "
        f"(after {tree.attrs.get('optimizer_iterations')} iterations: "
        f"{tree.attrs.get('optimizer_message')}); the posterior mode{around} may be off: "
        f"fit with method='nuts' to check",
        UserWarning,
        stacklevel=3,
    )


def _check_var_names(var_names: Any, available: list[str]) -> list[str]:
    """Return the posterior variables to store, in the order of ``available``."""
    if var_names is None:
        return list(available)
    names = [var_names] if isinstance(var_names, str) else var_names
    try:
        names = list(names)
    except TypeError:
        raise TypeError(
            f"var_names must be a variable name or a list of them, but got {var_names!r}"
        ) from None
    bad = [n for n in names if n not in available]
    if bad or not names:
        raise ValueError(
            f"var_names must be a non-empty selection of {available}, but got {var_names!r}"
        )
    return [n for n in available if n in names]


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux ``MemAvailable``, else psutil or
    ``os.sysconf``; :func:`ambppl.internal.limits.available_memory`), else None."""

    return available()


#: Copies of :data:`CHUNK_BYTES` the exact sampler holds at once besides the stored draws: a
#: chunk's gamma variates, their sums and the measures' temporaries (tracemalloc: 115 MiB =
#: 3.6 chunks at 10^5 items, 2 x 250 draws, K = 3).
_CHUNK_COPIES = 4

#: Copies of one measure's draws that ``ambppl.summarize`` holds at its peak (tracemalloc:
#: 1.15 at 10^5 items, 2 x 250 draws), counted by the command line, which summarizes the fit.
SUMMARY_COPIES = 1.25

#: Copies of one measure's draws the caller will make after the fit (see :func:`after_fit`).
_AFTER_FIT: ContextVar[float] = ContextVar("ambppl_fit_after", default=0.0)


@contextlib.contextmanager
def after_fit(copies: float) -> Iterator[None]:
    """Within the block, the memory check of :func:`fit` also counts ``copies`` of one
    measure's draws, which the caller makes after the fit (the command line: the summary)."""
    token = _AFTER_FIT.set(copies)
    try:
        yield
    finally:
        _AFTER_FIT.reset(token)


def fit_with_progress(
    data: Any,
    model: str,
    *,
    method: str,
    draws: int | None = None,
    chains: int | None = None,
    measure: str | None = None,
    progress: Callable[[str], Any] | None = None,
    **fit_kwargs: Any,
) -> xr.DataTree:
    """:func:`fit` for a caller that summarizes the result next (``score``, the report,
    ``validate``): progress lines before and after, and a memory check that counts the
    summary (:func:`after_fit` with :data:`SUMMARY_COPIES`).

    Parameters
    ----------
    data, model, method, draws, chains
        As for :func:`fit`.
    measure : str, optional
        The one measure the caller summarizes: unless ``fit_kwargs`` name ``var_names``,
        only its variable is stored (``q`` costs K times as much memory; hyperparameters
        are always stored), except under ``method="nuts"``, whose convergence record covers
        every variable.
    progress : callable, optional
        Called with ``"fitting <model> (<method>, C x D draws) to <size>"`` and
        ``"fitted in T s"``.
    **fit_kwargs
        Passed to :func:`fit` (``random_seed``, ``sampler``, ``sample_kwargs``, model
        parameters, ...).

    Returns
    -------
    xarray.DataTree
        The fit.

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> counts = ambppl.read_annotations(np.array([[3, 1, 0], [0, 4, 1]]), cant_solve=2)
    >>> result = fit_with_progress(counts, "dirichlet_categorical", method="exact", draws=50,
    ...                            chains=1, measure="amb", progress=print, random_seed=0)
    ... # doctest: +ELLIPSIS
    fitting dirichlet_categorical (exact, 1 x 50 draws) to 2 items x 3 categories
    fitted in ... s
    >>> sorted(result.posterior.data_vars)
    ['amb']
    """
    if measure is not None and method != "nuts" and fit_kwargs.get("var_names") is None:
        fit_kwargs["var_names"] = [VARIABLES[measure_name(measure)]]
    say = check_progress(progress) or (lambda message: None)
    sizes = f", {chains} x {draws} draws" if draws is not None and chains is not None else ""
    say(f"fitting {model} ({method}{sizes}) to {describe(data)}")
    start = time.perf_counter()
    with after_fit(SUMMARY_COPIES):
        result = fit(data, model=model, method=method, draws=draws, chains=chains, **fit_kwargs)
    say(f"fitted in {time.perf_counter() - start:.1f} s")
    return result


def memory_needed(
    chains: int,
    draws: int,
    n_items: int,
    n_categories: int,
    names: Sequence[str],
    loglik: bool,
    per_draw: bool = False,
) -> tuple[float, float]:
    """Peak bytes of an exact-route fit, and the bytes of the draws it stores.

    Stored: ``8 x chains x draws x items`` per value kept per item (``K`` for ``q``, 1 per
    measure), and the log likelihood: per item for one fixed Dirichlet prior (broadcast over
    the draws, no copies), per draw and item with a learned one (``per_draw``; its table
    and the gather to the items are both held, so twice that at the peak). On top, the
    sampler's working chunks (:data:`_CHUNK_COPIES` x the larger of :data:`CHUNK_BYTES` and
    one item's gamma variates), ``K + 3`` doubles per item (the counts and per-item vectors)
    and what the caller makes after the fit (:func:`after_fit`). Against tracemalloc's peak
    of the exact route (10^5 items x 2 x 250 draws of amb; 2 x 10^4 items x 2 x 100 draws of
    q and the four measures): within 1% below to 3% above before the per-item term, 0-3%
    above with it (``tests/analysis/test_limits.py``).
    """
    cells = float(chains) * draws * n_items
    per_item = sum(n_categories if name == "q" else 1 for name in names)
    stored = 8.0 * cells * per_item
    peak = stored
    if loglik:
        stored += 8.0 * (cells if per_draw else n_items)
        peak += 8.0 * (2.0 * cells if per_draw else n_items)
    peak += _CHUNK_COPIES * max(CHUNK_BYTES, 8.0 * draws * n_categories)
    peak += 8.0 * n_items * (n_categories + 3)  # the counts as int64, ids, per-item vectors
    peak += _AFTER_FIT.get() * 8.0 * cells
    return peak, stored


#: The route of each conjugate catalog model that ``ambppl.score`` takes without per-item
#: draws (the memory refusal's fix).
_CONJUGATE_ROUTES = {"dirichlet_categorical": "exact", "hierarchical_dirichlet": "empirical_bayes"}


def _check_memory(
    chains: int,
    draws: int,
    n_items: int,
    n_categories: int,
    names: list[str],
    loglik: bool,
    per_draw: bool = False,
    route: tuple[str, str] = ("dirichlet_categorical", "exact"),
) -> None:
    """Refuse up front a fit whose peak memory (:func:`memory_needed`) is beyond
    :data:`ambppl.internal.limits.MEMORY_FRACTION` of the memory available; ``route``, the
    model and method asked for, words the fix (the conjugate route of that model where it has
    one)."""

    peak, stored = memory_needed(chains, draws, n_items, n_categories, names, loglik, per_draw)
    have = available_memory()
    if have is None or peak <= MEMORY_FRACTION * have:
        return
    per_item = sum(n_categories if name == "q" else 1 for name in names) + int(loglik)
    kept = ", ".join(names) + (", log_likelihood" if loglik else "")
    model, method = route
    conjugate = _CONJUGATE_ROUTES.get(model)
    if on_command_line():
        if conjugate is None:
            lighter = (
                "score a conjugate model: 'ambppl score' with --model dirichlet_categorical, "
                "or --model hierarchical_dirichlet --method empirical_bayes"
            )
        elif method == conjugate:
            lighter = "use 'ambppl score', which stores no per-item draws"
        else:  # e.g. 'ambppl score --method nuts': the conjugate route of the same model
            lighter = (
                f"score this model by its conjugate route: 'ambppl score --model {model} "
                f"--method {conjugate}' (leave out --method {method})"
            )
        fix = f"lower --draws or --chains, or {lighter}, which needs no per-item draws"
    else:
        if conjugate is None or method == conjugate:
            lighter = "ambppl.score (the command 'ambppl score'), which stores no per-item draws"
        else:
            lighter = (
                f"ambppl.score(data, {model!r}, method={conjugate!r}), which stores no "
                f"per-item draws (method={method!r} does)"
            )
        fix = (
            f"for per-item summaries use {lighter}, or store less: var_names=['amb'], "
            "log_likelihood=False, fewer draws or chains"
        )
    raise ValueError(
        f"the fit would need about {size(peak)} of memory at its peak: it would store "
        f"{size(stored)} of draws ({chains} chains x {draws} draws x {n_items} items x "
        f"{per_item} values per item: {kept}), plus the sampler's working copies"
        f"{' and the summary' if _AFTER_FIT.get() else ''}; that is more than the "
        f"{size(MEMORY_FRACTION * have)} allowed ({MEMORY_FRACTION:.0%} of the {size(have)} "
        f"available); {fix}"
    )


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


#: ``pymc.sample`` keywords with which ``nuts_sampler=None`` keeps PyMC's own NUTS.
_KEEP_PYMC_NUTS = ("step", "init", "trace", "callback")


def _pymc_runs_nutpie(sample_kwargs: dict[str, Any]) -> bool:
    """Whether ``pymc.sample(nuts_sampler=None, **sample_kwargs)`` samples with nutpie.

    PyMC 6.4's rule for a model whose free variables all take NUTS: nutpie when it is
    installed, nothing asks for PyMC's own sampler (``step``, a non-default ``init``,
    ``trace``, ``callback``, ``return_inferencedata=False``, ``initvals`` other than a dict)
    and the compile mode's linker is Numba or JAX (PyTensor's default is Numba). Where this
    guesses wrong, ``fit`` only sets ``cores`` for a sampler that does not need it.
    """
    if any(sample_kwargs.get(k) is not None for k in _KEEP_PYMC_NUTS if k != "init"):
        return False
    if sample_kwargs.get("init", "auto") != "auto" or not sample_kwargs.get(
        "return_inferencedata", True
    ):
        return False
    initvals = sample_kwargs.get("initvals")
    if importlib.util.find_spec("nutpie") is None or not (
        initvals is None or isinstance(initvals, dict)
    ):
        return False
    from pytensor.compile.mode import get_mode
    from pytensor.link.jax.linker import JAXLinker
    from pytensor.link.numba.linker import NumbaLinker

    mode = (sample_kwargs.get("compile_kwargs") or {}).get("mode")
    return isinstance(get_mode(mode).linker, NumbaLinker | JAXLinker)


def _default_sampler(entry: ModelEntry, method: str) -> str | None:
    """The model's own NUTS implementation (info record ``sampler``) where installed."""
    name = entry.info.get("sampler")
    if method != "nuts" or name is None or importlib.util.find_spec(NUTS_SAMPLERS[name]) is None:
        return None
    return str(name)


def _check_sampler(sampler: Any) -> str | None:
    """Return the NUTS sampler name (None: PyMC's default), checking that it is installed."""
    if sampler is None:
        return None
    check_option(sampler, tuple(NUTS_SAMPLERS), "sampler")
    module = NUTS_SAMPLERS[sampler]
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"sampler={sampler!r} needs the {module} package, which is not installed; "
            f"install it with: pip install 'ambppl[{sampler}]' (or use sampler=None for "
            "PyMC's default)"
        )
    return sampler


def _conditional_draws(job: _Job, conc: np.ndarray) -> dict[str, np.ndarray]:
    """Independent draws of q_i ~ Dirichlet(conc + counts_i) and of the measures.

    ``conc`` is one concentration vector (K,) for every draw, or one per draw
    (chains, draws, K).
    """

    values, chains, draws = job.values, job.chains, job.draws
    n_items, n_cat = values.shape
    per_draw = conc.ndim == 3
    if per_draw and conc.shape != (chains, draws, n_cat):
        raise ValueError(
            f"the model's concentration must have shape (K,) or (chains, draws, K) = "
            f"{(chains, draws, n_cat)}, but got {conc.shape}"
        )
    store_q = "q" in job.names
    todo = [m for m in job.measures if VARIABLES[m] in job.names]
    out: dict[str, np.ndarray] = {}
    if store_q:
        out["q"] = np.empty((chains, draws, n_items, n_cat))
    for m in todo:
        out[VARIABLES[m]] = np.empty((chains, draws, n_items))
    chunk = max(1, CHUNK_BYTES // (8 * draws * n_cat))
    starts = range(0, n_items, chunk)
    rng = job.rng
    with _progress(job.progressbar, chains * len(starts), "exact Dirichlet draws") as advance:
        for c in range(chains):
            for start in starts:
                stop = min(start + chunk, n_items)
                if per_draw:
                    alpha = conc[c][:, None, :] + values[None, start:stop]
                else:
                    alpha = values[start:stop] + conc
                q = dirichlet_draws(rng, alpha, draws)
                if store_q:
                    out["q"][c, :, start:stop] = q
                first = c == 0 and start == 0  # validate q once (finite, on the simplex)
                for m in todo:
                    out[VARIABLES[m]][c, :, start:stop] = _measure_numpy(
                        m, q, job.cs, -1, check=first
                    )
                advance()
    return out


def _created() -> dict[str, Any]:

    return {
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(),
        "creation_library": "ambppl",
        "creation_library_version": ambppl.__version__,
        "creation_library_language": "Python",
        "inference_library": "ambppl",
        "inference_library_version": ambppl.__version__,
    }


def _assemble(
    posterior: dict[str, np.ndarray], counts: xr.DataArray, hyper: Any = None
) -> xr.DataTree:
    """A DataTree with the layout of ``pymc.sample``'s result for exact draws.

    ``hyper`` (an xarray Dataset of hyperparameter draws with dims chain, draw, ...) is
    merged into the posterior; arrays in ``posterior`` of shape (chain, draw) or
    (chain, draw, K) that are not per item (empirical-Bayes hyperparameters) get the dims
    () or (category,).
    """
    import xarray as xr

    chains, draws = next(iter(posterior.values())).shape[:2]
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(draws),
        "item": counts["item"].values,
        "category": counts["category"].values,
    }
    per_item = {"q", *VARIABLES.values()}
    data_vars = {}
    for name, values in posterior.items():
        if name in per_item:
            dims = ("chain", "draw", "item", "category")[: values.ndim]
        else:
            dims = ("chain", "draw", "category")[: values.ndim]
        data_vars[name] = (dims, values)
    ds = xr.Dataset(data_vars, coords={k: v for k, v in coords.items() if k != "category"})
    if any("category" in v.dims for v in ds.data_vars.values()):
        ds = ds.assign_coords(category=coords["category"])
    if hyper is not None:
        hyper = hyper.assign_coords(chain=coords["chain"], draw=coords["draw"])
        ds = xr.merge([hyper, ds], compat="override", join="exact")
        if "category" in ds.dims:
            ds = ds.assign_coords(category=coords["category"])
    created = _created()
    ds.attrs = {**created, "sample_dims": ["chain", "draw"]}
    observed = xr.Dataset({"counts": counts})
    observed.attrs = {**created, "sample_dims": []}
    return xr.DataTree.from_dict({"posterior": ds, "observed_data": observed})


class _progress:
    """Context manager yielding an ``advance()`` callable; a rich progress bar if wanted."""

    def __init__(self, show: bool, total: int, description: str) -> None:
        self.show = show and total > 1
        self.total = total
        self.description = description

    def __enter__(self) -> Callable[[], None]:
        if not self.show:
            return lambda: None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.__enter__()
        task = self._bar.add_task(self.description, total=self.total)
        return lambda: self._bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self.show:
            self._bar.__exit__(*exc)
