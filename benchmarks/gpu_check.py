"""One GPU check, run once on a lent GPU: activations agree with the CPU, training steps run, and
what each activation costs next to ``nn.GELU`` at the papers' scale.

    python benchmarks/gpu_check.py [--out DIR] [--budget-s 420] [--steps 10] [--rounds 1] [--device cuda]

Five parts, each written to ``DIR/gpu_check.json`` as soon as it is done (a run cut short keeps
what it measured), and a readable summary to ``DIR/gpu_check.md``:

1. **Environment**: the GPU, torch, CUDA and cuDNN versions, and what a result's provenance
   records of this device (:func:`helpers.core.device.device_provenance`).
2. **Agreement with the CPU**: every registered activation, forward and backward (input and
   parameter gradients) on the same input, GPU against CPU, in float32 through each kernel
   backend (``compiled``: Triton; ``eager``) and in bf16 under autocast (the input rounded to bf16
   on both sides, the CPU computing in float32). Flex-Act samples its mixture in training mode, so it is compared
   in eval mode, where it is deterministic.
3. **Determinism**: a ResNet-18/4 trained 5 steps twice from the same seed, with
   :func:`helpers.core.device.set_determinism`, in float32 and in bf16 autocast: are the weights
   bit-identical?
4. **Throughput**: a few training steps of every paper-profile model × activation in bf16 autocast
   (AdamW, synthetic batches of the paper profile's batch size and input shape; no data needed),
   images or tokens per second after warm-up, and the ratio to ``nn.GELU`` in the same model.
   Flex-Act runs where the paper puts it, at ResNet-18's and ResNet-34's penultimate layer.
5. **End to end**: ``python -m tools.train_distributed`` on a small Adult config (λ-GELU with
   its annealing, so method state lives on the device), with ``REPRO_DEVICE=cuda`` eagerly, again
   through ``torch.compile(model)`` (``REPRO_COMPILE_MODEL=1``), and on this machine's CPU; the
   histories compared at :func:`tools.verify_rerun.float_tolerance` (needs the Adult data under
   ``REPRO_DATA_DIR``), with each arm's training seconds.

Never part of the book or CI: they run without a GPU. ``--device cpu`` runs parts 2-4 against the
CPU itself, to test the script.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install

import torch  # noqa: E402
import torch._dynamo  # noqa: E402  (reset between compiled-model arms)
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from helpers.core import kernels, provenance  # noqa: E402
from helpers.core.device import device_provenance, resolve_device, set_determinism  # noqa: E402
from helpers.core.registry import activation_factory, available_activations  # noqa: E402
from helpers.models import build_model  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402

#: Arguments of the activations that need some (the papers' values).
ACTIVATION_KWARGS: dict[str, dict[str, Any]] = {
    "lambda_gelu": {"t": 0.1},
    "srelu": {"delta": 0.001},
    "smelu": {"beta": 2.0},
}
#: float32, GPU against CPU: both compute the same formula, in another order and with other
#: libm approximations (erf, exp), so agreement to a few float32 ulps of the values' scale.
F32_TOL = {"rtol": 1e-5, "atol": 1e-5}
#: bf16: the GPU rounds its output (and gradient) to bf16 (8 significant bits), the CPU reference
#: does not, so agreement to bf16 rounding, 2^-8 of the value, and a little for the formula.
BF16_TOL = {"rtol": 1.6e-2, "atol": 1.6e-2}


# ----------------------------------------------------------------------------------- utilities
class Report:
    """The parts' results, written to ``out`` after each part."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path, self.data = out / "gpu_check.json", {}

    def add(self, part: str, value: Any) -> None:
        self.data[part] = value
        self.path.write_text(json.dumps(self.data, indent=1, default=str))
        print(f"== {part} written", flush=True)


