#!/usr/bin/env bash
# Captures llama.cpp's numbers that the model tests hold h2o.cpp to, for
# machines without llama.cpp (CI): tests/data/peer/reference.json and the
# quantized files in tests/data/peer/models/.
#
#   scripts/peer_reference.sh LLB [H2O]
#
# LLB: llama.cpp's driver built by ../shared/peer/build-llamacpp.sh (upstream
# b7847, a5bb8ba4, unmodified). H2O: our binary (default ./build/bin/h2o),
# used only for `h2o mkmodel`, whose files are a pure function of their
# options: the tests rebuild the unquantized ones from the options recorded
# in reference.json instead of storing them.
#
# What it records, per model:
#   ppl:    `llb ppl` (llama-perplexity's method: windows of 256 tokens, the
#           first replaced by BOS, NLL of each window's second half) over
#           tests/data/peer/ids.txt, with f32 K/V and flash attention off so
#           llama.cpp rounds nothing in the cache;
#   greedy: `llb gen --ignore-eos` ids after a fixed prompt, same settings.
# Models: the rotary variants (plain, Llama 3.1 rope_freqs, YaRN) as f32
# mkmodel files; one f16 mkmodel file quantized by llama.cpp's own
# quantizer (`llb quantize`) into every mix the tests cover; and a Llama 3
# one (the real vocabulary, rope_freqs, heads wider than dim / heads) whose
# perplexity is over text and whose greedy prompt is text, so tokenization,
# BOS and the model are checked together.
set -euo pipefail
cd "$(dirname "$0")/.."
llb=${1:?usage: scripts/peer_reference.sh LLB [H2O]}
h2o=${2:-./build/bin/h2o}
out=tests/data/peer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out/models"

# 1024 token ids in [3, 512) (no BOS/EOS/UNK), seeded, so any machine makes the same file.
python3 -c 'import random; r = random.Random(7); print(" ".join(str(r.randrange(3, 512)) for _ in range(1024)))' >"$out/ids.txt"
prompt="1 300 301 302 400"
n_gen=40
shape="--dim 256 --layers 2 --heads 4 --kv-heads 2 --ffn 256 --vocab 512 --ctx 512 --sharpen 4 --seed 1"

entries=()
# name, model path, mkmodel options (empty for a committed file), and for
# text models the perplexity text file and the greedy prompt text.
measure() {
  local name=$1 model=$2 options=$3 text_file=${4:-} prompt_text=${5:-}
  local ppl gen
  if [ -n "$text_file" ]; then
    ppl=$("$llb" ppl -m "$model" -f "$text_file" -c 256 -t 2 -fa off -ctk f32 -ctv f32 2>/dev/null)
    gen=$("$llb" gen -m "$model" -p "$prompt_text" -n "$n_gen" -t 2 -fa off -ctk f32 -ctv f32 --ignore-eos 2>/dev/null)
  else
    ppl=$("$llb" ppl -m "$model" --ids-file "$out/ids.txt" -c 256 -t 2 -fa off -ctk f32 -ctv f32 2>/dev/null)
    gen=$("$llb" gen -m "$model" --ids "$prompt" -n "$n_gen" -t 2 -fa off -ctk f32 -ctv f32 --ignore-eos 2>/dev/null)
  fi
  entries+=("$(python3 - "$name" "$model" "$options" "$ppl" "$gen" "$text_file" "$prompt_text" <<'EOF'
import json, sys
name, model, options, ppl, gen, text_file, prompt_text = sys.argv[1:]
fields = dict(zip(ppl.split()[0::2], ppl.split()[1::2]))
lines = gen.splitlines()
generated = [int(t) for t in next(l for l in lines if l.startswith("generated:")).split()[1:]]
entry = {"name": name, "ppl": float(fields["ppl:"]), "mean_nll": float(fields["mean_nll:"]),
         "tokens_scored": int(fields["tokens_scored:"]), "greedy": generated}
if options:
    entry["mkmodel"] = options
else:
    entry["file"] = model
if text_file:
    all_ids = [int(t) for t in next(l for l in lines if l.startswith("ids:")).split()[1:]]
    entry["text_file"] = text_file
    entry["prompt_text"] = prompt_text
    entry["prompt_ids"] = all_ids[:len(all_ids) - len(generated)]
print(json.dumps(entry))
EOF
)")
  echo "peer_reference: $name: ${ppl%%  mean_nll*}" >&2
}

