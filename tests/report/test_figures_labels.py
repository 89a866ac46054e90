"""``ambppl.report.figures.plot_category_shares``: a labelled ``shares`` is read by its
labels (put in the order of ``labels``), or refused; arrays by position.

The reference is the same call with the shares put in the order of ``labels`` by hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from ambppl.report.figures import MAX_BARS, plot_category_shares

LABELS = ["x", "y", "cs"]
IN_ORDER = [0.6, 0.3, 0.1]
BY_LABEL = pd.Series({"cs": 0.1, "x": 0.6, "y": 0.3})


def _bars(fig) -> tuple[list[str], list[float]]:
    """The tick labels and bar widths of a share chart, top to bottom."""
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    widths = [float(p.get_width()) for p in ax.patches]
    return ticks, widths


@pytest.mark.parametrize(
    "shares",
    [BY_LABEL, xr.DataArray(BY_LABEL.rename_axis("category")), xr.DataArray(BY_LABEL)],
    ids=["Series", "DataArray", "DataArray-dim_0"],
)
def test_labelled_shares_are_drawn_by_label(shares):
    by_hand = _bars(plot_category_shares(LABELS, IN_ORDER, "cs"))
    assert by_hand == (LABELS, IN_ORDER)
    assert _bars(plot_category_shares(LABELS, shares, "cs")) == by_hand
    # the old by-position reading drew the x bar at the can't-solve share
    assert _bars(plot_category_shares(LABELS, BY_LABEL.to_numpy(), "cs"))[1][0] == 0.1


def test_labels_are_compared_as_text():
    shares = pd.Series({2: 0.1, 0: 0.6, 1: 0.3})
    assert _bars(plot_category_shares(["0", "1", "2"], shares, None))[1] == IN_ORDER


def test_arrays_are_read_by_position():
    for shares in (np.array(IN_ORDER), xr.DataArray(IN_ORDER, dims="category")):
        assert _bars(plot_category_shares(LABELS, shares, "cs"))[1] == IN_ORDER


def test_labelled_shares_past_max_bars_are_grouped_by_label():
    labels = [f"c{j}" for j in range(MAX_BARS + 4)]
    shares = np.arange(1, len(labels) + 1, dtype=float)
    shares /= shares.sum()
    reverse = pd.Series(shares[::-1], index=labels[::-1])
    by_hand = _bars(plot_category_shares(labels, shares, None))
    assert _bars(plot_category_shares(labels, reverse, None)) == by_hand
    assert _bars(plot_category_shares(labels, reverse.to_numpy(), None)) != by_hand


@pytest.mark.parametrize(
    ("labels", "shares", "match"),
    [
        (
            LABELS,
            pd.Series({"cs": 0.1, "x": 0.6, "q": 0.3}),
            r"shares must be labelled by the categories of labels \['x', 'y', 'cs'\], but got "
            r"a Series whose labels lack \['y'\] and have \['q'\], which labels lack; .*pass "
            r"shares\.values in the order of labels",
        ),
        (
            LABELS,
            pd.Series([0.6, 0.3, 0.1]),
            r"shares must be labelled by the categories of labels .*lack \['x', 'y', 'cs'\]",
        ),
        (
            LABELS,
            pd.Series([0.6, 0.3, 0.1], index=["x", "y", "x"]),
            r"shares must name each category once .*\['x'\] occur more than once",
        ),
        (
            ["x", "x", "cs"],
            pd.Series({"cs": 0.1, "x": 0.6, "y": 0.3}),
            r"labels must name each category once to read shares by its labels",
        ),
    ],
    ids=["other-labels", "range-index", "shares-twice", "labels-twice"],
)
def test_shares_that_cannot_be_aligned_are_refused(labels, shares, match):
    with pytest.raises(ValueError, match=match):
        plot_category_shares(labels, shares, "cs")
