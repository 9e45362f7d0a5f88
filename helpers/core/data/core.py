"""What all loaders share: return types, one front (:func:`dataset_loader`), seeded subsets, a DataLoader.

Subsets are drawn with a NumPy generator seeded locally from ``(seed, split)``, never from the
global RNG, so ``n_train``/``n_val``/``seed`` give the same indices in every process and the train
and validation subsets are drawn independently of each other.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler, TensorDataset

from helpers.core.data.sources import Found, SourceSpec, locate
from helpers.core.distributed import ShardedBatchSampler
from helpers.core.runtime import positive_int_env
from helpers.core.validation import Rule, check_value

#: DataLoader worker processes when the batches go to a GPU (on the CPU the loader has none).
LOADER_WORKERS_ENV = "REPRO_LOADER_WORKERS"

# Distinct generator streams so the train subset does not depend on n_val and vice versa.
_STREAMS = {"train": 0, "val": 1}


@dataclass(frozen=True, eq=False)
class DataSplits:
    """A classification dataset, ready to train on.

    ``train``/``val`` hold ``(inputs, labels)``: float32 inputs (images ``N×C×H×W``, normalised
    per channel with ``mean``/``std``; tabular ``N×F``) and int64 labels in ``[0, num_classes)``.
    ``*_indices`` are the rows kept from the full splits. ``source`` says what was read and through
    which search step, with no absolute path, so it can go into committed results.
    """

    key: str
    name: str
    source: str
    train: TensorDataset
    val: TensorDataset
    num_classes: int
    input_shape: tuple[int, ...]
    class_names: tuple[str, ...]
    train_indices: torch.Tensor
    val_indices: torch.Tensor
    val_split: str
    mean: tuple[float, ...] = ()
    std: tuple[float, ...] = ()
    feature_names: tuple[str, ...] = field(default=())
    location: str = ""

    @property
    def n_train(self) -> int:
        return len(self.train)

    @property
    def n_val(self) -> int:
        return len(self.val)

    def unnormalize(self, images: torch.Tensor) -> torch.Tensor:
        """Images back in ``[0, 1]`` (for display); only for image datasets."""
        if len(self.input_shape) != 3:
            raise ValueError(f"{self.name} is not an image dataset")
        mean = torch.tensor(self.mean).view(-1, 1, 1)
        std = torch.tensor(self.std).view(-1, 1, 1)
        return (images * std + mean).clamp(0.0, 1.0)

    def __repr__(self) -> str:
        return (
            f"DataSplits({self.name}: train={self.n_train}, val={self.n_val}, "
            f"num_classes={self.num_classes}, input_shape={self.input_shape}, "
            f"source={self.source!r})"
        )


@dataclass(frozen=True, eq=False)
class TextSplits:
    """A language-modelling corpus as token streams (``LongTensor``) plus its vocabulary.

    ``level`` is ``"char"`` (every character is a token) or ``"word"`` (whitespace-separated
    words, ``<eos>`` at each line end, ``<unk>`` for words absent from the training split).
    """

    key: str
    name: str
    source: str
    train_tokens: torch.Tensor
    val_tokens: torch.Tensor
    vocab: tuple[str, ...]
    level: str
    val_split: str
    location: str = ""

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def _index(self) -> dict[str, int]:
        # cached on the frozen instance, hence object.__setattr__
        index = self.__dict__.get("_index_cache")
        if index is None:
            index = {tok: i for i, tok in enumerate(self.vocab)}
            object.__setattr__(self, "_index_cache", index)
        return index

    def encode(self, text: str) -> torch.Tensor:
        """Token ids of ``text`` as a 1-D ``LongTensor``."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        index = self._index()
        if self.level == "char":
            unknown = sorted(set(text) - index.keys())
            if unknown and "<unk>" not in index:
                raise ValueError(f"characters not in the {self.name} vocabulary: {unknown!r}")
            unk = index.get("<unk>", -1)
            return torch.tensor([index.get(c, unk) for c in text], dtype=torch.long)
        unk = index["<unk>"]
        return torch.tensor([index.get(w, unk) for w in words_of(text)], dtype=torch.long)

    def decode(self, tokens: torch.Tensor | list[int]) -> str:
        """Text of token ids (inverse of :meth:`encode`; word level joins words by spaces)."""
        ids = tokens.tolist() if isinstance(tokens, torch.Tensor) else list(tokens)
        if any(not isinstance(i, int) or not 0 <= i < len(self.vocab) for i in ids):
            raise ValueError(f"token ids must be ints in [0, {len(self.vocab)})")
        if self.level == "char":
            return "".join(self.vocab[i] for i in ids)
        out = []
        for i in ids:
            tok = self.vocab[i]
            if tok == "<eos>":
                out.append("\n")
            else:
                out.append(tok if not out or out[-1] == "\n" else " " + tok)
        return "".join(out)

    def __repr__(self) -> str:
        return (
            f"TextSplits({self.name}: train={len(self.train_tokens)} tokens, "
            f"val={len(self.val_tokens)} tokens, vocab={self.vocab_size}, level={self.level})"
        )


