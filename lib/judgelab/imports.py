"""The import graph of ``judgelab``, read from the sources with :mod:`ast` (nothing is imported).

Readers: :mod:`judgelab.pipeline` (the library files each notebook runs) and
``tests/test_import_graph.py`` (no edges between studies, no cycles). Every import statement counts,
wherever it stands, except under ``if __name__ == "__main__":`` and ``if TYPE_CHECKING:`` (neither
runs on import; ``type_checking=True`` counts the second, since naming another module's types
depends on it). ``from judgelab.x import y`` is an edge to ``judgelab.x.y`` when that is a module,
else to ``judgelab.x``; only the package's own modules are kept. :func:`closure` adds the parent
packages' ``__init__`` that Python runs first.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "judgelab"


def package_dir() -> Path:
    """``lib/judgelab`` of this checkout."""
    return Path(__file__).resolve().parent


def module_files(root: Path | None = None, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (packages by their ``__init__``)."""
    root = Path(root or package_dir())
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = [package, *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if "__pycache__" in parts or not all(p.isidentifier() for p in parts):
            continue
        out[".".join(parts)] = path
    return out


def _never_runs_on_import(node: ast.AST, type_checking: bool = False) -> bool:
    """``if __name__ == "__main__":``, or ``if TYPE_CHECKING:`` (also ``typing.TYPE_CHECKING``)
    unless ``type_checking`` counts those imports."""
    if not isinstance(node, ast.If):
        return False
    t = node.test
    if isinstance(t, ast.Name) and t.id == "TYPE_CHECKING":
        return not type_checking
    if isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING":
        return not type_checking
    if not isinstance(t, ast.Compare):
        return False
    names = [t.left, *t.comparators]
    return (any(isinstance(n, ast.Name) and n.id == "__name__" for n in names)
            and any(isinstance(n, ast.Constant) and n.value == "__main__" for n in names))


def _import_nodes(tree: ast.AST, type_checking: bool = False):
    """Every Import / ImportFrom node of ``tree``, skipping blocks that never run on import."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if _never_runs_on_import(child, type_checking):
                todo.extend(child.orelse)  # the ``else:`` of such a block does run
            else:
                todo.append(child)


def imports_of(source: str, module: str, known: set[str], is_package: bool = False,
               where: str = "<source>", type_checking: bool = False) -> set[str]:
    """The modules of ``known`` that ``source``, the text of ``module``, imports."""
    tree = ast.parse(source, filename=where)
    here = module.split(".") if is_package else module.split(".")[:-1]
    out: set[str] = set()
    for node in _import_nodes(tree, type_checking):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base_parts = here[: len(here) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        for name in targets:
            # ``import judgelab.x.y as z`` or a name inside a module: the longest known prefix
            parts = name.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            if parts and ".".join(parts) != module:
                out.add(".".join(parts))
    return out


def import_graph(root: Path | None = None, package: str = PACKAGE,
                 type_checking: bool = False) -> dict[str, set[str]]:
    """``{module: modules it imports}`` for every module of the package under ``root``."""
    files = module_files(root, package)
    known = set(files)
    return {name: imports_of(path.read_text(encoding="utf-8"), name, known,
                             is_package=path.name == "__init__.py", where=str(path),
                             type_checking=type_checking)
            for name, path in files.items()}


def parents(module: str) -> list[str]:
    """The packages Python initialises before ``module``: ``a.b.c`` -> ``a``, ``a.b``."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def closure(start: set[str], graph: dict[str, set[str]]) -> set[str]:
    """Every module importing ``start`` runs: imports followed, parent packages added."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        mod = todo.pop()
        if mod in seen or mod not in graph:
            continue
        seen.add(mod)
        todo.extend(graph[mod])
        todo.extend(parents(mod))
    return seen

