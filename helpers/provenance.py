"""Where and how a result was computed: CPU, torch, threads, precision and activation backends.

Float32 training is bit-reproducible only on the same kind of machine: oneDNN and ATen pick
different kernels on an AVX-512/AMX CPU than on an AVX2-only one, the thread count changes how
reductions are split, and the fused activation kernels (compiled with ``-march=native``) are
themselves CPU-specific. So every result written by :func:`helpers.experiments.run_or_load`
carries a ``provenance`` record (:func:`run_provenance`), and
:mod:`helpers.verify_rerun` compares a rerun with a committed result exactly only when their
:data:`COMPARED_FIELDS` agree.

Backends are recorded as they are *used*: each activation's dispatch calls :func:`note_backend`
with ``"native"``, ``"eager"`` or ``"compiled"``, and :func:`recording` collects what one run used
(a run can use two, e.g. the native kernel in training and the eager one for a double backward).

This module is part of the core: it imports no method module.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "COMPARED_FIELDS",
    "PRECISIONS",
    "PrecisionUnavailable",
    "bf16_is_native",
    "check_precision",
    "cpu_capability",
    "cpu_model",
    "describe",
    "machine_provenance",
    "note_backend",
    "note_steps",
    "note_threads",
    "provenance_mismatch",
    "recording",
    "run_provenance",
]

#: The compute precisions a run can be configured with. ``bf16`` means
#: ``torch.autocast("cpu", dtype=torch.bfloat16)`` around the forward pass and loss.
PRECISIONS: tuple[str, ...] = ("float32", "bf16")

#: Provenance fields that must agree for two runs of one config to be bit-identical.
COMPARED_FIELDS: tuple[str, ...] = (
    "cpu_model", "cpu_capability", "machine", "torch", "threads", "precision", "backends",
)

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
    """True when this CPU computes bfloat16 in hardware: AMX tiles or AVX512-BF16 on x86, the
    BF16 extension on ARM. Without it, PyTorch emulates bf16 and autocast is many times slower
    than float32 (measured 10-17x on an AVX2-only AMD EPYC for a ResNet training step)."""
    cpu = torch.cpu
    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        fn = getattr(cpu, probe, None)
        if fn is not None and fn():
            return True
    return platform.machine() in ("aarch64", "arm64") and "bf16" in _cpu_flags()


def check_precision(precision: str) -> str:
    """Validate ``precision`` and refuse bf16 where it is not native; returns ``precision``.

    A bf16 run on a CPU without native bf16 stops here with a message instead of silently
    training in float32 (which would be a different run under the bf16 run's name) or silently
    taking 10-17x longer. Setting ``REPRO_ALLOW_EMULATED_BF16=1`` runs it anyway, emulated; the
    provenance then records ``bf16_native: false``.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" and not bf16_is_native():
        from helpers.runtime import bool_env

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
    """Called by an activation's dispatch each time it runs: ``backend`` is ``native``,
    ``eager`` or ``compiled``. Costs one set insertion; does nothing outside :func:`recording`."""
    if _recorder is not None:
        _recorder["backends"].setdefault(activation, set()).add(backend)


def note_threads(threads: int) -> None:
    """Called by :func:`helpers.runtime.training_threads` with the intra-op thread count."""
    if _recorder is not None:
        _recorder["threads"] = threads


def note_steps(steps: int) -> None:
    """Called by the training loop with the number of optimiser steps taken so far."""
    if _recorder is not None:
        _recorder["steps"] = steps


@contextmanager
def recording() -> Iterator[dict[str, Any]]:
    """Collect the backends, thread count and step count of the code run inside the block.

    Yields the live record; nested use keeps the outer record (one run at a time per process).
    """
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
    }


def provenance_mismatch(committed: dict[str, Any] | None, rerun: dict[str, Any]) -> list[str]:
    """The :data:`COMPARED_FIELDS` in which two provenance records differ (empty: same machine
    type and compute path, so the runs must agree bit for bit). A result written before
    provenance was recorded (``committed is None``) differs in every field."""
    if committed is None:
        return ["provenance (not recorded: the result predates provenance)"]
    return [f"{key}: {committed.get(key)!r} vs {rerun.get(key)!r}"
            for key in COMPARED_FIELDS if committed.get(key) != rerun.get(key)]


def describe(provenance: dict[str, Any] | None) -> str:
    """One line for logs and pages: ``AMD EPYC (AVX2), torch 2.14.1, 1 thread, float32``."""
    if not provenance:
        return "not recorded"
    threads = provenance.get("threads")
    backends = ", ".join(f"{k} {v}" for k, v in (provenance.get("backends") or {}).items())
    return (f"{provenance.get('cpu_model')} ({provenance.get('cpu_capability')}), "
            f"torch {provenance.get('torch')}, {threads} thread{'s' if threads != 1 else ''}, "
            f"{provenance.get('precision')}" + (f"; {backends}" if backends else ""))
