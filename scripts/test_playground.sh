#!/usr/bin/env bash
# Playground.HeadlessChromium: starts `h2o serve` on the bundled model on a
# free port and drives the page at / in headless Chromium
# (scripts/playground_browser.py over chromedriver): a generation with an
# h2o policy must render its tokens, a cache map with one row per KV head
# each keeping the budget, and a bad policy must show the server's error
# inline; with the full cache beside it the page opens on the evicting run;
# a chat of two turns sends the first back and reuses it from the prompt
# cache. Saves a screenshot. Exits 77 (skipped) only when chromium or
# chromedriver is missing: scripts/setup.sh installs both.
#
#   scripts/test_playground.sh H2O_BINARY MODEL [SCREENSHOT]   (default: build/playground.png)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
h2o="${1:?usage: test_playground.sh H2O_BINARY MODEL [SCREENSHOT]}"
model="${2:?usage: test_playground.sh H2O_BINARY MODEL [SCREENSHOT]}"
screenshot="${3:-$root/build/playground.png}"

fail() { echo "test_playground: FAIL: $*" >&2; exit 1; }
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "test_playground: SKIP: $tool not found (run scripts/setup.sh)" >&2; exit 77; }
done
command -v python3 >/dev/null 2>&1 || fail "python3 not found"
[ -x "$h2o" ] || fail "h2o binary not found: $h2o"
[ -f "$model" ] || fail "model not found: $model"

work="$(mktemp -d "${TMPDIR:-/tmp}/h2o-playground-test.XXXXXX")"
server_pid=""
cleanup() {
  local rc=$?
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  [ "$rc" -eq 0 ] || { echo "--- h2o serve log" >&2; cat "$work/serve.log" >&2 || true; }
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

"$h2o" serve -m "$model" --port 0 -c 512 -t 1 --chat-template chatml >"$work/serve.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 300); do
  port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.log")"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "h2o serve exited before listening"
  sleep 0.1
done
[ -n "$port" ] || fail "h2o serve not listening after 30 s"

python3 "$root/scripts/playground_browser.py" check --server "http://127.0.0.1:$port" \
  --kv "h2o:heavy=8,recent=8" --budget 16 --layer 1 --screenshot "$screenshot"
echo "test_playground: PASS (screenshot: $screenshot)"
