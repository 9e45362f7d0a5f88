"""Rerun one row of the reproducibility report and see whether its verdict comes back.

    python -m tools.rerun KEY                    # the runs that decide the row, and their cost
    python -m tools.rerun KEY --go               # retrain them into a scratch folder, recompute the row
    python -m tools.rerun KEY --go --seeds 0,1   # fewer seeds: the verdict is then on fewer seeds
    python -m tools.rerun KEY --go --profile smoke   # the same code path on tiny runs, in minutes

The runs of a row are the committed results its claims code reads (:mod:`helpers.core.run_reads`):
every run-based row is built where its own runs are loaded, so those are exactly the runs it is
computed from. ``--go`` trains them into a scratch folder (never
into ``results/``; default ``.cache/rerun/KEY``), resumable: finished runs stay there and an
interrupted one resumes from its per-epoch checkpoint when the same command is given again. Then
the row is recomputed from the scratch runs by the same code and printed beside the committed row,
with each run compared to its committed result by :mod:`tools.verify_rerun`'s rule (exact on the
same CPU type and versions, within the float32 tolerance elsewhere). A rerun that disagrees is a
finding, printed as such; the exit status is 0 either way. Rows decided by exact computation or by
the source's own numbers have no runs: they are recomputed in seconds.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import inspect
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from helpers import methods
from helpers.claims import inputs_signature, report_claims
from helpers.core.claim import Claim
from helpers.core.provenance import cpu_capability, cpu_model
from helpers.core.results_cache import config_hash, load_result, run_many
from helpers.core.run_reads import HIDDEN, Elsewhere, RunRead, redirecting_reads, watching_runs
from helpers.core.runtime import repo_root, results_root
from helpers.relu_ization.latency import LATENCY_KEYS, RECORD
from tools.cli import ArgumentParser, positive_int_arg
from tools.rerun_runs import core_hours, describe_runs, obstacles, smoke_config
from tools.verify_rerun import results_in, verify

#: What rerunning a latency row does.
LATENCY_RERUN = (
    f"its verdict rests on the timings in {RECORD}: these runs are the networks timed, so a rerun "
    "retrains them and the row comes back only when their weights reproduce the timed ones; "
    "python benchmarks/relu_ization_latency.py measures the timings again"
)


class RerunError(ValueError):
    """A rerun that cannot start: an unknown key, a missing device, a scratch folder inside ``results/``."""


# ------------------------------------------------------------------------------------ the row
def find_row(key: str) -> Claim:
    """The committed report's row ``key``; an unknown key names the nearest keys."""
    claims = report_claims()
    for claim in claims:
        if claim.key == key:
            return claim
    keys = [c.key for c in claims]
    near = difflib.get_close_matches(key, keys, n=5, cutoff=0.5) or [k for k in keys if key in k][:5]
    hint = f"; nearest: {', '.join(near)}" if near else ""
    raise RerunError(f"no report row has the key {key!r}{hint} (all {len(keys)} keys: the report's download)")


def method_of(claim: Claim) -> methods.Method:
    """The method (paper or chapter) whose claims code builds ``claim``."""
    package = claim.decided_by.split(".")[1] if claim.decided_by.startswith("helpers.") else ""
    for method in methods.CLAIM_SOURCES:
        if method.package == package:
            return method
    raise RerunError(f"row {claim.key!r} is built by {claim.decided_by!r}, which is no method's claims code")


def builder_of(claim: Claim) -> Callable[[], Sequence[Claim]]:
    """The narrowest public function that builds ``claim`` and takes no arguments: the one its
    ``decided_by`` names when it is such a function (``helpers.flexact.claims.synthetic_claims``),
    else every row of its method (:func:`method_of`): a rerun recomputes no more than it must."""
    method = method_of(claim)
    module_name, _, name = claim.decided_by.split(" > ")[0].rpartition(".")
    fn = getattr(importlib.import_module(module_name), name, None) if module_name else None
    if callable(fn) and all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in inspect.signature(fn).parameters.values()
    ):
        return fn
    return lambda: [*method.claims(), *(method.audit() if method.audit is not None else [])]


def recompute(claim: Claim) -> tuple[dict[str, Claim], dict[str, list[RunRead]]]:
    """The rows :func:`builder_of` ``claim`` builds, computed now (not read from the stored
    report), by key, with the runs each run-based row read."""
    with watching_runs() as watch:
        rows = list(builder_of(claim)())
    return {c.key: c for c in rows}, watch.runs_by_key()


_COMMITTED: dict[tuple, dict[str, list[RunRead]]] = {}


