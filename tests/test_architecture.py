"""The layering rules, read from the source with ``ast``. Every import counts: lazy ones inside
functions, ``TYPE_CHECKING`` blocks, relative imports (resolved) and ``from package import
module`` forms.

* shared layers (``core``, ``speech``, ``wrappers``, ``stats``, ``eval``, ``cli``,
  ``integrations``) never import a family (``hear_gym.envs.<family>``);
* families never import each other, and neither do agent families (``agents.<family>``, one per
  env family; other subpackages such as ``agents.llm`` are shared);
* ``hear_gym`` never imports ``agents`` or ``training`` (the CLI finds them by entry point), and
  ``agents`` never imports ``training``;
* ``training`` never imports a family (``hear_gym.envs.<family>`` or ``agents.<family>``): it finds
  a family's training material through the registry (``agents.training_material``); nor names one
  in a string (an env id or task as a default, an option value): docstrings may mention families
  as examples, code may not;
* no import cycles;
* ``import hear_gym`` (and making every env) needs no torch.

Each rule is also shown to catch a violation planted in a temporary tree.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hear_gym", "agents", "training")
SHARED = tuple(
    f"hear_gym.{layer}" for layer in ("core", "speech", "wrappers", "stats", "eval", "cli", "integrations")
)


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a (possibly relative) ``from ... import`` names."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(root: Path, path: Path) -> set[str]:
    """Every project module or name one file imports, wherever the import statement is."""
    module = _module_name(root, path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, path.name == "__init__.py", node)
            names.add(source)
            names.update(f"{source}.{a.name}" for a in node.names if a.name != "*")
    return {n for n in names if n.split(".")[0] in PACKAGES}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _family_strings(path: Path, family_names: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, family) for each string in ``path``'s code, docstrings aside, that names a family:
    its package name as a word of its own, any case (``"hear_gym/VoiceGate-v0"``,
    ``"voicegate"``, ``"hear2act_dialogue"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [
                (node.lineno, name)
                for name in family_names
                if re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", node.value.lower())
            ]
    return found


def _subpackages(root: Path, package: str) -> tuple[str, ...]:
    folder = root.joinpath(*package.split("."))
    return (
        tuple(f"{package}.{p.name}" for p in sorted(folder.iterdir()) if (p / "__init__.py").exists())
        if folder.is_dir()
        else ()
    )


def _within(name: str, prefixes) -> str | None:
    return next((p for p in prefixes if name == p or name.startswith(p + ".")), None)


def _resolve(name: str, modules) -> str | None:
    """The module an import names (``a.b.c`` may be module ``a.b`` importing ``c``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _cycle(modules: dict[str, set[str]]) -> list[str] | None:
    graph = {m: {_resolve(i, modules) for i in imports} - {None, m} for m, imports in modules.items()}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module, [module])):
            return [*found, found[0]]
    return None


def violations(root: Path) -> list[str]:
    """Every broken layering rule of the tree at ``root``, one line each."""
    modules = {
        _module_name(root, p): _imports(root, p)
        for package in PACKAGES
        if (root / package).is_dir()
        for p in (root / package).rglob("*.py")
    }
    families = _subpackages(root, "hear_gym.envs")
    # agents/<family> for each env family; other subpackages (agents.llm) are shared
    agent_families = tuple(
        f"agents.{f.rpartition('.')[2]}" for f in families if f"agents.{f.rpartition('.')[2]}" in modules
    )
    found = []
    for module, imports in sorted(modules.items()):
        for name in sorted(imports):
            top = name.split(".")[0]
            if _within(module, SHARED) and _within(name, families):
                found.append(f"shared layer {module} imports family module {name}")
            if (own := _within(module, families)) and (other := _within(name, families)) and other != own:
                found.append(f"family {own} imports family {other} ({module} -> {name})")
            own_agents, other_agents = _within(module, agent_families), _within(name, agent_families)
            if own_agents and other_agents and other_agents != own_agents:
                found.append(f"agent family {own_agents} imports {other_agents} ({module} -> {name})")
            if module.startswith("hear_gym") and top in ("agents", "training"):
                found.append(f"{module} imports {name}: hear_gym never imports agents or training")
            if module.startswith("agents") and top == "training":
                found.append(f"{module} imports {name}: agents never import training")
            if module.split(".")[0] == "training" and _within(name, families + agent_families):
                line = f"training module {module} imports family module {_resolve(name, modules) or name}"
                found += [line] if line not in found else []
    family_names = tuple(f.rpartition(".")[2] for f in families)
    for path in sorted((root / "training").rglob("*.py")) if (root / "training").is_dir() else ():
        for line, name in _family_strings(path, family_names):
            found.append(
                f"training module {_module_name(root, path)} names family {name} in a string (line {line})"
            )
    if cycle := _cycle(modules):
        found.append("import cycle: " + " -> ".join(cycle))
    return found


