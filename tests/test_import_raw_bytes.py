"""A log line that is not valid UTF-8 is read with U+FFFD where its bytes were not, and
its original bytes stay recoverable from the entry; valid lines carry nothing extra
(issue 8, smaller items)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from core.importing.base import RAW_LINE_KEY, raw_lines_of

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
CASES = {
    "claude_code": (FIXTURES / "claude_code" / "dag_compact_after_rewind.jsonl", "cc.jsonl"),
    "pi": (FIXTURES / "pi" / "pi_v3_generated.jsonl", "pi.jsonl"),
    "codex": (FIXTURES / "codex" /
              "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
              "rollout-bad.jsonl"),
    "codex-turn-context": (FIXTURES / "codex" /
                           "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
                           "rollout-bad2.jsonl"),
}
MARKERS = {"codex": b'"message":"', "codex-turn-context": b'"cwd":"'}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_invalid_utf8_keeps_the_original_bytes(tmp_path, fmt):
    source, name = CASES[fmt]
    lines = source.read_bytes().splitlines()
    marker = MARKERS.get(fmt, b'"text":"')
    number = next(i for i, line in enumerate(lines) if marker in line
                  and (fmt != "codex-turn-context" or b"turn_context" in line))
    lines[number] = lines[number].replace(marker, marker + b"caf\xe9 \xff\xfe ", 1)
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    store = open_store(tmp_path / "arbor.db")
    try:
        result = import_paths(store, [path]).files[0]
        assert result.status == "imported" and result.skipped == []
        ext = store.sessions.by_uid(result.sessions[0].uid)
        entries = store.entries.of_session(ext.id)
        holding = [(e, raw_lines_of(e.data)) for e in entries if raw_lines_of(e.data)]
        assert len(holding) == 1
        entry, raws = holding[0]
        assert raws == [lines[number]]                     # exactly the bytes of the file
        assert "caf\ufffd \ufffd\ufffd " in str(entry.data)   # the text reads with U+FFFD
        # valid lines carry nothing extra
        assert all(RAW_LINE_KEY not in str(e.data) for e in entries if e is not entry)
    finally:
        store.close()
