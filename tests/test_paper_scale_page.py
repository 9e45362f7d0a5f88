"""The measured figures that "Running at paper scale" quotes are those of the committed benchmark files.

The page is prose (MyST markdown, not executed), so this test keeps its numbers from drifting
away from ``benchmarks/ddp_throughput_measured.txt`` and ``benchmarks/gpu_check_measured.json``
when a benchmark is rerun.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "book" / "paper_scale.md").read_text(encoding="utf-8")
PROSE = " ".join(PAGE.split())  # the page's line breaks fall anywhere in a sentence


def test_the_ddp_speed_ups_are_the_measured_medians():
    measured = (ROOT / "benchmarks" / "ddp_throughput_measured.txt").read_text(encoding="utf-8")
    summary = re.search(r"median ratio over \d+ rounds: ([\d.]+)x with global-batch .*?, ([\d.]+)x with", measured)
    assert summary, "the benchmark file has no summary line"
    global_bn, per_rank = summary.groups()
    assert f"two processes train {global_bn}x as many images per second as one" in PROSE
    assert f"changes the result, so the book never trains that way) {per_rank}x" in PROSE


def test_the_gpu_figures_are_those_of_the_gpu_check():
    data = json.loads((ROOT / "benchmarks" / "gpu_check_measured.json").read_text(encoding="utf-8"))
    calls = {(r["activation"], r["backend"]): r["us_per_call"] for r in data["kernel_calls"]}
    gelu_ms = calls[("gelu", "compiled")] / 1000
    slow_ms = [calls[(a, b)] / 1000 for a in ("lambda_gelu", "srelu") for b in ("compiled", "eager")]
    assert f"against {gelu_ms:.2f} ms for `nn.GELU`" in PROSE
    assert f"about {round(sum(slow_ms) / len(slow_ms))} ms per forward and backward" in PROSE
    assert all(0.75 <= ms <= 1.25 for ms in slow_ms), slow_ms  # "about 1 ms" holds for each of them
    ratios = [r["time_vs_gelu"] for r in data["throughput"] if r["activation"] in ("lambda_gelu", "srelu")]
    assert f"a training step takes {min(ratios):.1f}-{max(ratios):.1f}x as long as with GELU" in PROSE
    by_model: dict[str, list[float]] = {}
    for r in data["throughput"]:
        if r["activation"] in ("lambda_gelu", "srelu"):
            by_model.setdefault(r["model"].split(" ")[0].removesuffix("-tiny"), []).append(r["time_vs_gelu"])
    cheapest = min(by_model, key=lambda m: min(by_model[m]))
    dearest = max(by_model, key=lambda m: max(by_model[m]))
    assert f"({cheapest} least, {dearest} most)" in PROSE
