"""A small OpenAI-compatible chat-completions server for tests: the schema vLLM, SGLang and
llama.cpp's server speak (``POST /v1/chat/completions``, ``GET /v1/models``), threaded, so several
requests are in flight at once.

It checks what a real server would refuse: every message has a role and a string or a list of
parts; a part is ``text`` or ``input_audio`` (base64 of a WAV file, decoded here with soundfile);
a reply is chosen by ``answer(messages, clips)``, the clips decoded from the request. A request
that breaks the schema gets a 400 with the reason. ``faults`` injects failures into the first
requests, in order: ``"slow"`` (the reply waits ``slow_s`` seconds) or an HTTP status (``500``,
``503``, ``429``). ``in_flight_peak`` is the most requests it held at once.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import soundfile

Answer = Callable[[list, list], str]


class StubServer:
    def __init__(self, answer: Answer, faults: list | None = None, slow_s: float = 2.0, model: str = "tiny"):
        self.answer, self.faults, self.slow_s, self.model = answer, list(faults or []), slow_s, model
        self.requests: list[dict] = []  # every chat-completions body, as received
        self.lock = threading.Lock()
        self.in_flight = self.in_flight_peak = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _fault(self):
        with self.lock:
            return self.faults.pop(0) if self.faults else None

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 (http.server's naming)
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.in_flight += 1
                    server.in_flight_peak = max(server.in_flight_peak, server.in_flight)
                try:
                    self._answer(body)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, body: dict) -> None:
                fault = server._fault()
                if fault == "slow":
                    time.sleep(server.slow_s)
                elif isinstance(fault, int):
                    self._send(fault, {"error": {"message": f"injected {fault}"}})
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                try:
                    messages, clips = read_chat(body)
                except ValueError as exc:
                    self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                    return
                text = server.answer(messages, clips)
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", server.model),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                    },
                )

        return Handler


def read_chat(body: dict) -> tuple[list, list]:
    """The request's messages (audio parts as ``{"type": "audio", "audio": clip}``) and its clips;
    ``ValueError`` for what the API's schema does not allow."""
    if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        raise ValueError("a request needs model (string) and messages (list)")
    messages, clips = [], []
    for message in body["messages"]:
        if message.get("role") not in ("system", "user", "assistant", "tool"):
            raise ValueError(f"bad role {message.get('role')!r}")
        content = message.get("content")
        if isinstance(content, str):
            messages.append({"role": message["role"], "content": content})
            continue
        if not isinstance(content, list):
            raise ValueError("content must be a string or a list of parts")
        parts = []
        for part in content:
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif part.get("type") == "input_audio":
                audio = part.get("input_audio") or {}
                if audio.get("format") != "wav":
                    raise ValueError("input_audio.format must be wav")
                clip, rate = soundfile.read(io.BytesIO(base64.b64decode(audio["data"])), dtype="float32")
                if rate != 16_000 or clip.ndim != 1:
                    raise ValueError(f"expected 16 kHz mono audio, got {rate} Hz, shape {clip.shape}")
                clips.append(np.asarray(clip, dtype=np.float32))
                parts.append({"type": "audio", "audio": clips[-1]})
            else:
                raise ValueError(f"unknown content part {sorted(part)}")
        messages.append({"role": message["role"], "content": parts})
    return messages, clips
