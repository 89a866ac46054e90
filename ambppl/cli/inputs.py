"""The input named on the command line, read with the data layer
(:func:`ambppl.data.read_input`, which checks the path): the column options as reader keywords,
mistakes reported with the option that fixes them (never a Python keyword)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ambppl.cli.common import UsageError, _one_line, _reporter
from ambppl.cli.signals import _warnings_as_lines
from ambppl.data import check_input_path, command_line_messages, holds_counts, read_input
from ambppl.inference.catalog import get_model
from ambppl.internal.warned import collecting_warnings


def _columns(args: argparse.Namespace) -> dict[str, Any]:
    """``item``, ``rater`` and ``label`` for the reader: column names, or with ``--no-header``
    0-based positions; ``rater`` is None with ``--no-rater`` (or ``--no-header`` without
    ``--rater``)."""
    defaults = {"item": "task", "rater": "worker", "label": "label"}
    given = {name: getattr(args, name) for name in defaults}
    if args.no_rater and given["rater"] != defaults["rater"]:
        raise UsageError(f"--no-rater and --rater {given['rater']} contradict; give one of them")
    if not args.no_header:
        return {**given, "rater": None if args.no_rater else given["rater"]}
    out: dict[str, Any] = {}
    for name, value in given.items():
        if value == defaults[name] and (name == "rater" or args.layout in ("wide", "counts")):
            out[name] = None if name == "rater" else value  # no rater; wide: ids by row
            continue
        try:
            position = int(value)
        except ValueError:
            position = -1
        if position < 0:
            default = " (the default, a column name)" if value == defaults[name] else ""
            raise UsageError(
                f"with --no-header, --{name} must be the 0-based position of the {name} "
                f"column (e.g. --item 1 --rater 0 --label 2), but got {value!r}{default}"
            )
        out[name] = position
    if args.no_rater:
        out["rater"] = None
    return out


def _format(args: argparse.Namespace) -> str | None:
    """``format=`` of the readers: ``--layout`` and ``--format`` joined by ``+``."""
    return "+".join(part for part in (args.layout, args.format) if part) or None


def _text_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reading options of a text file that the command line sets (``--sep``,
    ``--comment``, ``--no-header``, ``--encoding``, ``--na-values``), as reader keywords."""
    options: dict[str, Any] = {}
    if args.sep is not None:
        options["sep"] = args.sep
    if args.comment is not None:
        options["comment"] = args.comment
    if args.no_header:
        options["header"] = None
    if args.encoding is not None:
        options["encoding"] = args.encoding
    if args.na_values:
        options["na_values"] = args.na_values
    return options


def _read(
    args: argparse.Namespace,
    *,
    answers: bool = False,
    lazy: int | None = None,
    chunk_items: int | None = None,
    collect: list[Any] | None = None,
) -> Any:
    """Read the annotations named on the command line (:func:`ambppl.data.read_input`): the
    counts, for a model of answers (``answers``, e.g. ``rater_effects``) one row per answer
    with the ``--rater`` column, with ``lazy`` counts that open in chunks opened lazily, with
    ``chunk_items`` a long answers file (``--layout long``, or no ``--layout``: long is the
    readers' default) counted with dask.

    Mistakes are reported with the option that fixes them (``--format tsv``, ``--no-header``,
    ``--comment '#'``), never with a Python keyword: the reading runs inside
    :func:`ambppl.data.command_line_messages`. Warnings of the reader are printed as one
    line each; with ``collect`` (a list) they are also appended to it (as
    :func:`ambppl.internal.warned.collecting_warnings` records them), for a report's page.
    """

    path = check_input_path(args.annotations)
    fmt = _format(args)
    if answers and holds_counts(path, fmt):
        raise UsageError(
            f"--model {args.model} fits one row per answer with rater ids, but '{path}' holds "
            "counts; give the answers file (--layout long or wide)"
        )
    columns = {**_columns(args), "cant_solve": args.cant_solve}
    if args.categories:
        columns["categories"] = args.categories
    try:
        with command_line_messages(), _warnings_as_lines():
            # raised again when the inner block ends: printed by _warnings_as_lines, once each
            with collecting_warnings() as raised:
                data = read_input(
                    path,
                    answers=answers,
                    lazy=lazy,
                    chunk_items=chunk_items,
                    format=fmt,
                    progress=_reporter(args),
                    per_category=_per_category_options(args),
                    **columns,
                    **_text_options(args),
                )
            if collect is not None:
                collect.extend(raised)
    except ImportError as err:  # e.g. zarr or dask not installed
        raise UsageError(_one_line(str(err))) from err
    if answers and data["rater"].isna().all():
        where = (
            "no rater column was given"
            if columns["rater"] is None
            else f"column --rater {args.rater!r} holds none"
        )
        raise UsageError(
            f"--model {args.model} needs rater ids, but {where}; name the rater column with "
            "--rater (its 0-based position with --no-header)"
        )
    return data


def _reads_answers(args: argparse.Namespace) -> bool:
    """Whether the chosen model fits one row per answer (its info record's ``data`` is
    ``"long"``, e.g. ``rater_effects``) rather than counts."""
    return get_model(args.model).info.get("data", "counts") == "long"


def _names_raters(args: argparse.Namespace) -> bool:
    """Whether the command line names a rater column of an answers file (not counts)."""
    if holds_counts(Path(args.annotations), _format(args)):
        return False
    return _columns(args)["rater"] is not None


def _per_category_options(args: argparse.Namespace) -> list[str]:
    """The options given a value per category (``--prior 1,1,2``, ``--param mu_prior=1,1,2``):
    the reader names the order of the categories they are read in (a progress line)."""
    prior = getattr(args, "prior", None)
    given = ["--prior"] if isinstance(prior, list) else []
    given += [
        f"--param {name}" for name, value in getattr(args, "param", None) or []
        if isinstance(value, list)
    ]  # fmt: skip
    return given
