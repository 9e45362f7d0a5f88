"""CPU inference latency of the ReLU-ization arms, as ratios measured in one process.

Timings depend on the machine and its load, so they are not cached results: the benchmark
``benchmarks/relu_ization_latency.py`` measures them and commits a record
(``benchmarks/relu_ization_latency_measured.json``) that the pages and the claims read. Every
ratio is a median over rounds of the per-round ratio: in each round every network runs once,
in a fresh seeded random order, on the same batch, so load from other processes hits all alike.
The interval of a median ratio is a seeded bootstrap over the rounds
(:func:`helpers.core.statistics.bootstrap_ci`).
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from helpers.core.claim import Claim, claim_key, source_row
from helpers.core.results_cache import load_result
from helpers.core.runtime import repo_root
from helpers.core.statistics import bootstrap_ci, median_comparison
from helpers.core.verdicts import judge
from helpers.relu_ization.experiment import reluization_config
from helpers.relu_ization.protocol import pending_pairs

__all__ = [
    "RECORD",
    "MARGINS",
    "LATENCY_KEYS",
    "LATENCY_RERUN",
    "MACHINE_FIELDS",
    "calls_for",
    "interleaved_times",
    "ratio_summary",
    "csr_matmul_times",
    "load_record",
    "pair_record",
    "timed_weights_current",
    "measurement_note",
    "latency_frame",
    "latency_claims",
]

#: The committed benchmark record, relative to the checkout.
RECORD = Path("benchmarks") / "relu_ization_latency_measured.json"
SOURCE = "This book (beyond the papers), ReLU-ization"
#: A row of this chapter: a hypothesis of this book, which no source measures.
hypothesis_row = functools.partial(
    source_row,
    where="ReLU-ization",
    paper="hypothesis of this book (no source measures it)",
    source="This book (beyond the papers)",
)
SAME_SPEED_MARGIN_PCT = 5.0
#: The latency rows' margin, for the rules page (:data:`helpers.relu_ization.claims.MARGINS`).
MARGINS: tuple[tuple[str, str, str, str], ...] = (
    (
        "ReLU-ization latency: the same float32 speed",
        r"reluization-latency-.*-same-speed-float32",
        f"±{SAME_SPEED_MARGIN_PCT:g} % of the time per batch",
        "relative: timings scale with the machine and the batch, a ratio does not (the book's choice)",
    ),
)
#: The latency rows' keys begin with this; their verdicts rest on the committed timings, not on runs.
LATENCY_KEYS = "reluization-latency-"
#: What rerunning a latency row does (printed by :mod:`tools.rerun`).
LATENCY_RERUN = (
    f"its verdict rests on the timings in {RECORD}: these runs are the networks timed, so a rerun "
    "retrains them and the row comes back only when their weights reproduce the timed ones; "
    "python benchmarks/relu_ization_latency.py measures the timings again"
)
#: What a pair's timings depend on. Each pair carries its own: pairs are measured in separate
#: runs of the benchmark, possibly on different CPUs (a ResNet trained in bf16 is timed where its
#: weights check can be exact), so one machine line for the whole record would mislabel the others.
MACHINE_FIELDS = ("cpu", "torch", "threads", "rounds", "date")


def calls_for(fn: Callable[[], Any], target_seconds: float = 0.02, limit: int = 10_000) -> int:
    """How many calls of ``fn`` take about ``target_seconds`` (at least 1)."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return int(min(limit, max(1, round(target_seconds / once))))


