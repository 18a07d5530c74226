"""A fake model server on 127.0.0.1 for running real agents without a vendor or a key.

One threaded HTTP server speaks the four wire formats agents use:

* Anthropic Messages: ``POST .../v1/messages`` (SSE or JSON), ``.../messages/count_tokens``;
* OpenAI Chat Completions: ``POST .../chat/completions`` (SSE or JSON);
* OpenAI Responses: ``POST .../responses`` (SSE as Codex reads it, or JSON);
* Gemini: ``POST .../models/{model}:generateContent``, ``:streamGenerateContent?alt=sse``,
  ``:countTokens``;

plus ``GET .../models`` in the OpenAI and the Gemini shape. Paths are matched on their
ending, so a base URL with or without ``/v1`` (or a proxy prefix) works.

A script of `Reply` objects is played in order, one per model request; every request is
recorded (`FakeModelServer.requests`) with its decoded body for assertions. Side requests an
agent makes on its own (a title, a "next speaker" check, a summary) can be answered by
`rules` without using up the script: a rule is ``(predicate, reply)`` and is tried first.
When the script is used up, `default` answers. Requests to endpoints nobody knows are
answered ``200 {}`` (most clients accept that for a probe) and kept in `unknown`; so are
``CONNECT`` requests of an agent whose HTTPS_PROXY names this server (refused with 403), which
shows which outside hosts it tries to reach.

    with FakeModelServer([Reply(tool_calls=[ToolCall("run_shell_command",
                                                      {"command": "ls"})]),
                          Reply("Done.")]) as server:
        run_agent(base_url=server.url)
        assert server.model_requests[1].conversation()[-1]["role"] == "tool"
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeModelServer", "Reply", "ToolCall", "Usage", "RecordedRequest", "contains",
           "last_says", "offers_tool"]


# ---------------------------------------------------------------- the script
@dataclass
class Usage:
    input_tokens: int = 100
    output_tokens: int = 20
    cached_tokens: int = 0            # read from a prompt cache
    cache_creation_tokens: int = 0    # Anthropic: written to the cache
    reasoning_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class ToolCall:
    name: str
    arguments: dict = field(default_factory=dict)
    id: str | None = None             # given one by the server when None


@dataclass
class Reply:
    """One answer of the model: text and/or tool calls, with usage figures."""
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str = ""
    usage: Usage | None = None        # None: a usage that grows with the request number
    stop: str | None = None           # the stop reason; None: derived from tool_calls
    when: Callable[["RecordedRequest"], bool] | None = None  # only for a request that matches
    status: int = 200                 # another status answers `error_body` instead
    error_body: dict | None = None
    delay: float = 0.0                # seconds to wait before answering (let a side request win)


def contains(*words: str) -> Callable[["RecordedRequest"], bool]:
    """A predicate: the request's body holds every word (case-sensitive)."""
    return lambda request: all(word in request.text for word in words)


def last_says(*words: str) -> Callable[["RecordedRequest"], bool]:
    """A predicate: the request's last message (user text or tool result) holds every word."""
    def check(request: "RecordedRequest") -> bool:
        messages = request.conversation()
        return bool(messages) and all(word in messages[-1]["text"] for word in words)
    return check


def offers_tool(name: str) -> Callable[["RecordedRequest"], bool]:
    """A predicate: the request declares a tool of that name."""
    return lambda request: name in request.tool_names


# ---------------------------------------------------------------- a request
@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes
    body: Any                         # decoded JSON, or None
    api: str                          # anthropic | openai-chat | openai-responses | gemini | ...
    reply: Reply | None = None
    scripted: bool = False            # answered by the script (not by a rule or the default)

    @property
    def text(self) -> str:
        """The body as text (JSON re-dumped without escaping), for `in` tests."""
        if self.body is None:
            return self.raw.decode("utf-8", "replace")
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def streaming(self) -> bool:
        if self.api == "gemini":
            return ":streamGenerateContent" in self.path
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def model(self) -> str | None:
        if self.api == "gemini":
            return self.path.rsplit("/models/", 1)[-1].split(":", 1)[0]
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def tool_names(self) -> list[str]:
        from fake_models.transcript import tool_names
        return tool_names(self)

    def conversation(self) -> list[dict]:
        """The request's messages in order, one wire format's shape mapped to one shape:
        ``{"role": "system"|"user"|"assistant"|"tool", "text": str,
        "tool_calls": [(name, arguments)], "tool_call_ids": [...],
        "tool_call_id": str|None}`` (see fake_models/transcript.py)."""
        from fake_models.transcript import conversation
        return conversation(self)


