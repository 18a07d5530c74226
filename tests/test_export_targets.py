"""`arbor export -o PATH` by what PATH is: a regular file is replaced whole (one rename, its
permissions kept); a device, a FIFO or a socket is written to in place and never replaced;
a symbolic link is written through; `-` is standard output; a folder is refused.

Device nodes are made with mknod in a temporary folder (never the machine's own /dev), with
/dev/null's numbers, as in the report where `-o /dev/null` left a 0600 regular file where
/dev/null had been. What reaches a device is read back from a pseudo-terminal the test opens
(a pty cannot be opened through a node outside devpts: a link in the folder points to it)."""

from __future__ import annotations

import os
import socket
import stat
import threading
import tty
from pathlib import Path

import pytest

from test_export import FIXTURES, run_cli

SESSION = "demo session"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "arbor.db"
    done = run_cli(["import", "--db", str(path), str(FIXTURES / "pi")])
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def expected(db, tmp_path_factory):
    """The export as it reaches standard output."""
    done = run_cli(["export", "--db", str(db), SESSION], cwd=tmp_path_factory.mktemp("cwd"))
    assert done.returncode == 0 and done.stdout.startswith("# demo session")
    return done.stdout.encode()


def export(db, target, *more, cwd=None):
    return run_cli(["export", "--db", str(db), SESSION, "-o", str(target), *more], cwd=cwd)


def mknod(path: Path, mode: int, device: int) -> Path:
    try:
        os.mknod(path, stat.S_IFCHR | mode, device)
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD (root)")
    return path


def reader(open_it, chunks: list[bytes]) -> threading.Thread:
    """A thread that reads everything from what `open_it()` returns until EOF."""
    def run():
        with open_it() as source:
            while data := source.read(65536) if hasattr(source, "read") else source.recv(65536):
                chunks.append(data)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".arbor-export-")]


def test_a_null_device_node_stays_a_device(db, tmp_path):
    node = mknod(tmp_path / "null", 0o666, os.makedev(1, 3))
    os.chmod(node, 0o666)
    before = os.stat(node)
    done = export(db, node)
    assert done.returncode == 0, done.stderr
    after = os.lstat(node)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert stat.S_IMODE(after.st_mode) == 0o666 and after.st_ino == before.st_ino
    assert f"to {node}" in done.stderr
    assert leftovers(tmp_path) == []


def test_a_character_device_receives_the_export_in_place(db, tmp_path, expected):
    master, slave = os.openpty()
    try:
        tty.setraw(slave)                  # no \n -> \r\n on the way through
        device = os.ttyname(slave)
        node = tmp_path / "terminal"
        node.symlink_to(device)
        before = os.stat(device)
        got = bytearray()

        def drain():
            while len(got) < len(expected):
                got.extend(os.read(master, 65536))
        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        done = export(db, node)
        assert done.returncode == 0, done.stderr
        thread.join(10)
        assert bytes(got) == expected
        after = os.stat(device)
        assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
        assert node.is_symlink() and leftovers(tmp_path) == []
    finally:
        os.close(master)
        os.close(slave)


def test_a_fifo_is_written_to_and_stays_a_fifo(db, tmp_path, expected):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    chunks: list[bytes] = []
    thread = reader(lambda: open(fifo, "rb"), chunks)
    done = export(db, fifo)
    assert done.returncode == 0, done.stderr
    thread.join(10)
    assert b"".join(chunks) == expected
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_a_failing_export_writes_nothing_to_a_fifo(db, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # a reader that does not wait for a writer: it sees data or EOF
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        done = export(db, fifo, "--branch", "no-such-branch")
        assert done.returncode == 1 and "no-such-branch" in done.stderr
        assert "Traceback" not in done.stderr
        assert os.read(fd, 100) == b""        # nothing written (and no writer holds it)
    finally:
        os.close(fd)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_unix_socket_is_connected_to(db, tmp_path, expected):
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    chunks: list[bytes] = []
    thread = reader(lambda: server.accept()[0], chunks)
    try:
        done = export(db, path)
        assert done.returncode == 0, done.stderr
        thread.join(10)
        assert b"".join(chunks) == expected
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()
    # a socket nobody listens on: one sentence, and it is still a socket
    done = export(db, path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"arbor: cannot write to the socket {path}")
    assert len(done.stderr.strip().splitlines()) == 1
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_symbolic_link_is_written_through(db, tmp_path, expected):
    real = tmp_path / "real" / "notes.md"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    done = export(db, link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == expected
    assert leftovers(tmp_path) == [] and leftovers(real.parent) == []
    # a link to a device node: the node is written to, link and node stay what they are
    node = mknod(tmp_path / "null", 0o666, os.makedev(1, 3))
    to_node = tmp_path / "to-null"
    to_node.symlink_to(node)
    assert export(db, to_node).returncode == 0
    assert to_node.is_symlink() and stat.S_ISCHR(os.lstat(node).st_mode)
    # a dangling link: the file it names is made
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "real" / "made.md")
    assert export(db, dangling).returncode == 0
    assert dangling.is_symlink() and (tmp_path / "real" / "made.md").read_bytes() == expected


def test_dash_is_standard_output(db, tmp_path, expected):
    done = export(db, "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.encode() == expected
    assert list(tmp_path.iterdir()) == []        # no file named "-"


def test_a_regular_file_is_replaced_whole_keeping_its_permissions(db, tmp_path, expected):
    target = tmp_path / "out.md"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    before = os.stat(target)
    done = export(db, target)
    assert done.returncode == 0, done.stderr
    after = os.stat(target)
    assert target.read_bytes() == expected
    assert after.st_ino != before.st_ino           # a rename, not a write in place
    assert stat.S_IMODE(after.st_mode) == 0o640
    # a failing export leaves the file as it was, and no temporary file
    target.write_text("kept\n")
    done = export(db, target, "--branch", "no-such-branch")
    assert done.returncode == 1 and target.read_text() == "kept\n"
    assert leftovers(tmp_path) == []


def test_a_new_file_gets_the_usual_permissions(db, tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    target = tmp_path / "new.md"
    assert export(db, target).returncode == 0
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~mask


def test_a_folder_is_refused_in_one_sentence(db, tmp_path):
    done = export(db, tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == f"arbor: {tmp_path} is a folder; give the name of a file to write"
    assert leftovers(tmp_path) == []


def test_root_keeps_another_users_file_theirs(db, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    target = tmp_path / "theirs.md"
    target.write_text("old\n")
    os.chown(target, 4321, 4322)
    assert export(db, target).returncode == 0
    info = os.stat(target)
    assert (info.st_uid, info.st_gid) == (4321, 4322) and target.read_text() != "old\n"


def test_a_file_in_a_folder_without_room_for_a_temporary_file_is_written_in_place(
        tmp_path, monkeypatch):
    """A writable file in a folder this user may not create files in: written as the shell's
    `>` writes it (in place), not refused."""
    import tempfile

    from tui.commands import output_file

    target = tmp_path / "shared.md"
    target.write_text("a much longer old text than the new one\n")
    inode = os.stat(target).st_ino

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "mkstemp", refused)
    assert output_file.write(target, lambda out: out.write("new\n")) == 4
    assert target.read_text() == "new\n" and os.stat(target).st_ino == inode
    # a new file there cannot be made at all: one sentence
    with pytest.raises(output_file.ArborError, match="cannot write .*: Permission denied"):
        output_file.write(tmp_path / "new.md", lambda out: out.write("x"))
