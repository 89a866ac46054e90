"""Package-level promises: a light import without PyMC/ArviZ, public names, typing marker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ambppl

HEAVY = ("pymc", "pytensor", "arviz", "arviz_base", "arviz_stats", "matplotlib", "pandas")

_PROBE = """
import sys
import ambppl
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


def test_import_is_light():
    # A fresh interpreter: `import ambppl` loads none of the heavy modules. Its time is
    # measured by benchmarks/bench_import.py against `import numpy` (no timed tests).
    loaded = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(ambppl.__file__).parents[2],
    ).stdout.strip()
    assert loaded == "", loaded


def test_all_public_names_resolve():
    assert ambppl.__all__ == sorted(ambppl.__all__)
    for name in ambppl.__all__:
        assert getattr(ambppl, name) is not None, name
    assert ambppl.__version__


def test_the_type_stub_names_what_the_package_loads():
    # ambppl/__init__.pyi tells type checkers what each lazily loaded name is: its __all__ and
    # its imports must be __init__.py's __all__ and _EXPORTS (name -> defining module), so
    # that a name added to one and not the other fails here.
    import ast

    stub = ast.parse(Path(ambppl.__file__).with_suffix(".pyi").read_text(encoding="utf-8"))
    imported = {
        alias.name: node.module
        for node in stub.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    (stub_all,) = [
        node.value
        for node in stub.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "__all__"
    ]
    assert ast.literal_eval(stub_all) == ambppl.__all__
    assert imported == ambppl._EXPORTS
    assert set(ambppl.__all__) == {*ambppl._EXPORTS, "__version__"}


def test_py_typed_marker():
    assert (Path(ambppl.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize(("old", "new"), sorted(ambppl.MOVED_MODULES.items()))
def test_old_module_paths_still_import_with_a_deprecation_warning(old: str, new: str) -> None:
    """Issue 23: the flat layout's module paths (``ambppl.measures``) keep working: a stand-in
    module that reads every attribute from the new one, after a DeprecationWarning naming it."""
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        stand_in = importlib.import_module(old)
    real = importlib.import_module(new)
    names = list(getattr(real, "__all__", [])) or [n for n in dir(real) if not n.startswith("_")]
    assert names and all(getattr(stand_in, n) is getattr(real, n) for n in names)
    sys.modules.pop(old, None)


def test_the_function_fit_is_not_shadowed_by_an_old_module_path() -> None:
    assert "ambppl.fit" not in ambppl.MOVED_MODULES and callable(ambppl.fit)
    import importlib

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ambppl.fit")  # the flat layout's module; the function stays
