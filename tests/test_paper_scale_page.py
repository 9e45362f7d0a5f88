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
    assert f"takes {calls[('lambda_gelu', 'compiled')]:.0f} µs with λ-GELU" in PROSE
    assert f"and {calls[('srelu', 'compiled')]:.0f} µs with S-ReLU" in PROSE
    assert f"against {calls[('gelu', 'compiled')]:.0f} µs for `nn.GELU`" in PROSE
    for act, label in (("lambda_gelu", "λ-GELU"), ("srelu", "S-ReLU")):
        ratios = [r["time_vs_gelu"] for r in data["throughput"] if r["activation"] == act]
        assert f"{min(ratios):.2f}-{max(ratios):.2f}x ({label})" in PROSE
        dearest = max((r for r in data["throughput"] if r["activation"] == act), key=lambda r: r["time_vs_gelu"])
        assert dearest["model"].startswith("ResNet"), "the page says: most in the ResNets"

    def compiled(rows: list[dict], act: str, model: str) -> float:
        return next(r["time_vs_gelu"] for r in rows if r["activation"] == act and r["model"].startswith(model))

    broken = data["compiled_model_graph_breaks"]
    first = [compiled(broken["run_1"], a, "ResNet") for a in ("lambda_gelu", "srelu")]
    assert f"(λ-GELU {first[0]:.1f}x and S-ReLU {first[1]:.1f}x compiled GELU's ResNet-18 step)" in PROSE
    runs = ((broken["run_2"], "before the fix, still gave"), (data["throughput_compiled_model"], "after it,"))
    for rows, before in runs:
        resnet, gpt = ([compiled(rows, a, m) for a in ("lambda_gelu", "srelu")] for m in ("ResNet", "GPT"))
        said = f"{before} {resnet[0]:.2f}x and {resnet[1]:.2f}x ({gpt[0]:.2f}x and {gpt[1]:.2f}x on GPT-2 small"
        assert said in PROSE
    flexact = [r["time_vs_gelu"] for r in data["throughput"] if r["activation"].startswith("flexact")]
    assert f"Flex-Act at the penultimate layer costs {min(flexact):.2f}-{max(flexact):.2f}x" in PROSE


def test_the_host_overhead_is_that_of_the_call_overhead_benchmark():
    """The page says the calls are bound by the host: the time before the final synchronisation is
    (nearly) all of it for λ-GELU and S-ReLU, and a compiled kernel costs 90-150 µs of host time."""
    text = (ROOT / "benchmarks" / "gpu_call_overhead_measured.txt").read_text(encoding="utf-8")
    for act in ("lambda_gelu", "srelu"):
        host, total = map(
            float, re.search(rf"bfloat16\s+{act}\s+compiled fwd\+bwd host\s+(\d+) total\s+(\d+)", text).groups()
        )
        assert host >= 0.95 * total
    kernel_hosts = [
        float(h) for h in re.findall(r"kernel (?:FORWARD|GATED_GRAD_X_LAM|GATED_GRAD_X)\s+\S+\s+host\s+(\d+)", text)
    ]
    assert len(kernel_hosts) == 6 and all(90 <= h <= 155 for h in kernel_hosts), kernel_hosts
    assert "90-150 µs of host time" in PROSE


def _compiled_model_steps(name: str) -> dict[tuple[str, bool], float]:
    text = (ROOT / "benchmarks" / name).read_text(encoding="utf-8")
    assert "breaks 0" in text and "breaks 1" not in text  # "one graph, no break"
    return {
        (act, compiled == "True"): float(ms)
        for act, compiled, ms in re.findall(r"^(\w+)\s+compiled_model=(\w+)\s.*?total\s+([\d.]+) ms", text, re.M)
    }


def test_the_compiled_model_figures_are_those_of_the_benchmark():
    h200 = _compiled_model_steps("gpu_compiled_model_measured.txt")
    gelu = h200[("gelu", False)]
    assert f"{gelu:.2f} ms with GELU as it is" in PROSE
    lam = h200[("lambda_gelu", True)]
    assert f"{lam:.2f} ms with λ-GELU through `torch.compile(model)` ({lam / gelu:.2f}x)" in PROSE
    assert f"{h200[('srelu', True)]:.2f} ms with S-ReLU ({h200[('srelu', True)] / gelu:.2f}x)" in PROSE
    h100 = _compiled_model_steps("gpu_compiled_model_measured_h100.txt")
    gelu100, lam100, srelu100 = h100[("gelu", False)], h100[("lambda_gelu", True)], h100[("srelu", True)]
    assert (
        f"steps took {gelu100:.2f} ms, {lam100:.2f} ms ({lam100 / gelu100:.2f}x) and {srelu100:.2f} ms "
        f"({srelu100 / gelu100:.2f}x)" in PROSE
    )
    assert f"which they then reach within {max(lam / gelu, lam100 / gelu100):.2f}x" in PROSE
    assert f"({h100[('gelu', True)]:.2f} ms on the H100, {h200[('gelu', True)]:.2f} ms on the H200)" in PROSE
    acts = ("lambda_gelu", "srelu")
    worst = max(steps[(act, True)] / steps[("gelu", True)] for steps in (h100, h200) for act in acts)
    assert f"took at most {worst:.2f}x GELU's own compiled step" in PROSE
    assert all(steps[("gelu", True)] > steps[("gelu", False)] for steps in (h100, h200))  # "GELU compiled is slower"
