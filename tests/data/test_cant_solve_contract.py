"""The can't-solve contract of labelled inputs: ``attrs["cant_solve"]`` wins everywhere.

Labelled counts (:func:`ambppl.read_annotations`) carry the can't-solve label in
``attrs["cant_solve"]`` (None: there is none), and xarray keeps it through arithmetic
(``counts + 1.0``, ``counts / counts.sum("category")``). Every array-level function with a
``cant_solve=`` keyword defaults to ``"auto"``: it reads that label, and only bare arrays
(and DataArrays without the key) take the last category. Checked for each public function:

(a) two-class labelled counts without can't-solve give what the bare array gives with
    ``cant_solve=None``;
(b) a can't-solve label in the first position gives what the bare array gives with
    ``cant_solve=0``;
(c) an explicit keyword that contradicts the attrs raises one ValueError naming both;
(d) bare arrays keep the last-category default.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.analysis._decision import decision_gain, expected_correct_decision
from ambppl.analysis.planning import answers_needed, expected_posterior_sd, expected_posterior_var
from ambppl.internal.checks import resolve_cant_solve
from ambppl.maths.estimators import expected_plugin, less_biased_bias, plugin_bias
from ambppl.maths.measures import evaluate
from ambppl.maths.moments import dirichlet_moments

#: Two classes, no can't-solve: the example of the bug report.
TWO = np.array([[5, 5], [10, 0], [0, 10]])

#: Three categories with the can't-solve answer ("?") in the first column.
FIRST = np.array([[1, 3, 0], [2, 0, 2], [0, 3, 1], [2, 1, 1]])
FIRST_LABELS = ["?", "a", "b"]


def _labelled_two() -> xr.DataArray:
    counts = ambppl.read_annotations(TWO)
    assert counts.attrs["cant_solve"] is None
    return counts


def _labelled_first() -> xr.DataArray:
    # read_annotations moves the can't-solve label last; arrays built (or reordered) by hand
    # keep it wherever it is
    return xr.DataArray(
        FIRST,
        dims=("item", "category"),
        coords={"item": [10, 11, 12, 13], "category": FIRST_LABELS},
        attrs={"cant_solve": "?"},
    )


def _input(kind: str, counts: xr.DataArray | np.ndarray) -> xr.DataArray | np.ndarray:
    """The function's input built from counts as a user would (attrs kept by xarray)."""
    if kind == "counts":
        return counts
    if kind == "alpha":
        return counts + 1.0
    if isinstance(counts, xr.DataArray):
        return counts / counts.sum("category")
    return counts / counts.sum(axis=-1, keepdims=True)


def _posterior(x, **kw):
    post = ambppl.ambiguity_posterior(x, **kw)
    return np.concatenate([np.ravel(post.mean()), np.ravel(post.cdf(0.5))])


def _approx(x, **kw):
    d = ambppl.approximate_distribution(x, **kw)
    return np.concatenate([d.mean, d.var, d.cdf(0.3), d.max_error])


