"""``validate``: fit annotations already read and run every check that applies to the fit.

``ambppl validate FILE`` prints what :func:`validate` returns: :func:`ambppl.fit` followed
by :func:`ambppl.validation.check_fit` (with ``compare=True``, the suggested models fitted and
checked too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ambppl.data.contract import as_counts
from ambppl.inference.catalog import get_model
from ambppl.inference.fitting import fit_with_progress
from ambppl.validation.fit_check import (
    ANSWER_COLUMNS,
    FitCheck,
    _check_fit,
    _check_options,
    _check_same_answers,
)

__all__ = ["validate"]


def validate(
    data: Any,
    model: str = "dirichlet_categorical",
    *,
    method: str | None = None,
    answers: Any = None,
    alpha: float = 0.01,
    compare: bool = False,
    draws: int = 1000,
    chains: int = 4,
    sample_kwargs: dict[str, Any] | None = None,
    random_seed: Any = None,
    progressbar: bool = False,
    progress: Callable[[str], None] | None = None,
    **params: Any,
) -> FitCheck:
    """Fit a model to annotations already read and check the fit (what ``ambppl validate
    FILE`` prints).

    One call of :func:`ambppl.fit` and one of :func:`ambppl.validation.check_fit` with the
    same seed; with ``compare=True`` the models suggested for a failed check are fitted with
    the same ``draws`` and ``chains`` and checked the same way.

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        Annotations already read, as for :func:`ambppl.fit` (counts; the answers table of
        :func:`ambppl.data.read_long` for models of answers such as ``rater_effects``).
    model : str, default "dirichlet_categorical"
        Catalog model (:func:`ambppl.list_models`).
    method : str, optional
        One of the model's methods (default: its first).
    answers : pandas.DataFrame, optional
        The answers of ``data`` with rater ids (rows in any order), for ``compare=True`` to
        fit ``rater_effects`` (see :func:`ambppl.validation.check_fit`); their counts must be
        those of ``data``. Default ``data`` itself when it is an answers table (columns
        ``item``, ``rater``, ``label``).
    alpha : float, default 0.01
        False-alarm rate of each check.
    compare : bool, default False
        Also fit and check each model suggested for a failed check.
    draws, chains : int, default 1000, 4
        Draws per chain and chains of the fit and of the compared fits.
    sample_kwargs : dict, optional
        Keywords of ``pymc.sample`` for a method that runs NUTS (e.g. ``tune``,
        ``target_accept``).
    random_seed : int, numpy.random.Generator or None
        Seed of the fit and of the checks.
    progressbar : bool, default False
        Show the sampler's progress bar.
    progress : callable, optional
        Called with one line of text as the fit starts and ends and before each check and
        each compared fit (the command line prints them on stderr).
    **params
        The model's parameters (e.g. ``prior``; :func:`ambppl.list_models`).

    Returns
    -------
    FitCheck
        As :func:`ambppl.validation.check_fit` returns it: ``passed``, the checks, the
        predictive table, the suggestions and, with ``compare=True``, ``comparison``.

    Raises
    ------
    ValueError
        For an unknown model or method, bad data or settings (as :func:`ambppl.fit` and
        :func:`ambppl.validation.check_fit`), or ``answers`` whose counts are not those of
        ``data`` (other categories, other items, or other counts of an item; answers without
        the columns ``item``, ``rater``, ``label``). The options of the checks (``alpha``,
        ``answers``, ``random_seed``, ``compare``, ``progress``) are checked before the fit,
        and so are ``answers`` against counts given as a DataArray or an array to a model of
        counts; against other data, after the fit (by :func:`ambppl.validation.check_fit`).
    TypeError
        For a path or reader options instead of data already read, or options of the wrong
        type (``answers`` that is not a DataFrame, ``compare`` that is not a bool, ...).

    Examples
    --------
    >>> import numpy as np, ambppl
    >>> from ambppl.validation import validate
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.multinomial(10, rng.dirichlet(np.ones(3), size=100))
    >>> counts = ambppl.read_annotations(counts, cant_solve="2")
    >>> check = validate(counts, draws=200, chains=2, random_seed=1)
    >>> check.passed, check.model, check.method
    (True, 'dirichlet_categorical', 'exact')
    """
    import xarray as xr

    # every option of the checks is checked before the fit, which may take minutes
    alpha, random_seed, _, _, progress = _check_options(
        alpha=alpha,
        answers=answers,
        random_seed=random_seed,
        compare=compare,
        draws=None,
        chains=None,
        progress=progress,
    )
    say = progress or (lambda message: None)
    if method is None:  # "" is no method: ambppl.fit names the model's methods
        method = next(iter(get_model(model).info["methods"]))
    columns = getattr(data, "columns", None)
    known = False  # whether answers are known to be those of data (else checked after the fit)
    if answers is None and columns is not None and ANSWER_COLUMNS <= set(columns):
        answers, known = data, True  # the fit is made from them
    elif answers is not None and isinstance(data, xr.DataArray | np.ndarray):
        if get_model(model).info.get("data") != "long":  # else fit refuses counts
            # answers of other data would be fitted by compare=True: refused before the fit;
            # the counts of data are those the fit holds (fit reads them with as_counts)
            _check_same_answers(as_counts(data), answers, "of data", "the counts of data")
            known = True
    result = fit_with_progress(
        data,
        model,
        method=method,
        draws=draws,
        chains=chains,
        progress=say,
        random_seed=random_seed,
        progressbar=progressbar,
        **({"sample_kwargs": sample_kwargs} if sample_kwargs else {}),
        **params,
    )
    say("checking the fit")
    return _check_fit(
        result,
        answers=answers,
        alpha=alpha,
        random_seed=random_seed,
        compare=compare,
        draws=draws,
        chains=chains,
        progress=progress,
        answers_known=known,
    )
