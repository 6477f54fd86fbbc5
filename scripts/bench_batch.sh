#!/usr/bin/env bash
# The runs behind BENCHMARKS.md's "Prompts and batches beside llama.cpp" and
# "Throughput at a fixed KV memory", h2o.cpp and llama.cpp alternating on
# this machine, 2 threads, the same GGUF files (h2o mkmodel, seed 1):
#   * pp512 and tg32 at depth 0 for the 110M and TinyLlama-1.1B shapes in
#     f16, q8_0 and q4_0: h2o bench against llb bench (flash attention on
#     and off; the better counts);
#   * batched decode: 32 sequences of 8 prompt + 64 generated tokens
#     decoded together (h2o bench --concurrency 32), beside our own pp512;
#   * a fixed KV memory, that of 4 full caches of 2048 + 256 tokens (q8_0
#     weights, f16 K/V, prefill chunks of 64): every policy gets as many
#     requests as fit (h2o bench --fill --kv-mem-full 4); llama.cpp (no
#     eviction) decodes its 4 in the same memory (llb_batched -npl 4).
#
#   scripts/bench_batch.sh LLB LLB_BATCHED OUT_DIR [H2O] ; ROUNDS=2
#
# LLB: ../shared/peer's driver; LLB_BATCHED: scripts/build_peer_batched.sh.
# About 40 minutes on 2 cores and 5 GB of disk in OUT_DIR. Prints the
# tables; the raw records are OUT_DIR/*.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
llb=${1:?usage: scripts/bench_batch.sh LLB LLB_BATCHED OUT_DIR [H2O]}
llb_batched=${2:?llb_batched}
out=${3:?output directory}
h2o=${4:-./build/bin/h2o}
rounds=${ROUNDS:-2}
mkdir -p "$out"

declare -A shape=(
  [m110]="--dim 768 --layers 12 --heads 12 --kv-heads 12 --ffn 2048 --vocab 32000 --ctx 8192"
  [tinyllama]="--dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000 --ctx 4096"
)
for s in m110 tinyllama; do
  for t in f16 q8_0 q4_0; do
    m="$out/${s}_$t.gguf"
    # shellcheck disable=SC2086
    [ -f "$m" ] || "$h2o" mkmodel ${shape[$s]} --type "$t" --seed 1 -o "$m" >/dev/null
  done
done

jq_h2o_pp_tg='import json,sys
d=json.load(sys.stdin)
for r in d["records"]:
    print(json.dumps({"round": int(sys.argv[1]), "model": sys.argv[2], "engine": "h2o",
                      "test": r["test"], "tps": r["tps_median"]}))'
jq_llb_pp_tg='import json,sys
for line in sys.stdin:
    d=json.loads(line)
    print(json.dumps({"round": int(sys.argv[1]), "model": sys.argv[2], "engine": "llama.cpp fa=" + sys.argv[3],
                      "test": d["test"], "tps": d["median_ts"]}))'

speed="$out/speed.jsonl"
batched="$out/batched.jsonl"
fixed="$out/fixed_memory.jsonl"
: >"$speed"
: >"$batched"
: >"$fixed"
for r in $(seq "$rounds"); do
  for s in m110 tinyllama; do
    for t in f16 q8_0 q4_0; do
      m="$out/${s}_$t.gguf"
      "$h2o" bench -m "$m" -p 512 -n 32 -t 2 -r 3 --membw-mib 0 --json 2>/dev/null |
        python3 -c "$jq_h2o_pp_tg" "$r" "${s}_$t" >>"$speed"
      for fa in on off; do
        "$llb" bench -m "$m" -t 2 -r 3 -p 512 -n 32 -fa "$fa" -o jsonl 2>/dev/null |
          python3 -c "$jq_llb_pp_tg" "$r" "${s}_$t" "$fa" >>"$speed"
      done
      "$h2o" bench -m "$m" --concurrency 32 -p 8 -n 64 --kv full --kv-mem 64GiB -t 2 --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["records"][0]; print(json.dumps({"round": int(sys.argv[1]), "model": sys.argv[2], "decode_tps": r["decode_tps"]}))' \
          "$r" "${s}_$t" >>"$batched"
    done
  done
  for s in m110 tinyllama; do
    m="$out/${s}_q8_0.gguf"
    "$h2o" bench -m "$m" --fill --kv-mem-full 4 -p 2048 -n 256 --chunk 64 -t 2 \
      --kv full,h2o:heavy=10%,recent=10% --json 2>/dev/null |
      python3 -c 'import json,sys
