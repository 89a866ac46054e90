"""Ids of mixed Python types, from reading to every route of ``fit``.

A Python table may hold item ids of mixed types that print apart (item ``0`` beside item
``"x1"``; rater ``1`` beside rater ``"w2"``); the readers refuse only ids that print alike
(``1`` and ``"1"``). nutpie refused such a coordinate ("Coordinate item value has
unsupported type ... Array item is not a string"), so every NUTS fit of them crashed, and
``summarize`` and netCDF fail on an object coordinate of two types. The readers now give
such ids as text (:func:`ambppl.data.matrices.ids_of_one_type`), as a file's column would be
read: ``"0"`` and ``"x1"``; ids of one type are kept as they are.

The answer labels are integers (``1``, ``2``) beside the string can't-solve label ``"?"``.
The fits are tiny (one chain of 30 draws after 30 tuning steps): the tests check ids, not the
posterior, so the convergence warnings of such short chains are ignored.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.data import read_long
from ambppl.data.matrices import ids_of_one_type
from ambppl.inference.modeling import answer_codes

#: Item ids: integers and one string, which print apart.
ITEMS = [*range(12), "x1"]
#: Rater ids: integers and one string.
RATERS = [0, 1, "w2", 3]
#: Answer labels: integers beside the string can't-solve label.
LABELS = [1, 2, "?"]
#: What the readers give for them: text, as a file's column is read.
ITEM_TEXTS = [str(i) for i in ITEMS]
RATER_TEXTS = [str(r) for r in RATERS]

TINY = {"draws": 30, "chains": 1, "random_seed": 5}
TUNE = {"tune": 30}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Every rater answers every item, labels drawn at random (seeded)."""
    rng = np.random.default_rng(20240611)
    rows = [
        {"task": item, "worker": rater, "label": LABELS[int(rng.integers(len(LABELS)))]}
        for item in ITEMS
        for rater in RATERS
    ]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def counts(frame: pd.DataFrame) -> xr.DataArray:
    return ambppl.read_annotations(frame, cant_solve="?")


@pytest.fixture(scope="module")
def answers(frame: pd.DataFrame) -> pd.DataFrame:
    return read_long(frame, cant_solve="?")


def _fit(data, model: str, **kwargs) -> xr.DataTree:
    with warnings.catch_warnings():  # 30 draws: too few for the convergence standard
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.fit(data, model, **kwargs)


def test_ids_of_one_type_gives_mixed_ids_as_text_and_keeps_one_type():
    assert ids_of_one_type([0, 1, "x1"]).tolist() == ["0", "1", "x1"]
    assert ids_of_one_type(np.array([0, "x1", None], dtype=object)).tolist() == ["0", "x1", None]
    for ids in (["a", "b"], [3, 1], [0.5, 2.0], [True, False]):
        kept = ids_of_one_type(ids).tolist()
        assert kept == ids and [type(v) for v in kept] == [type(v) for v in ids]


def test_the_readers_give_mixed_ids_as_text(counts, answers, frame):
    assert counts["item"].values.tolist() == ITEM_TEXTS
    assert counts["category"].values.tolist() == ["1", "2", "?"]
    assert answers["item"].drop_duplicates().tolist() == ITEM_TEXTS
    assert answers["rater"].drop_duplicates().tolist() == RATER_TEXTS
    # the counts are those of the frame, item by item
    want = pd.crosstab(frame["task"].astype(str), frame["label"].astype(str))
    np.testing.assert_array_equal(counts.values, want.loc[ITEM_TEXTS, ["1", "2", "?"]].values)
    # ids of one type stay as they are
    ints = read_long(frame[frame["task"] != "x1"].astype({"task": int}), cant_solve="?")
    assert ints["item"].drop_duplicates().tolist() == list(range(12))


def test_a_count_matrix_with_mixed_ids_reads_them_as_text():
    table = pd.DataFrame([[1, 2], [3, 0]], index=pd.Index([0, "x1"], dtype=object))
    table.columns = ["a", "b"]
    got = ambppl.read_annotations(table, cant_solve=None, format="counts")
    assert got["item"].values.tolist() == ["0", "x1"]


