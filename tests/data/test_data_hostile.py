"""Generated hostile input (issue 25): random valid and malformed annotation files, read
through the API (``read_annotations``) and the command line (``ambppl.cli.main`` in-process,
and a few real processes). Each must end in the counts computed here independently
(``collections.Counter`` over the rows written) or in one clear refusal: exactly one
``ValueError`` / ``TypeError`` with a one-line message, or exit status 2 with one line
``ambppl: error: ...`` on stderr; never a traceback, a hang or a changed answer.

Example counts per run (about 15 s in all on 2 cores): long files 60 through the API, 40
through ``ambppl plan`` and 15 counted in chunks (``score --layout long --chunk-items``);
count files 60 through the API and 12 through the streaming ``score --chunk-items 1``; random
bytes 60 through the API and 20 through the command line; plus 2 subprocess runs.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ambppl.cli import main
from ambppl.data.readers import read_annotations

#: Ids that pandas' number parsing used to merge or change ("007" and "7", "1e3" and "1000",
#: "7.0"), NA-like ids, and ids that need quoting.
ITEM_IDS = ["007", "7", "1e3", "1000", "7.0", "-3", "NA", "None", "a b", "x,y", "12"]
RATERS = ["w1", "007", "NA", "null", "5", "w;2"]
#: NA-like labels (answers, unless na_values names them), numbers written two ways, blank
#: cells (missing), text that needs quoting, and non-ASCII text (not UTF-8 once Latin-1).
LABELS = [
    "pos",
    "neg",
    "N/A",
    "NA",
    "None",
    "null",
    "2",
    "2.0",
    "10",
    "",
    " ",
    "café",
    "a,b",
    'say "hi"',
]
NA_LIKE = ["N/A", "NA", "None", "null"]
SEPARATORS = [",", "\t", ";", "|"]
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "latin-1"]
COLUMNS = ("task", "worker", "label")

#: Files of every example are written into one folder (function-scoped fixtures do not mix
#: with hypothesis); each example overwrites the last.
SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture],
}


@st.composite
def long_files(draw: st.DrawFn) -> dict:
    """Rows (item, rater, label) and how they are written."""
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(ITEM_IDS), st.sampled_from(RATERS), st.sampled_from(LABELS)),
            min_size=1,
            max_size=25,
        )
    )
    return {
        "rows": rows,
        "sep": draw(st.sampled_from(SEPARATORS)),
        "encoding": draw(st.sampled_from(ENCODINGS)),
        "header": draw(st.booleans()),
        "order": draw(st.permutations(range(3))),  # column positions in the file
        "na_values": draw(st.lists(st.sampled_from(NA_LIKE), unique=True, max_size=3)),
        "give_encoding": draw(st.booleans()),  # pass encoding='latin-1' for Latin-1 files
        # malformed rows: none; a delimiter at the end of every line; one row with an extra
        # field (empty or not)
        "ragged": draw(
            st.one_of(
                st.just(None),
                st.just("trailing"),
                st.tuples(st.integers(0, len(rows) - 1), st.sampled_from(["", "extra"])),
            )
        ),
    }


def _write_long(case: dict, path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=case["sep"], lineterminator="\n")
    order = case["order"]
    if case["header"]:
        writer.writerow([COLUMNS[j] for j in order])
    ragged = case["ragged"]
    for i, row in enumerate(case["rows"]):
        cells = [row[j] for j in order]
        if ragged == "trailing" or (isinstance(ragged, tuple) and ragged[0] == i):
            cells.append("" if ragged == "trailing" else ragged[1])
        writer.writerow(cells)
    path.write_bytes(buffer.getvalue().encode(case["encoding"]))


def _expected_long(case: dict) -> tuple[dict | None, list[str], int]:
    """Independent reference: (per-item label counts or None, the refusals allowed (regular
    expressions), the number of missing answers)."""
    rows = case["rows"]
    latin1 = case["encoding"] == "latin-1" and not case["give_encoding"]
    if latin1 and any(ord(ch) > 127 for row in rows for cell in row for ch in cell):
        return None, [r"it is not UTF-8 text .*encoding"], 0
    ragged = case["ragged"]
    if isinstance(ragged, tuple):
        # an extra field on the first line sets the width of a headerless file (the 4th column
        # is not used); read with a header, an empty one on the first row is a delimiter at
        # its end; anywhere else the row does not fit
        first_ok = ragged[0] == 0 and (not case["header"] or ragged[1] == "")
        if not first_ok:
            return (
                None,
                [
                    r"Expected [34] fields in line \d+, saw [45]",
                    r"its first row has 4 "
                    r"fields but the header line names 3",
                ],
                0,
            )
    allowed = []
    first_label = rows[0][2]
    if not case["header"] and first_label.strip() and all(r[2] != first_label for r in rows[1:]):
        allowed.append(r"looks like a header line, not an answer")  # may be taken for one
    missing = {"", " ", *case["na_values"]}
    kept = [(item, label) for item, _, label in rows if label not in missing]
    items = list(dict.fromkeys(item for item, _, _ in rows))
    labels = {label for _, label in kept}
    refusals = []
    if len(labels) < 2:
        refusals.append(r"at least 2 categories")
    if {item for item, _ in kept} != set(items):
        refusals.append(r"every item must have at least one answer")
    if refusals:
        return None, allowed + refusals, 0
    tally = Counter(kept)
    counts = {item: {label: tally[(item, label)] for label in labels} for item in items}
    return counts, allowed, len(rows) - len(kept)


def _reader_options(case: dict) -> dict:
    options: dict = {"sep": case["sep"], "na_values": case["na_values"]}
    if not case["header"]:
        options["header"] = None
        options.update(
            item=case["order"].index(0), rater=case["order"].index(1), label=case["order"].index(2)
        )
    if case["encoding"] == "latin-1" and case["give_encoding"]:
        options["encoding"] = "latin-1"
    return options


def _sorted_labels(labels: list[str]) -> list[str]:
    """The documented order: by value when every label is a number, else as text."""
    try:
        return sorted(labels, key=lambda text: (float(text), text))
    except ValueError:
        return sorted(labels)


@settings(max_examples=60, **SETTINGS)
@given(case=long_files())
def test_long_files_through_the_api(case, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / "hostile_api.csv"
    _write_long(case, path)
    expected, refusals, n_missing = _expected_long(case)
    try:
        counts = read_annotations(path, **_reader_options(case))
    except (ValueError, TypeError) as err:
        message = str(err)
        assert "\n" not in message, message
        assert any(pd.Series([message]).str.contains(r).iloc[0] for r in refusals), (
            message,
            refusals,
        )
        return
    assert expected is not None, f"no refusal although one of {refusals} was expected"
    categories = counts["category"].values.tolist()
    assert categories == _sorted_labels(list(next(iter(expected.values()))))
    got = {
        str(item): dict(zip(categories, row.tolist(), strict=True))
        for item, row in zip(counts["item"].values.tolist(), counts.values, strict=True)
    }
    assert got == expected  # ids as written, in order of first appearance
    assert [str(i) for i in counts["item"].values.tolist()] == list(expected)
    assert counts.attrs["n_dropped"] == n_missing


def _command_line(case: dict, path: Path, chunked: bool = False) -> list[str]:
    options = _reader_options(case)
    argv = ["--sep", options["sep"]]
    for value in options["na_values"]:
        argv += ["--na-values", value]
    if not case["header"]:
        argv += [
            "--no-header",
            "--item",
            str(options["item"]),
            "--rater",
            str(options["rater"]),
            "--label",
            str(options["label"]),
        ]
    if "encoding" in options:
        argv += ["--encoding", options["encoding"]]
    if chunked:  # counted by dask block by block (ambppl.data.count_long_in_chunks)
        return [
            "score",
            str(path),
            "--layout",
            "long",
            "--chunk-items",
            "4",
            "--mcse",
            "0.1",
            "--seed",
            "1",
            "-q",
            *argv,
        ]
    return ["plan", str(path), "--budget", "1", "-q", *argv]


def _one_error_line(err: str, refusals: list[str]) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ambppl: error: "), err
    assert "Traceback" not in err
    assert any(pd.Series([lines[0]]).str.contains(r).iloc[0] for r in refusals), (
        lines[0],
        refusals,
    )


def _run_long_command_line(case, folder, capsys, chunked):
    path, out = folder / "hostile_cli.csv", folder / "hostile_out.csv"
    _write_long(case, path)
    out.unlink(missing_ok=True)
    expected, refusals, _ = _expected_long(case)
    if chunked and isinstance(case["ragged"], tuple) and expected is None:
        # dask reads the named (or numbered) columns only: a row's extra field is ignored
        expected, more, _ = _expected_long({**case, "ragged": None})
        refusals = refusals + more
    status = main([*_command_line(case, path, chunked), "-o", str(out)])
    err = capsys.readouterr().err
    if status == 2:
        _one_error_line(err, refusals)
        assert not out.exists()
        return
    assert status == 0 and expected is not None, (status, err, refusals)
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    got = dict(zip(table["item"], table["n_answers"].astype(int), strict=True))
    assert got == {item: sum(row.values()) for item, row in expected.items()}


@settings(max_examples=40, **SETTINGS)
@given(case=long_files())
def test_long_files_through_the_command_line(case, tmp_path_factory, capsys):
    _run_long_command_line(case, tmp_path_factory.getbasetemp(), capsys, chunked=False)


@settings(max_examples=15, **SETTINGS)
@given(case=long_files())
def test_long_files_counted_in_chunks_by_the_command_line(case, tmp_path_factory, capsys):
    _run_long_command_line(case, tmp_path_factory.getbasetemp(), capsys, chunked=True)


# ----------------------------------------------------------------------------- count files

#: Counts around the limits: small, 2**53 (the largest taken), 2**53 + 1 and 2**62 (refused,
#: once wrapped to a negative n_answers), negative, fractional, 1e300, missing (None).
COUNT_VALUES = [0, 1, 3, 2**53, 2**53 + 1, 2**62, -1, 0.5, 1e300, None]


@st.composite
def count_tables(draw: st.DrawFn) -> np.ndarray:
    n = draw(st.integers(1, 4))
    k = draw(st.integers(2, 4))
    small = st.integers(0, 5)
    cell = st.one_of(small, small, small, st.sampled_from(COUNT_VALUES))
    return np.array([[draw(cell) for _ in range(k)] for _ in range(n)], dtype=object)


def _count_verdict(table: np.ndarray) -> tuple[np.ndarray | None, list[str]]:
    """Independent reference: the int64 counts, or the refusals allowed (regular
    expressions: every problem the table has; which one a reader meets first may differ)."""
    cells = table.tolist()
    flat = [c for row in cells for c in row]
    present = [c for c in flat if c is not None]
    problems = []
    if len(present) < len(flat):
        problems.append(r"missing")
    if any(c < 0 for c in present):
        problems.append(r"non-negative")
    if any(c != int(c) for c in present):
        problems.append(r"whole numbers")
    limit = 2**53
    # Python integers: exact sums (which float64 would round)
    whole = [[int(c) if c is not None else 0 for c in row] for row in cells]
    if any(c > limit for row in whole for c in row) or any(sum(row) > limit for row in whole):
        problems.append(r"at most 2\*\*53")
    if problems:
        return None, problems
    if any(sum(row) == 0 for row in whole):
        return None, [r"at least one answer"]
    return np.array(whole, dtype=np.int64), []


def _count_frame(table: np.ndarray) -> pd.DataFrame:
    columns = {
        f"c{j}": pd.array(
            [None if v is None else v for v in table[:, j]],
            dtype="Int64"
            if all(v is None or (isinstance(v, int) and abs(v) < 2**63) for v in table[:, j])
            else "Float64",
        )
        for j in range(table.shape[1])
    }
    return pd.DataFrame({"item": [f"i{i}" for i in range(table.shape[0])], **columns})


def _check_counts_result(read, expected, refusals):
    try:
        counts = read()
    except (ValueError, TypeError) as err:
        assert "\n" not in str(err), str(err)
        assert expected is None, f"refused valid counts: {err}"
        assert any(pd.Series([str(err)]).str.contains(r).iloc[0] for r in refusals), (
            str(err),
            refusals,
        )
        return
    assert expected is not None, f"accepted counts that must be refused ({refusals})"
    np.testing.assert_array_equal(counts.values, expected)
    assert counts.dtype == np.int64


@settings(max_examples=60, **SETTINGS)
@given(table=count_tables(), kind=st.sampled_from(["csv", "parquet", "npy", "numpy"]))
def test_count_files_through_the_api(table, kind, tmp_path_factory):
    expected, refusals = _count_verdict(table)
    folder = tmp_path_factory.getbasetemp()
    frame = _count_frame(table)
    if kind == "csv":
        path = folder / "hostile_counts.csv"
        frame.to_csv(path, index=False)  # 2**62 and 2**53 + 1 in full, None as an empty cell
        source, options = path, {"format": "counts", "item": "item"}
    elif kind == "parquet":
        path = folder / "hostile_counts.parquet"
        frame.to_parquet(path)
        source, options = path, {"format": "counts", "item": "item"}
    elif kind == "npy":
        path = folder / "hostile_counts.npy"
        values = np.array(
            [[np.nan if v is None else float(v) for v in row] for row in table.tolist()]
        )
        if all(v is not None and isinstance(v, int) for v in table.ravel()):
            values = table.astype(np.int64)  # integers kept exact (2**53 + 1)
        np.save(path, values)
        source, options = path, {}
    else:
        source = np.array(
            [[np.nan if v is None else v for v in row] for row in table.tolist()], dtype=float
        )
        if all(v is not None and isinstance(v, int) for v in table.ravel()):
            source = table.astype(np.int64)
        options = {}
    _check_counts_result(lambda: read_annotations(source, **options), expected, refusals)


@settings(max_examples=12, **SETTINGS)
@given(table=count_tables())
def test_parquet_counts_streamed_by_the_command_line(table, tmp_path_factory, capsys):
    """``score --chunk-items 1``: every item its own chunk (dask), the checks per chunk."""
    expected, refusals = _count_verdict(table)
    if expected is not None and expected.max() > 10**6:
        return  # huge valid counts: the API test reads them; scoring them is not the point
    folder = tmp_path_factory.getbasetemp()
    path, out = folder / "hostile_stream.parquet", folder / "hostile_scores.csv"
    _count_frame(table).to_parquet(path, row_group_size=1)
    out.unlink(missing_ok=True)
    argv = [
        "score",
        str(path),
        "--layout",
        "counts",
        "--chunk-items",
        "1",
        "--mcse",
        "0.1",
        "--seed",
        "1",
        "-q",
        "-o",
        str(out),
    ]
    status = main(argv)
    err = capsys.readouterr().err
    if expected is None:
        assert status == 2, err
        _one_error_line(err, refusals)
        return
    assert status == 0, err
    scores = pd.read_csv(out, dtype={"item": str}).set_index("item")
    for i, row in enumerate(expected):
        assert scores.loc[f"i{i}", "n_answers"] == row.sum()


# ----------------------------------------------------------------------------- real processes


@pytest.mark.parametrize(
    ("content", "status", "expected"),
    [
        ("task,worker,label\n007,a,NA\n7,b,N/A\n007,c,pos\n".encode("utf-16"), 0, None),
        (
            "task,worker,label\n1,a,caf\xe9\n1,b,neg\n".encode("latin-1"),
            2,
            "pass --encoding latin-1",
        ),
    ],
    ids=["utf-16-na-like", "latin-1"],
)
def test_real_process_ends_in_counts_or_one_line(content, status, expected, tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(content)
    out = tmp_path / "plan.csv"
    done = subprocess.run(
        [sys.executable, "-m", "ambppl", "plan", str(path), "--budget", "1", "-q", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == status, done.stderr
    if status == 2:
        _one_error_line(done.stderr, [expected])
        return
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    # reference: the rows written above; "007" and "7" are two items, NA and N/A answers
    assert dict(zip(table["item"], table["n_answers"].astype(int), strict=True)) == {
        "007": 2,
        "7": 1,
    }


# ----------------------------------------------------------------------------- random bytes

#: Starts that send a reader down one route or another: byte-order marks, compressed and
#: binary formats' magic numbers, JSON, a header line.
PREFIXES = [
    b"",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\x1f\x8b",
    b"PK\x03\x04",
    b"BZh9",
    b"PAR1",
    b"\x93NUMPY",
    b"[",
    b"{",
    b"task,worker,label\n",
    b"task\tworker\tlabel\n",
]


@settings(max_examples=60, **SETTINGS)
@given(
    head=st.sampled_from(PREFIXES),
    body=st.binary(max_size=200),
    suffix=st.sampled_from([".csv", ".tsv", ".csv.gz", ".npy", ".parquet"]),
)
def test_random_bytes_end_in_counts_or_one_error(head, body, suffix, tmp_path_factory):
    """Whatever the bytes, reading ends in valid counts or one one-line ValueError /
    TypeError (no other exception, e.g. UnicodeError, EOFError, zlib.error; an ImportError
    only for zstd-compressed bytes without the zstandard package)."""
    path = tmp_path_factory.getbasetemp() / f"hostile_bytes{suffix}"
    path.write_bytes(head + body)
    try:
        counts = read_annotations(path)
    except (ValueError, TypeError) as err:
        assert str(err) and "\n" not in str(err), str(err)
        return
    except ImportError as err:  # zstd's magic bytes, and no zstandard package installed
        assert "pip install zstandard" in str(err) and "\n" not in str(err), str(err)
        return
    assert counts.dtype == np.int64 and counts.sizes["category"] >= 2
    assert (counts.values >= 0).all() and (counts.values.sum(axis=1) > 0).all()


@settings(max_examples=20, **SETTINGS)
@given(head=st.sampled_from(PREFIXES), body=st.binary(max_size=200))
def test_random_bytes_through_the_command_line(head, body, tmp_path_factory, capsys):
    folder = tmp_path_factory.getbasetemp()
    path, out = folder / "hostile_bytes_cli.csv", folder / "hostile_bytes_plan.csv"
    path.write_bytes(head + body)
    out.unlink(missing_ok=True)
    status = main(["plan", str(path), "--budget", "1", "-q", "-o", str(out)])
    err = capsys.readouterr().err
    assert status in (0, 2), err
    if status == 2:
        _one_error_line(err, [r"."])
        assert not out.exists()
