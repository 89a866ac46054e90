"""Simulation study: does planning the next answers pay off? (weather-sentiment data)

Run: ``.venv/bin/python benchmarks/bench_planning.py`` (or ``benchmarks/run.py planning``).
Every tweet starts from 3 of its 20 answers (a fixed random order per tweet); the 17 held-back
answers are added in batches of ``BATCH`` by three strategies:

* ``planner``: :func:`ambppl.next_batch` (objective "variance") on the current counts of the
  tweets with answers left, capped at the answers a tweet has left (see ``allocate``),
* ``uniform``: one answer at a time to the tweet with the fewest answers (ties in a fixed random
  order), i.e. round-robin,
* ``random``: one answer at a time to a tweet drawn at random among those with answers left,

plus ``planner (decision)`` with ``AMBPPL_PLANNING_DECISION=1`` where ``next_batch`` offers
``objective="decision"`` (slow: not run by default; where its time guard refuses a batch,
that strategy stops there and the study goes on: with ``AMBPPL_BENCH_SMALL=1`` it allocated 8
batches, 190 s in all, 2026-12-07). After each
batch it records the total posterior sd of amb (sum over tweets of
``sqrt(dirichlet_var(counts + 1))``) and the share of tweets whose decision
``P(amb > 0.4) > 0.5`` agrees with the one from all 20 answers (P from exact Dirichlet draws,
cached per distinct count vector), averaged over ``REPS`` answer orders. It prints the table,
the answers the planner saves for the decision quality (and total sd) that uniform reaches at
half the budget, and the time.

Environment: ``AMBPPL_BENCH_SMALL=1`` for 200 tweets and 1 answer order; ``AMBPPL_SHARED`` for
the ``shared`` folder (default ``../shared`` next to the repository); without the full data the
bundled 200-tweet subset is used.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

# --- study (copied verbatim into notebooks/07_planning.ipynb) ---
import ambppl
from ambppl.data.readers import example_path, read_long

CS = "I can't tell"
START = 3  # answers every tweet starts with
THRESHOLD = 0.4  # decide "ambiguous" when P(amb > THRESHOLD) > DECIDE
DECIDE = 0.5
PRIOR = 1.0  # symmetric Dirichlet prior
DRAWS = 4000  # exact posterior draws per distinct count vector


def answer_orders(long: pd.DataFrame, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(tweet ids, answer codes of shape (tweets, answers)) in a random order per tweet."""
    rng = np.random.default_rng(seed)
    codes = long.assign(code=long["label"].cat.codes).sort_values("item", kind="stable")
    items = codes["item"].unique()
    per = codes.groupby("item", sort=False)["code"].apply(np.asarray)
    sizes = {len(a) for a in per}
    assert len(sizes) == 1, "every tweet must have the same number of answers"
    return items, np.stack([rng.permutation(per[i]) for i in items])


def cumulative(answers: np.ndarray, k: int) -> np.ndarray:
    """cum[i, n] = the counts per category of the first n answers of tweet i."""
    onehot = np.eye(k, dtype=np.int64)[answers]  # (tweets, answers, K)
    zero = np.zeros((answers.shape[0], 1, k), dtype=np.int64)
    return np.concatenate([zero, np.cumsum(onehot, axis=1)], axis=1)


class PAbove:
    """P(amb > THRESHOLD | counts) from DRAWS exact Dirichlet draws, cached per count vector.

    Each distinct vector gets its own seeded generator (``default_rng([seed, *counts])``), so a
    vector's estimate does not depend on which strategy or batch met it first: tweets with
    equal counts get equal decisions, and at the full budget every strategy sees exactly the
    20-answer estimates.
    """

    def __init__(self, seed: int = 0, draws: int = DRAWS):
        self.seed, self.draws, self.cache = seed, draws, {}

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        uniq, inv = np.unique(counts, axis=0, return_inverse=True)
        out = np.empty(len(uniq))
        for j, row in enumerate(uniq):
            key = row.tobytes()
            if key not in self.cache:
                rng = np.random.default_rng([self.seed, *row.tolist()])
                q = rng.dirichlet(row + PRIOR, size=self.draws)
                self.cache[key] = float(np.mean(ambppl.amb(q) > THRESHOLD))
            out[j] = self.cache[key]
        return out[inv.ravel()]


