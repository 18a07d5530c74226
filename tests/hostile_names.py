"""A store whose every name is hostile: the names, not the messages, are the attack.

`build_hostile_names_store` makes sessions, branches, labels, checkpoints, project folders,
sources, model names, tool names, file paths and summaries that each hold CSI colours
(`\\x1b[1;31m`), a screen clear (`\\x1b[2J`), an OSC 52 clipboard write, an OSC 8 link,
markup (`[/x]` that closes nothing, `[bold]`, `[@click=app.quit]`) and a bidi override.
Each value starts with a tag of its own (`SESS`, `BR1`, `MODEL`...), so a test can tell
which of them reached the screen, and shows as `TAG␛[1;31m[/x]…` when drawn literally.

There is usage (so the usage screen and the cost columns show the model names), two
branches (so compare has something to compare, with files changed on each side), a
checkpoint, labels on entries and branches, a compaction with a hostile summary, and a
session named like the pasted test output of issue 27.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

# the data's own sequences: none of them may reach the terminal as bytes
CLIPBOARD_PAYLOAD = "SEFDS0VE"            # base64 of "HACKED"
EVIL_URL = "https://evil.example/osc8"
RAW_SEQUENCES = {
    "OSC 52": f"\x1b]52;c;{CLIPBOARD_PAYLOAD}".encode(),
    "OSC 8": f"\x1b]8;;{EVIL_URL}".encode(),
    "CSI 1;31m": b"\x1b[1;31m",
    "CSI 2J": b"\x1b[2J",
    "bidi override": "\u202e".encode(),
}
# how the start of every hostile value looks on screen when it is drawn literally
SHOWN = "␛[1;31m[/x]"
ISSUE_NAME = "FAILED \x1b[1;31mtest_x\x1b[0m"


def plain(tag: str) -> str:
    """The clean store's names: the same tags, nothing hostile (what the app writes by itself)."""
    return f"{tag} plain"


def hostile(tag: str) -> str:
    return (f"{tag}\x1b[1;31m[/x]\x1b[0m [bold]\x1b]52;c;{CLIPBOARD_PAYLOAD}\x07 "
            f"[@click=app.quit]q[/] \x1b]8;;{EVIL_URL}\x1b\\link\x1b]8;;\x1b\\ \x1b[2J "
            f"[/ansi_bright_magenta bold]\u202e{tag}\u202c")


def shown(tag: str, name=None) -> str:
    """How the start of the value tagged `tag` reads on screen, in the store made with `name`."""
    return tag + (" plain" if name is plain else SHOWN)


TAGS = {
    "session": "SESS", "other_session": "SES2", "source": "SRC", "cwd": "CWD", "uid": "UID",
    "branch": "BR1", "fork": "BR2", "branch_label": "BLBL", "entry_label": "ELBL",
    "checkpoint": "CKPT", "model": "MODEL", "tool": "TOOL", "path": "PATH",
    "summary": "SUMM", "provider": "PROV",
}
def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _assistant(H: dict, text: str, *calls: tuple[str, str, dict], model: str = "") -> dict:
    blocks: list[dict] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "toolCall", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {"role": "assistant", "content": blocks, "model": model or H["model"], "provider": H["provider"],
            "stopReason": "toolUse" if calls else "stop",
            "usage": {"input": 1500, "output": 300, "cacheRead": 200}}


def _result(H: dict, call_id: str, text: str) -> dict:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": H["tool"],
            "content": [{"type": "text", "text": text}], "isError": False}


