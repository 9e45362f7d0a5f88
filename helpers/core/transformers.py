"""The transformer family of the book's networks: a pre-norm block (attention, then a feed-forward
layer with the one activation site) shared by a ViT/DeiT-style classifier and a GPT-2-style decoder.
Built by name through :func:`helpers.core.models.build_model`, which re-exports these classes."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from helpers.core.model_checks import (
    ACT,
    COUNT,
    DROPOUT,
    RATIO,
    ActFactory,
    check_input,
    check_token_ids,
    check_transformer,
    make_act,
)
from helpers.core.validation import boolean, checked_arguments

#: The arguments ViT and GPT share beyond their sizes.
_SHARED_RULES = {"mlp_ratio": RATIO, "dropout": DROPOUT, "act": ACT}


class FeedForward(nn.Module):
    """Linear -> activation -> Linear: the one activation site of a transformer block."""

    @checked_arguments({"dim": COUNT, "hidden": COUNT, "act": ACT, "dropout": DROPOUT})
    def __init__(self, dim: int, hidden: int, act: ActFactory, dropout: float = 0.0) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = make_act(act)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc2(self.act(self.fc1(x))))


class SelfAttention(nn.Module):
    @checked_arguments({"dim": COUNT, "heads": COUNT, "causal": boolean(), "dropout": DROPOUT})
    def __init__(self, dim: int, heads: int, causal: bool, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be divisible by heads ({heads})")
        self.heads, self.causal, self.dropout = heads, causal, dropout
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=self.causal, dropout_p=self.dropout if self.training else 0.0
        )
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """Pre-norm transformer block (ViT/DeiT and GPT-2 share it)."""

    @checked_arguments(
        {"dim": COUNT, "heads": COUNT, "mlp_ratio": RATIO, "act": ACT, "causal": boolean(), "dropout": DROPOUT}
    )
    def __init__(
        self, dim: int, heads: int, mlp_ratio: float, act: ActFactory, causal: bool, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, causal, dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = FeedForward(dim, int(dim * mlp_ratio), act, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    """ViT / DeiT-tiny-style classifier (class token, learned positions, pre-norm blocks). DeiT-tiny
    is ``dim=192, depth=12, heads=3, mlp_ratio=4``; ``patch=4`` suits 32x32 inputs."""

    @checked_arguments(
        dict.fromkeys(("num_classes", "image_size", "patch", "in_channels", "dim", "depth", "heads"), COUNT)
        | _SHARED_RULES
    )
    def __init__(
        self,
        num_classes: int = 10,
        *,
        image_size: int = 32,
        patch: int = 4,
        in_channels: int = 3,
        dim: int = 192,
        depth: int = 12,
        heads: int = 3,
        mlp_ratio: float = 4.0,
        dropout: float = 0.0,
        act: ActFactory = nn.GELU,
    ) -> None:
        super().__init__()
        check_transformer(dim, heads, mlp_ratio)
        if image_size % patch:
            raise ValueError(f"image_size ({image_size}) must be divisible by patch ({patch})")
        n_patches = (image_size // patch) ** 2
        self.in_channels, self.image_size = in_channels, image_size
        self.patch_embed = nn.Conv2d(in_channels, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n_patches + 1, dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.blocks = nn.Sequential(
            *[Block(dim, heads, mlp_ratio, act, causal=False, dropout=dropout) for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the positional table is built for image_size x image_size inputs
        size = self.image_size
        check_input(
            "ViT",
            x,
            f"images of shape (batch, {self.in_channels}, {size}, {size})",
            lambda t: t.dim() == 4 and tuple(t.shape[1:]) == (self.in_channels, size, size),
            self.patch_embed,
        )
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        return self.head(self.norm(self.blocks(x))[:, 0])


class GPT(nn.Module):
    """GPT-2-style decoder: token + position embeddings, causal pre-norm blocks, tied head. GPT-2
    small is ``layers=12, dim=768, heads=12, block_size=1024, vocab_size=50257``."""

    @checked_arguments(dict.fromkeys(("vocab_size", "block_size", "layers", "dim", "heads"), COUNT) | _SHARED_RULES)
    def __init__(
        self,
        vocab_size: int,
        *,
        block_size: int = 256,
        layers: int = 6,
        dim: int = 384,
        heads: int = 6,
        mlp_ratio: float = 4.0,
        dropout: float = 0.0,
        act: ActFactory = nn.GELU,
    ) -> None:
        super().__init__()
        check_transformer(dim, heads, mlp_ratio)
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, dim)
        self.pos_emb = nn.Embedding(block_size, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(
            *[Block(dim, heads, mlp_ratio, act, causal=True, dropout=dropout) for _ in range(layers)]
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying, as in GPT-2
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("proj.weight") or name.endswith("fc2.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        if not isinstance(idx, torch.Tensor) or idx.dtype not in (torch.int64, torch.int32):
            got = f"a {idx.dtype} tensor" if isinstance(idx, torch.Tensor) else type(idx).__name__
            raise TypeError(f"GPT expects token ids as an int64 (or int32) tensor, got {got}")
        if idx.dim() != 2:
            raise ValueError(f"GPT expects (batch, time) token ids, got shape {tuple(idx.shape)}")
        t = idx.shape[1]
        if t > self.block_size:
            raise ValueError(f"sequence length {t} exceeds block_size {self.block_size}")
        check_token_ids(idx, self.tok_emb.num_embeddings)
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        return self.head(self.norm(self.blocks(x)))
