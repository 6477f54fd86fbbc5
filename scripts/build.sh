#!/usr/bin/env bash
# Configures and builds into build/ (Release). Extra args go to cmake;
# H2O_WERROR=ON in the environment (CI) builds with -Werror.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${H2O_WERROR:+-DH2O_WERROR=$H2O_WERROR} "$@" >/dev/null
cmake --build build
