r"""The ``laplace`` and ``map`` routes of :func:`ambppl.fit`: the posterior mode of a PyMC program,
alone (:func:`mode_point`) or with independent draws of the Laplace approximation around it
(:func:`laplace_draws`).

For a model whose free variables live, after PyMC's transforms, in ``R^n`` (``x``; the
log posterior ``log p(x | y)`` includes the transforms' Jacobians, so it is a density of
``x``), the route

1. finds the mode ``x*`` by L-BFGS (``scipy.optimize.minimize``) with PyMC's exact gradient,
   from a given point (``start``: :func:`ambppl.fit` passes the mode of the model file's
   ``posterior_mode`` where it has one, so that ``laplace`` centres on the mode ``map``
   returns) or else from the model's initial point. A multimodal posterior (``dawid_skene``'s)
   has several local modes, and the one L-BFGS finds depends on where it starts;
2. computes the Hessian ``H`` of ``-log p(x | y)`` at ``x*`` by central differences of the
   exact gradient (``2 n`` gradient evaluations, step ``1e-5 max(1, |x_j|)``), symmetrized;
   eigenvalues below :data:`MIN_CURVATURE` times the largest (a flat or non-convex
   direction) are raised to it and counted (``hessian_clipped``);
3. draws ``x_s = x* + H^{-1/2} u_s``, ``u_s ~ N(0, I)`` iid, and maps each draw to the free
   variables and every deterministic of the program (one compiled function).

The draws are independent (no R-hat, no ESS); they are exact draws of the Gaussian
approximation, not of the posterior. The approximation is good where the posterior is
close to Gaussian in the unconstrained coordinates (many answers per parameter); it ignores
skewness and, for hierarchical scales, puts the joint mode's shrinkage in place of the
posterior's. For a mixture over a discrete latent variable summed out in the likelihood
(``dawid_skene``'s classes) the class posterior per draw stays exact given the draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ambppl.internal.threads import one_blas_thread

__all__ = ["MIN_CURVATURE", "laplace_draws", "mode_point"]

#: Eigenvalues of the Hessian below this fraction of the largest are raised to it.
MIN_CURVATURE = 1e-10


def _dims(pm_model: Any, name: str, ndim: int) -> tuple[str, ...]:
    dims = tuple(pm_model.named_vars_to_dims.get(name, ()) or ())
    if len(dims) != ndim:
        dims = tuple(f"{name}_dim_{j}" for j in range(ndim))
    return dims


def laplace_draws(
    pm_model: Any,
    *,
    draws: int,
    chains: int,
    rng: np.random.Generator,
    names: list[str] | None = None,
    maxiter: int = 10_000,
    start: dict[str, Any] | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """Mode, Hessian and Laplace draws of a PyMC model (module docstring).

    Parameters
    ----------
    pm_model : pymc.Model
        The program (its likelihood in potentials or observed variables).
    draws, chains : int
        The draws are laid out as ``chains x draws`` (independent).
    rng : numpy.random.Generator
        Source of the normal variates.
    names : list of str, optional
        Deterministics to compute (default: all); free variables are always kept.
    maxiter : int, default 10000
        L-BFGS iterations at most.
    start : dict, optional
        Where L-BFGS starts: values of free variables by name, on their own (constrained)
        scale; the others, and all of them by default, from the model's initial point.

    Returns
    -------
    posterior : xarray.Dataset
        Dims ``chain``, ``draw`` and the model's own.
    constant_data : xarray.Dataset
        The model's ``pm.Data`` nodes.
    info : dict
        ``approximation`` (a sentence), ``mode_logp`` (PyMC's log density of the program
        at the mode, normalizing constants and the transforms' Jacobians included),
        ``optimizer_converged``, ``optimizer_iterations``, ``optimizer_message``,
        ``n_parameters``, ``hessian_clipped``.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> with pm.Model() as m:
    ...     x = pm.Normal("x", 1.0, 2.0)
    ...     _ = pm.Deterministic("y", 2 * x)
    >>> post, _, info = laplace_draws(m, draws=2000, chains=2, rng=np.random.default_rng(0))
    >>> round(float(post["x"].mean()), 1), round(float(post["x"].std()), 1)
    (1.0, 2.0)
    >>> bool(np.allclose(post["y"], 2 * post["x"])), info["optimizer_converged"]
    (True, True)
    """
    found, negative, start = _find_mode(pm_model, maxiter, start)
    mode = found.x
    n = mode.size
    hess = np.empty((n, n))
    for j in range(n):
        h = 1e-5 * max(1.0, abs(mode[j]))
        up, down = mode.copy(), mode.copy()
        up[j] += h
        down[j] -= h
        hess[:, j] = (negative(up)[1] - negative(down)[1]) / (2.0 * h)
    hess = 0.5 * (hess + hess.T)
    values, vectors = np.linalg.eigh(hess)
    floor = MIN_CURVATURE * max(float(values.max()), 1.0)
    clipped = int((values < floor).sum())
    values = np.maximum(values, floor)
    root = vectors / np.sqrt(values)  # H^{-1/2} up to a rotation: cov = root root'
    total = chains * draws
    x = mode[None, :] + rng.standard_normal((total, n)) @ root.T

    posterior, constant_data = _outputs(pm_model, start, x, chains, draws, names)
    info = {
        **_optimizer_info(found, n),
        "approximation": (
            "laplace: posterior mode by L-BFGS with the exact gradient, then independent draws "
            "of N(mode, H^-1) in the unconstrained coordinates (H by central differences of "
            "the gradient); draws of the Gaussian approximation, not of the posterior"
        ),
        "hessian_clipped": clipped,
    }
    return posterior, constant_data, info


def _find_mode(
    pm_model: Any, maxiter: int, given: dict[str, Any] | None = None
) -> tuple[Any, Any, dict[str, Any]]:
    """L-BFGS from ``given`` (values of free variables by name, constrained; the rest from
    the model's initial point): the optimizer's result, the negative log posterior with its
    gradient (of the raveled value variables) and the starting point (value variables)."""
    from pymc.blocking import DictToArrayBijection
    from pymc.initial_point import make_initial_point_fn
    from scipy.optimize import minimize

    if given:
        # the constrained values through the program's own transforms (PyMC's initvals)
        start = make_initial_point_fn(model=pm_model, overrides=dict(given), jitter_rvs=set())(0)
    else:
        start = pm_model.initial_point()
    x0 = DictToArrayBijection.map({v.name: start[v.name] for v in pm_model.value_vars})
    func = pm_model.logp_dlogp_function(ravel_inputs=True)
    func.set_extra_values({})

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        logp, grad = func(x)
        return -float(logp), -np.asarray(grad, dtype=np.float64)

    with one_blas_thread():  # L-BFGS's many small BLAS calls (ambppl.internal.threads)
        found = minimize(
            negative,
            x0.data,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": maxiter, "gtol": 1e-8},
        )
    return found, negative, start


def _optimizer_info(found: Any, n: int) -> dict[str, Any]:
    return {
        "mode_logp": -float(found.fun),
        "optimizer_converged": bool(found.success),
        "optimizer_iterations": int(found.nit),
        "optimizer_message": str(found.message),
        "n_parameters": int(n),
    }


def _outputs(
    pm_model: Any,
    start: dict[str, Any],
    x: np.ndarray,
    chains: int,
    draws: int,
    names: list[str] | None,
) -> tuple[Any, Any]:
    """Every free variable (constrained) and the wanted deterministics at each row of ``x``
    (raveled value variables), as a posterior ``chains x draws``; the ``pm.Data`` nodes."""
    import xarray as xr

    value_vars = pm_model.value_vars
    shapes = [np.shape(start[v.name]) for v in value_vars]
    cuts = np.cumsum([0, *(int(np.prod(s)) for s in shapes)])
    as_values = {v.name: v for v in pm_model.unobserved_value_vars}
    free = [rv.name for rv in pm_model.free_RVs]
    deterministics = [d.name for d in pm_model.deterministics]
    wanted = deterministics if names is None else [d for d in deterministics if d in names]
    outputs = [*free, *wanted]
    compiled = pm_model.compile_fn(
        [as_values[name] for name in outputs],
        inputs=value_vars,
        on_unused_input="ignore",
        point_fn=False,
    )
    total = chains * draws
    store: dict[str, np.ndarray] = {}
    for s in range(total):
        args = [x[s, cuts[j] : cuts[j + 1]].reshape(shapes[j]) for j in range(len(shapes))]
        out = compiled(*args)
        for name, value in zip(outputs, out, strict=True):
            if name not in store:
                store[name] = np.empty((total, *np.shape(value)))
            store[name][s] = value
    coords = {k: list(v) for k, v in pm_model.coords.items() if v is not None}
    data_vars = {
        name: (
            ("chain", "draw", *_dims(pm_model, name, value.ndim - 1)),
            value.reshape(chains, draws, *value.shape[1:]),
        )
        for name, value in store.items()
    }
    posterior = xr.Dataset(data_vars, coords={"chain": np.arange(chains), "draw": np.arange(draws)})
    used = {d for v in posterior.data_vars.values() for d in v.dims}
    posterior = posterior.assign_coords({k: v for k, v in coords.items() if k in used})
    constant = {}
    for var in pm_model.data_vars:
        value = np.asarray(var.get_value())
        constant[var.name] = (_dims(pm_model, var.name, value.ndim), value)
    constant_data = xr.Dataset(constant)
    used = {d for v in constant_data.data_vars.values() for d in v.dims}
    constant_data = constant_data.assign_coords({k: v for k, v in coords.items() if k in used})
    return posterior, constant_data


def mode_point(
    pm_model: Any, *, names: list[str] | None = None, maxiter: int = 10_000
) -> tuple[Any, Any, dict[str, Any]]:
    """The posterior mode of a PyMC model as one draw of every variable (the ``map`` route).

    The maximum of ``log p(x | y)`` over the unconstrained coordinates (step 1 of the module
    docstring, the point the Laplace draws centre on), mapped to the free variables and the
    deterministics. A model file may offer a faster ``posterior_mode(data, **params)`` with
    the same output, which :func:`ambppl.fit` prefers.

    Parameters
    ----------
    pm_model : pymc.Model
    names : list of str, optional
        Deterministics to compute (default: all); free variables are always kept.
    maxiter : int, default 10000
        L-BFGS iterations at most.

    Returns
    -------
    posterior : xarray.Dataset
        One chain of one draw.
    constant_data : xarray.Dataset
    info : dict
        ``approximation`` (a sentence), ``mode_logp`` (PyMC's log density of the program at
        the mode, constants included), ``optimizer_converged``, ``optimizer_iterations``,
        ``optimizer_message``, ``n_parameters``.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model() as m:
    ...     x = pm.HalfNormal("x", 1.0)
    >>> post, _, info = mode_point(m)
    >>> post["x"].shape, round(post["x"].item(), 4)   # the mode of log x, not of x: 1
    ((1, 1), 1.0)
    """
    found, _, start = _find_mode(pm_model, maxiter)
    posterior, constant = _outputs(pm_model, start, found.x[None, :], 1, 1, names)
    info = {
        **_optimizer_info(found, found.x.size),
        "approximation": POINT_SENTENCE,
    }
    return posterior, constant, info


#: The ``approximation`` attribute of a ``map`` fit.
POINT_SENTENCE = (
    "map: the posterior mode (the maximum of log p(x | y) over the program's unconstrained "
    "coordinates, L-BFGS with the exact gradient), one point, not a sample: its HDIs are "
    "points and it carries no posterior uncertainty"
)
