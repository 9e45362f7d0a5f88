"""What the model constructors of :mod:`helpers.core.models` accept: the shared argument rules (so
"a width" means the same everywhere) and the checks a single rule cannot make (a factory that is a
module instance, the number of stages, heads dividing the width, an input's shape).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import nn

from helpers.core.registry import activation_types
from helpers.core.validation import InvalidValue, instance_of, integer, integer_tuple, number

ActFactory = Callable[[], nn.Module]

#: The largest size torch can hold (an int64): a larger width or number of classes is refused up front.
MAX_COUNT = 2**63 - 1
COUNT = integer(1, limit=MAX_COUNT)  # a width, a depth, a size, a number of classes
COUNTS = integer_tuple(1, limit=MAX_COUNT)  # one positive int per stage
ACT = instance_of(Callable)  # a factory; check_factory also refuses a module instance
RATIO = number(0, low_open=True)  # finite: inf would build a layer of round(inf) units
DROPOUT = number(0, 1, high_open=True)  # 1 would zero every activation


def check_factory(act: ActFactory, name: str = "act") -> ActFactory:
    """``act`` is a factory (a module class, a zero-argument callable), not a module instance."""
    if isinstance(act, nn.Module):
        # one instance would be called as act() (its forward without input), and shared by every site
        raise TypeError(
            f"{name} must be a factory such as nn.ReLU or lambda: nn.ReLU(), not the module instance {act!r}"
        )
    if not callable(act):
        raise TypeError(f"{name} must be a zero-argument callable returning nn.Module, got {act!r}")
    return act


def make_act(act: ActFactory, name: str = "act") -> nn.Module:
    """One activation site built by the factory ``act`` (checked by :func:`check_factory`): what it
    returns must be an ``nn.Module``, or the error names the factory (not a later torch layer)."""
    module = check_factory(act, name)()
    if not isinstance(module, nn.Module):
        raise TypeError(f"{name} must return an nn.Module, but {act!r} returned {type(module).__name__}")
    return module


def check_width(name: str, value: float, scaled: float) -> float:
    """``scaled``, a layer width computed from the ratio ``name=value`` before rounding, unless it
    is beyond :data:`MAX_COUNT` or infinite (``width_mult=1e300``): refused as that argument's value."""
    if not scaled <= MAX_COUNT:  # also inf and NaN
        raise InvalidValue(f"{name}={value!r} gives a layer width of {scaled:.3g}, beyond what torch holds")
    return scaled


def stage_counts(name: str, value: Sequence[int]) -> tuple[int, ...]:
    """Positive ints (``build_model``'s ``input_shape``, which no table checks)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a sequence of positive ints, got {value!r}")
    counts = tuple(value)
    if not counts:
        raise ValueError(f"{name} must not be empty")
    for i, n in enumerate(counts):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{name}[{i}] must be a positive int, got {n!r} (in {name}={counts!r})")
    return counts


def check_input(
    model: str,
    x: torch.Tensor,
    expected: str,
    ok: Callable[[torch.Tensor], bool],
    layer: nn.Module | None = None,
) -> None:
    """A wrong input fails here, naming the model and what it expects, not deep inside a torch layer.
    Skipped while torch.fx traces (a traced shape has no value). ``layer``: the model's first
    weighted layer; a floating dtype other than its weight's is refused unless autocast is on.
    Metadata only: no value of ``x`` is read."""
    if torch.fx._symbolic_trace.is_fx_symbolic_tracing():
        return
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        got = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"{model} expects a floating-point tensor {expected}, got {got}")
    dtype = weight_dtype(layer) if layer is not None else None
    if dtype is not None and x.dtype != dtype and not torch.is_autocast_enabled(x.device.type):
        raise TypeError(f"{model} expects a {dtype} input (the dtype of its weights), got {x.dtype}; use x.to({dtype})")
    if not ok(x):
        raise ValueError(f"{model} expects {expected}, got shape {tuple(x.shape)}")


def weight_dtype(layer: nn.Module) -> torch.dtype | None:
    """The dtype of ``layer.weight`` when it is a floating-point tensor (else None: a quantised
    layer packs its weight, and then the input dtype is not checked)."""
    weight = getattr(layer, "weight", None)
    return weight.dtype if isinstance(weight, torch.Tensor) and weight.is_floating_point() else None


def check_sites(model: nn.Module, types: tuple[type[nn.Module], ...] | None) -> tuple[type[nn.Module], ...]:
    """The model is a module and ``types`` (None: every activation class of the table) a non-empty
    tuple of module classes; returns the types."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if types is not None and (
        not isinstance(types, tuple)
        or not types
        or not all(isinstance(t, type) and issubclass(t, nn.Module) for t in types)
    ):
        raise TypeError(f"types must be a non-empty tuple of nn.Module classes, got {types!r}")
    return activation_types() if types is None else types


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def takes_module(factory: Callable[..., nn.Module]) -> bool:
    """Whether ``factory`` is called with the old module: it has one required positional parameter
    (defaults, keyword-only and ``*args``/``**kwargs`` do not count; a class gets none)."""
    if isinstance(factory, type):
        return False
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    required = [p.name for p in parameters if p.kind in _POSITIONAL and p.default is inspect.Parameter.empty]
    if len(required) > 1:
        raise TypeError(
            f"factory must take no required argument, or one (the old module), got {factory!r} "
            f"requiring {', '.join(required)}"
        )
    return len(required) == 1


