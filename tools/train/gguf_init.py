#!/usr/bin/python3
"""Reads an F32 GGUF written by `h2o convert llama2c` (models/recall.gguf)
back into train_recall.py's weights, so that a later run continues from the
committed model (`--init CKPT`) instead of repeating the copy stage and the
short stages: the repository keeps the GGUF, not the torch checkpoint.

  /usr/bin/python3 tools/train/gguf_init.py models/recall.gguf /tmp/recall_init.pt [--layers N]

The shape is read from the file; train_recall.py's --shape must match it.
--layers N grows the model to N layers: the new blocks go on top, freshly
initialized but with their output projections (wo, w2) zero, so each adds
nothing to the residual stream at first and the grown model answers
exactly as the file does until training changes them (more layers for
circuits two cannot hold: matching a multi-token key, following a chain).
"""
import argparse
import os
import struct
import sys

import torch

ALIGNMENT_KEY = "general.alignment"
F32 = 0  # ggml's type id
SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
          12: "d"}
STRING, ARRAY = 8, 9
# GGUF name -> train_recall.Model's, per layer where {} appears.
NAMES = {"token_embd.weight": "tok_embeddings.weight", "output_norm.weight": "norm.weight",
         "blk.{}.attn_norm.weight": "layers.{}.attention_norm.weight",
         "blk.{}.attn_q.weight": "layers.{}.wq.weight", "blk.{}.attn_k.weight": "layers.{}.wk.weight",
         "blk.{}.attn_v.weight": "layers.{}.wv.weight",
         "blk.{}.attn_output.weight": "layers.{}.wo.weight",
         "blk.{}.ffn_norm.weight": "layers.{}.ffn_norm.weight",
         "blk.{}.ffn_gate.weight": "layers.{}.w1.weight",
         "blk.{}.ffn_down.weight": "layers.{}.w2.weight",
         "blk.{}.ffn_up.weight": "layers.{}.w3.weight"}


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def string(self):
        n = self.take("Q")
        self.at += n
        return self.data[self.at - n:self.at].decode("utf-8")

    def value(self, kind):
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, n = self.take("I"), self.take("Q")
            return [self.value(item) for _ in range(n)]
        return self.take(SCALAR[kind])


def torch_name(gguf_name):
    parts = gguf_name.split(".")
    if parts[0] == "blk":
        pattern = ".".join(["blk", "{}"] + parts[2:])
        return NAMES[pattern].format(parts[1]) if pattern in NAMES else None
    return NAMES.get(gguf_name)


def read(path):
    """The state dict and the metadata of the GGUF at path."""
    with open(path, "rb") as f:
        r = Reader(f.read())
    if r.take("4s") != b"GGUF":
        raise SystemExit(f"{path}: not a GGUF file")
    version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
    if version < 2:
        raise SystemExit(f"{path}: GGUF version {version} (expected 2 or 3)")
    meta = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(r.take("I"))
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("Q") for _ in range(r.take("I"))]
        kind, offset = r.take("I"), r.take("Q")
        infos.append((name, dims, kind, offset))
    align = meta.get(ALIGNMENT_KEY, 32)
    base = (r.at + align - 1) // align * align
    state = {}
    for name, dims, kind, offset in infos:
        target = torch_name(name)
        if target is None:
            raise SystemExit(f"{path}: tensor {name} has no place in the training model")
        if kind != F32:
            raise SystemExit(f"{path}: tensor {name} is type {kind}, not F32")
        count = 1
        for d in dims:
            count *= d
        start = base + offset
        t = torch.frombuffer(bytearray(r.data[start:start + 4 * count]), dtype=torch.float32)
        state[target] = t.view(*reversed(dims)).clone()  # GGUF's {in, out} is torch's (out, in)
    return state, meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("gguf")
    ap.add_argument("checkpoint")
    ap.add_argument("--layers", type=int, help="grow to this many layers (new ones on top)")
    args = ap.parse_args()
    src, dst = args.gguf, args.checkpoint
    state, meta = read(src)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.argv = sys.argv[:1]  # train_recall parses none of ours
    import train_recall as T
    c = T.Config()
    arch = meta["general.architecture"]
    c.n_layers = meta[arch + ".block_count"]
    c.dim = meta[arch + ".embedding_length"]
    c.hidden = meta[arch + ".feed_forward_length"]
    c.n_heads = meta[arch + ".attention.head_count"]
    c.n_kv_heads = meta[arch + ".attention.head_count_kv"]
    T.Model(c).load_state_dict(state)  # the names and shapes are the training model's
    if args.layers and args.layers > c.n_layers:
        kept = c.n_layers
        c.n_layers = args.layers
        torch.manual_seed(1)
        grown = T.Model(c).state_dict()
        for k, v in grown.items():
            if k in state:
                continue
            if k.endswith(".wo.weight") or k.endswith(".w2.weight"):
                v.zero_()
            state[k] = v
        print(f"grown from {kept} to {c.n_layers} layers")
    torch.save({"model": state, "step": 0}, dst)
    print(f"{dst}: --shape {c.n_layers}x{c.dim}x{c.n_heads}x{c.n_kv_heads}, "
          f"hidden {c.hidden}")


if __name__ == "__main__":
    main()
