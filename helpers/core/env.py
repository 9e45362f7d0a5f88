"""Boolean environment switches (``REPRO_RERUN=1``, ``REPRO_OFFLINE=true``, ``CI=false``...), parsed strictly.

Every boolean variable the project reads goes through :func:`bool_env` (``book/rerun.md`` lists
them). Imports nothing from ``helpers``.
"""

from __future__ import annotations

import os

TRUE_WORDS: tuple[str, ...] = ("1", "true", "yes", "on")
FALSE_WORDS: tuple[str, ...] = ("0", "false", "no", "off")


def bool_env(name: str, default: bool) -> bool:
    """The environment variable ``name`` as a boolean (``default`` when unset or empty): 1/0,
    true/false, yes/no, on/off in any case; else a ``ValueError`` (reading any non-empty value as
    "on" would make ``REPRO_RERUN=false`` retrain everything)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(
        f"{name}={raw!r} is not a boolean; use one of {', '.join(TRUE_WORDS)} (on) or "
        f"{', '.join(FALSE_WORDS)} (off), case-insensitive, or unset it"
    )


def under_ci() -> bool:
    """Whether this process runs under CI: ``CI`` set to a true word."""
    return bool_env("CI", False)
