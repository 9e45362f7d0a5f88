"""The compute device of a run, its precision and its determinism, chosen in one place.

``REPRO_DEVICE``: ``auto`` (default: the first CUDA GPU if any, else the CPU), ``cpu``, ``cuda``,
``cuda:N`` or ``mps``. A missing device is an error, never a silent fall back to the CPU (a GPU run
should not quietly take a hundred times longer). Under ``torchrun`` each process uses the GPU of its
``LOCAL_RANK``. The device is not part of the cache key; it is recorded in the provenance.

Precision (``float32`` or ``bf16``, part of the key): on the CPU see
:func:`helpers.core.provenance.check_precision`; on CUDA bf16 needs
``torch.cuda.is_bf16_supported()`` (Ampere and later).

Determinism (:func:`set_determinism`): ``torch.use_deterministic_algorithms(True)`` everywhere; on
CUDA also ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` (set before the first cuBLAS call), cuDNN
deterministic without benchmark (autotuning picks kernels by timing), TF32 off. Still
nondeterministic on a GPU:

* ops with no deterministic CUDA kernel raise, unless ``REPRO_DETERMINISTIC_WARN_ONLY=1`` lets them
  run with atomics, whose summation order varies;
* some bf16 autocast reductions use atomics: reproducible only up to bf16 rounding;
* NCCL's all-reduce order depends on topology and version: multi-GPU agrees with one GPU to float32
  rounding;
* Triton generates the fused activation kernels per GPU model.

So a GPU result is compared with a rerun by tolerance (:func:`tools.verify_rerun.float_tolerance`).

``REPRO_COMPILE_MODEL=1`` trains through ``torch.compile(model)`` (:func:`compiled_training_module`):
Inductor fuses each activation (a custom autograd function) with its neighbours. Eagerly a compiled
activation kernel costs 90-150 µs of host time per call (a ResNet-18 step at 2.8x GELU's on an
H200); compiled, λ-GELU runs at 0.78-1.04x and S-ReLU at 0.72-0.79x of GELU compiled, 0.98-1.36x
GELU eager, on an H200 and an H100 (``benchmarks/gpu_compiled_model_measured*.txt``). Off by
default (a minute of compilation; GELU's compiled step was 1.3x slower than eager, unexplained);
recorded as ``compiled_model``, not in the cache key (agrees with eager to float32 rounding).

On a GPU the loss is read once per epoch (:func:`helpers.core.train.fit`): each read drains the queue.

Known kernel bug refused: oneDNN's AVX2 1×1 convolution (``jit_1x1:avx2``) computes the weight
gradient of a strided 1×1 convolution on a channels_last input through a workspace sized for 8 input
channels, and with fewer writes past it (uxlfoundation/oneDNN#6035, open, in torch 2.14.1's oneDNN
3.12): crashes, hangs or wrong gradients. ResNet-18 shortcuts at ``width_mult=0.0625`` have 4. AVX-512
CPUs, nchw inputs and stride 1 are safe (:func:`check_channels_last_convolutions`).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import torch
from torch import nn

from helpers.core import provenance
from helpers.core.env import bool_env
from helpers.core.provenance import PRECISIONS, check_precision
from helpers.core.validation import check_value, integer

#: The variable that picks the device.
DEVICE_ENV = "REPRO_DEVICE"
#: The words it accepts (``cuda:N`` too, with N an index below the GPU count).
DEVICE_WORDS: tuple[str, ...] = ("auto", "cpu", "cuda", "cuda:N", "mps")
#: Set to 1 to run ops that have no deterministic GPU kernel with a warning instead of an error.
WARN_ONLY_ENV = "REPRO_DETERMINISTIC_WARN_ONLY"
#: Set to 1 to train through ``torch.compile(model)`` (see the module docstring).
COMPILE_MODEL_ENV = "REPRO_COMPILE_MODEL"
# Tests trace with "aot_eager", which skips Inductor's code generation.
_COMPILE_BACKEND = "inductor"


class DeviceUnavailable(RuntimeError):
    """The device asked for does not exist on this machine."""


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(spec: str | None = None) -> torch.device:
    """The device of ``spec`` (default: ``REPRO_DEVICE``, else ``auto``); :class:`DeviceUnavailable`
    for a device this machine lacks, ``ValueError`` for an unknown word."""
    source = "argument" if spec is not None else DEVICE_ENV
    raw = spec if spec is not None else os.environ.get(DEVICE_ENV, "auto")
    if not isinstance(raw, str):
        raise TypeError(f"device must be a str such as 'cpu' or 'cuda:0', got {type(raw).__name__}")
    word = raw.strip().lower() or "auto"
    where = f"{DEVICE_ENV}={raw!r}" if source == DEVICE_ENV else f"device {raw!r}"
    if word == "auto":
        return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    if word == "cpu":
        return torch.device("cpu")
    if word == "mps":
        if not _mps_available():
            raise DeviceUnavailable(
                f"{where} asks for Apple's MPS, which this machine lacks; set {DEVICE_ENV}=cpu (or auto)"
            )
        return torch.device("mps")
    if word == "cuda" or word.startswith("cuda:"):
        index_text = word.partition(":")[2]
        if word.startswith("cuda:") and not index_text.isdigit():
            raise ValueError(f"{where}: the GPU index must be a non-negative integer, e.g. cuda:0")
        if not torch.cuda.is_available():
            raise DeviceUnavailable(
                f"{where} asks for a CUDA GPU, but torch sees none on this machine "
                f"(torch {torch.__version__}, CUDA build {torch.version.cuda}); "
                f"set {DEVICE_ENV}=cpu or auto, or run on a machine with a GPU"
            )
        index = int(index_text) if index_text else 0
        count = torch.cuda.device_count()
        if index >= count:
            raise DeviceUnavailable(
                f"{where} asks for GPU {index}, but this machine has {count} "
                f"(cuda:0..cuda:{count - 1}); choose one of those"
            )
        return torch.device("cuda", index)
    raise ValueError(f"{where} is not a device; choose one of {', '.join(DEVICE_WORDS)}")


def local_gpus() -> int:
    """How many GPUs local ``run_many`` workers share: all with ``REPRO_DEVICE`` unset, ``auto`` or
    ``cuda``; 1 for ``cuda:N``; 0 on the CPU or MPS."""
    if resolve_device().type != "cuda":
        return 0
    word = os.environ.get(DEVICE_ENV, "auto").strip().lower() or "auto"
    return torch.cuda.device_count() if word in ("auto", "cuda") else 1


def worker_devices(workers: int) -> tuple[str, ...]:
    """The ``REPRO_DEVICE`` of each local worker: round-robin over several GPUs (:func:`local_gpus`),
    so eight workers do not all train on GPU 0; otherwise empty (each resolves it as we do)."""
    check_value("worker_devices", "workers", workers, integer(1))
    gpus = local_gpus()
    return tuple(f"cuda:{i % gpus}" for i in range(workers)) if gpus > 1 else ()


def bf16_is_native_on(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 natively (a CPU: AMX or AVX512-BF16)."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        return provenance.bf16_is_native()
    return False  # MPS autocast supports float16 only in the torch versions we use


def preferred_precision(device: torch.device) -> str:
    """The precision that fits ``device`` best: bf16 where it runs natively, else float32."""
    return "bf16" if bf16_is_native_on(device) else "float32"


def check_device_precision(precision: str, device: torch.device) -> str:
    """``precision`` if ``device`` can run it, else an error (the CPU: :func:`check_precision`)."""
    if device.type == "cpu":
        return check_precision(precision)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" and not bf16_is_native_on(device):
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
        raise DeviceUnavailable(
            f"this run is configured for bf16, but {name} has no bf16 support; "
            "use precision='float32' (a different run) or another device"
        )
    return precision


def autocast_context(precision: str, device: torch.device | str | None = None) -> contextlib.AbstractContextManager:
    """The autocast of ``precision`` (a no-op for float32) on ``device``'s type (default: ``REPRO_DEVICE``'s)."""
    if precision == "bf16":
        device_type = (resolve_device() if device is None else torch.device(device)).type
        return torch.autocast(device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def set_determinism(device: torch.device | None = None) -> None:
    """Make torch deterministic on ``device`` (see the module docstring for what remains not)."""
    warn_only = bool_env(WARN_ONLY_ENV, False)
    # Before any cuBLAS handle exists; a user's value (e.g. ":16:8") is kept.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    if device is not None and device.type == "cuda":
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


def move_to(batch: Any, device: torch.device) -> Any:
    """``batch`` (a tensor, or a tuple/list of them) on ``device``: the same tensors on the CPU, a
    ``non_blocking`` copy towards a GPU (overlapping compute when the loader pinned memory)."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=device.type == "cuda")
    if isinstance(batch, (tuple, list)):
        return type(batch)(move_to(b, device) for b in batch)
    return batch


