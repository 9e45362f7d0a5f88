"""Bad inputs at every public entry point, and faults injected into files the book reads.

The table ``CASES`` holds one row per bad input: an id, the call, the exception type and a
fragment of its message (the message must name the argument or variable and what is allowed).
The point is the class of failure: nothing that is wrong may pass silently or fail deep inside
torch, pathlib or gzip with a message that names neither the argument nor the file.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Callable
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

from helpers.activations import FlexAct, LambdaGELU, SReLU, get_activation, lambda_gelu, srelu
from helpers.core import kernels
from helpers.core.runtime import bool_env, cache_root, current_profile, quiet, results_root, train_threads, under_ci
from helpers.lambda_gelu import kernels as lgelu_kernels
from helpers.models import GPT, MLP, ConvNeXt, ResNet, ViT, build_model, replace_activations
from tools.run import main as protocols_main
from tools.run import parse_shard


class CliError(Exception):
    """argparse's exit, with what it printed."""


def _cli(argv: list[str]) -> None:
    buffer = io.StringIO()
    try:
        with redirect_stderr(buffer):
            protocols_main(argv)
    except SystemExit as err:
        raise CliError(buffer.getvalue()) from err


def _offline() -> bool:
    from helpers.core.data.sources import offline

    return offline()


def _verify_setting() -> bool:
    from helpers.core.data.sources import verification_enabled

    return verification_enabled()


def _train_config(**fields: object) -> object:
    from helpers.core.runs import TrainConfig

    return TrainConfig(**{"experiment": "t", "dataset": "adult", "model": "mlp", **fields})


x = torch.linspace(-3, 3, 7)
ints = torch.tensor([1, -1])

