"""ambppl.inference.compilation: fits compile without fast math, so a seed fixes the draws."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ambppl
from ambppl.inference.compilation import reproducible_compilation

pytensor = pytest.importorskip("pytensor")


@pytest.fixture
def fastmath_on():
    """PyTensor's default, fast math on, whatever the session had; restored afterwards."""
    before = pytensor.config.numba__fastmath
    pytensor.config.numba__fastmath = True
    yield
    pytensor.config.numba__fastmath = before


def test_the_block_turns_fast_math_off_and_gives_the_flag_back(fastmath_on):
    with reproducible_compilation():
        assert pytensor.config.numba__fastmath is False
    assert pytensor.config.numba__fastmath is True


def test_the_flag_comes_back_after_an_error(fastmath_on):
    with pytest.raises(RuntimeError, match="inside"), reproducible_compilation():
        raise RuntimeError("inside")
    assert pytensor.config.numba__fastmath is True


def test_a_user_who_turned_fast_math_off_keeps_it_off():
    before = pytensor.config.numba__fastmath
    pytensor.config.numba__fastmath = False
    try:
        with reproducible_compilation():
            pass
        assert pytensor.config.numba__fastmath is False
    finally:
        pytensor.config.numba__fastmath = before


def test_fits_in_threads_keep_it_off_until_the_last_one_ends(fastmath_on):
    # Two overlapping blocks in two threads: the first to end must not turn fast math back on
    # under the second (a context that restores its own saved value would).
    first_in, first_out, second_done = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with reproducible_compilation():
            first_in.set()
            second_done.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with reproducible_compilation():
            second_done.set()
            first_out.wait(5)
            seen["after the first ended"] = pytensor.config.numba__fastmath

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after the first ended": False}
    assert pytensor.config.numba__fastmath is True


def test_nested_blocks(fastmath_on):
    with reproducible_compilation():
        with reproducible_compilation():
            pass
        assert pytensor.config.numba__fastmath is False
    assert pytensor.config.numba__fastmath is True


_FIT = """
import hashlib, warnings
import numpy as np, xarray as xr
import ambppl
counts = xr.DataArray(
    np.array([[5, 0, 0], [2, 2, 1], [1, 3, 2]]), dims=("item", "category"),
    coords={"item": ["clear", "mixed", "unsure"], "category": ["yes", "no", "cs"]},
    attrs={"cant_solve": "cs"})
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    result = ambppl.fit(counts, method="nuts", draws=300, chains=2, random_seed=20261125,
                        progressbar=False, sample_kwargs={"tune": 300, "cores": 1})
print(hashlib.sha256(result["posterior"]["q"].values.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_a_seeded_nuts_fit_draws_the_same_with_a_fresh_and_a_warm_cache(tmp_path):
    # The first run compiles into an empty PyTensor cache, the second loads from it; both
    # with PyTensor's default (fast math on). With fast math the two runs drew different q
    # (the gradient differed in its last bits; measured on this 3-item fit, stop 51).
    env = {
        **os.environ,
        "PYTENSOR_FLAGS": f"base_compiledir={tmp_path},numba__fastmath=True",
    }
    runs = [
        subprocess.run(
            [sys.executable, "-c", _FIT],
            capture_output=True,
            text=True,
            env=env,
            cwd=Path(ambppl.__file__).parents[1],
            check=True,
        ).stdout.split()[-1]
        for _ in range(2)
    ]
    assert (tmp_path / "numba").is_dir()  # the first run filled the cache the second read
    assert runs[0] == runs[1]


_LIGHT = """
import sys
import numpy as np, pandas as pd, xarray as xr
import ambppl
from ambppl.data.readers import read_long
counts = xr.DataArray(np.array([[5, 0, 0], [2, 2, 1]]), dims=("item", "category"),
    coords={"item": ["a", "b"], "category": ["y", "n", "cs"]}, attrs={"cant_solve": "cs"})
ambppl.fit(counts, draws=10, chains=1, random_seed=1)
frame = pd.DataFrame({"item": list("aabbcc"), "rater": ["r1", "r2"] * 3,
                      "label": ["x", "y", "x", "x", "y", "y"]})
ambppl.fit(read_long(frame, item="item", rater="rater", label="label"), "dawid_skene",
           method="map")
print(",".join(m for m in ("pymc", "pytensor") if m in sys.modules))
"""


def test_the_routes_that_compile_nothing_do_not_load_pytensor():
    # the exact route and dawid_skene's own mode (numpy and scipy) stay as light as before:
    # only a route that compiles enters reproducible_compilation, which imports PyTensor
    loaded = subprocess.run(
        [sys.executable, "-c", _LIGHT],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(ambppl.__file__).parents[1],
    ).stdout.strip()
    assert loaded == ""
