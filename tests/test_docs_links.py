"""The README and the pages of docs/ stay true to the project (issue 26, item 9; issue 28).

- every relative link (and image) points to a file that exists, and to a heading that
  exists when it names one (`page.md#heading`, as GitHub makes the anchors);
- every path of the project the pages name (`core/...`, `tests/...`, `bench/...`) exists,
  every `core.…` name imports, and every `store.<room>` is a room of the store;
- the README's top stays short: what arbor is, the screenshot, the run command, and
  `arbor import --discover` then `arbor`, all within its first 60 lines;
- docs/architecture.md names every package (folder of modules) of core/ and tui/ and every
  room of the store.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
TOP_LINES = 60
README_LINES = 100

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)=["']([^"']+)["']""", re.I)
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
PROJECT_PATH = re.compile(
    r"(?<![\w./~-])((?:core|tui|tests|bench|examples|screenshots|docs|\.ci)/[\w./-]*)")
CORE_NAME = re.compile(r"^core(?:\.\w+)+")
ROOM = re.compile(r"^store\.(?!py$)(\w+)")   # (`store.py` is a file)
# paths that are examples of what an agent's log says (a project of the user's), not arbor's
EXAMPLES = {"tests/test_app.py"}


def shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """The text as a reader sees links in it: no code blocks, no code spans."""
    return CODE_SPAN.sub(" ", FENCE.sub("", text))


def code(text: str) -> list[str]:
    """Every code span and code block of the text."""
    blocks = [m.group(0) for m in FENCE.finditer(text)]
    spans = [m.group(2) for m in CODE_SPAN.finditer(FENCE.sub("", text))]
    return blocks + spans


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lower case, without punctuation, with
    spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link: its text
    text = re.sub(r"[`*_]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return [m.group(1) for m in LINK.finditer(text)] + [m.group(1) for m in HTML_LINK.finditer(text)]


def test_there_are_pages_and_links_to_check():
    assert README in PAGES and ARCHITECTURE in PAGES and len(PAGES) > 10
    assert sum(len(links(page)) for page in PAGES) > 50


@pytest.mark.parametrize("page", PAGES, ids=shown)
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):   # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        where = (page.parent / file).resolve() if file else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no heading #{anchor} in {shown(where)}")
    assert not broken, f"{shown(page)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=shown)
def test_every_path_of_the_project_a_page_names_exists(page):
    missing = []
    for piece in code(page.read_text(encoding="utf-8")):
        for match in PROJECT_PATH.finditer(piece):
            after = piece[match.end():match.end() + 1]
            if after in ("<", "*", "{", "…"):            # a pattern: `core/agents/<agent>/`
                continue
            path = match.group(1).split("::")[0].rstrip(".,:;")
            if path not in EXAMPLES and not (ROOT / path).exists():
                missing.append(path)
    assert not missing, f"{shown(page)} names paths that do not exist: {sorted(set(missing))}"


def resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=shown)
def test_every_core_name_a_page_gives_imports(page):
    names = {m.group(0) for piece in code(page.read_text(encoding="utf-8"))
             if (m := CORE_NAME.match(piece.strip()))}
    assert all(resolves(name) for name in names), \
        f"{shown(page)}: {sorted(n for n in names if not resolves(n))} do not import"


def rooms() -> set[str]:
    from core.store.store import Store, _Room

    return {name for name, value in vars(Store).items() if isinstance(value, _Room)}


@pytest.mark.parametrize("page", PAGES, ids=shown)
def test_every_room_of_the_store_a_page_names_is_one(page):
    named = {m.group(1) for piece in code(page.read_text(encoding="utf-8"))
             if (m := ROOM.match(piece.strip()))}
    assert named <= rooms() | {"errors", "transaction", "reader"}, \
        f"{shown(page)} names rooms the store does not have: {sorted(named - rooms())}"


def test_the_readme_top_has_the_picture_the_demo_and_own_logs_in_its_first_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    top = "\n".join(lines[:TOP_LINES])
    picture = re.search(r"!\[[^\]]*\]\((docs/images/[^)\s]+\.(?:png|svg))\)", top)
    assert picture and (ROOT / picture.group(1)).is_file(), "the screenshot, under docs/images/"
    assert "<!-- run-command -->" in top and "arbor --demo" in top
    assert re.search(r"^\S*arbor import --discover\b", top, re.M)
    assert re.search(r"^\S*arbor(\s+#.*)?$", top, re.M), "then `arbor` on its own"
    assert lines[0].startswith("# ") and len(lines) <= README_LINES, (
        f"the README is {len(lines)} lines: keep it to what a newcomer needs first and "
        "move the detail to a page of docs/ linked from it")


def test_the_readme_keeps_the_command_ci_runs_and_the_run_command():
    ci = subprocess.run(
        ["awk", "/<!-- test-command -->/{found=1; next} found && /^```sh/{getline; print; exit}",
         str(README)], capture_output=True, text=True, check=True).stdout.strip()
    assert ci.endswith("python -m pytest") and "pip install" in ci
    assert (ROOT / ".ci" / "run").read_text().count("<!-- test-command -->") == 1
    text = README.read_text(encoding="utf-8")
    run = text.split("<!-- run-command -->", 1)[1].split("```sh\n", 1)[1].split("\n", 1)[0]
    assert run.endswith("arbor --demo") and "pip install ." in run


def packages(top: str) -> list[str]:
    return sorted(f"{folder.relative_to(ROOT).as_posix()}/"
                  for folder in (ROOT / top).rglob("*")
                  if folder.is_dir() and "__pycache__" not in folder.parts
                  and any(folder.glob("*.py")))


def test_the_architecture_names_every_package_of_core_and_tui():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    found = packages("core") + packages("tui")
    assert "core/store/rooms/" in found and "tui/components/" in found
    missing = [folder for folder in found if f"`{folder}`" not in text]
    assert not missing, f"docs/architecture.md does not say what these hold: {missing}"


def test_the_architecture_names_every_room_of_the_store():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert len(rooms()) > 5
    assert not [room for room in rooms() if f"`store.{room}`" not in text]


def test_the_link_checker_sees_broken_links_and_headings(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A `code` heading: with punctuation!\n\n## Twice\n## Twice\n")
    page.write_text("[ok](there.md#a-code-heading-with-punctuation) [dup](there.md#twice-1) "
                    "`[in code](nowhere.md)`\n```\n[in a block](nowhere.md)\n```\n"
                    "![img](missing.png) [web](https://example.com/x.md)\n")
    assert links(page) == ["there.md#a-code-heading-with-punctuation", "there.md#twice-1",
                           "missing.png", "https://example.com/x.md"]
    assert anchors(tmp_path / "there.md") == {"a-code-heading-with-punctuation", "twice", "twice-1"}


def test_the_readme_opening_names_every_agent_arbor_reads():
    from core.agents.registry import everyone

    opening = README.read_text(encoding="utf-8").split("![", 1)[0]
    flat = " ".join(opening.split())
    missing = [agent.title for agent in everyone()
               if agent.source != "arbor" and agent.title not in flat]
    assert not missing, f"the README's first paragraph does not name {missing}"
