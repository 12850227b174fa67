import gymnasium as gym
import numpy as np
import pytest

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.core.text import to_charset
from hear_gym.envs.hear2act.actions import ASK_GENERAL, RECOMMEND0
from hear_gym.envs.hear2act.audio import AFFECT_LABELS, user_turn_request
from hear_gym.envs.hear2act.user.states import RESOLVED_DELIVERY_LABELS
from hear_gym.speech.renderers import EspeakRenderer, PraatRenderer

SCENARIO = "budget_airline_tickets-00"


def make(**kwargs):
    return gym.make("hear_gym/Hear2Act-v0", item_ids=[SCENARIO], **kwargs)


@pytest.mark.parametrize("renderer", [EspeakRenderer(), PraatRenderer()], ids=lambda r: r.name)
def test_audio_is_the_rendered_user_turn(renderer):
    env = make(access="A+T", renderer=renderer.name)
    obs, info = env.reset(seed=3)
    record = info["turn_record"]
    request = user_turn_request(SCENARIO, record["user_text"], record["delivery_label"])
    expected = renderer.render(request).waveform
    n = int(obs["audio_length"][0])
    assert n == len(expected) and np.array_equal(obs["audio"][:n], expected)
    assert not obs["audio"][n:].any() and obs["audio"].shape == (MAX_AUDIO_SAMPLES,)
    assert "That won't work" in obs["transcript"] or obs["last_user_utterance"] in obs["transcript"]


def test_audio_only_hides_the_users_words():
    env = make(access="A")
    obs, _ = env.reset(seed=0)
    user_lines = [line for line in obs["transcript"].splitlines() if line.startswith("User: ")]
    assert user_lines == ["User: [speech]"] * 2 and obs["last_user_utterance"] == "[speech]"
    assert "[ACTION: RECOMMEND]" in obs["transcript"] and obs["audio_length"][0] > 0


class SpyInferrer:
    def __init__(self):
        self.calls = []

    def infer(self, waveform, sample_rate, transcript, reference):
        self.calls.append((waveform, sample_rate, transcript, reference))
        return "The user sounds hesitant."


def test_inferred_state_sees_audio_and_context_only():
    spy = SpyInferrer()
    env = make(access="T+S^", state_inferrer=spy)
    obs, _ = env.reset(seed=0)
    assert obs["inferred_state"] == "The user sounds hesitant." and "audio" not in obs
    waveform, rate, transcript, reference = spy.calls[-1]
    assert rate == 16_000 and waveform.ndim == 1 and transcript == obs["transcript"]
    assert reference.ndim == 1 and len(reference) != len(waveform)  # the opening request
    with pytest.raises(ValueError, match="needs state_inferrer"):
        make(access="T+S^")


class FixedInferrer:
    def __init__(self, text):
        self.text = text

    def infer(self, waveform, sample_rate, transcript, reference):
        return self.text


def test_inferred_state_is_folded_into_the_observation_charset():
    text = "The user sounds\n \ud800hesitant\u2026 \U0001f600"
    env = make(access="T+S^", state_inferrer=FixedInferrer(text))
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs["inferred_state"] == to_charset(text).strip() and "hesitant..." in obs["inferred_state"]
    for unusable in ("\ud800\U0001f600", " ", None):
        with pytest.raises(ValueError, match="non-empty sentence"):
            make(access="T+S^", state_inferrer=FixedInferrer(unusable)).reset(seed=0)


def test_affect_label_must_be_one_of_four():
    class Bad:
        def classify(self, waveform, sample_rate):
            return "relieved"

    class Good:
        def classify(self, waveform, sample_rate):
            return "sad"

    obs, _ = make(access="T+SER", affect_classifier=Good()).reset(seed=0)
    assert obs["affect"] == "sad" and set(AFFECT_LABELS) == {"happy", "sad", "angry", "neutral"}
    with pytest.raises(ValueError, match="not one of"):
        make(access="T+SER", affect_classifier=Bad()).reset(seed=0)


def _labels(env, actions, seed=0):
    obs, info = env.reset(seed=seed)
    seen, truth = [obs["concern_state"]], [info["delivery_label"]]
    for a in actions:
        obs, _, terminated, truncated, info = env.step(a)
        seen.append(obs["concern_state"])
        truth.append(info["delivery_label"])
        if terminated or truncated:
            break
    return seen, truth


def test_label_fidelity_interventions():
    actions = [RECOMMEND0 + i for i in range(11)] + [ASK_GENERAL] * 5
    seen, _ = _labels(make(access="T+S", state_intervention="all_resolved"), actions)
    assert set(seen) == {"satisfied"}
    seen, _ = _labels(make(access="T+S", state_intervention="all_unresolved"), actions)
    assert set(seen) == {"concerned"}
    seen, truth = _labels(make(access="T+S", state_intervention="shuffled"), actions)
    assert all(label in truth[: i + 1] for i, label in enumerate(seen))  # drawn from its own history
    assert seen != truth and set(seen) <= set(truth)
    assert _labels(make(access="T+S", state_intervention="shuffled"), actions) == (seen, truth)
    assert any(label in RESOLVED_DELIVERY_LABELS for label in truth)
    with pytest.raises(ValueError, match="needs the T\\+S state channel"):
        make(access="T", state_intervention="shuffled")
    with pytest.raises(ValueError, match="must be one of"):
        make(access="T+S", state_intervention="random")


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
@pytest.mark.parametrize("mode", ["all_resolved", "all_unresolved", "shuffled"])
def test_interventions_pass_the_env_checker(mode):
    from gymnasium.utils.env_checker import check_env

    check_env(make(access="T+S", state_intervention=mode))
