"""``check_fit(result, answers=...)`` and ``validate(..., answers=...)`` refuse answers that
are not those the fit was made from (other items, other counts, another can't-solve label)
before they check or fit anything: ``compare=True`` would otherwise fit ``rater_effects`` to
other data and list it beside the original fit. The answers of the fit pass, rows in any
order, in Python and on the command line (which reads both from one file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.cli import main
from ambppl.data import as_counts, read_long
from ambppl.validation import check_fit, data_check, fit_check, validate

N_ITEMS, N_RATERS = 40, 8


def _raw(seed: int = 0) -> pd.DataFrame:
    """40 items by 8 raters, 3 of whom answer can't-solve on every item: the flat prior's
    predictive check fails (can't-solve far above 1/3 of the proper answers' share), so
    ``compare=True`` has models to fit (hierarchical_dirichlet and, with rater ids,
    rater_effects)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(N_ITEMS):
        p = rng.dirichlet([0.3, 0.3])
        for r in range(N_RATERS):
            label = "cs" if r < 3 else ("x" if rng.random() < p[0] else "y")
            rows.append((f"i{i}", f"r{r}", label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@pytest.fixture(scope="module")
def answers() -> pd.DataFrame:
    return read_long(_raw(), cant_solve="cs")


@pytest.fixture(scope="module")
def result(answers: pd.DataFrame) -> xr.DataTree:
    return ambppl.fit(as_counts(answers), method="exact", draws=200, random_seed=0)


def _no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any check or refit fails the test: the refusal must come before them."""

    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("ran a check or a fit before refusing the answers")

    for name in ("fit", "check_moments", "check_density", "check_predictive"):
        monkeypatch.setattr(fit_check, name, forbidden)
    monkeypatch.setattr(data_check, "fit_with_progress", forbidden)


def _reread(table: pd.DataFrame) -> pd.DataFrame:
    """An answers table read again with read_long, as ambppl.fit takes it."""
    return read_long(
        table,
        item="item",
        rater="rater",
        label="label",
        cant_solve="cs",
        categories=["x", "y", "cs"],
    )


def test_answers_of_other_items_are_refused_before_any_refit(
    result: xr.DataTree, answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit's case (t18): items j0..j39 and labels shuffled; old code fitted
    rater_effects to them and listed it beside the original fit."""
    other = answers.copy()
    other["item"] = other["item"].astype(str).str.replace("i", "j")
    other["label"] = other["label"].sample(frac=1, random_state=1).to_numpy()
    other = _reread(other)
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"^answers must be the answers that result was") as err:
        check_fit(result, answers=other, compare=True, draws=100, chains=2, random_seed=0)
    message = str(err.value)
    assert "40 items differ from the 40 of result['observed_data']['counts']" in message
    assert "'j0' is not among them" in message
    assert "pass as answers the answers the fit was made from" in message
    # without compare too: the answers also decide whether rater_effects is suggested
    with pytest.raises(ValueError, match="items differ"):
        check_fit(result, answers=other, random_seed=0)


def test_fewer_items_are_refused(
    result: xr.DataTree, answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    fewer = _reread(answers[answers["item"] != "i7"])
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"39 items differ from the 40 .*'i7' has no answer"):
        check_fit(result, answers=fewer, compare=True)


def test_same_items_other_answers_are_refused(
    result: xr.DataTree, answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One answer changed: the items and categories agree, one item's counts do not."""
    counts = result["observed_data"]["counts"]
    changed = answers.copy()
    row = int(np.flatnonzero(changed["label"].to_numpy() == "x")[0])
    item = str(changed["item"].iloc[row])
    changed.loc[changed.index[row], "label"] = "y"
    expected = counts.sel(item=item).values + np.array([-1, 1, 0])  # categories x, y, cs
    shown = "[" + ", ".join(str(v) for v in expected) + "]"
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match="answers must be the answers") as err:
        check_fit(result, answers=_reread(changed), compare=True)
    message = str(err.value)
    assert f"counts differ from result['observed_data']['counts'] on 1 of {N_ITEMS}" in message
    assert f"(the first, {item!r}: {shown} against" in message


def test_answers_with_another_cant_solve_label_are_refused(
    result: xr.DataTree, answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same table read without its can't-solve label: 'cs' would be a class to the
    compared rater model, not can't-solve as in the fit."""
    plain = pd.DataFrame(
        {
            "item": answers["item"].to_numpy(),
            "rater": answers["rater"].to_numpy(),
            "label": answers["label"].astype(str).to_numpy(),
        }
    )
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"can't-solve None\) and those of .*'cs'"):
        check_fit(result, answers=plain, compare=True)


def test_answers_without_the_columns_are_refused(result: xr.DataTree) -> None:
    with pytest.raises(ValueError, match=r"answers must have the columns item, rater and label"):
        check_fit(result, answers=_raw())


def _recording_fit(seen: list[tuple[str, Any]]) -> Any:
    """A stand-in for the compared fits: records (model, data) and returns the exact flat
    fit of the data's counts (fast; NUTS fits of the compared models are not the subject)."""

    def fake(data: Any, model: str = "dirichlet_categorical", **kwargs: Any) -> xr.DataTree:
        seen.append((model, data))
        return ambppl.fit(as_counts(data), method="exact", draws=50, random_seed=1)

    return fake


def _same_counts(a: xr.DataArray, b: xr.DataArray) -> bool:
    """Whether two count arrays hold the same counts, matched by item and category label."""
    frame = a.to_pandas()
    return frame.loc[b["item"].values, b["category"].values].to_numpy().tolist() == (
        b.values.tolist()
    )


def test_the_fits_answers_in_another_row_order_pass(
    result: xr.DataTree, answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    shuffled = answers.sample(frac=1, random_state=3).reset_index(drop=True)
    shuffled.attrs = dict(answers.attrs)
    assert list(shuffled["item"].iloc[:3]) != list(answers["item"].iloc[:3])
    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(fit_check, "fit", _recording_fit(seen))
    check = check_fit(result, answers=shuffled, compare=True, draws=50, chains=1, random_seed=0)
    assert [model for model, _ in seen] == ["hierarchical_dirichlet", "rater_effects"]
    assert list(check.comparison["model"]) == [
        "dirichlet_categorical",
        "hierarchical_dirichlet",
        "rater_effects",
    ]
    # rater_effects gets the answers, which count as the fit's counts
    rater_data = seen[1][1]
    assert list(rater_data.columns) == ["item", "rater", "label"]
    assert _same_counts(as_counts(rater_data), result["observed_data"]["counts"])


def test_validate_refuses_other_answers_before_the_fit(
    answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = as_counts(answers)
    other = answers.copy()
    other["item"] = other["item"].astype(str).str.replace("i", "j")
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match=r"^answers must be the answers of data, but their 40"):
        validate(counts, answers=_reread(other), compare=True, random_seed=0)


def test_validate_takes_the_answers_of_its_data(
    answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    shuffled = answers.sample(frac=1, random_state=4).reset_index(drop=True)
    shuffled.attrs = dict(answers.attrs)
    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(fit_check, "fit", _recording_fit(seen))
    check = validate(
        as_counts(answers), answers=shuffled, compare=True, draws=50, chains=1, random_seed=0
    )
    assert [model for model, _ in seen] == ["hierarchical_dirichlet", "rater_effects"]
    assert check.comparison is not None and len(check.comparison) == 3


def test_compare_on_the_command_line_reads_matching_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command reads the counts and the answers from one file: they match, and
    rater_effects gets the file's answers."""
    path = tmp_path / "answers.csv"
    _raw().sample(frac=1, random_state=5).to_csv(path, index=False)
    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(fit_check, "fit", _recording_fit(seen))
    argv = ["validate", str(path), "--item", "task", "--rater", "worker", "--label", "label"]
    code = main([*argv, "--cant-solve", "cs", "--compare", "--draws", "50", "--seed", "1", "-q"])
    captured = capsys.readouterr()
    assert code == 1, captured.err  # the flat prior's predictive check fails
    assert "comparison (each model with its defaults):" in captured.out
    assert [model for model, _ in seen] == ["hierarchical_dirichlet", "rater_effects"]
    expected = as_counts(read_long(_raw(), cant_solve="cs"))
    assert _same_counts(as_counts(seen[1][1]), expected)


def test_validate_refuses_other_answers_of_a_table_after_the_fit(
    answers: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Data that are not counts already (here the answers table itself): the counts the fit
    holds are known after the fit, and check_fit refuses other answers before any check."""
    fewer = _reread(answers[answers["item"] != "i3"])
    for name in ("fit", "check_moments", "check_density", "check_predictive"):
        monkeypatch.setattr(fit_check, name, None)  # calling any of them fails the test
    with pytest.raises(ValueError, match=r"^answers must be the answers that result was"):
        validate(answers, answers=fewer, compare=True, draws=50, chains=1, random_seed=0)
