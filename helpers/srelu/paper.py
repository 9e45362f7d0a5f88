"""What the S-ReLU paper (``shared/papers/s-relu.txt``, "Reshaping activation functions: a framework for
activation function optimization based on mollification theory") says, copied once from its text; none
of it is a result of ours. Formulas are strings in the paper's notation (``Phi``/``phi``: the standard
normal cdf/pdf), parsed by :func:`helpers.srelu.theory_claims.paper_expr`."""

from __future__ import annotations

import math

from helpers.core.attribution import Quoted

#: Runs per printed mean ± std where the paper states none: App. G's "three runs" (Table 4), assumed for Tables 1-2.
PAPER_RUNS = 3


SOURCE = "S-ReLU paper"
NB_DERIVATION = "notebooks/03_srelu_derivation"
NB_LIPSCHITZ = "notebooks/04_lipschitz_and_mollifiers"
NB_DELTA = "notebooks/20_srelu_delta_sensitivity"
NB_BENCH = "notebooks/21_srelu_benchmarks"
#: MyST label of the section computing each page's claims (links ``page.html#label``; DPO's: in dpo_analysis).
ANCHORS: dict[str, str] = {
    NB_DERIVATION: "srelu-derivation-claims",
    NB_LIPSCHITZ: "lipschitz-claims",
    NB_DELTA: "srelu-delta-claims",
    NB_BENCH: "srelu-benchmarks-claims",
}
#: Table 4 / App. H: δ = 0.001 is "(one of) the best" when no δ beats it by more points (paired by seed).
DELTA_BEST_MARGIN = 1.0

# ---- Theory: what the paper states (Secs. 4.2-4.6, Appendices B-F)
#: Fact 1 / Remarks 1-4 (Appendix F): Lipschitz constants, printed to 3 decimals.
LIPSCHITZ = {"gelu": 1.084, "silu": 1.100, "mish": 1.089, "srelu": 1.000}
#: Appendix F: roots of f'' (GELU: ±√2 exactly; S-ReLU: ±δ, given here in units of δ).
CRITICAL_POINTS = {
    "gelu": (-math.sqrt(2), math.sqrt(2)),
    "silu": (-2.3994, 2.3994),
    "mish": (-2.2564, 1.4906),
    "srelu": (-1.0, 1.0),
}
#: Appendix F: decimals printed for the critical points.
CRITICAL_POINT_DECIMALS = {"silu": 4, "mish": 4}
#: Appendix F: the interval the first derivative lies in (SiLU, Mish, S-ReLU).
DERIVATIVE_RANGE = {"silu": (-0.100, 1.100), "mish": (-0.113, 1.089), "srelu": (0.0, 1.0)}

#: Sec. 4.6 / Appendix C: S-ReLU on -δ < x < δ (0 left of it, x right of it).
SRELU_MIDDLE = "x/2 + 3*x**2/(8*delta) + 3*delta/16 - x**4/(16*delta**3)"
#: Appendix F, Remark 4: first derivative on the band.
SRELU_D1_MIDDLE = "1/2 + 3*x/(4*delta) - x**3/(4*delta**3)"
#: Sec. 4.6 and Remark 4: second derivative on the band.
SRELU_D2_MIDDLE = "3*(delta**2 - x**2)/(4*delta**3)"
#: Sec. 4.6 / Appendix C: ||S-ReLU - ReLU||_∞.
UNIFORM_ERROR = "3*delta/16"
#: Appendix F: derivative formulas of GELU, SiLU and Mish.
GELU_D1 = "Phi(x) + x*phi(x)"
GELU_D2 = "phi(x)*(2 - x**2)"
SILU_D1 = "((x + 1)*exp(-x) + 1)/(1 + exp(-x))**2"
SILU_D2 = "exp(x)*(-exp(x)*(x - 2) + x + 2)/(1 + exp(x))**3"
MISH = "x*(exp(2*x) + 2*exp(x))/(exp(2*x) + 2*exp(x) + 2)"
MISH_D1 = "exp(x)*(4*(x + 1) + 4*exp(2*x) + exp(3*x) + exp(x)*(4*x + 6))/(exp(2*x) + 2*exp(x) + 2)**2"
MISH_D2 = (
    "4*exp(x)*(3*exp(2*x)*(x - 2) + 2*exp(3*x)*(x - 1) - 2*(x + 2) - 2*exp(x)*(x + 4))/(exp(2*x) + 2*exp(x) + 2)**3"
)
#: Abstract and Sec. 4.6: S-ReLU is C². The paper's C^∞ (Sec. 4.3, recalled in Sec. 4.6) is about activations
#: mollified with the bump kernel of Sec. 4.2, never S-ReLU (``QUOTES``: srelu_c2_*, mollified_cinf_*).
SRELU_SMOOTHNESS_ABSTRACT = 2
#: Appendix D hard-codes the radius; Appendix H says every experiment used δ = 0.001.
APPENDIX_D_DELTA = 0.01
APPENDIX_H_DELTA = 0.001

