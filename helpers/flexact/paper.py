"""Flex-Act (``shared/papers/flex-act.txt``): its reported numbers, as data.

Table 1 (synthetic regression, MSE "mean ± std" per model and ground-truth activation) and
Table 2 (CIFAR-10 accuracy) are typed once from the paper as printed. ``†`` marks are the
paper's (its bold marks did not survive the text extraction; the paper says the best entry of
each column is bold). The claims built on them are in :mod:`helpers.flexact.claims`."""

from __future__ import annotations

import pandas as pd

from helpers.core.attribution import Quoted

NOTEBOOK_SYNTHETIC = "notebooks/30_flexact_synthetic"
NOTEBOOK_CIFAR = "notebooks/31_flexact_cifar"
#: MyST labels (``(label)=`` before the "Claims" heading) of the sections that compute the claims.
ANCHOR_SYNTHETIC = "flexact-synthetic-claims"
ANCHOR_CIFAR = "flexact-cifar-claims"
ANCHOR_READINGS = "flexact-readings"
#: "Does not depend on the reading": a reading's selection accuracy within this many percentage
#: points of the baseline reading's (one target of five per seed), TOST, paired by seed.
READINGS_MARGIN_PP = 20.0
#: Table 1 prints four decimals: a printed value v stands for the interval [v − PRINT_UNIT/2, v + PRINT_UNIT/2).
PRINT_UNIT = 1e-4
#: "Matches" on CIFAR-10 (Table 2): Flex-Act not worse than the plain ResNet by more than this many
#: points (non-inferiority, paired by seed); the claim and the page use it.
MATCH_MARGIN = 0.5
SOURCE = "Flex-Act"
GROUND_TRUTHS: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")

#: Stated settings of Section 4.1: y = a(K_SCALE·x₁) over N_FEATURES features, N_SEEDS seeds, and
#: Table 1's α in its row order (the synthetic study's task and grid read them from here).
K_SCALE = 5.0
N_FEATURES = 4
N_SEEDS = 5
ALPHAS: tuple[float, ...] = (0.3, 0.0)

#: Table 1 as printed, one row per model, one column per ground truth (GROUND_TRUTHS' order): mean ± std, † as marked.
_TABLE1_PRINTED = """
Flex-Act (α=0.3) | 0.0001 ± 0.0002 † | 0.0011 ± 0.0006 † | 0.0001 ± 0.0002 † | 0.0001 ± 0.0002 † | 0.0000 ± 0.0000
Flex-Act (α=0)   | 0.0001 ± 0.0001 † | 0.0059 ± 0.0073   | 0.0021 ± 0.0028   | 0.0001 ± 0.0002 † | 0.0000 ± 0.0000
ReLU Model       | 0.0000 ± 0.0000   | 0.0059 ± 0.0072   | 0.4328 ± 0.4287   | 0.0004 ± 0.0007   | 4.1675 ± 6.7199
Sigmoid Model    | 2.1360 ± 3.9912   | 0.0000 ± 0.0000   | 0.4020 ± 0.4536   | 2.1365 ± 3.9910   | 6.3056 ± 6.5772
Tanh Model       | 2.2941 ± 3.9616   | 0.0141 ± 0.0119   | 0.0000 ± 0.0000   | 2.2909 ± 3.9623   | 4.2737 ± 4.7666
LeakyReLU Model  | 0.0004 ± 0.0007   | 0.0059 ± 0.0072   | 0.4286 ± 0.4227   | 0.0000 ± 0.0000   | 4.0787 ± 6.5640
Identity Model   | 0.5209 ± 0.4659   | 0.0078 ± 0.0061   | 0.0985 ± 0.0798   | 0.5105 ± 0.4566   | 0.0000 ± 0.0000
"""


def _cell(text: str) -> tuple[float, float, bool]:
    mean, std = text.strip(" †").split(" ± ")
    return float(mean), float(std), text.strip().endswith("†")


#: Table 1: row label -> ground truth -> (mean, std, paper's † mark).
TABLE1: dict[str, dict[str, tuple[float, float, bool]]] = {
    label.strip(): dict(zip(GROUND_TRUTHS, map(_cell, cells)))
    for label, *cells in (line.split(" | ") for line in _TABLE1_PRINTED.strip().splitlines())
}

#: Table 2 as printed: CIFAR-10 test accuracy (%).
TABLE2: dict[str, float] = {
    "ResNet18": 95.39,
    "ResNet18 + Flex-Act": 95.43,
    "ResNet34": 95.36,
    "ResNet34 + Flex-Act": 95.44,
}

