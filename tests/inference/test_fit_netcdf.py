"""A fit saves with ``result.to_netcdf(path)`` (h5netcdf, a core dependency) and reloads with
``xarray.open_datatree(path)`` into ``ambppl.summarize`` and the HTML report
(ambppl/inference/fitting.py writes only attributes netCDF can store)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.report import render_report


def _round_trip(result: xr.DataTree, path) -> xr.DataTree:
    result.to_netcdf(path)  # out of the box: no engine, no encoding options
    return xr.open_datatree(path)


def _storable(value) -> bool:
    if isinstance(value, bool | np.bool_ | dict) or value is None:
        return False
    if isinstance(value, list | tuple):
        return all(_storable(v) for v in value)
    return True


def _all_attrs(tree: xr.DataTree):
    for node in tree.subtree:
        yield node.path, node.attrs
        for name, variable in node.variables.items():
            yield f"{node.path}/{name}", variable.attrs


@pytest.mark.parametrize("cant_solve", ["cs", None])
def test_exact_fit_round_trip(small_counts, tmp_path, cant_solve):
    counts = small_counts.copy()
    counts.attrs = {**counts.attrs, "cant_solve": cant_solve, "n_raters": None}
    result = ambppl.fit(counts, draws=300, chains=2, random_seed=4)
    for where, attrs in _all_attrs(result):
        assert all(_storable(v) for v in attrs.values()), (where, attrs)
    assert result.attrs.get("cant_solve") == cant_solve  # left out when there is none
    with _round_trip(result, tmp_path / "fit.nc") as back:
        pd.testing.assert_frame_equal(ambppl.summarize(back), ambppl.summarize(result))
        xr.testing.assert_equal(back["posterior"]["amb"], result["posterior"]["amb"])
        page = render_report(back, random_seed=1, top=2)
    assert page.count('<tr><td data-value="') >= 3


def test_nuts_fit_round_trip(nuts_fit, tmp_path):
    with _round_trip(nuts_fit, tmp_path / "nuts.nc") as back:
        assert sorted(back.children) == sorted(nuts_fit.children)
        assert json.loads(back.attrs["convergence"]) == json.loads(nuts_fit.attrs["convergence"])
        pd.testing.assert_frame_equal(ambppl.summarize(back), ambppl.summarize(nuts_fit))
        page = render_report(back, random_seed=1, top=2)
    assert "convergence" in page


def test_results_without_a_can_t_solve_label_are_still_refused_elsewhere(small_counts):
    """A DataTree that is not a fit result must still say whether it has a can't-solve
    category: leaving the attribute out means "none" only for ambppl.fit's results."""
    result = ambppl.fit(small_counts, draws=20, chains=1, random_seed=1)
    stranger = result.copy()
    for node in (stranger, stranger["posterior"]):
        for key in ("cant_solve", "method", "model"):
            node.attrs.pop(key, None)
    with pytest.raises(ValueError, match=r"result must say which category is can't-solve"):
        ambppl.summarize(stranger)
