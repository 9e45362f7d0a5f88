"""Flex-Act: a layer that picks its activation from a candidate set with the Gumbel-softmax trick.

Paper: Flex-Act (book/references.bib ``flexact``), Sections 3.2-3.3. The layer holds one vector
of trainable logits ``θ`` (one entry per candidate); during training it draws **one**
Gumbel-softmax sample ``y ~ GumbelSoftmax(θ, τ)`` per forward pass (shared by every element of the
batch, as in Section 3.2, where ``p_i`` belongs to the layer, not to a sample) and returns the
convex combination ``Σ_j y_j φ_j(h)``. With ``hard=True`` the sample is one-hot in the forward pass
and the soft sample's gradient is used in the backward pass (straight-through estimator).

In ``model.eval()`` the layer is deterministic: ``eval_mode="argmax"`` (default) applies only the
most probable candidate ``φ_{argmax θ}`` (this is what "the chosen activation" means and what the
reported test errors measure); ``eval_mode="expected"`` applies ``Σ_j softmax(θ)_j φ_j(h)``.

The gradient-norm regulariser (Eqs. 1-4) is :func:`gradient_norm_regularizer`; a layer exposes it
as :meth:`FlexAct.regularizer`, computed from the pre-activations of its last training forward pass.
Readings we chose where the paper is ambiguous or inconsistent (the notebook lists them too):

1. ``p`` in Eq. (4) is ``softmax(θ)``, the distribution the Gumbel sample is drawn from, not the
   noisy sample itself: a hard (one-hot) sample would make ``log p = -inf`` and the KL infinite,
   and a soft sample would make the target of the regulariser random.
2. The KL direction is the one written, ``KL(p̃ ‖ p) = Σ_k p̃_k log(p̃_k / p_k)`` (p̃ is the
   target), so ``∂(α KL)/∂θ = α (softmax(θ) − p̃)``. The other direction, ``KL(p ‖ p̃)``, is
   available as ``direction="reverse"`` (:func:`kl_to_pseudo_probabilities`), for the synthetic
   study's readings sweep.
3. "Gradient norm" (Eq. 1): the text says "with respect to the input" of the activation and the
   formula writes ``∇_x φ_i(h)``; we differentiate w.r.t. the pre-activation ``h`` (not the
   network input ``x``). Because ``φ_i`` acts elementwise, that gradient is the vector
   ``φ_i'(h_n)`` of sample ``n``; ``g_{i,n} = ‖φ_i'(h_n)‖₂`` over the features of the sample and
   ``ḡ_i`` is its mean over the batch (Eq. 2's "average gradient norm over the batch"). The L2
   norm grows like ``sqrt(width)``, so a good ``λ`` depends on the layer width; the paper gives
   no value of ``λ``.
4. ``ḡ`` is detached by default (``p̃`` is called a *pseudo-label*, i.e. a target): the
   regulariser then trains only the logits. ``detach=False`` lets it also act on the weights
   that produce ``h`` (through ``φ''``).
5. The outer sum of Eq. (4) runs over the ``N`` Flex-Act layers (the index ``i`` is overloaded:
   candidate index in Eqs. 1-2, layer index in Eq. 4; ``K`` and ``p`` both name the number of
   candidates). :class:`FlexActHook` sums ``α·KL`` over every Flex-Act module of a model.
6. Section 3.1 treats ``π`` as probabilities (samples use ``log π``), Section 3.2 calls ``π``
   "the logits" and still writes ``GumbelSoftmax(log π, τ)``. We train unconstrained logits
   ``θ``; since softmax is shift-invariant, ``θ = log π + const`` and both readings agree.

Speed: the candidates ``relu``, ``leaky_relu``, ``sigmoid``, ``tanh`` and ``identity`` are spanned
by the basis ``{relu, sigmoid, tanh, identity}`` (``leaky_relu_k = (1-k)·relu + k·identity``), so the
mixture is one custom autograd node instead of one autograd graph per candidate; adding a
candidate that maps onto the basis costs nothing extra. In training, when every candidate maps
onto the basis, the Gumbel-softmax sample is drawn inside that node too (:class:`_SampledMixture`:
same noise draws as ``F.gumbel_softmax``, softmax over the few candidates in Python floats), which
saves a dozen tiny tensor ops per call. Large float32 CPU tensors go through the fused kernels of
:mod:`helpers.flexact.kernels` (TorchInductor: one pass forward, one pass backward for ``∂L/∂h``
and the four basis sums, only ``h`` saved), as does the regulariser's :func:`mean_gradient_norms`
for basis candidates (one pass instead of one derivative and one norm per candidate). Everything
else (float64, e.g. for ``gradcheck``; other devices; small tensors; ``REPRO_KERNELS=eager``)
uses eager ATen kernels; the two agree to float32 rounding, not bit for bit. Other candidates
(``lambda_gelu``, ``srelu``, any ``nn.Module``) are added to the basis mixture the ordinary way. In eval/argmax mode
only the chosen candidate runs. ``benchmarks/activations.py`` measures the cost. Inside
``torch.compile(model)`` the layer is plain tensor ops (``F.gumbel_softmax`` and the weighted sum
of the candidates), which Dynamo traces into the model's graph and Inductor fuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from helpers.core.registry import get_activation, register_activation_type
from helpers.core.validation import boolean, checked_arguments, choice, instance_of, number, number_tuple
from helpers.flexact.mixture import BASIS_ROWS, _BasisMixture, _SampledMixture
from helpers.flexact.regulariser import (
    _check_alpha,
    _check_positive,
    gradient_norm_regularizer,
    kl_to_pseudo_probabilities,
    mean_gradient_norms,
    pseudo_probabilities,
)

__all__ = [
    "DEFAULT_CANDIDATES",
    "FlexAct",
    "flexact_modules",
    "gradient_norm_regularizer",
    "kl_to_pseudo_probabilities",
    "mean_gradient_norms",
    "pseudo_probabilities",
]

DEFAULT_CANDIDATES: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")
EvalMode = Literal["argmax", "expected"]
_EVAL_MODES: tuple[str, ...] = ("argmax", "expected")


def _resolve_candidates(
    candidates: Sequence[str | nn.Module] | Mapping[str, str | nn.Module],
) -> tuple[tuple[str, ...], list[nn.Module]]:
    """Names and modules of the candidate set (names resolved by the activation registry)."""
    if isinstance(candidates, (str, nn.Module)):
        raise TypeError(
            "candidates must be a sequence (or name->activation mapping) of activation names or "
            f"modules, got a single {type(candidates).__name__}; wrap it in a tuple"
        )
    if isinstance(candidates, Mapping):
        items = list(candidates.items())
    elif isinstance(candidates, Iterable):
        items = [(None, c) for c in candidates]
    else:
        raise TypeError(f"candidates must be a sequence or mapping, got {type(candidates).__name__}")
    if not items:
        raise ValueError("FlexAct needs at least one candidate activation, got an empty set")
    names: list[str] = []
    modules: list[nn.Module] = []
    for key, cand in items:
        if isinstance(cand, str):
            module = get_activation(cand)  # ValueError naming the registered ones if unknown
            if cand != cand.lower():  # "RELU" builds ReLU too, but would key another run
                raise ValueError(f"FlexAct candidate {cand!r} is not a registered name; use {cand.lower()!r}")
            name = cand
        elif isinstance(cand, nn.Module):
            module = cand
            name = type(cand).__name__.lower()
        else:
            raise TypeError(f"a candidate must be an activation name or an nn.Module, got {type(cand).__name__}")
        if key is not None:
            if not isinstance(key, str) or not key:
                raise TypeError(f"candidate names must be non-empty strings, got {key!r}")
            name = key
        if getattr(module, "inplace", False):
            # The candidates share one input tensor; an in-place one would overwrite it.
            raise ValueError(f"candidate {name!r} is in-place; build it with inplace=False")
        names.append(name)
        modules.append(module)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(
            f"duplicate candidate names {duplicates}; pass a mapping such as "
            "{'srelu_0.1': SReLU(0.1), 'srelu_0.01': SReLU(0.01)} to name them apart"
        )
    return tuple(names), modules


def _basis_coordinates(module: nn.Module) -> dict[str, float] | None:
    """Coordinates of a candidate in the basis {relu, sigmoid, tanh, identity}, or None.

    Exact types only: a subclass may change the function.
    """
    kind = type(module)
    if kind is nn.ReLU:
        return {"relu": 1.0}
    if kind is nn.Sigmoid:
        return {"sigmoid": 1.0}
    if kind is nn.Tanh:
        return {"tanh": 1.0}
    if kind is nn.Identity:
        return {"identity": 1.0}
    if kind is nn.LeakyReLU:
        k = float(module.negative_slope)
        return {"relu": 1.0 - k, "identity": k}  # max(h,0) + k·min(h,0) = (1-k)·relu(h) + k·h
    return None


# --------------------------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------------------------


class FlexAct(nn.Module):
    """Activation chosen among ``candidates`` by trainable logits and Gumbel-softmax sampling.

    Args:
        candidates: activation names of :func:`helpers.core.registry.get_activation` (e.g. ``"relu"``,
            ``"lambda_gelu"``, ``"srelu"``), ``nn.Module`` instances, or a ``{name: name_or_module}``
            mapping. Default: ReLU, Sigmoid, Tanh, LeakyReLU (slope 0.01), Identity (Section 3).
        tau: Gumbel-softmax temperature (> 0); a :class:`TemperatureSchedule` driven by
            :class:`FlexActHook` anneals it during training.
        hard: straight-through one-hot samples in training (forward uses a single candidate).
        eval_mode: ``"argmax"`` (default, apply only the most probable candidate) or
            ``"expected"`` (mix with ``softmax(logits)``) when the module is in eval mode.
        init_logits: optional initial logits (default zeros: uniform selection probabilities).

    After training, :meth:`probabilities` and :attr:`chosen_activation` say what was picked.
    """

    # the candidate set and a tensor of init_logits are checked further in the body
    @checked_arguments(
        {
            "candidates": instance_of(Iterable),
            "tau": number(0, low_open=True),
            "hard": boolean(),
            "eval_mode": choice(_EVAL_MODES),
            "init_logits": number_tuple(optional=True, also=(torch.Tensor,)),
        }
    )
    def __init__(
        self,
        candidates: Sequence[str | nn.Module] | Mapping[str, str | nn.Module] = DEFAULT_CANDIDATES,
        tau: float = 1.0,
        hard: bool = False,
        eval_mode: EvalMode = "argmax",
        init_logits: Sequence[float] | torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        names, modules = _resolve_candidates(candidates)
        self.names: tuple[str, ...] = names
        self.candidates = nn.ModuleList(modules)
        self.hard = hard
        self.eval_mode = eval_mode  # validated by the property setters
        self.tau = tau
        k = len(names)
        if init_logits is None:
            init = torch.zeros(k)
        else:
            if isinstance(init_logits, torch.Tensor) and init_logits.device.type == "meta":
                raise ValueError(
                    "init_logits is a meta tensor, which holds no values; give numbers or a tensor on a "
                    "real device (move the module to 'meta' afterwards with .to('meta'))"
                )
            init = torch.as_tensor(init_logits, dtype=torch.get_default_dtype()).clone()
            if init.shape != (k,) or not torch.isfinite(init).all():
                raise ValueError(f"init_logits must be {k} finite numbers, got {init_logits!r}")
        self.logits = nn.Parameter(init)

        # Split candidates into the fused basis part and the generic rest.
        coords = [_basis_coordinates(m) for m in modules]
        self._generic: tuple[int, ...] = tuple(i for i, c in enumerate(coords) if c is None)
        fused = [i for i, c in enumerate(coords) if c is not None]
        rows = tuple(r for r in BASIS_ROWS if any(r in coords[i] for i in fused))
        self._rows: tuple[str, ...] = rows
        # (len(rows), K) map from selection weights to basis coefficients, as exact Python floats
        # (the mixture forms the coefficients on the host: fewer tiny tensor ops per call).
        basis = [[0.0] * k for _ in rows]
        for i in fused:
            for name, value in coords[i].items():
                basis[rows.index(name)][i] = value
        self._basis: tuple[tuple[float, ...], ...] = tuple(tuple(row) for row in basis)
        self._has_fused = bool(fused)
        self._last_pre_activations: torch.Tensor | None = None
        self._last_weights: torch.Tensor | list[float] | None = None

    # -- temperature ------------------------------------------------------------------------
    @property
    def tau(self) -> float:
        """Gumbel-softmax temperature (> 0)."""
        return self._tau

    @tau.setter
    def tau(self, value: float) -> None:
        self._tau = _check_positive("tau (Gumbel-softmax temperature)", value)

    @property
    def eval_mode(self) -> str:
        """What eval mode applies: ``"argmax"`` (the chosen candidate) or ``"expected"``."""
        return self._eval_mode

    @eval_mode.setter
    def eval_mode(self, value: str) -> None:
        if value not in _EVAL_MODES:
            raise ValueError(f"eval_mode must be one of {_EVAL_MODES}, got {value!r}")
        self._eval_mode = value

    # -- selection --------------------------------------------------------------------------
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
        return F.gumbel_softmax(self.logits, tau=self._tau, hard=self.hard)

    # -- forward ----------------------------------------------------------------------------
    def mix(self, h: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """``Σ_j weights_j · φ_j(h)`` (fused for basis candidates, autograd for the rest)."""
        out = None
        if self._has_fused:
            out = _BasisMixture.apply(h, weights, self._basis, self._rows)
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
            # half precision: the mixing weights and candidates run in float32, and only the
            # output is cast back (a float16 weight has 3 significant digits)
            return self.forward(h.to(torch.float32)).to(h.dtype)
        if torch.compiler.is_compiling() and (self.training or self.eval_mode != "argmax"):
            return self._traced_forward(h)
        if not self.training:
            if self.eval_mode == "argmax":
                return self.candidates[self.chosen_index](h)
            weights = torch.softmax(self.logits, dim=-1)
        else:
            # Kept for the regulariser, which needs the training batch's pre-activations
            # (evaluation passes do not overwrite it). Plain attributes are written through
            # __dict__: nn.Module.__setattr__ costs microseconds, which count at 10^4 elements.
            self.__dict__["_last_pre_activations"] = h
            if self._has_fused and not self._generic:
                # sampling and mixing in one autograd node (see _SampledMixture)
                box: list[list[float]] = []
                out = _SampledMixture.apply(h, self.logits, self._tau, self.hard, self._basis, self._rows, box)
                self.__dict__["_last_weights"] = box[0]  # made a tensor when asked for
                return out
            weights = self.sample_weights()
        self.__dict__["_last_weights"] = weights.detach()
        return self.mix(h, weights)

    def _traced_forward(self, h: torch.Tensor) -> torch.Tensor:
        """The same mixture in plain tensor ops, for ``torch.compile(model)`` to trace into the
        model's graph. The fused nodes form their coefficients in Python floats, a host read of
        the weights that Dynamo cannot trace: the graph would break there, and since every draw
        is a new constant, recompile at every step until its recompile limit. The draws are
        ``F.gumbel_softmax``'s, which the fused node copies, so a compiled run draws as an eager
        one (with Inductor's ``fallback_random``, which :func:`helpers.core.device.compiled_training_module` sets)."""
        weights = self.sample_weights() if self.training else torch.softmax(self.logits, dim=-1)
        if self.training:
            self._last_pre_activations = h
        self._last_weights = weights.detach()
        terms = [weights[i].to(h.dtype) * candidate(h) for i, candidate in enumerate(self.candidates)]
        return torch.stack(terms).sum(0)

    @property
    def last_weights(self) -> torch.Tensor | None:
        """The mixing weights of the last forward pass (detached; one-hot for ``hard=True`` in
        training), or None before the first one."""
        w = self._last_weights
        if isinstance(w, list):
            w = torch.tensor(w, dtype=self.logits.dtype, device=self.logits.device)
            self.__dict__["_last_weights"] = w
        return w

    # -- regulariser ------------------------------------------------------------------------
    @property
    def last_pre_activations(self) -> torch.Tensor | None:
        """The input of the last *training* forward pass (kept for the regulariser), or None."""
        return self._last_pre_activations

    def mean_gradient_norms(self, *, detach: bool = True) -> torch.Tensor:
        """``ḡ`` (Eq. 2) at the last forward's pre-activations."""
        return mean_gradient_norms(self._require_pre_activations(), self.candidates, detach=detach)

    def pseudo_probabilities(self, lam: float) -> torch.Tensor:
        """``p̃ = softmax(−ḡ/λ)`` (Eq. 2) at the last forward's pre-activations (detached)."""
        return pseudo_probabilities(self.mean_gradient_norms(), lam)

    def regularizer(self, alpha: float, lam: float, *, detach: bool = True, direction: str = "forward") -> torch.Tensor:
        """``α·KL(p̃ ‖ softmax(logits))`` (Eqs. 3-4) at the last forward's pre-activations
        (``direction="reverse"``: ``α·KL(softmax(logits) ‖ p̃)``)."""
        alpha = _check_alpha(alpha)
        _check_positive("lam (λ, the softmax scale of Eq. 2)", lam)
        if alpha == 0.0:
            return self.logits.new_zeros(())
        return gradient_norm_regularizer(
            self._require_pre_activations(),
            self.candidates,
            self.logits,
            alpha,
            lam,
            detach=detach,
            direction=direction,
        )

    def _require_pre_activations(self) -> torch.Tensor:
        if self._last_pre_activations is None:
            raise RuntimeError(
                "FlexAct has no stored pre-activations: run a forward pass before asking for the "
                "regulariser or gradient norms"
            )
        return self._last_pre_activations

    def clear_pre_activations(self) -> None:
        """Drop the stored input (frees memory; the next forward stores a new one)."""
        self._last_pre_activations = None

    # -- copying / printing -----------------------------------------------------------------
    def __getstate__(self) -> dict:
        # A stored non-leaf tensor cannot be deep-copied or pickled; it is scratch state anyway.
        state = super().__getstate__()
        state["_last_pre_activations"] = None
        return state

    def extra_repr(self) -> str:
        return f"candidates={list(self.names)}, tau={self._tau:g}, hard={self.hard}, eval_mode={self.eval_mode!r}"


register_activation_type(FlexAct)


def flexact_modules(model: nn.Module) -> dict[str, FlexAct]:
    """Every :class:`FlexAct` in ``model`` by qualified name (``"flexact"`` for the model itself)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return {(name or "flexact"): m for name, m in model.named_modules() if isinstance(m, FlexAct)}
