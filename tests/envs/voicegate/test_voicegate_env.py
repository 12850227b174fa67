"""VoiceGate scenes (levels, fades, gaps, rooms, the room-tone bed, determinism in and across
processes) and the env (observations, ground truth in info only, rewards, judge, access
conditions, bad kwargs)."""

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import hear_gym  # noqa: F401  (registers the ids)
from hear_gym.envs.voicegate.actions import ANSWER0, MUTE, TOOL0, format_tool_call
from hear_gym.envs.voicegate.items.generator import select_items
from hear_gym.envs.voicegate.items.pools import TOOL_NAMES
from hear_gym.envs.voicegate.scenes import LEAD_MS, NOISE_DBFS, TAIL_MS, render_item, room_tone
from hear_gym.envs.voicegate.scoring import JudgeLabel, KeywordJudge
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import SAMPLE_RATE, make_renderer
from hear_gym.speech.scene import rms_dbfs

FRESH_RENDER = (
    "from hear_gym.envs.voicegate.items.generator import select_items; "
    "from hear_gym.speech.cache import RenderCache; from hear_gym.envs.voicegate.scenes import render_item; "
    "from hear_gym.speech.renderers import make_renderer; "
    "print(render_item(select_items('speaker_switch', 'test', ('switch',))[3], "
    "RenderCache(make_renderer('espeak')))[1]['pcm16_sha256'])"
)


@pytest.fixture(scope="module")
def cache():
    return RenderCache(make_renderer("espeak"))


def _pair(condition):
    return next(i for i in select_items("speaker_switch", "test", (condition,)))


def test_segments_are_normalized_faded_and_gapped_over_room_tone(cache):
    item = _pair("switch")
    wave, manifest = render_item(item, cache)
    bed = room_tone(item, len(wave))
    speech = wave - bed  # the segments and gaps without the bed
    context, trigger = manifest["segments"]
    assert context["start_s"] == LEAD_MS / 1000
    assert manifest["duration_s"] == trigger["end_s"] + TAIL_MS / 1000
    for seg in (context, trigger):
        start, end = round(seg["start_s"] * SAMPLE_RATE), round(seg["end_s"] * SAMPLE_RATE)
        assert abs(rms_dbfs(wave[start:end]) + 20) < 0.2
        assert abs(speech[start]) < 1e-3 and abs(speech[end - 1]) < 1e-3  # 5 ms fades
    gap = slice(round(context["end_s"] * SAMPLE_RATE), round(trigger["start_s"] * SAMPLE_RATE))
    # the inserted 600 ms after the speaker's own sentence pause (the renderer's clause pause)
    pause_ms = context["sentence_pause_ms"]
    assert 100 <= pause_ms <= 300 and "sentence_pause_ms" not in trigger
    assert gap.stop - gap.start == round(SAMPLE_RATE * (600 + pause_ms) / 1000)
    assert np.abs(speech[gap]).max() < 1e-6
    assert abs(rms_dbfs(wave[gap]) - NOISE_DBFS) < 2  # the gap is room tone, not digital silence
    assert manifest["boundaries_s"] == [trigger["start_s"]]
    assert trigger["room"]["drr_db"] < context["room"]["drr_db"] - 10  # far field vs near
    assert (trigger["voice"], trigger["placement"]) == (item.segments[1].voice, "far")


def test_room_tone_is_under_the_whole_input_and_stationary(cache):
    item = _pair("same_speaker")
    wave, manifest = render_item(item, cache)
    assert manifest["noise"]["kind"] == "pink" and abs(manifest["noise"]["rms_dbfs"] - NOISE_DBFS) < 1.5
    lead, tail = wave[: round(LEAD_MS * 16)], wave[-round(TAIL_MS * 16) :]
    assert abs(rms_dbfs(lead) - NOISE_DBFS) < 3 and abs(rms_dbfs(tail) - NOISE_DBFS) < 3
    bed = room_tone(item, len(wave))
    quarters = [rms_dbfs(q) for q in np.array_split(bed, 4)]
    assert max(quarters) - min(quarters) < 3  # the same level everywhere
    longer = room_tone(item, len(wave) + 5 * SAMPLE_RATE)
    assert np.array_equal(longer[: len(wave)], bed)  # a longer bed continues the input's
    other = render_item(_pair("switch"), cache)[0]
    assert not np.array_equal(room_tone(select_items("self_talk", "test")[0], 1000), bed[:1000])
    n = round(manifest["segments"][0]["end_s"] * SAMPLE_RATE)
    assert np.array_equal(wave[:n], other[:n])  # a pair shares its bed: only the condition differs


