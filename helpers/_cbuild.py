"""Compile a small C source into a shared library once, cache it, and load it with ctypes.

Shared by the fused CPU kernels (:mod:`helpers._native_lambda_gelu`, :mod:`helpers._native_flexact`).
The library lands in ``<cache_root>/kernels/<name>_<key>.so`` where ``key`` hashes the source,
the flags, the compiler's version and the CPU flags: ``-march=native`` bakes the CPU into the
binary, so a cache shared between machines never loads a binary built for another CPU. The file
is written to a temporary name and renamed, so concurrent processes never load half a file; a
read-only cache folder falls back to the system temp folder.

Numerics: any change to a kernel's source or flags changes float32 rounding, and so every result
trained with it; the kernels' modules say which results depend on them.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_library", "cpu_signature", "NATIVE_FLAGS"]

#: Flags of the vectorised OpenMP kernels. ``-fno-math-errno`` lets gcc call glibc's ``libmvec``
#: SIMD functions (errno is never read); NaN/Inf semantics are kept (no ``-ffast-math``).
NATIVE_FLAGS: tuple[str, ...] = (
    "-O3",
    "-march=native",
    "-mprefer-vector-width=512",
    "-fopenmp",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-fPIC",
    "-shared",
)


def cpu_signature() -> str:
    """The CPU flags line of ``/proc/cpuinfo`` (what ``-march=native`` depends on)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _compile(compiler: str, source: str, flags: Sequence[str], libs: Sequence[str], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        src = Path(tmp) / (target.stem + ".c")
        src.write_text(source)
        out = Path(tmp) / target.name
        cmd = [compiler, *flags, str(src), "-o", str(out), *libs]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr.strip()[:2000]}")
        os.replace(out, target)  # atomic: concurrent processes never load half a file


def build_library(name: str, source: str, flags: Sequence[str] = NATIVE_FLAGS,
                  libs: Sequence[str] = ("-lmvec", "-lm")) -> ctypes.CDLL:
    """Compile ``source`` (C) with ``$CC`` (default ``gcc``) unless cached, and load it.

    Raises ``RuntimeError`` when there is no compiler or the build fails; callers turn that
    into a fallback to eager PyTorch with a one-time warning.
    """
    compiler = os.environ.get("CC", "gcc")
    if shutil.which(compiler) is None:
        raise RuntimeError(f"no C compiler {compiler!r} on PATH")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    key = hashlib.sha256(
        "\n".join([source, *flags, *libs, version, cpu_signature(), platform.machine()]).encode()
    ).hexdigest()[:16]
    from helpers.runtime import cache_root

    filename = f"{name}_{key}.so"
    target = cache_root() / "kernels" / filename
    if not target.exists():
        try:
            _compile(compiler, source, flags, libs, target)
        except OSError:  # read-only cache folder: build in the temp folder instead
            target = Path(tempfile.gettempdir()) / "repro-act-kernels" / filename
            if not target.exists():
                _compile(compiler, source, flags, libs, target)
    return ctypes.CDLL(str(target))
