#!/usr/bin/env python3
"""Drives the h2o serve playground in headless Chromium (chromedriver's
WebDriver HTTP API, Python's standard library only; no network).

  playground_browser.py check   --server URL --kv SPEC --budget N --screenshot PNG
  playground_browser.py measure --server URL --prompt-file F --kv SPEC [--renders N]

check: loads /?...&run=1 (the page runs the prompt on load), waits for the
run to end, and checks the DOM against the server's own /v1/kv answer:
tokens rendered (one per cached position), the cache map's table has
n_head_kv rows for the layer, each head keeps `budget` tokens, the canvas
is drawn; then that a bad policy is shown inline as an error. measure:
runs a long prompt and times render() (performance.now()) for one layer
and for all layers. Prints one JSON line; exits 1 on a failed check.
"""
import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request


def fail(message):
    print(f"playground_browser: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """One headless Chromium session behind a chromedriver process."""

    def __init__(self, chromedriver, chromium):
        self.profile = tempfile.mkdtemp(prefix="h2o-playground-")
        port = free_port()
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "w")
        self.driver = subprocess.Popen([chromedriver, f"--port={port}"],
                                       stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                if self._call("GET", "/status")["value"].get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.1)
        else:
            self.close()
            fail("chromedriver did not start")
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1200", "--no-first-run", f"--user-data-dir={self.profile}/chrome"]
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args}}}}
        self.session = self._call("POST", "/session", caps)["value"]["sessionId"]

    def _call(self, method, path, body=None, timeout=120):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            fail(f"webdriver {method} {path}: {e.read().decode(errors='replace')[:500]}")

    def open(self, url):
        self._call("POST", f"/session/{self.session}/url", {"url": url})

    def js(self, script, *args):
        return self._call("POST", f"/session/{self.session}/execute/sync",
                          {"script": script, "args": list(args)})["value"]

    def wait_for(self, script, timeout_s, what):
        end = time.time() + timeout_s
        while time.time() < end:
            value = self.js(script)
            if value:
                return value
            time.sleep(0.2)
        fail(f"timed out after {timeout_s} s waiting for {what}")

    def screenshot(self, path):
        png = self._call("GET", f"/session/{self.session}/screenshot")["value"]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))

    def close(self):
        if getattr(self, "session", None):
            try:
                self._call("DELETE", f"/session/{self.session}", timeout=20)
            except SystemExit:
                pass
        self.driver.terminate()
        try:
            self.driver.wait(10)
        except subprocess.TimeoutExpired:
            self.driver.kill()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def page_url(server, **params):
    return f"{server}/?{urllib.parse.urlencode({**params, 'run': '1'})}"


def server_json(server, path):
    with urllib.request.urlopen(server + path, timeout=30) as r:
        return json.loads(r.read())


WAIT_FOR_END = ("const s = document.body.dataset.state;"
                "return s === 'done' || s === 'error' ? s : null;")

# What the selected run shows, read back from the DOM.
READ_DOM = """
const run = document.querySelector('.run.selected');
const canvas = document.getElementById('map');
const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
let drawn = 0;
for (let i = 0; i < pixels.length; i += 4) {
  if (pixels[i] !== 255 || pixels[i + 1] !== 255 || pixels[i + 2] !== 255) drawn++;
}
return {
  id: window.h2oPlayground.runs[window.h2oPlayground.selected].id,
  tokens: run.querySelectorAll('.tokens .tok').length,
  shaded: [...run.querySelectorAll('.tokens .tok')].filter((t) => +t.dataset.slots > 0).length,
  output: run.querySelector('.output').textContent,
  status: run.querySelector('.status').textContent,
  heads: [...document.querySelectorAll('#heads tr.head-row')].map((r) => +r.dataset.kept),
  layer: document.getElementById('layer').value,
  drawnPixels: drawn,
  error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
};
"""


def check(browser, args):
    browser.open(page_url(args.server, prompt=args.prompt, kv=args.kv, kv2="",
                          max_tokens=args.max_tokens, temperature=0, layer=args.layer))
    state = browser.wait_for(WAIT_FOR_END, args.timeout, "the run to end")
    dom = browser.js(READ_DOM)
    if state != "done" or dom["error"]:
        fail(f"the page ended in state {state}: {dom['error'] or dom['status']}")
    truth = server_json(args.server, f"/v1/kv/{dom['id']}?layer={args.layer}")
    n_heads = truth["n_head_kv"]
    if dom["tokens"] != truth["n_past"] or dom["tokens"] == 0:
        fail(f"{dom['tokens']} tokens rendered, the cache saw {truth['n_past']}")
    if dom["shaded"] == 0:
        fail("no token is shaded as held by any (layer, head)")
    if not dom["output"]:
        fail("no generated text shown")
    if len(dom["heads"]) != n_heads:
        fail(f"the cache map lists {len(dom['heads'])} heads for layer {args.layer}, the model has {n_heads}")
    want = [len(h["positions"]) for h in truth["layers"][0]["heads"]]
    if dom["heads"] != want or any(k != args.budget for k in dom["heads"]):
        fail(f"kept per head {dom['heads']}: want the budget {args.budget} in each (server: {want})")
    if dom["drawnPixels"] == 0:
        fail("the cache map canvas is blank")
    browser.screenshot(args.screenshot)

    # A bad policy: the server's 400 is shown on the page, which stops.
    browser.open(page_url(args.server, prompt=args.prompt, kv="bogus:x=1", kv2="", max_tokens=4))
    state = browser.wait_for(WAIT_FOR_END, 30, "the bad request to end")
    error = browser.js("return document.getElementById('error').textContent;")
    if state != "error" or "HTTP 400" not in error or "bogus" not in error:
        fail(f"a bad policy should show the server's 400 inline; state {state}, error '{error}'")
    # The full cache first and the policy second: the page opens on the
    # evicting run, under the explanation of what it shows.
    browser.open(page_url(args.server, prompt=args.prompt, kv="full", kv2=args.kv, max_tokens=8,
                          temperature=0))
    state = browser.wait_for(WAIT_FOR_END, args.timeout, "the two runs to end")
    opened = browser.js("return {selected: window.h2oPlayground.selected,"
                        " intro: document.getElementById('intro').textContent};")
    if state != "done" or opened["selected"] != 1:
        fail(f"with full beside {args.kv} the page shows run {opened['selected']} ({state})")
    if "heavy hitters" not in opened["intro"]:
        fail(f"the page does not say what it shows: {opened['intro']!r}")

    # Chat, two turns: the second sends the first back and the server's
    # prompt cache resumes it.
    browser.open(page_url(args.server, mode="chat", prompt="Tell me a story.", kv=args.kv, kv2="",
                          max_tokens=8, temperature=0))
    state = browser.wait_for(WAIT_FOR_END, args.timeout, "the first chat turn to end")
    if state != "done":
        fail(f"the first chat turn ended in state {state}")
    browser.js("document.getElementById('prompt').value = 'And then?';"
               "document.getElementById('run').click();")
    state = browser.wait_for(
        "const p = window.h2oPlayground; const s = document.body.dataset.state;"
        "return p.runs[0].messages.length === 2 && (s === 'done' || s === 'error') ? s : null;",
        args.timeout, "the second chat turn to end")
    turn = browser.js("""
const p = window.h2oPlayground;
const run = document.querySelector('.run.selected');
return {history: [...run.querySelectorAll('.history > div')].map((d) => d.textContent),
        status: run.querySelector('.status').textContent,
        kept: p.conversations[p.runs[0].kv].length,
        usage: p.runs[0].usage || null};""")
    if state != "done" or len(turn["history"]) != 2 or turn["history"][0] != "> Tell me a story.":
        fail(f"the second chat turn ({state}) shows the history {turn['history']}")
    if turn["kept"] != 4:
        fail(f"the conversation holds {turn['kept']} messages after two turns, want 4")
    if "reused from the prompt cache" not in turn["status"]:
        fail(f"the second turn reused nothing from the prompt cache: {turn['status']!r}, "
             f"usage {turn['usage']}")
    return {"tokens": dom["tokens"], "heads": dom["heads"], "n_head_kv": n_heads,
            "screenshot": args.screenshot, "bad_policy_error": error,
            "chat_second_turn": turn["status"]}


MEASURE = """
const n = arguments[0];
const times = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  render();
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const s = window.h2oPlayground.runs[window.h2oPlayground.selected].kvState;
return {median_ms: times[Math.floor(n / 2)], max_ms: times[n - 1], n_past: s.n_past,
        layers_shown: s.layers.length, tokens: document.querySelectorAll('.run.selected .tok').length};
"""


def measure(browser, args):
    with open(args.prompt_file) as f:
        prompt = f.read()
    # A prompt this long does not fit a URL (the server takes 8 KiB): it is
    # typed into the form instead.
    url = page_url(args.server, kv=args.kv, kv2="", max_tokens=args.max_tokens, temperature=0,
                   layer=0)
    browser.open(url.replace("&run=1", ""))
    browser.wait_for("return window.h2oPlayground.model ? true : null;", 30, "the page to load")
    browser.js("document.getElementById('prompt').value = arguments[0];"
               "document.getElementById('form').requestSubmit();", prompt)
    state = browser.wait_for(WAIT_FOR_END, args.timeout, "the long run to end")
    if state != "done":
        fail("the long run failed: " + browser.js("return document.getElementById('error').textContent;"))
    out = {"layer": browser.js(MEASURE, args.renders)}
    browser.js("const l = document.getElementById('layer'); l.value = 'all';"
               "l.dispatchEvent(new Event('change'));")
    browser.wait_for("const h = window.h2oPlayground;"
                     "const s = h.runs[h.selected].kvState; return s && s.layerChoice === 'all';",
                     60, "all layers to load")
    out["all_layers"] = browser.js(MEASURE, args.renders)
    if args.screenshot:
        browser.screenshot(args.screenshot)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["check", "measure"])
    p.add_argument("--server", required=True, help="http://127.0.0.1:PORT")
    p.add_argument("--kv", default="h2o:heavy=8,recent=8")
    p.add_argument("--budget", type=int, default=16, help="check: tokens each head keeps")
    p.add_argument("--layer", type=int, default=0)
    p.add_argument("--prompt", default="Once upon a time, there was a little girl named Lily.")
    p.add_argument("--prompt-file")
    p.add_argument("--max-tokens", type=int, default=40)
    p.add_argument("--renders", type=int, default=20)
    p.add_argument("--screenshot")
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    p.add_argument("--chromedriver", default=shutil.which("chromedriver") or "chromedriver")
    args = p.parse_args()
    if args.mode == "check" and not args.screenshot:
        p.error("check needs --screenshot")
    if args.mode == "measure" and not args.prompt_file:
        p.error("measure needs --prompt-file")
    browser = Browser(args.chromedriver, args.chromium)
    try:
        result = check(browser, args) if args.mode == "check" else measure(browser, args)
    finally:
        browser.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
