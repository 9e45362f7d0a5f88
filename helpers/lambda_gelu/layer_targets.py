"""Distribution-aware annealing targets, one λ per layer (the refinement the λ-GELU paper leaves
to future work in its Section V; built for the ReLU-ization chapter, notebooks 40-41).

The paper's target bounds ``E∞(λ) = ∫|H(x) − Φ(λx)| dx = 2/(λ√(2π))``: the gate error integrated
against ``dx``, the same for every layer whatever its pre-activations. Weighting the same error
by the distribution ``p_ℓ`` of a layer's pre-activations gives its *expected gate error*

    G_ℓ(λ) = E_{x∼p_ℓ} |H(x) − Φ(λx)| = E_{x∼p_ℓ} Φ(−λ|x|),

the mean amount by which a soft gate differs from the hard one on that layer's inputs (a number
in [0, 1/2], free of the layer's scale: rescaling x by a rescales the λ that meets ε by 1/a). For
large λ, ``G_ℓ(λ) ≈ p_ℓ(0)·E∞(λ)``, so the per-layer target is about ``p_ℓ(0)·λ_target``; for
``x ∼ N(0, σ²)`` exactly ``G(λ) = arctan(1/(λσ))/π`` (:func:`normal_gate_error`) and the target is
``1/(σ·tan(πε))``. :func:`layer_lambda_target` solves ``G_ℓ(λ) = ε`` numerically from samples.

The activation-level error of the swap on that layer is ``E|xΦ(λx) − ReLU(x)| = E|x|Φ(−λ|x|)``
(:func:`activation_error`), reported beside it.

:class:`LayerwiseAnnealing` is Algorithm 1 with these targets: during the last learning epoch
``e_s`` it records a strided sample of every λ-GELU layer's inputs on the training batches (no
random numbers are drawn, so training is unchanged), sets each layer's target at the end of that
epoch (stored in its state, so a resumed run keeps them), then anneals every layer linearly to
its own target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.core.validation import checked_arguments, instance_of, integer, number
from helpers.lambda_gelu.hardness import AnnealingSchedule, lambda_modules

#: Largest λ the solver searches; far beyond float32's own resolution of the gate.
LAMBDA_SEARCH_MAX: float = 1e7


def _samples(samples: object) -> np.ndarray:
    arr = np.asarray(samples.detach().cpu() if isinstance(samples, torch.Tensor) else samples, dtype=np.float64)
    arr = arr.ravel()
    if arr.size == 0:
        raise ValueError("samples is empty: a layer's pre-activation distribution needs at least one value")
    if not np.all(np.isfinite(arr)):
        raise ValueError("samples contain NaN or Inf")
    return arr


def _lam(lam: object) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a finite number > 0, got {lam!r}")
    return float(lam)


def _ndtr_neg(z: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr  # lazy: scipy.special is slow to import; training imports this module

    return ndtr(-z)


def gate_error(samples: object, lam: float) -> float:
    """``G(λ) = mean |H(x) − Φ(λx)| = mean Φ(−λ|x|)`` over ``samples`` (float64; ``H(0) = 1/2``)."""
    x = _samples(samples)
    return float(np.mean(_ndtr_neg(_lam(lam) * np.abs(x))))


def activation_error(samples: object, lam: float) -> float:
    """``mean |xΦ(λx) − ReLU(x)| = mean |x|Φ(−λ|x|)``: the swap's error on the activation's output."""
    x = np.abs(_samples(samples))
    return float(np.mean(x * _ndtr_neg(_lam(lam) * x)))


def normal_gate_error(lam: float, sigma: float = 1.0) -> float:
    """``G(λ)`` for ``x ∼ N(0, σ²)`` in closed form: ``arctan(1/(λσ))/π``.

    (``P(Z < −λ|X|)`` for independent standard normal Z: the wedge between the half-planes ``X > 0``
    and ``Z + λX < 0`` has angle ``arctan(1/(λσ))``, counted twice for ``X < 0``, out of 2π.)
    """
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not math.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    return math.atan(1.0 / (_lam(lam) * sigma)) / math.pi


def layer_lambda_target(samples: object, eps: float) -> float:
    """The smallest ``λ >= 1`` with ``gate_error(samples, λ) <= eps``.

    ``G`` decreases in λ, so the root of ``G(λ) = eps`` is found by Brent's method on ``log λ``;
    ``1.0`` when GELU itself (λ = 1) already meets ``eps``. Raises ``ValueError`` for ``eps``
    outside (0, 1/2) and when even λ = 1e7 does not meet it (samples piled up at 0).
    """
    from scipy.optimize import brentq  # lazy: as above

    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 0.5:
        raise ValueError(f"eps must be in (0, 0.5), got {eps!r}")
    x = np.abs(_samples(samples))
    g = lambda log_lam: float(np.mean(_ndtr_neg(math.exp(log_lam) * x))) - eps  # noqa: E731
    if g(0.0) <= 0:
        return 1.0
    hi = math.log(LAMBDA_SEARCH_MAX)
    if g(hi) > 0:
        raise ValueError(
            f"no λ <= {LAMBDA_SEARCH_MAX:g} brings the gate error to {eps}: "
            f"{np.mean(x < 1e-6):.1%} of the samples are within 1e-6 of 0"
        )
    return float(math.exp(brentq(g, 0.0, hi, xtol=1e-10, rtol=1e-12)))


def strided_sample(x: torch.Tensor, limit: int) -> torch.Tensor:
    """At most ``limit`` entries of ``x`` (flattened) at evenly spaced positions, as float32 on the CPU.

    Positions ``⌊i·n/limit⌋`` avoid a fixed stride that could line up with a channel or spatial
    period; no random numbers are drawn.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}")
    flat = x.detach().reshape(-1)
    n = flat.numel()
    if n <= limit:
        return flat.float().cpu().clone()
    index = torch.arange(limit, dtype=torch.int64) * n // limit
    return flat[index.to(flat.device)].float().cpu()


