"""The ``renderer`` fixture: every registered renderer (``hear_gym.speech.renderers.RENDERERS``),
eSpeak in the default tier and the others in the slow tier (a contrast group takes eSpeak about
25 ms and Praat about 0.3 s, so a split's worth is minutes); a renderer whose optional extra is
not installed is skipped."""

import pytest

from hear_gym.speech.renderers import RENDERERS, make_renderer

DEFAULT_TIER = "espeak"


@pytest.fixture(
    params=[
        name if name == DEFAULT_TIER else pytest.param(name, marks=pytest.mark.slow)
        for name in sorted(RENDERERS, key=lambda name: name != DEFAULT_TIER)
    ]
)
def renderer(request) -> str:
    try:
        make_renderer(request.param)
    except ImportError as exc:  # an optional extra (the neural voice) not installed here
        pytest.skip(str(exc))
    return request.param