#: name -> (input kind, call); every call returns values comparable with np.asarray.
CASES = {
    "amb": ("q", lambda x, **kw: ambppl.amb(x, **kw)),
    "amb_modified": ("q", lambda x, **kw: ambppl.amb_modified(x, **kw)),
    "amb_old": ("q", lambda x, **kw: ambppl.amb_old(x, **kw)),
    "normalized_entropy": ("q", lambda x, **kw: ambppl.normalized_entropy(x, **kw)),
    "evaluate": ("q", lambda x, **kw: evaluate("modified", x, **kw)),
    "dirichlet_mean": ("alpha", lambda x, **kw: ambppl.dirichlet_mean(x, **kw)),
    "dirichlet_mean_old": ("alpha", lambda x, **kw: ambppl.dirichlet_mean(x, "old", **kw)),
    "dirichlet_var": ("alpha", lambda x, **kw: ambppl.dirichlet_var(x, "modified", **kw)),
    "dirichlet_moments": ("alpha", lambda x, **kw: dirichlet_moments(x, **kw).central),
    "approximate_distribution": ("alpha", _approx),
    "ambiguity_posterior": ("alpha", _posterior),
    "estimate_plugin": ("counts", lambda x, **kw: ambppl.estimate(x, **kw)),
    "estimate_less_biased": ("counts", lambda x, **kw: ambppl.estimate(x, "less_biased", **kw)),
    "estimate_posterior_mean": (
        "counts",
        lambda x, **kw: ambppl.estimate(x, "posterior_mean", "modified", **kw),
    ),
    "plugin_bias": ("q", lambda x, **kw: plugin_bias(x, 7, **kw)),
    "expected_plugin": ("q", lambda x, **kw: expected_plugin(x, 7, **kw)),
    "less_biased_bias": ("q", lambda x, **kw: less_biased_bias(x, 3, measure="modified", **kw)),
    "expected_posterior_var": ("counts", lambda x, **kw: expected_posterior_var(x, 5, **kw)),
    "expected_posterior_sd": ("counts", lambda x, **kw: expected_posterior_sd(x, 5, **kw)),
    "answers_needed": ("counts", lambda x, **kw: answers_needed(x, target_sd=0.08, **kw)),
    "next_batch": ("counts", lambda x, **kw: ambppl.next_batch(x, 4, **kw)),
    "next_batch_decision": (
        "counts",
        lambda x, **kw: ambppl.next_batch(x, 4, objective="decision", **kw),
    ),
    "expected_correct_decision": (
        "counts",
        lambda x, **kw: expected_correct_decision(x, 3, **kw),
    ),
    "decision_gain": ("counts", lambda x, **kw: decision_gain(x, 3, **kw)),
}

#: Functions that need a can't-solve category (the exact law of a measure).
NEEDS_CANT_SOLVE = {"ambiguity_posterior"}

#: Functions whose value does not depend on the can't-solve position (only checked).
POSITION_FREE = {"normalized_entropy"}


def _values(name: str, data, **kw) -> np.ndarray:
    kind, call = CASES[name]
    return np.asarray(call(_input(kind, data), **kw), dtype=np.float64)


# ------------------------------------------------------------------- (a) no can't-solve
@pytest.mark.parametrize("name", sorted(set(CASES) - NEEDS_CANT_SOLVE))
def test_labelled_without_cant_solve_is_the_bare_array_with_none(name):
    labelled = _values(name, _labelled_two())
    np.testing.assert_array_equal(labelled, _values(name, TWO, cant_solve=None))
    if name not in POSITION_FREE:
        # and not the last-category reading (one proper class, or a refusal)
        try:
            last = _values(name, TWO, cant_solve=-1)
        except ValueError:
            return
        assert not np.array_equal(labelled, last)


def test_the_examples_of_the_report():
    counts = _labelled_two()
    np.testing.assert_array_equal(ambppl.next_batch(counts, 4), [0, 2, 2])
    np.testing.assert_array_equal(ambppl.next_batch(TWO, 4, cant_solve=None), [0, 2, 2])
    mean = ambppl.dirichlet_mean(counts + 1.0).values
    assert mean[1] == mean[2]  # [10, 0] and [0, 10] are equally (un)ambiguous
    np.testing.assert_array_equal(mean, ambppl.dirichlet_mean(TWO + 1.0, cant_solve=None))
    np.testing.assert_array_equal(ambppl.amb(counts / counts.sum("category")), [0.5, 0.0, 0.0])
    sd = ambppl.expected_posterior_sd(counts, 5)
    assert sd[1] == sd[2]
    # the labels travel: the DataArray results keep the item coordinate
    assert ambppl.amb(counts / counts.sum("category"))["item"].values.tolist() == [0, 1, 2]


def test_exact_law_without_cant_solve_is_refused_as_for_none():
    alpha = _labelled_two() + 1.0
    with pytest.raises(ValueError, match=r"cant_solve must be the position .* but got None"):
        ambppl.ambiguity_posterior(TWO + 1.0, cant_solve=None)
    with pytest.raises(
        ValueError,
        match=r"cant_solve must be the position .* but got alpha\.attrs\['cant_solve'\] None",
    ):
        ambppl.ambiguity_posterior(alpha)


