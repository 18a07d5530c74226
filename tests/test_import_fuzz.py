"""Fuzz: every value of every line of every fixture (JSONL lines; the LangGraph database's
rows, their msgpack blobs and JSON metadata), replaced by values of the other JSON (or
SQLite) types, and by deeply nested ones. Import, replay, every export and the rendering of
every entry must never raise, and the import must never fail a file, or report a line as
an unexpected error, because of a value of the wrong type (issue 8, item 3).

Exhaustive and deterministic: every (value, replacement) pair of every line is tried.
Variant k of a fixture changes, in every line at once, the pairs k, k + V, k + 2V, ... of
that line (V = VARIANTS), so a fixture needs about V imports; pairs that would touch one
another (one value inside the other) go to later variants. ARBOR_FUZZ=full makes
V as large as the richest line's pair count: then each variant changes one value per line
(slower: about 1,300 imports; run it by hand).
"""

from __future__ import annotations

import io
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from core import open_store
from core.export.formats import FORMATS as EXPORT_FORMATS, export_session
from core.importing import import_paths
from core.importing.base import MAX_JSON_DEPTH
from tui.render.message_render import body, render_item
from tui.message_source import MessageSource
from tui.render.safe_text import safe_text

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
JSONL_FIXTURES = sorted(FIXTURES.rglob("*.jsonl"))
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def nested(levels: int, leaf: Any = "deep") -> Any:
    value = leaf
    for level in range(levels):
        value = [value] if level % 2 else {"type": value}
    return value


# One value of each JSON type, chosen to look like what the importers expect in the wrong
# place (a block-like object whose fields have the wrong types), and a nested one. Once per
# line, nesting exactly as deep as a line may be (MAX_JSON_DEPTH, accepted: every
# recursive reader after the import must cope) and far deeper (the line is skipped).
REPLACEMENTS: dict[str, Any] = {
    "null": None,
    "bool": True,
    "number": -1,
    "string": "[/x] \x1b[2J ✓",
    "array": [{"type": []}, None],
    "object": {"type": {}, "text": [], "content": 7, "id": []},
    "nested": nested(30),
}
TOO_DEEP = nested(1000)
VARIANTS = 10**9 if os.environ.get("ARBOR_FUZZ") == "full" else 40


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def value_paths(value: Any, prefix: tuple = ()):
    """Every position inside a line (not the line itself)."""
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield prefix + (key,), child
        yield from value_paths(child, prefix + (key,))


def mutations(line: dict) -> list[tuple[tuple, Any]]:
    out = []
    deepest: tuple = ()
    for path, value in value_paths(line):
        kind = json_type(value)
        out.extend((path, v) for other, v in REPLACEMENTS.items() if other != kind)
        if len(path) > len(deepest):
            deepest = path
    if deepest:
        out.append((deepest, nested(MAX_JSON_DEPTH - len(deepest))))
        out.append((deepest[:1], TOO_DEEP))
    return out


def batches(pairs: list, count: int) -> list[list]:
    """`pairs` in about `count` batches (pair j in batch j mod count); pairs that would touch
    another of their batch (one path a prefix of the other) are batched again, after."""
    if not pairs:
        return []
    out: list[list] = [[] for _ in range(min(count, len(pairs)))]
    left: list = []
    for j, pair in enumerate(pairs):
        batch = out[j % len(out)]
        if any(_nested_paths(pair[0], other[0]) for other in batch):
            left.append(pair)
        else:
            batch.append(pair)
    return out + batches(left, count)


def _nested_paths(a: tuple, b: tuple) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def replaced(line: dict, changes: list[tuple[tuple, Any]]) -> dict:
    copy = json.loads(json.dumps(line))
    for path, value in changes:
        holder = copy
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = value
    return copy


def unique_ids(line: dict, tag: str) -> dict:
    """Session ids made unique per variant, so that no variant merges into another's session."""
    if line.get("type") == "session" and isinstance(line.get("id"), str):
        line = dict(line, id=f"{line['id']}-{tag}")
    payload = line.get("payload")
    if line.get("type") == "session_meta" and isinstance(payload, dict) and \
            isinstance(payload.get("id"), str):
        line = dict(line, payload=dict(payload, id=f"{payload['id']}-{tag}"))
    return line


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def variants(fixture: Path):
    texts = [text for text in fixture.read_text().splitlines() if text.strip()]
    lines = [_shortened(json.loads(text)) for text in texts if _is_object(text)]
    raw_tail = [text for text in texts if not _is_object(text)]
    per_line = [batches(mutations(line), VARIANTS) for line in lines]
    for k in range(max(len(b) for b in per_line)):
        out = []
        for line, line_batches in zip(lines, per_line):
            line = unique_ids(line, f"v{k}")
            if k < len(line_batches):
                line = replaced(line, line_batches[k])
            out.append(_dumps_any_depth(line))
        yield k, "\n".join(out + raw_tail) + "\n"


