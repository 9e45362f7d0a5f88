"""The standard supervised run: ``TrainConfig`` -> data, model, optimiser, hooks, ``fit``, result.

Every image/tabular/language experiment of the book is a :class:`TrainConfig`; the notebooks build
lists of them (see :mod:`tools.run`) and call ``run_or_load`` on each. Method-specific
steps (an init mode, parameter groups, annealing hooks, extra records) live in the method
packages as :class:`~helpers.core.extensions.RunExtension` objects, which ``helpers.methods``
registers with :func:`~helpers.core.extensions.register_run_extension`; this core module imports
no method. Each extension says to which runs it applies, and two that both want to set the
optimiser's parameter groups are an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch.utils.data import TensorDataset

from helpers.core import distributed
from helpers.core import validation as v
from helpers.core.augment import AUGMENTATIONS, batch_transform
from helpers.core.cpu_kernel_bugs import check_channels_last_convolutions
from helpers.core.data import DATASET_NAMES, TEXT_DATASETS, load_dataset, make_loader
from helpers.core.device import autocast_context as device_autocast
from helpers.core.device import (
    check_device_precision,
    compile_model_requested,
    compiled_training_module,
    device_provenance,
    resolve_device,
)
from helpers.core.env import bool_env
from helpers.core.extensions import applicable_extensions, param_groups_of
from helpers.core.models import MODEL_NAMES, build_model, check_model_kwargs
from helpers.core.options import MethodOptions, canonical_options, check_options, check_sites, option_of, split_options
from helpers.core.provenance import PRECISIONS, note_device
from helpers.core.registry import activation_factory, canonical_kwargs
from helpers.core.results_cache import CODE_VERSION, config_hash, register_runner, result_path
from helpers.core.runtime import PROFILES, current_profile, seed_everything, training_threads
from helpers.core.train import fit, optimizer_from_groups
from helpers.core.weights import save_weights

OPTIMIZERS: tuple[str, ...] = ("sgd", "adamw")
_O = TypeVar("_O", bound=MethodOptions)


SCHEDULES: tuple[str, ...] = ("none", "cosine", "warmup_cosine")
CHANNELS_LAST_MODELS: tuple[str, ...] = ("resnet18", "resnet34", "convnext")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines one training run (and so its cache key).

    ``n_train``/``n_val`` subset the data (``None``: all); for language models they count blocks
    of ``block_size`` tokens. ``scale_note`` says in words what the run changed from the paper.
    """

    experiment: str
    dataset: str
    model: str
    profile: str = "cpu"
    activation: str = "gelu"
    activation_kwargs: dict[str, Any] = field(default_factory=dict)
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    n_train: int | None = None
    n_val: int | None = None
    data_seed: int = 0
    epochs: int = 10
    batch_size: int = 128
    optimizer: str = "sgd"
    lr: float = 0.05
    weight_decay: float = 1e-4
    momentum: float = 0.9
    schedule: str = "none"
    warmup_epochs: int = 0
    warmup_start_lr: float = 0.0
    min_lr: float = 0.0
    seed: int = 0
    # The fraction of epochs a method's annealing schedule learns before it anneals; shared by
    # every annealing method's schedule (so one key, not one per method).
    anneal_switch: float = 0.25
    # An activation site on the pooled features before the classifier (the models that have one,
    # helpers.core.models); any registered activation, built and checked like ``activation``.
    penultimate_activation: str | None = None
    penultimate_kwargs: dict[str, Any] = field(default_factory=dict)
    block_size: int = 64
    max_grad_norm: float | None = None
    # float32, or bf16 autocast (see helpers.core.provenance.check_precision). Part of the cache key
    # (when not the default), so a float32 rerun never overwrites or passes for a bf16 result.
    precision: str = "float32"
    # Training-batch augmentation (helpers.core.augment); the default leaves every committed key unchanged.
    augment: str = "none"
    # Convolutional models only: weights and training batches in channels_last memory order, which
    # oneDNN's convolutions run faster (measured with bf16 autocast on ResNet-18: 2.2x over float32
    # contiguous on an AVX512-BF16 EPYC, 2.5x on AMX). The default leaves every committed key unchanged.
    channels_last: bool = False
    scale_note: str = ""
    # The two sources of a run's randomness, separable (None: ``seed``, the one stream of every
    # earlier run, unchanged): ``init_seed`` draws the initial weights; ``order_seed`` the data
    # order and every random draw of training (augmentation). See :func:`run_seeds`.
    init_seed: int | None = None
    order_seed: int | None = None
    # Store the final network's per-example predictions on the validation set in the result
    # (helpers.churn.predictions); the default leaves every committed key unchanged.
    record_predictions: bool = False
    # Each method's knobs, at most one options object per class (helpers.core.options); a class
    # not given reads as its defaults. Stored configs and cache keys see them as flat fields.
    options: tuple[MethodOptions, ...] = ()

    def __post_init__(self) -> None:
        current_profile(self.profile)  # its message lists the profiles
        v.check_fields(self, TRAIN_CONFIG_RULES)
        check_options(self.options, "TrainConfig")
        # canonical: registration order, defaults dropped, so equal runs are equal configs
        object.__setattr__(self, "options", canonical_options(self.options))
        for name in ("min_lr", "warmup_start_lr"):
            if getattr(self, name) > self.lr:
                raise ValueError(
                    f"TrainConfig.{name} must be <= lr ({self.lr!r}), got {getattr(self, name)!r}: "
                    "a schedule from lr towards it would raise the learning rate"
                )
        if self.n_train is not None and self.batch_size > self.n_train:
            raise ValueError(
                f"TrainConfig.batch_size={self.batch_size} exceeds n_train={self.n_train}: every epoch would be one "
                f"batch of {self.n_train}, the run of batch_size={self.n_train} under another key"
            )
        if not 0 <= self.warmup_epochs < self.epochs and self.schedule == "warmup_cosine":
            raise ValueError(f"warmup_epochs must be in [0, epochs), got {self.warmup_epochs!r}")
        _check_fields_are_read(self)
        for options in self.options:
            options.check(self)
        # one activation, one key: defaults dropped or spelled out as the committed runs spell them
        kwargs = canonical_kwargs("TrainConfig.activation", self.activation, self.activation_kwargs)
        object.__setattr__(self, "activation_kwargs", kwargs)
        if self.penultimate_activation is not None:
            name, given = self.penultimate_activation, self.penultimate_kwargs
            kwargs = canonical_kwargs("TrainConfig.penultimate_activation", name, given)
            object.__setattr__(self, "penultimate_kwargs", kwargs)
        check_sites(self.options, {self.activation, self.penultimate_activation})
        object.__setattr__(self, "model_kwargs", check_model_kwargs(self.model, self.model_kwargs))
        if self.augment != "none" and self.task != "classification":
            raise ValueError(f"augment applies to image classification, not to dataset {self.dataset!r} ({self.task})")
        if self.record_predictions and self.task != "classification":
            raise ValueError(
                f"record_predictions stores class predictions; dataset {self.dataset!r} is a {self.task} task"
            )
        if self.channels_last and self.model not in CHANNELS_LAST_MODELS:
            raise ValueError(
                f"channels_last applies to the convolutional models {CHANNELS_LAST_MODELS}, not to {self.model!r}"
            )

    @property
    def task(self) -> str:
        return "lm" if self.dataset in TEXT_DATASETS else "classification"

    @property
    def anneals(self) -> bool:
        """Whether an option of this run anneals at ``anneal_switch``."""
        return any(o.anneals for o in self.options)

    def option(self, cls: type[_O]) -> _O:
        """The run's ``cls`` options: the instance it carries, else ``cls()`` (the defaults)."""
        return option_of(self.options, cls)

    def with_options(self, *options: MethodOptions, **changes: Any) -> TrainConfig:
        """A copy that carries ``options`` in place of its own of those classes (the others kept),
        with the fields of ``changes`` replaced as by ``dataclasses.replace``."""
        classes = {type(o) for o in options}
        kept = tuple(o for o in self.options if type(o) not in classes)
        return replace(self, **changes, options=kept + tuple(options))

    @classmethod
    def from_dict(cls, fields: Mapping[str, Any]) -> TrainConfig:
        """The config of flat ``fields`` (a stored ``config`` dict, without its ``config_class``, or
        a hash payload): the registered options' keys go into their options objects."""
        if not isinstance(fields, Mapping):
            raise TypeError(f"TrainConfig.from_dict takes a dict of config fields, got {type(fields).__name__}")
        rest, options = split_options(fields)
        if "options" in rest:
            raise ValueError("flat config fields hold the options' own keys, not an 'options' entry")
        return cls(**rest, options=options)