# ---------------------------------------------------------------- the server
MODEL_APIS = ("anthropic", "openai-chat", "openai-responses", "gemini")


class FakeModelServer:
    """The server; a context manager. `url` is ``http://127.0.0.1:<port>`` (no path)."""

    def __init__(self, script: Iterable[Reply] = (), *, default: Reply | None = None,
                 rules: Iterable[tuple[Callable[[RecordedRequest], bool], Reply]] = (),
                 model: str = "fake-model", log: Callable[[str], None] | None = None):
        self.script: list[Reply] = list(script)
        self.default = default or Reply("OK.")
        self.rules = list(rules)
        self.model = model
        self.requests: list[RecordedRequest] = []
        self.unknown: list[RecordedRequest] = []
        self.log = log
        self._next = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life
    def start(self) -> "FakeModelServer":
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script
    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def on(self, when: Callable[[RecordedRequest], bool], reply: Reply) -> None:
        with self._lock:
            self.rules.append((when, reply))

    @property
    def played(self) -> int:
        """How many scripted replies were sent."""
        return self._next

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The requests to a model endpoint (not count_tokens, not a model list)."""
        return [r for r in self.requests if r.api in MODEL_APIS]

    def _choose(self, request: RecordedRequest) -> Reply:
        with self._lock:
            for when, reply in self.rules:
                if when(request):
                    return reply
            if self._next < len(self.script):
                reply = self.script[self._next]
                if reply.when is None or reply.when(request):
                    self._next += 1
                    request.scripted = True
                    return reply
            return self.default

    def new_id(self) -> int:
        return next(self._ids)


# ---------------------------------------------------------------- routing
def classify(method: str, path: str) -> str:
    p = path.rstrip("/")
    if method == "POST":
        if p.endswith("/messages/count_tokens"):
            return "anthropic-count"
        if p.endswith("/messages"):
            return "anthropic"
        if p.endswith("/chat/completions"):
            return "openai-chat"
        if p.endswith("/responses"):
            return "openai-responses"
        if p.endswith(":generateContent") or p.endswith(":streamGenerateContent"):
            return "gemini"
        if p.endswith(":countTokens"):
            return "gemini-count"
        if p.endswith(":embedContent") or p.endswith(":batchEmbedContents"):
            return "gemini-embed"
        if p.endswith("/embeddings"):
            return "openai-embed"
    if method == "GET":
        if p.endswith("/models") and ("/v1beta" in p or "/v1alpha" in p):
            return "gemini-models"
        if p.endswith("/models"):
            return "models"
        if "/models/" in p:
            return "model-info"
    return "unknown"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: FakeModelServer

    def log_message(self, *args) -> None:  # quiet
        pass

    # -- reading
    def _read(self) -> RecordedRequest:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        if length:
            raw = self.rfile.read(length)
        elif "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            raw = self._read_chunked()
        else:
            raw = b""
        encoding = (self.headers.get("content-encoding") or "").lower()
        try:
            if encoding == "gzip":
                raw = gzip.decompress(raw)
            elif encoding == "deflate":
                raw = zlib.decompress(raw)
            elif encoding == "zstd":
                import zstandard  # optional: only an agent that compresses needs it
                raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        except Exception:  # keep the bytes as they came
            pass
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        api = classify(self.command, parts.path)
        request = RecordedRequest(self.command, parts.path, parse_qs(parts.query),
                                  {k.lower(): v for k, v in self.headers.items()}, raw, body, api)
        state = self.server_state
        with state._lock:
            state.requests.append(request)
            if api == "unknown":
                state.unknown.append(request)
        if state.log is not None:
            state.log(f"{self.command} {self.path} -> {api}")
        return request

    def _read_chunked(self) -> bytes:
        out = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return bytes(out)
            out += self.rfile.read(size)
            self.rfile.readline()

    # -- writing
    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        if content_type.startswith("text/event-stream"):
            self.send_header("cache-control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, "application/json", json.dumps(data).encode())

    def do_HEAD(self) -> None:
        self._send(200, "application/json", b"{}")

    def do_CONNECT(self) -> None:
        """An agent that uses HTTPS_PROXY (set to this server) to reach an outside host:
        kept in `unknown` (api "proxy", path the host:port) and refused."""
        request = RecordedRequest("CONNECT", self.path, {}, {k.lower(): v for k, v in
                                                             self.headers.items()},
                                  b"", None, "proxy")
        with self.server_state._lock:
            self.server_state.requests.append(request)
            self.server_state.unknown.append(request)
        self._send(403, "text/plain", b"no outside network in the laboratory")
        self.close_connection = True

    def do_GET(self) -> None:
        request = self._read()
        state = self.server_state
        if request.api == "models":
            self._json({"object": "list", "data": [
                {"id": state.model, "object": "model", "created": 1_700_000_000,
                 "owned_by": "fake", "type": "model", "display_name": state.model}],
                "has_more": False, "first_id": state.model, "last_id": state.model})
        elif request.api == "gemini-models":
            self._json({"models": [_gemini_model(state.model)]})
        elif request.api == "model-info":
            self._json(_gemini_model(request.path.rsplit("/models/", 1)[-1]))
        else:
            self._json({})

    def do_POST(self) -> None:
        request = self._read()
        state = self.server_state
        api = request.api
        if api == "anthropic-count":
            self._json({"input_tokens": _estimate_tokens(request)})
            return
        if api == "gemini-count":
            self._json({"totalTokens": _estimate_tokens(request)})
            return
        if api == "gemini-embed":
            self._json({"embedding": {"values": [0.0] * 8}, "embeddings": [{"values": [0.0] * 8}]})
            return
        if api == "openai-embed":
            self._json({"object": "list", "data": [{"object": "embedding", "index": 0,
                                                    "embedding": [0.0] * 8}],
                        "model": state.model, "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            return
        if api not in MODEL_APIS:
            self._json({})
            return
        reply = state._choose(request)
        request.reply = reply
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            self._json(reply.error_body or {"error": {"message": "fake error",
                                                       "type": "fake"}}, reply.status)
            return
        number = state.new_id()
        usage = reply.usage or Usage(input_tokens=100 + number, output_tokens=10 + number)
        calls = [(call.id or _call_id(api, number, i), call) for i, call in
                 enumerate(reply.tool_calls)]
        from fake_models import wire
        encoder = {"anthropic": wire.anthropic, "openai-chat": wire.openai_chat,
                   "openai-responses": wire.openai_responses, "gemini": wire.gemini}[api]
        content_type, data = encoder(request, reply, calls, usage, number,
                                     request.model or state.model)
        self._send(200, content_type, data)


def _call_id(api: str, number: int, index: int) -> str:
    prefix = {"anthropic": "toolu_fake", "gemini": "gemini_call"}.get(api, "call_fake")
    return f"{prefix}{number:03d}_{index}"


def _estimate_tokens(request: RecordedRequest) -> int:
    return max(1, len(request.raw) // 4)


def _gemini_model(name: str) -> dict:
    name = name.removeprefix("models/")
    return {"name": f"models/{name}", "displayName": name, "inputTokenLimit": 1_000_000,
            "outputTokenLimit": 65_536, "supportedGenerationMethods":
                ["generateContent", "streamGenerateContent", "countTokens"]}


def now() -> int:
    return int(time.time())
