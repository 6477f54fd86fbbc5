#!/usr/bin/env bash
# h2o.cpp beside llama.cpp on this machine, the runs behind BENCHMARKS.md's
# "Side by side with llama.cpp" section:
#   * decode (tg32 at depth 0, 2 threads) of a TinyLlama-1.1B-shaped model
#     quantized by llama.cpp's own quantizer to Q4_K_M and Q6_K: h2o bench
#     (tok/s and its share of the memory-bandwidth roofline) against llb
#     bench with flash attention on and off (the better one counts);
#   * byte-level BPE tokenization of 1 MiB of War and Peace with the Llama 3
#     vocabulary: h2o tokenize against llb tokenize, whole commands (load
#     included) and identical ids checked.
# Rounds alternate the engines closely, since memory bandwidth on shared
# machines drifts by tens of percent from minute to minute.
#
#   scripts/bench_peer.sh LLB WAR_AND_PEACE_TXT OUT_DIR [H2O] ; ROUNDS=3
#
# LLB: llama.cpp's driver from ../shared/peer (b7847). Takes about 15
# minutes on 2 cores, and 4 GB of disk in OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
llb=${1:?usage: scripts/bench_peer.sh LLB WAR_AND_PEACE_TXT OUT_DIR [H2O]}
text=${2:?war and peace text}
out=${3:?output directory}
h2o=${4:-./build/bin/h2o}
rounds=${ROUNDS:-3}
vocab=tests/data/tokenizers/llama3-vocab.gguf
mkdir -p "$out"

f16="$out/tinyllama_f16.gguf"
[ -f "$f16" ] || "$h2o" mkmodel --dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 \
  --vocab 32000 --type f16 --seed 1 -o "$f16"
for q in q4_k_m q6_k; do
  [ -f "$out/tinyllama_$q.gguf" ] || "$llb" quantize -m "$f16" -o "$out/tinyllama_$q.gguf" --qtype "$q" -t 2 >/dev/null 2>&1
done

decode="$out/decode.jsonl"
: >"$decode"
for r in $(seq "$rounds"); do
  for q in q4_k_m q6_k; do
    m="$out/tinyllama_$q.gguf"
    "$h2o" bench -m "$m" -p 0 -n 32 --depth 0 -t 2 -r 3 --json 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["records"][0]; print(json.dumps({"round": '"$r"', "model": "'"$q"'", "engine": "h2o", "tps": r["tps_median"], "roofline_tps": r["roofline_tps"], "membw_gbps": d["membw_gbps"]}))' >>"$decode"
    for fa in on off; do
      "$llb" bench -m "$m" -t 2 -r 3 -p 0 -n 32 -fa "$fa" -o jsonl 2>/dev/null |
        python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(json.dumps({"round": '"$r"', "model": "'"$q"'", "engine": "llama.cpp fa='"$fa"'", "tps": d["median_ts"], "other_pct": d["other_pct"]}))' >>"$decode"
    done
  done
done

tokenize="$out/tokenize.jsonl"
: >"$tokenize"
"$h2o" tokenize -m "$vocab" -f "$text" | tr -s ' \n' '\n' >"$out/h2o.ids"
"$llb" tokenize -m "$vocab" -f "$text" 2>/dev/null | tr -s ' \n' '\n' >"$out/llb.ids"
same=no
cmp -s "$out/h2o.ids" "$out/llb.ids" && same=yes
for r in $(seq $((rounds * 3))); do
  for engine in h2o llb; do
    start=$(date +%s%N)
    if [ "$engine" = h2o ]; then
      "$h2o" tokenize -m "$vocab" -f "$text" >/dev/null
    else
      "$llb" tokenize -m "$vocab" -f "$text" >/dev/null 2>&1
    fi
    echo "{\"round\": $r, \"engine\": \"$engine\", \"seconds\": $(( ($(date +%s%N) - start) / 1000 ))e-6}" >>"$tokenize"
  done
done

python3 - "$decode" "$tokenize" "$(wc -l <"$out/h2o.ids")" "$same" <<'EOF'
import json, statistics, sys
decode = [json.loads(l) for l in open(sys.argv[1])]
print("| round | model | h2o tg32 t/s | h2o % of roofline | llama.cpp fa=on | fa=off | h2o / best llama.cpp |")
print("|---|---|---:|---:|---:|---:|---:|")
for r in sorted({d["round"] for d in decode}):
    for m in ("q4_k_m", "q6_k"):
        rows = {d["engine"]: d for d in decode if d["round"] == r and d["model"] == m}
        h, on, off = rows["h2o"], rows["llama.cpp fa=on"], rows["llama.cpp fa=off"]
        best = max(on["tps"], off["tps"])
        print(f"| {r} | {m.upper()} | {h['tps']:.2f} | {100 * h['tps'] / h['roofline_tps']:.1f}% "
              f"({h['membw_gbps']:.1f} GB/s) | {on['tps']:.2f} | {off['tps']:.2f} | {h['tps'] / best:.2f}x |")
tok = [json.loads(l) for l in open(sys.argv[2])]
med = {e: statistics.median(t["seconds"] for t in tok if t["engine"] == e) for e in ("h2o", "llb")}
n_ids, same = sys.argv[3], sys.argv[4]
print()
print(f"tokenize 1 MiB (whole command, median of {len(tok) // 2}): h2o {med['h2o'] * 1000:.0f} ms, "
      f"llama.cpp {med['llb'] * 1000:.0f} ms, h2o {med['llb'] / med['h2o']:.2f}x as fast; "
      f"{n_ids} ids, identical: {same}")
EOF
