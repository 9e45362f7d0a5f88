"""Where and how a result was computed: CPU, torch, threads, precision and activation backends.

Float32 training is bit-reproducible only on the same kind of machine: oneDNN and ATen pick other
kernels on AVX-512/AMX than on AVX2, the thread count splits reductions, and TorchInductor's fused
activation kernels are CPU-specific. So every result carries a ``provenance`` record
(:func:`run_provenance`), and :mod:`tools.verify_rerun` compares two runs exactly only when the
fields that pick those kernels agree.

Backends are recorded as *used*: each activation's dispatch calls :func:`note_backend` with
``"compiled"`` or ``"eager"`` (older results record ``"native"``, the C kernels those replaced);
:func:`recording` collects a run's (it can use two: fused for large tensors, eager for small).
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from helpers.core.env import bool_env

#: The compute precisions a run can be configured with. ``bf16`` means
#: ``torch.autocast("cpu", dtype=torch.bfloat16)`` around the forward pass and loss.
PRECISIONS: tuple[str, ...] = ("float32", "bf16")

#: What a field absent from a record means: results written before devices were recorded ran in
#: one process on the CPU, so they compare equal to a CPU rerun in those fields.
FIELD_DEFAULTS: dict[str, Any] = {"device": "cpu", "device_name": None, "cuda": None, "cudnn": None, "world_size": 1}

#: Lets a bf16 run train on a CPU without native bf16 (correct, but 10-17x slower than float32).
ALLOW_EMULATED_BF16_ENV = "REPRO_ALLOW_EMULATED_BF16"


class PrecisionUnavailable(RuntimeError):
    """A run asks for a precision this CPU cannot run natively."""


# ---------------------------------------------------------------------------------- the machine
@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's marketing name (``model name`` of ``/proc/cpuinfo``), else what platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "CPU part") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_capability() -> str:
    """The vector ISA ATen dispatches to (``torch.backends.cpu.get_cpu_capability()``:
    e.g. ``AVX512``, ``AVX2``, ``DEFAULT``)."""
    return str(torch.backends.cpu.get_cpu_capability())


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def bf16_is_native() -> bool:
    """True when this CPU computes bfloat16 in hardware (AMX or AVX512-BF16 on x86, BF16 on ARM);
    emulated bf16 autocast is 10-17x slower than float32 (a ResNet step on an AVX2-only EPYC)."""
    cpu = torch.cpu
    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        fn = getattr(cpu, probe, None)
        if fn is not None and fn():
            return True
    return platform.machine() in ("aarch64", "arm64") and "bf16" in _cpu_flags()


def check_precision(precision: str) -> str:
    """Validate ``precision`` and refuse bf16 where it is not native (never silently float32, a
    different run, nor 10-17x slower); ``REPRO_ALLOW_EMULATED_BF16=1`` runs it emulated, recorded
    as ``bf16_native: false``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" and not bf16_is_native():
        if not bool_env(ALLOW_EMULATED_BF16_ENV, False):
            raise PrecisionUnavailable(
                f"this run is configured for bf16, but this CPU ({cpu_model()}, "
                f"{cpu_capability()}) has no native bf16 (no AMX or AVX512-BF16): PyTorch would "
                "emulate it 10-17x slower than float32. Use precision='float32' (a different run, "
                f"cached under its own key), or set {ALLOW_EMULATED_BF16_ENV}=1 to train it emulated."
            )
    return precision


def machine_provenance() -> dict[str, Any]:
    """What this process runs on: CPU model and ISA, architecture, torch version, bf16 support."""
    return {
        "cpu_model": cpu_model(),
        "cpu_capability": cpu_capability(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "bf16_native": bf16_is_native(),
    }


# ------------------------------------------------------------------ what one run actually used
_recorder: dict[str, Any] | None = None


def note_backend(activation: str, backend: str) -> None:
    """Called by an activation's dispatch each time it runs (``compiled`` or ``eager``); one set
    insertion, nothing outside :func:`recording`. Nor while ``torch.compile(model)`` traces: the
    side effect would break Dynamo's graph at every site (λ-GELU 2.9x GELU's step on an H100,
    against 1.04x unbroken); eager evaluation passes still record."""
    if _recorder is not None and not torch.compiler.is_compiling():
        _recorder["backends"].setdefault(activation, set()).add(backend)


def note_threads(threads: int) -> None:
    """Called by :func:`helpers.core.runtime.training_threads` with the intra-op thread count."""
    if _recorder is not None:
        _recorder["threads"] = threads


def note_device(record: dict[str, Any]) -> None:
    """Record a run's :func:`helpers.core.device.device_provenance` and world size."""
    if _recorder is not None:
        _recorder["device"] = dict(record)


def note_steps(steps: int) -> None:
    """Called by the training loop with the number of optimiser steps taken so far."""
    if _recorder is not None:
        _recorder["steps"] = steps


@contextmanager
def recording() -> Iterator[dict[str, Any]]:
    """Collect the backends, thread and step counts of the block; yields the live record (nested
    use keeps the outer one)."""
    global _recorder
    if _recorder is not None:
        yield _recorder
        return
    _recorder = {"backends": {}, "threads": None, "steps": None}
    try:
        yield _recorder
    finally:
        _recorder = None


def run_provenance(record: dict[str, Any], precision: str = "float32") -> dict[str, Any]:
    """The ``provenance`` entry of a result: :func:`machine_provenance` plus what the run used."""
    threads = record.get("threads")
    return {
        **machine_provenance(),
        "threads": threads if threads is not None else torch.get_num_threads(),
        "precision": precision,
        "backends": {name: "+".join(sorted(used)) for name, used in sorted(record["backends"].items())},
        "optimizer_steps": record.get("steps"),
        # the device always; GPU names, versions and a world size > 1 where they apply (an absent
        # field reads as FIELD_DEFAULTS, so older results compare as one-process CPU runs)
        **{k: v for k, v in (record.get("device") or {}).items() if k == "device" or v != FIELD_DEFAULTS.get(k)},
    }


def describe(provenance: dict[str, Any] | None) -> str:
    """One line for logs and pages: ``AMD EPYC (AVX2), torch 2.14.1, 1 thread, float32``."""
    if not provenance:
        return "not recorded"
    threads = provenance.get("threads")
    backends = ", ".join(f"{k} {v}" for k, v in (provenance.get("backends") or {}).items())
    return (
        f"{provenance.get('cpu_model')} ({provenance.get('cpu_capability')}), "
        f"torch {provenance.get('torch')}, {threads} thread{'s' if threads != 1 else ''}, "
        f"{provenance.get('precision')}" + (f"; {backends}" if backends else "")
    )
