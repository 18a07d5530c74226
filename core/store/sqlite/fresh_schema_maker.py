"""The generator of fresh_schema.py (a new store's schema in one step): an empty store is
migrated in a folder of its own, as SQLiteBackend makes one, and what it holds is written
out as statements. Run after adding a migration:

    python -m core.store.sqlite.fresh_schema_maker

(Nothing of arbor imports this module: it imports the migrations and the backend, which
import fresh_schema.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from . import fresh_schema, migrations
from .backend import PAGE_SIZE, SQLiteBackend

TARGET = Path(fresh_schema.__file__)


def schema_of(conn: sqlite3.Connection) -> list[str]:
    """The statements that make `conn`'s schema and rows again (but schema_migrations' rows,
    which fresh_schema.MIGRATIONS gives): its tables, indexes, triggers and views in the
    order they were made (the shadow tables of full-text indexes and SQLite's own left out:
    they come with their virtual table), then INSERTs of the rows any migration wrote."""
    shadow = {name for name, kind in conn.execute("SELECT name, type FROM pragma_table_list")
              if kind == "shadow"}
    out = []
    for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                                  " ORDER BY rowid"):
        if not name.startswith("sqlite_") and name not in shadow:
            out.append(sql)
    for (name,) in conn.execute("SELECT name FROM pragma_table_list WHERE type = 'table'"
                                " AND schema = 'main' ORDER BY name"):
        if name.startswith("sqlite_") or name in shadow or name == "schema_migrations":
            continue
        columns = [row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (name,))]
        quoted = ", ".join(f'quote("{column}")' for column in columns)
        for row in conn.execute(f'SELECT {quoted} FROM "{name}"'):
            out.append(f'INSERT INTO "{name}" VALUES ({", ".join(row)})')
    return out


def migrated_schema() -> tuple[list[str], list[tuple[int, str]]]:
    """An empty store migrated: its statements (schema_of) and the migrations recorded."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="arbor-fresh-schema-") as folder:
        conn = sqlite3.connect(str(Path(folder) / "store.db"), isolation_level=None)
        try:
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute("PRAGMA journal_mode = WAL")
            migrations.apply_migrations(conn, backend=SQLiteBackend)
            return schema_of(conn), conn.execute(
                "SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        finally:
            conn.close()


def generate() -> str:
    """fresh_schema.py's text: its docstring as it is, the rest made again."""
    statements, recorded = migrated_schema()
    text = TARGET.read_text(encoding="utf-8")
    docstring = text[:text.index('"""', 3) + 3]
    lines = [docstring, "", f"VERSION = {migrations.CURRENT_VERSION}", "", "MIGRATIONS = ("]
    lines += [f"    ({number}, {name!r})," for number, name in recorded]
    lines += [")", "", "STATEMENTS = ("]
    for statement in statements:   # (as written in the migrations, where a string can hold it)
        plain = '"""' not in statement and "\\" not in statement and not statement.endswith('"')
        lines.append(f'    """{statement}""",' if plain else f"    {statement!r},")
    lines.append(")")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TARGET.write_text(generate(), encoding="utf-8")
    print(f"wrote {TARGET}")
