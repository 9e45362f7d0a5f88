"""Which profile's committed results decide a family of report rows.

The cpu profile decides a family's rows until every run of its ``paper`` profile is committed and
verifies; then paper takes the whole family over. A row never mixes profiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from helpers.core.claim import Claim
from helpers.core.results_cache import load_result
from helpers.core.runtime import results_root

#: The profile that takes a family over once all its runs are committed.
PAPER = "paper"
#: The profile that decides a family until then.
FALLBACK = "cpu"

ConfigsFn = Callable[[str], Sequence[Any]]


def decided_profile(family: str, configs: ConfigsFn) -> str:
    """``"paper"`` when every config of ``configs("paper")`` has a committed, verified, successful
    result, else ``"cpu"``.

    ``family``: the cache name of the answer (per process and results folder;
    :func:`clear_decided_profiles` forgets it); ``configs``: profile -> the family's configs. A
    damaged file raises :class:`~helpers.core.result_files.CorruptResult`, never counts as missing.
    """
    if not isinstance(family, str) or not family:
        raise ValueError(f"decided_profile needs a family name (a non-empty string), got {family!r}")
    if not callable(configs):
        raise TypeError(f"decided_profile takes a function profile -> configs, got {type(configs).__name__}")
    # keyed by family and folder, not by ``configs`` (a fresh lambda at each call would never hit);
    # the folder is in the key because tests point REPRO_RESULTS_DIR elsewhere
    key = (family, str(results_root(PAPER)))
    if key not in _DECIDED:
        _DECIDED[key] = _decide(configs)
    return _DECIDED[key]


_DECIDED: dict[tuple[str, str], str] = {}


def _decide(configs: ConfigsFn) -> str:
    paper = list(configs(PAPER))
    if not paper:
        return FALLBACK
    for cfg in paper:
        result = load_result(cfg)
        if result is None or result.get("status", "ok") != "ok":
            return FALLBACK
    return PAPER


def clear_decided_profiles() -> None:
    """Forget the cached answers of :func:`decided_profile` (after results were written)."""
    _DECIDED.clear()


def profile_rows(claims: Sequence[Claim]) -> dict[str, int]:
    """How many run-based rows of ``claims`` each profile decides (rows not run left out), most rows
    first: ``{"cpu": 40, "paper": 12}``; the report page names them."""
    counts: dict[str, int] = {}
    for c in claims:
        if c.basis == "runs" and c.verdict != "not run here" and c.profile in (PAPER, FALLBACK):
            counts[c.profile] = counts.get(c.profile, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
