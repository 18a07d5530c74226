"""Run and capability events, and capabilities.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations




class SQLite:
    RUN_EVENT_INSERT = (
        "INSERT INTO session_run_events(id, session_id, run_id, event_type, source, status, model,"
        " mode, timestamp, data) VALUES (?,?,?,?,?,?,?,?,?,?)")
    RUN_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, status, model, mode, timestamp,"
        " data FROM session_run_events WHERE session_id = ? AND seq > ? ORDER BY seq")
    RUN_EVENTS_AFTER_LIMIT = RUN_EVENTS_AFTER + " LIMIT ?"
    CAPABILITY_EVENT_INSERT = (
        "INSERT INTO session_capability_events(id, session_id, run_id, event_type, source, actor,"
        " capability, old_value, new_value, timestamp, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
    CAPABILITY_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, actor, capability, old_value,"
        " new_value, timestamp, data FROM session_capability_events WHERE session_id = ?"
        " AND seq > ? ORDER BY seq")
    CAPABILITY_EVENTS_AFTER_LIMIT = CAPABILITY_EVENTS_AFTER + " LIMIT ?"
    CAPABILITIES_SET = (
        "INSERT INTO session_capabilities(session_id, mode, delegate_mode, multi_agent, workflows,"
        " web_search, browser, a2a_master, updated_at) VALUES (?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(session_id) DO UPDATE SET mode = excluded.mode,"
        " delegate_mode = excluded.delegate_mode, multi_agent = excluded.multi_agent,"
        " workflows = excluded.workflows, web_search = excluded.web_search,"
        " browser = excluded.browser, a2a_master = excluded.a2a_master,"
        " updated_at = excluded.updated_at")
    CAPABILITIES_GET = (
        "SELECT session_id, mode, delegate_mode, multi_agent, workflows, web_search, browser,"
        " a2a_master, updated_at FROM session_capabilities WHERE session_id = ?")


class Postgres:
    RUN_EVENT_INSERT = (
        "INSERT INTO session_run_events(id, session_id, run_id, event_type, source, status, model,"
        " mode, timestamp, data) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    RUN_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, status, model, mode, timestamp,"
        " data FROM session_run_events WHERE session_id = %s AND seq > %s ORDER BY seq")
    RUN_EVENTS_AFTER_LIMIT = RUN_EVENTS_AFTER + " LIMIT %s"
    CAPABILITY_EVENT_INSERT = (
        "INSERT INTO session_capability_events(id, session_id, run_id, event_type, source, actor,"
        " capability, old_value, new_value, timestamp, data) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    CAPABILITY_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, actor, capability, old_value,"
        " new_value, timestamp, data FROM session_capability_events WHERE session_id = %s"
        " AND seq > %s ORDER BY seq")
    CAPABILITY_EVENTS_AFTER_LIMIT = CAPABILITY_EVENTS_AFTER + " LIMIT %s"
    CAPABILITIES_SET = (
        "INSERT INTO session_capabilities(session_id, mode, delegate_mode, multi_agent, workflows,"
        " web_search, browser, a2a_master, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT(session_id) DO UPDATE SET mode = excluded.mode,"
        " delegate_mode = excluded.delegate_mode, multi_agent = excluded.multi_agent,"
        " workflows = excluded.workflows, web_search = excluded.web_search,"
        " browser = excluded.browser, a2a_master = excluded.a2a_master,"
        " updated_at = excluded.updated_at")
    CAPABILITIES_GET = (
        "SELECT session_id, mode, delegate_mode, multi_agent, workflows, web_search, browser,"
        " a2a_master, updated_at FROM session_capabilities WHERE session_id = %s")
