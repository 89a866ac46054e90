"""Tests of the HTML report (ambppl/report: writer, figures, template)."""

from __future__ import annotations

import base64
import math
import re

import numpy as np
import pytest
import xarray as xr
from conftest import REPORT_SECTIONS, page_section

from ambppl.analysis.summary import rank, summarize
from ambppl.inference.fitting import ConvergenceWarning, fit
from ambppl.report import render_report, writer
from ambppl.report.figures import plain

#: Hostile strings a user's data may contain: each must reach the page as text only.
EVIL_LABEL = "<script>alert(1)</script>"
EVIL_ITEM = "<img src=x onerror=alert(2)>"
EVIL_SOURCE = '<b>"quoted" & file</b>.csv'


def _counts(rng: np.random.Generator, n_items: int = 8, labels=("yes", "no", "cs")) -> xr.DataArray:
    """Random answer counts with a can't-solve category (last)."""
    q = rng.dirichlet(np.ones(len(labels)), size=n_items)
    values = np.vstack([rng.multinomial(10, qi) for qi in q])
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(n_items)], "category": list(labels)},
        attrs={"cant_solve": labels[-1], "source": "toy.csv", "n_raters": 10, "n_dropped": 0},
        name="counts",
    )


@pytest.fixture
def result(rng: np.random.Generator) -> xr.DataTree:
    return fit(_counts(rng), draws=300, chains=2, random_seed=11)


def _as_nuts(result: xr.DataTree, n_divergent: int = 0) -> xr.DataTree:
    """Relabel exact draws as MCMC output (with sample stats) to exercise the MCMC branch."""
    result.attrs["method"] = "nuts"
    result["posterior"].attrs["method"] = "nuts"
    shape = (result["posterior"].sizes["chain"], result["posterior"].sizes["draw"])
    diverging = np.zeros(shape, dtype=bool)
    diverging.flat[:n_divergent] = True
    result["sample_stats"] = xr.DataTree(
        dataset=xr.Dataset({"diverging": (("chain", "draw"), diverging)})
    )
    return result


