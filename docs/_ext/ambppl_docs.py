"""Pages of the documentation generated from the package at build time, and a resolver.

- The API reference: one page per public namespace (``ambppl`` and the subpackages of
  :data:`NAMESPACES`), listing every name of its ``__all__`` (autosummary, one stub per
  name), grouped by the module that defines it. :func:`public_names` is what the pages list;
  ``tests/docs/test_docs_pages.py`` checks the notebooks', the README's and the pages' imports
  against it.
- The model catalog: one page per catalog model, from its info record (``models/<name>.json``)
  and its module docstring (the program, its parameters and methods).
- The role ``:errata:`E5``` of the code's citations of the paper's slips (``maths/errata``).
- A resolver of cross-references to a public object by the path of the module that defines
  it (``:func:`ambppl.inference.catalog.catalog_dir```): the reference goes to the page of
  the same object under its public name (``ambppl.inference.catalog_dir``). A reference to an
  object that is not public stays unresolved, and ``-n`` reports it.

The generated files are written into the source tree (``docs/api/*.rst``,
``docs/api/generated/``, ``docs/models/generated/``; git-ignored), as autosummary does.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1]

#: Public namespaces: (module, title of its API page, one line on what it holds).
NAMESPACES: tuple[tuple[str, str, str], ...] = (
    ("ambppl", "ambppl", "The names most work needs, importable from ``ambppl`` itself."),
    (
        "ambppl.maths",
        "ambppl.maths",
        "Measures, closed-form moments, estimators, the exact two-class law and the "
        "moment-matched approximation (numpy/scipy only).",
    ),
    (
        "ambppl.data",
        "ambppl.data",
        "Reading annotations: the data contract (labelled counts or an answers table), "
        "file formats, chunked reading.",
    ),
    (
        "ambppl.inference",
        "ambppl.inference",
        "``fit``, the model catalog, modelling helpers for model files, convergence diagnostics.",
    ),
    (
        "ambppl.analysis",
        "ambppl.analysis",
        "Per-item tables, scoring at scale, planning, prior sensitivity and model comparison.",
    ),
    (
        "ambppl.validation",
        "ambppl.validation",
        "Checks of posteriors against mathematics that does not use the sampler.",
    ),
    (
        "ambppl.report",
        "ambppl.report",
        "The HTML report and its figures (matplotlib ``Figure`` objects).",
    ),
)

#: Section titles of the top-level page: the subpackage that defines a name.
TOPICS = {
    "ambppl.maths": "Measures, moments, estimators, exact laws",
    "ambppl.data": "Reading annotations",
    "ambppl.inference": "Fitting and the model catalog",
    "ambppl.analysis": "Tables, scoring, planning, comparison",
}


def _kind(value: Any) -> str:
    if inspect.isclass(value):
        return "class"
    if inspect.isroutine(value):
        return "function"
    return "data"


def public_names() -> dict[str, list[tuple[str, str]]]:
    """Every public name per namespace: ``{namespace: [(name, defining module), ...]}``.

    The defining module of data (constants) is the namespace itself.
    """
    names: dict[str, list[tuple[str, str]]] = {}
    for namespace, _, _ in NAMESPACES:
        module = importlib.import_module(namespace)
        rows = []
        for name in module.__all__:
            value = getattr(module, name)
            owner = getattr(value, "__module__", None) if _kind(value) != "data" else None
            rows.append((name, owner or namespace))
        names[namespace] = rows
    return names


def _group(namespace: str, owner: str) -> str:
    if namespace == "ambppl":
        parts = owner.split(".")
        return TOPICS.get(".".join(parts[:2]), "Package")
    if owner == namespace:
        return "Constants"
    return f"From ``{owner}``"


def api_page(namespace: str, title: str, blurb: str, rows: list[tuple[str, str]]) -> str:
    """The reStructuredText of one namespace's API page."""
    lines = [title, "=" * len(title), "", f".. module:: {namespace}", ""]
    lines += [blurb, "", f"Every name of ``{namespace}.__all__``, by where it is defined.", ""]
    groups: dict[str, list[str]] = {}
    for name, owner in rows:
        groups.setdefault(_group(namespace, owner), []).append(name)
    for group, names in groups.items():
        lines += [group, "-" * len(group), "", f".. currentmodule:: {namespace}", ""]
        lines += [".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {name}" for name in names]
        lines.append("")
    return "\n".join(lines)


