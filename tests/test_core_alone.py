"""`core` stands alone: it imports without textual and never imports tui."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_core_imports_without_textual():
    script = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('textual', 'tui'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        f"sys.meta_path.insert(0, Block()); sys.path.insert(0, {str(REPO)!r})\n"
        "import core, core.actions.operations, core.demo, core.history.summariser, core.seed.repositories, core.seed.manager\n"
        "import pkgutil, importlib\n"
        "for info in pkgutil.walk_packages(core.__path__, 'core.'):\n"
        "    importlib.import_module(info.name)\n"
        "assert not any(m.split('.')[0] in ('textual', 'tui') for m in sys.modules)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_no_core_module_mentions_tui():
    offenders = [p.name for p in (REPO / "core").rglob("*.py")
                 if any(line.strip().startswith(("import tui", "from tui")) for line in p.read_text().splitlines())]
    assert offenders == []


def test_every_public_core_name_resolves():
    import core

    for name in core.__all__:
        assert getattr(core, name) is not None, name
