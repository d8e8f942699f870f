"""The documentation site shows its verdicts at a glance: no table hides a column off to the right.

The readthedocs theme keeps table cells on one line inside a box that scrolls sideways, so at a 1,280 px window
the home page's findings table once showed only "paper" and "what the paper claims", its verdicts out of sight;
the check guide's and getting-started's tables were cut the same way. ``docs/stylesheets/extra.css`` lets cells
wrap and gives the content column the window's width. This module builds the site (``mkdocs build --strict``)
and holds that:

- without a browser: every table whose header has a verdict-like column ("verdict", "exit", "measured", ...)
  has it among its first two columns, or its page carries the stylesheet's wrapping rule;
- in headless Chromium (skipped where no Chromium is installed: ``apt-get install chromium``): every page
  with a table is rendered at 1,280 x 900, and a script injected into a copy of the page measures every
  column's right edge against the visible width (the window's, and the scrolling box's around the table). Every
  column of every table must be visible; the verdict columns are named in the failure. Screenshots of the home
  page and the check guide are taken too (kept in ``$SITE_SCREENSHOTS`` when that names a folder).
"""
from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1280, 900
#: header texts of the columns that carry a verdict (a claim's outcome, an exit code, a measured loss)
VERDICT_HEADERS = frozenset({"verdict", "verdicts", "holds", "holds?", "exit", "measured"})
#: pages that must be found carrying a verdict table (so the checks cannot pass on a renamed header)
VERDICT_PAGES = {"index.html", "guides/check/index.html", "guides/certify/index.html", "guides/reports/index.html",
                 "papers/privatree/index.html", "papers/diprime/index.html", "papers/random-trees/index.html",
                 "papers/lpdt/index.html", "papers/baselines/index.html"}
STYLESHEET = "stylesheets/extra.css"


