"""The fake model server speaks each wire format as the real APIs do, plays its script in
order, answers side requests by rule and records every request."""

from __future__ import annotations

import json
import urllib.request

import pytest

from fake_model_server import FakeModelServer, Reply, ToolCall, Usage, contains

CALL = ToolCall("run_shell_command", {"command": "ls -la"}, id="call-1")


def post(server, path: str, body: dict, headers: dict | None = None) -> tuple[str, bytes]:
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json",
                                              **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["content-type"], response.read()


def get(server, path: str) -> dict:
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        return json.loads(response.read())


def sse(data: bytes) -> list[tuple[str | None, object]]:
    """The (event, data) pairs of an SSE body; data decoded from JSON where it is JSON."""
    events = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        name, payload = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                payload.append(line[6:])
        text = "\n".join(payload)
        try:
            events.append((name, json.loads(text)))
        except ValueError:
            events.append((name, text))
    return events


@pytest.fixture
def server():
    with FakeModelServer([Reply("Let me look.", [CALL], usage=Usage(120, 30, cached_tokens=7)),
                          Reply("There are two files.")]) as running:
        yield running


# ---------------------------------------------------------------- Anthropic
def test_anthropic_stream_follows_the_event_order_and_carries_the_call(server):
    kind, data = post(server, "/v1/messages", {"model": "claude-x", "stream": True,
                                               "messages": [{"role": "user", "content": "hi"}]})
    events = sse(data)
    assert kind.startswith("text/event-stream")
    assert [name for name, _ in events] == [
        "message_start", "ping",
        "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["model"] == "claude-x" and start["usage"]["input_tokens"] == 120
    assert start["usage"]["cache_read_input_tokens"] == 7
    assert events[3][1]["delta"] == {"type": "text_delta", "text": "Let me look."}
    assert events[5][1]["content_block"] == {"type": "tool_use", "id": "call-1",
                                              "name": "run_shell_command", "input": {}}
    assert json.loads(events[6][1]["delta"]["partial_json"]) == {"command": "ls -la"}
    assert events[8][1]["delta"]["stop_reason"] == "tool_use"
    assert events[8][1]["usage"]["output_tokens"] == 30


def test_anthropic_json_reply_and_count_tokens(server):
    _, data = post(server, "/v1/messages", {"model": "m", "messages": []})
    message = json.loads(data)
    assert message["content"][1] == {"type": "tool_use", "id": "call-1",
                                     "name": "run_shell_command", "input": {"command": "ls -la"}}
    assert message["stop_reason"] == "tool_use"
    _, data = post(server, "/v1/messages/count_tokens", {"model": "m", "messages": []})
    assert json.loads(data)["input_tokens"] > 0
    _, data = post(server, "/v1/messages?beta=true", {"model": "m", "messages": []})
    assert json.loads(data)["stop_reason"] == "end_turn"
    assert server.played == 2 and len(server.model_requests) == 2


# ---------------------------------------------------------------- OpenAI Chat Completions
def test_openai_chat_stream_assembles_to_the_scripted_call(server):
    _, data = post(server, "/v1/chat/completions", {
        "model": "gpt-x", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "hi"}]})
    events = [payload for _, payload in sse(data)]
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    arguments = "".join(call["function"].get("arguments", "")
                        for c in chunks if c["choices"]
                        for call in c["choices"][0]["delta"].get("tool_calls", []))
    assert text == "Let me look."
    assert json.loads(arguments) == {"command": "ls -la"}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 120


def test_openai_chat_json_and_usage_in_the_last_chunk_without_include_usage(server):
    _, data = post(server, "/chat/completions", {"model": "m", "messages": []})
    body = json.loads(data)
    assert body["choices"][0]["message"]["tool_calls"][0]["function"] == {
        "name": "run_shell_command", "arguments": json.dumps({"command": "ls -la"})}
    assert body["usage"]["prompt_tokens_details"]["cached_tokens"] == 7
    _, data = post(server, "/chat/completions", {"model": "m", "messages": [], "stream": True})
    chunks = [p for _, p in sse(data)][:-1]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "usage" in chunks[-1]