def test_the_project_keeps_every_layering_rule():
    assert _subpackages(ROOT, "hear_gym.envs") and _subpackages(ROOT, "agents")
    assert violations(ROOT) == []


# A minimal tree that keeps every rule; each case below plants one violation in it.
CLEAN = {
    "hear_gym/__init__.py": "",
    "hear_gym/core/__init__.py": "",
    "hear_gym/core/family.py": "",
    "hear_gym/eval/__init__.py": "",
    "hear_gym/eval/runner.py": "from hear_gym.core import family\n",
    "hear_gym/envs/__init__.py": "",
    "hear_gym/envs/alpha/__init__.py": "",
    "hear_gym/envs/alpha/env.py": "from hear_gym.core.family import x\n",
    "hear_gym/envs/beta/__init__.py": "",
    "hear_gym/envs/beta/env.py": "from . import env\n",
    "agents/__init__.py": "",
    "agents/material.py": "from hear_gym.core import family\n",
    "agents/alpha/__init__.py": "",
    "agents/alpha/rule.py": "from hear_gym.envs.alpha import env\n",
    "agents/beta/__init__.py": "",
    "agents/beta/rule.py": "import hear_gym.envs.beta.env\n",
    "training/__init__.py": "",
    "training/ppo.py": "from agents import material\n",
    "training/curve.py": '"""Curves; a docstring may name a family as an example: Alpha."""\n',
}

PLANTED = {
    "relative import of a family from a shared layer": (
        "hear_gym/eval/runner.py",
        "from ..envs.alpha import env\n",
        "shared layer hear_gym.eval.runner imports family module hear_gym.envs.alpha",
    ),
    "family importing a sibling family": (
        "hear_gym/envs/beta/env.py",
        "def f():\n    from hear_gym.envs.alpha.env import x\n",
        "family hear_gym.envs.beta imports family hear_gym.envs.alpha",
    ),
    "hear_gym importing training, `from package import module` form": (
        "hear_gym/eval/runner.py",
        "from training import ppo\n",
        "hear_gym.eval.runner imports training",
    ),
    "hear_gym importing agents under TYPE_CHECKING": (
        "hear_gym/core/family.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agents.alpha.rule import A\n",
        "hear_gym.core.family imports agents.alpha.rule",
    ),
    "agent family importing another agent family": (
        "agents/beta/rule.py",
        "def make():\n    from agents.alpha import rule\n",
        "agent family agents.beta imports agents.alpha",
    ),
    "agents importing training": (
        "agents/alpha/rule.py",
        "from training import ppo\n",
        "agents.alpha.rule imports training.ppo: agents never import training",
    ),
    "training importing an agent family": (
        "training/curve.py",
        "def log():\n    from agents.beta.rule import x\n",
        "training module training.curve imports family module agents.beta.rule",
    ),
    "training importing an env family": (
        "training/curve.py",
        "import hear_gym.envs.alpha.env\n",
        "training module training.curve imports family module hear_gym.envs.alpha.env",
    ),
    "training naming a family in a string default": (
        "training/curve.py",
        'ENV_ID = "hear_gym/Alpha-v0"\n',
        "training module training.curve names family alpha in a string",
    ),
    "training naming a family's task in a string": (
        "training/curve.py",
        'def run(task="alpha_dialogue"):\n    """A docstring may mention beta."""\n',
        "training module training.curve names family alpha in a string",
    ),
    "cycle through a function-level import": (
        "training/curve.py",
        "def log():\n    from training.ppo import settings\n",
        "import cycle",
    ),
    "cycle through a type-only relative import": (
        "training/curve.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import ppo\n",
        "import cycle",
    ),
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_the_clean_tree_keeps_every_rule(tmp_path):
    assert violations(_tree(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_planted_violation_is_caught(tmp_path, case):
    path, text, expected = PLANTED[case]
    files = dict(CLEAN)
    if case.startswith("cycle"):
        files["training/ppo.py"] += "from training import curve\n"
    files[path] += text
    found = violations(_tree(tmp_path, files))
    assert any(expected in line for line in found), found


def test_importing_hear_gym_and_making_every_env_needs_no_torch():
    code = textwrap.dedent(
        """
        import sys
        import gymnasium as gym
        import hear_gym
        from hear_gym.core.registry import env_ids
        for env_id in env_ids():
            gym.make(env_id).reset(seed=0)
        assert "torch" not in sys.modules, sorted(m for m in sys.modules if m.startswith("torch"))
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True)
