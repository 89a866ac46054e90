"""Tests of ambppl.report.plots (the paper's posterior figure)."""

from __future__ import annotations

import numpy as np
import pytest

from ambppl.report.plots import plot_posterior_comparison


def test_posterior_comparison_has_nine_panels_with_finite_curves():
    from matplotlib.figure import Figure

    fig = plot_posterior_comparison(n_points=60)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 9
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if ln.get_label() == "exact density"]
        assert len(lines) == 1
        y = np.asarray(lines[0].get_ydata())
        assert y.shape == (60,) and np.all(np.isfinite(y)) and np.all(y >= 0)
        assert any(ln.get_label() == "mean" for ln in ax.get_lines())
    titles = [ax.get_title() for ax in fig.axes[:3]]
    assert titles[1] == "amb" and "old" in titles[0]


def test_sampled_overlay_is_optional():
    fig = plot_posterior_comparison(
        counts=[(5, 0, 0)], n_points=30, sampled_old=True, n_draws=2000, n_repeats=3
    )
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert "sampled median" in labels and len(fig.axes) == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"counts": [(5, 0)]}, r"counts must be a sequence of \(n_\+, n_-, n_cs\) triples"),
        ({"counts": [(5, -1, 0)]}, "counts must be non-negative"),
        ({"prior": 0.0}, "prior must be a positive finite number"),
        ({"n_points": 0}, "n_points must be a positive integer"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot_posterior_comparison(**kwargs)
