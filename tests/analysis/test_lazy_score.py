"""The out-of-core score (ambppl/analysis/lazy_score.py, ``LazyScore`` and ``_score_lazy`` of
ambppl/analysis/scoring.py): the Parquet dataset it writes, empty chunks, and its messages."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import ambppl
from ambppl.internal.messages import command_line_messages


def _counts(values: np.ndarray, items: list | None = None) -> xr.DataArray:
    values = np.asarray(values)
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={
            "item": items if items is not None else [f"i{k}" for k in range(len(values))],
            "category": ["p", "q", "cs"],
        },
        attrs={"cant_solve": "cs"},
    )


@pytest.fixture
def six(rng: np.random.Generator) -> xr.DataArray:
    return _counts(rng.multinomial(6, [0.5, 0.3, 0.2], size=6))


def test_to_parquet_refuses_an_existing_path_naming_overwrite(six, tmp_path: Path) -> None:
    """Writing 6 chunks then 2 onto the same folder left the old part files 2..5 behind:
    pandas read 6 rows back. Now an existing path needs overwrite=True, which replaces the
    whole folder; an existing file was a raw FileExistsError, now the same message."""
    out = tmp_path / "out.parquet"
    ambppl.score(six.chunk({"item": 1}), random_seed=0, mcse=0.05).to_parquet(out)
    two = ambppl.score(six.isel(item=slice(0, 2)).chunk({"item": 1}), random_seed=0, mcse=0.05)
    with pytest.raises(FileExistsError, match=r"out\.parquet.* exists already; pass overwrite="):
        two.to_parquet(out)
    assert len(pd.read_parquet(out)) == 6  # left as it was
    two.to_parquet(out, overwrite=True)
    assert pd.read_parquet(out).index.tolist() == ["i0", "i1"]
    assert sorted(p.name for p in out.iterdir()) == ["part.0.parquet", "part.1.parquet"]
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]  # no temporary left
    a_file = tmp_path / "file.parquet"
    a_file.write_text("x")
    with pytest.raises(FileExistsError, match=r"file\.parquet.* pass overwrite=True"):
        two.to_parquet(a_file)
    two.to_parquet(a_file, overwrite=True)
    assert a_file.is_dir() and pd.read_parquet(a_file).index.tolist() == ["i0", "i1"]
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        two.to_parquet(tmp_path / "new.parquet", overwrite="yes")


def test_to_parquet_error_leaves_the_old_dataset(six, tmp_path: Path, monkeypatch) -> None:
    import ambppl.analysis.scoring as scoring

    out = tmp_path / "out.parquet"
    lazy = ambppl.score(six.chunk({"item": 3}), random_seed=0, mcse=0.05)
    lazy.to_parquet(out)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(scoring, "write_part", broken)
    with pytest.raises(OSError, match="disk full"):
        lazy.to_parquet(out, overwrite=True)
    assert len(pd.read_parquet(out)) == 6
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]


@pytest.mark.parametrize("chunks", [(0, 4), (0, 0, 3, 1), (2, 0, 2)])
@pytest.mark.parametrize("items", [list("abcd"), [10, 20, 30, 40]])
def test_to_parquet_with_empty_chunks(chunks, items, tmp_path: Path) -> None:
    """A first chunk without items gave the item column Arrow's null type
    (ArrowNotImplementedError); the schema now comes from the first chunk with items."""
    counts = _counts(np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1], [3, 1, 0]]), items)
    lazy = ambppl.score(counts.chunk({"item": chunks}), random_seed=0, mcse=0.05)
    lazy.to_parquet(tmp_path / "o.parquet")
    written = pd.read_parquet(tmp_path / "o.parquet")
    assert written.index.tolist() == items
    eager = ambppl.score(counts, random_seed=0, mcse=0.05)
    np.testing.assert_array_equal(written["p_above"], eager["p_above"])


def test_items_without_answers_are_named(rng: np.random.Generator) -> None:
    values = rng.multinomial(5, [0.5, 0.3, 0.2], size=40)
    values[[3, 17, 18, 20, 25, 30, 39]] = 0
    chunked = _counts(values).chunk({"item": 7})
    with pytest.raises(
        ValueError,
        match=r"but 7 item\(s\) \['i3', 'i17', 'i18', 'i20', 'i25', \.\.\. \(7 in all\)\] have "
        "none; remove those items",
    ):
        ambppl.score(chunked)
    values[[17, 18, 20, 25, 30, 39]] = 1
    with pytest.raises(ValueError, match=r"but 1 item\(s\) \['i3'\] have none"):
        ambppl.score(_counts(values).chunk({"item": 7}))


def test_empirical_bayes_in_chunks_in_the_callers_words(six) -> None:
    chunked = six.chunk({"item": 3})
    with pytest.raises(ValueError, match=r"method='empirical_bayes'.* method='collapsed'"):
        ambppl.score(chunked, "hierarchical_dirichlet", method="empirical_bayes")
    with command_line_messages(), pytest.raises(ValueError) as caught:
        ambppl.score(chunked, "hierarchical_dirichlet", method="empirical_bayes")
    message = str(caught.value)
    assert message.startswith("--method empirical_bayes estimates the prior")
    assert "--model dirichlet_categorical --method exact" in message
    assert "--method collapsed or nuts" in message
    assert "method=" not in message and "read_in_chunks" not in message


def test_unknown_cant_solve_in_the_callers_words(six) -> None:
    chunked = six.chunk({"item": 3})
    with pytest.raises(ValueError, match=r"^cant_solve must be one of the category labels"):
        ambppl.score(chunked, cant_solve="zz")
    with command_line_messages(), pytest.raises(ValueError) as caught:
        ambppl.score(chunked, cant_solve="zz")
    assert str(caught.value) == (
        "--cant-solve must be a label that occurs in the data, but 'zz' does not; the labels "
        "present are ['p', 'q', 'cs'] (leave out --cant-solve if the task had no can't-solve "
        "answer)"
    )


def test_score_takes_an_integer_cant_solve_as_a_label_first(rng: np.random.Generator) -> None:
    """Categories 1, 2, 3 (numbers): can't-solve 1 names the label "1" in memory, and must in
    chunks too, where score's cant_solve=1 was taken for the position 1 (the label "2"); a
    number that is no label stays a position; item= belongs to the reader."""
    values = rng.multinomial(6, [0.5, 0.3, 0.2], size=8)
    counts = xr.DataArray(
        values, dims=("item", "category"), coords={"item": np.arange(8), "category": [1, 2, 3]}
    )
    labelled = counts.assign_attrs(cant_solve=1)  # attrs hold a label
    in_memory = ambppl.score(labelled, random_seed=0)
    np.testing.assert_allclose(in_memory["cs_share"], values[:, 0] / 6)
    for chunked in (
        ambppl.score(labelled.chunk({"item": 4}), random_seed=0),
        ambppl.score(counts.chunk({"item": 4}), cant_solve=1, random_seed=0),
    ):
        table = chunked.table.compute()
        np.testing.assert_allclose(table["cs_share"].to_numpy(), values[:, 0] / 6)
        np.testing.assert_allclose(table["mean"].to_numpy(), in_memory["mean"].to_numpy())
    by_position = ambppl.score(counts.chunk({"item": 4}), cant_solve=-1, random_seed=0)
    np.testing.assert_allclose(by_position.table.compute()["cs_share"].to_numpy(), values[:, 2] / 6)
    with pytest.raises(ValueError, match=r"\['item'\] do not apply .* give item= to ambppl"):
        ambppl.score(counts.chunk({"item": 4}), item="x")


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_to_parquet_folder_takes_the_umask(six, tmp_path: Path) -> None:
    """The dataset was written into tempfile.mkdtemp's folder (mode 0o700) and renamed into
    place: only its owner could read it. A new folder now follows the umask, as mkdir does;
    a replaced folder keeps its mode, a folder replacing a file takes the umask's."""
    lazy = ambppl.score(six.chunk({"item": 3}), random_seed=0, mcse=0.05)
    out = tmp_path / "out.parquet"
    with _umask(0o022):
        lazy.to_parquet(out)
        assert stat.S_IMODE(out.stat().st_mode) == 0o755
        out.chmod(0o750)
        lazy.to_parquet(out, overwrite=True)
        assert stat.S_IMODE(out.stat().st_mode) == 0o750
        a_file = tmp_path / "file.parquet"
        a_file.write_text("x")
        a_file.chmod(0o600)
        lazy.to_parquet(a_file, overwrite=True)
        assert stat.S_IMODE(a_file.stat().st_mode) == 0o755
    with _umask(0o027):
        lazy.to_parquet(tmp_path / "other.parquet")
    assert stat.S_IMODE((tmp_path / "other.parquet").stat().st_mode) == 0o750
    assert len(pd.read_parquet(tmp_path / "other.parquet")) == 6