#: The datasets a TrainConfig trains on: every loader but ImageNet-1K, which loads as lazy image
#: folders (helpers.core.data.imagenet) that this in-memory runner does not read yet.
TRAIN_DATASETS: tuple[str, ...] = tuple(d for d in DATASET_NAMES if d != "imagenet")


#: The largest seed: torch.manual_seed takes an unsigned 64-bit int.
MAX_SEED = 2**64 - 1

#: Every field of :class:`TrainConfig`: its kind, range and finiteness (see :mod:`helpers.core.validation`).
TRAIN_CONFIG_RULES: dict[str, v.Rule] = {
    "experiment": v.path_name(),  # the results sub-folder
    "dataset": v.choice(TRAIN_DATASETS),  # canonical names: ``task`` compares them with TEXT_DATASETS
    "model": v.choice(MODEL_NAMES),
    "profile": v.choice(PROFILES),
    "activation": v.text(non_empty=True),
    "activation_kwargs": v.mapping(),
    "model_kwargs": v.mapping(),
    "n_train": v.integer(1, optional=True),
    "n_val": v.integer(1, optional=True),
    "data_seed": v.integer(0, MAX_SEED),
    "epochs": v.integer(1),
    "batch_size": v.integer(1),
    "optimizer": v.choice(OPTIMIZERS),
    "lr": v.number(0, low_open=True),
    "weight_decay": v.number(0),
    "momentum": v.number(0, 1, high_open=True),
    "schedule": v.choice(SCHEDULES),
    "warmup_epochs": v.integer(0),
    "warmup_start_lr": v.number(0),  # and <= lr
    "min_lr": v.number(0),  # and <= lr: a negative floor is gradient ascent
    "seed": v.integer(0, MAX_SEED),
    "anneal_switch": v.number(0, 1, low_open=True, high_open=True),
    "penultimate_activation": v.text(optional=True, non_empty=True),
    "penultimate_kwargs": v.mapping(),
    "block_size": v.integer(1),
    "max_grad_norm": v.number(0, low_open=True, optional=True),
    "precision": v.choice(PRECISIONS),
    "augment": v.choice(AUGMENTATIONS),
    "channels_last": v.boolean(),
    "scale_note": v.text(),
    "init_seed": v.integer(0, MAX_SEED, optional=True),
    "order_seed": v.integer(0, MAX_SEED, optional=True),
    "record_predictions": v.boolean(),
    "options": v.instances(MethodOptions),
}


