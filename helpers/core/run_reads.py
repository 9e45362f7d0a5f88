"""Which committed runs decide which report rows, found by watching the report being computed.

Every result a claims function reads goes through :func:`helpers.core.results_cache.load_result`,
and every row is a :class:`~helpers.core.claim.Claim` built somewhere below that function. While
:func:`watching_runs` is active, both are noted with the call stack they happened in. A row's runs
are then the results read below the innermost function on the row's own call stack that read any.
Every run-based row is built in a function that loads its own runs (a family that loaded every run
first would give each of its rows the family's runs: a superset, never a subset), so these are
exactly the runs it is computed from. No claims function declares anything, so the answer cannot
drift from the code that decides the row.

:func:`redirecting_reads` lets a tool answer each read from elsewhere (the rerun of a row reads its
runs from a scratch folder, :class:`Elsewhere`, and every other run as committed) or hide a run
(:data:`HIDDEN`: the seeds a rerun left out, so the row is computed on fewer seeds; the loaders
skip a hidden run, :func:`is_hidden`, where a missing one would make the row "not run here").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "RunRead",
    "RunReads",
    "Elsewhere",
    "HIDDEN",
    "watching_runs",
    "redirecting_reads",
    "note_read",
    "note_claim",
    "redirect",
    "is_hidden",
]


@dataclass(frozen=True)
class RunRead:
    """One result read while the report was computed: its config and the stored result."""

    config: Any
    result: dict


def _stack(frame: FrameType | None) -> list[FrameType]:
    # the frame objects themselves are kept, so their ids stay unique while the watch lasts
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out


@dataclass
class RunReads:
    """What one :func:`watching_runs` saw: reads and rows, each with its call stack."""

    reads: list[tuple[RunRead, list[FrameType]]] = field(default_factory=list)
    rows: list[tuple[Any, list[FrameType]]] = field(default_factory=list)

    def runs_by_key(self) -> dict[str, list[RunRead]]:
        """Each run-based row's runs (see the module's docstring), by the row's key, each run once
        and in the order first read. A row built twice (a builder that replaces a provisional row)
        keeps the smaller set."""
        below: dict[int, list[int]] = {}
        for i, (_, stack) in enumerate(self.reads):
            for frame in stack:
                below.setdefault(id(frame), []).append(i)
        out: dict[str, list[RunRead]] = {}
        for row, stack in self.rows:
            if getattr(row, "basis", "") != "runs" or getattr(row, "verdict", "") == "not run here":
                continue  # no run decides it (a "not run here" row's runs were never committed)
            found = next((below[id(f)] for f in stack if id(f) in below), None)
            if found is None:
                continue
            seen: dict[str, RunRead] = {}
            for i in found:
                read = self.reads[i][0]
                seen.setdefault(str(read.result.get("config_hash")), read)
            if row.key not in out or len(seen) < len(out[row.key]):
                out[row.key] = list(seen.values())
        return out


_WATCHES: list[RunReads] = []
_REDIRECT: list[Callable[[Any], Any]] = []


@contextmanager
def watching_runs() -> Iterator[RunReads]:
    """Note every result read and every row built inside the ``with`` block."""
    watch = RunReads()
    _WATCHES.append(watch)
    try:
        yield watch
    finally:
        _WATCHES.remove(watch)


@dataclass(frozen=True)
class Elsewhere:
    """A redirect's answer: read the result of ``config`` from the results folder ``folder``."""

    config: Any
    folder: Path


class _Hidden:
    def __repr__(self) -> str:
        return "HIDDEN"


#: A redirect's answer for a run left out on purpose (not missing: the loaders skip it).
HIDDEN: Any = _Hidden()


@contextmanager
def redirecting_reads(fn: Callable[[Any], Any]) -> Iterator[None]:
    """Inside the block, :func:`~helpers.core.results_cache.load_result` reads ``fn(config)``
    instead of ``config``: another config, an :class:`Elsewhere`, ``None`` (the run is missing) or
    :data:`HIDDEN` (left out on purpose)."""
    _REDIRECT.append(fn)
    try:
        yield
    finally:
        _REDIRECT.remove(fn)


def redirect(config: Any) -> Any:
    """What a read of ``config`` is answered with: itself unless a redirect is active (see
    :func:`redirecting_reads`)."""
    for fn in reversed(_REDIRECT):
        if config is None or config is HIDDEN or isinstance(config, Elsewhere):
            break
        config = fn(config)
    return config


def is_hidden(config: Any) -> bool:
    """Whether an active redirect leaves ``config``'s run out on purpose (a loader skips it)."""
    return bool(_REDIRECT) and redirect(config) is HIDDEN


def note_read(config: Any, result: dict | None) -> None:
    """Called by ``load_result`` for every read; a missing result is not a run that decides anything."""
    if _WATCHES and result is not None:
        stack = _stack(sys._getframe(2))
        for watch in _WATCHES:
            watch.reads.append((RunRead(config, result), stack))


def note_claim(row: Any) -> None:
    """Called when a row is built."""
    if _WATCHES:
        stack = _stack(sys._getframe(2))
        for watch in _WATCHES:
            watch.rows.append((row, stack))
