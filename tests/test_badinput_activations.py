"""Extreme inputs and bad arguments for λ-GELU, SmeLU, the paper's S-ReLU pseudocode, the mollifier
kernels and Flex-Act: finite outputs and gradients where the math is finite, clear errors for
arguments that cannot work (and no change for ordinary inputs)."""

from __future__ import annotations

import pytest
import torch
from refusals import refusal_fault

import helpers.activations  # noqa: F401  (registers the methods' activations)
from helpers.core import kernels
from helpers.flexact.activation import FlexAct
from helpers.lambda_gelu.activation import LambdaGELU, lambda_gelu
from helpers.srelu.activation import SReLUPaperReference, srelu, srelu_paper_reference
from helpers.srelu.mollify import EpanechnikovKernel, GaussianKernel, MollifiedActivation, mollify
from helpers.srelu.smelu import SmeLU, smelu

F32_MAX = torch.finfo(torch.float32).max


@pytest.fixture
def eager_kernels():
    """The eager (small-tensor) path, where the overflow fix applies."""
    before = kernels.kernel_backend()
    kernels.set_kernel_backend("eager")
    yield
    kernels.set_kernel_backend(before)


def _finite(*tensors: torch.Tensor) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in tensors)


# ------------------------------------------------------------------------------- λ-GELU: 1
@pytest.mark.parametrize("lam", [1.5, 5.0, 1e3, 1e5])
def test_lambda_gelu_finite_for_huge_finite_float32(eager_kernels, lam):
    x = torch.tensor([3e38, -3e38, 1e38, -1e38, F32_MAX, -F32_MAX, 1.0], requires_grad=True)
    lam_t = torch.tensor(lam, requires_grad=True)
    y = lambda_gelu(x, lam_t)
    assert _finite(y)
    torch.testing.assert_close(y[:-1].detach(), torch.relu(x[:-1].detach()), rtol=0, atol=0)
    y.sum().backward()
    assert _finite(x.grad, lam_t.grad)
    assert x.grad[:-1].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]


def test_lambda_gelu_module_finite_for_huge_input(eager_kernels):
    x = torch.tensor([3e38, F32_MAX, -F32_MAX], requires_grad=True)
    m = LambdaGELU()
    y = m(x)
    assert _finite(y) and y[2] == 0
    y.sum().backward()
    assert _finite(x.grad, m.s.grad)


def test_lambda_gelu_huge_bf16_and_float64(eager_kernels):
    yb = lambda_gelu(torch.tensor([3e38, -3e38, 1.0], dtype=torch.bfloat16), 5.0)
    assert _finite(yb) and yb[1] == 0
    x = torch.tensor([1.7e308, -1.7e308, 1.0], dtype=torch.float64, requires_grad=True)
    y = lambda_gelu(x, 5.0)
    assert y[0] == 1.7e308 and y[1] == 0 and _finite(y)
    y.sum().backward()
    assert _finite(x.grad)


def test_flexact_hard_training_finite_for_huge_input():
    m = FlexAct(candidates=("lambda_gelu", "relu"), hard=True).train()
    x = torch.tensor([1.0, 3e38], requires_grad=True)
    y = m(x)
    assert _finite(y)
    y.sum().backward()
    assert _finite(x.grad)


# ------------------------------------------------------------------------------- λ-GELU: 2
def test_lambda_gelu_empty_input_with_large_lambda():
    assert lambda_gelu(torch.empty(0), 1e7).shape == (0,)
    assert LambdaGELU(lam_init=1e6)(torch.empty(0, 4)).shape == (0, 4)


# ------------------------------------------------------------------------------- λ-GELU: 3, 5
def test_lambda_gelu_refuses_lambda_that_overflows():
    m = LambdaGELU()
    with pytest.raises(ValueError, match="too large"):
        m.set_lambda(1e39)
    assert torch.isfinite(m.lam).all() and m(torch.zeros(1)).item() == 0.0
    with pytest.raises(ValueError, match="too large"):
        LambdaGELU(s_init=1e38)
    with pytest.raises(ValueError, match="finite"):
        m.set_fixed_lambda(1e39)


@pytest.mark.parametrize("kwargs", [{"s_init": torch.tensor([1.0, 2.0])}, {"lam_init": torch.tensor([2.0, 3.0])}])
def test_lambda_gelu_wrong_shape_init_is_a_value_error(kwargs):
    with pytest.raises(ValueError, match="does not fit"):
        LambdaGELU(**kwargs)


