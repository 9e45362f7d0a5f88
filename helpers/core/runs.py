"""The standard supervised run: ``TrainConfig`` -> data, model, optimiser, hooks, ``fit``, result.

Every supervised experiment is a :class:`TrainConfig` (re-exported here with its runner).
Method-specific steps (init, parameter groups, hooks, extra records) are :class:`RunExtension`
objects; each is one :class:`ExtensionLine` of the plain table ``helpers.methods.RUN_EXTENSIONS``,
which says from the config alone which runs it serves, so a run enters only the method modules it
uses. A run uses, in table order, the extensions that serve it and whose
:meth:`RunExtension.applies` is true.
``helpers.methods.RUNNERS`` names :func:`run_training` as the runner of a :class:`TrainConfig`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import TensorDataset

from helpers.core import distributed
from helpers.core.checkpoint import save_weights
from helpers.core.data import load_dataset, make_loader
from helpers.core.device import (  # autocast_context: re-exported for the methods
    autocast_context,  # noqa: F401
    check_channels_last_convolutions,
    check_device_precision,
    compile_model_requested,
    compiled_training_module,
    device_provenance,
)
from helpers.core.env import bool_env
from helpers.core.models import build_model
from helpers.core.options import MethodOptions
from helpers.core.provenance import note_device
from helpers.core.registry import activation_factory, catalog
from helpers.core.results_cache import CODE_VERSION, config_hash, result_path
from helpers.core.runtime import seed_everything, training_threads
from helpers.core.train import TrainHook, fit, optimizer_from_groups
from helpers.core.train_config import (  # noqa: F401 (re-exported: a run's config is imported from here)
    MAX_SEED,
    SCHEDULES,
    TRAIN_CONFIG_RULES,
    TrainConfig,
    batch_transform,
    run_seeds,
)


class RunExtension:
    """The method-specific steps of a :class:`TrainConfig` run; every step is optional. A run uses
    those that serve it (:class:`ExtensionLine`) and whose :meth:`applies` is true, in table order."""

    def applies(self, model: nn.Module, cfg: TrainConfig) -> bool:
        """Whether this extension takes part in a run it serves: that of ``cfg`` on the freshly built ``model``."""
        return True

    def prepare(self, model: nn.Module, cfg: TrainConfig) -> None:
        """Change the freshly built model before the optimiser sees it (e.g. an init mode)."""

    def param_groups(self, model: nn.Module, cfg: TrainConfig) -> list[dict[str, Any]] | None:
        """The optimiser's parameter groups, or None for the default (one group of all weights)."""
        return None

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        """Training hooks of the run (in order)."""
        return []

    def initial_record(self, model: nn.Module) -> dict[str, Any]:
        """Entries of the result recorded right before training starts."""
        return {}

    def final_record(
        self, model: nn.Module, cfg: TrainConfig, out: dict[str, Any], parts: dict[str, Any]
    ) -> dict[str, Any]:
        """Entries of the result recorded after training (``out``: :func:`fit`'s output, with
        ``best_state``; ``parts``: :func:`build_run`'s, with the validation loader). Evaluate under
        :func:`autocast_context` of ``cfg.precision``, as the run trained."""
        return {}


@dataclass(frozen=True)
class ExtensionLine:
    """One line of ``helpers.methods.RUN_EXTENSIONS``: an extension and the runs it serves, read
    from the config: those with one of ``activations`` (as ``activation`` or
    ``penultimate_activation``), those that carry ``options``, and those whose ``TrainConfig`` field
    ``flag`` is true, except those that carry one of ``excluded_by``. ``absent_record``: the initial
    record of a run it does not serve (so that every result of a ``TrainConfig`` has the same fields)."""

    extension: RunExtension
    activations: tuple[str, ...] = ()
    options: type[MethodOptions] | None = None
    flag: str | None = None
    excluded_by: tuple[type[MethodOptions], ...] = ()
    absent_record: Mapping[str, Any] = field(default_factory=dict)

    def serves(self, cfg: TrainConfig) -> bool:
        """Whether a run of ``cfg`` may use this line's extension (its :meth:`RunExtension.applies` decides)."""
        if any(type(o) in self.excluded_by for o in cfg.options):
            return False
        if {cfg.activation, cfg.penultimate_activation} & set(self.activations):
            return True
        if self.options is not None and any(type(o) is self.options for o in cfg.options):
            return True
        return self.flag is not None and bool(getattr(cfg, self.flag))