def committed_runs(claim: Claim) -> list[RunRead]:
    """The committed runs of ``claim`` (:func:`recompute`), remembered in this process while the
    inputs of the report are unchanged (their names, sizes and times)."""
    key = (claim.decided_by, str(results_root("cpu")), inputs_signature())
    if key not in _COMMITTED:
        _COMMITTED.clear()
        _COMMITTED[key] = recompute(claim)[1]
    return _COMMITTED[key].get(claim.key, [])


# ------------------------------------------------------------------------------------ rerun
def scratch_folder(key: str, into: str | None, smoke: bool) -> Path:
    """Where the rerun writes: ``into`` or ``.cache/rerun/KEY[-smoke]``; never the committed results."""
    folder = Path(into) if into else repo_root() / ".cache" / "rerun" / (key + ("-smoke" if smoke else ""))
    resolved = folder.resolve()
    for committed in {results_root("cpu").resolve(), (repo_root() / "results").resolve()}:
        if resolved == committed or committed in resolved.parents:
            raise RerunError(f"--into {folder} is or lies inside the committed results ({committed}); choose another")
    return folder


def retrain(reads: Sequence[RunRead], folder: Path, *, smoke: bool, workers: int | None) -> list[Any]:
    """Train the configs of ``reads`` (their smoke versions with ``smoke``) into ``folder``: the
    runs already there are kept (an interrupted rerun continues), the others train."""
    configs = [smoke_config(r.config) if smoke else r.config for r in reads]
    with results_in(folder):
        todo = [c for c in configs if load_result(c) is None]
        print(f"training {len(todo)} runs into {folder} ({len(configs) - len(todo)} already there)", flush=True)
        if todo:
            run_many(todo, workers=workers, desc="rerun", rerun=True)
    return configs


def rerun_row(
    claim: Claim, reads: Sequence[RunRead], folder: Path, configs: Sequence[Any], left_out: Sequence[RunRead] = ()
) -> Claim | None:
    """``claim`` recomputed by its own code with its runs (``reads``) read from ``folder``, where
    ``configs`` (in the order of ``reads``) were trained, the runs ``left_out`` (seeds not rerun)
    hidden, and every other run read as committed. ``None``: the code built no such row."""
    trained = {config_hash(r.config): c for r, c in zip(reads, configs)}
    hidden = {config_hash(r.config) for r in left_out}

    def scratch(cfg: Any) -> Any:
        digest = config_hash(cfg)
        if digest in trained:
            return Elsewhere(trained[digest], folder)
        return HIDDEN if digest in hidden else cfg

    with redirecting_reads(scratch):
        rows, _ = recompute(claim)
    return rows.get(claim.key)


def compare_runs(reads: Sequence[RunRead], folder: Path) -> list[str]:
    """Each rerun against its committed result, with :mod:`tools.verify_rerun`'s rule: a count
    per outcome, why the comparison is not exact, and the runs that differ with their first
    difference (a finding, not an error)."""
    kinds: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    differ: list[str] = []
    with results_in(folder):
        for read in reads:
            fresh = load_result(read.config)
            if fresh is None:
                continue
            comparison, diffs = verify(read.result, fresh, type(read.config))
            reasons[comparison.reason.split(";")[0]] += 1
            if diffs:
                kinds["differ"] += 1
                name = f"{read.config.experiment}/{read.result['config_hash']}"
                differ.append(f"  {name} differs in {len(diffs)} values, e.g. {diffs[0]}")
            elif comparison.mode == "exact":
                kinds["identical"] += 1
            else:
                kinds["within the float32 tolerance"] += 1
    summary = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "none compared"
    lines = [f"runs against their committed results: {summary}"]
    lines += [f"  compared by tolerance because {why} ({n} runs)" for why, n in reasons.items() if why]
    return lines + differ[:10] + ([f"  ... and {len(differ) - 10} more"] if len(differ) > 10 else [])


_FIELDS = (("our value", "our_value"), ("effect", "effect"), ("CI", "ci"), ("n", "n"), ("verdict", "verdict_label"))


def side_by_side(committed: Claim, rerun: Claim | None, label: str) -> list[str]:
    """The committed row and the rerun row, field by field, and whether the verdict came back."""
    width = max(len(name) for name, _ in _FIELDS)
    lines = [f"{'':{width}}  committed | {label}"]
    for name, attr in _FIELDS:
        theirs = getattr(rerun, attr) if rerun is not None else "(no row)"
        lines.append(f"{name:{width}}  {getattr(committed, attr) or '—'} | {theirs or '—'}")
    came_back = rerun is not None and rerun.verdict == committed.verdict
    lines.append(f"verdict came back: {'yes' if came_back else 'no'}")
    return lines


# ------------------------------------------------------------------------------------ CLI
def _seed(config: Any) -> int | None:
    return getattr(config, "seed", None)


