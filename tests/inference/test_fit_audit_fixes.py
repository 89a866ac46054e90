"""fit after the inference audit: the values of sample_kwargs, labelled priors, the catalog's
defaults against the model files', the tune in the convergence record, valid JSON records,
and what computed a ``map`` fit.

Every refused input is refused before any sampling: the NUTS routes are replaced by one that
raises :class:`Sampled`, so a test of a refusal fails (with ``Sampled``) where the check is
missing instead of running PyMC.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from _fit_helpers import Sampled, record_nuts_routes

import ambppl
from ambppl.inference.catalog import ENV_VAR, get_model
from ambppl.inference.convergence import (
    ConvergenceWarning,
    check_convergence,
    convergence_message,
    describe_parameter,
    stored_record,
)
from ambppl.internal.messages import command_line_messages

fitting = importlib.import_module("ambppl.inference.fitting")


@pytest.fixture
def recorded(monkeypatch):
    """The NUTS routes replaced by one that records the job's sampler and sample_kwargs
    (:func:`_fit_helpers.record_nuts_routes`)."""
    return record_nuts_routes(monkeypatch)


# ------------------------------------------------------- findings 1-2: sample_kwargs values


def test_a_negative_tune_is_refused_naming_tune(small_counts, recorded):
    """PyMC took tune=-5 and returned 5 draws instead of 30 (it drops -tune draws); the
    collapsed route failed after sampling with "the model's concentration must have shape
    ..."; both now one ValueError before sampling."""
    match = r"^sample_kwargs\['tune'\] must be a whole number >= 0 \(warm-up steps per chain\)"
    match += r" or None, but got -5$"
    with pytest.raises(ValueError, match=match):
        ambppl.fit(small_counts, method="nuts", sampler="pymc", draws=30, chains=2,
                   sample_kwargs={"tune": -5})  # fmt: skip
    with pytest.raises(ValueError, match=match):
        ambppl.fit(small_counts, "hierarchical_dirichlet", draws=30, chains=1,
                   sample_kwargs={"tune": -5})  # fmt: skip
    assert not recorded


def test_the_command_line_words_name_the_options(small_counts, recorded):
    """The command passes --tune and --target-accept as sample_kwargs: where a message about
    them reaches it, it names the options (as the parser's "--tune ... must be a whole number
    >= 0")."""
    with command_line_messages():
        with pytest.raises(
            ValueError, match=r"^--tune must be a whole number >= 0 \(warm-up steps per chain\), "
        ):
            ambppl.fit(small_counts, method="nuts", sample_kwargs={"tune": -1})
        with pytest.raises(
            ValueError, match=r"^--target-accept must be a number in the open interval \(0, 1\)"
        ):
            ambppl.fit(small_counts, method="nuts", sample_kwargs={"target_accept": 2.0})


