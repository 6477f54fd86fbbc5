#!/usr/bin/env bash
# The runs behind BENCHMARKS.md: random-weight models of real shapes
# (h2o mkmodel), then h2o bench at several depths, full vs H2O (vs local for
# 110M) at the same 20% budget, 2 threads, 3 repetitions (each depth is
# filled once per test and restored for the repetitions).
# Usage: scripts/bench_report.sh OUT_DIR [h2o] ; SHAPES="110m tinyllama" picks
# the shapes (default both; the whole run takes about 25 minutes, most of it
# the TinyLlama shape's two 4096-token prefills per weight type, and 3.5 GB
# of disk).
set -euo pipefail
out=${1:?output directory}
h2o=${2:-./build/bin/h2o}
shapes=${SHAPES:-110m tinyllama}
mkdir -p "$out"
h2o_kv="h2o:heavy=10%,recent=10%"
for shape in $shapes; do
  case $shape in
    110m)
      dims="--dim 768 --layers 12 --heads 12 --kv-heads 12 --ffn 2048 --vocab 32000 --ctx 8192"
      # One bench call per line.
      runs=("-p 128 -n 32 --depth 0,4096 --kv full,$h2o_kv,local:recent=20%") ;;
    tinyllama)
      dims="--dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000 --ctx 8192"
      # The prompt test only at depth 0: a 4096-token prefill of this shape
      # takes minutes on 2 cores, and each (test, depth, spec) needs its own.
      runs=("-p 64 -n 16 --depth 0 --kv full,$h2o_kv"
            "-p 0 -n 16 --depth 4096 --kv full,$h2o_kv") ;;
    *) echo "unknown shape $shape" >&2; exit 2 ;;
  esac
  for type in f16 q8_0; do
    model="$out/${shape}_$type.gguf"
    [ -f "$model" ] || "$h2o" mkmodel $dims --type "$type" --seed 1 -o "$model"
    report="$out/bench_${shape}_$type.md"
    : > "$report"
    for run in "${runs[@]}"; do
      # shellcheck disable=SC2086
      "$h2o" bench -m "$model" $run --chunk 64 -r 3 -t 2 >> "$report"
      echo >> "$report"
    done
  done
done