def _shortened(value: Any) -> Any:
    """Long texts cut to 200 characters: the fuzz is about shapes (sizes are tested
    elsewhere), and drawing 15 KB tool outputs hundreds of times would only cost time."""
    if isinstance(value, str):
        return value[:200]
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shortened(v) for v in value]
    return value


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _dumps_any_depth(value: Any) -> str:
    """JSON text of a value however deep (the standard encoder recurses)."""
    marker = "\x00deep\x00"
    found: list[Any] = []

    def swap(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list):
            if len(v) == 1 and _depth(v) > 100:
                found.append(v)
                return marker
            return [swap(x) for x in v]
        return v

    text = dump(swap(value))
    for deep in found:
        text = text.replace(dump(marker), _deep_text(deep), 1)
    return text


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        depth += 1
    return depth


def _deep_text(value: Any) -> str:
    opens, closes = [], []
    while isinstance(value, (list, dict)):
        if isinstance(value, list):
            opens.append("[")
            closes.append("]")
            value = value[0]
        else:
            opens.append('{"type":')
            closes.append("}")
            value = value["type"]
    return "".join(opens) + dump(value) + "".join(reversed(closes))


def check_session(store, uid: str, console: Console, drawn: set) -> None:
    """Replay every branch, draw every entry of both views (raw and context; opened in full,
    folded through the body alone: the rest of a folded item is its safe one-line text),
    and write every export. `drawn`: what was drawn before (an entry of a line no variant
    changed is the same in every variant, and is drawn once)."""
    session = store.sessions.by_uid(uid)
    assert session is not None
    for branch in store.branches.of_session(session.id):
        store.paths.replay(branch.head_seq)
        for raw in (False, True):
            source = MessageSource(store, branch, raw=raw)
            for index in range(source.count):
                item = source.item(index)
                if item is None:
                    continue
                key = (item.kind, item.entry.type, item.entry.role, _dumps_any_depth(item.entry.data))
                if key in drawn:
                    continue
                drawn.add(key)
                strips, _ = render_item(console, item, width=60, expanded=True, label="l", now=NOW)
                lines = [strip.text for strip in strips]
                # a readable body under the header, never "(empty)" (issue 26, item 4)
                assert any(line.strip() for line in lines[1:]) or item.kind == "spawn", lines
                assert not any("(empty)" in line for line in lines), lines
                body(item, False, 60)
    for fmt in EXPORT_FORMATS:
        out = io.StringIO()
        export_session(store, uid, fmt, out)
        safe_text(out.getvalue())


@pytest.mark.parametrize("fixture", JSONL_FIXTURES, ids=lambda p: p.name[:40])
def test_every_value_replaced_by_every_other_type(fixture, tmp_path):
    store = open_store(tmp_path / "arbor.db")
    console = Console(width=80, color_system=None, force_terminal=False)
    problems = []
    drawn: set = set()
    try:
        for k, text in variants(fixture):
            path = tmp_path / f"v{k}-{fixture.name}"
            path.write_text(text)
            report = import_paths(store, [path])
            for result in report.files:
                error = result.error or ""
                if error.startswith(("unexpected", "database error")):
                    problems.append((k, result.error))
                # a value of another type is handled, not left to the importers' last
                # resort for shapes nobody foresaw (which would keep the line raw)
                problems.extend((k, f"line {s.line}: {s.reason}") for s in result.skipped
                                if "unexpected shape" in s.reason)
                for session in result.sessions:
                    check_session(store, session.uid, console, drawn)
    finally:
        store.close()
    assert problems == []


# ------------------------------------------------------------------------ LangGraph
# The LangGraph fixture is a SQLite database: its "lines" are the rows of `checkpoints` and
# `writes`. Every column value is replaced by values of the other SQLite types, and every
# value inside a checkpoint's msgpack blob (LangChain messages are msgpack extensions,
# decoded and packed again) and its JSON metadata by values of the other JSON types.
LG_FIXTURE = FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite"
SQL_REPLACEMENTS = [None, 7, 2.5, "text", b"\x00\xffblob"]


class Ext:
    """A msgpack extension value, decoded (LangGraph packs LangChain objects so)."""

    def __init__(self, code: int, value: Any):
        self.code, self.value = code, value


def _unpack(blob: bytes) -> Any:
    import msgpack

    return msgpack.unpackb(blob, ext_hook=lambda code, data: Ext(code, _unpack(data)),
                           strict_map_key=False, raw=False)


def _pack(value: Any) -> bytes:
    import msgpack

    def default(obj: Any) -> Any:
        if isinstance(obj, Ext):
            return msgpack.ExtType(obj.code, _pack(obj.value))
        raise TypeError(type(obj).__name__)

    return msgpack.packb(value, default=default, use_bin_type=True)


