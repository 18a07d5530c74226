"""The fake model's replies in each wire format: ``(content_type, body bytes)``.

Streams are built whole and sent with a content-length (clients read SSE line by line
either way); each follows the event order of the real API, since some clients check it
(the Anthropic SDK needs ``message_start`` first, Codex needs ``response.completed``)."""

from __future__ import annotations

import json
import time

SSE = "text/event-stream; charset=utf-8"
JSON = "application/json"


def _sse(events: list[tuple[str | None, dict | str]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def _stop(reply, calls, tool: str, end: str) -> str:
    return reply.stop or (tool if calls else end)


# ---------------------------------------------------------------- Anthropic Messages
def anthropic(request, reply, calls, usage, number, model):
    message_id = f"msg_fake{number:04d}"
    blocks: list[dict] = []
    if reply.thinking:
        blocks.append({"type": "thinking", "thinking": reply.thinking,
                       "signature": f"fake-signature-{number}"})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call_id, call in calls:
        blocks.append({"type": "tool_use", "id": call_id, "name": call.name,
                       "input": call.arguments})
    stop = _stop(reply, calls, "tool_use", "end_turn")
    full_usage = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                  "cache_read_input_tokens": usage.cached_tokens,
                  "cache_creation_input_tokens": usage.cache_creation_tokens}
    if not request.streaming:
        return JSON, json.dumps({
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": full_usage}).encode()
    start_usage = dict(full_usage, output_tokens=1)
    events: list = [("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}),
        ("ping", {"type": "ping"})]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            start, delta = dict(block, text=""), {"type": "text_delta", "text": block["text"]}
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
        else:
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": start}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": delta}))
        if kind == "thinking":
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": block["signature"]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": usage.output_tokens}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return SSE, _sse(events)


# ---------------------------------------------------------------- OpenAI Chat Completions
def openai_chat(request, reply, calls, usage, number, model):
    completion_id = f"chatcmpl-fake{number:04d}"
    created = int(time.time())
    finish = _stop(reply, calls, "tool_calls", "stop")
    tool_calls = [{"id": call_id, "type": "function",
                   "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
                  for call_id, call in calls]
    usage_body = {"prompt_tokens": usage.input_tokens,
                  "completion_tokens": usage.output_tokens,
                  "total_tokens": usage.total,
                  "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                  "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens}}
    if not request.streaming:
        message: dict = {"role": "assistant", "content": reply.text or None}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if tool_calls:
            message["tool_calls"] = tool_calls
        return JSON, json.dumps({
            "id": completion_id, "object": "chat.completion", "created": created,
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": finish, "logprobs": None}],
            "usage": usage_body}).encode()

    def chunk(delta: dict, finish_reason=None, **extra) -> tuple:
        return (None, {"id": completion_id, "object": "chat.completion.chunk",
                       "created": created, "model": model,
                       "choices": [{"index": 0, "delta": delta,
                                    "finish_reason": finish_reason, "logprobs": None}],
                       **extra})

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.thinking:
        events.append(chunk({"reasoning_content": reply.thinking}))
    if reply.text:
        events.append(chunk({"content": reply.text}))
    for index, call in enumerate(tool_calls):
        events.append(chunk({"tool_calls": [{"index": index, "id": call["id"],
                                             "type": "function",
                                             "function": {"name": call["function"]["name"],
                                                          "arguments": ""}}]}))
        events.append(chunk({"tool_calls": [{"index": index, "function": {
            "arguments": call["function"]["arguments"]}}]}))
    options = request.body.get("stream_options") or {}
    if options.get("include_usage"):
        events.append(chunk({}, finish))
        events.append((None, {"id": completion_id, "object": "chat.completion.chunk",
                              "created": created, "model": model, "choices": [],
                              "usage": usage_body}))
    else:
        events.append(chunk({}, finish, usage=usage_body))
    events.append((None, "[DONE]"))
    return SSE, _sse(events)


