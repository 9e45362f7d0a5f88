"""Trained weights kept beside a result, verified when they are read back.

Weights are not committed; an analysis keeps a run's final state dict beside its result, with the
training config's hash inside and a ``.sha256`` beside it, and retrains when either does not match
(:func:`load_weights` warns and returns ``None``): never a stale or damaged network.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from pathlib import Path

import torch

__all__ = ["save_weights", "load_weights", "checksum_path"]


def checksum_path(path: Path) -> Path:
    """Where the checksum of the weights file ``path`` is kept."""
    return path.with_name(path.name + ".sha256")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def save_weights(path: Path, state_dict: dict[str, torch.Tensor], config_hash: str) -> None:
    """Write ``state_dict`` (with the ``config_hash`` of the run that trained it) to ``path``
    atomically, then its checksum beside it."""
    if not isinstance(config_hash, str) or not config_hash:
        raise ValueError(f"config_hash must be a non-empty string, got {config_hash!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        torch.save({"config_hash": config_hash, "state_dict": state_dict}, tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    checksum_path(path).write_text(_sha256(path) + "\n")


def load_weights(path: Path, config_hash: str) -> dict[str, torch.Tensor] | None:
    """The state dict saved at ``path`` by :func:`save_weights` for ``config_hash``; ``None`` when
    the file is missing, and ``None`` with a warning when it is damaged, has no checksum, or was
    trained by another config (the caller retrains)."""
    path = Path(path)
    if not path.exists():
        return None
    why = ""
    sums = checksum_path(path)
    if not sums.exists():
        why = "has no checksum file beside it"
    elif sums.read_text().strip() != _sha256(path):
        why = "does not match its checksum (damaged or replaced)"
    else:
        try:
            payload = torch.load(path, weights_only=True)
        except Exception as err:  # noqa: BLE001 - any unreadable file is reported the same way
            payload, why = None, f"could not be read ({type(err).__name__})"
        if payload is not None:
            if not isinstance(payload, dict) or "state_dict" not in payload:
                why = "is not a weights file of this book"
            elif payload.get("config_hash") != config_hash:
                why = f"was trained by config {payload.get('config_hash')!r}, not {config_hash!r}"
            else:
                return payload["state_dict"]
    warnings.warn(f"weights file {path} {why}; the run is retrained", RuntimeWarning, stacklevel=2)
    return None
