"""The per-epoch checkpoint of :func:`helpers.core.train.fit`: written atomically, bound to its run,
restored exactly or moved aside.

It holds the model, optimiser, scheduler, hooks, every RNG and the data order's generator, so a
resumed run ends identical to an uninterrupted one. An unusable one is reported, moved aside and
the run restarts from epoch 1, never half-loaded.

Trained weights kept beside a result (:func:`save_weights`, :func:`load_weights`) are verified
when read back: not committed, an analysis keeps a run's final state dict beside its result, with
the training config's hash inside and a ``.sha256`` beside it, and retrains when either does not
match (:func:`load_weights` warns and returns ``None``): never a stale or damaged network.
"""

from __future__ import annotations

import copy
import hashlib
import os
import random
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

from helpers.core.result_files import write_failure

#: Keys every checkpoint written by :func:`helpers.core.train.fit` has.
CHECKPOINT_KEYS: frozenset[str] = frozenset({"epoch", "step", "model", "optimizer", "hooks", "rng", "history"})


def _hook_state(hook: object) -> Any:
    """Hooks may implement any subset of ``TrainHook``'s methods (duck typing)."""
    return hook.state_dict() if hasattr(hook, "state_dict") else None


def _load_hook_state(hook: object, state: Any) -> None:
    if hasattr(hook, "load_state_dict"):
        hook.load_state_dict(state)


@dataclass
class Progress:
    """Where a run stands: last finished ``epoch`` (0: none), optimiser ``step``s, history, the best
    epoch's weights, and the wall and CPU seconds before a resume (so it reports its whole cost)."""

    epoch: int = 0
    step: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    best_state: dict[str, torch.Tensor] | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def start_clock(self) -> None:
        # Wall time overstates a paused run's cost; CPU time is what a core-hour budget spends.
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def totals(self) -> tuple[float, float]:
        """Wall and CPU seconds of every epoch so far, those before a resume included."""
        return self.seconds + time.perf_counter() - self._wall, self.cpu_seconds + time.process_time() - self._cpu


def rng_state(train_loader: DataLoader | None) -> dict[str, Any]:
    """Every RNG a training step may draw from, in types ``torch.load(weights_only=True)``
    accepts: NumPy's MT19937 key array is stored as a tensor, not an ``ndarray``."""
    kind, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": {
            "kind": str(kind),
            "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64).copy()),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached_gaussian),
        },
    }
    generator = getattr(train_loader, "generator", None)
    if generator is not None:
        state["loader"] = generator.get_state()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()  # dropout and sampling on the GPUs
    return state


