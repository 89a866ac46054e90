"""The report's first section, "Read this first": the warnings of the fit and of the report's
own computations, and the report's findings that limit trust in the numbers, open the page
before any table, for every route (the page used to drop the fit's design warnings and to
open a converged fit whose prior decides kappa with a plain green verdict)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import page_section, visible_text

import ambppl
from ambppl.cli import main
from ambppl.inference.catalog import get_model
from ambppl.inference.convergence import ConvergenceWarning
from ambppl.inference.fitting import fit
from ambppl.internal.warned import collecting_warnings
from ambppl.report import build_report, render_report, score_report, writer

#: The warning of hierarchical_dirichlet's empirical Bayes when kappa runs to its bound.
AT_BOUND = "the marginal likelihood is largest at a bound of log(kappa * mu)"
#: dawid_skene's warning before sampling when every item's answers agree (40 items).
UNANIMOUS = "dawid_skene: the answers agree on every one of the 40 items with two or more"


def _opens_with(page: str, *lines: str, elsewhere: bool = False) -> str:
    """Assert that the page's first section lists each of ``lines`` once, before any table,
    that nothing else on the page repeats them (unless ``elsewhere``: a finding whose details
    section says it too) and that the verdict line is no plain success; return the
    section's text."""
    first = page.index("<section")
    assert first == page.index('<section id="verdict">')
    listed = re.search(r'<ul id="read-first">(.*?)</ul>', page, flags=re.S)
    assert listed is not None and listed.start() > first
    assert listed.end() < page.index("<table")
    items = [
        visible_text(item) for item in re.findall(r"<li[^>]*>(.*?)</li>", listed.group(1), re.S)
    ]
    for line in lines:
        assert sum(line in item for item in items) == 1, (line, items)
        assert elsewhere or visible_text(page).count(line) == 1, line
    verdict = page_section(page, "verdict")
    assert '<span class="ok">' not in verdict and '<a href="#verdict" class="warn">' in page
    return visible_text(verdict)


def _alike() -> xr.DataArray:
    """60 items of two classes, each 2:3 or 3:2: less spread than one shared response
    distribution gives, so the marginal likelihood of empirical Bayes grows as kappa -> inf."""
    return ambppl.read_annotations(np.tile([[2, 3], [3, 2]], (30, 1)))


def test_empirical_bayes_at_its_bound_says_so_first() -> None:
    """Repro B of the audit: the fit warned that kappa went to its bound; the page showed
    kappa and the item table without a word of it."""
    settings = {"draws": 100, "chains": 2, "top": 2, "random_seed": 1}
    with pytest.warns(UserWarning, match=re.escape(AT_BOUND)) as seen:
        page = build_report(
            _alike(), "hierarchical_dirichlet", method="empirical_bayes", **settings
        )
    assert sum(AT_BOUND in str(w.message) for w in seen) == 1  # raised again, once
    said = _opens_with(page, AT_BOUND)
    assert said.startswith("Read this first The draws are exact: independent draws")
    assert "given the learned prior's empirical-Bayes estimate" in said and ", but:" in said
    # an error filter still stops the call (the warning is raised again after the page)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=re.escape(AT_BOUND)):
            build_report(_alike(), "hierarchical_dirichlet", method="empirical_bayes", **settings)


