#!/usr/bin/env python3
"""The soak's clients (scripts/soak.sh starts the server and this).

N threads send requests for a duration: streaming completions and chats
with a mix of KV policies, some closed early (a client that goes away),
some non-streaming, and malformed ones. Valid requests must all succeed;
malformed ones must get a 4xx, never a 5xx or a dropped connection. The
server's RSS is sampled from /proc/PID/status to show it stays flat.

With --hostile H, H more threads attack the server beside them (the
attacks of RELIABILITY.md, "Hostile clients"): header floods, endless
request lines, slow clients trickling bytes, bodies that stop, 100 MiB
chunked bodies, gzip bodies, prompts nested 50,000 deep, Range floods,
resets mid-request and mid-stream, clients that never read, and idle
connections held open. Each must end in the status its limit answers or a
closed connection; none may cost a valid request anything.

Exit status 1 when any of that fails.
"""
import argparse
import http.client
import json
import random
import socket
import struct
import threading
import time

POLICIES = [None, "full", "local:recent=16", "sink:sinks=4,recent=28", "h2o:heavy=10%,recent=10%",
            "h2o:heavy=8,recent=8", "h2only:heavy=25%", "tova:k=24", "random:k=16,recent=8,seed=3"]
PROMPTS = ["Once upon a time", "The little dog", "Lily and Tom went to the park. They",
           "One day, a big bird"]
# Each must be refused with a 4xx.
MALFORMED = [
    ("/v1/completions", b"{not json"),
    ("/v1/completions", b""),
    ("/v1/completions", b'{"prompt": 5}'),
    ("/v1/completions", b'{"prompt": "x", "max_tokens": "many"}'),
    ("/v1/completions", b'{"prompt": "x", "kv": "h2o:heavy=banana"}'),
    ("/v1/completions", b'{"prompt": "x", "kv": "bogus:k=1"}'),
    ("/v1/completions", b'{"prompt": "x", "n": 2}'),
    ("/v1/completions", b'{"prompt": "x", "max_tokens": 100000000}'),
    ("/v1/completions", b'{"prompt": [1, 2, 999999]}'),
    ("/v1/completions", b'{"prompt": "x", "temperature": -1}'),
    ("/v1/completions", b'{"prompt": "x", "stop": ["a", "b", "c", "d", "e"]}'),
    ("/v1/chat/completions", b'{"messages": []}'),
    ("/v1/chat/completions", b'{"messages": [{"role": "tool", "content": "x"}]}'),
    ("/v1/chat/completions", b'{"messages": "hi", "stream": true}'),
    ("/v1/chat/completions", b'[1, 2, 3]'),
    ("/v1/completions", b'{"prompt": "\xff\xfe invalid utf-8"}'),
]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.latencies = []  # seconds, completed valid requests
        self.first_token = []  # seconds to the first streamed event
        self.failures = []  # (kind, detail), first few kept

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def ok(self, kind, start):
        self.add(kind)
        self.latencies.append(time.monotonic() - start)

    def fail(self, kind, detail):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if len(self.failures) < 20:
                self.failures.append((kind, str(detail)[:300]))


def valid_body(rng, stream):
    # max_tokens >= 16: a 10% budget of a shorter prompt + max_tokens is 0
    # tokens, which the server rightly refuses (400).
    chat = rng.random() < 0.4
    body = {"max_tokens": rng.randint(16, 48), "temperature": rng.choice([0, 0.7, 1.0]),
            "seed": rng.randint(0, 1 << 30), "stream": stream}
    if chat:
        body["messages"] = [{"role": "user", "content": rng.choice(PROMPTS)}]
    else:
        body["prompt"] = rng.choice(PROMPTS)
    if stream and rng.random() < 0.5:
        body["stream_options"] = {"include_usage": True}
    kv = rng.choice(POLICIES)
    if kv is not None:
        body["kv"] = kv
    return ("/v1/chat/completions" if chat else "/v1/completions"), json.dumps(body).encode()