# ---------------------------------------------------------------- OpenAI Responses
def test_responses_stream_as_codex_reads_it(server):
    _, data = post(server, "/v1/responses", {"model": "gpt-x", "stream": True,
                                             "input": [{"type": "message", "role": "user",
                                                        "content": [{"type": "input_text",
                                                                     "text": "hi"}]}]})
    events = sse(data)
    names = [name for name, _ in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert all(name == payload["type"] for name, payload in events)
    items = [p["item"] for n, p in events if n == "response.output_item.done"]
    assert items[0]["content"][0]["text"] == "Let me look."
    assert items[1]["type"] == "function_call" and items[1]["call_id"] == "call-1"
    assert json.loads(items[1]["arguments"]) == {"command": "ls -la"}
    assert events[-1][1]["response"]["usage"]["input_tokens"] == 120
    numbers = [payload["sequence_number"] for _, payload in events]
    assert numbers == sorted(numbers)


# ---------------------------------------------------------------- Gemini
def test_gemini_stream_and_json_and_count(server):
    _, data = post(server, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
                   {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    chunk = sse(data)[0][1]
    parts = chunk["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Let me look."},
                     {"functionCall": {"id": "call-1", "name": "run_shell_command",
                                       "args": {"command": "ls -la"}}}]
    assert chunk["usageMetadata"]["promptTokenCount"] == 120
    assert chunk["modelVersion"] == "gemini-x"
    _, data = post(server, "/v1beta/models/gemini-x:generateContent", {"contents": []})
    assert json.loads(data)["candidates"][0]["content"]["parts"] == [
        {"text": "There are two files."}]
    _, data = post(server, "/v1beta/models/gemini-x:countTokens", {"contents": []})
    assert json.loads(data)["totalTokens"] > 0
    assert get(server, "/v1beta/models")["models"][0]["name"] == "models/fake-model"


# ---------------------------------------------------------------- the script
def test_rules_answer_side_requests_without_using_up_the_script():
    title = Reply('{"title": "Listing"}')
    with FakeModelServer([Reply("first"), Reply("second")], default=Reply("spare"),
                         rules=[(contains("generate a title"), title)]) as server:
        def ask(text):
            _, data = post(server, "/v1/messages", {"model": "m", "messages": [
                {"role": "user", "content": text}]})
            return json.loads(data)["content"][0]["text"]
        assert ask("hello") == "first"
        assert ask("please generate a title") == '{"title": "Listing"}'
        assert ask("again") == "second"
        assert ask("and again") == "spare"
    assert [r.scripted for r in server.requests] == [True, False, True, False]


def test_a_reply_with_when_waits_for_its_request():
    with FakeModelServer([Reply("for the main loop", when=lambda r: "tools" in r.body)],
                         default=Reply("side")) as server:
        _, data = post(server, "/v1/chat/completions", {"model": "m", "messages": []})
        assert json.loads(data)["choices"][0]["message"]["content"] == "side"
        _, data = post(server, "/v1/chat/completions",
                       {"model": "m", "messages": [], "tools": []})
        assert json.loads(data)["choices"][0]["message"]["content"] == "for the main loop"


def test_an_error_reply_is_sent_with_its_status():
    with FakeModelServer([Reply(status=429, error_body={"error": {"type": "rate_limit"}})]) \
            as server:
        with pytest.raises(urllib.error.HTTPError) as raised:
            post(server, "/v1/messages", {"model": "m", "messages": []})
    assert raised.value.code == 429
    assert json.loads(raised.value.read()) == {"error": {"type": "rate_limit"}}


def test_unknown_endpoints_answer_and_are_kept(server):
    _, data = post(server, "/api/telemetry", {"x": 1})
    assert json.loads(data) == {}
    assert get(server, "/v1/models")["data"][0]["id"] == "fake-model"
    assert [r.path for r in server.unknown] == ["/api/telemetry"]
    assert server.played == 0


def test_gzip_request_bodies_are_recorded_decoded(server):
    import gzip
    request = urllib.request.Request(
        server.url + "/v1/responses", data=gzip.compress(json.dumps(
            {"model": "m", "input": "hello"}).encode()),
        headers={"content-type": "application/json", "content-encoding": "gzip"})
    urllib.request.urlopen(request, timeout=10).read()
    assert server.requests[0].body == {"model": "m", "input": "hello"}


# ---------------------------------------------------------------- the transcript reader
def test_conversation_maps_each_format_to_one_shape(server):
    expected = [
        {"role": "user", "text": "list the files", "tool_calls": [], "tool_call_ids": [],
         "tool_call_id": None},
        {"role": "assistant", "text": "Let me look.",
         "tool_calls": [("run_shell_command", {"command": "ls -la"})],
         "tool_call_ids": ["c1"], "tool_call_id": None},
        {"role": "tool", "text": "a.txt b.txt", "tool_calls": [], "tool_call_ids": [],
         "tool_call_id": "c1"},
        {"role": "user", "text": "thanks", "tool_calls": [], "tool_call_ids": [],
         "tool_call_id": None}]
    bodies = {
        "/v1/messages": {"model": "m", "messages": [
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "c1", "name": "run_shell_command",
                 "input": {"command": "ls -la"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                          "content": [{"type": "text", "text": "a.txt b.txt"}]}]},
            {"role": "user", "content": [{"type": "text", "text": "thanks"}]}]},
        "/v1/chat/completions": {"model": "m", "messages": [
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {
                    "name": "run_shell_command", "arguments": '{"command": "ls -la"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt b.txt"},
            {"role": "user", "content": [{"type": "text", "text": "thanks"}]}]},
        "/v1/responses": {"model": "m", "input": [
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "list the files"}]},
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Let me look."}]},
            {"type": "function_call", "call_id": "c1", "name": "run_shell_command",
             "arguments": '{"command": "ls -la"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "a.txt b.txt"},
            {"role": "user", "content": "thanks"}]},
        "/v1beta/models/g:generateContent": {"contents": [
            {"role": "user", "parts": [{"text": "list the files"}]},
            {"role": "model", "parts": [{"text": "hmm", "thought": True},
                                        {"text": "Let me look."},
                                        {"functionCall": {"id": "c1", "name": "run_shell_command",
                                                          "args": {"command": "ls -la"}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "c1", "name": "run_shell_command",
                "response": {"output": "a.txt b.txt"}}}]},
            {"role": "user", "parts": [{"text": "thanks"}]}]},
    }
    for path, body in bodies.items():
        post(server, path, body)
    for request in server.requests:
        assert request.conversation() == expected, request.api
        assert request.tool_names == []