# ---- Experiments: test accuracy in %, (mean, std) over PAPER_RUNS runs
ACTIVATIONS = ("GELU", "ELU", "PReLU", "CELU", "SiLU", "Mish", "S-ReLU")


def _cells(columns: tuple, printed: str) -> dict:
    """A table row as the paper prints it (``mean±std`` per column) as ``{column: (mean, std)}``."""
    return {c: tuple(float(v) for v in cell.split("±")) for c, cell in zip(columns, printed.split(), strict=True)}


#: Table 1 (ViT-Tiny, DeiT-Tiny, TNT-Small, 100 epochs): the "Average" rows, unambiguous in the text.
TABLE1_AVERAGE = {
    "CIFAR-10": _cells(ACTIVATIONS, "72.2±0.5 67.8±0.6 76.4±0.3 67.6±0.5 69.9±0.5 70.2±0.6 82.3±0.4"),
    "CIFAR-100": _cells(ACTIVATIONS, "42.2±0.8 43.1±0.1 47.4±0.7 37.5±0.4 39.9±0.7 40.0±0.9 56.6±0.3"),
    "ImageNet-1K": _cells(ACTIVATIONS, "57.8±0.4 43.2±0.7 58.8±0.4 43.3±0.7 52.3±0.7 52.9±0.7 60.8±0.4"),
}
#: Table 1 per-model rows: only the CELU column keeps its model labels in the text extraction.
TABLE1_CELU_PER_MODEL = {
    "CIFAR-10": _cells(("ViT-Tiny", "DeiT-Tiny", "TNT-Small"), "66.5±0.6 67.7±0.8 68.7±0.2"),
    "CIFAR-100": _cells(("ViT-Tiny", "DeiT-Tiny", "TNT-Small"), "28.9±0.2 40.5±0.5 43.0±0.5"),
    "ImageNet-1K": _cells(("ViT-Tiny", "DeiT-Tiny"), "37.6±0.5 48.9±0.8"),
}
#: Table 1 per-model rows, other columns: one value each, its model lost; for reference, not for comparison.
TABLE1_UNLABELLED_ROW_VALUES = {
    "CIFAR-10": _cells(ACTIVATIONS[:3] + ACTIVATIONS[4:], "72.4±0.7 67.6±0.6 75.4±0.1 69.9±0.5 70.2±0.6 81.1±0.3"),
    "CIFAR-100": _cells(ACTIVATIONS[:3] + ACTIVATIONS[4:], "46.6±0.9 56.9±0.0 50.0±0.5 43.5±0.6 43.8±1.0 57.1±0.2"),
}
#: Table 2 (ConvNeXt-tiny, 100 epochs).
TABLE2 = {
    "CIFAR-10": _cells(ACTIVATIONS, "64.9±0.4 59.8±0.5 64.6±1.4 59.8±0.5 60.6±0.2 61.4±0.4 89.9±0.1"),
    "CIFAR-100": _cells(ACTIVATIONS, "36.6±0.3 30.3±0.4 35.2±0.5 30.5±0.2 35.0±0.9 35.3±0.7 66.8±0.1"),
    "ImageNet-1K": _cells(ACTIVATIONS, "72.9±0.3 71.7±0.5 72.9±0.5 71.8±0.9 72.3±0.7 72.8±0.6 73.1±0.2"),
}
#: Table 4 (Appendix G): ViT-Tiny test accuracy for each δ.
TABLE4_DELTAS = (0.001, 0.01, 0.1, 0.2, 0.5, 1.0, 5.0, 10.0)
TABLE4 = {
    "CIFAR-10": _cells(TABLE4_DELTAS, "81.0±0.6 80.1±0.2 80.4±0.3 78.2±0.2 80.4±0.2 73.9±0.3 63.4±0.5 58.5±0.3"),
    "CIFAR-100": _cells(TABLE4_DELTAS, "51.2±0.6 48.7±0.3 48.7±0.5 48.5±0.5 45.5±0.3 41.4±0.6 43.8±1.0 25.7±0.2"),
}

