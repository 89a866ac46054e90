"""The report's figures as matplotlib ``Figure`` objects, and their embedding as PNG.

Each figure of the HTML report (:func:`ambppl.report.render_report`) is drawn by a public
function that returns a :class:`matplotlib.figure.Figure`, so a notebook shows the same
figure (a Jupyter cell displays a returned ``Figure``) or saves it with ``fig.savefig``:

======================================  ==================================================
:func:`plot_answers_per_item`           how many items have each number of answers
:func:`plot_category_shares`            share of all answers per category
:func:`plot_ambiguity_histogram`        posterior mean ambiguity per item, with plug-in
:func:`plot_zscores`                    z-scores of the draws against the closed forms
:func:`plot_item_ranks`                 rank plots of the items with the largest R-hat
:func:`plot_parameter_ranks`            rank plots of named parameters (ArviZ's)
:func:`plot_energy`                     NUTS energy plot with E-BFMI per chain
:func:`plot_prior_sensitivity`          a :func:`ambppl.prior_sensitivity` table drawn
:func:`plot_implied_prior`              prior law of the measure under several priors
:func:`plot_shrinkage`                  posterior means under two priors, item by item
======================================  ==================================================

:func:`figure_to_data_uri` turns a figure into the ``data:image/png;base64,...`` string
that the page's ``<img src=...>`` shows without any network access, and closes it.

The figures are made with :class:`matplotlib.figure.Figure` directly (the Agg canvas when
saved), never through ``pyplot``: no global state is touched, no figure is left registered
with pyplot and no GUI backend is needed. (:func:`plot_parameter_ranks` draws with
:func:`arviz_plots.plot_rank`, which goes through ``pyplot``; it takes the figure off
pyplot's figure manager before returning it.) User-supplied text (category labels, item
ids) is passed through :func:`plain` so that matplotlib never interprets it as mathtext.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import io
import re
import sys
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.internal.checks import as_float_array, show_values

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "DPI",
    "MAX_BARS",
    "figure_to_data_uri",
    "missing_glyphs",
    "missing_glyphs_message",
    "plain",
    "plot_ambiguity_histogram",
    "plot_answers_per_item",
    "plot_category_shares",
    "plot_energy",
    "plot_implied_prior",
    "plot_item_ranks",
    "plot_parameter_ranks",
    "plot_prior_sensitivity",
    "plot_shrinkage",
    "plot_zscores",
]

#: Resolution of the embedded PNGs (dots per inch).
DPI = 96
#: Where a legend goes: matplotlib's best free corner, *named*, because for the default
#: location matplotlib warns ("can be slow") whenever placing it took over a second of wall
#: clock, which a loaded machine reaches with any figure (a warning that comes and goes).
LEGEND_LOC = "best"

_BLUE = "#3b6ea8"
_ORANGE = "#d9822b"
_GREY = "#777777"


def visible(text: Any) -> str:
    """Return ``text`` with every control character written as its escape.

    Parameters
    ----------
    text : object
        A label, an id or a line of text; converted with :class:`str`.

    Returns
    -------
    str
        The text with each control character (Unicode category ``Cc``: a tab, a newline,
        ``\\x01``, ``\\x7f``) written as Python writes it in a string literal (``\\t``,
        ``\\n``, ``\\x01``), every other character as it is. The figures (:func:`plain`)
        and the report's HTML (where a raw control character is a parse error) show labels
        so.

    Examples
    --------
    >>> visible("a\\tb\\x01c")
    'a\\\\tb\\\\x01c'
    >>> visible("ja: 是")
    'ja: 是'
    """
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in str(text))


def plain(text: Any, limit: int = 40) -> str:
    """Return ``text`` as a string that matplotlib draws literally (no mathtext), shortened.

    Parameters
    ----------
    text : object
        A label or id; converted with :class:`str`.
    limit : int
        Longer strings are cut to ``limit`` characters, ending in an ellipsis.

    Returns
    -------
    str
        The text with every ``$`` escaped (matplotlib treats ``$...$`` as mathtext) and
        every control character (a tab, a newline, ``\x01``) written as its escape.

    Notes
    -----
    Escaping matters for robustness, not security: figures are PNG pixels, so no markup in a
    label can reach the HTML through them. Control characters have no glyph in any font.

    References
    ----------
    matplotlib, "Writing mathematical expressions" (text between ``$`` signs).

    Examples
    --------
    >>> plain("costs $5 or $6")
    'costs \\\\$5 or \\\\$6'
    >>> plain("x" * 50, limit=10)
    'xxxxxxxxx…'
    >>> plain("a\\tb\\x01")
    'a\\\\tb\\\\x01'
    """
    s = visible(text)
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("$", r"\$")


def _values(x: Any, name: str, ndim: int, what: str) -> np.ndarray:
    """``x`` as a float array of ``ndim`` dimensions with at least one value, or one clear
    error naming ``name`` (``what``: the shape in words)."""
    arr = as_float_array(x, name)  # TypeError for text, objects, complex numbers
    if arr.ndim != ndim or arr.size == 0:
        raise ValueError(
            f"{name} must be {what} with at least one value, but got shape {arr.shape}"
        )
    return arr


def _shares_by_label(shares: Any, labels: list[str]) -> Any:
    """``shares`` in the order of ``labels`` where it is labelled (a pandas Series indexed by
    category, a 1-D xarray DataArray with a coordinate), compared as text; anything else as
    it is, to be read by position. Refuses labels that differ from ``labels`` or occur twice.
    """
    cls = type(shares)
    if cls.__name__ == "Series" and cls.__module__.startswith("pandas"):
        own, values = list(shares.index), shares.to_numpy()
    elif cls.__name__ == "DataArray" and cls.__module__.startswith("xarray"):
        if shares.ndim != 1 or shares.dims[0] not in shares.indexes:
            return shares  # unlabelled (or not 1-D, which _values refuses): by position
        own, values = list(shares.indexes[shares.dims[0]]), shares.values
    else:
        return shares
    own = [str(v) for v in own]
    for whose, these in (("shares", own), ("labels", labels)):
        twice = sorted(v for v, n in Counter(these).items() if n > 1)
        if twice:
            raise ValueError(
                f"{whose} must name each category once to read shares by its labels, but "
                f"{show_values(twice)} occur more than once; pass shares.values in the order "
                "of labels instead"
            )
    if set(own) != set(labels):
        missing = [v for v in labels if v not in own]
        extra = [v for v in own if v not in labels]
        differ = " and ".join(
            [f"lack {show_values(missing)}"] * bool(missing)
            + [f"have {show_values(extra)}, which labels lack"] * bool(extra)
        )
        raise ValueError(
            f"shares must be labelled by the categories of labels {show_values(labels)}, but "
            f"got a {cls.__name__} whose labels {differ}; give shares those labels, or pass "
            "shares.values in the order of labels"
        )
    position = {v: j for j, v in enumerate(own)}  # one pass: thousands of labels (MAX_BARS)
    return np.asarray(values)[[position[v] for v in labels]]


def _same_length(a: Any, b: Any, names: str) -> None:
    if len(a) != len(b):
        raise ValueError(
            f"{names} must have one entry per item each, but got {len(a)} and {len(b)}"
        )


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def figure_to_data_uri(fig: Figure) -> str:
    """Render a matplotlib figure to a base64 PNG data URI and close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, e.g. from one of the ``plot_*`` functions of this module.

    Returns
    -------
    str
        ``"data:image/png;base64,..."``, which an ``<img src=...>`` shows offline.

    Notes
    -----
    Saved through :meth:`matplotlib.figure.Figure.savefig` with the Agg canvas, which needs
    no ``pyplot`` backend. Closing: a figure registered with pyplot (one that
    :func:`matplotlib.pyplot.figure` made) is closed with :func:`matplotlib.pyplot.close`; a
    :class:`~matplotlib.figure.Figure` made directly holds no global state and is freed with
    its last reference. matplotlib's warnings for characters the font lacks are collected:
    inside :func:`missing_glyphs` they go to its dict, elsewhere they become one
    ``UserWarning`` per figure; any other warning is passed on unchanged.

    References
    ----------
    RFC 2397, "The data URL scheme".

    Examples
    --------
    >>> fig = plot_answers_per_item([3, 3, 4])
    >>> figure_to_data_uri(fig)[:22]
    'data:image/png;base64,'
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(
            "fig must be a matplotlib.figure.Figure (e.g. from a plot_* function of "
            f"ambppl.report.figures), but got {type(fig).__name__}"
        )
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    missing: dict[str, str] = {}
    for shown in caught:
        glyph = _GLYPH.match(str(shown.message))
        if glyph is None:  # not ours to judge: passed on as it came
            warnings.warn_explicit(shown.message, shown.category, shown.filename, shown.lineno)
        else:
            missing[chr(int(glyph["code"]))] = glyph["font"] or "the figure font"
    collected = _MISSING.get()
    if collected is not None:
        collected.update(missing)
    elif missing:
        warnings.warn(missing_glyphs_message(missing), UserWarning, stacklevel=2)
    _close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _close(fig: Figure) -> None:
    """Take ``fig`` off pyplot's figure manager if it is registered there (only a figure
    that pyplot made is; pyplot is never imported here for a plain ``Figure``)."""
    if getattr(fig.canvas, "manager", None) is None:
        return
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)