@torch.inference_mode()
def interleaved_times(
    fns: Mapping[str, Callable[[], Any]],
    *,
    rounds: int,
    number: Mapping[str, int] | int = 1,
    warmup: int = 2,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Seconds per call of every ``fns[name]``, one timing per round each, the names in a fresh
    random order every round (``random.Random(seed)``). ``number``: calls per timing (per name or one for all;
    :func:`calls_for` counts them). ``rounds`` is checked where it enters, the benchmark's ``--rounds``."""
    if not fns:
        raise ValueError("fns is empty")
    calls = {k: (number[k] if isinstance(number, Mapping) else number) for k in fns}
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    order, rng = list(fns), random.Random(seed)
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        rng.shuffle(order)
        for k in order:
            fn, n = fns[k], calls[k]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            times[k].append((time.perf_counter() - start) / n)
    return times


def ratio_summary(times: Mapping[str, list[float]], reference: str) -> dict[str, dict[str, Any]]:
    """Per name: median seconds, the median over rounds of ``t/t_reference`` with its bootstrap
    95 % interval, and the per-round ratios."""
    if reference not in times:
        raise KeyError(f"reference {reference!r} was not timed (have {sorted(times)})")
    ref = np.asarray(times[reference], dtype=float)
    out = {}
    for k, t in times.items():
        ratios = np.asarray(t, dtype=float) / ref
        med, lo, hi = bootstrap_ci(ratios, np.median, seed=0) if len(ratios) > 1 else (float(ratios[0]),) * 3
        out[k] = {"median_seconds": float(np.median(t)), "ratio": med, "ci": [lo, hi], "ratios": ratios.tolist()}
    return out


@torch.inference_mode()
def csr_matmul_times(activations: torch.Tensor, weight: torch.Tensor, *, rounds: int, seed: int = 0) -> dict[str, Any]:
    """The one zero-skipping path of this PyTorch stack on the CPU: the next layer's product with
    the activations stored as a CSR sparse matrix (``torch.sparse.mm``), against the dense
    product. Times with and without the conversion ``to_sparse_csr()``."""
    if activations.dim() != 2 or weight.dim() != 2 or activations.shape[1] != weight.shape[1]:
        raise ValueError(
            f"need activations (n, k) and weight (m, k), got {tuple(activations.shape)} and {tuple(weight.shape)}"
        )
    wt = weight.t().contiguous()
    csr = activations.to_sparse_csr()
    fns = {
        "dense": lambda: activations @ wt,
        "csr": lambda: torch.sparse.mm(csr, wt),
        "csr+conversion": lambda: torch.sparse.mm(activations.to_sparse_csr(), wt),
    }
    number = {k: calls_for(f) for k, f in fns.items()}
    summary = ratio_summary(interleaved_times(fns, rounds=rounds, number=number, seed=seed), "dense")
    diff = float((torch.sparse.mm(csr, wt) - activations @ wt).abs().max())
    return {
        "zero_fraction": float((activations == 0).float().mean()),
        "shape": list(activations.shape),
        "max_abs_diff": diff,
        **{k: {kk: v[kk] for kk in ("median_seconds", "ratio", "ci")} for k, v in summary.items()},
    }


def load_record(path: Path | None = None) -> dict[str, Any] | None:
    """The committed benchmark record, or ``None`` when it has not been measured."""
    p = path if path is not None else repo_root() / RECORD
    if not p.exists():
        return None
    try:
        record = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(
            f"the latency record {p} is not valid JSON ({e}); rerun benchmarks/relu_ization_latency.py"
        ) from e
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("pairs"), dict)
        or not all(isinstance(v, dict) and isinstance(v.get("rows"), list) for v in record["pairs"].values())
    ):
        raise ValueError(
            f"the latency record {p} is not a benchmark record (a 'pairs' mapping of entries with 'rows'); "
            "rerun benchmarks/relu_ization_latency.py"
        )
    return record


def pair_record(record: Mapping[str, Any], pair: str) -> dict[str, Any]:
    """The entry of ``pair`` with its machine fields (:data:`MACHINE_FIELDS`); an entry without
    them takes the record's top-level ones."""
    if pair not in record.get("pairs", {}):
        raise KeyError(f"the latency record has no pair {pair!r} (has {sorted(record.get('pairs', {}))})")
    rec = dict(record["pairs"][pair])
    for field in MACHINE_FIELDS:
        if field not in rec:
            if field not in record:
                raise KeyError(f"the latency record gives no {field!r} for pair {pair!r}")
            rec[field] = record[field]
    return rec


