"""Every untrusted string reaches a widget through tui/render/safe_text.py, as Text: checked in the
source, so that a regression fails here before any store shows it (issue 27).

The walk of tests/hostile_names.py proves what the screens do with hostile names today;
these rules keep the ways in closed:

- a border title or subtitle is never read back from a widget (what it gives is markup:
  set on another widget, a name holding `[` crashed the app, issue 27);
- `notify` gets a literal or `clean(...)`; every other note goes through `app.say`; a
  note's title is a literal;
- nothing in tui/ parses markup or ANSI of its own making from a variable (`from_markup`,
  `from_ansi`, `render_str`, `markup=True`);
- what a widget parses as markup (Static, Label, Button, Option, Hit, a table's cells,
  border titles, `update`, `tooltip`, `console.print`) is never a string built with a
  format or `+`;
- a name-like value (`.name`, `.label`, `.cwd`, `.source`, `.uid`, `.model`, `.summary`,
  `branch_title(...)`, ...) is never formatted into a Text, a string shown by a widget or
  a line printed to the terminal without passing through `clean`, `safe_line` or
  `safe_text` on the way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TUI = Path(__file__).resolve().parent.parent / "tui"
# the app's files (the command-line commands print to a terminal of their own, HTML export
# escapes for HTML; tests/test_cli_hostile.py and the export tests cover those)
FILES = sorted(path for path in TUI.rglob("*.py")
               if "commands" not in path.parts and path.name not in ("cli.py", "html_export.py"))

# widgets and calls that parse a string they are given as markup
MARKUP_TAKERS = {"Static", "Label", "Button", "Option", "Hit", "DiscoveryHit", "Checkbox",
                 "RadioButton", "Tab", "ListItem", "Tree", "add_leaf", "add_option",
                 "update", "print", "log", "Rule", "Collapsible", "Link", "add_row", "add_column"}
MARKUP_PARSERS = {"from_markup", "from_ansi", "render_str", "render_markup", "to_content"}
SANITISERS = {"clean", "safe_line", "safe_text", "safe_markdown_source"}
# values that come from the store or the disk: names, labels, paths, models...
UNTRUSTED_ATTRIBUTES = {"name", "session_name", "label", "labels", "cwd", "source", "uid",
                        "model", "models", "provider", "summary", "description", "tool_name",
                        "checkpoint_name", "title", "preview", "project", "path"}
UNTRUSTED_CALLS = {"branch_title", "project_name", "tilde", "name_of", "says"}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _is_built_string(node: ast.AST) -> bool:
    """A string made with a format, `%` or `+` (not a literal, not a variable)."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return any(isinstance(side, (ast.Constant, ast.JoinedStr)) and not isinstance(
            getattr(side, "value", ""), (int, float)) for side in (node.left, node.right)) \
            or _is_built_string(node.left) or _is_built_string(node.right)
    if isinstance(node, ast.Call) and _name(node.func) in ("format", "join"):
        return isinstance(node.func, ast.Attribute) and isinstance(node.func.value,
                                                                   (ast.Constant, ast.JoinedStr))
    return False


def _untrusted_inside(node: ast.AST) -> list[ast.AST]:
    """Name-like values in `node` that no sanitiser call wraps."""
    found: list[ast.AST] = []

    def visit(item: ast.AST) -> None:
        if isinstance(item, ast.Call) and _name(item.func) in SANITISERS:
            return
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute):
            for child in [item.func.value, *item.args, *(k.value for k in item.keywords)]:
                visit(child)     # (a method's name is not a value: span.title() is arbor's)
            return
        if isinstance(item, ast.Call) and _name(item.func) in ("len", "count", "short_id"):
            return           # (a number, or an id arbor makes)
        if isinstance(item, ast.Attribute) and item.attr in UNTRUSTED_ATTRIBUTES:
            found.append(item)
            return
        if isinstance(item, ast.Call) and _name(item.func) in UNTRUSTED_CALLS:
            found.append(item)
            return
        for child in ast.iter_child_nodes(item):
            visit(child)

    visit(node)
    return found


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(TUI.parent)}:{node.lineno}: {ast.unparse(node)[:120]}"


def _functions(tree: ast.AST):
    """(node, name of the function it is in) for every node."""
    def walk(node: ast.AST, function: str):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            yield child, inner
            yield from walk(child, inner)
    yield from walk(tree, "")