#: matplotlib's warning for a character that its font lacks, e.g. "Glyph 29356
#: (\N{CJK UNIFIED IDEOGRAPH-72AC}) missing from font(s) DejaVu Sans." (older: "missing from
#: current font.").
_GLYPH = re.compile(
    r"Glyph (?P<code>\d+)\b.*\bmissing from (?:current font|font\(s\) (?P<font>.*?))\.?$",
    re.DOTALL,
)

#: The characters (with their font) that the figures drawn inside :func:`missing_glyphs`
#: could not show; None outside it.
_MISSING: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "ambppl_missing_glyphs", default=None
)


@contextlib.contextmanager
def missing_glyphs() -> Iterator[dict[str, str]]:
    """Collect the characters that the figures drawn inside cannot show.

    Returns
    -------
    contextlib.AbstractContextManager of dict
        Yields a dict that fills, as figures are rendered with :func:`figure_to_data_uri`,
        with each character the font lacks (mapped to the font's name). Inside the block
        :func:`figure_to_data_uri` gives no warning of its own; the caller gives one for the
        page.

    Notes
    -----
    matplotlib warns once per figure and character, with a source line; a report with
    CJK or emoji labels would print dozens. A :class:`contextvars.ContextVar` keeps
    concurrent renderings apart.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> with missing_glyphs() as missing:
    ...     fig = Figure(figsize=(1, 1))
    ...     _ = fig.text(0.5, 0.5, "\\x02")
    ...     _ = figure_to_data_uri(fig)
    >>> sorted(missing)
    ['\\x02']
    """
    found: dict[str, str] = {}
    token = _MISSING.set(found)
    try:
        yield found
    finally:
        _MISSING.reset(token)


