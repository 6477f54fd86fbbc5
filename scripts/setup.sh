#!/usr/bin/env bash
# Installs the build and test dependencies (Debian 12 packages only).
set -euo pipefail
packages=(build-essential cmake ninja-build g++ clang
          libclang-rt-14-dev  # the sanitizer runtimes (clang only recommends them)
          libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
          libfmt-dev libboost-dev pkg-config libpcre2-dev
          libedit-dev  # h2o chat's line editing (BSD licence)
          python3-pip  # tests/api/python_test.py: pip install ./python, offline
          libcpp-httplib-dev  # the server tests' HTTP client (h2o serve is on Boost.Asio/Beast)
          nginx-light curl  # tests/server/replicas_test.sh (deploy/)
          chromium chromium-driver)  # scripts/test_playground.sh (headless, offline)
# tests/server/openai: OpenAI's Node client; Debian's node only where none is on PATH.
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# The OpenAI client test's npm packages, pinned by its package-lock.json;
# reinstalled only when the lock file changed.
openai_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/server/openai"
lock_sum="$(sha256sum "$openai_dir/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$openai_dir/node_modules/.h2o-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
  npm ci --prefix "$openai_dir" --no-audit --no-fund --loglevel=error
  echo "$lock_sum" >"$openai_dir/node_modules/.h2o-lock-sha256"
fi
