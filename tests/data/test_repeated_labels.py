"""``as_counts`` refuses counts whose item or category labels repeat (or print the same).

Before, it copied the coordinates as they were: a DataArray with categories
``["a", "cs", "cs"]`` and ``attrs["cant_solve"] = "cs"`` was fitted with the first ``cs``
column as can't-solve and the second as a class (``cant_solve_position`` takes the first
match), and repeated item labels gave rows that no output tells apart. The readers already
refuse repeated ids; ``as_counts`` is where counts built by hand enter ``fit``, ``plan``,
``prior_sensitivity`` and scoring.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.analysis.planning import plan
from ambppl.data.contract import as_counts


def _counts(values, **coords):
    return xr.DataArray(np.array(values), dims=("item", "category"), coords=coords)


def test_repeated_can_t_solve_label_is_refused_by_fit():
    counts = _counts([[0, 5, 1]], category=["a", "cs", "cs"])
    counts.attrs["cant_solve"] = "cs"
    message = (
        r"^data must have distinct category labels \(one column of counts per category\), "
        r"but the label 'cs' occurs more than once among \['a', 'cs', 'cs'\]; sum the "
        r"columns of each label into one \(data\.groupby\('category'\)\.sum\(\)\)"
    )
    with pytest.raises(ValueError, match=message):
        ambppl.fit(counts, draws=50, chains=1, random_seed=0)
    with pytest.raises(ValueError, match=message):
        as_counts(counts)
    # the fix the message gives: one cs column with both columns' answers
    summed = as_counts(counts.groupby("category").sum())
    assert summed["category"].values.tolist() == ["a", "cs"]
    assert summed.values.tolist() == [[0, 6]]


def test_repeated_category_labels_are_refused_naming_the_argument():
    counts = _counts([[1, 2, 3, 4], [0, 1, 0, 1]], category=["x", "y", "x", "y"])
    with pytest.raises(
        ValueError,
        match=r"^counts must have distinct category labels.*"
        r"the labels \['x', 'y'\] occur more than once",
    ):
        as_counts(counts, "counts")
    with pytest.raises(ValueError, match=r"^counts must have distinct category labels"):
        plan(counts, 3)


def test_repeated_item_labels_are_refused():
    counts = _counts([[1, 2], [3, 4], [5, 6]], item=["u", "v", "u"], category=["a", "b"])
    with pytest.raises(
        ValueError,
        match=r"^data must have distinct item labels \(one row of "
        r"counts per item\), but the label 'u' occurs more than once; sum the "
        r"rows of each item into one \(data\.groupby\('item'\)\.sum\(\)\), or "
        r"give the item rows distinct labels$",
    ):
        as_counts(counts)


@pytest.mark.parametrize("dim", ["item", "category"])
def test_labels_that_print_the_same_are_refused(dim):
    # 1 and "1": two values, one label in every table and in cant_solve's lookup (by text)
    labels = np.array([1, "1"], dtype=object)
    other = "category" if dim == "item" else "item"
    counts = _counts([[1, 2], [3, 4]], **{dim: labels, other: ["p", "q"]})
    with pytest.raises(
        ValueError,
        match=rf"^data must have distinct {dim} labels.*the labels "
        r"\[1, '1'\] print the same \(compared as text\)",
    ):
        as_counts(counts)


def test_distinct_labels_and_unlabelled_dims_pass():
    labelled = _counts([[1, 2, 0], [3, 4, 1]], item=[10, 11], category=["a", "b", "cs"])
    labelled.attrs["cant_solve"] = "cs"
    out = as_counts(labelled)
    assert out["category"].values.tolist() == ["a", "b", "cs"]
    assert out["item"].values.tolist() == [10, 11]
    # distinct labels of two types (1 and "2") print differently: kept, as text (one type
    # per coordinate, as the readers give them; tests/inference/test_mixed_ids.py)
    mixed = _counts([[1, 2]], category=np.array([1, "2"], dtype=object))
    assert as_counts(mixed)["category"].values.tolist() == ["1", "2"]
    unlabelled = as_counts(_counts([[1, 2], [2, 2], [3, 1]]))  # positions as labels
    assert unlabelled["item"].values.tolist() == [0, 1, 2]
    assert unlabelled["category"].values.tolist() == [0, 1]
    bare = as_counts(np.array([[1, 2], [2, 2], [3, 1]]))  # read by read_annotations
    assert bare.values.tolist() == [[1, 2], [2, 2], [3, 1]]
