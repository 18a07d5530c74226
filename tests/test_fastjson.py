"""core.util.fastjson: the standard library stands in for orjson until there is enough JSON to
make loading orjson pay (an import of a few appended lines never loads it), and what is
read and written is the same either way: these tests check the module's two claims
against the orjson installed, and that a process switches to orjson when it should."""

from __future__ import annotations

import enum
import json
import math
import os
import random
import struct
import subprocess
import sys
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from core.util import fastjson
from tests import usage_files as uf

REPO = Path(__file__).resolve().parent.parent


def _same(a, b) -> bool:
    """Equal values of equal types all the way down (a float by its bits: -0.0 is not 0.0);
    a walk without recursion (some values nest a thousand levels)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if struct.pack("<d", x) != struct.pack("<d", y) and not (math.isnan(x) and math.isnan(y)):
                return False
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True


def _nested(levels: int, leaf=None):
    value = [] if leaf is None else leaf
    for _ in range(levels - (leaf is None)):
        value = [value]
    return value


def _texts_to_read() -> list[bytes]:
    texts = [b'{"a":1,"a":2,"b":3}', b'-0', b'-0.0', b'0.0', b'1.0', b'1E2', b'1e-7', b'0.1e-400',
             b'1e400', b'-1e400', b'NaN', b'Infinity', b'-Infinity', b'\xef\xbb\xbf{"bom":1}',
             b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"', b'"\xed\xa0\x80"', b'"\xff"',
             b'"\\u0000\\u001f\\/\x7f"', b'"\xe2\x80\xa8"', b' {"x": [true, false, null]} \n',
             b'18446744073709551615', b'18446744073709551616', b'-9223372036854775808',
             b'-9223372036854775809', b'1' + b'0' * 400, b'123456789012345678901234567890.5',
             b'2.2250738585072011e-308', b'4.9e-324', b'1.7976931348623157e308',
             b'1.7976931348623157e309', b'[1,]', b'{"a":1,}', b'01', b'1.', b'.5', b'"\t"', b'',
             b'{"a"', b'[' * 999 + b']' * 999, b'[' * 1010 + b']' * 1010, b'[' * 1100 + b']' * 1100,
             '{"é": "日本語 \U0001f600", "k": [1, -2, 3.25, "x"]}'.encode("utf-8"),
             '{"x": 1}'.encode("utf-16"), '{"x": 2}'.encode("utf-32")]
    rnd = random.Random(7)
    for _ in range(20_000):   # floats of every magnitude, written in several ways
        f = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0]
        if math.isfinite(f):
            texts += [repr(f).encode(), b"%.17g" % f, b"%.30e" % f]
    for _ in range(2_000):   # integers around and beyond 64 bits
        n = rnd.choice([rnd.randrange(-2**63 - 10**6, 2**64 + 10**6), rnd.randrange(10**30)])
        texts.append(str(n).encode())
    return texts


def test_what_the_standard_library_reads_orjson_reads_as_the_same_value():
    """Whenever the standard-library path gives a value, the old path (orjson first, then
    the standard library) gives the same one; where they would differ (integers beyond
    64 bits: orjson makes floats of them) the standard-library path refuses."""
    read = refused = 0
    for text in _texts_to_read():
        try:
            small = fastjson._small_loads(text)
        except (ValueError, RecursionError):
            refused += 1
            continue
        read += 1
        assert _same(small, fastjson._full_loads(text)), text[:80]
    assert read > 50_000 and refused > 10   # both ways were taken
    with pytest.raises(ValueError):
        fastjson._small_loads(b"18446744073709551616")
    assert type(orjson.loads(b"18446744073709551616")) is float   # (why it refuses)


def test_loads_gives_the_old_answer_and_the_old_error():
    """`loads` through the standard library first: the value, or the error, of the old path."""
    for text in _texts_to_read()[:60]:
        try:
            want = ("value", fastjson._full_loads(text))
        except Exception as error:  # noqa: BLE001 - compared, not hidden
            want = ("error", type(error), str(error))
        left = fastjson._small_left
        try:
            fastjson._small_left = 1 << 40    # as a process that has not loaded orjson
            saved, fastjson._orjson = fastjson._orjson, None
            try:
                got = ("value", fastjson.loads(text))
            except Exception as error:  # noqa: BLE001
                got = ("error", type(error), str(error))
        finally:
            fastjson._orjson, fastjson._small_left = saved, left
        assert got[0] == want[0], text[:80]
        assert _same(got[1], want[1]) if got[0] == "value" else got == want, text[:80]


def _plain_values() -> list:
    every = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    texts = ["".join(every[i:i + 4096]) for i in range(0, len(every), 4096)]
    return [*texts, {"".join(every[:300]): every[300:600]}, 0, -1, 2**63 - 1, 2**63, 2**64 - 1,
            -2**63, 2**64, -2**63 - 1, 10**100, True, False, None, [], {}, (), (1, "two", None),
            {"a": {"b": [1, [2, [3, {"c": True}]]]}}, {"é": "ü", "": ""}, "lone \ud800 surrogate",
            {"k\udc80": ["x", "\udfff"]}, _nested(254), _nested(254, "x"),
            {"message": {"role": "assistant", "content": [{"type": "text", "text": "hi\n\t\"q\""}],
                         "usage": {"input": 3, "output": 301}}, "claude": {"requestId": "r"}}]


def test_plain_values_are_written_by_both_to_the_same_bytes():
    """What `plain_size` lets the standard library write comes out as orjson writes it
    (where orjson refuses, the old path's standard-library answer)."""
    assert fastjson._accelerate()     # dumps and dumps_utf8: the old path, orjson first
    for value in _plain_values():
        assert fastjson.plain_size(value, 1 << 30) >= 0, repr(value)[:80]
        assert fastjson._plain_utf8(value) == fastjson.dumps_utf8(value), repr(value)[:80]
        assert fastjson._encode(value) == fastjson.dumps(value), repr(value)[:80]
    assert fastjson._plain_utf8({"a": [1, "é"]}) == orjson.dumps({"a": [1, "é"]})


class _Colour(enum.Enum):
    RED = 1


class _Number(enum.IntEnum):
    ONE = 1


class _Text(str):
    pass


@pytest.mark.parametrize("value", [
    1.5, [0.1], {"a": 1e-07}, float("nan"), {1: "x"}, {None: 1}, {"a": _Text("x")}, _Text("x"),
    _Number.ONE, [_Colour.RED], datetime(2025, 1, 1, tzinfo=timezone.utc), OrderedDict(a=1),
    {"a": b"bytes"}, _nested(255), {"deep": _nested(254)}, object()])
def test_anything_else_is_left_to_orjson(value):
    """Floats (written differently: 1e-07 against 1e-7), subclasses, enums, datetimes,
    keys that are not text, more than MAX_DEPTH levels: not for the standard library."""
    assert fastjson.plain_size(value, 1 << 30) == -1
    assert orjson.dumps(1e-07) != fastjson._plain_utf8(1e-07)   # (why floats are left)


def test_plain_size_stops_at_the_limit():
    value = {"text": "x" * 1000}
    assert 1000 <= fastjson.plain_size(value, 2000) <= 1100
    assert fastjson.plain_size(value, 500) == -1


# In a child process: which JSON it does, and whether orjson got loaded.
SWITCH_RUN = r"""
import json, sys
from core.util import fastjson
steps = []
def loaded():
    return "orjson" in sys.modules
fastjson.loads(b'{"a": [1, 2, "three"]}')
fastjson.dumps_utf8({"a": [1, 2, "three"]})
fastjson.dumps({"a": None})
fastjson.common_decoder(100)(b'{"b": true}')
steps.append(("a few values", loaded()))
fastjson.dumps_utf8({"f": 0.5})
steps.append(("a float", loaded()))
with open(sys.argv[1], "w") as f:
    json.dump(steps, f)
"""

BUDGET_RUN = r"""
import json, sys
from core.util import fastjson
steps = []
item = json.dumps({"text": "x" * 1000}).encode()
for _ in range(fastjson.SMALL_BYTES // len(item) - 8):
    fastjson.loads(item)
steps.append(("within SMALL_BYTES", "orjson" in sys.modules))
for _ in range(16):
    fastjson.loads(item)
steps.append(("beyond it", "orjson" in sys.modules,
              fastjson.common_decoder(1) is sys.modules["orjson"].loads))
with open(sys.argv[1], "w") as f:
    json.dump(steps, f)
"""

DECODER_RUN = r"""
import json, sys
from core.util import fastjson
small = fastjson.common_decoder(10_000)
steps = [("a small read", "orjson" in sys.modules, small({"a": 1} and b'{"a": 1}'))]
big = fastjson.common_decoder(fastjson.SMALL_BYTES + 1)
steps.append(("a big read", "orjson" in sys.modules, big is sys.modules["orjson"].loads))
with open(sys.argv[1], "w") as f:
    json.dump(steps, f)
"""


def _child(tmp_path: Path, script: str) -> list:
    out = tmp_path / "steps.json"
    done = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True,
                          text=True, cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    return [list(step) for step in json.loads(out.read_text())]


def test_a_few_values_do_not_load_orjson_and_a_float_does(tmp_path):
    assert _child(tmp_path, SWITCH_RUN) == [["a few values", False], ["a float", True]]


def test_orjson_is_loaded_once_there_is_more_json_than_small_bytes(tmp_path):
    assert _child(tmp_path, BUDGET_RUN) == [["within SMALL_BYTES", False],
                                           ["beyond it", True, True]]


def test_strict_loads_reads_and_refuses_as_orjson_does():
    """For a caller to whom what orjson refuses is unreadable (the usage rows of stored
    entries): orjson's answer, its refusals as ValueError, integers beyond 64 bits as floats."""
    from core.store.usage.rows import _decode

    for text in (b'NaN', b'\xef\xbb\xbf{"bom": 1}', b'"\\ud800"', b'{"a"', b'1e400'):
        with pytest.raises(ValueError):
            fastjson.strict_loads(text)
    assert type(fastjson.strict_loads(b"18446744073709551616")) is float
    assert _decode(b'{"big": 18446744073709551616}') == {"big": float(2**64)}
    assert _decode(b'{"x": NaN}') is None and _decode(b"[1]") is None
    for text in _texts_to_read()[:60]:
        try:
            want = ("value", orjson.loads(text))
        except orjson.JSONDecodeError:
            want = ("refused",)
        try:
            got = ("value", fastjson.strict_loads(text))
        except ValueError:
            got = ("refused",)
        assert got[0] == want[0] and (got[0] == "refused" or _same(got[1], want[1])), text[:80]


def test_a_loop_about_to_read_much_gets_orjsons_decoder(tmp_path):
    assert _child(tmp_path, DECODER_RUN) == [["a small read", False, {"a": 1}],
                                            ["a big read", True, True]]


# `arbor import` in a child, with orjson loaded from the start when asked (argv[2] == "orjson").
IMPORT_RUN = r"""
import sys
if sys.argv[2] == "orjson":
    from core.util import fastjson
    assert fastjson._accelerate()
from tui.cli import main
code = main(sys.argv[3:])
assert code == 0, code
with open(sys.argv[1], "w") as f:
    f.write(str("orjson" in sys.modules))
"""


def _store_rows(db: Path) -> dict:
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "entries": conn.execute("SELECT seq, id, parent_seq, type, timestamp, depth, chain,"
                                    " msg_index, role, data FROM entries ORDER BY seq").fetchall(),
            "usage": conn.execute("SELECT * FROM usage ORDER BY seq").fetchall(),
            "sessions": conn.execute("SELECT uid, session_name, metadata, entry_count,"
                                     " message_count FROM external_sessions ORDER BY id").fetchall(),
            "records": conn.execute("SELECT source_key, size, state FROM import_sources"
                                    " ORDER BY source_key").fetchall(),
        }
    finally:
        conn.close()