def words_of(text: str) -> list[str]:
    """Word-level tokens: whitespace-split words, ``<eos>`` where each newline was."""
    return text.replace("\n", " <eos> ").split()


def check_seed(seed: object) -> int:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed)


def check_count(n: object, available: int, what: str, dataset: str) -> int | None:
    """Validate a requested subset size (``None`` means all ``available``)."""
    if n is None:
        return None
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ValueError(f"{what} must be an int or None, got {n!r}")
    if not 0 < n <= available:
        raise ValueError(f"{what}={n} is out of range for {dataset}: choose 1..{available}")
    return int(n)


def subset_indices(available: int, n: int | None, seed: int, split: str) -> np.ndarray:
    """``n`` distinct indices out of ``available``, sorted, the same for the same arguments
    (``None``: all, in order)."""
    if n is None:
        return np.arange(available, dtype=np.int64)
    rng = np.random.default_rng([seed, _STREAMS[split]])
    return np.sort(rng.permutation(available)[:n]).astype(np.int64)


_Splits = TypeVar("_Splits")


@dataclass(frozen=True)
class Request:
    """What a loader was asked for: the files found for ``spec``, the subset sizes and the seed."""

    spec: SourceSpec
    found: Found
    n_train: int | None
    n_val: int | None
    seed: int


def dataset_loader(
    spec: Callable[[], SourceSpec], *, subsets: bool = True, **rules: Rule
) -> Callable[[Callable[..., _Splits]], Callable[..., _Splits]]:
    """Turn ``build(request, **options)`` into a loader
    ``load_x(*, root=None, n_train=None, n_val=None, seed=0, download=True, **options)`` that checks its
    arguments (``options`` against ``rules``), finds and verifies the files of ``spec()`` and builds the
    splits. ``spec`` is looked up at each call, so that a test can swap a module's ``SPEC``."""

    def decorate(build: Callable[..., _Splits]) -> Callable[..., _Splits]:
        own = set(inspect.signature(build).parameters) - {"request"}

        def load(
            *,
            root: str | os.PathLike[str] | None = None,
            n_train: int | None = None,
            n_val: int | None = None,
            seed: int = 0,
            download: bool = True,
            **options: Any,
        ) -> _Splits:
            if unknown := sorted(options.keys() - own):  # refused before any file is looked for
                raise TypeError(f"{build.__name__}() got unexpected keyword arguments {unknown}")
            seed, where = check_seed(seed), spec()
            if not subsets and (n_train is not None or n_val is not None):
                raise ValueError(f"{where.title} is loaded whole; got n_train={n_train!r}, n_val={n_val!r} (use None)")
            for name in rules.keys() & options.keys():
                check_value(build.__name__, name, options[name], rules[name])
            return build(Request(where, locate(where, root, download=download), n_train, n_val, seed), **options)

        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(load, attr, getattr(build, attr))
        load.spec = spec  # type: ignore[attr-defined]
        return load

    return decorate


