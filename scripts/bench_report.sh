#!/usr/bin/env bash
# The runs behind BENCHMARKS.md: random-weight models of real shapes
# (h2o mkmodel), then h2o bench at several depths, full vs H2O vs local at
# the same 20% budget, 2 threads.
# Usage: scripts/bench_report.sh OUT_DIR [h2o] ; SHAPES="110m tinyllama" picks
# the shapes (default both; the whole run takes about 10 minutes and
# 3.5 GB of disk).
set -euo pipefail
out=${1:?output directory}
h2o=${2:-./build/bin/h2o}
shapes=${SHAPES:-110m tinyllama}
mkdir -p "$out"
kv="full,h2o:heavy=10%,recent=10%,local:recent=20%"
for shape in $shapes; do
  case $shape in
    110m)
      dims="--dim 768 --layers 12 --heads 12 --kv-heads 12 --ffn 2048 --vocab 32000 --ctx 8192"
      runs="-p 128 -n 32 --depth 0,4096 --kv $kv" ;;
    tinyllama)
      dims="--dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000 --ctx 8192"
      runs="-p 64 -n 16 --depth 0,512 --kv full,h2o:heavy=10%,recent=10%" ;;
    *) echo "unknown shape $shape" >&2; exit 2 ;;
  esac
  for type in f16 q8_0; do
    model="$out/${shape}_$type.gguf"
    [ -f "$model" ] || "$h2o" mkmodel $dims --type "$type" --seed 1 -o "$model"
    "$h2o" bench -m "$model" $runs --chunk 64 -r 1 -t 2 > "$out/bench_${shape}_$type.md"
  done
done
