r"""Open every page of the built book in headless Chromium and check what a reader would see.

Per page: it loads, the browser console has no SEVERE message, the server answered no request
with an error, every image decoded (naturalWidth > 0), MathJax (vendored, see _config.yml) typeset
without TeX errors, and every link into the book points to a file that exists. The report page's
claims table has exactly one row per claim of ``helpers.claims.collect_claims()``, and each row's
link goes to a section id (the claim's MyST label) that exists on the target page.

Reading checks (the layout a reader sees):

* no horizontal overflow at 1,400 px and at 390 px (a phone): the document is no wider than the
  viewport, and no element inside ``main`` sticks out of ``main``'s box, except inside a scroll
  container (an ancestor with ``overflow-x`` auto/scroll/hidden, e.g. code blocks and the claims
  table's wrapper): such a container is checked itself, its content may scroll;
* no raw TeX (``\(`` or ``$``) in the navigation, the page title or any heading;
* no visible code cell whose source is only imports or ``glue(...)`` calls (bookkeeping is tagged
  ``remove-cell`` or ``hide-input``);
* the report's source and verdict filters show exactly the rows of the chosen source and verdict
  (counted in Python from ``collect_claims()``), and say how many;
* every experiment and theory page shows its "What this page finds" box within the first screen
  (top 900 px at 1,400 px width).

A screenshot of the first screen of every page at 1,400 px is saved to ``_build/screenshots/``
for a reviewer.

Run after building the book:  REPRO_REQUIRE_BROWSER=1 .venv/bin/pytest -m browser tests/browser
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import pytest

if TYPE_CHECKING:  # the fixture's type, for readers; pytest provides the object
    from conftest import BookServer


pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

REPORT_DOC = "notebooks/90_report"
INTRO_DOC = "book/intro"

# Requests a browser makes on its own, not asked for by the page: Chromium fetches /favicon.ico
# for every origin, and the book sets no favicon. Nothing else is ignored.
IGNORED_URL_SUFFIXES = ("/favicon.ico",)


def _toc_docnames() -> list[str]:
    spec = importlib.util.spec_from_file_location("check_toc", ROOT / "scripts" / "check_toc.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["check_toc"] = module
    spec.loader.exec_module(module)
    return module.docnames(module.read_toc())


DOCNAMES = _toc_docnames()

WAIT_FOR_IMAGES = """
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
Promise.all(images.map((img) => {
  img.loading = "eager";  // lazy images below the fold would otherwise never load
  if (img.complete) return Promise.resolve();
  return new Promise((resolve) => { img.addEventListener("load", resolve); img.addEventListener("error", resolve); });
})).then(() => done(images.filter((img) => !(img.naturalWidth > 0)).map((img) => img.currentSrc || img.src)));
"""

WAIT_FOR_MATHJAX = """
const done = arguments[arguments.length - 1];
if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(() => done("typeset"), (err) => done("error: " + err));
} else {
  done(window.MathJax ? "configured but not started" : "absent");
}
"""


def _ignored(message: str) -> bool:
    return any(suffix in message for suffix in IGNORED_URL_SUFFIXES)


def _open(driver, server: BookServer, docname: str, html_dir: Path) -> dict:
    """Load a page and gather what the checks need."""
    path = html_dir / f"{docname}.html"
    assert path.is_file(), f"{docname} is in _toc.yml but {path} was not built"
    driver.get_log("browser")  # drop messages of the previous page
    failures_before = len(server.failures)
    driver.get(f"{server.url}/{docname}.html")
    deadline = time.monotonic() + 30
    while driver.execute_script("return document.readyState") != "complete":
        assert time.monotonic() < deadline, f"{docname}: page did not finish loading in 30 s"
        time.sleep(0.05)
    mathjax = driver.execute_async_script(WAIT_FOR_MATHJAX)
    broken_images = driver.execute_async_script(WAIT_FOR_IMAGES)
    links = driver.execute_script("return Array.from(document.querySelectorAll('a[href]')).map((a) => a.href)")
    return {
        "mathjax": mathjax,
        "broken_images": broken_images,
        "links": links,
        "math_nodes": driver.execute_script("return document.querySelectorAll('mjx-container').length"),
        "tex_errors": driver.execute_script("return document.querySelectorAll('mjx-merror').length"),
        "console": [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and not _ignored(e["message"])],
        "http_errors": [(p, c) for p, c in server.failures[failures_before:] if not _ignored(p)],
    }


def _missing_link_targets(links: list[str], server: BookServer, html_dir: Path) -> list[str]:
    missing = []
    for href in links:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != server.url:
            continue  # external links (citations' DOIs, arXiv) are not fetched offline
        rel = unquote(parts.path).lstrip("/")
        target = html_dir / rel
        if target.is_dir() or rel == "":
            target = target / "index.html"
        if not target.is_file():
            missing.append(href)
    return missing


@pytest.mark.parametrize("docname", DOCNAMES)
def test_page_renders_without_errors(browser, book_server: BookServer, html_dir: Path, docname: str) -> None:
    page = _open(browser, book_server, docname, html_dir)
    assert not page["console"], f"{docname}: SEVERE console messages: {page['console']}"
    assert not page["http_errors"], f"{docname}: requests answered with an error: {page['http_errors']}"
    assert not page["broken_images"], f"{docname}: images that did not load: {page['broken_images']}"
    assert page["mathjax"] in ("typeset", "absent"), f"{docname}: MathJax {page['mathjax']}"
    assert page["tex_errors"] == 0, f"{docname}: {page['tex_errors']} formulas with TeX errors"
    missing = _missing_link_targets(page["links"], book_server, html_dir)
    assert not missing, f"{docname}: links to pages that do not exist: {missing}"


def test_formulas_are_typeset_by_the_vendored_mathjax(browser, book_server: BookServer, html_dir: Path) -> None:
    """The intro has inline math: MathJax must have loaded from _static and rendered it."""
    page = _open(browser, book_server, INTRO_DOC, html_dir)
    assert page["mathjax"] == "typeset"
    assert page["math_nodes"] > 0, "no formula was typeset on the intro page"


_CLAIMS: list = []


def _claims(monkeypatch: pytest.MonkeyPatch) -> list:
    """The claims as the book build computed them (committed results, the build's profile, cpu by
    default); computed once per session."""
    if not _CLAIMS:
        monkeypatch.delenv("REPRO_RESULTS_DIR", raising=False)
        monkeypatch.setenv("REPRO_PROFILE", os.environ.get("REPRO_PROFILE", "cpu"))
        from helpers.claims import report_claims

        _CLAIMS.extend(report_claims())
    return _CLAIMS


def _claims_count(monkeypatch: pytest.MonkeyPatch) -> int:
    return len(_claims(monkeypatch))


def test_report_table_has_one_row_per_claim(
    browser, book_server: BookServer, html_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    if REPORT_DOC not in DOCNAMES:
        pytest.fail(f"{REPORT_DOC} is not in _toc.yml")
    claims = _claims(monkeypatch)
    expected = len(claims)
    _open(browser, book_server, REPORT_DOC, html_dir)
    tables = browser.find_elements(By.CSS_SELECTOR, "table#claims-table")
    assert len(tables) == 1, f"expected one table#claims-table on the report page, found {len(tables)}"
    rows = tables[0].find_elements(By.CSS_SELECTOR, "tbody > tr[data-verdict]")  # not the group heads
    assert len(rows) == expected, (
        f"report shows {len(rows)} claims, collect_claims() returns {expected}: the built report is "
        "stale (rebuild the book) or a claim failed to render"
    )
    verdicts = {row.find_element(By.CSS_SELECTOR, "span.verdict").text for row in rows}
    # the labels the rows carry ("contradicted at our scale, under our reading", ...), all shown
    assert verdicts == {c.verdict_label for c in claims}, verdicts


def test_report_links_point_to_the_section_that_computes_each_claim(
    browser, book_server: BookServer, html_dir: Path
) -> None:
    """Each claim row's page link carries ``#anchor`` (the claim's MyST label), and the target
    page's built HTML has an element with that id (Sphinx renders ``(label)=`` as ``id="label"``)."""
    import re

    from selenium.webdriver.common.by import By

    _open(browser, book_server, REPORT_DOC, html_dir)
    rows = browser.find_elements(By.CSS_SELECTOR, "table#claims-table tbody > tr[data-verdict]")
    assert rows, "the report has no claim rows"
    problems, ids_by_page = [], {}
    for row in rows:
        links = row.find_elements(By.CSS_SELECTOR, "td:last-child a[href]")
        if not links:
            continue  # a page not built yet is named without a link
        href = links[0].get_attribute("href")
        parts = urlsplit(href)
        if not parts.fragment:
            problems.append(f"{href}: no #anchor")
            continue
        page = html_dir / unquote(parts.path).lstrip("/")
        if page not in ids_by_page:
            text = page.read_text(encoding="utf-8") if page.is_file() else ""
            ids_by_page[page] = set(re.findall(r'\bid="([^"]+)"', text))
        if unquote(parts.fragment) not in ids_by_page[page]:
            problems.append(f"{href}: no element with that id in {page.name}")
    assert not problems, "report links whose section anchor does not exist:\n" + "\n".join(sorted(set(problems)))


