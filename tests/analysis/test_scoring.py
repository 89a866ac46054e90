"""``ambppl.score``: the one per-item table. Conjugate models from distinct count vectors,
without per-item draws; every other model and method through ``fit`` and ``summarize``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
import ambppl.analysis.distinct as distinct_module
import ambppl.analysis.scoring as scoring
from ambppl.analysis.distinct import draws_needed
from ambppl.analysis.scoring import SCORE_COLUMNS
from ambppl.analysis.summary import COLUMNS
from ambppl.data import read_in_chunks


def _counts(values: np.ndarray, categories=("yes", "no", "cs")) -> xr.DataArray:
    return xr.DataArray(
        np.asarray(values),
        dims=("item", "category"),
        coords={"item": [f"i{k}" for k in range(len(values))], "category": list(categories)},
        attrs={"cant_solve": categories[-1]},
    )


@pytest.fixture(scope="module")
def three_class():
    # 60 items over 6 distinct count vectors (two proper classes + can't solve: the exact
    # two-class law of ambppl.ambiguity_posterior is an independent reference)
    rng = np.random.default_rng(11)
    distinct = np.array([[5, 0, 0], [2, 2, 1], [4, 3, 1], [0, 0, 3], [9, 1, 0], [3, 3, 3]])
    pick = rng.integers(0, len(distinct), size=60)
    pick[: len(distinct)] = np.arange(len(distinct))  # every vector occurs
    return _counts(distinct[pick]), distinct, pick


@pytest.fixture(scope="module")
def three_table(three_class):
    counts, _, _ = three_class
    return ambppl.score(counts, random_seed=5)


def test_layout_integers_and_shared_rows(three_table, three_class):
    counts, distinct, pick = three_class
    assert list(three_table.columns) == list(SCORE_COLUMNS)
    assert three_table.index.name == "item"
    assert three_table.index.tolist() == counts["item"].values.tolist()
    assert three_table["n_answers"].dtype == np.int64 and three_table["draws"].dtype == np.int64
    np.testing.assert_array_equal(three_table["n_answers"], distinct[pick].sum(axis=1))
    assert three_table.attrs["n_distinct"] == len(distinct)
    assert three_table.attrs["prior"] == [1.0, 1.0, 1.0]
    # items with equal counts share one row of statistics
    for k in range(len(distinct)):
        rows = three_table[pick == k]
        assert (rows.nunique(dropna=False) <= 1).all()


def test_mean_and_sd_are_the_closed_forms(three_table, three_class):
    _, distinct, pick = three_class
    first = three_table.iloc[np.argmax(pick == 0)]
    # E[amb] under Dirichlet(6, 1, 1) is 5/16 (paper eq. expr_amb_final, worked by hand)
    assert first["mean"] == pytest.approx(5 / 16, rel=1e-12)
    assert first["mean_mcse"] == 0 and first["sd_mcse"] == 0
    # against the exact two-class law (tanh-sinh quadrature, an independent route)
    post = ambppl.ambiguity_posterior(distinct + 1.0)
    rows = [np.argmax(pick == k) for k in range(len(distinct))]
    np.testing.assert_allclose(three_table["mean"].to_numpy()[rows], post.mean(), rtol=1e-9)
    np.testing.assert_allclose(three_table["sd"].to_numpy()[rows], post.std(), rtol=1e-9)


def test_p_above_meets_the_mcse_bound_and_matches_the_exact_law(three_table, three_class):
    _, distinct, pick = three_class
    assert (three_table["p_above_mcse"] <= 0.005).all()
    rows = [np.argmax(pick == k) for k in range(len(distinct))]
    table = three_table.iloc[rows]
    exact = ambppl.ambiguity_posterior(distinct + 1.0).sf(0.4)  # exact two-class law
    se = np.sqrt(exact * (1 - exact) / table["draws"].to_numpy())  # binomial sd of the estimate
    assert np.all(np.abs(table["p_above"].to_numpy() - exact) <= 4.5 * se + 1e-12)
    # the draws per vector follow p (1 - p) / mcse^2 (pilot widened towards 1/2)
    assert table["draws"].min() >= 1000 and table["draws"].max() <= 10_000


def test_hdi_matches_the_exact_law_within_its_mcse(three_class):
    counts, distinct, pick = three_class
    table = ambppl.score(counts, random_seed=6, hdi_prob=0.9)
    rows = [np.argmax(pick == k) for k in (1, 2, 5)]
    lo, hi = ambppl.ambiguity_posterior(distinct[[1, 2, 5]] + 1.0).hdi(0.9)  # root finding
    got = table.iloc[rows]
    assert np.all(np.abs(got["hdi_lower"].to_numpy() - lo) <= 5 * got["hdi_lower_mcse"] + 2e-3)
    assert np.all(np.abs(got["hdi_upper"].to_numpy() - hi) <= 5 * got["hdi_upper_mcse"] + 2e-3)
    assert (got["hdi_lower_mcse"] > 0).all() and (got["hdi_upper_mcse"] < 0.02).all()


def test_p_above_mcse_is_the_spread_over_seeds():
    # one count vector scored with 40 seeds: the sd of p_above across seeds agrees with the
    # reported MCSE (chi-square bounds for 40 samples: sd ratio in [0.7, 1.35] at ~99.9 %)
    counts = _counts(np.array([[4, 3, 1]]))
    tables = [ambppl.score(counts, random_seed=s) for s in range(40)]
    p = np.array([t["p_above"].iloc[0] for t in tables])
    reported = np.array([t["p_above_mcse"].iloc[0] for t in tables])
    ratio = p.std(ddof=1) / np.sqrt(np.mean(reported**2))
    assert 0.7 <= ratio <= 1.35


@pytest.mark.parametrize(
    "values",
    [
        [[1, 18, 1, 0]],  # a near-consensus item: the HDI's ends are both interior
        [[3, 2, 1, 0]],  # a contested one
    ],
)
def test_hdi_mcse_is_the_spread_over_seeds(values):
    # the ends of the shortest interval move at the cube-root rate (their rank is estimated
    # too): the quantile's order-statistic error understated their spread ~2.4x. The sd of
    # each end across 40 seeds agrees with the reported MCSE (chi-square bounds for 40
    # samples, sd ratio in [0.7, 1.35] at ~99.9 %; the MCSE is itself an estimate, hence the
    # root mean square)
    counts = _counts(np.array(values), categories=("a", "b", "c", "cs"))
    tables = [ambppl.score(counts, random_seed=s, approximate=False) for s in range(40)]
    assert all(t["draws"].iloc[0] >= 1000 for t in tables)
    for end in ("hdi_lower", "hdi_upper"):
        got = np.array([t[end].iloc[0] for t in tables])
        reported = np.array([t[f"{end}_mcse"].iloc[0] for t in tables])
        ratio = got.std(ddof=1) / np.sqrt(np.mean(reported**2))
        assert 0.7 <= ratio <= 1.35, (end, ratio)


def test_entropy_sd_comes_from_draws_with_its_mcse():
    counts = _counts(np.array([[3, 1, 1], [1, 1, 1]]))
    table = ambppl.score(counts, measure="entropy", random_seed=2)
    assert np.isnan(table["exact_sd"]).all() and (table["sd_mcse"] > 0).all()
    # reference: 10^6 scipy Dirichlet draws (an independent sampler); its own error is tiny
    ref = ambppl.normalized_entropy(
        np.random.default_rng(3).dirichlet([4.0, 2.0, 2.0], size=10**6)
    ).std()
    assert abs(table["sd"].iloc[0] - ref) <= 5 * table["sd_mcse"].iloc[0] + 5e-4
    assert table["mean_mcse"].iloc[0] == 0  # the mean of the entropy has a closed form


@pytest.mark.parametrize("p", [0.0, 0.001, 0.05, 0.3, 0.5, 0.8, 0.999, 1.0])
def test_draws_needed_meets_the_bound_for_the_pilot_value(p):
    need = int(draws_needed(np.array([p]), 1000, 0.005)[0])
    assert 1 <= need <= 10_000
    assert math.sqrt(p * (1 - p) / need) <= 0.005 + 1e-15


def test_same_seed_same_table_whatever_the_threads(three_class, monkeypatch):
    counts, _, _ = three_class
    one = ambppl.score(counts, random_seed=9)
    monkeypatch.setattr(distinct_module, "usable_cpus", lambda: 1)  # the name the scorer calls
    pd.testing.assert_frame_equal(ambppl.score(counts, random_seed=9), one)
    assert not ambppl.score(counts, random_seed=10).equals(one)


def test_empirical_bayes_uses_the_estimated_prior(three_class):
    counts, _, _ = three_class
    table = ambppl.score(counts, "hierarchical_dirichlet", method="empirical_bayes", random_seed=1)
    result = ambppl.fit(
        counts,
        "hierarchical_dirichlet",
        method="empirical_bayes",
        draws=10,
        chains=1,
        random_seed=1,
    )
    np.testing.assert_allclose(table.attrs["prior"], result.attrs["prior"], rtol=1e-12)
    assert table.attrs["method"] == "empirical_bayes"


def test_reads_annotations_like_fit():
    frame = pd.DataFrame({"task": ["a", "a", "b", "b", "b"], "label": ["x", "y", "x", "x", "cs"]})
    frame["worker"] = ["w1", "w2", "w1", "w2", "w3"]
    table = ambppl.score(ambppl.read_annotations(frame, cant_solve="cs"), prior=0.5, random_seed=1)
    assert table.index.tolist() == ["a", "b"] and table.attrs["prior"] == [0.5, 0.5, 0.5]
    assert table["n_answers"].tolist() == [2, 3]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"model": "rater_effects"}, TypeError, "counts hold no rater ids"),
        ({"method": "gibbs"}, ValueError, "method must be one of"),
        ({"model": "no_such_model"}, ValueError, "no_such_model"),
        ({"mcse": 0}, ValueError, "mcse"),
        ({"mcse": 0.6}, ValueError, "mcse must be below 0.5"),
        ({"threshold": 1.5}, ValueError, "threshold"),
        ({"measure": "gini"}, ValueError, "measure"),
        ({"random_seed": "seven"}, TypeError, "random_seed"),
        ({"unused": "warn"}, ValueError, "unused must be one of 'raise', 'ignore'"),
    ],
)
def test_bad_arguments(kwargs, error, match, three_class):
    counts, _, _ = three_class
    with pytest.raises(error, match=match):
        ambppl.score(counts, **kwargs)


# ------------------------------------------------------------------------------------------
# out of core: dask-backed counts, zarr stores and Parquet files read in chunks


@pytest.fixture(scope="module")
def big_counts():
    rng = np.random.default_rng(21)
    values = rng.multinomial(8, rng.dirichlet([1.0, 1.0, 0.5], size=3000))
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(3000) * 3, "category": ["x", "y", "cs"]},
        attrs={"cant_solve": "cs"},
        name="counts",
    )


def test_dask_backed_counts_give_the_same_table_lazily(big_counts):
    import dask.dataframe as dd

    eager = ambppl.score(big_counts, random_seed=4)
    lazy = ambppl.score(big_counts.chunk({"item": 700}), random_seed=4)
    assert isinstance(lazy, scoring.LazyScore) and isinstance(lazy.table, dd.DataFrame)
    assert lazy.table.npartitions == 5  # one per chunk of items
    assert lazy.attrs["n_items"] == 3000 and lazy.attrs["n_distinct"] == eager.attrs["n_distinct"]
    # the distinct vectors come out in numpy.unique's order, so the seed gives equal draws
    pd.testing.assert_frame_equal(lazy.compute(), eager)


def test_zarr_and_parquet_read_in_chunks(big_counts, tmp_path):
    eager = ambppl.score(big_counts, random_seed=4)
    big_counts.chunk({"item": 1000}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    frame = pd.DataFrame(big_counts.values.astype(np.uint8), columns=["x", "y", "cs"])
    frame.insert(0, "item", big_counts["item"].values)
    frame.to_parquet(tmp_path / "c.parquet", row_group_size=500)
    from_zarr = ambppl.score(read_in_chunks(tmp_path / "c.zarr", chunk_items=800), random_seed=4)
    assert from_zarr.table.npartitions == 3  # the store's own chunks of 1000 items
    pd.testing.assert_frame_equal(from_zarr.compute(), eager, check_names=False)
    from_parquet = ambppl.score(
        read_in_chunks(tmp_path / "c.parquet", chunk_items=800, cant_solve="cs"), random_seed=4
    )
    assert from_parquet.table.npartitions == 4  # chunks of 800 items across row groups of 500
    pd.testing.assert_frame_equal(from_parquet.compute(), eager, check_names=False)
    from_parquet.to_parquet(tmp_path / "out.parquet")
    written = pd.read_parquet(tmp_path / "out.parquet")
    np.testing.assert_array_equal(written.index, big_counts["item"].values)
    np.testing.assert_array_equal(written["p_above"], eager["p_above"])


def test_lazy_route_refuses_what_it_cannot_do(big_counts, tmp_path):
    chunked = big_counts.chunk({"item": 1000})
    with pytest.raises(ValueError, match=r"empirical_bayes.* method='exact'"):
        ambppl.score(chunked, "hierarchical_dirichlet", method="empirical_bayes")
    with pytest.raises(ValueError, match=r"chunk_items reads .* must be its path"):
        read_in_chunks(big_counts.values, chunk_items=10)
    pd.DataFrame({"task": ["a"], "label": ["x"]}).to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(ValueError, match="zarr store or a Parquet file"):
        read_in_chunks(tmp_path / "a.csv", chunk_items=10)
    with pytest.raises(ValueError, match="chunk_items must be"):
        read_in_chunks(tmp_path / "a.csv", chunk_items=0)
    # labelled counts are not renamed by position (as read_annotations refuses it in memory)
    with pytest.raises(ValueError, match=r"labels \['x', 'y', 'cs'\] occur in the data but"):
        ambppl.score(chunked, categories=["a", "b"])
    empty = big_counts.copy(data=np.where(np.arange(3000)[:, None] == 5, 0, big_counts.values))
    with pytest.raises(ValueError, match="1 item\\(s\\) \\[15\\] have none"):
        ambppl.score(empty.chunk({"item": 1000}))


def test_unique_rows_merge_and_keys_against_numpy():
    from ambppl.analysis.lazy_score import Lookup, merge_unique, radix, unique_rows

    rng = np.random.default_rng(8)
    blocks = [rng.integers(0, 4, size=(500, 4)) for _ in range(3)]
    rows, freq = merge_unique(*[unique_rows(b) for b in blocks])
    ref_rows, ref_freq = np.unique(np.concatenate(blocks), axis=0, return_counts=True)
    order = np.lexsort(rows.T[::-1])
    np.testing.assert_array_equal(rows[order], ref_rows)
    np.testing.assert_array_equal(freq[order], ref_freq)
    assert radix(np.array([2**32, 2**32])) is None  # 2^64 keys do not fit an int64
    huge = np.array([[2**40, 1], [0, 2**40], [2**40, 1]])
    h_rows, h_freq = unique_rows(huge)  # the row-wise fallback
    assert h_rows.tolist() == [[0, 2**40], [2**40, 1]] and h_freq.tolist() == [1, 2]
    for distinct in (ref_rows, h_rows):  # keys, and the MultiIndex fallback
        lookup = Lookup(distinct, {})
        sample = distinct[rng.integers(0, len(distinct), size=50)]
        np.testing.assert_array_equal(distinct[lookup.rows(sample)], sample)


def test_on_a_local_dask_cluster(big_counts):
    # the same code on a dask.distributed cluster of 2 worker processes
    distributed = pytest.importorskip("distributed")
    eager = ambppl.score(big_counts, random_seed=4)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        lazy = ambppl.score(big_counts.chunk({"item": 1000}), random_seed=4)
        got = lazy.compute()
        assert len(client.scheduler_info()["workers"]) == 2
    pd.testing.assert_frame_equal(got, eager)


def test_trusted_rows_come_from_the_approximation_without_draws():
    # concentrated posteriors away from a tie: the accuracy map bounds the CDF error of the
    # moment-matched law below mcse there; the reference is the exact two-class law
    counts = _counts(np.array([[300, 100, 20], [400, 60, 10], [3, 2, 1]]))
    table = ambppl.score(counts, random_seed=1, threshold=0.3, hdi_prob=0.9)
    approximated = table["draws"].to_numpy() == 0
    assert approximated.tolist() == [True, True, False]  # the small one is sampled
    err = table["approx_error"].to_numpy()
    assert np.all((err[approximated] > 0) & (err[approximated] <= 0.005))
    assert err[~approximated].tolist() == [0.0]
    post = ambppl.ambiguity_posterior(counts.values + 1.0)
    exact_p = post.sf(0.3)
    assert np.all(np.abs(table["p_above"].to_numpy() - exact_p)[approximated] <= err[approximated])
    lo, hi = post.hdi(0.9)
    # an HDI end moves by at most (CDF error) / (density there): 2 x 0.005 / pdf
    for got, ref in ((table["hdi_lower"].to_numpy(), lo), (table["hdi_upper"].to_numpy(), hi)):
        slack = 2 * err / post.pdf(ref)
        assert np.all(np.abs(got - ref)[approximated] <= slack[approximated])
    assert (table.loc[approximated, ["p_above_mcse", "hdi_lower_mcse"]] == 0).all().all()
    sampled = ambppl.score(counts, random_seed=1, threshold=0.3, approximate=False)
    assert (sampled["draws"] > 0).all() and (sampled["approx_error"] == 0).all()


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_long_answers_counted_with_dask(tmp_path, suffix):
    rng = np.random.default_rng(12)
    answers = pd.DataFrame(
        {
            "task": np.repeat([f"t{i:03d}" for i in range(200)], 7),
            "worker": rng.integers(0, 30, 1400).astype(str),
            "label": rng.choice(["cat", "dog", "skip"], size=1400, p=[0.5, 0.4, 0.1]),
        }
    )
    path = tmp_path / f"a.{suffix}"
    if suffix == "parquet":
        answers.to_parquet(path, row_group_size=300)
    else:
        answers.to_csv(path, index=False)
    in_memory = ambppl.score(ambppl.read_annotations(path, cant_solve="skip"), random_seed=2)
    counted = read_in_chunks(path, format="long", chunk_items=300, cant_solve="skip")
    chunked = ambppl.score(counted, random_seed=2)
    assert isinstance(chunked, pd.DataFrame)  # only the counts were held: scored in memory
    pd.testing.assert_frame_equal(chunked.sort_index(), in_memory.sort_index(), check_names=False)
    with pytest.raises(ValueError, match=r"item column 'tweet' is not in the data; the column"):
        read_in_chunks(path, format="long", chunk_items=300, item="tweet")


# ------------------------------------------------------------------------------------------
# in memory, score takes annotations already read: a path or a reader option names the reader


def test_score_refuses_a_path_naming_the_readers(tmp_path):
    path = tmp_path / "a.csv"
    pd.DataFrame({"task": ["a", "a"], "worker": ["w1", "w2"], "label": ["x", "y"]}).to_csv(
        path, index=False
    )
    quoted = repr(str(path))
    for data in (path, str(path)):
        with pytest.raises(TypeError) as err:
            ambppl.score(data)
        assert str(err.value) == (
            f"score takes annotations already read, not a path, but got {quoted}; read it "
            f"first: ambppl.score(ambppl.read_annotations({quoted}, ...), ...), or for a file "
            f"too large for memory ambppl.score(ambppl.data.read_in_chunks({quoted}, "
            "chunk_items=...), ...)"
        )
    with pytest.raises(TypeError, match=r"read_long\('.*a\.csv', \.\.\.\), 'rater_effects'"):
        ambppl.score(path, "rater_effects")


def test_score_refuses_chunk_items_naming_read_in_chunks(big_counts, tmp_path):
    big_counts.chunk({"item": 1000}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    for data in (tmp_path / "c.zarr", big_counts):
        with pytest.raises(TypeError, match=r"read_in_chunks\((path|'.*c\.zarr'), chunk_items="):
            ambppl.score(data, chunk_items=800)


@pytest.mark.parametrize("option", ["cant_solve", "categories", "item", "format"])
def test_in_memory_score_refuses_a_reader_option_naming_the_reader(three_class, option):
    counts, _, _ = three_class
    with pytest.raises(
        TypeError,
        match=rf"^score takes annotations already read, so reader options do not go to it, "
        rf"but got \['{option}'\]; .*: score\(ambppl\.read_annotations\(data, {option}=",
    ):
        ambppl.score(counts, **{option: "x"})


def test_counts_opened_by_the_data_layer_are_scored_lazily(big_counts, tmp_path):
    from ambppl.data import open_counts_in_chunks

    frame = pd.DataFrame(big_counts.values, columns=["x", "y", "cs"])
    frame.insert(0, "item", big_counts["item"].values)
    frame.to_parquet(tmp_path / "c.parquet", row_group_size=500)
    eager = ambppl.score(big_counts, random_seed=4)
    counts = open_counts_in_chunks(tmp_path / "c.parquet", chunk_items=1000, cant_solve="cs")
    lazy = ambppl.score(counts, random_seed=4)
    assert isinstance(lazy, scoring.LazyScore) and lazy.table.npartitions == 3
    pd.testing.assert_frame_equal(lazy.compute(), eager, check_names=False)
    # categories= reorders the counts' own labels (renaming them is refused, as in memory)
    reordered = ambppl.score(counts, categories=["y", "x", "cs"], cant_solve="cs", random_seed=4)
    assert reordered.attrs["n_distinct"] == eager.attrs["n_distinct"]
    swapped = ambppl.score(big_counts.sel(category=["y", "x", "cs"]), random_seed=4)
    pd.testing.assert_frame_equal(reordered.compute(), swapped, check_names=False)
    with pytest.raises(ValueError, match=r"labels \['x', 'y', 'cs'\] occur in the data but"):
        ambppl.score(counts, categories=["a", "b", "c"], cant_solve="c")
    assert counts.categories == ["x", "y", "cs"]  # the opened counts are left as they were


# ------------------------------------------------------------------------------------------
# one function, two routes: score decides, and refuses the keywords of the other route


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"draws": 100}, r"^draws= applies to the route through ambppl\.fit"),
        ({"chains": 2, "var_names": ["amb"]}, r"^chains=, var_names= apply to the route"),
        ({"progressbar": True}, r"^progressbar= applies"),
        ({"method": "exact", "sampler": "pymc"}, r"^sampler= applies"),
        ({"method": "exact", "sample_kwargs": {"tune": 5}}, r"^sample_kwargs= applies"),
        ({"method": "nuts", "mcse": 0.01}, r"^mcse= applies to the conjugate route"),
        ({"method": "nuts", "approximate": False}, r"^approximate= applies to the conjugate"),
    ],
)
def test_keywords_of_the_other_route_are_refused(three_class, kwargs, match):
    counts, _, _ = three_class
    with pytest.raises(ValueError, match=match):
        ambppl.score(counts, **kwargs)


def test_unused_ignore_leaves_the_other_route_keywords_unused(three_class):
    counts, _, _ = three_class
    plain = ambppl.score(counts, random_seed=5)
    settings = {"draws": 100, "chains": 2, "progressbar": True, "sample_kwargs": {"tune": 5}}
    settings["method"] = "exact"  # without it, sample_kwargs would pick the NUTS method
    pd.testing.assert_frame_equal(
        ambppl.score(counts, random_seed=5, unused="ignore", **settings), plain
    )


@pytest.fixture
def fit_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Stub the fit that score calls with a quick exact fit of the flat model, recording the
    arguments (the route, not NUTS, is under test here)."""
    calls: list[dict] = []
    real = ambppl.fit

    def stub(data, model, **kwargs):
        calls.append({"data": data, "model": model, **kwargs})
        return real(
            data,
            method="exact",
            draws=kwargs["draws"] or 100,
            chains=kwargs["chains"] or 1,
            random_seed=1,
            var_names=kwargs["var_names"],
        )

    # the name score's fit route calls (through ambppl.inference.fitting.fit_with_progress)
    monkeypatch.setattr("ambppl.inference.fitting.fit", stub)
    return calls


