"""``hear-gym serve``: every registered env over a real local OpenEnv server (uvicorn in a thread,
started once per module) plays byte-identically to the same env in process for the same seed,
its audio as binary frames or as base64 in the JSON; bad actions, bad resets and abandoned
sessions are handled; ``max_concurrent_envs`` holds."""

from __future__ import annotations

import base64
import json
import socket
import sys
import time
from contextlib import ExitStack

import gymnasium as gym
import numpy as np
import openenv_import
import pytest
from typer.testing import CliRunner

from hear_gym.cli.app import app
from hear_gym.core.registry import env_ids, family

openenv_integration = openenv_import.openenv_integration()
HearGymClient, ServedEnv = openenv_integration.HearGymClient, openenv_integration.ServedEnv
serving_in_thread = openenv_integration.serving_in_thread

from hear_gym.integrations.openenv.codec import decode_observation, encode_observation  # noqa: E402


def _access(env_id: str) -> str:
    """Audio and text where the family has both (the richest observation), else its first."""
    conditions = family(env_id).access_conditions
    return "A+T" if "A+T" in conditions else conditions[0]


# name -> (env id, make kwargs, audio encoding, max_concurrent_envs)
SERVERS = {
    **{env_id: (env_id, {"access": _access(env_id)}, "float32", 2) for env_id in env_ids()},
    "onset-text-pcm16": ("hear_gym/Onset-v0", {"access": "A+T", "actions": "text"}, "pcm16", 1),
}


@pytest.fixture(scope="module")
def servers():
    with ExitStack() as stack:
        urls = {}
        for name, (env_id, kwargs, audio, most) in SERVERS.items():
            served = ServedEnv(env_id, kwargs, audio=audio)
            urls[name] = (served, stack.enter_context(serving_in_thread(served, max_concurrent_envs=most)))
        yield urls


def _same(received, expected) -> bool:
    """Same keys, and per key the same type, dtype, shape and bytes."""
    if received.keys() != expected.keys():
        return False
    for key, value in expected.items():
        got = received[key]
        if isinstance(value, np.ndarray):
            if not (
                got.dtype == value.dtype and got.shape == value.shape and got.tobytes() == value.tobytes()
            ):
                return False
        elif type(got) is not type(value) or got != value:
            return False
    return True


def _in_process(env_id, kwargs, seed, choose):
    """One episode in process: observations, rewards, terminated/truncated, the record."""
    env = gym.make(env_id, **kwargs)
    observation, _ = env.reset(seed=seed)
    trace, rng = [observation], np.random.default_rng(seed)
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(choose(observation, rng))
        trace.append((observation, reward, terminated, truncated))
        done = terminated or truncated
    return trace, info["episode"]


def _over_server(client, seed, choose):
    result = client.reset(seed=seed)
    observation = client.decode(result.observation)
    trace, rng = [observation], np.random.default_rng(seed)
    while not result.done:
        result = client.step(choose(observation, rng))
        observation, meta = client.decode(result.observation), result.observation.metadata
        trace.append((observation, result.reward, meta["terminated"], meta["truncated"]))
        assert result.done == (meta["terminated"] or meta["truncated"])
    return trace, meta["info"]["episode"]


def _legal(observation, rng):
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def _assert_same_episode(served_trace, local_trace, served_record, local_record, as_received=lambda o: o):
    assert len(served_trace) == len(local_trace)
    assert _same(served_trace[0], as_received(local_trace[0]))
    for (obs, reward, terminated, truncated), (l_obs, l_reward, l_term, l_trunc) in zip(
        served_trace[1:], local_trace[1:], strict=True
    ):
        assert _same(obs, as_received(l_obs))
        assert (reward, terminated, truncated) == (l_reward, l_term, l_trunc)
    assert served_record == json.loads(json.dumps(local_record, default=str))
    assert sum(s[1] for s in served_trace[1:]) == sum(s[1] for s in local_trace[1:])  # the return


@pytest.mark.parametrize("binary_frames", [True, False], ids=["binary-frames", "base64"])
@pytest.mark.parametrize("env_id", env_ids())
def test_every_env_plays_byte_identically_over_the_server(servers, env_id, binary_frames):
    served, url = servers[env_id]
    local = _in_process(env_id, served.make_kwargs, 5, _legal)
    with HearGymClient(url, binary_frames=binary_frames).sync() as client:
        remote = _over_server(client, 5, _legal)
    _assert_same_episode(remote[0], local[0], remote[1], local[1])


