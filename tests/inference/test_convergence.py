"""Tests of ambppl.inference.convergence: the worst parameters and the advice that fits the failure.

Draws are fabricated (no sampler): independent normal draws meet the standard; an AR(1)
chain with autocorrelation 0.99 has an ESS of about N (1 - 0.99) / (1 + 0.99) ~ N / 200
(Geyer 1992), far below 400; a chain shifted by 3 standard deviations gives R-hat far above
1.01 (about sqrt(1 + 9/4 * 3/4) ~ 1.6 for one of four chains).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import xarray as xr

from ambppl import cli
from ambppl.inference.convergence import (
    CONVERGENCE,
    ConvergenceWarning,
    check_convergence,
    convergence_advice,
    convergence_message,
    stored_record,
    worst_parameters,
)
from ambppl.inference.diagnostics import diagnose


def _ar1(rng: np.random.Generator, shape: tuple[int, ...], phi: float) -> np.ndarray:
    x = np.zeros(shape)
    noise = rng.normal(size=shape)
    for t in range(1, shape[1]):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def _tree(n_divergent: int = 0, stuck: bool = True, sticky: bool = False) -> xr.DataTree:
    """A rater-model-like posterior: hyperparameter ``sigma_item`` (category), item logits
    ``eta`` (item x category) and ``kappa``; 4 chains x 1000 draws."""
    rng = np.random.default_rng(2024)
    chains, draws = 4, 1000
    sigma = rng.normal(size=(chains, draws, 2))
    if stuck:
        sigma[0, :, 1] += 3.0  # chain 0 of sigma_item["no"] elsewhere: R-hat ~ 1.6
    eta = rng.normal(size=(chains, draws, 50, 2))
    kappa = _ar1(rng, (chains, draws), 0.99) if sticky else rng.normal(size=(chains, draws))
    diverging = np.zeros((chains, draws), dtype=bool)
    diverging.flat[:n_divergent] = True
    post = xr.Dataset(
        {
            "sigma_item": (("chain", "draw", "category"), sigma),
            "eta": (("chain", "draw", "item", "category"), eta),
            "kappa": (("chain", "draw"), kappa),
        },
        coords={"category": ["yes", "no"], "item": [f"i{k}" for k in range(50)]},
    )
    return xr.DataTree.from_dict(
        {
            "posterior": post,
            "sample_stats": xr.Dataset({"diverging": (("chain", "draw"), diverging)}),
        }
    )


def test_worst_parameters_names_every_variable_worst_first() -> None:
    """Each variable's worst scalar comes first (100 item scalars do not crowd out a
    hyperparameter), with its coordinates in the name and ArviZ's own diagnostics."""
    import arviz as az

    tree = _tree(stuck=True, sticky=True)
    post = tree["posterior"].to_dataset()
    diag = {v: diagnose(post[v].values) for v in post.data_vars}
    worst = worst_parameters(post, diag, n=3)
    # the stuck chain (R-hat ~ 1.5, ESS ~ 8) before the sticky kappa (ESS ~ 20), then the
    # worst of the 100 well-mixed eta scalars
    assert [w["variable"] for w in worst] == ["sigma_item", "kappa", "eta"]
    by_name = {w["parameter"]: w for w in worst}
    assert "sigma_item[no]" in by_name and "kappa" in by_name
    assert any(p.startswith("eta[i") and p.endswith(("yes]", "no]")) for p in by_name)
    # the values are ArviZ's (to rounding) at the named coordinates
    stuck = by_name["sigma_item[no]"]
    da = post["sigma_item"].sel(category="no")
    assert stuck["r_hat"] == pytest.approx(float(az.rhat(da)), rel=1e-10)
    assert stuck["ess_bulk"] == pytest.approx(float(az.ess(da, method="bulk")), rel=1e-10)
    assert stuck["r_hat"] > 1.3 and "r_hat" in stuck["missed"]
    assert by_name["kappa"]["ess_bulk"] < CONVERGENCE["ess_bulk"]
    severities = [w["severity"] for w in worst]
    assert severities == sorted(severities, reverse=True)
    # more than the variables: the next worst scalars fill up, still worst first
    worst6 = worst_parameters(post, diag, n=6)
    assert len(worst6) == 6 and worst6[:3] == worst


