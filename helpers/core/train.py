"""A small, readable training loop: ``fit(model, train_loader, val_loader, ...)``.

One loop serves the three tasks of the book: classification (metric: accuracy, higher is better),
regression (metric: MSE, lower is better) and language modelling (metric: perplexity, lower is
better). Method-specific behaviour (λ annealing, Flex-Act temperature and regulariser, per-layer λ
logging) plugs in through :class:`TrainHook` objects, so this file knows nothing about any method.

Each epoch ends with a checkpoint (model, optimiser, scheduler, hooks, RNG and data-order state)
written atomically; calling ``fit`` again with the same ``checkpoint_path`` resumes after the last
finished epoch and ends with metrics identical to an uninterrupted run.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import random
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

from helpers.core import distributed
from helpers.core.atomic_files import write_failure
from helpers.core.device import move_to
from helpers.core.provenance import note_steps
from helpers.core.results_cache import RunFailed
from helpers.core.runtime import progress

Task = Literal["classification", "regression", "lm"]
TASKS: tuple[str, ...] = ("classification", "regression", "lm")


class TrainHook:
    """Base class for training hooks; every method is optional.

    Hooks that hold state across epochs (e.g. the λ values saved at the annealing switch) should
    implement ``state_dict``/``load_state_dict`` so that a resumed run continues identically.
    """

    def on_epoch_start(self, epoch: int, model: nn.Module) -> None:
        """Called before epoch ``epoch`` (1-based) is trained."""

    def on_step(self, step: int, model: nn.Module) -> None:
        """Called before each optimisation step (0-based global step)."""

    def extra_loss(self, model: nn.Module) -> torch.Tensor | None:
        """A term added to the task loss of the current batch (after the forward pass)."""
        return None

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        """Extra entries for this epoch's history row (JSON-able)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


def optimizer_from_groups(
    groups: list[dict[str, Any]],
    name: str = "sgd",
    *,
    lr: float,
    momentum: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.999),
) -> torch.optim.Optimizer:
    """SGD or AdamW over parameter groups. ``momentum`` applies to SGD only, ``betas`` to AdamW only."""
    key = name.lower() if isinstance(name, str) else name
    if key == "sgd":
        if isinstance(momentum, bool) or not isinstance(momentum, Real) or not math.isfinite(momentum):
            raise ValueError(f"momentum must be a finite number, got {momentum!r}")
        momentum = float(momentum)
        if momentum < 0:
            raise ValueError(f"momentum must be >= 0, got {momentum!r}")
        return torch.optim.SGD(groups, lr=lr, momentum=momentum)
    if key == "adamw":
        return torch.optim.AdamW(groups, lr=lr, betas=betas)
    raise ValueError(f"unknown optimizer {name!r}; choose 'sgd' or 'adamw'")


def _call(hook: object, method: str, *args: Any) -> Any:
    """Hooks may implement any subset of TrainHook's methods (duck typing)."""
    fn = getattr(hook, method, None)
    return fn(*args) if fn is not None else None


def higher_is_better(task: Task) -> bool:
    """Accuracy improves upward; MSE and perplexity downward."""
    return task == "classification"


def task_loss(task: Task, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if task == "regression":
        return nn.functional.mse_loss(output.reshape(target.shape), target)
    # classification: (N, C) logits; lm: (N, T, V) logits with (N, T) targets
    return nn.functional.cross_entropy(output.reshape(-1, output.shape[-1]), target.reshape(-1))


def model_device(model: nn.Module) -> torch.device:
    """The device of ``model``'s first parameter or buffer (the CPU for a model with neither)."""
    for tensor in (*model.parameters(), *model.buffers()):
        return tensor.device
    return torch.device("cpu")


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, task: Task, device: torch.device | None = None) -> dict[str, float]:
    """Mean loss and the task metric (accuracy / MSE / perplexity) over ``loader``, with the
    batches moved to ``device`` (default: where ``model`` is)."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    device = model_device(model) if device is None else device
    was_training = model.training
    model.eval()
    total_loss, total_correct, total_count = 0.0, 0, 0
    for inputs, targets in loader:
        inputs, targets = move_to((inputs, targets), device)
        outputs = model(inputs)
        n = targets.numel() if task != "regression" else targets.shape[0]
        total_loss += task_loss(task, outputs, targets).item() * n
        if task == "classification":
            total_correct += (outputs.argmax(dim=-1) == targets).sum().item()
        total_count += n
    model.train(was_training)
    mean_loss = total_loss / max(total_count, 1)
    if task == "classification":
        metric = total_correct / max(total_count, 1)
    elif task == "lm":
        metric = math.exp(min(mean_loss, 50.0))  # perplexity; capped so a diverged model stays finite
    else:
        metric = mean_loss
    return {"val_loss": mean_loss, "val_metric": metric}


def _rng_state(train_loader: DataLoader | None) -> dict[str, Any]:
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


def _set_rng_state(state: dict[str, Any], train_loader: DataLoader | None) -> None:
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


def _save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` atomically: a unique temporary file in the same folder, then a rename.

    ``mkstemp`` gives every writer its own temporary name, so two processes checkpointing the
    same run (or a stale file from a killed one) never write into each other's file.
    """
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