#: The paper's name of each ground truth (its Table 1 rows are "<name> Model").
GROUND_TRUTH_NAMES: dict[str, str] = dict(zip(GROUND_TRUTHS, ("ReLU", "Sigmoid", "Tanh", "LeakyReLU", "Identity")))
_FIXED_LABELS = {gt: f"{name} Model" for gt, name in GROUND_TRUTH_NAMES.items()}


def table1_frame() -> pd.DataFrame:
    """The paper's Table 1 as a frame with MultiIndex columns (``mean``/``std``/``dagger``, gt)."""
    data = {}
    for row, cells in TABLE1.items():
        data[row] = {
            (stat, gt): cells[gt][i] for gt in GROUND_TRUTHS for i, stat in enumerate(("mean", "std", "dagger"))
        }
    frame = pd.DataFrame.from_dict(data, orient="index")
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "Model"
    return frame


#: The paper's own words, where a claim shows them (checked against the source by the tests).
QUOTES: dict[str, Quoted] = {
    "selects_abstract": Quoted(
        "Experiments on synthetic datasets show that our model consistently selects the most suitable "
        "activation function",
        "abstract",
    ),
    "converges_sec_4_1_1": Quoted(
        "Flex-Act consistently converges to the optimal function, matching or outperforming all baselines in "
        "every setting",
        "Section 4.1.1",
    ),
    "fig2_caption": Quoted(
        "The model converges to the appropriate non-linearity across tasks with the exception of Leaky ReLU in "
        "the above example.",
        "Fig. 2 caption",
    ),
    "matched_fixed": Quoted(
        "each fixed-activation model achieves zero error only when its activation matches the ground truth",
        "Section 4.1.1",
    ),
}


# --------------------------------------------------------------------------------------------
# The source read against itself (helpers.flexact.audit): the excerpts its findings rest on
# --------------------------------------------------------------------------------------------
#: Table 2's rows as printed: a plain ResNet (its fixed activation, ReLU) and the same with Flex-Act.
TABLE2_BASELINES: tuple[str, ...] = ("ResNet18", "ResNet34")

QUOTES.update(
    {
        "alpha0_hypothesis": Quoted(
            "the variant without regularization (Flex-Act with α = 0) performs significantly worse when the ground "
            "truth is Sigmoid or Tanh. This confirms our earlier hypothesis that unbounded activations (e.g., ReLU) "
            "dominate gradient flow during training, leading to biased selection without proper correction.",
            "Section 4.1.1",
            (0,),
        ),
        "fig1_lingers": Quoted(
            "Without it ( α = 0), the model lingers on ReLU or LeakyReLU due to their unbounded gradients.",
            "Section 4.1.1, Effect of Regularization",
            (0,),
        ),
        "fixed_networks": Quoted(
            "Fixed-Activation Networks: Five networks, each using a fixed activation from the candidate set.",
            "Section 4.1",
        ),
        "compare_parameterized": Quoted(
            "we compare its performance against fixed activation baselines and parameterized methods",
            "Section 1, Overview and Evaluation",
        ),
        "contribution_deep": Quoted(
            "Our approach consistently improves accuracy and training stability over fixed or parameterized "
            "activation baselines, particularly in very deep architectures where functional diversity across layers "
            "is critical.",
            "Section 1, Contributions",
        ),
        "discussion_parameterized": Quoted(
            "this flexibility enables better fit and interpretability than fixed or parameterized alternatives",
            "Section 5",
        ),
        "single_layer": Quoted("A single-layer network with dynamic, layer-wise activation selection", "Section 4.1"),
        "penultimate_only": Quoted(
            "The current proposal of Flex-Act is primarily designed to be only added at the penultimate layer.",
            "Section 5",
        ),
        "cifar_penultimate": Quoted("Flex-Act is applied to the penultimate layer of the network", "Section 4.2"),
        "no_tuning": Quoted(
            "This enables a single network—without any manual hyperparameter tuning or function sweeping—to recover "
            "the appropriate non-linearity for the task at hand.",
            "Section 1, Motivation",
        ),
        "no_sweeps_conclusion": Quoted(
            "without requiring architecture-specific tuning or manual hyperparameter sweeps", "Section 6"
        ),
        "lambda_scaling": Quoted("is a scaling factor to adjust the pulling factor", "Section 3.3, Eq. (2)"),
        "alpha_weighting": Quoted("is a weighting coefficient", "Section 3.3, Eq. (3)"),
        "tau_limit": Quoted(
            r"As $\tau \to 0$ , this approaches a true categorical distribution; higher $\tau$ yields smoother "
            "mixtures.",
            "Section 3.1",
            (0,),
        ),
        "gumbel_max": Quoted(
            r"Given class probabilities $\pi_1, \ldots, \pi_k$ , the Gumbel-Max trick samples", "Section 3.1"
        ),
        "swish_limits": Quoted(
            r"When $\beta \to 0$ , SWISH behaves like a linear activation function, and as $\beta \to \infty$ , it "
            "becomes similar to the ReLU activation",
            "Section 2, Parameterized Activation Functions",
            (0,),
        ),
        "table1_bold": Quoted("The best result per column is highlighted in **bold**.", "Table 1 caption"),
    }
)