def has_decision_objective() -> bool:
    try:
        ambppl.next_batch([[1, 1, 0]], 1, objective="decision")
    except (ValueError, TypeError, NotImplementedError):
        return False
    return True


def allocate(
    strategy: str,
    n: np.ndarray,
    counts: np.ndarray,
    total: int,
    batch: int,
    rng: np.random.Generator,
    tie: np.ndarray,
) -> np.ndarray:
    """Further answers per tweet for one batch (at most what each tweet has left)."""
    left = total - n
    budget = int(min(batch, left.sum()))
    m = np.zeros_like(n)
    if strategy.startswith("planner"):
        objective = "decision" if strategy == "planner (decision)" else "variance"
        # Tweets without answers left are not passed. A tweet allotted more than it has left
        # gets all it has left and leaves the pool; the rest of the budget is allocated again,
        # on the same counts, to the others (for greedy allocation this is exactly greedy
        # with caps: a capped tweet's taken answers are still the best ones).
        pool = np.flatnonzero(left > 0)
        rest = budget
        while rest > 0:
            got = ambppl.next_batch(counts[pool], rest, objective=objective, prior=PRIOR)
            over = got > left[pool]
            if not over.any():
                m[pool] += got
                break
            capped = pool[over]
            m[capped] = left[capped]
            rest -= int(left[capped].sum())
            pool = pool[~over]
    elif strategy == "uniform":  # round-robin: fewest answers first, ties in a fixed order
        for _ in range(budget):
            now = n + m
            key = np.where(now < total, now * len(n) + tie, np.iinfo(np.int64).max)
            m[np.argmin(key)] += 1
    elif strategy == "random":
        for _ in range(budget):
            m[rng.choice(np.flatnonzero(n + m < total))] += 1
    else:
        raise ValueError(strategy)
    assert m.sum() == budget and np.all(m <= left)
    return m


def run_study(
    cum: np.ndarray, strategies: list[str], batch: int, p_above: PAbove, seed: int
) -> pd.DataFrame:
    """One answer order: total sd and decision agreement after every batch, per strategy."""
    tweets, total = cum.shape[0], cum.shape[1] - 1
    truth = p_above(cum[:, total]) > DECIDE
    rows = []
    for s, strategy in enumerate(strategies):
        rng = np.random.default_rng([seed, s])
        tie = np.random.default_rng([seed, 99]).permutation(tweets)
        n = np.full(tweets, START)
        budget = 0
        while True:
            counts = cum[np.arange(tweets), n]
            sd = np.sqrt(ambppl.dirichlet_var(counts + PRIOR))
            decision = p_above(counts) > DECIDE
            rows.append(
                {
                    "strategy": strategy,
                    "budget": budget,
                    "total_sd": sd.sum(),
                    "total_var": np.sum(sd**2),
                    "agreement": np.mean(decision == truth),
                    "max_answers": int(n.max()),
                }
            )
            if budget == tweets * (total - START):
                break
            try:
                m = allocate(strategy, n, counts, total, batch, rng, tie)
            except ValueError as err:  # the decision objective's time guard refused a batch
                if strategy != "planner (decision)":
                    raise
                print(f"{strategy} stopped at budget {budget}: {' '.join(str(err).split())}")
                break
            n = n + m
            budget += int(m.sum())
    return pd.DataFrame(rows).assign(rep=seed)


def _reached(need: int, half: int) -> str:
    """A budget and the answers it saves against ``half``, or "never" (-1: not reached, e.g.
    by a strategy stopped early)."""
    return "never" if need < 0 else f"{need} (answers saved: {half - need})"


