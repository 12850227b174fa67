import numpy as np
import pytest

from hear_gym.speech import scene

SR = scene.SAMPLE_RATE


def tone(seconds=0.5, freq=220.0, amp=0.3):
    t = np.arange(int(SR * seconds)) / SR
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_loudness_normalization_hits_the_target():
    for target in (-30.0, -20.0, -12.0):
        assert scene.rms_dbfs(scene.normalize_loudness(tone(), target)) == pytest.approx(target, abs=0.01)
    assert not scene.normalize_loudness(np.zeros(100, np.float32)).any()


def test_fades_are_5_ms_and_leave_the_middle_alone():
    x = np.ones(SR // 10, np.float32)
    y = scene.fade(x, 5.0)
    n = SR * 5 // 1000
    assert y[0] < 0.01 and y[-1] < 0.01 and y[n:-n].min() == 1.0
    assert np.all(np.diff(y[:n]) > 0)
    assert x.min() == 1.0  # input untouched


def test_gaps_and_concatenation_have_exact_lengths():
    a, b = tone(0.2), tone(0.3, 330)
    out = scene.concatenate([a, b], [600.0])
    assert len(out) == len(a) + len(b) + int(0.6 * SR)
    assert not out[len(a) : len(a) + int(0.6 * SR)].any()
    with pytest.raises(ValueError, match="need 1 gaps"):
        scene.concatenate([a, b], [])


def test_noise_at_a_target_snr_is_measured_back():
    rng = np.random.default_rng(0)
    x = tone(2.0)
    for snr in (0.0, 10.0, 20.0):
        y = scene.add_noise(x, snr, rng)
        noise = y.astype(np.float64) - x
        measured = 10 * np.log10(np.mean(x.astype(np.float64) ** 2) / np.mean(noise**2))
        assert measured == pytest.approx(snr, abs=0.05)
    assert np.array_equal(
        scene.add_noise(x, 5, np.random.default_rng(1)), scene.add_noise(x, 5, np.random.default_rng(1))
    )


def test_room_rendering_reverberates_and_is_cached():
    near = scene.RoomConfig(rt60_s=0.6, source=(2.0, 2.0, 1.5), microphone=(2.3, 2.0, 1.5))
    far = scene.RoomConfig(rt60_s=0.6, source=(0.8, 0.8, 1.5), microphone=(4.2, 3.2, 1.2))
    rir_near, rir_far = scene.room_impulse_response(near), scene.room_impulse_response(far)
    assert scene.room_impulse_response(near) is rir_near  # cached per configuration
    assert scene.direct_to_reverberant_db(rir_near) > scene.direct_to_reverberant_db(rir_far) + 6
    assert scene.decay_time_s(rir_far) == pytest.approx(0.6, rel=0.15)
    dry = tone(0.5)
    wet = scene.reverberate(dry, far)
    assert len(wet) == len(dry) + len(rir_far) - 1
    assert np.array_equal(wet, scene.reverberate(dry, far))
