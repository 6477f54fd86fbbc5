#!/usr/bin/env bash
# Server soak (not in CI): `h2o serve` on the bundled model under N
# concurrent streaming clients for a duration, with mixed per-request KV
# policies, clients that close streams early and malformed requests, and
# beside them H threads of hostile clients (floods, slow clients, resets,
# clients that never read; scripts/soak_client.py). Prints requests,
# errors, p50/p99 latency, the attacks and the server's RSS over time;
# exit 1 when a valid request failed, a malformed one got other than a
# 4xx, an attack got other than its limit's answer, the RSS kept growing,
# or the server did not stop cleanly.
#   scripts/soak.sh [CLIENTS [SECONDS [HOSTILE]]]  (default 64 clients, 600 s, 8 hostile)
# H2O_BIN picks the binary (default build/bin/h2o, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
clients="${1:-64}" seconds="${2:-600}" hostile="${3:-8}"
h2o="${H2O_BIN:-build/bin/h2o}"
[ -x "$h2o" ] || bash scripts/build.sh

log="$(mktemp)"
# --queue above the client count: a 503 would then be a bug, not back-pressure.
"$h2o" serve -m models/stories260K.gguf --port 0 --queue $((clients + hostile + 16)) \
  --chat-template chatml --kv h2o:heavy=10%,recent=10% 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
port=""
for _ in $(seq 100); do
  port="$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log")"
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "h2o serve did not start" >&2; cat "$log" >&2; exit 1; }

status=0
python3 scripts/soak_client.py --port "$port" --pid "$pid" --clients "$clients" \
  --duration "$seconds" --hostile "$hostile" || status=1
# Every request is over: cancelled ones must have handed back their KV
# memory by the next step, so in-use bytes fall to 0 (a reservation leak
# otherwise).
sleep 1
metrics="$(curl -s "http://127.0.0.1:$port/metrics")"
echo "server /metrics at the end:"
grep -E '^h2o_(request|kv_bytes_in_use|running|queue|http_)' <<<"$metrics" || true
echo "server log lines (refusals naming their limit, at most 10 a second): $(wc -l <"$log")"
if ! grep -qE '^h2o_kv_bytes_in_use 0$' <<<"$metrics"; then
  echo "KV bytes still reserved with no request running" >&2
  status=1
fi

kill -TERM "$pid"
server_status=0
wait "$pid" || server_status=$?
if [ "$server_status" -ne 0 ]; then
  echo "h2o serve exited $server_status after SIGTERM" >&2
  tail -n 20 "$log" >&2
  status=1
fi
exit "$status"
