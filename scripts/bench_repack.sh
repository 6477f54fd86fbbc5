#!/usr/bin/env bash
# What repacking weights at load buys (ModelLoadOptions::repack, README:
# --no-repack), measured in one run: pp512, tg32 and 32 sequences decoding
# together, the same files with and without --no-repack, alternating test
# by test, 2 threads. The files are those of scripts/bench_batch.sh
# (OUT_DIR/{m110,tinyllama}_{q8_0,q4_0}.gguf, made there when absent).
#   scripts/bench_repack.sh OUT_DIR [H2O] ; ROUNDS=2
# Prints a markdown table of medians over the rounds.
set -euo pipefail
out=${1:?usage: scripts/bench_repack.sh OUT_DIR [H2O]}
h2o=${2:-./build/bin/h2o}
rounds=${ROUNDS:-2}
raw="$out/repack.jsonl"
: >"$raw"
declare -A shape=(
  [m110]="--dim 768 --layers 12 --heads 12 --kv-heads 12 --ffn 2048 --vocab 32000 --ctx 8192"
  [tinyllama]="--dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000 --ctx 4096"
)
for r in $(seq "$rounds"); do
  for s in m110 tinyllama; do
    for t in q8_0 q4_0; do
      m="$out/${s}_$t.gguf"
      # shellcheck disable=SC2086
      [ -f "$m" ] || "$h2o" mkmodel ${shape[$s]} --type "$t" --seed 1 -o "$m" >/dev/null
      for layout in repacked rows; do
        flag=$([ "$layout" = rows ] && echo --no-repack || true)
        # shellcheck disable=SC2086
        "$h2o" bench -m "$m" -p 512 -n 32 -t 2 -r 3 --membw-mib 0 --json $flag 2>/dev/null |
          python3 -c 'import json,sys
for x in json.load(sys.stdin)["records"]:
    print(json.dumps({"model": sys.argv[1], "layout": sys.argv[2], "test": x["test"], "tps": x["tps_median"]}))' \
            "${s}_$t" "$layout" >>"$raw"
        # shellcheck disable=SC2086
        "$h2o" bench -m "$m" --concurrency 32 -p 8 -n 64 --kv full --kv-mem 64GiB -t 2 --json $flag \
          2>/dev/null |
          python3 -c 'import json,sys
x=json.load(sys.stdin)["records"][0]
print(json.dumps({"model": sys.argv[1], "layout": sys.argv[2], "test": "32 seq", "tps": x["decode_tps"]}))' \
            "${s}_$t" "$layout" >>"$raw"
      done
    done
  done
done
python3 - "$raw" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | test | repacked t/s | rows (--no-repack) t/s | ratio |")
print("|---|---|--:|--:|--:|")
for model in dict.fromkeys(x["model"] for x in rows):
    for test in ("pp512", "tg32", "32 seq"):
        med = {l: statistics.median(x["tps"] for x in rows
                                    if x["model"] == model and x["test"] == test and x["layout"] == l)
               for l in ("repacked", "rows")}
        print(f"| {model} | {test} | {med['repacked']:.1f} | {med['rows']:.1f} | "
              f"{med['repacked'] / med['rows']:.2f}x |")
PY
