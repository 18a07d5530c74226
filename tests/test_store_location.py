"""`--db` and `ARBOR_DB` name a file or a PostgreSQL URL; one function in core tells which."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.model.errors import StoreUnavailable
from core.store.location import PostgresURL, default_db_path, sqlite_path, store_location

URL = "postgresql://user@/db?host=/tmp"


@pytest.mark.parametrize("url", [URL, "postgres://u:pw@db.example:5432/arbor",
                                 "PostgreSQL://localhost/arbor", "postgresql:///arbor"])
def test_a_postgres_url_is_a_url(url):
    assert store_location(url) == PostgresURL(url)


@pytest.mark.parametrize("path", ["./postgresql://x", "store/postgres://db", "arbor.db",
                                  "postgresql:", "postgresql:/x", "C:\\arbor.db", "host:file.db"])
def test_a_path_is_never_parsed_as_a_url(path):
    assert store_location(path) == Path(path)


def test_a_path_object_is_a_path_whatever_its_name():
    odd = Path("postgresql:") / "x"
    assert store_location(odd) == odd


def test_a_tilde_is_expanded():
    assert store_location("~/a.db") == Path.home() / "a.db"


def test_another_url_scheme_is_refused():
    with pytest.raises(StoreUnavailable, match="sqlite:// is not a kind of store"):
        store_location("sqlite:///tmp/x.db")


def test_arbor_db_is_read_the_same_way(monkeypatch, tmp_path):
    monkeypatch.setenv("ARBOR_DB", URL)
    assert store_location() == PostgresURL(URL)
    with pytest.raises(StoreUnavailable, match="PostgreSQL store"):
        default_db_path()
    monkeypatch.setenv("ARBOR_DB", str(tmp_path / "x.db"))
    assert default_db_path() == tmp_path / "x.db"


def test_a_sqlite_path_refuses_a_url_in_one_sentence():
    with pytest.raises(StoreUnavailable) as caught:
        sqlite_path(URL)
    assert str(caught.value).count(".") <= 1 and "\n" not in str(caught.value)


def test_a_password_is_never_shown():
    assert PostgresURL("postgresql://me:s3cret@host/db").shown() == "postgresql://me:…@host/db"
    assert "s3cret" not in str(PostgresURL("postgresql://host/db?user=me&password=s3cret"))
    assert PostgresURL("postgresql://host:5432/db").shown() == "postgresql://host:5432/db"
