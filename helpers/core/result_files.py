"""Result files that prove their own integrity: a content checksum, and checks on every load.

A result JSON under ``results/`` is the book's evidence, so a file that was edited by hand,
copied over another run's file, truncated, or recorded a failure must never be read as a
cached success. Every result written by :func:`helpers.core.results_cache.run_or_load` carries a
``checksum`` (SHA-256 of its canonical JSON without that field), and :func:`read_verified`
checks, on every load:

* the file parses as a JSON object with ``config``, ``config_hash``, ``status`` and ``checksum``;
* ``status`` is ``"ok"`` and every number in it is finite;
* the checksum matches the content (catches a one-number edit);
* ``config_hash`` equals the file name and the hash of the stored ``config`` (catches another
  run's file copied over this one, or an edited config);
* when the caller knows which config it asked for, that the file is that config's.

A failure raises :class:`CorruptResult` naming the file and every problem found.
``python -m helpers.verify_results`` runs these checks over every committed result (CI does).

Part of the core: imports no method module and nothing from :mod:`helpers.core.results_cache`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["CorruptResult", "content_checksum", "find_problems", "hash_of_config", "read_verified", "with_checksum"]

REQUIRED_KEYS: tuple[str, ...] = ("config", "config_hash", "status", "checksum")


class CorruptResult(ValueError):
    """A result file failed its integrity checks (the message names the file and each problem)."""


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
    """Every integrity problem of the result ``data`` read from ``path`` (empty: it is sound).

    ``defaults`` are the config class's field defaults (``None``: the class is unknown, so the
    stored config's hash is not recomputed); ``expected_hash`` is the key the caller asked for.
    """
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
    return problems


def read_verified(
    path: Path, defaults: Mapping[str, Any] | None, code_version: str, expected_hash: str | None = None
) -> dict[str, Any]:
    """Read a result file and run :func:`find_problems` on it; :class:`CorruptResult` if any."""
    try:
        data = json.loads(path.read_text())
        problems = find_problems(path, data, defaults, code_version, expected_hash)
    except IsADirectoryError as err:
        raise CorruptResult(
            f"{path}: a directory, not a result file. Remove it (or restore the file from git) to retrain the run."
        ) from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CorruptResult(
            f"{path}: not valid JSON ({err}); the file is truncated or damaged. "
            "Restore it from git, or delete it to retrain the run."
        ) from err
    except RecursionError:  # too deep to parse, or parsed but too deep to walk: no result the book writes is
        raise CorruptResult(
            f"{path}: JSON nested too deeply to be a result file; the file is damaged. "
            "Restore it from git, or delete it to retrain the run."
        ) from None
    if problems:
        raise CorruptResult(
            f"{path}: " + "; ".join(problems) + ". Restore it from git, or delete it to retrain the run."
        )
    return data
