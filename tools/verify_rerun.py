"""Retrain cheap cpu-profile runs and check that they reproduce their committed results.

``python -m tools.verify_rerun`` (CI runs it): for each config of
:func:`tools.run.cheap_check_configs`, load the committed result from ``results/``,
retrain into a temporary results folder, and compare every recorded value. How floats are
compared depends on where the two runs were computed (their ``provenance``,
:mod:`helpers.core.provenance`):

* **exact**, when the provenance fields of :data:`COMPARED_FIELDS` agree (same
  CPU model and vector ISA, torch version, thread count, precision and activation backends):
  seeded CPU runs are then bit-identical, so any difference is a real change.
* **tolerance**, otherwise (another CPU type, or a result committed before provenance was
  recorded): float32 kernels legitimately differ in their last bits between, say, an AVX-512 and
  an AVX2 machine, and training carries those differences along. Floats must then agree within
  :func:`float_tolerance` of the run's length; integers, booleans, strings, shapes (list lengths,
  keys) and configs still compare exactly.

GPU and multi-process results (provenance ``device`` other than ``cpu``, or ``world_size`` > 1)
are compared the same way: exact only when device name, CUDA, cuDNN, torch, world size,
precision and backends all agree, else within the same :func:`float_tolerance`. A GPU with
deterministic algorithms (:mod:`helpers.core.device`) and an all-reduce over ranks differ from
the CPU by the order of float32 sums, the same kind of difference as two CPU ISAs. Measured
here for the ranks: a 2-process gloo run of the λ-GELU MLP on Adult differed from the
1-process run by at most 2e-8 relative over 16 steps, about 50x inside the bound
(``tests/test_distributed.py``). On an NVIDIA H100 (``benchmarks/gpu_check_measured.md``) two
seeded runs were bit-identical, and GPU against CPU the λ-GELU MLP on Adult agreed to 6e-9 in its
first epoch but drifted to 0.9 % once λ annealed towards a sharp gate: a GPU result is rerun
exactly on the same GPU and versions, and compared with CPU results over seeds, not by value. bf16
results are compared with the float32 bound too, which is stricter than bf16 rounding can
meet across machines: a bf16 result rerun elsewhere that fails it needs a statistical
comparison over seeds instead (the report's verdicts), not a looser per-value tolerance.

The comparison used, and why, is printed for every run. Wall-clock fields are never compared.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.core import provenance as prov
from helpers.core.results_cache import field_defaults, load_result, run_or_load
from tools.cli import ArgumentParser
from tools.run import cheap_check_configs

#: Never compared: wall-clock time, the provenance itself (compared field by field to choose
#: the comparison) and the content checksum (it changes with any float).
IGNORED_KEYS = {"train_seconds", "cpu_seconds", "provenance", "checksum"}

#: Provenance fields that must agree for two runs of one config to be bit-identical.
COMPARED_FIELDS: tuple[str, ...] = (
    "cpu_model",
    "cpu_capability",
    "machine",
    "torch",
    "threads",
    "precision",
    "backends",
    "device",
    "device_name",
    "cuda",
    "cudnn",
    "world_size",
)


def provenance_mismatch(committed: dict[str, Any] | None, rerun: dict[str, Any]) -> list[str]:
    """The :data:`COMPARED_FIELDS` in which two records differ (empty: the runs must agree bit for
    bit); ``committed is None`` differs in every field."""
    if committed is None:
        return ["provenance (not recorded: the result predates provenance)"]

    def field(record: dict[str, Any], key: str) -> Any:
        return record.get(key, prov.FIELD_DEFAULTS.get(key))

    return [
        f"{key}: {field(committed, key)!r} vs {field(rerun, key)!r}"
        for key in COMPARED_FIELDS
        if field(committed, key) != field(rerun, key)
    ]


# ---- The cross-machine tolerance, stated once --------------------------------------------------
#: Unit roundoff of float32: the relative error of one correctly rounded operation.
FLOAT32_UNIT_ROUNDOFF = 2.0**-24
#: Relative drift allowed per optimiser step, in units of the float32 unit roundoff. Two CPUs
#: that round differently start apart by about one roundoff, and every step can add about that
#: much again; training these small runs does not amplify it beyond that (measured: AMD EPYC
#: (AVX2) reruns of the three check runs committed from Intel Sapphire Rapids (AVX-512):
#: largest relative differences 8.3e-6 over 6,120 steps, 3.2e-7 over 80 and 4.2e-6 over 1,920,
#: i.e. 44x, 15x and 27x inside this bound). A real change, e.g. one flipped prediction out of
#: a few thousand in an accuracy, is larger than the bound and fails.
ROUNDOFFS_PER_STEP = 1.0
#: Below this magnitude (relative to the tolerance) a value is compared absolutely: a quantity
#: that cancels to nearly zero (a tiny gradient or weight) has no meaningful relative error.
ABSOLUTE_FLOOR = 1e-3


def float_tolerance(optimizer_steps: int) -> float:
    """Relative tolerance for floats of a run of ``optimizer_steps`` steps computed on another
    CPU type: ``ROUNDOFFS_PER_STEP · 2⁻²⁴ · steps`` (one float32 rounding per step)."""
    if not isinstance(optimizer_steps, int) or isinstance(optimizer_steps, bool) or optimizer_steps < 1:
        raise ValueError(f"optimizer_steps must be a positive int, got {optimizer_steps!r}")
    return ROUNDOFFS_PER_STEP * FLOAT32_UNIT_ROUNDOFF * optimizer_steps


@dataclass(frozen=True)
class RerunComparison:
    """How two results of one config are compared: ``rel_tol == 0`` means exactly."""

    mode: str  # "exact" or "tolerance"
    rel_tol: float
    reason: str

    def floats_equal(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if self.rel_tol == 0.0 or math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=self.rel_tol, abs_tol=self.rel_tol * ABSOLUTE_FLOOR)


EXACT = RerunComparison("exact", 0.0, "")


def choose_comparison(committed: dict, rerun: dict) -> RerunComparison:
    """Exact when the two results' provenance agree on :data:`COMPARED_FIELDS`,
    else the float tolerance of the rerun's length; ``reason`` says which fields differ."""
    fresh = rerun.get("provenance")
    if not fresh:
        raise ValueError("the rerun recorded no provenance; cannot choose a comparison")
    mismatch = provenance_mismatch(committed.get("provenance"), fresh)
    if not mismatch:
        return RerunComparison("exact", 0.0, f"same provenance ({prov.describe(fresh)})")
    steps = fresh.get("optimizer_steps")
    if not steps:
        raise ValueError("the rerun recorded no optimizer_steps; cannot size the float tolerance")
    return RerunComparison(
        "tolerance",
        float_tolerance(steps),
        f"provenance differs: {'; '.join(mismatch)}; rerun on {prov.describe(fresh)}; {steps} optimiser steps",
    )


