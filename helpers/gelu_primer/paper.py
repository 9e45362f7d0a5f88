"""The GELU primer blog post (``shared/papers/gelu-blog.txt``): its printed numbers, as data.

The post prints three tables of values at the anchor points z ∈ {-3, -1, 0, 0.5, 1, 3}, the
output of a short NumPy/SciPy script, figure labels and a handful of prose claims. The tables
below are typed once from the post, as the strings it prints (so the number of printed decimals
is kept). The comparison with our values is in :mod:`helpers.gelu_primer.claims`."""

from __future__ import annotations

from dataclasses import dataclass

from helpers.core.attribution import Quoted

NOTEBOOK = "notebooks/01_gelu_primer"
#: MyST labels on that page (``(label)=`` before a heading) of the sections that compute the claims:
#: the printed tables' columns, and the prose claims.
ANCHOR_TABLES = "gelu-primer-table-claims"
ANCHOR_PROSE = "gelu-primer-prose-claims"
SOURCE = "GELU blog"
PROFILE = "any"  # no training: every value here is exact and independent of the profile
SCALE = "exact (sympy/mpmath, 40 digits)"

#: The post's anchor points, as exact decimal strings.
ANCHORS: tuple[str, ...] = ("-3", "-1", "0", "0.5", "1", "3")

#: The quantities the post tabulates, with their column labels (computed in
#: :data:`helpers.gelu_primer.claims.QUANTITIES`).
QUANTITY_LABELS: dict[str, str] = {
    "Phi": "Φ(z)",
    "gelu": "GELU exact",
    "gelu_tanh": "GELU approx (tanh)",
    "gelu_prime": "GELU'(z)",
    "relu": "ReLU",
    "relu_prime": "ReLU'",
    "elu": "ELU (α=1)",
}


@dataclass(frozen=True)
class PrintedTable:
    """One table of the post, typed as it shows it (``text``: a header row with ``z`` first, then one
    row per z, cells separated by ``|``), and the quantity of each column after ``z``."""

    key: str
    title: str
    columns: tuple[str, ...]
    text: str

    def __post_init__(self) -> None:
        unknown = [c for c in self.columns if c not in QUANTITY_LABELS]
        if unknown:
            raise ValueError(f"unknown quantities {unknown}; known: {sorted(QUANTITY_LABELS)}")
        for row in self.quote.cells():
            if len(row) != len(self.columns) + 1:
                raise ValueError(f"table {self.key!r}: row {row} has not z and {len(self.columns)} values")

    @property
    def quote(self) -> Quoted:
        """The table, quoted whole (each claim shows one column: :func:`table_quote`)."""
        return Quoted(self.text, self.title, table=True)

    @property
    def rows(self) -> dict[str, tuple[str, ...]]:
        """The printed strings per z (``-3.0`` in the code's output is z = ``-3``)."""
        return {f"{float(row[0]):g}": tuple(row[1:]) for row in self.quote.cells()[1:]}


#: What the post shows as its code's output (:data:`POST_CODE`).
POST_CODE_PRINTED = """\
    z | GELU_exact | GELU_approx | GELU_grad
 -3.0 |    -0.0040 |     -0.0040 |    0.0040
 -1.0 |    -0.1587 |     -0.1588 |    0.0833
  0.0 |     0.0000 |      0.0000 |    0.5000
  0.5 |     0.3457 |      0.3457 |    0.8832
  1.0 |     0.8413 |      0.8412 |    1.0833
  3.0 |     2.9960 |      2.9960 |    1.0040
"""

