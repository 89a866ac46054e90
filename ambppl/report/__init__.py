"""The HTML diagnostics report of a fit: a Jinja2 template, the figures, the writer.

``render_report(result, ...)`` returns one self-contained HTML page of a fit;
``score_report(data, ...)`` the same page for ``dirichlet_categorical`` without per-item
draws (distinct count vectors); ``build_report(data, model, ...)`` the page of annotations
already read, by the route that fits (one of those two), which ``ambppl report`` writes to
a file. The page renders
what public functions computed (:func:`ambppl.summarize`, :func:`ambppl.prior_sensitivity`,
:func:`ambppl.validation.check_moments`, :func:`ambppl.validation.check_density`, ...).

Each of its figures is a public function of :mod:`ambppl.report.figures` that returns a
:class:`matplotlib.figure.Figure` for a notebook (``plot_answers_per_item``,
``plot_category_shares``, ``plot_ambiguity_histogram``, ``plot_zscores``,
``plot_item_ranks``, ``plot_parameter_ranks``, ``plot_energy``, ``plot_prior_sensitivity``,
``plot_implied_prior``, ``plot_shrinkage``); ``figure_to_data_uri`` embeds one in a page.
``plot_posterior_comparison`` draws the paper's posterior figure. Importing this package
imports neither matplotlib nor jinja2; the functions import them when they run.
"""

from ambppl.report.build import build_report
from ambppl.report.figures import (
    figure_to_data_uri,
    plot_ambiguity_histogram,
    plot_answers_per_item,
    plot_category_shares,
    plot_energy,
    plot_implied_prior,
    plot_item_ranks,
    plot_parameter_ranks,
    plot_prior_sensitivity,
    plot_shrinkage,
    plot_zscores,
)
from ambppl.report.plots import plot_posterior_comparison
from ambppl.report.scored import CHECK_VECTORS, score_report
from ambppl.report.writer import SENSITIVITY_PRIORS, TABLE_ROWS, render_report

__all__ = [
    "CHECK_VECTORS",
    "SENSITIVITY_PRIORS",
    "TABLE_ROWS",
    "build_report",
    "figure_to_data_uri",
    "plot_ambiguity_histogram",
    "plot_answers_per_item",
    "plot_category_shares",
    "plot_energy",
    "plot_implied_prior",
    "plot_item_ranks",
    "plot_parameter_ranks",
    "plot_posterior_comparison",
    "plot_prior_sensitivity",
    "plot_shrinkage",
    "plot_zscores",
    "render_report",
    "score_report",
]
