"""A served env answers user mistakes, over HTTP and the WebSocket alike, with one clear message
and leaves the session usable: bad resets on every registered env id, steps outside an episode,
oversized requests (413), text no UTF-8 can carry, and the optional shared token."""

from __future__ import annotations

import json

import numpy as np
import openenv_import
import pytest
from typer.testing import CliRunner

from hear_gym.cli.app import app
from hear_gym.core.registry import env_ids, family

openenv_integration = openenv_import.openenv_integration()
HearGymClient, ServedEnv = openenv_integration.HearGymClient, openenv_integration.ServedEnv
serving_in_thread, build_app = openenv_integration.serving_in_thread, openenv_integration.build_app

from fastapi.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from hear_gym.integrations.openenv.guards import MAX_REQUEST_BYTES, TOKEN_ENV  # noqa: E402

DELIVERYPLAN = "hear_gym/DeliveryPlan-v0"


def bad_resets(env_id: str) -> list[dict]:
    """Reset requests a user gets wrong (the wire form of ``test_reset_check.bad_resets``)."""
    return [
        {"seed": 3, "episode_id": "no-such-episode"},
        {"seed": 3, "episode_id": "../../etc/passwd"},
        {"seed": 3, "episode_id": ""},
        {"seed": 3, "options": {"no_such_option": 1}},
        {"seed": 3, "options": {**family(env_id).reset_options("x"), "index": 0}},
        {"seed": 3, "options": "item_id"},
        {"seed": 3, "options": {"index": list(range(1000))}},
        {"seed": 3, "shuffle": True},
    ]


def _legal(observation) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("env_id", env_ids())
def test_a_bad_reset_over_the_server_leaves_the_session_usable(env_id):
    served = ServedEnv(env_id, {"access": "T"})
    with serving_in_thread(served) as url, HearGymClient(url).sync() as client:
        for bad in bad_resets(env_id):
            with pytest.raises(RuntimeError) as refused:
                client._send_and_receive({"type": "reset", "data": bad})
            assert "EXECUTION_ERROR" in str(refused.value) and "Traceback" not in str(refused.value)
        result = client.reset(seed=3)
        result = client.step(_legal(client.decode(result.observation)))
        assert result.observation.metadata["info"] is not None


def _ws_error(ws, message: dict) -> str:
    ws.send_text(json.dumps(message))
    answer = json.loads(ws.receive_text())
    assert answer["type"] == "error", answer
    return answer["data"]["message"]


@pytest.fixture(scope="module")
def http():
    served = ServedEnv(DELIVERYPLAN, {"access": "T", "actions": "text"})
    with TestClient(build_app(served), raise_server_exceptions=False) as client:
        yield client


def test_http_answers_user_mistakes_with_4xx_and_the_websockets_message(http):
    with http.websocket_connect("/ws") as ws:
        for bad in bad_resets(DELIVERYPLAN):
            answer = http.post("/reset", json=bad)
            assert answer.status_code == 400, (bad, answer.text)
            assert answer.json()["detail"] == _ws_error(ws, {"type": "reset", "data": bad})
        answer = http.post("/step", json={"action": {"action": "{}"}})  # each HTTP call: a fresh env
        assert answer.status_code == 409
        assert answer.json()["detail"] == _ws_error(ws, {"type": "step", "data": {"action": "{}"}})
        assert answer.json()["detail"] == "step before reset: reset the session first"
    for bad in ({"seed": "x"}, {"seed": -1}, {"episode_id": 7}):
        answer = http.post("/reset", json=bad)
        assert answer.status_code == 422 and "input" not in answer.text, answer.text
    assert http.post("/step", json={"action": {"action": 3}}).status_code == 422
    assert (
        http.post("/reset", content=b"{not json", headers={"content-type": "application/json"}).status_code
        == 422
    )


def test_oversized_requests_get_413(http):
    big = [0] * 1_000_000  # 2 MB of JSON
    assert http.post("/step", json={"action": {"action": big}}).status_code == 413
    assert http.post("/reset", json={"options": {"index": big}}).status_code == 413
    body = b'{"seed": 1, "x": "' + b"a" * 50_000_000 + b'"}'
    assert http.post("/reset", content=body, headers={"content-type": "application/json"}).status_code == 413

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(MAX_REQUEST_BYTES // 65536 + 2):
            yield b" " * 65536

    answer = http.post("/reset", content=chunks(), headers={"content-type": "application/json"})
    assert answer.status_code == 413
    assert http.post("/reset", json={"seed": 1}).status_code == 200  # and the server goes on


def test_an_oversized_websocket_message_closes_that_session_only():
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    served = ServedEnv("hear_gym/Onset-v0", {"access": "T"})
    with serving_in_thread(served) as url:
        ws_url = url.replace("http://", "ws://") + "/ws"
        with connect(ws_url, max_size=None) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"seed": 1, "x": "a" * MAX_REQUEST_BYTES}}))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
            assert closed.value.rcvd.code == 1009
        with HearGymClient(url).sync() as client:  # the server goes on
            assert client.reset(seed=1).observation is not None