def test_lambda_gelu_setter_argument_types():
    m = LambdaGELU()
    with pytest.raises(TypeError, match="value must be a finite number > 1.*a string is not a number"):
        m.set_lambda("2")
    with pytest.raises(TypeError, match="value must be a finite number >= 1.*a string is not a number"):
        m.set_fixed_lambda("2")
    with pytest.raises(TypeError, match="bool"):
        m.set_fixed_lambda(True)
    with pytest.raises(TypeError, match="unfreeze must be True or False"):
        m.clear_fixed_lambda(unfreeze="no")
    m.set_fixed_lambda(2.0)
    m.clear_fixed_lambda(unfreeze=True)
    assert m.s.requires_grad


# ------------------------------------------------------------------------------- meta: 6
@pytest.mark.parametrize(
    "make",
    [
        lambda meta: LambdaGELU(lam_init=meta),
        lambda meta: LambdaGELU(fixed_lambda=meta),
        lambda meta: LambdaGELU(s_init=meta),
        lambda meta: lambda_gelu(torch.ones(3), meta),
        lambda meta: srelu(torch.ones(3), meta * 0.1),
        lambda meta: FlexAct(candidates=("relu", "gelu"), init_logits=torch.zeros(2, device="meta")),
    ],
)
def test_meta_tensor_arguments_give_clear_errors(make):
    with pytest.raises(ValueError, match="meta"):
        make(torch.full((), 2.0, device="meta"))


def test_lambda_gelu_module_on_meta_with_cpu_input():
    with pytest.raises(ValueError, match="move them to one device"):
        LambdaGELU().to("meta")(torch.ones(3))
    with pytest.raises(ValueError, match="move them to one device"):
        LambdaGELU(fixed_lambda=2.0).to("meta")(torch.ones(3))


# ------------------------------------------------------------------------------- SmeLU: 7
@pytest.mark.parametrize(
    ("value", "dtype"), [(3e38, torch.float32), (F32_MAX, torch.float32), (60000.0, torch.float16)]
)
def test_smelu_gradient_finite_for_large_input(value, dtype):
    x = torch.tensor([value, 0.5, -3.0], dtype=dtype, requires_grad=True)
    for fn in (smelu, SmeLU()):
        x.grad = None
        y = fn(x)
        y.sum().backward()
        assert y[0] == x[0] and _finite(y, x.grad)
        assert x.grad.tolist() == [1.0, 0.75, 0.0]


def test_smelu_ordinary_values_unchanged():
    x = torch.linspace(-3, 3, 1201, dtype=torch.float64)
    reference = torch.where(x >= 1.0, x, torch.clamp(x + 1.0, min=0.0) ** 2 / 4.0)
    assert torch.equal(smelu(x, 1.0), reference)


# ------------------------------------------------------------------------------- srelu_paper: 8
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_srelu_paper_reference_half_precision_finite_at_zero(dtype):
    x = torch.tensor([0.0, 1e-4, -1e-4, 1.0], dtype=dtype, requires_grad=True)
    for fn in (lambda t: srelu_paper_reference(t, 0.001), SReLUPaperReference(0.001)):
        x.grad = None
        y = fn(x)
        y.sum().backward()
        assert y.dtype == dtype and _finite(y, x.grad)
        torch.testing.assert_close(x.grad[0].float(), torch.tensor(0.5), rtol=1e-2, atol=1e-3)


# ------------------------------------------------------------------------------- kernels: 9
@pytest.mark.parametrize("make", [lambda: GaussianKernel(1e308), lambda: EpanechnikovKernel(1e-320)])
def test_kernel_scale_out_of_range(make):
    with pytest.raises(ValueError, match="scale must lie"):
        make()


def test_kernel_scale_out_of_range_for_float32_input():
    act = MollifiedActivation(torch.relu, GaussianKernel(1e100), breakpoints=(0.0,))
    with pytest.raises(ValueError, match="out of range for torch.float32"):
        act(torch.zeros(3))
    assert torch.isfinite(mollify(torch.relu, GaussianKernel(1e100), torch.zeros(3, dtype=torch.float64))).all()


