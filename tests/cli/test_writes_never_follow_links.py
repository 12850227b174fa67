"""Every command that writes files replaces a symbolic link planted in its output folder instead
of writing through it (``hear_gym.core.run_folder``'s writers): ``listen`` of every family (the
dialogue page, its text and WAVs included), the label gallery, ``voicegate listen``, the exports."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hear_gym.cli.app import app

EXPECTED = b"outside --out: must stay as it is\n"

LISTENS = {
    "hear2act-dialogue": [
        "listen",
        "budget_airline_tickets-00",
        "--option",
        "renderers=espeak",
        "--renderer",
        "espeak",
    ],
    "hear2act-labels": ["listen", "--every-label", "Okay."],
    "voicegate": ["listen", "ss-unlock_door-03/switch", "--env", "hear_gym/VoiceGate-v0"],
    "onset": ["listen", "timer_urgency-02", "--env", "hear_gym/Onset-v0"],
    "ambiguity": ["listen", "phonological-en-stress-test-000", "--env", "hear_gym/Ambiguity-v0"],
}
EXPORTS = {
    "deliveryplan": (["deliveryplan", "export", "--out"], "cases.jsonl"),
    "hear2act-bank": (["scenarios", "export", "--split", "test", "--out"], "bank.jsonl"),
}


def _run(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def _plant(written: list[Path], clean: Path, out: Path, outside: Path) -> dict[Path, Path]:
    """A link in ``out`` for every file the clean run wrote, each to its own file outside."""
    links = {}
    for i, path in enumerate(written):
        link = out / path.relative_to(clean)
        link.parent.mkdir(parents=True, exist_ok=True)
        target = outside / f"target{i}"
        target.write_bytes(EXPECTED)
        link.symlink_to(target)
        links[link] = target
    return links


def _assert_replaced(links: dict[Path, Path]) -> None:
    for link, target in links.items():
        assert target.read_bytes() == EXPECTED, f"{link.name} was written through its link"
        assert not link.is_symlink() and link.stat().st_size > 0, link.name


@pytest.mark.parametrize("name", list(LISTENS))
def test_listen_replaces_planted_links(tmp_path, name):
    clean, out, outside = tmp_path / "clean", tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    _run([*LISTENS[name], "--out", str(clean)])
    written = sorted(p for p in clean.rglob("*") if p.is_file())
    assert any(p.suffix == ".wav" for p in written) and any(p.suffix != ".wav" for p in written)
    links = _plant(written, clean, out, outside)
    _run([*LISTENS[name], "--out", str(out)])
    _assert_replaced(links)


@pytest.mark.parametrize("name", list(EXPORTS))
def test_exports_replace_a_planted_link(tmp_path, name):
    args, file_name = EXPORTS[name]
    outside = tmp_path / "outside"
    outside.mkdir()
    links = _plant([tmp_path / file_name], tmp_path, tmp_path / "out", outside)
    _run([*args, str(tmp_path / "out" / file_name)])
    _assert_replaced(links)
