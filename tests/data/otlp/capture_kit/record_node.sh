#!/usr/bin/env bash
# Records one capture of a Node.js client: record.sh's steps with npm in place of pip. Called by a Node
# client's capture/run.sh:
#
#   record_node.sh CAPTURE_DIR DEST [SCENARIO ARGS...]
#
# CAPTURE_DIR holds package.json, package-lock.json (exact versions; `npm ci` installs them) and
# scenario.mjs; they are copied to a throwaway folder under /tmp, so node_modules never lands in the
# repository. DEST receives requests.jsonl, bodies/, llm.jsonl and versions.txt (node and npm versions,
# then every installed package as name@version); an existing recording there is replaced only once the
# new one is complete. The scenario gets the same CAPTURE_URL and OTEL_/OPENAI_/ANTHROPIC_ variables as
# record.sh gives a Python scenario.
set -euo pipefail

KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CAPTURE="$(realpath "$1")"; DEST="$(realpath -m "$2")"; shift 2
PYTHON="${CAPTURE_PYTHON:-python3.11}"  # runs the capture server (stdlib only)
WORK="$(mktemp -d /tmp/otlp-capture.XXXXXX)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    if [ -z "${CAPTURE_KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

echo "== npm ci in $WORK/app (node $(node --version))"
mkdir "$WORK/app"
cp "$CAPTURE/package.json" "$CAPTURE/package-lock.json" "$CAPTURE/scenario.mjs" "$WORK/app/"
(cd "$WORK/app" && npm ci --no-audit --no-fund --loglevel=error)

echo "== capture server"
"$PYTHON" "$KIT/server.py" --port 0 --port-file "$WORK/port" --out "$WORK/recording" 2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT="$(cat "$WORK/port")"

echo "== scenario scenario.mjs $*"
export CAPTURE_URL="http://127.0.0.1:$PORT"
export OTEL_EXPORTER_OTLP_ENDPOINT="$CAPTURE_URL" OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf"
export OTEL_METRICS_EXPORTER=none
export OPENAI_BASE_URL="$CAPTURE_URL/v1" OPENAI_API_KEY="sk-capture-not-a-real-key"
export ANTHROPIC_BASE_URL="$CAPTURE_URL" ANTHROPIC_API_KEY="sk-ant-capture-not-a-real-key"
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"
(cd "$WORK/app" && node scenario.mjs "$@")

kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
{
    echo "node $(node --version | tr -d v), npm $(npm --version)"
    (cd "$WORK/app" && node -e '
        const lock = require("./package-lock.json");
        const names = Object.entries(lock.packages).filter(([path]) => path)
            .map(([path, entry]) => `${path.split("node_modules/").pop()}@${entry.version}`);
        console.log([...new Set(names)].sort().join("\n"));')
} > "$WORK/recording/versions.txt"
rm -rf "$DEST.new"; mkdir -p "$(dirname "$DEST")"
mv "$WORK/recording" "$DEST.new"
rm -rf "$DEST/requests.jsonl" "$DEST/bodies" "$DEST/llm.jsonl" "$DEST/versions.txt"
mkdir -p "$DEST"; mv "$DEST.new"/* "$DEST/"; rmdir "$DEST.new"
echo "== recorded $(wc -l < "$DEST/requests.jsonl") OTLP request(s), $(wc -l < "$DEST/llm.jsonl" 2>/dev/null || echo 0) provider call(s) into $DEST"