def _max_error(got: torch.Tensor, ref: torch.Tensor, tol: dict[str, float]) -> tuple[float, bool]:
    """The largest |got - ref| and whether every element is within ``atol + rtol·|ref|``."""
    got, ref = got.detach().float().cpu(), ref.detach().float().cpu()
    diff = (got - ref).abs()
    ok = bool((diff <= tol["atol"] + tol["rtol"] * ref.abs()).all())
    return float(diff.max()), ok


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ------------------------------------------------------------------------------ 2. agreement
def _forward_backward(
    module: nn.Module, x: torch.Tensor, grad: torch.Tensor, autocast: bool = False
) -> dict[str, torch.Tensor]:
    x = x.detach().clone().requires_grad_(True)
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=autocast):
        y = module(x)
    y.backward(grad.to(y.dtype))
    out = {"output": y, "input grad": x.grad}
    for name, p in module.named_parameters():
        out[f"grad {name}"] = p.grad
    return out


def agreement(device: torch.device) -> list[dict[str, Any]]:
    """Every activation, GPU against CPU: the largest error of each output and whether it is in
    tolerance, per backend and precision."""
    gen = torch.Generator().manual_seed(0)
    # 2^17 elements: above kernels.COMPILE_MIN_NUMEL, so "auto" and "compiled" compile
    x = torch.randn(256, 512, generator=gen) * 3
    grad = torch.randn(256, 512, generator=gen)
    rows = []
    for name in available_activations():
        factory = activation_factory(name, **ACTIVATION_KWARGS.get(name, {}))
        torch.manual_seed(0)
        cpu_module = factory().eval()
        for label, backend, dtype, tol in (
            ("float32, compiled", "compiled", torch.float32, F32_TOL),
            ("float32, eager", "eager", torch.float32, F32_TOL),
            ("bf16, auto", "auto", torch.bfloat16, BF16_TOL),
        ):
            kernels.set_kernel_backend("eager")
            x_in = x.to(dtype).float()  # the same (bf16-rounded) input on both sides
            ref = _forward_backward(copy.deepcopy(cpu_module), x_in, grad)
            kernels.set_kernel_backend(backend)
            row: dict[str, Any] = {"activation": name, "check": label}
            try:
                dev_module = copy.deepcopy(cpu_module).to(device)
                x_dev = x_in.to(device=device, dtype=dtype)
                got = _forward_backward(dev_module, x_dev, grad.to(device), autocast=dtype == torch.bfloat16)
                _sync(device)
                errors = {k: _max_error(got[k], ref[k], tol) for k in ref if ref[k] is not None}
                row["max error"] = {k: e for k, (e, _) in errors.items()}
                row["ok"] = all(ok for _, ok in errors.values())
            except Exception as err:  # noqa: BLE001  (a failing kernel is a finding, not a crash)
                row["ok"], row["error"] = False, f"{type(err).__name__}: {err}"[:500]
            rows.append(row)
            print(f"{name:12s} {label:18s} ok={row['ok']} {row.get('max error', row.get('error'))}", flush=True)
    kernels.set_kernel_backend("auto")
    return rows


# ---------------------------------------------------------------------------- 3. determinism
def _short_resnet(device: torch.device, precision: str, seed: int = 0) -> torch.Tensor:
    set_determinism(device)
    torch.manual_seed(seed)
    model = build_model("resnet18", input_shape=(3, 32, 32), num_classes=10, act=nn.GELU, width_mult=0.25)
    model = model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(5):
        xb = torch.randn(128, 3, 32, 32, generator=gen).to(device)
        yb = torch.randint(0, 10, (128,), generator=gen).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return torch.cat([p.detach().float().flatten().cpu() for p in model.parameters()])


def determinism(device: torch.device) -> list[dict[str, Any]]:
    rows = []
    for precision in ("float32", "bf16"):
        try:
            a, b = _short_resnet(device, precision), _short_resnet(device, precision)
            rows.append(
                {
                    "precision": precision,
                    "bit_identical": bool(torch.equal(a, b)),
                    "max_difference": float((a - b).abs().max()),
                }
            )
        except Exception as err:  # noqa: BLE001
            rows.append({"precision": precision, "error": f"{type(err).__name__}: {err}"[:500]})
        print(rows[-1], flush=True)
    torch.use_deterministic_algorithms(False)  # the throughput part measures the default kernels
    return rows