def budget_to_reach(curve: pd.Series, target: float, higher_is_better: bool = True) -> int:
    """The smallest budget at which ``curve`` (indexed by budget) reaches ``target``."""
    ok = curve >= target - 1e-12 if higher_is_better else curve <= target + 1e-12
    return int(curve.index[np.argmax(ok.to_numpy())]) if ok.any() else -1


# --- end study ---


def load(small: bool) -> tuple[str, pd.DataFrame]:
    shared = Path(os.environ.get("AMBPPL_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    weather = shared / "data" / "cf_weather_sentiment" / "weather-non-agg-DFE.csv"
    if weather.is_file():
        long = read_long(
            weather, item="tweet_id", rater="worker_id", label="emotion", cant_solve=CS
        )
        data = "full CrowdFlower weather data"
    else:
        long = read_long(example_path("weather_sentiment"), cant_solve=CS)
        data = "bundled 200-tweet subset"
    if small:
        keep = np.random.default_rng(7).choice(long["item"].unique(), 200, replace=False)
        long = long[long["item"].isin(keep)]
    return data, long


def main() -> None:
    small = os.environ.get("AMBPPL_BENCH_SMALL", "") not in ("", "0")
    reps = 1 if small else int(os.environ.get("AMBPPL_BENCH_REPS", 3))
    batch = 100
    t0 = time.perf_counter()
    data, long = load(small)
    strategies = ["planner", "uniform", "random"]
    if os.environ.get("AMBPPL_PLANNING_DECISION", "") not in ("", "0") and has_decision_objective():
        strategies.append("planner (decision)")
    k = len(long["label"].cat.categories)
    p_above = PAbove(seed=0)
    runs = []
    for rep in range(reps):
        _, answers = answer_orders(long, seed=rep)
        runs.append(run_study(cumulative(answers, k), strategies, batch, p_above, seed=rep))
    res = pd.concat(runs)
    mean = res.groupby(["strategy", "budget"])[["total_sd", "agreement"]].mean()
    tweets, total = answers.shape
    full = tweets * (total - START)
    half = (full // 2) // batch * batch
    print(
        f"{data}: {tweets} tweets, start {START} answers, batches of {batch}, "
        f"{reps} answer order(s), {len(p_above.cache)} distinct count vectors x {DRAWS} draws"
        + ("" if "planner (decision)" in strategies else "; objective='decision' not run")
    )
    show = sorted(
        {0, batch, 5 * batch, 10 * batch}
        | {round(full * f / batch) * batch for f in (1 / 8, 1 / 4, 1 / 2, 3 / 4, 1)}
    )
    # a strategy that stopped early (the decision objective's guard) has no row past its stop
    table = mean[mean.index.get_level_values("budget").isin(show)].unstack("strategy")
    with pd.option_context("display.width", 160, "display.max_rows", 100):
        print(table.round(4).to_string())
    uni = mean.loc["uniform"]
    for strategy in strategies:
        if strategy == "uniform":
            continue
        cur = mean.loc[strategy]
        need_a = budget_to_reach(cur["agreement"], uni["agreement"][half])
        need_s = budget_to_reach(cur["total_sd"], uni["total_sd"][half], higher_is_better=False)
        per_rep = [
            budget_to_reach(
                r.set_index("budget")["agreement"], u.set_index("budget")["agreement"][half]
            )
            for (_, r), (_, u) in zip(
                res[res.strategy == strategy].groupby("rep"),
                res[res.strategy == "uniform"].groupby("rep"),
                strict=True,
            )
        ]
        print(
            f"{strategy}: uniform's agreement at budget {half} "
            f"({uni['agreement'][half]:.4f}) is reached at budget {_reached(need_a, half)}; "
            f"per answer order: {per_rep}; uniform's total sd at {half} "
            f"({uni['total_sd'][half]:.2f}) at budget {_reached(need_s, half)}"
        )
    for target in (0.95, 0.99, 1.0):
        need = {s: budget_to_reach(mean.loc[s]["agreement"], target) for s in strategies}
        print(
            f"budget to reach agreement {target:g}: "
            + ", ".join(f"{s} {b}" for s, b in need.items())
        )
    print(f"time: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
