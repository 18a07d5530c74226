"""The palette's import survives files that are not logs (issue 8, item 4): a symbolic link
that loops crashed the app's import worker with a RuntimeError."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from conftest import open_fixed, settle
from core.demo import DEMO_NOW
from tui.app import ArborApp

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"


async def test_palette_import_of_a_folder_with_a_link_loop_and_a_socket(tmp_path, empty_db):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(FIXTURES / "pi" / "pi_v3_generated.jsonl", folder / "good.jsonl")
    os.symlink("loop.jsonl", folder / "loop.jsonl")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock.jsonl"))
    app = ArborApp(open_fixed(empty_db), clock=lambda: DEMO_NOW, store_label="empty.db",
                   poll_interval=None)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            app._import([str(folder)])
            for _ in range(200):
                await pilot.pause(0.05)
                if app.sessions:
                    break
            await settle(pilot)
            assert app.is_running
            assert [s.source for s in app.sessions] == ["pi"]
            said = " ".join(str(n.message) for n in app._notifications)
            assert "1 unreadable" in said and "1 left alone" in said
    finally:
        server.close()
