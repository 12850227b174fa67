"""eSpeak NG output depends on its inputs only, whatever was synthesized before."""

import hashlib
import random
import subprocess
import sys

from hear_gym.speech import espeak

TEXTS = [
    "Okay, sounds good.",
    "That won't work. I need a daytime flight, nothing overnight.",
    "Hmm, I'm not sure about this one. I'd really prefer something closer to the city.",
]


def digest(text, voice, settings=espeak.EspeakSettings(), language="en"):
    return hashlib.sha256(espeak.synthesize(text, voice, language, settings).tobytes()).hexdigest()


def test_same_input_same_samples_after_any_history():
    rnd = random.Random(0)
    voices = list(espeak.VARIANTS)
    reference = {(t, v): digest(t, v) for t in TEXTS for v in voices}
    for _ in range(60):
        settings = espeak.EspeakSettings(
            rate=rnd.choice([130, 175, 220]),
            pitch=rnd.choice([30, 50, 75]),
            range=rnd.choice([5, 50, 95]),
            volume=rnd.choice([40, 60, 100]),
        )
        espeak.synthesize(rnd.choice(TEXTS), rnd.choice(voices), "en", settings)
        text, voice = rnd.choice(TEXTS), rnd.choice(voices)
        assert digest(text, voice) == reference[text, voice], (text, voice)


def test_same_samples_across_processes():
    code = (
        "import hashlib; from hear_gym.speech import espeak; "
        f"print(hashlib.sha256(espeak.synthesize({TEXTS[1]!r}, 'f3').tobytes()).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    espeak.synthesize(TEXTS[2], "m2")  # some history in this process
    assert out.stdout.strip() == digest(TEXTS[1], "f3")


def test_voices_differ_and_mandarin_speaks():
    assert len({digest(TEXTS[0], v) for v in espeak.VARIANTS}) == len(espeak.VARIANTS) >= 8
    samples = espeak.synthesize(
        "\u6211\u9700\u8981\u4e00\u4e2a\u767d\u5929\u7684\u822a\u73ed\u3002", "f2", "cmn"
    )
    assert len(samples) > espeak.ESPEAK_RATE // 2


def test_bad_voice_or_language():
    import pytest

    with pytest.raises(ValueError, match="unknown voice"):
        espeak.synthesize("hi", "robot")
    with pytest.raises(ValueError, match="unknown language"):
        espeak.synthesize("hi", "m1", "xx")
