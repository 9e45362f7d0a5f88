"""A report row's runs, for :mod:`tools.rerun`: their smoke version, a description in words, the
core-hours they recorded, and what stops them training here."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from helpers.core.device import bf16_is_native_on, resolve_device
from helpers.core.provenance import cpu_capability, cpu_model
from helpers.core.results_cache import compute_time
from helpers.core.run_reads import RunRead

#: What a smoke rerun shrinks, field by field (the smaller of this and the run's own value): every
#: config class of the book has some of these, and a nested run config (ReLU-ization's ``train``)
#: and a run's method options (DPO's pairs and steps) are shrunk the same way.
SMOKE_LIMITS: dict[str, int] = {
    "epochs": 2,
    "n_train": 256,
    "n_val": 256,
    "train_pairs": 32,
    "val_pairs": 16,
    "dpo_steps": 4,
    "n_calibration": 64,
    "n_lines": 4,
}

#: The fields shown when runs are listed, in order (those a config has).
_SHOWN = ("experiment", "profile", "pair", "arm", "model", "dataset", "activation", "method", "ground_truth", "alpha")


def smoke_config(config: Any) -> Any:
    """``config`` at the smoke profile: every field of :data:`SMOKE_LIMITS` it has cut to the limit
    (a nested run config and method options too), everything else kept, so the same code path runs in seconds."""
    changes: dict[str, Any] = {"profile": "smoke"} if hasattr(config, "profile") else {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.name in SMOKE_LIMITS and (value is None or isinstance(value, int)):
            changes[f.name] = SMOKE_LIMITS[f.name] if value is None else min(value, SMOKE_LIMITS[f.name])
        elif dataclasses.is_dataclass(value) and hasattr(value, "profile"):
            changes[f.name] = smoke_config(value)
        elif f.name == "options":
            changes[f.name] = tuple(smoke_config(option) for option in value)
    if isinstance(getattr(config, "anneal_switch", None), int) and "epochs" in changes:
        changes["anneal_switch"] = min(config.anneal_switch, max(changes["epochs"] - 1, 1))
    return dataclasses.replace(config, **changes)


def _flat(config: Any, prefix: str = "") -> dict[str, Any]:
    """A config's fields, nested configs and dicts (a protocol's inner training config) as ``outer.inner``."""
    items = (
        config.items()
        if isinstance(config, dict)
        else ((f.name, getattr(config, f.name)) for f in dataclasses.fields(config))
    )
    out: dict[str, Any] = {}
    for name, value in items:
        if dataclasses.is_dataclass(value) or (isinstance(value, dict) and value):
            out.update(_flat(value, f"{prefix}{name}."))
        else:
            out[prefix + name] = value
    return out


_SEEDLIKE = ("seed", "init_seed", "order_seed", "data_seed")


def describe_runs(reads: Sequence[RunRead]) -> list[str]:
    """One line per group of runs that differ only by seed: the fields that say what trains
    (model, data, activation, ...), every other field that differs between the runs, and the seeds."""
    flats = [_flat(r.config) for r in reads]
    varying = {k for k in set().union(*flats) if len({repr(f.get(k)) for f in flats}) > 1}
    seeds = (
        sorted(k for k in varying if k.rsplit(".", 1)[-1] in _SEEDLIKE)
        or [k for k in ("seed", "train.seed") if flats and k in flats[0]][:1]
    )
    # a protocol's inner training config repeats its seed: the outer one names the run
    seeds = [k for k in seeds if "." not in k or k.rsplit(".", 1)[-1] not in seeds] or seeds
    hidden = {k for k in varying if k.rsplit(".", 1)[-1] in _SEEDLIKE}
    shown = [
        k
        for k in (flats[0] if flats else {})
        if k not in hidden and not k.endswith("scale_note") and (k.rsplit(".", 1)[-1] in _SHOWN or k in varying)
    ]
    groups: dict[str, list[str]] = {}
    for flat in flats:
        parts = [f"{k}={flat.get(k)}" for k in shown if flat.get(k) not in (None, "", {}, ())]
        if not any(k in shown for k in ("epochs", "train.epochs")):
            parts.append(f"epochs={flat.get('epochs', flat.get('train.epochs'))}")
        parts.append(f"precision={flat.get('precision', flat.get('train.precision', 'float32'))}")
        groups.setdefault(", ".join(parts), []).append("/".join(str(flat.get(k)) for k in seeds))
    name = "/".join(seeds)
    return [f"{desc}; {len(v)} runs, {name} {', '.join(v)}" for desc, v in groups.items()]


def core_hours(reads: Sequence[RunRead]) -> float:
    """Training core-hours of ``reads`` as recorded by the committed runs (one thread each)."""
    return compute_time([r.result for r in reads])["core_minutes"] / 60


def obstacles(reads: Sequence[RunRead], smoke: bool) -> list[str]:
    """Why these runs cannot be retrained here as committed, said before anything starts: a GPU
    run on a machine without that device, bf16 on a CPU without native bf16 (10-17x slower there;
    a smoke rerun accepts it)."""
    problems = []
    device = resolve_device()
    gpu_runs = [r for r in reads if str((r.result.get("provenance") or {}).get("device", "cpu")).startswith("cuda")]
    if gpu_runs and device.type != "cuda":
        problems.append(f"{len(gpu_runs)} of its runs were trained on a GPU and this machine has none")
    bf16 = [r for r in reads if getattr(getattr(r.config, "train", r.config), "precision", "float32") == "bf16"]
    if bf16 and not smoke and not bf16_is_native_on(device):
        problems.append(
            f"{len(bf16)} of its runs train in bf16, which this CPU ({cpu_model()}, {cpu_capability()}) lacks "
            "natively (AMX or AVX512-BF16): they would run 10-17x slower; use such a machine or a GPU"
        )
    return problems