def test_other_methods_are_fitted_and_summarized(three_class, fit_calls):
    counts, _, _ = three_class
    lines: list[str] = []
    table = ambppl.score(
        counts,
        method="nuts",
        draws=60,
        chains=2,
        sample_kwargs={"tune": 10},
        threshold=0.3,
        hdi_prob=0.8,
        random_seed=3,
        progress=lines.append,
    )
    (call,) = fit_calls
    assert call["model"] == "dirichlet_categorical" and call["method"] == "nuts"
    assert call["draws"] == 60 and call["chains"] == 2 and call["random_seed"] == 3
    assert call["sample_kwargs"] == {"tune": 10}
    assert call["var_names"] is None  # full NUTS stores every variable: all are checked
    expected = ambppl.summarize(
        ambppl.fit(counts, draws=60, chains=2, random_seed=1), threshold=0.3, hdi_prob=0.8
    )
    pd.testing.assert_frame_equal(table, expected)
    assert list(table.columns) == list(COLUMNS)
    assert (
        lines[0] == "fitting dirichlet_categorical (nuts, 2 x 60 draws) to 60 items x 3 categories"
    )
    assert lines[1].startswith("fitted in ")
    # a learned prior's default method (collapsed): only the summarized measure is stored
    ambppl.score(counts, "hierarchical_dirichlet", measure="modified", kappa_scale=0.5)
    assert fit_calls[1]["method"] == "collapsed" and fit_calls[1]["var_names"] == ["amb_modified"]
    assert fit_calls[1]["kappa_scale"] == 0.5 and fit_calls[1]["draws"] is None
    # a sampler alone picks the model's NUTS method
    ambppl.score(counts, sampler="pymc")
    assert fit_calls[2]["method"] == "nuts" and fit_calls[2]["sampler"] == "pymc"


