"""What a page finds, in a few lines: the "What this page finds" box and readable setup tables.

Every page opens with an admonition listing its main verdicts, built from the report's own
:class:`helpers.core.claim.Claim` objects read by key, so it never disagrees with the report
(``helpers.claims.findings_box``)::

    findings_box("04_lipschitz_and_mollifiers", ["srelu-lipschitz-gelu", ...])

and, in the page's markdown (MyST, myst-nb 1.x)::

    :::{admonition} What this page finds
    :class: tip findings
    ```{glue:md} findings
    :format: myst
    ```
    :::

:func:`setup_frame` shows run configs side by side as short text; :func:`claim_parts` gives the
parts a run-based row is judged in, and :func:`ours_text` their values as text for the sentence a
page writes around them (``f"Ours: {ours_text(row)}: {row.verdict_label}."``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from helpers.core.attribution import DERIVED_MARK
from helpers.core.claim import VERDICTS, Claim
from helpers.core.options import flat_options, options_labels
from helpers.core.report import REPORT_PAGE, paper_of, row_id

#: Order in which verdicts are picked when a page does not choose its findings itself.
_PRIORITY: tuple[str, ...] = (
    "contradicted",
    "not reproduced under our reading",
    "confirmed",
    "confirmed with a caveat",
    "confirmed but negligible",
    "inconclusive",
    "not run here",
)
#: Characters that would start markdown or MyST syntax inside a claim's text (sympy's ``x**2``,
#: ``3*delta/16``, ``[a, b]``, ``$``...). Backslash-escaping ASCII punctuation is always literal.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]{}<>$|~#])")


def md_escape(text: str) -> str:
    """``text`` with markdown/MyST syntax characters backslash-escaped (shown literally)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def shorten(text: str, limit: int = 110) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def page_claims(claims: Iterable[Claim], docname: str) -> list[Claim]:
    """The claims whose page is ``docname`` (``notebooks/10_x`` or just ``10_x``), in order."""
    name = docname if "/" in docname else f"notebooks/{docname}"
    return [c for c in claims if c.notebook == name]


def verdict_summary(claims: Sequence[Claim]) -> str:
    """``"9 claims: 7 confirmed, 1 contradicted, 1 not run here"`` (verdicts in report order)."""
    counts = Counter(c.verdict for c in claims)
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
    return f"{len(claims)} claim{'s' if len(claims) != 1 else ''}: " + ", ".join(parts)


def find_claim_by_key(claims: Iterable[Claim], key: str) -> Claim:
    """The claim whose :attr:`Claim.key` is ``key`` (``KeyError`` naming the keys there are)."""
    pool = list(claims)
    for c in pool:
        if c.key == key:
            return c
    near = [c.key for c in pool if c.key.split("-", 1)[0] == key.split("-", 1)[0]] or [c.key for c in pool]
    raise KeyError(f"no claim has the key {key!r}; keys: {near}")


def select_claims(
    claims: Sequence[Claim], keys: Sequence[str] | None = None, max_items: int = 4, *, strict: bool = True
) -> list[Claim]:
    """The claims a findings box lists: by ``keys``, in order (an unknown key is ``KeyError``, or
    skipped with ``strict=False`` for claims only some profiles have). Without keys: one claim per
    verdict in the order contradicted, not reproduced, confirmed, inconclusive, not run here, then
    the next of each, up to ``max_items``.
    """
    if keys is not None:
        by_key = {c.key: c for c in claims}
        missing = [k for k in keys if k not in by_key]
        if missing and strict:
            raise KeyError(f"no claim has the keys {missing}; keys: {list(by_key)}")
        return [by_key[k] for k in keys if k in by_key][:max_items]
    queues = {v: [c for c in claims if c.verdict == v] for v in _PRIORITY}
    picked: list[Claim] = []
    while len(picked) < max_items and any(queues.values()):
        for v in _PRIORITY:
            if queues[v] and len(picked) < max_items:
                picked.append(queues[v].pop(0))
    return picked


#: How a claim's ``source`` starts when it is the book's own finding beyond the papers (e.g. the
#: ReLU-ization chapter): such a claim has a hypothesis, not a source's value.
OWN_SOURCE = "This book"


