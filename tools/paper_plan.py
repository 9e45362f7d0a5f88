"""The paper-profile plan: every run of the ``paper`` profile, grouped by the report rows it
decides, with its estimated GPU-hours (``python -m tools.retrain --status --profile paper``).

The estimate comes from counted FLOPs: the GPUs lent (H100s, ``benchmarks/gpu_check.py``)
measured bf16 training steps, while the paper profile's runs are float32, so its rates do not
price them (they do show the utilisation assumed here is optimistic for the small models: ResNet-18
on CIFAR-10 reached about 5 % of the bf16 peak, GPT-2 small about 20 %). The forward
FLOPs of one example are counted with ``torch.utils.flop_counter.FlopCounterMode`` on a batch of
2 (the model built on the meta device, so nothing is allocated), times 3 for forward plus
backward, times the training examples and epochs, plus one forward per validation example and
epoch; divided by a stated GPU peak (:data:`GPU`) at a stated model FLOP utilisation. The counter
sees matrix products and convolutions, not elementwise work (activations, normalisation), so
activation arms of one model cost the same here; the ReLU-ization analyses after training and
data loading are not counted.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from helpers.core.models import build_model
from helpers.core.runs import TrainConfig
from helpers.core.runtime import repo_root
from helpers.flexact.readings import readings_configs
from helpers.flexact.synthetic import FlexActSyntheticConfig, sensitivity_configs, synthetic_configs
from helpers.flexact.synthetic import build_model as build_synthetic
from helpers.relu_ization.experiment import reluization_configs
from helpers.relu_ization.protocol import RELU_PAIRS
from helpers.srelu.dpo_experiment import DPOOptions, dpo_configs
from tools.cli import ArgumentParser
from tools.run import all_experiments


@dataclass(frozen=True)
class GPUPeak:
    """The GPU an estimate assumes: its dense peak per training precision and the share of it a
    run reaches."""

    name: str
    peak_tflops: dict[str, float]  # dense, by a config's ``precision``
    mfu: float  # model FLOP utilisation assumed

    def seconds(self, flops: float, precision: str = "float32") -> float:
        if precision not in self.peak_tflops:
            raise ValueError(
                f"no peak of {self.name} for precision {precision!r}; known: {', '.join(self.peak_tflops)}"
            )
        return flops / (self.peak_tflops[precision] * 1e12 * self.mfu)

    def describe(self) -> str:
        peaks = ", ".join(f"{p} {v:g}" for p, v in self.peak_tflops.items())
        return f"an {self.name} (dense peak TFLOP/s: {peaks}) at {self.mfu:.0%} model FLOP utilisation"


#: NVIDIA H100 SXM's dense peaks: bf16 on tensor cores 989 TFLOP/s (1,979 is the sparse figure);
#: float32 67 TFLOP/s, because the book's float32 runs keep TF32 off (helpers/core/device.py), so
#: their matmuls do not use the tensor cores. At 35 % model FLOP utilisation: well-tuned
#: large-model training reaches 40-50 %, and the book's small models with small batches reach less.
GPU = GPUPeak("NVIDIA H100 SXM", {"bf16": 989.0, "float32": 67.0}, 0.35)


@dataclass(frozen=True)
class DataShape:
    """What the FLOP count needs of a dataset: one example's shape and the split sizes (examples,
    or tokens for text), from the official releases (our splits where the loader makes its own)."""

    input_shape: tuple[int, ...] | None
    num_classes: int | None
    n_train: int
    n_val: int
    vocab_size: int | None = None


DATA: dict[str, DataShape] = {
    "adult": DataShape((107,), 2, 39_074, 9_768),  # one-hot features; seeded 80/20 split of 48,842
    "fashion_mnist": DataShape((1, 28, 28), 10, 60_000, 10_000),
    "cifar10": DataShape((3, 32, 32), 10, 50_000, 10_000),
    "cifar100": DataShape((3, 32, 32), 100, 50_000, 10_000),
    "tinyimagenet": DataShape((3, 64, 64), 200, 100_000, 10_000),
    "imagenet": DataShape((3, 224, 224), 1000, 1_281_167, 50_000),
    "tinyshakespeare": DataShape(None, None, 1_003_854, 111_540, vocab_size=65),  # characters, 90/10
    "wikitext2": DataShape(None, None, 2_088_628, 217_646, vocab_size=33_278),  # word-level tokens
}


@dataclass(frozen=True)
class PlanGroup:
    """A set of paper-profile runs and the report rows they decide (the pages that show them)."""

    key: str
    title: str
    decides: str
    configs: Callable[[], list]


def _experiment(name: str) -> Callable[[], list]:
    return lambda: all_experiments()[name]("paper")


def _reluization() -> list:
    return [c for pair in RELU_PAIRS for c in reluization_configs(pair, "paper")]


def _flexact_synthetic() -> list:
    seen: dict[str, Any] = {}
    for cfg in [*synthetic_configs("paper"), *sensitivity_configs("paper"), *readings_configs("paper")]:
        seen.setdefault(repr(cfg), cfg)  # the readings reuse some sensitivity runs
    return list(seen.values())


GROUPS: tuple[PlanGroup, ...] = (
    PlanGroup(
        "lgelu_grid",
        "λ-GELU Fig. 1: (t, c) grid, MLP/Fashion-MNIST",
        "10_lambda_gelu_tc_grid: the Fig. 1 rows",
        _experiment("lgelu_grid"),
    ),
    PlanGroup(
        "lgelu_csweep",
        "λ-GELU Fig. 2: c sweep, ResNet-18/CIFAR-100",
        "10_lambda_gelu_tc_grid: the Fig. 2 rows",
        _experiment("lgelu_csweep"),
    ),
    PlanGroup(
        "lgelu_table1",
        "λ-GELU Table I + Fig. 3: six model–data pairs (incl. CIFAR-100, TinyImageNet, WikiText-2)",
        "11_lambda_gelu_profiles: Table I and Fig. 3 rows",
        _experiment("lgelu_table1"),
    ),
    PlanGroup(
        "lgelu_table2",
        "λ-GELU Table II: GELU vs annealed λ-GELU, ReLU swap, six pairs",
        "12_lambda_gelu_annealing: Table II rows",
        _experiment("lgelu_table2"),
    ),
    PlanGroup(
        "srelu_delta",
        "S-ReLU Table 4: δ sensitivity, ViT/CIFAR-10",
        "20_srelu_delta_sensitivity: Table 4 rows",
        _experiment("srelu_delta"),
    ),
    PlanGroup(
        "srelu_compare",
        "S-ReLU Tables 1-2: ViT and ConvNeXt on CIFAR-10",
        "21_srelu_benchmarks: Tables 1-2 rows (the ConvNeXt headline)",
        _experiment("srelu_compare"),
    ),
    PlanGroup(
        "srelu_dpo",
        "S-ReLU Table 3 stand-in: GPT pre-training + DPO grid",
        "22_srelu_dpo: Table 3 rows",
        lambda: dpo_configs("paper"),
    ),
    PlanGroup(
        "flexact_synthetic",
        "Flex-Act Table 1, Figs. 1-3, sensitivity and readings (synthetic)",
        "30_flexact_synthetic: Table 1 and readings rows",
        _flexact_synthetic,
    ),
    PlanGroup(
        "flexact_cifar",
        "Flex-Act Table 2: ResNet-18/34 on CIFAR-10",
        "31_flexact_cifar: Table 2 rows",
        _experiment("flexact_cifar"),
    ),
    PlanGroup(
        "reluization",
        "ReLU-ization (beyond the papers): five arms on every pair",
        "40_reluization_mlp, 41_reluization_pairs: the chapter's rows",
        _reluization,
    ),
)


def _forward_flops(model: nn.Module, example: torch.Tensor) -> float:
    """Forward FLOPs per example of ``model`` on a batch of 2 copies of ``example``."""
    batch = example.expand(2, *example.shape[1:]) if example.shape[0] == 1 else example
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(batch)
    return counter.get_total_flops() / batch.shape[0]


@functools.cache
def _model_flops(model: str, kwargs_json: str, dataset: str, seq: int | None) -> float:
    kwargs = json.loads(kwargs_json)
    shape = DATA[dataset]
    with torch.device("meta"):
        if shape.vocab_size is not None:
            net = build_model(model, vocab_size=shape.vocab_size, act=nn.GELU, **kwargs)
            example = torch.zeros(1, seq, dtype=torch.long)
        else:
            net = build_model(
                model, input_shape=shape.input_shape, num_classes=shape.num_classes, act=nn.GELU, **kwargs
            )
            example = torch.zeros(1, *shape.input_shape)
    return _forward_flops(net, example)


def _train_flops(cfg: TrainConfig) -> float:
    shape = DATA[cfg.dataset]
    kwargs = json.dumps(cfg.model_kwargs, sort_keys=True)
    if shape.vocab_size is not None:
        block = int(cfg.model_kwargs.get("block_size", cfg.block_size))
        n_train = (
            (shape.n_train - 1) // block if cfg.n_train is None else min(cfg.n_train, (shape.n_train - 1) // block)
        )
        n_val = (shape.n_val - 1) // block if cfg.n_val is None else min(cfg.n_val, (shape.n_val - 1) // block)
        per = _model_flops(cfg.model, kwargs, cfg.dataset, block)
    else:
        n_train = shape.n_train if cfg.n_train is None else min(cfg.n_train, shape.n_train)
        n_val = shape.n_val if cfg.n_val is None else min(cfg.n_val, shape.n_val)
        per = _model_flops(cfg.model, kwargs, cfg.dataset, None)
    return per * cfg.epochs * (3 * n_train + n_val)


def _dpo_flops(cfg: TrainConfig, dpo: DPOOptions) -> float:
    """Per (family, β) cell of a DPO run, ``dpo_steps`` batches of chosen/rejected sequences
    through the policy (forward + backward) and the frozen reference (forward)."""
    seq = dpo.prompt_len + dpo.continuation_len
    kwargs = json.dumps(cfg.model_kwargs, sort_keys=True)
    per_seq = _model_flops("gpt", kwargs, "tinyshakespeare", seq)
    cells = len(dpo.families) * len(dpo.dpo_betas)
    return cells * dpo.dpo_steps * dpo.dpo_batch * 2 * (3 + 1) * per_seq


def _synthetic_flops(cfg: FlexActSyntheticConfig) -> float:
    net = build_synthetic(cfg)  # a few hundred weights: built for real (its sampling reads values)
    example = torch.zeros(1, cfg.n_features)
    per = _forward_flops(net, example)
    return per * cfg.epochs * (3 * cfg.n_train + cfg.n_val)


def run_flops(cfg: Any) -> float:
    """Counted training FLOPs of one paper-profile run (see the module docstring)."""
    if isinstance(cfg, TrainConfig):
        dpo = [o for o in cfg.options if isinstance(o, DPOOptions)]
        return _train_flops(cfg) + (_dpo_flops(cfg, dpo[0]) if dpo else 0.0)
    if hasattr(cfg, "train_config"):  # a ReLU-ization run trains one TrainConfig
        return _train_flops(cfg.train_config())
    if isinstance(cfg, FlexActSyntheticConfig):
        return _synthetic_flops(cfg)
    raise TypeError(f"no FLOP count for {type(cfg).__name__}")


def _precision(cfg: Any) -> str:
    train = cfg.train_config() if hasattr(cfg, "train_config") else cfg
    return getattr(train, "precision", "float32")


def gpu_hours(cfg: Any, gpu: GPUPeak = GPU) -> float:
    """Estimated GPU-hours of one run on ``gpu`` (counted FLOPs at its peak × utilisation)."""
    return gpu.seconds(run_flops(cfg), _precision(cfg)) / 3600


@dataclass(frozen=True)
class GroupPlan:
    key: str
    title: str
    decides: str
    runs: int
    gpu_hours: float
    largest_run_hours: float


def plan(groups: tuple[PlanGroup, ...] = GROUPS, gpu: GPUPeak = GPU) -> list[GroupPlan]:
    """Every group's run count and estimated GPU-hours (a run two groups share counts in both)."""
    out = []
    for group in groups:
        hours = [gpu_hours(cfg, gpu) for cfg in group.configs()]
        out.append(GroupPlan(group.key, group.title, group.decides, len(hours), sum(hours), max(hours, default=0.0)))
    return out


