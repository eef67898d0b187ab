"""The capture server: records what an SDK sends to an OTLP endpoint and fakes the LLM provider.

Stdlib only. One process on 127.0.0.1 serves both sides of a capture:

- every request to a path the fake provider does not own (`/v1/traces`, `/v1/logs`, `/v1/metrics`,
  `/api/public/otel/v1/traces`, a framework's own ingest path, ...) is recorded: one line in
  `<out>/requests.jsonl` and its body, raw as received (still compressed if it was), in
  `<out>/bodies/NNNN.bin`; the answer is what an OTLP/HTTP receiver answers (200 with an empty
  Export*ServiceResponse: no bytes for protobuf, `{}` for JSON);
- `/v1/chat/completions`, `/v1/responses`, `/v1/embeddings` and `/v1/messages` answer as OpenAI and
  Anthropic would (fake_llm.py), and each exchange is summarised in `<out>/llm.jsonl`.

Usage: python server.py --out DIR [--port N] [--port-file FILE]
(or CAPTURE_OUT / CAPTURE_PORT; port 0 picks a free one, printed and written to --port-file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_llm import Fake  # noqa: E402

RECORDED_HEADERS = ("content-type", "content-encoding", "transfer-encoding", "authorization", "user-agent")
# Headers some SDKs add to say how to read their export (Langfuse: x-langfuse-ingestion-version, its
# public key, SDK name and version); recorded as sent. None carries a secret.
RECORDED_HEADER_PREFIXES = ("x-langfuse-",)


def redact(name: str, value: str) -> str:
    """An authorization header keeps only its scheme ("Bearer sk-..." -> "Bearer <redacted>")."""
    if name != "authorization":
        return value
    scheme, _, secret = value.partition(" ")
    return f"{scheme} <redacted>" if secret else "<redacted>"


class Recorder:
    """Appends requests to <out>/requests.jsonl and bodies to <out>/bodies/, numbered from 1."""

    def __init__(self, out: Path):
        self.out = out
        (out / "bodies").mkdir(parents=True, exist_ok=True)
        if (out / "requests.jsonl").exists() or any((out / "bodies").iterdir()):
            raise SystemExit(f"{out} already holds a recording: record into an empty directory")
        self._lock = threading.Lock()
        self._seq = 0

    def record(self, method: str, path: str, headers, body: bytes) -> None:
        with self._lock:
            self._seq += 1
            body_file = f"bodies/{self._seq:04d}.bin"
            (self.out / body_file).write_bytes(body)
            kept = {name: redact(name, headers[name]) for name in RECORDED_HEADERS if headers.get(name) is not None}
            kept.update(sorted((name.lower(), value) for name, value in headers.items()
                               if name.lower().startswith(RECORDED_HEADER_PREFIXES)))
            line = {"seq": self._seq, "method": method, "path": path, "headers": kept,
                    "body_file": body_file, "body_bytes": len(body)}
            with (self.out / "requests.jsonl").open("a") as f:
                f.write(json.dumps(line) + "\n")

    def provider_call(self, path: str, summary: dict) -> None:
        with self._lock, (self.out / "llm.jsonl").open("a") as f:
            f.write(json.dumps({"path": path, **summary}) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "capture-kit/1"
    recorder: Recorder
    fake: Fake

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        sys.stderr.write("capture: " + (format % args) + "\n")

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            return self._chunked_body()  # Node's OTLP exporters stream their bodies
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _chunked_body(self) -> bytes:
        """The body of a `Transfer-Encoding: chunked` request, chunks joined (trailers read and dropped)."""
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()  # the CRLF after each chunk

    def _answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve(self) -> None:
        path = self.path.split("?", 1)[0]
        body = self._body()
        if self.command == "POST" and self.fake.handles(path):
            try:
                request = json.loads(body or b"{}")
            except ValueError:
                self._answer(400, "application/json", b'{"error": {"message": "body is not JSON"}}')
                return
            status, content_type, answer, summary = self.fake.handle(path, request)
            self.recorder.provider_call(path, summary)
            self._answer(status, content_type, answer)
            return
        self.recorder.record(self.command, path, self.headers, body)
        if "json" in (self.headers.get("content-type") or ""):
            self._answer(200, "application/json", b"{}")
        else:
            self._answer(200, "application/x-protobuf", b"")

    do_POST = do_PUT = do_GET = _serve


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("CAPTURE_OUT"), help="recording directory (empty)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("CAPTURE_PORT", "4318")))
    parser.add_argument("--port-file", help="write the port listened on to this file once ready")
    args = parser.parse_args(argv)
    if not args.out:
        parser.error("--out (or CAPTURE_OUT) is required")
    Handler.recorder = Recorder(Path(args.out))
    Handler.fake = Fake()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        Path(args.port_file).write_text(f"{port}\n")
    print(f"capture server on http://127.0.0.1:{port}, recording into {args.out}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