def missing_glyphs_message(missing: Mapping[str, str]) -> str:
    """The one warning for characters the figures draw as empty boxes.

    Parameters
    ----------
    missing : mapping of str to str
        Each missing character and the font that lacks it (:func:`missing_glyphs`).

    Returns
    -------
    str
        One line: how many characters, a few of them, the font, and how to get them drawn.

    Examples
    --------
    >>> print(missing_glyphs_message({"犬": "DejaVu Sans"}))
    the figures draw 1 character of the labels or item ids as an empty box ('犬'): the font
    DejaVu Sans lacks it; the HTML tables show the text as written (to draw it, install a
    font that has it and name it in matplotlib's font.family, e.g. in a matplotlibrc file)
    """
    chars = sorted(missing)
    shown = ", ".join(repr(c) for c in chars[:5]) + (", ..." if len(chars) > 5 else "")
    fonts = ", ".join(sorted(set(missing.values())))
    one = len(chars) == 1
    return (
        f"the figures draw {len(chars)} character{'' if one else 's'} of the labels or item "
        f"ids as {'an empty box' if one else 'empty boxes'} ({shown}): the font {fonts} "
        f"lacks {'it' if one else 'them'}; the HTML tables show the text as written (to draw "
        f"{'it' if one else 'them'}, install a font that has {'it' if one else 'them'} and "
        "name it in matplotlib's font.family, e.g. in a matplotlibrc file)"
    )


def plot_answers_per_item(n_answers: Sequence[int] | np.ndarray) -> Figure:
    """Bar chart of how many items have each number of answers.

    Parameters
    ----------
    n_answers : array-like of int
        Answers per item.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    One bar per distinct count (counts are few and whole); with more than 40 distinct counts
    the bars become a histogram.

    References
    ----------
    The paper's data description (answers per item ``N_i``).

    Examples
    --------
    >>> fig = plot_answers_per_item([3, 3, 4])
    >>> fig.axes[0].get_xlabel()
    'answers per item'
    """
    values = _values(n_answers, "n_answers", 1, "a 1-D sequence")
    wrong = values[(values < 0) | (values != np.round(values))]
    if wrong.size:
        raise ValueError(
            f"n_answers must be whole numbers >= 0 (answers per item), but got {wrong[:5].tolist()}"
        )
    n = values.astype(np.int64)
    fig = _new_figure(4.2, 2.6)
    ax = fig.add_subplot()
    values, freq = np.unique(n, return_counts=True)
    if len(values) <= 40:
        from matplotlib.ticker import MaxNLocator

        ax.bar(values, freq, width=0.8, color=_BLUE)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(values.min() - 1, values.max() + 1)
    else:
        ax.hist(n, bins=40, color=_BLUE)
    ax.set_xlabel("answers per item")
    ax.set_ylabel("items")
    return fig


