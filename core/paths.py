"""Where the store lives: `--db PATH`, else `ARBOR_DB`, else the user data directory."""

from __future__ import annotations

import os
from pathlib import Path

STORE_FILENAME = "arbor.db"


def default_db_path() -> Path:
    override = os.environ.get("ARBOR_DB")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path("arbor", appauthor=False) / STORE_FILENAME
