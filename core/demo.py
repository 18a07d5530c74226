"""The demo store: the same sessions, ids and times every time it is built.

Several sessions from different agents with user, assistant and tool messages, branches,
checkpoints, labels, a compaction, an archived session and one long session of a few
thousand messages. Pictures of it never change, so screenshots and snapshot tests use it.
"""

from __future__ import annotations

import os
import random
import sqlite3
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .actions import operations
from core.model.errors import StoreUnavailable
from core.store.sqlite_probe import ARBOR, EMPTY, MISSING, UNREADABLE, probe
from .store import Store, open_store

DEMO_MARK = "demo"
DEMO_VERSION = "1"
DEMO_START = datetime(2026, 11, 20, 9, 0, 0, tzinfo=timezone.utc)
# The moment the demo is "looked at": ages in pictures are measured from here.
DEMO_NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone.utc)
LONG_SESSION_MESSAGES = 3000


class DemoClock:
    """A clock that moves forward a fixed step each time it is read."""

    def __init__(self, start: datetime = DEMO_START, step: timedelta = timedelta(seconds=7)):
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now

    def jump(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def _ids(seed: int):
    rng = random.Random(seed)
    return lambda: f"{rng.getrandbits(32):08x}"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: tuple[str, str, dict[str, Any]], model: str = "claude-sonnet-4-5",
              thinking: str | None = None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if thinking:
        blocks.append({"type": "thinking", "thinking": thinking})
    if text:
        blocks.append({"type": "text", "text": text})
    for call_id, name, args in calls:
        blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    return {"role": "assistant", "content": blocks, "model": model,
            "stopReason": "toolUse" if calls else "stop",
            "usage": {"input": 1200 + 37 * len(text), "output": 40 + len(text) // 4}}


def tool_result(call_id: str, name: str, text: str, is_error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": is_error}


class _Script:
    """Writes one demo session through the same calls the app and agents use."""

    def __init__(self, store: Store, clock: DemoClock, name: str, source: str, cwd: str,
                 metadata: dict[str, Any] | None = None):
        self.store = store
        self.clock = clock
        self.session = store.sessions.create(name, source=source, cwd=cwd,
                                                     metadata={"demo": True, **(metadata or {})})
        self.branch = store.branches.create(self.session.id, name="main")
        self.entries: list = []

    def say(self, *messages: dict[str, Any]):
        for message in messages:
            self.entries.append(self.store.entries.append_to_branch(self.branch.id, "message",
                                                            {"message": message}))
        return self.entries[-1]

    def entry(self, entry_type: str, data: dict[str, Any]):
        self.entries.append(self.store.entries.append_to_branch(self.branch.id, entry_type, data))
        return self.entries[-1]

    def use(self, branch) -> None:
        self.branch = branch


def _login_session(store: Store, clock: DemoClock) -> tuple[_Script, datetime]:
    s = _Script(store, clock, "Fix flaky login test", "claude_code", "~/src/webapp",
                {"model": "claude-sonnet-4-5"})
    s.entry("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    s.say(user("The login test in `tests/auth/login.spec.ts` fails about one run in five. "
               "Can you find out why and fix it?"))
    s.say(assistant("I'll start by reading the test and the login handler.",
                    ("call_1", "read", {"path": "tests/auth/login.spec.ts"}),
                    thinking="Flaky usually means timing or shared state. Read the test first."))
    s.say(tool_result("call_1", "read",
                      "test('logs in', async () => {\n  await page.fill('#email', user.email);\n"
                      "  await page.click('#submit');\n  expect(await page.title()).toBe('Dashboard');\n});"))
    s.say(assistant("The test checks the title right after the click, without waiting for the "
                    "navigation. Let me run it a few times to confirm.",
                    ("call_2", "bash", {"command": "npx playwright test tests/auth/login.spec.ts --repeat-each 10"})))
    s.say(tool_result("call_2", "bash", "  8 passed\n  2 failed\n    Expected: \"Dashboard\"\n    Received: \"Sign in\""))
    checkpoint_entry = s.say(assistant(
        "Confirmed: **2 of 10** runs fail. The cause is a race between the click and the title check.\n\n"
        "Two ways to fix it:\n\n1. wait for the URL to change: `await page.waitForURL('/dashboard')`\n"
        "2. use a web-first assertion: `await expect(page).toHaveTitle('Dashboard')`\n\n"
        "The second retries until it passes or times out. Shall I apply it?"))
    store.annotations.create_checkpoint(s.branch.id, "race found", is_auto=False,
                            session_state={"phase": "diagnosed", "failing_runs": 2})
    s.say(user("Yes, use the web-first assertion."))
    s.say(assistant("Applying the change.",
                    ("call_3", "edit", {"path": "tests/auth/login.spec.ts",
                                        "oldText": "expect(await page.title()).toBe('Dashboard');",
                                        "newText": "await expect(page).toHaveTitle('Dashboard');"})))
    s.say(tool_result("call_3", "edit", "Applied 1 edit to tests/auth/login.spec.ts"))
    s.say(assistant("", ("call_4", "bash", {"command": "npx playwright test tests/auth/login.spec.ts --repeat-each 50"})))
    s.say(tool_result("call_4", "bash", "  50 passed (41.2s)"))
    done = s.say(assistant("All **50** runs pass now. The fix is a one-line change in "
                           "`tests/auth/login.spec.ts`:\n\n```ts\nawait expect(page).toHaveTitle('Dashboard');\n```"))
    operations.set_label(store, done.seq, "fixed")
    store.annotations.create_checkpoint(s.branch.id, "tests green", session_state={"phase": "fixed", "failing_runs": 0})
    # The user also tried the other fix: a rollback to the checkpoint, with a branch summary.
    clock.jump(minutes=20)
    other = operations.rollback(store, s.branch.id, entry_id=checkpoint_entry.seq,
                                summary="Tried the web-first assertion: 50 of 50 runs passed.")
    s.use(other)
    s.say(user("Actually, try waiting for the URL instead, so we see which is faster."))
    s.say(assistant("Switching to `waitForURL`.",
                    ("call_5", "edit", {"path": "tests/auth/login.spec.ts",
                                        "oldText": "expect(await page.title()).toBe('Dashboard');",
                                        "newText": "await page.waitForURL('/dashboard');\n  expect(await page.title()).toBe('Dashboard');"})))
    s.say(tool_result("call_5", "edit", "Applied 1 edit to tests/auth/login.spec.ts"))
    s.say(assistant("", ("call_6", "bash", {"command": "npx playwright test tests/auth/login.spec.ts --repeat-each 50"})))
    s.say(tool_result("call_6", "bash", "  50 passed (38.9s)"))
    last = s.say(assistant("Also green, and about **6% faster** (38.9 s against 41.2 s). "
                           "Both fixes work; `waitForURL` states the intent more plainly."))
    operations.set_branch_label(store, other.id, "waitForURL variant")
    operations.set_label(store, last.seq, "compare")
    return s, clock.now


def _login_subagent(store: Store, clock: DemoClock, s: _Script, at: datetime) -> None:
    """The login session goes on with a sub-agent (Claude Code's Agent tool) that looks for
    the same race in other tests. Written last, on a clock set back to where the login
    session ended, so that every other session keeps its times."""
    saved = clock.now
    clock.now = at
    s.say(user("Are other tests racing the same way?"))
    call = s.say(assistant("I'll have a sub-agent search the suite while we wait.",
                           ("toolu_demo_explore", "Agent",
                            {"description": "Find tests that check the title right after a click",
                             "prompt": "Search tests/ for expect(await page.title()) right after "
                                       "a click or a fill, without a wait. List file and line.",
                             "subagent_type": "Explore"})))
    child = store.sessions.create(
        "Find tests that check the title right after a click", source="claude_code",
        cwd="~/src/webapp", kind="subagent", parent_session=s.session.uid,
        metadata={"demo": True, "agentType": "Explore", "toolUseId": "toolu_demo_explore",
                  "description": "Find tests that check the title right after a click"})
    agent = _Script.__new__(_Script)
    agent.store, agent.clock, agent.session, agent.entries = store, clock, child, []
    agent.branch = store.branches.create(child.id, name="main")
    agent.say(user("Search tests/ for expect(await page.title()) right after a click or a fill, "
                   "without a wait. List file and line."),
              assistant("", ("call_g1", "grep", {"pattern": "expect\\(await page\\.title\\(\\)\\)",
                                                "path": "tests/"}), model="claude-haiku-4-5"),
              tool_result("call_g1", "grep",
                          "tests/auth/login.spec.ts:4\ntests/account/settings.spec.ts:12\n"
                          "tests/cart/checkout.spec.ts:31"),
              assistant("Two more tests race the same way:\n\n- `tests/account/settings.spec.ts:12`\n"
                        "- `tests/cart/checkout.spec.ts:31`\n\n(`login.spec.ts` is the one being fixed.)",
                        model="claude-haiku-4-5"))
    store.sessions.add_spawn_point(s.session.id, "claude:toolu_demo_explore", call.seq)
    store.sessions.set_lineage(child.id, spawn_ref="key:claude:toolu_demo_explore")
    store.sessions.link_child(child.id, s.session.id, call.seq)
    s.say(tool_result("toolu_demo_explore", "Agent",
                      "Two more tests race the same way: tests/account/settings.spec.ts:12 and "
                      "tests/cart/checkout.spec.ts:31."))
    s.say(assistant("The sub-agent found **two more** tests with the same race; the same "
                    "one-line fix applies to both."))
    clock.now = saved


def _payments_session(store: Store, clock: DemoClock) -> None:
    clock.jump(hours=5)
    s = _Script(store, clock, "Refactor payment module", "codex", "~/src/shop",
                {"model": "gpt-5-codex"})
    s.say(user("Split `payments.py` into a package: gateway client, retry policy and webhooks."))
    s.say(assistant("Let me look at the module first.", ("call_a", "shell", {"command": "wc -l shop/payments.py"}),
                    model="gpt-5-codex"))
    s.say(tool_result("call_a", "shell", "1842 shop/payments.py"))
    plan = s.say(assistant("It is 1,842 lines. My plan:\n\n- `shop/payments/gateway.py`: the HTTP client\n"
                           "- `shop/payments/retry.py`: backoff and idempotency keys\n"
                           "- `shop/payments/webhooks.py`: signature checks and handlers\n"
                           "- `shop/payments/__init__.py`: re-exports, so imports keep working",
                           model="gpt-5-codex"))
    store.annotations.create_checkpoint(s.branch.id, "plan agreed", session_state={"step": "plan"})
    for step, (name, lines) in enumerate([("gateway", 610), ("retry", 240), ("webhooks", 530)], 1):
        s.say(user(f"Go ahead with {name}."))
        s.say(assistant(f"Moving the {name} code.", (f"call_m{step}", "apply_patch",
                                                     {"path": f"shop/payments/{name}.py"}), model="gpt-5-codex"))
        s.say(tool_result(f"call_m{step}", "apply_patch", f"Created shop/payments/{name}.py ({lines} lines)"))
        s.say(assistant(f"`{name}.py` is in place; the tests for it pass.", model="gpt-5-codex"))
    main_branch = s.branch
    operations.compact(store, main_branch.id, keep_recent_tokens=120)
    s.say(user("Now run the whole suite."))
    s.say(assistant("", ("call_t", "shell", {"command": "pytest -q"}), model="gpt-5-codex"))
    s.say(tool_result("call_t", "shell", "412 passed, 3 failed", is_error=False))
    s.say(assistant("Three webhook tests fail: they patch `shop.payments.verify_signature`, "
                    "which now lives in `shop.payments.webhooks`.", model="gpt-5-codex"))
    # An alternative explored from the plan: keep one module, only extract the client.
    clock.jump(minutes=45)
    alt = operations.branch(store, main_branch.id, plan.seq, name="minimal split")
    s.use(alt)
    s.say(user("Alternative: only extract the gateway client and leave the rest."))
    s.say(assistant("That is a smaller change: one new file and 600 fewer lines in `payments.py`.",
                    model="gpt-5-codex"))
    operations.make_current(store, main_branch.id)


def _release_notes_session(store: Store, clock: DemoClock) -> None:
    clock.jump(hours=20)
    s = _Script(store, clock, "Write release notes for 2.4", "pi", "~/src/cli-tool")
    s.entry("model_change", {"provider": "openai", "modelId": "gpt-5"})
    s.entry("thinking_level_change", {"thinkingLevel": "medium"})
    s.say(user("Draft release notes for 2.4 from the changelog."))
    s.say(assistant("", ("call_r", "read", {"path": "CHANGELOG.md"}), model="gpt-5"))
    s.say(tool_result("call_r", "read", "## 2.4.0\n- add --json output\n- fix crash on empty config\n- drop Python 3.9"))
    notes = s.say(assistant("# arbor-cli 2.4\n\n## New\n- `--json` prints machine-readable output.\n\n"
                            "## Fixed\n- No more crash when the config file is empty.\n\n"
                            "## Breaking\n- Python 3.9 is no longer supported.", model="gpt-5"))
    operations.set_label(store, notes.seq, "draft 1")


def _langgraph_session(store: Store, clock: DemoClock) -> None:
    clock.jump(hours=3)
    s = _Script(store, clock, "Trip planner agent (LangGraph)", "langgraph", "~/agents/planner",
                {"thread_id": "trip-42"})
    store.branches.update_fields(s.branch.id, session_state={"city": "Lisbon", "days": 3})
    s.say(user("Plan three days in Lisbon."))
    s.say(assistant("", ("call_w", "weather", {"city": "Lisbon"}), model="gpt-4o"))
    s.say(tool_result("call_w", "weather", "{\"forecast\": \"sunny\", \"high\": 24}"))
    day = s.say(assistant("Day 1: Alfama and the castle. Day 2: Belém. Day 3: Sintra.", model="gpt-4o"))
    cp = store.annotations.create_checkpoint(s.branch.id, "itinerary v1", is_auto=True,
                                 session_state={"city": "Lisbon", "days": 3, "step": "itinerary"})
    s.say(user("Make it four days."))
    s.say(assistant("Day 4: Cascais and the coast.", model="gpt-4o"))
    clock.jump(minutes=10)
    rolled = operations.rollback(store, s.branch.id, checkpoint_id=cp.id)
    s.use(rolled)
    s.say(user("Keep three days but add a food tour."))
    s.say(assistant("Day 2 evening: a food tour in Mouraria.", model="gpt-4o"))
    del day


def _long_session(store: Store, clock: DemoClock) -> None:
    clock.jump(hours=2)
    s = _Script(store, clock, "Migrate orders table to new schema", "arbor", "~/src/shop",
                {"model": "claude-opus-4"})
    rng = random.Random(11)
    tables = ["orders", "order_items", "customers", "invoices", "shipments"]
    messages = [user("Migrate the orders data to the v2 schema in batches of 10,000 rows, "
                     "checking counts after every batch.")]
    batch = 0
    while len(messages) < LONG_SESSION_MESSAGES - 2:
        batch += 1
        table = tables[batch % len(tables)]
        call = f"call_{batch}"
        rows = 10_000 - rng.randrange(0, 40)
        messages.append(assistant(f"Batch {batch}: copying `{table}`.",
                                  (call, "sql", {"query": f"INSERT INTO {table}_v2 SELECT * FROM {table} "
                                                          f"WHERE id BETWEEN {batch * 10000} AND {batch * 10000 + 9999}"}),
                                  model="claude-opus-4"))
        messages.append(tool_result(call, "sql", f"{rows} rows copied"))
        messages.append(assistant(f"Batch {batch} done: {rows} rows, counts match.", model="claude-opus-4"))
        if batch % 50 == 0:
            messages.append(user(f"Status after batch {batch}?"))
    messages = messages[:LONG_SESSION_MESSAGES - 2]
    entries = store.entries.append_messages(s.branch.id, messages)
    store.annotations.create_checkpoint(s.branch.id, f"batch {batch // 2}", entry_seq=entries[len(entries) // 2].seq,
                            session_state={"batch": batch // 2})
    operations.compact(store, s.branch.id, keep_recent_tokens=4000)
    s.say(user("Summarise where we are."))
    s.say(assistant(f"All {batch} batches are copied and every count matched. "
                    "Next: switch reads to `orders_v2` behind the feature flag.", model="claude-opus-4"))


def _archived_session(store: Store, clock: DemoClock) -> None:
    clock.jump(hours=1)
    s = _Script(store, clock, "Old experiment: prompt caching", "claude_code", "~/scratch")
    s.say(user("Does prompt caching help our eval runs?"))
    s.say(assistant("It cut input cost by about 70% on repeated system prompts."))
    store.sessions.set_active(s.session.id, False)


def build_demo(path: str | os.PathLike) -> Path:
    """Build the demo store at `path`, or rebuild the demo store there; never any other file.

    A rebuild never unlinks anything: the new demo is written in a private folder, then
    copied over the old one page by page by SQLite's backup, while this process holds the
    old one's lock exclusively. If another process has it open, nothing changes and
    `DemoInUse` says so (its readers and writers would otherwise be left on a file that
    changed under them).
    """
    path = Path(path)
    try:
        return _build_demo(path)
    except (sqlite3.Error, OSError) as error:   # a full disk, a read-only file or folder
        reason = getattr(error, "strerror", None) or error
        raise StoreUnavailable(f"cannot write the demo store {path}: {reason}") from None


def _build_demo(path: Path) -> Path:
    found = probe(path)
    if found.kind in (MISSING, EMPTY):
        _write_demo(path)
        return path
    if found.kind == UNREADABLE:
        raise StoreUnavailable(f"cannot read {path}: {found.reason}")
    if found.kind != ARBOR or DEMO_MARK not in found.meta:
        raise StoreUnavailable(f"{path} exists and is not a demo store; the demo will not "
                               "overwrite it (give another --db)")
    page_size = _page_size(path)
    with tempfile.TemporaryDirectory(prefix="arbor-demo-") as folder:
        fresh = Path(folder) / "demo.db"
        _write_demo(fresh, page_size=page_size)
        _copy_over(fresh, path, page_size)
    return path


class DemoInUse(StoreUnavailable):
    """The demo store is open in another process: it is left as it is."""


def _write_demo(path: Path, page_size: int | None = None) -> None:
    if page_size is not None:
        # A backup cannot change the page size of a store in WAL mode: give the new file
        # the old one's before arbor creates its tables (a new store keeps what it finds).
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute(f"PRAGMA page_size = {int(page_size)}")
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
    clock = DemoClock()
    store = open_store(path, clock=clock, id_factory=_ids(2026))
    try:
        # The mark is committed on its own first: a build that fails half-way (a full disk)
        # leaves a store the next `arbor --demo` knows as its own and builds again.
        store.set_meta(DEMO_MARK, DEMO_VERSION)
        with store.transaction():
            login, login_end = _login_session(store, clock)
            _payments_session(store, clock)
            _long_session(store, clock)
            _release_notes_session(store, clock)
            _langgraph_session(store, clock)
            _archived_session(store, clock)
            _login_subagent(store, clock, login, login_end)
        store.checkpoint_log()
    finally:
        store.close()


def _uri(path: Path, mode: str) -> str:
    return f"{path.absolute().as_uri()}?mode={mode}"


def _page_size(path: Path) -> int:
    conn = sqlite3.connect(_uri(path, "ro"), uri=True)
    try:
        return conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()


def _copy_over(fresh: Path, path: Path, page_size: int) -> None:
    """Replace the content of the demo store at `path` by that of `fresh`, through SQLite."""
    target = sqlite3.connect(_uri(path, "rw"), uri=True, isolation_level=None, timeout=0)
    try:
        # In exclusive locking mode the first write transaction takes the file's EXCLUSIVE
        # lock, which fails at once while any other connection (which, in WAL mode, holds a
        # SHARED lock for as long as it is open) has the store; and it keeps the lock until
        # this connection closes, so nobody opens the store half-copied.
        target.execute("PRAGMA locking_mode = EXCLUSIVE")
        try:
            target.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise DemoInUse(
                    f"{path} is open in another program (another arbor?), so the demo was not "
                    "rebuilt; close it and run arbor --demo again, or open it as it is with "
                    "--db") from None
            raise
        try:
            tables = {name for (name,) in target.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            marked = "store_meta" in tables and target.execute(
                "SELECT 1 FROM store_meta WHERE key = ?", (DEMO_MARK,)).fetchone() is not None
            same_size = target.execute("PRAGMA page_size").fetchone()[0] == page_size
        finally:
            target.execute("COMMIT")  # the lock stays: exclusive locking mode
        if not marked:
            raise StoreUnavailable(f"{path} exists and is not a demo store; the demo will not "
                                   "overwrite it (give another --db)")
        if not same_size:
            raise DemoInUse(f"{path} changed while the demo was being built; run arbor --demo again")
        source = sqlite3.connect(fresh, isolation_level=None)
        try:
            source.backup(target)
        finally:
            source.close()
        target.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        target.close()
