"""The book's networks and activation-site surgery (public API).

Re-exported from :mod:`helpers.core.models`, where they live.
"""

from helpers.core.models import (
    GPT,
    MLP,
    ActFactory,
    BasicBlock,
    Block,
    ConvNeXt,
    ConvNeXtBlock,
    FeedForward,
    LayerNorm2d,
    ResNet,
    ResNet18,
    ResNet34,
    SelfAttention,
    ViT,
    activation_sites,
    build_model,
    replace_activations,
)

__all__ = [
    "ActFactory",
    "MLP",
    "BasicBlock",
    "ResNet",
    "ResNet18",
    "ResNet34",
    "FeedForward",
    "SelfAttention",
    "Block",
    "ViT",
    "GPT",
    "LayerNorm2d",
    "ConvNeXtBlock",
    "ConvNeXt",
    "build_model",
    "activation_sites",
    "replace_activations",
]