# (id, call, exception type, message fragment, environment to set)
Case = tuple[str, Callable[[], object], type[BaseException], str, dict[str, str]]
CASES: list[Case] = [
    # ---------------------------------------------------------------- lambda_gelu
    ("lgelu-x-list", lambda: lambda_gelu([1.0], 2.0), TypeError, "x must be a torch.Tensor", {}),
    ("lgelu-x-int", lambda: lambda_gelu(ints, 2.0), TypeError, "floating-point", {}),
    ("lgelu-x-bool", lambda: lambda_gelu(torch.tensor([True]), 2.0), TypeError, "torch.bool", {}),
    ("lgelu-lam-str", lambda: lambda_gelu(x, "2"), TypeError, "lam must be a finite number >= 1", {}),
    ("lgelu-lam-bool", lambda: lambda_gelu(x, True), TypeError, "a bool is not a number", {}),
    ("lgelu-lam-below-1", lambda: lambda_gelu(x, 0.5), ValueError, "lam must be a finite number >= 1", {}),
    ("lgelu-lam-nan", lambda: lambda_gelu(x, float("nan")), ValueError, "got nan (not finite)", {}),
    ("lgelu-lam-inf", lambda: lambda_gelu(x, float("inf")), ValueError, "got inf (not finite)", {}),
    ("lgelu-lam-over-float32", lambda: lambda_gelu(x, 1e39), ValueError, "largest torch.float32", {}),
    (
        "lgelu-lam-tensor-inf",
        lambda: lambda_gelu(torch.zeros(3), torch.tensor(float("inf"))),
        ValueError,
        "finite lam",
        {},
    ),
    ("lgelu-lam-tensor-nan", lambda: lambda_gelu(x, torch.tensor(float("nan"))), ValueError, "got nan", {}),
    ("lgelu-lam-tensor-below-1", lambda: lambda_gelu(x, torch.full((7,), 0.9)), ValueError, "got 0.9", {}),
    (
        "lgelu-lam-tensor-f64-overflows",
        lambda: lambda_gelu(x, torch.tensor(1e39, dtype=torch.float64)),
        ValueError,
        "finite lam",
        {},
    ),
    ("lgelu-lam-tensor-shape", lambda: lambda_gelu(x, torch.ones(3)), ValueError, "does not broadcast", {}),
    ("lgelu-lam-tensor-enlarges", lambda: lambda_gelu(x, torch.ones(2, 7) * 2), ValueError, "does not broadcast", {}),
    ("lgelu-lam-tensor-bool", lambda: lambda_gelu(x, torch.tensor(True)), TypeError, "real tensor", {}),
    # ---------------------------------------------------------------- LambdaGELU
    ("LGELU-int-input", lambda: LambdaGELU(lam_init=5)(ints), TypeError, "floating-point", {}),
    ("LGELU-t-zero", lambda: LambdaGELU(t=0), ValueError, "t must be a finite number > 0", {}),
    ("LGELU-t-str", lambda: LambdaGELU(t="0.1"), ValueError, "t must be", {}),
    ("LGELU-granularity", lambda: LambdaGELU(granularity="pixel"), ValueError, "granularity must be one of", {}),
    ("LGELU-channel-no-count", lambda: LambdaGELU(granularity="channel"), ValueError, "needs num_channels", {}),
    ("LGELU-lam-init-1", lambda: LambdaGELU(lam_init=1.0), ValueError, "> 1", {}),
    ("LGELU-lam-init-huge", lambda: LambdaGELU(lam_init=1e39), ValueError, "overflows float32", {}),
    ("LGELU-both-inits", lambda: LambdaGELU(lam_init=2.0, s_init=0.0), ValueError, "not both", {}),
    (
        "LGELU-fixed-below-1",
        lambda: LambdaGELU(fixed_lambda=0.5),
        ValueError,
        "fixed_lambda must be a finite number >= 1",
        {},
    ),
    ("LGELU-fixed-inf", lambda: LambdaGELU(fixed_lambda=float("inf")), ValueError, "fixed_lambda", {}),
    ("LGELU-s-init-nan", lambda: LambdaGELU(s_init=float("nan")), ValueError, "s_init must be a finite number", {}),
    ("LGELU-channel-dim-bool", lambda: LambdaGELU(channel_dim=True), ValueError, "channel_dim must be an int", {}),
    (
        "LGELU-channel-mismatch",
        lambda: LambdaGELU(granularity="channel", num_channels=3)(torch.ones(2, 4, 5)),
        ValueError,
        "num_channels=3",
        {},
    ),
    (
        "LGELU-neuron-mismatch",
        lambda: LambdaGELU(granularity="neuron", neuron_shape=5)(torch.ones(2, 4)),
        ValueError,
        "neuron_shape",
        {},
    ),
    ("LGELU-set-lambda-1", lambda: LambdaGELU().set_lambda(1.0), ValueError, "> 1", {}),
    # ---------------------------------------------------------------- srelu / SReLU
    ("srelu-x-list", lambda: srelu([0.0], 0.1), TypeError, "x must be a torch.Tensor", {}),
    ("srelu-x-int", lambda: srelu(ints, 0.1), TypeError, "floating dtype", {}),
    ("srelu-delta-zero", lambda: srelu(x, 0.0), ValueError, "srelu.delta must be a finite number > 0", {}),
    ("srelu-delta-negative", lambda: srelu(x, -1.0), ValueError, "got -1.0", {}),
    ("srelu-delta-nan", lambda: srelu(x, float("nan")), ValueError, "got nan (not finite)", {}),
    ("srelu-delta-inf", lambda: srelu(x, float("inf")), ValueError, "got inf (not finite)", {}),
    ("srelu-delta-subnormal", lambda: srelu(x, 1e-40), ValueError, "normal torch.float32 range", {}),
    ("srelu-delta-huge", lambda: srelu(x, 1e39), ValueError, "normal torch.float32 range", {}),
    ("srelu-delta-bool", lambda: srelu(x, True), TypeError, "a bool is not a number", {}),
    ("srelu-delta-str", lambda: srelu(x, "0.1"), TypeError, "delta must be", {}),
    ("srelu-delta-int-tensor", lambda: srelu(x, torch.tensor(1)), TypeError, "floating dtype", {}),
    ("srelu-delta-tensor-zero", lambda: srelu(x, torch.tensor([0.0])), ValueError, "everywhere", {}),
    (
        "srelu-delta-tensor-subnormal",
        lambda: srelu(x, torch.tensor(1e-40, dtype=torch.float64)),
        ValueError,
        "normal torch.float32 range",
        {},
    ),
    ("srelu-delta-tensor-enlarges", lambda: srelu(x, torch.full((2, 7), 0.1)), ValueError, "enlarge", {}),
    (
        "srelu-derivative-delta",
        lambda: __import__("helpers.srelu.activation", fromlist=["x"]).srelu_derivative(x, 1e-40),
        ValueError,
        "normal torch.float32 range",
        {},
    ),
    ("SReLU-tensor-delta", lambda: SReLU(torch.tensor(0.1)), TypeError, "SReLU.delta must be a finite number", {}),
    ("SReLU-delta-zero", lambda: SReLU(0.0), ValueError, "SReLU.delta must be a finite number > 0; got 0.0", {}),
    ("SReLU-delta-subnormal", lambda: SReLU(1e-40), ValueError, "normal torch.float32 range", {}),
    ("SReLU-learnable-int", lambda: SReLU(0.1, learnable=1), TypeError, "learnable must be True or False; got 1", {}),
    ("SReLU-int-input", lambda: SReLU(0.1)(ints), TypeError, "floating dtype", {}),
    # ---------------------------------------------------------------- FlexAct / get_activation
    ("FlexAct-single-name", lambda: FlexAct("relu"), TypeError, "wrap it in a tuple", {}),
    ("FlexAct-empty", lambda: FlexAct(()), ValueError, "at least one candidate", {}),
    ("FlexAct-unknown", lambda: FlexAct(("relu", "swishy")), ValueError, "unknown activation 'swishy'", {}),
    ("FlexAct-duplicate", lambda: FlexAct(("relu", "relu")), ValueError, "duplicate candidate names", {}),
    ("FlexAct-inplace", lambda: FlexAct((nn.ReLU(inplace=True), nn.Tanh())), ValueError, "in-place", {}),
    ("FlexAct-tau-zero", lambda: FlexAct(tau=0), ValueError, "tau", {}),
    ("FlexAct-tau-str", lambda: FlexAct(tau="1"), TypeError, "tau", {}),
    ("FlexAct-hard-int", lambda: FlexAct(hard=1), TypeError, "hard must be True or False; got 1", {}),
    ("FlexAct-eval-mode", lambda: FlexAct(eval_mode="mean"), ValueError, "eval_mode must be one of", {}),
    ("FlexAct-logits-length", lambda: FlexAct(init_logits=[0.0, 1.0]), ValueError, "init_logits must be 5", {}),
    ("FlexAct-logits-nan", lambda: FlexAct(init_logits=[0, 0, 0, 0, float("nan")]), ValueError, "finite", {}),
    ("FlexAct-int-input", lambda: FlexAct()(ints), TypeError, "floating-point", {}),
    ("FlexAct-list-input", lambda: FlexAct()([1.0]), TypeError, "expects a tensor", {}),
    ("get-activation-int", lambda: get_activation(3), TypeError, "must be a string", {}),
    ("get-activation-unknown", lambda: get_activation("gelu2"), ValueError, "known: celu, elu", {}),
    (
        "get-activation-kwargs",
        lambda: get_activation("relu", delta=0.1),
        TypeError,
        "bad arguments for activation 'relu'",
        {},
    ),
    (
        "get-activation-bad-value",
        lambda: get_activation("srelu", delta=-1),
        ValueError,
        "SReLU.delta must be a finite number > 0; got -1",
        {},
    ),
    # ---------------------------------------------------------------- models
    (
        "ResNet-zero-blocks",
        lambda: ResNet(blocks=(0, 0, 0, 0)),
        ValueError,
        "sequence of ints >= 1; got (0, 0, 0, 0)",
        {},
    ),
    ("ResNet-short-blocks", lambda: ResNet(blocks=(2, 2, 2)), ValueError, "exactly 4 entries", {}),
    ("ResNet-long-blocks", lambda: ResNet(blocks=(2, 2, 2, 2, 2)), ValueError, "exactly 4 entries", {}),
    ("ResNet-blocks-int", lambda: ResNet(blocks=2), ValueError, "blocks must be a non-empty sequence of ints", {}),
    (
        "ResNet-width-inf",
        lambda: ResNet(width_mult=float("inf")),
        ValueError,
        "width_mult must be a finite number > 0",
        {},
    ),
    ("ResNet-width-zero", lambda: ResNet(width_mult=0), ValueError, "width_mult", {}),
    ("ResNet-channels", lambda: ResNet(in_channels=0), ValueError, "in_channels must be an int >= 1; got 0", {}),
    ("ResNet-act-instance", lambda: ResNet(act=nn.ReLU()), TypeError, "not the module instance", {}),
    (
        "ResNet-penultimate",
        lambda: ResNet(penultimate_act=3),
        TypeError,
        "penultimate_act must be a Callable, or None; got 3",
        {},
    ),
    ("MLP-depth", lambda: MLP(4, 2, depth=0), ValueError, "MLP.depth must be an int >= 1; got 0", {}),
    ("ViT-patch", lambda: ViT(image_size=30, patch=4), ValueError, "divisible by patch", {}),
    ("ViT-heads", lambda: ViT(dim=10, heads=3), ValueError, "divisible by heads", {}),
    ("ViT-dropout", lambda: ViT(dropout=1.0), ValueError, "dropout must be a finite number >= 0 and < 1; got 1.0", {}),
    ("ViT-mlp-ratio", lambda: ViT(mlp_ratio=0), ValueError, "mlp_ratio must be a finite number > 0", {}),
    ("GPT-heads", lambda: GPT(50, dim=10, heads=3), ValueError, "divisible by heads", {}),
    ("GPT-vocab", lambda: GPT(0), ValueError, "GPT.vocab_size must be an int >= 1; got 0", {}),
    ("ConvNeXt-lengths", lambda: ConvNeXt(depths=(1, 1), dims=(8, 16, 32)), ValueError, "equally long", {}),
    (
        "ConvNeXt-zero-depth",
        lambda: ConvNeXt(depths=(1, 0), dims=(8, 16)),
        ValueError,
        "depths must be a non-empty sequence of ints >= 1; got (1, 0)",
        {},
    ),
    (
        "build-model-unknown",
        lambda: build_model("resnet50", input_shape=(3, 32, 32), num_classes=10),
        ValueError,
        "choose one of",
        {},
    ),
    (
        "build-model-shape",
        lambda: build_model("resnet18", input_shape=(32, 32), num_classes=10),
        ValueError,
        "needs input_shape (C, H, W)",
        {},
    ),
    (
        "build-model-vit-nonsquare",
        lambda: build_model("vit", input_shape=(3, 32, 16), num_classes=10),
        ValueError,
        "square",
        {},
    ),
    ("build-model-gpt-vocab", lambda: build_model("gpt"), ValueError, "needs vocab_size", {}),
    ("replace-not-model", lambda: replace_activations("model", nn.ReLU), TypeError, "model must be an nn.Module", {}),
    (
        "replace-not-callable",
        lambda: replace_activations(MLP(2, 2, depth=1, width=2), 3),
        TypeError,
        "factory must be callable",
        {},
    ),
    (
        "replace-non-module",
        lambda: replace_activations(MLP(2, 2, depth=1, width=2), lambda: 3),
        TypeError,
        "not nn.Module",
        {},
    ),
    (
        "replace-shared-module",
        lambda: replace_activations(MLP(2, 2, depth=2, width=2), (lambda m: lambda: m)(nn.ReLU())),
        ValueError,
        "same ReLU object",
        {},
    ),
    (
        "replace-no-site",
        lambda: replace_activations(MLP(2, 2, depth=1, width=2), nn.ReLU, types=(nn.Tanh,)),
        ValueError,
        "no activation site",
        {},
    ),
    (
        "replace-bad-types",
        lambda: replace_activations(MLP(2, 2, depth=1, width=2), nn.ReLU, types=nn.GELU),
        TypeError,
        "types must be a non-empty tuple",
        {},
    ),
    # ---------------------------------------------------------------- the protocols CLI
    ("shard-5/2", lambda: parse_shard("5/2"), ValueError, "0 <= i < n", {}),
    ("shard-0/0", lambda: parse_shard("0/0"), ValueError, "n >= 1", {}),
    ("shard-words", lambda: parse_shard("a/b"), ValueError, "i/n with integers", {}),
    ("shard-one-number", lambda: parse_shard("1"), ValueError, "i/n with integers", {}),
    ("shard-negative", lambda: parse_shard("-1/2"), ValueError, "0 <= i < n", {}),
    ("cli-shard", lambda: _cli(["srelu_delta", "--profile", "smoke", "--shard", "0/0"]), CliError, "--shard", {}),
    (
        "cli-threads",
        lambda: _cli(["srelu_delta", "--profile", "smoke", "--threads", "0"]),
        CliError,
        "--threads must be a positive integer",
        {},
    ),
    ("cli-profile", lambda: _cli(["srelu_delta", "--profile", "gpu"]), CliError, "invalid choice: 'gpu'", {}),
    ("cli-only", lambda: _cli(["srelu_delta", "--profile", "smoke", "--only", "swish"]), CliError, "swish", {}),
    ("cli-experiment", lambda: _cli(["lgelu_tabel1"]), CliError, "invalid choice", {}),
    # ---------------------------------------------------------------- environment variables
    ("env-offline-false-word", _offline, ValueError, "REPRO_OFFLINE='maybe'", {"REPRO_OFFLINE": "maybe"}),
    ("env-quiet-2", quiet, ValueError, "REPRO_QUIET='2' is not a boolean", {"REPRO_QUIET": "2"}),
    ("env-verify", _verify_setting, ValueError, "REPRO_VERIFY_DATA", {"REPRO_VERIFY_DATA": "perhaps"}),
    ("env-cache-empty", cache_root, ValueError, "REPRO_CACHE_DIR is set but empty", {"REPRO_CACHE_DIR": " "}),
    (
        "env-cache-file",
        cache_root,
        ValueError,
        "REPRO_CACHE_DIR='/etc/hostname' is an existing file",
        {"REPRO_CACHE_DIR": "/etc/hostname"},
    ),
    # empty, like REPRO_CACHE_DIR: not a silent fall-back to the committed results/
    (
        "env-results-empty",
        lambda: results_root("cpu"),
        ValueError,
        "REPRO_RESULTS_DIR is set but empty",
        {"REPRO_RESULTS_DIR": ""},
    ),
    (
        "env-results-blank-smoke",
        lambda: results_root("smoke"),
        ValueError,
        "REPRO_RESULTS_DIR is set but empty",
        {"REPRO_RESULTS_DIR": " "},
    ),
    (
        "env-results-file",
        lambda: results_root("cpu"),
        ValueError,
        "REPRO_RESULTS_DIR",
        {"REPRO_RESULTS_DIR": "/etc/hostname"},
    ),
    (
        "env-threads",
        train_threads,
        ValueError,
        "REPRO_TRAIN_THREADS must be a positive integer",
        {"REPRO_TRAIN_THREADS": "0"},
    ),
    # int() reads both as numbers (10 and 3): the probe's cases
    ("env-threads-underscore", train_threads, ValueError, "ASCII digits", {"REPRO_TRAIN_THREADS": "1_0"}),
    ("env-threads-arabic-digit", train_threads, ValueError, "ASCII digits", {"REPRO_TRAIN_THREADS": "\u0663"}),
    ("env-profile", current_profile, ValueError, "REPRO_PROFILE", {"REPRO_PROFILE": "gpu"}),
    ("env-ci-word", under_ci, ValueError, "CI='maybe' is not a boolean", {"CI": "maybe"}),
    ("env-ci-quiet", quiet, ValueError, "CI='yes please'", {"CI": "yes please", "REPRO_QUIET": "0"}),
    # ---------------------------------------------------- run configs (every field: test_config_validation.py)
    (
        "config-min-lr-negative",
        lambda: _train_config(schedule="cosine", min_lr=-1.0),
        ValueError,
        "TrainConfig.min_lr must be a finite number >= 0",
        {},
    ),
    (
        "config-min-lr-above-lr",
        lambda: _train_config(schedule="cosine", min_lr=1.0),
        ValueError,
        "min_lr must be <= lr",
        {},
    ),
    ("config-epochs-bool", lambda: _train_config(epochs=True), ValueError, "a bool is not a number", {}),
    (
        "config-grad-norm-nan",
        lambda: _train_config(max_grad_norm=float("nan")),
        ValueError,
        "TrainConfig.max_grad_norm",
        {},
    ),
    (
        "config-experiment-path",
        lambda: _train_config(experiment="../elsewhere"),
        ValueError,
        "TrainConfig.experiment must be a folder name",
        {},
    ),
]


