"""No circle of imports anywhere in `core` or `tui` (issue 28): not at the top of the
modules, and not through the imports made inside functions either (a lazy import that
closes a circle is a module in the wrong place, found later as an import-order bug).
Imports only for type checkers (`if TYPE_CHECKING:`) are not followed: they never run."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    found = {}
    for root in ("core", "tui"):
        for path in (REPO / root).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for_checkers = {id(node) for branch in ast.walk(tree)
                    if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
                    for statement in branch.body for node in ast.walk(statement)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: list[str] = []
    for node in ast.walk(tree):
        if id(node) in for_checkers:
            continue
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[:len(parent) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            targets += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                        for alias in node.names]
    found = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, following = work[-1]
            step = next(following, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_core_or_tui_is_in_a_circle_of_imports():
    modules = _modules()
    assert len(modules) > 100
    edges = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert _circles(edges) == []


def test_no_folder_of_core_holds_more_than_a_dozen_modules():
    crowded = {str(folder.relative_to(REPO)): count for folder in (REPO / "core").rglob("*")
               if folder.is_dir() and folder.name != "__pycache__"
               for count in [len([m for m in folder.glob("*.py") if m.name != "__init__.py"])]
               if count > 12}
    assert crowded == {}
