"""rater_effects' integrated log likelihood refuses answers that are not those of the fit.

``with_integrated_log_likelihood(result, answers)`` keeps the fit's ``observed_data``, so
:func:`ambppl.compare`'s same-data check cannot see answers other than the fitted ones: the
function itself must compare them with ``result["observed_data"]["counts"]``, in the words of
:func:`ambppl.validation.check_fit` (:func:`ambppl.data.matrices.count_difference`).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.data.readers import read_annotations, read_long
from ambppl.inference.catalog import get_model
from ambppl.validation import check_fit

ANESTHESIA = ("anesthesia_ds1979", "anesthesia_long.csv")


@pytest.fixture(scope="module")
def module():
    return get_model("rater_effects").module


def crosstab(frame: pd.DataFrame, item: str, label: str) -> pd.DataFrame:
    """Items x labels counts of a long frame, counted here by pandas (not by ambppl)."""
    return pd.crosstab(frame[item], frame[label])


def items_that_differ(a: pd.DataFrame, b: pd.DataFrame) -> int:
    cats = sorted(set(a.columns) | set(b.columns))
    a = a.reindex(columns=cats, fill_value=0)
    b = b.reindex(index=a.index, columns=cats, fill_value=0)
    return int((a != b).any(axis=1).sum())


def synthetic_tree(rng, raw: pd.DataFrame, answers: pd.DataFrame, chains=2, draws=20):
    """A DataTree shaped like a rater_effects fit of ``answers``: a posterior of finite
    draws, ``observed_data`` counts (counted by pandas from ``raw``) and ``constant_data``
    positions of each answer's item and rater."""
    items = list(pd.unique(raw["task"]))
    raters = list(pd.unique(raw["worker"]))
    cats = list(answers["label"].cat.categories)
    k, n, r = len(cats), len(items), len(raters)

    def centred(x):
        return x - x.mean(axis=-1, keepdims=True)

    post = xr.Dataset(
        {
            "mu": (("chain", "draw", "category"), centred(rng.normal(size=(chains, draws, k)))),
            "sigma_item": (
                ("chain", "draw", "category"),
                rng.uniform(0.5, 1.5, size=(chains, draws, k)),
            ),
            "eta": (
                ("chain", "draw", "item", "category"),
                centred(rng.normal(size=(chains, draws, n, k))),
            ),
            "b": (
                ("chain", "draw", "rater", "category"),
                centred(0.3 * rng.normal(size=(chains, draws, r, k))),
            ),
        },
        coords={
            "chain": np.arange(chains),
            "draw": np.arange(draws),
            "item": items,
            "rater": raters,
            "category": cats,
        },
    )
    counts = crosstab(raw, "task", "label").reindex(index=items, columns=cats, fill_value=0)
    observed = xr.Dataset(
        {"counts": (("item", "category"), counts.to_numpy())},
        coords={"item": items, "category": cats},
    )
    constant = xr.Dataset(
        {
            "answer_item": ("answer", np.array([items.index(i) for i in raw["task"]])),
            "answer_rater": ("answer", np.array([raters.index(w) for w in raw["worker"]])),
        }
    )
    return xr.DataTree.from_dict(
        {"posterior": post, "observed_data": observed, "constant_data": constant}
    )


def synthetic_answers(rng, n_items=6, n_raters=4, per_item=5, k=3):
    cats = [f"c{j}" for j in range(k)]
    rows = [
        (f"t{i}", f"r{rng.integers(n_raters)}", cats[int(rng.integers(k))])
        for i in range(n_items)
        for _ in range(per_item)
    ]
    raw = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return raw, cats


def test_shuffled_labels_are_refused_by_the_fits_counts(module):
    rng = np.random.default_rng(20261207)
    raw, cats = synthetic_answers(rng)
    answers = read_long(raw, categories=cats)
    tree = synthetic_tree(rng, raw, answers)
    # the true answers are accepted, by both functions
    out = module.with_integrated_log_likelihood(tree, answers, n_nodes=16, max_draws=40)
    assert out["log_likelihood"]["counts"].shape == (2, 20, 6)
    module.integrated_log_likelihood(tree, answers, n_nodes=16, max_draws=40)

    bad = raw.copy()
    bad["label"] = bad["label"].sample(frac=1, random_state=0).values
    n_differ = items_that_differ(crosstab(raw, "task", "label"), crosstab(bad, "task", "label"))
    assert n_differ > 0  # the shuffle moved labels between items
    wrong = read_long(bad, categories=cats)
    expected = (
        r"answers must be the answers that result was fitted to, but their counts differ "
        rf"from result\['observed_data'\]\['counts'\] on {n_differ} of 6 items \(the first, "
        r".*rows in the same order\)"
    )
    with pytest.raises(ValueError, match=expected):
        module.with_integrated_log_likelihood(tree, wrong, n_nodes=16, max_draws=40)
    with pytest.raises(ValueError, match=expected):
        module.integrated_log_likelihood(tree, wrong, n_nodes=16, max_draws=40)


