"""What VoiceGate computes once per item or group and reuses (no work repeated per step
that depends only on the episode): the room-tone bed, the rendered input, the item's record, the
tools' validators, a Discrete decision's outcome; and that reusing them hands no caller anything
another caller can change."""

from types import SimpleNamespace

import gymnasium as gym
import jsonschema
import numpy as np

import hear_gym  # noqa: F401  (registers the ids)
from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.envs.voicegate import env as env_module
from hear_gym.envs.voicegate import scenes, scoring
from hear_gym.envs.voicegate.actions import TOOL0, decode
from hear_gym.envs.voicegate.items import model
from hear_gym.envs.voicegate.items.generator import select_items
from hear_gym.envs.voicegate.items.pools import TOOL_NAMES
from hear_gym.envs.voicegate.scoring import score
from hear_gym.speech.renderers import SAMPLE_RATE
from hear_gym.speech.scene import pink_noise


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_group_draws_its_room_tone_bed_once_with_the_bytes_of_a_fresh_draw(monkeypatch):
    scenes._bed.cache_clear()
    draws = _counting(monkeypatch, scenes, "pink_noise")
    switch, same = (select_items("speaker_switch", "test", (c,))[0] for c in ("switch", "same_speaker"))
    assert switch.group == same.group
    beds = [
        scenes.room_tone(switch, 1_000),
        scenes.room_tone(same, MAX_AUDIO_SAMPLES),
        scenes.room_tone(switch, 7),
    ]
    assert len(draws) == 1  # one bed for the group, whatever the length asked
    for bed in beds:
        fresh = pink_noise(
            len(bed),
            np.random.default_rng(scenes._noise_seed(switch.group)),
            scenes.NOISE_DBFS,
            scenes.NOISE_HIGHPASS_HZ,
        )
        assert fresh.tobytes() == bed.tobytes()
    longer = scenes.room_tone(switch, MAX_AUDIO_SAMPLES + SAMPLE_RATE)  # beyond the cached length
    assert longer[:MAX_AUDIO_SAMPLES].tobytes() == beds[1].tobytes()
    assert not beds[0].flags.writeable  # shared: nobody may write into it


def test_an_env_renders_an_item_once_and_its_observations_and_manifests_stay_its_own(monkeypatch):
    renders = _counting(monkeypatch, env_module, "render_item")
    env = gym.make("hear_gym/VoiceGate-v0", conditions=["switch"])
    item_id = env.unwrapped.items[0].item_id
    first, info = env.reset(options={"item_id": item_id})
    info["manifest"]["segments"][0]["voice"] = "edited by the caller"
    first["audio"][:] = 0.0
    step_obs, _, _, _, step_info = env.step(0)
    again, again_info = env.reset(options={"item_id": item_id})
    assert len(renders) == 1
    assert again["audio"].any() and np.array_equal(again["audio"], step_obs["audio"])
    assert again_info["manifest"] == step_info["manifest"]
    assert again_info["manifest"]["segments"][0]["voice"] != "edited by the caller"


def test_an_item_builds_its_record_once_and_each_caller_gets_its_own_copy(monkeypatch):
    item = select_items("speaker_switch", "test", ("switch",))[1]
    built = _counting(monkeypatch, model, "asdict")
    first, second = item.as_record(), item.as_record()
    assert sum(1 for args in built if args[0] is item) <= 1
    assert first == second
    first["utterances"][0]["text"] = "edited by the caller"
    first["segments"].append("more")
    assert item.as_record() == second and item.as_record()["utterances"][0]["text"] != "edited by the caller"


def test_scoring_builds_a_tools_parameter_validator_once(monkeypatch):
    built = []

    def counted(schema):
        built.append(schema)
        return jsonschema.Draft202012Validator(schema)

    monkeypatch.setattr(scoring, "jsonschema", SimpleNamespace(Draft202012Validator=counted))
    item = select_items("speaker_switch", "test", ("switch",))[0]
    call = decode(TOOL0 + len(TOOL_NAMES) - 1, len(item.utterances))
    outcomes = [score(item, call) for _ in range(3)]
    assert len(built) <= 1 and outcomes[0] == outcomes[2]


def test_a_discrete_decision_is_scored_once_and_each_step_hands_out_its_own_info(monkeypatch):
    scored = _counting(monkeypatch, env_module, "score")
    env = gym.make("hear_gym/VoiceGate-v0", access="T", family="side_talk")
    base = env.unwrapped
    item_id = base.items[0].item_id
    results = []
    for _ in range(3):
        env.reset(options={"item_id": item_id})
        results.append(env.step(TOOL0))
    assert len(scored) == 1
    first_info = results[0][4]
    first_info["outcome"]["correct"] = "edited by the caller"
    first_info["item"]["utterances"].clear()
    assert results[1][4] == results[2][4] and results[1][4] is not results[2][4]
    assert (
        results[2][4]["outcome"]["correct"] != "edited by the caller" and results[2][4]["item"]["utterances"]
    )
    # what step_decoded (the path of text replies, scored every time) gives for the same action
    base.reset(options={"item_id": item_id})
    _, reward, _, _, decoded_info = base.step_decoded(decode(TOOL0, len(base.item.utterances)))
    assert (reward, decoded_info) == (results[2][1], results[2][4])


def test_a_kept_decision_names_the_rendered_input_only_when_it_was_rendered():
    base = gym.make("hear_gym/VoiceGate-v0", access="T").unwrapped
    item_id = base.items[0].item_id
    base.reset(options={"item_id": item_id})
    unheard = base.step(0)[4]["episode"]["audio"]
    base.reset(options={"item_id": item_id})
    _, manifest = base.item_audio()
    heard = base.step(0)[4]["episode"]["audio"]
    assert unheard == {} and heard == {k: manifest[k] for k in ("duration_s", "pcm16_sha256")}
