#!/usr/bin/env bash
# Records one capture: a throwaway venv under /tmp with the pinned requirements, the capture server,
# the scenario, and the recording moved into place. Called by each client's capture/run.sh:
#
#   record.sh REQUIREMENTS SCENARIO DEST [SCENARIO ARGS...]
#
# DEST receives requests.jsonl, bodies/, llm.jsonl and versions.txt (pip freeze of the venv); an
# existing recording there is replaced only once the new one is complete. The scenario gets
# CAPTURE_URL (http://127.0.0.1:PORT) and the usual OTEL_/OPENAI_/ANTHROPIC_ variables pointing at it.
set -euo pipefail

KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQUIREMENTS="$(realpath "$1")"; SCENARIO="$(realpath "$2")"; DEST="$(realpath -m "$3")"; shift 3
PYTHON="${CAPTURE_PYTHON:-python3.11}"
WORK="$(mktemp -d /tmp/otlp-capture.XXXXXX)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    if [ -z "${CAPTURE_KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

echo "== venv in $WORK/venv ($PYTHON)"
"$PYTHON" -m venv "$WORK/venv"
quiet_pip() {  # pip warns about every local index folder this machine's pip.conf names
    "$WORK/venv/bin/python" -m pip install --quiet "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}
quiet_pip --upgrade pip
quiet_pip -r "$REQUIREMENTS"

echo "== capture server"
"$WORK/venv/bin/python" "$KIT/server.py" --port 0 --port-file "$WORK/port" --out "$WORK/recording" \
    2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT="$(cat "$WORK/port")"

echo "== scenario $(basename "$SCENARIO") $*"
export CAPTURE_URL="http://127.0.0.1:$PORT"
export OTEL_EXPORTER_OTLP_ENDPOINT="$CAPTURE_URL" OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf"
export OTEL_METRICS_EXPORTER=none
export OPENAI_BASE_URL="$CAPTURE_URL/v1" OPENAI_API_KEY="sk-capture-not-a-real-key"
export ANTHROPIC_BASE_URL="$CAPTURE_URL" ANTHROPIC_API_KEY="sk-ant-capture-not-a-real-key"
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"
"$WORK/venv/bin/python" "$SCENARIO" "$@"

kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
"$WORK/venv/bin/python" -m pip freeze --all | grep -v '^pip==' > "$WORK/recording/versions.txt"
rm -rf "$DEST.new"; mkdir -p "$(dirname "$DEST")"
mv "$WORK/recording" "$DEST.new"
rm -rf "$DEST/requests.jsonl" "$DEST/bodies" "$DEST/llm.jsonl" "$DEST/versions.txt"
mkdir -p "$DEST"; mv "$DEST.new"/* "$DEST/"; rmdir "$DEST.new"
echo "== recorded $(wc -l < "$DEST/requests.jsonl") OTLP request(s), $(wc -l < "$DEST/llm.jsonl" 2>/dev/null || echo 0) provider call(s) into $DEST"