def test_models_of_answers_get_the_answers(fit_calls):
    from ambppl.data import read_long

    frame = pd.DataFrame(
        {"task": [1, 1, 2, 2], "worker": ["a", "b", "a", "b"], "label": ["x", "y", "x", "x"]}
    )
    answers = read_long(frame)
    with pytest.raises(TypeError, match=r"score\(ambppl\.data\.read_long\(data, cant_solve="):
        ambppl.score(answers, "rater_effects", cant_solve="x")
    assert fit_calls == []
    with pytest.raises(ValueError, match=r"^mcse= applies to the conjugate route"):
        ambppl.score(answers, "rater_effects", mcse=0.01)


def test_counts_in_chunks_are_computed_for_a_fit(big_counts, tmp_path, fit_calls):
    from ambppl.data import open_counts_in_chunks

    frame = pd.DataFrame(big_counts.values, columns=["x", "y", "cs"])
    frame.insert(0, "item", big_counts["item"].values)
    frame.to_parquet(tmp_path / "c.parquet", row_group_size=500)
    counts = open_counts_in_chunks(tmp_path / "c.parquet", chunk_items=1000)
    table = ambppl.score(counts, method="nuts", cant_solve="cs", draws=20, chains=1)
    data = fit_calls[0]["data"]
    assert isinstance(data, xr.DataArray) and data.attrs["cant_solve"] == "cs"
    np.testing.assert_array_equal(data.values, big_counts.values)
    np.testing.assert_array_equal(data["item"].values, big_counts["item"].values)
    assert isinstance(table, pd.DataFrame) and len(table) == 3000


