"""Where the studies are: every ``benchmarks/<area>/<name>.py`` with a top-level ``main`` is a
study, run as ``python -m benchmarks.<area>.<name>``, with its page ``<name>.md`` beside it.
Modules without ``main`` are a study's helpers. Found by reading the source (``ast``), so listing
the studies imports none of them."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Study:
    area: str  # the folder: an env's name, or a shared area (speed, speech, llm)
    name: str
    script: Path
    docstring: str

    @property
    def key(self) -> str:
        return f"{self.area}/{self.name}"

    @property
    def module(self) -> str:
        return f"benchmarks.{self.area}.{self.name}"

    @property
    def page(self) -> Path:
        return self.script.with_suffix(".md")

    @property
    def title(self) -> str:
        """The page's heading (the study's question), or the script's docstring without a page."""
        if self.page.exists():
            for line in self.page.read_text(encoding="utf-8").splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
        return self.docstring.split("\n")[0]


def _study(script: Path) -> Study | None:
    tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
    if not any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
        return None
    return Study(script.parent.name, script.stem, script, (ast.get_docstring(tree) or "").strip())


def find_studies(root: Path = BENCHMARKS) -> list[Study]:
    scripts = sorted(path for path in root.glob("*/*.py") if path.name != "__init__.py")
    return [study for study in map(_study, scripts) if study is not None]


def select(studies: list[Study], selectors: list[str]) -> list[Study]:
    """The studies an ``area`` or ``area/name`` selector names, in listing order; all for none."""
    if not selectors:
        return studies
    known = {study.area for study in studies} | {study.key for study in studies}
    unknown = [selector for selector in selectors if selector.strip("/") not in known]
    if unknown:
        areas = sorted({study.area for study in studies})
        raise ValueError(f"no study or area {', '.join(unknown)} (areas: {', '.join(areas)})")
    wanted = {selector.strip("/") for selector in selectors}
    return [study for study in studies if study.area in wanted or study.key in wanted]