def plan_text(groups: tuple[PlanGroup, ...] = GROUPS, gpu: GPUPeak = GPU) -> str:
    """The plan of ``groups`` as the lines ``retrain --status --profile paper`` prints."""
    rows = plan(groups, gpu)
    distinct = {repr(cfg): cfg for group in groups for cfg in group.configs()}
    total = sum(gpu_hours(cfg, gpu) for cfg in distinct.values())
    lines = [
        f"paper profile: {len(distinct)} distinct runs, about {total:,.1f} GPU-hours on {gpu.describe()}",
        "(an estimate from counted FLOPs, the GPU measured only bf16 steps and these runs are float32: matmuls and "
        "convolutions only, forward ×3 for training, plus validation forwards. For the book's small "
        "models it is a lower bound: kernel launches and data loading, not FLOPs, limit them; a run "
        "shared by two groups counts in both groups' lines and once in this total)",
    ]
    for r in rows:
        lines.append(
            f"[{r.key}] {r.title}: {r.runs} runs, {r.gpu_hours:,.2f} GPU-hours "
            f"(longest run {r.largest_run_hours:.3f} h); decides {r.decides}"
        )
    return "\n".join(lines)


def paper_configs(keys: list[str] | None = None) -> list:
    """The runs of the groups ``keys`` (default: all), in group order, each once."""
    unknown = [k for k in keys or [] if k not in {g.key for g in GROUPS}]
    if unknown:
        raise ValueError(
            f"unknown paper-profile group {', '.join(unknown)}; choose from {', '.join(g.key for g in GROUPS)}"
        )
    seen, out = set(), []
    for group in GROUPS:
        if keys and group.key not in keys:
            continue
        for cfg in group.configs():
            if repr(cfg) not in seen:
                seen.add(repr(cfg))
                out.append(cfg)
    return out


