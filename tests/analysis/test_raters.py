"""``ambppl.summarize(result, level="rater")`` (ambppl/analysis/raters.py) on hand-made
posteriors."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.analysis.raters import RATER_COLUMNS, summarize_raters

CATS = ["a", "b", "c", "cs"]


def _tree(rng, *, chains=2, draws=200, n_items=6, n_raters=4, cs="cs", shift=None):
    b = rng.normal(0, 0.3, size=(chains, draws, n_raters, len(CATS)))
    if shift is not None:
        b[..., shift[0], 3] += shift[1]
    eta = rng.normal(0, 1, size=(chains, draws, n_items, len(CATS)))
    item = np.repeat(np.arange(n_items), n_raters)
    rater = np.tile(np.arange(n_raters), n_items)
    raters = [f"r{k}" for k in range(n_raters)]
    tree = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(
                {
                    "b": (("chain", "draw", "rater", "category"), b),
                    "eta": (("chain", "draw", "item", "category"), eta),
                },
                coords={"rater": raters, "category": CATS},
            ),
            "observed_data": xr.Dataset(
                {"counts": (("item", "category"), np.ones((n_items, len(CATS)), dtype=int))},
                coords={"category": CATS},
            ),
            "constant_data": xr.Dataset(
                {
                    "rater_answers": ("rater", np.bincount(rater)),
                    "answer_item": ("answer", item),
                    "answer_rater": ("answer", rater),
                },
                coords={"rater": raters},
            ),
        }
    )
    tree.attrs["cant_solve"] = cs
    return tree, b, eta, item, rater


def test_odds_ratio_is_the_typical_rater_comparison(rng):
    tree, b, eta, item, rater = _tree(rng)
    table = summarize_raters(tree)
    assert list(table.columns) == list(RATER_COLUMNS) and table.index.name == "rater"

    # Independent twin: odds of cs for rater r on item i, p = softmax(eta_i + b_r), against
    # the odds with b = 0; geometric mean over the rater's answers, then the posterior mean.
    def odds(logits):
        p = np.exp(logits - logits.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return p[..., 3] / (1 - p[..., 3])

    ratio = odds(eta[:, :, item] + b[:, :, rater]) / odds(eta[:, :, item])
    for r in range(b.shape[2]):
        per_draw = np.exp(np.log(ratio[:, :, rater == r]).mean(axis=-1))
        assert table["cant_solve_odds_ratio"].iloc[r] == pytest.approx(per_draw.mean(), rel=1e-10)
        assert table["p_overuse"].iloc[r] == pytest.approx((per_draw > 1).mean())
    assert (table["n_answers"] == 6).all()


def test_planted_over_user_is_flagged(rng):
    tree, *_ = _tree(rng, shift=(2, np.log(5.0)))
    table = ambppl.summarize(tree, level="rater")
    assert table["overuses_cant_solve"].tolist() == [False, False, True, False]
    assert table.loc["r2", "cant_solve_or_lower"] > 1
    assert table.loc["r2", "cant_solve_odds_ratio"] == pytest.approx(5.0, rel=0.15)
    # The probability rule: P(OR > 1) >= 0.5 flags every rater whose draws mostly exceed 1.
    lenient = ambppl.summarize(tree, level="rater", overuse=0.5)
    assert lenient["overuses_cant_solve"].tolist() == (lenient["p_overuse"] >= 0.5).tolist()


def test_label_bias(rng):
    tree, b, *_ = _tree(rng)
    post = tree["posterior"].to_dataset()
    b = post["b"].values.copy()
    b[..., 1, 1] += 2.0  # rater r1 favours label "b"
    post["b"] = post["b"].copy(data=b)
    tree["posterior"] = post
    table = summarize_raters(tree)
    assert table.loc["r1", "favoured_label"] == "b"
    assert table.loc["r1", "label_bias"] > table.drop(index="r1")["label_bias"].max()


def test_without_cant_solve_the_odds_columns_are_empty(rng):
    tree, *_ = _tree(rng, cs=None)
    table = summarize_raters(tree)
    assert table["cant_solve_odds_ratio"].isna().all()
    assert not table["overuses_cant_solve"].any()
    assert table["favoured_label"].isin(CATS).all()


def test_bad_input(rng):
    tree, *_ = _tree(rng)
    with pytest.raises(ValueError, match="overuse must be 'hdi' or a probability"):
        summarize_raters(tree, overuse="sometimes")
    with pytest.raises(ValueError, match="overuse must be 'hdi' or a probability"):
        summarize_raters(tree, overuse=1.5)
    with pytest.raises(ValueError, match="level must be one of"):
        ambppl.summarize(tree, level="answer")
    flat = ambppl.fit(
        ambppl.read_annotations(np.array([[3, 1, 1]]), cant_solve="2"), draws=100, random_seed=1
    )
    with pytest.raises(ValueError, match="needs a fit of a rater model"):
        ambppl.summarize(flat, level="rater")
    with pytest.raises(TypeError, match="DataTree"):
        summarize_raters({"b": 1})


@pytest.mark.parametrize(
    ("kwargs", "given"),
    [
        ({"measure": "foo"}, "measure='foo'"),
        ({"measure": "modified"}, "measure='modified'"),
        ({"threshold": 7}, "threshold=7"),
        ({"measure": "entropy", "threshold": 0.6}, "measure='entropy' and threshold=0.6"),
    ],
)
def test_rater_level_refuses_the_item_options(rng, kwargs, given):
    """level="rater" took measure="foo" and threshold=7 silently (level="item" refuses an
    overuse); they are refused now, as unused."""
    tree, *_ = _tree(rng)
    with pytest.raises(
        ValueError,
        match=rf"^measure and threshold choose what the item table's p_above is the probability "
        rf"of \(level='item'\), but got {given} with level='rater', whose table has no p_above; "
        r"drop (it|them), or pass level='item'$",
    ):
        ambppl.summarize(tree, level="rater", **kwargs)
    defaults = ambppl.summarize(tree, level="rater", measure="amb", threshold=0.4)
    assert defaults.equals(ambppl.summarize(tree, level="rater"))


def test_n_answers_of_raters_are_integers(rng):
    """n_answers was float64 at level="rater" though summarize's docstring says int64."""
    tree, *_, rater = _tree(rng)
    table = ambppl.summarize(tree, level="rater")
    assert table["n_answers"].dtype == np.int64
    assert table["n_answers"].tolist() == np.bincount(rater).tolist()
    # a latent-class fit (dawid_skene): accuracy per rater
    accuracy = rng.uniform(0.5, 0.9, size=(2, 50, 3))
    classes = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(
                {
                    "accuracy": (("chain", "draw", "rater"), accuracy),
                    "confusion": (
                        ("chain", "draw", "rater", "class", "category"),
                        np.full((2, 50, 3, 2, 2), 0.5),
                    ),
                },
                coords={"rater": ["u", "v", "w"], "class": ["a", "b"], "category": ["a", "b"]},
            ),
            "constant_data": xr.Dataset(
                {"rater_answers": ("rater", [4, 7, 2])}, coords={"rater": ["u", "v", "w"]}
            ),
        }
    )
    table = ambppl.summarize(classes, level="rater")
    assert table["n_answers"].dtype == np.int64 and table["n_answers"].tolist() == [4, 7, 2]
    np.testing.assert_allclose(table["accuracy"], accuracy.mean(axis=(0, 1)), rtol=1e-12)
    without = classes.copy()
    del without["constant_data"]
    assert ambppl.summarize(without, level="rater")["n_answers"].isna().all()