def test_to_parquet_keeps_a_folder_that_appeared_while_it_worked(
    six, tmp_path: Path, monkeypatch
) -> None:
    """The path was checked only before the work: a folder made there meanwhile was removed
    and replaced although overwrite=False. It is now checked again just before the move."""
    import ambppl.analysis.scoring as scoring

    out = tmp_path / "out.parquet"
    lazy = ambppl.score(six.chunk({"item": 3}), random_seed=0, mcse=0.05)
    write_part = scoring.write_part

    def someone_else_writes(*args):
        out.mkdir(exist_ok=True)
        (out / "theirs.txt").write_text("keep")
        return write_part(*args)

    monkeypatch.setattr(scoring, "write_part", someone_else_writes)
    with pytest.raises(FileExistsError, match=r"out\.parquet.* exists already; pass overwrite="):
        lazy.to_parquet(out)
    assert [p.name for p in out.iterdir()] == ["theirs.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]  # no temporary left
    lazy.to_parquet(out, overwrite=True)  # told to: replaced
    assert len(pd.read_parquet(out)) == 6


def test_cant_solve_absent_has_one_command_line_text(six) -> None:
    """The command-line message of an unknown --cant-solve existed three times (the readers,
    the label check, counts read in chunks): one helper now writes it for all three."""
    from ambppl.data.lazy import from_dataarray
    from ambppl.internal.checks import cant_solve_absent, cant_solve_position

    with command_line_messages():
        expected = cant_solve_absent("zz", ["cs", "p", "q"])
        # counts read in chunks list their labels as read_annotations orders them: the data's
        # can't-solve label ("cs" in six's attrs) last
        moved = cant_solve_absent("zz", ["p", "q", "cs"])
        for call, want in (
            (
                lambda: ambppl.read_annotations(
                    six.values, categories=["cs", "p", "q"], cant_solve="zz"
                ),
                expected,
            ),
            (lambda: cant_solve_position("zz", ["cs", "p", "q"]), expected),
            (
                lambda: (
                    from_dataarray(six.chunk({"item": 3}))
                    .relabel(["cs", "p", "q"])
                    .with_cant_solve("zz")
                ),
                moved,
            ),
        ):
            with pytest.raises(ValueError) as caught:
                call()
            assert str(caught.value) == want
    assert expected.startswith("--cant-solve must be a label that occurs in the data, but 'zz'")


def test_lookup_refuses_a_vector_it_never_summarized() -> None:
    """Lookup.rows took the nearest key without checking it: a vector not summarized (the
    source changed between score and compute) silently got another vector's row; beyond the
    summarized maxima its mixed-radix key even equals another's ([3, 0] and [0, 1] with
    maxima [2, 1]), and the MultiIndex fallback's -1 took the last row."""
    from ambppl.analysis.lazy_score import Lookup

    distinct = np.array([[0, 1], [2, 0], [1, 1]])
    keyed = Lookup(distinct, {})
    assert keyed.mult is not None
    np.testing.assert_array_equal(keyed.rows(np.array([[1, 1], [0, 1], [2, 0]])), [2, 0, 1])
    fallback = Lookup(distinct, {})
    fallback.mult = None  # the row-wise route of huge key spaces
    np.testing.assert_array_equal(fallback.rows(np.array([[2, 0], [0, 1]])), [1, 0])
    for lookup in (keyed, fallback):
        for block, first in (([[1, 1], [3, 0]], "[3, 0]"), ([[0, 1], [2, 1]], "[2, 1]")):
            with pytest.raises(
                ValueError,
                match=rf"^the counts read in chunks must be those that ambppl.score summarized, "
                rf"but 1 item\(s\) \['b'\] of a chunk read again .* \(first {re.escape(first)}\)",
            ):
                lookup.rows(np.array(block), np.array(["a", "b"], dtype=object))
    with pytest.raises(ValueError, match=r"must have the 2 category columns .* shape \(1, 3\)"):
        keyed.rows(np.array([[1, 1, 0]]))


def test_a_source_changed_after_score_is_refused(rng, tmp_path: Path) -> None:
    """The zarr store was rewritten between score and compute: the table gave the new
    items the rows of other count vectors (n_answers of the old data)."""
    from ambppl.data import read_in_chunks

    values = rng.multinomial(6, [0.5, 0.3, 0.2], size=20)
    counts = _counts(values).rename("counts")
    store = tmp_path / "c.zarr"
    counts.chunk({"item": 5}).to_zarr(store, consolidated=False)
    lazy = ambppl.score(read_in_chunks(store, chunk_items=5), random_seed=0, mcse=0.05)
    changed = values.copy()
    changed[15:, 0] += 5  # the last chunk: 11 answers per item, no vector summarized
    counts.copy(data=changed).chunk({"item": 5}).to_zarr(store, consolidated=False, mode="w")
    unseen = r"but 5 item\(s\) \['i15', 'i16', 'i17', 'i18', 'i19'\] of a chunk read again"
    with pytest.raises(ValueError, match=unseen + r".* the source changed since"):
        lazy.compute()
    with pytest.raises(ValueError, match=r"count vectors it never saw"):
        lazy.to_parquet(tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()
    with command_line_messages():
        again = ambppl.score(read_in_chunks(store, chunk_items=5), random_seed=0, mcse=0.05)
    counts.chunk({"item": 5}).to_zarr(store, consolidated=False, mode="w")
    with pytest.raises(ValueError, match=r"the input changed while ambppl score ran; run it"):
        again.compute()