def test_fit_counts_of_other_items_are_named(module):
    rng = np.random.default_rng(20261208)
    raw, cats = synthetic_answers(rng, n_items=3)
    answers = read_long(raw, categories=cats)
    tree = synthetic_tree(rng, raw, answers)
    counts = tree["observed_data"]["counts"]
    tree["observed_data"] = xr.Dataset({"counts": counts.assign_coords(item=["t0", "t1", "other"])})
    with pytest.raises(
        ValueError, match=r"their 3 items and categories .* differ from the 3 items"
    ):
        module.with_integrated_log_likelihood(tree, answers, n_nodes=16, max_draws=40)


def test_anesthesia_shuffled_labels_are_refused_before_compare(module, shared_data):
    """The finding's case: a fit of the anesthesia answers, given the same answers with the
    label column shuffled, was turned into a tree that ambppl.compare ranked."""
    raw = pd.read_csv(shared_data.joinpath(*ANESTHESIA))
    columns = {"item": "item", "rater": "rater", "label": "rating"}
    answers = read_long(raw, **columns)
    with warnings.catch_warnings():
        # 200 draws: the convergence standard is not the point here
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        fit = ambppl.fit(
            answers,
            "rater_effects",
            draws=200,
            chains=2,
            random_seed=1,
            sample_kwargs={"tune": 200},
        )
    bad = raw.copy()
    bad["rating"] = bad["rating"].sample(frac=1, random_state=0).values
    wrong = read_long(bad, **columns)
    n_differ = items_that_differ(crosstab(raw, "item", "rating"), crosstab(bad, "item", "rating"))
    with pytest.raises(ValueError) as refused:
        module.with_integrated_log_likelihood(fit, wrong, n_nodes=32, max_draws=100)
    message = str(refused.value)
    assert message.startswith(
        "answers must be the answers that result was fitted to, but their counts differ from "
        f"result['observed_data']['counts'] on {n_differ} of 45 items"
    )
    # the difference is worded as check_fit words it (one shared helper)
    with pytest.raises(ValueError) as checked:
        check_fit(fit, answers=wrong)
    where = re.compile(r"counts differ from .*? items \(.*?\), categories \[.*?\]")
    assert where.search(message).group(0) == where.search(str(checked.value)).group(0)

    # the true answers are accepted, and compare ranks the tree beside a Dirichlet model
    tree = module.with_integrated_log_likelihood(fit, answers, n_nodes=32, max_draws=100)
    counts = read_annotations(raw, **columns)
    dirichlet = ambppl.fit(counts, draws=200, chains=2, random_seed=1)
    with warnings.catch_warnings():
        # PSIS of 100 kept draws flags some items: its reliability is not the point here
        warnings.filterwarnings("ignore", "Estimated shape parameter of Pareto", UserWarning)
        table = ambppl.compare({"rater_effects": tree, "dirichlet_categorical": dirichlet})
    assert set(table.index) == {"rater_effects", "dirichlet_categorical"}
    assert tree["observed_data"].identical(fit["observed_data"])


def test_answers_of_another_design_are_refused_naming_the_fix(module):
    """The size, id and row-order refusals named no fix; each now names the table the fit
    was made from."""
    rng = np.random.default_rng(20261209)
    raw, cats = synthetic_answers(rng, n_items=4)
    answers = read_long(raw, categories=cats)
    tree = synthetic_tree(rng, raw, answers)
    fix = r"; pass as answers the answers the fit was made from \(the table given to ambppl\.fit"
    more = pd.concat([raw, pd.DataFrame([("t9", "r0", "c0")], columns=raw.columns)])
    with pytest.raises(ValueError, match=rf"they have 5 items and the posterior has 4{fix}"):
        module.with_integrated_log_likelihood(tree, read_long(more, categories=cats))
    renamed = raw.assign(task=raw["task"].replace({"t0": "t0x"}))
    with pytest.raises(ValueError, match=rf"differ from the posterior's item coordinate{fix}"):
        module.with_integrated_log_likelihood(tree, read_long(renamed, categories=cats))
    # the same rows, two raters of one item swapped with their labels: the same counts and
    # ids, other rows (answer_rater)
    swapped = raw.copy()
    first = swapped.index[swapped["task"] == "t0"][:2]
    if swapped.loc[first[0], "worker"] == swapped.loc[first[1], "worker"]:
        swapped.loc[first[1], "worker"] = next(
            w for w in pd.unique(raw["worker"]) if w != swapped.loc[first[0], "worker"]
        )
    else:
        swapped.loc[first, "worker"] = swapped.loc[first[::-1], "worker"].values
    with pytest.raises(ValueError, match=rf"answer_item / answer_rater{fix}"):
        module.with_integrated_log_likelihood(tree, read_long(swapped, categories=cats))
