"""Analysis of fits and counts: per-item and per-rater tables, scoring at scale, planning,
prior sensitivity and model comparison.

Imports ``ambppl.inference``, ``ambppl.maths`` and ``ambppl.data``, never the report or the CLI.
"""

from ambppl.analysis.comparison import (
    compare,
    loo,
)
from ambppl.analysis.hyperprior import implied_prior
from ambppl.analysis.planning import (
    answers_needed,
    expected_posterior_sd,
    expected_posterior_var,
    next_batch,
    plan,
)
from ambppl.analysis.scoring import (
    MCSE_TARGET,
    SCORE_COLUMNS,
    LazyScore,
    score,
)
from ambppl.analysis.sensitivity import (
    LEARNED_PRIORS,
    PSENSE_THRESHOLD,
    hyperprior_sensitivity,
    prior_sensitivity,
)
from ambppl.analysis.summary import (
    rank,
    select,
    stratify,
    summarize,
    summarize_counts,
)

__all__ = [
    "LEARNED_PRIORS",
    "MCSE_TARGET",
    "PSENSE_THRESHOLD",
    "SCORE_COLUMNS",
    "LazyScore",
    "answers_needed",
    "compare",
    "expected_posterior_sd",
    "expected_posterior_var",
    "hyperprior_sensitivity",
    "implied_prior",
    "loo",
    "next_batch",
    "plan",
    "prior_sensitivity",
    "rank",
    "score",
    "select",
    "stratify",
    "summarize",
    "summarize_counts",
]
