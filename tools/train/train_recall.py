#!/usr/bin/python3
"""Trains models/recall.gguf: a small llama-architecture model that can
retrieve, so that the long-context suite (`h2o mktask ruler`, `h2o eval`)
measures something on a model the repository ships.

Debian's python3-torch (apt), on CPU; nothing downloaded. The data are the
repository's own: the essay haystack (src/eval/ruler/essay.txt) as plain
text, and the suite's task families made by `h2o mktask ruler --split train`
(keys and common words disjoint from evaluation's, other seeds), tokenized
by `h2o tokenize` with the bundled 512-token vocabulary. Short contexts
first: each stage trains at one length, then the next doubles it.

The model is llama2.c's architecture (RMSNorm, RoPE on interleaved pairs,
SwiGLU, GQA, tied classifier), written as a llama2.c v0 checkpoint that
`h2o convert llama2c` turns into the GGUF (the project's own writer).

  /usr/bin/python3 tools/train/train_recall.py --h2o build/bin/h2o --out /tmp/recall
  (resumes from OUT/checkpoint.pt; --minutes bounds one run)

The data are made first, by the h2o binary, into OUT/data (--prepare-only
stops there), so that a machine without the binary can train on a copy of
that folder (--device cuda runs the same schedule on a GPU).
"""
import argparse
import gzip
import io
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import drills

VOCAB_GGUF = os.path.join(drills.REPO, "models", "stories260K.gguf")
TOKENIZER_BIN = os.path.join(drills.REPO, "models", "tok512.bin")

# (length, steps, batch): each stage at one length, curriculum short to long.
STAGES = [(512, 1000, 8), (1024, 500, 4), (2048, 350, 2)]
POOL_STEPS = 500  # a fresh pool of items (new seed) every this many steps
TASKS = ["niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
         "niah_multikey_2", "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe",
         "fwe", "passkey"]
# Of each batch's sequences: packed drills (the most answers a token), the
# suite's own items at the stage's length where they fit (else more drills),
# plain text (language), and repeated random runs (copying).
SUITE_SHARE = 0.25
TEXT_SHARE = 0.1
REPEAT_SHARE = 0.2
# The first steps: half the batch repeated runs, so that induction heads
# (which every retrieval answer copies through) form first.
WARMUP_REPEAT_SHARE = 0.5
WARMUP_REPEAT_STEPS = 300
DRILLS_PER_POOL = 6000
TOKENS_PER_UNIT = 30  # about a haystack unit's tokens (a noise line, a sentence)
ITEM_TOKENS = 160  # about a drill's tokens besides its haystack
# Each token's weight in the loss. One suite item puts one answer (a few
# tokens) in a sequence of thousands; earlier runs that trained on those
# alone, with answers a quarter of the loss or all of it, copied nothing in
# 1800 steps. Packed drills and repeated runs make copyable tokens common.
ANSWER_WEIGHT = 1.0  # a task's answer and the end of text after it
COPY_WEIGHT = 0.5  # the second copy of a repeated run
PROMPT_WEIGHT = 0.02  # the rest of a task (instruction, haystack, question)
TEXT_WEIGHT = 0.1  # plain text
EOS = 2  # the bundled vocabulary's end of text
VOCAB = 512


class Config:
    # Heads of 32 dimensions (q8_0 K/V rows), GQA 2:1, 3M parameters; four
    # layers: a two-layer model formed induction heads in 200 steps where a
    # six-layer one had not in 700 (tools/train/README.md).
    dim = 256
    hidden = 672
    n_layers = 4
    n_heads = 8
    n_kv_heads = 4
    vocab = VOCAB
    seq_len = 2048
    norm_eps = 1e-5
    rope_base = 10000.0


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(c, length):
    head_dim = c.dim // c.n_heads
    freqs = 1.0 / (c.rope_base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(length).float(), freqs)  # [T, head_dim/2]
    return torch.cos(angles), torch.sin(angles)


