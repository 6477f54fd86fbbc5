#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
