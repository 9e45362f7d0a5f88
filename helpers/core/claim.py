"""The :class:`Claim` type (one row of the report), the verdict vocabulary, the claim keys,
:func:`proportion_fields` (the fields of a "k of n" count row) and :func:`audit_rows` (findings that
no run decides)."""

from __future__ import annotations

import numbers
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, Literal, get_args

from helpers.core import run_reads
from helpers.core.attribution import PAPER_KINDS, SourceValue, paper_detail, paper_display, paper_kind
from helpers.core.comparison import Comparison
from helpers.core.statistics import proportion

Verdict = Literal[
    "confirmed",
    "confirmed with a caveat",
    "confirmed but negligible",
    "contradicted",
    "inconclusive",
    "not reproduced under our reading",
    "not run here",
]


#: The one verdict vocabulary of the book, in report order. Every page and the report use it.
VERDICTS: tuple[str, ...] = get_args(Verdict)


#: How a verdict was reached: an exact computation, the source's own printed numbers, or our runs.
BASES: tuple[str, ...] = ("exact", "source", "runs")


#: The profiles of a claim that no run decides (``Claim.basis`` defaults to ``exact`` for them).
EXACT_PROFILES: tuple[str, ...] = ("theory", "any")


#: The kinds of run-based claim :func:`run_verdict` decides.
RunClaim = Literal["direction", "size", "equivalence", "non-inferiority"]


#: What a claim's ``anchor`` may be: a MyST target name that Sphinx keeps unchanged as the HTML id
#: (lower case, starting with a letter: docutils drops leading digits and maps other characters).
ANCHOR_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


#: What a claim's ``key`` may be: a lower-case slug (``srelu-table4-best-delta``) that stays when the sentence changes.
KEY_PATTERN = ANCHOR_PATTERN


def key_part(value: object) -> str:
    """``value`` as one part of a claim key: lower case, each run of other characters than ASCII letters
    and digits one hyphen (``"ResNet-18/CIFAR10"`` -> ``resnet-18-cifar10``, ``0.001`` -> ``0-001``)."""
    if not (part := re.sub(r"[^a-z0-9]+", "-", str(value).lower()).strip("-")):
        raise ValueError(f"a key part needs a letter or digit, got {value!r}")
    return part


def claim_key(prefix: str, *parts: object) -> str:
    """The key of a claim built in a loop: a typed ``prefix``, then the loop's identifiers (pair, model, δ)."""
    if not KEY_PATTERN.fullmatch(key := "-".join([prefix, *(key_part(p) for p in parts)])):
        raise ValueError(f"claim key {key!r} (from {prefix!r}, {parts!r}) is not a lower-case slug")
    return key


@dataclass(frozen=True)
class RunDesign:
    """The numbers behind one run-based test of a claim (one per part of a row), so that
    :mod:`tools.seed_plan` can ask what more seeds would decide: the comparison (``None``: too few
    runs for an interval), :func:`run_verdict`'s rule, and the part's verdict and label."""

    comparison: Comparison | None
    claim: RunClaim = "direction"
    claimed_effect: float | None = None
    margin: float | None = None
    direction: int | None = None
    verdict: Verdict = "inconclusive"
    label: str = ""
    negligible: float | None = None  # the smallest effect of interest of a direction claim, if it has one


