#!/usr/bin/env bash
# Builds bench/peer/llb_batched.cpp against a peer llama.cpp build made by
# ../shared/peer/build-llamacpp.sh DEST (its static libraries and headers):
#
#   scripts/build_peer_batched.sh DEST [OUT]   (OUT: DEST/build/bin/llb_batched)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:?usage: scripts/build_peer_batched.sh PEER_DEST [OUT]}
out=${2:-$dest/build/bin/llb_batched}
b=$dest/build
g++ -O2 -std=c++17 -I"$dest/upstream/include" -I"$dest/upstream/ggml/include" \
  bench/peer/llb_batched.cpp -o "$out" \
  "$b/src/libllama.a" "$b/ggml/src/libggml.a" "$b/ggml/src/libggml-cpu.a" \
  "$b/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl -lm
echo "$out"