def device_provenance(device: torch.device) -> dict[str, Any]:
    """What a result records of its device: type, name, CUDA and cuDNN versions."""
    record: dict[str, Any] = {"device": device.type}
    if device.type == "cuda":
        record["device_name"] = torch.cuda.get_device_name(device)
        record["cuda"] = torch.version.cuda
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        record["cudnn"] = cudnn
    elif device.type == "mps":
        record["device_name"] = "Apple MPS"
    return record


def compile_model_requested() -> bool:
    """Whether ``REPRO_COMPILE_MODEL`` asks to train through ``torch.compile(model)``."""
    return bool_env(COMPILE_MODEL_ENV, False)


def compiled_training_module(module: torch.nn.Module) -> torch.nn.Module:
    """``torch.compile(module)`` when ``REPRO_COMPILE_MODEL=1``, else ``module`` (the model or its DDP
    wrapper; evaluation and checkpoints use the model). ``fallback_random`` makes dropout and
    Flex-Act's Gumbel draws use torch's generator, so compiled agrees with eager to rounding."""
    if not compile_model_requested():
        return module
    options = {"fallback_random": True} if _COMPILE_BACKEND == "inductor" else None
    return torch.compile(module, backend=_COMPILE_BACKEND, options=options)


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
    """Refuse channels_last training on a CPU where oneDNN's AVX2 1×1 convolution corrupts memory
    (see the module docstring). ``capability``: :func:`torch.backends.cpu.get_cpu_capability`."""
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
