"""``ValidationResult``, the one type every check returns, and the family-wise decision."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class NotApplicable(ValueError):
    """A check that does not apply to this kind of fit (no closed form for the model, a
    learned prior where the exact law needs a fixed one, a point where draws are needed).

    :func:`ambppl.validation.check_fit` lists such a check as skipped, with the message; any
    other error in a check is a failure of the check, not a reason to skip it.
    """


class TooFewDraws(NotApplicable):
    """A check that applies to this kind of fit but not to these draws: too few of them, or
    too few to show what is tested (:func:`ambppl.validation._draws.unseen_items`). More
    draws make it apply."""


@dataclass(frozen=True, eq=False)
class ValidationResult:
    """The verdict of one validation check.

    Attributes
    ----------
    check : str
        Name of the check: ``"moments"`` (:func:`~ambppl.validation.check_moments`),
        ``"density"`` (:func:`~ambppl.validation.check_density`), ``"predictive"``
        (:func:`~ambppl.validation.check_predictive`), ``"sbc"``
        (:func:`~ambppl.validation.sbc`), ``"reference"``
        (:func:`~ambppl.validation.check_reference`, one case), ``"reference_cases"``
        (:func:`~ambppl.validation.run_reference_cases`, all of them) or ``"convergence"``
        (the convergence record of a NUTS fit, in ``FitCheck.checks`` of
        :func:`~ambppl.validation.check_fit`).
    passed : bool
        True when the family-wise test did not reject at level ``level``. ``bool(result)`` is
        the same.
    statistic : float
        The check's summary statistic (stated per check, e.g. the largest ``|z|``).
    p_value : float or None
        The family-wise p-value (Holm-adjusted smallest p-value) where one exists.
    level : float
        The false-alarm rate the check was run at (``alpha``).
    table : pandas.DataFrame
        One row per item x measure (or per case, statistic, parameter) with the row's own
        statistic, p-value and Holm-adjusted p-value where they exist, and ``flagged``.
    description : str
        One sentence saying what was tested.
    details : dict
        Arrays the plot needs (draws, exact curves, ranks); not part of the verdict.
    plotter : callable or None
        The check's figure, ``plotter(result, **kwargs) -> matplotlib.figure.Figure``, that
        :meth:`plot` calls (None: the check has no figure).
    """

    check: str
    passed: bool
    statistic: float
    p_value: float | None
    level: float
    table: Any
    description: str = ""
    details: dict[str, Any] = field(default_factory=dict, repr=False)
    plotter: Callable[..., Any] | None = field(default=None, repr=False)

    def __bool__(self) -> bool:
        return bool(self.passed)

    @property
    def n_flagged(self) -> int:
        """Number of rows of :attr:`table` flagged at the family-wise level."""
        if "flagged" not in self.table.columns:
            return 0
        return int(np.asarray(self.table["flagged"], dtype=bool).sum())

    def plot(self, **kwargs: Any) -> Any:
        """Draw the check's figure (matplotlib) and return the ``Figure``.

        Parameters
        ----------
        **kwargs
            Passed to the check's plotting function (e.g. ``n_items`` for how many items to
            show).

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        ValueError
            If the check has nothing to plot (e.g. no item had two proper classes).
        """
        if self.plotter is None:
            raise ValueError(f"the {self.check!r} check has nothing to plot")
        return self.plotter(self, **kwargs)

    def _verdict(self) -> str:
        word = "passed" if self.passed else "FAILED"
        p = "" if self.p_value is None else f", p = {self.p_value:.3g}"
        return (
            f"{self.check}: {word} at level {self.level:g} (statistic {self.statistic:.4g}{p}; "
            f"{self.n_flagged} of {len(self.table)} rows flagged)"
        )

    def __repr__(self) -> str:
        return f"<ValidationResult {self._verdict()}>"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        head = (
            f'<p><b style="color:{colour}">{html.escape(self._verdict())}</b></p>'
            f"<p>{html.escape(self.description)}</p>"
        )
        table = self.table
        if "flagged" in table.columns and len(table) > 20:
            order = np.argsort(~np.asarray(table["flagged"], dtype=bool), kind="stable")
            table = table.iloc[order[:20]]
            head += f"<p>first 20 of {len(self.table)} rows, flagged first</p>"
        return head + table.to_html(float_format=lambda x: f"{x:.4g}", escape=True)


def holm(p_values: Any) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control, any dependence).

    Parameters
    ----------
    p_values : array_like
        Raw p-values; NaN entries (no test) stay NaN and do not count in the family.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, ``min(1, max_{j <= i} (m - j + 1) p_(j))`` in the sorted order.

    References
    ----------
    .. [1] Holm, S. (1979), "A simple sequentially rejective multiple test procedure",
       Scandinavian Journal of Statistics 6(2), 65-70.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    m = int(ok.sum())
    if m == 0:
        return out
    flat = p[ok]
    order = np.argsort(flat, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * flat[order]))
    back = np.empty(m)
    back[order] = adjusted
    out[ok] = back
    return out


def decide(table: Any, p_column: str, alpha: float) -> tuple[bool, float | None]:
    """Add ``p_holm`` and ``flagged`` columns; return (passed, family-wise p-value)."""
    adjusted = holm(table[p_column].to_numpy(dtype=np.float64))
    table["p_holm"] = adjusted
    table["flagged"] = np.nan_to_num(adjusted, nan=1.0) <= alpha
    finite = adjusted[np.isfinite(adjusted)]
    p = float(finite.min()) if finite.size else None
    return (p is None or p > alpha), p


def at_level(result: ValidationResult, level: float) -> ValidationResult:
    """The same check decided at another family-wise level.

    Holm's adjusted p-values (``table["p_holm"]``) do not depend on the level, so only
    ``flagged``, ``passed`` and ``level`` change: a row is flagged where ``p_holm <= level``
    and the check passes where its family-wise p-value exceeds ``level``, exactly as the
    check run at ``level`` decides (:func:`decide`).
    """
    table = result.table.copy()
    if "p_holm" in table.columns:
        adjusted = table["p_holm"].to_numpy(dtype=np.float64)
        table["flagged"] = np.nan_to_num(adjusted, nan=1.0) <= level
    passed = result.p_value is None or result.p_value > level
    return dataclasses.replace(result, passed=passed, level=level, table=table)