@pytest.mark.parametrize("sampler", ["pymc", "nutpie"])
@pytest.mark.parametrize(
    ("given", "error", "match"),
    [
        ({"tune": -1}, ValueError, r"sample_kwargs\['tune'\] must be a whole number >= 0"),
        ({"tune": 1.5}, TypeError, r"sample_kwargs\['tune'\] must be a whole number >= 0 .*1\.5"),
        ({"tune": True}, TypeError, r"sample_kwargs\['tune'\] must be a whole number"),
        ({"target_accept": 2}, ValueError, r"\['target_accept'\] must be a number in the open"),
        ({"target_accept": -1}, ValueError, r"\['target_accept'\] must be a number in the open"),
        ({"target_accept": 1.0}, ValueError, r"\['target_accept'\] must be .* but got 1\.0$"),
        ({"target_accept": math.nan}, ValueError, r"\['target_accept'\] .* but got nan$"),
        ({"target_accept": "0.9"}, TypeError, r"\['target_accept'\] .* but got '0\.9'$"),
        (
            {"nuts": {"target_accept": 2}},
            ValueError,
            r"^sample_kwargs\['nuts'\]\['target_accept'\] must be a number in the open interval",
        ),
        (
            {"nuts": {"max_treedepth": 0}},
            ValueError,
            r"^sample_kwargs\['nuts'\]\['max_treedepth'\] must be a whole number >= 1",
        ),
        ({"cores": 0}, ValueError, r"^sample_kwargs\['cores'\] must be a whole number >= 1 .*"),
        (
            {"return_inferencedata": False},
            ValueError,
            r"^sample_kwargs must not set return_inferencedata \(fit builds its result from "
            r"PyMC's xarray.DataTree\), but got return_inferencedata=False; drop it$",
        ),
        (
            {"step": "metropolis"},
            ValueError,
            r"^sample_kwargs must not set step \(fit samples with NUTS .*\), but got "
            r"step='metropolis'; drop it \(sampler= chooses the NUTS implementation\)$",
        ),
        (
            {"metropolis": {"scaling": 2.0}},
            ValueError,
            r"^sample_kwargs must not hold settings of step methods other than NUTS \(fit "
            r"samples with NUTS only, and PyMC drops them unread\), but got \['metropolis'\]",
        ),
    ],
)
def test_bad_sample_kwargs_values_are_one_clear_error(
    small_counts, recorded, sampler, given, error, match
):
    """PyMC and nutpie took target_accept=2 or -1 without a word; tune=-1 (nutpie
    OverflowError), tune=1.5 (TypeError), cores=0 (ZeroDivisionError),
    max_treedepth=0 (UnboundLocalError), return_inferencedata=False (KeyError) and
    step='metropolis' (TypeError) failed inside the libraries; PyMC sampled NUTS with the
    settings of Metropolis dropped unread."""
    with pytest.raises(error, match=match):
        ambppl.fit(small_counts, method="nuts", sampler=sampler, draws=30, chains=1,
                   sample_kwargs=given)  # fmt: skip
    assert not recorded


def test_nutpie_s_maxdepth_is_checked(small_counts, recorded):
    """nutpie 0.16 sampled with nuts={"maxdepth": 0} without a word."""
    for bad, error in ((0, ValueError), (2.5, TypeError)):
        with pytest.raises(
            error, match=r"^sample_kwargs\['nuts'\]\['maxdepth'\] must be a whole number >= 1 "
        ):
            ambppl.fit(small_counts, "hierarchical_dirichlet", sampler="nutpie",
                       sample_kwargs={"nuts": {"maxdepth": bad}})  # fmt: skip
    assert not recorded


def test_max_treedepth_at_the_top_level_for_pymc(small_counts, recorded):
    with pytest.raises(ValueError, match=r"^sample_kwargs\['max_treedepth'\] must be a whole"):
        ambppl.fit(small_counts, "hierarchical_dirichlet", sampler="pymc",
                   sample_kwargs={"tune": 10, "max_treedepth": 0})  # fmt: skip


def test_good_sample_kwargs_values_pass_as_plain_numbers(small_counts, recorded):
    """numpy's numbers pass as Python's; None (PyMC's default) for tune and cores, True for
    return_inferencedata and None for step change nothing and pass."""
    given = {
        "tune": np.int64(0),
        "cores": np.int32(1),
        "target_accept": np.float32(0.5),
        "max_treedepth": np.int16(3),
    }
    with pytest.raises(Sampled):
        ambppl.fit(small_counts, method="nuts", sampler="pymc", sample_kwargs=given)
    sent = recorded["sample_kwargs"]
    assert sent == {"tune": 0, "cores": 1, "target_accept": 0.5, "max_treedepth": 3}
    assert [type(sent[k]) for k in ("tune", "cores", "target_accept", "max_treedepth")] == [
        int,
        int,
        float,
        int,
    ]
    assert type(given["tune"]) is np.int64  # the caller's dict is not changed
    same = {"tune": None, "cores": None, "return_inferencedata": np.True_, "step": None}
    with pytest.raises(Sampled):
        ambppl.fit(small_counts, method="nuts", sampler="pymc", sample_kwargs=same)
    assert recorded["sample_kwargs"] == same
    nested = {"nuts": {"target_accept": 0.9, "max_treedepth": np.int64(12)}}
    with pytest.raises(Sampled):
        ambppl.fit(small_counts, method="nuts", sampler="nutpie", sample_kwargs=nested)
    assert recorded["sample_kwargs"]["nuts"] == {"target_accept": 0.9, "max_treedepth": 12}
    assert type(nested["nuts"]["max_treedepth"]) is np.int64


