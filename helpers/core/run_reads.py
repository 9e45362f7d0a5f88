"""Which committed runs decide which report rows, found by watching the report being computed.

While :func:`watching_runs` is active, every result read (:func:`load_result`) and every
:class:`~helpers.core.claim.Claim` built is noted with its call stack. A row's runs are the results
read below the innermost function on the row's own stack that read any: every run-based row is
built in a function that loads its own runs (otherwise a superset, never a subset), and nothing is
declared, so the answer cannot drift from the code.

:func:`redirecting_reads` lets a tool answer each read from elsewhere (:class:`Elsewhere`: a
rerun's scratch folder) or hide a run (:data:`HIDDEN`: seeds a rerun left out; loaders skip it,
where a missing one would make the row "not run here"). Every read is redirected, verified and
noted here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from helpers.core.options import CODE_VERSION, config_hash, field_defaults, result_path
from helpers.core.result_files import read_verified


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
        """Each run-based row's runs by its key, each once, in the order first read (a row built
        twice keeps the smaller set)."""
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
    """What a read of ``config`` is answered with (itself unless :func:`redirecting_reads` is active)."""
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


def _stored_at(config: Any) -> Any:
    """``(config, path)``: the run a read of ``config`` is answered with (a tool's redirect included)
    and its file; ``None`` when a tool answers "missing", :data:`HIDDEN` when it leaves the run out."""
    target = redirect(config)
    if target is None or target is HIDDEN:
        return target
    if isinstance(target, Elsewhere):  # a tool reads this run from another folder
        return target.config, result_path(target.config, target.folder)
    return target, result_path(target)


def has_result(config: Any) -> bool:
    """Whether a result for ``config`` is stored, without reading it (a read ties a run to a row);
    a hidden run counts as stored."""
    where = _stored_at(config)
    return where is HIDDEN or (where is not None and where[1].exists())


def load_results(configs: Iterable[Any]) -> list[dict | None]:
    """:func:`load_result` of each config in order, leaving out the runs a tool hides
    (:data:`HIDDEN`)."""
    return [load_result(cfg) for cfg in configs if not is_hidden(cfg)]


def load_result(config: Any) -> dict | None:
    """The cached result for ``config`` (``None``: none), verified first
    (:func:`helpers.core.result_files.read_verified`; :class:`~helpers.core.result_files.CorruptResult`)."""
    where = _stored_at(config)
    if where is None or where is HIDDEN or not where[1].exists():
        return None
    config, path = where
    result = read_verified(path, field_defaults(type(config)), CODE_VERSION, expected_hash=config_hash(config))
    note_read(config, result)
    return result
