"""A family declares its own training material (``agents.training_material``) under its
``training_group``; the trainers find it through the registry. A toy family, registered here
from a temporary package, gets SFT demonstrations, a GRPO task, a dialogue task, its chat agent,
a PPO policy network and its tokenizer corpus into ``training/`` without ``training/`` naming
it, and the same for audio-language models (its audio agent, audio SFT rows through the audio
trainer's collator, an audio GRPO task); a family that declares nothing gets a one-line error
naming the envs that do."""

from __future__ import annotations

import sys
import textwrap

import gymnasium as gym
import pytest

import hear_gym.core.registry as registry
from agents.audio_material import audio_keys
from agents.ppo import ppo_policies
from agents.training_material import TrainingMaterial, grpo_task, training_material
from training import tiny_model
from training.llm import audio_grpo, audio_sft, dialogue_grpo, grpo, sft
from training.llm import settings as llm_settings
from training.llm.evaluation import chat_agent
from training.ppo.settings import PPOSettings

TOY_ID = "toy/Toy-v0"
ONSET_ID = "hear_gym/Onset-v0"

TOY_PACKAGE = {
    "toy_family/__init__.py": "",
    # the toy env is Onset's under another id and name: what matters here is the material
    "toy_family/family.py": textwrap.dedent(
        f"""
        import dataclasses
        from hear_gym.envs.onset.family import FAMILY as ONSET

        FAMILY = dataclasses.replace(ONSET, env_id={TOY_ID!r}, name="toy")
        """
    ),
    "toy_family/material.py": textwrap.dedent(
        """
        from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy

        from agents.training_material import (
            DecisionTask, DemoSource, DialogueTask, PPOPolicy, TrainingMaterial, decision_row, demo,
        )

        ACCESS = "T"


        class ToyChatAgent:
            pass


        class ToyPolicy(MaskableMultiInputActorCriticPolicy):
            checked = []

            @classmethod
            def check_spaces(cls, observation_space, action_space):
                cls.checked.append(action_space.n)


        def toy_demos(split, access, limit=None, seed=0, **env_options):
            chat = [{"role": "user", "content": f"{split} {access} {seed}"}]
            return [demo(chat, "[Wait]", item_id=f"toy-{k}") for k in range(limit or 3)]


        def check(settings):
            if settings.families is not None:
                raise ValueError("the toy task has no item families")
            return {"toy_option": 1, **settings.env_options}


        def build(settings, eos_token_ids):
            chat = [{"role": "user", "content": "now?"}]
            return [decision_row(chat, "toy-0", "toy", chat, "toy-1")], None


        def check_dialogue_options(options):
            if "patience" in options:
                raise ValueError("the toy dialogue has no patience")


        DIALOGUE = DialogueTask(
            make_env=None, reset_options=None, messages=None, cut_return=None, cut_rule="toy cut rule",
            check_options=check_dialogue_options, default_options={"toy_turns": 3}, access=ACCESS,
            player="toy_llm", agent=ToyChatAgent,
        )


        # -- audio: one clip per demonstration, each prompt naming its own
        import numpy as np

        from agents.audio_material import AudioDecisionTask, AudioDemoSource, audio_parts


        class ToyAudioAgent:
            pass


        def toy_clip(k):
            return np.full(1600 * (k + 1), 0.1 * (k + 1), dtype=np.float32)


        def toy_audio_prompt(key, words):
            chat = [{"role": "system", "content": "toy"}]
            chat += [{"role": "user", "content": [{"type": "audio"}, {"type": "text", "text": words}]}]
            return audio_parts(chat, audio_key=key)


        def check_audio_demos(settings):
            if settings.families is not None:
                raise ValueError("the toy's audio has no item families")


        def toy_audio_demos(settings):
            keys = [f"toy-{k}" for k in range(settings.demo_limit or 3)]
            rows = [
                {"prompt": toy_audio_prompt(key, f"now? {settings.seed}"), "completion": "[Wait]",
                 "item_id": key, "item_family": "toy"}
                for key in keys
            ]
            return rows, {key: toy_clip(k) for k, key in enumerate(keys)}


        def check_audio_task(settings):
            return {"toy_audio_option": 1, **settings.env_options}


        def build_audio_task(settings, eos_token_ids):
            row = decision_row(toy_audio_prompt("toy-0", "now?"), "toy-0", "toy", toy_audio_prompt("toy-1", "now?"), "toy-1")
            return [row], {"toy-0": toy_clip(0), "toy-1": toy_clip(1)}, None


        MATERIAL = TrainingMaterial(
            chat_agent=ToyChatAgent,
            demos=DemoSource(toy_demos, ACCESS),
            grpo_tasks={
                "toy_decision": DecisionTask(
                    check, lambda settings: ACCESS, build, lambda options: {"eval": True, **options}
                )
            },
            dialogue_tasks={"toy_dialogue": DIALOGUE},
            ppo_policies={"toy_net": PPOPolicy(lambda: ToyPolicy)},
            corpus=lambda: ["toy words for a toy tokenizer"],
            default_for=frozenset({"dialogue_tasks"}),  # as Hear2Act does: no default dialogue task
            audio_chat_agent=ToyAudioAgent,
            audio_demos=AudioDemoSource(check_audio_demos, toy_audio_demos),
            audio_grpo_tasks={
                "toy_audio_decision": AudioDecisionTask(
                    check_audio_task, build_audio_task, lambda options: {"eval": True, **options}
                )
            },
        )
        """
    ),
    "toy_family-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: toy-family\nVersion: 1.0\n",
    "toy_family-1.0.dist-info/entry_points.txt": (
        "[hear_gym.training.toy]\nmaterial = toy_family.material:MATERIAL\n"
    ),
}


