"""Linear regions of a ReLU MLP along lines through input space (the 1-D slice estimate).

A ReLU network is affine on each region of input space where its activation pattern (which
units are on) is constant. Along a segment ``x(t) = a + t·(b − a)``, ``t ∈ [0, 1]``, the count of
regions the segment crosses is the standard 1-D estimate of the region density (Hanin & Rolnick,
2019; Novak et al., 2018). Here the count is **exact**: on a piece of the segment where layers
``1..ℓ−1`` have a fixed pattern, layer ℓ's pre-activations are affine in t, ``z(t) = u + t·v``,
so each unit switches at most once, at ``t = −u_j/v_j``. :func:`line_pieces` splits the segment
layer by layer at those roots (float64) and returns every breakpoint and the pattern of every
piece. :func:`grid_pattern_changes` counts the same thing on a grid, to check it.

Only :class:`helpers.core.models.MLP` networks whose hidden activations are all ``nn.ReLU`` qualify
(:func:`relu_mlp_layers`); GELU networks have no linear regions.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from helpers.core.models import MLP


def relu_mlp_layers(model: nn.Module) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(W, b), ...]`` (float64) of the hidden Linear layers of a ReLU :class:`MLP`.

    Raises ``ValueError`` for any other model, or an MLP with a non-ReLU activation.
    """
    if not isinstance(model, MLP):
        raise ValueError(f"linear regions are counted for ReLU MLPs, got {type(model).__name__}")
    mods = list(model.body)
    if len(mods) % 2:
        raise ValueError("MLP body must alternate Linear and activation")
    layers = []
    for linear, act in zip(mods[::2], mods[1::2]):
        if not isinstance(linear, nn.Linear) or type(act) is not nn.ReLU:
            raise ValueError(
                f"every hidden layer must be Linear → nn.ReLU, found {type(linear).__name__} → "
                f"{type(act).__name__}; swap the activations for ReLU first"
            )
        layers.append((linear.weight.detach().double().numpy(), linear.bias.detach().double().numpy()))
    return layers


def _vector(x: object, name: str) -> np.ndarray:
    arr = np.asarray(x.detach().cpu() if isinstance(x, torch.Tensor) else x, dtype=np.float64).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or Inf")
    return arr


def line_pieces(
    layers: list[tuple[np.ndarray, np.ndarray]], start: object, end: object
) -> tuple[np.ndarray, np.ndarray]:
    """Exact breakpoints of the activation pattern along ``start → end``.

    Returns ``(edges, patterns)``: ``edges`` (float64, ``0 = edges[0] < ... < edges[-1] = 1``) bound
    the pieces, and ``patterns[k]`` (bool, one column per hidden unit of every layer) is the
    pattern on piece k (evaluated at its midpoint). Adjacent pieces always differ.
    """
    if not layers:
        raise ValueError("layers is empty")
    a, b = _vector(start, "start"), _vector(end, "end")
    if a.shape != b.shape or a.size != layers[0][0].shape[1]:
        raise ValueError(
            f"start and end must both have the input size {layers[0][0].shape[1]}, got {a.size} and {b.size}"
        )
    if np.array_equal(a, b):
        raise ValueError("start and end are the same point: a line needs two points")
    # pieces: (t0, t1, offset, direction, pattern so far); layer input is offset + t·direction
    pieces = [(0.0, 1.0, a, b - a, np.zeros(0, dtype=bool))]
    for w, bias in layers:
        nxt = []
        for t0, t1, off, dirn, pattern in pieces:
            u, v = w @ off + bias, w @ dirn
            with np.errstate(divide="ignore", invalid="ignore"):
                roots = -u / v
            roots = np.unique(roots[(v != 0) & (roots > t0) & (roots < t1)])
            cuts = np.concatenate(([t0], roots, [t1]))
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                on = (u + 0.5 * (lo + hi) * v) > 0
                nxt.append((lo, hi, np.where(on, u, 0.0), np.where(on, v, 0.0), np.concatenate((pattern, on))))
        pieces = nxt
    edges = np.array([p[0] for p in pieces] + [pieces[-1][1]])
    return edges, np.array([p[4] for p in pieces])


def count_regions(model: nn.Module, starts: object, ends: object) -> dict[str, list]:
    """Regions crossed by every segment ``starts[i] → ends[i]``: ``{"pieces": [...], "distinct":
    [...], "length": [...]}`` (pieces along the line, distinct patterns among them, and the
    segment's Euclidean length in input space)."""
    layers = relu_mlp_layers(model)
    s, e = np.asarray(starts, dtype=np.float64), np.asarray(ends, dtype=np.float64)
    if s.shape != e.shape or s.ndim < 2 or len(s) == 0:
        raise ValueError(f"starts and ends must be equal-shaped batches of points, got {s.shape} and {e.shape}")
    out: dict[str, list] = {"pieces": [], "distinct": [], "length": []}
    for a, b in zip(s.reshape(len(s), -1), e.reshape(len(e), -1)):
        _, patterns = line_pieces(layers, a, b)
        out["pieces"].append(int(len(patterns)))
        out["distinct"].append(int(len({p.tobytes() for p in patterns})))
        out["length"].append(float(np.linalg.norm(b - a)))
    return out


def grid_pattern_changes(model: nn.Module, start: object, end: object, resolution: int) -> int:
    """Pattern changes between consecutive points of a ``resolution``-point grid on ``start → end``
    (a lower bound on ``pieces − 1`` that reaches it once the grid is finer than every piece)."""
    if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 2:
        raise ValueError(f"resolution must be an int >= 2, got {resolution!r}")
    layers = relu_mlp_layers(model)
    a, b = _vector(start, "start"), _vector(end, "end")
    t = np.linspace(0.0, 1.0, resolution)[:, None]
    h = a[None] + t * (b - a)[None]
    patterns = []
    for w, bias in layers:
        z = h @ w.T + bias
        patterns.append(z > 0)
        h = np.maximum(z, 0.0)
    full = np.concatenate(patterns, axis=1)
    return int(np.any(full[1:] != full[:-1], axis=1).sum())


def line_endpoints(inputs: torch.Tensor, n_lines: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_lines`` segments between pairs of distinct inputs (e.g. validation images), drawn with
    a generator seeded by ``seed``, so every arm of a seed is cut along the same lines (``n_lines``
    is checked where it enters, :data:`helpers.relu_ization.experiment.RELUIZATION_CONFIG_RULES`)."""
    if not isinstance(inputs, torch.Tensor) or inputs.shape[0] < 2:
        raise ValueError("inputs must be a tensor of at least 2 points")
    g = torch.Generator().manual_seed(seed)
    first = torch.randint(0, inputs.shape[0], (n_lines,), generator=g)
    offset = torch.randint(1, inputs.shape[0], (n_lines,), generator=g)
    second = (first + offset) % inputs.shape[0]  # never the same index
    return inputs[first], inputs[second]
