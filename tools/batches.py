"""What the retrain trains: its batches, each a named, ordered list of runs, and the issue whose
budget pays for them.

Each batch is a :class:`Batch` whose runs are the cpu scales of the method
protocols' ``SCALES`` tables (the scales every page runs at). Runs are listed seed-major (seed 0 of
every arm, then seed 1, ...), so that the runs finished at any moment form complete paired sets and
a session that stops leaves whole seeds behind. :mod:`tools.retrain` trains them and
reports how far along they are.

A new batch is one entry of :data:`BATCHES`: a key, a title, a function listing its runs, and its
issue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from helpers.churn import protocol as churn
from helpers.core.runs import TrainConfig
from helpers.flexact import protocol as flexact
from helpers.lambda_gelu import protocol as lgelu
from helpers.relu_ization.experiment import reluization_configs
from helpers.relu_ization.protocol import pair_scale as reluization_scale
from helpers.srelu import protocol as srelu

#: The issue each claim belongs to, and the training budget that issue set (core-hours on this
#: machine class; ``None``: none stated). The ReLU-ization chapter's runs are at the same scale but
#: are that chapter's cost, not the retrain's.
ISSUES: dict[str, float | None] = {"Decisive scale": 30.0, "ReLU-ization": None, "CPU budget": 40.0, "Churn": 20.0}


@dataclass(frozen=True)
class Batch:
    """One decisive claim of the retrain: its key, what it tests, its runs and its issue."""

    key: str
    title: str
    configs: Callable[[], list]  # TrainConfig, or a method's own config (ReluizationConfig)
    issue: str = "Decisive scale"
    #: Seeds of these runs trained before the retrain existed (by the page's first cpu run): they
    #: count for no issue's budget (:func:`issue_core_hours`).
    seeds_trained_before: tuple[int, ...] = ()
    #: Report rows (claim keys) whose seed plan these runs buy: ``--plan`` names the claim beside them.
    decides: tuple[str, ...] = ()


def _seed_major(configs: list[TrainConfig]) -> list[TrainConfig]:
    """The same configs, ordered by seed first (stable within a seed)."""
    return sorted(configs, key=lambda c: c.seed)


#: Seeds the seed plan (``--plan``) says decide a row, cheapest decisions first: each set is the
#: committed seeds and the added ones. The ReLU-ization MLP rows need n = 9, 13 and 17 (annealed
#: S-ReLU → ReLU vs ReLU; λ-GELU int8; per-layer targets); λ-GELU Table II's DeiT row n = 11; the
#: ReLU-ization GPT rows n = 4 and 5 (int8 cost of GELU vs ReLU; per-layer targets vs the global one),
#: and, once those five were in, n = 8 for the int8 cost (batch (t), float32) and n = 5 for Table I's
#: ResNet-18 row "λ-GELU's BVS is close to GELU's" (batch (u), bf16: Table I's ReLU and λ-GELU arms
#: at the two seeds its GELU runs already have).
MLP_PLAN_SEEDS: tuple[int, ...] = reluization_scale("fmnist", "cpu").seeds  # the pages' scales, once switched
DEIT_PLAN_SEEDS: tuple[int, ...] = lgelu.PAIRS["tinyimagenet_deit"].scale("cpu").seeds
GPT_PLAN_SEEDS: tuple[int, ...] = tuple(range(5))  # what batch (s) trained; the page has them
GPT_INT8_PLAN_SEEDS: tuple[int, ...] = tuple(range(8))
RESNET_TABLE1_PLAN_SEEDS: tuple[int, ...] = tuple(range(5))

#: λ-GELU's decisive pairs but the GPT decoder: batches (c) and (d) (Tables I-II on the vision pairs);
#: the GPT pair's decisive runs are batch (i), the floor of the language model.
LGELU_VISION_PAIRS: tuple[str, ...] = tuple(p for p in lgelu.DECISIVE_PAIRS if p != "wikitext_gpt")


def _with_seeds(configs: list[TrainConfig], seeds: tuple[int, ...]) -> list[TrainConfig]:
    """Seed 0's configs repeated for every seed of ``seeds``, seed-major (the λ-GELU pair configs
    differ between seeds in ``seed`` only)."""
    first = [c for c in configs if c.seed == 0]
    return [replace(c, seed=s) for s in seeds for c in first]


def _reluization(pair: str, seeds: tuple[int, ...]) -> list:
    """A ReLU-ization pair's five arms at its cpu scale, for ``seeds``, seed-major."""
    return _seed_major(reluization_configs(pair, "cpu", scale=replace(reluization_scale(pair, "cpu"), seeds=seeds)))