# ------------------------------------------------------------- finding 3: labelled priors


def test_a_prior_labelled_by_category_is_read_by_its_labels(small_counts):
    """A Series (or DataArray) prior failed after the whole route ran ("Object of type Series
    is not JSON serializable"), and a Series labelled by category was read by position."""
    in_order = ambppl.fit(small_counts, prior=[1.0, 2.0, 3.0], draws=5, chains=1, random_seed=4)
    shuffled = pd.Series([3.0, 1.0, 2.0], index=["cs", "yes", "no"])
    labelled = xr.DataArray(
        [2.0, 3.0, 1.0], dims="category", coords={"category": ["no", "cs", "yes"]}
    )
    for prior in (shuffled, labelled):
        result = ambppl.fit(small_counts, prior=prior, draws=5, chains=1, random_seed=4)
        assert json.loads(result.attrs["parameters"]) == {"prior": [1.0, 2.0, 3.0]}
        assert result.attrs["prior"] == [1.0, 2.0, 3.0]
        np.testing.assert_array_equal(
            result["posterior"]["q"].values, in_order["posterior"]["q"].values
        )


def test_a_prior_with_other_labels_is_refused_before_sampling(small_counts, recorded):
    with pytest.raises(
        ValueError,
        match=r"^prior must have the labels of counts along 'category' \['yes', 'no', 'cs'\], "
        r"but got a pandas Series .* that lacks \['cs'\] and has \['maybe'\]",
    ):
        ambppl.fit(small_counts, method="nuts",
                   prior=pd.Series([1.0, 2.0, 3.0], index=["yes", "no", "maybe"]))  # fmt: skip
    with pytest.raises(ValueError, match=r"^prior must have the category dimension of counts"):
        ambppl.fit(small_counts, prior=xr.DataArray([1.0, 2.0, 3.0], dims="k"))
    assert not recorded


def test_an_unlabelled_data_array_prior_is_read_by_position(small_counts):
    result = ambppl.fit(
        small_counts, prior=xr.DataArray([1.0, 2.0, 3.0], dims="category"), draws=5, chains=1
    )
    assert json.loads(result.attrs["parameters"]) == {"prior": [1.0, 2.0, 3.0]}


def test_parameters_record_never_fails_on_a_value_json_lacks():
    value = {
        "a": np.float32(0.5),
        "b": pd.Series([1, 2]),
        "c": xr.DataArray([1.5]),
        "d": (np.int64(3), None),
        "e": object(),
    }
    out = json.loads(json.dumps(fitting._jsonable(value)))
    assert out["a"] == 0.5 and out["b"] == [1, 2] and out["c"] == [1.5] and out["d"] == [3, None]
    assert out["e"].startswith("<object object at")


# --------------------------------------------- finding 4: the catalog's defaults vs the file's


def test_an_info_record_default_the_file_does_not_run_is_refused(tmp_path, monkeypatch):
    """fit recorded the info record's default (prior 0.5) while the model file ran its
    signature's (prior=1.0)."""
    entry = get_model("dirichlet_categorical")
    shutil.copy(entry.path, tmp_path / entry.path.name)
    info = json.loads(entry.path.with_suffix(".json").read_text(encoding="utf-8"))
    info["parameters"]["prior"]["default"] = 0.5
    (tmp_path / "dirichlet_categorical.json").write_text(json.dumps(info), encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r"^model file 'dirichlet_categorical.py' and its info record "
        r"'dirichlet_categorical.json' must give the parameter 'prior' the same default .* but "
        r"concentration\(\) has prior=1.0 and the info record 0.5; make them the same$",
    ):
        ambppl.fit(np.array([[3, 1], [0, 4]]), draws=5, chains=1)
    # the listing reads the info records only; the entry's file is refused where it is used
    assert ambppl.list_models().loc["dirichlet_categorical", "parameters"] == "prior=0.5"


TOY = """
def model(counts, *, scale={default}):
    return None
"""


