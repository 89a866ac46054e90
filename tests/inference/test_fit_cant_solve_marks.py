"""The measures applied to a fit's own ``q`` read the can't-solve category the fit used.

``ambppl.amb(result["posterior"]["q"])`` took the last category for can't-solve whatever the
data said: ``q`` carried no ``cant_solve`` attribute (only the counts did), so
``cant_solve="auto"`` fell back to the last position. On a fit of two classes without a
can't-solve answer it was 0.96 off the stored ``amb`` (audit, dog data); with can't-solve
first, off too. Reference: the fit's own ``amb`` draws (a ``pm.Deterministic`` of the same
``q``, computed with the right category).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.data import read_long

TWO_CLASSES = xr.DataArray(
    [[3, 1], [0, 4], [2, 2]],
    dims=("item", "category"),
    coords={"item": ["a", "b", "c"], "category": ["x", "y"]},
)
CS_FIRST = xr.DataArray(
    [[1, 3, 1], [2, 0, 4], [0, 2, 2]],
    dims=("item", "category"),
    coords={"item": ["a", "b", "c"], "category": ["cs", "x", "y"]},
    attrs={"cant_solve": "cs"},
)
MEASURES = {"amb": ambppl.amb, "amb_modified": ambppl.amb_modified, "amb_old": ambppl.amb_old}


@pytest.mark.parametrize("counts", [TWO_CLASSES, CS_FIRST], ids=["no_cs", "cs_first"])
def test_the_measures_of_the_fits_q_are_its_own(counts, tmp_path):
    result = ambppl.fit(counts, draws=100, chains=2, random_seed=1)
    q = result["posterior"]["q"]
    for name, measure in MEASURES.items():
        np.testing.assert_allclose(measure(q), result["posterior"][name], rtol=0, atol=1e-14)
    # by position, as before: the last category taken for can't-solve gives other values
    assert not np.allclose(ambppl.amb(q.values), result["posterior"]["amb"])
    path = tmp_path / "fit.nc"
    result.to_netcdf(path)
    with xr.open_datatree(path) as stored:
        np.testing.assert_allclose(
            ambppl.amb(stored["posterior"]["q"]), result["posterior"]["amb"], atol=1e-14
        )


def test_a_rater_models_q_and_confusion_rows_carry_it():
    rng = np.random.default_rng(1)
    rows = [
        (f"i{i}", f"r{r}", rng.choice(["cs", "a", "b"], p=[0.2, 0.5, 0.3]))
        for i in range(30)
        for r in range(4)
    ]
    frame = pd.DataFrame(rows, columns=["item", "rater", "label"])
    answers = read_long(frame, item="item", rater="rater", cant_solve="cs")
    result = ambppl.fit(answers, "dawid_skene", method="map")
    posterior = result["posterior"]
    np.testing.assert_allclose(ambppl.amb(posterior["q"]), posterior["amb"], atol=1e-14)
    confusion = posterior["confusion"]
    assert confusion.attrs["cant_solve"] == "cs"
    cs = list(confusion["category"].values).index("cs")
    by_hand = ambppl.amb(confusion.values, cant_solve=cs)
    np.testing.assert_allclose(ambppl.amb(confusion), by_hand, atol=1e-14)
