"""SHA-1 and BLAKE2b without `hashlib`: importing it loads OpenSSL (~3 ms), most of what
remained of the start-up of an import of a few appended lines (issue 11) after the code
itself. CPython's own implementations (`_sha1`, `_blake2`, which hashlib falls back to)
give the same digests; hashlib stands in where an interpreter lacks them."""

try:
    from _sha1 import sha1
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import sha1

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

__all__ = ["blake2b", "sha1"]
