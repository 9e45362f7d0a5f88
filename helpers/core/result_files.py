"""Result files that prove their own integrity: a content checksum, and checks on every load.

A result JSON is the book's evidence: an edited, copied, truncated or failed file must never read
as a cached success. Each carries a ``checksum`` (SHA-256 of its canonical JSON without that
field), and :func:`read_verified` checks, on every load:

* the path is a regular file of at most :data:`MAX_RESULT_BYTES` (a FIFO, a directory or a device
  is reported, never opened) that parses as a JSON object with ``config``, ``config_hash``,
  ``status`` and ``checksum``, no key given twice at any depth, and no :data:`SCHEMA_VERSION` but
  the one this code reads;
* ``status`` is ``"ok"`` and every number in it is finite;
* the checksum matches the content (catches a one-number edit);
* ``config_hash`` equals the file name and the hash of the stored ``config`` (catches another
  run's file copied over this one, or an edited config);
* when the caller knows which config it asked for, that the file is that config's.

A failure raises :class:`CorruptResult` naming the file and every problem;
``python -m tools.verify_results`` checks every committed result.

Every file of a run (results, failure records, checkpoints, weights) is written atomically
(:func:`write_json_atomic`: a temporary file, then a rename), so a reader never sees half of one;
:func:`remove_stale_temp_files` clears what a killed writer left.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REQUIRED_KEYS: tuple[str, ...] = ("config", "config_hash", "status", "checksum")

#: The result format this code reads (no ``schema_version``: format 1); another is refused.
SCHEMA_VERSION: int = 1

#: The largest result file read (the largest committed one is about 0.1 MB).
MAX_RESULT_BYTES: int = 64 * 2**20


class CorruptResult(ValueError):
    """A result file failed its integrity checks (the message names the file and each problem)."""


class OtherFormat(CorruptResult):
    """A result file of another :data:`SCHEMA_VERSION`: not damaged, so never retrained over."""


def _canonical(data: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in data.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, allow_nan=False, separators=(",", ":")).encode()


def content_checksum(data: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the result's canonical JSON, leaving out the ``checksum`` field."""
    return "sha256:" + hashlib.sha256(_canonical(data)).hexdigest()