def check_token_ids(idx: torch.Tensor, vocab: int) -> None:
    """Every token id in ``[0, vocab)``, else a clear error. CPU only (on an accelerator the read
    would drain its queue every step; the embedding's device-side assert catches it), and not
    while torch.compile or torch.fx traces."""
    if (
        idx.device.type != "cpu"
        or torch.compiler.is_compiling()
        or torch.fx._symbolic_trace.is_fx_symbolic_tracing()
        or idx.numel() == 0
    ):
        return
    if bool(((idx < 0) | (idx >= vocab)).any()):
        low, high = int(idx.min()), int(idx.max())
        raise ValueError(f"GPT token ids must be in [0, {vocab}) (vocab_size={vocab}); got ids from {low} to {high}")


def fixed_blocks(name: str, kwargs: Mapping[str, object]) -> None:
    """``ResNet18``/``ResNet34`` take no ``blocks``: the name fixes them."""
    if "blocks" in kwargs:
        raise TypeError(f"{name} fixes blocks by its name; build ResNet(num_classes, blocks=...) for other depths")


def check_data_arguments(
    name: str, input_shape: object = None, num_classes: object = None, vocab_size: object = None
) -> None:
    """What :func:`helpers.core.models.build_model` takes from the data: ``vocab_size`` for a GPT,
    ``input_shape`` and ``num_classes`` otherwise; a missing or unread one is a ``ValueError``
    (never dropped silently)."""
    given = {"input_shape": input_shape, "num_classes": num_classes, "vocab_size": vocab_size}
    reads = ("vocab_size",) if name == "gpt" else ("input_shape", "num_classes")
    unread = [key for key, value in given.items() if value is not None and key not in reads]
    if unread:
        raise ValueError(
            f"model {name!r} does not read {' or '.join(unread)} (it is built from {' and '.join(reads)}); "
            f"leave {'it' if len(unread) == 1 else 'them'} out"
        )
    if any(given[key] is None for key in reads):
        raise ValueError(f"model {name!r} needs {' and '.join(reads)}")


def distinct_sites(model: nn.Module) -> nn.Module:
    """``model``, unless one module object sits at two places (a factory returning the same module,
    ``act=lambda: a``, would share a layerwise parameter such as λ-GELU's hardness between sites)."""
    seen: dict[int, str] = {}
    for site, module in model.named_modules(remove_duplicate=False):
        first = seen.setdefault(id(module), site)
        if first != site:
            # replace_activations' wording, naming the factory by where the module sits (ResNet's
            # penultimate_act builds the site "penultimate", act every other one)
            names = {"penultimate_act" if s.split(".")[0] == "penultimate" else "act" for s in (first, site)}
            raise ValueError(
                f"{' and '.join(sorted(names))} returned the same {type(module).__name__} object for two "
                f"activation sites ({first!r} and {site!r}); the factory must build a new module on every call"
            )
    return model


def check_transformer(dim: int, heads: int, mlp_ratio: float) -> None:
    """What a transformer's settings need together (ViT and GPT share it): heads divide the
    width, the MLP has a hidden unit."""
    if dim % heads:
        raise ValueError(f"dim ({dim}) must be divisible by heads ({heads})")
    check_width("mlp_ratio", mlp_ratio, dim * mlp_ratio)
    if int(dim * mlp_ratio) < 1:
        raise ValueError(f"mlp_ratio={mlp_ratio!r} gives a hidden width of 0 for dim={dim}")


#: Each model's size arguments, keyed even at their defaults (as committed runs are); others only
#: when not at their default.
KEYED_MODEL_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "mlp": ("depth", "width"),
    "resnet18": ("width_mult",),
    "resnet34": ("width_mult",),
    "vit": ("depth", "dim", "heads", "patch"),
    "convnext": ("depths", "dims"),
    "gpt": ("block_size", "dim", "heads", "layers"),
}
