"""Shared fixtures: the read-only ../shared folder and seeded generators."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture
def shared_data() -> Path:
    """Path to ``../shared/data``; skips the test where that folder is absent."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"{path} is absent (it exists only in development checkouts and CI)")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    """A generator with a fixed seed; tests that need their own seed make one."""
    return np.random.default_rng(20261125)
