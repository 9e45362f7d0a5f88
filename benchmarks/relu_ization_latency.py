"""CPU inference latency of the ReLU-ization arms (notebooks 40-41), float32 and int8, batch 1 and 256.

    python benchmarks/relu_ization_latency.py [--pairs fmnist,gpt,cifar10_resnet] [--rounds 21] [--seed 0]

For each pair, the seed's trained networks of every arm (cpu profile) are loaded from their
weights files beside the results, or retrained deterministically when a file is missing
(:func:`helpers.relu_ization.experiment.trained_models`); before timing, each network's float32
validation metric is recomputed and compared with its committed result (``weights_check``).
Networks: (i) GELU, (ii)-(iv) and (vi) the swapped ReLU networks, (v) ReLU from scratch; each in
float32 and as the static int8 model of :mod:`helpers.relu_ization.quantize` (calibrated as in
the run). All networks of a pair and a batch size are timed round by round in a fresh random
order on the same batch of validation inputs (:func:`interleaved_times`);
a ratio is the median over rounds of the per-round time ratio to float32 GELU (load from other
processes hits all networks of a round alike), with a seeded bootstrap interval over the rounds.

The MLP pair also times the one zero-skipping path this PyTorch stack has on the CPU, the next
layer's product with the ReLU outputs stored as CSR (``torch.sparse.mm``), against the dense
product (:func:`csr_matmul_times`).

Writes ``benchmarks/relu_ization_latency_measured.json`` (the record the pages read), each pair
with the CPU, torch version, threads, date and load average of its own measurement, since every
number depends on them; pairs not named in ``--pairs`` keep their earlier entries.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install

from helpers.core.provenance import cpu_capability, cpu_model  # noqa: E402
from helpers.core.results_cache import load_result  # noqa: E402
from helpers.core.runtime import repo_root  # noqa: E402
from helpers.core.statistics import bootstrap_ci  # noqa: E402
from helpers.core.train import evaluate  # noqa: E402
from helpers.relu_ization import claims as C  # noqa: E402
from helpers.relu_ization.experiment import calibration_batches, reluization_config, trained_models  # noqa: E402
from helpers.relu_ization.latency import MACHINE_FIELDS, RECORD, pair_record  # noqa: E402
from helpers.relu_ization.protocol import ARM_LABELS, RELU_PAIRS, TRAIN_ARMS  # noqa: E402
from helpers.relu_ization.quantize import quantize_int8, quantized_engine  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402

BATCHES = (1, 256)


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


def _networks(pair: str, seed: int) -> tuple[dict, dict, dict]:
    """Float32 networks by arm, the run parts of the GELU arm, and the weights check."""
    nets, check, parts = {}, {}, None
    for arm in TRAIN_ARMS:
        cfg = reluization_config(pair, arm, seed, "cpu")
        committed = load_result(cfg)
        if committed is None:
            raise SystemExit(f"no committed cpu result for {pair} {arm} seed {seed}: run notebook 40/41 first")
        model, swapped, p = trained_models(cfg)
        task = cfg.train_config().task
        before = evaluate(model, p["val_loader"], task)["val_metric"]
        after = before if swapped is model else evaluate(swapped, p["val_loader"], task)["val_metric"]
        check[arm] = {
            "before_swap": [before, committed["before_swap"]],
            "after_swap": [after, committed["after_swap"]],
            "identical": before == committed["before_swap"] and after == committed["after_swap"],
        }
        if arm == "gelu":
            nets["gelu"], nets["gelu_swap"], parts = model, swapped, p
        else:
            nets[arm] = swapped
    return nets, parts, check


def _time_pair(pair: str, seed: int, rounds: int) -> dict:
    spec = RELU_PAIRS[pair]
    nets, parts, check = _networks(pair, seed)
    cfg = reluization_config(pair, "gelu", seed, "cpu")
    lm = cfg.train_config().task == "lm"
    calibration = calibration_batches(parts["train_loader"].dataset, cfg.n_calibration, 32 if lm else 256)
    int8 = {arm: quantize_int8(net, calibration, scope=spec.quant_scope) for arm, net in nets.items()}
    val = torch.cat([b[0] for b in parts["val_loader"]])
    rows = []
    with quantized_engine():
        for batch in BATCHES:
            x = val[:batch]
            fns = {}
            for arm in nets:
                fns[(arm, "float32")] = lambda m=nets[arm]: m(x)
                fns[(arm, "int8")] = lambda m=int8[arm]: m(x)
            named = {f"{a}|{p}": f for (a, p), f in fns.items()}
            number = {k: calls_for(f) for k, f in named.items()}
            summary = ratio_summary(interleaved_times(named, rounds=rounds, number=number, seed=batch), "gelu|float32")
            for key, s in summary.items():
                arm, precision = key.split("|")
                rows.append({"arm": arm, "label": ARM_LABELS[arm], "precision": precision, "batch": batch, **s})
    out = {
        "label": spec.label,
        "seed": seed,
        "rows": rows,
        "weights_check": check,
        "notebook": C._notebook(pair),
        "anchor": C.ANCHORS[C._notebook(pair)],
    }
    if spec.linear_regions:  # the MLP: its hidden ReLU outputs against the next layer's weights
        relu = nets["relu"]
        acts, h = [], val[:256].flatten(1)
        with torch.inference_mode():
            for layer in list(relu.body):
                h = layer(h)
                if isinstance(layer, torch.nn.ReLU):
                    acts.append(h.clone())
        linears = [m for m in relu.body if isinstance(m, torch.nn.Linear)][1:] + [relu.head]
        out["zero_skipping"] = {
            "api": "torch.sparse.mm(activations.to_sparse_csr(), W.T) against activations @ W.T",
            "mkl": bool(torch.backends.mkl.is_available()),
            "layers": [
                {"layer": i + 2, "batch": b, **csr_matmul_times(a[:b], lin.weight.detach(), rounds=rounds)}
                for i, (a, lin) in enumerate(zip(acts, linears))
                for b in BATCHES
            ],
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pairs", default=None, help="comma-separated pairs (default: those with committed cpu results)"
    )
    parser.add_argument(
        "--rounds", type=positive_int_arg("--rounds"), default=21, help="interleaved timed rounds (default 21)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the seed whose trained networks are timed (retrained if missing)"
    )
    parser.add_argument(
        "--threads", type=positive_int_arg("--threads"), default=1, help="torch.set_num_threads(N) (default 1)"
    )
    parser.add_argument("--out", type=Path, default=None, help=f"the record to update (default: {RECORD})")
    args = parser.parse_args(argv)
    pairs = args.pairs.split(",") if args.pairs else [p for p, s in RELU_PAIRS.items() if not s.cpu_pending]
    unknown = [p for p in pairs if p not in RELU_PAIRS]
    if unknown or not pairs:
        parser.error(f"--pairs: unknown pair(s) {unknown}; choose from {', '.join(RELU_PAIRS)}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    torch.set_num_threads(args.threads)
    path = args.out or repo_root() / RECORD
    record = json.loads(path.read_text()) if path.exists() else {"pairs": {}}
    # Pairs measured earlier keep their own machine fields (a record from before they moved into
    # each pair lends them its top-level ones first, so nothing is relabelled).
    for other in record["pairs"]:
        record["pairs"][other] = pair_record(record, other)
    for field in MACHINE_FIELDS:
        record.pop(field, None)
    record.update({"batches": list(BATCHES), "script": "benchmarks/relu_ization_latency.py"})
    machine = {
        "cpu": f"{cpu_model()} ({cpu_capability()})",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "rounds": args.rounds,
        "date": datetime.date.today().isoformat(),
    }
    for pair in pairs:
        load, started = os.getloadavg()[0], time.perf_counter()
        timed = _time_pair(pair, args.seed, args.rounds)
        record["pairs"][pair] = {**timed, **machine, "load_average": load, "seconds": time.perf_counter() - started}
        print(f"{pair}: timed in {record['pairs'][pair]['seconds']:.0f} s (load average {load:.2f})", flush=True)
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main()
