"""Tests of the ``ambppl`` command (ambppl/cli/, ambppl/__main__.py)."""

from __future__ import annotations

import contextlib
import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from _cli_helpers import error_line as _error_line
from conftest import REPORT_SECTIONS, write_long_model

import ambppl
import ambppl.cli as cli
from ambppl.analysis.scoring import SCORE_COLUMNS
from ambppl.analysis.summary import COLUMNS
from ambppl.cli import main

#: Columns of the table that ``ambppl score`` writes for a conjugate model: score's columns
#: (summarize's, pinned in tests/analysis/test_summary.py, with their MCSE;
#: tests/analysis/test_scoring.py) plus the rank.
SUMMARY_COLUMNS = [*SCORE_COLUMNS, "rank"]

#: Small fit settings: the exact sampler with few draws keeps every CLI call well under 1 s.
FAST = ["--draws", "200", "--chains", "2", "--seed", "7", "-q"]


def _answers(rng: np.random.Generator, n_items: int = 12, per_item: int = 6) -> pd.DataFrame:
    """A long table with crowd-kit's column names and a can't-solve answer 'skip'."""
    labels = np.array(["cat", "dog", "skip"])
    rows = []
    for i in range(n_items):
        q = rng.dirichlet([1.0, 1.0, 0.5])
        for j, lab in enumerate(rng.choice(labels, size=per_item, p=q)):
            rows.append({"task": f"t{i:02d}", "worker": f"w{j}", "label": lab})
    # make sure every label occurs, whatever the seed gave
    rows += [{"task": "t00", "worker": "w9", "label": lab} for lab in labels]
    return pd.DataFrame(rows)


@pytest.fixture
def answers_csv(tmp_path: Path, rng: np.random.Generator) -> Path:
    path = tmp_path / "answers.csv"
    _answers(rng).to_csv(path, index=False)
    return path


# ---------------------------------------------------------------------------------------- help


def test_help_lists_every_subcommand_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in cli.SUBCOMMANDS:
        assert name in out
    assert "examples:" in out
    assert {"score", "report", "plan", "models"} <= set(cli.SUBCOMMANDS)


@pytest.mark.parametrize("name", ["score", "report", "plan", "validate", "models"])
def test_subcommand_help_has_examples(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: ambppl {name}")
    assert "examples:" in out
    assert f"ambppl {name}" in out.split("examples:")[1]


def test_python_dash_m_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ambppl", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ambppl")


def test_console_script_is_declared() -> None:
    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "ambppl"]
    assert script.value == "ambppl.cli:main"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import ambppl

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ambppl {ambppl.__version__}"


