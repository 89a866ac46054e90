"""The paper's posterior figure: exact densities of the three measures for C = 2.

matplotlib is imported inside the function and only the object-oriented API
(:class:`matplotlib.figure.Figure`) is used, so no global pyplot state or GUI backend is
touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ambppl.internal.checks import check_counts, check_positive_int, check_positive_scalar
from ambppl.maths.exact import ambiguity_posterior
from ambppl.maths.measures import amb_old

__all__ = ["plot_posterior_comparison"]

#: Column order of the paper's figure: literature baseline, proposed measure, modified.
COLUMNS = (("old", "amb$_0$ (old)"), ("amb", "amb"), ("modified", r"$\widetilde{\mathrm{amb}}$"))


def plot_posterior_comparison(
    counts: Sequence[Sequence[int]] = ((5, 5, 5), (5, 0, 0), (30, 0, 0)),
    prior: float = 1.0,
    *,
    n_points: int = 400,
    sampled_old: bool = False,
    n_draws: int = 100_000,
    n_repeats: int = 100,
    random_seed: int = 0,
    figsize: tuple[float, float] | None = None,
) -> Any:
    r"""Posterior densities of old, amb and modified ambiguity for two-class count vectors.

    Parameters
    ----------
    counts : sequence of ``(n_+, n_-, n_cs)``
        One row of panels per count vector ("can't solve" last).
    prior : float, default 1.0
        Symmetric Dirichlet prior ``beta``; the posterior is ``Dirichlet(counts + beta)``.
    n_points : int, default 400
        Points of the density curves (equally spaced inside (0, 1)).
    sampled_old : bool, default False
        Also draw the paper's Monte Carlo estimate of the old measure's density (median and
        interquartile range over ``n_repeats`` histograms of ``n_draws`` draws, 256 bins).
        The exact curve is drawn either way.
    n_draws, n_repeats, random_seed : int
        Settings of that overlay.
    figsize : (width, height), optional
        Figure size in inches (default ``(11, 2.8 * rows)``).

    Returns
    -------
    matplotlib.figure.Figure
        ``rows x 3`` axes; columns old / amb / modified. Each panel shows the exact density
        (solid), the closed-form mean (dashed) and mean +- 1 sd (hatched band).

    Raises
    ------
    ValueError
        If a count vector does not have 3 non-negative whole entries, or ``prior``,
        ``n_points``, ``n_draws`` or ``n_repeats`` is not positive.

    Notes
    -----
    Paper figure ``all_posterior_comparison`` (section 3.5), with the densities computed by
    :func:`ambppl.ambiguity_posterior` instead of adaptive Simpson (:errata:`E6`) and the old
    measure exact as well (:errata:`E7`). The means and variances of amb and the modified
    measure are the paper's closed forms (eqs. ``expr_amb_final``, ``expr_amb_var_final`` and
    ``var_amb_tilde``, which uses the covariance ``expr_amb_mod_var``; :errata:`E9`); the old
    measure's mean and variance come from its Beta marginals (:errata:`E7`).

    References
    ----------
    .. [1] Klugmann and Kondermann, "Quantifying Ambiguity in Categorical Annotations", section 3.5.

    Examples
    --------
    >>> from ambppl.report.plots import plot_posterior_comparison
    >>> fig = plot_posterior_comparison(counts=[(5, 0, 0)], n_points=40)
    >>> len(fig.axes)
    3
    """
    from matplotlib.figure import Figure

    rows = check_counts(np.asarray(counts))
    if rows.ndim != 2 or rows.shape[1] != 3:
        raise ValueError(
            "counts must be a sequence of (n_+, n_-, n_cs) triples, but got shape "
            f"{np.shape(counts)}"
        )
    prior = check_positive_scalar(prior, "prior")
    n_points = check_positive_int(n_points, "n_points")
    n_draws = check_positive_int(n_draws, "n_draws")
    n_repeats = check_positive_int(n_repeats, "n_repeats")
    x = np.linspace(0.0, 1.0, n_points + 2)[1:-1]
    fig = Figure(figsize=figsize or (11.0, 2.8 * rows.shape[0]), layout="constrained")
    axes = fig.subplots(rows.shape[0], 3, squeeze=False)
    rng = np.random.default_rng(random_seed)
    for i, row in enumerate(rows):
        alpha = row + prior
        for j, (measure, title) in enumerate(COLUMNS):
            ax = axes[i, j]
            post = ambiguity_posterior(alpha, measure)
            dens = np.asarray(post.pdf(x))
            mean, sd = float(post.mean()), float(post.std())
            ax.axvspan(
                max(mean - sd, 0.0),
                min(mean + sd, 1.0),
                facecolor="none",
                edgecolor="tab:blue",
                hatch="///",
                linewidth=0.0,
                label="mean ± 1 sd",
            )
            ax.axvline(mean, color="k", linestyle="--", linewidth=1.0, label="mean")
            if measure == "old" and sampled_old:
                _sampled_overlay(ax, alpha, n_draws, n_repeats, rng)
            ax.plot(x, dens, color="tab:red" if measure == "old" else "k", label="exact density")
            finite = dens[np.isfinite(dens) & (x < 0.98)]
            top = 1.1 * float(finite.max()) if finite.size else 1.0
            ax.set_xlim(0.0, 1.0)
            ax.set_ylim(0.0, top if top > 0 else 1.0)
            if i == 0:
                ax.set_title(title)
            if j == 0:
                ax.set_ylabel(f"n = {tuple(int(v) for v in row)}")
            if i == rows.shape[0] - 1:
                ax.set_xlabel("ambiguity")
    axes[0, -1].legend(loc="upper left", fontsize="small")
    return fig


def _sampled_overlay(ax: Any, alpha: np.ndarray, n_draws: int, n_repeats: int, rng: Any) -> None:
    """The paper's histogram estimate: median and IQR over repeated 256-bin histograms."""

    edges = np.linspace(0.0, 1.0, 257)
    hists = np.empty((n_repeats, 256))
    for r in range(n_repeats):
        hists[r] = np.histogram(amb_old(rng.dirichlet(alpha, n_draws)), edges, density=True)[0]
    lo, med, hi = np.percentile(hists, [25, 50, 75], axis=0)
    mid = 0.5 * (edges[1:] + edges[:-1])
    ax.fill_between(mid, lo, hi, color="tab:red", alpha=0.3, linewidth=0, label="sampled IQR")
    ax.plot(mid, med, color="tab:red", linewidth=0.8, alpha=0.6, label="sampled median")
