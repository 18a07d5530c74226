"""A pi log with many separate roots (a conversation started over many times in one file,
as bench/bench_agents_import.py makes): each root a branch, named once, without asking the
store for every branch of the session at each root (that made pi's import 7–12x slower per
MB than Claude Code's on such files; the speed is measured in the bench)."""

from __future__ import annotations

import json

from core import open_store
from core.importing import import_paths


def many_roots(path, roots: int):
    lines = [json.dumps({"type": "session", "version": 3, "id": "cccccccc-3333-4333-8333-333333333333",
                         "timestamp": "2026-12-01T09:00:00.000Z", "cwd": "/work"})]
    for r in range(roots):
        parent = None
        for n, (role, text) in enumerate([("user", f"question {r}"), ("assistant", f"answer {r}")]):
            entry = f"{r:04x}{n:04x}"
            message = {"role": role, "content": text if role == "user" else
                       [{"type": "text", "text": text}], "timestamp": 1796115600000 + r * 10 + n}
            lines.append(json.dumps({"type": "message", "id": entry, "parentId": parent,
                                     "timestamp": "2026-12-01T09:00:00.000Z", "message": message}))
            parent = entry
    path.write_text("\n".join(lines) + "\n")
    return path


def test_each_root_is_a_branch_named_without_reading_every_branch_at_each_root(tmp_path, monkeypatch):
    log = many_roots(tmp_path / "2026-12-01T09-00-00-000Z_cccccccc-3333-4333-8333-333333333333.jsonl", 60)
    store = open_store(tmp_path / "arbor.db")
    try:
        reads = []
        every = type(store.branches).of_session

        def counted(self, *args, **kwargs):
            reads.append(args)
            return every(self, *args, **kwargs)

        monkeypatch.setattr(type(store.branches), "of_session", counted)
        import_paths(store, [log])
        [session] = store.sessions.list()
        branches = store.branches.of_session(session.id)
        names = [b.name for b in branches]
        # the first root is "main"; each other root is named after its first words
        # the first root is "main" (as before); each other root is named after its first words
        assert sorted(names) == sorted(["main", *(f"question {r}" for r in range(1, 60))])
        assert len(reads) <= 5, f"the session's branches were read {len(reads)} times"
        # a second import adds nothing and names nothing again
        assert import_paths(store, [log]).entries_added == 0
        assert len(store.branches.of_session(session.id)) == 60
    finally:
        store.close()
