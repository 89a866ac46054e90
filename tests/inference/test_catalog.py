"""Tests of ambppl.inference.catalog: lookup, info records, building models, the installed
wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from dataclasses import FrozenInstanceError
from pathlib import Path

import numpy as np
import pytest

import ambppl
from ambppl.inference.catalog import (
    ENV_VAR,
    INFO_KEYS,
    ModelEntry,
    catalog_dir,
    get_model,
    list_models,
)

ROOT = Path(__file__).resolve().parents[2]

TOY_MODEL = '''
"""Toy model for the catalog tests: returns its inputs instead of a pymc.Model."""


def model(counts, *, scale=2.0):
    return {"counts": counts, "scale": scale}
'''


def toy_info(name: str = "toy", **changes) -> dict:
    info = {
        "name": name,
        "description": "A toy entry.",
        "parameters": {"scale": {"default": 2.0, "description": "a number"}},
        "reference": "none",
        "methods": ["nuts"],
        "data": "counts",
    }
    info.update(changes)
    return info


def write_entry(folder: Path, name: str = "toy", source: str = TOY_MODEL, info=None) -> None:
    (folder / f"{name}.py").write_text(source)
    if info is not False:
        text = info if isinstance(info, str) else json.dumps(info or toy_info(name))
        (folder / f"{name}.json").write_text(text)


@pytest.fixture(autouse=True)
def _no_catalog_override(monkeypatch):
    """Tests of the default lookup must not see a user's $AMBPPL_MODELS."""
    monkeypatch.delenv(ENV_VAR, raising=False)


@pytest.fixture
def toy_catalog(tmp_path) -> Path:
    write_entry(tmp_path)
    write_entry(tmp_path, "other", info=toy_info("other", methods=["nuts", "exact"]))
    (tmp_path / "_helpers.py").write_text("X = 1\n")  # skipped: starts with "_"
    return tmp_path


# --------------------------------------------------------------------------- toy catalog


def test_list_models_from_a_folder(toy_catalog):
    table = list_models(toy_catalog)
    assert table.index.name == "name"
    assert table.index.tolist() == ["other", "toy"]
    assert list(table.columns) == ["description", "parameters", "reference", "data", "methods"]
    assert table.loc["toy", "parameters"] == "scale=2.0"
    assert table.loc["other", "methods"] == "nuts, exact"
    assert table.loc["toy", "methods"] == "nuts"
    assert table.loc["toy", "data"] == "counts"


def test_env_var_overrides_the_folder(toy_catalog, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(toy_catalog))
    assert catalog_dir() == toy_catalog
    assert list_models().index.tolist() == ["other", "toy"]


def test_get_model_and_build(toy_catalog):
    entry = get_model("toy", toy_catalog)
    assert isinstance(entry, ModelEntry)
    assert entry.name == "toy" and entry.path == toy_catalog / "toy.py"
    assert entry.info == toy_info()
    built = entry.build(np.array([[1, 2], [3, 0]]), scale=5.0)
    assert built["scale"] == 5.0
    # non-DataArray data of a "counts" model go through read_annotations
    assert built["counts"].dims == ("item", "category")
    assert built["counts"].values.tolist() == [[1, 2], [3, 0]]
    assert entry.build(built["counts"])["scale"] == 2.0
    with pytest.raises(FrozenInstanceError):
        entry.name = "x"


def test_build_rejects_unknown_parameters(toy_catalog):
    with pytest.raises(
        ValueError, match=r"model 'toy' must be given only its parameters \['scale'\]"
    ):
        get_model("toy", toy_catalog).build(np.ones((1, 2)), prior=1.0)


def test_unknown_name_lists_available(toy_catalog):
    with pytest.raises(
        ValueError,
        match=r"model must be one of \['other', 'toy'\] \(ambppl.list_models\(\)\), but got 'nope'",
    ):
        get_model("nope", toy_catalog)


def test_a_name_that_is_no_string_is_refused(toy_catalog):
    """A list reached the dict lookup and ended in "unhashable type: 'list'"."""
    for name, shown in ((["toy"], r"list \['toy'\]"), (None, "NoneType None"), (3, "int 3")):
        with pytest.raises(
            TypeError,
            match=rf"^model must be the name of one model, one of \['other', 'toy'\] "
            rf"\(ambppl.list_models\(\)\), but got {shown}$",
        ):
            get_model(name, toy_catalog)


def test_a_file_is_no_catalog_folder(tmp_path):
    (tmp_path / "models.txt").write_text("")
    with pytest.raises(ValueError, match=r"path must be a folder of models .* is a file"):
        list_models(tmp_path / "models.txt")


