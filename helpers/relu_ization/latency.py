"""CPU inference latency of the ReLU-ization arms: the committed record, its tables and its claims.

Timings depend on the machine and its load, so they are not cached results: the benchmark
``benchmarks/relu_ization_latency.py`` measures them (every ratio a median over interleaved rounds,
with a seeded bootstrap interval) and commits a record (``benchmarks/relu_ization_latency_measured.json``)
that the pages and the claims read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from helpers.core.claim import Claim, claim_key, source_row
from helpers.core.results_cache import load_result
from helpers.core.runtime import repo_root
from helpers.core.statistics import median_comparison
from helpers.core.verdicts import judge
from helpers.relu_ization.experiment import reluization_config
from helpers.relu_ization.protocol import pending_pairs

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
#: What a pair's timings depend on. Each pair carries its own: pairs are measured in separate
#: runs of the benchmark, possibly on different CPUs (a ResNet trained in bf16 is timed where its
#: weights check can be exact), so one machine line for the whole record would mislabel the others.
MACHINE_FIELDS = ("cpu", "torch", "threads", "rounds", "date")


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


def measurement(record: Mapping[str, Any], pair: str) -> dict[str, Any]:
    """How ``pair`` was timed, for the page's line: the entry's machine fields, ``load_average``,
    ``seconds`` and ``seed``; ``reproduces``: whether the loaded weights reproduced the committed
    results exactly before they were timed (None: not checked); ``stale``: checked, but the pair's
    committed results are no longer the ones timed (it changed scale or was retrained)."""
    rec = pair_record(record, pair)
    checks = rec.get("weights_check", {})
    fields = (*MACHINE_FIELDS, "load_average", "seconds", "seed")
    return {
        **{field: rec[field] for field in fields},
        "reproduces": all(c["identical"] for c in checks.values()) if checks else None,
        "stale": bool(checks) and not timed_weights_current(record, pair),
    }


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
