"""The one place where errors become HTTP responses: `{"error": "..."}` for every 4xx/5xx."""

from __future__ import annotations

from flask import Flask
from werkzeug.exceptions import HTTPException

from obsctl.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    ObsctlError,
    PayloadTooLarge,
    QueryTimeout,
    ServiceUnavailable,
    StorageDamaged,
    StorageError,
    StorageFull,
)
from obsctl.web.http import json_response

STATUS_BY_ERROR = {
    InvalidInput: 400,
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    ServiceUnavailable: 503,
    QueryTimeout: 504,
    StorageFull: 507,
}

_HTTP_MESSAGES = {
    404: "not found: no such route",
    405: "method not allowed on this route",
    413: "request body too large",
    415: "unsupported media type",
    429: "rate limit exceeded; retry after the time in Retry-After",
}


def body_too_large_message(limit: int | None) -> str:
    return f"request body too large; the limit is {limit} bytes"


def error_body(message: str, details: list | None = None) -> dict:
    body: dict = {"error": message}
    if details:
        body["details"] = details
    return body


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ObsctlError)
    def _obsctl_error(exc: ObsctlError):
        if isinstance(exc, StorageDamaged):
            app.logger.error("database error: %s (run `obsctl db info` to check the file)", exc.message)
            return json_response(error_body(
                "the database file is damaged (SQLite: database disk image is malformed); "
                "the operator must restore it"), 500)
        if isinstance(exc, StorageError):  # the details are for the operator, not the client
            app.logger.error("%s", exc.message, exc_info=exc)
            return json_response(error_body("internal server error"), 500)
        status = next((s for cls, s in STATUS_BY_ERROR.items() if isinstance(exc, cls)), 400)
        headers = {"Retry-After": str(getattr(exc, "retry_after", 1))} if status == 503 else None
        if status == 507:
            app.logger.warning("write refused: %s", exc.message)
        return json_response(error_body(exc.message, exc.details), status, headers)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        status = exc.code or 500
        message = _HTTP_MESSAGES.get(status) or (exc.description or exc.name).strip()
        if status == 413:
            message = body_too_large_message(app.config.get("MAX_CONTENT_LENGTH"))
        response = json_response(error_body(message), status)
        allowed = getattr(exc, "valid_methods", None)  # a MethodNotAllowed's
        if status == 405 and allowed:
            response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        app.logger.exception("unhandled error")
        return json_response(error_body("internal server error"), 500)
