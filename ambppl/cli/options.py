"""The options the subcommands share (input, model, summary, output) and the parsers of
option values: each mistake is one line naming the option (``argument --prior: must be
...``), exit status 2."""

from __future__ import annotations

import argparse
import codecs
import math
from decimal import Decimal, InvalidOperation

from ambppl.data import FILE_TYPES
from ambppl.inference.fitting import METHODS, VARIABLES

#: The largest ``--seed``: numpy's classic seed range (0 to 2**32 - 1), which every sampler
#: behind the command accepts.
SEED_MAX = 2**32 - 1


def _number(text: str) -> int | float:
    """``text`` as an int where it is an integer literal (``512``), else as a float."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return float(text)


def _numbers(text: str) -> int | float | list[int | float] | None:
    """One finite number or a comma-separated list of them; None if ``text`` is neither.

    Integer literals stay ints (``512``, not ``512.0``), so that a parameter which must be a
    whole number, such as ``--param n_nodes=512``, gets one; other numbers are floats.
    """
    try:
        values = [_number(p) for p in text.split(",")]
    except ValueError:
        return None
    try:
        if not all(math.isfinite(v) for v in values):
            return None
    except OverflowError:  # an integer literal beyond the float range
        return None
    return values[0] if len(values) == 1 else values


#: The words ``--param NAME=VALUE`` reads as switches (``--param centred=false``).
SWITCHES: dict[str, bool | None] = {"true": True, "false": False, "null": None, "none": None}


def _param(text: str) -> tuple[str, bool | int | float | list[int | float] | None]:
    """Parse ``--param NAME=VALUE``: VALUE is a number, a comma-separated list of numbers,
    or a switch (``true``, ``false``, ``null``: True, False, None)."""
    name, sep, value = text.partition("=")
    name = name.strip()
    word = value.strip().lower()
    if sep and word in SWITCHES and name.isidentifier():
        return name, SWITCHES[word]
    parsed = _numbers(value) if sep and value.strip() else None
    if not name.isidentifier() or parsed is None:
        raise argparse.ArgumentTypeError(
            "must be NAME=VALUE with a model parameter's name and a number, a "
            "comma-separated list of numbers or true/false/null (e.g. --param "
            f"kappa_scale=0.5, --param mu_prior=1,1,2 or --param centred=false), but got {text!r}"
        )
    return name, parsed


#: How ``--prior`` (and a list given to ``--param``) is read per category, for the help.
PRIOR_PER_CATEGORY = (
    "one per category, comma-separated, in the order the data are read: the labels sorted "
    "(a count table: its columns), the can't-solve category last; a progress line names "
    "that order"
)


def _prior(text: str) -> float | list[float]:
    """Parse ``--prior``: one positive number or a comma-separated list of them."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if not values or not all(v > 0 and v != float("inf") for v in values):
        raise argparse.ArgumentTypeError(
            f"must be a positive number (symmetric Dirichlet prior, e.g. --prior 0.5) or a "
            f"comma-separated list with one positive number per category (e.g. --prior "
            f"1,1,2), but got {text!r}"
        )
    return values[0] if len(values) == 1 else values


def _positive_int(text: str) -> int:
    """Parse a positive integer option."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, but got {text!r}")
    return value


def _open_interval(text: str, high: float, example: str, why: str = "") -> float:
    """Parse a number in the open interval (0, ``high``)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < high:
        raise argparse.ArgumentTypeError(
            f"must be a number in the open interval (0, {high:g}){why}, e.g. {example}, but "
            f"got {text!r}"
        )
    return value


def _mcse(text: str) -> float:
    """Parse an MCSE bound of a probability: a number in (0, 0.5), a probability's largest
    standard deviation being 0.5."""
    why = " (a probability's standard deviation is at most 0.5)"
    return _open_interval(text, 0.5, "0.005", why)


def _open_prob(text: str) -> float:
    """Parse a probability in the open interval (0, 1)."""
    return _open_interval(text, 1.0, "0.94")


