"""λ-GELU: ``a(x; λ) = x Φ(λx)`` with a learnable hardness ``λ = 1 + softplus(s/t) ≥ 1``.

λ = 1 is GELU; λ → ∞ is ReLU (Section III of the λ-GELU paper, arXiv 2603.21991). The module
:class:`LambdaGELU` holds the unconstrained parameter ``s`` (one per layer as in the paper, or,
beyond the paper, one per channel or per neuron), a fixed-λ mode, and an override used by the
hardness annealing of :mod:`helpers.lambda_gelu.hardness`.

Computation: :mod:`helpers.lambda_gelu.kernels` (forward and closed-form backward, fused by
TorchInductor for large float32 tensors, ATen's GELU kernels otherwise; see
:mod:`helpers.core.kernels` for the one backend switch, ``REPRO_KERNELS``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from helpers.core.provenance import note_backend
from helpers.core.registry import register_activation_type, relu_limits
from helpers.core.validation import checked_arguments, choice, instance_of, integer, number
from helpers.lambda_gelu.kernels import apply_lambda_gelu, host_readable

__all__ = [
    "lambda_gelu",
    "lambda_gelu_reference",
    "LambdaGELU",
    "softplus_inverse",
    "lambda_from_s",
    "s_from_lambda",
    "LAMBDA_NEAR_ONE",
]

Granularity = Literal["layer", "channel", "neuron"]
_GRANULARITIES: tuple[str, ...] = ("layer", "channel", "neuron")

#: The "λ ≈ 1" of the paper's uniform initialisation. λ = 1 itself needs s = −∞. Since
#: ∂λ/∂s = (1 − e^{1−λ})/t ≈ (λ − 1)/t near 1, starting closer to 1 slows the first updates of λ
#: in proportion (Eq. (3) has the square of this factor); 1.01 is a GELU to 0.2% in the gate slope
#: and still lets s move. Override with ``lam_init``.
LAMBDA_NEAR_ONE: float = 1.01


def _apply(x: torch.Tensor, p: torch.Tensor, view: tuple[int, ...], t: float | None = None) -> torch.Tensor:
    return apply_lambda_gelu(x, p, view, t)


def _check_lambda_tensor(lam: torch.Tensor, x: torch.Tensor) -> None:
    """``lam`` (already in x's dtype) broadcasts to ``x`` without enlarging it and is finite and
    ``>= 1`` everywhere; one pass over ``lam``."""
    try:
        shape = torch.broadcast_shapes(x.shape, lam.shape)
    except RuntimeError:
        shape = None
    if shape != x.shape:
        raise ValueError(f"lam of shape {tuple(lam.shape)} does not broadcast to x of shape {tuple(x.shape)}")
    top = torch.finfo(lam.dtype).max
    if lam.device.type == "meta":  # no values to check (x is on "meta" too: _check_same_device)
        return
    if lam.numel() and not bool(torch.all((lam.detach() >= 1) & (lam.detach() <= top))):  # also NaN
        d = lam.detach()
        bad = float("nan") if torch.isnan(d).any() else (d.min().item() if d.min() < 1 else d.max().item())
        raise ValueError(
            f"λ-GELU needs a finite lam >= 1 everywhere (at most {top:.4g}, the largest {lam.dtype}), "
            f"got {bad:.6g}; beyond that maximum λ-GELU is ReLU to {lam.dtype} precision: use relu"
        )


def _check_same_device(lam: torch.Tensor, x: torch.Tensor, name: str) -> None:
    """A clear error for λ and ``x`` on different devices (a device comparison, no host read). A
    one-element λ on the CPU is allowed with any ``x``: it is read as a number."""
    if lam.device != x.device and not (lam.device.type == "cpu" and lam.numel() == 1):
        raise ValueError(
            f"λ ({name}) is on device {lam.device} but x on {x.device}; move them to one device "
            "(e.g. module.to(x.device))"
        )


def _no_meta(value: object, name: str) -> None:
    """A meta tensor holds no values: refuse it where a value must be read (λ, s)."""
    if isinstance(value, torch.Tensor) and value.device.type == "meta":
        raise ValueError(
            f"{name} is a meta tensor, which holds no values; give a number or a tensor on a real "
            "device (move the module to 'meta' afterwards with .to('meta'))"
        )


def _check_lambda_input(value: object, name: str) -> None:
    """``value`` is a real number (not a bool) or a real, non-meta tensor: a clear ``TypeError``
    rather than one from deep inside torch for a string, a bool or a complex tensor."""
    if isinstance(value, torch.Tensor):
        _no_meta(value, name)
        if value.dtype == torch.bool or value.is_complex():
            raise TypeError(f"{name} must be a real number or a real tensor, got a {value.dtype} tensor")
        return
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number or a real tensor, got {type(value).__name__} ({value!r})")


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """float64 for float64 inputs, float32 for everything else: λ and the gate are never formed
    in half precision, where λ = 1e5 is already ``inf``."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _check_x(x: object, where: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{where}: x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(
            f"{where}: x must be a floating-point tensor, got {x.dtype} (like "
            "torch.nn.functional.gelu, λ-GELU is not defined for integer or complex tensors; "
            "convert with x.float())"
        )


