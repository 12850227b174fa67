"""Speech-layer validation (paper section 4.4, Appendix E, Tables 10/11), with classifiers in
place of human listeners.

Items: every prosody-mediated *soft* reaction of the bank, i.e. the user's reaction to each
in-budget option that meets the hard constraint. Their words all come from the shared acceptance
pool; the intended status is resolved (the gold: genuine acceptance) or unresolved (reluctant
acceptance), and the delivery label is drawn as in the env. Each is rendered in the scenario's
voice by each renderer.

* Audio: logistic regression on prosodic features (current turn, and the same relative to the
  speaker's neutral opening request), trained on train-split scenarios, tested on test-split
  scenarios. Classes are weighted to balance (1 resolved : 4 unresolved per scenario).
* Text: the same classifier family on bag-of-words n-grams of the same items.

Prints per-class and balanced accuracies per renderer and writes
benchmarks/out/speech_validation.json. Targets: audio >= 0.90 on each renderer, text <= 0.55.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from hear_gym.metrics.bootstrap import RatioSums, bootstrap
from hear_gym.scenarios.bank import scenarios_for
from hear_gym.scenarios.domain_schema import domain_by_id
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.features import prosodic_features
from hear_gym.speech.renderers import RENDERERS, RenderRequest
from hear_gym.user.engine import UserEngine
from hear_gym.user.realizer import choose_delivery, realize
from hear_gym.user.states import Feedback
from hear_gym.wrappers.audio import voice_for

OUT = Path(__file__).parent / "out"


def soft_items(split: str, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    items = []
    for scenario in scenarios_for(split):
        domain = domain_by_id(scenario.domain)
        engine = UserEngine(scenario, Feedback.PROSODY)
        for cand in scenario.candidates:
            if cand.role == "violates_visible" or not cand.satisfies[0]:
                continue
            reaction = engine.react_to_recommendation(cand.option_id, frozenset({"L1"}))
            items.append({"scenario": scenario, "resolved": reaction.state.resolved,
                          "text": realize(reaction, scenario, domain, rng),
                          "label": choose_delivery(reaction.state, rng)})
    return items


def audio_features(items: list[dict], renderer: RenderCache, description: str) -> np.ndarray:
    rows = []
    for item in track(items, description=description):
        scenario, voice = item["scenario"], voice_for(item["scenario"].scenario_id)
        turn = renderer.render(RenderRequest(item["text"], item["label"], voice)).waveform
        request = renderer.render(RenderRequest(scenario.request, "neutral", voice)).waveform
        current, reference = prosodic_features(turn), prosodic_features(request)
        rows.append(np.concatenate([current, current - reference]))
    return np.array(rows)


def scores(y_true: np.ndarray, y_pred: np.ndarray, scenario: np.ndarray) -> dict[str, float]:
    """Per-class recall and balanced accuracy, with a 95% scenario-bootstrap CI on the latter."""
    ids, unit = np.unique(scenario, return_inverse=True)
    correct = (y_pred == y_true).astype(float)

    def per_scenario(mask):
        return RatioSums(np.bincount(unit, correct * mask, len(ids)), np.bincount(unit, mask, len(ids)))

    res, unres = per_scenario(y_true.astype(float)), per_scenario((~y_true).astype(float))
    balanced = bootstrap(lambda idx: (res.statistic(idx) + unres.statistic(idx)) / 2, len(ids))
    return {"resolved": float(correct[y_true].mean()), "unresolved": float(correct[~y_true].mean()),
            "balanced": balanced.point, "balanced_ci": [balanced.low, balanced.high],
            "n_resolved": int(y_true.sum()), "n_unresolved": int((~y_true).sum())}


def main() -> dict:
    start = time.perf_counter()
    train, test = soft_items("train", seed=1), soft_items("test", seed=2)
    y_train = np.array([i["resolved"] for i in train])
    y_test = np.array([i["resolved"] for i in test])
    test_units = np.array([i["scenario"].scenario_id for i in test])
    results: dict[str, dict] = {}
    for name, renderer_class in RENDERERS.items():
        renderer = RenderCache(renderer_class(), max_bytes=32 * 2**20)  # each request is rendered once
        x_train = audio_features(train, renderer, f"{name}: train")
        x_test = audio_features(test, renderer, f"{name}: test")
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, class_weight="balanced"))
        results[f"audio ({name})"] = scores(y_test, clf.fit(x_train, y_train).predict(x_test), test_units)
    words = make_pipeline(CountVectorizer(ngram_range=(1, 2)),
                          LogisticRegression(max_iter=2000, class_weight="balanced"))
    words.fit([i["text"] for i in train], y_train)
    results["text"] = scores(y_test, words.predict([i["text"] for i in test]), test_units)

    table = Table(title="Resolved vs unresolved on held-out prosody-mediated soft turns")
    for col in ("classifier", "resolved (O+)", "unresolved (O-)", "balanced accuracy [95% CI]", "n test"):
        table.add_column(col)
    for name, r in results.items():
        low, high = r["balanced_ci"]
        table.add_row(name, f"{r['resolved']:.3f}", f"{r['unresolved']:.3f}",
                      f"{r['balanced']:.3f} [{low:.3f}, {high:.3f}]", f"{r['n_resolved']} + {r['n_unresolved']}")
    console = Console()
    console.print(table)
    console.print(f"{len(train)} train / {len(test)} test items, {time.perf_counter() - start:.0f} s")
    OUT.mkdir(exist_ok=True)
    (OUT / "speech_validation.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