#: Most bars of :func:`category_shares`; beyond, the smallest shares are drawn as one bar.
MAX_BARS = 30


def plot_category_shares(labels: Sequence[Any], shares: Sequence[float], cant_solve: Any) -> Figure:
    """Horizontal bar chart of the share of all answers in each category.

    With more than :data:`MAX_BARS` categories the :data:`MAX_BARS` - 1 largest shares (and
    the can't-solve category) get their own bars, in the data's order, and the others one
    bar, "N other categories", with their summed share (a chart of thousands of bars takes
    minutes to draw and cannot be read).

    Parameters
    ----------
    labels : sequence
        Category labels (can't-solve last).
    shares : sequence of float, pandas.Series or xarray.DataArray
        Share of all answers per category (sums to 1). A sequence or an array is read by
        position, in the order of ``labels``; a Series indexed by the category labels, or a
        1-D DataArray with a coordinate, by its labels (compared as text), put in the order
        of ``labels``.
    cant_solve : object or None
        The can't-solve label; its bar is drawn in a second colour.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Raises
    ------
    ValueError
        If ``labels`` and ``shares`` differ in length, or a labelled ``shares`` has other
        labels than ``labels`` or a label twice (or ``labels`` has one twice).
    TypeError
        If ``shares`` is not numeric.

    Notes
    -----
    The pooled shares are the plug-in estimate of the population answer distribution.

    References
    ----------
    The paper's data description (category frequencies).

    Examples
    --------
    >>> fig = plot_category_shares(["a", "b", "?"], [0.5, 0.3, 0.2], "?")
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a', 'b', '?']
    >>> import pandas as pd
    >>> fig = plot_category_shares(["a", "b", "?"], pd.Series({"?": 0.2, "a": 0.5, "b": 0.3}),
    ...                            "?")
    >>> [round(float(bar.get_width()), 2) for bar in fig.axes[0].patches]
    [0.5, 0.3, 0.2]
    """
    labels = [str(c) for c in labels]
    shares = _values(_shares_by_label(shares, labels), "shares", 1, "a 1-D sequence")
    if len(labels) != len(shares):
        raise ValueError(
            f"labels and shares must have one entry per category each, but got {len(labels)} "
            f"and {len(shares)}"
        )
    if len(labels) > MAX_BARS:  # the largest shares (and can't-solve), the rest as one bar
        cs = [j for j, c in enumerate(labels) if c == str(cant_solve)]
        rest = np.setdiff1d(np.arange(len(labels)), cs)
        keep = rest[np.argsort(-shares[rest], kind="stable")[: MAX_BARS - 1 - len(cs)]]
        others = np.setdiff1d(rest, keep)
        order = [*np.sort(keep), *cs]
        labels = [labels[j] for j in order[: len(keep)]] + [
            f"{others.size} other categories",
            *(labels[j] for j in cs),
        ]
        shares = np.r_[shares[np.sort(keep)], shares[others].sum(), shares[cs]]
    fig = _new_figure(5.0, 0.45 * len(labels) + 0.9)
    ax = fig.add_subplot()
    colors = [_ORANGE if c == str(cant_solve) else _BLUE for c in labels]
    y = np.arange(len(labels))[::-1]
    ax.barh(y, shares, color=colors)
    ax.set_yticks(y, [plain(c, 32) for c in labels])
    ax.set_xlabel("share of all answers")
    ax.set_xlim(0, max(1e-9, float(shares.max())) * 1.15)
    for yi, s in zip(y, shares, strict=True):
        ax.annotate(f"{s:.1%}", (s, yi), xytext=(3, 0), textcoords="offset points", va="center")
    return fig


