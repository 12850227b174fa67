"""Every study under benchmarks/ has its page, and the index lists every study once: a study is a
``benchmarks/<area>/<name>.py`` with a ``main`` (``benchmarks.studies``), its page ``<name>.md``
beside it gives the question (its heading), the command that runs it, the result and what it
means. ``python -m benchmarks`` (``make bench``) selects studies by area or name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.__main__ import main as bench_main
from benchmarks.studies import BENCHMARKS, Study, find_studies, select

STUDIES = find_studies()
INDEX = BENCHMARKS / "README.md"
SECTIONS = ("## Command", "## Result", "## What it means")


def page_problems(study: Study) -> list[str]:
    """What a study's page lacks: the page, its heading, a section, or its own command."""
    if not study.page.exists():
        return [f"no page {study.page.name}"]
    text = study.page.read_text(encoding="utf-8")
    problems = [] if text.startswith("# ") else ["the first line is not the question (# heading)"]
    problems += [f"no {section!r} section" for section in SECTIONS if f"\n{section}\n" not in text]
    if f"python -m {study.module}" not in text:
        problems.append(f"the page never gives its command, python -m {study.module}")
    return problems


def index_problems(index_text: str, studies: list[Study]) -> list[str]:
    """Studies the index does not link exactly once, and linked pages that are no study's."""
    linked = re.findall(r"\]\(([\w/]+)\.md\)", index_text)
    keys = {study.key for study in studies}
    problems = [f"{key} linked {linked.count(key)} times" for key in sorted(keys) if linked.count(key) != 1]
    return problems + [f"{key} is no study" for key in sorted(set(linked) - keys)]


def test_the_studies_are_found() -> None:
    areas = {study.area for study in STUDIES}
    assert {"hear2act", "voicegate", "onset", "deliveryplan", "ambiguity", "speed"} <= areas
    assert len(STUDIES) >= 30
    helpers = {"ppo_curves_analysis", "cross_renderer_probes"}  # modules without a main
    assert not helpers & {study.name for study in STUDIES}


@pytest.mark.parametrize("study", STUDIES, ids=lambda study: study.key)
def test_every_study_has_its_page(study: Study) -> None:
    assert not page_problems(study), f"{study.key}: {page_problems(study)}"


def test_the_index_lists_every_study_once() -> None:
    problems = index_problems(INDEX.read_text(encoding="utf-8"), STUDIES)
    assert not problems, f"benchmarks/README.md: {problems}"


def test_a_study_without_page_or_index_line_is_caught(tmp_path: Path) -> None:
    area = tmp_path / "toy"
    area.mkdir()
    (area / "__init__.py").write_text("", encoding="utf-8")
    (area / "helper.py").write_text('"""No main: a helper."""\n', encoding="utf-8")
    (area / "probe.py").write_text('"""Does it hear?"""\n\n\ndef main():\n    pass\n', encoding="utf-8")
    (area / "listed.py").write_text('"""Listed."""\n\n\ndef main():\n    pass\n', encoding="utf-8")
    (area / "listed.md").write_text("# Listed?\n\n## Command\n\n## Result\n", encoding="utf-8")
    found = find_studies(tmp_path)
    assert [study.key for study in found] == ["toy/listed", "toy/probe"]
    listed, probe = found
    assert page_problems(probe) == ["no page probe.md"]
    assert page_problems(listed) == [
        "no '## What it means' section",
        "the page never gives its command, python -m benchmarks.toy.listed",
    ]
    assert index_problems("[x](toy/listed.md) [y](toy/gone.md)", found) == [
        "toy/probe linked 0 times",
        "toy/gone is no study",
    ]


def test_selectors_pick_an_area_or_a_study_and_refuse_unknown_names(capsys) -> None:
    onset = select(STUDIES, ["onset"])
    assert onset and {study.area for study in onset} == {"onset"}
    assert [study.key for study in select(STUDIES, ["hear2act/baselines"])] == ["hear2act/baselines"]
    with pytest.raises(ValueError, match="no study or area nope"):
        select(STUDIES, ["nope"])
    assert bench_main(["run", "onset", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert all(f"python -m {study.module}" in printed for study in onset)
    assert "benchmarks.speed" not in printed
