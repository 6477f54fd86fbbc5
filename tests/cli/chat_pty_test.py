#!/usr/bin/env python3
"""h2o chat over a pseudo-terminal, as a user types: two turns with the KV
cache carried (the second turn's memory line counts more tokens than the
first and the cache was not refilled from scratch), Ctrl-C stopping a long
reply, the chat going on after it, and Ctrl-D ending it with exit code 0.

    chat_pty_test.py H2O MODEL
"""
import sys

from pty_chat import TURN, PtyChat

h2o, model = sys.argv[1], sys.argv[2]


def main():
    # Replies run until -n (--ignore-eos): long enough for Ctrl-C to land
    # inside one.
    chat = PtyChat([h2o, "chat", "-m", model, "--chat-template", "chatml", "--temp", "0",
                    "-n", "1500", "--ignore-eos", "-t", "1", "-c", "8192",
                    "--kv", "h2o:heavy=64,recent=64"])
    chat.prompt()
    chat.send(b"Tell me a story about a cat.\n")
    first = chat.read_until(TURN)
    n1 = int(first.group(2))
    chat.prompt(first.end())
    chat.send(b"And then?\n")
    second = chat.read_until(TURN, first.end())
    fed2, n2 = int(second.group(1)), int(second.group(2))
    # Carried: the second turn feeds only its own message, fewer tokens than
    # the cache already held (a refill would feed the whole conversation).
    if not (n2 > n1 and fed2 < n1):
        chat.fail(f"turn 2 fed {fed2} prompt tokens into a cache of {n1} (now {n2}): not carried")
    # A long reply, stopped by Ctrl-C (SIGINT to the foreground process).
    chat.prompt(second.end())
    mark = len(chat.text())
    chat.send(b"Go on, a long one.\n")
    # Interrupt once the reply has begun (its first pieces are out).
    chat.read_until(r"Go on, a long one\.\r?\n\S", mark)
    chat.interrupt()
    stopped = chat.read_until(r"\[stopped\]", mark)
    after = chat.prompt(stopped.end())
    # Still talking after the interrupt, then Ctrl-D.
    chat.send(b"Bye.\n")
    chat.prompt(after.end())
    chat.send(b"\x04")
    code = chat.wait_exit()
    if code != 0:
        chat.fail(f"h2o chat exited with {code}")


main()
