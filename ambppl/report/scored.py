"""The report of a fixed-prior Dirichlet model without per-item draws.

:func:`score_report` builds the page from :func:`ambppl.score` (closed-form means and sds,
exact draws once per distinct count vector) and checks exact draws against the closed forms
on one item per distinct count vector: memory and time grow with the number of distinct
vectors, not of items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ambppl.analysis.scoring import score, seed_sequence
from ambppl.analysis.summary import rank, summarize
from ambppl.data.contract import as_counts
from ambppl.inference.catalog import get_model, model_parameters
from ambppl.inference.fitting import VARIABLES, fit
from ambppl.internal.checks import check_positive_int
from ambppl.internal.warned import collecting_warnings
from ambppl.maths.measures import measure_name
from ambppl.report.writer import TABLE_ROWS, _check_fit_warnings, _render

#: Distinct count vectors (one item each) whose exact draws the report checks against the
#: closed forms and the two-class density; beyond it a seeded random sample of them.
CHECK_VECTORS = 2000

#: The model and method :func:`score_report` reports: one fixed Dirichlet prior per item.
MODEL = "dirichlet_categorical"


def checked_items(
    values: np.ndarray, top: np.ndarray, max_vectors: int, rng: np.random.Generator
) -> np.ndarray:
    """Positions of the items whose draws the report checks, in the data's order.

    The items at positions ``top`` (the most ambiguous, refitted in the prior-sensitivity
    section) and one item (the first) of each other distinct count vector of ``values``, a
    random sample of ``max_vectors - len(top)`` of them where there are more.
    """
    _, first, inverse = np.unique(values, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    others = np.setdiff1d(np.arange(first.size), inverse[top])
    room = max(max_vectors - top.size, 0)
    if others.size > room:
        others = rng.choice(others, size=room, replace=False)
    return np.union1d(top, first[others])


def score_report(
    data: Any,
    *,
    measure: str = "amb",
    hdi_prob: float | None = None,
    threshold: float = 0.4,
    mcse: float = 0.005,
    top: int = 15,
    draws: int = 1000,
    chains: int = 2,
    check_vectors: int = CHECK_VECTORS,
    max_rows: int = TABLE_ROWS,
    priors: Sequence[float] | None = None,
    random_seed: Any = None,
    command: str | None = None,
    title: str | None = None,
    read_warnings: Sequence[Any] | None = None,
    **kwargs: Any,
) -> str:
    """Render the HTML report of ``dirichlet_categorical`` without per-item draws.

    The same page as :func:`ambppl.report.render_report` of an exact fit, built so that
    memory and time grow with the number of distinct count vectors, not of items (what
    ``ambppl report`` does for this model and method).

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Counts already read, as for :func:`ambppl.fit` (:func:`ambppl.data.as_counts`; not a
        path: read files with :func:`ambppl.read_annotations` first).
    measure : {"amb", "modified", "old", "entropy"}, default "amb"
        The measure reported.
    hdi_prob : float, optional
        HDI probability (default :func:`ambppl.summarize`'s).
    threshold : float, default 0.4
        The table shows P(measure > threshold).
    mcse : float, default 0.005
        Bound on the Monte Carlo standard error of P(measure > threshold) in the item table
        (:func:`ambppl.score`).
    top : int, default 15
        Items listed with their answer counts and refitted in the prior-sensitivity section.
    draws, chains : int, default 1000, 2
        Exact draws per chain of each checked item.
    check_vectors : int, default CHECK_VECTORS
        At most this many distinct count vectors (one item each, the ``top`` items always
        among them) have their draws checked against the closed forms.
    max_rows : int, default TABLE_ROWS
        Rows of the sortable item table (the most ambiguous items).
    priors : sequence of float, optional
        Symmetric priors of the sensitivity section (default
        :data:`ambppl.report.SENSITIVITY_PRIORS`).
    random_seed : int, numpy.random.Generator or None
        Seed (as for :func:`ambppl.score`): the same seed gives the same page (but for its
        time stamp), and its item table is the table :func:`ambppl.score` gives with that
        seed.
    command, title : str, optional
        As for :func:`ambppl.report.render_report`.
    read_warnings : sequence, optional
        The warnings raised while ``data`` was read (the list that
        ``warnings.catch_warnings(record=True)`` records around
        :func:`ambppl.read_annotations`, or :class:`Warning` objects or their texts): the
        page's first section lists them before its own (``ambppl report`` passes those of
        reading its file). They are not raised again.
    **kwargs
        The model's parameter ``prior`` (reader options raise a TypeError that shows the
        call of :func:`ambppl.read_annotations` that takes them).

    Returns
    -------
    str
        One self-contained HTML document. Its first section says that the draws are exact
        and lists ``read_warnings`` and the warnings raised while taking the counts, scoring
        and drawing, each once (as
        :func:`ambppl.report.render_report`; they are raised again after the page is drawn).

    Raises
    ------
    ValueError
        For bad data or settings (as :func:`ambppl.score` and
        :func:`ambppl.report.render_report`), or non-positive ``draws``, ``chains``,
        ``check_vectors`` or ``max_rows``.
    TypeError
        For a ``random_seed`` that is no int, Generator or None, a path or reader options,
        or ``read_warnings`` that is not a list of warnings or texts.

    Notes
    -----
    Items with equal counts have the same posterior, ``Dirichlet(prior + counts)``. The item
    table is :func:`ambppl.score`'s (closed-form mean and sd; P(measure > t) and the HDI from
    exact draws made once per distinct count vector, each with its MCSE). The sections that
    look at draws (the check of the draws against the closed-form moments and, for two proper
    classes, the exact density; the prior sensitivity of the ``top`` items) use an exact fit
    (:func:`ambppl.fit`) of the ``top`` items and of one item of each other distinct count
    vector, a seeded random sample of ``check_vectors`` of them where there are more. The table
    takes ``random_seed`` as :func:`ambppl.score` takes it, so it is the table of
    ``ambppl.score(counts, random_seed=random_seed, ...)`` with the same settings, number for
    number; the seeds of the sample and the fit are children spawned from the same
    :class:`numpy.random.SeedSequence` after those of the table's draws, so they are
    independent of them and leave the table untouched.

    Examples
    --------
    >>> import numpy as np
    >>> import ambppl
    >>> from ambppl.report import score_report
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.multinomial(10, [0.5, 0.3, 0.2], size=300)
    >>> counts = ambppl.read_annotations(counts, cant_solve=2)
    >>> page = score_report(counts, top=3, draws=200, random_seed=1)
    >>> page.startswith("<!DOCTYPE html>"), 'id="scored-statement"' in page
    (True, True)
    """
    import pandas as pd

    top = check_positive_int(top, "top")
    draws = check_positive_int(draws, "draws")
    chains = check_positive_int(chains, "chains")
    check_vectors = check_positive_int(check_vectors, "check_vectors")
    max_rows = check_positive_int(max_rows, "max_rows")
    measure = measure_name(measure)
    # the table takes the seed as ambppl.score takes it (the same seed, the same table); the
    # sample and the fit take children spawned from it after the table's (see Notes)
    seed = seed_sequence(random_seed)
    params = model_parameters(get_model(MODEL), kwargs, "score_report")
    read = _check_fit_warnings(read_warnings, "read_warnings", "ambppl.read_annotations")
    # warnings of taking the counts, of the scoring and of the fit go to the page's first
    # section, after those of reading the data
    with collecting_warnings() as raised:
        counts = as_counts(data)
        table = score(
            counts,
            MODEL,
            method="exact",
            measure=measure,
            threshold=threshold,
            hdi_prob=hdi_prob,
            mcse=mcse,
            random_seed=seed,
            **params,
        )
        seed_sample, seed_fit = seed.spawn(2)
        ranked = rank(table)
        top_n = min(top, len(ranked))
        top_pos = pd.Index(counts["item"].values).get_indexer(ranked.index[:top_n])
        keep = checked_items(
            counts.values, top_pos, check_vectors, np.random.default_rng(seed_sample)
        )
        subset = counts.isel(item=keep)
        result = fit(
            subset,
            model=MODEL,
            method="exact",
            draws=draws,
            chains=chains,
            random_seed=int(seed_fit.generate_state(1)[0]),
            var_names=[VARIABLES.get(measure, measure)],
            log_likelihood=False,
            **params,
        )
        hdi_prob = float(table.attrs["hdi_prob"])
        checked = summarize(result, measure=measure, hdi_prob=hdi_prob, threshold=threshold)
        sampled = table["draws"].to_numpy()
        scored = {
            "n_distinct": int(table.attrs["n_distinct"]),
            "n_checked": int(keep.size),
            "n_covered": len(np.unique(counts.values[keep], axis=0)),
            "mcse": float(mcse),
            "draws_max": int(sampled.max()),
            "n_approx": int((table["approx_error"].to_numpy() > 0).sum()),
            "p_above_mcse_max": float(table["p_above_mcse"].max()),
        }
        return _render(
            result,
            ranked,
            counts,
            warned=(read, raised),
            measure=measure,
            hdi_prob=hdi_prob,
            threshold=threshold,
            top=top_n,
            priors=priors,
            random_seed=random_seed,
            command=command,
            title=title,
            max_rows=max_rows,
            checked=checked,
            scored=scored,
        )
