"""What the model constructors of :mod:`helpers.core.models` accept: the rules their argument
tables share, and the checks that span several arguments or look at an input.

Each constructor there declares one rule per argument (:func:`helpers.core.validation.checked_arguments`);
the rules they share are named here, so "a width" means the same everywhere. The functions below
check what a single rule cannot: a factory that is a module instance, the number of stages, the
heads dividing the width, the shape of an input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from helpers.core.validation import instance_of, integer, integer_tuple, number

__all__ = [
    "ActFactory",
    "COUNT",
    "COUNTS",
    "ACT",
    "RATIO",
    "DROPOUT",
    "check_factory",
    "stage_counts",
    "check_input",
    "check_transformer",
]

ActFactory = Callable[[], nn.Module]

COUNT = integer(1)  # a width, a depth, a size, a number of classes
COUNTS = integer_tuple(1)  # one positive int per stage
ACT = instance_of(Callable)  # a factory; check_factory also refuses a module instance
RATIO = number(0, low_open=True)  # finite: inf would build a layer of round(inf) units
DROPOUT = number(0, 1, high_open=True)  # 1 would zero every activation


def check_factory(act: ActFactory) -> ActFactory:
    if isinstance(act, nn.Module):
        # one instance would be called as act() (its forward without input), and shared by every site
        raise TypeError(f"act must be a factory such as nn.ReLU or lambda: nn.ReLU(), not the module instance {act!r}")
    if not callable(act):
        raise TypeError(f"act must be a zero-argument callable returning nn.Module, got {act!r}")
    return act


def stage_counts(name: str, value: Sequence[int], length: int | None = None) -> tuple[int, ...]:
    """Positive ints, one per stage, ``length`` of them when given: a zero would still build one
    block (``[first] + n - 1`` more), and ``zip`` with the stage widths would drop extra entries."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a sequence of positive ints, got {value!r}")
    counts = tuple(value)
    if length is not None and len(counts) != length:
        raise ValueError(f"{name} must have exactly {length} entries (one per stage), got {len(counts)}: {counts!r}")
    if not counts:
        raise ValueError(f"{name} must not be empty")
    for i, n in enumerate(counts):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{name}[{i}] must be a positive int, got {n!r} (in {name}={counts!r})")
    return counts


def check_input(model: str, x: torch.Tensor, expected: str, ok: Callable[[torch.Tensor], bool]) -> None:
    """A wrong input fails here, naming the model and what it expects, not deep inside a torch
    layer ("mat1 and mat2 shapes cannot be multiplied"). Skipped while torch.fx traces the model
    (int8 quantisation traces whole networks, and a traced shape has no value to check)."""
    if torch.fx._symbolic_trace.is_fx_symbolic_tracing():
        return
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        got = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"{model} expects a floating-point tensor {expected}, got {got}")
    if not ok(x):
        raise ValueError(f"{model} expects {expected}, got shape {tuple(x.shape)}")


def check_transformer(dim: int, heads: int, mlp_ratio: float) -> None:
    """What a transformer's settings need together (ViT and GPT share it): heads divide the
    width, the MLP has a hidden unit."""
    if dim % heads:
        raise ValueError(f"dim ({dim}) must be divisible by heads ({heads})")
    if int(dim * mlp_ratio) < 1:
        raise ValueError(f"mlp_ratio={mlp_ratio!r} gives a hidden width of 0 for dim={dim}")
