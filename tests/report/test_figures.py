"""Tests of the figures of ambppl.report: the paper's posterior figure (plots) and the
report's figures (figures)."""

from __future__ import annotations

import numpy as np
import pytest

from ambppl.report import figures
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


# ---------------------------------------------------- the report's figures (ambppl.report)


def _prior_table():
    """A table shaped as ambppl.prior_sensitivity returns it (two items, two priors)."""
    import pandas as pd

    stats = {"mean": [0.5, 0.2], "hdi_lower": [0.4, 0.1], "hdi_upper": [0.6, 0.3]}
    table = pd.concat(
        {
            "beta=0.5": pd.DataFrame(stats, index=pd.Index(["a", "b"], name="item")),
            "beta=2": pd.DataFrame(stats, index=pd.Index(["a", "b"], name="item")) + 0.05,
        },
        axis=1,
        names=["prior", "statistic"],
    )
    table.attrs = {"measure": "amb", "hdi_prob": 0.9, "learned": {}}
    return table


def _report_figures():
    """Each public figure function of ambppl.report with small arguments."""
    from ambppl.report import figures

    rng = np.random.default_rng(0)
    return {
        "plot_answers_per_item": lambda: figures.plot_answers_per_item([3, 3, 4, 7]),
        "plot_category_shares": lambda: figures.plot_category_shares(
            ["a", "b", "?"], [0.5, 0.3, 0.2], "?"
        ),
        "plot_ambiguity_histogram": lambda: figures.plot_ambiguity_histogram(
            rng.random(20), rng.random(20), "amb", 0.4
        ),
        "plot_zscores": lambda: figures.plot_zscores(rng.normal(size=30)),
        "plot_item_ranks": lambda: figures.plot_item_ranks(
            rng.normal(size=(2, 2, 40)), ["a", "b"], [1.0, 1.02]
        ),
        "plot_parameter_ranks": lambda: figures.plot_parameter_ranks(
            {"kappa": rng.normal(size=(2, 40)), "mu[a]": rng.normal(size=(2, 40))}
        ),
        "plot_energy": lambda: figures.plot_energy(rng.normal(size=(2, 50)), [0.9, 1.1]),
        "plot_prior_sensitivity": lambda: figures.plot_prior_sensitivity(_prior_table()),
        "plot_implied_prior": lambda: figures.plot_implied_prior(
            {"learned": rng.random(50), "flat": rng.random(50)}, "amb"
        ),
        "plot_shrinkage": lambda: figures.plot_shrinkage(rng.random(10), rng.random(10), "amb"),
    }


def test_report_exports_every_figure_function():
    import ambppl.report
    from ambppl.report import figures

    for name in _report_figures():
        assert name in ambppl.report.__all__ and name in figures.__all__
        assert getattr(ambppl.report, name) is getattr(figures, name)
        assert f":func:`{name}`" in figures.__doc__  # listed in the module docstring
    assert "figure_to_data_uri" in ambppl.report.__all__
    assert all(getattr(ambppl.report, name) is not None for name in ambppl.report.__all__)


@pytest.mark.parametrize("name", list(_report_figures()))
def test_report_figures_are_figures_outside_pyplot(name):
    """Each figure function returns a matplotlib Figure that a notebook shows, registered
    with no pyplot figure manager (no global state, no GUI); figure_to_data_uri embeds it."""
    import base64

    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from ambppl.report.figures import figure_to_data_uri

    before = plt.get_fignums()
    fig = _report_figures()[name]()
    assert isinstance(fig, Figure) and fig.axes
    assert fig.canvas.manager is None and plt.get_fignums() == before
    uri = figure_to_data_uri(fig)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", list(_report_figures()))
def test_report_figures_draw_on_a_slow_machine_without_a_warning(name, slow_legend_clock):
    """Each legend names its location (figures.LEGEND_LOC): on a loaded machine matplotlib
    would warn for the default one (the CI run of 2026-11-29 failed on plot_zscores so)."""
    from ambppl.report.figures import figure_to_data_uri

    assert figure_to_data_uri(_report_figures()[name]()).startswith("data:image/png;base64,")


def test_figure_to_data_uri_closes_a_pyplot_figure():
    import matplotlib.pyplot as plt

    from ambppl.report.figures import figure_to_data_uri

    fig = plt.figure(figsize=(1, 1))
    assert fig.number in plt.get_fignums()
    assert figure_to_data_uri(fig).startswith("data:image/png;base64,")
    assert fig.number not in plt.get_fignums()