def _audio_answer(ws, message: dict) -> tuple[dict, bytes | None]:
    """The JSON answer to ``message`` and the binary frame after it (None when the next frame is
    the answer to a state request sent after it: no frame came between)."""
    ws.send(json.dumps(message))
    answer = json.loads(ws.recv(timeout=30))
    ws.send(json.dumps({"type": "state"}))
    following = ws.recv(timeout=30)
    if isinstance(following, bytes):
        assert json.loads(ws.recv(timeout=30))["type"] == "state"
        return answer, following
    assert json.loads(following)["type"] == "state"
    return answer, None


def test_audio_travels_as_a_binary_frame_to_clients_that_ask(servers):
    """With the header, the JSON names a frame and the float32 samples follow as one binary
    frame (up to the last sound); without it, the same samples are base64 in the JSON."""
    from websockets.sync.client import connect

    from hear_gym.integrations.openenv.frames import BINARY, FRAMES_HEADER

    served, url = servers["hear_gym/Onset-v0"]
    local, _ = gym.make(served.env_id, **served.make_kwargs).reset(seed=6)
    sounding = local["audio"][: np.flatnonzero(local["audio"])[-1] + 1]
    reset = {"type": "reset", "data": {"seed": 6}}
    with connect(_ws_url(url), additional_headers={FRAMES_HEADER: BINARY}, max_size=None) as ws:
        answer, frame = _audio_answer(ws, reset)
    assert answer["data"]["observation"]["audio"] == f"frame:{sounding.nbytes}"
    assert frame == sounding.astype("<f4").tobytes()
    with connect(_ws_url(url), max_size=None) as ws:
        answer, frame = _audio_answer(ws, reset)
    assert frame is None
    assert base64.b64decode(answer["data"]["observation"]["audio"]) == sounding.astype("<f4").tobytes()


@pytest.mark.parametrize("binary_frames", [True, False], ids=["binary-frames", "base64"])
def test_text_actions_and_pcm16_audio(servers, binary_frames):
    """Replies (malformed ones too: the family's invalid-action rule, not an error) travel as
    text; PCM16 audio arrives as the env's audio quantized to 16 bits, nothing else changed."""
    served, url = servers["onset-text-pcm16"]
    replies = ["wait", "this is not an action", "act: 9999", "wait"]

    def reply(observation, rng):
        return replies[int(rng.integers(len(replies)))]

    codecs = served.models.observation_codecs

    def quantized(observation):
        return decode_observation(codecs, encode_observation(codecs, observation))

    local = _in_process(served.env_id, served.make_kwargs, 3, reply)
    with HearGymClient(url, binary_frames=binary_frames).sync() as client:
        remote = _over_server(client, 3, reply)
    _assert_same_episode(remote[0], local[0], remote[1], local[1], as_received=quantized)
    first, local_first = remote[0][0], local[0][0]
    assert first["audio_length"][0] > 0 and not np.array_equal(first["audio"], local_first["audio"])
    assert np.max(np.abs(first["audio"] - local_first["audio"])) <= 0.5 / 32767 + 1e-7


def test_bad_actions_and_resets_get_clear_errors_and_the_session_goes_on(servers):
    served, url = servers["hear_gym/Onset-v0"]
    n = served.models.action_codec.high + 1
    with HearGymClient(url).sync() as client:
        with pytest.raises(RuntimeError, match="step before reset"):
            client.step(0)
        with pytest.raises(RuntimeError, match="reset takes seed, episode_id and options"):
            client.reset(seed=1, shuffle=True)
        first = client.decode(client.reset(seed=1).observation)
        for bad in (n, -1, "0", 1.5, True):
            with pytest.raises(ValueError):
                client.step(bad)  # refused by the Action model before it is sent
        # sent anyway: the server's Action model refuses it, and the session is still usable
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client._send_and_receive({"type": "step", "data": {"action": n}})
        result = client.step(_legal(first, np.random.default_rng(0)))
        assert result.observation.metadata["info"] is not None
        while not result.done:
            result = client.step(_legal(client.decode(result.observation), np.random.default_rng(0)))
        with pytest.raises(RuntimeError, match="episode has ended"):
            client.step(0)
        assert client.state().step_count >= 1 and client.state().seed == 1