@dataclass(frozen=True)
class Claim:
    """One quantitative statement of a source document and what we found.

    ``paper_value`` and ``our_value`` are display strings. A ``paper_value`` given as a
    :class:`~helpers.core.attribution.Quoted` or :class:`~helpers.core.attribution.Derived` is stored
    as its string, its kind in ``paper_kind`` (``printed``, ``quoted`` or ``derived``: ours, not the
    source's) and its location or derivation in ``paper_detail``. ``notebook`` is the page's docname
    (``notebooks/02_lambda_gelu_theory``); ``anchor`` its MyST target ``(anchor)=`` before the section
    that computes the claim (the report links to ``page.html#anchor``). ``basis``: what decided the
    verdict (exact, source, or runs: the default unless the profile is ``theory`` or ``any``). A
    run-based claim carries the display strings ``effect``, ``ci``, ``n``, ``test`` and ``mde``
    (:func:`comparison_fields`) and their numbers in ``design`` (set by :func:`judge`, not displayed).
    ``key`` (required; :data:`KEY_PATTERN`) is typed where the claim is built, never derived from its
    sentence (:func:`claim_key` in a loop), unique in the report (``tests/fixtures/claim_keys.json``).
    """

    claim: str
    source: str
    paper_value: SourceValue
    our_value: str
    profile: str
    scale: str
    verdict: Verdict
    notebook: str
    #: A stable name, unique in the report (:data:`KEY_PATTERN`): pages read a claim by it.
    key: str = field(kw_only=True)
    note: str = ""
    effect: str = ""
    ci: str = ""
    n: str = ""
    test: str = ""
    mde: str = ""
    basis: str = ""
    anchor: str = ""
    paper_kind: str = ""
    paper_detail: str = ""
    #: The book's reading that decides the verdict where the source allows another (a threshold, an
    #: evaluation rule, a scope it does not state): the verdict is then labelled "under our reading".
    reading: str = field(default="", kw_only=True)
    #: The run-based tests behind the row (:class:`RunDesign`, one per part); not displayed.
    design: tuple[RunDesign, ...] = field(default=(), compare=False, repr=False)
    #: ``module.function`` that built the row (:func:`_builder`); not displayed.
    decided_by: str = field(default="", kw_only=True, compare=False)

    def __post_init__(self) -> None:
        if not self.decided_by:
            object.__setattr__(self, "decided_by", _builder())
        value = self.paper_value
        if not isinstance(value, str):
            object.__setattr__(self, "paper_kind", paper_kind(value))
            object.__setattr__(self, "paper_detail", paper_detail(value))
            object.__setattr__(self, "paper_value", paper_display(value))
        elif not self.paper_kind:
            object.__setattr__(self, "paper_kind", paper_kind(value))
        if self.paper_kind not in PAPER_KINDS:
            raise ValueError(f"paper_kind must be one of {PAPER_KINDS}, got {self.paper_kind!r}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if not isinstance(self.reading, str):
            raise ValueError(f"reading must be a string (the book's reading, or empty), got {self.reading!r}")
        if not isinstance(self.key, str) or not KEY_PATTERN.fullmatch(self.key):
            raise ValueError(
                f"key must be a lower-case slug such as 'paper-table4-best-value' (letters, digits, "
                f"single hyphens, starting with a letter), got {self.key!r} for claim {self.claim!r}"
            )
        if self.anchor and not ANCHOR_PATTERN.fullmatch(self.anchor):
            raise ValueError(
                f"anchor must be a lower-case MyST label such as 'paper-sweep-claims' (letters, "
                f"digits, single hyphens, starting with a letter), got {self.anchor!r}"
            )
        if not self.basis:
            object.__setattr__(self, "basis", "exact" if self.profile in EXACT_PROFILES else "runs")
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {self.basis!r}")
        run_reads.note_claim(self)

    @property
    def verdict_label(self) -> str:
        """The verdict as shown: a run-based contradiction reads "contradicted at our scale", one that
        rests on the book's :attr:`reading` "contradicted under our reading" (or both)."""
        if self.verdict != "contradicted":
            return self.verdict
        when = (("at our scale", self.basis == "runs"), ("under our reading", bool(self.reading)))
        qualifiers = [q for q, on in when if on]
        return " ".join(["contradicted", ", ".join(qualifiers)]).strip()

    def as_row(self) -> dict[str, str]:
        """The displayed fields (every field but ``design`` and ``key``) and the verdict label."""
        hidden = ("design", "key", "decided_by")
        row = {f.name: getattr(self, f.name) for f in dataclass_fields(self) if f.name not in hidden}
        row["verdict_label"] = self.verdict_label
        return row


def _builder() -> str:
    """Where the claim was decided: the innermost caller outside ``helpers.core`` not named privately
    (``_claim``, a local ``row``), then the private function building this row (named after it,
    else the innermost private one): ``helpers.srelu.audit.claims > _claim_drawbacks``."""
    frame, helper, named = sys._getframe(2), "", ""
    while frame is not None:
        module, name = frame.f_globals.get("__name__", ""), frame.f_code.co_qualname
        if not (module.startswith("helpers.core") or module in ("dataclasses", "functools")):
            if not (name.rsplit(".", 1)[-1].startswith("_") or "<locals>" in name):
                helper = named or helper
                return f"{module}.{name}" + (f" > {helper}" if helper else "")
            helper = helper or name
            if not named and name != "_claim" and (name.endswith("_claim") or name.startswith("_claim_")):
                named = name
        frame = frame.f_back
    return named or helper


def source_row(
    key: str,
    claim: str,
    where: str,
    paper: SourceValue,
    ours: str,
    verdict: str,
    note: str = "",
    scale: str = "",
    profile: str = "cpu",
    *,
    source: str,
    notebook: str,
    anchor: str,
    **fields: Any,
) -> Claim:
    """One report row of ``source`` at ``where`` (a section, table or equation), shown at ``anchor`` of
    ``notebook``; ``fields``: the run statistics. Methods fix their constants with :func:`functools.partial`."""
    return Claim(
        key=key,
        claim=claim,
        source=f"{source}, {where}",
        paper_value=paper,
        our_value=ours,
        profile=profile,
        scale=scale,
        verdict=verdict,  # type: ignore[arg-type]
        notebook=notebook,
        note=note,
        anchor=anchor,
        **fields,
    )


#: Test text of a count claim: a binomial interval has no minimal detectable effect.
BINOMIAL_TEST = "exact binomial (Clopper-Pearson) 95% CI of the rate; no MDE for a count"


def proportion_fields(k: int, n: int, unit: str, *, test: str = BINOMIAL_TEST) -> dict[str, str]:
    """The ``effect, ci, n, test`` fields of a count claim "``k`` of ``n`` ``unit``" with its exact
    binomial 95 % interval (:func:`helpers.core.statistics.proportion`); ``mde`` stays empty."""
    rate = proportion(int(k), int(n))
    return {
        "effect": f"{k}/{n} {unit} = {rate.rate:.0%}",
        "ci": f"95% {rate.ci_text()}",
        "n": f"{n} {unit}",
        "test": test,
    }


def audit_rows(prefix: str, places: dict[str, tuple[str, str]], **fixed: Any) -> Callable[..., Claim]:
    """The row builder of one audit: ``row(name, **fields)`` is the :func:`source_row` keyed
    ``prefix-name`` at ``places[name] = (anchor, where)``, ``fixed`` giving defaults ``fields``
    override. An audit reads a source against itself: a verdict rests on an exact computation
    (``basis="exact"``, the default) or on the source's printed numbers (``"source"``), never on
    runs (``profile`` in :data:`EXACT_PROFILES`)."""

    def row(name: str, *, paper_value: SourceValue, our_value: str, **fields: Any) -> Claim:
        anchor, where = places[name]
        fields = {"basis": "exact", **fixed, **fields}
        claim, profile, basis = fields.get("claim"), fields.get("profile"), fields["basis"]
        for field_name, text in (("source", fields.get("source")), ("where", where), ("anchor", anchor)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{field_name} must be a non-empty string, got {text!r} for claim {claim!r}")
        if profile not in EXACT_PROFILES:
            raise ValueError(
                f"profile must be one of {EXACT_PROFILES} (no run decides this claim), "
                f"got {profile!r} for claim {claim!r}"
            )
        if basis not in ("exact", "source"):
            raise ValueError(
                f"basis must be 'exact' or 'source' (an exact computation or the source's own numbers, "
                f"never runs), got {basis!r} for claim {claim!r}"
            )
        key = f"{prefix}-{name}"
        return source_row(key=key, where=where, anchor=anchor, paper=paper_value, ours=our_value, **fields)

    return row


def claim_to_dict(claim: Claim) -> dict:
    """Every field of ``claim``, run designs included, as plain JSON; :func:`claim_from_dict` inverts it."""
    row = {f.name: getattr(claim, f.name) for f in dataclass_fields(claim) if f.name != "design"}
    row["design"] = [
        {
            **{f.name: getattr(part, f.name) for f in dataclass_fields(part) if f.name != "comparison"},
            "comparison": None if part.comparison is None else _plain(asdict(part.comparison)),
        }
        for part in claim.design
    ]
    return row


def claim_from_dict(row: dict) -> Claim:
    """The :class:`Claim` that :func:`claim_to_dict` wrote (tuples and comparisons restored)."""

    def comparison(c: dict | None) -> Comparison | None:
        return (
            None
            if c is None
            else Comparison(**{**c, "values_a": tuple(c["values_a"]), "values_b": tuple(c["values_b"])})
        )

    design = tuple(RunDesign(**{**part, "comparison": comparison(part["comparison"])}) for part in row["design"])
    return Claim(**{**row, "design": design})


def _plain(value: object) -> object:
    """``value`` with numpy scalars as Python numbers and tuples as lists (JSON's own types)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)  # numpy floats; anything else is not a number a comparison holds, and fails here