def build_hostile_names_store(path: Path, name=hostile) -> Path:
    """The store; `name=plain` makes the same store with harmless names (the clean run)."""
    from core import open_store
    from core.actions import operations

    H = {kind: name(tag) for kind, tag in TAGS.items()}
    issue_name = ISSUE_NAME if name is hostile else "FAILED test_x"

    moments = iter(datetime(2026, 11, 29, 10, 0, tzinfo=timezone.utc) + timedelta(seconds=s)
                   for s in range(0, 100_000, 7))
    counter = iter(range(1, 100_000))
    store = open_store(path, clock=lambda: next(moments), id_factory=lambda: f"{next(counter):08x}")
    with store.transaction():
        # the pasted test output of issue 27, an older session with a plain source
        issue = store.sessions.create(issue_name, source="claude_code", cwd="/w/plain")
        plain = store.branches.create(issue.id, name="main")
        store.entries.append_to_branch(plain.id, "message", {"message": _user(issue_name)})

        other = store.sessions.create(H["other_session"], source=H["source"],
                                              cwd=H["cwd"] + "/other", uid=H["uid"])
        lone = store.branches.create(other.id, name=H["branch"])
        store.entries.append_to_branch(lone.id, "message", {"message": _user("hello " + H["other_session"])})
        for n in range(3):
            store.entries.append_to_branch(lone.id, "message", {"message": _assistant(H, f"answer {n} " * 40)})
            store.entries.append_to_branch(lone.id, "message", {"message": _user(f"question {n}")})
        operations.compact(store, lone.id, summary=H["summary"], keep_recent_tokens=1)

        # the newest: a Claude Code session (so `o` hands it over) with every kind of name
        session = store.sessions.create(H["session"], source="claude_code", cwd=H["cwd"],
                                                metadata={"model": H["model"]})
        main = store.branches.create(session.id, name=H["branch"])

        def say(branch, message):
            return store.entries.append_to_branch(branch.id, "message", {"message": message})

        store.entries.append_to_branch(main.id, "model_change", {"provider": H["provider"], "modelId": H["model"]})
        first = say(main, _user("Fix the test named " + H["session"]))
        say(main, _assistant(H, "Reading it.", ("c1", H["tool"], {"path": H["path"]})))
        say(main, _result(H, "c1", "contents of " + H["path"]))
        fork_at = say(main, _assistant(H, "Editing.", ("c2", "edit", {"path": H["path"] + ".py",
                                                                   "oldText": "a", "newText": "b"})))
        say(main, _result(H, "c2", "Applied 1 edit to " + H["path"]))
        store.annotations.create_checkpoint(main.id, H["checkpoint"], entry_seq=fork_at.seq, is_auto=False,
                                session_state={"phase": H["checkpoint"]})
        say(main, _assistant(H, "", ("c3", "write", {"path": H["path"] + "/main.py", "content": "x"})))
        say(main, _result(H, "c3", "wrote " + H["path"]))
        tail = say(main, _assistant(H, "Done on " + H["branch"]))
        operations.set_label(store, first.seq, H["entry_label"])
        operations.set_label(store, tail.seq, H["entry_label"])
        operations.set_branch_label(store, main.id, H["branch_label"])

        fork = operations.branch(store, main.id, fork_at.seq, name=H["fork"])
        say(fork, _assistant(H, "", ("c4", "write", {"path": H["path"] + "/fork.py", "content": "y"}),
                             model=H["model"] + "-2"))
        say(fork, _result(H, "c4", "wrote " + H["path"] + "/fork.py"))
        store.entries.append_to_branch(fork.id, "branch_summary", {"summary": H["summary"], "fromId": "x"})
        say(fork, _assistant(H, "Forked answer from " + H["fork"]))
        operations.set_branch_label(store, fork.id, H["branch_label"] + "-2")
        operations.make_current(store, main.id)
    store.close()
    return path


# ------------------------------------------------------------------ checks
# a value of this store, raw or made visible, that reaches a markup parser is a defect
_DATA_MARKS = ("\x1b", "␛", "\u202e", "\\u202e", CLIPBOARD_PAYLOAD)


class MarkupGuard:
    """Records each time text of the data reaches Textual's or Rich's markup parser (a
    string handed to a widget, or a border title read back and set again): such text
    crashes the app (`[/x]`) or runs an action (`[@click=app.quit]`) even when cleaned."""

    def __init__(self, monkeypatch) -> None:
        import rich.console
        import rich.markup
        import textual.markup

        self.parsed: list[tuple[str, str]] = []
        for module, name in ((textual.markup, "to_content"), (rich.markup, "render"),
                             (rich.console, "render_markup")):
            monkeypatch.setattr(module, name, self._watch(getattr(module, name)))

    def _watch(self, parse):
        def watched(markup, *args, **kwargs):
            if isinstance(markup, str) and any(mark in markup for mark in _DATA_MARKS):
                import traceback

                where = "".join(traceback.format_stack(limit=8)[:-1])
                self.parsed.append((markup, where))
            return parse(markup, *args, **kwargs)
        return watched


def rendered(app) -> tuple[str, bytes]:
    """What the terminal would get for a full redraw of the app's screen (modal screens over
    what is under them, toasts included): its text and its bytes."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    text = "\n".join("".join(strip.text for strip in line) for line in update.strips)
    return text, update.render_segments(app.console).encode("utf-8", "surrogateescape")


def sequences_in(raw: bytes) -> dict[str, int]:
    """How many times each of the data's sequences occurs in what the terminal got."""
    return {name: raw.count(sequence) for name, sequence in RAW_SEQUENCES.items()}


