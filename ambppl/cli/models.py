"""``ambppl models``: the model catalog, with each model's methods and, with ``--verbose``,
its parameters and the closed-form reference that checks it."""

from __future__ import annotations

import argparse
from typing import Any

from ambppl.cli.common import subcommand
from ambppl.inference.catalog import get_model, list_models
from ambppl.inference.fitting import NUTS_METHODS


@subcommand("models")
def _add_models(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "models",
        help="list the model catalog",
        description="List the models that --model accepts with the methods that --method "
        "accepts for each (the default first) and, with --verbose, their parameters (set "
        "with --param NAME=VALUE) and the closed-form reference that checks them.",
        epilog="examples:\n  ambppl models\n  ambppl models --verbose",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also show parameters and references"
    )
    parser.set_defaults(handler=_run_models)
    return parser


def _run_models(args: argparse.Namespace) -> int:

    catalog = list_models()
    for name, row in catalog.iterrows():
        info = get_model(str(name)).info
        methods = list(info["methods"])
        shown = ", ".join([f"{methods[0]} (default)", *methods[1:]])
        print(f"{name}  (methods: {shown})")
        print(f"    {row['description']}")
        if args.verbose:
            params = info.get("parameters") or {}
            for key, spec in params.items():
                spec = spec if isinstance(spec, dict) else {"description": spec}
                how = f"--param {key}=VALUE"
                if key == "prior":
                    how = f"--prior or {how}"
                default = spec.get("default")
                print(f"    {key} (default {default}; {how}): {spec.get('description', '')}")
            nuts = _nuts_line(str(name), methods)
            if nuts:
                print(f"    {nuts}")
            print(f"    reference: {row['reference']}")
    return 0


#: What ``fit`` uses where neither the info record nor the model file sets a NUTS setting.
_FIT_NUTS = {"draws": 1000, "chains": 4, "tune": "PyMC's 1000", "target_accept": "PyMC's 0.8"}


def _nuts_line(name: str, methods: list[str]) -> str:
    """The NUTS defaults of a model with a NUTS method: the info record's over ``fit``'s,
    and whether the model file changes them per design (``nuts_defaults``)."""
    nuts = [m for m in methods if m in NUTS_METHODS]
    if not nuts:
        return ""
    entry = get_model(name)
    own = {**_FIT_NUTS, **entry.info.get("nuts_defaults", {})}
    shown = "; ".join(f"{key} {value}" for key, value in own.items())
    line = f"NUTS defaults (--method {', '.join(nuts)}): {shown}"
    if getattr(entry.module, "nuts_defaults", None) is not None:
        line += (
            f"; changed per design by nuts_defaults() in {entry.path.name} (its docstring "
            "has the rules)"
        )
    return line + "; --draws, --chains, --tune and --target-accept win"
