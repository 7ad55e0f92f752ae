"""Fixtures for the enrichment tests: the travel tool set and a stand-in OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[4]
TRAVEL = REPO / "data" / "sampling" / "travel.yaml"


@pytest.fixture
def travel_tools() -> list[Any]:
    """The tools of data/sampling/travel.yaml (11 tools, 4 namespaces, one overload)."""
    return FileToolLoader(TRAVEL).load()


@pytest.fixture
def travel_registry(travel_tools: list[Any]) -> ToolRegistry:
    return ToolRegistry(travel_tools)


class StandIn:
    """A tiny OpenAI-compatible server on 127.0.0.1: /v1/embeddings and /v1/chat/completions.

    Attributes:
        url: the API root (``http://127.0.0.1:<port>/v1``).
        requests: every decoded request body, with its path.
        chat_answer: a function from the request body to the assistant's message content.
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.chat_answer: Callable[[dict[str, Any]], str] = lambda body: "{}"
        self.status = 200
        self.url = ""


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append((self.path, body))
            if self.path.endswith("/embeddings"):
                payload: dict[str, Any] = {
                    "data": [
                        {"index": i, "embedding": [float(len(text)), 1.0, float(text.count("a"))]}
                        for i, text in reversed(list(enumerate(body["input"])))
                    ]
                }
            else:
                content = state.chat_answer(body)
                payload = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            data = json.dumps(payload).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    state = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
