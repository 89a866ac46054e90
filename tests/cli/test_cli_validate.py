"""``ambppl validate``: what the command prints and its exit status, for the reference cases
and for a file (ambppl/cli/validate.py; the checks themselves are tested in
tests/validation/)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from _cli_helpers import error_line as _error_line

import ambppl
import ambppl.validation.data_check
from ambppl.cli import main

#: Small settings for the reference cases: exact draws, 2 x 200 of them.
SMALL = ["--draws", "200", "--chains", "2", "-q"]


def _table(out: str) -> pd.DataFrame:
    """The reference cases' table as printed: pandas right-aligns every column, so each field
    ends where its header word ends (blank cells, e.g. a NaN p_holm, stay empty)."""
    lines = out.splitlines()
    header = lines[0]
    ends = [m.end() for m in re.finditer(r"\S+", header)]
    starts = [0, *ends[:-1]]
    rows = []
    for line in lines[1:]:
        if line.startswith(("p_value:", "* not part")):
            break
        rows.append([line[a:b].strip() for a, b in zip(starts, ends, strict=True)])
    return pd.DataFrame(rows, columns=header.split())


# ------------------------------------------------------------------------- reference cases


def test_reference_verdicts_follow_the_family_wise_decision(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each row showed its check's own verdict (FAIL at level alpha within the check) while
    the last line, Holm across all rows, said "all checks passed (level 0.3 each ...)": a
    table of FAILs above a pass. Now a deciding row fails exactly when its p_holm (Holm across
    the rows that decide) is <= alpha, and the last line says the level is family-wise."""
    from ambppl.validation import run_reference_cases

    code = main(["validate", "--seed", "2", "--alpha", "0.3", *SMALL])
    out = capsys.readouterr().out
    # the same run in Python: seed 2 gives rows whose own check fails at 0.3 although Holm
    # across the 18 deciding rows flags none (what made the old table contradict its verdict)
    run = run_reference_cases(draws=200, chains=2, random_seed=2, alpha=0.3)
    rows = run.table
    decided = rows[rows["in_decision"]]
    assert run.passed and not decided["flagged"].any()
    assert (~decided["passed"].astype(bool)).sum() >= 1
    shown = _table(out)
    assert list(shown["case"]) == list(rows["case"]) and list(shown["check"]) == list(rows["check"])
    for (_, row), (_, printed) in zip(rows.iterrows(), shown.iterrows(), strict=True):
        if row["in_decision"]:
            assert printed["verdict"] == ("FAIL" if row["flagged"] else "pass"), printed
            assert float(printed["p_holm"]) == pytest.approx(row["p_holm"], rel=5e-3)
        else:  # reported, not decided: its own verdict, marked
            assert printed["verdict"] == ("pass *" if row["passed"] else "FAIL *"), printed
    last = out.splitlines()[-1]
    assert code == 0
    assert last.startswith("all checks passed (family-wise level 0.3 over the 18 rows that decide")
    assert " each" not in last


def test_reference_cases_refuse_nuts_options_without_nuts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--tune and --target-accept were silently ignored by the reference cases (only --draws
    and --chains were passed on); a file refuses them for a method without NUTS."""
    assert main(["validate", "--tune", "500", *SMALL]) == 2
    line = _error_line(capsys)
    assert line == (
        "ambppl: error: --tune tune NUTS, but --method exact of model 'dirichlet_categorical' "
        "draws without it; drop --tune or choose --method nuts"
    )


def test_reference_cases_pass_nuts_options_to_the_sampler(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict = {}

    def fake_fit(data, model, **kwargs):
        seen.update(kwargs, model=model)
        raise ValueError("stopped after recording the arguments")

    monkeypatch.setattr(ambppl, "fit", fake_fit)  # what run_reference_cases calls
    argv = ["validate", "--method", "nuts", "--tune", "7", "--target-accept", "0.9", *SMALL]
    assert main(argv) == 2
    assert "stopped after recording the arguments" in _error_line(capsys)
    assert seen["method"] == "nuts" and seen["model"] == "dirichlet_categorical"
    assert seen["sample_kwargs"] == {"tune": 7, "target_accept": 0.9}


def test_reference_cases_name_the_options_for_too_few_draws(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reference cases ran outside the command's wording: "fit with more draws"."""
    assert main(["validate", "--draws", "5", "--chains", "2", "-q"]) == 2
    line = _error_line(capsys)
    assert line == (
        "ambppl: error: the fit must hold at least 100 draws (--chains x --draws) for a check, "
        "but holds 10; give more --draws or --chains"
    )


# ------------------------------------------------------------------------------------ a file