def test_episode_id_plays_that_scenario_or_item(servers):
    served, url = servers["hear_gym/Onset-v0"]
    env_family = family(served.env_id)
    episode_id = env_family.item_ids("test")[1]
    env = gym.make(served.env_id, **served.make_kwargs)
    local, _ = env.reset(seed=2, options=env_family.reset_options(episode_id))
    with HearGymClient(url).sync() as client:
        result = client.reset(seed=2, episode_id=episode_id)
        assert _same(client.decode(result.observation), local)
        assert client.state().episode_id == episode_id


def _ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def test_max_concurrent_envs_holds_and_an_abandoned_session_frees_its_slot(servers):
    """Two sessions at once (the server's limit) play their own seeds interleaved; a third is
    refused; one whose client vanishes without closing frees its slot for the next."""
    from websockets.sync.client import connect

    served, url = servers["hear_gym/Onset-v0"]
    with HearGymClient(url).sync() as one, HearGymClient(url).sync() as two:
        results = {7: one.reset(seed=7), 8: two.reset(seed=8)}
        with pytest.raises(RuntimeError, match="CAPACITY_REACHED"), HearGymClient(url).sync() as three:
            three.reset(seed=9)
        for seed, client in ((7, one), (8, two)):
            env = gym.make(served.env_id, **served.make_kwargs)
            assert _same(client.decode(results[seed].observation), env.reset(seed=seed)[0])
    with connect(_ws_url(url)) as abandoned:
        abandoned.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(abandoned.recv())["type"] == "observation"
        abandoned.socket.shutdown(socket.SHUT_RDWR)  # gone without a close message or frame
    for _ in range(50):  # the server notices the dropped connection and frees the slot
        try:
            with HearGymClient(url).sync() as one, HearGymClient(url).sync() as two:
                one.reset(seed=1), two.reset(seed=2)
            break
        except RuntimeError as exc:
            assert "CAPACITY_REACHED" in str(exc)
            time.sleep(0.05)
    else:
        pytest.fail("the abandoned session kept its slot")


def test_serve_without_the_extra_fails_in_one_line(monkeypatch):
    for name in [m for m in sys.modules if m.startswith("hear_gym.integrations.openenv")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "openenv.core", None)  # as where it is not installed
    result = CliRunner().invoke(app, ["serve", "--env", "hear_gym/Onset-v0"])
    assert result.exit_code == 2 and "pip install 'hear-gym[serve]'" in result.output


def test_serve_command_builds_the_env_it_names(monkeypatch):
    calls = []
    monkeypatch.setattr(openenv_integration, "serve", lambda served, **kwargs: calls.append((served, kwargs)))
    args = ["serve", "--env", "hear_gym/Onset-v0", "--access", "T", "--observation", "features"]
    more = [
        "--port",
        "0",
        "--max-concurrent-envs",
        "3",
        "--seed",
        "4",
        "--workers",
        "2",
        "--memory-limit",
        "900",
    ]
    result = CliRunner().invoke(app, [*args, *more])
    assert result.exit_code == 0, result.output
    served, kwargs = calls[0]
    assert served.make_kwargs == {"access": "T", "actions": "discrete", "observation": "features"}
    assert served.base_seed == 4
    assert kwargs == {
        "host": "127.0.0.1",
        "port": 0,
        "max_concurrent_envs": 3,
        "session_timeout": None,
        "token": None,
        "workers": 2,
        "memory_limit_mb": 900,
    }
    assert {c.kind for c in served.models.observation_codecs} == {"array"}
    bad = CliRunner().invoke(app, ["serve", "--env", "hear_gym/Onset-v0", "--access", "X"])
    assert bad.exit_code == 2 and "access must be one of" in bad.output


