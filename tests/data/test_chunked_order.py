"""Counts read in chunks put the can't-solve category last, as :func:`ambppl.read_annotations`
does (ambppl/data/lazy.py). Found by an audit (2027-01): a Parquet file of counts whose
can't-solve column was not the last kept the file's column order when read in chunks, so a
positional ``prior`` (``--prior 0.5,1,2,3,4``) gave its first value to the can't-solve
category there and to the first answer category in memory and in ``ambppl report``: means
differed by up to 0.065 for one file and one prior."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.cli import main
from ambppl.data import from_dataarray, open_counts_in_chunks, read_in_chunks

pytest.importorskip("dask.dataframe")

#: The file's columns: the can't-solve column ``cs`` first, as in the audit's file.
COLUMNS = ["cs", "a", "b", "c", "d"]
#: The categories in the order of read_annotations: the file's columns, can't-solve last.
CONTRACT = ["a", "b", "c", "d", "cs"]
#: A prior with one value per category, read by position.
PRIOR = [0.5, 1.0, 2.0, 3.0, 4.0]


@pytest.fixture
def cs_first(tmp_path: Path) -> Path:
    """50 items (ids 3, 10, 17, ...) of counts, the can't-solve column before the others."""
    rng = np.random.default_rng(2)
    n = rng.integers(3, 21, size=50)
    counts = rng.multinomial(n, rng.dirichlet([0.3, 1, 1, 1, 1], size=50))
    frame = pd.DataFrame(counts, columns=COLUMNS)
    frame.insert(0, "item_id", np.arange(50) * 7 + 3)
    frame.to_parquet(tmp_path / "cs_first.parquet", index=False, row_group_size=20)
    return tmp_path / "cs_first.parquet"


def _numbers(table: pd.DataFrame) -> pd.DataFrame:
    return table.select_dtypes("number").sort_index()


def test_counts_in_chunks_put_cant_solve_last_as_in_memory(cs_first: Path) -> None:
    whole = ambppl.read_annotations(cs_first, format="counts", cant_solve="cs")
    assert whole["category"].values.tolist() == CONTRACT
    lazy = read_in_chunks(cs_first, chunk_items=15, cant_solve="cs")
    assert lazy.categories == CONTRACT and lazy.cant_solve == "cs"
    np.testing.assert_array_equal(lazy.values.compute(), whole.values)
    computed = lazy.compute()  # what ambppl score reads into memory
    xr.testing.assert_equal(computed, whole.drop_attrs())
    assert computed.attrs["cant_solve"] == "cs"
    opened = open_counts_in_chunks(cs_first, chunk_items=15, cant_solve="cs")
    assert opened.categories == CONTRACT


def test_a_positional_prior_is_read_in_one_order_by_every_route(cs_first: Path) -> None:
    whole = ambppl.read_annotations(cs_first, format="counts", cant_solve="cs")
    eager = ambppl.score(whole, prior=PRIOR, random_seed=1)
    lazy = read_in_chunks(cs_first, chunk_items=15, cant_solve="cs")
    chunked = ambppl.score(lazy, prior=PRIOR, random_seed=1)
    assert chunked.attrs["prior"] == PRIOR
    out = chunked.compute()
    computed = ambppl.score(lazy.compute(), prior=PRIOR, random_seed=1)
    # the closed forms to rounding; the same seed and path: the same draws, the same table
    for table in (out, computed):
        np.testing.assert_allclose(
            table["exact_mean"].sort_index(), eager["exact_mean"].sort_index(), rtol=0, atol=1e-12
        )
        pd.testing.assert_frame_equal(_numbers(table), _numbers(eager), check_names=False)
    # cant_solve= given to score instead of the reader: the same order
    late = ambppl.score(read_in_chunks(cs_first, chunk_items=15), cant_solve="cs", prior=PRIOR)
    np.testing.assert_allclose(
        late.compute()["exact_mean"].sort_index(),
        eager["exact_mean"].sort_index(),
        rtol=0,
        atol=1e-12,
    )


