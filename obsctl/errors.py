"""The one exception family of obsctl.

Services raise these; the web layer maps them to HTTP status codes and the CLI to exit
codes, each in exactly one place. Services never pick a status or an exit code themselves.
"""

from __future__ import annotations


class ObsctlError(Exception):
    """Base class: a problem the user can act on, described in one sentence."""

    # Set by the stores' error translation: the database failed, which may have undone the
    # whole transaction (the SQLite writer then retries the writes grouped with it one by one).
    database_fault = False

    def __init__(self, message: str, details: list[dict] | None = None):
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(ObsctlError):
    """The input is malformed or fails validation (HTTP 400, exit 1)."""


class NotFound(ObsctlError):
    """The thing asked for does not exist (HTTP 404, exit 1)."""


class Conflict(ObsctlError):
    """The request clashes with the current state (HTTP 409, exit 1)."""


class PayloadTooLarge(ObsctlError):
    """A batch or body exceeds the configured limit (HTTP 413, exit 1)."""


class ServiceUnavailable(ObsctlError):
    """A dependency (the database, a lock) is not available right now (HTTP 503, exit 1).

    `retry_after` is the Retry-After the HTTP answer suggests, in seconds."""

    def __init__(self, message: str, details: list[dict] | None = None, *, retry_after: int = 1):
        super().__init__(message, details)
        self.retry_after = retry_after


class QueryTimeout(ObsctlError):
    """A read stopped at its time budget: it asked too much, or the server was too busy to
    answer it in time (HTTP 504, exit 1). Unlike a 503, the server did the work until then,
    so the client does not repeat it on its own."""


class StorageFull(ObsctlError):
    """The disk holding the database is full; nothing of the write was stored (HTTP 507, exit 1)."""


class StorageDamaged(ObsctlError):
    """The database file is damaged; it must be restored from a backup (HTTP 500, exit 1)."""


class StorageError(ObsctlError):
    """Any other database failure: a bug or an operator's problem, not the caller's (HTTP 500
    without the details, exit 1)."""


class Unauthorized(ObsctlError):
    """The obsctl server refused the request's API key, or asked for one that was not sent
    (HTTP 401/403 answers in remote mode, exit 1). Raised by the client only."""
