"""arbor as users get it: `pip install .` (not editable) into a fresh virtual environment,
used from a folder outside the checkout.

The rest of the suite runs on an editable install, which sees every file of the checkout:
a package that `pip install .` leaves out (as `core.agents` once was) is invisible to it.
Here the project is copied (its tracked files), installed with every extra but `test`, and
every file of `core/` and `tui/` must be in the install, every module must import from it,
and the commands a newcomer runs first must work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from hostile_names import toasts
from terminal import Terminal, tmux_or_skip

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "tui")


@dataclass
class Installed:
    venv: Path
    site: Path
    elsewhere: Path  # a folder outside the checkout to run from
    extras: list[str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def arbor(self) -> Path:
        return self.venv / "bin" / "arbor"

    def env(self, home: Path) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if k not in {"PYTHONPATH", "VIRTUAL_ENV", "ARBOR_DB", "PYTHONHOME"}}
        return {**keep, "HOME": str(home), "PATH": f"{self.venv / 'bin'}:/usr/bin:/bin",
                "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex"),
                "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent"),
                "XDG_DATA_HOME": str(home / ".local" / "share")}

    def run(self, argv: list[str], home: Path, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=self.elsewhere, env=self.env(home), capture_output=True,
                              text=True, timeout=120, **kwargs)


def _tracked_files() -> list[Path]:
    """The files a clone of the repository has (what `pip install .` is given by a user)."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              cwd=ROOT, capture_output=True, check=True)
        return [Path(p) for p in done.stdout.decode().split("\0") if p and (ROOT / p).is_file()]
    skip = {".git", ".venv", "__pycache__", "build"}
    return [p.relative_to(ROOT) for p in ROOT.rglob("*")
            if p.is_file() and not skip.intersection(p.relative_to(ROOT).parts)]


def _extras() -> list[str]:
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return sorted(name for name in optional if name != "test")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    source = base / "source"
    for relative in _tracked_files():
        target = source / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / relative, target)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    extras = _extras()
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                           f"{source}[{','.join(extras)}]"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"pip install . failed:\n{done.stdout}\n{done.stderr}"
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return Installed(venv=venv, site=site, elsewhere=elsewhere, extras=extras)


def _package_files() -> list[Path]:
    return sorted(p for p in _tracked_files()
                  if p.parts[0] in PACKAGES and "__pycache__" not in p.parts)


def test_every_file_of_the_packages_is_installed(installed):
    files = _package_files()
    assert any(p.suffix == ".py" for p in files) and any(p.suffix == ".tcss" for p in files)
    missing = [str(p) for p in files if not (installed.site / p).is_file()]
    assert not missing, f"pip install . leaves out: {missing}"
    # and the install is a copy, not a link back to the checkout
    assert not (installed.site / "core").is_symlink()
    assert not list(installed.site.glob("__editable__*"))