@pytest.mark.parametrize(
    ("recorded_default", "file_default", "same"),
    [
        (2, "2.0", True),
        (None, "None", True),
        ([1, 2], "(1.0, 2.0)", True),
        (True, "True", True),
        (1, "True", False),
        (None, "0", False),
        ([1, 2], "(1, 2, 3)", False),
        ("auto", "'auto'", True),
    ],
)
def test_defaults_are_compared_as_json_values(tmp_path, recorded_default, file_default, same):
    (tmp_path / "toy.py").write_text(TOY.format(default=file_default), encoding="utf-8")
    info = {
        "name": "toy",
        "description": "A toy entry.",
        "parameters": {"scale": {"default": recorded_default, "description": "a number"}},
        "reference": "none",
        "methods": ["nuts"],
        "data": "counts",
    }
    (tmp_path / "toy.json").write_text(json.dumps(info), encoding="utf-8")
    entry = get_model("toy", tmp_path)
    if same:
        assert entry.module.model(None) is None
    else:
        with pytest.raises(ValueError, match=r"must give the parameter 'scale' the same default"):
            _ = entry.module


def test_the_real_catalog_agrees_with_its_files():
    for name in ambppl.list_models().index:
        _ = get_model(name).module  # refused where a default differed


# -------------------------------------------------- finding 5: the tune the fit really had


def _stuck_tree(**stats_attrs) -> xr.DataTree:
    """4 chains, one of them 3 sd apart (R-hat ~ 1.6), with sample_stats attributes."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4, 500))
    x[0] += 3.0
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((4, 500), bool))})
    stats.attrs.update(stats_attrs)
    return xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"x": (("chain", "draw"), x)}), "sample_stats": stats}
    )


@pytest.mark.parametrize(
    ("attrs", "given", "tune"),
    [
        ({"tuning_steps": 2500}, None, 2500),  # PyMC
        ({"tuning_steps": 2500}, 100, 2500),  # what ran wins over what was asked
        (
            {"inference_library_settings": json.dumps({"settings": {"num_tune": 3000}})},
            None,
            3000,
        ),  # nutpie
        ({}, 2500, 2500),  # recorded by neither: what fit passed
    ],
)
def test_the_record_keeps_the_tune_and_the_advice_asks_for_more(attrs, given, tune):
    """The advice read record.get("tune"), which the record never held: after tune=2500 it
    said "tune longer (sample_kwargs={'tune': 2000})"."""
    tree = _stuck_tree(**attrs)
    with pytest.warns(ConvergenceWarning) as caught:
        record = check_convergence(tree, ["x"], tune=given)
    assert record["tune"] == tune and json.loads(tree.attrs["convergence"])["tune"] == tune
    assert f"tune longer (sample_kwargs={{'tune': {2 * tune}}})" in str(caught[0].message)


def test_a_record_without_tune_still_advises_2000():
    with pytest.warns(ConvergenceWarning, match=r"tune longer \(sample_kwargs=\{'tune': 2000\}"):
        record = check_convergence(_stuck_tree(), ["x"])
    assert "tune" not in record


@pytest.mark.slow
def test_fit_records_the_tune_of_pymc_and_of_nutpie(small_counts):
    for sampler in ("pymc", "nutpie"):
        with pytest.warns(ConvergenceWarning):  # one chain of 10 draws misses the standard
            result = ambppl.fit(small_counts, method="nuts", sampler=sampler, draws=10, chains=1,
                                random_seed=2, sample_kwargs={"tune": 40})  # fmt: skip
        assert stored_record(result)["tune"] == 40


# --------------------------------------------------------- finding 6: valid JSON records


def _strict(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))


def test_the_stored_record_is_valid_json_with_one_chain():
    """json.dumps wrote "r_hat": NaN (one chain), which is not JSON."""
    rng = np.random.default_rng(8)
    tree = xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"x": (("chain", "draw"), rng.normal(size=(1, 600)))})}
    )
    with pytest.warns(ConvergenceWarning) as caught:
        record = check_convergence(tree, ["x"])
    assert math.isnan(record["r_hat"])  # the returned record keeps its numbers
    stored = _strict(tree.attrs["convergence"])
    assert stored["r_hat"] is None and stored["worst"][0]["r_hat"] is None
    assert stored_record(tree) == stored
    warning = caught[0].message
    assert warning.record == stored  # the record as stored, which the report reads back
    assert str(warning) == convergence_message(stored, what="the fit")


def test_an_infinite_r_hat_is_null_and_the_message_reads_the_same_back():
    """A non-finite draw's R-hat (inf) was stored as Infinity; the report recognises the
    fit's verdict by rewording the stored record, so the warning is worded from it."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 500))
    x[2, 10] = np.nan
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": (("chain", "draw"), x)})})
    with pytest.warns(ConvergenceWarning) as caught:
        record = check_convergence(tree, ["x"])
    assert record["r_hat"] == np.inf
    stored = _strict(tree.attrs["convergence"])
    assert stored["r_hat"] is None and stored["ess_bulk"] == 0.0
    assert str(caught[0].message) == convergence_message(stored_record(tree), what="the fit")