def test_a_lone_surrogate_is_a_malformed_reply_and_the_session_goes_on(http):
    with http.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(ws.receive_text())["type"] == "observation"
        ws.send_text(json.dumps({"type": "step", "data": {"action": "\ud800abc"}}))
        answer = json.loads(ws.receive_text())
        assert answer["type"] == "observation", answer
        info = answer["data"]["observation"]["metadata"]["info"]
        assert info["reply"] == "\\ud800abc" and info["malformed"] is True
        ws.send_text(json.dumps({"type": "state"}))
        assert json.loads(ws.receive_text())["data"]["step_count"] == 1
    body, json_type = b'{"action": {"action": "\\ud800abc"}}', {"content-type": "application/json"}
    answer = http.post("/step", content=body, headers=json_type)
    assert answer.status_code == 409  # read as a reply (each HTTP step: a fresh env), not a 500


def test_a_lone_surrogate_in_a_discrete_action_is_refused_and_the_session_goes_on():
    served = ServedEnv("hear_gym/Onset-v0", {"access": "T"})
    with TestClient(build_app(served)) as http, http.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 1}}))
        first = json.loads(ws.receive_text())["data"]["observation"]
        ws.send_text(json.dumps({"type": "step", "data": {"action": "\ud800abc"}}))
        answer = json.loads(ws.receive_text())
        assert answer["data"]["code"] == "VALIDATION_ERROR"
        ws.send_text(json.dumps({"type": "step", "data": {"action": _legal(first)}}))
        assert json.loads(ws.receive_text())["type"] == "observation"


def test_a_token_guards_every_endpoint_but_health(monkeypatch):
    served = ServedEnv("hear_gym/Onset-v0", {"access": "T"})
    with TestClient(build_app(served, token="s3cret")) as http:
        assert http.get("/health").status_code == 200
        for path in ("/schema", "/metadata", "/state"):
            assert http.get(path).status_code == 401
            assert http.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert http.get(path, headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert http.post("/reset", json={"seed": 1}).status_code == 401
        with pytest.raises(WebSocketDisconnect) as refused, http.websocket_connect("/ws"):
            pass
        assert refused.value.code == 1008
    with serving_in_thread(served, token="s3cret") as url:
        with pytest.raises(Exception, match="401"), HearGymClient(url).sync() as client:
            client.reset(seed=1)
        with HearGymClient(url, token="s3cret").sync() as client:
            assert client.reset(seed=1).observation is not None
        monkeypatch.setenv(TOKEN_ENV, "s3cret")  # the client reads the same variable as the server
        with HearGymClient(url).sync() as client:
            assert client.reset(seed=1).observation is not None
    with pytest.raises(ValueError, match="must not be empty"):
        build_app(served, token="")


def test_serve_takes_its_token_from_the_option_or_the_environment(monkeypatch):
    calls = []
    monkeypatch.setattr(openenv_integration, "serve", lambda served, **kwargs: calls.append(kwargs))
    base = ["serve", "--env", "hear_gym/Onset-v0", "--access", "T"]
    assert CliRunner().invoke(app, [*base, "--token", "abc"]).exit_code == 0
    assert CliRunner().invoke(app, base, env={TOKEN_ENV: "xyz"}).exit_code == 0
    assert CliRunner().invoke(app, base, env={TOKEN_ENV: ""}).exit_code == 0
    assert [call["token"] for call in calls] == ["abc", "xyz", None]
    empty = CliRunner().invoke(app, [*base, "--token", ""])
    assert empty.exit_code == 2 and "must not be empty" in empty.output


def test_a_server_at_its_memory_limit_refuses_new_sessions_and_says_why():
    """At or above ``memory_limit_mb`` (this process's resident memory, far over 1 MiB), a new
    WebSocket session gets OpenEnv's CAPACITY_REACHED answer naming the memory limit and close
    code 1013, and an HTTP /reset 503; under the limit both are served."""
    from hear_gym.integrations.openenv.limits import resident_mb

    served = ServedEnv("hear_gym/Onset-v0", {"access": "T"})
    with TestClient(build_app(served, memory_limit_mb=1)) as http:
        with http.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"seed": 1}}))
            answer = json.loads(ws.receive_text())
            assert answer["type"] == "error" and answer["data"]["code"] == "CAPACITY_REACHED", answer["type"]
            assert "memory limit" in answer["data"]["message"] and "limit 1 MiB" in answer["data"]["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
        assert closed.value.code == 1013
        refused = http.post("/reset", json={"seed": 1})
        assert refused.status_code == 503 and "memory limit" in refused.json()["detail"]
        assert http.get("/health").status_code == 200  # what builds no env is answered
    with TestClient(build_app(served, memory_limit_mb=resident_mb() + 4096)) as http:
        with http.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(ws.receive_text())["type"] == "observation"
        assert http.post("/reset", json={"seed": 1}).status_code == 200
    with pytest.raises(ValueError, match="positive number of MiB"):
        build_app(served, memory_limit_mb=0)
