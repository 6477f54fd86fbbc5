#!/usr/bin/env bash
# The runs behind BENCHMARKS.md's "Architectures" section:
#   1. decode speed per parameter of every architecture at one shape (dim
#      2048, 8 layers, 32 heads, 8 KV heads, FFN 5632; GPT-2: 32 KV heads;
#      about 1 GB of f16 weights, more than this VM's 480 MiB L3),
#      f16, 2 threads: h2o bench's achieved GB/s of weights read per token,
#      so architectures with more or fewer matrices compare fairly;
#   2. beside llama.cpp (LLB given): Qwen2.5-0.5B- and Gemma-3-1B-shaped
#      files, f16 and q8_0, tg32 at depth 0, alternating h2o bench and llb
#      bench (flash attention on and off; the better counts).
#
#   scripts/bench_arch.sh OUT_DIR [LLB] [H2O]
#
# About 15 minutes on 2 cores and 6 GB of disk in OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/bench_arch.sh OUT_DIR [LLB] [H2O]}
llb=${2:-}
h2o=${3:-./build/bin/h2o}
mkdir -p "$out"

tg() {  # model -> "tok/s achieved_gbps roofline_pct" of h2o bench tg32
  "$h2o" bench -m "$1" -p 0 -n 32 --depth 0 -t 2 -r 3 --json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["records"][0]; print("%.2f %.2f %.1f" % (r["tps_median"], r["achieved_gbps"], 100 * r["tps_median"] / r["roofline_tps"]))'
}

echo "| architecture | params | tg32 t/s | GB/s of weights | % of roofline |"
echo "|---|---:|---:|---:|---:|"
for arch in llama qwen2 qwen3 phi3 gemma3 gptneox gpt2; do
  case $arch in
    gpt2) kv=32 ;;
    *) kv=8 ;;
  esac
  extra=""
  [ "$arch" = gemma3 ] && extra="--window 512"
  m="$out/per_param_$arch.gguf"
  # shellcheck disable=SC2086
  [ -f "$m" ] || "$h2o" mkmodel --arch "$arch" --dim 2048 --layers 8 --heads 32 --kv-heads $kv \
    --ffn 5632 --vocab 32000 --ctx 4096 --type f16 $extra -o "$m" 2>/dev/null
  params=$("$h2o" bench -m "$m" -p 0 -n 1 --depth 0 -t 2 -r 1 --json 2>/dev/null |
    python3 -c 'import json,sys; print("%.0fM" % (json.load(sys.stdin)["n_params"] / 1e6))')
  read -r tps gbps pct <<<"$(tg "$m")"
  echo "| $arch | $params | $tps | $gbps | $pct% |"
done

[ -n "$llb" ] || exit 0
echo
echo "| model | type | h2o tg32 t/s | llama.cpp fa=on | fa=off | h2o / best llama.cpp |"
echo "|---|---|---:|---:|---:|---:|"
for shape in qwen2.5-0.5b gemma-3-1b; do
  case $shape in
    qwen2.5-0.5b) dims="--arch qwen2 --dim 896 --layers 24 --heads 14 --kv-heads 2 --ffn 4864 --vocab 151936 --ctx 32768 --rope-base 1000000 --tied" ;;
    gemma-3-1b) dims="--arch gemma3 --dim 1152 --layers 26 --heads 4 --kv-heads 1 --head-dim 256 --ffn 6912 --vocab 262144 --ctx 32768 --window 512 --rope-base 1000000 --tied" ;;
  esac
  for type in f16 q8_0; do
    m="$out/${shape}_$type.gguf"
    # shellcheck disable=SC2086
    [ -f "$m" ] || "$h2o" mkmodel $dims --type "$type" -o "$m" 2>/dev/null
    read -r tps _ _ <<<"$(tg "$m")"
    on=$("$llb" bench -m "$m" -t 2 -r 3 -p 0 -n 32 -fa on -o jsonl 2>/dev/null | python3 -c 'import json,sys; print("%.2f" % json.loads(sys.stdin.readline())["median_ts"])')
    off=$("$llb" bench -m "$m" -t 2 -r 3 -p 0 -n 32 -fa off -o jsonl 2>/dev/null | python3 -c 'import json,sys; print("%.2f" % json.loads(sys.stdin.readline())["median_ts"])')
    ratio=$(python3 -c "print('%.2fx' % ($tps / max($on, $off)))")
    echo "| $shape | $type | $tps | $on | $off | $ratio |"
  done
done
