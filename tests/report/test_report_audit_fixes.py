"""Fixes of the report audit: a design ConvergenceWarning kept by the fit was dropped from
"Read this first" whenever the fit had a convergence record; a prior-data conflict was
worded as "the data do not pin down"; the warnings of reading the data never reached the
page; a closed-form check that could not run left the first section silent; the sensitivity
priors were rounded; pages of method="laplace"/"map" named command-line options from Python
and called the mode's values posterior means with HDIs; control characters of labels and
ids were written raw into the HTML."""

from __future__ import annotations

import json
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import page_section, visible_text

import ambppl
from ambppl.cli import main
from ambppl.data import read_long
from ambppl.inference.convergence import ConvergenceWarning, convergence_message
from ambppl.inference.fitting import fit
from ambppl.internal.warned import warnings_attr
from ambppl.report import build_report, render_report, score_report, writer

#: A design warning of the kind dawid_skene raises before sampling (a ConvergenceWarning
#: without a record): it is no convergence verdict.
DESIGN = (
    "dawid_skene: the answers agree on every one of the 12 items with two or more answers, "
    "so the data say nothing about the raters' accuracies"
)

#: Control characters: C0 (but tab, newline, form feed, carriage return, which HTML allows
#: as whitespace), DEL and C1: a raw one in the page is an HTML parse error.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def _read_first(page: str) -> list[str]:
    """The lines of the page's first section (warnings and findings), as text."""
    listed = re.search(r'<ul id="read-first">(.*?)</ul>', page_section(page, "verdict"), re.S)
    assert listed is not None, "the first section lists nothing"
    return [
        visible_text(item) for item in re.findall(r"<li[^>]*>(.*?)</li>", listed.group(1), re.S)
    ]


def _counts(seed: int = 8, n_items: int = 8) -> xr.DataArray:
    counts = np.random.default_rng(seed).multinomial(10, [0.5, 0.3, 0.2], size=n_items)
    return ambppl.read_annotations(counts, cant_solve=2)


def _spread(n_items: int = 30) -> xr.DataArray:
    """Items with q ~ Dirichlet(1, 1, 1), 10 answers each: spread enough that empirical
    Bayes finds kappa inside its bounds (no warning)."""
    rng = np.random.default_rng(12)
    counts = np.vstack([rng.multinomial(10, q) for q in rng.dirichlet(np.ones(3), n_items)])
    return ambppl.read_annotations(counts, cant_solve=2)


def _as_nuts(result: xr.DataTree, record: dict) -> xr.DataTree:
    """Exact draws relabelled as a NUTS fit with the convergence record ``record``."""
    result.attrs["method"] = "nuts"
    result["posterior"].attrs["method"] = "nuts"
    shape = (result["posterior"].sizes["chain"], result["posterior"].sizes["draw"])
    result["sample_stats"] = xr.DataTree(
        dataset=xr.Dataset({"diverging": (("chain", "draw"), np.zeros(shape, dtype=bool))})
    )
    result.attrs["convergence"] = json.dumps(record)
    return result


