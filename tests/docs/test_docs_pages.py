"""The documentation's promises that need no build: its Python examples run, everything the
notebooks, the README and the pages import is on the API pages, and every citation in the
code points at a page that exists.

The site itself is built (warnings as errors) and opened in a browser by ``test_site.py``.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import ambppl_docs  # noqa: E402  (docs/_ext: the generator of the API and model pages)

#: Hand-written pages (the generated ones are git-ignored and rewritten by every build).
PAGES = sorted(
    path
    for path in DOCS.rglob("*.md")
    if "_build" not in path.parts and "generated" not in path.parts
)
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
README = ROOT / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


BLOCKS = [
    (page, index, code)
    for page in PAGES
    for index, code in enumerate(_python_blocks(page.read_text(encoding="utf-8")))
]


def test_pages_have_python_examples():
    assert len(BLOCKS) >= 15, [f"{p.relative_to(DOCS)} {i}" for p, i, _ in BLOCKS]


@pytest.mark.parametrize(
    ("page", "index", "code"),
    BLOCKS,
    ids=[f"{page.relative_to(DOCS)}-{index}" for page, index, _ in BLOCKS],
)
def test_docs_python_examples_run(page, index, code, tmp_path, monkeypatch):
    """Each ```python block of a page runs, as the README's do (tests/test_readme.py)."""
    monkeypatch.chdir(tmp_path)
    name = f"{page.relative_to(DOCS)} python block {index}"
    exec(compile(code, name, "exec"), {"__name__": "__docs__"})


# -- the API pages define what is public --------------------------------------------------


@pytest.fixture(scope="module")
def api_names(tmp_path_factory) -> set[str]:
    """Every dotted name the generated API pages list (autosummary entries)."""
    folder = tmp_path_factory.mktemp("api")
    names = set()
    for page in ambppl_docs.write_api_pages(folder):
        text = page.read_text(encoding="utf-8")
        module = None
        for line in text.splitlines():
            if line.startswith(".. currentmodule:: "):
                module = line.split()[-1]
            elif line.startswith("   ") and re.fullmatch(r"   [A-Za-z_]\w*", line):
                names.add(f"{module}.{line.strip()}")
            elif line.startswith(".. module:: "):
                names.add(line.split()[-1])
    return names


def _documented(api_names: set[str]) -> tuple[set[int], set[str]]:
    """The ids of the listed functions and classes, and the listed names (all kinds)."""
    ids = set()
    for name in api_names:
        value = ambppl_docs._lookup(name)
        if value is not None and ambppl_docs._kind(value) != "data":
            ids.add(id(value))
    return ids, api_names


def test_api_pages_list_every_public_name(api_names):
    for namespace, _, _ in ambppl_docs.NAMESPACES:
        module = importlib.import_module(namespace)
        missing = {f"{namespace}.{name}" for name in module.__all__} - api_names
        assert not missing, f"public names missing from the API pages: {sorted(missing)}"


def _code_sources() -> dict[str, str]:
    """The Python code of the notebooks, the README and the pages, by where it is."""
    sources = {}
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        sources[str(path.relative_to(ROOT))] = "\n".join(code)
    for path in [README, *PAGES]:
        blocks = _python_blocks(path.read_text(encoding="utf-8"))
        sources[str(path.relative_to(ROOT))] = "\n".join(blocks)
    return sources


def _ambppl_references(code: str) -> set[str]:
    """Dotted ``ambppl...`` names the code imports or reaches by attribute."""
    found = set()
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ambppl"):
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ambppl")}
        elif isinstance(node, ast.Attribute):
            parts = []
            inner: ast.AST = node
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "ambppl":
                found.add(".".join(["ambppl", *reversed(parts)]))
    return found


def test_sources_read_code():
    sources = _code_sources()
    assert len([s for s in sources if s.startswith("notebooks/")]) == len(NOTEBOOKS) >= 8
    refs = _ambppl_references(sources["notebooks/03_workflow.ipynb"])
    assert {"ambppl.fit", "ambppl.data.readers.example_path"} <= refs


def test_everything_imported_is_on_the_api_pages(api_names):
    """What a notebook, the README or a page imports (or reaches as ``ambppl.x.y``) is a
    name of the API pages, or the same object under another path."""
    ids, names = _documented(api_names)
    missing = []
    for where, code in _code_sources().items():
        for dotted in sorted(_ambppl_references(code)):
            value = ambppl_docs._lookup(dotted)
            assert value is not None, f"{where}: {dotted} does not exist"
            if dotted in names or id(value) in ids:
                continue
            if type(value).__name__ == "module":
                # a module reached on the way to a name (ambppl.data.readers.example_path):
                # fine where some name the code reaches through it is documented
                continue
            missing.append(f"{where}: {dotted}")
    assert not missing, "not on the API pages:\n" + "\n".join(missing)


def test_every_module_the_code_reaches_leads_to_documented_names(api_names):
    """A module path the code uses (``ambppl.report.plots``) is a namespace page or a module
    on the modules page (``api/modules.rst``, every public module)."""
    modules = set(ambppl_docs.modules())
    for where, code in _code_sources().items():
        for dotted in _ambppl_references(code):
            value = ambppl_docs._lookup(dotted)
            if type(value).__name__ == "module":
                assert value.__name__ in modules, f"{where}: module {dotted} is not documented"


# -- citations in the code ----------------------------------------------------------------

ERRATA_PAGE = (DOCS / "maths" / "errata.md").read_text(encoding="utf-8")
REFERENCES_PAGE = (DOCS / "references.md").read_text(encoding="utf-8")
CODE = sorted(
    [*(ROOT / "ambppl").rglob("*.py"), *(ROOT / "models").glob("*.py")],
)


def test_code_cites_no_file_that_users_do_not_have():
    """The paper's sources and notes are not shipped: the code cites the site's pages."""
    stale = []
    for path in CODE:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"ERRATA|ARCHITECTURE\.md|shared/paper", line):
                stale.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not stale, "\n".join(stale)


def test_errata_citations_resolve():
    slips = set(re.findall(r"^\(errata-(e\d+)\)=$", ERRATA_PAGE, flags=re.M))
    assert slips == {f"e{i}" for i in range(1, 10)}
    texts = [p.read_text(encoding="utf-8") for p in [*CODE, *PAGES]]
    cited = {m.lower() for text in texts for m in re.findall(r"errata(?:[ -]|:`)(E\d+)", text)}
    assert cited, "nothing cites the errata page"
    assert cited <= slips, f"cited slips that the errata page lacks: {sorted(cited - slips)}"


def test_author_year_citations_are_on_the_references_page():
    """Every cited work of the code ("Holm, S. (1979)", "Vehtari et al. (2021)", "Numer.
    Math. 18 (1971)") is on the references page: its year, and its first named author."""
    author = re.compile(
        r"\b([A-Z][a-zäöüé]+)(?:,? (?:[A-Z]\.(?:-[A-Z]\.)?[ ]?)+| et al\.)?,? \(((?:19|20)\d\d)\)"
    )
    months = {"January", "February", "March", "April", "May", "June", "July", "August"}
    months |= {"September", "October", "November", "December"}
    missing = []
    for path in CODE:
        text = path.read_text(encoding="utf-8")
        for name, year in author.findall(text):
            if name not in months and (name not in REFERENCES_PAGE or year not in REFERENCES_PAGE):
                missing.append(f"{path.relative_to(ROOT)}: {name} ({year})")
        for year in re.findall(r"\(((?:19|20)\d\d)\)", text):
            if year not in REFERENCES_PAGE and not re.search(rf"[A-Z][a-z]+ \({year}\)", text):
                missing.append(f"{path.relative_to(ROOT)}: a work of {year}")
    assert not missing, "\n".join(sorted(set(missing)))
