"""Errors that `core` raises for foreseeable faults; each has a sentence a user can read."""


class ArborError(Exception):
    """Base of every error arbor reports to a user instead of a traceback."""


class StoreError(ArborError):
    """The store file cannot be used."""


class StoreNotFound(StoreError):
    pass


class StoreUnavailable(StoreError):
    """The file or its folder cannot be opened or created (permissions, missing folder)."""


class StoreUnreachable(StoreUnavailable):
    """The store's server does not answer now (PostgreSQL stopped or crashed, the network
    cut, a connection that hangs): nothing of the operation was written, and the same
    operation may work once the server is back. Its message names the server, in one
    sentence. `saved_unknown`: the connection broke while a transaction's COMMIT was on
    its way, and the server may have committed it before it went."""

    saved_unknown = False


class StoreDamaged(StoreError):
    """The file is not a SQLite database, or is not an arbor store, or fails its checks."""


class StoreBusy(StoreError):
    """Another program kept the store's write lock longer than arbor waits; nothing changed."""


class StoreOutdated(StoreError):
    """Opened for reading only, the store turned out to be an older arbor's: it has to be
    updated (which writes) before this arbor can read it."""


class StoreTooNew(StoreError):
    """The store was written by a newer arbor; it is left untouched."""


class NestedTooDeeply(ArborError, ValueError):
    """Data with lists and objects nested deeper than JSON is written here (`fastjson.MAX_DEPTH`)."""


class NotFound(ArborError, LookupError):
    """A session, branch, entry or checkpoint that does not exist."""


class AmbiguousId(ArborError):
    """A session id prefix that matches more than one session."""


class ReplayError(ArborError):
    """A branch cannot be replayed as recorded (for example a compaction keeps an entry off its path)."""


class OutsideSessionDir(ArborError):
    """A delete was asked for a session that does not live in the given session dir."""