def plot_ambiguity_histogram(
    mean: np.ndarray, plugin: np.ndarray, measure: str, threshold: float
) -> Figure:
    """Histogram of the items' posterior mean ambiguity, with the plug-in estimate.

    Parameters
    ----------
    mean : numpy.ndarray
        Posterior mean of the measure per item.
    plugin : numpy.ndarray
        Plug-in (observed-share) estimate per item; NaNs are left out.
    measure : str
        The measure's name, for the axis label.
    threshold : float
        Drawn as a vertical line.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    The plug-in estimate uses the observed answer shares in place of ``q`` and is biased
    for few answers; the posterior mean shrinks towards the prior.

    References
    ----------
    The paper, Sections "Ambiguity" and "Estimation".

    Examples
    --------
    >>> fig = plot_ambiguity_histogram(np.array([0.1, 0.5]), np.array([0.0, 0.6]), "amb", 0.4)
    >>> fig.axes[0].get_xlabel()
    'amb'
    """
    mean = np.asarray(mean, dtype=float)
    plugin = np.asarray(plugin, dtype=float)
    fig = _new_figure(5.6, 3.0)
    ax = fig.add_subplot()
    hi = max(1.0, float(np.nanmax(np.r_[mean, plugin, 0.0])))
    bins = np.linspace(0.0, hi, 31)
    ax.hist(mean, bins=bins, color=_BLUE, alpha=0.85, label="posterior mean")
    finite = plugin[np.isfinite(plugin)]
    if finite.size:
        ax.hist(finite, bins=bins, histtype="step", color=_ORANGE, lw=1.6, label="plug-in")
    ax.axvline(threshold, color=_GREY, ls="--", lw=1, label=f"threshold {threshold:g}")
    ax.set_xlabel(plain(measure))
    ax.set_ylabel("items")
    ax.legend(frameon=False, loc=LEGEND_LOC)
    return fig


def plot_zscores(z: np.ndarray) -> Figure:
    """Histogram of the z-scores of the posterior means against the closed-form means.

    Parameters
    ----------
    z : numpy.ndarray
        ``(mean - exact_mean) / mcse`` per item; non-finite values are left out.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    When the draws come from the right posterior the z-scores are close to standard normal;
    the density of N(0, 1) is drawn for comparison.

    References
    ----------
    Monte Carlo standard error ``sd / sqrt(ESS)``: Vehtari et al. (2021), "Rank-normalization,
    folding, and localization: an improved R-hat", Bayesian Analysis 16(2).

    Examples
    --------
    >>> fig = plot_zscores(np.array([-1.0, 0.2, 0.4]))
    >>> fig.axes[0].get_ylabel()
    'density'
    """
    from scipy.stats import norm

    z = np.asarray(z, dtype=float)
    z = z[np.isfinite(z)]
    fig = _new_figure(4.6, 2.8)
    ax = fig.add_subplot()
    lim = max(4.0, float(np.abs(z).max()) if z.size else 0.0)
    ax.hist(z, bins=np.linspace(-lim, lim, 41), density=True, color=_BLUE, alpha=0.85)
    grid = np.linspace(-lim, lim, 200)
    ax.plot(grid, norm.pdf(grid), color=_ORANGE, lw=1.6, label="N(0, 1)")
    ax.set_xlabel("z = (mean − closed-form mean) / MCSE")
    ax.set_ylabel("density")
    ax.legend(frameon=False, loc=LEGEND_LOC)
    return fig