def test_intro_quotes_the_reports_claim_count(
    browser, book_server: BookServer, html_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The intro's summary is glued from the report; it must show the same total."""
    from selenium.webdriver.common.by import By

    expected = _claims_count(monkeypatch)
    _open(browser, book_server, INTRO_DOC, html_dir)
    text = " ".join(browser.find_element(By.TAG_NAME, "main").text.split())
    assert f"tests {expected} quantitative claims" in text


# --------------------------------------------------------------------------------------------
# Reading checks: layout, headings, bookkeeping cells, the report's filter, the findings boxes
# --------------------------------------------------------------------------------------------

#: Pages that open with a "What this page finds" box: the theory and experiment notebooks.
FINDINGS_PAGES = [
    d
    for d in DOCNAMES
    if d.startswith("notebooks/")
    and d.split("/")[1][:2] in ("01", "02", "03", "04", "10", "11", "12", "20", "21", "22", "30", "31")
]
SCREENSHOTS = ROOT / "_build" / "screenshots"
DESKTOP, PHONE, FIRST_SCREEN = 1400, 390, 900

# The outermost elements inside <main> that stick out of main's box, unless an ancestor below main
# is a horizontal scroll (or clip) container: then that container is checked, not its content.
OVERFLOW = """
const main = document.querySelector("main") || document.body;
const box = main.getBoundingClientRect();
const vw = document.documentElement.clientWidth;
const problems = [];
if (document.documentElement.scrollWidth > vw + 1) {
  problems.push(`document is ${document.documentElement.scrollWidth}px wide in a ${vw}px viewport`);
}
const clips = (el) => ["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(el).overflowX);
const reported = [];
for (const el of main.querySelectorAll("*")) {
  if (reported.some((r) => r.contains(el))) continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
  if (r.right <= box.right + 1 && r.left >= box.left - 1) continue;
  let inside = false;
  for (let a = el.parentElement; a && a !== main; a = a.parentElement) { if (clips(a)) { inside = true; break; } }
  if (inside) continue;
  reported.push(el);
  const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  problems.push(`${name} spans ${Math.round(r.left)}..${Math.round(r.right)}px, ` +
                `main ${Math.round(box.left)}..${Math.round(box.right)}px`);
}
return problems.slice(0, 10);
"""


@pytest.fixture()
def viewport(browser):
    """``viewport(width, height)`` sets the page's CSS viewport exactly (Chrome's device metrics
    override); reset after the test."""

    def set_viewport(width: int, height: int = FIRST_SCREEN) -> None:
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    yield set_viewport
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_no_element_is_wider_than_its_container(
    browser, book_server: BookServer, html_dir: Path, viewport, width: int
) -> None:
    """At 1,400 px and at 390 px, on every page: see OVERFLOW for the rule. At 1,400 px the first
    screen of each page is saved to _build/screenshots/ for a reviewer."""
    viewport(width)
    if width == DESKTOP:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = {}
    for docname in DOCNAMES:
        _open(browser, book_server, docname, html_dir)
        found = browser.execute_script(OVERFLOW)
        if found:
            problems[docname] = found
        if width == DESKTOP:
            browser.execute_script("window.scrollTo(0, 0)")
            browser.save_screenshot(str(SCREENSHOTS / f"{docname.replace('/', '__')}.png"))
    assert not problems, f"elements wider than their container at {width}px:\n" + "\n".join(
        f"{doc}: {p}" for doc, found in problems.items() for p in found
    )


def test_navigation_and_headings_show_no_raw_tex(browser, book_server: BookServer, html_dir: Path) -> None:
    """Titles render as text in the navigation: a heading with $...$ shows up there as raw \\(...\\)."""
    problems = []
    for docname in DOCNAMES:
        _open(browser, book_server, docname, html_dir)
        texts = browser.execute_script("""
            const items = [["title", document.title]];
            document.querySelectorAll("nav a, .bd-toc a, .toctree-wrapper a").forEach(
                (a) => items.push(["nav", a.textContent]));
            document.querySelectorAll("main h1, main h2, main h3, main h4, main h5, main h6").forEach(
                (h) => items.push([h.tagName, h.textContent]));
            return items;""")
        problems += [f"{docname}: {kind} {text.strip()!r}" for kind, text in texts if "\\(" in text or "$" in text]
    assert not problems, "raw TeX in navigation or headings:\n" + "\n".join(sorted(set(problems)))


def _is_bookkeeping(source: str) -> bool:
    """A cell whose every statement is an import or a ``glue(...)`` call."""
    import ast

    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False

    def glue_call(node) -> bool:
        return (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "glue"
        )

    return bool(body) and all(isinstance(n, (ast.Import, ast.ImportFrom)) or glue_call(n) for n in body)


def test_no_visible_cell_is_only_imports_or_glue(browser, book_server: BookServer, html_dir: Path) -> None:
    problems = []
    for docname in [d for d in DOCNAMES if d.startswith("notebooks/")]:
        _open(browser, book_server, docname, html_dir)
        sources = browser.execute_script("""
            return Array.from(document.querySelectorAll("div.cell div.cell_input"))
              .filter((el) => el.getClientRects().length > 0 && !el.closest("details:not([open])"))
              .map((el) => el.innerText);""")
        problems += [f"{docname}: {s.strip()[:80]!r}" for s in sources if _is_bookkeeping(s)]
    assert not problems, "visible cells that only import or glue:\n" + "\n".join(problems)


def test_report_filter_shows_the_rows_of_the_chosen_source_and_verdict(
    browser, book_server: BookServer, html_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from collections import Counter

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from helpers.core.report import paper_of

    claims = _claims(monkeypatch)
    pairs = Counter((paper_of(c), c.verdict) for c in claims)
    (source, verdict), _ = pairs.most_common(1)[0]
    rare_verdict = min(Counter(c.verdict for c in claims).items(), key=lambda kv: kv[1])[0]
    _open(browser, book_server, REPORT_DOC, html_dir)
    by_source = Select(browser.find_element(By.ID, "claims-filter-source"))
    by_verdict = Select(browser.find_element(By.ID, "claims-filter-verdict"))
    for chosen_source, chosen_verdict in ((source, verdict), ("", rare_verdict), (source, ""), ("", "")):
        by_source.select_by_value(chosen_source)
        by_verdict.select_by_value(chosen_verdict)
        expected = sum(
            1
            for c in claims
            if (not chosen_source or paper_of(c) == chosen_source)
            and (not chosen_verdict or c.verdict == chosen_verdict)
        )
        shown = [
            r for r in browser.find_elements(By.CSS_SELECTOR, "#claims-table tr[data-verdict]") if r.is_displayed()
        ]
        assert len(shown) == expected, (chosen_source, chosen_verdict, len(shown), expected)
        assert all(r.get_attribute("data-verdict") == chosen_verdict for r in shown if chosen_verdict)
        assert all(r.get_attribute("data-source") == chosen_source for r in shown if chosen_source)
        count = browser.find_element(By.ID, "claims-filter-count").text
        assert count == f"{expected} of {len(claims)} claims shown", count


@pytest.mark.parametrize("docname", FINDINGS_PAGES)
def test_findings_box_is_on_the_first_screen(
    browser, book_server: BookServer, html_dir: Path, viewport, docname: str
) -> None:
    viewport(DESKTOP)
    _open(browser, book_server, docname, html_dir)
    boxes = browser.execute_script("""
        return Array.from(document.querySelectorAll("main .admonition")).filter(
            (a) => (a.querySelector(".admonition-title") || {}).textContent === "What this page finds"
        ).map((a) => ({top: a.getBoundingClientRect().top + window.scrollY, items: a.querySelectorAll("li").length,
                       text: a.innerText}));""")
    assert len(boxes) == 1, f"{docname}: expected one 'What this page finds' box, found {len(boxes)}"
    box = boxes[0]
    assert box["top"] < FIRST_SCREEN, (
        f"{docname}: the findings box starts at {box['top']:.0f}px, below the first screen"
    )
    assert box["items"] >= 2, f"{docname}: the findings box lists {box['items']} findings"
    import re

    unrendered = re.findall(r"\{(?:glue|ref|eq|doc)[^}]*\}|```", box["text"])
    assert not unrendered, f"{docname}: unrendered markup in the findings box: {unrendered}"


def test_report_downloads_hold_every_row(
    browser, book_server: BookServer, html_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report page links its rows as CSV and JSON; both download over HTTP and hold one row
    per claim, a row of which matches the report's claim field by field."""
    import csv
    import io
    import json
    from urllib.request import urlopen

    from selenium.webdriver.common.by import By

    _open(browser, book_server, REPORT_DOC, html_dir)
    hrefs = {
        Path(urlsplit(a.get_attribute("href")).path).name: a.get_attribute("href")
        for a in browser.find_elements(By.CSS_SELECTOR, "a.download")
    }
    assert {"claims.csv", "claims.json"} <= set(hrefs), f"download links on the report page: {sorted(hrefs)}"
    with urlopen(hrefs["claims.csv"], timeout=30) as reply:
        rows = list(csv.DictReader(io.StringIO(reply.read().decode())))
    with urlopen(hrefs["claims.json"], timeout=30) as reply:
        records = json.loads(reply.read().decode())
    claims = _claims(monkeypatch)
    assert len(rows) == len(records) == len(claims)
    one = next(c for c in claims if c.basis == "runs" and c.ci)  # a run-based row: every column filled
    row = next(r for r in rows if r["key"] == one.key)
    record = next(r for r in records if r["key"] == one.key)
    for name in ("claim", "paper_value", "our_value", "verdict", "effect", "ci", "n", "mde", "decided_by"):
        assert row[name] == record[name] == str(getattr(one, name)), name
    assert row["decided_by"].startswith("helpers.")


def test_run_based_report_rows_show_their_rerun_command_and_cost(
    browser, book_server: BookServer, html_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run-based row with committed runs shows ``python -m tools.rerun KEY`` and
    what its runs cost; a row of exact computation shows none."""
    import re

    from selenium.webdriver.common.by import By

    claims = _claims(monkeypatch)
    _open(browser, book_server, REPORT_DOC, html_dir)
    rows = browser.find_elements(By.CSS_SELECTOR, "table#claims-table tbody > tr[data-verdict]")
    assert len(rows) == len(claims)
    commands = {}
    for claim, row in zip(claims, rows):
        shown = row.find_elements(By.CSS_SELECTOR, ".claim-rerun")
        commands[claim.key] = shown[0].text if shown else ""
    decided = [c for c in claims if c.basis == "runs" and c.verdict != "not run here"]
    assert decided and all(commands[c.key] for c in decided), [c.key for c in decided if not commands[c.key]]
    one = decided[0]
    assert f"python -m tools.rerun {one.key}" in commands[one.key]
    assert re.search(r"\d+ runs, [\d.e+-]+ core-hours", commands[one.key]), commands[one.key]
    assert not any(commands[c.key] for c in claims if c.basis != "runs")