def test_plot_prior_sensitivity_draws_the_public_table():
    """One interval per item and prior from the table of ambppl.prior_sensitivity, the
    legend its prior labels (or the labels given)."""
    from ambppl.report.figures import plot_prior_sensitivity

    table = _prior_table()
    fig = plot_prior_sensitivity(table)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["beta=0.5", "beta=2"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert ax.get_xlabel() == "amb: posterior mean and HDI"
    means = [np.asarray(line.get_xdata()) for line in ax.get_lines()[:2]]
    assert np.allclose(means[0], [0.5, 0.2]) and np.allclose(means[1], [0.55, 0.25])
    fig = plot_prior_sensitivity(table, measure="entropy", labels=["β = 0.5", "β = 2"])
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["β = 0.5", "β = 2"] and fig.axes[0].get_xlabel().startswith("entropy")
    with pytest.raises(ValueError, match="labels must name each of the table's 2 priors"):
        plot_prior_sensitivity(table, labels=["one"])
    with pytest.raises(ValueError, match=r"lacks \('beta=0.5', 'hdi_lower'\)"):
        plot_prior_sensitivity(table.drop(columns=[("beta=0.5", "hdi_lower")]))


def test_plot_prior_sensitivity_takes_a_mean_outside_its_hdi():
    # a short HDI of a skewed posterior need not hold the mean (--hdi-prob 0.5 with the
    # modified measure crashed the report: matplotlib refuses negative error bars)
    from ambppl.report.figures import plot_prior_sensitivity

    table = _prior_table()
    table[("beta=2", "mean")] = [0.7, 0.05]  # above one HDI, below the other
    ax = plot_prior_sensitivity(table).axes[0]
    ends = np.concatenate([c.get_segments() for c in ax.collections])[:, :, 0]
    np.testing.assert_allclose(ends, [[0.4, 0.6], [0.1, 0.3], [0.45, 0.65], [0.15, 0.35]])


def test_plot_parameter_ranks_takes_any_name():
    # a category label with "/" (the example's "Neutral / author is just sharing ...")
    # crashed DataTree; two names alike in their first 40 characters must stay two panels
    from ambppl.report.figures import plot_parameter_ranks

    rng = np.random.default_rng(1)
    long = "sigma_item[Neutral / author is just sharing information"
    draws = {f"{long} {k}]": rng.normal(size=(2, 50)) for k in range(2)} | {
        "kappa": rng.normal(size=(2, 50))
    }
    fig = plot_parameter_ranks(draws)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == 3 and all("/" not in t for t in titles), titles


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: figures.plot_answers_per_item([]), ValueError, r"n_answers must be a 1-D"),
        (
            lambda: figures.plot_answers_per_item([3, -1]),
            ValueError,
            r"whole numbers >= 0 .*, but got \[-1",
        ),
        (lambda: figures.plot_answers_per_item([2.5]), ValueError, r"whole numbers >= 0"),
        (
            lambda: figures.plot_answers_per_item("abc"),
            TypeError,
            r"n_answers must be array-like of numbers",
        ),
        (
            lambda: figures.plot_category_shares(["a", "b"], [0.5, 0.3, 0.2], None),
            ValueError,
            r"labels and shares must have one entry per category each, but got 2 and 3",
        ),
        (
            lambda: figures.plot_shrinkage(np.ones(3), np.ones(2), "amb"),
            ValueError,
            r"flat and learned must have one entry per item each, but got 3 and 2",
        ),
        (lambda: figures.plot_energy(np.ones(10), [0.5]), ValueError, r"energy must be an array"),
        (lambda: figures.plot_parameter_ranks({}), ValueError, r"draws must be a non-empty"),
        (
            lambda: figures.plot_parameter_ranks({"a": np.ones((2, 5)), "b": np.ones((2, 6))}),
            ValueError,
            r"draws must all have one shape",
        ),
        (
            lambda: figures.plot_item_ranks(np.ones((4, 50)), ["a"], [1.0]),
            ValueError,
            r"draws must be an array of shape \(n_items, chains, draws\)",
        ),
        (
            lambda: figures.plot_item_ranks(np.ones((2, 2, 50)), ["a"], [1.0, 1.0]),
            ValueError,
            r"items and draws must have one entry per item each, but got 1 and 2",
        ),
        (lambda: figures.figure_to_data_uri(None), TypeError, r"fig must be a matplotlib"),
        (lambda: figures.plot_prior_sensitivity(None), TypeError, r"table must be a table of"),
    ],
)
def test_wrong_inputs_are_refused_by_name(call, error, match):
    """Each figure function names the argument it cannot draw (they failed inside numpy or
    matplotlib, or drew negative counts)."""
    with pytest.raises(error, match=match):
        call()
