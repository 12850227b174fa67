"""Per-user caches can be damaged without damaging the installation or the results."""

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import espeakng_loader
import numpy as np

SYNTH = (
    "import hashlib; from hear_gym.speech import espeak; "
    "print(hashlib.sha256(espeak.synthesize('Okay, sounds good.', 'm1').tobytes()).hexdigest())"
)


def _run(code: str, cache: Path) -> str:
    env = {**os.environ, "HEAR_GYM_CACHE": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def _installed_digest() -> str:
    return hashlib.sha256((Path(espeakng_loader.get_data_path()) / "phondata").read_bytes()).hexdigest()


def test_damaging_the_espeak_overlay_never_reaches_the_install_and_is_repaired(tmp_path):
    installed = _installed_digest()
    reference = _run(SYNTH, tmp_path)
    (overlay,) = tmp_path.glob("espeak-ng-data-*")
    assert not any(p.is_symlink() for p in overlay.rglob("*"))
    (overlay / "phondata").write_bytes(b"")  # truncate the cache's copy
    assert _installed_digest() == installed
    variant = next((overlay / "voices" / "!v").glob("hg_*"))
    variant.write_text("garbage that is still a voice file\n")
    assert _run(SYNTH, tmp_path) == reference  # rebuilt, same audio
    (overlay,) = tmp_path.glob("espeak-ng-data-*")
    assert (overlay / "phondata").stat().st_size > 0


def test_processes_building_the_overlay_at_once_all_synthesize_the_same_audio(tmp_path):
    # Spawned workers on a fresh cache all build the overlay together; none may take another's
    # freshly landed copy for a damaged one and pull it away while that process reads it.
    env = {**os.environ, "HEAR_GYM_CACHE": str(tmp_path)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", SYNTH], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outcomes = [worker.communicate(timeout=120) for worker in workers]
    assert [worker.returncode for worker in workers] == [0] * 4, [err for _, err in outcomes]
    assert len({out.strip() for out, _ in outcomes}) == 1
    assert len(list(tmp_path.glob("espeak-ng-data-*"))) == 1
    assert not list(tmp_path.glob("espeak-overlay-*"))  # no staging left behind


def test_damaged_feature_rows_are_recomputed_not_served(tmp_path):
    code = (
        "from hear_gym.speech.features import prosodic_features; "
        "from hear_gym.speech.renderers import EspeakRenderer, RenderRequest; "
        "w = EspeakRenderer().render(RenderRequest('Sure, that works.', 'warm', 'f1')).waveform; "
        "print(prosodic_features(w).tolist())"
    )
    first = _run(code, tmp_path)
    (store,) = tmp_path.glob("features-*.sqlite3")
    with sqlite3.connect(store) as db:
        ((key, value),) = db.execute("SELECT key, value FROM features").fetchall()
        db.execute("UPDATE features SET value = ?", (bytes(len(value)),))  # zeros of the right length
    assert _run(code, tmp_path) == first
    with sqlite3.connect(store) as db:
        ((repaired,),) = db.execute("SELECT value FROM features").fetchall()
    assert repaired == value and np.frombuffer(repaired[:-16], "<f4").any()