def test_answer_codes_gives_a_hand_made_tables_mixed_ids_as_text(answers):
    table = answers.copy()
    table["item"] = table["item"].map(dict(zip(ITEM_TEXTS, ITEMS, strict=True)))
    table["rater"] = table["rater"].map(dict(zip(RATER_TEXTS, RATERS, strict=True)))
    codes = answer_codes(table, "dawid_skene")
    assert codes["item_ids"] == ITEM_TEXTS and codes["rater_ids"] == RATER_TEXTS


def test_summaries_and_netcdf_take_mixed_ids(counts, tmp_path: Path):
    # an object coordinate of two types failed in az.hdi (np.unique) and in netCDF
    result = _fit(counts, "dirichlet_categorical", **TINY)
    table = ambppl.summarize(result)
    assert table.index.tolist() == ITEM_TEXTS
    result.to_netcdf(tmp_path / "fit.nc")
    back = xr.open_datatree(tmp_path / "fit.nc")
    assert back["posterior"]["item"].values.tolist() == ITEM_TEXTS
    back.close()


# The ids are text before any route sees them, so one route per way the data reach a
# program suffices: counts (PyMC's own NUTS here; nutpie on counts in the test below) and
# answers with raters (nutpie, the mode and Laplace); the other models build their
# coordinates as these do (model_coords, answer_codes).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "method", "sampler"),
    [
        ("dirichlet_categorical", "nuts", "pymc"),
        ("dawid_skene", None, None),  # its default: nuts with nutpie
        ("dawid_skene", "map", None),
        ("dawid_skene", "laplace", None),
    ],
)
def test_every_route_fits_mixed_ids(model, method, sampler, counts, answers):
    long = model in ("rater_effects", "dawid_skene")
    kwargs = {"method": method, "random_seed": 5}
    if method != "map":
        kwargs |= {"draws": 30, "chains": 1}
    if method != "map" and method != "laplace":
        kwargs["sample_kwargs"] = TUNE
    if sampler is not None:
        kwargs["sampler"] = sampler
    result = _fit(answers if long else counts, model, **kwargs)
    posterior = result["posterior"]
    assert posterior["item"].values.tolist() == ITEM_TEXTS
    if long:
        assert posterior["rater"].values.tolist() == RATER_TEXTS
    observed = result["observed_data"]
    if "counts" in observed:
        np.testing.assert_array_equal(observed["counts"].values, counts.values)
    table = ambppl.summarize(result)
    assert table.index.tolist() == ITEM_TEXTS


def test_a_hand_made_data_array_of_mixed_labels_is_given_as_text(tmp_path: Path):
    from ambppl.data import as_counts

    made = xr.DataArray(
        [[3, 1, 1], [0, 4, 1]],
        dims=("item", "category"),
        coords={
            "item": np.array([0, "x1"], dtype=object),
            "category": np.array([1, 2, "?"], dtype=object),
        },
        attrs={"cant_solve": "?"},
    )
    counts = as_counts(made)
    assert counts["item"].values.tolist() == ["0", "x1"]
    assert counts["category"].values.tolist() == ["1", "2", "?"]
    assert counts.attrs["cant_solve"] == "?"
    # a can't-solve label of the other type follows its category into text
    counts = as_counts(made.assign_attrs(cant_solve=2))
    assert counts.attrs["cant_solve"] == "2"
    np.testing.assert_array_equal(counts.values, made.values)
    result = _fit(made, "dirichlet_categorical", **TINY)
    assert ambppl.summarize(result).index.tolist() == ["0", "x1"]
    result.to_netcdf(tmp_path / "made.nc")


@pytest.mark.slow
def test_a_hand_made_data_array_of_mixed_ids_fits_with_nuts():
    made = xr.DataArray(
        [[3, 1, 1], [0, 4, 1]],
        dims=("item", "category"),
        coords={"item": np.array([0, "x1"], dtype=object), "category": ["a", "b", "?"]},
        attrs={"cant_solve": "?"},
    )
    result = _fit(made, "dirichlet_categorical", method="nuts", sample_kwargs=TUNE, **TINY)
    assert result["posterior"]["item"].values.tolist() == ["0", "x1"]