@pytest.mark.parametrize(
    ("record", "expected", "absent"),
    [
        (  # divergences, with a low ESS too: the divergences decide, never "draw more"
            {"failed": ["ess_bulk", "divergences"], "divergences": 7, "ess_bulk": 90.0},
            ["7 divergent transitions", "more draws do not help", "target_accept"],
            ["draw more", "tune longer"],
        ),
        (
            {"failed": ["r_hat"], "r_hat": 1.3, "draws": 500},
            ["the chains disagree", "tune longer (sample_kwargs={'tune': 2000})"],
            ["draw more", "divergent"],
        ),
        (  # both: both remedies (500 * 400 / 50 = 4000 draws)
            {"failed": ["r_hat", "ess_bulk"], "r_hat": 1.3, "ess_bulk": 50.0, "draws": 500},
            ["tune longer (sample_kwargs={'tune': 2000})", "draw more (draws=4000 or more)"],
            ["divergent"],
        ),
        (  # low ESS alone: draws * 400 / 120 = 3334, rounded up to hundreds
            {"failed": ["ess_tail"], "ess_tail": 120.0, "draws": 1000},
            ["autocorrelated", "draw more (draws=3400 or more)"],
            ["divergent", "tune"],
        ),
    ],
)
def test_advice_matches_the_failure(record, expected, absent) -> None:
    text = convergence_advice({"passed": False, **record})
    for part in expected:
        assert part in text
    for part in absent:
        assert part not in text


def test_advice_on_the_command_line_names_options_not_keywords() -> None:
    records = [
        {"passed": False, "failed": ["divergences"], "divergences": 3},
        {"passed": False, "failed": ["r_hat"], "r_hat": 1.2},
        {"passed": False, "failed": ["ess_bulk"], "ess_bulk": 200.0, "draws": 1000},
    ]
    texts = [convergence_advice(r, command_line=True) for r in records]
    assert "--target-accept 0.95" in texts[0]
    assert "--tune 2000" in texts[1]
    assert "raise --draws to 2000 or more" in texts[2]
    for text in texts:
        assert "sample_kwargs" not in text and "draws=" not in text and "tune=" not in text
    assert convergence_advice({"passed": True, "failed": []}) == ""


def test_divergence_advice_names_the_models_parameterization() -> None:
    """rater_effects has the parameter ``centred``: divergences point to it."""
    record = {"passed": False, "failed": ["divergences"], "divergences": 19}
    assert "centred=false" in convergence_advice(record, model="rater_effects")
    text = convergence_advice(record, model="rater_effects", command_line=True)
    assert "--param centred=false" in text
    assert "centred" not in convergence_advice(record, model="dirichlet_categorical")


def test_advice_quotes_the_models_slow_spot_for_its_worst_variable() -> None:
    """rater_effects' info record names sigma_item's known slow mixing (the dog photos): the
    advice quotes it when sigma_item is the worst parameter of an R-hat or ESS miss, and only
    then."""
    record = {
        "passed": False,
        "failed": ["r_hat", "ess_bulk"],
        "r_hat": 1.032,
        "ess_bulk": 165.0,
        "draws": 2000,
        "worst": [{"parameter": "sigma_item[c1]", "variable": "sigma_item"}],
    }
    text = convergence_advice(record, model="rater_effects")
    assert "draw more (draws=4900 or more)" in text
    assert "sigma_item is where rater_effects is known to mix slowly" in text
    assert "dawid_skene" in text
    other = {**record, "worst": [{"parameter": "eta[1, c1]", "variable": "eta"}]}
    assert "known to mix slowly" not in convergence_advice(other, model="rater_effects")
    assert "known to mix slowly" not in convergence_advice(record, model="dawid_skene")
    diverged = {**record, "failed": ["divergences"], "divergences": 3}
    assert "known to mix slowly" not in convergence_advice(diverged, model="rater_effects")


def test_warning_names_the_worst_parameter_and_keeps_the_record() -> None:
    tree = _tree(stuck=True)
    with pytest.warns(ConvergenceWarning) as caught:
        record = check_convergence(tree, ["sigma_item", "eta", "kappa"], what="the test fit")
    assert len(caught) == 1
    warning = caught[0].message
    text = str(warning)
    assert text.startswith("the test fit missed the convergence standard")
    assert "worst parameter sigma_item[no] (R-hat 1." in text
    assert '"failed": ["r_hat"' in text and "tune longer" in text and "divergent" not in text
    assert warning.record == record and warning.what == "the test fit"
    stored = json.loads(tree.attrs["convergence"])
    assert stored["worst"][0]["parameter"] == "sigma_item[no]"
    assert stored["worst"][0]["index"] == [1] and stored["chains"] == 4
    assert {w["variable"] for w in stored["worst"]} == {"sigma_item", "eta", "kappa"}