# ------------------------------------------------------- (b) can't-solve in first position
@pytest.mark.parametrize("name", sorted(CASES))
def test_labelled_first_position_is_the_bare_array_with_zero(name):
    labelled = _values(name, _labelled_first())
    np.testing.assert_array_equal(labelled, _values(name, FIRST, cant_solve=0))
    # an explicit keyword that agrees with the attrs is fine
    np.testing.assert_array_equal(_values(name, _labelled_first(), cant_solve=0), labelled)
    np.testing.assert_array_equal(_values(name, _labelled_first(), cant_solve=-3), labelled)
    if name not in POSITION_FREE:
        assert not np.array_equal(labelled, _values(name, FIRST))  # not the last column


def test_first_position_values():
    """Spot values: item [1, 3, 0] with "?" first has q_cs = 1/4 and proper (3/4, 0), so
    amb = 1 - (9/16) / (3/4) = 1/4 (the last column as can't-solve would give 3/8)."""
    q = _labelled_first() / _labelled_first().sum("category")
    np.testing.assert_array_equal(ambppl.amb(q).values, [0.25, 0.5, 0.375, 0.75])
    np.testing.assert_array_equal(ambppl.amb(q.values, cant_solve=0), [0.25, 0.5, 0.375, 0.75])


@pytest.mark.parametrize("name", ["amb", "dirichlet_mean", "estimate_plugin"])
def test_the_category_dimension_is_found_by_name(name):
    """Functions with ``dim=`` read the label along that dimension, wherever it is."""
    kind, call = CASES[name]
    data = _input(kind, _labelled_first())
    flipped = data.transpose("category", "item")
    np.testing.assert_array_equal(np.asarray(call(flipped, dim="category")), np.asarray(call(data)))