@checked_arguments({"x": instance_of(torch.Tensor), "lam": number(1, also=(torch.Tensor,))})
def lambda_gelu(x: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """``x Φ(λx)``: GELU at ``lam = 1``, ReLU as ``lam → ∞``.

    ``lam`` is a number or a tensor broadcastable to ``x`` (without enlarging it), with every
    entry ``>= 1``; gradients flow to both ``x`` and a tensor ``lam``.
    """
    _check_x(x, "lambda_gelu")
    if x.dtype not in (torch.float32, torch.float64):
        # half precision: λ and the gate in float32, only the output is cast back
        return lambda_gelu(x.to(torch.float32), lam).to(x.dtype)
    if isinstance(lam, torch.Tensor):
        if not (
            lam.is_floating_point() or lam.dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
        ):
            raise TypeError(f"lambda_gelu: lam must be a real tensor, got {lam.dtype}")
        _check_same_device(lam, x, "lam")
        lam_x = lam.to(x.dtype)
        _check_lambda_tensor(lam_x, x)
        return _apply(x, lam_x, tuple(lam.shape))
    if isinstance(lam, bool) or not isinstance(lam, Real):
        raise TypeError(f"lambda_gelu: lam must be a real number or a tensor, got {type(lam).__name__}")
    top = torch.finfo(x.dtype).max
    if not lam >= 1 or not math.isfinite(lam) or lam > top:
        raise ValueError(f"λ-GELU needs a finite lam >= 1 (at most {top:.4g}, the largest {x.dtype}), got {lam!r}")
    if lam == 1:
        note_backend("lambda_gelu", "eager")
        return relu_limits(F.gelu, x)  # exactly nn.GELU(), with its limits at ±∞
    return _apply(x, torch.tensor(float(lam), dtype=x.dtype, device=x.device), ())


def lambda_gelu_reference(x: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """The naive form ``x · ½(1 + erf(λx/√2))`` differentiated by autograd (tests, benchmarks)."""
    return x * (0.5 * (1.0 + torch.erf(lam * x * (1.0 / math.sqrt(2.0)))))


# ------------------------------------------------------------------ the s <-> λ reparameterisation
def softplus_inverse(y: torch.Tensor) -> torch.Tensor:
    """``log(e^y − 1)`` for ``y > 0``, written to stay accurate for small and large ``y``."""
    return y + torch.log(-torch.expm1(-y))


def lambda_from_s(s: torch.Tensor, t: float) -> torch.Tensor:
    """``λ = 1 + softplus(s/t)``."""
    return 1.0 + F.softplus(s / t)


def s_from_lambda(lam: float | torch.Tensor, t: float) -> torch.Tensor:
    """``s = t · softplus⁻¹(λ − 1)``; needs λ > 1 (λ = 1 is s = −∞)."""
    lam_t = torch.as_tensor(lam, dtype=torch.float64)
    if not bool(torch.all(lam_t > 1)) or not bool(torch.all(torch.isfinite(lam_t))):
        raise ValueError(
            f"a learnable λ must be finite and > 1 (λ = 1 needs s = -inf), got {lam!r}; use e.g. "
            f"lam_init={LAMBDA_NEAR_ONE} for 'λ ≈ 1', or fixed_lambda=1.0 for exact GELU"
        )
    return t * softplus_inverse(lam_t - 1.0)


def _check_positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _as_shape(value: int | Sequence[int], name: str) -> tuple[int, ...]:
    dims = (value,) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if not dims or any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in dims):
        raise ValueError(f"{name} must be a positive int or a tuple of positive ints, got {value!r}")
    return dims


def _fit_shape(value: torch.Tensor, shape: tuple[int, ...], name: str) -> torch.Tensor:
    """``value`` broadcast to λ's parameter shape (a copy), or a clear ``ValueError``."""
    try:
        return torch.broadcast_to(value, shape).clone()
    except RuntimeError as err:
        raise ValueError(f"{name} of shape {tuple(value.shape)} does not fit λ's shape {shape}") from err


# ------------------------------------------------------------------------------------ module
@register_activation_type
class LambdaGELU(nn.Module):
    """λ-GELU activation ``x Φ(λx)`` with ``λ = 1 + softplus(s/t)``.

    Args:
        t: softplus temperature (> 0); the paper uses 0.1.
        s_init: initial ``s`` (a number, or a tensor of λ's shape). Mutually exclusive with
            ``lam_init``.
        lam_init: initial λ (> 1), converted to ``s = t · softplus⁻¹(λ − 1)``. When neither
            ``s_init`` nor ``lam_init`` is given, λ starts at :data:`LAMBDA_NEAR_ONE` (the
            paper's uniform "λ ≈ 1").
        fixed_lambda: a constant λ >= 1 and no learnable ``s`` (``fixed_lambda=1.0`` is
            ``nn.GELU()`` exactly).
        granularity: ``"layer"`` (one λ, the paper's setting), ``"channel"`` (one λ per channel,
            needs ``num_channels``) or ``"neuron"`` (one λ per element of ``neuron_shape``).
        num_channels: number of channels for ``granularity="channel"``.
        channel_dim: the channel dimension of the input, default 1 (``N×C×…`` as in CNNs). Use
            ``-1`` for channels-last tensors ``(N, …, C)`` such as transformer tokens.
        neuron_shape: for ``granularity="neuron"``: the trailing dims of the input that get
            their own λ, e.g. ``256`` for ``(N, 256)`` features or ``(C, H, W)`` for images.

    Attributes:
        s: the learnable ``nn.Parameter`` (named ``s``, so parameter-group code finds it by
            name), or ``None`` in fixed mode.
        lam: the λ in use (tensor of the parameter shape; 0-dim for a layerwise λ).
    """

    #: Spelled out in a run's key even at its default (helpers.core.registry.canonical_kwargs).
    KEYED_DEFAULTS = ("t",)
    #: What ``lam_init=None`` starts from, so that spelling it out keys the same run.
    IMPLIED_DEFAULTS = {"lam_init": LAMBDA_NEAR_ONE}

    # a tensor s_init, lam_init or fixed_lambda is checked elementwise in the body
    @checked_arguments(
        {
            "t": number(0, low_open=True),
            "s_init": number(optional=True, also=(torch.Tensor,)),
            "lam_init": number(1, low_open=True, optional=True, also=(torch.Tensor,)),
            "fixed_lambda": number(1, optional=True, also=(torch.Tensor,)),
            "granularity": choice(_GRANULARITIES),
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
        granularity: Granularity = "layer",
        num_channels: int | None = None,
        channel_dim: int = 1,
        neuron_shape: int | Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.t = _check_positive("t", t)
        if granularity not in _GRANULARITIES:
            raise ValueError(f"granularity must be one of {_GRANULARITIES}, got {granularity!r}")
        self.granularity: str = granularity
        if isinstance(channel_dim, bool) or not isinstance(channel_dim, int):
            raise ValueError(f"channel_dim must be an int, got {channel_dim!r}")
        self.channel_dim = channel_dim
        if granularity == "layer":
            if num_channels is not None or neuron_shape is not None:
                raise ValueError("num_channels/neuron_shape only apply to granularity 'channel'/'neuron'")
            shape: tuple[int, ...] = ()
        elif granularity == "channel":
            if num_channels is None or neuron_shape is not None:
                raise ValueError("granularity='channel' needs num_channels (and no neuron_shape)")
            shape = _as_shape(num_channels, "num_channels")
            if len(shape) != 1:
                raise ValueError(f"num_channels must be one int, got {num_channels!r}")
        else:
            if neuron_shape is None or num_channels is not None:
                raise ValueError("granularity='neuron' needs neuron_shape (and no num_channels)")
            shape = _as_shape(neuron_shape, "neuron_shape")
        self.param_shape: tuple[int, ...] = shape

        if fixed_lambda is not None:
            if s_init is not None or lam_init is not None:
                raise ValueError("fixed_lambda excludes s_init and lam_init")
            self.register_parameter("s", None)
            self.register_buffer("fixed_lam", self._lambda_value(fixed_lambda, "fixed_lambda"))
        else:
            if s_init is not None and lam_init is not None:
                raise ValueError("give s_init or lam_init, not both")
            if s_init is not None:
                _check_lambda_input(s_init, "s_init")
                s0 = torch.as_tensor(s_init, dtype=torch.float32)
                if not bool(torch.all(torch.isfinite(s0))):
                    raise ValueError(f"s_init must be finite, got {s_init!r}")
                s0 = _fit_shape(s0, shape, "s_init")
                if not bool(torch.all(torch.isfinite(lambda_from_s(s0, self.t)))):
                    raise ValueError(
                        f"s_init={s_init!r} is too large for t={self.t}: s/t or λ = 1 + softplus(s/t) "
                        "overflows float32; use fixed_lambda for a huge constant λ"
                    )
            else:
                if lam_init is not None:
                    _check_lambda_input(lam_init, "lam_init")
                lam0 = LAMBDA_NEAR_ONE if lam_init is None else lam_init
                s0 = _fit_shape(s_from_lambda(lam0, self.t), shape, "lam_init").to(torch.float32)
                if not bool(torch.all(torch.isfinite(lambda_from_s(s0, self.t)))):
                    raise ValueError(
                        f"lam_init={lam_init!r} is too large for t={self.t}: s/t or λ = 1 + softplus(s/t) "
                        "overflows float32; use fixed_lambda for a huge constant λ"
                    )
            self.s = nn.Parameter(s0)
            self.register_buffer("fixed_lam", None)
        # The annealing override lives in buffers so that checkpoints restore it.
        self.register_buffer("lam_override", torch.ones(shape))
        self.register_buffer("override_active", torch.tensor(False))
        # its value as a Python bool: reading the buffer at every forward waits for a GPU's queue
        # (and breaks a torch.compile graph); kept in step by the setters and by loading a state
        self._override_flag = False

    # ---------------------------------------------------------------- λ values and overrides
    def _lambda_value(self, value: float | torch.Tensor, name: str) -> torch.Tensor:
        _check_lambda_input(value, name)
        lam = torch.as_tensor(value, dtype=torch.float32).detach()
        if not bool(torch.all(lam >= 1)) or not bool(torch.all(torch.isfinite(lam))):
            raise ValueError(
                f"{name} must be finite and >= 1 (at most {torch.finfo(torch.float32).max:.4g}, the "
                f"largest float32), got {value!r}"
            )
        return _fit_shape(lam, self.param_shape, name)

    @property
    def is_fixed(self) -> bool:
        """No learnable ``s`` (constructed with ``fixed_lambda``)."""
        return self.s is None

    @property
    def base_lam(self) -> torch.Tensor:
        """λ without the override: ``1 + softplus(s/t)`` or the fixed value."""
        if self.s is None:
            return self.fixed_lam
        return lambda_from_s(self.s, self.t)

    def _overridden(self) -> bool:
        flag = self.__dict__.get("_override_flag")
        if flag is None:  # a module pickled before the flag existed
            flag = self._override_flag = bool(self.override_active)
        return flag

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:  # noqa: ANN001
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        self._override_flag = bool(self.override_active)

    @property
    def lam(self) -> torch.Tensor:
        """The λ used by ``forward`` (the override while one is set)."""
        if self._overridden():
            return self.lam_override
        return self.base_lam

    @torch.no_grad()
    def set_lambda(self, value: float | torch.Tensor) -> None:
        """Set the base λ: ``s = t·softplus⁻¹(λ − 1)`` (needs λ > 1), or the fixed value."""
        if self.s is None:
            self.fixed_lam.copy_(self._lambda_value(value, "λ"))
            return
        _check_lambda_input(value, "λ")
        s = _fit_shape(s_from_lambda(value, self.t), self.param_shape, "λ").to(self.s.dtype)
        if not bool(torch.all(torch.isfinite(s))) or not bool(torch.all(torch.isfinite(lambda_from_s(s, self.t)))):
            raise ValueError(
                f"λ={value!r} is too large for t={self.t}: s/t or λ = 1 + softplus(s/t) overflows "
                f"{self.s.dtype}; use set_fixed_lambda for a huge constant λ"
            )
        self.s.copy_(s)

    @torch.no_grad()
    def set_fixed_lambda(self, value: float | torch.Tensor) -> None:
        """Override λ with ``value`` (>= 1) and freeze ``s`` (``requires_grad=False``, grad cleared)."""
        self.lam_override.copy_(self._lambda_value(value, "fixed λ"))
        self.override_active.fill_(True)
        self._override_flag = True
        if self.s is not None:
            self.s.requires_grad_(False)
            self.s.grad = None  # a stale gradient must not move s in the next optimizer step

    @torch.no_grad()
    def clear_fixed_lambda(self, unfreeze: bool = True) -> None:
        """Drop the override; with ``unfreeze`` make ``s`` learnable again."""
        if not isinstance(unfreeze, bool):
            raise TypeError(f"unfreeze must be a bool, got {type(unfreeze).__name__} ({unfreeze!r})")
        self.override_active.fill_(False)
        self._override_flag = False
        if self.s is not None and unfreeze:
            self.s.requires_grad_(True)

    # ------------------------------------------------------------------------------ forward
    def _view(self, x: torch.Tensor) -> tuple[int, ...]:
        """The shape λ takes to broadcast against ``x`` (and a clear error for a wrong input)."""
        if self.granularity == "layer":
            return ()
        if self.granularity == "channel":
            ndim = x.dim()
            dim = self.channel_dim + ndim if self.channel_dim < 0 else self.channel_dim
            if not 0 <= dim < ndim or x.shape[dim] != self.param_shape[0]:
                raise ValueError(
                    f"LambdaGELU(granularity='channel', num_channels={self.param_shape[0]}, "
                    f"channel_dim={self.channel_dim}) got input of shape {tuple(x.shape)}"
                )
            return (self.param_shape[0],) + (1,) * (ndim - dim - 1)
        k = len(self.param_shape)
        if x.dim() < k or tuple(x.shape[-k:]) != self.param_shape:
            raise ValueError(
                f"LambdaGELU(granularity='neuron', neuron_shape={self.param_shape}) got input of shape "
                f"{tuple(x.shape)}; its trailing dims must equal neuron_shape"
            )
        return self.param_shape

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_x(x, "LambdaGELU")
        if x.dtype not in (torch.float32, torch.float64):
            # Never cast s or λ to x's dtype: an integer x made λ 1 + softplus(int(s)/t) before,
            # and float16 turns λ > 65504 into inf. Compute in float32, cast only the output.
            return self.forward(x.to(torch.float32)).to(x.dtype)
        view = self._view(x)
        _check_same_device(self.s if self.s is not None and not self._overridden() else self.lam, x, "LambdaGELU")
        if self.s is not None and not self._overridden():
            # learnable: the softplus map runs inside the autograd function (fewer graph nodes)
            s = self.s if self.s.dtype == x.dtype else self.s.to(x.dtype)
            return _apply(x, s, view, self.t)
        lam = self.lam
        if host_readable(lam) and bool(torch.all(lam == 1)):  # no read of λ off a GPU or in a graph
            return relu_limits(F.gelu, x)  # λ = 1 exactly: nn.GELU bit for bit, with its limits at ±∞
        return _apply(x, lam.to(x.dtype), view)

    def extra_repr(self) -> str:
        lam = self.lam.detach()
        shown = f"{lam.item():.4g}" if lam.numel() == 1 else f"mean {lam.mean().item():.4g}"
        mode = "fixed" if self.is_fixed else ("overridden" if self._overridden() else "learnable")
        extra = ""
        if self.granularity == "channel":
            extra = f", num_channels={self.param_shape[0]}, channel_dim={self.channel_dim}"
        elif self.granularity == "neuron":
            extra = f", neuron_shape={self.param_shape}"
        return f"t={self.t}, granularity={self.granularity}{extra}, λ={shown} ({mode})"
