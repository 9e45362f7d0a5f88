"""tools.preflight: repro.sh stops at once, with one message, when datasets are missing."""

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers.core import data
from helpers.core.runtime import repo_root
from tools import preflight


@pytest.fixture
def nothing_on_disk(tmp_path, monkeypatch):
    """An empty REPRO_DATA_DIR and download cache, downloads off, no Debian Fashion-MNIST."""
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("REPRO_DATA_DIR", str(empty))
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REPRO_OFFLINE", "1")
    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")  # the tests' stand-in files are not the real ones
    spec = data.SPECS["fashion_mnist"]
    monkeypatch.setitem(data.SPECS, "fashion_mnist", dataclasses.replace(spec, system_dirs=()))
    return empty


def test_every_missing_dataset_is_named_in_one_message(nothing_on_disk, capsys):
    assert preflight.check() == 1
    err = capsys.readouterr().err
    assert err.count("missing, so nothing was run") == 1
    for key in preflight.NEEDED:
        assert f"* {key} (" in err
    assert f"REPRO_DATA_DIR={nothing_on_disk}" in err
    assert "adult/adult.csv.gz" in err and "tinyshakespeare/input.txt" in err
    assert "apt-get install dataset-fashion-mnist" in err
    assert "REPRO_OFFLINE=1" in err


def test_only_the_missing_ones_are_listed(nothing_on_disk, capsys):
    (nothing_on_disk / "tinyshakespeare").mkdir()
    (nothing_on_disk / "tinyshakespeare" / "input.txt").write_text("to be or not to be\n")
    assert preflight.check() == 1
    err = capsys.readouterr().err
    assert "* tinyshakespeare" not in err
    assert "* adult (" in err
    assert "apt-get install dataset-fashion-mnist" in err
    assert preflight.check(["tinyshakespeare"]) == 0


def test_the_mirror_passes(monkeypatch, capsys):
    mirror = os.environ.get("REPRO_DATA_DIR") or str(repo_root().parent / "shared" / "data")
    if not Path(mirror).is_dir():
        pytest.skip("no offline mirror: set REPRO_DATA_DIR (CI and repro.sh do)")
    monkeypatch.setenv("REPRO_DATA_DIR", mirror)
    monkeypatch.setenv("REPRO_OFFLINE", "1")
    assert preflight.check() == 0, capsys.readouterr().err


def test_command_line_exits_nonzero_with_an_empty_data_dir(tmp_path, monkeypatch, capsys):
    """The entry point repro.sh runs (``python -m tools.preflight``: its ``__main__`` wiring is
    tested with every CLI's in test_cli_and_env) stops with status 1, naming every dataset, before
    any test or notebook starts; nothing is read, so it returns at once."""
    for name, value in {
        "REPRO_DATA_DIR": str(tmp_path),
        "REPRO_CACHE_DIR": str(tmp_path / "cache"),
        "REPRO_OFFLINE": "1",
    }.items():
        monkeypatch.setenv(name, value)
    assert preflight.main([]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    for key in preflight.NEEDED:
        # Fashion-MNIST may still come from the Debian package path of this machine
        debian = key == "fashion_mnist" and Path(preflight.APT_DIR).is_dir()
        assert (f"* {key} (" in err) != debian, err


def test_a_bad_data_dir_is_one_message(tmp_path, monkeypatch, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("")
    monkeypatch.setenv("REPRO_DATA_DIR", str(a_file))
    assert preflight.check() == 1
    assert "REPRO_DATA_DIR" in capsys.readouterr().err


def test_downloadable_datasets_do_not_stop_the_command(nothing_on_disk, monkeypatch, capsys):
    monkeypatch.delenv("REPRO_OFFLINE")
    monkeypatch.setattr(preflight, "_host_reachable", lambda url, timeout: "cs.toronto.edu" not in url)
    assert preflight.check() == 1
    err = capsys.readouterr().err
    assert "will download them on first use" in err
    assert "* cifar10 (" in err and "* adult (" not in err
    assert "did not answer" in err


def test_apt_install_as_root_when_only_fashion_mnist_is_missing(nothing_on_disk, monkeypatch, capsys):
    monkeypatch.setattr(preflight, "NEEDED", {"adult": "", "fashion_mnist": ""})
    monkeypatch.setattr(preflight, "malformed", lambda names=None: [])  # the stand-in adult file is empty
    (nothing_on_disk / "adult").mkdir()
    (nothing_on_disk / "adult" / "adult.csv.gz").write_bytes(b"")
    monkeypatch.setattr(preflight.os, "geteuid", lambda: 0, raising=False)
    monkeypatch.setattr(preflight.shutil, "which", lambda name: f"/usr/bin/{name}")
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(preflight.subprocess, "run", fake_run)
    assert preflight.check(install=True) == 1  # the fake install put nothing in place
    assert calls == [["apt-get", "install", "-y", "-q", "dataset-fashion-mnist"]]
    assert "* fashion_mnist (" in capsys.readouterr().err
    calls.clear()
    monkeypatch.setattr(preflight, "NEEDED", {"fashion_mnist": "", "tinyshakespeare": ""})
    assert preflight.check(install=True) == 1
    assert calls == []  # never when another dataset is missing too


def _notebook_datasets() -> set[str]:
    names = set()
    for path in sorted((repo_root() / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            for match in re.finditer(r'load_dataset\(\s*"(\w+)"([^)]*)\)', source):
                if "download=False" not in match.group(2):  # a demonstration of the error
                    names.add(match.group(1))
    return names


def test_needed_covers_every_dataset_the_notebooks_and_protocols_read():
    from tools.run import all_experiments

    used = _notebook_datasets() | {"tinyshakespeare"}  # helpers.srelu.dpo_experiment
    for profile in ("smoke", "cpu"):
        for configs in all_experiments().values():
            used |= {cfg.dataset for cfg in configs(profile)}
    assert {data._canonical(name) for name in used} <= set(preflight.NEEDED)
    assert "adult" in used and "cifar10" in used


def test_the_test_split_sizes_the_report_names_are_the_loaders(monkeypatch):
    """``helpers.core.data.TEST_EXAMPLES`` (how many test images an accuracy row's difference is)
    against the loaders, on the offline mirror."""
    mirror = os.environ.get("REPRO_DATA_DIR") or str(repo_root().parent / "shared" / "data")
    if not Path(mirror).is_dir():
        pytest.skip("no offline mirror: set REPRO_DATA_DIR (CI and repro.sh do)")
    monkeypatch.setenv("REPRO_DATA_DIR", mirror)
    for name, size in data.TEST_EXAMPLES.items():
        if data.available(name):
            assert data.load_dataset(name, download=False).n_val == size, name
