"""`arbor usage`: the table, the JSON shape, and one sentence for each foreseeable fault."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from tests import usage_files as uf

REPO = Path(__file__).resolve().parent.parent


def arbor(*args, env=None):
    import os

    full = {**os.environ, "COLUMNS": "160", **(env or {})}
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          cwd=REPO, env=full)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("usage-cli")
    uf.claude_session(root / "projects" / "-work-usage-demo")
    uf.codex_rollout(root / "codex")
    uf.pi_session(root / "pi")
    path = root / "s.db"
    with open_store(path) as store:
        import_paths(store, [root / "projects", root / "codex", root / "pi"])
    return path


def test_a_postgresql_store_gives_the_same_report(db, postgres_server):
    url = postgres_server.new_store_url("usage")
    with open_store(url) as store:
        import_paths(store, [db.parent / "projects", db.parent / "codex", db.parent / "pi"])
    for by in ("model", "session", "day"):
        reports = [arbor("usage", "--db", str(where), "--by", by, "--json", "--timezone", "UTC")
                   for where in (db, url)]
        assert [r.returncode for r in reports] == [0, 0], reports[1].stderr
        on_sqlite, on_postgres = (json.loads(r.stdout) for r in reports)
        assert on_sqlite["rows"] and on_postgres == on_sqlite


def test_json_is_exactly_rows_and_totals(db):
    done = arbor("usage", "--db", str(db), "--by", "model", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    fields = ["input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
              "total_tokens", "cost_usd", "models", "incomplete"]
    assert list(data) == ["rows", "totals"]
    assert list(data["totals"]) == fields
    assert all(list(row) == ["key", *fields] for row in data["rows"])
    keys = [row["key"] for row in data["rows"]]
    assert uf.UNPRICED in keys and uf.CODEX_MODEL in keys
    unpriced = next(row for row in data["rows"] if row["key"] == uf.UNPRICED)
    assert unpriced["incomplete"] is True and unpriced["cost_usd"] == 0
    assert data["totals"]["incomplete"] is True
    assert data["totals"]["total_tokens"] == sum(row["total_tokens"] for row in data["rows"])


def test_table_has_a_row_per_group_a_total_and_names_the_unpriced_model(db):
    done = arbor("usage", "--db", str(db), "--by", "day", "--timezone", "UTC")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[0] == "Day"
    assert [line.split()[0] for line in lines[1:5]] == ["2025-10-01", "2025-10-02", "2025-10-05",
                                                        "2025-10-07"]
    total = next(line for line in lines if line.startswith("Total"))
    assert total.rstrip().endswith("+")
    assert f"no price for {uf.UNPRICED}" in done.stdout


def test_filters_source_and_range(db):
    done = arbor("usage", "--db", str(db), "--source", "codex", "--json")
    data = json.loads(done.stdout)
    assert [row["key"] for row in data["rows"]] == ["2025-10-05"] or \
        [row["models"] for row in data["rows"]] == [[uf.CODEX_MODEL]]
    done = arbor("usage", "--db", str(db), "--since", "2025-10-06", "--until", "2025-10-07",
                 "--timezone", "UTC", "--json")
    assert [row["key"] for row in json.loads(done.stdout)["rows"]] == ["2025-10-07"]


@pytest.mark.parametrize("args, code, fragment", [
    (["--timezone", "Mars/Olympus"], 1, "unknown time zone 'Mars/Olympus'"),
    (["--since", "yesterday"], 2, "'yesterday' is not a day"),
    (["--by", "hour"], 2, "invalid choice: 'hour'"),
])
def test_bad_arguments_are_one_sentence(db, args, code, fragment):
    done = arbor("usage", "--db", str(db), *args)
    assert done.returncode == code
    assert fragment in done.stderr and "Traceback" not in done.stderr


def test_a_bad_prices_file_is_one_sentence(db, tmp_path):
    bad = tmp_path / "prices.json"
    bad.write_text("{oops")
    done = arbor("usage", "--db", str(db), env={"ARBOR_PRICES": str(bad)})
    assert done.returncode == 1
    assert "ARBOR_PRICES=" in done.stderr and "not JSON" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_override_prices_the_unpriced_model_and_reprices_the_store(db, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({uf.UNPRICED: {"input_mtok": 1000, "output_mtok": 1000}}))
    done = arbor("usage", "--db", str(db), "--by", "model", "--json",
                 env={"ARBOR_PRICES": str(prices)})
    data = json.loads(done.stdout)
    row = next(row for row in data["rows"] if row["key"] == uf.UNPRICED)
    r4 = uf.CLAUDE_RESPONSES["r4"]
    assert row["incomplete"] is False
    assert row["cost_usd"] == pytest.approx((r4["input"] + r4["output"]) * 1000 / 1e6)
    # without the file again: the table's prices, the model unpriced again
    data = json.loads(arbor("usage", "--db", str(db), "--by", "model", "--json").stdout)
    assert next(r for r in data["rows"] if r["key"] == uf.UNPRICED)["incomplete"] is True


def test_a_missing_store_is_one_sentence(tmp_path):
    done = arbor("usage", "--db", str(tmp_path / "none.db"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
