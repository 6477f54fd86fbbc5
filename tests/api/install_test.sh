#!/usr/bin/env bash
# Installs the library into a fresh prefix and builds examples/ against that
# prefix alone, by CMake (find_package(h2o): shared and static) and by
# pkg-config; each example's greedy ids must equal `h2o generate`'s.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/h2o/h2o.h" && test -f "$prefix/include/h2o/h2o.hpp"
if find "$prefix/include" -name '*.h' | grep -v '/h2o/h2o\.h' | grep -q .; then
  echo "install_test: headers other than the public ones were installed" >&2; exit 1
fi
cmake -S "$src/examples" -B "$work/ex" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/ex" >/dev/null
libdir="$(dirname "$(find "$prefix" -name 'libh2o.so' | head -1)")"
PKG_CONFIG_PATH="$libdir/pkgconfig" cc "$src/examples/simple.c" -o "$work/simple_pc" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs h2o)

model="$src/models/stories260K.gguf"
prompt="Once upon a time"
for kv in full "h2o:heavy=8,recent=8"; do
  want="$("$build/bin/h2o" generate -m "$model" -p "$prompt" -n 40 --temp 0 --kv "$kv" \
    --print-ids -q 2>/dev/null)"
  for exe in "$work/ex/simple_c" "$work/ex/simple_cpp" "$work/ex/simple_c_static" \
             "$work/simple_pc"; do
    got="$(LD_LIBRARY_PATH="$libdir" "$exe" "$model" "$prompt" 40 "$kv" 2>/dev/null)"
    if [ "$got" != "$want" ]; then
      echo "install_test: $(basename "$exe") --kv $kv printed '$got', h2o generate '$want'" >&2
      exit 1
    fi
  done
done
# A bad model path: one error line and exit 1, no crash.
if LD_LIBRARY_PATH="$libdir" "$work/ex/simple_c" /nonexistent.gguf "$prompt" 4 2>"$work/err"; then
  echo "install_test: a missing model did not fail" >&2; exit 1
fi
[ "$(wc -l <"$work/err")" -eq 1 ]
echo "install_test: 4 examples x 2 policies print h2o generate's ids"
