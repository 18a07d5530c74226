"""A Claude Code session's file named by its uuid is imported under that uuid (the
importer tells a uuid without a regular expression: `importer._is_uuid`, exactly what
`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$` matches)."""

from __future__ import annotations

import re

import pytest

from core.agents.claude_code.importer import _is_uuid

UUID = "d9107ec8-d676-45dc-bf39-64c40ff8116d"
PATTERN = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@pytest.mark.parametrize("name", [
    UUID, UUID.upper(), UUID + "\n", UUID + "\n\n", UUID + " ", " " + UUID, UUID[:-1],
    UUID + "0", UUID.replace("-", "", 1) + "0", UUID.replace("d", "g", 1),
    UUID.replace("-", "_"), "", "agent-ae72423398c4cfc30", "٣" + UUID[1:], "0" * 36,
    "-" * 36, UUID[:8] + "-" + UUID[9:13] + "x" + UUID[14:]])
def test_a_uuid_is_told_as_the_pattern_tells_it(name):
    assert _is_uuid(name) == bool(PATTERN.match(name))
