"""Cells as category labels and ids, and the order of the categories.

How a cell of a table becomes a label (text as written, without surrounding whitespace;
numbers as their canonical text), when text ids are plain integers (given as int64), what
``na_values=`` and ``categories=`` may hold, the final category order (can't-solve last)
and the default ``cant_solve=`` of labelled counts (:data:`_FROM_DATA`). Shared by the
readers of :mod:`ambppl.data`, which also take from here ``_show``, the short lists of
values that error messages show (:func:`ambppl.internal.checks.show_values`).
"""

from __future__ import annotations

import enum
import numbers
import re
import shlex
from collections import Counter
from decimal import Decimal
from typing import Any

import numpy as np

from ambppl.internal.checks import cant_solve_absent
from ambppl.internal.checks import show_values as _show  # the readers' name for it
from ambppl.internal.messages import say

#: A number as written in a text file: ``7``, ``-2.5``, ``.5``, ``1e3`` (labels that are all
#: numbers sort numerically).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?")
#: An id written as a plain integer, read as int64: no sign ``+``, no leading zero, no point.
_PLAIN_INTEGER = re.compile(r"0|-?[1-9][0-9]*")


class _FromData(enum.Enum):
    """The type of :data:`_FROM_DATA` (an enum member: one object, kept by copies and
    pickles)."""

    FROM_DATA = "the data's own"

    def __repr__(self) -> str:  # as a reader's signature shows the default
        return "<the data's own>"


#: The default ``cant_solve=`` of the readers of labelled counts (a DataArray, a zarr
#: store): the can't-solve label the data carry (``attrs["cant_solve"]``), if any; an
#: explicit None means no can't-solve category, whatever the data carry. A label cannot
#: be this object, so no label is mistaken for "left out" (``"auto"`` could be a label).
_FROM_DATA = _FromData.FROM_DATA


def _quote(text: str) -> str:
    """``text`` as typed in a shell."""
    return shlex.quote(text)


def _label_str(value: Any) -> str:
    """The string form of one label: numpy scalars unwrapped, whole floats as ints, other
    floats as the shortest text that reads back to the same value at their own precision
    (``numpy.float32(0.1)`` is ``"0.1"``, not the ``"0.10000000149011612"`` of its float64
    value)."""
    if isinstance(value, np.floating) and not isinstance(value, float):  # float32, float16
        if value.is_integer():
            return str(int(value))
        return str(value)  # numpy's shortest text at the scalar's own precision
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _label_text(value: Any) -> str:
    """One answer of a table of answers as its label: :func:`_label_str` without surrounding
    whitespace (``" ?"`` and ``"?"`` are one label; a blank cell becomes ``""``, a missing
    label)."""
    return _label_str(value).strip()


def _float_dtype(dtype: Any) -> np.dtype | None:
    """The numpy float dtype of a column's cells (``dtype``: numpy's, pandas' nullable
    ``Float32``, or a categorical's, that of its categories); None for other columns."""
    dtype = getattr(dtype, "categories", dtype)  # a categorical's: that of its categories
    dtype = getattr(dtype, "dtype", dtype)
    dtype = getattr(dtype, "numpy_dtype", dtype)  # pandas' nullable Float32
    return dtype if isinstance(dtype, np.dtype) and dtype.kind == "f" else None


def _label_texts(values: Any, dtype: Any = None) -> list[str]:
    """:func:`_label_text` of each of ``values`` (distinct answers: an array, an Index) of a
    column of ``dtype`` (default: their own); the floats of a float32 or float16 column at
    its own precision (iterating an Index gives Python floats, whose text shows float64
    digits, and pandas factorizes float16 as float32)."""
    floats = _float_dtype(getattr(values, "dtype", None) if dtype is None else dtype)
    if floats is not None:
        values = np.asarray(values, dtype=floats)
    return [_label_text(v) for v in values]


def _as_number(label: str) -> Decimal | None:
    """The value of a label that is a number as written (``"2"``, ``"2.0"``, ``"1e3"``),
    exactly; None for other text."""
    text = label.strip()
    match = _NUMBER.fullmatch(text)
    if match is None or (match["exp"] and abs(int(match["exp"])) > 100_000):
        return None  # not a number (or an exponent beyond what compares exactly)
    return Decimal(text)


def _plain_integer_ids(values: np.ndarray) -> np.ndarray:
    """Ids read as text, as int64 when every one is a plain integer that fits (``"7"``,
    ``"-3"``; which print the same, so no two ids merge); otherwise unchanged. Missing ids
    (NaN) keep the text."""
    if values.dtype != object or len(values) == 0:
        return values
    if not all(isinstance(v, str) and _PLAIN_INTEGER.fullmatch(v) for v in values):
        return values
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except OverflowError:  # more than 19 digits: kept as text
        return values


