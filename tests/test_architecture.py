"""The shape of the package, read from its import statements: arrows point down only."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import noughts

PACKAGE = Path(noughts.__file__).parent
FRONT_ENDS = ("noughts.terminal", "noughts.desktop", "noughts.web", "noughts.hardware", "noughts.robot",
              "noughts.envs")
CORE = ("noughts.board", "noughts.game", "noughts.match", "noughts.text", "noughts.solver", "noughts.players",
        "noughts.store", "noughts.errors", "noughts.svg", "noughts.paths")
OPTIONAL = ("pygame", "starlette", "uvicorn", "websockets", "gpiozero", "serial", "RPLCD", "smbus2", "cv2", "numpy",
            "redis", "psycopg", "playwright", "plotink", "ev3dev2", "pygcode", "PIL", "resvg_py")
# A core backend that is an adapter around one optional dependency, imported only inside its functions.
BACKENDS = {"noughts.store.postgresql": "psycopg"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache  # read once for the four tests: parsing the whole package costs about a second
def imports() -> dict[str, frozenset[str]]:
    """Every module of the package and the modules it imports (at the top or inside functions)."""
    graph: dict[str, frozenset[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = frozenset(found)
    return graph


def within(name: str, prefixes: tuple[str, ...]) -> str | None:
    return next((p for p in prefixes if name == p or name.startswith(p + ".")), None)


def test_the_graph_is_read() -> None:
    graph = imports()
    assert "noughts.match" in graph and "noughts.terminal.session" in graph
    assert "noughts.match" in graph["noughts.terminal.session"]  # the reader sees a known edge


def test_no_front_end_imports_another_front_end() -> None:
    crossings = []
    for module, targets in imports().items():
        home = within(module, FRONT_ENDS)
        for target in targets:
            other = within(target, FRONT_ENDS)
            if home and other and other != home:
                crossings.append(f"{module} imports {target}")
    assert crossings == []


def test_the_core_imports_no_front_end_and_no_optional_dependency() -> None:
    problems = []
    for module, targets in imports().items():
        if not within(module, CORE):
            continue
        for target in targets:
            if within(target, FRONT_ENDS) or within(target, ("noughts.cli", "noughts.engine")):
                problems.append(f"{module} imports the front end {target}")
            if target.split(".")[0] in OPTIONAL and BACKENDS.get(module) != target.split(".")[0]:
                problems.append(f"{module} imports the optional {target}")
    assert problems == []


def test_a_backend_imports_its_optional_dependency_only_when_used() -> None:
    for module, dependency in BACKENDS.items():
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        top_level = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # the module's own statements, run on import
            if isinstance(node, ast.Import):
                top_level.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                top_level.add((node.module or "").split(".")[0])
        assert dependency not in top_level, f"{module} imports {dependency} when it is imported"
        assert dependency in imports()[module]  # and the reader does see it, further in