def differences(committed: Any, fresh: Any, path: str = "", comparison: RerunComparison = EXACT) -> list[str]:
    """Paths where two result trees differ. Floats follow ``comparison``; everything else (ints,
    bools, strings, None, dict keys, list lengths) compares exactly. An int and a float that hold
    the same number are equal (JSON may write ``1.0`` as ``1``)."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        out: list[str] = []
        for key in sorted(set(committed) | set(fresh)):
            if key in IGNORED_KEYS:
                continue
            if key not in committed or key not in fresh:
                out.append(f"{path}/{key}: present in only one result")
            else:
                out += differences(committed[key], fresh[key], f"{path}/{key}", comparison)
        return out
    if isinstance(committed, list) and isinstance(fresh, list):
        if len(committed) != len(fresh):
            return [f"{path}: length {len(committed)} != {len(fresh)}"]
        return [
            d for i, (a, b) in enumerate(zip(committed, fresh)) for d in differences(a, b, f"{path}[{i}]", comparison)
        ]
    if isinstance(committed, float) or isinstance(fresh, float):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (committed, fresh))
        if numbers and comparison.floats_equal(float(committed), float(fresh)):
            return []
        if numbers and comparison.mode == "tolerance":
            rel = abs(committed - fresh) / max(abs(committed), abs(fresh))
            return [
                f"{path}: committed {committed!r} != rerun {fresh!r} "
                f"(relative difference {rel:.2e} > tolerance {comparison.rel_tol:.2e})"
            ]
        return [f"{path}: committed {committed!r} != rerun {fresh!r}"]
    return [] if committed == fresh else [f"{path}: committed {committed!r} != rerun {fresh!r}"]


def largest_relative_difference(committed: Any, fresh: Any) -> float:
    """The largest relative difference between corresponding floats (0 when identical)."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        return max(
            (
                largest_relative_difference(committed[k], fresh[k])
                for k in committed.keys() & fresh.keys()
                if k not in IGNORED_KEYS
            ),
            default=0.0,
        )
    if isinstance(committed, list) and isinstance(fresh, list):
        return max((largest_relative_difference(a, b) for a, b in zip(committed, fresh)), default=0.0)
    if (
        isinstance(committed, float)
        and isinstance(fresh, float)
        and math.isfinite(committed)
        and math.isfinite(fresh)
        and committed != fresh
    ):
        return abs(committed - fresh) / max(abs(committed), abs(fresh))
    return 0.0


