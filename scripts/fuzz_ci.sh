#!/usr/bin/env bash
# CI's fuzzing step: every target in fuzz/corpus/ for a short run each
# (H2O_FUZZ_SECONDS, default 30), so a parser change that crashes on its
# seeds or on nearby inputs fails the build. The long runs are
# RELIABILITY.md's, by hand with scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${H2O_FUZZ_SECONDS:-30}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for target in $(bash scripts/fuzz.sh list); do
  echo "== fuzz $target for ${seconds}s"
  status=0
  bash scripts/fuzz.sh "$target" "$seconds" >"$log" 2>&1 || status=$?
  grep -E '^#[0-9]+ +DONE|^stat::(number_of_executed_units|peak_rss)' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 80 "$log" >&2
    echo "fuzz $target failed (exit $status); the input is in its artifact_prefix above" >&2
    exit 1
  fi
done
