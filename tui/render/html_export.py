"""`arbor export SESSION --format html`: one self-contained page to read a session in a browser.

One file, nothing fetched: the style is inline, there is no script (tool calls and thinking
fold with `<details>`), and a Content-Security-Policy forbids every load but inline style
and `data:` images, so even a hostile message cannot make the page fetch anything.
Every string from the store is made safe twice over: control characters become visible
pictures (`tui.render.safe_text.clean`, as in the terminal), then HTML-escaped; message text is
rendered as Markdown by markdown-it with raw HTML off and images off (an image would be a
fetch), links kept as links the reader may follow.

One branch (the current one, or `--branch`) is its root-to-head path, one reply per
message as in the app (core.history.responses). `--all-branches` draws the session's whole tree:
where entries fork, each subtree folds under a line naming the branches in it.
A body longer than BODY_LIMIT characters is cut with a sentence saying so (`--format
json` has everything).
"""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from typing import Any, Iterable, TextIO

from core.model.clock import parse
from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, LABEL, MODEL_CHANGE, SESSION_INFO, THINKING_LEVEL_CHANGE, Entry,
    content_text)
from core.history.responses import groups

from .agent_lines import is_bookkeeping_line, name_of
from .formatting import ROLE_NAMES, branch_title
from .message_text import message_parts
from .safe_text import clean
from .tool_views import _NUMBERED, GLYPHS, ToolCall, _start_line, call_diff, todo_items

BODY_LIMIT = 200_000
PAGE = 2000
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
       "form-action 'none'")

STYLE = """
:root{--bg:#15171a;--panel:#1d2024;--fg:#d8dadd;--dim:#8a9099;--faint:#5c6370;--user:#5fafff;
--assistant:#87d787;--tool:#d7af5f;--add:#87d787;--addbg:#1d3320;--del:#ff8787;--delbg:#3a1d1d;
--hunk:#5fafd7;--error:#ff8787;--label:#d7af5f;--sub:#af87d7}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:980px;margin:0 auto;padding:24px 20px 60px}
h1{font-size:22px;margin:0 0 6px;overflow-wrap:anywhere}
code,pre,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:13px}
pre{margin:4px 0;padding:8px 10px;background:#111316;border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0 14px;color:var(--dim)}
.facts dd{margin:0;color:var(--fg);overflow-wrap:anywhere}
table.usage{border-collapse:collapse;margin:6px 0 18px;font-size:13px}
table.usage th,table.usage td{padding:3px 12px 3px 0;text-align:right}
table.usage th:first-child,table.usage td:first-child{text-align:left;color:var(--dim)}
table.usage th{color:var(--dim);font-weight:600}
.msg{background:var(--panel);border-left:3px solid var(--faint);border-radius:4px;margin:10px 0;padding:8px 12px}
.msg.user{border-left-color:var(--user)}.msg.assistant{border-left-color:var(--assistant)}
.msg.toolResult{border-left-color:var(--tool)}
.head{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline;font-size:13px;color:var(--dim)}
.head .role{font-weight:700;font-size:14px}.user .role{color:var(--user)}.assistant .role{color:var(--assistant)}
.toolResult .role{color:var(--tool)}.head .when{margin-left:auto}
.label{background:var(--label);color:#1c1c1c;border-radius:3px;padding:0 5px;font-weight:600}
.text{overflow-wrap:anywhere}.text p{margin:6px 0}.text pre{background:#111316}
.text a{color:var(--user)}
details{margin:4px 0}summary{cursor:pointer;overflow-wrap:anywhere}
details.thinking>summary{color:var(--dim);font-style:italic}
details.thinking .text{color:var(--dim);font-style:italic;border-left:2px solid var(--faint);padding-left:10px}
details.tool{border:1px solid #2a2e34;border-radius:4px;padding:3px 8px;background:#181a1e}
details.tool>summary .name{color:var(--tool);font-weight:700}
details.tool>summary .arg{color:var(--fg);font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px}
.ok{color:var(--add)}.bad{color:var(--error);font-weight:700}.count{color:var(--dim);font-size:13px}
pre.diff .add{color:var(--add);background:var(--addbg);display:block}
pre.diff .del{color:var(--del);background:var(--delbg);display:block}
pre.diff .hunk{color:var(--hunk);display:block}pre.diff .ctx{color:var(--dim);display:block}
.result .rlabel{color:var(--dim);font-size:12px;margin-top:6px}.result.failed pre{color:var(--error)}
ul.todo{list-style:none;padding-left:6px;margin:4px 0}ul.todo .completed{color:var(--dim);text-decoration:line-through}
ul.todo .in_progress{color:var(--tool);font-weight:700}
.asked,.answered{color:var(--dim);font-size:12px;margin-top:6px}
.note{color:var(--dim);font-size:13px;margin:6px 0 6px 4px}
.summary{border-left:3px solid var(--sub)}
details.fork{margin:12px 0 12px 0;border-left:2px solid var(--sub);padding-left:12px}
details.fork>summary{color:var(--sub);font-weight:600}
.cut{color:var(--faint);font-style:italic}
pre.read .ln{color:var(--faint);user-select:none;border-right:1px solid #2a2e34;padding-right:6px}
footer{color:var(--faint);font-size:12px;margin-top:30px}
"""


