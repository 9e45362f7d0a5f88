"""The package's layering rules (helpers/README.md), checked statically with ``ast``.

Every ``helpers/**/*.py`` is parsed; every import (top level or inside a function, absolute or
relative) that names a ``helpers`` module becomes an edge of the module graph. Then:

1. no module of ``helpers.core`` imports a method package or a top-level tool/re-export module;
2. method packages do not import each other (except the listed, justified edges);
3. the graph has no cycle (every strongly connected component is a single module), and
   ``helpers/__init__.py`` imports nothing;
4. no module of ``helpers`` or of the top-level ``tools`` is longer than the line limit (except the
   listed, justified files);
5. function-level imports of ``helpers`` modules are gone (there is no cycle left to break);
6. the core names no method: no identifier or string literal of ``helpers.core`` (comments and
   docstrings aside) contains a method's package name, a method's activation name or a
   method-options field name;
7. the core reads the methods' plain tables (``helpers.methods``) in one place only,
   ``helpers.core.registry.catalog``, the one deferred import of the package.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from pathlib import Path

from helpers.core.options import options_field_names
from helpers.methods import CLAIM_SOURCES, method_activations, method_packages

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "helpers"
TOOLS = ROOT / "tools"

METHODS = method_packages()
APP = (
    "helpers.methods",
    "helpers.activations",
    "helpers.models",
    "helpers.experiments",
    "helpers.claims",
    "helpers.floor_decisions",
    "helpers.relu_ization",
    "helpers.churn",
)

#: Imports between method packages, each with its reason.
METHOD_TO_METHOD: dict[tuple[str, str], str] = {}

#: The line cap of a module of ``helpers`` and of ``tools`` (the project's command lines, read like the
#: package): a module past it holds more than one concern, and is split by concern.
MAX_LINES = 400
#: Modules allowed past MAX_LINES, with the reason.
LONG_MODULES: dict[str, str] = {}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _modules() -> dict[str, tuple[Path, bool]]:
    return {name: (path, pkg) for path in sorted(PACKAGE.rglob("*.py")) for name, pkg in [_module_name(path)]}


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The longest prefix of ``name`` that is a module of the package."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[str, int, bool]]:
    """``(imported helpers module, line, inside a function)`` for every import of ``module``."""
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if is_package else module.rpartition(".")[0]
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    found = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from helpers.x import y``: y may be a submodule (an edge to it) or a name in x
            targets = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
        for target in targets:
            if target == "helpers" or target.startswith("helpers."):
                resolved = _resolve(target)
                if resolved and resolved != module:
                    found.append((resolved, node.lineno, id(node) in in_function))
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Each module's helpers imports (parsed when a test first asks, not at collection)."""
    return {m: {t for t, _, _ in _imports(m)} for m in MODULES}


def _inside(module: str, packages: tuple[str, ...]) -> str | None:
    return next((p for p in packages if module == p or module.startswith(p + ".")), None)


def test_the_scan_sees_the_layout():
    assert "helpers.core.runs" in MODULES and "helpers.lambda_gelu.activation" in MODULES
    assert "helpers.lambda_gelu.activation" in _graph()["helpers.lambda_gelu.hardness"]
    assert "helpers.core.runs" in _graph()["helpers.lambda_gelu.training"]


def test_core_imports_no_method_and_no_tool():
    bad = [
        f"{m} imports {t}"
        for m in MODULES
        if m.startswith("helpers.core")
        for t in _graph()[m]
        if _inside(t, METHODS + APP)
    ]
    assert not bad, "the core must know nothing about the papers or the tools:\n" + "\n".join(bad)


def test_method_packages_do_not_import_each_other():
    bad = []
    for m in MODULES:
        own = _inside(m, METHODS)
        if own is None:
            continue
        for t in _graph()[m]:
            other = _inside(t, METHODS)
            if other and other != own and (m, t) not in METHOD_TO_METHOD:
                bad.append(f"{m} imports {t}")
            if _inside(t, APP):
                bad.append(f"{m} imports the tool/re-export module {t}")
    assert not bad, "\n".join(bad)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                components.append(component)
    return components


def test_cycle_finder_finds_a_cycle():
    assert sorted(map(sorted, _strongly_connected({"a": {"b"}, "b": {"a"}, "c": {"a"}}))) == [["a", "b"], ["c"]]


