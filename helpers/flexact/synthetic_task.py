"""The task of Flex-Act's synthetic study (paper Section 4.1): its data ``y = a(k·x₁)`` with distractor
features, the network (one neuron, as the paper's numbers imply) and a fast batch loader.
:mod:`helpers.flexact.synthetic` configures and trains the runs."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.core import validation as v
from helpers.core.registry import get_activation
from helpers.flexact.paper import GROUND_TRUTHS, K_SCALE, N_FEATURES

INFORMATIVE_DISTRIBUTIONS: tuple[str, ...] = ("uniform", "normal")


def _target_function(name: str) -> nn.Module:
    if name not in GROUND_TRUTHS:
        raise ValueError(f"unknown ground truth {name!r}; choose one of {GROUND_TRUTHS}")
    return get_activation(name)


@v.checked_arguments(
    {
        "ground_truth": v.choice(GROUND_TRUTHS),
        "n": v.integer(1),
        "generator": v.instance_of(torch.Generator),
        "k": v.number(),
        "n_features": v.integer(1),
        "informative": v.choice(INFORMATIVE_DISTRIBUTIONS),
    }
)
def synthetic_data(
    ground_truth: str,
    n: int,
    generator: torch.Generator,
    *,
    k: float = K_SCALE,
    n_features: int = N_FEATURES,
    informative: str = "uniform",
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, y)`` with ``x₁ ~ U(−1, 1)`` (or ``N(0, 1)``), distractors ``N(0, 1)``, ``y = a(k·x₁)``.

    ``y`` has shape ``(n, 1)``. Draws come from ``generator`` only (not the global RNG), so the
    data of a seed are the same whatever ran before.
    """
    target = _target_function(ground_truth)
    x = torch.empty(n, n_features)
    if informative == "uniform":
        x[:, 0] = torch.rand(n, generator=generator) * 2 - 1
    else:
        x[:, 0] = torch.randn(n, generator=generator)
    if n_features > 1:
        x[:, 1:] = torch.randn(n, n_features - 1, generator=generator)
    with torch.no_grad():
        y = target(k * x[:, :1])
    return x, y


class SyntheticNet(nn.Module):
    """``hidden == 0``: one neuron ``φ(w·x + b)`` (what the paper's numbers imply); otherwise
    ``Linear(d, hidden) → φ → Linear(hidden, 1)``. The activation module is ``self.act``."""

    @v.checked_arguments({"n_features": v.integer(1), "hidden": v.integer(0), "act": v.instance_of(nn.Module)})
    def __init__(self, n_features: int, hidden: int, act: nn.Module) -> None:
        super().__init__()
        self.linear = nn.Linear(n_features, hidden if hidden else 1)
        self.act = act
        self.head = nn.Linear(hidden, 1) if hidden else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.act(self.linear(x))
        return self.head(out) if self.head is not None else out


class _BatchIndexSampler(torch.utils.data.Sampler):
    """Yields whole batches of indices as tensors (a new random permutation per epoch when
    ``shuffle``), so a ``TensorDataset`` is indexed once per batch with a tensor: per-sample
    indexing and collation would cost more than a training step of these tiny models."""

    def __init__(self, n: int, batch_size: int, shuffle: bool, generator: torch.Generator) -> None:
        self.n, self.batch_size, self.shuffle, self.generator = n, batch_size, shuffle, generator

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)

    def __iter__(self):
        order = torch.randperm(self.n, generator=self.generator) if self.shuffle else torch.arange(self.n)
        yield from order.split(self.batch_size)


def batch_loader(x: torch.Tensor, y: torch.Tensor, batch_size: int, *, shuffle: bool, seed: int) -> DataLoader:
    """A ``DataLoader`` over ``(x, y)`` that fetches each batch with one tensor index; its order
    depends only on ``seed`` (its own generator, exposed as ``loader.generator`` so that
    :func:`helpers.core.train.fit` checkpoints it)."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y have different lengths: {x.shape[0]} vs {y.shape[0]}")
    generator = torch.Generator()
    generator.manual_seed(seed)
    sampler = _BatchIndexSampler(x.shape[0], batch_size, shuffle, generator)
    return DataLoader(TensorDataset(x, y), sampler=sampler, batch_size=None, generator=generator)