#: Keys every checkpoint written by :func:`fit` has.
CHECKPOINT_KEYS: frozenset[str] = frozenset({"epoch", "step", "model", "optimizer", "hooks", "rng", "history"})


def _numpy_safe_globals() -> list[Any]:
    """NumPy array and scalar constructors: data only, so allowing them keeps ``weights_only``
    loading unable to run code, while checkpoints written before the RNG state was stored as a
    tensor (and hooks that record NumPy scalars) still load."""
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
    """Report an unusable checkpoint by path and move it aside (kept for inspection as
    ``<name>.corrupt``, or ``<name>.foreign`` for another run's), so the run restarts from
    scratch instead of stopping."""
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
    hooks: Sequence[TrainHook] = (),
    train_loader: DataLoader | None = None,
    run_key: Mapping[str, str] | None = None,
    epochs: int | None = None,
) -> dict[str, Any] | None:
    """Restore a :func:`fit` checkpoint into the objects given; return its payload, or ``None``.

    Its progress must be one this run can reach (:func:`_check_progress`: an epoch within
    ``epochs``, one history row per epoch trained, the optimiser's state, the scheduler's when the
    run has one); a checkpoint of the same run in an impossible state is refused like a foreign one.

    ``None`` means the file was unusable (truncated, not a checkpoint, refused by
    ``weights_only``, or written for another model, optimiser or set of hooks) or, when
    ``run_key`` is given, written by another run (its stored ``run_key``, e.g. config hash and
    code version, differs or is absent): a ``RuntimeWarning`` names the path and why (both keys
    for another run's file), the file is moved aside (``.corrupt`` or ``.foreign``, never
    deleted) and every object is left exactly as it was, so the caller trains from scratch.
    """
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
        [copy.deepcopy(_call(hook, "state_dict")) for hook in hooks],
        _rng_state(train_loader),
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
            _call(hook, "load_state_dict", hook_state)
        _set_rng_state(saved["rng"], train_loader)
    except Exception as err:  # noqa: BLE001 - leave everything as it was and start again
        model.load_state_dict(before[0])
        optimizer.load_state_dict(before[1])
        if scheduler is not None:
            scheduler.load_state_dict(before[2])
        for hook, hook_state in zip(hooks, before[3]):
            if hook_state is not None:
                _call(hook, "load_state_dict", hook_state)
        _set_rng_state(before[4], train_loader)
        _discard_checkpoint(path, f"does not fit this run ({type(err).__name__}: {str(err)[:300]})")
        return None
    return saved


def _check_progress(saved: Mapping[str, Any], epochs: int | None, has_scheduler: bool) -> None:
    """Raise ``ValueError`` naming what a checkpoint's progress gets wrong for this run."""
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


def _reads_loss_at_the_end(device: torch.device) -> bool:
    """Whether the loop sums the loss on the device and reads it once per epoch: off the CPU,
    where reading a value waits for the device's queue to drain at every step."""
    return device.type != "cpu"


class _DeviceLossSum:
    """An epoch's training loss summed on the device, with the first non-finite step, read once.

    The same float64 arithmetic as the per-step ``loss.item() * n`` sum of the CPU path, so both
    give the same number; a non-finite loss stops the run at the end of its epoch, naming its step."""

    def __init__(self, device: torch.device) -> None:
        self.total = torch.zeros((), dtype=torch.float64, device=device)
        self.first_bad = torch.full((), -1, dtype=torch.int64, device=device)

    def add(self, loss: torch.Tensor, n: int, step: int) -> None:
        value = loss.detach().to(torch.float64)
        self.total += value * n
        bad = ~torch.isfinite(value) & (self.first_bad < 0)
        self.first_bad = torch.where(bad, torch.full_like(self.first_bad, step), self.first_bad)

    def read(self, epoch: int) -> float:
        first_bad = int(self.first_bad)
        if first_bad >= 0:
            raise RunFailed(f"non-finite loss at epoch {epoch}, step {first_bad} (read at the end of the epoch)")
        return float(self.total)


