#!/usr/bin/env python3
"""The soak's clients (scripts/soak.sh starts the server and this).

N threads send requests for a duration: streaming completions and chats
with a mix of KV policies, some closed early (a client that goes away),
some non-streaming, and malformed ones. Valid requests must all succeed;
malformed ones must get a 4xx, never a 5xx or a dropped connection. The
server's RSS is sampled from /proc/PID/status to show it stays flat.
Exit status 1 when any of that fails.
"""
import argparse
import http.client
import json
import random
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
    args = ap.parse_args()

    stats, rss, stop = Stats(), [], threading.Event()
    sampler = threading.Thread(target=sample_rss, args=(args.pid, args.rss_interval, stop, rss))
    sampler.start()
    start = time.monotonic()
    deadline = start + args.duration
    threads = [threading.Thread(target=client, args=(args, i, deadline, stats))
               for i in range(args.clients)]
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
    print("RSS (MiB) over time: " + ", ".join(f"{t:.0f}s {k / 1024:.1f}" for t, k in rss))
    if args.rss_out:
        with open(args.rss_out, "w") as f:
            f.writelines(f"{t:.1f}\t{k}\n" for t, k in rss)
    for kind, detail in stats.failures:
        print(f"  {kind}: {detail}")
    return 1 if c.get("valid_errors", 0) or c.get("malformed_unexpected", 0) else 0


if __name__ == "__main__":
    raise SystemExit(main())