def _seed(text: str) -> int:
    """Parse ``--seed``: a whole number from 0 to :data:`SEED_MAX`."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 0 to {SEED_MAX}, e.g. --seed 7, but got {text!r}"
        )
    return value


def _measure_option(text: str) -> str:
    """Parse ``--measure``: a measure name (``modified``) or its variable (``amb_modified``)."""

    if text in VARIABLES or text in VARIABLES.values():
        return text
    raise argparse.ArgumentTypeError(f"must be one of {', '.join(VARIABLES)}, but got {text!r}")


def _separator(text: str) -> str:
    """Parse ``--sep``: the field separator; ``\\t`` (as typed) or ``tab`` is a tab."""
    sep = {"\\t": "\t", "tab": "\t", "\\s+": r"\s+", "space": " "}.get(text, text)
    if not sep:
        raise argparse.ArgumentTypeError(
            "must be the field separator, e.g. --sep ';' or --sep '\\t' for tabs, but got ''"
        )
    return sep


def _encoding(text: str) -> str:
    """Parse ``--encoding``: a text encoding Python knows."""
    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(
            f"must be a text encoding such as utf-8, latin-1, cp1252 or utf-16, but got {text!r}"
        ) from None
    return text


def _na_values(text: str) -> list[str]:
    """Parse ``--na-values``: comma-separated answers that mean 'no answer'."""
    values = [v for v in text.split(",") if v != ""]
    if not values:
        raise argparse.ArgumentTypeError(
            f"must name the answers that mean 'no answer', e.g. --na-values N/A,NA, but got "
            f"{text!r}"
        )
    return values


def _categories(text: str) -> list[str]:
    """Parse ``--categories``: comma-separated answer categories."""
    values = [v for v in text.split(",") if v != ""]
    if not values:
        raise argparse.ArgumentTypeError(
            f"must name the answer categories, e.g. --categories yes,no, but got {text!r}"
        )
    return values


def _comment_char(text: str) -> str:
    """Parse ``--comment``: one character."""
    if len(text) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one character that starts a comment, e.g. --comment '#', but got {text!r}"
        )
    return text


def _nonnegative_int(text: str) -> int:
    """Parse a whole number >= 0 (e.g. ``--budget``), also written as ``1e6``."""
    try:
        value = int(text)
    except ValueError:
        try:  # 1e6, 2.5e3: exact when the decimal value is whole
            number = Decimal(text.strip())
            whole = number.is_finite() and number.adjusted() <= 30 and number == int(number)
            value = int(number) if whole else -1
        except (InvalidOperation, ValueError, OverflowError):
            value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, but got {text!r}")
    return value


def _add_input_options(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The input group: the annotations file, its columns and how to read it."""
    group = parser.add_argument_group("input")
    group.add_argument(
        "annotations",
        nargs="?" if optional else None,
        default=None,
        help="annotations file: .csv, .tsv or .parquet with one row per answer (also "
        "compressed, e.g. .csv.gz), a NumPy .npy count matrix (items x categories) or a "
        ".zarr store holding one; other suffixes (.txt) need --format or --sep"
        + ("; without it, the stored reference cases are checked" if optional else ""),
    )
    group.add_argument(
        "--item",
        default="task",
        help="column with the item ids; with --no-header its 0-based position "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--rater",
        default="worker",
        help="column with the rater ids; with --no-header its 0-based position, and no rater "
        "column when left out (default: %(default)s)",
    )
    group.add_argument(
        "--label",
        default="label",
        help="column with the answers; with --no-header its 0-based position "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--no-rater",
        action="store_true",
        help="the data have no rater ids (enough for the count models; rater_effects needs them)",
    )
    _add_reading_options(group)
    _add_answer_options(group)


def _add_reading_options(group: argparse._ArgumentGroup) -> None:
    """How the input file is read: its type and the options of text files."""
    group.add_argument(
        "--format",
        choices=FILE_TYPES,
        default=None,
        help="file type, overriding the suffix: csv, tsv, parquet, npy or zarr (default: from "
        "the suffix)",
    )
    group.add_argument(
        "--sep",
        type=_separator,
        default=None,
        help="field separator of a text file (default: ',' for csv, a tab for tsv); '\\t' or "
        "tab for a tab; a file with another suffix (e.g. .txt) is then read as text",
    )
    group.add_argument(
        "--comment",
        metavar="CHAR",
        type=_comment_char,
        default=None,
        help="text files: CHAR starts a comment, to the end of the line (e.g. --comment '#' "
        "for files that begin with # lines); default: none",
    )
    group.add_argument(
        "--no-header",
        action="store_true",
        help="the text file has no header line (its first line is data): --item, --rater and "
        "--label then take 0-based column positions, e.g. --item 1 --rater 0 --label 2",
    )
    group.add_argument(
        "--na-values",
        metavar="TEXT",
        type=_na_values,
        action="extend",
        default=None,
        help="answers that mean 'no answer', comma-separated or repeated, e.g. --na-values "
        "N/A,NA (default: only an empty cell; NA, N/A, None, null are labels otherwise)",
    )
    group.add_argument(
        "--encoding",
        type=_encoding,
        default=None,
        help="text files: the encoding, e.g. latin-1 or cp1252 (default: UTF-8; a byte-order "
        "mark, UTF-16 and gzip are recognised)",
    )


