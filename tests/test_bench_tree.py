"""bench/claude_tree.py's `append_lines`, which bench_import.py uses to measure an import of a
session that grew: a benchmark run again on the tree it keeps must append new lines, not
the ids of its previous run (an import of duplicate uuids is another measurement)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import claude_tree  # noqa: E402


def _uuids(path: Path) -> list[str]:
    return [json.loads(line)["uuid"] for line in path.read_text().splitlines()
            if json.loads(line).get("uuid")]


def test_growing_a_session_again_with_the_same_seed_writes_new_ids(tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_text(json.dumps({
        "type": "user", "uuid": "00000000-0000-4000-8000-000000000001", "parentUuid": None,
        "sessionId": "s", "timestamp": "2025-10-01T10:00:00.000Z", "cwd": "/w",
        "message": {"role": "user", "content": "start"}}) + "\n")
    for _run in range(3):          # as bench_import.py does on every run: seed 1000
        assert claude_tree.append_lines(session, 10, seed=1000) > 0
    ids = _uuids(session)
    assert len(ids) > 20 and len(set(ids)) == len(ids)


def test_the_same_file_grown_the_same_way_gets_the_same_lines(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    line = json.dumps({"type": "user", "uuid": "00000000-0000-4000-8000-000000000002",
                       "parentUuid": None, "sessionId": "s",
                       "timestamp": "2025-10-01T10:00:00.000Z", "cwd": "/w",
                       "message": {"role": "user", "content": "start"}}) + "\n"
    for path in (first, second):
        path.write_text(line)
        claude_tree.append_lines(path, 10, seed=7)
    assert first.read_bytes() == second.read_bytes()
