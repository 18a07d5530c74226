"""The commands arbor prints and copies (`arbor resume --print`, `o`'s clipboard) hold no
control character, and run the same in a shell."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from core.agents.resume import ResumePlan
from core.util import shell_words

HOSTILE = [
    "plain",
    "with space and 'quote'",
    "FAILED \x1b[1;31mtest_x\x1b[0m",
    "osc52 \x1b]52;c;cm0gLXJmIH4=\x07 end",
    "line\nbreak\tand tab",
    "back\\slash 'single' \"double\" $HOME `date`",
    "bidi \u202eevil\u202c and \u2066isolate\u2069",
    "c1 \x9b31m csi",
    "café ünïcode 日本",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_quoted_argument_holds_only_printable_characters(text):
    quoted = shell_words.quote(text)
    assert quoted.isprintable(), repr(quoted)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("text", HOSTILE)
def test_bash_reads_back_exactly_the_argument(text):
    done = subprocess.run(["bash", "-c", "printf %s " + shell_words.quote(text)],
                          capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8", "surrogateescape") == text


def test_plain_arguments_are_quoted_as_shlex_does():
    import shlex

    for text in ("plain", "with space and 'quote'", "café"):
        assert shell_words.quote(text) == shlex.quote(text)


def test_the_resume_command_of_a_hostile_folder_is_printable_and_goes_there(tmp_path):
    folder = tmp_path / "proj \x1b[31mred\x1b[0m \u202eevil"
    folder.mkdir()
    plan = ResumePlan(agent="pi", argv=["printf", "%s", "id \x1b]52;c;eA==\x07"], cwd=str(folder))
    command = plan.shell_command()
    assert command.isprintable(), repr(command)
    if shutil.which("bash"):
        done = subprocess.run(["bash", "-c", command + " && printf '|%s' \"$PWD\""],
                              capture_output=True)
        out = done.stdout.decode("utf-8", "surrogateescape")
        assert out == "id \x1b]52;c;eA==\x07|" + str(folder)