def test_every_module_imports_from_the_install(installed, tmp_path):
    modules = sorted(".".join(p.with_suffix("").parts).removesuffix(".__init__")
                     for p in _package_files() if p.suffix == ".py" and p.stem != "__main__")
    script = (
        "import importlib, json, sys\n"
        "out = {}\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    try:\n"
        "        out[name] = importlib.import_module(name).__file__\n"
        "    except Exception as error:\n"
        "        out[name] = f'FAILED {type(error).__name__}: {error}'\n"
        "print(json.dumps(out))\n")
    done = installed.run([str(installed.python), "-c", script, json.dumps(modules)], tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert len(found) == len(modules) > 50
    failed = {name: where for name, where in found.items() if where.startswith("FAILED")}
    assert not failed
    outside = {name: where for name, where in found.items()
               if not Path(where).resolve().is_relative_to(installed.site.resolve())}
    assert not outside, f"imported from outside the install: {outside}"


def test_every_extra_is_installed_with_what_it_needs(installed, tmp_path):
    assert {"postgres", "langgraph", "mcp"} <= set(installed.extras)
    done = installed.run([str(installed.venv / "bin" / "pip"), "check"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    script = (
        "import importlib.metadata as m, json, re\n"
        "needs = {}\n"
        "for line in m.requires('arbor') or []:\n"
        "    extra = re.search(r'extra == \"([^\"]+)\"', line)\n"
        "    if extra and extra.group(1) != 'test':\n"
        "        name = re.match(r'[A-Za-z0-9._-]+', line).group(0)\n"
        "        needs.setdefault(extra.group(1), []).append([name, m.version(name)])\n"
        "print(json.dumps(needs))\n")
    done = installed.run([str(installed.python), "-c", script], tmp_path)
    assert done.returncode == 0, done.stderr
    needs = json.loads(done.stdout)
    assert sorted(needs) == installed.extras
    # what each extra is for works from the install
    done = installed.run([str(installed.python), "-c",
                          "from core.langgraph import ArborSaver; import psycopg, psycopg_pool;"
                          " print(ArborSaver.__module__)"], tmp_path)
    assert done.returncode == 0 and done.stdout.strip().startswith("core.langgraph"), done.stderr


def test_the_postgres_extra_opens_a_team_store(installed, tmp_path, postgres_server):
    url = postgres_server.new_store_url("installed")
    log = ROOT.parent / "shared" / "fixtures" / "pi" / "pi_v3_generated.jsonl"
    done = installed.run([str(installed.arbor), "import", str(log), "--db", url], tmp_path)
    assert done.returncode == 0, done.stderr
    done = installed.run([str(installed.arbor), "list", "--db", url, "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    [session] = json.loads(done.stdout)
    assert session["source"] == "pi" and session["messages"] > 0


def test_the_mcp_extra_serves_the_store_on_stdio(installed, tmp_path):
    store = _demo_store(installed, tmp_path)
    server = subprocess.Popen([str(installed.arbor), "mcp", "--db", str(store)],
                              cwd=installed.elsewhere, env=installed.env(tmp_path), text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)

    def say(*messages):   # (an answer is awaited before the next request, as agents do)
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    hello = say({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "installed-test", "version": "1"}}})
    found = say({"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "search", "arguments": {"query": "flaky"}}})
    server.stdin.close()
    assert server.wait(timeout=60) == 0, server.stderr.read()
    assert hello["result"]["serverInfo"]["name"] == "arbor"
    assert found["id"] == 2 and found["result"]["structuredContent"]["hits"]


def _demo_store(installed: Installed, home: Path) -> Path:
    path = home / "demo.db"
    done = installed.run([str(installed.python), "-c",
                          "import sys; from core.demo import build_demo; build_demo(sys.argv[1])",
                          str(path)], home)
    assert done.returncode == 0, done.stderr
    return path


def test_resume_print_works_from_the_install(installed, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    store = _demo_store(installed, home)
    done = installed.run([str(installed.arbor), "list", "--db", str(store), "--json"], home)
    assert done.returncode == 0, done.stderr
    sessions = json.loads(done.stdout)
    claude = next(s for s in sessions if s["source"] == "claude_code")
    done = installed.run([str(installed.arbor), "resume", claude["uid"], "--print", "--db", str(store)],
                         home)
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "claude" in done.stdout and "--resume" in done.stdout


def test_the_demo_opens_and_o_answers_from_the_install(installed, tmp_path):
    tmux_or_skip()
    home = tmp_path / "home"
    home.mkdir()
    with Terminal([str(installed.arbor), "--demo"], cwd=installed.elsewhere,
                  env={**installed.env(home), "TERM": "xterm-256color"}) as term:
        screen = term.wait_for("Migrate orders table", timeout=60)
        assert "Sessions" in screen
        # `o` on the Claude Code session's branch, no agent on PATH: the session is written and
        # the app says how to resume it (it ended with ModuleNotFoundError: core.agents)
        term.keys("End")
        term.wait_for(lambda s: "Fix flaky login test" in s.splitlines()[-3])
        term.keys("Tab")
        term.keys("o")
        screen = term.wait_for(lambda s: "was not started" in toasts(s) or "Traceback" in s,
                               timeout=60)
        assert "Traceback" not in screen and term.exited() is None, term.history()
        assert "new Claude Code session" in toasts(screen)
