"""The ``paper`` profile of the λ-GELU protocols builds the paper's setup (Section IV), untrained.

Configs are checked field by field against :mod:`helpers.lambda_gelu.paper` (the paper's numbers,
typed once there). Models are built directly at the paper's shapes, since the paper-profile data
sets (CIFAR-100, TinyImageNet, WikiText-2) are not available offline; their parameter counts are
checked against closed-form counts of the architectures, and the optimiser against Section III
(``η_s = c·η_w`` for every ``s``, no weight decay on ``s``).
"""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from torch import nn

from helpers.activations import activation_factory
from helpers.core.runs import TrainConfig, applicable_extensions, param_groups_of
from helpers.core.train import optimizer_from_groups
from helpers.lambda_gelu import paper
from helpers.lambda_gelu.hardness import hardness_parameters, lambda_target
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.lambda_gelu.protocol import (
    PAIRS,
    TABLE1_PAIRS,
    c_sweep_configs,
    grid_configs,
    table1_configs,
    table1_pairs,
    table2_configs,
)
from helpers.models import build_model

PROFILE = "paper"
#: Which of the paper's training recipes (Section IV) each model follows.
RECIPE = {"mlp": "mlp", "resnet18": "resnet18", "vit": "deit", "gpt": "gpt2"}
#: The loader name of each of the paper's data sets.
DATASET = {
    "Adult": "adult",
    "FMNIST": "fashion_mnist",
    "CIFAR10": "cifar10",
    "CIFAR100": "cifar100",
    "TinyImageNet": "tinyimagenet",
    "WikiText-2": "wikitext2",
}


def _configs(pair: str) -> list[TrainConfig]:
    return [c for c in table1_configs(PROFILE) if c.experiment == f"lgelu_{pair}"]


# ------------------------------------------------------------------------------------ configs
def test_paper_profile_runs_all_six_pairs():
    assert table1_pairs(PROFILE) == TABLE1_PAIRS
    assert {PAIRS[p].paper_dataset for p in TABLE1_PAIRS} == set(paper.table_i()["dataset"])


@pytest.mark.parametrize("pair", TABLE1_PAIRS)
def test_table1_configs_follow_section_iv(pair: str):
    spec = PAIRS[pair]
    recipe = paper.TRAINING[RECIPE[spec.model]]
    configs = _configs(pair)
    assert configs, f"no paper-profile config for {pair}"
    table = paper.table_i()
    last_bvs_epoch = int(table[table["dataset"] == spec.paper_dataset]["epoch"].max())
    for cfg in configs:
        assert cfg.profile == PROFILE
        assert cfg.dataset == DATASET[spec.paper_dataset]
        assert cfg.optimizer == recipe.optimizer.lower()
        assert cfg.lr == recipe.lr
        assert cfg.weight_decay == recipe.weight_decay
        assert cfg.n_train is None and cfg.n_val is None, "the paper profile uses the full data"
        # the paper does not state its epochs; ours must at least reach its latest BVS epoch
        assert cfg.epochs >= last_bvs_epoch
        assert cfg.option(LambdaGeluOptions).anneal_target is None
        if cfg.activation == "lambda_gelu":
            assert cfg.activation_kwargs == {"t": paper.CHOSEN_T}
            assert cfg.option(LambdaGeluOptions).hardness_lr_mult == paper.CHOSEN_C
    runs = Counter((c.activation, c.option(LambdaGeluOptions).init_mode) for c in configs)
    expected = [("gelu", None), ("relu", None)] + [("lambda_gelu", m) for m in paper.INIT_MODES_PAPER]
    assert sorted(runs, key=str) == sorted(expected, key=str)
    assert set(runs.values()) == {paper.SEEDS_PAPER}
    assert len({c.seed for c in configs}) == paper.SEEDS_PAPER


def test_grid_is_the_papers_t_c_grid_on_mlp_fmnist():
    configs = grid_configs(PROFILE)
    lam = [c for c in configs if c.activation == "lambda_gelu"]
    cells = Counter((c.activation_kwargs["t"], c.option(LambdaGeluOptions).hardness_lr_mult) for c in lam)
    assert set(cells) == {(t, c) for t in paper.GRID_T for c in paper.GRID_C}
    assert set(cells.values()) == {len(paper.INIT_MODES_PAPER) * paper.SEEDS_PAPER}
    assert {c.dataset for c in configs} == {"fashion_mnist"} and {c.optimizer for c in configs} == {"sgd"}
    assert [c.activation for c in configs].count("gelu") == paper.SEEDS_PAPER


def test_c_sweep_is_resnet18_cifar100_adamw_at_fixed_t():
    configs = c_sweep_configs(PROFILE)
    lam = [c for c in configs if c.activation == "lambda_gelu"]
    assert {c.dataset for c in configs} == {"cifar100"} and {c.model for c in configs} == {"resnet18"}
    assert {c.optimizer for c in configs} == {"adamw"}
    assert {c.activation_kwargs["t"] for c in lam} == {paper.FIG2_T}
    assert sorted({c.option(LambdaGeluOptions).hardness_lr_mult for c in lam}) == list(paper.GRID_C)


def test_table2_anneals_after_a_quarter_towards_lambda_target():
    configs = table2_configs(PROFILE)
    assert {c.experiment for c in configs} == {f"lgelu_{p}" for p in TABLE1_PAIRS}
    assert len(configs) == len(TABLE1_PAIRS) * paper.SEEDS_PAPER
    for cfg in configs:
        assert cfg.activation == "lambda_gelu"
        assert cfg.anneal_switch == paper.SWITCH_FRACTION
        assert cfg.option(LambdaGeluOptions).anneal_target == pytest.approx(lambda_target(paper.EPS_PAPER))
        # the paper rounds λ_target to 160; ours is the exact 2/(ε√(2π)) ≈ 159.58
        assert round(cfg.option(LambdaGeluOptions).anneal_target) == paper.LAMBDA_TARGET_PAPER