def _text_id_column(values: Any) -> np.ndarray:
    """A whole id column read as text (e.g. the rater ids kept by :func:`read_long`) under
    the rule of :func:`_plain_integer_ids`, converted through its distinct values."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=True)
    if np.any(codes < 0):
        return np.asarray(values, dtype=object)
    converted = _plain_integer_ids(np.asarray(uniques, dtype=object))
    if converted.dtype == object:
        return np.asarray(values, dtype=object)
    return converted[codes]


def _check_na_values(na_values: Any) -> frozenset[str]:
    """Validate ``na_values=``: label texts that mean "no answer" (besides empty cells), as
    labels (:func:`_label_text`: without surrounding whitespace)."""
    if na_values is None:
        return frozenset()
    if isinstance(na_values, str | numbers.Real) and not isinstance(na_values, bool):
        na_values = [na_values]
    option = say("na_values", "--na-values")
    if isinstance(na_values, bytes) or not hasattr(na_values, "__iter__"):
        raise TypeError(
            f"{option} must be a list of label texts that mean 'no answer', such as "
            f"['N/A', 'NA'], but got {na_values!r}"
        )
    out = []
    for value in na_values:
        if isinstance(value, bool) or not isinstance(value, str | numbers.Real):
            raise TypeError(
                f"{option} must list label texts such as 'N/A', but got {value!r} in {na_values!r}"
            )
        out.append(_label_text(value))
    return frozenset(out)


def _check_na_conflict(
    na_values: frozenset[str], categories: list[str] | None, cant_solve: Any
) -> None:
    """Refuse ``na_values=`` that names the can't-solve label or a label of ``categories=``
    (both compared as :func:`_label_text` gives them): it would drop those answers as missing,
    so the label the caller names could never be counted."""
    if not na_values:
        return
    option = say("na_values", "--na-values")
    if cant_solve is not None and _label_text(cant_solve) in na_values:
        text = _label_text(cant_solve)
        named = say(f"cant_solve={cant_solve!r}", f"--cant-solve {_quote(str(cant_solve))}")
        raise ValueError(
            f"{option} must not name the can't-solve label, but it names {text!r}, which "
            f"{named} gives: {option} removes those answers as missing, so {text!r} could "
            f"never be counted; drop {text!r} from {option}"
        )
    both = [c for c in categories or [] if c in na_values]
    if both:
        raise ValueError(
            f"{option} must not name a label of categories=, but it names {_show(both)}: "
            f"{option} removes those answers as missing, so that category would count none; "
            f"drop {_show(both)} from {option}"
        )


def _check_categories(categories: Any, *, strip: bool = False) -> list[str] | None:
    """Validate ``categories=``: a list-like of at least 2 distinct labels, as strings;
    ``strip``: as the labels of a table of answers (:func:`_label_text`), without surrounding
    whitespace."""
    if categories is None:
        return None
    if isinstance(categories, str | bytes) or not hasattr(categories, "__iter__"):
        raise TypeError(
            "categories must be a list of labels such as ['neg', 'pos', \"can't tell\"], "
            f"but got {categories!r}"
        )
    cats = [(_label_text if strip else _label_str)(c) for c in categories]
    dupes = sorted(c for c, n in Counter(cats).items() if n > 1)
    if dupes:
        spaces = " (surrounding whitespace aside, as the answers are read)" if strip else ""
        raise ValueError(f"categories must be distinct labels{spaces}, but {_show(dupes)} repeat")
    if len(cats) < 2:
        raise ValueError(
            f"categories must list at least 2 labels (ambiguity needs a choice), but got {cats!r}"
        )
    return cats


def _order(
    found: list[str],
    categories: list[str] | None,
    cant_solve: Any,
    *,
    sort: bool,
    strip: bool = False,
) -> tuple[list[str], str | None]:
    """Final category order (can't-solve last) and the can't-solve label as a string.

    ``sort``: labels sorted numerically when every one is a number as written (ties, such as
    ``"2"`` and ``"2.0"``, by their text), else as text. ``strip``: the can't-solve label is
    matched as the labels of a table of answers are (:func:`_label_text`)."""
    if categories is not None:
        extra = [c for c in found if c not in categories]
        if extra:
            listed = say(f"categories={categories!r}", f"--categories {','.join(categories)}")
            where = say("categories", "--categories")
            raise ValueError(
                f"labels {_show(extra)} occur in the data but are not in {listed}; add them "
                f"to {where} (the can't-solve answer too) or remove those answers"
            )
        order = list(categories)
    elif sort:
        values = [_as_number(c) for c in found]
        if all(v is not None for v in values):
            order = [c for _, c in sorted(zip(values, found, strict=True))]
        else:
            order = sorted(found)
    else:
        order = list(found)
    cs = None
    if cant_solve is not None:
        cs = (_label_text if strip else _label_str)(cant_solve)
        if cs not in order:
            raise ValueError(cant_solve_absent(cant_solve, sorted(found)))
        order = [c for c in order if c != cs] + [cs]
    if len(order) < 2:
        fix = say(
            "pass categories=[...] to list the answers nobody gave",
            "check that --label names the column of answers, or list the categories with "
            "--categories (e.g. --categories yes,no,<the can't-solve answer>)",
        )
        raise ValueError(
            f"the annotations must have at least 2 categories, but only {order!r} occurs; {fix}"
        )
    return order, cs


def _is_number_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _empty_items_error(items: np.ndarray, empty: np.ndarray, why: str) -> ValueError:
    ids = items[empty].tolist()
    return ValueError(
        f"every item must have at least one answer, but {len(ids)} item(s) {_show(ids)} "
        f"have none {why}; remove those items or supply their answers"
    )
