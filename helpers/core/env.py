"""Boolean environment switches (``REPRO_RERUN=1``, ``REPRO_OFFLINE=true``...), parsed strictly.

A leaf of the core (imports nothing from ``helpers``), so the runtime and the provenance records
can both use it.
"""

from __future__ import annotations

import os

__all__ = ["TRUE_WORDS", "FALSE_WORDS", "bool_env"]

TRUE_WORDS: tuple[str, ...] = ("1", "true", "yes", "on")
FALSE_WORDS: tuple[str, ...] = ("0", "false", "no", "off")


def bool_env(name: str, default: bool) -> bool:
    """The environment variable ``name`` as a boolean; ``default`` when unset or empty.

    Accepts 1/0, true/false, yes/no, on/off in any case. Anything else is a ``ValueError`` naming
    the variable: before, any non-empty value other than ``0`` meant "on", so
    ``REPRO_RERUN=false`` silently retrained everything.
    """
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