def write_api_pages(folder: Path = DOCS / "api") -> list[Path]:
    """Write one page per namespace into ``folder``; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    names = public_names()
    written = []
    for namespace, title, blurb in NAMESPACES:
        path = folder / f"{namespace}.rst"
        text = api_page(namespace, title, blurb, names[namespace])
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    path = folder / "modules.rst"
    text = modules_page()
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    written.append(path)
    return written


def model_page(name: str) -> str:
    """The reStructuredText page of one catalog model: its info record, then its docstring."""
    import ambppl

    entry = ambppl.get_model(name)
    info = entry.info
    methods = info["methods"]
    lines = [name, "=" * len(name), "", info["description"], ""]
    lines += [
        f"- **Data**: ``{info['data']}`` ("
        + (
            "a count array: one row per item, one column per category"
            if info["data"] == "counts"
            else "one row per answer, with item, rater and label columns"
        )
        + ")",
        "- **Methods** (``ambppl.fit(..., method=...)``): "
        + ", ".join(f"``{m}``" for m in methods)
        + f"; the default is ``{methods[0]}``",
        f"- **Checked against**: {info['reference']}",
        f"- **Source**: ``models/{name}.py`` and ``models/{name}.json``",
    ]
    if info.get("nuts_defaults"):
        defaults = ", ".join(f"``{k}={v!r}``" for k, v in info["nuts_defaults"].items())
        lines.append(f"- **NUTS defaults** (where the call gives none): {defaults}")
    if info.get("limitation"):
        lines.append(f"- **Known limitation** (quoted for divergences): {info['limitation']}")
    for variable, sentence in info.get("slow", {}).items():
        lines.append(f"- **Known to mix slowly**: ``{variable}``, {sentence}")
    lines += ["", "Parameters", "-" * 10, ""]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 20 15 65", ""]
    lines += ["   * - parameter", "     - default", "     - meaning"]
    for key, record in info["parameters"].items():
        lines += [
            f"   * - ``{key}``",
            f"     - ``{record['default']!r}``",
            f"     - {record['description']}",
        ]
    lines += ["", "The program", "-" * 11, ""]
    lines += [f"From the docstring of ``models/{name}.py``.", ""]
    doc = inspect.getdoc(entry.module) or ""
    # The docstring's own sections (underlined with '-') sit one level below "The program".
    doc_lines = doc.splitlines()
    for i, line in enumerate(doc_lines):
        stripped = line.strip()
        if i and stripped and set(stripped) == {"-"} and len(stripped) >= len(doc_lines[i - 1]):
            doc_lines[i] = "~" * len(stripped)
    lines += doc_lines
    lines.append("")
    return "\n".join(lines)


def write_model_pages(folder: Path = DOCS / "models" / "generated") -> list[Path]:
    """Write one page per catalog model into ``folder`` (stale pages removed)."""
    import ambppl

    folder.mkdir(parents=True, exist_ok=True)
    names = list(ambppl.list_models().index)
    for old in folder.glob("*.rst"):
        if old.stem not in names:
            old.unlink()
    written = []
    for name in names:
        path = folder / f"{name}.rst"
        text = model_page(name)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def documented_objects() -> dict[int, list[str]]:
    """``id(object) -> [public dotted names]`` of every documented function and class."""
    found: dict[int, list[str]] = {}
    for namespace, rows in public_names().items():
        module = importlib.import_module(namespace)
        for name, _ in rows:
            value = getattr(module, name)
            if _kind(value) != "data":
                found.setdefault(id(value), []).append(f"{namespace}.{name}")
    return found


def documented_data() -> dict[tuple[str, int], list[str]]:
    """``(name, id(value)) -> [public dotted names]`` of every documented constant."""
    found: dict[tuple[str, int], list[str]] = {}
    for namespace, rows in public_names().items():
        module = importlib.import_module(namespace)
        for name, _ in rows:
            value = getattr(module, name)
            if _kind(value) == "data":
                found.setdefault((name, id(value)), []).append(f"{namespace}.{name}")
    return found


def modules() -> list[str]:
    """Every module of the package whose dotted name has no private part."""
    import pkgutil

    import ambppl

    names = ["ambppl"]
    for info in pkgutil.walk_packages(ambppl.__path__, "ambppl."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def modules_page() -> str:
    """The reStructuredText of the page of every module and its docstring."""
    namespaces = {namespace for namespace, _, _ in NAMESPACES}
    lines = ["Modules", "=======", ""]
    lines += [
        "Every module of the package and what it holds (the layers and their rules:",
        ":doc:`../architecture`). Use the names of the namespace pages: a module path is",
        "where a name is defined, not where to import it from.",
        "",
    ]
    public = {f"{ns}.{name}" for ns, rows in public_names().items() for name, _ in rows}
    for name in modules():
        lines += [f"``{name}``", "-" * (len(name) + 4), ""]
        if name in namespaces:
            lines += [f"The namespace of :doc:`{name}`.", ""]
            continue
        lines += [f".. automodule:: {name}"]
        if name in public:  # e.g. the module ambppl.validation.sbc and the function sbc
            lines.append("   :no-index:")
        lines.append("")
    return "\n".join(lines)


def _lookup(dotted: str) -> Any:
    """The object a dotted ``ambppl...`` path names, or ``None``."""
    parts = dotted.split(".")
    if parts[0] != "ambppl":
        return None
    for cut in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if hasattr(value, attr):
                value = getattr(value, attr)
                value = _FIELD if value is None else value  # e.g. a field whose default is None
            elif inspect.isclass(value) and attr in getattr(value, "__annotations__", {}):
                value = _FIELD  # a dataclass field without a default: no class attribute
            else:
                return None
        return value
    return None


#: What :func:`_lookup` returns for a class's field (annotated, or with the default None).
_FIELD = object()


#: ``id(object) -> public names``, filled when the build starts.
_DOCUMENTED: dict[int, list[str]] = {}
#: ``(name, id(value)) -> public names`` of constants, filled when the build starts.
_DOCUMENTED_DATA: dict[tuple[str, int], list[str]] = {}


def _public_target(domain: Any, dotted: str) -> str | None:
    """The documented name of the object that ``dotted`` names, or ``None``.

    ``dotted`` is split into the longest prefix that names a documented object (by
    identity) and a rest (a method or attribute): ``ambppl.maths.exact.AmbiguityPosterior.rvs``
    becomes ``ambppl.maths.AmbiguityPosterior.rvs`` where that is documented.
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        head, rest = ".".join(parts[:cut]), parts[cut:]
        value = _lookup(head)
        if value is None:
            continue
        if inspect.ismodule(value):
            names = [value.__name__] if not rest else []
        elif _kind(value) == "data":
            names = _DOCUMENTED_DATA.get((parts[cut - 1], id(value)), [])
        else:
            names = _DOCUMENTED.get(id(value), [])
        for name in names:
            full = ".".join([name, *rest])
            if full in domain.objects or full in domain.modules:
                return full
    return None


