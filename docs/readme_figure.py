"""Draw the README's picture, ``docs/_static/posteriors.png``, with ambppl's own plotting.

The paper's posterior figure: the exact posterior densities of the three measures for two
count vectors, with the closed-form mean and mean +- 1 sd (``plot_posterior_comparison``).

    .venv/bin/python docs/readme_figure.py
"""

from __future__ import annotations

from pathlib import Path

from ambppl.report import plot_posterior_comparison

OUT = Path(__file__).resolve().parent / "_static" / "posteriors.png"


def main() -> None:
    fig = plot_posterior_comparison(counts=[(5, 5, 5), (5, 0, 0)], figsize=(9.0, 4.2))
    fig.savefig(OUT, dpi=80)
    print(f"{OUT}: {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
