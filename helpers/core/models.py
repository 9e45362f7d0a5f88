"""The book's networks, each with every activation site built from an activation factory.

``act`` arguments are zero-argument callables returning a fresh ``nn.Module`` (``nn.GELU``,
``activation_factory("lambda_gelu", t=0.1)``). Every site gets its *own* module, so a layerwise
parameter such as λ-GELU's hardness is one scalar per site: hence ResNet-18 is written out here
(torchvision's ``BasicBlock`` reuses one ReLU for both sites and has no width multiplier; the
parameter count equals torchvision's ``resnet18`` with a CIFAR stem, as a test checks).
:class:`ViT` (DeiT-tiny-style) and :class:`GPT` (GPT-2-style) come from :mod:`helpers.core.transformers`.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from helpers.core import validation
from helpers.core.model_checks import (
    ACT,
    COUNT,
    COUNTS,
    KEYED_MODEL_ARGUMENTS,
    RATIO,
    ActFactory,
    check_data_arguments,
    check_factory,
    check_input,
    check_sites,
    check_width,
    distinct_sites,
    fixed_blocks,
    make_act,
    stage_counts,
    takes_module,
)
from helpers.core.transformers import GPT, Block, FeedForward, SelfAttention, ViT  # noqa: F401 (re-exported)
from helpers.core.validation import argument_rules, boolean, check_value, checked_arguments, instance_of, number


# --------------------------------------------------------------------------------------- MLP
class MLP(nn.Module):
    """``depth`` hidden layers of ``width`` units, each Linear -> activation; then a linear head.
    The λ-GELU paper's "4-layer MLP with 256 hidden units" is ``MLP(in, out, depth=4, width=256)``."""

    @checked_arguments({"in_features": COUNT, "out_features": COUNT, "depth": COUNT, "width": COUNT, "act": ACT})
    def __init__(
        self, in_features: int, out_features: int, *, depth: int = 4, width: int = 256, act: ActFactory = nn.GELU
    ) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        fan_in = in_features
        for _ in range(depth):
            layers += [nn.Linear(fan_in, width), make_act(act)]
            fan_in = width
        self.in_features = in_features
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(fan_in, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(
            "MLP",
            x,
            f"(batch, ...) with {self.in_features} features after flattening",
            lambda t: t.dim() >= 2 and math.prod(t.shape[1:]) == self.in_features,
            self.body[0],
        )
        return self.head(self.body(x.flatten(1)))


# --------------------------------------------------------------------------------- ResNet-18
class BasicBlock(nn.Module):
    """torchvision's BasicBlock, with two separate activation modules."""

    @checked_arguments({"in_ch": COUNT, "out_ch": COUNT, "stride": COUNT, "act": ACT})
    def __init__(self, in_ch: int, out_ch: int, stride: int, act: ActFactory) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.act1 = make_act(act)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.act2 = make_act(act)
        self.downsample: nn.Module = nn.Identity()
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.act1(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.act2(out + self.downsample(x))


class ResNet(nn.Module):
    """ResNet with BasicBlocks; ``blocks=(2,2,2,2)`` is ResNet-18, ``(3,4,6,3)`` ResNet-34.

    ``cifar_stem=True``: a 3x3 stride-1 convolution, no max-pool (32x32 inputs); ``width_mult``
    scales the channels (64, 128, 256, 512); ``penultimate_act`` adds a site on the pooled features
    (Flex-Act's "penultimate layer" placement).
    """

    @checked_arguments(
        {"num_classes": COUNT, "blocks": COUNTS, "width_mult": RATIO, "in_channels": COUNT, "cifar_stem": boolean()}
        | {"act": ACT, "penultimate_act": instance_of(Callable, optional=True)}
    )
    def __init__(
        self,
        num_classes: int = 10,
        *,
        blocks: Sequence[int] = (2, 2, 2, 2),
        width_mult: float = 1.0,
        in_channels: int = 3,
        cifar_stem: bool = True,
        act: ActFactory = nn.ReLU,
        penultimate_act: ActFactory | None = None,
    ) -> None:
        super().__init__()
        blocks = tuple(blocks)  # each a positive int (the table); a zero would still build one block
        if len(blocks) != 4:  # zip with the four widths would drop extra entries
            raise ValueError(f"blocks must have exactly 4 entries (one per stage), got {len(blocks)}: {blocks!r}")
        widths = [max(1, round(check_width("width_mult", width_mult, c * width_mult))) for c in (64, 128, 256, 512)]
        self.in_channels = in_channels
        kernel, stride, padding = (3, 1, 1) if cifar_stem else (7, 2, 3)
        stem = [nn.Conv2d(in_channels, widths[0], kernel, stride, padding, bias=False), nn.BatchNorm2d(widths[0])]
        self.stem = nn.Sequential(*stem, make_act(act), *([] if cifar_stem else [nn.MaxPool2d(3, 2, 1)]))
        stages: list[nn.Module] = []
        in_ch = widths[0]
        for i, (n, out_ch) in enumerate(zip(blocks, widths)):
            stride = 1 if i == 0 else 2
            stage = [BasicBlock(in_ch, out_ch, stride, act)]
            stage += [BasicBlock(out_ch, out_ch, 1, act) for _ in range(n - 1)]
            stages.append(nn.Sequential(*stage))
            in_ch = out_ch
        self.stages = nn.Sequential(*stages)
        self.penultimate = (
            make_act(penultimate_act, "penultimate_act") if penultimate_act is not None else nn.Identity()
        )
        self.fc = nn.Linear(in_ch, num_classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(
            "ResNet",
            x,
            f"images of shape (batch, {self.in_channels}, H, W)",
            lambda t: t.dim() == 4 and t.shape[1] == self.in_channels,
            self.stem[0],
        )
        x = self.stages(self.stem(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(self.penultimate(x))


def ResNet18(num_classes: int = 10, **kwargs) -> ResNet:  # noqa: N802 (reads like a class)
    fixed_blocks("ResNet18", kwargs)
    return ResNet(num_classes, blocks=(2, 2, 2, 2), **kwargs)


def ResNet34(num_classes: int = 10, **kwargs) -> ResNet:  # noqa: N802
    fixed_blocks("ResNet34", kwargs)
    return ResNet(num_classes, blocks=(3, 4, 6, 3), **kwargs)


# ---------------------------------------------------------------------------------- ConvNeXt
class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over channels of an N×C×H×W tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    """Depthwise 7x7 conv -> LayerNorm -> 1x1 (4x) -> activation -> 1x1, layer scale, residual."""

    @checked_arguments({"dim": COUNT, "act": ACT, "layer_scale": number(0)})
    def __init__(self, dim: int, act: ActFactory, layer_scale: float = 1e-6) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = make_act(act)
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale * torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    """ConvNeXt-tiny-style network: ``depths=(3,3,9,3), dims=(96,192,384,768)`` is ConvNeXt-T.

    For 32x32 inputs the stem is a 2x2 stride-2 patchify (ConvNeXt-T uses 4x4 on 224x224).
    """

    @checked_arguments(
        {"num_classes": COUNT, "depths": COUNTS, "dims": COUNTS, "in_channels": COUNT, "stem_patch": COUNT, "act": ACT}
    )
    def __init__(
        self,
        num_classes: int = 10,
        *,
        depths: Sequence[int] = (3, 3, 9, 3),
        dims: Sequence[int] = (96, 192, 384, 768),
        in_channels: int = 3,
        stem_patch: int = 2,
        act: ActFactory = nn.GELU,
    ) -> None:
        super().__init__()
        depths, dims = tuple(depths), tuple(dims)  # each a positive int (the table)
        if len(depths) != len(dims):
            raise ValueError(f"depths {tuple(depths)} and dims {tuple(dims)} must be equally long")
        self.in_channels = in_channels
        self.downsample = nn.ModuleList(
            [nn.Sequential(nn.Conv2d(in_channels, dims[0], stem_patch, stem_patch), LayerNorm2d(dims[0]))]
        )
        for i in range(1, len(dims)):
            self.downsample.append(nn.Sequential(LayerNorm2d(dims[i - 1]), nn.Conv2d(dims[i - 1], dims[i], 2, 2)))
        self.stages = nn.ModuleList(
            [nn.Sequential(*[ConvNeXtBlock(d, act) for _ in range(n)]) for n, d in zip(depths, dims)]
        )
        self.norm = nn.LayerNorm(dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    @property
    def min_size(self) -> int:
        """The smallest image side: the stem patchifies, and each later stage halves the grid."""
        return self.downsample[0][0].stride[0] * 2 ** (len(self.downsample) - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(
            "ConvNeXt",
            x,
            f"images of shape (batch, {self.in_channels}, H, W) with H, W >= {self.min_size}",
            lambda t: t.dim() == 4 and t.shape[1] == self.in_channels and min(t.shape[2:]) >= self.min_size,
            self.downsample[0][0],
        )
        for down, stage in zip(self.downsample, self.stages):
            x = stage(down(x))
        return self.head(self.norm(x.mean(dim=(2, 3))))


# ------------------------------------------------------------------------------ construction
MODEL_NAMES: tuple[str, ...] = ("mlp", "resnet18", "resnet34", "vit", "convnext", "gpt")


def _model_class(name: str) -> type[nn.Module]:
    """The class of model ``name``; a ``ValueError`` listing the names for any other."""
    if not isinstance(name, str) or name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_NAMES)}")
    return {"mlp": MLP, "resnet18": ResNet, "resnet34": ResNet, "vit": ViT, "convnext": ConvNeXt, "gpt": GPT}[name]


#: Constructor arguments :func:`build_model` fills from the data and the activation itself.
_FILLED_BY_BUILD = frozenset(
    {"self", "in_features", "out_features", "num_classes", "in_channels", "image_size", "vocab_size", "act", "blocks"}
)


def check_model_kwargs(name: str, kwargs: Mapping[str, object]) -> dict[str, object]:
    """``kwargs`` as a run's key spells them (size arguments always, others unless default);
    ``ValueError`` for a key or value the model refuses (when the config is made)."""
    cls = _model_class(name)
    params = inspect.signature(cls.__init__).parameters
    accepted = sorted(p for p in params if p not in _FILLED_BY_BUILD and params[p].kind is not params[p].VAR_KEYWORD)
    unknown = sorted(k for k in kwargs if k not in accepted)
    if unknown:
        raise ValueError(
            f"model {name!r} takes no argument {', '.join(map(repr, unknown))}; "
            f"its model_kwargs are {', '.join(accepted)}"
        )
    for key, value in kwargs.items():
        check_value(cls.__name__, key, value, (argument_rules(cls) or {})[key])
    return validation.canonical_arguments(cls, kwargs, KEYED_MODEL_ARGUMENTS[name])


def build_model(
    name: str,
    *,
    input_shape: Sequence[int] | None = None,
    num_classes: int | None = None,
    vocab_size: int | None = None,
    act: ActFactory = nn.GELU,
    **kwargs,
) -> nn.Module:
    """Build a model by name for data of ``input_shape`` (C,H,W or features) and ``num_classes``
    (the ViT needs ``H == W``: its positional table is a square grid of patches)."""
    _model_class(name)
    check_data_arguments(name, input_shape, num_classes, vocab_size)
    if input_shape is not None:
        input_shape = stage_counts("input_shape", input_shape)
        if name in ("resnet18", "resnet34", "vit", "convnext") and len(input_shape) != 3:
            raise ValueError(f"model {name!r} needs input_shape (C, H, W), got {input_shape!r}")
        if name == "vit" and input_shape[1] != input_shape[2]:
            raise ValueError(f"model 'vit' needs square images, got input_shape {input_shape!r}")
    filled = sorted(k for k in kwargs if k in _FILLED_BY_BUILD)
    if filled:
        raise ValueError(
            f"build_model fills {', '.join(map(repr, filled))} of model {name!r} itself (from the data, "
            "the model name and act); build the model class directly to set them"
        )
    if name == "gpt":
        model: nn.Module = GPT(vocab_size, act=act, **kwargs)
    elif name == "mlp":
        model = MLP(math.prod(input_shape), num_classes, act=act, **kwargs)
    elif name in ("resnet18", "resnet34"):
        builder = ResNet18 if name == "resnet18" else ResNet34
        model = builder(num_classes, in_channels=input_shape[0], act=act, **kwargs)
    elif name == "vit":
        model = ViT(num_classes, image_size=input_shape[-1], in_channels=input_shape[0], act=act, **kwargs)
    else:
        model = ConvNeXt(num_classes, in_channels=input_shape[0], act=act, **kwargs)
    return distinct_sites(model)  # a factory that returned one module twice is refused


def activation_sites(model: nn.Module, types: tuple[type[nn.Module], ...] | None = None) -> list[str]:
    """Qualified names of every activation module in ``model`` (registration order)."""
    types = check_sites(model, types)
    return [name for name, m in model.named_modules() if isinstance(m, types) and name]


def replace_activations(
    model: nn.Module, factory: Callable[..., nn.Module], types: tuple[type[nn.Module], ...] | None = None
) -> nn.Module:
    """Return a deep copy of ``model`` with every activation site rebuilt by ``factory``.

    ``factory`` gets the old module if it has one required positional parameter
    (``lambda old: nn.LeakyReLU(old.negative_slope)``), else no argument. ``types`` defaults to
    :func:`helpers.core.registry.activation_types`.
    """
    types = check_sites(model, types)
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {factory!r}")
    check_factory(factory, "factory")  # a module instance is callable too
    with_module = takes_module(factory)
    new_model = copy.deepcopy(model)
    made: set[int] = set()
    for parent in list(new_model.modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, types):
                replacement = factory(child) if with_module else factory()
                if not isinstance(replacement, nn.Module):
                    raise TypeError(
                        f"factory returned {type(replacement).__name__}, not nn.Module (at site {child_name!r})"
                    )
                if id(replacement) in made:
                    # one module at several sites would share a layerwise parameter such as λ
                    raise ValueError(
                        f"factory returned the same {type(replacement).__name__} object for two "
                        "activation sites; it must build a new module on every call"
                    )
                made.add(id(replacement))
                setattr(parent, child_name, replacement)
    if not made:
        names = ", ".join(t.__name__ for t in types)
        raise ValueError(f"model has no activation site of the types ({names}); nothing was replaced")
    return new_model
