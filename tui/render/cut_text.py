"""Text cut to a width with an ellipsis: at its end (names), or in its middle (paths,
whose file name matters most). For the app and the command line alike: Rich only, no
Textual."""

from __future__ import annotations

from rich.text import Text


def cut_end(text: Text, width: int) -> Text:
    """`text` in at most `width` cells, an ellipsis at the end if it had to be cut."""
    if text.cell_len <= width:
        return text
    cut = text.copy()
    cut.truncate(max(1, width), overflow="ellipsis")
    return cut


def cut_middle(text: Text, width: int, style: str = "") -> Text:
    """`text` (a path) in at most `width` cells: whole, or its start and its end joined by
    an ellipsis, cut where folder names end, the end keeping the file name when it fits."""
    if text.cell_len <= width:
        return text
    plain = text.plain
    keep = width - 1
    name = len(plain) - plain.rfind("/") - 1   # the last component, without its slash
    if name + 1 <= keep - 3:      # "/arbor.db" and at least three cells of the start
        tail = max(name + 1, keep // 2)
    elif name <= keep:            # "arbor.db", and what start fits
        tail = name
    else:
        tail = keep // 2
    head = keep - tail
    # cut at folder boundaries where there is one: "~/.local/…/team/arbor.db"
    slash = plain.rfind("/", 0, head)
    if slash >= 1 and head - (slash + 1) <= head // 2:
        head = slash + 1
        if tail < name + 1:   # a long file name gets what the start gave back
            tail = min(name + 1, keep - head)
    slash = plain.find("/", len(plain) - tail)
    if 0 <= slash and len(plain) - slash >= name + 1:
        tail = len(plain) - slash
    while True:
        cut = Text(end="", no_wrap=True)
        cut.append_text(text[:head])
        cut.append("…", style)
        cut.append_text(text[len(plain) - tail:] if tail else Text())
        if cut.cell_len <= width or head + tail == 0:
            return cut
        if head >= tail:   # wide characters: give back a cell from the longer side
            head -= 1
        else:
            tail -= 1
