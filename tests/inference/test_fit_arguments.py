"""fit's arguments: the NUTS settings it passes on (sample_kwargs checked against the installed
PyMC, the model's defaults yielding to the caller's nuts={...}), and the checks of model,
draws, switches and data frames."""

from __future__ import annotations

import functools
import importlib
import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from _fit_helpers import Sampled, record_nuts_routes

import ambppl
from ambppl.cli import main
from ambppl.inference import sample_settings
from ambppl.inference.catalog import get_model

fitting = importlib.import_module("ambppl.inference.fitting")


@pytest.fixture
def recorded(monkeypatch):
    """The NUTS routes replaced by one that records the job's sampler and sample_kwargs
    (:func:`_fit_helpers.record_nuts_routes`)."""
    return record_nuts_routes(monkeypatch)


def _sent(data, model, **kwargs):
    """What fit hands the NUTS route (sampler, sample_kwargs), without sampling."""
    with pytest.raises(Sampled):
        ambppl.fit(data, model, **kwargs)


# ------------------------------------------------ finding: the model's default vs the caller's


def test_model_target_accept_yields_to_the_callers_nuts_dict(small_counts, recorded):
    """hierarchical_dirichlet's nuts_defaults set target_accept 0.95 (its info record); a
    caller's target_accept in nuts={...} (or PyMC's deprecated nuts_sampler_kwargs) wins and
    the default is not added beside it, which PyMC refused ("target_accept was defined
    twice"); at the top level it wins as before."""
    assert get_model("hierarchical_dirichlet").info["nuts_defaults"] == {"target_accept": 0.95}
    model = "hierarchical_dirichlet"
    _sent(small_counts, model, sample_kwargs={"tune": 50})
    assert recorded["sample_kwargs"] == {"tune": 50, "target_accept": 0.95}
    for key in ("nuts", "nuts_sampler_kwargs"):
        given = {"target_accept": 0.9}
        _sent(small_counts, model, sample_kwargs={key: given, "tune": 50})
        assert recorded["sample_kwargs"] == {key: {"target_accept": 0.9}, "tune": 50}
        assert recorded["sample_kwargs"][key] is not given  # a copy: PyMC writes into it
    _sent(small_counts, model, sample_kwargs={"target_accept": 0.9})
    assert recorded["sample_kwargs"] == {"target_accept": 0.9}
    # other NUTS settings in nuts= leave the default at the top level
    _sent(small_counts, model, sample_kwargs={"nuts": {"max_treedepth": 8}})
    assert recorded["sample_kwargs"] == {"nuts": {"max_treedepth": 8}, "target_accept": 0.95}
    with pytest.raises(ValueError, match=r"set target_accept once, .* but got both"):
        ambppl.fit(
            small_counts,
            model,
            sample_kwargs={"target_accept": 0.9, "nuts": {"target_accept": 0.8}},
        )


@pytest.mark.slow
def test_callers_nuts_target_accept_reaches_pymcs_step(small_counts, monkeypatch):
    """A real collapsed fit with nuts={'target_accept': 0.9}: PyMC samples (it raised before)
    with the caller's 0.9, and the caller's dicts are left as they were (PyMC moves a
    top-level target_accept into the nuts dict it is given)."""
    from pymc.step_methods.hmc.nuts import NUTS

    targets = []
    original = NUTS.__init__
    sample_settings.sample_keywords()  # read PyMC's signatures before the spy stands in

    @functools.wraps(original)
    def spy(self, *args, **kwargs):
        targets.append(kwargs.get("target_accept"))
        original(self, *args, **kwargs)

    monkeypatch.setattr(NUTS, "__init__", spy)
    for nested, expected in (({"target_accept": 0.9}, 0.9), ({"max_treedepth": 8}, 0.95)):
        given = {"nuts": nested, "tune": 20}
        before = {"nuts": dict(nested), "tune": 20}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)  # PyMC: too few draws to check
            result = ambppl.fit(
                small_counts,
                "hierarchical_dirichlet",
                method="collapsed",
                draws=20,
                chains=1,
                random_seed=1,
                sample_kwargs=given,
            )
        assert result.posterior.sizes["draw"] == 20
        assert targets[-1] == expected
        assert given == before


def test_dawid_skene_default_yields_to_the_callers_nuts_dict(recorded):
    """dawid_skene's nuts_defaults give target_accept 0.9 below 10 raters: a caller's
    nuts={'target_accept': ...} wins and no top-level default is added (PyMC refused the
    pair)."""
    frame = pd.DataFrame(
        [(f"t{i}", f"r{r}", "ab"[(i + r) % 2]) for r in range(4) for i in range(3)],
        columns=["task", "worker", "label"],
    )
    answers = ambppl.data.read_long(frame)
    assert get_model("dawid_skene").module.nuts_defaults(answers) == {"target_accept": 0.9}
    _sent(answers, "dawid_skene", sample_kwargs={"nuts": {"target_accept": 0.95}})
    assert recorded["sample_kwargs"] == {"nuts": {"target_accept": 0.95}}


