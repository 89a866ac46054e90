"""Cut the bundled example ``ambppl/examples/weather_sentiment.csv`` from the shared data.

Source: ``../shared/data/cf_weather_sentiment/weather-non-agg-DFE.csv`` (snorkel-team/snorkel
``tutorials/crowdsourcing/data/weather-non-agg-DFE.csv``; CrowdFlower "Data for Everyone",
weather sentiment): 1,000 tweets x 20 labels each, 5 answers incl. "I can't tell".

The sample is 200 tweets drawn with ``numpy.random.default_rng(20261125)``, stratified on
whether a tweet received at least one "I can't tell" answer so that the sample keeps the
full set's share of such tweets (about 63 %). All 20 labels of each drawn tweet are kept,
in the original row order. Columns are renamed to crowd-kit's names:
``tweet_id -> task``, ``worker_id -> worker``, ``emotion -> label``; the tweet text and the
CrowdFlower metadata are left out.

Run from the repository root:  ``.venv/bin/python tests/reference/make_example_data.py``
(rerunning it reproduces the committed file byte for byte).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared" / "data" / "cf_weather_sentiment" / "weather-non-agg-DFE.csv"
TARGET = ROOT / "ambppl" / "examples" / "weather_sentiment.csv"
CANT_SOLVE = "I can't tell"
N_ITEMS = 200
SEED = 20261125


def make(source: Path = SOURCE) -> pd.DataFrame:
    """Return the example subset (columns task, worker, label)."""
    raw = pd.read_csv(source, usecols=["tweet_id", "worker_id", "emotion"])
    rng = np.random.default_rng(SEED)
    has_cs = raw.groupby("tweet_id", sort=True)["emotion"].agg(
        lambda s: bool((s == CANT_SOLVE).any())
    )
    n_cs = round(N_ITEMS * has_cs.mean())
    with_cs = has_cs.index[has_cs.to_numpy()].to_numpy()
    without_cs = has_cs.index[~has_cs.to_numpy()].to_numpy()
    chosen = np.concatenate(
        [
            rng.choice(with_cs, size=n_cs, replace=False),
            rng.choice(without_cs, size=N_ITEMS - n_cs, replace=False),
        ]
    )
    subset = raw[raw["tweet_id"].isin(chosen)]
    return subset.rename(columns={"tweet_id": "task", "worker_id": "worker", "emotion": "label"})[
        ["task", "worker", "label"]
    ]


def main() -> None:
    """Write the example CSV."""
    df = make()
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(TARGET, index=False, lineterminator="\n")
    n_cs_items = df.groupby("task")["label"].agg(lambda s: (s == CANT_SOLVE).any()).sum()
    print(
        f"wrote {TARGET}: {len(df)} rows, {df['task'].nunique()} tasks "
        f"({n_cs_items} with a {CANT_SOLVE!r} answer), {df['worker'].nunique()} workers"
    )


if __name__ == "__main__":
    main()