def _lgelu_table2(pairs: tuple[str, ...]) -> list[TrainConfig]:
    """Table II: the GELU runs (their ReLU swap is recorded with them) and annealed λ-GELU."""
    gelu = [c for c in lgelu.table1_configs("cpu", pairs) if c.activation == "gelu"]
    return _seed_major(gelu + lgelu.table2_configs("cpu", pairs))


def _lgelu_table1(pairs: tuple[str, ...]) -> list[TrainConfig]:
    """Table I + Fig. 3 beyond the GELU runs of Table II: ReLU and λ-GELU in three init modes."""
    return _seed_major([c for c in lgelu.table1_configs("cpu", pairs) if c.activation != "gelu"])


BATCHES: dict[str, Batch] = {
    "a": Batch(
        "a",
        "S-ReLU Table 2: ConvNeXt on CIFAR-10, GELU/ReLU/S-ReLU/ELU/SiLU, 12 epochs (replaced on the page by p)",
        lambda: srelu.convnext_configs(srelu.EARLIER_CONVNEXT_CPU),
    ),
    "b": Batch(
        "b",
        "S-ReLU Table 1: ViT on CIFAR-10, GELU/PReLU/ReLU/S-ReLU",
        lambda: _seed_major(srelu.compare_configs("cpu", "vit")),
    ),
    "c": Batch(
        "c",
        "λ-GELU Table II: GELU vs annealed λ-GELU, ReLU swap (MLP/FMNIST, ResNet-18/CIFAR-10)",
        lambda: _lgelu_table2(LGELU_VISION_PAIRS),
    ),
    "d": Batch(
        "d",
        "λ-GELU Table I + Fig. 3: ReLU, λ-GELU in three init modes (MLP/FMNIST, ResNet-18/CIFAR-10)",
        lambda: _lgelu_table1(LGELU_VISION_PAIRS),
    ),
    "e": Batch(
        "e",
        "λ-GELU Fig. 1: every (t, c) cell with 3 seeds per init mode (MLP/FMNIST, figure scale)",
        lambda: _seed_major(lgelu.grid_configs("cpu")),
    ),
    "f": Batch(
        "f",
        "Flex-Act Table 2: ResNet-18/CIFAR-10, plain vs Flex-Act at the penultimate layer",
        lambda: _seed_major(flexact.table2_configs("cpu")),
    ),
    "g": Batch(
        "g",
        "S-ReLU Table 4: δ sweep on ViT/CIFAR-10 (δ = 0.001, 0.1, 1, 10)",
        lambda: _seed_major(srelu.delta_configs("cpu")),
    ),
    # Not a paper's claim: the ReLU-ization chapter (beyond the papers) at the decisive MLP scale.
    # Its GELU, ReLU and annealed λ-GELU arms retrain the committed (c)/(d) runs and check them.
    # Seeds 0-4, what this claim trained; batch (q) added the page's other twelve.
    "h": Batch(
        "h",
        "ReLU-ization (beyond the papers): five arms, swap and analyses (MLP/FMNIST)",
        lambda: _reluization("fmnist", tuple(range(5))),
        issue="ReLU-ization",
    ),
    # The GPT decoder's floor (≤ 1.8 nats/char, point 1 of the issue): λ-GELU's Tables I-II on it.
    "i": Batch(
        "i",
        "λ-GELU Tables I-II on the GPT decoder at its floor scale (Tiny Shakespeare, full data)",
        lambda: _seed_major(
            [*lgelu.table1_configs("cpu", ("wikitext_gpt",)), *lgelu.table2_configs("cpu", ("wikitext_gpt",))]
        ),
    ),
    # The ReLU-ization chapter's ResNet-18 pair at the decisive scale, 3 seeds: its GELU, ReLU and
    # annealed λ-GELU arms analyse the final weights the (c)/(d) runs kept on this machine (or
    # retrain them, checked against the committed result); S-ReLU δ-annealing and per-layer λ train.
    "j": Batch(
        "j",
        "ReLU-ization (beyond the papers): five arms, swap and analyses (ResNet-18/CIFAR-10)",
        lambda: _seed_major(reluization_configs("cifar10_resnet", "cpu")),
        issue="ReLU-ization",
    ),
    # The chapter's ViT pair at the S-ReLU chapter's decisive ViT scale (relu_ization.protocol.VIT_CPU), float32.
    "k": Batch(
        "k",
        "ReLU-ization (beyond the papers): five arms, swap and analyses (ViT/CIFAR-10)",
        lambda: _seed_major(reluization_configs("vit", "cpu")),
        issue="ReLU-ization",
    ),
    # The chapter's GPT pair at batch (i)'s floor scale, float32, seeds 0-2 (batches (s) and (t) add
    # the page's others): its GELU, ReLU and annealed λ-GELU arms are batch (i)'s runs (same
    # configs), analysed from the final weights those kept.
    "l": Batch(
        "l",
        "ReLU-ization (beyond the papers): five arms, swap and analyses (GPT decoder/Tiny Shakespeare)",
        lambda: _reluization("gpt", tuple(range(3))),
        issue="ReLU-ization",
    ),
    # What the cpu budget can decide: the ConvNeXt pilot (GELU, seed 0, one run per lever) that
    # chooses the scale at which S-ReLU's Table 2 is rerun towards ConvNeXt's 75 % floor.
    "m": Batch(
        "m",
        "ConvNeXt pilot: GELU learning curves at three candidate scales (CIFAR-10)",
        lambda: srelu.convnext_pilot_configs(),
        issue="CPU budget",
    ),
    # Table 2 at the scale the pilot (m) chose, towards ConvNeXt's 75 % floor.
    "p": Batch(
        "p",
        "S-ReLU Table 2 at the pilot's ConvNeXt scale: 7 activations × 5 seeds, 30 epochs, bf16 (CIFAR-10)",
        lambda: srelu.convnext_configs(srelu.CONVNEXT_FLOOR),
        issue="CPU budget",
    ),
    # Seeds where they decide (the seed plan's cheapest rows): the ReLU-ization MLP set (h) and
    # λ-GELU Table II's DeiT stand-in, each at its larger seed set, committed seeds included.
    "q": Batch(
        "q",
        f"Seeds where they decide: ReLU-ization MLP/FMNIST, five arms × {len(MLP_PLAN_SEEDS)} seeds",
        lambda: _reluization("fmnist", MLP_PLAN_SEEDS),
        issue="CPU budget",
    ),
    "r": Batch(
        "r",
        "Seeds where they decide: λ-GELU Table II, DeiT-tiny stand-in, GELU and annealed"
        f" × {len(DEIT_PLAN_SEEDS)} seeds",
        lambda: _with_seeds(gelu_and_annealed("tinyimagenet_deit"), DEIT_PLAN_SEEDS),
        issue="CPU budget",
        seeds_trained_before=(0, 1, 2),  # the DeiT stand-in's first three seeds, before the retrain
    ),
    "s": Batch(
        "s",
        f"Seeds where they decide: ReLU-ization GPT decoder/Tiny Shakespeare, five arms × {len(GPT_PLAN_SEEDS)} seeds",
        lambda: _reluization("gpt", GPT_PLAN_SEEDS),
        issue="CPU budget",
    ),
    "t": Batch(
        "t",
        "Seeds where they decide: ReLU-ization GPT decoder/Tiny Shakespeare, int8 cost of GELU vs ReLU,"
        f" five arms × {len(GPT_INT8_PLAN_SEEDS)} seeds",
        lambda: _reluization("gpt", GPT_INT8_PLAN_SEEDS),
        issue="CPU budget",
        decides=("reluization-gpt-gelu-int8-cost",),
    ),
    "u": Batch(
        "u",
        "Seeds where they decide: λ-GELU Table I, ResNet-18/CIFAR-10, GELU, ReLU and λ-GELU in three"
        f" init modes × {len(RESNET_TABLE1_PLAN_SEEDS)} seeds, bf16",
        lambda: _with_seeds(lgelu.table1_configs("cpu", ("cifar10_resnet",)), RESNET_TABLE1_PLAN_SEEDS),
        issue="CPU budget",
        decides=("lambda-gelu-table1-bvs-parity-cifar10-resnet",),
    ),
    # Prediction churn between reruns (beyond the papers): 8 arms × 3 sources of nondeterminism × 8
    # replicas per model, listed replica-major (their own order: the TrainConfig seed is unused).
    "n": Batch(
        "n",
        "Churn (beyond the papers): 8 arms, replicas by data order / init / both (MLP/FMNIST)",
        lambda: churn.retrain_configs("mlp"),
        issue="Churn",
    ),
    "o": Batch(
        "o",
        "Churn (beyond the papers): 8 arms, replicas by data order / init / both (ResNet-18 1/8 width/CIFAR-10)",
        lambda: churn.retrain_configs("conv"),
        issue="Churn",
    ),
}


def gelu_and_annealed(pair: str) -> list[TrainConfig]:
    """A pair's runs behind Table II at the cpu profile: GELU (its swap is recorded with it) and
    annealed λ-GELU."""
    return [c for c in lgelu.table1_configs("cpu", (pair,)) if c.activation == "gelu"] + lgelu.table2_configs(
        "cpu", (pair,)
    )
