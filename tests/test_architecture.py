"""The layering rules, read from the source with ``ast`` (every import, lazy ones included):

* shared layers (``core``, ``speech``, ``wrappers``, ``stats``, ``eval``, ``cli``) never import a
  family (``hear_gym.envs.<family>``);
* families never import each other;
* ``hear_gym`` never imports ``agents`` or ``training`` (the CLI finds them by entry point);
* no import cycles among module-level imports.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hear_gym", "agents", "training")
SHARED = (
    "hear_gym.core",
    "hear_gym.speech",
    "hear_gym.wrappers",
    "hear_gym.stats",
    "hear_gym.eval",
    "hear_gym.cli",
)
FAMILIES = tuple(
    f"hear_gym.envs.{p.name}" for p in (ROOT / "hear_gym" / "envs").iterdir() if (p / "__init__.py").exists()
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(every imported module, the module-level ones) of one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    everything, top = set(), set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        everything.update(n for n in names if n.split(".")[0] in PACKAGES)
    for node in tree.body:
        if isinstance(node, ast.Import):
            top.update(a.name for a in node.names if a.name.split(".")[0] in PACKAGES)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in PACKAGES
        ):
            top.add(node.module)
    return everything, top


MODULES = {_module_name(p): _imports(p) for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def _within(name: str, prefixes) -> str | None:
    return next((p for p in prefixes if name == p or name.startswith(p + ".")), None)


def test_the_families_are_found():
    assert {"hear_gym.envs.hear2act", "hear_gym.envs.voicegate"} <= set(FAMILIES)


def test_shared_layers_import_no_family():
    bad = [
        (m, i)
        for m, (imports, _) in MODULES.items()
        if _within(m, SHARED)
        for i in imports
        if _within(i, FAMILIES)
    ]
    assert not bad, bad


def test_families_do_not_import_each_other():
    bad = [
        (m, i)
        for m, (imports, _) in MODULES.items()
        if (own := _within(m, FAMILIES))
        for i in imports
        if (other := _within(i, FAMILIES)) and other != own
    ]
    assert not bad, bad


def test_hear_gym_imports_no_agents_or_training():
    bad = [
        (m, i)
        for m, (imports, _) in MODULES.items()
        if m.startswith("hear_gym")
        for i in imports
        if i.split(".")[0] in ("agents", "training")
    ]
    assert not bad, bad


def test_no_import_cycles():
    graph = {m: {_resolve(i) for i in top} - {None, m} for m, (_, top) in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                raise AssertionError(" -> ".join(path[path.index(nxt) :] + [node, nxt]))
            if nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for module in graph:
        if module not in state:
            visit(module, [])


def _resolve(name: str) -> str | None:
    """The module an import names (``a.b.c`` may be module ``a.b`` importing ``c``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def test_agent_families_do_not_import_each_other():
    agent_families = ("agents.hear2act", "agents.voicegate")
    bad = [
        (m, i)
        for m, (imports, _) in MODULES.items()
        if (own := _within(m, agent_families))
        for i in imports
        if (other := _within(i, agent_families)) and other != own
    ]
    assert not bad, bad
