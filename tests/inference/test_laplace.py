"""ambppl/inference/laplace.py: the mode and the Gaussian draws against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from ambppl.inference.laplace import laplace_draws

pm = pytest.importorskip("pymc")

DRAWS, CHAINS = 2000, 2
N = DRAWS * CHAINS


def _chain_model():
    """x ~ N(1, 1), y | x ~ N(x, 0.5) and nothing observed: the joint is Gaussian, so its
    Laplace approximation is exact (mean (1, 1), var x 1, var y 1.25, cov 1)."""
    with pm.Model() as model:
        x = pm.Normal("x", 1.0, 1.0)
        pm.Normal("y", x, 0.5)
    return model


def _sd_tolerance(sd: float) -> float:
    # 5 standard errors of a sample sd from N independent normal draws: sd / sqrt(2 N)
    return 5.0 * sd / np.sqrt(2.0 * N)


def test_the_draws_of_a_gaussian_joint_are_that_gaussian():
    post, _, info = laplace_draws(
        _chain_model(), draws=DRAWS, chains=CHAINS, rng=np.random.default_rng(3)
    )
    x = post["x"].values.ravel()
    y = post["y"].values.ravel()
    assert info["optimizer_converged"] and info["hessian_clipped"] == 0
    assert info["n_parameters"] == 2
    assert post["x"].dims == ("chain", "draw") and post["x"].shape == (CHAINS, DRAWS)
    for draws, mean, sd in ((x, 1.0, 1.0), (y, 1.0, np.sqrt(1.25))):
        assert abs(draws.mean() - mean) < 5.0 * sd / np.sqrt(N)
        assert abs(draws.std() - sd) < _sd_tolerance(sd)
    # the correlation 1 / sqrt(1.25); its standard error (1 - rho^2) / sqrt(N)
    rho = 1.0 / np.sqrt(1.25)
    assert abs(np.corrcoef(x, y)[0, 1] - rho) < 5.0 * (1.0 - rho**2) / np.sqrt(N)
