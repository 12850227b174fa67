"""The run-folder lock: one writer at a time, released however the holder ends."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from hear_gym.core.run_lock import LOCK_FILE, RunFolderBusy, run_folder_lock

_HOLD = textwrap.dedent(
    """
    import sys, time
    from hear_gym.core.run_lock import run_folder_lock
    with run_folder_lock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(60)
    """
)


def _holder(folder):
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path):
    proc = _holder(tmp_path / "run")
    try:
        with pytest.raises(RunFolderBusy, match="in use by another run"):
            with run_folder_lock(tmp_path / "run"):
                pass
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    proc = _holder(tmp_path / "run")
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