@pytest.fixture
def toy_family(tmp_path, monkeypatch):
    """The toy family registered (registry, Gymnasium, its material's distribution on sys.path)."""
    for name, text in TOY_PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setitem(registry.FAMILIES, TOY_ID, "toy_family.family:FAMILY")
    registry.family.cache_clear()
    gym.register(id=TOY_ID, entry_point="hear_gym.envs.onset.family:make")
    yield
    del gym.registry[TOY_ID]
    for module in [m for m in sys.modules if m == "toy_family" or m.startswith("toy_family.")]:
        del sys.modules[module]
    registry.family.cache_clear()


@pytest.fixture
def any_model(monkeypatch):
    """The settings' model check passes: this test is about the material, not the model."""
    monkeypatch.setattr(llm_settings, "check_model_folder", lambda model, trust_remote_code=False: str(model))
    return "a-model"


def test_the_toy_family_declares_its_material_under_its_own_group(toy_family):
    assert registry.family(TOY_ID).training_group == "hear_gym.training.toy"
    material = training_material(TOY_ID)
    assert type(material).__name__ == "TrainingMaterial" and set(material.grpo_tasks) == {"toy_decision"}


def test_sft_gets_the_toy_familys_demonstrations_and_access(toy_family, any_model, tmp_path):
    settings = sft.SFTSettings(out=tmp_path / "sft", model=any_model, env_id=TOY_ID, demo_limit=2, seed=7)
    assert settings.evaluation.access == "T"  # the condition its experts demonstrate under
    demos = sft.build_demos(settings)
    assert [d["item_id"] for d in demos] == ["toy-0", "toy-1"]
    assert demos[0]["prompt"] == [{"role": "user", "content": "train T 7"}]
    assert chat_agent(TOY_ID).__name__ == "ToyChatAgent"


def test_grpo_finds_the_toy_familys_task(toy_family, any_model, tmp_path):
    assert grpo_task("toy_decision")[0] == TOY_ID
    settings = grpo.GRPOSettings(
        out=tmp_path / "grpo", model=any_model, task="toy_decision", paired=True, env_options={"x": 2}
    )
    assert settings.env_options == {"toy_option": 1, "x": 2}  # the task's own check
    assert settings.evaluation.access == "T"
    assert settings.evaluation.env_options == {"eval": True, "toy_option": 1, "x": 2}
    with pytest.raises(ValueError, match="the toy task has no item families"):
        grpo.GRPOSettings(out=tmp_path / "g2", model=any_model, task="toy_decision", families=("a",))


