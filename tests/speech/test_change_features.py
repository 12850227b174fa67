"""VoiceGate's change features (``hear_gym.speech.change_features``): the fast mel spectrogram
gives exactly librosa's MFCCs."""

import librosa
import numpy as np

from hear_gym.speech.change_features import FRAME, N_MFCC, SAMPLE_RATE, segment_features


def test_segment_mfccs_are_librosas():
    rng = np.random.default_rng(0)
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    segment = (0.3 * np.sin(2 * np.pi * 180 * t) + 0.05 * rng.standard_normal(t.size)).astype(np.float32)
    reference = librosa.feature.mfcc(y=segment, sr=SAMPLE_RATE, n_mfcc=N_MFCC, n_fft=512, hop_length=FRAME)
    np.testing.assert_array_equal(
        segment_features(segment)[:N_MFCC], reference.mean(axis=1).astype(np.float32)
    )
