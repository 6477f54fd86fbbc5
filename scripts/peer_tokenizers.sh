#!/usr/bin/env bash
# Captures llama.cpp's token ids for the pre-tokenizers h2o implements, as
# reference data for tests/tokenizer/peer_pre_tokenizers_test.cc (CI has no
# llama.cpp; the captured ids are committed).
#
#   scripts/peer_tokenizers.sh PATH/TO/llb [BUILD_DIR]
#
# llb is the llama.cpp driver that ../shared/peer/build-llamacpp.sh builds
# (unmodified llama.cpp b7847); BUILD_DIR (default: build) holds this repo's
# build with bin/h2o-vocab-variant. For each pre-tokenizer name below the
# script writes a vocab-only GGUF that is tests/data/tokenizers/llama3-vocab.gguf
# with that tokenizer.ggml.pre and no add_bos_token/add_eos_token keys (so
# both implementations apply their default for the name), and runs
#   llb tokenize -m VARIANT.gguf --jsonl tests/data/tokenizers/llama3_cases.jsonl
# which prints one JSON array of ids per line for the 473 texts (BOS/EOS as
# the defaults say, special tokens parsed). Names whose ids are identical
# share one file; tests/data/tokenizers/peer/manifest.json maps each name to
# its file and records the llama.cpp version and the command.
set -euo pipefail

llb=${1:?usage: scripts/peer_tokenizers.sh PATH/TO/llb [BUILD_DIR]}
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${2:-$repo/build}" && pwd)
data=$repo/tests/data/tokenizers
out=$data/peer
variant_tool=$build/bin/h2o-vocab-variant
[ -x "$variant_tool" ] || { echo "missing $variant_tool (build the repo first)" >&2; exit 1; }

# The pre-tokenizer names of src/tokenizer/pre_tokenizer_specs.cc.
pres=(default llama-bpe llama3 llama-v3 falcon3 falcon-h1 pixtral midm-2.0 lfm2 dbrx smaug-bpe
      deepseek-llm deepseek-coder falcon starcoder refact command-r smollm codeshell exaone
      minerva-7b gpt-2 phi-2 mpt olmo jais trillion granite-docling exaone4 a.x-4.0 mellum
      gigachat qwen2 deepseek-r1-qwen kormo stablelm2 megrez hunyuan solar-open grok-2 tekken
      gpt-4o llama4 minimax-m2 seed-coder bailingmoe bailingmoe2 llada-moe bloom poro-chat
      gpt3-finnish viking)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$("$llb" 2>&1 | head -1 | sed -n 's/^llb \([^:]*\):.*/\1/p' || true)

mkdir -p "$out"
rm -f "$out"/*.jsonl "$out/manifest.json"
entries=()
for pre in "${pres[@]}"; do
  "$variant_tool" "$data/llama3-vocab.gguf" --pre "$pre" -o "$tmp/vocab.gguf"
  if ! "$llb" tokenize -m "$tmp/vocab.gguf" --jsonl "$data/llama3_cases.jsonl" \
      >"$tmp/ids.jsonl" 2>"$tmp/llb.log"; then
    echo "llama.cpp refused pre '$pre': $(grep -i error "$tmp/llb.log" | tail -1)" >&2
    continue
  fi
  file=""
  for existing in "$out"/*.jsonl; do
    [ -e "$existing" ] && cmp -s "$existing" "$tmp/ids.jsonl" && file=$(basename "$existing")
  done
  if [ -z "$file" ]; then
    file=$pre.jsonl
    cp "$tmp/ids.jsonl" "$out/$file"
  fi
  entries+=("    \"$pre\": \"$file\"")
  echo "$pre -> $file"
done

# llama-bpe must give the ids of llama3_cases.jsonl itself.
sed 's/.*"ids": \(\[[^]]*\]\).*/\1/; s/ //g' "$data/llama3_cases.jsonl" >"$tmp/expected.jsonl"
llama_bpe_file=$(printf '%s\n' "${entries[@]}" | sed -n 's/.*"llama-bpe": "\(.*\)"/\1/p')
if ! cmp -s "$tmp/expected.jsonl" "$out/$llama_bpe_file"; then
  echo "warning: llb's llama-bpe ids differ from llama3_cases.jsonl" >&2
fi

{
  echo "{"
  echo "  \"llama.cpp\": \"${version:-unknown} (llb from ../shared/peer, unmodified llama.cpp b7847)\","
  echo "  \"command\": \"llb tokenize -m VARIANT.gguf --jsonl tests/data/tokenizers/llama3_cases.jsonl\","
  echo "  \"variant\": \"h2o-vocab-variant tests/data/tokenizers/llama3-vocab.gguf --pre NAME -o VARIANT.gguf\","
  echo "  \"ids\": {"
  for i in "${!entries[@]}"; do
    sep=","
    [ "$i" -eq $((${#entries[@]} - 1)) ] && sep=""
    echo "${entries[$i]}$sep"
  done
  echo "  }"
  echo "}"
} >"$out/manifest.json"
echo "wrote $out ($(ls "$out"/*.jsonl | wc -l) distinct id files for ${#entries[@]} names)"
