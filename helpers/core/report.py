"""The report page's tables: the verdict counts, the smallest effects of interest and the claims
table. A row is a :class:`~helpers.core.claim.Claim` and its verdict comes from
:mod:`helpers.core.verdicts`; the report renders :func:`helpers.claims.collect_claims` as one
table, nothing in it typed.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Collection, Mapping

from helpers.core.claim import VERDICTS, Claim
from helpers.core.verdicts import NEGLIGIBLE_ACCURACY_POINTS

#: The smallest effect of interest of each quantity (quantity -> (value, how it is applied)): the
#: margin the book calls a match, so a match elsewhere is never a confirmation here.
SMALLEST_EFFECTS: dict[str, tuple[str, str]] = {
    "accuracy": (
        f"{NEGLIGIBLE_ACCURACY_POINTS:g} points",
        "absolute: 50 of 10,000 test images; the book's match margin for accuracy",
    ),
    "perplexity": (
        "2 % of the baseline",
        "relative to the baseline at the scale run (ReLU from scratch; GELU for λ-GELU), computed per pair",
    ),
    "latency": ("5 % of the time", 'the ratio of medians inside 0.95-1.05; the "same speed" margin'),
}


def smallest_effects_markdown(more_effects: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The rules page's table of the smallest effect of interest of each quantity
    (:data:`SMALLEST_EFFECTS`, then ``more_effects``)."""
    table = ["| quantity | smallest effect of interest | how |", "| --- | --- | --- |"]
    effects = {**SMALLEST_EFFECTS, **(more_effects or {})}
    return "\n".join(table + [f"| {q} | {value} | {how} |" for q, (value, how) in effects.items()])


#: Columns of :func:`claims_frame`, in display order.
CLAIM_COLUMNS: tuple[str, ...] = tuple(
    "paper claim source paper_value paper_kind paper_detail our_value verdict verdict_label reading "
    "effect ci n test mde basis profile scale note notebook anchor".split()
)


def paper_of(claim: Claim) -> str:
    """The source document a claim belongs to (its ``source`` up to the first comma)."""
    return claim.source.split(",", 1)[0].strip()


def claims_frame(claims: list[Claim]):  # -> pandas.DataFrame (pandas imported lazily)
    """One row per claim with :data:`CLAIM_COLUMNS`."""
    import pandas as pd  # lazy: the Claim type is used without pandas (results, tests); only the tables need it

    return pd.DataFrame([{**c.as_row(), "paper": paper_of(c)} for c in claims], columns=list(CLAIM_COLUMNS))


def verdict_counts(claims: list[Claim]):
    """Claims per source (rows, report order) and verdict (columns, :data:`VERDICTS` order), with
    a ``total`` row and column. A run-based contradiction counts as ``contradicted``."""
    import pandas as pd  # lazy: the Claim type is used without pandas (results, tests); only the tables need it

    frame = claims_frame(claims)
    papers = list(dict.fromkeys(frame["paper"]))
    table = pd.crosstab(frame["paper"], frame["verdict"]).reindex(index=papers, columns=list(VERDICTS), fill_value=0)
    table.loc["total"] = table.sum()
    table["total"] = table.sum(axis=1)
    table.index.name, table.columns.name = "source", "verdict"
    return table


def page_link(docname: str, anchor: str = "", *, built: Collection[str] | None = None, prefix: str = "../") -> str:
    """HTML of the link from the report to page ``docname`` (and section ``anchor``):
    ``<a href="../notebooks/x.html#anchor">x</a>``. ``prefix``: the report's path to the book root; a
    docname not in ``built`` gets its name without a link."""

    name = html.escape(docname.rsplit("/", 1)[-1])
    if built is not None and docname not in built:
        return name
    target = html.escape(f"{prefix}{docname}.html" + (f"#{anchor}" if anchor else ""))
    return f'<a href="{target}">{name}</a>'


#: The report page's HTML, relative to the other pages (all under ``notebooks/``).
REPORT_PAGE = "90_report.html"


def row_id(key: str) -> str:
    """The HTML id of the report table's row of claim ``key``."""
    return f"claim-{key}"


def _reading_html(reading: str) -> str:
    """The book's reading under a verdict that rests on it (:attr:`Claim.reading`)."""
    return f'<div class="claim-reading">our reading: {html.escape(reading)}</div>' if reading else ""