d=json.load(sys.stdin)
for r in d["records"]:
    r.update({"round": int(sys.argv[1]), "model": sys.argv[2], "engine": "h2o", "kv_memory_bytes": d["kv_memory_bytes"]})
    print(json.dumps(r))' "$r" "${s}_q8_0" >>"$fixed"
    for fa in on off; do
      "$llb_batched" -m "$m" -t 2 -npl 4 -npp 2048 -ntg 256 -fa "$fa" |
        python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); d.update({"round": int(sys.argv[1]), "model": sys.argv[2]}); print(json.dumps(d))' \
          "$r" "${s}_q8_0" >>"$fixed"
    done
  done
done

python3 - "$speed" "$batched" "$fixed" <<'EOF'
import json, sys, statistics
from collections import defaultdict
speed = [json.loads(l) for l in open(sys.argv[1])]
batched = [json.loads(l) for l in open(sys.argv[2])]
fixed = [json.loads(l) for l in open(sys.argv[3])]
med = statistics.median

def best_llb(rows):
    # per round, the better of fa=on/off; then the median over rounds
    by_round = defaultdict(float)
    for x in rows:
        by_round[x["round"]] = max(by_round[x["round"]], x["tps"])
    return med(by_round.values())

print("| model | test | h2o t/s | llama.cpp t/s | h2o / llama.cpp |")
print("|---|---|--:|--:|--:|")
pp = {}
for model in dict.fromkeys(x["model"] for x in speed):
    for test in ("pp512", "tg32"):
        ours = med([x["tps"] for x in speed if x["model"] == model and x["test"] == test and x["engine"] == "h2o"])
        theirs = best_llb([x for x in speed if x["model"] == model and x["test"] == test and x["engine"] != "h2o"])
        if test == "pp512":
            pp[model] = ours
        print(f"| {model} | {test} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f}x |")
print()
print("| model | 32 sequences decoding, aggregate t/s | our pp512 t/s | ratio |")
print("|---|--:|--:|--:|")
for model in dict.fromkeys(x["model"] for x in batched):
    b = med([x["decode_tps"] for x in batched if x["model"] == model])
    print(f"| {model} | {b:.1f} | {pp[model]:.1f} | {b / pp[model]:.2f}x |")
print()
print("| model | engine / kv | KV memory | sequences | decode t/s (aggregate) | vs full | end-to-end t/s | ITL p50 ms |")
print("|---|---|--:|--:|--:|--:|--:|--:|")
for model in dict.fromkeys(x["model"] for x in fixed):
    rows = [x for x in fixed if x["model"] == model]
    ours = [x for x in rows if x.get("engine") == "h2o"]
    full_tps = med([x["decode_tps"] for x in ours if x["kv"] == "full"])
    for kv in dict.fromkeys(x["kv"] for x in ours):
        xs = [x for x in ours if x["kv"] == kv]
        tps = med([x["decode_tps"] for x in xs])
        print(f"| {model} | h2o {kv} | {xs[0]['kv_memory_bytes'] / 2**20:.0f} MiB | {xs[0]['admitted']} | "
              f"{tps:.1f} | {tps / full_tps:.2f}x | {med([x['end_to_end_tps'] for x in xs]):.1f} | "
              f"{med([x['itl_p50_ms'] for x in xs]):.1f} |")
    theirs = [x for x in rows if x.get("engine") == "llama.cpp"]
    by_round = defaultdict(float)
    for x in theirs:
        by_round[x["round"]] = max(by_round[x["round"]], x["decode_tps"])
    tps = med(by_round.values())
    print(f"| {model} | llama.cpp (no eviction) | {theirs[0]['kv_bytes'] / 2**20:.0f} MiB | {theirs[0]['npl']} | "
          f"{tps:.1f} | {tps / full_tps:.2f}x | - | - |")
EOF
