"""Decoded-array cache: decode a dataset once, reload it as uint8 arrays in about a second.

Arrays are stored uncompressed (``.npz`` of raw ``.npy`` members) under
``helpers.core.runtime.cache_root()/datasets/``, keyed by the source files' resolved path, size and
modification time plus :data:`CACHE_FORMAT`; replacing or touching a source file therefore
invalidates its entry. Writes are atomic (temporary file + rename), so a killed decode leaves no
half-written entry, and an unreadable entry is rebuilt rather than trusted.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from helpers.core.runtime import cache_root

#: Bump when a decoder changes what it stores, so stale entries are not reused.
CACHE_FORMAT = "1"


def fingerprint(paths: Iterable[Path], extra: str = "") -> str:
    """A short key for ``paths``: resolved path, size and mtime of each, and ``extra``."""
    parts = [CACHE_FORMAT, extra]
    for path in paths:
        stat = path.stat()
        parts.append(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def cache_file(name: str, key: str) -> Path:
    """Where the arrays of dataset ``name`` with fingerprint ``key`` are cached."""
    return cache_root() / "datasets" / f"{name}-{key}.npz"


def cached_arrays(name: str, key: str, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Arrays for ``(name, key)`` from the cache, or ``build()`` them and cache the result."""
    path = cache_file(name, key)
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {k: stored[k] for k in stored.files}
        except Exception as exc:  # noqa: BLE001 - a broken entry is rebuilt, never trusted
            warnings.warn(f"rebuilding unreadable dataset cache {path}: {exc}", stacklevel=2)
    arrays = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return arrays