def test_a_connect_through_the_server_as_a_proxy_is_refused_and_kept(server):
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("CONNECT", "telemetry.example:443")
    assert connection.getresponse().status == 403
    assert [(r.api, r.path) for r in server.unknown] == [("proxy", "telemetry.example:443")]


def test_predicates_on_the_last_message_and_the_tools():
    from fake_model_server import last_says, offers_tool
    with FakeModelServer(rules=[(last_says("state_snapshot"), Reply("<summary/>")),
                                (offers_tool("complete_task"), Reply("sub-agent"))],
                         default=Reply("main")) as server:
        def ask(messages, tools=()):
            _, data = post(server, "/v1/chat/completions", {
                "model": "m", "messages": messages,
                "tools": [{"type": "function", "function": {"name": n}} for n in tools]})
            return json.loads(data)["choices"][0]["message"]["content"]
        snapshot = {"role": "user", "content": "write the <state_snapshot>"}
        assert ask([snapshot]) == "<summary/>"
        assert ask([snapshot, {"role": "user", "content": "go on"}]) == "main"
        assert ask([{"role": "user", "content": "x"}], tools=["complete_task"]) == "sub-agent"


def test_a_system_message_inside_anthropic_messages_stays_a_system_entry(server):
    post(server, "/v1/messages", {"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "# Environment\ncwd: /x"},
        {"role": "assistant", "content": "hello"}]})
    assert [m["role"] for m in server.requests[0].conversation()] == [
        "user", "system", "assistant"]
