#!/usr/bin/env python3
"""h2o chat over a pseudo-terminal, as a user types: two turns with the KV
cache carried (the second turn's memory line counts more tokens than the
first and the cache was not refilled from scratch), Ctrl-C stopping a long
reply, the chat going on after it, and Ctrl-D ending it with exit code 0.

    chat_pty_test.py H2O MODEL
"""
import os
import pty
import re
import select
import signal
import sys
import time

h2o, model = sys.argv[1], sys.argv[2]
TIMEOUT = 60


def main():
    pid, fd = pty.fork()
    if pid == 0:
        # Replies run until -n (--ignore-eos): long enough for Ctrl-C to
        # land inside one.
        os.execv(h2o, [h2o, "chat", "-m", model, "--chat-template", "chatml", "--temp", "0",
                       "-n", "1500", "--ignore-eos", "-t", "1", "-c", "8192",
                       "--kv", "h2o:heavy=64,recent=64"])
    out = b""

    def read_until(pattern, start):
        nonlocal out
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            m = re.compile(pattern).search(out.decode("utf-8", "replace"), start)
            if m:
                return m
            r, _, _ = select.select([fd], [], [], 0.5)
            if r:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
        sys.exit(f"timed out waiting for {pattern!r}; got:\n{out.decode('utf-8', 'replace')}")

    TURN = r"\[(\d+) prompt tokens fed this turn\] KV cache .*? a full cache of (\d+) tokens"

    read_until(r"> ", 0)
    os.write(fd, b"Tell me a story about a cat.\n")
    first = read_until(TURN, 0)
    n1 = int(first.group(2))
    read_until(r"> ", first.end())
    os.write(fd, b"And then?\n")
    second = read_until(TURN, first.end())
    fed2, n2 = int(second.group(1)), int(second.group(2))
    # Carried: the second turn feeds only its own message, fewer tokens than
    # the cache already held (a refill would feed the whole conversation).
    if not (n2 > n1 and fed2 < n1):
        sys.exit(f"turn 2 fed {fed2} prompt tokens into a cache of {n1} (now {n2}): not carried")
    # A long reply, stopped by Ctrl-C (SIGINT to the foreground process).
    read_until(r"> ", second.end())
    mark = len(out.decode("utf-8", "replace"))
    os.write(fd, b"/long\n")
    time.sleep(0.05)
    os.kill(pid, signal.SIGINT)
    stopped = read_until(r"\[stopped\]", mark)
    after = read_until(r"> ", stopped.end())
    # Still talking after the interrupt, then Ctrl-D.
    os.write(fd, b"Bye.\n")
    read_until(r"> ", after.end())
    os.write(fd, b"\x04")
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                sys.exit(f"h2o chat exited with {code}:\n{out.decode('utf-8', 'replace')}")
            return
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                pass
    os.kill(pid, signal.SIGKILL)
    sys.exit("h2o chat did not exit on Ctrl-D")


main()
