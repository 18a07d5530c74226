"""Where the store lives: `--db`, else `ARBOR_DB`, else the user data directory.

A store is named by a file path or by a PostgreSQL URL. `store_location` is the one place
that tells them apart; everything that takes a `--db` or reads `ARBOR_DB` asks it, so a URL
never becomes a folder named `postgresql:` and a path is never parsed as a URL.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from core.model.errors import StoreUnavailable

STORE_FILENAME = "arbor.db"
DEMO_FILENAME = "demo.db"
POSTGRES_SCHEMES = ("postgresql", "postgres")
# "scheme://" at the very start of a string: what every URL a user might give looks like.
# A path such as "./postgresql://x", "C:\\x" or "host:file" does not match.
_URL_START = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class PostgresURL:
    """A PostgreSQL connection URL, kept as given (libpq parses it, never arbor).

    (A plain immutable value rather than a dataclass: `arbor import` over unchanged files
    resolves its store before anything else, and `dataclasses` costs 10 ms to import.)"""

    __slots__ = ("url",)

    def __init__(self, url: str):
        object.__setattr__(self, "url", url)

    def __setattr__(self, name, value):
        raise AttributeError(f"PostgresURL is immutable (cannot set {name})")

    def __eq__(self, other) -> bool:
        return isinstance(other, PostgresURL) and other.url == self.url

    def __hash__(self) -> int:
        return hash((PostgresURL, self.url))

    def __repr__(self) -> str:
        return f"PostgresURL({self.shown()!r})"

    def shown(self) -> str:
        """The URL with any password replaced by `…`, for messages."""
        url = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*):[^@/?#]*@", r"\1:…@", self.url)
        return re.sub(r"([?&]password=)[^&#]*", r"\1…", url)

    def without_password(self) -> str:
        """The URL with any password left out (libpq then takes it from `PGPASSWORD` or
        `~/.pgpass`), for code shown to the user."""
        url = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*):[^@/?#]*@", r"\1@", self.url)
        url = re.sub(r"([?&])password=[^&#]*&?", r"\1", url)
        return re.sub(r"[?&]$", "", url)

    def label(self) -> str:
        """`database@host`, short, for a status line (`database (local socket)` for a
        Unix socket); what libpq would take from the environment is left out."""
        from urllib.parse import parse_qs, unquote, urlsplit

        try:
            parts = urlsplit(self.url)
            query = parse_qs(parts.query)
            host = parts.hostname or query.get("host", [""])[0]
        except ValueError:
            return "PostgreSQL"
        database = unquote(parts.path.lstrip("/")) or query.get("dbname", [""])[0] or "PostgreSQL"
        if not host or host.startswith("/"):
            return f"{database} (local socket)"
        return f"{database}@{host}"

    def __str__(self) -> str:
        return self.shown()


def store_location(value: str | os.PathLike | None = None) -> Path | PostgresURL:
    """The store `value` names (None: `ARBOR_DB`, else the default file).

    A `Path` (or any `os.PathLike`) is always a file path. A string is a PostgreSQL store
    when it starts with `postgresql://` or `postgres://`; any other `scheme://` start is
    refused (it would otherwise become a folder named `scheme:`); everything else is a path,
    with `~` expanded.
    """
    if value is None:
        value = os.environ.get("ARBOR_DB") or None
        if value is None:
            return _user_data() / STORE_FILENAME
    if isinstance(value, PostgresURL):
        return value
    if isinstance(value, os.PathLike):
        return Path(value).expanduser()
    match = _URL_START.match(value)
    if match is None:
        return Path(value).expanduser()
    if match.group(1).lower() in POSTGRES_SCHEMES:
        return PostgresURL(value)
    raise StoreUnavailable(
        f"{match.group(1)}:// is not a kind of store arbor knows; give a file path or a "
        "postgresql:// URL")


def sqlite_path(value: str | os.PathLike | None = None) -> Path:
    """The store file `value` names, for what only a file can be (the demo store, a
    session directory's root); a PostgreSQL URL is refused with one sentence."""
    location = store_location(value)
    if isinstance(location, PostgresURL):
        raise StoreUnavailable(
            f"{location.shown()} names a PostgreSQL store; this needs a store file "
            "(give a file path with --db or ARBOR_DB)")
    return location


def default_db_path() -> Path:
    """The store file used when none is named: `ARBOR_DB`, else the user data directory."""
    return sqlite_path(None)


def demo_db_path() -> Path:
    """Where `arbor --demo` builds its store when no `--db` is given."""
    return _user_data() / DEMO_FILENAME


def _user_data() -> Path:
    from platformdirs import user_data_path

    return user_data_path("arbor", appauthor=False)


def can_read(path: str | os.PathLike) -> bool:
    """Whether this process may open the file for reading: asked of the kernel (`access`,
    with the effective ids), nothing opened (a store's file must not be: see sqlite_probe)."""
    return os.access(path, os.R_OK, effective_ids=os.access in os.supports_effective_ids)


def can_create_in(folder: str | os.PathLike) -> bool:
    """Whether files can be made in `folder` (a read-only mount or an immutable folder says
    no even to root)."""
    return os.access(folder, os.W_OK | os.X_OK,
                     effective_ids=os.access in os.supports_effective_ids)