# ------------------------------------------------------------------ a walk through every screen
# (name, keys as Textual names them (a `"type:..."` key types its text), what the screen then
# shows: `{TAG}` is the value tagged TAG as it reads on screen, `{TAG_START}` its first
# cells, `{TAG_END}` its last; a text after `!` is what is no longer on screen). One walk
# from the start, each step from where the one before left off.
STEPS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("start, sessions pane", (), ("{SESS}", "{SES2}", "FAILED ", "{CWD_START}", "{BR1}", "{MODEL}")),
    ("the pasted test output", ("down", "down"), ("─ {ISSUE}", "/w/plain")),
    ("its entry tree", ("tab", "t"), ("Entries · ", "─ {ISSUE}")),
    ("back to the newest", ("t", "shift+tab", "up", "up"),
     ("─ {SESS}", "!Entries · ", "⏎ Open a Archive")),
    ("project filter", ("p",), ("Sessions · ",)),
    ("project filter off", ("p",), ("{SES2}", "!Sessions · ")),
    ("rename session", ("R",), ("Rename session", "{SESS_END}")),
    ("rename cancelled", ("escape",), ("{SESS}", "!Rename session")),
    ("archive", ("a",), ("Archive {SESS}",)),
    ("archive refused", ("n",), ("{SESS}", "!Archive {SESS}")),
    ("other session", ("down",), ("{SES2}", "{UID_START}", "{SUMM}")),
    ("copy its uid", ("y",), ("Copied the session's uid", "{UID}")),
    ("back", ("up",), ("{SESS}", "{MODEL}", "!{SUMM}")),
    ("branches pane", ("tab",), ("{BR1_START}", "{BR2_START}", "⏎ Make current")),
    ("label branch", ("l",), ("Label branch {BR1}", "{BLBL_END}")),
    ("label cancelled", ("escape",), ("{BR1}", "!Label branch")),
    ("rename branch", ("R",), ("Rename branch", "{BR1_END}")),
    ("rename branch cancelled", ("escape",), ("{BR1}", "!Rename branch")),
    ("checkpoint", ("m",), ("Checkpoint at", "edit the name first")),
    ("checkpoint cancelled", ("escape",), ("{BR1}", "!edit the name first")),
    ("new branch", ("b",), ("New branch", "edit the name first")),
    ("new branch cancelled", ("escape",), ("{BR1}", "!edit the name first")),
    ("roll back", ("r",), ("Roll back · {BR1}", "{CKPT}", "{PATH}")),
    ("roll back cancelled", ("escape",), ("{BR1}", "!Roll back · ")),
    ("compact", ("c",), ("Compact · {BR1}", "{SESS}")),
    ("compact cancelled", ("escape",), ("{BR1}", "!Compact · ")),
    ("compare: choose", ("d",), ("Compare {BR1}", "{BR2}")),
    ("compare", ("enter",), ("A {BR1}", "B {BR2}", "{SUMM}", "{MODEL_START}", "files changed")),
    ("compare, other side", ("tab",), ("A {BR1}",)),
    ("compare files", ("f",), ("Files changed", "{PATH}")),
    ("compare files closed", ("escape",), ("A {BR1}", "!Files changed")),
    ("compare closed", ("escape",), ("{BR2_START}", "!B against A")),
    ("entry tree", ("t",), ("Entries · ", "{ELBL}", "{TOOL}", "{SUMM}", "─ {SESS}")),
    ("label entry in the tree", ("l",), ("Label entry", "{ELBL_END}")),
    ("label entry cancelled", ("escape",), ("Entries · ", "!Label entry")),
    ("find in session", ("ctrl+f",), ("Find in this session",)),
    ("found", ("type:SESS", "enter"), ("Entries · ", "SESS 1/1", "!Find in this session")),
    ("next found", ("n",), ("SESS 1/1",)),
    ("branches again", ("t",), ("{BR1_START}", "{BR2_START}", "!Entries · ")),
    ("messages pane", ("tab",), ("{ELBL}", "{MODEL}", "{TOOL}", "space Open b Branch")),
    ("label message", ("l",), ("Label entry", "{ELBL_END}")),
    ("label message cancelled", ("escape",), ("{MODEL}", "!Label entry")),
    ("roll back at a message", ("r",), ("Roll back · {BR1}", "{CKPT}", "{PATH}")),
    ("roll back at a message cancelled", ("escape",), ("{MODEL}", "!Roll back · ")),
    ("raw entries", ("v",), ("raw entries (v)", "{MODEL}", "{TOOL}")),
    ("replayed context again", ("v",), ("replayed context (v)",)),
    ("whole message", ("G", "f"), ("Whole message", "{MODEL}", "{BR1}")),
    ("whole message closed", ("escape",), ("{MODEL}", "!Whole message")),
    ("usage", ("dollar_sign",), ("Most expensive sessions", "{MODEL}", "{CWD}", "{SESS}", "{SES2}")),
    ("usage, other list", ("tab",), ("Most expensive sessions",)),
    ("usage closed", ("escape",), ("{MODEL}", "!Most expensive sessions")),
    ("help", ("question_mark",), ("arbor · keys",)),
    ("help closed", ("escape",), ("{MODEL}", "!arbor · keys")),
    ("command palette", ("ctrl+p", "type:SESS"), ("Rename the highlighted session",)),
    ("command palette closed", ("escape",), ("{MODEL}", "!Rename the highlighted session")),
    ("search", ("slash", "type:SESS"), ("1 session by name", "{SESS}")),
    ("search results", ("down",), ("{SESS}",)),
    ("search jumps", ("enter",), ("{SESS}", "{MODEL}", "!1 session by name")),
    # operations, whose notes and undo name what they did
    ("branches pane again", ("tab",), ("{BR1_START}", "{BR2_START}", "⏎ Make current")),
    ("make the fork current", ("down", "enter"), ("{BR2_END} is now",)),
    ("undo it", ("u",), ("Undid: make {BR2}",)),
    ("new branch", ("b",), ("edit the name first",)),
    ("new branch made", ("enter",), ("Branched", "New branch {BR2}")),
    ("undo the new branch", ("u",), ("Undid: branch {BR2}",)),
    ("checkpoint", ("m",), ("edit the name first",)),
    ("checkpoint made", ("enter",), ("Checkpoint “",)),
    ("undo the checkpoint", ("u",), ("Undid: checkpoint",)),
    ("label the branch", ("l",), ("Label branch {BR1}",)),
    ("label saved", ("type:!", "enter"), ("Label saved", "!Label branch")),
    ("undo the label", ("u",), ("Undid: label {BR1}",)),
    ("hide the fork", ("down", "a"), ("Hide branch", "Hide {BR2}")),
    ("hidden", ("y",), ("is hidden", "!Hide branch")),
    ("show hidden", ("A",), ("{BR2_START}", "Branches · 3")),
    ("show the fork again", ("down", "a"), ("{BR2_END} is shown",)),
    ("archived hidden again", ("A",), ("!Branches · 3",)),
    ("sessions pane again", ("shift+tab",), ("{SESS}", "⏎ Open a Archive")),
    ("archive it", ("a",), ("Archive {SESS}",)),
    ("archived", ("y",), ("Session archived", "!Archive {SESS}")),
    ("archived sessions shown", ("A",), ("{SESS}", "{SES2}")),
    ("archived sessions hidden", ("A",), ("{SES2}",)),
    ("undo the archive", ("u",), ("Undid: archive {SESS}",)),
    ("open in agent, no agent on PATH", ("tab", "o"), ("Open in agent", "was not started",
                                                       "{CWD_IN_SHELL}")),
]
# Textual's key names -> tmux's
TMUX_KEYS = {"tab": "Tab", "escape": "Escape", "enter": "Enter", "down": "Down", "up": "Up",
             "ctrl+p": "C-p", "ctrl+f": "C-f", "dollar_sign": "$", "question_mark": "?",
             "slash": "/", "shift+tab": "BTab"}