def rotate(x, cos, sin):
    """llama2.c's RoPE: pairs (2i, 2i+1) rotated by position * freq_i."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    return out.flatten(-2)


def attend(q, k, v, group, block=256):
    """Causal attention of [b, heads, t, d] queries on [b, kv_heads, t, d]
    keys and values, `group` query heads to a KV head. Fused where the torch
    has it (2.0 and later). On older ones written out a block of queries at a
    time, each on the keys up to its end only: half the work of a masked
    square, and score tensors small enough to stay in cache."""
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    outs = []
    for start in range(0, t, block):
        end = min(start + block, t)
        scores = (q[:, :, start:end] @ k[:, :, :end].transpose(-2, -1)) * scale
        future = torch.ones(end - start, end, dtype=torch.bool, device=q.device).triu(start + 1)
        scores = scores.masked_fill(future, float("-inf"))
        outs.append(torch.softmax(scores, dim=-1) @ v[:, :, :end])
    return torch.cat(outs, dim=2)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.head_dim = c.dim // c.n_heads
        self.attention_norm = RMSNorm(c.dim, c.norm_eps)
        self.wq = nn.Linear(c.dim, c.dim, bias=False)
        self.wk = nn.Linear(c.dim, c.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(c.dim, c.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(c.dim, c.dim, bias=False)
        self.ffn_norm = RMSNorm(c.dim, c.norm_eps)
        self.w1 = nn.Linear(c.dim, c.hidden, bias=False)
        self.w2 = nn.Linear(c.hidden, c.dim, bias=False)
        self.w3 = nn.Linear(c.dim, c.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, t, self.c.n_heads, self.head_dim)
        k = self.wk(h).view(b, t, self.c.n_kv_heads, self.head_dim)
        v = self.wv(h).view(b, t, self.c.n_kv_heads, self.head_dim)
        q = rotate(q, cos[:, None, :], sin[:, None, :]).transpose(1, 2)
        k = rotate(k, cos[:, None, :], sin[:, None, :]).transpose(1, 2)
        v = v.transpose(1, 2)
        out = attend(q, k, v, self.c.n_heads // self.c.n_kv_heads)
        x = x + self.wo(out.transpose(1, 2).reshape(b, t, -1))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.tok_embeddings = nn.Embedding(c.vocab, c.dim)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.norm = RMSNorm(c.dim, c.norm_eps)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        for block in self.layers:  # GPT-2's scaled residual projections
            for w in (block.wo.weight, block.w2.weight):
                nn.init.normal_(w, std=0.02 / math.sqrt(2 * c.n_layers))

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = (x.to(ids.device) for x in rope_tables(self.c, t))
        x = self.tok_embeddings(ids)
        for block in self.layers:
            x = block(x, cos, sin)
        return self.norm(x) @ self.tok_embeddings.weight.t()  # tied classifier


def export_llama2c(model, path):
    """llama2.c's v0 checkpoint: 7 int32, then float32 tensors in its order."""
    c = model.c
    head_dim = c.dim // c.n_heads
    with open(path, "wb") as f:
        f.write(struct.pack("7i", c.dim, c.hidden, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab,
                            c.seq_len))

        def put(t):
            f.write(t.detach().float().contiguous().numpy().tobytes())

        put(model.tok_embeddings.weight)
        for name in ["attention_norm.weight", "wq.weight", "wk.weight", "wv.weight", "wo.weight",
                     "ffn_norm.weight", "w1.weight", "w2.weight", "w3.weight"]:
            for block in model.layers:
                put(block.get_parameter(name))
        put(model.norm.weight)
        cos, sin = rope_tables(c, c.seq_len)
        put(cos)
        put(sin)
    assert os.path.getsize(path) == 28 + 4 * (sum(p.numel() for p in model.parameters()) +
                                             c.seq_len * head_dim)


# ---- data -------------------------------------------------------------------------------------

