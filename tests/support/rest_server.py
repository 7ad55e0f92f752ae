"""A real HTTP server on loopback implementing ``data/rest/petstore.yaml``, for tests and the demo.

Start it in-process with :func:`serve` (a context manager yielding the server's state, whose
``base_url`` ends in ``/v1``), or from a shell::

    python tests/support/rest_server.py --port 8765

Credentials it accepts: bearer token ``s3cret-token``, basic ``admin`` / ``hunter22``, query
``api_key=k3y-value``. Every request is recorded in ``state.requests``.

Hostile answers for the hardening tests (``tests/data/rest/hostile.yaml`` describes them):
``/v1/redirect`` (a 3xx to the ``to`` query value), ``/v1/gzip-bomb`` (1.5 MB of gzip that inflates
to 1.5 GB), ``/v1/big`` (``size`` bytes, with or without Content-Length), ``/v1/deep`` (JSON nested
``depth`` levels), ``/v1/long-int`` (a 5,000-digit integer), ``/v1/half-emoji`` (a string
holding a lone surrogate, ``"x\\ud83d"``), ``/v1/trickle`` (a body sent a byte
at a time), ``/v1/echo-back`` (echoes the request, padded so a secret straddles a 500-character
cut).

For the scale tests: ``latency`` (``--latency-ms``) delays every answer; ``in_flight`` and
``max_in_flight`` count the requests being answered at once; ``/v1/limited`` answers 429 with
``Retry-After: <retry_after>`` to its first ``limited`` requests (arrival times in ``arrivals``,
the moments each 429 was sent in ``limited_at``).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import json
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "s3cret-token"
BASIC = ("admin", "hunter22")
API_KEY = "k3y-value"


@dataclass
class ServerState:
    """The server's data and what it saw."""

    base_url: str = ""
    pets: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    next_id: int = 1
    lock: threading.Lock = field(default_factory=threading.Lock)
    latency: float = 0.0
    in_flight: int = 0
    max_in_flight: int = 0
    limited: int = 0
    retry_after: str = "1"
    arrivals: list[float] = field(default_factory=list)
    limited_at: list[float] = field(default_factory=list)


@dataclass
class Request:
    """One received request."""

    method: str
    raw_path: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def echo(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.raw_path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body.decode("utf-8", "replace"),
        }


@dataclass
class Raw:
    """A reply written as it is: bytes, extra headers, and how to send them."""

    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    length: bool = True  # send Content-Length (else close the connection after the body)
    pause: float = 0.0  # seconds between bytes (a trickle)


Reply = tuple[int, Any, str]
Route = Callable[[ServerState, Request, "re.Match[str]"], Reply]


def _json(status: int, value: Any) -> Reply:
    return status, value, "application/json"