def plot_item_ranks(draws: np.ndarray, items: Sequence[Any], r_hat: Sequence[float]) -> Figure:
    """Rank plots (one panel per item): histograms of pooled ranks per chain.

    Parameters
    ----------
    draws : numpy.ndarray
        Shape ``(n_items, chains, draws)``.
    items : sequence
        Item ids for the panel titles.
    r_hat : sequence of float
        R-hat per item for the panel titles.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    The draws of all chains are ranked together; when the chains mix, each chain's ranks
    are uniform and every histogram is flat around the dashed line.

    References
    ----------
    Vehtari et al. (2021), "Rank-normalization, folding, and localization: an improved
    R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2), Section 4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fig = plot_item_ranks(rng.normal(size=(2, 4, 50)), ["a", "b"], [1.0, 1.01])
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['item a  R-hat 1.000', 'item b  R-hat 1.010']
    """
    from scipy.stats import rankdata

    draws = _values(draws, "draws", 3, "an array of shape (n_items, chains, draws)")
    n_items, n_chains, n_draws = draws.shape
    _same_length(items, draws, "items and draws")
    _same_length(r_hat, draws, "r_hat and draws")
    ncols = min(n_items, 3)
    nrows = -(-n_items // ncols)
    fig = _new_figure(3.2 * ncols, 2.3 * nrows)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    n_bins = max(5, min(20, n_draws // 10))
    total = n_chains * n_draws
    edges = np.linspace(0, total, n_bins + 1)
    for k in range(n_items):
        ax = axes[k]
        ranks = rankdata(draws[k].ravel()).reshape(n_chains, n_draws)
        expected = n_draws / n_bins
        for c in range(n_chains):
            freq, _ = np.histogram(ranks[c], bins=edges)
            offset = c * expected * 1.5
            ax.stairs(freq + offset, edges, baseline=offset, fill=True, alpha=0.7)
            ax.axhline(offset + expected, color=_GREY, ls="--", lw=0.8)
        ax.set_title(f"item {plain(items[k], 24)}  R-hat {float(r_hat[k]):.3f}", fontsize=9)
        ax.set_yticks([])
        ax.set_xlabel("rank (all chains)", fontsize=8)
    for ax in axes[n_items:]:
        ax.set_visible(False)
    return fig


def plot_parameter_ranks(draws: Mapping[str, np.ndarray]) -> Figure:
    """Rank plots of some parameters (:func:`arviz_plots.plot_rank`): one panel each.

    Parameters
    ----------
    draws : mapping of str to numpy.ndarray
        Each parameter's name (the panel title, e.g. ``"sigma_item[yes]"``) and its draws,
        shape ``(chains, draws)``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    ArviZ 1.x's rank plot: the fractional ranks of each chain's draws among all chains'
    draws, as the difference between their ECDF and the uniform CDF (one line per chain),
    with the multi-chain test's p-value and its suspicious points in black. Chains that mix
    give lines close to zero; a chain that stays apart bends far from it.

    References
    ----------
    Säilynoja, Bürkner and Vehtari (2022), "Graphical test for discrete uniformity and its
    applications in goodness-of-fit evaluation and multiple sample comparison", Statistics
    and Computing 32(32); Vehtari et al. (2021), Bayesian Analysis 16(2), section 4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fig = plot_parameter_ranks({"kappa": rng.normal(size=(2, 50))})
    >>> type(fig).__name__, fig.canvas.manager is None
    ('Figure', True)
    """
    import arviz_plots
    import xarray as xr

    # DataTree refuses "/" in a variable name (a category such as "Neutral / author ..."),
    # and shortened names may coincide: a division slash, and a count for repeats
    if not isinstance(draws, Mapping) or not draws:
        raise ValueError(
            "draws must be a non-empty mapping of parameter name to draws of shape (chains, "
            f"draws), but got {draws!r:.80}"
        )
    names: list[str] = []
    for name in draws:
        short = plain(name, 40).replace("/", "\u2215")
        names.append(short if short not in names else f"{short} ({len(names) + 1})")
    arrays = [
        _values(v, f"draws[{k!r}]", 2, "an array of shape (chains, draws)")
        for k, v in draws.items()
    ]
    if len({a.shape for a in arrays}) > 1:
        raise ValueError(
            f"draws must all have one shape (chains, draws), but got {[a.shape for a in arrays]}"
        )
    n_chains, n_draws = arrays[0].shape
    dataset = xr.Dataset(
        {name: (("chain", "draw"), a) for name, a in zip(names, arrays, strict=True)},
        coords={"chain": np.arange(n_chains), "draw": np.arange(n_draws)},
    )
    ncols = min(len(names), 3)
    nrows = -(-len(names) // ncols)
    collection = arviz_plots.plot_rank(
        xr.DataTree.from_dict({"posterior": dataset}),
        backend="matplotlib",
        col_wrap=ncols,
        figure_kwargs={"figsize": (3.2 * ncols, 2.5 * nrows), "layout": "constrained"},
    )
    fig = collection.viz["figure"].item()
    _close(fig)  # arviz_plots draws on a pyplot figure: leave no pyplot state
    return fig


def plot_prior_sensitivity(
    table: pd.DataFrame,
    *,
    measure: str | None = None,
    labels: Sequence[str] | None = None,
) -> Figure:
    """Interval plot of each item's posterior mean and HDI under each prior.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`ambppl.prior_sensitivity`: index the items (rows of the plot, top
        first), columns a two-level index (prior label, statistic) with the statistics
        ``mean``, ``hdi_lower`` and ``hdi_upper`` of every prior.
    measure : str, optional
        The measure's name, for the axis label; default ``table.attrs["measure"]``.
    labels : sequence of str, optional
        Legend entries, one per prior in the table's order (e.g. ``["learned prior",
        "β = 0.5", "β = 1"]``); default the table's prior labels (``"beta=0.5"``, ...).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Raises
    ------
    ValueError
        If ``table`` lacks a statistic for some prior, or ``labels`` has another length
        than the table's priors.

    Notes
    -----
    A small prior concentration lets few answers dominate; a large one shrinks every item
    towards the prior mean of the measure.

    References
    ----------
    The paper, Section "Prior".

    Examples
    --------
    >>> import ambppl
    >>> counts = ambppl.read_annotations(np.array([[5, 0, 0], [2, 2, 1], [0, 4, 1]]),
    ...                                  cant_solve=2)
    >>> table = ambppl.prior_sensitivity(counts, priors=(0.5, 2.0), draws=200, chains=2,
    ...                                  random_seed=1)
    >>> fig = plot_prior_sensitivity(table)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['beta=0.5', 'beta=2']
    """
    if not hasattr(table, "columns") or getattr(table.columns, "nlevels", 1) != 2:
        raise TypeError(
            "table must be a table of ambppl.prior_sensitivity (a DataFrame with columns "
            f"(prior, statistic)), but got {type(table).__name__}"
        )
    priors = list(table.columns.get_level_values(0).unique())
    try:
        mean, lower, upper = (
            np.column_stack([table[(p, stat)].to_numpy(dtype=float) for p in priors])
            for stat in ("mean", "hdi_lower", "hdi_upper")
        )
    except KeyError as err:
        raise ValueError(
            "table must be a table of ambppl.prior_sensitivity, with the statistics mean, "
            f"hdi_lower and hdi_upper of every prior, but it lacks {err.args[0]!r}"
        ) from None
    labels = [str(p) for p in priors] if labels is None else [str(x) for x in labels]
    if len(labels) != len(priors):
        raise ValueError(
            f"labels must name each of the table's {len(priors)} priors, but got "
            f"{len(labels)} labels"
        )
    if measure is None:
        measure = str(table.attrs.get("measure", "measure"))
    items = list(table.index)
    n_items, n_priors = mean.shape
    fig = _new_figure(6.0, 0.32 * n_items * 1.0 + 1.2)
    ax = fig.add_subplot()
    y = np.arange(n_items)[::-1].astype(float)
    colors = [_ORANGE, _BLUE, "#4d9a59", "#8a5ca8", _GREY]
    for j, label in enumerate(labels):
        yj = y + (j - (n_priors - 1) / 2) * 0.22
        color = colors[j % len(colors)]
        # a line from end to end, not error bars around the mean: a short HDI of a skewed
        # posterior need not contain its mean
        ax.hlines(yj, lower[:, j], upper[:, j], lw=1.2, color=color)
        ax.plot(mean[:, j], yj, "o", ms=3.5, color=color, label=plain(label))
    ax.set_yticks(y, [plain(i, 24) for i in items])
    ax.set_xlabel(f"{plain(measure)}: posterior mean and HDI")
    ax.legend(
        frameon=False, fontsize=8, ncols=n_priors, loc="lower center", bbox_to_anchor=(0.5, 1.0)
    )
    return fig


def plot_implied_prior(samples: Mapping[str, np.ndarray], measure: str) -> Figure:
    """Densities of a measure under several priors of ``q`` (one outline per prior).

    Parameters
    ----------
    samples : mapping of str to numpy.ndarray
        Legend label -> values of the measure for draws of ``q`` from that prior (e.g. the
        learned prior and the symmetric priors beta = 0.5 and 1).
    measure : str
        The measure's name, for the axis label.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    This is the prior predictive of the measure for a new item before any of its answers
    are seen: what the prior alone says about how ambiguous an item is. Non-finite values
    are left out.

    References
    ----------
    The paper, Section "Prior"; Gelman et al. (2013), *Bayesian Data Analysis*, 3rd ed.,
    Section 5.3 (hierarchical priors).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fig = plot_implied_prior({"a": rng.random(100), "b": rng.random(100) ** 2}, "amb")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['a', 'b']
    """
    fig = _new_figure(5.6, 3.0)
    ax = fig.add_subplot()
    clean = {k: np.asarray(v, dtype=float) for k, v in samples.items()}
    clean = {k: v[np.isfinite(v)] for k, v in clean.items()}
    hi = max([1.0, *(float(v.max()) for v in clean.values() if v.size)])
    bins = np.linspace(0.0, hi, 41)
    colors = [_BLUE, _ORANGE, "#4d9a59", "#8a5ca8", _GREY]
    for j, (label, values) in enumerate(clean.items()):
        ax.hist(
            values,
            bins=bins,
            density=True,
            histtype="step",
            lw=1.8 if j == 0 else 1.3,
            color=colors[j % len(colors)],
            label=plain(label, 48),
        )
    ax.set_xlabel(f"{plain(measure)} of a new item (prior, before its answers)")
    ax.set_ylabel("density")
    ax.legend(frameon=False, fontsize=8, loc=LEGEND_LOC)
    return fig


def plot_shrinkage(
    flat: np.ndarray,
    learned: np.ndarray,
    measure: str,
    flat_label: str = "symmetric prior β = 1",
    learned_label: str = "learned prior",
) -> Figure:
    """Scatter plot of each item's posterior mean under two priors, with the diagonal.

    Parameters
    ----------
    flat : numpy.ndarray
        Posterior mean of the measure per item under the symmetric prior (x axis).
    learned : numpy.ndarray
        Posterior mean of the same items under the learned prior (y axis).
    measure : str
        The measure's name, for the axis labels.
    flat_label, learned_label : str
        Names of the two priors on the axes.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    Points on the diagonal are items the choice of prior does not move. Items with few
    answers move most: the prior's pseudo-answers weigh as the answers there.

    References
    ----------
    Efron and Morris (1975), "Data analysis using Stein's estimator and its
    generalizations", JASA 70(350) (shrinkage plots).

    Examples
    --------
    >>> fig = plot_shrinkage(np.array([0.2, 0.5]), np.array([0.1, 0.55]), "amb")
    >>> fig.axes[0].get_xlabel()
    'posterior mean of amb: symmetric prior β = 1'
    """
    flat = _values(flat, "flat", 1, "a 1-D array")
    learned = _values(learned, "learned", 1, "a 1-D array")
    _same_length(flat, learned, "flat and learned")
    fig = _new_figure(4.6, 4.2)
    ax = fig.add_subplot()
    both = np.r_[flat, learned]
    both = both[np.isfinite(both)]
    lo = min(0.0, float(both.min())) if both.size else 0.0
    hi = max(1.0, float(both.max())) if both.size else 1.0
    ax.plot([lo, hi], [lo, hi], color=_GREY, ls="--", lw=1, label="diagonal (no change)")
    ax.scatter(flat, learned, s=10, alpha=0.5, color=_BLUE, edgecolors="none", label="items")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel(f"posterior mean of {plain(measure)}: {plain(flat_label, 48)}")
    ax.set_ylabel(f"posterior mean of {plain(measure)}: {plain(learned_label, 48)}")
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    return fig


def plot_energy(energy: np.ndarray, bfmi: Sequence[float]) -> Figure:
    """The NUTS energy plot: marginal energy against energy transitions, with E-BFMI.

    Parameters
    ----------
    energy : numpy.ndarray
        Hamiltonian energy of every draw, shape ``(chains, draws)`` (``sample_stats.energy``).
    bfmi : sequence of float
        E-BFMI per chain, shown in the title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not registered with pyplot).

    Notes
    -----
    The marginal energy ``E - mean(E)`` (filled) and the energy transitions
    ``E[t] - E[t-1]`` within each chain (outline), pooled over chains, as densities on
    shared bins. When the transition distribution is much narrower than the marginal one,
    momentum resampling moves slowly through the energy levels and the sampler can miss
    the tails (low E-BFMI). Drawn with matplotlib's ``Figure`` like the other figures:
    :func:`arviz_plots.plot_energy` draws through ``pyplot`` (a global figure manager).

    References
    ----------
    Betancourt (2016), "Diagnosing suboptimal cotangent disintegrations in Hamiltonian Monte
    Carlo", arXiv:1604.00695; Betancourt (2017), "A conceptual introduction to Hamiltonian
    Monte Carlo", arXiv:1701.02434, Section 6.1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fig = plot_energy(rng.normal(size=(2, 100)).cumsum(axis=1), [0.05, 0.04])
    >>> fig.axes[0].get_title()
    'E-BFMI per chain: 0.05, 0.04'
    """
    energy = _values(energy, "energy", 2, "an array of shape (chains, draws)")
    marginal = (energy - energy.mean()).ravel()
    transition = np.diff(energy, axis=1).ravel()
    both = np.r_[marginal, transition]
    lo, hi = float(both.min()), float(both.max())
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    bins = np.linspace(lo, hi, 41)
    fig = _new_figure(4.6, 2.8)
    ax = fig.add_subplot()
    ax.hist(marginal, bins=bins, density=True, color=_BLUE, alpha=0.6, label="marginal energy")
    ax.hist(
        transition,
        bins=bins,
        density=True,
        histtype="step",
        color=_ORANGE,
        lw=1.6,
        label="energy transition",
    )
    values = [float(b) for b in bfmi]
    shown = ", ".join(f"{b:.2f}" for b in values[:8]) + (", …" if len(values) > 8 else "")
    ax.set_title(f"E-BFMI per chain: {shown}", fontsize=9)
    ax.set_xlabel("energy − mean (marginal), change between draws (transition)", fontsize=8)
    ax.set_ylabel("density")
    ax.set_yticks([])
    ax.legend(frameon=False, fontsize=8, loc=LEGEND_LOC)
    return fig