# ------------------------------------------------------------------------------------- models
def _linear(n_in: int, n_out: int, bias: bool = True) -> int:
    return n_in * n_out + (n_out if bias else 0)


def mlp_count(n_in: int, width: int, depth: int, n_out: int) -> int:
    return _linear(n_in, width) + (depth - 1) * _linear(width, width) + _linear(width, n_out)


def resnet18_cifar_count(n_classes: int) -> int:
    """ResNet-18 with a 3x3 stride-1 stem (no max-pool): convolutions without bias, BatchNorm
    with weight and bias, 1x1 projection shortcuts where the shape changes."""

    def conv(cin, cout, k):
        return cin * cout * k * k

    def bn(c):
        return 2 * c

    total = conv(3, 64, 3) + bn(64)
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            total += conv(cin, cout, 3) + bn(cout) + conv(cout, cout, 3) + bn(cout)
            if stride != 1 or cin != cout:
                total += conv(cin, cout, 1) + bn(cout)
            cin = cout
    return total + _linear(512, n_classes)


def _block_count(dim: int, mlp_ratio: int = 4) -> int:
    norms = 2 * (2 * dim)
    attention = _linear(dim, 3 * dim) + _linear(dim, dim)
    mlp = _linear(dim, mlp_ratio * dim) + _linear(mlp_ratio * dim, dim)
    return norms + attention + mlp


def deit_count(image: int, patch: int, dim: int, depth: int, n_classes: int, channels: int = 3) -> int:
    n_patches = (image // patch) ** 2
    embed = channels * patch * patch * dim + dim
    tokens = dim + (n_patches + 1) * dim  # class token + positions
    return embed + tokens + depth * _block_count(dim) + 2 * dim + _linear(dim, n_classes)


def gpt2_count(vocab: int, context: int, dim: int, layers: int) -> int:
    # tied input/output embedding: the head adds no parameter
    return vocab * dim + context * dim + layers * _block_count(dim) + 2 * dim


def test_closed_form_counts_match_the_published_sizes():
    """Sanity check of the counting functions themselves: GPT-2 small has 124,439,808 parameters
    (the tied-embedding count of the released checkpoint) and ResNet-18 on ImageNet 11,689,512."""
    assert gpt2_count(50257, 1024, 768, 12) == 124_439_808
    imagenet_stem_delta = 64 * 3 * (7 * 7 - 3 * 3)
    assert resnet18_cifar_count(1000) + imagenet_stem_delta == 11_689_512


GPT2_VOCAB = 50257  # GPT-2's byte-pair vocabulary


@pytest.mark.parametrize(
    "pair, build_kwargs, expected, n_sites",
    [
        ("fmnist", {"input_shape": (1, 28, 28), "num_classes": 10}, mlp_count(784, 256, 4, 10), 4),
        ("cifar100_resnet", {"input_shape": (3, 32, 32), "num_classes": 100}, resnet18_cifar_count(100), 17),
        ("tinyimagenet_deit", {"input_shape": (3, 64, 64), "num_classes": 200}, deit_count(64, 8, 192, 12, 200), 12),
        ("wikitext_gpt", {"vocab_size": GPT2_VOCAB}, gpt2_count(GPT2_VOCAB, 1024, 768, 12), 12),
    ],
    ids=["mlp-4x256", "resnet18-cifar100", "deit-tiny-64px-200", "gpt2-small"],
)
def test_paper_models_and_optimiser(pair, build_kwargs, expected, n_sites):
    spec = PAIRS[pair]
    cfg = next(c for c in _configs(pair) if c.activation == "lambda_gelu")
    model = build_model(
        spec.model,
        act=activation_factory(cfg.activation, **cfg.activation_kwargs),
        **build_kwargs,
        **spec.scale(PROFILE).model_kwargs,
    )
    s_params = hardness_parameters(model)
    assert len(s_params) == n_sites and all(p.numel() == 1 for p in s_params), "one λ per activation layer"
    assert sum(p.numel() for p in model.parameters()) == expected + n_sites

    groups = param_groups_of(applicable_extensions(model, cfg), model, cfg)  # what the run builds
    optimizer = optimizer_from_groups(groups, cfg.optimizer, lr=cfg.lr, momentum=cfg.momentum)
    recipe = paper.TRAINING[RECIPE[spec.model]]
    assert type(optimizer) is {"sgd": torch.optim.SGD, "adamw": torch.optim.AdamW}[recipe.optimizer.lower()]
    s_ids = {id(p) for p in s_params}
    groups = {g["name"]: g for g in optimizer.param_groups}
    assert set(groups) == {"weights", "hardness"}
    hard, weights = groups["hardness"], groups["weights"]
    assert {id(p) for p in hard["params"]} == s_ids
    assert hard["lr"] == pytest.approx(paper.CHOSEN_C * recipe.lr)
    assert hard["weight_decay"] == 0.0
    assert not s_ids & {id(p) for p in weights["params"]}
    assert weights["lr"] == recipe.lr and weights["weight_decay"] == recipe.weight_decay
    n_unique = len({id(p) for p in model.parameters()})
    assert len(hard["params"]) + len(weights["params"]) == n_unique


def test_adult_mlp_is_four_layers_of_256():
    spec = PAIRS["adult"]
    model = build_model("mlp", input_shape=(107,), num_classes=2, **spec.scale(PROFILE).model_kwargs)
    widths = [m.out_features for m in model.modules() if isinstance(m, nn.Linear)]
    assert widths == [256, 256, 256, 256, 2]
