"""verifiers' own evaluation loop plays every registered env through ``hear_gym.load_environment``
against a local OpenAI-compatible stub (scripted replies), and each episode's return and record
equal what hear-gym's own runner gives for the same episodes, seeds and replies; under audio
access the model receives the turn's clip as an ``input_audio`` WAV part."""

from __future__ import annotations

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import soundfile as sf

from hear_gym.core.registry import env_ids, family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.runner import run_evaluation

vf = pytest.importorskip("verifiers")
verifiers_integration = pytest.importorskip("hear_gym.integrations.verifiers")

import hear_gym  # noqa: E402

EPISODES = 3
SEED = 7
# Replies each family's parser reads (valid and malformed ones), cycled through by turn and shifted
# by the length of the episode's first message, so episodes of one env get different replies.
SCRIPTS = {
    "hear_gym/Hear2Act-v0": (
        "[ACTION: ASK] Is there anything about this option that doesn't work for you?",
        "[ACTION: RECOMMEND] [OPTION: 2] I recommend this one.",
        "[ACTION: CONFIRM] Great, I'll confirm it.",
        "not an action",
        "[ACTION: RECOMMEND] [OPTION: 5] I recommend this one.",
        "[ACTION: CONFIRM] Great, I'll confirm it.",
    ),
    "hear_gym/VoiceGate-v0": (
        "[Mute]",
        "Sure, I can help with that.",
        '<|TOOL|>{"name": "call_contact", "params": {"contact": "Mom"}}</|TOOL|>',
    ),
    "hear_gym/Onset-v0": ("Wait", "Wait", "Call-Tool", "Wait", "Ask-Clarify", "maybe later"),
    "hear_gym/DeliveryPlan-v0": (
        '{"evidence": [], "plan": {"rate": "mid", "pitch_level": "mid", "pitch_range": "low", "energy": '
        '"mid", "pause": "low", "contour": "fall", "voice_quality": "modal", "emphasis": []}}',
        "{}",
    ),
    "hear_gym/Ambiguity-v0": ("A", "B", "C", "Z"),
}
CELL_OPTIONS = {"hear_gym/Hear2Act-v0": {"feedback": "prosody"}}  # a family's per-cell options


def scripted_reply(env_id: str, turn: int, first_text: str) -> str:
    script = SCRIPTS[env_id]
    return script[(turn + len(first_text)) % len(script)]


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


class _Stub(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: the scripted reply for the env its system message names, the
    turn (assistant messages so far) and the first user message."""

    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        messages = body["messages"]
        env_id = next(e for e in SCRIPTS if e in _text(messages[0]["content"]))
        first_user = next(m for m in messages if m["role"] == "user")
        turn = sum(m["role"] == "assistant" for m in messages)
        reply = scripted_reply(env_id, turn, _text(first_user["content"]))
        answer = {
            "id": f"stub-{len(type(self).requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    thread.join(timeout=10)


class ScriptedAgent:
    """The stub's policy as a hear-gym text agent: it reads the first observation as the
    verifiers env shows it, then replies by turn."""

    action_format = "text"

    def __init__(self, env_id: str, access: str):
        self.env_id, self.required_access, self.hears = env_id, access, "A" in access.split("+")

    def reset(self, seed=None):
        self.turn, self.first_text = 0, None

    def act(self, observation):
        if self.first_text is None:
            first = verifiers_integration.observation_message(observation, {}, self.hears)
            self.first_text = _text(first["content"])
        reply = scripted_reply(self.env_id, self.turn, self.first_text)
        self.turn += 1
        return reply


def _runner(env_id: str, access: str, item_ids: list[str], out) -> dict[str, dict]:
    options = CELL_OPTIONS.get(env_id, {})
    config = RunConfig(
        env_id, (Cell("scripted", access, tuple(options.items())),), tuple(item_ids), seed=SEED
    )
    results = run_evaluation(out, config, {"scripted": lambda: ScriptedAgent(env_id, access)}, progress=False)
    return {r["item_id"]: r for r in map(json.loads, results.read_text().splitlines())}


def _verifiers(env_id: str, access: str, url: str, episodes: int = EPISODES) -> list[dict]:
    options = CELL_OPTIONS.get(env_id, {})
    env = vf.load_environment(
        "hear-gym", env=env_id, access=access, num_episodes=episodes, seed=SEED, **options
    )
    client = vf.ClientConfig(api_base_url=url, api_key_var="HEAR_GYM_STUB_KEY")
    outputs = env.evaluate_sync(
        client, "stub-model", num_examples=episodes, state_columns=["info", "hear_gym_episode"]
    )
    return list(outputs["outputs"])


RUN_FIELDS = {"key", "cell", "agent", "access", "item_id", "rollout", "seed"}


@pytest.mark.parametrize("env_id", env_ids())
def test_verifiers_eval_returns_equal_the_runners(env_id, stub, tmp_path, monkeypatch):
    monkeypatch.setenv("HEAR_GYM_STUB_KEY", "stub")
    access = "T"
    played = _verifiers(env_id, access, stub)
    item_ids = [o["info"]["item_id"] for o in played]
    assert len(set(item_ids)) == EPISODES
    reference = _runner(env_id, access, item_ids, tmp_path / "run")
    scalars = family(env_id).episode_scalars
    for output in played:
        record = reference[output["info"]["item_id"]]
        assert output["info"]["seed"] == record["seed"]
        assert output["reward"] == pytest.approx(scalars(record)["return"], abs=1e-9)
        own = {k: v for k, v in record.items() if k not in RUN_FIELDS | set(CELL_OPTIONS.get(env_id, {}))}
        episode = json.loads(json.dumps(output["hear_gym_episode"], default=str))
        # an env's own record may name its item too (a run field as well): it must be the same one
        assert episode.pop("item_id", record["item_id"]) == record["item_id"]
        assert episode == own
        assert output["metrics"]["played_out"] == 0


def test_audio_access_sends_the_clip_as_an_input_audio_wav(stub, monkeypatch):
    import gymnasium as gym

    monkeypatch.setenv("HEAR_GYM_STUB_KEY", "stub")
    env_id = "hear_gym/Onset-v0"
    _Stub.requests.clear()
    played = _verifiers(env_id, "A", stub, episodes=1)
    first_request = _Stub.requests[0]
    part = next(p for p in first_request["messages"][1]["content"] if p["type"] == "input_audio")
    clip, rate = sf.read(io.BytesIO(base64.b64decode(part["input_audio"]["data"])), dtype="float32")
    local = gym.make(env_id, access="A", actions="text")
    item_id = played[0]["info"]["item_id"]
    observation, _ = local.reset(
        seed=played[0]["info"]["seed"], options=family(env_id).reset_options(item_id)
    )
    expected = observation["audio"][: int(observation["audio_length"][0])]
    assert rate == 16_000 and clip.shape == expected.shape
    assert np.max(np.abs(clip - expected)) <= 1 / 32767 + 1e-7  # the same clip, quantized to 16 bits


def test_load_environment_refuses_what_it_cannot_play():
    with pytest.raises(ValueError, match="access must be one of"):
        hear_gym.load_environment(env="hear_gym/Onset-v0", access="X")
    with pytest.raises(ValueError, match="must not set actions"):
        hear_gym.load_environment(env="hear_gym/Onset-v0", actions="discrete")
    with pytest.raises(ValueError, match="train_split must be one of"):
        hear_gym.load_environment(env="hear_gym/Onset-v0", train_split="nope")
    with pytest.raises(ValueError, match="split must be one of"):
        hear_gym.load_environment(env="hear_gym/Onset-v0", split="nope")