def test_bad_input_is_rejected_with_a_message(monkeypatch):
    """Every case of :data:`CASES` raises its error with its message; one test lists every failure."""
    problems = []
    for case_id, call, error, fragment, env in CASES:
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            try:
                call()
                problems.append(f"{case_id}: accepted")
            except error as err:
                if fragment not in str(err):
                    problems.append(f"{case_id}: {fragment!r} not in {str(err)[:300]!r}")
            except Exception as err:  # noqa: BLE001 - the wrong error type is a failure to list
                problems.append(
                    f"{case_id}: {type(err).__name__} instead of {getattr(error, '__name__', error)}: {str(err)[:300]}"
                )
    assert len(CASES) > 50 and not problems, "\n".join(problems)


def test_every_case_id_is_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_bool_env_spellings(monkeypatch):
    spellings = [
        ("1", True),
        ("TRUE", True),
        ("yes", True),
        (" On ", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
        ("", True),
    ]
    problems = []
    for raw, expected in spellings:
        with monkeypatch.context() as m:
            m.setenv("REPRO_SOME_FLAG", raw)
            try:
                got = bool_env("REPRO_SOME_FLAG", True)
            except Exception as err:  # noqa: BLE001 - an error is a failure to list
                problems.append(f"REPRO_SOME_FLAG={raw!r}: {type(err).__name__}: {str(err)[:300]}")
                continue
            if got is not expected:
                problems.append(f"REPRO_SOME_FLAG={raw!r}: {got!r} instead of {expected!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["REPRO_OFFLINE", "REPRO_QUIET"])
def test_false_means_false(name, monkeypatch):
    """``REPRO_OFFLINE=false`` used to mean true (any non-empty value other than 0 did)."""
    monkeypatch.setenv(name, "false")
    monkeypatch.delenv("CI", raising=False)
    assert (_offline() if name == "REPRO_OFFLINE" else quiet()) is False


# ------------------------------------------------------------------------ dtypes and overflow
def test_integer_input_never_changes_a_parameter_dtype():
    m = LambdaGELU(lam_init=5)
    with pytest.raises(TypeError):
        m(ints)
    assert m.s.dtype == torch.float32
    assert torch.allclose(m.lam, torch.tensor(5.0))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_compute_in_float32_and_cast_only_the_output(dtype):
    h = torch.linspace(-4, 4, 33)
    y = lambda_gelu(h.to(dtype), 1e5)  # λ = 1e5 is inf in float16
    assert y.dtype == dtype and torch.isfinite(y).all()
    assert torch.equal(y, lambda_gelu(h, 1e5).to(dtype))
    m = LambdaGELU(lam_init=3.0)
    out = m(h.to(dtype))
    assert out.dtype == dtype and m.s.dtype == torch.float32
    out.float().sum().backward()
    assert m.s.grad is not None and m.s.grad.dtype == torch.float32 and torch.isfinite(m.s.grad)
    ys = srelu(h.to(dtype), 1e-6)  # 1/δ overflows float16
    assert ys.dtype == dtype and torch.equal(ys, srelu(h, 1e-6).to(dtype))
    f = FlexAct()
    yf = f(h.to(dtype))
    assert yf.dtype == dtype and f.logits.dtype == torch.float32 and torch.isfinite(yf).all()


def test_huge_lambda_is_right_on_every_path():
    """Non-contiguous input takes the eager path, which overflowed at λ = 3e38."""
    base = torch.tensor([[1.0, -1.0], [2.0, -2.0], [0.0, 1e-30]])
    xs = base.t()  # non-contiguous
    assert not xs.is_contiguous()
    for lam in (3e38, torch.tensor(3e38)):
        y = lambda_gelu(xs, lam)
        assert torch.equal(y, torch.relu(xs))
        assert torch.equal(lambda_gelu(xs.contiguous(), lam), y)
    xr = xs.clone().requires_grad_()
    lam = torch.tensor(3e38, requires_grad=True)
    kernels.set_kernel_backend("eager")
    try:
        y = lambda_gelu(xr, lam)
        y.sum().backward()
    finally:
        kernels.set_kernel_backend("auto")
    assert torch.isfinite(xr.grad).all() and torch.isfinite(lam.grad)
    # d/dx x·Φ(λx) is 1 or 0 wherever λx is huge, and Φ(0) = 1/2 at x = 0
    assert torch.equal(xr.grad, torch.where(xs == 0, 0.5, (xs > 0).float()))


def test_eager_float32_values_are_unchanged_where_nothing_overflows():
    """The overflow fix selects new values only where λx is infinite: elsewhere bit for bit."""
    g = torch.Generator().manual_seed(0)
    h = torch.randn(1000, generator=g) * 5
    lam = torch.tensor(7.5)
    assert torch.equal(lgelu_kernels._eager_forward(h, lam), F.gelu(h * lam) / lam)
    grad = torch.randn(1000, generator=g)
    assert torch.equal(lgelu_kernels._eager_grad_x(grad, h, lam), torch.ops.aten.gelu_backward(grad, h * lam))


def test_smallest_accepted_delta_is_finite_everywhere():
    from helpers.srelu.activation import delta_range

    lo, hi = delta_range(torch.float32)
    h = torch.tensor([-1.0, -lo, 0.0, lo, 1.0])
    for delta in (lo, hi):
        assert torch.isfinite(srelu(h, delta)).all()


# ------------------------------------------------------------------------ checkpoints
def _training(seed: int = 3):
    from torch.utils.data import TensorDataset

    from helpers.core.data import make_loader

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(0)
    xs, ys = torch.randn(64, 4, generator=g), torch.randint(0, 2, (64,), generator=g)
    model = MLP(4, 2, depth=1, width=8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return (
        model,
        make_loader(TensorDataset(xs, ys), 16, True, seed=1),
        make_loader(TensorDataset(xs, ys), 32, False),
        opt,
    )


class _NumpyDraws:
    """A hook that draws from NumPy's global RNG, so a resumed run must restore that state."""

    def on_epoch_start(self, epoch, model):
        with torch.no_grad():
            model.head.bias.add_(float(np.random.uniform(-1e-3, 1e-3)))


def _fit(ckpt: Path | None, epochs: int, seed: int = 3, np_seed: int = 0) -> tuple[dict, list[torch.Tensor]]:
    from helpers.core.train import fit

    model, train, val, opt = _training(seed)
    np.random.seed(np_seed)
    out = fit(
        model,
        train,
        val,
        optimizer=opt,
        epochs=epochs,
        task="classification",
        hooks=[_NumpyDraws()],
        checkpoint_path=ckpt,
    )
    return out, [p.detach().clone() for p in model.parameters()]


def test_killed_run_resumed_equals_uninterrupted_and_loads_weights_only(tmp_path):
    full, full_params = _fit(None, 4)
    ckpt = tmp_path / "run.ckpt"
    _fit(ckpt, 2)  # killed after epoch 2's checkpoint
    torch.load(ckpt, weights_only=True)  # plain types only: no NumPy allowlist needed
    resumed, params = _fit(ckpt, 4, seed=99, np_seed=12345)  # a fresh process: other RNG states
    assert resumed["history"] == full["history"]
    assert all(torch.equal(p, q) for p, q in zip(full_params, params))
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_checkpoint_is_reported_and_the_run_restarts(tmp_path, damage):
    full, full_params = _fit(None, 3)
    ckpt = tmp_path / "run.ckpt"
    _fit(ckpt, 2)
    data = ckpt.read_bytes()
    ckpt.write_bytes({"truncate": data[: len(data) // 2], "garbage": os.urandom(len(data)), "empty": b""}[damage])
    with pytest.warns(RuntimeWarning, match=f"checkpoint {ckpt}.*restarts from epoch 1"):
        out, params = _fit(ckpt, 3)
    assert out["history"] == full["history"]  # from scratch, identical to a fresh run
    assert all(torch.equal(p, q) for p, q in zip(full_params, params))
    assert (tmp_path / "run.ckpt.corrupt").exists()


_PLANTED: list[str] = []


def _payload() -> None:
    _PLANTED.append("ran")


class _Planted:
    def __reduce__(self):
        return (_payload, ())


def test_planted_checkpoint_cannot_run_code(tmp_path):
    ckpt = tmp_path / "run.ckpt"
    torch.save({"epoch": 1, "model": _Planted()}, ckpt)
    with pytest.warns(RuntimeWarning, match="could not be read"):
        _fit(ckpt, 1)
    assert _PLANTED == []


def test_checkpoint_of_another_model_leaves_the_run_untouched(tmp_path):
    from helpers.core.train import fit

    ckpt = tmp_path / "run.ckpt"
    other = MLP(4, 2, depth=2, width=8)
    fit(
        other,
        *_training()[1:3],
        optimizer=torch.optim.SGD(other.parameters(), lr=0.1),
        epochs=1,
        task="classification",
        checkpoint_path=ckpt,
        hooks=[_NumpyDraws()],
    )
    full, full_params = _fit(None, 2)
    with pytest.warns(RuntimeWarning, match="does not fit this run"):
        out, params = _fit(ckpt, 2)
    assert out["history"] == full["history"]
    assert all(torch.equal(p, q) for p, q in zip(full_params, params))


def test_checkpoint_temp_names_are_unique(tmp_path):
    from helpers.core.train import _save_checkpoint

    ckpt = tmp_path / "run.ckpt"
    (tmp_path / "run.ckpt.tmp").mkdir()  # the old fixed temp name, taken by someone else
    _save_checkpoint(ckpt, {"a": torch.ones(2)})
    assert torch.equal(torch.load(ckpt, weights_only=True)["a"], torch.ones(2))
    assert [p.name for p in tmp_path.iterdir()] != [] and not list(tmp_path.glob(".run.ckpt.*"))


# ------------------------------------------------------------------------ dataset files
def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def _fashion(folder: Path, n: int = 6, labels: np.ndarray | None = None, gz: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    y = np.arange(n) % 10 if labels is None else labels
    files = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n, 28, 28)),
        "train-labels-idx1-ubyte": y,
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n, 28, 28)),
        "t10k-labels-idx1-ubyte": y,
    }
    for name, array in files.items():
        data = _idx(np.asarray(array))
        if gz:
            with gzip.open(folder / f"{name}.gz", "wb") as handle:
                handle.write(data)
        else:
            (folder / name).write_bytes(data)
    return folder


@pytest.fixture
def data_env(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REPRO_OFFLINE", "1")
    monkeypatch.delenv("REPRO_DATA_DIR", raising=False)
    monkeypatch.setenv("REPRO_VERIFY_DATA", "1")
    return tmp_path


def test_right_size_file_with_garbage_pixels_is_refused(data_env):
    """Same name and size as the official raw IDX file, random pixels: the checksum catches it."""
    from helpers.core.data import load_fashion_mnist
    from helpers.core.data.sources import DataError

    folder = data_env / "fashion-mnist"
    _fashion(folder, n=4, gz=False)
    train = np.random.default_rng(1).integers(0, 256, (60_000, 28, 28))
    (folder / "train-images-idx3-ubyte").write_bytes(_idx(train))  # 47,040,016 bytes like the real one
    with pytest.raises(DataError, match="train-images-idx3-ubyte: sha256 .* matches no known copy") as info:
        load_fashion_mnist(root=data_env)
    assert str(folder) in str(info.value) and "REPRO_VERIFY_DATA=0" in str(info.value)


def test_labels_out_of_range_name_the_file(data_env, monkeypatch):
    from helpers.core.data import load_fashion_mnist
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")  # a deliberately different copy
    _fashion(data_env / "fashion-mnist", labels=np.array([0, 1, 200, 3, 4, 5]))
    with pytest.raises(DataError, match=r"train-labels-idx1-ubyte.gz: label 200 is out of range"):
        load_fashion_mnist(root=data_env)


@pytest.mark.parametrize("verify", ["0", "1"])
def test_truncated_gz_names_the_path(data_env, monkeypatch, verify):
    from helpers.core.data import load_fashion_mnist
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", verify)
    folder = _fashion(data_env / "fashion-mnist")
    path = folder / "train-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(DataError, match=str(path)):
        load_fashion_mnist(root=data_env)


def test_truncated_archive_names_the_path(data_env, monkeypatch):
    from helpers.core.data import load_cifar10
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    folder = data_env / "cifar10"
    folder.mkdir()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for i in range(50):
            image = io.BytesIO()
            Image.fromarray(np.random.default_rng(i).integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(image, "JPEG")
            payload = image.getvalue()
            info = tarfile.TarInfo(f"train/airplane/{i:04d}.jpg")
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
    path = folder / "cifar10-jpeg.tar.gz"
    path.write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    with pytest.raises(DataError, match=str(path)):
        load_cifar10(root=data_env)


def test_adult_with_a_non_numeric_age_names_the_file(data_env, monkeypatch):
    from helpers.core.data import load_adult
    from helpers.core.data.adult import COLUMNS
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    folder = data_env / "adult"
    folder.mkdir()
    row = [
        "x",
        "Private",
        "1",
        "HS-grad",
        "9",
        "Never-married",
        "Sales",
        "Own-child",
        "White",
        "Male",
        "0",
        "0",
        "40",
        "United-States",
        "<=50K",
    ]
    (folder / "adult.csv").write_text(",".join(COLUMNS) + "\n" + ",".join(row) + "\n")
    with pytest.raises(DataError, match="adult.csv: numeric column 'age' holds 'x'"):
        load_adult(root=data_env)


def test_verification_is_cached_per_file_and_redone_after_a_write(data_env):
    from helpers.core.data.sources import KnownFile, verify_file

    path = data_env / "f.bin"
    path.write_bytes(b"abc")
    known = KnownFile("f.bin", ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",))
    verify_file(path, known, "test")
    assert len(list((data_env / "cache" / "verified").iterdir())) == 1
    path.write_bytes(b"abd")  # a new size/mtime: checked again, and refused
    with pytest.raises(ValueError, match="matches no known copy"):
        verify_file(path, known, "test")


def test_eager_lambda_gelu_never_asks_aten_gelu_near_float32_max():
    """ATen's vectorised GELU overflows from |u| ≈ 1.7e38 on some CPUs (GELU(3e38) = inf on an
    AVX-512 EPYC); the eager path takes Φ = 0 or 1 exactly there, forward and backward."""
    from helpers.lambda_gelu import kernels as lk

    x = torch.tensor([1.0, 0.5, -1.0, -0.5, 2.0, 0.0, 1e-30, 0.9])
    for lam in (3e38, 2e38, float(lk.GATE_SATURATED) * 2):
        lam_t = torch.tensor(lam)
        assert torch.equal(lk._eager_forward(x, lam_t), torch.relu(x))
        grad = torch.ones_like(x)
        gx, glam = lk._eager_grads(grad, x, lam_t, True)
        expected = torch.where(x == 0, 0.5, (x * lam > 0).float())  # GELU'(0) = Φ(0) = ½
        assert torch.equal(gx, expected) and torch.isfinite(glam) and glam.item() == 0.0
