"""`obsctl --url URL ingest --format otlp-json FILE`: OTLP JSON files (collector file-exporter
lines, or one large document) sent to `POST /v1/traces`, with the same summary, rejections
(located in the file) and exit code as on a database, and nothing stored twice."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from tests.obsctl.remote.conftest import _invoke
from tests.otlp_support import request, span


def _trace(prefix: str, n: int) -> str:
    """A trace id of its own per file and trace: each test's spans are new to the server."""
    return hashlib.sha256(f"{prefix}/{n}".encode()).hexdigest()[:32]


def _lines(tmp_path, prefix: str):
    """Three export requests on lines, one bad span, one line that is no request, one not JSON."""
    first = request(span("00000000000000a1", trace=_trace(prefix, 1), attrs={"session.id": f"{prefix}-1",
                                                                   "gen_ai.request.model": "m",
                                                                   "gen_ai.usage.input_tokens": 9}))
    second = request(span("00000000000000b1", trace=_trace(prefix, 1), parent="00000000000000a1"),
                     span("00000000000000c1", trace=_trace(prefix, 2),
                          attrs={"session.id": f"{prefix}-2", "gen_ai.usage.output_tokens": -2}),
                     span("00000000000000d1", trace=_trace(prefix, 2),
                          attrs={"session.id": f"{prefix}-2", "score": 0.5}))
    path = tmp_path / f"{prefix}.jsonl"
    path.write_bytes(orjson.dumps(first) + b"\n\n" + orjson.dumps(second) + b'\n{"spans": []}\n{oops\n')
    return str(path)


def _document(tmp_path, prefix: str):
    """One pretty-printed document of three resourceSpans, the second of them malformed."""
    document = request(span("00000000000000e1", trace=_trace(prefix, 3),
                            attrs={"session.id": f"{prefix}-doc", "ratio": 1.25, "big": 1.5e3}))
    document["resourceSpans"].append({"scopeSpans": 7})
    document["resourceSpans"].append(request(span("00000000000000f1", trace="0" * 32))["resourceSpans"][0])
    path = tmp_path / f"{prefix}.json"
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    return str(path)


@pytest.mark.parametrize("make", [_lines, _document], ids=["json-lines", "document"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_otlp_files_ingest_as_on_a_database(remote, tmp_path, make, as_json):
    prefix = f"otlp-{make.__name__[1:]}-{as_json}"
    source = make(tmp_path, prefix)
    flags = ("--json",) if as_json else ()
    here = _invoke(["--db", str(tmp_path / "fresh.db"), "ingest", "-f", "otlp-json", source, *flags], None, None)
    there = remote.remote("ingest", "-f", "otlp-json", source, *flags)
    assert (there.exit_code, there.stdout, there.stderr) == (here.exit_code, here.stdout, here.stderr)
    assert there.exit_code == 1 and "rejected" in there.stderr

    again = remote.remote("ingest", "-f", "otlp-json", source, "--json")
    counts = orjson.loads(again.stdout)
    assert counts["stored"] == 0 and counts["duplicates"] == counts["events"] > 0


def test_what_the_server_stored_is_what_a_database_stores(remote, tmp_path):
    source = _lines(tmp_path, "otlp-same")
    fresh = str(tmp_path / "fresh.db")
    _invoke(["--db", fresh, "ingest", "-f", "otlp-json", source], None, None)
    assert remote.remote("ingest", "-f", "otlp-json", source).exit_code == 1
    for sid in ("otlp-same-1", "otlp-same-2"):
        local = orjson.loads(_invoke(["--db", fresh, "sessions", "show", sid, "--json"], None, None).stdout)
        served = orjson.loads(remote.local("sessions", "show", sid, "--json").stdout)
        assert {k: local[k] for k in ("event_count", "total_tokens_in", "total_tokens_out", "status")} == \
               {k: served[k] for k in ("event_count", "total_tokens_in", "total_tokens_out", "status")}


def test_strict_is_refused_against_a_server(remote, tmp_path):
    result = remote.remote("ingest", "-f", "otlp-json", "--strict", _lines(tmp_path, "otlp-strict"))
    assert result.exit_code == 1
    assert "--strict cannot be used for --format otlp-json against a server" in result.stderr