#: The page that shows the plan, and the markers around its generated table.
PAGE = "book/paper_scale.md"
TABLE_START, TABLE_END = (
    "<!-- plan table: generated by python -m tools.paper_plan --write -->",
    "<!-- end of plan table -->",
)


def plan_markdown(groups: tuple[PlanGroup, ...] = GROUPS, gpu: GPUPeak = GPU) -> str:
    """The plan as the markdown table of the page (:data:`PAGE`)."""
    lines = [
        "| group (`retrain --profile paper GROUP`) | runs | GPU-hours (est.) | decides the report rows of |",
        "|---|---:|---:|---|",
    ]
    for group, row in zip(groups, plan(groups, gpu)):
        hours = "< 0.01" if row.gpu_hours < 0.01 else f"{row.gpu_hours:.2f}"
        lines.append(f"| `{group.key}`: {group.title} | {row.runs} | {hours} | {group.decides} |")
    distinct = {repr(cfg): cfg for group in groups for cfg in group.configs()}
    total = sum(gpu_hours(cfg, gpu) for cfg in distinct.values())
    lines.append(f"| all groups (a shared run counted once) | {len(distinct)} | {total:.1f} | |")
    lines.append("")
    lines.append(
        f"GPU-hours: an estimate from counted FLOPs (the GPUs lent measured bf16 steps, "
        f"`benchmarks/gpu_check_measured.md`; these runs are float32) on "
        f"{gpu.describe()}, each run at its own precision; for the book's small models a lower "
        "bound (see `tools/paper_plan.py`)."
    )
    return "\n".join(lines)


def page_with_table(text: str, table: str) -> str:
    """``text`` with the part between the markers replaced by ``table``."""
    if TABLE_START not in text or TABLE_END not in text:
        raise ValueError(f"{PAGE} lacks the plan table's markers ({TABLE_START!r} ... {TABLE_END!r})")
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    return f"{head}{TABLE_START}\n{table}\n{TABLE_END}{tail}"


def main(argv: list[str] | None = None) -> None:
    """``--write``: regenerate the plan table of :data:`PAGE`; without it, print the table."""
    parser = ArgumentParser(
        prog="python -m tools.paper_plan",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--write", action="store_true", help=f"rewrite the plan table of {PAGE}")
    args = parser.parse_args(argv)
    table = plan_markdown()
    if not args.write:
        print(table)
        return
    page = repo_root() / PAGE
    page.write_text(page_with_table(page.read_text(), table))
    print(f"wrote the plan table of {PAGE}")


if __name__ == "__main__":
    main()
