"""A small, readable training loop: ``fit(model, train_loader, val_loader, ...)``.

One loop, three tasks: classification (accuracy, higher is better), regression (MSE) and language
modelling (perplexity). Methods plug in through :class:`TrainHook` objects. Each epoch ends with a
checkpoint (:mod:`helpers.core.checkpoint`); a resumed ``fit`` ends with identical metrics.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from numbers import Real
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn
from torch.utils.data import DataLoader

from helpers.core import distributed
from helpers.core.checkpoint import Progress, checkpoint_payload, resume, save_checkpoint
from helpers.core.checkpoint import save_checkpoint as _save_checkpoint  # noqa: F401 (tests/test_bad_inputs.py)
from helpers.core.device import move_to
from helpers.core.provenance import note_steps
from helpers.core.results_cache import RunFailed
from helpers.core.runtime import progress

Task = Literal["classification", "regression", "lm"]
TASKS: tuple[str, ...] = ("classification", "regression", "lm")


class TrainHook:
    """Base class for training hooks; every method is optional. Hooks with state across epochs
    implement ``state_dict``/``load_state_dict`` so a resumed run continues identically."""

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


def _reads_loss_at_the_end(device: torch.device) -> bool:
    """Whether the loop sums the loss on the device and reads it once per epoch: off the CPU,
    where reading a value waits for the device's queue to drain at every step."""
    return device.type != "cpu"


class _DeviceLossSum:
    """An epoch's training loss summed on the device (float64, as the CPU path's ``loss.item() * n``
    sum), with the first non-finite step, read once at the end of the epoch."""

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


def _check_fit_arguments(model: Any, epochs: Any, task: Any, max_grad_norm: Any, run_key: Any, dtype: Any) -> None:
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
    if dtype not in (None, torch.bfloat16, torch.float16):
        raise ValueError(f"autocast_dtype must be None, torch.bfloat16 or torch.float16, got {dtype!r}")


def _best(history: list[dict[str, Any]], task: Task) -> dict[str, Any]:
    """The history row of the best validation metric (the first of equals)."""
    sign = 1.0 if higher_is_better(task) else -1.0
    return max(history, key=lambda r: sign * r["val_metric"])


