"""A store of tool calls as the agents write them, for the tool-call pictures and tests.

Entries are shaped as the importers store them: Claude Code's one entry per content block
of a response (the same `responseId`), a progress line between a call and its result,
results carrying Claude Code's `toolUseResult`; Codex's one entry per output item with no
response id (apply_patch given as a custom tool's input and through the shell tool,
update_plan). Fixed clock and ids: the pictures never change.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

HOSTILE_DIFF_OLD = "title = '[bold]ok[/]'\nprint('\x1b]52;c;aGVsbG8=\x07')\n"
HOSTILE_DIFF_NEW = "title = '[@click=app.quit]gone[/]'\nprint('\x1b[2J\x1b]8;;https://evil.example\x1b\\')\n"

READ_OUTPUT = "".join(f"{n:>6}→{line}\n" for n, line in enumerate([
    "import { test, expect } from '@playwright/test';",
    "",
    "test('logs in', async ({ page }) => {",
    "  await page.goto('/login');",
    "  await page.fill('#email', user.email);",
    "  await page.click('#submit');",
    "  expect(await page.title()).toBe('Dashboard');",
    "});",
], 1))


def _assistant(response: str, *blocks, model: str = "claude-opus-4-5", stop: str | None = None):
    message = {"role": "assistant", "content": list(blocks), "model": model,
               "provider": "anthropic", "responseId": response}
    if stop:
        message["stopReason"] = stop
    return {"message": message}


def _call(call_id: str, name: str, arguments) -> dict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _result(call_id: str, name: str, text: str, *, error: bool = False, extra=None) -> dict:
    data = {"message": {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                        "content": [{"type": "text", "text": text}], "isError": error}}
    if extra is not None:
        data["claude"] = {"toolUseResult": extra}
    return data


def build_tool_store(path: Path) -> Path:
    from core import open_store

    moments = iter(datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc) + timedelta(seconds=7 * s)
                   for s in range(10_000))
    counter = iter(range(1, 10_000))
    store = open_store(path, clock=lambda: next(moments), id_factory=lambda: f"{next(counter):08x}")
    with store.transaction():
        _claude_session(store)
        _codex_session(store)
    store.close()
    return path


def _claude_session(store) -> None:
    session = store.sessions.create("Tool calls people can read", source="claude_code",
                                            cwd="/home/dev/src/webapp")
    branch = store.branches.create(session.id, name="main")

    def add(data, kind="message"):
        return store.entries.append_to_branch(branch.id, kind, data)

    add({"message": {"role": "user", "content": "The login test is flaky. Find out why, fix it, "
                                                 "and tidy the auth helpers."}})
    r1 = "msg_01"
    add(_assistant(r1, {"type": "thinking", "thinking": "Flaky usually means a race. Read the "
                                                        "test first and plan the work."}))
    add(_assistant(r1, {"type": "text", "text": "I'll plan the work, then read the test."}))
    add(_assistant(r1, _call("t1", "TodoWrite", {"todos": [
        {"content": "Read the login test", "status": "completed", "activeForm": "Reading"},
        {"content": "Reproduce the failure", "status": "in_progress", "activeForm": "Reproducing"},
        {"content": "Fix the race", "status": "pending", "activeForm": "Fixing"},
        {"content": "Tidy the auth helpers", "status": "pending", "activeForm": "Tidying"}]})))
    add(_assistant(r1, _call("t2", "Read", {"file_path": "/home/dev/src/webapp/tests/login.spec.ts"}),
                   stop="toolUse"))
    add({"type": "progress", "data": {"type": "hook_progress"}}, kind="claude:progress")
    add(_result("t1", "TodoWrite", "Todos have been modified successfully."))
    add(_result("t2", "Read", READ_OUTPUT))
    add(_assistant("msg_02", _call("t3", "Bash", {
        "command": "npx playwright test tests/login.spec.ts --repeat-each 10",
        "description": "Run the login test ten times"}), stop="toolUse"))
    add(_result("t3", "Bash", "Running 10 tests using 4 workers\n  8 passed\n  2 failed\n"
                              "    Expected: \"Dashboard\"\n    Received: \"Sign in\""))
    r3 = "msg_03"
    add(_assistant(r3, {"type": "text", "text": "The title is checked before the navigation "
                                                "ends. A **web-first assertion** waits for it."}))
    add(_assistant(r3, _call("t4", "Edit", {
        "file_path": "/home/dev/src/webapp/tests/login.spec.ts",
        "old_string": "  await page.click('#submit');\n  expect(await page.title()).toBe('Dashboard');",
        "new_string": "  await page.click('#submit');\n  await expect(page).toHaveTitle('Dashboard');"}),
        stop="toolUse"))
    add(_result("t4", "Edit", "The file /home/dev/src/webapp/tests/login.spec.ts has been updated.",
                extra={"filePath": "/home/dev/src/webapp/tests/login.spec.ts", "structuredPatch": [
                    {"oldStart": 5, "oldLines": 4, "newStart": 5, "newLines": 4, "lines": [
                        "   await page.fill('#email', user.email);",
                        "   await page.click('#submit');",
                        "-  expect(await page.title()).toBe('Dashboard');",
                        "+  await expect(page).toHaveTitle('Dashboard');",
                        " });"]}]}))
    r4 = "msg_04"
    add(_assistant(r4, _call("t5", "MultiEdit", {
        "file_path": "/home/dev/src/webapp/src/auth/helpers.ts",
        "edits": [{"old_string": "export function login(u, p) {", "new_string":
                   "export async function login(user: string, password: string) {"},
                  {"old_string": "  return post('/login', {u, p});", "new_string":
                   "  return await post('/login', { user, password });"}]})))
    add(_assistant(r4, _call("t6", "Write", {
        "file_path": "/home/dev/src/webapp/src/auth/index.ts",
        "content": "export { login } from './helpers';\nexport { logout } from './session';\n"}),
        stop="toolUse"))
    add(_result("t5", "MultiEdit", "Applied 2 edits to /home/dev/src/webapp/src/auth/helpers.ts"))
    add(_result("t6", "Write", "File created successfully at: /home/dev/src/webapp/src/auth/index.ts"))
    add(_assistant("msg_05", _call("t7", "Task", {
        "description": "Check other tests for the same race",
        "subagent_type": "Explore",
        "prompt": "Search tests/ for title checks made right after a click, without waiting."}),
        stop="toolUse"))
    add(_result("t7", "Task", "Found **2** more:\n\n- `tests/signup.spec.ts:14`\n"
                              "- `tests/reset.spec.ts:22`\n\nBoth check the title right after a click."))
    add(_assistant("msg_06", _call("t8", "mcp__github__create_issue", {
        "owner": "acme", "repo": "webapp", "title": "Two more racy title checks",
        "labels": ["tests", "flaky"], "body": "signup.spec.ts:14 and reset.spec.ts:22"}),
        stop="toolUse"))
    add(_result("t8", "mcp__github__create_issue",
                '{"number": 128, "url": "https://github.com/acme/webapp/issues/128", "state": "open"}'))
    r7 = "msg_07"
    add(_assistant(r7, _call("t9", "Edit", {"file_path": "/tmp/[bold]x\x1b[2J.py",
                                            "old_string": HOSTILE_DIFF_OLD,
                                            "new_string": HOSTILE_DIFF_NEW})))
    add(_assistant(r7, _call("t10", "Bash", {"command": "echo '\x1b]52;c;ZXZpbA==\x07' [/red]"})))
    add(_assistant(r7, _call("t11", "x_tool[@click=app.quit]", {
        "payload": "[red]raw[/] \x1b[2J \x1b]8;;https://evil.example\x1b\\link", "n": [1, 2]}),
        stop="toolUse"))
    add(_result("t9", "Edit", "updated \x1b[31m[/]"))
    add(_result("t10", "Bash", "\x1b]0;pwned\x07[bold]out[/bold]\x1b[2J", error=True))
    add(_result("t11", "x_tool", '{"echo": "\x1b]52;c;eA==\x07", "markup": "[@click=app.quit]q[/]"}'))
    add(_assistant("msg_08", {"type": "text", "text": "Fixed: the test now waits for the title; "
                                                      "issue #128 tracks the other two."},
                   stop="stop"))


PATCH = ("*** Begin Patch\n*** Update File: shop/payments/retry.py\n@@ def backoff(attempt):\n"
         "-    return 2 ** attempt\n+    return min(30, 2 ** attempt)\n*** Add File: shop/payments/limits.py\n"
         "+MAX_DELAY = 30\n*** End Patch")


def _codex_session(store) -> None:
    session = store.sessions.create("Cap the retry delay", source="codex",
                                            cwd="/home/dev/src/shop")
    branch = store.branches.create(session.id, name="main")

    def add(message):
        return store.entries.append_to_branch(branch.id, "message", {"message": message})

    def item(*blocks):
        return {"role": "assistant", "content": list(blocks), "model": "gpt-5-codex"}

    add({"role": "user", "content": [{"type": "text", "text": "Cap the retry delay at 30 s."}]})
    add(item({"type": "thinking", "thinking": "Plan first, then patch retry.py."}))
    add(item(_call("c1", "update_plan", {"explanation": "Small change.", "plan": [
        {"step": "Find the backoff", "status": "completed"},
        {"step": "Cap it at 30 s", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"}]})))
    add({"role": "toolResult", "toolCallId": "c1", "toolName": "update_plan",
         "content": [{"type": "text", "text": "Plan updated"}], "isError": False})
    add(item(_call("c2", "apply_patch", {"input": PATCH})))
    add({"role": "toolResult", "toolCallId": "c2", "toolName": "apply_patch",
         "content": [{"type": "text", "text": "Success. Updated the following files:\n"
                                              "M shop/payments/retry.py\nA shop/payments/limits.py"}],
         "isError": False})
    add(item(_call("c3", "shell", {"command": ["bash", "-lc", "pytest -q tests/test_retry.py"],
                                   "workdir": "/home/dev/src/shop"})))
    add({"role": "toolResult", "toolCallId": "c3", "toolName": "shell",
         "content": [{"type": "text", "text": "....\n4 passed in 0.31s"}], "isError": False})
    add(item({"type": "text", "text": "Done: the delay is capped at 30 s and the tests pass."}))