TABLES: tuple[PrintedTable, ...] = (
    PrintedTable(
        "forms",
        "table 'Exact and Approximate Forms'",
        ("Phi", "gelu", "gelu_tanh"),
        """\
z | Φ(z) | GELU exact | GELU approx
-3 | 0.0013 | -0.0040 | -0.0040
-1 | 0.1587 | -0.1587 | -0.1588
0 | 0.5000 | 0.0000 | 0.0000
0.5 | 0.6915 | 0.3457 | 0.3457
1 | 0.8413 | 0.8413 | 0.8412
3 | 0.9987 | 2.9960 | 2.9960""",
    ),
    PrintedTable(
        "gradient",
        "table 'Why the Gradient Matters'",
        ("gelu", "gelu_tanh", "gelu_prime", "relu", "relu_prime"),
        """\
z | GELU exact | GELU approx | GELU'(z) | ReLU | ReLU'
-3 | -0.0040 | -0.0040 | 0.0040 | 0 | 0
-1 | -0.1587 | -0.1588 | 0.0833 | 0 | 0
0 | 0.0000 | 0.0000 | 0.5000 | 0 | 0
0.5 | 0.3457 | 0.3457 | 0.8832 | 0.5 | 1
1 | 0.8413 | 0.8412 | 1.0833 | 1 | 1
3 | 2.9960 | 2.9960 | 1.0040 | 3 | 1""",
    ),
    PrintedTable(
        "elu",
        "table 'Comparison: ReLU vs ELU vs GELU'",
        ("relu", "elu", "gelu"),
        """\
z | ReLU | ELU (α=1) | GELU
-3 | 0 | -0.9502 | -0.0040
-1 | 0 | -0.6321 | -0.1587
0 | 0 | 0.0000 | 0.0000
0.5 | 0.5 | 0.5000 | 0.3457
1 | 1 | 1.0000 | 0.8413
3 | 3 | 3.0000 | 2.9960""",
    ),
    PrintedTable("code", "printed output of the post's code", ("gelu", "gelu_tanh", "gelu_prime"), POST_CODE_PRINTED),
)

#: The post's code, verbatim, so that we can run it and read what it really prints.
POST_CODE = """\
import numpy as np
from scipy.stats import norm

def gelu_exact(z): return z * norm.cdf(z)
def gelu_approx(z):
    return 0.5 * z * (1 + np.tanh(np.sqrt(2/np.pi) * (z + 0.044715 * z**3)))
def gelu_grad(z): return norm.cdf(z) + z * norm.pdf(z)

z_vals = np.array([-3., -1., 0., 0.5, 1., 3.])
print(f"{'z':>5} | {'GELU_exact':>10} | {'GELU_approx':>11} | {'GELU_grad':>9}")
for z in z_vals:
    print(f"{z:5.1f} | {gelu_exact(z):10.4f} | {gelu_approx(z):11.4f} | {gelu_grad(z):9.4f}")
"""


def table(key: str) -> PrintedTable:
    """The printed table with this key (``forms``, ``gradient``, ``elu``, ``code``)."""
    for t in TABLES:
        if t.key == key:
            return t
    raise ValueError(f"no table {key!r}; choose one of {[t.key for t in TABLES]}")


#: The post's own words, where a claim shows them (checked against the source by the tests).
QUOTES: dict[str, Quoted] = {
    "tanh_accuracy": Quoted(
        "The approximate form matches to four decimal places across the entire range",
        "section 'Exact and Approximate Forms'",
    ),
    "tanh_error_near_zero": Quoted(
        "The approximate form introduces a small error near z=0 on the order of 1e-4",
        "section 'Honest Limitations'",
        (0, 1e-4),
    ),
    "torch_computes": Quoted(
        "This is what PyTorch and TensorFlow actually compute.", "section 'Exact and Approximate Forms'"
    ),
    "positive_above": Quoted(
        "This is always positive for z > −0.75 or so, and non-zero for all z — there is no dead zone.",
        "section 'Why the Gradient Matters'",
        (-0.75,),
    ),
    "never_below": Quoted("outputs are never less than about −0.17", "section 'Honest Limitations'", (-0.17,)),
    "flops": Quoted("adding roughly 3–4× the FLOPs of a max(0,z) call", "section 'Honest Limitations'", (3, 4)),
    "bert_blocks": Quoted("24 times per forward pass in BERT-base", "section 'Transformer FFN Block'", (24,)),
}


QUOTES.update({f"table_{spec.key}": spec.quote for spec in TABLES})


def table_quote(key: str, quantity: str) -> Quoted:
    """The post's table ``key``, quoted, showing the column of ``quantity`` (a :data:`QUANTITY_LABELS` key)."""
    spec = table(key)
    if quantity not in spec.columns:
        raise ValueError(f"table {key!r} has no column {quantity!r}; its columns: {spec.columns}")
    return spec.quote.of_column(spec.quote.cells()[0][1 + spec.columns.index(quantity)])