def data_splits(
    request: Request,
    take: Callable[[str, np.ndarray], tuple[torch.Tensor, torch.Tensor]],
    sizes: tuple[int, int],
    *,
    source: str,
    class_names: tuple[str, ...],
    name: str = "",
    mean: Sequence[float] = (),
    std: Sequence[float] = (),
    **fields: Any,
) -> DataSplits:
    """The :class:`DataSplits` of the seeded subsets (:func:`subset_indices`) of full splits of
    ``sizes``; ``take(split, indices)`` gives each subset's inputs and labels."""
    name = name or request.spec.title
    counts = [
        check_count(n, size, f"n_{split}", name)
        for n, size, split in zip((request.n_train, request.n_val), sizes, _STREAMS)
    ]
    indices = [subset_indices(size, n, request.seed, split) for size, n, split in zip(sizes, counts, _STREAMS)]
    train, val = (TensorDataset(*take(split, idx)) for split, idx in zip(_STREAMS, indices))
    return DataSplits(
        key=request.spec.key,
        name=name,
        source=f"{source} ({request.found.describe()})",
        train=train,
        val=val,
        num_classes=len(class_names),
        input_shape=tuple(train.tensors[0].shape[1:]),
        class_names=class_names,
        train_indices=torch.from_numpy(indices[0]),
        val_indices=torch.from_numpy(indices[1]),
        mean=tuple(float(m) for m in mean),
        std=tuple(float(s) for s in std),
        location=str(request.found.directory),
        **fields,
    )


def examples_per_class(labels: torch.Tensor, per_class: int, num_classes: int) -> torch.Tensor:
    """Indices of the first ``per_class`` examples of each class, interleaved by class, so a grid
    with ``num_classes`` columns shows one class per column."""
    if not isinstance(per_class, int) or isinstance(per_class, bool) or per_class < 1:
        raise ValueError(f"per_class must be a positive int, got {per_class!r}")
    columns = []
    for c in range(num_classes):
        found = torch.nonzero(labels == c).flatten()[:per_class]
        if len(found) < per_class:
            raise ValueError(f"class {c} has only {len(found)} examples, {per_class} asked for")
        columns.append(found)
    return torch.stack(columns, dim=1).flatten()


def make_loader(
    dataset: Dataset,
    batch_size: int,
    shuffle: bool,
    seed: int = 0,
    *,
    drop_last: bool = False,
    device: torch.device | None = None,
    shard: tuple[int, int] | None = None,
) -> DataLoader:
    """A ``DataLoader`` whose order depends only on ``seed`` (its own generator; successive epochs
    still differ).

    For a CUDA ``device`` the batches come in pinned memory from ``REPRO_LOADER_WORKERS`` workers
    (default 2). ``shard=(rank, world_size)``: this rank's share of each global batch, in the
    one-process order (:class:`helpers.core.distributed.ShardedBatchSampler`).
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a torch Dataset, got {type(dataset).__name__}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if not isinstance(shuffle, bool):
        raise TypeError(f"shuffle must be a bool, got {type(shuffle).__name__}")
    generator = torch.Generator()
    generator.manual_seed(check_seed(seed))
    on_gpu = device is not None and torch.device(device).type == "cuda"
    workers = positive_int_env(LOADER_WORKERS_ENV, 2) if on_gpu else 0
    gpu_options = {"pin_memory": True, "persistent_workers": True} if on_gpu else {}
    if shard is not None:
        rank, world_size = shard
        # the sampler a one-process loader would build, on the same generator: the same order
        order = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        return DataLoader(
            dataset,
            batch_sampler=ShardedBatchSampler(order, batch_size, rank, world_size, drop_last),
            generator=generator,
            num_workers=workers,
            **gpu_options,
        )
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        generator=generator,
        num_workers=workers,
        drop_last=drop_last,
        **gpu_options,
    )