# ----------------------------------------------------- finding: unknown sample_kwargs keys


@pytest.mark.parametrize("sampler", ["pymc", "nutpie", None])
def test_misspelt_sample_kwargs_are_refused(small_counts, recorded, sampler):
    """A key that pymc.sample does not take (PyMC's own NUTS dropped it unread: 'coress',
    'target_acept' ran with 4 cores' default and target_accept 0.8) is refused before
    sampling, with the key it was probably meant to be."""
    with pytest.raises(
        ValueError,
        match=r"^sample_kwargs must hold keywords of pymc.sample .* but got 'coress' \(did you "
        r"mean 'cores'\?\), 'target_acept' \(did you mean 'target_accept'\?\)$",
    ):
        ambppl.fit(
            small_counts,
            method="nuts",
            sampler=sampler,
            sample_kwargs={"tune": 50, "coress": 1, "target_acept": 0.99},
        )
    with pytest.raises(ValueError, match=r"but got 'frobnicate'$"):  # nothing close
        ambppl.fit(small_counts, method="nuts", sampler=sampler, sample_kwargs={"frobnicate": 1})
    assert recorded == {}  # nothing reached a route


def test_sample_kwargs_keys_follow_the_installed_pymc(small_counts, recorded):
    """Every named parameter of the installed pymc.sample that fit does not set, the NUTS
    step's settings and nuts= pass the check unchanged."""
    import pymc as pm

    named = [
        p.name
        for p in inspect.signature(pm.sample).parameters.values()
        if p.kind is not p.VAR_KEYWORD and p.name not in sample_settings.RESERVED_SAMPLE_KWARGS
    ]
    assert {"tune", "cores", "init", "idata_kwargs", "compile_kwargs"} <= set(named)
    known = sample_settings.sample_keywords()
    assert set(named) <= known
    assert {"target_accept", "max_treedepth", "step_scale", "nuts"} <= known
    assert not set(sample_settings.RESERVED_SAMPLE_KWARGS) & known
    # another step method's settings apply only with step=, which fit refuses
    assert "metropolis" in sample_settings.other_step_methods()
    assert not sample_settings.other_step_methods() & known
    given = {"tune": 50, "cores": 1, "target_accept": 0.9, "max_treedepth": 8, "init": "adapt_diag"}
    _sent(small_counts, "dirichlet_categorical", method="nuts", sampler="pymc", sample_kwargs=given)
    assert recorded["sample_kwargs"] == given


def test_nuts_dict_is_checked_for_the_sampler(small_counts, recorded):
    """With PyMC's own NUTS the keys of nuts={...} must be its step's settings (it drops the
    others unread); with nutpie they are nutpie's, and the step's settings go there rather
    than at the top level, where PyMC refuses them in its own words."""
    with pytest.raises(
        ValueError,
        match=r"sample_kwargs\['nuts'\] must hold settings of PyMC's NUTS step .* but got "
        r"'target_acept' \(did you mean 'target_accept'\?\)",
    ):
        ambppl.fit(
            small_counts, method="nuts", sampler="pymc", sample_kwargs={"nuts": {"target_acept": 1}}
        )
    nutpie = {"nuts": {"adaptation": "low_rank", "max_treedepth": 8}}
    _sent(
        small_counts, "dirichlet_categorical", method="nuts", sampler="nutpie", sample_kwargs=nutpie
    )
    assert recorded["sample_kwargs"] == nutpie
    with pytest.raises(
        ValueError,
        match=r"sample_kwargs must give the nutpie sampler's settings in nuts=\{...\} .* but got "
        r"\['max_treedepth'\] at the top level",
    ):
        ambppl.fit(
            small_counts, method="nuts", sampler="nutpie", sample_kwargs={"max_treedepth": 8}
        )
    with pytest.raises(TypeError, match=r"sample_kwargs\['nuts'\] must be a dict of NUTS"):
        ambppl.fit(small_counts, method="nuts", sample_kwargs={"nuts": 0.9})
    with pytest.raises(ValueError, match=r"once, in nuts=\{...\} .* but got both"):
        ambppl.fit(
            small_counts, method="nuts", sample_kwargs={"nuts": {}, "nuts_sampler_kwargs": {}}
        )


