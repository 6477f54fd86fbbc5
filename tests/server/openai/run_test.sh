#!/usr/bin/env bash
# ServeOpenAI.ClientLibrary: runs client_test.mjs (node's test runner) against
# `h2o serve`. Exits 77 (skipped) when node or node_modules is missing:
# scripts/setup.sh installs both (npm ci --prefix tests/server/openai).
#   tests/server/openai/run_test.sh H2O_BINARY MODEL
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
h2o="${1:?usage: run_test.sh H2O_BINARY MODEL}"
model="${2:?usage: run_test.sh H2O_BINARY MODEL}"
if ! command -v node >/dev/null 2>&1; then
  echo "openai client test: SKIP: node not found (run scripts/setup.sh)" >&2; exit 77
fi
if [ ! -d "$here/node_modules/openai" ]; then
  echo "openai client test: SKIP: $here/node_modules missing (npm ci --prefix tests/server/openai)" >&2; exit 77
fi
[ -x "$h2o" ] || { echo "openai client test: h2o binary not found: $h2o" >&2; exit 1; }
[ -f "$model" ] || { echo "openai client test: model not found: $model" >&2; exit 1; }
H2O_BIN="$(cd "$(dirname "$h2o")" && pwd)/$(basename "$h2o")"
H2O_MODEL="$(cd "$(dirname "$model")" && pwd)/$(basename "$model")"
export H2O_BIN H2O_MODEL
cd "$here"
exec node --test client_test.mjs
