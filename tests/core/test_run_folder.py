"""Run folders: one writer at a time (released however it ends), no link followed, strict JSON."""

from __future__ import annotations

import json
import os

import pytest
from lock_holder import lock_held_elsewhere, start_holder

from hear_gym.core.run_folder import (
    LOCK_FILE,
    RunFolderBusy,
    open_append,
    run_folder_lock,
    write_json_atomic,
)


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path):
    with lock_held_elsewhere(tmp_path / "run"):
        with pytest.raises(RunFolderBusy, match="in use by another run"):
            with run_folder_lock(tmp_path / "run"):
                pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    proc = start_holder(tmp_path / "run")
    proc.kill()
    proc.wait()
    with run_folder_lock(tmp_path / "run") as folder:
        assert (folder / LOCK_FILE).read_text().strip() == str(os.getpid())


def test_the_same_process_cannot_take_one_folder_twice(tmp_path):
    with run_folder_lock(tmp_path):
        with pytest.raises(RunFolderBusy):
            with run_folder_lock(tmp_path):
                pass
    with run_folder_lock(tmp_path):  # released on exit
        pass


def test_a_symlink_planted_as_the_lock_file_is_not_followed(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / LOCK_FILE).symlink_to(target)
    with pytest.raises(RunFolderBusy, match="cannot open its lock file"):
        with run_folder_lock(tmp_path / "run"):
            pass
    assert target.read_text() == "keep me"


def test_appends_and_atomic_writes_never_write_through_a_planted_symlink(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").symlink_to(target)
    with pytest.raises(OSError, match="symbolic link is never followed"):
        open_append(run / "results.jsonl")
    (run / "metadata.json").symlink_to(target)
    write_json_atomic(run / "metadata.json", {"episodes": 1})
    assert target.read_text() == "keep me"
    assert not (run / "metadata.json").is_symlink()
    assert json.loads((run / "metadata.json").read_text()) == {"episodes": 1}
    assert sorted(p.name for p in run.iterdir()) == ["metadata.json", "results.jsonl"]  # no temp left


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_json_is_written_strictly(tmp_path, bad):
    with pytest.raises(ValueError):
        write_json_atomic(tmp_path / "m.json", {"turn_cost": bad})
    assert not list(tmp_path.iterdir())