def test_dialogue_grpo_finds_the_toy_familys_dialogue_task(toy_family, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    settings = dialogue_grpo.DialogueGRPOSettings(
        out=tmp_path / "d", model=model, task="toy_dialogue", n_scenarios=1
    )
    assert settings.env_options == {"toy_turns": 3} and settings.evaluation.access == "T"
    with pytest.raises(ValueError, match="the toy dialogue has no patience"):
        dialogue_grpo.DialogueGRPOSettings(
            out=tmp_path / "d", model=model, task="toy_dialogue", env_options={"patience": 2}
        )


def test_audio_sft_gets_the_toy_familys_rows_through_its_collator(toy_family, any_model, tmp_path):
    from transformers import AutoProcessor

    settings = audio_sft.AudioSFTSettings(
        out=tmp_path / "asft", model=any_model, env_id=TOY_ID, env_options={"x": 2}, demo_limit=2, seed=7
    )
    assert (settings.evaluation.access, settings.evaluation.env_options) == ("A+T", {"x": 2})
    player = audio_sft.audio_player(TOY_ID)  # who plays the trained model in its evaluations
    assert (player.name, player.agent_class.__name__) == ("audio_llm", "ToyAudioAgent")
    rows, clips = audio_sft.demo_rows(settings)
    assert [r["item_id"] for r in rows] == ["toy-0", "toy-1"]
    assert [audio_keys(r["prompt"]) for r in rows] == [["toy-0"], ["toy-1"]]
    processor = AutoProcessor.from_pretrained(tiny_model.build_tiny_audio_lm(tmp_path / "tiny_audio"))
    batch = audio_sft.AudioSFTCollator(processor, clips)(rows)
    tokenizer = processor.tokenizer
    for ids, labels in zip(batch["input_ids"], batch["labels"], strict=True):
        assert tokenizer.decode(ids[labels != -100]) == "[Wait]" + tokenizer.eos_token
        assert "now? 7" in tokenizer.decode(ids[labels == -100])  # the seed reached the toy's source
    # each row hears its own clip: 1,600 and 3,200 samples, 10 ms (160-sample) hops
    assert batch["feature_attention_mask"].sum(-1).tolist() == [10, 20]
    with pytest.raises(ValueError, match="the toy's audio has no item families"):
        audio_sft.AudioSFTSettings(out=tmp_path / "a2", model=any_model, env_id=TOY_ID, families=("a",))


def test_audio_grpo_finds_the_toy_familys_audio_task(toy_family, any_model, tmp_path):
    settings = audio_grpo.AudioGRPOSettings(
        out=tmp_path / "agrpo", model=any_model, task="toy_audio_decision", env_options={"x": 2}
    )
    assert settings.paired and settings.env_options == {"toy_audio_option": 1, "x": 2}
    assert settings.evaluation.access == "A+T"
    assert settings.evaluation.env_options == {"eval": True, "toy_audio_option": 1, "x": 2}


def test_the_tiny_models_read_the_toy_familys_corpus(toy_family):
    assert "toy words for a toy tokenizer" in tiny_model.corpus()


def test_ppo_trains_the_toy_familys_own_policy_network(toy_family, tmp_path):
    assert set(ppo_policies(TOY_ID)) == {"mlp", "toy_net"}
    PPOSettings(out=tmp_path / "ppo", env_id=TOY_ID, policy="toy_net", wandb_project=None)
    policy = ppo_policies(TOY_ID)["toy_net"].load()
    assert policy.checked == [registry.family(TOY_ID).make().action_space.n]
    with pytest.raises(ValueError, match="policy must be one of \\['mlp'\\] on hear_gym/Onset-v0"):
        PPOSettings(out=tmp_path / "p2", env_id=ONSET_ID, policy="toy_net", wandb_project=None)


def test_a_family_without_material_is_refused_in_one_line(any_model, tmp_path):
    assert training_material(ONSET_ID) == TrainingMaterial()
    with pytest.raises(
        ValueError, match=r"SFT demonstrations exist for \[.*Hear2Act.*\], not 'hear_gym/Onset"
    ):
        sft.SFTSettings(out=tmp_path / "s", model=any_model, env_id=ONSET_ID)
    with pytest.raises(ValueError, match="task must be one of .*hear2act_assent.*voicegate"):
        grpo.GRPOSettings(out=tmp_path / "g", model=any_model, task="onset_decision")
    with pytest.raises(ValueError, match="a chat agent plays saved text models on"):
        chat_agent(ONSET_ID)
    with pytest.raises(
        ValueError,
        match=r"audio SFT demonstrations exist for \['hear_gym/VoiceGate-v0'\], not 'hear_gym/Onset",
    ):
        audio_sft.AudioSFTSettings(out=tmp_path / "a", model=any_model, env_id=ONSET_ID)
    with pytest.raises(ValueError, match=r"task must be one of \['hear2act_assent', 'voicegate'\]"):
        audio_grpo.AudioGRPOSettings(out=tmp_path / "ag", model=any_model, task="onset_decision")
    with pytest.raises(ValueError, match="an audio chat agent plays saved audio models on"):
        audio_sft.audio_player(ONSET_ID)


def test_a_default_two_families_claim_must_be_named(toy_family, tmp_path):
    """The toy claims the dialogue default beside Hear2Act: a run must name its task; and a
    material that would be the default for what is not material is refused."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    with pytest.raises(
        ValueError, match="name the env: .*Hear2Act.* and .*Toy.* each declare itself the default"
    ):
        dialogue_grpo.DialogueGRPOSettings(out=tmp_path / "d", model=model)
    assert dialogue_grpo.DialogueGRPOSettings(
        out=tmp_path / "d", model=model, task="toy_dialogue", n_scenarios=1
    )
    with pytest.raises(ValueError, match=r"default_for names \['recipes'\]: not training material"):
        TrainingMaterial(default_for=frozenset({"recipes"}))