def test_missing_folder(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"path must be a folder of models.*does not exist"):
        list_models(tmp_path / "absent")
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "absent"))
    with pytest.raises(ValueError, match=rf"\${ENV_VAR} must be a folder of models"):
        list_models()


@pytest.mark.parametrize(
    ("info", "match"),
    [
        (False, r"model 'toy' must have an info record 'toy.json' next to 'toy.py'"),
        ("{not json", r"info record 'toy.json' must be valid JSON"),
        ("[1, 2]", r"info record 'toy.json' must be a JSON object, but got list"),
        (
            {k: v for k, v in toy_info().items() if k not in ("methods", "data")},
            r"must have the keys .*\['methods', 'data'\] are missing",
        ),
        (toy_info(methods=[]), r"must list its methods \(default first\) from \['exact'"),
        (toy_info(methods="nuts"), r"must list its methods .* but got 'nuts'"),
        (toy_info(methods=["nuts", "mcmc"]), r"methods .* but got \['nuts', 'mcmc'\]"),
        (toy_info(methods=["nuts", "nuts"]), r"without repeats, but got \['nuts', 'nuts'\]"),
        (toy_info(name="other"), r"must have name 'toy' \(its file name\), but got 'other'"),
        (toy_info(parameters={"scale": 2.0}), r'must map each parameter to \{"default"'),
        (toy_info(data="wide"), r"must have data 'counts' or 'long', but got 'wide'"),
        (toy_info(sampler="stan"), r"may name its default NUTS sampler from .* got sampler 'stan'"),
        (toy_info(limitation=""), r"may set limitation, a sentence .* but got ''"),
        (toy_info(slow="slow"), r"may set slow, a mapping .* but got 'slow'"),
        (toy_info(slow={"tau": 3}), r"may set slow, a mapping .* but got \{'tau': 3\}"),
    ],
)
def test_broken_info_records(tmp_path, info, match):
    write_entry(tmp_path, info=info)
    with pytest.raises(ValueError, match=match):
        list_models(tmp_path)


def test_model_file_without_model_function(tmp_path):
    write_entry(tmp_path, source="def other():\n    pass\n")
    entry = get_model("toy", tmp_path)
    with pytest.raises(ValueError, match=r"model file 'toy.py' must define a function model"):
        entry.build(np.ones((1, 2)))


ROUTE_MODEL = """
HYPERPARAMETERS = ("tau",)


def model(counts, **params):
    return None


def concentration(hyper, *, n_categories):
    return None
"""


@pytest.mark.parametrize(
    ("methods", "source", "match"),
    [
        (
            ["collapsed"],
            ROUTE_MODEL,
            r"lists method 'collapsed', which needs the functions "
            r"\['hyper_model', 'concentration'\], but \['hyper_model'\] are missing",
        ),
        (["empirical_bayes"], ROUTE_MODEL, r"\['empirical_bayes'\] are missing"),
        (
            ["exact"],
            ROUTE_MODEL,
            r"lists method 'exact', which needs a fixed prior, but declares "
            r"the hyperparameters \['tau'\]",
        ),
        (["nuts"], ROUTE_MODEL.replace('("tau",)', '"tau"'), r"HYPERPARAMETERS as a tuple"),
    ],
)
def test_model_file_must_provide_its_routes(tmp_path, methods, source, match):
    write_entry(tmp_path, source=source, info=toy_info(methods=methods))
    with pytest.raises(ValueError, match=match):
        _ = get_model("toy", tmp_path).module


def test_entry_properties(toy_catalog):
    entry = get_model("toy", toy_catalog)
    assert entry.defaults == {"scale": 2.0}
    assert entry.hyperparameters == ()
    real = get_model("hierarchical_dirichlet")
    assert real.hyperparameters == ("mu", "kappa")
    assert real.defaults == {"mu_prior": 1.0, "kappa_scale": 1.0}


def test_info_keys_constant():
    assert INFO_KEYS == ("name", "description", "parameters", "reference", "methods", "data")


# --------------------------------------------------------------------------- real catalog


def test_real_catalog_lists_dirichlet_categorical():
    assert catalog_dir() == ROOT / "models"  # source checkout (no ambppl/_models here)
    table = ambppl.list_models()
    row = table.loc["dirichlet_categorical"]
    assert row["methods"] == "exact, nuts"
    assert row["parameters"] == "prior=1.0"
    assert table.loc["hierarchical_dirichlet", "methods"] == "collapsed, empirical_bayes, nuts"
    entry = ambppl.get_model("dirichlet_categorical")
    assert set(INFO_KEYS) <= set(entry.info)
    assert entry.info["data"] == "counts"