@pytest.mark.parametrize("order", [["sigma_item", "late"], ["late", "sigma_item"]])
@pytest.mark.parametrize("late", ["constant", "one NaN draw"])
def test_a_variable_without_diagnostics_hides_no_other(order, late) -> None:
    """The extremes were Python's max/min over per-variable values: a NaN first (a constant's
    R-hat, a NaN draw's everything) made them NaN, which no limit flags, so a stuck
    sigma_item checked after it passed without a warning."""
    tree = _tree(stuck=True)
    post = tree["posterior"].to_dataset()
    values = np.full((4, 1000), 0.25)
    if late == "one NaN draw":
        values = np.random.default_rng(3).normal(size=(4, 1000))
        values[2, 10] = np.nan
    post["late"] = (("chain", "draw"), values)
    tree["posterior"] = xr.DataTree(post)
    with pytest.warns(ConvergenceWarning) as caught:
        record = check_convergence(tree, order)
    assert len(caught) == 1 and not record["passed"] and "r_hat" in record["failed"]
    if late == "constant":  # left out: the stuck sigma_item[no] is the worst, R-hat ~ 1.6
        assert 1.3 < record["r_hat"] < 2.0 and record["worst"][0]["parameter"] == "sigma_item[no]"
    else:  # a non-finite draw misses the standard itself
        assert record["r_hat"] == np.inf and record["ess_bulk"] == 0.0
        assert record["worst"][0]["parameter"] == "late"


def test_one_chain_cannot_pass_the_r_hat_limit() -> None:
    rng = np.random.default_rng(8)
    tree = xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"x": (("chain", "draw"), rng.normal(size=(1, 4000)))})}
    )
    with pytest.warns(ConvergenceWarning, match=r"one chain cannot show .*: run several") as w:
        record = check_convergence(tree, ["x"])
    assert record["failed"] == ["r_hat"] and np.isnan(record["r_hat"])
    assert record["ess_bulk"] > 3000  # the draws themselves are fine
    assert "chains=4" in str(w[0].message)
    assert "--chains 4" in convergence_advice(record, command_line=True)


def test_divergences_never_advise_more_draws() -> None:
    tree = _tree(n_divergent=5, stuck=False)
    with pytest.warns(ConvergenceWarning, match="5 divergent transitions") as caught:
        record = check_convergence(tree, ["sigma_item", "eta", "kappa"])
    assert record["failed"] == ["divergences"]
    assert "draw more" not in str(caught[0].message)


