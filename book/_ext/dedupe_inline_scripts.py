"""Sphinx extension: emit each inline ``<script>`` body only once per page.

Why: Sphinx 7.4.7 registers an inline script that an extension adds *after* the HTML builder is
initialised twice, once from the registry (filename ``''``) and once directly (filename
``None``), and its de-duplication treats the two as different. sphinx-thebe (loaded by
jupyter-book even with thebe off) adds ``const THEBE_JS_URL = ...`` that way, so every page ran
it twice and the browser reported "Identifier 'THEBE_JS_URL' has already been declared"
(a SEVERE console error, caught by tests/browser). Dropping exact duplicate bodies changes
nothing else: a second identical inline script can only redeclare what the first declared.
"""

from __future__ import annotations

from typing import Any


def _drop_duplicate_inline_scripts(app, pagename, templatename, context, doctree) -> None:  # noqa: ANN001
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[str] = set()
    kept = []
    for script in scripts:
        attributes = getattr(script, "attributes", {})
        body = attributes.get("body") if not getattr(script, "filename", None) else None
        if body:
            if body in seen:
                continue
            seen.add(body)
        kept.append(script)
    # A new list: the builder's own list is restored after each page and must stay untouched.
    context["script_files"] = kept


def setup(app) -> dict[str, Any]:  # noqa: ANN001
    app.connect("html-page-context", _drop_duplicate_inline_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
