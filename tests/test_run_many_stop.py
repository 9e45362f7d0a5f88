"""Killing run_many's process (SIGTERM) stops its worker processes too, instead of leaving them to
finish their runs unseen beside the next command's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import dataclasses, os, sys, time
    from pathlib import Path
    from helpers import methods
    from helpers.core.results_cache import run_many

    MARKS = Path(os.environ["MARKS"])

    @dataclasses.dataclass(frozen=True)
    class SleepConfig:
        experiment: str = "sleep"
        profile: str = "cpu"
        seed: int = 0

    def run(cfg, workdir):
        (MARKS / f"{os.getpid()}").write_text("started")
        time.sleep(120)
        return {"train_seconds": 0.0}

    # module level: a spawned worker runs this module again (as __mp_main__) to unpickle a SleepConfig
    methods.RUNNERS[SleepConfig] = run

    if __name__ == "__main__":
        run_many([SleepConfig(seed=s) for s in range(4)], workers=2)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.slow
def test_sigterm_stops_the_workers(tmp_path):
    script = tmp_path / "sleeper.py"
    script.write_text(SCRIPT)
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {
        **os.environ,
        "MARKS": str(marks),
        "REPRO_RESULTS_DIR": str(tmp_path / "results"),
        "REPRO_QUIET": "1",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    env.pop("CI", None)  # CI refuses to train missing cpu-profile results
    parent = subprocess.Popen([sys.executable, str(script)], env=env)
    try:
        deadline = time.monotonic() + 120
        while len(list(marks.iterdir())) < 2:
            assert parent.poll() is None, "run_many exited before its workers started"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.2)
        workers = [int(p.name) for p in marks.iterdir()]
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) != 0
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers), "worker processes outlived the killed parent"
        assert len(list(marks.iterdir())) == 2  # the queued runs were cancelled, not started
    finally:
        if parent.poll() is None:
            parent.kill()
        for mark in marks.iterdir():  # never leave a sleeping worker behind a failed test
            try:
                os.kill(int(mark.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
