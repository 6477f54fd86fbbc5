#!/usr/bin/env bash
# Starts N `h2o serve` replicas on loopback and nginx in front of them
# (least connections, SSE-safe), all without root; stops everything on
# SIGINT/SIGTERM. See deploy/README.md.
#
#   deploy/serve_replicas.sh -m MODEL [-n 2] [--port 8080] [--host 127.0.0.1]
#       [--base-port 18080] [--prefix DIR] [--sticky] [--h2o PATH]
#       [--nginx PATH] [--ready-timeout S] [--stop-timeout S] [--keep]
#       [-- extra h2o serve flags]
#
# --port 0 picks a free port for nginx; --base-port 0 lets every replica pick
# its own (h2o serve --port 0). When all are up it prints, on stderr:
#   serve_replicas: replica I http://127.0.0.1:PORT pid PID     (one per replica)
#   serve_replicas: listening on http://HOST:PORT
# and writes PREFIX/replicas.txt ("I 127.0.0.1:PORT PID" lines). nginx's pid,
# config, temp files and logs (error.log, access.log with the upstream that
# served each request, replica-I.log) live under PREFIX.
set -euo pipefail

die() { echo "serve_replicas: error: $*" >&2; exit 2; }
say() { echo "serve_replicas: $*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
model="" n=2 port=8080 host=127.0.0.1 base_port=18080 prefix="" sticky=0
h2o="${H2O_BIN:-}" nginx_bin="${NGINX_BIN:-}" ready_timeout=300 stop_timeout=30 keep=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -m|--model) model="${2:?-m needs a value}"; shift 2 ;;
    -n|--replicas) n="${2:?-n needs a value}"; shift 2 ;;
    --port) port="${2:?--port needs a value}"; shift 2 ;;
    --host) host="${2:?--host needs a value}"; shift 2 ;;
    --base-port) base_port="${2:?--base-port needs a value}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a value}"; shift 2 ;;
    --sticky) sticky=1; shift ;;
    --h2o) h2o="${2:?--h2o needs a value}"; shift 2 ;;
    --nginx) nginx_bin="${2:?--nginx needs a value}"; shift 2 ;;
    --ready-timeout) ready_timeout="${2:?}"; shift 2 ;;
    --stop-timeout) stop_timeout="${2:?}"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown argument '$1' (h2o serve flags go after --)" ;;
  esac
done

[ -n "$model" ] || die "-m MODEL is required"
[ -f "$model" ] || die "model not found: $model"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "-n must be a positive integer, got '$n'"
[[ "$port" =~ ^[0-9]+$ ]] || die "--port must be a number, got '$port'"
[[ "$base_port" =~ ^[0-9]+$ ]] || die "--base-port must be a number, got '$base_port'"
if [ -z "$h2o" ]; then
  if [ -x "$here/../build/bin/h2o" ]; then h2o="$here/../build/bin/h2o"
  else h2o="$(command -v h2o || true)"; fi
fi
[ -n "$h2o" ] && [ -x "$h2o" ] || die "h2o binary not found (build it, or pass --h2o PATH)"
if [ -z "$nginx_bin" ]; then
  nginx_bin="$(command -v nginx || true)"
  [ -n "$nginx_bin" ] || { [ -x /usr/sbin/nginx ] && nginx_bin=/usr/sbin/nginx; }
fi
[ -n "$nginx_bin" ] && [ -x "$nginx_bin" ] || die "nginx not found (apt-get install nginx-light, or pass --nginx PATH)"

own_prefix=0
if [ -z "$prefix" ]; then
  prefix="$(mktemp -d "${TMPDIR:-/tmp}/h2o-replicas.XXXXXX")"
  own_prefix=1
fi
mkdir -p "$prefix/logs" "$prefix/run" "$prefix/tmp" || die "cannot create $prefix"
prefix="$(cd "$prefix" && pwd)"
# nginx's workers drop root to `nobody` when started as root: they need to
# reach the temp dirs under PREFIX.
[ "$(id -u)" -ne 0 ] || chmod 755 "$prefix" "$prefix/tmp"

