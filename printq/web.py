"""The HTTP API: ``GET /api/prints/{metric}/{comparison}/{value}`` answers with a bare JSON number.

``create_app(settings)`` builds a fresh Flask app around one ``Dataset``; there is no module-level
app. Every error body is ``{"Message": "..."}``: query problems (400), no valid records (404), no
good load of the data file yet (503), unknown routes (404), wrong methods (405) and crashes (500).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from flask import Flask, Response
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from printq.dataset import Dataset
from printq.errors import DataUnavailable, InvalidQuery, NoData, PrintqError
from printq.queries import format_number, parse_query, run_query
from printq.settings import Settings

log = logging.getLogger("printq")

# The one place where errors become HTTP status codes.
STATUS_CODES: dict[type[PrintqError], int] = {InvalidQuery: 400, NoData: 404, DataUnavailable: 503}

ROUTE_HINT = ("Queries look like /api/prints/{metric}/{comparison}/{value}, "
              "e.g. /api/prints/livePercent/greater/50.")


def _json(body: object, status: int = 200) -> Response:
    return Response(json.dumps(body), status=status, mimetype="application/json")


def _utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def message(text: str, status: int) -> Response:
    """The one way an error body is built."""
    return _json({"Message": text}, status)


def create_app(settings: Settings, dataset: Dataset | None = None) -> Flask:
    """A Flask app answering queries over ``settings.data_path`` (or the given ``dataset``)."""
    app = Flask("printq")
    if dataset is None:  # load errors go to the log; the last good data keeps answering
        dataset = Dataset(settings.data_path, settings.cache_dir, on_error=log.error,
                          max_bytes=settings.max_data_bytes)
    app.extensions["printq.dataset"] = dataset

    @app.get("/api/prints/<metric>/<comparison>/<value>")
    def query(metric: str, comparison: str, value: str) -> Response:
        parsed = parse_query(metric, comparison, value)
        return Response(format_number(run_query(dataset.snapshot(), parsed)), mimetype="application/json")

    @app.get("/health")
    def health() -> Response:
        """200 with what is loaded, or 503 when the data file has never loaded."""
        try:
            snapshot = dataset.snapshot()
        except DataUnavailable as exc:
            return _json({"status": "unavailable", "Message": exc.message}, 503)
        return _json({
            "status": "ok",
            "data": str(snapshot.path),
            "records": snapshot.records,
            "loaded_at": _utc(snapshot.loaded_at),
            "last_error": dataset.error,  # a broken rewrite: still answering from the last good load
        })

    @app.errorhandler(PrintqError)
    def printq_error(exc: PrintqError) -> Response:
        status = next((code for kind, code in STATUS_CODES.items() if isinstance(exc, kind)), 500)
        return message(exc.message, status)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        texts = {404: f"No such route. {ROUTE_HINT}",
                 405: "Method not allowed: this API is read-only, use GET."}
        code = exc.code or 500
        response = message(texts.get(code, exc.description or exc.name), code)
        if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
            response.headers["Allow"] = ", ".join(sorted(exc.valid_methods))
        return response

    @app.errorhandler(Exception)
    def crash(exc: Exception) -> Response:
        log.exception("unhandled error")
        return message("Internal server error.", 500)

    return app