#: The post's prose and figure labels that the claims show.
QUOTES.update(
    {
        "phi_minus_1": Quoted(
            "At z = -1: Φ(-1) ≈ 0.158, so GELU(-1) = -1 · 0.158 = -0.158.", "section 'The Soft Gate Idea'", (0.158,)
        ),
        "phi_3": Quoted("At z = 3: Φ(3) ≈ 0.999, so GELU(3) ≈ 3.", "section 'The Soft Gate Idea'", (0.999, 3)),
        "gate_figure": Quoted(
            "Gate: z · Φ(z) −0.158 Gate 15.8% open Gradient ≈ 0.13",
            "first figure ('Hard Gate (ReLU) vs Soft Gate (GELU) at z = −1'), GELU panel",
            (-0.158, 15.8, 0.13),
        ),
        "slope_minus_half": Quoted(
            "GELU'(−0.5) = Φ(−0.5) + (−0.5)·φ(−0.5) = 0.3085 + (−0.5)(0.3521) ≈ 0.133.",
            "section 'Why the Gradient Matters'",
            (0.3085, 0.3521, 0.133),
        ),
        "anchor_figure": Quoted(
            "−0.004 −0.159 0.000 0.346 0.841 2.996 GELU ReLU",
            "figure 'GELU vs ReLU — Anchor Points Labeled', the GELU labels",
            (-0.004, -0.159, 0.0, 0.346, 0.841, 2.996),
        ),
        "gradient_figure": Quoted(
            "ReLU dead zone (gradient=0) 0.083 0.500 GELU' ReLU'",
            "figure 'Gradient: GELU'(z) vs ReLU'(z)', the GELU' labels",
            (0.083, 0.5),
        ),
        "limits": Quoted(
            "ELU saturates negative inputs to −α as z → −∞. GELU drives negative inputs toward 0 as z → −∞.",
            "section 'Comparison: ReLU vs ELU vs GELU' (its table: ELU (α=1))",
            (0,),
        ),
    }
)


#: The post's own words that the audit of the post against itself reads (``helpers.gelu_primer.audit``);
#: merged into :data:`QUOTES`, so the tests check them against the source like every other excerpt.
AUDIT_QUOTES: dict[str, Quoted] = {
    "elu_saturates": Quoted(
        "ELU saturates negative inputs to −α as z → −∞.", "section 'Comparison: ReLU vs ELU vs GELU'"
    ),
    "elu_unbounded": Quoted(
        "The choice between them depends on whether you want unbounded negative output (ELU, "
        "useful for centering) or near-zero negative output (GELU, matches Transformer design "
        "goals).",
        "section 'Comparison: ReLU vs ELU vs GELU'",
    ),
    "team_positive": Quoted(
        "A team argues that since GELU'(z) > 0 for all z (no dead neurons)",
        "section 'Test Your Understanding', question 5",
        (0,),
    ),
    "slightly_damped": Quoted(
        "A small negative value like z=-0.1 passes through slightly damped rather than erased entirely.",
        "opening paragraph",
        (-0.1,),
    ),
    "half_open": Quoted(
        "At z = 0: Φ(0) = 0.5, so GELU(0) = 0 · 0.5 = 0. The gate is half-open.", "section 'The Soft Gate Idea'", (0.5,)
    ),
    "production": Quoted(
        "The exact form matters for research comparisons; the approximate form matters for production.",
        "section 'Exact and Approximate Forms'",
    ),
    "keeps_gradients": Quoted(
        "GELU avoids this by keeping gradients non-zero even for negative pre-activations.",
        "section 'Transformer FFN Block'",
    ),
    "design_choice": Quoted(
        "The design choice of GELU over ReLU comes down to the dead-neuron problem at scale.",
        "section 'Transformer FFN Block'",
    ),
    "gradient_column": Quoted(
        "Notice the gradient column: at z=−3, GELU'=0.004 — tiny but non-zero. ReLU's gradient there is exactly 0.",
        "section 'Code' (closing remark)",
        (-3, 0.004, 0),
    ),
    "elu_differently": Quoted(
        "ELU (06-elu.md) solves the dead-neuron problem differently", "closing paragraph before 'Honest Limitations'"
    ),
    "not_centred": Quoted(
        "This means GELU features are not zero-centered, which can cause the same upstream weight-update bias as ReLU.",
        "section 'Honest Limitations'",
    ),
}
QUOTES.update(AUDIT_QUOTES)