def expected(texts: tuple[str, ...], name=hostile) -> list[str]:
    values = {tag: shown(tag, name) for tag in TAGS.values()}
    # (the end of a value: what a text field shows of it)
    values |= {f"{tag}_END": f"{tag}\\u202c" if name is hostile else f"{tag} plain"
               for tag in TAGS.values()}
    values["ISSUE"] = "FAILED ␛[1;31mtest_x" if name is hostile else "FAILED test_x"
    # (a folder in a shell command: quoted with its control characters as escapes,
    # core/util/shell_words)
    values["CWD_IN_SHELL"] = "CWD\\x1b[1;31m[/x]" if name is hostile else "CWD plain"
    # (its start, where a narrow column cuts it)
    values |= {f"{tag}_START": f"{tag}␛[1;3" if name is hostile else f"{tag} pl"
               for tag in TAGS.values()}
    return [text.format(**values) for text in texts]


def toasts(screen: str) -> str:
    """The text of the notifications on `screen` (right of their "▌" edge), their lines
    joined: a notification wraps where its width and the path in it say (a worker's longer
    tmp path wraps it elsewhere), so a phrase in it may sit on two lines."""
    import re

    return " ".join(re.sub(r"[\s┃│╮╯─)]+$", "", line.rsplit("▌", 1)[1]).strip()
                    for line in screen.splitlines() if "▌" in line)


def on_screen(want: str, screen: str) -> bool:
    """`want` is on the screen, in a notification's words too (or, written `!text`, is not)."""
    if want.startswith("!"):
        return want[1:] not in screen and want[1:] not in toasts(screen)
    return want in screen or want in toasts(screen)