def test_sections_and_self_contained(result: xr.DataTree) -> None:
    page = render_report(result, top=4, random_seed=1)
    assert page.startswith("<!DOCTYPE html>")
    for section in REPORT_SECTIONS:
        assert f'<section id="{section}">' in page
    # nothing is fetched: no links, no external scripts or styles, images are data URIs
    assert not re.search(r"(src|href)=\"(?!data:|#)", page)
    assert "<link" not in page and "http://" not in page and "https://" not in page
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == page.count("<img") >= 5
    for encoded in images:
        assert base64.b64decode(encoded, validate=True)[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.count("<script") == 1  # the sorting script, nothing else
    assert page.count('<tr><td data-value="') == 8 + 4  # all items, then the top 4
    assert 'id="exact-statement"' in page and 'id="diagnostics"' not in page


def test_user_strings_are_escaped(rng: np.random.Generator) -> None:
    counts = _counts(rng, n_items=4, labels=("ok", EVIL_LABEL, r"$\frac{$", "cs"))
    counts = counts.assign_coords(item=[EVIL_ITEM, "a&b", "'q'", "plain"])
    counts.attrs["source"] = EVIL_SOURCE
    page = render_report(fit(counts, draws=100, chains=2, random_seed=3), top=4, random_seed=1)
    assert page.count("<script") == 1
    assert "alert(1)</script>" not in page and "<img src=x" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;b&gt;&#34;quoted&#34; &amp; file&lt;/b&gt;.csv" in page
    assert "a&amp;b" in page and "&#39;q&#39;" in page


def test_command_line_is_escaped(result: xr.DataTree) -> None:
    page = render_report(result, top=2, command=f"ambppl report '{EVIL_ITEM}'")
    assert "&lt;img src=x onerror=alert(2)&gt;" in page and "<img src=x" not in page


def test_mcmc_branch_reports_diagnostics(result: xr.DataTree) -> None:
    page = render_report(_as_nuts(result, n_divergent=3), top=3, random_seed=1)
    assert 'id="diagnostics"' in page and 'id="exact-statement"' not in page
    assert "<tr><td>divergent transitions</td><td>3</td></tr>" in page
    assert "rank plots of the items with the largest R-hat" in page
    assert "<th>R-hat</th><th>ESS</th>" in page


def test_convergence_flags_chains_that_disagree(result: xr.DataTree) -> None:
    result = _as_nuts(result)
    amb = result["posterior"]["amb"].copy()
    amb[{"chain": 0, "item": 0}] = amb[{"chain": 0, "item": 0}] + 0.3  # chain 0 elsewhere
    result["posterior"]["amb"] = amb
    table = rank(summarize(result))
    conv = writer._convergence(result, table, "amb")
    assert conv["exact"] is False and conv["ok"] is False
    assert conv["r_hat_max"] > 1.01 and conv["n_r_hat_bad"] >= 1
    assert conv["divergences"] == 0


def test_exact_draws_need_no_diagnostics(result: xr.DataTree) -> None:
    conv = writer._convergence(result, rank(summarize(result)), "amb")
    assert conv == {"method": "exact", "chains": 2, "draws": 300, "exact": True, "kind": "exact"}


def test_agreement_is_the_validation_check(rng: np.random.Generator) -> None:
    """The section reports ambppl.validation.check_moments (one implementation)."""
    from scipy.stats import norm

    from ambppl.validation import check_moments

    result = fit(_counts(rng, 40), draws=500, chains=2, random_seed=5)
    out = writer._agreement(result, summarize(result), "amb")
    check = check_moments(result, measures=["amb"])
    assert out["available"] and out["ok"] is check.passed is True
    assert out["n"] == 40 and out["n_tests"] == 80  # mean and variance per item
    assert out["max_abs_z"] == pytest.approx(check.statistic, rel=1e-12)
    # Holm's first step over 80 two-sided tests at 1 %: P(|z| > c) = 0.01 / 80.
    assert out["z_crit"] == pytest.approx(norm.isf(0.005 / 80), rel=1e-12)
    # expected number beyond |z| > 3 among 80 tests: 80 * erfc(3 / sqrt(2)) (normal tails)
    assert out["expected_above_3"] == pytest.approx(80 * math.erfc(3 / math.sqrt(2)), rel=1e-9)
    assert out["density"] is not None and out["density"]["ok"]  # yes / no / cs: two classes


def test_agreement_flags_shifted_draws(result: xr.DataTree) -> None:
    post = result["posterior"].to_dataset()
    amb = post["amb"].copy()
    amb[{"item": 0}] = amb[{"item": 0}] + 0.05
    post["amb"] = amb
    result["posterior"] = post
    out = writer._agreement(result, summarize(result), "amb")
    assert not out["ok"] and out["worst"][0]["item"] == "i0"
    assert not out["density"]["ok"]
    page = render_report(result, top=2)
    assert "Inconsistent:" in page and 'id="density-check"' in page
    # and the page opens with it, before any table, linking to the details
    listed = re.search(r'<ul id="read-first">(.*?)</ul>', page_section(page, "verdict"), re.S)
    assert listed is not None and page.index('<ul id="read-first">') < page.index("<table")
    said = _text(listed.group(1))
    assert "The draws disagree with the closed-form posterior moments of amb:" in said
    assert "The draws of the items with two proper classes disagree with their exact" in said
    assert listed.group(1).count('(details under <a href="#agreement">Closed-form check</a>)') == 2
    assert '<span class="ok">' not in page_section(page, "verdict")


def test_agreement_uses_arviz_mcse_for_mcmc(result: xr.DataTree) -> None:
    import arviz as az

    from ambppl.validation import check_moments

    result = _as_nuts(result)
    out = writer._agreement(result, summarize(result), "amb")
    check = check_moments(result, measures=["amb"])
    assert out["max_abs_z"] == pytest.approx(check.statistic, rel=1e-12)
    row = check.table.query("item == 'i0' and moment == 'mean'").iloc[0]
    mcse = az.mcse(result["posterior"]["amb"].sel(item="i0"), method="mean")
    assert row["mcse"] == pytest.approx(float(mcse), rel=1e-9)


def test_agreement_without_closed_form(result: xr.DataTree) -> None:
    result.attrs["prior"] = None
    result["posterior"].attrs["prior"] = None
    assert writer._agreement(result, summarize(result), "amb") == {"available": False}


def test_prior_sensitivity_matches_closed_form(result: xr.DataTree) -> None:
    from ambppl.maths.moments import dirichlet_mean, dirichlet_var

    table = rank(summarize(result))
    sens = writer._sensitivity(
        result,
        table,
        top=3,
        priors=(0.5, 1.0, 2.0),
        measure="amb",
        hdi_prob=0.9,
        threshold=0.4,
        random_seed=2,
    )
    assert sens["available"] and [r["item"] for r in sens["rows"]] == list(table.index[:3])
    assert sens["labels"] == ["prior 0.5", "prior 1.0", "prior 2.0"]
    other = writer._sensitivity(
        result,
        table,
        top=1,
        priors=(0.25, 0.2),  # both were "prior 0.2"
        measure="amb",
        hdi_prob=0.9,
        threshold=0.4,
        random_seed=2,
    )
    assert other["labels"] == ["prior 0.25", "prior 0.2"]
    counts = result["observed_data"]["counts"].sel(item=list(table.index[:3])).values
    n_draws = sens["chains"] * sens["draws"]
    for j, beta in enumerate((0.5, 1.0, 2.0)):
        exact = dirichlet_mean(counts + beta, measure="amb", cant_solve=-1)
        mcse = np.sqrt(dirichlet_var(counts + beta, measure="amb", cant_solve=-1) / n_draws)
        got = np.array([r["by_prior"][j]["mean"] for r in sens["rows"]])
        assert np.all(np.abs(got - exact) <= 5 * mcse)
        for r in sens["rows"]:
            p = r["by_prior"][j]
            assert p["lower"] <= p["mean"] <= p["upper"]


def test_prior_sensitivity_section_is_the_public_function(result: xr.DataTree) -> None:
    """Issue 23: the section renders ambppl.prior_sensitivity of the top items (same seed,
    draws and chains give the same numbers), it does not refit on its own."""
    from ambppl.analysis.sensitivity import prior_sensitivity

    table = rank(summarize(result))
    ids = list(table.index[:3])
    sens = writer._sensitivity(
        result,
        table,
        top=3,
        priors=(0.5, 2.0),
        measure="amb",
        hdi_prob=0.9,
        threshold=0.3,
        random_seed=4,
    )
    counts = result["observed_data"]["counts"].sel(item=ids)
    expected = prior_sensitivity(
        counts,
        (0.5, 2.0),
        measure="amb",
        hdi_prob=0.9,
        threshold=0.3,
        draws=sens["draws"],
        chains=sens["chains"],
        random_seed=4,
    )
    assert sens["draws"] == min(result["posterior"].sizes["draw"], writer.MAX_REFIT_DRAWS)
    assert sens["table"].equals(expected.loc[ids])
    for k, row in enumerate(sens["rows"]):
        for j, prior in enumerate(("beta=0.5", "beta=2")):
            cell = row["by_prior"][j]
            assert cell["mean"] == expected[(prior, "mean")].iloc[k]
            assert [cell["lower"], cell["upper"]] == expected[prior][
                ["hdi_lower", "hdi_upper"]
            ].iloc[k].tolist()
            assert cell["p_above"] == expected[(prior, "p_above")].iloc[k]
    page = render_report(result, top=3, priors=(0.5, 2.0), random_seed=4)
    section = re.search(r'<section id="sensitivity">(.*?)</section>', page, flags=re.S).group(1)
    assert "<th>mean<br>prior 0.5</th><th>P(&gt; t)<br>prior 0.5</th>" in section
    assert "<code>ambppl.prior_sensitivity</code>" in section


@pytest.mark.parametrize(
    ("measure", "variable"), [("modified", "amb_modified"), ("entropy", "entropy")]
)
def test_other_measures_render(result: xr.DataTree, measure: str, variable: str) -> None:
    page = render_report(result, measure=measure, threshold=0.5, top=2)
    assert f"<code>{measure}</code> (posterior variable <code>{variable}</code>)" in page
    assert 'id="agreement-stats"' in page  # closed-form means exist for both


def test_bad_arguments(result: xr.DataTree) -> None:
    with pytest.raises(TypeError, match=r"result must be the DataTree returned by ambppl\.fit"):
        render_report(result["posterior"].to_dataset())
    with pytest.raises(ValueError, match="top must be a positive integer"):
        render_report(result, top=0)
    with pytest.raises(ValueError, match="threshold"):
        render_report(result, threshold=-3)


def test_plain_text_for_matplotlib() -> None:
    assert plain("$x$") == r"\$x\$"
    assert plain("abc", limit=2) == "a…"


def test_plain_writes_control_characters_as_escapes() -> None:
    """A control character has no glyph in any font: it is drawn as its escape."""
    assert plain("a\tb\x01\nc") == "a\\tb\\x01\\nc"
    assert plain("猫 é") == "猫 é"  # other characters are left alone


@pytest.mark.parametrize("route", ["render_report", "score_report"])
def test_missing_glyphs_give_one_warning(rng: np.random.Generator, route: str) -> None:
    """Issue 25: labels the figure font lacks (CJK, emoji) gave matplotlib's raw
    ``UserWarning`` once per figure and character, with its source line (figures.py:98).
    Now one warning for the page names the characters, attributed to the caller; a control
    character (\x01) is drawn as an escape and is not among them."""
    import warnings

    from ambppl.report import score_report

    counts = _counts(rng, n_items=6, labels=("猫", "犬", "🐶", "a\x01b", "cs"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if route == "render_report":
            render_report(fit(counts, draws=100, chains=2, random_seed=3), top=3, random_seed=1)
        else:
            score_report(counts, top=3, draws=100, random_seed=1)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert messages[0].startswith("the figures draw 3 characters of the labels or item ids")
    assert "('犬', '猫', '🐶')" in messages[0] and "DejaVu Sans" in messages[0]
    assert caught[0].category is UserWarning and caught[0].filename == __file__


def test_other_figure_warnings_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """figure_to_data_uri keeps only the glyph warnings to itself; any other warning of the
    drawing reaches the caller unchanged."""
    import warnings

    from ambppl.report import figures

    fig = figures._new_figure(1, 1)
    original = type(fig).savefig

    def savefig(self, *args, **kwargs):
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(fig), "savefig", savefig)
    with pytest.warns(RuntimeWarning, match="something else"):
        assert figures.figure_to_data_uri(fig).startswith("data:image/png;base64,")


def test_figures_leave_no_pyplot_state(result: xr.DataTree) -> None:
    """The report draws on matplotlib Figure objects with the Agg canvas, not through pyplot:
    no figure is registered with pyplot's global figure manager (pyplot itself may be
    imported by ArviZ)."""
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    render_report(result, top=2)
    assert plt.get_fignums() == before


def test_asymmetric_prior_is_listed(rng: np.random.Generator) -> None:
    result = fit(_counts(rng, 4), prior=[1.0, 2.0, 0.5], draws=100, chains=2, random_seed=4)
    page = render_report(result, top=2, random_seed=1)
    assert "Dirichlet with one concentration per category" in page
    prior_table = re.search(r'<table id="prior">(.*?)</table>', page, flags=re.S).group(1)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", prior_table)
    assert cells == ["yes", "1.000", "no", "2.000", "cs", "0.500"]


def test_agreement_section_says_when_the_check_stops_on_the_draws(result: xr.DataTree) -> None:
    """Non-finite draws: the section reports the check's error (it said "no closed form is
    available" for every ValueError, a broken fit among them)."""
    table = summarize(result)
    post = result["posterior"].to_dataset().copy(deep=True)
    post["amb"].values[0, 3, 2] = np.nan
    broken = result.copy(deep=True)
    broken["posterior"] = xr.DataTree(post)
    out = writer._agreement(broken, table, "amb")
    assert out["available"] is False
    assert out["error"].startswith("result's posterior holds non-finite draws (NaN or inf) of")
    assert writer._agreement(result, table, "amb")["available"] is True


def test_model_without_fixed_or_learned_prior(
    result: xr.DataTree, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog model that offers only NUTS and whose fit has neither one fixed prior nor a
    learned (mu, kappa): the report lists the model's methods (from its info record) and
    says that prior refits and closed forms are not available."""
    import json
    import shutil

    from ambppl.inference.catalog import get_model

    entry = get_model("dirichlet_categorical")
    shutil.copy(entry.path, tmp_path / "nuts_only.py")
    info = {**entry.info, "name": "nuts_only", "methods": ["nuts"]}
    (tmp_path / "nuts_only.json").write_text(json.dumps(info))
    monkeypatch.setenv("AMBPPL_MODELS", str(tmp_path))
    result = _as_nuts(result)
    for node in (result, result["posterior"]):
        node.attrs["model"] = "nuts_only"
        del node.attrs["prior"]
    page = render_report(result, top=2)
    assert '<td class="text" id="model-methods">nuts (default)</td>' in page
    assert "not one fixed Dirichlet prior" in page
    assert "model &#39;nuts_only&#39; has neither one fixed Dirichlet prior" in page
    assert "No closed-form posterior moments are available" in page
    assert "This result carries no convergence record" in page
    assert 'id="learned-prior"' not in page


def test_model_section_lists_methods_and_parameters(result: xr.DataTree) -> None:
    page = render_report(result, top=2)
    assert '<td class="text" id="model-methods">exact (default), nuts</td>' in page
    assert '<td class="text" id="model-parameters"><code>prior=1.0</code></td>' in page


# ------------------------------------------------------------------------ convergence standard


def _with_record(result: xr.DataTree, **record) -> xr.DataTree:
    """A NUTS-labelled result carrying the convergence record ``record`` (as fit writes it)."""
    import json

    result = _as_nuts(result)
    result.attrs["convergence"] = json.dumps({"variables": ["amb"], **record})
    return result


def test_convergence_paragraph_when_the_standard_is_met(result: xr.DataTree) -> None:
    record = {"r_hat": 1.0042, "ess_bulk": 812.4, "ess_tail": 650.6, "divergences": 0}
    page = render_report(_with_record(result, **record, passed=True, failed=[]), top=2)
    paragraph = re.search(r'<p id="convergence-standard">(.*?)</p>', page, flags=re.S).group(1)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", paragraph))
    assert text.startswith("The fit met the convergence standard (R-hat &le; 1.01, bulk and")
    assert "tail ESS &ge; 400, no divergent transitions), checked on amb:" in text
    assert "largest R-hat 1.0042, smallest bulk ESS 812, smallest tail ESS 651" in text
    assert "0 divergent transitions." in text and "Draw more" not in text


def test_convergence_paragraph_when_the_standard_is_missed(result: xr.DataTree) -> None:
    record = {"r_hat": 1.0203, "ess_bulk": 95.0, "ess_tail": 40.0, "divergences": 2}
    failed = ["r_hat", "ess_bulk", "ess_tail", "divergences"]
    page = render_report(_with_record(result, **record, passed=False, failed=failed), top=2)
    paragraph = re.search(r'<p id="convergence-standard">(.*?)</p>', page, flags=re.S).group(1)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", paragraph))
    assert text.startswith("The fit did not meet the convergence standard")
    assert "largest R-hat 1.0203, smallest bulk ESS 95, smallest tail ESS 40, 2 divergent" in text
    # divergences: the advice is a smaller step size or another parameterization, never
    # "draw more" (which the paragraph said before issue 22, whatever had failed)
    assert "Missed: r_hat, ess_bulk, ess_tail, divergences. What to do: 2 divergent" in text
    assert "raise target_accept (sample_kwargs={&#39;target_accept&#39;: 0.95})" in text
    assert "more draws do not help" in text and "draw more" not in text.lower()
    too_few = _with_record(result, passed=False, reason="too few draws to diagnose")
    page = render_report(too_few, top=2)
    assert "did not meet the convergence standard" in page
    assert "too few draws to diagnose." in page


def test_exact_draws_have_no_convergence_record(result: xr.DataTree) -> None:
    page = render_report(result, top=2)
    assert 'id="convergence-standard"' not in page
    assert "nor does the convergence standard for Markov chains" in page


# ------------------------------------------------------------------------------- learned prior


@pytest.fixture(scope="module")
def learned_result() -> xr.DataTree:
    """One collapsed fit of hierarchical_dirichlet shared by the learned-prior tests."""
    counts = _counts(np.random.default_rng(20261126), n_items=30)
    # 2 chains x 200 draws cannot reach tail ESS >= 400: fit warns that the fit missed the
    # convergence standard, which is expected here (the report shows it; see below).
    with pytest.warns(ConvergenceWarning, match="missed the convergence standard"):
        return fit(
            counts,
            "hierarchical_dirichlet",
            draws=200,
            chains=2,
            random_seed=7,
            sample_kwargs={"tune": 300, "cores": 1},
        )


@pytest.fixture(scope="module")
def learned_page(learned_result: xr.DataTree) -> str:
    return render_report(learned_result, top=4, random_seed=1)


def test_learned_prior_section(learned_result: xr.DataTree, learned_page: str) -> None:
    page = learned_page
    assert '<section id="learned-prior">' in page and '<a href="#learned-prior">' in page
    for section in REPORT_SECTIONS:
        assert f'<section id="{section}">' in page
    section = re.search(r'<section id="learned-prior">(.*?)</section>', page, flags=re.S)
    section = section.group(1)
    # mu: one row per category with its posterior mean; kappa (median) and beta = kappa / K
    mu = learned_result["posterior"]["mu"].mean(("chain", "draw")).values
    mu_table = re.search(r'<table id="learned-mu">(.*?)</table>', section, flags=re.S).group(1)
    rows = re.findall(r"<tr><td class=\"text[^\"]*\">([^<]*)</td><td>([^<]*)</td>", mu_table)
    assert [r[0] for r in rows] == ["yes", "no", "cs"]
    assert [r[1] for r in rows] == [f"{m:.3f}" for m in mu]
    kappa = float(learned_result["posterior"]["kappa"].median())
    assert f"{kappa:.3f} [" in section and f"{kappa / 3:.3f} [" in section
    # the two figures, embedded
    assert (
        'alt="implied prior of the measure under the learned and the symmetric priors"' in section
    )
    assert '<figure id="shrinkage"><img alt="shrinkage plot' in section
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', section)
    assert len(images) == 2
    for encoded in images:
        assert base64.b64decode(encoded, validate=True)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in page and "https://" not in page
    # the model section names the learned prior, the sensitivity section compares it
    assert "learned from all items: q<sub>i</sub> ~ Dirichlet(&kappa;&middot;&mu;)" in page
    assert "<th>mean<br>learned prior</th>" in page and "<th>mean<br>prior 0.5</th>" in page
    assert "<th>mean<br>prior 2.0</th>" not in page


def test_learned_fit_reports_its_convergence(learned_result: xr.DataTree, learned_page: str):
    import json

    record = json.loads(learned_result.attrs["convergence"])
    assert record["variables"] == ["mu", "kappa"] and not record["passed"]
    paragraph = re.search(r'<p id="convergence-standard">(.*?)</p>', learned_page, flags=re.S)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", paragraph.group(1)))
    assert text.startswith("The fit did not meet the convergence standard")
    assert "checked on mu, kappa:" in text
    assert f"largest R-hat {record['r_hat']:.4f}" in text
    assert f"smallest tail ESS {record['ess_tail']:.0f}" in text


def test_learned_prior_numbers(learned_result: xr.DataTree) -> None:
    """HDIs from arviz, beta = kappa / K, the implied prior and the beta = 1 means against
    closed forms."""
    import arviz as az

    from ambppl.maths.moments import dirichlet_mean, dirichlet_var

    table = rank(summarize(learned_result, hdi_prob=0.9))
    out = writer._learned_prior(learned_result, table, measure="amb", hdi_prob=0.9, random_seed=3)
    post = learned_result["posterior"]
    hdi = az.hdi(post["mu"], prob=0.9, dim=["chain", "draw"])
    assert [m["lower"] for m in out["mu"]] == pytest.approx(hdi.sel(ci_bound="lower").values)
    assert [m["upper"] for m in out["mu"]] == pytest.approx(hdi.sel(ci_bound="upper").values)
    assert [m["is_cs"] for m in out["mu"]] == [False, False, True]
    kappa_hdi = az.hdi(post["kappa"], prob=0.9, dim=["chain", "draw"]).values
    assert [out["kappa"]["lower"], out["kappa"]["upper"]] == pytest.approx(kappa_hdi)
    assert out["beta"]["median"] == pytest.approx(float(post["kappa"].median()) / 3)
    assert [out["beta"]["lower"], out["beta"]["upper"]] == pytest.approx(kappa_hdi / 3)
    assert not out["point_estimate"]
    # implied prior mean of amb under the symmetric priors: closed form, 5 MCSE
    n = writer.N_PRIOR_DRAWS
    for entry, beta in zip(out["implied"][1:], writer.LEARNED_COMPARISON, strict=True):
        alpha = np.full(3, beta)
        exact = dirichlet_mean(alpha, measure="amb", cant_solve=-1)
        mcse = math.sqrt(dirichlet_var(alpha, measure="amb", cant_solve=-1) / n)
        assert abs(entry["mean"] - exact) <= 5 * mcse
    # the learned prior's implied mean: Dirichlet(kappa * mu) averaged over the posterior;
    # n independent draws, each from a uniformly resampled (mu, kappa), so the variance of
    # one draw is E Var + Var E over the posterior draws: 5 MCSE
    conc = (post["kappa"] * post["mu"]).transpose("chain", "draw", "category").values
    means = dirichlet_mean(conc.reshape(-1, 3), measure="amb", cant_solve=-1)
    variances = dirichlet_var(conc.reshape(-1, 3), measure="amb", cant_solve=-1)
    mcse = math.sqrt((variances.mean() + means.var()) / n)
    assert abs(out["implied"][0]["mean"] - means.mean()) <= 5 * mcse
    # shrinkage: the item table's means (learned prior) against the closed-form beta = 1
    # means, Dirichlet(1 + counts): no Monte Carlo error on either side of the difference
    counts = learned_result["observed_data"]["counts"].sel(item=list(table.index)).values
    flat = dirichlet_mean(counts + 1.0, measure="amb", cant_solve=-1)
    change = table["mean"].to_numpy() - flat
    shrinkage = out["shrinkage"]
    assert shrinkage["median_abs_change"] == pytest.approx(np.median(np.abs(change)), rel=1e-12)
    assert shrinkage["mean_change"] == pytest.approx(np.mean(change), rel=1e-12)
    largest = int(np.argmax(np.abs(change)))
    assert shrinkage["largest_item"] == table.index[largest]
    assert shrinkage["largest_flat"] == pytest.approx(flat[largest], rel=1e-12)
    assert out["shrinkage"]["n_lower"] + out["shrinkage"]["n_higher"] == len(table)


def test_learned_prior_sensitivity(learned_result: xr.DataTree) -> None:
    from ambppl.maths.moments import dirichlet_mean, dirichlet_var

    table = rank(summarize(learned_result))
    sens = writer._sensitivity(
        learned_result,
        table,
        top=3,
        priors=None,
        measure="amb",
        hdi_prob=0.9,
        threshold=0.4,
        random_seed=2,
    )
    assert sens["available"] and sens["learned"]
    assert sens["labels"] == ["learned prior", "prior 0.5", "prior 1.0"]
    ids = list(table.index[:3])
    assert [r["item"] for r in sens["rows"]] == ids
    learned = [r["by_prior"][0]["mean"] for r in sens["rows"]]
    assert learned == pytest.approx(table["mean"].iloc[:3].to_numpy())
    counts = learned_result["observed_data"]["counts"].sel(item=ids).values
    n_draws = sens["chains"] * sens["draws"]
    for j, beta in enumerate((0.5, 1.0), start=1):
        exact = dirichlet_mean(counts + beta, measure="amb", cant_solve=-1)
        mcse = np.sqrt(dirichlet_var(counts + beta, measure="amb", cant_solve=-1) / n_draws)
        got = np.array([r["by_prior"][j]["mean"] for r in sens["rows"]])
        assert np.all(np.abs(got - exact) <= 5 * mcse)
    for r in sens["rows"]:
        means = [p["mean"] for p in r["by_prior"]]
        assert r["spread"] == pytest.approx(max(means) - min(means))


def test_flat_fit_has_no_learned_prior(result: xr.DataTree) -> None:
    page = render_report(result, top=2, random_seed=1)
    assert 'id="learned-prior"' not in page and 'id="shrinkage"' not in page
    assert "shrinkage plot" not in page
    table = rank(summarize(result))
    assert writer._learned_prior(result, table, measure="amb", hdi_prob=0.9, random_seed=1) is None


def test_empirical_bayes_learned_prior(rng: np.random.Generator) -> None:
    """Empirical Bayes: a learned prior at a point (no HDI width), exact draws, closed forms."""
    result = fit(
        _counts(rng, n_items=30),
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=300,
        chains=2,
        random_seed=5,
    )
    page = render_report(result, top=3, random_seed=1)
    assert '<section id="learned-prior">' in page and '<figure id="shrinkage">' in page
    assert "(empirical Bayes: &mu; and &kappa; at the maximum" in page
    assert "at their maximum marginal likelihood (empirical Bayes)" in page
    assert 'id="exact-statement"' in page and 'id="convergence-standard"' not in page
    assert 'id="agreement-stats"' in page  # fixed prior kappa * mu given the estimate
    kappa = float(result["posterior"]["kappa"].values.flat[0])
    assert f"{kappa:.3f} [{kappa:.3f}, {kappa:.3f}]" in page


# ------------------------------------------------------------------- NUTS diagnostics that apply


def _variable_rows(page: str) -> dict[str, tuple[bool, int, list[str]]]:
    """The per-variable table: name -> (marked as checked by the fit, scalars, other cells)."""
    body = re.search(r'<table id="variable-diagnostics">(.*?)</table>', page, flags=re.S)
    assert body is not None
    rows = re.findall(
        r'<tr><td class="text"><code>([^<]+)</code>( \*)?</td><td>(\d+)</td>(.*?)</tr>',
        body.group(1),
        flags=re.S,
    )
    return {
        name: (
            bool(star),
            int(n),
            [
                re.sub(r"<[^>]+>", "", c)
                for c in re.findall(r"<td[^>]*>(.*?)</td>", rest, flags=re.S)
            ],
        )
        for name, star, n, rest in rows
    }


def _bfmi_cells(page: str) -> list[str]:
    table = re.search(r'<table id="bfmi">(.*?)</table>', page, flags=re.S)
    assert table is not None
    return [
        re.sub(r"<[^>]+>", "", c)
        for c in re.findall(r"<tr><td>[^<]*</td><td>(.*?)</td></tr>", table.group(1))
    ]


def _textbook_bfmi(energy: xr.DataArray) -> list[float]:
    """E-BFMI per chain: sum(diff(E)^2) / sum((E - mean E)^2)."""
    values = energy.transpose("chain", "draw").values
    return [float(np.sum(np.diff(e) ** 2) / np.sum((e - e.mean()) ** 2)) for e in values]


def _worst(da: xr.DataArray) -> tuple[float, float, float]:
    """Worst R-hat, smallest bulk and tail ESS of a variable, with ArviZ."""
    import arviz as az

    return (
        float(az.rhat(da).max()),
        float(az.ess(da, method="bulk").min()),
        float(az.ess(da, method="tail").min()),
    )


def _assert_energy_figure(page: str) -> None:
    figure = re.search(
        r'<img alt="energy plot: marginal energy against energy transitions" '
        r'src="data:image/png;base64,([^"]+)"',
        page,
    )
    assert figure is not None
    assert base64.b64decode(figure.group(1), validate=True)[:8] == b"\x89PNG\r\n\x1a\n"


def test_collapsed_fit_shows_every_nuts_diagnostic(learned_result, learned_page) -> None:
    """A PyMC NUTS fit (collapsed hierarchical_dirichlet): the per-variable table with the
    hyperparameters the record checked, E-BFMI per chain (textbook formula), the energy
    figure and PyMC's tree-depth statistics."""
    page, post = learned_page, learned_result["posterior"]
    rows = _variable_rows(page)
    assert list(rows) == [str(v) for v in post.data_vars]
    assert rows["mu"][:2] == (True, 3) and rows["kappa"][:2] == (True, 1)
    assert not rows["amb"][0] and rows["amb"][1] == 30  # per item, not in the record
    for name in ("mu", "kappa", "amb"):
        r_hat, bulk, tail = _worst(post[name])
        cells = rows[name][2]
        assert cells[:3] == [f"{r_hat:.4f}", f"{bulk:.0f}", f"{tail:.0f}"]
        passed = r_hat <= 1.01 and bulk >= 400 and tail >= 400
        assert cells[3].startswith("passed" if passed else "missed")
    # the table agrees with the fit's record on mu and kappa
    import json

    record = json.loads(learned_result.attrs["convergence"])
    missed = any(rows[n][2][3].startswith("missed") for n in ("mu", "kappa"))
    assert missed == bool(set(record["failed"]) - {"divergences"})
    # E-BFMI per chain, computed here from sample_stats.energy
    stats = learned_result["sample_stats"]
    expected = _textbook_bfmi(stats["energy"])
    assert _bfmi_cells(page) == [f"{v:.3f}" for v in expected]
    _assert_energy_figure(page)
    assert 'id="energy-missing"' not in page
    # PyMC's tree statistics
    tree = re.search(r'<table class="kv" id="tree-depth">(.*?)</table>', page, flags=re.S)
    tree = re.sub(r"<[^>]+>", "", tree.group(1))
    depth = stats["tree_depth"].values
    assert f"{depth.mean():.2f} / {depth.max()}" in tree
    n_max = int(stats["reached_max_treedepth"].values.sum())
    assert f"{n_max} of {stats['reached_max_treedepth'].size}" in tree
    steps = stats["n_steps"].values
    assert f"{steps.mean():.1f} / {int(steps.max())}" in tree


def test_nuts_method_fit_shows_every_diagnostic(nuts_fit: xr.DataTree) -> None:
    """method="nuts" (dirichlet_categorical): fit's record checked every stored variable."""
    page = render_report(nuts_fit, top=2, random_seed=1)
    rows = _variable_rows(page)
    assert set(rows) == {str(v) for v in nuts_fit["posterior"].data_vars}
    assert all(star for star, _, _ in rows.values())
    assert _bfmi_cells(page) == [
        f"{v:.3f}" for v in _textbook_bfmi(nuts_fit["sample_stats"]["energy"])
    ]
    _assert_energy_figure(page)
    assert '<table class="kv" id="tree-depth">' in page


def test_missing_energy_is_stated(result: xr.DataTree) -> None:
    """sample_stats without energy or tree statistics: the section says what is missing."""
    page = render_report(_as_nuts(result), top=2)
    note = re.search(r'<p class="note" id="energy-missing">(.*?)</p>', page, flags=re.S)
    assert "sample_stats has no energy (it holds: diverging)" in note.group(1)
    assert 'id="tree-depth-missing"' in page and 'id="bfmi"' not in page
    assert 'alt="energy plot' not in page
    assert 'id="variable-diagnostics"' in page  # the posterior is still diagnosed
    del result["sample_stats"]
    page = render_report(result, top=2)
    assert (
        "No energy diagnostics (E-BFMI, energy plot): the result has no sample_stats group" in page
    )


def test_exact_draws_show_no_energy(result: xr.DataTree) -> None:
    page = render_report(result, top=2)
    assert 'id="exact-statement"' in page
    for part in ("energy", "energy-missing", "bfmi", "variable-diagnostics", "tree-depth"):
        assert f'id="{part}"' not in page
    assert "E-BFMI" not in page


def _rater_tree(result: xr.DataTree) -> xr.DataTree:
    """A hand-built rater_effects-like NUTS result: rater effects ``b`` and hyperparameters
    next to the exact draws, nutpie's sample statistics, and sigma_rater's chains apart."""
    import json

    rng = np.random.default_rng(8)
    result = _as_nuts(result)
    post = result["posterior"].to_dataset()
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    raters, cats = [f"r{k}" for k in range(5)], list(post["category"].values)
    b = rng.normal(0.0, 0.1, size=(chains, draws, 5, 3))
    b[..., 0, 2] += 2.0  # r0 says "can't solve" far more often
    sigma_rater = np.abs(rng.normal(1.0, 0.1, size=(chains, draws, 3)))
    sigma_rater[1] += 1.0  # chain 1 elsewhere
    sample = ("chain", "draw")
    post = post.assign(
        b=((*sample, "rater", "category"), b),
        eta=((*sample, "item", "category"), np.zeros((chains, draws, post.sizes["item"], 3))),
        sigma_item=((*sample, "category"), np.abs(rng.normal(1.0, 0.1, size=(chains, draws, 3)))),
        sigma_rater=((*sample, "category"), sigma_rater),
        mu=((*sample, "category"), rng.normal(size=(chains, draws, 3))),
    ).assign_coords(rater=raters, category=cats)
    result["posterior"] = post
    answer_rater = np.arange(40) % 5
    result["constant_data"] = xr.Dataset(
        {
            "rater_answers": ("rater", np.bincount(answer_rater, minlength=5)),
            "answer_item": ("answer", np.arange(40) % post.sizes["item"]),
            "answer_rater": ("answer", answer_rater),
        },
        coords={"rater": raters},
    )
    energy = np.stack(
        [rng.normal(size=draws), rng.normal(size=draws).cumsum()]
    )  # chain 1: BFMI low
    depth = rng.integers(1, 4, size=(chains, draws))
    result["sample_stats"] = xr.Dataset(
        {
            "diverging": (sample, np.zeros((chains, draws), dtype=bool)),
            "energy": (sample, energy),
            "depth": (sample, depth),
            "n_steps": (sample, 2**depth - 1),
            "maxdepth_reached": (sample, depth == 3),
        }
    )
    names = [str(v) for v in post.data_vars]
    record = {
        "variables": names,
        "r_hat": 1.9,
        "ess_bulk": 5.0,
        "ess_tail": 5.0,
        "divergences": 0,
        "passed": False,
        "failed": ["r_hat", "ess_bulk", "ess_tail"],
    }
    for node in (result, result["posterior"]):
        node.attrs["model"] = "rater_effects"
        node.attrs["convergence"] = json.dumps(record)
    return result


def test_rater_fit_reports_hyperparameters_and_nutpie_stats(result: xr.DataTree) -> None:
    tree = _rater_tree(result)
    page = render_report(tree, top=2, random_seed=1)
    assert '<section id="raters">' in page and "over-uses" in page
    rows = _variable_rows(page)
    post = tree["posterior"]
    for name in ("b", "sigma_item", "sigma_rater", "mu", "amb"):
        star, n, cells = rows[name]
        assert star and n == int(post[name].size) // (2 * 300)
        r_hat, bulk, tail = _worst(post[name])
        assert cells[:3] == [f"{r_hat:.4f}", f"{bulk:.0f}", f"{tail:.0f}"]
        passed = r_hat <= 1.01 and bulk >= 400 and tail >= 400
        assert cells[3].startswith("passed" if passed else "missed")
    assert rows["sigma_rater"][2][3].startswith("missed (r_hat")  # its chains disagree
    assert "Check convergence before using these results." in page
    # E-BFMI: chain 0 white noise (about 2), chain 1 a random walk (far below 0.3)
    expected = _textbook_bfmi(tree["sample_stats"]["energy"])
    assert expected[0] > 1.5 and expected[1] < 0.05
    assert _bfmi_cells(page) == [f"{v:.3f}" for v in expected]
    assert '<td>1</td><td><span class="warn">' in page and "1 chain below 0.3" in page
    _assert_energy_figure(page)
    # nutpie's tree statistics
    stats = tree["sample_stats"]
    table = re.search(r'<table class="kv" id="tree-depth">(.*?)</table>', page, flags=re.S)
    text = re.sub(r"<[^>]+>", "", table.group(1))
    assert "<code>depth</code>" in table.group(
        1
    ) and "<code>maxdepth_reached</code>" in table.group(1)
    assert f"{int(stats['maxdepth_reached'].sum())} of {2 * 300}" in text
    assert f"{stats['depth'].values.mean():.2f} / 3" in text
    assert "Trajectories that hit the maximum depth were cut short" in page


def test_variable_table_budget(result: xr.DataTree, monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables the record did not check are diagnosed within MAX_DIAGNOSED_VALUES only."""
    monkeypatch.setattr(writer, "MAX_DIAGNOSED_VALUES", 1)
    out = writer._variable_diagnostics(_as_nuts(result), ["amb"])
    rows = {r["name"]: r for r in out["rows"]}
    assert rows["amb"]["computed"] and rows["amb"]["checked"]
    assert not rows["q"]["computed"] and not rows["q"]["checked"]
    assert out["n_skipped"] == len(rows) - 1
    page = render_report(_with_record(result, passed=True, failed=[]), top=2)
    assert "not diagnosed (over the report's budget)" in page


# ------------------------------------------------------- the verdict first (issue 22, part 4)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def test_unconverged_fit_says_so_first(learned_result: xr.DataTree, learned_page: str) -> None:
    """The collapsed fit (2 x 200 draws) missed the standard: the page opens with that,
    before any estimate, names the worst parameter of every variable (hyperparameters
    included) with rank plots, advises what fits the failure, and every section with
    estimates says they come from an unconverged fit."""
    import json

    from ambppl.inference.convergence import convergence_advice

    page = learned_page
    record = json.loads(learned_result.attrs["convergence"])
    assert not record["passed"]
    first = page.index('<section id="verdict">')
    assert first < page.index('<section id="overview">')
    assert first < page.index('<section id="learned-prior">')
    assert page.index("<section") == first and '<a href="#verdict" class="warn">' in page
    verdict = page_section(page, "verdict")
    assert "The fit did not converge: do not rely on the estimates below" in verdict
    # the worst parameter of every stored variable, worst first, hyperparameters included
    rows = re.findall(
        r"<tr><td class=\"text\"><code>([^<]+)</code></td>(.*?)</tr>",
        re.search(r'<table id="verdict-worst">(.*?)</table>', verdict, flags=re.S).group(1),
        flags=re.S,
    )
    names = [r[0] for r in rows]
    variables = {n.split("[")[0] for n in names}
    assert variables == {str(v) for v in learned_result["posterior"].data_vars}
    assert "kappa" in names and any(n.startswith("mu[") for n in names)
    assert f"Furthest from the standard: <code>{names[0]}</code>" in verdict
    # what comes from these draws, and what does not (the refits under fixed priors)
    said = _text(verdict)
    assert "From these draws come the item table and which items count as the most" in said
    assert "the learned prior and its columns under Prior sensitivity" in said
    assert "(the refits under fixed priors in Prior sensitivity are separate exact draws)" in said
    assert "rater table" not in said  # no raters in this model
    assert "not always the largest R-hat" in said
    # the same parameter as the fit's warning (its record checked mu and kappa)
    assert names[0] == record["worst"][0]["parameter"]
    # the kappa row holds ArviZ's diagnostics of kappa
    import arviz as az

    kappa = learned_result["posterior"]["kappa"]
    cells = re.findall(r"<td>([^<]*)</td>", rows[names.index("kappa")][1])
    assert cells[:3] == [
        f"{float(az.rhat(kappa)):.3f}",
        f"{float(az.ess(kappa, method='bulk')):.0f}",
        f"{float(az.ess(kappa, method='tail')):.0f}",
    ]
    # rank plots of the worst parameters (ArviZ's plot_rank), embedded
    image = re.search(r'alt="rank plots of the parameters furthest[^"]*" src="([^"]+)"', verdict)
    assert image is not None and image.group(1).startswith("data:image/png;base64,")
    # the advice fits what failed: the same words as the fit's own advice (Python keywords:
    # no command line was given)
    advice = _text(re.search(r'<p id="verdict-advice">(.*?)</p>', verdict, flags=re.S).group(1))
    failed = set(record["failed"])
    if "divergences" in failed:
        assert "target_accept" in advice and "draw more" not in advice
    elif "r_hat" in failed:
        assert "tune longer (sample_kwargs=" in advice
    else:
        assert "draw more (draws=" in advice
    assert record["failed"] and convergence_advice(record).split(":")[0] in advice
    # every section with estimates agrees with the headline
    learned = page_section(page, "learned-prior")
    assert "Not converged:" in learned and "<strong>" not in learned
    assert "(not converged, see the top of the page;" in learned
    for name in ("distribution", "items", "top", "sensitivity"):
        assert "Not converged:" in page_section(page, name), name
    assert "No convergence problems found." not in page
    assert "Check convergence before using these results." in page


def test_converged_fit_says_so_first(result: xr.DataTree) -> None:
    """Independent draws labelled NUTS with a passing record: one green line first, no
    warnings in the sections below."""
    record = {"r_hat": 1.0042, "ess_bulk": 812.4, "ess_tail": 650.6, "divergences": 0}
    page = render_report(_with_record(result, **record, passed=True, failed=[]), top=2)
    verdict = page_section(page, "verdict")
    assert _text(verdict).startswith("The fit met the convergence standard")
    assert "Not converged" not in page and 'id="verdict-worst"' not in page
    assert page.index('<section id="verdict">') < page.index('<section id="overview">')


def test_divergences_alone_name_the_worst_parameters(result: xr.DataTree) -> None:
    """Divergent transitions with well-mixed draws: still missed, the parameters closest to
    the limits are named, the advice is about step size and parameterization, and on the
    command line it names the command's options."""
    page = render_report(_as_nuts(result, n_divergent=4), top=2, command="ambppl report x.csv")
    verdict = page_section(page, "verdict")
    assert "missed <code>divergences</code>" in verdict
    assert "4 divergent transitions in 600 draws" in _text(verdict)
    advice = _text(re.search(r'<p id="verdict-advice">(.*?)</p>', verdict, flags=re.S).group(1))
    assert "--target-accept 0.95" in advice and "more draws do not help" in advice
    assert "draw more" not in advice and "sample_kwargs" not in advice
    assert 'id="verdict-worst"' in verdict


def test_exact_draws_say_so_first(result: xr.DataTree) -> None:
    """Exact draws have no convergence verdict, but the page opens the same way as after
    NUTS: one line that the draws can be trusted, before any section with a table."""
    page = render_report(result, top=2)
    assert "Not converged" not in page and 'id="verdict-worst"' not in page
    assert page.index("<section") == page.index('<section id="verdict">')
    assert page.index('<section id="verdict">') < page.index("<table")
    verdict = page_section(page, "verdict")
    assert _text(verdict).startswith("The draws are exact: independent draws of the conjugate")
    assert '<span class="ok">The draws are exact</span>' in verdict
    assert 'id="read-first"' not in verdict  # nothing to read first


def _without_cant_solve(tree: xr.DataTree) -> xr.DataTree:
    """The hand-built rater fit with its last category read as a proper label."""
    for node in (tree, tree["posterior"]):
        node.attrs.pop("cant_solve", None)
    counts = tree["observed_data"]["counts"].copy()
    counts.attrs.pop("cant_solve", None)
    tree["observed_data"] = xr.Dataset({"counts": counts})
    return tree


def test_rater_section_without_cant_solve_ranks_by_label_bias(result: xr.DataTree) -> None:
    """No can't-solve label: one row per rater, strongest label bias first, with the
    favoured label, the label bias (summarize_raters) and its HDI; no empty odds columns."""
    import arviz as az

    from ambppl.analysis.raters import summarize_raters

    tree = _without_cant_solve(_rater_tree(result))
    page = render_report(tree, top=2, random_seed=1)
    section = page_section(page, "raters")
    assert "odds ratio" not in section and "<th>HDI</th>" in section
    body = re.search(r'<table class="sortable" id="rater-table">(.*?)</table>', section, re.S)
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), flags=re.S)[1:]
    cells = [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, flags=re.S)] for r in rows]
    # the expected table, computed here: bias of each label over the rater's mean, per draw
    b = tree["posterior"]["b"].transpose("chain", "draw", "rater", "category")
    strength = (b - b.mean("category")).max("category")
    hdi = az.hdi(strength, prob=0.89, dim=["chain", "draw"]).transpose("rater", "ci_bound")
    table = summarize_raters(tree)
    np.testing.assert_allclose(
        table["label_bias"], strength.mean(("chain", "draw")).values, rtol=1e-12
    )
    order = table["label_bias"].sort_values(ascending=False).index
    assert [c[0] for c in cells] == list(order)
    assert cells[0][0] == "r0" and cells[0][2] == "cs"  # r0's planted bias towards "cs"
    for c in cells:
        row = table.loc[c[0]]
        low, high = hdi.sel(rater=c[0]).values
        assert c[2] == row["favoured_label"] and c[3] == f"{row['label_bias']:.2f}"
        assert c[4] == f"[{low:.2f}, {high:.2f}]"
        assert "–" not in c
    assert [float(c[3]) for c in cells] == sorted((float(c[3]) for c in cells), reverse=True)


