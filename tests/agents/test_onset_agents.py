"""Onset agents: the NumPy/SciPy probe classifier and TF-IDF agree with scikit-learn, the
within-prefix permutation keeps label frequencies, the rule controls act as documented, and an
agent plays through ``hear-gym eval``."""

import json
from collections import Counter

import numpy as np
import pytest
from typer.testing import CliRunner

from agents.onset.baselines import AlwaysWaitAgent, EndpointPluralityAgent, plurality_action
from agents.onset.logistic import BalancedLogisticRegression
from agents.onset.probes import permuted_within_prefix, prefix_rows
from agents.onset.text_features import Tfidf
from hear_gym.envs.onset.actions import index_of


def _data(seed=0, n=300, d=8):
    rng = np.random.default_rng(seed)
    labels = rng.choice(["Wait", "Call-Tool", "Think"], size=n, p=[0.6, 0.3, 0.1])
    X = (
        rng.standard_normal((n, d))
        + 0.8 * (labels == "Call-Tool")[:, None]
        - 0.5 * (labels == "Think")[:, None]
    )
    return X, list(labels)


def test_logistic_regression_matches_scikit_learn():
    sklearn = pytest.importorskip("sklearn.linear_model")
    X, y = _data()
    ours = BalancedLogisticRegression().fit(X, y)
    theirs = sklearn.LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000, random_state=0).fit(
        X, y
    )
    assert ours.classes_ == list(theirs.classes_)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=2e-3)
    assert np.mean(np.array(ours.predict(X)) == theirs.predict(X)) > 0.99
    again = BalancedLogisticRegression.from_json(json.loads(json.dumps(ours.to_json())))
    assert again.predict(X) == ours.predict(X)


def test_tfidf_matches_scikit_learn():
    text = pytest.importorskip("sklearn.feature_extraction.text")
    docs = ["Book a table", "book a table for four", "Set the timer", "set a timer for five minutes"]
    ours = Tfidf().fit(docs)
    theirs = text.TfidfVectorizer(ngram_range=(1, 2)).fit(docs)
    assert list(ours.vocabulary) == list(theirs.get_feature_names_out())
    np.testing.assert_allclose(
        ours.transform(docs + ["unseen words"]), theirs.transform(docs + ["unseen words"]).toarray()
    )


def test_permutation_within_prefix_keeps_each_positions_labels():
    rows = prefix_rows("dev")
    labels = [r.target for r in rows]
    shuffled = permuted_within_prefix(rows, labels, seed=0)
    assert shuffled != labels and shuffled == permuted_within_prefix(rows, labels, seed=0)
    for k in range(5):
        assert Counter(s for s, r in zip(shuffled, rows, strict=True) if r.k == k) == Counter(
            t for t, r in zip(labels, rows, strict=True) if r.k == k
        )


def test_rule_controls():
    final = EndpointPluralityAgent()
    assert final.final_action == index_of(plurality_action())
    acts = [final.act({"prefix_index": np.array([k])}) for k in range(5)]
    assert acts == [0, 0, 0, 0, index_of(plurality_action())]
    assert AlwaysWaitAgent().act({}) == 0


def test_eval_runs_through_the_one_runner_and_logs_to_wandb(tmp_path, monkeypatch):
    from hear_gym.cli.app import app

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    out = tmp_path / "run"
    args = ["eval", "--env", "hear_gym/Onset-v0", "--split", "test", "--limit", "4", "--out", str(out)]
    wandb = ["--wandb-project", "hear-gym-test"]
    result = CliRunner().invoke(app, [*args, "--cell", "endpoint_plurality@T", "--no-progress", *wandb])
    assert result.exit_code == 0, result.output
    offline = list((out / "wandb").glob("offline-run-*"))
    assert len(offline) == 1 and any(offline[0].rglob("*.wandb"))
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and all(len(r["predictions"]) == 5 for r in lines)
    cell = json.loads((out / "metadata.json").read_text())["cells"]["endpoint_plurality@T"]
    assert cell["n_episodes"] == 4
    bad = CliRunner().invoke(app, [*args, "--cell", "nobody@A", "--no-progress"])
    assert bad.exit_code != 0 and "unknown agent" in bad.output


def test_listen_writes_both_branches_and_every_crop(tmp_path):
    from hear_gym.cli.app import app

    result = CliRunner().invoke(
        app, ["listen", "timer_urgency-02", "--env", "hear_gym/Onset-v0", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    folder = tmp_path / "timer_urgency-02"
    assert len(list(folder.glob("*.wav"))) == 2 * 2 * 5  # branches x renderings x crops
    sidecar = json.loads((folder / "group.json").read_text())
    assert {c["target"] for c in sidecar["crops"]} >= {"Wait"}