def post(host, port, path, body, timeout):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    return conn, conn.getresponse()


def run_stream(args, rng, stats, cancel):
    path, body = valid_body(rng, stream=True)
    start = time.monotonic()
    conn, resp = post(args.host, args.port, path, body, args.timeout)
    try:
        if resp.status != 200:
            stats.fail("valid_errors", f"{resp.status} {resp.read()[:200]!r} for {body!r}")
            return
        events, done = 0, False
        cancel_after = rng.randint(1, 4) if cancel else None
        while True:
            line = resp.fp.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data: "):
                continue
            if events == 0:
                stats.first_token.append(time.monotonic() - start)
            events += 1
            if line == b"data: [DONE]":
                done = True
                break
            chunk = json.loads(line[6:])
            if "error" in chunk:
                stats.fail("valid_errors", f"error event {line[:200]!r} for {body!r}")
                return
            if cancel_after is not None and events >= cancel_after:
                stats.add("cancelled")
                return  # the finally closes the socket mid-stream
        if not done:
            stats.fail("valid_errors", f"stream ended without [DONE] after {events} events for {body!r}")
            return
        stats.ok("ok_stream", start)
    finally:
        conn.close()


def run_plain(args, rng, stats):
    path, body = valid_body(rng, stream=False)
    start = time.monotonic()
    conn, resp = post(args.host, args.port, path, body, args.timeout)
    try:
        data = resp.read()
        if resp.status != 200 or "choices" not in json.loads(data):
            stats.fail("valid_errors", f"{resp.status} {data[:200]!r} for {body!r}")
            return
        stats.ok("ok_plain", start)
    finally:
        conn.close()


def run_malformed(args, rng, stats):
    path, body = rng.choice(MALFORMED)
    conn, resp = post(args.host, args.port, path, body, args.timeout)
    try:
        data = resp.read()
        if not 400 <= resp.status < 500 or "error" not in json.loads(data):
            stats.fail("malformed_unexpected", f"{resp.status} {data[:200]!r} for {body!r}")
            return
        stats.add("malformed_4xx")
    finally:
        conn.close()


def client(args, seed, deadline, stats):
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        r = rng.random()
        try:
            if r < args.malformed:
                run_malformed(args, rng, stats)
            elif r < args.malformed + 0.1:
                run_plain(args, rng, stats)
            else:
                run_stream(args, rng, stats, cancel=rng.random() < args.cancel)
        except (OSError, http.client.HTTPException, ValueError) as e:
            stats.fail("valid_errors" if r >= args.malformed else "malformed_unexpected",
                       f"{type(e).__name__}: {e}")


# ---- Hostile clients ------------------------------------------------------
# Each attack returns what it saw: the status of the answer, or "closed"
# (the server closed or reset the connection). ALLOWED lists what may be
# seen; anything else is a failure.