for variant in plain llama3_rope_freqs yarn; do
  case $variant in
    plain) extra="" ;;
    llama3_rope_freqs) extra="--rope-base 500000 --rope-freqs llama3" ;;
    yarn) extra="--rope-scaling yarn --rope-factor 4 --rope-orig-ctx 128" ;;
  esac
  options="$shape --type f32 $extra"
  # shellcheck disable=SC2086
  "$h2o" mkmodel $options -o "$work/$variant.gguf" 2>/dev/null
  measure "$variant" "$work/$variant.gguf" "$options"
done

# shellcheck disable=SC2086
"$h2o" mkmodel $shape --type f16 -o "$work/base_f16.gguf" 2>/dev/null
measure f16 "$work/base_f16.gguf" "$shape --type f16"
for qtype in q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k_m q4_k_m q5_k_m q6_k; do
  file="$out/models/$qtype.gguf"
  "$llb" quantize -m "$work/base_f16.gguf" -o "$file" --qtype "$qtype" -t 2 >/dev/null 2>&1
  measure "$qtype" "$file" ""
done

# Every other architecture as f32 and f16 mkmodel files (small shapes,
# sharpened, norm weights jittered so a skipped norm weight shows).
for arch in qwen2 qwen3 phi3 gemma3 gptneox gpt2; do
  case $arch in
    gemma3) shape="--layers 6 --heads 4 --kv-heads 1 --head-dim 128 --window 32 --tied" ;;
    gpt2) shape="--layers 2 --heads 4 --kv-heads 4" ;;
    *) shape="--layers 2 --heads 4 --kv-heads 2" ;;
  esac
  for type in f32 f16; do
    options="--arch $arch --dim 256 $shape --ffn 512 --vocab 512 --ctx 512 --sharpen 4 --norm-std 0.1 --seed 1 --type $type"
    # shellcheck disable=SC2086
    "$h2o" mkmodel $options -o "$work/${arch}_$type.gguf" 2>/dev/null
    measure "${arch}_$type" "$work/${arch}_$type.gguf" "$options"
  done
done
# Phi-3 LongRoPE: the long factors apply when the context (256 here) passes
# the original one.
for orig in 128 512; do
  options="--arch phi3 --dim 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --vocab 512 --ctx 512 --sharpen 4 --norm-std 0.1 --seed 1 --rope-freqs longrope --rope-orig-ctx $orig --type f32"
  # shellcheck disable=SC2086
  "$h2o" mkmodel $options -o "$work/phi3_longrope_$orig.gguf" 2>/dev/null
  measure "phi3_longrope_orig$orig" "$work/phi3_longrope_$orig.gguf" "$options"
done

# Llama 3: perplexity over the opening of War and Peace (public domain; the
# first 3000 bytes of ../shared/tokenizers/war_and_peace_1mb.txt, committed
# as text.txt), greedy after a sentence of it.
options="--dim 128 --layers 2 --heads 4 --kv-heads 2 --head-dim 64 --ffn 256 --ctx 512 --sharpen 4 --seed 1 --type q8_0 --rope-base 500000 --rope-freqs llama3 --vocab-from tests/data/tokenizers/llama3-vocab.gguf"
# shellcheck disable=SC2086
"$h2o" mkmodel $options -o "$work/llama3.gguf" 2>/dev/null
measure llama3_vocab "$work/llama3.gguf" "$options" "$out/text.txt" "Well, Prince, so Genoa and Lucca are now just family estates of the"

{
  echo "{"
  echo "  \"provenance\": \"llama.cpp b7847 (a5bb8ba4, unmodified, CPU) via llb from ../shared/peer, $(date -u +%Y-%m-%d), by scripts/peer_reference.sh\","
  echo "  \"llb\": \"$("$llb" --help 2>&1 | head -1)\","
  echo "  \"ppl_command\": \"llb ppl -m MODEL --ids-file tests/data/peer/ids.txt -c 256 -t 2 -fa off -ctk f32 -ctv f32\","
  echo "  \"greedy_command\": \"llb gen -m MODEL --ids '$prompt' -n $n_gen -t 2 -fa off -ctk f32 -ctv f32 --ignore-eos\","
  echo "  \"prompt\": [${prompt// /, }],"
  echo "  \"window\": 256,"
  echo "  \"models\": ["
  for i in "${!entries[@]}"; do
    sep=","; [ "$i" -eq $((${#entries[@]} - 1)) ] && sep=""
    echo "    ${entries[$i]}$sep"
  done
  echo "  ]"
  echo "}"
} >"$out/reference.json"
echo "peer_reference: wrote $out/reference.json and $(ls "$out/models" | wc -l) quantized models" >&2