# ---- The paper's own words, where a claim shows them (checked against the source by the tests)
QUOTES: dict[str, Quoted] = {
    "srelu_c2_abstract": Quoted(
        "we introduce Smoothed ReLU (S-ReLU), a novel second-order continuously differentiable (C²) "
        "activation derived from ReLU",
        "abstract",
    ),
    "srelu_c2_sec_4_6": Quoted(
        "This indicates that S-ReLU is an activation function with continuous second derivatives", "Sec. 4.6"
    ),
    "mollified_cinf_sec_4_3": Quoted(
        "This establishes that the mollification process transforms the original activation function f(x) "
        "into a smooth approximation",
        "Sec. 4.3, for the kernel φ_δ of Definition 2 (the bump of Definition 1)",
    ),
    "mollified_cinf_sec_4_6": Quoted(
        "Sections 4.3 and 4.4 further establish that activation functions constructed via smoothing theory "
        "possess desirable smoothness and approximation properties; specifically, they are infinitely "
        "differentiable",
        "Sec. 4.6",
        (4.3, 4.4),
    ),
    "epanechnikov_choice": Quoted(
        "Regarding the choice of kernel, we strike a balance between theoretical rigor and engineering "
        "practicality by adopting the Epanechnikov kernel",
        "Sec. 4.6",
    ),
    "lipschitz_fact_1": Quoted(
        "Lipschitz constant of GELU is 1.084; Lipschitz constant of SiLU is 1.100; Lipschitz constant of "
        "Mish is 1.089. Lipschitz constant of S-ReLU is 1.000.",
        "Fact 1",
        tuple(LIPSCHITZ.values()),
    ),
    "table4_runs": Quoted("We perform three runs and report the mean and standard deviation in Table 4.", "App. G"),
    "llm_runs": Quoted(
        "each experiment was repeated three times, with mean and standard deviation reported", "App. H, LLM fine-tuning"
    ),
    "appendix_h_models": Quoted(
        "For CIFAR-10 and CIFAR-100, we trained ViT-Tiny, DeiT-Tiny, and TNT-Small for 100 epochs.",
        "App. H, image classification",
        (100,),
    ),
    "appendix_h_schedule": Quoted(
        "cosine annealing learning rate scheduling (initial learning rate 2.5 × 10⁻⁴, minimum 1 × 10⁻⁵, "
        "with 20 warmup epochs starting from 1 × 10⁻⁶)",
        "App. H, image classification",
        (20,),
    ),
    "appendix_h_delta": Quoted("we use δ=0.001 for all experiments", "App. H", (APPENDIX_H_DELTA,)),
    "appendix_d_delta": Quoted("a = 0.01", "App. D, Algorithm 1", (APPENDIX_D_DELTA,)),
    "table2_epochs": Quoted(
        "Test accuracy of experiments conducted on ConvNeXt-tiny for 100 epochs.", "Table 2 caption", (100,)
    ),
}

