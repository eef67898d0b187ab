#!/usr/bin/env bash
# Re-records tests/data/otlp/openai-v2/default/ and .../span_and_event/ (requests.jsonl, bodies/,
# llm.jsonl, versions.txt): the same scenario in the two content modes.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for mode in default span_and_event; do
    bash "$HERE/../../capture_kit/record.sh" "$HERE/requirements.txt" "$HERE/scenario.py" "$HERE/../$mode" "$mode"
done
