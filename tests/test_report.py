"""Tests of the HTML report (ambppl/report: writer, figures, template)."""

from __future__ import annotations

import base64
import math
import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import REPORT_SECTIONS

from ambppl.fit import fit
from ambppl.report import render_report, writer
from ambppl.report.figures import plain
from ambppl.summary import rank, summarize

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
    assert conv == {"method": "exact", "chains": 2, "draws": 300, "exact": True}


def _moments_table(z: np.ndarray, sd: float, n_draws: int) -> pd.DataFrame:
    exact_mean = np.linspace(0.2, 0.6, len(z))
    mcse = sd / math.sqrt(n_draws)
    return pd.DataFrame(
        {"mean": exact_mean + z * mcse, "sd": sd, "exact_mean": exact_mean, "exact_sd": sd},
        index=pd.Index([f"i{k}" for k in range(len(z))], name="item"),
    )


def test_agreement_z_scores() -> None:
    z = np.linspace(-2.0, 2.0, 100)
    out = writer._agreement(_moments_table(z, sd=0.1, n_draws=400), 400, exact=True)
    assert out["available"] and out["ok"] and out["n"] == 100
    assert out["max_abs_z"] == pytest.approx(2.0, rel=1e-9)
    assert out["n_above_3"] == 0 and out["sd_ratio_median"] == 1.0
    # expected number beyond |z| > 3 among 100 items: 100 * erfc(3 / sqrt(2)) (normal tails)
    assert out["expected_above_3"] == pytest.approx(100 * math.erfc(3 / math.sqrt(2)), rel=1e-9)
    # Bonferroni critical value, two-sided 1 % over 100 items: P(|z| > c) = 1e-4, so
    # c = sqrt(2) erfinv(1 - 1e-4) = 3.890591886413094 (mpmath, 30 digits)
    assert out["z_crit"] == pytest.approx(3.890591886413094, rel=1e-9)

    bad = writer._agreement(_moments_table(np.r_[z, 10.0], 0.1, 400), 400, exact=True)
    assert not bad["ok"] and bad["n_above_4"] == 1 and bad["worst"][0]["z"] == pytest.approx(10)


def test_agreement_uses_ess_for_mcmc() -> None:
    table = _moments_table(np.full(3, 2.0), sd=0.1, n_draws=400)
    table["ess_bulk"] = 100.0  # 4 times fewer effective draws: MCSE doubles, z halves
    out = writer._agreement(table, 400, exact=False)
    assert out["max_abs_z"] == pytest.approx(1.0)


def test_agreement_without_closed_form() -> None:
    table = _moments_table(np.zeros(3), 0.1, 400)
    table["exact_mean"] = np.nan
    assert writer._agreement(table, 400, exact=True) == {"available": False}


def test_draws_agree_with_closed_form(rng: np.random.Generator) -> None:
    """End to end: exact draws against ambppl's closed-form moments (1 % Bonferroni level)."""
    out = writer._agreement(
        summarize(fit(_counts(rng, 40), draws=500, chains=2, random_seed=5)), 1000, exact=True
    )
    assert out["available"] and out["ok"], out["worst"]


def test_prior_sensitivity_matches_closed_form(result: xr.DataTree) -> None:
    from ambppl.moments import dirichlet_mean, dirichlet_var

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
    counts = result["observed_data"]["counts"].sel(item=list(table.index[:3])).values
    n_draws = 2 * sens["draws"]
    for j, beta in enumerate((0.5, 1.0, 2.0)):
        exact = dirichlet_mean(counts + beta, measure="amb", cant_solve=-1)
        mcse = np.sqrt(dirichlet_var(counts + beta, measure="amb", cant_solve=-1) / n_draws)
        got = np.array([r["by_prior"][j]["mean"] for r in sens["rows"]])
        assert np.all(np.abs(got - exact) <= 5 * mcse)
        for r in sens["rows"]:
            p = r["by_prior"][j]
            assert p["lower"] <= p["mean"] <= p["upper"] and 0 <= p["p_above"] <= 1


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


def test_model_without_exact_sampler(
    result: xr.DataTree, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog model with no conjugate sampler: no prior refits and no closed forms."""
    import json
    import shutil

    from ambppl.catalog import get_model

    entry = get_model("dirichlet_categorical")
    shutil.copy(entry.path, tmp_path / "no_exact.py")
    info = {**entry.info, "name": "no_exact", "exact": None}
    (tmp_path / "no_exact.json").write_text(json.dumps(info))
    monkeypatch.setenv("AMBPPL_MODELS", str(tmp_path))
    result.attrs["model"] = result["posterior"].attrs["model"] = "no_exact"
    page = render_report(result, top=2)
    assert "model &#39;no_exact&#39; has no exact sampler" in page
    assert "No closed-form posterior moments are available" in page