# ------------------------------------------------------------- the built-in torch activations
#: One bad argument per row: the registered name, its keyword arguments, and the field the ValueError names.
BAD_BUILTIN_ARGUMENTS = [
    ("elu", {"alpha": "x"}, "ELU.alpha"),
    ("elu", {"alpha": float("nan")}, "ELU.alpha"),
    ("celu", {"alpha": 0.0}, "CELU.alpha"),  # CELU divides by alpha
    ("leaky_relu", {"negative_slope": float("inf")}, "LeakyReLU.negative_slope"),
    ("leaky_relu", {"negative_slope": "0.1"}, "LeakyReLU.negative_slope"),
    ("prelu", {"num_parameters": 0}, "PReLU.num_parameters"),
    ("prelu", {"num_parameters": 2.0}, "PReLU.num_parameters"),
    ("prelu", {"init": float("nan")}, "PReLU.init"),
    ("relu", {"inplace": "yes"}, "ReLU.inplace"),
    ("silu", {"inplace": 1}, "SiLU.inplace"),
    ("gelu", {"approximate": "fast"}, "GELU.approximate"),
]


def test_builtin_activations_check_their_arguments():
    """torch's constructors accept these and fail (or give NaN) only inside a forward pass."""
    from helpers.core.registry import get_activation

    problems = [
        fault
        for name, kwargs, what in BAD_BUILTIN_ARGUMENTS
        if (
            fault := refusal_fault(
                f"get_activation({name!r}, {', '.join(f'{k}={v!r}' for k, v in kwargs.items())})",
                lambda: get_activation(name, **kwargs),
                ValueError,
                what.replace(".", r"\."),
            )
        )
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["identity", "sigmoid", "tanh", "gelu_tanh"])
def test_builtin_activations_refuse_unknown_arguments(name):
    from helpers.core.registry import get_activation

    with pytest.raises(TypeError, match=f"bad arguments for activation '{name}'"):
        get_activation(name, foo=1)


def test_builtin_activations_still_build_what_they_did():
    from helpers.core.registry import get_activation

    assert get_activation("elu", alpha=0.5).alpha == 0.5
    assert get_activation("leaky_relu", negative_slope=0.2).negative_slope == 0.2
    assert get_activation("prelu", num_parameters=3, init=0.1).weight.shape == (3,)
    assert get_activation("gelu", approximate="tanh").approximate == "tanh"
    assert get_activation("gelu_tanh").approximate == "tanh"
    assert get_activation("relu", inplace=True).inplace is True
    assert type(get_activation("identity")) is torch.nn.Identity


def test_prelu_names_a_dtype_mismatch_with_its_slope_and_never_converts_it():
    from helpers.core.registry import get_activation

    prelu = get_activation("prelu")
    x = torch.randn(4, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"slope is torch.float32 .* input is torch.float64 .*module.to\(x\)"):
        prelu(x)
    assert prelu.weight.dtype == torch.float32  # not converted behind the caller's back
    with pytest.raises(TypeError, match="floating-point torch.Tensor, got a torch.int64 tensor"):
        prelu(torch.arange(3))
    assert torch.equal(prelu.to(x)(x), torch.nn.functional.prelu(x, prelu.weight))
    with torch.autocast("cpu", dtype=torch.bfloat16):  # mixed precision keeps the float32 slope
        assert get_activation("prelu")(torch.randn(2, 3, dtype=torch.bfloat16)).shape == (2, 3)


# ------------------------------------------------------------------------ limits at ±∞, every activation
EDGES = [float("-inf"), "-max", -1e30, -1.0, 0.0, 1.0, 1e30, "max", float("inf")]


def _edge_inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The edge inputs in ``dtype`` and the float64 points whose values stand for them: ±∞ by
    ±1e30 (every activation here is at its asymptote there, and nothing overflows in float64)."""
    top = torch.finfo(dtype).max
    values = [(-top if v == "-max" else top) if isinstance(v, str) else v for v in EDGES]
    x = torch.tensor(values, dtype=dtype)
    stand_in = torch.tensor(values, dtype=torch.float64).nan_to_num(posinf=1e30, neginf=-1e30)
    return x, stand_in


def _limits(module: torch.nn.Module, x64: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The expected outputs and gradients at ``x``: the float64 module at the stand-in points, an
    output that grows without bound there (beyond ±1e20 at ±1e30) being ±∞ where ``x`` is ±∞."""
    ref = x64.clone().requires_grad_(True)
    y = module(ref)
    y.sum().backward()
    y = y.detach()
    inf = torch.isinf(x.double())
    y = torch.where(inf & (y.abs() > 1e20), torch.sign(y) * float("inf"), y)
    return y, ref.grad


