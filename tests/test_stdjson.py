"""core.util.stdjson gives what the `json` package gives, results and errors alike."""

from __future__ import annotations

import json
import math

import pytest

from core.util import stdjson

VALUES = [
    {}, [], "", "plain", "é ü 中文 🎉", "\ud800 lone", "quote \" back \\ slash \n\t\x00\x1f",
    0, -1, 1 << 70, -(1 << 64), 1.5, -0.0, 1e-07, 1e300, float("inf"), float("-inf"),
    True, False, None, (1, 2), [1, [2, [3, {"a": None}]]],
    {"b": 1, "a": [1.25, "x", {"k": "v"}], "ü": True, "": ""},
    {1: "int key", 2.5: "float key", None: "none key", True: "bool key"},
    {"state": {"uid": "s1", "facts": {"cwd": "/w", "first_prompt": "¿qué?"},
               "prompt_parents": " ".join(f"{n:012x}" for n in range(50))}},
]

TEXTS = [
    '{"a": 1}', ' \t\n\r[1, 2.5, "x", null, true, false] \n', '"text"', "12", "-0", "1e5",
    "NaN", "Infinity", "-Infinity", '{"a": NaN}', "123456789012345678901234567890",
    '"\\ud83c\\udf89 \\u00e9"', '"\\ud800"', '{"a": {"b": [{}, []]}}',
    # errors, each as json says it
    "", "   ", "{", '{"a" 1}', "[1,]", '{"a": 1} x', "nul", '"unterminated', '"bad \\x"',
    '"ctrl \x01"', "\ufeff{}", "01", "[1 2]", '{"a": 1,}',
]


def _outcome(call, *args):
    try:
        return "value", call(*args)
    except Exception as error:  # noqa: BLE001 - the comparison is of the errors too
        return type(error), str(error)


def _same(left, right) -> bool:
    if left[0] != "value" or right[0] != "value":
        return left == right
    return json.dumps(left[1]) == json.dumps(right[1]) and _types(left[1]) == _types(right[1])


def _types(value):
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return type(value)


@pytest.mark.parametrize("value", VALUES)
def test_dumps_and_encoders_write_what_json_writes(value):
    assert _outcome(stdjson.dumps, value) == _outcome(json.dumps, value)
    for options in ({"ensure_ascii": False}, {"separators": (",", ":")},
                    {"ensure_ascii": False, "separators": (",", ":"), "default": str},
                    {"ensure_ascii": True, "separators": (",", ":"), "default": str}):
        assert _outcome(stdjson.encoder(**options), value) == \
            _outcome(json.JSONEncoder(**options).encode, value), options


def test_what_json_cannot_write_fails_as_in_json():
    odd = [{"set": {1}}, object(), {"nan": float("nan")}, {(1, 2): "tuple key"}]
    for value in odd:
        assert _outcome(stdjson.dumps, value) == _outcome(json.dumps, value)
    loop: list = []
    loop.append(loop)
    assert _outcome(stdjson.dumps, loop) == _outcome(json.dumps, loop)
    assert stdjson.dumps([1]) == "[1]", "a failure leaves nothing behind for the next value"
    strict = stdjson.encoder(default=str)
    assert strict({"set": {1}}) == json.JSONEncoder(default=str).encode({"set": {1}})


@pytest.mark.parametrize("text", TEXTS)
def test_loads_and_decoders_read_what_json_reads(text):
    assert _same(_outcome(stdjson.loads, text), _outcome(json.loads, text))
    data = text.encode("utf-8", "surrogatepass")
    assert _same(_outcome(stdjson.loads, data), _outcome(json.loads, data))

    def small(digits: str) -> int:
        value = int(digits)
        if value > 1 << 63:
            raise ValueError("too big")
        return value

    assert _same(_outcome(stdjson.decoder(parse_int=small), text),
                 _outcome(json.JSONDecoder(parse_int=small).decode, text))


def test_bytes_in_any_encoding_json_detects():
    for text in ('{"a": "é"}', "[1]", '"x"', "1"):
        for encoding in ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32",
                         "utf-32-le", "utf-32-be"):
            data = text.encode(encoding)
            assert stdjson.detect_encoding(data) == json.detect_encoding(data)
            assert _same(_outcome(stdjson.loads, data), _outcome(json.loads, data))
    for data in (b"", b"\x00", b"a\x00", b"ab\x00", b"\xef", b"\xff\xfe", b"{}"):
        assert stdjson.detect_encoding(data) == json.detect_encoding(data)
    for value in (None, 12, bytearray(b"[1]")):
        assert _same(_outcome(stdjson.loads, value), _outcome(json.loads, value))
