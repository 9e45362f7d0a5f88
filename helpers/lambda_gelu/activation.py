"""λ-GELU ``x Φ(λx)``, ``λ = 1 + softplus(s/t) ≥ 1``: GELU at λ = 1, ReLU as λ → ∞ (arXiv 2603.21991, III).

Numbers are checked by the ``@checked_arguments`` tables, tensors (dtype, device, shape, values) by
:mod:`helpers.lambda_gelu.kernels`, which also computes (and picks the fused path, ``REPRO_KERNELS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from helpers.core import validation as V
from helpers.core.provenance import note_backend
from helpers.core.registry import relu_limits
from helpers.core.validation import boolean, checked_arguments, choice, instance_of, integer, number
from helpers.lambda_gelu import kernels as K
from helpers.lambda_gelu.kernels import apply_lambda_gelu, host_readable, lambda_gelu_reference

__all__ = ["lambda_gelu", "lambda_gelu_reference", "LambdaGELU", "softplus_inverse", "lambda_from_s", "s_from_lambda"]
__all__ += ["LAMBDA_NEAR_ONE"]

#: The paper's "λ ≈ 1" (λ = 1 is s = −∞). ∂λ/∂s ≈ (λ − 1)/t near 1, so starting closer slows λ's first
#: updates in proportion; 1.01 is GELU to 0.2% in the gate slope and still lets s move.
LAMBDA_NEAR_ONE: float = 1.01
_LAM = number(1, also=(torch.Tensor,))  # λ >= 1: a number here, a tensor elementwise in kernels.py


@checked_arguments({"x": instance_of(torch.Tensor), "lam": _LAM})
def lambda_gelu(x: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """``x Φ(λx)``: GELU at ``lam = 1``, ReLU as ``lam → ∞``. ``lam`` is a number or a tensor
    broadcastable to ``x`` (without enlarging it); gradients flow to ``x`` and a tensor ``lam``."""
    K.check_x(x, "lambda_gelu", tensor=True)  # the table rule checked it is a tensor
    if x.dtype not in (torch.float32, torch.float64):  # λ and the gate in float32 (1e5 is inf in float16)
        return lambda_gelu(x.to(torch.float32), lam).to(x.dtype)
    if isinstance(lam, torch.Tensor):
        return apply_lambda_gelu(x, K.check_lambda_tensor(lam, x), tuple(lam.shape))
    if lam > (top := torch.finfo(x.dtype).max):
        raise ValueError(f"λ-GELU needs a finite lam >= 1 (at most {top:.4g}, the largest {x.dtype}), got {lam!r}")
    if lam == 1:
        note_backend("lambda_gelu", "eager")
        return relu_limits(F.gelu, x)  # exactly nn.GELU(), with its limits at ±∞
    return apply_lambda_gelu(x, torch.tensor(float(lam), dtype=x.dtype, device=x.device), ())


def softplus_inverse(y: torch.Tensor) -> torch.Tensor:
    """``log(e^y − 1)`` for ``y > 0``, written to stay accurate for small and large ``y``."""
    return y + torch.log(-torch.expm1(-y))


def lambda_from_s(s: torch.Tensor, t: float) -> torch.Tensor:
    """``λ = 1 + softplus(s/t)``."""
    return 1.0 + F.softplus(s / t)


def s_from_lambda(lam: float | torch.Tensor, t: float) -> torch.Tensor:
    """``s = t · softplus⁻¹(λ − 1)``; needs λ > 1 (λ = 1 is s = −∞)."""
    K.real_tensor(lam, "λ")
    lam_t = torch.as_tensor(lam, dtype=torch.float64)
    if not bool(torch.all(lam_t > 1)) or not bool(torch.all(torch.isfinite(lam_t))):
        hint = f"use e.g. lam_init={LAMBDA_NEAR_ONE} for 'λ ≈ 1', or fixed_lambda=1.0 for exact GELU"
        raise ValueError(f"a learnable λ must be finite and > 1 (λ = 1 needs s = -inf), got {lam!r}; {hint}")
    return t * softplus_inverse(lam_t - 1.0)


class LambdaGELU(nn.Module):
    """``x Φ(λx)``, ``λ = 1 + softplus(s/t)`` (the paper's t = 0.1), from ``s_init``, ``lam_init`` (> 1;
    default :data:`LAMBDA_NEAR_ONE`), or the constant ``fixed_lambda`` with no ``s`` (1.0: ``nn.GELU()``).
    ``granularity``: one λ per ``"layer"`` (the paper's), per ``"channel"`` (``num_channels`` along
    ``channel_dim``: 1 for ``N×C×…``, -1 for channels-last) or per ``"neuron"`` (the trailing dims
    ``neuron_shape``). ``s`` is the ``nn.Parameter`` (found by name); ``lam`` the λ in use."""

    KEYED_DEFAULTS = ("t",)  # spelled out in a run's key even at its default (canonical_kwargs)
    IMPLIED_DEFAULTS = {"lam_init": LAMBDA_NEAR_ONE}  # lam_init=None keys as this value

    @checked_arguments(
        {
            "t": number(0, low_open=True),
            "s_init": number(optional=True, also=(torch.Tensor,)),
            "lam_init": number(1, low_open=True, optional=True, also=(torch.Tensor,)),
            "fixed_lambda": number(1, optional=True, also=(torch.Tensor,)),
            "granularity": choice(("layer", "channel", "neuron")),
            "num_channels": integer(1, optional=True),
            "channel_dim": integer(),
            "neuron_shape": integer(1, optional=True, also=(tuple, list)),
        }
    )
    def __init__(
        self,
        t: float = 0.1,
        s_init: float | torch.Tensor | None = None,
        lam_init: float | torch.Tensor | None = None,
        fixed_lambda: float | torch.Tensor | None = None,
        granularity: Literal["layer", "channel", "neuron"] = "layer",
        num_channels: int | None = None,
        channel_dim: int = 1,
        neuron_shape: int | Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.t, self.granularity, self.channel_dim = float(t), granularity, channel_dim
        given = {n for n, v in (("num_channels", num_channels), ("neuron_shape", neuron_shape)) if v is not None}
        wanted = {"layer": set(), "channel": {"num_channels"}, "neuron": {"neuron_shape"}}[granularity]
        if given != wanted:
            what = "".join(wanted) or "neither num_channels nor neuron_shape"
            raise ValueError(f"granularity={granularity!r} needs {what}, got {sorted(given)}")
        if listed := isinstance(neuron_shape, (tuple, list)):  # (an int was checked by the table)
            V.check_value("LambdaGELU", "neuron_shape", neuron_shape, V.integer_tuple(1))
        shape = self.param_shape = tuple(neuron_shape if listed else (d for d in (num_channels, neuron_shape) if d))
        if sum(v is not None for v in (s_init, lam_init, fixed_lambda)) > 1:
            raise ValueError("give at most one of s_init, lam_init and fixed_lambda (not both)")
        self.register_parameter("s", None)
        self.register_buffer("fixed_lam", None)
        if fixed_lambda is not None:
            self.fixed_lam = K.checked_lambda(fixed_lambda, shape, "fixed_lambda")
        else:  # s from s_init, or from lam_init (default LAMBDA_NEAR_ONE)
            name, value = ("s_init", s_init) if s_init is not None else ("lam_init", lam_init)
            K.real_tensor(s_init, name)  # (lam_init: in s_from_lambda)
            s0 = s_init if s_init is not None else s_from_lambda(LAMBDA_NEAR_ONE if value is None else value, self.t)
            s0 = K.fit_shape(torch.as_tensor(s0).float(), shape, name)
            self.s = nn.Parameter(K.checked_s(s0, self.t, f"{name}={value!r}"))
        # The annealing override lives in buffers, which checkpoints restore; _override_flag mirrors it in Python
        # (reading a buffer at each forward waits for a GPU's queue and breaks a compiled graph).
        self.register_buffer("lam_override", torch.ones(shape))
        self.register_buffer("override_active", torch.tensor(False))
        self._override_flag = False

    @property
    def base_lam(self) -> torch.Tensor:
        """λ without the override: ``1 + softplus(s/t)`` or the fixed value."""
        return self.fixed_lam if self.s is None else lambda_from_s(self.s, self.t)

    @property
    def lam(self) -> torch.Tensor:
        """The λ used by ``forward`` (the override while one is set)."""
        return self.lam_override if self._override_flag else self.base_lam

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:  # noqa: ANN001
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        self._override_flag = bool(self.override_active)

    @torch.no_grad()
    @checked_arguments({"value": number(1, low_open=True, also=(torch.Tensor,))})
    def set_lambda(self, value: float | torch.Tensor) -> None:
        """Set the base λ: ``s = t·softplus⁻¹(λ − 1)`` (needs λ > 1), or the fixed value."""
        if self.s is None:
            self.fixed_lam.copy_(K.checked_lambda(value, self.param_shape, "λ"))
        else:
            s = K.fit_shape(s_from_lambda(value, self.t), self.param_shape, "λ").to(self.s.dtype)
            self.s.copy_(K.checked_s(s, self.t, f"λ={value!r}"))

    @torch.no_grad()
    @checked_arguments({"value": _LAM})
    def set_fixed_lambda(self, value: float | torch.Tensor) -> None:
        """Override λ with ``value`` and freeze ``s`` (``requires_grad=False``, grad cleared)."""
        self.lam_override.copy_(K.checked_lambda(value, self.param_shape, "fixed λ"))
        self.override_active.fill_(True)
        self._override_flag = True
        if self.s is not None:
            self.s.requires_grad_(False)
            self.s.grad = None  # a stale gradient must not move s in the next optimizer step

    @torch.no_grad()
    @checked_arguments({"unfreeze": boolean()})
    def clear_fixed_lambda(self, unfreeze: bool = True) -> None:
        """Drop the override; with ``unfreeze`` make ``s`` learnable again."""
        self.override_active.fill_(False)
        self._override_flag = False
        if self.s is not None and unfreeze:
            self.s.requires_grad_(True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        K.check_x(x, "LambdaGELU")
        if x.dtype not in (torch.float32, torch.float64):  # never cast s or λ to half precision
            return self.forward(x.to(torch.float32)).to(x.dtype)
        view = K.lambda_view(x, self.granularity, self.param_shape, self.channel_dim, f"LambdaGELU({self._args()})")
        learnable = self.s is not None and not self._override_flag
        K.same_device(self.s if learnable else self.lam, x, "LambdaGELU")
        if learnable:  # the softplus map runs inside the autograd function (fewer graph nodes)
            return apply_lambda_gelu(x, self.s if self.s.dtype == x.dtype else self.s.to(x.dtype), view, self.t)
        lam = self.lam
        if host_readable(lam) and bool(torch.all(lam == 1)):  # no read of λ off a GPU or in a graph
            return relu_limits(F.gelu, x)  # λ = 1 exactly: nn.GELU bit for bit, with its limits at ±∞
        return apply_lambda_gelu(x, lam.to(x.dtype), view)

    def extra_repr(self) -> str:
        lam = self.lam.detach()
        shown = f"{lam.item():.4g}" if lam.numel() == 1 else f"mean {lam.mean().item():.4g}"
        mode = "fixed" if self.s is None else ("overridden" if self._override_flag else "learnable")
        return f"{self._args()}, λ={shown} ({mode})"

    def _args(self) -> str:
        g, p = self.granularity, self.param_shape
        extra = f", num_channels={p[0]}, channel_dim={self.channel_dim}" if g == "channel" else ""
        return f"t={self.t}, granularity={g}{extra}" + (f", neuron_shape={p}" if g == "neuron" else "")
