"""How the suite runs in worker processes (pytest-xdist; a plugin of tests/conftest.py).

pyproject's addopts give `-n`: the tests run in that many worker processes, more than the
two cores of the machines the suite runs on, since many tests wait (on an `arbor`
subprocess, a PostgreSQL server, a terminal in tmux, Textual's idle checks) rather than
compute. `-n0` runs everything in this one process (pdb, a test's output in order);
`-p no:xdist` too (its `-n` is then taken and ignored, `pytest_addoption` below).

What a worker needs of its own, it has: its tmp_path; its PostgreSQL servers (the
session fixtures of conftest run once per worker, each server in a temporary folder of its
own, the TCP one on a port outside the ephemeral range: pg_server._free_port); a tmux
server per Terminal (tests/terminal.py); the fake model server on a port the kernel
gives; COLUMNS and LINES as they are here (`_size_as_the_controllers`).

Tests are handed out one at a time to whichever worker is free, except that all the tests
of a module go to one worker when they share a module-scoped fixture (built once, not once
per worker) or compare snapshots (syrupy then sees all of a module's snapshots in one
process, so that its check that none is left unused holds: see the end of this file). A
fixture that is cheap to build and whose tests are long is better session-scoped (built
once per worker), so that those tests spread. The workers, which collect, write the names
of those modules to a file; the controller's scheduler (`ModuleGroups`) reads it. (xdist's
own `--dist loadgroup` would add "@group" to those tests' ids, which then could not be
pasted onto the command line to run them again.)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_SIZE_VARIABLES = ("COLUMNS", "LINES")


def pytest_addoption(parser, pluginmanager):
    """With xdist switched off (`-p no:xdist`), addopts' `-n` is taken and ignored, so that
    the suite runs in this process instead of stopping at an unknown option."""
    if not pluginmanager.has_plugin("xdist"):
        parser.getgroup("xdist")._addoption(      # (xdist's name: a lower-case short option)
            "-n", dest="numprocesses", default=None,
            help="ignored: pytest-xdist is switched off (-p no:xdist)")


def _worker_input(config) -> dict | None:
    return getattr(config, "workerinput", None)


# ---------------------------------------------------------------- the controller
@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Where the worker names its one-worker modules, and COLUMNS and LINES as they are
    in this process."""
    config = node.config
    if not hasattr(config, "_arbor_module_groups"):
        config._arbor_module_groups = Path(tempfile.mkdtemp(prefix="arbor-xdist-"))
    node.workerinput["arbor_module_groups"] = str(
        config._arbor_module_groups / f"{node.gateway.id}.txt")
    node.workerinput["arbor_size_environment"] = {
        name: os.environ.get(name) for name in _SIZE_VARIABLES}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """For `-n` alone (`--dist load`): xdist's loadscope scheduling, whose scopes are single
    tests, and whole modules for the one-worker modules."""
    if config.getvalue("dist") != "load" or not hasattr(config, "_arbor_module_groups"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    folder = config._arbor_module_groups

    class ModuleGroups(LoadScopeScheduling):
        grouped: set[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.grouped is None:       # first asked once every worker has collected
                self.grouped = {line for path in folder.glob("*.txt")
                                for line in path.read_text().splitlines()}
            module = nodeid.split("::", 1)[0]
            return module if module in self.grouped else nodeid

    config._arbor_whole_modules = True
    return ModuleGroups(config, log)


def pytest_unconfigure(config):
    folder = getattr(config, "_arbor_module_groups", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- a worker
def pytest_configure(config):
    worker = _worker_input(config)
    if worker is not None:
        _size_as_the_controllers(worker)


def _size_as_the_controllers(worker: dict) -> None:
    """COLUMNS and LINES as a test run in one process sees them. Importing readline (the
    controller's pytest does) sets them, to 80 and 24 where there is no terminal, in the C
    environment, which a worker inherits, and not in `os.environ`: in a worker, a test
    passing `os.environ` to `arbor` would give it an 80-column terminal (its messages
    wrapped) that the same test run alone does not."""
    for name, value in worker.get("arbor_size_environment", {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _one_worker_module(item) -> bool:
    if "snapshot" in item.fixturenames:
        return True
    return any(definition.scope in ("module", "class", "package")
               for definitions in item._fixtureinfo.name2fixturedefs.values()
               for definition in definitions)


def pytest_collection_modifyitems(config, items):
    worker = _worker_input(config)
    if worker is None or "arbor_module_groups" not in worker:
        return
    modules = sorted({item.nodeid.split("::", 1)[0] for item in items if _one_worker_module(item)})
    Path(worker["arbor_module_groups"]).write_text("\n".join(modules))


# ---------------------------------------------------------------- unused snapshots
# Run in one process, syrupy fails the run when a snapshot file is used by no test; under
# xdist it leaves that check out. Each worker knows it for the modules it ran (all the
# snapshot tests of a module run in one worker): it tells the controller, which fails the
# run as syrupy would, or, with --snapshot-update, deletes them as syrupy would.
_unused_snapshots: list[str] = []
# the test modules this process ran tests of (a worker collects every test, runs some):
# only their snapshot folders (tests/__snapshots__/<module>/) are this worker's to judge
_modules_run: set[str] = set()


def pytest_runtest_setup(item):
    _modules_run.add(Path(str(item.fspath)).stem)


@pytest.hookimpl(trylast=True)    # after syrupy's own, which makes its report
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if _worker_input(config) is not None:
        syrupy = getattr(config, "_syrupy", None)
        report = getattr(syrupy, "report", None)
        if report is None or not report.num_unused:
            return
        unused = sorted(
            f"{os.path.relpath(collection.location, config.rootpath)}: {snapshot.name}"
            for collection in report.unused for snapshot in collection
            if Path(collection.location).parent.name in _modules_run)
        if syrupy.update_snapshots:
            # (deleting is left to a run in one process, `-n0 --snapshot-update`: a worker
            # cannot tell another worker's snapshots from unused ones)
            if unused:
                config.workeroutput["unused_snapshots"] = unused
            return
        config.workeroutput["unused_snapshots"] = unused
    elif _unused_snapshots and not config.option.warn_unused_snapshots \
            and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    config = node.config
    # (other --dist modes may split a module's snapshot tests: no worker then knows)
    if getattr(config, "_arbor_whole_modules", False) or config.getvalue("dist") in ("loadfile",
                                                                                     "loadscope"):
        _unused_snapshots.extend(getattr(node, "workeroutput", {}).get("unused_snapshots", []))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _unused_snapshots:
        terminalreporter.write_sep("-", "snapshots no test uses")
        for line in sorted(_unused_snapshots):
            terminalreporter.write_line(line)
        terminalreporter.write_line("Re-run pytest with --snapshot-update to delete unused snapshots.")
