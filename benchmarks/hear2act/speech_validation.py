"""Speech-layer validation (paper section 4.4, Appendix E, Tables 10/11) as an acoustic shortcut
audit: how hard is resolved vs reluctant acceptance to hear, per delivery plan table and renderer?

Items (``hear_gym.envs.hear2act.assent_items``): every prosody-mediated assent turn of the bank, i.e. the
user's reaction to each option the engine answers with ``SHARED_ASSENT`` (same words pool;
genuine = resolved, reluctant = unresolved); words and delivery label drawn as the env draws
them. Train-split scenarios fit every classifier, test-split scenarios evaluate it.

Per plan table (``paper``, ``clear``) and renderer (eSpeak, Praat), on the test split:

* every single acoustic scalar (``hear_gym.speech.audit.SCALAR_NAMES``: ``FEATURE_NAMES`` plus
  speech RMS, peak, intensity maximum, clip duration and F0 median; absolute and relative to the
  same speaker's opening request), with threshold and direction fit on train;
* two all-feature probes on all of them: gradient-boosted trees (hyperparameters chosen from a
  small grid by 5-fold scenario-grouped cross-validation on train) and a standardized logistic
  regression;
* and once, the text classifier (bag of 1-2-grams, logistic regression) on the same items.

Balanced accuracy with 95% scenario-bootstrap CIs. Requirements for ``paper``: no scalar above
0.75, the strongest probe between 0.80 and 0.95 (the paper's listeners: 0.92), text at chance.
Prints the tables and writes benchmarks/out/speech_validation.{json,md}; ``--renderer neural
--prosody paper`` audits one cell (written to ``speech_validation_<renderer>_<prosody>.*``).
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import date
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import track
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from hear_gym.envs.hear2act.assent_items import AssentItem, assent_items, render_pair
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.speech.audit import BASE_NAMES, SCALAR_NAMES, acoustic_scalars, best_single_scalar
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import PROSODY_TABLES
from hear_gym.speech.renderers import RENDERERS, make_renderer
from hear_gym.stats.bootstrap import RatioSums, bootstrap

OUT = Path(__file__).resolve().parents[1] / "out"
GBT_GRID = [
    {"learning_rate": [0.05], "max_leaf_nodes": [8], "l2_regularization": [1.0]},
    {"learning_rate": [0.1], "max_leaf_nodes": [31], "l2_regularization": [0.0]},
    {"learning_rate": [0.03], "max_depth": [3], "min_samples_leaf": [40]},
]


def scores(y_true: np.ndarray, y_pred: np.ndarray, scenario: np.ndarray) -> dict:
    """Per-class recall and balanced accuracy, with a 95% scenario-bootstrap CI on the latter."""
    ids, unit = np.unique(scenario, return_inverse=True)
    correct = (np.asarray(y_pred, bool) == y_true).astype(float)

    def per_scenario(mask):
        return RatioSums(np.bincount(unit, correct * mask, len(ids)), np.bincount(unit, mask, len(ids)))

    res, unres = per_scenario(y_true.astype(float)), per_scenario((~y_true).astype(float))
    balanced = bootstrap(lambda idx: (res.statistic(idx) + unres.statistic(idx)) / 2, len(ids))
    return {
        "resolved": float(correct[y_true].mean()),
        "unresolved": float(correct[~y_true].mean()),
        "balanced": balanced.point,
        "balanced_ci": [balanced.low, balanced.high],
        "n_resolved": int(y_true.sum()),
        "n_unresolved": int((~y_true).sum()),
    }


def featurize(items: list[AssentItem], cache: RenderCache, prosody: str, description: str) -> np.ndarray:
    return np.array(
        [
            acoustic_scalars(*render_pair(item, cache, prosody))
            for item in track(items, description=description)
        ]
    )


def probes(x_train, y_train, groups, x_test) -> dict[str, tuple[np.ndarray, str]]:
    """name -> (test predictions, description)."""
    trees = HistGradientBoostingClassifier(max_iter=300, class_weight="balanced", random_state=0)
    search = GridSearchCV(trees, GBT_GRID, scoring="balanced_accuracy", cv=GroupKFold(5))
    search.fit(x_train, y_train, groups=groups)
    logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, class_weight="balanced"))
    logistic.fit(x_train, y_train)
    return {
        "gradient-boosted trees": (search.predict(x_test), f"CV-chosen {search.best_params_}"),
        "logistic regression": (logistic.predict(x_test), "standardized, balanced class weights"),
    }


def audit(train, test, prosody: str, renderer: str) -> dict:
    cache = RenderCache(make_renderer(renderer), max_bytes=256 * 2**20)
    x_train = featurize(train, cache, prosody, f"{prosody}/{renderer}: train")
    x_test = featurize(test, cache, prosody, f"{prosody}/{renderer}: test")
    y_train, y_test = (np.array([i.resolved for i in items]) for items in (train, test))
    units = np.array([i.scenario_id for i in test])
    singles = best_single_scalar(x_train, y_train, x_test, y_test)
    result = {
        "scalars": {
            r["scalar"]: {
                **scores(y_test, r["predicted"], units),
                "train": r["train"],
                "threshold": r["threshold"],
                "direction": r["direction"],
            }
            for r in singles
        },
        "probes": {},
    }
    for name, (predicted, how) in probes(x_train, y_train, [i.scenario_id for i in train], x_test).items():
        result["probes"][name] = {**scores(y_test, predicted, units), "how": how}
    return result


def text_classifier(train, test) -> dict:
    words = make_pipeline(
        CountVectorizer(ngram_range=(1, 2)), LogisticRegression(max_iter=2000, class_weight="balanced")
    )
    words.fit([i.text for i in train], [i.resolved for i in train])
    y_test = np.array([i.resolved for i in test])
    return scores(y_test, words.predict([i.text for i in test]), np.array([i.scenario_id for i in test]))


def fmt(r: dict) -> str:
    return f"{r['balanced']:.3f} [{r['balanced_ci'][0]:.3f}, {r['balanced_ci'][1]:.3f}]"


def markdown(results: dict) -> list[str]:
    audio = results["audio"]
    lines = [
        "| plan table | renderer | best single scalar (test) | gradient-boosted trees "
        "| logistic regression |",
        "|---|---|---|---|---|",
    ]
    for key, r in audio.items():
        name, best = max(r["scalars"].items(), key=lambda kv: kv[1]["balanced"])
        probe = r["probes"]
        lines.append(
            f"| {key.replace('/', ' | ')} | {name}: {fmt(best)} | "
            f"{fmt(probe['gradient-boosted trees'])} | {fmt(probe['logistic regression'])} |"
        )
    lines += ["", f"Text classifier (bag of 1-2-grams), same items: {fmt(results['text'])}", ""]
    for prosody in dict.fromkeys(k.split("/")[0] for k in audio):
        keys = [k for k in audio if k.startswith(f"{prosody}/")]
        header = " | ".join(f"{k.split('/')[1]} {kind}" for k in keys for kind in ("abs", "rel"))
        lines += [
            f"Single scalars, plan table `{prosody}`: test balanced accuracy, absolute and relative "
            "to the opening request",
            "",
            f"| scalar | {header} |",
            "|---|" + "---|" * (2 * len(keys)),
        ]
        for name in BASE_NAMES:
            cells = [
                f"{audio[k]['scalars'][n]['balanced']:.3f}" for k in keys for n in (name, f"{name} (rel)")
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def main(renderers: tuple[str, ...] = tuple(RENDERERS), tables: tuple[str, ...] = PROSODY_TABLES) -> dict:
    start = time.perf_counter()
    train, test = assent_items("train", seed=1), assent_items("test", seed=2)
    results: dict = {
        "date": date.today().isoformat(),
        "n_train": len(train),
        "n_test": len(test),
        "generator_version": scenarios_for("test")[0].generator_version,
        "audio": {},
    }
    for prosody in tables:
        for renderer in renderers:
            results["audio"][f"{prosody}/{renderer}"] = audit(train, test, prosody, renderer)
    results["text"] = text_classifier(train, test)
    results["seconds"] = round(time.perf_counter() - start)
    lines = markdown(results)
    Console(width=200).print("\n".join(lines))
    print(
        f"{len(train)} train / {len(test)} test items, {len(SCALAR_NAMES)} scalars, "
        f"generator {results['generator_version']}, {results['seconds']} s"
    )
    OUT.mkdir(exist_ok=True)
    every = renderers == tuple(RENDERERS) and tables == PROSODY_TABLES
    stem = "speech_validation" if every else "_".join(["speech_validation", *renderers, *tables])
    (OUT / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    (OUT / f"{stem}.md").write_text("\n".join(lines) + "\n")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renderer", action="append", choices=sorted(RENDERERS), help="default: every one")
    parser.add_argument("--prosody", action="append", choices=PROSODY_TABLES, help="default: every table")
    args = parser.parse_args()
    main(tuple(args.renderer or RENDERERS), tuple(args.prosody or PROSODY_TABLES))
