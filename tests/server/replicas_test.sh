#!/usr/bin/env bash
# ServeReplicas.BehindNginx: deploy/serve_replicas.sh starts 2 `h2o serve`
# replicas and nginx on loopback; concurrent requests through nginx (plain
# JSON and SSE) must all succeed and reach both replicas (nginx's access log
# and each replica's h2o_requests_total say so); SIGTERM must then stop
# everything and leave no process behind.
#
#   tests/server/replicas_test.sh H2O_BINARY MODEL
set -euo pipefail

h2o="${1:?usage: replicas_test.sh H2O_BINARY MODEL}"
model="${2:?usage: replicas_test.sh H2O_BINARY MODEL}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
launcher="$root/deploy/serve_replicas.sh"

fail() { echo "replicas_test: FAIL: $*" >&2; exit 1; }
[ -x "$h2o" ] || fail "h2o binary not found: $h2o"
[ -f "$model" ] || fail "model not found: $model"
command -v curl >/dev/null || fail "curl not found (run scripts/setup.sh)"
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || fail "nginx not found (run scripts/setup.sh)"

work="$(mktemp -d "${TMPDIR:-/tmp}/h2o-replicas-test.XXXXXX")"
prefix="$work/prefix"
launcher_pid=""

cleanup() {
  local rc=$?
  if [ -n "$launcher_pid" ] && kill -0 "$launcher_pid" 2>/dev/null; then
    kill -TERM "$launcher_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$launcher_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$launcher_pid" 2>/dev/null || true
  fi
  # Last resort for anything the launcher started and left (it should not).
  if [ -f "$prefix/replicas.txt" ]; then
    while read -r _ _ pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$prefix/replicas.txt"
  fi
  [ -f "$prefix/run/nginx.pid" ] && kill -KILL "$(cat "$prefix/run/nginx.pid")" 2>/dev/null || true
  if [ "$rc" -ne 0 ]; then
    echo "--- launcher output" >&2; cat "$work/launcher.log" >&2 2>/dev/null || true
    for f in "$prefix"/logs/*; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

"$launcher" -m "$model" -n 2 --port 0 --base-port 0 --prefix "$prefix" --h2o "$h2o" \
  --ready-timeout 60 --stop-timeout 20 -- -c 256 -t 1 >"$work/launcher.log" 2>&1 &
launcher_pid=$!

for _ in $(seq 600); do
  [ -s "$prefix/port" ] && break
  kill -0 "$launcher_pid" 2>/dev/null || fail "serve_replicas.sh exited before it was ready"
  sleep 0.1
done
[ -s "$prefix/port" ] || fail "serve_replicas.sh not ready after 60 s"
port="$(cat "$prefix/port")"
base="http://127.0.0.1:$port"
mapfile -t replicas < <(awk '{print $2}' "$prefix/replicas.txt")
[ "${#replicas[@]}" -eq 2 ] || fail "expected 2 replicas in replicas.txt, got ${#replicas[@]}"
echo "replicas_test: nginx on $port, replicas ${replicas[*]}"

requests_total() {  # sum of h2o_requests_total samples on one replica
  curl -sf --max-time 10 "http://$1/metrics" |
    awk '$1 ~ /^h2o_requests_total($|\{)/ {s += $NF} END {printf "%d\n", s}'
}
before=()
for r in "${replicas[@]}"; do
  curl -sf --max-time 10 "http://$r/metrics" | grep -q '^h2o_requests_total' ||
    fail "replica $r: /metrics has no h2o_requests_total"
  before+=("$(requests_total "$r")")
done

curl -sf --max-time 10 "$base/health" | grep -q '"ok"' || fail "GET /health through nginx"

# 12 concurrent requests: half plain JSON, half streamed (SSE through nginx).
n_req=12
pids=()
for ((i = 0; i < n_req; i++)); do
  stream=false
  [ $((i % 2)) -eq 0 ] || stream=true
  body="{\"prompt\": \"Once upon a time\", \"max_tokens\": 24, \"temperature\": 0, \"stream\": $stream}"
  curl -sS --max-time 60 -o "$work/resp-$i" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d "$body" "$base/v1/completions" >"$work/code-$i" 2>"$work/err-$i" &
  pids+=("$!")
done
for ((i = 0; i < n_req; i++)); do
  wait "${pids[$i]}" || fail "request $i: curl failed: $(cat "$work/err-$i")"
  code="$(cat "$work/code-$i")"
  [ "$code" = 200 ] || fail "request $i: HTTP $code: $(head -c 300 "$work/resp-$i")"
  if [ $((i % 2)) -eq 0 ]; then
    grep -q '"text_completion"' "$work/resp-$i" || fail "request $i: not a completion: $(head -c 300 "$work/resp-$i")"
  else
    grep -q '^data: {' "$work/resp-$i" || fail "request $i: no SSE data chunk"
    [ "$(grep -v '^$' "$work/resp-$i" | tail -n1 | tr -d '\r')" = "data: [DONE]" ] ||
      fail "request $i: SSE stream does not end with data: [DONE]"
  fi
done
echo "replicas_test: $n_req concurrent requests through nginx answered (JSON and SSE)"

# Which replica served each request, by nginx's access log and by the metrics.
for ((k = 0; k < 2; k++)); do
  r="${replicas[$k]}"
  served="$(grep -c "POST /v1/completions .* upstream=$r " "$prefix/logs/access.log" || true)"
  after="$(requests_total "$r")"
  echo "replicas_test: replica $k ($r): $served completions by the access log, h2o_requests_total ${before[$k]} -> $after"
  [ "$served" -gt 0 ] || fail "replica $k ($r) served no request"
  [ $((after - before[k])) -ge "$served" ] ||
    fail "replica $k ($r): h2o_requests_total rose by $((after - before[k])), fewer than the $served requests it served"
done

# SIGTERM: the launcher stops nginx and both replicas, then exits 0.
nginx_pid="$(cat "$prefix/run/nginx.pid")"
mapfile -t replica_pids < <(awk '{print $3}' "$prefix/replicas.txt")
kill -TERM "$launcher_pid"
rc=0
for _ in $(seq 150); do kill -0 "$launcher_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$launcher_pid" 2>/dev/null && fail "serve_replicas.sh still running 30 s after SIGTERM"
wait "$launcher_pid" || rc=$?
launcher_pid=""
[ "$rc" -eq 0 ] || fail "serve_replicas.sh exited $rc after SIGTERM"
for pid in "$nginx_pid" "${replica_pids[@]}"; do
  if kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" | cut -c1)" != Z ]; then
    fail "pid $pid ($(ps -o args= -p "$pid")) still running after the launcher stopped"
  fi
done
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && fail "something still listens on nginx's port $port"
echo "replicas_test: stopped on SIGTERM, no process left"
echo "replicas_test: PASS"
