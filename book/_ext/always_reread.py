"""Sphinx extension: re-read the pages listed in ``always_reread`` on every build.

Why: the reproducibility report and the status page show things their source does not contain
(claims computed by ``helpers.<method>.claims``, the installed packages). Sphinx re-reads a page only
when its source changed, so an incremental build kept showing an old report even though the
page asks myst-nb for ``execution_mode: force``. Pages that paste glued values from those pages
(the intro quotes the report's counts) must be listed too, or they keep the old values.
Clean builds (CI) are unaffected.
"""

from __future__ import annotations

from typing import Any


def _always_outdated(app, env, added, changed, removed) -> list[str]:  # noqa: ANN001
    return [doc for doc in app.config.always_reread if doc in env.found_docs]


def setup(app) -> dict[str, Any]:  # noqa: ANN001
    app.add_config_value("always_reread", [], "env", types=[list])
    app.connect("env-get-outdated", _always_outdated)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
