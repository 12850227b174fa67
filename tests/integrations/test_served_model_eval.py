"""A model served by a local OpenAI-compatible server, evaluated with ``hear-gym eval`` on every
registered env id: each family's text agent (``llm@T``) and audio agent (``audio_llm@A+T``,
hearing the env's audio as base64 WAV ``input_audio`` parts). The server
(``tests/openai_stub.py``) hosts the tiny Qwen2-Audio fixture (``tests/real_models``) through
``TransformersAudioChatClient``: random weights, so the replies are malformed and the numbers say
nothing about skill; what is checked is the path from env to server and back."""

from __future__ import annotations

import json
import threading

import pytest
from openai_stub import StubServer
from typer.testing import CliRunner

from agents.llm.clients import TransformersAudioChatClient
from hear_gym.cli.app import app
from hear_gym.core.registry import env_ids

EPISODES = 2
ENV_OPTIONS = {"hear_gym/Hear2Act-v0": ["--feedback", "prosody", "--max-turns", "3"]}


def served(model: str):
    """A stub server's answer function that asks the hosted model (one request at a time: a
    local model is not thread-safe)."""
    client = TransformersAudioChatClient(model, max_new_tokens=8, device="cpu")
    lock = threading.Lock()

    def answer(messages, _clips) -> str:
        with lock:
            return client.complete([messages])[0]

    return answer


@pytest.mark.slow  # about a minute: five envs' speech, a served model
def test_a_served_model_is_evaluated_on_every_env_id_hearing_the_audio(real_models, tmp_path):
    summary = {}
    with StubServer(served(str(real_models("audio")))) as server:
        for env_id in env_ids():
            seen = len(server.requests)
            out = tmp_path / env_id.split("/")[1]
            result = CliRunner().invoke(
                app,
                ["eval", "--env", env_id, "--out", str(out), "--cell", "llm@T", "--cell", "audio_llm@A+T"]
                + ["--split", "test", "--limit", str(EPISODES), "--batch-size", "2", "--no-progress"]
                + ["--llm-client", f"openai:{server.url}@tiny?concurrency=4&timeout=60"]
                + ENV_OPTIONS.get(env_id, []),
            )
            assert result.exit_code == 0, (env_id, result.output)
            records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
            cells = sorted({r["cell"].split("/")[0] for r in records})  # Hear2Act's name the feedback too
            assert len(records) == 2 * EPISODES and cells == ["audio_llm@A+T", "llm@T"]
            bodies = server.requests[seen:]
            audio = [
                sum(
                    p.get("type") == "input_audio"
                    for m in b["messages"]
                    if isinstance(m["content"], list)
                    for p in m["content"]
                )
                for b in bodies
            ]
            assert max(audio) == 1 and audio.count(1) >= EPISODES  # the audio agent's turns, one clip each
            assert audio.count(0) >= EPISODES  # the text agent's
            summary[env_id] = {
                "requests": len(bodies),
                "with_audio": audio.count(1),
                "episodes": len(records),
            }
    assert set(summary) == set(env_ids())
    print(json.dumps(summary, indent=1))
