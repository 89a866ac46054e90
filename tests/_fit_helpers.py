"""Helpers shared by the tests of fit's arguments (``tests/inference``): NUTS routes that
record what fit hands them instead of sampling."""

from __future__ import annotations

import importlib

import pytest

fitting = importlib.import_module("ambppl.inference.fitting")


class Sampled(Exception):
    """Raised by the recording route instead of sampling."""


def record_nuts_routes(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Replace fit's NUTS routes (``nuts``, ``collapsed``) by one that records the job's
    ``sampler`` and ``sample_kwargs`` in the returned dict and raises :class:`Sampled`: a
    test of a refusal fails (with ``Sampled``) where the check is missing instead of running
    PyMC, and an empty dict says that nothing reached a route."""
    seen: dict = {}

    def record(job):
        seen.update(sampler=job.sampler, sample_kwargs=job.sample_kwargs)
        raise Sampled

    for method in ("nuts", "collapsed"):
        monkeypatch.setitem(fitting._ROUTES, method, record)
    return seen
