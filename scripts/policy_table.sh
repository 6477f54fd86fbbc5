#!/usr/bin/env bash
# Prints the README's table: NLL/token and perplexity of every policy at
# three budgets on the bundled model, over the 56 reference streams
# (one token at a time, eviction on). Usage: scripts/policy_table.sh [h2o binary]
set -euo pipefail
cd "$(dirname "$0")/.."
h2o=${1:-./build/bin/h2o}
streams=(tests/data/stories260K/streams/*.txt)
row() {  # label spec...
  local label=$1; shift
  local cells=""
  for spec in "$@"; do
    local json
    json=$("$h2o" perplexity -m models/stories260K.gguf --kv "$spec" --json --token-file "${streams[@]}")
    cells+=$(python3 -c 'import json,sys; d=json.load(sys.stdin)["policies"][0]; print(" %.4f / %.3f / %.0f KiB |" % (d["nll_sum"]/d["tokens"], d["ppl"], d["kv_bytes"]/1024), end="")' <<<"$json")
  done
  echo "| $label |$cells"
}
echo "| policy | budget 32 | budget 64 | budget 128 |"
echo "|---|---|---|---|"
row "full (512 slots)" full full full
row "local" local:recent=32 local:recent=64 local:recent=128
row "sink (4 sinks)" sink:sinks=4,recent=28 sink:sinks=4,recent=60 sink:sinks=4,recent=124
row "h2o (half heavy)" h2o:heavy=16,recent=16 h2o:heavy=32,recent=32 h2o:heavy=64,recent=64
row "h2only" h2only:heavy=32 h2only:heavy=64 h2only:heavy=128
row "tova" tova:k=32 tova:k=64 tova:k=128
row "random (half random)" random:k=16,recent=16,seed=1 random:k=32,recent=32,seed=1 random:k=64,recent=64,seed=1