# ----------------------------------------------------------------------------- 4. throughput
_IMAGES: dict[str, dict[str, Any]] = {
    "fashion_mnist": {"input_shape": (1, 28, 28), "num_classes": 10},
    "cifar10": {"input_shape": (3, 32, 32), "num_classes": 10},
    "tinyimagenet": {"input_shape": (3, 64, 64), "num_classes": 200},
}
_VIT_TINY = {"depth": 12, "dim": 192, "heads": 3}
_CONVNEXT_TINY = {"depths": (3, 3, 9, 3), "dims": (96, 192, 384, 768)}
_GPT2_SMALL = {"layers": 12, "dim": 768, "heads": 12, "block_size": 1024, "vocab_size": 33_278}
#: The paper profile's models (tools.run.all_experiments("paper"), deduplicated): name,
#: build arguments, batch size, and what one example is.
MODELS: tuple[tuple[str, str, dict[str, Any], int, str], ...] = (
    ("MLP 4×256 / Fashion-MNIST", "mlp", {"depth": 4, "width": 256, **_IMAGES["fashion_mnist"]}, 128, "image"),
    ("ResNet-18 / CIFAR-10", "resnet18", {"width_mult": 1.0, **_IMAGES["cifar10"]}, 128, "image"),
    ("ResNet-34 / CIFAR-10", "resnet34", {"width_mult": 1.0, **_IMAGES["cifar10"]}, 128, "image"),
    ("ViT-tiny (patch 4) / CIFAR-10", "vit", {**_VIT_TINY, "patch": 4, **_IMAGES["cifar10"]}, 256, "image"),
    ("DeiT-tiny (patch 8) / TinyImageNet", "vit", {**_VIT_TINY, "patch": 8, **_IMAGES["tinyimagenet"]}, 128, "image"),
    ("ConvNeXt-tiny / CIFAR-10", "convnext", {**_CONVNEXT_TINY, **_IMAGES["cifar10"]}, 256, "image"),
    ("GPT-2 small / WikiText-2", "gpt", _GPT2_SMALL, 8, "token"),
)
ACTIVATIONS: tuple[str, ...] = ("gelu", "relu", "lambda_gelu", "srelu")


def _batch(kwargs: dict[str, Any], batch: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    if "vocab_size" in kwargs:
        tokens = torch.randint(0, kwargs["vocab_size"], (batch, kwargs["block_size"] + 1), device=device)
        return tokens[:, :-1], tokens[:, 1:]
    x = torch.randn(batch, *kwargs["input_shape"], device=device)
    return x, torch.randint(0, kwargs["num_classes"], (batch,), device=device)


def _step_rate(
    model_name: str, kwargs: dict[str, Any], batch: int, act: str, penultimate: str | None, device: torch.device,
    steps: int, warmup: int, compile_model: bool = False, rounds: int = 1,
) -> tuple[float, float]:  # fmt: skip
    """Examples per second of training steps in bf16 autocast (the median over ``rounds`` timed
    blocks of ``steps``), and the seconds of the warm-up."""
    torch.manual_seed(0)
    extra = {} if penultimate is None else {"penultimate_act": activation_factory(penultimate)}
    model = build_model(model_name, act=activation_factory(act, **ACTIVATION_KWARGS.get(act, {})), **kwargs, **extra)
    model = model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x, y = _batch(kwargs, batch, device)
    if compile_model:
        # a fresh Dynamo cache per arm: the earlier arms' frames and recompiles (the benchmark
        # compiles dozens of kernels before this) must not count against this one's limits
        torch._dynamo.reset()
    forward = torch.compile(model) if compile_model else model

    def step() -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16):
            out = forward(x)
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    start = time.perf_counter()
    for _ in range(warmup):
        step()
    _sync(device)
    warm = time.perf_counter() - start
    per_example = y.numel() // batch if y.dim() > 1 else 1
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        _sync(device)
        rates.append(steps * batch * per_example / (time.perf_counter() - start))
    return statistics.median(rates), warm


