"""The documentation site: it builds with warnings as errors and every cross-reference
resolved (``sphinx-build -W --keep-going -n``), every internal link lands on a page and an
anchor that exist, and headless Chromium renders the index, an API page and the search page
without console errors.

One build per session (about 20-40 s on 2 cores), into a temporary folder. Chromium is
Debian's ``chromium`` package; ``.ci/run`` installs it in CI. Where it is missing the browser
tests skip, except in CI (``CI`` set), where a missing browser is a failure.
"""

from __future__ import annotations

import functools
import html
import html.parser
import http.server
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import run_browser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BUILD = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-b", "html", "-q"]
#: An API page the browser test opens: the two-class law, a name of ``ambppl.__all__``.
API_PAGE = "api/generated/ambppl.ambiguity_posterior.html"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site (the same command as docs/development.md's, into a temporary folder)."""
    out = tmp_path_factory.mktemp("site") / "html"
    start = time.perf_counter()
    done = subprocess.run(
        [*BUILD, str(DOCS), str(out)], capture_output=True, text=True, timeout=900, cwd=ROOT
    )
    seconds = time.perf_counter() - start
    problems = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if re.search(r"WARNING|ERROR|CRITICAL|SEVERE|Traceback", line)
    ]
    assert done.returncode == 0 and not problems, "\n".join(problems) or done.stderr[-3000:]
    print(f"sphinx-build: {seconds:.1f} s")
    return out


def test_site_has_the_pages(site: Path):
    for page in (
        "index.html",
        "getting_started.html",
        "guide/index.html",
        "guide/notebooks/03_workflow.html",
        "topics/reading.html",
        "cli/index.html",
        "cli/reference.html",
        "models/index.html",
        "models/generated/rater_effects.html",
        "maths/index.html",
        "maths/errata.html",
        "references.html",
        "api/index.html",
        "api/ambppl.html",
        "api/modules.html",
        API_PAGE,
        "architecture.html",
        "benchmarks.html",
        "development.html",
        "changelog.html",
        "search.html",
    ):
        assert (site / page).is_file(), page
    reference = (site / "cli" / "reference.html").read_text(encoding="utf-8")
    for option in ("--cant-solve", "--budget", "--chunk-items", "--verbose"):
        assert option in reference  # generated from the parser: every subcommand's options
    page = (site / "models/generated/dirichlet_categorical.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "simplex[K] q;" in text and "Dirichlet concentration" in text  # program, parameters


class _Links(html.parser.HTMLParser):
    """The ``href``/``src`` targets and the ``id`` attributes of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key == "id" and value:
                self.ids.add(value)
            if key == "name" and tag == "a" and value:
                self.ids.add(value)
            if key in {"href", "src"} and value and tag in {"a", "img", "link", "script"}:
                self.links.append(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_every_internal_link_resolves(site: Path):
    """Every relative link of every page names a file of the site and, with ``#anchor``, an
    element of that page with that id."""
    # the theme's template macros in _static/ are not pages
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    assert len(pages) > 100
    parsed = {page: _parse(page) for page in pages}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {link}")
                continue
            anchor = unquote(parts.fragment)
            if anchor and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if anchor not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no id {anchor!r})")
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:50])


# -- in a browser -------------------------------------------------------------------------


#: Put first in a copy of a page: records console.error and console.warn calls, uncaught
#: errors and resources that failed to load in an attribute of <html> that the test reads
#: back (Chromium's own log gives every console message the same level, INFO).
PROBE = """<script>
(function () {
  var seen = [];
  function note(kind, text) {
    seen.push(kind + ": " + text);
    document.documentElement.setAttribute("data-probe-errors", seen.join(" | "));
  }
  ["error", "warn"].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      note("console." + level, Array.prototype.join.call(arguments, " "));
      return original.apply(console, arguments);
    };
  });
  window.addEventListener("error", function (event) {
    var target = event.target || {};
    note("error", event.message || ("failed to load " + (target.src || target.href)));
  }, true);
  window.addEventListener("unhandledrejection", function (event) {
    note("unhandled rejection", String(event.reason));
  });
  document.documentElement.setAttribute("data-probe-errors", "");
}());
</script>"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    """The site served on the loopback interface (the search page fetches its results'
    pages, which a ``file://`` page may not), as a base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}/"
        finally:
            httpd.shutdown()
            thread.join(timeout=10)


def _probed(page: Path) -> Path:
    """A copy of ``page`` beside it (relative links still work) with :data:`PROBE` first."""
    copy = page.with_name(f"probe-{page.name}")
    text = page.read_text(encoding="utf-8")
    copy.write_text(re.sub(r"<head>", "<head>" + PROBE, text, count=1), encoding="utf-8")
    return copy


def _errors(dom: str) -> list[str]:
    match = re.search(r'data-probe-errors="([^"]*)"', dom)
    assert match, "the probe did not run"
    return [e for e in html.unescape(match.group(1)).split(" | ") if e]


def _dump(browser: str, url: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """The DOM after the page's scripts ran (virtual time lets the search finish)."""
    return run_browser(browser, url, tmp, "--virtual-time-budget=10000", "--dump-dom")


def _uncaught(stderr: str) -> list[str]:
    """Uncaught errors that Chromium logged."""
    return [line for line in stderr.splitlines() if "Uncaught" in line]


def _title(dom: str) -> str:
    match = re.search(r"<title>(.*?)</title>", dom, flags=re.S)
    assert match, "the page has no title"
    return html.unescape(match.group(1)).strip()


@pytest.mark.parametrize(
    ("page", "title", "heading"),
    [
        ("index.html", "ambppl", "What is in the box"),
        (API_PAGE, "ambppl.ambiguity_posterior", "ambiguity_posterior"),
    ],
)
def test_pages_render_without_console_errors(site, server, browser, tmp_path, page, title, heading):
    probe = _probed(site / page).relative_to(site).as_posix()
    done = _dump(browser, server + probe, tmp_path)
    dom = done.stdout
    assert _errors(dom) == [] and _uncaught(done.stderr) == []
    assert _title(dom).startswith(title), _title(dom)
    assert heading in dom
    assert 'class="bd-sidebar-primary' in dom or 'class="bd-header' in dom  # the theme ran


def test_search_finds_ambiguity_posterior(site, server, browser, tmp_path):
    url = server + _probed(site / "search.html").name + "?q=ambiguity_posterior"
    done = _dump(browser, url, tmp_path)
    dom = done.stdout
    assert _errors(dom) == [] and _uncaught(done.stderr) == []
    found = re.search(r"found (\d+) page", dom)
    assert found, "the search did not finish: " + dom[-2000:]
    assert int(found.group(1)) >= 1
    assert "ambppl.ambiguity_posterior.html" in dom  # the API page is among the results
    print(f"search for ambiguity_posterior: {found.group(1)} pages")


def test_the_maths_renders_offline(site, server, browser, tmp_path):
    # MathJax ships inside the site (sphinx-mathjax-offline): the maths page loads nothing
    # from outside, and MathJax typesets its formulas (mjx-container elements in the DOM)
    page = site / "maths" / "index.html"
    remote = re.findall(r'<(?:script|link)[^>]*(?:src|href)="(https?://[^"]+)"', page.read_text())
    assert remote == [], remote
    done = _dump(browser, server + _probed(page).relative_to(site).as_posix(), tmp_path)
    assert _errors(done.stdout) == [] and _uncaught(done.stderr) == []
    assert done.stdout.count("<mjx-container") >= 5
