"""Every claim of every source document, in report order (the reproducibility report's table).

Pages read their claims from here too, by key (:func:`claim`, :func:`findings_box`), so a page
shows the report's row and never decides a verdict itself.

:data:`helpers.methods.CLAIM_SOURCES` lists each method's claims function; the
:class:`~helpers.core.claim.Claim` type, the verdicts and the table rendering live in
:mod:`helpers.core.claim`, :mod:`helpers.core.verdicts` and :mod:`helpers.core.report`.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import json
import os
import platform
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from helpers import methods
from helpers.core.claim import Claim, claim_from_dict, claim_to_dict
from helpers.core.findings import find_claim_by_key, findings_markdown, glue_values, page_claims
from helpers.core.report import CLAIM_COLUMNS
from helpers.core.report import claims_frame as report_table
from helpers.core.results_cache import compute_time
from helpers.core.run_reads import RunRead, watching_runs
from helpers.core.runtime import repo_root, results_root
from helpers.methods import CLAIM_SOURCES


def collect_claims() -> list[Claim]:
    """All claims of all source documents and of the book's own chapters, in report order."""
    claims: list[Claim] = []
    for method in methods.CLAIM_SOURCES:
        claims.extend(method.claims())
        if method.audit is not None:
            claims.extend(method.audit())
    return claims


def _claims_modules() -> list:
    """Each method's claims module (``helpers.<package>.claims``), in report order."""
    modules = []
    for method in CLAIM_SOURCES:
        try:
            modules.append(importlib.import_module(f"helpers.{method.package}.claims"))
        except ModuleNotFoundError:
            continue
    return modules


def margin_rules() -> list[tuple[str, str, str, str]]:
    """Every equivalence and non-inferiority margin of the report, one rule per line: (the rows,
    their keys as a pattern, the margin, how it is derived), from each claims module's ``MARGINS``."""
    return [rule for module in _claims_modules() for rule in getattr(module, "MARGINS", ())]


def smallest_effects() -> dict[str, tuple[str, str]]:
    """Every method's lines of the rules page's table of smallest effects of interest (each claims
    module's ``SMALLEST_EFFECT``: quantity -> (value, how)), after the core's, in report order."""
    return {q: line for module in _claims_modules() for q, line in getattr(module, "SMALLEST_EFFECT", {}).items()}


def margins_markdown(claims: Sequence[Claim]) -> str:
    """:func:`margin_rules` as a table for the rules page, each line with the count of report rows
    whose verdict rests on it."""
    kinds = ("equivalence", "non-inferiority")
    judged = [c for c in claims if any(d.claim in kinds for d in c.design) or c.key.startswith("flexact-readings")]
    lines = ["| rows | margin | how it is derived | rows |", "| --- | --- | --- | --- |"]
    for label, pattern, margin, how in margin_rules():
        n = sum(bool(re.fullmatch(pattern, c.key)) for c in judged)
        lines.append(f"| {label} | {margin} | {how} | {n} |")
    return "\n".join(lines)


def claim(key: str) -> Claim:
    """The report's claim with :attr:`~helpers.core.claim.Claim.key` ``key`` (``KeyError`` if none)."""
    return find_claim_by_key(report_claims(), key)


def section_claims(page: str, anchor: str | None = None) -> list[Claim]:
    """The report's claims on ``page`` (``notebooks/20_x`` or ``20_x``), in report order; with
    ``anchor``, only those whose section label is ``anchor``. A page's own claims table reads its
    rows here, so it shows exactly what the report shows (``KeyError`` when there are none)."""
    claims = page_claims(report_claims(), page)
    if anchor is not None:
        claims = [c for c in claims if c.anchor == anchor]
    if not claims:
        where = f"page {page!r}" + (f", section {anchor!r}" if anchor else "")
        raise KeyError(f"the report has no claims on {where}")
    return claims


