"""Tests of ``ambppl.validation.check_fit`` (one verdict per fit, the predictive statistics in
words, the suggested models, ``compare``) and of the rater model's mixed predictive."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.cli import main
from ambppl.data.readers import example_path, read_long
from ambppl.validation import FitCheck, check_fit, check_predictive, validate
from ambppl.validation._result import holm
from ambppl.validation.fit_check import MEANINGS, _holm_levels

WEATHER_CS = "I can't tell"


@pytest.fixture(scope="module")
def weather_flat():
    """The bundled weather tweets under the flat prior: the predictive check fails (the
    measurement on docs/topics/validation.md: a fifth of answers can't-solve under
    Dirichlet(1), 5 % observed)."""
    return ambppl.fit(
        ambppl.read_annotations(example_path("weather_sentiment"), cant_solve=WEATHER_CS),
        draws=1000,
        chains=2,
        random_seed=3,
    )


def _flat_counts(rng: np.random.Generator, items: int = 150, answers: int = 10) -> np.ndarray:
    """Data from the flat model itself: q_i ~ Dirichlet(1) over 3 categories."""
    return rng.multinomial(answers, rng.dirichlet(np.ones(3), size=items))


# ------------------------------------------------------------------------------ the verdict


@pytest.fixture(scope="module")
def flat_check() -> FitCheck:
    """check_fit of an exact fit to data from the flat model itself (every check passes)."""
    rng = np.random.default_rng(11)
    result = ambppl.fit(
        ambppl.read_annotations(_flat_counts(rng), cant_solve="2"),
        draws=1000,
        chains=2,
        random_seed=1,
    )
    return check_fit(result, random_seed=2)


@pytest.fixture(scope="module")
def small_exact() -> xr.DataTree:
    """An exact fit of 6 items x 3 categories (can't-solve last), 2 x 100 draws."""
    counts = np.array([[3, 1, 0], [0, 4, 1], [2, 2, 2], [5, 0, 0], [1, 3, 1], [0, 0, 4]])
    return ambppl.fit(
        ambppl.read_annotations(counts, cant_solve="2"), draws=100, chains=2, random_seed=4
    )


def _with_posterior(result: xr.DataTree, posterior: xr.Dataset) -> xr.DataTree:
    tree = result.copy(deep=True)
    tree["posterior"] = xr.DataTree(posterior)
    return tree


@pytest.mark.parametrize("where", ["one draw", "every draw"])
def test_non_finite_draws_fail_every_check_that_reads_them(small_exact, where) -> None:
    """NaN draws of an item were left out of the Holm family (z = NaN), so the moments and
    density checks passed on them."""
    from ambppl.validation import check_density, check_moments

    post = small_exact["posterior"].to_dataset().copy(deep=True)
    for name in post.data_vars:
        if "item" in post[name].dims:
            values = post[name].values
            index = (0, 5, 3) if where == "one draw" else (slice(None), slice(None), 3)
            values[index] = np.nan
    broken = _with_posterior(small_exact, post)
    for check in (check_moments, check_density):
        with pytest.raises(ValueError, match=r"non-finite draws .* e\.g\. \[3\]: the fit"):
            check(broken)
    verdict = check_fit(broken, random_seed=1)
    assert not verdict.passed and set(verdict.errors) >= {"moments", "density"}
    assert "FAILED the" in verdict.verdict and "moments" in verdict.verdict
    assert "moments stopped with an error (a failure): result's posterior holds" in verdict.text()
    assert set(verdict.table.loc[verdict.table["verdict"] == "ERROR", "check"]) >= {"moments"}


def test_draws_of_other_items_than_the_counts_are_an_error_not_a_skip(small_exact) -> None:
    """A posterior that lost an item: every check was 'skipped' (a numpy broadcast error
    read as 'does not apply') and the verdict was 'every check passed'."""
    short = _with_posterior(small_exact, small_exact["posterior"].to_dataset().isel(item=slice(5)))
    verdict = check_fit(short, random_seed=1)
    assert not verdict.passed and not verdict.skipped
    assert "posterior has 5 items but observed_data['counts'] has 6" in verdict.errors["moments"]


def _random_answers() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    rows = [(f"i{i}", f"r{r}", rng.choice(["a", "b", "c"])) for i in range(10) for r in range(4)]
    return read_long(pd.DataFrame(rows, columns=["task", "worker", "label"]), cant_solve="c")


def test_a_dawid_skene_point_gets_the_mixed_predictive_check() -> None:
    """dawid_skene's map point: no draws for moments and density, but the mixed predictive
    applies (fresh classes from pi, the answers from the raters' confusion rows); it was
    skipped ("dawid_skene has no population of q_i to draw from")."""
    verdict = check_fit(ambppl.fit(_random_answers(), "dawid_skene", method="map"), random_seed=1)
    assert list(verdict.checks) == ["predictive"] and not verdict.errors
    assert set(verdict.skipped) == {"moments", "density"}
    assert "z_i ~ Categorical(pi)" in verdict["predictive"].description
    assert verdict.predictive is not None and len(verdict.predictive) == 6
    assert (
        verdict.passed and verdict.verdict == "dawid_skene (map): every check passed (predictive)"
    )


def test_a_fit_no_check_applies_to_is_not_passed() -> None:
    """A point (dawid_skene's map) stored without q (var_names): no check applies, so nothing
    passed; the verdict said "every check passed (no check applied)" and ambppl validate
    exited 0."""
    result = ambppl.fit(_random_answers(), "dawid_skene", method="map", var_names=["amb"])
    verdict = check_fit(result, random_seed=1)
    assert not verdict.checks and not verdict.errors
    assert set(verdict.skipped) == {"moments", "density", "predictive"}
    assert "posterior draws of q" in verdict.skipped["predictive"]
    assert "at least 100 draws" in verdict.skipped["moments"]
    # more draws do not help a point: the reason names the model's methods that draw
    assert verdict.skipped["moments"].endswith(
        "method='map' gives one point, no draws: fit with method='nuts' or 'laplace' for "
        "draws to check"
    )
    assert "more draws" not in verdict.skipped["density"]
    assert not verdict.passed and not bool(verdict)
    assert verdict.verdict == (
        "dawid_skene (map): NOTHING CHECKED, no check applies to this fit "
        "(skipped: moments, density, predictive)"
    )


def test_a_failed_computation_check_says_it_may_be_a_false_alarm(flat_check) -> None:
    # each check raises a false alarm at its level (1 in 300 correct runs: three checks at
    # 0.01 / 3): the text says so and asks for a rerun before a report (it once said
    # "please report it")
    import dataclasses

    check = flat_check
    failed = dataclasses.replace(check.checks["moments"], passed=False)
    text = dataclasses.replace(check, checks={**check.checks, "moments": failed}).text()
    assert "moments: the draws disagree with the closed-form posterior moments: a false " in text
    assert "alarm (the check raises one in 300 correct runs)" in text
    assert "rerun with another seed, and report it if it fails again" in text


def test_the_verdict_holds_its_level_over_the_checks(flat_check) -> None:
    """Each of the m checks of the draws is decided at alpha / m (Bonferroni), so a correct
    fit fails the verdict with probability at most alpha. At alpha each, three checks failed
    a correct fit in 5 of 150 (0.033 +- 0.015; check_fit's Notes)."""
    check = flat_check
    assert check.level == 0.01 and check.posterior_checks == ["moments", "density", "predictive"]
    for name in check.posterior_checks:
        out = check.checks[name]
        assert out.level == pytest.approx(0.01 / 3)
        # flagged rows and the verdict are those of the check run at that level
        assert list(out.table["flagged"]) == list(out.table["p_holm"] <= 0.01 / 3)
        assert out.passed == (out.p_value > 0.01 / 3)
    # the predictive intervals are those of the lower level: wider than at 0.01
    assert (check.predictive["level"] >= 1 - 0.01 / 3 - 1e-12).all()


def test_a_check_between_alpha_over_m_and_alpha_passes() -> None:
    """A family-wise p-value of 0.005 fails a lone check at 0.01 and passes one of three."""
    import pandas as pd

    from ambppl.validation._result import ValidationResult, at_level, decide

    table = pd.DataFrame({"p_value": [0.0025, 0.2]})
    passed, p = decide(table, "p_value", 0.01)
    lone = ValidationResult("moments", passed, 1.0, p, 0.01, table)
    assert not lone.passed and p == pytest.approx(0.005)
    one_of_three = at_level(lone, 0.01 / 3)
    assert one_of_three.passed and one_of_three.level == pytest.approx(0.01 / 3)
    assert not one_of_three.table["flagged"].any() and lone.table["flagged"].iloc[0]


def test_flat_data_pass_every_check(flat_check) -> None:
    check = flat_check
    assert isinstance(check, FitCheck) and check.passed and bool(check)
    assert set(check.checks) == {"moments", "density", "predictive"} and not check.skipped
    assert list(check.table["check"]) == ["moments", "density", "predictive"]
    assert (check.table["verdict"] == "pass").all()
    table = check.predictive
    assert list(table["statistic"].unique()) == ["modal_share", "cant_solve_share", "plugin_amb"]
    assert (table["verdict"] == "pass").all() and (table["meaning"] == "").all()
    assert ((table["lower"] <= table["observed"]) & (table["observed"] <= table["upper"])).all()
    assert len(check.suggestions) == 0 and check.comparison is None
    assert "every check passed" in check.verdict and "FitCheck" in repr(check)
    assert check["predictive"] is check.checks["predictive"]


def test_failures_are_named_with_intervals_meanings_and_models(weather_flat) -> None:
    check = check_fit(weather_flat, random_seed=4)
    assert not check.passed and check.skipped.keys() == {"density"}
    assert "two proper classes" in check.skipped["density"]
    rows = check.predictive.set_index(["summary", "statistic"])
    # the same rows and verdicts as check_predictive with the same seed (the replicates are
    # drawn after the moment and density checks, which use no random numbers)
    direct = check_predictive(weather_flat, random_seed=np.random.default_rng(4))
    direct = direct.table.set_index(["summary", "statistic"])
    np.testing.assert_array_equal(rows["verdict"] == "FAIL", direct.loc[rows.index, "flagged"])
    np.testing.assert_allclose(rows["predicted"], direct.loc[rows.index, "rep_mean"])
    # a row fails exactly when the observed value lies outside its interval
    outside = (rows["observed"] < rows["lower"]) | (rows["observed"] > rows["upper"])
    np.testing.assert_array_equal(outside, rows["verdict"] == "FAIL")
    assert ((rows["level"] >= 0.99) & (rows["level"] < 1)).all()
    # the weather tweets agree far more than Dirichlet(1) items, and say "I can't tell" in
    # 5 % of answers against 1/5 under the prior (docs/topics/validation.md)
    agree = rows.loc[("mean", "modal_share")]
    assert agree["verdict"] == "FAIL" and agree["observed"] > agree["upper"]
    assert agree["meaning"].startswith("answers agree more than the model predicts")
    assert "a flat Dirichlet(1) prior" in agree["meaning"]
    rare = rows.loc[("mean", "cant_solve_share")]
    assert rare["verdict"] == "FAIL" and "rarer" in rare["meaning"]
    # suggestions: the learned prior first; the counts were read with rater ids
    assert list(check.suggestions["model"]) == ["hierarchical_dirichlet", "rater_effects"]
    text = check.text(command_line=True)
    assert "mean modal_share" in text and "what the failures mean" in text
    assert "rerun with --compare" in text and "99." in text
    assert "compare=True" in check.text() and "--compare" not in check.text()


def test_without_rater_ids_rater_effects_is_a_note_not_a_suggestion(weather_flat) -> None:
    counts = weather_flat["observed_data"]["counts"].copy()
    counts.attrs["n_raters"] = None
    result = ambppl.fit(counts, draws=1000, chains=2, random_seed=3)
    check = check_fit(result, random_seed=4)
    assert list(check.suggestions["model"]) == ["hierarchical_dirichlet"]
    assert any("no rater ids" in note and "--rater" in note for note in check.notes)


def test_a_learned_prior_that_fails_points_to_rater_effects(weather_flat) -> None:
    counts = weather_flat["observed_data"]["counts"]
    learned = ambppl.fit(
        counts,
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=200,
        chains=2,
        random_seed=5,
    )
    check = check_fit(learned, random_seed=6)
    assert "the Dirichlet population estimated by empirical Bayes" in check.population
    # the learned population misses the weather data's can't-solve pattern (the predictive
    # check fails), which only raters who differ explain
    assert not check.passed and not check.checks["predictive"].passed
    assert list(check.suggestions["model"]) == ["rater_effects"]
    assert "even a learned Dirichlet population" in check.suggestions["reason"].iloc[0]


def test_every_meaning_names_a_direction() -> None:
    from ambppl.validation.predictive import STATISTICS, SUMMARIES

    for statistic in STATISTICS:
        for summary in SUMMARIES:
            for direction in ("high", "low"):
                text = MEANINGS[(statistic, summary, direction)]
                assert text.format(population="the prior")


def test_holm_levels_give_holm_decisions() -> None:
    # Holm at alpha = 0.01 on two rows with p = 0.006, 0.007: the first is tested at 0.005,
    # is kept, and the procedure stops: both rows are held to 0.005 and neither is flagged
    np.testing.assert_allclose(_holm_levels(np.array([0.007, 0.006]), 0.01), [0.005, 0.005])
    np.testing.assert_allclose(_holm_levels(np.array([0.007, 0.001]), 0.01), [0.01, 0.005])
    rng = np.random.default_rng(8)
    for _ in range(500):
        m = int(rng.integers(1, 8))
        p = np.where(rng.random(m) < 0.5, rng.random(m) * 0.02, rng.random(m))
        alpha = float(rng.choice([0.01, 0.05]))
        np.testing.assert_array_equal(p <= _holm_levels(p, alpha), holm(p) <= alpha)


def test_bad_arguments() -> None:
    rng = np.random.default_rng(1)
    result = ambppl.fit(_flat_counts(rng, 20), draws=50, chains=2, random_seed=1)
    with pytest.raises(TypeError, match="result must be"):
        check_fit(result["posterior"].to_dataset())
    with pytest.raises(ValueError, match="alpha"):
        check_fit(result, alpha=1.5)
    with pytest.raises(TypeError, match=r"answers must be a pandas\.DataFrame"):
        check_fit(result, answers=np.zeros(3))
    with pytest.raises(ValueError, match="draws"):
        check_fit(result, compare=True, draws=0)


# --------------------------------------------------------------------- the same as the CLI


def test_the_command_line_prints_check_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "answers.csv"
    rng = np.random.default_rng(12)
    rows = [
        {"task": f"t{i}", "worker": f"w{j}", "label": lab}
        for i, q in enumerate(rng.dirichlet([0.3, 0.3, 0.3], size=60))
        for j, lab in enumerate(rng.choice(["a", "b", "c"], size=8, p=q))
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    code = main(["validate", str(path), "--draws", "1000", "--chains", "2", "--seed", "9", "-q"])
    out = capsys.readouterr().out
    result = ambppl.fit(ambppl.read_annotations(path), draws=1000, chains=2, random_seed=9)
    check = check_fit(result, random_seed=9)
    assert out.startswith(check.text(command_line=True))
    assert code == (0 if check.passed else 1)
    # answers far clearer than Dirichlet(1) items: the flat prior fails and the learned
    # prior is suggested
    assert not check.passed and "hierarchical_dirichlet" in out


def test_validate_is_what_the_command_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate`` (read data -> fit -> check_fit) returns what ``ambppl validate FILE``
    prints, and reports its steps."""
    path = tmp_path / "answers.csv"
    rng = np.random.default_rng(4)
    rows = [
        {"task": f"t{i}", "worker": f"w{j}", "label": lab}
        for i, q in enumerate(rng.dirichlet([1.0, 1.0, 1.0], size=40))
        for j, lab in enumerate(rng.choice(["a", "b", "c"], size=6, p=q))
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    options = ["--draws", "200", "--chains", "2", "--seed", "9", "--prior", "0.5", "-q"]
    code = main(["validate", str(path), *options])
    out = capsys.readouterr().out
    seen: list[str] = []
    data = ambppl.read_annotations(path)
    check = validate(data, draws=200, chains=2, random_seed=9, prior=0.5, progress=seen.append)
    assert isinstance(check, FitCheck) and check.method == "exact"
    assert out.startswith(check.text(command_line=True))
    assert code == (0 if check.passed else 1)
    assert (
        seen[0] == "fitting dirichlet_categorical (exact, 2 x 200 draws) to 40 items x 3 categories"
    )
    assert "checking the fit" in seen


# --------------------------------------------------------------------------------- compare


@pytest.mark.slow
def test_compare_fits_the_learned_prior(capsys: pytest.CaptureFixture[str]) -> None:
    """Data from a Dirichlet population unlike Dirichlet(1): the flat prior fails, the
    learned prior (collapsed NUTS) passes; the counts say they were read with rater ids, so
    rater_effects is suggested, but without the answers it is not fitted."""
    rng = np.random.default_rng(13)
    values = rng.multinomial(12, rng.dirichlet([2.0, 0.3, 0.3], size=120))
    counts = xr.DataArray(values, dims=("item", "category"), attrs={"n_raters": 30})
    result = ambppl.fit(counts, draws=250, chains=2, random_seed=2)
    check = check_fit(result, random_seed=3, compare=True, draws=1000, chains=2)
    table = check.comparison
    assert list(table["model"]) == [
        "dirichlet_categorical",
        "hierarchical_dirichlet",
        "rater_effects",
    ]
    absent = table.iloc[2]
    assert absent["verdict"] == "not fitted" and "rater ids" in absent["note"]
    assert absent["predictive"] == "-"
    assert list(table.columns) == [
        "model",
        "method",
        "moments",
        "density",
        "predictive",
        "convergence",
        "verdict",
        "note",
    ]
    first, learned = table.iloc[0], table.iloc[1]
    assert first["predictive"] == "FAIL" and first["convergence"] == "-"
    assert learned["method"] == "collapsed" and learned["predictive"] == "pass"
    # convergence ran (not "-"); 2 x 1000 draws may miss the standard, and the row's
    # verdict follows it: every other check of the row passed
    assert learned["moments"] == "pass" and learned["convergence"] in ("pass", "FAIL")
    assert learned["verdict"] == learned["convergence"]
    text = check.text()
    assert "comparison (each model with its defaults)" in text


def test_compare_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A small counts file: --compare fits hierarchical_dirichlet and prints the table."""
    rng = np.random.default_rng(14)
    path = tmp_path / "counts.npy"
    np.save(path, rng.multinomial(10, rng.dirichlet([2.0, 0.3, 0.3], size=40)))
    argv = ["validate", str(path), "--compare", "--draws", "300", "--chains", "2", "--seed", "5"]
    code = main([*argv, "-q"])
    out = capsys.readouterr().out
    assert code == 1  # the exit status is that of --model's fit: the flat prior fails
    lines = out.splitlines()
    start = lines.index("comparison (each model with its defaults):")
    header = lines[start + 1].split()
    assert header == [
        "model",
        "method",
        "moments",
        "density",
        "predictive",
        "convergence",
        "verdict",
    ]
    assert lines[start + 2].split()[0] == "dirichlet_categorical"
    assert lines[start + 3].split()[:2] == ["hierarchical_dirichlet", "collapsed"]
    # the closing line names exactly the rows whose verdict is pass
    rows = [line.split() for line in lines[start + 2 : start + 4]]
    winners = [row[0] for row in rows if row[-1] == "pass"]
    closing = next(line for line in lines[start:] if "passes every check" in line)
    if winners:
        assert closing == "  passes every check: " + ", ".join(winners)
    else:
        assert closing == "  none of these models passes every check"


def test_compare_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--compare", "-q"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("ambppl: error: --compare")


# ------------------------------------------------------------ the rater model's predictive


def _rater_tree(
    rng: np.random.Generator, item_order: list[int], n_draws: int = 50
) -> tuple[xr.DataTree, np.ndarray, np.ndarray]:
    """A rater-model result built by hand: sigma_item = 0 and the same mu and b in every
    draw, so each replicated answer is Categorical(softmax(mu + b_r)) exactly.

    ``item_order``: the model's item order (positions in answer_item) as labels of the
    counts, to check that replicates are matched to the counts by item label."""
    n_items, n_raters, k = len(item_order), 3, 3
    mu = np.array([0.5, 0.0, -0.5])
    b = np.array([[0.0, 0.0, 0.0], [1.0, -0.5, -0.5], [-1.0, -1.0, 2.0]])
    per_item = rng.integers(2, 7, size=n_items)
    item = np.repeat(np.arange(n_items), per_item)
    rater = rng.integers(0, n_raters, size=item.size)
    shape = (1, n_draws)
    model_items = [f"i{j}" for j in item_order]
    counts = np.zeros((n_items, k), dtype=np.int64)
    counts[:, 0] = per_item  # observed answers: only the number per item matters here
    counts_da = xr.DataArray(
        counts[np.argsort(item_order)],
        dims=("item", "category"),
        coords={"item": [f"i{j}" for j in range(n_items)], "category": ["a", "b", "cs"]},
        attrs={"cant_solve": "cs"},
    )
    posterior = xr.Dataset(
        {
            "mu": (("chain", "draw", "category"), np.broadcast_to(mu, (*shape, k))),
            "sigma_item": (("chain", "draw", "category"), np.zeros((*shape, k))),
            "b": (("chain", "draw", "rater", "category"), np.broadcast_to(b, (*shape, *b.shape))),
            "eta": (("chain", "draw", "item", "category"), np.zeros((*shape, n_items, k))),
            "q": (("chain", "draw", "item", "category"), np.full((*shape, n_items, k), 1 / k)),
        },
        coords={"item": model_items, "category": ["a", "b", "cs"]},
    )
    tree = xr.DataTree.from_dict(
        {
            "posterior": posterior,
            "observed_data": xr.Dataset({"counts": counts_da}),
            "constant_data": xr.Dataset(
                {"answer_item": ("answer", item), "answer_rater": ("answer", rater)}
            ),
        }
    )
    tree.attrs.update({"model": "rater_effects", "method": "nuts", "cant_solve": "cs"})
    logits = mu + b
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    # expected can't-solve share of each item (model order), from its raters' p
    expected = np.bincount(item, weights=p[rater, 2], minlength=n_items) / per_item
    return tree, expected, per_item


def test_rater_model_mixed_predictive_replicates_the_design() -> None:
    rng = np.random.default_rng(15)
    order = [3, 0, 5, 1, 4, 2, 7, 6]
    tree, expected, per_item = _rater_tree(rng, order)
    check = check_predictive(tree, statistics="cant_solve_share", replicates=2000, random_seed=1)
    assert "by its own rater" in check.description
    items = check.details["items"].set_index("item")
    # per item: the mean over 2000 replicates of a share of n_i answers, each
    # Bernoulli(p_a): standard error <= sqrt(1 / (4 n_i)) / sqrt(2000)
    for j, label in enumerate(f"i{o}" for o in order):
        se = math.sqrt(0.25 / per_item[j] / 2000)
        assert abs(items.loc[label, "rep_mean"] - expected[j]) < 5 * se, label
    mean_row = check.table.set_index("summary").loc["mean"]
    np.testing.assert_allclose(
        mean_row["rep_mean"], expected.mean(), atol=5 * mean_row["rep_sd"] / math.sqrt(2000)
    )


def test_rater_model_design_that_does_not_match_is_refused() -> None:
    tree, _, _ = _rater_tree(np.random.default_rng(16), list(range(6)))
    design = tree["constant_data"].to_dataset()
    design["answer_item"] = design["answer_item"].where(design["answer"] != 0, 5)
    tree["constant_data"] = design
    with pytest.raises(ValueError, match="design"):
        check_predictive(tree, random_seed=1)


@pytest.mark.slow
def test_a_rater_model_fit_gets_its_own_predictive_check() -> None:
    """rater_effects: no closed form (moments and density skipped with the reason), the
    mixed predictive of the rater model, and the convergence record as a check."""
    rng = np.random.default_rng(17)
    n_items, per_item = 40, 6
    item = np.repeat(np.arange(n_items), per_item)
    rater = rng.integers(0, 12, size=item.size)
    q = rng.dirichlet(np.ones(3), size=n_items)
    labels = np.array(["a", "b", "c"])[[rng.choice(3, p=q[i]) for i in item]]
    answers = pd.DataFrame(
        {"item": item, "rater": rater, "label": pd.Categorical(labels, ["a", "b", "c"])}
    )
    with pytest.warns(ambppl.ConvergenceWarning):  # 2 x 200 draws: ESS below 400
        result = ambppl.fit(
            read_long(answers, item="item", rater="rater", label="label"),
            "rater_effects",
            draws=200,
            chains=2,
            random_seed=1,
        )
    check = check_fit(result, answers=answers, random_seed=2)
    assert set(check.skipped) == {"moments", "density"}
    assert "closed-form" in check.skipped["moments"]
    assert "by its own rater" in check["predictive"].description
    assert "convergence" in check.checks and len(check.suggestions) == 0
    assert list(check.table["check"]) == ["moments", "density", "predictive", "convergence"]


def test_validate_command_says_nothing_was_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One item (the predictive check compares items) fitted by map (no draws)."""
    rows = [("i0", f"r{r}", label) for r, label in enumerate(["a", "b", "c", "a"])]
    path = tmp_path / "answers.csv"
    pd.DataFrame(rows, columns=["task", "worker", "label"]).to_csv(path, index=False)
    argv = ["validate", str(path), "--cant-solve", "c", "--model", "dawid_skene"]
    assert main([*argv, "--method", "map", "-q"]) == 1
    out = capsys.readouterr().out
    assert "NOTHING CHECKED: no check applies to this fit" in out
    assert "needs at least two items with answers" in out
    assert "all checks passed" not in out


# ---------------------------------------------------------------- arguments, lookup, wording


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        # "'str' object is not callable" once the first check began
        ({"progress": "x"}, TypeError, r"^progress must be a callable"),
        # numpy's SeedSequence messages, without the name random_seed
        ({"random_seed": "x"}, TypeError, r"^random_seed must be a non-negative int"),
        ({"random_seed": -1}, ValueError, r"^random_seed must be a non-negative int"),
        # accepted, and read as True
        ({"compare": "yes"}, TypeError, r"^compare must be True or False, but got 'yes'"),
    ],
)
def test_bad_options_are_named(small_exact, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        check_fit(small_exact, **kwargs)


def test_validate_checks_its_options_before_fitting(monkeypatch: pytest.MonkeyPatch) -> None:
    """validate(c, alpha=2) was refused only after the fit (minutes for NUTS), and
    method="" fitted the model's default method."""
    import ambppl.validation.data_check as data_check

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the options were checked")

    counts = ambppl.read_annotations(_flat_counts(np.random.default_rng(2), 10), cant_solve="2")
    with monkeypatch.context() as patch:
        patch.setattr(data_check, "fit_with_progress", no_fit)
        for kwargs, error, match in [
            ({"alpha": 2}, ValueError, "alpha must be in the open interval"),
            ({"compare": "yes"}, TypeError, "compare must be True or False"),
            ({"random_seed": "x"}, TypeError, "random_seed must be"),
            ({"progress": 1}, TypeError, "progress must be a callable"),
            ({"answers": np.zeros(3)}, TypeError, r"answers must be a pandas\.DataFrame"),
        ]:
            with pytest.raises(error, match=match):
                validate(counts, draws=100, chains=2, **kwargs)
    with pytest.raises(ValueError, match=r"method must be one of .*but got ''"):
        validate(counts, method="", draws=100, chains=2)


def test_a_check_that_stopped_with_an_error_is_described_on_lookup(small_exact) -> None:
    """check["moments"] after an ERROR said "no check named 'moments'; the checks are
    moments, density, ...", listing the name it refused; convergence (no NUTS) the same."""
    short = _with_posterior(small_exact, small_exact["posterior"].to_dataset().isel(item=slice(5)))
    verdict = check_fit(short, random_seed=1)
    with pytest.raises(KeyError, match=r"the 'moments' check stopped with an error \(a failure\)"):
        verdict["moments"]
    with pytest.raises(KeyError, match=r"posterior\['q'\] must have the items and categories"):
        verdict["predictive"]
    with pytest.raises(KeyError, match=r"'convergence' check did not run: .* this exact fit"):
        verdict["convergence"]
    with pytest.raises(KeyError, match="no check named 'sbc'; the checks are moments"):
        verdict["sbc"]


def _convergence_only() -> xr.DataTree:
    """A stand-in for a NUTS fit of dawid_skene that met the convergence standard: no q and
    no Dirichlet prior in its posterior, so no check of the draws applies."""
    rng = np.random.default_rng(5)
    counts = xr.DataArray(
        rng.integers(0, 4, size=(12, 3)),
        dims=("item", "category"),
        coords={"item": [f"i{i}" for i in range(12)], "category": ["a", "b", "c"]},
        name="counts",
    )
    tree = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(
                {"pi": (("chain", "draw", "category"), rng.random((4, 100, 3)))}
            ),
            "observed_data": xr.Dataset({"counts": counts}),
        }
    )
    tree.attrs = {
        "model": "dawid_skene",
        "method": "nuts",
        "convergence": '{"passed": true, "failed": [], "r_hat": 1.002, "worst": []}',
    }
    return tree


def test_passing_on_convergence_alone_says_so() -> None:
    """Only convergence applies to a dawid_skene NUTS fit: passed is True (the sampler met
    the standard), but the verdict said "every check passed" as if its draws were checked."""
    verdict = check_fit(_convergence_only(), random_seed=1)
    assert verdict.passed and list(verdict.checks) == ["convergence"]
    assert verdict.posterior_checks == []
    assert verdict.verdict == (
        "dawid_skene (nuts): passed convergence only; no check of the posterior applies to "
        "this fit (skipped: moments, density, predictive)"
    )
    assert "every check passed" not in verdict.verdict


def test_validation_result_lists_every_check_name() -> None:
    """The docstring of ValidationResult.check left out "reference" and "convergence"."""
    from ambppl.validation import ValidationResult

    for name in ("moments", "density", "predictive", "sbc", "reference", "reference_cases"):
        assert f'``"{name}"``' in ValidationResult.__doc__
    assert '``"convergence"``' in ValidationResult.__doc__