def timed_weights_current(
    record: Mapping[str, Any], pair: str, profile: str = "cpu", arms: tuple[str, ...] | None = None
) -> bool:
    """Whether the networks timed for ``pair`` (those of ``arms``; default: every arm timed) are
    still the pair's committed ``profile`` runs.

    The benchmark stores, per arm, the metrics of the committed result its weights were checked
    against (``weights_check``). After a change of scale or a retrain these differ from the current
    committed results, and the timings must be measured again."""
    rec = pair_record(record, pair)
    checks = rec.get("weights_check") or {}
    if not checks or (arms is not None and not set(arms) <= set(checks)):
        return False
    for arm, check in checks.items():
        if arms is not None and arm not in arms:
            continue
        committed = load_result(reluization_config(pair, arm, int(rec["seed"]), profile))
        if committed is None or [check["before_swap"][1], check["after_swap"][1]] != [
            committed["before_swap"],
            committed["after_swap"],
        ]:
            return False
    return True


def measurement_note(record: Mapping[str, Any], pair: str) -> str:
    """One line on how ``pair`` was timed: where, when, with what, and whether the loaded weights
    reproduced the committed results exactly before they were timed (and are still those results)."""
    rec = pair_record(record, pair)
    checks = rec.get("weights_check", {})
    same = "yes" if checks and all(c["identical"] for c in checks.values()) else ("no" if checks else "not checked")
    note = (
        f"latency measured {rec['date']} on {rec['cpu']}, torch {rec['torch']}, {rec['threads']} thread, "
        f"{rec['rounds']} interleaved rounds, load average {rec['load_average']:.1f}; the benchmark took "
        f"{rec['seconds']:.0f} s for this pair; seed-{rec['seed']} weights reproduce the committed results "
        f"exactly: {same}"
    )
    if checks and not timed_weights_current(record, pair):
        note += (
            "; STALE: the committed results of this pair are no longer the ones timed (it changed scale "
            f"or was retrained): rerun benchmarks/relu_ization_latency.py --pairs {pair}"
        )
    return note


def latency_frame(record: Mapping[str, Any], pair: str) -> pd.DataFrame:
    """One row per network, precision and batch: median seconds, ratio to float32 GELU with its
    interval, and throughput (examples per second)."""
    rows = []
    for row in pair_record(record, pair)["rows"]:
        rows.append(
            {
                "network": row["label"],
                "precision": row["precision"],
                "batch": row["batch"],
                "ms per batch": 1e3 * row["median_seconds"],
                "examples/s": row["batch"] / row["median_seconds"],
                "time ratio to GELU float32": row["ratio"],
                "95% CI": f"[{row['ci'][0]:.3f}, {row['ci'][1]:.3f}]",
            }
        )
    return pd.DataFrame(rows)


def _row(record: Mapping[str, Any], pair: str, arm: str, precision: str, batch: int) -> Mapping[str, Any]:
    for row in record["pairs"][pair]["rows"]:
        if (row["arm"], row["precision"], row["batch"]) == (arm, precision, batch):
            return row
    raise KeyError(f"no latency row {(pair, arm, precision, batch)}")


def _pct(record: Mapping[str, Any], pair: str, a: tuple[str, str, int], b: tuple[str, str, int]) -> list[float]:
    """Per-round ``100·(t_a/t_b − 1)`` (both rows were timed in the same rounds)."""
    ra, rb = _row(record, pair, *a)["ratios"], _row(record, pair, *b)["ratios"]
    return [100.0 * (x / y - 1.0) for x, y in zip(ra, rb)]


