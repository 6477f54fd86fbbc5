#!/usr/bin/env python3
"""h2o chat's line editing and commands over a pseudo-terminal: a line
edited with the left arrow, the up arrow bringing the last line back, every
turn after a reply feeding only the template's text after it (counted
against `h2o tokenize` of the hand-written Llama 3 turn, and the cache's
length adding up exactly, with replies the template would trim), /kv, /save
and /load (the cache resumed from its state file), /clear, an unknown
command, Ctrl-C at the prompt asking before leaving, Ctrl-D; then --load of
the saved file in a new process, and a broken file refused in one line.

    chat_commands_pty_test.py H2O MODEL
"""
import json
import os
import subprocess
import sys
import tempfile

from pty_chat import TURN, PtyChat

h2o, model = sys.argv[1], sys.argv[2]
N = 12  # tokens per reply: -n with --ignore-eos
BUDGET = 64  # h2o:heavy=32,recent=32
ARGS = [h2o, "chat", "-m", model, "--chat-template", "llama3", "--temp", "0", "-n", str(N),
        "--ignore-eos", "-t", "1", "--kv", "h2o:heavy=32,recent=32", "--system", "Be kind."]
LEFT, UP = b"\x1b[D", b"\x1b[A"


def token_count(text):
    # --jsonl: the text exactly (-p and -f trim a document's ends).
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as f:
        f.write(json.dumps({"text": text}) + "\n")
        f.flush()
        out = subprocess.run([h2o, "tokenize", "-m", model, "--no-bos", "-q", "--jsonl", f.name],
                             check=True, capture_output=True, text=True).stdout
    return len(json.loads(out))


def after_reply(user):
    """What the Llama 3 template writes after a reply, through the next
    reply's opening (llama.cpp's format, by hand)."""
    return ("<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n" + user +
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")


class Turns:
    def __init__(self, chat):
        self.chat, self.at, self.length = chat, 0, 0

    def say(self, line):
        """Types `line` (bytes, may hold arrow keys) and Enter; returns
        (tokens fed, cache length) from the turn's note."""
        self.chat.prompt(self.at)
        self.chat.send(line + b"\r")
        m = self.chat.read_until(TURN, self.at)
        self.at = m.end()
        return int(m.group(1)), int(m.group(2))

    def carried(self, line, user_text):
        fed, length = self.say(line)
        want = token_count(after_reply(user_text))
        if fed != want or length != self.length + fed + N:
            self.chat.fail(f"after a cache of {self.length}, {user_text!r} fed {fed} tokens "
                           f"(the turn's text is {want}) and left {length} (want "
                           f"{self.length + want + N}): the history was fed again")
        self.length = length

    def fresh(self, line):
        fed, length = self.say(line)
        if length != fed + N:
            self.chat.fail(f"a fresh conversation left {length} tokens after feeding {fed}")
        self.length = length

    def command(self, line, pattern):
        self.chat.prompt(self.at)
        self.chat.send(line + b"\r")
        m = self.chat.read_until(pattern, self.at)
        self.at = m.end()
        return m


def main(scratch):
    saved_path = os.path.join(scratch, "chat.json")
    chat = PtyChat(ARGS)
    turns = Turns(chat)
    turns.fresh(b"Tell me about a ct" + LEFT + b"a")
    turns.carried(b"And then?", "And then?")
    turns.carried(UP, "And then?")  # the up arrow: the last line again
    held = int(turns.command(b"/kv", r"each KV head holds (\d+)").group(1))
    if held > BUDGET:
        chat.fail(f"/kv: each head holds {held} tokens over a budget of {BUDGET}")
    saved_length = turns.length
    turns.command(b"/save " + saved_path.encode(), r"saved 7 messages to .*\(%d tokens\)" % saved_length)
    turns.command(b"/nope", r"unknown command /nope \(/help lists them\)")
    turns.command(b"/help", r"/load FILE")
    turns.command(b"/clear", r"cleared")
    turns.length = 0
    turns.fresh(b"Hello")
    turns.command(b"/load " + saved_path.encode(), r"the cache goes on from its state \(%d tokens\)"
                  % saved_length)
    turns.length = saved_length
    turns.carried(b"Bye", "Bye")
    # Ctrl-C at the prompt asks; "n" goes on.
    chat.prompt(turns.at)
    chat.send(b"\x03")
    turns.at = chat.read_until(r"leave the chat\? \[y/N\] ", turns.at).end()
    chat.send(b"n\r")
    turns.command(b"/kv", r"9 messages, %d tokens fed" % turns.length)
    chat.prompt(turns.at)
    chat.send(b"\x04")
    if chat.wait_exit() != 0:
        chat.fail("h2o chat did not exit with 0 on Ctrl-D")

    with open(saved_path, encoding="utf-8") as f:
        saved = json.load(f)
    roles = [m["role"] for m in saved["messages"]]
    if roles != ["system", "user", "assistant", "user", "assistant", "user", "assistant"]:
        sys.exit(f"{saved_path}: roles {roles}")
    if saved["messages"][1]["content"] != "Tell me about a cat" or saved["kv_tokens"] != saved_length:
        sys.exit(f"{saved_path}: {saved}")

    # A new process goes on from the file and its state.
    again = PtyChat(ARGS + ["--load", saved_path])
    again.read_until(r"the cache goes on from its state \(%d tokens\)" % saved_length)
    turns = Turns(again)
    turns.length = saved_length
    turns.carried(b"Once more", "Once more")
    again.send(b"/exit\r")
    if again.wait_exit() != 0:
        again.fail("h2o chat did not exit with 0 on /exit")

    broken = os.path.join(scratch, "chat_broken.json")
    with open(broken, "w", encoding="utf-8") as f:
        f.write('{"messages": [{"role": "user", "content": 3}]}')
    run = subprocess.run(ARGS + ["--load", broken], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    want = (f"h2o: error: {broken}: each message needs a string 'role' and a string "
            "'content'\n")
    if run.returncode != 1 or not run.stderr.endswith(want):
        sys.exit(f"--load of a broken file: exit {run.returncode}, stderr {run.stderr!r}")


with tempfile.TemporaryDirectory() as scratch_dir:
    main(scratch_dir)
