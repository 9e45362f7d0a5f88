"""Flex-Act (book/references.bib ``flexact``, Sections 3.2-3.3): a layer that picks its activation
from a candidate set by trainable logits ``θ`` and the Gumbel-softmax trick.

In training it draws **one** sample ``y ~ GumbelSoftmax(θ, τ)`` per forward pass (shared by the batch:
``p_i`` belongs to the layer) and returns ``Σ_j y_j φ_j(h)``; ``hard=True`` makes ``y`` one-hot with the
soft sample's gradient (straight-through). In ``model.eval()``, ``eval_mode="argmax"`` applies only
``φ_{argmax θ}`` (the "chosen activation" whose test errors are reported), ``"expected"`` applies
``Σ_j softmax(θ)_j φ_j(h)``. The paper calls ``π`` probabilities (3.1) and logits (3.2); we train
unconstrained ``θ``, and softmax being shift-invariant, ``θ = log π + const`` reads both ways.
The regulariser (Eqs. 1-4) and its readings: :mod:`helpers.flexact.regulariser`; the basis mixture
in one autograd node: :mod:`helpers.flexact.mixture` (fused kernels: :mod:`helpers.flexact.kernels`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from helpers.core.validation import boolean, check_value, checked_arguments, choice, instance_of, number, number_tuple
from helpers.flexact.mixture import _BasisMixture, _SampledMixture, basis_split, resolve_candidates
from helpers.flexact.regulariser import gradient_norm_regularizer, mean_gradient_norms, pseudo_probabilities

# the regulariser's functions are re-exported: the pages import them with the layer
__all__ = ["DEFAULT_CANDIDATES", "FlexAct", "flexact_modules", "gradient_norm_regularizer"]
__all__ += ["mean_gradient_norms", "pseudo_probabilities"]

DEFAULT_CANDIDATES: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")
# the candidate set and a tensor of init_logits are checked further by resolve_candidates and __init__
_RULES = dict(
    candidates=instance_of(Iterable),
    tau=number(0, low_open=True),
    hard=boolean(),
    eval_mode=choice(("argmax", "expected")),
    init_logits=number_tuple(optional=True, also=(torch.Tensor,)),
)


class FlexAct(nn.Module):
    """Activation chosen among ``candidates`` (registry names, modules, or a ``{name: name_or_module}``
    mapping; default ReLU, Sigmoid, Tanh, LeakyReLU(0.01), Identity as in Section 3) by trainable
    logits (``init_logits``, default zeros) and Gumbel-softmax samples at temperature ``tau``."""

    @checked_arguments(_RULES)
    def __init__(
        self,
        candidates: Sequence[str | nn.Module] | Mapping[str, str | nn.Module] = DEFAULT_CANDIDATES,
        tau: float = 1.0,
        hard: bool = False,
        eval_mode: str = "argmax",
        init_logits: Sequence[float] | torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        names, modules = resolve_candidates(candidates)
        self.names: tuple[str, ...] = names
        self.candidates = nn.ModuleList(modules)
        self.__dict__.update(hard=hard, eval_mode=eval_mode, tau=float(tau))  # checked by _RULES
        if isinstance(init_logits, torch.Tensor) and init_logits.device.type == "meta":
            raise ValueError(
                "init_logits is a meta tensor, which holds no values; give numbers or a tensor on a "
                "real device (move the module to 'meta' afterwards with .to('meta'))"
            )
        init = torch.as_tensor([0.0] * len(names) if init_logits is None else init_logits).clone()
        init = init.to(torch.get_default_dtype())
        if init.shape != (len(names),) or not torch.isfinite(init).all():
            raise ValueError(f"init_logits must be {len(names)} finite numbers, got {init_logits!r}")
        self.logits = nn.Parameter(init)
        # candidates -> the basis mixture's coefficient rows, and the indices mixed the ordinary way
        self._generic, self._rows, self._basis = basis_split(modules)
        self._last_pre_activations: torch.Tensor | None = None
        self._last_weights: torch.Tensor | list[float] | None = None

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("tau", "eval_mode"):  # set again after construction (the hook anneals tau)
            check_value(type(self).__name__, name, value, _RULES[name])
            value = float(value) if name == "tau" else value
        super().__setattr__(name, value)

    def probabilities(self) -> torch.Tensor:
        """Selection probabilities ``softmax(logits)`` (detached)."""
        return torch.softmax(self.logits.detach(), dim=-1)

    def probabilities_dict(self) -> dict[str, float]:
        """``{candidate name: selection probability}``."""
        return dict(zip(self.names, self.probabilities().tolist()))

    @property
    def chosen_index(self) -> int:
        """Index of the most probable candidate (ties: the first)."""
        return int(torch.argmax(self.logits.detach()))

    @property
    def chosen_activation(self) -> str:
        """Name of the most probable candidate: what this layer has picked."""
        return self.names[self.chosen_index]

    def sample_weights(self) -> torch.Tensor:
        """One Gumbel-softmax sample of the mixing weights (torch's global RNG)."""
        return F.gumbel_softmax(self.logits, tau=self.tau, hard=self.hard)

    def mix(self, h: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """``Σ_j weights_j · φ_j(h)`` (one node for the basis candidates, autograd for the rest)."""
        out = _BasisMixture.apply(h, weights, self._basis, self._rows) if self._rows else None
        for i in self._generic:
            term = weights[i].to(h.dtype) * self.candidates[i](h)
            out = term if out is None else out + term
        return out

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if not isinstance(h, torch.Tensor):
            raise TypeError(f"FlexAct expects a tensor, got {type(h).__name__}")
        if not h.is_floating_point():
            raise TypeError(
                f"FlexAct expects a floating-point tensor, got {h.dtype} (the mixture of "
                "activations is not defined for integer tensors; convert with h.float())"
            )
        if h.dtype not in (torch.float32, torch.float64):
            # half precision: mix in float32 and cast only the output back (a float16 weight has 3 digits)
            return self.forward(h.to(torch.float32)).to(h.dtype)
        if torch.compiler.is_compiling() and (self.training or self.eval_mode != "argmax"):
            # plain tensor ops for torch.compile: the fused nodes read the weights on the host, which
            # Dynamo cannot trace (each draw a new constant: a recompile per step); the draws are
            # F.gumbel_softmax's as in eager mode (Inductor's fallback_random, set by compiled_training_module)
            weights = self.sample_weights() if self.training else torch.softmax(self.logits, dim=-1)
            if self.training:
                self._last_pre_activations = h
            self._last_weights = weights.detach()
            return torch.stack([weights[i].to(h.dtype) * c(h) for i, c in enumerate(self.candidates)]).sum(0)
        if not self.training:
            if self.eval_mode == "argmax":
                return self.candidates[self.chosen_index](h)
            weights = torch.softmax(self.logits, dim=-1)
        else:
            # The regulariser needs the training batch's pre-activations (evaluation passes keep the
            # last one). Written through __dict__: nn.Module.__setattr__ costs microseconds.
            self.__dict__["_last_pre_activations"] = h
            if self._rows and not self._generic:  # sampling and mixing in one node
                box: list[list[float]] = []
                out = _SampledMixture.apply(h, self.logits, self.tau, self.hard, self._basis, self._rows, box)
                self.__dict__["_last_weights"] = box[0]  # made a tensor when asked for
                return out
            weights = self.sample_weights()
        self.__dict__["_last_weights"] = weights.detach()
        return self.mix(h, weights)

    @property
    def last_weights(self) -> torch.Tensor | None:
        """The mixing weights of the last forward pass (detached; one-hot for ``hard=True`` in
        training), or None before the first one."""
        w = self._last_weights
        if isinstance(w, list):
            w = self.__dict__["_last_weights"] = torch.tensor(w, dtype=self.logits.dtype, device=self.logits.device)
        return w

    @property
    def last_pre_activations(self) -> torch.Tensor | None:
        """The input of the last *training* forward pass (kept for the regulariser), or None."""
        return self._last_pre_activations

    def _require_pre_activations(self) -> torch.Tensor:
        if self._last_pre_activations is None:
            raise RuntimeError("FlexAct has no stored pre-activations: run a training forward pass first")
        return self._last_pre_activations

    def mean_gradient_norms(self, *, detach: bool = True) -> torch.Tensor:
        """``ḡ`` (Eq. 2) at the last training forward's pre-activations."""
        return mean_gradient_norms(self._require_pre_activations(), self.candidates, detach=detach)

    def pseudo_probabilities(self, lam: float) -> torch.Tensor:
        """``p̃ = softmax(−ḡ/λ)`` (Eq. 2) at the last training forward's pre-activations (detached)."""
        return pseudo_probabilities(self.mean_gradient_norms(), lam)

    def regularizer(self, alpha: float, lam: float, *, detach: bool = True, direction: str = "forward") -> torch.Tensor:
        """``α·KL(p̃ ‖ softmax(logits))`` (Eqs. 3-4; ``"reverse"``: ``α·KL(softmax(logits) ‖ p̃)``) at the
        last training forward's pre-activations (:func:`~helpers.flexact.regulariser.gradient_norm_regularizer`)."""
        h, lg = self._require_pre_activations(), self.logits
        return gradient_norm_regularizer(h, self.candidates, lg, alpha, lam, detach=detach, direction=direction)

    def __getstate__(self) -> dict:
        # A stored non-leaf tensor cannot be deep-copied or pickled; it is scratch state anyway.
        state = super().__getstate__()
        state["_last_pre_activations"] = None
        return state

    def extra_repr(self) -> str:
        return f"candidates={list(self.names)}, tau={self.tau:g}, hard={self.hard}, eval_mode={self.eval_mode!r}"


def flexact_modules(model: nn.Module) -> dict[str, FlexAct]:
    """Every :class:`FlexAct` in ``model`` by qualified name (``"flexact"`` for the model itself)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return {(name or "flexact"): m for name, m in model.named_modules() if isinstance(m, FlexAct)}