def test_rendering_is_deterministic_with_a_fresh_cache_and_in_a_fresh_process(cache):
    item = select_items("side_talk", "test")[0]
    first = render_item(item, cache)[1]["pcm16_sha256"]
    assert render_item(item, RenderCache(make_renderer("espeak")))[1]["pcm16_sha256"] == first
    switch = render_item(select_items("speaker_switch", "test", ("switch",))[3], cache)[1]["pcm16_sha256"]
    there = subprocess.run([sys.executable, "-c", FRESH_RENDER], capture_output=True, text=True, check=True)
    assert there.stdout.strip() == switch


def test_same_speaker_and_switch_share_the_context_audio(cache):
    same, _ = render_item(_pair("same_speaker"), cache)
    switch, manifest = render_item(_pair("switch"), cache)
    n = round(manifest["segments"][0]["end_s"] * SAMPLE_RATE)
    trigger = round(manifest["segments"][0]["sentence_pause_ms"] * SAMPLE_RATE / 1000) + n
    assert np.array_equal(same[:trigger], switch[:trigger])  # the context and the sentence pause
    assert not np.array_equal(same[trigger : trigger + 1000], switch[trigger : trigger + 1000])


def test_observation_hides_ground_truth_and_info_holds_it():
    env = gym.make("hear_gym/VoiceGate-v0", family="speaker_switch")
    obs, info = env.reset(seed=3)
    assert set(obs) == {"audio", "audio_length", "transcript", "tools", "action_mask"}
    assert info["item"]["target"]["kind"] in ("tool", "mute") and "target" not in obs
    assert [t["name"] for t in __import__("json").loads(obs["tools"])] == list(TOOL_NAMES)


def test_text_only_items_have_no_audio_and_audio_is_padded_with_its_room_tone():
    env = gym.make("hear_gym/VoiceGate-v0", conditions=["text_only"])
    obs, _ = env.reset(seed=0)
    assert (
        obs["audio_length"].shape == (1,)
        and obs["audio_length"][0] == 0
        and not obs["audio"].any()
        and obs["transcript"]
    )
    env = gym.make("hear_gym/VoiceGate-v0", conditions=["switch"])
    obs, info = env.reset(seed=0)
    length, item = int(obs["audio_length"][0]), env.unwrapped.item
    assert np.array_equal(obs["audio"][:length], env.unwrapped.item_audio()[0])
    assert np.array_equal(obs["audio"][length:], room_tone(item, len(obs["audio"]))[length:])


def test_rewards_follow_the_paper():
    env = gym.make("hear_gym/VoiceGate-v0", actions="text", conditions=["switch"])
    env.reset(seed=0)
    assert env.step("[Mute]")[1] == 1.0
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("Sure [Mute]")  # malformed, but no tool syntax
    assert (reward, terminated, info["outcome"]["action"]["kind"]) == (-1.0, True, "malformed")
    env.reset(seed=0)
    assert env.step("<|TOOL|>{}</|TOOL|>")[1] == pytest.approx(-1.2)  # malformed tool syntax
    env.reset(seed=0)
    tool_name = env.unwrapped.item.utterances[1].tool
    _, reward, _, _, info = env.step(format_tool_call(tool_name, {}))
    assert reward == -1.0 and info["outcome"]["false_execution"]
    same = gym.make("hear_gym/VoiceGate-v0", actions="text", conditions=["same_speaker"], access="T")
    same.reset(seed=0)
    other_tool = next(t for t in TOOL_NAMES if t != same.unwrapped.item.target.tool)
    info = same.step(format_tool_call(other_tool, {}))[4]  # a wrong selection, not a false execution
    assert not info["outcome"]["correct"] and not info["outcome"]["false_execution"]


def test_side_talk_answers_are_judged():
    item = next(i for i in select_items("side_talk", "test") if i.target.kind.value == "answer")
    assistant = item.utterances[item.target.utterance]
    other = item.utterances[1 - item.target.utterance]
    judge = KeywordJudge()
    assert judge.label(item, f"About {' '.join(assistant.topic_words)}: here you go.") is JudgeLabel.ASSISTANT
    assert judge.label(item, "I cannot help with that.") is JudgeLabel.NEITHER
    if other.topic_words:
        both = " ".join(assistant.topic_words + other.topic_words)
        assert judge.label(item, both) is JudgeLabel.BOTH
    for reward in ("paper", "judged"):
        env = gym.make("hear_gym/VoiceGate-v0", family="side_talk", reward=reward)
        env.reset(options={"item_id": item.item_id})
        right = env.step(ANSWER0 + item.target.utterance)
        env.reset(options={"item_id": item.item_id})
        wrong = env.step(ANSWER0 + 1 - item.target.utterance)
        assert right[4]["outcome"]["correct"] and not wrong[4]["outcome"]["correct"]
        assert (right[1], wrong[1]) == ((0.5, 0.5) if reward == "paper" else (1.0, -1.0))