def _list_pets(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    params = parse_qs(req.query)
    pets = list(state.pets.values())
    if "tags" in params:
        pets = [p for p in pets if p.get("tag") in params["tags"]]
    limit = int(params.get("limit", ["100"])[0])
    return _json(200, pets[:limit])


def _create_pet(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    if req.headers.get("authorization") != f"Bearer {TOKEN}":
        return _json(401, {"message": f"bad credentials: {req.headers.get('authorization')}"})
    data = json.loads(req.body or b"{}")
    with state.lock:
        pet = {"id": str(state.next_id), **data}
        state.next_id += 1
        state.pets[pet["id"]] = pet
    return _json(201, pet)


def _get_pet(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    pet = state.pets.get(unquote(m.group(1)))
    return _json(200, pet) if pet else _json(404, {"message": f"no pet {unquote(m.group(1))}"})


def _delete_pet(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    expected = "Basic " + base64.b64encode(":".join(BASIC).encode()).decode()
    if req.headers.get("authorization") != expected:
        return _json(401, {"message": "basic auth required"})
    state.pets.pop(unquote(m.group(1)), None)
    return 204, None, ""


def _upload(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    fields = _multipart(req)
    upload = fields.get("file", ("", b""))
    caption = fields.get("caption", ("", b""))[1].decode()
    return _json(200, {"filename": upload[0], "size": len(upload[1]), "caption": caption})


def _multipart(req: Request) -> dict[str, tuple[str, bytes]]:
    boundary = req.headers.get("content-type", "").split("boundary=")[-1].encode()
    fields: dict[str, tuple[str, bytes]] = {}
    for part in req.body.split(b"--" + boundary)[1:-1]:
        head, _, data = part.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]*)"', head)
        filename = re.search(rb'filename="([^"]*)"', head)
        if name:
            fields[name.group(1).decode()] = (filename.group(1).decode() if filename else "", data[:-2])
    return fields


def _echo(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    return _json(200, req.echo())


def _flaky(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    params = parse_qs(req.query)
    key = req.method + params.get("key", [""])[0]
    failures = int(params.get("failures", ["2"])[0])
    with state.lock:
        state.attempts[key] = state.attempts.get(key, 0) + 1
        attempts = state.attempts[key]
    if attempts <= failures:
        return _json(503, {"message": f"temporarily unavailable (attempt {attempts})"})
    return _json(200, {"attempts": attempts})


def _secure(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    if parse_qs(req.query).get("api_key") != [API_KEY]:
        return _json(403, {"message": f"wrong key in query {req.query!r}"})
    return _json(200, req.echo())


def _slow(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    seconds = float(parse_qs(req.query).get("seconds", ["0"])[0])
    time.sleep(min(seconds, 5.0))
    return _json(200, {"slept": seconds})


def _redirect(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    params = parse_qs(req.query)
    status = int(params.get("status", ["302"])[0])
    to = params.get("to", [req.raw_path])[0]  # without a target: to itself, for ever
    return status, Raw(headers={"Location": to}), ""


@functools.lru_cache(maxsize=1)
def gzip_bomb() -> bytes:
    """About 1.5 MB of gzip that inflates to 1.5 GB of zeros.

    Built from one compressed MiB repeated (full flushes make the blocks identical), so it takes
    milliseconds; its trailer does not match, which no reader that stops at a cap ever sees.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    mib = bytes(1 << 20)
    head = compressor.compress(mib) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(mib) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + block * 1500 + compressor.flush()


def _bomb(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    return 200, Raw(gzip_bomb(), headers), ""


def _big(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    params = parse_qs(req.query)
    size = int(params.get("size", ["1000"])[0])
    return 200, Raw(b"a" * size, {"Content-Type": "text/plain"}, length="unsized" not in params), ""


def _deep(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    depth = int(parse_qs(req.query).get("depth", ["100000"])[0])
    return 200, Raw(b"[" * depth + b"]" * depth, {"Content-Type": "application/json"}), ""


def _long_int(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    return 200, Raw(b'{"n": ' + b"7" * 5000 + b"}", {"Content-Type": "application/json"}), ""


def _half_emoji(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    return 200, Raw(b'{"smile": ["x\\ud83d"]}', {"Content-Type": "application/json"}), ""


def _trickle(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    return 200, Raw(b"x" * 40, {"Content-Type": "text/plain"}, pause=0.1), ""


def _echo_back(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    """A 400 echoing the credentials it got, the first one straddling character 500 of the body
    (as gateways echo a bad key, and error excerpts are cut at 500)."""
    seen = f"{req.headers.get('authorization', '')} {req.headers.get('x-api-key', '')} {req.query}"
    return _json(400, {"message": "x" * 474 + seen})


def _limited(state: ServerState, req: Request, m: re.Match[str]) -> Reply:
    with state.lock:
        state.arrivals.append(time.monotonic())
        refuse = len(state.arrivals) <= state.limited
    if refuse:
        return 429, Raw(b"slow down", {"Retry-After": state.retry_after}), ""
    return _json(200, {"ok": True})


ROUTES: list[tuple[str, re.Pattern[str], Route]] = [
    ("GET", re.compile(r"^/v1/pets$"), _list_pets),
    ("POST", re.compile(r"^/v1/pets$"), _create_pet),
    ("GET", re.compile(r"^/v1/pets/([^/]+)$"), _get_pet),
    ("DELETE", re.compile(r"^/v1/pets/([^/]+)$"), _delete_pet),
    ("POST", re.compile(r"^/v1/pets/([^/]+)/photo$"), _upload),
    ("GET", re.compile(r"^/v1/echo/([^/]+)$"), _echo),
    ("POST", re.compile(r"^/v1/forms$"), _echo),
    ("PUT", re.compile(r"^/v1/things/([^/]+)$"), _echo),
    ("GET", re.compile(r"^/v1/flaky$"), _flaky),
    ("POST", re.compile(r"^/v1/flaky$"), _flaky),
    ("GET", re.compile(r"^/v1/secure$"), _secure),
    ("GET", re.compile(r"^/v1/slow$"), _slow),
    ("GET", re.compile(r"^/v1/text$"), lambda s, r, m: (200, "plain words", "text/plain")),
    ("GET", re.compile(r"^/v1/bad-output$"), lambda s, r, m: _json(200, {"count": "many"})),
    ("GET", re.compile(r"^/v1/redirect$"), _redirect),
    ("POST", re.compile(r"^/v1/redirect$"), _redirect),
    ("GET", re.compile(r"^/v1/gzip-bomb$"), _bomb),
    ("GET", re.compile(r"^/v1/big$"), _big),
    ("GET", re.compile(r"^/v1/deep$"), _deep),
    ("GET", re.compile(r"^/v1/long-int$"), _long_int),
    ("GET", re.compile(r"^/v1/half-emoji$"), _half_emoji),
    ("GET", re.compile(r"^/v1/trickle$"), _trickle),
    ("GET", re.compile(r"^/v1/echo-back$"), _echo_back),
    ("POST", re.compile(r"^/v1/echo-back$"), _echo_back),
    ("POST", re.compile(r"^/v1/echo-post$"), _echo),
    ("GET", re.compile(r"^/v1/limited$"), _limited),
]


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, so a pooled client reuses one connection
        disable_nagle_algorithm = True  # headers and body go out at once, no delayed-ACK stalls

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            req = Request(
                self.command,
                parts.path,
                unquote(parts.path),
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length) if length else b"",
            )
            state.requests.append({**req.echo(), "client_port": self.client_address[1]})
            with state.lock:
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                if state.latency:
                    time.sleep(state.latency)
                self._reply(*self._route(req))
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _route(self, req: Request) -> Reply:
            for method, pattern, route in ROUTES:
                match = pattern.match(req.raw_path)
                if match and method == req.method:
                    return route(state, req, match)
            return _json(404, {"message": f"no route for {req.method} {req.raw_path}"})

        def _reply(self, status: int, value: Any, content_type: str) -> None:
            if isinstance(value, Raw):
                self._raw(status, value)
                return
            if value is None:
                data = b""
            elif content_type == "application/json":
                data = json.dumps(value).encode()
            else:
                data = str(value).encode()
            self.send_response(status)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _raw(self, status: int, raw: Raw) -> None:
            if status == 429:
                with state.lock:
                    state.limited_at.append(time.monotonic())
            self.send_response(status)
            for name, value in raw.headers.items():
                self.send_header(name, value)
            if raw.length:
                self.send_header("Content-Length", str(len(raw.body)))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            # The client may stop reading (a size cap or a timeout): what the test wants.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._write(raw)

        def _write(self, raw: Raw) -> None:
            if not raw.pause:
                self.wfile.write(raw.body)
                return
            for byte in raw.body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(raw.pause)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout test) closes its socket; that is not a server error.
        pass


@contextmanager
def serve(port: int = 0, *, latency: float = 0.0) -> Iterator[ServerState]:
    """Run the server on 127.0.0.1 (a free port by default) for the duration of the block.

    Args:
        port: the port (0: a free one).
        latency: seconds every answer is delayed.
    """
    state = ServerState(latency=latency)
    server = _Server(("127.0.0.1", port), _handler(state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay every answer this long")
    args = parser.parse_args()
    with serve(args.port, latency=args.latency_ms / 1000) as state:
        print(f"serving {state.base_url} (Ctrl-C to stop)", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
