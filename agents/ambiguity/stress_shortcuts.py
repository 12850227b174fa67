"""Which word was stressed: the prosodic-feature classifier against single-scalar controls.

Stress is a property of one word. Over every English stress pair the frames make (both readings,
each reading labelled by whether its stressed word is the earlier of the pair's two), each
utterance scalar of ``hear_gym.speech.features`` is a one-split threshold rule and the prosodic
classifier (``prosodic_classifier``) is fitted, both scored on held-out pairs (grouped 5-fold
cross-validation: a pair's clips are in one fold). A position-blind scalar (every one but the
two F0 slopes, which weigh where in the utterance F0 is high) must not decide it; no scalar may
beat the classifier. The rendering is uncached (``render_aligned``), so a test can put another
construction back.
"""

from __future__ import annotations

import numpy as np

from hear_gym.envs.ambiguity.items.phonological import en_stress
from hear_gym.envs.ambiguity.render import render_aligned
from hear_gym.speech.features import FEATURE_NAMES, prosodic_features

POSITION_AWARE = ("f0_slope_st_per_s", "f0_final_slope_st_per_s")
POSITION_BLIND = tuple(name for name in FEATURE_NAMES if name not in POSITION_AWARE)
FOLDS = 5


def audit(voices: tuple[str, ...], renderer: str) -> dict:
    """Held-out balanced accuracy of every scalar's threshold rule and the classifier's accuracy
    (classes are balanced: each pair gives one clip of each)."""
    from sklearn.model_selection import GroupKFold
    from sklearn.tree import DecisionTreeClassifier

    from agents.ambiguity.prosodic_classifier import ProsodicClassifier, pair_features

    scalars, features, earlier, said_first, groups = [], [], [], [], []
    for group, draft in enumerate(en_stress()):
        candidates = tuple(u.spoken for u in draft.readings)
        for said, reading in enumerate(candidates):
            other = candidates[1 - said]
            for voice in voices:
                waveform, _ = render_aligned(reading, voice, renderer)
                scalars.append(prosodic_features(waveform))
                features.append(pair_features(waveform, candidates))
                earlier.append(int(reading.stress[0] < other.stress[0]))
                said_first.append(1 - said)
                groups.append(group)
    x, f = np.array(scalars), np.array(features)
    y, first, groups = np.array(earlier), np.array(said_first), np.array(groups)
    folds = list(GroupKFold(FOLDS).split(x, y, groups))
    balanced = {}
    for j, name in enumerate(FEATURE_NAMES):
        scores = []
        for train, test in folds:
            stump = DecisionTreeClassifier(max_depth=1, class_weight="balanced", random_state=0)
            guess = stump.fit(x[train, j : j + 1], y[train]).predict(x[test, j : j + 1])
            scores.append(np.mean([np.mean(guess[y[test] == k] == k) for k in (0, 1)]))
        balanced[name] = float(np.mean(scores))
    right = []
    for train, test in folds:
        classifier = ProsodicClassifier().fit(f[train], first[train])
        right.append(np.mean((classifier.prob_first(f[test]) >= 0.5) == first[test]))
    return {
        "renderer": renderer,
        "voices": list(voices),
        "pairs": int(groups.max() + 1),
        "classifier": float(np.mean(right)),
        "balanced_accuracy": balanced,
    }
