"""Reading what a fit result says about its data: counts, the can't-solve category, the prior.

``ambppl.fit`` records these in the result's attributes; a trace of ``pymc.sample`` on a catalog
model carries them as ``pm.Data`` in ``constant_data``. ``summary``, ``report`` and
``validation`` read them here, so every reader accepts the same results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.internal.checks import cant_solve_position

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr


def observed_counts(result: xr.DataTree) -> xr.DataArray:
    """The counts of a result: ``observed_data["counts"]`` (fit and the catalog's programs)."""
    group = result["observed_data"]
    if "counts" not in group.data_vars:
        raise ValueError(
            "result must hold the item x category counts as observed_data['counts'] (as "
            "ambppl.fit and every catalog model write them), but observed_data has "
            f"{sorted(group.data_vars)}"
        )
    return group["counts"]


def constant(result: xr.DataTree, name: str) -> Any:
    """A variable of the ``constant_data`` group (``pm.Data`` of the model), or None."""
    if "constant_data" in result.children and name in result["constant_data"].data_vars:
        return result["constant_data"][name].values
    return None


def cant_solve_index(
    result: xr.DataTree, attrs: dict[str, Any], counts: xr.DataArray
) -> int | None:
    """Position of the can't-solve category, from the attributes or the model's data.

    ``ambppl.fit`` writes ``attrs["cant_solve"]`` when the data have a can't-solve category
    and leaves it out otherwise (netCDF stores no None; it recognizes its results by
    ``method`` and ``model``); a trace from ``pymc.sample`` on a catalog model has the model's
    ``pm.Data("is_cant_solve")`` in ``constant_data`` instead. A result with none of these
    cannot be interpreted (its can't-solve shares, estimators and closed forms would silently
    assume no can't-solve category), so it is refused.
    """
    labels = counts["category"].values
    if "cant_solve" in attrs:
        return cant_solve_position(attrs["cant_solve"], labels)
    flags = constant(result, "is_cant_solve")
    if flags is not None:
        hits = np.flatnonzero(np.asarray(flags))
        if len(hits) > 1 or len(flags) != len(labels):
            raise ValueError(
                "result's constant_data['is_cant_solve'] must flag at most one of the "
                f"{len(labels)} categories, but got {np.asarray(flags).tolist()}"
            )
        return int(hits[0]) if len(hits) else None
    if "method" in attrs and "model" in attrs:  # ambppl.fit without a can't-solve category
        return None
    raise ValueError(
        "result must say which category is can't-solve: ambppl.fit records it in "
        "attrs['cant_solve'], catalog models in pm.Data('is_cant_solve') (constant_data), but "
        "this result has neither; fit it with ambppl.fit, build the model with "
        "ambppl.inference.modeling.add_annotation_data, or set "
        "result.attrs['cant_solve'] = <label or None>"
    )


def fixed_prior(result: xr.DataTree, attrs: dict[str, Any]) -> Any:
    """The fixed Dirichlet prior of every q_i (attrs or ``pm.Data("prior")``), or None."""
    if attrs.get("prior") is not None:
        return attrs["prior"]
    prior = constant(result, "prior")
    return None if prior is None else np.asarray(prior, dtype=np.float64).tolist()


def check_fit_tree(result: Any) -> None:
    """Refuse anything but a fit result: a DataTree with ``posterior`` and ``observed_data``."""
    import xarray as xr

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            "result must be the xarray.DataTree returned by ambppl.fit (or a pymc.sample trace "
            f"of a catalog model), but got {type(result).__name__}"
        )
    for group in ("posterior", "observed_data"):
        if group not in result.children:
            raise ValueError(
                f"result must have a {group!r} group (as ambppl.fit returns), but it has "
                f"{sorted(result.children)}"
            )
