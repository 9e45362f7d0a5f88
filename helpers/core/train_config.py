"""What one training run is: :class:`TrainConfig`, every field that determines it (and so its
cache key), each field's rule, and the checks across fields, all made when a config is built so that
a bad run fails before it trains. :mod:`helpers.core.runs` runs it.

Its ``augment`` field names a training-batch augmentation (:data:`AUGMENTATIONS`), applied on tensors
already in memory (:func:`batch_transform`): the standard CIFAR augmentation (torchvision's
``RandomCrop(32, padding=4)`` + ``RandomHorizontalFlip()``) on a whole batch with one indexing
operation. Draws come from torch's global generator, which checkpoints store, so a resumed run draws the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

import torch
from torch import nn

from helpers.core import validation as v
from helpers.core.data import DATASET_NAMES, TEXT_DATASETS
from helpers.core.models import MODEL_NAMES, check_model_kwargs
from helpers.core.options import MethodOptions, canonical_options, check_options, check_sites, option_of, split_options
from helpers.core.provenance import PRECISIONS
from helpers.core.registry import canonical_kwargs
from helpers.core.runtime import PROFILES, current_profile

# ----------------------------------------------------------------- training-batch augmentation
AUGMENTATIONS: tuple[str, ...] = ("none", "crop_flip")
BatchTransform = Callable[[torch.Tensor], torch.Tensor]


def _check_images(x: object, where: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.dim() != 4 or not x.is_floating_point():
        shown = f"a {x.dim()}-d {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{where} needs a float batch of images (N, C, H, W), got {shown}")
    return x


def random_crop_flip(x: torch.Tensor, padding: int = 4) -> torch.Tensor:
    """A random ``H×W`` crop of each image of ``x`` zero-padded by ``padding``, then a horizontal
    flip of each with probability ½ (drawn from torch's global generator)."""
    _check_images(x, "random_crop_flip")
    if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
        raise ValueError(f"padding must be an int >= 0, got {padding!r}")
    n, _, h, w = x.shape
    padded = nn.functional.pad(x, (padding, padding, padding, padding))
    top = torch.randint(0, 2 * padding + 1, (n,))
    left = torch.randint(0, 2 * padding + 1, (n,))
    flip = torch.rand(n) < 0.5
    cols = torch.arange(w).expand(n, w)
    cols = torch.where(flip[:, None], cols.flip(1), cols) + left[:, None]  # a flip reverses the columns read
    rows = torch.arange(h)[None, :] + top[:, None]
    batch = torch.arange(n)[:, None, None, None]
    channel = torch.arange(x.shape[1])[None, :, None, None]
    out = padded[batch, channel, rows[:, None, :, None], cols[:, None, None, :]]
    return out.contiguous(memory_format=torch.channels_last) if _is_channels_last(x) else out.contiguous()


def _is_channels_last(x: torch.Tensor) -> bool:
    return x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()


def _to_channels_last(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last)


def batch_transform(augment: str = "none", channels_last: bool = False) -> BatchTransform | None:
    """The transform :func:`helpers.core.train.fit` applies to every training batch (``None``:
    nothing to do): the augmentation, then channels_last order if asked (validation batches stay
    contiguous; channels_last weights make oneDNN convert them)."""
    if augment not in AUGMENTATIONS:
        raise ValueError(f"augment must be one of {', '.join(AUGMENTATIONS)}, got {augment!r}")
    augmented = random_crop_flip if augment == "crop_flip" else None
    if not channels_last or augmented is None:
        return _to_channels_last if channels_last else augmented
    return lambda x: _to_channels_last(augmented(x))


# ---------------------------------------------------------------------------------- the config
OPTIMIZERS: tuple[str, ...] = ("sgd", "adamw")
_O = TypeVar("_O", bound=MethodOptions)


SCHEDULES: tuple[str, ...] = ("none", "cosine", "warmup_cosine")
CHANNELS_LAST_MODELS: tuple[str, ...] = ("resnet18", "resnet34", "convnext")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines one training run (and so its cache key). ``n_train``/``n_val``
    subset the data (``None``: all; blocks of ``block_size`` tokens for language models);
    ``scale_note``: what the run changed from the paper, in words."""

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
    # The fraction of epochs an annealing schedule learns before it anneals (one key for every method).
    anneal_switch: float = 0.25
    # An activation site on the pooled features before the classifier (helpers.core.models).
    penultimate_activation: str | None = None
    penultimate_kwargs: dict[str, Any] = field(default_factory=dict)
    block_size: int = 64
    max_grad_norm: float | None = None
    # float32, or bf16 autocast (helpers.core.provenance.check_precision); keyed when not the default.
    precision: str = "float32"
    # Training-batch augmentation (AUGMENTATIONS above). Defaults keep committed keys unchanged.
    augment: str = "none"
    # Convolutional models only: channels_last memory order, which oneDNN runs faster (bf16 autocast
    # ResNet-18: 2.2x over float32 contiguous on an AVX512-BF16 EPYC, 2.5x on AMX).
    channels_last: bool = False
    scale_note: str = ""
    # ``init_seed``: the initial weights; ``order_seed``: data order and training's draws (None:
    # ``seed``). See :func:`run_seeds`.
    init_seed: int | None = None
    order_seed: int | None = None
    # Store the final network's per-example validation predictions (helpers.churn.predictions).
    record_predictions: bool = False
    # Each method's knobs, at most one options object per class (helpers.core.options; absent:
    # defaults), flat fields in stored configs and cache keys.
    options: tuple[MethodOptions, ...] = ()

    def __post_init__(self) -> None:
        current_profile(self.profile)  # its message lists the profiles
        v.check_fields(self, TRAIN_CONFIG_RULES)
        check_options(self.options, "TrainConfig")
        # canonical: table order, defaults dropped, so equal runs are equal configs
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
        a hash payload): the option fields of the table go into their options objects."""
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


#: The fields only some settings read; set where nothing reads it, a field would change the key and
#: not the run (two keys for one run, a config claiming a warm-up that never happened).
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


def run_seeds(cfg: TrainConfig) -> tuple[int, int]:
    """``(init, order)`` seeds of ``cfg`` (initial weights; data order and training's draws), each
    ``cfg.seed`` unless set."""
    init = cfg.seed if cfg.init_seed is None else cfg.init_seed
    order = cfg.seed if cfg.order_seed is None else cfg.order_seed
    return init, order