def _blob_paths(value: Any, prefix: tuple = ()):
    if isinstance(value, Ext):
        yield from _blob_paths(value.value, prefix + (".value",))
        return
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield prefix + (key,), child
        yield from _blob_paths(child, prefix + (key,))


def _blob_replaced(value: Any, changes: list) -> Any:
    import copy

    out = copy.deepcopy(value)
    for path, new in changes:
        holder = out
        for key in path[:-1]:
            holder = holder.value if key == ".value" else holder[key]
        if path[-1] == ".value":
            holder.value = new
        else:
            holder[path[-1]] = new
    return out


def _value_mutations(value: Any, paths) -> list:
    out = []
    deepest: tuple = ()
    for path, old in paths(value):
        kind = "object" if isinstance(old, Ext) else json_type(old)
        out.extend((path, v) for other, v in REPLACEMENTS.items() if other != kind)
        if len(path) > len(deepest):
            deepest = path
    if deepest:  # as deep as a line may be, and far deeper
        out.append((deepest, nested(MAX_JSON_DEPTH - len(deepest))))
        out.append((deepest[:1], TOO_DEEP))
    return out


def langgraph_variants(tmp_path: Path):
    import shutil
    import sqlite3

    source = sqlite3.connect(f"{LG_FIXTURE.as_uri()}?mode=ro", uri=True)
    try:
        rows = {table: source.execute(f"SELECT rowid, * FROM {table}").fetchall()
                for table in ("checkpoints", "writes")}
        columns = {table: [r[1] for r in source.execute(f"PRAGMA table_info({table})")]
                   for table in rows}
    finally:
        source.close()
    # per row: its changes, each (column, path inside the value or () for the value itself,
    # new value), in batches like a JSONL line's
    plans = []
    for table, table_rows in rows.items():
        for row in table_rows:
            rowid, values = row[0], dict(zip(columns[table], row[1:]))
            changes = []
            for column, value in values.items():
                changes.extend((column, (), v) for v in SQL_REPLACEMENTS
                               if type(v) is not type(value))
                if column in ("checkpoint", "value") and values.get("type") == "msgpack":
                    changes.extend((column, path, v)
                                   for path, v in _value_mutations(_unpack(value), _blob_paths))
                elif column == "metadata":
                    changes.extend((column, path, v) for path, v in
                                   _value_mutations(json.loads(value), value_paths))
            plans.append((table, rowid, values, _batches_of(changes)))
    for k in range(max(len(plan[3]) for plan in plans)):
        path = tmp_path / f"lg-v{k}.sqlite"
        shutil.copy(LG_FIXTURE, path)
        conn = sqlite3.connect(path)
        try:
            for table, rowid, values, row_batches in plans:
                if k >= len(row_batches):
                    continue
                for column, new in _apply(values, row_batches[k]).items():
                    try:
                        conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?",
                                     (new, rowid))
                    except sqlite3.IntegrityError:
                        pass  # (NOT NULL: not a state a database can be in)
            conn.commit()
        finally:
            conn.close()
        yield k, path


def _batches_of(changes: list) -> list[list]:
    """`batches` of (column, path, value) changes: a column's own change and changes inside
    it never share a batch (nor two changes of one path)."""
    pairs = [((column, *path), (column, path, v)) for column, path, v in changes]
    return [[change for _key, change in batch] for batch in batches(pairs, VARIANTS)]


def _apply(values: dict, changes: list) -> dict:
    """The new value of each column the changes touch."""
    out = {}
    for column, path, new in changes:
        if path == ():
            out[column] = new
            continue
        if column == "metadata":
            current = json.loads(values[column]) if column not in out else out[column]
            out[column] = replaced(current, [(path, new)])
        else:
            current = _unpack(values[column]) if column not in out else out[column]
            out[column] = _blob_replaced(current, [(path, new)])
    for column, value in out.items():
        if column == "metadata" and not isinstance(value, (bytes, str, int, float, type(None))):
            out[column] = _dumps_any_depth(value).encode()
        elif column in ("checkpoint", "value") and not isinstance(
                value, (bytes, str, int, float, type(None))):
            out[column] = _pack(value)
    return out


def test_langgraph_every_value_replaced_by_every_other_type(tmp_path):
    store = open_store(tmp_path / "arbor.db")
    console = Console(width=80, color_system=None, force_terminal=False)
    problems = []
    drawn: set = set()
    try:
        for k, path in langgraph_variants(tmp_path):
            report = import_paths(store, [path])
            for result in report.files:
                error = result.error or ""
                if error.startswith(("unexpected", "database error")):
                    problems.append((k, result.error))
                for session in result.sessions:
                    check_session(store, session.uid, console, drawn)
    finally:
        store.close()
    assert problems == []
