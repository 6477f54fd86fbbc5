#!/usr/bin/env python3
"""Prints what eviction costs on long context, as markdown tables: RULER-style
accuracy of every policy at 12.5/25/50/75% of the context kept, under both
protocols, with f16 and q8_0 K/V, by the real `h2o mktask ruler` and `h2o eval`.

  python3 scripts/ruler_table.py --model MODEL.gguf [-n 5] [--ctx 2k]
                                 [--h2o build/bin/h2o] [--reports DIR]

Standard library only. --reports keeps every eval's report (markdown, JSON,
the accuracy-against-kept plot and the depth x length heatmaps).
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = "niah_single_1,niah_multikey_1,niah_multivalue,vt,passkey"
BUDGETS = [12.5, 25, 50, 75]
# Every policy the README's table shows; a budget sweep splits each budget.
POLICIES = ["local", "sink", "h2o", "h2o:score=mean", "h2o:score=ema", "h2o:pyramid=20",
            "h2only", "tova", "random", "snapkv", "snapkv:pyramid=20"]
PROTOCOLS = [("query-agnostic", []), ("query-aware", ["--question-in-context"])]


def h2o_json(args, *flags):
    run = subprocess.run([args.h2o, *flags, "--json", "-q"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(run.stderr.strip())
    return json.loads(run.stdout)


def evaluate(args, tasks, kv_type, protocol_flags, report):
    """{(policy, budget or None): (accuracy, stderr)} of one protocol and type."""
    out = h2o_json(args, "eval", "-m", args.model, "--task", tasks, "--kv-type", kv_type,
                   *protocol_flags, "--kv", ",".join(["full"] + POLICIES), "--budget",
                   ",".join(f"{b:g}%" for b in BUDGETS),
                   *(["--report", report] if report else []))
    cells = {}
    for r in out["results"]:
        budget = float(r["budget"].rstrip("%")) if r["budget"] else None
        cells[(r["policy"], budget)] = (r["accuracy"], r["accuracy_stderr"])
    return cells


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", required=True, help="the GGUF to measure")
    ap.add_argument("--kv-types", default="f16,q8_0", help="(default %(default)s)")
    ap.add_argument("--h2o", default=os.path.join(REPO, "build", "bin", "h2o"))
    ap.add_argument("-n", type=int, default=5, help="items per task (default %(default)s)")
    ap.add_argument("--ctx", default="2k", help="context length(s) (default %(default)s)")
    ap.add_argument("--tasks", default=TASKS, help="(default %(default)s)")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--reports", help="keep every eval's report in this folder")
    args = ap.parse_args()
    work = args.reports or os.path.join("/tmp", f"ruler_table.{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    tasks = os.path.join(work, "ruler.jsonl")
    subprocess.run([args.h2o, "mktask", "ruler", "-m", args.model, "--tasks", args.tasks, "--ctx",
                    args.ctx, "-n", str(args.n), "--seed", args.seed, "-o", tasks, "-q"],
                   check=True)
    n_items = sum(1 for _ in open(tasks))
    rows = ["full"] + POLICIES
    for kv_type in args.kv_types.split(","):
        results = []
        for name, flags in PROTOCOLS:
            report = os.path.join(work, f"{kv_type}.{name}") if args.reports else None
            results.append(evaluate(args, tasks, kv_type, flags, report))
        head = " | ".join(f"{b:g}% ({1 - b / 100:g})" for b in BUDGETS)
        print(f"\n{kv_type} K/V, {n_items} items ({args.tasks} at {args.ctx}, seed {args.seed}); "
              "accuracy, query-agnostic | query-aware; column: kept (compression ratio)\n")
        print(f"| policy | {head} | {head} |")
        print("|---" + "|---:" * (2 * len(BUDGETS)) + "|")
        worst_stderr = 0.0
        for label in rows:
            cells = []
            for cellmap in results:
                for b in BUDGETS:
                    acc, err = cellmap.get((label, b), cellmap.get((label, None), (None, 0)))
                    worst_stderr = max(worst_stderr, err or 0.0)  # null: one item
                    cells.append("-" if acc is None else f"{acc:.2f}")
            print(f"| {label} | " + " | ".join(cells) + " |")
        print(f"\nlargest standard error in the table: {worst_stderr:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