def _train_epoch(
    run: Progress,
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
    epoch: int,
    *,
    model: nn.Module,
    forward: nn.Module,
    optimizer: torch.optim.Optimizer,
    hooks: Sequence[TrainHook],
    task: Task,
    device: torch.device,
    autocast: Callable[[], AbstractContextManager],
    batch_transform: Callable[[torch.Tensor], torch.Tensor] | None,
    max_grad_norm: float | None,
    sharded: distributed.ShardedBatchSampler | None,
) -> float:
    """One pass over the training batches (``run.step`` counts the steps); returns the epoch's
    mean training loss over every rank's examples."""
    model.train()
    loss_sum, seen = 0.0, 0
    on_device = _DeviceLossSum(device) if _reads_loss_at_the_end(device) else None
    for index, (inputs, targets) in enumerate(batches):
        inputs, targets = move_to((inputs, targets), device)
        for hook in hooks:
            _call(hook, "on_step", run.step, model)
        if batch_transform is not None:
            inputs = batch_transform(inputs)
        with autocast():
            loss = task_loss(task, forward(inputs), targets)
            for hook in hooks:
                extra = _call(hook, "extra_loss", model)
                if extra is not None:
                    loss = loss + extra
        if on_device is None and not torch.isfinite(loss):
            raise RunFailed(f"non-finite loss ({loss.item()}) at epoch {epoch}, step {run.step}")
        optimizer.zero_grad(set_to_none=True)
        weight = sharded.loss_weight(index, targets.shape[0]) if sharded is not None else 1.0
        (loss if weight == 1.0 else loss * weight).backward()
        if max_grad_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        if on_device is None:
            loss_sum += loss.item() * targets.shape[0]
        else:
            on_device.add(loss, targets.shape[0], run.step)
        seen += targets.shape[0]
        run.step += 1
    if on_device is not None:
        loss_sum = on_device.read(epoch)  # one wait for the device per epoch
    note_steps(run.step)  # the run's length, recorded in its provenance
    loss_sum, seen = distributed.all_reduce_sum([loss_sum, seen])  # one process: unchanged
    return loss_sum / max(seen, 1)


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
    """Train ``model`` for ``epochs`` epochs and return ``{"history", "best_epoch",
    "best_val_metric", "higher_is_better", "train_seconds", "cpu_seconds"}`` (plus the best epoch's
    ``"best_state"``, in memory only, with ``keep_best_state``). A history row has ``epoch``,
    ``train_loss``, ``val_loss``, ``val_metric`` and what the hooks record; the scheduler steps
    once per epoch. ``checkpoint_path`` and ``run_key``: :mod:`helpers.core.checkpoint`.

    ``device`` (default: where ``model`` is) receives the batches. ``autocast_dtype``: forward, loss
    and evaluation under ``torch.autocast`` (parameters, gradients and optimiser stay float32).
    ``train_module``: what trains when not ``model`` (its DDP wrapper); hooks, evaluation and
    checkpoints use ``model``. ``batch_transform`` maps each training batch's inputs.

    Raises :class:`helpers.core.results_cache.RunFailed` for a NaN or infinite loss (off the CPU at
    the end of that epoch, naming the step).
    """
    _check_fit_arguments(model, epochs, task, max_grad_norm, run_key, autocast_dtype)
    device = model_device(model) if device is None else device
    sharded = getattr(train_loader, "batch_sampler", None)
    autocast = (
        (lambda: torch.autocast(device.type, dtype=autocast_dtype)) if autocast_dtype is not None else nullcontext
    )
    step_with = dict(
        model=model,
        forward=model if train_module is None else train_module,
        optimizer=optimizer,
        hooks=hooks,
        task=task,
        device=device,
        autocast=autocast,
        batch_transform=batch_transform,
        max_grad_norm=max_grad_norm,
        sharded=sharded if isinstance(sharded, distributed.ShardedBatchSampler) else None,
    )
    checkpoint = Path(checkpoint_path) if checkpoint_path is not None else None
    run = resume(checkpoint, model, optimizer, scheduler, hooks, train_loader, run_key, epochs)
    distributed.check_same_state(model, hooks, f"resuming at epoch {run.epoch + 1}")  # all ranks, one checkpoint
    run.start_clock()
    for epoch in range(run.epoch + 1, epochs + 1):
        for hook in hooks:
            _call(hook, "on_epoch_start", epoch, model)
        batches = progress(train_loader, desc=f"{desc} epoch {epoch}/{epochs}".strip())
        row = {"epoch": epoch, "train_loss": _train_epoch(run, batches, epoch, **step_with)}
        if scheduler is not None:
            scheduler.step()
        with autocast():
            row.update(evaluate(model, val_loader, task, device))
        if not math.isfinite(row["val_loss"]):
            raise RunFailed(f"non-finite validation loss at epoch {epoch}")
        for hook in hooks:
            row.update(_call(hook, "epoch_record", model) or {})
        run.epoch = epoch
        run.history.append(row)
        if keep_best_state and _best(run.history, task) is row:
            run.best_state = copy.deepcopy(model.state_dict())
        distributed.check_same_state(model, hooks, f"after epoch {epoch}")
        if checkpoint is not None and distributed.is_main():
            save_checkpoint(
                checkpoint, checkpoint_payload(run, model, optimizer, scheduler, hooks, train_loader, run_key)
            )
        distributed.barrier()  # no rank runs ahead of rank 0's checkpoint (a kill then resumes all from it)
    best = _best(run.history, task)
    # times are informative only, never compared: every epoch's training and evaluation, resumes included
    seconds, cpu_seconds = run.totals()
    result = {"history": run.history, "best_epoch": best["epoch"], "best_val_metric": best["val_metric"]}
    result |= {"higher_is_better": higher_is_better(task), "train_seconds": seconds, "cpu_seconds": cpu_seconds}
    return result | ({"best_state": run.best_state} if keep_best_state else {})
