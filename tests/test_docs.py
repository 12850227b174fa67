"""The docs stay true: README's Python examples run; in README.md, ARCHITECTURE.md, docs/*.md and
the benchmark pages every relative link resolves, every env id is registered, every
``python -m benchmarks...`` line names a real module and its options; every ``hear-gym`` command
line in README.md and docs/*.md names a real command and real options. ``make docs-check`` runs
this file and the study-page checks (``tests/benchmark_scripts/test_study_pages.py``)."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from hear_gym.cli.app import app
from hear_gym.envs.registration import ENV_IDS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOC_FILES = (README, *sorted((ROOT / "docs").glob("*.md")))
BENCHMARK_PAGES = (ROOT / "benchmarks" / "README.md", *sorted((ROOT / "benchmarks").glob("*/*.md")))
LINKED_FILES = (*DOC_FILES, ROOT / "ARCHITECTURE.md", ROOT / "CHANGELOG.md", *BENCHMARK_PAGES)
EXAMPLE_TIMEOUT_S = 300
# Flags the docs name that belong to a script, not to hear-gym: the script that defines each.
SCRIPT_FLAGS = {
    "--study": ROOT / "benchmarks" / "llm" / "post_training.py",
    "--seconds": ROOT / "benchmarks" / "speed" / "envs.py",
    "--clock": ROOT / "benchmarks" / "hear2act" / "step_speed.py",
}

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
INLINE_COMMAND = re.compile(r"`(hear-gym [^`]+)`")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ENV_ID = re.compile(r"\bhear_gym/[A-Za-z][A-Za-z0-9]*-v\d+\b")
BENCHMARK_MODULE = re.compile(r"python -m (benchmarks(?:\.\w+)*)([^`\n]*)")


def code_blocks(text: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if lang == language]


def without_code_blocks(text: str) -> str:
    return FENCE.sub("", text)


def shell_lines(block: str) -> list[str]:
    """The block's command lines, each with its ``\\`` continuations joined and comments cut."""
    joined = re.sub(r"\\\n", " ", block)
    return [" ".join(re.sub(r"\s#.*$", "", line).split()) for line in joined.splitlines()]


def hear_gym_lines(path: Path) -> list[str]:
    """Every ``hear-gym ...`` command in a file: shell-block lines and inline code spans."""
    text = path.read_text(encoding="utf-8")
    lines = [
        line
        for block in code_blocks(text, "bash")
        for line in shell_lines(block)
        if line.startswith("hear-gym ")
    ]
    lines += [" ".join(span.split()) for span in INLINE_COMMAND.findall(without_code_blocks(text))]
    return lines


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = without_code_blocks(path.read_text(encoding="utf-8"))
    return {github_anchor(m) for m in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


@cache
def cli_root() -> Any:
    # Typer's command objects (its own vendored click in recent releases): groups have `commands`.
    return typer.main.get_command(app)


def command_words(line: str) -> list[str]:
    """The subcommand path a ``hear-gym`` line names (``['voicegate', 'eval']``)."""
    command, words = cli_root(), []
    for token in line.split()[1:]:
        if not hasattr(command, "commands"):
            break
        if token not in command.commands:
            raise AssertionError(f"{line!r}: {' '.join(['hear-gym', *words])} has no command {token!r}")
        command = command.commands[token]
        words.append(token)
    return words


@cache
def help_text(words: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*words, "--help"])
    assert result.exit_code == 0, f"hear-gym {' '.join(words)} --help failed: {result.output}"
    return result.output


def unknown_options(line: str) -> list[str]:
    """The ``--options`` on a ``hear-gym`` line that its command's ``--help`` does not list."""
    help_output = help_text(tuple(command_words(line)))
    return [
        option
        for option in OPTION.findall(line)
        if not re.search(re.escape(option) + r"(?![\w-])", help_output)
    ]


def all_help_texts(command: Any, words: tuple[str, ...] = ()) -> list[str]:
    texts = [help_text(words)]
    for name, subcommand in getattr(command, "commands", {}).items():
        texts += all_help_texts(subcommand, (*words, name))
    return texts


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("index", range(len(code_blocks(README.read_text(encoding="utf-8"), "python"))))
def test_readme_python_example_runs(index: int, tmp_path: Path) -> None:
    code = code_blocks(README.read_text(encoding="utf-8"), "python")[index]
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"README python block {index}:\n{code}\n{result.stderr[-3000:]}"


def test_readme_has_python_examples_for_every_env() -> None:
    examples = "\n".join(code_blocks(README.read_text(encoding="utf-8"), "python"))
    for env_id in ("hear_gym/Hear2Act-v0", "hear_gym/VoiceGate-v0", "hear_gym/Onset-v0"):
        assert env_id in examples


@pytest.mark.parametrize("path", LINKED_FILES, ids=relative)
def test_relative_links_resolve(path: Path) -> None:
    assert not broken_links(path), f"{relative(path)}: {broken_links(path)}"


