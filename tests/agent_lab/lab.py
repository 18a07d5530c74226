"""Running a real agent against tests/fake_model_server.py, shut in temp folders.

Used by the scripts that make tests/fixtures/agents/<agent>/ (`make_<agent>.py`) and by the
opt-in tests. Every agent runs with HOME, the XDG folders and its config folder in a temp
directory, no real key, and HTTP(S)_PROXY set to the fake server (which refuses and records
each CONNECT), so nothing reaches the network or the machine's real agent folders."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from fake_model_server import FakeModelServer  # noqa: E402

FIXTURES = TESTS / "fixtures" / "agents"
FAKE_KEY = "fake-key-for-127.0.0.1"


def node_modules() -> Path | None:
    path = os.environ.get("ARBOR_AGENT_NODE_MODULES")
    return Path(path) if path and Path(path).is_dir() else None


def venvs() -> Path | None:
    path = os.environ.get("ARBOR_AGENT_VENVS")
    return Path(path) if path and Path(path).is_dir() else None


def npm_bin(name: str) -> Path | None:
    modules = node_modules()
    if modules is None:
        return None
    path = modules / ".bin" / name
    return path if path.exists() else None


def venv_bin(venv: str, name: str) -> Path | None:
    root = venvs()
    if root is None:
        return None
    path = root / venv / "bin" / name
    return path if path.exists() else None


def versions() -> dict[str, str]:
    out = {}
    for line in (HERE / "VERSIONS").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            out[fields[1]] = fields[2]
    return out


@dataclass
class Lab:
    """A temp world for one agent: `home`, a `project` folder, the fake `server`."""
    root: Path
    server: FakeModelServer
    extra_env: dict[str, str] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self.port = self.server.port

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def env(self, **more: str) -> dict[str, str]:
        home = self.home
        proxy = self.server.url
        base = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8", "TERM": "xterm-256color",
            "HOME": str(home), "USERPROFILE": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
            "TMPDIR": str(self.root / "tmp"),
            "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy,
            "https_proxy": proxy, "ALL_PROXY": proxy,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1", "CI": "1",
        }
        modules = node_modules()
        if modules is not None:
            base["PATH"] = f"{modules / '.bin'}:{base['PATH']}"
        return {**base, **self.extra_env, **more}

    def run(self, argv: list[str], *, env: dict[str, str] | None = None,
            cwd: Path | None = None, timeout: float = 180, input: str | None = None,
            note: str = "") -> subprocess.CompletedProcess:
        env = env or self.env()
        done = subprocess.run([str(a) for a in argv], cwd=cwd or self.project, env=env,
                              capture_output=True, text=True, timeout=timeout, input=input,
                              stdin=None if input is not None else subprocess.DEVNULL)
        self.runs.append({"argv": [str(a) for a in argv], "rc": done.returncode,
                          "note": note, "stdout": done.stdout, "stderr": done.stderr})
        return done


def new_lab(root: Path, server: FakeModelServer) -> Lab:
    if root.exists():
        shutil.rmtree(root)
    for sub in ("home", "project", "tmp"):
        (root / sub).mkdir(parents=True)
    return Lab(root, server)


def backup_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a database another process may still hold (never a file copy)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src:
        src.execute("VACUUM INTO ?", (str(target),))


def copy_tree(source: Path, target: Path, *, skip=(".lock",)) -> list[Path]:
    """Copy the files an agent wrote (not SQLite databases: use backup_sqlite)."""
    copied = []
    for path in sorted(source.rglob("*")):
        if path.is_file() and not path.name.endswith(skip):
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            copied.append(destination)
    return copied


def scrub(text: str, lab: Lab, **names: str) -> str:
    """Replace the lab's temp paths (and the server's port) by stable names in a text."""
    text = text.replace(str(lab.project), "/LAB/project").replace(str(lab.home), "/LAB/home")
    text = text.replace(str(lab.root), "/LAB").replace(f"127.0.0.1:{lab.port}",
                                                       "127.0.0.1:PORT")
    for old, new in names.items():
        text = text.replace(old, new)
    return text
