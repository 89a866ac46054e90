"""Oversized requests (issue 25, defects 8 and 9): refused up front, with the option to change
named (``budget=`` in Python, ``--budget`` on the command line), or computed fast where the
algorithm need not grow with the request (large planning budgets, many categories)."""

from __future__ import annotations

import base64
import importlib
import itertools
import math
import struct
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import betabinom

import ambppl
from ambppl.analysis import posterior_sd
from ambppl.analysis._decision import expected_correct_decision
from ambppl.analysis.planning import (
    answers_needed,
    expected_posterior_sd,
    expected_posterior_var,
    next_batch,
)
from ambppl.cli import main

fit_module = importlib.import_module("ambppl.inference.fitting")

#: Items with proper answers (b > 2: the closed form of the can't-solve sum is accurate at
#: large m) and items answered only "can't solve" (b = 2 prior: it is not, below m ~ 10^8).
ANSWERED = np.array([[3, 1, 0], [0, 5, 1], [40, 2, 1], [5, 5, 0], [2, 7, 3]])
CS_ONLY = np.array([[0, 0, 5], [0, 0, 1], [1, 1, 3]])


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("ambppl: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def write_answers(path: Path, counts: np.ndarray, labels: list[str]) -> Path:
    """A long CSV (task, worker, label) with the given counts per item and label."""
    rows = [
        (f"t{i}", f"w{i}_{r}", labels[k])
        for i, row in enumerate(counts)
        for k, c in enumerate(row)
        for r in range(int(c))
    ]
    pd.DataFrame(rows, columns=["task", "worker", "label"]).to_csv(path, index=False)
    return path


# ------------------------------------------------------------------- the can't-solve sum
def exact_inverse_moment(b: float, a_cs: float, m: int) -> float:
    """E 1/(N + b + 1) for N ~ BetaBinomial(m, b, a_cs), by summing scipy's pmf (the
    reference of the bracket of ambppl.analysis.posterior_sd._inverse_u)."""
    n = np.arange(m + 1)
    return float(np.sum(betabinom.pmf(n, m, b, a_cs) / (n + b + 1.0)))


@settings(max_examples=60, deadline=None)
@given(
    log_b=st.floats(-2.0, 3.0),
    log_a=st.floats(-2.0, 3.0),
    m=st.integers(0, 3000),
)
def test_inverse_moment_bracket_holds(log_b, log_a, m):
    """The bracket (Jensen with the variance term, 1/(b + 1), the alternating inverse
    factorial series) contains the summed value; scipy's pmf is good to ~1e-13 relative,
    hence the 1e-10 slack."""
    b, a_cs = 10.0**log_b, 10.0**log_a
    lower, upper = posterior_sd._inverse_u(np.array([b]), np.array([a_cs]), np.array([m]))
    ref = exact_inverse_moment(b, a_cs, m)
    assert lower[0] <= ref * (1 + 1e-10) and ref * (1 - 1e-10) <= upper[0]


@settings(max_examples=40, deadline=None)
@given(
    log_b=st.floats(-2.0, 3.0),
    log_a=st.floats(-2.0, 3.0),
    c0_share=st.one_of(st.just(0.0), st.floats(1e-12, 2.0)),
    delta=st.one_of(st.just(0.0), st.floats(1e-12, 1.0)),  # E(sum p^3 - S2^2): 0 or normal
    m=st.integers(1, 20_000),
)
def test_closed_form_within_its_bound(log_b, log_a, c0_share, delta, m):
    """|closed form - summed F| <= the stated bound (+ the sum's own rounding, 1e-12)."""
    b, a_cs = 10.0**log_b, 10.0**log_a
    args = [np.array([v]) for v in (b, a_cs, c0_share * b, delta)]
    exact = posterior_sd._cs_sum(*args, np.array([m]))[0]
    closed, err = posterior_sd._cs_closed(*args, np.array([m]))
    assert abs(closed[0] - exact) <= err[0] + 1e-12 * exact + 1e-300  # (no subnormal slack)


def test_streamed_sum_is_the_block_sum():
    """The sum of one long row in chunks of j (bounded memory) against the one-block sum:
    the same log ratios, summed from the mode outward, in the same order."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        b, a_cs = 10 ** rng.uniform(-2, 3, size=2)
        c0, delta = rng.uniform(0, 2) * b, rng.uniform(0, 1)
        m = int(10 ** rng.uniform(1, 4.3))
        one = posterior_sd._cs_sum_block(
            *(np.array([v]) for v in (b, a_cs, c0, delta)), np.array([m])
        )[0]
        streamed = posterior_sd._cs_sum_long(b, a_cs, c0, delta, m, chunk=97)
        assert streamed == pytest.approx(one, rel=1e-13)


def test_huge_extra_is_computed_not_refused():
    """extra = 10^12 used to raise MemoryError (a 7.3 TiB array). Items with proper answers
    take the closed form; at m = 10^6 it agrees with the forced sum to its 1e-11 accuracy."""
    sd = expected_posterior_sd(ANSWERED, 10**12)
    assert np.all(np.isfinite(sd)) and np.all(sd > 0)
    closed = expected_posterior_var(ANSWERED, 10**6)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(posterior_sd, "_CLOSED_RTOL", -1.0)  # never accurate enough: sum every row
        summed = expected_posterior_var(ANSWERED, 10**6)
    np.testing.assert_allclose(closed, summed, rtol=1e-10)
    # f falls like 1/m: the sd ratio between 10^9 and 10^12 more answers is sqrt(1000)
    ratio = expected_posterior_sd(ANSWERED, 10**9) / sd
    np.testing.assert_allclose(ratio, math.sqrt(1000), rtol=1e-5)


def test_oversized_extra_is_refused_up_front():
    start = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"^extra=1e\+09 with a can't-solve category .* would "
        r"take about .*; pass a smaller extra, or cant_solve=None",
    ):
        expected_posterior_sd(CS_ONLY, 10**9, prior=0.3)
    with pytest.raises(ValueError, match=r"^max_extra=1e\+09 .*pass a smaller max_extra"):
        answers_needed(CS_ONLY, target_sd=1e-7, max_extra=10**9, prior=0.3)
    assert time.perf_counter() - start < 20  # refused before summing (measured 0.01 s)


# ------------------------------------------------------------------- next_batch
def hull_greedy_reference(counts, budget, **kw):
    """The hull greedy on every m = 0..budget (plain Python: monotone chain, runs sorted by
    average gain, ties by item; the reference of tests/analysis/test_planning.py)."""
    ms = np.arange(budget + 1)
    table = np.array([expected_posterior_var(np.tile(c, (ms.size, 1)), ms, **kw) for c in counts])
    runs = []
    for i, row in enumerate(table):
        pts: list[int] = []
        for t in range(row.size):
            while len(pts) >= 2 and (row[pts[-1]] - row[pts[-2]]) * (t - pts[-2]) >= (
                row[t] - row[pts[-2]]
            ) * (pts[-1] - pts[-2]):
                pts.pop()
            pts.append(t)
        runs += [((row[a] - row[b]) / (b - a), i, a, b) for a, b in itertools.pairwise(pts)]
    runs.sort(key=lambda r: (-r[0], r[1], r[2]))
    m = np.zeros(len(counts), dtype=np.int64)
    left = budget
    for _, i, a, b in runs:
        take = min(b - a, left)
        m[i] += take
        left -= take
    return m, table


@settings(max_examples=10, deadline=None)
@given(
    counts=st.lists(st.lists(st.integers(0, 6), min_size=3, max_size=3), min_size=2, max_size=3),
    prior=st.sampled_from([0.05, 0.3, 1.0, 2.0]),
    cant_solve=st.sampled_from([None, -1]),
    budget=st.integers(600, 1500),
)
def test_search_beyond_the_dense_points_is_the_hull_greedy(counts, prior, cant_solve, budget):
    """Beyond planning._DENSE_POINTS answers per item the curves are searched (bisection on
    the marginal gain) instead of evaluated at every m: the allocation is still the hull
    greedy's on 0..budget (bit for bit without can't-solve, where values are elementwise
    closed forms; the same total with it)."""
    counts = np.array(counts)
    kw = {"prior": prior, "cant_solve": cant_solve}
    got = next_batch(counts, budget, **kw)
    ref, table = hull_greedy_reference(counts, budget, **kw)
    rows = np.arange(len(counts))
    assert got.sum() == budget and got.dtype == np.int64
    if cant_solve is None:
        assert got.tolist() == ref.tolist()
    assert table[rows, got].sum() == pytest.approx(table[rows, ref].sum(), rel=1e-12)


def test_large_budgets_are_planned_fast():
    """budget 10^7 on 20 items took 143 s (the curves at every m up to 10^6); 10^12 raised
    MemoryError, 10^15 too. Now the number of points evaluated does not grow with the budget.
    As the budget grows the shares converge (marginal gains ~ C_i / m^2 equalize)."""
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 5, size=(20, 3))
    counts[:, :2] += 1  # every item has proper answers: its curve has an accurate closed form
    for cant_solve in (None, -1):
        start = time.perf_counter()
        shares = []
        for budget in (10**9, 10**12, 10**15):
            got = next_batch(counts, budget, cant_solve=cant_solve)
            assert got.sum() == budget and np.all(got >= 0)
            shares.append(got / budget)
        assert time.perf_counter() - start < 60  # measured 1-5 s
        np.testing.assert_allclose(shares[1], shares[0], atol=1e-6)
        np.testing.assert_allclose(shares[2], shares[1], atol=1e-6)


def test_oversized_budgets_are_refused_up_front():
    """Items answered only "can't solve" with a small prior have no accurate closed form: a
    dry run with the closed forms estimates the sums and refuses before any of them."""
    start = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"^budget=1e\+09 .* an estimated .* terms\) would "
        r"take about .*plan in rounds",
    ):
        next_batch(CS_ONLY, 10**9, prior=0.3)
    assert time.perf_counter() - start < 20  # measured 0.5 s
    with pytest.raises(ValueError, match=r"budget must be below 2\*\*53"):
        next_batch(ANSWERED, 2**53)
    with pytest.raises(
        ValueError,
        match=r"budget 3e\+07 is more than objective 'decision' "
        r"can allocate to 3 items .* at most 3e\+07",
    ):
        next_batch(CS_ONLY, 3 * 10**7 + 1, objective="decision")


def test_decision_enumeration_refused_up_front():
    with pytest.raises(
        ValueError,
        match=r"would need about .* of memory.*pass a smaller "
        r"extra, or method=None",
    ):
        expected_correct_decision([[3, 1, 0]], 10**6, method="exact")
    with pytest.raises(ValueError, match=r"^extra=3000: .* would take about"):
        expected_correct_decision([[3, 1, 0]], 3000, method="exact")


def test_plan_command_large_budget_and_refusal(tmp_path, capsys):
    answered = write_answers(tmp_path / "a.csv", ANSWERED, ["yes", "no", "cs"])
    out = tmp_path / "plan.csv"
    assert (
        main(
            ["plan", str(answered), "--cant-solve", "cs", "--budget", "1e12", "-q", "-o", str(out)]
        )
        == 0
    )
    plan = pd.read_csv(out)
    assert plan["extra"].sum() == 10**12 and np.all(plan["sd_after"] < plan["sd_now"])
    cs_only = write_answers(tmp_path / "c.csv", CS_ONLY, ["yes", "no", "cs"])
    assert (
        main(
            ["plan", str(cs_only), "--cant-solve", "cs", "--prior", "0.3", "--budget", "1e9", "-q"]
        )
        == 2
    )
    line = one_line_error(capsys)
    assert "--budget 1e+09" in line and "smaller --budget" in line and "budget=" not in line
    assert main(["plan", str(answered), "--budget", "1e500", "-q"]) == 2
    assert "--budget" in capsys.readouterr().err


# ------------------------------------------------------------------- score, report
def test_score_mcse_refused_up_front(small_counts, tmp_path, capsys):
    """mcse 1e-9 asks for 2.5e17 draws per count vector (111 PiB): refused before drawing."""
    with pytest.raises(
        ValueError,
        match=r"^mcse=1e-09 \(up to .* 2.5e\+17 exact draws.*would "
        r"need about .* of memory.*pass a larger mcse",
    ):
        ambppl.score(small_counts, mcse=1e-9)
    path = write_answers(tmp_path / "a.csv", ANSWERED, ["yes", "no", "cs"])
    assert main(["score", str(path), "--cant-solve", "cs", "--mcse", "1e-9", "-q"]) == 2
    line = one_line_error(capsys)
    assert "--mcse 1e-09" in line and "larger --mcse" in line and "mcse=" not in line


def many_labels(n_items: int, n_labels: int, seed: int) -> np.ndarray:
    """Two answers per item, every one of n_labels used (a label column of ids)."""
    rng = np.random.default_rng(seed)
    drawn = rng.permutation(np.r_[np.arange(n_labels), rng.integers(0, n_labels, 2 * n_items)])
    counts = np.zeros((n_items, n_labels), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n_items), 2), drawn[: 2 * n_items]), 1)
    return counts


def test_many_categories_refused_early_with_the_reason(tmp_path, capsys, monkeypatch):
    """20,000 answers over 10,000 labels: score took 79 s, report ran past 300 s. The exact
    draws cost one gamma variate per category and draw: 1300 vectors x 1000 pilot draws x 2500
    categories = 3.25e9 variates, about 163 s on 2 threads at 1e-7 s each. Refused before."""
    monkeypatch.setattr(fit_module, "usable_cpus", lambda: 2)
    counts = many_labels(1300, 2500, seed=4)
    labels = [f"L{k}" for k in range(counts.shape[1])]
    data = xr.DataArray(
        counts,
        dims=("item", "category"),
        coords={"item": np.arange(len(counts)), "category": labels},
    )
    start = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"^scoring 1\d{3} distinct count vectors over 2500 "
        r"categories .* 3.2\de\+09 variates\) would take about .*free text or ids.*"
        r"check label=",
    ):
        ambppl.score(data)
    assert time.perf_counter() - start < 30  # measured 2 s
    path = write_answers(tmp_path / "ids.csv", counts, labels)
    assert main(["score", str(path), "-q"]) == 2
    assert "check --label" in one_line_error(capsys)
    assert main(["report", str(path), "-q", "-o", str(tmp_path / "r.html")]) == 2
    assert "check --label" in one_line_error(capsys)


def test_approximation_skipped_beyond_its_map(monkeypatch):
    """The accuracy map of ambppl.maths.approx covers K <= 20: beyond, no row is trusted, so the
    moments (56 s for 8673 categories) are not computed at all."""
    import ambppl.maths.approx

    def fail(*args, **kwargs):
        raise AssertionError("approximate_distribution called beyond the map")

    monkeypatch.setattr(ambppl.maths.approx, "approximate_distribution", fail)
    counts = many_labels(5, 25, seed=5)
    table = ambppl.score(counts, random_seed=1)
    assert np.all(table["draws"] > 0) and np.all(table["approx_error"] == 0)


def png_size(uri: str) -> tuple[int, int]:
    """Width and height of a PNG data URI (its IHDR chunk: bytes 16-24, big-endian)."""
    raw = base64.b64decode(uri.split(",", 1)[1])
    return struct.unpack(">II", raw[16:24])


def test_category_shares_draws_at_most_max_bars():
    """A bar per category took 31 s for 2000 labels; beyond MAX_BARS the smallest are one bar,
    so the figure has the size of MAX_BARS bars whatever the number of labels."""
    from ambppl.report.figures import MAX_BARS, figure_to_data_uri, plot_category_shares

    def figure(k: int) -> str:
        shares = np.random.default_rng(k).random(k)
        labels = [f"L{i}" for i in range(k)]
        return figure_to_data_uri(plot_category_shares(labels, shares / shares.sum(), "L3"))

    start = time.perf_counter()
    capped = png_size(figure(3000))
    assert time.perf_counter() - start < 30  # measured 0.7 s
    assert capped == png_size(figure(MAX_BARS + 1)) == png_size(figure(MAX_BARS))


# ------------------------------------------------------------------- n_draws, fit
def test_sampling_n_draws_refused_up_front(monkeypatch):
    with pytest.raises(
        ValueError,
        match=r"^n_draws=1e\+12 for 1 distinct alpha row\(s\) of 4 "
        r"categories .* would need about .* of memory.*pass a smaller n_draws",
    ):
        ambppl.ambiguity_posterior([1.0, 2.0, 3.0, 4.0], n_draws=10**12)
    monkeypatch.setattr("ambppl.internal.limits.available_memory", lambda: None)  # memory unknown
    with pytest.raises(ValueError, match=r"^n_draws=1e\+12 .* would take about"):
        ambppl.ambiguity_posterior([1.0, 2.0, 3.0, 4.0], n_draws=10**12)


@pytest.mark.parametrize(
    ("n_items", "draws", "var_names", "n_cat"),
    [(20_000, 200, ["amb"], 3), (20_000, 100, None, 3), (5_000, 100, None, 6)],
)
def test_fit_memory_estimate_against_the_measured_peak(
    monkeypatch, n_items, draws, var_names, n_cat
):
    """ambppl.inference.fitting.memory_needed against tracemalloc's peak of the exact route (numpy
    reports its allocations to tracemalloc), working chunks of 1 MiB so that the draws dominate:
    measured 65.8 / 218.6 / 80.5 MiB, estimated 0-0.4% above."""
    monkeypatch.setattr(fit_module, "CHUNK_BYTES", 2**20)
    rng = np.random.default_rng(6)
    cats = [f"c{k}" for k in range(n_cat)]
    counts = xr.DataArray(
        rng.integers(0, 6, size=(n_items, n_cat)),
        dims=("item", "category"),
        coords={"item": np.arange(n_items), "category": cats},
        attrs={"cant_solve": cats[-1]},
    )
    tracemalloc.start()
    try:
        result = ambppl.fit(counts, draws=draws, chains=2, var_names=var_names, random_seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    names = list(result.posterior.data_vars)
    estimate, stored = fit_module.memory_needed(2, draws, n_items, n_cat, names, True)
    assert peak <= estimate <= 1.05 * peak
    assert stored < peak


def test_fit_memory_refusal_names_command_line_options(tmp_path, capsys, monkeypatch):
    """On the command line the refusal names --draws / --chains and 'ambppl score', never
    the Python keywords (var_names=['amb'])."""
    monkeypatch.setattr(fit_module, "available_memory", lambda: 2**24)
    path = write_answers(tmp_path / "a.csv", ANSWERED, ["yes", "no", "cs"])
    code = main(
        [
            "score",
            str(path),
            "--cant-solve",
            "cs",
            "--model",
            "hierarchical_dirichlet",
            "--method",
            "collapsed",
            "-q",
        ]
    )
    assert code == 2
    line = one_line_error(capsys)
    assert "lower --draws or --chains" in line
    # the conjugate route of the model asked for, in the command's words
    assert "'ambppl score --model hierarchical_dirichlet --method empirical_bayes'" in line
    assert "var_names" not in line and "log_likelihood=False" not in line
