"""The model options of the command line as library keywords (checked against the catalog
before any data are read)."""

from __future__ import annotations

import argparse
from typing import Any

from ambppl.cli.common import UsageError
from ambppl.inference.catalog import get_model, list_models, parameter_owners
from ambppl.inference.fitting import NUTS_METHODS


def _model_settings(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The method and the model parameters from the command line, checked against the model.

    Runs before the data are read, so a mistake costs nothing.
    """

    catalog = list_models()
    if args.model not in catalog.index:
        raise UsageError(
            f"--model must be one of {', '.join(map(str, catalog.index))} (see 'ambppl "
            f"models'), but got {args.model!r}"
        )
    info = get_model(args.model).info
    names = list(info["parameters"])
    described = ", ".join(names) if names else "none"
    params: dict[str, Any] = {}
    for name, value in args.param:
        if name not in names:
            raise UsageError(
                f"--param {name}: model {args.model!r} has no parameter {name!r}; its "
                f"parameters are {described} (see 'ambppl models --verbose')"
            )
        if name in params:
            raise UsageError(f"--param {name} is given twice; give each parameter once")
        params[name] = value
    if args.prior is not None:
        if "prior" not in names:
            owners = parameter_owners().get("prior", [])
            raise UsageError(
                f"--prior sets the parameter 'prior' of {', '.join(owners)}, but model "
                f"{args.model!r} has the parameters {described}; set them with --param "
                "NAME=VALUE (see 'ambppl models --verbose')"
            )
        if "prior" in params:
            raise UsageError("--prior and --param prior=... both set the prior; give one of them")
        params["prior"] = args.prior
    offered = list(info["methods"])
    method = args.method or offered[0]
    if method not in offered:
        raise UsageError(
            f"--method {method}: model {args.model!r} offers the methods "
            f"{', '.join(offered)} (default {offered[0]}); choose one of them"
        )

    nuts_options = _nuts_options(args)
    if nuts_options and method not in NUTS_METHODS:
        given = " and ".join(f"--{k.replace('_', '-')}" for k in nuts_options)
        nuts = [m for m in offered if m in NUTS_METHODS]
        fix = f"choose --method {' or '.join(nuts)}" if nuts else "leave them out"
        raise UsageError(
            f"{given} tune NUTS, but --method {method} of model {args.model!r} draws without "
            f"it; drop {given} or {fix}"
        )
    return method, params


def _nuts_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--tune`` and ``--target-accept`` as ``pymc.sample`` keywords (those given)."""
    pairs = (
        ("tune", getattr(args, "tune", None)),
        ("target_accept", getattr(args, "target_accept", None)),
    )
    return {key: value for key, value in pairs if value is not None}