def esc(value: Any) -> str:
    """Any value as HTML text: control characters shown as pictures, then escaped."""
    return html.escape(clean(value), quote=True)


def _cut(text: Any) -> tuple[str, str]:
    """A body and, when it is too long to put in the page, the sentence saying so."""
    raw = text if isinstance(text, str) else ("" if text is None else str(text))
    if len(raw) <= BODY_LIMIT:
        return raw, ""
    more = len(raw) - BODY_LIMIT
    return raw[:BODY_LIMIT], (f'<div class="cut">… {more:,} more characters not in this page '
                              f"(arbor export --format json has all of it)</div>")


_md = None


def _markdown_renderer():
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.disable("image")          # an image would be fetched: shown as text instead

        def link_open(self, tokens, idx, options, env):
            tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
            return self.renderToken(tokens, idx, options, env)

        md.add_render_rule("link_open", link_open)
        _md = md
    return _md


def markdown(text: Any) -> str:
    body, cut = _cut(text)
    return _markdown_renderer().render(clean(body)) + cut


def pre(text: Any, css: str = "") -> str:
    body, cut = _cut(text)
    klass = f' class="{css}"' if css else ""
    return f"<pre{klass}>{esc(body)}</pre>{cut}"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _pretty(text: str) -> str:
    """A JSON text indented; any other text as it is."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) <= BODY_LIMIT:
        try:
            return _json(json.loads(stripped, strict=False))
        except ValueError:
            pass
    return text


def _when(entry: Entry) -> str:
    moment = parse(entry.timestamp)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment is not None else ""


# ------------------------------------------------------------------ tool calls
def _call_summary(call: ToolCall) -> str:
    kind = call.kind
    args = call.args
    if kind == "shell":
        what = call.command.strip().split("\n")[0]
    elif call.path:
        what = call.path
    elif kind == "task":
        what = " · ".join(str(args[k]) for k in ("subagent_type", "description")
                          if isinstance(args.get(k), str))
    elif kind == "todo":
        items = todo_items(args)
        done = sum(1 for _text, state in items if state == "completed")
        what = f"{done} of {len(items)} done"
    else:
        what = _json(call.arguments) if not isinstance(call.arguments, str) else call.arguments
        what = " ".join(what.split())
    if len(what) > 120:
        what = what[:119] + "…"
    status = ""
    if call.ended:      # a command the user ran: how it ended ("exit 0")
        status = (f'<span class="{"bad" if call.ended_badly else "count"}">'
                  f'{esc(" · ".join(call.ended))}</span>')
    elif call.result is not None:
        if call.failed:
            status = '<span class="bad">✗ error</span>'
        else:
            lines = len(call.result_text.splitlines())
            status = f'<span class="ok">✓</span> <span class="count">{lines:,} line' + \
                ("" if lines == 1 else "s") + "</span>"
    return (f'<span class="glyph">{esc(GLYPHS.get(kind, "⚙"))}</span> '
            + ("" if call.bare else f'<span class="name">{esc(call.name)}</span> ')
            + f'<span class="arg">{esc(what)}</span> '
            f"{status}")


def _diff(lines: list[str]) -> str:
    out = []
    total = 0
    for line in lines:
        total += len(line)
        if total > BODY_LIMIT:
            out.append(f'<span class="ctx">… {len(lines) - len(out):,} more lines</span>')
            break
        css = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "ctx"
        out.append(f'<span class="{css}">{esc(line) or " "}</span>')
    return '<pre class="diff">' + "".join(out) + "</pre>"


def _numbered(text: str, start: int) -> str:
    """A file's lines with their numbers (Claude Code's `   12→text` keeps its own)."""
    body, cut = _cut(text)
    lines = body.splitlines()
    own = bool(lines) and all(_NUMBERED.match(line) for line in lines[:5])
    width = len(str(start + len(lines)))
    out = []
    for number, line in enumerate(lines, start):
        label = str(number)
        if own:
            match = _NUMBERED.match(line)
            label, line = (match.group(1), line[match.end():]) if match else ("", line)
        out.append(f'<span class="ln">{label:>{width}}</span> {esc(line)}')
    return '<pre class="read">' + "\n".join(out) + "</pre>" + cut


def _result(message: dict[str, Any], label: str | None = None) -> str:
    failed = bool(message.get("isError"))
    name = message.get("toolName") or ""
    title = label or ("error" if failed else "output")
    if name and label is None:
        title += f" of {name}"
    text = content_text(message.get("content", message.get("output")))
    return (f'<div class="result{" failed" if failed else ""}"><div class="rlabel">{esc(title)}</div>'
            + pre(_pretty(text)) + "</div>")


def tool_call(call: ToolCall) -> str:
    kind = call.kind
    body: list[str] = []
    if kind == "shell":
        body.append(pre("$ " + call.command, "cmd"))
        description = call.args.get("description")
        if isinstance(description, str) and description:
            body.append(f'<div class="note"># {esc(description)}</div>')
    elif kind in ("edit", "multi", "write", "patch"):
        lines = call_diff(call)
        body.append(pre(_json(call.args)) if lines is None else _diff(lines))
    elif kind == "todo":
        marks = {"completed": "☑", "in_progress": "◐"}
        items = "".join(f'<li class="{esc(state)}">{marks.get(state, "☐")} {esc(text)}</li>'
                        for text, state in todo_items(call.args))
        explanation = call.args.get("explanation")
        if isinstance(explanation, str) and explanation:
            body.append(f'<div class="note">{esc(explanation)}</div>')
        body.append(f'<ul class="todo">{items or "<li>(an empty list)</li>"}</ul>')
    elif kind == "task":
        prompt = call.args.get("prompt", call.args.get("message", call.args.get("task")))
        body.append('<div class="asked">asked</div>')
        body.append(f'<div class="text">{markdown(prompt if isinstance(prompt, str) else _json(call.args))}</div>')
        if call.result is not None:
            body.append('<div class="answered">answered</div>')
            body.append(f'<div class="text">{markdown(call.result_text)}</div>')
    elif kind != "read":
        body.append(pre(call.arguments if isinstance(call.arguments, str) else _json(call.arguments)))
    if kind == "read" and call.result is not None and not call.failed:
        body.append(_numbered(call.result_text, _start_line(call.args)))
    elif call.result is not None and kind != "task":
        body.append(_result(call.result))
    elif call.result is None:
        body.append('<div class="note">no result recorded</div>')
    failed = " failed" if call.failed else ""
    return (f'<details class="tool {kind}{failed}"><summary>{_call_summary(call)}</summary>'
            + "".join(body) + "</details>")


# ------------------------------------------------------------------ messages
def _note(entry: Entry) -> str | None:
    data = entry.data
    if entry.type == MODEL_CHANGE:
        return f"model: {data.get('provider', '')}/{data.get('modelId', '')}"
    if entry.type == THINKING_LEVEL_CHANGE:
        return f"thinking level: {data.get('thinkingLevel', '')}"
    if entry.type == SESSION_INFO:
        return f"session name: {data.get('name', '')}"
    if entry.type == LABEL:
        return f"label {data.get('label') or '(cleared)'} on entry {data.get('targetId', '')}"
    return None


def message(group: list[Entry], labels: dict[int, str], usage: dict[int, Any]) -> str:
    """One message (a reply and the results answering its calls, or one entry) as HTML."""
    first = group[0]
    note = _note(first) if first.message is None and len(group) == 1 else None
    if note is not None:
        return (f'<div class="note" id="entry-{esc(first.id)}">— {esc(note)} '
                f'<span class="mono">{esc(_when(first))}</span></div>')
    msg = first.message or {}
    role = msg.get("role") if isinstance(msg.get("role"), str) else first.type
    if first.type == COMPACTION:
        role = "compaction"
    elif first.type == BRANCH_SUMMARY:
        role = "branch summary"
    elif is_bookkeeping_line(first.type):
        role = name_of(first.type, first.data)
    css = role if role in ("user", "assistant", "toolResult") else "other"
    head = [f'<span class="role">{esc(ROLE_NAMES.get(role, role))}</span>']
    if isinstance(msg.get("model"), str):
        head.append(f'<span class="model">{esc(msg["model"])}</span>')
    for entry in group:
        if entry.seq in labels:
            head.append(f'<span class="label">⚑ {esc(labels[entry.seq])}</span>')
    figures = [usage[e.seq] for e in group if e.seq in usage]
    if figures:
        from core.usage.tokens import fmt_usd

        tokens = sum(f.total_tokens for f in figures)
        cost = sum(f.cost_usd or 0 for f in figures)
        priced = all(f.cost_usd is not None for f in figures)
        head.append(f'<span class="count">{tokens:,} tokens'
                    + (f" · {esc(fmt_usd(cost))}" if priced else " · no price") + "</span>")
    head.append(f'<span class="when mono">{esc(_when(first))}</span>')
    head.append(f'<span class="mono">{esc(first.id)}</span>')
    parts = []
    for kind, value in message_parts(group):
        if kind == "text":
            if str(value).strip():
                parts.append(f'<div class="text">{markdown(value)}</div>')
        elif kind == "thinking":
            if str(value).strip():
                words = len(str(value).split())
                parts.append(f'<details class="thinking"><summary>thinking · {words:,} words'
                             f'</summary><div class="text">{markdown(value)}</div></details>')
        elif kind == "call":
            parts.append(tool_call(value))
        elif kind == "result":
            parts.append(_result(value))
        elif kind == "block_result":
            parts.append(pre(value))
        elif kind == "summary":
            parts.append(f'<div class="text">{markdown(value)}</div>')
        elif kind == "note":
            parts.append(f'<div class="note">{esc(value)}</div>')
        else:
            parts.append(f'<details class="raw"><summary>{esc(first.type)}</summary>'
                         f"{pre(_json(value))}</details>")
    summary = " summary" if first.type in (COMPACTION, BRANCH_SUMMARY) else ""
    ids = " ".join(entry.id for entry in group)
    return (f'<article class="msg {css}{summary}" id="entry-{esc(first.id)}" '
            f'data-entries="{esc(ids)}">'
            f'<div class="head">{"".join(head)}</div>{"".join(parts)}</article>')


def _messages(entries: Iterable[Entry], labels, usage) -> Iterable[str]:
    for group in groups(entries):
        yield message(group, labels, usage)


# ------------------------------------------------------------------ the page
def _usage_table(rows: list[tuple[str, Any]]) -> str:
    from core.usage.tokens import fmt_cost

    rows = [(name, figure) for name, figure in rows if figure is not None and figure.responses]
    if not rows:
        return '<p class="note">No token usage recorded for this session.</p>'
    head = ("<tr><th></th><th>responses</th><th>input</th><th>output</th><th>cache write</th>"
            "<th>cache read</th><th>total tokens</th><th>cost</th></tr>")
    body = "".join(
        f"<tr><td>{esc(name)}</td><td>{f.responses:,}</td><td>{f.input_tokens:,}</td>"
        f"<td>{f.output_tokens:,}</td><td>{f.cache_creation_tokens:,}</td>"
        f"<td>{f.cache_read_tokens:,}</td><td>{f.total_tokens:,}</td><td>{esc(fmt_cost(f))}</td></tr>"
        for name, f in rows)
    models = sorted(set().union(*(f.models for _n, f in rows)))
    unpriced = sorted(set().union(*(f.unpriced for _n, f in rows)))
    notes = f'<p class="note">Models: {esc(", ".join(models))}' + \
        (f" · no price for {esc(', '.join(unpriced))} (its tokens are counted, its cost is not)"
         if unpriced else "") + "</p>"
    return f'<table class="usage">{head}{body}</table>{notes}'


def _facts(session, branches, extra: list[tuple[str, str]]) -> str:
    created, updated = session.created_at, session.updated_at
    rows = [("session", session.uid), ("source", session.source or "?"),
            ("project", session.cwd or "—"),
            ("created", created.strftime("%Y-%m-%d %H:%M UTC") if created else "?"),
            ("last activity", updated.strftime("%Y-%m-%d %H:%M UTC") if updated else "?"),
            ("branches", f"{len(branches):,}"), ("messages", f"{session.message_count:,}")]
    rows += extra
    return '<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows) \
        + "</dl>"


def _path(store, head_seq: int | None) -> Iterable[Entry]:
    if head_seq is None:
        return
    total = store.paths.length(head_seq)
    for start in range(0, total, PAGE):
        yield from store.paths.entries(head_seq, start, start + PAGE)


def export_html(store, session, out: TextIO, *, branch=None, all_branches: bool = False,
                now: datetime | None = None) -> int:
    """Write the page; returns the number of entries in it. `branch`: an InternalSession
    (None with `all_branches` False: the session has no branches)."""
    branches = store.branches.of_session(session.id, newest_first=False)
    name = session.session_name or session.uid
    session_figure = store.usage.by_session().get(session.id)
    usage_rows: list[tuple[str, Any]] = [("whole session" + (" (with sub-agents)"
                                          if session_figure and session_figure.subagent_tokens
                                          else ""), session_figure)]
    extra: list[tuple[str, str]] = []
    if branch is not None and not all_branches:
        extra.append(("branch", branch_title(branch)
                      + (" (current)" if branch.is_current else "")))
        usage_rows.append((f"branch {branch_title(branch)}", store.usage.of_path(branch.head_seq)))
    elif all_branches:
        extra.append(("shown", "every branch, as a tree"))
    labels = store.annotations.entry_labels(session.id)
    out.write("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
              '<meta name="viewport" content="width=device-width, initial-scale=1">'
              '<meta name="referrer" content="no-referrer">'
              f"<title>{esc(name)} · arbor</title><style>{STYLE}</style></head><body><main>\n")
    out.write(f"<h1>{esc(name)}</h1>\n{_facts(session, branches, extra)}\n")
    out.write(_usage_table(usage_rows) + "\n")
    count = 0
    if all_branches:
        count = _write_tree(store, session, branches, labels, out)
    elif branch is None:
        out.write('<p class="note">This session has no messages.</p>\n')
    else:
        entries = list(_path(store, branch.head_seq))
        usage = store.usage.of_responses([e.seq for e in entries])
        for html_text in _messages(entries, labels, usage):
            out.write(html_text + "\n")
        count = len(entries)
        if not entries:
            out.write('<p class="note">This branch is empty.</p>\n')
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    out.write(f"<footer>Exported by arbor on {esc(stamp)} · {count:,} entries.</footer>\n"
              "</main></body></html>\n")
    return count


def _write_tree(store, session, branches, labels, out: TextIO) -> int:
    """Every entry of the session as a tree: runs of entries one after another; where an
    entry has several children, each child's subtree folds under a line that names the
    branches whose heads are in it (oldest child first). Iterative: any depth."""
    from core.export.formats import _entries

    entries = list(_entries(store, session.id))
    by_id = {e.id: e for e in entries}
    children: dict[str | None, list[Entry]] = {}
    for entry in entries:
        parent = entry.parent_id if entry.parent_id in by_id else None
        children.setdefault(parent, []).append(entry)
    heads: dict[int, list[str]] = {}
    for b in branches:
        if b.head_seq is not None:
            heads.setdefault(b.head_seq, []).append(
                branch_title(b) + (" (current)" if b.is_current else ""))
    # per entry: the branch names and the number of entries in its subtree
    names: dict[int, list[str]] = {}
    sizes: dict[int, int] = {}
    for entry in sorted(entries, key=lambda e: e.seq, reverse=True):
        names.setdefault(entry.seq, [])
        names[entry.seq] = heads.get(entry.seq, []) + names[entry.seq]
        sizes[entry.seq] = sizes.get(entry.seq, 0) + 1
        parent = by_id.get(entry.parent_id) if entry.parent_id in by_id else None
        if parent is not None and parent.seq != entry.seq:
            names.setdefault(parent.seq, [])
            names[parent.seq] = names[entry.seq] + names[parent.seq]
            sizes[parent.seq] = sizes.get(parent.seq, 0) + sizes[entry.seq]
    usage = store.usage.of_responses([e.seq for e in entries])
    roots = children.get(None, [])
    stack: list[tuple[str, Any]] = []

    def push_forks(kids: list[Entry]) -> None:
        for kid in reversed(kids):
            stack.append(("close", "</details>"))
            stack.append(("chain", kid))
            shown = names.get(kid.seq) or []
            title = ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")
            stack.append(("open", f'<details class="fork" open><summary>↳ {esc(title or "no branch head")}'
                                  f' · {sizes.get(kid.seq, 1):,} entries</summary>'))

    if len(roots) == 1:
        stack.append(("chain", roots[0]))
    else:
        push_forks(roots)
    seen: set[int] = set()
    while stack:
        what, value = stack.pop()
        if what != "chain":
            out.write(value + "\n")
            continue
        run: list[Entry] = []
        current: Entry | None = value
        while current is not None and current.seq not in seen:
            seen.add(current.seq)
            run.append(current)
            kids = children.get(current.id, [])
            if len(kids) == 1:
                current = kids[0]
                continue
            for html_text in _messages(run, labels, usage):
                out.write(html_text + "\n")
            run = []
            if kids:
                push_forks(kids)
            current = None
        for html_text in _messages(run, labels, usage):
            out.write(html_text + "\n")
    return len(entries)
