"""Helpers shared by the report tests (``tests/report``): seeded answers for a latent-class
fit and a probe that sorts the report's item table in a headless browser."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
from conftest import run_browser


def latent_class_answers(seed: int, n_items: int, per_item: int, cs_rate: float) -> pd.DataFrame:
    """Answers (task, worker, label) to ``n_items`` items with two true classes "a" / "b",
    ``per_item`` of 6 raters each: r0 and r1 reliable (right with probability 0.95), r5 at
    random, r2 and r3 right with probability 0.75, r4 says "cs" with probability ``cs_rate``
    (else like r2); seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, z in enumerate(rng.integers(0, 2, size=n_items)):
        for r in rng.choice(6, size=per_item, replace=False):
            if r == 4 and rng.random() < cs_rate:
                label = "cs"
            elif r == 5 or rng.random() > (0.95 if r < 2 else 0.75):
                label = "ab"[rng.integers(0, 2)]
            else:
                label = "ab"[z]
            rows.append((f"t{i}", f"r{r}", label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


#: Appended to a copy of a report: click the item table's ``{header}`` header twice
#: (descending, then ascending) and record that column (``data-value|item id``, the id
#: URI-encoded) after each click and the header's final ``aria-sort`` in the DOM.
SORT_PROBE = """
<script>
(function () {
  var table = document.getElementById("item-table");
  var heads = table.tHead.rows[0].cells, col = -1;
  for (var i = 0; i < heads.length; i++) { if (heads[i].textContent === HEADER) { col = i; } }
  function column() {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      return r.cells[col].getAttribute("data-value") + "|" +
        encodeURIComponent(r.cells[1].textContent);
    }).join(";");
  }
  heads[col].click();
  document.body.setAttribute("data-probe-desc", column());
  heads[col].click();
  document.body.setAttribute("data-probe-asc", column());
  document.body.setAttribute("data-probe-sort", heads[col].getAttribute("aria-sort"));
}());
</script>
"""


def console_messages(stderr: str) -> list[str]:
    """Console messages (any level) and uncaught errors that Chromium logged."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def sort_in_browser(
    browser: str, page: Path, header: str, tmp: Path
) -> tuple[dict[str, str], subprocess.CompletedProcess[str]]:
    """Sort a copy of the report ``page`` by the item table's ``header`` column in headless
    Chromium (:data:`SORT_PROBE`), check that the console stayed empty, and return the
    probe's records (``desc``, ``asc``: ``value|item`` cells joined by ``;``; ``sort``: the
    final ``aria-sort``) and the finished process (the DOM in its stdout)."""
    probe = tmp / "probe.html"
    script = SORT_PROBE.replace("HEADER", f'"{header}"')
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"))
    done = run_browser(browser, probe.as_uri(), tmp, "--dump-dom")
    assert console_messages(done.stderr) == []
    return dict(re.findall(r'data-probe-(\w+)="([^"]*)"', done.stdout)), done