class PreactivationRecorder:
    """Records a strided sample of the inputs of ``modules`` in every *training* forward pass.

    Evaluation passes (``module.training`` false) are ignored. :meth:`samples` returns one 1-D
    tensor per module; :meth:`remove` detaches the hooks.
    """

    @checked_arguments({"modules": instance_of(Sequence), "per_batch": integer(1)})
    def __init__(self, modules: Sequence[nn.Module], per_batch: int = 2048) -> None:
        if not modules:
            raise ValueError("no modules to record")
        self.per_batch = per_batch
        self._chunks: list[list[torch.Tensor]] = [[] for _ in modules]
        self._handles = [m.register_forward_pre_hook(self._hook(i)) for i, m in enumerate(modules)]

    def _hook(self, index: int):
        def record(module: nn.Module, args: tuple[Any, ...]) -> None:
            if module.training and args and isinstance(args[0], torch.Tensor):
                self._chunks[index].append(strided_sample(args[0], self.per_batch))

        return record

    def samples(self) -> list[torch.Tensor]:
        if any(not chunks for chunks in self._chunks):
            raise RuntimeError("a module saw no training forward pass while recording")
        return [torch.cat(chunks) for chunks in self._chunks]

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []


class LayerwiseAnnealing(AnnealingSchedule):
    """Algorithm 1 with a distribution-aware target per layer (see the module docstring).

    ``λ_ℓ(e) = λ_ℓ(e_s) + (e − e_s)/(T − e_s)·(λ_ℓ^target − λ_ℓ(e_s))`` for ``e > e_s``, with
    ``λ_ℓ^target = layer_lambda_target(inputs of layer ℓ during epoch e_s, eps)``. Needs ``e_s >= 1``.
    """

    @checked_arguments(
        {
            "total_epochs": integer(1),
            "eps": number(0, 0.5, low_open=True, high_open=True),
            "switch_fraction": number(0, 1, high_open=True),
            "per_batch": integer(1),
        }
    )
    def __init__(self, total_epochs: int, eps: float, switch_fraction: float = 0.25, per_batch: int = 2048) -> None:
        self._set_run(total_epochs, 1.0, switch_fraction)  # checked above, not again by AnnealingSchedule
        if self.switch_epoch < 1:
            raise ValueError(
                f"layerwise targets are measured during the last learning epoch, but "
                f"floor({switch_fraction}·{total_epochs}) = 0 leaves none"
            )
        self.eps = float(eps)
        self.per_batch = per_batch
        self.targets: list[float] | None = None
        self._epoch = 0
        self._recorder: PreactivationRecorder | None = None

    def __repr__(self) -> str:
        return (
            f"LayerwiseAnnealing(total_epochs={self.total_epochs}, eps={self.eps}, "
            f"switch_epoch={self.switch_epoch}, targets={self.targets})"
        )

    def on_epoch_start(self, epoch: int, model: nn.Module) -> list[float]:
        self._check_epoch(epoch)
        self._epoch = epoch
        mods = lambda_modules(model)
        if not mods:
            raise ValueError("model has no LambdaGELU module to anneal")
        if epoch <= self.switch_epoch:
            for module in mods:
                module.clear_fixed_lambda(unfreeze=True)
            if epoch == self.switch_epoch:
                if self._recorder is not None:
                    self._recorder.remove()
                self._recorder = PreactivationRecorder(mods, self.per_batch)
            return [float(m.lam.detach().double().mean()) for m in mods]
        if self.targets is None or len(self.targets) != len(mods):
            raise RuntimeError(
                f"no per-layer targets for epoch {epoch}: they are set at the end of epoch {self.switch_epoch}"
            )
        w = self._weight(epoch)
        for module, target in zip(mods, self.targets):
            start = module.base_lam.detach()
            goal = torch.full_like(start, target, dtype=torch.float64)
            module.set_fixed_lambda(torch.lerp(start.double(), goal, w).to(start.dtype))
        return [float(m.lam.detach().double().mean()) for m in mods]

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        if self._epoch != self.switch_epoch or self._recorder is None:
            return {}
        samples = self._recorder.samples()
        self._recorder.remove()
        self._recorder = None
        self.targets = [layer_lambda_target(s, self.eps) for s in samples]
        return {"lambda_targets": list(self.targets)}

    def state_dict(self) -> dict[str, Any]:
        return {"targets": list(self.targets) if self.targets is not None else None}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        targets = state.get("targets")
        self.targets = [float(t) for t in targets] if targets is not None else None


#: The public constructors of this module that check their arguments against a table
#: (``tests/test_constructor_validation.py`` generates bad inputs for each).
CHECKED_CONSTRUCTORS: tuple[type, ...] = (PreactivationRecorder, LayerwiseAnnealing)
