"""Rater ids that are different values printing the same (``1`` and ``"1"``) are refused by
the readers, as item ids are: they would become raters that no output tells apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ambppl
from ambppl.data import read_annotations, read_long

MIXED = "rater ids must print differently"


def mixed_rater_frame() -> pd.DataFrame:
    """Raters ``"1"`` and ``1``, ``"2"`` and ``2``: four values, two printed ids."""
    return pd.DataFrame(
        {
            "task": [1, 1, 2, 2, 3, 3, 4, 4],
            "worker": ["1", 1, "2", 2, "a", "b", "1", 2],
            "label": ["x", "x", "y", "y", "x", "y", "x", "y"],
        }
    )


def test_read_long_refuses_rater_ids_that_print_the_same():
    with pytest.raises(ValueError, match=MIXED) as err:
        read_long(mixed_rater_frame())
    message = str(err.value)
    assert "rater column 'worker'" in message
    assert "['1', 1]" in message and "['2', 2]" in message
    assert "frame['worker'].astype(str)" in message and "one rater" in message


def test_read_annotations_refuses_rater_ids_that_print_the_same():
    # the counts keep n_raters, which 1 and "1" would overstate
    with pytest.raises(ValueError, match=MIXED):
        read_annotations(mixed_rater_frame())


def test_the_suggested_fix_reads_one_rater_per_printed_id():
    frame = mixed_rater_frame()
    frame["worker"] = frame["worker"].astype(str)
    answers = read_long(frame)
    assert answers.attrs["n_raters"] == 4  # "1", "2", "a", "b"


def test_ids_of_two_types_that_print_apart_are_kept_as_text():
    # mixed types alone are no fault: 1 and "a" print differently, and are given as text
    # (one type per coordinate, as samplers and netCDF need; tests/inference/test_mixed_ids.py)
    frame = pd.DataFrame(
        {"task": [1, 1, 2, 2], "worker": [1, "a", 2, "a"], "label": ["x", "y", "x", "x"]}
    )
    answers = read_long(frame)
    assert answers.attrs["n_raters"] == 3
    assert answers["rater"].tolist() == ["1", "a", "2", "a"]


def test_a_wide_header_of_rater_names_that_print_the_same_is_refused():
    frame = pd.DataFrame({"task": [1, 2], 1: ["x", "y"], "1": ["x", "x"], "b": ["y", "y"]})
    with pytest.raises(ValueError, match=MIXED) as err:
        read_long(frame, format="wide")
    assert "header" in str(err.value) and "frame.columns.astype(str)" in str(err.value)
    with pytest.raises(ValueError, match=MIXED):
        read_annotations(frame, format="wide")


@pytest.mark.parametrize(("model", "method"), [("dawid_skene", "map"), ("rater_effects", "nuts")])
def test_fit_refuses_a_frame_whose_rater_ids_print_the_same(model, method):
    small = {"draws": 30, "chains": 1} if method == "nuts" else {}  # refused before sampling
    # the raw frame (read by fit with read_long's defaults) ...
    with pytest.raises(ValueError, match=MIXED):
        ambppl.fit(mixed_rater_frame(), model, method=method, **small)
    # ... and an answers table edited by hand after reading
    frame = mixed_rater_frame()
    answers = read_long(frame.assign(worker=frame["worker"].astype(str)))
    answers["rater"] = np.array(frame["worker"].tolist(), dtype=object)
    with pytest.raises(ValueError, match=MIXED):
        ambppl.fit(answers, model, method=method, **small)
