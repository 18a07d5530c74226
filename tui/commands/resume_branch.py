"""`arbor resume SESSION [--branch ID] [--entry ID] [--in AGENT] [--redact] [--compact]
[--print | --dry-run] [--db PATH]`.

Writes the branch (the current one unless --branch; up to --entry when given) as a new
native session of the agent that wrote the session, or of another agent with --in (a hand-off, core/handoff: the new session nests under this one in arbor),
then runs the agent's resume command in this terminal from the session's recorded working
directory. --redact masks secrets in what is written; --compact hands off a branch too
large for the agent's context with its older part summarised.
The same unchanged branch resumed again reuses the session written for it (no copies in the
agent's picker). --print writes the file (or finds it) and prints `cd <dir> && <command>`,
running nothing; --dry-run writes and changes nothing and says what would be done. A session
arbor owns has its branch made current, and the Python that continues it is printed.

Exit status: the agent's own when it ran (128+N when a signal N ended it); 0 printed or dry
run; 1 no such session, branch or entry,
or the branch cannot be resumed or written; 2 the store cannot be opened; 127 the agent's
executable is not on PATH (the command is printed, and the file is written).
"""

from __future__ import annotations

import argparse
import sys

from .shared import EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain, say

EXIT_NO_EXECUTABLE = 127  # as a shell reports a command it cannot find
INTERRUPTED = "the agent was stopped; the session file written for it is kept"
# SIGTERM and SIGHUP keep their usual effect (cli.Stopped is not raised here): the agent
# runs in this terminal, and what it does with them is its own affair.
KEEPS_SIGNALS = True


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Carry on from a branch in the agent that wrote it: write the branch as a "
                     "new session of that agent (pi, Claude Code, Codex) and run the agent's "
                     "resume command from the session's working directory.")
    p.add_argument("session", metavar="SESSION", help="a session uid, unique uid prefix, or name")
    p.add_argument("--branch", "-b", metavar="ID", help="the branch (id or name); default: the current one")
    p.add_argument("--entry", "-e", metavar="ID",
                   help="carry on from this entry of the branch (its id or a unique prefix) "
                        "instead of the branch's head")
    p.add_argument("--in", dest="agent", metavar="AGENT",
                   help="hand the branch to another agent, named by its command (claude, codex, "
                        "pi, gemini, qwen, droid, kimi: the agents arbor writes sessions for); "
                        "the branch is "
                        "written as a new session of that agent, with its tool calls under the "
                        "agent's own tools where it has them")
    p.add_argument("--redact", action="store_true",
                   help="mask API keys, tokens, private keys and passwords in what is written "
                        "(the store is not changed)")
    p.add_argument("--compact", action="store_true",
                   help="for a branch too large for the agent's context: hand it off with its "
                        "older part summarised (in the new session only)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--print", "-p", action="store_true", dest="print_only",
                     help="write the session file (or reuse the one written for this unchanged "
                          "branch) and print the command; run nothing")
    how.add_argument("--dry-run", "-n", action="store_true",
                     help="write nothing, change nothing: say what would be written and run")
    add_db_argument(p)


def _entry_on(store, branch, ref: str):
    from core.model.errors import AmbiguousId, NotFound

    if branch.head_seq is None:
        raise NotFound(f"branch {branch.id} has no entries")
    exact = store.entries.find(branch.external_session_id, ref)
    if exact is not None and store.paths.is_ancestor(exact.seq, branch.head_seq):
        return exact
    found = [e for e in store.paths.entries(branch.head_seq) if e.id.startswith(ref)]
    if len(found) > 1:
        raise AmbiguousId(f"{ref!r} matches {len(found)} entries of the branch: "
                          + ", ".join(e.id for e in found[:5]))
    if not found:
        raise NotFound(f"branch {branch.name or branch.id} has no entry {ref!r}")
    return found[0]


def handoff_target(name: str, source: str) -> str | None:
    """The agent `--in` names (None: the session's own agent, an ordinary resume)."""
    from core.handoff import targets

    target = targets.named(name, "--in")
    return None if target == source else target


def compaction_preview(plan) -> str:
    """What `c` shows of a compaction, in lines for the terminal."""
    from core.model.entries import content_text

    def said(entry) -> str:
        text = " ".join(content_text((entry.message or {}).get("content")).split()) if entry else ""
        return text[:100] + ("…" if len(text) > 100 else "")

    lines = [f"arbor would summarise {plan.messages_summarised:,} messages "
             f"(about {plan.tokens_before:,} tokens before, {plan.tokens_after:,} after) "
             f"and keep the last {plan.kept_count:,} entries as they are:"]
    if plan.first_message is not None:
        lines.append(f"  from: {said(plan.first_message)}")
    if plan.last_message is not None:
        lines.append(f"  to:   {said(plan.last_message)}")
    if plan.summary:
        first = plan.summary.strip().splitlines()[0] if plan.summary.strip() else ""
        lines.append(f"  summary: {first[:100]}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from core.agents import prepare_resume, run as run_plan
    from core.model.errors import ArborError
    from core.export.formats import resolve_branch, resolve_session

    store = open_store_or_explain(args.db, create=False)
    if store is None:
        return EXIT_STORE
    try:
        session = resolve_session(store, args.session)
        branch = resolve_branch(store, session, args.branch)
        at = _entry_on(store, branch, args.entry).seq if args.entry else None
        target = handoff_target(args.agent, session.source) if args.agent else None
        if target is not None or args.redact:
            from core.handoff import prepare_handoff

            plan = prepare_handoff(store, session, branch, target=target or session.source,
                                   at_seq=at, dry_run=args.dry_run, redact=args.redact,
                                   compact=args.compact)
        else:
            plan = prepare_resume(store, session, branch, at_seq=at, dry_run=args.dry_run)
    except ArborError as error:
        say(str(error))
        preview = getattr(error, "compaction", None)
        if preview is not None:
            say(compaction_preview(preview))
            say("run again with --compact to hand it off so")
        return EXIT_FAILED
    except OSError as error:
        say(f"cannot write the session file: {error.strerror or error}")
        return EXIT_FAILED
    except store.database_errors as error:
        say(f"the store could not be read or written: {error}")
        return EXIT_FAILED
    finally:
        store.close()
    say(plan.summary + ".")
    for note in getattr(plan, "notes", ()):
        say(note)
    if plan.cwd_guessed:
        say(f"the session has no recorded working directory; using {plan.cwd}")
    if args.dry_run:
        if plan.argv:
            say(f"would run: {plan.shell_command()}")
            if plan.executable_path() is None:
                say(f"{plan.executable} is not on PATH here")
            if not plan.cwd_exists():
                say(f"the session's working directory {plan.cwd} does not exist here")
        return EXIT_OK
    if not plan.argv:
        print(plan.snippet)
        return EXIT_OK
    if args.print_only:
        print(plan.shell_command())
        return EXIT_OK
    if plan.executable_path() is None:
        say(f"{plan.executable} is not on PATH, so it was not started. Run this where "
            f"{plan.agent} is installed:")
        print(plan.shell_command())
        return EXIT_NO_EXECUTABLE
    if not plan.cwd_exists():
        say(f"the session's working directory {plan.cwd} does not exist here, so "
            f"{plan.agent} was not started. The command:")
        print(plan.shell_command())
        return EXIT_FAILED
    say(f"running: {plan.shell_command()}")
    sys.stderr.flush()
    try:
        return run_plan(plan)
    except OSError as error:
        say(f"cannot start {plan.executable}: {error.strerror or error}")
        return EXIT_FAILED