def with_default_fields(committed: dict, fresh: dict, config_cls: type | None) -> dict:
    """``committed`` with config fields added since it was written filled in from ``fresh``,
    where ``fresh`` holds the field's default (the value the committed run was trained with:
    a new field's default always reproduces the old behaviour, which is why the cache key omits
    defaults). Any other config difference is kept and reported."""
    if config_cls is None or "config" not in committed or "config" not in fresh:
        return committed

    defaults = field_defaults(config_cls)
    config = dict(committed["config"])
    for key, value in fresh["config"].items():
        if key not in config and key in defaults and defaults[key] == value:
            config[key] = value
    return {**committed, "config": config}


def verify(committed: dict, fresh: dict, config_cls: type | None = None) -> tuple[RerunComparison, list[str]]:
    """The comparison chosen for a committed result and its rerun, and the differences found."""
    comparison = choose_comparison(committed, fresh)
    committed = with_default_fields(committed, fresh, config_cls)
    return comparison, differences(committed, fresh, comparison=comparison)


@contextmanager
def results_in(folder: Path | str) -> Iterator[None]:
    """Results are read and written under ``folder`` inside the block."""
    previous = os.environ.get("REPRO_RESULTS_DIR")
    os.environ["REPRO_RESULTS_DIR"] = str(folder)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("REPRO_RESULTS_DIR", None)
        else:
            os.environ["REPRO_RESULTS_DIR"] = previous


def _retrain(cfg: Any) -> dict:
    with tempfile.TemporaryDirectory() as tmp, results_in(tmp):
        return json.loads(json.dumps(run_or_load(cfg, rerun=True)))


def main(argv: list[str] | None = None) -> int:
    """The CLI: parse ``argv`` (``--help``; no other flags, so an unknown one is an error before
    anything trains), then retrain and compare every cheap check config."""
    parser = ArgumentParser(
        prog="python -m tools.verify_rerun", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.parse_args(argv)
    configs = cheap_check_configs()
    failures = 0
    print(f"this machine: {prov.cpu_model()} ({prov.cpu_capability()})")
    for cfg in configs:
        committed = load_result(cfg)
        if committed is None:
            print(f"MISSING committed result for {cfg}", file=sys.stderr)
            failures += 1
            continue
        fresh = _retrain(cfg)
        comparison, diffs = verify(committed, fresh, type(cfg))
        label = f"{cfg.experiment}/{committed['config_hash']}"
        how = (
            "exact comparison"
            if comparison.mode == "exact"
            else f"tolerance comparison (floats within relative {comparison.rel_tol:.2e})"
        )
        print(f"{label}: {how}, because {comparison.reason}")
        if diffs:
            failures += 1
            print(f"DIFFERS {label} ({len(diffs)} values):\n  " + "\n  ".join(diffs[:20]), file=sys.stderr)
        elif comparison.mode == "exact":
            print(f"  identical (retrained from scratch, {len(committed.get('history', []))} epochs)")
        else:
            print(
                f"  agrees within tolerance (retrained from scratch, {len(committed.get('history', []))} "
                f"epochs; largest relative difference "
                f"{largest_relative_difference(committed, fresh):.2e})"
            )
    print(f"{len(configs) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