def test_one_item_skips_the_predictive_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One item has no spread over items to compare: the predictive check raised a plain
    ValueError, shown as ERROR (a failure) and exit status 1, although the fit is right."""
    path = tmp_path / "one.csv"
    path.write_text("task,worker,label\nt1,w1,pos\nt1,w2,neg\nt1,w3,pos\nt1,w4,cs\nt1,w5,pos\n")
    argv = ["validate", str(path), "--cant-solve", "cs", "--draws", "100", "--chains", "2"]
    code = main([*argv, "--seed", "1", "-q"])
    out = capsys.readouterr().out
    assert "ERROR" not in out and "stopped with an error" not in out
    assert (
        "predictive skipped: the predictive check compares statistics over items and needs "
        "at least two items with answers, but the data have 1"
    ) in out
    assert "check_predictive" not in out  # the command's words, not the Python function's
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["moments", "pass"] and lines[2].split()[:2] == [
        "density",
        "pass",
    ]
    assert code == 0 and lines[-1].startswith("all checks passed")


def _nuts_fit_without_closed_forms(*args, **kwargs) -> xr.DataTree:
    """A stand-in for a NUTS fit of dawid_skene that met the convergence standard: its
    posterior holds no q and no Dirichlet prior, so no check of the draws applies."""
    rng = np.random.default_rng(5)
    counts = xr.DataArray(
        rng.integers(0, 4, size=(12, 3)),
        dims=("item", "category"),
        coords={"item": [f"t{i:02d}" for i in range(12)], "category": ["cat", "dog", "skip"]},
        name="counts",
        attrs={"cant_solve": "skip"},
    )
    posterior = xr.Dataset({"pi": (("chain", "draw", "category"), rng.random((4, 100, 3)))})
    record = {"passed": True, "failed": [], "r_hat": 1.002, "worst": []}
    attrs = {
        "model": "dawid_skene",
        "method": "nuts",
        "cant_solve": "skip",
        "convergence": json.dumps(record),
    }
    tree = xr.DataTree.from_dict(
        {"posterior": posterior, "observed_data": xr.Dataset({"counts": counts})}
    )
    tree.attrs = attrs
    tree["posterior"].attrs = {"model": "dawid_skene", "method": "nuts"}
    return tree


@pytest.fixture
def answers_csv(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    rows = [
        {"task": f"t{i:02d}", "worker": f"w{j}", "label": lab}
        for i in range(12)
        for j, lab in enumerate(rng.choice(["cat", "dog", "skip"], size=6))
    ]
    path = tmp_path / "answers.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_convergence_alone_is_not_called_all_checks_passed(
    answers_csv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dawid_skene NUTS fit: only the convergence check applies. The last line said "all
    checks passed", as if the posterior had been checked; the exit status stays 0."""
    monkeypatch.setattr(
        ambppl.validation.data_check, "fit_with_progress", _nuts_fit_without_closed_forms
    )
    argv = ["validate", str(answers_csv), "--rater", "worker", "--cant-solve", "skip"]
    code = main([*argv, "--model", "dawid_skene", "--seed", "1", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[-1].startswith(
        "passed: convergence only; no check of the posterior applies to this fit (level 0.01"
    )
    assert "all checks passed" not in out


def test_skip_reasons_give_the_command_line_a_way_that_is_not_circular(
    answers_csv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """moments said "validate it with ambppl.validation.sbc or check_predictive instead" with
    the predictive check skipped on the next line, and density "check it with
    ambppl.validation.check_moments", the check just refused: Python names, circular advice."""
    monkeypatch.setattr(
        ambppl.validation.data_check, "fit_with_progress", _nuts_fit_without_closed_forms
    )
    argv = ["validate", str(answers_csv), "--rater", "worker", "--cant-solve", "skip"]
    main([*argv, "--model", "dawid_skene", "--seed", "1", "-q"])
    out = capsys.readouterr().out
    skipped = {
        line.split(" skipped: ")[0]: line.split(" skipped: ")[1]
        for line in out.splitlines()
        if " skipped: " in line
    }
    assert set(skipped) == {"moments", "density", "predictive"}
    assert skipped["moments"] == (
        "the closed-form moments need a fixed Dirichlet prior or hyperparameters the model "
        "turns into one, but model 'dawid_skene' (--method nuts) has neither; no check of "
        "this command replaces them (simulation-based calibration does, in Python: "
        "ambppl.validation.sbc)"
    )
    assert skipped["density"] == (
        "the exact two-class law needs a fixed Dirichlet prior, but model 'dawid_skene' "
        "(--method nuts) has none (a learned prior, or no Dirichlet prior of q)"
    )
    for reason in skipped.values():
        assert "check_moments" not in reason and "check_predictive" not in reason
        assert "moments check" not in reason