def test_render_report_lists_the_warnings_of_the_fit() -> None:
    """From Python, render_report lists the warnings recorded around ambppl.fit."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit(_alike(), "hierarchical_dirichlet", method="empirical_bayes", draws=100)
    assert any(AT_BOUND in str(w.message) for w in caught)
    page = render_report(result, top=2, random_seed=1, fit_warnings=caught)
    _opens_with(page, AT_BOUND)
    texts = [str(w.message) for w in caught]  # the texts do as well, each once
    _opens_with(render_report(result, top=2, random_seed=1, fit_warnings=texts * 2), AT_BOUND)


def test_the_result_keeps_the_warnings_of_its_fit(tmp_path: Path) -> None:
    """Without fit_warnings=, render_report lists those the result kept (they were lost: a
    notebook's fit warned above, its report opened without a word), saved and reloaded too."""
    with pytest.warns(UserWarning, match=re.escape(AT_BOUND)) as seen:
        result = fit(_alike(), "hierarchical_dirichlet", method="empirical_bayes", draws=100)
    assert sum(AT_BOUND in str(w.message) for w in seen) == 1  # still raised, once
    kept = json.loads(result.attrs["fit_warnings"])
    assert [k["category"] for k in kept] == ["UserWarning"] and AT_BOUND in kept[0]["message"]
    result.to_netcdf(tmp_path / "fit.nc")
    reloaded = xr.open_datatree(tmp_path / "fit.nc")
    for shown in (result, reloaded):
        _opens_with(render_report(shown, top=2, random_seed=1), AT_BOUND)
    # fit_warnings given replaces what the result kept; a fit without warnings keeps none
    page = render_report(result, top=2, random_seed=1, fit_warnings=[])
    assert AT_BOUND not in page
    assert "fit_warnings" not in fit(_alike(), draws=100, chains=2, random_seed=1).attrs


def test_a_kept_convergence_warning_is_not_said_twice() -> None:
    """A NUTS fit that misses the standard keeps its ConvergenceWarning; the page's first
    section says so once, from the convergence record, not again as a warning line."""
    with pytest.warns(ConvergenceWarning):
        result = fit(
            _alike()[:6],
            "hierarchical_dirichlet",
            method="collapsed",
            draws=30,
            chains=2,
            random_seed=1,
        )
    kept = json.loads(result.attrs["fit_warnings"])
    assert "ConvergenceWarning" in [k["category"] for k in kept]
    message = next(k["message"] for k in kept if k["category"] == "ConvergenceWarning")
    page = render_report(result, top=2, random_seed=1)
    assert " ".join(message.split()) not in visible_text(page_section(page, "verdict"))
    # given as a text (no record), the same message is listed
    page = render_report(result, top=2, random_seed=1, fit_warnings=[message])
    assert " ".join(message.split()) in visible_text(page_section(page, "verdict"))


@pytest.mark.parametrize("bad", ["one text", UserWarning("one warning"), [1.5], 3])
def test_fit_warnings_must_be_a_list_of_warnings(bad) -> None:
    result = fit(_alike(), draws=100, chains=2, random_seed=1)
    with pytest.raises(TypeError, match=r"^fit_warnings must"):
        render_report(result, top=2, fit_warnings=bad)


def _unanimous_answers() -> pd.DataFrame:
    """40 items, 3 answers each by 3 of 7 workers, every item's answers the same."""
    rows = [
        (f"t{i}", f"w{(i + j) % 7}", "yes" if i % 3 else "no") for i in range(40) for j in range(3)
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@pytest.fixture
def unanimous_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """ambppl.fit of dawid_skene stubbed (its NUTS takes half a minute): dawid_skene's own
    warning on these answers, then exact draws of their counts."""
    from ambppl.inference import fitting

    real = fitting.fit
    counts = ambppl.read_annotations(_unanimous_answers())
    module = get_model("dawid_skene").module

    def stub(data, **kwargs):
        assert kwargs["model"] == "dawid_skene"
        module._warn_if_unanimous(counts.values)
        return real(counts, method="exact", draws=100, chains=2, random_seed=1)

    # the name the report's fit calls (ambppl.inference.fitting.fit_with_progress)
    monkeypatch.setattr(fitting, "fit", stub)


def test_unanimous_design_says_so_first_on_the_command_line(
    unanimous_fit, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Repro A of the audit: stderr had dawid_skene's warning, the page had none of it."""
    path = tmp_path / "answers.csv"
    _unanimous_answers().to_csv(path, index=False)
    out = tmp_path / "r.html"
    argv = ["report", str(path), "--model", "dawid_skene", "--top", "2", "--seed", "1", "-q"]
    argv += ["-o", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.count(f"warning: {UNANIMOUS}") == 1, err
    _opens_with(out.read_text(encoding="utf-8"), UNANIMOUS)


def test_unanimous_design_says_so_first_in_python(unanimous_fit) -> None:
    with pytest.warns(ConvergenceWarning, match=UNANIMOUS):
        page = build_report(_unanimous_answers(), "dawid_skene", top=2, random_seed=1)
    said = _opens_with(page, UNANIMOUS)
    assert "decided by the priors" in said


@pytest.mark.parametrize("route", ["render_report", "score_report"])
def test_warnings_of_the_report_itself_open_the_page(
    route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warning raised while the report computes (twice): listed once at the top, raised
    again once after the page is drawn."""
    from ambppl.report import scored

    def noisy(real):
        def call(*args, **kwargs):
            for _ in range(2):
                warnings.warn("the refits saw something odd", UserWarning, stacklevel=2)
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(writer, "prior_sensitivity", noisy(writer.prior_sensitivity))
    monkeypatch.setattr(scored, "score", noisy(scored.score))
    counts = ambppl.read_annotations(np.random.default_rng(3).multinomial(6, [0.5, 0.5], 20))
    with pytest.warns(UserWarning, match="saw something odd") as seen:
        if route == "render_report":
            page = render_report(fit(counts, draws=100, chains=2, random_seed=1), top=2)
        else:
            page = score_report(counts, top=2, draws=100, random_seed=1)
    assert sum("saw something odd" in str(w.message) for w in seen) == 1
    said = _opens_with(page, "Warning: the refits saw something odd")
    assert said.startswith("Read this first The draws are exact")


def _passing(result: xr.DataTree) -> xr.DataTree:
    """Exact draws relabelled as a NUTS fit that met the convergence standard."""
    result.attrs["method"] = "nuts"
    result["posterior"].attrs["method"] = "nuts"
    shape = (result["posterior"].sizes["chain"], result["posterior"].sizes["draw"])
    result["sample_stats"] = xr.DataTree(
        dataset=xr.Dataset({"diverging": (("chain", "draw"), np.zeros(shape, dtype=bool))})
    )
    record = {"variables": ["amb"], "r_hat": 1.004, "ess_bulk": 812.0, "ess_tail": 650.0}
    result.attrs["convergence"] = json.dumps(
        {**record, "divergences": 0, "passed": True, "failed": []}
    )
    return result


@pytest.fixture
def passing() -> xr.DataTree:
    counts = np.random.default_rng(8).multinomial(10, [0.5, 0.3, 0.2], size=8)
    counts = ambppl.read_annotations(counts, cant_solve=2)
    return _passing(fit(counts, draws=300, chains=2, random_seed=11))


def test_a_converged_fit_whose_prior_decides_is_no_plain_success(
    passing: xr.DataTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repro 2 of the audit: a fit that met the convergence standard but whose hyperparameter
    follows its prior (the hyperprior sensitivity summarize computes) opened with "The fit
    met the convergence standard" alone; the finding was in a later section only."""
    real = writer.summarize

    def summarize(result, **kwargs):  # what summarize adds for a fit with a log_prior group
        table = real(result, **kwargs)
        rows = [
            {"parameter": "kappa", "prior": 0.21, "likelihood": 0.02, "pinned_down": False,
             "diagnosis": "weak likelihood"},  # as hyperprior_sensitivity words it
            {"parameter": "mu[0]", "prior": 0.01, "likelihood": 0.3, "pinned_down": True,
             "diagnosis": "ok"},
        ]  # fmt: skip
        table.attrs["hyperprior_sensitivity"] = {"threshold": 0.05, "rows": rows}
        return table

    monkeypatch.setattr(writer, "summarize", summarize)
    page = render_report(passing, top=2, random_seed=1)
    finding = "The data do not pin down kappa: its posterior follows its own prior"
    said = _opens_with(page, finding, elsewhere=True)
    assert said.startswith("Read this first The fit met the convergence standard (R-hat")
    assert "on every diagnosed parameter; details under Convergence, but:" in said
    assert (
        "read it as the prior's choice, not a measurement (details under Model and prior)" in said
    )
    listed = re.search(r'<ul id="read-first">(.*?)</ul>', page, flags=re.S).group(1)
    assert '<a href="#model">Model and prior</a>' in listed
    # the details: in the model section (a fit without a learned prior), with the table
    model = page_section(page, "model")
    assert 'id="hyperprior-sensitivity-flag"' in model and 'id="hyperprior-sensitivity"' in model
    # a learned prior links to its own section and names beta too
    line = writer._findings(writer._hyperprior(summarize(passing)), True, {}, "amb")[0]
    assert line["href"] == "#learned-prior" and "and the implied symmetric beta" in line["text"]


def test_a_missed_standard_is_said_once(passing: xr.DataTree) -> None:
    """The fit's ConvergenceWarning about a missed standard is the verdict itself (not listed
    again); a ConvergenceWarning without a record (a design warning) is listed."""
    record = {"variables": ["amb"], "passed": False, "failed": ["r_hat"], "r_hat": 1.2}
    passing.attrs["convergence"] = json.dumps(record)
    missed = ConvergenceWarning("the fit missed the convergence standard", record=record)
    design = ConvergenceWarning("m: the answers agree on every one of the 10 items, x")
    hostile = "label <script>alert(1)</script>"  # a warning may quote the data: text only
    page = render_report(passing, top=2, random_seed=1, fit_warnings=[missed, design, hostile])
    verdict = visible_text(page_section(page, "verdict"))
    assert verdict.startswith("The fit did not converge")
    assert "Warning: m: the answers agree on every one of the 10 items, x" in verdict
    assert "the fit missed the convergence standard" not in verdict
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page


@pytest.mark.slow  # compiles the PyMC program of hierarchical_dirichlet (about 10 s)
def test_a_real_learned_prior_that_the_prior_decides() -> None:
    """Repro 2 with a real fit: two classes, 3 answers per item, items alike; the collapsed
    fit meets the convergence standard, and kappa's posterior is its prior's as much as the
    data's: ambppl.hyperprior_sensitivity diagnoses a prior-data conflict (prior 2.8,
    likelihood 0.27 on this fit; the answers push kappa up, its prior holds it back), which
    the first section words as such, not as "the data do not pin down"."""
    counts = np.random.default_rng(4).multinomial(3, [0.7, 0.3], size=60)
    result = fit(
        ambppl.read_annotations(counts),
        "hierarchical_dirichlet",
        draws=500,
        random_seed=3,
        sample_kwargs={"tune": 500},
    )
    assert json.loads(result.attrs["convergence"])["passed"]
    page = render_report(result, top=2, random_seed=1)
    assert ambppl.hyperprior_sensitivity(result).loc["kappa", "diagnosis"] == (
        "prior-data conflict"
    )
    said = _opens_with(page, "The data pull against the prior of kappa", elsewhere=True)
    assert said.startswith("Read this first The fit met the convergence standard (R-hat")
    assert "reading it and the implied symmetric beta as a measurement" in said
    assert "The data do not pin down kappa" not in said
    assert "(details under Learned prior)" in said
    assert '<a href="#learned-prior">Learned prior</a>' in page_section(page, "verdict")


def test_collected_warnings_are_kept_once_and_survive_a_failure() -> None:
    # a warning raised in a per-item loop was recorded every time (a list as long as the
    # loop), and a failure inside the block threw away every warning the fit had raised
    with pytest.warns(UserWarning, match="per item") as shown:
        with collecting_warnings() as raised:
            for _ in range(1000):
                warnings.warn("per item", UserWarning, stacklevel=1)
    assert len(raised) == 1 and len([w for w in shown if "per item" in str(w.message)]) == 1
    with pytest.warns(UserWarning, match="before the failure"):
        with pytest.raises(KeyError, match="the block's own"):
            with collecting_warnings():
                warnings.warn("before the failure", UserWarning, stacklevel=1)
                raise KeyError("the block's own")
    # a warning the caller's filters make an error is one at once, inside the block, as
    # without it (it had been recorded and raised at the end: a warning CPython swallows,
    # os.fork's in a multi-threaded process, became an error after a whole fit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="made an error"):
            with collecting_warnings() as raised:
                warnings.warn("made an error", UserWarning, stacklevel=1)
                raise KeyError("not reached")
        assert raised == []


def test_collectors_in_threads_keep_their_own_warnings_and_leave_the_state_as_it_was() -> None:
    """Fits in a thread pool each entered warnings.catch_warnings: overlapping in threads,
    they put back each other's state out of order, and the process was left with a recorder
    as its showwarning: later warnings were lost, and a third of the fits kept none."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    before = (list(warnings.filters), warnings.showwarning)
    barrier = threading.Barrier(4)

    def work(i: int) -> list[str]:
        with collecting_warnings() as raised:
            barrier.wait()  # every block open at once
            warnings.warn(f"thread {i}", UserWarning, stacklevel=1)
            time.sleep(0.01 * (4 - i))  # and closed in another order than opened
        return [str(w.message) for w in raised]

    with pytest.warns(UserWarning, match="thread") as shown:
        with ThreadPoolExecutor(4) as pool:
            kept = list(pool.map(work, range(4)))
    assert kept == [[f"thread {i}"] for i in range(4)]
    assert sorted(str(w.message) for w in shown) == [f"thread {i}" for i in range(4)]
    assert (list(warnings.filters), warnings.showwarning) == before
    # and real fits: each keeps its own warning
    with pytest.warns(UserWarning, match=re.escape(AT_BOUND)):
        with ThreadPoolExecutor(4) as pool:
            results = list(
                pool.map(
                    lambda seed: fit(
                        _alike(),
                        "hierarchical_dirichlet",
                        method="empirical_bayes",
                        draws=100,
                        random_seed=seed,
                    ),
                    range(8),
                )
            )
    assert all(AT_BOUND in r.attrs["fit_warnings"] for r in results)
    assert (list(warnings.filters), warnings.showwarning) == before