def check(path: Path, source: str | None = None) -> list[str]:
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    faults: list[str] = []
    for node, function in _functions(tree):
        # border titles are never read back (what they give is markup)
        if isinstance(node, ast.Attribute) and node.attr in ("border_title", "border_subtitle") \
                and isinstance(node.ctx, ast.Load):
            faults.append(f"reads a border title back: {_where(path, node)}")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr in (
                        "border_title", "border_subtitle", "tooltip") and _is_built_string(node.value):
                    faults.append(f"a built string as a border title: {_where(path, node)}")
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        # markup is never switched on, nor parsed from a variable
        markup = keywords.get("markup")
        if isinstance(markup, ast.Constant) and markup.value is True:
            faults.append(f"markup=True: {_where(path, node)}")
        if called in MARKUP_PARSERS and node.args and not isinstance(node.args[0], ast.Constant):
            faults.append(f"parses markup or ANSI of a variable: {_where(path, node)}")
        # a note's title is a literal (a toast draws it as it is)
        title = keywords.get("title")
        if called in ("say", "notify") and title is not None and not isinstance(title, ast.Constant):
            faults.append(f"a note's title that is not a literal: {_where(path, node)}")
        # notifications: a literal or clean(...); anything else goes through say()
        message = None
        if called == "notify" and function != "say":
            message = node.args[0] if node.args else keywords.get("message")
        if called == "call_from_thread" and node.args and _name(node.args[0]) == "notify":
            message = node.args[1] if len(node.args) > 1 else None
        if message is not None and not (isinstance(message, ast.Constant) or (
                isinstance(message, ast.Call) and _name(message.func) == "clean") or (
                isinstance(message, ast.IfExp) and all(isinstance(v, ast.Constant)
                                                       for v in (message.body, message.orelse)))):
            faults.append(f"notify without clean (use app.say): {_where(path, node)}")
        # what a widget parses as markup is never a built string
        takes_markup = called in MARKUP_TAKERS and (called != "print" or isinstance(node.func, ast.Attribute))
        if takes_markup:
            every = called in ("add_row", "add_column")      # (a table parses each cell)
            for argument in [*(node.args if every else node.args[:1]),
                             *(keywords[k] for k in ("tooltip", "label", "prompt") if k in keywords)]:
                if _is_built_string(argument):
                    faults.append(f"a built string given to {called}: {_where(path, node)}")
        # a name-like value formatted into shown text without a sanitiser
        if called in ("Text", "Content", "append", "say", *MARKUP_TAKERS) and called != "update":
            for argument in node.args[:1]:
                if isinstance(argument, (ast.JoinedStr, ast.BinOp)) or (
                        isinstance(argument, ast.Call) and _name(argument.func) in ("format", "join")):
                    for value in _untrusted_inside(argument):
                        if called == "say":
                            continue          # (say cleans all it is given)
                        faults.append(f"{ast.unparse(value)} shown without a sanitiser: "
                                      f"{_where(path, node)}")
    return faults


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TUI)))
def test_text_reaches_widgets_through_the_sanitiser(path):
    faults = check(path)
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("source, fault", [
    ("pane.border_subtitle = other.border_subtitle", "reads a border title back"),
    ("title = self.border_title", "reads a border title back"),
    ("self.border_title = f'Branches · {name}'", "a built string as a border title"),
    ("self.notify(f'Renamed {session.name}', markup=False)", "notify without clean"),
    ("self.call_from_thread(self.notify, 'x' + error)", "notify without clean"),
    ("self.say(text, markup=True)", "markup=True"),
    ("Text.from_markup(name)", "parses markup"),
    ("Text.from_ansi(output)", "parses markup or ANSI"),
    ("yield Static(f'Rename {name}')", "a built string given to Static"),
    ("yield Label('Branch ' + title)", "a built string given to Label"),
    ("Option('{} msgs'.format(n))", "a built string given to Option"),
    ("status.update(f'{store} · {count}')", "a built string given to update"),
    ("Text(f'Compacted {branch.name}')", "branch.name shown without a sanitiser"),
    ("line.append(f' {session.cwd} ', DIM)", "session.cwd shown without a sanitiser"),
    ("Text('on ' + branch_title(branch))", "branch_title(branch) shown without a sanitiser"),
    ("Content(f'{row.label} ')", "row.label shown without a sanitiser"),
    ("print(f'arbor: {plan.summary}', file=sys.stderr)", "plan.summary shown without a sanitiser"),
    ("console.print(f'{n} sessions')", "a built string given to print"),
    ("table.add_row(Text('x'), f'{a.name} ×{n}')", "a built string given to add_row"),
    ("self.say('Saved.', title=session.name)", "a note's title that is not a literal"),
])
def test_the_rules_catch_what_they_are_for(source, fault):
    faults = check(TUI / "example.py", source)
    assert any(fault in f for f in faults), faults


@pytest.mark.parametrize("source", [
    "pane.border_subtitle = subtitle",
    "self.notify('Nothing to undo.', markup=False)",
    "self.notify(clean(message), **options)",
    "self.say(f'Renamed {session.name}')",
    "yield Static(Text('Rename', 'bold'))",
    "Text(f'{count:,} more lines')",
    "Text(f'{clean(name)} ({len(rows)})')",
    "line.append_text(safe_line(branch.name, 30))",
    "print(f'arbor: {clean(plan.summary)}', file=sys.stderr)",
    "Text(f'Usage · {span.title(first)}', 'bold')",
])
def test_the_rules_let_safe_text_pass(source):
    assert check(TUI / "example.py", source) == []