# ---------------------------------------------------------------- OpenAI Responses
def openai_responses(request, reply, calls, usage, number, model):
    response_id = f"resp_fake{number:04d}"
    output: list[dict] = []
    if reply.thinking:
        output.append({"type": "reasoning", "id": f"rs_fake{number:04d}",
                       "summary": [{"type": "summary_text", "text": reply.thinking}]})
    if reply.text:
        output.append({"type": "message", "id": f"msg_fake{number:04d}", "status": "completed",
                       "role": "assistant",
                       "content": [{"type": "output_text", "text": reply.text,
                                    "annotations": []}]})
    for index, (call_id, call) in enumerate(calls):
        output.append({"type": "function_call", "id": f"fc_fake{number:04d}_{index}",
                       "call_id": call_id, "name": call.name,
                       "arguments": json.dumps(call.arguments), "status": "completed"})
    usage_body = {"input_tokens": usage.input_tokens,
                  "input_tokens_details": {"cached_tokens": usage.cached_tokens},
                  "output_tokens": usage.output_tokens,
                  "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                  "total_tokens": usage.total}
    base = {"id": response_id, "object": "response", "created_at": int(time.time()),
            "model": model, "output": [], "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "error": None, "incomplete_details": None}
    done = dict(base, status="completed", output=output, usage=usage_body)
    if not request.streaming:
        return JSON, json.dumps(done).encode()
    sequence = iter(range(1, 10_000))
    events: list = []

    def event(kind: str, **data) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(sequence), **data}))

    event("response.created", response=dict(base, status="in_progress", usage=None))
    event("response.in_progress", response=dict(base, status="in_progress", usage=None))
    for index, item in enumerate(output):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            event("response.output_item.added", output_index=index,
                  item=dict(item, status="in_progress", content=[]))
            event("response.content_part.added", output_index=index, item_id=item["id"],
                  content_index=0, part={"type": "output_text", "text": "", "annotations": []})
            event("response.output_text.delta", output_index=index, item_id=item["id"],
                  content_index=0, delta=text)
            event("response.output_text.done", output_index=index, item_id=item["id"],
                  content_index=0, text=text)
            event("response.content_part.done", output_index=index, item_id=item["id"],
                  content_index=0, part=item["content"][0])
        elif item["type"] == "function_call":
            event("response.output_item.added", output_index=index,
                  item=dict(item, status="in_progress", arguments=""))
            event("response.function_call_arguments.delta", output_index=index,
                  item_id=item["id"], delta=item["arguments"])
            event("response.function_call_arguments.done", output_index=index,
                  item_id=item["id"], arguments=item["arguments"])
        else:
            event("response.output_item.added", output_index=index, item=item)
        event("response.output_item.done", output_index=index, item=item)
    event("response.completed", response=done)
    return SSE, _sse(events)


# ---------------------------------------------------------------- Gemini
def gemini(request, reply, calls, usage, number, model):
    parts: list[dict] = []
    if reply.thinking:
        parts.append({"text": reply.thinking, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    for call_id, call in calls:
        parts.append({"functionCall": {"id": call_id, "name": call.name,
                                       "args": call.arguments}})
    usage_body = {"promptTokenCount": usage.input_tokens,
                  "candidatesTokenCount": usage.output_tokens,
                  "totalTokenCount": usage.total + usage.reasoning_tokens,
                  "cachedContentTokenCount": usage.cached_tokens,
                  "thoughtsTokenCount": usage.reasoning_tokens}
    finish = reply.stop or "STOP"
    body = {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": finish, "index": 0}],
            "usageMetadata": usage_body, "modelVersion": model,
            "responseId": f"fake-response-{number:04d}"}
    if not request.streaming:
        return JSON, json.dumps(body).encode()
    # One chunk with the parts, the finish reason and the usage (the real stream may split
    # the parts over several chunks; the last one carries finishReason and usageMetadata).
    if request.query.get("alt") == ["sse"]:
        return SSE, _sse([(None, body)])
    return JSON, json.dumps([body]).encode()   # without alt=sse: one JSON array
