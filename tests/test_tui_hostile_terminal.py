"""Issue 27, part 1, in a real terminal: the walk of tests/hostile_names.py through every
pane, screen and dialog, typed into the real `arbor` in tmux, with every byte the app writes
to the terminal recorded (`pipe-pane -o`).

The walk runs twice, on the hostile store and on the same store with plain names. On both,
the app never exits and each step shows what it should; on the hostile store the names are
drawn literally (`SESS␛[1;31m[/x]`). In the bytes the terminal got, each of the data's
sequences (its OSC 52 clipboard write, its OSC 8 link, `\\x1b[1;31m`, `\\x1b[2J`, the bidi
override) occurs exactly as often as in the plain run (where the app alone wrote), which
is never; and OSC 52, OSC 8 and `\\x1b[2J` of any kind as often as in the plain run.
"""

from __future__ import annotations

import time
from pathlib import Path

from hostile_names import (STEPS, TMUX_KEYS, build_hostile_names_store, expected, hostile,
                           on_screen, plain, sequences_in)
from terminal import Terminal, arbor_command, tmux_or_skip

ANY_OF_A_KIND = {"any OSC 52": b"\x1b]52;", "any OSC 8": b"\x1b]8;", "any CSI 2J": b"\x1b[2J"}


def _tmux_keys(keys: tuple[str, ...]) -> list[tuple[str, ...]]:
    """send-keys argument lists: typed text goes literally (-l), keys by tmux's names."""
    out = []
    for key in keys:
        if key.startswith("type:"):
            out.append(("-l", key[5:]))
        else:
            out.append((TMUX_KEYS.get(key, key),))
    return out


def walk_in_tmux(path: Path, tmp_path: Path, name) -> tuple[bytes, list[str]]:
    """The walk; what the terminal got, and what went wrong (a line a fault)."""
    raw = tmp_path / f"{path.stem}.terminal"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home"), "PATH": str(bin_dir),   # no agent on PATH
           **{key: str(tmp_path / key.lower())
              for key in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR")}}
    # the app starts on Enter, once everything it writes is being recorded; the shell says
    # how it ended (tmux's own pane_dead_status is now and then empty)
    argv = ["/bin/sh", "-c", 'read _ && "$@"; echo "arbor ended: $?"', "sh", *arbor_command(),
            "--db", str(path)]
    faults: list[str] = []
    with Terminal(argv, env=env, config_dir=tmp_path) as term:
        term._tmux("pipe-pane", "-o", "-t", term.target, f"cat >> '{raw}'")
        term.keys("Enter")
        for step, keys, shows in STEPS:
            for args in _tmux_keys(keys):
                term._tmux("send-keys", "-t", term.target, *args)
            wants = expected(shows, name)
            try:
                term.wait_for(lambda screen: all(on_screen(want, screen) for want in wants),
                              timeout=60)
            except AssertionError as error:
                faults.append(f"{step}: {wants}: {error}")
                break
        term.keys("q")        # and it quits as it should
        deadline = time.monotonic() + 20
        while "arbor ended: " not in term.history() and time.monotonic() < deadline:
            time.sleep(0.05)
        if "arbor ended: 0" not in term.history():
            faults.append(f"q: the app did not end with 0:\n{term.history()}")
    return raw.read_bytes(), faults


def test_hostile_names_in_a_real_terminal(tmp_path):
    tmux_or_skip()
    clean_raw, clean_faults = walk_in_tmux(
        build_hostile_names_store(tmp_path / "plain.db", name=plain), tmp_path, plain)
    assert not clean_faults, "the walk itself is wrong:\n" + "\n\n".join(clean_faults)
    assert len(clean_raw) > 100_000        # (the recording has the walk)
    raw, faults = walk_in_tmux(build_hostile_names_store(tmp_path / "hostile.db"), tmp_path, hostile)
    # the data's own sequences, in neither run; sequences of these kinds only as often as
    # the app writes them by itself
    leaks = {kind: count for kind, count in sequences_in(raw).items() if count}
    leaks |= {kind: (raw.count(sequence), clean_raw.count(sequence))
              for kind, sequence in ANY_OF_A_KIND.items()
              if raw.count(sequence) != clean_raw.count(sequence)}
    assert not any(sequences_in(clean_raw).values())
    assert not faults and not leaks, f"the terminal got {leaks}\n" + "\n\n".join(faults)