def test_side_talk_cue_option_reaches_the_rendered_audio():
    placements = {}
    for cue in ("none", "turned_away"):
        env = gym.make("hear_gym/VoiceGate-v0", family="side_talk", side_talk_cue=cue)
        _, info = env.reset(options={"index": 0})
        placements[cue] = [s["placement"] for s in info["manifest"]["segments"]]
        assert info["item"]["cues"]["acoustic"] == cue
    assert placements["none"] == ["near", "near"]
    assert sorted(placements["turned_away"]) == ["near", "turned_away"]


def test_access_a_hides_words_and_t_renders_no_audio():
    obs, _ = gym.make("hear_gym/VoiceGate-v0", access="A", conditions=["switch"]).reset(seed=1)
    assert obs["transcript"] == "[speech]" and obs["audio_length"][0] > 0
    obs, _ = gym.make("hear_gym/VoiceGate-v0", access="A", conditions=["text_only"]).reset(seed=1)
    assert obs["transcript"] != "[speech]"  # a text-only input has nothing else
    env = gym.make("hear_gym/VoiceGate-v0", access="T")
    obs, info = env.reset(seed=1)
    assert set(obs) == {"transcript", "tools", "action_mask"} and "manifest" not in info
    assert env.unwrapped._audio is None  # nothing was rendered


def test_bad_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="speaker_switch"):
        gym.make("hear_gym/VoiceGate-v0", family="speaker-switch")
    with pytest.raises(ValueError, match="unknown speaker_switch condition"):
        gym.make("hear_gym/VoiceGate-v0", conditions=["swtich"])
    with pytest.raises(ValueError, match="reward"):
        gym.make("hear_gym/VoiceGate-v0", reward="dense")
    with pytest.raises(ValueError, match="side_talk_cue must be one of"):
        gym.make("hear_gym/VoiceGate-v0", family="side_talk", side_talk_cue="whispered")
    env = gym.make("hear_gym/VoiceGate-v0").unwrapped
    with pytest.raises(KeyError, match="not in this env"):
        env.reset(options={"item_id": "nope"})
    with pytest.raises(ValueError, match="one of"):
        env.reset(options={"seed": 3})
    with pytest.raises(RuntimeError, match="reset"):
        env.step(MUTE)
    env.reset(seed=0)
    env.step(TOOL0)
    with pytest.raises(RuntimeError, match="has ended"):
        env.step(MUTE)


def test_llm_judge_hook_plugs_into_the_env():
    from agents.llm.clients import MockChatClient
    from agents.voicegate.judge import JudgeError, LLMJudge

    item = next(i for i in select_items("side_talk", "test") if i.target.kind.value == "answer")
    assistant_text = item.utterances[item.target.utterance].text
    judge = LLMJudge(MockChatClient(lambda m: "Assistant." if assistant_text in m[0]["content"] else "?"))
    env = gym.make("hear_gym/VoiceGate-v0", family="side_talk", actions="text", judge=judge)
    env.reset(options={"item_id": item.item_id})
    info = env.step("Here is my answer.")[4]
    assert info["outcome"]["judge_label"] == "assistant" and info["outcome"]["correct"]
    with pytest.raises(JudgeError, match="expected one of"):
        LLMJudge(MockChatClient(lambda m: "maybe")).label(item, "hi")


def test_feature_observation_grants_each_condition_its_channel():
    import hear_gym.envs.voicegate.features as gf

    made = {
        a: gym.make("hear_gym/VoiceGate-v0", access=a, observation="features", conditions=["switch"])
        for a in ("T", "A+T", "A")
    }
    obs = {a: env.reset(seed=3)[0] for a, env in made.items()}
    assert set(obs["T"]) == {"words", "action_mask"}
    assert set(obs["A+T"]) == set(obs["A"]) == {"words", "has_audio", "change", "action_mask"}
    assert obs["A+T"]["has_audio"][0] == 1.0 and obs["A+T"]["change"].any()
    assert np.array_equal(obs["A+T"]["change"], obs["A"]["change"])
    assert np.array_equal(obs["T"]["words"], obs["A+T"]["words"])  # the command's words
    assert np.array_equal(obs["A"]["words"], gf.hashed_words("[speech]", gf.WORD_BINS))  # hidden
    text_only = gym.make(
        "hear_gym/VoiceGate-v0", access="A+T", observation="features", conditions=["text_only"]
    )
    first, _ = text_only.reset(seed=3)
    assert first["has_audio"][0] == 0.0 and not first["change"].any() and first["words"].any()


def test_unknown_split_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"one of \('train', 'test'\)"):
        gym.make("hear_gym/VoiceGate-v0", split="dev")
