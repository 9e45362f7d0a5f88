#!/usr/bin/env python
"""Check (or rewrite) _toc.yml against the files that exist.

Rule of this book: a toc entry is active only when its file exists. Planned pages whose file is
missing stay in _toc.yml as lines starting with ``#~`` (the two characters replace two spaces of
indentation, so removing them restores the YAML); a part whose chapters are all missing is
commented whole.

    python scripts/check_toc.py          # report problems, exit 1 if any
    python scripts/check_toc.py --write  # re-comment/uncomment entries from what exists now

Problems reported: an active entry without a file, a ``#~`` entry whose file now exists, and a
notebook in notebooks/ that is not in the toc at all (only_build_toc_files would skip it silently).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from tools.cli import ArgumentParser

ROOT = Path(__file__).resolve().parent.parent
TOC = ROOT / "_toc.yml"
MARK = "#~"
SUFFIXES = (".ipynb", ".md")


@dataclass(frozen=True)
class Part:
    caption: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class Toc:
    header: tuple[str, ...]  # leading comment lines, kept verbatim
    root: str
    parts: tuple[Part, ...]


def source_of(docname: str, root: Path = ROOT) -> Path | None:
    """The file behind a docname (``notebooks/01_x`` -> ``notebooks/01_x.ipynb``), or None."""
    for suffix in SUFFIXES:
        path = root / f"{docname}{suffix}"
        if path.is_file():
            return path
    return None


def _uncomment(text: str) -> str:
    return "\n".join("  " + line[len(MARK) :] if line.startswith(MARK) else line for line in text.splitlines())


def _parse(data: dict, header: tuple[str, ...]) -> Toc:
    if data.get("format") != "jb-book":
        raise ValueError(f"_toc.yml must have 'format: jb-book', got {data.get('format')!r}")
    parts = []
    for part in data.get("parts") or []:
        unknown = set(part) - {"caption", "chapters"}
        if unknown:
            raise ValueError(f"unsupported part keys {sorted(unknown)} (this script would drop them)")
        files = []
        for chapter in part.get("chapters") or []:
            if set(chapter) != {"file"}:
                raise ValueError(f"unsupported chapter entry {chapter!r}: only 'file' is supported")
            files.append(str(chapter["file"]))
        parts.append(Part(caption=str(part["caption"]), files=tuple(files)))
    return Toc(header=header, root=str(data["root"]), parts=tuple(parts))


def read_toc(path: Path = TOC, *, planned: bool = False) -> Toc:
    """The toc as written (``planned=False``) or with every ``#~`` entry restored (``planned=True``)."""
    text = path.read_text(encoding="utf-8")
    header = []
    for line in text.splitlines():
        if not line.startswith("#") or line.startswith(MARK):
            break
        header.append(line)
    data = yaml.safe_load(_uncomment(text) if planned else text)
    return _parse(data, tuple(header))


def docnames(toc: Toc) -> list[str]:
    """Every docname of the toc, root first."""
    return [toc.root] + [f for part in toc.parts for f in part.files]


def _yaml_scalar(text: str) -> str:
    """``text`` as it must be written after ``caption:``: plain when YAML reads it back unchanged,
    double-quoted otherwise (a caption such as "Beyond the papers: ReLU-ization" holds ": ")."""
    try:
        if yaml.safe_load(f"k: {text}") == {"k": text}:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text, ensure_ascii=False)


def render(toc: Toc, root: Path = ROOT) -> str:
    """_toc.yml text for ``toc`` with entries whose file is missing commented with ``#~``."""

    def line(indent: str, text: str, commented: bool) -> str:
        return f"{MARK}{indent[len(MARK) :]}{text}" if commented else f"{indent}{text}"

    out = list(toc.header) + ["format: jb-book", f"root: {toc.root}", "parts:"]
    for part in toc.parts:
        exists = [source_of(f, root) is not None for f in part.files]
        part_missing = not any(exists)
        out.append(line("  ", f"- caption: {_yaml_scalar(part.caption)}", part_missing))
        out.append(line("    ", "chapters:", part_missing))
        out.extend(line("      ", f"- file: {f}", not ok) for f, ok in zip(part.files, exists, strict=True))
    return "\n".join(out) + "\n"


def problems(path: Path = TOC, root: Path = ROOT) -> list[str]:
    """Human-readable problems; empty when the toc follows the rule."""
    active = read_toc(path)
    planned = read_toc(path, planned=True)
    found = []
    for doc in docnames(active):
        if source_of(doc, root) is None:
            found.append(f"in the toc but no file: {doc} (comment it with '{MARK}' or run --write)")
    active_set = set(docnames(active))
    for doc in docnames(planned):
        if doc not in active_set and source_of(doc, root) is not None:
            found.append(f"file exists but its toc entry is commented: {doc} (run --write)")
    planned_set = set(docnames(planned))
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        doc = notebook.relative_to(root).with_suffix("").as_posix()
        if doc not in active_set:
            where = "commented" if doc in planned_set else "absent"
            found.append(f"notebook not built, its toc entry is {where}: {doc}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="rewrite _toc.yml from the files that exist")
    args = parser.parse_args(argv)
    if args.write:
        TOC.write_text(render(read_toc(TOC, planned=True)), encoding="utf-8")
    issues = problems()
    for issue in issues:
        print(issue)
    if not issues:
        print(f"{TOC.name}: every entry has a file and every notebook is listed")
    return 1 if issues else 0


if __name__ == "__main__":
    sys.exit(main())
