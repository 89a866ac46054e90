"""The layering of docs/architecture.md, enforced on the source: arrows point down only.

Reads every module of ``ambppl`` with :mod:`ast` (nothing is imported) and checks the rules
the architecture page states: each subpackage imports only the layers below it; no private
name (or private module) crosses a subpackage, except ``ambppl.internal``, the package-wide
helpers; imports of ambppl's own modules sit at the top of the file; the page lists every
module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ambppl"
PAGE = PACKAGE.parent / "docs" / "architecture.md"

#: layer -> the layers it may import (besides itself); the table of docs/architecture.md
ALLOWED = {
    "internal": set(),
    "maths": {"internal"},
    "data": {"internal"},
    "inference": {"internal", "maths", "data"},
    "analysis": {"internal", "maths", "data", "inference"},
    "validation": {"internal", "maths", "data", "inference", "analysis"},
    "report": {"internal", "maths", "data", "inference", "analysis", "validation"},
    "cli": {"internal", "maths", "data", "inference", "analysis", "validation", "report"},
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else ""


def _imports(path: Path) -> list[tuple[str, list[str], bool]]:
    """(imported module, imported names, at module level?) of ambppl's own modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            target = node.module or ""
            if target == "ambppl" or target.startswith("ambppl."):
                names = [a.name for a in node.names]
                subs = [n for n in names if f"{target}.{n}" in MODULES]
                found += [(f"{target}.{n}", [], id(node) in top) for n in subs]
                found.append((target, [n for n in names if n not in subs], id(node) in top))
        elif isinstance(node, ast.Import):
            found += [
                (a.name, [], id(node) in top) for a in node.names if a.name.startswith("ambppl")
            ]
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_arrows_point_down(module: str) -> None:
    here = _layer(module)
    for target, names, at_top in _imports(MODULES[module]):
        there = _layer(target)
        assert at_top, f"{module} imports {target} inside a function: move it to the top"
        if not here or not there or there == here:
            continue
        assert there in ALLOWED[here], f"{module} ({here}) imports {target} ({there}): upward"
        if there == "internal":
            continue
        private = [n for n in names if _private(n)]
        private += [p for p in target.split(".")[1:] if _private(p)]
        assert not private, f"{module} imports private {private} of another subpackage"


def test_the_top_level_package_imports_nothing_eagerly() -> None:
    assert all(not top for *_x, top in _imports(MODULES["ambppl"])), "ambppl/__init__.py"


def test_every_module_is_on_the_architecture_page() -> None:
    page = PAGE.read_text(encoding="utf-8")
    missing = [
        str(path.relative_to(PACKAGE.parent))
        for path in MODULES.values()
        if str(path.relative_to(PACKAGE.parent)) not in page
    ]
    assert not missing, f"docs/architecture.md does not list {missing}"


def test_the_score_commands_input_passes_through_at_most_eight_files() -> None:
    # Issue 23's target, by data flow (benchmarks/input_path.py: the path string is tracked
    # through every call of ambppl that receives it or what such a call returned): the input
    # of `ambppl score` goes cli -> data -> analysis -> cli through at most 8 files, and no
    # call goes from a lower layer up to a higher one.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "input_path", PACKAGE.parent / "benchmarks" / "input_path.py"
    )
    tracer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tracer)
    status, files, climbs, _ = tracer.trace()
    assert status == 0
    assert len(files) <= 8, files
    assert climbs == [], climbs
    assert files[0] == "cli/app.py" and "analysis/scoring.py" in files, files
