#!/usr/bin/env bash
# Prompt processing (pp512) and decode (tg32) beside llama.cpp, per weight
# type, on a Llama-3.2-1B-shaped model (16 layers, dim 2048, 32 heads of
# 64, 8 KV heads, FFN 8192; a 32000-token vocabulary, which only the last
# token's logits touch), 2 threads. F16 random weights from h2o mkmodel,
# quantized by llama.cpp's own quantizer (q8_0, q4_0, q4_k_m, q6_k); q5_K
# by h2o mkmodel (llb quantize has no q5_k_m), so both engines read the
# same files. Engines alternate test by test within each round, since
# memory bandwidth on shared machines drifts from minute to minute; with
# H2O_BASE set, a second h2o binary (the build before a change) joins the
# rotation, so before and after come from one run.
#
#   scripts/bench_prefill_peer.sh LLB OUT_DIR [H2O] ; ROUNDS=2 TYPES="q4_k_m q6_k ..."
#
# Prints a markdown table of medians over the rounds; raw records in
# OUT_DIR/prefill.jsonl. Needs about 6 GB of disk in OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
llb=${1:?usage: scripts/bench_prefill_peer.sh LLB OUT_DIR [H2O]}
out=${2:?output directory}
h2o=${3:-./build/bin/h2o}
base=${H2O_BASE:-}
rounds=${ROUNDS:-2}
types=${TYPES:-"q4_k_m q5_k q6_k q8_0 q4_0 f16"}
mkdir -p "$out"
shape="--dim 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 --ctx 4096"

f16="$out/l1b_f16.gguf"
# shellcheck disable=SC2086
[ -f "$f16" ] || "$h2o" mkmodel $shape --type f16 --seed 1 -o "$f16" >/dev/null
for t in $types; do
  m="$out/l1b_$t.gguf"
  [ -f "$m" ] && continue
  # shellcheck disable=SC2086
  case $t in
    q5_k) "$h2o" mkmodel $shape --type q5_K --seed 1 -o "$m" >/dev/null ;;
    *) "$llb" quantize -m "$f16" -o "$m" --qtype "$t" -t 2 >/dev/null 2>&1 ;;
  esac
done

raw="$out/prefill.jsonl"
: >"$raw"
h2o_run() {  # engine-name binary model type
  "$2" bench -m "$3" -p 512 -n 32 -t 2 -r 3 --membw-mib 0 --json 2>/dev/null |
    python3 -c 'import json,sys
for x in json.load(sys.stdin)["records"]:
    print(json.dumps({"round": int(sys.argv[1]), "type": sys.argv[2], "engine": sys.argv[3],
                      "test": x["test"], "tps": x["tps_median"]}))' "$r" "$4" "$1" >>"$raw"
}
for r in $(seq "$rounds"); do
  for t in $types; do
    m="$out/l1b_$t.gguf"
    h2o_run h2o "$h2o" "$m" "$t"
    [ -z "$base" ] || h2o_run "h2o before" "$base" "$m" "$t"
    "$llb" bench -m "$m" -t 2 -r 3 -p 512 -n 32 -o jsonl 2>/dev/null |
      python3 -c 'import json,sys
for line in sys.stdin:
    d = json.loads(line)
    test = ("pp%d" % d["n_prompt"]) if d["n_prompt"] else ("tg%d" % d["n_gen"])  # llb names a test with its depth
    print(json.dumps({"round": int(sys.argv[1]), "type": sys.argv[2], "engine": "llama.cpp",
                      "test": test, "tps": d["median_ts"]}))' "$r" "$t" >>"$raw"
  done
done
python3 - "$raw" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
engines = list(dict.fromkeys(x["engine"] for x in rows))
others = [e for e in engines if e not in ("h2o", "llama.cpp")]
head = "| type | test | h2o t/s | " + "".join(f"{e} t/s | " for e in others) + \
       "llama.cpp t/s | h2o / llama.cpp |"
print(head)
print("|---|---|" + "--:|" * (len(others) + 3))
for t in dict.fromkeys(x["type"] for x in rows):
    for test in dict.fromkeys(x["test"] for x in rows):
        med = {}
        for e in engines:
            v = [x["tps"] for x in rows if x["type"] == t and x["test"] == test and x["engine"] == e]
            med[e] = statistics.median(v) if v else float("nan")
        cells = "".join(f"{med[e]:.1f} | " for e in others)
        print(f"| {t} | {test} | {med['h2o']:.1f} | {cells}{med['llama.cpp']:.1f} | "
              f"{med['h2o'] / med['llama.cpp']:.2f}x |")
PY