def test_a_labelled_prior_is_read_by_its_labels(cs_first: Path) -> None:
    labelled = pd.Series(dict(zip(CONTRACT, PRIOR, strict=True)))[COLUMNS]  # any order
    whole = ambppl.read_annotations(cs_first, format="counts", cant_solve="cs")
    eager = ambppl.score(whole, prior=labelled, random_seed=1)
    assert eager.attrs["prior"] == PRIOR
    lazy = ambppl.score(read_in_chunks(cs_first, chunk_items=15, cant_solve="cs"), prior=labelled)
    assert lazy.attrs["prior"] == PRIOR
    np.testing.assert_allclose(
        lazy.compute()["exact_mean"].sort_index(),
        eager["exact_mean"].sort_index(),
        rtol=0,
        atol=1e-12,
    )


def test_the_command_reads_a_prior_in_one_order(cs_first: Path, tmp_path: Path, capsys) -> None:
    csv = tmp_path / "cs_first.csv"
    pd.read_parquet(cs_first).to_csv(csv, index=False)
    prior = ",".join(str(v) for v in PRIOR)
    said = "the values of --prior are read in the order of the categories: a, b, c, d, cs (can't"
    tables = {}
    for name, extra in (
        ("memory", []),  # 50 items: opened lazily, then read into memory
        ("chunks", ["--chunk-items", "15"]),
        ("csv", ["--layout", "counts"]),
    ):
        source = csv if name == "csv" else cs_first
        out = tmp_path / f"{name}.csv"
        argv = ["score", str(source), "--cant-solve", "cs", "--prior", prior, "--seed", "1"]
        assert main([*argv, *extra, "-o", str(out)]) == 0
        assert said in " ".join(capsys.readouterr().err.split())
        tables[name] = pd.read_csv(out, index_col="item").drop(columns="rank", errors="ignore")
    for name in ("chunks", "csv"):  # a column of zeros may be written as 0 or 0.0
        pd.testing.assert_frame_equal(
            _numbers(tables[name]), _numbers(tables["memory"]), check_dtype=False
        )


def test_a_store_and_a_dask_array_put_cant_solve_last(tmp_path: Path) -> None:
    pytest.importorskip("zarr")
    values = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 4]])
    counts = xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": list("uvw"), "category": ["cs", "x", "y"]},
        attrs={"cant_solve": "cs"},
        name="counts",
    )
    counts.chunk({"item": 2}).to_zarr(tmp_path / "c.zarr", consolidated=False)
    whole = ambppl.read_annotations(tmp_path / "c.zarr")
    assert whole["category"].values.tolist() == ["x", "y", "cs"]
    for lazy in (open_counts_in_chunks(tmp_path / "c.zarr"), from_dataarray(counts.chunk(2))):
        assert lazy.categories == ["x", "y", "cs"] and lazy.cant_solve == "cs"
        np.testing.assert_array_equal(lazy.values.compute(), whole.values)
    # categories= listing the can't-solve label first: it is still moved last
    moved = read_in_chunks(tmp_path / "c.zarr", chunk_items=2, categories=["cs", "y", "x"])
    assert moved.categories == ["y", "x", "cs"]
    np.testing.assert_array_equal(moved.values.compute(), values[:, [2, 1, 0]])


def test_columns_without_labels_are_named_in_the_source_order() -> None:
    """A count array without labels (columns "0", "1", ...) whose can't-solve column is
    moved last takes new labels for its columns in the source's order, as
    read_annotations(values, categories=..., cant_solve=...) does in memory."""
    values = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 4]])
    whole = ambppl.read_annotations(values, categories=["cs", "x", "y"], cant_solve="cs")
    bare = from_dataarray(xr.DataArray(values, dims=("item", "category")).chunk({"item": 2}))
    assert bare.with_cant_solve(0).categories == ["1", "2", "0"]
    for lazy in (
        bare.relabel(["cs", "x", "y"]).with_cant_solve("cs"),
        bare.with_cant_solve(0).relabel(["cs", "x", "y"]),  # column 0 named "cs", as given
    ):
        assert lazy.categories == ["x", "y", "cs"] and lazy.cant_solve == "cs"
        np.testing.assert_array_equal(lazy.values.compute(), whole.values)
