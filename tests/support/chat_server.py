"""A local stand-in for an OpenAI-compatible API (chat completions and embeddings), for tests.

It answers on 127.0.0.1 with canned but request-dependent replies and records every request, so
tests can assert what a client sent. Start it with :func:`serve` (a context manager).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], Any]


@dataclass
class StandIn:
    """What the server saw and how it answers."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    reply: Reply = lambda body: {"ok": True}
    status: list[int] = field(default_factory=list)  # statuses to answer first (then 200)


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            state.requests.append(body)
            state.paths.append(self.path)
            state.headers.append(dict(self.headers))
            status = state.status.pop(0) if state.status else 200
            if status != 200:
                # As gateways do, echo the credential received (after padding that puts it across
                # the 200th character, where error excerpts are cut).
                echoed = "x" * 144 + str(self.headers.get("Authorization"))
                self._send(status, {"error": {"message": f"stand-in failure: {echoed}"}})
            elif self.path.endswith("/embeddings"):
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                # In reverse index order, as servers may answer: clients must sort by index.
                data = [
                    {"index": i, "embedding": state.reply({"input": text})}
                    for i, text in reversed(list(enumerate(inputs)))
                ]
                self._send(200, {"data": data, "model": body.get("model")})
            else:
                content = state.reply(body)
                text = content if isinstance(content, str) else json.dumps(content)
                self._send(
                    200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
                )

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class _Server(ThreadingHTTPServer):
    # Room for many clients connecting at once (a run with 32 records in flight): the default
    # backlog of 5 resets the connections past it.
    request_queue_size = 256
    daemon_threads = True


@contextmanager
def serve(reply: Reply | None = None) -> Iterator[StandIn]:
    """Run the stand-in on a free loopback port for the duration of the ``with`` block."""
    state = StandIn()
    if reply is not None:
        state.reply = reply
    server = _Server(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
