#!/usr/bin/env bash
# Re-records tests/data/otlp/genai-evals/ (requests.jsonl, bodies/, llm.jsonl, versions.txt).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../../capture_kit/record.sh" "$HERE/requirements.txt" "$HERE/scenario.py" "$HERE/.."
