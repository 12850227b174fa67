"""DeliveryPlan's training material reaches the trainers through the family contract, and its
pieces score as the env does."""

from types import SimpleNamespace

import pytest

from agents.training_material import grpo_task, training_material
from hear_gym.envs.deliveryplan.actions import parse_reply
from hear_gym.envs.deliveryplan.display import CUE_ID
from hear_gym.envs.deliveryplan.features import WORD_BINS, prompt_words, recording_words
from hear_gym.envs.deliveryplan.plan import EMOTIONS, INTENSITIES

ENV_ID = "hear_gym/DeliveryPlan-v0"
MATERIAL = training_material(ENV_ID)


def _settings(**changes):
    return SimpleNamespace(
        **{"env_options": {}, "state_probe": None, "paired": True, "item_limit": 6, **changes}
    )


def test_demonstrations_are_the_oracles_plans_for_both_sides():
    demos = MATERIAL.demos.build("train")
    assert len(demos) == 2 * 67 and MATERIAL.demos.access == "T"  # public: every training side
    assert {d["item_id"][-2:] for d in demos} == {"/0", "/1"}
    assert all(not parse_reply(d["completion"][0]["content"], 6).malformed for d in demos)


def test_grpo_pairs_are_a_case_and_its_edit_and_the_reward_is_the_verifiers():
    env_id, task = grpo_task("deliveryplan")
    assert env_id == ENV_ID
    rows, reward = task.build(_settings(), {0})
    assert len(rows) == 6 and all(r["item_id"][:-2] == r["item_id_minus"][:-2] for r in rows)
    plus, minus = (
        CUE_ID.sub("", rows[0]["prompt"][-1]["content"]).splitlines(),
        CUE_ID.sub("", rows[0]["prompt_minus"][-1]["content"]).splitlines(),
    )
    # ids left out (each side draws its own), only the source record differs
    assert [a == b for a, b in zip(plus, minus, strict=True)].count(False) == 1
    demos = {d["item_id"]: d["completion"][0]["content"] for d in MATERIAL.demos.build("train")}
    side = rows[0]["item_id_minus"]
    assert reward.score(side, demos[side]) == (1.0, True)
    assert reward.score(side, "a calm voice") == (0.0, False)
    plain, _ = task.build(_settings(paired=False), {0})
    assert len(plain) == 12


def test_grpo_task_refuses_a_pair_reward_per_side():
    with pytest.raises(ValueError, match="per-side"):
        grpo_task("deliveryplan")[1].check(_settings(env_options={"reward": "counterfactual_consistency"}))


def test_corpus_holds_the_instruction_and_replies():
    texts = MATERIAL.corpus()
    assert MATERIAL.instructions()[0] == texts[0] and any('"evidence"' in t for t in texts)


def test_feature_words_give_every_label_word_its_own_bin():
    """Under T the source label must reach the features: no label word shares a bin with another
    word of any prompt."""
    labels = {*EMOTIONS, *INTENSITIES}
    vectors = {w: prompt_words(w) for w in labels}
    assert all(v.sum() == 1 for v in vectors.values())
    assert len({int(v.argmax()) for v in vectors.values()}) == len(labels)
    import numpy as np

    from hear_gym.envs.deliveryplan.case_tables import side_prompt
    from hear_gym.envs.deliveryplan.cases import generate_cases
    from hear_gym.envs.deliveryplan.display import draw_display

    label_bins = {int(v.argmax()) for v in vectors.values()}
    display = draw_display(np.random.default_rng(0))
    for case in generate_cases():
        text = side_prompt(case, 0, display, labels=False)
        other = np.maximum(prompt_words(text), recording_words(text).reshape(-1, WORD_BINS).max(axis=0))
        assert not any(other[b] for b in label_bins), WORD_BINS


def _side_keys(sides):
    from hear_gym.envs.deliveryplan.cases import cases_by_id

    cases = cases_by_id()
    return {(cases[c].original, cases[c].edited)[s].source_key for c, s in sides}


def _test_keys(partition):
    from hear_gym.envs.deliveryplan.cases import cases_by_id
    from hear_gym.envs.deliveryplan.splits import split_ids

    return {cases_by_id()[c].original.source_key for c in split_ids("test", partition)}


def _materials(partition):
    """The source keys every training material of ``partition`` shows."""
    import gymnasium as gym

    from agents.deliveryplan.audio_probe import training_keys
    from hear_gym.envs.deliveryplan.splits import training_sides

    def sides(item_ids):
        return [(i[:-2], int(i[-1])) for i in item_ids]

    demos = MATERIAL.demos.build("train", partition=partition)
    _, task = grpo_task("deliveryplan")
    settings = _settings(env_options={"partition": partition}, item_limit=None)
    paired, _ = task.build(settings, {0})
    plain, _ = task.build(_settings(env_options={"partition": partition}, item_limit=None, paired=False), {0})
    ppo = gym.make(ENV_ID, split="train", partition=partition).unwrapped.episodes
    return {
        "sft demos": _side_keys(sides(d["item_id"] for d in demos)),
        "grpo pairs": _side_keys(
            sides([r["item_id"] for r in paired] + [r["item_id_minus"] for r in paired])
        ),
        "grpo sides": _side_keys(sides(r["item_id"] for r in plain)),
        "fitted controls": _side_keys(training_sides(partition)),
        "ppo episodes": _side_keys([(c, s) for c in ppo for s in (0, 1)]),
        "probe audio": set(training_keys(partition)),
    }


@pytest.mark.parametrize("partition", ["source_key_disjoint", "source_emotion_disjoint"])
def test_no_training_material_shows_a_held_out_key_or_emotion(partition):
    test_keys = _test_keys(partition)
    for name, keys in _materials(partition).items():
        assert keys and not keys & test_keys, (name, sorted(keys & test_keys))
        if partition == "source_emotion_disjoint":
            assert not {k[0] for k in keys} & {k[0] for k in test_keys}, name


def test_the_disjointness_check_fails_on_every_side_of_the_training_split():
    """The old material, both sides of every training case, shows every held-out test key (as
    the edits of their sibling keys)."""
    from hear_gym.envs.deliveryplan.splits import split_ids

    every_side = _side_keys((c, s) for c in split_ids("train", "source_key_disjoint") for s in (0, 1))
    assert _test_keys("source_key_disjoint") <= every_side
