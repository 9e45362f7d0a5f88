"""Post-training static int8 quantisation with PyTorch's own tooling.

API: FX graph mode post-training static quantisation, ``torch.ao.quantization.quantize_fx``
(``prepare_fx`` → calibration → ``convert_fx``) with ``get_default_qconfig_mapping("x86")`` and the
``x86`` quantized engine (fbgemm/oneDNN kernels): activations quint8 per tensor (histogram
observer, reduced range), weights qint8 per output channel. In this torch (2.14) the PT2E flow
(``prepare_pt2e``/``X86InductorQuantizer``) has left ``torch.ao`` for the separate ``torchao``
package; the FX flow is still in torch and runs real int8 kernels without compilation.

What is quantised (``scope``):

* ``"model"``: the whole network, traced by ``torch.fx`` (MLP, ResNet). Linear/Conv layers
  followed by ReLU are fused into one int8 op (``LinearReLU``, ``ConvReLU2d``; BatchNorm folded
  into the convolution); the x86 configuration has no int8 GELU, so a GELU network keeps each
  GELU in float32 between a dequantise and a quantise;
* ``"feedforward"``: each transformer feed-forward block (Linear → activation → Linear) on its
  own, since the attention code does not trace (it unpacks tensor shapes); attention, LayerNorm,
  embeddings and the head stay float32.

The book's own activation modules (λ-GELU, S-ReLU) are not traced into (their input checks do
not take fx proxies) and have no int8 kernel: they stay float32 like GELU, so a smooth network
before its swap is quantised around them.

:func:`module_summary` lists which module types ended up int8 and which stayed float.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator

import torch
from torch import nn

from helpers.core.models import FeedForward
from helpers.core.registry import LIMITED_ACTIVATIONS, activation_types

QUANT_API = (
    "torch.ao.quantization.quantize_fx.prepare_fx/convert_fx, post-training static, get_default_qconfig_mapping('x86')"
)
ENGINE = "x86"
SCOPES: tuple[str, ...] = ("model", "feedforward")


@contextlib.contextmanager
def quantized_engine(name: str = ENGINE) -> Iterator[None]:
    """Run the block with ``torch.backends.quantized.engine = name`` and torch's deterministic-
    algorithms check off (both restored afterwards).

    The check is off because torch flags ``quantized_resize_cpu_`` (the resize of an int8 output
    buffer) as having no deterministic implementation, which stops every quantized Linear under
    :func:`helpers.core.runtime.seed_everything`. The int8 kernels themselves are deterministic on
    one machine: a test runs a quantized model twice and compares bit for bit.
    """
    if name not in torch.backends.quantized.supported_engines:
        raise ValueError(
            f"quantized engine {name!r} is not supported here ({', '.join(torch.backends.quantized.supported_engines)})"
        )
    before = torch.backends.quantized.engine
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.backends.quantized.engine = name
    torch.use_deterministic_algorithms(False)
    try:
        yield
    finally:
        torch.backends.quantized.engine = before
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # torch.ao.quantization warns on import that it will move to torchao, and every observer
    # warns that reduce_range is deprecated; both are about future versions, not this result.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.ao")
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*torch\.ao\.quantization.*")
        warnings.filterwarnings("ignore", category=UserWarning, message=r".*reduce_range.*")
        warnings.filterwarnings("ignore", category=UserWarning, message=r".*quant_min and quant_max.*")
        warnings.filterwarnings("ignore", category=UserWarning, message=r".*quantized tensor creation functions.*")
        yield


def _inputs(batch: object) -> torch.Tensor:
    return batch[0] if isinstance(batch, (tuple, list)) else batch  # type: ignore[index,return-value]


@torch.no_grad()
def quantize_int8(model: nn.Module, calibration: Iterable, *, scope: str = "model") -> nn.Module:
    """An int8 copy of ``model`` (``model`` itself is untouched), calibrated on ``calibration``.

    ``calibration`` yields input batches (or ``(inputs, targets)``), e.g. training images. The
    copy runs on the x86 engine (:func:`quantized_engine`; keep it active while evaluating).
    Raises ``ValueError`` for an unknown scope, an empty calibration set, or a scope with
    nothing to quantise.
    """
    from torch.ao.quantization import get_default_qconfig_mapping  # lazy: slow import that warns
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    from torch.ao.quantization.fx.custom_config import PrepareCustomConfig  # lazy: as above

    custom = PrepareCustomConfig().set_non_traceable_module_classes(
        [t for t in activation_types() if not t.__module__.startswith("torch.")]
    )
    batches = [_inputs(b) for b in calibration]
    if not batches:
        raise ValueError("calibration is empty: static quantisation needs calibration batches")
    float_model = copy.deepcopy(model).eval()
    for m in float_model.modules():  # torch's own classes, as FX quantisation has patterns for them
        if type(m) in LIMITED_ACTIVATIONS:
            m.__class__ = type(m).__mro__[1]  # the torch class it extends only with limits at ±∞
    with _quiet(), quantized_engine():
        qconfig = get_default_qconfig_mapping(ENGINE)
        if scope == "model":
            prepared = prepare_fx(float_model, qconfig, (batches[0],), prepare_custom_config=custom)
            for x in batches:
                prepared(x)
            return convert_fx(prepared)
        blocks = [(name, m) for name, m in float_model.named_modules() if isinstance(m, FeedForward)]
        if not blocks:
            raise ValueError("scope 'feedforward' needs FeedForward blocks; this model has none")
        captured: dict[str, torch.Tensor] = {}
        handles = [
            m.register_forward_pre_hook(
                lambda mod, args, name=name: captured.setdefault(name, args[0].detach().clone())
            )
            for name, m in blocks
        ]
        float_model(batches[0])  # one input per block, to trace it with
        for h in handles:
            h.remove()
        for name, m in blocks:
            _set_submodule(float_model, name, prepare_fx(m, qconfig, (captured[name],), prepare_custom_config=custom))
        for x in batches:
            float_model(x)
        for name, _ in blocks:
            _set_submodule(float_model, name, convert_fx(float_model.get_submodule(name)))
        return float_model


def _set_submodule(model: nn.Module, name: str, module: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, module)


def module_summary(model: nn.Module) -> dict[str, dict[str, int]]:
    """``{"int8": {type: count}, "float": {type: count}}`` of the modules that compute: quantized
    modules (``torch.ao.nn.quantized``, counted whole) and float leaves (dropout, identities and
    containers left out)."""
    int8: Counter[str] = Counter()
    flt: Counter[str] = Counter()
    skip = (nn.Dropout, nn.Identity, nn.Sequential, nn.ModuleList)
    inside: list[str] = []
    for name, m in model.named_modules():
        if any(name.startswith(p + ".") for p in inside):
            continue
        kind, cls = type(m).__module__, type(m).__name__
        if kind.startswith("torch.ao.nn.quantized") or kind.startswith("torch.ao.nn.intrinsic.quantized"):
            inside.append(name)
            if cls not in ("Quantize", "DeQuantize", "Dropout"):
                int8[cls] += 1
        elif not list(m.children()) and not isinstance(m, skip):
            flt[cls] += 1
    return {"int8": dict(sorted(int8.items())), "float": dict(sorted(flt.items()))}