def test_registry_adds_a_subcommand(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new subcommand is one registered function; the parser picks it up unchanged."""
    monkeypatch.setattr(cli.common, "SUBCOMMANDS", dict(cli.SUBCOMMANDS))

    @cli.subcommand("hello")
    def _add(subparsers):
        parser = subparsers.add_parser("hello", help="say hello")
        parser.add_argument("name")
        parser.set_defaults(handler=lambda args: print(f"hello {args.name}") or 0)
        return parser

    assert main(["hello", "you"]) == 0
    assert capsys.readouterr().out == "hello you\n"
    with pytest.raises(ValueError, match="subcommand 'hello' is registered already"):
        cli.subcommand("hello")(_add)


# ---------------------------------------------------------------------------------------- score


def _library_table(path: Path, **kwargs) -> pd.DataFrame:
    """What ``ambppl score`` should produce, computed with the library directly: a conjugate
    model is scored from its distinct count vectors (``ambppl.score``), ranked."""
    from ambppl.analysis.scoring import score
    from ambppl.analysis.summary import rank
    from ambppl.data.readers import read_annotations

    return rank(score(read_annotations(path, cant_solve="skip"), random_seed=7, **kwargs))


def _score_numbers(table: pd.DataFrame) -> np.ndarray:
    return table.drop(columns="measure").to_numpy(float)


def test_score_csv_equals_library(answers_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores.csv"
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "--prior", "0.5"]
    argv += ["--threshold", "0.3", "--hdi-prob", "0.8", "-o", str(out), *FAST]
    assert main(argv) == 0
    table = pd.read_csv(out, index_col="item")
    expected = _library_table(answers_csv, prior=0.5, threshold=0.3, hdi_prob=0.8)
    assert list(table.columns) == SUMMARY_COLUMNS
    assert list(table.index) == list(expected.index)
    # the CSV round trip keeps 15+ significant digits
    np.testing.assert_allclose(_score_numbers(table), _score_numbers(expected), rtol=1e-12)
    assert table["mean"].is_monotonic_decreasing


def test_score_parquet_and_tsv(answers_csv: Path, tmp_path: Path) -> None:
    base = ["score", str(answers_csv), "--cant-solve", "skip", *FAST]
    assert main([*base, "-o", str(tmp_path / "s.parquet")]) == 0
    assert main([*base, "-o", str(tmp_path / "s.tsv")]) == 0
    parquet = pd.read_parquet(tmp_path / "s.parquet")
    tsv = pd.read_csv(tmp_path / "s.tsv", sep="\t", index_col="item")
    assert parquet.index.name == "item"
    assert list(parquet.columns) == SUMMARY_COLUMNS
    np.testing.assert_allclose(_score_numbers(parquet), _score_numbers(tsv), rtol=1e-12)


def test_score_reads_tsv_and_parquet_input(answers_csv: Path, tmp_path: Path) -> None:
    frame = pd.read_csv(answers_csv)
    frame.to_csv(tmp_path / "a.tsv", sep="\t", index=False)
    frame.to_parquet(tmp_path / "a.parquet")
    tables = []
    for name in ("answers.csv", "a.tsv", "a.parquet"):
        out = tmp_path / f"from-{name}.csv"
        assert (
            main(["score", str(tmp_path / name), "--cant-solve", "skip", "-o", str(out), *FAST])
            == 0
        )
        tables.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(tables[0], tables[1])
    pd.testing.assert_frame_equal(tables[0], tables[2])


def test_score_wide_layout_equals_long(answers_csv: Path, tmp_path: Path) -> None:
    long = pd.read_csv(answers_csv).drop_duplicates(["task", "worker"])
    long.to_csv(tmp_path / "long.csv", index=False)
    long.pivot(index="task", columns="worker", values="label").to_csv(tmp_path / "wide.csv")
    tables = []
    for name, layout in (("long.csv", []), ("wide.csv", ["--layout", "wide"])):
        out = tmp_path / f"from-{name}"
        argv = ["score", str(tmp_path / name), *layout, "--cant-solve", "skip", "-o", str(out)]
        assert main([*argv, *FAST]) == 0
        tables.append(pd.read_csv(out, index_col="item").sort_index())
    pd.testing.assert_frame_equal(tables[0], tables[1], check_like=True)


def test_score_on_screen_and_stdout(answers_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(answers_csv), "--cant-solve", "skip", *FAST]) == 0
    screen = capsys.readouterr().out
    assert "t00" in screen and "p_above" in screen
    assert main(["score", str(answers_csv), "--cant-solve", "skip", "-o", "-", *FAST]) == 0
    csv_text = capsys.readouterr().out
    table = pd.read_csv(pd.io.common.StringIO(csv_text), index_col="item")
    assert len(table) == 12 and list(table.columns) == SUMMARY_COLUMNS


def test_closed_stdout_is_not_an_error(tmp_path: Path, rng: np.random.Generator) -> None:
    """``ambppl score ... -o - | head -1``: no traceback when the reader stops early."""
    path = tmp_path / "many.csv"
    _answers(rng, n_items=800, per_item=3).to_csv(path, index=False)  # > 64 KiB of output
    argv = [sys.executable, "-m", "ambppl", "score", str(path), "--cant-solve", "skip", "-o", "-"]
    proc = subprocess.Popen(
        [*argv, "--draws", "20", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().startswith("item,n_answers,")
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_progress_goes_to_stderr(answers_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-o", "-", "--draws", "50"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "ambppl: reading" in captured.err and "ambppl: scoring" in captured.err
    assert "ambppl:" not in captured.out
    # the exact route chooses its own draws: a --draws given to it is said to be unused
    assert "ambppl: --draws not used: method exact draws exactly" in captured.err
    table = pd.read_csv(pd.io.common.StringIO(captured.out), index_col="item")
    assert (table["draws"] >= 1000).all()  # the draws --mcse needed, not 50


@pytest.mark.parametrize(
    ("model", "method", "said"),
    [
        ("dirichlet_categorical", "exact", True),
        ("hierarchical_dirichlet", "empirical_bayes", True),
        ("dirichlet_categorical", "nuts", False),
        ("hierarchical_dirichlet", "collapsed", False),
        ("rater_effects", "nuts", False),
    ],
)
def test_unused_sampling_options_are_said_on_the_conjugate_route_only(
    capsys: pytest.CaptureFixture[str], model: str, method: str, said: bool
) -> None:
    from argparse import Namespace

    from ambppl.cli.score import _say_unused_sampling

    args = Namespace(model=model, draws=20, chains=None, tune=5, target_accept=None, quiet=False)
    _say_unused_sampling(args, method)
    err = capsys.readouterr().err
    assert (
        err == f"ambppl: --draws, --tune not used: method {method} draws exactly, per "
        "distinct count vector, as many draws as --mcse needs\n"
    ) is said
    assert said or err == ""


def test_score_counts_npy(tmp_path: Path, rng: np.random.Generator) -> None:
    counts = rng.multinomial(8, [0.5, 0.3, 0.2], size=5)
    np.save(tmp_path / "counts.npy", counts)
    out = tmp_path / "s.csv"
    assert (
        main(["score", str(tmp_path / "counts.npy"), "--cant-solve", "2", "-o", str(out), *FAST])
        == 0
    )
    table = pd.read_csv(out, index_col="item").sort_index()
    np.testing.assert_array_equal(table["n_answers"], 8)
    np.testing.assert_allclose(table["cs_share"], counts[:, 2] / 8)


def test_models_lists_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    from ambppl.inference.catalog import get_model, list_models

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in list_models().index:
        methods = get_model(str(name)).info["methods"]
        shown = ", ".join([f"{methods[0]} (default)", *methods[1:]])
        assert f"{name}  (methods: {shown})\n" in out
    assert "dirichlet_categorical  (methods: exact (default), nuts)" in out
    assert "hierarchical_dirichlet  (methods: collapsed (default), empirical_bayes, nuts)" in out
    assert main(["models", "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert "prior (default 1.0; --prior or --param prior=VALUE)" in verbose
    assert "kappa_scale (default 1.0; --param kappa_scale=VALUE)" in verbose
    # the NUTS defaults the --draws / --tune / --target-accept help points to
    assert (
        "NUTS defaults (--method collapsed, nuts): draws 1000; chains 4; tune PyMC's 1000; "
        "target_accept 0.95; --draws, --chains, --tune and --target-accept win"
    ) in verbose
    assert (
        "NUTS defaults (--method nuts): draws 2000; chains 4; tune PyMC's 1000; target_accept "
        "PyMC's 0.8; changed per design by nuts_defaults() in dawid_skene.py (its docstring "
        "has the rules)"
    ) in verbose
    assert "NUTS defaults" not in out  # only with --verbose


# ---------------------------------------------------------------------- other models, --param

#: The bundled example: 200 tweets x 5 categories of the CrowdFlower weather data.
EXAMPLE = Path(cli.__file__).parents[1] / "examples" / "weather_sentiment.csv"


def test_score_hierarchical_on_the_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--model hierarchical_dirichlet: its default method (collapsed NUTS on mu and kappa);
    100 draws x 2 chains miss the convergence standard, which is one warning line on stderr
    and exit status 0."""
    out = tmp_path / "s.csv"
    argv = ["score", str(EXAMPLE), "--cant-solve", "I can't tell"]
    argv += ["--model", "hierarchical_dirichlet", "--draws", "100", "--chains", "2"]
    assert main([*argv, "--seed", "3", "-q", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    warning_lines = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warning_lines) == 1, err
    assert "missed the convergence standard" in warning_lines[0]
    assert "raise --draws" in warning_lines[0]
    assert "Traceback" not in err and "ambppl: error" not in err
    table = pd.read_csv(out, index_col="item")
    assert len(table) == 200 and list(table.columns) == [*COLUMNS, "ess_bulk", "r_hat", "rank"]
    assert table["mean"].between(0, 1).all() and table["exact_mean"].isna().all()
    assert table["mean"].is_monotonic_decreasing


@pytest.fixture
def score_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Record the model and keyword arguments of every ambppl.score call the command makes
    (``ambppl score`` makes one, whatever the route)."""
    import ambppl.analysis.scoring
    import ambppl.cli.score

    calls: list[dict] = []
    real = ambppl.analysis.scoring.score

    def spy(data, model, **kwargs):
        calls.append({"model": model, **kwargs})
        return real(data, model, **kwargs)

    monkeypatch.setattr(ambppl.cli.score, "score", spy)  # the name the command calls
    return calls


def test_param_reaches_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--param values reach the model's route as numbers and lists (stopped before the fit:
    only what reaches it matters here)."""
    import ambppl.cli.score

    calls: list[dict] = []

    def record(data, model, **kwargs):
        calls.append({"model": model, **kwargs})
        raise KeyboardInterrupt

    monkeypatch.setattr(ambppl.cli.score, "score", record)
    argv = ["score", str(EXAMPLE), "--cant-solve", "I can't tell", "-o", str(tmp_path / "s.csv")]
    argv += [*FAST, "--model", "hierarchical_dirichlet", "--method", "collapsed"]
    argv += ["--param", "kappa_scale=0.5", "--param", "mu_prior=1,1,1,1,2.5"]
    assert main(argv) != 0
    (call,) = calls
    assert call["model"] == "hierarchical_dirichlet" and call["method"] == "collapsed"
    assert call["kappa_scale"] == 0.5 and call["mu_prior"] == [1.0, 1.0, 1.0, 1.0, 2.5]
    assert "prior" not in call


def test_empirical_bayes_scores_exactly(
    tmp_path: Path, score_calls: list[dict], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.csv"
    argv = ["score", str(EXAMPLE), "--cant-solve", "I can't tell", "-o", str(out), *FAST]
    argv += ["--model", "hierarchical_dirichlet", "--method", "empirical_bayes"]
    assert main(argv) == 0
    (call,) = score_calls
    assert call["model"] == "hierarchical_dirichlet" and call["method"] == "empirical_bayes"
    assert "prior" not in call and "mu_prior" not in call
    assert "warning:" not in capsys.readouterr().err  # no NUTS, no convergence warning
    table = pd.read_csv(out, index_col="item")
    assert "r_hat" not in table.columns and table["exact_mean"].notna().all()


@pytest.mark.parametrize(("word", "value"), [("false", False), ("True", True), ("null", None)])
def test_param_takes_switches(
    answers_csv: Path, monkeypatch: pytest.MonkeyPatch, word: str, value: bool | None
) -> None:
    # the convergence advice says "--param centred=false": the command must take it
    import ambppl.cli.score

    calls: list[dict] = []

    def record(data, model, **kwargs):
        calls.append({"model": model, **kwargs})
        raise KeyboardInterrupt  # stop before the fit: only what reaches it matters here

    monkeypatch.setattr(ambppl.cli.score, "score", record)
    argv = ["score", str(answers_csv), "--rater", "worker", "--cant-solve", "skip", "-o", "-"]
    argv += ["--model", "rater_effects", "--param", f"centred={word}"]
    assert main(argv) != 0
    (call,) = calls
    assert call["model"] == "rater_effects" and call["centred"] is value


def test_param_keeps_whole_numbers_whole(
    answers_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--param n_nodes=512 reaches the model as the int 512 (it was 512.0, which a parameter
    that must be a whole number refuses); 0.5 and 1e3 stay floats."""
    import ambppl.cli.score

    calls: list[dict] = []

    def record(data, model, **kwargs):
        calls.append(kwargs)
        raise KeyboardInterrupt  # stop before the fit: only what reaches it matters here

    monkeypatch.setattr(ambppl.cli.score, "score", record)
    argv = ["score", str(answers_csv), "--rater", "worker", "--cant-solve", "skip", "-o", "-"]
    argv += ["--model", "dawid_skene", "--param", "n_nodes=512", "--param", "pi_prior=0.5,2,1e3"]
    assert main(argv) != 0
    (call,) = calls
    assert call["n_nodes"] == 512 and type(call["n_nodes"]) is int
    assert call["pi_prior"] == [0.5, 2, 1000.0]
    assert [type(v) for v in call["pi_prior"]] == [float, int, float]


def test_param_refuses_an_integer_beyond_floats(
    answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-o", "-"]
    assert main([*argv, "--param", "prior=" + "9" * 400]) == 2
    err = capsys.readouterr().err
    assert "argument --param: must be NAME=VALUE" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], {"method": "exact"}),
        (["--prior", "0.5"], {"method": "exact", "prior": 0.5}),
        (["--param", "prior=0.5,1,2"], {"method": "exact", "prior": [0.5, 1.0, 2.0]}),
        (["--method", "exact", "--prior", "2"], {"method": "exact", "prior": 2.0}),
    ],
)
def test_default_method_and_prior(
    answers_csv: Path, score_calls: list[dict], extra: list[str], expected: dict
) -> None:
    """The default method is the model's first; --prior and --param prior= set its prior."""
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-o", "-", *FAST, *extra]
    assert main(argv) == 0
    (call,) = score_calls
    assert call["model"] == "dirichlet_categorical"
    assert {k: call[k] for k in ("method", "prior") if k in call} == expected


def test_model_warnings_are_one_line(
    tmp_path: Path, rng: np.random.Generator, capsys: pytest.CaptureFixture[str]
) -> None:
    """ambppl's other warnings print like the convergence warning: one line, exit status 0
    (here empirical Bayes at a bound: nobody used the category '1')."""
    counts = rng.multinomial(8, [0.5, 0.0, 0.3, 0.2], size=20)
    np.save(tmp_path / "counts.npy", counts)
    argv = ["score", str(tmp_path / "counts.npy"), "--cant-solve", "3", "-o", "-", *FAST]
    argv += ["--model", "hierarchical_dirichlet", "--method", "empirical_bayes"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    warning_lines = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warning_lines) == 1, captured.err
    assert warning_lines[0].startswith("warning: empirical_bayes: the marginal likelihood is ")
    assert "Traceback" not in captured.err
    assert len(pd.read_csv(pd.io.common.StringIO(captured.out), index_col="item")) == 20


def test_report_hierarchical_on_the_example(tmp_path: Path) -> None:
    """A learned prior in the report from the command line (empirical Bayes: no NUTS)."""
    out = tmp_path / "r.html"
    argv = ["report", str(EXAMPLE), "--cant-solve", "I can't tell", "--top", "4"]
    argv += ["--model", "hierarchical_dirichlet", "--method", "empirical_bayes"]
    assert main([*argv, "-o", str(out), *FAST]) == 0
    page = out.read_text(encoding="utf-8")
    for section in (*REPORT_SECTIONS, "learned-prior"):
        assert f'<section id="{section}">' in page
    assert '<figure id="shrinkage">' in page and "<th>mean<br>learned prior</th>" in page
    assert "http://" not in page and "https://" not in page


# ---------------------------------------------------------------------------------------- report


def test_report_writes_one_self_contained_file(answers_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    argv = ["report", str(answers_csv), "--cant-solve", "skip", "--top", "4", "-o", str(out)]
    assert main([*argv, *FAST]) == 0
    page = out.read_text(encoding="utf-8")
    for section in REPORT_SECTIONS:
        assert f'<section id="{section}">' in page
    assert "http://" not in page and "https://" not in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv", "r.html"]


# ---------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--item", "nope"], "nope"),
        (["--label", "answer"], "answer"),
        (["--cant-solve", "I can't tell"], "I can't tell"),
        (["--prior", "abc"], "--prior"),
        (["--prior", "-1"], "--prior"),
        (["--prior", "0"], "--prior"),
        (["--prior", "1,2"], "prior"),  # 2 values for 3 categories (from ambppl.fit)
        (["--method", "gibbs"], "--method"),
        (["--method", "collapsed"], "offers the methods exact, nuts"),
        (["--param", "kappa=1"], "has no parameter 'kappa'; its parameters are prior"),
        (["--param", "prior"], "argument --param: must be NAME=VALUE"),
        (["--param", "prior=abc"], "argument --param: must be NAME=VALUE"),
        (["--param", "prior=1,x"], "argument --param: must be NAME=VALUE"),
        (["--param", "prior=nan"], "argument --param: must be NAME=VALUE"),
        (["--param", "prior=yes"], "argument --param: must be NAME=VALUE"),
        # a switch where a number belongs: fit's refusal, not the parser's
        (
            ["--param", "prior=true"],
            "prior must be a positive number or one per category, but got True",
        ),
        (["--param", "prior=1", "--param", "prior=2"], "--param prior is given twice"),
        (["--prior", "1", "--param", "prior=1"], "--prior and --param prior=... both"),
        (["--param", "prior=-1"], "prior must be strictly positive and finite"),  # from ambppl.fit
        (
            ["--model", "hierarchical_dirichlet", "--prior", "0.5"],
            "--prior sets the parameter 'prior' of dirichlet_categorical, but model "
            "'hierarchical_dirichlet' has the parameters mu_prior, kappa_scale",
        ),
        (
            ["--model", "hierarchical_dirichlet", "--param", "prior=0.5"],
            "its parameters are mu_prior, kappa_scale",
        ),
        (
            ["--model", "hierarchical_dirichlet", "--method", "exact"],
            "offers the methods collapsed, empirical_bayes, nuts (default collapsed)",
        ),
        (
            [
                "--model",
                "hierarchical_dirichlet",
                "--method",
                "empirical_bayes",
                "--param",
                "kappa_scale=0",
            ],
            "kappa_scale",  # from the model, through ambppl.fit
        ),
        (["--model", "no_such_model"], "no_such_model"),
        (["--measure", "variance"], "variance"),
        # the option, never the Python keyword (measure=), with the valid values
        (["--measure", "gini"], "argument --measure: must be one of amb, modified, old, entropy"),
        (["--seed", "-5"], "argument --seed: must be a whole number from 0 to 4294967295"),
        (["--seed", "4294967296"], "argument --seed: must be a whole number from 0"),
        (["--seed", "1.5"], "argument --seed"),
        (["--draws", "0"], "--draws"),
        (["--chains", "-1"], "argument --chains: must be a positive integer"),
        (["--hdi-prob", "1.5"], "--hdi-prob"),
        (["--hdi-prob", "nan"], "argument --hdi-prob"),
        (["--threshold", "x"], "--threshold"),
        (["--threshold", "nan"], "argument --threshold"),
        (["--mcse", "0"], "argument --mcse"),
        (["--chunk-items", "0"], "argument --chunk-items"),
        (["--layout", "diagonal"], "--layout"),
        (["-o", "scores.xlsx"], "xlsx"),
        (["--no-such-option"], "no-such-option"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    answers_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    match: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["score", str(answers_csv), *extra, "-q"]
    if "--cant-solve" not in extra:
        argv += ["--cant-solve", "skip"]
    if "--draws" not in extra:
        argv += ["--draws", "20"]
    assert main(argv) == 2
    assert match in _error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]


def test_option_values_at_their_limits_are_accepted(answers_csv: Path, tmp_path: Path) -> None:
    """The largest --seed and a measure's variable name (amb_modified) are valid; the seed
    reaches the library unchanged (same table as the library with that seed)."""
    import ambppl

    out = tmp_path / "s.csv"
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "--measure", "amb_modified"]
    assert main([*argv, "--seed", str(cli.SEED_MAX), "-q", "-o", str(out)]) == 0
    counts = ambppl.read_annotations(answers_csv, cant_solve="skip")
    expected = ambppl.score(counts, measure="modified", random_seed=cli.SEED_MAX)
    table = pd.read_csv(out, index_col="item").sort_index()
    np.testing.assert_allclose(table["p_above"], expected.sort_index()["p_above"], rtol=0, atol=0)


def test_objective_choices_are_the_library_objectives() -> None:
    from ambppl.analysis.planning import _OBJECTIVES

    plan = build_parser_subcommand("plan")
    (action,) = [a for a in plan._actions if a.dest == "objective"]
    assert tuple(action.choices) == _OBJECTIVES


def build_parser_subcommand(name: str):
    """The parser of one subcommand, from the registry."""
    import argparse

    subparsers = argparse.ArgumentParser().add_subparsers()
    return cli.SUBCOMMANDS[name](subparsers)


def test_library_warnings_are_one_line_without_source(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever warns while a command runs (matplotlib, pandas, dask) is shown as one line
    ``warning: ...``: Python's default shows the file, line number and source line."""
    import warnings

    def warn(args) -> int:
        warnings.warn("two\nlines", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli.models, "_run_models", warn)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["models"]) == 0
    assert capsys.readouterr().err == "warning: two lines\n"
    shown = warnings.showwarning
    assert shown is not None and not shown.__module__.startswith("ambppl.cli")


def test_report_route_of_render_report_warns_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Labels the figure font lacks: ``ambppl report`` through render_report (any model but
    the exact flat one; a fit stubbed with exact draws keeps this fast) prints one warning
    line for the page, not matplotlib's per glyph and figure with its source line."""
    import ambppl

    path = tmp_path / "cjk.csv"
    pd.DataFrame(
        {"task": [1, 1, 2, 2, 3], "worker": list("ababa"), "label": ["猫", "犬", "猫", "🐶", "猫"]}
    ).to_csv(path, index=False)

    real = ambppl.fit

    def exact_fit(counts, **kwargs):
        return real(counts, method="exact", draws=100, chains=2, random_seed=1)

    # the name the report's fit calls (ambppl.inference.fitting.fit_with_progress)
    monkeypatch.setattr("ambppl.inference.fitting.fit", exact_fit)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--method", "nuts", "-q", "--top", "2", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: the figures draw 3 characters")
    assert "Glyph" not in err and ".py" not in err and out.exists()


def test_missing_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("score", "report"):
        assert main([command, str(tmp_path / "absent.csv"), "-o", str(tmp_path / "x.html")]) == 2
        assert "absent.csv' does not exist" in _error_line(capsys)


def test_unreadable_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    assert main(["score", str(bad), "-q"]) == 2
    assert "bad.parquet" in _error_line(capsys)


def test_missing_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "required" in _error_line(capsys)


@pytest.mark.parametrize("command", ["score", "report"])
def test_existing_output_needs_force(
    command: str, answers_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / ("out.csv" if command == "score" else "out.html")
    out.write_text("precious")
    argv = [command, str(answers_csv), "--cant-solve", "skip", "-o", str(out), *FAST]
    assert main(argv) == 2
    assert "--force" in _error_line(capsys)
    assert out.read_text() == "precious"
    assert (
        main([*argv, "--force", "--top", "3"] if command == "report" else [*argv, "--force"]) == 0
    )
    assert out.read_text() != "precious"


def test_output_folder_must_exist(
    answers_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nowhere" / "s.csv"
    assert main(["score", str(answers_csv), "--cant-solve", "skip", "-o", str(out), *FAST]) == 2
    assert "does not exist" in _error_line(capsys)


def test_report_needs_html_suffix(
    answers_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(answers_csv), "-o", str(tmp_path / "r.pdf"), *FAST]) == 2
    assert ".html" in _error_line(capsys)


# ---------------------------------------------------------------------------------------- atomic


def test_atomic_output_leaves_nothing_on_error(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError, match="boom"), cli.atomic_output(target, force=False) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_interrupted_write_keeps_old_file(
    answers_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C while the table is being written: the old file survives, no temporary is left."""
    out = tmp_path / "s.csv"
    out.write_text("old")

    def half_write(table, path, *args, **kwargs):
        Path(path).write_text("half a tab")
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.output, "write_text_table", half_write)  # the writer's lookup
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-o", str(out), "--force", *FAST]
    assert main(argv) == 130
    assert "interrupted" in capsys.readouterr().err
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv", "s.csv"]


def test_output_file_permissions_follow_umask(answers_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    assert main(["score", str(answers_csv), "--cant-solve", "skip", "-o", str(out), *FAST]) == 0
    reference = tmp_path / "plain.txt"
    reference.write_text("x")  # created the ordinary way
    assert out.stat().st_mode & 0o777 == reference.stat().st_mode & 0o666


# ---------------------------------------------------------------------------------------- real data

#: Each shared data set with its own column names (see ../shared/data/README.md) and the
#: numbers of items and categories stated there.
DATA_SETS = {
    "weather": (
        "cf_weather_sentiment/weather-non-agg-DFE.csv",
        [
            "--item",
            "tweet_id",
            "--rater",
            "worker_id",
            "--label",
            "emotion",
            "--cant-solve",
            "I can't tell",
        ],
        1000,
    ),
    "anesthesia": (
        "anesthesia_ds1979/anesthesia_long.csv",
        ["--item", "item", "--rater", "rater", "--label", "rating"],
        45,
    ),
    "dog": (
        "dog_zhou2012/answer.csv",
        ["--item", "question", "--rater", "worker", "--label", "answer"],
        807,
    ),
    "cifar10h": ("cifar10h/cifar10h-counts.npy", [], 10_000),
}


@pytest.mark.parametrize("name", sorted(DATA_SETS))
def test_score_shared_data_sets(name: str, shared_data: Path, tmp_path: Path) -> None:
    rel, options, n_items = DATA_SETS[name]
    out = tmp_path / "s.parquet"
    argv = ["score", str(shared_data / rel), *options, "--method", "exact", "--draws", "50"]
    assert main([*argv, "--chains", "2", "--seed", "1", "-q", "-o", str(out)]) == 0
    table = pd.read_parquet(out)
    assert len(table) == n_items
    assert table["mean"].between(0, 1).all()
    assert (table["hdi_lower"] <= table["hdi_upper"]).all()
    assert (table["cs_share"] > 0).any() == (name == "weather")


@pytest.mark.parametrize("name", sorted(DATA_SETS))
def test_report_shared_data_sets(name: str, shared_data: Path, tmp_path: Path) -> None:
    rel, options, n_items = DATA_SETS[name]
    out = tmp_path / "r.html"
    argv = ["report", str(shared_data / rel), *options, "--method", "exact", "--draws", "100"]
    assert main([*argv, "--seed", "1", "--top", "5", "-q", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('<tr><td data-value="') >= n_items


# ---------------------------------------------------------------------------------------- plan

#: Columns of the table that ``ambppl plan`` writes, in order.
PLAN_COLUMNS = ["n_answers", "extra", "sd_now", "sd_after"]

#: The bundled example with its can't-solve answer.
EXAMPLE_ARGS = [str(EXAMPLE), "--cant-solve", "I can't tell"]


def _example_counts() -> tuple[np.ndarray, list[str]]:
    from ambppl.data.readers import read_annotations

    counts = read_annotations(EXAMPLE, cant_solve="I can't tell")
    return counts.values, [str(i) for i in counts["item"].values]


def _check_plan(table: pd.DataFrame, budget: int, prior: float, measure: str = "amb") -> None:
    """The plan's invariants on the bundled example, against independent computations."""
    import ambppl

    counts, items = _example_counts()
    assert list(table.columns) == PLAN_COLUMNS
    assert table.index.name == "item" and sorted(map(str, table.index)) == sorted(items)
    assert table["n_answers"].dtype.kind == "i" and table["extra"].dtype.kind == "i"
    assert int(table["extra"].sum()) == budget and (table["extra"] >= 0).all()
    assert (table["sd_after"] <= table["sd_now"] + 1e-15).all()
    # most extra answers first, ties in the item order of the file
    position = {item: i for i, item in enumerate(items)}
    keys = [(-e, position[str(i)]) for i, e in zip(table.index, table["extra"], strict=True)]
    assert keys == sorted(keys)
    # the current posterior sd is the closed-form sd of Dirichlet(counts + prior)
    by_item = table.set_axis(table.index.map(str)).loc[items]
    np.testing.assert_array_equal(by_item["n_answers"], counts.sum(axis=1))
    expected = np.sqrt(ambppl.dirichlet_var(counts + prior, measure, cant_solve=-1))
    np.testing.assert_allclose(by_item["sd_now"], expected, rtol=1e-12)
    more = by_item["extra"].to_numpy() > 0
    now, after = by_item["sd_now"].to_numpy(), by_item["sd_after"].to_numpy()
    assert (after[more] < now[more]).all()
    np.testing.assert_array_equal(after[~more], now[~more])


def test_plan_on_the_example(tmp_path: Path) -> None:
    from ambppl.analysis.planning import expected_posterior_sd, next_batch

    out = tmp_path / "plan.csv"
    argv = ["plan", *EXAMPLE_ARGS, "--budget", "500", "--prior", "0.5", "-q", "-o", str(out)]
    assert main(argv) == 0
    table = pd.read_csv(out, index_col="item")
    assert len(table) == 200
    _check_plan(table, 500, 0.5)
    # the CSV round trip gives the library's numbers to 15+ significant digits
    counts, items = _example_counts()
    extra = next_batch(counts, 500, prior=0.5, cant_solve=-1)
    by_item = table.set_axis(table.index.map(str)).loc[items]
    np.testing.assert_array_equal(by_item["extra"], extra)
    np.testing.assert_allclose(
        by_item["sd_after"], expected_posterior_sd(counts, extra, prior=0.5), rtol=1e-12
    )
    assert out.read_text().splitlines()[0] == "item,n_answers,extra,sd_now,sd_after"


@pytest.mark.parametrize(("budget", "measure"), [(0, "amb"), (37, "modified")])
def test_plan_stdout_and_measure(
    budget: int, measure: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["plan", *EXAMPLE_ARGS, "--budget", str(budget), "--measure", measure, "-o", "-"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "ambppl: reading" in captured.err and "ambppl:" not in captured.out
    table = pd.read_csv(pd.io.common.StringIO(captured.out), index_col="item")
    _check_plan(table, budget, 1.0, measure)


def test_plan_on_screen_and_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["plan", *EXAMPLE_ARGS, "--budget", "40", "-q"]
    assert main(base) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == PLAN_COLUMNS and lines[1].split() == ["item"]
    first = lines[2].split()
    assert first[1] == "20" and first[2].isdigit() and int(first[2]) > 0  # integers as such
    assert main([*base, "-o", str(tmp_path / "p.parquet")]) == 0
    assert main([*base, "-o", str(tmp_path / "p.tsv")]) == 0
    parquet = pd.read_parquet(tmp_path / "p.parquet")
    tsv = pd.read_csv(tmp_path / "p.tsv", sep="\t", index_col="item")
    assert list(parquet.columns) == PLAN_COLUMNS and parquet.index.name == "item"
    np.testing.assert_allclose(parquet.to_numpy(float), tsv.to_numpy(float), rtol=1e-12)


def test_plan_counts_without_cant_solve(tmp_path: Path, rng: np.random.Generator) -> None:
    """A .npy count matrix without a can't-solve category: cant_solve=None throughout."""
    import ambppl

    counts = rng.multinomial(6, [0.5, 0.3, 0.2], size=8)
    np.save(tmp_path / "counts.npy", counts)
    out = tmp_path / "p.csv"
    argv = ["plan", str(tmp_path / "counts.npy"), "--budget", "30", "--prior", "2"]
    assert main([*argv, "-q", "-o", str(out)]) == 0
    table = pd.read_csv(out, index_col="item").sort_index()
    assert int(table["extra"].sum()) == 30
    expected = np.sqrt(ambppl.dirichlet_var(counts + 2.0, cant_solve=None))
    np.testing.assert_allclose(table["sd_now"], expected, rtol=1e-12)
    assert (table["sd_after"] <= table["sd_now"]).all()


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--budget", "-1"], "argument --budget: must be a whole number >= 0"),
        (["--budget", "1.5"], "argument --budget: must be a whole number >= 0"),
        (["--budget", "many"], "argument --budget: must be a whole number >= 0"),
        ([], "--budget"),  # required
        (["--budget", "5", "--prior", "0"], "argument --prior: must be a positive number"),
        (["--budget", "5", "--prior", "-1"], "argument --prior: must be a positive number"),
        (["--budget", "5", "--prior", "1,2"], "prior"),  # 2 values for 5 categories
        (["--budget", "5", "--objective", "nope"], "argument --objective: invalid choice"),
        (["--budget", "5", "--measure", "entropy"], "--measure"),
        (["--budget", "5", "--threshold", "1.5"], "--threshold"),
        (["--budget", "5", "--cant-solve", "maybe"], "maybe"),
        (["--budget", "5", "-o", "plan.xlsx"], "xlsx"),
    ],
)
def test_plan_bad_input_is_one_line_and_status_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    match: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["plan", str(EXAMPLE), *extra, "-q"]
    if "--cant-solve" not in extra:
        argv += ["--cant-solve", "I can't tell"]
    if "-o" not in extra:
        argv += ["-o", "plan.csv"]
    assert main(argv) == 2
    line = _error_line(capsys)
    assert match in line
    if "nope" in extra:
        assert "'nope'" in line
    assert list(tmp_path.iterdir()) == []


def test_plan_existing_output_needs_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.csv"
    out.write_text("precious")
    argv = ["plan", *EXAMPLE_ARGS, "--budget", "10", "-q", "-o", str(out)]
    assert main(argv) == 2
    assert "--force" in _error_line(capsys)
    assert out.read_text() == "precious"
    assert main([*argv, "--force"]) == 0
    assert int(pd.read_csv(out, index_col="item")["extra"].sum()) == 10


def test_plan_decision_objective(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--objective decision with --threshold reaches next_batch (two proper classes plus
    can't-solve: the exact decision route)."""
    from ambppl.analysis.planning import next_batch

    counts = np.array([[10, 10, 2], [40, 0, 0], [9, 2, 0], [3, 1, 1], [0, 5, 5]])
    np.save(tmp_path / "counts.npy", counts)
    argv = [
        "plan",
        str(tmp_path / "counts.npy"),
        "--cant-solve",
        "2",
        "--budget",
        "12",
        "--objective",
        "decision",
        "--threshold",
        "0.3",
        "-q",
        "-o",
        "-",
    ]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    table = pd.read_csv(pd.io.common.StringIO(out.out), index_col="item").sort_index()
    expected = next_batch(counts, 12, objective="decision", threshold=0.3)
    np.testing.assert_array_equal(table["extra"], expected)


# ------------------------------------------------------------------------------------ validate


def test_validate_reference_cases(capsys: pytest.CaptureFixture[str]) -> None:
    from ambppl.validation import list_reference_cases

    assert main(["validate", *FAST]) == 0
    out = capsys.readouterr().out
    for case in list_reference_cases()["name"]:
        assert case in out
    assert "all checks passed" in out.splitlines()[-1]


def test_validate_a_file_runs_the_checks_that_apply(
    answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["validate", str(answers_csv), "--cant-solve", "skip", *FAST])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:4]] == ["moments", "density", "predictive"]
    # The exact draws match the closed forms and the two-class law (cat, dog + skip).
    assert lines[1].split()[1] == "pass" and lines[2].split()[1] == "pass"
    failed = "FAIL" in out
    assert code == (1 if failed else 0)
    assert lines[-1].startswith("a check FAILED" if failed else "all checks passed")


def test_validate_exit_1_on_model_misfit(capsys: pytest.CaptureFixture[str]) -> None:
    # The weather tweets are far from the flat prior's population (mixed predictive check):
    # mean can't-solve share 0.10 in the data against 0.2 under Dirichlet(1).
    from ambppl.data.readers import example_path

    path = str(example_path("weather_sentiment"))
    assert main(["validate", path, "--cant-solve", "I can't tell", *FAST]) == 1
    out = capsys.readouterr().out
    assert "predictive    FAIL" in out and "moments    pass" in out


def test_validate_learned_prior_skips_density(
    answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["validate", str(answers_csv), "--cant-solve", "skip"]
    main([*args, "--model", "hierarchical_dirichlet", "--method", "empirical_bayes", *FAST])
    out = capsys.readouterr().out
    # empirical Bayes fixes the prior at its estimate: density applies; nothing is skipped
    assert "skipped" not in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--model", "hierarchical_dirichlet"], "reference cases carry their own model"),
        (["--alpha", "2"], "--alpha"),
        (["missing.csv"], "missing.csv"),
        # reading options without a file were ignored
        (
            ["--item", "foo", "--sep", ";"],
            "--item and --sep apply to an annotations file, but none is given",
        ),
        (["--no-header"], "--no-header applies to an annotations file"),
    ],
)
def test_validate_bad_input(
    extra: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", *extra, *FAST]) == 2
    assert match in _error_line(capsys)


# ------------------------------------------------------------------- models that fit answers


@pytest.fixture
def long_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A catalog with one toy model of answers; its NUTS route records what it was given."""
    import importlib

    fit_module = importlib.import_module("ambppl.inference.fitting")
    from ambppl.inference.catalog import ENV_VAR

    folder = tmp_path / "catalog"
    write_long_model(folder)
    monkeypatch.setenv(ENV_VAR, str(folder))
    seen: dict = {}

    def fake_nuts(job):
        seen["answers"] = job.entry.build(job.answers)
        n = job.counts.sizes["item"]
        draws = {"amb": np.full((1, 100, n), 0.5)}
        return fit_module._assemble(draws, job.counts), job.concentration(None)

    monkeypatch.setitem(fit_module._ROUTES, "nuts", fake_nuts)
    monkeypatch.setattr(fit_module, "_check_convergence", lambda *a: None)
    return seen


def test_long_model_reads_answers_with_the_rater_column(
    long_catalog: dict, answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "score",
            str(answers_csv),
            "--cant-solve",
            "skip",
            "--model",
            "answers_model",
            "--draws",
            "100",
            "--chains",
            "1",
            "-q",
        ]
    )
    assert code == 0, capsys.readouterr().err
    answers = long_catalog["answers"]
    raw = pd.read_csv(answers_csv)
    assert list(answers.columns) == ["item", "rater", "label"] and len(answers) == len(raw)
    assert answers["rater"].tolist() == raw["worker"].astype(str).tolist()
    assert list(answers["label"].cat.categories)[-1] == "skip"


def test_long_model_needs_a_rater_column(
    long_catalog: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "no_raters.csv"
    pd.DataFrame({"task": [1, 1, 2], "label": ["a", "b", "a"]}).to_csv(path, index=False)
    assert main(["score", str(path), "--model", "answers_model", *FAST]) == 2
    assert "rater column 'worker' is not in the data" in _error_line(capsys)


def test_long_model_refuses_counts(
    long_catalog: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "counts.npy"
    np.save(path, np.array([[3, 1], [2, 2]]))
    assert main(["score", str(path), "--model", "answers_model", *FAST]) == 2
    assert "holds counts" in _error_line(capsys)


# ------------------------------------------------------------------------------------------
# score at scale: counts in zarr or Parquet read and written chunk by chunk with dask


def _count_files(tmp_path: Path) -> tuple[np.ndarray, Path, Path]:
    rng = np.random.default_rng(17)
    values = rng.multinomial(6, rng.dirichlet([1.0, 1.0, 0.5], size=500)).astype(np.uint8)
    frame = pd.DataFrame(values, columns=["cat", "dog", "skip"])
    frame.to_parquet(tmp_path / "c.parquet", row_group_size=100)
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(500), "category": ["cat", "dog", "skip"]},
        attrs={"cant_solve": "skip"},
        name="counts",
    )
    counts.chunk({"item": 200}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    return values, tmp_path / "c.parquet", tmp_path / "c.zarr"


def test_score_streams_parquet_and_zarr_counts(tmp_path: Path, capsys) -> None:
    import ambppl

    values, parquet, zarr_store = _count_files(tmp_path)
    counts = ambppl.read_annotations(values, categories=["cat", "dog", "skip"], cant_solve="skip")
    expected = ambppl.score(counts, random_seed=3)
    out = tmp_path / "s.parquet"
    argv = ["score", str(parquet), "--cant-solve", "skip", "--chunk-items", "150", "--seed", "3"]
    assert main([*argv, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "in chunks of 150 items" in err and "500 items" in err
    # a dataset, part by part: chunks of 150 items across row groups of 100 (150 x 3 + 50)
    assert out.is_dir() and len(list(out.glob("*.parquet"))) == 4
    table = pd.read_parquet(out)
    assert list(table.columns) == list(SCORE_COLUMNS)  # the items' order, no rank column
    np.testing.assert_array_equal(table.index, np.arange(500))
    np.testing.assert_array_equal(_score_numbers(table), _score_numbers(expected))
    # again: an existing dataset needs --force, which replaces it
    assert main([*argv, "-o", str(out), "-q"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main([*argv, "-o", str(out), "-q", "--force"]) == 0
    # zarr (can't-solve label from the store's attrs) in chunks to one CSV file
    csv = tmp_path / "z.csv"
    argv = ["score", str(zarr_store), "--seed", "3", "-q", "--chunk-items", "200"]
    assert main([*argv, "-o", str(csv)]) == 0
    from_zarr = pd.read_csv(csv, index_col="item")
    np.testing.assert_allclose(_score_numbers(from_zarr), _score_numbers(expected), rtol=1e-12)
    # on screen: collected and ranked
    assert main(["score", str(zarr_store), "--seed", "3", "-q"]) == 0
    assert "rank" in capsys.readouterr().out.splitlines()[0]


def test_score_reads_small_count_files_into_memory_ranked(tmp_path: Path, capsys) -> None:
    # without --chunk-items, Parquet and zarr counts of at most CHUNK_ITEMS items were still
    # scored in chunks: an unranked table without a rank column, and empirical Bayes refused
    import ambppl

    values, parquet, zarr_store = _count_files(tmp_path)
    counts = ambppl.read_annotations(values, categories=["cat", "dog", "skip"], cant_solve="skip")
    expected = ambppl.rank(ambppl.score(counts, random_seed=3))
    for source, extra in ((parquet, ["--cant-solve", "skip"]), (zarr_store, [])):
        out = tmp_path / f"{source.stem}{source.suffix[1:]}.parquet"
        assert main(["score", str(source), *extra, "--seed", "3", "-q", "-o", str(out)]) == 0
        assert out.is_file()  # one file, not a dataset folder
        table = pd.read_parquet(out)
        assert table["rank"].tolist() == list(range(1, 501))
        pd.testing.assert_frame_equal(table, expected, check_dtype=False, check_index_type=False)
    argv = ["score", str(parquet), "--cant-solve", "skip", "--model", "hierarchical_dirichlet"]
    assert main([*argv, "--method", "empirical_bayes", "--seed", "3", "-q", "-o", "-"]) == 0
    capsys.readouterr()
    assert main([*argv, "--chunk-items", "150", "--method", "empirical_bayes", "-q"]) == 2
    assert "read in chunks" in _error_line(capsys)  # asked for chunks: refused as before


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("score", ["--method", "nuts", "--draws", "20", "--chains", "1"]),
        ("score", ["--model", "hierarchical_dirichlet", "--method", "collapsed"]),
        ("report", ["--model", "hierarchical_dirichlet", "--method", "empirical_bayes"]),
    ],
)
def test_mcse_where_no_route_uses_it_is_refused(
    command, extra, answers_csv: Path, tmp_path: Path, capsys
) -> None:
    # --mcse was silently ignored where the route fits draws (the default was always sent)
    output = tmp_path / ("o.html" if command == "report" else "o.csv")
    argv = [command, str(answers_csv), "--cant-solve", "skip", *extra, "-o", str(output)]
    assert main([*argv, "--mcse", "0.01", "-q"]) == 2
    line = _error_line(capsys)
    assert "--mcse bounds the" in line and "drop --mcse" in line
    assert not output.exists()


def test_mcse_beyond_a_probabilitys_sd_is_refused_by_the_parser(answers_csv, capsys) -> None:
    # (0, 1) was accepted and the library's "mcse must be below 0.5" named no option
    for command in ("score", "report"):
        assert main([command, str(answers_csv), "--mcse", "0.6"]) == 2
        line = _error_line(capsys)
        assert "argument --mcse: must be a number in the open interval (0, 0.5)" in line


def test_score_on_a_dask_scheduler(tmp_path: Path, capsys) -> None:
    distributed = pytest.importorskip("distributed")
    _, parquet, _ = _count_files(tmp_path)
    argv = ["score", str(parquet), "--cant-solve", "skip", "--chunk-items", "150", "--seed", "3"]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        assert (
            main([*argv, "--scheduler", cluster.scheduler_address, "-o", str(tmp_path / "d.csv")])
            == 0
        )
        assert "connecting to the dask scheduler" in capsys.readouterr().err
        # a worker speaks dask's protocol too, but is not the scheduler
        worker = next(iter(cluster.scheduler_info["workers"]))
        assert main([*argv, "--scheduler", worker, "-q"]) == 2
        assert "it is a dask Worker, not the scheduler" in _error_line(capsys)
    assert main([*argv, "--scheduler", "synchronous", "-q", "-o", str(tmp_path / "s.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "d.csv"), pd.read_csv(tmp_path / "s.csv"))
    assert main([*argv, "--scheduler", "tcp://127.0.0.1:9", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--scheduler: cannot reach a dask scheduler" in err and "Traceback" not in err


class _QuietHTTPHandler(http.server.BaseHTTPRequestHandler):
    """An HTTP server's handler (answers 501 to a GET) that logs nothing."""

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _wrong_server(kind: str) -> Iterator[str]:
    """The address of a throwaway server on a free loopback port that is no dask scheduler:
    ``http`` (an HTTP server, as a scheduler's dashboard on 8787), ``silent`` (accepts and
    never answers), ``ssh`` (sends an SSH banner first), ``closed`` (nothing listens)."""
    if kind == "http":
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHTTPHandler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            yield f"tcp://127.0.0.1:{httpd.server_address[1]}"
        finally:
            httpd.shutdown()
            httpd.server_close()
        return
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    if kind == "closed":
        listener.close()
        yield f"tcp://127.0.0.1:{port}"
        return
    listener.listen(8)
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)
            if kind == "ssh":
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept()
        listener.close()
        for conn in accepted:
            conn.close()


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("http", "did not answer in dask's protocol within 3 s"),
        ("silent", "did not answer in dask's protocol within 8 s"),
        ("ssh", "does not speak dask's protocol (its first bytes read as a message of impossible"),
        ("closed", "nothing listens there"),
    ],
)
def test_wrong_scheduler_address_is_one_line_within_seconds(
    kind: str,
    reason: str,
    answers_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 25: an HTTP server ran past 420 s, a silent listener past 150 s (Client's
    timeout covers only the TCP connection), an SSH banner ended in a MemoryError of 2.82
    EiB. Now one line naming --scheduler within 15 s; the silent listener waits the default
    SCHEDULER_TIMEOUT (the worst case), the HTTP server a shorter one to keep CI quick."""
    pytest.importorskip("distributed")
    assert cli.scheduler.SCHEDULER_TIMEOUT == 8.0
    if kind == "http":
        monkeypatch.setattr(cli.scheduler, "SCHEDULER_TIMEOUT", 3.0)
    out = tmp_path / "s.csv"
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-q", "-o", str(out)]
    with _wrong_server(kind) as address:
        start = time.perf_counter()
        assert main([*argv, "--scheduler", address]) == 2
        elapsed = time.perf_counter() - start
    line = _error_line(capsys)
    assert line.startswith(
        f"ambppl: error: --scheduler: cannot reach a dask scheduler at '{address}': "
    )
    assert reason in line
    assert elapsed < min(15.0, cli.scheduler.SCHEDULER_TIMEOUT + 5.0)
    assert not out.exists()


def test_score_counts_a_long_file_with_dask(answers_csv: Path, tmp_path: Path, capsys) -> None:
    out_memory, out_chunks = tmp_path / "m.csv", tmp_path / "c.csv"
    base = ["score", str(answers_csv), "--cant-solve", "skip", "--seed", "3"]
    assert main([*base, "-q", "-o", str(out_memory)]) == 0
    assert main([*base, "--layout", "long", "--chunk-items", "20", "-o", str(out_chunks)]) == 0
    assert "counting the answers" in capsys.readouterr().err
    memory = pd.read_csv(out_memory, index_col="item").sort_index()
    chunks = pd.read_csv(out_chunks, index_col="item").sort_index()
    pd.testing.assert_frame_equal(chunks.drop(columns="rank"), memory.drop(columns="rank"))
    assert main([*base, "--layout", "long", "--chunk-items", "20", "--item", "tweet", "-q"]) == 2
    assert "--item" in capsys.readouterr().err


def test_point_method_refuses_draws_in_command_line_words(
    answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--method map with --draws: the fix in options, not Python keywords (was "method='map'
    ... draws=100")."""
    argv = ["score", str(answers_csv), "--rater", "worker", "--cant-solve", "skip", "-q"]
    argv += ["--model", "dawid_skene", "--method", "map", "--draws", "100", "-o", "-"]
    assert main(argv) == 2
    line = _error_line(capsys)
    assert (
        "--method map returns one point (the posterior mode), not draws, but got --draws 100"
        in line
    )
    assert "use --method laplace for draws around the mode" in line
    assert "=" not in line


# ------------------------------------------------------------- messages in the command's words


def test_score_help_has_one_summary_group_with_mcse(capsys: pytest.CaptureFixture[str]) -> None:
    """``score --help`` showed two "summary:" groups (--mcse alone in the second)."""
    assert main(["score", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.count("\nsummary:\n") == 1
    summary = out.split("\nsummary:\n")[1].split("\n\n")[0]
    assert "--threshold" in summary and "--mcse" in summary


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--prior", "1,2"], "--prior must be a positive number"),
        (
            ["--model", "hierarchical_dirichlet", "--param", "mu_prior=1,2"],
            "--param mu_prior=... must be a positive number",
        ),
        (  # it said "(Dirichlet concentrations)", and for 1,2 "a vector of 1 positive numbers"
            ["--model", "hierarchical_dirichlet", "--param", "kappa_scale=-1"],
            "--param kappa_scale=... must be a positive finite number, but got -1",
        ),
        (
            "--model dawid_skene --rater worker --method laplace --param rater_scale=0".split(),
            "--param rater_scale=... must be a positive finite number, but got 0",
        ),
    ],
)
def test_model_parameter_mistakes_name_the_option(
    answers_csv: Path, extra: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "prior must be ..." named a Python keyword: the option that sets it instead."""
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-o", "-", *FAST, *extra]
    argv += ["--method", "empirical_bayes"] if "hierarchical_dirichlet" in extra else []
    assert main(argv) == 2
    line = _error_line(capsys)
    assert line.startswith(f"ambppl: error: {named}"), line
    assert "shape" not in line


def test_map_refuses_centred_in_command_line_words(
    answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "centred must be None or False ..., but got True" (Python's words)."""
    argv = ["score", str(answers_csv), "--rater", "worker", "--cant-solve", "skip", "-o", "-"]
    argv += ["--model", "dawid_skene", "--method", "map", "--param", "centred=true", "-q"]
    assert main(argv) == 2
    line = _error_line(capsys)
    assert line == (
        "ambppl: error: --param centred=... must be false or null for the posterior mode, but "
        "got true: the mode is found in the non-centred coordinates (centred=true chooses "
        "NUTS's coordinates; drop it, or use --method nuts with it)"
    ), line


def test_validate_map_fit_gives_command_line_advice(
    answers_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A MAP fit has one point: the skipped checks said "fit with more draws" and "use
    kind='posterior'" (Python advice; more draws do not help a point). dawid_skene's mixed
    predictive check replicates the point (fresh classes from its pi), so it runs."""
    argv = ["validate", str(answers_csv), "--rater", "worker", "--cant-solve", "skip"]
    assert main([*argv, "--model", "dawid_skene", "--method", "map", "--seed", "1", "-q"]) == 0
    out = capsys.readouterr().out
    skipped = [line for line in out.splitlines() if " skipped: " in line]
    assert len(skipped) == 2, out
    assert "latent-class model's mixed predictive" in out
    for line in skipped:  # moments, density
        assert line.endswith(
            "(--chains x --draws) for a check, but holds 1; --method map gives one point, no "
            "draws: fit with --method nuts or laplace for draws to check"
        ), line
    assert "kind=" not in out and "more draws" not in out


def _logging_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ambppl score``'s call of ambppl.score logs as PyMC, PyTensor and nutpie do while
    they fit (progress at INFO, PyMC's convergence diagnostics, a warning)."""
    import logging

    import ambppl.analysis.scoring
    import ambppl.cli.score

    real = ambppl.analysis.scoring.score

    def logs_then_scores(data, model, **kwargs):
        logging.getLogger("pymc.sampling.mcmc").info("Initializing NUTS using jitter...")
        logging.getLogger("pymc.sampling.mcmc").info("Sampling 2 chains for 100 tune")
        convergence = logging.getLogger("pymc.stats.convergence")
        convergence.info("We recommend running at least 4 chains for robust computation")
        convergence.info("The rhat statistic is larger than 1.01 for some parameters.")
        convergence.error("The effective sample size per chain is smaller than 100")
        logging.getLogger("pytensor.graph").warning("a pytensor\nwarning")
        logging.getLogger("nutpie").info("nutpie compiled the model")
        return real(data, model, **kwargs)

    monkeypatch.setattr(ambppl.cli.score, "score", logs_then_scores)


@pytest.mark.parametrize("quiet", [True, False])
def test_library_log_lines_follow_quiet_and_one_line_warnings(
    answers_csv: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    quiet: bool,
) -> None:
    """-q left PyMC's log lines ("Initializing NUTS...", "We recommend running at least 4
    chains", "The rhat statistic ...") on stderr, and PyMC's convergence diagnostics
    doubled ambppl's own one-line convergence warning."""
    import logging

    _logging_score(monkeypatch)
    pymc_logger = logging.getLogger("pymc")
    before = (pymc_logger.handlers[:], pymc_logger.level, pymc_logger.propagate)
    argv = ["score", str(answers_csv), "--cant-solve", "skip", "-o", "-", "--seed", "1"]
    assert main([*argv, *(["-q"] if quiet else [])]) == 0
    err = capsys.readouterr().err.splitlines()
    library = [line for line in err if not line.startswith("ambppl: ")]
    expected = ["warning: a pytensor warning"]
    if not quiet:
        expected = [
            "Initializing NUTS using jitter...",
            "Sampling 2 chains for 100 tune",
            *expected,
            "nutpie compiled the model",
        ]
    assert library == expected
    assert (pymc_logger.handlers, pymc_logger.level, pymc_logger.propagate) == before


def test_library_logs_are_left_alone_outside_the_command() -> None:
    import logging

    from ambppl.cli.signals import LIBRARY_LOGGERS, _library_logs

    loggers = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    before = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    with _library_logs(quiet=True):
        assert all(lg.level == logging.WARNING and not lg.propagate for lg in loggers)
    assert [(lg.handlers, lg.level, lg.propagate) for lg in loggers] == before


def test_pymc_first_imported_inside_the_command_keeps_its_logging() -> None:
    # PyMC's import sets its logger up (INFO, a stream handler) only where it has no handler:
    # imported inside the command's block it saw the block's handler and set up nothing, and
    # the block then put back the empty logger, so PyMC's progress lines were lost after an
    # in-process command; a fresh interpreter, as PyMC is imported once per process
    code = (
        "import logging\n"
        "from ambppl.cli.signals import _library_logs\n"
        "with _library_logs(quiet=True):\n"
        "    import pymc\n"
        "log = logging.getLogger('pymc')\n"
        "print(logging.getLevelName(log.level), [type(h).__name__ for h in log.handlers])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split("\n")[0] == "INFO ['StreamHandler']", done.stdout


def test_chunk_items_counts_a_long_file_without_layout(
    answers_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--chunk-items without --layout read the answers into memory, silently: long is the
    default layout, so the file is counted with dask block by block as with --layout long."""
    base = ["score", str(answers_csv), "--cant-solve", "skip", "--seed", "3"]
    outs = [tmp_path / "layout.csv", tmp_path / "default.csv"]
    assert main([*base, "--layout", "long", "--chunk-items", "20", "-q", "-o", str(outs[0])]) == 0
    assert main([*base, "--chunk-items", "20", "-o", str(outs[1])]) == 0
    assert "counting the answers" in capsys.readouterr().err
    tables = [pd.read_csv(out, index_col="item") for out in outs]
    pd.testing.assert_frame_equal(tables[1], tables[0])
    parquet = tmp_path / "answers.parquet"
    pd.read_csv(answers_csv).to_parquet(parquet, row_group_size=20)
    argv = ["score", str(parquet), "--cant-solve", "skip", "--seed", "3", "--chunk-items", "20"]
    assert main([*argv, "-o", str(tmp_path / "p.csv")]) == 0
    assert "counting the answers" in capsys.readouterr().err
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "p.csv", index_col="item"), tables[0])


def test_chunked_counts_name_cant_solve_and_empty_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Counts read in chunks said "cant_solve must be ..." and "1 item(s) have none"."""
    path = tmp_path / "c.parquet"
    frame = pd.DataFrame({"item": ["u", "w", "v"], "a": [1, 0, 2], "cs": [0, 0, 3]})
    frame.to_parquet(path, index=False)
    assert main(["score", str(path), "--cant-solve", "7", "-o", "-", "-q"]) == 2
    line = _error_line(capsys)
    assert line.startswith("ambppl: error: --cant-solve must be ") and "'7'" in line
    assert "cant_solve" not in line
    assert main(["score", str(path), "--cant-solve", "cs", "-o", "-", "-q"]) == 2
    line = _error_line(capsys)
    assert "1 item(s) ['w'] have none" in line
    # in chunks (asked for: a file this small is read into memory without --chunk-items)
    argv = ["score", str(path), "--model", "hierarchical_dirichlet", "--chunk-items", "2"]
    assert main([*argv, "--method", "empirical_bayes", "-o", "-", "-q"]) == 2
    line = _error_line(capsys)
    assert line.startswith("ambppl: error: --method empirical_bayes estimates the prior")
    assert "method=" not in line


def test_score_dataset_folder_takes_the_umask(tmp_path: Path, capsys) -> None:
    """A Parquet dataset written with -o was created by tempfile.mkdtemp (mode 0o700) and
    renamed into place: only its owner could read it, and a folder replacing a file
    (--force) kept 0o700 too. It now follows the umask like a folder made by mkdir; a
    replaced folder keeps its mode."""
    import os
    import stat

    _, parquet, _ = _count_files(tmp_path)
    out = tmp_path / "s.parquet"
    argv = ["score", str(parquet), "--cant-solve", "skip", "--chunk-items", "200", "-q"]
    old = os.umask(0o022)
    try:
        assert main([*argv, "-o", str(out)]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o755
        out.chmod(0o750)
        assert main([*argv, "-o", str(out), "--force"]) == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o750
        a_file = tmp_path / "f.parquet"
        a_file.write_text("x")
        assert main([*argv, "-o", str(a_file), "--force"]) == 0
        assert stat.S_IMODE(a_file.stat().st_mode) == 0o755
    finally:
        os.umask(old)
    assert len(pd.read_parquet(out)) == len(pd.read_parquet(a_file)) == 500
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["validate", "x.csv", "--measure", "amb"], "validate"),
        (["score", "x.csv", "--bogus"], "score"),
        (["plan", "x.csv", "--budget", "5", "--seed", "3"], "plan"),
    ],
)
def test_an_unknown_option_points_to_its_commands_help(argv, command, capsys) -> None:
    # argparse leaves an option that no parser knows to the top-level parser, whose message
    # sent users to 'ambppl --help', which lists no option of the subcommand
    assert main(argv) == 2
    line = _error_line(capsys)
    assert "unrecognized arguments: " in line
    assert line.endswith(f"(see 'ambppl {command} --help')")


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            ["--model", "rater_effects", "--param", "centred=3"],
            "--param centred=... must be true, false or null (automatic), but got 3",
        ),
        (
            ["--model", "rater_effects", "--param", "centred_raters=1"],
            "--param centred_raters=... must be true, false or null (automatic), but got 1",
        ),
        (
            ["--model", "dawid_skene", "--param", "centred=2"],
            "--param centred=... must be true, false or null (automatic), but got 2",
        ),
        (
            ["--param", "prior=null"],
            "--prior must be a positive number or one per category, but got null",
        ),
        (
            ["--model", "rater_effects", "--param", "mu_sd=null"],
            "--param mu_sd=... must be a positive number, but got null",
        ),
    ],
)
def test_param_refusals_use_command_line_words(extra, expected, tmp_path, capsys) -> None:
    # they said "centred must be True, False or None (automatic)", "--prior must be
    # array-like of numbers, but got dtype object (None)" and "... but got None" for `null`
    example = Path(ambppl.__file__).parent / "examples" / "weather_sentiment.csv"
    argv = ["score", str(example), "--cant-solve", "I can't tell", "--method", "nuts"]
    assert main([*argv, "--draws", "20", "--chains", "1", *extra, "-q", "-o", "-"]) == 2
    assert _error_line(capsys) == f"ambppl: error: {expected}"
