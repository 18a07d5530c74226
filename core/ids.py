import secrets


def generate_id() -> str:
    """A random 8-character hex id, as the Go session package makes them."""
    return secrets.token_hex(4)