def test_dirichlet_categorical_prior_follows_the_counts_category_order():
    """A prior vector applies in the counts' own category order, which the info record
    says (it said "can't-solve last"): counts made by hand with can't-solve first give it
    the first entry."""
    import xarray as xr

    text = ambppl.get_model("dirichlet_categorical").info["parameters"]["prior"]["description"]
    assert "in the counts' category order" in text and "(can't-solve last)" not in text
    counts = xr.DataArray(
        np.array([[1, 3, 0], [0, 2, 2]]),
        dims=("item", "category"),
        coords={"item": ["a", "b"], "category": ["cs", "x", "y"]},
        attrs={"cant_solve": "cs"},
    )
    result = ambppl.fit(counts, prior=[0.5, 1.0, 1.0], draws=4000, chains=1, random_seed=11)
    assert result.attrs["prior"] == [0.5, 1.0, 1.0]
    q = result.posterior["q"].sel(item="a").values.reshape(-1, 3)
    # item a: Dirichlet(0.5 + 1, 1 + 3, 1 + 0), mean (1.5, 4, 1) / 6.5; 5 Monte Carlo
    # standard errors (sd / sqrt(4000), sd of the Dirichlet's components) either side
    alpha = np.array([1.5, 4.0, 1.0])
    mean = alpha / alpha.sum()
    sd = np.sqrt(mean * (1 - mean) / (alpha.sum() + 1))
    assert np.all(np.abs(q.mean(axis=0) - mean) < 5 * sd / np.sqrt(len(q)))


@pytest.mark.slow
def test_real_model_builds_with_the_count_coords():
    counts = ambppl.read_annotations(
        ambppl.data.readers.example_path("weather_sentiment"), cant_solve="I can't tell"
    )
    model = ambppl.get_model("dirichlet_categorical").build(counts, prior=0.5)
    assert {"q", "counts", "amb", "amb_modified", "amb_old", "entropy"} <= set(model.named_vars)
    assert list(model.coords["item"]) == counts["item"].values.tolist()
    assert list(model.coords["category"]) == counts["category"].values.tolist()
    observed = model.rvs_to_values[model["counts"]]
    np.testing.assert_array_equal(observed.data, counts.values)


# --------------------------------------------------------------------------- installed wheel

WHEEL_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import ambppl
    from ambppl.inference.catalog import catalog_dir
    from ambppl.data.readers import example_path
    from ambppl.inference.fitting import fit

    counts = ambppl.read_annotations(example_path("weather_sentiment"), cant_solve="I can't tell")
    model = ambppl.get_model("dirichlet_categorical").build(counts)
    result = fit(counts, method="exact", draws=50, chains=2, random_seed=1)
    print(json.dumps({
        "ambppl": ambppl.__file__,
        "catalog": str(catalog_dir()),
        "example": str(example_path("weather_sentiment")),
        "models": ambppl.list_models().index.tolist(),
        "vars": sorted(model.named_vars),
        "method": result.attrs.get("method", result["posterior"].attrs.get("method")),
        "amb_shape": list(result["posterior"]["amb"].shape),
    }))
    """
)


@pytest.mark.slow
def test_catalog_and_example_from_installed_wheel(tmp_path):
    """Build the wheel, install it outside the checkout and use it from a fresh process."""
    dist, target, work = tmp_path / "dist", tmp_path / "site", tmp_path / "work"
    work.mkdir()
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("ambppl-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "ambppl/_models/dirichlet_categorical.py" in names
    assert "ambppl/_models/dirichlet_categorical.json" in names
    assert "ambppl/_models/hierarchical_dirichlet.py" in names
    assert "ambppl/examples/weather_sentiment.csv" in names
    assert "ambppl/examples/README.md" in names
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PYTHONPATH"] = str(target)  # ahead of the editable install's path entry
    done = subprocess.run(
        [sys.executable, "-c", WHEEL_SCRIPT],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    package = target / "ambppl"
    assert Path(got["ambppl"]).parent == package
    assert Path(got["catalog"]) == package / "_models"
    assert Path(got["example"]) == package / "examples" / "weather_sentiment.csv"
    assert {"dirichlet_categorical", "hierarchical_dirichlet"} <= set(got["models"])
    assert {"q", "counts", "amb"} <= set(got["vars"])
    assert got["method"] == "exact"
    assert got["amb_shape"] == [2, 50, 200]
