"""A throw-away PostgreSQL server for the tests and benchmarks: initdb and pg_ctl on a
temporary folder, listening only on a Unix socket in it (no TCP port), with durability
off (the data lives as long as the test session). `tcp=True`: listening on 127.0.0.1 at a
free port instead, as a team's server is reached; `crash()` stops it as a crash or a cut
network looks to a client (`pg_ctl -m immediate`), `start_again()` brings it back on the
same folder and port.

PostgreSQL refuses to run as root; as root (tests and CI run so), the server runs as the
`postgres` user through `runuser`, and its folder is made theirs.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote

DATABASE = "arbor_test"


def find_binaries() -> tuple[Path | None, str]:
    """The folder with initdb and pg_ctl (ARBOR_PG_BIN, PostgreSQL 15's, any other
    version's, or the PATH), or None and why not."""
    candidates = []
    if os.environ.get("ARBOR_PG_BIN"):
        candidates.append(os.environ["ARBOR_PG_BIN"])
    candidates.append("/usr/lib/postgresql/15/bin")
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(os.path.dirname(on_path))
    for folder in candidates:
        if all(os.access(os.path.join(folder, name), os.X_OK) for name in ("initdb", "pg_ctl")):
            if os.geteuid() == 0 and not _has_user("postgres"):
                return None, ("running as root (PostgreSQL refuses to) and there is no"
                              " `postgres` user to run the server as")
            return Path(folder), ""
    return None, ("no PostgreSQL server binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin,"
                  " ARBOR_PG_BIN or the PATH")


def _free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on now (the server takes it a moment later),
    below the kernel's range of ephemeral ports: the port of a server a test has crashed
    stays free until `start_again()`, and no `bind(port 0)` nor outgoing connection of
    another test (tests run in parallel processes) can be given it meanwhile."""
    import random
    import socket

    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    candidates = list(range(max(1024, low - 12_000), low))
    random.SystemRandom().shuffle(candidates)    # (whatever a test seeded random with)
    for port in candidates[:200]:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


class PostgresServer:
    """Start with `start()`, stop with `stop()`; `url(schema)` names a store in it."""

    def __init__(self, binaries: Path, *, tcp: bool = False):
        self.binaries = binaries
        self.port = _free_port() if tcp else None
        self.root = Path(tempfile.mkdtemp(prefix="arbor-pg-"))
        self.data = self.root / "data"
        self.socket = self.root / "socket"
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
        self.started = False

    def _run(self, *args: str, timeout: float = 120) -> None:
        result = subprocess.run([*self._as, *args], capture_output=True, text=True,
                                timeout=timeout, cwd=self.root)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:1])} failed ({result.returncode}): "
                               f"{result.stderr.strip() or result.stdout.strip()}")

    def start(self) -> "PostgresServer":
        self.socket.mkdir()
        if self._as:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.socket, "postgres", "postgres")
        os.chmod(self.root, 0o755)
        self._run(str(self.binaries / "initdb"), "-D", str(self.data), "-U", "postgres",
                  "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
        self._start_server()
        self._watch()
        import psycopg

        with psycopg.connect(self.url_of("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        return self

    def _start_server(self) -> None:
        listen = "''" if self.port is None else f"127.0.0.1 -p {self.port}"
        # (a server that is crashed on purpose keeps what it said was committed: commits
        # wait for their log to reach the OS, which outlives the server)
        commits = "off" if self.port is None else "on"
        options = (f"-k {self.socket} -c listen_addresses={listen} -c fsync=off"
                   f" -c synchronous_commit={commits} -c full_page_writes=off"
                   " -c max_connections=200 -c shared_buffers=128MB")
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                  "-o", options, "-w", "-t", "60", "start")
        self.started = True

    def crash(self) -> None:
        """Stop at once, as a crash looks: every connection cut, no goodbye to clients."""
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                  "-w", "stop", timeout=60)
        self.started = False

    def start_again(self) -> None:
        """Start after `crash()`: the same data folder, socket and port (it recovers)."""
        self._start_server()

    def restart(self) -> None:
        """Stop the server (its connections end) and start it again, as an administrator's
        restart does; pg_ctl keeps the options it was started with."""
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                  "-m", "fast", "-w", "-t", "60", "restart")

    def _watch(self) -> None:
        """A watchdog that stops the server and removes its folder when this process ends
        without `stop()` (a test run killed by a signal or a timeout): no server is left
        running on a shared machine."""
        import shlex

        stop = " ".join(shlex.quote(part) for part in [
            *self._as, str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
            "-w", "stop"])
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 2; done; "
                  f"{stop} >/dev/null 2>&1; rm -rf {shlex.quote(str(self.root))}")
        self._watchdog = subprocess.Popen(["sh", "-c", script], start_new_session=True,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)

    def url_of(self, database: str = DATABASE, schema: str | None = None) -> str:
        if self.port is not None:
            url = f"postgresql://postgres@127.0.0.1:{self.port}/{database}?sslmode=disable"
        else:
            url = f"postgresql://postgres@/{database}?host={quote(str(self.socket), safe='')}"
        if schema:
            url += "&options=" + quote(f"-csearch_path={schema}", safe="")
        return url

    def new_store_url(self, prefix: str = "t") -> str:
        """A URL naming a new, empty schema of the test database: a store of its own."""
        import psycopg

        schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url_of(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return self.url_of(schema=schema)

    def stop(self) -> None:
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()
        if self.started:
            try:
                self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                          "-w", "stop", timeout=60)
            finally:
                self.started = False
        # The folder holds the files of every store (schema) the tests made, thousands of
        # them after a test session: removing them took 2 to 18 s at the end of each xdist
        # worker. A process of its own removes it, and the session ends meanwhile.
        subprocess.Popen(["rm", "-rf", "--", str(self.root)], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)


class BlackHole:
    """A TCP port that takes connections and never says a word (a server hung, a firewall
    that drops): the kernel completes the handshake (the listen backlog), nobody answers.
    As a context manager: listening inside, gone after."""

    def __init__(self, port: int):
        import socket

        self.port = port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def __enter__(self) -> "BlackHole":
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(64)
        return self

    def __exit__(self, *exc) -> None:
        self.sock.close()
