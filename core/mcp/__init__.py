"""`arbor mcp`: agents search and steer their own history through the Model Context Protocol.

The server (server.py) is built on the official Python SDK, the optional extra `arbor[mcp]`;
nothing outside this package imports it, and only server.py, read_tools.py, write_tools.py and
resources.py import `mcp` themselves. What the tools answer is made by modules that know
nothing of the protocol: shapes.py (records as compact JSON, untrusted text escaped),
queries.py (search, messages, sessions), whoami.py (which session the calling agent is in).
"""

from __future__ import annotations

INSTALL_HINT = "arbor mcp needs the MCP SDK: install it with  pip install 'arbor[mcp]'"


def sdk_available() -> bool:
    """Whether the MCP SDK (`mcp` 2.x) can be imported, without importing it."""
    from importlib.util import find_spec

    try:
        return find_spec("mcp") is not None and find_spec("mcp.server.mcpserver") is not None
    except (ImportError, ValueError):
        return False
