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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOCAB_GGUF = os.path.join(REPO, "models", "stories260K.gguf")
TOKENIZER_BIN = os.path.join(REPO, "models", "tok512.bin")
ESSAY = os.path.join(REPO, "src", "eval", "ruler", "essay.txt")

# (length, steps, batch): each stage at one length, curriculum short to long,
# 4096 tokens a step.
STAGES = [(512, 1800, 8), (1024, 700, 4), (2048, 600, 2)]
POOL_STEPS = 500  # a fresh pool of task items (new seed) every this many steps
TASKS = ["niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
         "niah_multikey_2", "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe",
         "fwe", "passkey"]
TEXT_SHARE = 0.2  # of each batch: plain text (language), the rest tasks
# Each token's weight in the loss. A 512-token item has about 10 answer
# tokens: at these weights answers are a quarter of a 512-token batch's
# loss, where a weight of 1 on text and 0.1 on prompts left them 4% and
# 1200 steps retrieved nothing.
ANSWER_WEIGHT = 1.0  # a task's answer and the end of text after it
PROMPT_WEIGHT = 0.02  # the rest of a task (instruction, haystack, question)
TEXT_WEIGHT = 0.1  # plain text
EOS = 2  # the bundled vocabulary's end of text


class Config:
    # Heads of 32 dimensions (q8_0 K/V rows), GQA 3:1; 2.4M parameters, so
    # that 2 CPU cores train it in hours.
    dim = 192
    hidden = 512
    n_layers = 6
    n_heads = 6
    n_kv_heads = 2
    vocab = 512
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


def make_items(h2o, length, count, seed, work):
    """Task sequences of `length` tokens: (ids, index where the answer starts).
    The tasks whose prompt does not fit the length are left out of it."""
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
    prompts = [it["context"] + it["question"] for it in items]
    fulls = [p + answer_text(it) for p, it in zip(prompts, items)]
    prompt_ids = tokenize(h2o, prompts)
    full_ids = tokenize(h2o, fulls)
    out = []
    for p, full in zip(prompt_ids, full_ids):
        start = 0
        while start < len(p) and start < len(full) and p[start] == full[start]:
            start += 1
        out.append((full[:length], start))
    return out


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


def pool(args, length, batch, seed):
    """The task items of one pool, made once into the data folder and read
    after: (ids, index where the answer starts) each."""
    path = os.path.join(args.data, f"pool_{length}_{seed}.pt.gz")
    if not os.path.exists(path):
        if not args.h2o:
            sys.exit(f"{path} is missing and there is no --h2o to make it")
        items = make_items(args.h2o, length, POOL_STEPS * batch, seed, args.data)
        ids = torch.full((len(items), length), -1, dtype=torch.int16)
        for i, (seq, _) in enumerate(items):
            ids[i, :len(seq)] = torch.tensor(seq, dtype=torch.int16)
        save_gz({"ids": ids, "start": torch.tensor([s for _, s in items])}, path)
    saved = load_gz(path)
    return [([t for t in row.tolist() if t >= 0], start)
            for row, start in zip(saved["ids"], saved["start"].tolist())]


def essay_ids(args):
    """The essay's tokens, paragraph by paragraph, BOS before each."""
    path = os.path.join(args.data, "essay.pt.gz")
    if not os.path.exists(path):
        if not args.h2o:
            sys.exit(f"{path} is missing and there is no --h2o to make it")
        paragraphs = [p for p in open(ESSAY).read().split("\n\n") if p.strip()]
        ids = []
        for doc in tokenize(args.h2o, paragraphs):
            ids.extend(doc)
        save_gz(ids, path)
    return load_gz(path)


def text_windows(ids, length, count, rng):
    """Plain-text sequences: windows of the essay's tokens (loss everywhere)."""
    out = []
    for _ in range(count):
        at = rng.randrange(0, len(ids) - length)
        out.append((ids[at:at + length], 1))
    return out


def batch_tensors(samples, length):
    """Ids padded with EOS, and each token's weight as a target: a task's
    answer and the EOS after it (so that generation stops there)
    ANSWER_WEIGHT, its prompt PROMPT_WEIGHT, plain text TEXT_WEIGHT, the
    rest of the padding 0."""
    ids = torch.full((len(samples), length), EOS, dtype=torch.long)
    weight = torch.zeros((len(samples), length))
    for i, (seq, start) in enumerate(samples):
        ids[i, :len(seq)] = torch.tensor(seq)
        if start > 1:
            weight[i, 1:len(seq)] = PROMPT_WEIGHT
            weight[i, start:min(len(seq) + 1, length)] = ANSWER_WEIGHT
        else:
            weight[i, 1:len(seq)] = TEXT_WEIGHT
    return ids, weight


def loss_of(model, ids, weight):
    """The weighted loss, and the mean loss of the answer tokens alone."""
    logits = model(ids[:, :-1])
    targets = ids[:, 1:]
    w = weight[:, 1:]
    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                             reduction="none").view_as(w)
    answers = w == ANSWER_WEIGHT
    answer_loss = (losses * answers).sum() / answers.sum().clamp(min=1)
    return (losses * w).sum() / w.sum().clamp(min=1), answer_loss.detach()


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
    ap.add_argument("--shape", help="layers x dim x heads x kv-heads, e.g. 2x128x4x2 (default "
                                    f"{Config.n_layers}x{Config.dim}x{Config.n_heads}x"
                                    f"{Config.n_kv_heads}); heads of 32 keep q8_0 K/V rows")
    args = ap.parse_args()
    if args.shape:
        Config.n_layers, Config.dim, Config.n_heads, Config.n_kv_heads = (
            int(v) for v in args.shape.split("x"))
        Config.hidden = Config.dim * 8 // 3 // 32 * 32
    args.data = args.data or os.path.join(args.out, "data")
    os.makedirs(args.data, exist_ok=True)
    stages = parse_stages(args.stages)
    total_steps = sum(s for _, s, _ in stages)
    if args.prepare_only:
        essay_ids(args)
        pools = {}
        for step in range(total_steps):
            length, batch = stage_of(stages, step)
            pools[(length, pool_seed(args, step))] = batch
        for (length, seed), batch in pools.items():
            pool(args, length, batch, seed)
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
    if args.export_only:
        return export(args, model, stages, state)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.2f}M parameters, {total_steps} steps", flush=True)
    started = time.time()
    seconds_before = state["seconds"]
    items, items_key = [], None
    text = essay_ids(args)

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
            items, items_key = pool(args, length, batch, key[1]), key
        n_text = int(round(batch * TEXT_SHARE))
        samples = rng.sample(items, batch - n_text) + text_windows(text, length, n_text, rng)
        ids, weight = (x.to(args.device) for x in batch_tensors(samples, length))
        lr = args.lr * min(1.0, (step + 1) / 200) * (0.1 + 0.9 * 0.5 *
                                                    (1 + math.cos(math.pi * step / total_steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        loss, answer_loss = loss_of(model, ids, weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        state["step"] += 1
        if state["step"] % 20 == 0:
            elapsed = seconds_before + time.time() - started
            state["log"].append({"step": state["step"], "length": length, "loss": loss.item(),
                                 "answer_loss": answer_loss.item(), "lr": lr, "seconds": elapsed})
            print(f"step {state['step']}/{total_steps} len {length} loss {loss.item():.4f} "
                  f"answer {answer_loss.item():.4f} lr {lr:.2e} {elapsed / 60:.1f} min",
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