def _folded(text: str, collapse_at: int) -> str:
    """Escaped ``text``; folded into ``<details>`` (first words as the summary) when longer than
    ``collapse_at`` > 0 characters."""
    if not collapse_at or len(text) <= collapse_at:
        return html.escape(text)
    head = text[: max(20, collapse_at // 2)].rsplit(" ", 1)[0]
    return f'<details class="claim-more"><summary>{html.escape(head)}…</summary>{html.escape(text)}</details>'


def claims_table_html(
    claims: list[Claim],
    link: Callable[[str, str], str] | None = None,
    *,
    collapse_at: int = 0,
    rerun: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The report's table: a ``<tbody class="claims-group" data-source=...>`` per source (first row:
    the source and its verdict counts), then a ``<tr class="claim-row">`` per claim (``data-source``,
    ``data-verdict``; filtered by ``_static/claims-filter.js``) in seven columns: claim, the source's
    value, ours, verdict, run statistics, note, page. ``link(docname, anchor)``: e.g.
    :func:`page_link`; ``collapse_at`` > 0 folds longer notes and tests; ``rerun``: key -> the
    command that reruns the row and its cost."""
    esc = html.escape
    frame = claims_frame(claims)
    head = ["claim", "source's value", "our value", "verdict", "statistics", "note", "page"]
    widths = ["26%", "14%", "14%", "12%", "14%", "12%", "8%"]
    bodies = []
    for paper, group in frame.groupby("paper", sort=False):
        counts = group["verdict"].value_counts()
        summary = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts.get(v, 0))
        rows = [
            f'<tr class="claims-group-head"><th colspan="{len(head)}" scope="rowgroup">{esc(paper)}'
            f'<span class="claims-group-count"> · {len(group)} claims: {esc(summary)}</span></th></tr>'
        ]
        for r in group.itertuples():
            cls = "verdict-" + r.verdict_label.replace(" ", "-")
            where = r.source.split(",", 1)[1].strip() if "," in r.source else r.source
            scale = f"{r.profile}, {r.scale}" if r.scale else r.profile
            stats = [
                (name, value)
                for name, value in (("effect", r.effect), ("CI", r.ci), ("n", r.n), ("MDE", r.mde))
                if value
            ]
            stats_html = "<br>".join(f"{esc(name)} {esc(value)}" for name, value in stats)
            if r.test:
                stats_html += (
                    "<br>" if stats_html else ""
                ) + f'<span class="claim-test">test: {_folded(r.test, collapse_at)}</span>'
            if rerun and claims[r.Index].key in rerun:
                command, cost = rerun[claims[r.Index].key]
                stats_html += f'<div class="claim-rerun">rerun: <code>{esc(command)}</code> · {esc(cost)}</div>'
            cells = [
                f'{esc(r.claim)}<div class="claim-where">{esc(where)} · {esc(scale)}</div>'
                f'<div class="claim-key"><code>{esc(claims[r.Index].key)}</code> · decided by '
                f"<code>{esc(claims[r.Index].decided_by)}</code></div>",
                esc(r.paper_value),
                esc(r.our_value),
                f'<span class="verdict {cls}">{esc(r.verdict_label)}</span>' + _reading_html(r.reading),
                stats_html or "—",
                _folded(r.note, collapse_at) if r.note else "",
                link(r.notebook, r.anchor) if link else esc(r.notebook),
            ]
            # the source's value cell says whose value it is (printed, quoted, or derived by us)
            classes = [f"claim-value claim-value-{r.paper_kind}", "claim-value", "", "claim-stats", "claim-note", ""]
            rows.append(
                f'<tr id="{row_id(claims[r.Index].key)}" data-source="{esc(r.paper)}" '
                f'data-verdict="{esc(r.verdict)}" class="claim-row">'
                + f"<td>{cells[0]}</td>"
                + "".join(f'<td class="{c}">{v}</td>' if c else f"<td>{v}</td>" for c, v in zip(classes, cells[1:]))
                + "</tr>"
            )
        bodies.append(f'<tbody class="claims-group" data-source="{esc(paper)}">' + "".join(rows) + "</tbody>")
    return (
        f'<div class="claims-table-wrapper"><table id="claims-table" class="claims-table claims-grouped" '
        f'data-verdicts="{esc("|".join(VERDICTS))}">'
        + "<colgroup>"
        + "".join(f'<col style="width: {w}">' for w in widths)
        + "</colgroup>"
        + "<thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead>"
        + "".join(bodies)
        + "</table></div>"
    )
