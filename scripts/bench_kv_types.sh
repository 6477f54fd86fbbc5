#!/usr/bin/env bash
# Issue 17's speed targets, side by side with llama.cpp in one run: decode
# (tg) at depth 0 and 4096 with q8_0 K/V (and f16 for reference), full
# cache vs H2O 20%, 2 threads, on the random-weight 110M and TinyLlama
# shapes of scripts/bench_report.sh (q8_0 weights).
# Usage: scripts/bench_kv_types.sh OUT_DIR [h2o] [llb]
#   llb: the peer's driver (../shared/peer builds it); skipped when absent.
# SHAPES="110m tinyllama" picks the shapes. The TinyLlama shape's 4096-token
# prefills take most of the time (about 15 minutes on 2 cores).
set -euo pipefail
out=${1:?output directory}
h2o=${2:-./build/bin/h2o}
llb=${3:-}
shapes=${SHAPES:-110m tinyllama}
mkdir -p "$out"
for shape in $shapes; do
  case $shape in
    110m)
      dims="--dim 768 --layers 12 --heads 12 --kv-heads 12 --ffn 2048 --vocab 32000 --ctx 8192"
      n=32 ;;
    tinyllama)
      dims="--dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000 --ctx 8192"
      n=16 ;;
    *) echo "unknown shape $shape" >&2; exit 2 ;;
  esac
  model="$out/${shape}_q8_0.gguf"
  [ -f "$model" ] || "$h2o" mkmodel $dims --type q8_0 --seed 1 -o "$model"
  report="$out/kv_types_${shape}.md"
  : > "$report"
  for kv in q8_0 f16; do
    "$h2o" bench -m "$model" -p 0 -n "$n" --depth 0,4096 --kv full,h2o:heavy=10%,recent=10% \
      -ctk "$kv" -ctv "$kv" --chunk 256 -r 3 -t 2 >> "$report"
    echo >> "$report"
  done
  if [ -n "$llb" ] && [ -x "$llb" ]; then
    # llama.cpp quantizes V only with flash attention.
    "$llb" bench -m "$model" -t 2 -r 3 -p 0 -n "$n" -d 0,4096 -fa on -ctk q8_0 -ctv q8_0 \
      -o md >> "$report"
    echo >> "$report"
  fi
done