@pytest.mark.slow
def test_a_step_setting_at_the_top_level_reaches_pymcs_nuts(small_counts):
    """The check lets through what PyMC's NUTS does read from pymc.sample's **kwargs:
    max_treedepth=2 at the top level caps every tree at depth 2."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few draws for the convergence checks
        result = ambppl.fit(
            small_counts,
            method="nuts",
            sampler="pymc",
            draws=30,
            chains=1,
            random_seed=3,
            sample_kwargs={"tune": 30, "max_treedepth": 2},
        )
    depth = result["sample_stats"]["tree_depth"].values
    assert depth.max() <= 2 and depth.min() >= 1


# -------------------------------------------------------------- finding: the other checks


def test_model_name_must_be_a_string(small_counts):
    with pytest.raises(
        TypeError,
        match=r"model must be the name of one model, one of \[.*\] \(ambppl.list_models\(\)\), but "
        r"got list \['dirichlet_categorical'\]$",
    ):
        ambppl.fit(small_counts, ["dirichlet_categorical"])
    with pytest.raises(TypeError, match=r"but got NoneType None"):
        get_model(None)


@pytest.mark.parametrize(
    ("sample_kwargs", "shown"), [("tune", r"str 'tune'"), (5, r"int 5"), ([("tune", 5)], "list")]
)
def test_sample_kwargs_must_be_a_dict_whatever_the_method(small_counts, sample_kwargs, shown):
    for method in ("exact", None):
        with pytest.raises(TypeError, match=rf"sample_kwargs must be a dict .* but got {shown}"):
            ambppl.fit(small_counts, method=method, sample_kwargs=sample_kwargs)


@pytest.mark.parametrize("value", [1.0, True, np.float64(1.0)])
def test_map_takes_integer_draws_only(value):
    """method='map' refused draws=5 but took 1.0 and True (equal to 1), which the other
    methods refuse as no integers."""
    answers = _tiny_answers()
    for name in ("draws", "chains"):
        with pytest.raises(TypeError, match=rf"{name} must be a positive integer, but got"):
            ambppl.fit(answers, "dawid_skene", method="map", **{name: value})
    result = ambppl.fit(answers, "dawid_skene", method="map", draws=1, chains=np.int64(1))
    assert result.posterior.sizes["draw"] == 1


def test_switches_take_bools_only(small_counts):
    with pytest.raises(TypeError, match=r"^progressbar must be True or False, but got 'no'$"):
        ambppl.fit(small_counts, progressbar="no", draws=5, chains=1)
    with pytest.raises(TypeError, match=r"^log_likelihood must be True or False, but got 1$"):
        ambppl.fit(small_counts, log_likelihood=1, draws=5, chains=1)
    kept = ambppl.fit(
        small_counts, log_likelihood=np.True_, progressbar=np.False_, draws=5, chains=1
    )
    assert "log_likelihood" in kept.children
    dropped = ambppl.fit(small_counts, log_likelihood=np.False_, draws=5, chains=1)
    assert "log_likelihood" not in dropped.children


def test_a_frame_the_reader_cannot_guess_shows_the_readers_call():
    """A frame of counts whose ids are in a column of no known name is read as answers by
    default, and the reader asks for item=; fit takes no reader options, so its message
    shows the call that reads the frame first."""
    frame = pd.DataFrame({"name": ["a", "b"], "x": [1, 2], "y": [3, 0]})
    with pytest.raises(ValueError) as caught:
        ambppl.fit(frame, draws=5, chains=1)
    text = str(caught.value)
    assert text.startswith("item column 'task' is not in the data; the columns present are")
    assert "pass item=" not in text
    assert "fit(ambppl.read_annotations(data, item=<one of them>), ...)" in text
    assert "format='counts'" in text
    # the call it shows reads the frame
    counts = ambppl.read_annotations(frame, item="name", format="counts")
    assert ambppl.fit(counts, draws=5, chains=1).posterior.sizes["item"] == 2
    with pytest.raises(ValueError, match=r"fit\(ambppl.data.read_long\(data, item=<one of"):
        ambppl.fit(frame, "dawid_skene", method="map")


def test_n_nodes_is_bounded_up_front():
    """10^9 nodes ran out of memory inside scipy; a bound is refused before."""
    from ambppl.inference.modeling import MAX_QMC_NODES

    answers = _tiny_answers()
    with pytest.raises(
        ValueError, match=rf"^n_nodes must be a positive integer of at most {MAX_QMC_NODES} "
    ):
        get_model("dawid_skene").build(answers, n_nodes=10**9)
    with pytest.raises(ValueError, match=r"n_nodes must be a positive integer of at most"):
        ambppl.fit(answers, "dawid_skene", method="map", n_nodes=10**9)
    with pytest.raises(TypeError, match=r"^n_nodes must be a positive integer .* but got 2.5$"):
        ambppl.fit(answers, "dawid_skene", method="map", n_nodes=2.5)


def test_n_nodes_on_the_command_line(tmp_path, capsys):
    """--param n_nodes=2.5 is answered with --param, and a whole number (which --param reads
    as a float) is taken."""
    path = tmp_path / "answers.csv"
    _tiny_answers(frame=True).to_csv(path, index=False)
    argv = ["score", str(path), "--model", "dawid_skene", "--method", "map", "-q"]
    assert main([*argv, "--param", "n_nodes=2.5"]) != 0
    err = capsys.readouterr().err
    assert "--param n_nodes=... must be a positive integer" in err and "Traceback" not in err
    assert main([*argv, "--param", "n_nodes=64"]) == 0
    assert "error" not in capsys.readouterr().err


def _tiny_answers(frame: bool = False):
    rows = [(i, r, "xy"[(i + (r == "c")) % 2]) for i in range(1, 4) for r in ("a", "b", "c")]
    table = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return table if frame else ambppl.data.read_long(table)