def test_no_import_cycles():
    cycles = [sorted(c) for c in _strongly_connected(_graph()) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


#: What the book's code never imports: the project's tools, and the launchers and cluster libraries
#: they drive (a run under torchrun or submitit uses the same helpers as one in a notebook).
FORBIDDEN_IN_HELPERS = ("tools", "submitit", "torch.distributed.run")


def _absolute_imports(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [(node.module, node.lineno)] + [(f"{node.module}.{a.name}", node.lineno) for a in node.names]
    return found


def test_helpers_imports_no_tool_and_no_launcher():
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path, _ in MODULES.values()
        for name, line in _absolute_imports(path)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_HELPERS)
    ]
    assert not bad, "helpers/ is the book's code; tools/ imports it, never the reverse:\n" + "\n".join(bad)


def test_package_init_imports_nothing():
    assert _graph()["helpers"] == set()
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_module_length():
    """One test lists every module of ``helpers`` and ``tools`` over the cap (or justified in LONG_MODULES)."""
    over = []
    for path in sorted(PACKAGE.rglob("*.py")) + sorted(TOOLS.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and rel not in LONG_MODULES:
            over.append(f"{rel}: {lines} lines")
    assert not over, f"modules over {MAX_LINES} lines (split each by concern or justify it in LONG_MODULES): {over}"


def test_long_module_exceptions_are_still_needed():
    for rel in LONG_MODULES:
        path = ROOT / rel
        assert path.exists(), f"{rel} is listed in LONG_MODULES but does not exist"
        assert len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES, f"{rel} no longer needs its exception"


def test_no_function_level_imports_of_helpers():
    lazy = [
        f"{MODULES[m][0].relative_to(ROOT)}:{line} imports {t}"
        for m in MODULES
        for t, line, inside in _imports(m)
        if inside
    ]
    assert not lazy, "import helpers modules at the top of the module:\n" + "\n".join(lazy)


#: What the core may not name: every method's (and chapter's) package, its activations, its options' fields.
METHOD_WORDS: tuple[str, ...] = tuple(
    sorted({m.package for m in CLAIM_SOURCES} | set(method_activations()) | set(options_field_names()))
)


def _docstring_starts(tree: ast.AST) -> set[tuple[int, int]]:
    """Where the docstrings of a module, its classes and functions start (line, column)."""
    starts = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                starts.add((first.value.lineno, first.value.col_offset))
    return starts


def method_words_in(source: str, words: tuple[str, ...] = METHOD_WORDS) -> list[tuple[int, str, str]]:
    """``(line, word, token)`` for every identifier or string literal of ``source`` (not a comment,
    not a docstring) that contains one of ``words``, case-insensitively."""
    docstrings = _docstring_starts(ast.parse(source))
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.NAME, tokenize.STRING) or token.start in docstrings:
            continue
        text = token.string.lower()
        found += [(token.start[0], word, token.string) for word in words if word.lower() in text]
    return found


def test_the_method_name_scan_finds_names_and_skips_comments_and_docstrings():
    source = (
        '"""A module that mentions srelu in its docstring."""\n'
        "# and flexact in a comment\n"
        "def f():\n"
        '    """lambda_gelu here is fine."""\n'
        '    return {"srelu": hardness_lr_mult}\n'
    )
    assert [(line, word) for line, word, _ in method_words_in(source)] == [(5, "srelu"), (5, "hardness_lr_mult")]


def test_core_names_no_method():
    assert {"lambda_gelu", "srelu", "flexact", "hardness_lr_mult", "delta_anneal_target"} <= set(METHOD_WORDS)
    bad = [
        f"{MODULES[m][0].relative_to(ROOT)}:{line}: {word!r} in {token[:60]}"
        for m in sorted(MODULES)
        if m.startswith("helpers.core")
        for line, word, token in method_words_in(MODULES[m][0].read_text(encoding="utf-8"))
    ]
    assert not bad, "the core names no method, knob or activation of one (methods register them):\n" + "\n".join(bad)


def test_the_core_reads_the_methods_tables_in_one_place():
    """The core's one way up to the methods: ``registry.catalog()`` imports ``helpers.methods`` on
    first use (the methods import the core, so a top-level import would be a cycle). No other core
    module imports a module by name at run time."""
    dynamic = [
        f"{MODULES[m][0].relative_to(ROOT)}:{node.lineno}"
        for m in sorted(MODULES)
        if m.startswith("helpers.core")
        for node in ast.walk(ast.parse(MODULES[m][0].read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
    ]
    assert dynamic == ["helpers/core/registry.py:" + str(_catalog_call_line())], dynamic


def _catalog_call_line() -> int:
    tree = ast.parse(MODULES["helpers.core.registry"][0].read_text(encoding="utf-8"))
    (catalog,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "catalog"]
    (call,) = [
        n for n in ast.walk(catalog) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "import_module"
    ]
    assert [a.value for a in call.args] == ["helpers.methods"]
    return call.lineno