def throughput(
    device: torch.device,
    steps: int,
    warmup: int,
    deadline: float,
    quick: bool,
    compile_model: bool = False,
    with_flexact: bool = True,
    rounds: int = 1,
) -> list[dict[str, Any]]:
    rows = []
    models = MODELS[:2] if quick else MODELS
    if compile_model:  # compiling a model takes a minute: the two families of the papers' models
        models = tuple(m for m in models if m[1] in ("resnet18", "gpt"))
    for label, model_name, kwargs, batch, unit in models:
        arms: list[tuple[str, str, str | None]] = [(a, a, None) for a in ACTIVATIONS]
        if model_name in ("resnet18", "resnet34") and with_flexact:
            arms.append(("flexact (penultimate)", "relu", "flexact"))
        base = None
        for arm, act, penultimate in arms:
            if time.monotonic() > deadline:
                rows.append({"model": label, "activation": arm, "skipped": "time budget spent"})
                continue
            try:
                with provenance.recording() as used:  # which kernel backend each activation ran
                    rate, warm = _step_rate(
                        model_name,
                        kwargs,
                        batch if not quick else 16,
                        act,
                        penultimate,
                        device,
                        steps,
                        warmup,
                        compile_model,
                        rounds,
                    )
                base = rate if arm == "gelu" else base
                row = {"model": label, "activation": arm, f"{unit}s_per_s": rate, "warmup_s": warm}
                row["kernel_backends"] = {k: sorted(v) for k, v in used["backends"].items()}
                row["compiled_model"] = compile_model
                row["time_vs_gelu"] = (base / rate) if base else None
            except Exception as err:  # noqa: BLE001
                row = {"model": label, "activation": arm, "error": f"{type(err).__name__}: {err}"[:500]}
            rows.append(row)
            print(row, flush=True)
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return rows


# ------------------------------------------------------------------------- 4b. one kernel call
def kernel_calls(device: torch.device, repeats: int = 50) -> list[dict[str, Any]]:
    """Microseconds of one forward + backward of each activation on a ResNet-sized bf16 tensor
    (128 × 64 × 32 × 32), per kernel backend: what a training step pays per activation site."""
    rows = []
    x0 = torch.randn(128, 64, 32, 32, device=device, dtype=torch.bfloat16)
    grad = torch.randn_like(x0)
    for name in ("gelu", "relu", "lambda_gelu", "srelu", "smelu"):
        for backend in ("compiled", "eager"):
            kernels.set_kernel_backend(backend)
            module = activation_factory(name, **ACTIVATION_KWARGS.get(name, {}))().to(device)
            x = x0.clone().requires_grad_(True)
            try:
                for _ in range(5):
                    module(x).backward(grad)
                _sync(device)
                start = time.perf_counter()
                for _ in range(repeats):
                    module(x).backward(grad)
                _sync(device)
            except Exception as err:  # noqa: BLE001  (one kernel's failure is a finding; measure the rest)
                rows.append({"activation": name, "backend": backend, "error": f"{type(err).__name__}: {err}"[:500]})
                continue
            rows.append(
                {"activation": name, "backend": backend, "us_per_call": 1e6 * (time.perf_counter() - start) / repeats}
            )
            print(rows[-1], flush=True)
    kernels.set_kernel_backend("auto")
    return rows


# ---------------------------------------------------------------------------- 5. end to end
E2E_CONFIG = {
    "experiment": "gpu_check",
    "dataset": "adult",
    "model": "mlp",
    "profile": "smoke",
    "activation": "lambda_gelu",
    "activation_kwargs": {"t": 0.1},
    "hardness_lr_mult": 9.0,
    "init_mode": "uniform",
    "anneal_target": 160.0,
    "n_train": 2048,
    "n_val": 512,
    "epochs": 4,
    "batch_size": 128,
}


