#!/usr/bin/env bash
# Builds one libFuzzer target (clang, ASan+UBSan, its own build dir) and runs
# it for SECONDS on its seeds:
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
# TARGET is a name in fuzz/corpus/ (fuzz_gguf, fuzz_tokenizer_spm, ...), or
# "list". New inputs go to $H2O_FUZZ_WORK/TARGET/corpus, never into the
# repo's seeds; a crash is saved there as crash-* and the exit status is
# nonzero. Replay one: build-fuzz/fuzz/TARGET path/to/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = list ]; then
  ls fuzz/corpus
  exit 0
fi
if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...] (targets: scripts/fuzz.sh list)" >&2
  exit 2
fi
target="$1" seconds="$2"
shift 2
if [ ! -d "fuzz/corpus/$target" ]; then
  echo "unknown fuzz target '$target' (scripts/fuzz.sh list)" >&2
  exit 2
fi

build="${H2O_FUZZ_BUILD:-build-fuzz}"
work="${H2O_FUZZ_WORK:-/tmp/h2o-fuzz}/$target"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
    -DH2O_FUZZ=ON -DH2O_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target "$target"

mkdir -p "$work/corpus"
dict=()
[ -f "fuzz/dict/$target.dict" ] && dict=("-dict=fuzz/dict/$target.dict")
# -timeout: an input that takes 10 s is a hang worth a report. The first
# corpus directory receives new inputs; the repo's seeds are read only.
"$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$work/" "${dict[@]}" "$@" "$work/corpus" "fuzz/corpus/$target"
