"""The registered families under ``renderer="neural"`` (the optional extra ``hear-gym[neural]``, part
of the dev install): the families that speak through the speech layer's renderers build with it
and give identical episodes, audio included, in one process and across processes; Ambiguity, whose
readings need eSpeak, refuses it by name."""

import json
import subprocess
import sys

import gymnasium as gym
import pytest
from test_all_envs import rollout

from hear_gym.core.registry import env_ids

NEURAL_FAMILIES = (
    "hear_gym/Hear2Act-v0",
    "hear_gym/VoiceGate-v0",
    "hear_gym/DeliveryPlan-v0",
    "hear_gym/Onset-v0",
)
AUDIO_ACCESS = "A+T"


def test_the_neural_families_are_registered():
    assert set(NEURAL_FAMILIES) <= set(env_ids())


@pytest.mark.parametrize("env_id", NEURAL_FAMILIES)
def test_builds_on_neural(env_id):
    env = gym.make(env_id, access=AUDIO_ACCESS, renderer="neural")
    assert "audio" in env.observation_space.spaces


def test_ambiguity_refuses_neural_by_name():
    with pytest.raises(ValueError, match="cannot render with 'neural'.*no word timing"):
        gym.make("hear_gym/Ambiguity-v0", access=AUDIO_ACCESS, renderer="neural")


@pytest.mark.slow  # a few seconds of neural speech per family, twice
@pytest.mark.parametrize("env_id", NEURAL_FAMILIES)
def test_same_seed_same_episodes_across_processes_on_neural(env_id):
    code = (
        "import json, sys; sys.path.insert(0, 'tests'); from test_all_envs import rollout; "
        f"print(json.dumps(rollout({env_id!r}, {AUDIO_ACCESS!r}, 'discrete', 'dict', 11, 8, renderer='neural')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = rollout(env_id, AUDIO_ACCESS, "discrete", "dict", 11, 8, renderer="neural")
    assert (
        json.loads(out.stdout)
        == here
        == rollout(env_id, AUDIO_ACCESS, "discrete", "dict", 11, 8, renderer="neural")
    )
    assert here != rollout(env_id, AUDIO_ACCESS, "discrete", "dict", 11, 8)  # eSpeak's audio differs