def fit(
    model: nn.Module,
    train_loader: DataLoader,
    val_loader: DataLoader,
    *,
    optimizer: torch.optim.Optimizer,
    epochs: int,
    task: Task,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    hooks: Sequence[TrainHook] = (),
    checkpoint_path: str | Path | None = None,
    keep_best_state: bool = False,
    max_grad_norm: float | None = None,
    desc: str = "",
    autocast_dtype: torch.dtype | None = None,
    batch_transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    run_key: Mapping[str, str] | None = None,
    device: torch.device | None = None,
    train_module: nn.Module | None = None,
) -> dict[str, Any]:
    """Train ``model`` for ``epochs`` epochs and return its history.

    Returns ``{"history": [row per epoch], "best_epoch", "best_val_metric", "higher_is_better",
    "train_seconds", "cpu_seconds"}`` (the wall time and this process's CPU time of all epochs,
    those before a resume included)
    (plus ``"best_state"``, a state_dict copy of the best epoch, when ``keep_best_state``; it is
    kept in memory, not in the JSON result). Each history row has ``epoch`` (1-based),
    ``train_loss``, ``val_loss``, ``val_metric`` and whatever the hooks record. The scheduler,
    if any, is stepped once per epoch.

    ``device`` (default: where ``model`` is) is where the batches go; the caller has moved the
    model there (:func:`helpers.core.runs.build_run`). On the CPU the batches stay the very same
    tensors, so CPU results do not depend on this argument.

    ``autocast_dtype`` (e.g. ``torch.bfloat16``) runs the forward pass and the loss under
    ``torch.autocast(device.type, dtype=autocast_dtype)``; parameters, gradients and the
    optimiser stay float32. Evaluation runs under the same autocast, so the metrics describe the
    model as it trains. Callers check that the device supports the dtype
    (:func:`helpers.core.device.check_device_precision`).

    ``train_module`` is the module whose forward trains, when it is not ``model`` itself: a
    ``DistributedDataParallel`` wrapper of ``model`` under ``torchrun``
    (:mod:`helpers.core.distributed`). Hooks, evaluation and checkpoints use ``model``. In a
    process group, each rank trains on its shard of every global batch, the history's
    ``train_loss`` is summed over ranks, rank 0 alone writes the checkpoint (the others wait),
    and the ranks' model and hook states are checked equal after every epoch.

    ``batch_transform`` maps each training batch's inputs before the forward pass (augmentation:
    :mod:`helpers.core.augment`); validation batches are used as they are.

    ``run_key`` (e.g. ``{"config_hash": ..., "code_version": ...}``) binds the checkpoint to its
    run: it is stored in every checkpoint, and a checkpoint at ``checkpoint_path`` with another
    key (or none) is moved aside with a warning naming both, instead of being resumed.

    Raises :class:`helpers.core.results_cache.RunFailed` as soon as the loss is NaN or infinite;
    off the CPU at the end of that epoch, naming the step (the loss is summed on the device and
    read once per epoch: a read at every step would make the CPU wait for the GPU).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        raise ValueError(f"epochs must be a positive int (not a bool), got {epochs!r}")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if max_grad_norm is not None and (
        isinstance(max_grad_norm, bool)
        or not isinstance(max_grad_norm, Real)
        or not math.isfinite(max_grad_norm)
        or max_grad_norm <= 0
    ):
        raise ValueError(f"max_grad_norm must be None or a finite number > 0, got {max_grad_norm!r}")
    if run_key is not None and (
        not isinstance(run_key, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in run_key.items())
    ):
        raise TypeError(f"run_key must be a mapping of str to str, got {run_key!r}")
    if autocast_dtype not in (None, torch.bfloat16, torch.float16):
        raise ValueError(f"autocast_dtype must be None, torch.bfloat16 or torch.float16, got {autocast_dtype!r}")
    device = model_device(model) if device is None else device
    autocast = (
        (lambda: torch.autocast(device.type, dtype=autocast_dtype))
        if autocast_dtype is not None
        else contextlib.nullcontext
    )
    forward = model if train_module is None else train_module
    sharded = getattr(train_loader, "batch_sampler", None)
    if not isinstance(sharded, distributed.ShardedBatchSampler):
        sharded = None

    history: list[dict[str, Any]] = []
    best_state: dict[str, torch.Tensor] | None = None
    start_epoch, step = 1, 0
    # Training time of the epochs before a resume, carried in the checkpoint so that a run killed
    # and resumed still reports its whole cost (checkpoints older than this field count from 0).
    earlier_seconds = earlier_cpu_seconds = 0.0
    checkpoint = Path(checkpoint_path) if checkpoint_path is not None else None
    if checkpoint is not None and checkpoint.exists():
        resumed = load_checkpoint(checkpoint, model, optimizer, scheduler, hooks, train_loader, run_key, epochs)
        if resumed is not None:  # None: unreadable checkpoint, reported and moved aside
            history, step, best_state = resumed["history"], resumed["step"], resumed.get("best_state")
            start_epoch = resumed["epoch"] + 1
            earlier_seconds = float(resumed.get("train_seconds", 0.0))
            earlier_cpu_seconds = float(resumed.get("cpu_seconds", 0.0))
    # every rank must resume from the same checkpoint (a folder all of them see)
    distributed.check_same_state(model, hooks, f"resuming at epoch {start_epoch}")
    # Wall time overstates a run's cost when it is paused (SIGSTOP) or waits; the CPU time of this
    # process (all its threads) is what a core-hour budget spends, so both are recorded.
    started, cpu_started = time.perf_counter(), time.process_time()

    sign = 1.0 if higher_is_better(task) else -1.0
    for epoch in range(start_epoch, epochs + 1):
        for hook in hooks:
            _call(hook, "on_epoch_start", epoch, model)
        model.train()
        loss_sum, seen = 0.0, 0
        on_device = _DeviceLossSum(device) if _reads_loss_at_the_end(device) else None
        batches = progress(train_loader, desc=f"{desc} epoch {epoch}/{epochs}".strip())
        for index, (inputs, targets) in enumerate(batches):
            inputs, targets = move_to((inputs, targets), device)
            for hook in hooks:
                _call(hook, "on_step", step, model)
            if batch_transform is not None:
                inputs = batch_transform(inputs)
            with autocast():
                loss = task_loss(task, forward(inputs), targets)
                for hook in hooks:
                    extra = _call(hook, "extra_loss", model)
                    if extra is not None:
                        loss = loss + extra
            if on_device is None and not torch.isfinite(loss):
                raise RunFailed(f"non-finite loss ({loss.item()}) at epoch {epoch}, step {step}")
            optimizer.zero_grad(set_to_none=True)
            weight = sharded.loss_weight(index, targets.shape[0]) if sharded is not None else 1.0
            (loss if weight == 1.0 else loss * weight).backward()
            if max_grad_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            if on_device is None:
                loss_sum += loss.item() * targets.shape[0]
            else:
                on_device.add(loss, targets.shape[0], step)
            seen += targets.shape[0]
            step += 1
        if on_device is not None:
            loss_sum = on_device.read(epoch)  # one wait for the device per epoch
        note_steps(step)  # the run's length, recorded in its provenance
        if scheduler is not None:
            scheduler.step()
        loss_sum, seen = distributed.all_reduce_sum([loss_sum, seen])  # one process: unchanged
        row: dict[str, Any] = {"epoch": epoch, "train_loss": loss_sum / max(seen, 1)}
        with autocast():
            row.update(evaluate(model, val_loader, task, device))
        if not math.isfinite(row["val_loss"]):
            raise RunFailed(f"non-finite validation loss at epoch {epoch}")
        for hook in hooks:
            row.update(_call(hook, "epoch_record", model) or {})
        history.append(row)
        best_so_far = max(history, key=lambda r: sign * r["val_metric"])
        if keep_best_state and best_so_far is row:
            best_state = copy.deepcopy(model.state_dict())
        distributed.check_same_state(model, hooks, f"after epoch {epoch}")
        if checkpoint is not None and distributed.is_main():
            _save_checkpoint(
                checkpoint,
                {
                    "epoch": epoch,
                    "step": step,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict() if scheduler is not None else None,
                    "hooks": [_call(hook, "state_dict") or {} for hook in hooks],
                    "rng": _rng_state(train_loader),
                    "history": history,
                    "best_state": best_state,
                    "train_seconds": earlier_seconds + time.perf_counter() - started,
                    "cpu_seconds": earlier_cpu_seconds + time.process_time() - cpu_started,
                    **({"run_key": dict(run_key)} if run_key is not None else {}),
                },
            )
        distributed.barrier()  # no rank runs ahead of rank 0's checkpoint (a kill then resumes all from it)

    best = max(history, key=lambda r: sign * r["val_metric"])
    result: dict[str, Any] = {
        "history": history,
        "best_epoch": best["epoch"],
        "best_val_metric": best["val_metric"],
        "higher_is_better": higher_is_better(task),
        # informative only, never compared: every epoch's training and evaluation, resumes included
        "train_seconds": earlier_seconds + time.perf_counter() - started,
        "cpu_seconds": earlier_cpu_seconds + time.process_time() - cpu_started,
    }
    if keep_best_state:
        result["best_state"] = best_state
    return result
