#!/usr/bin/env bash
# Re-records tests/data/otlp/anthropic-openllmetry/ (requests.jsonl, bodies/, llm.jsonl, versions.txt)
# with the scenario of tests/data/otlp/anthropic/capture/, instrumented by OpenLLMetry.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../../capture_kit/record.sh" "$HERE/requirements.txt" "$HERE/../../anthropic/capture/scenario.py" \
    "$HERE/.." openllmetry