def test_codecs_round_trip_every_kind_and_refuse_what_they_cannot_carry():
    from gymnasium import spaces

    from hear_gym.integrations.openenv.codec import action_codec, observation_codecs

    space = spaces.Dict(
        {
            "audio": spaces.Box(-1, 1, (8,), np.float32),
            "mask": spaces.MultiBinary(3),
            "grid": spaces.Box(0, 9, (2, 2), np.int64),
            "turn": spaces.Discrete(4),
            "text": spaces.Text(10),
        }
    )
    sounding = np.array([0.5, -1.0, 0.25, 1e-3, 0, 0, 0, 0], np.float32)
    observation = {
        "audio": sounding,
        "mask": np.array([1, 0, 1], np.int8),
        "grid": np.arange(4).reshape(2, 2),
        "turn": 3,
        "text": "hi",
    }
    exact = observation_codecs(space, audio="float32")
    wire = json.loads(json.dumps(encode_observation(exact, observation)))
    assert len(base64.b64decode(wire["audio"])) == 4 * 4  # the trailing silence stays home
    assert _same(decode_observation(exact, wire), observation)
    pcm16 = decode_observation(
        observation_codecs(space), encode_observation(observation_codecs(space), observation)
    )
    assert np.max(np.abs(pcm16["audio"] - sounding)) <= 0.5 / 32767 + 1e-7 and pcm16["audio"][
        4:
    ].tobytes() == bytes(16)
    box = observation_codecs(spaces.Box(0, 1, (3,), np.float32))  # not a Dict: one field
    assert decode_observation(box, encode_observation(box, np.ones(3, np.float32))).tolist() == [1, 1, 1]
    with pytest.raises(TypeError, match="Tuple spaces cannot be served"):
        observation_codecs(spaces.Dict({"pair": spaces.Tuple((spaces.Discrete(2),))}))
    with pytest.raises(ValueError, match="clash"):
        observation_codecs(spaces.Dict({"reward": spaces.Discrete(2)}))
    with pytest.raises(ValueError, match="audio encoding"):
        observation_codecs(space, audio="mp3")
    with pytest.raises(TypeError, match="action spaces cannot be served"):
        action_codec(spaces.Box(0, 1, (2,)))
    assert action_codec(spaces.Discrete(5, start=2)).hint == {
        "name": "action",
        "kind": "discrete",
        "dtype": "int64",
        "low": 2,
        "high": 6,
    }


def test_a_session_reset_without_a_seed_plays_its_own_default_seed():
    """The k-th env a server builds plays ``base_seed + k`` on its first seedless reset, so
    sessions differ; later seedless resets go on from the session's own generator, as in process."""
    served = ServedEnv("hear_gym/Onset-v0", {"access": "T"}, base_seed=10)
    sessions = [openenv_integration.HearGymEnvironment(served) for _ in range(2)]
    local = gym.make(served.env_id, **served.make_kwargs)
    for k, session in enumerate(sessions):
        codecs = served.models.observation_codecs
        first = decode_observation(codecs, session.reset().model_dump())
        assert _same(first, local.reset(seed=10 + k)[0]) and session.state.seed == 10 + k
        assert _same(decode_observation(codecs, session.reset().model_dump()), local.reset()[0])


@pytest.mark.slow
def test_a_session_idle_past_the_timeout_frees_its_slot():
    """A client that stays connected but idle: ``session_timeout`` closes its session (OpenEnv's
    reaper looks every 5 s at the least), and the slot goes to the next client."""
    served = ServedEnv("hear_gym/Onset-v0", {"access": "T"})
    with serving_in_thread(served, max_concurrent_envs=1, session_timeout=0.5) as url:
        with HearGymClient(url).sync() as idle:
            idle.reset(seed=1)
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED"), HearGymClient(url).sync() as other:
                other.reset(seed=2)
            time.sleep(6)
            with HearGymClient(url).sync() as other:
                assert other.reset(seed=2).done is False


def test_any_openenv_client_plays_it(servers):
    """OpenEnv's own generic client (plain dicts, no hear_gym models) plays a served env too."""
    from openenv.core.generic_client import GenericEnvClient

    served, url = servers["hear_gym/Onset-v0"]
    with GenericEnvClient(base_url=url).sync() as env:
        result = env.reset(seed=1)
        assert set(result.observation) == {c.name for c in served.models.observation_codecs} | {"metadata"}
        result = env.step({"action": _legal(result.observation, np.random.default_rng(0))})
        assert {"terminated", "truncated", "info"} <= set(result.observation["metadata"])
