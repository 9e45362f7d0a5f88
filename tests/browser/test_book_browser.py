"""Open every page of the built book in headless Chromium and check what a reader would see.

Per page: it loads, the browser console has no SEVERE message, the server answered no request
with an error, every image decoded (naturalWidth > 0), MathJax (vendored, see _config.yml) typeset
without TeX errors, and every link into the book points to a file that exists. The report page's
claims table has exactly one row per claim of ``helpers.claims.collect_claims()``, and each row's
link goes to a section id (the claim's MyST label) that exists on the target page.

Run after building the book:  REPRO_REQUIRE_BROWSER=1 .venv/bin/pytest -m browser tests/browser
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest


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


def _claims_count(monkeypatch: pytest.MonkeyPatch) -> int:
    # Count claims as the book build did: committed results, the build's profile (cpu by default).
    monkeypatch.delenv("REPRO_RESULTS_DIR", raising=False)
    monkeypatch.setenv("REPRO_PROFILE", os.environ.get("REPRO_PROFILE", "cpu"))
    from helpers.claims import collect_claims

    return len(collect_claims())


def test_report_table_has_one_row_per_claim(
    browser, book_server: BookServer, html_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    if REPORT_DOC not in DOCNAMES:
        pytest.fail(f"{REPORT_DOC} is not in _toc.yml")
    expected = _claims_count(monkeypatch)
    _open(browser, book_server, REPORT_DOC, html_dir)
    tables = browser.find_elements(By.CSS_SELECTOR, "table#claims-table")
    assert len(tables) == 1, f"expected one table#claims-table on the report page, found {len(tables)}"
    rows = tables[0].find_elements(By.CSS_SELECTOR, "tbody > tr")
    assert len(rows) == expected, (
        f"report shows {len(rows)} claims, collect_claims() returns {expected}: the built report is "
        "stale (rebuild the book) or a claim failed to render"
    )
    verdicts = {row.find_element(By.CSS_SELECTOR, "span.verdict").text for row in rows}
    from helpers.core.report import VERDICTS

    assert verdicts <= {*VERDICTS, "contradicted at our scale"}, verdicts


def test_report_links_point_to_the_section_that_computes_each_claim(
    browser, book_server: BookServer, html_dir: Path
) -> None:
    """Each claim row's page link carries ``#anchor`` (the claim's MyST label), and the target
    page's built HTML has an element with that id (Sphinx renders ``(label)=`` as ``id="label"``)."""
    import re

    from selenium.webdriver.common.by import By

    _open(browser, book_server, REPORT_DOC, html_dir)
    rows = browser.find_elements(By.CSS_SELECTOR, "table#claims-table tbody > tr")
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
