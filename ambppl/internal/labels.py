"""Lift a numpy kernel over the categories onto a labelled (and possibly lazy) DataArray.

The closed forms and estimators are numpy functions of arrays with the categories on the
last axis. Given an :class:`xarray.DataArray` they run through :func:`xarray.apply_ufunc`
with the category dimension as the core dimension: every other dimension and its
coordinates (``item``) are kept, and a dask-backed array stays lazy
(``dask="parallelized"``, one task per chunk of items; the category dimension is put in a
single chunk first). Eager arrays are checked at once; dask chunks when computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def is_dataarray(x: Any) -> bool:
    """True for an :class:`xarray.DataArray`, without importing xarray for other inputs."""
    cls = type(x)
    return cls.__name__ == "DataArray" and cls.__module__.startswith("xarray")


def category_dim(data: Any, dim: str | None, where: str) -> str:
    """The dimension holding the categories: ``dim``, else "category", else the last."""
    if dim is None:
        return "category" if "category" in data.dims else data.dims[-1]
    if dim not in data.dims:
        raise ValueError(f"{where}: dim must be one of {list(data.dims)}, but got {dim!r}")
    return dim


def refuse_array_dim(
    dim: str | None,
    where: str,
    fix: str = "an array has its categories on the last axis (move them there, or pass a "
    "DataArray)",
) -> None:
    """Refuse ``dim=`` (the category dimension of a DataArray) given with an array."""
    if dim is not None:
        raise TypeError(f"{where}: dim= is for xarray inputs; {fix}, got dim={dim!r}")


def over_categories(
    func: Callable[[np.ndarray], Any], data: Any, *, dim: str | None, name: str, where: str
) -> Any:
    """``func`` (categories on the last axis -> one value per row) applied to a DataArray."""
    import xarray as xr

    dim = category_dim(data, dim, where)
    if data.chunks:
        data = data.chunk({dim: -1})
    else:  # eager: run once now so that bad input raises here with its message
        return xr.DataArray(
            np.asarray(func(np.moveaxis(data.values, data.dims.index(dim), -1))),
            dims=[d for d in data.dims if d != dim],
            coords={k: v for k, v in data.coords.items() if dim not in v.dims},
            name=name,
        )

    def kernel(values: np.ndarray) -> np.ndarray:
        return np.asarray(func(values), dtype=np.float64)

    out = xr.apply_ufunc(
        kernel,
        data,
        input_core_dims=[[dim]],
        dask="parallelized",
        output_dtypes=[np.float64],
        keep_attrs=False,
    )
    return out.rename(name)
