"""The HTML diagnostics report of a fit: a Jinja2 template, the figures, the writer.

``render_report(result, ...)`` returns one self-contained HTML page of a fit;
``score_report(data, ...)`` the same page for ``dirichlet_categorical`` without per-item
draws (distinct count vectors); ``ambppl report`` writes it to a file. Importing this
package imports neither matplotlib nor jinja2; the writer imports them when it runs.
"""

from ambppl.report.scored import CHECK_VECTORS, score_report
from ambppl.report.writer import SENSITIVITY_PRIORS, TABLE_ROWS, render_report

__all__ = ["CHECK_VECTORS", "SENSITIVITY_PRIORS", "TABLE_ROWS", "render_report", "score_report"]