def _chromium() -> str | None:
    """The Chromium binary: ``$CHROMIUM``, else the first of the usual names on the path."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    return next((path for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
                 if (path := shutil.which(name))), None)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built from this checkout with warnings as errors."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("MkDocs is not installed (pip install -e '.[docs]'): the site's tables are not checked")
    out = tmp_path_factory.mktemp("site") / "site"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


class _Tables(HTMLParser):
    """The header row of every table of a page (``[]`` for a table without a header), and its stylesheets."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[str]] = []
        self.stylesheets: list[str] = []
        self._head = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and attrs.get("rel") == "stylesheet":
            self.stylesheets.append(attrs.get("href", ""))
        elif tag == "table":
            self.tables.append([])
        elif tag == "thead":
            self._head = True
        elif tag == "th" and self._head:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "thead":
            self._head = False
        elif tag == "th" and self._cell is not None:
            self.tables[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parse(page: Path) -> _Tables:
    parser = _Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _verdict_columns(headers: list[str]) -> list[int]:
    return [i for i, h in enumerate(headers) if h.lower() in VERDICT_HEADERS]


def _pages_with_tables(site: Path) -> dict[str, _Tables]:
    pages = {}
    for page in sorted(site.rglob("*.html")):
        parsed = _parse(page)
        if parsed.tables:
            pages[page.relative_to(site).as_posix()] = parsed
    return pages


def _css_rules(css: str) -> list[tuple[str, str]]:
    """(selectors, declarations) of each rule of a stylesheet, comments removed."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return [(sel.strip(), body) for sel, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css)]


def _wraps_cells(site: Path) -> bool:
    """The site's stylesheet sets ``white-space: normal`` on table cells (the theme sets ``nowrap``)."""
    sheet = site / STYLESHEET
    if not sheet.exists():
        return False
    return any(re.search(r"(^|[\s,>])td\b", sel) and re.search(r"white-space\s*:\s*normal", body)
               for sel, body in _css_rules(sheet.read_text(encoding="utf-8")))


def test_every_verdict_column_is_early_or_its_cells_wrap(site):
    pages = _pages_with_tables(site)
    with_verdicts = {name: parsed for name, parsed in pages.items()
                     if any(_verdict_columns(headers) for headers in parsed.tables)}
    missing = VERDICT_PAGES - set(with_verdicts)
    assert not missing, f"no verdict column found on {sorted(missing)}: rename VERDICT_HEADERS or the pages' headers"
    wraps = _wraps_cells(site)
    late = []
    for name, parsed in with_verdicts.items():
        linked = any(href.endswith(STYLESHEET) for href in parsed.stylesheets)
        for headers in parsed.tables:
            for column in _verdict_columns(headers):
                if column >= 2 and not (wraps and linked):
                    late.append(f"{name}: column {column + 1} of {headers}")
    assert not late, ("verdict columns past the second, in tables whose cells do not wrap "
                      f"({STYLESHEET} with white-space: normal on td, linked from the page): {late}")


# A driver page at the site's root loads each page in turn into a 1,280 x 900 frame (a page's window is then
# 1,280 px wide) and, once the theme has wrapped its tables and the fonts are in, measures every column's right
# edge against what is visible: the window's width without its scrollbar, and the scrolling box around the
# table (the table itself, which the mkdocs theme makes a block that scrolls, and the theme's
# .wy-table-responsive wrapper). The figures are written into the driver page, read back with --dump-dom.
# One browser for all the pages: about 5 s instead of one start per page.
_DRIVER = """<!doctype html>
<html><body style="margin: 0">
<iframe id="frame" style="width: %(width)dpx; height: %(height)dpx; border: 0"></iframe>
<script>
var pages = %(pages)s, results = {}, next = 0, frame = document.getElementById("frame");

function measure(w) {
  var doc = w.document, visible = doc.documentElement.clientWidth, out = {inner_width: w.innerWidth, tables: []};
  doc.querySelectorAll(".rst-content table").forEach(function (table) {
    var right = Math.min(visible, table.getBoundingClientRect().left + table.clientWidth);
    var box = table.parentElement.closest(".wy-table-responsive");
    if (box) right = Math.min(right, box.getBoundingClientRect().left + box.clientWidth);
    var headers = Array.from(table.querySelectorAll("thead th")).map(function (h) {
      return h.textContent.replace(/\\s+/g, " ").trim();
    });
    var columns = [];
    table.querySelectorAll("tr").forEach(function (row) {
      Array.from(row.children).forEach(function (cell, j) {
        columns[j] = Math.max(columns[j] || 0, cell.getBoundingClientRect().right);
      });
    });
    out.tables.push({headers: headers, visible_right: right, column_right: columns});
  });
  return out;
}

frame.onload = function () {
  var w = frame.contentWindow;
  w.document.fonts.ready.then(function () {
    setTimeout(function () {
      results[pages[next]] = measure(w);
      next += 1;
      if (next < pages.length) {
        frame.src = pages[next];
      } else {
        var pre = document.createElement("pre");
        pre.id = "site-measure";
        pre.textContent = JSON.stringify(results);
        document.body.appendChild(pre);
      }
    }, 0);
  });
};
frame.src = pages[0];
</script>
</body></html>
"""


def _chromium_args(binary: str, profile: str, width: int = WIDTH, height: int = HEIGHT) -> list[str]:
    # --no-sandbox: CI and containers run as root, where Chromium's sandbox refuses to start; the pages are
    # this checkout's own files. --host-resolver-rules: every host name fails at once, so the theme's CDN
    # scripts (highlight.js) never wait on a network that drops packets (a run hung past its 300 s timeout
    # once that way on a machine without internet); the tables are the site's own HTML and CSS.
    return [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", f"--window-size={width},{height}"]


def _measure(binary: str, site: Path, pages: list[str]) -> dict[str, dict]:
    """Each page's tables' figures, from one headless Chromium (the driver page above)."""
    driver = site / "_measure_tables.html"
    driver.write_text(_DRIVER % {"width": WIDTH, "height": HEIGHT, "pages": json.dumps(pages)}, encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory() as profile:
            # the frame reads its pages' documents: file:// pages are one origin only with this flag
            run = subprocess.run(_chromium_args(binary, profile, WIDTH + 40, HEIGHT + 40)
                                 + ["--allow-file-access-from-files", "--virtual-time-budget=120000",
                                    "--dump-dom", driver.as_uri()],
                                 capture_output=True, text=True, timeout=300)
    finally:
        driver.unlink()
    found = re.search(r'<pre id="site-measure">(.*?)</pre>', run.stdout, flags=re.S)
    assert found, f"Chromium gave no measurement (exit {run.returncode}):\n{run.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def _screenshot(binary: str, page: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(_chromium_args(binary, profile) + [f"--screenshot={png}", page.as_uri()],
                             capture_output=True, text=True, timeout=180)
    assert png.exists(), f"no screenshot of {page} (exit {run.returncode}):\n{run.stderr[-2000:]}"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_every_table_and_its_verdicts_are_visible_at_1280_px_in_chromium(site):
    binary = _chromium()
    if binary is None:
        pytest.skip("no Chromium (apt-get install chromium): the site is not rendered in a browser")
    pages = _pages_with_tables(site)
    # Screenshots for a person to look at (the home page's findings, the check guide), taken meanwhile.
    keep = os.environ.get("SITE_SCREENSHOTS")
    folder = Path(keep) if keep else site.parent / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    shots = {"index.html": folder / "home.png", "guides/check/index.html": folder / "check-guide.png"}
    with ThreadPoolExecutor(max_workers=2) as pool:
        measuring = pool.submit(_measure, binary, site, list(pages))
        for future in [pool.submit(_screenshot, binary, site / name, png) for name, png in shots.items()]:
            future.result()
        measured = measuring.result()
    for png in shots.values():
        assert _png_size(png) == (WIDTH, HEIGHT), f"{png}: not a {WIDTH} x {HEIGHT} screenshot"

    assert set(measured) == set(pages), "the browser measured other pages than the site has"
    hidden, verdicts_seen = [], 0
    for name, figures in measured.items():
        assert figures["inner_width"] == WIDTH, f"{name} rendered {figures['inner_width']} px wide, not {WIDTH}"
        assert len(figures["tables"]) == len(pages[name].tables), f"{name}: the browser saw another number of tables"
        for index, table in enumerate(figures["tables"]):
            verdict_columns = set(_verdict_columns(table["headers"]))
            verdicts_seen += len(verdict_columns)
            for column, right in enumerate(table["column_right"]):
                if right > table["visible_right"] + 1:
                    label = table["headers"][column] if column < len(table["headers"]) else f"column {column + 1}"
                    kind = "VERDICT column" if column in verdict_columns else "column"
                    hidden.append(f"{name}, table {index + 1} {table['headers'][:2]}: {kind} {label!r} ends at "
                                  f"{right:.0f} px, only {table['visible_right']:.0f} px are visible")
    assert verdicts_seen >= len(VERDICT_PAGES), "the browser found fewer verdict columns than the pages carry"
    assert not hidden, (f"at {WIDTH} px, columns are off to the right of their table's box (screenshots in "
                        f"{folder}):\n" + "\n".join(hidden))
