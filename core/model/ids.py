import os


def generate_id() -> str:
    """A random 8-character hex id, as the Go session package makes them (what
    `secrets.token_hex(4)` gives, without importing `secrets`: it loads random, hmac and
    base64, ~1.5 ms of an import's start)."""
    return os.urandom(4).hex()
