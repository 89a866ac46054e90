"""``ambppl models``: the model catalog, with each model's methods and, with ``--verbose``,
its parameters and the closed-form reference that checks it."""

from __future__ import annotations

import argparse
from typing import Any

from ambppl.cli.common import subcommand
from ambppl.inference.catalog import get_model, list_models


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
            print(f"    reference: {row['reference']}")
    return 0
