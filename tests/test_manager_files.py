"""A session's file name (`DB#ID`) names it whatever its id and folder hold (issue 8,
smaller items: `#` in a session id gave a name `SessionManager.open` rejected)."""

from __future__ import annotations

import pytest

from core import SessionManager
from core.seed.manager import close_root_dbs


@pytest.fixture(autouse=True)
def _close():
    yield
    close_root_dbs()


@pytest.mark.parametrize("session_id", ["a#b", "#", "ends#", "a%23b", "100%", "%25#%23"])
@pytest.mark.parametrize("folder", ["sessions", "odd#folder"])
def test_the_file_name_of_any_id_opens_that_session(tmp_path, session_id, folder):
    session_dir = tmp_path / folder
    manager = SessionManager.new("/w", session_dir)
    manager.init_with_id(session_id)
    manager.append_message({"role": "user", "content": "hello"})
    other = SessionManager.new("/w", session_dir)
    other.init_with_id("plain")          # a second session the name must not reach
    again = SessionManager.open(manager.get_file())
    assert again.session_id == session_id
    assert again.get_messages()[-1]["content"] == "hello"
    listed = {info.path for info in SessionManager.list_all(session_dir)}
    assert manager.get_file() in listed
    assert SessionManager.open_by_path_or_id("/w", session_dir, manager.get_file()).session_id \
        == session_id
    SessionManager.delete_session(manager.get_file(), session_dir)
    assert SessionManager.open(other.get_file()).session_id == "plain"