def _source_word(claim: Claim) -> str:
    """Whose value a line shows: the source's, or ours derived from it (``paper_kind`` "derived")."""
    word = "the post" if "blog" in paper_of(claim).lower() else "the paper"
    return f"our reading of {word}" if claim.paper_kind == "derived" else word


def finding_line(claim: Claim, *, limit: int = 110, link: bool = True) -> str:
    """One markdown list item: ``- **verdict**: claim. Ours: X; the paper: Y. (details; report row)``;
    with ``link``, a link to the section that computes it and one to its row in the report."""
    ours, theirs = _value(claim.our_value, limit), _value(claim.paper_value, limit)
    text = md_escape(shorten(claim.claim, 160))
    ref = f" ({{ref}}`details <{claim.anchor}>`" if link and claim.anchor else ""
    if link:  # the row in the report (notebooks/90_report.html, beside the pages), with its rerun command
        ref += ("; " if ref else " (") + f'<a href="{REPORT_PAGE}#{row_id(claim.key)}">report row</a>'
    ref += ")" if ref else ""
    if paper_of(claim).startswith(OWN_SOURCE):  # the book's own hypothesis: no source's value to show
        values = "Not run here." if claim.verdict == "not run here" else f"Ours: {ours} (the book's own finding)."
    elif claim.verdict == "not run here":
        who = _source_word(claim)
        values = f"{who[0].upper() + who[1:]}: {theirs}; not run here."
    else:
        values = f"Ours: {ours}; {_source_word(claim)}: {theirs}."
    end = "" if text.endswith(("…", ".", "?", "!")) else "."
    return f"- **{claim.verdict_label}**: {text}{end} {values}{ref}"


def _value(value: str, limit: int) -> str:
    """A claim's value for markdown: formulas (sympy's ``x**2``, ``3*delta``) as inline code, the
    rest escaped."""
    value = shorten(value or "—", limit)
    if "*" in value or "sqrt(" in value:
        return "``" + value.replace("`", "'") + "``"
    return md_escape(value)


def findings_markdown(
    claims: Sequence[Claim],
    keys: Sequence[str] | None = None,
    max_items: int = 4,
    *,
    strict: bool = True,
    summary: bool = True,
    limit: int = 110,
    link: bool = True,
) -> str:
    """The body of a page's "What this page finds" box (MyST markdown): the verdict counts
    (``summary``), then up to ``max_items`` claims (:func:`select_claims`) with both values and links."""
    lines = []
    if summary:
        lines.append(f"**{verdict_summary(claims)}.** The main ones:")
        lines.append("")
    picked = select_claims(claims, keys, max_items, strict=strict)
    lines += [finding_line(c, limit=limit, link=link) for c in picked]
    return "\n".join(lines)


class ClaimPart(NamedTuple):
    """One part a run-based row is judged in, as its fields show it (``label`` empty for a whole row)."""

    label: str
    effect: str
    ci: str
    n: str
    mde: str


def claim_parts(claim: Claim) -> tuple[ClaimPart, ...]:
    """A run-based row's ``effect``, ``ci``, ``n`` and ``mde``, one :class:`ClaimPart` per part it is
    judged in (each field then reads ``"a: x; b: y"`` with the same labels); none without an effect."""
    if not claim.effect:
        return ()
    fields = [claim.effect, claim.ci, claim.n, claim.mde]
    parts = [_labelled_parts(f) for f in fields]
    if all(parts) and all(list(p) == list(parts[0]) for p in parts):
        return tuple(ClaimPart(label, *(p[label] for p in parts)) for label in parts[0])  # type: ignore[index]
    return (ClaimPart("", *fields),)


def _labelled_parts(text: str) -> dict[str, str] | None:
    """``"a: x; b: y"`` (the fields of a row judged in parts) as ``{"a": "x", "b": "y"}``, else None."""
    items = text.split("; ")
    if len(items) < 2 or not all(": " in item for item in items):
        return None
    return dict(item.split(": ", 1) for item in items)


def ours_text(claim: Claim) -> str:
    """A row's own result for a page's sentence, part by part: ``+10.4 points, 95% [+7.3, +13.4]
    (3 pairs of runs; MDE 4.0 points)``; its ``our_value`` when it has no run-based fields."""
    parts = claim_parts(claim)
    if not parts:
        return claim.our_value or "—"
    return "; ".join(_part_text(part) for part in parts)


