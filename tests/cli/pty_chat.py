"""h2o chat under a pseudo-terminal, for the tests that type at it as a
user does (arrow keys, Ctrl-C, Ctrl-D): what it printed so far, waiting for
a pattern in it, and its exit."""
import os
import pty
import re
import select
import signal
import sys
import termios
import time

TIMEOUT = int(os.environ.get("PTY_TIMEOUT", "60"))
# The note after every turn: "[N prompt tokens fed this turn] KV cache ...
# a full cache of M tokens ..." (M: the tokens the conversation has fed).
TURN = r"\[(\d+) prompt tokens fed this turn\] KV cache .*? a full cache of (\d+) tokens"


class PtyChat:
    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(argv[0], argv)
        self.out = b""

    def text(self):
        return self.out.decode("utf-8", "replace")

    def _pump(self, wait):
        r, _, _ = select.select([self.fd], [], [], wait)
        if not r:
            return True
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:
            return False
        self.out += chunk
        return bool(chunk)

    def read_until(self, pattern, start=0):
        """The first match of `pattern` at or after character `start`."""
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            m = re.compile(pattern).search(self.text(), start)
            if m:
                return m
            if not self._pump(0.5):
                break
        self.fail(f"timed out waiting for {pattern!r}")

    def prompt(self, start=0):
        """Waits for the "> " prompt at or after `start`, and for the line
        editor to take the terminal (the pty leaves canonical mode): keys
        typed before that meet the kernel's line discipline instead, which
        turns a Ctrl-D into a NUL byte once the editor takes over."""
        m = self.read_until(r"> ", start)
        deadline = time.time() + TIMEOUT
        while termios.tcgetattr(self.fd)[3] & termios.ICANON:
            if time.time() > deadline:
                self.fail("the line editor never took the terminal")
            self._pump(0.01)
        return m

    def send(self, data):
        os.write(self.fd, data)

    def interrupt(self):
        os.kill(self.pid, signal.SIGINT)

    def wait_exit(self):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            self._pump(0.2)
        os.kill(self.pid, signal.SIGKILL)
        self.fail("h2o chat did not exit")

    def fail(self, why):
        sys.exit(f"{why}; h2o chat printed:\n{self.text()}")
