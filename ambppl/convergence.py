"""The convergence standard of MCMC fits: one record per fit, a warning when it is missed.

``fit`` checks every NUTS-based fit against :data:`CONVERGENCE` (Vehtari et al. 2021's
recommendations: rank-normalized R-hat <= 1.01, bulk and tail ESS >= 400, and no divergent
transitions), records the worst values in ``attrs["convergence"]`` (JSON) and warns with
:class:`ConvergenceWarning`; the report shows the record. Validation and simulation scripts
call :func:`check_convergence` on their own traces.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["CONVERGENCE", "ConvergenceWarning", "check_convergence"]

#: The convergence standard: worst R-hat, smallest bulk and tail ESS, and the number of
#: divergent transitions allowed.
CONVERGENCE = {"r_hat": 1.01, "ess_bulk": 400, "ess_tail": 400, "divergences": 0}


class ConvergenceWarning(UserWarning):
    """An MCMC fit missed the convergence standard :data:`CONVERGENCE`."""


def check_convergence(
    tree: Any, var_names: Sequence[str], *, what: str = "the fit", stacklevel: int = 2
) -> dict[str, Any]:
    """Check posterior draws against :data:`CONVERGENCE`; record the result, warn if missed.

    Parameters
    ----------
    tree : xarray.DataTree
        A result with a ``posterior`` group (dims chain, draw) and, optionally,
        ``sample_stats["diverging"]``.
    var_names : sequence of str
        The variables to check (those absent from the posterior are skipped; none left:
        every posterior variable).
    what : str, default "the fit"
        How the warning names the fit.
    stacklevel : int, default 2
        Passed to :func:`warnings.warn`.

    Returns
    -------
    dict
        ``variables``, ``r_hat`` (largest), ``ess_bulk`` and ``ess_tail`` (smallest),
        ``divergences``, ``passed`` and ``failed`` (the limits missed); with fewer than 4
        draws only ``passed=False`` and a ``reason``. Also stored as JSON in
        ``tree.attrs["convergence"]``.

    Warns
    -----
    ConvergenceWarning
        When the standard is missed.

    References
    ----------
    .. [1] Vehtari et al. (2021), "Rank-normalization, folding, and localization: an improved
       R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> rng = np.random.default_rng(5)
    >>> tree = xr.DataTree.from_dict(
    ...     {"posterior": xr.Dataset({"x": (("chain", "draw"), rng.normal(size=(4, 1000)))})})
    >>> check_convergence(tree, ["x"])["passed"]
    True
    """
    import arviz as az

    post = tree["posterior"].to_dataset()
    names = [n for n in var_names if n in post] or list(post.data_vars)
    ds = post[names]
    record: dict[str, Any] = {"variables": names}
    if post.sizes["chain"] * post.sizes["draw"] < 4 or post.sizes["draw"] < 4:
        record.update(passed=False, reason="too few draws to diagnose")
    else:
        rhat = az.rhat(ds)
        bulk = az.ess(ds, method="bulk")
        tail = az.ess(ds, method="tail")
        worst = {
            "r_hat": max(float(np.nanmax(rhat[v].values)) for v in names),
            "ess_bulk": min(float(np.nanmin(bulk[v].values)) for v in names),
            "ess_tail": min(float(np.nanmin(tail[v].values)) for v in names),
        }
        div = 0
        if "sample_stats" in tree.children and "diverging" in tree["sample_stats"]:
            div = int(tree["sample_stats"]["diverging"].values.sum())
        worst["divergences"] = div
        failed = [
            k
            for k, limit in CONVERGENCE.items()
            if (worst[k] > limit if k in ("r_hat", "divergences") else worst[k] < limit)
        ]
        record.update(worst, passed=not failed, failed=failed)
    tree.attrs["convergence"] = json.dumps(record)
    if not record["passed"]:
        warnings.warn(
            f"{what} missed the convergence standard "
            f"(R-hat <= 1.01, bulk and tail ESS >= 400, no divergences): "
            f"{json.dumps({k: v for k, v in record.items() if k != 'variables'})}; "
            "draw more (draws=, sample_kwargs={'tune': ...}) or raise target_accept",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    return record
