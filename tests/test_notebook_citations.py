"""The notebooks' prose cites sections of the paper that exist (``../shared/paper``)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, SHARED

PAPER = SHARED / "paper" / "ambiguity_paper.tex"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: "section 2", "section 3.1", "sections 3.4-3.5"
CITATION = re.compile(r"\bsections? (\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?")


def paper_sections() -> set[str]:
    """The numbers of the paper's sections and subsections before the appendix."""
    numbers, section, subsection = set(), 0, 0
    for line in PAPER.read_text(encoding="utf-8").splitlines():
        if line.startswith("\\appendix"):
            break
        if line.startswith("\\section{"):
            section, subsection = section + 1, 0
            numbers.add(str(section))
        elif line.startswith("\\subsection{"):
            subsection += 1
            numbers.add(f"{section}.{subsection}")
    return numbers


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper (../shared/paper) is absent")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_cited_section_is_in_the_paper(path):
    sections = paper_sections()
    assert {"2.3", "3.3", "3.5"} <= sections and "2.4" not in sections  # the paper's layout
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    cited = {n for m in CITATION.finditer(prose) for n in m.groups() if n}
    assert cited <= sections, sorted(cited - sections)


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper (../shared/paper) is absent")
def test_the_bias_notebook_names_each_estimator_of_the_papers_figure():
    # fig:biases shows the plug-in and the posterior mean and mode; notebook 01 draws no mode
    # (ambppl.estimate has none) and must say so rather than leave it out unsaid
    tex = PAPER.read_text(encoding="utf-8")
    caption = tex[: tex.index("\\label{fig:biases}")].rsplit("\\caption{", 1)[1]
    assert "plug-in" in caption and "(posterior mean and mode)" in caption
    (path,) = [p for p in NOTEBOOKS if p.name.startswith("01_")]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    prose = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    prose = " ".join(prose.split())
    for estimator in ("plug-in", "posterior-mean", "posterior mode"):
        assert estimator in prose, estimator
