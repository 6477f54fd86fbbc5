#!/usr/bin/env bash
# Issue #12's batched-decode target, measured so that a VM's drift in speed
# (identical runs here moved by up to 2x over minutes) falls on both sides:
# every round runs, per model, our pp512 and right after it the aggregate
# decode rate of 32 sequences (8 prompt + 64 generated tokens each), and
# the ratio is taken within the round. Prints each round's ratios and
# their median.
#
#   scripts/bench_batch_ratio.sh MODEL.gguf... ; ROUNDS=5 H2O=build/bin/h2o THREADS=2
#
# The models: `h2o mkmodel` files, e.g. those scripts/bench_batch.sh makes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/bench_batch_ratio.sh MODEL.gguf..." >&2; exit 2; }
h2o=${H2O:-./build/bin/h2o}
rounds=${ROUNDS:-5}
threads=${THREADS:-2}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq "$rounds"); do
  for m in "$@"; do
    pp=$("$h2o" bench -m "$m" -p 512 -n 0 -r 3 -t "$threads" --membw-mib 0 --json 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["records"][0]["tps_median"])')
    decode=$("$h2o" bench -m "$m" --concurrency 32 -p 8 -n 64 --kv full --kv-mem 64GiB \
      -t "$threads" --json 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["records"][0]["decode_tps"])')
    echo "$r $(basename "$m" .gguf) $pp $decode" >>"$out"
  done
done
python3 - "$out" <<'PY'
import statistics, sys
from collections import defaultdict
rows = [l.split() for l in open(sys.argv[1])]
by_model = defaultdict(list)
print("| model | round | pp512 t/s | 32 sequences decoding t/s | ratio |")
print("|---|--:|--:|--:|--:|")
for r, model, pp, dec in rows:
    pp, dec = float(pp), float(dec)
    by_model[model].append((pp, dec, dec / pp))
    print(f"| {model} | {r} | {pp:.1f} | {dec:.1f} | {dec / pp:.2f}x |")
print()
print("| model | median pp512 t/s | median 32-sequence t/s | median of the rounds' ratios |")
print("|---|--:|--:|--:|")
for model, xs in by_model.items():
    med = statistics.median
    print(f"| {model} | {med(x[0] for x in xs):.1f} | {med(x[1] for x in xs):.1f} | "
          f"{med(x[2] for x in xs):.2f}x |")
PY
