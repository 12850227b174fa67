"""A Ctrl-C during synthesis interrupts: each call either raises ``KeyboardInterrupt`` or returns
the complete audio, the engine stays usable, and no partial rendering enters the render cache.

The interrupts are real SIGINTs sent to a child process at random moments of a synthesis (a
KeyboardInterrupt escaping a test would end the pytest session).
"""

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hear_gym.speech import espeak

TRIES = 30
VOICE = "m1"
LONG_TEXT = " ".join(
    ["That won't work. I need a daytime flight, nothing overnight, and a seat by the window."] * 4
)
INTERRUPTED = "interrupted"


def _digest(samples) -> str:
    return hashlib.sha256(samples.tobytes()).hexdigest()


def _interrupt_at_random(call, tries: int, seed: int, duration: float) -> list:
    """Runs ``call(i)`` ``tries`` times, a SIGINT sent to this process at a random moment up to
    1.2 times ``duration`` after each start: what the call returned, or ``INTERRUPTED`` when it
    raised ``KeyboardInterrupt`` (a signal that comes after the call is handled in the wait)."""
    rnd = random.Random(seed)
    outcomes = []
    for i in range(tries):
        timer = threading.Timer(rnd.uniform(0, 1.2 * duration), os.kill, (os.getpid(), signal.SIGINT))
        outcome = INTERRUPTED
        try:
            timer.start()
            outcome = call(i)
            timer.finished.wait()
            time.sleep(0.01)
        except KeyboardInterrupt:
            timer.join()
        outcomes.append(outcome)
    return outcomes


def _duration(call) -> float:
    """Seconds a warm call takes (the first call of a process also starts the engine)."""
    call()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def interrupted_synthesis(tries: int, seed: int) -> dict:
    """(child process) Interrupted syntheses of ``LONG_TEXT``, then one left alone."""

    def synthesize(_):
        return _digest(espeak.synthesize(LONG_TEXT, VOICE))

    outcomes = _interrupt_at_random(synthesize, tries, seed, _duration(lambda: synthesize(0)))
    return {"outcomes": outcomes, "after": synthesize(0)}


def interrupted_renders(tries: int, seed: int, folder: str) -> dict:
    """(child process) Interrupted renders through a disk-backed ``RenderCache``, one text per
    try; then whether each stored entry equals an uninterrupted rendering of its request."""
    from hear_gym.speech.cache import RenderCache
    from hear_gym.speech.renderers import EspeakRenderer, RenderRequest

    renderer = EspeakRenderer()
    cache = RenderCache(renderer, disk_dir=Path(folder))
    requests = [RenderRequest(f"{LONG_TEXT} Call {i}.", "warm", VOICE) for i in range(tries)]
    duration = _duration(lambda: renderer.render(RenderRequest(LONG_TEXT, "warm", VOICE)))
    outcomes = _interrupt_at_random(lambda i: cache.render(requests[i]) and "rendered", tries, seed, duration)
    reread = RenderCache(renderer, disk_dir=Path(folder))  # a fresh process's view of the store
    stored = [r for r in requests if reread.contains(r)]
    complete = [_digest(reread.render(r).waveform) == _digest(renderer.render(r).waveform) for r in stored]
    return {"outcomes": outcomes, "stored": len(stored), "complete": sum(complete)}


def _in_child(call: str) -> tuple[dict, str]:
    # Python leaves SIGINT ignored when its parent ignored it (a shell's background job):
    # the child restores the default handler, so the interrupts land however pytest was started
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"import test_interrupts as t; print(json.dumps(t.{call}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    return json.loads(done.stdout), done.stderr


def test_sigint_during_synthesis_raises_or_returns_the_complete_audio():
    result, stderr = _in_child(f"interrupted_synthesis({TRIES}, 0)")
    reference = _digest(espeak.synthesize(LONG_TEXT, VOICE))  # identical across processes
    outcomes = result["outcomes"]
    assert set(outcomes) <= {INTERRUPTED, reference}, "a synthesis returned short audio"
    assert outcomes.count(INTERRUPTED) >= TRIES // 3  # the interrupts did land
    assert result["after"] == reference  # the engine is usable after the interrupts
    assert "Exception ignored" not in stderr


def test_sigint_during_rendering_never_stores_a_partial_clip(tmp_path):
    result, stderr = _in_child(f"interrupted_renders({TRIES}, 1, {str(tmp_path)!r})")
    assert result["complete"] == result["stored"], "the disk cache holds a partial clip"
    assert result["stored"] >= TRIES - result["outcomes"].count(INTERRUPTED)
    assert result["outcomes"].count(INTERRUPTED) >= TRIES // 3  # the interrupts did land
    assert "Exception ignored" not in stderr


def test_an_error_inside_the_callback_is_raised_and_the_next_call_is_whole(monkeypatch):
    import numpy as np
    import pytest

    reference = espeak.synthesize(LONG_TEXT, VOICE)
    as_array, calls = np.ctypeslib.as_array, []

    def fails_on_the_third_buffer(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError("no room for this buffer")
        return as_array(*args, **kwargs)

    monkeypatch.setattr(np.ctypeslib, "as_array", fails_on_the_third_buffer)
    with pytest.raises(MemoryError, match="no room"):
        espeak.synthesize(LONG_TEXT, VOICE)
    assert espeak.synthesize(LONG_TEXT, VOICE).tobytes() == reference.tobytes()