def test_passing_fit_does_not_warn() -> None:
    tree = _tree(stuck=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record = check_convergence(tree, ["sigma_item", "eta", "kappa"])
    assert record["passed"] and record["failed"] == []
    # even a passing record names the parameters closest to the limits
    assert len(record["worst"]) == 6


def test_command_line_prints_one_warning_line_with_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command prints the fit's ConvergenceWarning as one line naming the worst
    parameter, with the command's options (--tune), not Python keywords."""
    tree = _tree(stuck=True, sticky=True)
    with cli._warnings_as_lines():
        check_convergence(tree, ["sigma_item", "eta", "kappa"], what="the nuts fit")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the nuts fit missed")
    assert "worst parameter " in lines[0]
    worst = json.loads(tree.attrs["convergence"])["worst"][0]["parameter"]
    assert f"worst parameter {worst} (" in lines[0]
    # the record's extremes, which may be other parameters' (a smaller ESS elsewhere), are
    # labelled as such: read beside the worst parameter's own ESS they looked contradictory
    assert '; over all parameters {"chains": 4, "draws": 1000, "r_hat": ' in lines[0]
    assert "--tune 2000" in lines[0]
    assert "sample_kwargs" not in lines[0] and "draws=" not in lines[0]


def test_message_is_built_from_the_record_alone() -> None:
    record = {
        "passed": False,
        "failed": ["ess_bulk"],
        "ess_bulk": 100.0,
        "draws": 500,
        "worst": [{"parameter": "b[r7, yes]", "r_hat": 1.002, "ess_bulk": 100.0}],
    }
    text = convergence_message(record, what="x", command_line=True)
    assert "worst parameter b[r7, yes] (R-hat 1.002, bulk ESS 100)" in text
    assert text.endswith("draw more (raise --draws to 2000 or more)")


def test_command_line_tune_and_target_accept_reach_the_sampler(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--tune and --target-accept, the options the advice names, are passed to NUTS; with a
    method that runs no NUTS they are one error line naming them."""
    import importlib

    fit_module = importlib.import_module(
        "ambppl.inference.fitting"
    )  # ambppl.fit is also the function
    seen: dict = {}

    def fake_fit(data, **kwargs):
        seen.update(kwargs)
        raise ValueError("stopped after recording the arguments")

    # the name that ambppl.score, the one call of ``ambppl score``, reaches for a NUTS method
    # (through ambppl.inference.fitting.fit_with_progress)
    monkeypatch.setattr(fit_module, "fit", fake_fit)
    data = tmp_path / "answers.csv"
    data.write_text("task,worker,label\na,w1,yes\na,w2,no\nb,w1,yes\n")
    argv = ["score", str(data), "-q", "-o", str(tmp_path / "s.csv")]
    assert cli.main([*argv, "--method", "nuts", "--tune", "1500", "--target-accept", "0.95"]) == 2
    assert seen["sample_kwargs"] == {"tune": 1500, "target_accept": 0.95}
    assert "stopped after recording" in capsys.readouterr().err
    seen.clear()
    assert cli.main([*argv, "--target-accept", "0.9"]) == 2  # the default method: exact
    err = capsys.readouterr().err
    assert err.startswith("ambppl: error: --target-accept tune NUTS, but --method exact of")
    assert "choose --method nuts" in err
    assert "sample_kwargs" not in err and not seen


def test_an_extreme_held_by_another_parameter_is_named() -> None:
    """The message named "worst parameter mu[0] (R-hat 1.014, ...)" while the record's R-hat
    was 1.023: the worst parameter is the furthest from the standard by its largest ratio
    to a limit (here its small ESS), not the one with the largest R-hat. The message says
    how it was chosen and names the parameter that holds each missed extreme."""
    rng = np.random.default_rng(0)
    sticky = np.repeat(rng.normal(size=(4, 50)), 20, axis=1)  # each draw 20 times: low ESS
    apart = rng.normal(size=(4, 1000))
    apart[0] += 0.5  # chain 0 of kappa off centre: R-hat above 1.01, ESS fine
    post = xr.Dataset(
        {
            "mu": (("chain", "draw", "k"), np.stack([sticky, rng.normal(size=(4, 1000))], -1)),
            "kappa": (("chain", "draw"), apart),
        }
    )
    tree = xr.DataTree.from_dict({"posterior": post})
    with pytest.warns(ConvergenceWarning) as caught:
        record = check_convergence(tree, ["mu", "kappa"])
    worst = record["worst"][0]
    # the situation reported: the worst parameter does not hold the largest R-hat
    assert worst["parameter"] == "mu[0]" and "r_hat" in record["failed"]
    assert worst["r_hat"] < record["r_hat"]
    diag = {v: diagnose(post[v].values) for v in ("mu", "kappa")}
    assert record["extremes_at"]["r_hat"] == "kappa"
    assert float(diag["kappa"]["r_hat"]) == pytest.approx(record["r_hat"])
    assert record["extremes_at"]["ess_bulk"] == "mu[0]"
    text = str(caught[0].message)
    assert (
        f"worst parameter mu[0] (R-hat {worst['r_hat']:.3f}, bulk ESS "
        f"{worst['ess_bulk']:.0f}, tail ESS {worst['ess_tail']:.0f}), the furthest from the "
        "standard by its largest ratio to a limit; the largest R-hat "
        f"({record['r_hat']:.3f}) is kappa's; over all parameters {{"
    ) in text
    assert "extremes_at" not in text  # said in words, not repeated in the JSON


def test_a_record_without_extremes_still_reads() -> None:
    """Records stored before ``extremes_at`` existed (fits saved to netCDF) keep their
    message, with the worst parameter's choice said."""
    record = {
        "passed": False,
        "failed": ["r_hat"],
        "r_hat": 1.03,
        "draws": 1000,
        "worst": [{"parameter": "mu[0]", "r_hat": 1.01, "ess_bulk": 150.0}],
    }
    text = convergence_message(record)
    assert "worst parameter mu[0] (R-hat 1.010, bulk ESS 150), the furthest from" in text
    assert "is kappa's" not in text and "largest R-hat (" not in text


@pytest.mark.parametrize("result", [5, {"posterior": {}}, "fit.nc"])
def test_stored_record_refuses_what_is_not_a_tree(result) -> None:
    # stored_record(5) raised a bare AttributeError ('int' object has no attribute 'attrs')
    with pytest.raises(TypeError, match=r"result must be an xarray.DataTree .*but got"):
        stored_record(result)


def test_stored_record_of_a_tree_without_a_posterior_is_none() -> None:
    # no posterior group (e.g. a tree of observed data only): no NUTS ran, not a KeyError
    assert stored_record(xr.DataTree.from_dict({"observed_data": xr.Dataset()})) is None


def test_message_numbers_are_valid_json_with_one_chain() -> None:
    # one chain has no R-hat (NaN), and the message printed `"r_hat": NaN`, not JSON
    record = {
        "passed": False,
        "failed": ["r_hat"],
        "chains": 1,
        "r_hat": float("nan"),
        "ess_bulk": 150.0,
        "ess_tail": float("inf"),
        "divergences": 0,
    }
    message = convergence_message(record)
    numbers = message.split("): ", 1)[1]  # the JSON, then "; " and the advice
    strict = json.JSONDecoder(parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert strict.raw_decode(numbers)[0] == {
        **record,
        "r_hat": None,
        "ess_tail": None,
    }
