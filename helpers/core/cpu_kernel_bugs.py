"""Known bugs of the CPU kernels under torch, refused with a clear error before they corrupt a run.

oneDNN's AVX2 1×1 convolution (``jit_1x1:avx2``) computes the weight gradient of a strided 1×1
convolution on a channels_last (nhwc) input through a workspace sized for 8 input channels: with
fewer, it writes past the workspace (uxlfoundation/oneDNN#6035, open, in torch 2.14.1's oneDNN
3.12). The process then crashes ("double free or corruption"), hangs, or trains on wrong
gradients, varying from run to run. ResNet shortcuts are such convolutions: ResNet-18 at
``width_mult=0.0625`` has 4 input channels there. CPUs with AVX-512 take other kernels, and
contiguous (nchw) inputs and stride 1 do not use the workspace.

This module is part of the core: it imports no method module.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["AVX2_1X1_MIN_CHANNELS", "check_channels_last_convolutions"]

#: The input channels (per group) below which a strided 1×1 channels_last convolution is unsafe on
#: a CPU without AVX-512: the AVX2 kernel's channel block.
AVX2_1X1_MIN_CHANNELS: int = 8


def _unsafe(module: nn.Module) -> bool:
    return (
        isinstance(module, nn.Conv2d)
        and tuple(module.kernel_size) == (1, 1)
        and tuple(module.stride) != (1, 1)
        and module.in_channels // module.groups < AVX2_1X1_MIN_CHANNELS
    )


def check_channels_last_convolutions(model: nn.Module, device: torch.device, capability: str | None = None) -> None:
    """Refuse to train ``model`` in channels_last order on a CPU where oneDNN's AVX2 1×1
    convolution would corrupt memory (see the module docstring); nothing elsewhere.

    ``capability`` is :func:`torch.backends.cpu.get_cpu_capability` (given by tests)."""
    capability = torch.backends.cpu.get_cpu_capability() if capability is None else capability
    if device.type != "cpu" or capability.startswith("AVX512"):
        return
    bad = [name for name, module in model.named_modules() if _unsafe(module)]
    if bad:
        channels = min(m.in_channels // m.groups for m in model.modules() if _unsafe(m))
        raise ValueError(
            f"channels_last=True on this CPU ({capability}) would train {len(bad)} strided 1x1 "
            f"convolution(s) with {channels} input channels (fewer than {AVX2_1X1_MIN_CHANNELS}; first: "
            f"{bad[0]!r}), whose weight gradient oneDNN's AVX2 kernel computes past its workspace "
            "(uxlfoundation/oneDNN#6035): the run would crash, hang or train on wrong gradients. "
            "Use channels_last=False here, a wider model, or a CPU with AVX-512."
        )