def applicable_extensions(model: nn.Module, cfg: TrainConfig) -> list[RunExtension]:
    """The extensions of ``helpers.methods.RUN_EXTENSIONS`` that serve the run of ``cfg`` and apply
    to it on ``model``, in table order."""
    lines = catalog().RUN_EXTENSIONS
    return [line.extension for line in lines if line.serves(cfg) and line.extension.applies(model, cfg)]


def absent_records(cfg: TrainConfig) -> dict[str, Any]:
    """The initial records of the lines of ``helpers.methods.RUN_EXTENSIONS`` that do not serve ``cfg``."""
    return {k: v for line in catalog().RUN_EXTENSIONS if not line.serves(cfg) for k, v in line.absent_record.items()}


def param_groups_of(extensions: list[RunExtension], model: nn.Module, cfg: TrainConfig) -> list[dict[str, Any]]:
    """The one applicable extension's parameter groups, or the default; two that both set them
    would silently drop one method's optimiser settings, so that is an error naming both."""
    wanted = [(e, g) for e in extensions if (g := e.param_groups(model, cfg)) is not None]
    if len(wanted) > 1:
        names = ", ".join(type(e).__name__ for e, _ in wanted)
        raise ValueError(
            f"run {cfg.experiment!r} ({cfg.activation}): several run extensions set the optimiser's "
            f"parameter groups ({names}); at most one may, so these methods cannot be combined"
        )
    return wanted[0][1] if wanted else default_param_groups(model, cfg.lr, cfg.weight_decay)


def default_param_groups(model: nn.Module, lr: float, weight_decay: float) -> list[dict[str, Any]]:
    """One group of every parameter (what a run uses when no extension groups them)."""
    return [{"params": list(model.parameters()), "lr": lr, "weight_decay": weight_decay, "name": "weights"}]


def lm_blocks(tokens: torch.Tensor, block_size: int, limit: int | None = None) -> TensorDataset:
    """Cut a token stream into non-overlapping (input, next-token target) blocks."""
    n_blocks = (tokens.numel() - 1) // block_size
    if limit is not None:
        n_blocks = min(n_blocks, limit)
    if n_blocks < 1:
        raise ValueError(f"{tokens.numel()} tokens are too few for one block of {block_size}")
    span = tokens[: n_blocks * block_size + 1]
    x = span[:-1].view(n_blocks, block_size)
    y = span[1:].view(n_blocks, block_size)
    return TensorDataset(x.clone(), y.clone())


def make_scheduler(optimizer: torch.optim.Optimizer, cfg: TrainConfig):
    """Per-epoch learning-rate schedule: none, cosine to ``min_lr``, or linear warmup from
    ``warmup_start_lr`` over ``warmup_epochs`` then cosine (the S-ReLU paper's recipe). One factor
    scales every parameter group, preserving λ-GELU's c·η_w ratio."""
    if cfg.schedule == "none":
        return None
    if cfg.schedule == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs, eta_min=cfg.min_lr)
    warm, total, base = cfg.warmup_epochs, cfg.epochs, cfg.lr

    def factor(epoch: int) -> float:  # epoch = number of finished epochs
        if epoch < warm:
            return (cfg.warmup_start_lr + (base - cfg.warmup_start_lr) * epoch / warm) / base
        progress = (epoch - warm) / max(total - warm, 1)
        return (cfg.min_lr + (base - cfg.min_lr) * 0.5 * (1 + math.cos(math.pi * progress))) / base

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _build_data(cfg: TrainConfig):
    if cfg.task == "lm":
        splits = load_dataset(cfg.dataset)
        block = cfg.model_kwargs.get("block_size", cfg.block_size)  # the model's context wins
        train = lm_blocks(splits.train_tokens, block, cfg.n_train)
        val = lm_blocks(splits.val_tokens, block, cfg.n_val)
        return train, val, {"vocab_size": len(splits.vocab)}, splits.source
    splits = load_dataset(cfg.dataset, n_train=cfg.n_train, n_val=cfg.n_val, seed=cfg.data_seed)
    shape = {"input_shape": tuple(splits.input_shape), "num_classes": splits.num_classes}
    return splits.train, splits.val, shape, splits.source