# ---- The source read against itself (helpers.srelu.audit): the excerpts its findings rest on
#: Sec. 4.1, after Hayou et al. (2019): 1 - c^l ~ 9π²/(2l²) for ReLU (the constant 9π²/2).
HAYOU_RELU_CONSTANT = 9 * math.pi**2 / 2
#: The arXiv references of the source, as printed (the newest dates the text from below).
ARXIV_REFERENCES: tuple[Quoted, ...] = tuple(
    Quoted(text, f"References, {who}")
    for text, who in (
        ("Gpt-4 technical report. arXiv preprint arXiv:2303.08774, 2023", "Achiam et al."),
        ("arXiv preprint arXiv:2204.05862*, 2022", "Bai et al."),
        ("Continuously differentiable exponential linear units. *arXiv preprint arXiv:1704.07483*, 2017", "Barron"),
        ("*arXiv preprint arXiv:1511.07289*, 4(5):11, 2015", "Clevert et al."),
        ("Gaussian error linear units (gelus). *arXiv preprint* arXiv:1606.08415, 2016", "Hendrycks & Gimpel"),
        ("Mixtral of experts. *arXiv preprint arXiv:2401.04088*, 2024", "Jiang et al."),
        ("*arXiv preprint arXiv:2402.09092*, 2024", "Kunc & Kléma"),
        ("*arXiv preprint arXiv:2405.04434*, 2024", "Liu et al. (DeepSeek-V2)"),
        ("*arXiv preprint arXiv:2301.12309*, 2023", "Gamba et al."),
        ("*arXiv* preprint arXiv:1908.08681, 2019", "Misra"),
        ("Searching for activation functions. arXiv preprint arXiv:1710.05941, 2017", "Ramachandran et al."),
        ("arXiv preprint arXiv:2302.13971, 2023", "Touvron et al. (LLaMA)"),
    )
)
_SMOOTH_RATE = (  # Sec. 4.1 (after Hayou et al., 2019), quoted twice below
    "For smooth activation functions, the correlation between inter-layer neuron outputs converges to 1 at "
    "a rate of O(1/l)"
)
QUOTES |= {
    "under_review": Quoted("Paper under double-blind review", "title page"),
    "iclr_ethics": Quoted("All authors have read and agree to adhere to the ICLR Code of Ethics.", "Sec. 7"),
    "framework_abstract": Quoted(
        "we propose a general activation smoothing framework grounded in mollification theory", "abstract"
    ),
    "methodology_absent": Quoted(
        "Yet, a general methodology for systematically smoothing non-smooth activations remains absent.", "Sec. 6"
    ),
    "smu_reference": Quoted(
        "Smooth maximum unit: Smooth activation function for deep networks using smoothing maximum technique",
        "References, Biswas et al. (2022), cited in Sec. 3",
    ),
    "baselines_sec5": Quoted(
        "We compare against representative ReLU variants, including GELU, ELU, PReLU, CELU, SiLU, and Mish.",
        "Sec. 5, experimental setup",
    ),
    "celu_sec2": Quoted(
        "the Continuously Differentiable Exponential Linear Unit (CELU) (Barron, 2017) simplifies the ELU "
        "parameterization for easier adjustment",
        "Sec. 2",
    ),
    "lipschitz_advantage": Quoted(
        "S-ReLU's Lipschitz constant of 1 ensures that its output never changes more rapidly than its input. "
        "This property acts as a vital safeguard for stabilizing gradient flow in the network, which helps "
        "prevent the problem of exploding gradients and makes the model more robust to small input "
        "perturbations—a clear advantage over other activation functions.",
        "Sec. 4.6, after Fact 1",
        (1,),
    ),
    "dead_relu_app_e": Quoted(
        "Within the interval (−δ,0), the S-ReLU function value varies, while its gradient persists and is "
        "non-zero. This directly addresses the drawback of the standard ReLU, where the gradient is always zero "
        'on the negative half-axis, effectively avoiding the "dead ReLU problem"',
        "App. E",
        (0,),
    ),
    "relu_drawbacks_sec2": Quoted(
        'neurons can become permanently inactive ("dying ReLU"), and the absence of negative outputs '
        "introduces distributional bias in subsequent layers",
        "Sec. 2",
    ),
    "relu_drawbacks_sec3": Quoted(
        "they suffer from intrinsic drawbacks that hinder further progress in deep neural networks. These "
        "include gradient instability arising from non-differentiability (Biswas et al., 2022; Lee, 2023), "
        "inefficient information propagation that accelerates signal degradation in deep layers (Hayou et al., "
        "2019), and limited theoretical guarantees for regularization.",
        "Sec. 3",
    ),
    "nondifferentiability_app_e": Quoted(
        "completely eliminating the non-differentiability of the ReLU at the origin", "App. E"
    ),
    "mitigating_abstract": Quoted(
        "derived from ReLU that inherits its favorable properties while mitigating inherent drawbacks", "abstract"
    ),
    "epanechnikov_optimal": Quoted(
        "adopting the Epanechnikov kernel, which is theoretically optimal for minimizing the Mean Integrated "
        "Squared Error. Moreover, among the class of non-negative polynomials satisfying the fundamental "
        "smoothness conditions, it exhibits the lowest degree and the simplest closed form.",
        "Sec. 4.6",
    ),
    "statistical_optimality": Quoted(
        "Leveraging the Epanechnikov kernel, the framework achieves statistical optimality and computational "
        "tractability",
        "abstract",
    ),
    "hayou_relu_rate": Quoted(
        r"for non-smooth functions like ReLU, this correlation converges at a rate of $O(1/l^2)$ , with the "
        r"specific relationship being $1-c^l \sim 9\pi^2/2l^2$",
        "Sec. 4.1, after Hayou et al. (2019)",
        (9, 2),
    ),
    "hayou_smooth_rate": Quoted(_SMOOTH_RATE, "Sec. 4.1, after Hayou et al. (2019)", (1,)),
    "smooth_better_sec_4_6": Quoted(
        "In Section 4.1, we provide evidence that smoother activation functions are advantageous for enhancing "
        "both the efficiency of the training process and the final performance of the model.",
        "Sec. 4.6",
    ),
    "table4_setup": Quoted("conduct experiments on the CIFAR10 and CIFAR100 datasets using ViT-tiny", "App. G"),
    # ---- the paper's formulas, statements and table rows that the theory and Table 1/3 claims show
    "proposition1": Quoted(
        r"**Proposition 1.** The smoothing kernel  $\phi(x)$  is normalized, i.e.,  "
        r"$\int_{\mathbb{R}} \phi(u) du = 1$",
        "Sec. 4.2, Proposition 1 (proof in App. B)",
        (1,),
    ),
    "proposition2": Quoted(
        r"**Proposition 2.**  $\phi(x) \in C^{\infty}(\mathbb{R})$ , i.e.,  $\phi(x)$  is infinitely "
        r"differentiable on  $\mathbb{R}$ , and  $\phi^{(k)}(x) = 0, |x| \ge 1$ . Furthermore, for each natural "
        r"number k,  $\phi^{(k)}(x)$  is bounded on  $\mathbb{R}$ .",
        "Sec. 4.2, Proposition 2",
    ),
    "epanechnikov": Quoted(
        r"We select the Epanechnikov kernel function, denoted as  $\phi_{\delta}(x)$ , parameterized by the "
        r"smoothing radius  $\delta$ . This kernel acts as a weighting function with compact support on the "
        r"interval  $[-\delta, \delta]$ . Its normalized form is:",
        "Sec. 4.6",
    ),
    "srelu_middle": Quoted(
        r"\frac{x}{2} + \frac{3x^2}{8\delta} + \frac{3\delta}{16} - \frac{x^4}{16\delta^3} & \text{,if } "
        r"-\delta < x < \delta",
        "Sec. 4.6, the S-ReLU closed form (again in App. C)",
    ),
    "srelu_d1_middle": Quoted(
        r"\frac{1}{2} + \frac{3x}{4\delta} - \frac{x^3}{4\delta^3} & , \text{if } -\delta < x < \delta",
        "App. F, Remark 4, the first derivative",
    ),
    "srelu_d2_middle": Quoted(
        r"\frac{3}{4\delta} - \frac{3x^2}{4\delta^3} & , \text{if } -\delta \le x \le \delta",
        "App. F, Remark 4, the second derivative",
    ),
    "uniform_error": Quoted(
        r"\sup_{x \in \mathbb{R}} |\mathbf{S}-\mathbf{ReLU}(x) - \mathbf{ReLU}(x)| = \frac{3\delta}{16}",
        "Sec. 4.6 (again in App. C)",
    ),
    "appendix_d_a": Quoted("a = 0.01", "App. D, the pseudocode", (0.01,)),
    "appendix_d_where": Quoted(
        "output = torch.where(condition1, p1,torch.where(condition2, p2,p3))", "App. D, the pseudocode"
    ),
    "gelu_d1": Quoted(
        r"\frac{d\text{GELU}(x)}{dx} = \Phi(x) + x\phi(x) = \Phi(x) + x\frac{1}{\sqrt{2\pi}}e^{-\frac{x^2}{2}}",
        "App. F, Remark 1",
    ),
    "gelu_d2": Quoted(
        r"\frac{d^2 \text{GELU}(x)}{dx^2} = \phi(x)(2 - x^2) = \frac{1}{\sqrt{2\pi}} e^{-\frac{x^2}{2}} (2 - x^2)",
        "App. F, Remark 1",
    ),
    "silu_d1": Quoted(r"\frac{d\text{SiLU}(x)}{dx} = \frac{(x+1)e^{-x} + 1}{(1+e^{-x})^2}", "App. F, Remark 2"),
    "silu_d2": Quoted(r"\frac{d^2\text{SiLU}(x)}{dx^2} = \frac{e^x(-e^x(x-2) + x + 2)}{(1+e^x)^3}", "App. F, Remark 2"),
    "mish_d1": Quoted(
        r"\frac{d\mathrm{Mish}(x)}{dx} = \frac{e^x[4(x+1) + 4e^{2x} + e^{3x} + e^x(4x+6)]}{(e^{2x} + 2e^x + 2)^2}",
        "App. F, Remark 3",
    ),
    "mish_d2": Quoted(
        r"\frac{d^2\mathrm{Mish}(x)}{dx^2} = \frac{4e^x(3e^{2x}(x-2) + 2e^{3x}(x-1) - 2(x+2) - 2e^x(x+4))}"
        r"{(e^{2x} + 2e^x + 2)^3}",
        "App. F, Remark 3",
    ),
    "lipschitz_gelu": Quoted("Lipschitz constant of GELU is 1.084", "Fact 1 (Sec. 4.6); App. F, Remark 1", (1.084,)),
    "lipschitz_silu": Quoted("Lipschitz constant of SiLU is 1.100", "Fact 1 (Sec. 4.6); App. F, Remark 2", (1.1,)),
    "lipschitz_mish": Quoted("Lipschitz constant of Mish is 1.089", "Fact 1 (Sec. 4.6); App. F, Remark 3", (1.089,)),
    "lipschitz_srelu": Quoted("Lipschitz constant of S-ReLU is 1.000", "Fact 1 (Sec. 4.6); App. F, Remark 4", (1.0,)),
    "critical_points_gelu": Quoted(r"This yields the critical points  $x = \pm \sqrt{2}$", "App. F, Remark 1"),
    "critical_points_silu": Quoted(
        r"we solve for the critical points, which are found to be  $x \approx \pm 2.3994$",
        "App. F, Remark 2",
        (2.3994,),
    ),
    "critical_points_mish": Quoted(
        r"$x_1 \approx -2.2564$  and  $x_2 \approx 1.4906$", "App. F, Remark 3", (-2.2564, 1.4906)
    ),
    "derivative_range_silu": Quoted(
        "its value is bounded within the interval [-0.100, 1.100]", "App. F, Remark 2", (-0.1, 1.1)
    ),
    "derivative_range_mish": Quoted(
        "its values are bounded within the interval [-0.113, 1.089]", "App. F, Remark 3", (-0.113, 1.089)
    ),
    "lipschitz_bound_delta": Quoted(
        r"Additionally, increasing the value of  $\delta$  lowers the Lipschitz upper bound of the enhanced "
        "activation function, thereby promoting a more stable training gradient.",
        r"Sec. 4.5, after the bound $L_{\delta} \leq M \cdot C_{\phi} / \delta$",
    ),
    "correlation_rate": Quoted(_SMOOTH_RATE, "Sec. 4.1, citing Hayou et al. (2019)", (1,)),
    "table1_caption": Quoted(
        "Table 1: Test accuracy on CIFAR-10, CIFAR-100, and ImageNet-1K over 100 epochs.", "Table 1", (1, 100)
    ),
    "table2_caption": Quoted(
        "Table 2: Test accuracy of experiments conducted on ConvNeXt-tiny for 100 epochs.", "Table 2", (2, 100)
    ),
    **{  # the extraction keeps each Average row's first four columns; the values taken: CELU's
        f"table1_average_{key}": Quoted(text, f"Table 1, row {row} Average (columns GELU, ELU, PReLU, CELU)", (celu,))
        for key, row, text, celu in (
            ("cifar10", "CIFAR-10", r"CIFAR-10 Average 72.2±0.5 $67.8 \pm 0.6$ $76.4 \pm 0.3$ $67.6 \pm 0.5$", 67.6),
            ("cifar100", "CIFAR-100", r"CIFAR-100 Average 42.2±0.8 $43.1 \pm 0.1$ $47.4 \pm 0.7$ 37.5±0.4", 37.5),
            ("imagenet", "ImageNet-1K", "ImageNet-1K Average 57.8±0.4 43.2±0.7 58.8±0.4 43.3±0.7", 43.3),
        )
    },
    "table3_text": Quoted(
        "Compared with GELU, S-ReLU consistently achieves higher chosen rewards, lower rejected rewards, larger "
        "reward margins, and improved preference accuracy.",
        "Sec. 5.2, on Table 3",
    ),
}
#: Table 3's six rows in its order (β, then S-ReLU and GELU), as the extraction renders them, and the values taken.
_TABLE3 = {
    "0.1_srelu": (
        r"$\beta = 0.1$   S-RELU   0.1501±		0.0984±0.0008	<b>0.5938</b> ± <b>0.0000</b>",
        (0.1501, 0.5938),
    ),
    "0.1_gelu": ("GELU   -0.2037=		0.0659±0.0019	0.5313±0.0012", (-0.2037, 0.5313)),
    "2_srelu": (r"$\beta = 2$   S-RELU   0.3861±		0.0532±0.0030	<b>0.5156±0.0005</b>", (0.3861, 0.5156)),
    "2_gelu": ("GELU   -1.6600=		0.0460±0.0055	0.5080±0.0022", (-1.66, 0.508)),
    "5_srelu": (
        r"$\beta = 5$   S-RELU   1.1062±		1.8664±0.0041	<b>0.5103</b> ± <b>0.0017</b>",
        (1.1062, 0.5103),
    ),
    "5_gelu": ("GELU   -3.6484=		1.1815±0.0034	0.5012±0.0001", (-3.6484, 0.5012)),
}
_COLUMNS = " (columns chosen reward, an unlabelled column, preference accuracy)"  # said on the first row only
QUOTES |= {
    f"table3_beta{key}": Quoted(
        text,
        f"Table 3, β = {key.split('_')[0]}, {'S-ReLU' if 'srelu' in key else 'GELU'} row" + _COLUMNS * (i == 0),
        values,
    )
    for i, (key, (text, values)) in enumerate(_TABLE3.items())
}
TABLE3_ROWS: tuple[Quoted, ...] = tuple(QUOTES[f"table3_beta{key}"] for key in _TABLE3)