def test_progress_lines_of_the_conjugate_routes(three_class, big_counts):
    counts, _, _ = three_class
    lines: list[str] = []
    ambppl.score(counts, random_seed=1, progress=lines.append)
    assert lines[0] == (
        "scoring 60 items x 3 categories with dirichlet_categorical (exact; exact draws per "
        "distinct count vector, MCSE <= 0.005)"
    )
    assert lines[1].startswith("scored 60 items (6 distinct count vectors) in ")
    lines.clear()
    ambppl.score(big_counts.chunk({"item": 1000}), random_seed=1, progress=lines.append)
    assert lines[0].startswith("scoring 3 chunks of counts with dirichlet_categorical")
    assert lines[1].startswith("3000 items, ") and "distinct count vectors summarized" in lines[1]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"random_seed": -1}, ValueError, r"random_seed must be a non-negative int \(a numpy"),
        ({"random_seed": "7"}, TypeError, r"random_seed must be a non-negative int, a numpy"),
        ({"progress": 3}, TypeError, r"progress must be a callable .* but got 3"),
        ({"approximate": "yes"}, TypeError, r"approximate must be True, False or None"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        ambppl.score(_counts(np.array([[3, 1, 1]])), **kwargs)


def test_items_without_answers_are_refused_in_memory_as_in_chunks(big_counts):
    """score(da) gave an all-zero row the prior's row, score(da.chunk(...)) refused it: the
    routes now agree (and the fit route too), with one message."""
    empty = big_counts.copy(data=np.where(np.arange(3000)[:, None] == 5, 0, big_counts.values))
    message = r"^every item must have at least one answer, but 1 item\(s\) \[15\] have none; "
    for data, kwargs in (
        (empty, {}),
        (empty.chunk({"item": 1000}), {}),
        (empty, {"prior": 0.5}),
        (empty, {"method": "nuts"}),  # refused before fitting
        (empty, {"model": "hierarchical_dirichlet", "method": "empirical_bayes"}),
        (empty, {"model": "hierarchical_dirichlet", "method": "collapsed"}),
    ):
        with pytest.raises(ValueError, match=message):
            ambppl.score(data, **kwargs)
    # a bare array is refused by its reader already (ambppl.data.as_counts), as before
    with pytest.raises(ValueError, match=r"1 item\(s\) \[5\] have none \(an all-zero row"):
        ambppl.score(empty.values)