def _add_answer_options(group: argparse._ArgumentGroup) -> None:
    """What the answers are: the can't-solve answer, the categories, and the table's layout."""
    group.add_argument(
        "--cant-solve",
        metavar="LABEL",
        default=None,
        help="the answer that means 'can't solve' (e.g. \"I can't tell\"); default: none",
    )
    group.add_argument(
        "--categories",
        metavar="LABELS",
        type=_categories,
        action="extend",
        default=None,
        help="the answer categories, comma-separated or repeated, in the order to read them "
        "(list the can't-solve answer too; it is moved last): categories no answer uses get zero "
        "counts (e.g. a file answered only 'can't solve', or an unused class), and an answer "
        "not listed is refused; a per-category --prior or --param follows this order; "
        "default: the labels that occur, sorted, can't-solve last",
    )
    group.add_argument(
        "--layout",
        choices=("long", "wide", "counts"),
        default=None,
        help="table layout: long (one row per answer, the default), wide (items x raters) "
        "or counts (items x categories); .npy files are always counts",
    )


def _add_model_options(parser: argparse.ArgumentParser) -> None:

    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        default="dirichlet_categorical",
        help="catalog model (see 'ambppl models'; default: %(default)s)",
    )
    group.add_argument(
        "--method",
        choices=METHODS,
        default=None,
        help="how to sample: one of the model's methods (see 'ambppl models'); default: the "
        "model's first (exact for dirichlet_categorical, collapsed for "
        "hierarchical_dirichlet)",
    )
    group.add_argument(
        "--param",
        metavar="NAME=VALUE",
        type=_param,
        action="append",
        default=[],
        help="a parameter of the model, repeatable: a number, a comma-separated list of "
        "numbers or true/false/null, e.g. --param kappa_scale=0.5 --param mu_prior=1,1,2 "
        "--param centred=false (the parameters are listed by 'ambppl models --verbose'; "
        "a list per category follows the order --prior does; default: the model's "
        "defaults)",
    )
    group.add_argument(
        "--prior",
        type=_prior,
        default=None,
        help="dirichlet_categorical's Dirichlet prior (its parameter 'prior'): one number "
        f"for a symmetric prior or {PRIOR_PER_CATEGORY} (default: 1)",
    )
    _add_sampling_options(group)


def _add_sampling_options(group: argparse._ArgumentGroup) -> None:
    """The options of how the chosen model is fitted: draws, chains, NUTS's settings, seed."""
    group.add_argument(
        "--draws",
        type=_positive_int,
        default=None,
        help="draws per chain (default: 1000; NUTS methods: the model's own for the design, "
        "which 'ambppl models --verbose' describes; the exact route of 'score' draws until "
        "--mcse is met and takes none; --method map gives one point and takes none)",
    )
    group.add_argument(
        "--chains",
        type=_positive_int,
        default=None,
        help="chains (default: 4; --method map gives one point and takes none)",
    )
    group.add_argument(
        "--tune",
        type=_nonnegative_int,
        default=None,
        help="NUTS methods (nuts, collapsed): warm-up steps per chain; more when R-hat is "
        "above 1.01 (default: the model's own for the design, which 'ambppl models "
        "--verbose' describes, else PyMC's, 1000)",
    )
    group.add_argument(
        "--target-accept",
        type=_open_prob,
        default=None,
        help="NUTS methods: the step size's target acceptance rate; higher (e.g. 0.95) for "
        "smaller steps when there are divergent transitions (default: the model's own for "
        "the design, which 'ambppl models --verbose' describes, else PyMC's, 0.8)",
    )
    group.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help=f"random seed, a whole number from 0 to {SEED_MAX} (default: random)",
    )


def _add_summary_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The summary group (measure, HDI, threshold); returned so that a subcommand adds its own
    summary options to it (``score``'s --mcse) instead of a second group of the same title."""
    group = parser.add_argument_group("summary")
    group.add_argument(
        "--measure",
        type=_measure_option,
        default="amb",
        help="ambiguity measure: amb, modified, old or entropy (default: %(default)s)",
    )
    group.add_argument(
        "--hdi-prob",
        type=_open_prob,
        default=None,
        help="probability mass of the highest-density intervals (default: ArviZ's "
        "rcParams['stats.ci_prob'], 0.89 unless changed)",
    )
    group.add_argument(
        "--threshold",
        type=_open_prob,
        default=0.4,
        help="report P(measure > threshold) per item (default: %(default)s)",
    )
    return group


def _output_name(text: str) -> str:
    """Parse ``-o``: a name (``-``: stdout where the command allows it); an empty one would
    be taken for the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must name a file, e.g. -o out.csv, but got {text!r}")
    return text


def _add_output_options(
    parser: argparse.ArgumentParser, help_text: str, default: str | None
) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("-o", "--output", type=_output_name, default=default, help=help_text)
    group.add_argument("--force", action="store_true", help="replace the output file if it exists")
    group.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