def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def tokenize(h2o, texts):
    """Token ids of each text (BOS first), by the project's tokenizer."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.jsonl")
        with open(src, "w") as f:
            for t in texts:
                f.write(json.dumps({"text": t}) + "\n")
        out = subprocess.run([h2o, "tokenize", "-m", VOCAB_GGUF, "--jsonl", src, "-q"],
                             check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def answer_text(item):
    """The gold continuation after a task's answer prefix."""
    out = item["outputs"]
    task = item["task"]
    if task == "vt":
        return " ".join(out)
    if task == "cwe":
        return " " + " ".join(f"{i + 1}. {w}" for i, w in enumerate(out))
    if task == "fwe":
        return " " + " ".join(out)
    if len(out) == 1:
        return f" {out[0]}."
    return " " + ", ".join(out[:-1]) + " and " + out[-1] + "."


def tokenize_items(h2o, items, length):
    """(ids, index where the answer starts) of each item whose prompt,
    answer and closing EOS fit in `length` tokens."""
    prompts = [it["context"] + it["question"] for it in items]
    fulls = [p + answer_text(it) for p, it in zip(prompts, items)]
    out = []
    for p, full in zip(tokenize(h2o, prompts), tokenize(h2o, fulls)):
        start = 0
        while start < len(p) and start < len(full) and p[start] == full[start]:
            start += 1
        if len(full) < length:
            out.append((full, start))
    return out


