# Included by the top-level CMakeLists.txt when H2O_FUZZ is on, before any
# library is added: libFuzzer can only steer by the coverage of code built
# with -fsanitize=fuzzer-no-link, so every library is instrumented, not just
# the fuzz targets. ASan and UBSan turn silent over-reads and UB into crashes;
# -O1 keeps their reports readable at close to full speed.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "H2O_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-14")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                    -fno-omit-frame-pointer -g -O1)
add_link_options(-fsanitize=address,undefined)