# --------------------------------------------------------------- (c) contradicting keyword
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_contradicting_keyword_raises(name):
    first = _labelled_first()
    with pytest.raises(
        ValueError,
        match=r"cant_solve=-1 \(category 'b'\) contradicts \w+\.attrs\['cant_solve'\] = '\?' "
        r"\(position 0 along 'category'\); leave cant_solve out",
    ):
        _values(name, first, cant_solve=-1)
    with pytest.raises(ValueError, match=r"cant_solve=None .* contradicts .*attrs\['cant_solve'\]"):
        _values(name, first, cant_solve=None)
    with pytest.raises(
        ValueError,
        match=r"cant_solve=-1 \(category '1'\) contradicts \w+\.attrs\['cant_solve'\] = None "
        r"\(no can't-solve category along 'category'\)",
    ):
        _values(name, _labelled_two(), cant_solve=-1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_label_missing_from_the_categories_raises(name):
    broken = _labelled_first().assign_attrs(cant_solve="skip")
    with pytest.raises(
        ValueError,
        match=r"attrs\['cant_solve'\] must be one of the labels of its 'category' dimension "
        r"\['\?', 'a', 'b'\] or None, but got 'skip'",
    ):
        _values(name, broken)


@pytest.mark.parametrize("name", sorted(CASES))
def test_other_strings_are_refused(name):
    with pytest.raises(
        ValueError, match=r"cant_solve must be .* None .* or 'auto' .* but got 'last'"
    ) as info:
        _values(name, FIRST, cant_solve="last")
    assert isinstance(info.value, TypeError)  # as strings raised before "auto" existed


# -------------------------------------------------------------- (d) bare arrays: the last
@pytest.mark.parametrize("name", sorted(CASES))
def test_bare_arrays_take_the_last_category(name):
    np.testing.assert_array_equal(_values(name, FIRST), _values(name, FIRST, cant_solve=-1))
    np.testing.assert_array_equal(_values(name, FIRST), _values(name, FIRST, cant_solve="auto"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_dataarrays_without_the_key_take_the_last_category(name):
    plain = _labelled_first().copy()
    plain.attrs = {}
    np.testing.assert_array_equal(_values(name, plain), _values(name, FIRST, cant_solve=-1))
    # and an explicit keyword is then taken as given
    np.testing.assert_array_equal(
        _values(name, plain, cant_solve=0), _values(name, FIRST, cant_solve=0)
    )


def test_bare_default_values():
    """The documented convention, by value: last column can't-solve."""
    assert float(ambppl.amb(np.array([0.25, 0.25, 0.5]))) == 0.75
    assert float(ambppl.amb(np.array([0.25, 0.25, 0.5]), cant_solve=None)) == 0.625
    np.testing.assert_array_equal(ambppl.next_batch(TWO, 4), [4, 0, 0])


def test_resolver():
    first = _labelled_first()
    assert resolve_cant_solve(first, "auto") == 0
    assert resolve_cant_solve(first, -3) == 0
    assert resolve_cant_solve(_labelled_two(), "auto") is None
    assert resolve_cant_solve(_labelled_two(), None) is None
    assert resolve_cant_solve(FIRST, "auto") == -1
    assert resolve_cant_solve(FIRST, None) is None
    assert resolve_cant_solve(FIRST, 1) == 1
    assert resolve_cant_solve(first.transpose(), "auto", dim="category") == 0
    pt = pytest.importorskip("pytensor.tensor")
    assert resolve_cant_solve(pt.matrix("q", shape=(None, 3)), "auto") == -1
    with pytest.raises(ValueError, match=r"cant_solve=2 \(category 'b'\) contradicts counts"):
        resolve_cant_solve(first, 2, name="counts")
    with pytest.raises(TypeError, match=r"cant_solve must be an integer position"):
        resolve_cant_solve(first, 1.5)


def test_counts_of_a_saved_and_reloaded_fit_keep_their_setting(tmp_path):
    # netCDF cannot store an attribute that is None, so a saved fit's observed counts lose
    # attrs["cant_solve"] = None; the readers' marks (source, format) say it was None.
    result = ambppl.fit(ambppl.read_annotations(TWO), method="exact", draws=10, chains=1)
    result.to_netcdf(tmp_path / "fit.nc")
    counts = xr.open_datatree(tmp_path / "fit.nc")["observed_data"]["counts"].load()
    assert "cant_solve" not in counts.attrs and {"source", "format"} <= set(counts.attrs)
    q = counts / counts.sum("category")
    np.testing.assert_array_equal(ambppl.amb(q).values, ambppl.amb(q.values, cant_solve=None))
    assert resolve_cant_solve(counts, "auto") is None
    with pytest.raises(ValueError, match="cant_solve"):
        ambppl.amb(q, cant_solve=-1)


def test_table_functions_find_the_label_in_any_position():
    # plan and the report's overview once took the last column for the can't-solve one;
    # the same counts with "?" first and last must plan and count alike
    from ambppl.analysis.planning import plan
    from ambppl.report.writer import _overview

    first = _labelled_first()
    last = first.isel(category=[1, 2, 0])
    assert last.attrs["cant_solve"] == "?"
    np.testing.assert_array_equal(
        plan(first, 4).sort_index().to_numpy(), plan(last, 4).sort_index().to_numpy()
    )
    # the sd before new answers is expected_posterior_sd's with the can't-solve position
    sd_now = plan(first, 4).sort_index()["sd_now"].to_numpy()
    np.testing.assert_allclose(sd_now, expected_posterior_sd(FIRST, 0, cant_solve=0), rtol=1e-12)
    n_with = int((FIRST[:, 0] > 0).sum())  # items with a "?" answer: 3 of 4
    assert _overview(first)["items_with_cs"] == _overview(last)["items_with_cs"] == n_with == 3
    # and marks "?" as the can't-solve category wherever it sits (it marked the last: "b")
    for counts in (first, last, first.isel(category=[1, 0, 2])):
        marked = [c["label"] for c in _overview(counts)["categories"] if c["is_cs"]]
        assert marked == ["?"], counts["category"].values
    assert not any(c["is_cs"] for c in _overview(_labelled_two())["categories"])


def test_a_fits_counts_keep_no_cant_solve_in_memory_and_on_disk(tmp_path):
    # hand-built counts with attrs["cant_solve"] = None: the fit's observed counts lost the
    # attribute (netCDF has no None) and the array functions then took "no" for can't-solve
    # (plug-in amb 0.8 where it is 0.32)
    counts = xr.DataArray(
        np.array([[2, 3], [4, 1], [5, 0]]),
        dims=("item", "category"),
        coords={"item": [0, 1, 2], "category": ["yes", "no"]},
        attrs={"cant_solve": None},
    )
    result = ambppl.fit(counts, random_seed=1, draws=100, chains=1)
    path = tmp_path / "fit.nc"
    result.to_netcdf(path)
    for tree in (result, xr.open_datatree(path)):
        observed = tree["observed_data"]["counts"]
        assert resolve_cant_solve(observed, "auto") is None
        np.testing.assert_allclose(ambppl.estimate(observed), ambppl.estimate(counts))
        np.testing.assert_allclose(
            ambppl.estimate(observed), ambppl.estimate(counts.values, cant_solve=None)
        )
        tree.close()


def test_the_report_marks_the_labelled_cant_solve_column():
    # the category table said "b (can't solve)" and the item table shaded column b for
    # counts whose can't-solve label "?" comes first
    import re

    from ambppl.report import render_report

    page = render_report(ambppl.fit(_labelled_first(), random_seed=1))
    assert "? (can't solve)" in page.replace("&#39;", "'") and "b (can't solve)" not in page
    shaded = re.findall(r'<th class="cs">([^<]*)</th>', page)
    assert shaded == ["?"], shaded


def test_a_label_that_names_no_category_is_refused_at_the_edge():
    from ambppl.analysis.planning import plan

    bad = _labelled_first()
    bad.attrs["cant_solve"] = "x"
    for call in (lambda: plan(bad, 4), lambda: ambppl.score(bad), lambda: ambppl.fit(bad)):
        with pytest.raises(ValueError, match=r"attrs\['cant_solve'\] must be one of the "):
            call()


def _answers_table():
    """Answers of 12 items by 6 raters over cat / dog / eel and can't-solve "cant"."""
    import pandas as pd

    from ambppl.data import read_long

    rng = np.random.default_rng(4)
    rows = [
        (f"i{i}", f"r{r}", rng.choice(["cat", "dog", "eel", "cant"], p=[0.5, 0.2, 0.2, 0.1]))
        for i in range(12)
        for r in range(6)
    ]
    rows += [("i0", "r7", lab) for lab in ("cat", "dog", "eel", "cant")]  # every label occurs
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return read_long(frame, cant_solve="cant")


@pytest.mark.parametrize(
    "edit",
    [
        lambda lab: lab.cat.reorder_categories(["cant", "cat", "dog", "eel"]),
        lambda lab: lab.cat.add_categories(["fox"]),  # an unused category after can't-solve
    ],
    ids=["cant-solve-first", "category-added"],
)
def test_an_edited_answers_table_keeps_can_t_solve_last(edit):
    """An answers table whose categories no longer end with can't-solve: the model indexed
    its answer columns by the table's order while the counts put can't-solve last, so the
    summaries took another category for can't-solve (amb off by up to 0.38 for
    dawid_skene's q, a rater's can't-solve odds read from another category). The edge puts
    can't-solve last, as read_long does."""
    from ambppl.data.contract import as_answers

    answers = _answers_table()
    edited = answers.copy()
    edited["label"] = edit(edited["label"])
    edited.attrs = dict(answers.attrs)
    fixed, counts = as_answers(edited)
    assert list(fixed["label"].cat.categories)[-1] == "cant"
    assert list(counts["category"].values)[-1] == "cant"
    assert fixed["label"].astype(str).tolist() == answers["label"].astype(str).tolist()
    result = ambppl.fit(edited, "dawid_skene", method="map", var_names=["q"])
    q = result["posterior"]["q"].isel(chain=0, draw=0).transpose("item", "category")
    labels = list(q["category"].values)
    assert labels == list(result["observed_data"]["counts"]["category"].values)
    want = ambppl.amb(q.values, cant_solve=labels.index("cant"))
    got = ambppl.summarize(result).sort_index()["mean"]
    np.testing.assert_allclose(got.loc[list(q["item"].values)].to_numpy(), want, rtol=1e-12)


def test_an_answers_table_whose_can_t_solve_names_no_category_is_refused():
    from ambppl.data.contract import as_answers

    answers = _answers_table()
    answers.attrs["cant_solve"] = "skip"
    with pytest.raises(ValueError, match=r"answers.attrs\['cant_solve'\] must be one of the "):
        as_answers(answers)


# ------------------------------------------------- (e) labelled counts in any dimension order
#: The functions that read counts of items: a DataArray with dims ("category", "item") is
#: the same data as its transpose (they took the last axis, the items, as the categories).
ITEM_FUNCTIONS = [
    "expected_posterior_var",
    "expected_posterior_sd",
    "answers_needed",
    "next_batch",
    "next_batch_decision",
    "expected_correct_decision",
    "decision_gain",
]


@pytest.mark.parametrize("name", ITEM_FUNCTIONS)
@pytest.mark.parametrize("which", ["report", "first"])
def test_transposed_labelled_counts_are_read_by_the_category_name(name, which):
    if which == "report":  # the counts of the report: can't-solve label '2', item ids 0..3
        counts = ambppl.read_annotations(
            np.array([[0, 3, 1], [4, 0, 0], [1, 1, 1], [2, 2, 0]]), cant_solve=2
        )
        bare = dict(cant_solve=2)
    else:
        counts, bare = _labelled_first(), dict(cant_solve=0)
    flipped = counts.transpose("category", "item")
    want = _values(name, counts)
    assert want.shape == (counts.sizes["item"],)
    np.testing.assert_array_equal(_values(name, flipped), want)
    np.testing.assert_array_equal(_values(name, counts.values, **bare), want)
    # an explicit position is one along the categories, in either order
    np.testing.assert_array_equal(_values(name, flipped, **bare), want)


@pytest.mark.parametrize("name", ITEM_FUNCTIONS)
def test_transposed_counts_name_the_category_dimension_in_messages(name):
    broken = _labelled_first().transpose("category", "item").assign_attrs(cant_solve="cs")
    with pytest.raises(
        ValueError,
        match=r"attrs\['cant_solve'\] must be one of the labels of its 'category' dimension "
        r"\['\?', 'a', 'b'\] or None, but got 'cs'",
    ):
        _values(name, broken)


@pytest.mark.parametrize("name", ITEM_FUNCTIONS)
def test_two_unnamed_dimensions_keep_the_positional_reading(name):
    """Without a 'category' dimension a DataArray's last axis holds the categories."""
    plain = xr.DataArray(FIRST, dims=("row", "col"), attrs={"cant_solve": None})
    np.testing.assert_array_equal(_values(name, plain), _values(name, FIRST, cant_solve=None))
    plain.attrs["cant_solve"] = 2  # a label of the last dimension (positions 0..2 there)
    np.testing.assert_array_equal(_values(name, plain), _values(name, FIRST, cant_solve=-1))


def test_resolver_reads_the_category_dimension_by_name():
    first = _labelled_first()
    # the item ids 10..13 are not the labels: only the 'category' dimension holds them
    numbered = first.assign_coords(item=["?", "x", "y", "z"])
    assert resolve_cant_solve(numbered, "auto") == 0
    # a function that reads the last axis is told to put the categories there, not given a
    # position along the items
    with pytest.raises(
        ValueError,
        match=r"counts must have its categories on the last axis, but its 'category' "
        r"dimension is not last \(dims \('category', 'item'\)\); pass "
        r"counts.transpose\(\.\.\., 'category'\)",
    ):
        resolve_cant_solve(numbered.transpose(), "auto", name="counts")
    assert resolve_cant_solve(numbered.transpose(), "auto", dim="category") == 0
    # a DataArray without a 'category' dimension: its last one, as before
    plain = xr.DataArray(FIRST, dims=("row", "col"), coords={"col": FIRST_LABELS})
    assert resolve_cant_solve(plain.assign_attrs(cant_solve="?"), "auto") == 0


@pytest.mark.parametrize(
    "name", ["ambiguity_posterior", "approximate_distribution", "dirichlet_moments"]
)
def test_functions_of_the_last_axis_refuse_transposed_labelled_input_without_attrs(name):
    """A DataArray built by hand (no attrs['cant_solve']) with dims ("category", "item") had
    its items read as categories by the functions that read the last axis; they refuse it."""
    alpha = xr.DataArray(np.array([[3.0, 1.0, 1.0], [1.0, 4.0, 1.0]]), dims=("item", "category"))
    with pytest.raises(ValueError, match=r"alpha must have its categories on the last axis"):
        getattr(ambppl, name)(alpha.transpose("category", "item"))
    getattr(ambppl, name)(alpha)  # the same values, categories last: read