def connect(args, rcvbuf=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(args.hostile_timeout)
    s.connect((args.host, args.port))
    return s


def read_status(s):
    """The status of the response on s, or "closed"."""
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    if data.startswith(b"HTTP/1.1 "):
        return int(data[9:12])
    return "closed"


def reset(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def send_until_answered(s, head, piece, limit, pause=0.0):
    """Sends head, then piece until `limit` bytes (waiting `pause` seconds
    between pieces), reading the answer."""
    result = []
    reader = threading.Thread(target=lambda: result.append(read_status(s)))
    reader.start()
    try:
        s.sendall(head)
        sent = len(head)
        while sent < limit and reader.is_alive():
            s.sendall(piece)
            sent += len(piece)
            time.sleep(pause)
    except OSError:
        pass
    reader.join()
    return result[0]


def attack_header_flood(args, rng):
    with connect(args) as s:
        return send_until_answered(s, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n",
                                   b"X-Flood: " + b"a" * 1000 + b"\r\n", 64 << 20)


def attack_long_line(args, rng):
    with connect(args) as s:
        return send_until_answered(s, b"GET /", b"a" * 65536, 200 << 20)


def attack_chunked_body(args, rng):
    with connect(args) as s:
        return send_until_answered(
            s, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"10000\r\n" + b"a" * 0x10000 + b"\r\n", 100 << 20)


def attack_gzip(args, rng):
    with connect(args) as s:
        body = b"\x1f\x8b\x08\x00" + bytes(rng.randrange(256) for _ in range(512))
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return read_status(s)


def attack_nested(args, rng):
    depth = rng.choice([1000, 50000])
    body = b'{"prompt": ' + b"[" * depth + b"1" + b"]" * depth + b"}"
    with connect(args) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                  + body)
        return read_status(s)


def attack_ranges(args, rng):
    with connect(args) as s:
        s.sendall(b"GET /playground.js HTTP/1.1\r\nHost: x\r\nRange: bytes=0-" + b",0-" * 2700 +
                  b"\r\n\r\n")
        return read_status(s)


def attack_slow_head(args, rng):
    """Trickles header lines: the head deadline ends it (408)."""
    with connect(args) as s:
        return send_until_answered(s, b"POST /v1/completions HTTP/1.1\r\n", b"X-Slow: 1\r\n",
                                   1 << 30, pause=0.5)


def attack_slow_body(args, rng):
    with connect(args) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        return read_status(s)


def attack_reset(args, rng):
    """A long request, then a reset: streamed or not, it is cancelled."""
    stream = rng.random() < 0.5
    body = json.dumps({"prompt": rng.choice(PROMPTS), "max_tokens": 400, "ignore_eos": True,
                       "stream": stream, "kv": "local:recent=32"}).encode()
    s = connect(args)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
              + body)
    time.sleep(rng.uniform(0, 0.2))
    reset(s)
    return "reset"


def attack_no_read(args, rng):
    """A stream whose client never reads, held for a few seconds."""
    body = json.dumps({"prompt": rng.choice(PROMPTS), "max_tokens": 400, "ignore_eos": True,
                       "stream": True, "logprobs": 5, "kv": "local:recent=32"}).encode()
    with connect(args, rcvbuf=4096) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                  + body)
        time.sleep(rng.uniform(1, 4))
    return "left"


def attack_idle(args, rng):
    """Connections opened and never used, held until the server closes them."""
    conns = [connect(args) for _ in range(rng.randint(10, 50))]
    seen = [read_status(s) for s in conns]
    for s in conns:
        s.close()
    return "closed" if all(x == "closed" for x in seen) else next(x for x in seen if x != "closed")


ATTACKS = {
    "header_flood": (attack_header_flood, {431, "closed"}),
    "long_line": (attack_long_line, {414, "closed"}),
    "chunked_body": (attack_chunked_body, {413, "closed"}),
    "gzip_body": (attack_gzip, {415}),
    "nested_prompt": (attack_nested, {400}),
    "ranges": (attack_ranges, {200}),
    "slow_head": (attack_slow_head, {408, "closed"}),
    "slow_body": (attack_slow_body, {408}),
    "reset": (attack_reset, {"reset"}),
    "no_read": (attack_no_read, {"left"}),
    "idle": (attack_idle, {"closed"}),
}


def hostile(args, seed, deadline, stats):
    rng = random.Random(1000003 * seed + 7)
    names = sorted(ATTACKS)
    while time.monotonic() < deadline:
        name = rng.choice(names)
        attack, allowed = ATTACKS[name]
        try:
            seen = attack(args, rng)
        except OSError as e:
            seen = f"{type(e).__name__}: {e}"
        if seen in allowed:
            stats.add("hostile_" + name)
        else:
            stats.fail("hostile_unexpected", f"{name}: {seen}")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def sample_rss(pid, interval, stop, out):
    t0 = time.monotonic()
    while not stop.wait(interval if out else 0):
        out.append((time.monotonic() - t0, rss_kib(pid)))


