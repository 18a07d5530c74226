"""`arbor export --format html`: one self-contained page, everything escaped, nothing fetched.

The page is checked as text (structure, escaping) and in a real headless Chromium from the
distribution's packages: the DOM it builds holds no element a message smuggled in, and a
local HTTP server that hostile messages point at receives no request while it loads.
The Chromium tests skip, saying why, where there is no Chromium (.ci/run installs it).
"""

from __future__ import annotations

import html.parser
import http.server
import io
import os
import shutil
import struct
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core import open_store
from core.export.formats import resolve_branch, resolve_session
from tests.conftest import HOSTILE_NAME
from tui.render.html_export import BODY_LIMIT, export_html

REPO = Path(__file__).resolve().parent.parent
FIXED = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="no Chromium here (apt-get install chromium; .ci/run does it)")


def page(db: Path, ref: str, *, branch: str | None = None, all_branches: bool = False) -> str:
    with open_store(db) as store:
        session = resolve_session(store, ref)
        chosen = None if all_branches else resolve_branch(store, session, branch)
        out = io.StringIO()
        export_html(store, session, out, branch=chosen, all_branches=all_branches, now=FIXED)
    return out.getvalue()


class Tags(html.parser.HTMLParser):
    """Counts elements and checks that every non-void element is closed in order."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.counts: dict[str, int] = {}
        self.attrs: list[tuple[str, str, str | None]] = []
        self.text: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        self.attrs += [(tag, name, value) for name, value in attrs]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parsed(text: str) -> Tags:
    tags = Tags()
    tags.feed(text)
    tags.close()
    assert tags.errors == [] and tags.stack == [], (tags.errors, tags.stack)
    return tags


# ----------------------------------------------------------------- a hostile store
def hostile_store(path: Path, port: int) -> Path:
    """Messages written to make a page fetch from 127.0.0.1:`port` or run a script, if
    anything of them were taken as HTML, plus markup and terminal escapes."""
    url = f"http://127.0.0.1:{port}"
    moments = iter(FIXED + timedelta(seconds=s) for s in range(1000))
    counter = iter(range(1, 1000))
    store = open_store(path, clock=lambda: next(moments), id_factory=lambda: f"{next(counter):08x}")
    with store.transaction():
        session = store.sessions.create(HOSTILE_NAME + " <script>alert(1)</script>",
                                                source="claude_code", cwd="/tmp/\"><img src=x>")
        branch = store.branches.create(session.id, name="<b>main</b>")
        add = lambda data: store.entries.append_to_branch(branch.id, "message", {"message": data})  # noqa: E731
        add({"role": "user", "content":
             f"![pixel]({url}/markdown-image.png) [a link]({url}/clicked-only) "
             f"<img src=\"{url}/raw-img.png\"> <script src=\"{url}/script.js\"></script> "
             f"<link rel=stylesheet href=\"{url}/style.css\"> <iframe src=\"{url}/frame\"></iframe> "
             f"<style>body{{background:url({url}/css-url.png)}}</style> "
             "[js](javascript:alert(1)) \x1b]52;c;aGk=\x07 \x1b[2J [@click=app.quit]q[/]"})
        add({"role": "assistant", "model": "m</span><b>x", "content": [
            {"type": "thinking", "thinking": f"<img src=\"{url}/thinking.png\"> deep"},
            {"type": "text", "text": "Let me look. </article></main><h1>out</h1>"},
            {"type": "toolCall", "id": "c1", "name": "Bash",
             "arguments": {"command": f"curl {url}/cmd \"<svg onload=alert(1)>\""}},
            {"type": "toolCall", "id": "c2", "name": "x_tool\"><script>alert(2)</script>",
             "arguments": {"html": f"<img src='{url}/json-arg.png'>"}},
            {"type": "toolCall", "id": "c3", "name": "Edit",
             "arguments": {"file_path": "/tmp/</pre>x.py", "old_string": "a = '<b>'",
                           "new_string": f"a = '<img src={url}/diff.png>'"}}]})
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "toolResult", "toolCallId": "c1", "toolName": "Bash", "isError": False,
            "content": [{"type": "text", "text": f"<meta http-equiv=refresh content='0;url={url}/refresh'>"}]}})
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "toolResult", "toolCallId": "c2", "toolName": "x", "isError": True,
            "content": "A" * (BODY_LIMIT + 5000)}})
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "toolResult", "toolCallId": "c3", "toolName": "Edit", "isError": False,
            "content": "ok"}})
    store.close()
    return path


class Counting(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 (the stdlib's name)
        Counting.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Counting.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


# ----------------------------------------------------------------- as text
def test_every_hostile_string_is_text(tmp_path, server):
    db = hostile_store(tmp_path / "h.db", server.server_address[1])
    text = page(db, "00000001")
    tags = parsed(text)
    assert "\x1b" not in text and "\x07" not in text
    for tag in ("script", "img", "iframe", "link", "style", "svg", "b", "h1", "meta"):
        allowed = {"style": 1, "meta": 4, "h1": 1}.get(tag, 0)
        assert tags.counts.get(tag, 0) == allowed, tag
    for _tag, name, value in tags.attrs:
        assert name not in ("src", "onload", "onerror", "srcset", "background"), (name, value)
        if name == "href":
            assert not value.lower().startswith("javascript:")
    words = "".join(tags.text)
    assert "<script>alert(1)</script>" in words and "[@click=app.quit]" in words
    assert "</article></main><h1>out</h1>" in words and "<svg onload=alert(1)>" in words
    assert "␛]52;c;aGk=␇" in words                       # escapes shown, never sent
    assert f"{5000:,} more characters not in this page" in words
    # the page's own policy: nothing but inline style and data: images may load
    assert ("Content-Security-Policy", ) and "default-src 'none'" in text


def test_tool_calls_and_thinking_fold_and_the_usage_is_shown(demo_db):
    text = page(demo_db, "Fix flaky login test")
    tags = parsed(text)
    assert text.count('<details class="tool') == text.count("</details>") - text.count(
        '<details class="thinking"') - text.count('<details class="raw"') - text.count(
        '<details class="fork"')
    assert '<details class="thinking">' in text and "<summary>thinking · 11 words</summary>" in text
    assert '<details class="tool shell">' in text and '<details class="tool edit">' in text
    assert '<pre class="diff">' in text and 'class="del">' in text and 'class="add">' in text
    words = " ".join(tags.text)
    assert "whole session (with sub-agents)" in words and "branch rollback 1" in words
    assert "$0.16" in words                           # the session's cost, as `arbor usage`
    assert "rollback 1 (current)" in words


def test_all_branches_draws_the_tree_once_each(demo_db):
    text = page(demo_db, "Fix flaky login test", all_branches=True)
    parsed(text)
    assert text.count('<details class="fork" open>') == 2
    assert "↳ main · 6 entries" in text and "↳ rollback 1 (current) · 11 entries" in text
    with open_store(demo_db) as store:
        session = resolve_session(store, "Fix flaky login test")
        ids = [e.id for e in store.entries.of_session(session.id)]
    shown = [entry_id for _tag, name, value in parsed(text).attrs if name == "data-entries"
             for entry_id in value.split()]
    notes = [value.removeprefix("entry-") for tag, name, value in parsed(text).attrs
             if tag == "div" and name == "id"]
    assert sorted(shown + notes) == sorted(ids)      # every entry once: a message or a note
    assert len(set(text.split('id="entry-')[1:])) == text.count('id="entry-')


def test_a_deep_tree_is_written_without_recursion(tmp_path):
    """600 nested forks (each entry with two children): no RecursionError, all closed."""
    db = tmp_path / "deep.db"
    store = open_store(db)
    with store.transaction():
        session = store.sessions.create("deep", source="arbor", cwd="/tmp")
        main = store.branches.create(session.id, name="main")
        parent = None
        for n in range(600):
            entry = store.entries.append_to_branch(main.id, "message", {"message": {
                "role": "user", "content": f"step {n}"}})
            if parent is not None:
                side = store.branches.create(
                    session.id, name=f"side {n}", parent_session_id=main.id,
                    head_seq=parent.seq, fork_seq=parent.seq, is_current=False)
                store.entries.append_to_branch(side.id, "message", {"message": {
                    "role": "user", "content": f"side {n}"}})
            parent = entry
    store.close()
    text = page(db, "deep", all_branches=True)
    tags = parsed(text)
    assert tags.counts["article"] == 600 + 599


def test_the_command_writes_a_file_and_refuses_all_branches_elsewhere(demo_db, tmp_path):
    out = tmp_path / "page.html"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tui", "export", "Fix flaky login test", "--db",
                           str(demo_db), "--format", "html", "--all-branches", "-o", str(out)],
                          capture_output=True, text=True, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("<!DOCTYPE html>") and "wrote 24 entries" in done.stderr
    done = subprocess.run([sys.executable, "-m", "tui", "export", "Fix flaky login test", "--db",
                           str(demo_db), "--format", "markdown", "--all-branches"],
                          capture_output=True, text=True, cwd=REPO, env=env)
    assert done.returncode == 1 and "--all-branches is for --format html" in done.stderr
    done = subprocess.run([sys.executable, "-m", "tui", "export", "x", "--db", str(demo_db),
                           "--format", "html", "--all-branches", "--branch", "1"],
                          capture_output=True, text=True, cwd=REPO, env=env)
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


# ----------------------------------------------------------------- in Chromium
def run_chromium(*args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    home = Path(args[-1].removeprefix("file://")).parent / "chromium-home"
    home.mkdir(exist_ok=True)
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={home}", "--hide-scrollbars", *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HOME": str(home)})


@needs_chromium
def test_chromium_loads_the_page_and_fetches_nothing(tmp_path, server):
    port = server.server_address[1]
    db = hostile_store(tmp_path / "h.db", port)
    target = tmp_path / "hostile.html"
    target.write_text(page(db, "00000001"), encoding="utf-8")
    done = run_chromium("--virtual-time-budget=3000", "--dump-dom", f"file://{target}")
    dom = done.stdout
    assert "<main>" in dom, done.stderr[-2000:]
    assert Counting.requests == [], Counting.requests
    # the DOM Chromium built: no element any message smuggled in
    for tag in ("<script", "<img", "<iframe", "<link", "<svg", "<b>", "<h1>out"):
        assert tag not in dom, tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert dom.count("<details") == page(db, "00000001").count("<details")


@needs_chromium
def test_chromium_screenshot_of_the_demo(demo_db, tmp_path):
    target = tmp_path / "demo.html"
    target.write_text(page(demo_db, "Fix flaky login test"), encoding="utf-8")
    shot = tmp_path / "demo.png"
    done = run_chromium("--window-size=1100,900", f"--screenshot={shot}", f"file://{target}")
    assert shot.exists(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1100, 900)
    assert len(data) > 50_000        # a drawn page, not a blank one (a blank one is ~5 KB)