def with_checksum(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with its ``checksum`` field set."""
    return {**data, "checksum": content_checksum(data)}


def hash_of_config(config: Mapping[str, Any], defaults: Mapping[str, Any], code_version: str) -> str:
    """The cache key of a *stored* config dict: the same payload as
    :func:`helpers.core.results_cache.config_hash` (fields at their default left out, code version in)."""
    payload = {k: v for k, v in config.items() if k not in defaults or defaults[k] != v}
    text = json.dumps({"code_version": code_version, **payload}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _non_finite(value: Any, path: str = "") -> list[str]:
    if isinstance(value, float) and not math.isfinite(value):
        return [path or "/"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}/{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}[{i}]")]
    return []


def config_precision(config: Mapping[str, Any]) -> str:
    """The training precision a stored config asks for: its own ``precision`` field, or that of
    the TrainConfig it wraps (``train``, as a ReLU-ization arm stores it); float32 without either."""
    inner = config.get("train")
    if "precision" not in config and isinstance(inner, Mapping):
        return inner.get("precision", "float32")
    return config.get("precision", "float32")


def find_problems(
    path: Path, data: Any, defaults: Mapping[str, Any] | None, code_version: str, expected_hash: str | None = None
) -> list[str]:
    """Every integrity problem of the result ``data`` read from ``path`` (empty: sound).
    ``defaults``: the config class's field defaults (``None``: unknown, hash not recomputed);
    ``expected_hash``: the key the caller asked for."""
    if not isinstance(data, dict):
        return [f"not a JSON object but {type(data).__name__}"]
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        return [f"missing {', '.join(missing)} (a result file has {', '.join(REQUIRED_KEYS)})"]
    problems: list[str] = []
    if data["status"] != "ok":
        problems.append(f"status is {data['status']!r}, not 'ok' (a failed run is never a cached result)")
    bad_numbers = _non_finite(data)
    if bad_numbers:
        problems.append(f"non-finite numbers at {', '.join(bad_numbers[:5])}")
    else:  # a NaN cannot be serialised canonically, so the checksum is checked only without them
        actual = content_checksum(data)
        if data["checksum"] != actual:
            problems.append(
                f"checksum {data['checksum']!r} does not match the content ({actual}): "
                "the file was edited after it was written"
            )
    stored = data["config_hash"]
    if stored != path.stem:
        problems.append(f"config_hash {stored!r} is not the file name {path.stem!r} (another run's file copied here?)")
    if expected_hash is not None and path.stem != expected_hash:
        problems.append(f"file name {path.stem!r} is not the requested config's hash {expected_hash!r}")
    recorded = (data.get("provenance") or {}).get("precision") if isinstance(data.get("provenance"), dict) else None
    if recorded is not None and isinstance(data["config"], dict) and recorded != config_precision(data["config"]):
        problems.append(
            f"provenance says it trained in {recorded!r} but its config asks for {config_precision(data['config'])!r}"
        )
    if defaults is not None and isinstance(data["config"], dict):
        recomputed = hash_of_config(data["config"], defaults, code_version)
        if recomputed != stored:
            problems.append(f"the stored config hashes to {recomputed!r}, not its config_hash {stored!r}")
    problems += _history_problems(data)
    if isinstance(data.get("train"), Mapping):  # a run that trains inside an analysis (ReLU-ization)
        problems += [f"train: {p}" for p in _history_problems(data["train"])]
    return problems


def _history_problems(data: Mapping[str, Any]) -> list[str]:
    """A history is one row per epoch, 1, 2, ... in order (a restamped file with rows cut, repeated
    or reordered passes its checksum). The epoch count is not compared: analyses cut runs short."""
    history = data.get("history")
    if history is None:
        return []
    rows = history if isinstance(history, list) else []
    epochs = [row.get("epoch") if isinstance(row, Mapping) else None for row in rows]
    if not isinstance(history, list) or epochs != list(range(1, len(epochs) + 1)):
        shown = epochs[:8] if isinstance(history, list) else type(history).__name__
        return [f"history is not one row per epoch 1, 2, ... in order (epochs {shown})"]
    problems = []
    best = data.get("best_epoch")
    if best is not None and not (isinstance(best, int) and not isinstance(best, bool) and 1 <= best <= len(rows)):
        problems.append(f"best_epoch {best!r} is not an epoch of its {len(rows)}-epoch history")
    metric = data.get("best_val_metric")
    if metric is not None and (isinstance(metric, bool) or not isinstance(metric, (int, float))):
        problems.append(f"best_val_metric {metric!r} is not a number")
    return problems


class DuplicateKey(ValueError):
    """A JSON object gave ``key`` twice (plain ``json`` keeps the last value silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"field {key} given twice")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook`` for every JSON the book reads: a key given twice is
    :class:`DuplicateKey` (a forged first value would otherwise hide behind the original)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        data[key] = value
    return data


def _file_kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a directory", stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device"}
    kinds |= {stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket"}
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


_RESTORE = "Restore it from git, or delete it to retrain the run."


def read_result_json(path: Path) -> Any:
    """The parsed JSON of the result file ``path``, read strictly (see the module docstring; a
    symlink is followed); :class:`CorruptResult` naming the file and what to do."""
    try:
        info = os.stat(path)
    except OSError as err:
        raise CorruptResult(f"{path}: cannot be read ({err.strerror}).") from None
    if not stat.S_ISREG(info.st_mode):
        raise CorruptResult(f"{path}: {_file_kind(info.st_mode)}, not a result file; it was not opened. Remove it.")
    if info.st_size > MAX_RESULT_BYTES:
        raise CorruptResult(
            f"{path}: {info.st_size:,} bytes, more than any result file ({MAX_RESULT_BYTES:,} at most). {_RESTORE}"
        )
    try:
        data = json.loads(path.read_text(), object_pairs_hook=unique_keys)
    except DuplicateKey as err:
        raise CorruptResult(
            f"{path}: the key {err.key} is given twice; the file was edited by hand. {_RESTORE}"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CorruptResult(f"{path}: not valid JSON ({err}); the file is truncated or damaged. {_RESTORE}") from None
    except ValueError as err:  # an integer literal of thousands of digits (Python's conversion limit)
        raise CorruptResult(f"{path}: a number too large for a result file ({err}). {_RESTORE}") from None
    except RecursionError:  # too deep to parse: no result the book writes is
        raise CorruptResult(
            f"{path}: JSON nested too deeply to be a result file; the file is damaged. {_RESTORE}"
        ) from None
    version = data.get("schema_version", SCHEMA_VERSION) if isinstance(data, dict) else SCHEMA_VERSION
    if version != SCHEMA_VERSION:
        raise OtherFormat(
            f"{path}: result format (schema_version) {version!r}, but this code reads format {SCHEMA_VERSION}. "
            "It was written by other code: update this checkout (git pull) to read it, or move it out of "
            "results/ and retrain the run. The file is not damaged; do not restamp it."
        )
    return data


def verify_data(
    path: Path, data: Any, defaults: Mapping[str, Any] | None, code_version: str, expected_hash: str | None = None
) -> dict[str, Any]:
    """``data`` (read from ``path``) when :func:`find_problems` finds nothing, else :class:`CorruptResult`."""
    try:
        problems = find_problems(path, data, defaults, code_version, expected_hash)
    except RecursionError:  # parsed but too deep to walk
        problems = ["JSON nested too deeply to be a result file; the file is damaged"]
    if problems:
        raise CorruptResult(f"{path}: " + "; ".join(problems) + f". {_RESTORE}")
    return data


def read_verified(
    path: Path, defaults: Mapping[str, Any] | None, code_version: str, expected_hash: str | None = None
) -> dict[str, Any]:
    """Read a result file (:func:`read_result_json`) and check it (:func:`verify_data`), unless this
    process verified it unchanged (:func:`file_identity`) against the same expectations."""
    key = (file_identity(path), repr(sorted(defaults.items())) if defaults else "", code_version, expected_hash)
    if key[0] is not None and key in _VERIFIED:
        return json.loads(path.read_text())  # checked strictly when verified: the plain parser suffices
    data = verify_data(path, read_result_json(path), defaults, code_version, expected_hash)
    if key[0] is not None:
        if len(_VERIFIED) > 50_000:
            _VERIFIED.clear()
        _VERIFIED.add(key)
    return data


_VERIFIED: set[tuple] = set()


def file_identity(path: Path) -> tuple[str, int, int, int, int] | None:
    """What tells a file's content apart without reading it: resolved path, size, modification and
    change times (no user can set ctime back) and inode; None when it cannot be stat'ed."""
    try:
        info = os.stat(path)
        return (str(Path(path).resolve()), info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    except (OSError, ValueError):
        return None


# ------------------------------------------------------------------------------ atomic writes
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