def broken_links(path: Path) -> list[str]:
    broken = []
    for target in LINK.findall(without_code_blocks(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no heading with that anchor)")
    return broken


def unregistered_env_ids(text: str) -> list[str]:
    """Env ids (``hear_gym/Name-vN``) a text names that the registry does not hold."""
    return sorted(set(ENV_ID.findall(text)) - set(ENV_IDS))


@pytest.mark.parametrize("path", LINKED_FILES, ids=relative)
def test_env_ids_are_registered(path: Path) -> None:
    unknown = unregistered_env_ids(path.read_text(encoding="utf-8"))
    assert not unknown, f"{relative(path)}: env ids the registry lacks: {unknown}"


def defines_option(code: str, flag: str) -> bool:
    """Whether a script's source defines ``--flag``: as a string, or as the dataclass field an
    option is built from (``--onset-groups`` from ``onset_groups: int``); ``--help`` is argparse's."""
    field = rf"^\s+{flag[2:].replace('-', '_')}\s*:"  # a dataclass field the option is built from
    return flag == "--help" or f'"{flag}"' in code or re.search(field, code, re.MULTILINE) is not None


def script_source(path: Path) -> str:
    """A benchmark script's source with the benchmark modules it imports (options a script
    builds from a helper's fields are spelled there)."""
    code = path.read_text(encoding="utf-8")
    for module in re.findall(r"^from (benchmarks\.[\w.]+) import", code, re.MULTILINE):
        code += ROOT.joinpath(*module.split(".")).with_suffix(".py").read_text(encoding="utf-8")
    return code


def stale_benchmark_commands(text: str) -> list[str]:
    """``python -m benchmarks...`` lines whose module has no file, or whose ``--options`` its
    source does not define (a script's options are argparse strings in its own file)."""
    stale = []
    for line in shell_lines(text.replace("`", "\n")):
        for module, rest in BENCHMARK_MODULE.findall(line):
            parts = module.split(".")
            source = ROOT.joinpath(*parts).with_suffix(".py")
            if not source.exists():
                source = ROOT.joinpath(*parts, "__main__.py")
            if not source.exists():
                stale.append(f"{line!r}: no module {module}")
                continue
            code = script_source(source)
            missing = [flag for flag in OPTION.findall(rest) if not defines_option(code, flag)]
            if missing:
                stale.append(f"{line!r}: options not in {relative(source)}: {missing}")
    return stale


@pytest.mark.parametrize("path", (*DOC_FILES, *BENCHMARK_PAGES), ids=relative)
def test_benchmark_command_lines_name_real_modules_and_options(path: Path) -> None:
    stale = stale_benchmark_commands(path.read_text(encoding="utf-8"))
    assert not stale, f"{relative(path)}: {stale}"


def test_planted_bad_link_id_and_command_are_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "[gone](no_such_file.md) [ok](page.md) `hear_gym/Hear2Act-v0` `hear_gym/Nope-v3`\n"
        "```bash\npython -m benchmarks.onset.probes --no-such-flag 1\n"
        "python -m benchmarks.no_such_area.study\n```\n",
        encoding="utf-8",
    )
    text = page.read_text(encoding="utf-8")
    assert broken_links(page) == ["no_such_file.md (no such file)"]
    assert unregistered_env_ids(text) == ["hear_gym/Nope-v3"]
    stale = stale_benchmark_commands(text)
    assert len(stale) == 2 and "--no-such-flag" in stale[0] and "no module" in stale[1]


@pytest.mark.parametrize("path", DOC_FILES, ids=relative)
def test_hear_gym_command_lines_name_real_commands_and_options(path: Path) -> None:
    stale = []
    for line in hear_gym_lines(path):
        try:
            unknown = unknown_options(line)
        except AssertionError as error:
            stale.append(str(error))
            continue
        if unknown:
            stale.append(f"{line!r}: options not in --help: {unknown}")
    assert not stale, f"{relative(path)}: {stale}"


@pytest.mark.parametrize("path", DOC_FILES, ids=relative)
def test_flags_named_in_prose_exist(path: Path) -> None:
    """A backticked ``--flag`` outside a command line is an option of some hear-gym command."""
    every_help = "\n".join(all_help_texts(cli_root()))
    spans = re.findall(r"`(--[^`]+)`", without_code_blocks(path.read_text(encoding="utf-8")))
    unknown = []
    for flag in {OPTION.match(span).group() for span in spans if OPTION.match(span)}:
        if flag in SCRIPT_FLAGS:
            assert flag in SCRIPT_FLAGS[flag].read_text(encoding="utf-8"), (
                f"{flag} not in {SCRIPT_FLAGS[flag]}"
            )
        elif not re.search(re.escape(flag) + r"(?![\w-])", every_help):
            unknown.append(flag)
    assert not unknown, f"{relative(path)}: flags no hear-gym command has: {sorted(unknown)}"


def test_command_line_parser_joins_continuations_and_cuts_comments() -> None:
    block = "hear-gym eval --out a \\\n    --cell x@T   # a comment\nhear-gym report a\n"
    assert shell_lines(block) == ["hear-gym eval --out a --cell x@T", "hear-gym report a"]


def test_unknown_command_and_option_are_caught() -> None:
    with pytest.raises(AssertionError, match="no command 'evaluate'"):
        command_words("hear-gym evaluate --out x")
    with pytest.raises(AssertionError, match="has no command 'build-all'"):
        command_words("hear-gym voicegate build-all --out x")
    (line,) = shell_lines("hear-gym voicegate eval --agent text_only \\\n    --out x --no-such-option 1")
    assert unknown_options(line) == ["--no-such-option"]
    assert unknown_options("hear-gym train ppo --out x --steps 10 --no-progress") == []
    assert unknown_options("hear-gym train ppo --out x --step 10") == ["--step"]


def test_every_doc_file_has_checked_command_lines() -> None:
    for path in DOC_FILES:
        if path.name != "benchmarks.md":
            assert hear_gym_lines(path), f"{relative(path)}: no hear-gym line found"
