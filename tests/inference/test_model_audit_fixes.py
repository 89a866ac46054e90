"""Fixes of an audit of the models of answers and of hierarchical_dirichlet's empirical Bayes:
rater ids that print the same, answers without a rater id, one class besides can't-solve,
hyperpriors given to empirical Bayes, ``centred`` of the map route and the map route's
certainty on items answered only "can't solve"."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from _cli_helpers import command_error_line

import ambppl
from ambppl.data import read_long
from ambppl.inference.catalog import get_model
from ambppl.inference.modeling import answer_codes


def cant_solve_only_answers() -> pd.DataFrame:
    """160 simulated answers (40 items x 4 of 6 raters, classes c0 and c1, 10 % "cant"),
    plus items x1, x2 and x3 answered only "cant" (by 2, 2 and 3 raters): the data of the
    ``method="map"`` paragraph of the dawid_skene docstring."""
    rng = np.random.default_rng(0)
    classes = ["c0", "c1"]
    z = rng.integers(0, 2, 40)
    accuracy = rng.uniform(0.6, 0.9, 6)
    rows = []
    for i in range(40):
        for r in rng.choice(6, 4, replace=False):
            if rng.random() < 0.1:
                answer = "cant"
            elif rng.random() < accuracy[r]:
                answer = classes[z[i]]
            else:
                answer = classes[rng.choice([k for k in range(2) if k != z[i]])]
            rows.append((f"i{i}", f"r{r}", answer))
    rows += [("x1", "r0", "cant"), ("x1", "r1", "cant"), ("x2", "r2", "cant")]
    rows += [("x2", "r3", "cant"), ("x3", "r0", "cant"), ("x3", "r4", "cant")]
    rows += [("x3", "r5", "cant")]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def small_counts() -> xr.DataArray:
    values = np.array([[3, 1, 0], [1, 2, 1], [0, 4, 0], [2, 2, 0], [1, 1, 1]])
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(5), "category": ["a", "b", "c"]},
        attrs={"cant_solve": None},
    )


# -- rater ids that print the same, given to the model directly -------------------------


@pytest.mark.parametrize("role", ["rater", "item"])
def test_answer_codes_refuses_ids_that_print_the_same(role):
    # fit's readers refuse them first; a model's build given the table directly must too
    table = pd.DataFrame(
        {"item": [1, 1, 2, 2], "rater": ["a", "b", "a", "b"], "label": ["x", "y", "x", "y"]}
    )
    table[role] = np.array([1, "1", 2, 2], dtype=object)
    table["label"] = pd.Categorical(table["label"])
    table.attrs["cant_solve"] = None
    with pytest.raises(ValueError, match=f"{role} ids must print differently") as err:
        answer_codes(table, "dawid_skene")
    assert f"answers[{role!r}].astype(str)" in str(err.value)
    table[role] = table[role].astype(str)
    codes = answer_codes(table, "dawid_skene")
    assert len(codes[f"{role}_ids"]) == 2


def test_the_models_refuse_a_table_with_raters_that_print_the_same():
    table = pd.DataFrame(
        {"item": [1, 1, 2, 2], "rater": [1, "1", 1, "1"], "label": ["x", "y", "x", "y"]}
    )
    table["label"] = pd.Categorical(table["label"])
    table.attrs["cant_solve"] = None
    with pytest.raises(ValueError, match="rater ids must print differently"):
        get_model("dawid_skene").module.posterior_mode(table)


# -- answers without a rater id ------------------------------------------------------------


def missing_rater_csv(tmp_path: Path) -> Path:
    path = tmp_path / "missrater.csv"
    path.write_text("task,worker,label\n1,a,x\n1,,y\n2,a,x\n2,b,y\n", encoding="utf-8")
    return path


def test_some_answers_without_a_rater_id_are_named_not_the_column(tmp_path):
    answers = read_long(missing_rater_csv(tmp_path))
    with pytest.raises(ValueError, match="1 of 4 answers have no rater id") as err:
        ambppl.fit(answers, "dawid_skene", method="map")
    message = str(err.value)
    assert "(the first on item 1)" in message
    assert "fill in their rater ids or drop those rows" in message
    assert "name the rater column" not in message  # it was named: naming it is no fix


def test_no_rater_column_keeps_the_advice_to_name_it(tmp_path):
    answers = read_long(missing_rater_csv(tmp_path), rater=None)
    with pytest.raises(ValueError, match="all 4 answers have no rater id") as err:
        ambppl.fit(answers, "dawid_skene", method="map")
    assert "name the rater column with rater=" in str(err.value)


def test_the_command_names_the_rows_to_fill_in(tmp_path, capsys):
    path = missing_rater_csv(tmp_path)
    line = command_error_line(
        ["score", str(path), "-q", "--model", "dawid_skene", "--method", "map"], capsys
    )
    assert "1 of 4 answers have no rater id (the first on item 1)" in line
    assert "drop those rows from the file" in line and "--model hierarchical_dirichlet" in line
    assert "name the rater column" not in line


# -- one class besides can't-solve -----------------------------------------------------------


def one_class_csv(tmp_path: Path) -> Path:
    path = tmp_path / "onecls.csv"
    path.write_text("task,worker,label\n1,a,x\n1,b,?\n2,a,?\n2,b,x\n", encoding="utf-8")
    return path


def test_one_class_names_the_categories_to_declare(tmp_path):
    path = one_class_csv(tmp_path)
    with pytest.raises(ValueError, match="at least 2 categories besides can't-solve") as err:
        ambppl.fit(read_long(path, cant_solve="?"), "dawid_skene", method="map")
    message = str(err.value)
    assert "categories=['x', '<another>', '?'], cant_solve='?'" in message
    assert "'rater_effects'" in message
    # the fix it names works: a declared category nobody chose is a class
    answers = read_long(path, categories=["x", "y", "?"], cant_solve="?")
    result = ambppl.fit(answers, "dawid_skene", method="map")
    assert result["posterior"]["label_prob"].sizes["class"] == 2


def test_one_class_on_the_command_line(tmp_path, capsys):
    path = one_class_csv(tmp_path)
    argv = ["score", str(path), "-q", "--model", "dawid_skene", "--method", "map"]
    line = command_error_line([*argv, "--cant-solve", "?"], capsys)
    assert "Parquet file whose label column is a categorical" in line
    assert "--model rater_effects" in line


# -- hierarchical_dirichlet's empirical Bayes and its hyperprior -------------------------------


def test_empirical_bayes_refuses_a_hyperprior():
    with pytest.raises(ValueError, match="mu_prior and kappa_scale must be left out") as err:
        ambppl.fit(
            small_counts(),
            "hierarchical_dirichlet",
            method="empirical_bayes",
            mu_prior=100.0,
            kappa_scale=1e-6,
            draws=10,
            chains=1,
        )
    message = str(err.value)
    assert "method='empirical_bayes'" in message and "maximum marginal likelihood" in message
    assert "method='collapsed' or 'nuts'" in message
    with pytest.raises(ValueError, match=r"^kappa_scale must be left out"):
        ambppl.fit(
            small_counts(),
            "hierarchical_dirichlet",
            method="empirical_bayes",
            kappa_scale=2.0,
            draws=10,
            chains=1,
        )


def test_empirical_bayes_takes_the_defaults():
    # a fit's record holds the defaults, and leave-one-item-out refits with them
    plain = ambppl.fit(
        small_counts(),
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=10,
        chains=1,
        random_seed=1,
    )
    module = get_model("hierarchical_dirichlet").module
    recorded = module.empirical_bayes(small_counts(), mu_prior=[1, 1, 1], kappa_scale=1.0)
    assert float(plain["posterior"]["kappa"][0, 0]) == pytest.approx(recorded["kappa"])


def test_the_command_refuses_a_hyperprior_for_empirical_bayes(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    path.write_text("task,worker,label\n1,a,x\n1,b,y\n2,a,x\n2,b,x\n", encoding="utf-8")
    argv = ["score", str(path), "-q", "--model", "hierarchical_dirichlet"]
    line = command_error_line(
        [*argv, "--method", "empirical_bayes", "--param", "mu_prior=5"], capsys
    )
    assert "--param mu_prior=... must be left out with --method empirical_bayes" in line
    assert "--method collapsed or nuts" in line


# -- centred on the map route ----------------------------------------------------------------


@pytest.mark.parametrize("centred", [0, 0.0, "false"])
def test_map_refuses_a_centred_that_is_no_flag(centred):
    answers = read_long(cant_solve_only_answers(), cant_solve="cant")
    with pytest.raises(ValueError, match="centred must be True, False or None"):
        ambppl.fit(answers, "dawid_skene", method="map", centred=centred)


def test_map_takes_centred_false():
    answers = read_long(cant_solve_only_answers(), cant_solve="cant")
    result = ambppl.fit(answers, "dawid_skene", method="map", centred=False)
    assert '"centred": false' in result.attrs["parameters"]


# -- the map route on items answered only "can't solve" ------------------------------------


def test_the_docstring_warns_that_the_mode_overstates_certainty():
    doc = get_model("dawid_skene").module.__doc__
    map_section = doc[doc.index('``method="map"``: the same mode alone') :]
    map_section = " ".join(map_section.split())
    assert "the mode overstates the certainty of items whose few answers" in map_section
    assert "Use ``laplace`` or NUTS where ``label_prob`` matters" in map_section
    cant_solve = doc[doc.index("*Can't-solve is an answer, not a class.*") :]
    assert "overstates how certain such items' labels are" in " ".join(cant_solve.split())


@pytest.mark.slow
def test_the_mode_is_more_certain_than_laplace_on_cant_solve_only_items():
    # the docstring's figures: map .96, .94, .99 against laplace's .88, .85, .93 (200 draws)
    answers = read_long(cant_solve_only_answers(), cant_solve="cant")
    mode = ambppl.summarize(ambppl.fit(answers, "dawid_skene", method="map"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Laplace route's notes on a small design
        fit = ambppl.fit(answers, "dawid_skene", method="laplace", draws=200, random_seed=1)
    items = ["x1", "x2", "x3"]
    np.testing.assert_allclose(
        mode.loc[items, "label_prob"].to_numpy(), [0.962, 0.944, 0.990], atol=0.0015
    )
    # laplace's label_prob is the mean over independent draws: its Monte Carlo standard
    # error is sd / sqrt(200), and the mode must exceed it by more than 5 of them
    draws = fit["posterior"]["label_prob"].sel(item=items)
    labels = mode.loc[items, "label"].tolist()
    for item, label in zip(items, labels, strict=True):
        per_draw = draws.sel(item=item, **{"class": label}).values.ravel()
        mcse = per_draw.std(ddof=1) / np.sqrt(per_draw.size)
        prob = float(mode.loc[item, "label_prob"])
        assert prob - per_draw.mean() > 5 * mcse + 0.03, (item, prob, per_draw.mean(), mcse)


# -- a labelled prior given to a model file directly -----------------------------------------

#: small_counts' categories (a, b, c) labelled in another order, and the same values by hand.
BY_LABEL = {"c": 5.0, "a": 1.0, "b": 2.0}
IN_ORDER = [1.0, 2.0, 5.0]


@pytest.mark.parametrize(
    "labelled",
    [
        pd.Series(BY_LABEL),
        xr.DataArray(
            list(BY_LABEL.values()), dims="category", coords={"category": ["c", "a", "b"]}
        ),
    ],
    ids=["series", "dataarray"],
)
def test_the_model_files_read_a_labelled_prior_by_its_labels(labelled):
    """Called directly (not through fit, which aligned it), the model files read a Series or
    labelled DataArray prior by position: ``prior`` c=5, a=1, b=2 went in as a=5, b=1, c=2.
    Reference: the same prior written by hand in the counts' order."""
    counts = small_counts()
    flat = get_model("dirichlet_categorical").module
    learned = get_model("hierarchical_dirichlet").module
    assert flat.model(counts, prior=labelled)["prior"].get_value().tolist() == IN_ORDER
    # mu's Dirichlet concentration is the last input of its node, in both programs
    for build in (learned.model, learned.hyper_model):
        mu = build(counts, mu_prior=labelled)["mu"]
        assert mu.owner.inputs[-1].eval().tolist() == IN_ORDER
    by_hand = learned.empirical_bayes(counts, mu_prior=[1.0, 1.0, 1.0])
    # empirical Bayes takes only the default; a labelled default is read, not refused
    same = learned.empirical_bayes(counts, mu_prior=pd.Series({"c": 1.0, "b": 1.0, "a": 1.0}))
    assert float(same["kappa"]) == float(by_hand["kappa"])


def test_the_model_files_refuse_a_labelled_prior_they_cannot_align():
    counts = small_counts()
    flat = get_model("dirichlet_categorical").module
    learned = get_model("hierarchical_dirichlet").module
    other = pd.Series({"a": 1.0, "b": 1.0, "z": 1.0})
    with pytest.raises(ValueError, match=r"^prior must have the labels of counts .* has \['z'\]"):
        flat.model(counts, prior=other)
    with pytest.raises(ValueError, match=r"^mu_prior must have the labels of counts"):
        learned.hyper_model(counts, mu_prior=other)
    with pytest.raises(ValueError, match=r"^mu_prior must have the labels of counts"):
        learned.empirical_bayes(counts, mu_prior=other)
    # concentration() has no counts to read labels by: refused, not read by position
    with pytest.raises(ValueError, match=r"^prior must be read by position .* pandas Series"):
        flat.concentration(None, n_categories=3, prior=pd.Series(BY_LABEL))
    # by position, as before
    assert flat.concentration(None, n_categories=3, prior=IN_ORDER).tolist() == IN_ORDER
