"""Quoting for a POSIX shell that never puts a control character in the command.

`shlex.quote` keeps an argument's characters as they are, inside single quotes: a folder
name holding ESC (a pasted coloured prompt, a hostile log) would reach the terminal when
the command is printed, and the shell's line editor when it is pasted. An argument with
such characters is written `$'...'` (bash, zsh, ksh, and dash from 0.5.12) with each of
them as an escape, so the command shown holds only printable characters and runs the same.
"""

from __future__ import annotations

import shlex

from .visible_text import UNSAFE


def quote(argument: str) -> str:
    if not UNSAFE.search(argument) and "\t" not in argument and "\n" not in argument:
        return shlex.quote(argument)
    out = []
    for char in argument:
        code = ord(char)
        if char in "\\'":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif UNSAFE.match(char):
            if 0xD800 <= code <= 0xDFFF:   # a lone surrogate cannot be written: U+FFFD
                char = "\ufffd"
            # its UTF-8 bytes, as the shell's `\\xHH` gives bytes whatever the locale
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"


def join(arguments) -> str:
    return " ".join(quote(argument) for argument in arguments)
