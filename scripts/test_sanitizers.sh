#!/usr/bin/env bash
# Builds the test suite under clang's sanitizers and runs it with ctest:
#   asan  ASan+UBSan, every test, built with -DH2O_WERROR=ON so it is
#         also the clang warnings check;
#   tsan  ThreadSanitizer, the thread pool, scheduler and server tests.
# Usage: scripts/test_sanitizers.sh [asan|tsan]...  (default: both)
# Build trees: $H2O_ASAN_BUILD (build-asan), $H2O_TSAN_BUILD (build-tsan).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
jobs="$(nproc)"

# Debug keeps assert() on; -O1 (what the sanitizers' documentation advises)
# keeps the model tests' run time within CI's budget; line tables are enough
# for the reports' stack traces.
configure() {  # DIR SANITIZE-FLAGS
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
    -DH2O_WERROR=ON \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS="$2 -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="$2" >/dev/null
}

run_asan() {
  local dir="${H2O_ASAN_BUILD:-build-asan}"
  configure "$dir" "-fsanitize=address,undefined -fno-sanitize-recover=all"
  cmake --build "$dir" -j "$jobs"
  # detect_leaks: the suite must not leak either. Every test runs whole: the
  # slowest under ASan (ChoiceScoringLockstep, the forced-ref kernel suite)
  # take 2-5 minutes, which the CI budget allows (times in .ci/run). The
  # install and python tests are test.sh's: an installed example and the
  # interpreter do not load the sanitizers' runtimes.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 \
      -LE '^(install|python)$'
}

run_tsan() {
  local dir="${H2O_TSAN_BUILD:-build-tsan}"
  configure "$dir" "-fsanitize=thread"
  cmake --build "$dir" -j "$jobs" --target test_kernels test_runtime test_server h2o
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp" \
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 \
      -R '^(ThreadPoolTest|Scheduler|Serve[A-Za-z]*|KvEndpoint|BatchParity)\.'
}

kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(asan tsan)
for kind in "${kinds[@]}"; do
  case "$kind" in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) echo "h2o: error: test_sanitizers.sh: unknown kind '$kind' (asan, tsan)" >&2; exit 2 ;;
  esac
done