def end_to_end(device: torch.device) -> dict[str, Any]:
    """The training CLI on the GPU (eager, and through ``torch.compile(model)`` with
    ``REPRO_COMPILE_MODEL=1``) and on the CPU; histories compared at the rerun tolerance, and each
    arm's training seconds (compilation included)."""
    from tools.verify_rerun import float_tolerance

    out: dict[str, Any] = {"config": E2E_CONFIG}
    histories, seconds = {}, {}
    gpu = device.type == "cuda"
    arms = [("cuda", "cuda", "0"), ("cuda compiled", "cuda", "1")] if gpu else []
    arms.append(("cpu", "cpu", "0"))
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "config.json"
        cfg.write_text(json.dumps(E2E_CONFIG))
        for label, where, compiled in arms:
            results = Path(tmp) / label.replace(" ", "_")
            env = {
                **os.environ,
                "REPRO_DEVICE": where,
                "REPRO_RESULTS_DIR": str(results),
                "REPRO_QUIET": "1",
                "REPRO_COMPILE_MODEL": compiled,
            }
            done = subprocess.run(
                [sys.executable, "-m", "tools.train_distributed", "--config-json", str(cfg)],
                env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            if done.returncode != 0:
                out[f"{label} error"] = done.stderr[-2000:]
                continue
            (path,) = results.rglob("*.json")
            result = json.loads(path.read_text())
            histories[label], seconds[label] = result["history"], result.get("train_seconds")
            out[f"{label} provenance"] = {k: v for k, v in result.get("provenance", {}).items() if k != "packages"}
    if "cpu" not in histories:
        return out
    steps = E2E_CONFIG["epochs"] * -(-E2E_CONFIG["n_train"] // E2E_CONFIG["batch_size"])
    out["tolerance"] = float_tolerance(steps)
    out["train_seconds"] = seconds
    for label in [a[0] for a in arms if a[0] != "cpu" and a[0] in histories]:
        pairs = list(zip(histories[label], histories["cpu"]))
        worst = max(abs(a[k] - b[k]) / max(abs(b[k]), 1e-12) for a, b in pairs for k in ("train_loss", "val_loss"))
        out["max_relative_difference" if label == "cuda" else f"max_relative_difference ({label})"] = worst
    if not gpu:
        out["max_relative_difference"] = 0.0
    out["histories"] = histories
    return out


# -------------------------------------------------------------------------------------- main
def _markdown(data: dict[str, Any]) -> str:
    lines = ["# GPU check", "", "```", json.dumps(data.get("environment", {}), indent=1), "```", ""]
    rows = data.get("agreement", [])
    bad = [r for r in rows if not r.get("ok")]
    lines += [f"## Agreement with the CPU: {len(rows) - len(bad)} of {len(rows)} checks within tolerance", ""]
    lines += [f"- {r['activation']} ({r['check']}): {r.get('error') or r.get('max error')}" for r in bad]
    lines += ["", "## Determinism (ResNet-18/4, 5 steps twice)", ""]
    lines += [f"- {r}" for r in data.get("determinism", [])]
    lines += [
        "",
        "## Throughput, bf16 autocast, training steps",
        "",
        "| model | activation | per second | time vs GELU | kernels |",
    ]
    lines += ["| --- | --- | --- | --- | --- |"]
    for r in [*data.get("throughput", []), *data.get("throughput_compiled_model", [])]:
        rate = r.get("images_per_s") or r.get("tokens_per_s")
        ratio = r.get("time_vs_gelu")
        shown = (
            f"{rate:,.0f} {'images' if 'images_per_s' in r else 'tokens'}"
            if rate
            else r.get("error") or r.get("skipped")
        )
        model = r["model"] + (" (torch.compile(model))" if r.get("compiled_model") else "")
        used = ", ".join(f"{k}: {'+'.join(v)}" for k, v in r.get("kernel_backends", {}).items())
        lines.append(f"| {model} | {r['activation']} | {shown} | {f'{ratio:.3f}x' if ratio else ''} | {used} |")
    calls = data.get("kernel_calls", [])
    if isinstance(calls, list) and calls:
        lines += ["", "## One activation call, forward + backward, 128×64×32×32 bf16 (µs)", ""]
        gelu = {r["backend"]: r["us_per_call"] for r in calls if r["activation"] == "gelu" and "us_per_call" in r}
        for r in calls:
            if "us_per_call" not in r:
                lines.append(f"- {r['activation']} ({r['backend']}): {r.get('error')}")
                continue
            base = gelu.get(r["backend"])
            vs = f" ({r['us_per_call'] / base:.2f}x GELU)" if base else ""
            lines.append(f"- {r['activation']} ({r['backend']}): {r['us_per_call']:.0f}{vs}")
    e2e = data.get("end_to_end", {})
    if e2e:
        lines += ["", "## End to end (train_distributed, Adult, λ-GELU annealed)", ""]
        worst, tol = e2e.get("max_relative_difference"), e2e.get("tolerance")
        lines.append(f"max relative difference GPU vs CPU: {worst}; float32 rerun tolerance {tol}")
        compiled = e2e.get("max_relative_difference (cuda compiled)")
        if compiled is not None:
            lines.append(f"REPRO_COMPILE_MODEL=1 on the GPU vs CPU: {compiled}")
        lines.append(f"training seconds per arm (compilation included): {e2e.get('train_seconds')}")
        lines += [f"- {k}: {v}" for k, v in e2e.items() if k.endswith("error")]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--out", type=Path, default=Path("gpu_check_out"), help="folder for gpu_check.json and gpu_check.md"
    )
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (to test the script)")
    parser.add_argument("--budget-s", type=float, default=420.0, help="stop starting new throughput runs after this")
    parser.add_argument("--steps", type=positive_int_arg("--steps"), default=10, help="timed training steps per round")
    parser.add_argument(
        "--warmup", type=positive_int_arg("--warmup"), default=3, help="untimed steps first (compilation, autotuning)"
    )
    parser.add_argument(
        "--rounds", type=positive_int_arg("--rounds"), default=1, help="timed rounds per arm; the median is reported"
    )
    parser.add_argument("--quick", action="store_true", help="two small models, batch 16: to test the script")
    # Flex-Act's mixture samples per call and costs most of a lease's warm-up; leaving it out
    # measures the others sooner
    parser.add_argument("--no-flexact", action="store_true", help="leave out the Flex-Act arms")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip (agreement, determinism, ...)")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.budget_s
    device = resolve_device(args.device)
    skip = set(filter(None, args.skip.split(",")))
    report = Report(args.out)
    env = {"torch": torch.__version__, **device_provenance(device)}
    if device.type == "cuda":
        env["capability"] = torch.cuda.get_device_capability(device)
        env["bf16"] = torch.cuda.is_bf16_supported()
    report.add("environment", env)
    # the per-call timings first: they resolve the 1.10x question in seconds, whatever the lease
    # leaves for the rest
    parts: dict[str, Callable[[], Any]] = {
        "kernel_calls": lambda: kernel_calls(device),
        "agreement": lambda: agreement(device),
        "determinism": lambda: determinism(device),
        "throughput": lambda: throughput(
            device,
            args.steps,
            args.warmup,
            deadline,
            args.quick,
            with_flexact=not args.no_flexact,
            rounds=args.rounds,
        ),
        "throughput_compiled_model": lambda: throughput(
            device,
            args.steps,
            args.warmup,
            deadline,
            args.quick,
            compile_model=True,
            with_flexact=not args.no_flexact,
            rounds=args.rounds,
        ),
        "end_to_end": lambda: end_to_end(device),
    }
    for name, part in parts.items():
        if name in skip:
            continue
        started = time.monotonic()
        try:
            report.add(name, part())
        except Exception as err:  # noqa: BLE001  (keep the other parts' results)
            report.add(name, {"error": f"{type(err).__name__}: {err}"[:2000]})
        print(f"== {name}: {time.monotonic() - started:.0f} s", flush=True)
    (args.out / "gpu_check.md").write_text(_markdown(report.data))
    print((args.out / "gpu_check.md").read_text())


if __name__ == "__main__":
    main()
