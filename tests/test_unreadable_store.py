"""A store arbor may not read says so: "permission denied", not what SQLite makes of it
("unable to open database file").

Root reads any file, so as root the commands run without the capabilities that let it
(`setpriv --bounding-set -dac_override,-dac_read_search`): permission bits apply to it
then as to anyone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store

REPO = Path(__file__).resolve().parent.parent


def arbor_without_override(*args: str) -> subprocess.CompletedProcess:
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("as root, needs setpriv to drop the capability to read any file")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    return subprocess.run([*prefix, sys.executable, "-m", "tui", *args], capture_output=True,
                          text=True, cwd=REPO, env={**os.environ, "ARBOR_IMPORT_WORKERS": "0"})


def test_an_unreadable_store_is_reported_as_permission_denied(tmp_path):
    db = tmp_path / "arbor.db"
    open_store(db).close()
    db.chmod(0)
    try:
        done = arbor_without_override("list", "--db", str(db))
        assert done.returncode == 2
        assert done.stderr.strip() == f"arbor: cannot read {db}: permission denied"
    finally:
        db.chmod(0o644)
