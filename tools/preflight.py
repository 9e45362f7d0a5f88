"""Check, before a long command starts, that every dataset it needs can be read.

``bash repro.sh test``, ``book`` and ``lab`` run ``python -m tools.preflight`` first. Without it, a
machine that lacked a dataset spent minutes in pytest and nbval and ended with dozens of failures
(``DatasetNotFound`` in one cell, then a cascade of ``NameError``s). Now the command stops at once
with one message that names every missing dataset and how to supply it.

A dataset counts as present when :func:`helpers.core.data.available` finds its files (explicit
``REPRO_DATA_DIR``, the Debian package path, the download cache), and as readable when every one
of those files also matches a known checksum (:func:`helpers.core.data.sources.verify_file`: the
sha256 of the official, mirror or package copy). A truncated, random, relabelled or otherwise
edited file, or a folder where a file belongs, stops the command with the file named (with
``REPRO_VERIFY_DATA=0`` each copy is instead decoded by its loader: a missing key, a wrong shape
or dtype, or a label out of range stops it, :func:`malformed`). The check
is remembered per file (keyed on path, size, modification and change times and inode, with the
digest stored), so it hashes each file once: about a second for all four datasets, then a
``stat`` per file. With ``REPRO_VERIFY_DATA=0`` (deliberately different copies) files are only
looked for, and preflight says so. A missing dataset the loaders could still download does not
stop the command, unless downloads are off (``REPRO_OFFLINE=1``, as in CI) or its host cannot be
reached.

As root, with ``apt-get`` on the PATH and Fashion-MNIST the only missing dataset, ``--install``
(or answering yes at the prompt, when stdin is a terminal) runs
``apt-get install -y dataset-fashion-mnist`` and checks again.

Exit status: 0 when everything needed is there and intact (or downloadable), 1 otherwise, 2 for
bad arguments (an unknown dataset name or flag).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

from helpers.core.data import SPECS, DatasetNotFound, _canonical, available, load_dataset
from helpers.core.data.imagenet import verify_imagenet
from helpers.core.data.sources import DataError, locate, offline, verification_enabled
from tools.cli import ArgumentParser

#: Datasets the notebooks and tests read in the smoke and cpu profiles, with who reads them.
#: (The paper profile's CIFAR-100, TinyImageNet and WikiText-2 have offline stand-ins, see
#: :data:`helpers.core.data.OFFLINE_STAND_INS`; tests/test_preflight.py keeps this list complete.)
NEEDED: dict[str, str] = {
    "adult": "00_datasets, λ-GELU Adult/MLP runs (10-12)",
    "fashion_mnist": "00_datasets, λ-GELU FMNIST/MLP runs (11-12), ReLU-ization MLP (40)",
    "cifar10": "00_datasets, λ-GELU ResNet/DeiT runs, S-ReLU (20-21), Flex-Act CIFAR (31), ReLU-ization (41)",
    "tinyshakespeare": "00_datasets, λ-GELU GPT runs, S-ReLU DPO (22), ReLU-ization GPT (41)",
}

#: Datasets the paper profile's runs read beyond :data:`NEEDED`: the papers' own data, which the
#: cpu profile replaces by stand-ins. At this profile nothing is downloaded on first use: a
#: missing dataset stops the command, saying where to put it.
PAPER_NEEDED: dict[str, str] = {
    **NEEDED,
    "cifar100": "λ-GELU Table I/II and c sweep (ResNet-18), paper profile",
    "tinyimagenet": "λ-GELU Table I/II (ViT), paper profile",
    "wikitext2": "λ-GELU Table I/II (GPT), paper profile",
}
#: ImageNet-1K has a loader (:mod:`helpers.core.data.imagenet`) but no run of any protocol reads it
#: yet, so it is checked when named (``python -m tools.preflight --profile paper imagenet``).


def needed(profile: str = "cpu") -> dict[str, str]:
    """The datasets a profile reads, with who reads them (``paper``: :data:`PAPER_NEEDED`)."""
    return PAPER_NEEDED if profile == "paper" else NEEDED


#: The Debian package that provides Fashion-MNIST, and where it puts the files.
APT_PACKAGE = "dataset-fashion-mnist"
APT_DIR = "/usr/share/datasets/fashion-mnist"

#: Seconds to wait for a dataset host before counting it unreachable.
PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Missing:
    """A needed dataset that is not on disk: its key, title, readers and expected files."""

    key: str
    title: str
    used_by: str
    expected: str  # relative to REPRO_DATA_DIR, e.g. "adult/adult.csv.gz"


def _expected_files(key: str) -> str:
    spec = SPECS[key]
    folder = spec.folders[0]
    shown = []
    for layout in spec.layouts[:3]:
        files = layout.files if len(layout.files) <= 2 else (f"{{{layout.files[0]}, ...}}",)
        shown.append(" + ".join(f"{folder}/{name}" for name in files))
    return " or ".join(shown)


def missing(names: Sequence[str] | None = None) -> list[Missing]:
    """The datasets of ``names`` (default: :data:`NEEDED`) that no local place holds.

    A bad ``REPRO_DATA_DIR`` (a file, an empty value) raises the ``ValueError`` naming it.
    """

    out = []
    for name in names if names is not None else NEEDED:
        key = _canonical(name)
        if not available(key):
            used_by = NEEDED.get(key) or PAPER_NEEDED.get(key, "requested")
            out.append(Missing(key, SPECS[key].title, used_by, _expected_files(key)))
    return out


def damaged(names: Sequence[str] | None = None) -> list[str]:
    """One line per file of a present dataset of ``names`` (default: :data:`NEEDED`) that fails
    its checksum or cannot be read, naming the file and what is wrong; ``[]`` when all are intact.

    Every file the loaders would read is hashed and compared with the digests known for its name
    (cached per file, see the module docstring); nothing is checked with ``REPRO_VERIFY_DATA=0``.
    """
    out = []
    for name in names if names is not None else NEEDED:
        key = _canonical(name)
        if not available(key):
            continue  # reported by missing()
        try:
            found = locate(SPECS[key], download=False, verify=True)
            if key == "imagenet":  # a folder of 1.33M files: counts and sampled digests, not per-file sums
                verify_imagenet(found.directory)
        except DataError as err:
            out.append(f"{key}: {err}")
    return out


def malformed(names: Sequence[str] | None = None) -> list[str]:
    """One line per present dataset of ``names`` (default: :data:`NEEDED`) that its loader cannot
    read, naming the file and what is wrong; ``[]`` when all decode.

    Only copies taken on trust are decoded here (``REPRO_VERIFY_DATA=0``): a file that matches a
    known digest is the official one, whose structure the loader's tests cover. A trusted copy is
    read whole by its loader, which checks keys, shapes, dtypes and the label range, so a batch
    without its labels, rows of the wrong width or a label out of range stops the command now,
    not an hour into a run.
    """
    if verification_enabled():
        return []
    out = []
    for name in names if names is not None else NEEDED:
        key = _canonical(name)
        if key == "imagenet" or not available(key):
            continue  # ImageNet is a folder of 1.33M files; a missing dataset is reported by missing()
        try:
            load_dataset(key, download=False)
        except (DataError, DatasetNotFound, ValueError, KeyError, OSError, EOFError) as err:
            out.append(f"{key}: {err}")
    return out


def _host_reachable(url: str, timeout: float) -> bool:
    parts = urlsplit(url)
    if not parts.hostname:
        return False
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def downloadable(items: Sequence[Missing], timeout: float = PROBE_TIMEOUT_S) -> dict[str, bool]:
    """For each missing dataset, whether the loaders may download it: downloads are on
    (``REPRO_OFFLINE`` unset) and the host of its first official file answers (probed in
    parallel, ``timeout`` seconds at most)."""

    if offline():
        return {m.key: False for m in items}
    urls = {m.key: SPECS[m.key].remotes[0].urls[0] for m in items if SPECS[m.key].remotes}
    result = {m.key: False for m in items}
    if urls:
        with ThreadPoolExecutor(max_workers=len(urls)) as pool:
            answers = pool.map(lambda url: _host_reachable(url, timeout), urls.values())
            result.update(dict(zip(urls, answers)))
    return result


def message(items: Sequence[Missing], *, offline_reason: str) -> str:
    """One message naming every missing dataset and every way to supply it."""
    data_dir = os.environ.get("REPRO_DATA_DIR") or "(not set)"
    lines = [
        f"{len(items)} dataset{'s' if len(items) != 1 else ''} needed by the notebooks and tests "
        f"{'are' if len(items) != 1 else 'is'} missing, so nothing was run:",
    ]
    for m in items:
        lines += [
            f"  * {m.key} ({m.title}), used by {m.used_by}",
            f"      files looked for under REPRO_DATA_DIR: {m.expected}",
        ]
    lines += [
        f"Looked in REPRO_DATA_DIR={data_dir}, {APT_DIR}, the download cache; {offline_reason}.",
        "How to supply them:",
        "  * point REPRO_DATA_DIR at a folder laid out as the project's offline mirror (shared/data,"
        " see its README.md):",
        "    adult/adult.csv.gz, cifar10/cifar10-jpeg.tar.gz, fashion-mnist/*-ubyte.gz, tinyshakespeare/input.txt;",
        "    repro.sh uses ../shared/data beside the checkout automatically when it exists",
    ]
    if any(m.key == "fashion_mnist" for m in items):
        lines.append(
            f"  * Fashion-MNIST also comes from Debian: sudo apt-get install {APT_PACKAGE} (puts it in {APT_DIR})"
        )
    lines.append(
        "  * or, on a machine that reaches the official hosts, unset REPRO_OFFLINE: the"
        " loaders download and verify each dataset on first use"
    )
    return "\n".join(lines)


def _can_apt_install(items: Sequence[Missing]) -> bool:
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return is_root and shutil.which("apt-get") is not None and [m.key for m in items] == ["fashion_mnist"]


def _apt_install() -> bool:
    print(f"preflight: apt-get install -y {APT_PACKAGE}", file=sys.stderr, flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run(["apt-get", "install", "-y", "-q", APT_PACKAGE], env=env, check=False)
    return done.returncode == 0


def check(
    names: Sequence[str] | None = None, *, install: bool = False, timeout: float = PROBE_TIMEOUT_S, profile: str = "cpu"
) -> int:
    """Print one message for every missing dataset and return the exit status (0 = go on).

    ``profile="paper"`` checks :data:`PAPER_NEEDED` by default, and a missing dataset stops the
    command even where the loaders could download it: paper-scale runs start from data a person
    put in place, never from a silent download."""
    if names is None and profile == "paper":
        names = list(PAPER_NEEDED)
    try:
        absent = missing(names)
    except ValueError as err:  # a bad REPRO_DATA_DIR, an unknown dataset name
        print(f"preflight: {err}", file=sys.stderr)
        return 1
    broken = damaged(names)
    if broken:
        print(
            f"preflight: {len(broken)} dataset file{'s' if len(broken) != 1 else ''} present but not "
            "intact, so nothing was run:\n  * " + "\n  * ".join(broken),
            file=sys.stderr,
        )
        return 1
    if not verification_enabled():
        unreadable = malformed(names)
        if unreadable:
            print(
                f"preflight: {len(unreadable)} dataset{'s' if len(unreadable) != 1 else ''} present but not "
                "readable, so nothing was run:\n  * " + "\n  * ".join(unreadable),
                file=sys.stderr,
            )
            return 1
        print(
            "preflight: REPRO_VERIFY_DATA=0: dataset files were looked for and decoded by their loaders, "
            "not checked against their checksums",
            file=sys.stderr,
        )
    if absent and _can_apt_install(absent):
        ask = not install and sys.stdin is not None and sys.stdin.isatty()
        if ask:
            try:
                answer = input(f"Fashion-MNIST is missing. Install the Debian package {APT_PACKAGE} now? [y/N] ")
            except EOFError:
                answer = ""
            install = answer.strip().lower() in ("y", "yes")
        if install and _apt_install():
            absent = missing(names)
    if not absent:
        return 0
    if profile == "paper":
        print(
            message(
                absent,
                offline_reason="at the paper profile nothing is downloaded on first use, "
                "so put each dataset in place first (ImageNet-1K cannot be downloaded at all: "
                "its layout is in helpers/core/data/imagenet.py)",
            ),
            file=sys.stderr,
        )
        return 1
    can_download = downloadable(absent, timeout)

    later = [m.key for m in absent if can_download[m.key]]
    if later:
        print(
            f"preflight: {', '.join(later)} not on disk; the loaders will download "
            f"{'them' if len(later) > 1 else 'it'} on first use",
            file=sys.stderr,
        )
    absent = [m for m in absent if not can_download[m.key]]
    if not absent:
        return 0
    if offline():
        reason = "downloads are off (REPRO_OFFLINE=1)"
    else:
        reason = f"the official download hosts did not answer within {timeout:g} s"
    print(message(absent, offline_reason=reason), file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; returns the exit status (argparse exits with 2 for bad arguments)."""
    parser = ArgumentParser(
        prog="python -m tools.preflight",
        description="Check that the datasets the notebooks and tests need are present and intact "
        "(every file against its known checksum).",
    )
    parser.add_argument("datasets", nargs="*", help=f"dataset names (default: {', '.join(NEEDED)})")
    parser.add_argument(
        "--install",
        action="store_true",
        help=f"as root, apt-get install {APT_PACKAGE} when Fashion-MNIST is all that is missing",
    )
    parser.add_argument(
        "--profile",
        default="cpu",
        choices=("smoke", "cpu", "paper"),
        help="the profile whose datasets to check (paper: its own data too, and no downloads)",
    )
    args = parser.parse_args(argv)
    for name in args.datasets:
        try:
            _canonical(name)
        except ValueError as err:
            parser.error(str(err))
    return check(args.datasets or None, install=args.install, profile=args.profile)


if __name__ == "__main__":
    raise SystemExit(main())
