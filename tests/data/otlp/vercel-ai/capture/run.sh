#!/usr/bin/env bash
# Re-records tests/data/otlp/vercel-ai/ (requests.jsonl, bodies/, llm.jsonl, versions.txt).
# To move to newer packages: edit package.json, run `npm install --package-lock-only` in a copy of this
# folder under /tmp and bring its package-lock.json back (never node_modules).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../../capture_kit/record_node.sh" "$HERE" "$HERE/.."