#: The fields only some settings read. Set away from its default where nothing reads it, a field
#: would change the cache key and not the run: two keys for one run, and a config that claims a
#: warm-up (say) that never happened.
_READ_ONLY_WITH: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("warmup_epochs", "schedule", ("warmup_cosine",), "the warm-up of schedule='warmup_cosine'"),
    ("warmup_start_lr", "schedule", ("warmup_cosine",), "the warm-up of schedule='warmup_cosine'"),
    ("min_lr", "schedule", ("cosine", "warmup_cosine"), "the cosine schedules"),
    ("momentum", "optimizer", ("sgd",), "SGD (AdamW has betas)"),
    ("anneal_switch", "anneals", (True,), "an option that anneals"),
    ("block_size", "task", ("lm",), "the blocks of a text data set"),
)


def _check_fields_are_read(cfg: TrainConfig) -> None:
    """Refuse a field set where the run never reads it (see :data:`_READ_ONLY_WITH`)."""
    defaults = {f.name: f.default for f in fields(cfg)}
    for name, switch, readers, what in _READ_ONLY_WITH:
        value = getattr(cfg, name)
        if getattr(cfg, switch) not in readers and value != defaults[name]:
            raise ValueError(
                f"TrainConfig.{name}={value!r} has no effect with {switch}={getattr(cfg, switch)!r}: only "
                f"{what} reads it. Leave it at its default ({defaults[name]!r}) or change {switch}"
            )
    if cfg.penultimate_kwargs and cfg.penultimate_activation is None:
        raise ValueError(
            f"TrainConfig.penultimate_kwargs={cfg.penultimate_kwargs!r} has no effect without a "
            "penultimate_activation: name one, or leave penultimate_kwargs empty"
        )


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
    ``warmup_start_lr`` over ``warmup_epochs`` followed by cosine to ``min_lr`` (the S-ReLU
    paper's recipe). Every parameter group is scaled by the same factor, so λ-GELU's c·η_w
    ratio is preserved."""
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


def _activation(name: str, kwargs: dict[str, Any]):
    return activation_factory(name, **kwargs)


def run_seeds(cfg: TrainConfig) -> tuple[int, int]:
    """``(init, order)``: the seed of the initial weights and the seed of the data order (and of
    training's other random draws) of ``cfg``; each is ``cfg.seed`` unless set."""
    init = cfg.seed if cfg.init_seed is None else cfg.init_seed
    order = cfg.seed if cfg.order_seed is None else cfg.order_seed
    return init, order


def separates_seeds(cfg: TrainConfig) -> bool:
    """Whether ``cfg`` sets ``init_seed`` or ``order_seed``: its training draws then get their own
    stream (:func:`build_run`); otherwise they continue the initialisation's, as they always did."""
    return cfg.init_seed is not None or cfg.order_seed is not None


def training_stream_seed(order: int) -> int:
    """The seed of training's random draws for order seed ``order``: mixed by NumPy's
    ``SeedSequence``, so that this stream is not the shuffling generator's (seeded ``order`` too)."""
    return int(np.random.SeedSequence([order, 1]).generate_state(1)[0])


def build_run(cfg: TrainConfig, device: torch.device | None = None):
    """Data loaders, model, optimiser, scheduler and hooks of a run (no training), the model and
    every method's parameters and buffers on ``device`` (default: the CPU). In a process group
    (:mod:`helpers.core.distributed`) BatchNorm takes global-batch statistics and the training
    loader gives this rank's shard of each global batch.

    The caller seeds the global generators with the init seed first (:func:`train_model` does:
    ``seed_everything(run_seeds(cfg)[0])``), which draws the model's initial weights. The training
    loader shuffles with its own generator seeded by the order seed. When ``cfg`` separates the
    two seeds (:func:`separates_seeds`), the global generators are reseeded from the order seed
    once the model is built, so that augmentation and every other draw of training follow the data
    order and not the initialisation.

    Also used by tests to check that the ``paper`` profile constructs the paper's setup.
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
    if separates_seeds(cfg):
        seed_everything(training_stream_seed(order_seed))
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


def autocast_context(precision: str, device: torch.device | str | None = None):
    """The autocast context of ``precision`` (a no-op for float32) on ``device`` (default: the
    device ``REPRO_DEVICE`` picks, where the run trains)."""
    return device_autocast(precision, resolve_device() if device is None else device)


def _to_channels_last(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last)


def _training_transform(cfg: TrainConfig):
    """The training batches' transform: the augmentation, then channels_last order if asked
    (validation batches stay contiguous; the channels_last weights make oneDNN convert them)."""
    augment = batch_transform(cfg.augment)
    if not cfg.channels_last:
        return augment
    if augment is None:
        return _to_channels_last
    return lambda x: _to_channels_last(augment(x))


@register_runner(TrainConfig)
def run_training(cfg: TrainConfig, workdir: Path) -> dict[str, Any]:
    """Train one configuration with :func:`helpers.core.runtime.train_threads` intra-op threads (1 by
    default; float32 results depend on it); returns history, best score and optional
    substitution metrics."""
    with training_threads():
        return _run_training(cfg, workdir)


def checkpoint_key(config: Any) -> dict[str, str]:
    """What binds a run's per-epoch checkpoint to it: the config hash and the code version
    (:func:`helpers.core.train.fit` refuses a checkpoint with another key)."""
    return {"config_hash": config_hash(config), "code_version": CODE_VERSION}


def train_model(cfg: TrainConfig, workdir: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Train ``cfg`` (checkpointing into ``workdir``) and return ``(parts, out, result)``: the
    :func:`build_run` parts (``parts["model"]`` is the model after the last epoch), the output of
    :func:`fit` (with ``best_state``) and the result record without the substitution test. Used
    by :func:`run_training` and by analyses that need the trained weights; the caller sets the
    thread count (:func:`training_threads`)."""
    device = distributed.process_device()  # REPRO_DEVICE; never part of the cache key
    # a bf16 run on a CPU without native bf16 (or a GPU without bf16) stops here
    check_device_precision(cfg.precision, device)
    seed_everything(run_seeds(cfg)[0], device)
    parts = build_run(cfg, device)
    model = parts["model"]
    compiled = {"compiled_model": True} if compile_model_requested() else {}  # absent: eager, as before
    note_device({**device_provenance(device), "world_size": distributed.world().size, **compiled})
    initial: dict[str, Any] = {}
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
        batch_transform=_training_transform(cfg),
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
    """:func:`train_model`, then delete the run's per-epoch checkpoint and its ``workdir`` when
    empty: a finished run never resumes, and its checkpoint (weights, optimiser state) is not kept."""
    parts, out, result = train_model(cfg, workdir)
    if not distributed.is_main():
        return parts, out, result  # rank 0 owns the checkpoint
    (workdir / "checkpoint.ckpt").unlink(missing_ok=True)
    try:
        workdir.rmdir()
    except OSError:  # not empty (e.g. a moved-aside unreadable checkpoint): left for inspection
        pass
    return parts, out, result


#: Set to 1 (the retrain does) to keep every run's final weights beside its result
#: (:func:`final_weights_path`, ignored by git), so that an analysis of the trained network (the
#: ReLU-ization chapter) can load them instead of training the run a second time.
KEEP_FINAL_WEIGHTS_ENV = "REPRO_KEEP_FINAL_WEIGHTS"


def final_weights_path(cfg: TrainConfig) -> Path:
    """Where a run keeps its weights at the end of training (not the best epoch's) when
    :data:`KEEP_FINAL_WEIGHTS_ENV` is set: ``<hash>.final.ckpt`` beside its result, with the config
    hash inside and a ``.sha256`` beside it (:mod:`helpers.core.weights`)."""
    return result_path(cfg).with_suffix(".final.ckpt")


def _run_training(cfg: TrainConfig, workdir: Path) -> dict[str, Any]:
    parts, out, result = train_to_completion(cfg, workdir)
    model = parts["model"]
    if bool_env(KEEP_FINAL_WEIGHTS_ENV, False) and distributed.is_main():
        save_weights(final_weights_path(cfg), model.state_dict(), config_hash(cfg))
    for extension in parts["extensions"]:
        result.update(extension.final_record(model, cfg, out, parts))
    return result