def test_every_activation_has_its_limits_at_infinity_and_the_range_ends(eager_kernels):
    """Every registered activation, float32, float64 and bfloat16, 9 and 90,000 elements: at ±∞
    its limit (λ-GELU, S-ReLU, GELU, SiLU, Mish: ∞ and 0, gradients 1 and 0; torch's own kernels
    give NaN for some), at ±max its finite value (GELU(3e38) = 3e38), never a NaN."""
    import copy

    from helpers.core.registry import available_activations, get_activation

    tolerance = {torch.float32: 1e-5, torch.float64: 1e-12, torch.bfloat16: 2e-2}
    wrong = []
    for name in available_activations():
        torch.manual_seed(0)
        base = get_activation(name).eval()  # Flex-Act samples its mixture in training mode
        for dtype, rtol in tolerance.items():
            x, x64 = _edge_inputs(dtype)
            want_y, want_g = _limits(copy.deepcopy(base).double(), x64, x)
            for repeat in (1, 10_000):
                xs = x.repeat(repeat).requires_grad_(True)
                y = copy.deepcopy(base).to(dtype)(xs)
                y.sum().backward()
                got_y, got_g = y.detach().double()[: len(EDGES)], xs.grad.double()[: len(EDGES)]
                for what, got, want in (("output", got_y, want_y), ("gradient", got_g, want_g)):
                    if repeat > 1:  # every copy of the pattern alike, not only the first
                        full = (y.detach() if what == "output" else xs.grad).double().view(repeat, -1)
                        if not torch.equal(full.isnan(), got.isnan().expand_as(full)):
                            wrong.append(f"{name} {dtype} x{repeat}: {what} differs between copies")
                    close = torch.isclose(got, want.to(dtype).double(), rtol=rtol, atol=1e-30)
                    if got.isnan().any() or not close.all():
                        at = [EDGES[i] for i in (~close | got.isnan()).nonzero().flatten().tolist()]
                        wrong.append(f"{name} {dtype} x{repeat}: {what} at {at}: {got.tolist()} vs {want.tolist()}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_lambda_gelu_compiled_kernels_have_the_limits_too():
    """The TorchInductor formulas (the default for large float32 tensors) at ±∞ and ±max."""
    before = kernels.kernel_backend()
    kernels.set_kernel_backend("compiled")
    try:
        x, _ = _edge_inputs(torch.float32)
        xs = x.repeat(1 << 14).requires_grad_(True)
        module = LambdaGELU(lam_init=5.0)
        y = module(xs)
        y.sum().backward()
    finally:
        kernels.set_kernel_backend(before)
    top = torch.finfo(torch.float32).max
    want_y = torch.tensor([0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 1e30, top, float("inf")])
    assert torch.equal(y.detach()[: len(EDGES)][[0, 1, 2, 6, 7, 8]], want_y[[0, 1, 2, 6, 7, 8]])
    assert torch.equal(xs.grad[: len(EDGES)][[0, 1, 2, 6, 7, 8]], torch.tensor([0.0, 0, 0, 1, 1, 1]))
    assert torch.isfinite(module.s.grad) and not y.isnan().any() and not xs.grad.isnan().any()


@pytest.mark.parametrize("bad", [3.0, [1.0, 2.0], torch.tensor([1, 2]), None])
def test_the_guarded_builtins_refuse_what_is_not_a_float_tensor_by_name(bad):
    from helpers.core.registry import get_activation

    for name in ("gelu", "silu"):
        with pytest.raises(TypeError, match="takes a floating-point torch.Tensor, got"):
            get_activation(name)(bad)


@pytest.mark.parametrize(
    ("name", "kwargs", "argument"),
    [
        ("elu", {"alpha": 1e308}, "ELU.alpha"),
        ("leaky_relu", {"negative_slope": -1e308}, "LeakyReLU.negative_slope"),
        ("celu", {"alpha": 1e-300}, "CELU.alpha"),
        ("prelu", {"init": 1e308}, "PReLU.init"),
    ],
)
def test_a_builtin_scale_that_float32_cannot_hold_is_refused_by_name(name, kwargs, argument):
    """From the probe: torch accepted these and failed at the first forward with 'cannot be
    converted to type float without overflow', naming no argument."""
    from helpers.core.registry import get_activation

    with pytest.raises(ValueError, match=argument):
        get_activation(name, **kwargs)


def test_prelu_names_a_slope_count_its_input_cannot_take():
    from helpers.core.registry import get_activation

    with pytest.raises(ValueError, match="PReLU has 3 slopes"):
        get_activation("prelu", num_parameters=3)(torch.randn(5))
    assert get_activation("prelu", num_parameters=3)(torch.randn(2, 3, 4)).shape == (2, 3, 4)