def make_items(h2o, length, count, seed, work):
    """Suite items of `length` tokens made by `h2o mktask ruler --split
    train`; the tasks whose prompt does not fit the length are left out."""
    path = os.path.join(work, f"tasks_{length}_{seed}.jsonl")
    per_task = max(1, count // len(TASKS))
    items = []
    for task in TASKS:
        made = subprocess.run([h2o, "mktask", "ruler", "-m", VOCAB_GGUF, "--split", "train",
                               "--tasks", task, "--ctx", str(length), "-n", str(per_task), "-s",
                               str(seed), "-o", path, "-q"], capture_output=True, text=True)
        if made.returncode == 0:
            items += [json.loads(line) for line in open(path)]
            os.remove(path)
        elif "cannot be made" not in made.stderr:
            sys.exit(made.stderr)
    return tokenize_items(h2o, items, length + 1)


def pool_seed(args, step):
    return args.seed * 1000003 + step // POOL_STEPS


def save_gz(obj, path):
    """torch.save, gzipped: a pool's haystacks repeat, so it packs tenfold."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    with gzip.open(path + ".tmp", "wb") as f:
        f.write(buf.getvalue())
    os.replace(path + ".tmp", path)


def load_gz(path):
    with gzip.open(path, "rb") as f:
        return torch.load(io.BytesIO(f.read()))


def cached(args, name, make):
    """Items (ids, index where the answer starts) made once by `make` into
    the data folder under `name`, and read from there after."""
    path = os.path.join(args.data, name + ".pt.gz")
    if not os.path.exists(path):
        if not args.h2o:
            sys.exit(f"{path} is missing and there is no --h2o to make it")
        items = make()
        save_gz({"ids": torch.tensor([t for seq, _ in items for t in seq], dtype=torch.int16),
                 "sizes": torch.tensor([len(seq) for seq, _ in items]),
                 "start": torch.tensor([s for _, s in items])}, path)
    saved = load_gz(path)
    ids = saved["ids"].tolist()
    out, at = [], 0
    for size, start in zip(saved["sizes"].tolist(), saved["start"].tolist()):
        out.append((ids[at:at + size], start))
        at += size
    return out


def pool(args, length, batch, seed):
    """The suite's items of one pool (those that fit `length`)."""
    return cached(args, f"pool_{length}_{seed}",
                  lambda: make_items(args.h2o, length, POOL_STEPS * batch, seed, args.data))


def drill_pool(args, length, seed):
    """Drills (tools/train/drills.py) of one pool, of every size up to the
    length: enough that a step's packed sequences rarely repeat an item."""
    def make():
        maker = drills.Maker(seed)
        return tokenize_items(args.h2o, maker.items(DRILLS_PER_POOL,
                                                 (length - ITEM_TOKENS) // TOKENS_PER_UNIT),
                              length)
    return cached(args, f"drills_{length}_{seed}", make)


def essay_ids(args):
    """The essay's tokens, paragraph by paragraph, BOS before each."""
    path = os.path.join(args.data, "essay.pt.gz")
    if not os.path.exists(path):
        if not args.h2o:
            sys.exit(f"{path} is missing and there is no --h2o to make it")
        paragraphs = [p for p in open(drills.ESSAY).read().split("\n\n") if p.strip()]
        ids = []
        for doc in tokenize(args.h2o, paragraphs):
            ids.extend(doc)
        save_gz(ids, path)
    return load_gz(path)


def digit_ids(args):
    """The ids of the ten digits (the vocabulary splits numbers into them)."""
    path = os.path.join(args.data, "digits.json")
    if not os.path.exists(path):
        if not args.h2o:
            sys.exit(f"{path} is missing and there is no --h2o to make it")
        with open(path, "w") as f:  # " 0 1 ... 9": BOS, then a space before each digit
            json.dump(tokenize(args.h2o, [" ".join("0123456789")])[0][2::2], f)
    return json.load(open(path))


# Each builder below makes one training sequence: (ids, weight of each id
# as a target), at most `length` long; weight[0] is 0 (nothing predicts it).

def task_sequence(seq, start, length):
    """A task item and the EOS after its answer, so that generation stops."""
    ids = (seq + [EOS])[:length]
    weight = [0.0] + [PROMPT_WEIGHT] * (start - 1) + [ANSWER_WEIGHT] * (len(seq) + 1 - start)
    return ids, weight[:len(ids)]


def packed_sequence(items, length, rng):
    """Drills drawn at random and laid end to end until the next does not
    fit: a few dozen answers in one sequence."""
    ids, weight = [], []
    for _ in range(64):
        seq, start = rng.choice(items)
        if len(ids) + len(seq) + 1 > length:
            if len(ids) > length // 2:
                break
            continue
        i, w = task_sequence(seq, start, length)
        ids += i
        weight += w
    return ids, weight


def text_sequence(text, length, rng):
    """A window of the essay's tokens."""
    at = rng.randrange(0, len(text) - length)
    return text[at:at + length], [0.0] + [TEXT_WEIGHT] * (length - 1)


def repeat_sequence(text, length, digits, rng):
    """A window of the essay with runs of random tokens (half of them digits
    only) written twice, the second time at a random distance after the
    first: every token of a second copy after its first can be copied, the
    signal that makes induction heads form."""
    ids, weight = text_sequence(text, length, rng)
    ids, weight = list(ids), [w * 0.5 for w in weight]
    taken = [False] * length

    def free(at, run):
        return not any(taken[at:at + run])

    for _ in range(max(1, length // 64)):
        run = rng.randrange(8, 33)
        first = rng.randrange(1, length - 2 * run)
        second = rng.randrange(first + run, length - run + 1)
        if not (free(first, run) and free(second, run)):
            continue  # runs do not overlap: every copy's target is its run's
        alphabet = digits if rng.random() < 0.5 else range(3, VOCAB)
        tokens = [rng.choice(alphabet) for _ in range(run)]
        for at in (first, second):
            ids[at:at + run] = tokens
            taken[at:at + run] = [True] * run
        weight[second + 1:second + run] = [COPY_WEIGHT] * (run - 1)
    return ids, weight


def make_sequence(rng, suite, drill_items, text, digits, length, repeat_share):
    """One training sequence, its kind drawn by the shares: each sequence of
    a batch draws its own, so a batch of 2 (long contexts) still holds
    answers as often as a batch of 8 (shares rounded per batch gave 2048 x
    2 a text and a repeat and never a task)."""
    r = rng.random()
    if r < TEXT_SHARE:
        return text_sequence(text, length, rng)
    r -= TEXT_SHARE
    if r < repeat_share:
        return repeat_sequence(text, length, digits, rng)
    r -= repeat_share
    if suite and r < SUITE_SHARE:
        return task_sequence(*rng.choice(suite), length)
    return packed_sequence(drill_items, length, rng)


def batch_tensors(sequences, length):
    """Sequences padded with EOS at weight 0."""
    ids = torch.full((len(sequences), length), EOS, dtype=torch.long)
    weight = torch.zeros((len(sequences), length))
    for i, (seq, w) in enumerate(sequences):
        ids[i, :len(seq)] = torch.tensor(seq)
        weight[i, :len(w)] = torch.tensor(w)
    return ids, weight


def loss_of(model, ids, weight):
    """The weighted loss, and the mean loss of answer tokens and of copied
    tokens alone."""
    logits = model(ids[:, :-1])
    targets = ids[:, 1:]
    w = weight[:, 1:]
    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                             reduction="none").view_as(w)

    def mean_where(mask):
        return ((losses * mask).sum() / mask.sum().clamp(min=1)).detach()

    return ((losses * w).sum() / w.sum().clamp(min=1), mean_where(w == ANSWER_WEIGHT),
            mean_where(w == COPY_WEIGHT))


# ---- training ---------------------------------------------------------------------------------

def parse_stages(text):
    """"256x1500x16,512x1000x8": length x steps x batch, one stage each."""
    stages = []
    for part in text.split(","):
        length, steps, batch = (int(x) for x in part.split("x"))
        stages.append((length, steps, batch))
    return stages


def stage_of(stages, step):
    done = 0
    for length, steps, batch in stages:
        if step < done + steps:
            return length, batch
        done += steps
    return stages[-1][0], stages[-1][2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--h2o", help="the h2o binary (mktask, tokenize, convert); without it the data "
                                  "must be in OUT/data and the GGUF is not written")
    ap.add_argument("--out", required=True, help="work directory: checkpoint, data, the GGUF")
    ap.add_argument("--data", help="the data folder (default OUT/data)")
    ap.add_argument("--stages", default=",".join(f"{a}x{b}x{c}" for a, b, c in STAGES),
                    help="length x steps x batch, comma-separated (default %(default)s)")
    ap.add_argument("--prepare-only", action="store_true", help="make the data and stop")
    ap.add_argument("--export-only", action="store_true",
                    help="write the model as the checkpoint has it (mid-training too) and stop")
    ap.add_argument("--minutes", type=float, default=115, help="stop (checkpointed) after this")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where torch has a GPU")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--init", help="start from this checkpoint's weights (copy_stage.py's), "
                    "when OUT has no checkpoint of its own")
    ap.add_argument("--repeat-warmup", type=int, default=WARMUP_REPEAT_STEPS,
                    help="steps with half the batch repeated runs (default %(default)s; 0 when "
                         "--init is a model that retrieves already)")
    ap.add_argument("--shape", help="layers x dim x heads x kv-heads, e.g. 2x128x4x2 (default "
                                    f"{Config.n_layers}x{Config.dim}x{Config.n_heads}x"
                                    f"{Config.n_kv_heads}); heads of 32 keep q8_0 K/V rows")
    args = ap.parse_args()
    if args.shape:
        Config.n_layers, Config.dim, Config.n_heads, Config.n_kv_heads = (
            int(v) for v in args.shape.split("x"))
        Config.hidden = Config.dim * 8 // 3 // 32 * 32
    args.data = args.data or os.path.join(args.out, "data")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.data, exist_ok=True)
    stages = parse_stages(args.stages)
    total_steps = sum(s for _, s, _ in stages)
    if args.prepare_only:
        essay_ids(args)
        digit_ids(args)
        pools = {}
        for step in range(total_steps):
            length, batch = stage_of(stages, step)
            pools[(length, pool_seed(args, step))] = batch
        for (length, seed), batch in pools.items():
            pool(args, length, batch, seed)
            drill_pool(args, length, seed)
            print(f"data: {length}-token pool {seed} ready", flush=True)
        return 0
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    c = Config()
    model = Model(c).to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    state = {"step": 0, "log": [], "seconds": 0.0}
    ckpt = os.path.join(args.out, "checkpoint.pt")
    if os.path.exists(ckpt):
        saved = torch.load(ckpt, map_location=args.device)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        state = saved["state"]
        rng.setstate(saved["rng"])
        torch.set_rng_state(saved["torch_rng"])
        print(f"resumed at step {state['step']}", flush=True)
    elif args.init:
        model.load_state_dict(torch.load(args.init, map_location=args.device)["model"])
        print(f"weights from {args.init}", flush=True)
    if args.export_only:
        return export(args, model, stages, state)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.2f}M parameters, {total_steps} steps", flush=True)
    started = time.time()
    seconds_before = state["seconds"]
    suite, drill_items, items_key = [], [], None
    text = essay_ids(args)
    digits = digit_ids(args)

    def save():
        state["seconds"] = seconds_before + time.time() - started
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state,
                    "rng": rng.getstate(), "torch_rng": torch.get_rng_state()}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)

    while state["step"] < total_steps:
        step = state["step"]
        length, batch = stage_of(stages, step)
        key = (length, pool_seed(args, step))
        if key != items_key:
            suite, items_key = pool(args, length, batch, key[1]), key
            drill_items = drill_pool(args, length, key[1])
        sequences = [make_sequence(rng, suite, drill_items, text, digits, length,
                                   WARMUP_REPEAT_SHARE if step < args.repeat_warmup else REPEAT_SHARE)
                     for _ in range(batch)]
        ids, weight = (x.to(args.device) for x in batch_tensors(sequences, length))
        lr = args.lr * min(1.0, (step + 1) / 200) * (0.1 + 0.9 * 0.5 *
                                                    (1 + math.cos(math.pi * step / total_steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        loss, answer_loss, copy_loss = loss_of(model, ids, weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        state["step"] += 1
        if state["step"] % 20 == 0:
            elapsed = seconds_before + time.time() - started
            state["log"].append({"step": state["step"], "length": length, "loss": loss.item(),
                                 "answer_loss": answer_loss.item(),
                                 "copy_loss": copy_loss.item(), "lr": lr, "seconds": elapsed})
            print(f"step {state['step']}/{total_steps} len {length} loss {loss.item():.4f} "
                  f"answer {answer_loss.item():.4f} copy {copy_loss.item():.4f} lr {lr:.2e} "
                  f"{elapsed / 60:.1f} min",
                  flush=True)
        if state["step"] % 100 == 0:
            save()
        if time.time() - started > args.minutes * 60:
            save()
            print(f"stopped after {args.minutes} minutes at step {state['step']}; rerun to resume",
                  flush=True)
            return 0
    save()
    return export(args, model, stages, state)


def export(args, model, stages, state):
    """recall.bin, train_log.json and (with --h2o) recall.gguf in OUT."""
    bin_path = os.path.join(args.out, "recall.bin")
    export_llama2c(model.cpu(), bin_path)
    with open(os.path.join(args.out, "train_log.json"), "w") as f:
        json.dump({"config": {k: v for k, v in vars(Config).items() if not k.startswith("_")},
                   "stages": stages, "seed": args.seed, "lr": args.lr, "device": args.device,
                   "torch": torch.__version__, "state": state}, f, indent=1)
    if not args.h2o:
        print(f"wrote {bin_path}; convert it with h2o convert llama2c", flush=True)
        return 0
    gguf = os.path.join(args.out, "recall.gguf")
    run([args.h2o, "convert", "llama2c", bin_path, "--tokenizer", TOKENIZER_BIN, "-o", gguf,
         "--name", "recall", "-q"])
    print(f"wrote {gguf} (step {state['step']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