def _kept(result: xr.DataTree, *texts: str) -> None:
    """Store ``texts`` as the ConvergenceWarnings the fit kept (``attrs["fit_warnings"]``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for text in texts:
            warnings.warn(ConvergenceWarning(text), stacklevel=1)
    result.attrs["fit_warnings"] = warnings_attr(caught)


# ----------------------------------------------------- 1. design warnings with a record


def test_a_kept_design_warning_is_listed_on_a_converged_fit() -> None:
    """The fit met the standard, and kept dawid_skene's design warning: the page said
    "The fit met the convergence standard" in green and nothing else (the warning was given
    the convergence record and dropped as if it were the verdict)."""
    passed = {"variables": ["amb"], "r_hat": 1.004, "ess_bulk": 812.0, "ess_tail": 650.0}
    passed.update(divergences=0, passed=True, failed=[])
    result = _as_nuts(fit(_counts(), draws=300, chains=2, random_seed=11), passed)
    _kept(result, DESIGN)
    page = render_report(result, top=2, random_seed=1)
    verdict = visible_text(page_section(page, "verdict"))
    assert verdict.startswith("Read this first The fit met the convergence standard (R-hat")
    assert "on every diagnosed parameter; details under Convergence, but:" in verdict
    assert _read_first(page) == [f"Warning: {DESIGN}"]
    assert '<span class="ok">' not in page_section(page, "verdict")


def test_only_the_verdict_itself_is_folded_into_an_unconverged_fit() -> None:
    """The fit missed the standard and kept two ConvergenceWarnings: its verdict (said by the
    first section from the record, not listed again) and the design warning (listed)."""
    record = {
        "variables": ["amb"],
        "chains": 2,
        "draws": 300,
        "r_hat": 1.2,
        "ess_bulk": 35.0,
        "ess_tail": 40.0,
        "divergences": 0,
        "passed": False,
        "failed": ["r_hat", "ess_bulk", "ess_tail"],
        "worst": [
            {"parameter": "amb[0]", "variable": "amb", "index": [0], "r_hat": 1.2,
             "ess_bulk": 35.0, "ess_tail": 40.0},
        ],
    }  # fmt: skip
    result = _as_nuts(fit(_counts(), draws=300, chains=2, random_seed=11), record)
    # the verdict as ambppl.fit words it (check_convergence), read back from the stored JSON
    stored = json.loads(result.attrs["convergence"])
    model = result.attrs["model"]
    verdict_text = convergence_message(stored, what=f"the nuts fit of {model!r}", model=model)
    _kept(result, DESIGN, verdict_text)
    page = render_report(result, top=2, random_seed=1)
    verdict = visible_text(page_section(page, "verdict"))
    assert verdict.startswith("The fit did not converge")
    assert _read_first(page) == [f"Warning: {DESIGN}"]
    assert "missed the convergence standard (R-hat <= 1.01" not in verdict
    # a kept text that only looks like a verdict (another record's) is listed, not dropped
    other = convergence_message({**stored, "r_hat": 1.5}, what="the nuts fit", model=model)
    _kept(result, other)
    assert _read_first(render_report(result, top=2, random_seed=1))[0].startswith(
        "Warning: the nuts fit missed the convergence standard"
    )


@pytest.mark.slow  # compiles and samples dawid_skene (about 15 s)
def test_a_real_unanimous_dawid_skene_fit_lists_its_design_warning() -> None:
    """The audit's repro: 12 items x 3 raters, every item unanimous; the NUTS fit keeps the
    design warning and (short chains) its verdict; render_report(result) lists the first."""
    rows = [(i, r, "a" if i % 2 else "b") for i in range(12) for r in ("r1", "r2", "r3")]
    data = read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))
    with warnings.catch_warnings(record=True):  # shown (and kept), not errors
        warnings.simplefilter("always")
        result = fit(
            data, "dawid_skene", draws=100, chains=2, random_seed=1, sample_kwargs={"tune": 100}
        )
    kept = json.loads(result.attrs["fit_warnings"])
    assert any("agree on every one of the 12 items" in k["message"] for k in kept)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        page = render_report(result, top=3, random_seed=1)
    lines = _read_first(page)
    assert sum("agree on every one of the 12 items" in line for line in lines) == 1, lines
    assert not any("missed the convergence standard (R-hat <=" in line for line in lines)


# ----------------------------------------------------- 2. prior-data conflict


def _sensitivity_rows() -> list[dict]:
    """A fabricated hyperprior sensitivity table (threshold 0.05), one row per diagnosis of
    ambppl.hyperprior_sensitivity: prior-data conflict, weak likelihood, likelihood not
    computed, ok."""
    return [
        {"parameter": "kappa", "prior": 2.4, "likelihood": 0.19, "pinned_down": False,
         "diagnosis": "prior-data conflict"},
        {"parameter": "mu[a]", "prior": 0.21, "likelihood": 0.01, "pinned_down": False,
         "diagnosis": "weak likelihood"},
        {"parameter": "sigma", "prior": 0.3, "likelihood": float("nan"), "pinned_down": False,
         "diagnosis": "prior-sensitive (likelihood not computed)"},
        {"parameter": "mu[b]", "prior": 0.01, "likelihood": 0.3, "pinned_down": True,
         "diagnosis": "ok"},
    ]  # fmt: skip


@pytest.fixture
def sensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    """summarize adds the fabricated table, as it does for a fit with a log_prior group."""
    real = writer.summarize

    def summarize(result, **kwargs):
        table = real(result, **kwargs)
        table.attrs["hyperprior_sensitivity"] = {"threshold": 0.05, "rows": _sensitivity_rows()}
        return table

    monkeypatch.setattr(writer, "summarize", summarize)


def test_a_prior_data_conflict_is_not_worded_as_the_prior_s_choice(sensitive) -> None:
    page = render_report(fit(_counts(), draws=200, chains=2, random_seed=1), top=2)
    lines = _read_first(page)
    conflict = [line for line in lines if "kappa" in line]
    assert len(conflict) == 1 and conflict[0].startswith(
        "The data pull against the prior of kappa (prior-data conflict: power-scaling "
        "sensitivity ≥ 0.05 to both the prior and the likelihood)"
    ), lines
    assert "prior's choice" not in conflict[0] and "check that the prior" in conflict[0]
    weak = [line for line in lines if "mu[a]" in line]
    assert weak == [
        "The data do not pin down mu[a]: its posterior follows its own prior (power-scaling "
        "prior sensitivity ≥ 0.05, likelihood sensitivity below it); read it as the prior's "
        "choice, not a measurement (details under Model and prior)."
    ]
    unknown = [line for line in lines if "sigma" in line]
    assert len(unknown) == 1 and unknown[0].startswith(
        "The posterior of sigma moves with its prior"
    )
    assert "no log-likelihood" in unknown[0] and "prior's choice" not in unknown[0]
    assert not any("mu[b]" in line for line in lines)  # pinned down
    # the model section says the same, each under its own diagnosis
    model = visible_text(page_section(page, "model"))
    assert "The data pull against the prior of kappa (prior-data conflict" in model
    assert "The data do not pin down mu[a]: its posterior follows its own prior" in model
    assert "The posterior of sigma moves with its prior" in model
    assert "The data do not pin down kappa" not in model


def test_a_learned_kappa_in_conflict_is_called_a_compromise(sensitive) -> None:
    """The learned-prior section of an (empirical-Bayes) fit with mu and kappa, given the
    fabricated diagnoses: kappa in prior-data conflict, beta not bold, no "do not pin down
    kappa"."""
    result = fit(_spread(), "hierarchical_dirichlet", method="empirical_bayes")
    page = render_report(result, top=2, random_seed=1)
    learned = page_section(page, "learned-prior")
    said = visible_text(learned)
    assert "The data pull against the prior of kappa (prior-data conflict" in said
    assert "Read κ and the implied β below as that compromise, not a measurement" in said
    assert "a compromise: where the data's pull stops is set by the prior of κ" in said
    assert "The data do not pin down kappa" not in said
    assert "<strong>" not in learned.split('<div class="figs">')[0]
    line = next(x for x in _read_first(page) if "kappa" in x)
    assert "reading it and the implied symmetric beta as a measurement" in line
    assert "(details under Learned prior)" in line