def claims_frame(claims: Sequence[Claim], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``claims`` as the report's table (:data:`~helpers.core.report.CLAIM_COLUMNS`), the ``columns`` given."""
    frame = report_table(list(claims))
    return frame if columns is None else frame[list(columns)]


def findings_box(
    page: str,
    keys: Sequence[str] | None = None,
    *,
    name: str = "findings",
    extra: str = "",
    when_empty: str | None = None,
    **options,
) -> None:
    """Glue the body of ``page``'s "What this page finds" box as ``name``: the page's
    claims in the report (``page``: ``notebooks/20_x`` or ``20_x``), the ones listed in ``keys`` in
    that order (or one per verdict without ``keys``); ``options`` go to
    :func:`helpers.core.findings.findings_markdown` (``max_items``, ``strict``, ``summary``...);
    ``extra``: markdown lines the page appends (a finding that is not a claim); ``when_empty``: the
    text to show when the report has no claim on the page yet (without it, that is a ``KeyError``)."""
    from IPython.display import Markdown  # lazy: only pages (run under Jupyter) display markdown

    claims = page_claims(report_claims(), page)
    if not claims and when_empty is None:
        raise KeyError(f"the report has no claims on page {page!r}")
    body = (findings_markdown(claims, keys=keys, **options) + (f"\n{extra}" if extra else "")) if claims else when_empty
    glue_values(**{name: Markdown(body)})


# --- the stored report -------------------------------------------------------------------------
# Computing the report re-checks every committed result (about a minute on 2 cores) and every page,
# test and tool needs it, so it is stored as JSON under ``.cache/report/``, keyed by a digest of all
# the rows depend on: the code under ``helpers/``, the result files, the measured benchmarks, the
# registered claim sources, the library versions and CPU type (float rounding). A stale file is
# never read; a missing or unreadable one is recomputed.

#: Bump when the stored format changes (an old file is then simply not found).
STORE_FORMAT = 2

#: How many stored reports to keep (tests that point ``REPRO_RESULTS_DIR`` elsewhere add their own).
STORE_KEEP = 8


def _input_files() -> list[tuple[str, Path]]:
    """Every file the report reads, with the name it enters the key under."""
    root = repo_root()
    files = [(f"code/{p.relative_to(root)}", p) for p in sorted((root / "helpers").rglob("*.py"))]
    files += [(f"bench/{p.name}", p) for p in sorted((root / "benchmarks").glob("*.json"))]
    results = results_root("cpu")
    if results.is_dir():
        files += [(f"results/{p.relative_to(results)}", p) for p in sorted(results.rglob("*.json")) if p.is_file()]
    return files


def _environment() -> list[str]:
    import numpy
    import scipy
    import sympy
    import torch

    sources = [f"{m.package}:{_qualname(m.claims)}:{_qualname(m.audit)}" for m in methods.CLAIM_SOURCES]
    return [
        f"format={STORE_FORMAT}",
        f"python={platform.python_version()}",
        f"torch={torch.__version__}",
        f"numpy={numpy.__version__}",
        f"scipy={scipy.__version__}",
        f"sympy={sympy.__version__}",
        f"cpu={torch.backends.cpu.get_cpu_capability()}",
        *sources,
    ]


def _qualname(fn: object) -> str:
    return "" if fn is None else f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


def report_digest() -> str:
    """The key of the report these inputs give: a SHA-256 over the inputs' names and contents."""
    digest = hashlib.sha256()
    for line in _environment():
        digest.update(line.encode() + b"\n")
    for name, path in _input_files():
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def store_path(digest: str | None = None) -> Path:
    """Where the report of ``digest`` (default: the current inputs) is stored."""
    return repo_root() / ".cache" / "report" / f"report-{digest or report_digest()}.json"


def inputs_signature() -> tuple:
    """A cheap fingerprint of the inputs (names, sizes, modification times): within one process it
    tells whether the digest needs recomputing at all."""
    stats = []
    for name, path in _input_files():
        st = path.stat()
        stats.append((name, st.st_size, st.st_mtime_ns))
    return (tuple(_environment()), tuple(stats))


Stored = tuple[tuple[Claim, ...], dict[str, list[dict]]]


def _load_stored(path: Path) -> Stored | None:
    try:
        data = json.loads(path.read_text())
        if data.get("format") != STORE_FORMAT:
            return None
        runs = data["runs"]
        by_key = {key: [runs[h] for h in hashes] for key, hashes in data["row_runs"].items()}
        return tuple(claim_from_dict(row) for row in data["claims"]), by_key
    except (OSError, ValueError, KeyError, TypeError):  # missing, half-written by a crash, or foreign
        return None


def _run_summary(read: RunRead) -> dict:
    """What the report page and ``rerun`` say of one run without loading it again."""
    provenance = read.result.get("provenance") or {}
    return {
        "experiment": read.config.experiment,
        "config_hash": read.result["config_hash"],
        "seed": getattr(read.config, "seed", None),
        "train_seconds": float(read.result.get("train_seconds", 0.0)),
        "precision": getattr(read.config, "precision", "float32"),
        "device": str(provenance.get("device", "cpu")),
        "cpu_model": str(provenance.get("cpu_model", "unknown CPU")),
    }


def _store(path: Path, claims: Sequence[Claim], runs: dict[str, list[dict]]) -> None:
    table = {run["config_hash"]: run for found in runs.values() for run in found}  # each run stored once
    row_runs = {key: [run["config_hash"] for run in found] for key, found in runs.items()}
    data = {"format": STORE_FORMAT, "claims": [claim_to_dict(c) for c in claims], "runs": table, "row_runs": row_runs}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    stored = sorted(path.parent.glob("report-*.json"), key=_modified, reverse=True)
    for old in stored[STORE_KEEP:]:
        old.unlink(missing_ok=True)


def _modified(path: Path) -> int:
    """``path``'s modification time, 0 when another process pruned it meanwhile."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return 0


_MEMO: dict[tuple, Stored] = {}


def _stored_report() -> Stored:
    signature = inputs_signature()
    if (stored := _MEMO.get(signature)) is None:
        path = store_path()
        stored = _load_stored(path)
        if stored is None:
            stored = _compute_once(path)
        _MEMO.clear()
        _MEMO[signature] = stored
    return stored


def report_claims() -> tuple[Claim, ...]:
    """:func:`collect_claims`, computed once per set of inputs and stored on disk (see
    :data:`STORE_FORMAT`): the first caller computes and stores it, later ones read it."""
    return _stored_report()[0]


def report_runs() -> dict[str, list[dict]]:
    """The committed runs behind each run-based row of :func:`report_claims`, by key: each run's
    experiment, config hash, seed, ``train_seconds``, precision, device and CPU, found while the
    report was computed (:mod:`helpers.core.run_reads`)."""
    return _stored_report()[1]


def rerun_commands(claims: Sequence[Claim] | None = None) -> dict[str, tuple[str, str]]:
    """For each run-based row with committed runs (default: the report's), the command that reruns
    it (:mod:`tools.rerun`) and its cost as recorded: runs and training core-hours."""
    runs = report_runs()
    out = {}
    for c in report_claims() if claims is None else claims:
        if c.basis == "runs" and runs.get(c.key):
            hours = compute_time(runs[c.key])["core_minutes"] / 60
            bf16 = " (bf16: AMX, AVX512-BF16 or a GPU)" if any(r["precision"] == "bf16" for r in runs[c.key]) else ""
            cost = f"{len(runs[c.key])} runs, {hours:.2g} core-hours{bf16}"
            out[c.key] = (f"python -m tools.rerun {c.key}", cost)
    return out


def collect_claims_and_runs() -> tuple[list[Claim], dict[str, list[RunRead]]]:
    """:func:`collect_claims` and, for each run-based row, the runs it read (by key)."""
    with watching_runs() as watch:
        claims = collect_claims()
    return claims, watch.runs_by_key()


def _compute_once(path: Path) -> Stored:
    """Compute and store the report under an exclusive lock beside the store, so that processes
    starting together (pytest-xdist workers, the book's parallel readers) compute it once: the
    others wait, then read what the first stored."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".lock", "w") as lock:  # closing it releases the lock
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (stored := _load_stored(path)) is None:
            claims, reads = collect_claims_and_runs()
            runs = {key: [_run_summary(r) for r in found] for key, found in reads.items()}
            stored = (tuple(claims), runs)
            _store(path, *stored)
        return stored


# --- the report as a download ------------------------------------------------------------------

#: The columns of the report's CSV and JSON downloads, in order: what a reader or another tool
#: needs to use a verdict without running Python, and where the code that decides it lives.
DOWNLOAD_COLUMNS: tuple[str, ...] = ("key", *CLAIM_COLUMNS, "decided_by")


def download_frame(claims: Sequence[Claim]) -> pd.DataFrame:
    """The report's table (:data:`~helpers.core.report.CLAIM_COLUMNS`) with each row's key first and
    ``decided_by`` (``module.function``) last: :data:`DOWNLOAD_COLUMNS`."""
    frame = report_table(list(claims))
    frame.insert(0, "key", [c.key for c in claims])
    frame["decided_by"] = [c.decided_by for c in claims]
    return frame


def write_downloads(folder: Path, claims: Sequence[Claim] | None = None) -> tuple[Path, Path]:
    """Write the report's rows (default: :func:`report_claims`) to ``folder/claims.csv`` and
    ``folder/claims.json`` (a list of objects, one per row); return both paths."""
    frame = download_frame(report_claims() if claims is None else claims)
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = folder / "claims.csv", folder / "claims.json"
    frame.to_csv(csv_path, index=False)
    json_path.write_text(json.dumps(frame.to_dict(orient="records"), indent=1, ensure_ascii=False) + "\n")
    return csv_path, json_path
