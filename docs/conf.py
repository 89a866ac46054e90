"""Sphinx configuration of ambppl's documentation site.

Build it (warnings are errors, every cross-reference must resolve):

    .venv/bin/python -m sphinx -W --keep-going -n -b html docs docs/_build/html

The API pages, the model catalog and the command-line reference are generated from the
package when the build starts (``docs/_ext/ambppl_docs.py``, sphinx-argparse); the notebooks
are rendered with the outputs they were committed with (``nb_execution_mode = "off"``).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

import ambppl  # noqa: E402

project = "ambppl"
author = "ambppl developers"
copyright = "2026, ambppl developers"
version = release = ambppl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 copied into the site (_static/mathjax): the maths renders offline, and the
    # browser test checks it renders without fetching anything
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_nb",
    "sphinxarg.ext",
    "ambppl_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# -- MyST and notebooks ------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The notebooks are committed with their outputs and shown as they are; the test suite
# executes them (tests/test_notebooks.py), the build never does.
nb_execution_mode = "off"
nb_merge_streams = True

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"  # the numpydoc sections describe every type in words
autodoc_default_options = {"member-order": "bysource"}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# -- Cross-references --------------------------------------------------------------------
nitpicky = True
# No intersphinx: the build runs offline. References to other projects' objects cannot
# resolve, so they are ignored by package; every reference to ambppl's own names is checked.
nitpick_ignore_regex = [
    # third-party libraries named in docstrings (types, functions to call next)
    (
        r"py:.*",
        r"(numpy|np|pandas|pd|xarray|xr|scipy|arviz|arviz_plots|arviz_stats|matplotlib"
        r"|pymc|pm|pytensor|dask|distributed|zarr|nutpie|jinja2|mpmath)(\..*)?",
    ),
    # the standard library (argparse, os, sys, pathlib, warnings, ...) and builtins
    (
        r"py:.*",
        r"(argparse|os|sys|pathlib|warnings|signal|json|io|gzip|collections|typing"
        r"|concurrent|contextvars|threading|multiprocessing|shlex|tempfile|shutil)(\..*)?",
    ),
    (
        r"py:(class|exc|func|obj|data)",
        r"(ValueError|TypeError|KeyError|IndexError|RuntimeError|NotImplementedError"
        r"|FileNotFoundError|OSError|MemoryError|UserWarning|DeprecationWarning|Warning"
        r"|KeyboardInterrupt|BrokenPipeError|SystemExit|Exception|int|float|str|bool|dict"
        r"|list|tuple|None|object|bytes|range|slice|callable|open|print)",
    ),
]

# -- HTML --------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ambppl {release}"
html_static_path = ["_static"]
html_css_files = ["ambppl.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 4,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# without it a first visit (nothing stored yet) logs "Got invalid theme mode" as an error
html_context = {"default_mode": "auto"}
html_sidebars = {"index": [], "changelog": []}
html_show_sourcelink = False
html_copy_source = False