def test_an_import_stores_the_same_bytes_with_or_without_orjson(tmp_path):
    """A Claude Code log imported, then grown by a few lines (text of every kind: escapes,
    control characters, non-ASCII, integers near and beyond 64 bits, a float), by a
    process that loads orjson only when it must and by one that uses it from the start:
    the stores hold the same rows, byte for byte."""
    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    stores = {"small": tmp_path / "small.db", "orjson": tmp_path / "orjson.db"}
    loaded = {}

    def run(name: str) -> None:
        out = tmp_path / f"{name}.out"
        done = subprocess.run(
            [sys.executable, "-c", IMPORT_RUN, str(out), name, "import", "-q", "--discover",
             "--db", str(stores[name])], capture_output=True, text=True, cwd=str(REPO),
            env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        loaded.setdefault(name, []).append(out.read_text())

    for name in stores:
        run(name)
    last = json.loads(session.read_text().splitlines()[-1])
    odd = "tab\t nl\n quote\" bs\\ nul\x00 esc\x1b del\x7f é 日本 \U0001f600 \u2028"
    lines = [uf._user("g1", last["uuid"], "2025-10-02T11:00:00.000Z", odd,
                      extra={"edge": 2**64 - 1, "neg": -2**63, "list": [None, True]}),
             uf._assistant("g2", "g1", "2025-10-02T11:00:01.000Z", "msg_g2", "req_g2",
                           uf._usage(9, 333, 700, 9000), block={"type": "text", "text": odd})]
    with open(session, "a") as handle:
        handle.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    for name in stores:
        run(name)
    assert loaded["orjson"] == ["True", "True"]
    assert loaded["small"] == ["False", "False"]   # (no float, no integer beyond 64 bits)
    assert _store_rows(stores["small"]) == _store_rows(stores["orjson"])
    # a float (orjson writes it) and an integer beyond 64 bits (orjson reads it as a float)
    for number, extra in enumerate([{"ratio": 0.1, "tiny": 1e-07}, {"big": 2**64 + 1}], 3):
        with open(session, "a") as handle:
            handle.write(json.dumps(uf._user(f"g{number}", f"g{number - 1}",
                                             "2025-10-02T11:00:02.000Z", "more", extra=extra))
                         + "\n")
        for name in stores:
            run(name)
        assert loaded["small"][-1] == "True"
        assert _store_rows(stores["small"]) == _store_rows(stores["orjson"])
