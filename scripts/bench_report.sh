#!/usr/bin/env bash
# The runs behind BENCHMARKS.md: random-weight models of real shapes
# (h2o mkmodel), then h2o bench at several depths, full vs H2O vs local at
# the same 20% budget, 2 threads. Usage: scripts/bench_report.sh OUT_DIR [h2o]
set -euo pipefail
out=${1:?output directory}
h2o=${2:-./build/bin/h2o}
mkdir -p "$out"
shape110m="--dim 768 --layers 12 --heads 12 --kv-heads 12 --ffn 2048 --vocab 32000 --ctx 8192"
kv="full,h2o:heavy=10%,recent=10%,local:recent=20%"
for type in f16 q8_0; do
  model="$out/llama110m_$type.gguf"
  [ -f "$model" ] || "$h2o" mkmodel $shape110m --type "$type" --seed 1 -o "$model"
  "$h2o" bench -m "$model" -p 128 -n 32 --depth 0,1024,2048 --kv "$kv" --chunk 64 -r 1 -t 2 \
    > "$out/bench_110m_$type.md"
done
