"""Finding a dataset's files: explicit ``root`` → ``REPRO_DATA_DIR`` → system paths → download.

Every loader describes what it can read as a :class:`SourceSpec` and calls :func:`locate`; when
nothing works, :class:`DatasetNotFound` names every place tried, why each failed, and how to supply
the data.

Files on disk are checked before first use against every digest known for them (:class:`KnownFile`),
and the check is remembered per file identity (path, size, modification and change times, inode: the
change time moves with every write and cannot be set back), so it costs a ``stat`` after the first
load. A file with no known digest is not checked; ``REPRO_VERIFY_DATA=0`` skips the check for
deliberately different copies; downloads are always verified.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import tarfile
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers.core.result_files import file_identity
from helpers.core.runtime import bool_env, cache_root, dir_env, progress

#: Seconds a download waits on the network before giving up (connect and each read).
DOWNLOAD_TIMEOUT_S = 10.0


class DatasetNotFound(FileNotFoundError):
    """No readable copy of a dataset anywhere; the message lists every place tried."""


class DataError(ValueError):
    """A dataset file exists but is wrong (checksum, truncation, format, shapes or labels); the
    message names the file and how to fix it."""


#: What every :class:`DataError` suggests.
FIX_HINT = (
    "Fix: replace the file with a good copy (delete it to have it downloaded again where "
    "the network allows; the data folder's layout is in book/rerun.md)"
)


def data_error(path: os.PathLike[str] | str, problem: str) -> DataError:
    """A :class:`DataError` for ``path`` with the standard advice."""
    return DataError(f"{path}: {problem}. {FIX_HINT}.")


@contextmanager
def reading(path: os.PathLike[str] | str, what: str = "dataset file") -> Iterator[None]:
    """Turn the errors of a truncated or corrupt file (gzip, tar, zip, decoding) into a
    :class:`DataError` that names the path; gzip's own ``EOFError`` names none."""
    try:
        yield
    except (DataError, FileNotFoundError):
        raise
    except (OSError, EOFError, zlib.error, tarfile.TarError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise data_error(path, f"unreadable {what}, truncated or corrupt ({type(exc).__name__}: {exc})") from exc


@dataclass(frozen=True)
class KnownFile:
    """Digests a dataset file of this name may have: ``sha256`` of its bytes (official download,
    known mirrors and packages); for a ``.gz``, ``content_sha256`` of its decompressed bytes, which
    every faithful re-compression keeps; ``md5`` only where no sha256 of the official file is known."""

    filename: str
    sha256: tuple[str, ...] = ()
    content_sha256: str = ""
    md5: str = ""


@dataclass(frozen=True)
class Remote:
    """One official file: its ``urls`` (canonical source first, then mirrors of the same bytes) and
    the digest it must have (``md5`` only where no sha256 of the official file is published)."""

    filename: str
    urls: tuple[str, ...]
    sha256: str = ""
    md5: str = ""

    def __post_init__(self) -> None:
        if not (self.sha256 or self.md5):
            raise ValueError(f"{self.filename}: a download needs a sha256 (or md5) to verify")

    def digest(self) -> tuple[str, str]:
        """``(algorithm, expected hex digest)``."""
        return ("sha256", self.sha256) if self.sha256 else ("md5", self.md5)


@dataclass(frozen=True)
class Layout:
    """A recognised on-disk format: all of ``files`` must exist, relative to one folder."""

    format: str
    files: tuple[str, ...]

    def describe(self) -> str:
        return " + ".join(self.files)


@dataclass(frozen=True)
class SourceSpec:
    """What a loader can read and where: ``folders`` are the sub-folders looked in under a data
    folder (``root`` or ``REPRO_DATA_DIR``, itself searched too); ``download_layout`` is the layout
    the ``remotes`` form once downloaded into the cache."""

    key: str
    title: str
    folders: tuple[str, ...]
    layouts: tuple[Layout, ...]
    remotes: tuple[Remote, ...] = ()
    download_layout: str | None = None
    system_dirs: tuple[Path, ...] = ()
    hint: str = ""
    known: tuple[KnownFile, ...] = ()

    def known_file(self, filename: str) -> KnownFile | None:
        """Every digest known for ``filename`` (from :attr:`known` and the remotes), or None."""
        remotes = (
            KnownFile(r.filename, (r.sha256,)) if r.sha256 else KnownFile(r.filename, md5=r.md5) for r in self.remotes
        )
        mine = [k for k in (*self.known, *remotes) if k.filename == filename]
        sha = tuple(dict.fromkeys(d for k in mine for d in k.sha256))
        content = next((k.content_sha256 for k in mine if k.content_sha256), "")
        md5 = next((k.md5 for k in mine if k.md5), "")
        return KnownFile(filename, sha, content, md5) if sha or content or md5 else None


@dataclass(frozen=True)
class Found:
    """Where a dataset was found: its format, the folder, the layout's files in it, and ``via`` which
    step of the search (``root``, ``REPRO_DATA_DIR``, ``system path``, ``download cache``, ``download``)."""

    format: str
    directory: Path
    paths: tuple[Path, ...]
    via: str = ""

    def describe(self) -> str:
        """Machine-independent: file names and search step, no absolute path."""
        return f"{', '.join(p.name for p in self.paths)} via {self.via}"


def offline() -> bool:
    """Downloads are disabled with ``REPRO_OFFLINE=1`` (CI sets it); see :func:`bool_env`."""
    return bool_env("REPRO_OFFLINE", False)


def verification_enabled() -> bool:
    """Local files are checked against known checksums unless ``REPRO_VERIFY_DATA=0``."""
    return bool_env("REPRO_VERIFY_DATA", True)


_KINDS = (  # what each kind of file that is not a regular one is called
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(path: Path) -> str | None:
    """What ``path`` is when not a regular file (``"a symlink to /dev/zero, a character device"``),
    or None; ``os.stat`` follows symlinks to what an ``open`` would reach, without opening it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as err:  # a symlink loop, a parent that cannot be searched
        return f"not inspectable ({type(err).__name__}: {err})"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), f"not a regular file (mode {stat.filemode(mode)})")
    # name the target of the file's own symlink (not of a symlinked parent folder): it says what was found
    return f"a symlink to {os.path.realpath(path)}, {kind}" if os.path.islink(path) else kind


def require_regular_file(path: Path, *, folder_ok: bool = False) -> None:
    """Raise :class:`DataError` unless ``path`` is a regular file (or, with ``folder_ok``, a folder),
    without opening it: reading a FIFO or ``/dev/zero`` would hang for ever."""
    kind = _not_regular(path)
    if kind is None or (folder_ok and Path(path).is_dir()):
        return
    raise data_error(path, f"is {kind}, not a regular file, so it was not opened")


def file_digest(path: Path, algorithm: str = "sha256", gunzip: bool = False) -> str:
    """The hex digest of ``path`` (of its decompressed bytes with ``gunzip``); errors name it."""
    require_regular_file(path)
    digest = hashlib.new(algorithm)
    with reading(path), gzip.open(path, "rb") if gunzip else open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified_marker(path: Path, known: KnownFile) -> Path | None:
    """Where the check of this exact file (its :func:`file_identity`, the digests) is remembered."""
    identity = file_identity(path)
    if identity is None:
        return None
    key = "|".join([*map(str, identity), *known.sha256, known.content_sha256, known.md5])
    return cache_root() / "verified" / hashlib.sha256(key.encode()).hexdigest()[:32]


def verify_file(path: Path, known: KnownFile, title: str) -> None:
    """Raise :class:`DataError` unless ``path`` is a regular file with one of ``known``'s digests
    (cached); a folder, FIFO, device or socket is refused unopened (:func:`require_regular_file`)."""
    require_regular_file(path)
    marker = _verified_marker(path, known)
    if marker is not None and marker.exists():
        return
    got = file_digest(path, "sha256")
    ok = got in known.sha256
    if not ok and known.md5:
        ok = file_digest(path, "md5") == known.md5
    if not ok and known.content_sha256 and path.suffix == ".gz":
        ok = file_digest(path, "sha256", gunzip=True) == known.content_sha256
    if not ok:
        expected = ", ".join(known.sha256) or "-"
        extra = f"; or decompressed content sha256 {known.content_sha256}" if known.content_sha256 else ""
        raise DataError(
            f"{path}: sha256 {got} matches no known copy of {title}'s {known.filename} (known sha256: "
            f"{expected}{extra}{'; md5 ' + known.md5 if known.md5 else ''}). The file is corrupt, "
            f"truncated or another dataset. {FIX_HINT}; or, for a deliberately different copy (a "
            "subset, your own re-encoding), set REPRO_VERIFY_DATA=0 to skip the checksum check."
        )
    if marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(got + "\n")
        except OSError:
            pass  # a read-only cache only means the check runs again next time


def verify_found(spec: SourceSpec, found: Found) -> None:
    """Check that no path of ``found`` is a FIFO, device or socket (even with ``REPRO_VERIFY_DATA=0``:
    a loader would hang on one), then every file with known digests. Folders pass the first check
    (ImageNet's layout names ``train`` and ``val``)."""
    for path in found.paths:
        require_regular_file(path, folder_ok=True)
    if not verification_enabled():
        return
    for path in found.paths:
        known = spec.known_file(path.name)
        if known is not None:
            verify_file(path, known, spec.title)


def download_dir(key: str) -> Path:
    """Where official files of dataset ``key`` are downloaded to."""
    return cache_root() / "downloads" / key


def _match(spec: SourceSpec, directory: Path, via: str) -> Found | None:
    for layout in spec.layouts:
        paths = tuple(directory / rel for rel in layout.files)
        if all(p.exists() for p in paths):
            return Found(layout.format, directory, paths, via)
    return None


def _looked_for(spec: SourceSpec) -> str:
    return " or ".join(layout.describe() for layout in spec.layouts)


def _search(spec: SourceSpec, base: Path, label: str, tried: list[str]) -> Found | None:
    """The first of ``base``'s sub-folders named in ``spec.folders``, then ``base``, that holds a layout."""
    dirs = [base / sub for sub in spec.folders] + [base]
    found = next((f for f in (_match(spec, d, label.rstrip("=")) for d in dirs) if f is not None), None)
    if found is None:
        tried.append(f"{label}: {', '.join(str(d) for d in dirs)} (none holds {_looked_for(spec)})")
    return found


def fetch(remote: Remote, dest_dir: Path, timeout: float = DOWNLOAD_TIMEOUT_S) -> Path:
    """Download ``remote`` into ``dest_dir`` (first URL that works) under a temporary name, renamed
    only once its digest matches; an ``OSError`` names each URL and why it failed."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / remote.filename
    errors = []
    for url in remote.urls:
        tmp = dest_dir / f".{remote.filename}.{os.getpid()}.part"
        try:
            algorithm, expected = remote.digest()
            digest = hashlib.new(algorithm)
            with urllib.request.urlopen(url, timeout=timeout) as response, open(tmp, "wb") as out:
                blocks = iter(lambda: response.read(1 << 20), b"")
                for block in progress(blocks, desc=f"download {remote.filename}", unit="MiB"):
                    digest.update(block)
                    out.write(block)
            if digest.hexdigest() != expected:
                raise OSError(f"{algorithm} mismatch: expected {expected}, got {digest.hexdigest()}")
            os.replace(tmp, dest)
            return dest
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none is fatal yet
            errors.append(f"{url}: {type(exc).__name__}: {exc}")
        finally:
            tmp.unlink(missing_ok=True)
    raise OSError("; ".join(errors))


def _how_to(spec: SourceSpec) -> str:
    layouts = "; ".join(f"{layout.describe()} ({layout.format})" for layout in spec.layouts)
    lines = [
        "How to supply it:",
        f"  * set REPRO_DATA_DIR to a folder holding {spec.folders[0]}/ with {layouts}",
        f"  * or pass root=<folder> to the loader (it or its {spec.folders[0]}/ sub-folder)",
    ]
    if spec.hint:
        lines.append(f"  * or {spec.hint}")
    if spec.remotes:
        lines.append(f"  * or allow the download (network access, REPRO_OFFLINE unset) into {download_dir(spec.key)}")
    return "\n".join(lines)


def locate(
    spec: SourceSpec, root: str | os.PathLike[str] | None = None, *, download: bool = True, verify: bool = True
) -> Found:
    """Find ``spec``'s files (:func:`_locate`) and, with ``verify`` (every loader), check them before
    first use (:func:`verify_found`); ``verify=False`` only asks whether the files are there."""
    found = _locate(spec, root, download=download)
    if verify:
        verify_found(spec, found)
    return found


def _locate(spec: SourceSpec, root: str | os.PathLike[str] | None = None, *, download: bool = True) -> Found:
    """Find ``spec``'s files, in the module's order, or raise :class:`DatasetNotFound`. An explicit
    ``root`` is the only place searched: reading another copy would hide a mistake."""
    tried: list[str] = []
    if root is not None:
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"root must be a path (str or os.PathLike), got {type(root).__name__}")
        found = _search(spec, Path(root).expanduser(), "root=", tried)
        if found is not None:
            return found
        raise _not_found(spec, tried)

    env = dir_env("REPRO_DATA_DIR") if os.environ.get("REPRO_DATA_DIR") else None
    if env is None:
        tried.append("REPRO_DATA_DIR: not set")
    elif not env.is_dir():
        tried.append(f"REPRO_DATA_DIR: {env} (no such folder)")
    elif found := _search(spec, env, "REPRO_DATA_DIR", tried):
        return found

    for system_dir in spec.system_dirs:
        if found := _match(spec, system_dir, "system path"):
            return found
        tried.append(f"system path {system_dir} (no {_looked_for(spec)})")

    if spec.remotes:
        cache = download_dir(spec.key)
        layout = next(lay for lay in spec.layouts if lay.format == spec.download_layout)
        paths = tuple(cache / rel for rel in layout.files)
        if all(p.exists() for p in paths):
            return Found(layout.format, cache, paths, "download cache")
        tried.append(f"download cache {cache} (no {layout.describe()})")
        if offline() or not download:
            why = "REPRO_OFFLINE=1" if offline() else "download=False"
            tried.extend(f"download {', '.join(remote.urls)}: skipped, {why}" for remote in spec.remotes)
        else:
            for remote in spec.remotes:
                if (cache / remote.filename).exists():
                    continue  # verified by an earlier, partly failed attempt
                try:
                    fetch(remote, cache)
                except OSError as exc:
                    tried.append(f"download {remote.filename}: {exc}")
                    break
            else:
                return Found(layout.format, cache, paths, "download")
    raise _not_found(spec, tried)


def _not_found(spec: SourceSpec, tried: list[str]) -> DatasetNotFound:
    places = "\n".join(f"  {i}. {line}" for i, line in enumerate(tried, 1))
    return DatasetNotFound(f"dataset {spec.title!r} not found. Places tried, in order:\n{places}\n{_how_to(spec)}")