def latency_claims(profile: str = "cpu", record: Mapping[str, Any] | None = None) -> list[Claim]:
    """The latency claims of every pair in the committed record (nothing when there is none),
    except pairs whose cpu runs are pending (their claims appear with the rest of their results).
    A row whose timed networks are not the pair's committed results (:func:`timed_weights_current`)
    is left out until they are measured again."""
    record = load_record() if record is None else record
    if record is None:
        return []
    out = []
    waiting = pending_pairs()
    for pair in record.get("pairs", {}):
        if pair in waiting:
            continue
        rec = pair_record(record, pair)
        big = max(row["batch"] for row in rec["rows"])
        small = min(row["batch"] for row in rec["rows"])
        # each case's key names what it compares (arm, precision, batch), not its sentence
        lgelu = lambda precision, batch: ("lgelu_anneal", precision, batch)  # noqa: E731
        faster = dict(direction=-1, negligible=SAME_SPEED_MARGIN_PCT)  # faster by more than 'same speed'
        cases = [
            (
                "same-speed-float32",
                f"the ReLU-ized networks run at one float32 speed: annealed λ-GELU → ReLU within "
                f"±{SAME_SPEED_MARGIN_PCT:g} % of ReLU from scratch (batch {big})",
                lgelu("float32", big),
                ("relu", "float32", big),
                dict(claim="equivalence", margin=SAME_SPEED_MARGIN_PCT),
                "Same graph (Linear/Conv → ReLU), different weights: a difference would have to come from the values.",
            ),
            (
                "float32-faster-than-gelu",
                f"ReLU-ization makes float32 inference faster than GELU (batch {big})",
                *(lgelu("float32", big), ("gelu", "float32", big), faster, ""),
            ),
            *(
                (
                    f"int8-faster-than-float32-batch-{batch}",
                    f"int8 (x86, static) runs the ReLU-ized network faster than float32 (batch {batch})",
                    *(lgelu("int8", batch), lgelu("float32", batch), faster, ""),
                )
                for batch in (big, small)
            ),
            (
                "int8-faster-than-int8-gelu",
                f"int8 runs the ReLU-ized network faster than int8 GELU, whose GELU stays float32 (batch {big})",
                *(lgelu("int8", big), ("gelu", "int8", big), faster, ""),
            ),
        ]
        for case in cases:
            row = _latency_row(record, pair, case, profile)
            if row is not None:
                out.append(row)
    return out


def _latency_row(record: Mapping[str, Any], pair: str, case: tuple, profile: str) -> Claim | None:
    """One latency row, or None when its networks' weights are not the committed runs any more;
    the weights are checked here, so the runs this row reads are its timed networks alone."""
    name, text, a, b, kw, note = case
    if not timed_weights_current(record, pair, arms=tuple(dict.fromkeys((a[0], b[0])))):
        return None
    rec = pair_record(record, pair)
    pct = _pct(record, pair, a, b)
    # the median per-round ratio is what the latency table shows; the rounds are heavy-tailed, so
    # its bootstrap interval decides rather than a t interval of the mean
    verdict, fields, comp = judge(lambda pct=pct: median_comparison(pct), unit="%", digits=1, **kw)
    if fields.get("n"):
        fields["n"] = fields["n"].replace("runs", f"timing rounds of one seed-{rec['seed']} network per arm")
    ours = (
        f"{comp.effect:+.1f} % time per batch (median ratio {np.median([1 + p / 100 for p in pct]):.3f})"
        if comp is not None
        else "–"
    )
    return hypothesis_row(
        claim_key(LATENCY_KEYS.rstrip("-"), pair, name),
        f"{rec['label']}: {text}",
        ours=ours,
        verdict=verdict,
        profile=profile,
        scale=(
            f"seed-{rec['seed']} weights; {rec['rounds']} interleaved rounds on {rec['cpu']}, "
            f"{rec['threads']} thread, torch {rec['torch']}, measured {rec['date']}"
        ),
        notebook=rec["notebook"],
        note=(note + " " if note else "") + f"Each arm is a single network (seed {rec['seed']}); "
        "the rounds are timing rounds, not seeds, so the interval covers timing noise on this "
        "machine, not training variation, and another seed's network was not timed. The verdict "
        "rests on the seeded bootstrap interval of the median per-round ratio, the statistic the "
        "latency table shows (95%; 90% for the same-speed margin), with a Wilcoxon "
        "signed-rank p beside it.",
        anchor=rec["anchor"],
        **fields,
    )
