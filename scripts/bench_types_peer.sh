#!/usr/bin/env bash
# Prompt processing (pp512) and decode (tg32 at each depth) beside
# llama.cpp, per weight type, on a Llama-3.2-shaped model, 2 threads: the
# runs behind BENCHMARKS.md's per-class tables. SHAPE=1b: 16 layers, dim
# 2048, 32 heads of 64, 8 KV heads, FFN 8192; SHAPE=3b: 28 layers, dim
# 3072, 24 heads of 128, 8 KV heads, FFN 8192; a 32000-token vocabulary
# (only the last token's logits touch it). F16 random weights from h2o
# mkmodel, quantized by llama.cpp's own quantizer (every type in TYPES), so
# both engines read the same files. At depths above 0 h2o also decodes under
# H2O_KV (default: H2O with a 20% budget), which llama.cpp has no
# counterpart of; its ratio is taken against llama.cpp's full cache.
# Engines alternate test by test within each round, since memory bandwidth
# on shared machines drifts from minute to minute; with H2O_BASE set, a
# second h2o binary (the build before a change) joins the rotation.
#
#   scripts/bench_types_peer.sh LLB OUT_DIR [H2O]
#   env: ROUNDS=2 SHAPE=1b TYPES="q4_k_m q5_k_m q6_k q8_0 q4_0 bf16 f16" DEPTHS="0"
#        DEEP_TYPES="q4_k_m q8_0" (the types also timed at the DEPTHS above 0)
#        LLB_DEEP_REPS=1 (llama.cpp refills the depth for every repetition)
#
# Prints a markdown table of medians over the rounds; raw records in
# OUT_DIR/types_SHAPE.jsonl. The 1B files take about 8 GB of disk, the 3B 20.
set -euo pipefail
cd "$(dirname "$0")/.."
llb=${1:?usage: scripts/bench_types_peer.sh LLB OUT_DIR [H2O]}
out=${2:?output directory}
h2o=${3:-./build/bin/h2o}
base=${H2O_BASE:-}
rounds=${ROUNDS:-2}
shape_name=${SHAPE:-1b}
types=${TYPES:-"q4_k_m q5_k_m q6_k q8_0 q4_0 bf16 f16"}
depths=${DEPTHS:-"0"}
deep_types=${DEEP_TYPES:-"q4_k_m q8_0"}
llb_deep_reps=${LLB_DEEP_REPS:-1}
h2o_kv=${H2O_KV:-"h2o:heavy=10%,recent=10%"}
case $shape_name in
  1b) shape="--dim 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192" ;;
  3b) shape="--dim 3072 --layers 28 --heads 24 --kv-heads 8 --ffn 8192" ;;
  *) echo "SHAPE must be 1b or 3b" >&2; exit 2 ;;
esac
shape="$shape --vocab 32000 --ctx 8192"
mkdir -p "$out"

prefix="$out/l${shape_name}"
f16="${prefix}_f16.gguf"
# shellcheck disable=SC2086
[ -f "$f16" ] || "$h2o" mkmodel $shape --type f16 --seed 1 -o "$f16" >/dev/null
for t in $types; do
  m="${prefix}_$t.gguf"
  [ -f "$m" ] && continue
  "$llb" quantize -m "$f16" -o "$m" --qtype "$t" -t 2 >/dev/null 2>&1
done

raw="$out/types_${shape_name}.jsonl"
: >"$raw"
record() {  # reads "test depth kv tps" lines; engine type
  python3 -c 'import json,sys
for line in sys.stdin:
    test, depth, kv, tps = line.split()
    print(json.dumps({"round": int(sys.argv[1]), "shape": sys.argv[2], "type": sys.argv[3],
                      "engine": sys.argv[4], "test": test if depth == "0" else test + "@d" + depth,
                      "kv": kv, "tps": float(tps)}))' "$r" "$shape_name" "$2" "$1" >>"$raw"
}
h2o_run() {  # engine-name binary model type depth
  local tests=(-p 512 -n 32) kv=full
  [ "$5" = 0 ] || { tests=(-p 0 -n 32); kv="full,$h2o_kv"; }
  "$2" bench -m "$3" "${tests[@]}" -d "$5" --kv "$kv" -t 2 -r 3 --membw-mib 0 --json 2>/dev/null |
    python3 -c 'import json,sys
for x in json.load(sys.stdin)["records"]:
    print(x["test"], x["depth"], "full" if x["kv"] == "full" else "h2o", x["tps_median"])' |
    while read -r line; do
      # An evicting run is its own engine column ("h2o H2O").
      case $line in
        *" h2o "*) echo "$line" | record "$1 H2O" "$4" ;;
        *) echo "$line" | record "$1" "$4" ;;
      esac
    done
}
llb_run() {  # model type depth
  local tests=(-p 512 -n 32) reps=3
  [ "$3" = 0 ] || { tests=(-p 0 -n 32); reps=$llb_deep_reps; }
  "$llb" bench -m "$1" -t 2 -r "$reps" "${tests[@]}" -d "$3" -o jsonl 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    d = json.loads(line)
    test = ("pp%d" % d["n_prompt"]) if d["n_prompt"] else ("tg%d" % d["n_gen"])
    print(test, d["n_depth"], "full", d["median_ts"])' |
    record llama.cpp "$2"
}
for r in $(seq "$rounds"); do
  for t in $types; do
    m="${prefix}_$t.gguf"
    for d in $depths; do
      [ "$d" = 0 ] || [[ " $deep_types " == *" $t "* ]] || continue
      h2o_run h2o "$h2o" "$m" "$t" "$d"
      [ -z "$base" ] || h2o_run "h2o before" "$base" "$m" "$t" "$d"
      llb_run "$m" "$t" "$d"
    done
  done
done
python3 - "$raw" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
engines = list(dict.fromkeys(x["engine"] for x in rows))
others = [e for e in engines if e != "llama.cpp"]
print("| type | test | " + "".join(f"{e} t/s | " for e in others) + "llama.cpp t/s | " +
      "".join(f"{e} / llama.cpp | " for e in others))
print("|---|---|" + "--:|" * (2 * len(others) + 1))
for t in dict.fromkeys(x["type"] for x in rows):
    for test in dict.fromkeys(x["test"] for x in rows):
        med = {}
        for e in engines:
            v = [x["tps"] for x in rows if x["type"] == t and x["test"] == test and x["engine"] == e]
            med[e] = statistics.median(v) if v else None
        if med.get("llama.cpp") is None:
            continue
        cell = lambda v: "-" if v is None else f"{v:.1f}"
        ratio = lambda v: "-" if v is None else f"{v / med['llama.cpp']:.2f}x"
        print(f"| {t} | {test} | " + "".join(f"{cell(med[e])} | " for e in others) +
              f"{med['llama.cpp']:.1f} | " + "".join(f"{ratio(med[e])} | " for e in others))
PY