def _context_modules(node: Any) -> list[str]:
    """What a relative reference may be relative to: the documented object's module, its
    class, the page's current module."""
    found = []
    doc = node.get("refdoc") or ""
    if doc.startswith("api/generated/"):
        value = _lookup(doc.rsplit("/", 1)[1])
        owner = getattr(value, "__module__", None)
        if owner and inspect.isclass(value):
            found.append(f"{owner}.{value.__name__}")
        if owner:
            found.append(owner)
    if node.get("py:module"):
        module = node["py:module"]
        if node.get("py:class"):
            found.append(f"{module}.{node['py:class']}")
        found.append(module)
    return found


def _model_module(doc: str) -> Any:
    if not doc.startswith("models/generated/"):
        return None
    import ambppl

    return ambppl.get_model(doc.rsplit("/", 1)[1]).module


def _resolve(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve ``py`` references to ambppl's objects by what they are, not by their path.

    A public object named by its defining module's path (or relative to the documented
    object's module or class) links to its public name. An object of ambppl that exists but
    is not public (a private constant, a helper, a model file's function) is shown as code
    without a link: the reference pages are what is public. Anything else stays a warning.
    """
    if node.get("refdomain") != "py":
        return None
    from docutils import nodes

    target = node.get("reftarget", "").lstrip("~.")
    domain = env.get_domain("py")
    candidates = [target] if target.startswith("ambppl") else []
    candidates += [f"{module}.{target}" for module in _context_modules(node)]
    for candidate in candidates:
        public = _public_target(domain, candidate)
        if public is None:
            continue
        for kind in (node["reftype"], "obj"):
            found = domain.resolve_xref(
                env, node.get("refdoc"), app.builder, kind, public, node, contnode
            )
            if found is not None:
                return found
    if "." not in target:
        # a bare name in a summary line (an autosummary table): the one public object of
        # that name, if there is exactly one
        same = {id(_lookup(name)): name for name in domain.objects if name.endswith(f".{target}")}
        if len(same) == 1:
            (public,) = same.values()
            found = domain.resolve_xref(
                env, node.get("refdoc"), app.builder, "obj", public, node, contnode
            )
            if found is not None:
                return found
    exists = any(_lookup(candidate) is not None for candidate in candidates)
    model = _model_module(node.get("refdoc") or "")
    if model is not None and hasattr(model, target.split(".")[0]):
        exists = True
    if exists:
        return nodes.literal(target, target)
    return None


def cli_parser() -> Any:
    """The ``ambppl`` command's parser for sphinx-argparse (``docs/cli/reference.rst``).

    The parser of :func:`ambppl.cli.app.build_parser`, with each epilog's ``examples:`` block
    marked as a literal block (sphinx-argparse reads epilogs as reStructuredText, where the
    indented command lines would be a block quote that breaks at a continued line).
    """
    import argparse

    from ambppl.cli.app import build_parser

    parser = build_parser()
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += list(action.choices.values())
    for each in parsers:
        if each.epilog and each.epilog.startswith("examples:\n"):
            each.epilog = "Examples::\n\n" + each.epilog[len("examples:\n") :]
    return parser


def errata_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``:errata:`E5``` in a docstring: a link to slip E5 of the errata page (``maths/errata``).

    A slip that the page lacks is an unresolved reference, which the build reports.
    """
    from docutils import nodes
    from sphinx import addnodes

    label = text.strip()
    node = addnodes.pending_xref(
        rawtext,
        refdomain="std",
        reftype="ref",
        reftarget=f"errata-{label.lower()}",
        refexplicit=True,
        refwarn=True,
    )
    node += nodes.inline(rawtext, f"errata {label}")
    return [node], []


def _generate(app: Any, config: Any) -> None:
    write_api_pages()
    write_model_pages()
    _DOCUMENTED.update(documented_objects())
    _DOCUMENTED_DATA.update(documented_data())


def setup(app: Any) -> dict[str, Any]:
    # before Sphinx looks for the source files and autosummary writes the stubs
    app.connect("config-inited", _generate)
    app.connect("missing-reference", _resolve)
    app.add_role("errata", errata_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # pragma: no cover - a look at what the pages list
    print(json.dumps(public_names(), indent=1))