def set_rng_state(state: dict[str, Any], train_loader: DataLoader | None) -> None:
    torch.set_rng_state(state["torch"])
    python = state["python"]  # a tuple once pickled, possibly a list after other round trips
    random.setstate((python[0], tuple(python[1]), python[2]))
    numpy_state = state["numpy"]
    if isinstance(numpy_state, dict):
        keys = numpy_state["keys"]
        keys = keys.numpy() if isinstance(keys, torch.Tensor) else np.asarray(keys)
        np.random.set_state(
            (
                numpy_state["kind"],
                keys.astype(np.uint32),
                numpy_state["pos"],
                numpy_state["has_gauss"],
                numpy_state["cached_gaussian"],
            )
        )
    else:  # the tuple of checkpoints written before the tensor form
        np.random.set_state(numpy_state)
    generator = getattr(train_loader, "generator", None)
    if generator is not None and "loader" in state:
        generator.set_state(state["loader"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` atomically: a unique (``mkstemp``) temporary file in the same folder, then a
    rename, so two writers of one run never write into each other's file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(payload, handle)
        os.replace(tmp, path)
    except (OSError, RuntimeError) as err:  # torch reports a failed write as its own RuntimeError
        Path(tmp).unlink(missing_ok=True)
        raise write_failure(path, "checkpoint", err) from err
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def checkpoint_payload(
    run: Progress,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None,
    hooks: Sequence[object],
    train_loader: DataLoader,
    run_key: Mapping[str, str] | None,
) -> dict[str, Any]:
    """What :func:`save_checkpoint` writes after each epoch (``run_key`` binds it to its run)."""
    seconds, cpu_seconds = run.totals()
    return {
        "epoch": run.epoch,
        "step": run.step,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "hooks": [_hook_state(hook) or {} for hook in hooks],
        "rng": rng_state(train_loader),
        "history": run.history,
        "best_state": run.best_state,
        "train_seconds": seconds,
        "cpu_seconds": cpu_seconds,
        **({"run_key": dict(run_key)} if run_key is not None else {}),
    }


def _numpy_safe_globals() -> list[Any]:
    """NumPy array and scalar constructors (data only, so ``weights_only`` still runs no code), for
    older checkpoints' RNG state and hooks that record NumPy scalars."""
    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy 1.x
        from numpy.core import multiarray  # type: ignore[no-redef]
    dtypes = [type(np.dtype(t)) for t in (np.uint8, np.uint32, np.int32, np.int64, np.float32, np.float64, np.bool_)]
    return [multiarray._reconstruct, multiarray.scalar, np.ndarray, np.dtype, *dtypes]


def _read_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint's payload, loaded with ``weights_only=True`` (a planted file cannot run code)."""
    with torch.serialization.safe_globals(_numpy_safe_globals()):
        saved = torch.load(path, weights_only=True)
    if not isinstance(saved, dict):
        raise ValueError(f"expected a dict, got {type(saved).__name__}")
    missing = CHECKPOINT_KEYS - set(saved)
    if missing:
        raise ValueError(f"keys missing: {sorted(missing)}")
    return saved


def _discard_checkpoint(path: Path, why: str, suffix: str = ".corrupt") -> None:
    """Report an unusable checkpoint and move it aside (``<name>.corrupt``, or ``.foreign`` for
    another run's), so the run restarts instead of stopping."""
    aside = path.with_name(path.name + suffix)
    try:
        os.replace(path, aside)
        where = f"moved to {aside}"
    except OSError:
        path.unlink(missing_ok=True)
        where = "deleted"
    warnings.warn(f"checkpoint {path} {why}; {where}; the run restarts from epoch 1", RuntimeWarning, stacklevel=3)


def _describe_key(key: Mapping[str, Any] | None) -> str:
    if not key:
        return "no run key (an older or foreign checkpoint)"
    return ", ".join(f"{k}={v}" for k, v in sorted(key.items()))


def load_checkpoint(
    path: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    hooks: Sequence[object] = (),
    train_loader: DataLoader | None = None,
    run_key: Mapping[str, str] | None = None,
    epochs: int | None = None,
) -> dict[str, Any] | None:
    """Restore a checkpoint into the objects given; return its payload, or ``None`` when it is
    unusable (truncated, refused by ``weights_only``, for other objects, an unreachable state:
    :func:`_check_progress`) or, with ``run_key``, another run's. Then a ``RuntimeWarning`` names
    why, the file is moved aside and every object is left as it was."""
    path = Path(path)
    try:
        saved = _read_checkpoint(path)
    except Exception as err:  # noqa: BLE001 - any unreadable file means: start again
        _discard_checkpoint(path, f"could not be read ({type(err).__name__}: {str(err)[:300]})")
        return None
    if run_key is not None and saved.get("run_key") != dict(run_key):
        # A checkpoint of another configuration fits the same model and optimiser shapes, so
        # loading it would silently continue someone else's training.
        _discard_checkpoint(
            path,
            f"belongs to another run ({_describe_key(saved.get('run_key'))}; this run: {_describe_key(run_key)})",
            suffix=".foreign",
        )
        return None
    before = (
        copy.deepcopy(model.state_dict()),
        copy.deepcopy(optimizer.state_dict()),
        scheduler.state_dict() if scheduler is not None else None,
        [copy.deepcopy(_hook_state(hook)) for hook in hooks],
        rng_state(train_loader),
    )
    try:
        _check_progress(saved, epochs, scheduler is not None)
        if len(saved["hooks"]) != len(hooks):
            raise ValueError(f"it holds state for {len(saved['hooks'])} hooks, this run has {len(hooks)}")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        if scheduler is not None and saved.get("scheduler") is not None:
            scheduler.load_state_dict(saved["scheduler"])
        for hook, hook_state in zip(hooks, saved["hooks"]):
            _load_hook_state(hook, hook_state)
        set_rng_state(saved["rng"], train_loader)
    except Exception as err:  # noqa: BLE001 - leave everything as it was and start again
        model.load_state_dict(before[0])
        optimizer.load_state_dict(before[1])
        if scheduler is not None:
            scheduler.load_state_dict(before[2])
        for hook, hook_state in zip(hooks, before[3]):
            if hook_state is not None:
                _load_hook_state(hook, hook_state)
        set_rng_state(before[4], train_loader)
        _discard_checkpoint(path, f"does not fit this run ({type(err).__name__}: {str(err)[:300]})")
        return None
    return saved


def resume(path: Path | None, *args: Any, **kwargs: Any) -> Progress:
    """The :class:`Progress` of the checkpoint at ``path`` restored by :func:`load_checkpoint`
    (same arguments), or a fresh start when there is none or it was unusable (reported, moved aside)."""
    saved = load_checkpoint(path, *args, **kwargs) if path is not None and path.exists() else None
    if saved is None:
        return Progress()
    return Progress(
        saved["epoch"],
        saved["step"],
        saved["history"],
        saved.get("best_state"),
        float(saved.get("train_seconds", 0.0)),
        float(saved.get("cpu_seconds", 0.0)),
    )


def _check_progress(saved: Mapping[str, Any], epochs: int | None, has_scheduler: bool) -> None:
    """``ValueError`` naming what a checkpoint's progress gets wrong for this run (epoch, history
    rows, optimiser or scheduler state)."""
    epoch, history, step = saved.get("epoch"), saved.get("history"), saved.get("step")
    if type(epoch) is not int or not 1 <= epoch <= (epochs or epoch):
        raise ValueError(f"it is at epoch {epoch!r} of a run of {epochs} epochs")
    rows = history if isinstance(history, list) else []
    if [row.get("epoch") if isinstance(row, Mapping) else None for row in rows] != list(range(1, epoch + 1)):
        rows = len(history) if isinstance(history, list) else type(history).__name__
        raise ValueError(f"its history holds {rows} epoch rows, not one for each of the {epoch} epochs it trained")
    if type(step) is not int or step < epoch:
        raise ValueError(f"it counts {step!r} optimiser steps after {epoch} epochs")
    if not isinstance(saved.get("optimizer"), Mapping) or not saved["optimizer"].get("param_groups"):
        raise ValueError("it holds no optimiser state")
    if has_scheduler and saved.get("scheduler") is None:
        raise ValueError("it holds no learning-rate scheduler state, and this run has a scheduler")


# ------------------------------------------------------------------- trained weights beside a result
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
