"""W&B runs (hear_gym.eval.wandb_log): offline means no network attempt at all, online with a
wrong key or no server fails quickly with one line. Each run is a fresh process, as
the SDK reads its settings from the environment when it starts; nothing leaves the machine."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

pytest.importorskip("wandb")

# the run's process, given "no-network": no Python socket may reach another host or resolve a name
# (W&B's own service talks over a Unix socket); ``agents`` is imported, which made W&B print a
# Weave advertisement into every run's log
_START_RUN = textwrap.dedent(
    """
    import socket, sys
    from pathlib import Path

    def no_network(*args, **kwargs):
        print(f"network attempt: {args}", file=sys.stderr, flush=True)
        raise OSError("network use in an offline run")

    _connect = socket.socket.connect
    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            no_network()
        return _connect(self, address)

    if sys.argv[2:] == ["no-network"]:
        socket.socket.connect = connect
        socket.create_connection = socket.getaddrinfo = no_network
    import agents  # noqa: F401
    from hear_gym.eval.wandb_log import WandbStartError, start_run

    try:
        run = start_run({"seed": 0}, Path(sys.argv[1]), "offline-test")
    except WandbStartError as exc:
        print(f"refused: {exc}")
        sys.exit(3)
    run.log({"x": 1.0})
    run.finish()
    """
)


class _Recorder:
    """A local TCP listener that counts the connections made to it (the proxy every HTTP client
    of the run is pointed at, so an attempt to reach any host arrives here)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.seen: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.seen.append(conn.recv(200))
                except OSError:
                    self.seen.append(b"")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_") and "proxy" not in k.lower()}
    return {**env, **extra}


def _start_run(tmp_path, env, *flags):
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _START_RUN, str(tmp_path / "run"), *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return proc, time.monotonic() - started


def test_offline_runs_make_no_network_attempt(tmp_path):
    proxy = _Recorder()
    proxies = {name: proxy.url for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")}
    try:
        proc, _ = _start_run(tmp_path, _environment(NO_PROXY="", no_proxy="", **proxies), "no-network")
    finally:
        proxy.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    offline = list((tmp_path / "run" / "wandb").glob("offline-run-*"))
    assert len(offline) == 1 and any(offline[0].rglob("*.wandb"))
    assert "network attempt" not in proc.stderr  # nothing in Python opened a socket to a host
    assert proxy.seen == []  # nor did any HTTP(S) client of W&B's own service
    assert "Weave" not in proc.stdout + proc.stderr and "Detected [" not in proc.stdout + proc.stderr


class _WrongKey(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"errors": [{"message": "user is not logged in"}]}')

    def log_message(self, *args) -> None:
        pass


@pytest.mark.slow  # 3.5 s of the W&B SDK starting in a subprocess; offline runs stay in the default tier
def test_a_wrong_key_is_one_line(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WrongKey)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    args = ["eval", "--out", str(tmp_path / "run"), "--limit", "1", "--no-progress", "--feedback", "prosody"]
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from hear_gym.cli.app import app; app()", *args, "--wandb-project", "p"],
            env=_environment(WANDB_API_KEY="0" * 40, WANDB_BASE_URL=url, COLUMNS="300"),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.shutdown()
    errors = [line for line in proc.stdout.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert len(errors) == 1 and "W&B could not start the online run" in errors[0]
    assert "user is not logged in" in errors[0] and "WANDB_API_KEY" in errors[0]


@pytest.mark.slow  # about 14 s: the SDK's own start-up dwarfs the 3 s timeout
def test_an_unreachable_server_fails_within_the_init_timeout(tmp_path):
    with socket.socket() as sock:  # a local port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # a short WANDB_INIT_TIMEOUT keeps the test fast; the default (20 s) is tested below
    env = _environment(WANDB_API_KEY="0" * 40, WANDB_BASE_URL=closed, WANDB_INIT_TIMEOUT="3")
    proc, seconds = _start_run(tmp_path, env)
    refused = [line for line in proc.stdout.splitlines() if line.startswith("refused:")]
    assert proc.returncode == 3 and len(refused) == 1, proc.stdout + proc.stderr
    assert seconds < 40  # the SDK alone retries for 90 s


def test_an_online_run_waits_20_s_for_the_server_unless_told_otherwise():
    from hear_gym.eval.wandb_log import _sdk_environment

    online = _sdk_environment({"WANDB_API_KEY": "0" * 40})
    assert online["WANDB_MODE"] == "online" and online["WANDB_INIT_TIMEOUT"] == "20"
    assert (
        _sdk_environment({"WANDB_API_KEY": "0" * 40, "WANDB_INIT_TIMEOUT": "3"})["WANDB_INIT_TIMEOUT"] == "3"
    )
    assert "WANDB_INIT_TIMEOUT" not in _sdk_environment({})  # offline: no server to wait for
