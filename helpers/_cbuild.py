"""Compile a small C source into a shared library once, cache it, and load it with ctypes.

Shared by the fused CPU kernels (:mod:`helpers._native_lambda_gelu`, :mod:`helpers._native_flexact`).
The library lands in ``<cache_root>/kernels/<name>_<key>.so`` where ``key`` hashes the source,
the flags, the compiler's version and the CPU flags: ``-march=native`` bakes the CPU into the
binary, so a cache shared between machines never loads a binary built for another CPU. The file
is written to a temporary name and renamed, so concurrent processes never load half a file.

Loading a shared library runs its code in this process, so a library is only loaded from a folder
this user owns and nobody else can write to. When the cache folder is read-only or not trusted,
the kernel is built into a fresh private folder (``tempfile.mkdtemp``: mode 0700, unpredictable
name) and loaded from there; an existing file in a shared, predictable place (say
``/tmp/repro-act-kernels``, where another local user could plant one) is never loaded.

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
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["build_library", "cpu_signature", "KernelLibrary", "NATIVE_FLAGS"]

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
    if target.exists() and not (_trusted(target.parent) and _trusted(target)):
        target = _private_dir() / filename  # never load what someone else could have written
    if not target.exists():
        try:
            _compile(compiler, source, flags, libs, target)
        except OSError:  # read-only cache folder: build in a private folder of this process
            target = _private_dir() / filename
            _compile(compiler, source, flags, libs, target)
    return ctypes.CDLL(str(target))


_PRIVATE_DIR: list[Path] = []


def _private_dir() -> Path:
    """A folder only this user can write to, new for this process (``mkdtemp`` makes it 0700
    under an unpredictable name), for kernels that cannot go into the cache folder."""
    if not _PRIVATE_DIR:
        _PRIVATE_DIR.append(Path(tempfile.mkdtemp(prefix="repro-act-kernels-")))
    return _PRIVATE_DIR[0]


def _trusted(path: Path) -> bool:
    """Owned by this user and not writable by others: safe to load a library from (or in)."""
    try:
        st = path.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o002


class KernelLibrary:
    """A compiled kernel library loaded on first use, or the reason it is not used.

    ``declare`` sets the ctypes signatures, ``self_test`` compares the kernels with a float64
    reference and raises on a mismatch; setting the environment variable ``env_var`` to
    ``eager`` disables the kernels. Any failure (no compiler, failed build, failed self-test)
    is reported once as a ``RuntimeWarning`` naming ``label``, and callers fall back to eager
    PyTorch.
    """

    def __init__(self, name: str, source: str, *, declare: Callable[[ctypes.CDLL], ctypes.CDLL],
                 self_test: Callable[[ctypes.CDLL], None], env_var: str, label: str,
                 libs: Sequence[str] = ("-lmvec", "-lm")) -> None:
        self.name, self.source, self.libs = name, source, tuple(libs)
        self.declare, self.self_test = declare, self_test
        self.env_var, self.label = env_var, label
        self._loaded = False
        self._lib: ctypes.CDLL | None = None
        self._failure: str | None = None

    def get(self) -> ctypes.CDLL | None:
        """The library (built and self-tested on the first call), or ``None``."""
        if self._loaded:
            return self._lib
        self._loaded = True
        if os.environ.get(self.env_var, "").strip().lower() == "eager":
            self._failure = f"disabled by {self.env_var}=eager"
            return None
        try:
            lib = self.declare(build_library(self.name, self.source, libs=self.libs))
            self.self_test(lib)
        except Exception as err:  # any failure means: use the eager path, and say why once
            self._failure = f"{type(err).__name__}: {err}"
            warnings.warn(f"{self.label} fast CPU kernel unavailable, using eager PyTorch ({self._failure})",
                          RuntimeWarning, stacklevel=3)
            return None
        self._lib = lib
        return lib

    def require(self) -> ctypes.CDLL:
        """The library, or a ``RuntimeError`` saying why it is unavailable."""
        lib = self.get()
        if lib is None:
            raise RuntimeError(f"native {self.label} kernel unavailable: {self._failure}")
        return lib

    def available(self) -> bool:
        """True when the compiled kernel loaded and passed its self-test (compiles on first call)."""
        return self.get() is not None

    def unavailable_reason(self) -> str | None:
        """Why the kernel is not used, or ``None`` when it is."""
        self.get()
        return self._failure