#: Table 1's and Table 2's rows and the words around them that the claims show.
QUOTES.update(
    {
        "table1_flexact_rows": Quoted(
            "Model | $\\mathbf{ReLU}$ | Sigmoid | Tanh | ${\\bf LeakyReLU}$ | Identity\n"
            "Flex-Act $(\\alpha=0.3)$ | $0.0001 \\pm 0.0002^\\dagger$ | $0.0011 \\pm 0.0006^\\dagger$ | "
            "$0.0001 \\pm 0.0002^\\dagger$ | $0.0001 \\pm 0.0002^\\dagger$ | $0.0000 \\pm 0.0000$\n"
            "Flex-Act $(\\alpha=0.0)$ | $0.0001 \\pm 0.0001^{\\dagger}$ | $0.0059 \\pm 0.0073$ | "
            "$0.0021 \\pm 0.0028$ | "
            "$0.0001 \\pm 0.0002^{\\dagger}$ | $0.0000 \\pm 0.0000$",
            "Table 1, the two Flex-Act rows",
            (0.0011, 0.0059, 0.0021),
            table=True,
        ),
        "table1_fixed_rows": Quoted(
            "ReLU Model | $0.0000 \\pm 0.0000$ | $0.0059 \\pm 0.0072$ | $0.4328 \\pm 0.4287$ | $0.0004 \\pm 0.0007$ | "
            "$4.1675 \\pm 6.7199$\n"
            "Sigmoid Model | $2.1360 \\pm 3.9912$ | $0.0000 \\pm 0.0000$ | $0.4020 \\pm 0.4536$ | "
            "$2.1365 \\pm 3.9910$ | $6.3056 \\pm 6.5772$\n"
            "Tanh Model | $2.2941 \\pm 3.9616$ | $0.0141 \\pm 0.0119$ | $0.0000 \\pm 0.0000$ | $2.2909 \\pm 3.9623$ | "
            "$4.2737 \\pm 4.7666$\n"
            "LeakyReLU Model | $0.0004 \\pm 0.0007$ | $0.0059 \\pm 0.0072$ | $0.4286 \\pm 0.4227$ | "
            "$0.0000 \\pm 0.0000$ | $4.0787 \\pm 6.5640$\n"
            "Identity Model | $0.5209 \\pm 0.4659$ | $0.0078 \\pm 0.0061$ | $0.0985 \\pm 0.0798$ | "
            "$0.5105 \\pm 0.4566$ | $0.0000 \\pm 0.0000$",
            "Table 1, the five fixed-model rows (columns ReLU, Sigmoid, Tanh, LeakyReLU, Identity)",
            table=True,
        ),
        "table1_mean_std": Quoted(
            "Table 1 reports the mean and standard deviation of the MSE for each model across different ground "
            "truth functions.",
            "Section 4.1.1",
        ),
        "five_seeds": Quoted(
            "we report both final error and convergence behavior averaged over 5 different seeds", "Section 4.1", (5,)
        ),
        "alpha0_worse": Quoted(
            "Importantly, the variant without regularization (Flex-Act with  $\\alpha = 0$ ) performs significantly "
            "worse when the ground truth is Sigmoid or Tanh.",
            "Section 4.1.1",
            (0,),
        ),
        "table2_resnet18": Quoted(
            "ResNet18 | 95.39\n+ Flex-Act | 95.43", "Table 2, ResNet18 rows", (95.39, 95.43), table=True
        ),
        "table2_resnet34": Quoted(
            "ResNet34 | 95.36\n+ Flex-Act | $\\boldsymbol{95.44}$", "Table 2, ResNet34 rows", (95.36, 95.44), table=True
        ),
        "table2_caption": Quoted(
            "Table 2: CIFAR-10 accuracy. Flex-Act matches or improves performance across standard ResNet variants.",
            "Table 2 caption",
        ),
        "fall_back": Quoted(
            "it can recover the identity function or fall-back to ReLU if no better choice exists", "Section 4.2"
        ),
    }
)
