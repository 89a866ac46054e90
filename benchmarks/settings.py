"""``KEY=JSON`` settings on the benchmarks' command lines (model parameters and the like).

One parser for ``--set`` of ``rater_effects_real.py`` and ``--param`` of ``sbc_full.py`` and
``dawid_skene_gold.py`` (that option itself: :func:`add_param_option`): ``rater_scale=2.5``
is ``("rater_scale", 2.5)``, ``centred=true`` is ``("centred", True)``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def setting(text: str) -> tuple[str, Any]:
    """One ``KEY=JSON`` setting as ``(key, value)``; usable as an argparse ``type=``.

    Raises
    ------
    argparse.ArgumentTypeError
        Without a key and ``=``, or where the value is not JSON.
    """
    key, sep, value = text.partition("=")
    if not key or not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=JSON, but got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: the value is not JSON ({err.msg})") from None


def add_param_option(parser: argparse.ArgumentParser, help: str) -> None:
    """Give ``parser`` the repeatable option ``--param KEY=JSON`` (a list of :func:`setting`
    pairs, empty by default), with ``help`` saying what the parameters go to."""
    parser.add_argument(
        "--param", action="append", default=[], type=setting, metavar="KEY=JSON", help=help
    )