def percentile(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True, help="the server's pid, for its RSS")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=600, help="seconds")
    ap.add_argument("--cancel", type=float, default=0.2, help="share of streams closed early")
    ap.add_argument("--malformed", type=float, default=0.15, help="share of malformed requests")
    ap.add_argument("--timeout", type=float, default=300, help="per-request socket timeout, seconds")
    ap.add_argument("--rss-interval", type=float, default=10)
    ap.add_argument("--rss-out", help="write the RSS samples here (TSV: seconds, KiB)")
    ap.add_argument("--hostile", type=int, default=0, help="attacking threads beside the clients")
    ap.add_argument("--rss-slack-mib", type=float, default=16,
                    help="how much the second half's RSS peak may pass the first half's")
    ap.add_argument("--hostile-timeout", type=float, default=120,
                    help="socket timeout of the attacks, seconds")
    args = ap.parse_args()

    stats, rss, stop = Stats(), [], threading.Event()
    sampler = threading.Thread(target=sample_rss, args=(args.pid, args.rss_interval, stop, rss))
    sampler.start()
    start = time.monotonic()
    deadline = start + args.duration
    threads = [threading.Thread(target=client, args=(args, i, deadline, stats))
               for i in range(args.clients)]
    threads += [threading.Thread(target=hostile, args=(args, i, deadline, stats))
                for i in range(args.hostile)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    rss.append((time.monotonic() - start, rss_kib(args.pid)))
    stop.set()
    sampler.join()

    c = stats.counts
    valid = c.get("ok_stream", 0) + c.get("ok_plain", 0) + c.get("cancelled", 0) + c.get("valid_errors", 0)
    print(f"clients {args.clients}, {elapsed:.0f} s")
    print(f"requests {valid + c.get('malformed_4xx', 0) + c.get('malformed_unexpected', 0)}: "
          f"valid {valid} (streamed {c.get('ok_stream', 0)}, plain {c.get('ok_plain', 0)}, "
          f"cancelled early {c.get('cancelled', 0)}), malformed {c.get('malformed_4xx', 0)} answered 4xx")
    print(f"errors: valid requests {c.get('valid_errors', 0)}, "
          f"malformed not answered 4xx {c.get('malformed_unexpected', 0)}")
    print(f"latency of completed valid requests: p50 {percentile(stats.latencies, 50):.2f} s, "
          f"p99 {percentile(stats.latencies, 99):.2f} s; first event p50 "
          f"{percentile(stats.first_token, 50):.2f} s, p99 {percentile(stats.first_token, 99):.2f} s")
    if args.hostile:
        attacks = ", ".join(f"{name} {c.get('hostile_' + name, 0)}" for name in sorted(ATTACKS))
        print(f"attacks by {args.hostile} threads, each answered as its limit says: {attacks}; "
              f"unexpected {c.get('hostile_unexpected', 0)}")
    print("RSS (MiB) over time: " + ", ".join(f"{t:.0f}s {k / 1024:.1f}" for t, k in rss))
    # Flat: the second half's peak within a few MiB of the first half's (a
    # leak keeps climbing; allocator pools settle in the first minutes).
    half = [k for t, k in rss if t >= elapsed / 2]
    first = [k for t, k in rss if t < elapsed / 2]
    rss_grew = bool(first and half and max(half) > max(first) + args.rss_slack_mib * 1024)
    if first and half:
        print(f"RSS peak: first half {max(first) / 1024:.1f} MiB, second half {max(half) / 1024:.1f} MiB"
              + (" (grew)" if rss_grew else ""))
    if args.rss_out:
        with open(args.rss_out, "w") as f:
            f.writelines(f"{t:.1f}\t{k}\n" for t, k in rss)
    for kind, detail in stats.failures:
        print(f"  {kind}: {detail}")
    failed = c.get("valid_errors", 0) or c.get("malformed_unexpected", 0) or \
        c.get("hostile_unexpected", 0) or rss_grew
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
