"""``build_report``: the HTML report of annotations already read, by the route that fits.

The exact fixed-prior model (``dirichlet_categorical`` with ``method="exact"``) is reported
without per-item draws (:func:`ambppl.report.score_report`); every other model and method is
fitted (:func:`ambppl.fit`) and rendered (:func:`ambppl.report.render_report`). ``ambppl
report`` writes what :func:`build_report` returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ambppl.data.contract import describe
from ambppl.inference.catalog import get_model
from ambppl.inference.fitting import fit_with_progress
from ambppl.internal.warned import collecting_warnings
from ambppl.report.scored import MODEL as SCORE_REPORT_MODEL
from ambppl.report.scored import score_report
from ambppl.report.writer import _check_fit_warnings, render_report

__all__ = ["build_report"]


def build_report(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    method: str | None = None,
    measure: str = "amb",
    hdi_prob: float | None = None,
    threshold: float = 0.4,
    top: int = 15,
    mcse: float = 0.005,
    draws: int | None = None,
    chains: int | None = None,
    sample_kwargs: dict[str, Any] | None = None,
    random_seed: Any = None,
    command: str | None = None,
    source: str | None = None,
    progressbar: bool = False,
    progress: Callable[[str], None] | None = None,
    read_warnings: Sequence[Any] | None = None,
    **params: Any,
) -> str:
    """Render the HTML diagnostics report of annotations already read, choosing the route.

    ``dirichlet_categorical`` with exact draws is reported without per-item draws
    (:func:`ambppl.report.score_report`: memory and time grow with the distinct count
    vectors); any other model or method is fitted with :func:`ambppl.fit` and rendered with
    :func:`ambppl.report.render_report`. This is what ``ambppl report`` writes.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Annotations already read, as for :func:`ambppl.fit` (counts; the answers table of
        :func:`ambppl.data.read_long` for models of answers such as ``rater_effects``).
    model : str, default "dirichlet_categorical"
        Catalog model (:func:`ambppl.list_models`).
    method : str, optional
        One of the model's methods (default: its first, ``"exact"`` for the default model).
    measure : str, default "amb"
        The ambiguity measure reported (one of :data:`ambppl.MEASURES`).
    hdi_prob : float, optional
        Mass of the highest-density intervals (default: :func:`ambppl.summarize`'s).
    threshold : float, default 0.4
        The item table shows P(measure > threshold).
    top : int, default 15
        Items listed with their answer counts and refitted in the prior-sensitivity section.
    mcse : float, default 0.005
        Route without per-item draws only: bound on the Monte Carlo standard error of
        P(measure > threshold) in the item table.
    draws, chains : int, optional
        Draws per chain and chains of the fit (route without per-item draws: of each
        checked item, default 1000 and 4); default :func:`ambppl.fit`'s (the model's own for
        NUTS; one point for ``method="map"``).
    sample_kwargs : dict, optional
        Keywords of ``pymc.sample`` for a method that runs NUTS (e.g. ``tune``,
        ``target_accept``).
    random_seed : int, numpy.random.Generator or None
        Seed of the fit and of the report's own draws.
    command : str, optional
        The command line that produced the report, shown in its header.
    source : str, optional
        Fitted route: the name of the data in the title and the overview (default: the
        counts' ``attrs["source"]``).
    progressbar : bool, default False
        Fitted route: show the sampler's progress bar.
    progress : callable, optional
        Called with one line of text as each long step starts and ends (the command line
        prints them on stderr).
    read_warnings : sequence, optional
        The warnings raised while ``data`` was read (the list that
        ``warnings.catch_warnings(record=True)`` records around
        :func:`ambppl.read_annotations`, or :class:`Warning` objects or their texts): the
        page's first section lists them before the others. ``ambppl report`` passes those
        of reading its file. They are not raised again (the caller saw them).
    **params
        The model's parameters (e.g. ``prior``; :func:`ambppl.list_models`).

    Returns
    -------
    str
        One self-contained HTML document. Its first section, "Read this first", lists every
        warning of reading the data (``read_warnings``), of taking the counts, of the fit and
        of the report's computations, each once (see :func:`ambppl.report.render_report`).

    Raises
    ------
    ValueError
        For an unknown model or method, ``sample_kwargs`` with a method without NUTS, or
        bad data or settings (as :func:`ambppl.fit`, :func:`ambppl.report.score_report`
        and :func:`ambppl.report.render_report`).
    TypeError
        For a path or reader options instead of data already read, or ``read_warnings``
        that is not a list of warnings or texts.

    Warns
    -----
    Warning
        Each warning of the fit and of the report's computations, once, after the page is
        drawn (the command line prints each as one ``warning:`` line).

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> from ambppl.report import build_report
    >>> counts = np.random.default_rng(0).multinomial(10, [0.5, 0.3, 0.2], size=50)
    >>> counts = ambppl.read_annotations(counts, cant_solve=2)
    >>> page = build_report(counts, top=2, draws=100, chains=2, random_seed=1)
    >>> page.startswith("<!DOCTYPE html>"), 'id="scored-statement"' in page
    (True, True)
    """
    say = progress or (lambda message: None)
    read = _check_fit_warnings(read_warnings, "read_warnings", "ambppl.read_annotations")
    method = method or next(iter(get_model(model).info["methods"]))
    settings: dict[str, Any] = {
        "measure": measure,
        "hdi_prob": hdi_prob,
        "threshold": threshold,
        "top": top,
        "random_seed": random_seed,
        "command": command,
    }
    start = time.perf_counter()
    if model == SCORE_REPORT_MODEL and method == "exact":
        if sample_kwargs:
            raise ValueError(
                f"sample_kwargs tune NUTS, but method {method!r} of model {model!r} draws "
                "without it; leave sample_kwargs out"
            )
        draws = 1000 if draws is None else draws
        chains = 4 if chains is None else chains
        say(
            f"scoring {model} (exact; draws per distinct count vector, MCSE <= {mcse}) "
            f"on {describe(data)}, checking {chains} x {draws} exact draws of the distinct "
            "vectors"
        )
        page = score_report(
            data,
            mcse=mcse,
            draws=draws,
            chains=chains,
            read_warnings=read,
            **settings,
            **params,
        )
        say(f"scored, checked and drawn in {time.perf_counter() - start:.1f} s")
        return page
    # the warnings of reading the data (given), of taking its counts and of the fit go to
    # the page's first section
    with collecting_warnings() as raised:
        result = fit_with_progress(
            data,
            model,
            method=method,
            draws=draws,
            chains=chains,
            measure=measure,
            progress=say,
            random_seed=random_seed,
            progressbar=progressbar,
            **({"sample_kwargs": sample_kwargs} if sample_kwargs else {}),
            **params,
        )
        start = time.perf_counter()

        def step(message: str) -> None:  # the report's long steps, with the time so far
            say(f"report: {message} ({time.perf_counter() - start:.0f} s)")

        page = render_report(
            result, source=source, progress=step, fit_warnings=[*read, *raised], **settings
        )
    say(f"report drawn in {time.perf_counter() - start:.1f} s")
    return page