# Children die with this script even if it is SIGKILLed (util-linux setpriv).
launch=()
if command -v setpriv >/dev/null 2>&1 && setpriv --pdeathsig TERM true 2>/dev/null; then
  launch=(setpriv --pdeathsig TERM)
fi

replica_pids=() replica_addrs=() nginx_pid="" stopping=0

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

stop_all() {
  local code="$1"
  [ "$stopping" -eq 0 ] || return 0
  stopping=1
  trap '' INT TERM
  say "stopping (nginx ${nginx_pid:-none}, replicas ${replica_pids[*]:-none})"
  # Graceful: nginx stops accepting and finishes proxied requests (QUIT); each
  # replica drains its running requests (TERM).
  alive "$nginx_pid" && kill -QUIT "$nginx_pid" 2>/dev/null || true
  local p
  for p in "${replica_pids[@]}"; do alive "$p" && kill -TERM "$p" 2>/dev/null || true; done
  local deadline=$((SECONDS + stop_timeout)) left
  while :; do
    left=0
    for p in "$nginx_pid" "${replica_pids[@]}"; do alive "$p" && left=1; done
    [ "$left" -eq 1 ] && [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.2
  done
  for p in "$nginx_pid" "${replica_pids[@]}"; do
    if alive "$p"; then say "pid $p still running after ${stop_timeout}s, killing it"; kill -KILL "$p" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  if [ "$own_prefix" -eq 1 ] && [ "$keep" -eq 0 ] && [ "$code" -ne 1 ]; then
    rm -rf "$prefix"
  else
    say "logs kept in $prefix/logs"
  fi
  exit "$code"
}
trap 'stop_all 0' INT
trap 'stop_all 0' TERM
trap 'rc=$?; [ "$stopping" -eq 1 ] || stop_all "$([ "$rc" -eq 0 ] && echo 0 || echo 1)"' EXIT

# --- replicas ---------------------------------------------------------------
for ((i = 0; i < n; i++)); do
  rport=0
  [ "$base_port" -eq 0 ] || rport=$((base_port + i))
  log="$prefix/logs/replica-$i.log"
  : >"$log"
  "${launch[@]}" "$h2o" serve -m "$model" --host 127.0.0.1 --port "$rport" "${extra[@]}" \
    </dev/null >"$log" 2>&1 &
  replica_pids+=("$!")
done

for ((i = 0; i < n; i++)); do
  log="$prefix/logs/replica-$i.log" pid="${replica_pids[$i]}" addr=""
  deadline=$((SECONDS + ready_timeout))
  while [ -z "$addr" ]; do
    addr="$(sed -n 's|^h2o serve: listening on http://\([^ ]*\)$|\1|p' "$log" | head -n1)"
    [ -n "$addr" ] && break
    if ! alive "$pid"; then
      say "replica $i exited before it was ready; last lines of $log:"
      tail -n 5 "$log" >&2 || true
      stop_all 1
    fi
    [ "$SECONDS" -lt "$deadline" ] || { say "replica $i not ready after ${ready_timeout}s"; stop_all 1; }
    sleep 0.1
  done
  replica_addrs+=("$addr")
  say "replica $i http://$addr pid $pid"
done
: >"$prefix/replicas.txt"
for ((i = 0; i < n; i++)); do
  echo "$i ${replica_addrs[$i]} ${replica_pids[$i]}" >>"$prefix/replicas.txt"
done

# --- nginx ------------------------------------------------------------------
write_conf() {  # $1 = listen port
  local balance="least_conn;"
  [ "$sticky" -eq 0 ] || balance="hash \$h2o_session_key consistent;"
  {
    echo "# Written by deploy/serve_replicas.sh; run as: nginx -p $prefix -c $prefix/nginx.conf"
    echo "pid $prefix/run/nginx.pid;"
    echo "error_log $prefix/logs/error.log warn;"
    echo "worker_processes 1;"
    echo "events { worker_connections 4096; }"
    echo "http {"
    echo "  log_format h2o_upstream '\$remote_addr [\$time_local] \"\$request\" \$status '"
    echo "                          '\$body_bytes_sent upstream=\$upstream_addr '"
    echo "                          'rt=\$request_time urt=\$upstream_response_time';"
    echo "  access_log $prefix/logs/access.log h2o_upstream;"
    echo "  client_body_temp_path $prefix/tmp/body;"
    echo "  proxy_temp_path $prefix/tmp/proxy;"
    echo "  fastcgi_temp_path $prefix/tmp/fastcgi;"
    echo "  uwsgi_temp_path $prefix/tmp/uwsgi;"
    echo "  scgi_temp_path $prefix/tmp/scgi;"
    echo "  map \$http_x_session_id \$h2o_session_key { \"\" \$request_id; default \$http_x_session_id; }"
    echo "  upstream h2o {"
    echo "    $balance"
    local a
    for a in "${replica_addrs[@]}"; do echo "    server $a max_fails=2 fail_timeout=10s;"; done
    echo "    keepalive 32;"
    echo "    keepalive_timeout 4s;  # under h2o serve's 5 s idle close"
    echo "  }"
    echo "  server {"
    echo "    listen $host:$1;"
    echo "    client_max_body_size 16m;"
    echo "    location / {"
    echo "      proxy_pass http://h2o;"
    echo "      include $here/nginx/h2o-proxy.conf;"
    echo "    }"
    echo "  }"
    echo "}"
  } >"$prefix/nginx.conf"
}

probe_host="$host"
[ "$probe_host" != "0.0.0.0" ] || probe_host=127.0.0.1
port_open() { (exec 3<>"/dev/tcp/$probe_host/$1") 2>/dev/null; }

tries=1
[ "$port" -ne 0 ] || tries=10
for ((t = 0; t < tries; t++)); do
  lport="$port"
  if [ "$port" -eq 0 ]; then
    lport=$((20000 + RANDOM % 40000))
    port_open "$lport" && continue
  fi
  write_conf "$lport"
  : >"$prefix/logs/error.log"
  "${launch[@]}" "$nginx_bin" -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" \
    -g 'daemon off;' </dev/null >>"$prefix/logs/nginx.out" 2>&1 &
  nginx_pid="$!"
  deadline=$((SECONDS + 10))
  while alive "$nginx_pid" && ! port_open "$lport" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if alive "$nginx_pid" && port_open "$lport"; then break; fi
  if alive "$nginx_pid"; then say "nginx not listening on $host:$lport after 10s"; stop_all 1; fi
  wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=""
  if [ "$port" -eq 0 ] && grep -q "Address already in use" "$prefix/logs/error.log" "$prefix/logs/nginx.out"; then
    continue
  fi
  say "nginx failed to start; last lines of its logs:"
  tail -n 5 "$prefix/logs/error.log" "$prefix/logs/nginx.out" >&2 || true
  stop_all 1
done
[ -n "$nginx_pid" ] || { say "found no free port for nginx"; stop_all 1; }
echo "$lport" >"$prefix/port"
say "listening on http://$host:$lport"

# --- run until a signal, nginx exits, or every replica has exited -----------
declare -A reported=()
while :; do
  wait -n 2>/dev/null || true
  [ "$stopping" -eq 0 ] || break
  if ! alive "$nginx_pid"; then say "nginx exited; see $prefix/logs/error.log"; stop_all 1; fi
  up=0
  for ((i = 0; i < n; i++)); do
    if alive "${replica_pids[$i]}"; then up=$((up + 1))
    elif [ -z "${reported[$i]:-}" ]; then
      reported[$i]=1
      say "replica $i (pid ${replica_pids[$i]}) exited; nginx routes around it; see $prefix/logs/replica-$i.log"
    fi
  done
  if [ "$up" -eq 0 ]; then say "every replica has exited"; stop_all 1; fi
done
