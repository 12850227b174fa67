"""The OpenAI-compatible client against a local server that speaks the same schema
(``tests/openai_stub.py``): text and audio chats (audio as base64 WAV ``input_audio`` parts, one
per clip), requests in flight at once with replies kept in order, timeouts and 5xx retried,
schema errors not, and one-line errors."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import pytest
from openai_stub import StubServer

from agents.hear2act.llm import LLMAgent
from agents.hear2act.prompts import messages
from agents.llm.factory import client_from_spec, release_client
from agents.llm.loading import ChatClientError
from agents.llm.openai_client import OpenAIChatClient
from agents.voicegate.llm import AudioLLMGateAgent

SCENARIO = "budget_airline_tickets-00"


def _text(chat) -> str:
    return " ".join(p["text"] if isinstance(p, dict) else p for m in chat for p in _parts(m))


def _parts(message):
    content = message["content"]
    return [content] if isinstance(content, str) else [p for p in content if p["type"] == "text"]


def _ask(_messages, _clips) -> str:
    return "[ACTION: ASK] Anything else?"


def test_a_text_agent_plays_through_a_server_and_sends_the_chat_as_it_is():
    env = gym.make("hear_gym/Hear2Act-v0", actions="text", item_ids=[SCENARIO])
    obs, _ = env.reset(seed=0)
    with StubServer(_ask) as server:
        client = OpenAIChatClient(server.url, model="tiny", api_key="k", max_tokens=32)
        assert LLMAgent(client).act(obs) == "[ACTION: ASK] Anything else?"
    (body,) = server.requests
    assert body["model"] == "tiny" and body["temperature"] == 0.0 and body["max_tokens"] == 32
    assert body["messages"] == messages(obs)  # string contents go as they are


def test_an_audio_agent_sends_each_clip_as_a_wav_input_audio_part():
    env = gym.make("hear_gym/VoiceGate-v0", actions="text", access="A+T", conditions=["switch", "text_only"])
    observations = [env.reset(seed=s)[0] for s in range(4)]
    heard = []

    def answer(chat, clips):
        heard.append(clips)
        return "[Mute]"

    with StubServer(answer) as server:
        client = OpenAIChatClient(server.url, model="tiny", concurrency=1)  # requests arrive in order
        replies = AudioLLMGateAgent(client).act_batch(observations)
    assert replies == ["[Mute]"] * 4
    for body, clips, obs in zip(server.requests, heard, observations, strict=True):
        length = int(obs["audio_length"][0])
        parts = body["messages"][1]["content"]
        assert [p["type"] for p in parts] == (["input_audio", "text"] if length else ["text"])
        assert len(clips) == (1 if length else 0)  # one input_audio part per clip, none without audio
        if length:  # the clip, through 16-bit PCM
            assert len(clips[0]) == length
            assert np.abs(clips[0] - obs["audio"][:length]).max() <= 1.0 / 32767 + 1e-6
        assert parts[-1]["text"] == obs["transcript"]


def _numbered(chat, _clips) -> str:
    time.sleep(0.3)
    return _text(chat).split()[-1]


def test_requests_are_in_flight_together_and_replies_come_back_in_order():
    chats = [[{"role": "user", "content": f"reply {i}"}] for i in range(8)]
    with StubServer(_numbered) as server:
        start = time.perf_counter()
        replies = OpenAIChatClient(server.url, model="tiny", concurrency=4).complete(chats)
        seconds = time.perf_counter() - start
        assert replies == [str(i) for i in range(8)]
        assert server.in_flight_peak == 4  # never more than asked
        one_by_one = OpenAIChatClient(server.url, model="tiny", concurrency=1)
        server.in_flight_peak = 0
        assert one_by_one.complete(chats[:2]) == ["0", "1"] and server.in_flight_peak == 1
    assert seconds < 8 * 0.3  # not one after another (two rounds of four take ~0.6 s)


def test_a_slow_reply_times_out_and_is_retried():
    chat = [[{"role": "user", "content": "reply 7"}]]
    with StubServer(_numbered, faults=["slow"], slow_s=3.0) as server:
        assert OpenAIChatClient(server.url, model="tiny", timeout_s=1.0, retries=1).complete(chat) == ["7"]
        assert len(server.requests) == 2  # the timed-out request, then its retry
    with StubServer(_numbered, faults=["slow"], slow_s=3.0) as server:
        with pytest.raises(ChatClientError, match=r"failed: APITimeoutError"):
            OpenAIChatClient(server.url, model="tiny", timeout_s=1.0, retries=0).complete(chat)


def test_server_errors_are_retried_and_a_bad_request_is_not():
    chat = [[{"role": "user", "content": "reply 3"}]]
    with StubServer(_numbered, faults=[500, 503]) as server:
        assert OpenAIChatClient(server.url, model="tiny", retries=2).complete(chat) == ["3"]
        assert len(server.requests) == 3
    with StubServer(_numbered, faults=[503, 503]) as server:
        with pytest.raises(ChatClientError, match="InternalServerError") as failed:
            OpenAIChatClient(server.url, model="tiny", retries=1).complete(chat)
        assert "\n" not in str(failed.value) and len(server.requests) == 2
    with StubServer(_numbered) as server:
        with pytest.raises(ChatClientError, match="BadRequestError.*bad role 'robot'"):
            OpenAIChatClient(server.url, model="tiny", retries=3).complete(
                [[{"role": "robot", "content": "x"}]]
            )
        assert len(server.requests) == 1  # the schema error is the caller's: never retried


def test_the_spec_sets_the_client_and_an_absent_server_is_named():
    with StubServer(_ask) as server:
        spec = f"openai:{server.url}@tiny?concurrency=3&timeout=5&retries=0&max_tokens=16"
        client = client_from_spec(spec)
        assert (client.concurrency, client.max_tokens, client.model) == (3, 16, "tiny")
        assert client.client.max_retries == 0 and client.client.timeout == 5.0
        client.check()  # answers /models
        release_client(spec)
    with pytest.raises(ChatClientError, match="cannot reach the chat server at http://127.0.0.1:9/v1"):
        OpenAIChatClient("http://127.0.0.1:9/v1", model="tiny").check()


def test_a_missing_optional_package_is_one_line_naming_its_extra(monkeypatch):
    import sys

    from agents.extras import MissingExtra

    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    with pytest.raises(MissingExtra, match=r"needs openai: pip install 'hear-gym\[agents\]'") as missing:
        OpenAIChatClient("http://127.0.0.1:9/v1", model="tiny")
    assert "\n" not in str(missing.value)
