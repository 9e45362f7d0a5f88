"""Fixtures for the browser test: the built book served on localhost, and headless Chromium.

The test is skipped (with the reason) when the book is not built or Chromium/chromedriver/Selenium
are missing, except when ``REPRO_REQUIRE_BROWSER=1`` (CI, after the book build): then a missing
piece is a failure, so the check can never go silently green.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from helpers.core.env import bool_env

ROOT = Path(__file__).resolve().parents[2]
HTML_DIR = Path(os.environ.get("REPRO_BOOK_HTML", ROOT / "_build" / "html"))
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI containers run as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # small /dev/shm in containers makes tabs crash
    "--window-size=1280,1024",
    # Every host except the local server resolves to nothing: the book must be self-contained,
    # and the result must not depend on whether the machine happens to reach a CDN.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)


def require_or_skip(reason: str) -> None:
    """Skip with ``reason``, or fail when ``REPRO_REQUIRE_BROWSER=1`` demands the check."""
    if bool_env("REPRO_REQUIRE_BROWSER", False):
        pytest.fail(f"REPRO_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files; records every request answered with an error status."""

    failures: list[tuple[str, int]]

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.failures.append((self.path, code))
        super().send_error(code, message, explain)


class BookServer:
    """``_build/html`` served over HTTP on 127.0.0.1 at a free port, in a daemon thread."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.failures: list[tuple[str, int]] = []
        handler = type("Handler", (_QuietHandler,), {"failures": self.failures})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> BookServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture(scope="session")
def html_dir() -> Path:
    if not (HTML_DIR / "index.html").is_file():
        require_or_skip(f"the book is not built ({HTML_DIR}/index.html missing; run `make book`)")
    return HTML_DIR


@pytest.fixture(scope="session")
def book_server(html_dir: Path) -> Iterator[BookServer]:
    with BookServer(html_dir) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if missing:
        require_or_skip(f"{' and '.join(missing)} not found (Debian: apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        require_or_skip("selenium is not installed (pip install -e '.[test]')")

    profile_dir = tempfile.mkdtemp(prefix="book-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile_dir, ignore_errors=True)