def _part_text(part: ClaimPart) -> str:
    """``label: effect, ci (n; MDE mde)`` (a non-inferiority or TOST margin shown as it is)."""
    mde = part.mde if part.mde.startswith("margin") else f"MDE {part.mde}" if part.mde else ""
    details = "; ".join(text for text in (part.n, mde) if text)
    label = f"{part.label}: " if part.label else ""
    return f"{label}{part.effect}, {part.ci}" + (f" ({details})" if details else "")


def glue_values(**values: Any) -> None:
    """Glue each keyword as a page value (``glue(name, value, display=False)``) for ``glue:text``."""
    from myst_nb import glue  # lazy: only pages (run under Jupyter) glue; myst_nb pulls in Sphinx

    for name, value in values.items():
        glue(name, value, display=False)


def readable_value(value: Any) -> str:
    """A setting as short text: ``{'dim': 48, 'depth': 4}`` -> ``dim 48, depth 4``; lists joined with
    commas; ``None`` -> ``—``; everything else ``str``."""
    if value is None:
        return "—"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {readable_value(v)}" for k, v in value.items()) or "—"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(readable_value(v) for v in value) or "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


#: Row labels of :func:`setup_frame` for config fields whose name reads badly as text.
FIELD_LABELS: dict[str, str] = {
    "model_kwargs": "model settings",
    "n_train": "training samples",
    "n_val": "validation samples",
    "warmup_epochs": "warm-up epochs",
    "batch_size": "batch size",
    "lr": "learning rate",
    "weight_decay": "weight decay",
    "warmup_start_lr": "warm-up start lr",
    "min_lr": "final lr",
    "max_grad_norm": "gradient clipping (norm)",
    "penultimate_activation": "penultimate activation",
}


def _settings(cfg: Any) -> dict[str, Any]:
    """A run config's fields by name, its method options flat (as its stored config shows them)."""
    fields = {name: getattr(cfg, name) for name in getattr(cfg, "__dataclass_fields__", {}) if name != "options"}
    return {**fields, **flat_options(getattr(cfg, "options", ()))}


def setup_frame(configs: Mapping[str, Any], fields: Sequence[str]):  # -> pandas.DataFrame
    """Run configs side by side: one column per label, one row per field (:data:`FIELD_LABELS`, the
    method options' labels), values as :func:`readable_value` text (``None``, "all" or "off", as ``—``)."""
    import pandas as pd

    if not configs:
        raise ValueError("no configs given")
    settings = {label: _settings(cfg) for label, cfg in configs.items()}
    for label, values in settings.items():
        absent = [f for f in fields if f not in values]
        if absent:
            raise ValueError(f"config {label!r} has no fields {absent}")
    labels = {**FIELD_LABELS, **options_labels()}
    index = pd.Index([labels.get(f, f.replace("_", " ")) for f in fields], name="setting")
    return pd.DataFrame(
        {label: [readable_value(values[f]) for f in fields] for label, values in settings.items()}, index=index
    )


# --------------------------------------------------------------------------------------------
# Headlines for the introduction (book/intro.md writes the sentences; the report page glues these)
# --------------------------------------------------------------------------------------------


def headline_values(claim: Claim, *, limit: int = 90) -> dict[str, str]:
    """A headline's parts as plain text: ``paper`` (whose value, then the value: ``the paper “…”``),
    ``ours`` and ``verdict`` (its label)."""
    # a derived value is introduced as "our reading of the paper", so its derivation need not follow it
    value = claim.paper_value.split(DERIVED_MARK, 1)[0] if claim.paper_kind == "derived" else claim.paper_value
    return {
        "paper": f"{_source_word(claim)} {shorten(value or '—', limit)}",
        "ours": shorten(claim.our_value or "—", limit),
        "verdict": claim.verdict_label,
    }


def verdict_tally(claims: Sequence[Claim]) -> dict[str, int]:
    """How many of ``claims`` have each verdict label, in report order (labels with none left out);
    the page writes the sentence."""
    counts = Counter(c.verdict_label for c in claims)
    order = [label for v in VERDICTS for label in ((v, "contradicted at our scale") if v == "contradicted" else (v,))]
    return {label: counts[label] for label in order if counts[label]}
