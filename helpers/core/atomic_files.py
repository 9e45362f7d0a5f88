"""Files written so that a reader never sees half of one, and the temporary files a killed writer
leaves behind (results, failure records, checkpoints, weights)."""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def write_failure(path: Path, what: str, err: BaseException) -> OSError:
    """The error of a write of ``what`` to ``path`` that the disk refused (full, quota, read-only),
    naming the path and saying the previous file is unchanged (writes go through a temporary file)."""
    code = getattr(err, "errno", None) or errno.EIO
    reason = getattr(err, "strerror", None) or str(err).strip().splitlines()[-1][:300]
    hint = " (is the disk full?)" if code in (errno.ENOSPC, errno.EIO) else ""
    return OSError(code, f"could not write the {what} {path}: {reason}{hint}; the previous file, if any, is unchanged")


def write_json_atomic(path: Path, data: dict, what: str = "JSON file") -> None:
    """Write JSON to a temp file in the same folder, then rename: readers never see half a file.
    A write the disk refuses raises :func:`write_failure`'s error, naming ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            # compact: per-epoch histories of hundreds of runs are committed
            json.dump(data, fh, sort_keys=True, allow_nan=False, separators=(",", ":"))
            fh.write("\n")
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise write_failure(path, what, err) from err
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by its name (``"nan"``, ``"inf"``,
    ``"-inf"``), in dicts, lists and tuples: a failure record must be writable whatever went wrong."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:  # not empty, or already gone
        pass


#: When this process started (close enough: when this module was imported).
_PROCESS_START = time.time()
#: How much older than the process start a temporary file must be to count as stale (another
#: process's writer touches its file with every block; this spares a write begun just before).
STALE_TEMP_MARGIN_S = 60.0


def remove_stale_temp_files(*folders: Path) -> list[Path]:
    """Delete the ``*.tmp`` files in ``folders`` last written before this process started
    (:data:`STALE_TEMP_MARGIN_S`): left by a killed writer. Returns what was deleted."""
    removed = []
    cutoff = _PROCESS_START - STALE_TEMP_MARGIN_S
    for folder in folders:
        try:
            candidates = [p for p in folder.iterdir() if p.name.endswith(".tmp") and p.is_file()]
        except OSError:  # no such folder yet
            continue
        for tmp in candidates:
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
                    removed.append(tmp)
            except OSError:  # gone meanwhile, or not ours to delete
                continue
    return removed