def test_readers_take_a_null_diagnostic():
    worst = {"parameter": "kappa", "r_hat": None, "ess_bulk": 7.0, "ess_tail": None}
    assert describe_parameter(worst) == "kappa (bulk ESS 7)"
    record = {
        "passed": False,
        "failed": ["r_hat"],
        "chains": 1,
        "r_hat": None,
        "ess_bulk": 900.0,
        "ess_tail": None,
        "divergences": 0,
        "worst": [worst],
        "extremes_at": {"ess_bulk": "kappa"},
    }
    text = convergence_message(record, command_line=True)
    assert "worst parameter kappa (bulk ESS 7)" in text and "--chains 4" in text


# ------------------------------------------------- finding 7: what computed a map fit


def test_map_records_the_model_files_own_mode():
    """A map fit of dawid_skene, whose mode its file's posterior_mode (numpy) computes, was
    recorded as computed by ambppl.inference.laplace."""
    from ambppl.data import example_path, read_long

    answers = read_long(example_path("weather_sentiment"), cant_solve="I can't tell")
    result = ambppl.fit(answers.iloc[:300], "dawid_skene", method="map")
    assert result.attrs["sampler"] == "dawid_skene.posterior_mode"
    assert result["posterior"].attrs["sampler"] == "dawid_skene.posterior_mode"


@pytest.mark.slow
def test_map_without_a_files_mode_records_laplace(tmp_path, monkeypatch, small_counts):
    entry = get_model("dirichlet_categorical")
    shutil.copy(entry.path, tmp_path / "mode_only.py")
    info = {**entry.info, "name": "mode_only", "methods": ["map"]}
    (tmp_path / "mode_only.json").write_text(json.dumps(info), encoding="utf-8")
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = ambppl.fit(small_counts, "mode_only", method="map")
    assert result.attrs["sampler"] == "ambppl.inference.laplace"


# -- an optimizer that stopped early ----------------------------------------------------------


def test_an_optimizer_that_stopped_early_is_said(monkeypatch):
    """The map and laplace routes recorded ``optimizer_converged=False`` and said nothing
    else: a mode cut off after 3 L-BFGS iterations (the model file's own optimizer, its
    iteration limit lowered) came back as if it were the mode. It now warns, and the
    warning is kept for the report."""
    import functools

    module = get_model("dawid_skene").module
    answers = pd.DataFrame(
        [(f"i{i}", f"r{r}", ["a", "b"][(i + r) % 3 == 0]) for i in range(30) for r in range(4)],
        columns=["item", "rater", "label"],
    )
    data = ambppl.data.read_long(answers, item="item", rater="rater", label="label")
    monkeypatch.setattr(
        module, "posterior_mode", functools.partial(module.posterior_mode, maxiter=3)
    )
    stopped = (
        r"^the optimizer of the map fit of 'dawid_skene' stopped before it converged "
        r"\(after 3 iterations: .*fit with method='nuts' to check$"
    )
    with pytest.warns(UserWarning, match=stopped):
        result = ambppl.fit(data, "dawid_skene", method="map", random_seed=1)
    assert not result.attrs["optimizer_converged"]
    kept = json.loads(result.attrs["fit_warnings"])
    assert any("stopped before it converged" in k["message"] for k in kept)
    # the default limit converges on the same data: no such warning
    monkeypatch.undo()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ambppl.fit(data, "dawid_skene", method="map", random_seed=1)
    assert result.attrs["optimizer_converged"]
    assert not any("stopped before it converged" in str(w.message) for w in caught)