# ----------------------------------------------------- 3. warnings of reading the data

WIDE_HEADER = "pos,neg,?\nneg,neg,pos\npos,pos,pos\nneg,?,neg\npos,neg,neg\n"
#: The reader's warning for a wide table whose header line holds answer labels.
HEADER_WARNING = "the rater names ['pos', 'neg', '?'] of the wide table"


def test_the_warnings_of_reading_reach_the_page_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wideh.csv"
    path.write_text(WIDE_HEADER, encoding="utf-8")
    out = tmp_path / "wideh.html"
    argv = ["report", str(path), "--layout", "wide", "--cant-solve", "?", "--top", "2"]
    assert (
        main([*argv, "--draws", "100", "--chains", "2", "--seed", "1", "-q", "-o", str(out)]) == 0
    )
    err = capsys.readouterr().err
    assert err.count("warning: ") == 1 and HEADER_WARNING in err, err  # printed once
    page = out.read_text(encoding="utf-8")
    lines = _read_first(page)
    assert len(lines) == 1 and lines[0].startswith(f"Warning: {HEADER_WARNING}"), lines
    assert "pass --no-header" in lines[0]  # in the command's words
    assert ", but:" in visible_text(page_section(page, "verdict"))


@pytest.mark.parametrize("route", ["score", "fit"])
def test_build_report_lists_the_warnings_of_reading(route: str) -> None:
    """build_report(read_warnings=...) lists them first, on both routes, and does not raise
    them again (the caller saw them)."""
    with warnings.catch_warnings(record=True) as read:
        warnings.simplefilter("always")
        warnings.warn("the reader saw an odd header", UserWarning, stacklevel=1)
    model = {"score": {}, "fit": {"model": "hierarchical_dirichlet", "method": "empirical_bayes"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning comes out of the call
        page = build_report(
            _spread(), **model[route], top=2, draws=100, chains=2, read_warnings=read
        )
    assert _read_first(page)[0] == "Warning: the reader saw an odd header"
    with pytest.raises(TypeError, match=r"^read_warnings must be a list of warnings .*"):
        build_report(_counts(), read_warnings="one text")
    with pytest.raises(TypeError, match=r"^read_warnings must hold warnings"):
        score_report(_counts(), read_warnings=[1])


# ----------------------------------------------------- 4. closed-form check not run


def test_a_closed_form_check_that_could_not_run_is_said_first(tmp_path: Path) -> None:
    """20 draws per chain: check_moments refuses (TooFewDraws); the first section stayed
    green and silent."""
    out = tmp_path / "ex20.html"
    example = str(ambppl.data.example_path("weather_sentiment"))
    argv = ["report", example, "--cant-solve", "I can't tell", "--top", "2"]
    assert main([*argv, "--draws", "20", "--chains", "2", "--seed", "1", "-q", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    agreement = visible_text(page_section(page, "agreement"))
    assert agreement.startswith("Draws against the closed-form posterior moments The draws")
    reason = agreement.split("not checked against the closed forms: ", 1)[1].rstrip(".")
    lines = _read_first(page)
    assert lines == [
        "The draws were not checked against the closed-form posterior moments: "
        f"{reason} (details under Closed-form check)."
    ]
    verdict = page_section(page, "verdict")
    assert '<span class="ok">' not in verdict and ", but:" in visible_text(verdict)


# ----------------------------------------------------- 5. priors as given


def test_the_sensitivity_priors_are_printed_as_given() -> None:
    result = fit(_counts(), draws=100, chains=2, random_seed=1)
    page = render_report(result, top=2, random_seed=1, priors=[0.25, 1.0, 0.1234567])
    said = visible_text(page_section(page, "sensitivity"))
    assert "concentration 0.25, 1.0, 0.1234567 (" in said
    assert "<th>mean<br>prior 0.1234567</th>" in page and "<th>mean<br>prior 0.25</th>" in page


# ----------------------------------------------------- 6. laplace and map pages


def test_laplace_advice_names_python_keywords_from_python_and_options_from_the_cli() -> None:
    result = fit(_counts(), draws=100, chains=2, random_seed=1)
    result.attrs["method"] = "laplace"  # the page words what the draws are from the method
    python = visible_text(page_section(render_report(result, top=2, random_seed=1), "convergence"))
    assert 'compare with method="nuts" on the same data' in python and "--method" not in python
    page = render_report(result, top=2, random_seed=1, command="ambppl report x.csv")
    command = visible_text(page_section(page, "convergence"))
    assert "compare with --method nuts on the same data" in command


def _answers() -> pd.DataFrame:
    """24 items, 4 raters (r3 answers at random), seeded: not unanimous."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(24):
        truth = "ab"[i % 2]
        for r in range(4):
            label = "ab"[rng.integers(0, 2)] if r == 3 or rng.random() < 0.15 else truth
            rows.append((f"t{i}", f"r{r}", label))
    return read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]))


def test_a_map_page_words_its_point_estimates() -> None:
    result = fit(_answers(), "dawid_skene", method="map")
    page = render_report(result, top=2, random_seed=1)
    convergence = visible_text(page_section(page, "convergence"))
    assert 'refit with method="laplace" (draws around this mode) or method="nuts"' in convergence
    raters = visible_text(page_section(page, "raters"))
    assert 'at the posterior mode (method="map": one point, so the HDI columns are empty)' in (
        raters
    )
    assert "posterior mean" not in raters and "[–, –]" in raters
    distribution = page_section(page, "distribution")
    assert "Posterior means (filled)" not in distribution
    assert "Values at the posterior mode (filled" in visible_text(distribution)
    page = render_report(result, top=2, random_seed=1, command="ambppl report x.csv")
    assert "refit with --method laplace (draws around this mode) or --method nuts" in visible_text(
        page_section(page, "convergence")
    )


# ----------------------------------------------------- 7. control characters


class _Strict(HTMLParser):
    """Collects the text of every table cell."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_control_characters_of_labels_and_ids_are_written_as_escapes() -> None:
    values = np.random.default_rng(5).multinomial(8, [0.4, 0.4, 0.2], size=6)
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={
            "item": ["i\x02d", "tab\there", *(f"i{k}" for k in range(4))],
            "category": ["y\x01z", "x\tq", "cs\x7f"],
        },
        attrs={"cant_solve": "cs\x7f", "source": "ctl\x1b.csv"},
    )
    result = fit(ambppl.read_annotations(counts), draws=100, chains=2, random_seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the figure font's missing glyphs, if any
        page = render_report(result, top=6, random_seed=1)
    assert RAW_CONTROL.search(page) is None
    assert "x\tq" not in page and "tab\there" not in page  # not raw: a tab would vanish
    parser = _Strict()
    parser.feed(page)
    cells = parser.cells
    # as the figures draw them (ambppl.report.figures.plain): y\x01z, x\tq, cs\x7f
    for shown in ("y\\x01z", "x\\tq", "cs\\x7f (can't solve)", "i\\x02d", "tab\\there"):
        assert shown in cells, shown
    assert "ctl\\x1b.csv" in visible_text(page_section(page, "overview"))
    assert 'title="i\\x02d"' in page  # the id cell's tooltip too
