#!/usr/bin/python3
"""The copy stage before train_recall.py: random tokens in which one run of
8..L/3 tokens repeats at a random distance, loss on the repeat only, until
the model copies (induction heads). A 2x256x8x4 model's copy loss stayed
near ln(509) = 6.2 for 400 steps, then fell to 0.4 by step 600 and 0.05 by
1000 (64 x 64 tokens a step, lr 1e-3, 1 thread of a Zen 3: 0.5 s a step).
Its checkpoint starts train_recall.py --init CKPT --shape 2x256x8x4.

  SHAPE=2x256x8x4 STEPS=1500 CKPT=/tmp/copy.pt /usr/bin/python3 tools/train/copy_stage.py
"""
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.argv = sys.argv[:1]
import train_recall as T  # noqa: E402

shape = os.environ.get("SHAPE", "2x256x8x4")
lr = float(os.environ.get("LR", "1e-3"))
L = int(os.environ.get("L", "64"))
B = int(os.environ.get("B", "64"))
steps = int(os.environ.get("STEPS", "1500"))
T.Config.n_layers, T.Config.dim, T.Config.n_heads, T.Config.n_kv_heads = (
    int(v) for v in shape.split("x"))
T.Config.hidden = T.Config.dim * 8 // 3 // 32 * 32
torch.set_num_threads(int(os.environ.get("THREADS", "1")))
torch.manual_seed(1)
rng = random.Random(1)
m = T.Model(T.Config())
opt = torch.optim.AdamW(m.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
t0 = time.time()
for step in range(1, steps + 1):
    ids = torch.randint(3, T.VOCAB, (B, L))
    w = torch.zeros(B, L)
    for b in range(B):
        run = rng.randrange(8, L // 3)
        first = rng.randrange(0, L - 2 * run)
        second = rng.randrange(first + run, L - run + 1)
        ids[b, second:second + run] = ids[b, first:first + run]
        w[b, second + 1:second + run] = T.COPY_WEIGHT
    for g in opt.param_groups:
        g["lr"] = lr * min(1, step / 50)
    loss, _, copy = T.loss_of(m, ids, w)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    if step % 25 == 0:
        print(step, f"copy {copy.item():.3f}", f"{time.time() - t0:.0f}s", flush=True)
    if step % 250 == 0 or step == steps:
        torch.save({"model": m.state_dict(), "step": step}, os.environ["CKPT"])
