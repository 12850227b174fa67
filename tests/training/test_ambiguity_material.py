"""Ambiguity's training material through the family contract, with no Ambiguity name in
``training/``: the trainers find its demos and its GRPO task in the registry, PPO trains a few
steps on its feature observation, and the rows are what the text agent is asked."""

from types import SimpleNamespace

import pytest

from agents.ambiguity.llm import AMBIGUITY_INSTRUCTION, AmbiguityChatAgent
from agents.training_material import envs_with, grpo_task, training_material
from hear_gym.envs.ambiguity.items.generator import episodes_by_id

ENV_ID = "hear_gym/Ambiguity-v0"


def test_the_trainers_find_ambiguitys_material():
    material = training_material(ENV_ID)
    assert material.chat_agent is AmbiguityChatAgent
    assert ENV_ID in envs_with("demos") and ENV_ID in envs_with("grpo_tasks")
    assert grpo_task("ambiguity")[0] == ENV_ID
    assert AMBIGUITY_INSTRUCTION in material.corpus() and material.instructions() == [AMBIGUITY_INSTRUCTION]


def test_sft_demos_answer_every_turn_with_the_gold_letter():
    source = training_material(ENV_ID).demos
    demos = source.build("train", access=source.access, limit=40, seed=0)
    assert len(demos) >= 40
    for demo in demos:
        episode = episodes_by_id()[demo["item_id"]]
        turn = episode.turns[demo["turn"]]
        assert demo["completion"][0]["content"] == "ABCD"[turn.asked.answer]
        assert demo["prompt"][0]["content"] == AMBIGUITY_INSTRUCTION
        assert turn.asked.options[0] in demo["prompt"][1]["content"]


def _settings(**kwargs):
    base = dict(families=None, env_options={}, state_probe=None, paired=False, item_limit=12)
    return SimpleNamespace(**{**base, **kwargs})


def test_grpo_rows_pair_a_minimal_pairs_readings_and_the_reward_is_the_envs():
    _, task = grpo_task("ambiguity")
    settings = _settings(paired=True, families=("phonological",), item_limit=6)
    assert task.check(settings) == {} and task.access(settings) == "T-nopunct"
    rows, reward = task.build(settings, eos_token_ids={0})
    assert len(rows) == 6
    for row in rows:
        assert row["item_id"].endswith("/a") and row["item_id_minus"].endswith("/b")
        plus, minus = episodes_by_id()[row["item_id"]], episodes_by_id()[row["item_id_minus"]]
        assert plus.item_id == minus.item_id
        if plus.contrast.value != "heterograph":  # same words, different answers: text cannot decide
            assert row["prompt"] == row["prompt_minus"]
        gold = "ABCD"[plus.turns[0].asked.answer]
        assert reward.score(row["item_id"], gold) == (1.0, True)
        assert reward.score(row["item_id_minus"], gold) == (0.0, True)
        assert reward.score(row["item_id"], "I am not sure") == (0.0, False)
    plain, _ = task.build(
        _settings(paired=False, families=("phonological",), item_limit=6), eos_token_ids={0}
    )
    assert sorted(r["item_id"] for r in plain) == sorted(
        {i for r in rows for i in (r["item_id"], r["item_id_minus"])}
    )
    with pytest.raises(ValueError, match="families"):
        task.check(_settings(families=("multi_turn",)))


@pytest.mark.slow  # ~9 s: a PPO run and its held-out evaluation
def test_ppo_trains_a_few_steps_on_the_features(tmp_path):
    pytest.importorskip("sb3_contrib")
    from training.ppo.train import PPOSettings, train

    settings = PPOSettings(
        out=tmp_path / "ppo",
        env_id=ENV_ID,
        access="T-nopunct",
        env_options={"phenomena": ["coreference"], "languages": ["en"]},
        total_steps=128,
        n_envs=2,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        eval_every=0,
        eval_limit=8,
        wandb_project=None,
        progress=False,
    )
    result = train(settings)
    assert (tmp_path / "ppo" / "checkpoints" / "final").is_dir()
    # the held-out evaluation ran through the runner and the family's summary (8 episodes)
    assert result["metrics"]["all/overall"]["n_scenarios"] >= 1
