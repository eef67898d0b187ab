#!/usr/bin/env bash
# Re-records tests/data/otlp/anthropic/ (requests.jsonl, bodies/, llm.jsonl, versions.txt).
# The same scenario.py records tests/data/otlp/anthropic-openllmetry/ (its capture/run.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../../capture_kit/record.sh" "$HERE/requirements.txt" "$HERE/scenario.py" "$HERE/.." openinference