def _activation(name: str, kwargs: dict[str, Any]):  # tests/test_dpo_experiment.py imports it
    return activation_factory(name, **kwargs)


def build_run(cfg: TrainConfig, device: torch.device | None = None):
    """Data loaders, model, optimiser, scheduler and hooks of a run (no training), on ``device``
    (default: the CPU; in a process group, sharded and with global-batch BatchNorm).

    The caller seeds the global generators with the init seed first (:func:`train_model` does); the
    loader shuffles with its own generator seeded by the order seed. When ``cfg`` sets either seed,
    the global generators are reseeded from the order seed once the model is built, so training's
    other draws follow the data order, not the initialisation.
    """
    train, val, shape, source = _build_data(cfg)
    model_kwargs = dict(cfg.model_kwargs)
    if cfg.penultimate_activation is not None:
        model_kwargs["penultimate_act"] = _activation(cfg.penultimate_activation, cfg.penultimate_kwargs)
    model = build_model(cfg.model, act=_activation(cfg.activation, cfg.activation_kwargs), **shape, **model_kwargs)
    device = torch.device("cpu") if device is None else device
    model = model.to(device)  # before extensions and optimiser see the parameters
    shard = distributed.world()
    if shard.size > 1:
        distributed.check_global_batch(cfg.batch_size, shard.size)
        model = distributed.convert_batchnorm(model, device)
    if cfg.channels_last:
        check_channels_last_convolutions(model, device)
        model = model.to(memory_format=torch.channels_last)
    extensions = applicable_extensions(model, cfg)
    for extension in extensions:
        extension.prepare(model, cfg)
    groups = param_groups_of(extensions, model, cfg)
    optimizer = optimizer_from_groups(groups, cfg.optimizer, lr=cfg.lr, momentum=cfg.momentum)
    scheduler = make_scheduler(optimizer, cfg)
    steps_per_epoch = math.ceil(len(train) / cfg.batch_size)
    hooks: list = [hook for extension in extensions for hook in extension.hooks(model, cfg, steps_per_epoch)]
    order_seed = run_seeds(cfg)[1]
    train_loader = make_loader(
        train,
        cfg.batch_size,
        shuffle=True,
        seed=order_seed,
        device=device,
        shard=(shard.rank, shard.size) if shard.size > 1 else None,
    )
    val_loader = make_loader(val, 512, shuffle=False, seed=0, device=device)
    if cfg.init_seed is not None or cfg.order_seed is not None:
        # training's own stream, mixed by SeedSequence so that it is not the shuffling generator's
        seed_everything(int(np.random.SeedSequence([order_seed, 1]).generate_state(1)[0]))
    return {
        "model": model,
        "optimizer": optimizer,
        "scheduler": scheduler,
        "hooks": hooks,
        "train_loader": train_loader,
        "val_loader": val_loader,
        "source": source,
        "extensions": extensions,
    }


def run_training(cfg: TrainConfig, workdir: Path) -> dict[str, Any]:
    """Train one configuration on :func:`helpers.core.runtime.train_threads` threads (float32
    results depend on it); the result record, final weights kept with :data:`KEEP_FINAL_WEIGHTS_ENV`."""
    with training_threads():
        parts, out, result = train_to_completion(cfg, workdir)
        model = parts["model"]
        if bool_env(KEEP_FINAL_WEIGHTS_ENV, False) and distributed.is_main():
            save_weights(final_weights_path(cfg), model.state_dict(), config_hash(cfg))
        for extension in parts["extensions"]:
            result.update(extension.final_record(model, cfg, out, parts))
        return result


