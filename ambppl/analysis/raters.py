"""``summarize(result, level="rater")``: one row per rater of a rater-effects or Dawid-Skene fit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ambppl.inference.fitting import POINT_METHODS
from ambppl.internal.checks import check_prob
from ambppl.internal.resultdata import cant_solve_index, observed_counts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Columns of :func:`summarize_raters`.
RATER_COLUMNS = (
    "n_answers",
    "cant_solve_odds_ratio",
    "cant_solve_or_lower",
    "cant_solve_or_upper",
    "p_overuse",
    "overuses_cant_solve",
    "favoured_label",
    "label_bias",
)

#: Columns of :func:`summarize_raters` for a fit of a latent-class model (``dawid_skene``).
CLASS_RATER_COLUMNS = (
    "n_answers",
    "accuracy",
    "accuracy_lower",
    "accuracy_upper",
    "cant_solve_rate",
    "cant_solve_lower",
    "cant_solve_upper",
)

#: Posterior draws processed at once (bounds the memory: draws x answers x categories).
_BLOCK = 64


def summarize_raters(
    result: Any, *, hdi_prob: float | None = None, overuse: str | float = "hdi"
) -> pd.DataFrame:
    r"""One row per rater: how much more often than a typical rater it answers "can't solve"
    (``rater_effects``), or how often it answers the true class (``dawid_skene``).

    Parameters
    ----------
    result : xarray.DataTree
        A fit of a latent-class model (``dawid_skene``: posterior ``accuracy`` and
        ``confusion``; the table then has :data:`CLASS_RATER_COLUMNS`, see
        :func:`_summarize_class_raters`), or of a rater model (``rater_effects``): posterior
        ``b`` (rater, category) and
        ``eta`` (item, category); ``constant_data`` with ``rater_answers`` and, to compare
        each rater with the typical rater on the items it rated, ``answer_item`` and
        ``answer_rater`` (the item and rater position of every answer).
    hdi_prob : float, optional
        Mass of the highest-density interval (default: ArviZ's ``stats.ci_prob``).
    overuse : "hdi" or float, default "hdi"
        The rule for ``overuses_cant_solve`` (rater-effects fits): ``"hdi"`` flags a rater
        whose HDI of the odds ratio lies above 1; a probability ``p`` flags
        ``P(odds ratio > 1) >= p``. A latent-class fit has no such column: there the
        default ``"hdi"`` is unused and a probability is refused.

    Returns
    -------
    pandas.DataFrame
        Index ``rater`` (the original ids). For a latent-class fit (``dawid_skene``) the
        columns :data:`CLASS_RATER_COLUMNS`: ``n_answers`` (int64, as below); ``accuracy``,
        the posterior mean of the probability that the rater answers an item's true class
        (``sum_k pi_k confusion[r, k, k]``: averaged over the classes' prevalences ``pi``),
        with its HDI ``accuracy_lower`` / ``accuracy_upper``; ``cant_solve_rate``, the same
        for the can't-solve answer (``sum_k pi_k confusion[r, k, cs]``), with
        ``cant_solve_lower`` / ``cant_solve_upper`` (NaN without a can't-solve category).
        For the one point of ``method="map"`` the means are the values at the posterior mode
        and the HDI columns NaN. ``attrs``: ``level`` and ``hdi_prob``.
        For a rater-effects fit the columns :data:`RATER_COLUMNS`:
        ``n_answers`` (int64, from ``constant_data`` ``rater_answers``; NaN, float, for a
        result without it); ``cant_solve_odds_ratio`` (posterior mean),
        ``cant_solve_or_lower`` / ``cant_solve_or_upper`` (HDI) and ``p_overuse`` =
        P(odds ratio > 1); ``overuses_cant_solve``;
        ``favoured_label`` (the proper category with the largest posterior mean bias) and
        ``label_bias`` (posterior mean of the largest bias of a proper category over the
        rater's mean over proper categories, on the logit scale; 0 = no preference).
        Without a can't-solve category the can't-solve columns are NaN (and False).
        ``attrs``: ``level``, ``hdi_prob`` and ``overuse``.

    Raises
    ------
    ValueError
        If the result has neither rater effects ``b`` nor a latent-class model's
        ``accuracy`` and ``confusion``, if ``overuse`` is neither ``"hdi"`` nor a probability
        in (0, 1) (checked first, for every fit), if ``overuse`` is a probability for a
        latent-class fit, or if ``hdi_prob`` is invalid.
    TypeError
        If ``result`` is not a DataTree.

    Notes
    -----
    With ``p = softmax(eta_i + b_r)``, rater ``r``'s odds of "can't solve" on item ``i``
    against those of the typical rater (``b = 0``) on the same item are

    .. math::

        \mathrm{OR}_{ri} = \frac{p_{cs}/(1 - p_{cs})}{p^0_{cs}/(1 - p^0_{cs})}
        = \frac{e^{b_{r,cs}}}{\sum_{k \ne cs} w_{ik} e^{b_{rk}}},
        \qquad w_{ik} = \mathrm{softmax}_{k \ne cs}(\eta_{ik}),

    which depends on the item only through its distribution ``w_i`` over the proper
    classes. A rater's odds ratio is the geometric mean of ``OR_ri`` over its answers
    (each answer weighs its item), computed per posterior draw; the table gives its
    posterior mean and HDI (:func:`arviz.hdi`). Without ``answer_item`` in the result the
    typical item ``w = softmax(mu)`` (uniform without ``mu``) stands for every item.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> b = np.zeros((1, 100, 2, 3)); b[..., 1, 2] = np.log(5.0)   # rater "r2": 5x the odds
    >>> post = xr.Dataset({
    ...     "b": (("chain", "draw", "rater", "category"), b),
    ...     "eta": (("chain", "draw", "item", "category"), np.zeros((1, 100, 1, 3)))},
    ...     coords={"rater": ["r1", "r2"], "category": ["a", "b", "cs"]})
    >>> tree = xr.DataTree.from_dict({
    ...     "posterior": post,
    ...     "observed_data": xr.Dataset({"counts": (("item", "category"), [[2, 1, 1]])},
    ...                                coords={"category": ["a", "b", "cs"]}),
    ...     "constant_data": xr.Dataset({"rater_answers": ("rater", [2, 2]),
    ...                                  "answer_item": ("answer", [0, 0, 0, 0]),
    ...                                  "answer_rater": ("answer", [0, 0, 1, 1])},
    ...                                 coords={"rater": ["r1", "r2"]})})
    >>> tree.attrs["cant_solve"] = "cs"
    >>> summarize_raters(tree)["cant_solve_odds_ratio"].round(6).tolist()
    [1.0, 5.0]
    """
    import arviz as az
    import arviz_base
    import pandas as pd
    import xarray as xr

    if not isinstance(result, xr.DataTree):
        raise TypeError(
            f"result must be the xarray.DataTree of a rater model fit, but got "
            f"{type(result).__name__}"
        )
    rule = _check_overuse(overuse)  # the same answer to a bad value, whatever the model
    if (
        "posterior" in result.children
        and "b" not in result["posterior"].data_vars
        and {"accuracy", "confusion"} <= set(result["posterior"].data_vars)
    ):
        if rule is not None:
            model = result.attrs.get("model", result["posterior"].attrs.get("model"))
            fitted = f"a {model} fit" if model else "a latent-class fit"
            raise ValueError(
                "overuse is the rule of rater_effects' overuses_cant_solve column, but got "
                f"overuse={overuse!r} for {fitted}, whose rater table has no such column "
                "(it gives each rater's cant_solve_rate with its HDI instead); drop overuse"
            )
        return _summarize_class_raters(result, hdi_prob)
    if "posterior" not in result.children or "b" not in result["posterior"].data_vars:
        model = result.attrs.get("model")
        raise ValueError(
            "level='rater' needs a fit of a rater model: rater_effects (posterior 'b' with "
            "dims rater x category) or dawid_skene (posterior 'accuracy' and 'confusion'), "
            "e.g. ambppl.fit(answers, 'rater_effects') or ambppl.fit(answers, 'dawid_skene') "
            "on one row per answer with rater ids, but this result"
            f"{f' (model {model!r})' if model else ''} has neither"
        )
    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    hdi_prob = check_prob(hdi_prob, "hdi_prob")
    post = result["posterior"]
    b = post["b"].transpose("chain", "draw", "rater", "category")
    raters = b["rater"].values
    attrs = {**post.attrs, **result.attrs}
    cs = cant_solve_index(result, attrs, observed_counts(result))
    labels = list(b["category"].values)
    proper = [k for k in range(len(labels)) if k != cs]
    constant = result["constant_data"] if "constant_data" in result.children else None

    columns: dict[str, Any] = {}
    columns["n_answers"] = _rater_answers(constant, len(raters))
    bv = b.values
    if cs is None:
        nan = np.full(len(raters), np.nan)
        columns.update(
            cant_solve_odds_ratio=nan,
            cant_solve_or_lower=nan,
            cant_solve_or_upper=nan,
            p_overuse=nan,
            overuses_cant_solve=np.zeros(len(raters), dtype=bool),
        )
    else:
        log_or = _log_odds_ratios(post, constant, bv, cs, proper)
        odds = b.isel(category=0, drop=True).copy(data=np.exp(log_or))
        hdi = az.hdi(odds, prob=hdi_prob, dim=["chain", "draw"]).transpose("rater", "ci_bound")
        lower = hdi.sel(ci_bound="lower").values
        p_over = (log_or > 0).mean(axis=(0, 1))
        columns["cant_solve_odds_ratio"] = odds.mean(("chain", "draw")).values
        columns["cant_solve_or_lower"] = lower
        columns["cant_solve_or_upper"] = hdi.sel(ci_bound="upper").values
        columns["p_overuse"] = p_over
        columns["overuses_cant_solve"] = lower > 1 if rule is None else p_over >= rule
    bp = bv[..., proper]
    bias = bp - bp.mean(axis=-1, keepdims=True)
    columns["favoured_label"] = np.asarray(labels, dtype=object)[
        np.asarray(proper)[bias.mean(axis=(0, 1)).argmax(axis=-1)]
    ]
    columns["label_bias"] = bias.max(axis=-1).mean(axis=(0, 1))
    table = pd.DataFrame(columns, index=pd.Index(raters, name="rater"))
    table.attrs.update({"level": "rater", "hdi_prob": hdi_prob, "overuse": overuse})
    return table


def _summarize_class_raters(result: Any, hdi_prob: float | None) -> pd.DataFrame:
    """One row per rater of a latent-class fit (``dawid_skene``): :data:`CLASS_RATER_COLUMNS`.

    ``accuracy`` is the posterior mean of ``sum_k pi_k theta_{rkk}`` (the probability that
    the rater answers the true class of an item drawn from the population) and
    ``accuracy_lower`` / ``_upper`` its HDI (NaN for the one point of ``method="map"``, the
    value at the posterior mode); ``cant_solve_rate`` the same for
    ``sum_k pi_k theta_{rk,cs}`` (NaN without a can't-solve category). The per-class rates
    are the rater's ``confusion`` rows in the posterior.
    """
    import arviz as az
    import arviz_base
    import pandas as pd

    if hdi_prob is None:
        hdi_prob = float(arviz_base.rcParams["stats.ci_prob"])
    hdi_prob = check_prob(hdi_prob, "hdi_prob")
    post = result["posterior"]
    raters = post["accuracy"]["rater"].values
    point = result.attrs.get("method", post.attrs.get("method")) in POINT_METHODS
    constant = result["constant_data"] if "constant_data" in result.children else None
    columns: dict[str, Any] = {"n_answers": _rater_answers(constant, len(raters))}
    sources = {n: post[n] for n in ("accuracy", "cant_solve_rate") if n in post.data_vars}
    cs_label = result.attrs.get("cant_solve", post.attrs.get("cant_solve"))
    if "cant_solve_rate" not in sources and cs_label is not None:
        # not stored (fit's var_names keeps q and the measures besides what the model always
        # stores): sum_k pi_k theta_{rk,cs} from the stored prevalences and confusion rows
        confusion = post["confusion"].sel(category=str(cs_label))
        sources["cant_solve_rate"] = (post["pi"] * confusion).sum("class")
    for name, prefix in (("accuracy", "accuracy"), ("cant_solve_rate", "cant_solve")):
        if name not in sources:
            nan = np.full(len(raters), np.nan)
            columns.update({name: nan, f"{prefix}_lower": nan, f"{prefix}_upper": nan})
            continue
        draws = sources[name].transpose("chain", "draw", "rater")
        columns[name] = draws.mean(("chain", "draw")).values
        if point:  # the posterior mode (method="map"): no interval
            columns[f"{prefix}_lower"] = columns[f"{prefix}_upper"] = np.full(len(raters), np.nan)
            continue
        hdi = az.hdi(draws, prob=hdi_prob, dim=["chain", "draw"]).transpose("rater", "ci_bound")
        columns[f"{prefix}_lower"] = hdi.sel(ci_bound="lower").values
        columns[f"{prefix}_upper"] = hdi.sel(ci_bound="upper").values
    table = pd.DataFrame(columns, index=pd.Index(raters, name="rater"))
    table.attrs.update({"level": "rater", "hdi_prob": hdi_prob})
    return table


def _rater_answers(constant: Any, n_raters: int) -> np.ndarray:
    """Each rater's number of answers, int64, from ``constant_data`` ``rater_answers`` (every
    fit of a rater model stores it); NaN (float) for a result without it."""
    if constant is None or "rater_answers" not in constant.data_vars:
        return np.full(n_raters, np.nan)
    return np.asarray(constant["rater_answers"].values).astype(np.int64)


def _check_overuse(overuse: Any) -> float | None:
    """None for the HDI rule, else the probability threshold."""
    if isinstance(overuse, str):
        if overuse != "hdi":
            raise ValueError(
                f"overuse must be 'hdi' or a probability in (0, 1), but got {overuse!r}"
            )
        return None
    try:
        return check_prob(overuse, "overuse")
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"overuse must be 'hdi' or a probability in (0, 1), but got {overuse!r}"
        ) from err


def _log_odds_ratios(
    post: Any, constant: Any, b: np.ndarray, cs: int, proper: list[int]
) -> np.ndarray:
    """log OR per chain, draw and rater: the mean over the rater's answers of log OR_ri."""
    chains, draws, n_raters, _ = b.shape
    has_answers = constant is not None and {"answer_item", "answer_rater"} <= set(
        constant.data_vars
    )
    if has_answers:
        item = np.asarray(constant["answer_item"].values, dtype=np.int64)
        rater = np.asarray(constant["answer_rater"].values, dtype=np.int64)
        eta = post["eta"].transpose("chain", "draw", "item", "category").values[..., proper]
    else:  # the typical item: mu, or uniform over the proper classes
        if "mu" in post.data_vars:
            mu = post["mu"].transpose("chain", "draw", "category").values[..., proper]
        else:
            mu = np.zeros((chains, draws, len(proper)))
        eta = mu[:, :, None, :]
        rater = np.arange(n_raters)
        item = np.zeros(n_raters, dtype=np.int64)
    per_rater = np.bincount(rater, minlength=n_raters).astype(float)
    # answers x raters, 1 / (answers of the rater) where the rater gave the answer: a matrix
    # product then averages each rater's log odds ratios.
    weights = np.zeros((len(rater), n_raters))
    with np.errstate(divide="ignore"):
        weights[np.arange(len(rater)), rater] = 1.0 / per_rater[rater]
    out = np.empty((chains, draws, n_raters))
    flat_b = b.reshape(chains * draws, n_raters, -1)
    flat_eta = eta.reshape(chains * draws, eta.shape[2], -1)
    flat_out = out.reshape(chains * draws, n_raters)
    for start in range(0, chains * draws, _BLOCK):
        sl = slice(start, start + _BLOCK)
        e = flat_eta[sl][:, item]  # (block, answers, proper)
        w = np.exp(e - e.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        bb = flat_b[sl][:, rater]  # (block, answers, K)
        bp = bb[..., proper]
        m = bp.max(axis=-1, keepdims=True)
        log_denominator = np.log((w * np.exp(bp - m)).sum(axis=-1)) + m[..., 0]
        log_or = bb[..., cs] - log_denominator  # (block, answers)
        flat_out[sl] = log_or @ weights
    flat_out[:, per_rater == 0] = np.nan  # raters without answers: no odds ratio
    return out
