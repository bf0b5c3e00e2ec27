"""The shape of the package, read from its import statements: arrows point down only."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from functools import cache
from pathlib import Path

import noughts

PACKAGE = Path(noughts.__file__).parent
FRONT_ENDS = ("noughts.terminal", "noughts.desktop", "noughts.web", "noughts.hardware", "noughts.robot",
              "noughts.envs")
COMMAND = ("noughts.cli", "noughts.__main__")  # the `noughts` command starts every front end
# A core backend that is an adapter around one optional dependency, imported only inside its functions.
BACKENDS = {"noughts.store.postgresql": ("psycopg",), "noughts.picture": ("resvg_py",),
            "noughts.sheet.camera": ("cv2", "numpy")}


def optional_imports() -> frozenset[str]:
    """The top-level import names of every package an extra of pyproject.toml asks for."""
    project = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")
              for extra in project["optional-dependencies"].values() for requirement in extra}
    names = {name for name, distributions in importlib.metadata.packages_distributions().items()
             if any(d.lower().replace("_", "-") in wanted for d in distributions)}
    # an extra that is not installed here (no wheel for this machine) still counts, by its usual import name
    installed = {d.lower().replace("_", "-") for ds in importlib.metadata.packages_distributions().values() for d in ds}
    names |= {w.removeprefix("python-").replace("-", "_") for w in wanted - installed}
    return frozenset(names)


OPTIONAL = optional_imports()


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


def test_the_optional_packages_are_read_from_the_extras() -> None:
    assert {"pygame", "starlette", "cv2", "serial", "psycopg", "gpiozero", "numpy", "redis"} <= OPTIONAL
    assert "noughts" not in OPTIONAL and "json" not in OPTIONAL


def test_the_core_imports_no_front_end_and_no_optional_dependency() -> None:
    # the core is every module outside the front ends: board, match, players, store, svg, engine, arena, …
    problems = []
    for module, targets in imports().items():
        if within(module, FRONT_ENDS + COMMAND):
            continue
        for target in targets:
            if within(target, FRONT_ENDS + COMMAND):
                problems.append(f"{module} imports the front end {target}")
            if target.split(".")[0] in OPTIONAL and target.split(".")[0] not in BACKENDS.get(module, ()):
                problems.append(f"{module} imports the optional {target}")
    assert problems == []


def test_a_backend_imports_its_optional_dependency_only_when_used() -> None:
    for module, dependencies in BACKENDS.items():
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        top_level = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # the module's own statements, run on import
            if isinstance(node, ast.Import):
                top_level.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                top_level.add((node.module or "").split(".")[0])
        for dependency in dependencies:
            assert dependency not in top_level, f"{module} imports {dependency} when it is imported"
            assert dependency in imports()[module]  # and the reader does see it, further in


# Programs of their own, each with its own command line: not the `noughts` command, nor a part of it.
OWN_PROGRAMS = {
    "noughts.gomocup_manager": "python -m noughts.gomocup_manager: a referee between any Gomocup brains",
    "noughts.robot.backends.ev3_agent": "copied alone onto the EV3 brick and run there, where noughts is not",
}


def test_only_the_command_reads_a_command_line() -> None:
    # Flags, usage and option errors live in noughts.cli; the modules below it take plain values.
    readers = {module for module, targets in imports().items()
               if "argparse" in targets and not within(module, COMMAND)}
    assert readers == set(OWN_PROGRAMS)


def test_nothing_imports_the_command() -> None:
    # The command starts the front ends; a front end (or the core) that imported it would make a cycle.
    problems = [f"{module} imports {target}" for module, targets in imports().items() if not within(module, COMMAND)
                for target in targets if within(target, ("noughts.cli",))]
    assert problems == []


def command_flags() -> frozenset[str]:
    """Every flag of the `noughts` command: its parser and subcommands', the panel's and the robot's."""
    import argparse

    from noughts import cli
    from noughts.cli import panel, robot

    parsers = [cli.build_parser()]
    for module in (panel, robot):  # they parse their own options; each `*_parser` builds one of them
        parsers += [build() for name, build in vars(module).items() if name.endswith("_parser") and callable(build)]
    flags: set[str] = set()
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            flags.update(option for option in action.option_strings if option.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return frozenset(flags)


def literals(tree: ast.AST) -> list[ast.Constant]:
    """The string literals of a module a program can show: every str constant (f-strings' parts
    included) but docstrings and other strings standing alone as statements."""
    documents = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documents]


def test_the_command_reads_its_flags() -> None:
    flags = command_flags()
    assert {"--opponent", "--workers", "--public-url", "--build", "--sense", "--resume", "--out", "--all"} <= flags


def test_only_the_command_names_its_flags() -> None:
    # "--workers needs --redis" is the command's way to say it: a front end or the core says what
    # is wrong in its own words, and noughts.cli words it with the flag (see cli.play.flag_message).
    flags = command_flags()
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(flags, key=len, reverse=True)))
                         + r")(?![\w-])")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        if within(module, COMMAND) or module in OWN_PROGRAMS:  # their own command lines, their own flags
            continue
        for node in literals(ast.parse(path.read_text(encoding="utf-8"))):
            for flag in pattern.findall(node.value):
                found.append(f"{module}:{node.lineno} {flag}: {node.value[:70]!r}")
    assert found == []