def test_rater_section_with_cant_solve_keeps_the_odds_ratios(result: xr.DataTree) -> None:
    section = page_section(render_report(_rater_tree(result), top=2, random_seed=1), "raters")
    assert "<th>odds ratio</th>" in section and "over-uses" in section


def test_report_names_its_source(result: xr.DataTree) -> None:
    page = render_report(result, top=2, source="answers.csv")
    assert "<title>ambppl report: answers.csv</title>" in page
    assert "<code>answers.csv</code>" in page_section(page, "overview")


def test_command_line_report_names_the_file_and_prints_progress(
    result: xr.DataTree,
    tmp_path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A model fitted to the rows of a file (its counts say "DataFrame"): the report's title
    names the file; the long steps print progress lines, which -q silences."""
    from ambppl import cli
    from ambppl.cli import report as report_command
    from ambppl.inference import fitting

    result["observed_data"]["counts"].attrs["source"] = "DataFrame"
    # the names ``ambppl report`` calls (ambppl/cli/report.py; the report's fit goes through
    # ambppl.inference.fitting.fit_with_progress)
    monkeypatch.setattr(fitting, "fit", lambda data, **kwargs: result)
    monkeypatch.setattr(report_command, "_model_settings", lambda args: ("nuts", {}))
    data = tmp_path / "answers.csv"
    data.write_text("task,worker,label\na,w1,yes\na,w2,no\nb,w1,yes\n")
    out = tmp_path / "r.html"
    assert cli.main(["report", str(data), "-o", str(out), "--top", "2"]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"<title>ambppl report: {data}</title>" in page and "DataFrame" not in page
    err = capsys.readouterr().err
    steps = [line for line in err.splitlines() if line.startswith("ambppl: report: ")]
    assert steps[0].startswith("ambppl: report: summarizing 8 items (")
    assert any("diagnosing convergence" in s for s in steps)
    assert "ambppl: report drawn in " in err
    assert cli.main(["report", str(data), "-o", str(out), "--force", "-q", "--top", "2"]) == 0
    assert capsys.readouterr().err == ""