def _seeds_arg(text: str) -> tuple[int, ...]:
    try:
        if not all(s.strip().isascii() and s.strip().isdigit() for s in text.split(",")):
            raise ValueError(text)  # int() would read "1_0" as 10
        seeds = tuple(sorted({int(s) for s in text.split(",")}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds must be seeds separated by commas, e.g. 0,1; got {text!r}") from None
    if not seeds or min(seeds) < 0:
        raise argparse.ArgumentTypeError(f"--seeds must be non-negative integers, got {text!r}")
    return seeds


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m tools.rerun",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("key", help="the report row's key (the report's first column in its downloads)")
    parser.add_argument("--go", action="store_true", help="retrain the runs and recompute the row")
    parser.add_argument("--seeds", type=_seeds_arg, help="rerun only these seeds (e.g. 0,1)")
    parser.add_argument("--profile", choices=("cpu", "smoke"), default="cpu", help="smoke: tiny runs, same code")
    parser.add_argument("--into", help="the scratch results folder (default .cache/rerun/KEY)")
    parser.add_argument(
        "--workers", type=positive_int_arg("--workers"), help="worker processes (default: one per core)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    smoke = args.profile == "smoke"
    try:
        claim = find_row(args.key)
        if args.go:
            scratch_folder(claim.key, args.into, smoke)  # a bad --into is refused before anything is computed
        if not args.go and (args.seeds or smoke or args.into):
            print("(--seeds, --profile and --into choose what --go reruns; listing only)")
        return _run(claim, args, smoke)
    except RerunError as err:
        print(f"rerun: {err}", file=sys.stderr)
        return 2


def _run(claim: Claim, args: argparse.Namespace, smoke: bool) -> int:
    print(f"{claim.key}: {claim.claim}")
    print(f"decided by {claim.decided_by} ({claim.basis}); committed verdict: {claim.verdict_label}")
    start = time.perf_counter()
    if claim.basis != "runs":
        what = "exact computation" if claim.basis == "exact" else "the source's own numbers"
        rows, _ = recompute(claim)
        print(f"decided by {what}: no runs to retrain; recomputed in {time.perf_counter() - start:.1f} s")
        print("\n".join(side_by_side(claim, rows.get(claim.key), "recomputed")))
        return 0
    reads = committed_runs(claim)
    if not reads:
        print("no committed run decides this row (it is not run here): nothing to rerun")
        return 0
    left_out: list[RunRead] = []
    if args.seeds:
        have = sorted({s for r in reads if (s := _seed(r.config)) is not None})
        absent = [s for s in args.seeds if s not in have]
        if absent:
            raise RerunError(
                f"--seeds {','.join(map(str, absent))}: not a seed of {claim.key}'s runs "
                f"(its seeds: {','.join(map(str, have)) or 'none: its runs have no seed'})"
            )
        kept = [r for r in reads if _seed(r.config) is None or _seed(r.config) in args.seeds]
        left_out = [r for r in reads if r not in kept]
        print(f"only seeds {','.join(map(str, args.seeds))}: {len(kept)} of {len(reads)} runs")
        reads = kept
    cpus = sorted({str((r.result.get("provenance") or {}).get("cpu_model", "an unrecorded CPU")) for r in reads})
    print(
        f"{len(reads)} runs, {core_hours(reads):.2f} core-hours as recorded (one thread each) on "
        f"{', '.join(cpus)}; this machine: {cpu_model()} ({cpu_capability()})"
    )
    print("\n".join(f"  {line}" for line in describe_runs(reads)))
    if claim.key.startswith(LATENCY_KEYS):
        print(LATENCY_RERUN)
    problems = obstacles(reads, smoke)
    if problems and args.go:
        raise RerunError("cannot rerun here: " + "; ".join(problems))
    if problems:
        print("cannot rerun here: " + "; ".join(problems))
        return 0
    if not args.go:
        print(f"to retrain them and recompute the row: python -m tools.rerun {claim.key} --go")
        return 0
    folder = scratch_folder(claim.key, args.into, smoke)
    configs = retrain(reads, folder, smoke=smoke, workers=args.workers)
    row = rerun_row(claim, reads, folder, configs, left_out)
    label = "smoke rerun" if smoke else "rerun"
    if smoke:
        print("smoke profile: tiny runs through the same code; the rerun row says nothing about the claim")
    if args.seeds:
        print(f"the rerun verdict is computed on seeds {','.join(map(str, args.seeds))} only, fewer than committed")
    print("\n".join(side_by_side(claim, row, label)))
    if not smoke:
        print("\n".join(compare_runs(reads, folder)))
    print(f"done in {time.perf_counter() - start:.0f} s; the rerun's results are in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