def checkpoint_key(config: Any) -> dict[str, str]:
    """What binds a run's per-epoch checkpoint to it: the config hash and the code version
    (:func:`helpers.core.train.fit` refuses a checkpoint with another key)."""
    return {"config_hash": config_hash(config), "code_version": CODE_VERSION}


def train_model(cfg: TrainConfig, workdir: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Train ``cfg`` (checkpointing into ``workdir``): ``(parts, out, result)``, the :func:`build_run`
    parts (the model after the last epoch), :func:`fit`'s output (with ``best_state``) and the
    result record without the substitution test. The caller sets the thread count."""
    device = distributed.process_device()  # REPRO_DEVICE; never part of the cache key
    # a bf16 run on a CPU without native bf16 (or a GPU without bf16) stops here
    check_device_precision(cfg.precision, device)
    seed_everything(run_seeds(cfg)[0], device)
    parts = build_run(cfg, device)
    model = parts["model"]
    compiled = {"compiled_model": True} if compile_model_requested() else {}  # absent: eager, as before
    note_device({**device_provenance(device), "world_size": distributed.world().size, **compiled})
    initial = absent_records(cfg)
    for extension in parts["extensions"]:
        initial.update(extension.initial_record(model))
    out = fit(
        model,
        parts["train_loader"],
        parts["val_loader"],
        optimizer=parts["optimizer"],
        scheduler=parts["scheduler"],
        epochs=cfg.epochs,
        task=cfg.task,
        hooks=parts["hooks"],
        checkpoint_path=workdir / "checkpoint.ckpt",
        keep_best_state=True,
        max_grad_norm=cfg.max_grad_norm,
        desc=f"{cfg.experiment} {cfg.activation} s{cfg.seed}",
        autocast_dtype=torch.bfloat16 if cfg.precision == "bf16" else None,
        batch_transform=batch_transform(cfg.augment, cfg.channels_last),
        run_key=checkpoint_key(cfg),
        device=device,
        # a method's hooks may stop using parameters mid-run (annealing fixes λ)
        train_module=compiled_training_module(
            distributed.wrap_model(model, device, find_unused_parameters=bool(parts["hooks"]))
        ),
    )
    result: dict[str, Any] = {
        "history": out["history"],
        "best_epoch": out["best_epoch"],
        "best_val_metric": out["best_val_metric"],
        "higher_is_better": out["higher_is_better"],
        **initial,
        "n_params": sum(p.numel() for p in model.parameters()),
        "data_source": parts["source"],
        "train_seconds": out["train_seconds"],  # informative only; never compared (resumes included)
        "cpu_seconds": out["cpu_seconds"],  # the same, in this process's CPU time (a pause costs none)
    }
    return parts, out, result


def train_to_completion(cfg: TrainConfig, workdir: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """:func:`train_model`, then delete its checkpoint and empty ``workdir`` (a finished run never resumes)."""
    parts, out, result = train_model(cfg, workdir)
    if not distributed.is_main():
        return parts, out, result  # rank 0 owns the checkpoint
    (workdir / "checkpoint.ckpt").unlink(missing_ok=True)
    try:
        workdir.rmdir()
    except OSError:  # not empty (e.g. a moved-aside unreadable checkpoint): left for inspection
        pass
    return parts, out, result


#: Set to 1 to keep every run's final weights (:func:`final_weights_path`, ignored by git), for
#: analyses of the trained network (the ReLU-ization chapter) without retraining.
KEEP_FINAL_WEIGHTS_ENV = "REPRO_KEEP_FINAL_WEIGHTS"


def final_weights_path(cfg: TrainConfig) -> Path:
    """Where a run keeps its final (not best) weights with :data:`KEEP_FINAL_WEIGHTS_ENV`:
    ``<hash>.final.ckpt`` beside its result, with a ``.sha256`` (:mod:`helpers.core.checkpoint`)."""
    return result_path(cfg).with_suffix(".final.ckpt")
