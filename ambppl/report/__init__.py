"""The HTML diagnostics report of a fit: a Jinja2 template, the figures, the writer.

``render_report(result, ...)`` returns one self-contained HTML page; ``ambppl report``
writes it to a file. Importing this package imports neither matplotlib nor jinja2; the
writer imports them when it runs.
"""

from ambppl.report.writer import SENSITIVITY_PRIORS, render_report

__all__ = ["SENSITIVITY_PRIORS", "render_report"]
