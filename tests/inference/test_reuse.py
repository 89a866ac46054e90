"""ambppl.inference.reuse: one frozen program per shape, each fit's data set into it."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import xarray as xr

import ambppl
from ambppl.inference import reuse
from ambppl.inference.catalog import get_model


def _counts(rng: np.random.Generator, n_items: int, categories=("x", "y", "cs")) -> xr.DataArray:
    q = rng.dirichlet([2.0, 3.0, 1.0][: len(categories)], size=n_items)
    values = np.array([rng.multinomial(6, p) for p in q])
    return xr.DataArray(
        values,
        dims=("item", "category"),
        coords={"item": np.arange(n_items), "category": list(categories)},
        name="counts",
        attrs={"cant_solve": "cs" if "cs" in categories else None},
    )


def _program(counts: xr.DataArray, **params):
    return get_model("hierarchical_dirichlet").module.hyper_model(counts, **params)


@pytest.fixture(autouse=True)
def _empty_cache():
    reuse.clear()
    yield
    reuse.clear()


def test_same_program_up_to_the_data(rng):
    small, large = _counts(rng, 20), _counts(rng, 300)  # different statistics' lengths
    assert reuse.same_program(_program(small), _program(large))
    # a prior parameter is a constant of the graph: another program
    assert not reuse.same_program(_program(small), _program(small, kappa_scale=2.0))
    assert not reuse.same_program(_program(small), _program(small, mu_prior=[1.0, 1.0, 2.0]))
    # other categories: another layout
    other = _counts(rng, 20, categories=("x", "y", "z"))
    assert not reuse.same_program(_program(small), _program(other))


def test_a_program_is_frozen_once_and_holds_each_fits_data(rng):
    first, second = _counts(rng, 30), _counts(rng, 45)
    with reuse.reused_program(_program(first), "hd") as frozen:
        assert frozen.__class__.__name__ == "FrozenModel"
        assert (
            frozen["stats_weight"].get_value().sum()
            == _program(first)["stats_weight"].get_value().sum()
        )
    with reuse.reused_program(_program(second), "hd") as again:
        assert again is frozen
        for name in ("stats_category", "stats_value", "stats_weight", "stats_total"):
            np.testing.assert_array_equal(
                again[name].get_value(), _program(second)[name].get_value()
            )
    # another key, or another program under the same key: a frozen model of its own
    with reuse.reused_program(_program(second), "other") as other_key:
        assert other_key is not frozen
    with reuse.reused_program(_program(second, kappa_scale=3.0), "hd") as other_prior:
        assert other_prior is not frozen
    assert len(reuse._CACHE) == 3


def test_a_program_in_use_is_not_handed_out_twice(rng):
    counts = _counts(rng, 30)
    with reuse.reused_program(_program(counts), "hd") as outer:
        with reuse.reused_program(_program(counts), "hd") as inner:
            assert inner is not outer
    # both are free now: the next fit takes one of them
    with reuse.reused_program(_program(counts), "hd") as third:
        assert third in (outer, inner)

    seen = []

    def worker():
        with reuse.reused_program(_program(counts), "hd") as frozen:
            seen.append(frozen)

    with reuse.reused_program(_program(counts), "hd") as held:
        with reuse.reused_program(_program(counts), "hd") as held_too:
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
    assert seen[0] is not held and seen[0] is not held_too


def test_the_cache_keeps_the_most_recent_programs(rng, monkeypatch):
    monkeypatch.setattr(reuse, "CACHE_SIZE", 2)
    counts = _counts(rng, 10)
    frozen = []
    for scale in (1.0, 2.0, 3.0):
        with reuse.reused_program(_program(counts, kappa_scale=scale), "hd") as model:
            frozen.append(model)
    assert [entry.frozen for entry in reuse._CACHE] == frozen[1:]
    with reuse.reused_program(_program(counts, kappa_scale=2.0), "hd") as model:
        assert model is frozen[1]
    assert [entry.frozen for entry in reuse._CACHE] == [frozen[2], frozen[1]]


def _fit(counts: xr.DataArray, seed: int, sample_kwargs: dict | None = None) -> xr.DataTree:
    with warnings.catch_warnings():  # short chains: the test compares draws, not convergence
        warnings.simplefilter("ignore", ambppl.ConvergenceWarning)
        return ambppl.fit(
            counts,
            "hierarchical_dirichlet",
            draws=100,
            chains=2,
            random_seed=seed,
            var_names=["amb"],
            log_likelihood=False,
            progressbar=False,
            sample_kwargs=sample_kwargs or {"tune": 100, "cores": 1},
        )


@pytest.mark.slow
def test_a_reused_program_gives_the_draws_of_a_fresh_one(rng, monkeypatch):
    """The second data set's fit through the program frozen for the first equals, draw for
    draw, its fit through a program built and compiled for it alone; and it compiles no new
    log density (PyMC's ValueGradFunction is built once)."""
    from pymc.model import core

    built = []
    init = core.ValueGradFunction.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(core.ValueGradFunction, "__init__", counting)
    first, second = _counts(rng, 40), _counts(rng, 70)
    _fit(first, 1)
    assert len(built) == 1
    reused = _fit(second, 2)
    assert len(built) == 1  # the second fit compiled nothing
    reuse.clear()
    fresh = _fit(second, 2)
    assert len(built) == 2
    for name in ("mu", "kappa", "amb"):
        np.testing.assert_array_equal(reused["posterior"][name], fresh["posterior"][name])
    np.testing.assert_array_equal(reused["log_prior"]["kappa"], fresh["log_prior"]["kappa"])
    # and the data of the fit in progress, not the previous one, decide the posterior
    assert not np.array_equal(
        _fit(first, 2)["posterior"]["kappa"].values, reused["posterior"]["kappa"].values
    )


@pytest.mark.slow
def test_a_reused_program_samples_in_worker_processes(rng):
    """PyMC's multiprocess sampling (cores > 1, the default on machines with 4 CPUs or more)
    pickles the step method with the reused program's compiled function into each worker."""
    first, second = _counts(rng, 40), _counts(rng, 70)
    kwargs = {"tune": 100, "cores": 2}
    _fit(first, 1, kwargs)
    reused = _fit(second, 2, kwargs)
    assert len(reuse._CACHE) == 1  # the second fit ran on the first one's program
    reuse.clear()
    fresh = _fit(second, 2, kwargs)
    np.testing.assert_array_equal(reused["posterior"]["kappa"], fresh["posterior"]["kappa"])
